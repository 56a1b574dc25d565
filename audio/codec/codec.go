// Package codec encodes and decodes the voice engine's 20 ms mono frames with Opus (libopus
// through github.com/hraban/opus, linked statically into the SDK): VoIP mode, 24-32 kbps, in-band
// forward error correction (FEC) tuned by the receiver's loss reports, discontinuous transmission
// (DTX) in silence, and packet loss concealment (PLC) on the decoding side.
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

// ErrFrameSize is returned when a frame is not exactly pcm.FrameSamples long or an output buffer
// is shorter than one frame.
var ErrFrameSize = errors.New("codec: frame must hold exactly one 20 ms frame")

// Encoder turns 20 ms frames of 48 kHz mono samples into Opus packets.
type Encoder struct {
	enc *opus.Encoder
}

// NewEncoder returns an Encoder for 48 kHz mono VoIP at DefaultBitrate with in-band FEC (for
// DefaultExpectedLoss) and DTX on.
func NewEncoder() (*Encoder, error) {
	enc, err := opus.NewEncoder(pcm.SampleRate, pcm.Channels, opus.AppVoIP)
	if err != nil {
		return nil, fmt.Errorf("codec: new opus encoder: %w", err)
	}
	e := &Encoder{enc: enc}
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

// Encode encodes one frame (exactly pcm.FrameSamples samples) into out and returns the packet
// length. An out of MaxPacketBytes always suffices. In silence, DTX makes packets of one or two
// bytes, which the caller need not send.
func (e *Encoder) Encode(frame []int16, out []byte) (int, error) {
	if len(frame) != pcm.FrameSamples {
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

// Decoder turns Opus packets back into 20 ms frames of 48 kHz mono samples, recovers a single lost
// frame from its successor's FEC data and conceals longer losses.
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

// Decode decodes one packet into out, which must hold at least pcm.FrameSamples samples, and
// returns the number of samples written (pcm.FrameSamples for packets from an Encoder).
func (d *Decoder) Decode(pkt []byte, out []int16) (int, error) {
	if len(out) < pcm.FrameSamples {
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
// FEC data into out[:pcm.FrameSamples]. Call it for a single lost packet, then Decode next as
// usual. Without FEC data in next it conceals instead.
func (d *Decoder) DecodeFEC(next []byte, out []int16) error {
	if len(out) < pcm.FrameSamples {
		return ErrFrameSize
	}
	if len(next) == 0 {
		return errors.New("codec: decode FEC: empty packet")
	}
	// libopus takes the lost duration from the buffer size: exactly one frame.
	if err := d.dec.DecodeFEC(next, out[:pcm.FrameSamples:pcm.FrameSamples]); err != nil {
		return fmt.Errorf("codec: decode FEC: %w", err)
	}
	return nil
}

// Conceal writes a stand-in for one lost frame into out[:pcm.FrameSamples], extrapolated from
// the frames decoded before (packet loss concealment). Repeated calls fade to silence.
func (d *Decoder) Conceal(out []int16) error {
	if len(out) < pcm.FrameSamples {
		return ErrFrameSize
	}
	if err := d.dec.DecodePLC(out[:pcm.FrameSamples:pcm.FrameSamples]); err != nil {
		return fmt.Errorf("codec: conceal: %w", err)
	}
	return nil
}
