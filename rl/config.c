#include "rl/config.h"

#include "core/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* [plan] as written: the planner inputs and the group-size list as text. */
typedef struct {
    rlvr_plan_inputs in;
    const char *compare_group_sizes;
} plan_keys;

const rlvr_config_key rlvr_rl_config_keys[] = {
    /* [reward] */
    RLVR_KEY_ENUM("reward", "outcome", rlvr_reward_config, outcome, "binary", "binary|partial|fail_to_pass",
        "decisive outcome: binary (pass = 1), partial (a failed rollout scores the fraction of its tests that "
        "passed) or fail_to_pass (the fraction of its FAIL_TO_PASS tests that passed, 0 when a PASS_TO_PASS test "
        "failed); partial credit only for tasks verified by a judge"),
    RLVR_KEY_DOUBLE("reward", "format_weight", rlvr_reward_config, format_weight, "0.05", 0, 1,
        "lambda_fmt: weight of R_format, the share of tool calls that parsed against their schema"),
    RLVR_KEY_ENUM("reward", "length_penalty", rlvr_reward_config, length_penalty, "threshold", "none|linear|threshold",
        "none, linear (alpha * policy tokens / max_tokens) or threshold (length_slope * tokens beyond length_budget)"),
    RLVR_KEY_DOUBLE("reward", "length_weight", rlvr_reward_config, length_weight, "0.05", 0, 1,
        "alpha of the linear penalty; format_weight + length_weight must stay below 1"),
    RLVR_KEY_I64("reward", "max_tokens", rlvr_reward_config, max_tokens, "4096", 1, 1e9,
        "T_max: policy-token cap of one rollout (equal to the harness budget)"),
    RLVR_KEY_I64("reward", "length_budget", rlvr_reward_config, length_budget, "3072", 0, 1e9,
        "T_budget: policy tokens free of the threshold penalty"),
    RLVR_KEY_DOUBLE("reward", "length_slope", rlvr_reward_config, length_slope, "0.002", 0, 1e6,
        "gamma: threshold penalty per token beyond length_budget; gamma*(max_tokens - length_budget) must be >= 1 + "
        "format_weight"),
    RLVR_KEY_ENUM("reward", "truncation", rlvr_reward_config, truncation, "fail", "fail|exclude",
        "truncated and repetition-stopped rollouts: fail scores them as failures, exclude drops them from the loss"),

    /* [grpo] */
    RLVR_KEY_I32("grpo", "group_size", rlvr_grpo_config, group_size, "8", 2, RLVR_GROUP_SIZE_MAX,
        "G: rollouts per task in a group"),
    RLVR_KEY_I32("grpo", "groups_per_step", rlvr_grpo_config, groups_per_step, "64", 1, RLVR_GROUPS_DRAWN_MAX,
        "informative groups in one training step"),
    RLVR_KEY_ENUM("grpo", "advantage", rlvr_grpo_config, advantage, "std", "std|mean|loo",
        "std: (r - mean)/(std + eps); mean: r - mean; loo: r - mean of the others"),
    RLVR_KEY_DOUBLE("grpo", "std_eps", rlvr_grpo_config, std_eps, "1e-6", 0, 1, "eps added to the population std"),
    RLVR_KEY_I32("grpo", "epochs", rlvr_grpo_config, epochs, "1", 1, 64,
        "mu: AdamW steps over each training step's batch; after the first the clip bounds how far the policy moves"),
    RLVR_KEY_DOUBLE("grpo", "clip_low", rlvr_grpo_config, objective.clip_low, "0.2", 0, 0.99,
        "eps_low: ratios below 1 - clip_low are clipped"),
    RLVR_KEY_DOUBLE("grpo", "clip_high", rlvr_grpo_config, objective.clip_high, "0.28", 0, 10,
        "eps_high: ratios above 1 + clip_high are clipped (clip-higher: >= clip_low)"),
    RLVR_KEY_DOUBLE("grpo", "is_cap", rlvr_grpo_config, objective.is_cap, "2", 1, 1e6,
        "C: cap on importance weights against the sampling log-probs (stale rollouts, a sampler that is not f32); "
        ">= 1 + clip_high"),
    RLVR_KEY_DOUBLE("grpo", "kl_beta", rlvr_grpo_config, objective.kl_beta, "0", 0, 100,
        "beta of the k3 KL penalty to the reference model (0 = no reference)"),
    RLVR_KEY_ENUM("grpo", "aggregation", rlvr_grpo_config, objective.aggregation, "tokens", "tokens|constant|sequence",
        "loss normaliser: tokens (policy tokens in the global batch), constant (normaliser), sequence (1 / policy "
        "tokens of each rollout)"),
    RLVR_KEY_DOUBLE("grpo", "normaliser", rlvr_grpo_config, objective.normaliser, "0", 0, 1e15,
        "the fixed N of aggregation = constant (> 0 there)"),

    /* [entropy] */
    RLVR_KEY_DOUBLE("entropy", "coef", rlvr_entropy_config, coef, "0.001", 0, 1,
        "alpha_H: starting entropy-bonus coefficient"),
    RLVR_KEY_BOOL("entropy", "adaptive", rlvr_entropy_config, adaptive, "true",
        "steer coef toward the target band each step"),
    RLVR_KEY_DOUBLE("entropy", "target_low", rlvr_entropy_config, target_low, "0.3", 0, 100,
        "H*_min: lower edge of the target band, nats"),
    RLVR_KEY_DOUBLE("entropy", "target_high", rlvr_entropy_config, target_high, "0.8", 0, 100,
        "H*_max: upper edge of the target band, nats"),
    RLVR_KEY_DOUBLE("entropy", "lr", rlvr_entropy_config, lr, "0.001", 0, 10,
        "eta_alpha: controller step per nat of error"),
    RLVR_KEY_DOUBLE("entropy", "coef_min", rlvr_entropy_config, coef_min, "0", 0, 1, "alpha_min"),
    RLVR_KEY_DOUBLE("entropy", "coef_max", rlvr_entropy_config, coef_max, "0.01", 0, 1, "alpha_max"),

    /* [credit] */
    RLVR_KEY_ENUM_BOOL("credit", "mode", rlvr_credit_config, mc, "outcome", "outcome|mc",
        "outcome: every token gets its rollout's advantage; mc: Monte-Carlo values at branch points"),
    RLVR_KEY_I32("credit", "forks", rlvr_credit_config, forks, "8", 1, 1024,
        "K: continuations forked from a branch point"),
    RLVR_KEY_I32("credit", "max_branch_points", rlvr_credit_config, max_branch_points, "3", 0, 1024,
        "branch points per trajectory at most"),
    RLVR_KEY_DOUBLE("credit", "branch_entropy", rlvr_credit_config, branch_entropy, "1.0", 0, 100,
        "a state whose next-token entropy (nats) reaches this is a branch candidate"),
    RLVR_KEY_BOOL("credit", "branch_on_state_change", rlvr_credit_config, branch_on_state_change, "true",
        "branch after turns that ran a state-changing tool call (edit, migration) first"),
    RLVR_KEY_STRING("credit", "state_changing_tools", rlvr_credit_config, state_changing_tools,
        "replace_in_file,write_file,run,run_public_tests",
        "mc: the tools whose calls may change the workspace, comma-separated; the workspace is snapshotted "
        "after each such call, and the call counts as state-changing when the snapshot differs from the one "
        "before it. Other tools are taken not to change files"),

    /* [difficulty] */
    RLVR_KEY_DOUBLE("difficulty", "ema", rlvr_difficulty_config, ema, "0.3", 1e-6, 1,
        "eta: weight of the newest group's success rate in p_hat"),
    RLVR_KEY_DOUBLE("difficulty", "unseen_weight", rlvr_difficulty_config, unseen_weight, "0.25", 1e-12, 1,
        "sampling weight of a task never tried"),
    RLVR_KEY_DOUBLE("difficulty", "min_weight", rlvr_difficulty_config, min_weight, "0.01", 0, 1,
        "floor of the sampling weight p_hat*(1 - p_hat) of a seen task"),
    RLVR_KEY_DOUBLE("difficulty", "band_low", rlvr_difficulty_config, band_low, "0", 0, 1,
        "tasks with p_hat below get only min_weight"),
    RLVR_KEY_DOUBLE("difficulty", "band_high", rlvr_difficulty_config, band_high, "1", 0, 1,
        "tasks with p_hat above get only min_weight"),
    RLVR_KEY_DOUBLE("difficulty", "group_target", rlvr_difficulty_config, group_target, "0.5", 0, 0.999999,
        "raise G for hard tasks until P(>= 1 success) = 1 - (1 - p_hat)^G reaches this (0 = off)"),
    RLVR_KEY_I32("difficulty", "max_group_size", rlvr_difficulty_config, max_group_size, "32", 2, RLVR_GROUP_SIZE_MAX,
        "largest G the rule may choose (>= [grpo] group_size)"),

    /* [dynamic_sampling] */
    RLVR_KEY_I32("dynamic_sampling", "max_rounds", rlvr_dynsample_config, max_rounds, "4", 1, 1000,
        "draw rounds per step to fill groups_per_step informative groups (1 = no re-draw)"),
    RLVR_KEY_DOUBLE("dynamic_sampling", "max_oversample", rlvr_dynsample_config, max_oversample, "4", 1, 1000,
        "a re-draw round draws at most this many times the missing groups"),

    /* [repetition] */
    RLVR_KEY_BOOL("repetition", "enabled", rlvr_repetition_config, enabled, "true",
        "stop rollouts caught in an n-gram loop"),
    RLVR_KEY_I32("repetition", "window", rlvr_repetition_config, window, "2048", 1, 16777216,
        "recent tokens searched for repeats"),
    RLVR_KEY_I32("repetition", "ngram", rlvr_repetition_config, ngram, "32", 1, 65536, "n-gram length in tokens"),
    RLVR_KEY_I32("repetition", "max_repeats", rlvr_repetition_config, max_repeats, "10", 1, 16777216,
        "stop when one n-gram occurs more often within the window"),
    RLVR_KEY_END,
};

