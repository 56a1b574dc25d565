package busmsg

import (
	"encoding/json"
	"strconv"
	"strings"
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
		{"dispatch", Envelope{Dispatch: Dispatch{Users: []uint64{1, 2}, Kind: ToBotsWith, App: 3, Intent: 4, Split: 5, To: "s1",
			Event: "E", Data: json.RawMessage(`{"a":1}`)}, Sent: 9},
			`{"p":9,"u":[1,2],"k":2,"a":3,"i":4,"s":5,"to":"s1","e":"E","d":{"a":1}}`, "E"},
		{"bare dispatch", Envelope{Dispatch: Dispatch{Event: "E"}}, `{"e":"E"}`, "E"},
		{"group", Envelope{Type: TypeGroup, Sent: 9, Group: []Dispatch{{Users: []uint64{1}, App: 3, Event: "E", Data: json.RawMessage(`1`)},
			{Users: []uint64{2}, Kind: ToSession, To: "s1", Event: "F"}}},
			`{"t":"g","p":9,"g":[{"u":[1],"a":3,"e":"E","d":1},{"u":[2],"k":6,"to":"s1","e":"F"}],"e":""}`, "E"},
		{"empty group", Envelope{Type: TypeGroup}, `{"t":"g","e":""}`, "group"},
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
		{"shared", Envelope{Type: TypeShared, Shared: "presence", Node: 1, Life: "l", Dispatch: Dispatch{Data: json.RawMessage(`[1]`)}},
			`{"t":"o","o":"presence","n":1,"l":"l","e":"","d":[1]}`, "presence"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.e)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(b))
			var back, fast Envelope
			require.NoError(t, json.Unmarshal(b, &back))
			assert.Equal(t, tt.e, back, "decodes to what was sent")
			assert.Equal(t, tt.label, back.Label())
			require.NoError(t, Decode(b, &fast))
			assert.Equal(t, tt.e, fast, "Decode too")
		})
	}
	assert.Equal(t, "unknown", (&Envelope{Type: "?"}).Label())
}

// Encode makes a dispatch alone the Envelope it always was, and several one group, split where
// the bounds say; a dispatch whose data is not JSON is left out, and said.
func TestEncode(t *testing.T) {
	d := func(n int) Dispatch {
		return Dispatch{Users: []uint64{uint64(n)}, App: 3, Event: "E", Data: json.RawMessage(strconv.Itoa(n))}
	}
	marshal := func(e Envelope) string {
		b, err := json.Marshal(e)
		require.NoError(t, err)
		return string(b)
	}
	strs := func(msgs [][]byte) []string {
		out := make([]string, len(msgs))
		for i, m := range msgs {
			out[i] = string(m)
		}
		return out
	}
	msgs, err := Encode([]Dispatch{d(1)}, 9)
	require.NoError(t, err)
	assert.Equal(t, []string{marshal(Envelope{Sent: 9, Dispatch: d(1)})}, strs(msgs))
	msgs, err = Encode([]Dispatch{d(1)}, 0)
	require.NoError(t, err)
	assert.Equal(t, []string{marshal(Envelope{Dispatch: d(1)})}, strs(msgs))
	msgs, err = Encode([]Dispatch{d(1), d(2), d(3)}, 9)
	require.NoError(t, err)
	assert.Equal(t, []string{marshal(tabled(9, d(1), d(2), d(3)))}, strs(msgs))
	msgs, err = Encode(nil, 9)
	require.NoError(t, err)
	assert.Empty(t, msgs)

	bad := Dispatch{Event: "B", Data: json.RawMessage(`{`)}
	msgs, err = Encode([]Dispatch{d(1), bad, d(2)}, 9)
	require.Error(t, err)
	assert.Equal(t, []string{marshal(tabled(9, d(1), d(2)))}, strs(msgs))

	// Split: by count, then by size; each message decodes to its share, in order.
	many := make([]Dispatch, MaxGroup+2)
	for i := range many {
		many[i] = d(i)
	}
	msgs, err = Encode(many, 9)
	require.NoError(t, err)
	require.Len(t, msgs, 2)
	big := Dispatch{Event: "E", Data: json.RawMessage(`"` + strings.Repeat("x", MaxGroupBytes/2) + `"`)}
	msgs2, err := Encode([]Dispatch{big, big, big}, 9)
	require.NoError(t, err)
	assert.Len(t, msgs2, 3, "two halves and their fields are more than the bound")
	var got []Dispatch
	for _, m := range msgs {
		var e Envelope
		require.NoError(t, Decode(m, &e))
		got = append(got, e.Dispatches()...)
	}
	assert.Equal(t, many, got)
	assert.Nil(t, (&Envelope{Type: TypeSession}).Dispatches())
}

