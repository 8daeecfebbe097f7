/* eval/eval.h — offline evaluation of one policy on a set of tasks:
 * pass@1, pass@k and pass^k with intervals, per family and overall, and the
 * paired difference of two policies on the same tasks. docs/EVAL.md has the
 * formulas and the JSON fields.
 *
 * Rollouts run through the training harness (envs/harness.h: same prompt,
 * template, tools, budgets, parsing) with the batched sampler; "tests" tasks
 * are verified in the enclave (rlvr_harness_verify, consensus included),
 * "arith" tasks in process.
 *
 * Sampling is deterministic: sample j of a task with key `index` draws from
 * Philox (seed, RLVR_RNG_SAMPLE, RLVR_EVAL_STEP, index·samples + j, position),
 * so a task's rollouts do not depend on which other tasks are evaluated, in
 * which order, or how many rollouts decode together (kv_slots). Its
 * verification seeds come from (seed, index) alone.
 *
 * Scoring of one rollout:
 *   success   verdict PASS and the episode ended by itself (stop DONE);
 *   failure   everything else: FAIL, REJECTED, TIMEOUT, DROPPED (the policy
 *             changed the public tests, or a flaky patch), truncation by a
 *             ceiling (token budget, turn limit, context, repetition) —
 *             truncated "tests" rollouts are not sent to the enclave;
 *   excluded  infrastructure errors (stop INFRA_ERROR or verdict INFRA):
 *             counted per task, never scored. A task whose every sample was
 *             excluded leaves the aggregates (counted as `excluded`).
 *
 * Verification cache: the G samples of a task that end with byte-identical
 * patches (same bytes, same diff-gate flags) are verified once and share the
 * verdict. The verification seed depends only on (seed, task index), so the
 * cached verdict is the one a second enclave run would give; this relies on
 * the pool being validated (`rlvr tasks check`): tests deterministic on the
 * reference, flaky tests quarantined, so the same patch gets the same
 * verdict. An INFRA verdict is never cached. */
#ifndef RLVR_EVAL_EVAL_H
#define RLVR_EVAL_EVAL_H

#include "enclave/sandbox.h"
#include "envs/check.h"
#include "envs/harness.h"
#include "envs/pool.h"
#include "envs/task.h"
#include "policy/model.h"
#include "policy/sampler.h"
#include "policy/tokenizer.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The sampler `step` key of every evaluation rollout (training uses its
 * optimizer step there; this value is out of any run's reach). */
#define RLVR_EVAL_STEP 0xE7A10000u

/* pass@k / pass^k are reported for k = 1, 2, 4, … ≤ samples, and k = samples. */
#define RLVR_EVAL_MAX_K 24

/* One task to evaluate. */
typedef struct {
    const rlvr_task *task;
    uint32_t index;                   /* sampling key: sequence = index·samples + j (unique per task) */
    const rlvr_str_list *quarantined; /* tests removed from the reward (pool manifest); NULL: none */
} rlvr_eval_task;

/* Progress after each batch of tasks. */
typedef struct {
    size_t tasks_done, tasks_total;
    int64_t rollouts;         /* finished so far */
    int64_t scored, passed;   /* samples scored (infra excluded) and those that passed */
    int64_t infra;
    double elapsed_s;
    double rollouts_per_s;
} rlvr_eval_progress;

typedef void (*rlvr_eval_progress_fn)(void *arg, const rlvr_eval_progress *p);

#define RLVR_EVAL_OPTIONS_VERSION 1

typedef struct {
    unsigned version;               /* RLVR_EVAL_OPTIONS_VERSION */
    int32_t samples;                /* n rollouts per task, ≥ 1 */
    rlvr_sampler_config sampler;    /* temperature, kv_slots (rollouts at once), max_new_tokens, seed;
                                       context 0: the largest budget of the tasks, capped at max_seq */
    rlvr_harness_options harness;   /* budgets, tools, repetition stop; host NULL: one is made when a
                                       "tests" task needs it, with host_options */
    rlvr_sandbox_host_options host_options; /* [sandbox] scratch_dir, overlay, landlock, uid, gid,
                                       system_paths of a host made here */
    rlvr_sandbox_limits verify_limits; /* each enclave run; zeroed: rlvr_sandbox_limits_default */
    int consensus_runs;             /* runs a passing patch needs (≥ 1; training's default 3) */
    int verify_threads;             /* tasks verified at once; ≤ 0: physical cores */
    int32_t batch_rollouts;         /* rollouts handed to the harness per batch (whole tasks, at least
                                       one); ≤ 0: 2·kv_slots */
    double confidence;              /* of every interval, in (0, 1) (0.95) */
    int32_t resamples;              /* bootstrap resamples (2000) */
    rlvr_eval_progress_fn progress; /* called after every batch; NULL: none */
    void *progress_arg;
    rlvr_harness_script_fn script;  /* tests: a scripted policy instead of the model (sample j of a task
                                       is so_far->sample_sequence − index·samples) */
    void *script_arg;
} rlvr_eval_options;

