/* tests/enclave/test_verify.c — the verification path end to end:
 * distinguishability on the fixtures, rejected and unappliable patches, a
 * timeout, partial credit (of all tests and of the FAIL_TO_PASS tests), an
 * order-dependent patch under consensus, the quarantine pass, and a whole
 * rollout through a workspace. */
#include "test.h"

#include "fixture.h"

#include "core/log.h"
#include "enclave/fsutil.h"
#include "enclave/reason.h"
#include "enclave/verify.h"
#include "enclave/workspace.h"

#include <limits.h>
#include <unistd.h>

static rlvr_sandbox_host *host;

/* A fixture of `kind` and its verify task with `consensus_runs` runs; NULL
 * (reported) when either cannot be made. fixture_free the fixture either way. */
static rlvr_verify_task *fixture_task(fixture *f, fixture_kind kind, int consensus_runs) {
    int rc = fixture_create(f, kind, NULL);
    CHECK_MSG(rc == 0, "fixture: %s", rlvr_error_last());
    if (rc) return NULL;
    f->spec.consensus_runs = consensus_runs;
    rlvr_verify_task *task = NULL;
    CHECK_OK(rlvr_verify_task_new(&task, host, &f->spec));
    return task;
}

/* The patch that replaces `path` with `text`. */
static char *file_patch(fixture *f, const char *path, const char *text, size_t *len) {
    fixture_edit e = {EDIT_WRITE, path, text, 0, 0};
    char *patch = NULL;
    CHECK_OK(fixture_patch(f, &e, 1, &patch, len));
    return patch;
}

static char *sh_patch(fixture *f, const char *calc_text, size_t *len) {
    return file_patch(f, "src/calc.sh", calc_text, len);
}

static char *mul_patch(fixture *f, const char *mul_expr, size_t *len) {
    char calc[2048];
    CHECK(fixture_sh_calc(calc, sizeof calc, mul_expr) == 0);
    return sh_patch(f, calc, len);
}

#define EXPECT(v, verdict_, reason_)                                                                     \
    CHECK_MSG((v).verdict == (verdict_) && (v).reason == (reason_), "verdict %s reason %s, expected %s %s", \
              rlvr_verdict_name((v).verdict), rlvr_reason_name((v).reason), rlvr_verdict_name(verdict_),   \
              rlvr_reason_name(reason_))

