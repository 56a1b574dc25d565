package tunnel

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/core/rest"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// resultInputs are answers as the service sends them, and the shapes the one pass leaves to
// encoding/json.
var resultInputs = []string{
	`{"nonce":"0a1b","status":200,"body":{"id":"1","content":"hi"}}`,
	` {"nonce":"0a1b", "status":201, "body":null} `,
	`{"status":400,"body":{"code":50035},"nonce":"x"}`,
	`{"nonce":"a","status":200}`,
	`{"nonce":"a","nonce":"b","status":200,"status":204,"body":1,"body":[2]}`, // the last ones win
	`{"Nonce":"a","STATUS":200,"Body":{}}`,                                    // matched regardless of case
	`{"nonce":"\u0061","status":200}`,                                         // escaped
	`{"nonce":"a","status":2e2}`,                                              // not an int
	`{"nonce":"a","status":200.0}`,
	`{"nonce":"a","status":-0}`,
	`{"nonce":"a","status":99999999999999999999}`,
	`{"nonce":null,"status":null,"body":null}`,
	`{"nonce":7}`,
	`{"nonce":"a","other":[1,{"x":2}],"status":200}`,
	`{"nonce":"a\xff"}`,
	`{"nonce":"a","status":200,"body":{"x":}}`,
	`{"nonce":"a",}`,
	`[1]`, `null`, ``, `{`, `{}`,
}

// decodeResult decodes as encoding/json does, or fails where it fails.
func TestDecodeResultAgreesWithEncodingJSON(t *testing.T) {
	for _, in := range resultInputs {
		agreeResult(t, []byte(in))
	}
}

func FuzzDecodeResult(f *testing.F) {
	for _, in := range resultInputs {
		f.Add([]byte(in))
	}
	f.Fuzz(agreeResult)
}

func agreeResult(t *testing.T, in []byte) {
	var want gwire.RequestResult
	errWant := json.Unmarshal(in, &want)
	got, ok := decodeResult(in)
	require.Equal(t, errWant == nil, ok, "%q: encoding/json's error %v", in, errWant)
	if ok {
		require.Equal(t, want.Nonce, got.Nonce, "%q", in)
		require.Equal(t, want.Status, got.Status, "%q", in)
		require.Equal(t, string(want.Body), string(got.Body), "%q", in)
	}
}

// decodeBody decodes a body as json.Unmarshal does, whether out decodes itself or not, and fails
// where it fails.
func TestDecodeBodyAgreesWithEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`{"id":"12","content":"hi","lobby_id":"3","author_id":"4","metadata":{"k":"v"}}`,
		" \t{\"id\":\"12\"}\r\n", `null`, `{"id":12}`, `{"id":"x"}`, `[]`, `{"id":"1"`, `{"id":"1"} x`, ``,
	} {
		var want, got wire.LobbyMessage
		errWant := json.Unmarshal([]byte(in), &want)
		errGot := decodeBody([]byte(in), &got)
		assert.Equal(t, errWant == nil, errGot == nil, "%q: %v against encoding/json's %v", in, errGot, errWant)
		assert.Equal(t, want, got, "%q", in)
		var wantMap, gotMap map[string]any // a value that does not decode itself
		assert.Equal(t, json.Unmarshal([]byte(in), &wantMap), decodeBody([]byte(in), &gotMap), "%q", in)
		assert.Equal(t, wantMap, gotMap, "%q", in)
	}
	var nilMessage *wire.LobbyMessage
	assert.Error(t, decodeBody([]byte(`{}`), nilMessage), "a nil pointer, as encoding/json refuses it")
}

// An answer's body outlives the dispatch's data, which is its reader's buffer, reused for the
// next message.
func TestAnswerKeepsNoPartOfData(t *testing.T) {
	var tn Tunnel
	tn.Enable(true)
	s := &sender{}
	c := tn.Send(context.Background(), s, rest.Request{Method: "POST", Path: "/x"})
	data := []byte(`{"nonce":"` + s.nonce(t) + `","status":200,"body":{"id":"5"}}`)
	tn.Answer(data)
	for i := range data {
		data[i] = 'u'
	}
	var out struct {
		ID string `json:"id"`
	}
	var outcome []error
	c.Then(&out, func(err error) { outcome = append(outcome, err) })
	require.Equal(t, []error{nil}, outcome, "answered before Then: delivered at once")
	assert.Equal(t, "5", out.ID)
}

