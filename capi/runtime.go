// Command capi is built with -buildmode=c-shared into libsdkpp.so / sdkpp.dll: the C ABI of
// sdkpp. It is glue only: the object table, strings in and out, callback trampolines, and the
// runtime functions of sdkpp.h. Everything else lives in core/.
package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include -DSDKPP_NO_PROTOTYPES -DSDKPP_BUILDING
#include <stdlib.h>
#include <string.h>
#include "sdkpp.h"

// sdkpp_malloc is malloc itself: cgo's C.malloc aborts the process when malloc fails, and a
// game's request for too much memory must get NULL instead.
static inline void* sdkpp_malloc(size_t size) { return malloc(size); }

static inline void sdkpp_free_userdata(Sdkpp_FreeFn fn, uintptr_t ud) {
	if (fn) fn((void*)ud);
}

static inline void sdkpp_fill_abi(Sdkpp_AbiInfo* info) {
	Sdkpp_AbiInfo mine = SDKPP_ABI_INFO_INIT;
	*info = mine;
}

// wait.c
uint64_t sdkpp_wait_seq(void);
void sdkpp_wait_wake(void);
void sdkpp_wait_for_wake(uint64_t seen, uint32_t timeout_ms);
*/
import "C"

import (
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"unsafe"

	"sdkpp/capi/internal/borrow"
	"sdkpp/capi/internal/handle"
	_ "sdkpp/capi/internal/hookrelay" // sdkpp_hook_relay, which the direct callbacks' trampolines call
	"sdkpp/core"
)

func main() {}

// objects is the table behind every handle a game holds.
var objects handle.Table

// abiRefused is set when a binding failed Sdkpp_CheckAbi: from then on no object is created.
var abiRefused atomic.Bool

// refuse logs why a call was refused.
func refuse(fn, format string, args ...any) {
	core.Log(core.LoggingSeverityError, "Sdkpp_%s: %s", fn, fmt.Sprintf(format, args...))
}

// guard turns a panic in an exported function into a logged error: nothing a game passes may
// crash its process.
func guard(fn string) {
	if v := recover(); v != nil {
		core.Log(core.LoggingSeverityError, "Sdkpp_%s: internal error: %v\n%s", fn, v, debug.Stack())
	}
}

// idOf reads the id in a handle struct { void* opaque; }.
func idOf(p unsafe.Pointer) handle.ID { return handle.ID(*(*uintptr)(p)) }

// setID writes id into a handle struct.
func setID(p unsafe.Pointer, id handle.ID) { *(*uintptr)(p) = uintptr(id) }

// describe turns a table error into a message that names the class.
func describe(err error, want handle.Type) string {
	if wt, ok := err.(*handle.WrongTypeError); ok {
		got := typeNames[wt.Got]
		if got == "" {
			got = fmt.Sprintf("type %d", wt.Got)
		}
		return fmt.Sprintf("expected an object of class %s but got one of class %s", typeNames[want], got)
	}
	return fmt.Sprintf("%s: %v", typeNames[want], err)
}

// lookup returns the live entry behind self.
func lookup(fn string, self unsafe.Pointer, typ handle.Type) (*handle.Entry, bool) {
	return checked(fn, self, typ, objects.Get)
}

// checked applies a table operation to the id in self, logging why it is refused.
func checked(fn string, self unsafe.Pointer, typ handle.Type, op func(handle.ID, handle.Type) (*handle.Entry, error)) (*handle.Entry, bool) {
	if self == nil {
		refuse(fn, "%s pointer is NULL", typeNames[typ])
		return nil, false
	}
	e, err := op(idOf(self), typ)
	if err != nil {
		refuse(fn, "%s", describe(err, typ))
		return nil, false
	}
	return e, true
}

// add stores v and writes its id into the handle at out (zero when refused).
func add(fn string, out unsafe.Pointer, typ handle.Type, v any) {
	setID(out, handle.ID(addAdopted(typ, v)))
}

