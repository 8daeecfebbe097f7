#include "rl/config.h"

#include "core/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define END_OF_TABLE {NULL, NULL, 0, NULL, NULL, NULL, 0, 0}

const rlvr_config_key rlvr_rl_config_keys[] = {
    /* [reward] */
    {"reward", "outcome", RLVR_CFG_ENUM, "binary",
     "decisive outcome: binary (pass = 1) or partial (a failed rollout scores the fraction of its tests that "
     "passed, for tasks verified by a judge)",
     "binary|partial", RLVR_CFG_ANY},
    {"reward", "format_weight", RLVR_CFG_FLOAT, "0.05",
     "lambda_fmt: weight of R_format, the share of tool calls that parsed against their schema", NULL,
     RLVR_CFG_RANGE(0, 1)},
    {"reward", "length_penalty", RLVR_CFG_ENUM, "threshold",
     "none, linear (alpha * policy tokens / max_tokens) or threshold (length_slope * tokens beyond length_budget)", "none|linear|threshold",
     RLVR_CFG_ANY},
    {"reward", "length_weight", RLVR_CFG_FLOAT, "0.05",
     "alpha of the linear penalty; format_weight + length_weight must stay below 1", NULL, RLVR_CFG_RANGE(0, 1)},
    {"reward", "max_tokens", RLVR_CFG_INT, "4096",
     "T_max: policy-token cap of one rollout (equal to the harness budget)", NULL, RLVR_CFG_RANGE(1, 1e9)},
    {"reward", "length_budget", RLVR_CFG_INT, "3072", "T_budget: policy tokens free of the threshold penalty",
     NULL, RLVR_CFG_RANGE(0, 1e9)},
    {"reward", "length_slope", RLVR_CFG_FLOAT, "0.002",
     "gamma: threshold penalty per token beyond length_budget; gamma*(max_tokens - length_budget) must be >= 1 + "
     "format_weight",
     NULL, RLVR_CFG_RANGE(0, 1e6)},
    {"reward", "truncation", RLVR_CFG_ENUM, "fail",
     "truncated and repetition-stopped rollouts: fail scores them as failures, exclude drops them from the loss",
     "fail|exclude", RLVR_CFG_ANY},

    /* [grpo] */
    {"grpo", "group_size", RLVR_CFG_INT, "8", "G: rollouts per task in a group", NULL, RLVR_CFG_RANGE(2, 65536)},
    {"grpo", "groups_per_step", RLVR_CFG_INT, "64", "informative groups in one training step", NULL,
     RLVR_CFG_RANGE(1, 1e7)},
    {"grpo", "advantage", RLVR_CFG_ENUM, "std",
     "std: (r - mean)/(std + eps); mean: r - mean; loo: r - mean of the others", "std|mean|loo", RLVR_CFG_ANY},
    {"grpo", "std_eps", RLVR_CFG_FLOAT, "1e-6", "eps added to the population std", NULL, RLVR_CFG_RANGE(0, 1)},
    {"grpo", "epochs", RLVR_CFG_INT, "1",
     "mu: AdamW steps over each training step's batch; after the first the clip bounds how far the policy moves",
     NULL, RLVR_CFG_RANGE(1, 64)},
    {"grpo", "clip_low", RLVR_CFG_FLOAT, "0.2", "eps_low: ratios below 1 - clip_low are clipped", NULL,
     RLVR_CFG_RANGE(0, 0.99)},
    {"grpo", "clip_high", RLVR_CFG_FLOAT, "0.28",
     "eps_high: ratios above 1 + clip_high are clipped (clip-higher: >= clip_low)", NULL, RLVR_CFG_RANGE(0, 10)},
    {"grpo", "is_cap", RLVR_CFG_FLOAT, "2",
     "C: cap on importance weights against the sampling log-probs (stale rollouts); >= 1 + clip_high", NULL,
     RLVR_CFG_RANGE(1, 1e6)},
    {"grpo", "kl_beta", RLVR_CFG_FLOAT, "0", "beta of the k3 KL penalty to the reference model (0 = no reference)",
     NULL, RLVR_CFG_RANGE(0, 100)},
    {"grpo", "aggregation", RLVR_CFG_ENUM, "tokens",
     "loss normaliser: tokens (policy tokens in the global batch), constant (normaliser), sequence (1 / policy tokens of each rollout)",
     "tokens|constant|sequence", RLVR_CFG_ANY},
    {"grpo", "normaliser", RLVR_CFG_FLOAT, "0", "the fixed N of aggregation = constant (> 0 there)", NULL,
     RLVR_CFG_RANGE(0, 1e15)},

    /* [entropy] */
    {"entropy", "coef", RLVR_CFG_FLOAT, "0.001", "alpha_H: starting entropy-bonus coefficient", NULL,
     RLVR_CFG_RANGE(0, 1)},
    {"entropy", "adaptive", RLVR_CFG_BOOL, "true", "steer coef toward the target band each step", NULL,
     RLVR_CFG_ANY},
    {"entropy", "target_low", RLVR_CFG_FLOAT, "0.3", "H*_min: lower edge of the target band, nats", NULL,
     RLVR_CFG_RANGE(0, 100)},
    {"entropy", "target_high", RLVR_CFG_FLOAT, "0.8", "H*_max: upper edge of the target band, nats", NULL,
     RLVR_CFG_RANGE(0, 100)},
    {"entropy", "lr", RLVR_CFG_FLOAT, "0.001", "eta_alpha: controller step per nat of error", NULL,
     RLVR_CFG_RANGE(0, 10)},
    {"entropy", "coef_min", RLVR_CFG_FLOAT, "0", "alpha_min", NULL, RLVR_CFG_RANGE(0, 1)},
    {"entropy", "coef_max", RLVR_CFG_FLOAT, "0.01", "alpha_max", NULL, RLVR_CFG_RANGE(0, 1)},

    /* [credit] */
    {"credit", "mode", RLVR_CFG_ENUM, "outcome",
     "outcome: every token gets its rollout's advantage; mc: Monte-Carlo values at branch points", "outcome|mc",
     RLVR_CFG_ANY},
    {"credit", "forks", RLVR_CFG_INT, "8", "K: continuations forked from a branch point", NULL,
     RLVR_CFG_RANGE(1, 1024)},
    {"credit", "max_branch_points", RLVR_CFG_INT, "3", "branch points per trajectory at most", NULL,
     RLVR_CFG_RANGE(0, 1024)},
    {"credit", "branch_entropy", RLVR_CFG_FLOAT, "1.0",
     "a state whose next-token entropy (nats) reaches this is a branch candidate", NULL, RLVR_CFG_RANGE(0, 100)},
    {"credit", "branch_on_state_change", RLVR_CFG_BOOL, "true",
     "branch after turns that ran a state-changing tool call (edit, migration) first", NULL, RLVR_CFG_ANY},

    /* [difficulty] */
    {"difficulty", "ema", RLVR_CFG_FLOAT, "0.3", "eta: weight of the newest group's success rate in p_hat", NULL,
     RLVR_CFG_RANGE(1e-6, 1)},
    {"difficulty", "unseen_weight", RLVR_CFG_FLOAT, "0.25", "sampling weight of a task never tried", NULL,
     RLVR_CFG_RANGE(1e-12, 1)},
    {"difficulty", "min_weight", RLVR_CFG_FLOAT, "0.01",
     "floor of the sampling weight p_hat*(1 - p_hat) of a seen task", NULL, RLVR_CFG_RANGE(0, 1)},
    {"difficulty", "band_low", RLVR_CFG_FLOAT, "0", "tasks with p_hat below get only min_weight", NULL,
     RLVR_CFG_RANGE(0, 1)},
    {"difficulty", "band_high", RLVR_CFG_FLOAT, "1", "tasks with p_hat above get only min_weight", NULL,
     RLVR_CFG_RANGE(0, 1)},
    {"difficulty", "group_target", RLVR_CFG_FLOAT, "0.5",
     "raise G for hard tasks until P(>= 1 success) = 1 - (1 - p_hat)^G reaches this (0 = off)", NULL,
     RLVR_CFG_RANGE(0, 0.999999)},
    {"difficulty", "max_group_size", RLVR_CFG_INT, "32", "largest G the rule may choose (>= [grpo] group_size)",
     NULL, RLVR_CFG_RANGE(2, 65536)},

    /* [dynamic_sampling] */
    {"dynamic_sampling", "max_rounds", RLVR_CFG_INT, "4",
     "draw rounds per step to fill groups_per_step informative groups (1 = no re-draw)", NULL,
     RLVR_CFG_RANGE(1, 1000)},
    {"dynamic_sampling", "max_oversample", RLVR_CFG_FLOAT, "4",
     "a re-draw round draws at most this many times the missing groups", NULL, RLVR_CFG_RANGE(1, 1000)},

    /* [repetition] */
    {"repetition", "enabled", RLVR_CFG_BOOL, "true", "stop rollouts caught in an n-gram loop", NULL, RLVR_CFG_ANY},
    {"repetition", "window", RLVR_CFG_INT, "2048", "recent tokens searched for repeats", NULL,
     RLVR_CFG_RANGE(1, 16777216)},
    {"repetition", "ngram", RLVR_CFG_INT, "32", "n-gram length in tokens", NULL, RLVR_CFG_RANGE(1, 65536)},
    {"repetition", "max_repeats", RLVR_CFG_INT, "10", "stop when one n-gram occurs more often within the window",
     NULL, RLVR_CFG_RANGE(1, 16777216)},
    END_OF_TABLE,
};

