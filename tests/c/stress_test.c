/* Random calls to every export of sdkpp.h from several threads, as a careless or hostile game
 * would make them: forged, dropped, zero and mistyped objects, NULL pointers, odd and huge sizes,
 * invalid UTF-8, enum values that are not enumerators, callbacks with and without free functions,
 * live objects created and dropped at random. At the end, after dropping what it holds: no crash,
 * no live object, and each callback's userData freed exactly once by its free function.
 *
 * The callers of the description's exports are generated (stress_gen.h, by build/gen); this file
 * gives them their random values and runs them. It runs itself in a child process inside a
 * scratch directory and a scratch environment, because some calls write files (a log directory,
 * launch registrations) wherever their random arguments point.
 *
 *   stress_test [calls [threads [seed [filter]]]]
 *
 * Defaults: 1000000 calls on 4 threads, a seed from the clock, every export (a filter keeps the
 * exports whose name contains it).
 */
#define _DEFAULT_SOURCE
#define _XOPEN_SOURCE 700
#include "sdkpp.h"
#include "check.h"

#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- randomness: one generator per thread, seeded from the run's seed */

typedef struct Rng {
    uint64_t s;
} Rng;

static uint64_t next(Rng* r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL); /* splitmix64 */
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static bool chance(Rng* r, unsigned n) { return next(r) % n == 0; }
static bool rnd_null(Rng* r) { return chance(r, 16); }
static bool rnd_bool(Rng* r) { return next(r) & 1; }

static uint64_t rnd_u64(Rng* r)
{
    switch (next(r) % 9) {
    case 0: return 0;
    case 1: return 1;
    case 2: return next(r) % 100;
    case 3: return 1ULL << 63;
    case 4: return UINT64_MAX;
    case 5: return 0x7FFFFFFF;
    case 6: return 0xFFFFFFFF; /* -1 as a 32-bit integer */
    case 7: return 1477636521984000000ULL + next(r) % 1000;
    default: return next(r);
    }
}

static float rnd_float(Rng* r)
{
    static const float odd[] = {0.0f, -0.0f, 1.0f, -1.0f, 1e30f, -1e30f, 1e-40f};
    switch (next(r) % 4) {
    case 0: return NAN;
    case 1: return chance(r, 2) ? INFINITY : -INFINITY;
    case 2: return odd[next(r) % (sizeof odd / sizeof odd[0])];
    default: return (float)(next(r) % 2000) / 1000.0f;
    }
}

static int32_t rnd_enum(Rng* r)
{
    switch (next(r) % 8) {
    case 0: return -1;
    case 1: return 99;
    case 2: return INT32_MAX;
    case 3: return INT32_MIN;
    case 4: return (int32_t)next(r);
    default: return (int32_t)(next(r) % 8);
    }
}

/* Sizes a borrowed string, map or span may claim without the SDK reading past what it was lent:
 * each is over the SDK's limit for its kind, so the SDK must refuse it unread. */
static size_t huge(Rng* r, size_t limit)
{
    const size_t sizes[] = {limit + 1, (size_t)1 << 30 > limit ? (size_t)1 << 30 : limit + 2, (size_t)1 << 62, SIZE_MAX};
    return sizes[next(r) % 4];
}

static _Thread_local uint8_t strbuf[64];

