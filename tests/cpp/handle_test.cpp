// The C++ handle-class contract and callbacks, against the real library.
#define SDKPP_IMPLEMENTATION
#include "sdkpp.hpp"

#include <cstdio>
#include <functional>
#include <string>
#include <memory>
#include <stdexcept>
#include <thread>
#include <type_traits>

static int passed, failed;

#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (cond) {                                                                    \
            ++passed;                                                                  \
        } else {                                                                       \
            ++failed;                                                                  \
            std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                              \
    } while (0)

using namespace sdkpp;

// rule OBJ-1: copy and noexcept move for every handle class; Client cannot be copied.
static_assert(std::is_copy_constructible_v<AuthorizationArgs> && std::is_copy_assignable_v<AuthorizationArgs>);
static_assert(std::is_nothrow_move_constructible_v<AuthorizationArgs> && std::is_nothrow_move_assignable_v<AuthorizationArgs>);
static_assert(std::is_nothrow_move_constructible_v<AuthorizationCodeChallenge>);
static_assert(std::is_nothrow_move_constructible_v<AuthorizationCodeVerifier>);
static_assert(std::is_nothrow_move_constructible_v<ClientCreateOptions>);
static_assert(std::is_nothrow_move_constructible_v<ClientResult>);
static_assert(std::is_nothrow_move_constructible_v<Client> && !std::is_copy_constructible_v<Client>);

static void TestHandleContract()
{
    // rule OBJ-3: nullobj is an uninitialized instance.
    CHECK(!AuthorizationArgs::nullobj);
    CHECK(!Client::nullobj);

    AuthorizationArgs a;
    CHECK(a); // rule OBJ-2
    a.SetScopes("openid");
    a.SetClientId(99);

    // Deep copy (rule OBJ-1).
    AuthorizationArgs b = a;
    CHECK(b && b.instance()->opaque != a.instance()->opaque);
    b.SetScopes("changed");
    CHECK(a.Scopes() == "openid" && b.Scopes() == "changed");
    AuthorizationArgs c;
    c = a;
    c.SetClientId(1);
    CHECK(a.ClientId() == 99 && c.ClientId() == 1);

    // Self-assignment keeps the object.
    AuthorizationArgs& self = a;
    a = self;
    CHECK(a && a.Scopes() == "openid");
    a = std::move(self);
    CHECK(a && a.Scopes() == "openid");

    // Move leaves the source invalid (rule OBJ-2) and its calls refused with defaults.
    AuthorizationArgs moved = std::move(a);
    CHECK(moved && moved.Scopes() == "openid");
    CHECK(!a);
    CHECK(a.ClientId() == 0 && a.Scopes().empty() && !a.State());
    AuthorizationArgs assigned;
    assigned = std::move(moved);
    CHECK(assigned && !moved);

    // Copy of an invalid object is invalid.
    AuthorizationArgs fromNull = AuthorizationArgs::nullobj;
    CHECK(!fromNull);

    // Drop twice is harmless; the object is invalid after.
    assigned.Drop();
    CHECK(!assigned);
    assigned.Drop();
    CHECK(!assigned);
}

