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
 * Bounded-async mode (docs/WIRE.md "Bounded-async mode"): the take hook
 * keeps Δv_max steps' worth of groups handed out as WORK, collects RECORD
 * and VERDICT messages and SIGNAL controls as they come, admits finished
 * groups by staleness, and publishes each new version (or the promoted
 * checkpoint) as soon as the previous broadcast is through; at the end STOP
 * to rollout ranks, the weights' stop header, STOP to verifier and trainer
 * ranks, and a DONE from each.
 *
 * Data-parallel trainer ranks: the leader's side of train/dp.c (UPDATE, the
 * batch and each rank's part). Only the leader's waits have a time limit
 * ([layout] timeout_s); its failures after start-up name the checkpoint to
 * resume from. */
#include "core/error.h"
#include "core/log.h"
#include "core/sys.h"
#include "io/checkpoint.h"
#include "io/gate_report.h"
#include "mpi/admission.h"
#include "mpi/layout.h"
#include "train/dist_internal.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct flight flight; /* async mode: a group handed out and not yet taken */

/* The leader's state. */
typedef struct {
    dist *d;
    rlvr_trainer *trainer;
    int64_t published; /* weights version the rollout ranks hold; -1 = none yet */
    char promoted[RLVR_IO_PATH_CAP]; /* rollout_policy = promoted: the checkpoint published last ("": none) */
    int64_t next_job;  /* jobs handed out so far: a group's id is the run index of its first job */
    /* async mode */
    rlvr_admission adm;   /* the Δv gate, counted over the job */
    flight **flights;     /* handed out, not yet taken by the trainer, in hand-out order */
    int n_flights, cap_flights;
    int64_t finished;     /* groups finished so far (a flight's finish order) */
    int64_t *outstanding; /* (R) rollouts handed to rollout rank i whose record has not arrived */
    int64_t draw_version; /* trainer version of the draws counted by draw_round / draw_groups */
    uint32_t draw_round, draw_groups;
    /* data-parallel trainer ranks ([layout] trainer > 1) */
    rlvr_dist_dp dp;
} leader;

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


/* Hands out the round's jobs as work items: one per group of consecutive
 * jobs with one task, one step and consecutive sequences; group g goes to
 * rollout rank g mod R, and its id is the run index of its first job. */
static int hand_out(leader *l, round_state *rs, const size_t *pool_index) {
    dist *d = l->d;
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
        int dest = rlvr_dist_world_rank(d, RLVR_ROLE_ROLLOUT, g % d->roles.layout.rollout);
        for (int j = i; j < k; j++) rs->rollout[j] = dest;
        RLVR_TRY(rlvr_wire_encode_work(&d->out, &w));
        RLVR_TRY(rlvr_dist_send_out(d, dest, RLVR_MSG_WORK));
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
        fprintf(stderr, "train: a rank caught signal %d: stopping after this step\n", sig);
    }
    return 0;
}

/* abort_job on the leader, which also says where to resume from. */
static int leader_abort(leader *l, int rc) {
    dist *d = l->d;
    char latest[RLVR_IO_PATH_CAP];
    rlvr_dist_report(d, rc);
    if (rlvr_checkpoint_latest(d->run->io.checkpoint_dir, latest, sizeof latest) == 0)
        fprintf(stderr, "rlvr train: the last checkpoint is %s: fix the cause and rerun with --resume\n", latest);
    else
        fprintf(stderr, "rlvr train: no checkpoint was written yet: fix the cause and rerun\n");
    fflush(NULL);
    d->abort = true;
    return rc;
}

/* ---- bounded-async mode --------------------------------------------------------------------- */

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

static void flights_free(leader *l) {
    for (int i = 0; i < l->n_flights; i++) flight_free(l->flights[i]);
    free(l->flights), free(l->outstanding);
    l->flights = NULL, l->outstanding = NULL, l->n_flights = l->cap_flights = 0;
}

