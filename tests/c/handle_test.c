/* The handle contract and round trips of the C ABI, against the real library. */
#include "sdkpp.h"
#include "check.h"

#include <pthread.h>
#include <stdlib.h>

static Sdkpp_String str(const char* s) { return (Sdkpp_String){(uint8_t*)s, strlen(s)}; }

/* Counts calls of the test callbacks and of the userData free function. */
struct probe {
    int calls;
    int frees;
    bool installed;
    pthread_t thread;
    Sdkpp_ErrorType resultType;
    char lastLog[4096];
};

static void SDKPP_CALL probe_free(void* p) { ((struct probe*)p)->frees++; }

static void SDKPP_CALL on_installed(bool installed, void* ud)
{
    struct probe* p = ud;
    p->calls++;
    p->installed = installed;
    p->thread = pthread_self();
}

static void SDKPP_CALL on_result(Sdkpp_ClientResult* result, void* ud)
{
    struct probe* p = ud;
    p->calls++;
    p->thread = pthread_self();
    p->resultType = Sdkpp_ClientResult_Type(result);
    Sdkpp_ClientResult_Drop(result); /* the receiver adopts the result */
}

static void SDKPP_CALL on_log(Sdkpp_String message, Sdkpp_LoggingSeverity severity, void* ud)
{
    struct probe* p = ud;
    (void)severity;
    p->calls++;
    p->thread = pthread_self();
    size_t n = message.size < sizeof p->lastLog - 1 ? message.size : sizeof p->lastLog - 1;
    memcpy(p->lastLog, message.ptr, n);
    p->lastLog[n] = 0;
    Sdkpp_Free(message.ptr); /* strings given to a callback belong to it */
}

static void test_abi(void)
{
    Sdkpp_AbiInfo info = SDKPP_ABI_INFO_INIT;
    CHECK(Sdkpp_CheckAbi(&info));
    CHECK(Sdkpp_GetVersion() == SDKPP_VERSION);
    CHECK(Sdkpp_GetAbiVersion() == SDKPP_ABI_VERSION);
}

