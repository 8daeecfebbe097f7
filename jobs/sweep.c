/* jobs/sweep.c — `rlvr sweep`: offline evaluation of many checkpoints on
 * the held-out tasks of a pool, split into cells (checkpoint × task shard)
 * that run as a Slurm job array (or one after another with --local), and an
 * aggregation that merges each checkpoint's shards into one result and
 * writes pass@k per checkpoint and family (HDF5, CSV, terminal table).
 * docs/EVAL.md "Sweeps".
 *
 *   rlvr sweep --checkpoints GLOB --pool POOL --samples N ...   plan + run/submit
 *   rlvr sweep cell DIR [INDEX]                                 one cell
 *   rlvr sweep aggregate DIR                                    the tables
 *
 * Shards are contiguous ranges of the split's tasks in pool order, and every
 * task samples with its pool position as key (rlvr_eval_tasks_from_pool), so
 * the merged shards are exactly one `rlvr eval` of the whole split: the same
 * counts in the same order, hence the same bootstrap intervals. */
#include "core/error.h"
#include "core/hash.h"
#include "eval/eval.h"
#include "io/checkpoint.h"
#include "io/evalstore.h"
#include "io/h5util.h"
#include "jobs/commands.h"
#include "jobs/evalcommon.h"
#include "slurm/sbatch.h"
#include "jobs/schemas.h"

#include <errno.h>
#include <glob.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The batch-script templates slurm/sweep-*.sbatch.in (jobs/CMakeLists.txt). */
#include "sweep_templates.inc"

#define SWEEP_FORMAT "rlvr-sweep/1"
#define CSV_HEADER "checkpoint,step,family,n_tasks,samples,k,pass_at_k,low,high"

/* ---- the plan (DIR/sweep.json) -------------------------------------------------------- */

typedef struct {
    char path[PATH_MAX];
    int64_t step;
} sweep_checkpoint;

typedef struct {
    size_t first, count;
} sweep_shard;

typedef struct {
    char pool[PATH_MAX];
    char config[PATH_MAX]; /* "" : each checkpoint's stored configuration */
    char split[16];        /* "eval", "train", "regression" or "all" */
    int64_t samples;
    uint64_t seed;
    size_t n_tasks;        /* tasks of the split that the manifest marks usable */
    sweep_checkpoint *ckpts;
    size_t n_ckpts;
    sweep_shard *shards;
    size_t n_shards;
} sweep_plan;

static size_t plan_cells(const sweep_plan *p) { return p->n_ckpts * p->n_shards; }

static void plan_free(sweep_plan *p) {
    free(p->ckpts);
    free(p->shards);
    memset(p, 0, sizeof *p);
}

static void path_in(char *buf, size_t cap, const char *dir, const char *name) {
    snprintf(buf, cap, "%s/%s", dir, name);
}

static void cell_path(char *buf, size_t cap, const char *dir, const sweep_plan *p, size_t cell) {
    snprintf(buf, cap, "%s/cells/ckpt%zu_shard%zu.h5", dir, cell / p->n_shards, cell % p->n_shards);
}

static int plan_write(const sweep_plan *p, const char *dir) {
    json_t *ckpts = json_array(), *shards = json_array();
    for (size_t i = 0; i < p->n_ckpts; i++)
        json_array_append_new(ckpts, json_pack("{s:s, s:I}", "path", p->ckpts[i].path, "step",
                                               (json_int_t)p->ckpts[i].step));
    for (size_t j = 0; j < p->n_shards; j++)
        json_array_append_new(shards, json_pack("{s:I, s:I}", "first", (json_int_t)p->shards[j].first, "count",
                                                (json_int_t)p->shards[j].count));
    json_t *doc = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:o, s:o}", "format", SWEEP_FORMAT, "pool",
                            p->pool, "config", p->config, "split", p->split, "samples", (json_int_t)p->samples, "seed",
                            (json_int_t)p->seed, "n_tasks", (json_int_t)p->n_tasks, "cells",
                            (json_int_t)plan_cells(p), "checkpoints", ckpts, "shards", shards);
    char *text = doc ? json_dumps(doc, JSON_PRESERVE_ORDER | JSON_INDENT(2)) : NULL;
    json_decref(doc);
    if (!text) return RLVR_FAIL(RLVR_ENOMEM, "out of memory writing the sweep plan");
    char path[PATH_MAX + 32];
    path_in(path, sizeof path, dir, "sweep.json");
    int rc = rlvr_write_text_atomic(path, text);
    free(text);
    return rc;
}

static int plan_bad(const char *path, const char *field) {
    return rlvr_error_set(RLVR_EFORMAT, "%s: field \"%s\" is missing or wrong (run `rlvr sweep` to write a new plan)",
                          path, field);
}

static int plan_copy_str(json_t *doc, const char *field, char *buf, size_t cap, const char *path) {
    const char *s = json_string_value(json_object_get(doc, field));
    if (!s || strlen(s) >= cap) return plan_bad(path, field);
    snprintf(buf, cap, "%s", s);
    return 0;
}

static int plan_int(json_t *o, const char *field, int64_t lo, int64_t *out, const char *path) {
    json_t *v = json_object_get(o, field);
    if (!json_is_integer(v) || json_integer_value(v) < lo) return plan_bad(path, field);
    *out = json_integer_value(v);
    return 0;
}