static void test_distinguishability_sh(void) {
    fixture f;
    int rc = fixture_create(&f, FIXTURE_SH, NULL);
    CHECK_MSG(rc == 0, "fixture: %s", rlvr_error_last());
    if (rc) return;
    rlvr_verify_task *task = NULL;
    CHECK_OK(rlvr_verify_task_new(&task, host, &f.spec));
    if (!task) {
        fixture_free(&f);
        return;
    }
    uint64_t snap_hash_before = 0, snap_hash_after = 0, repo_before = 0, repo_after = 0;
    CHECK_OK(rlvr_fs_hash_tree(f.root, &repo_before));

    /* the untouched repository fails */
    rlvr_enclave_verdict v = fixture_verify(task, "", 0, 1);
    EXPECT(v, RLVR_VERDICT_FAIL, RLVR_REASON_TESTS_FAILED);
    CHECK(v.runs == 1);
    CHECK_NEAR(v.partial, 3.0 / 5.0, 1e-6);

    /* the reference passes, in three enclaves */
    size_t len;
    char *ref = NULL;
    CHECK_OK(fixture_patch(&f, fixture_reference_sh, 1, &ref, &len));
    v = fixture_verify(task, ref, len, 2);
    EXPECT(v, RLVR_VERDICT_PASS, RLVR_REASON_NONE);
    CHECK(v.runs == 3 && v.partial == 1.0f && v.enclave_s > 0 && v.wall_s >= v.enclave_s);

    /* wrong patches fail */
    const char *wrong[] = {"a * a", "6", "a * b + (a < 0)", "a - b"};
    for (size_t i = 0; i < sizeof wrong / sizeof *wrong; i++) {
        char *p = mul_patch(&f, wrong[i], &len);
        v = fixture_verify(task, p, len, 3 + i);
        CHECK_MSG(v.verdict == RLVR_VERDICT_FAIL && v.reason == RLVR_REASON_TESTS_FAILED && v.runs == 1,
                  "wrong patch mul=%s: %s %s", wrong[i], rlvr_verdict_name(v.verdict), rlvr_reason_name(v.reason));
        free(p);
    }
    /* fixing mul but breaking add (pass-to-pass) fails */
    char *p = sh_patch(&f,
                       "#!/bin/sh\nop=$1\na=$2\nb=$3\ncase $op in\n  add) echo $((a + b + 1)) ;;\n  sub) echo $((a - b)) ;;\n"
                       "  mul) echo $((a * b)) ;;\n  neg) echo $((0 - a)) ;;\nesac\n",
                       &len);
    v = fixture_verify(task, p, len, 9);
    EXPECT(v, RLVR_VERDICT_FAIL, RLVR_REASON_TESTS_FAILED);
    CHECK_NEAR(v.partial, 4.0 / 5.0, 1e-6);
    free(p);

    /* partial credit: right for positive numbers only */
    p = mul_patch(&f, "a > 0 ? a * b : a + b", &len);
    v = fixture_verify(task, p, len, 10);
    EXPECT(v, RLVR_VERDICT_FAIL, RLVR_REASON_TESTS_FAILED);
    CHECK_NEAR(v.partial, 4.0 / 5.0, 1e-6);
    free(p);

    /* a patch that does not apply fails without running anything of it */
    char *stale = strdup(ref);
    char *ctx = strstr(stale, " sub) echo");
    CHECK(ctx != NULL);
    if (ctx) ctx[1] = 'S';
    v = fixture_verify(task, stale, strlen(stale), 11);
    EXPECT(v, RLVR_VERDICT_FAIL, RLVR_REASON_APPLY_FAILED);
    CHECK(v.runs == 1 && v.partial == 0.0f);
    free(stale);

    /* rejected by the gate: no enclave at all (the hidden tests are not in
     * a checkout, so this patch is written by hand) */
    const char *hidden_edit = "diff --git a/tests/hidden/run.sh b/tests/hidden/run.sh\nnew file mode 100644\n"
                              "--- /dev/null\n+++ b/tests/hidden/run.sh\n@@ -0,0 +1 @@\n+exit 0\n";
    v = fixture_verify(task, hidden_edit, strlen(hidden_edit), 12);
    EXPECT(v, RLVR_VERDICT_REJECTED, RLVR_REASON_PROTECTED_PATH);
    CHECK(v.runs == 0);
    CHECK_OK(rlvr_verify_patch(task, ref, strlen(ref), true, 13, &v));
    EXPECT(v, RLVR_VERDICT_DROPPED, RLVR_REASON_PUBLIC_TESTS_CHANGED);
    CHECK(v.runs == 0);

    /* a timeout is never a pass, even when the tests would pass */
    p = sh_patch(&f,
                 "#!/bin/sh\nop=$1\na=$2\nb=$3\ncase $op in\n  add) echo $((a + b)) ;;\n  sub) echo $((a - b)) ;;\n"
                 "  mul) sleep 1000; echo $((a * b)) ;;\n  neg) echo $((0 - a)) ;;\nesac\n",
                 &len);
    rlvr_verify_spec spec = f.spec;
    spec.limits.wall_s = 1.5;
    rlvr_verify_task *fast = NULL;
    CHECK_OK(rlvr_verify_task_new(&fast, host, &spec));
    if (fast) {
        v = fixture_verify(fast, p, len, 14);
        EXPECT(v, RLVR_VERDICT_TIMEOUT, RLVR_REASON_TIMEOUT);
        CHECK(v.wall_s < 10);
        rlvr_verify_task_free(fast);
    }
    free(p);

    /* an order-dependent patch: right only when the tests run in exactly
     * the default order; consensus re-runs shuffle, so it never counts */
    const char *order_dependent =
        "#!/bin/sh\nop=$1\na=$2\nb=$3\nexpected='add sub mul mul neg'\n"
        "n=$(cat /tmp/.calc-seq 2>/dev/null | wc -w)\n"
        "want=$(echo $expected | cut -d' ' -f$((n + 1)))\n"
        "echo $op >> /tmp/.calc-seq\n"
        "[ \"$want\" = \"$op\" ] || { echo 0; exit 0; }\n"
        "case $op in\n  add) echo $((a + b)) ;;\n  sub) echo $((a - b)) ;;\n"
        "  mul) echo $((a * b)) ;;\n  neg) echo $((0 - a)) ;;\nesac\n";
    p = sh_patch(&f, order_dependent, &len);
    for (uint64_t seed = 100; seed < 104; seed++) {
        rlvr_verify_run run;
        CHECK_OK(rlvr_verify_run_once(task, p, len, seed, 0, &run));
        CHECK_MSG(run.reason == RLVR_REASON_NONE, "default order: %s", rlvr_reason_name(run.reason));
        rlvr_verify_run_free(&run);
        v = fixture_verify(task, p, len, seed);
        CHECK_MSG(v.verdict != RLVR_VERDICT_PASS, "the order-dependent patch passed consensus (seed %llu)",
                  (unsigned long long)seed);
        EXPECT(v, RLVR_VERDICT_DROPPED, RLVR_REASON_CONSENSUS_MIXED);
        CHECK(v.runs == 2);
    }
    free(p);
    free(ref);

    CHECK_OK(rlvr_fs_hash_tree(f.root, &repo_after));
    CHECK_MSG(repo_before == repo_after, "the fixture changed on the host");
    (void)snap_hash_before;
    (void)snap_hash_after;
    rlvr_verify_task_free(task);
    fixture_free(&f);
}

