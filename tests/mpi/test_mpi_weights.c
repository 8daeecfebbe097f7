/* Weight broadcast (mpirun -np 4, layout 1/1/2: the leader and two rollout
 * ranks share the weights communicator; the verifier only joins barriers).
 * Synchronous publish/receive, async double buffering (the current weights
 * never change until a complete version is swapped in), several versions in
 * a row, timeouts, misuse, and the stop broadcast. */
#include "mpi/roles.h"
#include "mpi/weights.h"
#include "mpi_test.h"

#include <time.h>

enum { TIMEOUT = 20 };

static float value(int64_t version, size_t i) { return (float)version * 1000.0f + (float)(i % 9973) * 0.5f; }

static void fill(float *p, size_t n, int64_t version) {
    for (size_t i = 0; i < n; i++) p[i] = value(version, i);
}

/* Index of the first element that differs from `version`'s values, or n. */
static size_t first_mismatch(const float *p, size_t n, int64_t version, size_t stride) {
    for (size_t i = 0; i < n; i += stride)
        if (p[i] != value(version, i)) return i;
    if (n && p[n - 1] != value(version, n - 1)) return n - 1;
    return n;
}

static void sleep_s(double s) {
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* Synchronous mode: publish blocks the leader until its part is done;
 * receive blocks a rollout rank until the new version is current. */
static void test_sync(const rlvr_mpi_roles *roles) {
    const size_t n = 10007; /* not a multiple of the chunk */
    rlvr_weights *w = NULL;
    CHECK_OK(rlvr_weights_new(&w, roles->weights, n, 1000));
    if (rlvr_weights_is_source(w)) {
        float *p = malloc(n * sizeof *p);
        MPI_Barrier(roles->weights); /* replicas first check that nothing arrives */
        for (int64_t v = 0; v < 3; v++) {
            fill(p, n, v);
            CHECK_OK(rlvr_weights_publish(w, p, v, TIMEOUT, NULL));
            p[0] = -1.0f; /* the trainer may change its weights right away */
        }
        CHECK(rlvr_weights_publish(w, p, 2, TIMEOUT, NULL) == RLVR_EINVAL); /* versions must grow */
        CHECK(rlvr_weights_current(w, NULL) == NULL);
        bool swapped;
        CHECK(rlvr_weights_swap_if_ready(w, &swapped) == RLVR_ESTATE);
        CHECK_OK(rlvr_weights_publish_stop(w));
        CHECK_OK(rlvr_weights_publish_wait(w, TIMEOUT, NULL));
        CHECK(rlvr_weights_publish_start(w, p, 9) == RLVR_ESTATE);
        free(p);
    } else {
        int64_t version = 99;
        const float *cur = rlvr_weights_current(w, &version);
        CHECK(cur != NULL && version == -1);
        CHECK(rlvr_weights_receive(w, 0.05, NULL, NULL) == RLVR_ELIMIT);
        volatile sig_atomic_t stop = 1;
        CHECK(rlvr_weights_receive(w, -1, &stop, NULL) == RLVR_EINTERRUPTED);
        float dummy = 0;
        CHECK(rlvr_weights_publish_start(w, &dummy, 1) == RLVR_ESTATE);
        MPI_Barrier(roles->weights);
        for (int64_t v = 0; v < 3; v++) {
            bool stopped = true;
            CHECK_OK(rlvr_weights_receive(w, TIMEOUT, NULL, &stopped));
            CHECK(!stopped);
            cur = rlvr_weights_current(w, &version);
            CHECK(version == v);
            CHECK(first_mismatch(cur, n, v, 1) == n);
        }
        bool stopped = false;
        CHECK_OK(rlvr_weights_receive(w, TIMEOUT, NULL, &stopped));
        CHECK(stopped);
        rlvr_weights_status st;
        rlvr_weights_get_status(w, &st);
        CHECK(st.stopped && st.version == 2 && st.swaps == 3);
    }
    rlvr_weights_free(w);
}

/* Async mode: the leader starts the broadcast and then does not call MPI for
 * a while, so the floats cannot all arrive; replicas keep polling at "turn
 * boundaries" and must see their current weights unchanged until a complete
 * version is swapped in. */
static void test_async(const rlvr_mpi_roles *roles) {
    const size_t n = (size_t)1 << 20, chunk = (size_t)1 << 16;
    rlvr_weights *w = NULL;
    CHECK_OK(rlvr_weights_new(&w, roles->weights, n, chunk));
    if (rlvr_weights_is_source(w)) {
        float *p = malloc(n * sizeof *p);
        fill(p, n, 0);
        CHECK_OK(rlvr_weights_publish(w, p, 0, TIMEOUT, NULL));
        MPI_Barrier(roles->weights); /* replicas hold version 0 */
        fill(p, n, 1);
        CHECK_OK(rlvr_weights_publish_start(w, p, 1));
        fill(p, n, 77); /* the broadcast sends the copy made at start */
        CHECK(rlvr_weights_publish_start(w, p, 2) == RLVR_ESTATE); /* one at a time */
        sleep_s(0.3);
        CHECK_OK(rlvr_weights_publish_wait(w, TIMEOUT, NULL));
        MPI_Barrier(roles->weights); /* replicas swapped version 1 in */

        /* versions back to back: each one is received and swapped in order */
        for (int64_t v = 2; v <= 5; v++) {
            fill(p, n, v);
            CHECK_OK(rlvr_weights_publish_start(w, p, v));
            bool done = false;
            CHECK_OK(rlvr_weights_publish_test(w, &done));
            CHECK_OK(rlvr_weights_publish_wait(w, TIMEOUT, NULL));
        }
        CHECK_OK(rlvr_weights_publish_stop(w));
        CHECK_OK(rlvr_weights_publish_wait(w, TIMEOUT, NULL));
        rlvr_weights_status st;
        rlvr_weights_get_status(w, &st);
        CHECK(st.version == 5 && st.stopped && !st.in_flight);
        free(p);
    } else {
        CHECK_OK(rlvr_weights_receive(w, TIMEOUT, NULL, NULL));
        int64_t version = -1;
        const float *cur = rlvr_weights_current(w, &version);
        CHECK(version == 0 && first_mismatch(cur, n, 0, 1) == n);
        /* nothing published: turn boundaries keep the current weights */
        for (int i = 0; i < 20; i++) {
            bool swapped = true;
            CHECK_OK(rlvr_weights_swap_if_ready(w, &swapped));
            CHECK(!swapped);
        }
        MPI_Barrier(roles->weights);

        /* turn boundaries while version 1 is in flight: weights unchanged */
        int saw_receiving = 0, boundaries = 0, torn = 0;
        rlvr_weights_status st;
        double t0 = MPI_Wtime();
        for (;;) {
            CHECK_OK(rlvr_weights_progress(w));
            rlvr_weights_get_status(w, &st);
            if (st.ready || MPI_Wtime() - t0 > TIMEOUT) break;
            saw_receiving += st.receiving;
            bool swapped = true;
            CHECK_OK(rlvr_weights_swap_if_ready(w, &swapped));
            boundaries++;
            if (swapped) break; /* completed between progress and swap */
            cur = rlvr_weights_current(w, &version);
            torn += version != 0 || first_mismatch(cur, n, 0, 61) != n;
            sleep_s(0.002);
        }
        CHECK(torn == 0);
        CHECK_MSG(saw_receiving > 0, "never saw a partial broadcast (%d boundaries)", boundaries);
        if (st.ready) {
            /* complete but not swapped: still the old weights until the next boundary */
            CHECK(st.incoming_version == 1);
            cur = rlvr_weights_current(w, &version);
            CHECK(version == 0 && first_mismatch(cur, n, 0, 1) == n);
            bool swapped = false;
            CHECK_OK(rlvr_weights_swap_if_ready(w, &swapped));
            CHECK(swapped);
        }
        cur = rlvr_weights_current(w, &version);
        CHECK(version == 1 && first_mismatch(cur, n, 1, 1) == n);
        MPI_Barrier(roles->weights);

        int64_t last = 1;
        int out_of_order = 0;
        bool stopped = false;
        while (!stopped) {
            CHECK_OK(rlvr_weights_receive(w, TIMEOUT, NULL, &stopped));
            if (stopped) break;
            cur = rlvr_weights_current(w, &version);
            out_of_order += version != last + 1;
            CHECK(first_mismatch(cur, n, version, 1) == n);
            last = version;
        }
        CHECK(out_of_order == 0 && last == 5);
        rlvr_weights_get_status(w, &st);
        CHECK(st.swaps == 6 && st.stopped);
    }
    rlvr_weights_free(w);
}

int main(int argc, char **argv) {
    mpi_test_init(&argc, &argv, 4);
    rlvr_mpi_roles roles;
    rlvr_layout layout = {1, 1, 2};
    CHECK_OK(rlvr_mpi_roles_init(&roles, &layout, MPI_COMM_WORLD));
    if (roles.weights != MPI_COMM_NULL) {
        rlvr_weights *w = NULL;
        CHECK(rlvr_weights_new(&w, roles.weights, 0, 0) == RLVR_EINVAL);
        test_sync(&roles);
        test_async(&roles);
    } else {
        rlvr_weights *w = NULL;
        CHECK(rlvr_weights_new(&w, roles.weights, 10, 0) == RLVR_EINVAL); /* the verifier is not a member */
    }
    rlvr_mpi_roles_free(&roles);
    return mpi_test_finish("test_mpi_weights");
}
