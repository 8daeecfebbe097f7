/* tests/envs/test_score.c — one patch or answer scored as training scores
 * it (envs/score.h): a generated bugfix-c task (judge mode) and an arith
 * task; the verdict, and the outcome the reward takes under each [reward]
 * outcome. */
#include "enclave/reason.h"
#include "envs/gen.h"
#include "envs/score.h"
#include "envs_test.h"
#include "test.h"

static char *dir;

static rlvr_task *generate(const char *family, uint64_t seed) {
    rlvr_task_gen_options o = RLVR_TASK_GEN_OPTIONS_INIT;
    o.family = family;
    o.seed = seed;
    o.split = RLVR_SPLIT_TRAIN;
    rlvr_task *t = NULL;
    CHECK_OK(rlvr_task_gen_one(&t, &o, 0, dir));
    return t;
}

static rlvr_score score(const rlvr_task *t, rlvr_sandbox_host *host, rlvr_outcome_kind outcome, const char *text) {
    rlvr_score_options o;
    rlvr_score s;
    memset(&s, 0, sizeof s);
    memset(&o, 0, sizeof o);
    rlvr_sandbox_limits_default(&o.limits);
    o.version = RLVR_SCORE_OPTIONS_VERSION;
    o.consensus_runs = 2;
    o.outcome = outcome;
    o.seed = 3;
    CHECK_OK(rlvr_score_patch(t, host, &o, text, strlen(text), &s));
    return s;
}

static void test_tests_task(rlvr_sandbox_host *host) {
    rlvr_task *t = generate("bugfix-c", 5);
    if (!t) return;
    size_t n = t->fail_to_pass.n + t->pass_to_pass.n;
    rlvr_score s = score(t, host, RLVR_OUTCOME_BINARY, t->reference_patch);
    CHECK(s.verdict.verdict == RLVR_VERDICT_PASS && s.verdict.reason == RLVR_REASON_NONE && s.outcome == 1.0);
    CHECK(s.judged && s.verdict.runs == 2 && s.verdict.tests_total == (int)n);
    /* a no-op fails its FAIL_TO_PASS tests and keeps the others */
    double p2p_share = (double)t->pass_to_pass.n / (double)n;
    const rlvr_outcome_kind kinds[] = {RLVR_OUTCOME_BINARY, RLVR_OUTCOME_PARTIAL, RLVR_OUTCOME_FAIL_TO_PASS};
    const double want[] = {0.0, p2p_share, 0.0};
    for (int k = 0; k < 3; k++) {
        s = score(t, host, kinds[k], "");
        CHECK(s.verdict.verdict == RLVR_VERDICT_FAIL && s.verdict.reason == RLVR_REASON_TESTS_FAILED);
        CHECK(s.verdict.runs == 1 && s.verdict.tests_passed == (int)t->pass_to_pass.n);
        CHECK_MSG(fabs(s.outcome - want[k]) < 1e-6, "no-op under outcome %d: %g, want %g", k, s.outcome, want[k]);
    }
    /* refused by the gate: nothing runs, nothing earned */
    s = score(t, host, RLVR_OUTCOME_PARTIAL, "this is not a patch\n");
    CHECK(s.verdict.verdict == RLVR_VERDICT_REJECTED && s.verdict.reason == RLVR_REASON_PATCH_PARSE);
    CHECK(s.verdict.runs == 0 && s.outcome == 0.0);
    /* a wrong patch the task lists fails */
    if (t->wrong_patches.n) {
        s = score(t, host, RLVR_OUTCOME_BINARY, t->wrong_patches.items[0]);
        CHECK(s.verdict.verdict == RLVR_VERDICT_FAIL && s.outcome == 0.0);
    }
    rlvr_task_free(t);
}

static void test_arith_task(void) {
    rlvr_task *t = generate("arith", 3);
    if (!t) return;
    rlvr_score s = score(t, NULL, RLVR_OUTCOME_BINARY, t->reference_answer);
    CHECK(s.verdict.verdict == RLVR_VERDICT_PASS && s.outcome == 1.0 && s.verdict.runs == 0 && !s.judged);
    s = score(t, NULL, RLVR_OUTCOME_PARTIAL, "answer: 99999");
    CHECK(s.verdict.verdict == RLVR_VERDICT_FAIL && s.verdict.reason == RLVR_REASON_TESTS_FAILED && s.outcome == 0.0);
    rlvr_task_free(t);
}

/* Bad arguments are refused, never scored. */
static void test_refusals(rlvr_sandbox_host *host) {
    rlvr_task *t = generate("bugfix-c", 6);
    if (!t) return;
    rlvr_score_options o = {.version = RLVR_SCORE_OPTIONS_VERSION, .consensus_runs = 0};
    rlvr_sandbox_limits_default(&o.limits);
    rlvr_score s;
    CHECK(rlvr_score_patch(t, host, &o, "", 0, &s) == RLVR_EINVAL);
    o.consensus_runs = 1;
    CHECK(rlvr_score_patch(t, NULL, &o, "", 0, &s) == RLVR_EINVAL);
    CHECK_MSG(strstr(rlvr_error_last(), "needs a sandbox host"), "%s", rlvr_error_last());
    o.version = 99;
    CHECK(rlvr_score_patch(t, host, &o, "", 0, &s) == RLVR_EINVAL);
    rlvr_task_free(t);
}

int main(void) {
    dir = tmpdir_make("score");
    rlvr_sandbox_host *host = NULL;
    CHECK_OK(rlvr_sandbox_host_new(&host, NULL));
    if (host) {
        test_tests_task(host);
        test_refusals(host);
    }
    test_arith_task();
    rlvr_sandbox_host_free(host);
    rm_rf(dir);
    free(dir);
    return test_summary("test_score");
}