static void flight_remove(leader *l, int i) {
    flight_free(l->flights[i]);
    memmove(l->flights + i, l->flights + i + 1, (size_t)(l->n_flights - i - 1) * sizeof *l->flights);
    l->n_flights--;
}

/* Groups kept handed out and not yet taken: Δv_max steps' worth. The
 * trainer takes a step's worth per step, so by Little's law a group waits
 * about Δv_max steps from hand-out to use: the ranks never run dry, and most
 * groups arrive within the bound. */
static int async_target(const leader *l) {
    const dist *d = l->d;
    return (int)(d->run->train.max_staleness * d->run->rl.grpo.groups_per_step);
}

/* The rollout rank with the fewest rollouts outstanding. */
static int least_loaded(const leader *l) {
    const dist *d = l->d;
    int best = 0;
    for (int i = 1; i < d->roles.layout.rollout; i++)
        if (l->outstanding[i] < l->outstanding[best]) best = i;
    return best;
}

static int hand_out_group(leader *l, int32_t task, int32_t G, size_t pool_index, int64_t version) {
    dist *d = l->d;
    if (l->n_flights == l->cap_flights) {
        int cap = l->cap_flights ? 2 * l->cap_flights : 32;
        flight **p = realloc(l->flights, (size_t)cap * sizeof *p);
        if (!p) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        l->flights = p, l->cap_flights = cap;
    }
    flight *f = calloc(1, sizeof *f);
    if (!f) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    f->have = calloc((size_t)G, 1), f->verdicts = calloc((size_t)G, sizeof *f->verdicts);
    f->jobs = calloc((size_t)G, sizeof *f->jobs);
    if (!f->have || !f->verdicts || !f->jobs) {
        flight_free(f);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    }
    int r = least_loaded(l);
    *f = (flight){.id = l->next_job, .task = task, .G = G, .pool_index = pool_index, .missing = 2 * G,
                  .rank = rlvr_dist_world_rank(d, RLVR_ROLE_ROLLOUT, r), .have = f->have, .verdicts = f->verdicts,
                  .jobs = f->jobs};
    l->flights[l->n_flights++] = f;
    /* sampling keys: the next step, and a sequence block per group drawn for it (as one process) */
    uint32_t step = (uint32_t)version + 1, sequence = l->draw_groups++ * 1024u;
    const rlvr_task *t = rlvr_trainer_task(l->trainer, task);
    for (int k = 0; k < G; k++) f->jobs[k] = (rlvr_harness_job){.task = t, .step = step, .sequence = sequence + (uint32_t)k};
    rlvr_work_item w = {.task_index = (int64_t)pool_index, .group_id = f->id, .group_size = G, .step = step,
                        .policy_version = version, .seed = d->run->sampler.seed, .sample_sequence = sequence};
    snprintf(w.task_id, sizeof w.task_id, "%s", t->id);
    l->next_job += G;
    l->outstanding[r] += G;
    RLVR_TRY(rlvr_wire_encode_work(&d->out, &w));
    return rlvr_dist_send_out(d, f->rank, RLVR_MSG_WORK);
}

/* Hands out groups until at least max(target, need) are out and not taken. */
static int top_up(leader *l, int need) {
    int want = async_target(l) > need ? async_target(l) : need, n = want - l->n_flights;
    if (n <= 0) return 0;
    int64_t version = rlvr_trainer_version(l->trainer);
    if (version != l->draw_version) l->draw_version = version, l->draw_round = 0, l->draw_groups = 0;
    int32_t *task = malloc((size_t)n * sizeof *task), *G = malloc((size_t)n * sizeof *G);
    size_t *pool_index = malloc((size_t)n * sizeof *pool_index);
    int rc = task && G && pool_index ? 0 : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    if (rc == 0) rc = rlvr_trainer_draw(l->trainer, n, l->draw_round++, task, G, pool_index);
    for (int i = 0; rc == 0 && i < n; i++) rc = hand_out_group(l, task[i], G[i], pool_index[i], version);
    free(task), free(G), free(pool_index);
    return rc;
}

