/* envs/pool.c — loading pools and the split hygiene check. */
#include "envs/pool.h"

#include "core/error.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct rlvr_task_pool {
    char *path;
    rlvr_task **tasks;
    size_t n, cap;
};

void rlvr_task_pool_free(rlvr_task_pool *pool) {
    if (!pool) return;
    for (size_t i = 0; i < pool->n; i++) rlvr_task_free(pool->tasks[i]);
    free(pool->tasks);
    free(pool->path);
    free(pool);
}

const char *rlvr_task_pool_path(const rlvr_task_pool *pool) { return pool->path; }
size_t rlvr_task_pool_size(const rlvr_task_pool *pool) { return pool->n; }
const rlvr_task *rlvr_task_pool_get(const rlvr_task_pool *pool, size_t i) { return i < pool->n ? pool->tasks[i] : NULL; }

const rlvr_task *rlvr_task_pool_find(const rlvr_task_pool *pool, const char *id) {
    for (size_t i = 0; i < pool->n; i++)
        if (strcmp(pool->tasks[i]->id, id) == 0) return pool->tasks[i];
    return NULL;
}

size_t rlvr_task_pool_count(const rlvr_task_pool *pool, rlvr_split split) {
    size_t n = 0;
    for (size_t i = 0; i < pool->n; i++) n += pool->tasks[i]->split == split;
    return n;
}

/* Takes ownership of t. */
static int pool_add(rlvr_task_pool *pool, rlvr_task *t) {
    const rlvr_task *dup = rlvr_task_pool_find(pool, t->id);
    if (dup) {
        int rc = rlvr_error_set(RLVR_EFORMAT, "task pool %s: id \"%s\" is used twice (%s and %s); ids must be unique",
                                pool->path, t->id, dup->source, t->source);
        rlvr_task_free(t);
        return rc;
    }
    if (pool->n == pool->cap) {
        size_t cap = pool->cap ? pool->cap * 2 : 64;
        rlvr_task **grown = realloc(pool->tasks, cap * sizeof *grown);
        if (!grown) {
            rlvr_task_free(t);
            return RLVR_FAIL(RLVR_ENOMEM, "out of memory loading task pool %s", pool->path);
        }
        pool->tasks = grown;
        pool->cap = cap;
    }
    pool->tasks[pool->n++] = t;
    return 0;
}

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int compare_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int load_directory(rlvr_task_pool *pool) {
    DIR *d = opendir(pool->path);
    if (!d) return rlvr_error_set(RLVR_EIO, "task pool %s: cannot open directory: %s", pool->path, strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (e->d_name[0] == '.' || !ends_with(e->d_name, ".json")) continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **grown = realloc(names, cap * sizeof *grown);
            if (!grown) {
                rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory listing %s", pool->path);
                break;
            }
            names = grown;
        }
        names[n] = strdup(e->d_name);
        if (!names[n]) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory listing %s", pool->path);
        else n++;
    }
    closedir(d);
    if (rc == 0 && n > 1) qsort(names, n, sizeof *names, compare_names);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        size_t len = strlen(pool->path) + strlen(names[i]) + 2;
        char *p = malloc(len);
        if (!p) {
            rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory loading %s", pool->path);
            break;
        }
        snprintf(p, len, "%s/%s", pool->path, names[i]);
        struct stat st;
        if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
            rlvr_task *t;
            rc = rlvr_task_load_file(&t, p);
            if (rc == 0) rc = pool_add(pool, t);
        }
        free(p);
    }
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    if (rc == 0 && pool->n == 0)
        rc = rlvr_error_set(RLVR_EFORMAT, "task pool %s: no task specs (*.json) in the directory", pool->path);
    return rc;
}