const rlvr_config_key rlvr_rl_plan_config_keys[] = {
    RLVR_KEY_STRING("plan", "compare_group_sizes", plan_keys, compare_group_sizes, "16",
        "more group sizes to tabulate beside [grpo] group_size, comma separated (e.g. 16, 32)"),
    RLVR_KEY_DOUBLE("plan", "success_rate", plan_keys, in.success_rate, "0.18", 0, 1,
        "assumed per-rollout success rate p of a typical task"),
    RLVR_KEY_DOUBLE("plan", "hard_success_rate", plan_keys, in.hard_success_rate, "0.05", 0, 1,
        "success rate of a hard task"),
    RLVR_KEY_DOUBLE("plan", "true_success_rate", plan_keys, in.true_success_rate, "0.10", 0, 1,
        "true success rate for the false-positive estimate"),
    RLVR_KEY_DOUBLE("plan", "false_accept_rate", plan_keys, in.false_accept_rate, "0.025", 0, 1,
        "share of failures a (learned) verifier accepts"),
    RLVR_KEY_DOUBLE("plan", "flaky_pass_rate", plan_keys, in.flaky_pass_rate, "0.20", 0, 1,
        "chance that a broken patch passes a flaky test"),
    RLVR_KEY_I32("plan", "consensus_runs", plan_keys, in.consensus_runs, "3", 1, 100,
        "fresh-enclave runs a passing patch must all pass (the first included)"),
    RLVR_KEY_I32("plan", "mc_turns", plan_keys, in.mc_turns, "30", 1, 100000,
        "T: turns of the trajectory for the MC credit cost"),
    RLVR_KEY_I64("plan", "mc_tokens_per_turn", plan_keys, in.mc_tokens_per_turn, "512", 1, 1e9,
        "L: tokens per turn for the MC credit cost"),
    RLVR_KEY_DOUBLE("plan", "value_before", plan_keys, in.value_before, "0.05", 0, 1,
        "V_hat(s_t) of an example turn (MC credit)"),
    RLVR_KEY_DOUBLE("plan", "value_after", plan_keys, in.value_after, "0.60", 0, 1, "V_hat(s_t+1) after that turn"),
    RLVR_KEY_I32("plan", "environments", plan_keys, in.environments, "256", 1, 1e8,
        "environments (rollout slots) running at once"),
    RLVR_KEY_I32("plan", "turns", plan_keys, in.turns, "20", 1, 100000, "turns per rollout (throughput)"),
    RLVR_KEY_DOUBLE("plan", "model_s_per_turn", plan_keys, in.model_s_per_turn, "0.120", 0, 1e6,
        "model time per turn, seconds"),
    RLVR_KEY_DOUBLE("plan", "tool_s_per_turn", plan_keys, in.tool_s_per_turn, "0.080", 0, 1e6,
        "tool time per turn, seconds"),
    RLVR_KEY_DOUBLE("plan", "verify_s", plan_keys, in.verify_s, "0.5", 0, 1e6,
        "verifier time per enclave run, seconds"),
    RLVR_KEY_DOUBLE("plan", "cold_reset_s", plan_keys, in.cold_reset_s, "3.5", 0, 1e6,
        "environment rebuilt from scratch, seconds"),
    RLVR_KEY_DOUBLE("plan", "snapshot_reset_s", plan_keys, in.snapshot_reset_s, "0.015", 0, 1e6,
        "environment restored from a snapshot, seconds"),
    RLVR_KEY_DOUBLE("plan", "rollout_time_sigma", plan_keys, in.rollout_time_sigma, "1.0", 0, 10,
        "lognormal shape of rollout times (heavy tail; the median is the snapshot cycle)"),
    RLVR_KEY_DOUBLE("plan", "train_step_s", plan_keys, in.train_step_s, "60", 0, 1e7,
        "trainer time per step, seconds"),
    RLVR_KEY_I32("plan", "tail_trials", plan_keys, in.tail_trials, "200", 1, 100000,
        "Monte-Carlo trials for the expected slowest rollout"),
    RLVR_KEY_U64("plan", "seed", plan_keys, in.seed, "1", 0, 9e18, "seed of those trials (Philox)"),
    RLVR_KEY_END,
};

