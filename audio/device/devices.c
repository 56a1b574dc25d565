#include "devices.h"

#include <stdlib.h>
#include <string.h>

// miniaudio's declarations only: its implementation is malgo's (one copy in the binary).
#include "miniaudio.h"

#include "_cgo_export.h"

struct sdkpp_context {
	ma_context ctx;
	ma_log log;
	int has_log;
};

struct sdkpp_device {
	ma_device dev;
	ma_device_id id;
	sdkpp_side *side;
	uintptr_t go_data;
	uint32_t bytes_per_frame;
};

const char *sdkpp_result_description(int result) { return ma_result_description((ma_result)result); }

int sdkpp_backend_pulseaudio(void) { return ma_backend_pulseaudio; }

int sdkpp_backend_null(void) { return ma_backend_null; }

static void forward_log(void *user, ma_uint32 level, const char *message) {
	(void)level;
	sdkppDeviceLog((uintptr_t)user, (char *)message);
}

int sdkpp_context_new(int backend, uintptr_t log, sdkpp_context **out) {
	*out = NULL;
	sdkpp_context *c = calloc(1, sizeof *c);
	if (c == NULL) {
		return MA_OUT_OF_MEMORY;
	}
	ma_context_config cfg = ma_context_config_init();
	if (log != 0) {
		ma_result r = ma_log_init(NULL, &c->log);
		if (r != MA_SUCCESS) {
			free(c);
			return r;
		}
		c->has_log = 1;
		r = ma_log_register_callback(&c->log, ma_log_callback_init(forward_log, (void *)log));
		if (r != MA_SUCCESS) {
			ma_log_uninit(&c->log);
			free(c);
			return r;
		}
		cfg.pLog = &c->log;
	}
	ma_backend one = (ma_backend)backend;
	ma_result r = backend == SDKPP_BACKEND_DEFAULT ? ma_context_init(NULL, 0, &cfg, &c->ctx)
	                                               : ma_context_init(&one, 1, &cfg, &c->ctx);
	if (r != MA_SUCCESS) {
		if (c->has_log) {
			ma_log_uninit(&c->log);
		}
		free(c);
		return r;
	}
	*out = c;
	return MA_SUCCESS;
}

void sdkpp_context_free(sdkpp_context *c) {
	ma_context_uninit(&c->ctx);
	if (c->has_log) {
		ma_log_uninit(&c->log);
	}
	free(c);
}

static void capture_data(ma_device *dev, void *out, const void *in, ma_uint32 frames) {
	(void)out;
	sdkpp_device *d = dev->pUserData;
	sdkpp_side_captured(d->side, in, frames);
}

static void playback_data(ma_device *dev, void *out, const void *in, ma_uint32 frames) {
	(void)in;
	sdkpp_device *d = dev->pUserData;
	sdkpp_side_play(d->side, out, frames);
}

static void go_data(ma_device *dev, void *out, const void *in, ma_uint32 frames) {
	sdkpp_device *d = dev->pUserData;
	uint32_t bytes = frames * d->bytes_per_frame;
	sdkppDeviceData(d->go_data, out, (void *)in, out != NULL ? bytes : 0, in != NULL ? bytes : 0, frames);
}

int sdkpp_device_open(sdkpp_context *c, const sdkpp_device_params *p, const uint8_t *id,
                      uint32_t id_size, sdkpp_device **out) {
	*out = NULL;
	if ((p->side == NULL) == (p->go_data == 0) || (id != NULL && id_size != sizeof(ma_device_id))) {
		return MA_INVALID_ARGS;
	}
	sdkpp_device *d = calloc(1, sizeof *d);
	if (d == NULL) {
		return MA_OUT_OF_MEMORY;
	}
	d->side = p->side;
	d->go_data = p->go_data;
	d->bytes_per_frame = p->channels * (uint32_t)sizeof(int16_t);

	ma_device_config cfg = ma_device_config_init(p->capture ? ma_device_type_capture : ma_device_type_playback);
	cfg.sampleRate = p->sample_rate;
	cfg.performanceProfile = ma_performance_profile_low_latency;
	cfg.periodSizeInFrames = p->period_frames;
	cfg.pUserData = d;
	if (p->go_data != 0) {
		cfg.dataCallback = go_data;
	} else {
		cfg.dataCallback = p->capture ? capture_data : playback_data;
	}
	ma_device_id *pid = NULL;
	if (id != NULL) {
		memcpy(&d->id, id, sizeof d->id);
		pid = &d->id;
	}
	if (p->capture) {
		cfg.capture.pDeviceID = pid;
		cfg.capture.format = ma_format_s16;
		cfg.capture.channels = p->channels;
		cfg.capture.shareMode = ma_share_mode_shared;
		cfg.pulse.pStreamNameCapture = "sdkpp voice capture";
	} else {
		cfg.playback.pDeviceID = pid;
		cfg.playback.format = ma_format_s16;
		cfg.playback.channels = p->channels;
		cfg.playback.shareMode = ma_share_mode_shared;
		cfg.pulse.pStreamNamePlayback = "sdkpp voice playback";
	}
	ma_result r = ma_device_init(&c->ctx, &cfg, &d->dev);
	if (r != MA_SUCCESS) {
		free(d);
		return r;
	}
	*out = d;
	return MA_SUCCESS;
}

int sdkpp_device_start(sdkpp_device *d) { return ma_device_start(&d->dev); }

int sdkpp_device_stop(sdkpp_device *d) { return ma_device_stop(&d->dev); }

int sdkpp_device_is_started(sdkpp_device *d) { return ma_device_is_started(&d->dev); }

uint32_t sdkpp_device_sample_rate(sdkpp_device *d) { return d->dev.sampleRate; }

void sdkpp_device_close(sdkpp_device *d) {
	ma_device_uninit(&d->dev);
	free(d);
}