/* rule AA-1, AA-6, AA-7 (the local parts): every AuthorizationArgs property round-trips. */
static void test_authorization_args(void)
{
    Sdkpp_AuthorizationArgs a;
    Sdkpp_AuthorizationArgs_Init(&a);
    CHECK(a.opaque != NULL);

    CHECK(Sdkpp_AuthorizationArgs_ClientId(&a) == 0); /* rule AA-1: unset is 0, the Client's id is used */
    Sdkpp_AuthorizationArgs_SetClientId(&a, 1234567890123ULL);
    CHECK(Sdkpp_AuthorizationArgs_ClientId(&a) == 1234567890123ULL);

    /* UTF-8 with an embedded NUL survives byte for byte. */
    static const char scopes[] = "openid sdk.social_layer \xC3\xA9\xE2\x82\xAC\xF0\x9F\x8E\xAE\0after-nul";
    Sdkpp_AuthorizationArgs_SetScopes(&a, (Sdkpp_String){(uint8_t*)scopes, sizeof scopes - 1});
    Sdkpp_String out = {0};
    Sdkpp_AuthorizationArgs_Scopes(&a, &out);
    CHECK_STR(out, scopes, sizeof scopes - 1);

    /* A 1 MiB string. */
    size_t big = 1 << 20;
    char* mib = malloc(big);
    for (size_t i = 0; i < big; i++) mib[i] = (char)('a' + i % 26);
    Sdkpp_AuthorizationArgs_SetScopes(&a, (Sdkpp_String){(uint8_t*)mib, big});
    Sdkpp_AuthorizationArgs_Scopes(&a, &out);
    CHECK_STR(out, mib, big);
    free(mib);

    /* Optional strings: absent, set, cleared with NULL. */
    CHECK(!Sdkpp_AuthorizationArgs_State(&a, &out));
    Sdkpp_String state = str("state-123");
    Sdkpp_AuthorizationArgs_SetState(&a, &state);
    CHECK(Sdkpp_AuthorizationArgs_State(&a, &out));
    CHECK_STR(out, "state-123", 9);
    Sdkpp_AuthorizationArgs_SetState(&a, NULL);
    CHECK(!Sdkpp_AuthorizationArgs_State(&a, &out));

    Sdkpp_String nonce = str("n0nce");
    Sdkpp_AuthorizationArgs_SetNonce(&a, &nonce);
    CHECK(Sdkpp_AuthorizationArgs_Nonce(&a, &out));
    CHECK_STR(out, "n0nce", 5);

    /* rule AA-6: IntegrationType is an optional enum. */
    Sdkpp_IntegrationType it;
    CHECK(!Sdkpp_AuthorizationArgs_IntegrationType(&a, &it));
    Sdkpp_IntegrationType user = Sdkpp_IntegrationType_UserInstall;
    Sdkpp_AuthorizationArgs_SetIntegrationType(&a, &user);
    CHECK(Sdkpp_AuthorizationArgs_IntegrationType(&a, &it) && it == Sdkpp_IntegrationType_UserInstall);

    /* rule AA-7: the custom scheme. */
    Sdkpp_String scheme = str("mygame");
    Sdkpp_AuthorizationArgs_SetCustomSchemeParam(&a, &scheme);
    CHECK(Sdkpp_AuthorizationArgs_CustomSchemeParam(&a, &out));
    CHECK_STR(out, "mygame", 6);

    /* An optional object is copied in and out. */
    Sdkpp_AuthorizationCodeChallenge ch;
    Sdkpp_AuthorizationCodeChallenge_Init(&ch);
    Sdkpp_AuthorizationCodeChallenge_SetChallenge(&ch, str("challenge-abc"));
    Sdkpp_AuthorizationArgs_SetCodeChallenge(&a, &ch);
    Sdkpp_AuthorizationCodeChallenge_SetChallenge(&ch, str("changed-after"));
    Sdkpp_AuthorizationCodeChallenge got;
    CHECK(Sdkpp_AuthorizationArgs_CodeChallenge(&a, &got));
    Sdkpp_AuthorizationCodeChallenge_Challenge(&got, &out);
    CHECK_STR(out, "challenge-abc", 13);
    CHECK(Sdkpp_AuthorizationCodeChallenge_Method(&got) == Sdkpp_AuthenticationCodeChallengeMethod_S256);
    Sdkpp_AuthorizationCodeChallenge_Drop(&got);
    Sdkpp_AuthorizationCodeChallenge_Drop(&ch);

    /* rule OBJ-1: Clone is a deep copy. */
    Sdkpp_AuthorizationArgs b;
    Sdkpp_AuthorizationArgs_Clone(&b, &a);
    CHECK(b.opaque != NULL && b.opaque != a.opaque);
    Sdkpp_AuthorizationArgs_SetClientId(&b, 7);
    Sdkpp_AuthorizationArgs_SetNonce(&b, NULL);
    CHECK(Sdkpp_AuthorizationArgs_ClientId(&a) == 1234567890123ULL);
    CHECK(Sdkpp_AuthorizationArgs_Nonce(&a, &out));
    Sdkpp_Free(out.ptr);
    CHECK(!Sdkpp_AuthorizationArgs_Nonce(&b, &out));

    /* Drop zeroes the handle. */
    Sdkpp_AuthorizationArgs_Drop(&b);
    CHECK(b.opaque == NULL);
    Sdkpp_AuthorizationArgs_Drop(&a);
}

