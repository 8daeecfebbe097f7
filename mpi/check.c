#include "mpi/check.h"

#include <stdio.h>
#include <string.h>

int rlvr_mpi_fail_at(int mpi_rc, const char *file, int line, const char *call) {
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (MPI_Error_string(mpi_rc, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "unknown MPI error");
    int cls = mpi_rc;
    if (MPI_Error_class(mpi_rc, &cls) != MPI_SUCCESS) cls = mpi_rc;
    /* "MPI_Isend(buf, n, ...)" -> "MPI_Isend" */
    size_t n = strcspn(call, "( ");
    return rlvr_error_set_at(RLVR_EMPI, file, line, "%.*s failed: %s (MPI error code %d, class %d)", (int)n, call,
                             text, mpi_rc, cls);
}
