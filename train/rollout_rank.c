/* train/rollout_rank.c — a rollout rank of `rlvr train` over MPI ranks: it
 * holds a copy of the policy and runs the harness on the work the leader
 * hands out (docs/WIRE.md "Training protocol").
 *
 * Receives from the leader: WORK (groups to generate), VERSION then the
 * weights' broadcast (synchronous mode; async mode swaps in whatever
 * version has arrived, between harness calls and at turn boundaries), STEP
 * (the stop agreement) and STOP. Sends each finished rollout's RECORD to the
 * leader and the record with its patch to its verifier rank; in async mode
 * also a SIGNAL control when it caught a signal, and DONE after STOP. */
#include "core/error.h"
#include "core/log.h"
#include "core/sys.h"
#include "envs/harness.h"
#include "policy/sampler.h"
#include "train/credit_wire.h"
#include "train/dist_internal.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Async mode: a finished rollout waiting to be sent. */
typedef struct {
    rlvr_harness_job job;
    rlvr_work_item item; /* its work item; the rollout is item.group_id + index */
    int index;
    int64_t version;     /* the weights version it was generated with */
    double due;          /* rlvr_now() when it may be sent (simulated environment delay) */
} held_job;

/* A rollout rank's state. */
typedef struct {
    rlvr_model *model;
    rlvr_sampler *sampler;
    int64_t version; /* weights in use; -1 before the first */
    rlvr_work_item *items;
    int n_items, cap_items;
    rlvr_harness_job *jobs;
    int cap_jobs;
    held_job *held; /* async mode */
    int n_held, cap_held;
    const rlvr_train_simulation *sim; /* benchmarks: environment delays; NULL: none */
    rlvr_credit_fork_start *starts;   /* (cap_items) Monte-Carlo credit: item i's fork start, if it has one */
    rlvr_wire_buf credit;             /* a record's credit bytes */
} roller;

/* The leader said VERSION v: take part in the broadcast and use the weights. */
static int roll_receive(dist *d, roller *ro, int64_t version) {
    bool stopped = false;
    RLVR_TRY(rlvr_weights_receive(d->weights, -1, NULL, &stopped));
    int64_t got = -1;
    const float *w = rlvr_weights_current(d->weights, &got);
    if (stopped || got != version)
        return rlvr_error_set(RLVR_ESTATE, "expected weights version %lld, the broadcast brought %s %lld",
                              (long long)version, stopped ? "a stop after" : "version", (long long)got);
    memcpy(rlvr_model_params(ro->model), w, rlvr_model_num_params(ro->model) * sizeof *w);
    ro->version = version;
    return 0;
}

/* A control message from the leader; *stop_step = the step reached after STOP. */
static int roll_control(dist *d, roller *ro, int64_t *stop_step) {
    rlvr_control_msg c;
    RLVR_TRY(rlvr_wire_decode_control(&c, d->msg.body.data, d->msg.body.len));
    if (c.what == RLVR_CONTROL_VERSION) return roll_receive(d, ro, c.version);
    if (c.what == RLVR_CONTROL_STEP) {
        int sig = 0;
        return rlvr_dist_agree_max(d, (int)rlvr_run_stop_flag, -1, &sig);
    }
    bool stopped = false; /* STOP: the broadcast's stop header follows */
    RLVR_TRY(rlvr_weights_receive(d->weights, -1, NULL, &stopped));
    if (!stopped) return rlvr_error_set(RLVR_ESTATE, "weights arrived after the leader's STOP");
    *stop_step = c.step;
    return 0;
}

static int roll_add_item(roller *ro, const rlvr_mpi_msg *m) {
    if (ro->n_items == ro->cap_items) {
        int cap = ro->cap_items ? 2 * ro->cap_items : 16;
        rlvr_work_item *p = realloc(ro->items, (size_t)cap * sizeof *p);
        if (!p) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        ro->items = p;
        rlvr_credit_fork_start *st = realloc(ro->starts, (size_t)cap * sizeof *st);
        if (!st) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        memset(st + ro->cap_items, 0, (size_t)(cap - ro->cap_items) * sizeof *st);
        ro->starts = st, ro->cap_items = cap;
    }
    RLVR_TRY(rlvr_wire_decode_work(&ro->items[ro->n_items], m->body.data, m->body.len));
    ro->n_items++;
    return 0;
}

/* Checks work items [0, count) against this rank's pool and seed (and, in
 * synchronous mode, its weights version); *n_jobs = their rollouts. */
