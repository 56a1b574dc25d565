// Account linking from C# against a live sdkpp-server, one phase per run:
//   mono AuthE2E.exe PHASE
// The C# twin of tests/cpp/auth_e2e.cpp: the same phases, environment, checks and output. The Go
// harness (tests/e2e) starts the service and the other parties, sets the environment
// (SDKPP_API_BASE, SDKPP_WEB_BASE, SDKPP_APP_ID, SDKPP_CHILD_APP_ID, SDKPP_BROWSER, SDKPP_USERS
// "name:password,...", and per phase SDKPP_BOT_ISSUED_TOKEN, SDKPP_OIDC_TOKEN, SDKPP_OIDC_TOKEN2),
// runs each phase and checks what the service saw. The program prints one line per check and
// "N passed, M failed" last; the exit code is 1 if a check failed, 2 on a usage error.
//
// It uses only the binding's public surface (Sdkpp.dll, built by tests/csharp/e2e/build.sh), like
// a game would, and disposes every object it gets from the binding.

using System;
using System.Linq;
using System.Collections.Generic;
using System.Diagnostics;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using System.Runtime.InteropServices;
using Sdkpp;

static class AuthE2E
{
    static int passed, failed;

    static void Check(bool ok, string what)
    {
        if (ok)
        {
            passed++;
        }
        else
        {
            failed++;
        }
        Console.WriteLine((ok ? "PASS " : "FAIL ") + what);
        Console.Out.Flush();
    }

    static string Env(string name)
    {
        return Environment.GetEnvironmentVariable(name) ?? "";
    }

    // Pump runs callbacks on this thread until done() or the timeout.
    static bool Pump(Func<bool> done, int seconds = 30)
    {
        Stopwatch clock = Stopwatch.StartNew();
        while (!done())
        {
            if (clock.Elapsed > TimeSpan.FromSeconds(seconds))
            {
                return false;
            }
            Sdk.RunCallbacks();
            Thread.Sleep(5);
        }
        return true;
    }

    static Dictionary<string, string> Users()
    {
        Dictionary<string, string> users = new Dictionary<string, string>();
        foreach (string pair in Env("SDKPP_USERS").Split(','))
        {
            if (pair.Length == 0)
            {
                continue;
            }
            int colon = pair.IndexOf(':');
            if (colon < 0)
            {
                users[pair] = "";
            }
            else
            {
                users[pair.Substring(0, colon)] = pair.Substring(colon + 1);
            }
        }
        return users;
    }

    static ulong ParseId(string s)
    {
        ulong id;
        return ulong.TryParse(s, out id) ? id : 0;
    }

    static ulong AppId()
    {
        return ParseId(Env("SDKPP_APP_ID"));
    }

    // Quote makes one argument of ProcessStartInfo.Arguments. Mono on Unix splits Arguments like a
    // POSIX shell (g_shell_parse_argv, no shell is run) and ignores ProcessStartInfo.ArgumentList,
    // so each argument goes in single quotes, a quote inside it as '\''.
    static string Quote(string arg)
    {
        return "'" + arg.Replace("'", "'\\''") + "'";
    }

    // Browse runs the stand-in browser on a URL: it logs in as user and approves (or denies).
    static void Browse(string url, string user, bool deny = false)
    {
        List<string> args = new List<string>();
        if (deny)
        {
            args.Add("-deny");
        }
        else
        {
            string password;
            Users().TryGetValue(user, out password);
            args.Add("-user");
            args.Add(user);
            args.Add("-password");
            args.Add(password ?? "");
        }
        if (url.Contains("/activate?"))
        {
            // The device verification page: hand the user code to the browser's device mode.
            string code = "";
            int at = url.IndexOf("user_code=", StringComparison.Ordinal);
            if (at >= 0)
            {
                int start = at + "user_code=".Length;
                int end = url.IndexOf('&', start);
                code = end < 0 ? url.Substring(start) : url.Substring(start, end - start);
            }
            args.Add("-device-code");
            args.Add(code);
            args.Add(Env("SDKPP_WEB_BASE"));
        }
        else
        {
            args.Add(url);
        }
        StringBuilder line = new StringBuilder();
        foreach (string a in args)
        {
            line.Append(line.Length > 0 ? " " : "").Append(Quote(a));
        }
        ProcessStartInfo psi = new ProcessStartInfo(Env("SDKPP_BROWSER"), line.ToString());
        psi.UseShellExecute = false;
        psi.RedirectStandardOutput = true; // discarded, like "> /dev/null"; stderr is inherited
        try
        {
            using (Process p = Process.Start(psi))
            {
                p.StandardOutput.ReadToEnd();
                p.WaitForExit();
                if (p.ExitCode != 0)
                {
                    Console.WriteLine("note: the browser exited with " + p.ExitCode);
                }
            }
        }
        catch (Exception e)
        {
            Console.WriteLine("note: the browser did not start: " + e.Message);
        }
    }

    static Client NewClient(string user)
    {
        Client c = new Client(Env("SDKPP_API_BASE"), Env("SDKPP_WEB_BASE"));
        c.SetApplicationId(AppId());
        c.AddLogCallback((message, severity) => Console.WriteLine("log [" + severity + "] " + message), LoggingSeverity.Verbose);
        if (user.Length > 0)
        {
            c.SetOpenUrlCallback(url => Browse(url, user));
        }
        return c;
    }

    // Result is what a check needs of a ClientResult, read in the callback, which then disposes it.
    sealed class Result
    {
        public bool Successful;
        public ErrorType Type = ErrorType.None;
        public int ErrorCode;
        public string ResponseBody = "";
        public string Text = "";

        public static Result Take(ClientResult r)
        {
            Result o = new Result();
            if (r == null)
            {
                o.Text = "(no result)";
                return o;
            }
            using (r)
            {
                o.Successful = r.Successful();
                o.Type = r.Type();
                o.ErrorCode = r.ErrorCode();
                o.ResponseBody = r.ResponseBody();
                o.Text = r.ToString();
            }
            return o;
        }
    }

    sealed class Tokens
    {
        public bool Done;
        public Result Result = new Result();
        public string Access = "", Refresh = "", Scopes = "";
        public AuthorizationTokenType Type = AuthorizationTokenType.User;
        public int ExpiresIn;
    }

    static Client.TokenExchangeCallback Into(Tokens t)
    {
        return (r, access, refresh, type, expiresIn, scopes) =>
        {
            t.Result = Result.Take(r);
            t.Access = access;
            t.Refresh = refresh;
            t.Type = type;
            t.ExpiresIn = expiresIn;
            t.Scopes = scopes;
            t.Done = true;
        };
    }

    sealed class Authorized
    {
        public string Code = "", Redirect = "", Verifier = "";
        public bool Ok;
    }

    // Link runs Authorize with PKCE (the user approving in the browser) and returns the code.
    static Authorized Link(Client c)
    {
        Authorized o = new Authorized();
        bool done = false;
        using (AuthorizationCodeVerifier verifier = c.CreateAuthorizationCodeVerifier())
        using (AuthorizationArgs args = new AuthorizationArgs())
        {
            o.Verifier = verifier.Verifier();
            args.SetScopes(Client.GetDefaultCommunicationScopes());
            using (AuthorizationCodeChallenge challenge = verifier.CopyChallenge())
            {
                args.SetCodeChallenge(challenge);
            }
            c.Authorize(args, (r, code, redirect) =>
            {
                Result res = Result.Take(r);
                o.Ok = res.Successful;
                if (!o.Ok)
                {
                    Console.WriteLine("note: Authorize: " + res.Text);
                }
                o.Code = code;
                o.Redirect = redirect;
                done = true;
            });
            Check(Pump(() => done) && o.Ok && o.Code.Length > 0, "Authorize returns a code (rule AU-1)");
        }
        return o;
    }

