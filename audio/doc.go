// Package audio is the root of sdkpp's voice engine: the code that runs on the player's machine
// between the microphone, the speakers and the network.
//
// Each job is its own small package:
//
//	pcm      frame format constants and sample helpers shared by every other package
//	ring     lock-free single-producer single-consumer sample rings between device and engine
//	device   capture and playback through miniaudio (malgo's) with C data callbacks, an in-memory device for tests
//	codec    Opus encoding and decoding (hraban/opus), FEC and concealment
//	apm      echo cancellation, noise suppression and gain control
//	vad      voice activity detection
//	ptt      the push-to-talk gate with its release delay and end-of-speech marker
//	jitter   an adaptive jitter buffer per sender
//	mixer    per-sender volume, local mute, deafen, output volume and soft clipping
//	quality  offline speech-quality metrics for tests and benchmarks
//	netsim   a deterministic loss, jitter and reordering simulator for tests
//	engine   the engine that ties them together for one player
//
// audio/ is the only place in sdkpp with audio cgo; core/ reaches the engine through an interface
// that capi wires in.
//
// codec and apm link libopus and libspeexdsp statically, built from Debian's source packages by
// build/scripts/clibs.sh. The Makefile gives every go command the environment for that (and the
// build tag nolibopusfile): use make (make test-audio runs these packages' tests), or export the
// lines that `build/scripts/clibs.sh --env linux-amd64` prints and GOFLAGS=-tags=nolibopusfile.
package audio
