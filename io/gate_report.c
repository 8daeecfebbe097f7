/* io/gate_report.c — the release gate's HDF5 report and the `promoted`
 * marker (io/gate_report.h; schema: docs/FORMATS.md "Gate report"). */
#include "io/gate_report.h"

#include "core/error.h"
#include "io/h5util.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Deflate level of every dataset (small tables: the level hardly matters). */
#define GATE_REPORT_LEVEL 4

/* A table is an array of row structs; a column is one field of every row,
 * found at `offset` with rows `stride` bytes apart. */
typedef struct {
    const void *rows;
    size_t n, stride;
} table;

static const void *field(const table *t, size_t i, size_t offset) {
    return (const char *)t->rows + i * t->stride + offset;
}

/* One field of every row as a 1-D dataset of `type`: `size` bytes at
 * `offset` (bool fields are one byte, 0 or 1, stored as uint8). */
static int write_column(hid_t loc, const char *name, const table *t, size_t offset, rlvr_dtype type, size_t size) {
    unsigned char *v = calloc(t->n ? t->n : 1, size);
    if (!v) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    for (size_t i = 0; i < t->n; i++) memcpy(v + i * size, field(t, i, offset), size);
    hsize_t dims[1] = {t->n};
    int rc = rlvr_h5_write_array(loc, name, type, 1, dims, v, GATE_REPORT_LEVEL);
    free(v);
    return rc;
}

static int write_f64(hid_t loc, const char *name, const table *t, size_t offset) {
    return write_column(loc, name, t, offset, RLVR_DT_F64, sizeof(double));
}

static int write_i32(hid_t loc, const char *name, const table *t, size_t offset) {
    return write_column(loc, name, t, offset, RLVR_DT_I32, sizeof(int32_t));
}

static int write_i64(hid_t loc, const char *name, const table *t, size_t offset) {
    return write_column(loc, name, t, offset, RLVR_DT_I64, sizeof(int64_t));
}

static int write_flag(hid_t loc, const char *name, const table *t, size_t offset) {
    _Static_assert(sizeof(bool) == 1, "bool fields are stored as uint8");
    return write_column(loc, name, t, offset, RLVR_DT_U8, sizeof(bool));
}

/* const char * fields as string[width] (NULL: ""). */
static int write_str(hid_t loc, const char *name, const table *t, size_t offset, size_t width) {
    char *buf = calloc(t->n ? t->n : 1, width);
    hid_t type = rlvr_h5_string_type(width, false), dset = H5I_INVALID_HID;
    int rc = 0;
    if (!buf) {
        rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        goto done;
    }
    RLVR_H5_GOTO(type, rc, done, "string type for %s", name);
    for (size_t i = 0; i < t->n; i++) {
        const char *s = *(const char *const *)field(t, i, offset);
        if (s) snprintf(buf + i * width, width, "%s", s);
    }
    hsize_t dims[1] = {t->n};
    if ((rc = rlvr_h5_dataset_create(&dset, loc, name, type, 1, dims, NULL, NULL, GATE_REPORT_LEVEL)) < 0) goto done;
    if (t->n > 0) RLVR_H5_GOTO(H5Dwrite(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf), rc, done, "writing %s", name);
done:
    rlvr_h5_close(&dset);
    rlvr_h5_close(&type);
    free(buf);
    return rc;
}

#define NAME_W RLVR_GATE_REPORT_NAME_WIDTH
#define FAMILY_W RLVR_GATE_REPORT_FAMILY_WIDTH

static int write_criteria(hid_t f, const rlvr_gate_file *g) {
    table t = {g->criteria, g->n_criteria, sizeof *g->criteria};
    RLVR_TRY(write_str(f, "criteria/name", &t, offsetof(rlvr_gate_file_criterion, name), NAME_W));
    RLVR_TRY(write_flag(f, "criteria/passed", &t, offsetof(rlvr_gate_file_criterion, passed)));
    RLVR_TRY(write_f64(f, "criteria/value", &t, offsetof(rlvr_gate_file_criterion, value)));
    return write_f64(f, "criteria/threshold", &t, offsetof(rlvr_gate_file_criterion, threshold));
}

