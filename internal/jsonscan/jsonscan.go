// Package jsonscan reads JSON in one pass without decoding it: it finds where values end,
// checking that they are valid, and walks the members of an object. It serves hot paths that
// encoding/json would scan two or three times (once to validate, once to decode, once more for a
// json.RawMessage inside). Whatever it does not handle exactly as encoding/json would (an
// escaped key, an invalid document) it reports as not handled, and the caller falls back to
// encoding/json, so results and errors stay encoding/json's.
package jsonscan

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// maxDepth is encoding/json's nesting limit; deeper values are reported invalid, as
// encoding/json rejects them.
const maxDepth = 10000

// Object calls fn with the key and the raw value of each member of the JSON object that is the
// whole of b (white space around it allowed), in order, and reports whether b is such an object
// and fn returned true for every member. Keys are given only when they contain no escape (a key
// with one, or with bytes that are not UTF-8, makes Object return false): such a key is its own
// bytes. Duplicate keys are all given. Values are sub-slices of b, each valid JSON.
func Object(b []byte, fn func(key, value []byte) bool) bool {
	i := Space(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = Space(b, i+1)
	if i < len(b) && b[i] == '}' {
		return Space(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return false
		}
		end, ok := String(b, i)
		if !ok {
			return false
		}
		key := b[i+1 : end-1]
		if !isASCII(key) && (hasByte(key, '\\') || !utf8.Valid(key)) {
			return false
		}
		i = Space(b, end)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = Space(b, i+1)
		start := i
		// The members are one level down: nested as deep as encoding/json allows in all.
		if end, ok = value(b, i, 1); !ok || !fn(key, b[start:end]) {
			return false
		}
		i = Space(b, end)
		if i >= len(b) {
			return false
		}
		if b[i] == '}' {
			return Space(b, i+1) == len(b)
		}
		if b[i] != ',' {
			return false
		}
		i = Space(b, i+1)
	}
}

// Valid reports whether b is one valid JSON value (white space around it allowed), as json.Valid
// does, in one faster pass.
func Valid(b []byte) bool {
	end, ok := Value(b, Space(b, 0))
	return ok && Space(b, end) == len(b)
}

// Plain returns the text of the JSON string v (a whole, valid string value, as Object gives)
// when it has no escapes and is valid UTF-8: then it is exactly what encoding/json decodes.
func Plain(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	s := v[1 : len(v)-1]
	if !isASCII(s) && (hasByte(s, '\\') || !utf8.Valid(s)) {
		return "", false
	}
	return string(s), true
}

// isASCII reports whether s is all ASCII without a backslash, eight bytes at a time: the usual
// text of a key or a value, which then needs no other look.
func isASCII(s []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := binary.LittleEndian.Uint64(s[i:])
		backslash := x ^ (ones * '\\')
		if (x|(backslash-ones)&^backslash)&highs != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf || s[i] == '\\' {
			return false
		}
	}
	return true
}

func hasByte(b []byte, c byte) bool { return bytes.IndexByte(b, c) >= 0 }

// Space skips JSON white space from i.
func Space(b []byte, i int) int {
	// One comparison for the usual byte, which is not white space.
	for i < len(b) && b[i] <= ' ' && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// Value returns the end of the JSON value at b[i], and false when it is not valid JSON (or nests
// deeper than encoding/json allows).
func Value(b []byte, i int) (int, bool) { return value(b, i, 0) }

// value is Value for a value nested depth levels down.
func value(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		return String(b, i)
	case '{', '[':
		return skipComposite(b, i, depth)
	}
	return scalar(b, i)
}

// scalar returns the end of the number or literal at b[i] (which exists).
func scalar(b []byte, i int) (int, bool) {
	switch c := b[i]; {
	case c == '-' || c-'0' <= 9:
		return skipNumber(b, i)
	case c == 't':
		return skipLiteral(b, i, "true")
	case c == 'f':
		return skipLiteral(b, i, "false")
	case c == 'n':
		return skipLiteral(b, i, "null")
	}
	return 0, false
}

func skipLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// skipComposite skips the object or array at b[i], nested depth levels down, in one loop: the
// composites open inside it are kept as bits (1 for an object), not as calls.
func skipComposite(b []byte, i, depth int) (int, bool) {
	var kinds bitStack
	level := 0      // composites open, from b[i]'s on
	object := false // whether the innermost open one is an object
	var ok bool
	for {
		// b[i] starts a member of the innermost open composite (level > 0), or is the first one.
		if object && level > 0 { // the member's key, its colon and the white space after them
			if i >= len(b) || b[i] != '"' {
				return 0, false
			}
			if i, ok = String(b, i); !ok {
				return 0, false
			}
			if i = Space(b, i); i >= len(b) || b[i] != ':' {
				return 0, false
			}
			i = Space(b, i+1)
		}
		if i >= len(b) {
			return 0, false
		}
		switch c := b[i]; c {
		case '{', '[':
			if depth+level >= maxDepth {
				return 0, false
			}
			j := Space(b, i+1)
			if j < len(b) && b[j] == c+2 { // empty ('}' is '{'+2, ']' is '['+2): a value as any other
				i, ok = j+1, true
				break
			}
			object = c == '{'
			kinds.set(level, object)
			level++
			i = j
			continue
		case '"':
			i, ok = String(b, i)
		default:
			i, ok = scalar(b, i)
		}
		if !ok {
			return 0, false
		}
		// After a value: the separators and closers that follow it.
		for {
			if level == 0 { // the value was b[i]'s own, empty composite
				return i, true
			}
			if i = Space(b, i); i >= len(b) {
				return 0, false
			}
			if b[i] == ',' {
				i = Space(b, i+1)
				break
			}
			closer := byte(']')
			if object {
				closer = '}'
			}
			if b[i] != closer {
				return 0, false
			}
			i++
			if level--; level > 0 {
				object = kinds.get(level - 1)
			}
		}
	}
}

// bitStack is a stack of bits indexed by level: the first 64 in a word, the rest (as deep as
// encoding/json nests) allocated only for values that go that deep.
type bitStack struct {
	low  uint64
	deep []uint64
}

func (s *bitStack) set(level int, bit bool) {
	w, m := &s.low, uint64(1)<<(level&63)
	if level >= 64 {
		k := level>>6 - 1
		for len(s.deep) <= k {
			s.deep = append(s.deep, 0)
		}
		w = &s.deep[k]
	}
	if bit {
		*w |= m
	} else {
		*w &^= m
	}
}

func (s *bitStack) get(level int) bool {
	w := s.low
	if level >= 64 {
		w = s.deep[level>>6-1]
	}
	return w&(uint64(1)<<(level&63)) != 0
}

// String returns the end of the JSON string at b[i] (which is '"'), and false when it is not a
// valid one. Its bytes are not checked to be UTF-8, as encoding/json does not check them.
func String(b []byte, i int) (int, bool) {
	i++
	for {
		// Eight bytes at a time, jumping to the first that ends or escapes the string: a message's
		// text is mostly bytes that need no look.
		if i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i : i+8])
			m := special(x)
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
		} else { // the last few bytes
			for i < len(b) && !isSpecial(b[i]) {
				i++
			}
			if i >= len(b) {
				return 0, false
			}
		}
		switch b[i] {
		case '"':
			return i + 1, true
		case '\\':
			if i+1 >= len(b) {
				return 0, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if len(b)-i < 6 || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return 0, false
				}
				i += 6
			default:
				return 0, false
			}
		default: // a control character
			return 0, false
		}
	}
}

// isSpecial reports whether c ends or escapes a string, or is a control character.
func isSpecial(c byte) bool { return c == '"' || c == '\\' || c < 0x20 }

// special finds the bytes of the eight in x (in memory order) that end or escape a string, or are
// control characters: '"', '\\' or below 0x20. Its lowest set bit is the high bit of the first
// such byte, exactly, and it is zero when there is none; bits above the first may be set
// spuriously. (The classic bit tricks for a zero byte and for a byte less than n <= 128: a borrow
// only runs upwards, from the first byte that matched.)
func special(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote, backslash := x^(ones*'"'), x^(ones*'\\')
	return ((x-ones*0x20)&^x | (quote-ones)&^quote | (backslash-ones)&^backslash) & highs
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// skipNumber skips the number at b[i]: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func skipNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}
