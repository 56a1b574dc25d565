/* Compiled with -fsyntax-only: the generated sdkpp.h and the prototypes cgo writes for the
 * library's exports (build/libsdkpp.h) must agree on every function's type, or this fails. */
#include "sdkpp.h"
#include "libsdkpp.h"
