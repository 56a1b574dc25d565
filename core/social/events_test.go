package social

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gwire "sdkpp/wire/gateway"
)

// Decode reads each social dispatch into one part of an Event and refuses what lacks its id.
func TestDecode(t *testing.T) {
	ev, err := Decode("GAME_RELATIONSHIP_REMOVE", json.RawMessage(`{"id":"4","type":1}`))
	require.NoError(t, err)
	assert.EqualValues(t, 4, ev.Relationship.ID)
	assert.Equal(t, gwire.RelationshipEvent{Game: true, Change: gwire.Removed}, ev.Change)
	ev, err = Decode("APPLICATION_PROFILES_UPDATE", json.RawMessage(`{"id":"4"}`))
	require.NoError(t, err)
	assert.EqualValues(t, 4, ev.Profiles.ID)
	ev, err = Decode("PRESENCE_UPDATE", json.RawMessage(`{"user":{"id":"4"},"status":"idle"}`))
	require.NoError(t, err)
	assert.EqualValues(t, 4, ev.Presence.User.ID)
	for _, tc := range []struct {
		event, data string
		created     bool
	}{
		{"ACTIVITY_INVITE_CREATE", `{"id":"9"}`, true},
		{"ACTIVITY_INVITE_UPDATE", `{"id":"9"}`, false},
		{"ACTIVITY_INVITE_UPDATE", `{"id":"9","accepted":true,"is_valid":true}`, true}, // rule EVT-1
	} {
		ev, err := Decode(tc.event, json.RawMessage(tc.data))
		require.NoError(t, err)
		assert.Equal(t, tc.created, ev.InviteCreated, "%s %s", tc.event, tc.data)
	}
	for event, data := range map[string]string{"RELATIONSHIP_ADD": `{}`, "PRESENCE_UPDATE": `{"user":{}}`,
		"ACTIVITY_INVITE_CREATE": `[]`, "LOBBY_CREATE": `{"id":"1"}`} {
		_, err := Decode(event, json.RawMessage(data))
		assert.Error(t, err, event)
	}
	assert.Len(t, Events, len(gwire.RelationshipEvents)+4)
}
