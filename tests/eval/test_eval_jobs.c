/* tests/eval/test_eval_jobs.c — the evaluation jobs' library (eval/sweep.h,
 * eval/gate_run.h, eval/evaljob.h) driven directly, without training or
 * Slurm, on a fixture made here: a checked pool of 6 arith eval tasks and
 * two random-weights checkpoints (steps 2 and 4) of a run directory.
 *   - a sweep's plan for 2 checkpoints x 4 shards: checkpoints by step,
 *     shard ranges, cell indices and files, the plan's round trip, the
 *     default directory, the --array list, the job name and the rendered
 *     batch scripts;
 *   - aggregation of cell results written here: the merged result equals
 *     the whole split summarised at once (values and intervals), the CSV
 *     rows, a rerun finds nothing missing, a cell of other settings is
 *     found stale;
 *   - the gate's decision and promotion on synthetic evaluations: a better
 *     candidate is promoted (reports, `promoted`, the .keep mark), a worse
 *     one is not;
 *   - refusals naming the file: a glob that matches nothing, a file that is
 *     not a checkpoint, a missing or malformed sweep.json, a missing cell, a
 *     missing candidate checkpoint. */
#include "core/fs.h"
#include "core/hash.h"
#include "envs/check.h"
#include "envs/gen.h"
#include "eval/gate_run.h"
#include "eval/sweep.h"
#include "io/checkpoint.h"
#include "io/evalstore.h"
#include "io/gate_report.h"
#include "policy/model.h"
#include "policy/tokenizer.h"
#include "test.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define N_TASKS 6
#define SAMPLES 4

static char root[PATH_MAX], pool_dir[PATH_MAX + 16], run_dir[PATH_MAX + 16], ckpt_dir[PATH_MAX + 32];
static char ckpt[2][PATH_MAX + 64];

static void make_pool(void) {
    rlvr_task_gen_options g = RLVR_TASK_GEN_OPTIONS_INIT;
    g.count = N_TASKS;
    g.seed = 4;
    g.split = RLVR_SPLIT_EVAL;
    CHECK_OK(rlvr_task_gen(&g, pool_dir, NULL));
    rlvr_task_pool *pool = NULL;
    CHECK_OK(rlvr_task_pool_load(&pool, pool_dir));
    if (!pool) return;
    size_t n = rlvr_task_pool_size(pool);
    rlvr_task_check_result *res = calloc(n, sizeof *res);
    rlvr_task_check_options o = RLVR_TASK_CHECK_OPTIONS_INIT;
    for (size_t i = 0; i < n; i++) CHECK_OK(rlvr_task_check(&res[i], rlvr_task_pool_get(pool, i), NULL, &o));
    char manifest[PATH_MAX + 64];
    rlvr_pool_manifest_default_path(manifest, sizeof manifest, pool_dir);
    CHECK_OK(rlvr_pool_manifest_write(manifest, pool, res, &o));
    for (size_t i = 0; i < n; i++) rlvr_task_check_result_clear(&res[i]);
    free(res);
    rlvr_task_pool_free(pool);
}

static void make_checkpoint(int64_t step, char *path, size_t cap) {
    rlvr_tokenizer *tok = NULL;
    rlvr_model *m = NULL;
    rlvr_checkpoint_writer *w = NULL;
    CHECK_OK(rlvr_tokenizer_new_byte(&tok));
    rlvr_model_config c = {.vocab = rlvr_tokenizer_vocab_size(tok), .d_model = 16, .n_layers = 1, .n_heads = 2,
                           .n_kv_heads = 1, .d_ff = 32, .max_seq = 256, .rope_theta = 10000.0f,
                           .norm_eps = 1e-5f, .init_seed = 21, .init_std = 0.05f};
    CHECK_OK(rlvr_model_new(&m, &c));
    rlvr_checkpoint_options opt = RLVR_CHECKPOINT_OPTIONS_INIT;
    opt.fsync = false;
    opt.step = step;
    opt.policy_version = step;
    CHECK_OK(rlvr_checkpoint_begin(&w, ckpt_dir, &opt));
    CHECK_OK(rlvr_checkpoint_put_model(w, m));
    CHECK_OK(rlvr_checkpoint_commit(w, path, cap));
    rlvr_model_free(m);
    rlvr_tokenizer_free(tok);
}