    static void PhaseLink()
    {
        using (Client c = NewClient("alice"))
        {
            Authorized a = Link(c);
            Tokens t = new Tokens();
            c.GetToken(AppId(), a.Code, a.Verifier, a.Redirect, Into(t));
            Check(Pump(() => t.Done) && t.Result.Successful && t.Access.Length > 0 && t.Refresh.Length > 0 &&
                      t.Type == AuthorizationTokenType.Bearer && t.ExpiresIn == 604800,
                  "GetToken with the PKCE verifier (rule AA-5)");

            bool fetched = false;
            string name = "";
            c.FetchCurrentUser(AuthorizationTokenType.Bearer, t.Access, (r, id, n) =>
            {
                fetched = Result.Take(r).Successful && id != 0;
                name = n;
            });
            Check(Pump(() => fetched) && name.Length > 0, "FetchCurrentUser with the new token");

            bool updated = false;
            c.UpdateToken(AuthorizationTokenType.Bearer, t.Access, r => { updated = Result.Take(r).Successful; });
            Check(Pump(() => updated) && c.IsAuthenticated(), "UpdateToken, IsAuthenticated");

            Tokens rt = new Tokens();
            c.RefreshToken(AppId(), t.Refresh, Into(rt));
            Check(Pump(() => rt.Done) && rt.Result.Successful && rt.Access != t.Access, "RefreshToken rotates the tokens");

            bool revoked = false;
            c.RevokeToken(AppId(), rt.Access, r => { revoked = Result.Take(r).Successful; });
            Check(Pump(() => revoked), "RevokeToken (rule AU-7)");

            Tokens dead = new Tokens();
            c.RefreshToken(AppId(), rt.Refresh, Into(dead));
            Check(Pump(() => dead.Done) && dead.Result.Type == ErrorType.AuthorizationFailed &&
                      dead.Result.ResponseBody.Contains("invalid_grant"),
                  "a refresh after revocation is deauthorization (rule AU-6)");

            // A second authorization, exchanged with a wrong verifier.
            Authorized b = Link(c);
            Tokens wrong = new Tokens();
            using (AuthorizationCodeVerifier other = c.CreateAuthorizationCodeVerifier())
            {
                c.GetToken(AppId(), b.Code, other.Verifier(), b.Redirect, Into(wrong));
            }
            Check(Pump(() => wrong.Done) && wrong.Result.Type == ErrorType.AuthorizationFailed && wrong.Access.Length == 0,
                  "GetToken with a wrong verifier fails with invalid_grant (rule AA-5)");

            // Validation and abort.
            bool invalid = false;
            using (AuthorizationArgs empty = new AuthorizationArgs())
            {
                c.Authorize(empty, (r, code, redirect) => { invalid = Result.Take(r).Type == ErrorType.ValidationError; });
                Check(Pump(() => invalid), "Authorize without scopes is a validation error (rule AA-2)");
            }
            using (Client quiet = NewClient(""))
            using (AuthorizationArgs args = new AuthorizationArgs())
            {
                quiet.SetOpenUrlCallback(url => { });
                bool aborted = false;
                args.SetScopes("openid");
                quiet.Authorize(args, (r, code, redirect) => { aborted = Result.Take(r).Type == ErrorType.Aborted; });
                Sdk.RunCallbacks();
                quiet.AbortAuthorize();
                Check(Pump(() => aborted), "AbortAuthorize ends the flow with Aborted");
            }
        }
    }

    // The account-linking and lobby story written with the Task forms and events, as a game
    // awaits it: every continuation must run on the thread that calls RunCallbacks.
    static void PhaseAsync()
    {
        using (Client c = NewClient("alice"))
        {
            int runner = Thread.CurrentThread.ManagedThreadId;
            var elsewhere = new List<string>();
            Task<bool> chain = AsyncChain(c, runner, elsewhere);
            Check(Pump(() => chain.IsCompleted, 60), "the awaited chain completes while RunCallbacks runs");
            if (chain.IsFaulted)
            {
                Console.WriteLine("note: the chain failed: " + chain.Exception.GetBaseException());
            }
            Check(chain.Status == TaskStatus.RanToCompletion && chain.Result,
                  "await Authorize, GetToken, UpdateToken, Connect (StatusChanged event), CreateOrJoinLobby, SendLobbyMessage");
            Check(elsewhere.Count == 0, "every continuation ran on the thread calling RunCallbacks (elsewhere: " + string.Join(", ", elsewhere) + ")");
        }
    }

    static async Task<bool> AsyncChain(Client c, int runner, List<string> elsewhere)
    {
        Action<string> ranOn = step =>
        {
            int id = Thread.CurrentThread.ManagedThreadId;
            Console.WriteLine("async: " + step + " continued on thread " + id + (id == runner ? " (RunCallbacks')" : ""));
            if (id != runner)
            {
                elsewhere.Add(step);
            }
        };
        Client.AuthorizationResult auth;
        string verifierText;
        using (AuthorizationCodeVerifier verifier = c.CreateAuthorizationCodeVerifier())
        using (AuthorizationArgs args = new AuthorizationArgs())
        {
            verifierText = verifier.Verifier();
            args.SetScopes(Client.GetDefaultCommunicationScopes());
            using (AuthorizationCodeChallenge challenge = verifier.CopyChallenge())
            {
                args.SetCodeChallenge(challenge);
            }
            auth = (await c.AuthorizeAsync(args)).ThrowIfFailed();
        }
        ranOn("Authorize");
        Client.TokenExchangeResult token = (await c.GetTokenAsync(AppId(), auth.Code, verifierText, auth.RedirectUri)).ThrowIfFailed();
        ranOn("GetToken");
        (await c.UpdateTokenAsync(AuthorizationTokenType.Bearer, token.AccessToken)).ThrowIfFailed();
        ranOn("UpdateToken");

        var ready = new TaskCompletionSource<bool>();
        Client.OnStatusChanged onStatus = (status, error, detail) =>
        {
            if (status == Client.Status.Ready)
            {
                ready.TrySetResult(true);
            }
            else if (status == Client.Status.Disconnected && error != Client.Error.None)
            {
                ready.TrySetResult(false);
            }
        };
        c.StatusChanged += onStatus;
        c.Connect();
        bool connected = await ready.Task;
        c.StatusChanged -= onStatus;
        ranOn("Connect");
        if (!connected)
        {
            return false;
        }

        Client.CreateOrJoinLobbyResult lobby = (await c.CreateOrJoinLobbyAsync("async-" + Guid.NewGuid().ToString("N"))).ThrowIfFailed();
        ranOn("CreateOrJoinLobby");
        Client.SendUserMessageResult sent = (await c.SendLobbyMessageAsync(lobby.LobbyId, "hello from await")).ThrowIfFailed();
        ranOn("SendLobbyMessage");
        return lobby.LobbyId != 0 && sent.MessageId != 0;
    }

    static void PhaseProvisional()
    {
        using (Client c = NewClient(""))
        {
            Tokens bot = new Tokens();
            c.GetProvisionalToken(AppId(), AuthenticationExternalAuthType.DiscordBotIssuedAccessToken, Env("SDKPP_BOT_ISSUED_TOKEN"), Into(bot));
            Check(Pump(() => bot.Done) && bot.Result.Successful && bot.Access.Length > 0,
                  "a provisional account through the bot endpoint (rule AU-5)");
            Tokens oidc = new Tokens();
            c.GetProvisionalToken(AppId(), AuthenticationExternalAuthType.OIDC, Env("SDKPP_OIDC_TOKEN"), Into(oidc));
            Check(Pump(() => oidc.Done) && oidc.Result.Successful && oidc.Access.Length > 0,
                  "a provisional account through OIDC (rules AU-5, AU-9)");
            bool renamed = false;
            c.UpdateToken(AuthorizationTokenType.Bearer, oidc.Access, r => { if (r != null) { r.Dispose(); } });
            c.UpdateProvisionalAccountDisplayName("Guest Player", r => { renamed = Result.Take(r).Successful; });
            Check(Pump(() => renamed), "UpdateProvisionalAccountDisplayName");

            // Merge the OIDC provisional account into bob's account.
            using (Client linker = NewClient("bob"))
            {
                Authorized a = Link(linker);
                Tokens merged = new Tokens();
                linker.GetTokenFromProvisionalMerge(AppId(), a.Code, a.Verifier, a.Redirect, AuthenticationExternalAuthType.OIDC,
                                                    Env("SDKPP_OIDC_TOKEN"), Into(merged));
                Check(Pump(() => merged.Done) && merged.Result.Successful && merged.Access.Length > 0,
                      "GetTokenFromProvisionalMerge merges the provisional account");
            }
        }
    }

