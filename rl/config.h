/* rl/config.h — the INI sections of rl/ and their loaders.
 *
 *   [reward]            reward assembly and truncation policy (rl/reward.h)
 *   [grpo]              group size, advantages, clipped surrogate, KL, loss aggregation
 *   [entropy]           entropy bonus and its adaptive controller (rl/entropy.h)
 *   [credit]            Monte-Carlo turn credit and branch-point selection
 *   [difficulty]        difficulty-aware task selection, group-size rule (rl/difficulty.h)
 *   [dynamic_sampling]  re-drawing for informative groups (rl/difficulty.h)
 *   [repetition]        n-gram repetition stop (rl/repetition.h)
 *   [plan]              assumed rates and timings for `rlvr plan` (rl/plan.h)
 *
 * Every key is documented in docs/CONFIG.md. Loaders read a configuration
 * parsed with these schema tables (core/config.h), check the invariants that
 * span keys and refuse violations with rlvr_config_error, which names the
 * file, line and key. */
#ifndef RLVR_RL_CONFIG_H
#define RLVR_RL_CONFIG_H

#include "core/config.h"
#include "rl/advantage.h"
#include "rl/difficulty.h"
#include "rl/entropy.h"
#include "rl/objective.h"
#include "rl/plan.h"
#include "rl/repetition.h"
#include "rl/reward.h"

#include <stdbool.h>
#include <stdint.h>

/* Schema of [reward] [grpo] [entropy] [credit] [difficulty]
 * [dynamic_sampling] [repetition]; NULL-key terminated. */
extern const rlvr_config_key rlvr_rl_config_keys[];
/* Schema of [plan]. */
extern const rlvr_config_key rlvr_rl_plan_config_keys[];

/* What a step's sampling keys and group ids can hold. A rollout's Philox
 * sequence is group · RLVR_GROUP_SIZE_MAX + rollout in 32 bits, so a group
 * has at most RLVR_GROUP_SIZE_MAX rollouts and a step draws at most
 * RLVR_GROUPS_DRAWN_MAX groups (2^22 · 2^10 = 2^32); the configuration
 * refuses more ([grpo] group_size, [difficulty] max_group_size, and
 * groups_per_step with [dynamic_sampling]'s re-draws). */
#define RLVR_GROUP_SIZE_MAX 1024
#define RLVR_GROUPS_DRAWN_MAX 4194304

/* The sampling sequence of rollout `rollout` of the step's group `group`. */
static inline uint32_t rlvr_rl_group_sequence(int32_t group, int32_t rollout) {
    return (uint32_t)group * RLVR_GROUP_SIZE_MAX + (uint32_t)rollout;
}

/* The group id a rollout record carries: unique over a run for every step
 * ≥ 1 and group < RLVR_GROUPS_DRAWN_MAX. */
static inline int64_t rlvr_rl_group_id(int64_t step, int32_t group) {
    return step * RLVR_GROUPS_DRAWN_MAX + group;
}

/* [grpo] */
typedef struct {
    int32_t group_size;      /* G */
    int32_t groups_per_step; /* informative groups per training step */
    rlvr_advantage_kind advantage;
    double std_eps;          /* ε */
    int32_t epochs;          /* μ: optimizer passes (AdamW steps) over each step's batch */
    /* clip, IS cap, β, aggregation and normaliser; entropy_coef is 0 here:
     * the trainer sets it each step from the entropy controller */
    rlvr_objective_options objective;
} rlvr_grpo_config;

/* [credit] */
typedef struct {
    bool mc;                     /* true: Monte-Carlo turn credit; false: outcome credit only */
    int32_t forks;               /* K */
    int32_t max_branch_points;   /* per trajectory */
    double branch_entropy;       /* threshold for high-entropy branch points, nats */
    bool branch_on_state_change; /* branch after state-changing tool calls */
    const char *state_changing_tools; /* tool names whose calls are snapshotted (train/ parses them) */
} rlvr_credit_config;

typedef struct {
    rlvr_reward_config reward;
    rlvr_grpo_config grpo;
    rlvr_entropy_config entropy;
    rlvr_credit_config credit;
    rlvr_difficulty_config difficulty;
    rlvr_dynsample_config dynamic_sampling;
    rlvr_repetition_config repetition;
} rlvr_rl_config;

/* Loads and validates every rl/ section (defaults for sections not in the
 * file). `cfg` must have been parsed with rlvr_rl_config_keys among its
 * schemas. RLVR_ECONFIG with "FILE:LINE: [section] key: why" on a refusal. */
int rlvr_rl_config_load(rlvr_rl_config *out, const rlvr_config *cfg);

/* Section loaders used by rlvr_rl_config_load, for callers that need one. */
int rlvr_rl_reward_config_load(rlvr_reward_config *out, const rlvr_config *cfg);
int rlvr_rl_grpo_config_load(rlvr_grpo_config *out, const rlvr_config *cfg);
int rlvr_rl_entropy_config_load(rlvr_entropy_config *out, const rlvr_config *cfg);
int rlvr_rl_credit_config_load(rlvr_credit_config *out, const rlvr_config *cfg);
int rlvr_rl_difficulty_config_load(rlvr_difficulty_config *out, const rlvr_config *cfg);
int rlvr_rl_dynsample_config_load(rlvr_dynsample_config *out, const rlvr_config *cfg);
int rlvr_rl_repetition_config_load(rlvr_repetition_config *out, const rlvr_config *cfg);

/* Planner inputs from [plan] plus [grpo], [credit] and [difficulty]; `cfg`
 * must have been parsed with both schema tables. */
int rlvr_rl_plan_inputs_load(rlvr_plan_inputs *out, const rlvr_config *cfg);

#endif
