/* Bad input from a game: each call is refused with a logged reason, loses nothing, and the
 * process survives. */
#include "sdkpp.h"
#include "check.h"

#include <stdlib.h>
#ifdef _WIN32
#include <process.h>
#else
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

static Sdkpp_String str(const char* s) { return (Sdkpp_String){(uint8_t*)s, strlen(s)}; }

static char lastLog[4096];
static int logs;

static void SDKPP_CALL on_log(Sdkpp_String message, Sdkpp_LoggingSeverity severity, void* ud)
{
    (void)ud;
    (void)severity;
    size_t n = message.size < sizeof lastLog - 1 ? message.size : sizeof lastLog - 1;
    memcpy(lastLog, message.ptr, n);
    lastLog[n] = 0;
    logs++;
    Sdkpp_Free(message.ptr);
}

/* logged runs the queued log callbacks and reports whether the newest message has want. */
static bool logged(const char* want)
{
    lastLog[0] = 0;
    Sdkpp_RunCallbacks();
    bool ok = strstr(lastLog, want) != NULL;
    if (!ok) fprintf(stderr, "  expected a log with \"%s\", got \"%s\"\n", want, lastLog);
    return ok;
}

static int frees;
static void SDKPP_CALL count_free(void* p)
{
    (void)p;
    frees++;
}
static void SDKPP_CALL on_installed(bool installed, void* ud)
{
    (void)installed;
    (void)ud;
}

/* abi_mismatch runs in a child process: a failed check lasts for the life of the process. */
static int abi_mismatch(void)
{
    Sdkpp_AbiInfo info = SDKPP_ABI_INFO_INIT;
    info.sizeofString += 8;
    if (Sdkpp_CheckAbi(&info)) return 2;
    if (Sdkpp_CheckAbi(NULL)) return 3;
    Sdkpp_AuthorizationArgs x;
    Sdkpp_AuthorizationArgs_Init(&x);
    return x.opaque == NULL ? 0 : 4;
}

/* run_self runs this program again with one argument and returns its exit status, or -1. */
static int run_self(char* self, char* arg)
{
    char* args[] = {self, arg, NULL};
#ifdef _WIN32
    /* self is argv[0], without quotes; the test's path has no spaces. */
    intptr_t status = _spawnv(_P_WAIT, self, (const char* const*)args);
    return status < 0 ? -1 : (int)status;
#else
    pid_t pid;
    extern char** environ;
    if (posix_spawn(&pid, self, NULL, NULL, args, environ) != 0) return -1;
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
    return WEXITSTATUS(status);
#endif
}

