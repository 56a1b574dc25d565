// Events over the SetXCallback slots: += and -=, several handlers, removed handlers neither
// called nor kept.
using System;
using System.Collections.Generic;
using System.Threading;
using Sdkpp;

static partial class Program
{
    static void EventTests()
    {
        Test("events: several handlers in order; -= stops one and lets what it captured be collected", () =>
        {
            using (var c = new Client())
            {
                var got = new List<string>();
                Client.OnStatusChanged first = (s, e, d) => got.Add("first " + s + " " + e);
                c.StatusChanged += first;
                WeakReference captured = null;
                // On a thread of its own, so that no stale slot of this thread's stack keeps it alive.
                var t = new Thread(() => captured = SubscribeAndRemove(c, got));
                t.Start();
                t.Join();
                c.StatusChanged += (s, e, d) => got.Add("second");

                c.Connect(); // no token: Disconnected with ConnectionFailed
                RunCallbacks();
                Eq(2, got.Count, "both handlers, once each");
                Eq("first Disconnected ConnectionFailed", got[0], "the first handler");
                Eq("second", got[1], "the second handler, after the first");

                c.StatusChanged -= first;
                c.Connect();
                RunCallbacks();
                Eq(3, got.Count, "only the remaining handler");
                Eq("second", got[2], "the remaining handler");

                Collect();
                Check(!captured.IsAlive, "what the removed handler captured was collected");
                Check(!got.Contains("removed"), "the removed handler was never called");
            }
            RunCallbacks();
            Eq(0, Sdk.GetPendingCallbackCount(), "the dispatcher was released with the Client");
        });

        Test("events: a subscribed event does not keep its Client alive (the dispatcher holds only the handlers)", () =>
        {
            WeakReference client = null;
            var t = new Thread(() =>
            {
                var c = new Client();
                c.StatusChanged += (s, e, d) => { };
                client = new WeakReference(c);
            });
            t.Start();
            t.Join();
            Collect();
            Check(!client.IsAlive, "the Client was collected");
            RunCallbacks(); // the finalizer dropped it: its dispatcher is released
            Eq(0, Sdk.GetPendingCallbackCount(), "the dispatcher was released");
        });

        Test("events: += on a disposed object throws ObjectDisposedException and keeps nothing", () =>
        {
            var c = new Client();
            c.Dispose();
            Throws<ObjectDisposedException>(() => c.StatusChanged += (s, e, d) => { }, "StatusChanged +=");
            Eq(0, Sdk.GetPendingCallbackCount(), "nothing registered");
        });
    }

    // Subscribes a handler that captures an object (as a game's handler captures its MonoBehaviour),
    // removes it, and returns a weak reference to the captured object.
    static WeakReference SubscribeAndRemove(Client c, List<string> got)
    {
        var owner = new object[] { "a scene object" };
        Client.OnStatusChanged h = (s, e, d) => got.Add("removed " + owner.Length);
        c.StatusChanged += h;
        c.StatusChanged -= h;
        return new WeakReference(owner);
    }
}
