// A sample game: what a game does with sdkpp before it signs a player in. It prints a transcript.
//
// Build and run it with `make demo`.
#define SDKPP_IMPLEMENTATION
#include "sdkpp.hpp"

#include <cstdio>
#include <string>

int main()
{
    uint64_t objectsAtStart = sdkpp::GetObjectCount();
    std::printf("== sdkpp sample game (library %d.%d.%d, build %s) ==\n", sdkpp::Client::GetVersionMajor(),
                sdkpp::Client::GetVersionMinor(), sdkpp::Client::GetVersionPatch(),
                sdkpp::Client::GetVersionHash().c_str());

    {
        sdkpp::Client client;
        client.AddLogCallback(
            [](std::string message, sdkpp::LoggingSeverity severity) {
                std::printf("  [sdk log, %s] %s\n", sdkpp::EnumToString(severity), message.c_str());
            },
            sdkpp::LoggingSeverity::Info);
        client.SetApplicationId(1234567890);
        std::printf("client created: status %s, application id %llu, HTTP timeout %d ms\n",
                    sdkpp::EnumToString(client.GetStatus()), (unsigned long long)client.GetApplicationId(),
                    client.GetHttpRequestTimeout());

        // Prepare account linking: scopes, a PKCE pair, and the authorization arguments.
        auto verifier = client.CreateAuthorizationCodeVerifier();
        sdkpp::AuthorizationArgs args;
        args.SetScopes(sdkpp::Client::GetDefaultCommunicationScopes());
        args.SetCodeChallenge(verifier.Challenge());
        args.SetIntegrationType(sdkpp::IntegrationType::UserInstall);
        std::printf("authorization prepared: scopes \"%s\", PKCE challenge %s..., integration %s\n",
                    args.Scopes().c_str(), args.CodeChallenge()->Challenge().substr(0, 8).c_str(),
                    sdkpp::EnumToString(*args.IntegrationType()));
        std::printf("the verifier stays in the game (%zu characters); it never reaches a log\n",
                    verifier.Verifier().size());

        // Async calls answer inside RunCallbacks, on this thread.
        client.IsDiscordAppInstalled([](bool installed) {
            std::printf("callback: platform mobile app installed: %s\n", installed ? "yes" : "no");
        });
        client.OpenConnectedGamesSettingsInPlatform([](sdkpp::ClientResult result) {
            std::printf("callback: open connected-games settings -> %s\n", result.ToString().c_str());
        });
        client.SetHttpRequestTimeout(-1); // a mistake: the SDK refuses it and logs why
        std::printf("running callbacks (one frame)...\n");
        sdkpp::RunCallbacks();

    } // the client, the verifier and the arguments are dropped here
    sdkpp::RunCallbacks();
    std::printf("client dropped; SDK objects still alive: %llu\n",
                (unsigned long long)(sdkpp::GetObjectCount() - objectsAtStart));
    std::printf("== done ==\n");
    return 0;
}