    static void PhaseMergeBanned()
    {
        using (Client c = NewClient("carol"))
        {
            Authorized a = Link(c);
            Tokens merged = new Tokens();
            c.GetTokenFromProvisionalMerge(AppId(), a.Code, a.Verifier, a.Redirect, AuthenticationExternalAuthType.OIDC,
                                           Env("SDKPP_OIDC_TOKEN"), Into(merged));
            Check(Pump(() => merged.Done) && !merged.Result.Successful && merged.Result.ErrorCode == 530017,
                  "a merge of the banned user's identity fails with 530017 (rule ST-1)");
        }
    }

    static void PhaseUnmerge()
    {
        using (Client c = NewClient("carol"))
        {
            Tokens prov = new Tokens();
            c.GetProvisionalToken(AppId(), AuthenticationExternalAuthType.OIDC, Env("SDKPP_OIDC_TOKEN2"), Into(prov));
            Check(Pump(() => prov.Done) && prov.Result.Successful, "a second OIDC provisional account");
            Authorized a = Link(c);
            Tokens merged = new Tokens();
            c.GetTokenFromProvisionalMerge(AppId(), a.Code, a.Verifier, a.Redirect, AuthenticationExternalAuthType.OIDC,
                                           Env("SDKPP_OIDC_TOKEN2"), Into(merged));
            Check(Pump(() => merged.Done) && merged.Result.Successful, "merged into carol's account");
            bool unmerged = false;
            c.UnmergeIntoProvisionalAccount(AppId(), AuthenticationExternalAuthType.OIDC, Env("SDKPP_OIDC_TOKEN2"), r =>
            {
                Result res = Result.Take(r);
                unmerged = res.Successful;
                if (!unmerged)
                {
                    Console.WriteLine("note: " + res.Text);
                }
            });
            Check(Pump(() => unmerged), "UnmergeIntoProvisionalAccount (rule ST-2)");
            Tokens dead = new Tokens();
            c.RefreshToken(AppId(), merged.Refresh, Into(dead));
            Check(Pump(() => dead.Done) && dead.Result.Type == ErrorType.AuthorizationFailed,
                  "after the unmerge the refresh token is invalid_grant (rules AU-6, AU-7)");
        }
    }

    static void PhaseDevice()
    {
        using (Client c = NewClient("alice"))
        using (DeviceAuthorizationArgs args = new DeviceAuthorizationArgs())
        {
            args.SetScopes(Client.GetDefaultCommunicationScopes());
            Tokens t = new Tokens();
            c.GetTokenFromDevice(args, Into(t));
            Check(Pump(() => t.Done, 60) && t.Result.Successful && t.Access.Length > 0, "the device flow");
        }
    }

    static void PhaseChild()
    {
        using (Client c = NewClient("alice"))
        {
            Authorized a = Link(c);
            Tokens parent = new Tokens();
            c.GetToken(AppId(), a.Code, a.Verifier, a.Redirect, Into(parent));
            Pump(() => parent.Done);
            bool done = false, ok = false;
            string child = "";
            c.ExchangeChildToken(parent.Access, ParseId(Env("SDKPP_CHILD_APP_ID")), (r, access, type, expiresIn, scopes) =>
            {
                ok = Result.Take(r).Successful;
                child = access;
                done = true;
            });
            Check(Pump(() => done) && ok && child.Length > 0 && child != parent.Access,
                  "ExchangeChildToken gives the child application's token (rule AU-4)");
        }
    }

    static void PhaseRpc()
    {
        using (Client c = NewClient(""))
        {
            int requests = 0;
            c.RegisterAuthorizeRequestCallback(() => { ++requests; });
            Console.WriteLine("subscribed");
            Console.Out.Flush();
            Check(Pump(() => requests >= 1), "AUTHORIZE_REQUEST reaches the callback");
            Check(Pump(() => requests >= 2), "and again after the desktop client restarted (rule RPC-2)");
            c.RemoveAuthorizeRequestCallback();
        }
    }

    // rule VS-1: the desktop client's voice settings (set by the harness), an update when they
    // change there, and a successful result with none once the desktop client has gone.
    static void PhaseVoiceSettings()
    {
        using (Client c = NewClient(""))
        {
            bool ok = false;
            Func<VoiceSettings> read = () =>
            {
                bool done = false;
                VoiceSettings got = null;
                c.GetVoiceSettings((r, s) => { ok = r.Successful(); got = s; done = true; });
                Pump(() => done);
                return got;
            };
            VoiceSettings vs = null;
            bool some = Pump(() => (vs = read()) != null, 60);
            Check(some && ok && vs.InputMode() == VoiceInputModeType.PushToTalk && vs.PttKey() == "SHIFT + F" &&
                  vs.OutputVolume() == 150f && vs.InputVolume() == 100f && !vs.SelfDeaf(),
                  "GetVoiceSettings reads the desktop client's voice settings (rule VS-1)");

            VoiceSettings updated = null;
            c.SetVoiceSettingsUpdatedCallback(s => { updated = s; });
            bool fired = Pump(() => updated != null, 60);
            Check(fired && updated.SelfDeaf() && updated.InputMode() == VoiceInputModeType.PushToTalk,
                  "the update callback fires with the changed settings");
            Console.WriteLine("updated");
            Console.Out.Flush();

            VoiceSettings none = null;
            Pump(() => (none = read()) == null && ok, 60);
            Check(ok && none == null, "without a desktop client: a successful result and no settings");
        }
    }

    // Connected returns a client of the player behind token, Ready on the gateway.
    static Client Connected(string token)
    {
        Client c = NewClient("");
        c.UpdateToken(AuthorizationTokenType.Bearer, token, r => r.Dispose());
        c.Connect();
        Pump(() =>
        {
            if (c.GetStatus() != Client.Status.Ready) return false;
            using (UserHandle me = c.GetCurrentUserV2()) return me != null;
        });
        return c;
    }

