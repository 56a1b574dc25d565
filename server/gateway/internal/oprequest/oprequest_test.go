package oprequest

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

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

// An accepted request's answer (Accept's, JSON by its contract) goes out as it is, with the
// spaces around it cut, where Serve's handlers' bodies are checked (TestResult); an empty one is
// null, and a panic's is the 500's JSON body.
func TestAnsweredBodyAsItIs(t *testing.T) {
	body := []byte("{\"id\":\"1\",\"content\":\"gg\"}\n")
	d := Answered("n", func() (int, []byte) { return 200, body }, func(any) {})
	assert.Equal(t, `{"nonce":"n","status":200,"body":{"id":"1","content":"gg"}}`, string(d))
	assert.Equal(t, `{"nonce":"n","status":204,"body":null}`, string(Answered("n", func() (int, []byte) { return 204, nil }, func(any) {})))
	var panicked []any
	d = Answered("n", func() (int, []byte) { panic("answer") }, func(p any) { panicked = append(panicked, p) })
	var r gwire.RequestResult
	require.NoError(t, json.Unmarshal(d, &r), "%s", d)
	assert.Equal(t, 500, r.Status)
	assert.JSONEq(t, string(ErrorBody(0, "500: Internal Server Error")), string(r.Body))
	assert.Equal(t, []any{"answer"}, panicked)
}

// BenchmarkAnswered takes a lobby message's answer (its body the message, 400-odd bytes of JSON)
// into its result, as the queue does for each accepted message.
func BenchmarkAnswered(b *testing.B) {
	body := []byte(`{"id":"1444408365056000001","lobby_id":"1444408365056000000","channel_id":"1444408365056000000",` +
		`"author_id":"1444408365056000002","author":{"id":"1444408365056000002","username":"player-2",` +
		`"global_name":null,"avatar":null,"discriminator":"0","bot":false},"content":"` +
		strings.Repeat("gg, one more round? ", 8) + `","metadata":{},"flags":0,"type":0,` +
		`"timestamp":"2026-03-01T12:00:00.000000+00:00","additional_name":""}`)
	answer := func() (int, []byte) { return 200, body }
	b.ReportAllocs()
	for b.Loop() {
		Answered("c2f1a7d0-6b1e-4c55-9a33-2f0e1b7c9d41", answer, func(any) {})
	}
}

// sends records what a Queue sends: the nonces of each send's results.
type sends struct {
	mu    sync.Mutex
	sent  [][]string
	panic bool // the next send panics
}

func (s *sends) send(t *testing.T) func(ds [][]byte) {
	return func(ds [][]byte) {
		var nonces []string
		for _, d := range ds {
			var r gwire.RequestResult
			require.NoError(t, json.Unmarshal(d, &r))
			nonces = append(nonces, r.Nonce)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.panic {
			s.panic = false
			panic("send")
		}
		s.sent = append(s.sent, nonces)
	}
}

func (s *sends) get() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sent)
}

// ok is an answer that is ready.
func ok() (int, []byte) { return 200, []byte(`{}`) }

// committed returns an answer that waits for commit to be closed, as a lobby message's waits for
// its commit.
func committed(commit chan struct{}) Answer {
	return func() (int, []byte) { <-commit; return ok() }
}

// A Queue sends the results of its batches in the order they were handed, a batch never split
// between sends: a batch handed once the goroutine sent the one before leaves in a send of its
// own. Wait returns once they were sent, and a panicking answer is a 500.
func TestQueueOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s sends
		var panics []any
		q := NewQueue(64, s.send(t), func(p any) { panics = append(panics, p) })
		q.Add("a", ok)
		q.Add("b", ok)
		q.Hand()
		synctest.Wait() // the goroutine sent a and b
		q.Add("c", func() (int, []byte) { panic("answer") })
		q.Wait()
		assert.Equal(t, [][]string{{"a", "b"}, {"c"}}, s.get())
		assert.Equal(t, []any{"answer"}, panics)
		q.Add("d", ok)
		q.Close()
		assert.Equal(t, [][]string{{"a", "b"}, {"c"}, {"d"}}, s.get(), "Close sends what was added")
	})
}

// OnHand runs before each batch is handed, so before its answers are taken, and not for an
// empty one.
func TestQueueOnHand(t *testing.T) {
	var mu sync.Mutex
	var steps []string
	step := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		steps = append(steps, s)
	}
	var s sends
	q := NewQueue(64, s.send(t), func(any) {})
	q.OnHand = func() { step("hand") }
	answer := func(name string) Answer { return func() (int, []byte) { step(name); return ok() } }
	q.Hand()
	q.Add("a", answer("a"))
	q.Add("b", answer("b"))
	q.Wait() // hands them, and waits for their answers
	q.Add("c", answer("c"))
	q.Close()
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"hand", "a", "b", "hand", "c"}, steps)
}

// While a batch waits for its commit, the reader adds and hands the next batches without
// waiting: the queue is a pipeline of batches. Their results leave in order once the first
// commit is done, the batches handed meanwhile in one send once the last of them is answered;
// Idle tells whether anything is still in flight.
func TestQueuePipelinesBatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s sends
		q := NewQueue(64, s.send(t), func(any) {})
		require.True(t, q.Idle())
		first, second := make(chan struct{}), make(chan struct{})
		q.Add("a1", committed(first))
		q.Add("a2", ok)
		q.Hand()
		synctest.Wait() // the goroutine waits in a1's commit
		require.False(t, q.Idle())
		q.Add("b1", committed(second))
		q.Hand()
		q.Add("c1", ok)
		q.Add("c2", ok)
		q.Hand() // none of these waited for the first commit
		synctest.Wait()
		assert.Empty(t, s.get(), "nothing leaves before the first commit")
		close(first)
		synctest.Wait()
		assert.Equal(t, [][]string{{"a1", "a2"}}, s.get(), "the second batch waits in its own commit")
		assert.False(t, q.Idle())
		close(second)
		synctest.Wait()
		assert.Equal(t, [][]string{{"a1", "a2"}, {"b1", "c1", "c2"}}, s.get(), "handed during the first commit, sent together")
		assert.True(t, q.Idle())
		q.Close()
	})
}