// addAdopted stores v and returns its id, or 0 (logged) when it cannot.
func addAdopted(typ handle.Type, v any) uintptr {
	if abiRefused.Load() {
		core.Log(core.LoggingSeverityError, "refusing to create an object of class %s: the binding does not match this library (see the Sdkpp_CheckAbi error)", typeNames[typ])
		return 0
	}
	id, err := objects.Add(typ, v)
	if err != nil {
		core.Log(core.LoggingSeverityError, "cannot create an object of class %s: %v", typeNames[typ], err)
		return 0
	}
	return uintptr(id)
}

// addAdoptedOpt is addAdopted for an optional object: nil gives 0.
func addAdoptedOpt[T any](typ handle.Type, v *T) uintptr {
	if v == nil {
		return 0
	}
	return addAdopted(typ, v)
}

// drop removes the object behind self, zeroes self and returns the object.
func drop(fn string, self unsafe.Pointer, typ handle.Type) (any, bool) {
	e, ok := checked(fn, self, typ, objects.Remove)
	if !ok {
		return nil, false
	}
	setID(self, 0)
	return e.Value, true
}

// goString copies a borrowed C string, refusing a NULL pointer with a size, a size over the
// limit and invalid UTF-8.
func goString(fn, param string, s C.Sdkpp_String) (string, bool) {
	v, err := borrow.Str(*(*borrow.String)(unsafe.Pointer(&s)))
	if err != nil {
		refuse(fn, "%s: %v", param, err)
		return "", false
	}
	return v, true
}

// The Go mirrors of the C layouts that borrow reads must match them exactly: a compile error
// (a constant index out of range) here says they drifted.
var (
	_ = [1]struct{}{}[unsafe.Sizeof(C.Sdkpp_String{})-unsafe.Sizeof(borrow.String{})]
	_ = [1]struct{}{}[unsafe.Sizeof(borrow.String{})-unsafe.Sizeof(C.Sdkpp_String{})]
	_ = [1]struct{}{}[unsafe.Offsetof(C.Sdkpp_String{}.size)-unsafe.Offsetof(borrow.String{}.Size)]
	_ = [1]struct{}{}[unsafe.Sizeof(C.Sdkpp_Properties{})-unsafe.Sizeof(borrow.Properties{})]
	_ = [1]struct{}{}[unsafe.Sizeof(borrow.Properties{})-unsafe.Sizeof(C.Sdkpp_Properties{})]
	_ = [1]struct{}{}[unsafe.Offsetof(C.Sdkpp_Properties{}.keys)-unsafe.Offsetof(borrow.Properties{}.Keys)]
	_ = [1]struct{}{}[unsafe.Offsetof(C.Sdkpp_Properties{}.values)-unsafe.Offsetof(borrow.Properties{}.Values)]
)

// maxProperties bounds the entries of one Sdkpp_Properties.
const maxProperties = borrow.MaxProperties

// cString returns s in memory the caller frees with Sdkpp_Free. It is NUL-terminated for
// convenience; size excludes the NUL.
func cString(s string) C.Sdkpp_String {
	p := C.malloc(C.size_t(len(s) + 1))
	if p == nil {
		core.Log(core.LoggingSeverityError, "out of memory for a %d byte string", len(s))
		return C.Sdkpp_String{}
	}
	buf := unsafe.Slice((*byte)(p), len(s)+1)
	copy(buf, s)
	buf[len(s)] = 0
	return C.Sdkpp_String{ptr: (*C.uint8_t)(p), size: C.size_t(len(s))}
}

// goProperties copies a borrowed string map, refusing bad strings and duplicate keys.
func goProperties(fn, param string, p C.Sdkpp_Properties) (map[string]string, bool) {
	m, err := borrow.Props(*(*borrow.Properties)(unsafe.Pointer(&p)))
	if err != nil {
		refuse(fn, "%s: %v", param, err)
		return nil, false
	}
	return m, true
}

// cProperties returns m in memory the caller frees with Sdkpp_FreeProperties.
func cProperties(m map[string]string) C.Sdkpp_Properties {
	if len(m) == 0 {
		return C.Sdkpp_Properties{}
	}
	n := len(m)
	sz := C.size_t(unsafe.Sizeof(C.Sdkpp_String{}))
	keys := (*C.Sdkpp_String)(C.calloc(C.size_t(n), sz))
	values := (*C.Sdkpp_String)(C.calloc(C.size_t(n), sz))
	ks, vs := unsafe.Slice(keys, n), unsafe.Slice(values, n)
	i := 0
	for k, v := range m {
		ks[i], vs[i] = cString(k), cString(v)
		i++
	}
	return C.Sdkpp_Properties{size: C.size_t(n), keys: keys, values: values}
}