/* What an evaluation and the gate use unless told otherwise (`rlvr eval
 * --samples`; the gate's samples are the [gate] key's). */
#define RLVR_EVAL_SAMPLES_DEFAULT 4
#define RLVR_EVAL_CONFIDENCE_DEFAULT 0.95
#define RLVR_EVAL_RESAMPLES_DEFAULT 2000

/* Defaults: RLVR_EVAL_*_DEFAULT, rlvr_sampler_config_default,
 * rlvr_harness_options_default, and [sandbox] and [enclave] at their
 * tables' defaults (verification limits, consensus runs). */
void rlvr_eval_options_default(rlvr_eval_options *o);

/* Options from a run's configuration: [sampler] (temperature, kv_slots,
 * max_new_tokens, context_tokens), [harness] and [repetition] (budgets),
 * [sandbox] (tool limits, and the host options of a host made here) and
 * [enclave] (verification limits, consensus
 * runs), so evaluation runs under the ceilings training ran under. The
 * configuration must have been loaded with those key tables; the other
 * fields of *o are left as they were. RLVR_ECONFIG naming a refused key. */
int rlvr_eval_options_from_config(rlvr_eval_options *o, const rlvr_config *cfg);

/* ---- results -------------------------------------------------------------------- */

/* Counts of one task. */
typedef struct {
    char id[RLVR_TASK_ID_CAP];
    char *family;            /* owned by the result */
    rlvr_split split;
    uint32_t index;
    int32_t n;               /* samples scored (infra excluded) */
    int32_t c;               /* of them, successes */
    int32_t infra;           /* samples excluded by infrastructure errors */
    int32_t truncated;       /* scored samples stopped by a ceiling (failures) */
    int32_t dropped;         /* scored samples with verdict DROPPED (failures) */
    int64_t calls, calls_parsed; /* tool calls written, and those that parsed against their schema */
    int64_t policy_tokens;   /* over all samples */
} rlvr_eval_task_result;

/* An estimate with its interval at the result's confidence. NAN when no
 * task qualifies (JSON null). */
typedef struct {
    double value, low, high;
} rlvr_eval_estimate;

/* Aggregates over a family ("all": every task). Estimates are means over
 * tasks of per-task unbiased estimators; intervals are percentile bootstrap
 * over tasks (docs/EVAL.md). */
typedef struct {
    char *name;
    int32_t n_tasks;         /* tasks with ≥ 1 scored sample */
    int32_t excluded;        /* tasks with none (every sample infra) */
    int64_t samples, successes, infra, truncated, dropped;
    int64_t calls, calls_parsed;
    double compliance;       /* calls_parsed / calls; 1 when no call was made */
    double pass_rate_low, pass_rate_high; /* Wilson interval of successes / samples (pooled samples) */
    int32_t n_k;
    int64_t k[RLVR_EVAL_MAX_K];
    int32_t k_tasks[RLVR_EVAL_MAX_K];           /* tasks with ≥ k scored samples (those averaged) */
    rlvr_eval_estimate pass_at[RLVR_EVAL_MAX_K];  /* pass@k; pass_at[0] is pass@1 */
    rlvr_eval_estimate pass_hat[RLVR_EVAL_MAX_K]; /* pass^k */
} rlvr_eval_group;

typedef struct {
    int64_t rollouts;
    int64_t verifications;   /* enclave verifications made */
    int64_t verify_cache_hits; /* rollouts that reused a verdict of an identical patch */
    double wall_s, generate_s, verify_s;
} rlvr_eval_stats;

/* Read-only for callers (rlvr_eval_result_new's caller fills tasks). */
typedef struct {
    int32_t samples;
    uint64_t seed;
    float temperature;
    double confidence;
    int32_t resamples;
    size_t n_tasks;
    rlvr_eval_task_result *tasks;  /* (n_tasks) in evaluation order */
    size_t n_groups;
    rlvr_eval_group *groups;       /* "all" first, then families by name */
    rlvr_eval_stats stats;
} rlvr_eval_result;

/* ---- running ------------------------------------------------------------------------ */

