// The guard against the signal-stack and GC-interaction class of crashes (anchors.md section 3):
// several threads call into the Go library and receive callbacks from it while Mono's GC and
// finalizers run and Go collects aggressively (run.sh starts this process with GOGC=5).
using System;
using System.Collections.Generic;
using System.Threading;
using Sdkpp;

static partial class Program
{
    static void StressTests()
    {
        Test("stress: 4 threads of calls, callbacks and Client churn under GC pressure on both sides", () =>
        {
            Collect();
            ulong before = Sdk.GetObjectCount();
            const int threadCount = 4;
            var deadline = DateTime.UtcNow.AddSeconds(8);
            long requested = 0, fired = 0, operations = 0;
            var tracked = new List<WeakReference>();
            WhileRepeating(() => { GC.Collect(); GC.WaitForPendingFinalizers(); Thread.Sleep(1); }, () => OnThreads(threadCount, seed =>
            {
                var rnd = new Random(seed);
                var client = new Client();
                try
                {
                    for (int i = 0; DateTime.UtcNow < deadline; i++)
                    {
                        // Allocate, echo a string through Go, free.
                        var a = new AuthorizationArgs();
                        string s = "scope-" + rnd.Next() + "-\u00e9\u20ac";
                        a.SetScopes(s);
                        if (a.Scopes() != s)
                        {
                            throw new Exception("string echo mismatch");
                        }
                        if (i % 3 == 0)
                        {
                            lock (tracked)
                            {
                                tracked.Add(new WeakReference(a)); // left to the finalizer
                            }
                        }
                        else
                        {
                            a.Dispose();
                        }
                        // Go calls back into a static MonoPInvokeCallback trampoline.
                        Interlocked.Increment(ref requested);
                        client.IsDiscordAppInstalled(installed => Interlocked.Increment(ref fired));
                        if (i % 16 == 0)
                        {
                            Sdk.RunCallbacks();
                        }
                        if (i % 500 == 499)
                        {
                            client.Dispose(); // pending callbacks still fire, as destroyed
                            client = new Client();
                        }
                        Interlocked.Increment(ref operations);
                    }
                }
                finally
                {
                    client.Dispose();
                }
            }));
            for (int k = 0; k < 100 && Interlocked.Read(ref fired) < requested; k++)
            {
                Sdk.RunCallbacks();
            }
            Console.WriteLine("  note: " + Interlocked.Read(ref operations) + " iterations, " + fired + " callbacks");
            Check(Interlocked.Read(ref operations) > 1000, "the stress ran");
            Eq(Interlocked.Read(ref requested), Interlocked.Read(ref fired), "every one-shot fired exactly once");
            Eq(0, Sdk.GetPendingCallbackCount(), "every callback's user data was freed");
            ExpectReleased(before, tracked, "after the stress");
        });

        // Mono stops the world by suspending threads that are in native code wherever they are, and
        // retries a thread found outside its own stack (on a goroutine stack) until it is not. Two
        // threads inside Go could hang that for ever: one suspended while it holds a Go runtime lock
        // (a contended mutex's semaphore lock, held into the scheduler), the other waiting for it
        // on its goroutine stack. Many threads contending for one Go mutex (the object table) while
        // collections run back to back hung 2 of 12 runs of this process on a loaded 2-core machine
        // before the binding let one thread at a time into the library (Gate in Runtime.cs). A hang
        // stops every managed thread, so nothing here can report it: it ends in run.sh's timeout.
        Test("stress: 8 threads contend inside the library while the GC stops the world back to back", () =>
        {
            Collect();
            ulong before = Sdk.GetObjectCount();
            const int threadCount = 8;
            var deadline = DateTime.UtcNow.AddSeconds(6);
            long operations = 0, collections = 0;
            WhileRepeating(() => { GC.Collect(0); Interlocked.Increment(ref collections); }, () => OnThreads(threadCount, seed =>
            {
                for (ulong i = 0; DateTime.UtcNow < deadline; i++)
                {
                    using (var a = new AuthorizationArgs())
                    {
                        a.SetClientId(i);
                        if (a.ClientId() != i)
                        {
                            throw new Exception("ClientId mismatch");
                        }
                    }
                    Interlocked.Increment(ref operations);
                }
            }));
            Console.WriteLine("  note: " + Interlocked.Read(ref operations) + " objects, " + Interlocked.Read(ref collections) + " collections");
            Check(Interlocked.Read(ref operations) > 1000, "the stress ran");
            Check(Interlocked.Read(ref collections) > 100, "the collections ran");
            Eq(before, Sdk.GetObjectCount(), "every object was dropped");
        });
    }
}
