/* Deterministic gradient sum (mpirun -np 4): bit-identical to a serial sum
 * in rank order, on 4 ranks and on a 3-rank sub-communicator, for sizes
 * smaller than the rank count, uneven blocks and several segments; repeated
 * calls agree bit for bit. */
#include "mpi/reduce.h"
#include "mpi_test.h"

#include <math.h>
#include <stdint.h>

static uint32_t hash32(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

/* Rank r's gradient element i: wide exponent range so order matters. */
static float grad(int r, size_t i) {
    uint32_t h = hash32((uint32_t)i * 0x9e3779b9U ^ (uint32_t)(r + 1) * 0x85ebca6bU);
    float mant = (float)(h & 0xffffff) / 16777216.0f - 0.5f;
    int e = (int)(h >> 24) % 48 - 24;
    return ldexpf(mant, e);
}

static int check_sizes(MPI_Comm comm) {
    int P, me;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &me);
    const size_t sizes[] = {0, 1, 2, 5, 1000, 100003};
    const size_t segments[] = {0, 777, 4};
    int order_sensitive = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        size_t n = sizes[s];
        float *serial = malloc((n ? n : 1) * sizeof *serial);
        float *first = malloc((n ? n : 1) * sizeof *first);
        float *buf = malloc((n ? n : 1) * sizeof *buf);
        for (size_t i = 0; i < n; i++) {
            float acc = grad(0, i), rev = grad(P - 1, i);
            for (int r = 1; r < P; r++) acc += grad(r, i);
            for (int r = P - 2; r >= 0; r--) rev += grad(r, i);
            serial[i] = acc;
            order_sensitive += memcmp(&acc, &rev, sizeof acc) != 0;
        }
        for (size_t g = 0; g < sizeof segments / sizeof *segments; g++) {
            if (segments[g] && segments[g] < 100 && n > 1000) continue; /* thousands of collectives: too slow */
            for (int rep = 0; rep < 2; rep++) {
                for (size_t i = 0; i < n; i++) buf[i] = grad(me, i);
                CHECK_OK(rlvr_mpi_sum_ordered(comm, buf, n, segments[g]));
                CHECK_MSG(n == 0 || memcmp(buf, serial, n * sizeof *buf) == 0,
                          "P=%d n=%zu segment=%zu differs from the serial rank-order sum", P, n, segments[g]);
                if (g == 0 && rep == 0) memcpy(first, buf, n * sizeof *buf);
                else CHECK(n == 0 || memcmp(buf, first, n * sizeof *buf) == 0);
            }
        }
        free(serial);
        free(first);
        free(buf);
    }
    return order_sensitive;
}

int main(int argc, char **argv) {
    mpi_test_init(&argc, &argv, 4);
    MPI_Comm world;
    MPI_Comm_dup(MPI_COMM_WORLD, &world);
    MPI_Comm_set_errhandler(world, MPI_ERRORS_RETURN);
    /* the test has power: the reverse rank order gives different floats */
    int sensitive = check_sizes(world);
    CHECK_MSG(sensitive > 100, "only %d elements depend on summation order", sensitive);

    MPI_Comm three;
    MPI_Comm_split(world, mpi_test_rank < 3 ? 0 : MPI_UNDEFINED, mpi_test_rank, &three);
    if (three != MPI_COMM_NULL) {
        check_sizes(three);
        MPI_Comm_free(&three);
    }
    CHECK(rlvr_mpi_sum_ordered(world, NULL, 5, 0) == RLVR_EINVAL);
    MPI_Comm_free(&world);
    return mpi_test_finish("test_mpi_reduce");
}
