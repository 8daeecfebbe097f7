#include "mpi/weights.h"
#include "mpi/check.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_CHUNK ((size_t)1 << 24)
#define FLAG_STOP 1

/* Broadcast header: four int64 in native order (every rank runs the same build). */
enum { H_FORMAT, H_VERSION, H_COUNT, H_FLAGS, H_WORDS };

typedef enum {
    R_LISTENING, /* header receive posted */
    R_RECEIVING, /* header arrived, chunk receives posted */
    R_READY,     /* back buffer complete, not yet swapped */
    R_STOPPED,   /* the source said stop; nothing posted */
} replica_state;

struct rlvr_weights {
    MPI_Comm comm;
    int rank;
    size_t n, chunk, n_chunks;
    int64_t header[H_WORDS];
    MPI_Request *reqs;     /* (1 + n_chunks): [0] header, [1..] chunks */
    int n_reqs;            /* requests in flight in reqs (source: all; replica: the current phase's) */
    int64_t version;       /* source: last published; replica: front's */
    uint64_t swaps;

    /* source */
    float *staging;        /* (n) what is being broadcast */
    bool in_flight;
    bool stop_sent;

    /* replica */
    float *front, *back;   /* (n) each */
    replica_state state;
    int64_t incoming;      /* version in back, -1 when none */
};

static size_t chunk_len(const rlvr_weights *w, size_t i) {
    size_t start = i * w->chunk;
    return w->n - start < w->chunk ? w->n - start : w->chunk;
}

static int post_header(rlvr_weights *w) {
    w->reqs[0] = MPI_REQUEST_NULL;
    RLVR_MPI_CHECK(MPI_Ibcast(w->header, H_WORDS, MPI_INT64_T, 0, w->comm, &w->reqs[0]));
    w->n_reqs = 1;
    w->state = R_LISTENING;
    return 0;
}

/* Posts the chunk broadcasts of `buf` into reqs[1..]. */
static int post_chunks(rlvr_weights *w, float *buf) {
    for (size_t i = 0; i < w->n_chunks; i++)
        RLVR_MPI_CHECK(
            MPI_Ibcast(buf + i * w->chunk, (int)chunk_len(w, i), MPI_FLOAT, 0, w->comm, &w->reqs[1 + i]));
    return 0;
}

int rlvr_weights_new(rlvr_weights **out, MPI_Comm comm, size_t n_params, size_t chunk_floats) {
    if (!out) return rlvr_error_set(RLVR_EINVAL, "rlvr_weights_new: NULL output");
    *out = NULL;
    if (comm == MPI_COMM_NULL)
        return rlvr_error_set(RLVR_EINVAL, "rlvr_weights_new: MPI_COMM_NULL (this rank is not on the weights "
                                           "communicator: only the leader and rollout ranks are)");
    if (n_params == 0) return rlvr_error_set(RLVR_EINVAL, "rlvr_weights_new: zero parameters");
    if (chunk_floats == 0) chunk_floats = DEFAULT_CHUNK;
    if (chunk_floats > (size_t)INT_MAX) chunk_floats = (size_t)INT_MAX;
    rlvr_weights *w;
    RLVR_ALLOC(w, 1);
    w->comm = comm;
    w->n = n_params;
    w->chunk = chunk_floats;
    w->n_chunks = (n_params + chunk_floats - 1) / chunk_floats;
    w->version = -1;
    w->incoming = -1;
    int rc = 0;
    RLVR_MPI_GOTO(MPI_Comm_rank(comm, &w->rank), rc, fail);
    if (w->n_chunks > (size_t)INT_MAX - 1) {
        rc = rlvr_error_set(RLVR_ELIMIT, "%zu parameters in chunks of %zu floats need too many broadcasts",
                            n_params, chunk_floats);
        goto fail;
    }
    w->reqs = malloc((1 + w->n_chunks) * sizeof *w->reqs);
    if (w->rank == 0) {
        w->staging = malloc(n_params * sizeof *w->staging);
    } else {
        w->front = calloc(n_params, sizeof *w->front);
        w->back = calloc(n_params, sizeof *w->back);
    }
    if (!w->reqs || (w->rank == 0 ? !w->staging : !w->front || !w->back)) {
        rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory for %zu weights (%s)", n_params,
                       w->rank == 0 ? "staging buffer" : "front and back buffers");
        goto fail;
    }
    for (size_t i = 0; i <= w->n_chunks; i++) w->reqs[i] = MPI_REQUEST_NULL;
    if (w->rank != 0 && (rc = post_header(w)) < 0) goto fail;
    *out = w;
    return 0;
fail:
    w->n_reqs = 0;
    rlvr_weights_free(w);
    return rc;
}