static void test_distinguishability_c(void) {
    fixture f;
    rlvr_verify_task *task = fixture_task(&f, FIXTURE_C, 2);
    if (task) {
        rlvr_enclave_verdict v = fixture_verify(task, "", 0, 1);
        EXPECT(v, RLVR_VERDICT_FAIL, RLVR_REASON_TESTS_FAILED);
        size_t len;
        char *ref = NULL;
        CHECK_OK(fixture_patch(&f, fixture_reference_c, 1, &ref, &len));
        v = fixture_verify(task, ref, len, 2);
        EXPECT(v, RLVR_VERDICT_PASS, RLVR_REASON_NONE);
        CHECK(v.runs == 2);
        free(ref);
        fixture_edit wrong = {EDIT_WRITE, "src/calc.c",
                              "#include \"calc.h\"\nlong calc_add(long a, long b) { return a + b; }\n"
                              "long calc_sub(long a, long b) { return a - b; }\n"
                              "long calc_mul(long a, long b) { return a * a; }\n"
                              "long calc_neg(long a) { return -a; }\n",
                              0, 0};
        char *p = NULL;
        CHECK_OK(fixture_patch(&f, &wrong, 1, &p, &len));
        v = fixture_verify(task, p, len, 3);
        EXPECT(v, RLVR_VERDICT_FAIL, RLVR_REASON_TESTS_FAILED);
        free(p);
        fixture_edit broken = {EDIT_WRITE, "src/calc.c", "this is not C\n", 0, 0};
        CHECK_OK(fixture_patch(&f, &broken, 1, &p, &len));
        v = fixture_verify(task, p, len, 4);
        EXPECT(v, RLVR_VERDICT_FAIL, RLVR_REASON_TESTS_FAILED);
        CHECK(v.partial == 0.0f);
        free(p);
    }
    rlvr_verify_task_free(task);
    fixture_free(&f);
}

/* Judge mode: the judge is built once from the hidden files, which never
 * enter the enclave; the code under test is built after the patch; a
 * broken build is build_failed; a judge build that fails is refused with
 * its output. */
