// The thread of osthread.Go: created detached, it calls back into Go and ends when that returns.
#include <stdint.h>
#include "_cgo_export.h"

#ifdef _WIN32
#include <windows.h>

static DWORD WINAPI sdkpp_osthread_main(LPVOID arg) {
	sdkppOSThreadRun((uintptr_t)arg);
	return 0;
}

int sdkpp_osthread_start(uintptr_t h) {
	HANDLE t = CreateThread(NULL, 0, sdkpp_osthread_main, (LPVOID)h, 0, NULL);
	if (t == NULL) {
		return (int)GetLastError();
	}
	CloseHandle(t);
	return 0;
}
#else
#include <pthread.h>

static void* sdkpp_osthread_main(void* arg) {
	sdkppOSThreadRun((uintptr_t)arg);
	return NULL;
}

int sdkpp_osthread_start(uintptr_t h) {
	pthread_attr_t attr;
	int rc = pthread_attr_init(&attr);
	if (rc != 0) {
		return rc;
	}
	rc = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (rc == 0) {
		pthread_t t;
		rc = pthread_create(&t, &attr, sdkpp_osthread_main, (void*)h);
	}
	pthread_attr_destroy(&attr);
	return rc;
}
#endif
