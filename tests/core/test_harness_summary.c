/* tests/core/test_harness_summary.c — the C tests' own harness: a program
 * that ran no check fails (test_summary returns 1), one whose checks all
 * held passes. */
#include "test.h"

int main(void) {
    int empty = test_summary("(no checks)"); /* nothing checked yet */
    int failures_before = test_failures;
    CHECK(empty == 1);
    CHECK(failures_before == 0);
    return test_summary("test_harness_summary");
}
