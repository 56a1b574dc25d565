/*
 * The game bench/quiet measures: a native 60 fps loop, as a game runs one, that sleeps to the
 * next frame with clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) and calls Sdkpp_RunCallbacks
 * once a frame. Built twice from this file (bench/run.sh): linked against libsdkpp.so for the
 * SDK scenarios, and with -DQUIET_BARE, without the SDK, for the bare loop (a process that only
 * loads the library already runs the Go runtime's threads, which is the SDK's cost, not the
 * loop's).
 *
 * Usage: game SCENARIO SECONDS. SCENARIO is bare, connected (a client connected, in no call),
 * ptt (alone in a call, push-to-talk released) or vad (alone in a call, voice activity mode).
 * The SDK scenarios read the service's bases, a player's token and a lobby secret from
 * SDKPP_QUIET_API_BASE, SDKPP_QUIET_WEB_BASE, SDKPP_QUIET_TOKEN and SDKPP_QUIET_LOBBY. Once the
 * state is reached and a second has settled, the loop runs SECONDS more, and the program prints
 * the process's CPU time (user and system, every thread) per wall time as {"percent":P}.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#ifndef QUIET_BARE
#include "sdkpp.h"
#endif

/* One frame of the 60 fps loop. */
#define FRAME_NS (1000000000LL / 60)

static int64_t Now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t CPUTime(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
    return ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
           ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
}

/* Frame is one frame's work: the SDK's callbacks, or nothing for the bare loop. */
static void Frame(void)
{
#ifndef QUIET_BARE
    Sdkpp_RunCallbacks();
#endif
}

/* The loop's clock: the deadline of the next frame, on an absolute timeline. */
static int64_t next;

static void WaitFrame(void)
{
    next += FRAME_NS;
    struct timespec ts = { .tv_sec = next / 1000000000LL, .tv_nsec = next % 1000000000LL };
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

/* RunFor runs the loop for ns nanoseconds. */
static void RunFor(int64_t ns)
{
    int64_t until = Now() + ns;
    while (Now() < until) {
        Frame();
        WaitFrame();
    }
}

#ifndef QUIET_BARE
static Sdkpp_String Str(const char* s) { return (Sdkpp_String){ (uint8_t*)s, strlen(s) }; }

static const char* Env(const char* name)
{
    const char* v = getenv(name);
    if (v == NULL || *v == 0) {
        fprintf(stderr, "game: %s is not set\n", name);
        exit(1);
    }
    return v;
}

static void OnToken(Sdkpp_ClientResult* result, void* userData) { (void)result, (void)userData; }

typedef struct Lobby { bool done, ok; uint64_t id; } Lobby;

static void OnLobby(Sdkpp_ClientResult* result, uint64_t lobbyId, void* userData)
{
    Lobby* l = userData;
    l->done = true;
    l->ok = Sdkpp_ClientResult_Successful(result);
    l->id = lobbyId;
}

static Sdkpp_Client client;
static Sdkpp_Call call;

/* RUN_UNTIL runs the loop until cond holds, for at most secs seconds, and sets ok to whether it
 * did. */
#define RUN_UNTIL(ok, secs, cond) \
    do { \
        int64_t until_ = Now() + (int64_t)(secs) * 1000000000LL; \
        while (!(cond) && Now() < until_) { Frame(); WaitFrame(); } \
        ok = (cond); \
    } while (0)

/* Reach makes the scenario's state: connected, and for ptt and vad alone in a call. */
static bool Reach(const char* sc)
{
    bool ok;
    Sdkpp_Client_InitWithBases(&client, Str(Env("SDKPP_QUIET_API_BASE")), Str(Env("SDKPP_QUIET_WEB_BASE")));
    Sdkpp_Client_UpdateToken(&client, Sdkpp_AuthorizationTokenType_Bearer, Str(Env("SDKPP_QUIET_TOKEN")), OnToken, NULL, NULL);
    Sdkpp_Client_Connect(&client);
    RUN_UNTIL(ok, 10, Sdkpp_Client_GetStatus(&client) == Sdkpp_Client_Status_Ready);
    if (!ok) {
        fprintf(stderr, "game: the client did not connect\n");
        return false;
    }
    if (strcmp(sc, "connected") == 0) return true;

    char secret[256];
    snprintf(secret, sizeof secret, "%s-%s", Env("SDKPP_QUIET_LOBBY"), sc);
    Lobby lobby = { 0 };
    Sdkpp_Client_CreateOrJoinLobby(&client, Str(secret), OnLobby, NULL, &lobby);
    RUN_UNTIL(ok, 10, lobby.done);
    if (!ok || !lobby.ok) {
        fprintf(stderr, "game: could not join the lobby\n");
        return false;
    }
    Sdkpp_Client_StartCall(&client, lobby.id, &call);
    if (call.opaque == NULL) {
        fprintf(stderr, "game: StartCall refused\n");
        return false;
    }
    if (strcmp(sc, "ptt") == 0) {
        Sdkpp_Call_SetAudioMode(&call, Sdkpp_AudioModeType_MODE_PTT);
        Sdkpp_Call_SetPTTActive(&call, false);
    } else {
        Sdkpp_Call_SetAudioMode(&call, Sdkpp_AudioModeType_MODE_VAD);
    }
    RUN_UNTIL(ok, 20, Sdkpp_Call_GetStatus(&call) == Sdkpp_Call_Status_Connected);
    if (!ok) {
        fprintf(stderr, "game: the call did not connect\n");
        return false;
    }
    return true;
}
#endif

int main(int argc, char** argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: game SCENARIO SECONDS\n");
        return 2;
    }
    const char* sc = argv[1];
    int64_t measure = (int64_t)(atof(argv[2]) * 1e9);
#ifdef QUIET_BARE
    if (strcmp(sc, "bare") != 0) {
        fprintf(stderr, "game: built without the SDK, it runs only the bare scenario\n");
        return 2;
    }
#else
    if (strcmp(sc, "connected") != 0 && strcmp(sc, "ptt") != 0 && strcmp(sc, "vad") != 0) {
        fprintf(stderr, "game: unknown scenario %s\n", sc);
        return 2;
    }
#endif
    next = Now();
#ifndef QUIET_BARE
    if (!Reach(sc)) {
        Sdkpp_Client_Drop(&client);
        return 1;
    }
    RunFor(1000000000LL); /* what follows the connection settles */
#endif
    int64_t cpu0 = CPUTime(), t0 = Now();
    RunFor(measure);
    int64_t cpu1 = CPUTime(), t1 = Now();
    printf("{\"percent\":%.4f}\n", 100.0 * (double)(cpu1 - cpu0) / (double)(t1 - t0));
    fflush(stdout);
#ifndef QUIET_BARE
    if (call.opaque != NULL) Sdkpp_Call_Drop(&call);
    Sdkpp_Client_Drop(&client);
#endif
    return 0;
}