void rlvr_weights_free(rlvr_weights *w) {
    if (!w) return;
    /* A posted broadcast cannot be freed (MPI 3.1, section 5.12) and would
     * write into the buffers later: leave the buffers to the process when one is pending. */
    bool pending = false;
    for (int i = 0; i < w->n_reqs; i++) pending |= w->reqs[i] != MPI_REQUEST_NULL;
    if (pending) return;
    free(w->reqs);
    free(w->staging);
    free(w->front);
    free(w->back);
    free(w);
}

bool rlvr_weights_is_source(const rlvr_weights *w) { return w && w->rank == 0; }
size_t rlvr_weights_count(const rlvr_weights *w) { return w ? w->n : 0; }

void rlvr_weights_get_status(const rlvr_weights *w, rlvr_weights_status *st) {
    if (!st) return;
    memset(st, 0, sizeof *st);
    st->version = -1;
    st->incoming_version = -1;
    if (!w) return;
    st->version = w->version;
    st->incoming_version = w->rank == 0 ? -1 : w->incoming;
    st->swaps = w->swaps;
    if (w->rank == 0) {
        st->in_flight = w->in_flight;
        st->stopped = w->stop_sent;
    } else {
        st->receiving = w->state == R_RECEIVING;
        st->ready = w->state == R_READY;
        st->stopped = w->state == R_STOPPED;
    }
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void backoff(long *delay_us) {
    struct timespec ts = {0, *delay_us * 1000L};
    nanosleep(&ts, NULL);
    if (*delay_us < 1000) *delay_us *= 2;
    if (*delay_us > 1000) *delay_us = 1000;
}

/* ---- source ---- */

static int need_source(const rlvr_weights *w, const char *what) {
    if (!w) return rlvr_error_set(RLVR_EINVAL, "%s: NULL weights", what);
    if (w->rank != 0)
        return rlvr_error_set(RLVR_ESTATE, "%s: only rank 0 of the weights communicator (the leader) publishes",
                              what);
    return 0;
}

static int start_broadcast(rlvr_weights *w, int64_t version, int64_t flags) {
    w->header[H_FORMAT] = RLVR_WEIGHTS_FORMAT;
    w->header[H_VERSION] = version;
    w->header[H_COUNT] = (int64_t)w->n;
    w->header[H_FLAGS] = flags;
    w->reqs[0] = MPI_REQUEST_NULL;
    RLVR_MPI_CHECK(MPI_Ibcast(w->header, H_WORDS, MPI_INT64_T, 0, w->comm, &w->reqs[0]));
    w->n_reqs = 1;
    w->in_flight = true;
    if (!(flags & FLAG_STOP)) {
        RLVR_TRY(post_chunks(w, w->staging));
        w->n_reqs = 1 + (int)w->n_chunks;
    }
    return 0;
}

int rlvr_weights_publish_start(rlvr_weights *w, const float *params, int64_t version) {
    RLVR_TRY(need_source(w, "rlvr_weights_publish_start"));
    if (!params) return rlvr_error_set(RLVR_EINVAL, "rlvr_weights_publish_start: NULL parameters");
    if (w->stop_sent) return rlvr_error_set(RLVR_ESTATE, "weights: publish after publish_stop");
    if (w->in_flight)
        return rlvr_error_set(RLVR_ESTATE,
                              "weights version %lld is still being broadcast: wait for it before publishing %lld",
                              (long long)w->version, (long long)version);
    if (version <= w->version)
        return rlvr_error_set(RLVR_EINVAL, "weights version %lld published after version %lld: versions must grow",
                              (long long)version, (long long)w->version);
    memcpy(w->staging, params, w->n * sizeof *params);
    RLVR_TRY(start_broadcast(w, version, 0));
    w->version = version;
    return 0;
}

int rlvr_weights_publish_stop(rlvr_weights *w) {
    RLVR_TRY(need_source(w, "rlvr_weights_publish_stop"));
    if (w->stop_sent) return 0;
    if (w->in_flight)
        return rlvr_error_set(RLVR_ESTATE, "weights: publish_stop while version %lld is still being broadcast",
                              (long long)w->version);
    RLVR_TRY(start_broadcast(w, w->version, FLAG_STOP));
    w->stop_sent = true;
    return 0;
}

int rlvr_weights_publish_test(rlvr_weights *w, bool *done) {
    RLVR_TRY(need_source(w, "rlvr_weights_publish_test"));
    if (!done) return rlvr_error_set(RLVR_EINVAL, "rlvr_weights_publish_test: NULL result");
    if (w->in_flight) {
        int flag = 0;
        RLVR_MPI_CHECK(MPI_Testall(w->n_reqs, w->reqs, &flag, MPI_STATUSES_IGNORE));
        if (flag) {
            w->in_flight = false;
            w->n_reqs = 0;
        }
    }
    *done = !w->in_flight;
    return 0;
}

int rlvr_weights_publish_wait(rlvr_weights *w, double timeout_s, const volatile sig_atomic_t *stop) {
    double start = now_s();
    long delay = 20;
    for (;;) {
        bool done = false;
        RLVR_TRY(rlvr_weights_publish_test(w, &done));
        if (done) return 0;
        if (stop && *stop)
            return rlvr_error_set(RLVR_EINTERRUPTED, "stopped while broadcasting weights version %lld",
                                  (long long)w->version);
        if (timeout_s >= 0 && now_s() - start >= timeout_s)
            return rlvr_error_set(RLVR_ELIMIT,
                                  "broadcast of weights version %lld did not complete within %.3g s: are the "
                                  "rollout ranks progressing (rlvr_weights_progress)?",
                                  (long long)w->version, timeout_s);
        backoff(&delay);
    }
}

int rlvr_weights_publish(rlvr_weights *w, const float *params, int64_t version, double timeout_s,
                         const volatile sig_atomic_t *stop) {
    RLVR_TRY(rlvr_weights_publish_start(w, params, version));
    return rlvr_weights_publish_wait(w, timeout_s, stop);
}

/* ---- replica ---- */

static int need_replica(const rlvr_weights *w, const char *what) {
    if (!w) return rlvr_error_set(RLVR_EINVAL, "%s: NULL weights", what);
    if (w->rank == 0)
        return rlvr_error_set(RLVR_ESTATE, "%s: rank 0 of the weights communicator is the source, not a replica",
                              what);
    return 0;
}

/* The header arrived: check it and post the chunk receives (or stop). */
static int header_arrived(rlvr_weights *w) {
    w->n_reqs = 0;
    if (w->header[H_FORMAT] != RLVR_WEIGHTS_FORMAT)
        return rlvr_error_set(RLVR_EFORMAT,
                              "weights broadcast format %lld is not understood by this build (it reads %d): are "
                              "all ranks running the same rlvr build?",
                              (long long)w->header[H_FORMAT], RLVR_WEIGHTS_FORMAT);
    if (w->header[H_FLAGS] & FLAG_STOP) {
        w->state = R_STOPPED;
        return 0;
    }
    if (w->header[H_COUNT] != (int64_t)w->n)
        return rlvr_error_set(RLVR_EFORMAT,
                              "the leader broadcasts %lld weights but this rank expects %zu: model configs differ",
                              (long long)w->header[H_COUNT], w->n);
    w->incoming = w->header[H_VERSION];
    RLVR_TRY(post_chunks(w, w->back));
    w->n_reqs = 1 + (int)w->n_chunks;
    w->reqs[0] = MPI_REQUEST_NULL;
    w->state = R_RECEIVING;
    return 0;
}

int rlvr_weights_progress(rlvr_weights *w) {
    RLVR_TRY(need_replica(w, "rlvr_weights_progress"));
    int flag = 0;
    if (w->state == R_LISTENING) {
        RLVR_MPI_CHECK(MPI_Test(&w->reqs[0], &flag, MPI_STATUS_IGNORE));
        if (!flag) return 0;
        RLVR_TRY(header_arrived(w));
    }
    if (w->state == R_RECEIVING) {
        RLVR_MPI_CHECK(MPI_Testall(w->n_reqs, w->reqs, &flag, MPI_STATUSES_IGNORE));
        if (flag) {
            w->n_reqs = 0;
            w->state = R_READY;
        }
    }
    return 0;
}

int rlvr_weights_swap_if_ready(rlvr_weights *w, bool *swapped) {
    RLVR_TRY(need_replica(w, "rlvr_weights_swap_if_ready"));
    if (!swapped) return rlvr_error_set(RLVR_EINVAL, "rlvr_weights_swap_if_ready: NULL result");
    *swapped = false;
    RLVR_TRY(rlvr_weights_progress(w));
    if (w->state != R_READY) return 0;
    float *t = w->front;
    w->front = w->back;
    w->back = t;
    w->version = w->incoming;
    w->incoming = -1;
    w->swaps++;
    *swapped = true;
    return post_header(w); /* listen for the next version right away */
}

int rlvr_weights_receive(rlvr_weights *w, double timeout_s, const volatile sig_atomic_t *stop, bool *stopped) {
    RLVR_TRY(need_replica(w, "rlvr_weights_receive"));
    if (stopped) *stopped = false;
    double start = now_s();
    long delay = 20;
    for (;;) {
        bool swapped = false;
        RLVR_TRY(rlvr_weights_swap_if_ready(w, &swapped));
        if (swapped) return 0;
        if (w->state == R_STOPPED) {
            if (stopped) *stopped = true;
            return 0;
        }
        if (stop && *stop) return rlvr_error_set(RLVR_EINTERRUPTED, "stopped while waiting for new weights");
        if (timeout_s >= 0 && now_s() - start >= timeout_s)
            return rlvr_error_set(RLVR_ELIMIT, "no new weights arrived within %.3g s (current version %lld)",
                                  timeout_s, (long long)w->version);
        backoff(&delay);
    }
}

const float *rlvr_weights_current(const rlvr_weights *w, int64_t *version) {
    if (!w) return NULL;
    if (version) *version = w->version;
    return w->rank == 0 ? NULL : w->front;
}