static int load_jsonl(rlvr_task_pool *pool) {
    FILE *f = fopen(pool->path, "rb");
    if (!f) return rlvr_error_set(RLVR_EIO, "task pool %s: cannot open: %s", pool->path, strerror(errno));
    char *dir = strdup(pool->path);
    if (!dir) {
        fclose(f);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory loading %s", pool->path);
    }
    char *slash = strrchr(dir, '/');
    if (slash) *(slash == dir ? slash + 1 : slash) = '\0';
    else strcpy(dir, ".");
    char *line = NULL;
    size_t line_cap = 0;
    ssize_t len;
    int rc = 0, line_no = 0;
    while (rc == 0 && (len = getline(&line, &line_cap, f)) >= 0) {
        line_no++;
        size_t i = 0;
        while (i < (size_t)len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\n' || line[i] == '\r')) i++;
        if (i == (size_t)len) continue;
        char source[4096];
        snprintf(source, sizeof source, "%s:%d", pool->path, line_no);
        rlvr_task *t;
        rc = rlvr_task_parse(&t, line, (size_t)len, source, dir);
        if (rc == 0) rc = pool_add(pool, t);
    }
    if (rc == 0 && ferror(f)) rc = rlvr_error_set(RLVR_EIO, "task pool %s: read failed", pool->path);
    free(line);
    free(dir);
    fclose(f);
    if (rc == 0 && pool->n == 0) rc = rlvr_error_set(RLVR_EFORMAT, "task pool %s: no task specs in the file", pool->path);
    return rc;
}

int rlvr_task_pool_load(rlvr_task_pool **out, const char *path) {
    *out = NULL;
    rlvr_task_pool *pool = calloc(1, sizeof *pool);
    if (!pool || !(pool->path = strdup(path))) {
        free(pool);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory loading task pool %s", path);
    }
    size_t n = strlen(pool->path);
    while (n > 1 && pool->path[n - 1] == '/') pool->path[--n] = '\0';
    struct stat st;
    int rc;
    if (stat(pool->path, &st) != 0)
        rc = rlvr_error_set(RLVR_EIO, "task pool %s: %s (a pool is a directory of *.json specs or a .jsonl file)",
                            path, strerror(errno));
    else if (S_ISDIR(st.st_mode)) rc = load_directory(pool);
    else if (ends_with(pool->path, ".jsonl")) rc = load_jsonl(pool);
    else {
        rlvr_task *t;
        rc = rlvr_task_load_file(&t, pool->path);
        if (rc == 0) rc = pool_add(pool, t);
    }
    if (rc < 0) {
        rlvr_task_pool_free(pool);
        return rc;
    }
    *out = pool;
    return 0;
}

/* ---- split hygiene -------------------------------------------------------- */

static int compare_by_key(const void *a, const void *b) {
    const rlvr_task *x = *(const rlvr_task *const *)a, *y = *(const rlvr_task *const *)b;
    int c = strcmp(x->split_key, y->split_key);
    if (c) return c;
    return (int)x->split - (int)y->split;
}

/* A key shared by train and other tasks is clean when it is split by time:
 * every task of it has created_at and every train task is older than every
 * eval or regression task (a repository mined along its history). *newest
 * and *oldest receive the two tasks that decide it. */
static bool split_by_time(const rlvr_task *const *group, size_t n, const rlvr_task **newest_train,
                          const rlvr_task **oldest_other) {
    *newest_train = *oldest_other = NULL;
    for (size_t k = 0; k < n; k++) {
        const rlvr_task *t = group[k];
        if (!t->has_created_at) {
            *newest_train = *oldest_other = t;
            return false;
        }
        const rlvr_task **slot = t->split == RLVR_SPLIT_TRAIN ? newest_train : oldest_other;
        bool train = t->split == RLVR_SPLIT_TRAIN;
        if (!*slot || (train ? t->created_at > (*slot)->created_at : t->created_at < (*slot)->created_at)) *slot = t;
    }
    return (*newest_train)->created_at < (*oldest_other)->created_at;
}

static int shared_key_error(const rlvr_task *const *group, size_t n, size_t shared) {
    const rlvr_task *train, *other;
    if (split_by_time(group, n, &train, &other)) return 0;
    if (train == other) { /* a task without created_at: the key is simply shared */
        const rlvr_task *first_train = group[0], *first_other = group[0];
        for (size_t k = 0; k < n && first_other->split == RLVR_SPLIT_TRAIN; k++) first_other = group[k];
        return rlvr_error_set(
            RLVR_EINVAL,
            "split hygiene: split key \"%s\" is used by train task \"%s\" (%s) and %s task \"%s\" (%s); %zu shared "
            "key%s in all. Train tasks must not share a repository or template with eval or regression tasks: move "
            "or regenerate the tasks on one side (a key may be shared only when split by time: every task with its "
            "created_at, every train task older than every other; \"%s\" has none)",
            first_train->split_key, first_train->id, first_train->source, rlvr_split_name(first_other->split),
            first_other->id, first_other->source, shared, shared == 1 ? "" : "s", train->id);
    }
    char a[21], b[21];
    rlvr_task_time_format(train->created_at, a);
    rlvr_task_time_format(other->created_at, b);
    return rlvr_error_set(RLVR_EINVAL,
                          "split hygiene: split key \"%s\" is used by train task \"%s\" (%s, created %s) and %s task "
                          "\"%s\" (%s, created %s), and the train task is not the older; %zu shared key%s in all. A "
                          "key split by time needs every train task older than every eval or regression task: move "
                          "or regenerate the tasks on one side",
                          group[0]->split_key, train->id, train->source, a, rlvr_split_name(other->split), other->id,
                          other->source, b, shared, shared == 1 ? "" : "s");
}

int rlvr_task_pools_split_check(const rlvr_task_pool *const *pools, size_t n_pools, size_t *time_split_keys) {
    size_t total = 0;
    for (size_t p = 0; p < n_pools; p++) total += pools[p]->n;
    const rlvr_task **all;
    RLVR_ALLOC(all, total);
    size_t k = 0;
    for (size_t p = 0; p < n_pools; p++)
        for (size_t i = 0; i < pools[p]->n; i++) all[k++] = pools[p]->tasks[i];
    /* Sorted by (key, split): a shared key shows as a train task directly
     * followed, within the same key, by an eval or regression task. */
    qsort(all, total, sizeof *all, compare_by_key);
    size_t shared = 0, by_time = 0;
    for (size_t i = 0; i < total;) {
        size_t j = i;
        while (j < total && strcmp(all[j]->split_key, all[i]->split_key) == 0) j++;
        if (all[i]->split == RLVR_SPLIT_TRAIN && all[j - 1]->split != RLVR_SPLIT_TRAIN) {
            const rlvr_task *a, *b;
            if (split_by_time(all + i, j - i, &a, &b)) by_time++;
            else shared++;
        }
        i = j;
    }
    int rc = 0;
    for (size_t i = 0; shared && rc == 0 && i < total;) {
        size_t j = i;
        while (j < total && strcmp(all[j]->split_key, all[i]->split_key) == 0) j++;
        if (all[i]->split == RLVR_SPLIT_TRAIN && all[j - 1]->split != RLVR_SPLIT_TRAIN)
            rc = shared_key_error(all + i, j - i, shared);
        i = j;
    }
    free(all);
    if (rc == 0 && time_split_keys) *time_split_keys = by_time;
    return rc;
}

int rlvr_task_pools_check_splits(const rlvr_task_pool *const *pools, size_t n_pools) {
    return rlvr_task_pools_split_check(pools, n_pools, NULL);
}

int rlvr_task_pool_check_splits(const rlvr_task_pool *pool) { return rlvr_task_pools_check_splits(&pool, 1); }
