/* train/verifier_rank.c — a verifier rank of `rlvr train` over MPI ranks:
 * it verifies finished rollouts in its enclaves with the one-process code
 * (train/verifiers.h, verdict cache included) (docs/WIRE.md "Training
 * protocol").
 *
 * Receives a RECORD with its patch from a rollout rank for each rollout
 * whose run index j has j mod V = its verifier index, and from the leader
 * STEP (the stop agreement, synchronous mode) and STOP. Sends each VERDICT
 * to the leader; in async mode also a SIGNAL control when it caught a
 * signal, and DONE after STOP. */
#include "core/error.h"
#include "core/log.h"
#include "train/dist_internal.h"
#include "train/verifiers.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* A verifier rank's state. */
typedef struct {
    dist *d;
    rlvr_verifiers *verifiers; /* this rank's enclaves and verdict cache */
    rlvr_wire_buf patch;       /* the patch received last */
} verifier_rank;

/* Verifies one record from a rollout rank and sends the verdict to the leader. */
static int verify_one(verifier_rank *vr) {
    dist *d = vr->d;
    rlvr_wire_buf *patch = &vr->patch;
    const rlvr_run *r = d->run;
    rlvr_wire_job_info info;
    RLVR_TRY(rlvr_wire_decode_job_record(&d->rec, &info, patch, d->msg.body.data, d->msg.body.len));
    const rlvr_task *task = info.task_index < (int64_t)rlvr_task_pool_size(r->pool)
                                ? rlvr_task_pool_get(r->pool, (size_t)info.task_index)
                                : NULL;
    if (!task || strcmp(task->id, d->rec.task_id) != 0)
        return rlvr_error_set(RLVR_EFORMAT, "world rank %d sent a record of task %s with pool index %lld, which "
                                            "this rank's pool does not hold",
                              d->msg.source, d->rec.task_id, (long long)info.task_index);
    rlvr_harness_job job = {.task = task, .step = 0, .sequence = d->rec.sample_sequence, .record = d->rec,
                            .calls = info.calls, .calls_parsed = info.calls_parsed,
                            .patch = patch->len ? (char *)patch->data : NULL, .patch_len = patch->len,
                            .public_tests_changed = info.public_tests_changed != 0,
                            .patch_reason = info.patch_reason};
    int rc = rlvr_verifiers_verify(vr->verifiers, &job, (size_t)info.task_index);
    d->rec = job.record; /* the buffers stay ours */
    RLVR_TRY(rc);
    rlvr_verdict_msg m = {d->rec.group_id, d->rec.rollout_index, d->rec.verdict, d->rec.verdict_reason,
                          d->rec.reward.outcome, d->rec.timings.verify_s};
    RLVR_TRY(rlvr_wire_encode_verdict(&d->out, &m));
    return rlvr_dist_send_out(d, RLVR_MPI_LEADER, RLVR_MSG_VERDICT);
}

static int verify_loop(verifier_rank *vr, int64_t *stop_step) {
    dist *d = vr->d;
    int rc = 0;
    while (rc == 0 && *stop_step == RLVR_DIST_NOT_STOPPED) {
        rc = rlvr_mpi_queue_wait(d->queue, MPI_ANY_SOURCE, RLVR_MSG_ANY, &d->msg, -1, NULL);
        if (rc < 0) break;
        if (d->msg.kind == RLVR_MSG_RECORD) {
            rc = verify_one(vr);
            continue;
        }
        rlvr_control_msg c;
        rc = d->msg.kind == RLVR_MSG_CONTROL && d->msg.source == RLVR_MPI_LEADER
                 ? rlvr_wire_decode_control(&c, d->msg.body.data, d->msg.body.len)
                 : rlvr_error_set(RLVR_EFORMAT, "a verifier rank got an unexpected %s message from world rank %d",
                                  rlvr_msg_kind_name(d->msg.kind), d->msg.source);
        if (rc < 0) break;
        if (c.what == RLVR_CONTROL_STEP) {
            int sig = 0;
            rc = rlvr_dist_agree_max(d, (int)rlvr_run_stop_flag, -1, &sig);
        } else if (c.what == RLVR_CONTROL_STOP) {
            *stop_step = c.step;
        }
    }
    return rc < 0 ? rc : rlvr_mpi_queue_flush(d->queue, -1, NULL);
}

