/* enclave/verify.h — scoring a patch in fresh enclaves (docs/ENCLAVE.md
 * "The path of one patch").
 *
 * One verification: the diff gate validates the patch (refused: verdict
 * REJECTED, nothing runs); a fresh enclave comes from the clean snapshot
 * (pristine tree at the base commit plus the hidden tests, copy-on-write):
 * the task's pooled enclave restored to the snapshot (rlvr_sandbox_reset),
 * every run in fresh PID, IPC and mount namespaces;
 * inside it the runtime's code applies the patch check-then-apply (libgit2,
 * `git apply --check` semantics; a patch that does not apply fails and no
 * policy-written code runs); then the hidden test command runs and its TAP
 * results are judged (enclave/tap.h). A patch that passes is re-run in K-1
 * more fresh enclaves with other seeds and shuffled test orders; it counts
 * only if every run passes, and mixed results mean "flaky": excluded from the
 * loss, never 0. Only a verdict leaves: outcome, reason code, partial credit,
 * run count and durations; never test names, assertions or output.
 *
 * Two ways to run the hidden tests:
 * - judge mode (judge_build and judge_argv set): the task's judge is built
 *   once, from the hidden files, into an execute-only program
 *   (enclave/judge.h); the hidden files never enter the enclave. Each run
 *   applies the patch, runs build_command (the code under test's build:
 *   no results descriptor, the judge out of reach), then the judge, exec'd
 *   from a descriptor with the results descriptor; the judge runs the code
 *   under test in processes of its own. Nothing the policy wrote shares a
 *   process with the results channel or can read an expected value.
 * - command mode (test_command): the hidden files are copied into the tree
 *   (read-only) and the command runs with the results descriptor. Code
 *   under test that shares a process with the harness, or runs while the
 *   hidden files are readable, can reach both: docs/ENCLAVE.md says what is
 *   and is not promised then.
 * The judge (or test command) gets, in its environment:
 *   RLVR_RESULTS_FD  the descriptor to write TAP to (3)
 *   RLVR_TEST_SEED   a decimal seed for the run (differs between runs)
 *   RLVR_TEST_ORDER  the test names, space-separated, in the order to run
 *                    (the default order in the first run, shuffled and never
 *                    the default order in consensus re-runs)
 * docs/ENCLAVE.md documents the contract for task authors. */
#ifndef RLVR_ENCLAVE_VERIFY_H
#define RLVR_ENCLAVE_VERIFY_H

#include "core/record.h"
#include "enclave/sandbox.h"
#include "enclave/tap.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the enclave needs to know about a task. The task-spec loader (envs/)
 * fills it from the task's JSON; tests fill it by hand. */
