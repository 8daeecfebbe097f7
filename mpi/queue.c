#include "mpi/queue.h"
#include "mpi/check.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct rlvr_mpi_queue {
    MPI_Comm comm;
    int cap;                /* send slots */
    int pending;            /* slots with a request in flight */
    MPI_Request *requests;  /* (cap) MPI_REQUEST_NULL when the slot is free */
    rlvr_wire_buf *bufs;    /* (cap) bytes of the send in that slot, kept for reuse */
    int *done;              /* (cap) indices from MPI_Testsome */
    int next_kind;          /* where an RLVR_MSG_ANY poll starts, for fairness */
};

void rlvr_mpi_msg_free(rlvr_mpi_msg *m) {
    if (!m) return;
    rlvr_wire_buf_free(&m->body);
    memset(m, 0, sizeof *m);
}

int rlvr_mpi_queue_new(rlvr_mpi_queue **out, MPI_Comm comm, int max_pending) {
    if (!out) return rlvr_error_set(RLVR_EINVAL, "rlvr_mpi_queue_new: NULL output");
    *out = NULL;
    if (comm == MPI_COMM_NULL) return rlvr_error_set(RLVR_EINVAL, "rlvr_mpi_queue_new: MPI_COMM_NULL");
    if (max_pending < 1) return rlvr_error_set(RLVR_EINVAL, "queue needs max_pending ≥ 1, got %d", max_pending);
    rlvr_mpi_queue *q;
    RLVR_ALLOC(q, 1);
    q->comm = comm;
    q->cap = max_pending;
    q->requests = calloc((size_t)max_pending, sizeof *q->requests);
    q->bufs = calloc((size_t)max_pending, sizeof *q->bufs);
    q->done = calloc((size_t)max_pending, sizeof *q->done);
    if (!q->requests || !q->bufs || !q->done) {
        rlvr_mpi_queue_free(q);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory for a queue of %d sends", max_pending);
    }
    for (int i = 0; i < max_pending; i++) q->requests[i] = MPI_REQUEST_NULL;
    q->next_kind = RLVR_MSG_WORK;
    *out = q;
    return 0;
}

void rlvr_mpi_queue_free(rlvr_mpi_queue *q) {
    if (!q) return;
    for (int i = 0; q->requests && i < q->cap; i++) {
        if (q->requests[i] != MPI_REQUEST_NULL) {
            MPI_Request_free(&q->requests[i]); /* the send goes on; its buffer must stay */
            continue;
        }
        if (q->bufs) rlvr_wire_buf_free(&q->bufs[i]);
    }
    free(q->requests);
    free(q->bufs);
    free(q->done);
    free(q);
}

int rlvr_mpi_queue_pending(const rlvr_mpi_queue *q) { return q ? q->pending : 0; }

int rlvr_mpi_queue_progress(rlvr_mpi_queue *q, int *pending) {
    if (!q) return rlvr_error_set(RLVR_EINVAL, "rlvr_mpi_queue_progress: NULL queue");
    if (q->pending > 0) {
        int n = 0;
        RLVR_MPI_CHECK(MPI_Testsome(q->cap, q->requests, &n, q->done, MPI_STATUSES_IGNORE));
        if (n != MPI_UNDEFINED) q->pending -= n; /* Testsome set the finished requests to MPI_REQUEST_NULL */
    }
    if (pending) *pending = q->pending;
    return 0;
}

int rlvr_mpi_queue_send(rlvr_mpi_queue *q, int dest, rlvr_msg_kind kind, rlvr_wire_buf *msg) {
    if (!q || !msg) return rlvr_error_set(RLVR_EINVAL, "rlvr_mpi_queue_send: NULL argument");
    if (kind <= RLVR_MSG_ANY || kind >= RLVR_MSG_KIND_COUNT)
        return rlvr_error_set(RLVR_EINVAL, "rlvr_mpi_queue_send: not a message kind: %d", (int)kind);
    if (msg->len > (size_t)INT_MAX)
        return rlvr_error_set(RLVR_ELIMIT, "%s message of %zu bytes is larger than one MPI send",
                              rlvr_msg_kind_name(kind), msg->len);
    RLVR_TRY(rlvr_mpi_queue_progress(q, NULL));
    int slot = -1;
    for (int i = 0; i < q->cap && slot < 0; i++)
        if (q->requests[i] == MPI_REQUEST_NULL) slot = i;
    if (slot < 0)
        return rlvr_error_set(RLVR_ELIMIT, "%d sends still in flight (queue limit): progress the queue and retry",
                              q->pending);
    rlvr_wire_buf mine = q->bufs[slot];
    q->bufs[slot] = *msg;
    *msg = mine;
    msg->len = 0;
    rlvr_wire_buf *b = &q->bufs[slot];
    RLVR_MPI_CHECK(MPI_Isend(b->data, (int)b->len, MPI_BYTE, dest, rlvr_mpi_tag(kind), q->comm, &q->requests[slot]));
    q->pending++;
    return 0;
}

