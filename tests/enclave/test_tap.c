/* tests/enclave/test_tap.c — TAP parsing and judging. */
#include "test.h"

#include "enclave/reason.h"
#include "enclave/tap.h"

static int judge_expect(const char *tap, const rlvr_tap_expect *x, rlvr_tap_judgement *j) {
    rlvr_tap_report r;
    CHECK_OK(rlvr_tap_parse(tap, strlen(tap), &r));
    rlvr_tap_judgement local;
    if (!j) j = &local;
    rlvr_tap_judge(&r, x, j);
    rlvr_tap_report_free(&r);
    return j->reason;
}

static int judge(const char *tap, const char *const *required, const char *const *quarantined, int exit_code,
                 rlvr_tap_judgement *j) {
    rlvr_tap_expect x = {.required = required, .quarantined = quarantined, .exit_code = exit_code};
    return judge_expect(tap, &x, j);
}

/* FAIL_TO_PASS counts beside the totals: a PASS_TO_PASS test that does not
 * pass (failed, skipped or missing) is flagged; the runs that earn no
 * partial credit earn no FAIL_TO_PASS credit either. */
static void test_judge_fail_to_pass(void) {
    const char *const req[] = {"mul", "mul_neg", "add", "sub", NULL};
    const char *const p2p[] = {"add", "sub", NULL};
    rlvr_tap_expect x = {.required = req, .pass_to_pass = p2p, .exit_code = 1};
    rlvr_tap_judgement j;
#define F2P(passed_, total_, p2p_failed_) \
    (j.f2p_passed == (passed_) && j.f2p_total == (total_) && j.p2p_failed == (p2p_failed_))
    /* nothing fixed; one of two fixed; both fixed and sub broken */
    CHECK(judge_expect("1..4\nnot ok 1 mul\nnot ok 2 mul_neg\nok 3 add\nok 4 sub\n", &x, &j) ==
          RLVR_REASON_TESTS_FAILED);
    CHECK(F2P(0, 2, false) && j.passed == 2 && j.total == 4);
    CHECK(judge_expect("1..4\nok 1 mul\nnot ok 2 mul_neg\nok 3 add\nok 4 sub\n", &x, &j) == RLVR_REASON_TESTS_FAILED);
    CHECK(F2P(1, 2, false) && j.passed == 3);
    CHECK(judge_expect("1..4\nok 1 mul\nok 2 mul_neg\nok 3 add\nnot ok 4 sub\n", &x, &j) == RLVR_REASON_TESTS_FAILED);
    CHECK(F2P(2, 2, true) && j.passed == 3);
    /* a skipped or missing PASS_TO_PASS test counts as broken */
    CHECK(judge_expect("1..4\nok 1 mul\nok 2 mul_neg\nok 3 add\nok 4 sub # SKIP\n", &x, &j) ==
          RLVR_REASON_TEST_SKIPPED);
    CHECK(F2P(2, 2, true));
    CHECK(judge_expect("1..3\nok 1 mul\nnot ok 2 mul_neg\nok 3 add\n", &x, &j) == RLVR_REASON_INCOMPLETE);
    CHECK(F2P(1, 2, true));
    /* no credit: a signal, a repeated name */
    x.exit_code = -1;
    CHECK(judge_expect("1..4\nok 1 mul\nnot ok 2 mul_neg\nok 3 add\nok 4 sub\n", &x, &j) ==
          RLVR_REASON_TESTS_FAILED);
    CHECK(j.f2p_passed == 0 && j.passed == 0);
    x.exit_code = 1;
    CHECK(judge_expect("1..5\nok 1 mul\nnot ok 2 mul_neg\nok 3 add\nok 4 sub\nok 5 mul\n", &x, &j) ==
          RLVR_REASON_RESULTS_INVALID);
    CHECK(j.f2p_passed == 0 && j.passed == 0);
    /* quarantined tests are out of both lists */
    const char *const q[] = {"mul_neg", "sub", NULL};
    x.quarantined = q;
    CHECK(judge_expect("1..4\nok 1 mul\nnot ok 2 mul_neg\nok 3 add\nnot ok 4 sub\n", &x, &j) == RLVR_REASON_NONE);
    CHECK(F2P(1, 1, false) && j.total == 2);
    /* without a list of names every test is FAIL_TO_PASS */
    x = (rlvr_tap_expect){.exit_code = 1};
    CHECK(judge_expect("1..3\nok 1 a\nnot ok 2 b\nok 3 c\n", &x, &j) == RLVR_REASON_TESTS_FAILED);
    CHECK(F2P(2, 3, false) && j.passed == 2 && j.total == 3);
#undef F2P
}

