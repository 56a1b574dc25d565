package wire

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func intp(n int) *int { return &n }

// sampleGuildMessages are messages with each optional field absent, empty and set, and every
// string tricky in turn.
func sampleGuildMessages() []GuildMessage {
	out := []GuildMessage{{}, {Mentions: []Mention{}, MentionRoles: []string{}, Attachments: []Attachment{}, Embeds: []struct{}{},
		Components: []struct{}{}, ReferencedMessage: ReferencedMessage{Present: true}, MessageSnapshots: []MessageSnapshot{}}}
	for i, s := range tricky {
		id := Snowflake(1477636521984000011 + i)
		author := User{ID: 7, Username: s, Discriminator: "0", GlobalName: str(s), Bot: i%2 == 0, PremiumType: -i, IsProvisional: i%3 == 0}
		member := &Member{Nick: str(s), Roles: []Snowflake{1, id}, JoinedAt: s, Flags: i, Pending: i%2 == 1}
		m := GuildMessage{ID: id, Type: i, ChannelID: 1 << 62, GuildID: 18446744073709551615, Author: author, Member: member,
			Content: s, Timestamp: "2026-03-01T12:00:00.000000+00:00", TTS: i%2 == 0, MentionEveryone: i%3 == 0,
			Mentions:     []Mention{{User: author}, {User: User{ID: 9, Username: "b"}, Member: member}},
			MentionRoles: []string{s, "1"}, Embeds: []struct{}{{}, {}}, Components: []struct{}{},
			Attachments: []Attachment{{ID: id, Filename: s, Size: 1 << 20, URL: "https://cdn/x?ex=1&is=2&hm=" + s, ProxyURL: s},
				{ID: 1, Filename: "f", Description: s, ContentType: "text/plain", Width: intp(640), Height: intp(0), Flags: 8}},
			Pinned: i%2 == 1, Flags: 1 << 14}
		switch i % 4 {
		case 0:
			m.EditedTimestamp, m.Nonce, m.ChannelType = str(s), s, intp(0)
			m.Member = &Member{User: &author, Avatar: str(s), Banner: str(""), Bio: s, JoinedAt: s, PremiumSince: str(s),
				Deaf: true, Mute: true, GuildID: &id}
		case 1:
			ref := m
			ref.ID, ref.Member = 5, nil
			m.Type, m.MessageReference = MessageTypeReply, &MessageReference{MessageID: 5, ChannelID: 1 << 62, GuildID: 3}
			m.ReferencedMessage = ReferencedMessage{Present: true, Message: &ref}
			m.Nonce = 12345
		case 2:
			m.MessageReference = &MessageReference{Type: 1, MessageID: 5, ChannelID: 6}
			m.MessageSnapshots = []MessageSnapshot{{Message: SnapshotMessage{Content: s, Mentions: []User{author}, EditedTimestamp: str(s)}}}
			m.ReferencedMessage = ReferencedMessage{Present: true}
		case 3:
			m.ApplicationID, m.WebhookID = &id, &id
			m.InteractionMetadata = &InteractionMetadata{ID: id, Type: 2, User: author}
			m.Author.ApplicationProfiles = []ApplicationProfile{{ApplicationID: 3, Username: s, ProviderType: "OIDC"}}
			m.Author.PrimaryGuild = &PrimaryGuild{Tag: str(s)}
		}
		out = append(out, m)
	}
	return out
}

// AppendJSON writes exactly the bytes encoding/json writes for the struct and for a list.
func TestGuildMessageEncodesAsEncodingJSON(t *testing.T) {
	list := sampleGuildMessages()
	for _, m := range list {
		agreeGuildMessage(t, m)
	}
	for _, l := range []GuildMessages{nil, {}, list} {
		want, err := json.Marshal([]GuildMessage(l))
		require.NoError(t, err)
		require.Equal(t, string(want), string(l.AppendJSON(nil)))
	}
}

func FuzzGuildMessageEncoding(f *testing.F) {
	for _, s := range tricky {
		f.Add(s, s, uint64(1), uint8(0))
	}
	f.Fuzz(func(t *testing.T, a, b string, id uint64, shape uint8) {
		m := GuildMessage{ID: Snowflake(id), Content: a, Author: User{Username: b, GlobalName: &a},
			Member: &Member{Nick: &b, Bio: a, Roles: []Snowflake{Snowflake(id)}}, MentionRoles: []string{a},
			Attachments: []Attachment{{Filename: a, Description: b, ContentType: a, URL: b}}}
		if shape&1 != 0 {
			m.Mentions = []Mention{{User: User{Username: a}, Member: m.Member}}
		}
		if shape&2 != 0 {
			m.MessageReference = &MessageReference{MessageID: Snowflake(id), GuildID: Snowflake(shape)}
			ref := m
			m.ReferencedMessage = ReferencedMessage{Present: true, Message: &ref}
		}
		if shape&4 != 0 {
			m.Nonce = b
		}
		agreeGuildMessage(t, m)
	})
}

func agreeGuildMessage(t *testing.T, m GuildMessage) {
	t.Helper()
	want, err := json.Marshal(&m)
	require.NoError(t, err)
	got := m.AppendJSON(nil)
	require.Equal(t, string(want), string(got), "AppendJSON:\n%s\nencoding/json:\n%s", got, want)
}
