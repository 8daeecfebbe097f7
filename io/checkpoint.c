/* io/checkpoint.c — checkpoint files, the `latest` tracker and retention.
 * The model's part lives in checkpoint_model.c. */
#include "io/checkpoint.h"
#include "core/error.h"
#include "io/checkpoint_internal.h"
#include "io/h5util.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int rlvr_checkpoint_path(char *buf, size_t cap, const char *dir, int64_t step) {
    int n = snprintf(buf, cap, "%s/step_%08lld.h5", dir, (long long)step);
    if (n < 0 || (size_t)n >= cap) return RLVR_FAIL(RLVR_EINVAL, "checkpoint path in %s is too long", dir);
    return 0;
}

/* ---- writer ------------------------------------------------------------------ */

int rlvr_checkpoint_begin(rlvr_checkpoint_writer **out, const char *dir, const rlvr_checkpoint_options *opt) {
    *out = NULL;
    if (!opt || opt->version != RLVR_CHECKPOINT_OPTIONS_VERSION)
        return RLVR_FAIL(RLVR_EINVAL, "rlvr_checkpoint_options: version %d, expected %d (use _INIT)",
                         opt ? opt->version : -1, RLVR_CHECKPOINT_OPTIONS_VERSION);
    if (opt->step < 0 || opt->compression < 0 || opt->compression > 9)
        return RLVR_FAIL(RLVR_EINVAL, "checkpoint options: step %lld must be >= 0 and compression %d in 0..9",
                         (long long)opt->step, opt->compression);
    RLVR_TRY(rlvr_mkdir_p(dir, 0777));
    rlvr_checkpoint_writer *w = calloc(1, sizeof *w);
    if (!w) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    w->file = H5I_INVALID_HID;
    w->opt = *opt;
    w->opt.config_text = NULL; /* written now; the caller's string need not outlive this call */
    snprintf(w->dir, sizeof w->dir, "%s", dir);
    int rc = rlvr_checkpoint_path(w->path, sizeof w->path, dir, opt->step);
    if (rc == 0) {
        snprintf(w->part, sizeof w->part, "%s.part", w->path);
        rc = rlvr_h5_file_create(&w->file, w->part, false);
    }
    if (rc < 0) {
        free(w);
        return rc;
    }
    char now[32];
    rlvr_utc_now(now, sizeof now);
    if ((rc = rlvr_h5_write_format(w->file, RLVR_FORMAT_CHECKPOINT, RLVR_CHECKPOINT_FORMAT_VERSION)) < 0 ||
        (rc = rlvr_h5_attr_put_i64(w->file, "step", opt->step)) < 0 ||
        (rc = rlvr_h5_attr_put_i64(w->file, "policy_version", opt->policy_version)) < 0 ||
        (rc = rlvr_h5_attr_put_u64(w->file, "config_hash", opt->config_hash)) < 0 ||
        (rc = rlvr_h5_attr_put_str(w->file, "created_utc", now)) < 0 ||
        (rc = rlvr_h5_attr_put_i64(w->file, "has_model", 0)) < 0 ||
        (rc = rlvr_h5_attr_put_i64(w->file, "has_moments", 0)) < 0 ||
        (rc = rlvr_h5_write_text(w->file, "run/config", opt->config_text ? opt->config_text : "",
                                 opt->compression)) < 0) {
        rlvr_checkpoint_abort(w);
        return rlvr_error_wrap(rc, "starting checkpoint %s", w->part);
    }
    *out = w;
    return 0;
}

int rlvr_ckpt_check_name(const char *name) {
    size_t n = name ? strlen(name) : 0;
    bool ok = n > 0 && n <= 120 && name[0] != '/' && name[n - 1] != '/' && !strstr(name, "//");
    for (size_t i = 0; ok && i < n; i++) {
        char c = name[i];
        ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
             c == '.' || c == '/';
    }
    if (ok) ok = strcmp(name, ".") && strcmp(name, "..") && !strstr(name, "/../") && strncmp(name, "../", 3);
    if (!ok)
        return RLVR_FAIL(RLVR_EINVAL,
                         "checkpoint state name \"%s\": use 1..120 characters of [A-Za-z0-9_.-], parts joined by '/'",
                         name ? name : "(null)");
    return 0;
}