static void test_parse(void) {
    const char *text = "TAP version 13\n1..4\nok 1 - add\nnot ok 2 - mul # expected 6\n"
                       "ok 3 sub # SKIP no sub today\n  ---\n  yaml: here\n  ...\n# a comment\nnot ok - neg # todo later\nok 5 - pos # TODO\n";
    rlvr_tap_report r;
    CHECK_OK(rlvr_tap_parse(text, strlen(text), &r));
    CHECK(r.planned == 4 && r.n_tests == 5 && r.malformed && !r.bail_out); /* 5 > 4 */
    CHECK(strcmp(r.tests[0].name, "add") == 0 && r.tests[0].status == RLVR_TAP_PASS && r.tests[0].number == 1);
    CHECK(strcmp(r.tests[1].name, "mul") == 0 && r.tests[1].status == RLVR_TAP_FAIL);
    CHECK(strcmp(r.tests[2].name, "sub") == 0 && r.tests[2].status == RLVR_TAP_SKIP);
    CHECK(strcmp(r.tests[3].name, "neg") == 0 && r.tests[3].status == RLVR_TAP_FAIL && r.tests[3].number == 4);
    CHECK(strcmp(r.tests[4].name, "pos") == 0 && r.tests[4].status == RLVR_TAP_TODO);
    int count = 0;
    CHECK(rlvr_tap_find(&r, "sub", &count) == &r.tests[2] && count == 1);
    CHECK(rlvr_tap_find(&r, "nope", &count) == NULL && count == 0);
    rlvr_tap_report_free(&r);

    /* plan at the end; CRLF */
    text = "ok 1 a\r\nok 2 b\r\n1..2\r\n";
    CHECK_OK(rlvr_tap_parse(text, strlen(text), &r));
    CHECK(r.planned == 2 && r.n_tests == 2 && !r.malformed && strcmp(r.tests[1].name, "b") == 0);
    rlvr_tap_report_free(&r);

    /* strictness */
    const char *bad[] = {
        "1..2\nok 1 a\nok 1 b\n",         /* repeated number */
        "1..1\nok 1 a\nok 2 b\n",         /* number out of range */
        "1..2\n1..2\nok 1 a\nok 2 b\n",   /* two plans */
        "1..1\nPASSED a\nok 1 a\n",       /* not TAP */
        "1..1\nok 0 a\n",                 /* number 0 */
        "1..x\nok 1 a\n",                 /* bad plan */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK_OK(rlvr_tap_parse(bad[i], strlen(bad[i]), &r));
        CHECK_MSG(r.malformed, "case %zu parsed as well-formed", i);
        rlvr_tap_report_free(&r);
    }
    const char nul[] = "1..1\nok 1 a\0b\n";
    CHECK_OK(rlvr_tap_parse(nul, sizeof nul - 1, &r));
    CHECK(r.malformed);
    rlvr_tap_report_free(&r);
    text = "1..2\nok 1 a\nBail out! broken\n";
    CHECK_OK(rlvr_tap_parse(text, strlen(text), &r));
    CHECK(r.bail_out);
    rlvr_tap_report_free(&r);
}

