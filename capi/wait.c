// The wait of Sdkpp_WaitForCallbacks and Sdkpp_WaitForCallbackSignal, outside Go: a thread of a
// managed runtime that suspends threads in native code with signals (Mono) must not block in Go,
// where it would wait on a goroutine stack for locks the runtime's other suspended threads may
// hold. Go bumps a counter (sdkpp_wait_wake) each time a callback is queued; waiters sleep here
// until it changes or their timeout passes.
#include <stdatomic.h>
#include <stdint.h>

#include "sdkpp.h"

#ifdef _WIN32
#include <windows.h>

static SRWLOCK sdkpp_wait_lock = SRWLOCK_INIT;
static CONDITION_VARIABLE sdkpp_wait_cond = CONDITION_VARIABLE_INIT;
static uint64_t sdkpp_wait_seq_value;

uint64_t sdkpp_wait_seq(void) {
	AcquireSRWLockExclusive(&sdkpp_wait_lock);
	uint64_t v = sdkpp_wait_seq_value;
	ReleaseSRWLockExclusive(&sdkpp_wait_lock);
	return v;
}

void sdkpp_wait_wake(void) {
	AcquireSRWLockExclusive(&sdkpp_wait_lock);
	sdkpp_wait_seq_value++;
	ReleaseSRWLockExclusive(&sdkpp_wait_lock);
	WakeAllConditionVariable(&sdkpp_wait_cond);
}

void sdkpp_wait_for_wake(uint64_t seen, uint32_t timeout_ms) {
	ULONGLONG deadline = GetTickCount64() + timeout_ms;
	AcquireSRWLockExclusive(&sdkpp_wait_lock);
	while (sdkpp_wait_seq_value == seen) {
		ULONGLONG now = GetTickCount64();
		if (now >= deadline) {
			break;
		}
		ULONGLONG left = deadline - now;
		SleepConditionVariableSRW(&sdkpp_wait_cond, &sdkpp_wait_lock, left > 0xFFFFFFF0u ? 0xFFFFFFF0u : (DWORD)left, 0);
	}
	ReleaseSRWLockExclusive(&sdkpp_wait_lock);
}
#else
#include <pthread.h>
#include <time.h>

static pthread_mutex_t sdkpp_wait_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sdkpp_wait_cond;
static pthread_once_t sdkpp_wait_once = PTHREAD_ONCE_INIT;
static uint64_t sdkpp_wait_seq_value;

// The condition waits on the monotonic clock, so that a change of the wall clock does not
// shorten or stretch a timeout.
static void sdkpp_wait_init(void) {
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&sdkpp_wait_cond, &attr);
	pthread_condattr_destroy(&attr);
}

uint64_t sdkpp_wait_seq(void) {
	pthread_once(&sdkpp_wait_once, sdkpp_wait_init);
	pthread_mutex_lock(&sdkpp_wait_mu);
	uint64_t v = sdkpp_wait_seq_value;
	pthread_mutex_unlock(&sdkpp_wait_mu);
	return v;
}

void sdkpp_wait_wake(void) {
	pthread_once(&sdkpp_wait_once, sdkpp_wait_init);
	pthread_mutex_lock(&sdkpp_wait_mu);
	sdkpp_wait_seq_value++;
	pthread_cond_broadcast(&sdkpp_wait_cond);
	pthread_mutex_unlock(&sdkpp_wait_mu);
}

void sdkpp_wait_for_wake(uint64_t seen, uint32_t timeout_ms) {
	pthread_once(&sdkpp_wait_once, sdkpp_wait_init);
	struct timespec deadline;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += timeout_ms / 1000;
	deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&sdkpp_wait_mu);
	while (sdkpp_wait_seq_value == seen) {
		if (pthread_cond_timedwait(&sdkpp_wait_cond, &sdkpp_wait_mu, &deadline) != 0) {
			break; // ETIMEDOUT (or an error: the caller rechecks the queue either way)
		}
	}
	pthread_mutex_unlock(&sdkpp_wait_mu);
}
#endif

SDKPP_API bool SDKPP_CALL Sdkpp_WaitForCallbackSignal(uint64_t* seen, uint32_t timeoutMs) {
	if (seen == NULL) {
		return false;
	}
	uint64_t was = *seen;
	if (timeoutMs > 0 && sdkpp_wait_seq() == was) {
		sdkpp_wait_for_wake(was, timeoutMs);
	}
	*seen = sdkpp_wait_seq();
	return *seen != was;
}

// sdkpp_run_queued (runtime.go) runs the queued callbacks in Go and reports whether callbacks are
// still queued (queued while it ran, or left to a run in progress on another thread).
extern _Bool sdkpp_run_queued(void);

// The count of queued callbacks (sdkpp_wait_seq) when the last run began, and whether a run left
// callbacks queued.
static _Atomic uint64_t sdkpp_ran_seq;
static _Atomic _Bool sdkpp_run_again;

// Sdkpp_RunCallbacks enters Go only when a callback was queued since the last run began. A game
// calls it every frame, mostly with nothing queued: a call from a game's thread into Go costs a
// transition into the runtime, and each one leaves the runtime's monitor thread polling at its
// shortest interval for a while (perf showed it as most of what a quiet voice call costs a
// native game). A callback queued just as the count is read runs on the next call.
SDKPP_API void SDKPP_CALL Sdkpp_RunCallbacks(void) {
	uint64_t queued = sdkpp_wait_seq();
	if (queued == atomic_load(&sdkpp_ran_seq) && !atomic_load(&sdkpp_run_again)) {
		return;
	}
	atomic_store(&sdkpp_ran_seq, queued);
	atomic_store(&sdkpp_run_again, 0);
	if (sdkpp_run_queued()) {
		atomic_store(&sdkpp_run_again, 1);
	}
}
