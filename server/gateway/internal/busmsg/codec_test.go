package busmsg

import (
	"encoding/json"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tabled is the group Envelope Encode writes for ds: each distinct user list once in its table,
// in the order of first use, and each dispatch naming its own.
func tabled(sent int64, ds ...Dispatch) Envelope {
	e := Envelope{Type: TypeGroup, Sent: sent, Group: make([]Dispatch, len(ds))}
	for i, d := range ds {
		if len(d.Users) > 0 {
			k := slices.IndexFunc(e.Lists, func(l Users) bool { return slices.Equal(l, d.Users) })
			if k < 0 {
				e.Lists, k = append(e.Lists, d.Users), len(e.Lists)
			}
			d.Users, d.List = nil, k+1
		}
		e.Group[i] = d
	}
	return e
}

// A group of lobby messages carries its members once, and decodes to every dispatch with them.
func TestEncodeTable(t *testing.T) {
	members, others := Users{7, 8, 9}, Users{5}
	ds := []Dispatch{
		{Users: members, App: 3, Event: "A", Data: json.RawMessage(`{"n":1}`)},
		{Users: slices.Clone(members), App: 3, Event: "A", Data: json.RawMessage(`{"n":2}`)},
		{Users: others, Kind: ToBots, Intent: 4, Event: "B"},
		{Event: "C", Kind: ToSession, To: "s1"},
		{Users: members, App: 3, Event: "A", Data: json.RawMessage(`{"n":3}`)},
	}
	msgs, err := Encode(ds, 9)
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	assert.Equal(t, `{"t":"g","p":9,"ut":[[7,8,9],[5]],"g":[{"ul":1,"a":3,"e":"A","d":{"n":1}},{"ul":1,"a":3,"e":"A","d":{"n":2}},`+
		`{"ul":2,"k":1,"i":4,"e":"B"},{"k":6,"to":"s1","e":"C"},{"ul":1,"a":3,"e":"A","d":{"n":3}}],"e":""}`, string(msgs[0]))
	var e Envelope
	require.NoError(t, Decode(msgs[0], &e))
	assert.Equal(t, Envelope{Type: TypeGroup, Sent: 9, Group: ds}, e)

	// The previous build's groups, users inline, decode as they did.
	old, err := json.Marshal(Envelope{Type: TypeGroup, Sent: 9, Group: ds})
	require.NoError(t, err)
	require.NoError(t, Decode(old, &e))
	assert.Equal(t, Envelope{Type: TypeGroup, Sent: 9, Group: ds}, e)
}

// encodeCases are dispatches whose encoding Encode writes as json.Marshal does.
var encodeCases = []Dispatch{
	{Event: "E"},
	{Users: Users{1, 18446744073709551615}, Kind: ToBotsWithout, App: 1, Intent: 2, Split: 3, To: "s-1", Event: "E", Data: json.RawMessage(`{"a":[1,2]}`)},
	{Users: Users{}, Event: "", Data: json.RawMessage(`null`)},
	{Event: "é\"<>&\u2028\x01\xff", To: "\t", Data: json.RawMessage(" { \"a\" : \"x y<\" , \"b\" :\n[ 1 , true ] } ")},
	{Event: "E", Data: json.RawMessage(`"\u2028 \u00e9 é"`)},
	{Event: "E", Data: json.RawMessage("\"\xe2\x80\xa8\"")},
	{Event: "E", Data: json.RawMessage(`{"a":1,}`)},
	{Event: "E", Data: json.RawMessage(` `)},
	{Event: "E", Data: json.RawMessage(`1 2`)},
	{Event: "E", Data: json.RawMessage(`-0.5e+3`)},
}

// TestEncodeDifferential holds Encode's bytes to json.Marshal's, alone and in a group, and
// their decoding back to the dispatches.
func TestEncodeDifferential(t *testing.T) {
	for i, d := range encodeCases {
		t.Run(strconv.Itoa(i), func(t *testing.T) { checkEncode(t, d) })
	}
}

func FuzzEncode(f *testing.F) {
	for _, d := range encodeCases {
		f.Add(d.Event, d.To, []byte(d.Data), uint8(d.Kind), d.App, uint64(len(d.Users)))
	}
	f.Fuzz(func(t *testing.T, event, to string, data []byte, kind uint8, app, users uint64) {
		d := Dispatch{Event: event, To: to, Data: data, Kind: FilterKind(kind), App: app}
		for i := range users % 5 {
			d.Users = append(d.Users, app+i)
		}
		checkEncode(t, d)
	})
}

func checkEncode(t *testing.T, d Dispatch) {
	want, wantErr := json.Marshal(Envelope{Sent: 9, Dispatch: d})
	msgs, err := Encode([]Dispatch{d}, 9)
	require.Equal(t, wantErr == nil, err == nil, "errors: %v, %v", wantErr, err)
	if wantErr != nil {
		require.Empty(t, msgs)
		return
	}
	require.Len(t, msgs, 1)
	require.Equal(t, string(want), string(msgs[0]))

	pair := []Dispatch{d, d}
	want, err = json.Marshal(tabled(9, pair...))
	require.NoError(t, err)
	msgs, err = Encode(pair, 9)
	require.NoError(t, err)
	require.Equal(t, string(want), string(msgs[0]))
	var back, ref Envelope
	require.NoError(t, Decode(msgs[0], &back))
	require.NoError(t, json.Unmarshal(msgs[0], &ref))
	require.NoError(t, ref.resolve())
	require.Equal(t, ref, back)
	require.Len(t, back.Group, 2)
	for _, g := range back.Group {
		require.True(t, slices.Equal(d.Users, g.Users), "users %v, %v", d.Users, g.Users) // [] is omitted
	}
}

// decodeCases are bus messages, as nodes write them and otherwise, for TestDecodeDifferential
// and FuzzDecode.
var decodeCases = []string{
	`{"p":9,"u":[1,2],"k":2,"a":3,"i":4,"s":5,"to":"s1","e":"E","d":{"a":1}}`,
	`{"e":"E"}`, `{}`, ` { "e" : "E" , "d" : [ 1 , 2 ] } `,
	`{"t":"g","p":9,"ut":[[7,8,9],[5]],"g":[{"ul":1,"a":3,"e":"A","d":{"n":1}},{"ul":2,"k":1,"i":4,"e":"B"},{"k":6,"to":"s1","e":"C"}],"e":""}`,
	`{"t":"g","p":9,"g":[{"u":[1],"a":3,"e":"E","d":1},{"u":[2],"k":6,"to":"s1","e":"F"}],"e":""}`,
	`{"t":"g","g":[],"ut":[],"e":""}`, `{"t":"g","ut":[[]],"g":[{"ul":1}]}`,
	`{"t":"g","ut":[[1]],"g":[{"ul":2}]}`, `{"t":"g","ut":[[1]],"g":[{"ul":0}]}`, `{"t":"g","ut":[[1]],"g":[{"ul":-1}]}`,
	`{"t":"g","ut":[[1]],"g":[{"ul":1,"u":[2]}]}`, `{"ul":1,"ut":[[4]],"e":"E"}`, `{"ul":1,"e":"E"}`,
	`{"t":"g","ut":[[1]],"g":[{"ul":1.0}]}`, `{"t":"g","ut":[1],"g":[]}`, `{"t":"g","ut":[["1"]],"g":[]}`,
	`{"t":"g","g":[{"e":"A"}],"g":[{"k":1}]}`, `{"e":"A","e":"B"}`, `{"E":"A"}`, `{"e":"\u0041"}`,
	`{"t":"s","ss":{"id":"s2","node":0,"life":"","who":{"UserID":7},"since":"2026-11-29T10:00:00Z","state":1},"e":""}`,
	`{"t":"o","o":"presence","n":1,"l":"l","e":"","d":[1]}`, `{"d":null}`, `{"u":null}`, `{"k":256}`, `{"k":-1}`,
	`{"a":-1}`, `{"a":18446744073709551616}`, `{"p":-9}`, `{"p":1e3}`, `{"k":1,"x":2}`, `{"t":1}`, `{"g":{}}`,
	`{"g":[1]}`, `{"g":[{"e":1}]}`, `[]`, `null`, `{`, `{"e":"E"} x`, `{"d":{"a":}}`, `{"t":"g","g":[{"g":[]}]}`,
}

// TestDecodeDifferential holds Decode to json.Unmarshal and the table's resolution: the same
// Envelope, or an error for both.
func TestDecodeDifferential(t *testing.T) {
	for _, c := range decodeCases {
		t.Run(c, func(t *testing.T) { checkDecode(t, []byte(c)) })
	}
}

func FuzzDecode(f *testing.F) {
	for _, c := range decodeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(checkDecode)
}

func checkDecode(t *testing.T, msg []byte) {
	var want, got Envelope
	wantErr := json.Unmarshal(msg, &want)
	if wantErr == nil {
		wantErr = want.resolve()
	}
	gotErr := Decode(msg, &got)
	require.Equal(t, wantErr == nil, gotErr == nil, "errors: %v, %v", wantErr, gotErr)
	if wantErr == nil {
		require.Equal(t, want, got)
	}
}

// benchGroup is a group of 8 lobby messages to n members, as Encode writes it.
func benchGroup(b *testing.B, n int) []Dispatch {
	users := make(Users, n)
	for i := range users {
		users[i] = 1477636521984000000 + uint64(i)<<22
	}
	ds := make([]Dispatch, 8)
	for i := range ds {
		ds[i] = Dispatch{Users: users, App: 1477636521984000001, Event: "LOBBY_MESSAGE_CREATE",
			Data: json.RawMessage(`{"id":"1477636521984000028","type":0,"content":"fanout ` + strconv.Itoa(i) +
				`","lobby_id":"1477636521984000029","channel_id":"1477636521984000029","author":{"id":"1477636521984000030","username":"p1"}}`)}
	}
	return ds
}

// BenchmarkEncode encodes a group of 8 lobby messages, as the sending node does.
func BenchmarkEncode(b *testing.B) {
	for _, n := range []int{10, 100} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			ds := benchGroup(b, n)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Encode(ds, 1); err != nil {
					b.Fatal(err)
				}
			}
			msgs, _ := Encode(ds, 1)
			b.ReportMetric(float64(len(msgs[0])), "bytes/msg")
		})
		b.Run(strconv.Itoa(n)+"/json", func(b *testing.B) { // the previous build's: reflection, users inline
			e := Envelope{Type: TypeGroup, Sent: 1, Group: benchGroup(b, n)}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := json.Marshal(&e); err != nil {
					b.Fatal(err)
				}
			}
			msg, _ := json.Marshal(&e)
			b.ReportMetric(float64(len(msg)), "bytes/msg")
		})
	}
}

// BenchmarkDecode decodes a group of 8 lobby messages, as each node does.
func BenchmarkDecode(b *testing.B) {
	for _, n := range []int{10, 100} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			msgs, err := Encode(benchGroup(b, n), 1)
			require.NoError(b, err)
			require.Len(b, msgs, 1)
			b.ReportAllocs()
			for b.Loop() {
				var e Envelope
				if err := Decode(msgs[0], &e); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(strconv.Itoa(n)+"/json", func(b *testing.B) { // the previous build's: reflection, users inline
			msg, err := json.Marshal(Envelope{Type: TypeGroup, Sent: 1, Group: benchGroup(b, n)})
			require.NoError(b, err)
			b.ReportAllocs()
			for b.Loop() {
				var e Envelope
				if err := json.Unmarshal(msg, &e); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(strconv.Itoa(n)+"/inline", func(b *testing.B) { // Decode of the previous build's form
			msg, err := json.Marshal(Envelope{Type: TypeGroup, Sent: 1, Group: benchGroup(b, n)})
			require.NoError(b, err)
			b.ReportAllocs()
			for b.Loop() {
				var e Envelope
				if err := Decode(msg, &e); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
