/* A sample game in C, the same as examples/cpp/sample_game.cpp over the C ABI: a player links
 * their account with sdkpp, goes online, befriends the other player and shows rich presence, joins
 * the match lobby by its secret, chats there, talks in the lobby's end-to-end encrypted voice call
 * with push-to-talk, and the game prints what happens, the call's verification code included.
 *
 * `make demo SAMPLE=c` runs it for two players at once against a live sdkpp-server, with the
 * environment the C++ sample reads (see its header): SDKPP_API_BASE, SDKPP_WEB_BASE, SDKPP_APP_ID,
 * SDKPP_PLAYER, SDKPP_PASSWORD, SDKPP_BROWSER, SDKPP_PLAYERS, SDKPP_MICROPHONE, SDKPP_SPEAKER.
 *
 * The C ABI's rules, as this file follows them: strings are {ptr, size}, not NUL-terminated; a
 * string, span or object the SDK returns or passes to a callback belongs to the game, which frees
 * it (Sdkpp_Free, Sdkpp_FreeProperties, Sdkpp_<Class>_Drop); callbacks run only inside
 * Sdkpp_RunCallbacks, on the game's thread, with the userData given to the call. */
#define _POSIX_C_SOURCE 200809L
#include "sdkpp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#include <windows.h>
#else
#include <time.h>
#endif

#define MAX_PLAYERS 16

/* Game is what the callbacks see: every callback gets a pointer to it as its userData. */
typedef struct Game {
    Sdkpp_Client client;
    const char* player;
    size_t players;
    uint64_t me;
    /* account linking */
    bool answered, authorized, failed, exchanged, fetched;
    char *code, *redirect, *access;
    /* chat and lobby */
    bool friendPresenceSeen, joined, sent, historyFetched, left;
    uint64_t lobby;
    size_t chatHeard, history;
    /* voice */
    bool deviceDone, connected, ended;
    const char* wantDevice;
    bool wantInput;
    uint64_t heard[MAX_PLAYERS];
    size_t heardCount, overs;
} Game;

static const char* Env(const char* name)
{
    const char* v = getenv(name);
    return v ? v : "";
}

/* Str views a NUL-terminated string as an Sdkpp_String; the SDK copies inputs during the call. */
static Sdkpp_String Str(const char* s)
{
    Sdkpp_String out = {(uint8_t*)s, strlen(s)};
    return out;
}

/* Take copies a string the SDK handed over into a NUL-terminated one of the game's, and frees it. */
static char* Take(Sdkpp_String s)
{
    char* out = malloc(s.size + 1);
    if (!out) abort();
    if (s.size) memcpy(out, s.ptr, s.size);
    out[s.size] = 0;
    Sdkpp_Free(s.ptr);
    return out;
}

/* ResultText is "ok" for a successful result, else its description; it drops the result. */
static char* ResultText(Sdkpp_ClientResult* result)
{
    char* text;
    if (Sdkpp_ClientResult_Successful(result)) {
        text = malloc(3);
        if (!text) abort();
        strcpy(text, "ok");
    } else {
        Sdkpp_String s;
        Sdkpp_ClientResult_ToString(result, &s);
        text = Take(s);
    }
    Sdkpp_ClientResult_Drop(result);
    return text;
}

static void PrintResult(const char* call, Sdkpp_ClientResult* result)
{
    char* text = ResultText(result);
    printf("sdk: %s -> %s\n", call, text);
    free(text);
}

/* UserName is the display name of a user the SDK knows, or the id. */
static char* UserName(Game* g, uint64_t id)
{
    Sdkpp_UserHandle user;
    if (Sdkpp_Client_GetUser(&g->client, id, &user)) {
        Sdkpp_String s;
        Sdkpp_UserHandle_DisplayName(&user, &s);
        Sdkpp_UserHandle_Drop(&user);
        return Take(s);
    }
    char* out = malloc(24);
    if (!out) abort();
    snprintf(out, 24, "%llu", (unsigned long long)id);
    return out;
}

/* Frame runs one game frame: the SDK's callbacks run here, on the game's thread. */
static void Frame(void)
{
    Sdkpp_RunCallbacks();
#ifdef _WIN32
    Sleep(16);
#else
    struct timespec ts = {0, 16 * 1000 * 1000};
    nanosleep(&ts, NULL);
#endif
}