// goUint64s copies a borrowed span of ids.
func goUint64s(fn, param string, ptr unsafe.Pointer, size uint64) ([]uint64, bool) {
	ids, err := borrow.Uint64s(ptr, size)
	if err != nil {
		refuse(fn, "%s: %v", param, err)
		return nil, false
	}
	return ids, true
}

// goSpan checks a borrowed span of objects before its elements are read.
func goSpan(fn, param string, ptr unsafe.Pointer, size uint64) bool {
	if err := borrow.Span(ptr, size); err != nil {
		refuse(fn, "%s: %v", param, err)
		return false
	}
	return true
}

// cUint64s copies ids into memory the caller frees with Sdkpp_Free.
func cUint64s(ids []uint64) (unsafe.Pointer, int) {
	if len(ids) == 0 {
		return nil, 0
	}
	p := C.malloc(C.size_t(len(ids) * 8))
	copy(unsafe.Slice((*uint64)(p), len(ids)), ids)
	return p, len(ids)
}

// cObjects stores n objects and returns an array of their handle structs (one pointer-sized id
// each), which the caller adopts one by one and frees with Sdkpp_Free.
func cObjects(typ handle.Type, n int, obj func(i int) any) (unsafe.Pointer, int) {
	if n == 0 {
		return nil, 0
	}
	p := C.malloc(C.size_t(n) * C.size_t(unsafe.Sizeof(uintptr(0))))
	ids := unsafe.Slice((*uintptr)(p), n)
	for i := range ids {
		ids[i] = addAdopted(typ, obj(i))
	}
	return p, n
}

// userDataReleaser returns the function that hands userData back to the game's free function,
// at most once.
func userDataReleaser(free C.Sdkpp_FreeFn, ud C.uintptr_t) func() {
	var once sync.Once
	return func() {
		once.Do(func() { C.sdkpp_free_userdata(free, ud) })
	}
}

//export Sdkpp_Alloc
func Sdkpp_Alloc(size C.size_t) unsafe.Pointer {
	defer guard("Alloc")
	n, err := borrow.Alloc(uint64(size))
	if err != nil {
		refuse("Alloc", "%v", err)
		return nil
	}
	size = C.size_t(n)
	p := C.sdkpp_malloc(size)
	if p == nil {
		refuse("Alloc", "out of memory for %d bytes", uint64(size))
	}
	return p
}

//export Sdkpp_Free
func Sdkpp_Free(ptr unsafe.Pointer) {
	C.free(ptr)
}

//export Sdkpp_FreeProperties
func Sdkpp_FreeProperties(props C.Sdkpp_Properties) {
	defer guard("FreeProperties")
	if uint64(props.size) > maxProperties { // not the SDK's: freeing it would read past its end
		refuse("FreeProperties", "%d entries are over the limit of %d: not properties the SDK returned", uint64(props.size), maxProperties)
		return
	}
	if props.size > 0 {
		if props.keys != nil {
			for _, s := range unsafe.Slice(props.keys, int(props.size)) {
				C.free(unsafe.Pointer(s.ptr))
			}
		}
		if props.values != nil {
			for _, s := range unsafe.Slice(props.values, int(props.size)) {
				C.free(unsafe.Pointer(s.ptr))
			}
		}
	}
	C.free(unsafe.Pointer(props.keys))
	C.free(unsafe.Pointer(props.values))
}

// sdkpp_run_queued runs the queued callbacks for Sdkpp_RunCallbacks, which wait.c defines so that
// a call with nothing queued does not enter Go, and reports whether callbacks are still queued:
// queued while it ran, or left to a run that another thread (or a callback's own
// Sdkpp_RunCallbacks) has in progress.
//
//export sdkpp_run_queued
func sdkpp_run_queued() (queued C.bool) {
	defer guard("RunCallbacks")
	core.RunCallbacks()
	return C.bool(core.WaitCallbacks(0))
}

