/* envs/gen.c — family dispatch, options, and helpers shared by the
 * generators. */
#include "envs/gen.h"
#include "core/fs.h"
#include "core/hash.h"

#include "core/config.h"
#include "core/error.h"
#include "envs/gen_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const rlvr_task_families[] = {"bugfix-c", "bugfix-py", "arith", NULL};


/* ---- text ---------------------------------------------------------------- */

int gen_text_check(const rlvr_text *t) {
    if (t->failed) return RLVR_FAIL(RLVR_ENOMEM, "out of memory generating a task");
    return 0;
}

/* ---- keys, ids, buckets ----------------------------------------------------- */

void gen_stream(rlvr_rng_stream *s, const rlvr_task_gen_options *opts, uint32_t family_code, int64_t index) {
    uint32_t step = (family_code << 16) | ((uint32_t)opts->split << 8) | (uint32_t)opts->difficulty;
    rlvr_rng_stream_init(s, opts->seed, RLVR_RNG_ENV, step, (uint32_t)index);
}

void rlvr_task_gen_id(char *out, size_t cap, const rlvr_task_gen_options *opts, int64_t index) {
    snprintf(out, cap, "%s-%s-d%d-s%llu-%06lld", opts->family, rlvr_split_name(opts->split), opts->difficulty,
             (unsigned long long)opts->seed, (long long)index);
}

bool gen_bucket_allows(const char *signature, rlvr_split split) {
    uint64_t bucket = rlvr_fnv1a64(signature, strlen(signature)) % 10;
    if (split == RLVR_SPLIT_TRAIN) return bucket < 7;
    if (split == RLVR_SPLIT_EVAL) return bucket == 7 || bucket == 8;
    return bucket == 9;
}

/* ---- files ------------------------------------------------------------------ */

int gen_write_file(const char *path, const char *text, size_t len) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        RLVR_TRY(rlvr_mkdir_p(dir, 0755));
    }
    FILE *f = fopen(path, "wb");
    if (!f) return rlvr_error_set(RLVR_EIO, "cannot write %s: %s", path, strerror(errno));
    int ok = fwrite(text, 1, len, f) == len;
    ok = (fclose(f) == 0) && ok;
    if (!ok) return rlvr_error_set(RLVR_EIO, "cannot write %s: %s", path, strerror(errno));
    return 0;
}

int gen_must_not_exist(const char *path) {
    struct stat st;
    if (lstat(path, &st) == 0)
        return rlvr_error_set(RLVR_EIO, "%s already exists; generate into a new directory or remove it", path);
    return 0;
}

int gen_strdup(char **out, const char *s) {
    *out = strdup(s);
    if (!*out) return RLVR_FAIL(RLVR_ENOMEM, "out of memory generating a task");
    return 0;
}

int gen_list(rlvr_str_list *out, const char *const *items, size_t n) {
    RLVR_ALLOC(out->items, n);
    for (size_t i = 0; i < n; i++) {
        RLVR_TRY(gen_strdup(&out->items[i], items[i]));
        out->n = i + 1;
    }
    return 0;
}

/* ---- dispatch ------------------------------------------------------------------ */

static int family_code(const char *family) {
    if (!family) return 0;
    if (strcmp(family, "bugfix-c") == 0) return FAMILY_BUGFIX_C;
    if (strcmp(family, "bugfix-py") == 0) return FAMILY_BUGFIX_PY;
    if (strcmp(family, "arith") == 0) return FAMILY_ARITH;
    return 0;
}

const char *gen_compiler(const rlvr_task_gen_options *opts) {
    return opts->compiler && opts->compiler[0] ? opts->compiler : "cc";
}

/* bugfix-py's judge execs this Python by path: a pool made where it is
 * missing could never be judged. */
#define BUGFIX_PY_PYTHON "/usr/bin/python3"

static int check_python(void) {
    if (access(BUGFIX_PY_PYTHON, X_OK) == 0) return 0;
    return rlvr_error_set(RLVR_ENOTFOUND, "bugfix-py runs its tests with %s, which is missing: install it (Debian: "
                          "apt-get install python3)", BUGFIX_PY_PYTHON);
}

/* The bugfix compiler (of bugfix-c's Makefiles and of both families' judges): a bare command name (it is written into every
 * Makefile) that the enclave, which runs with PATH=/usr/local/bin:/usr/bin:/bin,
 * can find; a missing one would make every task of the pool fail to build. */
