#include "rl/plan.h"

#include "core/error.h"
#include "core/rng.h"
#include "rl/difficulty.h"
#include "rl/estimators.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

static int check_inputs(const rlvr_plan_inputs *in) {
    if (in->group_size < 2 || in->groups_per_step < 1)
        return RLVR_FAIL(RLVR_EINVAL, "plan: group_size >= 2 and groups_per_step >= 1 needed");
    if (in->n_compare < 0 || in->n_compare > RLVR_PLAN_MAX_GROUP_SIZES - 1)
        return RLVR_FAIL(RLVR_EINVAL, "plan: %d extra group sizes (at most %d)", in->n_compare,
                         RLVR_PLAN_MAX_GROUP_SIZES - 1);
    for (int32_t i = 0; i < in->n_compare; i++)
        if (in->compare_group_sizes[i] < 2)
            return RLVR_FAIL(RLVR_EINVAL, "plan: group size %d < 2", in->compare_group_sizes[i]);
    const double rates[] = {in->success_rate, in->hard_success_rate, in->true_success_rate, in->false_accept_rate,
                            in->flaky_pass_rate};
    for (int i = 0; i < 5; i++)
        if (!(rates[i] >= 0 && rates[i] <= 1)) return RLVR_FAIL(RLVR_EINVAL, "plan: rate %g outside [0, 1]", rates[i]);
    if (in->consensus_runs < 1 || in->mc_turns < 1 || in->mc_tokens_per_turn < 1 || in->forks < 0 ||
        in->environments < 1 || in->turns < 1 || in->tail_trials < 1)
        return RLVR_FAIL(RLVR_EINVAL, "plan: counts must be positive");
    const double times[] = {in->model_s_per_turn, in->tool_s_per_turn, in->verify_s,         in->cold_reset_s,
                            in->snapshot_reset_s, in->train_step_s,    in->rollout_time_sigma};
    for (int i = 0; i < 7; i++)
        if (!(times[i] >= 0) || !isfinite(times[i]))
            return RLVR_FAIL(RLVR_EINVAL, "plan: time %g must be >= 0", times[i]);
    return 0;
}

static int group_row(rlvr_plan_group_row *row, const rlvr_plan_inputs *in, int32_t G) {
    row->G = G;
    row->pass_at_g = rlvr_rl_pass_at_k_rate(in->success_rate, G);
    row->zero_signal = rlvr_rl_zero_signal_probability(in->success_rate, G);
    row->hard_no_success = pow(1.0 - in->hard_success_rate, G);
    row->flaky_lucky_pass = rlvr_rl_pass_at_k_rate(in->flaky_pass_rate, G);
    /* a real group: one success, G − 1 failures */
    double *rewards, *adv;
    RLVR_ALLOC(rewards, G);
    adv = calloc((size_t)G, sizeof *adv);
    if (!adv) {
        free(rewards);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    }
    rewards[0] = 1.0;
    double sum = 0;
    for (int32_t i = 0; i < G; i++) sum += rewards[i];
    row->lone_winner_mean = sum / G;
    int rc = rlvr_rl_group_advantages(adv, NULL, rewards, NULL, G, in->advantage, in->std_eps);
    row->lone_winner_advantage = adv[0];
    free(rewards);
    free(adv);
    return rc;
}

/* E[max of m lognormal(log median, σ)] by Monte Carlo, deterministic. */
static double expected_max(double median, double sigma, int32_t m, int32_t trials, uint64_t seed) {
    double total = 0;
    for (int32_t r = 0; r < trials; r++) {
        rlvr_rng_stream s;
        rlvr_rng_stream_init(&s, seed, RLVR_RNG_TEST, (uint32_t)m, (uint32_t)r);
        double best = 0;
        for (int32_t i = 0; i < m; i++) {
            double x = median * exp(sigma * rlvr_rng_next_normal(&s));
            if (x > best) best = x;
        }
        total += best;
    }
    return total / trials;
}

