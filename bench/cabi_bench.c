/* The cost of crossing the C ABI: a getter and an empty RunCallbacks, each beside a bare exported
 * cgo no-op measured in the same run, as a ratio. Built and run by bench/run.sh. */
#include "sdkpp.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

extern void Sdkpp_BenchNoop(void);

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static Sdkpp_AuthorizationArgs args;
static volatile uint64_t sink;

static void noop(void) { Sdkpp_BenchNoop(); }
static void getter(void) { sink += Sdkpp_AuthorizationArgs_ClientId(&args); }
static void run_callbacks(void) { Sdkpp_RunCallbacks(); }

enum { ROUNDS = 9, FUNCS = 3 };

/* round returns the mean ns per call of f over iters calls. */
static double round_of(void (*f)(void), int iters)
{
    double t0 = now_ns();
    for (int i = 0; i < iters; i++) f();
    return (now_ns() - t0) / iters;
}

/* median sorts r (ROUNDS values) and returns its middle. */
static double median(double* r)
{
    for (int i = 1; i < ROUNDS; i++)
        for (int j = i; j > 0 && r[j] < r[j - 1]; j--) {
            double t = r[j]; r[j] = r[j - 1]; r[j - 1] = t;
        }
    return r[ROUNDS / 2];
}

/* per_call sets out[k] to the median over ROUNDS rounds of the mean ns per call of fs[k]. The
 * functions take turns round by round, so that a slow stretch of the machine (a second or so
 * of another process's work) meets each of them alike, where rounds run function by function
 * put it all on one. */
static void per_call(void (*fs[FUNCS])(void), int iters, double out[FUNCS])
{
    double r[FUNCS][ROUNDS];
    for (int k = 0; k < ROUNDS; k++)
        for (int f = 0; f < FUNCS; f++) r[f][k] = round_of(fs[f], iters);
    for (int f = 0; f < FUNCS; f++) out[f] = median(r[f]);
}

int main(int argc, char** argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 2000000;
    Sdkpp_AuthorizationArgs_Init(&args);
    Sdkpp_AuthorizationArgs_SetClientId(&args, 42);
    void (*fs[FUNCS])(void) = {noop, getter, run_callbacks};
    double t[FUNCS];
    per_call(fs, iters / 10, t); /* warm up */
    per_call(fs, iters, t);
    double bare = t[0], get = t[1], run = t[2];
    printf("C ABI (median of %d rounds x %d calls, one thread, the three in turns round by round)\n", ROUNDS, iters);
    printf("  anchor: bare exported cgo no-op            %7.1f ns/call\n", bare);
    printf("  Sdkpp_AuthorizationArgs_ClientId (getter)  %7.1f ns/call  ratio %.2fx  (target <= 1.5x)\n", get, get / bare);
    printf("  Sdkpp_RunCallbacks, empty queue            %7.1f ns/call  ratio %.2fx  (target <= 1.5x)\n", run, run / bare);
    Sdkpp_AuthorizationArgs_Drop(&args);
    return 0;
}