    // Three players in one lobby's end-to-end encrypted voice call, with the real engine on the
    // harness's private PulseAudio, where the harness plays recorded speech into the sink whose
    // monitor every player's microphone captures: each player must hear both others speak
    // (speaking status, on the RunCallbacks thread), and player 0's raw PCM hooks see the frames;
    // then each plays a recorded voice (SpeechTake) that the harness scores.
    // All show one verification code (rule VER-2: calls are always encrypted); the Call API's
    // state round-trips. The process must then exit: the SDK frees userData only on the game's
    // thread, so Mono has no SDK thread to wait for.
    static void PhaseVoice()
    {
        Client[] clients =
        {
            Connected(Env("SDKPP_BOT_ISSUED_TOKEN")), Connected(Env("SDKPP_BOT_ISSUED_TOKEN2")),
            Connected(Env("SDKPP_BOT_ISSUED_TOKEN3")),
        };
        var ids = new ulong[3];
        for (int i = 0; i < 3; i++)
        {
            using (UserHandle me = clients[i].GetCurrentUserV2()) ids[i] = me.Id();
        }
        ulong lobby = 0;
        foreach (Client c in clients)
        {
            bool done = false;
            c.CreateOrJoinLobby("voice-e2e-" + ids[0], (r, id) => { using (r) lobby = id; done = true; });
            Pump(() => done);
        }
        Check(lobby != 0, "three players in one lobby");

        var heard = new bool[3, 3]; // heard[listener, speaker]
        var calls = new Call[3];
        // Every player joins with the raw PCM hooks: they run on the SDK's audio thread, through
        // the binding's static trampolines, for every 20 ms frame. Until the speech part they only
        // look (the microphones carry the harness's speech); then each plays a recorded voice and
        // records the two others (SpeechTake), copying only.
        var loudFrom = new long[3];
        long capturedFrames = 0;
        var take = new SpeechTake();
        for (int i = 0; i < 3; i++)
        {
            int me = i;
            Client.UserAudioReceivedCallback received = (ulong user, IntPtr data, ulong n, int rate, ulong channels, ref bool mute) =>
            {
                int from = Array.IndexOf(ids, user);
                if (from < 0) return;
                if (take.Talk)
                {
                    take.Record(me, from, data, (int)n);
                    return;
                }
                if (me != 0) return;
                int loud = 0;
                for (int k = 0; k < (int)n; k += 40)
                {
                    short v = Marshal.ReadInt16(data, 2 * k);
                    if (v > 2000 || v < -2000) loud++;
                }
                if (loud > 0) Interlocked.Increment(ref loudFrom[from]);
            };
            Client.UserAudioCapturedCallback captured = (IntPtr data, ulong n, int rate, ulong channels) =>
            {
                if (me == 0 && n == 960 && rate == 48000 && channels == 1) Interlocked.Increment(ref capturedFrames);
                if (take.Talk) take.Play(me, data, (int)n);
            };
            // The voice goes in unprocessed, as in the Go harness (tests/internal/threecall) and
            // the C++ program: what is scored is the call. Echo cancellation and gain control
            // adapting while three players in one process talk at once score as distortion.
            clients[i].SetNoiseSuppression(false);
            clients[i].SetEchoCancellation(false);
            clients[i].SetAutomaticGainControl(false);
            calls[i] = clients[i].StartCallWithAudioCallbacks(lobby, received, captured);
            if (calls[i] == null) continue;
            calls[i].SetSpeakingStatusChangedCallback((user, speaking) =>
            {
                for (int j = 0; j < 3; j++)
                {
                    if (speaking && ids[j] == user) heard[me, j] = true;
                }
            });
        }
        Check(calls.All(c => c != null), "StartCall gives a Call to each player");
        Check(clients[0].StartCall(lobby) == null, "a second StartCall of the same call gives null");
        bool connected = Pump(() => calls.All(c => c.GetStatus() == Call.Status.Connected && c.GetParticipants().Length == 3), 60);
        Check(connected, "all three Connected with three participants");
        string code = calls[0].GetVerificationCode();
        Check(code.Length > 0 && calls.All(c => c.GetVerificationCode() == code),
            "one verification code on every screen: " + code);
        bool all = Pump(() =>
        {
            for (int l = 0; l < 3; l++)
                for (int sp = 0; sp < 3; sp++)
                    if (l != sp && !heard[l, sp]) return false;
            return true;
        }, 60);
        Check(all, "each player hears both others speak through the relay, decrypted");
        Check(Pump(() => Interlocked.Read(ref loudFrom[1]) > 10 && Interlocked.Read(ref loudFrom[2]) > 10),
            "player 0's received hook sees both others' decoded speech, on the audio thread");
        Check(Interlocked.Read(ref capturedFrames) > 0, "player 0's captured hook sees 20 ms mono frames at 48 kHz");

        // Speech: the gate held open (push-to-talk pressed), each voice played once and recorded
        // by the two others, for the harness to score.
        string[] names = { "alice", "bob", "carol" };
        for (int i = 0; i < 3; i++) take.Sent[i] = ReadWav48k(Env("SDKPP_VOICE_SPEECH_DIR") + "/" + names[i] + ".wav");
        Check(take.Sent.All(v => v.Length > 0), "three recorded voices to play");
        take.Prepare();
        foreach (Call c in calls)
        {
            c.SetAudioMode(AudioModeType.MODE_PTT);
            c.SetPTTActive(true);
        }
        take.Talk = true;
        bool recorded = Pump(() => take.Done(), 60);
        take.Talk = false;
        Check(recorded, "each player played its voice and recorded the two others");
        foreach (Call c in calls)
        {
            c.SetPTTActive(false);
            c.SetAudioMode(AudioModeType.MODE_VAD);
        }

        // A player who is not in the lobby gets a Call, which the service refuses: Forbidden.
        using (Client outsider = Connected(Env("SDKPP_BOT_ISSUED_TOKEN4")))
        using (Call oc = outsider.StartCall(lobby))
        {
            Call.Error refusal = Call.Error.None;
            if (oc != null) oc.SetStatusChangedCallback((st, e, detail) => { if (e != Call.Error.None) refusal = e; });
            bool refused = oc != null && Pump(() => refusal != Call.Error.None);
            Check(refused && refusal == Call.Error.Forbidden && oc.GetStatus() == Call.Status.Disconnected,
                "a player outside the lobby is refused: Call.Error.Forbidden, " + Call.ErrorToString(refusal));
            bool outsiderEnded = false;
            outsider.EndCall(lobby, () => outsiderEnded = true);
            Pump(() => outsiderEnded);
        }

        calls[1].SetAudioMode(AudioModeType.MODE_PTT);
        Check(calls[1].GetAudioMode() == AudioModeType.MODE_PTT, "audio mode PTT");
        calls[1].SetPTTReleaseDelay(250);
        Check(calls[1].GetPTTReleaseDelay() == 250, "PTT release delay");
        calls[1].SetPTTActive(true);
        Check(calls[1].GetPTTActive(), "PTT pressed");
        calls[2].SetParticipantVolume(ids[0], 50);
        Check(Math.Abs(calls[2].GetParticipantVolume(ids[0]) - 50) < 0.01, "participant volume");
        calls[2].SetLocalMute(ids[0], true);
        Check(calls[2].GetLocalMute(ids[0]), "local mute");
        calls[0].SetSelfMute(true);
        Check(calls[0].GetSelfMute(), "self mute");
        bool seenMuted = Pump(() =>
        {
            using (VoiceStateHandle v = calls[2].GetVoiceStateHandle(ids[0])) return v != null && v.SelfMute();
        });
        Check(seenMuted, "the others see the player's self mute in its voice state");

        int ended = 0;
        for (int i = 0; i < 3; i++) clients[i].EndCall(lobby, () => ended++);
        Pump(() => ended == 3);
        Check(ended == 3, "EndCall completes for each player");
        Check(clients[0].GetCall(lobby) == null, "no call after EndCall");
        foreach (Call c in calls) c.Dispose();
        foreach (Client c in clients) c.Dispose();
        // The engines have stopped: the recordings are complete and no hook writes them any more.
        Check(take.Write(Env("SDKPP_VOICE_RECORD_DIR")), "the recordings are written for the harness");
    }

    // The speech part of PhaseVoice: each player's captured hook plays a recorded voice once, and
    // each player's received hook records every other player frame after frame, as its speaker
    // plays them, into arrays allocated before (the hooks only copy). The harness compares what
    // each player heard with what the other sent (log-spectral distance, the engine issue's
    // metric). Where a heard frame goes, and why not by the listener's capture steps alone: the
    // C++ program's SpeechTake.
    sealed class SpeechTake
    {
        const int Resync = 10; // frames the capture steps may run ahead of a sender's next frame
        volatile bool talk;
        readonly int[] step = new int[3]; // each player's steps since talk began; its audio thread's
        readonly int[,] next = new int[3, 3]; // [listener, sender]: where the next heard frame goes
        internal readonly short[][] Sent = new short[3][];
        readonly short[,][] got = new short[3, 3][]; // [listener, sender]
        int frames;