const rlvr_config_key rlvr_rl_plan_config_keys[] = {
    {"plan", "compare_group_sizes", RLVR_CFG_STRING, "16",
     "more group sizes to tabulate beside [grpo] group_size, comma separated (e.g. 16, 32)", NULL, RLVR_CFG_ANY},
    {"plan", "success_rate", RLVR_CFG_FLOAT, "0.18", "assumed per-rollout success rate p of a typical task", NULL,
     RLVR_CFG_RANGE(0, 1)},
    {"plan", "hard_success_rate", RLVR_CFG_FLOAT, "0.05", "success rate of a hard task", NULL,
     RLVR_CFG_RANGE(0, 1)},
    {"plan", "true_success_rate", RLVR_CFG_FLOAT, "0.10", "true success rate for the false-positive estimate",
     NULL, RLVR_CFG_RANGE(0, 1)},
    {"plan", "false_accept_rate", RLVR_CFG_FLOAT, "0.025", "share of failures a (learned) verifier accepts", NULL,
     RLVR_CFG_RANGE(0, 1)},
    {"plan", "flaky_pass_rate", RLVR_CFG_FLOAT, "0.20", "chance that a broken patch passes a flaky test", NULL,
     RLVR_CFG_RANGE(0, 1)},
    {"plan", "consensus_runs", RLVR_CFG_INT, "3",
     "fresh-enclave runs a passing patch must all pass (the first included)", NULL, RLVR_CFG_RANGE(1, 100)},
    {"plan", "mc_turns", RLVR_CFG_INT, "30", "T: turns of the trajectory for the MC credit cost", NULL,
     RLVR_CFG_RANGE(1, 100000)},
    {"plan", "mc_tokens_per_turn", RLVR_CFG_INT, "512", "L: tokens per turn for the MC credit cost", NULL,
     RLVR_CFG_RANGE(1, 1e9)},
    {"plan", "value_before", RLVR_CFG_FLOAT, "0.05", "V_hat(s_t) of an example turn (MC credit)", NULL,
     RLVR_CFG_RANGE(0, 1)},
    {"plan", "value_after", RLVR_CFG_FLOAT, "0.60", "V_hat(s_t+1) after that turn", NULL, RLVR_CFG_RANGE(0, 1)},
    {"plan", "environments", RLVR_CFG_INT, "256", "environments (rollout slots) running at once", NULL,
     RLVR_CFG_RANGE(1, 1e8)},
    {"plan", "turns", RLVR_CFG_INT, "20", "turns per rollout (throughput)", NULL, RLVR_CFG_RANGE(1, 100000)},
    {"plan", "model_s_per_turn", RLVR_CFG_FLOAT, "0.120", "model time per turn, seconds", NULL,
     RLVR_CFG_RANGE(0, 1e6)},
    {"plan", "tool_s_per_turn", RLVR_CFG_FLOAT, "0.080", "tool time per turn, seconds", NULL,
     RLVR_CFG_RANGE(0, 1e6)},
    {"plan", "verify_s", RLVR_CFG_FLOAT, "0.5", "verifier time per enclave run, seconds", NULL,
     RLVR_CFG_RANGE(0, 1e6)},
    {"plan", "cold_reset_s", RLVR_CFG_FLOAT, "3.5", "environment rebuilt from scratch, seconds", NULL,
     RLVR_CFG_RANGE(0, 1e6)},
    {"plan", "snapshot_reset_s", RLVR_CFG_FLOAT, "0.015", "environment restored from a snapshot, seconds", NULL,
     RLVR_CFG_RANGE(0, 1e6)},
    {"plan", "rollout_time_sigma", RLVR_CFG_FLOAT, "1.0",
     "lognormal shape of rollout times (heavy tail; the median is the snapshot cycle)", NULL,
     RLVR_CFG_RANGE(0, 10)},
    {"plan", "train_step_s", RLVR_CFG_FLOAT, "60", "trainer time per step, seconds", NULL, RLVR_CFG_RANGE(0, 1e7)},
    {"plan", "tail_trials", RLVR_CFG_INT, "200", "Monte-Carlo trials for the expected slowest rollout", NULL,
     RLVR_CFG_RANGE(1, 100000)},
    {"plan", "seed", RLVR_CFG_INT, "1", "seed of those trials (Philox)", NULL, RLVR_CFG_RANGE(0, 9e18)},
    END_OF_TABLE,
};

