/* train/leader_async.c — the leader of `rlvr train` in bounded-async mode
 * ([train] max_staleness = Δv_max > 0 with rollout ranks; docs/WIRE.md
 * "Bounded-async mode"); the rest of the leader is train/leader.c.
 *
 * The trainer's take hook keeps Δv_max steps' worth of groups handed out as
 * WORK (tasks drawn by the trainer), collects RECORD and VERDICT messages
 * and SIGNAL controls as they come, and admits each finished group by
 * staleness (Δv = v_trainer − v_rollout ≤ Δv_max, else dropped and
 * counted); after each update the newest version (or, rollout_policy =
 * promoted, the promoted checkpoint) is broadcast as soon as the previous
 * broadcast is through. At the end: STOP to the rollout ranks and their
 * DONE (in-flight work dropped), the weights' stop header, then STOP to the
 * verifier and follower trainer ranks and their DONE. */
#include "core/error.h"
#include "core/log.h"
#include "core/sys.h"
#include "io/checkpoint.h"
#include "io/gate_report.h"
#include "mpi/admission.h"
#include "mpi/layout.h"
#include "train/credit_wire.h"
#include "train/dist_internal.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef rlvr_leader leader;
typedef struct rlvr_leader_flight flight;

/* A group handed out: its jobs fill as records and verdicts arrive. */
struct rlvr_leader_flight {
    int64_t id;        /* group_id on the wire: the run index of its first rollout */
    int32_t task, G;   /* train-split index, group size */
    size_t pool_index;
    int rank;          /* world rank of the rollout rank generating it */
    int missing;       /* records and verdicts still to come */
    int64_t finished;  /* finish order (0: still missing some) */
    uint8_t *have;     /* (G) bit 0: record arrived, bit 1: verdict arrived */
    rlvr_verdict_msg *verdicts; /* (G) */
    rlvr_harness_job *jobs;     /* (G) */
    bool forks;                 /* Monte-Carlo credit's forks: the jobs are the trainer's (borrowed), and the
                                   flight is never admitted as a group */
};

static void flight_free(flight *f) {
    if (!f) return;
    for (int k = 0; !f->forks && f->jobs && k < f->G; k++) rlvr_harness_job_clear(&f->jobs[k]);
    if (!f->forks) free(f->jobs);
    free(f->have), free(f->verdicts), free(f);
}

void rlvr_leader_async_free(leader *l) {
    for (int i = 0; i < l->n_flights; i++) flight_free(l->flights[i]);
    free(l->flights), free(l->outstanding);
    l->flights = NULL, l->outstanding = NULL, l->n_flights = l->cap_flights = 0;
}