        internal bool Talk { get { return talk; } set { talk = value; } }

        internal void Prepare()
        {
            frames = Sent.Max(v => v.Length) / 960 + 75; // the longest voice and 1.5 s of tail
            for (int l = 0; l < 3; l++)
                for (int s = 0; s < 3; s++)
                    got[l, s] = new short[frames * 960];
        }

        internal bool Done()
        {
            for (int i = 0; i < 3; i++)
            {
                if (Volatile.Read(ref step[i]) < frames) return false;
                for (int s = 0; s < 3; s++)
                {
                    if (s != i && Volatile.Read(ref next[i, s]) < frames) return false;
                }
            }
            return true;
        }

        // Play runs first in each of player me's steps: the voice's next frame, then silence.
        internal void Play(int me, IntPtr data, int n)
        {
            int at = step[me] * 960;
            Volatile.Write(ref step[me], step[me] + 1);
            short[] voice = Sent[me];
            int k = at < voice.Length ? Math.Min(n, voice.Length - at) : 0;
            if (k > 0) Marshal.Copy(voice, at, data, k);
            for (int j = k; j < n; j++) Marshal.WriteInt16(data, 2 * j, 0);
        }

        // Record keeps the frame player me heard of sender: right after the one heard before, or
        // where me's steps are (Play of this step ran first) once they have run more than Resync
        // frames ahead.
        internal void Record(int me, int sender, IntPtr data, int n)
        {
            int frame = next[me, sender], now = step[me] - 1;
            if (now - frame > Resync) frame = now;
            Volatile.Write(ref next[me, sender], frame + 1);
            int at = frame * 960;
            short[] dst = got[me, sender];
            if (at + n <= dst.Length) Marshal.Copy(data, dst, at, n);
        }

        internal bool Write(string dir)
        {
            try
            {
                for (int s = 0; s < 3; s++)
                {
                    WriteRaw(System.IO.Path.Combine(dir, "sent-" + s + ".raw"), Sent[s]);
                    for (int l = 0; l < 3; l++)
                    {
                        if (l != s) WriteRaw(System.IO.Path.Combine(dir, "got-" + l + "-" + s + ".raw"), got[l, s]);
                    }
                }
                return true;
            }
            catch (Exception e)
            {
                Console.WriteLine("        writing the recordings: " + e.Message);
                return false;
            }
        }

        static void WriteRaw(string path, short[] samples)
        {
            var b = new byte[samples.Length * 2];
            Buffer.BlockCopy(samples, 0, b, 0, b.Length); // little-endian, as Mono runs here
            System.IO.File.WriteAllBytes(path, b);
        }
    }

    // ReadWav48k returns the samples of a 48 kHz mono 16-bit PCM WAV file, or none.
    static short[] ReadWav48k(string path)
    {
        byte[] b;
        try { b = System.IO.File.ReadAllBytes(path); }
        catch (Exception) { return new short[0]; }
        Func<int, uint> u32 = at => BitConverter.ToUInt32(b, at);
        Func<int, uint> u16 = at => BitConverter.ToUInt16(b, at);
        if (b.Length < 12 || Encoding.ASCII.GetString(b, 0, 4) != "RIFF" || Encoding.ASCII.GetString(b, 8, 4) != "WAVE") return new short[0];
        bool format = false;
        for (int at = 12; at + 8 <= b.Length;)
        {
            int size = (int)u32(at + 4);
            if (size < 0 || at + 8 + size > b.Length) break;
            string id = Encoding.ASCII.GetString(b, at, 4);
            if (id == "fmt " && size >= 16)
            {
                format = u16(at + 8) == 1 && u16(at + 10) == 1 && u32(at + 12) == 48000 && u16(at + 22) == 16;
            }
            else if (id == "data" && format)
            {
                var out_ = new short[size / 2];
                Buffer.BlockCopy(b, at + 8, out_, 0, out_.Length * 2);
                return out_;
            }
            at += 8 + size + (size & 1);
        }
        return new short[0];
    }

    static void PhaseLobby()
    {
        using (Client a = Connected(Env("SDKPP_BOT_ISSUED_TOKEN")))
        using (Client b = Connected(Env("SDKPP_BOT_ISSUED_TOKEN2")))
        {
            Check(a.GetStatus() == Client.Status.Ready && b.GetStatus() == Client.Status.Ready, "two players connect (Ready)");
            ulong bId;
            using (UserHandle me = b.GetCurrentUserV2()) bId = me.Id();
            UserApplicationProfileHandle[] profiles = b.GetUserApplicationProfiles(bId);
            UserApplicationProfileHandle[] profilesNoLock = b.GetUserApplicationProfilesNoLock(bId);
            Check(profiles.Length == 1 && profiles[0].ProviderType() == ExternalIdentityProviderType.DiscordBot &&
                profiles[0].ProviderIssuedUserId().Length > 0 && profilesNoLock.Length == 1,
                "GetUserApplicationProfiles(NoLock): the player's bot-issued identity");
            foreach (UserApplicationProfileHandle p in profiles) p.Dispose();
            foreach (UserApplicationProfileHandle p in profilesNoLock) p.Dispose();
            var removed = new List<ulong>();
            a.SetLobbyMemberRemovedCallback((lobby, member) => removed.Add(member));

            var ids = new ulong[2];
            Client[] clients = { a, b };
            for (int i = 0; i < 2; i++)
            {
                int k = i;
                bool done = false;
                clients[i].CreateOrJoinLobbyWithMetadata("e2e-secret",
                    new Dictionary<string, string> { { "map", "h\u00e4rbor" }, { "mode", "ffa" } },
                    new Dictionary<string, string> { { "class", k == 0 ? "mage" : "rogue" } },
                    (r, id) =>
                    {
                        using (r) if (r.Successful()) ids[k] = id;
                        done = true;
                    });
                Pump(() => done);
            }
            Check(ids[0] != 0 && ids[0] == ids[1], "the same secret gives one lobby (rule LOB-1)");
            Pump(() =>
            {
                using (LobbyHandle h = a.GetLobbyHandle(ids[0])) return h != null && h.LobbyMemberIds().Length == 2;
            });
            using (LobbyHandle lobby = a.GetLobbyHandle(ids[0]))
            {
                var md = lobby.Metadata();
                Check(md.Count == 2 && md["map"] == "h\u00e4rbor" && md["mode"] == "ffa",
                    "lobby metadata round-trips through the C ABI (a string map)");
                ulong[] memberIds = lobby.LobbyMemberIds();
                Check(memberIds.Length == 2 && Array.IndexOf(memberIds, bId) >= 0, "LobbyMemberIds (a list of ids)");
                bool rogue = false;
                LobbyMemberHandle[] members = lobby.LobbyMembers();
                foreach (LobbyMemberHandle m in members)
                {
                    using (m) if (m.Id() == bId && m.Metadata()["class"] == "rogue") rogue = true;
                }
                Check(members.Length == 2 && rogue, "LobbyMembers (a list of handles) with member metadata");
                using (LobbyMemberHandle seat = lobby.GetLobbyMemberHandle(bId))
                using (UserHandle bUser = seat == null ? null : seat.User())
                using (UserHandle bSelf = b.GetCurrentUserV2())
                {
                    UserApplicationProfileHandle[] own = bUser == null ? new UserApplicationProfileHandle[0] : bUser.UserApplicationProfiles();
                    UserApplicationProfileHandle[] seen = a.GetUserApplicationProfiles(bId);
                    Check(bUser != null && bUser.Id() == bId && bUser.Username() == bSelf.Username() && own.Length == 1 && seen.Length == 1,
                        "LobbyMemberHandle.User: the member's user and game profile, from the lobby");
                    foreach (var p in own) p.Dispose();
                    foreach (var p in seen) p.Dispose();
                }
                ulong[] all = a.GetLobbyIds();
                Check(all.Length == 1 && all[0] == ids[0], "GetLobbyIds");

                bool sent = false;
                ulong messageId = 0;
                b.SendLobbyMessage(ids[0], "gg", (r, id) =>
                {
                    using (r) sent = r.Successful();
                    messageId = id;
                });
                Check(Pump(() => sent) && messageId != 0, "SendLobbyMessage (rule LOB-2)");

                bool left = false;
                b.LeaveLobby(ids[0], r => { using (r) left = r.Successful(); });
                bool gone = false;
                Check(Pump(() => left) && Pump(() => { using (LobbyHandle h = b.GetLobbyHandle(ids[0])) gone = h == null; return true; }) && gone, "LeaveLobby");
                Check(Pump(() => removed.Contains(bId)), "the other player hears the member leave");
                using (LobbyMemberHandle m = lobby.GetLobbyMemberHandle(bId))
                {
                    Check(m == null, "the live handle no longer lists the member");
                }
            }
        }
    }

