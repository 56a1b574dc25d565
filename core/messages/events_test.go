package messages

import (
	"encoding/json"
	"math/rand"
	"testing"

	"sdkpp/internal/jsondamage"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Decode reads each message dispatch into an Event and refuses what lacks the ids it needs.
func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		event, data string
		want        Event
		err         string
	}{
		{event: "LOBBY_MESSAGE_CREATE", data: `{"id":"5","lobby_id":"7","channel_id":"7","content":"hi","author":{"id":"3"}}`,
			want: Event{Created: true, Message: &Message{ID: 5, LobbyID: 7}}},
		{event: "MESSAGE_UPDATE", data: `{"id":"6","channel_id":"9","content":"edited","author":{"id":"3"}}`,
			want: Event{Message: &Message{ID: 6, ChannelID: 9}}},
		{event: "MESSAGE_DELETE", data: `{"id":"6","channel_id":"9"}`, want: Event{Deleted: true, ID: 6, ChannelID: 9}},
		{event: "LOBBY_MESSAGE_UPDATE", data: `{"id":"5"}`, err: "malformed LOBBY_MESSAGE_UPDATE"},
		{event: "MESSAGE_CREATE", data: `{"id":"6"}`, err: "malformed MESSAGE_CREATE"},
		{event: "MESSAGE_DELETE", data: `[]`, err: "malformed MESSAGE_DELETE"},
		{event: "LOBBY_CREATE", data: `{}`, err: "not a message event"},
	} {
		t.Run(tc.event, func(t *testing.T) {
			ev, err := Decode(tc.event, json.RawMessage(tc.data))
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want.Created, ev.Created)
			assert.Equal(t, tc.want.Deleted, ev.Deleted)
			assert.Equal(t, tc.want.ID, ev.ID)
			assert.Equal(t, tc.want.ChannelID, ev.ChannelID)
			if tc.want.Message != nil {
				require.NotNil(t, ev.Message)
				assert.Equal(t, tc.want.Message.ID, ev.Message.ID)
				assert.Equal(t, tc.want.Message.LobbyID, ev.Message.LobbyID)
				assert.NotNil(t, ev.Author)
			}
		})
	}
}

// Checks holds for exactly Events, and Decode fails for each of them on data that is not valid
// JSON: the gateway client leaves that data to Decode (gateway.Config's DataChecked), so Decode is
// its one check. A real dispatch's data, randomly damaged, is decoded only when it is still valid.
func TestDecodeChecksWhatChecksSays(t *testing.T) {
	for _, e := range Events {
		assert.True(t, Checks(e), e)
	}
	for _, e := range []string{"READY", "RESUMED", "LOBBY_CREATE", "SDKPP_REQUEST_RESULT", ""} {
		assert.False(t, Checks(e), e)
	}
	data := map[string]string{
		"LOBBY_MESSAGE_CREATE": `{"id":"5","type":0,"content":"hi \"there\" \u00e9","lobby_id":"7","channel_id":"7",` +
			`"author":{"id":"3","username":"p","discriminator":"0","global_name":null,"avatar":null,"is_provisional":false},` +
			`"lobby_member":{"additional_name":"x"},"metadata":{"k":"v"},"flags":0,"application_id":"1",` +
			`"timestamp":"2026-11-29T19:45:35.123456+00:00","edited_timestamp":null}`,
		"MESSAGE_CREATE": `{"id":"6","channel_id":"9","content":"hi","author":{"id":"3"},"flags":0}`,
		"MESSAGE_DELETE": `{"id":"6","channel_id":"9"}`,
	}
	data["LOBBY_MESSAGE_UPDATE"], data["MESSAGE_UPDATE"] = data["LOBBY_MESSAGE_CREATE"], data["MESSAGE_CREATE"]
	r := rand.New(rand.NewSource(1))
	for _, e := range Events {
		base := []byte(data[e])
		_, err := Decode(e, base)
		require.NoError(t, err, e)
		for n := 0; n < 5000; n++ {
			b := jsondamage.Damage(r, base)
			if _, err := Decode(e, b); !json.Valid(b) {
				require.Error(t, err, "%s: %q is not valid JSON", e, b)
			}
		}
	}
}

// NoteDirect keys a direct message's channel by the other party, whoever sent it.
func TestNoteDirect(t *testing.T) {
	var c Cache
	c.NoteDirect(&Message{ChannelID: 40, AuthorID: 1, RecipientID: 2}, 1)
	c.NoteDirect(&Message{ChannelID: 41, AuthorID: 3, RecipientID: 1}, 1)
	c.NoteDirect(&Message{ChannelID: 42, LobbyID: 9, AuthorID: 4}, 1)
	for user, want := range map[uint64]uint64{2: 40, 3: 41, 4: 0} {
		assert.Equal(t, want, c.DMChannel(user), "user %d", user)
	}
}

// Decoding a lobby message as the service sends it allocates what the event keeps and nothing
// more: the strings the wire decode allocates (the content, the author's username, global name
// and its pointer, the timestamp), and the Message with its User, in one allocation. The wire
// message it decodes into stays on Decode's stack.
func TestDecodeLobbyMessageAllocatesOnlyWhatItKeeps(t *testing.T) {
	data := json.RawMessage(`{"id":"1477636521984000011","type":0,"content":"hello","lobby_id":"1477636521984000001",` +
		`"channel_id":"1477636521984000001","author":{"id":"1477636521984000002","username":"player","discriminator":"0",` +
		`"global_name":"Player One","avatar":null},"flags":0,"application_id":"1477636521984000003",` +
		`"timestamp":"2026-03-01T12:00:00.000000+00:00"}`)
	var ev Event
	allocs := testing.AllocsPerRun(100, func() {
		var err error
		if ev, err = Decode("LOBBY_MESSAGE_CREATE", data); err != nil {
			panic(err) // a plain check: the function measured must not allocate for testify
		}
	})
	require.Equal(t, 6.0, allocs)
	require.Equal(t, uint64(1477636521984000011), ev.Message.ID)
	require.Equal(t, "Player One", *ev.Author.GlobalName)
}
