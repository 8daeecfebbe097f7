/* train/dist.c — `rlvr train` as a whole job (train/dist.h): one process,
 * or MPI ranks each playing one role of [layout]. This file holds what the
 * roles share: the messaging helpers (sends with back-off, the leader's
 * time limits), the start-up agreement, and the dispatch that picks this
 * rank's role; each role is a file of its own (train/dist_internal.h lists
 * them). Messages: docs/WIRE.md "Training protocol"; bounded-async mode
 * keeps the same roles and messages without step boundaries (docs/WIRE.md
 * "Bounded-async mode").
 *
 * Start-up: every rank opens the run; the leader builds the pool (first
 * agreement: every rank learns whether it is there), then every rank sets
 * itself up (second agreement: every rank is ready, or the job ends with the
 * worst failure, said by the rank that had it). Only the leader's waits have
 * a time limit ([layout] timeout_s): the other ranks wait for the leader as
 * long as it works (a checkpoint, a long step). An error after start-up ends
 * the job: the rank says its error and returns with rlvr_train_outcome.abort
 * set, and the command aborts every rank. */
#include "train/dist.h"

#include "core/error.h"
#include "core/log.h"
#include "core/sys.h"
#include "mpi/check.h"
#include "mpi/layout.h"
#include "train/dist_internal.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HOST_CAP 256

void rlvr_dist_sleep_us(long us) {
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* The start-up agreement's value for a failed rank: the largest over the
 * ranks wins, so a configuration error is what every rank reports. */
enum { SETUP_OK = 0, SETUP_FAILED = 1, SETUP_CONFIG = 2 };

static int setup_code_of(int rc) { return rc == RLVR_ECONFIG ? SETUP_CONFIG : SETUP_FAILED; }

/* Another rank (or this one, said already) failed to set up: every rank
 * ends with the agreed failure. */
int rlvr_dist_setup_failed(dist *d, int all) {
    d->reported = true;
    return rlvr_error_set(all == SETUP_CONFIG ? RLVR_ECONFIG : RLVR_ESTATE, "a rank failed to set up");
}

int rlvr_dist_world_rank(const dist *d, rlvr_rank_role role, int i) {
    return rlvr_layout_world_rank(&d->roles.layout, role, i);
}

static const char *role_name(const dist *d) { return rlvr_role_name(d->roles.role); }

/* Prints this rank's error (only this rank knows its role); returns the
 * start-up agreement's value for it. */
int rlvr_dist_report(dist *d, int rc) {
    const char *msg = rlvr_error_last();
    if (d->roles.is_leader) rlvr_log_line(RLVR_LOG_ERROR, "rlvr train: error: %s", msg[0] ? msg : rlvr_error_name(rc));
    else
        rlvr_log_line(RLVR_LOG_ERROR, "rlvr train: %s rank %d (world rank %d): error: %s", role_name(d), d->roles.role_rank,
                      d->roles.world_rank, msg[0] ? msg : rlvr_error_name(rc));
    d->reported = true;
    return setup_code_of(rc);
}

/* After start-up a rank cannot leave alone: the others would wait for it.
 * Returns rc with d->abort set; the caller returns at once (nothing freed:
 * the whole job is aborted next). */
int rlvr_dist_abort(dist *d, int rc) {
    rlvr_dist_report(d, rc);
    fflush(NULL);
    d->abort = true;
    return rc;
}

/* ---- messages ------------------------------------------------------------------------------- */

/* Sends d->out (encoded) to world rank `dest`, waiting for room in the queue. */
int rlvr_dist_send_out(dist *d, int dest, rlvr_msg_kind kind) {
    double t0 = rlvr_now(), limit = d->roles.is_leader ? d->timeout_s : -1;
    for (long delay = 20;; delay = delay < 1000 ? 2 * delay : 1000) {
        int rc = rlvr_mpi_queue_send(d->queue, dest, kind, &d->out);
        if (rc != RLVR_ELIMIT) return rc;
        if (limit >= 0 && rlvr_now() - t0 > limit)
            return rlvr_error_set(RLVR_ELIMIT, "sending a %s message to world rank %d: no room in the queue "
                                               "for %.0f s ([layout] timeout_s): is that rank alive?",
                                  rlvr_msg_kind_name(kind), dest, limit);
        rlvr_dist_sleep_us(delay);
    }
}

int rlvr_dist_send_control(dist *d, int dest, rlvr_control_kind what, int64_t step, int64_t version) {
    rlvr_control_msg c = {what, step, version};
    RLVR_TRY(rlvr_wire_encode_control(&d->out, &c));
    return rlvr_dist_send_out(d, dest, RLVR_MSG_CONTROL);
}

/* Sends a control message to every rank but the leader. */
int rlvr_dist_send_control_all(dist *d, rlvr_control_kind what, int64_t step, int64_t version) {
    for (int w = 1; w < d->roles.world_size; w++) RLVR_TRY(rlvr_dist_send_control(d, w, what, step, version));
    return 0;
}

/* Collective over the world: *out = the largest `local`. Sleeps between
 * tests, so ranks waiting for a busy leader leave the cores to it. */
int rlvr_dist_agree_max(dist *d, int local, double timeout_s, int *out) {
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
        rlvr_dist_sleep_us(delay);
    }
}