static int plan_parse(sweep_plan *p, json_t *doc, const char *path) {
    const char *format = json_string_value(json_object_get(doc, "format"));
    if (!format || strcmp(format, SWEEP_FORMAT) != 0) return plan_bad(path, "format");
    RLVR_TRY(plan_copy_str(doc, "pool", p->pool, sizeof p->pool, path));
    RLVR_TRY(plan_copy_str(doc, "config", p->config, sizeof p->config, path));
    RLVR_TRY(plan_copy_str(doc, "split", p->split, sizeof p->split, path));
    int64_t seed = 0, n_tasks = 0;
    RLVR_TRY(plan_int(doc, "samples", 1, &p->samples, path));
    RLVR_TRY(plan_int(doc, "seed", 0, &seed, path));
    RLVR_TRY(plan_int(doc, "n_tasks", 1, &n_tasks, path));
    p->seed = (uint64_t)seed;
    p->n_tasks = (size_t)n_tasks;
    json_t *ckpts = json_object_get(doc, "checkpoints"), *shards = json_object_get(doc, "shards");
    if (!json_is_array(ckpts) || json_array_size(ckpts) == 0) return plan_bad(path, "checkpoints");
    if (!json_is_array(shards) || json_array_size(shards) == 0) return plan_bad(path, "shards");
    p->n_ckpts = json_array_size(ckpts);
    p->n_shards = json_array_size(shards);
    RLVR_ALLOC(p->ckpts, p->n_ckpts);
    RLVR_ALLOC(p->shards, p->n_shards);
    for (size_t i = 0; i < p->n_ckpts; i++) {
        json_t *c = json_array_get(ckpts, i);
        RLVR_TRY(plan_copy_str(c, "path", p->ckpts[i].path, sizeof p->ckpts[i].path, path));
        RLVR_TRY(plan_int(c, "step", 0, &p->ckpts[i].step, path));
    }
    size_t next = 0;
    for (size_t j = 0; j < p->n_shards; j++) {
        int64_t first = 0, count = 0;
        RLVR_TRY(plan_int(json_array_get(shards, j), "first", 0, &first, path));
        RLVR_TRY(plan_int(json_array_get(shards, j), "count", 1, &count, path));
        if ((size_t)first != next) return plan_bad(path, "shards[].first");
        p->shards[j] = (sweep_shard){(size_t)first, (size_t)count};
        next += (size_t)count;
    }
    return next == p->n_tasks ? 0 : plan_bad(path, "shards[].count");
}

static int plan_read(sweep_plan *p, const char *dir) {
    memset(p, 0, sizeof *p);
    char path[PATH_MAX + 32];
    path_in(path, sizeof path, dir, "sweep.json");
    json_error_t err;
    json_t *doc = json_load_file(path, 0, &err);
    if (!doc)
        return rlvr_error_set(errno == ENOENT ? RLVR_ENOTFOUND : RLVR_EFORMAT,
                              "%s: %s (is %s a sweep directory written by `rlvr sweep`?)", path, err.text, dir);
    int rc = plan_parse(p, doc, path);
    json_decref(doc);
    if (rc < 0) plan_free(p);
    return rc;
}

/* ---- planning -------------------------------------------------------------------------- */

typedef struct {
    const char *checkpoints, *pool, *out, *config, *split;
    int64_t samples, shards, max_parallel, cpus;
    uint64_t seed;
    bool local, dry_run;
} sweep_args;

static int cmp_checkpoint(const void *a, const void *b) {
    const sweep_checkpoint *x = a, *y = b;
    if (x->step != y->step) return x->step < y->step ? -1 : 1;
    return strcmp(x->path, y->path);
}

/* The files GLOB matches, as absolute paths, each opened as a checkpoint for
 * its step, sorted by step. */
static int plan_checkpoints(sweep_plan *p, const char *pattern) {
    glob_t g;
    int grc = glob(pattern, GLOB_ERR, NULL, &g);
    if (grc == GLOB_NOMATCH)
        return rlvr_error_set(RLVR_ENOTFOUND,
                              "--checkpoints '%s' matches no file: give a pattern such as RUN/checkpoints/step_*.h5, "
                              "in quotes so the shell leaves it to rlvr",
                              pattern);
    if (grc != 0) return rlvr_error_set(RLVR_EIO, "--checkpoints '%s': cannot read the directories it names", pattern);
    int rc = 0;
    p->ckpts = calloc(g.gl_pathc, sizeof *p->ckpts);
    if (!p->ckpts) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < g.gl_pathc; i++) {
        sweep_checkpoint *c = &p->ckpts[p->n_ckpts];
        if (!realpath(g.gl_pathv[i], c->path)) {
            rc = rlvr_error_set(RLVR_EIO, "checkpoint %s: %s", g.gl_pathv[i], strerror(errno));
            break;
        }
        rlvr_checkpoint *ck = NULL;
        rc = rlvr_checkpoint_open(&ck, c->path);
        if (rc < 0) {
            rc = rlvr_error_wrap(rc, "checkpoint %s (matched by --checkpoints '%s'; narrow the pattern to checkpoint "
                                     "files)",
                                 c->path, pattern);
            break;
        }
        c->step = rlvr_checkpoint_info_of(ck)->step;
        rlvr_checkpoint_close(ck);
        p->n_ckpts++;
    }
    globfree(&g);
    if (rc == 0) qsort(p->ckpts, p->n_ckpts, sizeof *p->ckpts, cmp_checkpoint);
    return rc;
}

static bool split_all(const char *split) { return strcmp(split, "all") == 0; }

