/* train/follower.c — a follower trainer rank of `rlvr train`
 * over MPI ranks ([layout] trainer = T > 1): a replica of the leader's
 * trainer that computes the gradient of its token-balanced part of every
 * optimizer step, writes that part to its own shard, and steps AdamW in
 * lockstep (docs/WIRE.md "Data-parallel trainer ranks").
 *
 * Receives from the leader: the start state (weights, AdamW moments, KL
 * reference) broadcast on the trainer communicator, UPDATE then the batch
 * and its part (train/dp.c), STEP (the stop agreement, synchronous mode)
 * and STOP; takes part in the ordered gradient sum and the replicas' weight
 * check. Sends nothing else but, in async mode, a SIGNAL control when it
 * caught a signal and DONE after STOP. */
#include "core/error.h"
#include "train/dist_internal.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

/* A follower trainer rank's state. */
typedef struct {
    dist *d;
    rlvr_trainer *replica; /* the model only: no pool, verifiers, metrics or checkpoints */
    rlvr_dist_dp dp;
} follower;

/* A non-leader trainer rank until STOP: UPDATE (the step), STEP (the
 * synchronous stop agreement), STOP (async mode: then DONE). Caught signals
 * go to the leader in async mode, into the STEP agreement otherwise. */
static int follow_loop(follower *f, int64_t *stop_step) {
    dist *d = f->d;
    bool told = false;
    while (*stop_step == RLVR_DIST_NOT_STOPPED) {
        if (d->async) RLVR_TRY(rlvr_dist_forward_signal(d, &told));
        bool got = false;
        RLVR_TRY(rlvr_mpi_queue_poll(d->queue, RLVR_MPI_LEADER, RLVR_MSG_ANY, &d->msg, &got));
        if (!got) {
            rlvr_dist_sleep_us(RLVR_DIST_POLL_US);
            continue;
        }
        rlvr_control_msg c = {0};
        if (d->msg.kind != RLVR_MSG_CONTROL)
            return rlvr_error_set(RLVR_EFORMAT, "a trainer rank got an unexpected %s message from the leader",
                                  rlvr_msg_kind_name(d->msg.kind));
        RLVR_TRY(rlvr_wire_decode_control(&c, d->msg.body.data, d->msg.body.len));
        if (c.what == RLVR_CONTROL_UPDATE) {
            RLVR_TRY(rlvr_dist_dp_receive_update(&f->dp, f->replica));
        } else if (c.what == RLVR_CONTROL_STEP) {
            int sig = 0;
            RLVR_TRY(rlvr_dist_agree_max(d, (int)rlvr_run_stop_flag, -1, &sig));
        } else if (c.what == RLVR_CONTROL_STOP) {
            *stop_step = c.step;
        } else {
            return rlvr_error_set(RLVR_EFORMAT, "a trainer rank got control %d from the leader", (int)c.what);
        }
    }
    RLVR_TRY(rlvr_mpi_queue_flush(d->queue, -1, NULL));
    if (!d->async) return 0;
    return rlvr_dist_say_done(d, *stop_step);
}

int rlvr_dist_follow(dist *d) {
    follower f = {.d = d, .dp = {.d = d}};
    rlvr_run *r = d->run;
    rlvr_model *model = NULL;
    int all = 0, rc = rlvr_dist_agree_max(d, 0, -1, &all); /* 1: the leader has built the pool */
    if (rc < 0) return rlvr_dist_abort(d, rc);
    if (all) return rlvr_dist_setup_failed(d, all);
    rc = rlvr_run_pool(r, false);
    if (rc == 0) rc = rlvr_run_new_model(r, &model);
    if (rc == 0) rc = rlvr_trainer_new_replica(&f.replica, r, model);
    int code = rc < 0 ? rlvr_dist_report(d, rc) : 0;
    rc = rlvr_dist_agree_max(d, code, -1, &all); /* 2: every rank is set up */
    if (rc < 0) return rlvr_dist_abort(d, rc);
    int64_t stop_step = RLVR_DIST_NOT_STOPPED;
    if (all == 0) {
        rlvr_dist_dp_set(&f.dp, f.replica);
        rc = rlvr_dist_dp_bcast_state(&f.dp, f.replica);
        if (rc == 0) rc = follow_loop(&f, &stop_step);
        if (rc < 0) return rlvr_dist_abort(d, rc);
    }
    rlvr_trainer_free(f.replica);
    rlvr_dist_dp_free(&f.dp);
    if (all) return rlvr_dist_setup_failed(d, all);
    return stop_step < r->stop_step ? 1 : 0;
}