/* A result over tasks [first, first + n) of the split with c = (i·3) mod 5 of SAMPLES successes. */
static rlvr_eval_result *synthetic(size_t first, size_t n, uint64_t seed, int shift) {
    rlvr_eval_result *r = NULL;
    CHECK_OK(rlvr_eval_result_new(&r, n, SAMPLES, seed, 1.0f));
    for (size_t k = 0; r && k < n; k++) {
        char id[32];
        size_t i = first + k;
        snprintf(id, sizeof id, "t%zu", i);
        CHECK_OK(rlvr_eval_result_set_task(r, k, id, i % 2 ? "odd" : "even", RLVR_SPLIT_EVAL, (uint32_t)i));
        int c = (int)((i * 3) % 5) + shift;
        r->tasks[k].n = SAMPLES;
        r->tasks[k].c = c < 0 ? 0 : c > SAMPLES ? SAMPLES : c;
        r->tasks[k].calls = 2;
        r->tasks[k].calls_parsed = 2;
    }
    if (r) CHECK_OK(rlvr_eval_result_summarize(r, 0.95, 300));
    return r;
}

static bool contains(const char *hay, const char *needle) { return hay && needle && strstr(hay, needle); }

static void count_note(void *arg, const char *line) {
    char *buf = arg;
    strncat(buf, line, 8191 - strlen(buf));
    strncat(buf, "\n", 8191 - strlen(buf));
}

/* ---- the plan ------------------------------------------------------------------------- */

static void test_plan(rlvr_sweep_plan *p, char *sweep_dir) {
    char glob[PATH_MAX + 64];
    snprintf(glob, sizeof glob, "%s/step_*.h5", ckpt_dir);
    rlvr_sweep_spec spec = {.checkpoints = glob, .pool = pool_dir, .split = "eval", .samples = SAMPLES,
                            .shards = 4, .seed = 3};
    CHECK_OK(rlvr_sweep_plan_make(p, &spec));
    CHECK(p->n_ckpts == 2 && p->n_shards == 4 && p->n_tasks == N_TASKS);
    CHECK(rlvr_sweep_cells(p) == 8);
    if (p->n_ckpts != 2 || p->n_shards != 4) return;
    char real[2][PATH_MAX];
    CHECK(realpath(ckpt[0], real[0]) && realpath(ckpt[1], real[1]));
    CHECK(p->ckpts[0].step == 2 && strcmp(p->ckpts[0].path, real[0]) == 0);
    CHECK(p->ckpts[1].step == 4 && strcmp(p->ckpts[1].path, real[1]) == 0);
    /* shard j holds [j·6/4, (j+1)·6/4) */
    size_t expect_first[4] = {0, 1, 3, 4}, expect_count[4] = {1, 2, 1, 2};
    for (size_t j = 0; j < 4; j++)
        CHECK_MSG(p->shards[j].first == expect_first[j] && p->shards[j].count == expect_count[j], "shard %zu: %zu+%zu",
                  j, p->shards[j].first, p->shards[j].count);

    char dflt[PATH_MAX], expect[PATH_MAX + 32];
    rlvr_sweep_default_dir(dflt, sizeof dflt, p->ckpts[0].path);
    char run_real[PATH_MAX];
    CHECK(realpath(run_dir, run_real) != NULL);
    snprintf(expect, sizeof expect, "%s/sweep", run_real);
    CHECK_MSG(strcmp(dflt, expect) == 0, "default dir %s", dflt);
    CHECK_OK(rlvr_sweep_dir(sweep_dir, p, NULL));
    CHECK(strcmp(sweep_dir, expect) == 0);

    char path[PATH_MAX + 64];
    rlvr_sweep_cell_path(path, sizeof path, sweep_dir, p, 6);
    snprintf(expect, sizeof expect, "%s/cells/ckpt1_shard2.h5", sweep_dir);
    CHECK_MSG(strcmp(path, expect) == 0, "cell 6 is %s", path);

    CHECK_OK(rlvr_sweep_plan_write(p, sweep_dir));
    rlvr_sweep_plan q;
    CHECK_OK(rlvr_sweep_plan_read(&q, sweep_dir));
    CHECK(q.n_ckpts == 2 && q.n_shards == 4 && q.n_tasks == N_TASKS && q.samples == SAMPLES && q.seed == 3);
    CHECK(strcmp(q.pool, p->pool) == 0 && strcmp(q.split, "eval") == 0 && q.config[0] == '\0');
    for (size_t i = 0; i < q.n_ckpts && i < 2; i++)
        CHECK(strcmp(q.ckpts[i].path, p->ckpts[i].path) == 0 && q.ckpts[i].step == p->ckpts[i].step);
    for (size_t j = 0; j < q.n_shards && j < 4; j++)
        CHECK(q.shards[j].first == p->shards[j].first && q.shards[j].count == p->shards[j].count);
    rlvr_sweep_plan_free(&q);

    size_t *missing = NULL, n_missing = 0;
    char notes[8192] = "";
    rlvr_evaljob_hooks hooks = {.note = count_note, .arg = notes};
    CHECK_OK(rlvr_sweep_find_missing(p, sweep_dir, &missing, &n_missing, &hooks));
    CHECK(n_missing == 8 && notes[0] == '\0');
    for (size_t m = 0; m < n_missing; m++) CHECK(missing[m] == m);
    free(missing);
}