int rlvr_rl_plan(rlvr_plan_report *out, const rlvr_plan_inputs *in) {
    if (!out || !in) return RLVR_FAIL(RLVR_EINVAL, "plan: NULL argument");
    RLVR_TRY(check_inputs(in));
    *out = (rlvr_plan_report){0};

    /* group signal, configured G first */
    RLVR_TRY(group_row(&out->groups[out->n_groups++], in, in->group_size));
    for (int32_t i = 0; i < in->n_compare; i++) {
        int32_t G = in->compare_group_sizes[i];
        bool seen = false;
        for (int32_t j = 0; j < out->n_groups; j++) seen |= out->groups[j].G == G;
        if (!seen) RLVR_TRY(group_row(&out->groups[out->n_groups++], in, G));
    }
    out->hard_group_size =
        rlvr_rl_group_size_for(in->hard_success_rate, in->group_size, in->max_group_size, in->group_target);
    out->hard_group_success = rlvr_rl_pass_at_k_rate(in->hard_success_rate, out->hard_group_size);

    /* false positives among positive rewards, in whole expected rollouts */
    out->rollouts_per_step = (int64_t)in->groups_per_step * in->group_size;
    out->true_positives = llround((double)out->rollouts_per_step * in->true_success_rate);
    out->failures = out->rollouts_per_step - out->true_positives;
    out->false_positives = llround((double)out->failures * in->false_accept_rate);
    int64_t positives = out->true_positives + out->false_positives;
    out->false_positive_share = positives > 0 ? (double)out->false_positives / (double)positives : 0.0;

    out->consensus_false_pass = rlvr_rl_pass_hat_k_rate(in->flaky_pass_rate, in->consensus_runs);

    /* MC turn credit */
    RLVR_TRY(rlvr_rl_mc_cost(&out->mc_full, in->mc_turns, in->mc_tokens_per_turn, in->forks, NULL, 0));
    out->mc_selective_tokens = rlvr_rl_mc_cost_expected(in->mc_turns, in->mc_tokens_per_turn, in->forks,
                                                        in->max_branch_points, &out->mc_selective_ratio);
    double values[2] = {in->value_before, in->value_after};
    uint8_t valued[2] = {1, 1};
    RLVR_TRY(rlvr_rl_turn_advantages(&out->turn_advantage, values, valued, 1));

    /* throughput: cold rebuild vs snapshot restore */
    out->useful_s = in->turns * (in->model_s_per_turn + in->tool_s_per_turn) + in->verify_s;
    out->cold_cycle_s = out->useful_s + in->cold_reset_s;
    out->snapshot_cycle_s = out->useful_s + in->snapshot_reset_s;
    if (!(out->cold_cycle_s > 0 && out->snapshot_cycle_s > 0))
        return RLVR_FAIL(RLVR_EINVAL, "plan: a rollout cycle of 0 s");
    out->cold_useful = out->useful_s / out->cold_cycle_s;
    out->snapshot_useful = out->useful_s / out->snapshot_cycle_s;
    out->cold_rollouts_per_h = in->environments * 3600.0 / out->cold_cycle_s;
    out->snapshot_rollouts_per_h = in->environments * 3600.0 / out->snapshot_cycle_s;
    out->reset_speedup = out->snapshot_rollouts_per_h / out->cold_rollouts_per_h;

    /* heavy tails: synchronous waves wait for their slowest member */
    double sigma = in->rollout_time_sigma, median = out->snapshot_cycle_s;
    out->rollout_mean_s = median * exp(sigma * sigma / 2);
    int64_t n = out->rollouts_per_step;
    out->waves = (int32_t)((n + in->environments - 1) / in->environments);
    int32_t full = (int32_t)(n / in->environments), rest = (int32_t)(n % in->environments);
    double full_max = full > 0 ? expected_max(median, sigma, in->environments, in->tail_trials, in->seed) : 0.0;
    double rest_max = rest > 0 ? expected_max(median, sigma, rest, in->tail_trials, in->seed) : 0.0;
    out->expected_wave_max_s = full > 0 ? full_max : rest_max;
    out->sync_step_s = full * full_max + rest_max + in->train_step_s;
    double generate = (double)n * out->rollout_mean_s / in->environments;
    out->async_step_s = generate > in->train_step_s ? generate : in->train_step_s;
    out->async_speedup = out->async_step_s > 0 ? out->sync_step_s / out->async_step_s : 0.0;

    /* verifier capacity: extra consensus runs only for patches that passed once */
    out->rollouts_per_s = out->snapshot_rollouts_per_h / 3600.0;
    out->enclave_runs_per_rollout = 1.0 + (in->consensus_runs - 1) * in->success_rate;
    out->verifier_slots = out->rollouts_per_s * out->enclave_runs_per_rollout * (in->verify_s + in->snapshot_reset_s);
    return 0;
}

/* ---- the figures as `rlvr plan` prints them ------------------------------ */

/* Integer with a space between groups of three digits from five digits on,
 * as docs/RL.md "Worked examples" writes them: 8192, 15 360, 1 797 120. */
const char *rlvr_plan_fmt_int(char *buf, size_t cap, int64_t v) {
    char digits[32];
    snprintf(digits, sizeof digits, "%" PRId64, v < 0 ? -v : v);
    size_t n = strlen(digits), j = 0;
    if (v < 0 && j + 1 < cap) buf[j++] = '-';
    for (size_t i = 0; i < n && j + 2 < cap; i++) {
        if (n > 4 && i > 0 && (n - i) % 3 == 0) buf[j++] = ' ';
        buf[j++] = digits[i];
    }
    buf[j] = '\0';
    return buf;
}

/* The value with as few decimals (up to max_exact) as show it exactly, else
 * rounded to `fallback` decimals: 56.25 stays 56.25, 99.667 becomes 99.7. */
const char *rlvr_plan_fmt_dec(char *buf, size_t cap, double v, int max_exact, int fallback) {
    for (int d = 0; d <= max_exact; d++) {
        double scale = pow(10.0, d);
        if (fabs(round(v * scale) / scale - v) <= 1e-9 * (fabs(v) > 1 ? fabs(v) : 1)) {
            snprintf(buf, cap, "%.*f", d, v);
            return buf;
        }
    }
    snprintf(buf, cap, "%.*f", fallback, v);
    return buf;
}

/* A probability: exact up to 4 decimals (0.008, 0.0625), else 2 significant
 * digits (0.66, 3.9e-11). */
const char *rlvr_plan_fmt_prob(char *buf, size_t cap, double p) {
    for (int d = 0; d <= 4; d++) {
        double scale = pow(10.0, d);
        if (fabs(round(p * scale) / scale - p) <= 1e-12) {
            snprintf(buf, cap, "%.*f", d, p);
            return buf;
        }
    }
    snprintf(buf, cap, "%#.2g", p);
    return buf;
}

/* A share as a percentage: exact up to 2 decimals, else 1 decimal. */
const char *rlvr_plan_fmt_pct(char *buf, size_t cap, double share) {
    return rlvr_plan_fmt_dec(buf, cap, share * 100.0, 2, 1);
}