/* The tasks of the plan's split that the manifest marks usable. */
static int load_split_tasks(const sweep_plan *p, rlvr_task_pool **pool, rlvr_pool_manifest **manifest,
                            rlvr_eval_task **tasks, size_t *n) {
    RLVR_TRY(rlvr_evaljob_load_pool(pool, manifest, p->pool, NULL, false));
    rlvr_split split = RLVR_SPLIT_EVAL;
    if (!split_all(p->split)) RLVR_TRY(rlvr_split_parse(p->split, &split));
    return rlvr_eval_tasks_from_pool(tasks, n, *pool, *manifest, split_all(p->split) ? NULL : &split, 0);
}

/* S contiguous ranges of the T tasks: shard j holds [j·T/S, (j+1)·T/S). */
static int plan_shards(sweep_plan *p, int64_t shards) {
    if ((size_t)shards > p->n_tasks)
        return rlvr_error_set(RLVR_EINVAL, "--shards %lld: the %s split of %s has only %zu usable tasks",
                              (long long)shards, p->split, p->pool, p->n_tasks);
    p->n_shards = (size_t)shards;
    RLVR_ALLOC(p->shards, p->n_shards);
    for (size_t j = 0; j < p->n_shards; j++) {
        size_t a = j * p->n_tasks / p->n_shards, b = (j + 1) * p->n_tasks / p->n_shards;
        p->shards[j] = (sweep_shard){a, b - a};
    }
    return 0;
}

static int make_plan(sweep_plan *p, const sweep_args *a) {
    memset(p, 0, sizeof *p);
    if (!realpath(a->pool, p->pool)) return rlvr_error_set(RLVR_EIO, "--pool %s: %s", a->pool, strerror(errno));
    if (a->config && !realpath(a->config, p->config))
        return rlvr_error_set(RLVR_EIO, "--config %s: %s", a->config, strerror(errno));
    snprintf(p->split, sizeof p->split, "%s", a->split);
    p->samples = a->samples;
    p->seed = a->seed;
    RLVR_TRY(plan_checkpoints(p, a->checkpoints));
    rlvr_task_pool *pool = NULL;
    rlvr_pool_manifest *manifest = NULL;
    rlvr_eval_task *tasks = NULL;
    int rc = load_split_tasks(p, &pool, &manifest, &tasks, &p->n_tasks);
    free(tasks);
    rlvr_pool_manifest_free(manifest);
    rlvr_task_pool_free(pool);
    RLVR_TRY(rc);
    return plan_shards(p, a->shards);
}

/* ---- cells ------------------------------------------------------------------------------ */

/* Why cell `cell`'s file is not a finished cell of the plan ("" when it is). */
static void cell_check(const sweep_plan *p, const char *dir, size_t cell, char *why, size_t cap) {
    char path[PATH_MAX + 64];
    cell_path(path, sizeof path, dir, p, cell);
    why[0] = '\0';
    if (access(path, F_OK) != 0) {
        snprintf(why, cap, "missing");
        return;
    }
    rlvr_eval_result *r = NULL;
    rlvr_evalstore_label l;
    if (rlvr_evalstore_read(path, &r, &l) < 0) {
        snprintf(why, cap, "unreadable: %s", rlvr_error_last());
        return;
    }
    const sweep_checkpoint *c = &p->ckpts[cell / p->n_shards];
    const sweep_shard *s = &p->shards[cell % p->n_shards];
    if (strcmp(l.checkpoint, c->path) != 0 || l.step != c->step)
        snprintf(why, cap, "of another checkpoint (%.400s)", l.checkpoint);
    else if (l.shard != (int64_t)(cell % p->n_shards) || l.n_shards != (int64_t)p->n_shards ||
             l.first_task != (int64_t)s->first || r->n_tasks != s->count)
        snprintf(why, cap, "of another shard (%lld of %lld)", (long long)l.shard, (long long)l.n_shards);
    else if (r->samples != p->samples || r->seed != p->seed || strcmp(l.pool, p->pool) != 0 ||
             strcmp(l.split, p->split) != 0)
        snprintf(why, cap, "of other settings (samples %d, seed %llu, pool %.300s, split %s)", r->samples,
                 (unsigned long long)r->seed, l.pool, l.split);
    rlvr_eval_result_free(r);
}

/* The cells still to run: missing[] (n_cells entries at most), *n_missing;
 * says which are skipped and why a file that is there does not count. */
static int find_missing(const sweep_plan *p, const char *dir, size_t **missing, size_t *n_missing) {
    size_t n = plan_cells(p);
    RLVR_ALLOC(*missing, n);
    *n_missing = 0;
    for (size_t cell = 0; cell < n; cell++) {
        char why[600];
        cell_check(p, dir, cell, why, sizeof why);
        if (!why[0]) continue;
        if (strcmp(why, "missing") != 0)
            fprintf(stderr, "sweep: cell %zu (checkpoint %zu, shard %zu) is %s: evaluating it again\n", cell,
                    cell / p->n_shards, cell % p->n_shards, why);
        (*missing)[(*n_missing)++] = cell;
    }
    if (*n_missing < n) fprintf(stderr, "sweep: skipping %zu of %zu finished cells\n", n - *n_missing, n);
    return 0;
}

/* What evaluating cells needs, loaded once; the model of one checkpoint at a time. */
typedef struct {
    const sweep_plan *plan;
    const char *dir;
    rlvr_task_pool *pool;
    rlvr_pool_manifest *manifest;
    rlvr_eval_task *tasks;
    size_t n_tasks;
    rlvr_config *file_cfg;   /* the plan's --config */
    size_t loaded;           /* checkpoint index of model (SIZE_MAX: none) */
    rlvr_tokenizer *tok;     /* the loaded checkpoint's */
    rlvr_model *model;
    rlvr_config *stored_cfg; /* the loaded checkpoint's */
    rlvr_checkpoint_info info;
} cell_runner;

