/* jobs/train.h — the RL trainer behind `rlvr train` and the quickstart
 * (jobs/train.c describes one step). */
#ifndef RLVR_JOBS_TRAIN_H
#define RLVR_JOBS_TRAIN_H

#include "jobs/run.h"
#include "rl/objective.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct rlvr_trainer rlvr_trainer;

/* What one step measured (summed over micro-batches and groups). */
typedef struct {
    int rollouts, groups_zero_var, infra;
    int64_t policy_tokens, tokens, clipped, truncated_is;
    double loss, entropy_sum, grad_norm, lr, logprob_diff_max;
    double generate_wall, verify_wall, train_wall, wall;
} step_stats;

/* Loads the pool (building the built-in one on first use) and the model:
 * the run's latest checkpoint when resuming (refused without `resume` when
 * one exists), else [train] init. */
int rlvr_trainer_new(rlvr_trainer **out, rlvr_run *r, bool resume);
void rlvr_trainer_free(rlvr_trainer *t);

/* Steps until [train] steps or a stop signal: 0 when finished, 1 when
 * stopped by a signal (after a checkpoint), negative on error. */
int rlvr_trainer_run(rlvr_trainer *t);

const rlvr_model *rlvr_trainer_model(const rlvr_trainer *t);

/* Where a step's rollouts come from. jobs[0..n) are harness jobs with task,
 * step and sequence set (record.policy_version = version); pool_index[i] is
 * job i's task in the run's pool. On return every job holds its finished
 * record with its verdict (verified), exactly as rlvr_harness_run followed by
 * rlvr_verifiers_verify would leave it; the patch is not needed. Adds its
 * wall times to s->generate_wall / s->verify_wall. The default generates and
 * verifies in this process; a distributed run hands the work to rollout and
 * verifier ranks (records depend only on the keys, never on which rank ran
 * them). */
typedef int (*rlvr_generate_fn)(void *ctx, rlvr_harness_job *jobs, int n, const size_t *pool_index, int64_t version,
                                step_stats *s);
/* Called after each optimizer step with the new weights and their version
 * (e.g. to broadcast them to rollout ranks). */
typedef int (*rlvr_after_update_fn)(void *ctx, const rlvr_model *model, int64_t version);

void rlvr_trainer_set_hooks(rlvr_trainer *t, rlvr_generate_fn generate, void *generate_ctx,
                            rlvr_after_update_fn after_update, void *after_update_ctx);

/* One micro-batch of the update: forward, objective against the recorded
 * sampling log-probs, backward (accumulating). adv_of_job[job[i]] is the
 * advantage of recs[i]. */
int rlvr_train_micro(rlvr_trainer *t, const rlvr_rollout *const *recs, const double *adv_of_job, const int *job,
                     int n, const rlvr_objective_options *opt, step_stats *s);

#endif
