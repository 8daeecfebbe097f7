/* jobs/chain.h — Slurm job chains of a run: `rlvr submit`, `rlvr status`,
 * `rlvr cancel` (jobs/submit.c, jobs/chain_status.c; docs/OPERATIONS.md
 * "Slurm chains").
 *
 * A chain is SFT → RL segment 1 → … → segment S, with a gate after each
 * segment ([slurm] gate). Part names: "sft", "train<k>", "gate<k>". Files in
 * the run directory:
 *   config.ini                 the configuration every job reads (a copy)
 *   slurm/<part>.sbatch        the rendered batch scripts
 *   chain/jobs.tsv             part, job id, script (one line each)
 *   chain/<part>.done          finished (a gate's line starts with its
 *                              verdict: "pass" or "reject")
 *   chain/<part>.blocked       did not run because a predecessor did not finish
 *   chain/logs/<part>-<id>.log the job's output (appended across requeues) */
#ifndef RLVR_JOBS_CHAIN_H
#define RLVR_JOBS_CHAIN_H

#include "core/config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Schema table of [slurm]. */
extern const rlvr_config_key rlvr_slurm_config_keys[];

/* [slurm], read and checked (strings live as long as the config). */
typedef struct {
    const char *partition, *account, *qos, *time, *mem, *extra; /* "" = Slurm's default / none */
    int64_t nodes, ntasks_per_node, cpus_per_task, gpus_per_node; /* 0 = not requested */
    int64_t segments, grace_s, max_requeues;
    const char *launcher; /* "srun" or "none" */
    const char *baseline; /* "sft", "promoted" or a checkpoint path */
    bool gate;
} rlvr_slurm_config;

int rlvr_slurm_config_read(rlvr_slurm_config *s, const rlvr_config *cfg);

/* One line of chain/jobs.tsv. */
typedef struct {
    char part[32];
    char id[32];    /* "-" for a part finished before the chain was (re)submitted */
    char script[4200];
} rlvr_chain_job;

/* Reads <run_dir>/chain/jobs.tsv into a malloc'ed array (free it).
 * RLVR_ENOTFOUND when the run has no chain. */
int rlvr_chain_read_jobs(const char *run_dir, rlvr_chain_job **jobs, size_t *n);

/* The comma-separated Slurm ids of `jobs` (parts without an id skipped). */
void rlvr_chain_ids_csv(const rlvr_chain_job *jobs, size_t n, char *csv, size_t cap);

/* "<run_dir>/chain/<part>.<suffix>" */
int rlvr_chain_marker_path(char *out, size_t cap, const char *run_dir, const char *part, const char *suffix);

/* First line of a small text file into out ("" when missing): 1 when the
 * file exists, 0 when not. */
int rlvr_chain_read_line(const char *path, char *out, size_t cap);

#endif
