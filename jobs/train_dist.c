/* jobs/train_dist.c — `rlvr train` over MPI ranks, synchronous mode
 * (jobs/train_dist.h; the messages are in docs/WIRE.md "Training protocol").
 *
 * Leader (world rank 0): rlvr_trainer_run with two hooks.
 *   generate   splits the round's jobs into groups (consecutive jobs of one
 *              task and step with consecutive sampling sequences), sends
 *              group g to rollout rank g mod R as a work item, then collects
 *              one record (from the rollout rank) and one verdict (from
 *              verifier rank j mod V, j = the job's index counted over the
 *              run) per job, into jobs[j] whatever the arrival order;
 *   after_update  sends VERSION to the rollout ranks and broadcasts the new
 *              weights, then STEP to every rank, and all ranks agree on the
 *              stop flag (the largest signal number any rank caught).
 * Rollout rank: waits for the leader; runs the harness on the work items
 * that have arrived, with the weights of the version they name; sends each
 * record to the leader and the record with its patch to its verifier rank.
 * Verifier rank: verifies each record it gets (rlvr_verifiers_verify, the
 * one-process code, cache included) and sends the verdict to the leader.
 * At the end (or after a stop) the leader sends STOP to every rank.
 *
 * Only the leader's waits have a time limit ([layout] timeout_s): the other
 * ranks wait for the leader as long as it works (a checkpoint, a long step).
 * An error after start-up ends the job with MPI_Abort. */
#include "jobs/train_dist.h"

#include "core/error.h"
#include "core/log.h"
#include "core/sys.h"
#include "io/checkpoint.h"
#include "jobs/commands.h"
#include "jobs/train.h"
#include "jobs/verifiers.h"
#include "mpi/check.h"
#include "mpi/layout.h"
#include "mpi/queue.h"
#include "mpi/roles.h"
#include "mpi/weights.h"
#include "mpi/wire.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DIST_MAX_PENDING 64 /* sends in flight per rank */
#define NOT_STOPPED INT64_MIN /* no STOP from the leader yet */

typedef struct {
    rlvr_run *run;
    rlvr_mpi_roles roles;
    rlvr_mpi_queue *queue;
    rlvr_weights *weights; /* leader: source; rollout rank: replica; NULL on verifier ranks */
    double timeout_s;      /* the leader's waits */
    rlvr_wire_buf out;     /* the message being encoded */
    rlvr_mpi_msg msg;      /* the message received last */
    rlvr_rollout rec;      /* scratch record for decoding */
    /* leader */
    rlvr_trainer *trainer;
    int64_t published; /* weights version the rollout ranks hold; -1 = none yet */
    int64_t next_job;  /* jobs handed out so far: a group's id is the run index of its first job */
} dist;

