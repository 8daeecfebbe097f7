/* io/evalstore.c — evaluation results as HDF5 (io/evalstore.h; schema:
 * docs/FORMATS.md "Evaluation results"). */
#include "io/evalstore.h"

#include "core/error.h"
#include "io/h5util.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Deflate level of every dataset (small tables: the level hardly matters). */
#define EVALSTORE_LEVEL 4
#define SPLIT_WIDTH 16

void rlvr_evalstore_label_init(rlvr_evalstore_label *l) {
    memset(l, 0, sizeof *l);
    l->step = l->policy_version = -1;
    l->shard = l->n_shards = -1;
}

/* ---- writing columns ------------------------------------------------------------------- */

/* A column is one field of every row of an array of structs: `n` rows,
 * `stride` bytes apart, the field at `offset`. */
typedef struct {
    const void *rows;
    size_t n, stride;
} table;

static int write_field(hid_t loc, const char *name, const table *t, size_t offset, rlvr_dtype dt) {
    size_t size = rlvr_dtype_size(dt);
    unsigned char *v = calloc(t->n ? t->n : 1, size);
    if (!v) return RLVR_FAIL(RLVR_ENOMEM, "out of memory writing %s", name);
    for (size_t i = 0; i < t->n; i++) memcpy(v + i * size, (const char *)t->rows + i * t->stride + offset, size);
    hsize_t dims[1] = {t->n};
    int rc = rlvr_h5_write_array(loc, name, dt, 1, dims, v, EVALSTORE_LEVEL);
    free(v);
    return rc;
}

/* Strings as fixed-length NUL-terminated string[width], width the longest + 1. */
static int write_strings(hid_t loc, const char *name, const char *const *s, size_t n) {
    size_t width = 2;
    for (size_t i = 0; i < n; i++)
        if (strlen(s[i]) + 1 > width) width = strlen(s[i]) + 1;
    char *buf = calloc(n ? n : 1, width);
    hid_t type = rlvr_h5_string_type(width, false), dset = H5I_INVALID_HID;
    int rc = 0;
    if (!buf) {
        rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory writing %s", name);
        goto done;
    }
    RLVR_H5_GOTO(type, rc, done, "string type for %s", name);
    for (size_t i = 0; i < n; i++) memcpy(buf + i * width, s[i], strlen(s[i]));
    hsize_t dims[1] = {n};
    if ((rc = rlvr_h5_dataset_create(&dset, loc, name, type, 1, dims, NULL, NULL, EVALSTORE_LEVEL)) < 0) goto done;
    if (n > 0) RLVR_H5_GOTO(H5Dwrite(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf), rc, done, "writing %s", name);
done:
    rlvr_h5_close(&dset);
    rlvr_h5_close(&type);
    free(buf);
    return rc;
}