int rlvr_dist_verifier_of(const dist *d, int64_t run_job) {
    return rlvr_dist_world_rank(d, RLVR_ROLE_VERIFIER, (int)(run_job % d->roles.layout.verifier));
}

/* Tells the leader once that this rank caught a signal. */
int rlvr_dist_forward_signal(dist *d, bool *told) {
    if (!rlvr_run_stop_flag || *told) return 0;
    *told = true;
    rlvr_control_msg c = {RLVR_CONTROL_SIGNAL, (int64_t)rlvr_run_stop_flag, -1};
    RLVR_TRY(rlvr_wire_encode_control(&d->out, &c));
    return rlvr_dist_send_out(d, RLVR_MPI_LEADER, RLVR_MSG_CONTROL);
}

/* Async shutdown: this rank tells the leader it has stopped (DONE, with the
 * step reached); the caller has flushed its queued sends. */
int rlvr_dist_say_done(dist *d, int64_t stop_step) {
    rlvr_control_msg done = {RLVR_CONTROL_DONE, stop_step, -1};
    RLVR_TRY(rlvr_wire_encode_control(&d->out, &done));
    RLVR_TRY(rlvr_dist_send_out(d, RLVR_MPI_LEADER, RLVR_MSG_CONTROL));
    return rlvr_mpi_queue_flush(d->queue, -1, NULL);
}

/* ---- the job -------------------------------------------------------------------------------- */

/* One process plays every role (no hooks): 0, 1 (stopped) or the error,
 * which the caller says. */
static int train_single(rlvr_run *r, bool resume) {
    rlvr_trainer *t = NULL;
    if (r->train.max_staleness > 0)
        rlvr_log_line(RLVR_LOG_WARN, "train: [train] max_staleness = %lld: bounded-async training needs rollout ranks (mpirun or "
                      "srun with [layout]); one process trains synchronously",
                      (long long)r->train.max_staleness);
    int rc = rlvr_trainer_new(&t, r, resume);
    if (rc == 0) rc = rlvr_trainer_run(t);
    rlvr_trainer_free(t);
    if (rc == 1) {
        rlvr_log_line(RLVR_LOG_WARN, "train: stopped by signal %d after a checkpoint; resume with --resume",
                      (int)rlvr_run_stop_flag);
        return 1;
    }
    return rc < 0 ? rc : 0;
}

/* Every rank's host name, gathered on the leader for the run manifest.
 * Collective over the world; the leader's allocation failing aborts the job
 * (d->abort: the others wait in the gather). */
