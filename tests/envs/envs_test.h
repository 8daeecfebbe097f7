/* tests/envs/envs_test.h — helpers for the envs tests: temporary
 * directories, files, commands. */
#ifndef RLVR_TESTS_ENVS_TEST_H
#define RLVR_TESTS_ENVS_TEST_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* A fresh directory under $TMPDIR (or /tmp); the caller frees the string. */
static inline char *tmpdir_make(const char *tag) {
    const char *base = getenv("TMPDIR");
    char *p = malloc(4096);
    snprintf(p, 4096, "%s/rlvr_%s_XXXXXX", base && *base ? base : "/tmp", tag);
    if (!mkdtemp(p)) {
        perror("mkdtemp");
        exit(2);
    }
    return p;
}

static inline int rm_rf_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static inline void rm_rf(const char *path) { nftw(path, rm_rf_one, 16, FTW_DEPTH | FTW_PHYS); }

static inline int write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    fputs(text, f);
    return fclose(f);
}

/* The whole file, NUL-terminated; NULL when unreadable. */
static inline char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

/* Runs a shell command; stdout+stderr go to *out (malloc'd, may be NULL).
 * Returns the exit status, or -1 when it did not exit normally. */
static inline int run_cmd(const char *cmd, char **out) {
    size_t need = strlen(cmd) + 8;
    char *full = malloc(need);
    snprintf(full, need, "%s 2>&1", cmd);
    FILE *p = popen(full, "r");
    free(full);
    if (!p) return -1;
    size_t cap = 4096, n = 0, got;
    char *buf = malloc(cap);
    while ((got = fread(buf + n, 1, cap - n - 1, p)) > 0) {
        n += got;
        if (n + 1 == cap) buf = realloc(buf, cap *= 2);
    }
    buf[n] = '\0';
    int status = pclose(p);
    if (out) *out = buf;
    else free(buf);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

#endif
