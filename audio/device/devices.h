// The sound system's side of the package, in C over miniaudio's public API: a context of our own
// (ma_context_init) and devices opened on it (ma_device_init) whose data callback is a side's
// (sides.c), so that no Go code runs on the device threads. malgo remains for listing devices;
// miniaudio's implementation is malgo's single compiled copy, and only its declarations are
// included here.
#ifndef SDKPP_DEVICE_DEVICES_H
#define SDKPP_DEVICE_DEVICES_H

#include <stdint.h>

#include "sides.h"

// Every function returning int returns a miniaudio ma_result: 0 (MA_SUCCESS) or a negative code
// that sdkpp_result_description names.
const char *sdkpp_result_description(int result);

// SDKPP_BACKEND_DEFAULT lets miniaudio try the platform's sound systems in its own order.
enum { SDKPP_BACKEND_DEFAULT = -1 };
// sdkpp_backend_pulseaudio and sdkpp_backend_null are miniaudio's ma_backend values of the two.
int sdkpp_backend_pulseaudio(void);
int sdkpp_backend_null(void);

// A context is a miniaudio context and, when a log handle is given, the log that forwards its
// messages to Go (sdkppDeviceLog, with the handle).
typedef struct sdkpp_context sdkpp_context;

// sdkpp_context_new connects to the sound system backend (an ma_backend, or
// SDKPP_BACKEND_DEFAULT); log is zero for no log forwarding.
int sdkpp_context_new(int backend, uintptr_t log, sdkpp_context **out);
// sdkpp_context_free disconnects; every device opened on the context must have been closed.
void sdkpp_context_free(sdkpp_context *c);

// What a device opens. Exactly one of side and go_data is set: the data callback is the side's
// (captured or play, by kind) or, with go_data, Go's (sdkppDeviceData, with the handle).
typedef struct {
	int capture;            // nonzero for a capture device, else playback
	uint32_t sample_rate;   // frames per second
	uint32_t period_frames; // frames per data callback
	uint32_t channels;      // samples per frame, S16 interleaved
	sdkpp_side *side;
	uintptr_t go_data;
} sdkpp_device_params;

typedef struct sdkpp_device sdkpp_device;

// sdkpp_device_open initializes a device, stopped: S16 at the given rate and channels, the
// low-latency profile with callbacks of exactly one period, shared mode, and the PulseAudio stream
// named for the voice. id is miniaudio's ma_device_id (id_size bytes, copied), or NULL for the
// default device.
int sdkpp_device_open(sdkpp_context *c, const sdkpp_device_params *p, const uint8_t *id,
                      uint32_t id_size, sdkpp_device **out);
int sdkpp_device_start(sdkpp_device *d);
int sdkpp_device_stop(sdkpp_device *d);
int sdkpp_device_is_started(sdkpp_device *d);
// sdkpp_device_sample_rate is the rate the device runs at.
uint32_t sdkpp_device_sample_rate(sdkpp_device *d);
// sdkpp_device_close stops the device if it runs, then releases it: its callbacks have ended.
void sdkpp_device_close(sdkpp_device *d);

#endif