/* rule SC-1, SC-2, LIM-3, OPT-1 */
static void test_client_basics(void)
{
    Sdkpp_String out = {0};
    Sdkpp_Client_GetDefaultCommunicationScopes(&out);
    CHECK_STR(out, "openid sdk.social_layer", 23); /* rule SC-1 */
    Sdkpp_Client_GetDefaultPresenceScopes(&out);
    CHECK_STR(out, "openid sdk.social_layer_presence", 32); /* rule SC-2 */
    CHECK(Sdkpp_Client_GetVersionMajor() == SDKPP_VERSION_MAJOR);
    CHECK(Sdkpp_Client_GetVersionMinor() == SDKPP_VERSION_MINOR);
    Sdkpp_Client_StatusToString(Sdkpp_Client_Status_Ready, &out);
    CHECK_STR(out, "Ready", 5);

    /* rule OPT-1: the three create options. */
    Sdkpp_ClientCreateOptions o;
    Sdkpp_ClientCreateOptions_Init(&o);
    CHECK(Sdkpp_ClientCreateOptions_ExperimentalAudioSystem(&o) == Sdkpp_AudioSystem_Standard);
    Sdkpp_ClientCreateOptions_SetExperimentalAudioSystem(&o, Sdkpp_AudioSystem_Game);
    Sdkpp_ClientCreateOptions_SetExperimentalAndroidPreventCommsForBluetooth(&o, true);
    uint64_t mask = 0x3;
    Sdkpp_ClientCreateOptions_SetCpuAffinityMask(&o, &mask);
    uint64_t gotMask = 0;
    CHECK(Sdkpp_ClientCreateOptions_ExperimentalAudioSystem(&o) == Sdkpp_AudioSystem_Game);
    CHECK(Sdkpp_ClientCreateOptions_ExperimentalAndroidPreventCommsForBluetooth(&o));
    CHECK(Sdkpp_ClientCreateOptions_CpuAffinityMask(&o, &gotMask) && gotMask == 3);

    Sdkpp_Client c;
    Sdkpp_Client_InitWithOptions(&c, &o);
    Sdkpp_ClientCreateOptions_Drop(&o);
    CHECK(c.opaque != NULL);
    CHECK(Sdkpp_Client_GetStatus(&c) == Sdkpp_Client_Status_Disconnected);
    CHECK(Sdkpp_Client_GetApplicationId(&c) == 0);
    Sdkpp_Client_SetApplicationId(&c, 42);
    CHECK(Sdkpp_Client_GetApplicationId(&c) == 42);
    CHECK(Sdkpp_Client_GetHttpRequestTimeout(&c) == 30000); /* rule LIM-3: the default */
    Sdkpp_Client_SetHttpRequestTimeout(&c, 1500);
    CHECK(Sdkpp_Client_GetHttpRequestTimeout(&c) == 1500);

    /* PKCE: a 43+ character verifier and its S256 challenge (rule AA-5, local part). */
    Sdkpp_AuthorizationCodeVerifier v;
    Sdkpp_Client_CreateAuthorizationCodeVerifier(&c, &v);
    Sdkpp_String verifier = {0};
    Sdkpp_AuthorizationCodeVerifier_Verifier(&v, &verifier);
    CHECK(verifier.size >= 43);
    Sdkpp_AuthorizationCodeChallenge ch;
    Sdkpp_AuthorizationCodeVerifier_Challenge(&v, &ch);
    Sdkpp_AuthorizationCodeChallenge_Challenge(&ch, &out);
    CHECK(out.size == 43 && memcmp(out.ptr, verifier.ptr, 43) != 0);
    Sdkpp_Free(out.ptr);
    Sdkpp_Free(verifier.ptr);
    Sdkpp_AuthorizationCodeChallenge_Drop(&ch);
    Sdkpp_AuthorizationCodeVerifier_Drop(&v);
    Sdkpp_Client_Drop(&c);
}

static void* run_callbacks_thread(void* arg)
{
    (void)arg;
    Sdkpp_RunCallbacks();
    return NULL;
}

static void* wait_callbacks_thread(void* arg)
{
    *(bool*)arg = Sdkpp_WaitForCallbacks(600000);
    return NULL;
}

/* WaitForCallbacks reports queued callbacks without running them, and a thread waiting in it wakes
 * when one is queued (with a ten-minute timeout, the test would hang if it did not). */
static void test_wait_for_callbacks(void)
{
    Sdkpp_RunCallbacks();
    CHECK(!Sdkpp_WaitForCallbacks(0));
    CHECK(!Sdkpp_WaitForCallbacks(1));

    Sdkpp_Client c;
    Sdkpp_Client_Init(&c);
    struct probe p = {0};
    bool woke = false;
    pthread_t t;
    pthread_create(&t, NULL, wait_callbacks_thread, &woke);
    Sdkpp_Client_IsDiscordAppInstalled(&c, on_installed, probe_free, &p);
    pthread_join(t, NULL);
    CHECK(woke);
    CHECK(Sdkpp_WaitForCallbacks(0));
    CHECK(p.calls == 0); /* waiting runs nothing */
    Sdkpp_RunCallbacks();
    CHECK(p.calls == 1 && p.frees == 1);
    CHECK(!Sdkpp_WaitForCallbacks(0));
    Sdkpp_Client_Drop(&c);
    Sdkpp_RunCallbacks();
}