static Sdkpp_String rnd_string(Rng* r)
{
    static const char* const words[] = {"openid sdk.social_layer", "\xC3\xA9 \xC3\xBC \xE6\x97\xA5 \xF0\x9F\x8E\xAE", "state-123",
        "http://127.0.0.1:1/", "http://127.0.0.1:1/api/v10", "lobby-secret", "1477636521984000011", "x"};
    static const uint8_t bad[] = {'o', 'k', 0xC3, 0x28, 0xFF, 0xED, 0xA0, 0x80};
    switch (next(r) % 12) {
    case 0: return (Sdkpp_String){NULL, 0};
    case 1: return (Sdkpp_String){NULL, 1 + next(r) % 8};
    case 2: return (Sdkpp_String){strbuf, huge(r, (size_t)256 << 20)};
    case 3: return (Sdkpp_String){(uint8_t*)bad, 1 + next(r) % sizeof bad};
    case 4: return (Sdkpp_String){(uint8_t*)"a\0b", 3};
    case 5: case 6: case 7: {
        const char* w = words[next(r) % (sizeof words / sizeof words[0])];
        return (Sdkpp_String){(uint8_t*)w, strlen(w)};
    }
    default: {
        size_t n = next(r) % sizeof strbuf;
        bool ascii = chance(r, 2);
        for (size_t i = 0; i < n; i++) {
            uint8_t c = (uint8_t)next(r);
            strbuf[i] = ascii ? (uint8_t)(' ' + c % 95) : c;
        }
        return (Sdkpp_String){strbuf, n};
    }
    }
}

static _Thread_local Sdkpp_String pkeys[4], pvalues[4];

static Sdkpp_Properties rnd_props(Rng* r)
{
    switch (next(r) % 6) {
    case 0: return (Sdkpp_Properties){0, NULL, NULL};
    case 1: return (Sdkpp_Properties){chance(r, 2) ? 3 : huge(r, 1 << 16), NULL, chance(r, 2) ? pvalues : NULL};
    case 2: return (Sdkpp_Properties){huge(r, 1 << 16), pkeys, pvalues};
    default: {
        size_t n = next(r) % 5;
        for (size_t i = 0; i < n; i++) {
            pkeys[i] = chance(r, 4) ? (Sdkpp_String){(uint8_t*)"k", 1} : rnd_string(r); /* duplicate keys too */
            pvalues[i] = rnd_string(r);
        }
        return (Sdkpp_Properties){n, pkeys, pvalues};
    }
    }
}

/* Spans are made for the inputs the description may declare (none today). */
static _Thread_local uint64_t idbuf[8];

__attribute__((unused)) static Sdkpp_UInt64Span rnd_uint64s(Rng* r)
{
    switch (next(r) % 5) {
    case 0: return (Sdkpp_UInt64Span){NULL, 0};
    case 1: return (Sdkpp_UInt64Span){NULL, chance(r, 2) ? 2 : huge(r, 1 << 20)};
    case 2: return (Sdkpp_UInt64Span){idbuf, huge(r, 1 << 20)};
    default: {
        size_t n = next(r) % 9;
        for (size_t i = 0; i < n; i++) idbuf[i] = rnd_u64(r);
        return (Sdkpp_UInt64Span){idbuf, n};
    }
    }
}

/* ---- objects: a pool of live ones per class, shared by the threads, and recently dropped ids */

#define POOL_CAP 48
#define DEAD_CAP 256

typedef struct Pool {
    pthread_mutex_t mu;
    void* ids[POOL_CAP];
    int n;
} Pool;

static void* dead[DEAD_CAP];
static atomic_uint deadNext;
static atomic_long created;

static void remember_dead(void* id)
{
    if (id) dead[atomic_fetch_add(&deadNext, 1) % DEAD_CAP] = id;
}

static void take_obj(int cls, void* id);
static void* rnd_id(Rng* r, int cls);
static void* rnd_take(Rng* r, int cls);
static size_t rnd_ids_of(Rng* r, int cls, void** buf, size_t cap);
static void* ud_new(Rng* r, Sdkpp_FreeFn* fn);
static void ud_called(void* userData);

#include "stress_gen.h"

static Pool pools[CLASS_COUNT];

/* take_obj adopts an object the SDK gave: into the pool, or dropped when the pool is full. */
static void take_obj(int cls, void* id)
{
    if (!id) return;
    atomic_fetch_add(&created, 1);
    Pool* p = &pools[cls];
    pthread_mutex_lock(&p->mu);
    if (p->n < POOL_CAP) {
        p->ids[p->n++] = id;
        id = NULL;
    }
    pthread_mutex_unlock(&p->mu);
    if (id) stress_drop[cls](id);
}

