/* io/metrics.c — the per-step metrics table (schema: docs/FORMATS.md, "Metrics"). */
#include "io/metrics.h"
#include "core/error.h"
#include "io/h5util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Dataset paths; the column name is the part after "steps/". */
#define STEPS_PREFIX "steps/"
static const struct {
    const char *path, *doc;
} metric_columns[RLVR_METRIC_COUNT] = {
    [RLVR_METRIC_TIME_UNIX] = {STEPS_PREFIX "time_unix", "wall clock at the end of the step, seconds since 1970"},
    [RLVR_METRIC_STEP_TIME_S] = {STEPS_PREFIX "step_time_s", "duration of the step, seconds"},
    [RLVR_METRIC_POLICY_VERSION] = {STEPS_PREFIX "policy_version", "trainer's policy version after the step"},
    [RLVR_METRIC_ROLLOUTS] = {STEPS_PREFIX "rollouts", "rollouts that entered the loss"},
    [RLVR_METRIC_GROUPS] = {STEPS_PREFIX "groups", "groups that entered the loss"},
    [RLVR_METRIC_GROUPS_ZERO_VAR] = {STEPS_PREFIX "groups_zero_var",
                                     "groups dropped because all their rewards were equal"},
    [RLVR_METRIC_REWARD_MEAN] = {STEPS_PREFIX "reward_mean", "mean total reward of the step's rollouts"},
    [RLVR_METRIC_REWARD_STD] = {STEPS_PREFIX "reward_std", "population std of the total reward"},
    [RLVR_METRIC_PASS_RATE] = {STEPS_PREFIX "pass_rate", "share of rollouts with verdict pass"},
    [RLVR_METRIC_FORMAT_MEAN] = {STEPS_PREFIX "format_mean", "mean format reward R_format"},
    [RLVR_METRIC_LENGTH_PENALTY] = {STEPS_PREFIX "length_penalty", "mean subtracted length term"},
    [RLVR_METRIC_POLICY_TOKENS] = {STEPS_PREFIX "policy_tokens", "mean policy tokens per rollout"},
    [RLVR_METRIC_TRUNCATED] = {STEPS_PREFIX "truncated", "share of rollouts stopped by a budget"},
    [RLVR_METRIC_INFRA_ERRORS] = {STEPS_PREFIX "infra_errors", "rollouts excluded as infrastructure errors"},
    [RLVR_METRIC_STALENESS_MEAN] = {STEPS_PREFIX "staleness_mean", "mean v_trainer - v_rollout of admitted rollouts"},
    [RLVR_METRIC_STALENESS_DROPPED] = {STEPS_PREFIX "staleness_dropped", "rollouts refused for staleness"},
    [RLVR_METRIC_LOSS] = {STEPS_PREFIX "loss", "surrogate loss"},
    [RLVR_METRIC_KL] = {STEPS_PREFIX "kl", "mean k3 KL estimate to the reference policy (the step's first pass)"},
    [RLVR_METRIC_ENTROPY] = {STEPS_PREFIX "entropy", "mean entropy over policy tokens, nats (the step's first pass)"},
    [RLVR_METRIC_ENTROPY_COEF] = {STEPS_PREFIX "entropy_coef", "entropy coefficient alpha after this step's controller update (the one the next step trains with)"},
    [RLVR_METRIC_CLIP_FRACTION] = {STEPS_PREFIX "clip_fraction", "share of policy tokens whose ratio was clipped"},
    [RLVR_METRIC_GRAD_NORM] = {STEPS_PREFIX "grad_norm", "global gradient L2 norm before clipping"},
    [RLVR_METRIC_LR] = {STEPS_PREFIX "lr", "learning rate of the step's last AdamW update"},
    [RLVR_METRIC_GENERATE_S] = {STEPS_PREFIX "generate_s", "summed generation seconds of the step's rollouts"},
    [RLVR_METRIC_TOOL_S] = {STEPS_PREFIX "tool_s", "summed tool seconds"},
    [RLVR_METRIC_VERIFY_S] = {STEPS_PREFIX "verify_s", "summed verification seconds"},
    [RLVR_METRIC_QUEUE_S] = {STEPS_PREFIX "queue_s", "summed queueing seconds"},
    [RLVR_METRIC_TRAIN_S] = {STEPS_PREFIX "train_s", "forward, backward and optimizer seconds"},
    [RLVR_METRIC_TOKENS_PER_S] = {STEPS_PREFIX "tokens_per_s", "generated tokens per second over the step"},
    [RLVR_METRIC_REPETITION_STOPS] = {STEPS_PREFIX "repetition_stops", "rollouts ended by the n-gram repetition detector"},
    [RLVR_METRIC_LOGPROB_DIFF_MAX] = {STEPS_PREFIX "logprob_diff_max",
                                      "max |sampler - trainer log-prob| over the batch's policy tokens"},
    [RLVR_METRIC_ROLLOUTS_PER_S] = {STEPS_PREFIX "rollouts_per_s", "rollouts finished per second of step wall time"},
    [RLVR_METRIC_IDLE_S] = {STEPS_PREFIX "idle_s", "step wall time not spent generating, verifying or training"},
    [RLVR_METRIC_DRAW_ROUNDS] = {STEPS_PREFIX "draw_rounds", "dynamic-sampling rounds the step needed"},
    [RLVR_METRIC_MALFORMED_STOPS] = {STEPS_PREFIX "malformed_stops",
                                     "rollouts ended by too many malformed tool calls in a row"},
};

