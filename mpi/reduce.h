/* mpi/reduce.h — collectives whose results do not depend on the MPI library.
 *
 * MPI_Allreduce may add contributions in any order (the algorithm depends on
 * the library, the message size and the rank count), and float addition is
 * not associative, so gradients could differ in the last bits from run to
 * run. rlvr_mpi_sum_ordered fixes the order: every element is summed as
 *   ((x_0 + x_1) + x_2) + … + x_{P-1}      (x_r from communicator rank r)
 * in float, exactly what a serial loop over ranks computes. It moves data
 * with MPI_Alltoallv (reduce-scatter of fixed blocks: rank b owns block b and
 * adds the P copies it receives in rank order) and MPI_Allgatherv, which only
 * copy bytes, so the result is bit-identical for a fixed communicator size
 * whatever algorithm Open MPI picks. Traffic equals a ring allreduce. */
#ifndef RLVR_MPI_REDUCE_H
#define RLVR_MPI_REDUCE_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

/* In place: on return every rank's buf[0..n) holds the rank-ordered sum.
 * Collective over `comm`; all ranks pass the same n. Works in segments of
 * at most `segment` floats (0 = 16 Mi floats, 64 MiB) so the scratch space
 * stays bounded; the result does not depend on the segment size. */
int rlvr_mpi_sum_ordered(MPI_Comm comm, float *buf, size_t n, size_t segment);

/* Logical or of `local` over `comm` (MPI_Allreduce, MPI_LOR): every rank
 * learns whether any rank asked to stop, e.g. after a signal handler set a
 * flag, so all ranks checkpoint and leave at the same step boundary. */
int rlvr_mpi_agree_any(MPI_Comm comm, bool local, bool *any);

#endif
