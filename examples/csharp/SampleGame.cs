// A sample game in C#, the same as examples/cpp/sample_game.cpp over the C# binding
// (bindings/csharp, namespace Sdkpp): a player links their account with sdkpp, goes online,
// befriends the other player and shows rich presence, joins the match lobby by its secret, chats
// there, talks in the lobby's end-to-end encrypted voice call with push-to-talk, and the game
// prints what happens, the call's verification code included.
//
// `make demo SAMPLE=csharp` runs it with Mono for two players at once against a live sdkpp-server,
// with the environment the C++ sample reads (see its header): SDKPP_API_BASE, SDKPP_WEB_BASE,
// SDKPP_APP_ID, SDKPP_PLAYER, SDKPP_PASSWORD, SDKPP_BROWSER, SDKPP_PLAYERS, SDKPP_MICROPHONE,
// SDKPP_SPEAKER. Callbacks, events and the continuations of awaited calls run only inside
// Sdk.RunCallbacks, on the game's thread.

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Sdkpp;

static class SampleGame
{
    static string Env(string name)
    {
        return Environment.GetEnvironmentVariable(name) ?? "";
    }

    // Frame runs one game frame: the SDK's callbacks run here, on the game's thread.
    static void Frame()
    {
        Sdk.RunCallbacks();
        Thread.Sleep(16);
    }

    static bool RunFramesUntil(Func<bool> done)
    {
        for (int i = 0; i < 60 * 60 && !done(); i++) // at most about a minute
        {
            Frame();
        }
        return done();
    }

    // Await runs game frames until task completes (its continuations run inside them) and
    // returns its result, or null when it took too long.
    static T Await<T>(Task<T> task) where T : class
    {
        RunFramesUntil(() => task.IsCompleted);
        return task.IsCompleted ? task.Result : null;
    }

    // Text is "ok" for a successful result, else its description.
    static string Text(SdkResult result)
    {
        return result == null ? "no answer" : result.Successful ? "ok" : result.ToString();
    }


    static string Name(Client client, ulong id)
    {
        using (UserHandle u = client.CopyUser(id))
        {
            return u != null ? u.DisplayName() : id.ToString();
        }
    }

    // UseDevice selects the input or output device whose name is in the environment variable env,
    // as a game's audio settings menu would; without it the system's default device stays.
    static void UseDevice(Client client, string env, bool input)
    {
        string want = Env(env);
        if (want.Length == 0)
        {
            return;
        }
        bool done = false;
        string kind = input ? "input" : "output";
        Action<AudioDevice[]> pick = devices =>
        {
            AudioDevice found = devices.FirstOrDefault(d => d.Name() == want);
            if (found == null)
            {
                Console.WriteLine("voice: no {0} device named \"{1}\" among {2}", kind, want, devices.Length);
                done = true;
            }
            else
            {
                Task<SdkResult> set = input ? client.SetInputDeviceAsync(found.Id()) : client.SetOutputDeviceAsync(found.Id());
                set.ContinueWith(t =>
                {
                    Console.WriteLine("voice: {0} device \"{1}\" -> {2}", kind, want, Selected(t.Result));
                    done = true;
                }, TaskContinuationOptions.ExecuteSynchronously);
            }
            foreach (AudioDevice d in devices)
            {
                d.Dispose();
            }
        };
        if (input)
        {
            client.GetInputDevices(devices => pick(devices));
        }
        else
        {
            client.GetOutputDevices(devices => pick(devices));
        }
        RunFramesUntil(() => done);
    }

    static string Selected(SdkResult r)
    {
        string text = Text(r);
        return text == "ok" ? "selected" : text;
    }

