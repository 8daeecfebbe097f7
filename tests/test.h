/* tests/test.h — a tiny test harness: CHECK macros that count failures and
 * name the file and line, and helpers shared by the C tests.
 * A test program returns test_summary(): 0 when every check held. */
#ifndef RLVR_TESTS_TEST_H
#define RLVR_TESTS_TEST_H

#include "core/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_checks, test_failures;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        test_checks++;                                                               \
        if (!(cond)) {                                                               \
            test_failures++;                                                         \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                            \
    } while (0)

#define CHECK_MSG(cond, ...)                                                         \
    do {                                                                             \
        test_checks++;                                                               \
        if (!(cond)) {                                                               \
            test_failures++;                                                         \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                            \
            fprintf(stderr, "\n");                                                   \
        }                                                                            \
    } while (0)

/* A library call that must succeed; prints rlvr_error_last() otherwise. */
#define CHECK_OK(expr)                                                                        \
    do {                                                                                      \
        int check_rc_ = (expr);                                                               \
        test_checks++;                                                                        \
        if (check_rc_ != 0) {                                                                 \
            test_failures++;                                                                  \
            fprintf(stderr, "%s:%d: %s returned %s: %s\n", __FILE__, __LINE__, #expr,        \
                    rlvr_error_name(check_rc_), rlvr_error_last());                           \
        }                                                                                     \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                  \
    do {                                                                                       \
        double check_a_ = (a), check_b_ = (b);                                                 \
        test_checks++;                                                                         \
        if (!(fabs(check_a_ - check_b_) <= (tol))) {                                           \
            test_failures++;                                                                   \
            fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s = %.10g, %s = %.10g (tol %g)\n",     \
                    __FILE__, __LINE__, #a, check_a_, #b, check_b_, (double)(tol));            \
        }                                                                                      \
    } while (0)

/* 0 when every check held; 1 when one failed, or when none ran (a test
 * that checked nothing proves nothing: a loop over an empty fixture, a
 * skipped branch). */
static inline int test_summary(const char *name) {
    printf("%s: %d checks, %d failed\n", name, test_checks, test_failures);
    if (test_checks == 0) {
        printf("%s: FAILED: ran no check\n", name);
        return 1;
    }
    return test_failures ? 1 : 0;
}

/* Path under the source tree (RLVR_SOURCE_DIR is set by ctest). */
static inline const char *test_source_path(char *buf, size_t cap, const char *rel) {
    const char *root = getenv("RLVR_SOURCE_DIR");
    snprintf(buf, cap, "%s/%s", root ? root : ".", rel);
    return buf;
}

#endif
