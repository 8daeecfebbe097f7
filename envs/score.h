/* envs/score.h — one patch (or one answer) of one task, scored as training
 * scores a rollout that ends with it: for a "tests" task the diff gate, a
 * verification enclave, the build, the judge or the test command, the TAP
 * judgement and consensus (enclave/verify.h), and the outcome the reward
 * would use; for an "arith" task the answer checked in process.
 *
 * What leaves is the verdict only (enclave/verify.h rlvr_enclave_verdict):
 * outcome, reason, partial credit, counts, runs and durations; never a test
 * name or a line of the hidden tests' output. `rlvr verify` prints it. */
#ifndef RLVR_ENVS_SCORE_H
#define RLVR_ENVS_SCORE_H

#include "core/config.h"
#include "enclave/sandbox.h"
#include "enclave/verify.h"
#include "envs/task.h"
#include "rl/reward.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    unsigned version;
    rlvr_sandbox_limits limits;     /* one enclave run ([enclave], falling back to [sandbox]) */
    int consensus_runs;             /* K: runs a passing patch needs ([enclave] consensus_runs) */
    rlvr_outcome_kind outcome;      /* [reward] outcome: what a failed rollout earns (binary: nothing) */
    uint64_t seed;                  /* the runs' seeds and test orders */
} rlvr_score_options;

#define RLVR_SCORE_OPTIONS_VERSION 1

/* The options a run with configuration `cfg` verifies with ([enclave]
 * limits and consensus_runs, [reward] outcome); `cfg` must have been
 * loaded with the enclave and rl key tables. RLVR_ECONFIG naming the key
 * when a value is refused. */
int rlvr_score_options_from_config(rlvr_score_options *out, const rlvr_config *cfg);

typedef struct {
    rlvr_enclave_verdict verdict; /* "arith": PASS, or FAIL with reason tests_failed; no enclave runs */
    double outcome;               /* R_outcome as the reward takes it: 1 for a pass; for a failure under
                                     `partial` or `fail_to_pass` its share where it is sealed (judge
                                     mode), else 0 */
    bool judged;                  /* the task is verified in judge mode (its partial credit is sealed) */
} rlvr_score;

/* Scores `text` (a unified git patch against the task's base commit, or an
 * arith task's answer; len bytes, NUL not needed) as a rollout that ended
 * with it. `host` is needed for "tests" tasks (NULL is fine for "arith").
 * Returns 0 with *out filled (a sandbox failure is verdict INFRA, a patch
 * the gate refuses verdict REJECTED); a negative code for bad arguments, a
 * task that cannot be prepared (its repository or judge), or out of
 * memory. */
int rlvr_score_patch(const rlvr_task *task, rlvr_sandbox_host *host, const rlvr_score_options *o, const char *text,
                     size_t len, rlvr_score *out);

#endif
