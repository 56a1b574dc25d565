// Account linking from C++ against a live sdkpp-server, one phase per run:
//   auth_e2e_cpp PHASE
// The Go harness (tests/e2e) starts the service and the other parties, sets the environment
// (SDKPP_API_BASE, SDKPP_WEB_BASE, SDKPP_APP_ID, SDKPP_CHILD_APP_ID, SDKPP_BROWSER, SDKPP_USERS
// "name:password,...", and per phase SDKPP_BOT_ISSUED_TOKEN, SDKPP_OIDC_TOKEN, SDKPP_OIDC_TOKEN2),
// runs each phase and checks what the service saw. The program prints one line per check and
// "N passed, M failed" last.
#define SDKPP_IMPLEMENTATION
#include "sdkpp.hpp"

#include <cstring>

#include <cmath>

#include <atomic>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <functional>
#include <map>
#include <unordered_map>
#include <vector>
#include <string>
#include <thread>
#ifdef _WIN32
#include <windows.h>
#endif

using namespace sdkpp;

static int passed, failed;

static void Check(bool ok, std::string const& what)
{
    (ok ? passed : failed)++;
    std::printf("%s %s\n", ok ? "PASS" : "FAIL", what.c_str());
    std::fflush(stdout);
}

static std::string Env(char const* name)
{
    char const* v = std::getenv(name);
    return v ? v : "";
}

