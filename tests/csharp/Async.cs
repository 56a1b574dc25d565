// The Task forms of one-shot calls, without the service: results, the opt-in exception, the
// thread continuations run on, and cancellation through the SDK's abort call.
using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using Sdkpp;

static partial class Program
{
    static void AsyncTests()
    {
        Test("async: the task completes inside RunCallbacks and the await continues on its thread", () =>
        {
            using (var c = new Client())
            {
                var trace = new List<string>();
                Task<int> flow = AwaitNotReady(c, trace);
                Check(!flow.IsCompleted, "not before RunCallbacks");
                RunCallbacks(); // the first await continues, and makes the second call
                Check(!flow.IsCompleted, "the second call is queued for the next RunCallbacks");
                RunCallbacks();
                Check(flow.IsCompleted, "completed by RunCallbacks");
                Eq(mainThread, flow.Result, "the continuation's thread");
                Eq("ClientNotReady,False,SdkException", string.Join(",", trace), "the result and the opt-in exception");
            }
        });

        Test("async: a Task form on a disposed Client throws ObjectDisposedException at once", () =>
        {
            var c = new Client();
            c.Dispose();
            Throws<ObjectDisposedException>(() => c.OpenConnectedGamesSettingsInPlatformAsync(), "OpenConnectedGamesSettingsInPlatformAsync");
        });

        Test("async: the task of a Client disposed first completes with ClientDestroyed", () =>
        {
            var c = new Client();
            Task<SdkResult> t = c.OpenConnectedGamesSettingsInPlatformAsync();
            c.Dispose();
            RunCallbacks();
            Check(t.IsCompleted, "completed");
            Eq(ErrorType.ClientDestroyed, t.Result.Type, "Type");
            Eq(0, Sdk.GetPendingCallbackCount(), "released");
        });

        Test("async: cancelling AuthorizeAsync's token calls AbortAuthorize: the result is Aborted", () =>
        {
            using (var c = new Client())
            using (var args = new AuthorizationArgs())
            using (var cts = new CancellationTokenSource())
            {
                c.SetApplicationId(1234);
                c.SetOpenUrlCallback(url => { }); // no browser: the flow waits for a redirect
                args.SetScopes("openid");
                Task<Client.AuthorizationResult> t = c.AuthorizeAsync(args, cts.Token);
                RunCallbacks();
                Check(!t.IsCompleted, "waiting for the browser" + (t.IsCompleted ? ", not " + t.Result : ""));
                cts.Cancel();
                for (int i = 0; i < 500 && !t.IsCompleted; i++)
                {
                    Sdk.WaitForCallbacks(TimeSpan.FromMilliseconds(20));
                    RunCallbacks();
                }
                Check(t.IsCompleted, "completed after the cancel");
                Eq(ErrorType.Aborted, t.Result.Type, "Type");
                Eq("", t.Result.Code, "no code");
            }
        });
    }

    // Awaits a call that fails with ClientNotReady, then the same with ThrowIfFailed; returns the
    // thread the continuations ran on.
    static async Task<int> AwaitNotReady(Client c, List<string> trace)
    {
        SdkResult r = await c.OpenConnectedGamesSettingsInPlatformAsync();
        int thread = Thread.CurrentThread.ManagedThreadId;
        trace.Add(r.Type.ToString());
        trace.Add(r.Successful.ToString());
        try
        {
            (await c.OpenConnectedGamesSettingsInPlatformAsync()).ThrowIfFailed();
        }
        catch (SdkException e)
        {
            trace.Add("SdkException");
            if (e.Result.Type != ErrorType.ClientNotReady || thread != Thread.CurrentThread.ManagedThreadId)
            {
                trace.Add("wrong: " + e.Result.Type);
            }
        }
        return thread;
    }
}