struct signal_wait {
    uint64_t seen;
    bool woke;
};

static void* wait_signal_thread(void* arg)
{
    struct signal_wait* w = arg;
    w->woke = Sdkpp_WaitForCallbackSignal(&w->seen, 600000);
    return NULL;
}

/* WaitForCallbackSignal, the wait that runs no Go code: with timeout 0 it reads the count of
 * queued callbacks, and a thread waiting in it wakes when one is queued (with a ten-minute timeout,
 * the test would hang if it did not); NULL is refused. */
static void test_wait_for_callback_signal(void)
{
    Sdkpp_RunCallbacks();
    CHECK(!Sdkpp_WaitForCallbackSignal(NULL, 1));
    uint64_t seen = 0;
    (void)Sdkpp_WaitForCallbackSignal(&seen, 0);
    uint64_t again = seen;
    CHECK(!Sdkpp_WaitForCallbackSignal(&again, 0) && again == seen);
    CHECK(!Sdkpp_WaitForCallbackSignal(&again, 1) && again == seen);

    Sdkpp_Client c;
    Sdkpp_Client_Init(&c);
    struct probe p = {0};
    struct signal_wait w = {seen, false};
    pthread_t t;
    pthread_create(&t, NULL, wait_signal_thread, &w);
    Sdkpp_Client_IsDiscordAppInstalled(&c, on_installed, probe_free, &p);
    pthread_join(t, NULL);
    CHECK(w.woke && w.seen != seen);
    CHECK(Sdkpp_WaitForCallbacks(0));
    CHECK(p.calls == 0); /* waiting runs nothing */
    again = seen;
    CHECK(Sdkpp_WaitForCallbackSignal(&again, 0) && again != seen);
    Sdkpp_RunCallbacks();
    CHECK(p.calls == 1 && p.frees == 1);
    Sdkpp_Client_Drop(&c);
    Sdkpp_RunCallbacks();
}

/* One-shot callbacks fire exactly once, inside RunCallbacks, on the calling thread; userData is
 * freed after. */
static void test_one_shot_callbacks(void)
{
    Sdkpp_Client c;
    Sdkpp_Client_Init(&c);
    struct probe p = {0};
    Sdkpp_Client_IsDiscordAppInstalled(&c, on_installed, probe_free, &p);
    CHECK(p.calls == 0); /* nothing runs before RunCallbacks */
    Sdkpp_RunCallbacks();
    CHECK(p.calls == 1 && !p.installed && p.frees == 1);
    CHECK(pthread_equal(p.thread, pthread_self()));
    Sdkpp_RunCallbacks();
    CHECK(p.calls == 1 && p.frees == 1);

    /* On another thread's RunCallbacks, the callback runs on that thread. */
    struct probe q = {0};
    Sdkpp_Client_IsDiscordAppInstalled(&c, on_installed, probe_free, &q);
    pthread_t t;
    pthread_create(&t, NULL, run_callbacks_thread, NULL);
    pthread_join(t, NULL);
    CHECK(q.calls == 1 && pthread_equal(q.thread, t) && q.frees == 1);

    /* A result callback: not connected yet. */
    struct probe r = {0};
    Sdkpp_Client_OpenConnectedGamesSettingsInPlatform(&c, on_result, probe_free, &r);
    Sdkpp_RunCallbacks();
    CHECK(r.calls == 1 && r.resultType == Sdkpp_ErrorType_ClientNotReady && r.frees == 1);

    /* Dropped before RunCallbacks: the callback still fires once, with ClientDestroyed. */
    struct probe d = {0}, e = {0}, lg = {0};
    Sdkpp_Client_AddLogCallback(&c, on_log, probe_free, &lg, Sdkpp_LoggingSeverity_Verbose);
    Sdkpp_Client_OpenConnectedGamesSettingsInPlatform(&c, on_result, probe_free, &d);
    Sdkpp_Client_IsDiscordAppInstalled(&c, on_installed, probe_free, &e);
    Sdkpp_Client_Drop(&c);
    CHECK(lg.frees == 1); /* a persistent callback is released when its Client is dropped */
    CHECK(d.calls == 0);
    Sdkpp_RunCallbacks();
    CHECK(d.calls == 1 && d.resultType == Sdkpp_ErrorType_ClientDestroyed && d.frees == 1);
    CHECK(e.calls == 1 && !e.installed && e.frees == 1);
    CHECK(lg.calls == 0);
}

