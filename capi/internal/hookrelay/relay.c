// sdkpp_hook_relay: runs fn(arg) on the calling thread's companion, a thread that runs nothing but
// the game's hooks, and returns when fn has returned. The companion is created at the first call
// and ends when the calling thread ends.
#include <stdint.h>
#include <stdlib.h>

#include "relay.h"

enum { RELAY_IDLE, RELAY_JOB, RELAY_DONE, RELAY_QUIT };

#ifdef _WIN32
#include <windows.h>

typedef struct relay {
	SRWLOCK lock;
	CONDITION_VARIABLE cond;
	int state;
	void (*fn)(void*);
	void* arg;
} relay;

static volatile LONG relay_live;
static DWORD relay_fls = FLS_OUT_OF_INDEXES;
static INIT_ONCE relay_once = INIT_ONCE_STATIC_INIT;

static DWORD WINAPI relay_main(LPVOID p) {
	relay* r = p;
	AcquireSRWLockExclusive(&r->lock);
	for (;;) {
		while (r->state != RELAY_JOB && r->state != RELAY_QUIT) {
			SleepConditionVariableSRW(&r->cond, &r->lock, INFINITE, 0);
		}
		if (r->state == RELAY_QUIT) {
			break;
		}
		ReleaseSRWLockExclusive(&r->lock);
		r->fn(r->arg);
		AcquireSRWLockExclusive(&r->lock);
		r->state = RELAY_DONE;
		WakeAllConditionVariable(&r->cond);
	}
	ReleaseSRWLockExclusive(&r->lock);
	free(r);
	InterlockedDecrement(&relay_live);
	return 0;
}

// relay_end runs when the owning thread ends: the companion quits and frees the relay.
static void WINAPI relay_end(PVOID p) {
	relay* r = p;
	if (r == NULL) {
		return;
	}
	AcquireSRWLockExclusive(&r->lock);
	r->state = RELAY_QUIT;
	WakeAllConditionVariable(&r->cond);
	ReleaseSRWLockExclusive(&r->lock);
}

static BOOL CALLBACK relay_init(PINIT_ONCE once, PVOID param, PVOID* ctx) {
	relay_fls = FlsAlloc(relay_end);
	return TRUE;
}

static relay* relay_get(void) {
	InitOnceExecuteOnce(&relay_once, relay_init, NULL, NULL);
	if (relay_fls == FLS_OUT_OF_INDEXES) {
		return NULL;
	}
	relay* r = FlsGetValue(relay_fls);
	if (r != NULL) {
		return r;
	}
	r = calloc(1, sizeof *r);
	if (r == NULL) {
		return NULL;
	}
	InitializeSRWLock(&r->lock);
	InitializeConditionVariable(&r->cond);
	InterlockedIncrement(&relay_live);
	HANDLE t = CreateThread(NULL, 0, relay_main, r, 0, NULL);
	if (t == NULL) {
		InterlockedDecrement(&relay_live);
		free(r);
		return NULL;
	}
	CloseHandle(t);
	FlsSetValue(relay_fls, r);
	return r;
}

void sdkpp_hook_relay(void (*fn)(void*), void* arg) {
	relay* r = relay_get();
	if (r == NULL) {
		fn(arg); // no companion: run it here rather than not at all
		return;
	}
	AcquireSRWLockExclusive(&r->lock);
	r->fn = fn;
	r->arg = arg;
	r->state = RELAY_JOB;
	WakeAllConditionVariable(&r->cond);
	while (r->state != RELAY_DONE) {
		SleepConditionVariableSRW(&r->cond, &r->lock, INFINITE, 0);
	}
	r->state = RELAY_IDLE;
	ReleaseSRWLockExclusive(&r->lock);
}

int sdkpp_hook_relay_live(void) {
	return (int)relay_live;
}

static void relay_probe(void* p) {
	*(uint64_t*)p = GetCurrentThreadId();
}

uint64_t sdkpp_hook_relay_probe(void) {
	uint64_t id = 0;
	sdkpp_hook_relay(relay_probe, &id);
	return id;
}
#else
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef struct relay {
	pthread_mutex_t mu;
	pthread_cond_t cond;
	int state;
	void (*fn)(void*);
	void* arg;
} relay;

