/* eval/sweep.c — evaluation sweeps (eval/sweep.h): the plan, the cells,
 * their aggregation, and their Slurm array job. */
#include "eval/sweep.h"

#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "eval/eval.h"
#include "io/checkpoint.h"
#include "io/evalstore.h"
#include "slurm/sbatch.h"

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

/* The batch-script templates slurm/sweep-*.sbatch.in (eval/CMakeLists.txt). */
#include "sweep_templates.inc"

/* ---- the plan (DIR/sweep.json) -------------------------------------------------------- */

size_t rlvr_sweep_cells(const rlvr_sweep_plan *p) { return p->n_ckpts * p->n_shards; }

void rlvr_sweep_plan_free(rlvr_sweep_plan *p) {
    if (!p) return;
    free(p->ckpts);
    free(p->shards);
    memset(p, 0, sizeof *p);
}

static void path_in(char *buf, size_t cap, const char *dir, const char *name) {
    snprintf(buf, cap, "%s/%s", dir, name);
}

void rlvr_sweep_cell_path(char *buf, size_t cap, const char *dir, const rlvr_sweep_plan *p, size_t cell) {
    snprintf(buf, cap, "%s/cells/ckpt%zu_shard%zu.h5", dir, cell / p->n_shards, cell % p->n_shards);
}

int rlvr_sweep_plan_write(const rlvr_sweep_plan *p, const char *dir) {
    json_t *ckpts = json_array(), *shards = json_array();
    for (size_t i = 0; i < p->n_ckpts; i++)
        json_array_append_new(ckpts, json_pack("{s:s, s:I}", "path", p->ckpts[i].path, "step",
                                               (json_int_t)p->ckpts[i].step));
    for (size_t j = 0; j < p->n_shards; j++)
        json_array_append_new(shards, json_pack("{s:I, s:I}", "first", (json_int_t)p->shards[j].first, "count",
                                                (json_int_t)p->shards[j].count));
    json_t *doc = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:o, s:o}", "format", RLVR_SWEEP_FORMAT, "pool",
                            p->pool, "config", p->config, "split", p->split, "samples", (json_int_t)p->samples, "seed",
                            (json_int_t)p->seed, "n_tasks", (json_int_t)p->n_tasks, "cells",
                            (json_int_t)rlvr_sweep_cells(p), "checkpoints", ckpts, "shards", shards);
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

static int plan_parse(rlvr_sweep_plan *p, json_t *doc, const char *path) {
    const char *format = json_string_value(json_object_get(doc, "format"));
    if (!format || strcmp(format, RLVR_SWEEP_FORMAT) != 0) return plan_bad(path, "format");
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
        p->shards[j] = (rlvr_sweep_shard){(size_t)first, (size_t)count};
        next += (size_t)count;
    }
    return next == p->n_tasks ? 0 : plan_bad(path, "shards[].count");
}

int rlvr_sweep_plan_read(rlvr_sweep_plan *p, const char *dir) {
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
    if (rc < 0) rlvr_sweep_plan_free(p);
    return rc;
}

/* ---- planning ------------------------------------------------------------------------- */

static int cmp_checkpoint(const void *a, const void *b) {
    const rlvr_sweep_checkpoint *x = a, *y = b;
    if (x->step != y->step) return x->step < y->step ? -1 : 1;
    return strcmp(x->path, y->path);
}

/* The files GLOB matches, as absolute paths, each opened as a checkpoint for
 * its step, sorted by step. */
