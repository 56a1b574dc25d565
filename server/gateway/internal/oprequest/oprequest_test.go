package oprequest

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gwire "sdkpp/wire/gateway"
)

// Result is the RequestResult encoding/json gives, with the body as the handler wrote it when it
// is JSON, as a string when it is not, and null when it is empty.
func TestResult(t *testing.T) {
	for _, tc := range []struct {
		name, nonce string
		body        string
		want        string // the body as encoding/json reads it back
	}{
		{"JSON with its newline", "n1", "{\"a\":\"<b>\"}\n", `{"a":"<b>"}`},
		{"empty", "n2", "", "null"},
		{"spaces", "n3", " \n", "null"},
		{"text", "n4", "404 page not found\n", `"404 page not found"`},
		{"a nonce to escape", "q\"\\\u2028", "[1, 2]", "[1, 2]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Result(tc.nonce, 201, []byte(tc.body))
			var r gwire.RequestResult
			require.NoError(t, json.Unmarshal(d, &r), "%s", d)
			assert.Equal(t, tc.nonce, r.Nonce)
			assert.Equal(t, 201, r.Status)
			assert.JSONEq(t, tc.want, string(r.Body))
		})
	}
}

// A Queue sends the results of its batches in the order they were handed, each batch in one
// send; Wait returns once they were sent, and a panicking answer is a 500.
func TestQueueOrder(t *testing.T) {
	var mu sync.Mutex
	var sent [][]string
	var panics []any
	q := NewQueue(func(ds [][]byte) {
		var nonces []string
		for _, d := range ds {
			var r gwire.RequestResult
			require.NoError(t, json.Unmarshal(d, &r))
			nonces = append(nonces, r.Nonce)
		}
		mu.Lock()
		sent = append(sent, nonces)
		mu.Unlock()
	}, func(p any) { panics = append(panics, p) })
	ok := func() (int, []byte) { return 200, []byte(`{}`) }
	q.Add("a", ok)
	q.Add("b", ok)
	assert.Equal(t, 2, q.Len())
	q.Hand()
	assert.Equal(t, 0, q.Len())
	q.Add("c", func() (int, []byte) { panic("answer") })
	q.Wait()
	mu.Lock()
	assert.Equal(t, [][]string{{"a", "b"}, {"c"}}, sent)
	mu.Unlock()
	assert.Equal(t, []any{"answer"}, panics)
	q.Add("d", ok)
	q.Close()
	assert.Equal(t, [][]string{{"a", "b"}, {"c"}, {"d"}}, sent, "Close sends what was added")
}
