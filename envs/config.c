/* envs/config.c — key tables and readers for [tasks] and [harness]. */
#include "envs/config.h"
#include "envs/tools.h"

#include "core/error.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* [tasks] as written: the struct, and the tool list as text before it
 * becomes the mask. */
typedef struct {
    rlvr_tasks_config c;
    const char *tools;
} tasks_keys;

const rlvr_config_key rlvr_tasks_config_keys[] = {
    RLVR_KEY_STRING("tasks", "pool", tasks_keys, c.pool, "",
        "task pool: a directory of *.json specs or a .jsonl file (docs/TASKS.md); empty = the built-in `family`"),
    RLVR_KEY_ENUM_NAME("tasks", "family", tasks_keys, c.family, "bugfix-c", "bugfix-c|bugfix-py|arith",
        "built-in family generated when `pool` is empty"),
    RLVR_KEY_I64("tasks", "train_count", tasks_keys, c.train_count, "256", 1, 1000000, "built-in pool: train tasks"),
    RLVR_KEY_I64("tasks", "eval_count", tasks_keys, c.eval_count, "64", 0, 1000000,
        "built-in pool: eval tasks (held-out repositories or problems)"),
    RLVR_KEY_I64("tasks", "regression_count", tasks_keys, c.regression_count, "32", 0, 1000000,
        "built-in pool: regression tasks (templates never trained on, for the release gate)"),
    RLVR_KEY_I32("tasks", "difficulty", tasks_keys, c.difficulty, "1", 1, 3,
        "built-in pool: 1-3, library size or number size and how much the prompt gives away"),
    RLVR_KEY_U64("tasks", "seed", tasks_keys, c.seed, "1", 0, 9.2e18,
        "built-in pool: generator seed (same seed, same tasks)"),
    RLVR_KEY_STRING("tasks", "tools", tasks_keys, tools, "",
        "built-in bugfix-c pool: the tools its tasks allow, comma-separated (e.g. read_file,replace_in_file,submit); "
        "empty = all tools. Fewer tools make a shorter system prompt"),
    RLVR_KEY_STRING("tasks", "compiler", tasks_keys, c.compiler, "cc",
        "built-in bugfix-c pool: the C compiler its Makefiles name (a command in /usr/local/bin, /usr/bin or /bin). "
        "`tcc` builds a task's tests about ten times faster than `cc` (GCC), which speeds up pool validation and "
        "every verification; the tasks are otherwise the same"),
    RLVR_KEY_I64("tasks", "check_runs", tasks_keys, c.check_runs, "30", 1, 1000,
        "built-in pool: quarantine runs of each reference solution when the run validates its generated pool"),
    RLVR_KEY_I64("tasks", "check_jobs", tasks_keys, c.check_jobs, "0", 0, 4096,
        "built-in pool: tasks validated in parallel (0 = one per physical core)"),
    RLVR_KEY_END,
};

const rlvr_config_key rlvr_harness_config_keys[] = {
    RLVR_KEY_I64("harness", "max_turns", rlvr_harness_config, budgets.turns, "16", 1, 1000000,
        "policy turns per rollout unless the task sets budgets.turns"),
    RLVR_KEY_I64("harness", "max_policy_tokens", rlvr_harness_config, budgets.policy_tokens, "4096", 1, 1e9,
        "tokens the policy samples per rollout, all turns together, unless the task sets budgets.policy_tokens; "
        "keep it equal to [reward] max_tokens"),
    RLVR_KEY_I64("harness", "max_context_tokens", rlvr_harness_config, budgets.context_tokens, "8192", 1, 1e9,
        "prompt + policy + observation tokens per rollout unless the task sets budgets.context_tokens; "
        "≥ max_policy_tokens"),
    RLVR_KEY_DOUBLE("harness", "tool_timeout_s", rlvr_harness_config, budgets.tool_timeout_s, "10", 0.001, 86400,
        "wall time of one tool call unless the task sets budgets.tool_timeout_s"),
    RLVR_KEY_I64("harness", "max_malformed_calls", rlvr_harness_config, budgets.malformed_calls, "0", 0, 1000000,
        "malformed tool calls in a row (unparsable, or failing the tool's schema) that stop a rollout, unless the "
        "task sets budgets.malformed_calls; a well-formed call resets the count; 0 = no limit"),
    RLVR_KEY_ENUM("harness", "tool_prompt", rlvr_harness_config, tool_prompt, "schema", "schema|compact",
        "how the system turn lists the tools: `schema` (each with its JSON schema) or `compact` (argument names only, "
        "a far shorter prompt for small models); calls are validated against the schema either way"),
    RLVR_KEY_I64("harness", "tool_output_bytes", rlvr_harness_config, tool_output_bytes, "2048", 64, 16777216,
        "one tool observation is cut to this many bytes (the cut is marked)"),
    RLVR_KEY_END,
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
    tasks_keys k = {0};
    RLVR_TRY(rlvr_config_fill(cfg, rlvr_tasks_config_keys, "tasks", &k));
    RLVR_TRY(parse_tool_list(cfg, k.tools, &k.c.tools));
    *out = k.c;
    if (out->pool[0]) {
        /* every other [tasks] key describes the built-in pool: the first one
         * set, in table order, is the conflict reported */
        for (const rlvr_config_key *key = rlvr_tasks_config_keys; key->key; key++)
            if (key->offset != offsetof(tasks_keys, c.pool) && rlvr_config_is_set(cfg, key->section, key->key))
                return rlvr_config_error(cfg, key->section, key->key,
                                         "describes the built-in pool, but `pool` is set; remove one of them");
    }
    return 0;
}

int rlvr_harness_config_read(const rlvr_config *cfg, rlvr_harness_config *out) {
    memset(out, 0, sizeof *out);
    RLVR_TRY(rlvr_config_fill(cfg, rlvr_harness_config_keys, "harness", out));
    if (cfg && out->budgets.policy_tokens > out->budgets.context_tokens)
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