static int create_group(hid_t loc, const char *name, hid_t *out) {
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    RLVR_H5_CHECK(lcpl, "properties for group %s", name);
    H5Pset_create_intermediate_group(lcpl, 1);
    *out = H5Gcreate2(loc, name, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    H5Pclose(lcpl);
    RLVR_H5_CHECK(*out, "creating group %s", name);
    return 0;
}

/* ---- one result ------------------------------------------------------------------------ */

static int write_label(hid_t loc, const rlvr_evalstore_label *l) {
    RLVR_TRY(rlvr_h5_attr_put_str(loc, "checkpoint", l->checkpoint));
    RLVR_TRY(rlvr_h5_attr_put_i64(loc, "step", l->step));
    RLVR_TRY(rlvr_h5_attr_put_i64(loc, "policy_version", l->policy_version));
    RLVR_TRY(rlvr_h5_attr_put_str(loc, "pool", l->pool));
    RLVR_TRY(rlvr_h5_attr_put_str(loc, "split", l->split));
    RLVR_TRY(rlvr_h5_attr_put_i64(loc, "shard", l->shard));
    RLVR_TRY(rlvr_h5_attr_put_i64(loc, "n_shards", l->n_shards));
    return rlvr_h5_attr_put_i64(loc, "first_task", l->first_task);
}

static int write_settings(hid_t loc, const rlvr_eval_result *r) {
    RLVR_TRY(rlvr_h5_attr_put_i64(loc, "samples", r->samples));
    RLVR_TRY(rlvr_h5_attr_put_u64(loc, "seed", r->seed));
    RLVR_TRY(rlvr_h5_attr_put_f64(loc, "temperature", (double)r->temperature));
    RLVR_TRY(rlvr_h5_attr_put_f64(loc, "confidence", r->confidence));
    RLVR_TRY(rlvr_h5_attr_put_i64(loc, "resamples", r->resamples));
    return rlvr_h5_attr_put_i64(loc, "n_tasks", (int64_t)r->n_tasks);
}

static int write_stats(hid_t loc, const rlvr_eval_stats *s) {
    hid_t g;
    RLVR_TRY(create_group(loc, "stats", &g));
    int rc = 0;
    if ((rc = rlvr_h5_attr_put_i64(g, "rollouts", s->rollouts)) < 0 ||
        (rc = rlvr_h5_attr_put_i64(g, "verifications", s->verifications)) < 0 ||
        (rc = rlvr_h5_attr_put_i64(g, "verify_cache_hits", s->verify_cache_hits)) < 0 ||
        (rc = rlvr_h5_attr_put_f64(g, "wall_s", s->wall_s)) < 0 ||
        (rc = rlvr_h5_attr_put_f64(g, "generate_s", s->generate_s)) < 0)
        goto done;
    rc = rlvr_h5_attr_put_f64(g, "verify_s", s->verify_s);
done:
    rlvr_h5_close(&g);
    return rc;
}

#define TASK_FIELD(name, field, dt) write_field(loc, "tasks/" name, &t, offsetof(rlvr_eval_task_result, field), dt)

static int write_tasks(hid_t loc, const rlvr_eval_result *r) {
    const char **ids = calloc(r->n_tasks, sizeof *ids), **fams = calloc(r->n_tasks, sizeof *fams),
               **splits = calloc(r->n_tasks, sizeof *splits);
    int rc = 0;
    if (!ids || !fams || !splits) {
        rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory writing tasks");
        goto done;
    }
    for (size_t i = 0; i < r->n_tasks; i++) {
        ids[i] = r->tasks[i].id;
        fams[i] = r->tasks[i].family ? r->tasks[i].family : "";
        splits[i] = rlvr_split_name(r->tasks[i].split);
    }
    table t = {r->tasks, r->n_tasks, sizeof *r->tasks};
    if ((rc = write_strings(loc, "tasks/id", ids, r->n_tasks)) < 0 ||
        (rc = write_strings(loc, "tasks/family", fams, r->n_tasks)) < 0 ||
        (rc = write_strings(loc, "tasks/split", splits, r->n_tasks)) < 0 ||
        (rc = TASK_FIELD("index", index, RLVR_DT_U32)) < 0 || (rc = TASK_FIELD("n", n, RLVR_DT_I32)) < 0 ||
        (rc = TASK_FIELD("c", c, RLVR_DT_I32)) < 0 || (rc = TASK_FIELD("infra", infra, RLVR_DT_I32)) < 0 ||
        (rc = TASK_FIELD("truncated", truncated, RLVR_DT_I32)) < 0 ||
        (rc = TASK_FIELD("dropped", dropped, RLVR_DT_I32)) < 0 || (rc = TASK_FIELD("calls", calls, RLVR_DT_I64)) < 0 ||
        (rc = TASK_FIELD("calls_parsed", calls_parsed, RLVR_DT_I64)) < 0)
        goto done;
    rc = TASK_FIELD("policy_tokens", policy_tokens, RLVR_DT_I64);
done:
    free(ids);
    free(fams);
    free(splits);
    return rc;
}

/* (n_groups, n_k) matrices of the estimates: which = 0 pass@k, 1 pass^k. */
static int write_estimates(hid_t loc, const rlvr_eval_result *r, const char *prefix, int which) {
    size_t ng = r->n_groups, nk = (size_t)r->groups[0].n_k;
    double *v = calloc(3 * ng * nk, sizeof *v);
    if (!v) return RLVR_FAIL(RLVR_ENOMEM, "out of memory writing %s", prefix);
    for (size_t g = 0; g < ng; g++)
        for (size_t k = 0; k < nk; k++) {
            const rlvr_eval_estimate *e = which == 0 ? &r->groups[g].pass_at[k] : &r->groups[g].pass_hat[k];
            v[g * nk + k] = e->value;
            v[ng * nk + g * nk + k] = e->low;
            v[2 * ng * nk + g * nk + k] = e->high;
        }
    hsize_t dims[2] = {ng, nk};
    const char *parts[3] = {"value", "low", "high"};
    int rc = 0;
    for (int p = 0; rc == 0 && p < 3; p++) {
        char name[64];
        snprintf(name, sizeof name, "%s/%s", prefix, parts[p]);
        rc = rlvr_h5_write_array(loc, name, RLVR_DT_F64, 2, dims, v + (size_t)p * ng * nk, EVALSTORE_LEVEL);
    }
    free(v);
    return rc;
}

static int write_k_tasks(hid_t loc, const rlvr_eval_result *r) {
    size_t ng = r->n_groups, nk = (size_t)r->groups[0].n_k;
    int32_t *v = calloc(ng * nk, sizeof *v);
    if (!v) return RLVR_FAIL(RLVR_ENOMEM, "out of memory writing groups/k_tasks");
    for (size_t g = 0; g < ng; g++) memcpy(v + g * nk, r->groups[g].k_tasks, nk * sizeof *v);
    hsize_t dims[2] = {ng, nk};
    int rc = rlvr_h5_write_array(loc, "groups/k_tasks", RLVR_DT_I32, 2, dims, v, EVALSTORE_LEVEL);
    free(v);
    return rc;
}

#define GROUP_FIELD(name, field, dt) write_field(loc, "groups/" name, &t, offsetof(rlvr_eval_group, field), dt)

/* The groups as summarised, for readers; never read back (recomputed). */
static int write_groups(hid_t loc, const rlvr_eval_result *r) {
    if (r->n_groups == 0) return RLVR_FAIL(RLVR_EINVAL, "evaluation result without groups: summarize it first");
    for (size_t g = 1; g < r->n_groups; g++)
        if (r->groups[g].n_k != r->groups[0].n_k)
            return RLVR_FAIL(RLVR_EINVAL, "evaluation result: groups with different k lists");
    const char **names = calloc(r->n_groups, sizeof *names);
    if (!names) return RLVR_FAIL(RLVR_ENOMEM, "out of memory writing groups");
    for (size_t g = 0; g < r->n_groups; g++) names[g] = r->groups[g].name;
    table t = {r->groups, r->n_groups, sizeof *r->groups};
    hsize_t nk[1] = {(hsize_t)r->groups[0].n_k};
    int rc = 0;
    if ((rc = write_strings(loc, "groups/family", names, r->n_groups)) < 0 ||
        (rc = GROUP_FIELD("n_tasks", n_tasks, RLVR_DT_I32)) < 0 ||
        (rc = GROUP_FIELD("excluded", excluded, RLVR_DT_I32)) < 0 ||
        (rc = GROUP_FIELD("samples", samples, RLVR_DT_I64)) < 0 ||
        (rc = GROUP_FIELD("successes", successes, RLVR_DT_I64)) < 0 ||
        (rc = GROUP_FIELD("infra", infra, RLVR_DT_I64)) < 0 ||
        (rc = GROUP_FIELD("truncated", truncated, RLVR_DT_I64)) < 0 ||
        (rc = GROUP_FIELD("dropped", dropped, RLVR_DT_I64)) < 0 ||
        (rc = GROUP_FIELD("calls", calls, RLVR_DT_I64)) < 0 ||
        (rc = GROUP_FIELD("calls_parsed", calls_parsed, RLVR_DT_I64)) < 0 ||
        (rc = GROUP_FIELD("compliance", compliance, RLVR_DT_F64)) < 0 ||
        (rc = GROUP_FIELD("pass_rate_low", pass_rate_low, RLVR_DT_F64)) < 0 ||
        (rc = GROUP_FIELD("pass_rate_high", pass_rate_high, RLVR_DT_F64)) < 0 ||
        (rc = rlvr_h5_write_array(loc, "groups/k", RLVR_DT_I64, 1, nk, r->groups[0].k, EVALSTORE_LEVEL)) < 0 ||
        (rc = write_k_tasks(loc, r)) < 0 || (rc = write_estimates(loc, r, "groups/pass_at_k", 0)) < 0)
        goto done;
    rc = write_estimates(loc, r, "groups/pass_hat_k", 1);
done:
    free(names);
    return rc;
}

static int write_result(hid_t loc, const rlvr_eval_result *r, const rlvr_evalstore_label *l) {
    RLVR_TRY(write_label(loc, l));
    RLVR_TRY(write_settings(loc, r));
    RLVR_TRY(write_stats(loc, &r->stats));
    RLVR_TRY(write_tasks(loc, r));
    return write_groups(loc, r);
}

/* ---- the long table of a sweep ---------------------------------------------------------- */

typedef struct {
    const char *checkpoint, *family, *metric;
    int64_t step, k, samples;
    int32_t n_tasks, k_tasks;
    double value, low, high;
} table_row;

static size_t count_rows(const rlvr_eval_result *const *results, size_t n) {
    size_t rows = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t g = 0; g < results[i]->n_groups; g++) rows += 2 * (size_t)results[i]->groups[g].n_k;
    return rows;
}