static void sleep_us(long us) {
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

static int exit_code_of(int rc) { return rc == RLVR_ECONFIG ? RLVR_EXIT_USAGE : RLVR_EXIT_FAILURE; }

static int world_rank(const dist *d, rlvr_rank_role role, int i) {
    return rlvr_layout_world_rank(&d->roles.layout, role, i);
}

static const char *role_name(const dist *d) { return rlvr_role_name(d->roles.role); }

/* Prints this rank's error; returns the exit status it stands for. */
static int report(const dist *d, int rc) {
    const char *msg = rlvr_error_last();
    if (d->roles.is_leader) fprintf(stderr, "rlvr train: error: %s\n", msg[0] ? msg : rlvr_error_name(rc));
    else
        fprintf(stderr, "rlvr train: %s rank %d (world rank %d): error: %s\n", role_name(d), d->roles.role_rank,
                d->roles.world_rank, msg[0] ? msg : rlvr_error_name(rc));
    return exit_code_of(rc);
}

/* After start-up a rank cannot leave alone: the others would wait for it. */
static _Noreturn void abort_job(dist *d, int rc) {
    int code = report(d, rc);
    fflush(NULL);
    MPI_Abort(d->roles.world != MPI_COMM_NULL ? d->roles.world : MPI_COMM_WORLD, code);
    exit(code);
}

/* ---- messages ------------------------------------------------------------------------------- */

/* Sends d->out (encoded) to world rank `dest`, waiting for room in the queue. */
static int send_out(dist *d, int dest, rlvr_msg_kind kind) {
    double t0 = rlvr_now(), limit = d->roles.is_leader ? d->timeout_s : -1;
    for (long delay = 20;; delay = delay < 1000 ? 2 * delay : 1000) {
        int rc = rlvr_mpi_queue_send(d->queue, dest, kind, &d->out);
        if (rc != RLVR_ELIMIT) return rc;
        if (limit >= 0 && rlvr_now() - t0 > limit)
            return rlvr_error_set(RLVR_ELIMIT, "sending a %s message to world rank %d: no room in the queue "
                                               "for %.0f s ([layout] timeout_s): is that rank alive?",
                                  rlvr_msg_kind_name(kind), dest, limit);
        sleep_us(delay);
    }
}

static int send_control(dist *d, int dest, rlvr_control_kind what, int64_t step, int64_t version) {
    rlvr_control_msg c = {what, step, version};
    RLVR_TRY(rlvr_wire_encode_control(&d->out, &c));
    return send_out(d, dest, RLVR_MSG_CONTROL);
}

/* Sends a control message to every rank but the leader. */
static int send_control_all(dist *d, rlvr_control_kind what, int64_t step, int64_t version) {
    for (int w = 1; w < d->roles.world_size; w++) RLVR_TRY(send_control(d, w, what, step, version));
    return 0;
}

/* Collective over the world: *out = the largest `local`. Sleeps between
 * tests, so ranks waiting for a busy leader leave the cores to it. */
static int agree_max(dist *d, int local, double timeout_s, int *out) {
    MPI_Request req;
    RLVR_MPI_CHECK(MPI_Iallreduce(&local, out, 1, MPI_INT, MPI_MAX, d->roles.world, &req));
    double t0 = rlvr_now();
    for (long delay = 20;; delay = delay < 5000 ? 2 * delay : 5000) {
        int done = 0;
        RLVR_MPI_CHECK(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
        if (done) return 0;
        RLVR_TRY(rlvr_mpi_queue_progress(d->queue, NULL));
        if (timeout_s >= 0 && rlvr_now() - t0 > timeout_s)
            return rlvr_error_set(RLVR_ELIMIT, "not every rank reached the step boundary within %.0f s "
                                               "([layout] timeout_s): a rank died or hangs",
                                  timeout_s);
        sleep_us(delay);
    }
}

/* ---- leader --------------------------------------------------------------------------------- */

/* VERSION to every rollout rank, then the broadcast of the weights. */
static int publish(dist *d, const rlvr_model *model, int64_t version) {
    for (int i = 0; i < d->roles.layout.rollout; i++)
        RLVR_TRY(send_control(d, world_rank(d, RLVR_ROLE_ROLLOUT, i), RLVR_CONTROL_VERSION, version, version));
    /* the weights are only read: rlvr_model_params has no const variant */
    RLVR_TRY(rlvr_weights_publish(d->weights, rlvr_model_params((rlvr_model *)model), version, d->timeout_s, NULL));
    d->published = version;
    return 0;
}

/* One round of a step in flight: jobs[j] is the job of run index base + j. */
typedef struct {
    rlvr_harness_job *jobs;
    int n;
    int64_t base, version;
    int *rollout;               /* (n) world rank generating job j */
    uint8_t *have;              /* (n) bit 0: record arrived, bit 1: verdict arrived */
    rlvr_verdict_msg *verdicts; /* (n) */
} round_state;

static int verifier_of(const dist *d, int64_t run_job) {
    return world_rank(d, RLVR_ROLE_VERIFIER, (int)(run_job % d->roles.layout.verifier));
}

/* Hands out the round's jobs as work items: one per group of consecutive
 * jobs with one task, one step and consecutive sequences; group g goes to
 * rollout rank g mod R, and its id is the run index of its first job. */
static int hand_out(dist *d, round_state *rs, const size_t *pool_index) {
    const rlvr_harness_job *jobs = rs->jobs;
    for (int i = 0, g = 0; i < rs->n; g++) {
        int k = i + 1;
        while (k < rs->n && jobs[k].task == jobs[i].task && jobs[k].step == jobs[i].step &&
               jobs[k].sequence == jobs[k - 1].sequence + 1 && pool_index[k] == pool_index[i])
            k++;
        rlvr_work_item w = {.task_index = (int64_t)pool_index[i], .group_id = rs->base + i, .group_size = k - i,
                            .step = jobs[i].step, .policy_version = rs->version, .seed = d->run->sampler.seed,
                            .sample_sequence = jobs[i].sequence};
        snprintf(w.task_id, sizeof w.task_id, "%s", jobs[i].task->id);
        int dest = world_rank(d, RLVR_ROLE_ROLLOUT, g % d->roles.layout.rollout);
        for (int j = i; j < k; j++) rs->rollout[j] = dest;
        RLVR_TRY(rlvr_wire_encode_work(&d->out, &w));
        RLVR_TRY(send_out(d, dest, RLVR_MSG_WORK));
        i = k;
    }
    return 0;
}

/* The error when results stop coming: what is missing, from which ranks. */
static int missing_error(const dist *d, const round_state *rs) {
    int W = d->roles.world_size, n_rec = 0, n_ver = 0;
    int *count = calloc((size_t)W, sizeof *count), *first = malloc((size_t)W * sizeof *first);
    if (!count || !first) {
        free(count), free(first);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    }
    for (int j = rs->n - 1; j >= 0; j--) { /* per rank: how many, and the first job missing */
        if (!(rs->have[j] & 1)) n_rec++, count[rs->rollout[j]]++, first[rs->rollout[j]] = j;
        int v = verifier_of(d, rs->base + j);
        if (!(rs->have[j] & 2)) n_ver++, count[v]++, first[v] = j;
    }
    char list[1024] = "";
    size_t at = 0;
    for (int w = 0; w < W && at < sizeof list; w++) {
        if (!count[w]) continue;
        const rlvr_harness_job *job = &rs->jobs[first[w]];
        rlvr_rank_role role = RLVR_ROLE_TRAINER;
        rlvr_layout_role_of(&d->roles.layout, w, &role, NULL);
        int k = snprintf(list + at, sizeof list - at, "%s %d %s from %s world rank %d (the first: task %s sequence %u)",
                         at ? ";" : "", count[w], role == RLVR_ROLE_ROLLOUT ? "records" : "verdicts",
                         rlvr_role_name(role), w, job->task->id, job->sequence);
        at = k > 0 ? at + (size_t)k : at;
    }
    free(count), free(first);
    return rlvr_error_set(RLVR_ELIMIT,
                          "nothing arrived for %.0f s ([layout] timeout_s): %d of %d records and %d of %d verdicts "
                          "of the round are missing:%s. A rank died or hangs",
                          d->timeout_s, n_rec, rs->n, n_ver, rs->n, list);
}

/* A record from a rollout rank into its job. */
static int take_record(dist *d, round_state *rs) {
    rlvr_wire_job_info info;
    RLVR_TRY(rlvr_wire_decode_job_record(&d->rec, &info, NULL, d->msg.body.data, d->msg.body.len));
    int64_t j = d->rec.group_id - rs->base + d->rec.rollout_index;
    if (j < 0 || j >= rs->n || (rs->have[j] & 1) || d->msg.source != rs->rollout[j])
        return rlvr_error_set(RLVR_EFORMAT, "world rank %d sent a record for group %lld rollout %d, which is not "
                                            "awaited from it",
                              d->msg.source, (long long)d->rec.group_id, d->rec.rollout_index);
    rlvr_harness_job *job = &rs->jobs[j];
    if (d->rec.sample_sequence != job->sequence || strcmp(d->rec.task_id, job->task->id) != 0 ||
        d->rec.policy_version != rs->version)
        return rlvr_error_set(RLVR_EFORMAT,
                              "world rank %d sent a record (task %s, sequence %u, version %lld) for the job of task "
                              "%s, sequence %u, version %lld",
                              d->msg.source, d->rec.task_id, d->rec.sample_sequence, (long long)d->rec.policy_version,
                              job->task->id, job->sequence, (long long)rs->version);
    rlvr_rollout empty = job->record; /* zeroed by the trainer */
    job->record = d->rec;
    d->rec = empty;
    job->record.group_id = 0, job->record.rollout_index = 0; /* as the harness leaves them */
    job->calls = info.calls, job->calls_parsed = info.calls_parsed;
    job->public_tests_changed = info.public_tests_changed, job->patch_reason = info.patch_reason;
    rs->have[j] |= 1;
    return 0;
}

static int take_verdict(dist *d, round_state *rs) {
    rlvr_verdict_msg v;
    RLVR_TRY(rlvr_wire_decode_verdict(&v, d->msg.body.data, d->msg.body.len));
    int64_t j = v.group_id - rs->base + v.rollout_index;
    if (j < 0 || j >= rs->n || (rs->have[j] & 2) || d->msg.source != verifier_of(d, rs->base + j))
        return rlvr_error_set(RLVR_EFORMAT, "world rank %d sent a verdict for group %lld rollout %d, which is not "
                                            "awaited from it",
                              d->msg.source, (long long)v.group_id, v.rollout_index);
    rs->verdicts[j] = v;
    rs->have[j] |= 2;
    return 0;
}

/* Waits until every job of the round has its record and its verdict, then
 * writes the verifier's part of each record exactly as rlvr_verifiers_verify
 * leaves it. */
static int collect(dist *d, round_state *rs, step_stats *s, double t0) {
    int left_rec = rs->n, left_ver = rs->n;
    double records_done = t0;
    while (left_rec > 0 || left_ver > 0) {
        int rc = rlvr_mpi_queue_wait(d->queue, MPI_ANY_SOURCE, RLVR_MSG_ANY, &d->msg, d->timeout_s, NULL);
        if (rc == RLVR_ELIMIT) return missing_error(d, rs);
        RLVR_TRY(rc);
        if (d->msg.kind == RLVR_MSG_RECORD) {
            RLVR_TRY(take_record(d, rs));
            if (--left_rec == 0) records_done = rlvr_now();
        } else if (d->msg.kind == RLVR_MSG_VERDICT) {
            RLVR_TRY(take_verdict(d, rs));
            left_ver--;
        } else {
            return rlvr_error_set(RLVR_EFORMAT, "the leader got an unexpected %s message from world rank %d",
                                  rlvr_msg_kind_name(d->msg.kind), d->msg.source);
        }
    }
    for (int j = 0; j < rs->n; j++) {
        rlvr_rollout *r = &rs->jobs[j].record;
        r->verdict = rs->verdicts[j].verdict;
        r->verdict_reason = rs->verdicts[j].reason;
        r->reward.outcome = rs->verdicts[j].outcome;
        r->timings.verify_s = rs->verdicts[j].verify_s;
    }
    s->generate_wall += records_done - t0;
    s->verify_wall += rlvr_now() - records_done;
    return 0;
}

/* rlvr_generate_fn: the round's jobs go to rollout and verifier ranks. */
static int dist_generate(void *ctx, rlvr_harness_job *jobs, int n, const size_t *pool_index, int64_t version,
                         step_stats *s) {
    dist *d = ctx;
    double t0 = rlvr_now();
    if (version != d->published) RLVR_TRY(publish(d, rlvr_trainer_model(d->trainer), version));
    round_state rs = {.jobs = jobs, .n = n, .base = d->next_job, .version = version,
                      .rollout = malloc((size_t)(n > 0 ? n : 1) * sizeof *rs.rollout),
                      .have = calloc((size_t)(n > 0 ? n : 1), 1),
                      .verdicts = calloc((size_t)(n > 0 ? n : 1), sizeof *rs.verdicts)};
    d->next_job += n;
    int rc = rs.rollout && rs.have && rs.verdicts ? 0 : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    if (rc == 0) rc = hand_out(d, &rs, pool_index);
    if (rc == 0) rc = collect(d, &rs, s, t0);
    free(rs.rollout), free(rs.have), free(rs.verdicts);
    return rc;
}

/* rlvr_after_update_fn: new weights out, then the step boundary. */
static int dist_after_update(void *ctx, const rlvr_model *model, int64_t version) {
    dist *d = ctx;
    RLVR_TRY(publish(d, model, version));
    RLVR_TRY(send_control_all(d, RLVR_CONTROL_STEP, version, version));
    int sig = 0;
    RLVR_TRY(agree_max(d, (int)rlvr_run_stop_flag, d->timeout_s, &sig));
    if (sig && !rlvr_run_stop_flag) {
        rlvr_run_stop_flag = sig; /* another rank caught it: checkpoint and stop here too */
        fprintf(stderr, "train: a rank caught signal %d: stopping after this step\n", sig);
    }
    return 0;
}

static _Noreturn void leader_abort(dist *d, int rc) {
    char latest[RLVR_IO_PATH_CAP];
    int code = report(d, rc);
    if (rlvr_checkpoint_latest(d->run->io.checkpoint_dir, latest, sizeof latest) == 0)
        fprintf(stderr, "rlvr train: the last checkpoint is %s: fix the cause and rerun with --resume\n", latest);
    else
        fprintf(stderr, "rlvr train: no checkpoint was written yet: fix the cause and rerun\n");
    fflush(NULL);
    MPI_Abort(d->roles.world, code);
    exit(code);
}

static int lead(dist *d, bool resume) {
    rlvr_run *r = d->run;
    rlvr_trainer *t = NULL;
    int rc = rlvr_trainer_new(&t, r, resume); /* builds the run's pool on first use */
    int code = rc < 0 ? report(d, rc) : 0, all = 0;
    rc = agree_max(d, code, -1, &all); /* 1: the pool is there (or the job ends) */
    if (rc == 0 && all == 0) {
        rc = rlvr_weights_new(&d->weights, d->roles.weights, rlvr_model_num_params(rlvr_trainer_model(t)), 0);
        code = rc < 0 ? report(d, rc) : 0;
        rc = agree_max(d, code, -1, &all); /* 2: every rank is set up */
    }
    if (rc < 0) abort_job(d, rc);
    if (all) {
        rlvr_trainer_free(t);
        return all;
    }
    fprintf(stderr, "train: %d ranks: 1 trainer, %d verifier, %d rollout\n", d->roles.world_size,
            d->roles.layout.verifier, d->roles.layout.rollout);
    d->trainer = t;
    d->published = -1;
    rlvr_trainer_set_hooks(t, dist_generate, d, dist_after_update, d);
    rc = rlvr_trainer_run(t);
    if (rc < 0) leader_abort(d, rc);
    code = rc == 1 ? RLVR_EXIT_STOPPED : RLVR_EXIT_OK;
    if (rc == 1)
        fprintf(stderr, "train: stopped by signal %d after a checkpoint; resume with --resume\n",
                (int)rlvr_run_stop_flag);
    /* STOP carries the step reached (= the version, synchronous mode): the
     * other ranks exit with the same status */
    int64_t reached = rc == 1 ? d->published : r->stop_step;
    rc = send_control_all(d, RLVR_CONTROL_STOP, reached, d->published);
    if (rc == 0) rc = rlvr_weights_publish_stop(d->weights);
    if (rc == 0) rc = rlvr_weights_publish_wait(d->weights, d->timeout_s, NULL);
    if (rc == 0) rc = rlvr_mpi_queue_flush(d->queue, d->timeout_s, NULL);
    if (rc < 0) leader_abort(d, rc);
    rlvr_trainer_free(t);
    return code;
}

/* ---- rollout rank --------------------------------------------------------------------------- */

typedef struct {
    rlvr_model *model;
    rlvr_sampler *sampler;
    int64_t version; /* weights in use; -1 before the first */
    rlvr_work_item *items;
    int n_items, cap_items;
    rlvr_harness_job *jobs;
    int cap_jobs;
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
        return agree_max(d, (int)rlvr_run_stop_flag, -1, &sig);
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
        ro->items = p, ro->cap_items = cap;
    }
    RLVR_TRY(rlvr_wire_decode_work(&ro->items[ro->n_items], m->body.data, m->body.len));
    ro->n_items++;
    return 0;
}

/* Runs the collected work items in one harness call and sends the results. */
static int roll_work(dist *d, roller *ro) {
    const rlvr_run *r = d->run;
    int n = 0;
    for (int i = 0; i < ro->n_items; i++) {
        const rlvr_work_item *w = &ro->items[i];
        const rlvr_task *task = w->task_index < (int64_t)rlvr_task_pool_size(r->pool)
                                    ? rlvr_task_pool_get(r->pool, (size_t)w->task_index)
                                    : NULL;
        if (!task || strcmp(task->id, w->task_id) != 0 || w->seed != r->sampler.seed)
            return rlvr_error_set(RLVR_EFORMAT, "work item for task %s (pool index %lld, seed %llu) does not match "
                                                "this rank's pool and seed: do all ranks read the same run?",
                                  w->task_id, (long long)w->task_index, (unsigned long long)w->seed);
        if (w->policy_version != ro->version)
            return rlvr_error_set(RLVR_ESTATE, "work item for weights version %lld, this rank holds %lld",
                                  (long long)w->policy_version, (long long)ro->version);
        n += w->group_size;
    }
    if (n > ro->cap_jobs) {
        rlvr_harness_job *p = realloc(ro->jobs, (size_t)n * sizeof *p);
        if (!p) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        ro->jobs = p, ro->cap_jobs = n;
    }
    memset(ro->jobs, 0, (size_t)n * sizeof *ro->jobs);
    for (int i = 0, j = 0; i < ro->n_items; i++)
        for (int k = 0; k < ro->items[i].group_size; k++, j++) {
            ro->jobs[j].task = rlvr_task_pool_get(r->pool, (size_t)ro->items[i].task_index);
            ro->jobs[j].step = (uint32_t)ro->items[i].step;
            ro->jobs[j].sequence = ro->items[i].sample_sequence + (uint32_t)k;
        }
    int rc = rlvr_harness_run(ro->sampler, r->tok, &r->harness, ro->jobs, n);
    for (int i = 0, j = 0; i < ro->n_items; i++)
        for (int k = 0; k < ro->items[i].group_size; k++, j++) {
            if (rc < 0) break;
            const rlvr_work_item *w = &ro->items[i];
            rlvr_harness_job *job = &ro->jobs[j];
            job->record.group_id = w->group_id;
            job->record.rollout_index = k;
            job->record.policy_version = ro->version;
            rlvr_wire_job_info info = {w->task_index, job->calls, job->calls_parsed,
                                       (uint8_t)job->public_tests_changed, job->patch_reason};
            rc = rlvr_wire_encode_job_record(&d->out, &job->record, &info, NULL, 0);
            if (rc == 0) rc = send_out(d, RLVR_MPI_LEADER, RLVR_MSG_RECORD);
            if (rc == 0) rc = rlvr_wire_encode_job_record(&d->out, &job->record, &info, job->patch, job->patch_len);
            if (rc == 0) rc = send_out(d, verifier_of(d, w->group_id + k), RLVR_MSG_RECORD);
        }
    for (int j = 0; j < n; j++) rlvr_harness_job_clear(&ro->jobs[j]);
    ro->n_items = 0;
    return rc;
}

static int roll_loop(dist *d, roller *ro, int64_t *stop_step) {
    while (*stop_step == NOT_STOPPED) {
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
            if (*stop_step != NOT_STOPPED) return rlvr_error_set(RLVR_ESTATE, "the leader said STOP with work pending");
        }
        RLVR_TRY(roll_work(d, ro));
    }
    return rlvr_mpi_queue_flush(d->queue, -1, NULL);
}

