package e2ee

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
)

const labelCode = "sdkpp-e2ee-v1 verification code\x00"

// Shape of a verification code: CodeGroups groups of CodeDigits decimal digits.
const (
	CodeGroups = 6
	CodeDigits = 5
)

// VerificationCode returns the code every client of call callID shows for the given participants,
// as six groups of five digits separated by spaces, for example "03817 55120 90412 …". Clients
// that see the same participants with the same public keys show the same code; if the service
// substituted anyone's keys, or the clients disagree about who is in the call, the codes differ
// (with probability 1-10^-30 for a given substitution). Players compare it out of band.
//
// Derivation: the participants' encoded PublicKeys are sorted bytewise (so the order of the list
// does not matter; duplicates are kept) and hashed as
//
//	d = SHA-256("sdkpp-e2ee-v1 verification code\x00" || len(callID) as 2 bytes || callID ||
//	            n as 4 bytes || pk_1 || … || pk_n)
//
// with big-endian lengths; group i (0 to 5) is the big-endian integer of bytes 5i to 5i+4 of d
// modulo 100000, written with five digits. (2^40 mod 100000 makes the digits uniform to within
// 10^-7.) The call id is at most 1024 bytes; longer ids are cut to that length.
func VerificationCode(callID []byte, participants []PublicKeys) string {
	enc := make([][]byte, len(participants))
	for i, pk := range participants {
		enc[i] = pk.Bytes()
	}
	slices.SortFunc(enc, bytes.Compare)
	if len(callID) > maxCallID {
		callID = callID[:maxCallID]
	}
	h := sha256.New()
	h.Write(appendCallContext(nil, labelCode, callID))
	h.Write(binary.BigEndian.AppendUint32(nil, uint32(len(enc))))
	for _, e := range enc {
		h.Write(e)
	}
	d := h.Sum(nil)
	var b strings.Builder
	for i := range CodeGroups {
		var v [8]byte
		copy(v[3:], d[5*i:5*i+5])
		group := strconv.FormatUint(binary.BigEndian.Uint64(v[:])%100000, 10)
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strings.Repeat("0", CodeDigits-len(group)))
		b.WriteString(group)
	}
	return b.String()
}
