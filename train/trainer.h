/* train/trainer.h — the GRPO trainer behind `rlvr train` and the quickstart
 * (train/trainer.c describes one step). */
#ifndef RLVR_TRAIN_TRAINER_H
#define RLVR_TRAIN_TRAINER_H

#include "rl/objective.h"
#include "train/run.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct rlvr_trainer rlvr_trainer;

/* What one step measured (summed over micro-batches and groups). */
/* Bins of the admitted-staleness histogram on the progress line: Δv = 0, 1,
 * 2 and ≥ 3 (bounded-async mode). */
#define RLVR_TRAIN_LAG_BINS 4

typedef struct {
    int rollouts, groups_zero_var, infra;
    int64_t policy_tokens, tokens, clipped, truncated_is;
    double loss, entropy_sum, kl_sum, grad_norm, lr, logprob_diff_max;
    double logprob_diff_sum; /* Σ |sampler − trainer log-prob| over the first pass's policy tokens */
    double generate_wall, verify_wall, train_wall, wall;
    /* bounded-async mode: admitted groups' rollouts by Δv, and rollouts the
     * admission gate dropped (Δv > Δv_max) */
    int64_t admitted_lag[RLVR_TRAIN_LAG_BINS];
    int64_t stale_dropped;
    /* [credit] mode = mc */
    int mc_branch_points, mc_forks;
    int64_t mc_fork_tokens, mc_parent_tokens, mc_turns, mc_nonzero_turns;
    double mc_value_sum, mc_value_sq, mc_fork_wall;
    double adv_sum, adv_sq; /* over the trained policy tokens (adv_tokens of them) */
    int64_t adv_tokens;
} step_stats;

/* Loads the pool (building the built-in one on first use) and the model:
 * the run's latest checkpoint when resuming (refused without `resume` when
 * one exists), else [train] init. */
int rlvr_trainer_new(rlvr_trainer **out, rlvr_run *r, bool resume);
/* (Constructors here set *out only on success, NULL otherwise; the caller
 * frees what they return with rlvr_trainer_free. `r` is borrowed and must
 * outlive the trainer.) */
void rlvr_trainer_free(rlvr_trainer *t);

/* Steps until [train] steps or a stop signal: 0 when finished, 1 when
 * stopped by a signal (after a checkpoint), negative on error. Writes the
 * run manifest (<run>/manifest.h5, status "running") first and rewrites it
 * with the outcome at the end. */
int rlvr_trainer_run(rlvr_trainer *t);

/* What the manifest records about the ranks: trainer, verifier and rollout
 * rank counts and each rank's host name in world-rank order (hosts NULL:
 * this host). Default: one process {1, 0, 0}. hosts must outlive
 * rlvr_trainer_run. */
void rlvr_trainer_set_ranks(rlvr_trainer *t, const int layout[3], const char *const *hosts, int n_hosts);

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

/* Bounded-async mode ([train] max_staleness > 0 with rollout ranks,
 * train/leader.c). Each dynamic-sampling round asks `take` for n finished
 * groups instead of drawing and generating its own: the hook hands groups
 * out ahead of time (tasks from rlvr_trainer_draw), collects them as they
 * finish, admits or drops them by staleness, and adds each admitted group to
 * the round with rlvr_trainer_put_group (exactly n of them, unless it
 * fails). Scoring, advantages, the difficulty tracker and dynamic sampling
 * then treat them as in synchronous mode. */
typedef int (*rlvr_take_groups_fn)(void *ctx, int32_t n, step_stats *s);

/* Switches the trainer to bounded-async mode (after_update as in
 * rlvr_trainer_set_hooks). `forks` runs Monte-Carlo credit's fork jobs
 * (as rlvr_generate_fn; their records keep the version that generated
 * them, and the trainer admits each by staleness); NULL: none. */
void rlvr_trainer_set_async(rlvr_trainer *t, rlvr_take_groups_fn take, void *take_ctx, rlvr_generate_fn forks,
                            void *forks_ctx, rlvr_after_update_fn after_update, void *after_update_ctx);

/* Draws n groups to hand out: tasks by the difficulty tracker in its current
 * state (Philox keyed by the run seed, the next step and `round`), G by the
 * group-size rule. task[i] indexes the run's train split; pool_index[i] is
 * its index in the pool. */
int rlvr_trainer_draw(rlvr_trainer *t, int32_t n, uint32_t round, int32_t *task, int32_t *G, size_t *pool_index);

/* The tools after whose calls a rollout of `task` snapshots its workspace:
 * [credit] state_changing_tools with mode = mc for a "tests" task, else 0
 * (harness job capture_tools; a generate hook running jobs elsewhere passes
 * it on). */