static void fill_rows(table_row *rows, const rlvr_eval_result *const *results, const rlvr_evalstore_label *labels,
                      size_t n) {
    size_t j = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t g = 0; g < results[i]->n_groups; g++) {
            const rlvr_eval_group *gr = &results[i]->groups[g];
            for (int metric = 0; metric < 2; metric++)
                for (int32_t k = 0; k < gr->n_k; k++) {
                    const rlvr_eval_estimate *e = metric == 0 ? &gr->pass_at[k] : &gr->pass_hat[k];
                    rows[j++] = (table_row){labels[i].checkpoint, gr->name, metric == 0 ? "pass@k" : "pass^k",
                                            labels[i].step, gr->k[k], results[i]->samples, gr->n_tasks,
                                            gr->k_tasks[k], e->value, e->low, e->high};
                }
        }
}

static int write_string_field(hid_t loc, const char *name, const table_row *rows, size_t n, size_t offset) {
    const char **v = calloc(n ? n : 1, sizeof *v);
    if (!v) return RLVR_FAIL(RLVR_ENOMEM, "out of memory writing %s", name);
    for (size_t i = 0; i < n; i++) v[i] = *(const char *const *)((const char *)&rows[i] + offset);
    int rc = write_strings(loc, name, v, n);
    free(v);
    return rc;
}