/* The tasks of `pool` to evaluate: those of `split` (any split when split is
 * NULL) that the manifest marks usable (all when manifest is NULL), with
 * their quarantined tests, in load order, the first `limit` (0: all). Each
 * task's key is its position in the pool, so a subset samples exactly what
 * the whole pool would for those tasks. *out is malloc'd; it borrows from
 * pool and manifest. RLVR_EINVAL when nothing is left. */
int rlvr_eval_tasks_from_pool(rlvr_eval_task **out, size_t *n, const rlvr_task_pool *pool,
                              const rlvr_pool_manifest *manifest, const rlvr_split *split, size_t limit);

/* Evaluates `model` on the tasks: opt->samples rollouts each, kv_slots at a
 * time with a task's samples consecutive, verified, scored and summarised.
 * Returns 0 with *out set; a negative code for bad arguments, out of memory,
 * a sampler or script error, or a host that cannot be made. Infrastructure
 * failures of single rollouts or tasks are counted, not errors. */
int rlvr_eval_run(rlvr_eval_result **out, const rlvr_model *model, const rlvr_tokenizer *tok,
                  const rlvr_eval_task *tasks, size_t n_tasks, const rlvr_eval_options *opt);

/* ---- results from counts (tests, sweeps) ------------------------------------------- */

/* An empty result for n_tasks tasks (families NULL, counts 0) with the
 * settings it claims; fill tasks[] (rlvr_eval_result_set_task) and call
 * rlvr_eval_result_summarize. */
int rlvr_eval_result_new(rlvr_eval_result **out, size_t n_tasks, int32_t samples, uint64_t seed, float temperature);

/* Sets task i's id, family (copied), split and key. */
int rlvr_eval_result_set_task(rlvr_eval_result *r, size_t i, const char *id, const char *family, rlvr_split split,
                              uint32_t index);

/* (Re)computes the groups from the per-task counts at `confidence` with
 * `resamples` bootstrap resamples (keyed by the result's seed). RLVR_EINVAL
 * for counts out of range (c > n, n + infra > samples, ...). */
int rlvr_eval_result_summarize(rlvr_eval_result *r, double confidence, int32_t resamples);

/* One result from the results of disjoint shards of the same evaluation
 * (same samples, seed and temperature; no task id twice): tasks in the
 * order given, stats summed, groups recomputed. */
int rlvr_eval_result_merge(rlvr_eval_result **out, const rlvr_eval_result *const *parts, size_t n_parts,
                           double confidence, int32_t resamples);

void rlvr_eval_result_free(rlvr_eval_result *r);

/* The group of a family, or "all"; NULL when absent. */
const rlvr_eval_group *rlvr_eval_result_group(const rlvr_eval_result *r, const char *name);

/* ---- comparing two policies ------------------------------------------------------------ */

typedef struct {
    int32_t n_tasks;           /* tasks scored in both (paired) */
    int32_t unpaired;          /* tasks excluded in one or both */
    double base_pass1, cand_pass1; /* mean per-task pass@1 over the paired tasks */
    double mean_diff, low, high;   /* cand − base, with its percentile bootstrap interval */
    double confidence;
    int32_t resamples;
} rlvr_eval_comparison;

/* Paired bootstrap over tasks (rl/estimators.h) of the per-task pass@1
 * difference cand − base, on the tasks of `family` (NULL or "all": every
 * task). Tasks are matched by id; the two results must hold the same ids
 * (RLVR_EINVAL naming one that is missing). Keyed by base's seed. RLVR_EINVAL
 * when no task is scored in both. */
int rlvr_eval_compare(rlvr_eval_comparison *out, const rlvr_eval_result *base, const rlvr_eval_result *cand,
                      const char *family, double confidence, int32_t resamples);

/* ---- JSON (docs/EVAL.md) -------------------------------------------------------------- */

#define RLVR_EVAL_FORMAT "rlvr-eval/1"

/* The result as one JSON object ("format", settings, "groups", "tasks",
 * "stats"), compact when indent is 0. *out is malloc'd. */
int rlvr_eval_result_to_json(const rlvr_eval_result *r, int indent, char **out);

/* Reads a result written by rlvr_eval_result_to_json: settings and per-task
 * counts; the groups are recomputed (at the stored confidence and
 * resamples), so results of shards can be rebuilt and merged. RLVR_EFORMAT
 * naming the field for anything else. */
int rlvr_eval_result_from_json(rlvr_eval_result **out, const char *text, size_t len);

/* The comparison as one JSON object. *out is malloc'd. */
int rlvr_eval_comparison_to_json(const rlvr_eval_comparison *c, char **out);

#endif
