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
    int64_t check_runs;        /* quarantine runs when the run validates its built-in pool */
    int64_t check_jobs;        /* tasks validated in parallel (0 = physical cores) */
    uint32_t tools;            /* tool set of generated multi-turn tasks (0 = all) */
    const char *compiler;      /* C compiler of generated bugfix-c tasks (gen options' compiler) */
} rlvr_tasks_config;

/* [harness]: ceilings every rollout runs under (turns, tokens, tool time,
 * malformed calls), unless the task sets its own
 * (rlvr_task_budgets_resolve). Truncation scoring lives in [reward]
 * truncation. */
/* How the prompt's system turn lists the tools: each with its full JSON
 * schema, or only its argument names (optional ones marked '?'); the order
 * is that of [harness] tool_prompt's choices. */
typedef enum { RLVR_TOOL_PROMPT_SCHEMA = 0, RLVR_TOOL_PROMPT_COMPACT = 1 } rlvr_tool_prompt;

typedef struct {
    rlvr_tool_prompt tool_prompt;
    rlvr_task_budgets budgets; /* all > 0 but malformed_calls (0 = no limit) */
    int64_t tool_output_bytes; /* one tool observation is cut to this many bytes */
} rlvr_harness_config;

extern const rlvr_config_key rlvr_tasks_config_keys[];
extern const rlvr_config_key rlvr_harness_config_keys[];

/* Reads the sections; RLVR_ECONFIG (file, line, key) when keys disagree. */
int rlvr_tasks_config_read(const rlvr_config *cfg, rlvr_tasks_config *out);
int rlvr_harness_config_read(const rlvr_config *cfg, rlvr_harness_config *out); /* cfg NULL: defaults */

/* Generation options for one split of the built-in pool [tasks] describes
 * (count = that split's count, which may be 0: nothing to generate; family,
 * seed, difficulty from the section). */
void rlvr_tasks_config_gen_options(const rlvr_tasks_config *c, rlvr_split split, rlvr_task_gen_options *out);

#endif
