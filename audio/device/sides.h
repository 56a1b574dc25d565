// The audio-thread side of a stream, in C: miniaudio calls these data callbacks on its device
// threads, and they only copy between the device buffer and a ring (package ring's layout) and,
// when the Go side waits, claim its wake-up and write one byte to a pipe (an event on Windows).
// No Go code runs on the device threads, and nothing here allocates, locks or waits.
#ifndef SDKPP_DEVICE_SIDES_H
#define SDKPP_DEVICE_SIDES_H

#include <stdint.h>

// A notifier wakes the stream's Go pump; the bits say which rings claimed a wake-up.
typedef struct sdkpp_notifier sdkpp_notifier;
enum { SDKPP_WAKE_DATA = 1, SDKPP_WAKE_SPACE = 2 };

sdkpp_notifier *sdkpp_notifier_new(void);
// sdkpp_notifier_handle is what the pump waits on: the pipe's read end (an fd), or the event (a
// HANDLE) on Windows.
uintptr_t sdkpp_notifier_handle(sdkpp_notifier *n);
// sdkpp_notifier_take returns and clears the bits raised since the last call.
uint32_t sdkpp_notifier_take(sdkpp_notifier *n);
// sdkpp_notifier_fired is the address of the bits (a 32-bit atomic), for a taker in Go.
uint32_t *sdkpp_notifier_fired(sdkpp_notifier *n);
// sdkpp_notifier_close makes the pump's wait return for good (EOF, or the event with closed set).
void sdkpp_notifier_close(sdkpp_notifier *n);
int sdkpp_notifier_closed(sdkpp_notifier *n);
// sdkpp_notifier_free releases it once the pump has returned.
void sdkpp_notifier_free(sdkpp_notifier *n);

// A side is one direction of a stream: its ring (package ring's state and buffer, pinned by Go),
// the samples per frame (2 for interleaved stereo), and the counters of its periods.
typedef struct sdkpp_side sdkpp_side;

sdkpp_side *sdkpp_side_new(void *state, int16_t *buf, uint64_t cap, uint32_t channels,
                           sdkpp_notifier *n);
void sdkpp_side_free(sdkpp_side *s);
// sdkpp_side_captured is the capture callback's work: frames of what the device recorded go
// into the ring (the ring drops what does not fit and counts an overrun).
void sdkpp_side_captured(sdkpp_side *s, const int16_t *in, uint32_t frames);
// sdkpp_side_play is the playback callback's work: frames to play are taken from the ring, with
// silence for what it lacks (counted as an underrun).
void sdkpp_side_play(sdkpp_side *s, int16_t *out, uint32_t frames);
// sdkpp_side_counts reports the callbacks run and the samples they moved.
void sdkpp_side_counts(sdkpp_side *s, uint64_t *periods, uint64_t *samples);

// sdkpp_clock_ns is the monotonic clock, in nanoseconds, that the playback callback stamps its
// takes with (CLOCK_MONOTONIC; QueryPerformanceCounter on Windows).
int64_t sdkpp_clock_ns(void);

// A take clock is when a playback side last took audio from its ring, as a sequence lock: seq is
// odd while the callback writes last_ns, the monotonic time of its latest take, and seq/2 counts
// the takes finished (the ring's read index already moved). A reader loads seq (even), last_ns,
// and seq again: the same even value both times makes a matching pair.
typedef struct {
	uint64_t seq;
	int64_t last_ns;
} sdkpp_take_clock;

// sdkpp_side_take_clock is the address of a playback side's take clock (two 64-bit atomics), for
// a reader in Go.
sdkpp_take_clock *sdkpp_side_take_clock(sdkpp_side *s);

#endif
