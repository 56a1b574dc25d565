package jsonscan

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzValid: Valid accepts exactly what json.Valid accepts.
func FuzzValid(f *testing.F) {
	for _, in := range append(corpus, `1`, `-0`, `1e5`, `-1.5E-3`, `[]`, `[1,"a",{}]`, `true`, `nul`, `"\ud800"`, `"\u00e9"`, "\"\x7f\"") {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		assert.Equal(t, json.Valid(in), Valid(in), "%q", in)
	})
}

// FuzzValue: from any offset, Value ends a value that json.Valid accepts on its own, and finds
// the end of a valid value that runs to the end of the input.
func FuzzValue(f *testing.F) {
	for _, in := range corpus {
		f.Add([]byte(in), uint16(0))
		f.Add([]byte(in), uint16(len(in)/2))
	}
	f.Fuzz(func(t *testing.T, in []byte, at uint16) {
		i := int(at) % (len(in) + 1)
		end, ok := Value(in, i)
		if ok {
			require.GreaterOrEqual(t, end, i)
			require.LessOrEqual(t, end, len(in))
			assert.True(t, json.Valid(in[i:end]), "Value(%q, %d) ended at %d on %q", in, i, end, in[i:end])
		}
		if rest := in[i:]; len(rest) > 0 && Space(rest, 0) == 0 && json.Valid(rest) {
			require.True(t, ok, "Value refused %q", rest)
			assert.Equal(t, len(in), Space(in, end))
		}
	})
}

// FuzzPlain: for a whole, valid JSON value (Plain's precondition, as Object gives values), what
// Plain gives is what encoding/json decodes, and it takes every string without escapes in valid
// UTF-8.
func FuzzPlain(f *testing.F) {
	for _, in := range []string{`"abc"`, `""`, `"é ü"`, `"a\nb"`, "\"\xff\"", `12`, `"`, `null`, `"a"b"`, "\"\x01\""} {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if !json.Valid(in) || Space(in, 0) != 0 || Space(in, len(in)-1) == len(in) {
			return
		}
		got, ok := Plain(in)
		var want string
		err := json.Unmarshal(in, &want)
		if ok {
			require.NoError(t, err, "Plain took %q", in)
			assert.Equal(t, want, got)
		}
		if err == nil && len(in) >= 2 && in[0] == '"' && !hasByte(in, '\\') && utf8.Valid(in) {
			assert.True(t, ok, "Plain refused the plain string %q", in)
		}
	})
}
