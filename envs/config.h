/* envs/config.h — the [tasks] and [harness] sections of a run's
 * configuration (docs/CONFIG.md). */
#ifndef RLVR_ENVS_CONFIG_H
#define RLVR_ENVS_CONFIG_H

#include "core/config.h"
#include "envs/gen.h"
#include "envs/task.h"

#include <stdint.h>

/* [tasks]: where the tasks come from. */
typedef struct {
    const char *pool;          /* directory or .jsonl; "" = generate `family` (strings live as long as cfg) */
    const char *family;        /* built-in family used when pool is "" */
    int64_t train_count, eval_count, regression_count;
    int difficulty;
    uint64_t seed;
} rlvr_tasks_config;

/* [harness]: ceilings every rollout runs under (SPEC §5.5), unless the task
 * sets its own (rlvr_task_budgets_resolve). Truncation scoring lives in
 * [reward] truncation. */
typedef struct {
    rlvr_task_budgets budgets; /* all > 0 */
    int64_t tool_output_bytes; /* one tool observation is cut to this many bytes */
} rlvr_harness_config;

extern const rlvr_config_key rlvr_tasks_config_keys[];
extern const rlvr_config_key rlvr_harness_config_keys[];

/* Reads the sections; RLVR_ECONFIG (file, line, key) when keys disagree. */
int rlvr_tasks_config_read(const rlvr_config *cfg, rlvr_tasks_config *out);
int rlvr_harness_config_read(const rlvr_config *cfg, rlvr_harness_config *out);

/* Generation options for one split of the built-in pool [tasks] describes
 * (count = that split's count, which may be 0: nothing to generate; family,
 * seed, difficulty from the section). */
void rlvr_tasks_config_gen_options(const rlvr_tasks_config *c, rlvr_split split, rlvr_task_gen_options *out);

#endif