/* RUN_UNTIL runs frames until cond holds, for about a minute at most. */
#define RUN_UNTIL(cond)                                                              \
    do {                                                                             \
        for (int frame_ = 0; frame_ < 60 * 60 && !(cond); ++frame_) Frame();        \
    } while (0)

/* ---- callbacks; each gets the Game as userData ---- */

static void OnLog(Sdkpp_String message, Sdkpp_LoggingSeverity severity, void* userData)
{
    (void)userData;
    static const char* names[] = {"Verbose", "Info", "Warning", "Error", "None"};
    char* text = Take(message);
    printf("[sdk %s] %s\n", severity >= 1 && severity <= 5 ? names[severity - 1] : "?", text);
    free(text);
}

static void OnOfflineAnswer(Sdkpp_ClientResult* result, void* userData)
{
    Game* g = userData;
    Sdkpp_String s;
    Sdkpp_ClientResult_ToString(result, &s);
    Sdkpp_ClientResult_Drop(result);
    char* text = Take(s);
    printf("game: offline; the SDK answers: %s\n", text);
    free(text);
    g->answered = true;
}

static void OnOpenUrl(Sdkpp_String url, void* userData)
{
    Game* g = userData;
    char* u = Take(url);
    printf("sdk: opens the consent page; %s logs in and presses Approve\n", g->player);
    size_t n = strlen(u) + strlen(Env("SDKPP_BROWSER")) + strlen(g->player) + strlen(Env("SDKPP_PASSWORD")) + 64;
    char* cmd = malloc(n);
    if (!cmd) abort();
    snprintf(cmd, n, "'%s' -user '%s' -password '%s' '%s' > /dev/null", Env("SDKPP_BROWSER"), g->player,
             Env("SDKPP_PASSWORD"), u);
    if (system(cmd) != 0) printf("game: the browser step failed\n");
    free(cmd);
    free(u);
}

static void OnAuthorized(Sdkpp_ClientResult* result, Sdkpp_String code, Sdkpp_String redirectUri, void* userData)
{
    Game* g = userData;
    g->authorized = Sdkpp_ClientResult_Successful(result);
    g->failed = !g->authorized;
    g->code = Take(code);
    g->redirect = Take(redirectUri);
    char* text = ResultText(result);
    printf("sdk: Authorize -> %s, redirect %s\n", g->authorized ? "approved" : text, g->redirect);
    free(text);
}

static void OnToken(Sdkpp_ClientResult* result, Sdkpp_String accessToken, Sdkpp_String refreshToken,
                    Sdkpp_AuthorizationTokenType tokenType, int32_t expiresIn, Sdkpp_String scopes, void* userData)
{
    Game* g = userData;
    (void)tokenType;
    g->exchanged = true;
    g->access = Take(accessToken);
    Sdkpp_Free(refreshToken.ptr);
    char* s = Take(scopes);
    char* text = ResultText(result);
    printf("sdk: GetToken -> %s; token valid %d days, scopes \"%s\"\n", text, (int)(expiresIn / 86400), s);
    free(text);
    free(s);
}

static void OnTokenUpdated(Sdkpp_ClientResult* result, void* userData)
{
    (void)userData;
    Sdkpp_ClientResult_Drop(result);
}

static void OnCurrentUser(Sdkpp_ClientResult* result, uint64_t id, Sdkpp_String name, void* userData)
{
    Game* g = userData;
    g->fetched = Sdkpp_ClientResult_Successful(result);
    Sdkpp_ClientResult_Drop(result);
    char* n = Take(name);
    printf("game: linked as %s (user %llu); authenticated: %s\n", n, (unsigned long long)id,
           Sdkpp_Client_IsAuthenticated(&g->client) ? "yes" : "no");
    free(n);
}

static void OnStatus(Sdkpp_Client_Status status, Sdkpp_Client_Error error, int32_t detail, void* userData)
{
    (void)error, (void)detail, (void)userData;
    Sdkpp_String s;
    Sdkpp_Client_StatusToString(status, &s);
    char* text = Take(s);
    printf("sdk: status %s\n", text);
    free(text);
}

static void OnFriendRequest(Sdkpp_ClientResult* result, void* userData)
{
    Game* g = userData;
    char call[128];
    snprintf(call, sizeof call, "SendGameFriendRequest(%s)", strcmp(g->player, "alice") == 0 ? "bob" : "alice");
    PrintResult(call, result);
}