int main(int argc, char** argv)
{
    if (argc > 1 && strcmp(argv[1], "abi-mismatch") == 0) {
        return abi_mismatch();
    }
    Sdkpp_Client logClient;
    Sdkpp_Client_Init(&logClient);
    Sdkpp_Client_AddLogCallback(&logClient, on_log, NULL, NULL, Sdkpp_LoggingSeverity_Warning);

    Sdkpp_AuthorizationArgs a;
    Sdkpp_AuthorizationArgs_Init(&a);
    Sdkpp_AuthorizationArgs_SetScopes(&a, str("openid"));
    Sdkpp_String out = {0};

    /* Double drop. */
    Sdkpp_AuthorizationArgs copy = a; /* a second copy of the same id */
    Sdkpp_AuthorizationArgs_Drop(&a);
    Sdkpp_AuthorizationArgs_Drop(&a);
    CHECK(logged("already dropped"));

    /* Use after drop, through a stale copy of the handle. */
    CHECK(Sdkpp_AuthorizationArgs_ClientId(&copy) == 0);
    CHECK(logged("dropped"));
    Sdkpp_AuthorizationArgs_Scopes(&copy, &out);
    CHECK(out.ptr == NULL && out.size == 0);
    CHECK(logged("AuthorizationArgs_Scopes"));
    Sdkpp_AuthorizationArgs_Drop(&copy);
    CHECK(logged("dropped"));

    /* Clone from a dropped object leaves the target invalid. */
    Sdkpp_AuthorizationArgs target;
    target.opaque = (void*)0x1; /* garbage: Clone must not read it */
    Sdkpp_AuthorizationArgs_Clone(&target, &copy);
    CHECK(target.opaque == NULL);
    CHECK(logged("dropped"));

    /* Forged ids. */
    Sdkpp_AuthorizationArgs forged = {(void*)(uintptr_t)0xdeadbeefcafef00dULL};
    Sdkpp_AuthorizationArgs_SetClientId(&forged, 1);
    CHECK(logged("forged"));
    forged.opaque = (void*)(uintptr_t)0x0100000100000000ULL; /* right shape, never issued */
    Sdkpp_AuthorizationArgs_SetClientId(&forged, 1);
    CHECK(logged("AuthorizationArgs"));

    /* An object of another class. */
    Sdkpp_AuthorizationArgs wrong = {logClient.opaque};
    CHECK(Sdkpp_AuthorizationArgs_ClientId(&wrong) == 0);
    CHECK(logged("expected an object of class AuthorizationArgs but got one of class Client"));

    /* NULL self and NULL out-parameters. */
    Sdkpp_AuthorizationArgs_SetClientId(NULL, 1);
    CHECK(logged("pointer is NULL"));
    Sdkpp_AuthorizationArgs_Init(NULL);
    CHECK(logged("self is NULL"));
    Sdkpp_AuthorizationArgs live;
    Sdkpp_AuthorizationArgs_Init(&live);
    Sdkpp_AuthorizationArgs_SetScopes(&live, str("kept"));
    Sdkpp_AuthorizationArgs_Scopes(&live, NULL);
    CHECK(logged("returnValue is NULL"));
    Sdkpp_Client_GetDefaultCommunicationScopes(NULL);
    CHECK(logged("returnValue is NULL"));

    /* A NULL string with a size, an absurd size, and invalid UTF-8: refused, the old value kept. */
    Sdkpp_AuthorizationArgs_SetScopes(&live, (Sdkpp_String){NULL, 5});
    CHECK(logged("NULL string pointer"));
    Sdkpp_AuthorizationArgs_SetScopes(&live, (Sdkpp_String){(uint8_t*)"x", (size_t)1 << 40});
    CHECK(logged("limit"));
    static const uint8_t bad[] = {'o', 'k', 0xC3, 0x28, 0xFF};
    Sdkpp_AuthorizationArgs_SetScopes(&live, (Sdkpp_String){(uint8_t*)bad, sizeof bad});
    CHECK(logged("not valid UTF-8"));
    Sdkpp_String badOpt = {(uint8_t*)bad, sizeof bad};
    Sdkpp_AuthorizationArgs_SetState(&live, &badOpt);
    CHECK(logged("not valid UTF-8"));
    CHECK(!Sdkpp_AuthorizationArgs_State(&live, &out));
    Sdkpp_AuthorizationArgs_Scopes(&live, &out);
    CHECK_STR(out, "kept", 4);

    /* An enum value that is not an enumerator. */
    Sdkpp_IntegrationType bogus = (Sdkpp_IntegrationType)99;
    Sdkpp_AuthorizationArgs_SetIntegrationType(&live, &bogus);
    CHECK(logged("is not a value of IntegrationType"));
    Sdkpp_IntegrationType it;
    CHECK(!Sdkpp_AuthorizationArgs_IntegrationType(&live, &it));

    /* A refused async call frees userData at once; a NULL callback too. */
    int marker = 0;
    frees = 0;
    Sdkpp_Client dead = {(void*)(uintptr_t)0x0400000100000fffULL};
    Sdkpp_Client_IsDiscordAppInstalled(&dead, on_installed, count_free, &marker);
    CHECK(frees == 1);
    CHECK(logged("IsDiscordAppInstalled"));
    Sdkpp_Client_IsDiscordAppInstalled(&logClient, NULL, count_free, &marker);
    CHECK(frees == 2);
    CHECK(logged("callback is NULL"));
    Sdkpp_Client_AddLogCallback(&logClient, on_log, count_free, &marker, (Sdkpp_LoggingSeverity)77);
    CHECK(frees == 3);
    CHECK(logged("is not a value of LoggingSeverity"));
    Sdkpp_Client_SetHttpRequestTimeout(&logClient, -5);
    CHECK(logged("not a positive timeout"));
    CHECK(Sdkpp_Client_GetHttpRequestTimeout(&logClient) == 30000);

    /* Spans and properties built by the game are released by the SDK's functions. */
    Sdkpp_Free(NULL);
    Sdkpp_FreeProperties((Sdkpp_Properties){0});
    Sdkpp_Properties props = {2, Sdkpp_Alloc(2 * sizeof(Sdkpp_String)), Sdkpp_Alloc(2 * sizeof(Sdkpp_String))};
    for (int i = 0; i < 2; i++) {
        props.keys[i] = (Sdkpp_String){Sdkpp_Alloc(3), 3};
        props.values[i] = (Sdkpp_String){Sdkpp_Alloc(0), 0};
    }
    Sdkpp_FreeProperties(props);

    /* Issue 12, class 4: every size a game passes is checked before anything is allocated or
     * read: NULL with 2^30, 2^62 and SIZE_MAX, in each kind of entry point that takes a size. */
    const size_t sizes[] = {(size_t)1 << 30, (size_t)1 << 62, SIZE_MAX};
    frees = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = sizes[i];
        void* p = Sdkpp_Alloc(n);
        CHECK(p == NULL || n == (size_t)1 << 30); /* 1 GiB itself is allowed; above is refused */
        Sdkpp_Free(p);
        if (n > (size_t)1 << 30) CHECK(logged("over the limit"));

        Sdkpp_FreeProperties((Sdkpp_Properties){n, NULL, NULL});
        if (n > ((size_t)1 << 16)) CHECK(logged("over the limit"));

        Sdkpp_Properties nulls = {n, NULL, NULL};
        Sdkpp_Client_CreateOrJoinLobbyWithMetadata(&logClient, str("s"), nulls, (Sdkpp_Properties){0}, NULL, count_free, &marker);
        CHECK(logged("NULL keys or values"));
        Sdkpp_String keys[1] = {str("k")}, values[1] = {str("v")};
        Sdkpp_Properties lying = {n, keys, values};
        Sdkpp_Client_SendLobbyMessageWithMetadata(&logClient, 1, str("hi"), lying, NULL, count_free, &marker);
        CHECK(logged("over the limit"));
        Sdkpp_Client_SendUserMessageWithMetadata(&logClient, 1, (Sdkpp_String){NULL, n}, (Sdkpp_Properties){0}, NULL, count_free, &marker);
        CHECK(logged("NULL string pointer"));
        Sdkpp_AuthorizationArgs_SetScopes(&live, (Sdkpp_String){(uint8_t*)"x", n});
        CHECK(logged("limit"));
    }
    CHECK(frees == 9); /* each refused async call freed its userData */

    /* An ABI mismatch is refused loudly and stops object creation. */
    CHECK(run_self(argv[0], "abi-mismatch") == 0);

    Sdkpp_AuthorizationArgs_Drop(&live);
    Sdkpp_Client_Drop(&logClient);
    CHECK(Sdkpp_GetObjectCount() == 0);
    return check_report("abuse_test");
}
