// Sdk.Shutdown: "play mode" twice in one process, as a Unity editor runs it across a domain reload.
// Run in a process of its own (run.sh: SdkppTests.exe play-mode): Shutdown drops every object.
using System;
using System.Collections.Generic;
using System.Threading;
using Sdkpp;

static partial class Program
{
    static void PlayModeTests()
    {
        // What the first round's callbacks did, after Shutdown: nothing may reach them.
        int lateFirstRound = 0;
        bool shuttingDown = false;

        Test("play mode 1: Shutdown fires pending one-shots once with ClientDestroyed, on this thread, and drops everything", () =>
        {
            var clients = new List<Client>();
            var results = new List<ErrorType>();
            var threads = new List<int>();
            ClientResult kept = null;
            for (int i = 0; i < 3; i++)
            {
                var c = new Client();
                c.AddLogCallback((m, s) => { if (!shuttingDown) { lateFirstRound++; } }, LoggingSeverity.Error);
                c.SetStatusChangedCallback((status, error, detail) => lateFirstRound++);
                c.OpenConnectedGamesSettingsInPlatform(r =>
                {
                    results.Add(r.Type());
                    threads.Add(Thread.CurrentThread.ManagedThreadId);
                    kept = r; // not disposed: Shutdown drops it
                });
                clients.Add(c);
            }
            Sdk.SetLogCallback((m, s) => { if (!shuttingDown) { lateFirstRound++; } }, LoggingSeverity.Verbose);
            var args = new AuthorizationArgs();
            args.SetScopes(Client.GetDefaultCommunicationScopes());
            Check(Sdk.GetObjectCount() >= 4, "objects made");
            Check(Sdk.GetPendingCallbackCount() >= 10, "callbacks registered");

            shuttingDown = true;
            Sdk.Shutdown();
            shuttingDown = false;

            Eq(3, results.Count, "every one-shot fired once, inside Shutdown");
            foreach (ErrorType t in results)
            {
                Eq(ErrorType.ClientDestroyed, t, "the one-shot's result");
            }
            foreach (int t in threads)
            {
                Eq(mainThread, t, "the thread that called Shutdown");
            }
            Eq(0UL, Sdk.GetObjectCount(), "object count after Shutdown");
            Eq(0, Sdk.GetPendingCallbackCount(), "callbacks the library may still call");
            Throws<ObjectDisposedException>(() => clients[0].GetApplicationId(), "a Client after Shutdown");
            Throws<ObjectDisposedException>(() => args.Scopes(), "AuthorizationArgs after Shutdown");
            Throws<ObjectDisposedException>(() => kept.Type(), "a result given to a callback, after Shutdown");
            foreach (Client c in clients)
            {
                c.Dispose(); // harmless: the library dropped it already
            }
            args.Dispose();
            Eq(0UL, Sdk.GetObjectCount(), "object count after disposing the dead objects");
        });

        Test("play mode 2: a new round works, and nothing of the first reaches it", () =>
        {
            Collect(); // the first round's garbage is finalized: its drops must not touch the new objects
            int statusCalls = 0, results = 0;
            using (var c = new Client())
            {
                c.SetStatusChangedCallback((status, error, detail) => statusCalls++);
                Eq(30000, c.GetHttpRequestTimeout(), "a new Client works");
                c.OpenConnectedGamesSettingsInPlatform(r =>
                {
                    using (r)
                    {
                        results++;
                        Eq(ErrorType.ClientNotReady, r.Type(), "the second round's result");
                    }
                });
                RunCallbacks();
                Collect();
                RunCallbacks();
                Eq(1, results, "the second round's one-shot");
                Eq(1UL, Sdk.GetObjectCount(), "only the new Client");
            }
            RunCallbacks();
            Eq(0, lateFirstRound, "callbacks of the first round called after Shutdown");
            Eq(0UL, Sdk.GetObjectCount(), "object count at the end of round 2");
            Eq(0, Sdk.GetPendingCallbackCount(), "callbacks at the end of round 2");
        });

        Test("play mode 3: Shutdown again with nothing alive, then again with a live Client", () =>
        {
            Sdk.Shutdown();
            var c = new Client();
            bool called = false;
            c.IsDiscordAppInstalled(installed => called = true);
            Sdk.Shutdown();
            Check(called, "the pending one-shot ran inside Shutdown");
            Eq(0UL, Sdk.GetObjectCount(), "object count");
            Eq(0, Sdk.GetPendingCallbackCount(), "pending callbacks");
            Throws<ObjectDisposedException>(() => c.IsDiscordAppInstalled(installed => { }), "the old Client");
        });
    }
}