/* Starts broadcasting the trainer's weights when the rollout ranks do not
 * have (or get) them yet and no broadcast is in flight: every rank ends up
 * with the newest version, skipping those that came and went meanwhile. */
static int publish_latest(leader *l) {
    dist *d = l->d;
    int64_t version = rlvr_trainer_version(l->trainer);
    if (version == l->published) return 0;
    bool idle = true;
    if (l->published >= 0) RLVR_TRY(rlvr_weights_publish_test(d->weights, &idle));
    if (!idle) return 0;
    RLVR_TRY(rlvr_weights_publish_start(d->weights, rlvr_model_params_read(rlvr_trainer_model(l->trainer)), version));
    l->published = version;
    return 0;
}

/* rollout_policy = promoted: the checkpoint RUN/promoted names, published
 * once each time the pointer changes (before any promotion: the run's
 * weights at start). The trainer moves on meanwhile; when it is more than
 * Δv_max versions past the promoted policy, every record would be refused,
 * so the job stops with an error that says what to do. */
static int publish_promoted(leader *l) {
    dist *d = l->d;
    rlvr_run *r = d->run;
    char path[RLVR_IO_PATH_CAP];
    int rc = rlvr_gate_read_promoted(r->io.run_dir, path, sizeof path);
    if (rc == RLVR_ENOTFOUND) {
        if (l->published < 0) return publish_latest(l); /* the initial weights */
    } else if (rc < 0) {
        return rc;
    } else if (strcmp(path, l->promoted) != 0) {
        bool idle = true;
        if (l->published >= 0) RLVR_TRY(rlvr_weights_publish_test(d->weights, &idle));
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
        snprintf(l->promoted, sizeof l->promoted, "%s", path);
        l->published = version;
    }
    /* the next step admits records of version ≥ v_trainer − Δv_max (none after the last step) */
    int64_t now = rlvr_trainer_version(l->trainer), lag = now - l->published;
    if (lag > r->train.max_staleness && now < r->stop_step)
        return rlvr_error_set(RLVR_ESTATE,
                              "the rollouts' promoted policy (version %lld) is %lld versions behind the trainer, "
                              "more than [train] max_staleness = %lld: every record would be refused; promote a "
                              "newer checkpoint (rlvr gate --promote %s) or raise max_staleness, then --resume",
                              (long long)l->published, (long long)lag, (long long)r->train.max_staleness,
                              r->io.run_dir);
    return 0;
}

static flight *find_flight(const leader *l, int64_t id) {
    for (int i = 0; i < l->n_flights; i++)
        if (l->flights[i]->id == id) return l->flights[i];
    return NULL;
}

static void flight_arrived(leader *l, flight *f) {
    if (--f->missing == 0) f->finished = ++l->finished;
}

static int async_record(leader *l) {
    dist *d = l->d;
    rlvr_wire_job_info info;
    RLVR_TRY(rlvr_wire_decode_job_record(&d->rec, &info, NULL, d->msg.body.data, d->msg.body.len));
    flight *f = find_flight(l, d->rec.group_id);
    int k = d->rec.rollout_index;
    if (!f || k < 0 || k >= f->G || (f->have[k] & 1) || d->msg.source != f->rank)
        return rlvr_error_set(RLVR_EFORMAT, "world rank %d sent a record for group %lld rollout %d, which is not "
                                            "awaited from it",
                              d->msg.source, (long long)d->rec.group_id, k);
    rlvr_harness_job *job = &f->jobs[k];
    if (d->rec.sample_sequence != job->sequence || strcmp(d->rec.task_id, job->task->id) != 0 ||
        d->rec.policy_version < 0 || d->rec.policy_version > l->published)
        return rlvr_error_set(RLVR_EFORMAT,
                              "world rank %d sent a record (task %s, sequence %u, version %lld) for the job of task "
                              "%s, sequence %u, generated by weights up to version %lld",
                              d->msg.source, d->rec.task_id, d->rec.sample_sequence, (long long)d->rec.policy_version,
                              job->task->id, job->sequence, (long long)l->published);
    rlvr_rollout empty = job->record;
    job->record = d->rec;
    d->rec = empty;
    job->record.group_id = 0, job->record.rollout_index = 0;
    job->calls = info.calls, job->calls_parsed = info.calls_parsed;
    job->public_tests_changed = info.public_tests_changed, job->patch_reason = info.patch_reason;
    f->have[k] |= 1;
    for (int i = 0; i < d->roles.layout.rollout; i++)
        if (rlvr_dist_world_rank(d, RLVR_ROLE_ROLLOUT, i) == f->rank) l->outstanding[i]--;
    flight_arrived(l, f);
    return 0;
}