static void runner_unload(cell_runner *c) {
    rlvr_model_free(c->model);
    rlvr_tokenizer_free(c->tok);
    rlvr_config_free(c->stored_cfg);
    c->model = NULL;
    c->tok = NULL;
    c->stored_cfg = NULL;
    c->loaded = SIZE_MAX;
}

static void runner_free(cell_runner *c) {
    runner_unload(c);
    rlvr_config_free(c->file_cfg);
    free(c->tasks);
    rlvr_pool_manifest_free(c->manifest);
    rlvr_task_pool_free(c->pool);
}

static int runner_open(cell_runner *c, const sweep_plan *p, const char *dir) {
    memset(c, 0, sizeof *c);
    c->plan = p;
    c->dir = dir;
    c->loaded = SIZE_MAX;
    RLVR_TRY(load_split_tasks(p, &c->pool, &c->manifest, &c->tasks, &c->n_tasks));
    if (c->n_tasks != p->n_tasks)
        return rlvr_error_set(RLVR_ESTATE,
                              "the %s split of %s has %zu usable tasks now, the plan %s/sweep.json was made with %zu: "
                              "run `rlvr sweep` again to plan anew",
                              p->split, p->pool, c->n_tasks, dir, p->n_tasks);
    if (p->config[0]) RLVR_TRY(rlvr_config_load(&c->file_cfg, p->config, rlvr_all_config_schemas));
    return 0;
}

static int runner_load(cell_runner *c, size_t ckpt) {
    if (c->loaded == ckpt) return 0;
    runner_unload(c);
    RLVR_TRY(rlvr_evaljob_load_checkpoint(c->plan->ckpts[ckpt].path, &c->tok, &c->model, &c->info,
                                          c->file_cfg ? NULL : &c->stored_cfg));
    c->loaded = ckpt;
    return 0;
}

static void cell_label(rlvr_evalstore_label *l, const cell_runner *c, size_t cell) {
    const sweep_plan *p = c->plan;
    size_t j = cell % p->n_shards;
    rlvr_evalstore_label_init(l);
    snprintf(l->checkpoint, sizeof l->checkpoint, "%s", p->ckpts[cell / p->n_shards].path);
    snprintf(l->pool, sizeof l->pool, "%s", p->pool);
    snprintf(l->split, sizeof l->split, "%s", p->split);
    l->step = p->ckpts[cell / p->n_shards].step;
    l->policy_version = c->info.policy_version;
    l->shard = (int64_t)j;
    l->n_shards = (int64_t)p->n_shards;
    l->first_task = (int64_t)p->shards[j].first;
}

/* Evaluates checkpoint i on shard j (cell = i·shards + j) and writes its file. */
static int run_cell(cell_runner *c, size_t cell) {
    const sweep_plan *p = c->plan;
    size_t i = cell / p->n_shards, j = cell % p->n_shards;
    const sweep_shard *s = &p->shards[j];
    RLVR_TRY(runner_load(c, i));
    rlvr_eval_options o;
    double last = 0;
    RLVR_TRY(rlvr_evaljob_options(&o, c->file_cfg ? c->file_cfg : c->stored_cfg, (int32_t)p->samples, p->seed,
                                  &last));
    rlvr_eval_result *r = NULL;
    RLVR_TRY(rlvr_eval_run(&r, c->model, c->tok, c->tasks + s->first, s->count, &o));
    rlvr_evalstore_label l;
    cell_label(&l, c, cell);
    char dir[PATH_MAX + 16], path[PATH_MAX + 64];
    snprintf(dir, sizeof dir, "%s/cells", c->dir);
    cell_path(path, sizeof path, c->dir, p, cell);
    int rc = rlvr_mkdir_p(dir, 0777);
    if (rc == 0) rc = rlvr_evalstore_write(path, r, &l);
    if (rc == 0)
        fprintf(stderr, "sweep: cell %zu done: pass@1 %.3f on %zu tasks -> %s\n", cell,
                r->groups[0].pass_at[0].value, r->n_tasks, path);
    rlvr_eval_result_free(r);
    return rc;
}

static void say_cell(const sweep_plan *p, size_t cell, size_t nth, size_t of) {
    size_t i = cell / p->n_shards, j = cell % p->n_shards;
    const sweep_shard *s = &p->shards[j];
    fprintf(stderr, "sweep: cell %zu (%zu/%zu): %s (step %lld), shard %zu/%zu: tasks %zu..%zu\n", cell, nth, of,
            p->ckpts[i].path, (long long)p->ckpts[i].step, j + 1, p->n_shards, s->first, s->first + s->count - 1);
}

/* ---- aggregation ---------------------------------------------------------------------- */

typedef struct {
    rlvr_eval_result **results;  /* per checkpoint, shards merged */
    rlvr_evalstore_label *labels;
    size_t n;
} sweep_table;

static void table_free(sweep_table *t) {
    for (size_t i = 0; i < t->n; i++) rlvr_eval_result_free(t->results[i]);
    free(t->results);
    free(t->labels);
}