/* live returns an object of class cls from the pool, removed from it when take is set. */
static void* live(Rng* r, int cls, bool take)
{
    Pool* p = &pools[cls];
    void* id = NULL;
    pthread_mutex_lock(&p->mu);
    if (p->n > 0) {
        int i = (int)(next(r) % (uint64_t)p->n);
        id = p->ids[i];
        if (take) p->ids[i] = p->ids[--p->n];
    }
    pthread_mutex_unlock(&p->mu);
    return id;
}

/* rnd_id is an id for an argument of class cls: mostly a live one (which another thread may be
 * dropping at that moment), else zero, forged, dropped, or of another class. */
static void* rnd_id(Rng* r, int cls)
{
    switch (next(r) % 12) {
    case 0: return NULL;
    case 1: return (void*)(uintptr_t)next(r);
    case 2: return (void*)(uintptr_t)(rnd_u64(r) ^ (uintptr_t)live(r, cls, false)); /* a near miss */
    case 3: return dead[next(r) % DEAD_CAP];
    case 4: return live(r, (int)(next(r) % CLASS_COUNT), false);
    default: return live(r, cls, false);
    }
}

/* rnd_take is the object a Drop gets: one taken out of the pool, or a bad id, or a live id that
 * stays in the pool (a double drop from two copies of one handle). */
static void* rnd_take(Rng* r, int cls)
{
    void* id = chance(r, 4) ? rnd_id(r, cls) : live(r, cls, true);
    remember_dead(id);
    return id;
}

__attribute__((unused)) static size_t rnd_ids_of(Rng* r, int cls, void** buf, size_t cap)
{
    size_t n = next(r) % (cap + 1);
    for (size_t i = 0; i < n; i++) buf[i] = rnd_id(r, cls);
    return n;
}

/* ---- userData: one tracker per async call, counting its frees and its callbacks */

typedef struct Tracker {
    atomic_int frees;
    atomic_int calls;
    bool counted; /* given with a free function */
} Tracker;

#define MAX_TRACKERS ((size_t)1 << 21)
static Tracker* trackers;
static atomic_size_t nTrackers;
static atomic_long violations;

static void SDKPP_CALL ud_free(void* userData)
{
    Tracker* t = userData;
    if (!t) return;
    if (atomic_fetch_add(&t->frees, 1) != 0) {
        atomic_fetch_add(&violations, 1);
        fprintf(stderr, "stress: userData %p freed twice\n", userData);
    }
}

static void* ud_new(Rng* r, Sdkpp_FreeFn* fn)
{
    size_t i = atomic_fetch_add(&nTrackers, 1);
    if (i >= MAX_TRACKERS || chance(r, 16)) {
        *fn = chance(r, 2) ? ud_free : NULL; /* NULL userData, with or without a free function */
        return NULL;
    }
    Tracker* t = &trackers[i];
    t->counted = !chance(r, 8);
    *fn = t->counted ? ud_free : NULL;
    return t;
}

static void ud_called(void* userData)
{
    if (!userData) return;
    Tracker* t = userData;
    if (t < trackers || t >= trackers + MAX_TRACKERS) {
        atomic_fetch_add(&violations, 1);
        fprintf(stderr, "stress: a callback got userData %p that no call gave\n", userData);
        return;
    }
    if (atomic_load(&t->frees) != 0) {
        atomic_fetch_add(&violations, 1);
        fprintf(stderr, "stress: a callback ran after its userData %p was freed\n", userData);
    }
    atomic_fetch_add(&t->calls, 1);
}

/* ---- the runtime's functions */

static void call_Sdkpp_Alloc(Rng* r)
{
    const size_t sizes[] = {0, 1, 100, ((size_t)1 << 30) + 1, (size_t)1 << 62, SIZE_MAX};
    Sdkpp_Free(Sdkpp_Alloc(sizes[next(r) % 6]));
}

