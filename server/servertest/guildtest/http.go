// Package guildtest has what the tests of the guild packages (guilds, channels, messages,
// invites, expressions) and the server's flows across them share: HTTP requests and their
// checks, a dev service with a guild a bot is in (Bots), and a bot's gateway connection
// (Gateway). It is for tests only.
package guildtest

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest"
	"sdkpp/wire"
)

// Resp is an API answer, read whole.
type Resp struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v.
func (r Resp) JSON(t testing.TB, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(r.Body, v), "decode %s", r.Body)
}

// APIError decodes the body as the platform's error.
func (r Resp) APIError(t testing.TB) wire.APIError {
	t.Helper()
	var e wire.APIError
	r.JSON(t, &e)
	return e
}

var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// CloseIdleConnections closes the idle connections of the client Do uses, such as one it
// dialled for concurrent requests and never used: the service's shutdown waits for those.
func CloseIdleConnections() { noRedirects.CloseIdleConnections() }

// Do sends a request with the header's values, follows no redirect, and checks that the
// answer is not a 5xx (bad input never gets one).
func Do(t testing.TB, method, u string, body io.Reader, header http.Header) Resp {
	t.Helper()
	req, err := http.NewRequest(method, u, body)
	require.NoError(t, err)
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := noRedirects.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	assert.Less(t, res.StatusCode, 500, "%s %s: HTTP %d (never a 5xx): %s", method, u, res.StatusCode, b)
	return Resp{Status: res.StatusCode, Header: res.Header, Body: b}
}

// SendJSON sends v as a JSON body (Do).
func SendJSON(t testing.TB, method, u string, v any, header http.Header) Resp {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	h := http.Header{"Content-Type": {"application/json"}}
	for k, vs := range header {
		h[k] = vs
	}
	return Do(t, method, u, bytes.NewReader(b), h)
}

// Bearer is the header of a user's access token.
func Bearer(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }

// Bot is the header of a bot token.
func Bot(tok string) http.Header { return http.Header{"Authorization": {"Bot " + tok}} }

// Admin is the header of the dev service's admin token.
func Admin(e *servertest.Env) http.Header {
	return http.Header{"Authorization": {"Admin " + e.Creds.AdminToken}}
}

// OK requires a 200 and decodes its body into out (unless nil).
func OK(t testing.TB, r Resp, out any) {
	t.Helper()
	require.Equal(t, http.StatusOK, r.Status, "HTTP %d %s", r.Status, r.Body)
	if out != nil {
		r.JSON(t, out)
	}
}

// ExpectAPIError checks the status and the platform's error code of an answer.
func ExpectAPIError(t testing.TB, what string, r Resp, status, code int) {
	t.Helper()
	assert.Equal(t, status, r.Status, "%s: HTTP %d %s, want %d code %d", what, r.Status, r.Body, status, code)
	assert.Equal(t, code, r.APIError(t).Code, "%s: HTTP %d %s, want %d code %d", what, r.Status, r.Body, status, code)
}

// FormError requires a 400 50035 and returns the code of the error at path ("" for the body).
func FormError(t testing.TB, r Resp, path string) string {
	t.Helper()
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	var body struct {
		Code   int            `json:"code"`
		Errors map[string]any `json:"errors"`
	}
	r.JSON(t, &body)
	require.Equal(t, wire.CodeInvalidFormBody, body.Code, "%s", r.Body)
	node := any(body.Errors)
	if path != "" {
		for _, p := range strings.Split(path, ".") {
			m, isMap := node.(map[string]any)
			require.True(t, isMap, "no %s in %s", path, r.Body)
			node = m[p]
		}
	}
	m, isMap := node.(map[string]any)
	require.True(t, isMap, "no %s in %s", path, r.Body)
	errs, isList := m["_errors"].([]any)
	require.True(t, isList && len(errs) > 0, "no _errors at %s in %s", path, r.Body)
	return errs[0].(map[string]any)["code"].(string)
}

// Part is a part of a multipart/form-data body.
type Part struct{ Name, Filename, ContentType, Body string }

// PayloadPart is the payload_json part of v.
func PayloadPart(v any) Part {
	raw, _ := json.Marshal(v)
	return Part{Name: wire.PayloadJSONPart, ContentType: "application/json", Body: string(raw)}
}

// MultipartBody builds a multipart/form-data body of parts and its content type.
func MultipartBody(t testing.TB, parts ...Part) (io.Reader, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		disp := `form-data; name="` + p.Name + `"`
		if p.Filename != "" {
			disp += `; filename="` + p.Filename + `"`
		}
		h.Set("Content-Disposition", disp)
		if p.ContentType != "" {
			h.Set("Content-Type", p.ContentType)
		}
		pw, err := w.CreatePart(h)
		require.NoError(t, err)
		_, err = io.WriteString(pw, p.Body)
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	return &b, w.FormDataContentType()
}

// SendParts sends a multipart request with the header's values.
func SendParts(t testing.TB, method, u string, h http.Header, parts ...Part) Resp {
	t.Helper()
	body, ct := MultipartBody(t, parts...)
	hh := http.Header{"Content-Type": {ct}}
	for k, v := range h {
		hh[k] = v
	}
	return Do(t, method, u, body, hh)
}

// SetAppFlags sets every flag of the dev service's main application (the dev route).
func SetAppFlags(t testing.TB, e *servertest.Env, flags uint64) {
	t.Helper()
	r := SendJSON(t, http.MethodPut, e.APIURL+"/dev/applications/"+e.App.ID.String()+"/flags",
		map[string]any{"flags": strconv.FormatUint(flags, 10)}, Admin(e))
	require.Equal(t, http.StatusOK, r.Status, "set flags: %s", r.Body)
}

// JSONField is the raw value of a field of a JSON object body.
func JSONField(t testing.TB, body []byte, name string) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(body, &m))
	return m[name]
}

// GetMe is GET /users/@me with the access token: the user on a 200, and the answer.
func GetMe(t testing.TB, e *servertest.Env, access string) (wire.User, Resp) {
	t.Helper()
	r := Do(t, http.MethodGet, e.APIURL+"/users/@me", nil, Bearer(access))
	var u wire.User
	if r.Status == http.StatusOK {
		r.JSON(t, &u)
	}
	return u, r
}
