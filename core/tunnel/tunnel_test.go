package tunnel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/core/rest"
	"sdkpp/internal/clock"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// sender records what Do writes, and fails when told to.
type sender struct {
	mu   sync.Mutex
	sent [][]byte
	fail error
}

func (s *sender) SendRaw(_ context.Context, op int, d []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if op != gwire.OpRequest {
		return errors.New("unexpected op")
	}
	if s.fail != nil {
		return s.fail
	}
	s.sent = append(s.sent, bytes.Clone(d)) // d is Send's again once SendRaw returns
	return nil
}

// nonce waits until Do has written its request and returns the request's nonce.
func (s *sender) nonce(t *testing.T) string {
	t.Helper()
	var n string
	require.Eventually(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.sent) == 0 {
			return false
		}
		var r struct{ Nonce string }
		require.NoError(t, json.Unmarshal(s.sent[len(s.sent)-1], &r))
		n = r.Nonce
		return true
	}, 5*time.Second, time.Millisecond)
	return n
}

func result(nonce string, status int, body string) json.RawMessage {
	d, _ := json.Marshal(map[string]any{"nonce": nonce, "status": status, "body": json.RawMessage(body)})
	return d
}

// Every way a request over the gateway ends: answered, answered with an error, lost with the
// connection, late, not sendable, or never sent because the service does not take requests.
func TestDo(t *testing.T) {
	type out struct {
		ID string `json:"id"`
	}
	for _, tc := range []struct {
		name     string
		disabled bool
		noGW     bool
		sendErr  error
		end      func(tn *Tunnel, clk *clock.Fake, nonce string)
		check    func(t *testing.T, err error, got out)
	}{
		{name: "answered", end: func(tn *Tunnel, _ *clock.Fake, n string) { tn.Answer(result(n, 200, `{"id":"7"}`)) },
			check: func(t *testing.T, err error, got out) { require.NoError(t, err); assert.Equal(t, "7", got.ID) }},
		{name: "refused", end: func(tn *Tunnel, _ *clock.Fake, n string) {
			tn.Answer(result(n, 403, `{"code":50001,"message":"Missing Access"}`))
		}, check: func(t *testing.T, err error, _ out) {
			var re *rest.Error
			require.ErrorAs(t, err, &re)
			assert.Equal(t, 403, re.Status)
			assert.Equal(t, 50001, re.Code)
		}},
		{name: "connection lost", end: func(tn *Tunnel, _ *clock.Fake, _ string) { tn.Lost() },
			check: func(t *testing.T, err error, _ out) { assert.ErrorIs(t, err, ErrLost) }},
		{name: "late", end: func(_ *Tunnel, clk *clock.Fake, _ string) {
			require.NoError(t, clk.WaitArmed(context.Background(), 1))
			clk.Advance(Wait)
		}, check: func(t *testing.T, err error, _ out) { assert.ErrorIs(t, err, ErrLost) }},
		{name: "write failed", sendErr: errors.New("not ready"),
			check: func(t *testing.T, err error, _ out) { assert.ErrorIs(t, err, ErrLost) }},
		{name: "no connection", noGW: true,
			check: func(t *testing.T, err error, _ out) { assert.ErrorIs(t, err, ErrLost) }},
		{name: "service without requests", disabled: true,
			check: func(t *testing.T, err error, _ out) { assert.ErrorIs(t, err, ErrLost) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tn Tunnel
			tn.Enable(!tc.disabled)
			clk := clock.NewFake(time.Unix(0, 0))
			tn.Clock = clk
			s := &sender{fail: tc.sendErr}
			var gw Sender = s
			if tc.noGW {
				gw = nil
			}
			done := make(chan struct{})
			var err error
			var got out
			go func() {
				defer close(done)
				err = tn.Do(context.Background(), gw, rest.Request{Method: "POST", Path: "/lobbies/1/messages", JSON: map[string]string{"content": "hi"}}, &got)
			}()
			if tc.end != nil {
				tc.end(&tn, clk, s.nonce(t))
			}
			<-done
			tc.check(t, err, got)
			tn.mu.Lock()
			assert.Empty(t, tn.pending, "a finished request leaves nothing registered")
			tn.mu.Unlock()
		})
	}
}

// An answer whose caller gave up, or that is malformed, is dropped without harm.
func TestAnswerUnknown(t *testing.T) {
	var tn Tunnel
	tn.Answer(result("nobody", 200, `{}`))
	tn.Answer(json.RawMessage(`{"nonce":`))
	tn.Answer(json.RawMessage(`null`))
	assert.Empty(t, tn.pending)
}

