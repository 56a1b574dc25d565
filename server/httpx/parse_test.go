package httpx

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/wire"
)

// fieldCode is the code of the one field error of a 50035, at its path.
func fieldCode(t *testing.T, err error, path ...string) string {
	t.Helper()
	var apiErr *wire.APIError
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, http.StatusBadRequest, apiErr.Status)
	require.Equal(t, wire.CodeInvalidFormBody, apiErr.Code)
	node := apiErr.Errors
	for _, p := range path {
		next, ok := node[p].(map[string]any)
		require.True(t, ok, "no error at %q in %v", p, apiErr.Errors)
		node = next
	}
	errs, ok := node["_errors"].([]wire.FieldError)
	require.True(t, ok, "no _errors in %v", node)
	require.Len(t, errs, 1)
	return errs[0].Code
}

func TestQueryInt(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  int
		code  string
	}{
		{"", 50, ""},
		{"limit=1", 1, ""},
		{"limit=100", 100, ""},
		{"limit=7&limit=x", 7, ""}, // the first value counts
		{"limit=0", 0, "NUMBER_TYPE_MAX"},
		{"limit=101", 0, "NUMBER_TYPE_MAX"},
		{"limit=", 0, "NUMBER_TYPE_COERCE"},
		{"limit=ten", 0, "NUMBER_TYPE_COERCE"},
		{"limit=1e3", 0, "NUMBER_TYPE_COERCE"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			v, err := url.ParseQuery(tc.query)
			require.NoError(t, err)
			n, err := QueryLimit(v, 50, 100)
			if tc.code != "" {
				assert.Equal(t, tc.code, fieldCode(t, err, "limit"))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, n)
		})
	}
	n, err := QueryInt(url.Values{"offset": {"0"}}, "offset", 3, 0, 10)
	require.NoError(t, err)
	assert.Equal(t, 0, n)
}

func TestQueryIDs(t *testing.T) {
	id, err := QueryID(url.Values{}, "after")
	require.NoError(t, err)
	assert.Zero(t, id)
	id, err = QueryID(url.Values{"after": {"42"}}, "after")
	require.NoError(t, err)
	assert.Equal(t, uint64(42), id)
	_, err = QueryID(url.Values{"after": {"-1"}}, "after")
	assert.Equal(t, "NUMBER_TYPE_COERCE", fieldCode(t, err, "after"))

	ids, err := QueryIDs(url.Values{"channel_id": {"1", "2"}}, "channel_id", 2)
	require.NoError(t, err)
	assert.Equal(t, []uint64{1, 2}, ids)
	_, err = QueryIDs(url.Values{"channel_id": {"1", "2", "3"}}, "channel_id", 2)
	assert.Equal(t, "BASE_TYPE_MAX_LENGTH", fieldCode(t, err, "channel_id"))
	_, err = QueryIDs(url.Values{"channel_id": {"x"}}, "channel_id", 2)
	assert.Equal(t, "NUMBER_TYPE_COERCE", fieldCode(t, err, "channel_id"))
}

func TestBodyFields(t *testing.T) {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }

	n, err := IntField("max_age", nil, 86400, 604800)
	require.NoError(t, err)
	assert.Equal(t, 86400, n)
	n, err = IntField("max_age", raw("null"), 5, 10)
	require.NoError(t, err)
	assert.Equal(t, 5, n)
	_, err = IntField("max_age", raw("11"), 5, 10)
	assert.Equal(t, "NUMBER_TYPE_MAX", fieldCode(t, err, "max_age"))
	_, err = IntField("max_age", raw(`"1"`), 5, 10)
	assert.Equal(t, "NUMBER_TYPE_COERCE", fieldCode(t, err, "max_age"))

	b, err := BoolField("temporary", raw("true"))
	require.NoError(t, err)
	assert.True(t, b)
	_, err = BoolField("temporary", raw("1"))
	assert.Equal(t, "BOOLEAN_TYPE_COERCE", fieldCode(t, err, "temporary"))

	ids, err := IDsField("role_ids", raw(`["3","1","3"]`), 5)
	require.NoError(t, err)
	assert.Equal(t, []uint64{3, 1}, ids, "each id once, in order")
	ids, err = IDsField("role_ids", raw(`null`), 5)
	require.NoError(t, err)
	assert.Nil(t, ids)
	_, err = IDsField("role_ids", raw(`["1","x"]`), 5)
	assert.Equal(t, "NUMBER_TYPE_COERCE", fieldCode(t, err, "role_ids", "1"))
	_, err = IDsField("role_ids", raw(`"1"`), 5)
	assert.Equal(t, "LIST_TYPE_CONVERT", fieldCode(t, err, "role_ids"))
	_, err = IDsField("role_ids", raw(`["1","2"]`), 1)
	assert.Equal(t, "BASE_TYPE_MAX_LENGTH", fieldCode(t, err, "role_ids"))

	for _, tc := range []struct {
		raw  string
		v    string
		set  bool
		code string
	}{{"", "", false, ""}, {"null", "", true, ""}, {`"x"`, "x", true, ""}, {"1", "", false, "STRING_TYPE_CONVERT"}} {
		v, set, err := OptionalString("nick", raw(tc.raw))
		if tc.code != "" {
			assert.Equal(t, tc.code, fieldCode(t, err, "nick"))
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tc.v, v, tc.raw)
		assert.Equal(t, tc.set, set, tc.raw)
	}

	at, err := TimeField("scheduled_start_time", raw(`"2026-03-01T10:00:00Z"`), true)
	require.NoError(t, err)
	assert.True(t, at.Equal(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)))
	at, err = TimeField("scheduled_end_time", nil, false)
	require.NoError(t, err)
	assert.True(t, at.IsZero())
	_, err = TimeField("scheduled_start_time", raw("null"), true)
	assert.Equal(t, "BASE_TYPE_REQUIRED", fieldCode(t, err, "scheduled_start_time"))
	_, err = TimeField("scheduled_start_time", raw(`"tomorrow"`), true)
	assert.Equal(t, "DATE_TIME_TYPE_PARSE", fieldCode(t, err, "scheduled_start_time"))
}

func TestEachPart(t *testing.T) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	require.NoError(t, mw.WriteField("a", "12345"))
	require.NoError(t, mw.WriteField("b", "1"))
	require.NoError(t, mw.Close())
	post := func(limit int64) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body.Bytes()))
		r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, limit)
		return r
	}

	var got []string
	var large []bool
	require.NoError(t, EachPart(post(1<<20), mw.Boundary(), func(p *multipart.Part) error {
		b, tooLarge, err := ReadPart(p, 3)
		got, large = append(got, p.FormName()+"="+string(b)), append(large, tooLarge)
		return err
	}))
	assert.Equal(t, []string{"a=1234", "b=1"}, got, "a part over the limit is read one byte past it")
	assert.Equal(t, []bool{true, false}, large)

	err := EachPart(post(10), mw.Boundary(), func(p *multipart.Part) error { _, _, err := ReadPart(p, 100); return err })
	var apiErr *wire.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusRequestEntityTooLarge, apiErr.Status)

	err = EachPart(httptest.NewRequest(http.MethodPost, "/", strings.NewReader("not multipart")), "b", func(*multipart.Part) error { return nil })
	assert.Equal(t, "MULTIPART_INVALID", fieldCode(t, err))
	err = EachPart(post(1<<20), "", func(*multipart.Part) error { return nil })
	assert.Equal(t, "MULTIPART_INVALID", fieldCode(t, err))
}
