/* slurm/chain.h — a run as a chain of Slurm jobs: `rlvr submit`, `rlvr
 * status`, `rlvr cancel` (docs/OPERATIONS.md "Slurm chains").
 *
 * A chain is SFT → RL segment 1 → … → segment S, with a gate after each
 * segment ([slurm] gate). Part names: "sft", "train<k>", "gate<k>". Every job
 * depends `afterany` on its predecessor and checks the predecessor's
 * completion marker when it starts: a job that requeues itself after a
 * checkpoint (exit 3) keeps its dependents waiting, because Slurm never sees
 * it end until the final attempt, and a failed predecessor stops the chain at
 * its successor with a `.blocked` note instead of a dependency that can never
 * be satisfied again (afterok's semantics).
 *
 * Files in the run directory:
 *   config.ini                 the configuration every job reads (a copy)
 *   slurm/<part>.sbatch        the rendered batch scripts
 *   chain/jobs.tsv             part, job id, script (one line each)
 *   chain/<part>.done          finished (a gate's line starts with its
 *                              verdict: "pass" or "reject")
 *   chain/<part>.blocked       did not run because a predecessor did not finish
 *   chain/logs/<part>-<id>.log the job's output (appended across requeues)
 *
 * Functions return 0 or a negative RLVR_E* code with a message; nothing here
 * prints or exits (a dry run's sbatch command line is each part's `command`). */
#ifndef RLVR_SLURM_CHAIN_H
#define RLVR_SLURM_CHAIN_H

#include "core/config.h"
#include "slurm/config.h"
#include "slurm/sbatch.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- the plan ------------------------------------------------------------ */

typedef enum { RLVR_CHAIN_SFT, RLVR_CHAIN_TRAIN, RLVR_CHAIN_GATE } rlvr_chain_kind;

typedef struct {
    rlvr_chain_kind kind;
    char name[32];
    int64_t stop_step; /* train: its last step; gate: its candidate's step */
    int requires;      /* part whose .done must exist before it runs (−1: none) */
    int after;         /* another part it only waits for (a gate waits for the previous gate; −1: none) */
    bool finished;     /* its .done exists: not submitted again (set by rlvr_chain_submit) */
    char id[32];       /* Slurm job id ("-" when finished before) */
    char *command;     /* a dry run's sbatch command line (malloc'ed, freed with the chain), else NULL */
    char script[PATH_MAX + 64];
} rlvr_chain_part;

/* A chain: its plan (rlvr_chain_plan), then where it lives
 * (rlvr_chain_setup). Free with rlvr_chain_free. */
typedef struct {
    rlvr_slurm_config slurm;
    int64_t steps;          /* [train] steps */
    bool sft;               /* [train] init = sft: the chain starts with SFT */
    int64_t ntasks;         /* ranks of an RL segment */
    char run_dir[PATH_MAX]; /* absolute */
    char chain_dir[PATH_MAX + 16];
    char cwd[PATH_MAX];
    char rlvr_exe[PATH_MAX];
    char config_copy[PATH_MAX + 16];
    char pool[PATH_MAX + 16];
    rlvr_chain_part *parts; /* owned */
    int n_parts;
} rlvr_chain;

/* Reads [slurm] and [layout] of `cfg` (which must outlive *c) and plans the
 * parts for a run of `steps` steps whose [train] init is `init`: their order,
 * dependencies and segment boundaries ⌊steps·k/segments⌋. Checks that the
 * ranks of [slurm] match [layout] and that the gates have a baseline
 * (RLVR_ECONFIG naming the key). Touches no file. */
int rlvr_chain_plan(rlvr_chain *c, const rlvr_config *cfg, int64_t steps, const char *init);

/* Creates run_dir, <run_dir>/chain/logs and <run_dir>/slurm and records the
 * absolute paths the scripts name. pool: the run's [tasks] pool (NULL or "":
 * <run_dir>/pool); cwd: the jobs' working directory (NULL: this process's);
 * rlvr_exe: the rlvr the jobs run (NULL: this executable). White space in
 * the run or working directory is RLVR_EINVAL (#SBATCH lines cannot quote). */
int rlvr_chain_setup(rlvr_chain *c, const char *run_dir, const char *pool, const char *cwd, const char *rlvr_exe);

/* RLVR_ESTATE naming the live parts while a job of the run's previous chain
 * is queued or running. With dry_run, squeue missing is no error: *unchecked
 * becomes true instead. */
int rlvr_chain_check_idle(const rlvr_chain *c, bool dry_run, bool *unchecked);

/* Copies config_path to <run>/config.ini, the configuration the jobs read, so
 * that later edits of the original do not change a running chain.
 * *replaced: an earlier, different copy was replaced. */
