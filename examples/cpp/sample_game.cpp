// A sample game: a player links their account with sdkpp, goes online, befriends the other
// player and shows rich presence, joins the match lobby, chats there, talks in the lobby's
// end-to-end encrypted voice call with push-to-talk, and the game prints what happens.
//
// `make demo` runs it for two players at once against a live sdkpp-server, with the environment:
//   SDKPP_API_BASE, SDKPP_WEB_BASE   where the service is
//   SDKPP_APP_ID                     the game's application id
//   SDKPP_PLAYER, SDKPP_PASSWORD     the player, who approves on the consent page
//   SDKPP_BROWSER                    the stand-in browser that plays the player's part
//   SDKPP_PLAYERS                    how many players meet in the lobby (default 2)
//   SDKPP_MICROPHONE, SDKPP_SPEAKER  names of the audio devices to use (default: the system's)
// A real game lets the SDK open the system browser instead (no SetOpenUrlCallback).
#define SDKPP_IMPLEMENTATION
#include "sdkpp.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

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

// UseDevice selects the input or output device whose name is in the environment variable env,
// as a game's audio settings menu would; without it the system's default device stays.
static void UseDevice(sdkpp::Client& client, char const* env, bool input)
{
    std::string want = Env(env);
    if (want.empty()) return;
    bool done = false;
    auto pick = [&](std::vector<sdkpp::AudioDevice> devices) {
        for (auto& d : devices) {
            if (d.Name() != want) continue;
            auto report = [&, name = d.Name()](sdkpp::ClientResult r) {
                std::printf("voice: %s device \"%s\" -> %s\n", input ? "input" : "output", name.c_str(),
                            r.Successful() ? "selected" : r.ToString().c_str());
                done = true;
            };
            if (input) client.SetInputDevice(d.Id(), report);
            else client.SetOutputDevice(d.Id(), report);
            return;
        }
        std::printf("voice: no %s device named \"%s\" among %zu\n", input ? "input" : "output", want.c_str(), devices.size());
        done = true;
    };
    if (input) client.GetInputDevices(pick);
    else client.GetOutputDevices(pick);
    RunFramesUntil([&] { return done; });
}

// Talk joins the lobby's voice call. Players take turns in lobby order: each holds push-to-talk
// for two seconds while the others listen, then says "over" in the lobby chat. Every player
// prints the call's verification code: the same code on every screen means nobody is in the
// middle of the end-to-end encryption.
static bool Talk(sdkpp::Client& client, uint64_t lobby, size_t players, uint64_t myId)
{
    UseDevice(client, "SDKPP_MICROPHONE", true);
    UseDevice(client, "SDKPP_SPEAKER", false);
    sdkpp::Call call = client.StartCall(lobby);
    if (!call) {
        std::printf("voice: StartCall refused\n");
        return false;
    }
    bool connected = false;
    call.SetStatusChangedCallback([&](sdkpp::Call::Status s, sdkpp::Call::Error e, int32_t) {
        if (e != sdkpp::Call::Error::None) std::printf("voice: call %s (%s)\n", sdkpp::EnumToString(s), sdkpp::EnumToString(e));
        else if (s == sdkpp::Call::Status::Connected && !connected) std::printf("voice: call connected\n");
        connected = s == sdkpp::Call::Status::Connected;
    });
    auto name = [&](uint64_t id) {
        auto u = client.GetUser(id);
        return u ? u->DisplayName() : std::to_string(id);
    };
    // Who is heard, and how many times each started speaking: speech has pauses, so a talker
    // may start and stop several times in one turn.
    std::vector<uint64_t> heard;
    call.SetSpeakingStatusChangedCallback([&](uint64_t id, bool speaking) {
        if (!speaking || id == myId) return;
        if (std::find(heard.begin(), heard.end(), id) == heard.end()) {
            heard.push_back(id);
            std::printf("voice: hears %s speaking\n", name(id).c_str());
        }
    });
    call.SetAudioMode(sdkpp::AudioModeType::MODE_PTT);
    call.SetPTTReleaseDelay(200);
    bool ready = RunFramesUntil([&] {
        return connected && call.GetParticipants().size() >= players;
    });
    bool ended = false;
    auto end = [&] {
        // The call's and the chat's handlers capture this function's locals: end the call and
        // replace the chat handler before they go.
        client.SetMessageCreatedCallback([](uint64_t) {});
        client.EndCall(lobby, [&] { ended = true; });
        RunFramesUntil([&] { return ended; });
        std::printf("voice: left the call\n");
    };
    if (!ready) {
        std::printf("voice: the call did not connect with every player\n");
        end();
        return false;
    }
    std::printf("voice: in the call with %zu players, verification code %s\n", call.GetParticipants().size(),
                call.GetVerificationCode().c_str());

    // Turns follow the lobby's member order; a player speaks once everyone before them said "over".
    auto members = client.GetLobbyHandle(lobby)->LobbyMemberIds();
    std::sort(members.begin(), members.end());
    size_t myTurn = std::find(members.begin(), members.end(), myId) - members.begin();

    // Positional voice (sdkpp): the players stand 3 m apart along x, facing -z. Each one's client
    // sends its position with its voice, end-to-end encrypted; the others hear it from there.
    float x = 3.0f * static_cast<float>(myTurn);
    call.SetPositionalVoice(true);
    call.SetPositionalProperties(32.0f, 1.0f, 1.0f, sdkpp::Call::AudioFadeModel::InverseByDistance);
    call.SetListenerPosition(x, 0, 0, 0, 0, -1, 0, 1, 0);
    call.SetSelfPosition(x, 0, 0);
    std::printf("voice: positional voice %s, standing at x=%.0f\n", call.GetPositionalVoice() ? "on" : "off", x);
    size_t overs = 0;
    client.SetMessageCreatedCallback([&](uint64_t id) {
        auto m = client.GetMessageHandle(id);
        if (!m || m->ChannelId() != lobby || m->Content() != "over") return;
        ++overs;
        if (m->AuthorId() != myId) std::printf("voice: %s is done talking\n", name(m->AuthorId()).c_str());
    });
    RunFramesUntil([&] { return overs >= myTurn; });
    std::printf("voice: presses push-to-talk\n");
    call.SetPTTActive(true);
    for (int i = 0; i < 120; ++i) Frame(); // about two seconds of speech
    call.SetPTTActive(false);
    std::printf("voice: releases push-to-talk\n");
    for (int i = 0; i < 30; ++i) Frame(); // the release delay and the last packets
    client.SendLobbyMessage(lobby, "over", [](sdkpp::ClientResult, uint64_t) {});
    bool all = RunFramesUntil([&] { return overs >= players && heard.size() >= players - 1; });
    if (!all) std::printf("voice: heard %zu of the %zu other players\n", heard.size(), players - 1);
    end();
    return all;
}

