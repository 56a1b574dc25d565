package main

import (
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"time"

	"sdkpp/server/servertest"
)

// peer is a real voice path built from Debian's GStreamer packages, measured through the same
// null sinks and with the same probe as the engines: it captures the sink "mouth" from its
// monitor, optionally runs WebRTC's audio processing (webrtcdsp, with its echo probe on the
// side's playback: echo cancellation, noise suppression, gain control), encodes Opus in frameMs
// frames, sends RTP over UDP on loopback, and on the receiving side takes it through
// rtpjitterbuffer, decodes and plays into the sink "ear". Its buffer settings are the lowest that
// played without dropouts here (see gstPeers); they are printed beside the result.
type peer struct {
	name    string
	frameMs int
	process bool // webrtcdsp and webrtcechoprobe in the path
	// lowDelay selects Opus's restricted low-delay application (CELT only, 2.5 ms look-ahead)
	// instead of voice.
	lowDelay bool
	// Buffer settings: the capture and playback device buffers and the jitter buffer.
	srcBufferUs, srcLatencyUs   int
	sinkBufferUs, sinkLatencyUs int
	jitterMs                    int
	// sinkSync plays each buffer at its time on the pipeline clock rather than as it comes.
	sinkSync bool
}

// settings describes the peer's buffers, as printed beside its figure.
func (p peer) settings() string {
	return fmt.Sprintf("pulsesrc buffer-time %d µs latency-time %d µs, pulsesink buffer-time %d µs latency-time %d µs sync=%t, rtpjitterbuffer latency %d ms",
		p.srcBufferUs, p.srcLatencyUs, p.sinkBufferUs, p.sinkLatencyUs, p.sinkSync, p.jitterMs)
}

// pipeline is the peer's gst-launch-1.0 description: the talker captures mouthMonitor and sends
// to the listener, which plays into ear. With processing on, each side runs WebRTC's processing
// on its own microphone against what its own speaker plays, as the engines do: the listener
// sends its microphone (voidMonitor) back, and the talker plays it into void.
func (p peer) pipeline(ports [2]int, mouthMonitor, ear, voidMonitor, void string) []string {
	desc := p.send(mouthMonitor, ports[0], "talker") + " " + p.receive(ports[0], ear, "listener")
	if p.process {
		desc += " " + p.send(voidMonitor, ports[1], "listener") + " " + p.receive(ports[1], void, "talker")
	}
	return strings.Fields(desc) // gst-launch joins its arguments again
}

const rawAudio = "audio/x-raw,format=S16LE,rate=48000,channels=1"

// send is one side's capture path: the microphone, WebRTC's processing against the side's echo
// probe, Opus, RTP over UDP to port.
func (p peer) send(mic string, port int, side string) string {
	s := fmt.Sprintf("pulsesrc device=%s buffer-time=%d latency-time=%d do-timestamp=true ! %s ! queue max-size-buffers=0 max-size-bytes=0 max-size-time=0 silent=true ! ",
		mic, p.srcBufferUs, p.srcLatencyUs, rawAudio)
	if p.process {
		s += fmt.Sprintf("webrtcdsp probe=%s-probe echo-cancel=true noise-suppression=true gain-control=true ! ", side)
	}
	app := "voice"
	if p.lowDelay {
		app = "restricted-lowdelay"
	}
	return s + fmt.Sprintf("audioconvert ! opusenc audio-type=%s frame-size=%d bitrate=32000 ! rtpopuspay ! udpsink host=127.0.0.1 port=%d sync=false async=false",
		app, p.frameMs, port)
}

// receive is one side's playback path: RTP from port, the jitter buffer, Opus, the side's echo
// probe, the speaker.
func (p peer) receive(port int, speaker, side string) string {
	s := fmt.Sprintf(`udpsrc address=127.0.0.1 port=%d caps="application/x-rtp,media=audio,clock-rate=48000,encoding-name=OPUS,payload=96" ! rtpjitterbuffer latency=%d drop-on-latency=true ! rtpopusdepay ! opusdec plc=true ! audioconvert ! audioresample ! %s ! `,
		port, p.jitterMs, rawAudio)
	if p.process {
		s += fmt.Sprintf("webrtcechoprobe name=%s-probe ! ", side)
	}
	return s + fmt.Sprintf("pulsesink device=%s buffer-time=%d latency-time=%d sync=%t", speaker, p.sinkBufferUs, p.sinkLatencyUs, p.sinkSync)
}

