// A C++ game built against a sdkpp package through its CMake config package (tests/dist/run.sh).
#define SDKPP_IMPLEMENTATION
#include "sdkpp.hpp"

#include <cstdio>

int main()
{
    if (sdkpp::Client::GetVersionMajor() != SDKPP_VERSION_MAJOR ||
        sdkpp::Client::GetVersionMinor() != SDKPP_VERSION_MINOR ||
        sdkpp::Client::GetVersionPatch() != SDKPP_VERSION_PATCH) {
        std::fprintf(stderr, "game.cpp: the library's version is not the header's\n");
        return 1;
    }
    sdkpp::Client client;
    client.SetApplicationId(1234567890);
    sdkpp::RunCallbacks();
    if (client.GetApplicationId() != 1234567890) {
        std::fprintf(stderr, "game.cpp: the application id did not stick\n");
        return 1;
    }
    std::printf("C++ game: sdkpp %d.%d.%d (%s)\n", sdkpp::Client::GetVersionMajor(),
                sdkpp::Client::GetVersionMinor(), sdkpp::Client::GetVersionPatch(),
                sdkpp::Client::GetVersionHash().c_str());
    return 0;
}
