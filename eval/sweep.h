/* eval/sweep.h — evaluation sweeps (`rlvr sweep`, docs/EVAL.md "Sweeps"):
 * many checkpoints on the held-out tasks of a pool, split into cells
 * (checkpoint × task shard) that run as a Slurm job array or one after
 * another here, and an aggregation that merges each checkpoint's shards into
 * one result and writes pass@k per checkpoint and family (DIR/sweep.h5,
 * DIR/sweep.csv).
 *
 * The sweep directory DIR holds the plan (sweep.json, format rlvr-sweep/1),
 * one evaluation store per cell (cells/ckpt<i>_shard<j>.h5, io/evalstore.h),
 * the batch scripts (slurm/), the jobs submitted (jobs.tsv) and their logs.
 * Cell index = i·shards + j. Shards are contiguous ranges of the split's
 * tasks in pool order, and every task samples with its pool position as key
 * (rlvr_eval_tasks_from_pool), so the merged shards are exactly one `rlvr
 * eval` of the whole split: the same counts in the same order, hence the
 * same bootstrap intervals.
 *
 * Module rlvr_evalrun (eval/evaljob.h). Nothing here prints; what a sweep
 * says goes to the hooks' note. */
#ifndef RLVR_EVAL_SWEEP_H
#define RLVR_EVAL_SWEEP_H

#include "core/config.h"
#include "eval/evaljob.h"
#include "io/evalstore.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RLVR_SWEEP_FORMAT "rlvr-sweep/1"
#define RLVR_SWEEP_CSV_HEADER "checkpoint,step,family,n_tasks,samples,k,pass_at_k,low,high"

typedef struct {
    char path[PATH_MAX]; /* absolute */
    int64_t step;
} rlvr_sweep_checkpoint;

typedef struct {
    size_t first, count; /* tasks [first, first + count) of the split */
} rlvr_sweep_shard;

/* The plan (DIR/sweep.json). Free with rlvr_sweep_plan_free. */
typedef struct {
    char pool[PATH_MAX];
    char config[PATH_MAX]; /* "" : each checkpoint's stored configuration */
    char split[16];        /* "eval", "train", "regression" or "all" */
    int64_t samples;
    uint64_t seed;
    size_t n_tasks;        /* tasks of the split that the manifest marks usable */
    rlvr_sweep_checkpoint *ckpts; /* sorted by step, then path */
    size_t n_ckpts;
    rlvr_sweep_shard *shards;
    size_t n_shards;
} rlvr_sweep_plan;

/* What `rlvr sweep` is asked to sweep. */
typedef struct {
    const char *checkpoints; /* a glob, e.g. RUN/checkpoints/step_*.h5 */
    const char *pool;        /* a checked pool (its manifest is required) */
    const char *config;      /* NULL: each checkpoint's stored configuration */
    const char *split;       /* "eval", "train", "regression" or "all" */
    int64_t samples, shards; /* both >= 1 */
    uint64_t seed;
} rlvr_sweep_spec;

/* Plans a sweep: every file the glob matches opened as a checkpoint for its
 * step (a file that is not one is refused, naming it), the split's usable
 * tasks counted, S contiguous shards (shard j holds [j·T/S, (j+1)·T/S)).
 * On error the plan is left empty. */
int rlvr_sweep_plan_make(rlvr_sweep_plan *p, const rlvr_sweep_spec *spec);
/* Writes DIR/sweep.json (atomically). */
int rlvr_sweep_plan_write(const rlvr_sweep_plan *p, const char *dir);
/* Reads DIR/sweep.json; a missing or malformed one is refused naming the
 * file and the field (RLVR_ENOTFOUND, RLVR_EFORMAT). */
int rlvr_sweep_plan_read(rlvr_sweep_plan *p, const char *dir);
void rlvr_sweep_plan_free(rlvr_sweep_plan *p);

/* n_ckpts · n_shards. */
size_t rlvr_sweep_cells(const rlvr_sweep_plan *p);
/* DIR/cells/ckpt<i>_shard<j>.h5 of cell i·shards + j. */
void rlvr_sweep_cell_path(char *buf, size_t cap, const char *dir, const rlvr_sweep_plan *p, size_t cell);
/* The default sweep directory: RUN/sweep for checkpoints in RUN/checkpoints,
 * else a "sweep" folder beside the first checkpoint. */
void rlvr_sweep_default_dir(char *buf, size_t cap, const char *first_checkpoint);
/* The sweep directory: `out`, or NULL for the default one; created with its
 * parents, its absolute path in dir (PATH_MAX bytes). */
int rlvr_sweep_dir(char *dir, const rlvr_sweep_plan *p, const char *out);

/* Why cell `cell`'s file is not a finished cell of the plan: "" when it is,
 * "missing", "unreadable: ...", "of another checkpoint/shard/settings ...". */
void rlvr_sweep_cell_check(const rlvr_sweep_plan *p, const char *dir, size_t cell, char *why, size_t cap);

