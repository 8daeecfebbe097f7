/* train/trainer.c — the GRPO trainer behind `rlvr train` (train/trainer.h):
 * RL with verifiable rewards on the run's train tasks (docs/RL.md).
 *
 * One step (synchronous, Δv_max = 0):
 *   1. dynamic sampling rounds: the difficulty tracker draws tasks (Philox,
 *      keyed by seed, step, round), the group-size rule picks G per task;
 *   2. rollouts of the round through the harness (envs/harness.h), sampling
 *      keyed by (seed, step, sequence) with sequence = rlvr_rl_group_sequence(group, i);
 *   3. verification of each patch in a fresh enclave (identical patches of a
 *      task are verified once: [train] verify_cache), verdicts → rewards
 *      (rl/reward.h) → group advantages (rl/advantage.h); zero-variance
 *      groups are dropped and counted, the tracker observes every group;
 *   4. each trainer rank writes the kept rollouts it trains on to
 *      shards/step_N.rank_R.h5 (one process: all of them, rank 0), then
 *      re-scores them (forward at the sampling temperature), logs max
 *      |sampler − trainer log-prob| over policy tokens, computes the clipped
 *      token objective against the recorded sampling log-probs
 *      (rl/objective.h; with [grpo] kl_beta > 0 also the k3 KL to the frozen
 *      reference, [train] init), backward, AdamW, version + 1 — split over
 *      data-parallel trainer ranks when there are several
 *      (rlvr_trainer_apply, train/dp.c);
 *   5. one metrics row to metrics.h5, a progress line (core/log);
 *      checkpoints every [checkpoint] every steps, at the end, and when a
 *      signal asked to stop.
 * Bounded-async mode ([train] max_staleness > 0 with rollout ranks): step
 * 1's tasks come from the take hook instead (groups drawn and handed out
 * ahead of time by train/leader.c, admitted by staleness); steps 3–5 are
 * the same, the records keep the version that generated them, and the
 * truncated importance ratio against their sampling log-probs corrects the
 * lag.
 * Everything random is keyed by the step, so a run resumed from a
 * checkpoint continues bit-identically (the checkpoint stores the model,
 * AdamW moments, the difficulty tracker and the entropy controller).
 * Infrastructure failures are counted and excluded from the loss. */
#include "core/error.h"
#include "core/hash.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/sys.h"
#include "io/checkpoint.h"
#include "io/metrics.h"
#include "io/shard.h"
#include "rl/advantage.h"
#include "rl/difficulty.h"
#include "rl/entropy.h"
#include "rl/objective.h"
#include "rl/reward.h"
#include "train/credit.h"
#include "train/pack.h"
#include "train/run.h"
#include "train/trainer.h"
#include "train/verifiers.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MICRO_SEQS 16      /* sequences per trainer forward/backward (gradients accumulate) */

/* ---- the trainer's state ---------------------------------------------------------------- */

struct rlvr_trainer {
    rlvr_run *run;
    rlvr_model *model;
    rlvr_sampler *sampler;
    rlvr_difficulty *difficulty; /* over the usable train tasks (index into run->split_tasks[TRAIN]) */
    rlvr_entropy_controller entropy;
    rlvr_verifiers *verifiers;
    rlvr_pack pack;
    rlvr_metrics *metrics;
    int64_t step;                /* optimizer steps taken */
    int64_t version;             /* policy version = step */
    /* counters over the run */
    int64_t infra_total;
    step_stats last;           /* the last step's, for the progress line */
    rlvr_generate_fn generate; /* NULL: generate_local */
    void *generate_ctx;
    rlvr_after_update_fn after_update; /* NULL: nothing (one process) */
    void *after_update_ctx;
    rlvr_take_groups_fn take;          /* bounded-async mode: where a round's groups come from; NULL: sync */
    void *take_ctx;
    struct step_batch *round_batch;    /* the batch the take hook adds groups to (during the hook) */
    rlvr_trainer_dp dp;                /* data-parallel trainer ranks; size 1: this rank alone */
    int layout[3];                     /* for the manifest: trainer, verifier, rollout ranks */
    const char *const *hosts;          /* each rank's host (NULL: this host) */
    int n_hosts;
    /* [grpo] kl_beta > 0: the frozen reference policy ([train] init), never checkpointed */
    rlvr_model *reference;
    uint64_t reference_hash;           /* FNV-1a of its parameters */
    char reference_path[RLVR_IO_PATH_CAP]; /* "" = the initial weights (init = scratch) */
    bool resumed_reference;            /* restore() read the checkpoint's reference/hash and path */
    uint64_t resumed_hash;
    char resumed_path[RLVR_IO_PATH_CAP];
    /* A sampler that is not exact ([sampler] weights other than f32): the
     * objective's decoupled mode with the trainer's own log-probs at the
     * start of the step as π_prox (kept from the first pass for the later
     * ones), so each token's loss carries the truncated importance weight
     * min(π_prox / π_sample, [grpo] is_cap) (docs/RL.md "Sampler mismatch") */
    bool correct_mismatch;
    int pass;        /* the pass of rlvr_trainer_apply under way */
    double **prox;   /* (update's n) each rollout's π_prox per token, filled by pass 0 */
    int n_prox;
};

/* One group of a step. */
typedef struct {
    int32_t task;      /* index into the usable train tasks */
    int32_t first_job; /* jobs[first_job .. first_job + G) */
    int32_t G;
    bool kept;
} group;

typedef struct step_batch {
    rlvr_harness_job *jobs;
    int n_jobs, cap_jobs;
    group *groups;
    int n_groups, cap_groups;
    double *reward;    /* (n_jobs) */
    double *advantage; /* (n_jobs) */
    uint8_t *include;  /* (n_jobs) */
    float **tok_adv;   /* [credit] mode = mc: (n_jobs), each (record.n_tokens) or NULL; NULL: outcome credit */
} step_batch;

static void batch_clear(step_batch *b) {
    for (int i = 0; i < b->n_jobs; i++) rlvr_harness_job_clear(&b->jobs[i]);
    for (int i = 0; b->tok_adv && i < b->n_jobs; i++) free(b->tok_adv[i]);
    free(b->tok_adv);
    free(b->jobs), free(b->groups), free(b->reward), free(b->advantage), free(b->include);
    memset(b, 0, sizeof *b);
}

static int batch_reserve(step_batch *b, int jobs, int groups) {
    if (b->n_jobs + jobs > b->cap_jobs) {
        int cap = (b->n_jobs + jobs) * 2;
        rlvr_harness_job *j = realloc(b->jobs, (size_t)cap * sizeof *j);
        if (!j) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        b->jobs = j;
        double *r = realloc(b->reward, (size_t)cap * sizeof *r);
        if (!r) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        b->reward = r;
        double *a = realloc(b->advantage, (size_t)cap * sizeof *a);
        if (!a) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        b->advantage = a;
        uint8_t *in = realloc(b->include, (size_t)cap);
        if (!in) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        b->include = in;
        b->cap_jobs = cap;
    }
    if (b->n_groups + groups > b->cap_groups) {
        int cap = (b->n_groups + groups) * 2;
        group *g = realloc(b->groups, (size_t)cap * sizeof *g);
        if (!g) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        b->groups = g, b->cap_groups = cap;
    }
    return 0;
}

static const rlvr_task *train_task(const rlvr_trainer *t, int32_t i) {
    return rlvr_task_pool_get(t->run->pool, (size_t)t->run->split_tasks[RLVR_SPLIT_TRAIN][i]);
}

/* ---- step parts ------------------------------------------------------------------------ */