/* ---- typed reads of keys the schema has already range-checked --------- */

static int get_i32(const rlvr_config *cfg, const char *section, const char *key, int32_t *out) {
    int64_t v;
    RLVR_TRY(rlvr_config_get_int(cfg, section, key, &v));
    *out = (int32_t)v;
    return 0;
}

static int get_enum(const rlvr_config *cfg, const char *section, const char *key, const char *const *names,
                    int *out) {
    const char *v;
    RLVR_TRY(rlvr_config_get_string(cfg, section, key, &v));
    for (int i = 0; names[i]; i++)
        if (strcmp(v, names[i]) == 0) {
            *out = i;
            return 0;
        }
    return rlvr_config_error(cfg, section, key, "unknown value \"%s\"", v);
}

/* Turns a struct check's refusal into a config error naming the key. */
static int refusal(const rlvr_config *cfg, const char *section, int rc, const char *bad_key) {
    if (rc >= 0) return rc;
    if (!bad_key) return rc;
    char why[1024];
    snprintf(why, sizeof why, "%s", rlvr_error_last());
    return rlvr_config_error(cfg, section, bad_key, "%s", why);
}

int rlvr_rl_reward_config_load(rlvr_reward_config *o, const rlvr_config *cfg) {
    static const char *const outcomes[] = {"binary", "partial", NULL};
    static const char *const penalties[] = {"none", "linear", "threshold", NULL};
    static const char *const truncations[] = {"fail", "exclude", NULL};
    int e = 0;
    RLVR_TRY(get_enum(cfg, "reward", "outcome", outcomes, &e));
    o->outcome = (rlvr_outcome_kind)e;
    RLVR_TRY(rlvr_config_get_double(cfg, "reward", "format_weight", &o->format_weight));
    RLVR_TRY(get_enum(cfg, "reward", "length_penalty", penalties, &e));
    o->length_penalty = (rlvr_length_penalty)e;
    RLVR_TRY(rlvr_config_get_double(cfg, "reward", "length_weight", &o->length_weight));
    RLVR_TRY(rlvr_config_get_int(cfg, "reward", "max_tokens", &o->max_tokens));
    RLVR_TRY(rlvr_config_get_int(cfg, "reward", "length_budget", &o->length_budget));
    RLVR_TRY(rlvr_config_get_double(cfg, "reward", "length_slope", &o->length_slope));
    RLVR_TRY(get_enum(cfg, "reward", "truncation", truncations, &e));
    o->truncation = (rlvr_truncation_policy)e;
    const char *bad = NULL;
    int rc = rlvr_rl_reward_config_check(o, &bad);
    return refusal(cfg, "reward", rc, bad);
}

