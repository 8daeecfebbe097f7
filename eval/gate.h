/* eval/gate.h — the release gate (docs/EVAL.md "Release gate"):
 * decides from evaluations of a baseline and a candidate checkpoint on the
 * same held-out tasks whether the candidate may be promoted.
 *
 * Three criteria, all of which must hold:
 *   target      the paired per-task pass@1 difference cand − base on the
 *               target split (optionally one family) with its percentile
 *               bootstrap interval [low, high] (rlvr_eval_compare):
 *               non-inferiority, low ≥ −tolerance. A negative tolerance
 *               demands an improvement of at least |tolerance|.
 *   regression  the same test with regression_tolerance for every family of
 *               every configured regression split (or each configured
 *               split:family); none configured with tasks: "no tasks", passes.
 *   compliance  the candidate's share of tool calls that parsed against their
 *               schema, pooled over every evaluated split, ≥ compliance_min
 *               (1 when it made no call).
 * A paired test with no task scored by both checkpoints fails (nothing was
 * measured). Comparisons allow RLVR_GATE_SLACK for rounding. */
#ifndef RLVR_EVAL_GATE_H
#define RLVR_EVAL_GATE_H

#include "core/config.h"
#include "eval/eval.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RLVR_GATE_FORMAT "rlvr-gate/1"

/* Rounding slack of every threshold comparison (a bootstrap end that is
 * −0.02 in exact arithmetic may come out as −0.0200000000000001). */
#define RLVR_GATE_SLACK 1e-12

#define RLVR_GATE_FAMILY_CAP 64
#define RLVR_GATE_MAX_CHECKS 16

/* [gate] (docs/CONFIG.md). */
extern const rlvr_config_key rlvr_gate_config_keys[];

/* One regression entry: every family of `split`, or only `family`. */
typedef struct {
    rlvr_split split;
    char family[RLVR_GATE_FAMILY_CAP]; /* "": every family of the split */
} rlvr_gate_check;

typedef struct {
    double tolerance;            /* target: low ≥ −tolerance (0.02) */
    double regression_tolerance; /* regression families: low ≥ −regression_tolerance (0.05) */
    double compliance_min;       /* candidate compliance ≥ this (1.0) */
    rlvr_split target_split;     /* RLVR_SPLIT_EVAL */
    char target_family[RLVR_GATE_FAMILY_CAP]; /* "": every family of the target split */
    rlvr_gate_check checks[RLVR_GATE_MAX_CHECKS]; /* default: {regression, every family} */
    size_t n_checks;
    double confidence;           /* of the paired intervals (0.95) */
    int32_t resamples;           /* bootstrap resamples (2000) */
    /* how the job evaluates (not used by rlvr_gate_decide) */
    int32_t samples;             /* rollouts per task (4) */
    uint64_t seed;               /* sampling seed (1) */
    int64_t limit;               /* first N tasks of each split, 0: all */
} rlvr_gate_options;

void rlvr_gate_options_default(rlvr_gate_options *o);

/* Reads [gate] from a configuration loaded with rlvr_gate_config_keys:
 * tolerance, regression_tolerance, compliance_min, samples, seed, limit,
 * splits. RLVR_ECONFIG naming the key for a bad `splits`. */
int rlvr_gate_options_from_config(rlvr_gate_options *o, const rlvr_config *cfg);

/* Parses a regression list "regression,eval:arith" (entries SPLIT or
 * SPLIT:FAMILY, comma separated, blanks ignored) into o->checks.
 * RLVR_EINVAL naming the bad entry. */
int rlvr_gate_parse_checks(rlvr_gate_options *o, const char *text);

/* The evaluations of one split: NULL both when the pool has no usable task
 * of the split. base and cand must hold the same tasks. */
typedef struct {
    rlvr_split split;
    const rlvr_eval_result *base, *cand;
} rlvr_gate_split;

/* One paired test. Values are NAN when no task was scored by both. */
typedef struct {
    rlvr_split split;
    char family[RLVR_GATE_FAMILY_CAP]; /* "all" for a whole split */
    int32_t n_tasks, unpaired;
    double base_pass1, cand_pass1, mean_diff, low, high;
    double tolerance;
    bool passed;
} rlvr_gate_test;

typedef struct {
    bool passed;                 /* all three criteria */
    rlvr_gate_test target;
    double regression_tolerance;
    rlvr_gate_test *regression;  /* (n_regression) in the order of the checks, families by name */
    size_t n_regression;
    bool regression_passed, regression_no_tasks;
    double compliance, compliance_min;
    int64_t calls, calls_parsed; /* the candidate's, over every split given */
    bool compliance_passed;
    /* identity, filled by the caller for the JSON */
    const char *candidate, *baseline;
    int64_t candidate_step, candidate_version; /* −1: unknown */
    double time_unix;
} rlvr_gate_report;

/* Decides. `splits` holds the target split (with tasks: RLVR_EINVAL
 * otherwise) and every split a check names (a split without tasks passes as
 * "no tasks"; a named family absent from its split is RLVR_EINVAL). *out is
 * malloc'd; free with rlvr_gate_report_free. */
int rlvr_gate_decide(rlvr_gate_report **out, const rlvr_gate_options *o, const rlvr_gate_split *splits,
                     size_t n_splits);

void rlvr_gate_report_free(rlvr_gate_report *r);

/* "target", "regression", "compliance" of the failed criteria, joined by
 * ", " into buf ("" when the gate passed). */
void rlvr_gate_failed_criteria(const rlvr_gate_report *r, char *buf, size_t cap);

/* The report as JSON (format RLVR_GATE_FORMAT, docs/EVAL.md) with both
 * checkpoints' evaluations of every split embedded ("baseline_eval",
 * "candidate_eval": split name → rlvr-eval/1 result, null without tasks).
 * *out is malloc'd. */
int rlvr_gate_report_to_json(const rlvr_gate_report *r, const rlvr_gate_options *o, const rlvr_gate_split *splits,
                             size_t n_splits, int indent, char **out);

#endif