/* Adds the groups of one round (tasks drawn by the tracker) to the batch. */
static int draw_round(rlvr_trainer *t, step_batch *b, int32_t n, uint32_t round) {
    int32_t *tasks = malloc((size_t)n * sizeof *tasks);
    if (!tasks) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    int rc = rlvr_rl_difficulty_sample(tasks, t->difficulty, n, t->run->io.seed, (uint32_t)t->step + 1, round);
    const rlvr_rl_config *rl = &t->run->rl;
    for (int32_t k = 0; rc == 0 && k < n; k++) {
        int32_t G = rlvr_rl_difficulty_group_size(t->difficulty, tasks[k], rl->grpo.group_size);
        if (b->n_groups >= RLVR_GROUPS_DRAWN_MAX) /* the configuration check keeps a step below it */
            rc = RLVR_FAIL(RLVR_ELIMIT, "step %lld drew %d groups, all its sampling keys", (long long)t->step + 1,
                           RLVR_GROUPS_DRAWN_MAX);
        if (rc == 0) rc = batch_reserve(b, G, 1);
        if (rc < 0) break;
        int gi = b->n_groups++;
        b->groups[gi] = (group){tasks[k], b->n_jobs, G, false};
        for (int32_t i = 0; i < G; i++) {
            rlvr_harness_job *j = &b->jobs[b->n_jobs++];
            memset(j, 0, sizeof *j);
            j->task = train_task(t, tasks[k]);
            j->step = (uint32_t)t->step + 1;
            j->sequence = rlvr_rl_group_sequence(gi, i);
            j->capture_tools = rlvr_trainer_capture_tools(t, j->task);
        }
    }
    free(tasks);
    return rc;
}

uint32_t rlvr_trainer_capture_tools(const rlvr_trainer *t, const rlvr_task *task) {
    return t->run->rl.credit.mc && task->verifier == RLVR_VERIFIER_TESTS ? t->run->credit_tools : 0;
}

/* Reward of one verified rollout; include = 0 when excluded from the loss. */
static int score_job(rlvr_trainer *t, rlvr_harness_job *j, double *reward, uint8_t *include) {
    rlvr_rollout *r = &j->record;
    /* the verifier's score (envs/harness.c): partial credit already 0 where
     * the task's partial checks are not sealed */
    rlvr_reward_input in = {.verdict = r->verdict, .stop = r->stop, .partial = r->reward.outcome,
                            .format = j->calls > 0 ? (double)j->calls_parsed / j->calls : 1.0,
                            .policy_tokens = rlvr_rollout_policy_tokens(r)};
    if (rlvr_rl_stop_is_truncation(r->stop)) in.verdict = RLVR_VERDICT_NONE;
    if (r->stop == RLVR_STOP_INFRA_ERROR || r->verdict == RLVR_VERDICT_INFRA) in.verdict = RLVR_VERDICT_INFRA;
    rlvr_reward rw;
    RLVR_TRY(rlvr_rl_reward(&rw, &in, &t->run->rl.reward));
    r->reward.total = (float)rw.total;
    r->reward.outcome = (float)rw.outcome;
    r->reward.format = (float)rw.format;
    r->reward.length_penalty = (float)rw.length_penalty;
    *reward = rw.total;
    *include = !rw.excluded;
    return 0;
}

/* Generates and verifies jobs[0..n) here, in this process (the layout
 * without rollout and verifier ranks); pool_index[i] is job i's task. */
static int generate_local(rlvr_trainer *t, rlvr_harness_job *jobs, int n, const size_t *pool_index, step_stats *s) {
    double t0 = rlvr_now();
    RLVR_TRY(rlvr_harness_run(t->sampler, t->run->tok, &t->run->harness, jobs, n));
    s->generate_wall += rlvr_now() - t0;
    t0 = rlvr_now();
    RLVR_TRY(rlvr_verifiers_verify_jobs(t->verifiers, jobs, n, pool_index, (int)t->run->train.verify_threads));
    s->verify_wall += rlvr_now() - t0;
    return 0;
}

/* Runs and verifies the groups [from, b->n_groups) of the batch
 * (synchronous mode: generated by the current weights). */
static int play_round(rlvr_trainer *t, step_batch *b, int from, step_stats *s) {
    int j0 = b->groups[from].first_job, n = b->n_jobs - j0;
    size_t *pool_index = malloc((size_t)n * sizeof *pool_index);
    if (!pool_index) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    for (int g = from; g < b->n_groups; g++)
        for (int i = b->groups[g].first_job; i < b->groups[g].first_job + b->groups[g].G; i++) {
            pool_index[i - j0] = (size_t)t->run->split_tasks[RLVR_SPLIT_TRAIN][b->groups[g].task];
            b->jobs[i].record.policy_version = t->version;
        }
    int rc = t->generate ? t->generate(t->generate_ctx, b->jobs + j0, n, pool_index, t->version, s)
                         : generate_local(t, b->jobs + j0, n, pool_index, s);
    free(pool_index);
    RLVR_TRY(rc);
    for (int i = j0; i < b->n_jobs; i++) b->jobs[i].record.policy_version = t->version; /* the harness resets it */
    return 0;
}

/* Scores the finished groups [from, b->n_groups) of the batch; offers each
 * to dynamic sampling and the difficulty tracker. */
static int score_round(rlvr_trainer *t, step_batch *b, int from, rlvr_dynsample *ds, step_stats *s) {
    for (int g = from; g < b->n_groups; g++) {
        group *gr = &b->groups[g];
        int successes = 0, scored = 0;
        for (int i = gr->first_job; i < gr->first_job + gr->G; i++) {
            rlvr_harness_job *j = &b->jobs[i];
            RLVR_TRY(score_job(t, j, &b->reward[i], &b->include[i]));
            j->record.group_id = rlvr_rl_group_id(t->step + 1, g);
            j->record.rollout_index = i - gr->first_job;
            if (b->include[i]) scored++, successes += j->record.verdict == RLVR_VERDICT_PASS;
            s->infra += j->record.verdict == RLVR_VERDICT_INFRA;
        }
        bool informative = false;
        RLVR_TRY(rlvr_rl_group_advantages(b->advantage + gr->first_job, &informative, b->reward + gr->first_job,
                                          b->include + gr->first_job, gr->G, t->run->rl.grpo.advantage,
                                          t->run->rl.grpo.std_eps));
        if (scored > 0) RLVR_TRY(rlvr_rl_difficulty_observe(t->difficulty, gr->task, successes, scored));
        gr->kept = rlvr_rl_dynsample_offer(ds, informative);
        s->groups_zero_var += !informative;
    }
    return 0;
}

/* ---- Monte-Carlo turn credit ([credit] mode = mc, train/credit.h) ---------------------------- */

/* Bounded-async mode: a fork was generated by whatever weights its rollout
 * rank held, so it is admitted like any rollout — Δv = v_trainer − v_fork
 * at most [train] max_staleness, else left out of V̂ and counted as
 * dropped. */
static void fork_staleness(const rlvr_trainer *t, rlvr_rollout *r, uint8_t *include, step_stats *s) {
    int64_t lag = t->version - r->policy_version;
    r->staleness = lag;
    if (lag > t->run->train.max_staleness || lag < 0) {
        *include = 0;
        s->stale_dropped++;
        return;
    }
    s->admitted_lag[lag < RLVR_TRAIN_LAG_BINS - 1 ? lag : RLVR_TRAIN_LAG_BINS - 1]++;
}

/* Branch points of the kept rollouts, their forks run and verified like
 * any rollout (by the same generate hook: here or on rollout ranks),
 * scored, and V̂ at each branch point. */
static int run_forks(rlvr_trainer *t, step_batch *b, rlvr_credit_forks *f, step_stats *s) {
    uint8_t *use = calloc((size_t)(b->n_jobs > 0 ? b->n_jobs : 1), 1);
    size_t *pool = calloc((size_t)(b->n_jobs > 0 ? b->n_jobs : 1), sizeof *pool);
    int rc = use && pool ? 0 : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    for (int g = 0; rc == 0 && g < b->n_groups; g++)
        for (int i = b->groups[g].first_job; i < b->groups[g].first_job + b->groups[g].G; i++) {
            use[i] = b->groups[g].kept && b->include[i];
            pool[i] = (size_t)t->run->split_tasks[RLVR_SPLIT_TRAIN][b->groups[g].task];
        }
    if (rc == 0) rc = rlvr_credit_plan(f, b->jobs, use, pool, b->n_jobs, &t->run->rl.credit);
    free(use);
    free(pool);
    if (rc < 0 || f->n_forks == 0) return rc;
    for (int j = 0; j < f->n_forks; j++) f->forks[j].record.policy_version = t->version;
    RLVR_TRY(t->generate ? t->generate(t->generate_ctx, f->forks, f->n_forks, f->fork_pool_index, t->version, s)
                         : generate_local(t, f->forks, f->n_forks, f->fork_pool_index, s));
    for (int j = 0; j < f->n_forks; j++) {
        rlvr_rollout *r = &f->forks[j].record;
        if (!t->take) r->policy_version = t->version; /* the harness resets it */
        RLVR_TRY(score_job(t, &f->forks[j], &f->fork_reward[j], &f->fork_include[j]));
        s->mc_fork_tokens += rlvr_credit_fork_tokens(&f->forks[j]);
        if (t->take) fork_staleness(t, r, &f->fork_include[j], s);
    }
    s->mc_forks += f->n_forks;
    return rlvr_credit_values(f);
}

