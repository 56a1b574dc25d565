package wire

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// tricky are strings that encoding/json escapes in each of its ways.
var tricky = []string{
	"", "plain", `quote " backslash \ slash /`, "<script>&amp;</script>", "\b\f\n\r\t\x00\x01\x1f\x7f",
	"é ü 日本 🎮", "\u2028 and \u2029", "bad \xff utf-8 \xc3", "\xed\xa0\x80 surrogate", strings.Repeat("long ", 500),
}

func str(s string) *string { return &s }

func sampleMessages() []LobbyMessage {
	out := []LobbyMessage{{}, {EditedTimestamp: str(""), Metadata: map[string]string{}, ModerationMetadata: map[string]string{}}}
	for i, s := range tricky {
		m := LobbyMessage{ID: Snowflake(1477636521984000011 + i), Type: i, Content: s, LobbyID: 1 << 62, ChannelID: 18446744073709551615,
			Author: User{ID: 7, Username: s, Discriminator: "0", GlobalName: str(s), Avatar: nil, Bot: i%2 == 0,
				PremiumType: -i, Flags: 1 << 30, PublicFlags: i, IsProvisional: i%3 == 0},
			Metadata: map[string]string{s: s, "z": "1", "a": s}, Flags: 4096, ApplicationID: 9, Timestamp: "2026-03-01T12:00:00.000000+00:00"}
		if i%2 == 1 {
			m.LobbyMember.AdditionalName = str(s)
			m.ModerationMetadata = map[string]string{"flag": s}
			m.Author.ApplicationProfiles = []ApplicationProfile{{ApplicationID: 3, Username: s, ProviderID: str(s), ProviderType: "OIDC"}, {}}
			m.EditedTimestamp = str(s)
		}
		if i%3 == 1 { // rule USR-2: the author's primary guild, each field null or set
			id, on := Snowflake(1<<62+i), i%2 == 0
			m.Author.PrimaryGuild = &PrimaryGuild{Tag: str(s)}
			if i%4 == 1 {
				m.Author.PrimaryGuild = &PrimaryGuild{IdentityGuildID: &id, IdentityEnabled: &on, Tag: str(s), Badge: str(s)}
			}
		}
		out = append(out, m)
	}
	return out
}

// AppendJSON writes exactly the bytes encoding/json writes for the struct.
func TestLobbyMessageEncodesAsEncodingJSON(t *testing.T) {
	for _, m := range sampleMessages() {
		agreeEncoding(t, m)
	}
}

func FuzzLobbyMessageEncoding(f *testing.F) {
	for _, s := range tricky {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		agreeEncoding(t, LobbyMessage{Content: a, Author: User{Username: b, GlobalName: &a},
			Metadata: map[string]string{a: b, b: a}, LobbyMember: LobbyMessageMember{AdditionalName: &b}})
	})
}

func agreeEncoding(t *testing.T, m LobbyMessage) {
	t.Helper()
	want, err := json.Marshal((*lobbyMessage)(&m))
	require.NoError(t, err)
	got := m.AppendJSON(nil)
	require.Equal(t, string(want), string(got), "AppendJSON:\n%s\nencoding/json:\n%s", got, want)
	got, err = json.Marshal(m)
	require.NoError(t, err, "json.Marshal with MarshalJSON: %s (%v)", got, err)
	require.Equal(t, string(want), string(got), "json.Marshal with MarshalJSON: %s (%v)", got, err)
}

// DecodeLobbyMessage stores what encoding/json stores, into a zero message and into one that
// already holds values, and fails where encoding/json fails.
func TestLobbyMessageDecodesAsEncodingJSON(t *testing.T) {
	for _, in := range decodeCorpus() {
		agreeDecoding(t, []byte(in))
	}
}

func FuzzLobbyMessageDecoding(f *testing.F) {
	for _, in := range decodeCorpus() {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) { agreeDecoding(t, in) })
}