int rlvr_chain_copy_config(rlvr_chain *c, const char *config_path, bool *replaced);

/* The shell functions every script sources (slurm/chain-lib.sh.in), and
 * part i's batch script rendered from its template (chain-sft, chain-train,
 * chain-gate .sbatch.in) with its #SBATCH lines and paths. *out is malloc'ed
 * (free it). */
int rlvr_chain_render_lib(char **out);
int rlvr_chain_render(const rlvr_chain *c, int i, const char *lib, char **out);

/* Called by rlvr_chain_submit after each part: done_marker is the part's
 * .done file when it finished before and was skipped, else NULL (submitted,
 * part->id set). */
typedef void (*rlvr_chain_on_part)(const rlvr_chain *c, const rlvr_chain_part *part, const char *done_marker,
                                   void *arg);

/* Writes the scripts of the parts not finished yet and submits them in
 * order, each `afterany` on the parts it waits for that were submitted now
 * (rlvr_sbatch_submit; dry_run: nothing submitted, no jobs.tsv). Without
 * dry_run, chain/jobs.tsv is rewritten after every submission, so a failure
 * leaves no job unrecorded. *submitted counts the parts submitted. */
int rlvr_chain_submit(rlvr_chain *c, bool dry_run, rlvr_chain_on_part on_part, void *arg, int *submitted);

void rlvr_chain_free(rlvr_chain *c);

/* ---- the chain as it runs ---------------------------------------------------- */

/* One line of chain/jobs.tsv. */
typedef struct {
    char part[32];
    char id[32]; /* "-" for a part finished before the chain was (re)submitted */
    char script[4200];
} rlvr_chain_job;

/* Reads <run_dir>/chain/jobs.tsv into a malloc'ed array (free it).
 * RLVR_ENOTFOUND when the run has no chain. */
int rlvr_chain_read_jobs(const char *run_dir, rlvr_chain_job **jobs, size_t *n);

/* "<run_dir>/chain/<part>.<suffix>" (RLVR_ELIMIT when longer than cap). */
int rlvr_chain_marker_path(char *out, size_t cap, const char *run_dir, const char *part, const char *suffix);

/* The chain's jobs and what Slurm says of them (states[i] for the i-th
 * submitted id); states_ok false when squeue is not on PATH. */
typedef struct {
    rlvr_chain_job *jobs;
    size_t n;
    rlvr_sbatch_job *states;
    size_t n_states;
    bool states_ok;
} rlvr_chain_view;

/* Reads the jobs and asks Slurm (rlvr_sbatch_query). Free with
 * rlvr_chain_view_free, also after an error. */
int rlvr_chain_view_load(const char *run_dir, rlvr_chain_view *v);
void rlvr_chain_view_free(rlvr_chain_view *v);

/* One part's line of `rlvr status`. */
typedef struct {
    char state[160];    /* "RUNNING", "PENDING (Dependency)", "?" (Slurm knows nothing), "-" (no job) */
    char exit_code[16]; /* "" when unknown */
    char end[32];       /* "" while live or when unknown */
    char marker[1200];  /* "done", "pass", "reject", "blocked: <why>" or "-" */
} rlvr_chain_row;

/* job's line from the Slurm states and its markers in <run_dir>/chain. */
void rlvr_chain_row_of(const char *run_dir, const rlvr_chain_job *job, const rlvr_sbatch_job *states, size_t n_states,
                       rlvr_chain_row *row);

/* What the run has produced so far. */
typedef struct {
    char checkpoint[PATH_MAX + 64]; /* the latest RL checkpoint, else SFT's; "" none */
    bool checkpoint_sft;
    char promoted[PATH_MAX];         /* <run>/promoted's line; "" none */
    char metrics_file[32];           /* "metrics.h5" or "sft/metrics.h5"; "" none with rows */
    char metrics_error[PATH_MAX + 2048]; /* "<path> unreadable: <why>" (metrics_file "") */
    int64_t step;                    /* the last metrics row's step */
    size_t n_values;                 /* the row's columns among a few shown, in order */
    const char *names[8];
    double values[8];
} rlvr_chain_results;

/* Reads checkpoints/, sft/checkpoints/, promoted and the metrics of
 * run_dir. Missing files are no error. */
void rlvr_chain_results_read(const char *run_dir, rlvr_chain_results *r);

/* `scancel` of the view's live jobs; names gets "part (id, state), ..." of
 * them ("" none). RLVR_ENOTFOUND when the view has no states (squeue
 * missing). */
int rlvr_chain_cancel(const rlvr_chain_view *v, char *names, size_t cap);

#endif