/* Each kept rollout's per-token advantages from its branch points' values
 * (its group advantage on every token when it has none). */
static int credit_tokens(rlvr_trainer *t, step_batch *b, const rlvr_credit_forks *f, step_stats *s) {
    const rlvr_grpo_config *grpo = &t->run->rl.grpo;
    b->tok_adv = calloc((size_t)(b->n_jobs > 0 ? b->n_jobs : 1), sizeof *b->tok_adv);
    if (!b->tok_adv) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    for (int g = 0; g < b->n_groups; g++) {
        const group *gr = &b->groups[g];
        if (!gr->kept) continue;
        double scale = 1;
        RLVR_TRY(rlvr_rl_group_scale(&scale, b->reward + gr->first_job, b->include + gr->first_job, gr->G,
                                     grpo->advantage, grpo->std_eps));
        for (int i = gr->first_job; i < gr->first_job + gr->G; i++) {
            if (!b->include[i]) continue;
            const rlvr_rollout *r = &b->jobs[i].record;
            b->tok_adv[i] = malloc((size_t)(r->n_tokens > 0 ? r->n_tokens : 1) * sizeof **b->tok_adv);
            if (!b->tok_adv[i]) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
            int nz = 0;
            RLVR_TRY(rlvr_credit_token_advantages(b->tok_adv[i], &nz, f, i, r, b->reward[i], b->advantage[i], scale));
            s->mc_turns += r->n_turns;
            s->mc_nonzero_turns += nz;
            s->mc_parent_tokens += rlvr_rollout_policy_tokens(r);
        }
    }
    for (int bi = 0; bi < f->n_branches; bi++) {
        if (f->branches[bi].scored == 0) continue;
        s->mc_branch_points++;
        s->mc_value_sum += f->branches[bi].value;
        s->mc_value_sq += f->branches[bi].value * f->branches[bi].value;
    }
    return 0;
}

static int credit_step(rlvr_trainer *t, step_batch *b, step_stats *s) {
    double t0 = rlvr_now();
    rlvr_credit_forks f = {0};
    int rc = run_forks(t, b, &f, s);
    if (rc == 0) rc = credit_tokens(t, b, &f, s);
    rlvr_credit_forks_free(&f);
    s->mc_fork_wall = rlvr_now() - t0;
    return rc;
}

/* ---- the trainer's update ----------------------------------------------------------------- */

/* The shard of (step, rank): recs[lo, hi) with their advantages. */
static int write_shard(const rlvr_run *r, int64_t step, int rank, const rlvr_rollout *const *recs, const double *adv,
                       int lo, int hi) {
    rlvr_shard_options so = rlvr_io_shard_options(&r->io);
    rlvr_shard_writer *w = NULL;
    RLVR_TRY(rlvr_shard_create(&w, r->io.shard_dir, step, rank, &so));
    int rc = 0;
    for (int i = lo; rc == 0 && i < hi; i++) rc = rlvr_shard_append(w, recs[i], (float)adv[i]);
    if (rc < 0) {
        rlvr_shard_abort(w);
        return rc;
    }
    return rlvr_shard_commit(w, NULL, 0);
}

/* A step without an update (nothing to train on) still gets one shard per
 * trainer rank, so every (step, rank) file exists: the leader writes them,
 * rank 0's with the step's kept rollouts (if any), the others empty — the
 * other ranks hear of a step only through its update. */
static int write_untrained_shards(const rlvr_trainer *t, int64_t step, const rlvr_rollout *const *recs,
                                  const double *adv, int n) {
    if (!t->run->io.shards) return 0;
    for (int rank = 0; rank < t->dp.size; rank++)
        RLVR_TRY(write_shard(t->run, step, rank, recs, adv, 0, rank == 0 ? n : 0));
    return 0;
}

/* The advantage of each trained policy token, into the step's moments. */
static void advantage_moments(const rlvr_rollout *r, double adv, const float *tok_adv, step_stats *s) {
    for (int32_t k = 0; k < r->n_tokens; k++) {
        if (r->mask[k] != RLVR_TOKEN_POLICY) continue;
        double a = tok_adv ? tok_adv[k] : adv;
        s->adv_sum += a, s->adv_sq += a * a, s->adv_tokens++;
    }
}

static int update(rlvr_trainer *t, step_batch *b, step_stats *s) {
    int64_t N = 0;
    int kept = 0;
    for (int g = 0; g < b->n_groups; g++) {
        if (!b->groups[g].kept) continue;
        for (int i = b->groups[g].first_job; i < b->groups[g].first_job + b->groups[g].G; i++)
            if (b->include[i]) N += rlvr_rollout_policy_tokens(&b->jobs[i].record), kept++;
    }
    s->rollouts = kept;
    rlvr_update_batch u = {.step = t->step + 1, .opt = t->run->rl.grpo.objective, .n = kept};
    u.opt.entropy_coef = t->entropy.coef;
    /* normalisers over the whole step's batch, not one micro-batch (nor one trainer rank's part) */
    if (u.opt.aggregation == RLVR_AGG_TOKENS) u.opt.normaliser = (double)N;
    if (u.opt.aggregation == RLVR_AGG_SEQUENCE) u.opt.normaliser = (double)kept;
    const rlvr_rollout **recs = malloc((size_t)(kept > 0 ? kept : 1) * sizeof *recs);
    double *adv = malloc((size_t)(kept > 0 ? kept : 1) * sizeof *adv);
    const float **tok_adv = b->tok_adv ? malloc((size_t)(kept > 0 ? kept : 1) * sizeof *tok_adv) : NULL;
    int rc = recs && adv && (tok_adv || !b->tok_adv) ? 0 : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    for (int g = 0, m = 0; rc == 0 && g < b->n_groups; g++) {
        if (!b->groups[g].kept) continue;
        for (int i = b->groups[g].first_job; i < b->groups[g].first_job + b->groups[g].G; i++) {
            if (!b->include[i]) continue;
            if (tok_adv) tok_adv[m] = b->tok_adv[i];
            recs[m] = &b->jobs[i].record, adv[m] = b->advantage[i], m++;
        }
    }
    u.recs = recs, u.adv = adv, u.tok_adv = tok_adv;
    for (int m = 0; rc == 0 && m < kept; m++) advantage_moments(recs[m], adv[m], tok_adv ? tok_adv[m] : NULL, s);
    if (rc == 0 && (kept == 0 || N == 0)) {
        /* nothing informative: no gradient, the weights stay (the step counts) */
        rc = write_untrained_shards(t, u.step, recs, adv, kept);
    } else {
        if (rc == 0 && t->dp.share) rc = t->dp.share(t->dp.ctx, &u);
        if (rc == 0) rc = rlvr_trainer_apply(t, &u, s);
        s->policy_tokens = N;
    }
    free(recs), free(adv), free(tok_adv);
    return rc;
}

void rlvr_update_part(const rlvr_update_batch *b, int rank, int size, int *lo, int *hi) {
    int64_t N = 0;
    for (int i = 0; i < b->n; i++) N += rlvr_rollout_policy_tokens(b->recs[i]);
    /* start of rank r: the first rollout whose preceding tokens reach r·N/size */
    int bound[2] = {0, b->n};
    for (int k = 0; k < 2; k++) {
        int r = rank + k;
        if (r == 0 || r >= size) continue;
        int64_t before = 0;
        int i = 0;
        while (i < b->n && before * size < (int64_t)r * N) before += rlvr_rollout_policy_tokens(b->recs[i++]);
        bound[k] = i;
    }
    *lo = bound[0], *hi = bound[1];
}

