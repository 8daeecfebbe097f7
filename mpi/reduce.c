#include "mpi/reduce.h"
#include "mpi/check.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_SEGMENT ((size_t)1 << 24)

/* Block b of a segment of `len` floats split over P ranks: [start, start+count). */
static void block_of(size_t len, int P, int b, int *start, int *count) {
    size_t s = len * (size_t)b / (size_t)P, e = len * (size_t)(b + 1) / (size_t)P;
    *start = (int)s;
    *count = (int)(e - s);
}

/* One segment; counts/displs hold P ints each, scratch ≥ P*ceil(len/P) floats. */
static int sum_segment(MPI_Comm comm, float *seg, size_t len, int P, int me, int *send_counts, int *send_displs,
                       int *recv_counts, int *recv_displs, float *scratch) {
    int mine_start, mine;
    block_of(len, P, me, &mine_start, &mine);
    for (int b = 0; b < P; b++) {
        block_of(len, P, b, &send_displs[b], &send_counts[b]);
        recv_counts[b] = mine;
        recv_displs[b] = b * mine;
    }
    RLVR_MPI_CHECK(MPI_Alltoallv(seg, send_counts, send_displs, MPI_FLOAT, scratch, recv_counts, recv_displs,
                                 MPI_FLOAT, comm));
    /* rank order, left to right: the serial sum over ranks */
    float *out = seg + mine_start;
    for (int i = 0; i < mine; i++) {
        float acc = scratch[i];
        for (int r = 1; r < P; r++) acc += scratch[(size_t)r * (size_t)mine + (size_t)i];
        out[i] = acc;
    }
    /* send_counts/send_displs describe every rank's block: gather them back */
    RLVR_MPI_CHECK(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_FLOAT, seg, send_counts, send_displs, MPI_FLOAT, comm));
    return 0;
}

int rlvr_mpi_sum_ordered(MPI_Comm comm, float *buf, size_t n, size_t segment) {
    if (!buf && n) return rlvr_error_set(RLVR_EINVAL, "rlvr_mpi_sum_ordered: NULL buffer");
    int P, me;
    RLVR_MPI_CHECK(MPI_Comm_size(comm, &P));
    RLVR_MPI_CHECK(MPI_Comm_rank(comm, &me));
    if (P == 1 || n == 0) return 0;
    if (segment == 0) segment = DEFAULT_SEGMENT;
    if (segment > (size_t)1 << 30) segment = (size_t)1 << 30; /* int counts and displacements */
    size_t seg_len = n < segment ? n : segment;
    size_t per_rank = (seg_len + (size_t)P - 1) / (size_t)P;

    int rc = 0;
    int *ints = malloc(4 * (size_t)P * sizeof *ints);
    float *scratch = malloc((size_t)P * per_rank * sizeof *scratch);
    if (!ints || !scratch) {
        rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory for the ordered reduction of %zu floats over %d ranks", n, P);
        goto done;
    }
    for (size_t off = 0; off < n && rc == 0; off += seg_len) {
        size_t len = n - off < seg_len ? n - off : seg_len;
        rc = sum_segment(comm, buf + off, len, P, me, ints, ints + P, ints + 2 * P, ints + 3 * P, scratch);
    }
done:
    free(ints);
    free(scratch);
    return rc;
}

int rlvr_mpi_agree_any(MPI_Comm comm, bool local, bool *any) {
    if (!any) return rlvr_error_set(RLVR_EINVAL, "rlvr_mpi_agree_any: NULL result");
    int in = local ? 1 : 0, out = 0;
    RLVR_MPI_CHECK(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LOR, comm));
    *any = out != 0;
    return 0;
}