// A Queue holds at most its bound of requests whose results were not sent: the Add that reaches
// it hands them and returns only once a batch was sent, so that the reader reads no more
// meanwhile.
func TestQueueBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s sends
		q := NewQueue(3, s.send(t), func(any) {})
		commit := make(chan struct{})
		q.Add("a", committed(commit))
		q.Hand()
		synctest.Wait() // the goroutine waits in a's commit
		q.Add("b", ok)  // two in flight, under the bound
		added := make(chan struct{})
		go func() {
			q.Add("c", ok)
			close(added)
		}()
		synctest.Wait()
		select {
		case <-added:
			t.Fatal("Add returned with the bound of requests in flight")
		default:
		}
		close(commit)
		<-added
		synctest.Wait()
		assert.Equal(t, [][]string{{"a"}, {"b", "c"}}, s.get(), "Add handed what it had added")
		q.Close()
	})
}

// Close with batches in flight returns only once every one of them was sent, in order; a panic
// in a send loses that send's results only, and the queue goes on.
func TestQueueCloseWithBatchesInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := sends{panic: true}
		var panics []any
		q := NewQueue(64, s.send(t), func(p any) { panics = append(panics, p) })
		q.Add("lost", ok)
		q.Hand()
		synctest.Wait()
		assert.Equal(t, []any{"send"}, panics)
		commit := make(chan struct{})
		q.Add("a", committed(commit))
		q.Hand()
		synctest.Wait() // the goroutine waits in a's commit
		q.Add("b", ok)
		q.Hand()
		q.Add("c", ok) // added, not handed
		closed := make(chan struct{})
		go func() {
			q.Close()
			close(closed)
		}()
		synctest.Wait()
		select {
		case <-closed:
			t.Fatal("Close returned with answers in flight")
		default:
		}
		close(commit)
		<-closed
		assert.Equal(t, [][]string{{"a"}, {"b", "c"}}, s.get())
	})
}

// Read takes a valid OpRequest however it is spelled, and nothing else.
func TestRead(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		ok         bool
	}{
		{"as the SDK sends it", `{"op":100,"d":{"nonce":"n","method":"POST","path":"/a","body":{"x":1}}}`, true},
		{"d first, escaped", `{"d":{"path":"/a","method":"GET","nonce":"\u006e"},"op":100}`, true},
		{"another opcode", `{"op":1,"d":{"nonce":"n","method":"GET","path":"/a"}}`, false},
		{"no nonce", `{"op":100,"d":{"method":"GET","path":"/a"}}`, false},
		{"an unknown method", `{"d":{"nonce":"n","method":"TRACE","path":"/a"},"op":100}`, false},
		{"not JSON", `{"op":100,"d":`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, ok := Read([]byte(tc.data))
			require.Equal(t, tc.ok, ok)
			if ok {
				assert.Equal(t, "n", r.Nonce)
				assert.Equal(t, "/a", r.Path)
			}
		})
	}
}

// A batch's array is used again for the next batch's Adds once its results were sent: a steady
// stream of batches allocates their results only (Result's, and the list of them).
func TestQueueReusesBatches(t *testing.T) {
	q := NewQueue(64, func([][]byte) {}, func(any) {})
	defer q.Close()
	body := []byte(`{}`)
	answer := func() (int, []byte) { return 200, body }
	batch := func() {
		for range 4 {
			q.Add("n", answer)
		}
		q.Wait()
	}
	batch() // starts the goroutine
	allocs := testing.AllocsPerRun(100, batch)
	assert.Equal(t, float64(1+4), allocs, "the list of results and each result")
}

// Run takes the answers of what was added on the caller's goroutine when nothing handed waits:
// their results are sent before it returns, after OnHand, with no goroutine started. While a
// batch waits for its commit it hands them instead, and they leave after that batch, in order.
func TestQueueRunsOnTheCallerWhenIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s sends
		q := NewQueue(64, s.send(t), func(any) {})
		var hands int
		q.OnHand = func() { hands++ }
		q.Run() // nothing added: nothing happens
		assert.Zero(t, hands)
		q.Add("a1", ok)
		q.Add("a2", ok)
		assert.Equal(t, 2, q.Added())
		q.Run()
		assert.Zero(t, q.Added())
		assert.Equal(t, [][]string{{"a1", "a2"}}, s.get(), "sent before Run returned")
		assert.Equal(t, 1, hands)
		q.mu.Lock()
		running := q.running
		q.mu.Unlock()
		assert.False(t, running, "no goroutine was started")

		commit := make(chan struct{})
		q.Add("b1", committed(commit))
		q.Hand()
		synctest.Wait() // the goroutine waits in b1's commit
		q.Add("c1", ok)
		q.Run() // handed: it does not wait for b1's commit
		synctest.Wait()
		assert.Equal(t, [][]string{{"a1", "a2"}}, s.get(), "nothing leaves before b1's commit")
		close(commit)
		synctest.Wait()
		assert.Equal(t, [][]string{{"a1", "a2"}, {"b1"}, {"c1"}}, s.get(), "in order, after b1")
		q.Add("d1", ok)
		q.Run() // idle again: taken here
		assert.Equal(t, [][]string{{"a1", "a2"}, {"b1"}, {"c1"}, {"d1"}}, s.get())
		q.Close()
	})
}