/* The optimizer's view of one of μ = [grpo] epochs passes: AdamW step
 * (step − 1)·μ + pass + 1, so its bias correction counts every update, with
 * the warm-up and the cosine stretched by μ, so the schedule still reads in
 * training steps (μ = 1: step `step`, the configuration as written). */
static int64_t epoch_adamw(const rlvr_trainer *t, int64_t step, int pass, rlvr_adamw_config *adamw) {
    int64_t mu = t->run->rl.grpo.epochs;
    *adamw = t->run->optim;
    adamw->total_steps = t->run->train.steps * mu;
    adamw->warmup_steps *= mu;
    return (step - 1) * mu + pass + 1;
}

/* The mismatch correction's π_prox store for an update of n rollouts. */
static int prox_begin(rlvr_trainer *t, int n) {
    if (!t->correct_mismatch) return 0;
    t->prox = calloc((size_t)(n > 0 ? n : 1), sizeof *t->prox);
    if (!t->prox) return RLVR_FAIL(RLVR_ENOMEM, "out of memory for the proximal log-probs of %d rollouts", n);
    t->n_prox = n;
    return 0;
}

static void prox_end(rlvr_trainer *t) {
    for (int i = 0; i < t->n_prox; i++) free(t->prox[i]);
    free(t->prox);
    t->prox = NULL;
    t->n_prox = 0;
}

/* One pass: gradient of the objective on [lo, hi), reduced over trainer ranks, and an AdamW step. */
static int apply_pass(rlvr_trainer *t, const rlvr_update_batch *b, int lo, int hi, int pass, step_stats *s) {
    int idx[MICRO_SEQS];
    t->pass = pass;
    RLVR_TRY(rlvr_model_zero_grad(t->model));
    for (int at = lo; at < hi; at += MICRO_SEQS) {
        int m = hi - at < MICRO_SEQS ? hi - at : MICRO_SEQS;
        for (int k = 0; k < m; k++) idx[k] = at + k;
        RLVR_TRY(rlvr_train_micro(t, b, idx, m, s));
    }
    if (t->dp.reduce) RLVR_TRY(t->dp.reduce(t->dp.ctx, t->model, s));
    rlvr_adamw_config adamw;
    int64_t opt_step = epoch_adamw(t, b->step, pass, &adamw);
    float gnorm = 0;
    RLVR_TRY(rlvr_model_adamw_step(t->model, &adamw, opt_step, &gnorm));
    s->grad_norm = gnorm;
    s->lr = rlvr_lr_at(&adamw, opt_step);
    return 0;
}

int rlvr_trainer_apply(rlvr_trainer *t, const rlvr_update_batch *b, step_stats *s) {
    int lo = 0, hi = b->n;
    if (t->dp.size > 1) rlvr_update_part(b, t->dp.rank, t->dp.size, &lo, &hi);
    /* this rank's shard first: a rank that cannot write it fails before the
     * gradient sum, so no step completes (nor is checkpointed) unless every
     * trainer rank's shard of it is on disk */
    if (t->run->io.shards) RLVR_TRY(write_shard(t->run, b->step, t->dp.rank, b->recs, b->adv, lo, hi));
    double t0 = rlvr_now();
    /* the first pass is on-policy: its loss, entropy, KL, gradient norm and
     * sampler-trainer log-prob gap are the step's; the clip counts are the
     * last pass's, where the policy has moved furthest from the sampler */
    RLVR_TRY(prox_begin(t, b->n));
    int rc = apply_pass(t, b, lo, hi, 0, s);
    for (int pass = 1; rc == 0 && pass < t->run->rl.grpo.epochs; pass++) {
        step_stats later = {0};
        rc = apply_pass(t, b, lo, hi, pass, &later);
        s->clipped = later.clipped, s->truncated_is = later.truncated_is, s->lr = later.lr;
    }
    prox_end(t);
    RLVR_TRY(rc);
    if (t->dp.check) RLVR_TRY(t->dp.check(t->dp.ctx, t->model, b->step));
    s->train_wall = rlvr_now() - t0;
    return 0;
}

/* π_prox of rollout `job`'s n tokens into out: the first pass's own
 * log-probs `lp` (kept for the later passes), a later pass's the kept ones. */
static int proximal_logprobs(rlvr_trainer *t, int job, const double *lp, int32_t n, double *out) {
    if (job < 0 || job >= t->n_prox) return RLVR_FAIL(RLVR_EINVAL, "rollout %d outside the update's %d", job, t->n_prox);
    if (t->pass == 0 || !t->prox[job]) {
        free(t->prox[job]);
        t->prox[job] = malloc((size_t)(n > 0 ? n : 1) * sizeof **t->prox);
        if (!t->prox[job]) return RLVR_FAIL(RLVR_ENOMEM, "out of memory for the proximal log-probs");
        memcpy(t->prox[job], lp, (size_t)n * sizeof *lp);
    }
    memcpy(out, t->prox[job], (size_t)n * sizeof *out);
    return 0;
}

int rlvr_train_micro(rlvr_trainer *t, const rlvr_update_batch *b, const int *job, int n, step_stats *s) {
    rlvr_pack *p = &t->pack;
    const rlvr_objective_options *opt = &b->opt;
    const rlvr_rollout *recs[MICRO_SEQS];
    if (n > MICRO_SEQS) return RLVR_FAIL(RLVR_EINVAL, "a micro-batch holds at most %d sequences", MICRO_SEQS);
    for (int i = 0; i < n; i++) recs[i] = b->recs[job[i]];
    RLVR_TRY(rlvr_pack_records(p, recs, n));
    int64_t T = p->offsets[p->n_seqs];
    double *lref = NULL;
    if (opt->kl_beta > 0) { /* the reference's log-probs first: the policy's forward must be the last (backward) */
        if (!t->reference) return RLVR_FAIL(RLVR_ESTATE, "kl_beta = %g without a reference model", opt->kl_beta);
        RLVR_TRY(rlvr_pack_forward(p, t->reference, t->run->sampler.temperature));
        lref = malloc((size_t)(T > 0 ? T : 1) * sizeof *lref);
        if (!lref) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        for (int64_t k = 0; k < T; k++) lref[k] = p->logp[k];
    }
    int rc = rlvr_pack_forward(p, t->model, t->run->sampler.temperature);
    if (rc < 0) {
        free(lref);
        return rc;
    }
    double *lp = malloc((size_t)T * sizeof *lp), *lps = malloc((size_t)T * sizeof *lps);
    double *ent = malloc((size_t)T * sizeof *ent), *dl = malloc((size_t)T * sizeof *dl);
    double *de = malloc((size_t)T * sizeof *de), *adv = malloc((size_t)n * sizeof *adv);
    double *tadv = b->tok_adv ? malloc((size_t)T * sizeof *tadv) : NULL;
    double *lprox = t->correct_mismatch ? malloc((size_t)T * sizeof *lprox) : NULL;
    rc = lp && lps && ent && dl && de && adv && (tadv || !b->tok_adv) && (lprox || !t->correct_mismatch)
             ? 0
             : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    for (int sq = 0; rc == 0 && sq < n; sq++) {
        adv[sq] = b->adv[job[sq]];
        for (int32_t k = 0; k < recs[sq]->n_tokens; k++) {
            int64_t at = p->offsets[sq] + k;
            if (tadv) tadv[at] = b->tok_adv[job[sq]][k];
            lp[at] = p->logp[at], ent[at] = p->entropy[at], lps[at] = recs[sq]->logprobs[k];
            if (p->policy[at]) {
                double d = fabs(lp[at] - lps[at]);
                if (d > s->logprob_diff_max) s->logprob_diff_max = d;
                s->logprob_diff_sum += d;
            }
        }
        if (lprox) rc = proximal_logprobs(t, job[sq], lp + p->offsets[sq], recs[sq]->n_tokens, lprox + p->offsets[sq]);
    }
    rlvr_objective_stats st;
    rlvr_objective_input in = {.n_seqs = p->n_seqs, .offsets = p->offsets, .mask = p->policy, .logp = lp,
                               .logp_sample = lps, .logp_prox = lprox, .logp_ref = lref, .entropy = ent,
                               .advantage = adv, .token_advantage = tadv};
    if (rc == 0) rc = rlvr_rl_objective(dl, de, &st, &in, opt);
    if (rc == 0) {
        for (int64_t k = 0; k < T; k++) p->dlogp[k] = (float)dl[k], p->dentropy[k] = (float)de[k];
        rc = rlvr_pack_backward(p, t->model);
        s->loss += st.loss;
        s->clipped += st.clipped_low + st.clipped_high;
        s->truncated_is += st.is_truncated;
        s->entropy_sum += st.entropy_sum;
        s->tokens += st.tokens;
        s->kl_sum += st.kl_sum;
    }
    free(lp), free(lps), free(ent), free(dl), free(de), free(adv), free(lref), free(tadv), free(lprox);
    return rc;
}

