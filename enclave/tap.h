/* enclave/tap.h — per-test results of a hidden-test run, from TAP.
 *
 * The test command writes TAP (Test Anything Protocol, version 12/13/14) to
 * the results descriptor (RLVR_RESULTS_FD); the runtime reads it through a
 * pipe outside the sandbox. Parsing is strict, because a channel that code
 * under test might reach should not be lenient:
 * - one plan line "1..N" (before or after the results) is the completion
 *   marker; without it the run is incomplete;
 * - result lines "ok|not ok [NUMBER] [- ]NAME [# SKIP|TODO ...]"; numbers
 *   are 1..N, each at most once (missing numbers count in sequence);
 * - "TAP version N", comments ("# ...") and indented lines (YAML, subtests)
 *   are ignored; "Bail out!" and any other line make the stream malformed.
 * The judge compares the results with the tests the task requires, checks
 * the command's exit status against them, and never lets "no results" or a
 * skip pass. */
#ifndef RLVR_ENCLAVE_TAP_H
#define RLVR_ENCLAVE_TAP_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    RLVR_TAP_PASS = 0,
    RLVR_TAP_FAIL = 1, /* "not ok", with or without a directive */
    RLVR_TAP_SKIP = 2, /* "ok ... # SKIP" */
    RLVR_TAP_TODO = 3, /* "ok ... # TODO": not a pass either */
} rlvr_tap_status;

typedef struct {
    char *name;
    int number;
    rlvr_tap_status status;
} rlvr_tap_test;

typedef struct {
    int planned;          /* N of "1..N"; -1 when there was no plan */
    bool bail_out;
    bool malformed;       /* a line that is not TAP, two plans, a number out of range or repeated */
    int invalid_reason;   /* with malformed, why (enclave/reason.h) when it is not RESULTS_INVALID: a
                             JUnit file refused as unsafe or too large (enclave/junit.h); 0 otherwise */
    rlvr_tap_test *tests;
    int n_tests;
} rlvr_tap_report;

/* Parses a TAP stream. Only allocation failures are errors. */
int rlvr_tap_parse(const char *text, size_t len, rlvr_tap_report *out);
void rlvr_tap_report_free(rlvr_tap_report *r);

/* The result for `name`, or NULL; *count receives how often it appears. */
const rlvr_tap_test *rlvr_tap_find(const rlvr_tap_report *r, const char *name, int *count);

typedef struct {
    const char *const *required;    /* names that must pass (NULL: every test in the stream) */
    const char *const *quarantined; /* names removed from the reward */
    int exit_code;                  /* of the test command: 0..255, or -1 when a signal ended it */
    const char *const *pass_to_pass;/* those of `required` that passed before the change; the others are
                                       FAIL_TO_PASS (required NULL: every test in the stream is) */
} rlvr_tap_expect;

typedef struct {
    int reason; /* RLVR_REASON_NONE when every required test passed */
    int passed; /* required (not quarantined) tests that passed */
    int total;  /* required (not quarantined) tests: partial credit = passed / total */
    int f2p_passed, f2p_total; /* the same for the FAIL_TO_PASS tests among them */
    bool p2p_failed;           /* a PASS_TO_PASS test did not pass (failed, skipped or missing) */
} rlvr_tap_judgement;

/* Judges a parsed stream (enclave/reason.h codes):
 * malformed or bail out → RESULTS_INVALID (or the report's invalid_reason); no results → NO_RESULTS; no plan,
 * fewer or more results than planned, or a required test missing →
 * INCOMPLETE; a required test failed → TESTS_FAILED; skipped or TODO →
 * TEST_SKIPPED; everything passed but the command failed (exit status not
 * 0 or a signal) → EXIT_STATUS. Where a run earns no partial credit (invalid
 * or no results, a signal, EXIT_STATUS) passed and f2p_passed are 0. */
void rlvr_tap_judge(const rlvr_tap_report *r, const rlvr_tap_expect *expect, rlvr_tap_judgement *out);

#endif