static int check_items(const dist *d, const roller *ro, int count, int *n_jobs) {
    const rlvr_run *r = d->run;
    int n = 0;
    for (int i = 0; i < count; i++) {
        const rlvr_work_item *w = &ro->items[i];
        const rlvr_task *task = w->task_index < (int64_t)rlvr_task_pool_size(r->pool)
                                    ? rlvr_task_pool_get(r->pool, (size_t)w->task_index)
                                    : NULL;
        if (!task || strcmp(task->id, w->task_id) != 0 || w->seed != r->sampler.seed)
            return rlvr_error_set(RLVR_EFORMAT, "work item for task %s (pool index %lld, seed %llu) does not match "
                                                "this rank's pool and seed: do all ranks read the same run?",
                                  w->task_id, (long long)w->task_index, (unsigned long long)w->seed);
        if (!d->async && w->policy_version != ro->version)
            return rlvr_error_set(RLVR_ESTATE, "work item for weights version %lld, this rank holds %lld",
                                  (long long)w->policy_version, (long long)ro->version);
        n += w->group_size;
    }
    *n_jobs = n;
    return 0;
}

/* ro->jobs[0..n) = the rollouts of work items [0, count), zeroed and keyed;
 * a fork group's jobs start from its decoded prefix and workspace state. */
static int prepare_jobs(const dist *d, roller *ro, int count, int n) {
    if (n > ro->cap_jobs) {
        rlvr_harness_job *p = realloc(ro->jobs, (size_t)n * sizeof *p);
        if (!p) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        ro->jobs = p, ro->cap_jobs = n;
    }
    memset(ro->jobs, 0, (size_t)n * sizeof *ro->jobs);
    for (int i = 0, j = 0; i < count; i++) {
        const rlvr_work_item *w = &ro->items[i];
        if (w->fork_len > 0) {
            int rc = rlvr_credit_decode_fork(&ro->starts[i], w->fork, w->fork_len);
            if (rc < 0) return rlvr_error_wrap(rc, "work item of task %s", w->task_id);
        }
        for (int k = 0; k < w->group_size; k++, j++) {
            ro->jobs[j].task = rlvr_task_pool_get(d->run->pool, (size_t)w->task_index);
            ro->jobs[j].step = (uint32_t)w->step;
            ro->jobs[j].sequence = w->sample_sequence + (uint32_t)k;
            ro->jobs[j].capture_tools = w->capture_tools;
            ro->jobs[j].prefix = w->fork_len > 0 ? &ro->starts[i].prefix : NULL;
        }
    }
    return 0;
}

/* Work items [0, count) are done: their fork bytes and starts go. */
static void items_done(roller *ro, int count) {
    for (int i = 0; i < count; i++) {
        rlvr_wire_work_clear(&ro->items[i]);
        rlvr_credit_fork_start_free(&ro->starts[i]);
    }
}

/* Rollout k of work item w: the record (with Monte-Carlo credit's bytes) to
 * the leader, the record with its patch to its verifier rank. */
static int send_job(dist *d, roller *ro, rlvr_harness_job *job, const rlvr_work_item *w, int k, int64_t version) {
    job->record.group_id = w->group_id;
    job->record.rollout_index = k;
    job->record.policy_version = version;
    rlvr_wire_job_info info = {w->task_index, job->calls, job->calls_parsed, (uint8_t)job->public_tests_changed,
                               job->patch_reason, NULL, 0};
    RLVR_TRY(rlvr_credit_encode_job(&ro->credit, job));
    info.credit = ro->credit.data, info.credit_len = ro->credit.len;
    RLVR_TRY(rlvr_wire_encode_job_record(&d->out, &job->record, &info, NULL, 0));
    RLVR_TRY(rlvr_dist_send_out(d, RLVR_MPI_LEADER, RLVR_MSG_RECORD));
    info.credit = NULL, info.credit_len = 0; /* the verifier needs the patch, not the states */
    RLVR_TRY(rlvr_wire_encode_job_record(&d->out, &job->record, &info, job->patch, job->patch_len));
    return rlvr_dist_send_out(d, rlvr_dist_verifier_of(d, w->group_id + k), RLVR_MSG_RECORD);
}

/* Benchmarks: sends the call's records when their environments' delays
 * have passed, soonest first (the environments wait side by side). */
