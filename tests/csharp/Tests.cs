// Tests of the sdkpp C# binding (bindings/csharp), run with Mono against build/libsdkpp.so by
// tests/csharp/run.sh. They use only the binding's public surface, like a game would, plus a few
// raw P/Invokes of their own for the ABI check.
//
//   mono SdkppTests.exe                   the main tests
//   mono SdkppTests.exe abi-refuse        a wrong Sdkpp_AbiInfo is refused, then objects are invalid
//   mono SdkppTests.exe abi-binding-mismatch
//                                         run against a binding compiled with a wrong
//                                         SDKPP_ABI_VERSION: the binding throws SdkppAbiException
//
// Each test prints one line; the last line is "N passed, M failed" and the exit code is 1 if any
// test failed. A failed Sdkpp_CheckAbi makes the library refuse to create objects for the rest of
// the process, which is why the ABI tests run in processes of their own.

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Runtime.InteropServices;
using System.Security.Cryptography;
using System.Text;
using System.Threading;
using Sdkpp;

static class Raw
{
    // The C ABI, declared independently of the binding.
    [StructLayout(LayoutKind.Sequential)]
    internal struct AbiInfo
    {
        internal uint structSize, version, abiVersion, sizeofPointer, sizeofSizeT, sizeofBool, sizeofEnum,
            sizeofString, sizeofProperties, sizeofSpan, sizeofObject;
    }

    [DllImport("sdkpp", CallingConvention = CallingConvention.Cdecl)]
    [return: MarshalAs(UnmanagedType.I1)]
    internal static extern bool Sdkpp_CheckAbi(ref AbiInfo info);

    [DllImport("sdkpp", CallingConvention = CallingConvention.Cdecl)]
    internal static extern uint Sdkpp_GetAbiVersion();

    [DllImport("sdkpp", CallingConvention = CallingConvention.Cdecl)]
    internal static extern uint Sdkpp_GetVersion();

    [DllImport("sdkpp", CallingConvention = CallingConvention.Cdecl)]
    internal static extern ulong Sdkpp_GetObjectCount();

    [DllImport("sdkpp", CallingConvention = CallingConvention.Cdecl)]
    internal static extern void Sdkpp_AuthorizationArgs_Init(ref IntPtr self);

    [DllImport("sdkpp", CallingConvention = CallingConvention.Cdecl)]
    internal static extern void Sdkpp_AuthorizationArgs_Drop(ref IntPtr self);

    [DllImport("sdkpp", CallingConvention = CallingConvention.Cdecl)]
    internal static extern void Sdkpp_Call_SetLowLatency(ref IntPtr self, [MarshalAs(UnmanagedType.I1)] bool enabled);

    [DllImport("sdkpp", CallingConvention = CallingConvention.Cdecl)]
    [return: MarshalAs(UnmanagedType.I1)]
    internal static extern bool Sdkpp_Call_GetLowLatency(ref IntPtr self);

    // SDKPP_ABI_INFO_INIT as the library expects it on this platform, with the library's versions.
    internal static AbiInfo LibraryView()
    {
        AbiInfo i = new AbiInfo();
        i.structSize = (uint)Marshal.SizeOf(typeof(AbiInfo));
        i.version = Sdkpp_GetVersion();
        i.abiVersion = Sdkpp_GetAbiVersion();
        i.sizeofPointer = (uint)IntPtr.Size;
        i.sizeofSizeT = (uint)IntPtr.Size;
        i.sizeofBool = 1;
        i.sizeofEnum = 4;
        i.sizeofString = (uint)(2 * IntPtr.Size);
        i.sizeofProperties = (uint)(3 * IntPtr.Size);
        i.sizeofSpan = (uint)(2 * IntPtr.Size);
        i.sizeofObject = (uint)IntPtr.Size;
        return i;
    }
}

static partial class Program
{
    static int passed, failed;
    static int mainThread;

    // SDKPP_TEST_FILTER=a|b runs only the main tests whose names contain a or b.
    static string[] filter = new string[0];

    static void Test(string name, Action body)
    {
        if (filter.Length > 0 && Array.FindIndex(filter, f => name.Contains(f)) < 0)
        {
            return;
        }
        try
        {
            body();
            passed++;
            Console.WriteLine("PASS " + name);
        }
        catch (Exception e)
        {
            failed++;
            Console.WriteLine("FAIL " + name + ": " + e.Message);
            Console.Error.WriteLine("FAIL " + name + ": " + e);
        }
    }

    static void Check(bool ok, string what)
    {
        if (!ok)
        {
            throw new Exception("check failed: " + what);
        }
    }

    static void Eq<T>(T want, T got, string what)
    {
        if (!EqualityComparer<T>.Default.Equals(want, got))
        {
            throw new Exception(what + ": want " + Show(want) + ", got " + Show(got));
        }
    }

    static string Show(object o)
    {
        if (o == null)
        {
            return "null";
        }
        string s = o.ToString();
        return s.Length > 80 ? "\"" + s.Substring(0, 80) + "...\" (" + s.Length + " chars)" : "\"" + s + "\"";
    }

    static void Throws<E>(Action a, string what) where E : Exception
    {
        try
        {
            a();
        }
        catch (E)
        {
            return;
        }
        throw new Exception(what + ": expected " + typeof(E).Name);
    }

