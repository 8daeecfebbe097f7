/* train/leader.c — the leader (world rank 0) of `rlvr train` over MPI
 * ranks: it runs the trainer (train/trainer.h) and owns the run's files;
 * the other ranks serve it. Messages: docs/WIRE.md "Training protocol".
 *
 * Synchronous mode: rlvr_trainer_run with two hooks.
 *   generate   splits the round's jobs into groups (consecutive jobs of one
 *              task and step with consecutive sampling sequences), sends
 *              group g to rollout rank g mod R as WORK, then collects one
 *              RECORD (from the rollout rank) and one VERDICT (from verifier
 *              rank j mod V, j = the job's index counted over the run) per
 *              job, into jobs[j] whatever the arrival order;
 *   after_update  sends VERSION to the rollout ranks and broadcasts the new
 *              weights, then STEP to every rank, and all ranks agree on the
 *              stop flag (the largest signal number any rank caught).
 * At the end (or after a stop) it sends STOP to every rank.
 *
 * Bounded-async mode: the same role with the trainer's take hook instead
 * (train/leader_async.c).
 *
 * Data-parallel trainer ranks: the leader's side of train/dp.c (UPDATE, the
 * batch and each rank's part). Only the leader's waits have a time limit
 * ([layout] timeout_s); its failures after start-up name the checkpoint to
 * resume from. */
#include "core/error.h"
#include "core/log.h"
#include "core/sys.h"
#include "io/checkpoint.h"
#include "mpi/layout.h"
#include "train/credit_wire.h"
#include "train/dist_internal.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef rlvr_leader leader;

/* ---- synchronous mode ---------------------------------------------------------------------- */