static int send_delayed(dist *d, roller *ro, int n) {
    double t0 = rlvr_now(), *due = malloc((size_t)n * sizeof *due);
    int *item = malloc((size_t)n * sizeof *item), *index = malloc((size_t)n * sizeof *index), rc = 0;
    if (!due || !item || !index) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    for (int i = 0, j = 0; rc == 0 && i < ro->n_items; i++)
        for (int k = 0; k < ro->items[i].group_size; k++, j++)
            due[j] = t0 + ro->sim->delay(ro->sim->arg, &ro->jobs[j], 0), item[j] = i, index[j] = k;
    for (int left = n; rc == 0 && left > 0; left--) {
        int next = -1;
        for (int j = 0; j < n; j++)
            if (item[j] >= 0 && (next < 0 || due[j] < due[next])) next = j;
        double wait = due[next] - rlvr_now();
        if (wait > 0) rlvr_dist_sleep_us((long)(wait * 1e6));
        rc = send_job(d, ro, &ro->jobs[next], &ro->items[item[next]], index[next], ro->version);
        item[next] = -1;
    }
    free(due), free(item), free(index);
    return rc;
}

/* Runs the collected work items in one harness call and sends the results. */
static int roll_work(dist *d, roller *ro) {
    const rlvr_run *r = d->run;
    int n = 0;
    int rc = check_items(d, ro, ro->n_items, &n);
    if (rc == 0) rc = prepare_jobs(d, ro, ro->n_items, n);
    if (rc < 0) {
        items_done(ro, ro->n_items);
        return rc;
    }
    rc = rlvr_harness_run(ro->sampler, r->tok, &r->harness, ro->jobs, n);
    if (rc == 0 && ro->sim) {
        rc = send_delayed(d, ro, n);
    } else {
        for (int i = 0, j = 0; i < ro->n_items; i++)
            for (int k = 0; k < ro->items[i].group_size; k++, j++) {
                if (rc < 0) break;
                rc = send_job(d, ro, &ro->jobs[j], &ro->items[i], k, ro->version);
            }
    }
    for (int j = 0; j < n; j++) rlvr_harness_job_clear(&ro->jobs[j]);
    items_done(ro, ro->n_items);
    ro->n_items = 0;
    return rc;
}

static int roll_loop(dist *d, roller *ro, int64_t *stop_step) {
    while (*stop_step == RLVR_DIST_NOT_STOPPED) {
        RLVR_TRY(rlvr_mpi_queue_wait(d->queue, RLVR_MPI_LEADER, RLVR_MSG_ANY, &d->msg, -1, NULL));
        if (d->msg.kind == RLVR_MSG_CONTROL) {
            RLVR_TRY(roll_control(d, ro, stop_step));
            continue;
        }
        if (d->msg.kind != RLVR_MSG_WORK)
            return rlvr_error_set(RLVR_EFORMAT, "a rollout rank got an unexpected %s message from the leader",
                                  rlvr_msg_kind_name(d->msg.kind));
        /* everything handed out so far runs in one harness call (decoding batched across groups) */
        RLVR_TRY(roll_add_item(ro, &d->msg));
        for (bool got = true; got;) {
            RLVR_TRY(rlvr_mpi_queue_poll(d->queue, RLVR_MPI_LEADER, RLVR_MSG_WORK, &d->msg, &got));
            if (got) RLVR_TRY(roll_add_item(ro, &d->msg));
        }
        /* work and control travel with different tags: new weights announced before this work may still be
         * on their way */
        while (ro->items[0].policy_version > ro->version) {
            RLVR_TRY(rlvr_mpi_queue_wait(d->queue, RLVR_MPI_LEADER, RLVR_MSG_CONTROL, &d->msg, -1, NULL));
            RLVR_TRY(roll_control(d, ro, stop_step));
            if (*stop_step != RLVR_DIST_NOT_STOPPED) return rlvr_error_set(RLVR_ESTATE, "the leader said STOP with work pending");
        }
        RLVR_TRY(roll_work(d, ro));
    }
    return rlvr_mpi_queue_flush(d->queue, -1, NULL);
}

/* ---- bounded-async mode ---- */

/* Async mode: weights that arrived replace the rank's own (between harness
 * calls, and at turn boundaries inside them). */
static int swap_in(dist *d, roller *ro) {
    bool swapped = false;
    RLVR_TRY(rlvr_weights_swap_if_ready(d->weights, &swapped));
    if (!swapped) return 0;
    int64_t got = -1;
    const float *w = rlvr_weights_current(d->weights, &got);
    memcpy(rlvr_model_params(ro->model), w, rlvr_model_num_params(ro->model) * sizeof *w);
    ro->version = got;
    return 0;
}

