package lobbies

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Decode reads each lobby dispatch into one part of an Event and refuses what lacks a lobby id.
func TestDecode(t *testing.T) {
	ev, err := Decode("LOBBY_CREATE", json.RawMessage(`{"id":"7"}`))
	require.NoError(t, err)
	assert.True(t, ev.Created)
	assert.EqualValues(t, 7, ev.Lobby.ID)
	ev, err = Decode("LOBBY_UPDATE", json.RawMessage(`{"id":"7"}`))
	require.NoError(t, err)
	assert.False(t, ev.Created)
	ev, err = Decode("LOBBY_DELETE", json.RawMessage(`{"id":"7"}`))
	require.NoError(t, err)
	assert.EqualValues(t, 7, ev.Deleted.ID)
	ev, err = Decode("LOBBY_MEMBER_REMOVE", json.RawMessage(`{"lobby_id":"7","member":{"id":"3"}}`))
	require.NoError(t, err)
	assert.Equal(t, MemberRemoved, ev.MemberKind)
	assert.EqualValues(t, 3, ev.Member.Member.ID)

	for event, data := range map[string]string{"LOBBY_CREATE": `{}`, "LOBBY_MEMBER_ADD": `{"member":{}}`,
		"LOBBY_DELETE": `[]`, "MESSAGE_CREATE": `{}`} {
		_, err := Decode(event, json.RawMessage(data))
		assert.Error(t, err, event)
	}
	assert.Len(t, Events, len(memberKinds)+3, "every event Decode reads is listed")
}
