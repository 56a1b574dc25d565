// A stand-in for Windows' bcryptprimitives.dll, for running Go programs under Wine 8.
//
// Since Go 1.24 the Go runtime draws its random bytes from ProcessPrng in bcryptprimitives.dll
// and loads that DLL from the system directory only. Wine 8 (Debian 12) has no ProcessPrng, so
// no Go program, and no Go DLL such as sdkpp.dll, can start there. This DLL exports ProcessPrng
// and fills the buffer from RtlGenRandom (advapi32's SystemFunction036), which Wine has. The
// Makefile cross-builds it with mingw and copies it into the test Wine prefix's
// windows/system32; it is never shipped.
#include <windows.h>

// RtlGenRandom's real name; ntsecapi.h declares it only under that alias.
BOOLEAN NTAPI SystemFunction036(PVOID buffer, ULONG length);

// ProcessPrng fills data with len cryptographically random bytes. Like the real one it always
// succeeds (it cannot return FALSE to a caller that does not check): a failure of the system
// generator ends the process.
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!SystemFunction036(data, n)) {
            TerminateProcess(GetCurrentProcess(), 0xC0000001); /* STATUS_UNSUCCESSFUL */
        }
        data += n;
        len -= n;
    }
    return TRUE;
}

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved)
{
    (void)instance;
    (void)reason;
    (void)reserved;
    return TRUE;
}
