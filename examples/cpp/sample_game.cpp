// A sample game: a player links their account with sdkpp, and the game prints what happens.
//
// `make demo` runs it once per player against a live sdkpp-server, with the environment:
//   SDKPP_API_BASE, SDKPP_WEB_BASE   where the service is
//   SDKPP_APP_ID                     the game's application id
//   SDKPP_PLAYER, SDKPP_PASSWORD     the player, who approves on the consent page
//   SDKPP_BROWSER                    the stand-in browser that plays the player's part
// A real game lets the SDK open the system browser instead (no SetOpenUrlCallback).
#define SDKPP_IMPLEMENTATION
#include "sdkpp.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>

static std::string Env(char const* name)
{
    char const* v = std::getenv(name);
    return v ? v : "";
}

// Frame runs one game frame: the SDK's callbacks run here, on the game's thread.
static void Frame()
{
    sdkpp::RunCallbacks();
    std::this_thread::sleep_for(std::chrono::milliseconds(16));
}

static bool RunFramesUntil(std::function<bool()> done)
{
    for (int i = 0; i < 60 * 60 && !done(); ++i) { // at most about a minute
        Frame();
    }
    return done();
}

int main()
{
    uint64_t objectsAtStart = sdkpp::GetObjectCount();
    std::printf("sdkpp %d.%d.%d (build %s)\n", sdkpp::Client::GetVersionMajor(), sdkpp::Client::GetVersionMinor(),
                sdkpp::Client::GetVersionPatch(), sdkpp::Client::GetVersionHash().c_str());
    std::string player = Env("SDKPP_PLAYER");
    bool online = !Env("SDKPP_API_BASE").empty();
    int status = 0;
    {
        sdkpp::Client client = online ? sdkpp::Client(Env("SDKPP_API_BASE"), Env("SDKPP_WEB_BASE")) : sdkpp::Client();
        client.AddLogCallback(
            [](std::string message, sdkpp::LoggingSeverity severity) {
                std::printf("[sdk %s] %s\n", sdkpp::EnumToString(severity), message.c_str());
            },
            sdkpp::LoggingSeverity::Warning);
        uint64_t appId = online ? std::strtoull(Env("SDKPP_APP_ID").c_str(), nullptr, 10) : 1234567890;
        client.SetApplicationId(appId);

        // Account linking starts with the authorization arguments and a PKCE pair.
        auto verifier = client.CreateAuthorizationCodeVerifier();
        sdkpp::AuthorizationArgs args;
        args.SetScopes(sdkpp::Client::GetDefaultCommunicationScopes());
        args.SetCodeChallenge(verifier.Challenge());
        std::printf("game: asks to link the account, scopes \"%s\", PKCE challenge %s...\n", args.Scopes().c_str(),
                    args.CodeChallenge()->Challenge().substr(0, 8).c_str());

        if (!online) {
            bool answered = false;
            client.OpenConnectedGamesSettingsInPlatform([&](sdkpp::ClientResult result) {
                answered = true;
                std::printf("game: offline; the SDK answers: %s\n", result.ToString().c_str());
            });
            RunFramesUntil([&] { return answered; });
        } else {
            client.SetOpenUrlCallback([player](std::string url) {
                std::printf("sdk: opens the consent page; %s logs in and presses Approve\n", player.c_str());
                std::string cmd = "'" + Env("SDKPP_BROWSER") + "' -user '" + player + "' -password '" +
                                  Env("SDKPP_PASSWORD") + "' '" + url + "' > /dev/null";
                if (std::system(cmd.c_str()) != 0) {
                    std::printf("game: the browser step failed\n");
                }
            });
            std::string code, redirect;
            bool authorized = false, failed = false;
            client.Authorize(args, [&](sdkpp::ClientResult result, std::string c, std::string r) {
                authorized = result.Successful();
                failed = !authorized;
                code = c;
                redirect = r;
                std::printf("sdk: Authorize -> %s, redirect %s\n", authorized ? "approved" : result.ToString().c_str(),
                            redirect.c_str());
            });
            RunFramesUntil([&] { return authorized || failed; });

            std::string access;
            bool exchanged = false;
            if (authorized) {
                client.GetToken(appId, code, verifier.Verifier(), redirect,
                                [&](sdkpp::ClientResult result, std::string a, std::string, sdkpp::AuthorizationTokenType,
                                    int32_t expiresIn, std::string scopes) {
                                    exchanged = true;
                                    access = a;
                                    std::printf("sdk: GetToken -> %s; token valid %d days, scopes \"%s\"\n",
                                                result.Successful() ? "ok" : result.ToString().c_str(),
                                                expiresIn / 86400, scopes.c_str());
                                });
                RunFramesUntil([&] { return exchanged; });
            }
            bool fetched = false;
            if (!access.empty()) {
                client.UpdateToken(sdkpp::AuthorizationTokenType::Bearer, access, [](sdkpp::ClientResult) {});
                client.FetchCurrentUser(sdkpp::AuthorizationTokenType::Bearer, access,
                                        [&](sdkpp::ClientResult result, uint64_t id, std::string name) {
                                            fetched = result.Successful();
                                            std::printf("game: linked as %s (user %llu); authenticated: %s\n",
                                                        name.c_str(), (unsigned long long)id,
                                                        client.IsAuthenticated() ? "yes" : "no");
                                        });
                RunFramesUntil([&] { return fetched; });
            }
            if (!fetched) {
                std::printf("game: account linking did not complete\n");
                status = 1;
            }
        }
    } // the client, the verifier and the arguments are released here
    sdkpp::RunCallbacks();
    std::printf("game: exits; SDK objects still alive: %llu\n",
                (unsigned long long)(sdkpp::GetObjectCount() - objectsAtStart));
    return status;
}