/* ---- checkpoints ---------------------------------------------------------------------------- */

static int save(rlvr_trainer *t) {
    const rlvr_run *r = t->run;
    rlvr_checkpoint_options o = rlvr_io_checkpoint_options(&r->io, r->cfg, t->step, t->version);
    o.mark |= t->step == r->train.steps;
    rlvr_checkpoint_writer *w = NULL;
    RLVR_TRY(rlvr_checkpoint_begin(&w, r->io.checkpoint_dir, &o));
    int64_t n = t->difficulty->n_tasks;
    double ent[3] = {t->entropy.coef, (double)t->entropy.updates, t->entropy.last_entropy};
    rlvr_state_array arrays[] = {
        {"difficulty/p_hat", RLVR_DT_F64, 1, {n}, t->difficulty->p_hat},
        {"difficulty/groups", RLVR_DT_I64, 1, {n}, t->difficulty->groups},
        {"difficulty/rollouts", RLVR_DT_I64, 1, {n}, t->difficulty->rollouts},
        {"difficulty/successes", RLVR_DT_I64, 1, {n}, t->difficulty->successes},
        {"entropy/state", RLVR_DT_F64, 1, {3}, ent},
    };
    int rc = rlvr_checkpoint_put_model(w, t->model);
    if (rc == 0) rc = rlvr_checkpoint_put_tokenizer(w, r->tok);
    for (size_t i = 0; rc == 0 && i < sizeof arrays / sizeof arrays[0]; i++)
        rc = rlvr_checkpoint_put_array(w, &arrays[i]);
    if (rc == 0 && t->reference) { /* which reference, not its weights: a resume reloads and compares */
        rlvr_state_array ref[] = {
            {"reference/hash", RLVR_DT_U64, 1, {1}, &t->reference_hash},
            {"reference/path", RLVR_DT_U8, 1, {(int64_t)strlen(t->reference_path) + 1}, t->reference_path},
        };
        for (size_t i = 0; rc == 0 && i < 2; i++) rc = rlvr_checkpoint_put_array(w, &ref[i]);
    }
    if (rc < 0) {
        rlvr_checkpoint_abort(w);
        return rc;
    }
    char path[RLVR_IO_PATH_CAP];
    RLVR_TRY(rlvr_checkpoint_commit(w, path, sizeof path));
    rlvr_progress("train: checkpoint %s", path);
    return 0;
}

/* The reference a checkpoint was trained against, if it had one. */
static int restore_reference_id(rlvr_trainer *t, const rlvr_checkpoint *ck) {
    rlvr_dtype dt;
    int rank = 0;
    int64_t dims[RLVR_IO_MAX_RANK] = {0};
    int rc = rlvr_checkpoint_array_shape(ck, "reference/path", &dt, &rank, dims);
    if (rc == RLVR_ENOTFOUND) return 0;
    RLVR_TRY(rc);
    if (rank != 1 || dims[0] < 1 || dims[0] > (int64_t)sizeof t->resumed_path)
        return RLVR_FAIL(RLVR_EFORMAT, "checkpoint array reference/path has a bad shape");
    const int64_t one[RLVR_IO_MAX_RANK] = {1};
    RLVR_TRY(rlvr_checkpoint_read_array(ck, "reference/path", RLVR_DT_U8, 1, dims, t->resumed_path));
    t->resumed_path[dims[0] - 1] = 0;
    RLVR_TRY(rlvr_checkpoint_read_array(ck, "reference/hash", RLVR_DT_U64, 1, one, &t->resumed_hash));
    t->resumed_reference = true;
    return 0;
}

static int restore(rlvr_trainer *t, const char *path) {
    rlvr_checkpoint *ck = NULL;
    RLVR_TRY(rlvr_checkpoint_open(&ck, path));
    int64_t n = t->difficulty->n_tasks, three = 3;
    double ent[3];
    rlvr_tokenizer *tok = NULL;
    int rc = rlvr_checkpoint_read_tokenizer(ck, &tok);
    if (rc == 0) rc = rlvr_run_set_tokenizer(t->run, tok, path);
    if (rc == 0) rc = rlvr_checkpoint_read_model(ck, t->model);
    const int64_t dn[RLVR_IO_MAX_RANK] = {n}, d3[RLVR_IO_MAX_RANK] = {three};
    if (rc == 0) rc = rlvr_checkpoint_read_array(ck, "difficulty/p_hat", RLVR_DT_F64, 1, dn, t->difficulty->p_hat);
    if (rc == 0) rc = rlvr_checkpoint_read_array(ck, "difficulty/groups", RLVR_DT_I64, 1, dn, t->difficulty->groups);
    if (rc == 0)
        rc = rlvr_checkpoint_read_array(ck, "difficulty/rollouts", RLVR_DT_I64, 1, dn, t->difficulty->rollouts);
    if (rc == 0)
        rc = rlvr_checkpoint_read_array(ck, "difficulty/successes", RLVR_DT_I64, 1, dn, t->difficulty->successes);
    if (rc == 0) rc = rlvr_checkpoint_read_array(ck, "entropy/state", RLVR_DT_F64, 1, d3, ent);
    if (rc == 0) rc = restore_reference_id(t, ck);
    if (rc == 0) {
        t->step = rlvr_checkpoint_info_of(ck)->step;
        t->version = rlvr_checkpoint_info_of(ck)->policy_version;
        t->entropy.coef = ent[0], t->entropy.updates = (int64_t)ent[1], t->entropy.last_entropy = ent[2];
    }
    rlvr_checkpoint_close(ck);
    return rc;
}

/* ---- one step, metrics, progress -------------------------------------------------------------- */