/* VERSION to every rollout rank, then the broadcast of the weights. */
static int publish(leader *l, const rlvr_model *model, int64_t version) {
    dist *d = l->d;
    for (int i = 0; i < d->roles.layout.rollout; i++)
        RLVR_TRY(rlvr_dist_send_control(d, rlvr_dist_world_rank(d, RLVR_ROLE_ROLLOUT, i), RLVR_CONTROL_VERSION, version, version));
    RLVR_TRY(rlvr_weights_publish(d->weights, rlvr_model_params_read(model), version, d->timeout_s, NULL));
    l->published = version;
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


int rlvr_leader_work_group(const rlvr_harness_job *jobs, const size_t *pool_index, int i, int n) {
    int k = i + 1;
    while (k < n && jobs[k].task == jobs[i].task && jobs[k].step == jobs[i].step &&
           jobs[k].sequence == jobs[k - 1].sequence + 1 && pool_index[k] == pool_index[i] &&
           jobs[k].prefix == jobs[i].prefix && jobs[k].capture_tools == jobs[i].capture_tools)
        k++;
    return k;
}

int rlvr_leader_send_work(leader *l, const rlvr_harness_job *jobs, int G, size_t pool_index, int64_t group_id,
                          int64_t version, int dest) {
    dist *d = l->d;
    rlvr_work_item w = {.task_index = (int64_t)pool_index, .group_id = group_id, .group_size = G,
                        .step = jobs[0].step, .policy_version = version, .seed = d->run->sampler.seed,
                        .sample_sequence = jobs[0].sequence, .capture_tools = jobs[0].capture_tools};
    snprintf(w.task_id, sizeof w.task_id, "%s", jobs[0].task->id);
    if (jobs[0].prefix) {
        RLVR_TRY(rlvr_credit_encode_fork(&l->fork, &l->fork_scratch, jobs[0].prefix));
        w.fork = l->fork.data, w.fork_len = l->fork.len;
    }
    RLVR_TRY(rlvr_wire_encode_work(&d->out, &w));
    return rlvr_dist_send_out(d, dest, RLVR_MSG_WORK);
}

/* Hands out the round's jobs as work items (rlvr_leader_work_group); group
 * g goes to rollout rank g mod R, and its id is the run index of its first
 * job. */
static int hand_out(leader *l, round_state *rs, const size_t *pool_index) {
    dist *d = l->d;
    for (int i = 0, g = 0; i < rs->n; g++) {
        int k = rlvr_leader_work_group(rs->jobs, pool_index, i, rs->n);
        int dest = rlvr_dist_world_rank(d, RLVR_ROLE_ROLLOUT, g % d->roles.layout.rollout);
        for (int j = i; j < k; j++) rs->rollout[j] = dest;
        RLVR_TRY(rlvr_leader_send_work(l, rs->jobs + i, k - i, pool_index[i], rs->base + i, rs->version, dest));
        i = k;
    }
    return 0;
}

/* The error when results stop coming: what is missing, from which ranks. */
static int missing_error(const leader *l, const round_state *rs) {
    const dist *d = l->d;
    int W = d->roles.world_size, n_rec = 0, n_ver = 0;
    int *count = calloc((size_t)W, sizeof *count), *first = malloc((size_t)W * sizeof *first);
    if (!count || !first) {
        free(count), free(first);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    }
    for (int j = rs->n - 1; j >= 0; j--) { /* per rank: how many, and the first job missing */
        if (!(rs->have[j] & 1)) n_rec++, count[rs->rollout[j]]++, first[rs->rollout[j]] = j;
        int v = rlvr_dist_verifier_of(d, rs->base + j);
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
static int take_record(leader *l, round_state *rs) {
    dist *d = l->d;
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
    int rc = rlvr_credit_decode_job(job, info.credit, info.credit_len);
    if (rc < 0) return rlvr_error_wrap(rc, "world rank %d, the record of task %s", d->msg.source, job->task->id);
    rs->have[j] |= 1;
    return 0;
}

static int take_verdict(leader *l, round_state *rs) {
    dist *d = l->d;
    rlvr_verdict_msg v;
    RLVR_TRY(rlvr_wire_decode_verdict(&v, d->msg.body.data, d->msg.body.len));
    int64_t j = v.group_id - rs->base + v.rollout_index;
    if (j < 0 || j >= rs->n || (rs->have[j] & 2) || d->msg.source != rlvr_dist_verifier_of(d, rs->base + j))
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
static int collect(leader *l, round_state *rs, step_stats *s, double t0) {
    dist *d = l->d;
    int left_rec = rs->n, left_ver = rs->n;
    double records_done = t0;
    while (left_rec > 0 || left_ver > 0) {
        int rc = rlvr_mpi_queue_wait(d->queue, MPI_ANY_SOURCE, RLVR_MSG_ANY, &d->msg, d->timeout_s, NULL);
        if (rc == RLVR_ELIMIT) return missing_error(l, rs);
        RLVR_TRY(rc);
        if (d->msg.kind == RLVR_MSG_RECORD) {
            RLVR_TRY(take_record(l, rs));
            if (--left_rec == 0) records_done = rlvr_now();
        } else if (d->msg.kind == RLVR_MSG_VERDICT) {
            RLVR_TRY(take_verdict(l, rs));
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
    leader *l = ctx;
    double t0 = rlvr_now();
    if (version != l->published) RLVR_TRY(publish(l, rlvr_trainer_model(l->trainer), version));
    round_state rs = {.jobs = jobs, .n = n, .base = l->next_job, .version = version,
                      .rollout = malloc((size_t)(n > 0 ? n : 1) * sizeof *rs.rollout),
                      .have = calloc((size_t)(n > 0 ? n : 1), 1),
                      .verdicts = calloc((size_t)(n > 0 ? n : 1), sizeof *rs.verdicts)};
    l->next_job += n;
    int rc = rs.rollout && rs.have && rs.verdicts ? 0 : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    if (rc == 0) rc = hand_out(l, &rs, pool_index);
    if (rc == 0) rc = collect(l, &rs, s, t0);
    free(rs.rollout), free(rs.have), free(rs.verdicts);
    return rc;
}

/* rlvr_after_update_fn: new weights out, then the step boundary. */
static int dist_after_update(void *ctx, const rlvr_model *model, int64_t version) {
    leader *l = ctx;
    dist *d = l->d;
    RLVR_TRY(publish(l, model, version));
    RLVR_TRY(rlvr_dist_send_control_all(d, RLVR_CONTROL_STEP, version, version));
    int sig = 0;
    RLVR_TRY(rlvr_dist_agree_max(d, (int)rlvr_run_stop_flag, d->timeout_s, &sig));
    if (sig && !rlvr_run_stop_flag) {
        rlvr_run_stop_flag = sig; /* another rank caught it: checkpoint and stop here too */
        rlvr_log_line(RLVR_LOG_WARN, "train: a rank caught signal %d: stopping after this step", sig);
    }
    return 0;
}

/* abort_job on the leader, which also says where to resume from. */
static int leader_abort(leader *l, int rc) {
    dist *d = l->d;
    char latest[RLVR_IO_PATH_CAP];
    rlvr_dist_report(d, rc);
    if (rlvr_checkpoint_latest(d->run->io.checkpoint_dir, latest, sizeof latest) == 0)
        rlvr_log_line(RLVR_LOG_ERROR, "rlvr train: the last checkpoint is %s: fix the cause and rerun with --resume", latest);
    else
        rlvr_log_line(RLVR_LOG_ERROR, "rlvr train: no checkpoint was written yet: fix the cause and rerun");
    fflush(NULL);
    d->abort = true;
    return rc;
}

/* ---- the leader's job ------------------------------------------------------------------------ */

/* The leader's job once the ranks are set up: the trainer with this mode's
 * hooks, then the end of the job (STOP to every rank). */
static int lead_steps(leader *l, rlvr_trainer *t) {
    dist *d = l->d;
    rlvr_run *r = d->run;
    int rc = 0;
    if (d->roles.layout.trainer > 1) { /* data-parallel: every trainer rank starts from the leader's state */
        rlvr_dist_dp_set(&l->dp, t);
        rc = rlvr_dist_dp_bcast_state(&l->dp, t);
        if (rc < 0) return leader_abort(l, rc);
    }
    l->published = -1;
    if (d->async) {
        rc = rlvr_leader_async_start(l, t);
        if (rc < 0) return leader_abort(l, rc);
    } else {
        rlvr_trainer_set_hooks(t, dist_generate, l, dist_after_update, l);
    }
    rc = rlvr_trainer_run(t);
    if (rc < 0) return leader_abort(l, rc);
    if (d->roles.layout.trainer > 1)
        rlvr_progress("train: %d trainer ranks: weights identical on every rank after each of %lld updates",
                      d->roles.layout.trainer, (long long)l->dp.replica_checks);
    int outcome = rc; /* 1: stopped by a signal */
    if (rc == 1)
        rlvr_log_line(RLVR_LOG_WARN, "train: stopped by signal %d after a checkpoint; resume with --resume",
                      (int)rlvr_run_stop_flag);
    if (d->async) {
        rlvr_leader_async_summary(l);
        rc = rlvr_leader_async_shutdown(l, rc == 1 ? rlvr_trainer_version(t) : r->stop_step);
        if (rc < 0) return leader_abort(l, rc);
        return outcome;
    }
    /* STOP carries the step reached (= the version, synchronous mode): the
     * other ranks exit with the same status */
    int64_t reached = rc == 1 ? l->published : r->stop_step;
    rc = rlvr_dist_send_control_all(d, RLVR_CONTROL_STOP, reached, l->published);
    if (rc == 0) rc = rlvr_weights_publish_stop(d->weights);
    if (rc == 0) rc = rlvr_weights_publish_wait(d->weights, d->timeout_s, NULL);
    if (rc == 0) rc = rlvr_mpi_queue_flush(d->queue, d->timeout_s, NULL);
    if (rc < 0) return leader_abort(l, rc);
    return outcome;
}

int rlvr_dist_lead(dist *d, bool resume, const char *const *hosts) {
    leader l = {.d = d, .published = -1, .dp = {.d = d}};
    rlvr_run *r = d->run;
    rlvr_trainer *t = NULL;
    int rc = rlvr_trainer_new(&t, r, resume); /* builds the run's pool on first use */
    int code = rc < 0 ? rlvr_dist_report(d, rc) : 0, all = 0;
    rc = rlvr_dist_agree_max(d, code, -1, &all); /* 1: the pool is there (or the job ends) */
    if (rc == 0 && all == 0) {
        rc = rlvr_weights_new(&d->weights, d->roles.weights, rlvr_model_num_params(rlvr_trainer_model(t)), 0);
        code = rc < 0 ? rlvr_dist_report(d, rc) : 0;
        rc = rlvr_dist_agree_max(d, code, -1, &all); /* 2: every rank is set up */
    }
    if (rc < 0) return rlvr_dist_abort(d, rc);
    if (all) {
        rlvr_trainer_free(t);
        return rlvr_dist_setup_failed(d, all);
    }
    rlvr_progress("train: %d ranks: %d trainer, %d verifier, %d rollout", d->roles.world_size,
                  d->roles.layout.trainer, d->roles.layout.verifier, d->roles.layout.rollout);
    l.trainer = t;
    const int ranks[3] = {d->roles.layout.trainer, d->roles.layout.verifier, d->roles.layout.rollout};
    rlvr_trainer_set_ranks(t, ranks, hosts, d->roles.world_size);
    rc = lead_steps(&l, t);
    if (d->abort) return rc; /* nothing freed: the job is aborted next */
    rlvr_leader_async_free(&l);
    rlvr_dist_dp_free(&l.dp);
    rlvr_wire_buf_free(&l.fork);
    rlvr_wire_buf_free(&l.fork_scratch);
    rlvr_trainer_free(t);
    return rc;
}
