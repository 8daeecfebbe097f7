/* io/metrics.h — the per-step metrics table of a run (metrics.h5).
 *
 * One row per training step: an int64 `step` column and one float64 column
 * per metric below, each a 1-D dataset under /steps. A value a step did not
 * measure is NaN. The leader appends a row at the end of every step.
 *
 * Adding a column: add an enum entry before RLVR_METRIC_COUNT, a line in
 * the table in io/metrics.c, and a row in docs/FORMATS.md ("Metrics").
 * Files written before keep working: a missing column reads as NaN, and a
 * resumed run rewrites the file with every current column.
 *
 * Visibility: SWMR (single writer, multiple readers). The writer keeps the
 * file open for the whole run and flushes each row, so readers see a
 * consistent table at every moment and a killed writer leaves a readable
 * file. Readers must open it in SWMR-read mode while the run goes (rlvr
 * inspect and rlvr_metrics_read do; h5py: File(p, "r", libver="latest",
 * swmr=True)); once the writer has closed it, any HDF5 tool reads it. After
 * a crash, plain tools need `h5clear -s metrics.h5` (rlvr reads it as is). */
#ifndef RLVR_IO_METRICS_H
#define RLVR_IO_METRICS_H

#include <stdint.h>

#define RLVR_METRICS_FORMAT_VERSION 1

typedef enum {
    RLVR_METRIC_TIME_UNIX = 0,     /* wall clock at the end of the step, seconds since 1970 */
    RLVR_METRIC_STEP_TIME_S,       /* duration of the step */
    RLVR_METRIC_POLICY_VERSION,    /* trainer's policy version after the step */
    RLVR_METRIC_ROLLOUTS,          /* rollouts that entered the loss */
    RLVR_METRIC_GROUPS,            /* groups that entered the loss */
    RLVR_METRIC_GROUPS_ZERO_VAR,   /* groups dropped because all rewards were equal */
    RLVR_METRIC_REWARD_MEAN,       /* mean total reward of the step's rollouts */
    RLVR_METRIC_REWARD_STD,
    RLVR_METRIC_PASS_RATE,         /* share of verdicts "pass" */
    RLVR_METRIC_FORMAT_MEAN,       /* mean R_format */
    RLVR_METRIC_LENGTH_PENALTY,    /* mean subtracted length term */
    RLVR_METRIC_POLICY_TOKENS,     /* mean policy tokens per rollout (|τ_gen|) */
    RLVR_METRIC_TRUNCATED,         /* share of rollouts stopped by a budget */
    RLVR_METRIC_INFRA_ERRORS,      /* rollouts excluded as infra errors */
    RLVR_METRIC_STALENESS_MEAN,    /* mean v_trainer − v_rollout of admitted rollouts */
    RLVR_METRIC_STALENESS_DROPPED, /* rollouts refused for staleness */
    RLVR_METRIC_LOSS,              /* surrogate loss */
    RLVR_METRIC_KL,                /* mean k3 KL to the reference policy */
    RLVR_METRIC_ENTROPY,           /* mean entropy of policy tokens */
    RLVR_METRIC_ENTROPY_COEF,      /* entropy controller's α */
    RLVR_METRIC_CLIP_FRACTION,     /* share of policy tokens whose ratio was clipped */
    RLVR_METRIC_GRAD_NORM,         /* pre-clip global gradient norm */
    RLVR_METRIC_LR,                /* learning rate used */
    RLVR_METRIC_GENERATE_S,        /* summed generation time of the step's rollouts */
    RLVR_METRIC_TOOL_S,
    RLVR_METRIC_VERIFY_S,
    RLVR_METRIC_QUEUE_S,
    RLVR_METRIC_TRAIN_S,           /* forward + backward + optimizer time */
    RLVR_METRIC_TOKENS_PER_S,      /* generated tokens per second of the step */
    RLVR_METRIC_REPETITION_STOPS,  /* rollouts ended by the n-gram repetition detector */
    RLVR_METRIC_LOGPROB_DIFF_MAX,  /* max |sampler − trainer log-prob| over the batch's policy tokens */
    RLVR_METRIC_ROLLOUTS_PER_S,    /* rollouts finished per second of the step's wall time */
    RLVR_METRIC_IDLE_S,            /* step wall time not spent generating, verifying or training */
    RLVR_METRIC_DRAW_ROUNDS,       /* dynamic-sampling rounds the step needed */
    RLVR_METRIC_MALFORMED_STOPS,   /* rollouts ended by [harness] max_malformed_calls */
    RLVR_METRIC_MC_BRANCH_POINTS,  /* Monte-Carlo credit: branch points valued (with a scored fork) */
    RLVR_METRIC_MC_FORKS,          /* fork rollouts run */
    RLVR_METRIC_MC_FORK_TOKEN_RATIO, /* tokens the forks generated / policy tokens of the trained rollouts */
    RLVR_METRIC_MC_VALUE_STD,      /* standard deviation of V̂ over the step's branch points */
    RLVR_METRIC_MC_NONZERO_TURNS,  /* share of the trained rollouts' turns with Â ≠ 0 */
    RLVR_METRIC_MC_FORK_S,         /* wall seconds of forking: runs, verification and scoring of the forks */
    RLVR_METRIC_ADVANTAGE_TOKEN_STD, /* standard deviation of the advantage over the trained policy tokens */
    RLVR_METRIC_LOGPROB_DIFF_MEAN, /* mean |sampler − trainer log-prob| over the batch's policy tokens */
    RLVR_METRIC_IS_CAPPED,         /* share of policy tokens whose importance weight reached [grpo] is_cap */
    RLVR_METRIC_COUNT
} rlvr_metric;