static void OnPresenceUpdated(Sdkpp_ClientResult* result, void* userData)
{
    (void)userData;
    PrintResult("UpdateRichPresence", result);
}

/* ReadMessage gives a message's text (the game's to free), author and channel; false if the SDK
 * does not know the message. */
static bool ReadMessage(Game* g, uint64_t messageId, char** text, uint64_t* author, uint64_t* channel)
{
    Sdkpp_MessageHandle m;
    if (!Sdkpp_Client_GetMessageHandle(&g->client, messageId, &m)) return false;
    Sdkpp_String content;
    Sdkpp_MessageHandle_Content(&m, &content);
    *text = Take(content);
    *author = Sdkpp_MessageHandle_AuthorId(&m);
    *channel = Sdkpp_MessageHandle_ChannelId(&m);
    Sdkpp_MessageHandle_Drop(&m);
    return true;
}

static void OnMessage(uint64_t messageId, void* userData)
{
    Game* g = userData;
    char* text;
    uint64_t author, channel;
    if (!ReadMessage(g, messageId, &text, &author, &channel)) return;
    char* name = UserName(g, author);
    printf("chat: <%s> %s\n", name, text);
    if (author != g->me) ++g->chatHeard;
    free(name);
    free(text);
}

static void OnMemberAdded(uint64_t lobbyId, uint64_t memberId, void* userData)
{
    Game* g = userData;
    (void)lobbyId;
    if (memberId == g->me) return;
    char* name = UserName(g, memberId);
    printf("game: a player joined the lobby (%s)\n", name);
    free(name);
}

static void OnLobby(Sdkpp_ClientResult* result, uint64_t lobbyId, void* userData)
{
    Game* g = userData;
    g->joined = true;
    g->lobby = Sdkpp_ClientResult_Successful(result) ? lobbyId : 0;
    char* text = ResultText(result);
    printf("sdk: CreateOrJoinLobby -> %s\n", g->lobby ? "joined" : text);
    free(text);
}

static void OnSent(Sdkpp_ClientResult* result, uint64_t messageId, void* userData)
{
    Game* g = userData;
    (void)messageId;
    g->sent = true;
    char* text = ResultText(result);
    if (strcmp(text, "ok") != 0) printf("sdk: SendLobbyMessage -> %s\n", text);
    free(text);
}

static void OnHistory(Sdkpp_ClientResult* result, Sdkpp_MessageHandleSpan messages, void* userData)
{
    Game* g = userData;
    g->historyFetched = true;
    g->history = messages.size;
    for (size_t i = 0; i < messages.size; ++i) Sdkpp_MessageHandle_Drop(&messages.ptr[i]);
    Sdkpp_Free(messages.ptr);
    char* text = ResultText(result);
    if (strcmp(text, "ok") != 0) printf("sdk: GetLobbyMessagesWithLimit -> %s\n", text);
    free(text);
}

static void OnLeft(Sdkpp_ClientResult* result, void* userData)
{
    Game* g = userData;
    g->left = true;
    PrintResult("LeaveLobby", result);
}

/* ---- voice ---- */

static void OnDeviceSet(Sdkpp_ClientResult* result, void* userData)
{
    Game* g = userData;
    char* text = ResultText(result);
    printf("voice: %s device \"%s\" -> %s\n", g->wantInput ? "input" : "output", g->wantDevice,
           strcmp(text, "ok") == 0 ? "selected" : text);
    free(text);
    g->deviceDone = true;
}

/* OnDevices selects the device named g->wantDevice, as a game's audio settings menu would. */
static void OnDevices(Sdkpp_AudioDeviceSpan devices, void* userData)
{
    Game* g = userData;
    bool found = false;
    for (size_t i = 0; i < devices.size; ++i) {
        Sdkpp_String s;
        Sdkpp_AudioDevice_Name(&devices.ptr[i], &s);
        char* name = Take(s);
        if (!found && strcmp(name, g->wantDevice) == 0) {
            found = true;
            Sdkpp_String id;
            Sdkpp_AudioDevice_Id(&devices.ptr[i], &id);
            if (g->wantInput) Sdkpp_Client_SetInputDevice(&g->client, id, OnDeviceSet, NULL, g);
            else Sdkpp_Client_SetOutputDevice(&g->client, id, OnDeviceSet, NULL, g);
            Sdkpp_Free(id.ptr);
        }
        free(name);
        Sdkpp_AudioDevice_Drop(&devices.ptr[i]);
    }
    if (!found) {
        printf("voice: no %s device named \"%s\" among %zu\n", g->wantInput ? "input" : "output", g->wantDevice,
               devices.size);
        g->deviceDone = true;
    }
    Sdkpp_Free(devices.ptr);
}

