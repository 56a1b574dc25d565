// The companion threads of hookrelay (relay.c).
#include <stdint.h>

// sdkpp_hook_relay runs fn(arg) on the calling thread's companion thread and returns when fn has.
void sdkpp_hook_relay(void (*fn)(void*), void* arg);
// sdkpp_hook_relay_live counts the companion threads that have not ended.
int sdkpp_hook_relay_live(void);
// sdkpp_hook_relay_probe returns the system id of the calling thread's companion (for tests).
uint64_t sdkpp_hook_relay_probe(void);
// sdkpp_hook_relay_probe_thread probes calls times from a new thread, which then ends, and
// reports that thread's id, its companion's and whether every probe found the same companion (for
// tests; not on Windows). It returns 0 or the system error of creating or joining the thread.
int sdkpp_hook_relay_probe_thread(int calls, uint64_t* caller, uint64_t* companion, int* same);
