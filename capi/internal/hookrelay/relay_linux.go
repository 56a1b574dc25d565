package hookrelay

/*
#include "relay.h"
*/
import "C"

import "fmt"

// probeThread probes calls times from a new thread that ends afterwards, and returns that thread's
// id, its companion's and whether every probe found the same companion.
func probeThread(calls int) (caller, companion uint64, same bool, err error) {
	var c, p C.uint64_t
	var s C.int
	if rc := C.sdkpp_hook_relay_probe_thread(C.int(calls), &c, &p, &s); rc != 0 {
		return 0, 0, false, fmt.Errorf("hookrelay: probe thread: system error %d", int(rc))
	}
	return uint64(c), uint64(p), s != 0, nil
}
