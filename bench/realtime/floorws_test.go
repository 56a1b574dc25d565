package main

import (
	"bufio"
	"bytes"
	"database/sql"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWSAcceptKey(t *testing.T) {
	// RFC 6455, section 1.3.
	assert.Equal(t, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", wsAcceptKey("dGhlIHNhbXBsZSBub25jZQ=="))
}

func TestFrameRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 125, 126, 300, 65535, 65536, 70000} {
		for _, masked := range []bool{false, true} {
			payload := bytes.Repeat([]byte("ab\x00c"), n/4+1)[:n]
			// Two frames back to back, as a batch leaves in one write.
			b := appendFrame(nil, payload, masked, [4]byte{1, 2, 3, 0xff})
			b = appendFrame(b, []byte("next"), masked, [4]byte{9, 8, 7, 6})
			if masked && n > 0 {
				assert.NotContains(t, string(b), string(payload), "masked")
			}
			r := bufio.NewReader(bytes.NewReader(b))
			got, err := readFrame(r, nil)
			require.NoError(t, err, "%d bytes, masked %v", n, masked)
			assert.Equal(t, string(payload), string(got), "%d bytes, masked %v", n, masked)
			got, err = readFrame(r, got)
			require.NoError(t, err)
			assert.Equal(t, "next", string(got))
		}
	}
}

func TestReadFrameRefuses(t *testing.T) {
	for name, b := range map[string][]byte{
		"close":      {0x88, 0},
		"binary":     {0x82, 1, 'x'},
		"fragment":   {0x01, 1, 'x'},
		"truncated":  {0x81, 5, 'x'},
		"too large":  {0x81, 127, 0, 0, 0, 0, 0x10, 0, 0, 0},
		"no payload": {0x81},
	} {
		_, err := readFrame(bufio.NewReader(bytes.NewReader(b)), nil)
		assert.Error(t, err, name)
	}
	_, err := readFrame(bufio.NewReader(bytes.NewReader([]byte{0x88, 0})), nil)
	assert.ErrorIs(t, err, errWSClosed)
}

func TestIsFloorMessage(t *testing.T) {
	m := func(content string) []byte {
		b, err := appendDispatch(nil, &floorMessage{ID: 1, Content: content})
		require.NoError(t, err)
		return b
	}
	assert.True(t, isFloorMessage(m("fanout 12   "), 12))
	assert.True(t, isFloorMessage(m("fanout 12"), 12))
	assert.False(t, isFloorMessage(m("fanout 12"), 1), "another message")
	assert.False(t, isFloorMessage(m("fanout 1"), 12))
	assert.False(t, isFloorMessage(append(m("fanout 12"), '{'), 12), "invalid JSON")
}

// TestFloorFanout runs the floor service on SQLite and its clients for two turns and checks that
// every member had every message (the clients fail a turn otherwise) and that every message was
// stored.
func TestFloorFanout(t *testing.T) {
	dir := t.TempDir()
	testFloorFanout(t, "sqlite:"+dir, func() (*sql.DB, error) { return sql.Open("sqlite", dir+"/floor.db") })
}

// testFloorFanout is TestFloorFanout on the floor's store store, which open opens once the floor
// has stopped.
func testFloorFanout(t *testing.T, store string, open func() (*sql.DB, error)) {
	addr, stop, err := serveFloor(store)
	require.NoError(t, err)
	defer stop()
	f, err := newFloorFanout(addr, 3, 400)
	require.NoError(t, err)
	defer f.Close()
	for range 2 {
		_, err := f.turn(37, 8)
		require.NoError(t, err)
	}
	f.Close()
	stop()

	db, err := open()
	require.NoError(t, err)
	defer db.Close()
	var n, long int
	require.NoError(t, db.QueryRow(`SELECT COUNT(*), COUNT(*) FILTER (WHERE length(content) > 250) FROM lobby_messages WHERE nonce IS NOT NULL`).Scan(&n, &long))
	assert.Equal(t, 74, n)
	assert.Equal(t, 74, long, "contents padded to the probed size")
	var last string
	require.NoError(t, db.QueryRow(`SELECT content FROM lobby_messages ORDER BY id DESC LIMIT 1`).Scan(&last))
	assert.True(t, strings.HasPrefix(last, "fanout 74 "), last)
}

func TestDecodeSend(t *testing.T) {
	for _, tc := range []struct {
		name, frame string
		want        floorSend
		err         bool
	}{
		{"plain", `{"nonce":"7","content":"fanout 7   "}`, floorSend{Nonce: "7", Content: "fanout 7   "}, false},
		{"other keys", `{"x":[1,{"y":2}],"content":"c","nonce":"n"}`, floorSend{Nonce: "n", Content: "c"}, false},
		{"escaped", `{"nonce":"7","content":"a\"b\u00e9"}`, floorSend{Nonce: "7", Content: "a\"b\u00e9"}, false},
		{"invalid", `{"nonce":"7",`, floorSend{}, true},
		{"not a string", `{"nonce":7}`, floorSend{}, true},
	} {
		var got floorSend
		err := decodeSend([]byte(tc.frame), &got)
		if tc.err {
			assert.Error(t, err, tc.name)
			continue
		}
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, got, tc.name)
	}
}