    // Talk joins the lobby's voice call. Players take turns in lobby order: each holds
    // push-to-talk for two seconds while the others listen, then says "over" in the lobby chat.
    // Every player prints the call's verification code: the same code on every screen means nobody
    // is in the middle of the end-to-end encryption.
    static bool Talk(Client client, ulong lobby, int players, ulong myId)
    {
        UseDevice(client, "SDKPP_MICROPHONE", true);
        UseDevice(client, "SDKPP_SPEAKER", false);
        using (Call call = client.StartCall(lobby))
        {
            if (call == null)
            {
                Console.WriteLine("voice: StartCall refused");
                return false;
            }
            bool connected = false;
            call.StatusChanged += (s, e, detail) =>
            {
                if (e != Call.Error.None)
                {
                    Console.WriteLine("voice: call {0} ({1})", s, e);
                }
                else if (s == Call.Status.Connected && !connected)
                {
                    Console.WriteLine("voice: call connected");
                }
                connected = s == Call.Status.Connected;
            };
            // Who is heard: speech has pauses, so a talker may start and stop several times.
            HashSet<ulong> heard = new HashSet<ulong>();
            call.SpeakingStatusChanged += (id, speaking) =>
            {
                if (speaking && id != myId && heard.Add(id))
                {
                    Console.WriteLine("voice: hears {0} speaking", Name(client, id));
                }
            };
            call.SetAudioMode(AudioModeType.MODE_PTT);
            call.SetPTTReleaseDelay(200);
            bool ready = RunFramesUntil(() => connected && call.GetParticipants().Length >= players);
            bool ended = false;
            Client.MessageCreatedCallback onOver = null;
            Action end = () =>
            {
                if (onOver != null)
                {
                    client.MessageCreated -= onOver;
                }
                client.EndCall(lobby, () => ended = true);
                RunFramesUntil(() => ended);
                Console.WriteLine("voice: left the call");
            };
            if (!ready)
            {
                Console.WriteLine("voice: the call did not connect with every player");
                end();
                return false;
            }
            Console.WriteLine("voice: in the call with {0} players, verification code {1}",
                call.GetParticipants().Length, call.GetVerificationCode());

            // Turns follow the lobby's member order; a player speaks once everyone before them said "over".
            ulong[] members;
            using (LobbyHandle h = client.CopyLobbyHandle(lobby))
            {
                members = h != null ? h.LobbyMemberIds() : new ulong[0];
            }
            Array.Sort(members);
            int myTurn = Array.IndexOf(members, myId);

            // Positional voice (sdkpp): the players stand 3 m apart along x, facing -z. Each one's
            // client sends its position with its voice, end-to-end encrypted; the others hear it
            // from there. (Unity's coordinates are left-handed: pass z negated.)
            float x = 3.0f * myTurn;
            call.SetPositionalVoice(true);
            call.SetPositionalProperties(32.0f, 1.0f, 1.0f, Call.AudioFadeModel.InverseByDistance);
            call.SetListenerPosition(x, 0, 0, 0, 0, -1, 0, 1, 0);
            call.SetSelfPosition(x, 0, 0);
            Console.WriteLine("voice: positional voice {0}, standing at x={1:0}",
                call.GetPositionalVoice() ? "on" : "off", x);
            int overs = 0;
            onOver = id =>
            {
                using (MessageHandle m = client.CopyMessageHandle(id))
                {
                    if (m == null || m.ChannelId() != lobby || m.Content() != "over")
                    {
                        return;
                    }
                    overs++;
                    if (m.AuthorId() != myId)
                    {
                        Console.WriteLine("voice: {0} is done talking", Name(client, m.AuthorId()));
                    }
                }
            };
            client.MessageCreated += onOver;
            RunFramesUntil(() => overs >= myTurn);
            Console.WriteLine("voice: presses push-to-talk");
            call.SetPTTActive(true);
            for (int i = 0; i < 120; i++) Frame(); // about two seconds of speech
            call.SetPTTActive(false);
            Console.WriteLine("voice: releases push-to-talk");
            for (int i = 0; i < 30; i++) Frame(); // the release delay and the last packets
            client.SendLobbyMessageAsync(lobby, "over"); // its result does not matter: the others count the message
            bool all = RunFramesUntil(() => overs >= players && heard.Count >= players - 1);
            if (!all)
            {
                Console.WriteLine("voice: heard {0} of the {1} other players", heard.Count, players - 1);
            }
            end();
            return all;
        }
    }