bool rlvr_ckpt_path_exists(hid_t loc, const char *path) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char saved = *p;
        *p = '\0';
        htri_t e = H5Lexists(loc, buf, H5P_DEFAULT);
        if (e <= 0) {
            H5Eclear2(H5E_DEFAULT);
            return false;
        }
        if (saved == '\0') return true;
        *p = saved;
    }
}

int rlvr_checkpoint_put_array(rlvr_checkpoint_writer *w, const rlvr_state_array *a) {
    RLVR_TRY(rlvr_ckpt_check_name(a->name));
    if (rlvr_dtype_size(a->dtype) == 0 || a->rank < 1 || a->rank > RLVR_IO_MAX_RANK)
        return RLVR_FAIL(RLVR_EINVAL, "checkpoint state \"%s\": unknown dtype %d or rank %d outside 1..%d", a->name,
                         (int)a->dtype, a->rank, RLVR_IO_MAX_RANK);
    hsize_t dims[RLVR_IO_MAX_RANK];
    for (int d = 0; d < a->rank; d++) {
        if (a->dims[d] < 0) return RLVR_FAIL(RLVR_EINVAL, "checkpoint state \"%s\": negative dimension", a->name);
        dims[d] = (hsize_t)a->dims[d];
    }
    char path[160];
    snprintf(path, sizeof path, "state/%s", a->name);
    if (rlvr_ckpt_path_exists(w->file, path))
        return RLVR_FAIL(RLVR_EINVAL, "checkpoint state \"%s\" is stored twice (or under a prefix of another)",
                         a->name);
    int rc = rlvr_h5_write_array(w->file, path, a->dtype, a->rank, dims, a->data, w->opt.compression);
    return rc < 0 ? rlvr_error_wrap(rc, "checkpoint %s", w->part) : 0;
}

int rlvr_checkpoint_put_rng(rlvr_checkpoint_writer *w, const char *name, const rlvr_rng_stream *s) {
    uint64_t v[10] = {s->seed, s->purpose, s->step, s->sequence, s->position,
                      s->buffer[0], s->buffer[1], s->buffer[2], s->buffer[3], s->used};
    rlvr_state_array a = {.name = name, .dtype = RLVR_DT_U64, .rank = 1, .dims = {10}, .data = v};
    return rlvr_checkpoint_put_array(w, &a);
}

static bool file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

/* Parses "step_00000100.h5" (exactly the canonical spelling). */
static bool parse_step_name(const char *name, const char *suffix, int64_t *step) {
    long long s;
    int used = 0;
    if (sscanf(name, "step_%lld%n", &s, &used) != 1 || s < 0) return false;
    if (strcmp(name + used, suffix) != 0) return false;
    char canonical[64];
    snprintf(canonical, sizeof canonical, "step_%08lld%s", s, suffix);
    if (strcmp(canonical, name) != 0) return false;
    *step = s;
    return true;
}

