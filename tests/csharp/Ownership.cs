// Getters that hand the caller new native objects have Copy forms, as EOS names them; and no type
// of the binding has the name of a System type (HttpStatusCode of the API reference is HttpStatus).
//
// System.Net is imported with Sdkpp on purpose: with the API reference's name this file would not
// compile, HttpStatusCode being ambiguous between the two namespaces.
using System;
using System.Collections.Generic;
using System.Linq;
using System.Net;
using System.Reflection;
using System.Threading;
using Sdkpp;

static partial class Program
{
    // The getters that hand over ownership and the Copy forms the tests expect at least.
    static readonly string[] someCopyForms = {
        "AuthorizationCodeVerifier.CopyChallenge", "AuthorizationArgs.CopyCodeChallenge", "Activity.CopyAssets",
        "Activity.CopyButtons", "MessageHandle.CopyAuthor", "MessageHandle.CopyRecipient", "LobbyHandle.CopyLobbyMembers",
        "LobbyHandle.CopyLobbyMemberHandle", "Client.CopyUser", "Client.CopyLobbyHandle", "Client.CopyCurrentUserV2",
        "Client.CopyRelationships", "Call.CopyVADThreshold",
    };

    // Owned says whether a method's result is new objects of the binding that the caller disposes.
    static bool Owned(Type t)
    {
        if (t.IsArray)
        {
            t = t.GetElementType();
        }
        return t.Assembly == typeof(Client).Assembly && typeof(IDisposable).IsAssignableFrom(t);
    }

    static void OwnershipTests()
    {
        Test("Copy forms: each getter that hands over new objects has one, with its parameters and result", () =>
        {
            var copies = new List<string>();
            foreach (Type t in typeof(Client).Assembly.GetExportedTypes())
            {
                foreach (MethodInfo m in t.GetMethods(BindingFlags.Public | BindingFlags.Instance | BindingFlags.DeclaredOnly))
                {
                    // Properties (the outputs of the Task forms' results) are not getters of the library.
                    if (m.IsSpecialName || !Owned(m.ReturnType) || m.Name == "Clone" || m.Name.StartsWith("Create"))
                    {
                        continue;
                    }
                    Type[] ps = m.GetParameters().Select(p => p.ParameterType).ToArray();
                    if (m.Name.StartsWith("Copy"))
                    {
                        copies.Add(t.Name + "." + m.Name);
                        string rest = m.Name.Substring("Copy".Length);
                        MethodInfo api = t.GetMethod(rest, ps) ?? t.GetMethod("Get" + rest, ps);
                        Check(api != null, t.Name + "." + m.Name + " has the getter of the API reference beside it");
                        Eq(m.ReturnType, api.ReturnType, t.Name + "." + api.Name + " returns what " + m.Name + " returns");
                        continue;
                    }
                    if (m.Name.StartsWith("Get") || ps.Length == 0)
                    {
                        string copy = "Copy" + (m.Name.StartsWith("Get") ? m.Name.Substring(3) : m.Name);
                        Check(t.GetMethod(copy, ps) != null, t.Name + "." + m.Name + " hands over new objects: it has " + copy);
                    }
                }
            }
            foreach (string want in someCopyForms)
            {
                Check(copies.Contains(want), want + " exists");
            }
        });

        Test("Copy forms: verifier.CopyChallenge() and Challenge() each give a new object the caller owns", () =>
        {
            using (var client = new Client())
            using (var verifier = client.CreateAuthorizationCodeVerifier())
            {
                ulong before = Sdk.GetObjectCount();
                var copy = verifier.CopyChallenge();
                var same = verifier.Challenge();
                Eq(before + 2, Sdk.GetObjectCount(), "two new objects");
                Check(!ReferenceEquals(copy, same), "separate wrappers");
                Eq(same.Challenge(), copy.Challenge(), "the same challenge");
                copy.Dispose();
                Eq(before + 1, Sdk.GetObjectCount(), "disposing the copy drops it alone");
                Throws<ObjectDisposedException>(() => copy.Challenge(), "the disposed copy");
                Eq(verifier.Verifier().Length > 0, true, "the verifier is untouched");
                same.Dispose();
                Eq(before, Sdk.GetObjectCount(), "both dropped");
            }
        });

        Test("Copy forms: CopyAssets of an Activity is a copy; disposing it leaves the activity's", () =>
        {
            using (var activity = new Activity())
            using (var assets = new ActivityAssets())
            {
                assets.SetLargeImage("cover");
                activity.SetAssets(assets);
                using (var a = activity.CopyAssets())
                using (var b = activity.CopyAssets())
                {
                    Check(!ReferenceEquals(a, b), "each call a new object");
                    a.SetLargeImage("changed");
                    Eq("cover", b.LargeImage(), "a copy, not the activity's own");
                }
                using (var c = activity.Assets())
                {
                    Eq("cover", c.LargeImage(), "the activity keeps its assets");
                }
                Eq(null, activity.CopyTimestamps(), "an absent value is null");
            }
        });

        Test("Copy forms: a result never disposed is released by its finalizer", () =>
        {
            using (var client = new Client())
            using (var verifier = client.CreateAuthorizationCodeVerifier())
            {
                ulong before = Sdk.GetObjectCount();
                var tracked = new List<WeakReference>();
                // On a thread of its own, so that no stale slot of this thread's stack keeps one alive.
                var t = new Thread(() =>
                {
                    for (int i = 0; i < 100; i++)
                    {
                        tracked.Add(new WeakReference(verifier.CopyChallenge()));
                    }
                });
                t.Start();
                t.Join();
                ExpectReleased(before, tracked, "undisposed Copy results");
            }
        });

        Test("HttpStatus: HttpStatusCode of the API reference, beside System.Net.HttpStatusCode", () =>
        {
            // Both unqualified, with both namespaces imported (see the top of this file).
            Eq((int)HttpStatusCode.TooManyRequests, (int)HttpStatus.TooManyRequests, "the same code as System.Net's");
            Eq(typeof(HttpStatus), typeof(SdkResult).GetProperty("Status").PropertyType, "SdkResult.Status");
        });

        Test("no type of the binding has the name of a public System type", () =>
        {
            var system = new HashSet<string>();
            foreach (Assembly a in new[] { typeof(object).Assembly, typeof(Uri).Assembly, typeof(Enumerable).Assembly })
            {
                foreach (Type t in a.GetExportedTypes())
                {
                    if (t.Namespace != null && (t.Namespace == "System" || t.Namespace.StartsWith("System.")))
                    {
                        system.Add(t.Name);
                    }
                }
            }
            Check(system.Contains("HttpStatusCode"), "the System types are listed");
            var clashes = typeof(Client).Assembly.GetExportedTypes().Where(t => !t.IsNested && system.Contains(t.Name))
                .Select(t => t.Name).ToList();
            Eq("", string.Join(", ", clashes), "types named as a System type");
        });
    }
}
