/* train/dist.h — `rlvr train` as a whole job: one process, or MPI ranks
 * playing the roles of [layout] (docs/DESIGN.md "Processes and rank roles").
 *
 * Synchronous GRPO over ranks: the leader (world rank 0) runs the trainer
 * (train/trainer.h) with hooks that hand each dynamic-sampling round's groups to
 * rollout ranks and collect the records and verdicts; rollout ranks run the
 * harness on their own copy of the policy (weights broadcast by the leader
 * after every optimizer step); verifier ranks verify each finished rollout
 * (train/verifiers.h) and return its verdict. Every rollout is keyed by
 * (seed, step, sequence) and lands in its slot of the step's batch, so the
 * checkpoints are bit-identical to the one-process run whatever the number
 * of rollout and verifier ranks. Messages: docs/WIRE.md "Training protocol".
 *
 * Data-parallel trainer ranks ([layout] trainer = T > 1, either mode): the
 * leader hands each update's batch to trainer ranks 1 … T−1 (and each its
 * range as whole records, for its shard); every trainer rank writes its
 * token-balanced range of it to its own shard (step, rank) and computes its
 * gradient, the gradients are summed in rank order (mpi/reduce.h), every
 * rank steps AdamW and the replicas' weight hashes are compared after each
 * update. A run is
 * bit-reproducible for a fixed T (docs/WIRE.md "Data-parallel trainer
 * ranks").
 *
 * Bounded-async GRPO ([train] max_staleness = Δv_max > 0, with rollout
 * ranks): the leader keeps (1 + Δv_max) steps' worth of groups handed out;
 * rollout ranks generate them as they come with the newest weights they
 * hold (swapped in at turn boundaries), stamping each record with its policy
 * version; the leader admits a finished group into a step only when
 * Δv = v_trainer − v_rollout ≤ Δv_max, else drops and counts it; the
 * objective corrects the lag with truncated importance weights against the
 * recorded sampling log-probs. Not bit-reproducible (docs/OPERATIONS.md
 * "Asynchronous training"). In one process Δv_max > 0 trains synchronously
 * (said once). */
#ifndef RLVR_TRAIN_DIST_H
#define RLVR_TRAIN_DIST_H

#include "core/config.h"
#include "envs/harness.h"
#include "train/run.h"

#include <stdbool.h>

/* Benchmarks only (bench/bench_pipeline.c): simulated environment time on
 * the rollout ranks. A finished rollout holds one of the rank's
 * `environments` for delay(arg, job, 0) seconds more (its environment's
 * latency: tools, build, tests) before its record is sent; a rank starts a
 * group only when all its rollouts fit in free environments. */
typedef struct {
    rlvr_harness_latency_fn delay;
    void *arg;
    int environments; /* ≥ 1 per rollout rank */
} rlvr_train_simulation;

/* How a training job ended on this rank. */
typedef struct {
    int rc;        /* 0 finished, 1 stopped by a signal after a checkpoint (every rank), negative: failed */
    bool reported; /* a failure this rank need not print: said already, or another rank's to say */
    bool abort;    /* a rank failed after start-up: MPI cannot go on without it, and the checkpoints on
                    * disk stay consistent, so the caller ends the whole job (MPI_Abort; MPI is left
                    * initialised, nothing freed) */
} rlvr_train_outcome;

/* Runs `rlvr train` in this process (args as the command line gives them;
 * the run is loaded with `schemas`, see rlvr_run_load): initialises MPI
 * when a launcher started it (mpirun, srun), trains in one process when the
 * world has one rank and [layout] is the default, else plays this rank's
 * role. Progress and each rank's own failures after start-up go to stderr
 * (the leader's name the checkpoint to resume from). `sim` NULL: no
 * simulation. Fills *out and returns out->rc. */
int rlvr_train_job(const rlvr_run_args *args, const rlvr_config_key *const *schemas, const rlvr_train_simulation *sim,
                   rlvr_train_outcome *out);

#endif