typedef struct {
    unsigned version;
    const char *repo_dir;              /* the task's repository (bare or not) */
    const char *base_commit;           /* revspec of the commit rollouts start from */
    const char *hidden_dir;            /* directory copied over the tree in the enclave: the hidden tests
                                          (its files are protected paths automatically); NULL for none */
    const char *test_command;          /* command mode: run with /bin/sh -c in /work (NULL in judge mode) */
    const char *const *fail_to_pass;   /* test names; NULL together with pass_to_pass: every test in the
                                          stream must pass */
    const char *const *pass_to_pass;
    const char *const *test_order;     /* default order for RLVR_TEST_ORDER; NULL: fail_to_pass then
                                          pass_to_pass */
    const char *const *protected_globs;/* tests, build files, runner configuration (enclave/diffgate.h) */
    const char *const *public_tests;   /* public test paths (protected as well) */
    const char *const *quarantined;    /* tests removed from the reward (rlvr_verify_quarantine) */
    rlvr_sandbox_limits limits;        /* for every enclave run */
    int consensus_runs;                /* K: runs a passing patch needs, all passing (>= 1; usually 3) */
    size_t max_patch_bytes;            /* diff gate (0: 512 KiB) */
    int max_patch_files;               /* diff gate (0: 64) */
    bool fresh_enclaves;               /* build a new enclave for every run instead of restoring the pooled
                                          one (rlvr_sandbox_reset); slower, same isolation */
    const char *const *editable_globs; /* the task's allow-list (enclave/diffgate.h); NULL: none */
    const char *judge_build;           /* judge mode: builds the judge from the hidden files (enclave/judge.h) */
    const char *const *judge_argv;     /* judge mode: the program the build left, then its arguments; runs in
                                          /work */
    const char *build_command;         /* judge mode, optional: builds the code under test after the patch is
                                          applied and before the judge runs (/bin/sh -c in /work) */
    rlvr_sandbox_network network;      /* the enclaves' runs: inet sockets on loopback, or none (the default;
                                          the judge's build never has them) */
    const char *results_junit;         /* command mode: the results come as a JUnit XML file at this path
                                          (relative to /work; removed before the tests run, read once they
                                          are over, enclave/junit.h) instead of as TAP on the results
                                          descriptor; NULL: TAP. The path is protected: no patch may create
                                          it */
    const char *environment;           /* the root tree the build, the judge or the test command run in
                                          (a directory, SquashFS or SIF image, enclave/image.h); NULL: the
                                          host's system paths */
    const char *workdir;               /* where the repository appears in the environment and commands start
                                          (the same tree as /work); NULL: /work */
    const char *const *env;            /* "KEY=VALUE" entries added to the build's and the tests'
                                          environment; NULL: none */
    const char *expected_dir;          /* command mode, with expected_files: the directory holding the
                                          expected copies at their tree paths (never in the enclave) */
    const char *const *expected_files; /* the results are these files, left by the test command and each
                                          compared with its expected copy (enclave/expected.h): one test per
                                          file, named by its path; removed before the tests run and
                                          protected. NULL: TAP or JUnit */
} rlvr_verify_spec;

#define RLVR_VERIFY_SPEC_VERSION 5

/* The verdict: everything that may leave the verifier. */
typedef struct {
    rlvr_verdict verdict; /* PASS, FAIL, REJECTED, TIMEOUT, INFRA, or DROPPED (public tests changed,
                             or flaky: reason CONSENSUS_MIXED) */
    int32_t reason;       /* enclave/reason.h */
    float partial;        /* fraction of the sealed tests that passed in the first run (0 when the run
                             was killed, hit a limit, or its exit status or results were invalid) */
    int32_t tests_passed, tests_total; /* the same as counts */
    float f2p_partial;    /* fraction of the sealed FAIL_TO_PASS tests that passed in the first run (0
                             when a PASS_TO_PASS test did not pass, and for the runs partial gives no
                             credit); a task that names no tests counts every test as FAIL_TO_PASS */
    int32_t f2p_passed, f2p_total; /* its counts */
    bool p2p_failed;      /* a sealed PASS_TO_PASS test did not pass in the first run */
    int32_t runs;         /* enclave runs made */
    double wall_s;        /* the whole verification */
    double enclave_s;     /* inside enclaves (creation, apply, tests) */
} rlvr_enclave_verdict;

typedef struct rlvr_verify_task rlvr_verify_task;

/* Prepares a task once: exports the base commit with the hidden tests into a
 * snapshot (a fresh single-commit repository), builds the gate's rules. */
int rlvr_verify_task_new(rlvr_verify_task **out, rlvr_sandbox_host *host, const rlvr_verify_spec *spec);
void rlvr_verify_task_free(rlvr_verify_task *task);

/* Waits until the supervisor of the task's last enclave run has exited
 * (rlvr_sandbox_settle): for checks that count child processes. */
void rlvr_verify_task_settle(rlvr_verify_task *task);

/* The clean snapshot's directory on the host (for checks that it never
 * changes). */
const char *rlvr_verify_task_tree(const rlvr_verify_task *task);

/* The task's pooled enclave (NULL before its first run, and always with
 * fresh_enclaves): for checks that look inside it, such as the test that
 * compares what a run can observe in it after many verifications with a
 * fresh enclave. The next verification resets it before its first run;
 * a caller that runs commands in it must reset it first too. */
