/* jobs/evalcommon.h — what the commands that evaluate checkpoints (`rlvr
 * eval`, `rlvr gate`) share: a validated task pool with its manifest, a
 * checkpoint's model and stored configuration, evaluation options from a
 * run's configuration, and the progress line. */
#ifndef RLVR_JOBS_EVALCOMMON_H
#define RLVR_JOBS_EVALCOMMON_H

#include "core/config.h"
#include "envs/check.h"
#include "envs/pool.h"
#include "eval/eval.h"
#include "io/checkpoint.h"
#include "policy/model.h"
#include "policy/tokenizer.h"

#include <stdbool.h>
#include <stdint.h>

/* Loads a pool and checks its split hygiene; unless `unchecked`, also its
 * validation manifest (manifest_path NULL: POOL.manifest.json), refusing a
 * pool without one with what to run. *manifest stays NULL when unchecked. */
int rlvr_evaljob_load_pool(rlvr_task_pool **pool, rlvr_pool_manifest **manifest, const char *pool_path,
                           const char *manifest_path, bool unchecked);

/* Loads a checkpoint's model (checked against the tokenizer) and header
 * (info->config_text set to ""). When stored_config is non-NULL the
 * configuration stored in the checkpoint is parsed into it (against every
 * module's keys; left NULL when none was stored). Errors name the file. */
int rlvr_evaljob_load_checkpoint(const char *path, rlvr_tokenizer **tok, rlvr_model **model,
                                 rlvr_checkpoint_info *info, rlvr_config **stored_config);

/* Evaluation options: the defaults, then the run's configuration when cfg
 * is non-NULL (rlvr_eval_options_from_config), samples and seed, and the
 * progress line below with *last as its state. */
int rlvr_evaljob_options(rlvr_eval_options *o, const rlvr_config *cfg, int32_t samples, uint64_t seed,
                         double *last);

/* Progress callback (arg: double *, seconds of the last line printed): one
 * line to stderr at most every 2 s and at the end. */
void rlvr_evaljob_progress(void *arg, const rlvr_eval_progress *p);

#endif