// Pump runs callbacks on this thread until done(). A timeout ends the process at once: the
// callbacks still pending hold references to this phase's locals and must never run.
static bool Pump(std::function<bool()> done, int seconds = 30)
{
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (!done()) {
        if (std::chrono::steady_clock::now() > until) {
            Check(false, "timed out waiting for a callback");
            std::printf("%d passed, %d failed\n", passed, failed);
            std::fflush(stdout);
            std::_Exit(1);
        }
        RunCallbacks();
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
}

static std::map<std::string, std::string> Users()
{
    std::map<std::string, std::string> users;
    std::string s = Env("SDKPP_USERS");
    size_t start = 0;
    while (start < s.size()) {
        size_t end = s.find(',', start);
        std::string pair = s.substr(start, end == std::string::npos ? std::string::npos : end - start);
        size_t colon = pair.find(':');
        users[pair.substr(0, colon)] = pair.substr(colon + 1);
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return users;
}

static uint64_t AppId() { return std::strtoull(Env("SDKPP_APP_ID").c_str(), nullptr, 10); }

// RunQuiet runs a program with arguments, its standard output discarded, and returns its exit
// status (-1 if it could not run).
#ifdef _WIN32
static int RunQuiet(std::vector<std::string> const& args)
{
    // No shell: each argument quoted for the C runtime's parser (none holds a quote).
    std::string line;
    for (auto const& a : args) {
        line += (line.empty() ? "\"" : " \"") + a + "\"";
    }
    SECURITY_ATTRIBUTES inherit{sizeof inherit, nullptr, TRUE};
    HANDLE nul = CreateFileA("NUL", GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE, &inherit, OPEN_EXISTING, 0, nullptr);
    STARTUPINFOA si{};
    si.cb = sizeof si;
    si.dwFlags = STARTF_USESTDHANDLES;
    si.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
    si.hStdOutput = nul;
    si.hStdError = GetStdHandle(STD_ERROR_HANDLE);
    PROCESS_INFORMATION pi{};
    BOOL ok = CreateProcessA(nullptr, line.data(), nullptr, nullptr, TRUE, 0, nullptr, nullptr, &si, &pi);
    CloseHandle(nul);
    if (!ok) return -1;
    WaitForSingleObject(pi.hProcess, INFINITE);
    DWORD rc = 0;
    GetExitCodeProcess(pi.hProcess, &rc);
    CloseHandle(pi.hThread);
    CloseHandle(pi.hProcess);
    return static_cast<int>(rc);
}
#else
static int RunQuiet(std::vector<std::string> const& args)
{
    std::string cmd;
    for (auto const& a : args) {
        cmd += "'" + a + "' "; // none holds a quote
    }
    return std::system((cmd + "> /dev/null").c_str());
}
#endif

// Browse runs the stand-in browser on a URL: it logs in as user and approves (or denies).
static void Browse(std::string const& url, std::string const& user, bool deny = false)
{
    std::vector<std::string> args{Env("SDKPP_BROWSER")};
    if (deny) {
        args.push_back("-deny");
    } else {
        args.insert(args.end(), {"-user", user, "-password", Users()[user]});
    }
    if (url.find("/activate?") != std::string::npos) {
        // The device verification page: hand the user code to the browser's device mode.
        size_t at = url.find("user_code=");
        std::string code = url.substr(at + 10, url.find('&', at) == std::string::npos ? std::string::npos : url.find('&', at) - at - 10);
        args.insert(args.end(), {"-device-code", code, Env("SDKPP_WEB_BASE")});
    } else {
        args.push_back(url);
    }
    int rc = RunQuiet(args);
    if (rc != 0) {
        std::printf("note: the browser exited with %d\n", rc);
    }
}

static Client NewClient(std::string const& user)
{
    Client c(Env("SDKPP_API_BASE"), Env("SDKPP_WEB_BASE"));
    c.SetApplicationId(AppId());
    c.AddLogCallback(
        [](std::string message, LoggingSeverity severity) {
            std::printf("log [%s] %s\n", EnumToString(severity), message.c_str());
        },
        LoggingSeverity::Verbose);
    if (!user.empty()) {
        c.SetOpenUrlCallback([user](std::string url) { Browse(url, user); });
    }
    return c;
}

struct Tokens {
    bool done = false;
    ClientResult result = ClientResult::nullobj;
    std::string access, refresh, scopes;
    AuthorizationTokenType type = AuthorizationTokenType::User;
    int32_t expiresIn = 0;
};

static Client::TokenExchangeCallback Into(Tokens& t)
{
    return [&t](ClientResult r, std::string a, std::string f, AuthorizationTokenType ty, int32_t e, std::string s) {
        t.result = std::move(r);
        t.access = std::move(a);
        t.refresh = std::move(f);
        t.type = ty;
        t.expiresIn = e;
        t.scopes = std::move(s);
        t.done = true;
    };
}

struct Authorized {
    std::string code, redirect, verifier;
    bool ok = false;
};

// Link runs Authorize with PKCE (the user approving in the browser) and returns the code.
static Authorized Link(Client& c)
{
    Authorized out;
    auto verifier = c.CreateAuthorizationCodeVerifier();
    out.verifier = verifier.Verifier();
    AuthorizationArgs args;
    args.SetScopes(Client::GetDefaultCommunicationScopes());
    args.SetCodeChallenge(verifier.Challenge());
    bool done = false;
    c.Authorize(args, [&](ClientResult r, std::string code, std::string redirect) {
        out.ok = r.Successful();
        if (!out.ok) std::printf("note: Authorize: %s\n", r.ToString().c_str());
        out.code = code;
        out.redirect = redirect;
        done = true;
    });
    Check(Pump([&] { return done; }) && out.ok && !out.code.empty(), "Authorize returns a code (rule AU-1)");
    return out;
}

static void PhaseLink()
{
    Client c = NewClient("alice");
    Authorized a = Link(c);
    Tokens t;
    c.GetToken(AppId(), a.code, a.verifier, a.redirect, Into(t));
    Check(Pump([&] { return t.done; }) && t.result.Successful() && !t.access.empty() && !t.refresh.empty() &&
              t.type == AuthorizationTokenType::Bearer && t.expiresIn == 604800,
          "GetToken with the PKCE verifier (rule AA-5)");

    bool fetched = false;
    std::string name;
    c.FetchCurrentUser(AuthorizationTokenType::Bearer, t.access, [&](ClientResult r, uint64_t id, std::string n) {
        fetched = r.Successful() && id != 0;
        name = n;
    });
    Check(Pump([&] { return fetched; }) && !name.empty(), "FetchCurrentUser with the new token");

    bool updated = false;
    c.UpdateToken(AuthorizationTokenType::Bearer, t.access, [&](ClientResult r) { updated = r.Successful(); });
    Check(Pump([&] { return updated; }) && c.IsAuthenticated(), "UpdateToken, IsAuthenticated");

    Tokens r;
    c.RefreshToken(AppId(), t.refresh, Into(r));
    Check(Pump([&] { return r.done; }) && r.result.Successful() && r.access != t.access, "RefreshToken rotates the tokens");

    bool revoked = false;
    c.RevokeToken(AppId(), r.access, [&](ClientResult res) { revoked = res.Successful(); });
    Check(Pump([&] { return revoked; }), "RevokeToken (rule AU-7)");

    Tokens dead;
    c.RefreshToken(AppId(), r.refresh, Into(dead));
    Check(Pump([&] { return dead.done; }) && dead.result.Type() == ErrorType::AuthorizationFailed &&
              dead.result.ResponseBody().find("invalid_grant") != std::string::npos,
          "a refresh after revocation is deauthorization (rule AU-6)");

    // A second authorization, exchanged with a wrong verifier.
    Authorized b = Link(c);
    Tokens wrong;
    c.GetToken(AppId(), b.code, c.CreateAuthorizationCodeVerifier().Verifier(), b.redirect, Into(wrong));
    Check(Pump([&] { return wrong.done; }) && wrong.result.Type() == ErrorType::AuthorizationFailed && wrong.access.empty(),
          "GetToken with a wrong verifier fails with invalid_grant (rule AA-5)");

    // Validation and abort.
    bool invalid = false;
    c.Authorize(AuthorizationArgs(), [&](ClientResult res, std::string, std::string) {
        invalid = res.Type() == ErrorType::ValidationError;
    });
    Check(Pump([&] { return invalid; }), "Authorize without scopes is a validation error (rule AA-2)");
    Client quiet = NewClient("");
    quiet.SetOpenUrlCallback([](std::string) {});
    bool aborted = false;
    AuthorizationArgs args;
    args.SetScopes("openid");
    quiet.Authorize(args, [&](ClientResult res, std::string, std::string) { aborted = res.Type() == ErrorType::Aborted; });
    RunCallbacks();
    quiet.AbortAuthorize();
    Check(Pump([&] { return aborted; }), "AbortAuthorize ends the flow with Aborted");
}

static void PhaseProvisional()
{
    Client c = NewClient("");
    Tokens bot;
    c.GetProvisionalToken(AppId(), AuthenticationExternalAuthType::DiscordBotIssuedAccessToken, Env("SDKPP_BOT_ISSUED_TOKEN"), Into(bot));
    Check(Pump([&] { return bot.done; }) && bot.result.Successful() && !bot.access.empty(),
          "a provisional account through the bot endpoint (rule AU-5)");
    Tokens oidc;
    c.GetProvisionalToken(AppId(), AuthenticationExternalAuthType::OIDC, Env("SDKPP_OIDC_TOKEN"), Into(oidc));
    Check(Pump([&] { return oidc.done; }) && oidc.result.Successful() && !oidc.access.empty(),
          "a provisional account through OIDC (rules AU-5, AU-9)");
    bool renamed = false;
    c.UpdateToken(AuthorizationTokenType::Bearer, oidc.access, [](ClientResult) {});
    c.UpdateProvisionalAccountDisplayName("Guest Player", [&](ClientResult r) { renamed = r.Successful(); });
    Check(Pump([&] { return renamed; }), "UpdateProvisionalAccountDisplayName");

    // Merge the OIDC provisional account into bob's account.
    Client linker = NewClient("bob");
    Authorized a = Link(linker);
    Tokens merged;
    linker.GetTokenFromProvisionalMerge(AppId(), a.code, a.verifier, a.redirect, AuthenticationExternalAuthType::OIDC,
                                        Env("SDKPP_OIDC_TOKEN"), Into(merged));
    Check(Pump([&] { return merged.done; }) && merged.result.Successful() && !merged.access.empty(),
          "GetTokenFromProvisionalMerge merges the provisional account");
}

static void PhaseMergeBanned()
{
    Client c = NewClient("carol");
    Authorized a = Link(c);
    Tokens merged;
    c.GetTokenFromProvisionalMerge(AppId(), a.code, a.verifier, a.redirect, AuthenticationExternalAuthType::OIDC,
                                   Env("SDKPP_OIDC_TOKEN"), Into(merged));
    Check(Pump([&] { return merged.done; }) && !merged.result.Successful() && merged.result.ErrorCode() == 530017,
          "a merge of the banned user's identity fails with 530017 (rule ST-1)");
}

static void PhaseUnmerge()
{
    Client c = NewClient("carol");
    Tokens prov;
    c.GetProvisionalToken(AppId(), AuthenticationExternalAuthType::OIDC, Env("SDKPP_OIDC_TOKEN2"), Into(prov));
    Check(Pump([&] { return prov.done; }) && prov.result.Successful(), "a second OIDC provisional account");
    Authorized a = Link(c);
    Tokens merged;
    c.GetTokenFromProvisionalMerge(AppId(), a.code, a.verifier, a.redirect, AuthenticationExternalAuthType::OIDC,
                                   Env("SDKPP_OIDC_TOKEN2"), Into(merged));
    Check(Pump([&] { return merged.done; }) && merged.result.Successful(), "merged into carol's account");
    bool unmerged = false;
    c.UnmergeIntoProvisionalAccount(AppId(), AuthenticationExternalAuthType::OIDC, Env("SDKPP_OIDC_TOKEN2"),
                                    [&](ClientResult r) {
                                        unmerged = r.Successful();
                                        if (!unmerged) std::printf("note: %s\n", r.ToString().c_str());
                                    });
    Check(Pump([&] { return unmerged; }), "UnmergeIntoProvisionalAccount (rule ST-2)");
    Tokens dead;
    c.RefreshToken(AppId(), merged.refresh, Into(dead));
    Check(Pump([&] { return dead.done; }) && dead.result.Type() == ErrorType::AuthorizationFailed,
          "after the unmerge the refresh token is invalid_grant (rules AU-6, AU-7)");
}

static void PhaseDevice()
{
    Client c = NewClient("alice");
    DeviceAuthorizationArgs args;
    args.SetScopes(Client::GetDefaultCommunicationScopes());
    Tokens t;
    c.GetTokenFromDevice(args, Into(t));
    Check(Pump([&] { return t.done; }, 60) && t.result.Successful() && !t.access.empty(), "the device flow");
}

static void PhaseChild()
{
    Client c = NewClient("alice");
    Authorized a = Link(c);
    Tokens parent;
    c.GetToken(AppId(), a.code, a.verifier, a.redirect, Into(parent));
    Pump([&] { return parent.done; });
    bool done = false, ok = false;
    std::string child;
    c.ExchangeChildToken(parent.access, std::strtoull(Env("SDKPP_CHILD_APP_ID").c_str(), nullptr, 10),
                         [&](ClientResult r, std::string access, AuthorizationTokenType, int32_t, std::string) {
                             ok = r.Successful();
                             child = access;
                             done = true;
                         });
    Check(Pump([&] { return done; }) && ok && !child.empty() && child != parent.access,
          "ExchangeChildToken gives the child application's token (rule AU-4)");
}

static void PhaseRpc()
{
    Client c = NewClient("");
    int requests = 0;
    c.RegisterAuthorizeRequestCallback([&] { ++requests; });
    std::printf("subscribed\n");
    std::fflush(stdout);
    Check(Pump([&] { return requests >= 1; }), "AUTHORIZE_REQUEST reaches the callback");
    // The restart may take seconds (under Wine), and the SDK retries up to 10 s apart.
    Check(Pump([&] { return requests >= 2; }, 60), "and again after the desktop client restarted (rule RPC-2)");
    c.RemoveAuthorizeRequestCallback();
}

// rule VS-1: the desktop client's voice settings (set by the harness), an update when they change
// there, and a successful result with none once the desktop client has gone.
static void PhaseVoiceSettings()
{
    Client c = NewClient("");
    // read calls GetVoiceSettings once and waits for its callback.
    auto read = [&c](bool& ok) {
        bool done = false;
        std::optional<VoiceSettings> got;
        c.GetVoiceSettings([&](ClientResult r, std::optional<VoiceSettings> s) {
            ok = r.Successful();
            got = std::move(s);
            done = true;
        });
        Pump([&] { return done; });
        return got;
    };
    bool ok = false;
    std::optional<VoiceSettings> vs;
    Pump([&] { return (vs = read(ok)).has_value(); }, 60);
    Check(ok && vs->InputMode() == VoiceInputModeType::PushToTalk && vs->PttKey() == "SHIFT + F" &&
              vs->OutputVolume() == 150.0f && vs->InputVolume() == 100.0f && !vs->SelfDeaf(),
          "GetVoiceSettings reads the desktop client's voice settings (rule VS-1)");

    std::optional<VoiceSettings> updated;
    c.SetVoiceSettingsUpdatedCallback([&](VoiceSettings s) { updated = std::move(s); });
    Pump([&] { return updated.has_value(); }, 60);
    Check(updated->SelfDeaf() && updated->InputMode() == VoiceInputModeType::PushToTalk,
          "the update callback fires with the changed settings");
    std::printf("updated\n");
    std::fflush(stdout);

    std::optional<VoiceSettings> none;
    Pump([&] { return !(none = read(ok)).has_value() && ok; }, 60);
    Check(ok && !none.has_value(), "without a desktop client: a successful result and no settings");
}

// Connected returns a client of the player behind token, Ready on the gateway.
static Client Connected(std::string const& token)
{
    Client c = NewClient("");
    c.UpdateToken(AuthorizationTokenType::Bearer, token, [](ClientResult) {});
    c.Connect();
    Pump([&] { return c.GetStatus() == Client::Status::Ready && c.GetCurrentUserV2().has_value(); });
    return c;
}

// ReadWav48k returns the samples of a 48 kHz mono 16-bit PCM WAV file, or nothing.
static std::vector<int16_t> ReadWav48k(std::string const& path)
{
    std::vector<int16_t> out;
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return out;
    std::vector<unsigned char> b;
    unsigned char buf[65536];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) b.insert(b.end(), buf, buf + n);
    std::fclose(f);
    auto u32 = [&](size_t at) { return uint32_t(b[at]) | uint32_t(b[at + 1]) << 8 | uint32_t(b[at + 2]) << 16 | uint32_t(b[at + 3]) << 24; };
    auto u16 = [&](size_t at) { return uint32_t(b[at]) | uint32_t(b[at + 1]) << 8; };
    if (b.size() < 12 || std::memcmp(&b[0], "RIFF", 4) != 0 || std::memcmp(&b[8], "WAVE", 4) != 0) return out;
    bool format = false;
    for (size_t at = 12; at + 8 <= b.size();) {
        uint32_t size = u32(at + 4);
        if (at + 8 + size > b.size()) break;
        if (std::memcmp(&b[at], "fmt ", 4) == 0 && size >= 16) {
            format = u16(at + 8) == 1 && u16(at + 10) == 1 && u32(at + 12) == 48000 && u16(at + 22) == 16;
        } else if (std::memcmp(&b[at], "data", 4) == 0 && format) {
            out.resize(size / 2);
            for (size_t k = 0; k < out.size(); ++k) out[k] = int16_t(u16(at + 8 + 2 * k));
            return out;
        }
        at += 8 + size + (size & 1);
    }
    return out;
}

// WriteRaw writes samples as little-endian 16-bit PCM; false on failure.
static bool WriteRaw(std::string const& path, std::vector<int16_t> const& samples)
{
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return false;
    std::vector<unsigned char> b(samples.size() * 2);
    for (size_t k = 0; k < samples.size(); ++k) {
        b[2 * k] = uint16_t(samples[k]) & 0xff;
        b[2 * k + 1] = uint16_t(samples[k]) >> 8;
    }
    bool ok = std::fwrite(b.data(), 1, b.size(), f) == b.size();
    return std::fclose(f) == 0 && ok;
}

// The speech part of PhaseVoice: each player's captured hook plays a recorded voice once, and
// each player's received hook records every other player frame after frame, as its speaker plays
// them, into buffers allocated before the call (the hooks only copy). The harness compares what
// each player heard with what the other sent (log-spectral distance, the engine issue's metric).
//
// A heard frame goes right after the one heard before from that sender (Place). The listener's
// capture steps alone are no clock for it: the engine processes the microphone's periods as the
// sound server delivers them, several at once when it runs late, and the speaker's just before
// the speaker takes each, so the steps counted at a playback frame run a frame ahead or behind
// from one frame to the next. Placed by them, a heard voice had frames written twice and frames
// left silent, scored as distortion (up to 10 dB above the bound, in 10 of 12 runs at a load of
// 10). The steps do keep the device's time over a long stall: once they have run more than
// kResync frames (200 ms) ahead of a sender's next frame (the listener played nothing of it for
// that long: its jitter buffer gone idle, or the engine stalled), that frame goes where the steps
// are and the gap stays silent. Less is no stall: PulseAudio takes playback in bursts of up to 6
// frames on a busy machine, and the steps run that far ahead of the frames played before one.
struct SpeechTake {
    static constexpr int kResync = 10;
    std::atomic<bool> talk{false};
    std::atomic<int> step[3] = {{0}, {0}, {0}}; // each player's captured frames since talk began
    std::atomic<int> next[3][3] = {};            // [listener][sender]: where the next heard frame goes
    std::vector<int16_t> sent[3];
    std::vector<int16_t> got[3][3]; // got[listener][sender]
    int frames = 0;                 // frames to record: the longest voice and 1.5 s of tail

    // Place returns the frame at which listener records its next frame from sender: after the
    // last one, or where the listener's capture steps are once they have run more than kResync ahead.
    int Place(int listener, int sender)
    {
        int at = next[listener][sender];
        int now = step[listener] - 1; // the captured hook of this step ran first
        if (now - at > kResync) at = now;
        next[listener][sender] = at + 1;
        return at;
    }
};
static SpeechTake speech;

// Three players in one lobby's end-to-end encrypted voice call, with the real engine on the
// harness's private PulseAudio: each one's captured-audio hook replaces the microphone's silence
// with a tone, and each one's received-audio hook (on the audio thread: it reads samples and
// counts atomically, allocating nothing) must hear both others. Then each plays a recorded voice
// (SpeechTake) that the harness scores. All show one verification code (rule VER-2: calls are
// always encrypted); the Call API's state round-trips.
static void PhaseVoice()
{
    std::vector<Client> clients;
    clients.push_back(Connected(Env("SDKPP_BOT_ISSUED_TOKEN")));
    clients.push_back(Connected(Env("SDKPP_BOT_ISSUED_TOKEN2")));
    clients.push_back(Connected(Env("SDKPP_BOT_ISSUED_TOKEN3")));
    uint64_t ids[3];
    for (int i = 0; i < 3; ++i) ids[i] = clients[i].GetCurrentUserV2()->Id();
    uint64_t lobby = 0;
    for (auto& c : clients) {
        bool done = false;
        c.CreateOrJoinLobby("voice-e2e-" + std::to_string(ids[0]), [&](ClientResult, uint64_t id) {
            lobby = id;
            done = true;
        });
        Pump([&] { return done; });
    }
    Check(lobby != 0, "three players in one lobby");

    static std::atomic<int> heard[3][3];
    static std::atomic<int> captured[3];
    static int16_t tone[960];
    for (int i = 0; i < 960; ++i) tone[i] = int16_t(12000 * std::sin(2 * 3.141592653589793 * 300 * i / 48000.0));
    std::vector<Call> calls;
    for (int i = 0; i < 3; ++i) {
        // The voice goes in unprocessed, as in the Go harness (tests/internal/threecall): what is
        // scored is the call. A steady tone is what noise suppression is made to remove, and
        // gain control and echo cancellation adapting during the take (three players talking at
        // once in one process) scored as distortion in about one run in three.
        clients[i].SetNoiseSuppression(false);
        clients[i].SetEchoCancellation(false);
        clients[i].SetAutomaticGainControl(false);
        calls.push_back(clients[i].StartCallWithAudioCallbacks(
            lobby,
            [i, ids](uint64_t user, int16_t* data, uint64_t n, int32_t, uint64_t, bool&) {
                int from = -1;
                for (int j = 0; j < 3; ++j) {
                    if (ids[j] == user) from = j;
                }
                if (from < 0) return;
                if (speech.talk) {
                    size_t at = size_t(speech.Place(i, from)) * 960;
                    std::vector<int16_t>& got = speech.got[i][from];
                    if (at + n <= got.size()) std::memcpy(&got[at], data, n * sizeof(int16_t));
                    return;
                }
                int loud = 0;
                for (uint64_t k = 0; k < n; k += 40) loud += data[k] > 2000 || data[k] < -2000;
                if (loud) heard[i][from]++;
            },
            [i](int16_t* data, uint64_t n, int32_t, uint64_t) {
                captured[i]++;
                if (!speech.talk) {
                    std::memcpy(data, tone, sizeof(int16_t) * std::min<uint64_t>(n, 960));
                    return;
                }
                size_t at = size_t(speech.step[i]++) * 960;
                std::vector<int16_t> const& voice = speech.sent[i];
                size_t k = at < voice.size() ? std::min<size_t>(n, voice.size() - at) : 0;
                if (k) std::memcpy(data, &voice[at], k * sizeof(int16_t));
                std::memset(data + k, 0, (n - k) * sizeof(int16_t));
            }));
    }
    Check(calls[0] && calls[1] && calls[2], "StartCallWithAudioCallbacks gives a Call to each player");
    Check(!clients[0].StartCall(lobby), "a second StartCall of the same call is invalid");
    bool connected = Pump(
        [&] {
            for (auto& c : calls) {
                if (c.GetStatus() != Call::Status::Connected || c.GetParticipants().size() != 3) return false;
            }
            return true;
        },
        60);
    Check(connected, "all three Connected with three participants");
    std::string code = calls[0].GetVerificationCode();
    Check(!code.empty() && calls[1].GetVerificationCode() == code && calls[2].GetVerificationCode() == code,
          "one verification code on every screen: " + code);
    bool all = Pump(
        [&] {
            for (int l = 0; l < 3; ++l) {
                for (int s = 0; s < 3; ++s) {
                    if (l != s && heard[l][s] < 10) return false;
                }
            }
            return true;
        },
        60);
    Check(all, "each player hears both others' audio through the relay, decrypted");
    Check(captured[0] > 0 && captured[1] > 0 && captured[2] > 0, "the captured-audio hooks ran");

    // Speech: the gate held open (push-to-talk pressed), each voice played once and recorded by
    // the two others, for the harness to score.
    std::string voices = Env("SDKPP_VOICE_SPEECH_DIR"), out = Env("SDKPP_VOICE_RECORD_DIR");
    char const* names[3] = {"alice", "bob", "carol"};
    size_t longest = 0;
    for (int i = 0; i < 3; ++i) {
        speech.sent[i] = ReadWav48k(voices + "/" + names[i] + ".wav");
        longest = std::max(longest, speech.sent[i].size());
    }
    Check(!speech.sent[0].empty() && !speech.sent[1].empty() && !speech.sent[2].empty(), "three recorded voices to play");
    speech.frames = int(longest / 960) + 75;
    for (auto& row : speech.got) {
        for (auto& got : row) got.assign(size_t(speech.frames) * 960, 0);
    }
    for (auto& c : calls) {
        c.SetAudioMode(AudioModeType::MODE_PTT);
        c.SetPTTActive(true);
    }
    speech.talk = true;
    bool recorded = Pump(
        [&] {
            for (int l = 0; l < 3; ++l) {
                if (speech.step[l] < speech.frames) return false;
                for (int s = 0; s < 3; ++s) {
                    if (l != s && speech.next[l][s] < speech.frames) return false;
                }
            }
            return true;
        },
        60);
    speech.talk = false;
    Check(recorded, "each player played its voice and recorded the two others");
    for (auto& c : calls) {
        c.SetPTTActive(false);
        c.SetAudioMode(AudioModeType::MODE_VAD);
    }

    // A player who is not in the lobby gets a Call, which the service refuses: Forbidden.
    {
        Client outsider = Connected(Env("SDKPP_BOT_ISSUED_TOKEN4"));
        Call oc = outsider.StartCall(lobby);
        Call::Error refusal = Call::Error::None;
        if (oc) oc.SetStatusChangedCallback([&](Call::Status, Call::Error e, int32_t) { if (e != Call::Error::None) refusal = e; });
        bool refused = oc && Pump([&] { return refusal != Call::Error::None; });
        Check(refused && refusal == Call::Error::Forbidden && oc.GetStatus() == Call::Status::Disconnected,
              "a player outside the lobby is refused: Call::Error::Forbidden, " + Call::ErrorToString(refusal));
        bool ended = false;
        outsider.EndCall(lobby, [&] { ended = true; });
        Pump([&] { return ended; });
    }

    calls[1].SetAudioMode(AudioModeType::MODE_PTT);
    Check(calls[1].GetAudioMode() == AudioModeType::MODE_PTT, "audio mode PTT");
    calls[1].SetPTTReleaseDelay(250);
    Check(calls[1].GetPTTReleaseDelay() == 250, "PTT release delay");
    calls[1].SetPTTActive(true);
    Check(calls[1].GetPTTActive(), "PTT pressed");
    calls[2].SetParticipantVolume(ids[0], 50);
    Check(std::fabs(calls[2].GetParticipantVolume(ids[0]) - 50) < 0.01f, "participant volume");
    calls[2].SetLocalMute(ids[0], true);
    Check(calls[2].GetLocalMute(ids[0]), "local mute");
    calls[0].SetSelfMute(true);
    Check(calls[0].GetSelfMute(), "self mute");
    bool seenMuted = Pump([&] {
        auto v = calls[2].GetVoiceStateHandle(ids[0]);
        return v && v->SelfMute();
    });
    Check(seenMuted, "the others see the player's self mute in its voice state");

    int ended = 0;
    for (auto& c : clients) c.EndCall(lobby, [&] { ++ended; });
    Pump([&] { return ended == 3; });
    Check(ended == 3, "EndCall completes for each player");
    Check(!clients[0].GetCall(lobby), "no call after EndCall");

    // The engines have stopped: the recordings are complete and no hook writes them any more.
    bool written = true;
    for (int s = 0; s < 3; ++s) {
        written = WriteRaw(out + "/sent-" + std::to_string(s) + ".raw", speech.sent[s]) && written;
        for (int l = 0; l < 3; ++l) {
            if (l != s) written = WriteRaw(out + "/got-" + std::to_string(l) + "-" + std::to_string(s) + ".raw", speech.got[l][s]) && written;
        }
    }
    Check(written, "the recordings are written for the harness");
}

static void PhaseLobby()
{
    Client a = Connected(Env("SDKPP_BOT_ISSUED_TOKEN"));
    Client b = Connected(Env("SDKPP_BOT_ISSUED_TOKEN2"));
    Check(a.GetStatus() == Client::Status::Ready && b.GetStatus() == Client::Status::Ready, "two players connect (Ready)");
    uint64_t bId = b.GetCurrentUserV2()->Id();
    auto profiles = b.GetUserApplicationProfiles(bId);
    auto profilesNoLock = b.GetUserApplicationProfilesNoLock(bId);
    Check(profiles.size() == 1 && profiles[0].ProviderType() == ExternalIdentityProviderType::DiscordBot &&
              !profiles[0].ProviderIssuedUserId().empty() && profilesNoLock.size() == 1 &&
              b.GetCurrentUserV2()->UserApplicationProfiles().size() == 1,
          "GetUserApplicationProfiles(NoLock): the player's bot-issued identity");
    std::vector<uint64_t> removed;
    a.SetLobbyMemberRemovedCallback([&](uint64_t, uint64_t member) { removed.push_back(member); });

    uint64_t ids[2] = {0, 0};
    Client* clients[2] = {&a, &b};
    for (int i = 0; i < 2; ++i) {
        bool done = false;
        clients[i]->CreateOrJoinLobbyWithMetadata("e2e-secret", {{"map", "h\xC3\xA4rbor"}, {"mode", "ffa"}},
                                                  {{"class", i == 0 ? "mage" : "rogue"}},
                                                  [&, i](ClientResult r, uint64_t id) {
                                                      if (r.Successful()) ids[i] = id;
                                                      done = true;
                                                  });
        Pump([&] { return done; });
    }
    Check(ids[0] != 0 && ids[0] == ids[1], "the same secret gives one lobby (rule LOB-1)");
    Pump([&] {
        auto h = a.GetLobbyHandle(ids[0]);
        return h && h->LobbyMemberIds().size() == 2;
    });
    auto lobby = a.GetLobbyHandle(ids[0]);
    Check(lobby && lobby->Metadata() == std::unordered_map<std::string, std::string>{{"map", "h\xC3\xA4rbor"}, {"mode", "ffa"}},
          "lobby metadata round-trips through the C ABI (a string map)");
    auto memberIds = lobby->LobbyMemberIds();
    Check(memberIds.size() == 2 && std::find(memberIds.begin(), memberIds.end(), bId) != memberIds.end(),
          "LobbyMemberIds (a list of ids)");
    auto members = lobby->LobbyMembers();
    bool rogue = false;
    for (auto& m : members) {
        if (m.Id() == bId && m.Metadata().at("class") == "rogue") rogue = true;
    }
    Check(members.size() == 2 && rogue, "LobbyMembers (a list of handles) with member metadata");
    auto bSeat = lobby->GetLobbyMemberHandle(bId);
    auto bUser = bSeat ? bSeat->User() : std::nullopt;
    Check(bUser && bUser->Id() == bId && bUser->Username() == b.GetCurrentUserV2()->Username() &&
              bUser->UserApplicationProfiles().size() == 1 && a.GetUserApplicationProfiles(bId).size() == 1,
          "LobbyMemberHandle::User: the member's user and game profile, from the lobby");
    auto ids2 = a.GetLobbyIds();
    Check(ids2.size() == 1 && ids2[0] == ids[0], "GetLobbyIds");

    bool sent = false;
    uint64_t messageId = 0;
    b.SendLobbyMessage(ids[0], "gg", [&](ClientResult r, uint64_t id) {
        sent = r.Successful();
        messageId = id;
    });
    Check(Pump([&] { return sent; }) && messageId != 0, "SendLobbyMessage (rule LOB-2)");

    bool left = false;
    b.LeaveLobby(ids[0], [&](ClientResult r) { left = r.Successful(); });
    Check(Pump([&] { return left; }) && !b.GetLobbyHandle(ids[0]), "LeaveLobby");
    Check(Pump([&] { return std::find(removed.begin(), removed.end(), bId) != removed.end(); }),
          "the other player hears the member leave");
    Check(!lobby->GetLobbyMemberHandle(bId), "the live handle no longer lists the member");
}

// PhaseChat: three players chat in one lobby, one reconnects and reads the history, two exchange
// direct messages; the harness moderates one message as the game's backend.
static void PhaseChat()
{
    Client a = Connected(Env("SDKPP_BOT_ISSUED_TOKEN"));
    Client b = Connected(Env("SDKPP_BOT_ISSUED_TOKEN2"));
    Client c = Connected(Env("SDKPP_BOT_ISSUED_TOKEN3"));
    Client* players[3] = {&a, &b, &c};
    uint64_t aId = a.GetCurrentUserV2()->Id(), bId = b.GetCurrentUserV2()->Id();
    uint64_t lobby = 0;
    for (int i = 0; i < 3; ++i) {
        bool done = false;
        players[i]->CreateOrJoinLobbyWithMetadata("e2e-chat", {}, {{"seat", std::to_string(i)}}, [&](ClientResult r, uint64_t id) {
            if (r.Successful()) lobby = id;
            done = true;
        });
        Pump([&] { return done; });
    }
    Check(lobby != 0 && Pump([&] {
              for (auto* p : players) {
                  auto h = p->GetLobbyHandle(lobby);
                  if (!h || h->LobbyMemberIds().size() != 3) return false;
              }
              return true;
          }),
          "three players create-or-join one lobby by secret (rule LOB-1)");
    auto seat = c.GetLobbyHandle(lobby)->GetLobbyMemberHandle(bId);
    Check(seat && seat->Metadata().at("seat") == "1", "member metadata reaches the other members");

    std::vector<uint64_t> createdA, createdC, updatedA;
    a.SetMessageCreatedCallback([&](uint64_t id) { createdA.push_back(id); });
    c.SetMessageCreatedCallback([&](uint64_t id) { createdC.push_back(id); });
    a.SetMessageUpdatedCallback([&](uint64_t id) { updatedA.push_back(id); });
    std::vector<uint64_t> sent;
    for (int i = 0; i < 3; ++i) {
        bool done = false;
        b.SendLobbyMessageWithMetadata(lobby, "m" + std::to_string(i), {{"i", std::to_string(i)}}, [&](ClientResult r, uint64_t id) {
            if (r.Successful()) sent.push_back(id);
            done = true;
        });
        Pump([&] { return done; });
    }
    Check(sent.size() == 3 && Pump([&] { return createdA.size() == 3 && createdC.size() == 3; }) && createdA == sent && createdC == sent,
          "every member gets every lobby message once, in order (rule LOB-2)");
    auto m1 = a.GetMessageHandle(sent[1]);
    Check(m1 && m1->Content() == "m1" && m1->AuthorId() == bId && m1->Metadata().at("i") == "1" && m1->ChannelId() == lobby &&
              m1->ApplicationId().value_or(0) == std::strtoull(Env("SDKPP_APP_ID").c_str(), nullptr, 10),
          "MessageHandle reads content, author, metadata and the application (rule MSG-1)");

    std::printf("moderate %llu %llu\n", (unsigned long long)lobby, (unsigned long long)sent[1]);
    std::fflush(stdout);
    Check(Pump([&] { return std::find(updatedA.begin(), updatedA.end(), sent[1]) != updatedA.end(); }) &&
              m1->ModerationMetadata() == std::unordered_map<std::string, std::string>{{"verdict", "clean"}},
          "moderation metadata set by the backend shows on the live MessageHandle (rules MSG-3, MODR-1)");

    a.Disconnect();
    Pump([&] { return a.GetStatus() == Client::Status::Disconnected; });
    a.Connect();
    Check(Pump([&] { return a.GetStatus() == Client::Status::Ready; }), "a player reconnects");
    std::vector<MessageHandle> history;
    bool done = false;
    a.GetLobbyMessagesWithLimit(lobby, 10, [&](ClientResult r, std::vector<MessageHandle> ms) {
        if (r.Successful()) history = std::move(ms);
        done = true;
    });
    Check(Pump([&] { return done; }) && history.size() == 3 && history[0].Content() == "m2" && history[2].Content() == "m0",
          "after the reconnect the history comes back newest first, as a list of handles (rules LOB-3, LIM-2)");
    done = false;
    bool refused = false;
    a.GetLobbyMessagesWithLimit(lobby, 0, [&](ClientResult r, std::vector<MessageHandle> ms) {
        refused = !r.Successful() && r.Type() == ErrorType::ValidationError && ms.empty();
        done = true;
    });
    Check(Pump([&] { return done; }) && refused, "a history limit of 0 is refused");

    std::vector<uint64_t> createdB;
    b.SetMessageCreatedCallback([&](uint64_t id) { createdB.push_back(id); });
    uint64_t dm = 0;
    done = false;
    a.SendUserMessage(bId, "psst", [&](ClientResult r, uint64_t id) {
        if (r.Successful()) dm = id;
        done = true;
    });
    Check(Pump([&] { return done; }) && dm != 0 && Pump([&] { return std::find(createdB.begin(), createdB.end(), dm) != createdB.end(); }),
          "a direct message reaches its recipient");
    auto got = b.GetMessageHandle(dm);
    Check(got && got->Content() == "psst" && got->RecipientId() == bId && got->AuthorId() == aId, "the DM's handle");
    std::vector<MessageHandle> dms;
    for (int round = 0; round < 2; ++round) {
        done = false;
        b.GetUserMessagesWithLimit(aId, 5, [&](ClientResult r, std::vector<MessageHandle> ms) {
            if (r.Successful()) dms = std::move(ms);
            done = true;
        });
        Pump([&] { return done; });
    }
    Check(dms.size() == 1 && dms[0].Id() == dm, "GetUserMessagesWithLimit, from the service and then the local cache");
    std::vector<UserMessageSummary> sums;
    done = false;
    a.GetUserMessageSummaries([&](ClientResult r, std::vector<UserMessageSummary> s) {
        if (r.Successful()) sums = std::move(s);
        done = true;
    });
    Check(Pump([&] { return done; }) && sums.size() == 1 && sums[0].UserId() == bId && sums[0].LastMessageId() == dm,
          "GetUserMessageSummaries");
}

// Relationships, rich presence and invites: two players befriend and see each other's rich
// presence; an invite accepted on one of the guest's two devices fires on both (rule EVT-1).
static void PhaseSocial()
{
    Client host = Connected(Env("SDKPP_BOT_ISSUED_TOKEN"));
    Client guest = Connected(Env("SDKPP_BOT_ISSUED_TOKEN2"));
    Client guest2 = Connected(Env("SDKPP_BOT_ISSUED_TOKEN2")); // the same player's second device
    uint64_t hostId = host.GetCurrentUserV2()->Id(), guestId = guest.GetCurrentUserV2()->Id();
    Check(guest2.GetCurrentUserV2()->Id() == guestId, "two devices of one player");

    bool ok = false, done = false;
    host.SendDiscordFriendRequestById(guestId, [&](ClientResult r) { ok = r.Successful(); done = true; });
    Pump([&] { return done; });
    Pump([&] { return guest.GetRelationshipHandle(hostId).DiscordRelationshipType() == RelationshipType::PendingIncoming; });
    Check(ok && !guest.GetRelationshipHandle(hostId).IsSpamRequest(), "a friend request arrives, not spam (rule REL-1)");
    done = false;
    guest.AcceptDiscordFriendRequest(hostId, [&](ClientResult r) { ok = r.Successful(); done = true; });
    Check(Pump([&] { return done && host.GetRelationshipHandle(guestId).DiscordRelationshipType() == RelationshipType::Friend; }) && ok,
          "the request is accepted: friends on both sides");
    auto profileOf = [](std::vector<UserApplicationProfileHandle> ps, const char* prefix) {
        return ps.size() == 1 && ps[0].ProviderType() == ExternalIdentityProviderType::DiscordBot &&
               ps[0].ProviderIssuedUserId().rfind(prefix, 0) == 0;
    };
    Check(Pump([&] {
              auto seenHost = guest.GetUser(hostId);
              return seenHost && profileOf(seenHost->UserApplicationProfiles(), "social-host-") &&
                     profileOf(host.GetUserApplicationProfilesNoLock(guestId), "social-guest-");
          }),
          "friends see each other's provisional profile (UserHandle::UserApplicationProfiles, GetUserApplicationProfilesNoLock)");

    Activity a;
    a.SetName("Harbor Siege");
    a.SetState("In a match");
    a.SetStateUrl("https://game.example/state");
    a.SetDetails("Capture the flag");
    a.SetDetailsUrl("https://game.example/details");
    ActivityAssets assets;
    assets.SetLargeImage("map_harbor");
    assets.SetLargeUrl("https://game.example/large");
    assets.SetSmallUrl("https://game.example/small");
    assets.SetInviteCoverImage("https://game.example/cover.png");
    a.SetAssets(assets);
    ActivityParty party;
    party.SetId("party-cpp");
    party.SetCurrentSize(1);
    party.SetMaxSize(4);
    a.SetParty(party);
    ActivitySecrets secrets;
    secrets.SetJoin("cpp-join-secret");
    a.SetSecrets(secrets);
    ActivityButton button;
    button.SetLabel("Watch");
    button.SetUrl("https://game.example/watch");
    a.AddButton(button);
    done = false;
    host.UpdateRichPresence(a, [&](ClientResult r) { ok = r.Successful(); done = true; });
    Check(Pump([&] { return done; }) && ok, "UpdateRichPresence with every Activity field");
    auto hostSeen = guest.GetUser(hostId);
    Pump([&] { return hostSeen && hostSeen->GameActivity().has_value(); });
    auto act = hostSeen->GameActivity();
    Check(act && act->Name() == "Harbor Siege" && act->StateUrl() == std::optional<std::string>("https://game.example/state") &&
              act->DetailsUrl() == std::optional<std::string>("https://game.example/details") && act->Assets() &&
              act->Assets()->LargeUrl() == std::optional<std::string>("https://game.example/large") &&
              act->GetButtons().size() == 1 && !act->Secrets(),
          "the friend sees the rich presence, URLs and name override, no secret (rules ACT-2, ACT-4, ACT-5)");
    Activity copy = a;
    Check(a.Equals(copy) && act->Equals(*hostSeen->GameActivity()), "Activity::Equals: a copy, and two snapshots of one presence");
    ActivityAssets changed = *copy.Assets();
    changed.SetSmallUrl("https://game.example/other");
    copy.SetAssets(changed);
    Check(!a.Equals(copy) && !act->Equals(a), "Activity::Equals compares nested assets; the friend's copy has no secret");
    Check(hostSeen->Status() == StatusType::Online, "UserHandle::Status");
    auto playing = guest.GetRelationshipsByGroup(RelationshipGroupType::OnlinePlayingGame);
    Check(playing.size() == 1 && playing[0].Id() == hostId, "GetRelationshipsByGroup(OnlinePlayingGame)");

    std::vector<ActivityInvite> got1, got2;
    guest.SetActivityInviteCreatedCallback([&](ActivityInvite i) { got1.push_back(i); });
    guest2.SetActivityInviteCreatedCallback([&](ActivityInvite i) { got2.push_back(i); });
    done = false;
    host.SendActivityInvite(guestId, "join us", [&](ClientResult r) { ok = r.Successful(); done = true; });
    Check(Pump([&] { return done && got1.size() == 1 && got2.size() == 1; }) && ok, "the invite reaches both devices");
    Check(got1[0].ApplicationId() == AppId() && got1[0].SenderId() == hostId && got1[0].Type() == ActivityActionTypes::Join,
          "the invite names its application (rule INV-1)");
    Check(got1[0].ChannelId() != 0 && got2[0].ChannelId() == got1[0].ChannelId(), "the invite names its channel (the players' DM channel)");
    std::string secret;
    done = false;
    guest2.AcceptActivityInvite(got2[0], [&](ClientResult r, std::string s) { ok = r.Successful(); secret = s; done = true; });
    Check(Pump([&] { return done; }) && ok && secret == "cpp-join-secret", "AcceptActivityInvite gives the join secret");
    Check(Pump([&] { return got1.size() == 2 && got2.size() == 2; }),
          "accepted on one device, the invite callback fires on both (rule EVT-1)");
    host.ClearRichPresence();
    Check(Pump([&] { return !hostSeen->GameActivity().has_value(); }), "ClearRichPresence");
}

// PhaseGuilds: alice (a full account) lists her guilds and a guild's channels, links a channel to
// a lobby once the harness (the game's backend) grants her CanLinkLobby; carol asks for an
// invite to the linked guild; a provisional player is told to merge first.
static void PhaseGuilds()
{
    Client a = Connected(Env("SDKPP_USER_TOKEN"));
    Client c = Connected(Env("SDKPP_USER_TOKEN2"));
    Client g = Connected(Env("SDKPP_BOT_ISSUED_TOKEN"));
    uint64_t aId = a.GetCurrentUserV2()->Id();
    std::vector<GuildMinimal> guilds;
    bool done = false;
    a.GetUserGuilds([&](ClientResult r, std::vector<GuildMinimal> gs) {
        if (r.Successful()) guilds = std::move(gs);
        done = true;
    });
    uint64_t own = 0;
    Pump([&] { return done; });
    for (auto& gm : guilds) {
        if (gm.Name() == "Alice's Guild") own = gm.Id();
    }
    Check(guilds.size() == 3 && own != 0, "GetUserGuilds (a list of records)");
    auto channels = [&](Client& who, uint64_t guild, ClientResult* result) {
        std::vector<GuildChannel> out;
        bool fin = false;
        who.GetGuildChannels(guild, [&](ClientResult r, std::vector<GuildChannel> cs) {
            out = std::move(cs);
            if (result) *result = r;
            fin = true;
        });
        Pump([&] { return fin; });
        return out;
    };
    auto chans = channels(a, own, nullptr);
    std::string names;
    bool sorted = true;
    for (size_t i = 0; i < chans.size(); ++i) {
        names += (i ? "," : "") + chans[i].Name();
        if (i > 0 && chans[i - 1].Position() > chans[i].Position()) sorted = false;
    }
    Check(sorted && names == "Text Channels,general,looking-for-group,Voice Channels,Lounge",
          "GetGuildChannels sorted by position (rule GCH-1)");
    Check(chans.size() == 5 && chans[0].Type() == ChannelType::GuildCategory && !chans[0].ParentId() &&
              chans[1].Type() == ChannelType::GuildText && chans[1].ParentId() == chans[0].Id() &&
              chans[4].Type() == ChannelType::GuildVoice && chans[4].ParentId() == chans[3].Id() && chans[1].IsLinkable() &&
              !chans[4].IsLinkable() && !chans[1].LinkedLobby(),
          "channel types, parent category ids and IsLinkable (rule GCH-1)");
    uint64_t general = chans.size() == 5 ? chans[1].Id() : 0;
    auto carols = channels(c, own, nullptr);
    Check(carols.size() == 5 && !carols[1].IsLinkable(), "a member who may not manage channels cannot link them");
    ClientResult bad = ClientResult::nullobj;
    auto none = channels(a, 42, &bad);
    Check(none.empty() && !bad.Successful() && bad.Status() == HttpStatusCode::NotFound && bad.ErrorCode() == 10004,
          "an unknown guild fails with 404 / 10004");
    none = channels(a, 0, &bad);
    Check(none.empty() && bad.Type() == ErrorType::ValidationError, "guild 0 is refused");

    uint64_t lobby = 0;
    Client* players[3] = {&a, &c, &g};
    for (auto* p : players) {
        done = false;
        p->CreateOrJoinLobby("e2e-guilds", [&](ClientResult r, uint64_t id) {
            if (r.Successful()) lobby = id;
            done = true;
        });
        Pump([&] { return done; });
    }
    Check(lobby != 0 && Pump([&] {
              auto h = c.GetLobbyHandle(lobby);
              return h && h->LobbyMemberIds().size() == 3;
          }),
          "three players in one lobby");
    auto link = [&](uint64_t channel) {
        ClientResult out = ClientResult::nullobj;
        bool fin = false;
        a.LinkChannelToLobby(lobby, channel, [&](ClientResult r) {
            out = r;
            fin = true;
        });
        Pump([&] { return fin; });
        return out;
    };
    auto refused = link(general);
    Check(!refused.Successful() && refused.Status() == HttpStatusCode::Forbidden && refused.ErrorCode() == 50013,
          "linking without CanLinkLobby fails with 403 / 50013");
    std::printf("canlink %llu %llu\n", (unsigned long long)lobby, (unsigned long long)aId);
    std::fflush(stdout);
    Check(Pump([&] {
              auto m = a.GetLobbyHandle(lobby)->GetLobbyMemberHandle(aId);
              return m && m->CanLinkLobby();
          }),
          "the backend grants CanLinkLobby");
    auto voice = link(chans.size() == 5 ? chans[4].Id() : 0);
    Check(!voice.Successful() && voice.Status() == HttpStatusCode::BadRequest, "a voice channel cannot be linked");
    Check(link(general).Successful(), "LinkChannelToLobby");
    Check(Pump([&] {
              auto lc = c.GetLobbyHandle(lobby)->LinkedChannel();
              return lc && lc->Id() == general && lc->GuildId() == own && lc->Name() == "general";
          }),
          "the other members see the LinkedChannel");
    auto member = c.GetLobbyHandle(lobby)->GetLobbyMemberHandle(aId);
    Check(member && member->Connected(), "LobbyMemberHandle::Connected");
    chans = channels(a, own, nullptr);
    auto ll = chans.size() == 5 ? chans[1].LinkedLobby() : std::nullopt;
    Check(ll && ll->LobbyId() == lobby && ll->ApplicationId() == AppId(), "the channel's LinkedLobby");

    bool merge = false;
    std::string url;
    done = false;
    c.JoinLinkedLobbyGuild(lobby, [&] { merge = true; }, [&](ClientResult r, std::string u) {
        if (r.Successful()) url = u;
        done = true;
    });
    std::string prefix = Env("SDKPP_WEB_BASE") + "/invite/";
    Check(Pump([&] { return done; }) && !merge && url.rfind(prefix, 0) == 0, "JoinLinkedLobbyGuild returns an invite URL (rule LOB-5)");
    std::printf("invite %s\n", url.c_str());
    std::fflush(stdout);
    bool gmerge = false, gresult = false;
    g.JoinLinkedLobbyGuild(lobby, [&] { gmerge = true; }, [&](ClientResult, std::string) { gresult = true; });
    Check(Pump([&] { return gmerge; }) && !gresult, "a provisional player gets ProvisionalUserMergeRequiredCallback");

    done = false;
    bool ok = false;
    a.UnlinkChannelFromLobby(lobby, [&](ClientResult r) {
        ok = r.Successful();
        done = true;
    });
    Check(Pump([&] { return done; }) && ok && Pump([&] { return !c.GetLobbyHandle(lobby)->LinkedChannel(); }),
          "UnlinkChannelFromLobby");
}

int main(int argc, char** argv)
{
    std::map<std::string, void (*)()> phases = {
        {"link", PhaseLink},         {"provisional", PhaseProvisional}, {"merge-banned", PhaseMergeBanned},
        {"unmerge", PhaseUnmerge},   {"device", PhaseDevice},           {"child", PhaseChild},
        {"rpc", PhaseRpc},           {"voicesettings", PhaseVoiceSettings}, {"lobby", PhaseLobby}, {"voice", PhaseVoice},             {"chat", PhaseChat},
        {"social", PhaseSocial},           {"guilds", PhaseGuilds},
    };
    if (argc != 2 || !phases.count(argv[1])) {
        std::fprintf(stderr, "usage: auth_e2e PHASE\n");
        return 2;
    }
    phases[argv[1]]();
    RunCallbacks();
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