/* One matched probe for one tag. */
static int probe_one(rlvr_mpi_queue *q, int source, rlvr_msg_kind kind, rlvr_mpi_msg *out, bool *got) {
    int flag = 0;
    MPI_Message message;
    MPI_Status status;
    RLVR_MPI_CHECK(MPI_Improbe(source, rlvr_mpi_tag(kind), q->comm, &flag, &message, &status));
    if (!flag) return 0;
    int count = 0;
    RLVR_MPI_CHECK(MPI_Get_count(&status, MPI_BYTE, &count));
    int rc = rlvr_wire_buf_reserve(&out->body, count > 0 ? (size_t)count : 1);
    if (rc < 0) {
        /* the matched message must still be received, or it is lost inside MPI */
        char sink;
        MPI_Mrecv(&sink, 0, MPI_BYTE, &message, MPI_STATUS_IGNORE);
        return rc;
    }
    RLVR_MPI_CHECK(MPI_Mrecv(out->body.data, count, MPI_BYTE, &message, &status));
    out->body.len = (size_t)count;
    out->source = status.MPI_SOURCE;
    out->kind = kind;
    *got = true;
    return 0;
}

int rlvr_mpi_queue_poll(rlvr_mpi_queue *q, int source, rlvr_msg_kind kind, rlvr_mpi_msg *out, bool *got) {
    if (!q || !out || !got) return rlvr_error_set(RLVR_EINVAL, "rlvr_mpi_queue_poll: NULL argument");
    if (kind < RLVR_MSG_ANY || kind >= RLVR_MSG_KIND_COUNT)
        return rlvr_error_set(RLVR_EINVAL, "rlvr_mpi_queue_poll: not a message kind: %d", (int)kind);
    *got = false;
    RLVR_TRY(rlvr_mpi_queue_progress(q, NULL));
    if (kind != RLVR_MSG_ANY) return probe_one(q, source, kind, out, got);
    int n = RLVR_MSG_KIND_COUNT - 1;
    for (int i = 0; i < n && !*got; i++) {
        rlvr_msg_kind k = (rlvr_msg_kind)(1 + (q->next_kind - 1 + i) % n);
        RLVR_TRY(probe_one(q, source, k, out, got));
    }
    q->next_kind = 1 + q->next_kind % n;
    return 0;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Sleeps *delay_us and doubles it up to 1 ms. */
static void backoff(long *delay_us) {
    struct timespec ts = {0, *delay_us * 1000L};
    nanosleep(&ts, NULL);
    if (*delay_us < 1000) *delay_us *= 2;
    if (*delay_us > 1000) *delay_us = 1000;
}

int rlvr_mpi_queue_wait(rlvr_mpi_queue *q, int source, rlvr_msg_kind kind, rlvr_mpi_msg *out, double timeout_s,
                        const volatile sig_atomic_t *stop) {
    double start = now_s();
    long delay = 20;
    for (;;) {
        bool got = false;
        RLVR_TRY(rlvr_mpi_queue_poll(q, source, kind, out, &got));
        if (got) return 0;
        if (stop && *stop)
            return rlvr_error_set(RLVR_EINTERRUPTED, "stopped while waiting for a %s message",
                                  kind == RLVR_MSG_ANY ? "queue" : rlvr_msg_kind_name(kind));
        if (timeout_s >= 0 && now_s() - start >= timeout_s)
            return rlvr_error_set(RLVR_ELIMIT, "no %s message arrived within %.3g s",
                                  kind == RLVR_MSG_ANY ? "queue" : rlvr_msg_kind_name(kind), timeout_s);
        backoff(&delay);
    }
}

int rlvr_mpi_queue_flush(rlvr_mpi_queue *q, double timeout_s, const volatile sig_atomic_t *stop) {
    double start = now_s();
    long delay = 20;
    for (;;) {
        int pending = 0;
        RLVR_TRY(rlvr_mpi_queue_progress(q, &pending));
        if (pending == 0) return 0;
        if (stop && *stop)
            return rlvr_error_set(RLVR_EINTERRUPTED, "stopped with %d sends still in flight", pending);
        if (timeout_s >= 0 && now_s() - start >= timeout_s)
            return rlvr_error_set(RLVR_ELIMIT, "%d sends still in flight after %.3g s: is the receiver polling?",
                                  pending, timeout_s);
        backoff(&delay);
    }
}