    // PhaseChat: three players chat in one lobby, one reconnects and reads the history, two
    // exchange direct messages; the harness moderates one message as the game's backend.
    static void PhaseChat()
    {
        using (Client a = Connected(Env("SDKPP_BOT_ISSUED_TOKEN")))
        using (Client b = Connected(Env("SDKPP_BOT_ISSUED_TOKEN2")))
        using (Client c = Connected(Env("SDKPP_BOT_ISSUED_TOKEN3")))
        {
            Client[] players = { a, b, c };
            ulong aId, bId;
            using (UserHandle me = a.GetCurrentUserV2()) aId = me.Id();
            using (UserHandle me = b.GetCurrentUserV2()) bId = me.Id();
            ulong lobby = 0;
            for (int i = 0; i < 3; i++)
            {
                bool done = false;
                players[i].CreateOrJoinLobbyWithMetadata("e2e-chat", new Dictionary<string, string>(),
                    new Dictionary<string, string> { { "seat", i.ToString() } },
                    (r, id) => { using (r) if (r.Successful()) lobby = id; done = true; });
                Pump(() => done);
            }
            Check(lobby != 0 && Pump(() =>
            {
                foreach (Client p in players)
                {
                    using (LobbyHandle h = p.GetLobbyHandle(lobby)) if (h == null || h.LobbyMemberIds().Length != 3) return false;
                }
                return true;
            }), "three players create-or-join one lobby by secret (rule LOB-1)");
            using (LobbyHandle h = c.GetLobbyHandle(lobby))
            using (LobbyMemberHandle seat = h.GetLobbyMemberHandle(bId))
            {
                Check(seat != null && seat.Metadata()["seat"] == "1", "member metadata reaches the other members");
            }

            var createdA = new List<ulong>();
            var createdC = new List<ulong>();
            var updatedA = new List<ulong>();
            a.SetMessageCreatedCallback(id => createdA.Add(id));
            c.SetMessageCreatedCallback(id => createdC.Add(id));
            a.SetMessageUpdatedCallback(id => updatedA.Add(id));
            var sent = new List<ulong>();
            for (int i = 0; i < 3; i++)
            {
                bool done = false;
                b.SendLobbyMessageWithMetadata(lobby, "m" + i, new Dictionary<string, string> { { "i", i.ToString() } },
                    (r, id) => { using (r) if (r.Successful()) sent.Add(id); done = true; });
                Pump(() => done);
            }
            Check(sent.Count == 3 && Pump(() => createdA.Count == 3 && createdC.Count == 3) &&
                createdA.SequenceEqual(sent) && createdC.SequenceEqual(sent),
                "every member gets every lobby message once, in order (rule LOB-2)");
            using (MessageHandle m1 = a.GetMessageHandle(sent[1]))
            {
                Check(m1 != null && m1.Content() == "m1" && m1.AuthorId() == bId && m1.Metadata()["i"] == "1" &&
                    m1.ChannelId() == lobby && m1.ApplicationId() == ulong.Parse(Env("SDKPP_APP_ID")),
                    "MessageHandle reads content, author, metadata and the application (rule MSG-1)");
                Console.WriteLine("moderate " + lobby + " " + sent[1]);
                Console.Out.Flush();
                Check(Pump(() => updatedA.Contains(sent[1])) && m1.ModerationMetadata().Count == 1 &&
                    m1.ModerationMetadata()["verdict"] == "clean",
                    "moderation metadata set by the backend shows on the live MessageHandle (rules MSG-3, MODR-1)");
            }

            a.Disconnect();
            Pump(() => a.GetStatus() == Client.Status.Disconnected);
            a.Connect();
            Check(Pump(() => a.GetStatus() == Client.Status.Ready), "a player reconnects");
            MessageHandle[] history = null;
            bool fetched = false;
            a.GetLobbyMessagesWithLimit(lobby, 10, (r, ms) => { using (r) if (r.Successful()) history = ms; fetched = true; });
            Check(Pump(() => fetched) && history != null && history.Length == 3 && history[0].Content() == "m2" && history[2].Content() == "m0",
                "after the reconnect the history comes back newest first, as a list of handles (rules LOB-3, LIM-2)");
            foreach (MessageHandle m in history ?? new MessageHandle[0]) m.Dispose();
            bool refused = false;
            fetched = false;
            a.GetLobbyMessagesWithLimit(lobby, 0, (r, ms) =>
            {
                using (r) refused = !r.Successful() && r.Type() == ErrorType.ValidationError && ms.Length == 0;
                fetched = true;
            });
            Check(Pump(() => fetched) && refused, "a history limit of 0 is refused");

            var createdB = new List<ulong>();
            b.SetMessageCreatedCallback(id => createdB.Add(id));
            ulong dm = 0;
            bool sentDm = false;
            a.SendUserMessage(bId, "psst", (r, id) => { using (r) if (r.Successful()) dm = id; sentDm = true; });
            Check(Pump(() => sentDm) && dm != 0 && Pump(() => createdB.Contains(dm)), "a direct message reaches its recipient");
            using (MessageHandle got = b.GetMessageHandle(dm))
            {
                Check(got != null && got.Content() == "psst" && got.RecipientId() == bId && got.AuthorId() == aId, "the DM's handle");
            }
            MessageHandle[] dms = null;
            for (int round = 0; round < 2; round++)
            {
                bool done = false;
                b.GetUserMessagesWithLimit(aId, 5, (r, ms) =>
                {
                    using (r) if (r.Successful()) { if (dms != null) foreach (MessageHandle m in dms) m.Dispose(); dms = ms; }
                    done = true;
                });
                Pump(() => done);
            }
            Check(dms != null && dms.Length == 1 && dms[0].Id() == dm, "GetUserMessagesWithLimit, from the service and then the local cache");
            UserMessageSummary[] sums = null;
            bool summed = false;
            a.GetUserMessageSummaries((r, s) => { using (r) if (r.Successful()) sums = s; summed = true; });
            Check(Pump(() => summed) && sums != null && sums.Length == 1 && sums[0].UserId() == bId && sums[0].LastMessageId() == dm,
                "GetUserMessageSummaries");
        }
    }

    static RelationshipType RelType(Client c, ulong id, bool platform)
    {
        using (RelationshipHandle h = c.GetRelationshipHandle(id))
            return platform ? h.DiscordRelationshipType() : h.GameRelationshipType();
    }

    // ProfileOf tells whether ps is one bot-issued profile whose external id starts with prefix;
    // it disposes ps.
    static bool ProfileOf(UserApplicationProfileHandle[] ps, string prefix)
    {
        bool ok = ps.Length == 1 && ps[0].ProviderType() == ExternalIdentityProviderType.DiscordBot &&
            ps[0].ProviderIssuedUserId().StartsWith(prefix, StringComparison.Ordinal);
        foreach (UserApplicationProfileHandle p in ps) p.Dispose();
        return ok;
    }

