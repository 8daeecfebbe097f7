/* train/dist_internal.h — what the rank roles of `rlvr train` over MPI
 * share (private to train/): the state every rank has, the messaging
 * helpers, the start-up agreement, and each role's entry point. One file
 * per role (the leader's bounded-async mode in a second file):
 * train/leader.c and train/leader_async.c, train/rollout_rank.c,
 * train/verifier_rank.c, train/follower.c; the trainer communicator's
 * protocol that the leader and the follower trainer ranks share is
 * train/dp.c; the dispatch is train/dist.c. Messages: docs/WIRE.md
 * "Training protocol". */
#ifndef RLVR_TRAIN_DIST_INTERNAL_H
#define RLVR_TRAIN_DIST_INTERNAL_H

#include "core/record.h"
#include "io/config.h"
#include "mpi/admission.h"
#include "mpi/queue.h"
#include "mpi/roles.h"
#include "mpi/weights.h"
#include "mpi/wire.h"
#include "train/dist.h"
#include "train/trainer.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RLVR_DIST_MAX_PENDING 64     /* sends in flight per rank */
#define RLVR_DIST_POLL_US 500        /* async mode: sleep between polls when there is nothing to do */
#define RLVR_DIST_NOT_STOPPED INT64_MIN /* no STOP from the leader yet */

/* What every rank holds, whatever its role. */
typedef struct {
    rlvr_run *run;
    bool async;            /* [train] max_staleness > 0 */
    rlvr_mpi_roles roles;
    rlvr_mpi_queue *queue;
    rlvr_weights *weights; /* leader: source; rollout rank: replica; NULL on other ranks */
    double timeout_s;      /* the leader's waits */
    rlvr_wire_buf out;     /* the message being encoded */
    rlvr_mpi_msg msg;      /* the message received last */
    rlvr_rollout rec;      /* scratch record for decoding */
    /* how this rank's part ended (rlvr_train_outcome) */
    bool reported, abort;
} dist;

/* ---- shared helpers (train/dist.c) ---- */

void rlvr_dist_sleep_us(long us);

/* The world rank of role rank i of `role`. */
int rlvr_dist_world_rank(const dist *d, rlvr_rank_role role, int i);

/* The verifier rank (world rank) of the rollout with run index run_job. */
int rlvr_dist_verifier_of(const dist *d, int64_t run_job);

/* Prints this rank's error (only this rank knows its role); returns the
 * start-up agreement's value for it. */
int rlvr_dist_report(dist *d, int rc);

/* After start-up a rank cannot leave alone: the others would wait for it.
 * Says the error and returns rc with d->abort set; the caller returns at
 * once (nothing freed: the whole job is aborted next). */
int rlvr_dist_abort(dist *d, int rc);

/* The start-up agreement ended with `all` > 0: some rank failed to set up
 * (and said so); every rank ends with that failure. */
int rlvr_dist_setup_failed(dist *d, int all);

/* Sends d->out (encoded) to world rank `dest`, waiting for room in the
 * queue (the leader for [layout] timeout_s at most). */
int rlvr_dist_send_out(dist *d, int dest, rlvr_msg_kind kind);
int rlvr_dist_send_control(dist *d, int dest, rlvr_control_kind what, int64_t step, int64_t version);
/* A control message to every rank but the leader. */
int rlvr_dist_send_control_all(dist *d, rlvr_control_kind what, int64_t step, int64_t version);

/* Collective over the world: *out = the largest `local` (timeout_s < 0:
 * no limit). */
int rlvr_dist_agree_max(dist *d, int local, double timeout_s, int *out);

/* Async mode: tells the leader once that this rank caught a signal. */
int rlvr_dist_forward_signal(dist *d, bool *told);

/* Async shutdown: DONE with the step reached to the leader, then the
 * queued sends flushed. */
int rlvr_dist_say_done(dist *d, int64_t stop_step);

/* ---- the roles: each returns 0 (finished), 1 (stopped by a signal) or a
 * negative error (d->reported, d->abort say how) ---- */

/* World rank 0: the trainer, with hooks that hand out the work. hosts:
 * every rank's host name in world-rank order (the run manifest). */
int rlvr_dist_lead(dist *d, bool resume, const char *const *hosts);
/* A rollout rank: the harness on the work the leader hands out. */
int rlvr_dist_roll(dist *d, const rlvr_train_simulation *sim);
/* A verifier rank: a verdict for every finished rollout sent to it. */
int rlvr_dist_verify(dist *d);
/* A non-leader trainer rank: its part of every optimizer step. */
int rlvr_dist_follow(dist *d);

