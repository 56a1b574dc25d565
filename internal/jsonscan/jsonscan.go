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
		if hasByte(key, '\\') || !utf8.Valid(key) {
			return false
		}
		i = Space(b, end)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = Space(b, i+1)
		start := i
		if end, ok = Value(b, i); !ok || !fn(key, b[start:end]) {
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
	if hasByte(s, '\\') || !utf8.Valid(s) {
		return "", false
	}
	return string(s), true
}

func hasByte(b []byte, c byte) bool { return bytes.IndexByte(b, c) >= 0 }

// Space skips JSON white space from i.
func Space(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// Value returns the end of the JSON value at b[i], and false when it is not valid JSON (or nests
// deeper than encoding/json allows).
func Value(b []byte, i int) (int, bool) { return value(b, i, 0) }

func value(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch c := b[i]; {
	case c == '"':
		return String(b, i)
	case c == '{' || c == '[':
		if depth >= maxDepth {
			return 0, false
		}
		return skipComposite(b, i, depth+1)
	case c == '-' || (c >= '0' && c <= '9'):
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

// skipComposite skips the object or array at b[i].
func skipComposite(b []byte, i, depth int) (int, bool) {
	object := b[i] == '{'
	closer := byte(']')
	if object {
		closer = '}'
	}
	i = Space(b, i+1)
	if i < len(b) && b[i] == closer {
		return i + 1, true
	}
	for {
		var ok bool
		if object {
			if i >= len(b) || b[i] != '"' {
				return 0, false
			}
			if i, ok = String(b, i); !ok {
				return 0, false
			}
			i = Space(b, i)
			if i >= len(b) || b[i] != ':' {
				return 0, false
			}
			i = Space(b, i+1)
		}
		if i, ok = value(b, i, depth); !ok {
			return 0, false
		}
		i = Space(b, i)
		if i >= len(b) {
			return 0, false
		}
		if b[i] == closer {
			return i + 1, true
		}
		if b[i] != ',' {
			return 0, false
		}
		i = Space(b, i+1)
	}
}

// String returns the end of the JSON string at b[i] (which is '"'), and false when it is not a
// valid one. Its bytes are not checked to be UTF-8, as encoding/json does not check them.
func String(b []byte, i int) (int, bool) {
	for i++; ; i++ {
		// Eight bytes at a time, jumping to the first that ends or escapes the string: a message's
		// text is mostly bytes that need no look.
		for i+8 <= len(b) {
			if m := special(binary.LittleEndian.Uint64(b[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		for i < len(b) && !isSpecial(b[i]) { // the last few bytes
			i++
		}
		if i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case '"':
			return i + 1, true
		case '\\':
			i++
			if i >= len(b) {
				return 0, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(b)-i < 5 {
					return 0, false
				}
				for _, h := range b[i+1 : i+5] {
					if !isHex(h) {
						return 0, false
					}
				}
				i += 4
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