int rlvr_rl_grpo_config_load(rlvr_grpo_config *o, const rlvr_config *cfg) {
    static const char *const kinds[] = {"std", "mean", "loo", NULL};
    static const char *const aggregations[] = {"tokens", "constant", "sequence", NULL};
    int e = 0;
    *o = (rlvr_grpo_config){0};
    RLVR_TRY(get_i32(cfg, "grpo", "group_size", &o->group_size));
    RLVR_TRY(get_i32(cfg, "grpo", "groups_per_step", &o->groups_per_step));
    RLVR_TRY(get_enum(cfg, "grpo", "advantage", kinds, &e));
    o->advantage = (rlvr_advantage_kind)e;
    RLVR_TRY(rlvr_config_get_double(cfg, "grpo", "std_eps", &o->std_eps));
    RLVR_TRY(get_i32(cfg, "grpo", "epochs", &o->epochs));
    rlvr_objective_options *ob = &o->objective;
    RLVR_TRY(rlvr_config_get_double(cfg, "grpo", "clip_low", &ob->clip_low));
    RLVR_TRY(rlvr_config_get_double(cfg, "grpo", "clip_high", &ob->clip_high));
    RLVR_TRY(rlvr_config_get_double(cfg, "grpo", "is_cap", &ob->is_cap));
    RLVR_TRY(rlvr_config_get_double(cfg, "grpo", "kl_beta", &ob->kl_beta));
    RLVR_TRY(get_enum(cfg, "grpo", "aggregation", aggregations, &e));
    ob->aggregation = (rlvr_aggregation)e;
    RLVR_TRY(rlvr_config_get_double(cfg, "grpo", "normaliser", &ob->normaliser));
    ob->entropy_coef = 0.0;
    if (ob->clip_high < ob->clip_low)
        return rlvr_config_error(cfg, "grpo", "clip_high",
                                 "clip_high = %g is below clip_low = %g: a low-probability token could shrink "
                                 "faster than it can grow, which speeds up entropy collapse (use clip_high >= "
                                 "clip_low)",
                                 ob->clip_high, ob->clip_low);
    if (ob->is_cap < 1.0 + ob->clip_high)
        return rlvr_config_error(cfg, "grpo", "is_cap",
                                 "is_cap = %g must be >= 1 + clip_high = %g, or the cap would cut inside the "
                                 "clip range",
                                 ob->is_cap, 1.0 + ob->clip_high);
    if (ob->aggregation == RLVR_AGG_CONSTANT && !(ob->normaliser > 0))
        return rlvr_config_error(cfg, "grpo", "normaliser",
                                 "aggregation = constant needs normaliser > 0 (e.g. groups_per_step x "
                                 "group_size x typical policy tokens per rollout)");
    if (ob->aggregation != RLVR_AGG_CONSTANT && ob->normaliser != 0)
        return rlvr_config_error(cfg, "grpo", "normaliser",
                                 "normaliser = %g is used only with aggregation = constant; remove it or set "
                                 "aggregation = constant",
                                 ob->normaliser);
    return 0;
}

