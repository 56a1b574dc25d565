package busmsg

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gwire "sdkpp/wire/gateway"
)

// TestEncoding pins the bus's JSON: nodes of different versions read each other's messages, so
// a field's name or its omission must not change.
func TestEncoding(t *testing.T) {
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	who := Identity{Capabilities: 1 << 15, UserID: 7, AppID: 8, Bot: true, Grant: 9}
	tests := []struct {
		name  string
		e     Envelope
		want  string
		label string
	}{
		{"dispatch", Envelope{Users: []uint64{1, 2}, Kind: ToBotsWith, App: 3, Intent: 4, Split: 5, To: "s1",
			Event: "E", Data: json.RawMessage(`{"a":1}`), Sent: 9},
			`{"p":9,"u":[1,2],"k":2,"a":3,"i":4,"s":5,"to":"s1","e":"E","d":{"a":1}}`, "E"},
		{"bare dispatch", Envelope{Event: "E"}, `{"e":"E"}`, "E"},
		{"detached session", Envelope{Type: TypeSession, Session: &SessionNote{ID: "s1", Node: 2, Life: "l", Who: who,
			Intents: 3, Capabilities: 6, Since: at, State: NoteDetached, Expires: at.Add(time.Minute)}},
			`{"t":"s","ss":{"id":"s1","node":2,"life":"l","who":{"Capabilities":32768,"UserID":7,"AppID":8,"Scopes":null,"Bot":true,"Grant":9},"intents":3,"caps":6,"since":"2026-11-29T10:00:00Z","state":2,"expires":"2026-11-29T10:01:00Z"},"e":""}`, "session"},
		{"live session", Envelope{Type: TypeSession, Session: &SessionNote{ID: "s2", Who: Identity{UserID: 7}, Since: at,
			State: NoteLive}},
			`{"t":"s","ss":{"id":"s2","node":0,"life":"","who":{"Capabilities":0,"UserID":7,"AppID":0,"Scopes":null,"Bot":false,"Grant":0},"intents":0,"since":"2026-11-29T10:00:00Z","state":1},"e":""}`, "session"},
		{"end", Envelope{Type: TypeEnd, End: &EndNote{User: 1, App: 2, Grant: 3, Intents: 4}},
			`{"t":"x","x":{"user":1,"app":2,"grant":3,"intents":4},"e":""}`, "end_sessions"},
		{"end all", Envelope{Type: TypeEnd, End: &EndNote{User: 1}}, `{"t":"x","x":{"user":1},"e":""}`, "end_sessions"},
		{"down", Envelope{Type: TypeDown, Down: &DownNote{Node: 1, Life: "a", By: 2, ByLife: "b"}},
			`{"t":"d","dn":{"node":1,"life":"a","by":2,"by_life":"b"},"e":""}`, "node_down"},
		{"node", Envelope{Type: TypeNode, Node: 3, Life: "c"}, `{"t":"n","n":3,"l":"c","e":""}`, "node"},
		{"shared", Envelope{Type: TypeShared, Shared: "presence", Node: 1, Life: "l", Data: json.RawMessage(`[1]`)},
			`{"t":"o","o":"presence","n":1,"l":"l","e":"","d":[1]}`, "presence"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.e)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(b))
			var back Envelope
			require.NoError(t, json.Unmarshal(b, &back))
			assert.Equal(t, tt.e, back, "decodes to what was sent")
			assert.Equal(t, tt.label, back.Label())
		})
	}
	assert.Equal(t, "unknown", (&Envelope{Type: "?"}).Label())
}

func TestClosing(t *testing.T) {
	bots := (&EndNote{User: 1, Intents: 2}).Closing()
	assert.Equal(t, gwire.CloseDisallowedIntents, bots.Code)
	assert.True(t, bots.End)
	grant := (&EndNote{User: 1, Grant: 2}).Closing()
	assert.Equal(t, gwire.CloseAuthenticationFailed, grant.Code)
	assert.True(t, grant.End)
}