static int cmp_desc(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Deletes unmarked checkpoints beyond the newest keep_last (never the one
 * `latest` names) and stale .part files. */
static int apply_retention(const char *dir, int keep_last, int64_t latest_step) {
    DIR *d = opendir(dir);
    if (!d) return rlvr_error_errno_at(__FILE__, __LINE__, "listing checkpoints in %s", dir);
    int64_t *steps = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    bool removed = false;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int64_t s;
        size_t len = strlen(e->d_name);
        bool part = len > 5 && strcmp(e->d_name + len - 5, ".part") == 0 &&
                    (strncmp(e->d_name, "step_", 5) == 0 || strcmp(e->d_name, "latest.part") == 0);
        if (part) {
            char p[4400];
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            if (unlink(p) == 0) removed = true;
            continue;
        }
        if (!parse_step_name(e->d_name, ".h5", &s)) continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            int64_t *grown = realloc(steps, cap * sizeof *grown);
            if (!grown) {
                rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory listing %s", dir);
                break;
            }
            steps = grown;
        }
        steps[n++] = s;
    }
    closedir(d);
    if (rc == 0 && keep_last > 0) {
        qsort(steps, n, sizeof *steps, cmp_desc);
        for (size_t i = (size_t)keep_last; i < n; i++) {
            if (steps[i] == latest_step) continue;
            char p[4400], keep[4410];
            if ((rc = rlvr_checkpoint_path(p, sizeof p, dir, steps[i])) < 0) break;
            snprintf(keep, sizeof keep, "%s.keep", p);
            if (file_exists(keep)) continue;
            if (unlink(p) != 0) {
                rc = rlvr_error_errno_at(__FILE__, __LINE__, "deleting old checkpoint %s", p);
                break;
            }
            removed = true;
        }
    }
    free(steps);
    if (rc == 0 && removed) {
        char probe[4400];
        snprintf(probe, sizeof probe, "%s/latest", dir);
        rc = rlvr_fsync_parent_dir(probe);
    }
    return rc;
}

int rlvr_checkpoint_commit(rlvr_checkpoint_writer *w, char *path_out, size_t cap) {
    int rc = 0;
    if (H5Fclose(w->file) < 0) {
        w->file = H5I_INVALID_HID;
        rc = RLVR_H5_FAIL("closing checkpoint %s", w->part);
        goto fail;
    }
    w->file = H5I_INVALID_HID;
    if ((rc = rlvr_publish(w->part, w->path, w->opt.fsync)) < 0) {
        if (access(w->path, F_OK) == 0 && access(w->part, F_OK) != 0) goto done; /* renamed; the directory's fsync failed */
        goto fail;
    }
    if (w->opt.mark && (rc = rlvr_checkpoint_mark(w->dir, w->opt.step)) < 0) goto done;
    /* only now may `latest` name the new file */
    char latest[4200], name[64];
    snprintf(latest, sizeof latest, "%s/latest", w->dir);
    snprintf(name, sizeof name, "step_%08lld.h5\n", (long long)w->opt.step);
    if ((rc = rlvr_write_text_atomic(latest, name)) < 0) goto done;
    rc = apply_retention(w->dir, w->opt.keep_last, w->opt.step);
done:
    if (rc == 0 && path_out) snprintf(path_out, cap, "%s", w->path);
    if (rc < 0) rc = rlvr_error_wrap(rc, "committing checkpoint %s", w->path);
    free(w);
    return rc;
fail:
    rc = rlvr_error_wrap(rc, "committing checkpoint %s", w->path);
    unlink(w->part);
    free(w);
    return rc;
}

void rlvr_checkpoint_abort(rlvr_checkpoint_writer *w) {
    if (!w) return;
    rlvr_h5_close(&w->file);
    unlink(w->part);
    free(w);
}

int rlvr_checkpoint_latest(const char *dir, char *path, size_t cap) {
    char latest[4200];
    snprintf(latest, sizeof latest, "%s/latest", dir);
    FILE *f = fopen(latest, "r");
    if (!f) {
        if (errno == ENOENT) return rlvr_error_set(RLVR_ENOTFOUND, "no checkpoint in %s yet (no `latest` file)", dir);
        return rlvr_error_errno_at(__FILE__, __LINE__, "opening %s", latest);
    }
    char name[128] = "";
    char *got = fgets(name, sizeof name, f);
    fclose(f);
    name[strcspn(name, "\r\n")] = '\0';
    int64_t step;
    if (!got || !parse_step_name(name, ".h5", &step))
        return rlvr_error_set(RLVR_EFORMAT, "%s: expected one line \"step_NNNNNNNN.h5\", found \"%s\"", latest, name);
    RLVR_TRY(rlvr_checkpoint_path(path, cap, dir, step));
    if (!file_exists(path))
        return rlvr_error_set(RLVR_ENOTFOUND, "%s names %s, which does not exist", latest, path);
    return 0;
}