static int roll(dist *d) {
    rlvr_run *r = d->run;
    roller ro = {.version = -1};
    int all = 0, rc = agree_max(d, 0, -1, &all); /* 1: the leader has built the pool */
    if (rc < 0) abort_job(d, rc);
    if (all) return all;
    rc = rlvr_run_pool(r, false);
    if (rc == 0) rc = rlvr_run_host(r); /* workspaces of "tests" tasks */
    if (rc == 0) rc = rlvr_run_new_model(r, &ro.model);
    if (rc == 0) rc = rlvr_sampler_new(&ro.sampler, ro.model, &r->sampler);
    if (rc == 0) rc = rlvr_weights_new(&d->weights, d->roles.weights, rlvr_model_num_params(ro.model), 0);
    int code = rc < 0 ? report(d, rc) : 0;
    rc = agree_max(d, code, -1, &all); /* 2: every rank is set up */
    if (rc < 0) abort_job(d, rc);
    int64_t stop_step = NOT_STOPPED;
    if (all == 0) {
        rc = roll_loop(d, &ro, &stop_step);
        if (rc < 0) abort_job(d, rc);
    }
    rlvr_sampler_free(ro.sampler);
    rlvr_model_free(ro.model);
    free(ro.items);
    free(ro.jobs);
    if (all) return all;
    return stop_step < r->stop_step ? RLVR_EXIT_STOPPED : RLVR_EXIT_OK;
}