// Every queued callback counts in wait.c, for Sdkpp_WaitForCallbacks and
// Sdkpp_WaitForCallbackSignal.
func init() {
	core.OnCallbackQueued(func() { C.sdkpp_wait_wake() })
}

// Sdkpp_WaitForCallbacks sleeps in C (wait.c), not in Go: a managed runtime that suspends threads
// with signals (Mono) retries a thread it finds on a goroutine stack, and one waiting in Go for a
// lock held by a thread it has already suspended would make it retry for ever. Here the waiter
// takes no Go lock: it reads the queue's length atomically and sleeps on a C condition.
//
//export Sdkpp_WaitForCallbacks
func Sdkpp_WaitForCallbacks(timeoutMs C.uint32_t) (queued C.bool) {
	defer guard("WaitForCallbacks")
	if core.WaitCallbacks(0) || timeoutMs == 0 {
		return C.bool(core.WaitCallbacks(0))
	}
	seen := C.sdkpp_wait_seq() // before the check: a callback queued after it changes the count
	if core.WaitCallbacks(0) {
		return true
	}
	C.sdkpp_wait_for_wake(seen, timeoutMs)
	return C.bool(core.WaitCallbacks(0))
}

//export Sdkpp_ResetCallbacks
func Sdkpp_ResetCallbacks() {
	defer guard("ResetCallbacks")
	core.ResetCallbacks()
}

//export Sdkpp_SetFreeThreaded
func Sdkpp_SetFreeThreaded() {
	core.Log(core.LoggingSeverityInfo, "Sdkpp_SetFreeThreaded: sdkpp always runs callbacks inside Sdkpp_RunCallbacks")
}

//export Sdkpp_GetVersion
func Sdkpp_GetVersion() C.uint32_t { return C.SDKPP_VERSION }

//export Sdkpp_GetAbiVersion
func Sdkpp_GetAbiVersion() C.uint32_t { return abiVersion }

//export Sdkpp_GetObjectCount
func Sdkpp_GetObjectCount() C.uint64_t { return C.uint64_t(objects.Len()) }

//export Sdkpp_CheckAbi
func Sdkpp_CheckAbi(info *C.Sdkpp_AbiInfo) C.bool {
	defer guard("CheckAbi")
	if msg := abiMismatch(info); msg != "" {
		abiRefused.Store(true)
		core.Log(core.LoggingSeverityError, "ABI mismatch: %s; no objects will be created", msg)
		return false
	}
	return true
}

// abiMismatch compares a binding's ABI info with the library's and says what differs.
func abiMismatch(info *C.Sdkpp_AbiInfo) string {
	if info == nil {
		return "Sdkpp_CheckAbi was given NULL"
	}
	var mine C.Sdkpp_AbiInfo
	C.sdkpp_fill_abi(&mine)
	mine.abiVersion = abiVersion
	if info.structSize < C.uint32_t(unsafe.Sizeof(mine)) {
		return fmt.Sprintf("Sdkpp_AbiInfo of %d bytes, the library's has %d", info.structSize, mine.structSize)
	}
	checks := []struct {
		name       string
		got, wants C.uint32_t
	}{
		{"version", info.version, mine.version},
		{"ABI version (the header and the library were generated from different descriptions)", info.abiVersion, mine.abiVersion},
		{"sizeof(void*)", info.sizeofPointer, mine.sizeofPointer},
		{"sizeof(size_t)", info.sizeofSizeT, mine.sizeofSizeT},
		{"sizeof(bool)", info.sizeofBool, mine.sizeofBool},
		{"sizeof(enum)", info.sizeofEnum, mine.sizeofEnum},
		{"sizeof(Sdkpp_String)", info.sizeofString, mine.sizeofString},
		{"sizeof(Sdkpp_Properties)", info.sizeofProperties, mine.sizeofProperties},
		{"sizeof(span)", info.sizeofSpan, mine.sizeofSpan},
		{"sizeof(object)", info.sizeofObject, mine.sizeofObject},
	}
	for _, c := range checks {
		if c.got != c.wants {
			return fmt.Sprintf("the binding has %s = %#x, this library %#x", c.name, uint32(c.got), uint32(c.wants))
		}
	}
	return ""
}
