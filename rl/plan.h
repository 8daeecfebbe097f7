/* rl/plan.h — the capacity planner behind `rlvr plan CONFIG`.
 *
 * From a run configuration plus assumed or measured rates and timings it
 * computes what a user should know before spending an allocation (docs/RL.md
 * "Worked examples"): pass@G coverage and the chance that a group carries no
 * signal, the largest advantage one success can get, the share of positive
 * rewards that are verifier false accepts, the consensus false-pass rate,
 * the token cost of Monte-Carlo turn credit, rollout throughput for cold vs
 * snapshot environment resets, synchronous vs bounded-async step time under
 * heavy-tailed rollout times, and the verifier capacity that keeps up with
 * generation. Every figure is computed here from the inputs; jobs/plan.c
 * only prints. */
#ifndef RLVR_RL_PLAN_H
#define RLVR_RL_PLAN_H

#include "rl/advantage.h"

#include <stddef.h>
#include <stdint.h>

#define RLVR_PLAN_MAX_GROUP_SIZES 8

typedef struct {
    /* [grpo] */
    int32_t group_size;        /* the configured G */
    int32_t groups_per_step;   /* informative groups per step */
    rlvr_advantage_kind advantage;
    double std_eps;
    /* [credit] */
    int32_t forks;             /* K */
    int32_t max_branch_points;
    /* [difficulty] */
    double group_target;
    int32_t max_group_size;
    /* [plan] */
    int32_t compare_group_sizes[RLVR_PLAN_MAX_GROUP_SIZES - 1];
    int32_t n_compare;
    double success_rate;       /* p of a typical task */
    double hard_success_rate;  /* p of a hard task */
    double true_success_rate;  /* for the false-positive share */
    double false_accept_rate;  /* share of failures a weak verifier accepts */
    double flaky_pass_rate;    /* chance a broken patch passes a flaky test */
    int32_t consensus_runs;    /* runs a passing patch must pass, the first included */
    int32_t mc_turns;          /* T of the MC credit trajectory */
    int64_t mc_tokens_per_turn;/* L */
    double value_before, value_after; /* V̂(s_t), V̂(s_{t+1}) of an example turn */
    int32_t environments;
    int32_t turns;             /* turns per rollout (throughput) */
    double model_s_per_turn, tool_s_per_turn, verify_s;
    double cold_reset_s, snapshot_reset_s;
    double rollout_time_sigma; /* lognormal shape of rollout times (heavy tail) */
    double train_step_s;
    int32_t tail_trials;       /* Monte-Carlo trials for the expected slowest rollout */
    uint64_t seed;
} rlvr_plan_inputs;

typedef struct {
    int32_t G;
    double pass_at_g;            /* 1 − (1 − p)^G */
    double zero_signal;          /* (1 − p)^G + p^G */
    double hard_no_success;      /* (1 − p_hard)^G: a hard task's group with no signal */
    double lone_winner_mean;     /* mean reward of a group with one success */
    double lone_winner_advantage;/* that success's advantage (√(G−1) for std with ε = 0) */
    double flaky_lucky_pass;     /* 1 − (1 − f)^G */
} rlvr_plan_group_row;

typedef struct {
    rlvr_plan_group_row groups[RLVR_PLAN_MAX_GROUP_SIZES];
    int32_t n_groups;
    int32_t hard_group_size;     /* group-size rule for the hard task */
    double hard_group_success;   /* 1 − (1 − p_hard)^that */

    /* false positives, in whole expected rollouts of one step */
    int64_t rollouts_per_step, true_positives, failures, false_positives;
    double false_positive_share; /* false / (true + false) */

    double consensus_false_pass; /* f^runs */

    rlvr_mc_cost mc_full;        /* K forks at every intermediate turn */
    double mc_selective_tokens;  /* expected, max_branch_points points */
    double mc_selective_ratio;
    double turn_advantage;       /* V̂(s_{t+1}) − V̂(s_t) */

    double useful_s;             /* turns·(model + tool) + verify */
    double cold_cycle_s, snapshot_cycle_s;
    double cold_useful, snapshot_useful;             /* useful / cycle */
    double cold_rollouts_per_h, snapshot_rollouts_per_h;
    double reset_speedup;        /* snapshot / cold throughput */

    double rollout_mean_s;       /* mean of the lognormal with median = snapshot cycle */
    double expected_wave_max_s;  /* E[slowest of one wave of `environments` rollouts] */
    int32_t waves;               /* ceil(rollouts per step / environments) */
    double sync_step_s;          /* Σ_waves E[max] + train */
    double async_step_s;         /* max(rollouts·mean / environments, train) */
    double async_speedup;

    double rollouts_per_s;       /* generation at snapshot reset */
    double enclave_runs_per_rollout; /* 1 + (runs − 1)·success_rate */
    double verifier_slots;       /* enclave slots busy to keep up */
} rlvr_plan_report;

/* Computes the report. RLVR_EINVAL for inputs out of range. */
int rlvr_rl_plan(rlvr_plan_report *out, const rlvr_plan_inputs *in);

/* The figures as `rlvr plan` prints them (docs/RL.md "Worked examples"):
 * each writes into buf (cap bytes) and returns buf.
 *   _int:  groups of three digits from five digits on: 8192, 15 360, 1 797 120
 *   _dec:  as few decimals (up to max_exact) as show v exactly, else rounded
 *          to `fallback` decimals: 56.25 stays 56.25, 99.667 becomes 99.7 (1, 1)
 *   _prob: a probability, exact up to 4 decimals (0.008, 0.0625), else 2
 *          significant digits (0.66, 3.9e-11)
 *   _pct:  a share as a percentage, exact up to 2 decimals, else 1 */
const char *rlvr_plan_fmt_int(char *buf, size_t cap, int64_t v);
const char *rlvr_plan_fmt_dec(char *buf, size_t cap, double v, int max_exact, int fallback);
const char *rlvr_plan_fmt_prob(char *buf, size_t cap, double p);
const char *rlvr_plan_fmt_pct(char *buf, size_t cap, double share);

#endif