static void fill_row(const rlvr_trainer *t, const step_batch *b, const step_stats *s, const rlvr_dynsample *ds,
                     rlvr_metrics_row *row) {
    double rsum = 0, rsq = 0, fmt = 0, len = 0, pass = 0, trunc = 0, gen = 0, tool = 0, ver = 0, lpen = 0;
    int n = b->n_jobs, rep = 0, malformed = 0;
    double lag = 0;
    for (int i = 0; i < n; i++) {
        const rlvr_rollout *r = &b->jobs[i].record;
        lag += (double)r->staleness;
        rsum += b->reward[i], rsq += b->reward[i] * b->reward[i];
        fmt += r->reward.format, lpen += r->reward.length_penalty, len += rlvr_rollout_policy_tokens(r), pass += r->verdict == RLVR_VERDICT_PASS;
        trunc += rlvr_rl_stop_is_truncation(r->stop), rep += r->stop == RLVR_STOP_REPETITION;
        malformed += r->stop == RLVR_STOP_MALFORMED;
        gen += r->timings.generate_s, tool += r->timings.tool_s, ver += r->timings.verify_s;
    }
    double mean = n ? rsum / n : 0;
    double *v = row->value;
    v[RLVR_METRIC_POLICY_VERSION] = (double)t->version;
    v[RLVR_METRIC_ROLLOUTS] = s->rollouts;
    v[RLVR_METRIC_GROUPS] = ds->kept;
    v[RLVR_METRIC_GROUPS_ZERO_VAR] = s->groups_zero_var;
    v[RLVR_METRIC_REWARD_MEAN] = mean;
    v[RLVR_METRIC_REWARD_STD] = n ? sqrt(fmax(0, rsq / n - mean * mean)) : 0;
    v[RLVR_METRIC_PASS_RATE] = n ? pass / n : 0;
    v[RLVR_METRIC_FORMAT_MEAN] = n ? fmt / n : 0;
    v[RLVR_METRIC_POLICY_TOKENS] = n ? len / n : 0;
    v[RLVR_METRIC_LENGTH_PENALTY] = n ? lpen / n : 0;
    v[RLVR_METRIC_TRUNCATED] = n ? trunc / n : 0;
    v[RLVR_METRIC_INFRA_ERRORS] = s->infra;
    v[RLVR_METRIC_STALENESS_MEAN] = n ? lag / n : 0;
    v[RLVR_METRIC_STALENESS_DROPPED] = (double)s->stale_dropped;
    v[RLVR_METRIC_LOSS] = s->loss;
    /* mean k3 over the step's policy tokens; 0 without a reference (kl_beta = 0: no KL term) */
    v[RLVR_METRIC_KL] = !t->reference ? 0 : s->tokens ? s->kl_sum / (double)s->tokens : NAN;
    v[RLVR_METRIC_ENTROPY] = s->tokens ? s->entropy_sum / (double)s->tokens : NAN;
    v[RLVR_METRIC_ENTROPY_COEF] = t->entropy.coef;
    v[RLVR_METRIC_CLIP_FRACTION] = s->tokens ? (double)s->clipped / (double)s->tokens : 0;
    v[RLVR_METRIC_GRAD_NORM] = s->grad_norm;
    v[RLVR_METRIC_LR] = s->lr;
    v[RLVR_METRIC_GENERATE_S] = gen;
    v[RLVR_METRIC_TOOL_S] = tool;
    v[RLVR_METRIC_VERIFY_S] = ver;
    v[RLVR_METRIC_QUEUE_S] = 0;
    v[RLVR_METRIC_TRAIN_S] = s->train_wall;
    v[RLVR_METRIC_TOKENS_PER_S] = s->generate_wall > 0 ? len / s->generate_wall : 0;
    v[RLVR_METRIC_REPETITION_STOPS] = rep;
    v[RLVR_METRIC_LOGPROB_DIFF_MAX] = s->logprob_diff_max;
    v[RLVR_METRIC_LOGPROB_DIFF_MEAN] = s->tokens ? s->logprob_diff_sum / (double)s->tokens : 0;
    v[RLVR_METRIC_IS_CAPPED] = s->tokens ? (double)s->truncated_is / (double)s->tokens : 0;
    v[RLVR_METRIC_ROLLOUTS_PER_S] = s->wall > 0 ? n / s->wall : 0;
    v[RLVR_METRIC_IDLE_S] = fmax(0, s->wall - s->generate_wall - s->verify_wall - s->train_wall);
    v[RLVR_METRIC_DRAW_ROUNDS] = ds->rounds;
    v[RLVR_METRIC_MALFORMED_STOPS] = malformed;
    double am = s->adv_tokens ? s->adv_sum / (double)s->adv_tokens : 0;
    v[RLVR_METRIC_ADVANTAGE_TOKEN_STD] =
        s->adv_tokens ? sqrt(fmax(0, s->adv_sq / (double)s->adv_tokens - am * am)) : 0;
    if (t->run->rl.credit.mc) {
        double points = s->mc_branch_points, vmean = points ? s->mc_value_sum / points : 0;
        v[RLVR_METRIC_MC_BRANCH_POINTS] = points;
        v[RLVR_METRIC_MC_FORKS] = s->mc_forks;
        v[RLVR_METRIC_MC_FORK_TOKEN_RATIO] =
            s->mc_parent_tokens ? (double)s->mc_fork_tokens / (double)s->mc_parent_tokens : 0;
        v[RLVR_METRIC_MC_VALUE_STD] = points ? sqrt(fmax(0, s->mc_value_sq / points - vmean * vmean)) : 0;
        v[RLVR_METRIC_MC_NONZERO_TURNS] = s->mc_turns ? (double)s->mc_nonzero_turns / (double)s->mc_turns : 0;
        v[RLVR_METRIC_MC_FORK_S] = s->mc_fork_wall;
    }
}

static void progress_line(const rlvr_trainer *t, const rlvr_metrics_row *row, double eta) {
    const double *v = row->value;
    char mismatch[64] = ""; /* an inexact sampler: the mean gap and the share its weight capped */
    if (t->correct_mismatch)
        snprintf(mismatch, sizeof mismatch, " (mean %.1e, capped %.3f)", v[RLVR_METRIC_LOGPROB_DIFF_MEAN],
                 v[RLVR_METRIC_IS_CAPPED]);
    rlvr_progress("train step %lld/%lld  reward %.3f  pass %.3f  groups %.0f (zero-var %.0f, rounds %.0f)  H %.3f  "
                  "len %.0f  trunc %.2f  rep %.0f  malf %.0f  infra %.0f  clip %.3f  grad %.2f  |Δlogp| %.1e%s  %.2f rollouts/s  "
                  "wall: gen %.1fs verify %.1fs train %.1fs idle %.1fs  eta %.0f s",
                  (long long)t->step, (long long)t->run->train.steps, v[RLVR_METRIC_REWARD_MEAN], v[RLVR_METRIC_PASS_RATE],
                  v[RLVR_METRIC_GROUPS], v[RLVR_METRIC_GROUPS_ZERO_VAR], v[RLVR_METRIC_DRAW_ROUNDS], v[RLVR_METRIC_ENTROPY],
                  v[RLVR_METRIC_POLICY_TOKENS], v[RLVR_METRIC_TRUNCATED], v[RLVR_METRIC_REPETITION_STOPS],
                  v[RLVR_METRIC_MALFORMED_STOPS], v[RLVR_METRIC_INFRA_ERRORS], v[RLVR_METRIC_CLIP_FRACTION], v[RLVR_METRIC_GRAD_NORM],
                  v[RLVR_METRIC_LOGPROB_DIFF_MAX], mismatch, v[RLVR_METRIC_ROLLOUTS_PER_S], t->last.generate_wall,
                  t->last.verify_wall, t->last.train_wall, v[RLVR_METRIC_IDLE_S], eta);
    if (t->run->rl.credit.mc)
        rlvr_progress("train step %lld credit: branch points %.0f  forks %.0f  fork tokens %.2fx  V̂ sd %.3f  "
                      "turns with Â≠0 %.2f  fork wall %.1fs",
                      (long long)t->step, v[RLVR_METRIC_MC_BRANCH_POINTS], v[RLVR_METRIC_MC_FORKS],
                      v[RLVR_METRIC_MC_FORK_TOKEN_RATIO], v[RLVR_METRIC_MC_VALUE_STD], v[RLVR_METRIC_MC_NONZERO_TURNS],
                      v[RLVR_METRIC_MC_FORK_S]);
    if (t->take) { /* bounded-async: what the admission gate saw this step */
        const int64_t *h = t->last.admitted_lag;
        rlvr_progress("train step %lld staleness: mean %.2f  admitted by Δv 0:%lld 1:%lld 2:%lld ≥3:%lld  dropped %lld",
                      (long long)t->step, v[RLVR_METRIC_STALENESS_MEAN], (long long)h[0], (long long)h[1], (long long)h[2],
                      (long long)h[3], (long long)t->last.stale_dropped);
    }
}

