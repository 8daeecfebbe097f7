/* jobs/train_dist.h — `rlvr train` as a whole job: one process, or MPI
 * ranks playing the roles of [layout] (DESIGN.md "Processes and roles").
 *
 * Synchronous GRPO over ranks: the leader (world rank 0) runs the trainer
 * (jobs/train.h) with hooks that hand each dynamic-sampling round's groups to
 * rollout ranks and collect the records and verdicts; rollout ranks run the
 * harness on their own copy of the policy (weights broadcast by the leader
 * after every optimizer step); verifier ranks verify each finished rollout
 * (jobs/verifiers.h) and return its verdict. Every rollout is keyed by
 * (seed, step, sequence) and lands in its slot of the step's batch, so the
 * checkpoints are bit-identical to the one-process run whatever the number
 * of rollout and verifier ranks. Messages: docs/WIRE.md "Training protocol". */
#ifndef RLVR_JOBS_TRAIN_DIST_H
#define RLVR_JOBS_TRAIN_DIST_H

#include "jobs/run.h"

/* Runs `rlvr train` with parsed arguments in this process: initialises MPI
 * when a launcher started it (mpirun, srun), trains in one process when the
 * world has one rank and [layout] is the default, else plays this rank's
 * role. Prints errors (the leader's name the checkpoint to resume from) and
 * returns the exit status: RLVR_EXIT_OK, RLVR_EXIT_STOPPED after a signal
 * (every rank), RLVR_EXIT_USAGE or RLVR_EXIT_FAILURE. A rank that fails
 * after start-up aborts the whole job (MPI_Abort): MPI cannot continue
 * without it, and the checkpoints on disk stay consistent. */
int rlvr_train_main(const rlvr_run_args *args);

#endif