static int relay_live;
static pthread_key_t relay_key;
static int relay_key_ok;
static pthread_once_t relay_once = PTHREAD_ONCE_INIT;

static void* relay_main(void* p) {
	relay* r = p;
	pthread_mutex_lock(&r->mu);
	for (;;) {
		while (r->state != RELAY_JOB && r->state != RELAY_QUIT) {
			pthread_cond_wait(&r->cond, &r->mu);
		}
		if (r->state == RELAY_QUIT) {
			break;
		}
		pthread_mutex_unlock(&r->mu);
		r->fn(r->arg);
		pthread_mutex_lock(&r->mu);
		r->state = RELAY_DONE;
		pthread_cond_broadcast(&r->cond);
	}
	pthread_mutex_unlock(&r->mu);
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->cond);
	free(r);
	__atomic_sub_fetch(&relay_live, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

// relay_end runs when the owning thread ends: the companion quits and frees the relay.
static void relay_end(void* p) {
	relay* r = p;
	pthread_mutex_lock(&r->mu);
	r->state = RELAY_QUIT;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->mu);
}

static void relay_init(void) {
	relay_key_ok = pthread_key_create(&relay_key, relay_end) == 0;
}

static relay* relay_get(void) {
	pthread_once(&relay_once, relay_init);
	if (!relay_key_ok) {
		return NULL;
	}
	relay* r = pthread_getspecific(relay_key);
	if (r != NULL) {
		return r;
	}
	r = calloc(1, sizeof *r);
	if (r == NULL) {
		return NULL;
	}
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cond, NULL);
	pthread_attr_t attr;
	pthread_t t;
	int rc = pthread_attr_init(&attr);
	if (rc == 0) {
		rc = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		__atomic_add_fetch(&relay_live, 1, __ATOMIC_SEQ_CST);
		if (rc == 0) {
			rc = pthread_create(&t, &attr, relay_main, r);
		}
		if (rc != 0) {
			__atomic_sub_fetch(&relay_live, 1, __ATOMIC_SEQ_CST);
		}
		pthread_attr_destroy(&attr);
	}
	if (rc != 0) {
		pthread_mutex_destroy(&r->mu);
		pthread_cond_destroy(&r->cond);
		free(r);
		return NULL;
	}
	pthread_setspecific(relay_key, r);
	return r;
}

void sdkpp_hook_relay(void (*fn)(void*), void* arg) {
	relay* r = relay_get();
	if (r == NULL) {
		fn(arg); // no companion: run it here rather than not at all
		return;
	}
	pthread_mutex_lock(&r->mu);
	r->fn = fn;
	r->arg = arg;
	r->state = RELAY_JOB;
	pthread_cond_broadcast(&r->cond);
	while (r->state != RELAY_DONE) {
		pthread_cond_wait(&r->cond, &r->mu);
	}
	r->state = RELAY_IDLE;
	pthread_mutex_unlock(&r->mu);
}

int sdkpp_hook_relay_live(void) {
	return __atomic_load_n(&relay_live, __ATOMIC_SEQ_CST);
}

static void relay_probe(void* p) {
	*(uint64_t*)p = (uint64_t)syscall(SYS_gettid);
}

uint64_t sdkpp_hook_relay_probe(void) {
	uint64_t id = 0;
	sdkpp_hook_relay(relay_probe, &id);
	return id;
}

typedef struct probe_run {
	int calls;
	uint64_t caller, companion;
	int same;
} probe_run;

static void* probe_main(void* p) {
	probe_run* run = p;
	run->caller = (uint64_t)syscall(SYS_gettid);
	run->same = 1;
	for (int i = 0; i < run->calls; i++) {
		uint64_t id = sdkpp_hook_relay_probe();
		if (i == 0) {
			run->companion = id;
		} else if (id != run->companion) {
			run->same = 0;
		}
	}
	return NULL;
}

int sdkpp_hook_relay_probe_thread(int calls, uint64_t* caller, uint64_t* companion, int* same) {
	probe_run run = {calls, 0, 0, 0};
	pthread_t t;
	int rc = pthread_create(&t, NULL, probe_main, &run);
	if (rc != 0) {
		return rc;
	}
	rc = pthread_join(t, NULL);
	*caller = run.caller;
	*companion = run.companion;
	*same = run.same;
	return rc;
}
#endif