static int write_tests(hid_t f, const rlvr_gate_file *g) {
    table t = {g->tests, g->n_tests, sizeof *g->tests};
    RLVR_TRY(write_str(f, "tests/criterion", &t, offsetof(rlvr_gate_file_test, criterion), NAME_W));
    RLVR_TRY(write_str(f, "tests/split", &t, offsetof(rlvr_gate_file_test, split), NAME_W));
    RLVR_TRY(write_str(f, "tests/family", &t, offsetof(rlvr_gate_file_test, family), FAMILY_W));
    RLVR_TRY(write_i32(f, "tests/n_tasks", &t, offsetof(rlvr_gate_file_test, n_tasks)));
    RLVR_TRY(write_i32(f, "tests/unpaired", &t, offsetof(rlvr_gate_file_test, unpaired)));
    RLVR_TRY(write_f64(f, "tests/base_pass1", &t, offsetof(rlvr_gate_file_test, base_pass1)));
    RLVR_TRY(write_f64(f, "tests/cand_pass1", &t, offsetof(rlvr_gate_file_test, cand_pass1)));
    RLVR_TRY(write_f64(f, "tests/mean_diff", &t, offsetof(rlvr_gate_file_test, mean_diff)));
    RLVR_TRY(write_f64(f, "tests/low", &t, offsetof(rlvr_gate_file_test, low)));
    RLVR_TRY(write_f64(f, "tests/high", &t, offsetof(rlvr_gate_file_test, high)));
    RLVR_TRY(write_f64(f, "tests/tolerance", &t, offsetof(rlvr_gate_file_test, tolerance)));
    return write_flag(f, "tests/passed", &t, offsetof(rlvr_gate_file_test, passed));
}

static int write_estimates(hid_t f, const rlvr_gate_file *g) {
    table t = {g->estimates, g->n_estimates, sizeof *g->estimates};
    RLVR_TRY(write_str(f, "estimates/checkpoint", &t, offsetof(rlvr_gate_file_estimate, checkpoint), NAME_W));
    RLVR_TRY(write_str(f, "estimates/split", &t, offsetof(rlvr_gate_file_estimate, split), NAME_W));
    RLVR_TRY(write_str(f, "estimates/family", &t, offsetof(rlvr_gate_file_estimate, family), FAMILY_W));
    RLVR_TRY(write_str(f, "estimates/metric", &t, offsetof(rlvr_gate_file_estimate, metric), NAME_W));
    RLVR_TRY(write_i64(f, "estimates/k", &t, offsetof(rlvr_gate_file_estimate, k)));
    RLVR_TRY(write_i32(f, "estimates/tasks", &t, offsetof(rlvr_gate_file_estimate, tasks)));
    RLVR_TRY(write_f64(f, "estimates/value", &t, offsetof(rlvr_gate_file_estimate, value)));
    RLVR_TRY(write_f64(f, "estimates/low", &t, offsetof(rlvr_gate_file_estimate, low)));
    return write_f64(f, "estimates/high", &t, offsetof(rlvr_gate_file_estimate, high));
}

static int write_contents(hid_t f, const rlvr_gate_file *g) {
    char now[32];
    rlvr_utc_now(now, sizeof now);
    RLVR_TRY(rlvr_h5_write_format(f, RLVR_FORMAT_GATE_REPORT, RLVR_GATE_REPORT_FORMAT_VERSION));
    RLVR_TRY(rlvr_h5_attr_put_str(f, "created_utc", now));
    RLVR_TRY(rlvr_h5_attr_put_str(f, "candidate", g->candidate ? g->candidate : ""));
    RLVR_TRY(rlvr_h5_attr_put_str(f, "baseline", g->baseline ? g->baseline : ""));
    RLVR_TRY(rlvr_h5_attr_put_i64(f, "candidate_step", g->candidate_step));
    RLVR_TRY(rlvr_h5_attr_put_i64(f, "candidate_version", g->candidate_version));
    RLVR_TRY(rlvr_h5_attr_put_i64(f, "passed", g->passed ? 1 : 0));
    RLVR_TRY(rlvr_h5_attr_put_i64(f, "samples", g->samples));
    RLVR_TRY(rlvr_h5_attr_put_u64(f, "seed", g->seed));
    RLVR_TRY(rlvr_h5_attr_put_f64(f, "time_unix", g->time_unix));
    RLVR_TRY(write_criteria(f, g));
    RLVR_TRY(write_tests(f, g));
    RLVR_TRY(write_estimates(f, g));
    return rlvr_h5_write_text(f, "report_json", g->json ? g->json : "", GATE_REPORT_LEVEL);
}