// A session's numbers grow along the bus whatever each message carries, and Resume names the
// first message whose dispatches may be above a session's last number.
func TestSeq(t *testing.T) {
	assert.Equal(t, int64(5)<<Shift, Seq(5, 0, 1), "a dispatch alone has the number it always had")
	assert.Equal(t, int64(5)<<Shift, Seq(5, 2, 3), "a group's last")
	assert.Less(t, Seq(4, 0, 1)+1<<10, Seq(5, 0, MaxGroup), "room below a group for what a node pushes of its own")
	assert.Less(t, Seq(5, 0, 3), Seq(5, 1, 3))
	assert.Equal(t, uint64(5), Resume(Seq(5, 0, 3)), "part of message 5 may be missing")
	assert.Equal(t, uint64(6), Resume(Seq(5, 2, 3)), "all of 5 was had")
	assert.Equal(t, uint64(6), Resume(Seq(5, 2, 3)+7), "and what the node pushed after it")
}

func TestClosing(t *testing.T) {
	bots := (&EndNote{User: 1, Intents: 2}).Closing()
	assert.Equal(t, gwire.CloseDisallowedIntents, bots.Code)
	assert.True(t, bots.End)
	grant := (&EndNote{User: 1, Grant: 2}).Closing()
	assert.Equal(t, gwire.CloseAuthenticationFailed, grant.Code)
	assert.True(t, grant.End)
}

// usersCases are dispatches' user lists, plain and otherwise, for TestUsersDecode and
// FuzzUsersDecode.
var usersCases = []string{
	`[]`, ` [ ] `, `[0]`, `[1,2,3]`, `[ 1 ,2 , 3 ]`, "[\n1,\t2\r]", `[1477636521984000028,1477636521984000026]`,
	`[18446744073709551615]`, `[18446744073709551616]`, `[99999999999999999999]`, `[-1]`, `[1.0]`,
	`[1e3]`, `[01]`, `[00]`, `null`, `["1"]`, `[1,]`, `[,1]`, `[1 2]`, `[[1]]`, `{}`, `1`, `[`, `[1`,
}

// TestUsersDecode holds Users' decoding to encoding/json's of a []uint64: the same ids, or an
// error for both.
func TestUsersDecode(t *testing.T) {
	for _, c := range usersCases {
		t.Run(c, func(t *testing.T) { checkUsersDecode(t, c) })
	}
}

func FuzzUsersDecode(f *testing.F) {
	for _, c := range usersCases {
		f.Add(c)
	}
	f.Fuzz(checkUsersDecode)
}

// checkUsersDecode checks that a Dispatch whose "u" is users decodes as encoding/json decodes a
// []uint64 there.
func checkUsersDecode(t *testing.T, users string) {
	msg := []byte(`{"e":"X","u":` + users + `}`)
	var want struct {
		Users []uint64 `json:"u"`
	}
	wantErr := json.Unmarshal(msg, &want)
	var got Dispatch
	gotErr := json.Unmarshal(msg, &got)
	require.Equal(t, wantErr == nil, gotErr == nil, "errors: %v, %v", wantErr, gotErr)
	if wantErr == nil {
		require.Equal(t, want.Users, []uint64(got.Users))
	}
}
