package payload

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestShapes(t *testing.T) {
	for _, tt := range []struct {
		raw                   string
		object, array, isNull bool
	}{
		{"", false, false, true},
		{"null", false, false, true},
		{" \n null \t", false, false, true},
		{`{}`, true, false, false},
		{" \r\n\t{\"a\":1}", true, false, false},
		{`[1]`, false, true, false},
		{"\n [ ]", false, true, false},
		{`"{"`, false, false, false},
		{`1`, false, false, false},
		{"nul", false, false, false},
		{" ", false, false, true},
	} {
		assert.Equal(t, tt.object, IsObject([]byte(tt.raw)), "IsObject(%q)", tt.raw)
		assert.Equal(t, tt.array, IsArray([]byte(tt.raw)), "IsArray(%q)", tt.raw)
		assert.Equal(t, tt.isNull, IsNull([]byte(tt.raw)), "IsNull(%q)", tt.raw)
	}
}

func TestDecodeObject(t *testing.T) {
	var v struct{ A int }
	assert.True(t, DecodeObject([]byte(` {"A":2}`), &v))
	assert.Equal(t, 2, v.A)
	for _, raw := range []string{`null`, `[{"A":3}]`, `{"A":"x"}`, `{"A":`, ``} {
		assert.False(t, DecodeObject([]byte(raw), &v), raw)
	}
}

func TestNullIfAbsent(t *testing.T) {
	assert.Equal(t, "null", string(NullIfAbsent(nil)))
	assert.Equal(t, `7`, string(NullIfAbsent(json.RawMessage(`7`))))
}

func TestSnowflakes(t *testing.T) {
	for _, tt := range []struct {
		raw  string
		want []uint64
		ok   bool
	}{
		{"", nil, true},
		{"null", nil, true},
		{`"12"`, []uint64{12}, true},
		{`12`, []uint64{12}, true},
		{`["1","2"]`, []uint64{1, 2}, true},
		{`[]`, []uint64{}, true},
		{`"x"`, nil, false},
		{`["1","x"]`, nil, false},
		{`{"id":"1"}`, nil, false},
		{`"9223372036854775808"`, nil, false}, // above the largest snowflake
	} {
		got, ok := Snowflakes(json.RawMessage(tt.raw))
		assert.Equal(t, tt.ok, ok, tt.raw)
		assert.Equal(t, tt.want, got, tt.raw)
	}
}

// AddFields adds the fields an object lacks and keeps those it has; it refuses what is not an
// object and a field that does not encode.
func TestAddFields(t *testing.T) {
	got, err := AddFields([]byte(`{"v":10,"user":{"id":"1"}}`), map[string]any{"v": 9, "relationships": []int{}, "note": "a"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"v":10,"user":{"id":"1"},"relationships":[],"note":"a"}`, string(got))

	_, err = AddFields([]byte(`[1]`), map[string]any{"a": 1})
	assert.Error(t, err, "not an object")
	_, err = AddFields([]byte(`{}`), map[string]any{"a": make(chan int)})
	assert.Error(t, err, "a field that does not encode")
}