static int read_cells_of(const sweep_plan *p, const char *dir, size_t i, rlvr_eval_result **merged,
                         rlvr_evalstore_label *label) {
    rlvr_eval_result **parts = calloc(p->n_shards, sizeof *parts);
    if (!parts) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    int rc = 0;
    for (size_t j = 0; rc == 0 && j < p->n_shards; j++) {
        size_t cell = i * p->n_shards + j;
        char why[600], path[PATH_MAX + 64];
        cell_check(p, dir, cell, why, sizeof why);
        cell_path(path, sizeof path, dir, p, cell);
        if (why[0]) {
            rc = rlvr_error_set(RLVR_ESTATE, "cell %zu (%s) is %s: run the sweep again (it runs only the cells "
                                             "that are not finished)",
                                cell, path, why);
            break;
        }
        rc = rlvr_evalstore_read(path, &parts[j], j == 0 ? label : NULL);
    }
    if (rc == 0)
        rc = rlvr_eval_result_merge(merged, (const rlvr_eval_result *const *)parts, p->n_shards, parts[0]->confidence,
                                    parts[0]->resamples);
    for (size_t j = 0; j < p->n_shards; j++) rlvr_eval_result_free(parts[j]);
    free(parts);
    if (rc == 0) {
        label->shard = label->n_shards = -1;
        label->first_task = 0;
    }
    return rc;
}

static int merge_all(const sweep_plan *p, const char *dir, sweep_table *t) {
    memset(t, 0, sizeof *t);
    RLVR_ALLOC(t->results, p->n_ckpts);
    RLVR_ALLOC(t->labels, p->n_ckpts);
    for (size_t i = 0; i < p->n_ckpts; i++) {
        RLVR_TRY(read_cells_of(p, dir, i, &t->results[i], &t->labels[i]));
        t->n++;
    }
    return 0;
}

/* A CSV field: quoted when it holds a comma, quote or newline. */
static void csv_field(FILE *f, const char *s) {
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_number(FILE *f, double v) {
    if (isnan(v)) fputs("nan", f);
    else fprintf(f, "%.17g", v);
}

/* One row per checkpoint × family × k (pass@k; pass^k is in sweep.h5). */
static int write_csv(const sweep_table *t, const char *dir) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return RLVR_FAIL(RLVR_ENOMEM, "out of memory writing the CSV");
    fprintf(f, "%s\n", CSV_HEADER);
    for (size_t i = 0; i < t->n; i++) {
        const rlvr_eval_result *r = t->results[i];
        for (size_t g = 0; g < r->n_groups; g++) {
            const rlvr_eval_group *gr = &r->groups[g];
            for (int32_t k = 0; k < gr->n_k; k++) {
                csv_field(f, t->labels[i].checkpoint);
                fprintf(f, ",%lld,", (long long)t->labels[i].step);
                csv_field(f, gr->name);
                fprintf(f, ",%d,%d,%lld,", gr->n_tasks, r->samples, (long long)gr->k[k]);
                csv_number(f, gr->pass_at[k].value);
                fputc(',', f);
                csv_number(f, gr->pass_at[k].low);
                fputc(',', f);
                csv_number(f, gr->pass_at[k].high);
                fputc('\n', f);
            }
        }
    }
    if (fclose(f) != 0 || !text) {
        free(text);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory writing the CSV");
    }
    char path[PATH_MAX + 32];
    path_in(path, sizeof path, dir, "sweep.csv");
    int rc = rlvr_write_text_atomic(path, text);
    free(text);
    return rc;
}

static void print_estimate_cell(const rlvr_eval_group *g) {
    const rlvr_eval_estimate *p1 = &g->pass_at[0], *pk = &g->pass_at[g->n_k - 1];
    char a[48], b[16];
    if (isnan(p1->value)) snprintf(a, sizeof a, "-");
    else snprintf(a, sizeof a, "%.3f [%.3f, %.3f]", p1->value, p1->low, p1->high);
    if (isnan(pk->value)) snprintf(b, sizeof b, "-");
    else snprintf(b, sizeof b, "%.3f", pk->value);
    printf("  %-22s %7s", a, b);
}

/* Rows: checkpoints by step; columns: each family's pass@1 [CI] and pass@N. */
static void print_table(const sweep_plan *p, const sweep_table *t, const char *dir) {
    const rlvr_eval_result *r0 = t->results[0];
    printf("sweep %s: %zu checkpoints x %zu %s tasks (%zu shards) x %lld samples, seed %llu\n", dir, p->n_ckpts,
           p->n_tasks, p->split, p->n_shards, (long long)p->samples, (unsigned long long)p->seed);
    printf("%8s", "");
    for (size_t g = 0; g < r0->n_groups; g++) printf("  %-30s", r0->groups[g].name);
    printf("\n%8s", "step");
    char ci[32], at[16];
    snprintf(ci, sizeof ci, "pass@1 [%g%% CI]", 100.0 * r0->confidence);
    snprintf(at, sizeof at, "pass@%lld", (long long)r0->groups[0].k[r0->groups[0].n_k - 1]);
    for (size_t g = 0; g < r0->n_groups; g++) printf("  %-22s %7s", ci, at);
    printf("\n");
    for (size_t i = 0; i < t->n; i++) {
        printf("%8lld", (long long)t->labels[i].step);
        for (size_t g = 0; g < r0->n_groups; g++) {
            const rlvr_eval_group *gr = rlvr_eval_result_group(t->results[i], r0->groups[g].name);
            if (gr) print_estimate_cell(gr);
            else printf("  %-22s %7s", "-", "-");
        }
        printf("\n");
    }
    printf("written: %s/sweep.h5 (pass@k and pass^k), %s/sweep.csv\n", dir, dir);
}

static int aggregate(const sweep_plan *p, const char *dir) {
    sweep_table t;
    int rc = merge_all(p, dir, &t);
    char path[PATH_MAX + 32];
    path_in(path, sizeof path, dir, "sweep.h5");
    if (rc == 0)
        rc = rlvr_evalstore_write_sweep(path, (const rlvr_eval_result *const *)t.results, t.labels, t.n);
    if (rc == 0) rc = write_csv(&t, dir);
    if (rc == 0) print_table(p, &t, dir);
    table_free(&t);
    return rc;
}

