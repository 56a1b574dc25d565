package httpx

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"sdkpp/wire"
)

// A value that encodes itself (wire.LobbyMessage) is written as encoding/json's Encoder writes it.
func TestJSONOfAnAppender(t *testing.T) {
	m := wire.LobbyMessage{ID: 1, Content: `<b>"tags" & such</b>`, Metadata: map[string]string{"z": "1", "a": "\u2028"}}
	rec := httptest.NewRecorder()
	JSON(rec, 200, m)
	var want bytes.Buffer
	if err := json.NewEncoder(&want).Encode(m); err != nil {
		t.Fatal(err)
	}
	if rec.Body.String() != want.String() || rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("wrote %d %q, want %q", rec.Code, rec.Body.String(), want.String())
	}
}