static void test_slurm_scripts(const char *sweep_dir) {
    char spec[64];
    size_t cells[] = {0, 1, 2, 5, 7, 8};
    CHECK_OK(rlvr_sweep_array_spec(spec, sizeof spec, cells, 6, 3));
    CHECK_MSG(strcmp(spec, "0-2,5,7-8%3") == 0, "array %s", spec);
    CHECK(rlvr_sweep_array_spec(spec, 6, cells, 6, 3) == RLVR_ELIMIT);

    char name[64], expect[64];
    rlvr_sweep_job_name(name, sizeof name, sweep_dir, "cell");
    snprintf(expect, sizeof expect, "rlvr-sweep-%08llx-cell",
             (unsigned long long)(rlvr_fnv1a64(sweep_dir, strlen(sweep_dir)) & 0xffffffffu));
    CHECK_MSG(strcmp(name, expect) == 0, "job name %s", name);

    char *text = NULL, line[PATH_MAX + 64];
    CHECK_OK(rlvr_sweep_render_script("cell", sweep_dir, "/opt/my rlvr/rlvr", 3, &text));
    snprintf(line, sizeof line, "#SBATCH --job-name=%s\n", name);
    CHECK_MSG(contains(text, line), "%s", text ? text : "");
    CHECK(contains(text, "#SBATCH --cpus-per-task=3\n"));
    CHECK(contains(text, "RLVR='/opt/my rlvr/rlvr'\n"));
    snprintf(line, sizeof line, "SWEEP='%s'\n", sweep_dir);
    CHECK(contains(text, line));
    CHECK(contains(text, "sweep cell \"$SWEEP\" \"$SLURM_ARRAY_TASK_ID\""));
    CHECK(!contains(text, "@RLVR@") && !contains(text, "@CPUS@"));
    free(text);
    text = NULL;
    CHECK_OK(rlvr_sweep_render_script("aggregate", sweep_dir, "/bin/rlvr", 1, &text));
    rlvr_sweep_job_name(name, sizeof name, sweep_dir, "aggregate");
    CHECK(contains(text, name) && contains(text, "sweep aggregate"));
    free(text);
    text = NULL;
    CHECK(rlvr_sweep_render_script("other", sweep_dir, "/bin/rlvr", 1, &text) == RLVR_EINVAL && !text);
}