static void call_Sdkpp_Free(Rng* r) { Sdkpp_Free(chance(r, 2) ? NULL : Sdkpp_Alloc(16)); }

static void call_Sdkpp_FreeProperties(Rng* r)
{
    switch (next(r) % 4) {
    case 0: Sdkpp_FreeProperties((Sdkpp_Properties){0, NULL, NULL}); return;
    case 1: Sdkpp_FreeProperties((Sdkpp_Properties){huge(r, 1 << 16), NULL, NULL}); return;
    default: {
        size_t n = next(r) % 4;
        Sdkpp_Properties p = {n, Sdkpp_Alloc(n * sizeof(Sdkpp_String)), chance(r, 4) ? NULL : Sdkpp_Alloc(n * sizeof(Sdkpp_String))};
        for (size_t i = 0; i < n; i++) {
            p.keys[i] = (Sdkpp_String){Sdkpp_Alloc(3), 3};
            if (p.values) p.values[i] = (Sdkpp_String){chance(r, 2) ? NULL : Sdkpp_Alloc(1), 0};
        }
        Sdkpp_FreeProperties(p);
    }
    }
}

static void call_Sdkpp_RunCallbacks(Rng* r)
{
    (void)r;
    Sdkpp_RunCallbacks();
}

static void call_Sdkpp_WaitForCallbacks(Rng* r) { (void)Sdkpp_WaitForCallbacks((uint32_t)(next(r) % 3)); }

static void call_Sdkpp_WaitForCallbackSignal(Rng* r)
{
    uint64_t seen = next(r) % 4;
    (void)Sdkpp_WaitForCallbackSignal(chance(r, 8) ? NULL : &seen, (uint32_t)(next(r) % 3));
}

static void call_Sdkpp_ResetCallbacks(Rng* r)
{
    if (chance(r, 8)) Sdkpp_ResetCallbacks(); /* it discards the other threads' results too */
}

static void SDKPP_CALL stress_fallback_log(Sdkpp_String message, Sdkpp_LoggingSeverity severity, void* userData)
{
    (void)severity;
    Sdkpp_Free(message.ptr);
    ud_called(userData);
}

static void call_Sdkpp_SetLogCallback(Rng* r)
{
    Sdkpp_FreeFn free_fn;
    void* ud = ud_new(r, &free_fn);
    Sdkpp_SetLogCallback(chance(r, 4) ? NULL : stress_fallback_log, free_fn, ud, (Sdkpp_LoggingSeverity)(next(r) % 6));
}

static void call_Sdkpp_Shutdown(Rng* r)
{
    /* It drops the other threads' objects and runs their callbacks: rarely, so that most calls
     * still reach live objects. Every userData is still freed exactly once, which the end checks. */
    if (chance(r, 256)) Sdkpp_Shutdown();
}

static void call_Sdkpp_SetFreeThreaded(Rng* r)
{
    (void)r;
    Sdkpp_SetFreeThreaded();
}

static void call_Sdkpp_GetVersion(Rng* r)
{
    (void)r;
    if (Sdkpp_GetVersion() != SDKPP_VERSION) atomic_fetch_add(&violations, 1);
}

static void call_Sdkpp_GetAbiVersion(Rng* r)
{
    (void)r;
    if (Sdkpp_GetAbiVersion() != SDKPP_ABI_VERSION) atomic_fetch_add(&violations, 1);
}

static void call_Sdkpp_GetObjectCount(Rng* r)
{
    (void)r;
    (void)Sdkpp_GetObjectCount();
}

/* Only the matching ABI: a mismatch (or NULL) refuses every object for the rest of the process,
 * which abuse_test checks in a child of its own. */
