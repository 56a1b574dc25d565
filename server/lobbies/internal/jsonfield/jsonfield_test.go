package jsonfield

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An object's fields are what encoding/json reads into a map: the last of a repeated key, an
// escaped key by what it spells; absent ones are absent.
func TestObjectReadsAsAMap(t *testing.T) {
	for _, body := range []string{
		`{"a":1,"b":"x","a":2}`,
		`{"\u0061":1,"b":{"c":[1,2]}}`,
		`{"a":1,"\u0061":3}`,
		` { "a" : null , "b" : true } `,
		`{}`,
	} {
		t.Run(body, func(t *testing.T) {
			var want map[string]json.RawMessage
			require.NoError(t, json.Unmarshal([]byte(body), &want))
			f, err := Object(json.RawMessage(body), "")
			require.NoError(t, err)
			for _, name := range []string{"a", "b", "c"} {
				raw, ok := f.Raw(name)
				wantRaw, wantOK := want[name]
				assert.Equal(t, wantOK, ok, name)
				assert.JSONEq(t, orNull(wantRaw), orNull(raw), name)
			}
		})
	}
	_, err := Object(json.RawMessage(`[1]`), "x")
	require.Error(t, err)
}

func orNull(raw json.RawMessage) string {
	if raw == nil {
		return "null"
	}
	return string(raw)
}

// Int reads what json.Number's Int64 reads, and only numbers.
func TestIntAsJSONNumber(t *testing.T) {
	for _, raw := range []string{"0", "-0", "7", "-12", "123456789012345678", "1234567890123456789",
		"9223372036854775807", "-9223372036854775808", "9223372036854775808", "1.5", "1e3", "0e1", `"12"`, "true"} {
		t.Run(raw, func(t *testing.T) {
			var n json.Number
			wantErr := json.Unmarshal([]byte(raw), &n)
			want, numErr := n.Int64()
			got, err := Int(json.RawMessage(raw), "f")
			if wantErr != nil || numErr != nil || raw[0] == '"' {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
}

// A usual object is read with its members on the caller's stack, its keys never strings.
func TestObjectInAllocatesNothing(t *testing.T) {
	body := json.RawMessage(`{"content":"hello","nonce":"42","enforce_nonce":true,"flags":4096}`)
	allocs := testing.AllocsPerRun(100, func() {
		var buf [8]Member
		f, err := ObjectIn(body, "", buf[:])
		if err != nil {
			t.Fatal(err)
		}
		if n, err := Int(must(f.Raw("flags"))); err != nil || n != 4096 {
			t.Fatal(n, err)
		}
	})
	assert.Zero(t, allocs)
}

func must(raw json.RawMessage, ok bool) (json.RawMessage, string) {
	if !ok {
		panic("absent")
	}
	return raw, "f"
}