/* UseDevice selects the input or output device whose name is in the environment variable env;
 * without it the system's default device stays. */
static void UseDevice(Game* g, const char* env, bool input)
{
    if (!*Env(env)) return;
    g->wantDevice = Env(env);
    g->wantInput = input;
    g->deviceDone = false;
    if (input) Sdkpp_Client_GetInputDevices(&g->client, OnDevices, NULL, g);
    else Sdkpp_Client_GetOutputDevices(&g->client, OnDevices, NULL, g);
    RUN_UNTIL(g->deviceDone);
}

static void OnCallStatus(Sdkpp_Call_Status status, Sdkpp_Call_Error error, int32_t detail, void* userData)
{
    Game* g = userData;
    (void)detail;
    if (error != Sdkpp_Call_Error_None) {
        Sdkpp_String s, e;
        Sdkpp_Call_StatusToString(status, &s);
        Sdkpp_Call_ErrorToString(error, &e);
        char *st = Take(s), *er = Take(e);
        printf("voice: call %s (%s)\n", st, er);
        free(st);
        free(er);
    } else if (status == Sdkpp_Call_Status_Connected && !g->connected) {
        printf("voice: call connected\n");
    }
    g->connected = status == Sdkpp_Call_Status_Connected;
}

/* OnSpeaking notes who is heard: speech has pauses, so a talker may start and stop several times. */
static void OnSpeaking(uint64_t userId, bool speaking, void* userData)
{
    Game* g = userData;
    if (!speaking || userId == g->me) return;
    for (size_t i = 0; i < g->heardCount; ++i) {
        if (g->heard[i] == userId) return;
    }
    if (g->heardCount < MAX_PLAYERS) g->heard[g->heardCount++] = userId;
    char* name = UserName(g, userId);
    printf("voice: hears %s speaking\n", name);
    free(name);
}

/* OnOver counts the "over" messages of the lobby's chat: a player says it when done talking. */
static void OnOver(uint64_t messageId, void* userData)
{
    Game* g = userData;
    char* text;
    uint64_t author, channel;
    if (!ReadMessage(g, messageId, &text, &author, &channel)) return;
    if (channel == g->lobby && strcmp(text, "over") == 0) {
        ++g->overs;
        if (author != g->me) {
            char* name = UserName(g, author);
            printf("voice: %s is done talking\n", name);
            free(name);
        }
    }
    free(text);
}

/* OnQuiet replaces the chat handler once the call is over: the turns' "over" messages are done. */
static void OnQuiet(uint64_t messageId, void* userData)
{
    (void)messageId, (void)userData;
}

static void OnCallEnded(void* userData)
{
    Game* g = userData;
    g->ended = true;
}

static void OnOverSent(Sdkpp_ClientResult* result, uint64_t messageId, void* userData)
{
    (void)messageId, (void)userData;
    Sdkpp_ClientResult_Drop(result);
}

static size_t Participants(Sdkpp_Call* call)
{
    Sdkpp_UInt64Span ids;
    Sdkpp_Call_GetParticipants(call, &ids);
    size_t n = ids.size;
    Sdkpp_Free(ids.ptr);
    return n;
}

static int CompareIds(const void* a, const void* b)
{
    uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
    return x < y ? -1 : x > y;
}

/* MyTurn is this player's place in the lobby's member order: players talk in that order. */
static size_t MyTurn(Game* g)
{
    Sdkpp_LobbyHandle lobby;
    if (!Sdkpp_Client_GetLobbyHandle(&g->client, g->lobby, &lobby)) return 0;
    Sdkpp_UInt64Span ids;
    Sdkpp_LobbyHandle_LobbyMemberIds(&lobby, &ids);
    Sdkpp_LobbyHandle_Drop(&lobby);
    qsort(ids.ptr, ids.size, sizeof ids.ptr[0], CompareIds);
    size_t turn = 0;
    while (turn < ids.size && ids.ptr[turn] != g->me) ++turn;
    Sdkpp_Free(ids.ptr);
    return turn;
}