/* ---- aggregation ---------------------------------------------------------------------- */

static void write_cell(const rlvr_sweep_plan *p, const char *dir, size_t cell, uint64_t seed) {
    size_t i = cell / p->n_shards, j = cell % p->n_shards;
    rlvr_eval_result *r = synthetic(p->shards[j].first, p->shards[j].count, seed, (int)i);
    rlvr_evalstore_label l;
    rlvr_evalstore_label_init(&l);
    snprintf(l.checkpoint, sizeof l.checkpoint, "%s", p->ckpts[i].path);
    snprintf(l.pool, sizeof l.pool, "%s", p->pool);
    snprintf(l.split, sizeof l.split, "%s", p->split);
    l.step = p->ckpts[i].step;
    l.policy_version = p->ckpts[i].step;
    l.shard = (int64_t)j;
    l.n_shards = (int64_t)p->n_shards;
    l.first_task = (int64_t)p->shards[j].first;
    char cells[PATH_MAX + 16], path[PATH_MAX + 64];
    snprintf(cells, sizeof cells, "%s/cells", dir);
    CHECK_OK(rlvr_mkdir_p(cells, 0777));
    rlvr_sweep_cell_path(path, sizeof path, dir, p, cell);
    if (r) CHECK_OK(rlvr_evalstore_write(path, r, &l));
    rlvr_eval_result_free(r);
}

static char *read_text(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = calloc(1, 1 << 16);
    if (buf) buf[fread(buf, 1, (1 << 16) - 1, f)] = '\0';
    fclose(f);
    return buf;
}