static int gather_hosts(dist *d, char (**names)[HOST_CAP], const char ***hosts) {
    char mine[HOST_CAP] = "";
    int len = 0;
    if (MPI_Get_processor_name(mine, &len) != MPI_SUCCESS) snprintf(mine, sizeof mine, "unknown");
    int n = d->roles.world_size;
    if (d->roles.is_leader) {
        *names = calloc((size_t)n, sizeof **names);
        *hosts = calloc((size_t)n, sizeof **hosts);
        if (!*names || !*hosts) {
            d->abort = d->reported = true;
            return rlvr_error_set(RLVR_ENOMEM, "out of memory");
        }
        for (int i = 0; i < n; i++) (*hosts)[i] = (*names)[i];
    }
    int rc = MPI_Gather(mine, HOST_CAP, MPI_CHAR, *names, HOST_CAP, MPI_CHAR, 0, MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? 0 : RLVR_FAIL(RLVR_EMPI, "gathering host names failed");
}

/* A failure that is the same on every rank (configuration, launch) is said
 * once, by world rank 0, before any rank leaves: mpirun kills the whole job
 * when the first rank exits non-zero, and a rank 0 that had not yet printed
 * would die without saying why. */
static rlvr_train_outcome failed_on_every_rank(int rc) {
    int me = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 0) {
        const char *msg = rlvr_error_last();
        rlvr_log_line(RLVR_LOG_ERROR, "rlvr train: error: %s", msg[0] ? msg : rlvr_error_name(rc));
        fflush(stderr);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return (rlvr_train_outcome){.rc = rc, .reported = true};
}

/* This rank's part of the job over MPI ranks; *out as rlvr_train_job. */
static int train_ranks(rlvr_run *r, const rlvr_layout *layout, bool resume, const rlvr_train_simulation *sim,
                       rlvr_train_outcome *out) {
    dist d = {.run = r, .async = r->train.max_staleness > 0};
    char (*names)[HOST_CAP] = NULL; /* leader: every rank's host, world-rank order (the manifest) */
    const char **hosts = NULL;      /* leader: views of names */
    rlvr_layout_config lc;
    int rc = rlvr_layout_config_read(&lc, r->cfg);
    d.timeout_s = rc == 0 ? lc.timeout_s : 0;
    if (rc == 0) rc = rlvr_mpi_roles_init(&d.roles, layout, MPI_COMM_WORLD); /* collective */
    if (rc == 0) rc = rlvr_mpi_queue_new(&d.queue, d.roles.world, RLVR_DIST_MAX_PENDING);
    if (rc < 0) { /* the same on every rank (configuration, launch) */
        rlvr_mpi_roles_free(&d.roles);
        *out = failed_on_every_rank(rc);
        return rc;
    }
    rc = gather_hosts(&d, &names, &hosts);
    if (rc < 0 && d.abort) { /* nothing freed: the job is aborted next */
        *out = (rlvr_train_outcome){.rc = rc, .reported = true, .abort = true};
        return rc;
    }
    if (rc < 0) { /* collective, like roles_init: every rank fails together, silently */
        rlvr_mpi_roles_free(&d.roles);
        *out = (rlvr_train_outcome){.rc = RLVR_EMPI, .reported = true};
        return RLVR_EMPI;
    }
    int code = d.roles.is_leader                    ? rlvr_dist_lead(&d, resume, hosts)
               : d.roles.role == RLVR_ROLE_TRAINER  ? rlvr_dist_follow(&d)
               : d.roles.role == RLVR_ROLE_VERIFIER ? rlvr_dist_verify(&d)
                                                    : rlvr_dist_roll(&d, sim);
    *out = (rlvr_train_outcome){.rc = code, .reported = code < 0 && d.reported, .abort = d.abort};
    if (d.abort) return code; /* nothing freed: a peer may be gone, and the job is aborted next */
    rlvr_mpi_queue_free(d.queue);
    rlvr_weights_free(d.weights);
    rlvr_mpi_msg_free(&d.msg);
    rlvr_wire_buf_free(&d.out);
    rlvr_rollout_free(&d.rec);
    free(names);
    free(hosts);
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
    rlvr_layout_config lc;
    RLVR_TRY(rlvr_layout_config_read(&lc, r->cfg));
    *l = lc.counts;
    *is_default = l->trainer == 1 && l->verifier == 1 && l->rollout == 1;
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
    if (rc < 0) { /* the same on every rank; said here by world rank 0, else by the verb */
        *out = mpi ? failed_on_every_rank(rc) : (rlvr_train_outcome){.rc = rc};
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