/* ---- Slurm ------------------------------------------------------------------------------ */

/* "0-3,7,9-11%T" of the sorted cell indices; false when it does not fit. */
static bool array_spec(char *buf, size_t cap, const size_t *cells, size_t n, int64_t max_parallel) {
    size_t len = 0;
    buf[0] = '\0';
    for (size_t a = 0; a < n;) {
        size_t b = a;
        while (b + 1 < n && cells[b + 1] == cells[b] + 1) b++;
        int w = b > a ? snprintf(buf + len, cap - len, "%s%zu-%zu", len ? "," : "", cells[a], cells[b])
                      : snprintf(buf + len, cap - len, "%s%zu", len ? "," : "", cells[a]);
        if (w < 0 || (size_t)w >= cap - len) return false;
        len += (size_t)w;
        a = b + 1;
    }
    int w = snprintf(buf + len, cap - len, "%%%lld", (long long)max_parallel);
    return w > 0 && (size_t)w < cap - len;
}

/* A name the sweep's jobs share and other sweeps' do not: its directory's hash. */
static void job_name(char *buf, size_t cap, const char *dir, const char *what) {
    uint64_t h = rlvr_fnv1a64(dir, strlen(dir));
    snprintf(buf, cap, "rlvr-sweep-%08llx-%s", (unsigned long long)(h & 0xffffffffu), what);
}

static int render_script(const char *tmpl, const char *path, const char *dir, const char *name, int64_t cpus) {
    char exe[PATH_MAX], cpus_s[24];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n < 0) return rlvr_error_set(RLVR_ESYS, "readlink /proc/self/exe: %s", strerror(errno));
    exe[n] = '\0';
    snprintf(cpus_s, sizeof cpus_s, "%lld", (long long)cpus);
    char *q_exe = rlvr_sbatch_shell_quote(exe), *q_dir = rlvr_sbatch_shell_quote(dir), *text = NULL;
    int rc = 0;
    if (!q_exe || !q_dir) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    const char *keys[] = {"RLVR", "SWEEP", "JOB_NAME", "CPUS"};
    const char *values[] = {q_exe, q_dir, name, cpus_s};
    if (rc == 0) rc = rlvr_sbatch_render(tmpl, keys, values, 4, &text);
    if (rc == 0) rc = rlvr_write_text_atomic(path, text);
    if (rc == 0 && chmod(path, 0755) != 0) rc = rlvr_error_set(RLVR_EIO, "chmod %s: %s", path, strerror(errno));
    free(text);
    free(q_exe);
    free(q_dir);
    return rc;
}

static int record_job(const char *dir, const char *kind, const char *id, const char *what) {
    char path[PATH_MAX + 32];
    path_in(path, sizeof path, dir, "jobs.tsv");
    FILE *f = fopen(path, "a");
    if (!f) return rlvr_error_set(RLVR_EIO, "opening %s: %s", path, strerror(errno));
    fprintf(f, "%s\t%s\t%s\n", kind, id, what);
    return fclose(f) == 0 ? 0 : rlvr_error_set(RLVR_EIO, "writing %s: %s", path, strerror(errno));
}

static int submit(const sweep_plan *p, const sweep_args *a, const char *dir, const size_t *missing, size_t n_missing) {
    char slurm_dir[PATH_MAX + 16], logs[PATH_MAX + 16];
    snprintf(slurm_dir, sizeof slurm_dir, "%s/slurm", dir);
    snprintf(logs, sizeof logs, "%s/logs", dir);
    RLVR_TRY(rlvr_mkdir_p(slurm_dir, 0777));
    RLVR_TRY(rlvr_mkdir_p(logs, 0777));
    char cell_script[PATH_MAX + 48], agg_script[PATH_MAX + 48], name[64], array_id[64] = "", agg_id[64];
    char arg_output[PATH_MAX + 64], arg_array[8192], arg_dep[96];
    snprintf(cell_script, sizeof cell_script, "%s/sweep-cell.sbatch", slurm_dir);
    snprintf(agg_script, sizeof agg_script, "%s/sweep-aggregate.sbatch", slurm_dir);
    if (n_missing > 0) {
        job_name(name, sizeof name, dir, "cell");
        RLVR_TRY(render_script(tmpl_sweep_cell_sbatch, cell_script, dir, name, a->cpus));
        memcpy(arg_array, "--array=", 8);
        if (!array_spec(arg_array + 8, sizeof arg_array - 8, missing, n_missing, a->max_parallel))
            return rlvr_error_set(RLVR_ELIMIT,
                                  "the %zu missing cells make an --array list longer than %zu characters: run "
                                  "`rlvr sweep --local`, or submit fewer checkpoints or shards at a time",
                                  n_missing, sizeof arg_array - 9);
        snprintf(arg_output, sizeof arg_output, "--output=%s/cell-%%a.out", logs);
        const char *args[] = {arg_array, arg_output};
        RLVR_TRY(rlvr_sbatch_submit(cell_script, args, 2, a->dry_run, array_id, sizeof array_id));
        printf("sweep: cells array job %s: %s (%zu of %zu cells)\n", array_id, arg_array, n_missing, plan_cells(p));
        if (!a->dry_run) RLVR_TRY(record_job(dir, "cells", array_id, arg_array + 8));
    } else {
        printf("sweep: all %zu cells are finished: submitting the aggregation only\n", plan_cells(p));
    }
    job_name(name, sizeof name, dir, "aggregate");
    RLVR_TRY(render_script(tmpl_sweep_aggregate_sbatch, agg_script, dir, name, 1));
    snprintf(arg_output, sizeof arg_output, "--output=%s/aggregate-%%j.out", logs);
    snprintf(arg_dep, sizeof arg_dep, "--dependency=afterok:%s", array_id);
    const char *args[] = {arg_output, arg_dep, "--kill-on-invalid-dep=yes"};
    RLVR_TRY(rlvr_sbatch_submit(agg_script, args, n_missing > 0 ? 3 : 1, a->dry_run, agg_id, sizeof agg_id));
    if (n_missing > 0) printf("sweep: aggregation job %s (afterok:%s)\n", agg_id, array_id);
    else printf("sweep: aggregation job %s\n", agg_id);
    if (!a->dry_run) RLVR_TRY(record_job(dir, "aggregate", agg_id, n_missing > 0 ? arg_dep + 13 : "-"));
    printf("sweep: results will be in %s/sweep.csv and %s/sweep.h5; logs in %s\n", dir, dir, logs);
    return 0;
}

