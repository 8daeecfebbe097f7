/* mpi/queue.h — nonblocking point-to-point message queues between ranks.
 *
 * One queue per rank on the roles' world communicator (mpi/roles.h); peers
 * are world ranks. Each message kind has its own tag (RLVR_MPI_TAG_BASE +
 * kind), so a rank can wait for verdicts while records pile up unread.
 * Sends are MPI_Isend from buffers the queue owns (at most max_pending in
 * flight); receives are matched probes (MPI_Improbe + MPI_Mrecv), which
 * never block on a message that has not arrived. Waiting always has a
 * timeout and a stop flag (set by a signal handler), so a rank can notice
 * shutdown instead of hanging in MPI. MPI calls stay on one thread. */
#ifndef RLVR_MPI_QUEUE_H
#define RLVR_MPI_QUEUE_H

#include "mpi/wire.h"

#include <mpi.h>
#include <signal.h>
#include <stdbool.h>

#define RLVR_MPI_TAG_BASE 7000

/* The tag messages of `kind` travel with. */
static inline int rlvr_mpi_tag(rlvr_msg_kind kind) { return RLVR_MPI_TAG_BASE + (int)kind; }

typedef struct {
    int source;         /* sender's rank in the queue's communicator */
    rlvr_msg_kind kind; /* from the tag; the wire decoders check the body agrees */
    rlvr_wire_buf body; /* encoded message, reused by the next receive */
} rlvr_mpi_msg;

void rlvr_mpi_msg_free(rlvr_mpi_msg *m);

typedef struct rlvr_mpi_queue rlvr_mpi_queue;

/* `comm` is borrowed (it must outlive the queue); max_pending ≥ 1 bounds the
 * sends in flight and the memory they hold. */
int rlvr_mpi_queue_new(rlvr_mpi_queue **out, MPI_Comm comm, int max_pending);

/* Call rlvr_mpi_queue_flush first. Sends still in flight are detached
 * (MPI_Request_free) and their buffers deliberately leaked, since MPI may
 * still read them. */
void rlvr_mpi_queue_free(rlvr_mpi_queue *q);

/* Starts sending msg->data[0..len) to `dest`. The queue takes the bytes by
 * swapping *msg with a spare buffer (msg comes back empty, ready to encode
 * the next message). RLVR_ELIMIT when max_pending sends are still in flight
 * after completing the finished ones: progress, then try again. */
int rlvr_mpi_queue_send(rlvr_mpi_queue *q, int dest, rlvr_msg_kind kind, rlvr_wire_buf *msg);

/* Completes finished sends; *pending (may be NULL) = sends still in flight. */
int rlvr_mpi_queue_progress(rlvr_mpi_queue *q, int *pending);

/* Takes one message of `kind` (RLVR_MSG_ANY: any rlvr kind) from `source`
 * (MPI_ANY_SOURCE: anyone) if one has arrived; *got says whether. Also
 * progresses sends. Messages from one sender with one tag arrive in order. */
int rlvr_mpi_queue_poll(rlvr_mpi_queue *q, int source, rlvr_msg_kind kind, rlvr_mpi_msg *out, bool *got);

/* Like poll, but waits (sleeping 20 µs … 1 ms between polls) until a
 * message arrives (0), timeout_s seconds pass (RLVR_ELIMIT; timeout_s < 0
 * waits without a time limit) or *stop becomes nonzero (RLVR_EINTERRUPTED;
 * stop may be NULL). */
int rlvr_mpi_queue_wait(rlvr_mpi_queue *q, int source, rlvr_msg_kind kind, rlvr_mpi_msg *out, double timeout_s,
                        const volatile sig_atomic_t *stop);

/* Waits until every send has completed, with the same timeout and stop rules. */
int rlvr_mpi_queue_flush(rlvr_mpi_queue *q, double timeout_s, const volatile sig_atomic_t *stop);

/* Sends in flight without completing anything. */
int rlvr_mpi_queue_pending(const rlvr_mpi_queue *q);

#endif
