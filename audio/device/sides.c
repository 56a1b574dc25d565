#include "sides.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#include <windows.h>
#else
#include <fcntl.h>
#include <time.h>
#include <unistd.h>
#endif

// sdkpp_ring_state is package ring's state struct, field for field (ring.go: state). Every access
// is sequentially consistent, as Go's sync/atomic is: the wait protocol (store a waiting flag,
// then look at the fill; store the fill, then look at the flag) needs it.
typedef struct {
	_Atomic uint64_t w;
	char pad_w[56];
	_Atomic uint64_t r;
	char pad_r[56];
	_Atomic uint64_t overruns;
	_Atomic uint64_t overrun_samples;
	_Atomic uint64_t underruns;
	_Atomic uint64_t underrun_samples;
	_Atomic uint64_t data_need;
	_Atomic uint64_t space_need;
	_Atomic uint32_t data_waiting;
	_Atomic uint32_t space_waiting;
} sdkpp_ring_state;

struct sdkpp_notifier {
	_Atomic uint32_t fired;
	_Atomic int closed;
#ifdef _WIN32
	HANDLE event;
#else
	int fd[2];
#endif
};

struct sdkpp_side {
	sdkpp_ring_state *st;
	int16_t *buf;
	uint64_t cap;
	uint64_t mask;
	uint32_t channels;
	sdkpp_notifier *n;
	_Atomic uint64_t periods;
	_Atomic uint64_t samples;
	// take is the playback side's take clock: sdkpp_take_clock's layout, atomically accessed.
	struct {
		_Atomic uint64_t seq;
		_Atomic int64_t last_ns;
	} take;
};

_Static_assert(sizeof(((sdkpp_side *)0)->take) == sizeof(sdkpp_take_clock), "take clock layout");

sdkpp_notifier *sdkpp_notifier_new(void) {
	sdkpp_notifier *n = calloc(1, sizeof *n);
	if (n == NULL) {
		return NULL;
	}
#ifdef _WIN32
	n->event = CreateEventW(NULL, FALSE, FALSE, NULL);
	if (n->event == NULL) {
		free(n);
		return NULL;
	}
#else
	if (pipe(n->fd) != 0) {
		free(n);
		return NULL;
	}
	for (int i = 0; i < 2; i++) {
		fcntl(n->fd[i], F_SETFL, fcntl(n->fd[i], F_GETFL) | O_NONBLOCK);
		fcntl(n->fd[i], F_SETFD, FD_CLOEXEC);
	}
#endif
	return n;
}

uintptr_t sdkpp_notifier_handle(sdkpp_notifier *n) {
#ifdef _WIN32
	return (uintptr_t)n->event;
#else
	return (uintptr_t)n->fd[0];
#endif
}

uint32_t sdkpp_notifier_take(sdkpp_notifier *n) { return atomic_exchange(&n->fired, 0); }

uint32_t *sdkpp_notifier_fired(sdkpp_notifier *n) { return (uint32_t *)&n->fired; }

// signal raises bit and wakes the pump unless a wake-up is already pending (bits set and not yet
// taken: the pump takes every bit after it wakes). A full pipe means the pump has bytes to read.
static void notifier_signal(sdkpp_notifier *n, uint32_t bit) {
	if (atomic_fetch_or(&n->fired, bit) != 0) {
		return;
	}
#ifdef _WIN32
	SetEvent(n->event);
#else
	char b = 1;
	ssize_t done = write(n->fd[1], &b, 1);
	(void)done;
#endif
}

void sdkpp_notifier_close(sdkpp_notifier *n) {
	atomic_store(&n->closed, 1);
#ifdef _WIN32
	SetEvent(n->event);
#else
	if (n->fd[1] >= 0) {
		close(n->fd[1]);
		n->fd[1] = -1;
	}
#endif
}

int sdkpp_notifier_closed(sdkpp_notifier *n) { return atomic_load(&n->closed); }

void sdkpp_notifier_free(sdkpp_notifier *n) {
#ifdef _WIN32
	CloseHandle(n->event);
#else
	// The read end belongs to the pump's file, which closes it.
#endif
	free(n);
}

sdkpp_side *sdkpp_side_new(void *state, int16_t *buf, uint64_t cap, uint32_t channels,
                           sdkpp_notifier *n) {
	sdkpp_side *s = calloc(1, sizeof *s);
	if (s == NULL) {
		return NULL;
	}
	s->st = state;
	s->buf = buf;
	s->cap = cap;
	s->mask = cap - 1;
	s->channels = channels;
	s->n = n;
	return s;
}