    // Relationships, rich presence and invites: two players befriend and see each other's rich
    // presence; an invite accepted on one of the guest's two devices fires on both (rule EVT-1).
    static void PhaseSocial()
    {
        using (Client host = Connected(Env("SDKPP_BOT_ISSUED_TOKEN")))
        using (Client guest = Connected(Env("SDKPP_BOT_ISSUED_TOKEN2")))
        using (Client guest2 = Connected(Env("SDKPP_BOT_ISSUED_TOKEN2")))
        {
            ulong hostId, guestId, guest2Id;
            using (UserHandle me = host.GetCurrentUserV2()) hostId = me.Id();
            using (UserHandle me = guest.GetCurrentUserV2()) guestId = me.Id();
            using (UserHandle me = guest2.GetCurrentUserV2()) guest2Id = me.Id();
            Check(guestId == guest2Id, "two devices of one player");

            bool ok = false, done = false;
            host.SendDiscordFriendRequestById(guestId, r => { using (r) ok = r.Successful(); done = true; });
            Pump(() => done);
            Pump(() => RelType(guest, hostId, true) == RelationshipType.PendingIncoming);
            bool spam;
            using (RelationshipHandle h = guest.GetRelationshipHandle(hostId)) spam = h.IsSpamRequest();
            Check(ok && !spam, "a friend request arrives, not spam (rule REL-1)");
            done = false;
            guest.AcceptDiscordFriendRequest(hostId, r => { using (r) ok = r.Successful(); done = true; });
            Check(Pump(() => done && RelType(host, guestId, true) == RelationshipType.Friend) && ok,
                "the request is accepted: friends on both sides");
            Check(Pump(() => ProfileOf(host.GetUserApplicationProfiles(guestId), "social-guest-") &&
                    ProfileOf(guest.GetUserApplicationProfilesNoLock(hostId), "social-host-")),
                "friends see each other's provisional profile (GetUserApplicationProfiles, GetUserApplicationProfilesNoLock)");

            using (Activity a = new Activity())
            using (ActivityAssets assets = new ActivityAssets())
            using (ActivityParty party = new ActivityParty())
            using (ActivitySecrets secrets = new ActivitySecrets())
            using (ActivityButton button = new ActivityButton())
            {
                a.SetName("Harbor Siege");
                a.SetState("In a match");
                a.SetStateUrl("https://game.example/state");
                a.SetDetails("Capture the flag");
                a.SetDetailsUrl("https://game.example/details");
                assets.SetLargeImage("map_harbor");
                assets.SetLargeUrl("https://game.example/large");
                assets.SetSmallUrl("https://game.example/small");
                assets.SetInviteCoverImage("https://game.example/cover.png");
                a.SetAssets(assets);
                party.SetId("party-cs");
                party.SetCurrentSize(1);
                party.SetMaxSize(4);
                a.SetParty(party);
                secrets.SetJoin("cs-join-secret");
                a.SetSecrets(secrets);
                button.SetLabel("Watch");
                button.SetUrl("https://game.example/watch");
                a.AddButton(button);
                done = false;
                host.UpdateRichPresence(a, r => { using (r) ok = r.Successful(); done = true; });
                Check(Pump(() => done) && ok, "UpdateRichPresence with every Activity field");
                using (Activity copy = a.Clone())
                using (ActivityParty other = new ActivityParty())
                {
                    bool same = a.Equals(copy);
                    other.SetId("party-cs");
                    other.SetCurrentSize(2);
                    other.SetMaxSize(4);
                    copy.SetParty(other);
                    Check(same && !a.Equals(copy), "Activity.Equals: a copy is equal, a different party size is not");
                }
            }
            using (UserHandle seen = guest.GetUser(hostId))
            {
                Pump(() => { using (Activity x = seen.GameActivity()) return x != null; });
                using (Activity act = seen.GameActivity())
                using (ActivityAssets assets = act.Assets())
                using (ActivitySecrets secrets = act.Secrets())
                {
                    ActivityButton[] buttons = act.GetButtons();
                    Check(act.Name() == "Harbor Siege" && act.StateUrl() == "https://game.example/state" &&
                        act.DetailsUrl() == "https://game.example/details" && assets != null &&
                        assets.LargeUrl() == "https://game.example/large" && buttons.Length == 1 && secrets == null,
                        "the friend sees the rich presence, URLs and name override, no secret (rules ACT-2, ACT-4, ACT-5)");
                    foreach (ActivityButton b in buttons) b.Dispose();
                    using (Activity again = seen.GameActivity())
                        Check(act.Equals(again) && act.Equals((object)again) && act.GetHashCode() == again.GetHashCode(),
                            "Activity.Equals: two snapshots of one presence are equal");
                }
                Check(seen.Status() == StatusType.Online, "UserHandle.Status");
                RelationshipHandle[] playing = guest.GetRelationshipsByGroup(RelationshipGroupType.OnlinePlayingGame);
                Check(playing.Length == 1 && playing[0].Id() == hostId, "GetRelationshipsByGroup(OnlinePlayingGame)");
                foreach (RelationshipHandle h in playing) h.Dispose();

                var got1 = new List<ActivityInvite>();
                var got2 = new List<ActivityInvite>();
                guest.SetActivityInviteCreatedCallback(i => got1.Add(i));
                guest2.SetActivityInviteCreatedCallback(i => got2.Add(i));
                done = false;
                host.SendActivityInvite(guestId, "join us", r => { using (r) ok = r.Successful(); done = true; });
                Check(Pump(() => done && got1.Count == 1 && got2.Count == 1) && ok, "the invite reaches both devices");
                Check(got1[0].ApplicationId() == AppId() && got1[0].SenderId() == hostId && got1[0].Type() == ActivityActionTypes.Join,
                    "the invite names its application (rule INV-1)");
                Check(got1[0].ChannelId() != 0 && got2[0].ChannelId() == got1[0].ChannelId(),
                    "the invite names its channel (the players' DM channel)");
                string secret = null;
                done = false;
                guest2.AcceptActivityInvite(got2[0], (r, s) => { using (r) ok = r.Successful(); secret = s; done = true; });
                Check(Pump(() => done) && ok && secret == "cs-join-secret", "AcceptActivityInvite gives the join secret");
                Check(Pump(() => got1.Count == 2 && got2.Count == 2),
                    "accepted on one device, the invite callback fires on both (rule EVT-1)");
                foreach (ActivityInvite i in got1) i.Dispose();
                foreach (ActivityInvite i in got2) i.Dispose();
                host.ClearRichPresence();
                Check(Pump(() => { using (Activity x = seen.GameActivity()) return x == null; }), "ClearRichPresence");
            }
        }
    }