// Play connects, joins the match lobby by its secret, says hello, and waits until it has heard
// every other player before it leaves.
static bool Play(sdkpp::Client& client, std::string const& player)
{
    size_t players = Env("SDKPP_PLAYERS").empty() ? 2 : std::strtoul(Env("SDKPP_PLAYERS").c_str(), nullptr, 10);
    client.SetStatusChangedCallback([](sdkpp::Client::Status s, sdkpp::Client::Error, int32_t) {
        std::printf("sdk: status %s\n", sdkpp::EnumToString(s));
    });
    client.Connect();
    if (!RunFramesUntil([&] { return client.GetStatus() == sdkpp::Client::Status::Ready; })) {
        std::printf("game: could not connect\n");
        return false;
    }
    auto me = client.GetCurrentUserV2();
    std::printf("game: online as %s\n", me ? me->DisplayName().c_str() : "?");

    // The two players become game friends: whoever asks second accepts the other's request.
    std::string friendName = player == "alice" ? "bob" : "alice";
    client.SendGameFriendRequest(friendName, [&](sdkpp::ClientResult r) {
        std::printf("sdk: SendGameFriendRequest(%s) -> %s\n", friendName.c_str(), r.Successful() ? "ok" : r.ToString().c_str());
    });
    RunFramesUntil([&] {
        for (auto& rel : client.GetRelationships()) {
            if (rel.GameRelationshipType() == sdkpp::RelationshipType::Friend) return true;
        }
        return false;
    });

    // Rich presence: what the player is doing, shown to friends.
    sdkpp::Activity activity;
    activity.SetState("In the match lobby");
    activity.SetDetails(player == "alice" ? "Playing the red team" : "Playing the blue team");
    sdkpp::ActivityParty party;
    party.SetId("demo-match-1");
    party.SetCurrentSize(1);
    party.SetMaxSize(2);
    activity.SetParty(party);
    client.UpdateRichPresence(activity, [](sdkpp::ClientResult r) {
        std::printf("sdk: UpdateRichPresence -> %s\n", r.Successful() ? "ok" : r.ToString().c_str());
    });
    bool seen = false;
    RunFramesUntil([&] {
        if (seen) return true;
        for (auto& rel : client.GetRelationshipsByGroup(sdkpp::RelationshipGroupType::OnlinePlayingGame)) {
            auto u = rel.User();
            auto act = u ? u->GameActivity() : std::nullopt;
            if (act && act->Details()) {
                std::printf("presence: friend %s is online in %s: %s, %s\n", u->DisplayName().c_str(), act->Name().c_str(),
                            act->Details()->c_str(), act->State().value_or("").c_str());
                return seen = true;
            }
        }
        return false;
    });
    if (!seen) std::printf("game: the friend's rich presence did not arrive\n");

    // Every message, direct or in a lobby, arrives through one callback on this thread.
    size_t heard = 0;
    client.SetMessageCreatedCallback([&](uint64_t id) {
        auto m = client.GetMessageHandle(id);
        if (!m) return;
        auto author = m->Author();
        std::printf("chat: <%s> %s\n", author ? author->DisplayName().c_str() : "?", m->Content().c_str());
        if (!me || m->AuthorId() != me->Id()) ++heard;
    });
    client.SetLobbyMemberAddedCallback([&](uint64_t, uint64_t member) {
        if (me && member == me->Id()) return;
        auto u = client.GetUser(member);
        std::printf("game: a player joined the lobby (%s)\n", u ? u->DisplayName().c_str() : std::to_string(member).c_str());
    });

    uint64_t lobby = 0;
    bool joined = false;
    client.CreateOrJoinLobbyWithMetadata("demo-match-1", {{"map", "harbor"}}, {{"team", player == "alice" ? "red" : "blue"}},
                                         [&](sdkpp::ClientResult r, uint64_t id) {
                                             joined = true;
                                             lobby = r.Successful() ? id : 0;
                                             std::printf("sdk: CreateOrJoinLobby -> %s\n", r.Successful() ? "joined" : r.ToString().c_str());
                                         });
    RunFramesUntil([&] { return joined; });
    if (lobby == 0) return false;
    RunFramesUntil([&] {
        auto h = client.GetLobbyHandle(lobby);
        return h && h->LobbyMemberIds().size() >= players;
    });
    auto h = client.GetLobbyHandle(lobby);
    std::printf("game: in lobby %llu on map %s with %zu players\n", (unsigned long long)lobby,
                h ? h->Metadata()["map"].c_str() : "?", h ? h->LobbyMemberIds().size() : 0);

    bool sent = false;
    client.SendLobbyMessage(lobby, "hello from " + player + ", gl hf!", [&](sdkpp::ClientResult r, uint64_t) {
        sent = true;
        if (!r.Successful()) std::printf("sdk: SendLobbyMessage -> %s\n", r.ToString().c_str());
    });
    bool ok = RunFramesUntil([&] { return sent && heard >= players - 1; }) && seen;

    std::vector<sdkpp::MessageHandle> history;
    bool fetched = false;
    client.GetLobbyMessagesWithLimit(lobby, 10, [&](sdkpp::ClientResult r, std::vector<sdkpp::MessageHandle> ms) {
        fetched = true;
        history = std::move(ms);
        if (!r.Successful()) std::printf("sdk: GetLobbyMessagesWithLimit -> %s\n", r.ToString().c_str());
    });
    RunFramesUntil([&] { return fetched; });
    std::printf("game: the lobby's history holds %zu messages\n", history.size());

    ok = Talk(client, lobby, players, me ? me->Id() : 0) && ok;

    // Stay a moment so that the others hear this player too, then leave.
    for (int i = 0; i < 30; ++i) Frame();
    bool left = false;
    client.LeaveLobby(lobby, [&](sdkpp::ClientResult r) {
        left = true;
        std::printf("sdk: LeaveLobby -> %s\n", r.Successful() ? "ok" : r.ToString().c_str());
    });
    RunFramesUntil([&] { return left; });
    client.Disconnect();
    RunFramesUntil([&] { return client.GetStatus() == sdkpp::Client::Status::Disconnected; });
    return ok;
}

int main()
{
    std::setvbuf(stdout, nullptr, _IOLBF, 0); // one transcript line at a time, even into a pipe
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
            } else if (!Play(client, player)) {
                std::printf("game: the match did not complete\n");
                status = 1;
            }
        }
    } // the client, the verifier and the arguments are released here
    sdkpp::RunCallbacks();
    std::printf("game: exits; SDK objects still alive: %llu\n",
                (unsigned long long)(sdkpp::GetObjectCount() - objectsAtStart));
    return status;
}