// rule AA-1, AA-6, AA-7 (local parts), round trips with UTF-8, an embedded NUL and 1 MiB.
static void TestRoundTrips()
{
    AuthorizationArgs a;
    CHECK(a.ClientId() == 0); // rule AA-1: unset, the Client's id is used
    std::string utf8 = "openid sdk.social_layer \xC3\xA9\xE2\x82\xAC\xF0\x9F\x8E\xAE";
    utf8.push_back('\0');
    utf8 += "tail";
    a.SetScopes(utf8);
    CHECK(a.Scopes() == utf8 && a.Scopes().size() == utf8.size());

    std::string mib(1 << 20, 'x');
    for (size_t i = 0; i < mib.size(); i += 7) mib[i] = char('a' + i % 26);
    a.SetScopes(mib);
    CHECK(a.Scopes() == mib);

    CHECK(!a.State());
    a.SetState("s1");
    CHECK(a.State() == std::optional<std::string>("s1"));
    a.SetState(std::nullopt);
    CHECK(!a.State());
    a.SetNonce("nonce");
    CHECK(a.Nonce() == std::optional<std::string>("nonce"));
    CHECK(!a.IntegrationType());
    a.SetIntegrationType(IntegrationType::GuildInstall); // rule AA-6
    CHECK(a.IntegrationType() == IntegrationType::GuildInstall);
    a.SetCustomSchemeParam("mygame"); // rule AA-7
    CHECK(a.CustomSchemeParam() == std::optional<std::string>("mygame"));

    Client client;
    auto verifier = client.CreateAuthorizationCodeVerifier();
    CHECK(verifier && verifier.Verifier().size() >= 43);
    a.SetCodeChallenge(verifier.Challenge());
    auto challenge = a.CodeChallenge();
    CHECK(challenge && challenge->Challenge() == verifier.Challenge().Challenge());
    CHECK(challenge->Method() == AuthenticationCodeChallengeMethod::S256);
    a.SetCodeChallenge(std::nullopt);
    CHECK(!a.CodeChallenge());

    CHECK(Client::GetDefaultCommunicationScopes() == "openid sdk.social_layer"); // rule SC-1
    CHECK(Client::GetDefaultPresenceScopes() == "openid sdk.social_layer_presence"); // rule SC-2
    CHECK(client.GetHttpRequestTimeout() == 30000); // rule LIM-3
    CHECK(std::string(EnumToString(Client::Status::Ready)) == "Ready");
    CHECK(std::string(EnumToString(static_cast<ErrorType>(1234))) == "unknown");
    CHECK(Client::StatusToString(Client::Status::HttpWait) == "HttpWait");

    // rule OPT-1
    ClientCreateOptions options;
    options.SetExperimentalAudioSystem(AudioSystem::Game);
    options.SetExperimentalAndroidPreventCommsForBluetooth(true);
    options.SetCpuAffinityMask(uint64_t{0xF0});
    CHECK(options.ExperimentalAudioSystem() == AudioSystem::Game);
    CHECK(options.ExperimentalAndroidPreventCommsForBluetooth());
    CHECK(options.CpuAffinityMask() == std::optional<uint64_t>(0xF0));
    Client withOptions(options);
    CHECK(withOptions && withOptions.GetStatus() == Client::Status::Disconnected);
}

static void TestCallbacks()
{
    auto alive = std::make_shared<int>(0);
    std::thread::id mainThread = std::this_thread::get_id();
    int installedCalls = 0, resultCalls = 0, logCalls = 0;
    ErrorType lastType = ErrorType::None;
    std::string lastLog;
    {
        Client client;
        client.AddLogCallback(
            [alive, &logCalls, &lastLog, mainThread](std::string message, LoggingSeverity) {
                CHECK(std::this_thread::get_id() == mainThread);
                ++logCalls;
                lastLog = message;
            },
            LoggingSeverity::Verbose);
        CHECK(alive.use_count() == 2);
        client.IsDiscordAppInstalled([alive, &installedCalls](bool installed) {
            CHECK(!installed);
            ++installedCalls;
        });
        client.OpenConnectedGamesSettingsInPlatform([&](ClientResult r) {
            ++resultCalls;
            lastType = r.Type();
            CHECK(!r.Successful() && !r.ToString().empty());
        });
        CHECK(installedCalls == 0 && resultCalls == 0);
        RunCallbacks();
        CHECK(installedCalls == 1 && resultCalls == 1 && lastType == ErrorType::ClientNotReady);
        CHECK(alive.use_count() == 2); // the one-shot's copy was freed after it ran

        // A callback that throws is caught at the boundary.
        client.IsDiscordAppInstalled([](bool) { throw std::runtime_error("game bug"); });
        RunCallbacks();

        client.SetHttpRequestTimeout(0);
        RunCallbacks();
        CHECK(logCalls == 1 && lastLog.find("not a positive timeout") != std::string::npos);

        // Dropped before the result runs: ClientDestroyed, exactly once.
        client.OpenConnectedGamesSettingsInPlatform([&](ClientResult r) {
            ++resultCalls;
            lastType = r.Type();
        });
    }
    CHECK(alive.use_count() == 1); // the log callback was released with its Client
    RunCallbacks();
    CHECK(resultCalls == 2 && lastType == ErrorType::ClientDestroyed);
    RunCallbacks();
    CHECK(resultCalls == 2);
}

