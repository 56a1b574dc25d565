// Command linkprobe is a test-only c-shared library that links audio/codec and audio/apm exactly
// as libsdkpp.so will (static libopus and libspeexdsp, the exports version script), so
// `make check-linkage` can prove what the library needs at run time and what it exports before
// capi imports the audio engine.
package main

import "C"

import (
	"sdkpp/audio/apm"
	"sdkpp/audio/codec"
	"sdkpp/audio/pcm"
)

// Sdkpp_LinkProbe encodes, decodes and processes one frame of silence and returns the packet
// length, or -1 on error. It makes every C library a real dependency of the probe.
//
//export Sdkpp_LinkProbe
func Sdkpp_LinkProbe() C.int {
	enc, err := codec.NewEncoder()
	if err != nil {
		return -1
	}
	dec, err := codec.NewDecoder()
	if err != nil {
		return -1
	}
	p, err := apm.New(pcm.FrameSamples, 0)
	if err != nil {
		return -1
	}
	defer p.Close()
	frame := make([]int16, pcm.FrameSamples)
	if err := p.Capture(frame, frame); err != nil {
		return -1
	}
	pkt := make([]byte, codec.MaxPacketBytes)
	n, err := enc.Encode(frame, pkt)
	if err != nil {
		return -1
	}
	if _, err := dec.Decode(pkt[:n], frame); err != nil {
		return -1
	}
	return C.int(n)
}

func main() {}