/* Turns a struct check's refusal into a config error naming the key. */
static int refusal(const rlvr_config *cfg, const char *section, int rc, const char *bad_key) {
    if (rc >= 0) return rc;
    if (!bad_key) return rc;
    char why[1024];
    snprintf(why, sizeof why, "%s", rlvr_error_last());
    return rlvr_config_error(cfg, section, bad_key, "%s", why);
}

int rlvr_rl_reward_config_load(rlvr_reward_config *o, const rlvr_config *cfg) {
    RLVR_TRY(rlvr_config_fill(cfg, rlvr_rl_config_keys, "reward", o));
    const char *bad = NULL;
    int rc = rlvr_rl_reward_config_check(o, &bad);
    return refusal(cfg, "reward", rc, bad);
}

int rlvr_rl_grpo_config_load(rlvr_grpo_config *o, const rlvr_config *cfg) {
    *o = (rlvr_grpo_config){0};
    RLVR_TRY(rlvr_config_fill(cfg, rlvr_rl_config_keys, "grpo", o));
    rlvr_objective_options *ob = &o->objective;
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
    RLVR_TRY(rlvr_config_fill(cfg, rlvr_rl_config_keys, "entropy", o));
    const char *bad = NULL;
    int rc = rlvr_rl_entropy_config_check(o, &bad);
    return refusal(cfg, "entropy", rc, bad);
}