/* ---- the commands --------------------------------------------------------------------- */

static void usage(FILE *out) {
    fprintf(out,
            "usage: rlvr sweep --checkpoints GLOB --pool POOL --samples N [--shards S] [--out DIR] [--local]\n"
            "                  [--max-parallel T] [--split eval|train|regression|all] [--seed S] [--config RUN.ini]\n"
            "                  [--cpus C] [--dry-run]\n"
            "       rlvr sweep cell DIR [INDEX]\n"
            "       rlvr sweep aggregate DIR\n"
            "  --checkpoints GLOB  checkpoint files, e.g. 'RUN/checkpoints/step_*.h5' (quoted), sorted by step\n"
            "  --pool POOL         task pool checked with `rlvr tasks check` (its manifest is required)\n"
            "  --samples N         rollouts per task; pass@k for k = 1, 2, 4, ... N\n"
            "  --shards S          contiguous shards of the split's tasks per checkpoint (default 1)\n"
            "  --out DIR           the sweep directory (default: RUN/sweep next to RUN/checkpoints)\n"
            "  --local             run the cells here, one after another, then aggregate (no Slurm)\n"
            "  --max-parallel T    array tasks running at once (--array=...%%T; default 4)\n"
            "  --split S           tasks of this split (default eval; all: every split)\n"
            "  --seed S            sampling seed (default 1, as `rlvr eval`)\n"
            "  --config FILE       the run's configuration (default: the one stored in each checkpoint)\n"
            "  --cpus C            CPUs per array task (default 1)\n"
            "  --dry-run           write the plan and scripts, print the sbatch commands, submit nothing\n"
            "cells (checkpoint i x shard j = index i*S + j) already in DIR/cells are skipped; when all are\n"
            "finished only the aggregation runs. `cell` evaluates one (INDEX defaults to SLURM_ARRAY_TASK_ID);\n"
            "`aggregate` writes DIR/sweep.h5, DIR/sweep.csv and prints the table.\n");
}

static int parse_value(sweep_args *a, const char *flag, const char *v) {
    int64_t n;
    if (strcmp(flag, "--checkpoints") == 0) a->checkpoints = v;
    else if (strcmp(flag, "--pool") == 0) a->pool = v;
    else if (strcmp(flag, "--out") == 0) a->out = v;
    else if (strcmp(flag, "--config") == 0) a->config = v;
    else if (strcmp(flag, "--split") == 0) {
        rlvr_split s;
        if (strcmp(v, "all") != 0 && rlvr_split_parse(v, &s) < 0) {
            fprintf(stderr, "rlvr sweep: --split: %s\n", rlvr_error_last());
            return -1;
        }
        a->split = v;
    } else if (strcmp(flag, "--samples") == 0) return rlvr_cmd_parse_int("sweep", flag, v, 1, 1 << 20, &a->samples);
    else if (strcmp(flag, "--shards") == 0) return rlvr_cmd_parse_int("sweep", flag, v, 1, 100000, &a->shards);
    else if (strcmp(flag, "--max-parallel") == 0)
        return rlvr_cmd_parse_int("sweep", flag, v, 1, 100000, &a->max_parallel);
    else if (strcmp(flag, "--cpus") == 0) return rlvr_cmd_parse_int("sweep", flag, v, 1, 4096, &a->cpus);
    else if (strcmp(flag, "--seed") == 0) {
        if (rlvr_cmd_parse_int("sweep", flag, v, 0, INT64_MAX, &n) < 0) return -1;
        a->seed = (uint64_t)n;
    } else {
        fprintf(stderr, "rlvr sweep: unknown option %s\n", flag);
        return -1;
    }
    return 0;
}

static int parse(sweep_args *a, int argc, char **argv) {
    memset(a, 0, sizeof *a);
    a->split = "eval";
    a->shards = 1;
    a->max_parallel = 4;
    a->cpus = 1;
    a->seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *flag = argv[i];
        if (strcmp(flag, "--local") == 0) a->local = true;
        else if (strcmp(flag, "--dry-run") == 0) a->dry_run = true;
        else if (i + 1 >= argc) {
            fprintf(stderr, "rlvr sweep: %s needs a value\n", flag);
            return -1;
        } else if (parse_value(a, flag, argv[++i]) < 0) return -1;
    }
    if (!a->checkpoints || !a->pool || a->samples == 0) {
        fprintf(stderr, "rlvr sweep: --checkpoints, --pool and --samples are required\n");
        return -1;
    }
    if (a->local && a->dry_run) {
        fprintf(stderr, "rlvr sweep: --dry-run is for Slurm submissions; leave out --local\n");
        return -1;
    }
    return 0;
}