#define ROW_FIELD(name, field, dt) write_field(loc, "table/" name, &t, offsetof(table_row, field), dt)
#define ROW_STRING(name, field) write_string_field(loc, "table/" name, rows, n, offsetof(table_row, field))

static int write_table(hid_t loc, const rlvr_eval_result *const *results, const rlvr_evalstore_label *labels,
                       size_t n_results) {
    size_t n = count_rows(results, n_results);
    table_row *rows = calloc(n ? n : 1, sizeof *rows);
    if (!rows) return RLVR_FAIL(RLVR_ENOMEM, "out of memory writing the sweep table");
    fill_rows(rows, results, labels, n_results);
    table t = {rows, n, sizeof *rows};
    int rc = 0;
    if ((rc = ROW_STRING("checkpoint", checkpoint)) < 0 || (rc = ROW_FIELD("step", step, RLVR_DT_I64)) < 0 ||
        (rc = ROW_STRING("family", family)) < 0 || (rc = ROW_STRING("metric", metric)) < 0 ||
        (rc = ROW_FIELD("k", k, RLVR_DT_I64)) < 0 || (rc = ROW_FIELD("samples", samples, RLVR_DT_I64)) < 0 ||
        (rc = ROW_FIELD("n_tasks", n_tasks, RLVR_DT_I32)) < 0 ||
        (rc = ROW_FIELD("k_tasks", k_tasks, RLVR_DT_I32)) < 0 ||
        (rc = ROW_FIELD("value", value, RLVR_DT_F64)) < 0 || (rc = ROW_FIELD("low", low, RLVR_DT_F64)) < 0)
        goto done;
    rc = ROW_FIELD("high", high, RLVR_DT_F64);
done:
    free(rows);
    return rc;
}