// op 100's d carries the request as the service reads it, the body as appendBody encodes it (its
// own encoder, else encoding/json), and no body at all when there is none.
func TestRequestData(t *testing.T) {
	type request struct {
		Nonce, Method, Path string
		Body                json.RawMessage
	}
	for _, tc := range []struct {
		nonce, method, path string
		body                any
		want                string // the body's JSON
	}{
		{"n1", "POST", "/lobbies/1/messages", wire.LobbyMessageRequest{Content: `<é "quoted">`, Metadata: map[string]string{"k": "v"}},
			`{"content":"\u003cé \"quoted\"\u003e","metadata":{"k":"v"}}`},
		{"n2", "GET", "/users/@me", nil, ""},
		// Bytes that need an escape in JSON go through encoding/json.
		{"n3\"", "GET", "/a\\b?q=<&>\u00e9\n", []int{}, `[]`},
	} {
		d, err := requestData([]byte(`prefix`), []byte(tc.nonce), tc.method, tc.path, tc.body)
		require.NoError(t, err, "%s: %s", tc.nonce, d)
		require.Equal(t, "prefix", string(d[:len("prefix")]), "appended to what dst holds")
		d = d[len("prefix"):]
		require.NoError(t, err, "%s: %s", tc.nonce, d)
		require.True(t, json.Valid(d), "%s: %s %v", tc.nonce, d, err)
		var got request
		err = json.Unmarshal(d, &got)
		require.NoError(t, err, "%s: decoded %+v from %s (%v)", tc.nonce, got, d, err)
		want := request{tc.nonce, tc.method, tc.path, nil}
		if tc.want != "" {
			want.Body = json.RawMessage(tc.want)
		}
		require.Equal(t, want, got, "%s: decoded %+v from %s (%v)", tc.nonce, got, d, err)
	}
	_, err := requestData(nil, []byte("n4"), "POST", "/x", func() {})
	require.Error(t, err, "a body encoding/json cannot encode")
}

// appendBody encodes a body with its own encoder when it has one, exactly as encoding/json
// would; a nil pointer and other values go to encoding/json.
func TestEncodeBody(t *testing.T) {
	var nilReq *wire.LobbyMessageRequest
	for _, v := range []any{
		wire.LobbyMessageRequest{Content: "<hi>", Nonce: "n", EnforceNonce: true, Metadata: map[string]string{"k": "v"}},
		&wire.LobbyMessageRequest{Content: "x"},
		nilReq,
		map[string]int{"a": 1},
	} {
		want, err := json.Marshal(v)
		require.NoError(t, err)
		got, err := appendBody([]byte("prefix"), v)
		require.NoError(t, err, "%#v", v)
		assert.Equal(t, "prefix"+string(want), string(got), "%#v", v)
	}
	got, err := appendBody([]byte("prefix"), nil)
	require.NoError(t, err)
	assert.Equal(t, "prefix", string(got), "no body")

}

// Send writes the request before it returns, on the caller's goroutine, and Then delivers the
// outcome exactly once on the goroutine that learns it: at once when the answer came before Then,
// inside Answer, Lost or the timer otherwise; a second answer, a loss after the answer or the
// timer after the answer change nothing.
func TestSendThen(t *testing.T) {
	type out struct {
		ID string `json:"id"`
	}
	req := rest.Request{Method: "POST", Path: "/lobbies/1/messages", JSON: map[string]string{"content": "hi"}}
	for _, tc := range []struct {
		name   string
		before func(tn *Tunnel, nonce string) // between Send and Then
		after  func(tn *Tunnel, clk *clock.Fake, nonce string)
		want   error // nil: answered with id 7
	}{
		{name: "answered before Then", before: func(tn *Tunnel, n string) { tn.Answer(result(n, 200, `{"id":"7"}`)) }},
		{name: "answered after Then", after: func(tn *Tunnel, _ *clock.Fake, n string) { tn.Answer(result(n, 200, `{"id":"7"}`)) }},
		{name: "lost before Then", before: func(tn *Tunnel, _ string) { tn.Lost() }, want: ErrLost},
		{name: "lost after Then", after: func(tn *Tunnel, _ *clock.Fake, _ string) { tn.Lost() }, want: ErrLost},
		{name: "late", after: func(_ *Tunnel, clk *clock.Fake, _ string) { clk.Advance(Wait) }, want: ErrLost},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tn Tunnel
			tn.Enable(true)
			clk := clock.NewFake(time.Unix(0, 0))
			tn.Clock = clk
			s := &sender{}
			c := tn.Send(context.Background(), s, req)
			require.True(t, c.Sent())
			require.Len(t, s.sent, 1, "written before Send returns")
			var r struct{ Nonce string }
			require.NoError(t, json.Unmarshal(s.sent[0], &r))
			if tc.before != nil {
				tc.before(&tn, r.Nonce)
			}
			var got out
			var outcomes []error
			c.Then(&got, func(err error) { outcomes = append(outcomes, err) })
			if tc.after != nil {
				tc.after(&tn, clk, r.Nonce)
			}
			require.Len(t, outcomes, 1, "the outcome is delivered by the time the event that gives it returns")
			if tc.want != nil {
				assert.ErrorIs(t, outcomes[0], tc.want)
			} else {
				require.NoError(t, outcomes[0])
				assert.Equal(t, "7", got.ID)
			}
			// Nothing more reaches done: another answer, a loss, the timer.
			tn.Answer(result(r.Nonce, 200, `{"id":"8"}`))
			tn.Lost()
			clk.Advance(2 * Wait)
			assert.Len(t, outcomes, 1)
			tn.mu.Lock()
			assert.Empty(t, tn.pending)
			tn.mu.Unlock()
		})
	}
}

