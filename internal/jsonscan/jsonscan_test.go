package jsonscan

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var corpus = []string{
	`{}`, ` { } `, `{"a":1}`, `{"a":1,"b":"x","c":[1,2,{"d":null}],"e":{"f":true},"g":false}`,
	`{"a":1,"a":2}`, `{"a" : -0.5e+10 , "b":"\u00e9\n"}`, `{"a":"é"}`, "{\"a\":\"\xff\"}",
	`{"k\u0065y":1}`, "{\"\xff\":1}", `{"a":1,}`, `{"a" 1}`, `{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":tru}`,
	`{"a":"x}`, `{"a":"\x"}`, `{"a":"\u12"}`, "{\"a\":\"\x01\"}", `[1]`, `"s"`, `null`, ``, `{`,
	`{"a":1} x`, `{"a":1}{}`, `{"a":[1,2}`, `{"a":{"b":1]}`, `{1:2}`, `{"a":1 "b":2}`,
	`{"a":` + strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1) + `}`,
	`{"a":` + strings.Repeat("[", maxDepth-1) + strings.Repeat("]", maxDepth-1) + `}`,
	// A member as deep as encoding/json allows on its own is one level too deep in an object.
	`{"a":` + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + `}`,
	strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth),
	strings.Repeat(`{"a":`, maxDepth) + `1` + strings.Repeat("}", maxDepth),
	strings.Repeat(`{"a":`, maxDepth+1) + `1` + strings.Repeat("}", maxDepth+1),
	strings.Repeat(`[{"a":[],"b":{}},`, 70) + `1` + strings.Repeat("]", 70),
}

// Object agrees with encoding/json: what it walks is a valid object whose members (the last of
// each key, as encoding/json keeps) are the ones encoding/json decodes; what it refuses is
// invalid or has an escaped key.
func TestObjectAgreesWithEncodingJSON(t *testing.T) {
	for _, in := range corpus {
		agreeObject(t, []byte(in))
	}
}

func FuzzObject(f *testing.F) {
	for _, in := range corpus {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) { agreeObject(t, in) })
}