// answerInputs are the tails of answers, after `{"nonce":"ID",`: the service's form, which
// Answer reads in one pass for a lobby message, and forms it must read as encoding/json does.
var answerInputs = []string{
	`"status":200,"body":{"id":"12","type":0,"content":"hi","lobby_id":"3","channel_id":"3","author":{"id":"4","username":"p","discriminator":"0","global_name":null,"avatar":null},"metadata":{"k":"v"},"flags":0,"timestamp":"2026-11-29T19:45:35Z","edited_timestamp":null}}`,
	`"status":200,"body":{"id":"12","lobby_id":"3"}}`,
	`"status":201,"body":null}`,
	`"status":204,"body":{}}`,
	`"status":200,"body":{"id":"12","lobby_id":"3"},"body":{"id":"13"}}`, // the last body wins
	`"status":200,"body":{"id":"12"},"nonce":"other"}`,                   // another nonce wins
	`"status":200,"body":{"id":"12"},"status":404}`,
	`"status":200,"body":{"id":"12","lobby_id":"3"}`,       // unterminated
	`"status":200,"body":{"id":"12","lobby_id":"3"},}`,     // a trailing comma
	`"status":200,"body":{"id":"12","content":"a\u00e9"}}`, // escaped text
	`"status":200,"body":{"id":12}}`,                       // a number for a string id
	`"status":200,"body":{"id":"12","content":"\xff"}}`,    // not UTF-8
	`"status":200,"body":{"id":"12","content":"a` + "\x01" + `"}}`,
	`"status":200,"body":[1]}`,
	`"status":200,"body":"text"}`,
	`"status":200,"body": {"id":"12"} }`,
	`"status":0200,"body":{"id":"12"}}`,
	`"status":2000,"body":{"id":"12"}}`,
	`"status":20000,"body":{"id":"12"}}`,
	`"status":-200,"body":{"id":"12"}}`,
	`"status":400,"body":{"code":50035,"message":"Invalid Form Body"}}`,
	`"status":200,"body":}`,
	`"status":200,"body":`,
	`"status":200,"body":1`,
	`"status":200,"body"`,
	`"status":200,"body":{"id":"12"}`,
	`"status":200}`,
	`"body":{"id":"12"},"status":200}`,
}

// Answer gives a lobby message sent with Then the outcome encoding/json's reading of the
// answer gives: the message its body decodes to, the error of an error status or a malformed
// body, or nothing (a malformed answer, another nonce) with the call still waiting; whether it
// reads the answer in one pass or not.
func TestAnswerAgreesWithEncodingJSON(t *testing.T) {
	for _, in := range answerInputs {
		agreeAnswer(t, []byte(in))
	}
}

func FuzzAnswer(f *testing.F) {
	for _, in := range answerInputs {
		f.Add([]byte(in))
	}
	f.Fuzz(agreeAnswer)
}

// agreeAnswer answers a message sent with Then, with `{"nonce":"ID",` and tail, and holds the
// outcome to encoding/json's.
func agreeAnswer(t *testing.T, tail []byte) {
	var tn Tunnel
	tn.Enable(true)
	s := &sender{}
	c := tn.Send(context.Background(), s, rest.Request{Method: "POST", Path: "/lobbies/3/messages"})
	var got wire.LobbyMessage
	var outcome []error
	c.Then(&got, func(err error) { outcome = append(outcome, err) })
	nonce := s.nonce(t)
	data := append([]byte(`{"nonce":"`+nonce+`",`), tail...)
	tn.Answer(data)
	tn.Lost() // what is still waiting now fails with ErrLost; it stops the deadlines' timer too

	var r gwire.RequestResult
	if json.Unmarshal(data, &r) != nil || r.Nonce != nonce {
		require.Equal(t, []error{ErrLost}, outcome, "%q: no answer for the call", data)
		return
	}
	require.Len(t, outcome, 1, "%q: one outcome", data)
	var want wire.LobbyMessage
	switch {
	case r.Status >= 400:
		var e *rest.Error
		require.ErrorAs(t, outcome[0], &e, "%q", data)
		assert.Equal(t, r.Status, e.Status, "%q", data)
	case len(r.Body) == 0 || string(r.Body) == "null":
		require.NoError(t, outcome[0], "%q", data)
	case json.Unmarshal(r.Body, &want) != nil:
		require.Error(t, outcome[0], "%q: a malformed body", data)
	default:
		require.NoError(t, outcome[0], "%q", data)
		assert.Equal(t, want, got, "%q", data)
	}
}
