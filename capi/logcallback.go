package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include -DSDKPP_NO_PROTOTYPES -DSDKPP_BUILDING
#include <stdint.h>
#include "sdkpp.h"

static inline void sdkpp_call_fallback_log(Sdkpp_Client_LogCallback cb, Sdkpp_String message, Sdkpp_LoggingSeverity severity, uintptr_t userData) {
	cb(message, severity, (void*)userData);
}
*/
import "C"

import (
	"unsafe"

	"sdkpp/core"
)

// Sdkpp_SetLogCallback sends the messages no Client's log took to callback instead of standard
// error (core.SetFallbackLogCallback).
//
//export Sdkpp_SetLogCallback
func Sdkpp_SetLogCallback(callback C.Sdkpp_Client_LogCallback, userDataFree C.Sdkpp_FreeFn, userData unsafe.Pointer, minSeverity C.Sdkpp_LoggingSeverity) {
	const fn = "SetLogCallback"
	defer guard(fn)
	ud := C.uintptr_t(uintptr(userData))
	release := userDataReleaser(userDataFree, ud)
	sev := core.LoggingSeverity(minSeverity)
	if !sev.Valid() {
		release()
		refuse(fn, "minSeverity: %d is not a value of LoggingSeverity", int64(minSeverity))
		return
	}
	if callback == nil {
		release()
		core.SetFallbackLogCallback(core.Callback[core.ClientLogCallback]{}, sev)
		return
	}
	core.SetFallbackLogCallback(core.Callback[core.ClientLogCallback]{
		Fn: func(message string, severity core.LoggingSeverity) {
			C.sdkpp_call_fallback_log(callback, cString(message), C.Sdkpp_LoggingSeverity(severity), ud)
		},
		Release: release,
	}, sev)
}