static void call_Sdkpp_CheckAbi(Rng* r)
{
    (void)r;
    Sdkpp_AbiInfo info = SDKPP_ABI_INFO_INIT;
    if (!Sdkpp_CheckAbi(&info)) atomic_fetch_add(&violations, 1);
}

/* ---- the run */

typedef struct Worker {
    pthread_t thread;
    Rng rng;
    long calls;
} Worker;

/* The calls made: every export, or those whose name has the filter in it (for hunting a fault). */
static size_t chosen[STRESS_CALLS];
static size_t nChosen;

static void* work(void* arg)
{
    Worker* w = arg;
    for (long i = 0; i < w->calls; i++) {
        stress_calls[chosen[next(&w->rng) % nChosen]].call(&w->rng);
        if (i % 64 == 0) Sdkpp_RunCallbacks();
    }
    return NULL;
}

/* drain drops every object in the pools; it reports whether there was any. */
static bool drain(void)
{
    bool any = false;
    for (int c = CLASS_COUNT - 1; c >= 0; c--) { /* the Client last: its results arrive as objects */
        for (;;) {
            pthread_mutex_lock(&pools[c].mu);
            void* id = pools[c].n > 0 ? pools[c].ids[--pools[c].n] : NULL;
            pthread_mutex_unlock(&pools[c].mu);
            if (!id) break;
            stress_drop[c](id); /* a stale id left by a double drop is refused, harmlessly */
            any = true;
        }
    }
    return any;
}

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int stress(long calls, int threads, uint64_t seed, const char* filter)
{
    for (size_t i = 0; i < STRESS_CALLS; i++) {
        if (!filter || strstr(stress_calls[i].name, filter)) chosen[nChosen++] = i;
    }
    if (nChosen == 0) {
        fprintf(stderr, "stress_test: no export matches %s\n", filter);
        return 2;
    }
    trackers = calloc(MAX_TRACKERS, sizeof *trackers);
    for (int c = 0; c < CLASS_COUNT; c++) pthread_mutex_init(&pools[c].mu, NULL);
    Sdkpp_AbiInfo info = SDKPP_ABI_INFO_INIT;
    CHECK(Sdkpp_CheckAbi(&info));

    double start = seconds();
    Worker* ws = calloc((size_t)threads, sizeof *ws);
    for (int i = 0; i < threads; i++) {
        ws[i].rng.s = seed * 1000003u + (uint64_t)i;
        ws[i].calls = calls / threads + (i < calls % threads);
        CHECK(pthread_create(&ws[i].thread, NULL, work, &ws[i]) == 0);
    }
    for (int i = 0; i < threads; i++) pthread_join(ws[i].thread, NULL);
    double ran = seconds() - start;

    /* Drop what is held; callbacks still queued run (a dropped Client's with ClientDestroyed) and
     * may hand over more objects, which are dropped in turn. The process-wide log callback is
     * the one callback no drop releases: clearing it frees its userData. */
    Sdkpp_SetLogCallback(NULL, NULL, NULL, Sdkpp_LoggingSeverity_None);
    int quiet = 0;
    for (int round = 0; round < 2000 && quiet < 5; round++) {
        bool held = drain();
        bool queued = Sdkpp_WaitForCallbacks(10);
        Sdkpp_RunCallbacks();
        quiet = held || queued || Sdkpp_GetObjectCount() != 0 ? 0 : quiet + 1;
    }
    uint64_t left = Sdkpp_GetObjectCount();
    CHECK(left == 0);
    if (left) fprintf(stderr, "stress: %llu objects still live\n", (unsigned long long)left);

    size_t n = atomic_load(&nTrackers);
    if (n > MAX_TRACKERS) n = MAX_TRACKERS;
    long wrong = 0, freed = 0, called = 0;
    for (size_t i = 0; i < n; i++) {
        int f = atomic_load(&trackers[i].frees);
        freed += f;
        called += atomic_load(&trackers[i].calls) > 0;
        if (f != (trackers[i].counted ? 1 : 0)) {
            if (wrong++ < 10) fprintf(stderr, "stress: userData %zu (free function: %s) freed %d times\n", i, trackers[i].counted ? "yes" : "no", f);
        }
    }
    CHECK(wrong == 0);
    CHECK(atomic_load(&violations) == 0);
    printf("stress_test: %ld calls to %zu exports on %d threads in %.1f s (%.0f calls/s), seed %llu\n", calls,
        nChosen, threads, ran, (double)calls / ran, (unsigned long long)seed);
    printf("stress_test: %ld objects adopted, %zu userData given (%ld freed, %ld called back), %ld wrong\n",
        atomic_load(&created), n, freed, called, wrong);
    free(ws);
    free(trackers);
    return check_report("stress_test");
}