static void test_aggregate(const rlvr_sweep_plan *p, const char *dir) {
    char cell0[PATH_MAX + 64];
    rlvr_sweep_cell_path(cell0, sizeof cell0, dir, p, 0);
    /* with no cell yet: refused naming the first cell's file */
    rlvr_sweep_table t;
    CHECK(rlvr_sweep_aggregate(p, dir, &t) == RLVR_ESTATE);
    CHECK_MSG(contains(rlvr_error_last(), cell0) && contains(rlvr_error_last(), "is missing: run the sweep again"),
              "%s", rlvr_error_last());
    for (size_t cell = 0; cell < rlvr_sweep_cells(p); cell++) write_cell(p, dir, cell, p->seed);

    CHECK_OK(rlvr_sweep_aggregate(p, dir, &t));
    CHECK(t.n == 2);
    for (size_t i = 0; i < t.n; i++) {
        rlvr_eval_result *whole = synthetic(0, N_TASKS, p->seed, (int)i);
        const rlvr_eval_result *m = t.results[i];
        CHECK(m->n_tasks == N_TASKS && m->n_groups == whole->n_groups && t.labels[i].step == p->ckpts[i].step);
        CHECK(t.labels[i].shard == -1 && t.labels[i].n_shards == -1);
        for (size_t g = 0; g < m->n_groups && g < whole->n_groups; g++) {
            const rlvr_eval_group *a = &m->groups[g], *b = rlvr_eval_result_group(whole, m->groups[g].name);
            CHECK(b != NULL && a->n_k == b->n_k && a->n_tasks == b->n_tasks);
            for (int32_t k = 0; b && k < a->n_k; k++)
                CHECK_MSG(a->pass_at[k].value == b->pass_at[k].value && a->pass_at[k].low == b->pass_at[k].low &&
                              a->pass_at[k].high == b->pass_at[k].high,
                          "ckpt %zu %s k %d: %g [%g, %g] vs %g [%g, %g]", i, a->name, (int)a->k[k],
                          a->pass_at[k].value, a->pass_at[k].low, a->pass_at[k].high, b->pass_at[k].value,
                          b->pass_at[k].low, b->pass_at[k].high);
        }
        /* pass@1 of the whole split: the mean of c/n, by hand */
        double mean = 0;
        for (size_t k = 0; k < N_TASKS; k++) {
            int c = (int)((k * 3) % 5) + (int)i;
            mean += (c > SAMPLES ? SAMPLES : c) / (double)SAMPLES;
        }
        CHECK(fabs(m->groups[0].pass_at[0].value - mean / N_TASKS) < 1e-12);
        rlvr_eval_result_free(whole);
    }
    char *csv = NULL, path[PATH_MAX + 32];
    CHECK_OK(rlvr_sweep_table_csv(&t, &csv));
    snprintf(path, sizeof path, "%s/sweep.csv", dir);
    char *file = read_text(path);
    CHECK(csv && file && strcmp(csv, file) == 0);
    size_t rows = 0, expect_rows = 0;
    for (const char *s = csv; s && *s; s++) rows += *s == '\n';
    for (size_t i = 0; i < t.n; i++)
        for (size_t g = 0; g < t.results[i]->n_groups; g++) expect_rows += (size_t)t.results[i]->groups[g].n_k;
    CHECK_MSG(rows == 1 + expect_rows, "%zu CSV lines, expected %zu", rows, 1 + expect_rows);
    CHECK(csv && strncmp(csv, RLVR_SWEEP_CSV_HEADER "\n", strlen(RLVR_SWEEP_CSV_HEADER) + 1) == 0);
    char row[PATH_MAX + 64];
    snprintf(row, sizeof row, "\n%s,4,all,6,4,1,", p->ckpts[1].path);
    CHECK_MSG(contains(csv, row), "no row %s", row);
    free(csv);
    free(file);
    snprintf(path, sizeof path, "%s/sweep.h5", dir);
    rlvr_eval_result **back = NULL;
    rlvr_evalstore_label *labels = NULL;
    size_t n_back = 0;
    CHECK_OK(rlvr_evalstore_read_sweep(path, &back, &labels, &n_back));
    CHECK(n_back == 2 && labels && labels[1].step == 4);
    for (size_t i = 0; i < n_back; i++) rlvr_eval_result_free(back[i]);
    free(back);
    free(labels);
    rlvr_sweep_table_free(&t);

    /* a rerun finds nothing to do; a cell of another seed is evaluated again */
    size_t *missing = NULL, n_missing = 0;
    char notes[8192] = "";
    rlvr_evaljob_hooks hooks = {.note = count_note, .arg = notes};
    CHECK_OK(rlvr_sweep_find_missing(p, dir, &missing, &n_missing, &hooks));
    CHECK(n_missing == 0 && contains(notes, "sweep: skipping 8 of 8 finished cells"));
    free(missing);
    write_cell(p, dir, 5, p->seed + 1);
    notes[0] = '\0';
    CHECK_OK(rlvr_sweep_find_missing(p, dir, &missing, &n_missing, &hooks));
    CHECK(n_missing == 1 && missing && missing[0] == 5);
    CHECK_MSG(contains(notes, "sweep: cell 5 (checkpoint 1, shard 1) is of other settings") &&
                  contains(notes, "skipping 7 of 8 finished cells"),
              "%s", notes);
    free(missing);
}

/* ---- refusals ------------------------------------------------------------------------- */