static void test_judge(void) {
    const char *const req[] = {"add", "mul", NULL};
    rlvr_tap_judgement j;
    CHECK(judge("1..2\nok 1 - add\nok 2 - mul\n", req, NULL, 0, &j) == RLVR_REASON_NONE);
    CHECK(j.passed == 2 && j.total == 2);
    CHECK(judge("1..2\nok 1 - add\nnot ok 2 - mul\n", req, NULL, 1, &j) == RLVR_REASON_TESTS_FAILED);
    CHECK(j.passed == 1 && j.total == 2);
    /* a failing exit status with nothing failed: forged or broken */
    CHECK(judge("1..2\nok 1 - add\nok 2 - mul\n", req, NULL, 1, NULL) == RLVR_REASON_EXIT_STATUS);
    CHECK(judge("1..2\nok 1 - add\nok 2 - mul\n", req, NULL, -1, NULL) == RLVR_REASON_EXIT_STATUS);
    /* a failure of a test the task does not name does not explain the exit
     * status (a decoy), nor does any failure explain a kill */
    CHECK(judge("1..3\nok 1 - add\nok 2 - mul\nnot ok 3 - other\n", req, NULL, 1, &j) == RLVR_REASON_EXIT_STATUS);
    CHECK(j.passed == 0);
    CHECK(judge("1..3\nok 1 - add\nok 2 - mul\nnot ok 3 - other\n", req, NULL, -1, &j) == RLVR_REASON_EXIT_STATUS);
    CHECK(j.passed == 0);
    CHECK(judge("1..2\nok 1 - add\nnot ok 2 - mul\n", req, NULL, -1, &j) == RLVR_REASON_TESTS_FAILED);
    CHECK(j.passed == 0);
    CHECK(judge("1..3\nok 1 - add\n", req, NULL, -1, &j) == RLVR_REASON_INCOMPLETE && j.passed == 0);
    /* a failing quarantined test does explain it */
    const char *const q_other[] = {"other", NULL};
    CHECK(judge("1..3\nok 1 - add\nok 2 - mul\nnot ok 3 - other\n", req, q_other, 1, &j) == RLVR_REASON_NONE);
    CHECK(j.passed == 2 && j.total == 2);
    /* skips and TODOs never pass a required test */
    CHECK(judge("1..2\nok 1 - add\nok 2 - mul # SKIP\n", req, NULL, 0, NULL) == RLVR_REASON_TEST_SKIPPED);
    CHECK(judge("1..2\nok 1 - add\nnot ok 2 - mul # TODO\n", req, NULL, 0, NULL) == RLVR_REASON_TESTS_FAILED);
    CHECK(judge("1..2\nok 1 - add\nok 2 - mul # TODO\n", req, NULL, 0, NULL) == RLVR_REASON_TEST_SKIPPED);
    /* no results, no plan, missing, too few, duplicates */
    CHECK(judge("", req, NULL, 0, NULL) == RLVR_REASON_NO_RESULTS);
    CHECK(judge("1..0 # SKIP all\n", req, NULL, 0, NULL) == RLVR_REASON_NO_RESULTS);
    CHECK(judge("ok 1 - add\nok 2 - mul\n", req, NULL, 0, NULL) == RLVR_REASON_INCOMPLETE);
    CHECK(judge("1..3\nok 1 - add\nok 2 - mul\n", req, NULL, 0, NULL) == RLVR_REASON_INCOMPLETE);
    CHECK(judge("1..2\nok 1 - add\nok 2 - sub\n", req, NULL, 0, NULL) == RLVR_REASON_INCOMPLETE);
    CHECK(judge("1..3\nok 1 - add\nok 2 - mul\nok 3 - mul\n", req, NULL, 0, NULL) == RLVR_REASON_RESULTS_INVALID);
    CHECK(judge("1..2\nok 1 - add\nBail out!\nok 2 - mul\n", req, NULL, 0, NULL) == RLVR_REASON_RESULTS_INVALID);
    CHECK(judge("PASSED add\nPASSED mul\n", req, NULL, 0, NULL) == RLVR_REASON_RESULTS_INVALID);
    /* without a list of names every test counts */
    CHECK(judge("1..2\nok 1 - a\nnot ok 2 - b\n", NULL, NULL, 1, NULL) == RLVR_REASON_TESTS_FAILED);
    CHECK(judge("1..2\nok 1 - a\nok 2 - b\n", NULL, NULL, 0, &j) == RLVR_REASON_NONE && j.total == 2);
    /* quarantined tests are out of the reward */
    const char *const q[] = {"mul", NULL};
    CHECK(judge("1..2\nok 1 - add\nnot ok 2 - mul\n", req, q, 1, &j) == RLVR_REASON_NONE);
    CHECK(j.total == 1 && j.passed == 1);
    CHECK(judge("1..2\nok 1 - add\nnot ok 2 - mul\n", NULL, q, 1, &j) == RLVR_REASON_NONE && j.total == 1);
    const char *const all_q[] = {"add", "mul", NULL};
    CHECK(judge("1..2\nok 1 - add\nok 2 - mul\n", req, all_q, 0, NULL) == RLVR_REASON_NO_RESULTS);
}

static void test_names(void) {
    for (int r = 0; r <= 600; r++) {
        const char *n = rlvr_reason_name(r);
        CHECK(n != NULL && n[0]);
    }
    CHECK(strcmp(rlvr_reason_name(RLVR_REASON_TIMEOUT), "timeout") == 0);
    CHECK(strcmp(rlvr_reason_name(12345), "unknown") == 0);
}

int main(void) {
    test_parse();
    test_judge();
    test_judge_fail_to_pass();
    test_names();
    return test_summary("test_tap");
}
