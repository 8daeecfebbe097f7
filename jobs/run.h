/* jobs/run.h — the command-line plumbing the training verbs share (sft,
 * train, quickstart, submit): their arguments, the exit status of a job
 * stopped by a signal, and a run opened with every section the `rlvr`
 * command knows. The runtime itself is train/run.h. */
#ifndef RLVR_JOBS_RUN_H
#define RLVR_JOBS_RUN_H

#include "train/run.h"

#include <stdbool.h>
#include <stdio.h>

/* Exit status of a job that stopped on a signal after writing its checkpoint
 * (resume with --resume, or let Slurm requeue it). */
#define RLVR_EXIT_STOPPED 3

/* rlvr_run_load with every module's keys (jobs/schemas.h). */
int rlvr_run_open(rlvr_run *r, const char *config_path, const char *out_dir);

/* True when Slurm requeued this job (SLURM_RESTART_COUNT > 0): resume. */
bool rlvr_slurm_restarted(void);

/* The command line of sft and train: CONFIG [--out DIR] [--resume]
 * [--until-step N] (--resume is implied when Slurm requeued the job;
 * --until-step ends this job after step N with a checkpoint and exit 0, a
 * segment of a chain, without changing the schedule, which still spans
 * [train] steps). 0 when complete, 1 for --help, -1 for a usage error. */
int rlvr_run_parse_args(rlvr_run_args *a, int argc, char **argv);
/* The same, printing `usage` for --help (to stdout) or a usage error (to
 * stderr): -1 when the job should go on, else the exit status to return. */
int rlvr_run_args_or_usage(rlvr_run_args *a, int argc, char **argv, void (*usage)(FILE *));

#endif
