/* tests/mpi/mpi_test.h — helpers for tests that run under mpirun: every rank
 * runs the checks; the exit status is the sum of failures over all ranks,
 * so a failure on any rank fails the test on every rank. */
#ifndef RLVR_TESTS_MPI_TEST_H
#define RLVR_TESTS_MPI_TEST_H

#include "test.h"

#include <mpi.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define MPI_TEST_ASAN 1
#else
#define MPI_TEST_ASAN 0
#endif

static int mpi_test_rank;

static inline void mpi_test_init(int *argc, char ***argv, int want_size) {
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        fprintf(stderr, "MPI_Init failed\n");
        exit(1);
    }
    int size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &mpi_test_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != want_size) {
        if (mpi_test_rank == 0) fprintf(stderr, "this test needs mpirun -np %d, got %d ranks\n", want_size, size);
        MPI_Finalize();
        exit(1);
    }
}

/* Collective: prints one summary per rank and ends the process: status 0
 * only when no rank failed.
 * ASan builds check for leaks before MPI_Finalize, while Open MPI's plugins
 * are still loaded and its memory still reachable, then leave with _exit:
 * the usual check at exit would only list allocations of plugins Open MPI
 * has already unloaded (unnamed, so they cannot be suppressed). */
static inline int mpi_test_finish(const char *name) {
    if (MPI_TEST_ASAN) {
#if MPI_TEST_ASAN
        if (__lsan_do_recoverable_leak_check()) {
            test_checks++;
            test_failures++;
            fprintf(stderr, "%s rank %d: LeakSanitizer found leaks (above)\n", name, mpi_test_rank);
        }
#endif
    }
    int mine = test_failures, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("%s rank %d: %d checks, %d failed (all ranks: %d failed)\n", name, mpi_test_rank, test_checks,
           test_failures, all);
    MPI_Finalize();
    if (MPI_TEST_ASAN) {
        fflush(NULL);
        _exit(all ? 1 : 0);
    }
    return all ? 1 : 0;
}

#endif
