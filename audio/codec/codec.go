// Package codec encodes and decodes the voice engine's mono frames with Opus (libopus through
// github.com/hraban/opus, linked statically into the SDK): 20 ms frames in VoIP mode, 24-32 kbps,
// in-band forward error correction (FEC) tuned by the receiver's loss reports, discontinuous
// transmission (DTX) in silence; or, for the low-latency mode, 10 ms frames in the restricted
// low-delay mode (CELT only: 2.5 ms of look-ahead instead of 6.5, and no in-band FEC). The
// decoder takes either and any other Opus packet (PacketSamples reads a packet's duration from
// its TOC), recovers lost frames from FEC data and conceals the rest (PLC).
//
// Encoding and decoding a frame allocate nothing. An Encoder or Decoder is not safe for concurrent
// use; each belongs to one goroutine (the engine's encode or decode path).
//
// Building it needs the static libopus from build/scripts/clibs.sh and the build tag
// nolibopusfile; the Makefile supplies both.
package codec

import (
	"errors"
	"fmt"

	"github.com/hraban/opus"

	"sdkpp/audio/pcm"
)

const (
	// MinBitrate is the lowest bitrate an Encoder accepts, in bits per second.
	MinBitrate = 24000
	// MaxBitrate is the highest bitrate an Encoder accepts, in bits per second.
	MaxBitrate = 32000
	// DefaultBitrate is a new Encoder's bitrate, in bits per second.
	DefaultBitrate = 32000
	// DefaultExpectedLoss is a new Encoder's expected packet loss in percent, used until the
	// receiver's loss reports arrive. Opus adds FEC data only while it is above zero.
	DefaultExpectedLoss = 10
	// MaxPacketBytes is the largest packet one 20 ms frame can encode to (RFC 6716, 3.2.1), so an
	// output buffer of this size always suffices.
	MaxPacketBytes = 1275
)

// LowDelayFrameSamples is the low-delay encoder's frame: 10 ms.
const LowDelayFrameSamples = pcm.SampleRate / 100

// ErrFrameSize is returned when a frame is not exactly the encoder's frame long, an output
// buffer is shorter than one frame, or a duration to recover is not a whole Opus frame.
var ErrFrameSize = errors.New("codec: wrong frame size")

// ErrBadPacket is returned by PacketSamples for a packet whose TOC is malformed.
var ErrBadPacket = errors.New("codec: malformed packet")

// Encoder turns frames of 48 kHz mono samples into Opus packets.
type Encoder struct {
	enc   *opus.Encoder
	frame int
}

// NewEncoder returns an Encoder of 20 ms frames for 48 kHz mono VoIP at DefaultBitrate with
// in-band FEC (for DefaultExpectedLoss) and DTX on.
func NewEncoder() (*Encoder, error) {
	return newEncoder(opus.AppVoIP, pcm.FrameSamples)
}

// NewLowDelayEncoder returns an Encoder of 10 ms frames (LowDelayFrameSamples) in Opus's
// restricted low-delay mode at DefaultBitrate, DTX on. The mode is CELT only: it looks ahead
// 2.5 ms instead of 6.5 ms but carries no in-band FEC, so losses are concealed.
func NewLowDelayEncoder() (*Encoder, error) {
	return newEncoder(opus.AppRestrictedLowdelay, LowDelayFrameSamples)
}

func newEncoder(app opus.Application, frame int) (*Encoder, error) {
	enc, err := opus.NewEncoder(pcm.SampleRate, pcm.Channels, app)
	if err != nil {
		return nil, fmt.Errorf("codec: new opus encoder: %w", err)
	}
	e := &Encoder{enc: enc, frame: frame}
	if err := e.SetBitrate(DefaultBitrate); err != nil {
		return nil, err
	}
	if err := enc.SetInBandFEC(true); err != nil {
		return nil, fmt.Errorf("codec: enable in-band FEC: %w", err)
	}
	if err := e.SetExpectedLoss(DefaultExpectedLoss); err != nil {
		return nil, err
	}
	if err := enc.SetDTX(true); err != nil {
		return nil, fmt.Errorf("codec: enable DTX: %w", err)
	}
	return e, nil
}

// SetBitrate sets the target bitrate in bits per second, between MinBitrate and MaxBitrate.
func (e *Encoder) SetBitrate(bps int) error {
	if bps < MinBitrate || bps > MaxBitrate {
		return fmt.Errorf("codec: bitrate %d outside %d..%d", bps, MinBitrate, MaxBitrate)
	}
	if err := e.enc.SetBitrate(bps); err != nil {
		return fmt.Errorf("codec: set bitrate %d: %w", bps, err)
	}
	return nil
}

// SetExpectedLoss tells the encoder how many packets in a hundred the receiver reports lost, so
// it spends enough bits on FEC. Values are clamped to 0..100; 0 turns FEC data off.
func (e *Encoder) SetExpectedLoss(percent int) error {
	percent = min(max(percent, 0), 100)
	if err := e.enc.SetPacketLossPerc(percent); err != nil {
		return fmt.Errorf("codec: set expected loss %d%%: %w", percent, err)
	}
	return nil
}

