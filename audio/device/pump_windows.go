package device

/*
#include "sides.h"
*/
import "C"

import "syscall"

// pump waits on the notifier's event and delivers each wake-up, until the notifier is closed.
func (r *rings) pump() {
	defer close(r.pumpDone)
	h := syscall.Handle(C.sdkpp_notifier_handle(r.n))
	for {
		_, err := syscall.WaitForSingleObject(h, syscall.INFINITE)
		r.deliver()
		if err != nil || C.sdkpp_notifier_closed(r.n) != 0 {
			return
		}
	}
}