/* RUN/sweep for checkpoints in RUN/checkpoints, else a "sweep" folder next to them. */
static void default_out(char *buf, size_t cap, const char *first_checkpoint) {
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%.*s", PATH_MAX - 16, first_checkpoint);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    slash = strrchr(dir, '/');
    if (slash && strcmp(slash + 1, "checkpoints") == 0) *slash = '\0';
    snprintf(buf, cap, "%.*s/sweep", (int)(cap > 7 ? cap - 7 : 0), dir[0] ? dir : ".");
}

static int run_missing_here(const sweep_plan *p, const char *dir, const size_t *missing, size_t n_missing) {
    if (n_missing == 0) return 0;
    cell_runner c;
    int rc = runner_open(&c, p, dir);
    for (size_t m = 0; rc == 0 && m < n_missing; m++) {
        say_cell(p, missing[m], m + 1, n_missing);
        rc = run_cell(&c, missing[m]);
    }
    runner_free(&c);
    return rc;
}

static int sweep_main(const sweep_args *a) {
    sweep_plan p;
    int rc = make_plan(&p, a);
    char dir[PATH_MAX];
    if (rc == 0) {
        char out[PATH_MAX];
        if (a->out) snprintf(out, sizeof out, "%s", a->out);
        else default_out(out, sizeof out, p.ckpts[0].path);
        rc = rlvr_mkdir_p(out, 0777);
        if (rc == 0 && !realpath(out, dir)) rc = rlvr_error_set(RLVR_EIO, "--out %s: %s", out, strerror(errno));
    }
    if (rc == 0) rc = plan_write(&p, dir);
    if (rc == 0)
        fprintf(stderr, "sweep: %zu checkpoints (steps %lld..%lld) x %zu shards of %zu %s tasks = %zu cells in %s\n",
                p.n_ckpts, (long long)p.ckpts[0].step, (long long)p.ckpts[p.n_ckpts - 1].step, p.n_shards,
                p.n_tasks, p.split, plan_cells(&p), dir);
    size_t *missing = NULL, n_missing = 0;
    if (rc == 0) rc = find_missing(&p, dir, &missing, &n_missing);
    if (rc == 0 && a->local) {
        rc = run_missing_here(&p, dir, missing, n_missing);
        if (rc == 0) rc = aggregate(&p, dir);
    } else if (rc == 0) {
        rc = submit(&p, a, dir, missing, n_missing);
    }
    free(missing);
    plan_free(&p);
    return rc;
}

static int cell_main(int argc, char **argv) {
    const char *index_text = argc > 3 ? argv[3] : getenv("SLURM_ARRAY_TASK_ID");
    if (argc < 3 || argc > 4 || !index_text) {
        fprintf(stderr, "rlvr sweep cell: give DIR and INDEX (or run it as a Slurm array task)\n");
        return RLVR_EXIT_USAGE;
    }
    int64_t index = 0;
    if (rlvr_cmd_parse_int("sweep cell", "INDEX", index_text, 0, INT32_MAX, &index) < 0) return RLVR_EXIT_USAGE;
    sweep_plan p;
    int rc = plan_read(&p, argv[2]);
    if (rc == 0 && (size_t)index >= plan_cells(&p))
        rc = rlvr_error_set(RLVR_EINVAL, "cell %lld: the sweep %s has %zu cells (0..%zu)", (long long)index, argv[2],
                            plan_cells(&p), plan_cells(&p) - 1);
    char why[600] = "";
    if (rc == 0) cell_check(&p, argv[2], (size_t)index, why, sizeof why);
    if (rc == 0 && !why[0]) {
        fprintf(stderr, "sweep: cell %lld is finished: nothing to do\n", (long long)index);
    } else if (rc == 0) {
        cell_runner c;
        say_cell(&p, (size_t)index, 1, 1);
        rc = runner_open(&c, &p, argv[2]);
        if (rc == 0) rc = run_cell(&c, (size_t)index);
        runner_free(&c);
    }
    plan_free(&p);
    return rc < 0 ? rlvr_cmd_fail("sweep cell", rc) : RLVR_EXIT_OK;
}

static int aggregate_main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "rlvr sweep aggregate: give the sweep directory\n");
        return RLVR_EXIT_USAGE;
    }
    sweep_plan p;
    int rc = plan_read(&p, argv[2]);
    char dir[PATH_MAX];
    if (rc == 0 && !realpath(argv[2], dir)) rc = rlvr_error_set(RLVR_EIO, "%s: %s", argv[2], strerror(errno));
    if (rc == 0) rc = aggregate(&p, dir);
    plan_free(&p);
    return rc < 0 ? rlvr_cmd_fail("sweep aggregate", rc) : RLVR_EXIT_OK;
}

int rlvr_cmd_sweep(int argc, char **argv) {
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0)) {
        usage(stdout);
        return RLVR_EXIT_OK;
    }
    if (argc >= 2 && strcmp(argv[1], "cell") == 0) return cell_main(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "aggregate") == 0) return aggregate_main(argc, argv);
    sweep_args a;
    if (parse(&a, argc, argv) < 0) {
        usage(stderr);
        return RLVR_EXIT_USAGE;
    }
    int rc = sweep_main(&a);
    return rc < 0 ? rlvr_cmd_fail("sweep", rc) : RLVR_EXIT_OK;
}