// FrameSamples returns the encoder's frame size in samples.
func (e *Encoder) FrameSamples() int { return e.frame }

// Encode encodes one frame (exactly FrameSamples samples) into out and returns the packet
// length. An out of MaxPacketBytes always suffices. In silence, DTX makes packets of one or two
// bytes, which the caller need not send.
func (e *Encoder) Encode(frame []int16, out []byte) (int, error) {
	if len(frame) != e.frame {
		return 0, ErrFrameSize
	}
	if len(out) == 0 {
		return 0, errors.New("codec: empty output buffer")
	}
	// The wrapper writes up to cap(out): bound it to what the caller handed over.
	n, err := e.enc.Encode(frame, out[:len(out):len(out)])
	if err != nil {
		return 0, fmt.Errorf("codec: encode: %w", err)
	}
	return n, nil
}

// PacketSamples returns the duration of an Opus packet in samples at 48 kHz, read from its TOC
// byte and frame count (RFC 6716, 3.1): what the packet decodes to.
func PacketSamples(pkt []byte) (int, error) {
	if len(pkt) == 0 {
		return 0, fmt.Errorf("packet samples: empty packet: %w", ErrBadPacket)
	}
	toc := pkt[0]
	cfg := int(toc >> 3)
	var frame int // in units of 2.5 ms
	switch {
	case cfg < 12: // SILK: 10, 20, 40, 60 ms
		frame = [4]int{4, 8, 16, 24}[cfg%4]
	case cfg < 16: // hybrid: 10, 20 ms
		frame = [2]int{4, 8}[cfg%2]
	default: // CELT: 2.5, 5, 10, 20 ms
		frame = 1 << (cfg % 4)
	}
	count := 1
	switch toc & 3 {
	case 1, 2:
		count = 2
	case 3:
		if len(pkt) < 2 {
			return 0, fmt.Errorf("packet samples: no frame count: %w", ErrBadPacket)
		}
		count = int(pkt[1] & 0x3f)
	}
	n := frame * count * pcm.SampleRate / 400
	if count == 0 || n > 120*pcm.SampleRate/1000 {
		return 0, fmt.Errorf("packet samples: %d frames of %d samples: %w", count, frame*pcm.SampleRate/400, ErrBadPacket)
	}
	return n, nil
}

// Decoder turns Opus packets of any frame size back into 48 kHz mono samples, recovers a single
// lost frame from its successor's FEC data and conceals longer losses.
type Decoder struct {
	dec *opus.Decoder
}

// NewDecoder returns a Decoder for 48 kHz mono.
func NewDecoder() (*Decoder, error) {
	dec, err := opus.NewDecoder(pcm.SampleRate, pcm.Channels)
	if err != nil {
		return nil, fmt.Errorf("codec: new opus decoder: %w", err)
	}
	return &Decoder{dec: dec}, nil
}

// Decode decodes one packet into out, which must hold the packet's samples (PacketSamples), and
// returns the number of samples written.
func (d *Decoder) Decode(pkt []byte, out []int16) (int, error) {
	if len(out) < LowDelayFrameSamples {
		return 0, ErrFrameSize
	}
	if len(pkt) == 0 {
		return 0, errors.New("codec: decode: empty packet")
	}
	n, err := d.dec.Decode(pkt, out[:len(out):len(out)])
	if err != nil {
		return 0, fmt.Errorf("codec: decode: %w", err)
	}
	return n, nil
}

// DecodeFEC recovers the frame lost just before next (the packet that follows it) from next's
// FEC data into out, whose length is the lost duration (a multiple of 2.5 ms; normally the
// lost packet's, which is next's). Call it for a single lost packet, then Decode next as usual.
// Without FEC data in next it conceals instead.
func (d *Decoder) DecodeFEC(next []byte, out []int16) error {
	if !wholeFrames(len(out)) {
		return ErrFrameSize
	}
	if len(next) == 0 {
		return errors.New("codec: decode FEC: empty packet")
	}
	// libopus takes the lost duration from the buffer size.
	if err := d.dec.DecodeFEC(next, out[:len(out):len(out)]); err != nil {
		return fmt.Errorf("codec: decode FEC: %w", err)
	}
	return nil
}

// Conceal writes a stand-in for a lost frame into out, whose length is the lost duration (a
// multiple of 2.5 ms), extrapolated from the frames decoded before (packet loss concealment).
// Repeated calls fade to silence.
func (d *Decoder) Conceal(out []int16) error {
	if !wholeFrames(len(out)) {
		return ErrFrameSize
	}
	if err := d.dec.DecodePLC(out[:len(out):len(out)]); err != nil {
		return fmt.Errorf("codec: conceal: %w", err)
	}
	return nil
}

// wholeFrames reports whether n samples are a whole number of 2.5 ms Opus frames, 2.5 to 120 ms.
func wholeFrames(n int) bool {
	const unit = pcm.SampleRate / 400
	return n > 0 && n%unit == 0 && n <= 48*unit
}