static int train_step(rlvr_trainer *t, rlvr_metrics_row *row) {
    step_batch b = {0};
    step_stats s = {0};
    rlvr_dynsample ds;
    double t0 = rlvr_now();
    int rc = rlvr_rl_dynsample_begin(&ds, &t->run->rl.dynamic_sampling, t->run->rl.grpo.groups_per_step);
    for (uint32_t round = 0; rc == 0; round++) {
        int32_t n = rlvr_rl_dynsample_next_round(&ds);
        if (n == 0) break;
        int from = b.n_groups;
        if (t->take) {
            t->round_batch = &b;
            rc = t->take(t->take_ctx, n, &s);
            t->round_batch = NULL;
            if (rc == 0 && b.n_groups - from != n)
                rc = RLVR_FAIL(RLVR_ESTATE, "the async hook added %d groups to a round of %d", b.n_groups - from, n);
        } else {
            rc = draw_round(t, &b, n, round);
            if (rc == 0) rc = play_round(t, &b, from, &s);
        }
        if (rc == 0) rc = score_round(t, &b, from, &ds, &s);
    }
    if (rc == 0 && t->run->rl.credit.mc) rc = credit_step(t, &b, &s);
    if (rc == 0) rc = update(t, &b, &s);
    if (rc == 0) {
        t->step++;
        t->version = t->step;
        if (s.tokens > 0) rc = rlvr_rl_entropy_update(&t->entropy, s.entropy_sum / (double)s.tokens);
        if (rc == 0 && t->after_update) rc = t->after_update(t->after_update_ctx, t->model, t->version);
    }
    s.wall = rlvr_now() - t0;
    rlvr_metrics_row_init(row, t->step);
    fill_row(t, &b, &s, &ds, row);
    row->value[RLVR_METRIC_STEP_TIME_S] = s.wall;
    row->value[RLVR_METRIC_TIME_UNIX] = rlvr_run_unix_time();
    t->infra_total += s.infra;
    t->last = s;
    batch_clear(&b);
    return rc;
}

/* ---- set-up ------------------------------------------------------------------------------------ */

/* The checkpoint RL starts from when it has none of its own. */
static int init_path(const rlvr_run *r, char *path, size_t cap) {
    const char *init = r->train.init;
    if (strcmp(init, "scratch") == 0) return 0;
    if (strcmp(init, "sft") != 0) {
        snprintf(path, cap, "%s", init);
        return 1;
    }
    char dir[RLVR_IO_PATH_CAP];
    RLVR_TRY(rlvr_run_path(dir, sizeof dir, r->io.run_dir, "sft/checkpoints"));
    int rc = rlvr_checkpoint_latest(dir, path, cap);
    if (rc == RLVR_ENOTFOUND)
        return RLVR_FAIL(RLVR_ENOTFOUND, "[train] init = sft, but %s has no checkpoint: run `rlvr sft` first (or set "
                                         "init = scratch)",
                         dir);
    RLVR_TRY(rc);
    return 1;
}

static uint64_t params_hash(const rlvr_model *m) {
    return rlvr_fnv1a64(rlvr_model_params_read(m), rlvr_model_num_params(m) * sizeof(float));
}

/* The KL reference: [train] init (its latest SFT checkpoint for "sft"; the
 * initial weights for "scratch"), frozen. Resuming (`resumed` = the
 * checkpoint), it must be the one the run trained against. */
static int load_reference(rlvr_trainer *t, const char *resumed) {
    rlvr_run *r = t->run;
    int have = init_path(r, t->reference_path, sizeof t->reference_path);
    RLVR_TRY(have);
    if (!have) t->reference_path[0] = 0;
    RLVR_TRY(have ? rlvr_run_load_model(r, t->reference_path, false, &t->reference)
                  : rlvr_run_new_model(r, &t->reference));
    t->reference_hash = params_hash(t->reference);
    const char *what = have ? t->reference_path : "the initial weights (init = scratch)";
    rlvr_progress("train: KL reference (kl_beta = %g): %s, hash %016llx", r->rl.grpo.objective.kl_beta, what,
                  (unsigned long long)t->reference_hash);
    if (!resumed) return 0;
    if (!t->resumed_reference)
        return RLVR_FAIL(RLVR_ESTATE, "%s was trained without a KL reference (kl_beta was 0): resuming with kl_beta = "
                                      "%g would change the objective mid-run; start a new run (--out) instead",
                         resumed, r->rl.grpo.objective.kl_beta);
    if (t->resumed_hash != t->reference_hash || strcmp(t->resumed_path, t->reference_path) != 0)
        return RLVR_FAIL(RLVR_ESTATE, "the KL reference changed since %s was written: it was %s (hash %016llx), now "
                                      "it is %s (hash %016llx); restore the old reference (e.g. the SFT checkpoint) "
                                      "or start a new run",
                         resumed, t->resumed_path[0] ? t->resumed_path : "the initial weights",
                         (unsigned long long)t->resumed_hash, what, (unsigned long long)t->reference_hash);
    return 0;
}

/* Everything rlvr_trainer_new sets up, into a calloc'ed trainer the caller
 * frees on failure. */
static int trainer_init(rlvr_trainer *t, rlvr_run *r, bool resume) {
    t->run = r;
    t->dp.size = 1;
    t->correct_mismatch = !rlvr_sampler_exact(&r->sampler);
    t->layout[0] = 1; /* one process plays every role */
    RLVR_TRY(rlvr_run_pool(r, true));
    RLVR_TRY(rlvr_rl_difficulty_new(&t->difficulty, r->n_split[RLVR_SPLIT_TRAIN], &r->rl.difficulty));
    RLVR_TRY(rlvr_rl_entropy_init(&t->entropy, &r->rl.entropy));
    RLVR_TRY(rlvr_verifiers_new(&t->verifiers, r));
    RLVR_TRY(rlvr_run_host(r)); /* workspaces of "tests" tasks */
    char latest[RLVR_IO_PATH_CAP];
    int rc = rlvr_checkpoint_latest(r->io.checkpoint_dir, latest, sizeof latest);
    if (rc == 0 && !resume)
        return RLVR_FAIL(RLVR_ESTATE, "%s already holds checkpoints (latest %s): pass --resume to continue, or --out a "
                                      "new directory",
                         r->io.checkpoint_dir, latest);
    if (rc < 0 && rc != RLVR_ENOTFOUND) return rc;
    RLVR_TRY(rlvr_run_new_model(r, &t->model));
    RLVR_TRY(rlvr_model_alloc_optim_state(t->model));
    if (rc == 0) {
        rlvr_progress("train: resuming from %s", latest);
        RLVR_TRY(restore(t, latest));
    } else {
        char init[RLVR_IO_PATH_CAP];
        int have = init_path(r, init, sizeof init);
        RLVR_TRY(have);
        if (have) {
            rlvr_progress("train: starting from %s", init);
            rlvr_model_free(t->model);
            t->model = NULL;
            RLVR_TRY(rlvr_run_load_model(r, init, false, &t->model));
            RLVR_TRY(rlvr_model_alloc_optim_state(t->model));
        }
    }
    RLVR_TRY(rlvr_run_require_tokenizer(r));
    if (r->rl.grpo.objective.kl_beta > 0) RLVR_TRY(load_reference(t, rc == 0 ? latest : NULL));
    RLVR_TRY(rlvr_sampler_new(&t->sampler, t->model, &r->sampler));
    RLVR_TRY(rlvr_mkdir_p(r->io.run_dir, 0755));
    RLVR_TRY(rlvr_metrics_open(&t->metrics, r->io.metrics_path, t->step > 0 ? t->step : -1));
    return 0;
}

