package e2ee

import (
	"crypto/ed25519"
	"testing"
)

// The benchmarks seal and open an 80-byte frame (a 20 ms Opus frame at 32 kbps) with an 8-byte
// header, and compare with bare AES-128-GCM sealing the same bytes.

func BenchmarkSeal(b *testing.B) {
	_, s, _ := pair(b, newKey(b, 1, 1))
	payload, dst := opusFrame(0), make([]byte, 0, 256)
	b.ReportAllocs()
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		if _, err := s.Seal(dst[:0], testHeader, payload); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpen(b *testing.B) {
	_, s, o := pair(b, newKey(b, 1, 1))
	payload := opusFrame(0)
	frames := make([][]byte, b.N)
	for i := range frames {
		frames[i] = seal(b, s, testHeader, payload)
	}
	dst := make([]byte, 0, 256)
	b.ReportAllocs()
	b.SetBytes(int64(len(payload)))
	b.ResetTimer()
	for i := range b.N {
		if _, err := o.Open(dst[:0], testHeader, frames[i], 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAESGCMSeal is the floor: AES-128-GCM alone on the same bytes.
func BenchmarkAESGCMSeal(b *testing.B) {
	key := newKey(b, 1, 1)
	aead, err := newGCM(&key.Secret)
	if err != nil {
		b.Fatal(err)
	}
	payload, aad, nonce := opusFrame(0), append(make([]byte, 12), testHeader...), make([]byte, 12)
	dst := make([]byte, 0, 256)
	b.ReportAllocs()
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		aead.Seal(dst[:0], nonce, payload, aad)
	}
}

// BenchmarkEd25519Sign and BenchmarkEd25519Verify show where the time of Seal and Open goes.
func BenchmarkEd25519Sign(b *testing.B) {
	id := newIdentity(b, 1)
	msg := make([]byte, 200)
	b.ReportAllocs()
	for b.Loop() {
		ed25519.Sign(id.sig, msg)
	}
}

func BenchmarkEd25519Verify(b *testing.B) {
	id := newIdentity(b, 1)
	msg := make([]byte, 200)
	sig := ed25519.Sign(id.sig, msg)
	b.ReportAllocs()
	for b.Loop() {
		if !ed25519.Verify(id.public.signer(), msg, sig) {
			b.Fatal("verify")
		}
	}
}

// BenchmarkSealKeyFor and BenchmarkOpenKey cost one key message (per recipient per rotation).
func BenchmarkSealKeyFor(b *testing.B) {
	alice, bob := newIdentity(b, 1), newIdentity(b, 2)
	key := newKey(b, 3, 1)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := alice.SealKeyFor(bob.Public(), key); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpenKey(b *testing.B) {
	alice, bob := newIdentity(b, 1), newIdentity(b, 2)
	msg, err := alice.SealKeyFor(bob.Public(), newKey(b, 3, 1))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := bob.OpenKey(alice.Public(), msg); err != nil {
			b.Fatal(err)
		}
	}
}
