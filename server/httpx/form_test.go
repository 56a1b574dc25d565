package httpx

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Form reads a body as url.ParseQuery does: the same values, and no form where ParseQuery
// reports an error.
func TestFormParsesAsParseQuery(t *testing.T) {
	for _, body := range []string{
		"",
		"grant_type=client_credentials&client_id=123&client_secret=abc_-XYZ&scope=identify",
		"a=1&a=2&b=&c",
		"&&a=1&&",
		"k%20ey=v%2Bal+ue&%3D=%26",
		"x=%zz",    // a bad escape in a value
		"%zz=1",    // in a key
		"a=1;b=2",  // a semicolon separator
		"a=1&b=2;", // one at the end
		"=v&=w",
		"a==b",
		strings.Repeat("a=1&", 10000) + "a=1", // over url.ParseQuery's bound on fields
	} {
		want, wantErr := url.ParseQuery(body)
		r := httptest.NewRequest("POST", "/oauth2/token", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		got, ok := Form(r)
		if wantErr != nil {
			assert.False(t, ok, "%q: ParseQuery fails (%v), Form took it", body, wantErr)
			continue
		}
		require.True(t, ok, "%q", body)
		assert.Equal(t, want, got, "%q", body)
	}
}

func TestFormContentTypes(t *testing.T) {
	for ct, ok := range map[string]bool{
		"application/x-www-form-urlencoded":                true,
		"application/x-www-form-urlencoded; charset=utf-8": true,
		"Application/X-WWW-Form-Urlencoded":                true,
		"application/json":                                 false,
		"":                                                 false,
		"application/x-www-form-urlencoded; =":             false,
	} {
		r := httptest.NewRequest("POST", "/oauth2/token", strings.NewReader("a=1"))
		r.Header.Set("Content-Type", ct)
		assert.Equal(t, ok, IsForm(r), "%q", ct)
		form, got := Form(r)
		assert.Equal(t, ok, got, "%q", ct)
		if ok {
			assert.Equal(t, url.Values{"a": {"1"}}, form)
		}
	}
}

// A field given again appends to its own slice: the next field's value is not overwritten.
func TestFormRepeatedFieldsKeepTheirValues(t *testing.T) {
	r := httptest.NewRequest("POST", "/", strings.NewReader("a=1&b=2&a=3&c=4"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	form, ok := Form(r)
	require.True(t, ok)
	form["b"] = append(form["b"], "x")
	assert.Equal(t, url.Values{"a": {"1", "3"}, "b": {"2", "x"}, "c": {"4"}}, form)
}

// A body longer than MaxBody is refused, whether its length is declared or not.
func TestFormBodyBound(t *testing.T) {
	big := "a=" + strings.Repeat("x", MaxBody)
	for _, declared := range []bool{true, false} {
		r := httptest.NewRequest("POST", "/", strings.NewReader(big))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if !declared {
			r.ContentLength = -1
		}
		_, ok := Form(r)
		assert.False(t, ok, "declared %v", declared)
	}
}

func BenchmarkForm(b *testing.B) {
	body := "grant_type=client_credentials&client_id=1234567890123456789&client_secret=" +
		strings.Repeat("s", 32) + "&scope=identify"
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest("POST", "/oauth2/token", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if _, ok := Form(r); !ok {
			b.Fatal("no form")
		}
	}
}