static int check_compiler(const char *compiler) {
    if (!compiler || !compiler[0]) return 0;
    size_t n = strlen(compiler);
    if (n > 64 || strspn(compiler, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-") != n ||
        compiler[0] == '-' || compiler[0] == '.')
        return rlvr_error_set(RLVR_EINVAL,
                              "bugfix compiler \"%s\": give a command name (letters, digits, . _ + -), e.g. cc or tcc",
                              compiler);
    static const char *const dirs[] = {"/usr/local/bin", "/usr/bin", "/bin"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        char path[128];
        snprintf(path, sizeof path, "%s/%s", dirs[i], compiler);
        if (access(path, X_OK) == 0) return 0;
    }
    return rlvr_error_set(RLVR_ENOTFOUND,
                          "bugfix compiler \"%s\" is not in /usr/local/bin, /usr/bin or /bin: install it (Debian: "
                          "apt-get install %s) or use cc",
                          compiler, compiler);
}

static int check_options(const rlvr_task_gen_options *opts) {
    if (opts->version != RLVR_TASK_GEN_OPTIONS_VERSION)
        return rlvr_error_set(RLVR_EINVAL, "task generation options: version %u, this rlvr knows %d", opts->version,
                              RLVR_TASK_GEN_OPTIONS_VERSION);
    if (!family_code(opts->family)) {
        const char *best = rlvr_task_families[0];
        for (const char *const *f = rlvr_task_families; *f; f++)
            if (opts->family && rlvr_edit_distance(opts->family, *f) < rlvr_edit_distance(opts->family, best))
                best = *f;
        return rlvr_error_set(RLVR_EINVAL, "unknown task family \"%s\" (families: bugfix-c, bugfix-py, arith); did you mean \"%s\"?",
                              opts->family ? opts->family : "", best);
    }
    if ((unsigned)opts->split >= RLVR_SPLIT_COUNT)
        return rlvr_error_set(RLVR_EINVAL, "task generation: split %d out of range", (int)opts->split);
    if (opts->difficulty < 1 || opts->difficulty > 3)
        return rlvr_error_set(RLVR_EINVAL, "task generation: difficulty %d, must be 1, 2 or 3", opts->difficulty);
    if (opts->count < 1 || opts->count > 1000000)
        return rlvr_error_set(RLVR_EINVAL, "task generation: count %lld, must be 1..1000000", (long long)opts->count);
    if (opts->first < 0 || opts->first + opts->count > UINT32_MAX)
        return rlvr_error_set(RLVR_EINVAL, "task generation: first index %lld out of range", (long long)opts->first);
    if (family_code(opts->family) != FAMILY_ARITH) RLVR_TRY(check_compiler(opts->compiler));
    if (family_code(opts->family) == FAMILY_BUGFIX_PY) RLVR_TRY(check_python());
    return 0;
}

int rlvr_task_gen_templates(const char *family, rlvr_split split, const char **names, int cap) {
    switch (family_code(family)) {
    case FAMILY_BUGFIX_C: return gen_bugfix_c_templates(split, names, cap);
    case FAMILY_BUGFIX_PY: return gen_bugfix_py_templates(split, names, cap);
    case FAMILY_ARITH: return gen_arith_templates(split, names, cap);
    }
    return rlvr_error_set(RLVR_ENOTFOUND, "unknown task family \"%s\" (families: bugfix-c, bugfix-py, arith)", family);
}

int rlvr_task_gen_one(rlvr_task **out, const rlvr_task_gen_options *opts, int64_t index, const char *out_dir) {
    *out = NULL;
    RLVR_TRY(check_options(opts));
    if (index < 0 || index > UINT32_MAX)
        return rlvr_error_set(RLVR_EINVAL, "task generation: index %lld out of range", (long long)index);
    if (family_code(opts->family) == FAMILY_ARITH) return gen_arith_task(out, opts, index);
    if (family_code(opts->family) == FAMILY_BUGFIX_PY) return gen_bugfix_py_task(out, opts, index, out_dir);
    return gen_bugfix_c_task(out, opts, index, out_dir);
}

int rlvr_task_gen(const rlvr_task_gen_options *opts, const char *out_dir, size_t *n_written) {
    if (n_written) *n_written = 0;
    RLVR_TRY(check_options(opts));
    RLVR_TRY(rlvr_mkdir_p(out_dir, 0755));
    for (int64_t i = opts->first; i < opts->first + opts->count; i++) {
        char id[64], path[4096];
        rlvr_task_gen_id(id, sizeof id, opts, i);
        snprintf(path, sizeof path, "%s/%s.json", out_dir, id);
        RLVR_TRY(gen_must_not_exist(path));
        rlvr_task *t;
        RLVR_TRY(rlvr_task_gen_one(&t, opts, i, out_dir));
        int rc = rlvr_task_write_file(t, path);
        rlvr_task_free(t);
        if (rc < 0) return rc;
        if (n_written) (*n_written)++;
    }
    return 0;
}
