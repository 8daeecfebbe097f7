/* Role communicators from [layout] (mpirun -np 6, layout 2/1/3), error
 * handling of the check macros, and the stop-flag agreement. */
#include "mpi/check.h"
#include "mpi/reduce.h"
#include "mpi/roles.h"
#include "mpi_test.h"

/* World ranks of the members of `comm`, in comm rank order. */
static void members(MPI_Comm comm, int world_rank, int *out, int *n) {
    MPI_Comm_size(comm, n);
    MPI_Allgather(&world_rank, 1, MPI_INT, out, 1, MPI_INT, comm);
}

static int errors_return(MPI_Comm comm) {
    MPI_Errhandler h;
    MPI_Comm_get_errhandler(comm, &h);
    int same = h == MPI_ERRORS_RETURN;
    MPI_Errhandler_free(&h);
    return same;
}

/* A failing MPI call through the check macro must come back as RLVR_EMPI. */
static int send_to_missing_rank(MPI_Comm comm, int size) {
    int x = 1;
    RLVR_MPI_CHECK(MPI_Send(&x, 1, MPI_INT, size + 5, 0, comm));
    return 0;
}

int main(int argc, char **argv) {
    mpi_test_init(&argc, &argv, 6);

    /* a layout that does not fit the world is refused before any communicator exists */
    rlvr_mpi_roles roles;
    rlvr_layout wrong = {1, 1, 1};
    CHECK(rlvr_mpi_roles_init(&roles, &wrong, MPI_COMM_WORLD) == RLVR_ECONFIG);
    CHECK_MSG(strstr(rlvr_error_last(), "world size is 6") != NULL, "%s", rlvr_error_last());
    CHECK(roles.world == MPI_COMM_NULL && roles.role_comm == MPI_COMM_NULL && roles.weights == MPI_COMM_NULL);

    rlvr_layout layout = {2, 1, 3};
    CHECK_OK(rlvr_mpi_roles_init(&roles, &layout, MPI_COMM_WORLD));
    int me = roles.world_rank;
    CHECK(roles.world_size == 6);
    const rlvr_rank_role want_role[6] = {RLVR_ROLE_TRAINER, RLVR_ROLE_TRAINER, RLVR_ROLE_VERIFIER,
                                    RLVR_ROLE_ROLLOUT, RLVR_ROLE_ROLLOUT, RLVR_ROLE_ROLLOUT};
    CHECK(roles.role == want_role[me]);
    CHECK(roles.is_leader == (me == 0));

    int ranks[6], n = 0;
    members(roles.role_comm, me, ranks, &n);
    CHECK(n == roles.role_size);
    if (roles.role == RLVR_ROLE_TRAINER) CHECK(n == 2 && ranks[0] == 0 && ranks[1] == 1);
    if (roles.role == RLVR_ROLE_VERIFIER) CHECK(n == 1 && ranks[0] == 2);
    if (roles.role == RLVR_ROLE_ROLLOUT) CHECK(n == 3 && ranks[0] == 3 && ranks[1] == 4 && ranks[2] == 5);
    CHECK(ranks[roles.role_rank] == me);
    CHECK(rlvr_layout_world_rank(&roles.layout, roles.role, roles.role_rank) == me);

    /* weights: leader first, then the rollout ranks; nobody else */
    if (me == 0 || roles.role == RLVR_ROLE_ROLLOUT) {
        CHECK(roles.weights != MPI_COMM_NULL);
        members(roles.weights, me, ranks, &n);
        CHECK(n == 4 && ranks[0] == 0 && ranks[1] == 3 && ranks[2] == 4 && ranks[3] == 5);
        CHECK(ranks[roles.weights_rank] == me);
        CHECK(errors_return(roles.weights));
    } else {
        CHECK(roles.weights == MPI_COMM_NULL && roles.weights_rank == -1);
    }
    CHECK(errors_return(roles.world));
    CHECK(errors_return(roles.role_comm));

    /* MPI errors come back as RLVR_EMPI with the call and the reason, and the file:line apart */
    int rc = send_to_missing_rank(roles.world, roles.world_size);
    CHECK(rc == RLVR_EMPI);
    const char *msg = rlvr_error_last();
    CHECK_MSG(strstr(msg, "MPI_Send failed") != NULL, "%s", msg);
    CHECK_MSG(strstr(msg, "MPI_ERR_RANK") != NULL, "%s", msg);
    CHECK_MSG(strstr(rlvr_error_where(), "test_mpi_roles.c:") != NULL, "%s", rlvr_error_where());

    /* stop agreement: one rank's flag reaches everyone, no flag reaches no one */
    bool any = false;
    CHECK_OK(rlvr_mpi_agree_any(roles.world, me == 4, &any));
    CHECK(any);
    CHECK_OK(rlvr_mpi_agree_any(roles.world, false, &any));
    CHECK(!any);
    CHECK_OK(rlvr_mpi_agree_any(roles.world, true, &any));
    CHECK(any);

    rlvr_mpi_roles_free(&roles);
    CHECK(roles.world == MPI_COMM_NULL && roles.role_comm == MPI_COMM_NULL && roles.weights == MPI_COMM_NULL);
    rlvr_mpi_roles_free(&roles); /* twice is harmless */
    return mpi_test_finish("test_mpi_roles");
}