uint32_t rlvr_trainer_capture_tools(const rlvr_trainer *t, const rlvr_task *task);

/* The task of train-split index `task`. */
const rlvr_task *rlvr_trainer_task(const rlvr_trainer *t, int32_t task);

/* Adds one admitted group to the round in progress (only from inside the
 * take hook): jobs[0..G) hold finished, verified records (policy_version =
 * the version that generated them); their contents move into the batch and
 * the jobs are left zeroed. Each record's staleness is set to v_trainer −
 * policy_version. */
int rlvr_trainer_put_group(rlvr_trainer *t, int32_t task, rlvr_harness_job *jobs, int32_t G);

/* The policy version the next update starts from (= steps taken). */
int64_t rlvr_trainer_version(const rlvr_trainer *t);

/* ---- data-parallel trainer ranks ([layout] trainer = T > 1, train/dp.c) ----
 *
 * One optimizer step's input, the same on every trainer rank: the step's
 * kept rollouts in batch order with their advantages, and the objective
 * options with the normalisers of the WHOLE step (tokens / sequences over
 * all of it), so the parts' gradients add up to the one-rank gradient.
 * Each trainer rank writes its part to its shard (step, rank), so with
 * [shards] write on, recs[lo, hi) of a rank's part must be whole records
 * (docs/FORMATS.md "Rollout shard"); the rest need only tokens, log-probs and mask. */
typedef struct {
    int64_t step;                        /* the optimizer step number (1-based) */
    rlvr_objective_options opt;
    int n;                               /* rollouts */
    const rlvr_rollout *const *recs;     /* (n) */
    const double *adv;                   /* (n) advantage of recs[i] */
    const float *const *tok_adv;         /* (n) Monte-Carlo credit: (recs[i]->n_tokens) advantage of each
                                            token of recs[i] (0 off its policy tokens); NULL: adv[i] for
                                            every token (outcome credit) */
} rlvr_update_batch;

/* Trainer rank r of T computes the gradient of rollouts [lo, hi) of the
 * batch (rlvr_update_part); the hooks move the rest:
 *   share   leader only: hands the batch to the other trainer ranks
 *   reduce  sums the gradient buffer and the step's stats over the trainer
 *           ranks (rank order: deterministic)
 *   check   after the AdamW step: fails when the replicas' weights differ */
typedef struct {
    int rank, size;
    int (*share)(void *ctx, const rlvr_update_batch *b);
    int (*reduce)(void *ctx, rlvr_model *model, step_stats *s);
    int (*check)(void *ctx, rlvr_model *model, int64_t step);
    void *ctx;
} rlvr_trainer_dp;

void rlvr_trainer_set_dp(rlvr_trainer *t, const rlvr_trainer_dp *dp);

/* Rollouts [*lo, *hi) of b are trainer rank `rank`'s of `size`: contiguous
 * ranges in batch order, cut where the running policy-token count crosses
 * rank·N/size (balanced by tokens; a range may be empty). */
void rlvr_update_part(const rlvr_update_batch *b, int rank, int size, int *lo, int *hi);

/* A trainer on a non-leader trainer rank: the model only (owned from here
 * on, freed with the trainer, or at once when this fails; gradients and AdamW moments allocated), no pool, verifiers, metrics
 * or checkpoints. Needs nothing on disk (a run from rlvr_run_parse will
 * do): with [shards] write = false, rlvr_trainer_apply on it writes no file
 * (tests/train/test_trainer_steps.c). */
int rlvr_trainer_new_replica(rlvr_trainer **out, rlvr_run *r, rlvr_model *model);

/* The model (mutable: a replica's is filled from the leader's). */
rlvr_model *rlvr_trainer_model_mut(rlvr_trainer *t);

/* The frozen KL reference ([grpo] kl_beta > 0), else NULL. */
rlvr_model *rlvr_trainer_reference(rlvr_trainer *t);

/* One optimizer step on this rank's part of b: write the part to the shard
 * <shards>/step_<b->step>.rank_<rank>.h5 ([shards] write; before any
 * collective, so a rank that cannot write fails the step), zero the
 * gradients, micro-batches over [lo, hi), reduce (data-parallel), AdamW step
 * b->step, check the replicas. Fills s's loss, token counts, grad_norm, lr. */
int rlvr_trainer_apply(rlvr_trainer *t, const rlvr_update_batch *b, step_stats *s);

/* One micro-batch of the update: forward, objective against the recorded
 * sampling log-probs, backward (accumulating), over rollouts b->recs[job[i]],
 * i < n, with their advantages (b->adv, or b->tok_adv per token). */
int rlvr_train_micro(rlvr_trainer *t, const rlvr_update_batch *b, const int *job, int n, step_stats *s);

#endif