static int async_verdict(leader *l) {
    dist *d = l->d;
    rlvr_verdict_msg v;
    RLVR_TRY(rlvr_wire_decode_verdict(&v, d->msg.body.data, d->msg.body.len));
    flight *f = find_flight(l, v.group_id);
    int k = v.rollout_index;
    if (!f || k < 0 || k >= f->G || (f->have[k] & 2) || d->msg.source != rlvr_dist_verifier_of(d, f->id + k))
        return rlvr_error_set(RLVR_EFORMAT, "world rank %d sent a verdict for group %lld rollout %d, which is not "
                                            "awaited from it",
                              d->msg.source, (long long)v.group_id, k);
    f->verdicts[k] = v;
    f->have[k] |= 2;
    flight_arrived(l, f);
    return 0;
}

/* A control message from another rank: a caught signal (stop at the next
 * step boundary) or, while shutting down, DONE (counted in *done). */
static int async_control(leader *l, int *done) {
    dist *d = l->d;
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

static int async_message(leader *l) {
    dist *d = l->d;
    switch (d->msg.kind) {
    case RLVR_MSG_RECORD: return async_record(l);
    case RLVR_MSG_VERDICT: return async_verdict(l);
    case RLVR_MSG_CONTROL: return async_control(l, NULL);
    default:
        return rlvr_error_set(RLVR_EFORMAT, "the leader got an unexpected %s message from world rank %d",
                              rlvr_msg_kind_name(d->msg.kind), d->msg.source);
    }
}

/* The error when nothing arrives: what the groups in flight miss, by rank. */
static int async_missing_error(const leader *l) {
    const dist *d = l->d;
    char list[1024] = "";
    size_t at = 0;
    for (int w = 1; w < d->roles.world_size && at < sizeof list; w++) {
        int n = 0;
        for (int i = 0; i < l->n_flights; i++)
            for (int k = 0; k < l->flights[i]->G; k++) {
                const flight *f = l->flights[i];
                n += (!(f->have[k] & 1) && f->rank == w) + (!(f->have[k] & 2) && rlvr_dist_verifier_of(d, f->id + k) == w);
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
                          d->timeout_s, l->n_flights, list);
}

/* The admission gate on a finished group: all its rollouts come from one
 * harness call (one version); the group is admitted only when every one of
 * them is, else dropped whole (GRPO advantages need the whole group). */
static int admit(leader *l, int i, step_stats *s, int32_t *got) {
    dist *d = l->d;
    flight *f = l->flights[i];
    int64_t v = rlvr_trainer_version(l->trainer), lag = 0, worst = 0;
    bool all = true;
    for (int k = 0; k < f->G; k++) {
        bool ok = false;
        int rc = rlvr_admission_check(&l->adm, v, f->jobs[k].record.policy_version, &ok, &lag);
        if (rc < 0)
            return rlvr_error_set(RLVR_ESTATE, "a record of group %lld has policy version %lld, newer than the "
                                               "trainer's %lld",
                                  (long long)f->id, (long long)f->jobs[k].record.policy_version, (long long)v);
        all &= ok;
        worst = lag > worst ? lag : worst;
    }
    if (!all) {
        s->stale_dropped += f->G;
        flight_remove(l, i);
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
    RLVR_TRY(rlvr_trainer_put_group(l->trainer, f->task, f->jobs, f->G));
    (*got)++;
    flight_remove(l, i);
    return 0;
}

/* The finished flight that finished first, or -1. */
static int first_finished(const leader *l) {
    int best = -1;
    for (int i = 0; i < l->n_flights; i++)
        if (l->flights[i]->finished && (best < 0 || l->flights[i]->finished < l->flights[best]->finished)) best = i;
    return best;
}

/* rlvr_take_groups_fn: n admitted groups for the round, in finish order. */
static int dist_take(void *ctx, int32_t n, step_stats *s) {
    leader *l = ctx;
    dist *d = l->d;
    double t0 = rlvr_now(), heard = t0;
    for (int32_t got = 0; got < n;) {
        /* promoted rollouts: the pointer is read at start and at step boundaries only */
        if (!d->run->train.promoted_only) RLVR_TRY(publish_latest(l));
        else if (l->published < 0) RLVR_TRY(publish_promoted(l));
        RLVR_TRY(top_up(l, n - got));
        int i = first_finished(l);
        if (i >= 0) {
            RLVR_TRY(admit(l, i, s, &got));
            continue;
        }
        bool arrived = false;
        RLVR_TRY(rlvr_mpi_queue_poll(d->queue, MPI_ANY_SOURCE, RLVR_MSG_ANY, &d->msg, &arrived));
        if (arrived) {
            RLVR_TRY(async_message(l));
            heard = rlvr_now();
        } else if (rlvr_now() - heard > d->timeout_s) {
            return async_missing_error(l);
        } else {
            rlvr_dist_sleep_us(RLVR_DIST_POLL_US);
        }
    }
    RLVR_TRY(top_up(l, 0)); /* work for the rollout ranks while the trainer updates */
    s->generate_wall += rlvr_now() - t0;
    return 0;
}

/* rlvr_after_update_fn (async): the new weights go out as soon as the
 * previous broadcast is through; nobody waits for a step boundary. */
static int dist_after_update_async(void *ctx, const rlvr_model *model, int64_t version) {
    (void)model, (void)version;
    leader *l = ctx;
    dist *d = l->d;
    return d->run->train.promoted_only ? publish_promoted(l) : publish_latest(l);
}

/* Receives (and drops) until `want` ranks said DONE. */
static int drain_until_done(leader *l, int want) {
    dist *d = l->d;
    double heard = rlvr_now();
    for (int done = 0; done < want;) {
        bool arrived = false;
        RLVR_TRY(rlvr_mpi_queue_poll(d->queue, MPI_ANY_SOURCE, RLVR_MSG_ANY, &d->msg, &arrived));
        if (arrived) {
            heard = rlvr_now();
            if (d->msg.kind == RLVR_MSG_CONTROL) RLVR_TRY(async_control(l, &done));
        } else if (rlvr_now() - heard > d->timeout_s) {
            return rlvr_error_set(RLVR_ELIMIT, "shutting down: %d of %d ranks did not finish within %.0f s "
                                               "([layout] timeout_s)",
                                  want - done, want, d->timeout_s);
        } else {
            rlvr_dist_sleep_us(RLVR_DIST_POLL_US);
        }
    }
    return 0;
}

/* The end in async mode: rollout ranks stop first (their last records and
 * verdicts are drained and dropped: in-flight work is discarded), then the
 * weights' stop header, then the verifier ranks. */
static int async_shutdown(leader *l, int64_t reached) {
    dist *d = l->d;
    int64_t version = rlvr_trainer_version(l->trainer);
    for (int i = 0; i < d->roles.layout.rollout; i++)
        RLVR_TRY(rlvr_dist_send_control(d, rlvr_dist_world_rank(d, RLVR_ROLE_ROLLOUT, i), RLVR_CONTROL_STOP, reached, version));
    RLVR_TRY(drain_until_done(l, d->roles.layout.rollout));
    RLVR_TRY(rlvr_weights_publish_wait(d->weights, d->timeout_s, NULL));
    RLVR_TRY(rlvr_weights_publish_stop(d->weights));
    RLVR_TRY(rlvr_weights_publish_wait(d->weights, d->timeout_s, NULL));
    for (int i = 0; i < d->roles.layout.verifier; i++)
        RLVR_TRY(rlvr_dist_send_control(d, rlvr_dist_world_rank(d, RLVR_ROLE_VERIFIER, i), RLVR_CONTROL_STOP, reached, version));
    for (int i = 1; i < d->roles.layout.trainer; i++)
        RLVR_TRY(rlvr_dist_send_control(d, rlvr_dist_world_rank(d, RLVR_ROLE_TRAINER, i), RLVR_CONTROL_STOP, reached, version));
    RLVR_TRY(drain_until_done(l, d->roles.layout.verifier + d->roles.layout.trainer - 1));
    return rlvr_mpi_queue_flush(d->queue, d->timeout_s, NULL);
}

static void async_summary(const leader *l) {
    const rlvr_admission *a = &l->adm;
    fprintf(stderr, "train: admission (Δv_max %lld): %llu groups' rollouts arrived, %llu admitted, %llu dropped as "
                    "stale, largest Δv %lld; by Δv:",
            (long long)a->max_staleness, (unsigned long long)a->arrived, (unsigned long long)a->admitted,
            (unsigned long long)a->dropped_stale, (long long)a->max_seen);
    for (int b = 0; b < RLVR_STALENESS_BINS; b++)
        if (a->histogram[b]) fprintf(stderr, " %d%s:%llu", b, b == RLVR_STALENESS_BINS - 1 ? "+" : "",
                                     (unsigned long long)a->histogram[b]);
    fprintf(stderr, "\n");
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
        l->outstanding = calloc((size_t)d->roles.layout.rollout, sizeof *l->outstanding);
        rc = l->outstanding ? rlvr_admission_init(&l->adm, r->train.max_staleness)
                            : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        if (rc < 0) return leader_abort(l, rc);
        l->draw_version = -1;
        fprintf(stderr, "train: bounded-async, Δv_max = %lld: %d groups kept handed out\n",
                (long long)r->train.max_staleness, async_target(l));
        rlvr_trainer_set_async(t, dist_take, l, dist_after_update_async, l);
    } else {
        rlvr_trainer_set_hooks(t, dist_generate, l, dist_after_update, l);
    }
    rc = rlvr_trainer_run(t);
    if (rc < 0) return leader_abort(l, rc);
    if (d->roles.layout.trainer > 1)
        fprintf(stderr, "train: %d trainer ranks: weights identical on every rank after each of %lld updates\n",
                d->roles.layout.trainer, (long long)l->dp.replica_checks);
    int outcome = rc; /* 1: stopped by a signal */
    if (rc == 1)
        fprintf(stderr, "train: stopped by signal %d after a checkpoint; resume with --resume\n",
                (int)rlvr_run_stop_flag);
    if (d->async) {
        async_summary(l);
        rc = async_shutdown(l, rc == 1 ? rlvr_trainer_version(t) : r->stop_step);
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
    fprintf(stderr, "train: %d ranks: %d trainer, %d verifier, %d rollout\n", d->roles.world_size,
            d->roles.layout.trainer, d->roles.layout.verifier, d->roles.layout.rollout);
    l.trainer = t;
    const int ranks[3] = {d->roles.layout.trainer, d->roles.layout.verifier, d->roles.layout.rollout};
    rlvr_trainer_set_ranks(t, ranks, hosts, d->roles.world_size);
    rc = lead_steps(&l, t);
    if (d->abort) return rc; /* nothing freed: the job is aborted next */
    flights_free(&l);
    rlvr_dist_dp_free(&l.dp);
    rlvr_trainer_free(t);
    return rc;
}
