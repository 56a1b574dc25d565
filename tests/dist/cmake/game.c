/* A C game built against a sdkpp package (tests/dist/run.sh): through its CMake config package, its
 * pkg-config file, or MSVC's import library. It checks that the library it loaded is the one its
 * header describes, then drives a client without a service. */
#include "sdkpp.h"

#include <stdio.h>
#include <string.h>

int main(void)
{
    Sdkpp_AbiInfo abi = SDKPP_ABI_INFO_INIT;
    if (!Sdkpp_CheckAbi(&abi)) {
        fprintf(stderr, "game.c: Sdkpp_CheckAbi refused the header's ABI\n");
        return 1;
    }
    int major = Sdkpp_Client_GetVersionMajor(), minor = Sdkpp_Client_GetVersionMinor(),
        patch = Sdkpp_Client_GetVersionPatch();
    if (major != SDKPP_VERSION_MAJOR || minor != SDKPP_VERSION_MINOR || patch != SDKPP_VERSION_PATCH) {
        fprintf(stderr, "game.c: library %d.%d.%d, header %d.%d.%d\n", major, minor, patch,
                SDKPP_VERSION_MAJOR, SDKPP_VERSION_MINOR, SDKPP_VERSION_PATCH);
        return 1;
    }
    Sdkpp_String hash;
    Sdkpp_Client_GetVersionHash(&hash);

    Sdkpp_Client client;
    Sdkpp_Client_Init(&client);
    Sdkpp_Client_SetApplicationId(&client, 1234567890);
    uint64_t appId = Sdkpp_Client_GetApplicationId(&client);
    Sdkpp_RunCallbacks();
    Sdkpp_Client_Drop(&client);
    if (appId != 1234567890) {
        fprintf(stderr, "game.c: application id %llu, want 1234567890\n", (unsigned long long)appId);
        return 1;
    }
    printf("C game: sdkpp %d.%d.%d (%.*s)\n", major, minor, patch, (int)hash.size, (const char*)hash.ptr);
    Sdkpp_Free(hash.ptr);
    return 0;
}