static void EndCall(Game* g)
{
    Sdkpp_Client_SetMessageCreatedCallback(&g->client, OnQuiet, NULL, g);
    Sdkpp_Client_EndCall(&g->client, g->lobby, OnCallEnded, NULL, g);
    RUN_UNTIL(g->ended);
    printf("voice: left the call\n");
}

/* Talk joins the lobby's voice call. Players take turns in lobby order: each holds push-to-talk
 * for two seconds while the others listen, then says "over" in the lobby chat. Every player prints
 * the call's verification code: the same code on every screen means nobody is in the middle of the
 * end-to-end encryption. */
static bool Talk(Game* g)
{
    UseDevice(g, "SDKPP_MICROPHONE", true);
    UseDevice(g, "SDKPP_SPEAKER", false);
    Sdkpp_Call call;
    Sdkpp_Client_StartCall(&g->client, g->lobby, &call);
    if (!call.opaque) {
        printf("voice: StartCall refused\n");
        return false;
    }
    Sdkpp_Call_SetStatusChangedCallback(&call, OnCallStatus, NULL, g);
    Sdkpp_Call_SetSpeakingStatusChangedCallback(&call, OnSpeaking, NULL, g);
    Sdkpp_Call_SetAudioMode(&call, Sdkpp_AudioModeType_MODE_PTT);
    Sdkpp_Call_SetPTTReleaseDelay(&call, 200);
    RUN_UNTIL(g->connected && Participants(&call) >= g->players);
    if (!(g->connected && Participants(&call) >= g->players)) {
        printf("voice: the call did not connect with every player\n");
        EndCall(g);
        Sdkpp_Call_Drop(&call);
        return false;
    }
    Sdkpp_String code;
    Sdkpp_Call_GetVerificationCode(&call, &code);
    char* c = Take(code);
    printf("voice: in the call with %zu players, verification code %s\n", Participants(&call), c);
    free(c);

    size_t turn = MyTurn(g);

    /* Positional voice (sdkpp): the players stand 3 m apart along x, facing -z. Each one's client
       sends its position with its voice, end-to-end encrypted; the others hear it from there. */
    float x = 3.0f * (float)turn;
    Sdkpp_Call_SetPositionalVoice(&call, true);
    Sdkpp_Call_SetPositionalProperties(&call, 32.0f, 1.0f, 1.0f, Sdkpp_Call_AudioFadeModel_InverseByDistance);
    Sdkpp_Call_SetListenerPosition(&call, x, 0, 0, 0, 0, -1, 0, 1, 0);
    Sdkpp_Call_SetSelfPosition(&call, x, 0, 0);
    printf("voice: positional voice %s, standing at x=%.0f\n", Sdkpp_Call_GetPositionalVoice(&call) ? "on" : "off", (double)x);
    g->overs = 0;
    Sdkpp_Client_SetMessageCreatedCallback(&g->client, OnOver, NULL, g);
    RUN_UNTIL(g->overs >= turn);
    printf("voice: presses push-to-talk\n");
    Sdkpp_Call_SetPTTActive(&call, true);
    for (int i = 0; i < 120; ++i) Frame(); /* about two seconds of speech */
    Sdkpp_Call_SetPTTActive(&call, false);
    printf("voice: releases push-to-talk\n");
    for (int i = 0; i < 30; ++i) Frame(); /* the release delay and the last packets */
    Sdkpp_Client_SendLobbyMessage(&g->client, g->lobby, Str("over"), OnOverSent, NULL, g);
    RUN_UNTIL(g->overs >= g->players && g->heardCount >= g->players - 1);
    bool all = g->overs >= g->players && g->heardCount >= g->players - 1;
    if (!all) printf("voice: heard %zu of the %zu other players\n", g->heardCount, g->players - 1);
    EndCall(g);
    Sdkpp_Call_Drop(&call);
    return all;
}

/* ---- the match ---- */

static bool HasFriend(Game* g)
{
    Sdkpp_RelationshipHandleSpan rels;
    Sdkpp_Client_GetRelationships(&g->client, &rels);
    bool found = false;
    for (size_t i = 0; i < rels.size; ++i) {
        found = found || Sdkpp_RelationshipHandle_GameRelationshipType(&rels.ptr[i]) == Sdkpp_RelationshipType_Friend;
        Sdkpp_RelationshipHandle_Drop(&rels.ptr[i]);
    }
    Sdkpp_Free(rels.ptr);
    return found;
}