static void test_refusals(const char *sweep_dir) {
    rlvr_sweep_plan p;
    char glob[PATH_MAX + 64], bogus[PATH_MAX + 64];
    snprintf(glob, sizeof glob, "%s/nothing_*.h5", ckpt_dir);
    rlvr_sweep_spec spec = {.checkpoints = glob, .pool = pool_dir, .split = "eval", .samples = 2, .shards = 1,
                            .seed = 1};
    CHECK(rlvr_sweep_plan_make(&p, &spec) == RLVR_ENOTFOUND);
    CHECK(contains(rlvr_error_last(), glob) && contains(rlvr_error_last(), "matches no file"));
    CHECK(p.ckpts == NULL && p.n_ckpts == 0);

    snprintf(bogus, sizeof bogus, "%s/step_notes.h5", ckpt_dir);
    CHECK_OK(rlvr_write_text_atomic(bogus, "not a checkpoint\n"));
    snprintf(glob, sizeof glob, "%s/step_*.h5", ckpt_dir);
    CHECK(rlvr_sweep_plan_make(&p, &spec) < 0);
    char real[PATH_MAX];
    CHECK(realpath(bogus, real) != NULL);
    CHECK_MSG(contains(rlvr_error_last(), real) && contains(rlvr_error_last(), "narrow the pattern"), "%s",
              rlvr_error_last());
    unlink(bogus);

    spec.shards = N_TASKS + 1; /* more shards than tasks */
    CHECK(rlvr_sweep_plan_make(&p, &spec) == RLVR_EINVAL);
    CHECK(contains(rlvr_error_last(), "--shards 7"));

    char dir[PATH_MAX + 32], path[PATH_MAX + 64];
    snprintf(dir, sizeof dir, "%s/badsweep", root);
    CHECK_OK(rlvr_mkdir_p(dir, 0777));
    snprintf(path, sizeof path, "%s/sweep.json", dir);
    CHECK(rlvr_sweep_plan_read(&p, dir) == RLVR_ENOTFOUND);
    CHECK(contains(rlvr_error_last(), path));
    CHECK_OK(rlvr_write_text_atomic(path, "{\"format\": \"rlvr-sweep/1\", \"pool\": \"/p\", \"config\": \"\", "
                                          "\"split\": \"eval\", \"samples\": 0}"));
    CHECK(rlvr_sweep_plan_read(&p, dir) == RLVR_EFORMAT);
    CHECK_MSG(contains(rlvr_error_last(), path) && contains(rlvr_error_last(), "\"samples\""), "%s",
              rlvr_error_last());
    CHECK_OK(rlvr_write_text_atomic(path, "{\"format\": \"rlvr-sweep/1\", "));
    CHECK(rlvr_sweep_plan_read(&p, dir) == RLVR_EFORMAT && contains(rlvr_error_last(), path));
    CHECK(rlvr_sweep_run_cell(dir, 0, NULL, NULL) == RLVR_EFORMAT && contains(rlvr_error_last(), path));
    /* a cell index outside the plan */
    CHECK(rlvr_sweep_run_cell(sweep_dir, 8, NULL, NULL) == RLVR_EINVAL);
    CHECK_MSG(contains(rlvr_error_last(), "has 8 cells (0..7)"), "%s", rlvr_error_last());
}

/* ---- the gate ------------------------------------------------------------------------- */

/* A gate run of candidate ckpt[1] (step 4) against ckpt[0] without
 * evaluating: the eval split's results are synthetic, the candidate `shift`
 * successes per task better. */
static rlvr_gate_run *gate_fixture(int shift) {
    rlvr_gate_run *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->spec.promote = run_dir;
    g->spec.candidate = ckpt[1];
    g->spec.baseline = ckpt[0];
    CHECK(realpath(ckpt[1], g->candidate) && realpath(ckpt[0], g->baseline));
    g->cand_info.step = 4;
    g->cand_info.policy_version = 4;
    g->base_info.step = 2;
    rlvr_gate_options_default(&g->opt);
    g->opt.resamples = 300;
    g->opt.compliance_min = 1.0;
    g->n_splits = 2;
    g->results[0][0] = synthetic(0, N_TASKS, 1, 0);
    g->results[0][1] = synthetic(0, N_TASKS, 1, shift);
    g->splits[0] = (rlvr_gate_split){RLVR_SPLIT_EVAL, g->results[0][0], g->results[0][1]};
    g->splits[1] = (rlvr_gate_split){.split = RLVR_SPLIT_REGRESSION}; /* no regression tasks */
    return g;
}