/* ---- verifier rank -------------------------------------------------------------------------- */

/* Verifies one record from a rollout rank and sends the verdict to the leader. */
static int verify_one(dist *d, rlvr_verifiers *v, rlvr_wire_buf *patch) {
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
    int rc = rlvr_verifiers_verify(v, &job, (size_t)info.task_index);
    d->rec = job.record; /* the buffers stay ours */
    RLVR_TRY(rc);
    rlvr_verdict_msg m = {d->rec.group_id, d->rec.rollout_index, d->rec.verdict, d->rec.verdict_reason,
                          d->rec.reward.outcome, d->rec.timings.verify_s};
    RLVR_TRY(rlvr_wire_encode_verdict(&d->out, &m));
    return send_out(d, RLVR_MPI_LEADER, RLVR_MSG_VERDICT);
}

static int verify_loop(dist *d, rlvr_verifiers *v, int64_t *stop_step) {
    rlvr_wire_buf patch = {0};
    int rc = 0;
    while (rc == 0 && *stop_step == NOT_STOPPED) {
        rc = rlvr_mpi_queue_wait(d->queue, MPI_ANY_SOURCE, RLVR_MSG_ANY, &d->msg, -1, NULL);
        if (rc < 0) break;
        if (d->msg.kind == RLVR_MSG_RECORD) {
            rc = verify_one(d, v, &patch);
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
            rc = agree_max(d, (int)rlvr_run_stop_flag, -1, &sig);
        } else if (c.what == RLVR_CONTROL_STOP) {
            *stop_step = c.step;
        }
    }
    rlvr_wire_buf_free(&patch);
    return rc < 0 ? rc : rlvr_mpi_queue_flush(d->queue, -1, NULL);
}

