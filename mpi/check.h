/* mpi/check.h — turn failing MPI calls into RLVR_EMPI with file:line.
 *
 * Every communicator mpi/ creates has MPI_ERRORS_RETURN, so a failing call
 * returns its code instead of aborting the job; these macros record
 * "MPI_Isend failed: MPI_ERR_RANK: invalid rank (at mpi/queue.c:88)" in the
 * thread's error slot (core/error.h) and return RLVR_EMPI. In MPI 3.1 the
 * library state after an error is undefined: callers log, checkpoint if they
 * can, and exit non-zero; they do not try to go on. */
#ifndef RLVR_MPI_CHECK_H
#define RLVR_MPI_CHECK_H

#include "core/error.h"

#include <mpi.h>

/* Records the failure of `call` (its text; only the function name is kept)
 * with MPI_Error_string(mpi_rc) and returns RLVR_EMPI. */
int rlvr_mpi_fail_at(int mpi_rc, const char *file, int line, const char *call);

/* Return RLVR_EMPI from the enclosing function when the MPI call fails. */
#define RLVR_MPI_CHECK(call)                                                      \
    do {                                                                          \
        int rlvr_mpi_rc_ = (call);                                                \
        if (rlvr_mpi_rc_ != MPI_SUCCESS)                                          \
            return rlvr_mpi_fail_at(rlvr_mpi_rc_, __FILE__, __LINE__, #call);     \
    } while (0)

/* Same, for functions with cleanup: sets `rc` and jumps to `label`. */
#define RLVR_MPI_GOTO(call, rc, label)                                            \
    do {                                                                          \
        int rlvr_mpi_rc_ = (call);                                                \
        if (rlvr_mpi_rc_ != MPI_SUCCESS) {                                        \
            (rc) = rlvr_mpi_fail_at(rlvr_mpi_rc_, __FILE__, __LINE__, #call);     \
            goto label;                                                           \
        }                                                                         \
    } while (0)

#endif