int rlvr_checkpoint_mark(const char *dir, int64_t step) {
    char path[4200], keep[4300];
    RLVR_TRY(rlvr_checkpoint_path(path, sizeof path, dir, step));
    if (!file_exists(path)) return rlvr_error_set(RLVR_ENOTFOUND, "cannot mark %s: no such checkpoint", path);
    snprintf(keep, sizeof keep, "%s.keep", path);
    return rlvr_write_text_atomic(keep, "kept by rlvr_checkpoint_mark\n");
}

int rlvr_checkpoint_list(const char *dir, int64_t *steps, size_t cap, size_t *n) {
    *n = 0;
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT) return 0;
        return rlvr_error_errno_at(__FILE__, __LINE__, "listing checkpoints in %s", dir);
    }
    int64_t *all = NULL;
    size_t count = 0, all_cap = 0;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int64_t s;
        if (!parse_step_name(e->d_name, ".h5", &s)) continue;
        if (count == all_cap) {
            all_cap = all_cap ? all_cap * 2 : 16;
            int64_t *grown = realloc(all, all_cap * sizeof *grown);
            if (!grown) {
                rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory listing %s", dir);
                break;
            }
            all = grown;
        }
        all[count++] = s;
    }
    closedir(d);
    if (rc == 0) {
        qsort(all, count, sizeof *all, cmp_desc);
        for (size_t i = 0; i < count && i < cap; i++) steps[i] = all[count - 1 - i];
        *n = count;
    }
    free(all);
    return rc;
}

/* ---- reader -------------------------------------------------------------------- */

int rlvr_checkpoint_open(rlvr_checkpoint **out, const char *path) {
    *out = NULL;
    rlvr_checkpoint *ck = calloc(1, sizeof *ck);
    if (!ck) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    snprintf(ck->path, sizeof ck->path, "%s", path);
    int rc = rlvr_h5_file_open(&ck->file, path, RLVR_FORMAT_CHECKPOINT, RLVR_CHECKPOINT_FORMAT_VERSION,
                               &ck->info.format_version, false);
    if (rc < 0) {
        free(ck);
        return rc;
    }
    int64_t has_model = 0, has_moments = 0;
    if ((rc = rlvr_h5_attr_get_i64(ck->file, "step", &ck->info.step, path)) < 0 ||
        (rc = rlvr_h5_attr_get_i64(ck->file, "policy_version", &ck->info.policy_version, path)) < 0 ||
        (rc = rlvr_h5_attr_get_u64(ck->file, "config_hash", &ck->info.config_hash, path)) < 0 ||
        (rc = rlvr_h5_attr_get_i64(ck->file, "has_model", &has_model, path)) < 0 ||
        (rc = rlvr_h5_attr_get_i64(ck->file, "has_moments", &has_moments, path)) < 0 ||
        (rc = rlvr_h5_attr_get_str(ck->file, "created_utc", ck->info.created_utc, sizeof ck->info.created_utc,
                                   path)) < 0 ||
        (rc = rlvr_h5_read_text(ck->file, "run/config", &ck->config_text, path)) < 0) {
        rlvr_checkpoint_close(ck);
        return rc;
    }
    ck->info.has_model = has_model != 0;
    ck->info.has_moments = has_moments != 0;
    ck->info.config_text = ck->config_text;
    *out = ck;
    return 0;
}

void rlvr_checkpoint_close(rlvr_checkpoint *ck) {
    if (!ck) return;
    rlvr_h5_close(&ck->file);
    free(ck->config_text);
    free(ck);
}