static int verify(dist *d) {
    rlvr_run *r = d->run;
    rlvr_verifiers *v = NULL;
    int all = 0, rc = agree_max(d, 0, -1, &all); /* 1: the leader has built the pool */
    if (rc < 0) abort_job(d, rc);
    if (all) return all;
    rc = rlvr_run_pool(r, false);
    if (rc == 0) rc = rlvr_verifiers_new(&v, r);
    int code = rc < 0 ? report(d, rc) : 0;
    rc = agree_max(d, code, -1, &all); /* 2: every rank is set up */
    if (rc < 0) abort_job(d, rc);
    int64_t stop_step = NOT_STOPPED;
    if (all == 0) {
        rc = verify_loop(d, v, &stop_step);
        if (rc < 0) abort_job(d, rc);
        int64_t runs = 0, cached = 0;
        rlvr_verifiers_counts(v, &runs, &cached);
        fprintf(stderr, "train: verifier rank %d: %lld enclave verifications, %lld verdicts from the cache\n",
                d->roles.role_rank, (long long)runs, (long long)cached);
    }
    rlvr_verifiers_free(v);
    if (all) return all;
    return stop_step < r->stop_step ? RLVR_EXIT_STOPPED : RLVR_EXIT_OK;
}

/* ---- the command ---------------------------------------------------------------------------- */

