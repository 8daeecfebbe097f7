/* enclave/expected.c — results as expected files (enclave/expected.h). */
#include "enclave/expected.h"

#include "core/error.h"
#include "enclave/diffgate.h"
#include "enclave/fsutil.h"
#include "enclave/junit.h"
#include "enclave/reason.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void rlvr_expected_free(rlvr_expected_set *s) {
    for (size_t i = 0; s && i < s->n; i++) {
        free(s->files[i].path);
        free(s->files[i].data);
    }
    if (s) free(s->files);
    if (s) memset(s, 0, sizeof *s);
}

int rlvr_expected_load(rlvr_expected_set *out, const char *dir, const char *const *paths) {
    memset(out, 0, sizeof *out);
    size_t n = 0;
    while (paths && paths[n]) n++;
    if (n == 0) return RLVR_FAIL(RLVR_EINVAL, "expected files: none named");
    if (!(out->files = calloc(n, sizeof *out->files))) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rlvr_expected_file *f = &out->files[i];
        if (rlvr_diffgate_check_path(paths[i], NULL) != RLVR_REASON_NONE) {
            rc = RLVR_FAIL(RLVR_EINVAL, "expected file \"%s\" must be a plain path inside the tree", paths[i]);
            break;
        }
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, paths[i]);
        if (!(f->path = strdup(paths[i]))) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        if (rc == 0) rc = rlvr_fs_read_file(path, &f->data, &f->len);
        if (rc == 0) out->n++;
    }
    if (rc < 0) rlvr_expected_free(out);
    return rc;
}

/* ---- inside the enclave -------------------------------------------------------- */

enum { FILE_READ = 0, FILE_MISSING = 1, FILE_NOT_REGULAR = 2, FILE_TOO_BIG = 3 };

/* read_files_fn's argument: for each file its cap (u64), then the paths,
 * NUL-terminated, one after the other. */
typedef struct {
    uint32_t n;
    uint64_t caps[];
} files_arg;

static int write_all(const void *p, size_t n) {
    const char *b = p;
    while (n) {
        ssize_t w = write(1, b, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        b += w, n -= (size_t)w;
    }
    return 0;
}

/* Per file: "STATUS LENGTH\n" and, when read, its bytes. */
static int read_files_fn(void *p) {
    const files_arg *a = p;
    const char *path = (const char *)(a->caps + a->n);
    for (uint32_t i = 0; i < a->n; i++, path += strlen(path) + 1) {
        int status = FILE_READ;
        int fd = rlvr_junit_open_in_work(path, O_RDONLY);
        struct stat st;
        if (fd < 0) status = errno == ENOENT ? FILE_MISSING : FILE_NOT_REGULAR;
        else if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) status = FILE_NOT_REGULAR;
        else if ((uint64_t)st.st_size > a->caps[i]) status = FILE_TOO_BIG;
        char buf[65536];
        size_t len = 0;
        char *data = NULL;
        if (status == FILE_READ) {
            ssize_t got;
            while ((got = read(fd, buf, sizeof buf)) > 0 && len + (size_t)got <= a->caps[i]) {
                char *grown = realloc(data, len + (size_t)got);
                if (!grown) return 125;
                data = grown;
                memcpy(data + len, buf, (size_t)got);
                len += (size_t)got;
            }
            if (got != 0) status = FILE_TOO_BIG; /* grew while read, or a read error */
        }
        if (fd >= 0) close(fd);
        char head[64];
        int hl = snprintf(head, sizeof head, "%d %zu\n", status, status == FILE_READ ? len : (size_t)0);
        int rc = write_all(head, (size_t)hl);
        if (rc == 0 && status == FILE_READ && len) rc = write_all(data, len);
        free(data);
        if (rc < 0) return 124;
    }
    return 0;
}

/* ---- on the host ---------------------------------------------------------------- */

static int build_arg(const rlvr_expected_set *s, files_arg **out, size_t *len_out) {
    size_t len = sizeof(files_arg) + s->n * sizeof(uint64_t);
    for (size_t i = 0; i < s->n; i++) len += strlen(s->files[i].path) + 1;
    files_arg *a = calloc(1, len);
    if (!a) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    a->n = (uint32_t)s->n;
    char *p = (char *)(a->caps + s->n);
    for (size_t i = 0; i < s->n; i++) {
        a->caps[i] = (uint64_t)s->files[i].len + 1; /* one byte more tells "longer" from "equal" */
        size_t pl = strlen(s->files[i].path) + 1;
        memcpy(p, s->files[i].path, pl);
        p += pl;
    }
    *out = a;
    *len_out = len;
    return 0;
}

/* Compares the reader's answer with the expected copies. */
static int compare(const rlvr_expected_set *s, const char *outp, size_t out_len, rlvr_tap_report *r) {
    size_t pos = 0;
    for (size_t i = 0; i < s->n; i++) {
        rlvr_tap_test *t = &r->tests[i];
        t->number = (int)i + 1;
        t->status = RLVR_TAP_FAIL;
        if (!(t->name = strdup(s->files[i].path))) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        r->n_tests++;
        const char *nl = pos < out_len ? memchr(outp + pos, '\n', out_len - pos) : NULL;
        int status;
        size_t len;
        if (!nl || sscanf(outp + pos, "%d %zu", &status, &len) != 2 || (size_t)(nl + 1 - outp) + len > out_len) {
            r->malformed = true; /* the reader's answer was cut: nothing after it counts */
            continue;
        }
        pos = (size_t)(nl + 1 - outp);
        if (status == FILE_READ && len == s->files[i].len && memcmp(outp + pos, s->files[i].data, len) == 0)
            t->status = RLVR_TAP_PASS;
        pos += status == FILE_READ ? len : 0;
    }
    return 0;
}

int rlvr_expected_judge(rlvr_sandbox *sb, const rlvr_expected_set *s, rlvr_tap_report *out) {
    memset(out, 0, sizeof *out);
    out->planned = -1;
    files_arg *a = NULL;
    size_t arg_len = 0;
    RLVR_TRY(build_arg(s, &a, &arg_len));
    int64_t cap = 0;
    for (size_t i = 0; i < s->n; i++) cap += (int64_t)s->files[i].len + 64;
    rlvr_sandbox_result res;
    int rc = rlvr_sandbox_call(sb, read_files_fn, a, arg_len, 0, cap + 1, &res);
    free(a);
    if (rc < 0) return rlvr_error_wrap(rc, "reading the files the tests left");
    if (res.exit_code != 0 || res.limit != RLVR_LIMIT_NONE)
        rc = RLVR_FAIL(RLVR_ESANDBOX, "reading the files the tests left: %s",
                       res.limit != RLVR_LIMIT_NONE ? rlvr_sandbox_limit_name(res.limit) : "the reader failed");
    if (rc == 0 && !(out->tests = calloc(s->n, sizeof *out->tests))) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    if (rc == 0) rc = compare(s, res.out ? res.out : "", res.out_truncated ? 0 : res.out_len, out);
    if (rc == 0) out->planned = (int)s->n;
    rlvr_sandbox_result_free(&res);
    if (rc < 0) rlvr_tap_report_free(out);
    return rc;
}