static void test_judge_mode(void) {
    fixture f;
    int rc = fixture_create(&f, FIXTURE_JUDGE, NULL);
    CHECK_MSG(rc == 0, "fixture: %s", rlvr_error_last());
    if (rc) return;
    f.spec.consensus_runs = 2;
    rlvr_verify_task *task = NULL;
    rc = rlvr_verify_task_new(&task, host, &f.spec);
    CHECK_MSG(rc == 0, "judge task: %s", rlvr_error_last());
    if (task) {
        CHECK(rlvr_verify_task_judged(task));
        char path[4096];
        snprintf(path, sizeof path, "%s/tests/judge.c", rlvr_verify_task_tree(task));
        CHECK_MSG(access(path, F_OK) != 0, "the hidden judge source is in the enclave's tree");
        rlvr_enclave_verdict v = fixture_verify(task, "", 0, 1);
        EXPECT(v, RLVR_VERDICT_FAIL, RLVR_REASON_TESTS_FAILED);
        CHECK(v.tests_total == 5 && v.tests_passed == 3);
        size_t len;
        char *ref = NULL;
        CHECK_OK(fixture_patch(&f, fixture_reference_c, 1, &ref, &len));
        v = fixture_verify(task, ref, len, 2);
        EXPECT(v, RLVR_VERDICT_PASS, RLVR_REASON_NONE);
        CHECK(v.runs == 2 && v.partial == 1.0f);
        free(ref);
        char *p = NULL;
        fixture_edit broken = {EDIT_WRITE, "src/calc.c", "this is not C\n", 0, 0};
        CHECK_OK(fixture_patch(&f, &broken, 1, &p, &len));
        v = fixture_verify(task, p, len, 4);
        EXPECT(v, RLVR_VERDICT_FAIL, RLVR_REASON_BUILD_FAILED);
        CHECK(v.partial == 0.0f && v.runs == 1);
        free(p);
        /* a patch that does not apply never reaches the build */
        const char *stale = "diff --git a/src/calc.c b/src/calc.c\n--- a/src/calc.c\n+++ b/src/calc.c\n"
                            "@@ -1 +1 @@\n-not there\n+x\n";
        v = fixture_verify(task, stale, strlen(stale), 5);
        EXPECT(v, RLVR_VERDICT_FAIL, RLVR_REASON_APPLY_FAILED);
    }
    rlvr_verify_task_free(task);
    /* the host keeps built judges by content: the same task again reuses
     * its judge, a changed build command makes another */
    char cache[4096];
    snprintf(cache, sizeof cache, "%s/judges", rlvr_sandbox_host_scratch(host));
    int cached = fixture_count_entries(cache);
    CHECK_MSG(cached >= 1, "no judge in the cache %s", cache);
    task = NULL;
    CHECK_OK(rlvr_verify_task_new(&task, host, &f.spec));
    rlvr_verify_task_free(task);
    CHECK(fixture_count_entries(cache) == cached);
    rlvr_verify_spec other = f.spec;
    other.judge_build = "cc -O0 -w -o \"$RLVR_JUDGE_DIR/judge\" tests/judge.c # another";
    task = NULL;
    CHECK_OK(rlvr_verify_task_new(&task, host, &other));
    rlvr_verify_task_free(task);
    CHECK(fixture_count_entries(cache) == cached + 1);
    /* a judge build that fails, or leaves no program by the name */
    rlvr_verify_spec bad = f.spec;
    bad.judge_build = "echo 'no compiler today' >&2; exit 3";
    task = NULL;
    CHECK(rlvr_verify_task_new(&task, host, &bad) == RLVR_EINVAL);
    CHECK_MSG(strstr(rlvr_error_last(), "no compiler today") && strstr(rlvr_error_last(), "status 3"), "%s",
              rlvr_error_last());
    bad.judge_build = "cp /bin/true \"$RLVR_JUDGE_DIR/other\"";
    CHECK(rlvr_verify_task_new(&task, host, &bad) == RLVR_EINVAL);
    CHECK_MSG(strstr(rlvr_error_last(), "\"judge\""), "%s", rlvr_error_last());
    bad.judge_build = "mkdir \"$RLVR_JUDGE_DIR/sub\"";
    CHECK(rlvr_verify_task_new(&task, host, &bad) == RLVR_EINVAL);
    CHECK_MSG(strstr(rlvr_error_last(), "\"sub\""), "%s", rlvr_error_last());
    bad.judge_build = "printf '#!/bin/sh\\necho 1..1\\n' > \"$RLVR_JUDGE_DIR/judge\"";
    CHECK(rlvr_verify_task_new(&task, host, &bad) == RLVR_EINVAL);
    CHECK_MSG(strstr(rlvr_error_last(), "not an ELF program"), "%s", rlvr_error_last());
    bad = f.spec;
    bad.test_command = "true";
    CHECK(rlvr_verify_task_new(&task, host, &bad) == RLVR_EINVAL);
    CHECK(task == NULL);
    fixture_free(&f);
}