/* Async mode: verifies until STOP, telling the leader about a caught
 * signal; after STOP drops the records still arriving and says DONE. */
static int verify_loop_async(verifier_rank *vr, int64_t *stop_step) {
    dist *d = vr->d;
    bool told = false;
    int rc = 0;
    while (rc == 0 && *stop_step == RLVR_DIST_NOT_STOPPED) {
        rc = rlvr_dist_forward_signal(d, &told);
        bool got = false;
        if (rc == 0) rc = rlvr_mpi_queue_poll(d->queue, MPI_ANY_SOURCE, RLVR_MSG_ANY, &d->msg, &got);
        if (rc < 0) break;
        if (!got) {
            rlvr_dist_sleep_us(RLVR_DIST_POLL_US);
            continue;
        }
        if (d->msg.kind == RLVR_MSG_RECORD) {
            rc = verify_one(vr);
            continue;
        }
        rlvr_control_msg c = {0};
        if (d->msg.kind == RLVR_MSG_CONTROL && d->msg.source == RLVR_MPI_LEADER)
            rc = rlvr_wire_decode_control(&c, d->msg.body.data, d->msg.body.len);
        if (rc == 0 && c.what != RLVR_CONTROL_STOP)
            rc = rlvr_error_set(RLVR_EFORMAT, "a verifier rank (async) got an unexpected %s message from world rank %d",
                                rlvr_msg_kind_name(d->msg.kind), d->msg.source);
        if (rc == 0) *stop_step = c.step;
    }
    if (rc < 0) return rc;
    /* every rollout rank said DONE before this STOP: what is left is theirs, unverified */
    for (bool got = true; got;) RLVR_TRY(rlvr_mpi_queue_poll(d->queue, MPI_ANY_SOURCE, RLVR_MSG_RECORD, &d->msg, &got));
    RLVR_TRY(rlvr_mpi_queue_flush(d->queue, -1, NULL));
    return rlvr_dist_say_done(d, *stop_step);
}

int rlvr_dist_verify(dist *d) {
    rlvr_run *r = d->run;
    verifier_rank vr = {.d = d};
    int all = 0, rc = rlvr_dist_agree_max(d, 0, -1, &all); /* 1: the leader has built the pool */
    if (rc < 0) return rlvr_dist_abort(d, rc);
    if (all) return rlvr_dist_setup_failed(d, all);
    rc = rlvr_run_pool(r, false);
    if (rc == 0) rc = rlvr_verifiers_new(&vr.verifiers, r);
    int code = rc < 0 ? rlvr_dist_report(d, rc) : 0;
    rc = rlvr_dist_agree_max(d, code, -1, &all); /* 2: every rank is set up */
    if (rc < 0) return rlvr_dist_abort(d, rc);
    int64_t stop_step = RLVR_DIST_NOT_STOPPED;
    if (all == 0) {
        rc = d->async ? verify_loop_async(&vr, &stop_step) : verify_loop(&vr, &stop_step);
        if (rc < 0) return rlvr_dist_abort(d, rc);
        int64_t runs = 0, cached = 0, freed = 0;
        rlvr_verifiers_counts(vr.verifiers, &runs, &cached, &freed);
        rlvr_progress("train: verifier rank %d: %lld enclave verifications, %lld verdicts from the cache; %lld idle task "
                      "enclaves freed",
                      d->roles.role_rank, (long long)runs, (long long)cached, (long long)freed);
    }
    rlvr_verifiers_free(vr.verifiers);
    rlvr_wire_buf_free(&vr.patch);
    if (all) return rlvr_dist_setup_failed(d, all);
    return stop_step < r->stop_step ? 1 : 0;
}