func agreeObject(t *testing.T, in []byte) {
	t.Helper()
	got := map[string]json.RawMessage{}
	var order []string
	ok := Object(in, func(k, v []byte) bool {
		got[string(k)] = json.RawMessage(v)
		order = append(order, string(k))
		return true
	})
	var want map[string]json.RawMessage
	err := json.Unmarshal(in, &want)
	isObject := bytes.HasPrefix(bytes.TrimLeft(in, " \t\r\n"), []byte("{"))
	if !ok {
		if err == nil && isObject && !bytes.Contains(in, []byte(`\`)) && utf8.Valid(in) {
			require.Failf(t, "Object refused a valid object", "%q", in)
		}
		return
	}
	require.NoError(t, err, "Object walked %q, which encoding/json refuses", in)
	require.NotNil(t, want, "Object walked %q, which encoding/json refuses", in)
	require.Len(t, got, len(want), "%q: members %v, encoding/json %v", in, got, want)
	for k, v := range want {
		require.Equal(t, v, got[k], "%q: member %q", in, k)
	}
}

// A member fn refuses stops the walk.
func TestObjectStopsWhenRefused(t *testing.T) {
	n := 0
	require.False(t, Object([]byte(`{"a":1,"b":2,"c":3}`), func(k, _ []byte) bool { n++; return string(k) != "b" }), "walk went on after a refusal: %d members", n)
	require.Equal(t, 2, n, "walk went on after a refusal: %d members", n)
}

// Plain gives exactly what encoding/json decodes, for strings without escapes in valid UTF-8,
// and nothing else.
func TestPlain(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		ok   bool
	}{
		{`"abc"`, "abc", true}, {`""`, "", true}, {`"é ü"`, "é ü", true},
		{`"a\nb"`, "", false}, {"\"\xff\"", "", false}, {`12`, "", false}, {`"`, "", false}, {`null`, "", false},
	} {
		got, ok := Plain([]byte(tc.in))
		assert.Equal(t, tc.ok, ok, "Plain(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		assert.Equal(t, tc.want, got, "Plain(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		if ok {
			var s string
			assert.NoError(t, json.Unmarshal([]byte(tc.in), &s), "encoding/json reads %q", tc.in)
			assert.Equal(t, got, s, "encoding/json reads %q", tc.in)
		}
	}
}

// Valid (Value over the whole input) accepts what json.Valid accepts, and nothing else.
func TestValueAgreesWithValid(t *testing.T) {
	for _, in := range append(corpus, `1`, `-0`, `1e5`, `[]`, `[1,"a",{}]`, `true`, `nul`, `"\ud800"`) {
		b := []byte(in)
		assert.Equal(t, json.Valid(b), Valid(b), "Valid(%q) = %v, json.Valid %v", in, Valid(b), json.Valid(b))
	}
}

// special marks exactly the first byte of a word that ends, escapes or invalidates a string,
// whatever follows it, and nothing in plain text (including bytes of 0x80 and above).
func TestSpecial(t *testing.T) {
	first := func(w []byte) int {
		m := special(binary.LittleEndian.Uint64(w))
		if m == 0 {
			return -1
		}
		return bits.TrailingZeros64(m) >> 3
	}
	require.Equal(t, -1, first([]byte("abcdefgh")), "plain text reported")
	require.Equal(t, -1, first([]byte("\xff\x80 ~!#[]")), "plain text reported")
	for _, c := range []byte{'"', '\\', 0x00, 0x01, 0x1f} {
		for pos := range 8 {
			for _, after := range []byte{'a', 0x00, 0x01, 0x20, 0x21, '"', '\\', 0x80, 0xff} {
				w := []byte("\xff\x80 ~!#[]")
				for j := pos + 1; j < 8; j++ {
					w[j] = after
				}
				w[pos] = c
				require.Equal(t, pos, first(w), "byte %#x at %d, then %#x", c, pos, after)
			}
		}
	}
	for c := 0; c < 256; c++ {
		for _, at := range []int{0, 7} {
			w := []byte("aaaaaaaa")
			w[at] = byte(c)
			want := -1
			if c == '"' || c == '\\' || c < 0x20 {
				want = at
			}
			require.Equal(t, want, first(w), "byte %#x at %d", c, at)
		}
	}
}

func BenchmarkString(b *testing.B) {
	s := []byte(`"` + strings.Repeat("latency gateway 12 ", 30) + `"`)
	for b.Loop() {
		// A plain check: testify's helpers would cost more than the code measured.
		if end, ok := String(s, 0); !ok || end != len(s) {
			b.Fatal()
		}
	}
}

// The word-at-a-time scans agree with encoding/json whichever byte of a word holds what ends or
// escapes a string, a control byte, a byte that is not UTF-8, or U+2028/U+2029 (valid in JSON
// text, which encoding/json escapes only when it writes): in keys and values, as Valid, Object
// and Plain read them, with every alignment of the string in the input.
func TestWordEdges(t *testing.T) {
	inserts := []string{`"`, `\`, `\"`, `\\`, `\n`, `\u00e9`, `\u12`, `\x`, "\x00", "\x01", "\x1f", "\x7f", " ",
		"\xff", "\x80", "\xc3", "\xc3\xa9", "\xe2\x80\xa8", "\xe2\x80\xa9", "\xe2\x80", "\xf0\x9f\x98\x80", "\xed\xa0\x80"}
	for _, ins := range inserts {
		for pad := range 9 { // the string's start against the words of the input
			for pos := range 17 { // where in the string's text the insert is
				text := strings.Repeat("a", pos) + ins + strings.Repeat("b", 16-pos)
				for _, in := range []string{
					strings.Repeat(" ", pad) + `"` + text + `"`,
					strings.Repeat(" ", pad) + `{"` + text + `":1}`,
					strings.Repeat(" ", pad) + `{"k":"` + text + `","l":["` + text + `"]}`,
					`"` + text, // the string's end missing, near the input's end
				} {
					b := []byte(in)
					require.Equal(t, json.Valid(b), Valid(b), "Valid(%q)", in)
					agreeObject(t, b)
					if v := bytes.TrimLeft(b, " "); json.Valid(v) && v[0] == '"' {
						got, ok := Plain(v)
						var want string
						require.NoError(t, json.Unmarshal(v, &want))
						plain := !bytes.Contains(v, []byte(`\`)) && utf8.Valid(v)
						require.Equal(t, plain, ok, "Plain(%q)", v)
						if ok {
							require.Equal(t, want, got, "Plain(%q)", v)
						}
					}
				}
			}
		}
	}
}

// isASCII finds a backslash or a byte of 0x80 and above at each position of a word and after it.
func TestIsASCII(t *testing.T) {
	for n := range 20 {
		require.True(t, isASCII([]byte(strings.Repeat("a", n))), "length %d", n)
		for pos := range n {
			for _, c := range []byte{'\\', 0x80, 0xff, 0xc3} {
				s := []byte(strings.Repeat("a", n))
				s[pos] = c
				require.False(t, isASCII(s), "%q", s)
			}
			s := []byte(strings.Repeat("a", n))
			s[pos] = 0x7f
			require.True(t, isASCII(s), "%q", s)
		}
	}
}
