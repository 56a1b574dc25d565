package gateway

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The one-pass reading of an OpRequest (ReadRequest) decodes exactly what encoding/json decodes,
// and leaves to encoding/json what it does not read itself.
func TestFastRequestAgreesWithEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`{"op":100,"d":{"nonce":"n","method":"POST","path":"/lobbies/1/messages","body":{"content":"hé"}}}`,
		` {"d":{"body":[1,2],"path":"/x","method":"GET","nonce":"a","extra":{"k":1}},"op":100,"s":null,"t":null} `,
		`{"op":100,"d":{"nonce":"n","method":"GET","path":"/x"}}`,
		`{"op":100,"d":{"nonce":"n","method":"GET","path":"/x","body":null}}`,
		`{"op":100,"d":{"nonce":"n","nonce":"m","method":"GET","path":"/x"}}`,
		`{"op":1,"op":100,"d":{"nonce":"n","method":"GET","path":"/x"}}`,
		`{"op":100,"d":{"nonce":"n\u0041","method":"GET","path":"/x"}}`,
		`{"op":100,"d":{"nonce":5,"method":"GET","path":"/x"}}`,
		`{"op":1e2,"d":{"nonce":"n","method":"GET","path":"/x"}}`,
		`{"op":100,"d":[]}`, `{"op":100,"d":null}`, `{"op":100}`, `{"op":1,"d":5}`, `{"op":100,"d":{"nonce":"n",}}`,
		"{\"op\":100,\"d\":{\"nonce\":\"\xff\",\"method\":\"GET\",\"path\":\"/x\"}}", `{"op":100,"d":{}} x`,
	} {
		got, ok := ReadRequest([]byte(in))
		var p struct {
			Op *int            `json:"op"`
			D  json.RawMessage `json:"d"`
		}
		var want Request
		slowOK := json.Unmarshal([]byte(in), &p) == nil && p.Op != nil && *p.Op == OpRequest &&
			len(p.D) > 0 && p.D[0] == '{' && json.Unmarshal(p.D, &want) == nil
		if ok {
			assert.True(t, slowOK, "%s: fast read what encoding/json refuses", in)
			assert.Equal(t, []string{want.Nonce, want.Method, want.Path, string(want.Body)},
				[]string{got.Nonce, got.Method, got.Path, string(got.Body)}, "%s: fast and encoding/json", in)
		}
	}
	_, ok := ReadRequest([]byte(`{"op":100,"d":{"nonce":"n","method":"POST","path":"/x","body":{}}}`))
	assert.True(t, ok, "the SDK's request took the slow path")
}