/* ---- data-parallel trainer ranks (train/dp.c), leader and followers ---- */

typedef struct {
    dist *d;
    char *update_buf;       /* the step's batch as broadcast (native byte order: one binary) */
    size_t update_cap, update_len;
    int64_t replica_checks; /* steps after which the trainer ranks' weights were compared (and equal) */
    rlvr_wire_buf part;     /* [shards] write: one trainer rank's part of the batch as whole records */
    rlvr_rollout *part_recs; /* non-leader trainer rank: its part, decoded (buffers kept between steps) */
    int n_part_recs, cap_part_recs;
} rlvr_dist_dp;

/* The update batch as bytes in p's buffer (the broadcast's payload), and
 * back: views into that buffer (recs[i] and tok_adv[i] point into it;
 * free the view's arrays with rlvr_dist_dp_view_free). */
typedef struct {
    rlvr_update_batch b;
    rlvr_rollout *recs;
    const rlvr_rollout **ptrs;
    const float **tok_adv; /* Monte-Carlo credit: per-token advantages; else NULL */
} rlvr_dist_dp_view;

int rlvr_dist_dp_encode_update(rlvr_dist_dp *p, const rlvr_update_batch *b);
int rlvr_dist_dp_decode_update(rlvr_dist_dp *p, rlvr_dist_dp_view *v);
void rlvr_dist_dp_view_free(rlvr_dist_dp_view *v);

/* The trainer's data-parallel hooks (rlvr_trainer_set_dp) over p. */
void rlvr_dist_dp_set(rlvr_dist_dp *p, rlvr_trainer *t);
/* The leader's weights, AdamW moments and KL reference to every trainer
 * rank. */
int rlvr_dist_dp_bcast_state(rlvr_dist_dp *p, rlvr_trainer *t);
/* UPDATE on a non-leader trainer rank: the batch, then the step on its part. */
int rlvr_dist_dp_receive_update(rlvr_dist_dp *p, rlvr_trainer *replica);
void rlvr_dist_dp_free(rlvr_dist_dp *p);

/* ---- the leader's state (train/leader.c, train/leader_async.c) ---- */

typedef struct rlvr_leader_flight rlvr_leader_flight; /* async mode: a group handed out and not yet taken */

typedef struct {
    dist *d;
    rlvr_trainer *trainer;
    int64_t published; /* weights version the rollout ranks hold; -1 = none yet */
    char promoted[RLVR_IO_PATH_CAP]; /* rollout_policy = promoted: the checkpoint published last ("": none) */
    int64_t next_job;  /* jobs handed out so far: a group's id is the run index of its first job */
    /* async mode */
    rlvr_admission adm;   /* the Δv gate, counted over the job */
    rlvr_leader_flight **flights; /* handed out, not yet taken by the trainer, in hand-out order */
    int n_flights, cap_flights;
    int64_t finished;     /* groups finished so far (a flight's finish order) */
    int64_t *outstanding; /* (R) rollouts handed to rollout rank i whose record has not arrived */
    int64_t draw_version; /* trainer version of the draws counted by draw_round / draw_groups */
    uint32_t draw_round, draw_groups;
    /* data-parallel trainer ranks ([layout] trainer > 1) */
    rlvr_dist_dp dp;
    /* Monte-Carlo credit: a fork group's start, encoded for its work item */
    rlvr_wire_buf fork, fork_scratch;
    int n_fork_flights; /* async mode: flights of forks (never admitted as groups) */
} rlvr_leader;

/* Jobs i.. that one work item carries: one task, one step, consecutive
 * sequences, one fork start and one capture mask (pool_index equal);
 * returns the end of the group. */
int rlvr_leader_work_group(const rlvr_harness_job *jobs, const size_t *pool_index, int i, int n);
/* WORK for jobs[0 .. G) (one work group) to world rank dest: their keys,
 * capture mask and fork start, with group_id and the version it is for. */
int rlvr_leader_send_work(rlvr_leader *l, const rlvr_harness_job *jobs, int G, size_t pool_index, int64_t group_id,
                          int64_t version, int dest);

/* Bounded-async mode: the take hook and the publishing after each update
 * set on t, with the admission gate and the hand-out counts ready; prints
 * the mode. */
int rlvr_leader_async_start(rlvr_leader *l, rlvr_trainer *t);
/* The admission counts, one line to stderr. */
void rlvr_leader_async_summary(const rlvr_leader *l);
/* The end of an async job; `reached` is the step STOP carries. */
int rlvr_leader_async_shutdown(rlvr_leader *l, int64_t reached);
/* The groups still handed out, freed. */
void rlvr_leader_async_free(rlvr_leader *l);

#endif
