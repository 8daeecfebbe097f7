/* eval/evaljob.h — what the jobs that evaluate checkpoints share (`rlvr
 * eval`, `rlvr gate`, `rlvr sweep`): a validated task pool with its manifest,
 * a checkpoint's model and stored configuration, evaluation options from a
 * run's configuration, the lines a job reports through the caller's hooks,
 * and `rlvr eval` itself: one or two checkpoints on the held-out tasks of a
 * pool, with the paired comparison of two, as one JSON document.
 *
 * Module rlvr_evalrun (eval/CMakeLists.txt): it sits above io/, slurm/ and
 * train/, unlike rlvr_eval. Nothing here prints: what a job has to say goes
 * to hooks->note, one line at a time, for the caller to print. */
#ifndef RLVR_EVAL_EVALJOB_H
#define RLVR_EVAL_EVALJOB_H

#include "core/config.h"
#include "envs/check.h"
#include "envs/pool.h"
#include "eval/eval.h"
#include "io/checkpoint.h"
#include "policy/model.h"
#include "policy/tokenizer.h"

#include <stdbool.h>
#include <stdint.h>

/* How a job reports. note gets one line (no newline) of what it does; it is
 * called just before each evaluation run starts, so a progress printer that
 * throttles may restart its clock there. progress goes into each run's
 * rlvr_eval_options. Either may be NULL; arg is passed to both. */
typedef struct {
    void (*note)(void *arg, const char *line);
    rlvr_eval_progress_fn progress;
    void *arg;
} rlvr_evaljob_hooks;

/* Formats one line and hands it to hooks->note (nothing when hooks or note is NULL). */
void rlvr_evaljob_say(const rlvr_evaljob_hooks *hooks, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Loads a pool and checks its split hygiene; unless `unchecked`, also its
 * validation manifest (manifest_path NULL: POOL.manifest.json), refusing a
 * pool without one with what to run. *manifest stays NULL when unchecked.
 * On error both are left NULL. */
int rlvr_evaljob_load_pool(rlvr_task_pool **pool, rlvr_pool_manifest **manifest, const char *pool_path,
                           const char *manifest_path, bool unchecked);

/* Loads a checkpoint's model (checked against the tokenizer) and header
 * (info->config_text set to ""). When stored_config is non-NULL and *stored_config
 * NULL, the configuration stored in the checkpoint is parsed into it against
 * `schemas` (left NULL when none was stored). Errors name the file; on error
 * *tok and *model are NULL. The caller frees all three. */
int rlvr_evaljob_load_checkpoint(const char *path, const rlvr_config_key *const *schemas, rlvr_tokenizer **tok,
                                 rlvr_model **model, rlvr_checkpoint_info *info, rlvr_config **stored_config);

/* Evaluation options: the defaults, then the run's configuration when cfg
 * is non-NULL (rlvr_eval_options_from_config), samples and seed, and the
 * hooks' progress callback. */
int rlvr_evaljob_options(rlvr_eval_options *o, const rlvr_config *cfg, int32_t samples, uint64_t seed,
                         const rlvr_evaljob_hooks *hooks);

/* Writes `text` and a newline to `path`, in place (not atomically: the path
 * may be a pipe or /dev/stdout). Errors name the file. */
int rlvr_evaljob_write_text(const char *path, const char *text);

/* ---- `rlvr eval` ------------------------------------------------------------------------ */

typedef struct {
    const char *checkpoints[2]; /* the second is compared with the first */
    int n_checkpoints;          /* 1 or 2 */
    const char *pool, *manifest, *config; /* manifest NULL: POOL.manifest.json; config NULL: the first
                                             checkpoint's stored one */
    bool all_splits, unchecked;
    rlvr_split split;           /* unless all_splits */
    int64_t samples, limit;     /* limit 0: every task of the split */
    int64_t kv_slots, consensus; /* 0: the configuration's */
    uint64_t seed;
    double temperature;         /* < 0: the configuration's; 0 = greedy */
    const rlvr_config_key *const *schemas; /* every key table a run's configuration may use */
    rlvr_evaljob_hooks hooks;
} rlvr_evaljob_spec;

/* What `rlvr eval` evaluated; everything is owned by it (rlvr_evaljob_free). */
typedef struct {
    rlvr_task_pool *pool;
    rlvr_pool_manifest *manifest;
    rlvr_eval_task *tasks;
    size_t n_tasks;
    rlvr_config *cfg;
    rlvr_tokenizer *toks[2]; /* each checkpoint's own */
    rlvr_model *models[2];
    rlvr_checkpoint_info info[2];
    rlvr_eval_result *results[2];
    bool compared;           /* two checkpoints: comparison holds their paired difference */
    rlvr_eval_comparison comparison;
} rlvr_evaljob;

/* Loads the pool, the configuration and the checkpoints, evaluates each
 * checkpoint on the split's usable tasks with the same seeds, and compares
 * two (pass@1, 95 %, 2000 resamples). *out is set only on success. */
int rlvr_evaljob_run(rlvr_evaljob **out, const rlvr_evaljob_spec *spec);

/* The report as JSON (malloc'ed, no trailing newline): {"format":
 * "rlvr-eval-report/1", "pool", "split", "checkpoints": [{checkpoint, step,
 * policy_version, result}], "comparison"} (docs/EVAL.md). */
int rlvr_evaljob_document(const rlvr_evaljob *job, const rlvr_evaljob_spec *spec, char **out);

void rlvr_evaljob_free(rlvr_evaljob *job);

#endif
