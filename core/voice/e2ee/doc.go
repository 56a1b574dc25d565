// Package e2ee is the end-to-end encryption of voice calls: per-call identities, sender keys
// wrapped pairwise with HPKE, frames sealed with AES-128-GCM and signed with Ed25519, key rotation
// on every membership change, and the call's verification code.
//
// It uses the Go standard library only and knows nothing of the wire formats around it: it takes
// and returns opaque byte slices (the caller's unencrypted header, the payload, key messages). The
// call layer carries key messages through signaling and frames through the relay.
//
// This comment states the protocol completely; the code follows it, and TestVerificationCodeKnownAnswer
// recomputes the verification code from this text.
//
// # Parties and threat model
//
// Participants are the clients in a call. The service (signaling) and the relay forward what the
// participants send; they are trusted to route, not to read or to write: they must learn no media
// key and no payload, and must not be able to make a participant accept a frame or key that the
// claimed sender did not make. Participants are trusted to hear each other, not to speak for each
// other: a participant who holds a sender's media key must still not be able to forge that
// sender's frames. The service publishes each participant's public keys; if it substitutes its
// own, the participants' verification codes differ. Dropping, delaying and reordering packets are
// not prevented (they are the network's behaviour anyway); replays are refused.
//
// # Encoding conventions
//
// Integers are big endian: u16, u32, u64 are 2, 4 and 8 bytes. || is concatenation. The call id
// is the opaque bytes (1 to 1024) that signaling names the call with; every participant uses the
// same. A context is
//
//	ctx(label, callID, pk_1, …, pk_n) = label || u16(len(callID)) || callID || enc(pk_1) || … || enc(pk_n)
//
// where the labels are the ASCII strings below, each ending in a zero byte, so that no signed
// message or HPKE info made for one purpose is valid for another:
//
//	"sdkpp-e2ee-v1 sender key\x00"        HPKE info of key messages
//	"sdkpp-e2ee-v1 key message\x00"       signatures of key messages
//	"sdkpp-e2ee-v1 frame\x00"             signatures of frames
//	"sdkpp-e2ee-v1 verification code\x00" the verification code
//
// # Identities
//
// For each call each participant makes a fresh Identity from 64 random bytes: the first 32 are
// an X25519 private key (RFC 7748; HPKE recipient key), the last 32 an Ed25519 seed (RFC 8032;
// signing key). Its public part, PublicKeys, is encoded in 65 bytes:
//
//	enc(pk) = 0x01 (Suite) || X25519 public key (32) || Ed25519 public key (32)
//
// ParsePublicKeys refuses any other length, any other suite byte, and an X25519 key of small
// order (detected as a key agreement with a fixed scalar yielding zero). Ed25519 keys are not
// checked for small order: a weak signing key only lets others forge its owner's own frames,
// which its owner could allow anyway by giving its key away.
//
// # Sender keys and key messages
//
// Each participant S seals its frames under its current sender key: a generation g (u32, from 1,
// only increasing) and a secret K_g of 16 random bytes (an AES-128 key), independent of every
// other key. S gives K_g to each other participant R in a key message (Identity.SealKeyFor):
//
//	info    = ctx("sdkpp-e2ee-v1 sender key\x00", callID, S, R) || u32(g)
//	enc, ct = HPKE Base mode SealBase(pkR = R's X25519 key, info, aad = "", plaintext = K_g)
//	          with DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, AES-128-GCM (RFC 9180)
//	sig     = Ed25519-Sign(S, "sdkpp-e2ee-v1 key message\x00" || info || enc || ct)
//	message = u32(g) || enc (32) || ct (32) || sig (64)            (132 bytes)
//
// R (Identity.OpenKey) refuses a message that is not 132 bytes or has g = 0, rebuilds info from
// the claimed sender S, itself and g, verifies sig under S's Ed25519 key, then opens the HPKE
// ciphertext. Only R can decrypt K_g (HPKE to R's key); the info and the signature bind the call,
// sender, recipient and generation, so a message cannot be redirected, replayed in another call,
// or injected by the service (HPKE Base mode alone authenticates no sender, hence the signature).
// R installs the key only if g is newer than every generation it holds for S (Opener.AddKey), so
// a replayed old key message is refused.
//
// # Frames
//
// S seals payload P (an Opus frame) with the caller's unencrypted header H (routing data the relay
// reads; up to 65536 bytes, kept by the caller, not part of the sealed frame) as follows, c being a
// u64 counter that starts at 0 for each generation and grows by one per frame:
//
//	prefix = u32(g) || u64(c)                                      (12 bytes, in clear)
//	C      = AES-128-GCM-Seal(key K_g, nonce = prefix, aad = prefix || H, P)   (len(P) + 16 bytes)
//	sig    = Ed25519-Sign(S, ctx("sdkpp-e2ee-v1 frame\x00", callID, S) || prefix || u32(len(H)) || H || C)
//	frame  = prefix || C || sig                                    (len(P) + 92 bytes)
//
// The GCM nonce is the 12-byte prefix itself, so it never repeats under one key: c only grows
// (Sealer refuses to seal when it would wrap), each generation has its own fresh key, and the
// Sealer only moves to a newer generation. The tag is the full 16 bytes.
//
// The receiver holds one Opener per remote sender. Open(H, frame) refuses, in this order:
//
//  1. a frame shorter than 92 bytes, or H longer than 65536 bytes (ErrMalformed);
//  2. a generation newer than any key received from S (ErrUnknownGeneration), or one that is
//     neither the newest held nor the previous one within its grace period (ErrRetiredGeneration);
//  3. a counter already opened under that generation (ErrReplay), or more than 127 behind the
//     highest counter opened under it (ErrTooOld): a 128-frame sliding bitmap per generation
//     (2.56 s of 20 ms frames; the first frame opened under a generation starts its window);
//  4. a signature that does not verify under S's Ed25519 key (ErrBadSignature);
//  5. a GCM tag that does not verify (ErrDecrypt).
//
// The counter is marked as used after step 4 and before step 5, so a (generation, counter) is
// decrypted at most once, and a frame that fails steps 1 to 4 (garbage, a forgery, a tampered
// copy) does not use up the counter of the genuine frame. When a newer key arrives, the previous
// generation stays usable for a grace period (DefaultGrace, 5 s) so that frames in flight still
// open; the one before it is dropped at once.
//
// # Membership and rotation
//
// Session is the state machine the call layer drives. Every membership change rotates the local
// sender key: a new random key of generation g+1 is sealed to each participant present after the
// change, the Sealer switches to it, and the key messages are returned for signaling to deliver
// (before the next frame, or that frame is refused as ErrUnknownGeneration until the key arrives).
//
//   - Join: the newcomers are added, and the new key goes to everyone present, newcomers included.
//     A newcomer receives only keys made after it joined, so it cannot open earlier frames.
//   - Leave: the leavers' keys are forgotten, and the new key goes to the remaining participants
//     only. A leaver never receives a key made after it left, so it cannot open later frames.
//   - A newcomer's own Session starts at generation 1 and Joins everyone present, rotating to 2.
//   - If a rotation after a Leave fails (no randomness), the Sealer is blocked: nothing more is
//     sealed under the key the leaver holds until Session.Rotate succeeds (fail closed).
//
// Every participant does the same when it sees the change, so afterwards all senders' frames are
// under keys only the present participants hold. A participant that left is remembered with the
// newest generation it had, so if it comes back with the same keys, its old key messages cannot be
// replayed to bring back old keys. The leaver could open frames sealed before the rotation (it was
// entitled to hear them); nothing sealed after.
//
// # Verification code
//
// VerificationCode(callID, participants) is 30 digits in 6 groups of 5:
//
//	d = SHA-256("sdkpp-e2ee-v1 verification code\x00" || u16(len(callID)) || callID ||
//	            u32(n) || enc(pk_1) || … || enc(pk_n))
//
// with the participants' encodings sorted bytewise (duplicates kept), and group i (0 to 5) the
// 40-bit big-endian integer of bytes 5i to 5i+4 of d modulo 100000, with five digits. It is the
// same on every client that sees the same participants, changes when anyone joins or leaves, and
// differs if the service substituted anyone's public keys. Since identities are fresh per call,
// players compare it in each call; it is not a long-term fingerprint.
//
// # Improvements on the platform's protocol (DAVE v1.1) and its audit
//
// Sender authentication. In DAVE every member can derive every sender's key, so any member can
// forge any sender's frames. Here each frame carries the sender's Ed25519 signature over
// everything else in the packet; holding a sender's media key (as every listener does) does not
// allow forging its frames, and the relay and service hold no key at all. A signature on every
// frame is the cheapest scheme that refuses a forged frame before it is played: amortized schemes
// (signing a hash chain every N frames, TESLA) authenticate a frame only after later frames or key
// disclosures arrive, so a forgery would be played first. The cost, measured by the benchmarks, is
// the Ed25519 sign per sent frame and verify per received frame (tens of microseconds each) and 64
// bytes per frame. Pairwise MAC tags (one per recipient) would cost far less CPU but grow the
// frame with the number of participants; they are not used.
//
// Every unencrypted byte is authenticated. DAVE leaves ranges of the frame unencrypted and does not
// authenticate their offsets. Here the payload is encrypted whole; the clear bytes are the
// caller's header H and the prefix (generation and counter), and they are both the AEAD's
// additional data and under the signature, with H's length in the signed message so that no byte
// can move between the header and the frame. The ciphertext and tag are under the signature too.
//
// Key commitment. AES-GCM is not key-committing: someone who knows two keys can make one
// ciphertext that opens under both. That matters when a receiver tries several keys on one
// ciphertext (partitioning oracles) or when one ciphertext must mean the same to every receiver.
// Neither applies here. A frame names its sender (the Opener) and its generation, which select
// exactly one key; no key is ever tried on a frame it does not name. Only a sender can make a
// frame that others accept (it must sign), and a sender who wanted different receivers to hear
// different things could simply give them different keys and frames; commitment would not prevent
// that, and the verification code does not claim it. So no commitment is added (it would cost at
// least 16 bytes per frame); what is done instead: the full 16-byte tag (DAVE truncates to 8),
// the tag under the sender's signature, and key messages signed and bound to sender, recipient,
// call and generation.
//
// Other differences: a 64-bit counter and a separate 32-bit generation in the nonce (DAVE packs
// the generation into the top byte of a 32-bit counter, so both wrap); keys are kept for the
// previous generation only, 5 s rather than 10 s.
//
// # Not covered
//
// Post-quantum confidentiality: X25519 does not resist a quantum adversary recording traffic now;
// crypto/hpke's MLKEM768X25519 would be a new Suite (a 1216-byte public key and a 1120-byte
// encapsulation per key message). Metadata: the relay sees header, sizes, timing, generation and
// counter. Key erasure: replaced and forgotten keys are dropped, not wiped (Go's AES keeps its expanded
// key until collected).
//
// # Concurrency and time
//
// Sealer, Opener and Session are safe for concurrent use (a mutex each; none is meant for the
// audio callback). Times are time.Duration values on one monotonic scale of the caller's; nothing
// here reads a clock. Randomness comes from the io.Reader the caller passes (crypto/rand.Reader in
// production) and, for HPKE's ephemeral keys, from crypto/rand.
package e2ee