func decodeCorpus() []string {
	var out []string
	for _, m := range sampleMessages() {
		b, _ := json.Marshal((*lobbyMessage)(&m))
		out = append(out, string(b))
	}
	return append(out,
		`null`, ` null `, `{}`, `[]`, `"x"`, `{"id":"1"`, `{"id":1}`, `{"id":"x"}`, `{"id":""}`, `{"id":"null"}`, `{"id":null}`,
		`{"ID":"5"}`, `{"Content":"x"}`, `{"unknown":1}`, `{"type":"1"}`, `{"type":1.0}`, `{"type":1e2}`, `{"type":-0}`,
		`{"type":99999999999999999999}`, `{"content":"a\"b\u00e9\ud83c\udfae"}`, `{"content":5}`, `{"content":null}`,
		`{"author":null}`, `{"author":{"id":"2","bot":true,"bot":null}}`, `{"author":{"global_name":null,"avatar":"h"}}`,
		`{"author":{"application_profiles":null}}`, `{"author":{"application_profiles":[{"application_id":"1","provider_id":null}]}}`,
		`{"author":{"Username":"x"}}`, `{"author":[]}`, `{"lobby_member":{}}`, `{"lobby_member":{"additional_name":null}}`,
		`{"lobby_member":{"additional_name":"n"}}`, `{"lobby_member":{"x":1}}`, `{"lobby_member":null}`,
		`{"metadata":null}`, `{"metadata":{}}`, `{"metadata":{"a":"1"},"metadata":{"b":"2"}}`, `{"metadata":{"a":1}}`,
		`{"edited_timestamp":null}`, `{"edited_timestamp":"t"}`, `{"edited_timestamp":1}`, `{"flags":true}`,
		`{"author":{"is_provisional":"true"}}`, `{"id":"1",}`, `{"id":"1"} x`, "{\"content\":\"\xff\"}",
	)
}

func agreeDecoding(t *testing.T, in []byte) {
	t.Helper()
	for _, k := range []int{0, 3} { // a zero message, and one holding values (separate copies)
		got, want := sampleMessages()[k], sampleMessages()[k]
		errGot := DecodeLobbyMessage(in, &got)
		errWant := json.Unmarshal(in, (*lobbyMessage)(&want))
		require.Equal(t, errWant == nil, errGot == nil, "%q: error %v, encoding/json %v", in, errGot, errWant)
		if errWant == nil {
			require.Equal(t, want, got, "%q:\ndecoded %+v\nencoding/json %+v", in, got, want)
		}
		var viaUnmarshal LobbyMessage
		if json.Unmarshal(in, &viaUnmarshal) == nil {
			require.NoError(t, errWant, "%q: json.Unmarshal with UnmarshalJSON accepted what encoding/json refuses", in)
		}
	}
}

// Decoding a lobby message as the service sends it allocates only the strings it keeps (the
// content, the author's username and global name, which is a pointer too, and the timestamp; a
// one-byte discriminator is the runtime's own): its five ids are parsed in place.
func TestLobbyMessageDecodeAllocatesOnlyItsStrings(t *testing.T) {
	name := "Player One"
	in := LobbyMessage{ID: 1477636521984000011, Content: "hello", LobbyID: 1477636521984000001, ChannelID: 1477636521984000001,
		Author: User{ID: 1477636521984000002, Username: "player", Discriminator: "0", GlobalName: &name}, ApplicationID: 1477636521984000003,
		Timestamp: "2026-03-01T12:00:00.000000+00:00"}.AppendJSON(nil)
	var m LobbyMessage
	allocs := testing.AllocsPerRun(100, func() {
		m = LobbyMessage{}
		if err := DecodeLobbyMessage(in, &m); err != nil {
			panic(err) // a plain check: the function measured must not allocate for testify
		}
	})
	require.Equal(t, 5.0, allocs)
	require.Equal(t, Snowflake(1477636521984000003), m.ApplicationID)
}

// LobbyMessageRequest.AppendJSON writes exactly the bytes encoding/json writes for the struct,
// with each omitempty field present and absent.
func TestLobbyMessageRequestEncodesAsEncodingJSON(t *testing.T) {
	reqs := []LobbyMessageRequest{{}, {Metadata: map[string]string{}}, {Flags: -4096}}
	for i, s := range tricky {
		reqs = append(reqs, LobbyMessageRequest{Content: s, Nonce: s, EnforceNonce: i%2 == 0, Flags: i,
			Metadata: map[string]string{s: s, "z": "1", "a": s}})
	}
	for _, r := range reqs {
		agreeRequestEncoding(t, r)
	}
}

func FuzzLobbyMessageRequestEncoding(f *testing.F) {
	for i, s := range tricky {
		f.Add(s, s, i, i%2 == 0)
	}
	f.Fuzz(func(t *testing.T, a, b string, flags int, enforce bool) {
		agreeRequestEncoding(t, LobbyMessageRequest{Content: a, Metadata: map[string]string{a: b}, Flags: flags, Nonce: b, EnforceNonce: enforce})
	})
}

func agreeRequestEncoding(t *testing.T, r LobbyMessageRequest) {
	t.Helper()
	want, err := json.Marshal(r)
	require.NoError(t, err)
	got := r.AppendJSON(nil)
	require.Equal(t, string(want), string(got), "AppendJSON:\n%s\nencoding/json:\n%s", got, want)
}