rlvr_sandbox *rlvr_verify_task_enclave(rlvr_verify_task *task);

/* True in judge mode: every test result comes from the judge, which no code
 * under test can reach, so partial credit is as sealed as the whole. */
bool rlvr_verify_task_judged(const rlvr_verify_task *task);

/* Which share of its tests a failed patch earns as the check's score (the
 * verdict carries both; the caller that turns a verdict into a score reads
 * the task's choice). */
typedef enum {
    RLVR_PARTIAL_CREDIT_ALL = 0,          /* partial: every sealed test counts, so a patch that changes
                                             nothing earns the PASS_TO_PASS share */
    RLVR_PARTIAL_CREDIT_FAIL_TO_PASS = 1, /* f2p_partial: only the tests the change must fix count, and
                                             breaking a test that passed before voids the credit */
} rlvr_partial_credit;

/* The choice for this task (RLVR_PARTIAL_CREDIT_ALL until set). */
void rlvr_verify_task_set_partial_credit(rlvr_verify_task *task, rlvr_partial_credit credit);
rlvr_partial_credit rlvr_verify_task_partial_credit(const rlvr_verify_task *task);

/* Replaces the quarantined tests (NULL-terminated names; NULL for none). */
int rlvr_verify_task_set_quarantine(rlvr_verify_task *task, const char *const *names);

/* The whole path for one rollout: drop, gate, enclave, consensus. `seed`
 * makes the runs' seeds and orders (Philox, purpose RLVR_RNG_SHUFFLE).
 * Returns 0 with *out filled (a sandbox failure is verdict INFRA, not an
 * error); a negative code only for bad arguments or out of memory. */
int rlvr_verify_patch(rlvr_verify_task *task, const char *patch, size_t len, bool public_tests_changed,
                      uint64_t seed, rlvr_enclave_verdict *out);

/* ---- the runtime's view (never sent to the policy) ---------------------------- */

/* One enclave run with its per-test results. */
typedef struct {
    int reason;               /* RLVR_REASON_NONE: every sealed test passed */
    bool infra;               /* the sandbox or the apply step failed for reasons of its own */
    rlvr_sandbox_limit limit; /* of the build or the tests */
    rlvr_tap_report tap;
    rlvr_tap_judgement judgement; /* passed is 0 when a limit ended the run */
    double wall_s;
    double build_s;           /* of that: the build of the code under test (judge mode) */
    uint32_t test_seed;
} rlvr_verify_run;

/* Runs the patch once in a fresh enclave. run_index 0 uses the default test
 * order; other indices a shuffled order that is not the default (when there
 * are at least two tests). The gate is not consulted: callers validate. */
int rlvr_verify_run_once(rlvr_verify_task *task, const char *patch, size_t len, uint64_t seed, int run_index,
                         rlvr_verify_run *out);
void rlvr_verify_run_free(rlvr_verify_run *run);

/* The quarantine pass over the reference solution: `runs` enclave runs in
 * shuffled orders (the first in the default order); every required test that
 * ever fails is quarantined; the task should be dropped when more than
 * max_share of its tests are, or when the reference does not apply or
 * hits a limit. */
typedef struct {
    char **tests;      /* quarantined names (NULL-terminated) */
    int n_tests;
    int n_total;       /* tests considered */
    int runs;
    bool drop_task;
    int drop_reason;   /* why the task should be dropped: a reason code, or RLVR_REASON_NONE */
} rlvr_quarantine;

int rlvr_verify_quarantine(rlvr_verify_task *task, const char *reference, size_t len, int runs, uint64_t seed,
                           double max_share, rlvr_quarantine *out);
void rlvr_quarantine_free(rlvr_quarantine *q);

/* The reason a sandbox limit maps to. */
int rlvr_reason_for_limit(rlvr_sandbox_limit limit);

#endif