void sdkpp_side_free(sdkpp_side *s) { free(s); }

// wake claims the waiter's wake-up, if it waits, and signals the pump.
static void wake(_Atomic uint32_t *waiting, sdkpp_notifier *n, uint32_t bit) {
	uint32_t one = 1;
	if (atomic_load(waiting) == 0 || !atomic_compare_exchange_strong(waiting, &one, 0)) {
		return;
	}
	notifier_signal(n, bit);
}

// ring.Ring.Write, for the capture side.
void sdkpp_side_captured(sdkpp_side *s, const int16_t *in, uint32_t frames) {
	sdkpp_ring_state *st = s->st;
	uint64_t n = (uint64_t)frames * s->channels;
	uint64_t w = atomic_load(&st->w);
	uint64_t free_ = s->cap - (w - atomic_load(&st->r));
	atomic_fetch_add(&s->periods, 1);
	atomic_fetch_add(&s->samples, n);
	if (n > free_) {
		atomic_fetch_add(&st->overruns, 1);
		atomic_fetch_add(&st->overrun_samples, n - free_);
		n = free_;
	}
	if (n > 0) {
		uint64_t start = w & s->mask;
		uint64_t first = s->cap - start < n ? s->cap - start : n;
		memcpy(s->buf + start, in, first * sizeof(int16_t));
		memcpy(s->buf, in + first, (n - first) * sizeof(int16_t));
		atomic_store(&st->w, w + n);
	}
	if (w + n - atomic_load(&st->r) >= atomic_load(&st->data_need)) {
		wake(&st->data_waiting, s->n, SDKPP_WAKE_DATA);
	}
}

// ring.Ring.Read, for the playback side, and silence for what the ring lacks.
void sdkpp_side_play(sdkpp_side *s, int16_t *out, uint32_t frames) {
	sdkpp_ring_state *st = s->st;
	uint64_t want = (uint64_t)frames * s->channels;
	uint64_t rd = atomic_load(&st->r);
	uint64_t avail = atomic_load(&st->w) - rd;
	uint64_t n = want;
	atomic_fetch_add(&s->periods, 1);
	atomic_fetch_add(&s->samples, want);
	if (n > avail) {
		atomic_fetch_add(&st->underruns, 1);
		atomic_fetch_add(&st->underrun_samples, n - avail);
		n = avail;
	}
	if (n > 0) {
		uint64_t start = rd & s->mask;
		uint64_t first = s->cap - start < n ? s->cap - start : n;
		memcpy(out, s->buf + start, first * sizeof(int16_t));
		memcpy(out + first, s->buf, (n - first) * sizeof(int16_t));
		atomic_store(&st->r, rd + n);
	}
	memset(out + n, 0, (want - n) * sizeof(int16_t));
	// The take clock, after the read index: a reader that sees this take sees its fill.
	atomic_fetch_add(&s->take.seq, 1);
	atomic_store(&s->take.last_ns, sdkpp_clock_ns());
	atomic_fetch_add(&s->take.seq, 1);
	wake(&st->space_waiting, s->n, SDKPP_WAKE_SPACE);
}

int64_t sdkpp_clock_ns(void) {
#ifdef _WIN32
	// The frequency is fixed at boot: whoever comes first stores it, all with the same value.
	static _Atomic int64_t freq;
	int64_t f = atomic_load_explicit(&freq, memory_order_relaxed);
	if (f == 0) {
		LARGE_INTEGER q;
		QueryPerformanceFrequency(&q);
		f = q.QuadPart;
		atomic_store_explicit(&freq, f, memory_order_relaxed);
	}
	LARGE_INTEGER now;
	QueryPerformanceCounter(&now);
	return now.QuadPart / f * 1000000000 + now.QuadPart % f * 1000000000 / f;
#else
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
#endif
}

sdkpp_take_clock *sdkpp_side_take_clock(sdkpp_side *s) { return (sdkpp_take_clock *)&s->take; }

void sdkpp_side_counts(sdkpp_side *s, uint64_t *periods, uint64_t *samples) {
	*periods = atomic_load(&s->periods);
	*samples = atomic_load(&s->samples);
}