typedef struct {
    dist *d;
    roller *ro;
    int rc;
} turn_swap;

/* rlvr_harness_event_fn: a turn just ended, so no sampler call is running. */
static void swap_at_turn(void *arg, rlvr_harness_event event, const rlvr_harness_job *job, const rlvr_turn *turn) {
    (void)job, (void)turn;
    turn_swap *ts = arg;
    if (event == RLVR_HARNESS_EVENT_TURN && ts->rc == 0) ts->rc = swap_in(ts->d, ts->ro);
}


/* Work items at the front of the queue that start now: all of them, or
 * (simulation) those whose rollouts fit in the free environments. */
static int items_that_fit(const roller *ro) {
    if (!ro->sim) return ro->n_items;
    int free_envs = ro->sim->environments - ro->n_held, k = 0;
    while (k < ro->n_items && (ro->items[k].group_size <= free_envs || (k == 0 && ro->n_held == 0)))
        free_envs -= ro->items[k++].group_size;
    return k;
}

static int hold(roller *ro, rlvr_harness_job *job, const rlvr_work_item *w, int k, int64_t version, double due) {
    if (ro->n_held == ro->cap_held) {
        int cap = ro->cap_held ? 2 * ro->cap_held : 32;
        held_job *p = realloc(ro->held, (size_t)cap * sizeof *p);
        if (!p) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        ro->held = p, ro->cap_held = cap;
    }
    ro->held[ro->n_held++] = (held_job){*job, *w, k, version, due};
    ro->held[ro->n_held - 1].job.prefix = NULL; /* it pointed into the item's start, freed next */
    ro->held[ro->n_held - 1].item.fork = NULL, ro->held[ro->n_held - 1].item.fork_len = 0;
    memset(job, 0, sizeof *job);
    return 0;
}

/* Runs work items [0, count) in one harness call; the finished rollouts are
 * held until sent. Every record carries the version the call started with:
 * weights swapped in at a turn boundary are newer, so it is the oldest
 * version any of its tokens was sampled with. */
static int roll_work_async(dist *d, roller *ro, int count) {
    const rlvr_run *r = d->run;
    int n = 0;
    RLVR_TRY(check_items(d, ro, count, &n));
    RLVR_TRY(prepare_jobs(d, ro, count, n));
    turn_swap ts = {d, ro, 0};
    rlvr_harness_options opt = r->harness;
    opt.on_event = swap_at_turn, opt.event_arg = &ts;
    int64_t version = ro->version;
    int rc = rlvr_harness_run(ro->sampler, r->tok, &opt, ro->jobs, n);
    if (rc == 0) rc = ts.rc;
    double now = rlvr_now();
    for (int i = 0, j = 0; i < count; i++)
        for (int k = 0; k < ro->items[i].group_size; k++, j++) {
            double due = rc == 0 && ro->sim ? now + ro->sim->delay(ro->sim->arg, &ro->jobs[j], 0) : now;
            if (rc == 0) rc = hold(ro, &ro->jobs[j], &ro->items[i], k, version, due);
            rlvr_harness_job_clear(&ro->jobs[j]);
        }
    items_done(ro, count);
    memmove(ro->items, ro->items + count, (size_t)(ro->n_items - count) * sizeof *ro->items);
    memmove(ro->starts, ro->starts + count, (size_t)(ro->n_items - count) * sizeof *ro->starts);
    memset(ro->starts + ro->n_items - count, 0, (size_t)count * sizeof *ro->starts);
    ro->n_items -= count;
    return rc;
}

/* Sends the held rollouts whose time has come (all of them without a simulation). */
static int send_due(dist *d, roller *ro) {
    double now = rlvr_now();
    int kept = 0, rc = 0;
    for (int i = 0; i < ro->n_held; i++) {
        held_job *h = &ro->held[i];
        if (rc == 0 && h->due <= now) {
            rc = send_job(d, ro, &h->job, &h->item, h->index, h->version);
            rlvr_harness_job_clear(&h->job);
        } else {
            ro->held[kept++] = *h;
        }
    }
    ro->n_held = kept;
    return rc;
}

/* STOP: in-flight work is dropped; the sends finish, DONE tells the leader
 * nothing more comes from here, and the weights' stop header ends it. */