/* ---- the scratch process */

static int rm_entry(const char* path, const struct stat* st, int flag, struct FTW* ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* sandboxed runs the test in a child with a scratch directory as its working directory, home,
 * configuration, runtime and launch directories, and no PATH (nothing it starts can be found).
 * The child's stderr (the SDK's log of every refused call) goes to a file, shown on failure. */
static int sandboxed(int argc, char** argv)
{
    char dir[] = "/tmp/sdkpp-stress-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char env[8][4200];
    snprintf(env[0], sizeof env[0], "SDKPP_STRESS_DIR=%s", dir);
    snprintf(env[1], sizeof env[1], "HOME=%s", dir);
    snprintf(env[2], sizeof env[2], "XDG_CONFIG_HOME=%s/config", dir);
    snprintf(env[3], sizeof env[3], "XDG_RUNTIME_DIR=%s", dir);
    snprintf(env[4], sizeof env[4], "TMPDIR=%s", dir);
    snprintf(env[5], sizeof env[5], "SDKPP_LAUNCH_DIR=%s/launch", dir);
    snprintf(env[6], sizeof env[6], "PATH=/nonexistent");
    char* envp[] = {env[0], env[1], env[2], env[3], env[4], env[5], env[6], NULL};
    char logPath[4200];
    snprintf(logPath, sizeof logPath, "%s/stderr.log", dir);

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 2, logPath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    char* args[6] = {argv[0], NULL, NULL, NULL, NULL, NULL};
    for (int i = 1; i < argc && i < 5; i++) args[i] = argv[i];
    pid_t pid;
    int status = 0, rc = 1;
    if (posix_spawn(&pid, "/proc/self/exe", &fa, NULL, args, envp) != 0) {
        perror("posix_spawn");
    } else if (waitpid(pid, &status, 0) == pid && WIFEXITED(status)) {
        rc = WEXITSTATUS(status);
    }
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        fprintf(stderr, "stress_test: the run failed (%s %d); the end of its log:\n",
            WIFSIGNALED(status) ? "signal" : "exit status", WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
        FILE* f = fopen(logPath, "r");
        if (f) {
            fseek(f, 0, SEEK_END);
            long size = ftell(f);
            fseek(f, size > 8192 ? size - 8192 : 0, SEEK_SET);
            char buf[8192];
            size_t n = fread(buf, 1, sizeof buf, f);
            fwrite(buf, 1, n, stderr);
            fclose(f);
        }
        rc = 1;
    }
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return rc;
}

int main(int argc, char** argv)
{
    const char* dir = getenv("SDKPP_STRESS_DIR");
    if (!dir) return sandboxed(argc, argv);
    if (chdir(dir) != 0) {
        perror("chdir");
        return 1;
    }
    long calls = argc > 1 ? atol(argv[1]) : 1000000;
    int threads = argc > 2 ? atoi(argv[2]) : 4;
    uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 10) : (uint64_t)time(NULL);
    if (calls < 1 || threads < 1) {
        fprintf(stderr, "usage: stress_test [calls [threads [seed [filter]]]]\n");
        return 2;
    }
    return stress(calls, threads, seed, argc > 4 ? argv[4] : NULL);
}
