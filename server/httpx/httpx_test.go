package httpx

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"sdkpp/wire"
)

// A value that encodes itself (wire.LobbyMessage) is written as encoding/json's Encoder writes it.
func TestJSONOfAnAppender(t *testing.T) {
	m := wire.LobbyMessage{ID: 1, Content: `<b>"tags" & such</b>`, Metadata: map[string]string{"z": "1", "a": "\u2028"}}
	rec := httptest.NewRecorder()
	JSON(rec, 200, m)
	var want bytes.Buffer
	require.NoError(t, json.NewEncoder(&want).Encode(m))
	require.Equal(t, want.String(), rec.Body.String(), "wrote %d %q, want %q", rec.Code, rec.Body.String(), want.String())
	require.Equal(t, 200, rec.Code, "wrote %d %q, want %q", rec.Code, rec.Body.String(), want.String())
	require.Equal(t, "application/json", rec.Header().Get("Content-Type"), "wrote %d %q, want %q", rec.Code, rec.Body.String(), want.String())
}
