// Package jsondamage damages JSON documents at random, for tests that hold a decoder to
// encoding/json on what comes off a wire: one to three bytes replaced, removed or inserted, from
// the bytes that matter to JSON's grammar.
package jsondamage

import (
	"bytes"
	"math/rand"
)

// Bytes are the bytes Damage writes: JSON's punctuation, digits, the letters of its literals and
// numbers, a backslash, a control character and a byte that is not UTF-8.
const Bytes = `{}[]":,\ 0123456789.eE-+tfnulx` + "\x01\xff"

// Damage returns a copy of b with one to three bytes replaced, removed or inserted at random;
// b must not be empty.
func Damage(r *rand.Rand, b []byte) []byte {
	b = bytes.Clone(b)
	for k := r.Intn(3) + 1; k > 0 && len(b) > 0; k-- {
		switch i := r.Intn(len(b)); r.Intn(3) {
		case 0:
			b[i] = Bytes[r.Intn(len(Bytes))]
		case 1:
			b = append(b[:i], b[i+1:]...)
		default:
			b = append(b[:i], append([]byte{Bytes[r.Intn(len(Bytes))]}, b[i:]...)...)
		}
	}
	return b
}