/* ---- files ------------------------------------------------------------------------------ */

/* The stamp every evalstore file starts with, then the contents. */
typedef struct {
    const char *format;
    rlvr_h5_fill_fn fill;
    const void *arg;
} stamped;

static int fill_stamped(hid_t f, const void *arg) {
    const stamped *st = arg;
    char now[32];
    rlvr_utc_now(now, sizeof now);
    RLVR_TRY(rlvr_h5_write_format(f, st->format, RLVR_EVALSTORE_FORMAT_VERSION));
    RLVR_TRY(rlvr_h5_attr_put_str(f, "created_utc", now));
    return st->fill(f, st->arg);
}

/* PATH.part, stamp and contents, close, fsync, rename, fsync the directory. */
static int write_atomic(const char *path, const char *format, rlvr_h5_fill_fn fn, const void *arg) {
    stamped st = {format, fn, arg};
    return rlvr_h5_write_atomic(path, format, fill_stamped, &st);
}

typedef struct {
    const rlvr_eval_result *const *results;
    const rlvr_evalstore_label *labels;
    size_t n;
} sweep_contents;

static int result_contents(hid_t f, const void *arg) {
    const sweep_contents *c = arg;
    return write_result(f, c->results[0], c->labels);
}

static int sweep_contents_fn(hid_t f, const void *arg) {
    const sweep_contents *c = arg;
    RLVR_TRY(rlvr_h5_attr_put_i64(f, "n_checkpoints", (int64_t)c->n));
    for (size_t i = 0; i < c->n; i++) {
        char name[64];
        snprintf(name, sizeof name, "checkpoints/%zu", i);
        hid_t g;
        RLVR_TRY(create_group(f, name, &g));
        int rc = write_result(g, c->results[i], &c->labels[i]);
        rlvr_h5_close(&g);
        RLVR_TRY(rc);
    }
    return write_table(f, c->results, c->labels, c->n);
}

int rlvr_evalstore_write(const char *path, const rlvr_eval_result *r, const rlvr_evalstore_label *label) {
    rlvr_evalstore_label none;
    if (!label) {
        rlvr_evalstore_label_init(&none);
        label = &none;
    }
    const rlvr_eval_result *one[1] = {r};
    sweep_contents c = {one, label, 1};
    return write_atomic(path, RLVR_FORMAT_EVAL_RESULT, result_contents, &c);
}

int rlvr_evalstore_write_sweep(const char *path, const rlvr_eval_result *const *results,
                               const rlvr_evalstore_label *labels, size_t n) {
    if (n == 0) return RLVR_FAIL(RLVR_EINVAL, "sweep file %s: no results", path);
    sweep_contents c = {results, labels, n};
    return write_atomic(path, RLVR_FORMAT_EVAL_SWEEP, sweep_contents_fn, &c);
}

/* ---- reading ---------------------------------------------------------------------------- */

/* Reads a 1-D dataset of n elements of dt and copies each into the field at
 * `offset` of rows `stride` bytes apart. */