// gstPeers are the peers the bench measures: WebRTC's processing at the engine's default 20 ms
// frames, and the same pipeline without processing at 20 ms and, as the floor of the engine's
// low-latency mode, at 10 ms frames in Opus's restricted low-delay mode.
//
// The buffers are the lowest found here (-gst-buffers) at which gst-launch reported no lost
// audio and every burst came through: 10 ms periods as the engines' devices use, pulsesrc
// buffering three of them (with two it lost audio under load) and pulsesink two; pulsesink plays
// buffers as they come
// (sync=false): synchronised to the pipeline clock with a jitter buffer latency under 100 ms,
// its late-buffer dropping lost whole bursts on this machine. rtpjitterbuffer then holds
// in-order packets no longer than it takes to pass them on and waits for a missing one for a
// frame (its latency).
func gstPeers() []peer {
	base := peer{srcBufferUs: 30000, srcLatencyUs: 10000, sinkBufferUs: 20000, sinkLatencyUs: 10000, jitterMs: 20}
	webrtc := base
	webrtc.name, webrtc.frameMs, webrtc.process = "GStreamer, WebRTC processing, 20 ms frames", 20, true
	floor20 := base
	floor20.name, floor20.frameMs = "GStreamer floor (no processing), 20 ms frames", 20
	floor10 := base
	floor10.name, floor10.frameMs, floor10.lowDelay = "GStreamer floor (no processing), 10 ms frames, restricted-lowdelay", 10, true
	return []peer{webrtc, floor20, floor10}
}

// errNoGStreamer reports that gst-launch-1.0 is not installed.
var errNoGStreamer = errors.New("gst-launch-1.0 not found: install Debian's gstreamer1.0-tools and plugins (build/scripts/deps.sh bench)")

// runPeer starts the peer's pipeline on devs (the PulseAudio names of mouth's monitor, ear,
// void's monitor and void: see pipeline), runs measure while it plays, and stops it.
func runPeer(p peer, devs [4]string, measure func() ([]float64, error)) ([]float64, error) {
	bin, err := exec.LookPath("gst-launch-1.0")
	if err != nil {
		return nil, errNoGStreamer
	}
	var ports [2]int
	for i := range ports {
		if ports[i], err = freeUDPPort(); err != nil {
			return nil, err
		}
	}
	var out servertest.LogBuffer // the pipeline's output, from two pipes
	cmd := exec.Command(bin, p.pipeline(ports, devs[0], devs[1], devs[2], devs[3])...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", p.name, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Kill()
		<-exited
	}()
	// The pipeline needs a moment to reach PLAYING; the probe drops its first burst besides.
	select {
	case err := <-exited:
		exited <- err
		return nil, fmt.Errorf("%s: gst-launch-1.0 exited: %v\n%s", p.name, err, out.String())
	case <-time.After(500 * time.Millisecond):
	}
	ms, err := measure()
	if err != nil {
		return nil, fmt.Errorf("%s: %w\n%s", p.name, err, out.String())
	}
	// A pipeline that could not keep up says so (pulsesrc: "Can't record audio fast enough";
	// a sink or the jitter buffer dropping late buffers): such settings are too low.
	if n := strings.Count(out.String(), "WARNING:"); n > 0 {
		return nil, fmt.Errorf("%s: %d dropouts reported at these buffer settings (%s):\n%s", p.name, n, p.settings(), out.String())
	}
	return ms, nil
}

// freeUDPPort returns a UDP port on loopback that was free a moment ago.
func freeUDPPort() (int, error) {
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return 0, err
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port, nil
}