    // PhaseGuilds: alice (a full account) lists her guilds and a guild's channels, links a channel
    // to a lobby once the harness (the game's backend) grants her CanLinkLobby; carol asks for an
    // invite to the linked guild; a provisional player is told to merge first.
    static void PhaseGuilds()
    {
        using (Client a = Connected(Env("SDKPP_USER_TOKEN")))
        using (Client c = Connected(Env("SDKPP_USER_TOKEN2")))
        using (Client g = Connected(Env("SDKPP_BOT_ISSUED_TOKEN")))
        {
            ulong aId;
            using (UserHandle me = a.GetCurrentUserV2()) aId = me.Id();
            GuildMinimal[] guilds = null;
            bool done = false;
            a.GetUserGuilds((r, gs) => { using (r) if (r.Successful()) guilds = gs; done = true; });
            Pump(() => done);
            ulong own = 0;
            foreach (GuildMinimal gm in guilds ?? new GuildMinimal[0])
            {
                using (gm) if (gm.Name() == "Alice's Guild") own = gm.Id();
            }
            Check(guilds != null && guilds.Length == 3 && own != 0, "GetUserGuilds (a list of records)");
            Func<Client, ulong, GuildChannel[]> channels = (who, guild) =>
            {
                GuildChannel[] got = null;
                bool fin = false;
                who.GetGuildChannels(guild, (r, cs) =>
                {
                    using (r)
                    {
                        if (r.Successful()) got = cs;
                        else lastError = new[] { (int)r.Status(), r.ErrorCode(), (int)r.Type(), cs.Length };
                    }
                    fin = true;
                });
                Pump(() => fin);
                return got;
            };
            GuildChannel[] chans = channels(a, own) ?? new GuildChannel[0];
            var names = new List<string>();
            bool sorted = true;
            for (int i = 0; i < chans.Length; i++)
            {
                names.Add(chans[i].Name());
                if (i > 0 && chans[i - 1].Position() > chans[i].Position()) sorted = false;
            }
            Check(sorted && string.Join(",", names) == "Text Channels,general,looking-for-group,Voice Channels,Lounge",
                "GetGuildChannels sorted by position (rule GCH-1)");
            bool shapes = chans.Length == 5;
            if (shapes)
            {
                using (LinkedLobby none = chans[1].LinkedLobby())
                {
                    shapes = chans[0].Type() == ChannelType.GuildCategory && chans[0].ParentId() == null &&
                        chans[1].Type() == ChannelType.GuildText && chans[1].ParentId() == chans[0].Id() &&
                        chans[4].Type() == ChannelType.GuildVoice && chans[4].ParentId() == chans[3].Id() &&
                        chans[1].IsLinkable() && !chans[4].IsLinkable() && none == null;
                }
            }
            Check(shapes, "channel types, parent category ids and IsLinkable (rule GCH-1)");
            ulong general = chans.Length == 5 ? chans[1].Id() : 0, lounge = chans.Length == 5 ? chans[4].Id() : 0;
            foreach (GuildChannel ch in chans) ch.Dispose();
            GuildChannel[] carols = channels(c, own) ?? new GuildChannel[0];
            Check(carols.Length == 5 && !carols[1].IsLinkable(), "a member who may not manage channels cannot link them");
            foreach (GuildChannel ch in carols) ch.Dispose();
            Check(channels(a, 42) == null && lastError[0] == 404 && lastError[1] == 10004 && lastError[3] == 0,
                "an unknown guild fails with 404 / 10004");
            Check(channels(a, 0) == null && lastError[2] == (int)ErrorType.ValidationError, "guild 0 is refused");

            ulong lobby = 0;
            foreach (Client p in new[] { a, c, g })
            {
                done = false;
                p.CreateOrJoinLobby("e2e-guilds", (r, id) => { using (r) if (r.Successful()) lobby = id; done = true; });
                Pump(() => done);
            }
            Check(lobby != 0 && Pump(() => { using (LobbyHandle h = c.GetLobbyHandle(lobby)) return h != null && h.LobbyMemberIds().Length == 3; }),
                "three players in one lobby");
            Func<ulong, int[]> link = channel =>
            {
                int[] got = null;
                a.LinkChannelToLobby(lobby, channel, r => { using (r) got = new[] { r.Successful() ? 1 : 0, (int)r.Status(), r.ErrorCode() }; });
                Pump(() => got != null);
                return got;
            };
            int[] refused = link(general);
            Check(refused[0] == 0 && refused[1] == 403 && refused[2] == 50013, "linking without CanLinkLobby fails with 403 / 50013");
            Console.WriteLine("canlink " + lobby + " " + aId);
            Console.Out.Flush();
            Check(Pump(() =>
            {
                using (LobbyHandle h = a.GetLobbyHandle(lobby))
                using (LobbyMemberHandle m = h.GetLobbyMemberHandle(aId)) return m != null && m.CanLinkLobby();
            }), "the backend grants CanLinkLobby");
            int[] voice = link(lounge);
            Check(voice[0] == 0 && voice[1] == 400, "a voice channel cannot be linked");
            Check(link(general)[0] == 1, "LinkChannelToLobby");
            Check(Pump(() =>
            {
                using (LobbyHandle h = c.GetLobbyHandle(lobby))
                using (LinkedChannel lc = h.LinkedChannel())
                    return lc != null && lc.Id() == general && lc.GuildId() == own && lc.Name() == "general";
            }), "the other members see the LinkedChannel");
            using (LobbyHandle h = c.GetLobbyHandle(lobby))
            using (LobbyMemberHandle m = h.GetLobbyMemberHandle(aId))
                Check(m != null && m.Connected(), "LobbyMemberHandle.Connected");
            chans = channels(a, own) ?? new GuildChannel[0];
            bool linkedLobby = false;
            if (chans.Length == 5)
            {
                using (LinkedLobby ll = chans[1].LinkedLobby())
                    linkedLobby = ll != null && ll.LobbyId() == lobby && ll.ApplicationId() == AppId();
            }
            foreach (GuildChannel ch in chans) ch.Dispose();
            Check(linkedLobby, "the channel's LinkedLobby");

            bool merge = false;
            string url = null;
            done = false;
            c.JoinLinkedLobbyGuild(lobby, () => merge = true, (r, u) => { using (r) if (r.Successful()) url = u; done = true; });
            string prefix = Env("SDKPP_WEB_BASE") + "/invite/";
            Check(Pump(() => done) && !merge && url != null && url.StartsWith(prefix, StringComparison.Ordinal),
                "JoinLinkedLobbyGuild returns an invite URL (rule LOB-5)");
            Console.WriteLine("invite " + (url ?? ""));
            Console.Out.Flush();
            bool gmerge = false, gresult = false;
            g.JoinLinkedLobbyGuild(lobby, () => gmerge = true, (r, u) => { r.Dispose(); gresult = true; });
            Check(Pump(() => gmerge) && !gresult, "a provisional player gets ProvisionalUserMergeRequiredCallback");

            bool ok = false;
            done = false;
            a.UnlinkChannelFromLobby(lobby, r => { using (r) ok = r.Successful(); done = true; });
            Check(Pump(() => done) && ok && Pump(() =>
            {
                using (LobbyHandle h = c.GetLobbyHandle(lobby))
                using (LinkedChannel lc = h.LinkedChannel()) return lc == null;
            }), "UnlinkChannelFromLobby");
        }
    }

    // lastError is the status, error code, error type and list length of the last failed
    // GetGuildChannels.
    static int[] lastError = new int[4];


    static int Main(string[] argv)
    {
        Dictionary<string, Action> phases = new Dictionary<string, Action>
        {
            { "link", PhaseLink },       { "async", PhaseAsync },             { "provisional", PhaseProvisional }, { "merge-banned", PhaseMergeBanned },
            { "unmerge", PhaseUnmerge }, { "device", PhaseDevice },           { "child", PhaseChild },
            { "rpc", PhaseRpc },         { "voicesettings", PhaseVoiceSettings }, { "lobby", PhaseLobby }, { "voice", PhaseVoice },             { "chat", PhaseChat },
            { "social", PhaseSocial },         { "guilds", PhaseGuilds },
        };
        if (argv.Length != 1 || !phases.ContainsKey(argv[0]))
        {
            Console.Error.WriteLine("usage: auth_e2e PHASE");
            return 2;
        }
        // An exception thrown by a callback is caught by the binding; it fails the run.
        Sdk.CallbackException += e => Check(false, "a callback threw " + e.GetType().Name + ": " + e.Message);
        try
        {
            phases[argv[0]]();
        }
        catch (Exception e)
        {
            Console.Error.WriteLine(e);
            Check(false, "phase " + argv[0] + " threw " + e.GetType().Name + ": " + e.Message);
        }
        Sdk.RunCallbacks();
        Console.WriteLine(passed + " passed, " + failed + " failed");
        return failed > 0 ? 1 : 0;
    }
}