static char *c_patch(fixture *f, const char *sub_expr, const char *mul_expr, size_t *len) {
    char calc[2048];
    CHECK(fixture_c_calc(calc, sizeof calc, sub_expr, mul_expr) == 0);
    return file_patch(f, "src/calc.c", calc, len);
}

#define EXPECT_F2P(v, passed_, total_, p2p_failed_, share_)                                                    \
    CHECK_MSG((v).f2p_passed == (passed_) && (v).f2p_total == (total_) && (v).p2p_failed == (p2p_failed_) &&  \
                  (v).f2p_partial == (float)(share_),                                                          \
              "FAIL_TO_PASS %d/%d, PASS_TO_PASS failed %d, share %g; expected %d/%d, %d, %g", (v).f2p_passed,  \
              (v).f2p_total, (int)(v).p2p_failed, (double)(v).f2p_partial, passed_, total_, (int)(p2p_failed_), \
              (double)(share_))

/* FAIL_TO_PASS credit in judge mode (FAIL_TO_PASS mul mul_neg, PASS_TO_PASS
 * add sub neg): a patch that changes nothing earns nothing, fixing one of
 * the two earns half, fixing both while breaking sub earns nothing; the
 * share of all tests stays what it was. A task that names no tests counts
 * every test as FAIL_TO_PASS. */
static void test_fail_to_pass_credit(void) {
    fixture f;
    rlvr_verify_task *task = fixture_task(&f, FIXTURE_JUDGE, 1);
    if (!task) {
        fixture_free(&f);
        return;
    }
    CHECK(rlvr_verify_task_partial_credit(task) == RLVR_PARTIAL_CREDIT_ALL);
    rlvr_verify_task_set_partial_credit(task, RLVR_PARTIAL_CREDIT_FAIL_TO_PASS);
    CHECK(rlvr_verify_task_partial_credit(task) == RLVR_PARTIAL_CREDIT_FAIL_TO_PASS);
    rlvr_enclave_verdict v = fixture_verify(task, "", 0, 1);
    EXPECT(v, RLVR_VERDICT_FAIL, RLVR_REASON_TESTS_FAILED);
    EXPECT_F2P(v, 0, 2, false, 0.0);
    CHECK_NEAR(v.partial, 3.0 / 5.0, 1e-6);

    size_t len;
    char *p = c_patch(&f, "a - b", "a > 0 ? a * b : a + b", &len); /* mul passes, mul_neg does not */
    v = fixture_verify(task, p, len, 2);
    EXPECT(v, RLVR_VERDICT_FAIL, RLVR_REASON_TESTS_FAILED);
    EXPECT_F2P(v, 1, 2, false, 0.5);
    CHECK_NEAR(v.partial, 4.0 / 5.0, 1e-6);
    free(p);

    p = c_patch(&f, "a + b", "a * b", &len); /* both fixed, sub broken */
    v = fixture_verify(task, p, len, 3);
    EXPECT(v, RLVR_VERDICT_FAIL, RLVR_REASON_TESTS_FAILED);
    EXPECT_F2P(v, 2, 2, true, 0.0);
    CHECK_NEAR(v.partial, 4.0 / 5.0, 1e-6);
    free(p);

    p = c_patch(&f, "a - b", "a * b", &len); /* the reference */
    v = fixture_verify(task, p, len, 4);
    EXPECT(v, RLVR_VERDICT_PASS, RLVR_REASON_NONE);
    EXPECT_F2P(v, 2, 2, false, 1.0);
    free(p);

    /* a build that fails earns nothing */
    p = file_patch(&f, "src/calc.c", "this is not C\n", &len);
    v = fixture_verify(task, p, len, 5);
    EXPECT(v, RLVR_VERDICT_FAIL, RLVR_REASON_BUILD_FAILED);
    EXPECT_F2P(v, 0, 0, false, 0.0);
    free(p);
    rlvr_verify_task_free(task);

    /* a task that names no tests: every test is FAIL_TO_PASS */
    rlvr_verify_spec every = f.spec;
    every.fail_to_pass = every.pass_to_pass = NULL;
    every.test_order = NULL;
    task = NULL;
    CHECK_OK(rlvr_verify_task_new(&task, host, &every));
    if (task) {
        v = fixture_verify(task, "", 0, 6);
        EXPECT(v, RLVR_VERDICT_FAIL, RLVR_REASON_TESTS_FAILED);
        EXPECT_F2P(v, 3, 5, false, 3.0 / 5.0);
        CHECK(v.f2p_partial == v.partial);
    }
    rlvr_verify_task_free(task);
    fixture_free(&f);
}