static int plan_checkpoints(rlvr_sweep_plan *p, const char *pattern) {
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
        rlvr_sweep_checkpoint *c = &p->ckpts[p->n_ckpts];
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
static int load_split_tasks(const rlvr_sweep_plan *p, rlvr_task_pool **pool, rlvr_pool_manifest **manifest,
                            rlvr_eval_task **tasks, size_t *n) {
    RLVR_TRY(rlvr_evaljob_load_pool(pool, manifest, p->pool, NULL, false));
    rlvr_split split = RLVR_SPLIT_EVAL;
    if (!split_all(p->split)) RLVR_TRY(rlvr_split_parse(p->split, &split));
    return rlvr_eval_tasks_from_pool(tasks, n, *pool, *manifest, split_all(p->split) ? NULL : &split, 0);
}

/* S contiguous ranges of the T tasks: shard j holds [j·T/S, (j+1)·T/S). */
static int plan_shards(rlvr_sweep_plan *p, int64_t shards) {
    if ((size_t)shards > p->n_tasks)
        return rlvr_error_set(RLVR_EINVAL, "--shards %lld: the %s split of %s has only %zu usable tasks",
                              (long long)shards, p->split, p->pool, p->n_tasks);
    p->n_shards = (size_t)shards;
    RLVR_ALLOC(p->shards, p->n_shards);
    for (size_t j = 0; j < p->n_shards; j++) {
        size_t a = j * p->n_tasks / p->n_shards, b = (j + 1) * p->n_tasks / p->n_shards;
        p->shards[j] = (rlvr_sweep_shard){a, b - a};
    }
    return 0;
}

static int make_plan(rlvr_sweep_plan *p, const rlvr_sweep_spec *a) {
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

int rlvr_sweep_plan_make(rlvr_sweep_plan *p, const rlvr_sweep_spec *spec) {
    memset(p, 0, sizeof *p);
    int rc = make_plan(p, spec);
    if (rc < 0) rlvr_sweep_plan_free(p);
    return rc;
}

/* ---- cells --------------------------------------------------------------------------- */

/* Why cell `cell`'s file is not a finished cell of the plan ("" when it is). */
void rlvr_sweep_cell_check(const rlvr_sweep_plan *p, const char *dir, size_t cell, char *why, size_t cap) {
    char path[PATH_MAX + 64];
    rlvr_sweep_cell_path(path, sizeof path, dir, p, cell);
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
    const rlvr_sweep_checkpoint *c = &p->ckpts[cell / p->n_shards];
    const rlvr_sweep_shard *s = &p->shards[cell % p->n_shards];
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
int rlvr_sweep_find_missing(const rlvr_sweep_plan *p, const char *dir, size_t **missing, size_t *n_missing,
                            const rlvr_evaljob_hooks *hooks) {
    size_t n = rlvr_sweep_cells(p);
    RLVR_ALLOC(*missing, n);
    *n_missing = 0;
    for (size_t cell = 0; cell < n; cell++) {
        char why[600];
        rlvr_sweep_cell_check(p, dir, cell, why, sizeof why);
        if (!why[0]) continue;
        if (strcmp(why, "missing") != 0)
            rlvr_evaljob_say(hooks, "sweep: cell %zu (checkpoint %zu, shard %zu) is %s: evaluating it again", cell,
                             cell / p->n_shards, cell % p->n_shards, why);
        (*missing)[(*n_missing)++] = cell;
    }
    if (*n_missing < n) rlvr_evaljob_say(hooks, "sweep: skipping %zu of %zu finished cells", n - *n_missing, n);
    return 0;
}

/* What evaluating cells needs, loaded once; the model of one checkpoint at a time. */
struct rlvr_sweep_runner {
    const rlvr_sweep_plan *plan;
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
    const rlvr_config_key *const *schemas;
    const rlvr_evaljob_hooks *hooks;
};

static void runner_unload(rlvr_sweep_runner *c) {
    rlvr_model_free(c->model);
    rlvr_tokenizer_free(c->tok);
    rlvr_config_free(c->stored_cfg);
    c->model = NULL;
    c->tok = NULL;
    c->stored_cfg = NULL;
    c->loaded = SIZE_MAX;
}

void rlvr_sweep_runner_free(rlvr_sweep_runner *c) {
    if (!c) return;
    runner_unload(c);
    rlvr_config_free(c->file_cfg);
    free(c->tasks);
    rlvr_pool_manifest_free(c->manifest);
    rlvr_task_pool_free(c->pool);
    free(c);
}

static int runner_init(rlvr_sweep_runner *c, const rlvr_sweep_plan *p, const char *dir) {
    c->plan = p;
    c->dir = dir;
    c->loaded = SIZE_MAX;
    RLVR_TRY(load_split_tasks(p, &c->pool, &c->manifest, &c->tasks, &c->n_tasks));
    if (c->n_tasks != p->n_tasks)
        return rlvr_error_set(RLVR_ESTATE,
                              "the %s split of %s has %zu usable tasks now, the plan %s/sweep.json was made with %zu: "
                              "run `rlvr sweep` again to plan anew",
                              p->split, p->pool, c->n_tasks, dir, p->n_tasks);
    if (p->config[0]) RLVR_TRY(rlvr_config_load(&c->file_cfg, p->config, c->schemas));
    return 0;
}

int rlvr_sweep_runner_open(rlvr_sweep_runner **out, const rlvr_sweep_plan *p, const char *dir,
                           const rlvr_config_key *const *schemas, const rlvr_evaljob_hooks *hooks) {
    rlvr_sweep_runner *c = calloc(1, sizeof *c);
    if (!c) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    c->schemas = schemas;
    c->hooks = hooks;
    int rc = runner_init(c, p, dir);
    if (rc < 0) {
        rlvr_sweep_runner_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

static int runner_load(rlvr_sweep_runner *c, size_t ckpt) {
    if (c->loaded == ckpt) return 0;
    runner_unload(c);
    RLVR_TRY(rlvr_evaljob_load_checkpoint(c->plan->ckpts[ckpt].path, c->schemas, &c->tok, &c->model, &c->info,
                                          c->file_cfg ? NULL : &c->stored_cfg));
    c->loaded = ckpt;
    return 0;
}

static void cell_label(rlvr_evalstore_label *l, const rlvr_sweep_runner *c, size_t cell) {
    const rlvr_sweep_plan *p = c->plan;
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

static void say_cell(const rlvr_sweep_plan *p, size_t cell, size_t nth, size_t of, const rlvr_evaljob_hooks *hooks) {
    size_t i = cell / p->n_shards, j = cell % p->n_shards;
    const rlvr_sweep_shard *s = &p->shards[j];
    rlvr_evaljob_say(hooks, "sweep: cell %zu (%zu/%zu): %s (step %lld), shard %zu/%zu: tasks %zu..%zu", cell, nth, of,
                     p->ckpts[i].path, (long long)p->ckpts[i].step, j + 1, p->n_shards, s->first,
                     s->first + s->count - 1);
}

/* Evaluates checkpoint i on shard j (cell = i·shards + j) and writes its file. */
static int run_cell(rlvr_sweep_runner *c, size_t cell) {
    const rlvr_sweep_plan *p = c->plan;
    size_t i = cell / p->n_shards, j = cell % p->n_shards;
    const rlvr_sweep_shard *s = &p->shards[j];
    RLVR_TRY(runner_load(c, i));
    rlvr_eval_options o;
    RLVR_TRY(rlvr_evaljob_options(&o, c->file_cfg ? c->file_cfg : c->stored_cfg, (int32_t)p->samples, p->seed,
                                  c->hooks));
    rlvr_eval_result *r = NULL;
    RLVR_TRY(rlvr_eval_run(&r, c->model, c->tok, c->tasks + s->first, s->count, &o));
    rlvr_evalstore_label l;
    cell_label(&l, c, cell);
    char dir[PATH_MAX + 16], path[PATH_MAX + 64];
    snprintf(dir, sizeof dir, "%s/cells", c->dir);
    rlvr_sweep_cell_path(path, sizeof path, c->dir, p, cell);
    int rc = rlvr_mkdir_p(dir, 0777);
    if (rc == 0) rc = rlvr_evalstore_write(path, r, &l);
    if (rc == 0)
        rlvr_evaljob_say(c->hooks, "sweep: cell %zu done: pass@1 %.3f on %zu tasks -> %s", cell,
                         r->groups[0].pass_at[0].value, r->n_tasks, path);
    rlvr_eval_result_free(r);
    return rc;
}

int rlvr_sweep_runner_run(rlvr_sweep_runner *c, size_t cell, size_t nth, size_t of) {
    if (cell >= rlvr_sweep_cells(c->plan))
        return RLVR_FAIL(RLVR_EINVAL, "cell %zu: the sweep has %zu cells", cell, rlvr_sweep_cells(c->plan));
    say_cell(c->plan, cell, nth, of, c->hooks);
    return run_cell(c, cell);
}


/* ---- aggregation --------------------------------------------------------------------- */

void rlvr_sweep_table_free(rlvr_sweep_table *t) {
    for (size_t i = 0; i < t->n; i++) rlvr_eval_result_free(t->results[i]);
    free(t->results);
    free(t->labels);
    memset(t, 0, sizeof *t);
}

static int read_cells_of(const rlvr_sweep_plan *p, const char *dir, size_t i, rlvr_eval_result **merged,
                         rlvr_evalstore_label *label) {
    rlvr_eval_result **parts = calloc(p->n_shards, sizeof *parts);
    if (!parts) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    int rc = 0;
    for (size_t j = 0; rc == 0 && j < p->n_shards; j++) {
        size_t cell = i * p->n_shards + j;
        char why[600], path[PATH_MAX + 64];
        rlvr_sweep_cell_check(p, dir, cell, why, sizeof why);
        rlvr_sweep_cell_path(path, sizeof path, dir, p, cell);
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

static int merge_all(const rlvr_sweep_plan *p, const char *dir, rlvr_sweep_table *t) {
    RLVR_ALLOC(t->results, p->n_ckpts);
    RLVR_ALLOC(t->labels, p->n_ckpts);
    for (size_t i = 0; i < p->n_ckpts; i++) {
        RLVR_TRY(read_cells_of(p, dir, i, &t->results[i], &t->labels[i]));
        t->n++;
    }
    return 0;
}

int rlvr_sweep_merge(const rlvr_sweep_plan *p, const char *dir, rlvr_sweep_table *t) {
    memset(t, 0, sizeof *t);
    int rc = merge_all(p, dir, t);
    if (rc < 0) rlvr_sweep_table_free(t);
    return rc;
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
int rlvr_sweep_table_csv(const rlvr_sweep_table *t, char **out) {
    char *text = NULL;
    size_t len = 0;
    *out = NULL;
    FILE *f = open_memstream(&text, &len);
    if (!f) return RLVR_FAIL(RLVR_ENOMEM, "out of memory writing the CSV");
    fprintf(f, "%s\n", RLVR_SWEEP_CSV_HEADER);
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
    *out = text;
    return 0;
}

static int write_tables(const rlvr_sweep_table *t, const char *dir) {
    char path[PATH_MAX + 32], *text = NULL;
    path_in(path, sizeof path, dir, "sweep.h5");
    RLVR_TRY(rlvr_evalstore_write_sweep(path, (const rlvr_eval_result *const *)t->results, t->labels, t->n));
    RLVR_TRY(rlvr_sweep_table_csv(t, &text));
    path_in(path, sizeof path, dir, "sweep.csv");
    int rc = rlvr_write_text_atomic(path, text);
    free(text);
    return rc;
}

int rlvr_sweep_aggregate(const rlvr_sweep_plan *p, const char *dir, rlvr_sweep_table *t) {
    RLVR_TRY(rlvr_sweep_merge(p, dir, t));
    int rc = write_tables(t, dir);
    if (rc < 0) rlvr_sweep_table_free(t);
    return rc;
}

int rlvr_sweep_aggregate_dir(const char *path, rlvr_sweep_plan *p, char *dir, rlvr_sweep_table *t) {
    memset(t, 0, sizeof *t);
    RLVR_TRY(rlvr_sweep_plan_read(p, path));
    if (!realpath(path, dir)) return rlvr_error_set(RLVR_EIO, "%s: %s", path, strerror(errno));
    return rlvr_sweep_aggregate(p, dir, t);
}

/* ---- Slurm ------------------------------------------------------------------------------ */

int rlvr_sweep_array_spec(char *buf, size_t cap, const size_t *cells, size_t n, int64_t max_parallel) {
    size_t len = 0;
    buf[0] = '\0';
    for (size_t a = 0; a < n;) {
        size_t b = a;
        while (b + 1 < n && cells[b + 1] == cells[b] + 1) b++;
        int w = b > a ? snprintf(buf + len, cap - len, "%s%zu-%zu", len ? "," : "", cells[a], cells[b])
                      : snprintf(buf + len, cap - len, "%s%zu", len ? "," : "", cells[a]);
        if (w < 0 || (size_t)w >= cap - len) return RLVR_FAIL(RLVR_ELIMIT, "array list longer than %zu", cap - 1);
        len += (size_t)w;
        a = b + 1;
    }
    int w = snprintf(buf + len, cap - len, "%%%lld", (long long)max_parallel);
    return w > 0 && (size_t)w < cap - len ? 0 : RLVR_FAIL(RLVR_ELIMIT, "array list longer than %zu", cap - 1);
}

void rlvr_sweep_job_name(char *buf, size_t cap, const char *dir, const char *what) {
    uint64_t h = rlvr_fnv1a64(dir, strlen(dir));
    snprintf(buf, cap, "rlvr-sweep-%08llx-%s", (unsigned long long)(h & 0xffffffffu), what);
}

int rlvr_sweep_render_script(const char *what, const char *dir, const char *exe_path, int64_t cpus, char **out) {
    *out = NULL;
    const char *tmpl = strcmp(what, "cell") == 0        ? tmpl_sweep_cell_sbatch
                       : strcmp(what, "aggregate") == 0 ? tmpl_sweep_aggregate_sbatch
                                                        : NULL;
    if (!tmpl) return RLVR_FAIL(RLVR_EINVAL, "no sweep script \"%s\" (cell or aggregate)", what);
    char exe[PATH_MAX], cpus_s[24], name[64];
    if (exe_path) {
        snprintf(exe, sizeof exe, "%s", exe_path);
    } else {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n < 0) return rlvr_error_set(RLVR_ESYS, "readlink /proc/self/exe: %s", strerror(errno));
        exe[n] = '\0';
    }
    snprintf(cpus_s, sizeof cpus_s, "%lld", (long long)cpus);
    rlvr_sweep_job_name(name, sizeof name, dir, what);
    char *q_exe = rlvr_sbatch_shell_quote(exe), *q_dir = rlvr_sbatch_shell_quote(dir);
    int rc = 0;
    if (!q_exe || !q_dir) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    const char *keys[] = {"RLVR", "SWEEP", "JOB_NAME", "CPUS"};
    const char *values[] = {q_exe, q_dir, name, cpus_s};
    if (rc == 0) rc = rlvr_sbatch_render(tmpl, keys, values, 4, out);
    free(q_exe);
    free(q_dir);
    return rc;
}

static int write_script(const char *what, const char *path, const char *dir, const char *exe, int64_t cpus) {
    char *text = NULL;
    RLVR_TRY(rlvr_sweep_render_script(what, dir, exe, cpus, &text));
    int rc = rlvr_write_text_atomic(path, text);
    if (rc == 0 && chmod(path, 0755) != 0) rc = rlvr_error_set(RLVR_EIO, "chmod %s: %s", path, strerror(errno));
    free(text);
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

/* rlvr_sbatch_submit, saying a dry run's command line through the hooks. */
static int submit_script(const char *script, const char *const *args, size_t n_args, bool dry_run, char *id,
                         size_t cap, const rlvr_evaljob_hooks *hooks) {
    char *command = NULL;
    RLVR_TRY(rlvr_sbatch_submit(script, args, n_args, dry_run, id, cap, &command));
    if (command) rlvr_evaljob_say(hooks, "dry-run: %s", command);
    free(command);
    return 0;
}

int rlvr_sweep_submit(const rlvr_sweep_plan *p, const char *dir, const size_t *missing, size_t n_missing,
                      const rlvr_sweep_submit_options *o, const rlvr_evaljob_hooks *hooks) {
    char slurm_dir[PATH_MAX + 16], logs[PATH_MAX + 16];
    snprintf(slurm_dir, sizeof slurm_dir, "%s/slurm", dir);
    snprintf(logs, sizeof logs, "%s/logs", dir);
    RLVR_TRY(rlvr_mkdir_p(slurm_dir, 0777));
    RLVR_TRY(rlvr_mkdir_p(logs, 0777));
    char cell_script[PATH_MAX + 48], agg_script[PATH_MAX + 48], array_id[64] = "", agg_id[64];
    char arg_output[PATH_MAX + 64], arg_array[8192], arg_dep[96];
    snprintf(cell_script, sizeof cell_script, "%s/sweep-cell.sbatch", slurm_dir);
    snprintf(agg_script, sizeof agg_script, "%s/sweep-aggregate.sbatch", slurm_dir);
    if (n_missing > 0) {
        RLVR_TRY(write_script("cell", cell_script, dir, o->exe, o->cpus));
        memcpy(arg_array, "--array=", 8);
        if (rlvr_sweep_array_spec(arg_array + 8, sizeof arg_array - 8, missing, n_missing, o->max_parallel) < 0)
            return rlvr_error_set(RLVR_ELIMIT,
                                  "the %zu missing cells make an --array list longer than %zu characters: run "
                                  "`rlvr sweep --local`, or submit fewer checkpoints or shards at a time",
                                  n_missing, sizeof arg_array - 9);
        snprintf(arg_output, sizeof arg_output, "--output=%s/cell-%%a.out", logs);
        const char *args[] = {arg_array, arg_output};
        RLVR_TRY(submit_script(cell_script, args, 2, o->dry_run, array_id, sizeof array_id, hooks));
        rlvr_evaljob_say(hooks, "sweep: cells array job %s: %s (%zu of %zu cells)", array_id, arg_array, n_missing,
                         rlvr_sweep_cells(p));
        if (!o->dry_run) RLVR_TRY(record_job(dir, "cells", array_id, arg_array + 8));
    } else {
        rlvr_evaljob_say(hooks, "sweep: all %zu cells are finished: submitting the aggregation only",
                         rlvr_sweep_cells(p));
    }
    RLVR_TRY(write_script("aggregate", agg_script, dir, o->exe, 1));
    snprintf(arg_output, sizeof arg_output, "--output=%s/aggregate-%%j.out", logs);
    snprintf(arg_dep, sizeof arg_dep, "--dependency=afterok:%s", array_id);
    const char *args[] = {arg_output, arg_dep, "--kill-on-invalid-dep=yes"};
    RLVR_TRY(submit_script(agg_script, args, n_missing > 0 ? 3 : 1, o->dry_run, agg_id, sizeof agg_id, hooks));
    if (n_missing > 0) rlvr_evaljob_say(hooks, "sweep: aggregation job %s (afterok:%s)", agg_id, array_id);
    else rlvr_evaljob_say(hooks, "sweep: aggregation job %s", agg_id);
    if (!o->dry_run) RLVR_TRY(record_job(dir, "aggregate", agg_id, n_missing > 0 ? arg_dep + 13 : "-"));
    rlvr_evaljob_say(hooks, "sweep: results will be in %s/sweep.csv and %s/sweep.h5; logs in %s", dir, dir, logs);
    return 0;
}

/* ---- the sweep directory and running cells here ----------------------------------------- */

void rlvr_sweep_default_dir(char *buf, size_t cap, const char *first_checkpoint) {
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%.*s", PATH_MAX - 16, first_checkpoint);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    slash = strrchr(dir, '/');
    if (slash && strcmp(slash + 1, "checkpoints") == 0) *slash = '\0';
    snprintf(buf, cap, "%.*s/sweep", (int)(cap > 7 ? cap - 7 : 0), dir[0] ? dir : ".");
}

int rlvr_sweep_dir(char *dir, const rlvr_sweep_plan *p, const char *out) {
    char path[PATH_MAX];
    if (out) snprintf(path, sizeof path, "%s", out);
    else rlvr_sweep_default_dir(path, sizeof path, p->ckpts[0].path);
    RLVR_TRY(rlvr_mkdir_p(path, 0777));
    if (!realpath(path, dir)) return rlvr_error_set(RLVR_EIO, "--out %s: %s", path, strerror(errno));
    return 0;
}

int rlvr_sweep_run_cells(const rlvr_sweep_plan *p, const char *dir, const size_t *missing, size_t n_missing,
                         const rlvr_config_key *const *schemas, const rlvr_evaljob_hooks *hooks) {
    if (n_missing == 0) return 0;
    rlvr_sweep_runner *c = NULL;
    int rc = rlvr_sweep_runner_open(&c, p, dir, schemas, hooks);
    for (size_t m = 0; rc == 0 && m < n_missing; m++) rc = rlvr_sweep_runner_run(c, missing[m], m + 1, n_missing);
    rlvr_sweep_runner_free(c);
    return rc;
}

int rlvr_sweep_run_cell(const char *dir, int64_t index, const rlvr_config_key *const *schemas,
                        const rlvr_evaljob_hooks *hooks) {
    rlvr_sweep_plan p;
    int rc = rlvr_sweep_plan_read(&p, dir);
    if (rc == 0 && (index < 0 || (size_t)index >= rlvr_sweep_cells(&p)))
        rc = rlvr_error_set(RLVR_EINVAL, "cell %lld: the sweep %s has %zu cells (0..%zu)", (long long)index, dir,
                            rlvr_sweep_cells(&p), rlvr_sweep_cells(&p) - 1);
    char why[600] = "";
    if (rc == 0) rlvr_sweep_cell_check(&p, dir, (size_t)index, why, sizeof why);
    if (rc == 0 && !why[0]) {
        rlvr_evaljob_say(hooks, "sweep: cell %lld is finished: nothing to do", (long long)index);
    } else if (rc == 0) {
        rlvr_sweep_runner *c = NULL;
        say_cell(&p, (size_t)index, 1, 1, hooks); /* before loading, which may fail */
        rc = rlvr_sweep_runner_open(&c, &p, dir, schemas, hooks);
        if (rc == 0) rc = run_cell(c, (size_t)index);
        rlvr_sweep_runner_free(c);
    }
    rlvr_sweep_plan_free(&p);
    return rc;
}