int rlvr_trainer_new(rlvr_trainer **out, rlvr_run *r, bool resume) {
    *out = NULL;
    rlvr_trainer *t = calloc(1, sizeof *t);
    if (!t) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    int rc = trainer_init(t, r, resume);
    if (rc < 0) {
        rlvr_trainer_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

void rlvr_trainer_free(rlvr_trainer *t) {
    if (!t) return;
    rlvr_verifiers_free(t->verifiers);
    rlvr_metrics_close(t->metrics);
    rlvr_pack_free(&t->pack);
    rlvr_sampler_free(t->sampler);
    rlvr_model_free(t->model);
    rlvr_model_free(t->reference);
    rlvr_rl_difficulty_free(t->difficulty);
    free(t);
}

void rlvr_trainer_set_ranks(rlvr_trainer *t, const int layout[3], const char *const *hosts, int n_hosts) {
    memcpy(t->layout, layout, sizeof t->layout);
    t->hosts = hosts;
    t->n_hosts = n_hosts;
}

/* The steps of this job (the loop of rlvr_trainer_run). */
static int run_steps(rlvr_trainer *t) {
    const rlvr_run *r = t->run;
    double t_start = rlvr_now();
    int64_t first = t->step;
    while (t->step < r->stop_step && !rlvr_run_stop_flag) {
        rlvr_metrics_row row;
        RLVR_TRY(train_step(t, &row));
        RLVR_TRY(rlvr_metrics_append(t->metrics, &row));
        double el = rlvr_now() - t_start;
        progress_line(t, &row, el / (double)(t->step - first) * (double)(r->stop_step - t->step));
        if (rlvr_io_checkpoint_due(&r->io, t->step) || t->step == r->stop_step || rlvr_run_stop_flag)
            RLVR_TRY(save(t));
    }
    return t->step < r->stop_step ? 1 : 0;
}

/* Whether `name` is a shard file (or its .part) and of which step. */
static bool shard_file_step(const char *name, int64_t *step) {
    long long st = 0;
    int rank = 0, end = 0;
    if (sscanf(name, "step_%lld.rank_%d.h5%n", &st, &rank, &end) != 2 || end == 0) return false;
    if (name[end] && strcmp(name + end, ".part") != 0) return false;
    *step = st;
    return true;
}

/* Deletes the shards (and .part files) of steps after the one the run
 * starts from: they come from a job that ended before checkpointing them,
 * and the steps are trained again. Without this a rerun with fewer trainer
 * ranks would leave the old job's files of the higher ranks next to the new
 * ones (a rerun rewrites only its own ranks' files, by rename). */
static int prune_stale_shards(const rlvr_trainer *t) {
    const char *dir = t->run->io.shard_dir;
    DIR *d = opendir(dir);
    if (!d) return errno == ENOENT ? 0 : rlvr_error_errno_at(__FILE__, __LINE__, "listing %s", dir);
    int removed = 0, rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        int64_t step = 0;
        if (!shard_file_step(e->d_name, &step) || step <= t->step) continue;
        char path[RLVR_IO_PATH_CAP];
        struct stat st;
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path)
            rc = RLVR_FAIL(RLVR_EINVAL, "shard path %s/%s is too long", dir, e->d_name);
        else if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue; /* gone meanwhile, or not a file rlvr wrote */
        else if (unlink(path) != 0 && errno != ENOENT)
            rc = rlvr_error_errno_at(__FILE__, __LINE__, "removing the stale shard %s", path);
        else
            removed++;
    }
    closedir(d);
    if (removed)
        rlvr_progress("train: removed %d shard files of steps after step %lld (left by an earlier job; those steps "
                      "are trained again)",
                      removed, (long long)t->step);
    return rc;
}

int rlvr_trainer_run(rlvr_trainer *t) {
    const rlvr_run *r = t->run;
    if (r->io.shards) RLVR_TRY(prune_stale_shards(t));
    rlvr_progress("train: steps %lld → %lld, %d train tasks, G = %d, %d informative groups per step",
                  (long long)t->step, (long long)r->train.steps, r->n_split[RLVR_SPLIT_TRAIN], r->rl.grpo.group_size,
                  r->rl.grpo.groups_per_step);
    rlvr_manifest *manifest = NULL;
    RLVR_TRY(rlvr_run_manifest_begin(r, r->io.manifest_path, t->layout, t->hosts, t->n_hosts, &manifest));
    int rc = run_steps(t);
    char why[512] = "";
    if (rc < 0) snprintf(why, sizeof why, "%s", rlvr_error_last()); /* the manifest's write must not hide it */
    int m_rc = rlvr_run_manifest_end(manifest, r->io.manifest_path, rc, t->step, t->version);
    if (rc < 0) return rlvr_error_set(rc, "%s", why);
    RLVR_TRY(m_rc);
    int64_t runs = 0, cached = 0, freed = 0;
    rlvr_verifiers_counts(t->verifiers, &runs, &cached, &freed);
    rlvr_log_line(RLVR_LOG_ERROR, "train: %lld infra errors excluded; %lld enclave verifications, %lld verdicts from the cache; "
                  "%lld idle task enclaves freed",
                  (long long)t->infra_total, (long long)runs, (long long)cached, (long long)freed);
    return rc;
}

const rlvr_model *rlvr_trainer_model(const rlvr_trainer *t) { return t->model; }

rlvr_model *rlvr_trainer_model_mut(rlvr_trainer *t) { return t->model; }

void rlvr_trainer_set_dp(rlvr_trainer *t, const rlvr_trainer_dp *dp) { t->dp = *dp; }

int rlvr_trainer_new_replica(rlvr_trainer **out, rlvr_run *r, rlvr_model *model) {
    *out = NULL;
    rlvr_trainer *t = calloc(1, sizeof *t);
    if (!t) {
        rlvr_model_free(model);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    }
    t->run = r;
    t->model = model;
    t->dp.size = 1;
    t->correct_mismatch = !rlvr_sampler_exact(&r->sampler);
    int rc = rlvr_model_alloc_optim_state(model);
    /* the reference's weights come from the leader (train/dp.c rlvr_dist_dp_bcast_state) */
    if (rc == 0 && r->rl.grpo.objective.kl_beta > 0) rc = rlvr_run_new_model(r, &t->reference);
    if (rc < 0) {
        rlvr_trainer_free(t); /* the model with it */
        return rc;
    }
    *out = t;
    return 0;
}

rlvr_model *rlvr_trainer_reference(rlvr_trainer *t) { return t->reference; }

void rlvr_trainer_set_async(rlvr_trainer *t, rlvr_take_groups_fn take, void *take_ctx, rlvr_generate_fn forks,
                            void *forks_ctx, rlvr_after_update_fn after_update, void *after_update_ctx) {
    t->generate = forks, t->generate_ctx = forks_ctx;
    t->take = take, t->take_ctx = take_ctx;
    t->after_update = after_update, t->after_update_ctx = after_update_ctx;
}

int rlvr_trainer_draw(rlvr_trainer *t, int32_t n, uint32_t round, int32_t *task, int32_t *G, size_t *pool_index) {
    RLVR_TRY(rlvr_rl_difficulty_sample(task, t->difficulty, n, t->run->io.seed, (uint32_t)t->step + 1, round));
    for (int32_t k = 0; k < n; k++) {
        G[k] = rlvr_rl_difficulty_group_size(t->difficulty, task[k], t->run->rl.grpo.group_size);
        pool_index[k] = (size_t)t->run->split_tasks[RLVR_SPLIT_TRAIN][task[k]];
    }
    return 0;
}

const rlvr_task *rlvr_trainer_task(const rlvr_trainer *t, int32_t task) { return train_task(t, task); }

int rlvr_trainer_put_group(rlvr_trainer *t, int32_t task, rlvr_harness_job *jobs, int32_t G) {
    step_batch *b = t->round_batch;
    if (!b) return RLVR_FAIL(RLVR_ESTATE, "rlvr_trainer_put_group outside the take hook");
    if (task < 0 || task >= t->difficulty->n_tasks || G < 1)
        return RLVR_FAIL(RLVR_EINVAL, "rlvr_trainer_put_group: train task %d of %lld, G = %d", task,
                         (long long)t->difficulty->n_tasks, G);
    RLVR_TRY(batch_reserve(b, G, 1));
    b->groups[b->n_groups++] = (group){task, b->n_jobs, G, false};
    for (int32_t i = 0; i < G; i++) {
        rlvr_harness_job *j = &b->jobs[b->n_jobs++];
        *j = jobs[i];
        memset(&jobs[i], 0, sizeof jobs[i]);
        j->record.staleness = t->version - j->record.policy_version;
    }
    return 0;
}

int64_t rlvr_trainer_version(const rlvr_trainer *t) { return t->version; }

void rlvr_trainer_set_hooks(rlvr_trainer *t, rlvr_generate_fn generate, void *generate_ctx,
                            rlvr_after_update_fn after_update, void *after_update_ctx) {
    t->generate = generate, t->generate_ctx = generate_ctx;
    t->after_update = after_update, t->after_update_ctx = after_update_ctx;
}