int rlvr_rl_credit_config_load(rlvr_credit_config *o, const rlvr_config *cfg) {
    RLVR_TRY(rlvr_config_fill(cfg, rlvr_rl_config_keys, "credit", o));
    if (o->mc && o->max_branch_points == 0)
        return rlvr_config_error(cfg, "credit", "max_branch_points",
                                 "mode = mc needs at least one branch point per trajectory");
    return 0;
}

int rlvr_rl_difficulty_config_load(rlvr_difficulty_config *o, const rlvr_config *cfg) {
    RLVR_TRY(rlvr_config_fill(cfg, rlvr_rl_config_keys, "difficulty", o));
    const char *bad = NULL;
    int rc = rlvr_rl_difficulty_config_check(o, &bad);
    RLVR_TRY(refusal(cfg, "difficulty", rc, bad));
    /* [grpo] as written, unchecked: its own loader reports its problems */
    rlvr_grpo_config grpo = {0};
    RLVR_TRY(rlvr_config_fill(cfg, rlvr_rl_config_keys, "grpo", &grpo));
    if (o->max_group_size < grpo.group_size)
        return rlvr_config_error(cfg, "difficulty", "max_group_size",
                                 "max_group_size = %d is below [grpo] group_size = %d", o->max_group_size,
                                 grpo.group_size);
    return 0;
}

