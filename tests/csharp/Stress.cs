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
            var errors = new List<Exception>();
            var tracked = new List<WeakReference>();
            bool done = false;
            var gc = new Thread(() =>
            {
                while (!Volatile.Read(ref done))
                {
                    GC.Collect();
                    GC.WaitForPendingFinalizers();
                    Thread.Sleep(1);
                }
            });
            gc.Start();
            var threads = new Thread[threadCount];
            for (int t = 0; t < threadCount; t++)
            {
                int seed = t;
                threads[t] = new Thread(() =>
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
                    catch (Exception e)
                    {
                        lock (errors)
                        {
                            errors.Add(e);
                        }
                    }
                    finally
                    {
                        client.Dispose();
                    }
                });
                threads[t].Start();
            }
            foreach (var t in threads)
            {
                t.Join();
            }
            Volatile.Write(ref done, true);
            gc.Join();
            if (errors.Count > 0)
            {
                throw errors[0];
            }
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
    }
}
