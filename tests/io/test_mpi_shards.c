/* Several MPI ranks write their own shards at the same moment (io/ only
 * gets a rank number; the MPI is all here), then each rank reads another
 * rank's shards back and checks every rollout. Run with mpirun -np 4. */
#include "io/file.h"
#include "io/shard.h"
#include "io_fixtures.h"
#include "test.h"

#include <mpi.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define ASAN_BUILD 1
#else
#define ASAN_BUILD 0
#endif

enum { STEPS = 3, ROLLOUTS = 24 };

static uint64_t seed_of(int rank, int step) { return 1000u * (uint64_t)rank + (uint64_t)step; }

static void write_step(const char *dir, int rank, int step) {
    rlvr_shard_options opt = RLVR_SHARD_OPTIONS_INIT;
    opt.chunk_tokens = 256;
    rlvr_shard_writer *w = NULL;
    CHECK_OK(rlvr_shard_create(&w, dir, step, rank, &opt));
    if (!w) return;
    rlvr_rollout r;
    CHECK_OK(rlvr_rollout_init(&r, 64, 4));
    for (int k = 0; k < ROLLOUTS; k++) {
        CHECK_OK(fixture_rollout(&r, seed_of(rank, step), k, 1 + (k + rank) % 4, 10 + rank));
        CHECK_OK(rlvr_shard_append(w, &r, (float)(rank * 100 + k)));
    }
    rlvr_rollout_free(&r);
    CHECK_OK(rlvr_shard_commit(w, NULL, 0));
}

static void check_step(const char *dir, int rank, int step) {
    char path[4200];
    CHECK_OK(rlvr_shard_path(path, sizeof path, dir, step, rank));
    rlvr_shard *s = NULL;
    CHECK_OK(rlvr_shard_open(&s, path));
    if (!s) return;
    const rlvr_shard_info *info = rlvr_shard_info_of(s);
    CHECK(info->rank == rank && info->step == step && info->n_rollouts == ROLLOUTS);
    rlvr_rollout want, got;
    CHECK_OK(rlvr_rollout_init(&want, 64, 4));
    CHECK_OK(rlvr_rollout_init(&got, 64, 4));
    for (int k = 0; k < ROLLOUTS; k++) {
        float adv = 0;
        CHECK_OK(fixture_rollout(&want, seed_of(rank, step), k, 1 + (k + rank) % 4, 10 + rank));
        CHECK_OK(rlvr_shard_read(s, k, &got, &adv));
        CHECK_MSG(fixture_same_rollout(&want, &got), "rank %d step %d rollout %d differs", rank, step, k);
        CHECK(adv == (float)(rank * 100 + k));
    }
    rlvr_rollout_free(&want);
    rlvr_rollout_free(&got);
    rlvr_shard_close(s);
    CHECK_OK(rlvr_io_verify(path, NULL, NULL));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char dir[4096] = "";
    if (rank == 0) fixture_tmpdir(dir, sizeof dir, "mpi");
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);

    for (int step = 0; step < STEPS; step++) {
        MPI_Barrier(MPI_COMM_WORLD); /* everyone writes at once */
        write_step(dir, rank, step);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int step = 0; step < STEPS; step++) check_step(dir, (rank + 1) % size, step);

    /* ASan builds: check for leaks while Open MPI's plugins are loaded (its
     * memory is still reachable); at exit only allocations of unloaded,
     * unnamed plugins would be listed, which no suppression can name */
#if ASAN_BUILD
    if (__lsan_do_recoverable_leak_check()) {
        test_failures++;
        fprintf(stderr, "rank %d: LeakSanitizer found leaks (above)\n", rank);
    }
#endif
    int failures = test_failures, total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        printf("test_mpi_shards: %d ranks wrote %d shards each; %d failed checks in all\n", size, STEPS, total);
        fixture_rmtree(dir);
    }
    MPI_Finalize();
    int status = total ? 1 : (size < 2 ? 1 : 0);
    if (ASAN_BUILD) {
        fflush(NULL);
        _exit(status);
    }
    return status;
}