int rlvr_rl_entropy_config_load(rlvr_entropy_config *o, const rlvr_config *cfg) {
    RLVR_TRY(rlvr_config_get_double(cfg, "entropy", "coef", &o->coef));
    RLVR_TRY(rlvr_config_get_bool(cfg, "entropy", "adaptive", &o->adaptive));
    RLVR_TRY(rlvr_config_get_double(cfg, "entropy", "target_low", &o->target_low));
    RLVR_TRY(rlvr_config_get_double(cfg, "entropy", "target_high", &o->target_high));
    RLVR_TRY(rlvr_config_get_double(cfg, "entropy", "lr", &o->lr));
    RLVR_TRY(rlvr_config_get_double(cfg, "entropy", "coef_min", &o->coef_min));
    RLVR_TRY(rlvr_config_get_double(cfg, "entropy", "coef_max", &o->coef_max));
    const char *bad = NULL;
    int rc = rlvr_rl_entropy_config_check(o, &bad);
    return refusal(cfg, "entropy", rc, bad);
}

int rlvr_rl_credit_config_load(rlvr_credit_config *o, const rlvr_config *cfg) {
    static const char *const modes[] = {"outcome", "mc", NULL};
    int e = 0;
    RLVR_TRY(get_enum(cfg, "credit", "mode", modes, &e));
    o->mc = e == 1;
    RLVR_TRY(get_i32(cfg, "credit", "forks", &o->forks));
    RLVR_TRY(get_i32(cfg, "credit", "max_branch_points", &o->max_branch_points));
    RLVR_TRY(rlvr_config_get_double(cfg, "credit", "branch_entropy", &o->branch_entropy));
    RLVR_TRY(rlvr_config_get_bool(cfg, "credit", "branch_on_state_change", &o->branch_on_state_change));
    if (o->mc && o->max_branch_points == 0)
        return rlvr_config_error(cfg, "credit", "max_branch_points",
                                 "mode = mc needs at least one branch point per trajectory");
    return 0;
}