// WaitForCallbacks reports queued callbacks without running them; a thread waiting in it wakes
// when one is queued (its ten-minute timeout would hang the test otherwise).
static void TestWaitForCallbacks()
{
    using namespace std::chrono_literals;
    RunCallbacks();
    CHECK(!WaitForCallbacks(0ms) && !WaitForCallbacks(-5ms) && !WaitForCallbacks(1ms));
    Client client("http://127.0.0.1:1/api", "http://127.0.0.1:1");
    int calls = 0;
    bool woke = false;
    std::thread waiter([&woke] { woke = WaitForCallbacks(10min); });
    client.IsDiscordAppInstalled([&calls](bool) { ++calls; });
    waiter.join();
    CHECK(woke && WaitForCallbacks(0ms) && calls == 0);
    RunCallbacks();
    CHECK(calls == 1 && !WaitForCallbacks(0ms));
}

static void TestClientRecreate()
{
    for (int i = 0; i < 200; ++i) {
        Client client("http://127.0.0.1:1/api", "http://127.0.0.1:1");
        client.SetApplicationId(uint64_t(i) + 1);
        CHECK(client.GetApplicationId() == uint64_t(i) + 1);
        Client moved = std::move(client);
        CHECK(!client && moved);
    }
}

// Activity::Equals compares every field, nested parts included; an invalid object equals nothing.
static void TestActivityEquals()
{
    Activity a;
    a.SetName("Harbor Siege");
    ActivityTimestamps ts;
    ts.SetStart(1700000000000);
    a.SetTimestamps(ts);
    ActivitySecrets secrets;
    secrets.SetJoin("join-secret");
    a.SetSecrets(secrets);
    Activity b = a;
    CHECK(a.Equals(b) && b.Equals(a) && a.Equals(a));
    ts.SetEnd(1700000600000);
    b.SetTimestamps(ts);
    CHECK(!a.Equals(b));
    b.SetTimestamps(*a.Timestamps());
    secrets.SetJoin("other-secret");
    b.SetSecrets(secrets);
    CHECK(!a.Equals(b));
    b.SetSecrets(std::nullopt);
    CHECK(!a.Equals(b) && !b.Equals(a));
    Activity moved = std::move(b);
    CHECK(!b.Equals(moved) && !moved.Equals(b)); // refused, not fatal
}

// The Call surface: the raw audio hooks take the frame as int16_t* and the mute flag as bool&; a
// call that cannot start (not connected) is an invalid Call and its hooks, released at once, never
// run; an invalid Call answers defaults.
static void TestCallHandle()
{
    static_assert(std::is_same_v<Client::UserAudioReceivedCallback,
                                 std::function<void(uint64_t, int16_t*, uint64_t, int32_t, uint64_t, bool&)>>);
    auto alive = std::make_shared<int>(0);
    int frames = 0;
    {
        Client client;
        Call call = client.StartCallWithAudioCallbacks(
            1,
            [&frames, alive](uint64_t, int16_t* data, uint64_t n, int32_t, uint64_t, bool& mute) {
                ++frames;
                if (n) data[0] = 0;
                mute = true;
            },
            [&frames, alive](int16_t*, uint64_t, int32_t, uint64_t) { ++frames; });
        CHECK(!call);
        CHECK(alive.use_count() == 1); // both hooks were released when the start was refused
        CHECK(!client.GetCall(1));
        CHECK(client.GetCalls().empty());
        CHECK(call.GetStatus() == Call::Status::Disconnected);
        CHECK(call.GetParticipants().empty());
        CHECK(call.GetVerificationCode().empty());
        call.SetLowLatency(true); // refused on an invalid Call
        CHECK(!call.GetLowLatency());
        RunCallbacks();
    }
    CHECK(frames == 0);
    CHECK(Call::StatusToString(Call::Status::Connected) == "Connected");
    CHECK(std::string(EnumToString(Call::Error::Forbidden)) == "Forbidden");
}

int main()
{
    uint64_t before = GetObjectCount();
    TestHandleContract();
    TestRoundTrips();
    TestActivityEquals();
    TestCallbacks();
    TestWaitForCallbacks();
    TestClientRecreate();
    TestCallHandle();
    RunCallbacks();
    CHECK(GetObjectCount() == before);
    std::printf("handle_test_cpp: %d passed, %d failed\n%d passed, %d failed\n", passed, failed, passed, failed);
    return failed ? 1 : 0;
}