static int roll_stop_async(dist *d, roller *ro, int64_t step, int64_t *stop_step) {
    for (bool got = true; got;) /* work sent before STOP travels with another tag */
        RLVR_TRY(rlvr_mpi_queue_poll(d->queue, RLVR_MPI_LEADER, RLVR_MSG_WORK, &d->msg, &got));
    for (int i = 0; i < ro->n_held; i++) rlvr_harness_job_clear(&ro->held[i].job);
    items_done(ro, ro->n_items);
    ro->n_held = 0, ro->n_items = 0;
    RLVR_TRY(rlvr_mpi_queue_flush(d->queue, -1, NULL));
    rlvr_control_msg c = {RLVR_CONTROL_DONE, step, ro->version};
    RLVR_TRY(rlvr_wire_encode_control(&d->out, &c));
    RLVR_TRY(rlvr_dist_send_out(d, RLVR_MPI_LEADER, RLVR_MSG_CONTROL));
    RLVR_TRY(rlvr_mpi_queue_flush(d->queue, -1, NULL));
    for (bool stopped = false; !stopped;) RLVR_TRY(rlvr_weights_receive(d->weights, -1, NULL, &stopped));
    *stop_step = step;
    return 0;
}

static int roll_loop_async(dist *d, roller *ro, int64_t *stop_step) {
    bool told = false;
    for (;;) {
        for (bool got = true; got;) {
            RLVR_TRY(rlvr_mpi_queue_poll(d->queue, RLVR_MPI_LEADER, RLVR_MSG_ANY, &d->msg, &got));
            if (!got) break;
            if (d->msg.kind == RLVR_MSG_WORK) {
                RLVR_TRY(roll_add_item(ro, &d->msg));
                continue;
            }
            rlvr_control_msg c = {0};
            if (d->msg.kind == RLVR_MSG_CONTROL) RLVR_TRY(rlvr_wire_decode_control(&c, d->msg.body.data, d->msg.body.len));
            if (c.what != RLVR_CONTROL_STOP)
                return rlvr_error_set(RLVR_EFORMAT, "a rollout rank (async) got an unexpected %s message from the leader",
                                      rlvr_msg_kind_name(d->msg.kind));
            return roll_stop_async(d, ro, c.step, stop_step);
        }
        RLVR_TRY(rlvr_dist_forward_signal(d, &told));
        RLVR_TRY(send_due(d, ro));
        RLVR_TRY(swap_in(d, ro));
        int count = ro->version >= 0 ? items_that_fit(ro) : 0;
        if (count > 0) RLVR_TRY(roll_work_async(d, ro, count));
        else rlvr_dist_sleep_us(RLVR_DIST_POLL_US);
    }
}

int rlvr_dist_roll(dist *d, const rlvr_train_simulation *sim) {
    rlvr_run *r = d->run;
    roller ro = {.version = -1, .sim = sim};
    int all = 0, rc = rlvr_dist_agree_max(d, 0, -1, &all); /* 1: the leader has built the pool */
    if (rc < 0) return rlvr_dist_abort(d, rc);
    if (all) return rlvr_dist_setup_failed(d, all);
    rc = rlvr_run_pool(r, false);
    if (rc == 0) rc = rlvr_run_require_tokenizer(r); /* the leader has set it by now */
    if (rc == 0) rc = rlvr_run_host(r); /* workspaces of "tests" tasks */
    if (rc == 0) rc = rlvr_run_new_model(r, &ro.model);
    if (rc == 0) rc = rlvr_sampler_new(&ro.sampler, ro.model, &r->sampler);
    if (rc == 0) rc = rlvr_weights_new(&d->weights, d->roles.weights, rlvr_model_num_params(ro.model), 0);
    int code = rc < 0 ? rlvr_dist_report(d, rc) : 0;
    rc = rlvr_dist_agree_max(d, code, -1, &all); /* 2: every rank is set up */
    if (rc < 0) return rlvr_dist_abort(d, rc);
    int64_t stop_step = RLVR_DIST_NOT_STOPPED;
    if (all == 0) {
        rc = d->async ? roll_loop_async(d, &ro, &stop_step) : roll_loop(d, &ro, &stop_step);
        if (rc < 0) return rlvr_dist_abort(d, rc);
    }
    for (int i = 0; i < ro.n_held; i++) rlvr_harness_job_clear(&ro.held[i].job);
    free(ro.held);
    rlvr_sampler_free(ro.sampler);
    rlvr_model_free(ro.model);
    items_done(&ro, ro.n_items);
    free(ro.items);
    free(ro.starts);
    free(ro.jobs);
    rlvr_wire_buf_free(&ro.credit);
    if (all) return rlvr_dist_setup_failed(d, all);
    return stop_step < r->stop_step ? 1 : 0;
}