    static bool HasFriend(Client client)
    {
        RelationshipHandle[] rels = client.GetRelationships();
        bool found = rels.Any(r => r.GameRelationshipType() == RelationshipType.Friend);
        foreach (RelationshipHandle r in rels) r.Dispose();
        return found;
    }

    // FriendPresence prints the rich presence of a friend playing the game, once it has details.
    static bool FriendPresence(Client client)
    {
        bool seen = false;
        RelationshipHandle[] rels = client.GetRelationshipsByGroup(RelationshipGroupType.OnlinePlayingGame);
        foreach (RelationshipHandle rel in rels)
        {
            using (rel)
            using (UserHandle u = rel.User())
            using (Activity act = u != null ? u.GameActivity() : null)
            {
                if (!seen && act != null && act.Details() != null)
                {
                    Console.WriteLine("presence: friend {0} is online in {1}: {2}, {3}", u.DisplayName(), act.Name(),
                        act.Details(), act.State() ?? "");
                    seen = true;
                }
            }
        }
        return seen;
    }

    // Report prints the outcome of a call when it arrives (inside a frame's RunCallbacks).
    static void Report<T>(string what, Task<T> task, bool quietOnSuccess = false) where T : SdkResult
    {
        task.ContinueWith(t =>
        {
            if (!quietOnSuccess || !t.Result.Successful)
            {
                Console.WriteLine("sdk: {0} -> {1}", what, Text(t.Result));
            }
        }, TaskContinuationOptions.ExecuteSynchronously);
    }