/* One process plays every role (no hooks). */
static int train_single(rlvr_run *r, bool resume) {
    rlvr_trainer *t = NULL;
    int rc = rlvr_trainer_new(&t, r, resume);
    if (rc == 0) rc = rlvr_trainer_run(t);
    rlvr_trainer_free(t);
    if (rc == 1) {
        fprintf(stderr, "train: stopped by signal %d after a checkpoint; resume with --resume\n",
                (int)rlvr_run_stop_flag);
        return RLVR_EXIT_STOPPED;
    }
    return rc < 0 ? rlvr_cmd_fail("train", rc) : RLVR_EXIT_OK;
}

static int train_ranks(rlvr_run *r, const rlvr_layout *layout, bool resume) {
    dist d = {.run = r, .published = -1};
    int rc = rlvr_config_get_double(r->cfg, "layout", "timeout_s", &d.timeout_s);
    if (rc == 0) rc = rlvr_mpi_roles_init(&d.roles, layout, MPI_COMM_WORLD); /* collective */
    if (rc == 0) rc = rlvr_mpi_queue_new(&d.queue, d.roles.world, DIST_MAX_PENDING);
    if (rc < 0) { /* the same on every rank (configuration, launch): said once */
        int me = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &me);
        if (me == 0) rlvr_cmd_fail("train", rc);
        rlvr_mpi_roles_free(&d.roles);
        return exit_code_of(rc);
    }
    int code = d.roles.role == RLVR_ROLE_TRAINER    ? lead(&d, resume)
               : d.roles.role == RLVR_ROLE_VERIFIER ? verify(&d)
                                                    : roll(&d);
    rlvr_mpi_queue_free(d.queue);
    rlvr_weights_free(d.weights);
    rlvr_mpi_msg_free(&d.msg);
    rlvr_wire_buf_free(&d.out);
    rlvr_rollout_free(&d.rec);
    rlvr_mpi_roles_free(&d.roles);
    return code;
}