static void test_quarantine(void) {
    fixture f;
    int rc = fixture_create(&f, FIXTURE_FLAKY, NULL);
    CHECK_MSG(rc == 0, "fixture: %s", rlvr_error_last());
    if (rc) return;
    static const char *const p2p[] = {"add", "planted", NULL};
    f.spec.pass_to_pass = p2p;
    rlvr_verify_task *task = NULL;
    CHECK_OK(rlvr_verify_task_new(&task, host, &f.spec));
    size_t len;
    char *ref = NULL;
    CHECK_OK(fixture_patch(&f, fixture_reference_sh, 1, &ref, &len));
    if (task && ref) {
        rlvr_quarantine q;
        /* 30 runs miss a 10 % test with probability 0.9^30 = 4 %; the seeds
         * are fixed, so this seed's runs are known to include failures */
        CHECK_OK(rlvr_verify_quarantine(task, ref, len, 30, 1, 0.5, &q));
        CHECK(q.runs == 30 && q.n_total == 3);
        CHECK_MSG(q.n_tests == 1 && strcmp(q.tests[0], "planted") == 0, "quarantined %d tests", q.n_tests);
        CHECK(!q.drop_task);
        CHECK_OK(rlvr_verify_task_set_quarantine(task, (const char *const *)q.tests));
        rlvr_quarantine_free(&q);
        /* with the planted test out of the reward the reference always passes */
        for (uint64_t seed = 0; seed < 5; seed++) {
            rlvr_enclave_verdict v = fixture_verify(task, ref, len, 1000 + seed);
            EXPECT(v, RLVR_VERDICT_PASS, RLVR_REASON_NONE);
        }
        /* a stricter pool drops the task */
        CHECK_OK(rlvr_verify_quarantine(task, ref, len, 30, 1, 0.2, &q));
        CHECK(q.drop_task && q.drop_reason == RLVR_REASON_TESTS_FAILED);
        rlvr_quarantine_free(&q);
        /* a reference that does not apply drops the task at once */
        CHECK_OK(rlvr_verify_quarantine(task, "diff --git a/x b/x\nindex 1111111..2222222 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n",
                                        70, 5, 7, 0.5, &q));
        CHECK(q.drop_task && q.drop_reason == RLVR_REASON_APPLY_FAILED && q.runs == 1);
        rlvr_quarantine_free(&q);
    }
    free(ref);
    rlvr_verify_task_free(task);
    fixture_free(&f);
}

/* A whole rollout: the agent works in its workspace, the runtime extracts
 * the patch, the verifier scores it. */
