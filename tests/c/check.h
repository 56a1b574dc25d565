/* A tiny test harness for the C tests: CHECK records a failure and goes on. */
#ifndef SDKPP_TEST_CHECK_H
#define SDKPP_TEST_CHECK_H
#include <stdio.h>
#include <string.h>

static int checks_passed, checks_failed;

#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (cond) {                                                                   \
            checks_passed++;                                                          \
        } else {                                                                      \
            checks_failed++;                                                          \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                             \
    } while (0)

/* CHECK_STR compares an Sdkpp_String with len bytes at want, then frees it. */
#define CHECK_STR(s, want, len)                                                       \
    do {                                                                              \
        Sdkpp_String s_ = (s);                                                        \
        CHECK(s_.size == (size_t)(len) && (len == 0 || memcmp(s_.ptr, want, len) == 0)); \
        Sdkpp_Free(s_.ptr);                                                           \
    } while (0)

static int check_report(const char* name)
{
    printf("%s: %d passed, %d failed\n", name, checks_passed, checks_failed);
    printf("%d passed, %d failed\n", checks_passed, checks_failed);
    return checks_failed ? 1 : 0;
}
#endif
