#include "mpi/roles.h"
#include "mpi/check.h"

#include "core/log.h"

#include <string.h>

static void comm_free(MPI_Comm *c) {
    if (*c != MPI_COMM_NULL) MPI_Comm_free(c);
    *c = MPI_COMM_NULL;
}

void rlvr_mpi_roles_free(rlvr_mpi_roles *r) {
    if (!r) return;
    comm_free(&r->weights);
    comm_free(&r->role_comm);
    comm_free(&r->world);
    r->weights_rank = -1;
}

static void roles_clear(rlvr_mpi_roles *r) {
    memset(r, 0, sizeof *r);
    r->world = r->role_comm = r->weights = MPI_COMM_NULL;
    r->weights_rank = -1;
}

static int roles_build(rlvr_mpi_roles *r, const rlvr_layout *layout, MPI_Comm parent) {
    int size = 0;
    RLVR_MPI_CHECK(MPI_Comm_size(parent, &size));
    RLVR_TRY(rlvr_mpi_check_launch(size));
    RLVR_TRY(rlvr_layout_validate(layout, size));
    r->layout = *layout;

    RLVR_MPI_CHECK(MPI_Comm_dup(parent, &r->world));
    RLVR_MPI_CHECK(MPI_Comm_set_errhandler(r->world, MPI_ERRORS_RETURN));
    RLVR_MPI_CHECK(MPI_Comm_rank(r->world, &r->world_rank));
    RLVR_MPI_CHECK(MPI_Comm_size(r->world, &r->world_size));
    RLVR_TRY(rlvr_layout_role_of(layout, r->world_rank, &r->role, NULL));
    r->is_leader = r->world_rank == 0;

    RLVR_MPI_CHECK(MPI_Comm_split(r->world, (int)r->role, r->world_rank, &r->role_comm));
    RLVR_MPI_CHECK(MPI_Comm_set_errhandler(r->role_comm, MPI_ERRORS_RETURN));
    RLVR_MPI_CHECK(MPI_Comm_rank(r->role_comm, &r->role_rank));
    RLVR_MPI_CHECK(MPI_Comm_size(r->role_comm, &r->role_size));

    /* weights: the leader and the rollout ranks, keyed by world rank so the
     * leader (world rank 0) is rank 0 */
    int member = r->is_leader || r->role == RLVR_ROLE_ROLLOUT;
    RLVR_MPI_CHECK(MPI_Comm_split(r->world, member ? 0 : MPI_UNDEFINED, r->world_rank, &r->weights));
    if (r->weights != MPI_COMM_NULL) {
        RLVR_MPI_CHECK(MPI_Comm_set_errhandler(r->weights, MPI_ERRORS_RETURN));
        RLVR_MPI_CHECK(MPI_Comm_rank(r->weights, &r->weights_rank));
    }
    return 0;
}

int rlvr_mpi_roles_init(rlvr_mpi_roles *out, const rlvr_layout *layout, MPI_Comm parent) {
    if (!out || !layout) return rlvr_error_set(RLVR_EINVAL, "rlvr_mpi_roles_init: NULL argument");
    roles_clear(out);
    int rc = roles_build(out, layout, parent);
    if (rc < 0) {
        rlvr_mpi_roles_free(out);
        return rlvr_error_wrap(rc, "setting up MPI roles");
    }
    rlvr_log_set_rank(out->world_rank);
    rlvr_log_debug("role %s, rank %d of %d%s", rlvr_role_name(out->role), out->role_rank, out->role_size,
                   out->is_leader ? " (leader)" : "");
    return 0;
}
