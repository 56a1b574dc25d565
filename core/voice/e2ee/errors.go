package e2ee

import "errors"

// Errors the package wraps; test for them with errors.Is.
var (
	// ErrMalformed reports input of the wrong length or layout: a frame, a key message or public
	// keys that cannot be parsed.
	ErrMalformed = errors.New("malformed input")
	// ErrBadSignature reports a frame or key message whose Ed25519 signature does not verify
	// under the claimed sender's key: tampered with, or forged by someone else.
	ErrBadSignature = errors.New("bad signature")
	// ErrDecrypt reports a ciphertext that does not open (HPKE or AES-GCM authentication failed).
	ErrDecrypt = errors.New("decryption failed")
	// ErrReplay reports a frame whose (generation, counter) has already been opened.
	ErrReplay = errors.New("replayed frame")
	// ErrTooOld reports a frame ReplayWindow or more counters behind the highest one opened.
	ErrTooOld = errors.New("frame older than the replay window")
	// ErrUnknownGeneration reports a frame sealed under a generation whose key has not arrived.
	ErrUnknownGeneration = errors.New("unknown key generation")
	// ErrRetiredGeneration reports a frame sealed under a generation that was replaced and whose
	// grace period has passed, or that was never held.
	ErrRetiredGeneration = errors.New("retired key generation")
	// ErrStaleKey reports a sender key whose generation is not newer than the one held.
	ErrStaleKey = errors.New("stale sender key")
	// ErrUnknownSender reports a frame or key message from someone who is not a participant.
	ErrUnknownSender = errors.New("unknown sender")
	// ErrExhausted reports a sender that cannot seal more frames under its key (counter) or
	// rotate further (generation).
	ErrExhausted = errors.New("counter exhausted")
	// ErrNeedsRotation reports a Seal refused because a participant left and the rotation that
	// must follow failed: frames under the current key could be opened by the leaver. A
	// successful Session.Rotate clears it.
	ErrNeedsRotation = errors.New("sender key must rotate first")
)