/* SeeFriendPresence prints the rich presence of a friend playing the game, once it has details. */
static bool SeeFriendPresence(Game* g)
{
    if (g->friendPresenceSeen) return true;
    Sdkpp_RelationshipHandleSpan rels;
    Sdkpp_Client_GetRelationshipsByGroup(&g->client, Sdkpp_RelationshipGroupType_OnlinePlayingGame, &rels);
    for (size_t i = 0; i < rels.size; ++i) {
        Sdkpp_UserHandle user;
        Sdkpp_Activity activity;
        Sdkpp_String details;
        if (!g->friendPresenceSeen && Sdkpp_RelationshipHandle_User(&rels.ptr[i], &user)) {
            if (Sdkpp_UserHandle_GameActivity(&user, &activity)) {
                if (Sdkpp_Activity_Details(&activity, &details)) {
                    Sdkpp_String n, an, st = {NULL, 0};
                    Sdkpp_UserHandle_DisplayName(&user, &n);
                    Sdkpp_Activity_Name(&activity, &an);
                    Sdkpp_Activity_State(&activity, &st);
                    char *name = Take(n), *game = Take(an), *d = Take(details), *state = Take(st);
                    printf("presence: friend %s is online in %s: %s, %s\n", name, game, d, state);
                    free(name), free(game), free(d), free(state);
                    g->friendPresenceSeen = true;
                }
                Sdkpp_Activity_Drop(&activity);
            }
            Sdkpp_UserHandle_Drop(&user);
        }
        Sdkpp_RelationshipHandle_Drop(&rels.ptr[i]);
    }
    Sdkpp_Free(rels.ptr);
    return g->friendPresenceSeen;
}

static size_t LobbyMembers(Game* g)
{
    Sdkpp_LobbyHandle lobby;
    if (!Sdkpp_Client_GetLobbyHandle(&g->client, g->lobby, &lobby)) return 0;
    Sdkpp_UInt64Span ids;
    Sdkpp_LobbyHandle_LobbyMemberIds(&lobby, &ids);
    Sdkpp_LobbyHandle_Drop(&lobby);
    Sdkpp_Free(ids.ptr);
    return ids.size;
}

/* LobbyMap is the lobby's "map" metadata. */
static char* LobbyMap(Game* g)
{
    char* map = NULL;
    Sdkpp_LobbyHandle lobby;
    if (Sdkpp_Client_GetLobbyHandle(&g->client, g->lobby, &lobby)) {
        Sdkpp_Properties meta;
        Sdkpp_LobbyHandle_Metadata(&lobby, &meta);
        for (size_t i = 0; i < meta.size && !map; ++i) {
            if (meta.keys[i].size == 3 && memcmp(meta.keys[i].ptr, "map", 3) == 0) {
                map = malloc(meta.values[i].size + 1);
                if (!map) abort();
                memcpy(map, meta.values[i].ptr, meta.values[i].size);
                map[meta.values[i].size] = 0;
            }
        }
        Sdkpp_FreeProperties(meta);
        Sdkpp_LobbyHandle_Drop(&lobby);
    }
    if (!map) {
        map = malloc(2);
        if (!map) abort();
        strcpy(map, "?");
    }
    return map;
}

/* Play connects, joins the match lobby by its secret, says hello, and waits until it has heard
 * every other player before it leaves. */
