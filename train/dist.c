/* train/dist.c — `rlvr train` over MPI ranks (train/dist.h; the
 * messages are in docs/WIRE.md "Training protocol"). Synchronous mode first;
 * bounded-async mode (the "async" sections) keeps the same roles and
 * messages without step boundaries (docs/WIRE.md "Bounded-async mode").
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
 * An error after start-up ends the job: the rank says its error and returns
 * with rlvr_train_outcome.abort set, and the command aborts every rank. */
#include "train/dist.h"

#include "core/error.h"
#include "core/log.h"
#include "core/sys.h"
#include "io/checkpoint.h"
#include "io/gate_report.h"
#include "mpi/admission.h"
#include "mpi/check.h"
#include "mpi/layout.h"
#include "mpi/queue.h"
#include "mpi/roles.h"
#include "mpi/weights.h"
#include "mpi/reduce.h"
#include "mpi/wire.h"
#include "train/trainer.h"
#include "train/verifiers.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DIST_MAX_PENDING 64 /* sends in flight per rank */
#define ASYNC_POLL_US 500   /* async mode: sleep between polls when there is nothing to do */
#define NOT_STOPPED INT64_MIN /* no STOP from the leader yet */

typedef struct flight flight; /* async mode: a group handed out and not yet taken */

#define DIST_HOST_CAP 256

typedef struct {
    rlvr_run *run;
    char (*host_names)[DIST_HOST_CAP]; /* leader: every rank's host, world-rank order (the manifest) */
    const char **hosts;                /* leader: views of host_names */
    const rlvr_train_simulation *sim; /* benchmarks: environment delays on rollout ranks; NULL: none */
    bool async;                       /* [train] max_staleness > 0 */
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
    char promoted[RLVR_IO_PATH_CAP]; /* rollout_policy = promoted: the checkpoint published last ("": none) */
    int64_t next_job;  /* jobs handed out so far: a group's id is the run index of its first job */
    /* leader, async mode */
    rlvr_admission adm;   /* the Δv gate, counted over the job */
    flight **flights;     /* handed out, not yet taken by the trainer, in hand-out order */
    int n_flights, cap_flights;
    int64_t finished;     /* groups finished so far (a flight's finish order) */
    int64_t *outstanding; /* (R) rollouts handed to rollout rank i whose record has not arrived */
    int64_t draw_version; /* trainer version of the draws counted by draw_round / draw_groups */
    uint32_t draw_round, draw_groups;
    /* data-parallel trainer ranks ([layout] trainer > 1) */
    rlvr_trainer *replica; /* non-leader trainer rank: its trainer */
    char *update_buf;      /* the step's batch as broadcast (native byte order: one binary) */
    size_t update_cap, update_len;
    int64_t replica_checks; /* steps after which the trainer ranks' weights were compared (and equal) */
    rlvr_wire_buf part;     /* [shards] write: one trainer rank's part of the batch as whole records */
    rlvr_rollout *part_recs; /* non-leader trainer rank: its part, decoded (buffers kept between steps) */
    int n_part_recs, cap_part_recs;
    /* how this rank's part ended (rlvr_train_outcome) */
    bool reported, abort;
} dist;

