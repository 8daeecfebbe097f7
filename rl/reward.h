/* rl/reward.h — the scalar reward of one rollout (docs/RL.md "Rewards that
 * cannot reorder success").
 *
 *   linear:     R = R_outcome + λ_fmt·R_format − α·|τ_gen| / T_max
 *   threshold:  R = R_outcome + λ_fmt·R_format − γ·max(0, |τ_gen| − T_budget)
 *   none:       R = R_outcome + λ_fmt·R_format
 *
 * R_outcome ∈ {0, 1} comes from the decisive check (the verifier's verdict),
 * or, with partial credit, the fraction a failed rollout earned — only for a
 * rollout whose partial checks are as sealed as the whole: the verifier
 * reports a fraction only for tasks verified by a judge (enclave/verify.h,
 * envs/harness.c) and 0 for every other failed rollout. `partial` credits
 * the share of all sealed tests passed, `fail_to_pass` the share of the
 * FAIL_TO_PASS tests, and 0 when a PASS_TO_PASS test broke; the verifier
 * computes the one the run configures, so both arrive here as `partial`.
 * R_format ∈ [0, 1] is the share of tool calls that parsed against their
 * schema. |τ_gen| counts policy tokens only.
 *
 * Shaping may never reorder success and failure. rlvr_rl_reward_config_check
 * refuses weights under which a short wrong trajectory can outrank a long
 * correct one:
 *   linear:    λ_fmt + α < 1   (wrong with perfect format and no tokens scores
 *              λ_fmt; correct at T_max without format credit scores 1 − α)
 *   none:      λ_fmt < 1
 *   threshold: λ_fmt < 1 for trajectories within the budget, and
 *              γ·(T_max − T_budget) ≥ 1 + λ_fmt, so a rollout at the cap can
 *              never earn a positive reward (≥ 1 when λ_fmt = 0). Beyond
 *              the budget the penalty is meant to outweigh success.
 * With partial credit the bound compares a full pass with a zero pass.
 *
 * Verdicts and stop reasons (core/record.h):
 * - infra error (verdict INFRA or stop INFRA_ERROR) and dropped rollouts
 *   (public tests changed) are excluded from the loss, never scored 0;
 * - truncation (token budget, turn limit, context), repetition and
 *   malformed-call stops follow the truncation policy: fail scores them as
 *   failures (outcome 0, no format credit, the length term still applies),
 *   exclude drops them from the loss;
 * - a rejected patch or a timeout is a failure without format credit;
 * - PASS scores 1, FAIL scores 0 or its partial credit. */
#ifndef RLVR_RL_REWARD_H
#define RLVR_RL_REWARD_H

#include "core/record.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum { RLVR_OUTCOME_BINARY = 0, RLVR_OUTCOME_PARTIAL = 1, RLVR_OUTCOME_FAIL_TO_PASS = 2 } rlvr_outcome_kind;
typedef enum { RLVR_LENGTH_NONE = 0, RLVR_LENGTH_LINEAR = 1, RLVR_LENGTH_THRESHOLD = 2 } rlvr_length_penalty;
typedef enum { RLVR_TRUNCATION_FAIL = 0, RLVR_TRUNCATION_EXCLUDE = 1 } rlvr_truncation_policy;

/* [reward] section. */
typedef struct {
    rlvr_outcome_kind outcome;
    double format_weight;              /* λ_fmt */
    rlvr_length_penalty length_penalty;
    double length_weight;              /* α (linear) */
    int64_t max_tokens;                /* T_max: policy-token cap of a rollout */
    int64_t length_budget;             /* T_budget (threshold) */
    double length_slope;               /* γ per token over the budget (threshold) */
    rlvr_truncation_policy truncation;
} rlvr_reward_config;

/* What the reward needs to know about one finished rollout. */
typedef struct {
    rlvr_verdict verdict;
    rlvr_stop_reason stop;
    double partial;                    /* the failed rollout's partial credit, [0, 1]: the share of sealed
                                          tests (partial) or of FAIL_TO_PASS tests (fail_to_pass) it
                                          passed (0 where the partial checks are not sealed) */
    double format;                     /* R_format ∈ [0, 1] */
    int64_t policy_tokens;             /* |τ_gen| ≤ max_tokens */
} rlvr_reward_input;

typedef struct {
    double total;          /* R */
    double outcome;        /* R_outcome */
    double format;         /* R_format credited (0 when the rollout failed by a ceiling) */
    double length_penalty; /* the subtracted length term, ≥ 0 */
    bool excluded;         /* drop from the loss; total is 0 */
} rlvr_reward;

/* Checks the invariants above. On failure returns RLVR_EINVAL with a message
 * that shows the bound, and sets *bad_key (when not NULL) to the [reward] key
 * to change. */
int rlvr_rl_reward_config_check(const rlvr_reward_config *cfg, const char **bad_key);

/* The reward of one rollout. RLVR_EINVAL for inputs out of range (format
 * outside [0, 1], more policy tokens than max_tokens, a rollout neither
 * verified nor stopped by a ceiling). */
int rlvr_rl_reward(rlvr_reward *out, const rlvr_reward_input *in, const rlvr_reward_config *cfg);

/* True for the stop reasons the truncation policy governs: token budget, turn
 * limit, context window, repetition stop, malformed-call limit. */
bool rlvr_rl_stop_is_truncation(rlvr_stop_reason stop);

#endif