/* A callback that queues another and calls Sdkpp_RunCallbacks itself: the inner call runs nothing
 * (a run is in progress), and the callback it queued runs on the next outer call, although no
 * callback was queued after that inner call (RunCallbacks enters Go only when one is queued). */
static Sdkpp_Client reentrant_client;
static struct probe reentrant_inner;

static void SDKPP_CALL on_installed_reentrant(bool installed, void* ud)
{
    on_installed(installed, ud);
    Sdkpp_Client_IsDiscordAppInstalled(&reentrant_client, on_installed, probe_free, &reentrant_inner);
    Sdkpp_RunCallbacks();
    CHECK(reentrant_inner.calls == 0);
}

static void test_reentrant_run_callbacks(void)
{
    Sdkpp_Client_Init(&reentrant_client);
    struct probe outer = {0};
    Sdkpp_Client_IsDiscordAppInstalled(&reentrant_client, on_installed_reentrant, probe_free, &outer);
    Sdkpp_RunCallbacks();
    CHECK(outer.calls == 1 && reentrant_inner.calls == 0);
    Sdkpp_RunCallbacks();
    CHECK(reentrant_inner.calls == 1 && reentrant_inner.frees == 1);
    Sdkpp_RunCallbacks(); /* nothing queued: returns at once */
    CHECK(reentrant_inner.calls == 1);
    Sdkpp_Client_Drop(&reentrant_client);
}

/* rule AU-10: log messages reach the log callback on the RunCallbacks thread, without credentials. */
static void test_log_callback_and_redaction(void)
{
    Sdkpp_Client c;
    Sdkpp_Client_Init(&c);
    struct probe lg = {0}, quiet = {0};
    Sdkpp_Client_AddLogCallback(&c, on_log, probe_free, &lg, Sdkpp_LoggingSeverity_Verbose);
    Sdkpp_Client_AddLogCallback(&c, on_log, probe_free, &quiet, Sdkpp_LoggingSeverity_None);

    Sdkpp_AuthorizationCodeVerifier v;
    Sdkpp_Client_CreateAuthorizationCodeVerifier(&c, &v);
    Sdkpp_String verifier = {0};
    Sdkpp_AuthorizationCodeVerifier_Verifier(&v, &verifier);
    char verifierText[128] = {0};
    memcpy(verifierText, verifier.ptr, verifier.size < 127 ? verifier.size : 127);
    Sdkpp_Free(verifier.ptr);

    /* A directory that cannot be created: the error names the path, which holds credentials. */
    char path[512];
    snprintf(path, sizeof path, "/proc/sdkpp-no-such/Bearer mF_9.B5f-4.1JqM/%s/access_token=abcdefgh12345678", verifierText);
    CHECK(!Sdkpp_Client_SetLogDir(&c, str(path), Sdkpp_LoggingSeverity_Verbose));
    CHECK(lg.calls == 0);
    Sdkpp_RunCallbacks();
    CHECK(lg.calls == 1 && pthread_equal(lg.thread, pthread_self()));
    CHECK(strstr(lg.lastLog, "SetLogDir") != NULL);
    CHECK(strstr(lg.lastLog, "mF_9.B5f-4.1JqM") == NULL);
    CHECK(strstr(lg.lastLog, verifierText) == NULL);
    CHECK(strstr(lg.lastLog, "abcdefgh12345678") == NULL);
    CHECK(strstr(lg.lastLog, "[redacted]") != NULL);
    if (!strstr(lg.lastLog, "[redacted]")) fprintf(stderr, "  log was: %s\n", lg.lastLog);
    CHECK(quiet.calls == 0); /* severity None receives nothing */

    Sdkpp_AuthorizationCodeVerifier_Drop(&v);
    Sdkpp_Client_Drop(&c);
    CHECK(lg.frees == 1 && quiet.frees == 1);
}