    static void Collect()
    {
        for (int i = 0; i < 3; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
    }

    // Waits (collecting garbage) until every object the GC released has been dropped: the library's
    // object count must come back to before, plus the tracked wrappers the GC has not released.
    // Mono scans stacks and registers conservatively, so now and then a stale root keeps a wrapper
    // (and so its native object) alive; a short weak reference tells those apart from leaks. More
    // than a handful, or any difference between the two numbers, fails.
    // Runs body(0..n-1) on n new threads at once, waits for all of them and rethrows the first
    // exception one of them threw.
    static void OnThreads(int n, Action<int> body)
    {
        var errors = new List<Exception>();
        var threads = new Thread[n];
        for (int t = 0; t < n; t++)
        {
            int index = t;
            threads[t] = new Thread(() =>
            {
                try
                {
                    body(index);
                }
                catch (Exception e)
                {
                    lock (errors)
                    {
                        errors.Add(e);
                    }
                }
            });
            threads[t].Start();
        }
        foreach (var t in threads)
        {
            t.Join();
        }
        if (errors.Count > 0)
        {
            throw errors[0];
        }
    }

    // Runs step over and over on a thread of its own while body runs, and stops it after.
    static void WhileRepeating(Action step, Action body)
    {
        bool done = false;
        var loop = new Thread(() =>
        {
            while (!Volatile.Read(ref done))
            {
                step();
            }
        });
        loop.Start();
        try
        {
            body();
        }
        finally
        {
            Volatile.Write(ref done, true);
            loop.Join();
        }
    }

    static void ExpectReleased(ulong before, List<WeakReference> tracked, string what)
    {
        ulong got = 0;
        int alive = 0;
        for (int i = 0; i < 50; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
            got = Sdk.GetObjectCount();
            alive = 0;
            foreach (var w in tracked)
            {
                if (w.IsAlive)
                {
                    alive++;
                }
            }
            if (got == before + (ulong)alive && alive == 0)
            {
                return;
            }
            Thread.Sleep(10);
        }
        if (got == before + (ulong)alive && alive <= 3)
        {
            Console.WriteLine("  note: " + what + ": " + alive + " wrapper(s) still held by a conservative GC root; their native objects are alive as they should be");
            return;
        }
        throw new Exception(what + ": object count " + got + ", want " + before + " + " + alive + " wrapper(s) the GC still holds");
    }

    // Pump runs callbacks until cond holds or seconds pass, and reports whether it held.
    static bool Pump(Func<bool> cond, int seconds)
    {
        var deadline = Stopwatch.StartNew();
        while (!cond())
        {
            if (deadline.Elapsed.TotalSeconds > seconds)
            {
                return false;
            }
            Sdk.WaitForCallbacks(TimeSpan.FromMilliseconds(100));
            RunCallbacks();
        }
        return true;
    }

    // RunCallbacks while noting that callbacks are expected.
    static bool inRun;

    static void RunCallbacks()
    {
        inRun = true;
        try
        {
            Sdk.RunCallbacks();
        }
        finally
        {
            inRun = false;
        }
    }

    static int Main(string[] args)
    {
        mainThread = Thread.CurrentThread.ManagedThreadId;
        string mode = args.Length > 0 ? args[0] : "main";
        switch (mode)
        {
            case "main":
                filter = (Environment.GetEnvironmentVariable("SDKPP_TEST_FILTER") ?? "")
                    .Split(new[] { '|' }, StringSplitOptions.RemoveEmptyEntries);
                MainTests();
                break;
            case "abi-refuse":
                AbiRefuseTests();
                break;
            case "abi-binding-mismatch":
                AbiBindingMismatchTests();
                break;
            case "stress":
                StressTests();
                break;
            case "play-mode":
                PlayModeTests();
                break;
            default:
                Console.Error.WriteLine("usage: SdkppTests.exe [abi-refuse|abi-binding-mismatch|stress|play-mode]");
                return 2;
        }
        Console.WriteLine(passed + " passed, " + failed + " failed");
        return failed == 0 ? 0 : 1;
    }

    static void MainTests()
    {
        Test("abi: the binding matches the library", () =>
        {
            Sdk.CheckAbi();
            Eq(Sdk.BindingAbiVersion, Raw.Sdkpp_GetAbiVersion(), "SDKPP_ABI_VERSION");
            Eq(Sdk.BindingVersion, Sdk.Version, "SDKPP_VERSION");
            Eq((uint)((Client.GetVersionMajor() << 16) | (Client.GetVersionMinor() << 8) | Client.GetVersionPatch()), Sdk.Version, "Client.GetVersion*");
            Check(Client.GetVersionHash().Length > 0, "GetVersionHash is not empty");
        });

        // The resolver that .NET hosts use (NativeLibrary; Mono has none, so its search is called
        // here directly) finds each library in the NuGet package's layout, seen from the binding's
        // lib/netstandard2.0/ directory. Run against a package (make test-csharp) only.
        string package = Environment.GetEnvironmentVariable("SDKPP_CSHARP_PACKAGE") ?? "";
        if (package.Length > 0)
        {
            Test("NuGet: the native library resolver finds each library in the package", () =>
            {
                var candidates = typeof(Sdk).Assembly.GetType("Sdkpp.NativeLibraryResolver", true)
                    .GetMethod("Candidates", System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Static);
                string binding = Path.Combine(package, "lib", "netstandard2.0");
                foreach (bool windows in new[] { false, true })
                {
                    var paths = (List<string>)candidates.Invoke(null, new object[] { windows, new[] { binding } });
                    string found = paths.FirstOrDefault(File.Exists);
                    string want = Path.Combine(package, "runtimes", windows ? "win-x64" : "linux-x64", "native",
                        windows ? "sdkpp.dll" : "libsdkpp.so");
                    Eq(Path.GetFullPath(want), found, "the first existing candidate");
                }
            });
        }

        Test("rule AA-1: AuthorizationArgs defaults (ClientId 0, optionals absent)", () =>
        {
            using (var a = new AuthorizationArgs())
            {
                Eq(0UL, a.ClientId(), "ClientId");
                Eq("", a.Scopes(), "Scopes");
                Eq<string>(null, a.State(), "State");
                Eq<string>(null, a.Nonce(), "Nonce");
                Check(a.CodeChallenge() == null, "CodeChallenge is null");
                Eq<IntegrationType?>(null, a.IntegrationType(), "IntegrationType");
                Eq<string>(null, a.CustomSchemeParam(), "CustomSchemeParam");
            }
        });

        Test("AuthorizationArgs: every property round-trips", () =>
        {
            using (var a = new AuthorizationArgs())
            {
                a.SetClientId(ulong.MaxValue);
                Eq(ulong.MaxValue, a.ClientId(), "ClientId max");
                a.SetClientId(1234567890123456789UL);
                Eq(1234567890123456789UL, a.ClientId(), "ClientId");
                a.SetScopes(Client.GetDefaultCommunicationScopes());
                Eq("openid sdk.social_layer", a.Scopes(), "Scopes");
                a.SetState("state-1");
                Eq("state-1", a.State(), "State");
                a.SetNonce("nonce-1");
                Eq("nonce-1", a.Nonce(), "Nonce");
                a.SetCustomSchemeParam("mygame");
                Eq("mygame", a.CustomSchemeParam(), "CustomSchemeParam");
                a.SetIntegrationType(IntegrationType.UserInstall);
                Eq<IntegrationType?>(IntegrationType.UserInstall, a.IntegrationType(), "IntegrationType");
                using (var ch = new AuthorizationCodeChallenge())
                {
                    ch.SetChallenge("abc");
                    a.SetCodeChallenge(ch);
                }
                using (var got = a.CodeChallenge())
                {
                    Check(got != null, "CodeChallenge set");
                    Eq("abc", got.Challenge(), "CodeChallenge.Challenge");
                    Eq(AuthenticationCodeChallengeMethod.S256, got.Method(), "CodeChallenge.Method");
                }
            }
        });

        Test("strings: UTF-8 (non-ASCII, emoji), embedded NUL, empty", () =>
        {
            using (var a = new AuthorizationArgs())
            {
                string[] samples =
                {
                    "héllo wörld", "日本語のスコープ", "emoji 🎮🚀 and 👩‍👩‍👧", "a\0b", "\0", "trailing\0", "",
                    "Ω≈ç√∫˜µ≤≥÷ \t\r\n",
                };
                foreach (string s in samples)
                {
                    a.SetScopes(s);
                    Eq(s, a.Scopes(), "Scopes round trip");
                    a.SetState(s);
                    Eq(s, a.State(), "State round trip");
                }
                a.SetScopes("a\0b");
                Eq(3, a.Scopes().Length, "embedded NUL keeps the length");
            }
        });

        Test("strings: a 1 MiB string round-trips", () =>
        {
            var sb = new StringBuilder(1 << 20);
            string unit = "0123456789abcdef€🎮"; // mixes 1-, 3- and 4-byte UTF-8
            while (Encoding.UTF8.GetByteCount(sb.ToString()) < (1 << 20))
            {
                for (int i = 0; i < 4096; i++)
                {
                    sb.Append(unit);
                }
            }
            string big = sb.ToString();
            using (var a = new AuthorizationArgs())
            {
                a.SetScopes(big);
                string got = a.Scopes();
                Check(got == big, "1 MiB Scopes round trip (" + big.Length + " chars)");
                a.SetNonce(big);
                Check(a.Nonce() == big, "1 MiB Nonce round trip");
            }
        });

        Test("optional getters: absent is null, setting null clears", () =>
        {
            using (var a = new AuthorizationArgs())
            {
                a.SetState("s");
                a.SetNonce("n");
                a.SetCustomSchemeParam("c");
                a.SetIntegrationType(IntegrationType.UserInstall);
                using (var ch = new AuthorizationCodeChallenge())
                {
                    a.SetCodeChallenge(ch);
                }
                a.SetState("");
                Eq("", a.State(), "an empty State is present, not absent");
                a.SetState(null);
                a.SetNonce(null);
                a.SetCustomSchemeParam(null);
                a.SetIntegrationType(null);
                a.SetCodeChallenge(null);
                Eq<string>(null, a.State(), "State cleared");
                Eq<string>(null, a.Nonce(), "Nonce cleared");
                Eq<string>(null, a.CustomSchemeParam(), "CustomSchemeParam cleared");
                Eq<IntegrationType?>(null, a.IntegrationType(), "IntegrationType cleared");
                Check(a.CodeChallenge() == null, "CodeChallenge cleared");
            }
        });

        Test("rule AA-6: IntegrationType set/get (GuildInstall = 0 is not absent)", () =>
        {
            using (var a = new AuthorizationArgs())
            {
                a.SetIntegrationType(IntegrationType.GuildInstall);
                Eq<IntegrationType?>(IntegrationType.GuildInstall, a.IntegrationType(), "GuildInstall");
                a.SetIntegrationType(IntegrationType.UserInstall);
                Eq<IntegrationType?>(IntegrationType.UserInstall, a.IntegrationType(), "UserInstall");
                Eq(0, (int)IntegrationType.GuildInstall, "GuildInstall value");
                Eq(1, (int)IntegrationType.UserInstall, "UserInstall value");
            }
        });

        Test("rule AA-7: CustomSchemeParam set/get", () =>
        {
            using (var a = new AuthorizationArgs())
            {
                a.SetCustomSchemeParam("com.example.game");
                Eq("com.example.game", a.CustomSchemeParam(), "CustomSchemeParam");
                a.SetCustomSchemeParam("discord-123");
                Eq("discord-123", a.CustomSchemeParam(), "CustomSchemeParam replaced");
            }
        });

        Test("PKCE: CreateAuthorizationCodeVerifier().Challenge() is S256 of the verifier and goes into CodeChallenge", () =>
        {
            using (var client = new Client())
            using (var verifier = client.CreateAuthorizationCodeVerifier())
            using (var challenge = verifier.Challenge())
            using (var args = new AuthorizationArgs())
            {
                string v = verifier.Verifier();
                Check(v.Length >= 43, "verifier has at least 43 characters");
                Eq(AuthenticationCodeChallengeMethod.S256, challenge.Method(), "Method");
                string want;
                using (var sha = SHA256.Create())
                {
                    want = Convert.ToBase64String(sha.ComputeHash(Encoding.ASCII.GetBytes(v)))
                        .TrimEnd('=').Replace('+', '-').Replace('/', '_');
                }
                Eq(want, challenge.Challenge(), "challenge = base64url(sha256(verifier))");
                args.SetCodeChallenge(challenge);
                using (var got = args.CodeChallenge())
                {
                    Eq(want, got.Challenge(), "args.CodeChallenge().Challenge()");
                    got.SetChallenge("changed");
                }
                using (var again = args.CodeChallenge())
                {
                    Eq(want, again.Challenge(), "the getter returns a copy");
                }
                challenge.SetChallenge("changed too");
                using (var again = args.CodeChallenge())
                {
                    Eq(want, again.Challenge(), "the setter stored a copy");
                }
            }
        });

        Test("rule OBJ-1: Clone is a deep copy", () =>
        {
            using (var a = new AuthorizationArgs())
            {
                a.SetClientId(7);
                a.SetScopes("openid");
                a.SetState("state");
                a.SetIntegrationType(IntegrationType.UserInstall);
                using (var ch = new AuthorizationCodeChallenge())
                {
                    ch.SetChallenge("original");
                    a.SetCodeChallenge(ch);
                }
                using (var b = a.Clone())
                {
                    Check(b != null, "Clone returned an object");
                    Eq(7UL, b.ClientId(), "copied ClientId");
                    Eq("openid", b.Scopes(), "copied Scopes");
                    Eq("state", b.State(), "copied State");
                    b.SetClientId(8);
                    b.SetScopes("changed");
                    b.SetState(null);
                    b.SetIntegrationType(IntegrationType.GuildInstall);
                    using (var ch = new AuthorizationCodeChallenge())
                    {
                        ch.SetChallenge("changed");
                        b.SetCodeChallenge(ch);
                    }
                    Eq(7UL, a.ClientId(), "original ClientId");
                    Eq("openid", a.Scopes(), "original Scopes");
                    Eq("state", a.State(), "original State");
                    Eq<IntegrationType?>(IntegrationType.UserInstall, a.IntegrationType(), "original IntegrationType");
                    using (var ch = a.CodeChallenge())
                    {
                        Eq("original", ch.Challenge(), "original CodeChallenge");
                    }
                    a.Dispose();
                    Eq(8UL, b.ClientId(), "the copy outlives the original");
                }
            }
            using (var o = new ClientCreateOptions())
            {
                o.SetCpuAffinityMask(3);
                using (var p = o.Clone())
                {
                    p.SetCpuAffinityMask(null);
                    Eq<ulong?>(3, o.CpuAffinityMask(), "original CpuAffinityMask");
                    Eq<ulong?>(null, p.CpuAffinityMask(), "copy CpuAffinityMask");
                }
            }
        });

        Test("Activity.Equals: field-wise, with Equals(object) and GetHashCode to match", () =>
        {
            using (var a = new Activity())
            using (var assets = new ActivityAssets())
            using (var button = new ActivityButton())
            {
                a.SetName("Harbor Siege");
                a.SetState("In a match");
                assets.SetLargeImage("map_harbor");
                a.SetAssets(assets);
                button.SetLabel("Watch");
                button.SetUrl("https://game.example/watch");
                a.AddButton(button);
                using (var b = a.Clone())
                {
                    Check(a.Equals(b) && b.Equals(a) && a.Equals((object)b), "a clone is equal");
                    Eq(a.GetHashCode(), b.GetHashCode(), "equal activities hash alike");
                    var set = new HashSet<Activity> { a };
                    Check(set.Contains(b), "a HashSet finds an equal activity");
                    Check(a.Equals(a) && !a.Equals((Activity)null) && !a.Equals((object)null) && !a.Equals("Harbor Siege"),
                        "itself yes; null and other types no");
                    using (var other = new ActivityAssets())
                    {
                        other.SetLargeImage("map_fort");
                        b.SetAssets(other);
                    }
                    Check(!a.Equals(b) && !b.Equals((object)a), "a different nested asset makes them differ");
                    b.SetAssets(assets);
                    Check(a.Equals(b), "equal again");
                    b.AddButton(button);
                    Check(!a.Equals(b), "one more button makes them differ");
                    b.Dispose();
                    Check(!a.Equals(b), "a disposed activity equals nothing (the library refuses it)");
                }
            }
        });

        Test("Dispose twice is harmless; use after Dispose throws ObjectDisposedException", () =>
        {
            ulong before = Sdk.GetObjectCount();
            var a = new AuthorizationArgs();
            a.SetScopes("x");
            a.SetState("y");
            Eq(before + 1, Sdk.GetObjectCount(), "one object");
            a.Dispose();
            a.Dispose();
            Eq(before, Sdk.GetObjectCount(), "dropped once");
            Throws<ObjectDisposedException>(() => a.ClientId(), "ClientId after Dispose");
            Throws<ObjectDisposedException>(() => a.Scopes(), "Scopes after Dispose");
            Throws<ObjectDisposedException>(() => a.State(), "State after Dispose");
            Throws<ObjectDisposedException>(() => a.IntegrationType(), "IntegrationType after Dispose");
            Throws<ObjectDisposedException>(() => a.CodeChallenge(), "CodeChallenge after Dispose");
            Throws<ObjectDisposedException>(() => a.Clone(), "Clone after Dispose");
            Throws<ObjectDisposedException>(() => a.SetScopes("ignored"), "SetScopes after Dispose");
            Throws<ObjectDisposedException>(() => a.SetClientId(1), "SetClientId after Dispose");
            Eq(before, Sdk.GetObjectCount(), "no object resurrected");

            var client = new Client();
            client.Dispose();
            client.Dispose();
            Throws<ObjectDisposedException>(() => client.GetHttpRequestTimeout(), "GetHttpRequestTimeout after Dispose");
            Throws<ObjectDisposedException>(() => client.GetApplicationId(), "GetApplicationId after Dispose");
            Throws<ObjectDisposedException>(() => client.CreateAuthorizationCodeVerifier(), "CreateAuthorizationCodeVerifier after Dispose");
            Throws<ObjectDisposedException>(() => client.SetLogDir(Path.GetTempPath(), LoggingSeverity.Info), "SetLogDir after Dispose");
            Eq(before, Sdk.GetObjectCount(), "object count after the Client");
        });

        Test("Dispose racing on 8 threads drops exactly once", () =>
        {
            ulong before = Sdk.GetObjectCount();
            for (int round = 0; round < 50; round++)
            {
                var a = new AuthorizationArgs();
                var threads = new Thread[8];
                var start = new ManualResetEvent(false);
                for (int i = 0; i < threads.Length; i++)
                {
                    threads[i] = new Thread(() =>
                    {
                        start.WaitOne();
                        a.Dispose();
                        try
                        {
                            a.Scopes();
                        }
                        catch (ObjectDisposedException)
                        {
                            // Always, once this thread's Dispose returned.
                        }
                    });
                    threads[i].Start();
                }
                start.Set();
                foreach (var t in threads)
                {
                    t.Join();
                }
                Eq(before, Sdk.GetObjectCount(), "object count after racing Dispose");
            }
        });

        Test("rule SC-1: GetDefaultCommunicationScopes", () =>
        {
            Eq("openid sdk.social_layer", Client.GetDefaultCommunicationScopes(), "communication scopes");
        });

        Test("rule SC-2: GetDefaultPresenceScopes", () =>
        {
            Eq("openid sdk.social_layer_presence", Client.GetDefaultPresenceScopes(), "presence scopes");
        });

        Test("nested enums and their names (Client.Status, Client.Error, Client.Thread)", () =>
        {
            Eq("Ready", Client.StatusToString(Client.Status.Ready), "StatusToString");
            Eq("ConnectionFailed", Client.ErrorToString(Client.Error.ConnectionFailed), "ErrorToString");
            Eq("Voice", Client.ThreadToString(Client.Thread.Voice), "ThreadToString");
            Eq(6, (int)Client.Status.HttpWait, "Client.Status.HttpWait value");
            Eq(429, (int)HttpStatus.TooManyRequests, "HttpStatus value (HttpStatusCode in the API reference)");
            using (var c = new Client())
            {
                Eq(Client.Status.Disconnected, c.GetStatus(), "a new Client is Disconnected");
            }
        });

        Test("rule OPT-1: ClientCreateOptions (ExperimentalAudioSystem, ExperimentalAndroidPreventCommsForBluetooth, CpuAffinityMask)", () =>
        {
            using (var o = new ClientCreateOptions())
            {
                Eq(AudioSystem.Standard, o.ExperimentalAudioSystem(), "default audio system");
                Eq(false, o.ExperimentalAndroidPreventCommsForBluetooth(), "default Bluetooth flag");
                Eq<ulong?>(null, o.CpuAffinityMask(), "default CpuAffinityMask");
                Check(o.ApiBase().StartsWith("http"), "default ApiBase is a URL: " + o.ApiBase());
                Check(o.WebBase().StartsWith("http"), "default WebBase is a URL: " + o.WebBase());
                o.SetExperimentalAudioSystem(AudioSystem.Game);
                Eq(AudioSystem.Game, o.ExperimentalAudioSystem(), "Game audio system");
                o.SetExperimentalAndroidPreventCommsForBluetooth(true);
                Eq(true, o.ExperimentalAndroidPreventCommsForBluetooth(), "Bluetooth flag");
                o.SetCpuAffinityMask(0);
                Eq<ulong?>(0, o.CpuAffinityMask(), "CpuAffinityMask 0 is present");
                o.SetCpuAffinityMask(0xF0F0F0F0F0F0F0F0UL);
                Eq<ulong?>(0xF0F0F0F0F0F0F0F0UL, o.CpuAffinityMask(), "CpuAffinityMask");
                o.SetApiBase("http://127.0.0.1:1/api");
                o.SetWebBase("http://127.0.0.1:1");
                Eq("http://127.0.0.1:1/api", o.ApiBase(), "ApiBase");
                using (var c = new Client(o))
                {
                    Eq(30000, c.GetHttpRequestTimeout(), "a Client made with options works");
                }
                o.SetCpuAffinityMask(null);
                Eq<ulong?>(null, o.CpuAffinityMask(), "CpuAffinityMask cleared");
            }
            using (var c = new Client("http://127.0.0.1:1/api", "http://127.0.0.1:1"))
            {
                Eq(30000, c.GetHttpRequestTimeout(), "a Client made with bases works");
            }
        });

        Test("rule LIM-3: SetHttpRequestTimeout / GetHttpRequestTimeout, default 30000 ms", () =>
        {
            using (var c = new Client())
            {
                Eq(30000, c.GetHttpRequestTimeout(), "default");
                c.SetHttpRequestTimeout(5000);
                Eq(5000, c.GetHttpRequestTimeout(), "set");
                c.SetHttpRequestTimeout(-1);
                Eq(5000, c.GetHttpRequestTimeout(), "a negative timeout is refused");
                c.SetHttpRequestTimeout(0);
                Eq(5000, c.GetHttpRequestTimeout(), "zero is refused");
                c.SetApplicationId(1234);
                Eq(1234UL, c.GetApplicationId(), "application id");
                Sdk.ResetCallbacks();
            }
        });

        Test("null arguments throw ArgumentNullException", () =>
        {
            using (var a = new AuthorizationArgs())
            using (var c = new Client())
            {
                int pending = Sdk.GetPendingCallbackCount();
                Throws<ArgumentNullException>(() => a.SetScopes(null), "SetScopes(null)");
                Throws<ArgumentNullException>(() => c.AddLogCallback(null, LoggingSeverity.Info), "AddLogCallback(null)");
                Throws<ArgumentNullException>(() => c.IsDiscordAppInstalled(null), "IsDiscordAppInstalled(null)");
                Throws<ArgumentNullException>(() => new Client((ClientCreateOptions)null), "Client(null options)");
                Throws<ArgumentNullException>(() => new Client(null, "http://x"), "Client(null base)");
                Throws<ArgumentNullException>(() => c.SetLogDir(null, LoggingSeverity.Info), "SetLogDir(null)");
                Eq(pending, Sdk.GetPendingCallbackCount(), "nothing registered");
            }
        });

        Test("log callback: delivered inside RunCallbacks on the calling thread; rule AU-10 redaction", () =>
        {
            var got = new List<string>();
            var threads = new List<int>();
            bool outside = false;
            string blocker = Path.GetTempFileName(); // a file, so that a directory below it cannot exist
            try
            {
                using (var c = new Client())
                {
                    c.AddLogCallback((message, severity) =>
                    {
                        if (!inRun)
                        {
                            outside = true;
                        }
                        threads.Add(Thread.CurrentThread.ManagedThreadId);
                        got.Add(severity + ": " + message);
                    }, LoggingSeverity.Verbose);
                    c.SetHttpRequestTimeout(-1);
                    Check(!c.SetLogDir(Path.Combine(blocker, "Bearer abcdefghijklmnop"), LoggingSeverity.Info), "SetLogDir fails below a file");
                    Thread.Sleep(20);
                    Eq(0, got.Count, "nothing delivered before RunCallbacks");
                    RunCallbacks();
                    Check(got.Count >= 2, "two messages delivered, got " + got.Count);
                    Check(!outside, "only inside RunCallbacks");
                    foreach (int t in threads)
                    {
                        Eq(mainThread, t, "delivered on the thread that called RunCallbacks");
                    }
                    string all = string.Join("\n", got.ToArray());
                    Check(all.Contains("Error: ") && all.Contains("SetHttpRequestTimeout"), "the timeout error was logged: " + all);
                    Check(all.Contains("SetLogDir"), "the SetLogDir error was logged: " + all);
                    Check(all.Contains("Bearer"), "the message kept its text: " + all);
                    Check(!all.Contains("abcdefghijklmnop"), "rule AU-10: the bearer token is redacted: " + all);
                }
            }
            finally
            {
                File.Delete(blocker);
            }
            Eq(0, Sdk.GetPendingCallbackCount(), "the log callback was released with the Client");
        });

        Test("callbacks run on whichever thread calls RunCallbacks", () =>
        {
            using (var c = new Client())
            {
                int ran = -1;
                c.IsDiscordAppInstalled(installed => ran = Thread.CurrentThread.ManagedThreadId);
                int worker = -2;
                var t = new Thread(() => { worker = Thread.CurrentThread.ManagedThreadId; Sdk.RunCallbacks(); });
                t.Start();
                t.Join();
                Eq(worker, ran, "the worker thread ran the callback");
                Check(worker != mainThread, "a different thread");
            }
        });

        Test("WaitForCallbacks: reports queued callbacks without running them, and wakes a waiting thread", () =>
        {
            Sdk.RunCallbacks();
            Check(!Sdk.WaitForCallbacks(TimeSpan.Zero), "nothing queued");
            Check(!Sdk.WaitForCallbacks(TimeSpan.FromMilliseconds(-5)), "a negative timeout only checks");
            Check(!Sdk.WaitForCallbacks(TimeSpan.FromMilliseconds(1)), "nothing queued after the timeout");
            using (var c = new Client())
            {
                int calls = 0;
                bool woke = false;
                // Ten minutes: the test would hang if queueing did not wake the waiter.
                var t = new Thread(() => { woke = Sdk.WaitForCallbacks(TimeSpan.FromMinutes(10)); });
                t.Start();
                c.IsDiscordAppInstalled(installed => calls++);
                t.Join();
                Check(woke, "the waiter saw the queued callback");
                Check(Sdk.WaitForCallbacks(TimeSpan.Zero), "still queued");
                Eq(0, calls, "waiting runs nothing");
                Sdk.RunCallbacks();
                Eq(1, calls, "RunCallbacks ran it");
                Check(!Sdk.WaitForCallbacks(TimeSpan.Zero), "nothing left");
            }
        });

        Test("IsDiscordAppInstalled: fires exactly once, inside RunCallbacks, with false", () =>
        {
            using (var c = new Client())
            {
                int calls = 0;
                bool value = true, outside = false;
                c.IsDiscordAppInstalled(installed =>
                {
                    calls++;
                    value = installed;
                    outside |= !inRun || Thread.CurrentThread.ManagedThreadId != mainThread;
                });
                Eq(0, calls, "not before RunCallbacks");
                Eq(1, Sdk.GetPendingCallbackCount(), "registered");
                RunCallbacks();
                RunCallbacks();
                Eq(1, calls, "exactly once");
                Eq(false, value, "installed");
                Check(!outside, "inside RunCallbacks on the calling thread");
                Eq(0, Sdk.GetPendingCallbackCount(), "its free function ran");
            }
        });

        Test("OpenConnectedGamesSettingsInPlatform: ClientNotReady result; ClientResult.ToString overrides object.ToString", () =>
        {
            ulong before = Sdk.GetObjectCount();
            using (var c = new Client())
            {
                ClientResult result = null;
                int calls = 0;
                c.OpenConnectedGamesSettingsInPlatform(r => { calls++; result = r; });
                RunCallbacks();
                Eq(1, calls, "called once");
                Check(result != null, "a result");
                Eq(ErrorType.ClientNotReady, result.Type(), "Type");
                Eq(false, result.Successful(), "Successful");
                Check(result.Error().Length > 0, "an error message");
                object o = result;
                string s = o.ToString();
                Check(s.Contains("ClientNotReady"), "ToString via object: " + s);
                Eq(s, result.ToString(), "ToString");
                using (var copy = result.Clone())
                {
                    Eq(ErrorType.ClientNotReady, copy.Type(), "a cloned result");
                    copy.SetType(ErrorType.None);
                    copy.SetSuccessful(true);
                    copy.SetRetryAfter(1.5f);
                    Eq(1.5f, copy.RetryAfter(), "RetryAfter");
                    Eq(ErrorType.ClientNotReady, result.Type(), "the original result");
                }
                result.Dispose();
            }
            Eq(before, Sdk.GetObjectCount(), "the result and the Client were released");
            Eq(0, Sdk.GetPendingCallbackCount(), "the callback was released");
        });

        Test("OpenConnectedGamesSettingsInPlatform: ClientDestroyed when the Client is disposed before RunCallbacks", () =>
        {
            ErrorType type = ErrorType.None;
            int calls = 0;
            var c = new Client();
            c.OpenConnectedGamesSettingsInPlatform(r => { calls++; type = r.Type(); r.Dispose(); });
            c.Dispose();
            Eq(0, calls, "not before RunCallbacks");
            RunCallbacks();
            Eq(1, calls, "called once");
            Eq(ErrorType.ClientDestroyed, type, "Type");
            Eq(0, Sdk.GetPendingCallbackCount(), "released");
        });

        Test("a callback that throws is caught at the boundary; later callbacks still run", () =>
        {
            var caught = new List<Exception>();
            Action<Exception> onError = e => caught.Add(e);
            Sdk.CallbackException += onError;
            try
            {
                using (var c = new Client())
                {
                    bool second = false;
                    c.IsDiscordAppInstalled(installed => { throw new InvalidOperationException("boom from a callback"); });
                    c.OpenConnectedGamesSettingsInPlatform(r => { r.Dispose(); throw new ApplicationException("boom 2"); });
                    c.IsDiscordAppInstalled(installed => second = true);
                    RunCallbacks();
                    Check(second, "the callback after the throwing ones ran");
                    Eq(2, caught.Count, "both exceptions reported");
                    Check(caught[0] is InvalidOperationException && caught[0].Message == "boom from a callback", "the first exception");
                }
            }
            finally
            {
                Sdk.CallbackException -= onError;
            }
            Eq(0, Sdk.GetPendingCallbackCount(), "released");
        });

        Test("callback registry is empty after the Client is disposed and callbacks ran", () =>
        {
            int before = Sdk.GetPendingCallbackCount();
            var c = new Client();
            for (int i = 0; i < 5; i++)
            {
                c.AddLogCallback((m, s) => { }, LoggingSeverity.Info);
                c.IsDiscordAppInstalled(x => { });
                c.OpenConnectedGamesSettingsInPlatform(r => r.Dispose());
            }
            Eq(before + 15, Sdk.GetPendingCallbackCount(), "registered");
            c.Dispose();
            RunCallbacks();
            Eq(0, Sdk.GetPendingCallbackCount(), "every free function ran");
        });

        Test("ResetCallbacks discards queued callbacks and still frees them", () =>
        {
            using (var c = new Client())
            {
                bool called = false;
                c.IsDiscordAppInstalled(x => called = true);
                Sdk.ResetCallbacks();
                RunCallbacks();
                Check(!called, "not called");
                Eq(0, Sdk.GetPendingCallbackCount(), "freed");
            }
        });

        Test("a callback given to a disposed Client is refused (ObjectDisposedException) and never called", () =>
        {
            var c = new Client();
            c.Dispose();
            bool called = false;
            Throws<ObjectDisposedException>(() => c.IsDiscordAppInstalled(x => called = true), "IsDiscordAppInstalled");
            Throws<ObjectDisposedException>(() => c.AddLogCallback((m, s) => called = true, LoggingSeverity.Verbose), "AddLogCallback");
            Eq(0, Sdk.GetPendingCallbackCount(), "nothing registered");
            RunCallbacks();
            Check(!called, "never called");
        });

        EventTests();
        AsyncTests();
        OwnershipTests();

        Test("Sdk.SetLogCallback receives, inside RunCallbacks, what no Client's log took", () =>
        {
            var got = new List<string>();
            int thread = -1;
            Sdk.SetLogCallback((m, sev) => { got.Add(sev + " " + m); thread = Thread.CurrentThread.ManagedThreadId; }, LoggingSeverity.Warning);
            try
            {
                IntPtr forged = new IntPtr(0x7777);
                Raw.Sdkpp_AuthorizationArgs_Drop(ref forged); // refused: an error of no Client
                Eq(0, got.Count, "not before RunCallbacks");
                RunCallbacks();
                Eq(1, got.Count, "the refusal's error");
                Check(got[0].StartsWith("Error ") && got[0].Contains("AuthorizationArgs_Drop"), "the message: " + got[0]);
                Eq(mainThread, thread, "on the thread calling RunCallbacks");
            }
            finally
            {
                Sdk.SetLogCallback(null, LoggingSeverity.None);
            }
            RunCallbacks();
            Eq(0, Sdk.GetPendingCallbackCount(), "the replaced callback was released");
        });

        Test("Sdk.UnhandledException receives a callback's exception, with where it was thrown", () =>
        {
            var seen = new List<SdkExceptionEventArgs>();
            EventHandler<SdkExceptionEventArgs> onError = (sender, e) => seen.Add(e);
            Sdk.UnhandledException += onError;
            try
            {
                using (var c = new Client())
                {
                    c.IsDiscordAppInstalled(installed => { throw new InvalidOperationException("boom for the handler"); });
                    RunCallbacks();
                }
            }
            finally
            {
                Sdk.UnhandledException -= onError;
            }
            Eq(1, seen.Count, "reported once");
            Check(seen[0].Exception is InvalidOperationException && seen[0].Exception.Message == "boom for the handler", "the exception");
            Check(seen[0].Where.Contains("IsDiscordAppInstalled"), "where: " + seen[0].Where);
        });

        Test("Call: a call that cannot start is null; the raw audio hooks never run; names", () =>
        {
            ulong before = Sdk.GetObjectCount();
            using (var c = new Client())
            {
                int frames = 0;
                Client.UserAudioReceivedCallback rx = (ulong user, IntPtr data, ulong n, int rate, ulong ch, ref bool mute) =>
                {
                    frames++;
                    mute = true;
                };
                Client.UserAudioCapturedCallback tx = (IntPtr data, ulong n, int rate, ulong ch) => { frames++; };
                Check(c.StartCallWithAudioCallbacks(1, rx, tx) == null, "not connected: no call");
                Check(c.StartCall(1) == null, "StartCall: no call");
                Check(c.GetCall(1) == null, "GetCall: none");
                Eq(0, c.GetCalls().Length, "GetCalls");
                RunCallbacks();
                Eq(0, frames, "the hooks never ran");
                Eq("Forbidden", Call.ErrorToString(Call.Error.Forbidden), "ErrorToString");
                Eq("Reconnecting", Call.StatusToString(Call.Status.Reconnecting), "StatusToString");
                Eq(2, (int)AudioModeType.MODE_PTT, "AudioModeType.MODE_PTT");
                IntPtr forged = new IntPtr(0x7fff00010001);
                Raw.Sdkpp_Call_SetLowLatency(ref forged, true); // refused: no such Call
                Check(!Raw.Sdkpp_Call_GetLowLatency(ref forged), "GetLowLatency on a forged Call: the default");
            }
            Eq(before, Sdk.GetObjectCount(), "no object left");
        });

        Test("rule VS-1: voice settings from the desktop client, read-only, with updates", () =>
        {
            // run.sh gives this process a socket directory of its own (XDG_RUNTIME_DIR) and the
            // stand-in desktop client (SDKPP_DESKTOP).
            string desktop = Environment.GetEnvironmentVariable("SDKPP_DESKTOP");
            Check(!string.IsNullOrEmpty(desktop), "SDKPP_DESKTOP names the stand-in desktop client");
            Check(typeof(VoiceSettings).GetMethods().All(m => !m.Name.StartsWith("Set")), "VS-1: VoiceSettings has no setter");
            Check(typeof(VoiceSettings).GetConstructors().Length == 0, "VS-1: VoiceSettings has no public constructor");
            using (var c = new Client())
            {
                c.SetApplicationId(42);
                // No desktop client: a successful result and no settings.
                Func<Tuple<ClientResult, VoiceSettings>> get = () =>
                {
                    Tuple<ClientResult, VoiceSettings> got = null;
                    c.GetVoiceSettings((r, v) => { got = Tuple.Create(r, v); });
                    Check(Pump(() => got != null, 30), "the GetVoiceSettings callback");
                    return got;
                };
                var none = get();
                Check(none.Item1.Successful(), "no desktop client is not a failure: " + none.Item1.Error());
                Check(none.Item2 == null, "no desktop client: no settings");

                var psi = new ProcessStartInfo(desktop, "-index 0")
                {
                    UseShellExecute = false, RedirectStandardInput = true, RedirectStandardOutput = true,
                };
                using (var p = Process.Start(psi))
                {
                    try
                    {
                        Func<string, string> exec = line =>
                        {
                            p.StandardInput.WriteLine(line);
                            p.StandardInput.Flush();
                            return p.StandardOutput.ReadLine();
                        };
                        Check(p.StandardOutput.ReadLine().StartsWith("listening "), "the desktop client listens");
                        exec("voice mode ptt");
                        exec("voice ptt-key SHIFT + F");
                        exec("voice input-volume 80");
                        // The SDK finds it on its next connection attempt.
                        Tuple<ClientResult, VoiceSettings> some = null;
                        Check(Pump(() => { some = get(); return some.Item2 != null; }, 30), "the settings once the desktop client runs");
                        Check(some.Item1.Successful(), "GetVoiceSettings succeeds");
                        Eq(VoiceInputModeType.PushToTalk, some.Item2.InputMode(), "InputMode");
                        Eq("SHIFT + F", some.Item2.PttKey(), "PttKey");
                        Eq(80f, some.Item2.InputVolume(), "InputVolume");
                        Eq(100f, some.Item2.OutputVolume(), "OutputVolume");
                        Check(!some.Item2.SelfMute() && !some.Item2.SelfDeaf(), "not muted or deafened");
                        some.Item2.Dispose();

                        VoiceSettings updated = null;
                        c.SetVoiceSettingsUpdatedCallback(v => { updated = v; });
                        Check(Pump(() => exec("status").Contains("VOICE_SETTINGS_UPDATE=1"), 30), "the update subscription");
                        Eq("sent VOICE_SETTINGS_UPDATE to 1", exec("voice deaf true"), "the change reaches the SDK");
                        Check(Pump(() => updated != null, 30), "the update callback fires on a change");
                        Check(updated.SelfDeaf(), "the update carries the change");
                        Eq(VoiceInputModeType.PushToTalk, updated.InputMode(), "and the rest of the settings");
                        updated.Dispose();
                        exec("quit");
                    }
                    finally
                    {
                        if (!p.WaitForExit(10000))
                        {
                            p.Kill();
                        }
                    }
                }
            }
        });

        Test("Clients: create, use and dispose 200 times in one process", () =>
        {
            ulong before = Sdk.GetObjectCount();
            int results = 0, logs = 0;
            for (int i = 0; i < 200; i++)
            {
                Client c;
                if (i % 3 == 0)
                {
                    c = new Client();
                }
                else if (i % 3 == 1)
                {
                    c = new Client("http://127.0.0.1:1/api", "http://127.0.0.1:1");
                }
                else
                {
                    using (var o = new ClientCreateOptions())
                    {
                        c = new Client(o);
                    }
                }
                c.AddLogCallback((m, s) => logs++, LoggingSeverity.Error);
                c.SetHttpRequestTimeout(-1); // logs an error
                c.OpenConnectedGamesSettingsInPlatform(r => { results++; r.Dispose(); });
                Eq(30000, c.GetHttpRequestTimeout(), "a working Client");
                if (i % 2 == 0)
                {
                    RunCallbacks();
                }
                c.Dispose();
            }
            RunCallbacks();
            Eq(200, results, "every one-shot callback ran");
            Check(logs >= 100, "log messages delivered: " + logs);
            Eq(before, Sdk.GetObjectCount(), "object count");
            Eq(0, Sdk.GetPendingCallbackCount(), "callback registry");
        });

        Test("finalizers release objects that were not disposed", () =>
        {
            Collect();
            ulong before = Sdk.GetObjectCount();
            var tracked = new List<WeakReference>();
            // On a thread of its own, so that no stale slot of this thread's stack keeps one alive.
            var t = new Thread(() => MakeGarbage(1000, tracked));
            t.Start();
            t.Join();
            ExpectReleased(before, tracked, "after finalizers");
        });

        Test("churn: 200000 objects on 4 threads while the GC runs, half disposed, half finalized", () =>
        {
            Collect();
            ulong before = Sdk.GetObjectCount();
            const int threadCount = 4, perThread = 50000;
            // The objects left to finalizers, for ExpectReleased.
            var weak = new List<WeakReference>[threadCount];
            for (int t = 0; t < threadCount; t++)
            {
                weak[t] = new List<WeakReference>(perThread / 2 + 1);
            }
            WhileRepeating(() => { GC.Collect(); Thread.Sleep(2); }, () => OnThreads(threadCount, seed =>
            {
                for (int i = 0; i < perThread; i++)
                {
                    var a = new AuthorizationArgs();
                    a.SetClientId((ulong)i);
                    if ((i + seed) % 2 == 0)
                    {
                        if (a.ClientId() != (ulong)i)
                        {
                            throw new Exception("ClientId mismatch in churn");
                        }
                        a.Dispose();
                    }
                    else
                    {
                        weak[seed].Add(new WeakReference(a));
                    }
                }
            }));
            var tracked = new List<WeakReference>();
            foreach (var list in weak)
            {
                tracked.AddRange(list);
            }
            ExpectReleased(before, tracked, "after the churn");
        });
    }

    // Makes n objects of several classes and forgets them.
    static void MakeGarbage(int n, List<WeakReference> tracked)
    {
        for (int i = 0; i < n; i++)
        {
            var a = new AuthorizationArgs();
            a.SetScopes("garbage");
            var o = new ClientCreateOptions();
            var ch = new AuthorizationCodeChallenge();
            a.SetCodeChallenge(ch);
            var copy = a.CodeChallenge();
            tracked.Add(new WeakReference(a));
            tracked.Add(new WeakReference(o));
            tracked.Add(new WeakReference(ch));
            tracked.Add(new WeakReference(copy));
        }
    }

    // Run with the normal binding: a wrong Sdkpp_AbiInfo given to the library is refused, and from
    // then on the library creates no objects.
    static void AbiRefuseTests()
    {
        ulong before = 0;
        Test("abi: the binding's own check passes and objects work before a mismatch", () =>
        {
            Sdk.CheckAbi();
            using (var a = new AuthorizationArgs())
            {
                a.SetScopes("before");
                Eq("before", a.Scopes(), "a working object");
            }
            before = Sdk.GetObjectCount();
        });

        Test("abi: Sdkpp_CheckAbi accepts the library's own view", () =>
        {
            var info = Raw.LibraryView();
            Check(Raw.Sdkpp_CheckAbi(ref info), "the matching AbiInfo is accepted");
        });

        Test("abi: Sdkpp_CheckAbi refuses a wrong abiVersion", () =>
        {
            var info = Raw.LibraryView();
            info.abiVersion ^= 0x5A5A5A5A;
            Check(!Raw.Sdkpp_CheckAbi(ref info), "a wrong abiVersion is refused");
        });

        Test("abi: Sdkpp_CheckAbi refuses a wrong struct size", () =>
        {
            var info = Raw.LibraryView();
            info.sizeofString = 12;
            Check(!Raw.Sdkpp_CheckAbi(ref info), "a wrong sizeofString is refused");
        });

        Test("abi: after a refused check, creating an object yields an invalid one", () =>
        {
            using (var a = new AuthorizationArgs())
            {
                Eq(before, Sdk.GetObjectCount(), "no object was created");
                a.SetScopes("after");
                Eq("", a.Scopes(), "the invalid object returns defaults");
                Check(a.Clone() == null, "Clone of the invalid object");
            }
            using (var c = new Client())
            {
                Eq(0, c.GetHttpRequestTimeout(), "an invalid Client");
                bool called = false;
                c.IsDiscordAppInstalled(x => called = true);
                Sdk.RunCallbacks();
                Check(!called, "no callback");
                Eq(0, Sdk.GetPendingCallbackCount(), "the callback was freed");
            }
            IntPtr id = IntPtr.Zero;
            Raw.Sdkpp_AuthorizationArgs_Init(ref id);
            Eq(IntPtr.Zero, id, "the raw Init is refused too");
        });

        Test("abi: Sdk.Shutdown lifts the refusal (an editor need not restart after a mismatch)", () =>
        {
            Sdk.Shutdown();
            using (var a = new AuthorizationArgs())
            {
                Eq(1UL, Sdk.GetObjectCount(), "an object again");
                a.SetScopes("after shutdown");
                Eq("after shutdown", a.Scopes(), "it works");
            }
            Eq(0UL, Sdk.GetObjectCount(), "dropped");
        });
    }

    // Run against a binding compiled with a wrong SDKPP_ABI_VERSION (see run.sh).
    static void AbiBindingMismatchTests()
    {
        Test("abi: this binding really has a wrong fingerprint", () =>
        {
            Check(Sdk.BindingAbiVersion != Raw.Sdkpp_GetAbiVersion(), "binding " + Sdk.BindingAbiVersion + " vs library " + Raw.Sdkpp_GetAbiVersion());
        });

        Test("abi: the first object creation throws SdkppAbiException with a clear message", () =>
        {
            try
            {
                new AuthorizationArgs().Dispose();
                throw new Exception("no SdkppAbiException");
            }
            catch (SdkppAbiException e)
            {
                Check(e.Message.Contains("does not match the native library"), "message: " + e.Message);
                Check(e.Message.Contains(Raw.Sdkpp_GetAbiVersion().ToString()), "the message names the library's ABI: " + e.Message);
            }
        });

        Test("abi: every later entry point throws SdkppAbiException too", () =>
        {
            Throws<SdkppAbiException>(() => new Client(), "new Client()");
            Throws<SdkppAbiException>(() => Client.GetDefaultCommunicationScopes(), "a static method");
            Throws<SdkppAbiException>(() => Sdk.RunCallbacks(), "Sdk.RunCallbacks");
            Throws<SdkppAbiException>(() => Sdk.CheckAbi(), "Sdk.CheckAbi");
        });

        Test("abi: the library refuses to create objects after the mismatch", () =>
        {
            ulong before = Raw.Sdkpp_GetObjectCount();
            IntPtr id = IntPtr.Zero;
            Raw.Sdkpp_AuthorizationArgs_Init(ref id);
            Eq(IntPtr.Zero, id, "Init is refused");
            Eq(before, Raw.Sdkpp_GetObjectCount(), "object count");
        });
    }
}