    // Play connects, joins the match lobby by its secret, says hello, and waits until it has heard
    // every other player before it leaves.
    static bool Play(Client client, string player)
    {
        int players = Env("SDKPP_PLAYERS").Length == 0 ? 2 : int.Parse(Env("SDKPP_PLAYERS"));
        client.StatusChanged += (s, e, detail) => Console.WriteLine("sdk: status {0}", s);
        client.Connect();
        if (!RunFramesUntil(() => client.GetStatus() == Client.Status.Ready))
        {
            Console.WriteLine("game: could not connect");
            return false;
        }
        ulong myId = 0;
        using (UserHandle me = client.GetCurrentUserV2())
        {
            myId = me != null ? me.Id() : 0;
            Console.WriteLine("game: online as {0}", me != null ? me.DisplayName() : "?");
        }

        // The two players become game friends: whoever asks second accepts the other's request.
        string friendName = player == "alice" ? "bob" : "alice";
        Report("SendGameFriendRequest(" + friendName + ")", client.SendGameFriendRequestAsync(friendName));
        RunFramesUntil(() => HasFriend(client));

        // Rich presence: what the player is doing, shown to friends.
        using (Activity activity = new Activity())
        using (ActivityParty party = new ActivityParty())
        {
            activity.SetState("In the match lobby");
            activity.SetDetails(player == "alice" ? "Playing the red team" : "Playing the blue team");
            party.SetId("demo-match-1");
            party.SetCurrentSize(1);
            party.SetMaxSize(2);
            activity.SetParty(party);
            Report("UpdateRichPresence", client.UpdateRichPresenceAsync(activity));
        }
        bool seen = false;
        RunFramesUntil(() => seen || (seen = FriendPresence(client)));
        if (!seen)
        {
            Console.WriteLine("game: the friend's rich presence did not arrive");
        }

        // Every message, direct or in a lobby, arrives through one callback on this thread.
        int heard = 0;
        Client.MessageCreatedCallback onChat = id =>
        {
            using (MessageHandle m = client.CopyMessageHandle(id))
            {
                if (m == null)
                {
                    return;
                }
                Console.WriteLine("chat: <{0}> {1}", Name(client, m.AuthorId()), m.Content());
                if (m.AuthorId() != myId)
                {
                    heard++;
                }
            }
        };
        client.MessageCreated += onChat;
        client.LobbyMemberAdded += (lobbyId, member) =>
        {
            if (member != myId)
            {
                Console.WriteLine("game: a player joined the lobby ({0})", Name(client, member));
            }
        };

        Client.CreateOrJoinLobbyResult joined = Await(client.CreateOrJoinLobbyWithMetadataAsync("demo-match-1",
            new Dictionary<string, string> { { "map", "harbor" } },
            new Dictionary<string, string> { { "team", player == "alice" ? "red" : "blue" } }));
        ulong lobby = joined != null && joined.Successful ? joined.LobbyId : 0;
        Console.WriteLine("sdk: CreateOrJoinLobby -> {0}", lobby != 0 ? "joined" : Text(joined));
        if (lobby == 0)
        {
            return false;
        }
        Func<int> memberCount = () =>
        {
            using (LobbyHandle h = client.CopyLobbyHandle(lobby))
            {
                return h != null ? h.LobbyMemberIds().Length : 0;
            }
        };
        RunFramesUntil(() => memberCount() >= players);
        using (LobbyHandle h = client.CopyLobbyHandle(lobby))
        {
            string map;
            if (h == null || !h.Metadata().TryGetValue("map", out map))
            {
                map = "?";
            }
            Console.WriteLine("game: in lobby {0} on map {1} with {2} players", lobby, map, memberCount());
        }

        Task<Client.SendUserMessageResult> sent = client.SendLobbyMessageAsync(lobby, "hello from " + player + ", gl hf!");
        Report("SendLobbyMessage", sent, quietOnSuccess: true);
        bool ok = RunFramesUntil(() => sent.IsCompleted && heard >= players - 1) && seen;

        Client.GetLobbyMessagesResult history = Await(client.GetLobbyMessagesWithLimitAsync(lobby, 10));
        if (history != null && !history.Successful)
        {
            Console.WriteLine("sdk: GetLobbyMessagesWithLimit -> {0}", Text(history));
        }
        int count = history != null ? history.Messages.Length : 0;
        if (history != null)
        {
            foreach (MessageHandle m in history.Messages) m.Dispose(); // the messages are the caller's
        }
        Console.WriteLine("game: the lobby's history holds {0} messages", count);

        client.MessageCreated -= onChat; // the call's turns count the "over" messages themselves
        ok = Talk(client, lobby, players, myId) && ok;

        // Stay a moment so that the others hear this player too, then leave.
        for (int i = 0; i < 30; i++) Frame();
        Console.WriteLine("sdk: LeaveLobby -> {0}", Text(Await(client.LeaveLobbyAsync(lobby))));
        client.Disconnect();
        RunFramesUntil(() => client.GetStatus() == Client.Status.Disconnected);
        return ok;
    }