#define METRICS_CHUNK_ROWS 512
#define METRICS_LEVEL 4

const char *rlvr_metric_name(rlvr_metric m) {
    return (unsigned)m < RLVR_METRIC_COUNT ? metric_columns[m].path + strlen(STEPS_PREFIX) : NULL;
}

const char *rlvr_metric_doc(rlvr_metric m) {
    return (unsigned)m < RLVR_METRIC_COUNT ? metric_columns[m].doc : NULL;
}

int rlvr_metric_find(const char *name) {
    for (int i = 0; i < RLVR_METRIC_COUNT; i++)
        if (strcmp(rlvr_metric_name((rlvr_metric)i), name) == 0) return i;
    return -1;
}

void rlvr_metrics_row_init(rlvr_metrics_row *row, int64_t step) {
    row->step = step;
    for (int i = 0; i < RLVR_METRIC_COUNT; i++) row->value[i] = NAN;
}

struct rlvr_metrics {
    char path[4096];
    hid_t file;
    rlvr_h5_column step;
    rlvr_h5_column col[RLVR_METRIC_COUNT];
    int64_t last_step;
    int64_t rows;
};

static const char *const step_path = STEPS_PREFIX "step";

static void metrics_free(rlvr_metrics *m) {
    rlvr_h5_column_close(&m->step);
    for (int i = 0; i < RLVR_METRIC_COUNT; i++) rlvr_h5_column_close(&m->col[i]);
    rlvr_h5_close(&m->file);
    free(m);
}

static int put_doc(hid_t dset, const char *doc) { return rlvr_h5_attr_put_str(dset, "doc", doc); }