int rlvr_rl_difficulty_config_load(rlvr_difficulty_config *o, const rlvr_config *cfg) {
    RLVR_TRY(rlvr_config_get_double(cfg, "difficulty", "ema", &o->ema));
    RLVR_TRY(rlvr_config_get_double(cfg, "difficulty", "unseen_weight", &o->unseen_weight));
    RLVR_TRY(rlvr_config_get_double(cfg, "difficulty", "min_weight", &o->min_weight));
    RLVR_TRY(rlvr_config_get_double(cfg, "difficulty", "band_low", &o->band_low));
    RLVR_TRY(rlvr_config_get_double(cfg, "difficulty", "band_high", &o->band_high));
    RLVR_TRY(rlvr_config_get_double(cfg, "difficulty", "group_target", &o->group_target));
    RLVR_TRY(get_i32(cfg, "difficulty", "max_group_size", &o->max_group_size));
    const char *bad = NULL;
    int rc = rlvr_rl_difficulty_config_check(o, &bad);
    RLVR_TRY(refusal(cfg, "difficulty", rc, bad));
    int32_t G;
    RLVR_TRY(get_i32(cfg, "grpo", "group_size", &G));
    if (o->max_group_size < G)
        return rlvr_config_error(cfg, "difficulty", "max_group_size",
                                 "max_group_size = %d is below [grpo] group_size = %d", o->max_group_size, G);
    return 0;
}

int rlvr_rl_dynsample_config_load(rlvr_dynsample_config *o, const rlvr_config *cfg) {
    RLVR_TRY(get_i32(cfg, "dynamic_sampling", "max_rounds", &o->max_rounds));
    RLVR_TRY(rlvr_config_get_double(cfg, "dynamic_sampling", "max_oversample", &o->max_oversample));
    const char *bad = NULL;
    int rc = rlvr_rl_dynsample_config_check(o, &bad);
    return refusal(cfg, "dynamic_sampling", rc, bad);
}

int rlvr_rl_repetition_config_load(rlvr_repetition_config *o, const rlvr_config *cfg) {
    RLVR_TRY(rlvr_config_get_bool(cfg, "repetition", "enabled", &o->enabled));
    RLVR_TRY(get_i32(cfg, "repetition", "window", &o->window));
    RLVR_TRY(get_i32(cfg, "repetition", "ngram", &o->ngram));
    RLVR_TRY(get_i32(cfg, "repetition", "max_repeats", &o->max_repeats));
    const char *bad = NULL;
    int rc = rlvr_rl_repetition_config_check(o, &bad);
    return refusal(cfg, "repetition", rc, bad);
}

int rlvr_rl_config_load(rlvr_rl_config *out, const rlvr_config *cfg) {
    if (!out || !cfg) return RLVR_FAIL(RLVR_EINVAL, "rl config: NULL argument");
    *out = (rlvr_rl_config){0};
    RLVR_TRY(rlvr_rl_reward_config_load(&out->reward, cfg));
    RLVR_TRY(rlvr_rl_grpo_config_load(&out->grpo, cfg));
    RLVR_TRY(rlvr_rl_entropy_config_load(&out->entropy, cfg));
    RLVR_TRY(rlvr_rl_credit_config_load(&out->credit, cfg));
    RLVR_TRY(rlvr_rl_difficulty_config_load(&out->difficulty, cfg));
    RLVR_TRY(rlvr_rl_dynsample_config_load(&out->dynamic_sampling, cfg));
    RLVR_TRY(rlvr_rl_repetition_config_load(&out->repetition, cfg));
    return 0;
}