/* Started by an MPI launcher (or inside a Slurm allocation, where a
 * missing PMIx must be caught): then MPI is initialised. */
static bool launched(void) {
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE",
                                       "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i])) return true;
    return false;
}

/* [layout] as written, and whether it is the default 1/1/1. */
static int read_layout(const rlvr_run *r, rlvr_layout *l, bool *is_default) {
    int64_t t, v, ro;
    RLVR_TRY(rlvr_config_get_int(r->cfg, "layout", "trainer", &t));
    RLVR_TRY(rlvr_config_get_int(r->cfg, "layout", "verifier", &v));
    RLVR_TRY(rlvr_config_get_int(r->cfg, "layout", "rollout", &ro));
    *l = (rlvr_layout){(int)t, (int)v, (int)ro};
    *is_default = t == 1 && v == 1 && ro == 1;
    return 0;
}

static int check_ranks(const rlvr_run *r, int world, rlvr_layout *layout, bool *single) {
    bool is_default = false;
    RLVR_TRY(read_layout(r, layout, &is_default));
    RLVR_TRY(rlvr_mpi_check_launch(world)); /* srun without PMIx: separate one-rank jobs */
    *single = world == 1 && is_default;
    if (*single) return 0;
    RLVR_TRY(rlvr_layout_from_config(layout, r->cfg, world));
    if (layout->trainer > 1)
        return rlvr_config_error(r->cfg, "layout", "trainer",
                                 "%d trainer ranks: data-parallel training across trainer ranks is not implemented "
                                 "yet; set trainer = 1 (and give the ranks to rollout or verifier)",
                                 layout->trainer);
    return 0;
}

