/* mpi/layout.h — which world rank plays which role ([layout] section).
 *
 * `[layout] trainer=T verifier=V rollout=R` with T+V+R = world size. World
 * ranks are assigned in that order and never reshuffled:
 *   [0, T)        trainer ranks; world rank 0 is the leader
 *   [T, T+V)      verifier ranks
 *   [T+V, T+V+R)  rollout ranks
 * Everything here is pure (no MPI calls), so it is tested without mpirun. */
#ifndef RLVR_MPI_LAYOUT_H
#define RLVR_MPI_LAYOUT_H

#include "core/config.h"

#include <stdbool.h>

typedef enum {
    RLVR_ROLE_TRAINER = 0,
    RLVR_ROLE_VERIFIER = 1,
    RLVR_ROLE_ROLLOUT = 2,
    RLVR_ROLE_COUNT
} rlvr_rank_role;

typedef struct {
    int trainer, verifier, rollout; /* ranks per role */
} rlvr_layout;

/* [layout] keys for core/config.h (NULL-terminated). */
extern const rlvr_config_key rlvr_layout_config_keys[];

/* Every [layout] key as written, before any check against a world size. */
typedef struct {
    rlvr_layout counts; /* trainer, verifier, rollout */
    double timeout_s;   /* how long the leader waits for a record, verdict or broadcast */
    bool counts_set;    /* the file sets at least one of the three counts */
} rlvr_layout_config;

/* Reads [layout] (defaults for keys the file leaves out); checks nothing
 * beyond the keys' ranges. For callers that plan a launch, such as a batch
 * script's rank count, before any MPI world exists. */
int rlvr_layout_config_read(rlvr_layout_config *out, const rlvr_config *cfg);

/* Reads [layout] and checks it against the MPI world size. A mismatch is
 * RLVR_ECONFIG naming the file, line and key, showing all three counts and
 * the world size. */
int rlvr_layout_from_config(rlvr_layout *out, const rlvr_config *cfg, int world_size);

/* Same check for a layout built in code: every count in range (trainer ≥ 1,
 * verifier ≥ 1, rollout ≥ 1) and T+V+R == world_size. RLVR_ECONFIG otherwise. */
int rlvr_layout_validate(const rlvr_layout *layout, int world_size);

static inline int rlvr_layout_world_size(const rlvr_layout *l) { return l->trainer + l->verifier + l->rollout; }

/* Role and rank inside the role of a world rank; RLVR_EINVAL when out of range. */
int rlvr_layout_role_of(const rlvr_layout *layout, int world_rank, rlvr_rank_role *role, int *role_rank);

/* World rank of rank `role_rank` of `role`; negative RLVR_EINVAL when out of range. */
int rlvr_layout_world_rank(const rlvr_layout *layout, rlvr_rank_role role, int role_rank);

/* Number of ranks of `role` (0 for an unknown role). */
int rlvr_layout_count(const rlvr_layout *layout, rlvr_rank_role role);

/* "trainer", "verifier", "rollout". */
const char *rlvr_role_name(rlvr_rank_role role);

/* The singleton trap of MPI under Slurm: when `srun` cannot reach PMIx, each
 * task starts as its own one-rank MPI job and nothing fails until ranks try
 * to talk. Compares the MPI world size with what the launcher started:
 * OMPI_COMM_WORLD_SIZE (set by mpirun) when present, else
 * SLURM_STEP_NUM_TASKS (inside an srun step), else SLURM_NTASKS. Arguments
 * are those variables' values or NULL when unset; all NULL passes.
 * RLVR_ECONFIG with a message saying how to launch when they differ. */
int rlvr_mpi_check_launch_env(int world_size, const char *ompi_world_size, const char *slurm_step_tasks,
                              const char *slurm_ntasks);

/* rlvr_mpi_check_launch_env() with the process environment. */
int rlvr_mpi_check_launch(int world_size);

#endif