/* The cells still to run, ascending (*missing malloc'ed, free it). A note
 * says why each file that is there does not count, and how many finished
 * cells are skipped. */
int rlvr_sweep_find_missing(const rlvr_sweep_plan *p, const char *dir, size_t **missing, size_t *n_missing,
                            const rlvr_evaljob_hooks *hooks);

/* Evaluates cells one at a time, loading the pool once and each checkpoint
 * once for its consecutive cells, each cell into its file. */
typedef struct rlvr_sweep_runner rlvr_sweep_runner;
int rlvr_sweep_runner_open(rlvr_sweep_runner **out, const rlvr_sweep_plan *p, const char *dir,
                           const rlvr_config_key *const *schemas, const rlvr_evaljob_hooks *hooks);
/* Notes the cell (nth of `of`), evaluates it and writes its file. */
int rlvr_sweep_runner_run(rlvr_sweep_runner *r, size_t cell, size_t nth, size_t of);
void rlvr_sweep_runner_free(rlvr_sweep_runner *r);

/* `rlvr sweep --local` after planning: runs `missing` here, in order. */
int rlvr_sweep_run_cells(const rlvr_sweep_plan *p, const char *dir, const size_t *missing, size_t n_missing,
                         const rlvr_config_key *const *schemas, const rlvr_evaljob_hooks *hooks);

/* `rlvr sweep cell DIR INDEX`: one cell, unless its file is finished
 * already. A cell index out of the plan is refused (RLVR_EINVAL). */
int rlvr_sweep_run_cell(const char *dir, int64_t index, const rlvr_config_key *const *schemas,
                        const rlvr_evaljob_hooks *hooks);

/* ---- aggregation ------------------------------------------------------------------------ */

/* Each checkpoint's shards merged, in plan order. */
typedef struct {
    rlvr_eval_result **results;
    rlvr_evalstore_label *labels; /* shard and n_shards -1: whole split */
    size_t n;
} rlvr_sweep_table;

/* Reads and merges every cell; a cell that is not finished is refused
 * naming its file and what to do. *t is freed on error. */
int rlvr_sweep_merge(const rlvr_sweep_plan *p, const char *dir, rlvr_sweep_table *t);
/* The CSV: RLVR_SWEEP_CSV_HEADER, then one row per checkpoint × family × k
 * (pass@k; pass^k is in sweep.h5). Malloc'ed. */
int rlvr_sweep_table_csv(const rlvr_sweep_table *t, char **out);
/* Merges (rlvr_sweep_merge) and writes DIR/sweep.h5 and DIR/sweep.csv; *t
 * holds the table for printing (free it with rlvr_sweep_table_free). */
int rlvr_sweep_aggregate(const rlvr_sweep_plan *p, const char *dir, rlvr_sweep_table *t);
void rlvr_sweep_table_free(rlvr_sweep_table *t);
/* `rlvr sweep aggregate PATH`: reads PATH's plan into *p (free it), its
 * absolute path into dir (PATH_MAX bytes), and aggregates into *t. */
int rlvr_sweep_aggregate_dir(const char *path, rlvr_sweep_plan *p, char *dir, rlvr_sweep_table *t);

/* ---- Slurm ------------------------------------------------------------------------------ */

typedef struct {
    int64_t max_parallel; /* array tasks at once (--array=...%T) */
    int64_t cpus;         /* CPUs per array task */
    bool dry_run;         /* print the sbatch commands, submit nothing (slurm/sbatch.h) */
    const char *exe;      /* the rlvr the scripts run; NULL: this process's executable */
} rlvr_sweep_submit_options;

/* "0-3,7,9-11%T" of the ascending cell indices; RLVR_ELIMIT when it does
 * not fit in cap. */
int rlvr_sweep_array_spec(char *buf, size_t cap, const size_t *cells, size_t n, int64_t max_parallel);
/* rlvr-sweep-<8 hex digits of the directory's FNV-1a>-<what>: a name the
 * sweep's jobs share and other sweeps' do not. */
void rlvr_sweep_job_name(char *buf, size_t cap, const char *dir, const char *what);
/* The batch script (slurm/sweep-<what>.sbatch.in, what "cell" or
 * "aggregate") for DIR, with @RLVR@ (exe, shell-quoted), @SWEEP@ (dir,
 * shell-quoted), @JOB_NAME@ and @CPUS@ replaced. Malloc'ed. */
int rlvr_sweep_render_script(const char *what, const char *dir, const char *exe, int64_t cpus, char **out);

/* Writes DIR/slurm/sweep-cell.sbatch and sweep-aggregate.sbatch and submits
 * the missing cells as one array job (when any) and the aggregation after
 * it (afterok); records each job in DIR/jobs.tsv (not on a dry run). Notes
 * each job as it is submitted: `rlvr sweep` prints them on stdout, where a
 * dry run prints its sbatch command lines. */
int rlvr_sweep_submit(const rlvr_sweep_plan *p, const char *dir, const size_t *missing, size_t n_missing,
                      const rlvr_sweep_submit_options *o, const rlvr_evaljob_hooks *hooks);

#endif