static int fill_report(hid_t f, const void *arg) { return write_contents(f, arg); }

int rlvr_gate_report_write(const char *path, const rlvr_gate_file *g) {
    return rlvr_h5_write_atomic(path, "gate report", fill_report, g);
}

int rlvr_gate_report_read_passed(const char *path, bool *passed, size_t *n_criteria) {
    hid_t f;
    RLVR_TRY(rlvr_h5_file_open(&f, path, RLVR_FORMAT_GATE_REPORT, RLVR_GATE_REPORT_FORMAT_VERSION, NULL, false));
    int64_t flag = 0;
    int rank = 0;
    hsize_t dims[RLVR_IO_MAX_RANK] = {0};
    int rc = rlvr_h5_attr_get_i64(f, "passed", &flag, path);
    if (rc == 0) rc = rlvr_h5_dataset_shape(f, "criteria/passed", &rank, dims, path);
    uint8_t *v = NULL;
    if (rc == 0 && !(v = calloc(dims[0] ? dims[0] : 1, 1))) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    /* reading the flags checks their Fletcher32 checksums; the root flag must agree with them */
    if (rc == 0) rc = rlvr_h5_read_array(f, "criteria/passed", RLVR_DT_U8, 1, dims, v, path);
    bool all = true;
    for (hsize_t i = 0; rc == 0 && i < dims[0]; i++) all &= v[i] != 0;
    if (rc == 0 && all != (flag != 0))
        rc = rlvr_error_set(RLVR_EFORMAT, "%s: attribute passed = %lld disagrees with /criteria/passed", path,
                            (long long)flag);
    free(v);
    rlvr_h5_close(&f);
    if (rc < 0) return rc;
    *passed = flag != 0;
    *n_criteria = (size_t)dims[0];
    return 0;
}

int rlvr_gate_write_promoted(const char *run_dir, const char *checkpoint) {
    char path[4200], line[4200];
    if ((size_t)snprintf(path, sizeof path, "%s/promoted", run_dir) >= sizeof path ||
        (size_t)snprintf(line, sizeof line, "%s\n", checkpoint) >= sizeof line)
        return RLVR_FAIL(RLVR_EINVAL, "path too long: %s/promoted", run_dir);
    int rc = rlvr_write_text_atomic(path, line);
    return rc < 0 ? rlvr_error_wrap(rc, "promoting %s in %s", checkpoint, run_dir) : 0;
}

int rlvr_gate_read_promoted(const char *run_dir, char *path, size_t cap) {
    char file[4200];
    if ((size_t)snprintf(file, sizeof file, "%s/promoted", run_dir) >= sizeof file)
        return RLVR_FAIL(RLVR_EINVAL, "path too long: %s/promoted", run_dir);
    FILE *f = fopen(file, "r");
    if (!f) {
        if (errno == ENOENT) return rlvr_error_set(RLVR_ENOTFOUND, "%s: nothing promoted yet", file);
        return rlvr_error_errno_at(__FILE__, __LINE__, "opening %s", file);
    }
    bool got = fgets(path, (int)cap, f) != NULL;
    fclose(f);
    size_t n = got ? strlen(path) : 0;
    bool whole = n > 0 && (path[n - 1] == '\n' || n + 1 < cap);
    if (n > 0 && path[n - 1] == '\n') path[--n] = '\0';
    if (n == 0 || !whole)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: expected one line naming a checkpoint (rlvr gate --promote writes it)",
                         file);
    return 0;
}