    // LinkAccount runs the OAuth 2.0 flow with PKCE: the consent page (here the stand-in browser),
    // the code exchange, and the token given to the SDK.
    // Each await continues inside a frame's RunCallbacks, on the game's thread.
    static async Task<bool> LinkAccountAsync(Client client, AuthorizationArgs args, AuthorizationCodeVerifier verifier, ulong appId, string player)
    {
        client.SetOpenUrlCallback(url =>
        {
            Console.WriteLine("sdk: opens the consent page; {0} logs in and presses Approve", player);
            ProcessStartInfo browser = new ProcessStartInfo(Env("SDKPP_BROWSER"))
            {
                Arguments = "-user '" + player + "' -password '" + Env("SDKPP_PASSWORD") + "' '" + url + "'",
                UseShellExecute = false,
                RedirectStandardOutput = true,
            };
            using (Process p = Process.Start(browser))
            {
                p.StandardOutput.ReadToEnd();
                p.WaitForExit();
                if (p.ExitCode != 0)
                {
                    Console.WriteLine("game: the browser step failed");
                }
            }
        });
        Client.AuthorizationResult auth = await client.AuthorizeAsync(args);
        Console.WriteLine("sdk: Authorize -> {0}, redirect {1}", auth.Successful ? "approved" : Text(auth), auth.RedirectUri);
        if (!auth.Successful)
        {
            return false;
        }
        Client.TokenExchangeResult token = await client.GetTokenAsync(appId, auth.Code, verifier.Verifier(), auth.RedirectUri);
        Console.WriteLine("sdk: GetToken -> {0}; token valid {1} days, scopes \"{2}\"", Text(token), token.ExpiresIn / 86400, token.Scopes);
        if (token.AccessToken.Length == 0)
        {
            return false;
        }
        await client.UpdateTokenAsync(AuthorizationTokenType.Bearer, token.AccessToken);
        Client.FetchCurrentUserResult me = await client.FetchCurrentUserAsync(AuthorizationTokenType.Bearer, token.AccessToken);
        Console.WriteLine("game: linked as {0} (user {1}); authenticated: {2}", me.Name, me.Id,
            client.IsAuthenticated() ? "yes" : "no");
        return me.Successful;
    }

    // RunLink runs frames until linking finished and says whether it succeeded.
    static bool RunLink(Task<bool> linking)
    {
        RunFramesUntil(() => linking.IsCompleted);
        if (linking.IsFaulted)
        {
            Console.WriteLine("game: linking failed: {0}", linking.Exception.GetBaseException().Message);
        }
        return linking.Status == TaskStatus.RanToCompletion && linking.Result;
    }

    static int Main()
    {
        ulong objectsAtStart = Sdk.GetObjectCount();
        Console.WriteLine("sdkpp {0}.{1}.{2} (build {3})", Client.GetVersionMajor(), Client.GetVersionMinor(),
            Client.GetVersionPatch(), Client.GetVersionHash());
        string player = Env("SDKPP_PLAYER");
        bool online = Env("SDKPP_API_BASE").Length > 0;
        int status = 0;
        using (Client client = online ? new Client(Env("SDKPP_API_BASE"), Env("SDKPP_WEB_BASE")) : new Client())
        {
            client.AddLogCallback((message, severity) => Console.WriteLine("[sdk {0}] {1}", severity, message),
                LoggingSeverity.Warning);
            ulong appId = online ? ulong.Parse(Env("SDKPP_APP_ID")) : 1234567890UL;
            client.SetApplicationId(appId);

            // Account linking starts with the authorization arguments and a PKCE pair.
            using (AuthorizationCodeVerifier verifier = client.CreateAuthorizationCodeVerifier())
            using (AuthorizationCodeChallenge challenge = verifier.CopyChallenge())
            using (AuthorizationArgs args = new AuthorizationArgs())
            {
                args.SetScopes(Client.GetDefaultCommunicationScopes());
                args.SetCodeChallenge(challenge);
                string c = challenge.Challenge();
                Console.WriteLine("game: asks to link the account, scopes \"{0}\", PKCE challenge {1}...", args.Scopes(),
                    c.Substring(0, Math.Min(8, c.Length)));

                if (!online)
                {
                    SdkResult r = Await(client.OpenConnectedGamesSettingsInPlatformAsync());
                    Console.WriteLine("game: offline; the SDK answers: {0}", r);
                }
                else if (!RunLink(LinkAccountAsync(client, args, verifier, appId, player)))
                {
                    Console.WriteLine("game: account linking did not complete");
                    status = 1;
                }
                else if (!Play(client, player))
                {
                    Console.WriteLine("game: the match did not complete");
                    status = 1;
                }
            }
        } // the client is released here
        Sdk.RunCallbacks();
        Console.WriteLine("game: exits; SDK objects still alive: {0}", Sdk.GetObjectCount() - objectsAtStart);
        Sdk.Shutdown(); // what an engine does before it reloads the game's scripts
        return status;
    }
}