static bool Play(Game* g)
{
    Sdkpp_Client* client = &g->client;
    Sdkpp_Client_SetStatusChangedCallback(client, OnStatus, NULL, g);
    Sdkpp_Client_Connect(client);
    RUN_UNTIL(Sdkpp_Client_GetStatus(client) == Sdkpp_Client_Status_Ready);
    if (Sdkpp_Client_GetStatus(client) != Sdkpp_Client_Status_Ready) {
        printf("game: could not connect\n");
        return false;
    }
    Sdkpp_UserHandle me;
    char* myName = NULL;
    if (Sdkpp_Client_GetCurrentUserV2(client, &me)) {
        Sdkpp_String s;
        Sdkpp_UserHandle_DisplayName(&me, &s);
        myName = Take(s);
        g->me = Sdkpp_UserHandle_Id(&me);
        Sdkpp_UserHandle_Drop(&me);
    }
    printf("game: online as %s\n", myName ? myName : "?");
    free(myName);

    /* The two players become game friends: whoever asks second accepts the other's request. */
    const char* friendName = strcmp(g->player, "alice") == 0 ? "bob" : "alice";
    Sdkpp_Client_SendGameFriendRequest(client, Str(friendName), OnFriendRequest, NULL, g);
    RUN_UNTIL(HasFriend(g));

    /* Rich presence: what the player is doing, shown to friends. */
    Sdkpp_Activity activity;
    Sdkpp_Activity_Init(&activity);
    Sdkpp_String state = Str("In the match lobby");
    Sdkpp_String details = Str(strcmp(g->player, "alice") == 0 ? "Playing the red team" : "Playing the blue team");
    Sdkpp_Activity_SetState(&activity, &state);
    Sdkpp_Activity_SetDetails(&activity, &details);
    Sdkpp_ActivityParty party;
    Sdkpp_ActivityParty_Init(&party);
    Sdkpp_ActivityParty_SetId(&party, Str("demo-match-1"));
    Sdkpp_ActivityParty_SetCurrentSize(&party, 1);
    Sdkpp_ActivityParty_SetMaxSize(&party, 2);
    Sdkpp_Activity_SetParty(&activity, &party);
    Sdkpp_Client_UpdateRichPresence(client, &activity, OnPresenceUpdated, NULL, g);
    Sdkpp_ActivityParty_Drop(&party);
    Sdkpp_Activity_Drop(&activity);
    RUN_UNTIL(SeeFriendPresence(g));
    if (!g->friendPresenceSeen) printf("game: the friend's rich presence did not arrive\n");

    /* Every message, direct or in a lobby, arrives through one callback on this thread. */
    Sdkpp_Client_SetMessageCreatedCallback(client, OnMessage, NULL, g);
    Sdkpp_Client_SetLobbyMemberAddedCallback(client, OnMemberAdded, NULL, g);

    Sdkpp_String lobbyKey = Str("map"), lobbyValue = Str("harbor");
    Sdkpp_String memberKey = Str("team"), memberValue = Str(strcmp(g->player, "alice") == 0 ? "red" : "blue");
    Sdkpp_Properties lobbyMeta = {1, &lobbyKey, &lobbyValue}, memberMeta = {1, &memberKey, &memberValue};
    Sdkpp_Client_CreateOrJoinLobbyWithMetadata(client, Str("demo-match-1"), lobbyMeta, memberMeta, OnLobby, NULL, g);
    RUN_UNTIL(g->joined);
    if (g->lobby == 0) return false;
    RUN_UNTIL(LobbyMembers(g) >= g->players);
    char* map = LobbyMap(g);
    printf("game: in lobby %llu on map %s with %zu players\n", (unsigned long long)g->lobby, map, LobbyMembers(g));
    free(map);

    char hello[128];
    snprintf(hello, sizeof hello, "hello from %s, gl hf!", g->player);
    Sdkpp_Client_SendLobbyMessage(client, g->lobby, Str(hello), OnSent, NULL, g);
    RUN_UNTIL(g->sent && g->chatHeard >= g->players - 1);
    bool ok = g->sent && g->chatHeard >= g->players - 1 && g->friendPresenceSeen;

    Sdkpp_Client_GetLobbyMessagesWithLimit(client, g->lobby, 10, OnHistory, NULL, g);
    RUN_UNTIL(g->historyFetched);
    printf("game: the lobby's history holds %zu messages\n", g->history);

    ok = Talk(g) && ok;

    /* Stay a moment so that the others hear this player too, then leave. */
    for (int i = 0; i < 30; ++i) Frame();
    Sdkpp_Client_LeaveLobby(client, g->lobby, OnLeft, NULL, g);
    RUN_UNTIL(g->left);
    Sdkpp_Client_Disconnect(client);
    RUN_UNTIL(Sdkpp_Client_GetStatus(client) == Sdkpp_Client_Status_Disconnected);
    return ok;
}

/* LinkAccount runs the OAuth 2.0 flow with PKCE: the consent page (here the stand-in browser),
 * the code exchange, and the token given to the SDK. */
