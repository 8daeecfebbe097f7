/* mpi/weights.h — new policy weights from the leader to the rollout ranks.
 *
 * The weights are one flat float buffer of a size every rank knows, plus a
 * policy version (mpi/ knows nothing else about the model). They travel by
 * MPI_Ibcast on the roles' weights communicator (leader = rank 0 = source,
 * rollout ranks = replicas): first a header {format, version, count, flags},
 * then the floats in chunks. Every broadcast is nonblocking underneath, so
 * both variants can time out and notice a stop flag instead of hanging:
 *   synchronous mode  the leader calls rlvr_weights_publish (returns when its
 *                     part is done); a rollout rank calls rlvr_weights_receive
 *                     between steps (returns with the new weights in use);
 *   async mode        the leader calls rlvr_weights_publish_start and goes on
 *                     training; a rollout rank keeps sampling with its current
 *                     weights and calls rlvr_weights_swap_if_ready at turn
 *                     boundaries. A replica double-buffers: the broadcast lands
 *                     in a back buffer, and only a complete one is swapped in.
 * Replicas always have the next header broadcast posted, so they need no
 * separate announcement. Memory: the source keeps one staging copy (n
 * floats), each replica a front and a back buffer (2n floats). Shutdown: the leader calls rlvr_weights_publish_stop
 * (then publish_wait); replicas see `stopped` and can be freed. */
#ifndef RLVR_MPI_WEIGHTS_H
#define RLVR_MPI_WEIGHTS_H

#include <mpi.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RLVR_WEIGHTS_FORMAT 1

typedef struct rlvr_weights rlvr_weights;

typedef struct {
    int64_t version;          /* in use: replica's front buffer, or the source's last published; -1 = none */
    int64_t incoming_version; /* being received or received but not swapped in; -1 = none */
    bool receiving;           /* a header arrived, its floats are still in flight */
    bool ready;               /* the floats arrived; the next swap uses them */
    bool stopped;             /* the source said no more versions follow */
    bool in_flight;           /* source: a broadcast has not completed yet */
    uint64_t swaps;           /* versions swapped in so far (replica) */
} rlvr_weights_status;

/* Not a collective call; `comm` is borrowed. Rank 0 of `comm` is the source,
 * every other rank a replica (which posts the first header receive now).
 * chunk_floats bounds one MPI_Ibcast (0 = 16 Mi floats, 64 MiB). */
int rlvr_weights_new(rlvr_weights **out, MPI_Comm comm, size_t n_params, size_t chunk_floats);

/* A replica with a broadcast still posted (no stop seen) cannot complete it
 * alone: its request is abandoned, as MPI forbids freeing it. Finish with
 * publish_stop / receive first. */
void rlvr_weights_free(rlvr_weights *w);

bool rlvr_weights_is_source(const rlvr_weights *w);
size_t rlvr_weights_count(const rlvr_weights *w);
void rlvr_weights_get_status(const rlvr_weights *w, rlvr_weights_status *st);

/* ---- source (the leader) ---- */

/* Copies params[0..n) into the source's staging buffer and starts the
 * broadcast of `version` (must exceed the last published one). The caller
 * may change params right away. RLVR_ESTATE while the previous broadcast is
 * still in flight. */
int rlvr_weights_publish_start(rlvr_weights *w, const float *params, int64_t version);
int rlvr_weights_publish_test(rlvr_weights *w, bool *done);
/* Until the broadcast in flight completes (0), timeout_s passes
 * (RLVR_ELIMIT; < 0 = no limit) or *stop is set (RLVR_EINTERRUPTED). */
int rlvr_weights_publish_wait(rlvr_weights *w, double timeout_s, const volatile sig_atomic_t *stop);
/* publish_start + publish_wait: the synchronous variant. */
int rlvr_weights_publish(rlvr_weights *w, const float *params, int64_t version, double timeout_s,
                         const volatile sig_atomic_t *stop);
/* Starts the final broadcast (a header saying "stop"); complete it with
 * publish_wait. RLVR_ESTATE while a broadcast is in flight. */
int rlvr_weights_publish_stop(rlvr_weights *w);

/* ---- replicas (rollout ranks) ---- */

/* Drives the broadcast in flight without swapping: call it from event
 * loops so transfers progress while the rank is busy. */
int rlvr_weights_progress(rlvr_weights *w);
/* At a turn boundary: progresses, and when a complete version is waiting,
 * makes it current (*swapped = true); otherwise the current weights stay. */
int rlvr_weights_swap_if_ready(rlvr_weights *w, bool *swapped);
/* The synchronous variant: waits until a new version is swapped in (0) or
 * the source said stop (0, *stopped = true); RLVR_ELIMIT / RLVR_EINTERRUPTED
 * as in publish_wait. `stopped` may be NULL. */
int rlvr_weights_receive(rlvr_weights *w, double timeout_s, const volatile sig_atomic_t *stop, bool *stopped);

/* The weights in use and their version (-1 before the first). The pointer
 * changes at every swap: fetch it again after swap_if_ready / receive. NULL
 * on the source (its weights are the trainer's own). */
const float *rlvr_weights_current(const rlvr_weights *w, int64_t *version);

#endif
