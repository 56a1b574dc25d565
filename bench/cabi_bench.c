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

/* per_call returns the median over rounds of the mean ns per call of f. */
static double per_call(void (*f)(void), int iters)
{
    enum { ROUNDS = 9 };
    double r[ROUNDS];
    for (int k = 0; k < ROUNDS; k++) {
        double t0 = now_ns();
        for (int i = 0; i < iters; i++) f();
        r[k] = (now_ns() - t0) / iters;
    }
    for (int i = 1; i < ROUNDS; i++)
        for (int j = i; j > 0 && r[j] < r[j - 1]; j--) {
            double t = r[j]; r[j] = r[j - 1]; r[j - 1] = t;
        }
    return r[ROUNDS / 2];
}

int main(int argc, char** argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 2000000;
    Sdkpp_AuthorizationArgs_Init(&args);
    Sdkpp_AuthorizationArgs_SetClientId(&args, 42);
    for (int i = 0; i < 3; i++) { /* warm up; interleave so drift hits all three alike */
        per_call(noop, iters / 10);
        per_call(getter, iters / 10);
        per_call(run_callbacks, iters / 10);
    }
    double bare = per_call(noop, iters);
    double get = per_call(getter, iters);
    double run = per_call(run_callbacks, iters);
    double bare2 = per_call(noop, iters);
    bare = bare < bare2 ? bare : bare2;
    printf("C ABI (median of 9 rounds x %d calls, one thread)\n", iters);
    printf("  anchor: bare exported cgo no-op            %7.1f ns/call\n", bare);
    printf("  Sdkpp_AuthorizationArgs_ClientId (getter)  %7.1f ns/call  ratio %.2fx  (target <= 1.5x)\n", get, get / bare);
    printf("  Sdkpp_RunCallbacks, empty queue            %7.1f ns/call  ratio %.2fx  (target <= 1.5x)\n", run, run / bare);
    Sdkpp_AuthorizationArgs_Drop(&args);
    return 0;
}