static void sleep_us(long us) {
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* The start-up agreement's value for a failed rank: the largest over the
 * ranks wins, so a configuration error is what every rank reports. */
enum { SETUP_OK = 0, SETUP_FAILED = 1, SETUP_CONFIG = 2 };

static int setup_code_of(int rc) { return rc == RLVR_ECONFIG ? SETUP_CONFIG : SETUP_FAILED; }

/* Another rank (or this one, said already) failed to set up: every rank
 * ends with the agreed failure. */
static int setup_failed(dist *d, int all) {
    d->reported = true;
    return rlvr_error_set(all == SETUP_CONFIG ? RLVR_ECONFIG : RLVR_ESTATE, "a rank failed to set up");
}

static int world_rank(const dist *d, rlvr_rank_role role, int i) {
    return rlvr_layout_world_rank(&d->roles.layout, role, i);
}

static const char *role_name(const dist *d) { return rlvr_role_name(d->roles.role); }

/* Prints this rank's error (only this rank knows its role); returns the
 * start-up agreement's value for it. */
static int report(dist *d, int rc) {
    const char *msg = rlvr_error_last();
    if (d->roles.is_leader) fprintf(stderr, "rlvr train: error: %s\n", msg[0] ? msg : rlvr_error_name(rc));
    else
        fprintf(stderr, "rlvr train: %s rank %d (world rank %d): error: %s\n", role_name(d), d->roles.role_rank,
                d->roles.world_rank, msg[0] ? msg : rlvr_error_name(rc));
    d->reported = true;
    return setup_code_of(rc);
}

/* After start-up a rank cannot leave alone: the others would wait for it.
 * Returns rc with d->abort set; the caller returns at once (nothing freed:
 * the whole job is aborted next). */
static int abort_job(dist *d, int rc) {
    report(d, rc);
    fflush(NULL);
    d->abort = true;
    return rc;
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
    RLVR_TRY(rlvr_weights_publish(d->weights, rlvr_model_params_read(model), version, d->timeout_s, NULL));
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

/* abort_job on the leader, which also says where to resume from. */
static int leader_abort(dist *d, int rc) {
    char latest[RLVR_IO_PATH_CAP];
    report(d, rc);
    if (rlvr_checkpoint_latest(d->run->io.checkpoint_dir, latest, sizeof latest) == 0)
        fprintf(stderr, "rlvr train: the last checkpoint is %s: fix the cause and rerun with --resume\n", latest);
    else
        fprintf(stderr, "rlvr train: no checkpoint was written yet: fix the cause and rerun\n");
    fflush(NULL);
    d->abort = true;
    return rc;
}

/* ---- leader, bounded-async mode ------------------------------------------------------------- */

/* A group handed out: its jobs fill as records and verdicts arrive. */
struct flight {
    int64_t id;        /* group_id on the wire: the run index of its first rollout */
    int32_t task, G;   /* train-split index, group size */
    size_t pool_index;
    int rank;          /* world rank of the rollout rank generating it */
    int missing;       /* records and verdicts still to come */
    int64_t finished;  /* finish order (0: still missing some) */
    uint8_t *have;     /* (G) bit 0: record arrived, bit 1: verdict arrived */
    rlvr_verdict_msg *verdicts; /* (G) */
    rlvr_harness_job *jobs;     /* (G) */
};

static void flight_free(flight *f) {
    if (!f) return;
    for (int k = 0; f->jobs && k < f->G; k++) rlvr_harness_job_clear(&f->jobs[k]);
    free(f->have), free(f->verdicts), free(f->jobs), free(f);
}

static void flights_free(dist *d) {
    for (int i = 0; i < d->n_flights; i++) flight_free(d->flights[i]);
    free(d->flights), free(d->outstanding);
    d->flights = NULL, d->outstanding = NULL, d->n_flights = d->cap_flights = 0;
}

static void flight_remove(dist *d, int i) {
    flight_free(d->flights[i]);
    memmove(d->flights + i, d->flights + i + 1, (size_t)(d->n_flights - i - 1) * sizeof *d->flights);
    d->n_flights--;
}

/* Groups kept handed out and not yet taken: Δv_max steps' worth. The
 * trainer takes a step's worth per step, so by Little's law a group waits
 * about Δv_max steps from hand-out to use: the ranks never run dry, and most
 * groups arrive within the bound. */
static int async_target(const dist *d) {
    return (int)(d->run->train.max_staleness * d->run->rl.grpo.groups_per_step);
}

/* The rollout rank with the fewest rollouts outstanding. */
static int least_loaded(const dist *d) {
    int best = 0;
    for (int i = 1; i < d->roles.layout.rollout; i++)
        if (d->outstanding[i] < d->outstanding[best]) best = i;
    return best;
}

static int hand_out_group(dist *d, int32_t task, int32_t G, size_t pool_index, int64_t version) {
    if (d->n_flights == d->cap_flights) {
        int cap = d->cap_flights ? 2 * d->cap_flights : 32;
        flight **p = realloc(d->flights, (size_t)cap * sizeof *p);
        if (!p) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        d->flights = p, d->cap_flights = cap;
    }
    flight *f = calloc(1, sizeof *f);
    if (!f) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    f->have = calloc((size_t)G, 1), f->verdicts = calloc((size_t)G, sizeof *f->verdicts);
    f->jobs = calloc((size_t)G, sizeof *f->jobs);
    if (!f->have || !f->verdicts || !f->jobs) {
        flight_free(f);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    }
    int r = least_loaded(d);
    *f = (flight){.id = d->next_job, .task = task, .G = G, .pool_index = pool_index, .missing = 2 * G,
                  .rank = world_rank(d, RLVR_ROLE_ROLLOUT, r), .have = f->have, .verdicts = f->verdicts,
                  .jobs = f->jobs};
    d->flights[d->n_flights++] = f;
    /* sampling keys: the next step, and a sequence block per group drawn for it (as one process) */
    uint32_t step = (uint32_t)version + 1, sequence = d->draw_groups++ * 1024u;
    const rlvr_task *t = rlvr_trainer_task(d->trainer, task);
    for (int k = 0; k < G; k++) f->jobs[k] = (rlvr_harness_job){.task = t, .step = step, .sequence = sequence + (uint32_t)k};
    rlvr_work_item w = {.task_index = (int64_t)pool_index, .group_id = f->id, .group_size = G, .step = step,
                        .policy_version = version, .seed = d->run->sampler.seed, .sample_sequence = sequence};
    snprintf(w.task_id, sizeof w.task_id, "%s", t->id);
    d->next_job += G;
    d->outstanding[r] += G;
    RLVR_TRY(rlvr_wire_encode_work(&d->out, &w));
    return send_out(d, f->rank, RLVR_MSG_WORK);
}

/* Hands out groups until at least max(target, need) are out and not taken. */
static int top_up(dist *d, int need) {
    int want = async_target(d) > need ? async_target(d) : need, n = want - d->n_flights;
    if (n <= 0) return 0;
    int64_t version = rlvr_trainer_version(d->trainer);
    if (version != d->draw_version) d->draw_version = version, d->draw_round = 0, d->draw_groups = 0;
    int32_t *task = malloc((size_t)n * sizeof *task), *G = malloc((size_t)n * sizeof *G);
    size_t *pool_index = malloc((size_t)n * sizeof *pool_index);
    int rc = task && G && pool_index ? 0 : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    if (rc == 0) rc = rlvr_trainer_draw(d->trainer, n, d->draw_round++, task, G, pool_index);
    for (int i = 0; rc == 0 && i < n; i++) rc = hand_out_group(d, task[i], G[i], pool_index[i], version);
    free(task), free(G), free(pool_index);
    return rc;
}

/* Starts broadcasting the trainer's weights when the rollout ranks do not
 * have (or get) them yet and no broadcast is in flight: every rank ends up
 * with the newest version, skipping those that came and went meanwhile. */
static int publish_latest(dist *d) {
    int64_t version = rlvr_trainer_version(d->trainer);
    if (version == d->published) return 0;
    bool idle = true;
    if (d->published >= 0) RLVR_TRY(rlvr_weights_publish_test(d->weights, &idle));
    if (!idle) return 0;
    RLVR_TRY(rlvr_weights_publish_start(d->weights, rlvr_model_params_read(rlvr_trainer_model(d->trainer)), version));
    d->published = version;
    return 0;
}

/* rollout_policy = promoted: the checkpoint RUN/promoted names, published
 * once each time the pointer changes (before any promotion: the run's
 * weights at start). The trainer moves on meanwhile; when it is more than
 * Δv_max versions past the promoted policy, every record would be refused,
 * so the job stops with an error that says what to do. */
static int publish_promoted(dist *d) {
    rlvr_run *r = d->run;
    char path[RLVR_IO_PATH_CAP];
    int rc = rlvr_gate_read_promoted(r->io.run_dir, path, sizeof path);
    if (rc == RLVR_ENOTFOUND) {
        if (d->published < 0) return publish_latest(d); /* the initial weights */
    } else if (rc < 0) {
        return rc;
    } else if (strcmp(path, d->promoted) != 0) {
        bool idle = true;
        if (d->published >= 0) RLVR_TRY(rlvr_weights_publish_test(d->weights, &idle));
        if (!idle) return 0; /* the next step boundary publishes it */
        rlvr_checkpoint *ck = NULL;
        RLVR_TRY(rlvr_checkpoint_open(&ck, path));
        int64_t version = rlvr_checkpoint_info_of(ck)->policy_version;
        rlvr_checkpoint_close(ck);
        rlvr_model *m = NULL;
        RLVR_TRY(rlvr_run_load_model(r, path, false, &m));
        rc = rlvr_weights_publish_start(d->weights, rlvr_model_params_read(m), version); /* copies the weights */
        rlvr_model_free(m);
        RLVR_TRY(rc);
        fprintf(stderr, "train: rollout ranks now use the promoted checkpoint %s (version %lld)\n", path,
                (long long)version);
        snprintf(d->promoted, sizeof d->promoted, "%s", path);
        d->published = version;
    }
    /* the next step admits records of version ≥ v_trainer − Δv_max (none after the last step) */
    int64_t now = rlvr_trainer_version(d->trainer), lag = now - d->published;
    if (lag > r->train.max_staleness && now < r->stop_step)
        return rlvr_error_set(RLVR_ESTATE,
                              "the rollouts' promoted policy (version %lld) is %lld versions behind the trainer, "
                              "more than [train] max_staleness = %lld: every record would be refused; promote a "
                              "newer checkpoint (rlvr gate --promote %s) or raise max_staleness, then --resume",
                              (long long)d->published, (long long)lag, (long long)r->train.max_staleness,
                              r->io.run_dir);
    return 0;
}

static flight *find_flight(const dist *d, int64_t id) {
    for (int i = 0; i < d->n_flights; i++)
        if (d->flights[i]->id == id) return d->flights[i];
    return NULL;
}

static void flight_arrived(dist *d, flight *f) {
    if (--f->missing == 0) f->finished = ++d->finished;
}

static int async_record(dist *d) {
    rlvr_wire_job_info info;
    RLVR_TRY(rlvr_wire_decode_job_record(&d->rec, &info, NULL, d->msg.body.data, d->msg.body.len));
    flight *f = find_flight(d, d->rec.group_id);
    int k = d->rec.rollout_index;
    if (!f || k < 0 || k >= f->G || (f->have[k] & 1) || d->msg.source != f->rank)
        return rlvr_error_set(RLVR_EFORMAT, "world rank %d sent a record for group %lld rollout %d, which is not "
                                            "awaited from it",
                              d->msg.source, (long long)d->rec.group_id, k);
    rlvr_harness_job *job = &f->jobs[k];
    if (d->rec.sample_sequence != job->sequence || strcmp(d->rec.task_id, job->task->id) != 0 ||
        d->rec.policy_version < 0 || d->rec.policy_version > d->published)
        return rlvr_error_set(RLVR_EFORMAT,
                              "world rank %d sent a record (task %s, sequence %u, version %lld) for the job of task "
                              "%s, sequence %u, generated by weights up to version %lld",
                              d->msg.source, d->rec.task_id, d->rec.sample_sequence, (long long)d->rec.policy_version,
                              job->task->id, job->sequence, (long long)d->published);
    rlvr_rollout empty = job->record;
    job->record = d->rec;
    d->rec = empty;
    job->record.group_id = 0, job->record.rollout_index = 0;
    job->calls = info.calls, job->calls_parsed = info.calls_parsed;
    job->public_tests_changed = info.public_tests_changed, job->patch_reason = info.patch_reason;
    f->have[k] |= 1;
    for (int i = 0; i < d->roles.layout.rollout; i++)
        if (world_rank(d, RLVR_ROLE_ROLLOUT, i) == f->rank) d->outstanding[i]--;
    flight_arrived(d, f);
    return 0;
}

static int async_verdict(dist *d) {
    rlvr_verdict_msg v;
    RLVR_TRY(rlvr_wire_decode_verdict(&v, d->msg.body.data, d->msg.body.len));
    flight *f = find_flight(d, v.group_id);
    int k = v.rollout_index;
    if (!f || k < 0 || k >= f->G || (f->have[k] & 2) || d->msg.source != verifier_of(d, f->id + k))
        return rlvr_error_set(RLVR_EFORMAT, "world rank %d sent a verdict for group %lld rollout %d, which is not "
                                            "awaited from it",
                              d->msg.source, (long long)v.group_id, k);
    f->verdicts[k] = v;
    f->have[k] |= 2;
    flight_arrived(d, f);
    return 0;
}

/* A control message from another rank: a caught signal (stop at the next
 * step boundary) or, while shutting down, DONE (counted in *done). */
static int async_control(dist *d, int *done) {
    rlvr_control_msg c;
    RLVR_TRY(rlvr_wire_decode_control(&c, d->msg.body.data, d->msg.body.len));
    if (c.what == RLVR_CONTROL_SIGNAL) {
        if (!rlvr_run_stop_flag) {
            rlvr_run_stop_flag = (int)c.step;
            fprintf(stderr, "train: world rank %d caught signal %lld: stopping after this step\n", d->msg.source,
                    (long long)c.step);
        }
        return 0;
    }
    if (c.what == RLVR_CONTROL_DONE && done) {
        (*done)++;
        return 0;
    }
    return rlvr_error_set(RLVR_EFORMAT, "the leader got control %d from world rank %d, which it does not expect",
                          (int)c.what, d->msg.source);
}

static int async_message(dist *d) {
    switch (d->msg.kind) {
    case RLVR_MSG_RECORD: return async_record(d);
    case RLVR_MSG_VERDICT: return async_verdict(d);
    case RLVR_MSG_CONTROL: return async_control(d, NULL);
    default:
        return rlvr_error_set(RLVR_EFORMAT, "the leader got an unexpected %s message from world rank %d",
                              rlvr_msg_kind_name(d->msg.kind), d->msg.source);
    }
}

/* The error when nothing arrives: what the groups in flight miss, by rank. */
static int async_missing_error(const dist *d) {
    char list[1024] = "";
    size_t at = 0;
    for (int w = 1; w < d->roles.world_size && at < sizeof list; w++) {
        int n = 0;
        for (int i = 0; i < d->n_flights; i++)
            for (int k = 0; k < d->flights[i]->G; k++) {
                const flight *f = d->flights[i];
                n += (!(f->have[k] & 1) && f->rank == w) + (!(f->have[k] & 2) && verifier_of(d, f->id + k) == w);
            }
        if (!n) continue;
        rlvr_rank_role role = RLVR_ROLE_TRAINER;
        rlvr_layout_role_of(&d->roles.layout, w, &role, NULL);
        int k = snprintf(list + at, sizeof list - at, "%s %d %s from %s world rank %d", at ? ";" : "", n,
                         role == RLVR_ROLE_ROLLOUT ? "records" : "verdicts", rlvr_role_name(role), w);
        at = k > 0 ? at + (size_t)k : at;
    }
    return rlvr_error_set(RLVR_ELIMIT, "nothing arrived for %.0f s ([layout] timeout_s) with %d groups in flight:%s. "
                                       "A rank died or hangs",
                          d->timeout_s, d->n_flights, list);
}

/* The admission gate on a finished group: all its rollouts come from one
 * harness call (one version); the group is admitted only when every one of
 * them is, else dropped whole (GRPO advantages need the whole group). */
static int admit(dist *d, int i, step_stats *s, int32_t *got) {
    flight *f = d->flights[i];
    int64_t v = rlvr_trainer_version(d->trainer), lag = 0, worst = 0;
    bool all = true;
    for (int k = 0; k < f->G; k++) {
        bool ok = false;
        int rc = rlvr_admission_check(&d->adm, v, f->jobs[k].record.policy_version, &ok, &lag);
        if (rc < 0)
            return rlvr_error_set(RLVR_ESTATE, "a record of group %lld has policy version %lld, newer than the "
                                               "trainer's %lld",
                                  (long long)f->id, (long long)f->jobs[k].record.policy_version, (long long)v);
        all &= ok;
        worst = lag > worst ? lag : worst;
    }
    if (!all) {
        s->stale_dropped += f->G;
        flight_remove(d, i);
        return 0;
    }
    if (worst > d->run->train.max_staleness) /* the gate's promise, checked where it matters */
        return rlvr_error_set(RLVR_ESTATE, "admitted a group with Δv = %lld > [train] max_staleness = %lld",
                              (long long)worst, (long long)d->run->train.max_staleness);
    for (int k = 0; k < f->G; k++) {
        rlvr_rollout *r = &f->jobs[k].record;
        r->verdict = f->verdicts[k].verdict;
        r->verdict_reason = f->verdicts[k].reason;
        r->reward.outcome = f->verdicts[k].outcome;
        r->timings.verify_s = f->verdicts[k].verify_s;
        lag = v - r->policy_version;
        s->admitted_lag[lag < RLVR_TRAIN_LAG_BINS - 1 ? lag : RLVR_TRAIN_LAG_BINS - 1]++;
    }
    RLVR_TRY(rlvr_trainer_put_group(d->trainer, f->task, f->jobs, f->G));
    (*got)++;
    flight_remove(d, i);
    return 0;
}

/* The finished flight that finished first, or -1. */
static int first_finished(const dist *d) {
    int best = -1;
    for (int i = 0; i < d->n_flights; i++)
        if (d->flights[i]->finished && (best < 0 || d->flights[i]->finished < d->flights[best]->finished)) best = i;
    return best;
}

/* rlvr_take_groups_fn: n admitted groups for the round, in finish order. */
static int dist_take(void *ctx, int32_t n, step_stats *s) {
    dist *d = ctx;
    double t0 = rlvr_now(), heard = t0;
    for (int32_t got = 0; got < n;) {
        /* promoted rollouts: the pointer is read at start and at step boundaries only */
        if (!d->run->train.promoted_only) RLVR_TRY(publish_latest(d));
        else if (d->published < 0) RLVR_TRY(publish_promoted(d));
        RLVR_TRY(top_up(d, n - got));
        int i = first_finished(d);
        if (i >= 0) {
            RLVR_TRY(admit(d, i, s, &got));
            continue;
        }
        bool arrived = false;
        RLVR_TRY(rlvr_mpi_queue_poll(d->queue, MPI_ANY_SOURCE, RLVR_MSG_ANY, &d->msg, &arrived));
        if (arrived) {
            RLVR_TRY(async_message(d));
            heard = rlvr_now();
        } else if (rlvr_now() - heard > d->timeout_s) {
            return async_missing_error(d);
        } else {
            sleep_us(ASYNC_POLL_US);
        }
    }
    RLVR_TRY(top_up(d, 0)); /* work for the rollout ranks while the trainer updates */
    s->generate_wall += rlvr_now() - t0;
    return 0;
}

/* rlvr_after_update_fn (async): the new weights go out as soon as the
 * previous broadcast is through; nobody waits for a step boundary. */
static int dist_after_update_async(void *ctx, const rlvr_model *model, int64_t version) {
    (void)model, (void)version;
    dist *d = ctx;
    return d->run->train.promoted_only ? publish_promoted(d) : publish_latest(d);
}

/* Receives (and drops) until `want` ranks said DONE. */
static int drain_until_done(dist *d, int want) {
    double heard = rlvr_now();
    for (int done = 0; done < want;) {
        bool arrived = false;
        RLVR_TRY(rlvr_mpi_queue_poll(d->queue, MPI_ANY_SOURCE, RLVR_MSG_ANY, &d->msg, &arrived));
        if (arrived) {
            heard = rlvr_now();
            if (d->msg.kind == RLVR_MSG_CONTROL) RLVR_TRY(async_control(d, &done));
        } else if (rlvr_now() - heard > d->timeout_s) {
            return rlvr_error_set(RLVR_ELIMIT, "shutting down: %d of %d ranks did not finish within %.0f s "
                                               "([layout] timeout_s)",
                                  want - done, want, d->timeout_s);
        } else {
            sleep_us(ASYNC_POLL_US);
        }
    }
    return 0;
}

/* The end in async mode: rollout ranks stop first (their last records and
 * verdicts are drained and dropped: in-flight work is discarded), then the
 * weights' stop header, then the verifier ranks. */
static int async_shutdown(dist *d, int64_t reached) {
    int64_t version = rlvr_trainer_version(d->trainer);
    for (int i = 0; i < d->roles.layout.rollout; i++)
        RLVR_TRY(send_control(d, world_rank(d, RLVR_ROLE_ROLLOUT, i), RLVR_CONTROL_STOP, reached, version));
    RLVR_TRY(drain_until_done(d, d->roles.layout.rollout));
    RLVR_TRY(rlvr_weights_publish_wait(d->weights, d->timeout_s, NULL));
    RLVR_TRY(rlvr_weights_publish_stop(d->weights));
    RLVR_TRY(rlvr_weights_publish_wait(d->weights, d->timeout_s, NULL));
    for (int i = 0; i < d->roles.layout.verifier; i++)
        RLVR_TRY(send_control(d, world_rank(d, RLVR_ROLE_VERIFIER, i), RLVR_CONTROL_STOP, reached, version));
    for (int i = 1; i < d->roles.layout.trainer; i++)
        RLVR_TRY(send_control(d, world_rank(d, RLVR_ROLE_TRAINER, i), RLVR_CONTROL_STOP, reached, version));
    RLVR_TRY(drain_until_done(d, d->roles.layout.verifier + d->roles.layout.trainer - 1));
    return rlvr_mpi_queue_flush(d->queue, d->timeout_s, NULL);
}

static void async_summary(const dist *d) {
    const rlvr_admission *a = &d->adm;
    fprintf(stderr, "train: admission (Δv_max %lld): %llu groups' rollouts arrived, %llu admitted, %llu dropped as "
                    "stale, largest Δv %lld; by Δv:",
            (long long)a->max_staleness, (unsigned long long)a->arrived, (unsigned long long)a->admitted,
            (unsigned long long)a->dropped_stale, (long long)a->max_seen);
    for (int b = 0; b < RLVR_STALENESS_BINS; b++)
        if (a->histogram[b]) fprintf(stderr, " %d%s:%llu", b, b == RLVR_STALENESS_BINS - 1 ? "+" : "",
                                     (unsigned long long)a->histogram[b]);
    fprintf(stderr, "\n");
}

static void set_dp(dist *d, rlvr_trainer *t);
static int bcast_state(dist *d, rlvr_trainer *t);

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
    if (rc < 0) return abort_job(d, rc);
    if (all) {
        rlvr_trainer_free(t);
        return setup_failed(d, all);
    }
    fprintf(stderr, "train: %d ranks: %d trainer, %d verifier, %d rollout\n", d->roles.world_size,
            d->roles.layout.trainer, d->roles.layout.verifier, d->roles.layout.rollout);
    d->trainer = t;
    const int ranks[3] = {d->roles.layout.trainer, d->roles.layout.verifier, d->roles.layout.rollout};
    rlvr_trainer_set_ranks(t, ranks, d->hosts, d->roles.world_size);
    if (d->roles.layout.trainer > 1) { /* data-parallel: every trainer rank starts from the leader's state */
        set_dp(d, t);
        rc = bcast_state(d, t);
        if (rc < 0) return leader_abort(d, rc);
    }
    d->published = -1;
    if (d->async) {
        d->outstanding = calloc((size_t)d->roles.layout.rollout, sizeof *d->outstanding);
        rc = d->outstanding ? rlvr_admission_init(&d->adm, r->train.max_staleness)
                            : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        if (rc < 0) return leader_abort(d, rc);
        d->draw_version = -1;
        fprintf(stderr, "train: bounded-async, Δv_max = %lld: %d groups kept handed out\n",
                (long long)r->train.max_staleness, async_target(d));
        rlvr_trainer_set_async(t, dist_take, d, dist_after_update_async, d);
    } else {
        rlvr_trainer_set_hooks(t, dist_generate, d, dist_after_update, d);
    }
    rc = rlvr_trainer_run(t);
    if (rc < 0) return leader_abort(d, rc);
    if (d->roles.layout.trainer > 1)
        fprintf(stderr, "train: %d trainer ranks: weights identical on every rank after each of %lld updates\n",
                d->roles.layout.trainer, (long long)d->replica_checks);
    int outcome = rc; /* 1: stopped by a signal */
    if (rc == 1)
        fprintf(stderr, "train: stopped by signal %d after a checkpoint; resume with --resume\n",
                (int)rlvr_run_stop_flag);
    if (d->async) {
        async_summary(d);
        rc = async_shutdown(d, rc == 1 ? rlvr_trainer_version(t) : r->stop_step);
        if (rc < 0) return leader_abort(d, rc);
        flights_free(d);
        rlvr_trainer_free(t);
        return outcome;
    }
    /* STOP carries the step reached (= the version, synchronous mode): the
     * other ranks exit with the same status */
    int64_t reached = rc == 1 ? d->published : r->stop_step;
    rc = send_control_all(d, RLVR_CONTROL_STOP, reached, d->published);
    if (rc == 0) rc = rlvr_weights_publish_stop(d->weights);
    if (rc == 0) rc = rlvr_weights_publish_wait(d->weights, d->timeout_s, NULL);
    if (rc == 0) rc = rlvr_mpi_queue_flush(d->queue, d->timeout_s, NULL);
    if (rc < 0) return leader_abort(d, rc);
    rlvr_trainer_free(t);
    return outcome;
}

/* ---- rollout rank --------------------------------------------------------------------------- */

/* Async mode: a finished rollout waiting to be sent. */
typedef struct {
    rlvr_harness_job job;
    rlvr_work_item item; /* its work item; the rollout is item.group_id + index */
    int index;
    int64_t version;     /* the weights version it was generated with */
    double due;          /* rlvr_now() when it may be sent (simulated environment delay) */
} held_job;

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

/* ro->jobs[0..n) = the rollouts of work items [0, count), zeroed and keyed. */
static int prepare_jobs(const dist *d, roller *ro, int count, int n) {
    if (n > ro->cap_jobs) {
        rlvr_harness_job *p = realloc(ro->jobs, (size_t)n * sizeof *p);
        if (!p) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        ro->jobs = p, ro->cap_jobs = n;
    }
    memset(ro->jobs, 0, (size_t)n * sizeof *ro->jobs);
    for (int i = 0, j = 0; i < count; i++)
        for (int k = 0; k < ro->items[i].group_size; k++, j++) {
            ro->jobs[j].task = rlvr_task_pool_get(d->run->pool, (size_t)ro->items[i].task_index);
            ro->jobs[j].step = (uint32_t)ro->items[i].step;
            ro->jobs[j].sequence = ro->items[i].sample_sequence + (uint32_t)k;
        }
    return 0;
}

/* Rollout k of work item w: the record to the leader, the record with its
 * patch to its verifier rank. */
static int send_job(dist *d, rlvr_harness_job *job, const rlvr_work_item *w, int k, int64_t version) {
    job->record.group_id = w->group_id;
    job->record.rollout_index = k;
    job->record.policy_version = version;
    rlvr_wire_job_info info = {w->task_index, job->calls, job->calls_parsed, (uint8_t)job->public_tests_changed,
                               job->patch_reason};
    RLVR_TRY(rlvr_wire_encode_job_record(&d->out, &job->record, &info, NULL, 0));
    RLVR_TRY(send_out(d, RLVR_MPI_LEADER, RLVR_MSG_RECORD));
    RLVR_TRY(rlvr_wire_encode_job_record(&d->out, &job->record, &info, job->patch, job->patch_len));
    return send_out(d, verifier_of(d, w->group_id + k), RLVR_MSG_RECORD);
}

/* Benchmarks: sends the call's records when their environments' delays
 * have passed, soonest first (the environments wait side by side). */
static int send_delayed(dist *d, roller *ro, int n) {
    double t0 = rlvr_now(), *due = malloc((size_t)n * sizeof *due);
    int *item = malloc((size_t)n * sizeof *item), *index = malloc((size_t)n * sizeof *index), rc = 0;
    if (!due || !item || !index) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    for (int i = 0, j = 0; rc == 0 && i < ro->n_items; i++)
        for (int k = 0; k < ro->items[i].group_size; k++, j++)
            due[j] = t0 + d->sim->delay(d->sim->arg, &ro->jobs[j], 0), item[j] = i, index[j] = k;
    for (int left = n; rc == 0 && left > 0; left--) {
        int next = -1;
        for (int j = 0; j < n; j++)
            if (item[j] >= 0 && (next < 0 || due[j] < due[next])) next = j;
        double wait = due[next] - rlvr_now();
        if (wait > 0) sleep_us((long)(wait * 1e6));
        rc = send_job(d, &ro->jobs[next], &ro->items[item[next]], index[next], ro->version);
        item[next] = -1;
    }
    free(due), free(item), free(index);
    return rc;
}

/* Runs the collected work items in one harness call and sends the results. */
static int roll_work(dist *d, roller *ro) {
    const rlvr_run *r = d->run;
    int n = 0;
    RLVR_TRY(check_items(d, ro, ro->n_items, &n));
    RLVR_TRY(prepare_jobs(d, ro, ro->n_items, n));
    int rc = rlvr_harness_run(ro->sampler, r->tok, &r->harness, ro->jobs, n);
    if (rc == 0 && d->sim) {
        rc = send_delayed(d, ro, n);
    } else {
        for (int i = 0, j = 0; i < ro->n_items; i++)
            for (int k = 0; k < ro->items[i].group_size; k++, j++) {
                if (rc < 0) break;
                rc = send_job(d, &ro->jobs[j], &ro->items[i], k, ro->version);
            }
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

/* ---- rollout rank, bounded-async mode ---- */

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

/* Tells the leader once that this rank caught a signal. */
static int forward_signal(dist *d, bool *told) {
    if (!rlvr_run_stop_flag || *told) return 0;
    *told = true;
    rlvr_control_msg c = {RLVR_CONTROL_SIGNAL, (int64_t)rlvr_run_stop_flag, -1};
    RLVR_TRY(rlvr_wire_encode_control(&d->out, &c));
    return send_out(d, RLVR_MPI_LEADER, RLVR_MSG_CONTROL);
}

/* Work items at the front of the queue that start now: all of them, or
 * (simulation) those whose rollouts fit in the free environments. */
static int items_that_fit(const dist *d, const roller *ro) {
    if (!d->sim) return ro->n_items;
    int free_envs = d->sim->environments - ro->n_held, k = 0;
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
            double due = rc == 0 && d->sim ? now + d->sim->delay(d->sim->arg, &ro->jobs[j], 0) : now;
            if (rc == 0) rc = hold(ro, &ro->jobs[j], &ro->items[i], k, version, due);
            rlvr_harness_job_clear(&ro->jobs[j]);
        }
    memmove(ro->items, ro->items + count, (size_t)(ro->n_items - count) * sizeof *ro->items);
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
            rc = send_job(d, &h->job, &h->item, h->index, h->version);
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
    ro->n_held = 0, ro->n_items = 0;
    RLVR_TRY(rlvr_mpi_queue_flush(d->queue, -1, NULL));
    rlvr_control_msg c = {RLVR_CONTROL_DONE, step, ro->version};
    RLVR_TRY(rlvr_wire_encode_control(&d->out, &c));
    RLVR_TRY(send_out(d, RLVR_MPI_LEADER, RLVR_MSG_CONTROL));
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
        RLVR_TRY(forward_signal(d, &told));
        RLVR_TRY(send_due(d, ro));
        RLVR_TRY(swap_in(d, ro));
        int count = ro->version >= 0 ? items_that_fit(d, ro) : 0;
        if (count > 0) RLVR_TRY(roll_work_async(d, ro, count));
        else sleep_us(ASYNC_POLL_US);
    }
}

static int roll(dist *d) {
    rlvr_run *r = d->run;
    roller ro = {.version = -1};
    int all = 0, rc = agree_max(d, 0, -1, &all); /* 1: the leader has built the pool */
    if (rc < 0) return abort_job(d, rc);
    if (all) return setup_failed(d, all);
    rc = rlvr_run_pool(r, false);
    if (rc == 0) rc = rlvr_run_require_tokenizer(r); /* the leader has set it by now */
    if (rc == 0) rc = rlvr_run_host(r); /* workspaces of "tests" tasks */
    if (rc == 0) rc = rlvr_run_new_model(r, &ro.model);
    if (rc == 0) rc = rlvr_sampler_new(&ro.sampler, ro.model, &r->sampler);
    if (rc == 0) rc = rlvr_weights_new(&d->weights, d->roles.weights, rlvr_model_num_params(ro.model), 0);
    int code = rc < 0 ? report(d, rc) : 0;
    rc = agree_max(d, code, -1, &all); /* 2: every rank is set up */
    if (rc < 0) return abort_job(d, rc);
    int64_t stop_step = NOT_STOPPED;
    if (all == 0) {
        rc = d->async ? roll_loop_async(d, &ro, &stop_step) : roll_loop(d, &ro, &stop_step);
        if (rc < 0) return abort_job(d, rc);
    }
    for (int i = 0; i < ro.n_held; i++) rlvr_harness_job_clear(&ro.held[i].job);
    free(ro.held);
    rlvr_sampler_free(ro.sampler);
    rlvr_model_free(ro.model);
    free(ro.items);
    free(ro.jobs);
    if (all) return setup_failed(d, all);
    return stop_step < r->stop_step ? 1 : 0;
}

/* ---- data-parallel trainer ranks ------------------------------------------------------------ */

/* The update batch on the trainer communicator (native byte order: every
 * trainer rank runs the same binary): 10 doubles (step, the objective
 * options, n, T), adv[n] double, n_tokens[n] i32, tokens[T] i32,
 * logprobs[T] f32, mask[T] u8. */
#define UPDATE_HEAD 10

static int update_reserve(dist *d, size_t bytes) {
    if (bytes <= d->update_cap) return 0;
    char *p = realloc(d->update_buf, bytes);
    if (!p) return RLVR_FAIL(RLVR_ENOMEM, "out of memory for the update batch (%zu bytes)", bytes);
    d->update_buf = p, d->update_cap = bytes;
    return 0;
}

static size_t update_bytes(int64_t n, int64_t T) {
    return UPDATE_HEAD * sizeof(double) + (size_t)n * (sizeof(double) + sizeof(int32_t)) +
           (size_t)T * (sizeof(int32_t) + sizeof(float) + 1);
}

static int encode_update(dist *d, const rlvr_update_batch *b) {
    int64_t T = 0;
    for (int i = 0; i < b->n; i++) T += b->recs[i]->n_tokens;
    d->update_len = update_bytes(b->n, T);
    RLVR_TRY(update_reserve(d, d->update_len));
    const rlvr_objective_options *o = &b->opt;
    double head[UPDATE_HEAD] = {(double)b->step, o->clip_low, o->clip_high, o->is_cap, o->kl_beta,
                                o->entropy_coef, (double)o->aggregation, o->normaliser, (double)b->n, (double)T};
    char *p = d->update_buf;
    memcpy(p, head, sizeof head), p += sizeof head;
    memcpy(p, b->adv, (size_t)b->n * sizeof *b->adv), p += (size_t)b->n * sizeof *b->adv;
    for (int i = 0; i < b->n; i++, p += sizeof(int32_t)) memcpy(p, &b->recs[i]->n_tokens, sizeof(int32_t));
    for (int i = 0; i < b->n; i++) {
        size_t len = (size_t)b->recs[i]->n_tokens;
        memcpy(p, b->recs[i]->tokens, len * sizeof(int32_t));
        p += len * sizeof(int32_t);
    }
    for (int i = 0; i < b->n; i++) {
        size_t len = (size_t)b->recs[i]->n_tokens;
        memcpy(p, b->recs[i]->logprobs, len * sizeof(float));
        p += len * sizeof(float);
    }
    for (int i = 0; i < b->n; i++) {
        size_t len = (size_t)b->recs[i]->n_tokens;
        memcpy(p, b->recs[i]->mask, len);
        p += len;
    }
    return 0;
}

/* Views into d->update_buf: recs[i] points into it (not to be freed). */
typedef struct {
    rlvr_update_batch b;
    rlvr_rollout *recs;
    const rlvr_rollout **ptrs;
} update_view;

static int decode_update(dist *d, update_view *v) {
    double head[UPDATE_HEAD];
    memcpy(head, d->update_buf, sizeof head);
    int n = (int)head[8];
    int64_t T = (int64_t)head[9];
    rlvr_objective_options o = {.clip_low = head[1], .clip_high = head[2], .is_cap = head[3], .kl_beta = head[4],
                                .entropy_coef = head[5], .aggregation = (rlvr_aggregation)(int)head[6],
                                .normaliser = head[7]};
    v->recs = calloc((size_t)(n > 0 ? n : 1), sizeof *v->recs);
    v->ptrs = calloc((size_t)(n > 0 ? n : 1), sizeof *v->ptrs);
    if (!v->recs || !v->ptrs) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    char *p = d->update_buf + sizeof head;
    const double *adv = (const double *)(void *)p;
    p += (size_t)n * sizeof(double);
    const int32_t *len = (const int32_t *)(void *)p;
    char *tok = p + (size_t)n * sizeof(int32_t), *lp = tok + (size_t)T * sizeof(int32_t), *mask = lp + (size_t)T * sizeof(float);
    for (int i = 0; i < n; i++) {
        rlvr_rollout *r = &v->recs[i];
        r->n_tokens = r->cap_tokens = len[i];
        r->tokens = (int32_t *)(void *)tok, r->logprobs = (float *)(void *)lp, r->mask = (uint8_t *)mask;
        tok += (size_t)len[i] * sizeof(int32_t), lp += (size_t)len[i] * sizeof(float), mask += len[i];
        v->ptrs[i] = r;
    }
    v->b = (rlvr_update_batch){.step = (int64_t)head[0], .opt = o, .n = n, .recs = v->ptrs, .adv = adv};
    return 0;
}

/* The leader's batch to every trainer rank: size, then the bytes. */
static int bcast_update(dist *d, bool leader) {
    uint64_t bytes = leader ? d->update_len : 0;
    RLVR_MPI_CHECK(MPI_Bcast(&bytes, 1, MPI_UINT64_T, 0, d->roles.role_comm));
    if (!leader) RLVR_TRY(update_reserve(d, (size_t)bytes));
    for (uint64_t at = 0; at < bytes;) { /* int counts */
        int chunk = bytes - at > (1u << 30) ? 1 << 30 : (int)(bytes - at);
        RLVR_MPI_CHECK(MPI_Bcast(d->update_buf + at, chunk, MPI_BYTE, 0, d->roles.role_comm));
        at += (uint64_t)chunk;
    }
    return 0;
}

/* [shards] write: each trainer rank writes its part of the batch to its own
 * shard, which needs what the broadcast leaves out (task, group, rewards,
 * verdict, turns, timings, seeds …). The leader sends trainer rank r its part
 * [lo_r, hi_r) as whole records, point to point on the trainer communicator:
 * a u64 byte count, then the bytes in chunks of at most 1 GiB; the bytes are,
 * per record in batch order, a u64 length and the wire record (mpi/wire.h,
 * external32, versioned). */
#define PART_TAG 7100
#define PART_CHUNK (1 << 30)

static int encode_part(dist *d, const rlvr_update_batch *b, int lo, int hi) {
    d->part.len = 0;
    for (int i = lo; i < hi; i++) {
        RLVR_TRY(rlvr_wire_encode_record(&d->out, b->recs[i], NULL, 0));
        uint64_t len = d->out.len;
        RLVR_TRY(rlvr_wire_buf_reserve(&d->part, d->part.len + sizeof len + d->out.len));
        memcpy(d->part.data + d->part.len, &len, sizeof len);
        memcpy(d->part.data + d->part.len + sizeof len, d->out.data, d->out.len);
        d->part.len += sizeof len + d->out.len;
    }
    return 0;
}

static int send_part(dist *d, int trainer_rank) {
    uint64_t bytes = d->part.len;
    RLVR_MPI_CHECK(MPI_Send(&bytes, 1, MPI_UINT64_T, trainer_rank, PART_TAG, d->roles.role_comm));
    for (uint64_t at = 0; at < bytes;) {
        int chunk = bytes - at > PART_CHUNK ? PART_CHUNK : (int)(bytes - at);
        RLVR_MPI_CHECK(MPI_Send(d->part.data + at, chunk, MPI_BYTE, trainer_rank, PART_TAG, d->roles.role_comm));
        at += (uint64_t)chunk;
    }
    return 0;
}

static int send_parts(dist *d, const rlvr_update_batch *b) {
    for (int r = 1; r < d->roles.role_size; r++) {
        int lo = 0, hi = 0;
        rlvr_update_part(b, r, d->roles.role_size, &lo, &hi);
        RLVR_TRY(encode_part(d, b, lo, hi));
        RLVR_TRY(send_part(d, r));
    }
    return 0;
}

/* A non-leader trainer rank: its part from the leader, decoded into
 * d->part_recs[0 .. d->n_part_recs). */
static int receive_part(dist *d) {
    uint64_t bytes = 0;
    RLVR_MPI_CHECK(MPI_Recv(&bytes, 1, MPI_UINT64_T, 0, PART_TAG, d->roles.role_comm, MPI_STATUS_IGNORE));
    RLVR_TRY(rlvr_wire_buf_reserve(&d->part, (size_t)bytes));
    for (uint64_t at = 0; at < bytes;) {
        int chunk = bytes - at > PART_CHUNK ? PART_CHUNK : (int)(bytes - at);
        RLVR_MPI_CHECK(MPI_Recv(d->part.data + at, chunk, MPI_BYTE, 0, PART_TAG, d->roles.role_comm,
                                MPI_STATUS_IGNORE));
        at += (uint64_t)chunk;
    }
    d->part.len = (size_t)bytes;
    d->n_part_recs = 0;
    for (size_t at = 0; at < d->part.len;) {
        uint64_t len = 0;
        if (d->part.len - at < sizeof len)
            return rlvr_error_set(RLVR_EFORMAT, "the leader's shard part is cut short at byte %zu of %zu", at,
                                  d->part.len);
        memcpy(&len, d->part.data + at, sizeof len);
        at += sizeof len;
        if (len > d->part.len - at)
            return rlvr_error_set(RLVR_EFORMAT, "record %d of the leader's shard part claims %llu bytes, %zu are left",
                                  d->n_part_recs, (unsigned long long)len, d->part.len - at);
        if (d->n_part_recs == d->cap_part_recs) {
            int cap = d->cap_part_recs ? 2 * d->cap_part_recs : 64;
            rlvr_rollout *p = realloc(d->part_recs, (size_t)cap * sizeof *p);
            if (!p) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
            memset(p + d->cap_part_recs, 0, (size_t)(cap - d->cap_part_recs) * sizeof *p);
            d->part_recs = p, d->cap_part_recs = cap;
        }
        RLVR_TRY(rlvr_wire_decode_record(&d->part_recs[d->n_part_recs], NULL, d->part.data + at, (size_t)len));
        d->n_part_recs++;
        at += (size_t)len;
    }
    return 0;
}

/* rlvr_trainer_dp.share (leader): UPDATE to each trainer rank, then the
 * batch, then ([shards] write) each rank's part as whole records. */
static int dp_share(void *ctx, const rlvr_update_batch *b) {
    dist *d = ctx;
    for (int i = 1; i < d->roles.layout.trainer; i++)
        RLVR_TRY(send_control(d, world_rank(d, RLVR_ROLE_TRAINER, i), RLVR_CONTROL_UPDATE, b->step, b->n));
    RLVR_TRY(encode_update(d, b));
    RLVR_TRY(bcast_update(d, true));
    return d->run->io.shards ? send_parts(d, b) : 0;
}

/* Stats summed over trainer ranks in rank order (max for the log-prob gap). */
#define DP_STATS 7

static int dp_reduce(void *ctx, rlvr_model *model, step_stats *s) {
    dist *d = ctx;
    int P = d->roles.role_size;
    RLVR_TRY(rlvr_mpi_sum_ordered(d->roles.role_comm, rlvr_model_grads(model), rlvr_model_num_params(model), 0));
    double mine[DP_STATS] = {s->loss, s->entropy_sum, (double)s->tokens, (double)s->clipped,
                             (double)s->truncated_is, s->logprob_diff_max, s->kl_sum};
    double *all = malloc((size_t)P * DP_STATS * sizeof *all);
    if (!all) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    int rc = MPI_Allgather(mine, DP_STATS, MPI_DOUBLE, all, DP_STATS, MPI_DOUBLE, d->roles.role_comm);
    if (rc != MPI_SUCCESS) {
        free(all);
        RLVR_MPI_CHECK(rc);
    }
    double sum[DP_STATS] = {0};
    for (int r = 0; r < P; r++)
        for (int k = 0; k < DP_STATS; k++)
            sum[k] = k == 5 ? (all[r * DP_STATS + k] > sum[k] ? all[r * DP_STATS + k] : sum[k]) : sum[k] + all[r * DP_STATS + k];
    free(all);
    s->loss = sum[0], s->entropy_sum = sum[1], s->tokens = (int64_t)sum[2], s->clipped = (int64_t)sum[3];
    s->truncated_is = (int64_t)sum[4], s->logprob_diff_max = sum[5], s->kl_sum = sum[6];
    return 0;
}

static uint64_t fnv1a(const void *data, size_t len) {
    const unsigned char *p = data;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* rlvr_trainer_dp.check: every replica's weights hash to the leader's (cheap
 * next to the step: one pass over the parameters). */
static int dp_check(void *ctx, rlvr_model *model, int64_t step) {
    dist *d = ctx;
    uint64_t mine = fnv1a(rlvr_model_params_read(model), rlvr_model_num_params(model) * sizeof(float));
    uint64_t *all = malloc((size_t)d->roles.role_size * sizeof *all);
    if (!all) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    int rc = MPI_Allgather(&mine, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, d->roles.role_comm);
    int differs = 0;
    uint64_t lead_hash = all[0], other = 0;
    for (int r = 1; rc == MPI_SUCCESS && r < d->roles.role_size && !differs; r++)
        if (all[r] != all[0]) differs = r, other = all[r];
    free(all);
    if (differs)
        return rlvr_error_set(RLVR_ESTATE, "after step %lld the weights of trainer rank %d differ from the leader's "
                                           "(hash %016llx vs %016llx): the replicas diverged",
                              (long long)step, differs, (unsigned long long)other, (unsigned long long)lead_hash);
    RLVR_MPI_CHECK(rc);
    d->replica_checks++;
    return 0;
}

static void set_dp(dist *d, rlvr_trainer *t) {
    rlvr_trainer_dp dp = {.rank = d->roles.role_rank, .size = d->roles.role_size,
                          .share = d->roles.is_leader ? dp_share : NULL, .reduce = dp_reduce, .check = dp_check,
                          .ctx = d};
    rlvr_trainer_set_dp(t, &dp);
}

/* The leader's weights, AdamW moments and KL reference to every trainer
 * rank (after set-up: from [train] init or the checkpoint resumed). */
static int bcast_floats(dist *d, float *buf, size_t n) {
    for (size_t at = 0; at < n;) {
        int chunk = n - at > (1u << 28) ? 1 << 28 : (int)(n - at);
        RLVR_MPI_CHECK(MPI_Bcast(buf + at, chunk, MPI_FLOAT, 0, d->roles.role_comm));
        at += (size_t)chunk;
    }
    return 0;
}

static int bcast_state(dist *d, rlvr_trainer *t) {
    rlvr_model *m = rlvr_trainer_model_mut(t), *ref = rlvr_trainer_reference(t);
    size_t n = rlvr_model_num_params(m);
    RLVR_TRY(bcast_floats(d, rlvr_model_params(m), n));
    RLVR_TRY(bcast_floats(d, rlvr_model_adam_m(m), n));
    RLVR_TRY(bcast_floats(d, rlvr_model_adam_v(m), n));
    if (ref) RLVR_TRY(bcast_floats(d, rlvr_model_params(ref), rlvr_model_num_params(ref)));
    return 0;
}

/* [shards] write: this rank's part as whole records in place of the
 * broadcast's views, which hold what the gradient needs and nothing else. */
static int take_part(dist *d, update_view *v) {
    int lo = 0, hi = 0;
    rlvr_update_part(&v->b, d->roles.role_rank, d->roles.role_size, &lo, &hi);
    RLVR_TRY(receive_part(d));
    if (d->n_part_recs != hi - lo)
        return rlvr_error_set(RLVR_EFORMAT, "step %lld: the leader sent %d records for this rank's part, rollouts "
                                            "[%d, %d) of the batch",
                              (long long)v->b.step, d->n_part_recs, lo, hi);
    for (int i = lo; i < hi; i++) {
        const rlvr_rollout *whole = &d->part_recs[i - lo], *view = v->ptrs[i];
        if (whole->n_tokens != view->n_tokens ||
            memcmp(whole->tokens, view->tokens, (size_t)view->n_tokens * sizeof *view->tokens) != 0)
            return rlvr_error_set(RLVR_EFORMAT, "step %lld: record %d of the leader's shard part (task %s) is not "
                                                "rollout %d of the batch",
                                  (long long)v->b.step, i - lo, whole->task_id, i);
        v->ptrs[i] = whole;
    }
    return 0;
}

/* UPDATE on a non-leader trainer rank: the batch, then the step on its part. */
static int follow_update(dist *d) {
    RLVR_TRY(bcast_update(d, false));
    update_view v = {0};
    step_stats s = {0};
    int rc = decode_update(d, &v);
    if (rc == 0 && d->run->io.shards) rc = take_part(d, &v);
    if (rc == 0) rc = rlvr_trainer_apply(d->replica, &v.b, &s);
    free(v.recs), free(v.ptrs);
    return rc;
}

/* Async shutdown: this rank tells the leader it has stopped (DONE, with the
 * step reached); the caller has flushed its queued sends. */
static int say_done(dist *d, int64_t stop_step) {
    rlvr_control_msg done = {RLVR_CONTROL_DONE, stop_step, -1};
    RLVR_TRY(rlvr_wire_encode_control(&d->out, &done));
    RLVR_TRY(send_out(d, RLVR_MPI_LEADER, RLVR_MSG_CONTROL));
    return rlvr_mpi_queue_flush(d->queue, -1, NULL);
}

/* A non-leader trainer rank until STOP: UPDATE (the step), STEP (the
 * synchronous stop agreement), STOP (async mode: then DONE). Caught signals
 * go to the leader in async mode, into the STEP agreement otherwise. */
static int follow_loop(dist *d, int64_t *stop_step) {
    bool told = false;
    while (*stop_step == NOT_STOPPED) {
        if (d->async) RLVR_TRY(forward_signal(d, &told));
        bool got = false;
        RLVR_TRY(rlvr_mpi_queue_poll(d->queue, RLVR_MPI_LEADER, RLVR_MSG_ANY, &d->msg, &got));
        if (!got) {
            sleep_us(ASYNC_POLL_US);
            continue;
        }
        rlvr_control_msg c = {0};
        if (d->msg.kind != RLVR_MSG_CONTROL)
            return rlvr_error_set(RLVR_EFORMAT, "a trainer rank got an unexpected %s message from the leader",
                                  rlvr_msg_kind_name(d->msg.kind));
        RLVR_TRY(rlvr_wire_decode_control(&c, d->msg.body.data, d->msg.body.len));
        if (c.what == RLVR_CONTROL_UPDATE) {
            RLVR_TRY(follow_update(d));
        } else if (c.what == RLVR_CONTROL_STEP) {
            int sig = 0;
            RLVR_TRY(agree_max(d, (int)rlvr_run_stop_flag, -1, &sig));
        } else if (c.what == RLVR_CONTROL_STOP) {
            *stop_step = c.step;
        } else {
            return rlvr_error_set(RLVR_EFORMAT, "a trainer rank got control %d from the leader", (int)c.what);
        }
    }
    RLVR_TRY(rlvr_mpi_queue_flush(d->queue, -1, NULL));
    if (!d->async) return 0;
    return say_done(d, *stop_step);
}

static int follow(dist *d) {
    rlvr_run *r = d->run;
    rlvr_model *model = NULL;
    int all = 0, rc = agree_max(d, 0, -1, &all); /* 1: the leader has built the pool */
    if (rc < 0) return abort_job(d, rc);
    if (all) return setup_failed(d, all);
    rc = rlvr_run_pool(r, false);
    if (rc == 0) rc = rlvr_run_new_model(r, &model);
    if (rc == 0) rc = rlvr_trainer_new_replica(&d->replica, r, model);
    int code = rc < 0 ? report(d, rc) : 0;
    rc = agree_max(d, code, -1, &all); /* 2: every rank is set up */
    if (rc < 0) return abort_job(d, rc);
    int64_t stop_step = NOT_STOPPED;
    if (all == 0) {
        set_dp(d, d->replica);
        rc = bcast_state(d, d->replica);
        if (rc == 0) rc = follow_loop(d, &stop_step);
        if (rc < 0) return abort_job(d, rc);
    }
    rlvr_trainer_free(d->replica);
    d->replica = NULL;
    if (all) return setup_failed(d, all);
    return stop_step < r->stop_step ? 1 : 0;
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

/* Async mode: verifies until STOP, telling the leader about a caught
 * signal; after STOP drops the records still arriving and says DONE. */
static int verify_loop_async(dist *d, rlvr_verifiers *v, int64_t *stop_step) {
    rlvr_wire_buf patch = {0};
    bool told = false;
    int rc = 0;
    while (rc == 0 && *stop_step == NOT_STOPPED) {
        rc = forward_signal(d, &told);
        bool got = false;
        if (rc == 0) rc = rlvr_mpi_queue_poll(d->queue, MPI_ANY_SOURCE, RLVR_MSG_ANY, &d->msg, &got);
        if (rc < 0) break;
        if (!got) {
            sleep_us(ASYNC_POLL_US);
            continue;
        }
        if (d->msg.kind == RLVR_MSG_RECORD) {
            rc = verify_one(d, v, &patch);
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
    rlvr_wire_buf_free(&patch);
    if (rc < 0) return rc;
    /* every rollout rank said DONE before this STOP: what is left is theirs, unverified */
    for (bool got = true; got;) RLVR_TRY(rlvr_mpi_queue_poll(d->queue, MPI_ANY_SOURCE, RLVR_MSG_RECORD, &d->msg, &got));
    RLVR_TRY(rlvr_mpi_queue_flush(d->queue, -1, NULL));
    return say_done(d, *stop_step);
}

static int verify(dist *d) {
    rlvr_run *r = d->run;
    rlvr_verifiers *v = NULL;
    int all = 0, rc = agree_max(d, 0, -1, &all); /* 1: the leader has built the pool */
    if (rc < 0) return abort_job(d, rc);
    if (all) return setup_failed(d, all);
    rc = rlvr_run_pool(r, false);
    if (rc == 0) rc = rlvr_verifiers_new(&v, r);
    int code = rc < 0 ? report(d, rc) : 0;
    rc = agree_max(d, code, -1, &all); /* 2: every rank is set up */
    if (rc < 0) return abort_job(d, rc);
    int64_t stop_step = NOT_STOPPED;
    if (all == 0) {
        rc = d->async ? verify_loop_async(d, v, &stop_step) : verify_loop(d, v, &stop_step);
        if (rc < 0) return abort_job(d, rc);
        int64_t runs = 0, cached = 0, freed = 0;
        rlvr_verifiers_counts(v, &runs, &cached, &freed);
        fprintf(stderr,
                "train: verifier rank %d: %lld enclave verifications, %lld verdicts from the cache; %lld idle task "
                "enclaves freed\n",
                d->roles.role_rank, (long long)runs, (long long)cached, (long long)freed);
    }
    rlvr_verifiers_free(v);
    if (all) return setup_failed(d, all);
    return stop_step < r->stop_step ? 1 : 0;
}

/* ---- the command ---------------------------------------------------------------------------- */

/* One process plays every role (no hooks): 0, 1 (stopped) or the error,
 * which the caller says. */
static int train_single(rlvr_run *r, bool resume) {
    rlvr_trainer *t = NULL;
    if (r->train.max_staleness > 0)
        fprintf(stderr, "train: [train] max_staleness = %lld: bounded-async training needs rollout ranks (mpirun or "
                        "srun with [layout]); one process trains synchronously\n",
                (long long)r->train.max_staleness);
    int rc = rlvr_trainer_new(&t, r, resume);
    if (rc == 0) rc = rlvr_trainer_run(t);
    rlvr_trainer_free(t);
    if (rc == 1) {
        fprintf(stderr, "train: stopped by signal %d after a checkpoint; resume with --resume\n",
                (int)rlvr_run_stop_flag);
        return 1;
    }
    return rc < 0 ? rc : 0;
}

/* Every rank's host name, gathered on the leader for the run manifest.
 * Collective over the world; the leader's allocation failing aborts the job
 * (d->abort: the others wait in the gather). */
static int gather_hosts(dist *d) {
    char mine[DIST_HOST_CAP] = "";
    int len = 0;
    if (MPI_Get_processor_name(mine, &len) != MPI_SUCCESS) snprintf(mine, sizeof mine, "unknown");
    int n = d->roles.world_size;
    if (d->roles.is_leader) {
        d->host_names = calloc((size_t)n, sizeof *d->host_names);
        d->hosts = calloc((size_t)n, sizeof *d->hosts);
        if (!d->host_names || !d->hosts) {
            d->abort = d->reported = true;
            return rlvr_error_set(RLVR_ENOMEM, "out of memory");
        }
        for (int i = 0; i < n; i++) d->hosts[i] = d->host_names[i];
    }
    int rc = MPI_Gather(mine, DIST_HOST_CAP, MPI_CHAR, d->host_names, DIST_HOST_CAP, MPI_CHAR, 0, MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? 0 : RLVR_FAIL(RLVR_EMPI, "gathering host names failed");
}

/* This rank's part of the job over MPI ranks; *out as rlvr_train_job. */
static int train_ranks(rlvr_run *r, const rlvr_layout *layout, bool resume, const rlvr_train_simulation *sim,
                       rlvr_train_outcome *out) {
    dist d = {.run = r, .sim = sim, .async = r->train.max_staleness > 0, .published = -1};
    int rc = rlvr_config_get_double(r->cfg, "layout", "timeout_s", &d.timeout_s);
    if (rc == 0) rc = rlvr_mpi_roles_init(&d.roles, layout, MPI_COMM_WORLD); /* collective */
    if (rc == 0) rc = rlvr_mpi_queue_new(&d.queue, d.roles.world, DIST_MAX_PENDING);
    if (rc < 0) { /* the same on every rank (configuration, launch): said once */
        int me = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &me);
        rlvr_mpi_roles_free(&d.roles);
        *out = (rlvr_train_outcome){.rc = rc, .reported = me != 0};
        return rc;
    }
    rc = gather_hosts(&d);
    if (rc < 0 && d.abort) { /* nothing freed: the job is aborted next */
        *out = (rlvr_train_outcome){.rc = rc, .reported = true, .abort = true};
        return rc;
    }
    if (rc < 0) { /* collective, like roles_init: every rank fails together, silently */
        rlvr_mpi_roles_free(&d.roles);
        *out = (rlvr_train_outcome){.rc = RLVR_EMPI, .reported = true};
        return RLVR_EMPI;
    }
    int code = d.roles.is_leader                    ? lead(&d, resume)
               : d.roles.role == RLVR_ROLE_TRAINER  ? follow(&d)
               : d.roles.role == RLVR_ROLE_VERIFIER ? verify(&d)
                                                    : roll(&d);
    *out = (rlvr_train_outcome){.rc = code, .reported = code < 0 && d.reported, .abort = d.abort};
    if (d.abort) return code; /* nothing freed: a peer may be gone, and the job is aborted next */
    rlvr_mpi_queue_free(d.queue);
    rlvr_weights_free(d.weights);
    rlvr_mpi_msg_free(&d.msg);
    rlvr_wire_buf_free(&d.out);
    rlvr_rollout_free(&d.rec);
    free(d.update_buf);
    rlvr_wire_buf_free(&d.part);
    for (int i = 0; i < d.cap_part_recs; i++) rlvr_rollout_free(&d.part_recs[i]);
    free(d.part_recs);
    free(d.host_names);
    free(d.hosts);
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
    return 0;
}

int rlvr_train_job(const rlvr_run_args *a, const rlvr_config_key *const *schemas, const rlvr_train_simulation *sim,
                   rlvr_train_outcome *out) {
    bool mpi = launched();
    int world = 1;
    *out = (rlvr_train_outcome){0};
    if (mpi) {
        int provided = 0;
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
            out->rc = rlvr_error_set(RLVR_EMPI, "MPI_Init_thread failed");
            return out->rc;
        }
        MPI_Comm_size(MPI_COMM_WORLD, &world);
    }
    rlvr_run_install_signals(); /* after MPI_Init: the handlers are ours */
    rlvr_run r;
    int rc = rlvr_run_load(&r, a->config, a->out, schemas);
    bool opened = rc == 0;
    rlvr_layout layout;
    bool single = true;
    if (rc == 0) rc = check_ranks(&r, world, &layout, &single);
    if (rc == 0 && a->until_step > 0 && a->until_step < r.train.steps) r.stop_step = a->until_step;
    if (rc < 0) { /* the same on every rank: said by world rank 0 */
        int me = 0;
        if (mpi) MPI_Comm_rank(MPI_COMM_WORLD, &me);
        *out = (rlvr_train_outcome){.rc = rc, .reported = me != 0};
    } else if (single) {
        *out = (rlvr_train_outcome){.rc = train_single(&r, a->resume)};
    } else {
        train_ranks(&r, &layout, a->resume, sim, out);
        if (out->abort) return out->rc; /* MPI stays up for the caller's MPI_Abort */
    }
    if (opened) rlvr_run_close(&r);
    if (mpi) MPI_Finalize();
    return out->rc;
}