/* "16, 32" → sizes; each an integer in [2, 65536]. */
static int parse_group_sizes(rlvr_plan_inputs *o, const rlvr_config *cfg) {
    const char *text;
    RLVR_TRY(rlvr_config_get_string(cfg, "plan", "compare_group_sizes", &text));
    o->n_compare = 0;
    const char *p = text;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == ',') p++;
        if (!*p) return 0;
        errno = 0;
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || errno || v < 2 || v > 65536 || (*end && *end != ',' && *end != ' ' && *end != '\t'))
            return rlvr_config_error(cfg, "plan", "compare_group_sizes",
                                     "\"%s\" is not a list of group sizes in [2, 65536] (e.g. 16, 32)", text);
        if (o->n_compare == RLVR_PLAN_MAX_GROUP_SIZES - 1)
            return rlvr_config_error(cfg, "plan", "compare_group_sizes", "at most %d extra group sizes",
                                     RLVR_PLAN_MAX_GROUP_SIZES - 1);
        o->compare_group_sizes[o->n_compare++] = (int32_t)v;
        p = end;
    }
}

int rlvr_rl_plan_inputs_load(rlvr_plan_inputs *o, const rlvr_config *cfg) {
    if (!o || !cfg) return RLVR_FAIL(RLVR_EINVAL, "plan inputs: NULL argument");
    *o = (rlvr_plan_inputs){0};
    rlvr_grpo_config grpo;
    rlvr_credit_config credit;
    rlvr_difficulty_config difficulty;
    RLVR_TRY(rlvr_rl_grpo_config_load(&grpo, cfg));
    RLVR_TRY(rlvr_rl_credit_config_load(&credit, cfg));
    RLVR_TRY(rlvr_rl_difficulty_config_load(&difficulty, cfg));
    o->group_size = grpo.group_size;
    o->groups_per_step = grpo.groups_per_step;
    o->advantage = grpo.advantage;
    o->std_eps = grpo.std_eps;
    o->forks = credit.forks;
    o->max_branch_points = credit.max_branch_points;
    o->group_target = difficulty.group_target;
    o->max_group_size = difficulty.max_group_size;
    RLVR_TRY(parse_group_sizes(o, cfg));
    const struct {
        const char *key;
        double *out;
    } doubles[] = {
        {"success_rate", &o->success_rate},
        {"hard_success_rate", &o->hard_success_rate},
        {"true_success_rate", &o->true_success_rate},
        {"false_accept_rate", &o->false_accept_rate},
        {"flaky_pass_rate", &o->flaky_pass_rate},
        {"value_before", &o->value_before},
        {"value_after", &o->value_after},
        {"model_s_per_turn", &o->model_s_per_turn},
        {"tool_s_per_turn", &o->tool_s_per_turn},
        {"verify_s", &o->verify_s},
        {"cold_reset_s", &o->cold_reset_s},
        {"snapshot_reset_s", &o->snapshot_reset_s},
        {"rollout_time_sigma", &o->rollout_time_sigma},
        {"train_step_s", &o->train_step_s},
    };
    for (size_t i = 0; i < sizeof doubles / sizeof doubles[0]; i++)
        RLVR_TRY(rlvr_config_get_double(cfg, "plan", doubles[i].key, doubles[i].out));
    RLVR_TRY(get_i32(cfg, "plan", "consensus_runs", &o->consensus_runs));
    RLVR_TRY(get_i32(cfg, "plan", "mc_turns", &o->mc_turns));
    RLVR_TRY(rlvr_config_get_int(cfg, "plan", "mc_tokens_per_turn", &o->mc_tokens_per_turn));
    RLVR_TRY(get_i32(cfg, "plan", "environments", &o->environments));
    RLVR_TRY(get_i32(cfg, "plan", "turns", &o->turns));
    RLVR_TRY(get_i32(cfg, "plan", "tail_trials", &o->tail_trials));
    int64_t seed;
    RLVR_TRY(rlvr_config_get_int(cfg, "plan", "seed", &seed));
    o->seed = (uint64_t)seed;
    if (!(o->turns * (o->model_s_per_turn + o->tool_s_per_turn) + o->verify_s > 0))
        return rlvr_config_error(cfg, "plan", "verify_s",
                                 "a rollout takes no time: set model_s_per_turn, tool_s_per_turn or verify_s");
    return 0;
}