/* A Client can be created and dropped again and again in one process. */
static void test_client_churn(void)
{
    for (int i = 0; i < 300; i++) {
        Sdkpp_Client c;
        if (i % 2) {
            Sdkpp_Client_InitWithBases(&c, str("http://127.0.0.1:1/api"), str("http://127.0.0.1:1"));
        } else {
            Sdkpp_Client_Init(&c);
        }
        struct probe p = {0};
        Sdkpp_Client_IsDiscordAppInstalled(&c, on_installed, probe_free, &p);
        if (i % 3 == 0) {
            Sdkpp_RunCallbacks();
        }
        Sdkpp_Client_Drop(&c);
        Sdkpp_RunCallbacks();
        CHECK(p.calls == 1 && p.frees == 1);
    }
}

static void SDKPP_CALL on_pcm_received(uint64_t userId, int16_t* data, uint64_t samplesPerChannel, int32_t sampleRate,
                                        uint64_t channels, bool* outShouldMute, void* ud)
{
    (void)userId, (void)data, (void)samplesPerChannel, (void)sampleRate, (void)channels, (void)outShouldMute;
    ((struct probe*)ud)->calls++;
}

static void SDKPP_CALL on_pcm_captured(int16_t* data, uint64_t samplesPerChannel, int32_t sampleRate, uint64_t channels,
                                       void* ud)
{
    (void)data, (void)samplesPerChannel, (void)sampleRate, (void)channels;
    ((struct probe*)ud)->calls++;
}

/* The Call handle: a call that cannot start (the client is not connected) gives an invalid Call
 * and releases both raw-audio hooks' userData at once; NULL hooks, forged and dropped Call
 * handles are refused with defaults. */
static void test_call_handle(void)
{
    Sdkpp_Client c;
    Sdkpp_Client_Init(&c);
    struct probe rx = {0}, tx = {0};
    Sdkpp_Call call;
    Sdkpp_Client_StartCallWithAudioCallbacks(&c, 1, on_pcm_received, probe_free, &rx, on_pcm_captured, probe_free, &tx, &call);
    CHECK(call.opaque == NULL);
    CHECK(rx.frees == 1 && tx.frees == 1 && rx.calls == 0 && tx.calls == 0);

    struct probe n1 = {0}, n2 = {0};
    Sdkpp_Client_StartCallWithAudioCallbacks(&c, 1, NULL, probe_free, &n1, on_pcm_captured, probe_free, &n2, &call);
    CHECK(call.opaque == NULL && n1.frees == 1 && n2.frees == 1);
    Sdkpp_Client_StartCall(&c, 1, &call);
    CHECK(call.opaque == NULL);
    Sdkpp_Client_GetCall(&c, 1, &call);
    CHECK(call.opaque == NULL);
    Sdkpp_CallSpan calls = {0};
    Sdkpp_Client_GetCalls(&c, &calls);
    CHECK(calls.size == 0);
    Sdkpp_Free(calls.ptr);

    Sdkpp_Call forged = {(void*)(uintptr_t)0x7fff00010001};
    CHECK(Sdkpp_Call_GetStatus(&forged) == Sdkpp_Call_Status_Disconnected);
    CHECK(Sdkpp_Call_GetChannelId(&forged) == 0);
    Sdkpp_Call_SetPTTActive(&forged, true);
    CHECK(!Sdkpp_Call_GetPTTActive(&forged));
    Sdkpp_Call_SetLowLatency(&forged, true);
    CHECK(!Sdkpp_Call_GetLowLatency(&forged));
    struct probe st = {0};
    Sdkpp_Call_SetStatusChangedCallback(&forged, NULL, probe_free, &st);
    CHECK(st.frees == 1);
    Sdkpp_Call_SetStatusChangedCallback(NULL, NULL, probe_free, &st);
    CHECK(st.frees == 2);
    Sdkpp_Call_Drop(&forged);
    Sdkpp_Call_Drop(NULL);
    Sdkpp_Client_Drop(&c);
}

int main(void)
{
    test_abi();
    uint64_t before = Sdkpp_GetObjectCount();
    test_authorization_args();
    test_client_basics();
    test_one_shot_callbacks();
    test_reentrant_run_callbacks();
    test_wait_for_callbacks();
    test_wait_for_callback_signal();
    test_log_callback_and_redaction();
    test_client_churn();
    test_call_handle();
    CHECK(Sdkpp_GetObjectCount() == before); /* nothing leaked in the object table */
    return check_report("handle_test");
}