/* Writes a fresh file at `part` holding the rows of `old` with step <= keep. */
static int write_fresh(const char *part, const rlvr_metrics_table *old, int64_t keep) {
    hid_t file;
    RLVR_TRY(rlvr_h5_file_create(&file, part, true));
    rlvr_h5_column step = {.dset = H5I_INVALID_HID}, col = {.dset = H5I_INVALID_HID};
    char now[32];
    rlvr_utc_now(now, sizeof now);
    int64_t n = 0;
    while (old && n < old->n_rows && old->step[n] <= keep) n++;
    int rc = 0;
    if ((rc = rlvr_h5_write_format(file, RLVR_FORMAT_METRICS, RLVR_METRICS_FORMAT_VERSION)) < 0 ||
        (rc = rlvr_h5_attr_put_str(file, "created_utc", now)) < 0 ||
        (rc = rlvr_h5_column_create(&step, file, step_path, H5T_STD_I64LE, H5T_NATIVE_INT64, false, 8,
                                    METRICS_CHUNK_ROWS, METRICS_LEVEL)) < 0 ||
        (rc = put_doc(step.dset, "training step of the row (optimizer steps taken)")) < 0 ||
        (rc = rlvr_h5_column_push(&step, old ? old->step : NULL, (size_t)n)) < 0 ||
        (rc = rlvr_h5_column_flush(&step)) < 0)
        goto done;
    for (int i = 0; i < RLVR_METRIC_COUNT; i++) {
        if ((rc = rlvr_h5_column_create(&col, file, metric_columns[i].path, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, false, 8,
                                        METRICS_CHUNK_ROWS, METRICS_LEVEL)) < 0 ||
            (rc = put_doc(col.dset, metric_columns[i].doc)) < 0)
            goto done;
        for (int64_t r = 0; r < n; r++) {
            double v = old->value[i] ? old->value[i][r] : NAN;
            if ((rc = rlvr_h5_column_push(&col, &v, 1)) < 0) goto done;
        }
        if ((rc = rlvr_h5_column_flush(&col)) < 0) goto done;
        rlvr_h5_column_close(&col);
    }
done:
    rlvr_h5_column_close(&col);
    rlvr_h5_column_close(&step);
    if (rc == 0 && H5Fclose(file) < 0) rc = RLVR_H5_FAIL("closing %s", part);
    else if (rc < 0) rlvr_h5_close(&file);
    return rc;
}

static int open_swmr_write(rlvr_metrics *m) {
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    RLVR_H5_CHECK(fapl, "opening %s", m->path);
    int rc = 0;
    RLVR_H5_GOTO(H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST), rc, done, "opening %s",
                 m->path);
    RLVR_H5_GOTO(H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG), rc, done, "opening %s", m->path);
    m->file = H5Fopen(m->path, H5F_ACC_RDWR | H5F_ACC_SWMR_WRITE, fapl);
    RLVR_H5_GOTO(m->file, rc, done, "opening %s for appending (SWMR write)", m->path);
    if ((rc = rlvr_h5_column_open(&m->step, m->file, step_path, H5T_NATIVE_INT64, false, 8)) < 0) goto done;
    for (int i = 0; i < RLVR_METRIC_COUNT; i++)
        if ((rc = rlvr_h5_column_open(&m->col[i], m->file, metric_columns[i].path, H5T_NATIVE_DOUBLE, false, 8)) < 0)
            goto done;
    m->rows = (int64_t)m->step.n_file;
done:
    rlvr_h5_close(&fapl);
    return rc;
}

int rlvr_metrics_open(rlvr_metrics **out, const char *path, int64_t keep_through_step) {
    *out = NULL;
    rlvr_h5_init();
    rlvr_metrics *m = calloc(1, sizeof *m);
    if (!m) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    m->file = m->step.dset = H5I_INVALID_HID;
    for (int i = 0; i < RLVR_METRIC_COUNT; i++) m->col[i].dset = H5I_INVALID_HID;
    m->last_step = INT64_MIN;
    snprintf(m->path, sizeof m->path, "%s", path);

    rlvr_metrics_table old = {0};
    bool have_old = access(path, F_OK) == 0;
    int rc = 0;
    if (have_old && (rc = rlvr_metrics_read(&old, path)) < 0) {
        free(m);
        return rlvr_error_wrap(rc, "keeping the rows of %s (move it away to start a new table)", path);
    }
    char part[4200];
    snprintf(part, sizeof part, "%s.part", path);
    rc = write_fresh(part, have_old ? &old : NULL, keep_through_step);
    if (rc == 0) rc = rlvr_fsync_path(part);
    if (rc == 0 && rename(part, path) != 0) rc = rlvr_error_errno_at(__FILE__, __LINE__, "renaming %s", part);
    if (rc == 0) rc = rlvr_fsync_parent_dir(path);
    if (rc < 0) unlink(part);
    if (rc == 0) rc = open_swmr_write(m);
    if (rc == 0 && m->rows > 0) m->last_step = old.step[m->rows - 1];
    rlvr_metrics_table_free(&old);
    if (rc < 0) {
        metrics_free(m);
        return rlvr_error_wrap(rc, "metrics %s", path);
    }
    *out = m;
    return 0;
}