const rlvr_checkpoint_info *rlvr_checkpoint_info_of(const rlvr_checkpoint *ck) { return &ck->info; }

int rlvr_checkpoint_array_shape(const rlvr_checkpoint *ck, const char *name, rlvr_dtype *dtype, int *rank,
                                int64_t dims[RLVR_IO_MAX_RANK]) {
    RLVR_TRY(rlvr_ckpt_check_name(name));
    char path[160];
    snprintf(path, sizeof path, "state/%s", name);
    if (!rlvr_ckpt_path_exists(ck->file, path))
        return rlvr_error_set(RLVR_ENOTFOUND, "%s: no state array \"%s\"", ck->path, name);
    hsize_t d[RLVR_IO_MAX_RANK];
    RLVR_TRY(rlvr_h5_dataset_shape(ck->file, path, rank, d, ck->path));
    for (int i = 0; i < *rank; i++) dims[i] = (int64_t)d[i];
    hid_t dset = H5Dopen2(ck->file, path, H5P_DEFAULT);
    RLVR_H5_CHECK(dset, "%s: opening /%s", ck->path, path);
    hid_t type = H5Dget_type(dset);
    int rc = type >= 0 ? rlvr_h5_dtype_of(type, dtype) : RLVR_H5_FAIL("%s: /%s", ck->path, path);
    rlvr_h5_close(&type);
    rlvr_h5_close(&dset);
    return rc < 0 ? rlvr_error_wrap(rc, "%s: /%s", ck->path, path) : 0;
}

int rlvr_checkpoint_read_array(const rlvr_checkpoint *ck, const char *name, rlvr_dtype dtype, int rank,
                               const int64_t dims[RLVR_IO_MAX_RANK], void *data) {
    rlvr_dtype have;
    int have_rank;
    int64_t have_dims[RLVR_IO_MAX_RANK];
    RLVR_TRY(rlvr_checkpoint_array_shape(ck, name, &have, &have_rank, have_dims));
    if (have != dtype)
        return rlvr_error_set(RLVR_EFORMAT, "%s: state array \"%s\" holds %s, expected %s", ck->path, name,
                              rlvr_dtype_name(have), rlvr_dtype_name(dtype));
    if (rank < 1 || rank > RLVR_IO_MAX_RANK)
        return RLVR_FAIL(RLVR_EINVAL, "state array \"%s\": rank %d outside 1..%d", name, rank, RLVR_IO_MAX_RANK);
    hsize_t d[RLVR_IO_MAX_RANK];
    for (int i = 0; i < rank; i++) d[i] = dims[i] < 0 ? 0 : (hsize_t)dims[i];
    char path[160];
    snprintf(path, sizeof path, "state/%s", name);
    return rlvr_h5_read_array(ck->file, path, dtype, rank, d, data, ck->path);
}

int rlvr_checkpoint_read_rng(const rlvr_checkpoint *ck, const char *name, rlvr_rng_stream *s) {
    uint64_t v[10];
    int64_t dims[RLVR_IO_MAX_RANK] = {10};
    RLVR_TRY(rlvr_checkpoint_read_array(ck, name, RLVR_DT_U64, 1, dims, v));
    if (v[1] > UINT32_MAX || v[2] > UINT32_MAX || v[3] > UINT32_MAX || v[4] > UINT32_MAX || v[9] > 4)
        return rlvr_error_set(RLVR_EFORMAT, "%s: state array \"%s\" is not an RNG stream state", ck->path, name);
    s->seed = v[0];
    s->purpose = (uint32_t)v[1];
    s->step = (uint32_t)v[2];
    s->sequence = (uint32_t)v[3];
    s->position = (uint32_t)v[4];
    for (int i = 0; i < 4; i++) s->buffer[i] = (uint32_t)v[5 + i];
    s->used = (uint32_t)v[9];
    return 0;
}