int rlvr_rl_dynsample_config_load(rlvr_dynsample_config *o, const rlvr_config *cfg) {
    RLVR_TRY(rlvr_config_fill(cfg, rlvr_rl_config_keys, "dynamic_sampling", o));
    const char *bad = NULL;
    int rc = rlvr_rl_dynsample_config_check(o, &bad);
    RLVR_TRY(refusal(cfg, "dynamic_sampling", rc, bad));
    /* [grpo] as written, unchecked: its own loader reports its problems */
    rlvr_grpo_config grpo = {0};
    RLVR_TRY(rlvr_config_fill(cfg, rlvr_rl_config_keys, "grpo", &grpo));
    int64_t drawn = rlvr_rl_dynsample_max_drawn(o, grpo.groups_per_step);
    if (drawn > RLVR_GROUPS_DRAWN_MAX)
        return rlvr_config_error(cfg, "dynamic_sampling", "max_rounds",
                                 "[grpo] groups_per_step = %d with max_rounds = %d and max_oversample = %g may draw "
                                 "%lld groups in a step, more than the %d a step's sampling keys hold: lower one of them",
                                 grpo.groups_per_step, o->max_rounds, o->max_oversample, (long long)drawn,
                                 RLVR_GROUPS_DRAWN_MAX);
    return 0;
}

int rlvr_rl_repetition_config_load(rlvr_repetition_config *o, const rlvr_config *cfg) {
    RLVR_TRY(rlvr_config_fill(cfg, rlvr_rl_config_keys, "repetition", o));
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

/* "16, 32" → sizes; each an integer in [2, RLVR_GROUP_SIZE_MAX]. */
static int parse_group_sizes(rlvr_plan_inputs *o, const rlvr_config *cfg, const char *text) {
    o->n_compare = 0;
    const char *p = text;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == ',') p++;
        if (!*p) return 0;
        errno = 0;
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || errno || v < 2 || v > RLVR_GROUP_SIZE_MAX ||
            (*end && *end != ',' && *end != ' ' && *end != '\t'))
            return rlvr_config_error(cfg, "plan", "compare_group_sizes",
                                     "\"%s\" is not a list of group sizes in [2, %d] (e.g. 16, 32)", text,
                                     RLVR_GROUP_SIZE_MAX);
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
    plan_keys plan = {0};
    RLVR_TRY(rlvr_config_fill(cfg, rlvr_rl_plan_config_keys, "plan", &plan));
    *o = plan.in;
    o->group_size = grpo.group_size;
    o->groups_per_step = grpo.groups_per_step;
    o->advantage = grpo.advantage;
    o->std_eps = grpo.std_eps;
    o->forks = credit.forks;
    o->max_branch_points = credit.max_branch_points;
    o->group_target = difficulty.group_target;
    o->max_group_size = difficulty.max_group_size;
    RLVR_TRY(parse_group_sizes(o, cfg, plan.compare_group_sizes));
    if (!(o->turns * (o->model_s_per_turn + o->tool_s_per_turn) + o->verify_s > 0))
        return rlvr_config_error(cfg, "plan", "verify_s",
                                 "a rollout takes no time: set model_s_per_turn, tool_s_per_turn or verify_s");
    return 0;
}