int rlvr_metrics_append(rlvr_metrics *m, const rlvr_metrics_row *row) {
    if (row->step <= m->last_step)
        return RLVR_FAIL(RLVR_EINVAL, "metrics %s: step %lld after step %lld (steps must increase)", m->path,
                         (long long)row->step, (long long)m->last_step);
    /* metric columns first, the step column last: a reader sees a row once
     * its step is there (and takes the shortest column anyway) */
    for (int i = 0; i < RLVR_METRIC_COUNT; i++) {
        RLVR_TRY(rlvr_h5_column_push(&m->col[i], &row->value[i], 1));
        RLVR_TRY(rlvr_h5_column_flush(&m->col[i]));
    }
    RLVR_TRY(rlvr_h5_column_push(&m->step, &row->step, 1));
    RLVR_TRY(rlvr_h5_column_flush(&m->step));
    RLVR_H5_CHECK(H5Fflush(m->file, H5F_SCOPE_LOCAL), "metrics %s: flushing step %lld", m->path,
                  (long long)row->step);
    m->last_step = row->step;
    m->rows++;
    return 0;
}

int64_t rlvr_metrics_rows(const rlvr_metrics *m) { return m->rows; }

int rlvr_metrics_close(rlvr_metrics *m) {
    if (!m) return 0;
    rlvr_h5_column_close(&m->step);
    for (int i = 0; i < RLVR_METRIC_COUNT; i++) rlvr_h5_column_close(&m->col[i]);
    int rc = 0;
    if (H5Fclose(m->file) < 0) rc = RLVR_H5_FAIL("closing metrics %s", m->path);
    m->file = H5I_INVALID_HID;
    free(m);
    return rc;
}

int rlvr_metrics_read(rlvr_metrics_table *t, const char *path) {
    memset(t, 0, sizeof *t);
    hid_t file;
    /* SWMR-read works while a writer appends and after a killed writer;
     * a file not in the v110 format opens the plain way */
    int rc = rlvr_h5_file_open(&file, path, RLVR_FORMAT_METRICS, RLVR_METRICS_FORMAT_VERSION, NULL, true);
    if (rc == RLVR_EFORMAT)
        rc = rlvr_h5_file_open(&file, path, RLVR_FORMAT_METRICS, RLVR_METRICS_FORMAT_VERSION, NULL, false);
    if (rc < 0) return rc;
    hsize_t n = 0;
    void *buf = NULL;
    if ((rc = rlvr_h5_read_column(file, step_path, H5T_NATIVE_INT64, 8, &buf, &n, path)) < 0) goto done;
    t->step = buf;
    t->n_rows = (int64_t)n;
    for (int i = 0; i < RLVR_METRIC_COUNT; i++) {
        htri_t e = H5Lexists(file, metric_columns[i].path, H5P_DEFAULT);
        if (e <= 0) {
            H5Eclear2(H5E_DEFAULT);
            continue;
        }
        rc = rlvr_h5_read_column(file, metric_columns[i].path, H5T_NATIVE_DOUBLE, 8, &buf, &n, path);
        if (rc < 0) goto done;
        t->value[i] = buf;
        if ((int64_t)n < t->n_rows) t->n_rows = (int64_t)n; /* a row half-written by a live writer */
    }
    for (int64_t r = 1; r < t->n_rows; r++)
        if (t->step[r] <= t->step[r - 1]) {
            rc = rlvr_error_set(RLVR_EFORMAT, "%s: /steps/step does not increase at row %lld", path, (long long)r);
            goto done;
        }
done:
    rlvr_h5_close(&file);
    if (rc < 0) rlvr_metrics_table_free(t);
    return rc;
}

void rlvr_metrics_table_free(rlvr_metrics_table *t) {
    free(t->step);
    for (int i = 0; i < RLVR_METRIC_COUNT; i++) free(t->value[i]);
    memset(t, 0, sizeof *t);
}
