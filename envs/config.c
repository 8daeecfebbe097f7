/* envs/config.c — key tables and readers for [tasks] and [harness]. */
#include "envs/config.h"
#include "envs/tools.h"

#include "core/error.h"

#include <stdio.h>
#include <string.h>

const rlvr_config_key rlvr_tasks_config_keys[] = {
    {"tasks", "pool", RLVR_CFG_STRING, "",
     "task pool: a directory of *.json specs or a .jsonl file (docs/TASKS.md); empty = the built-in `family`",
     NULL, RLVR_CFG_ANY},
    {"tasks", "family", RLVR_CFG_ENUM, "bugfix-c", "built-in family generated when `pool` is empty",
     "bugfix-c|arith", RLVR_CFG_ANY},
    {"tasks", "train_count", RLVR_CFG_INT, "256", "built-in pool: train tasks", NULL, RLVR_CFG_RANGE(1, 1000000)},
    {"tasks", "eval_count", RLVR_CFG_INT, "64", "built-in pool: eval tasks (held-out repositories or problems)",
     NULL, RLVR_CFG_RANGE(0, 1000000)},
    {"tasks", "regression_count", RLVR_CFG_INT, "32",
     "built-in pool: regression tasks (templates never trained on, for the release gate)", NULL,
     RLVR_CFG_RANGE(0, 1000000)},
    {"tasks", "difficulty", RLVR_CFG_INT, "1",
     "built-in pool: 1-3, library size or number size and how much the prompt gives away", NULL,
     RLVR_CFG_RANGE(1, 3)},
    {"tasks", "seed", RLVR_CFG_INT, "1", "built-in pool: generator seed (same seed, same tasks)", NULL,
     RLVR_CFG_RANGE(0, 9.2e18)},
    {"tasks", "tools", RLVR_CFG_STRING, "",
     "built-in bugfix-c pool: the tools its tasks allow, comma-separated (e.g. read_file,replace_in_file,submit); "
     "empty = all tools. Fewer tools make a shorter system prompt",
     NULL, RLVR_CFG_ANY},
    {"tasks", "compiler", RLVR_CFG_STRING, "cc",
     "built-in bugfix-c pool: the C compiler its Makefiles name (a command in /usr/local/bin, /usr/bin or /bin). "
     "`tcc` builds a task's tests about ten times faster than `cc` (GCC), which speeds up pool validation and "
     "every verification; the tasks are otherwise the same",
     NULL, RLVR_CFG_ANY},
    {"tasks", "check_runs", RLVR_CFG_INT, "30",
     "built-in pool: quarantine runs of each reference solution when the run validates its generated pool", NULL,
     RLVR_CFG_RANGE(1, 1000)},
    {"tasks", "check_jobs", RLVR_CFG_INT, "0",
     "built-in pool: tasks validated in parallel (0 = one per physical core)", NULL, RLVR_CFG_RANGE(0, 4096)},
    {NULL, NULL, 0, NULL, NULL, NULL, 0, 0},
};

const rlvr_config_key rlvr_harness_config_keys[] = {
    {"harness", "max_turns", RLVR_CFG_INT, "16", "policy turns per rollout unless the task sets budgets.turns",
     NULL, RLVR_CFG_RANGE(1, 1000000)},
    {"harness", "max_policy_tokens", RLVR_CFG_INT, "4096",
     "tokens the policy samples per rollout, all turns together, unless the task sets budgets.policy_tokens; "
     "keep it equal to [reward] max_tokens",
     NULL,
     RLVR_CFG_RANGE(1, 1e9)},
    {"harness", "max_context_tokens", RLVR_CFG_INT, "8192",
     "prompt + policy + observation tokens per rollout unless the task sets budgets.context_tokens; "
     "≥ max_policy_tokens",
     NULL, RLVR_CFG_RANGE(1, 1e9)},
    {"harness", "tool_timeout_s", RLVR_CFG_FLOAT, "10",
     "wall time of one tool call unless the task sets budgets.tool_timeout_s", NULL, RLVR_CFG_RANGE(0.001, 86400)},
    {"harness", "max_malformed_calls", RLVR_CFG_INT, "0",
     "malformed tool calls in a row (unparsable, or failing the tool's schema) that stop a rollout, unless the "
     "task sets budgets.malformed_calls; a well-formed call resets the count; 0 = no limit",
     NULL, RLVR_CFG_RANGE(0, 1000000)},
    {"harness", "tool_prompt", RLVR_CFG_ENUM, "schema",
     "how the system turn lists the tools: `schema` (each with its JSON schema) or `compact` (argument names only, "
     "a far shorter prompt for small models); calls are validated against the schema either way",
     "schema|compact", RLVR_CFG_ANY},
    {"harness", "tool_output_bytes", RLVR_CFG_INT, "2048",
     "one tool observation is cut to this many bytes (the cut is marked)", NULL, RLVR_CFG_RANGE(64, 16777216)},
    {NULL, NULL, 0, NULL, NULL, NULL, 0, 0},
};