static int read_field(hid_t loc, const char *name, void *rows, size_t n, size_t stride, size_t offset, rlvr_dtype dt,
                      const char *what) {
    size_t size = rlvr_dtype_size(dt);
    unsigned char *v = calloc(n ? n : 1, size);
    if (!v) return RLVR_FAIL(RLVR_ENOMEM, "out of memory reading %s", name);
    hsize_t dims[1] = {n};
    int rc = rlvr_h5_read_array(loc, name, dt, 1, dims, v, what);
    for (size_t i = 0; rc == 0 && i < n; i++) memcpy((char *)rows + i * stride + offset, v + i * size, size);
    free(v);
    return rc;
}

/* A string[width] dataset of n rows into *out (n·width bytes, each NUL-terminated). */
static int read_strings(hid_t loc, const char *name, size_t n, char **out, size_t *width, const char *what) {
    *out = NULL;
    int rank = 0;
    hsize_t dims[RLVR_IO_MAX_RANK] = {0};
    RLVR_TRY(rlvr_h5_dataset_shape(loc, name, &rank, dims, what));
    if (rank != 1 || dims[0] != n)
        return rlvr_error_set(RLVR_EFORMAT, "%s: dataset %s has %llu rows, expected %zu", what, name,
                              (unsigned long long)dims[0], n);
    hid_t dset = H5Dopen2(loc, name, H5P_DEFAULT), ftype = H5I_INVALID_HID, mtype = H5I_INVALID_HID;
    int rc = 0;
    RLVR_H5_GOTO(dset, rc, done, "%s: opening %s", what, name);
    ftype = H5Dget_type(dset);
    RLVR_H5_GOTO(ftype, rc, done, "%s: type of %s", what, name);
    if (H5Tget_class(ftype) != H5T_STRING || H5Tis_variable_str(ftype) != 0) {
        rc = rlvr_error_set(RLVR_EFORMAT, "%s: dataset %s is not a fixed-length string", what, name);
        goto done;
    }
    *width = H5Tget_size(ftype) + 1; /* room for a NUL even when the stored strings fill their width */
    mtype = rlvr_h5_string_type(*width, false);
    RLVR_H5_GOTO(mtype, rc, done, "%s: string type for %s", what, name);
    if (!(*out = calloc(n ? n : 1, *width))) {
        rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory reading %s", name);
        goto done;
    }
    if (n > 0)
        RLVR_H5_GOTO(H5Dread(dset, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, *out), rc, done, "%s: reading %s", what, name);
done:
    rlvr_h5_close(&mtype);
    rlvr_h5_close(&ftype);
    rlvr_h5_close(&dset);
    if (rc < 0) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

static int read_label(hid_t loc, rlvr_evalstore_label *l, const char *what) {
    rlvr_evalstore_label_init(l);
    RLVR_TRY(rlvr_h5_attr_get_str(loc, "checkpoint", l->checkpoint, sizeof l->checkpoint, what));
    RLVR_TRY(rlvr_h5_attr_get_i64(loc, "step", &l->step, what));
    RLVR_TRY(rlvr_h5_attr_get_i64(loc, "policy_version", &l->policy_version, what));
    RLVR_TRY(rlvr_h5_attr_get_str(loc, "pool", l->pool, sizeof l->pool, what));
    RLVR_TRY(rlvr_h5_attr_get_str(loc, "split", l->split, sizeof l->split, what));
    RLVR_TRY(rlvr_h5_attr_get_i64(loc, "shard", &l->shard, what));
    RLVR_TRY(rlvr_h5_attr_get_i64(loc, "n_shards", &l->n_shards, what));
    return rlvr_h5_attr_get_i64(loc, "first_task", &l->first_task, what);
}

static int read_stats(hid_t loc, rlvr_eval_stats *s, const char *what) {
    hid_t g = H5Gopen2(loc, "stats", H5P_DEFAULT);
    if (g < 0) {
        H5Eclear2(H5E_DEFAULT);
        return rlvr_error_set(RLVR_EFORMAT, "%s: group stats is missing", what);
    }
    int rc = 0;
    if ((rc = rlvr_h5_attr_get_i64(g, "rollouts", &s->rollouts, what)) < 0 ||
        (rc = rlvr_h5_attr_get_i64(g, "verifications", &s->verifications, what)) < 0 ||
        (rc = rlvr_h5_attr_get_i64(g, "verify_cache_hits", &s->verify_cache_hits, what)) < 0 ||
        (rc = rlvr_h5_attr_get_f64(g, "wall_s", &s->wall_s, what)) < 0 ||
        (rc = rlvr_h5_attr_get_f64(g, "generate_s", &s->generate_s, what)) < 0)
        goto done;
    rc = rlvr_h5_attr_get_f64(g, "verify_s", &s->verify_s, what);
done:
    rlvr_h5_close(&g);
    return rc;
}

/* ids, families and splits of the tasks table into r (rlvr_eval_result_set_task). */
static int read_task_names(hid_t loc, rlvr_eval_result *r, const char *what) {
    char *ids = NULL, *fams = NULL, *splits = NULL;
    size_t wi = 0, wf = 0, ws = 0;
    int rc = 0;
    if ((rc = read_strings(loc, "tasks/id", r->n_tasks, &ids, &wi, what)) < 0 ||
        (rc = read_strings(loc, "tasks/family", r->n_tasks, &fams, &wf, what)) < 0 ||
        (rc = read_strings(loc, "tasks/split", r->n_tasks, &splits, &ws, what)) < 0)
        goto done;
    for (size_t i = 0; rc == 0 && i < r->n_tasks; i++) {
        rlvr_split split;
        if (rlvr_split_parse(splits + i * ws, &split) < 0) {
            rc = rlvr_error_set(RLVR_EFORMAT, "%s: tasks/split[%zu] is \"%s\"", what, i, splits + i * ws);
            break;
        }
        rc = rlvr_eval_result_set_task(r, i, ids + i * wi, fams + i * wf, split, 0);
        if (rc < 0) rc = rlvr_error_wrap(RLVR_EFORMAT, "%s: task %zu", what, i);
    }
done:
    free(ids);
    free(fams);
    free(splits);
    return rc;
}

#define READ_TASK(name, field, dt)                                                                               \
    read_field(loc, "tasks/" name, r->tasks, r->n_tasks, sizeof *r->tasks, offsetof(rlvr_eval_task_result, field), \
               dt, what)

static int read_task_counts(hid_t loc, rlvr_eval_result *r, const char *what) {
    RLVR_TRY(READ_TASK("index", index, RLVR_DT_U32));
    RLVR_TRY(READ_TASK("n", n, RLVR_DT_I32));
    RLVR_TRY(READ_TASK("c", c, RLVR_DT_I32));
    RLVR_TRY(READ_TASK("infra", infra, RLVR_DT_I32));
    RLVR_TRY(READ_TASK("truncated", truncated, RLVR_DT_I32));
    RLVR_TRY(READ_TASK("dropped", dropped, RLVR_DT_I32));
    RLVR_TRY(READ_TASK("calls", calls, RLVR_DT_I64));
    RLVR_TRY(READ_TASK("calls_parsed", calls_parsed, RLVR_DT_I64));
    return READ_TASK("policy_tokens", policy_tokens, RLVR_DT_I64);
}

static int read_result(hid_t loc, rlvr_eval_result **out, rlvr_evalstore_label *label, const char *what) {
    *out = NULL;
    int64_t samples = 0, resamples = 0, n_tasks = 0;
    uint64_t seed = 0;
    double temperature = 0, confidence = 0;
    RLVR_TRY(rlvr_h5_attr_get_i64(loc, "samples", &samples, what));
    RLVR_TRY(rlvr_h5_attr_get_u64(loc, "seed", &seed, what));
    RLVR_TRY(rlvr_h5_attr_get_f64(loc, "temperature", &temperature, what));
    RLVR_TRY(rlvr_h5_attr_get_f64(loc, "confidence", &confidence, what));
    RLVR_TRY(rlvr_h5_attr_get_i64(loc, "resamples", &resamples, what));
    RLVR_TRY(rlvr_h5_attr_get_i64(loc, "n_tasks", &n_tasks, what));
    if (samples < 1 || samples > INT32_MAX || resamples < 1 || resamples > INT32_MAX || n_tasks < 1 ||
        n_tasks > INT32_MAX || !(confidence > 0 && confidence < 1))
        return rlvr_error_set(RLVR_EFORMAT, "%s: settings out of range (samples %lld, resamples %lld, n_tasks %lld, "
                                            "confidence %g)",
                              what, (long long)samples, (long long)resamples, (long long)n_tasks, confidence);
    if (label) RLVR_TRY(read_label(loc, label, what));
    rlvr_eval_result *r;
    RLVR_TRY(rlvr_eval_result_new(&r, (size_t)n_tasks, (int32_t)samples, seed, (float)temperature));
    int rc = read_task_names(loc, r, what);
    if (rc == 0) rc = read_task_counts(loc, r, what);
    if (rc == 0) rc = read_stats(loc, &r->stats, what);
    if (rc == 0) {
        rc = rlvr_eval_result_summarize(r, confidence, (int32_t)resamples);
        if (rc < 0) rc = rlvr_error_wrap(RLVR_EFORMAT, "%s: the stored counts", what);
    }
    if (rc < 0) rlvr_eval_result_free(r);
    else *out = r;
    return rc;
}

int rlvr_evalstore_read(const char *path, rlvr_eval_result **out, rlvr_evalstore_label *label) {
    *out = NULL;
    rlvr_h5_init();
    hid_t f;
    RLVR_TRY(rlvr_h5_file_open(&f, path, RLVR_FORMAT_EVAL_RESULT, RLVR_EVALSTORE_FORMAT_VERSION, NULL, false));
    int rc = read_result(f, out, label, path);
    rlvr_h5_close(&f);
    return rc;
}

int rlvr_evalstore_read_sweep(const char *path, rlvr_eval_result ***results, rlvr_evalstore_label **labels,
                              size_t *n) {
    *results = NULL;
    if (labels) *labels = NULL;
    *n = 0;
    rlvr_h5_init();
    hid_t f;
    RLVR_TRY(rlvr_h5_file_open(&f, path, RLVR_FORMAT_EVAL_SWEEP, RLVR_EVALSTORE_FORMAT_VERSION, NULL, false));
    int64_t count = 0;
    int rc = rlvr_h5_attr_get_i64(f, "n_checkpoints", &count, path);
    if (rc == 0 && (count < 1 || count > 1 << 20))
        rc = rlvr_error_set(RLVR_EFORMAT, "%s: n_checkpoints is %lld", path, (long long)count);
    rlvr_eval_result **rs = NULL;
    rlvr_evalstore_label *ls = NULL;
    if (rc == 0 && (!(rs = calloc((size_t)count, sizeof *rs)) || !(ls = calloc((size_t)count, sizeof *ls))))
        rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory reading %s", path);
    for (int64_t i = 0; rc == 0 && i < count; i++) {
        char name[64], what[4200];
        snprintf(name, sizeof name, "checkpoints/%lld", (long long)i);
        snprintf(what, sizeof what, "%s:/%s", path, name);
        hid_t g = H5Gopen2(f, name, H5P_DEFAULT);
        if (g < 0) {
            H5Eclear2(H5E_DEFAULT);
            rc = rlvr_error_set(RLVR_EFORMAT, "%s: group %s is missing", path, name);
            break;
        }
        rc = read_result(g, &rs[i], &ls[i], what);
        rlvr_h5_close(&g);
    }
    rlvr_h5_close(&f);
    if (rc < 0) {
        for (int64_t i = 0; rs && i < count; i++) rlvr_eval_result_free(rs[i]);
        free(rs);
        free(ls);
        return rc;
    }
    *results = rs;
    *n = (size_t)count;
    if (labels) *labels = ls;
    else free(ls);
    return 0;
}
