/* eval/gate_run.h — one run of the release gate (`rlvr gate`, docs/EVAL.md
 * "Release gate"): load the candidate and the baseline, evaluate both with
 * the same seeds on the held-out splits the reward never saw, decide the
 * three criteria (eval/gate.h), write the report (JSON and HDF5,
 * io/gate_report.h) and, with a run directory to promote into, mark a
 * passing candidate in RUNDIR/promoted.
 *
 *     rlvr_gate_run *g = NULL;
 *     int rc = rlvr_gate_run_load(&g, &spec);
 *     if (rc == 0) rc = rlvr_gate_run_evaluate(g);
 *     if (rc == 0) rc = rlvr_gate_run_decide(g);
 *     if (rc == 0) rc = rlvr_gate_run_publish(g);
 *     ... g->report->passed, g->json ...
 *     rlvr_gate_run_free(g);
 *
 * Module rlvr_evalrun (eval/evaljob.h). */
#ifndef RLVR_EVAL_GATE_RUN_H
#define RLVR_EVAL_GATE_RUN_H

#include "eval/evaljob.h"
#include "eval/gate.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

/* What `rlvr gate` is asked; unset values fall back to [gate] of the
 * configuration, then to the defaults (rlvr_gate_options_default). */
typedef struct {
    const char *candidate, *baseline; /* checkpoints; required */
    const char *pool;       /* NULL: [tasks] pool of the configuration, else PROMOTE/pool */
    const char *manifest;   /* NULL: POOL.manifest.json */
    const char *config;     /* NULL: the configuration stored in the candidate */
    const char *promote;    /* a run directory: reports go to PROMOTE/gate/, a pass to PROMOTE/promoted */
    const char *report;     /* a prefix: PREFIX.json and PREFIX.h5 */
    const char *family;     /* target: this family only */
    const char *regression; /* "SPLIT[:FAMILY],..." ("" : no regression check) */
    bool target_split_set;
    rlvr_split target_split;
    double tolerance, regression_tolerance, compliance; /* NAN: not given */
    int64_t samples, limit, seed, kv_slots;              /* -1: not given */
    const rlvr_config_key *const *schemas;               /* every key table a run's configuration may use */
    rlvr_evaljob_hooks hooks;
} rlvr_gate_run_spec;

/* One gate run; the caller reads it and frees it with rlvr_gate_run_free. */
typedef struct {
    rlvr_gate_run_spec spec;
    rlvr_config *cfg;
    rlvr_tokenizer *cand_tok, *base_tok; /* each checkpoint's own */
    rlvr_model *cand_model, *base_model;
    rlvr_checkpoint_info cand_info, base_info;
    char candidate[PATH_MAX], baseline[PATH_MAX]; /* absolute when they resolve */
    char pool_path[PATH_MAX];
    rlvr_task_pool *pool;
    rlvr_pool_manifest *manifest;
    rlvr_gate_options opt;
    rlvr_gate_split splits[RLVR_SPLIT_COUNT];
    rlvr_eval_result *results[RLVR_SPLIT_COUNT][2]; /* [split][0 baseline, 1 candidate]; NULL: no tasks */
    size_t n_splits;
    rlvr_gate_report *report; /* after rlvr_gate_run_decide */
    char *json;               /* the report as JSON, after rlvr_gate_run_decide */
} rlvr_gate_run;

/* Loads the configuration, both checkpoints, the options ([gate], then the
 * spec over them) and the pool with its manifest. *out is set on success. */
int rlvr_gate_run_load(rlvr_gate_run **out, const rlvr_gate_run_spec *spec);
/* Refuses a target or named regression family the pool has no task of,
 * then evaluates both checkpoints on every split the criteria need. */
int rlvr_gate_run_evaluate(rlvr_gate_run *g);
/* Decides from g->splits (rlvr_gate_decide), fills the report's names,
 * candidate step and time, and renders g->json. */
int rlvr_gate_run_decide(rlvr_gate_run *g);
/* Writes the reports (spec.report; with spec.promote also
 * PROMOTE/gate/<candidate file name without .h5>.json and .h5) and, when the
 * candidate passed, marks it kept (step_N.h5.keep, when it is a run's
 * checkpoint under its own name) and names it in PROMOTE/promoted. */
int rlvr_gate_run_publish(rlvr_gate_run *g);
/* Writes PREFIX.json and PREFIX.h5. */
int rlvr_gate_run_write_reports(const rlvr_gate_run *g, const char *prefix);
void rlvr_gate_run_free(rlvr_gate_run *g);

#endif
