/* tests/enclave/test_consensus.c — flaky-test statistics (docs/ENCLAVE.md
 * "What the tests show"): a broken patch that passes a seeded test with probability
 * 0.2 per run is verified 1000 times (RLVR_CONSENSUS_N overrides); 3-run
 * consensus must let at most 2 % through (theory 0.2^3 = 0.8 %), while a
 * single run lets about 20 % through. The rest of the first-run passes are
 * flaky verdicts (excluded), never passes. */
#include "test.h"

#include "fixture.h"

#include "core/log.h"
#include "core/sys.h"
#include "enclave/reason.h"

#include <unistd.h>

int main(int argc, char **argv) {
    rlvr_log_init_from_env();
    (void)argc;
    (void)argv;
    int n = 1000;
    if (getenv("RLVR_CONSENSUS_N")) n = atoi(getenv("RLVR_CONSENSUS_N"));
    if (n < 100) n = 100;
    rlvr_sandbox_host *host = NULL;
    int rc = rlvr_sandbox_host_new(&host, NULL);
    CHECK_MSG(rc == 0, "host: %s", rlvr_error_last());
    fixture f;
    if (rc == 0) rc = fixture_create(&f, FIXTURE_FLAKY, NULL);
    CHECK_MSG(rc == 0, "fixture: %s", rlvr_error_last());
    if (rc) return test_summary("test_consensus");

    rlvr_verify_task *task = NULL;
    CHECK_OK(rlvr_verify_task_new(&task, host, &f.spec));
    /* "b + a": the same broken behaviour as the base, as a patch */
    char calc[2048];
    CHECK(fixture_sh_calc(calc, sizeof calc, "b + a") == 0);
    fixture_edit e = {EDIT_WRITE, "src/calc.sh", calc, 0, 0};
    char *patch = NULL;
    size_t len = 0;
    CHECK_OK(fixture_patch(&f, &e, 1, &patch, &len));
    if (!task || !patch) return test_summary("test_consensus");

    /* the reference passes every time */
    char *ref = NULL;
    size_t ref_len = 0;
    CHECK_OK(fixture_patch(&f, fixture_reference_sh, 1, &ref, &ref_len));
    for (int i = 0; i < 5; i++) {
        rlvr_enclave_verdict v = fixture_verify(task, ref, ref_len, 900000 + (uint64_t)i);
        CHECK(v.verdict == RLVR_VERDICT_PASS && v.runs == 3);
    }

    int pass = 0, flaky = 0, fail = 0, other = 0, first_run_pass = 0, runs = 0;
    double t0 = rlvr_now();
    for (int i = 0; i < n; i++) {
        rlvr_enclave_verdict v = fixture_verify(task, patch, len, (uint64_t)i);
        runs += v.runs;
        if (v.verdict == RLVR_VERDICT_PASS) pass++;
        else if (v.verdict == RLVR_VERDICT_DROPPED && v.reason == RLVR_REASON_CONSENSUS_MIXED) flaky++;
        else if (v.verdict == RLVR_VERDICT_FAIL && v.reason == RLVR_REASON_TESTS_FAILED) fail++;
        else other++;
        if (v.verdict == RLVR_VERDICT_PASS || (v.verdict == RLVR_VERDICT_DROPPED && v.runs > 1)) first_run_pass++;
    }
    double dt = rlvr_now() - t0;
    printf("%d verifications in %.1f s (%d enclave runs, %.1f ms per run): pass %d (%.2f %%), flaky %d, fail %d, "
           "other %d; first run passed %d (%.1f %%)\n",
           n, dt, runs, 1e3 * dt / runs, pass, 100.0 * pass / n, flaky, fail, other, first_run_pass,
           100.0 * first_run_pass / n);
    CHECK(other == 0);
    CHECK_MSG(pass <= n / 50, "consensus let %d of %d broken patches through (more than 2 %%)", pass, n);
    /* the fixture really is flaky at about 0.2: single-run acceptance would
     * have let all of these through */
    CHECK_MSG(first_run_pass >= n * 14 / 100 && first_run_pass <= n * 26 / 100, "first-run pass rate %.3f",
              (double)first_run_pass / n);
    CHECK(pass + flaky == first_run_pass);
    /* extra runs are spent only on patches that passed once */
    CHECK(runs <= n + 2 * first_run_pass && runs >= n + first_run_pass);

    free(patch);
    free(ref);
    rlvr_verify_task_free(task);
    fixture_free(&f);
    rlvr_sandbox_host_free(host);
    return test_summary("test_consensus");
}