int rlvr_train_main(const rlvr_run_args *a) {
    bool mpi = launched();
    int world = 1;
    if (mpi) {
        int provided = 0;
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
            fprintf(stderr, "rlvr train: error: MPI_Init_thread failed\n");
            return RLVR_EXIT_FAILURE;
        }
        MPI_Comm_size(MPI_COMM_WORLD, &world);
    }
    rlvr_run_install_signals(); /* after MPI_Init: the handlers are ours */
    rlvr_run r;
    int rc = rlvr_run_open(&r, a->config, a->out), code;
    bool opened = rc == 0;
    rlvr_layout layout;
    bool single = true;
    if (rc == 0) rc = check_ranks(&r, world, &layout, &single);
    if (rc == 0 && a->until_step > 0 && a->until_step < r.train.steps) r.stop_step = a->until_step;
    if (rc < 0) {
        int me = 0;
        if (mpi) MPI_Comm_rank(MPI_COMM_WORLD, &me);
        code = me == 0 ? rlvr_cmd_fail("train", rc) : exit_code_of(rc);
    } else {
        code = single ? train_single(&r, a->resume) : train_ranks(&r, &layout, a->resume);
    }
    if (opened) rlvr_run_close(&r);
    if (mpi) MPI_Finalize();
    return code;
}
