package engine

import (
	"testing"
	"time"

	"sdkpp/audio/codec"
	"sdkpp/audio/internal/speech"
	"sdkpp/audio/pcm"
	"sdkpp/core/voice"
)

// eightParty makes the packets of seven talking senders and one frame of local speech.
func eightParty(b *testing.B) (pkts [][]voice.Packet, local []int16) {
	local = speech.MustLoad(speech.Alice)
	for s := range 7 {
		enc, err := codec.NewEncoder()
		if err != nil {
			b.Fatal(err)
		}
		src := speech.MustLoad(speech.Names[s%len(speech.Names)])
		var list []voice.Packet
		buf := make([]byte, codec.MaxPacketBytes)
		for i := 0; i+pcm.FrameSamples <= len(src); i += pcm.FrameSamples {
			n, err := enc.Encode(src[i:i+pcm.FrameSamples], buf)
			if err != nil {
				b.Fatal(err)
			}
			list = append(list, voice.Packet{Seq: uint16(len(list)), Timestamp: uint32(i), Payload: append([]byte(nil), buf[:n]...)})
		}
		pkts = append(pkts, list)
	}
	return pkts, local
}

// BenchmarkEightPartyMix is one engine's processing step in an eight-party call as issue 13
// bounds it: one encode, seven jitter buffers and decodes, the mixer (and the voice activity,
// push-to-talk and level steps around them), with echo cancellation, noise suppression and gain
// control off. Compare with BenchmarkBareOpusEightParty.
func BenchmarkEightPartyMix(b *testing.B) { benchEightParty(b, false) }

// BenchmarkEightPartyMixProcessed is BenchmarkEightPartyMix with the input processing on, as
// the engine starts: speexdsp's echo canceller and preprocessor on every 10 ms block besides.
func BenchmarkEightPartyMixProcessed(b *testing.B) { benchEightParty(b, true) }

func benchEightParty(b *testing.B, processed bool) {
	pkts, local := eightParty(b)
	clock := &fakeClock{}
	e, err := New(voice.EngineConfig{OnPacket: func(voice.Packet) {}}, Options{Now: clock.now})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	e.SetEchoCancellation(processed)
	e.SetNoiseSuppression(processed)
	e.SetAutoGain(processed)
	e.SetMode(voice.ModePushToTalk)
	e.SetPTTActive(true)
	frame := make([]int16, pcm.FrameSamples)
	frames := len(pkts[0])
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		clock.advance(20 * time.Millisecond)
		for s := range pkts {
			p := pkts[s][i%len(pkts[s])]
			p.Seq, p.Timestamp = uint16(i), uint32(i*pcm.FrameSamples)
			e.ReceiveAt(uint64(s+1), p, clock.now())
		}
		copy(frame, local[(i%frames)*pcm.FrameSamples:])
		e.step(frame)
		i++
	}
}

// BenchmarkBareOpusEightParty is the anchor of BenchmarkEightPartyMix: libopus alone doing one
// encode and seven decodes per 20 ms.
func BenchmarkBareOpusEightParty(b *testing.B) {
	pkts, local := eightParty(b)
	enc, _ := codec.NewEncoder()
	decs := make([]*codec.Decoder, 7)
	for s := range decs {
		decs[s], _ = codec.NewDecoder()
	}
	out := make([]byte, codec.MaxPacketBytes)
	pcmOut := make([]int16, pcm.FrameSamples)
	frames := len(pkts[0])
	i := 0
	for b.Loop() {
		if _, err := enc.Encode(local[(i%frames)*pcm.FrameSamples:][:pcm.FrameSamples], out); err != nil {
			b.Fatal(err)
		}
		for s, d := range decs {
			if _, err := d.Decode(pkts[s][i%len(pkts[s])].Payload, pcmOut); err != nil {
				b.Fatal(err)
			}
		}
		i++
	}
}