/* Column name ("reward_mean") and one-line meaning; NULL out of range. */
const char *rlvr_metric_name(rlvr_metric m);
const char *rlvr_metric_doc(rlvr_metric m);
/* The metric called `name`, or -1. */
int rlvr_metric_find(const char *name);

typedef struct {
    int64_t step;
    double value[RLVR_METRIC_COUNT];
} rlvr_metrics_row;

/* Sets the step and every value to NaN (not measured). */
void rlvr_metrics_row_init(rlvr_metrics_row *row, int64_t step);

typedef struct rlvr_metrics rlvr_metrics;

/* Opens the run's metrics file for appending. A new file is created; an
 * existing one (also one a killed writer left) keeps its rows with
 * step <= keep_through_step — a run resumed from the checkpoint of step S
 * passes S, a fresh run -1 — and is rewritten with the current columns
 * before appending starts. */
int rlvr_metrics_open(rlvr_metrics **out, const char *path, int64_t keep_through_step);

/* Appends one row; steps must increase (RLVR_EINVAL otherwise). The row is
 * on disk and visible to SWMR readers when this returns. */
int rlvr_metrics_append(rlvr_metrics *m, const rlvr_metrics_row *row);

int64_t rlvr_metrics_rows(const rlvr_metrics *m);

/* Closes the file (readable by any tool afterwards). NULL is a no-op. */
int rlvr_metrics_close(rlvr_metrics *m);

/* The whole table, read in SWMR mode (works while a run appends). */
typedef struct {
    int64_t n_rows;
    int64_t *step;                        /* (n_rows) */
    double *value[RLVR_METRIC_COUNT];     /* (n_rows) each; NULL when the file lacks the column */
} rlvr_metrics_table;

int rlvr_metrics_read(rlvr_metrics_table *t, const char *path);
void rlvr_metrics_table_free(rlvr_metrics_table *t);

/* One column of a table over the rows where it was measured (not NaN):
 * how many, the last value, the least and the greatest (NaN, +inf, -inf
 * when none; a column the file lacks has none). */
typedef struct {
    int64_t measured;
    double last, min, max;
} rlvr_metric_stats;

void rlvr_metrics_column_stats(const rlvr_metrics_table *t, rlvr_metric m, rlvr_metric_stats *out);

#endif