static void flight_remove(leader *l, int i) {
    l->n_fork_flights -= l->flights[i]->forks;
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

/* A new flight of G jobs (`jobs`: the trainer's, borrowed; NULL: its own,
 * zeroed) for the least loaded rollout rank, its id the next run index. */
static int new_flight(leader *l, int32_t task, int32_t G, size_t pool_index, rlvr_harness_job *jobs, flight **out) {
    dist *d = l->d;
    if (l->n_flights == l->cap_flights) {
        int cap = l->cap_flights ? 2 * l->cap_flights : 32;
        flight **p = realloc(l->flights, (size_t)cap * sizeof *p);
        if (!p) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        l->flights = p, l->cap_flights = cap;
    }
    flight *f = calloc(1, sizeof *f);
    if (!f) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    f->forks = jobs != NULL;
    f->have = calloc((size_t)G, 1), f->verdicts = calloc((size_t)G, sizeof *f->verdicts);
    f->jobs = jobs ? jobs : calloc((size_t)G, sizeof *f->jobs);
    if (!f->have || !f->verdicts || !f->jobs) {
        flight_free(f);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    }
    int r = least_loaded(l);
    f->id = l->next_job, f->task = task, f->G = G, f->pool_index = pool_index, f->missing = 2 * G;
    f->rank = rlvr_dist_world_rank(d, RLVR_ROLE_ROLLOUT, r);
    l->flights[l->n_flights++] = f;
    l->n_fork_flights += f->forks;
    l->next_job += G;
    l->outstanding[r] += G;
    *out = f;
    return 0;
}

static int hand_out_group(leader *l, int32_t task, int32_t G, size_t pool_index, int64_t version) {
    flight *f = NULL;
    RLVR_TRY(new_flight(l, task, G, pool_index, NULL, &f));
    /* sampling keys: the next step, and a sequence block per group drawn for it (as one process) */
    if (l->draw_groups >= RLVR_GROUPS_DRAWN_MAX)
        return RLVR_FAIL(RLVR_ELIMIT, "%d groups drawn at policy version %lld, all its sampling keys",
                         RLVR_GROUPS_DRAWN_MAX, (long long)version);
    uint32_t step = (uint32_t)version + 1, sequence = rlvr_rl_group_sequence((int32_t)l->draw_groups++, 0);
    const rlvr_task *t = rlvr_trainer_task(l->trainer, task);
    uint32_t capture = rlvr_trainer_capture_tools(l->trainer, t);
    for (int k = 0; k < G; k++)
        f->jobs[k] = (rlvr_harness_job){.task = t, .step = step, .sequence = sequence + (uint32_t)k,
                                        .capture_tools = capture};
    return rlvr_leader_send_work(l, f->jobs, G, pool_index, f->id, version, f->rank);
}

/* Hands out groups until at least max(target, need) are out and not taken. */
static int top_up(leader *l, int need) {
    int want = async_target(l) > need ? async_target(l) : need, n = want - (l->n_flights - l->n_fork_flights);
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
        rlvr_progress("train: rollout ranks now use the promoted checkpoint %s (version %lld)", path,
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
    int rc = rlvr_credit_decode_job(job, info.credit, info.credit_len);
    if (rc < 0) return rlvr_error_wrap(rc, "world rank %d, the record of task %s", d->msg.source, job->task->id);
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
            rlvr_log_line(RLVR_LOG_WARN, "train: world rank %d caught signal %lld: stopping after this step", d->msg.source,
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

/* Rollout k's verdict into its record. */
static void take_verdict(flight *f, int k) {
    rlvr_rollout *r = &f->jobs[k].record;
    r->verdict = f->verdicts[k].verdict;
    r->verdict_reason = f->verdicts[k].reason;
    r->reward.outcome = f->verdicts[k].outcome;
    r->timings.verify_s = f->verdicts[k].verify_s;
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
        take_verdict(f, k);
        lag = v - r->policy_version;
        s->admitted_lag[lag < RLVR_TRAIN_LAG_BINS - 1 ? lag : RLVR_TRAIN_LAG_BINS - 1]++;
    }
    RLVR_TRY(rlvr_trainer_put_group(l->trainer, f->task, f->jobs, f->G));
    (*got)++;
    flight_remove(l, i);
    return 0;
}

/* The group flight that finished first, or -1 (fork flights are the
 * fork hook's). */
static int first_finished(const leader *l) {
    int best = -1;
    for (int i = 0; i < l->n_flights; i++)
        if (!l->flights[i]->forks && l->flights[i]->finished &&
            (best < 0 || l->flights[i]->finished < l->flights[best]->finished))
            best = i;
    return best;
}

/* One round of the async loop: a message handled, or a short sleep; the
 * missing-work error after [layout] timeout_s of silence. */
static int poll_once(leader *l, double *heard) {
    dist *d = l->d;
    bool arrived = false;
    RLVR_TRY(rlvr_mpi_queue_poll(d->queue, MPI_ANY_SOURCE, RLVR_MSG_ANY, &d->msg, &arrived));
    if (arrived) {
        RLVR_TRY(async_message(l));
        *heard = rlvr_now();
    } else if (rlvr_now() - *heard > d->timeout_s) {
        return async_missing_error(l);
    } else {
        rlvr_dist_sleep_us(RLVR_DIST_POLL_US);
    }
    return 0;
}

/* rlvr_generate_fn for Monte-Carlo credit's forks in async mode: each fork
 * group goes out as a flight of the trainer's own jobs to the least loaded
 * rollout rank, next to the groups in flight (which keep arriving and wait
 * for the take hook); returns once every fork has its record and verdict.
 * The records keep the version that generated them: the trainer admits each
 * fork by staleness. */
static int dist_forks(void *ctx, rlvr_harness_job *jobs, int n, const size_t *pool_index, int64_t version,
                      step_stats *s) {
    leader *l = ctx;
    double t0 = rlvr_now(), heard = t0;
    for (int i = 0; i < n;) {
        int k = rlvr_leader_work_group(jobs, pool_index, i, n);
        flight *f = NULL;
        RLVR_TRY(new_flight(l, -1, k - i, pool_index[i], jobs + i, &f));
        RLVR_TRY(rlvr_leader_send_work(l, jobs + i, k - i, pool_index[i], f->id, version, f->rank));
        i = k;
    }
    while (l->n_fork_flights > 0) {
        for (int i = 0; i < l->n_flights; i++) {
            flight *f = l->flights[i];
            if (!f->forks || !f->finished) continue;
            for (int k = 0; k < f->G; k++) take_verdict(f, k);
            flight_remove(l, i--);
        }
        if (l->n_fork_flights > 0) RLVR_TRY(poll_once(l, &heard));
    }
    s->generate_wall += rlvr_now() - t0;
    return 0;
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
        RLVR_TRY(poll_once(l, &heard));
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
int rlvr_leader_async_shutdown(leader *l, int64_t reached) {
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

void rlvr_leader_async_summary(const leader *l) {
    const rlvr_admission *a = &l->adm;
    char bins[512] = "";
    size_t used = 0;
    for (int b = 0; b < RLVR_STALENESS_BINS && used < sizeof bins; b++)
        if (a->histogram[b])
            used += (size_t)snprintf(bins + used, sizeof bins - used, " %d%s:%llu", b,
                                     b == RLVR_STALENESS_BINS - 1 ? "+" : "", (unsigned long long)a->histogram[b]);
    rlvr_progress("train: admission (Δv_max %lld): %llu groups' rollouts arrived, %llu admitted, %llu dropped as "
                  "stale, largest Δv %lld; by Δv:%s",
                  (long long)a->max_staleness, (unsigned long long)a->arrived, (unsigned long long)a->admitted,
                  (unsigned long long)a->dropped_stale, (long long)a->max_seen, bins);
}

int rlvr_leader_async_start(leader *l, rlvr_trainer *t) {
    dist *d = l->d;
    rlvr_run *r = d->run;
    l->outstanding = calloc((size_t)d->roles.layout.rollout, sizeof *l->outstanding);
    RLVR_TRY(l->outstanding ? rlvr_admission_init(&l->adm, r->train.max_staleness)
                            : RLVR_FAIL(RLVR_ENOMEM, "out of memory"));
    l->draw_version = -1;
    rlvr_progress("train: bounded-async, Δv_max = %lld: %d groups kept handed out",
                  (long long)r->train.max_staleness, async_target(l));
    rlvr_trainer_set_async(t, dist_take, l, dist_forks, l, dist_after_update_async, l);
    return 0;
}