static void test_workspace_rollout(void) {
    fixture f;
    int rc = fixture_create(&f, FIXTURE_SH, NULL);
    CHECK_MSG(rc == 0, "fixture: %s", rlvr_error_last());
    if (rc) return;
    rlvr_workspace_spec ws_spec = {.version = RLVR_WORKSPACE_SPEC_VERSION, .repo_dir = f.repo, .base_commit = f.base,
                                   .public_tests = f.spec.public_tests};
    rlvr_sandbox_limits_default(&ws_spec.limits);
    rlvr_workspace *ws = NULL;
    CHECK_OK(rlvr_workspace_new(&ws, host, &ws_spec));
    rlvr_verify_task *task = NULL;
    CHECK_OK(rlvr_verify_task_new(&task, host, &f.spec));
    if (ws && task) {
        CHECK(strcmp(rlvr_workspace_base_tree(ws), f.base_tree) == 0);
        rlvr_sandbox *sb = rlvr_workspace_sandbox(ws);
        const char *agent =
            "sh tests/public/run.sh; "
            "ls tests; test -e tests/hidden && echo HIDDEN-VISIBLE; find /work /tmp /etc /.rlvr -path '*hidden*' 2>/dev/null | head -1; "
            "echo 'echo ok 1 - add' >> tests/public/run.sh 2>/dev/null && echo PUBLIC-WRITABLE; "
            "rm -rf .git; mkdir -p .git; echo 'ref: refs/heads/evil' > .git/HEAD; "
            "sed -i 's/a + b)) ;;$/a * b)) ;;/' src/calc.sh; sed -i '0,/a \\* b/s//a + b/' src/calc.sh; "
            "grep mul src/calc.sh; echo scratch > notes.txt";
        const char *argv[] = {"/bin/sh", "-c", agent, NULL};
        rlvr_sandbox_cmd cmd = {.version = RLVR_SANDBOX_CMD_VERSION, .argv = argv};
        rlvr_sandbox_result res;
        CHECK_OK(rlvr_sandbox_exec(sb, &cmd, &res));
        CHECK_MSG(strstr(res.out, "1..1\nok 1 - add\npublic\n") != NULL, "agent saw: %s", res.out);
        CHECK(!strstr(res.out, "HIDDEN-VISIBLE") && !strstr(res.out, "tests/hidden") && !strstr(res.out, "PUBLIC-WRITABLE"));
        CHECK(strstr(res.out, "mul) echo $((a * b)) ;;"));
        rlvr_sandbox_result_free(&res);

        rlvr_extract_result ex;
        CHECK_OK(rlvr_workspace_extract(ws, &ex));
        CHECK(!ex.public_tests_changed && ex.reason == RLVR_REASON_NONE);
        CHECK(ex.patch && strstr(ex.patch, "+  mul) echo $((a * b)) ;;") && strstr(ex.patch, "b/notes.txt"));
        CHECK_MSG(!strstr(ex.patch, ".git"), "the workspace's .git leaked into the patch");
        rlvr_enclave_verdict v;
        CHECK_OK(rlvr_verify_patch(task, ex.patch, ex.len, ex.public_tests_changed, 5, &v));
        EXPECT(v, RLVR_VERDICT_PASS, RLVR_REASON_NONE);
        rlvr_extract_result_free(&ex);
    }
    rlvr_verify_task_free(task);
    rlvr_workspace_free(ws);
    fixture_free(&f);
}

int main(int argc, char **argv) {
    rlvr_log_init_from_env();
    bool unprivileged = argc > 1 && strcmp(argv[argc - 1], "--unprivileged") == 0;
    if (unprivileged) CHECK(geteuid() != 0);
    int rc = rlvr_sandbox_host_new(&host, NULL);
    CHECK_MSG(rc == 0, "host: %s", rlvr_error_last());
    if (rc) return test_summary("test_verify");
    test_distinguishability_sh();
    test_workspace_rollout();
    test_quarantine();
    if (!unprivileged) test_distinguishability_c();
    test_judge_mode();
    test_fail_to_pass_credit();
    rlvr_sandbox_host_free(host);
    return test_summary(unprivileged ? "test_verify --unprivileged" : "test_verify");
}