static void test_gate(void) {
    char keep[PATH_MAX + 80], report_json[PATH_MAX + 64], report_h5[PATH_MAX + 64], text[PATH_MAX];
    snprintf(keep, sizeof keep, "%s.keep", ckpt[1]);
    snprintf(report_json, sizeof report_json, "%s/gate/step_00000004.json", run_dir);
    snprintf(report_h5, sizeof report_h5, "%s/gate/step_00000004.h5", run_dir);
    char notes[8192] = "";

    rlvr_gate_run *g = gate_fixture(1);
    g->spec.hooks = (rlvr_evaljob_hooks){.note = count_note, .arg = notes};
    CHECK_OK(rlvr_gate_run_decide(g));
    CHECK(g->report && g->report->passed && g->report->target.passed && g->report->regression_no_tasks);
    CHECK(g->report && g->report->target.mean_diff > 0 && g->report->candidate_step == 4);
    CHECK(contains(g->json, "\"passed\": true"));
    CHECK_OK(rlvr_gate_run_publish(g));
    CHECK_OK(rlvr_gate_read_promoted(run_dir, text, sizeof text));
    CHECK_MSG(strcmp(text, g->candidate) == 0, "promoted names %s", text);
    CHECK(access(keep, F_OK) == 0);
    bool passed = false;
    size_t n_criteria = 0;
    CHECK_OK(rlvr_gate_report_read_passed(report_h5, &passed, &n_criteria));
    CHECK(passed && n_criteria == 3);
    CHECK_MSG(contains(notes, "gate: report ") && contains(notes, "/promoted now names "), "%s", notes);
    char *json = read_text(report_json);
    CHECK(json && g->json && strncmp(json, g->json, strlen(g->json)) == 0 && json[strlen(g->json)] == '\n');
    free(json);
    rlvr_gate_run_free(g);

    /* a worse candidate: rejected, `promoted` unchanged, the report says why */
    unlink(keep);
    g = gate_fixture(-2);
    CHECK_OK(rlvr_gate_run_decide(g));
    CHECK(g->report && !g->report->passed && !g->report->target.passed);
    CHECK_OK(rlvr_gate_run_publish(g));
    CHECK_OK(rlvr_gate_read_promoted(run_dir, text, sizeof text));
    CHECK(strcmp(text, g->candidate) == 0); /* still the first promotion */
    CHECK(access(keep, F_OK) != 0);
    CHECK_OK(rlvr_gate_report_read_passed(report_h5, &passed, &n_criteria));
    CHECK(!passed);
    rlvr_gate_run_free(g);

    /* a missing candidate is refused naming the file */
    char missing[PATH_MAX + 32];
    snprintf(missing, sizeof missing, "%s/nope/step_00000009.h5", root);
    rlvr_gate_run_spec spec = {.candidate = missing, .baseline = ckpt[0], .pool = pool_dir, .tolerance = NAN,
                               .regression_tolerance = NAN, .compliance = NAN, .samples = -1, .limit = -1,
                               .seed = -1, .kv_slots = -1};
    g = NULL;
    CHECK(rlvr_gate_run_load(&g, &spec) < 0 && g == NULL);
    CHECK_MSG(contains(rlvr_error_last(), missing), "%s", rlvr_error_last());
}

int main(void) {
    snprintf(root, sizeof root, "/tmp/test_eval_jobs.XXXXXX");
    if (!mkdtemp(root)) return 1;
    snprintf(pool_dir, sizeof pool_dir, "%s/pool", root);
    snprintf(run_dir, sizeof run_dir, "%s/run", root);
    snprintf(ckpt_dir, sizeof ckpt_dir, "%s/checkpoints", run_dir);
    make_pool();
    make_checkpoint(4, ckpt[1], sizeof ckpt[1]); /* written first: the plan sorts by step */
    make_checkpoint(2, ckpt[0], sizeof ckpt[0]);

    rlvr_sweep_plan p;
    char sweep_dir[PATH_MAX];
    test_plan(&p, sweep_dir);
    test_slurm_scripts(sweep_dir);
    if (p.n_ckpts == 2) test_aggregate(&p, sweep_dir);
    test_refusals(sweep_dir);
    rlvr_sweep_plan_free(&p);
    test_gate();

    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", root);
    return test_summary("test_eval_jobs");
}