// A call that was not written gets its outcome at once, on the caller's goroutine, and arms no
// timer.
func TestThenNotSent(t *testing.T) {
	var tn Tunnel
	tn.Enable(true)
	clk := clock.NewFake(time.Unix(0, 0))
	tn.Clock = clk
	c := tn.Send(context.Background(), &sender{fail: errors.New("not ready")}, rest.Request{Method: "POST", Path: "/x"})
	assert.False(t, c.Sent())
	var outcomes []error
	c.Then(nil, func(err error) { outcomes = append(outcomes, err) })
	require.Len(t, outcomes, 1)
	assert.ErrorIs(t, outcomes[0], ErrLost)
	assert.Zero(t, clk.Pending(), "no timer")
	assert.Empty(t, tn.pending)
}

// Do gives up when its context ends: ErrLost, nothing left registered or listed for its deadline,
// and an answer that comes after is dropped. The deadlines' timer, left armed, fires once at the
// deadline and finds nothing to do.
func TestDoContextEnds(t *testing.T) {
	var tn Tunnel
	tn.Enable(true)
	clk := clock.NewFake(time.Unix(0, 0))
	tn.Clock = clk
	s := &sender{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tn.Do(ctx, s, rest.Request{Method: "POST", Path: "/x"}, nil) }()
	n := s.nonce(t)
	require.NoError(t, clk.WaitArmed(context.Background(), 1))
	cancel()
	assert.ErrorIs(t, <-done, ErrLost)
	tn.Answer(result(n, 200, `{}`))
	assert.Empty(t, tn.pending)
	assert.Nil(t, tn.waiting.first, "off the deadlines' list")
	clk.Advance(Wait)
	assert.Zero(t, clk.Pending(), "not armed again")
}

// SendThen writes on its caller's goroutine until MaxInline requests wait for their answers;
// past that it hands the send to handOff, and writes inline again once answers came.
func TestSendThenHandsOffWhenBusy(t *testing.T) {
	var tn Tunnel
	tn.Enable(true)
	clk := clock.NewFake(time.Unix(0, 0))
	tn.Clock = clk
	s := &sender{}
	req := rest.Request{Method: "POST", Path: "/x"}
	var handed []func()
	handOff := func(f func()) { handed = append(handed, f) }
	for i := range MaxInline {
		tn.SendThen(handOff, context.Background(), s, req, nil, func(error) {})
		require.Len(t, s.sent, i+1, "written inline")
	}
	assert.True(t, tn.Busy())
	var outcomes []error
	tn.SendThen(handOff, context.Background(), s, req, nil, func(err error) { outcomes = append(outcomes, err) })
	require.Len(t, handed, 1, "handed off while busy")
	assert.Len(t, s.sent, MaxInline, "not written by the caller")
	handed[0]()
	require.Len(t, s.sent, MaxInline+1, "written by the goroutine handed the send")
	var r struct{ Nonce string }
	require.NoError(t, json.Unmarshal(s.sent[MaxInline], &r))
	tn.Answer(result(r.Nonce, 204, `null`))
	require.Equal(t, []error{nil}, outcomes, "answered")
	tn.Lost()
	assert.False(t, tn.Busy())
	tn.SendThen(handOff, context.Background(), s, req, nil, func(error) {})
	assert.Len(t, handed, 1, "inline again")
	assert.Len(t, s.sent, MaxInline+2)
}

// laterSender is a sender that also writes later (LaterSender), and records which way each
// request went.
type laterSender struct {
	sender
	ways []string
}

func (s *laterSender) SendRaw(ctx context.Context, op int, d []byte) error {
	s.ways = append(s.ways, "now")
	return s.sender.SendRaw(ctx, op, d)
}

func (s *laterSender) SendRawLater(ctx context.Context, op int, d []byte) error {
	s.ways = append(s.ways, "later")
	return s.sender.SendRaw(ctx, op, d)
}

// A lone request is written at once (SendRaw); one sent while others wait for their answers may
// go out later with others (SendRawLater), and a lone one at once again once they are answered.
func TestSendLaterWhileOthersWait(t *testing.T) {
	var tn Tunnel
	tn.Enable(true)
	s := &laterSender{}
	req := rest.Request{Method: "POST", Path: "/x"}
	first := tn.Send(context.Background(), s, req)
	second := tn.Send(context.Background(), s, req)
	require.True(t, first.Sent())
	require.True(t, second.Sent())
	assert.Equal(t, []string{"now", "later"}, s.ways)
	tn.Answer(result(strconv.FormatUint(first.id, 10), 204, `null`))
	tn.Answer(result(strconv.FormatUint(second.id, 10), 204, `null`))
	tn.Send(context.Background(), s, req)
	assert.Equal(t, []string{"now", "later", "now"}, s.ways)
	_, plain := any(&s.sender).(LaterSender)
	assert.False(t, plain, "a Sender without SendRawLater is written at once (TestSendThenHandsOffWhenBusy)")
}
