/* mpi/roles.h — the communicators of one run, built from [layout].
 *
 *   world    a duplicate of the parent communicator: point-to-point queues
 *            (mpi/queue.h) address world ranks on it, and the stop-flag
 *            agreement (mpi/reduce.h) runs on it
 *   role     this rank's role communicator (trainer, verifier or rollout),
 *            ranks in world order; trainer rank 0 = world rank 0 = the leader
 *   weights  the leader plus every rollout rank, leader = rank 0, rollout
 *            rank i = rank 1+i; MPI_COMM_NULL on the other ranks. Weight
 *            broadcasts (mpi/weights.h) are collectives and need every member,
 *            so they get a communicator of exactly the ranks that take part.
 * Every communicator has MPI_ERRORS_RETURN (mpi/check.h). */
#ifndef RLVR_MPI_ROLES_H
#define RLVR_MPI_ROLES_H

#include "mpi/layout.h"

#include <mpi.h>
#include <stdbool.h>

typedef struct {
    rlvr_layout layout;
    MPI_Comm world;
    int world_rank, world_size;
    rlvr_rank_role role;
    MPI_Comm role_comm;
    int role_rank, role_size;
    MPI_Comm weights;  /* MPI_COMM_NULL unless leader or rollout rank */
    int weights_rank;  /* -1 when weights is MPI_COMM_NULL */
    bool is_leader;    /* world rank 0 */
} rlvr_mpi_roles;

/* Collective over `parent` (normally MPI_COMM_WORLD). Runs the launch check
 * (layout.h: rlvr_mpi_check_launch), validates the layout against the size of
 * `parent`, duplicates and splits, sets MPI_ERRORS_RETURN everywhere and the
 * rank prefix of log lines (rlvr_log_set_rank). On error every communicator
 * made so far is freed and *out is left with MPI_COMM_NULL handles. */
int rlvr_mpi_roles_init(rlvr_mpi_roles *out, const rlvr_layout *layout, MPI_Comm parent);

/* Frees the communicators (collective, like MPI_Comm_free). Safe on a zeroed
 * or failed struct. */
void rlvr_mpi_roles_free(rlvr_mpi_roles *r);

/* World rank of the leader. */
#define RLVR_MPI_LEADER 0

#endif
