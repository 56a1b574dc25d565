package tunnel

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"sdkpp/core/rest"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"

	"github.com/stretchr/testify/require"
)

// lastSender keeps the d of the last payload sent.
type lastSender struct{ d []byte }

func (s *lastSender) SendRaw(_ context.Context, _ int, d []byte) error {
	s.d = append(s.d[:0], d...)
	return nil
}

// BenchmarkSendAndAnswer measures a sender's work for one lobby message over the tunnel, without
// the socket: the request encoded and registered (Send), its outcome awaited (Then), and its
// answer, as the gateway client hands it (SDKPP_REQUEST_RESULT's data, in the reader's buffer),
// matched and decoded into the message (Answer). "new-out" decodes each answer into a new
// message, as SendLobbyMessage and the realtime bench's sender do; "reused-out" into one
// message, every time.
func BenchmarkSendAndAnswer(b *testing.B) {
	b.Run("new-out", func(b *testing.B) { benchSendAndAnswer(b, false) })
	b.Run("reused-out", func(b *testing.B) { benchSendAndAnswer(b, true) })
}

func benchSendAndAnswer(b *testing.B, reuse bool) {
	var t Tunnel
	t.Enable(true)
	gw := &lastSender{}
	gn := "Player One"
	msg := wire.LobbyMessage{ID: 1234567890123456789, Content: "fanout 12345", LobbyID: 1234567890123456788,
		ChannelID: 1234567890123456788, Author: wire.User{ID: 1234567890123456787, Username: "bench-0", Discriminator: "0", GlobalName: &gn},
		ApplicationID: 1234567890123456000, Timestamp: "2026-11-29T19:45:35.123456Z"}
	body := msg.AppendJSON(nil)
	var data []byte // the reader's buffer, reused
	out := new(wire.LobbyMessage)
	failed := 0
	done := func(err error) {
		if err != nil {
			failed++
		}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		req := rest.Request{Method: http.MethodPost, Path: "/lobbies/1234567890123456788/messages",
			JSON: wire.LobbyMessageRequest{Content: "fanout " + strconv.Itoa(i), Nonce: NewNonce(), EnforceNonce: true}}
		if !reuse {
			out = new(wire.LobbyMessage)
		}
		c := t.Send(context.Background(), gw, req)
		c.Then(out, done)
		nonce := gw.d[len(`{"nonce":"`):]
		nonce = nonce[:bytes.IndexByte(nonce, '"')]
		data = append(data[:0], `{"nonce":"`...)
		data = append(data, nonce...)
		data = append(data, `","status":200,"body":`...)
		data = append(data, body...)
		data = append(data, '}')
		t.Answer(data)
	}
	require.Zero(b, failed)
	require.Equal(b, msg.Content, out.Content)
	var r gwire.RequestResult
	require.NoError(b, json.Unmarshal(data, &r))
}

// A request over the tunnel, its wait and its answer allocate a bounded number of times: the call,
// the request's encoding and the answer's decoding (a message's strings); no timer (deadlines),
// no string for the nonce in the answer, nothing per answer when Then came first.
func TestSendAndAnswerAllocations(t *testing.T) {
	var tn Tunnel
	tn.Enable(true)
	gw := &lastSender{}
	body := []byte(`{"id":"12","content":"hi","lobby_id":"3","author":{"id":"4","username":"p"},"timestamp":"2026-11-29T19:45:35Z"}`)
	var data []byte
	var out wire.LobbyMessage
	req := rest.Request{Method: http.MethodPost, Path: "/lobbies/3/messages", JSON: wire.LobbyMessageRequest{Content: "hi", Nonce: "n", EnforceNonce: true}}
	failed := 0
	done := func(err error) {
		if err != nil {
			failed++
		}
	}
	tn.Send(context.Background(), gw, req).Then(&out, done) // arms the deadlines' timer, once
	tn.Lost()
	allocs := testing.AllocsPerRun(200, func() {
		c := tn.Send(context.Background(), gw, req)
		c.Then(&out, done)
		nonce := gw.d[len(`{"nonce":"`):]
		nonce = nonce[:bytes.IndexByte(nonce, '"')]
		data = append(append(append(append(data[:0], `{"nonce":"`...), nonce...), `","status":200,"body":`...), body...)
		data = append(data, '}')
		tn.Answer(data)
	})
	require.Zero(t, failed-1, "only the call Lost gave up failed")
	// The call, the request's buffer, and the message's strings (content and timestamp; the
	// nonce's text is a constant below 100, and one-byte strings are the runtime's).
	require.LessOrEqual(t, allocs, 5.0)
}
