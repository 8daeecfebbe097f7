/* train/verifiers.h — verification of finished rollouts against the run's
 * pool, as the leader (one process) or a verifier rank does it.
 *
 * One enclave verify task per pool task, made on first use with the pool
 * manifest's quarantined tests removed, [enclave] limits and consensus runs;
 * at most [train] verify_enclaves of them (or the tasks of one batch, if
 * more) are alive at once: the ones idle longest are freed and rebuilt on
 * their task's next use.
 * Verdict cache ([train] verify_cache): a task's byte-identical patches get
 * the verdict of the first one (the pool is validated: deterministic tests,
 * flaky ones quarantined); INFRA verdicts, dropped rollouts (public tests
 * changed) and over-large patches are never cached. Truncated rollouts are
 * not verified: the truncation policy scores them. A verification that
 * fails for infrastructure reasons becomes verdict INFRA (excluded from the
 * loss, counted), never an error of the run. */
#ifndef RLVR_TRAIN_VERIFIERS_H
#define RLVR_TRAIN_VERIFIERS_H

#include "envs/harness.h"
#include "train/run.h"

#include <stddef.h>
#include <stdint.h>

typedef struct rlvr_verifiers rlvr_verifiers;

int rlvr_verifiers_new(rlvr_verifiers **out, rlvr_run *r);
void rlvr_verifiers_free(rlvr_verifiers *v);

/* Sets the verdict (and reward.outcome, timings.verify_s) of the finished
 * job of pool task `pool_index`; "arith" jobs were scored by the harness and
 * are left as they are. Negative only for out of memory. */
int rlvr_verifiers_verify(rlvr_verifiers *v, rlvr_harness_job *job, size_t pool_index);

/* Verifies jobs[0..n) (job i of pool task pool_index[i]) exactly as
 * rlvr_verifiers_verify on each job in order would, on up to `threads`
 * threads (< 1: the physical cores): the jobs of one task run in their order
 * on one thread, so the verdict cache hits the same patches, and different
 * tasks run at once. Negative only for out of memory. */
int rlvr_verifiers_verify_jobs(rlvr_verifiers *v, rlvr_harness_job *jobs, int n, const size_t *pool_index,
                               int threads);

/* Enclave verifications run, verdicts taken from the cache, and idle
 * verify tasks freed, so far. */
void rlvr_verifiers_counts(const rlvr_verifiers *v, int64_t *runs, int64_t *cached, int64_t *freed);

#endif