static bool LinkAccount(Game* g, Sdkpp_AuthorizationArgs* args, Sdkpp_AuthorizationCodeVerifier* verifier, uint64_t appId)
{
    Sdkpp_Client* client = &g->client;
    Sdkpp_Client_SetOpenUrlCallback(client, OnOpenUrl, NULL, g);
    Sdkpp_Client_Authorize(client, args, OnAuthorized, NULL, g);
    RUN_UNTIL(g->authorized || g->failed);
    if (g->authorized) {
        Sdkpp_String v;
        Sdkpp_AuthorizationCodeVerifier_Verifier(verifier, &v);
        Sdkpp_Client_GetToken(client, appId, Str(g->code), v, Str(g->redirect), OnToken, NULL, g);
        Sdkpp_Free(v.ptr);
        RUN_UNTIL(g->exchanged);
    }
    if (g->access && *g->access) {
        Sdkpp_Client_UpdateToken(client, Sdkpp_AuthorizationTokenType_Bearer, Str(g->access), OnTokenUpdated, NULL, g);
        Sdkpp_Client_FetchCurrentUser(client, Sdkpp_AuthorizationTokenType_Bearer, Str(g->access), OnCurrentUser, NULL, g);
        RUN_UNTIL(g->fetched);
    }
    return g->fetched;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* one transcript line at a time, even into a pipe */
    uint64_t objectsAtStart = Sdkpp_GetObjectCount();
    Sdkpp_String hash;
    Sdkpp_Client_GetVersionHash(&hash);
    char* h = Take(hash);
    printf("sdkpp %d.%d.%d (build %s)\n", (int)Sdkpp_Client_GetVersionMajor(), (int)Sdkpp_Client_GetVersionMinor(),
           (int)Sdkpp_Client_GetVersionPatch(), h);
    free(h);

    static Game game; /* zeroed */
    Game* g = &game;
    g->player = Env("SDKPP_PLAYER");
    g->players = *Env("SDKPP_PLAYERS") ? strtoul(Env("SDKPP_PLAYERS"), NULL, 10) : 2;
    if (g->players < 1 || g->players > MAX_PLAYERS) g->players = 2;
    bool online = *Env("SDKPP_API_BASE") != 0;
    int status = 0;

    if (online) Sdkpp_Client_InitWithBases(&g->client, Str(Env("SDKPP_API_BASE")), Str(Env("SDKPP_WEB_BASE")));
    else Sdkpp_Client_Init(&g->client);
    Sdkpp_Client_AddLogCallback(&g->client, OnLog, NULL, g, Sdkpp_LoggingSeverity_Warning);
    uint64_t appId = online ? strtoull(Env("SDKPP_APP_ID"), NULL, 10) : 1234567890;
    Sdkpp_Client_SetApplicationId(&g->client, appId);

    /* Account linking starts with the authorization arguments and a PKCE pair. */
    Sdkpp_AuthorizationCodeVerifier verifier;
    Sdkpp_Client_CreateAuthorizationCodeVerifier(&g->client, &verifier);
    Sdkpp_AuthorizationCodeChallenge challenge;
    Sdkpp_AuthorizationCodeVerifier_Challenge(&verifier, &challenge);
    Sdkpp_String scopes, challengeText;
    Sdkpp_Client_GetDefaultCommunicationScopes(&scopes);
    Sdkpp_AuthorizationArgs args;
    Sdkpp_AuthorizationArgs_Init(&args);
    Sdkpp_AuthorizationArgs_SetScopes(&args, scopes);
    Sdkpp_AuthorizationArgs_SetCodeChallenge(&args, &challenge);
    Sdkpp_AuthorizationCodeChallenge_Challenge(&challenge, &challengeText);
    char *sc = Take(scopes), *ch = Take(challengeText);
    printf("game: asks to link the account, scopes \"%s\", PKCE challenge %.8s...\n", sc, ch);
    free(sc);
    free(ch);

    if (!online) {
        Sdkpp_Client_OpenConnectedGamesSettingsInPlatform(&g->client, OnOfflineAnswer, NULL, g);
        RUN_UNTIL(g->answered);
    } else if (!LinkAccount(g, &args, &verifier, appId)) {
        printf("game: account linking did not complete\n");
        status = 1;
    } else if (!Play(g)) {
        printf("game: the match did not complete\n");
        status = 1;
    }

    /* Release everything: the SDK counts the objects still alive. */
    Sdkpp_AuthorizationArgs_Drop(&args);
    Sdkpp_AuthorizationCodeChallenge_Drop(&challenge);
    Sdkpp_AuthorizationCodeVerifier_Drop(&verifier);
    Sdkpp_Client_Drop(&g->client);
    Sdkpp_RunCallbacks();
    free(g->code);
    free(g->redirect);
    free(g->access);
    printf("game: exits; SDK objects still alive: %llu\n",
           (unsigned long long)(Sdkpp_GetObjectCount() - objectsAtStart));
    return status;
}