/* "read_file, replace_in_file,submit" -> mask; unknown names name the key. */
static int parse_tool_list(const rlvr_config *cfg, const char *list, uint32_t *mask) {
    *mask = 0;
    for (const char *p = list; *p;) {
        p += strspn(p, " ,");
        size_t n = strcspn(p, " ,");
        if (n == 0) break;
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(n < 63 ? n : 63), p);
        rlvr_tool_id id;
        if (rlvr_tool_find(name, &id) < 0)
            return rlvr_config_error(cfg, "tasks", "tools", "%s", rlvr_error_last());
        *mask |= 1u << id;
        p += n;
    }
    return 0;
}

int rlvr_tasks_config_read(const rlvr_config *cfg, rlvr_tasks_config *out) {
    memset(out, 0, sizeof *out);
    int64_t difficulty, seed;
    RLVR_TRY(rlvr_config_get_string(cfg, "tasks", "pool", &out->pool));
    RLVR_TRY(rlvr_config_get_string(cfg, "tasks", "family", &out->family));
    RLVR_TRY(rlvr_config_get_int(cfg, "tasks", "train_count", &out->train_count));
    RLVR_TRY(rlvr_config_get_int(cfg, "tasks", "eval_count", &out->eval_count));
    RLVR_TRY(rlvr_config_get_int(cfg, "tasks", "regression_count", &out->regression_count));
    RLVR_TRY(rlvr_config_get_int(cfg, "tasks", "difficulty", &difficulty));
    RLVR_TRY(rlvr_config_get_int(cfg, "tasks", "seed", &seed));
    RLVR_TRY(rlvr_config_get_int(cfg, "tasks", "check_runs", &out->check_runs));
    const char *tools;
    RLVR_TRY(rlvr_config_get_string(cfg, "tasks", "tools", &tools));
    RLVR_TRY(parse_tool_list(cfg, tools, &out->tools));
    RLVR_TRY(rlvr_config_get_int(cfg, "tasks", "check_jobs", &out->check_jobs));
    RLVR_TRY(rlvr_config_get_string(cfg, "tasks", "compiler", &out->compiler));
    out->difficulty = (int)difficulty;
    out->seed = (uint64_t)seed;
    if (out->pool[0]) {
        static const char *const gen_keys[] = {"family", "train_count", "eval_count", "regression_count",
                                               "difficulty", "seed", "check_runs", "check_jobs", "tools",
                                               "compiler"};
        for (size_t i = 0; i < sizeof gen_keys / sizeof gen_keys[0]; i++)
            if (rlvr_config_is_set(cfg, "tasks", gen_keys[i]))
                return rlvr_config_error(cfg, "tasks", gen_keys[i],
                                         "describes the built-in pool, but `pool` is set; remove one of them");
    }
    return 0;
}

int rlvr_harness_config_read(const rlvr_config *cfg, rlvr_harness_config *out) {
    memset(out, 0, sizeof *out);
    RLVR_TRY(rlvr_config_get_int(cfg, "harness", "max_turns", &out->budgets.turns));
    RLVR_TRY(rlvr_config_get_int(cfg, "harness", "max_policy_tokens", &out->budgets.policy_tokens));
    RLVR_TRY(rlvr_config_get_int(cfg, "harness", "max_context_tokens", &out->budgets.context_tokens));
    RLVR_TRY(rlvr_config_get_double(cfg, "harness", "tool_timeout_s", &out->budgets.tool_timeout_s));
    RLVR_TRY(rlvr_config_get_int(cfg, "harness", "max_malformed_calls", &out->budgets.malformed_calls));
    RLVR_TRY(rlvr_config_get_int(cfg, "harness", "tool_output_bytes", &out->tool_output_bytes));
    const char *style;
    RLVR_TRY(rlvr_config_get_string(cfg, "harness", "tool_prompt", &style));
    out->tool_prompt = strcmp(style, "compact") == 0 ? RLVR_TOOL_PROMPT_COMPACT : RLVR_TOOL_PROMPT_SCHEMA;
    if (out->budgets.policy_tokens > out->budgets.context_tokens)
        return rlvr_config_error(cfg, "harness", "max_policy_tokens", "%lld exceeds max_context_tokens (%lld)",
                                 (long long)out->budgets.policy_tokens, (long long)out->budgets.context_tokens);
    return 0;
}

void rlvr_tasks_config_gen_options(const rlvr_tasks_config *c, rlvr_split split, rlvr_task_gen_options *out) {
    rlvr_task_gen_options o = RLVR_TASK_GEN_OPTIONS_INIT;
    o.family = c->family;
    o.seed = c->seed;
    o.split = split;
    o.difficulty = c->difficulty;
    o.tools = c->tools;
    o.compiler = c->compiler;
    o.count = split == RLVR_SPLIT_TRAIN ? c->train_count
              : split == RLVR_SPLIT_EVAL ? c->eval_count
                                         : c->regression_count;
    *out = o;
}
