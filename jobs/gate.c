/* jobs/gate.c — `rlvr gate --candidate C --baseline B --pool POOL ...`: the
 * release gate (eval/gate.h, docs/EVAL.md "Release gate"). Evaluates both
 * checkpoints with the same seeds on the held-out splits the reward never
 * saw, decides the three criteria, writes the report (JSON and HDF5) and,
 * with --promote RUNDIR, marks a passing candidate in RUNDIR/promoted.
 * Exit 0: promote; 1: reject; 2: usage, configuration or I/O error. */
#include "core/config.h"
#include "core/fs.h"
#include "core/error.h"
#include "envs/config.h"
#include "eval/gate.h"
#include "io/checkpoint.h"
#include "io/gate_report.h"
#include "jobs/commands.h"
#include "jobs/evalcommon.h"
#include "jobs/schemas.h"
#include "train/run.h"

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    const char *candidate, *baseline, *pool, *manifest, *config, *promote, *report, *family, *regression;
    bool json, target_split_set;
    rlvr_split target_split;
    double tolerance, regression_tolerance, compliance; /* NAN: not given */
    int64_t samples, limit, seed, kv_slots;              /* −1: not given */
} gate_args;

static void usage(FILE *out) {
    fprintf(out,
            "usage: rlvr gate --candidate C --baseline B [--pool POOL] [--config RUN.ini] [--promote RUNDIR]\n"
            "                 [--report PREFIX] [--split S] [--family F] [--regression LIST]\n"
            "                 [--tolerance T] [--regression-tolerance T] [--compliance P]\n"
            "                 [--samples N] [--seed S] [--limit N] [--kv-slots N] [--manifest PATH] [--json]\n"
            "  --candidate C   checkpoint to promote or reject\n"
            "  --baseline B    checkpoint it must not fall behind (e.g. the promoted one, or the SFT one)\n"
            "  --pool POOL     validated task pool (default: [tasks] pool of the configuration, else RUNDIR/pool)\n"
            "  --config FILE   the run's configuration (default: the one stored in the candidate)\n"
            "  --promote DIR   on PASS write DIR/promoted (the candidate's path); reports go to DIR/gate/\n"
            "  --report PREFIX write PREFIX.json and PREFIX.h5\n"
            "  --split S       target split (default eval)\n"
            "  --family F      target: this family only (default: every family of the split)\n"
            "  --regression L  regression checks, SPLIT or SPLIT:FAMILY, comma separated ([gate] splits,\n"
            "                  default regression)\n"
            "  --tolerance T   target passes when the paired pass@1 difference's interval low end >= -T\n"
            "                  ([gate] tolerance, default 0.02; negative: an improvement of at least |T|)\n"
            "  --regression-tolerance T  the same for every regression family (default 0.05)\n"
            "  --compliance P  candidate's share of tool calls that parse, at least P (default 1.0)\n"
            "  --samples N     rollouts per task (default 4)     --seed S   sampling seed (default 1)\n"
            "  --limit N       first N tasks of each split only   --kv-slots N  rollouts decoded at once\n"
            "  --manifest PATH the pool's validation manifest (default POOL.manifest.json)\n"
            "  --json          print the JSON report instead of the table\n"
            "exit status: 0 promote, 1 reject, 2 usage, configuration or I/O error\n");
}

static int parse_real(const char *flag, const char *v, double lo, double hi, double *out) {
    char *end;
    double x = strtod(v, &end);
    if (end == v || *end || !isfinite(x) || x < lo || x > hi) {
        fprintf(stderr, "rlvr gate: %s wants a number in %g..%g, got \"%s\"\n", flag, lo, hi, v);
        return -1;
    }
    *out = x;
    return 0;
}

static int parse_value(gate_args *a, const char *flag, const char *v) {
    const char **strings[] = {&a->candidate, &a->baseline, &a->pool, &a->manifest, &a->config,
                              &a->promote,   &a->report,   &a->family, &a->regression};
    const char *names[] = {"--candidate", "--baseline", "--pool",   "--manifest",  "--config",
                           "--promote",   "--report",   "--family", "--regression"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(flag, names[i]) == 0) {
            if (!v[0] && strcmp(flag, "--regression") != 0) { /* --regression "": no regression check */
                fprintf(stderr, "rlvr gate: %s wants a value, got \"\"\n", flag);
                return -1;
            }
            *strings[i] = v;
            return 0;
        }
    if (strcmp(flag, "--split") == 0) {
        a->target_split_set = true;
        if (rlvr_split_parse(v, &a->target_split) == 0) return 0;
        fprintf(stderr, "rlvr gate: --split: %s\n", rlvr_error_last());
        return -1;
    }
    if (strcmp(flag, "--tolerance") == 0) return parse_real(flag, v, -1, 1, &a->tolerance);
    if (strcmp(flag, "--regression-tolerance") == 0) return parse_real(flag, v, -1, 1, &a->regression_tolerance);
    if (strcmp(flag, "--compliance") == 0) return parse_real(flag, v, 0, 1, &a->compliance);
    if (strcmp(flag, "--samples") == 0) return rlvr_cmd_parse_int("gate", flag, v, 1, 1 << 20, &a->samples);
    if (strcmp(flag, "--limit") == 0) return rlvr_cmd_parse_int("gate", flag, v, 1, INT32_MAX, &a->limit);
    if (strcmp(flag, "--seed") == 0) return rlvr_cmd_parse_int("gate", flag, v, 0, INT64_MAX, &a->seed);
    if (strcmp(flag, "--kv-slots") == 0) return rlvr_cmd_parse_int("gate", flag, v, 1, 4096, &a->kv_slots);
    fprintf(stderr, "rlvr gate: unknown option %s\n", flag);
    return -1;
}

static int parse(gate_args *a, int argc, char **argv) {
    memset(a, 0, sizeof *a);
    a->target_split = RLVR_SPLIT_EVAL;
    a->tolerance = a->regression_tolerance = a->compliance = NAN;
    a->samples = a->limit = a->seed = a->kv_slots = -1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) a->json = true;
        else if (i + 1 >= argc) {
            fprintf(stderr, "rlvr gate: %s needs a value\n", argv[i]);
            return -1;
        } else if (parse_value(a, argv[i], argv[i + 1]) < 0) return -1;
        else i++;
    }
    if (!a->candidate || !a->baseline) {
        fprintf(stderr, "rlvr gate: --candidate and --baseline are required\n");
        return -1;
    }
    return 0;
}

/* ---- setting up ---------------------------------------------------------------------------- */

typedef struct {
    rlvr_config *cfg;
    rlvr_tokenizer *cand_tok, *base_tok; /* each checkpoint's own */
    rlvr_model *cand_model, *base_model;
    rlvr_checkpoint_info cand_info, base_info;
    char candidate[PATH_MAX], baseline[PATH_MAX], pool_path[PATH_MAX];
    rlvr_task_pool *pool;
    rlvr_pool_manifest *manifest;
    rlvr_gate_options opt;
    rlvr_gate_split splits[RLVR_SPLIT_COUNT];
    rlvr_eval_result *results[RLVR_SPLIT_COUNT][2]; /* [split][0 base, 1 cand] */
    size_t n_splits;
    rlvr_gate_report *report;
    char *json;
} gate_state;

/* The absolute path when it resolves (what `promoted` names), else as given. */
static void absolute(char *out, size_t cap, const char *path) {
    char buf[PATH_MAX];
    snprintf(out, cap, "%s", realpath(path, buf) ? buf : path);
}

/* [gate] from the configuration, then the flags over it. */
static int gate_options(gate_state *st, const gate_args *a) {
    rlvr_gate_options *o = &st->opt;
    rlvr_gate_options_default(o);
    if (st->cfg) RLVR_TRY(rlvr_gate_options_from_config(o, st->cfg));
    if (a->regression && rlvr_gate_parse_checks(o, a->regression) < 0)
        return rlvr_error_wrap(RLVR_ECONFIG, "--regression");
    if (!isnan(a->tolerance)) o->tolerance = a->tolerance;
    if (!isnan(a->regression_tolerance)) o->regression_tolerance = a->regression_tolerance;
    if (!isnan(a->compliance)) o->compliance_min = a->compliance;
    if (a->samples > 0) o->samples = (int32_t)a->samples;
    if (a->seed >= 0) o->seed = (uint64_t)a->seed;
    if (a->limit > 0) o->limit = a->limit;
    if (a->target_split_set) o->target_split = a->target_split;
    if (a->family) snprintf(o->target_family, sizeof o->target_family, "%s", a->family);
    return 0;
}

/* --pool, else the configuration's [tasks] pool, else the run's built-in
 * pool RUNDIR/pool (train/run.h). */
static int pool_path(gate_state *st, const gate_args *a) {
    rlvr_tasks_config tasks = {.pool = ""};
    if (st->cfg) RLVR_TRY(rlvr_tasks_config_read(st->cfg, &tasks));
    const char *configured = tasks.pool;
    if (a->pool) snprintf(st->pool_path, sizeof st->pool_path, "%s", a->pool);
    else if (configured[0]) snprintf(st->pool_path, sizeof st->pool_path, "%s", configured);
    else if (a->promote) RLVR_TRY(rlvr_run_path(st->pool_path, sizeof st->pool_path, a->promote, "pool"));
    else
        return RLVR_FAIL(RLVR_ECONFIG, "no task pool: give --pool, a configuration with [tasks] pool, or "
                                       "--promote RUNDIR (its built-in pool RUNDIR/pool)");
    return 0;
}

static int load(gate_state *st, const gate_args *a) {
    if (a->config) RLVR_TRY(rlvr_config_load(&st->cfg, a->config, rlvr_all_config_schemas));
    RLVR_TRY(rlvr_evaljob_load_checkpoint(a->candidate, &st->cand_tok, &st->cand_model, &st->cand_info,
                                          a->config ? NULL : &st->cfg));
    RLVR_TRY(rlvr_evaljob_load_checkpoint(a->baseline, &st->base_tok, &st->base_model, &st->base_info, NULL));
    absolute(st->candidate, sizeof st->candidate, a->candidate);
    absolute(st->baseline, sizeof st->baseline, a->baseline);
    RLVR_TRY(gate_options(st, a));
    RLVR_TRY(pool_path(st, a));
    return rlvr_evaljob_load_pool(&st->pool, &st->manifest, st->pool_path, a->manifest, false);
}

/* ---- evaluating ------------------------------------------------------------------------------ */

static void add_split(gate_state *st, rlvr_split s) {
    for (size_t i = 0; i < st->n_splits; i++)
        if (st->splits[i].split == s) return;
    st->splits[st->n_splits++] = (rlvr_gate_split){.split = s};
}

/* Both checkpoints on the usable tasks of one split; a split the pool has no
 * task of is left without results ("no tasks"). */
static int evaluate_split(gate_state *st, rlvr_gate_split *s, const rlvr_eval_options *o, const gate_args *a) {
    if (rlvr_task_pool_count(st->pool, s->split) == 0) {
        fprintf(stderr, "gate: the pool has no %s task\n", rlvr_split_name(s->split));
        return 0;
    }
    rlvr_eval_task *tasks = NULL;
    size_t n = 0;
    RLVR_TRY(rlvr_eval_tasks_from_pool(&tasks, &n, st->pool, st->manifest, &s->split, (size_t)st->opt.limit));
    rlvr_eval_result **r = st->results[s - st->splits];
    const rlvr_model *models[2] = {st->base_model, st->cand_model};
    const rlvr_tokenizer *toks[2] = {st->base_tok, st->cand_tok};
    const char *names[2] = {a->baseline, a->candidate};
    int rc = 0;
    for (int i = 0; i < 2 && rc == 0; i++) {
        fprintf(stderr, "gate: %s on %zu %s tasks x %d samples\n", names[i], n, rlvr_split_name(s->split),
                o->samples);
        *(double *)o->progress_arg = 0;
        rc = rlvr_eval_run(&r[i], models[i], toks[i], tasks, n, o);
    }
    free(tasks);
    s->base = r[0];
    s->cand = r[1];
    return rc;
}

static bool pool_has(const rlvr_task_pool *pool, rlvr_split split, const char *family) {
    for (size_t i = 0; i < rlvr_task_pool_size(pool); i++) {
        const rlvr_task *t = rlvr_task_pool_get(pool, i);
        if (t->split == split && (!family[0] || strcmp(t->family, family) == 0)) return true;
    }
    return false;
}

/* Refuses, before anything is evaluated, a target or a named regression
 * family the pool has no task of (rlvr_gate_decide would refuse it after). */
static int check_pool_covers(const gate_state *st) {
    const rlvr_gate_options *o = &st->opt;
    if (!pool_has(st->pool, o->target_split, o->target_family))
        return RLVR_FAIL(RLVR_ECONFIG, "%s has no %s task%s%s to evaluate the target on", st->pool_path,
                         rlvr_split_name(o->target_split), o->target_family[0] ? " of family " : "",
                         o->target_family);
    for (size_t i = 0; i < o->n_checks; i++)
        if (o->checks[i].family[0] && !pool_has(st->pool, o->checks[i].split, o->checks[i].family))
            return RLVR_FAIL(RLVR_ECONFIG, "%s has no %s task of family %s (regression check %s:%s)", st->pool_path,
                             rlvr_split_name(o->checks[i].split), o->checks[i].family,
                             rlvr_split_name(o->checks[i].split), o->checks[i].family);
    return 0;
}

static int evaluate(gate_state *st, const gate_args *a) {
    RLVR_TRY(check_pool_covers(st));
    add_split(st, st->opt.target_split);
    for (size_t i = 0; i < st->opt.n_checks; i++) add_split(st, st->opt.checks[i].split);
    rlvr_eval_options o;
    double last = 0;
    RLVR_TRY(rlvr_evaljob_options(&o, st->cfg, st->opt.samples, st->opt.seed, &last));
    if (a->kv_slots > 0) o.sampler.kv_slots = (int32_t)a->kv_slots;
    for (size_t i = 0; i < st->n_splits; i++) RLVR_TRY(evaluate_split(st, &st->splits[i], &o, a));
    return 0;
}

static int decide(gate_state *st) {
    RLVR_TRY(rlvr_gate_decide(&st->report, &st->opt, st->splits, st->n_splits));
    rlvr_gate_report *r = st->report;
    r->candidate = st->candidate;
    r->baseline = st->baseline;
    r->candidate_step = st->cand_info.step;
    r->candidate_version = st->cand_info.policy_version;
    r->time_unix = rlvr_run_unix_time();
    return rlvr_gate_report_to_json(r, &st->opt, st->splits, st->n_splits, 2, &st->json);
}

/* ---- the HDF5 report ------------------------------------------------------------------------- */

static double smallest_low(const rlvr_gate_report *r) {
    double m = NAN;
    for (size_t i = 0; i < r->n_regression; i++)
        if (isnan(m) || !(r->regression[i].low >= m)) m = r->regression[i].low;
    return m;
}

static rlvr_gate_file_test file_test(const rlvr_gate_test *t, const char *criterion) {
    return (rlvr_gate_file_test){.criterion = criterion, .split = rlvr_split_name(t->split), .family = t->family,
                                 .n_tasks = t->n_tasks, .unpaired = t->unpaired, .base_pass1 = t->base_pass1,
                                 .cand_pass1 = t->cand_pass1, .mean_diff = t->mean_diff, .low = t->low,
                                 .high = t->high, .tolerance = t->tolerance, .passed = t->passed};
}

static size_t count_estimates(const gate_state *st) {
    size_t n = 0;
    for (size_t s = 0; s < st->n_splits; s++)
        for (int c = 0; c < 2; c++) {
            const rlvr_eval_result *r = st->results[s][c];
            for (size_t g = 0; r && g < r->n_groups; g++) n += 2 * (size_t)r->groups[g].n_k;
        }
    return n;
}

/* pass@k and pass^k of every family of every split, both checkpoints. */
static void fill_estimates(const gate_state *st, rlvr_gate_file_estimate *e) {
    static const char *const who[2] = {"baseline", "candidate"};
    size_t n = 0;
    for (size_t s = 0; s < st->n_splits; s++)
        for (int c = 0; c < 2; c++) {
            const rlvr_eval_result *r = st->results[s][c];
            for (size_t g = 0; r && g < r->n_groups; g++) {
                const rlvr_eval_group *grp = &r->groups[g];
                for (int m = 0; m < 2; m++)
                    for (int32_t k = 0; k < grp->n_k; k++) {
                        const rlvr_eval_estimate *v = m == 0 ? &grp->pass_at[k] : &grp->pass_hat[k];
                        e[n++] = (rlvr_gate_file_estimate){.checkpoint = who[c],
                                                           .split = rlvr_split_name(st->splits[s].split),
                                                           .family = grp->name, .metric = m == 0 ? "pass@k" : "pass^k",
                                                           .k = grp->k[k], .tasks = grp->k_tasks[k],
                                                           .value = v->value, .low = v->low, .high = v->high};
                    }
            }
        }
}

static int write_h5(const gate_state *st, const char *path) {
    const rlvr_gate_report *r = st->report;
    rlvr_gate_file_criterion criteria[3] = {
        {"target", r->target.passed, r->target.low, -r->target.tolerance},
        {"regression", r->regression_passed, smallest_low(r), -r->regression_tolerance},
        {"compliance", r->compliance_passed, r->compliance, r->compliance_min},
    };
    size_t n_tests = 1 + r->n_regression, n_est = count_estimates(st);
    rlvr_gate_file_test *tests = calloc(n_tests, sizeof *tests);
    rlvr_gate_file_estimate *est = calloc(n_est ? n_est : 1, sizeof *est);
    if (!tests || !est) {
        free(tests);
        free(est);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    }
    tests[0] = file_test(&r->target, "target");
    for (size_t i = 0; i < r->n_regression; i++) tests[1 + i] = file_test(&r->regression[i], "regression");
    fill_estimates(st, est);
    rlvr_gate_file f = {.candidate = r->candidate, .baseline = r->baseline, .candidate_step = r->candidate_step,
                        .candidate_version = r->candidate_version, .passed = r->passed, .samples = st->opt.samples,
                        .seed = st->opt.seed, .time_unix = r->time_unix, .criteria = criteria, .n_criteria = 3,
                        .tests = tests, .n_tests = n_tests, .estimates = est, .n_estimates = n_est,
                        .json = st->json};
    int rc = rlvr_gate_report_write(path, &f);
    free(tests);
    free(est);
    return rc;
}

static int write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (!f) return rlvr_error_errno_at(__FILE__, __LINE__, "opening %s", path);
    bool ok = fputs(text, f) >= 0 && fputc('\n', f) != EOF;
    if (fclose(f) != 0) ok = false;
    return ok ? 0 : rlvr_error_errno_at(__FILE__, __LINE__, "writing %s", path);
}

static int write_reports(const gate_state *st, const char *prefix) {
    char path[PATH_MAX + 8];
    if ((size_t)snprintf(path, sizeof path, "%s.json", prefix) >= sizeof path)
        return RLVR_FAIL(RLVR_ELIMIT, "report path too long: %s", prefix);
    RLVR_TRY(write_text(path, st->json));
    snprintf(path, sizeof path, "%s.h5", prefix);
    RLVR_TRY(write_h5(st, path));
    fprintf(stderr, "gate: report %s.json, %s.h5\n", prefix, prefix);
    return 0;
}

/* RUNDIR/gate/<candidate file name without .h5>. */
static int run_report_prefix(char *out, size_t cap, const char *run_dir, const char *candidate) {
    char dir[PATH_MAX];
    RLVR_TRY(rlvr_run_path(dir, sizeof dir, run_dir, "gate"));
    RLVR_TRY(rlvr_mkdir_p(dir, 0755));
    const char *base = strrchr(candidate, '/');
    base = base ? base + 1 : candidate;
    size_t len = strlen(base);
    if (len > 3 && strcmp(base + len - 3, ".h5") == 0) len -= 3;
    if ((size_t)snprintf(out, cap, "%s/%.*s", dir, (int)len, base) >= cap)
        return RLVR_FAIL(RLVR_ELIMIT, "path too long: %s/%s", dir, base);
    return 0;
}

/* Marks the candidate for retention (step_N.h5.keep, io/checkpoint.h) when
 * it is a checkpoint of a run directory under its own name, so that the
 * checkpoint `promoted` names is never deleted by a later save. */
static int keep_candidate(const gate_state *st) {
    char dir[PATH_MAX], expected[PATH_MAX + 64], real[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", st->candidate);
    char *slash = strrchr(dir, '/');
    if (!slash || st->cand_info.step < 0) return 0;
    *slash = '\0';
    if (rlvr_checkpoint_path(expected, sizeof expected, dir[0] ? dir : "/", st->cand_info.step) < 0) return 0;
    if (!realpath(expected, real) || strcmp(real, st->candidate) != 0) return 0; /* not named step_N.h5 */
    return rlvr_checkpoint_mark(dir[0] ? dir : "/", st->cand_info.step);
}

static int publish(const gate_state *st, const gate_args *a) {
    if (a->report) RLVR_TRY(write_reports(st, a->report));
    if (!a->promote) return 0;
    char prefix[PATH_MAX];
    RLVR_TRY(run_report_prefix(prefix, sizeof prefix, a->promote, a->candidate));
    RLVR_TRY(write_reports(st, prefix));
    if (!st->report->passed) return 0; /* `promoted` keeps naming the last promoted checkpoint */
    RLVR_TRY(keep_candidate(st));
    RLVR_TRY(rlvr_gate_write_promoted(a->promote, st->candidate));
    fprintf(stderr, "gate: %s/promoted now names %s\n", a->promote, st->candidate);
    return 0;
}

/* ---- the table ------------------------------------------------------------------------------- */

static const char *verdict(bool passed) { return passed ? "PASS" : "FAIL"; }

static void print_test(const char *criterion, const rlvr_gate_test *t) {
    printf("  %-11s %s  %s/%s: ", criterion, verdict(t->passed), rlvr_split_name(t->split), t->family);
    if (t->n_tasks == 0) {
        printf("no task scored by both checkpoints\n");
        return;
    }
    printf("%d tasks, pass@1 %.3f -> %.3f, diff %+.3f [%+.3f, %+.3f], needs low >= %+.3f\n", t->n_tasks,
           t->base_pass1, t->cand_pass1, t->mean_diff, t->low, t->high, -t->tolerance);
}

static void fmt_interval(char *buf, size_t cap, const rlvr_eval_estimate *e) {
    if (isnan(e->value)) snprintf(buf, cap, "-");
    else snprintf(buf, cap, "%.3f [%.3f, %.3f]", e->value, e->low, e->high);
}

/* One family of one split: pass@1 with its interval, pass@n and pass^n of both. */
static void print_family(const char *split, const rlvr_eval_group *b, const rlvr_eval_group *c) {
    char name[96], p1[2][64], at[2][16], hat[2][16];
    const rlvr_eval_group *g[2] = {b, c};
    snprintf(name, sizeof name, "%s/%s", split, b->name);
    for (int i = 0; i < 2; i++) {
        int32_t last = g[i]->n_k - 1;
        fmt_interval(p1[i], sizeof p1[i], &g[i]->pass_at[0]);
        snprintf(at[i], sizeof at[i], isnan(g[i]->pass_at[last].value) ? "-" : "%.3f", g[i]->pass_at[last].value);
        snprintf(hat[i], sizeof hat[i], isnan(g[i]->pass_hat[last].value) ? "-" : "%.3f", g[i]->pass_hat[last].value);
    }
    printf("  %-24s %5d  %-24s %7s %7s  %-24s %7s %7s\n", name, b->n_tasks, p1[0], at[0], hat[0], p1[1], at[1],
           hat[1]);
}

static void print_estimates(const gate_state *st) {
    int64_t n = st->opt.samples;
    char h_at[32], h_hat[32];
    snprintf(h_at, sizeof h_at, "pass@%lld", (long long)n);
    snprintf(h_hat, sizeof h_hat, "pass^%lld", (long long)n);
    printf("\n  %-24s %5s  %-24s %7s %7s  %-24s %7s %7s\n", "split/family", "tasks", "baseline pass@1 [95% CI]", h_at,
           h_hat, "candidate pass@1 [95% CI]", h_at, h_hat);
    for (size_t s = 0; s < st->n_splits; s++) {
        const rlvr_eval_result *b = st->results[s][0], *c = st->results[s][1];
        const char *split = rlvr_split_name(st->splits[s].split);
        if (!b || !c) {
            printf("  %-24s %5d  no tasks\n", split, 0);
            continue;
        }
        for (size_t g = 1; g < b->n_groups; g++) {
            const rlvr_eval_group *cg = rlvr_eval_result_group(c, b->groups[g].name);
            if (cg) print_family(split, &b->groups[g], cg);
        }
        print_family(split, &b->groups[0], &c->groups[0]);
    }
}

static void print_table(const gate_state *st) {
    const rlvr_gate_report *r = st->report;
    printf("gate: candidate %s (step %lld, policy version %lld)\n      baseline  %s (step %lld)\n"
           "      %d samples per task, seed %llu, %.0f %% paired bootstrap intervals (%d resamples)\n\n",
           r->candidate, (long long)r->candidate_step, (long long)r->candidate_version, r->baseline,
           (long long)st->base_info.step, st->opt.samples, (unsigned long long)st->opt.seed,
           100 * st->opt.confidence, st->opt.resamples);
    print_test("target", &r->target);
    if (r->regression_no_tasks) printf("  %-11s %s  no tasks (the pool has no regression task to check)\n",
                                       "regression", verdict(r->regression_passed));
    for (size_t i = 0; i < r->n_regression; i++) print_test("regression", &r->regression[i]);
    printf("  %-11s %s  %.4f (%lld of %lld tool calls parsed), needs >= %.4f\n", "compliance",
           verdict(r->compliance_passed), r->compliance, (long long)r->calls_parsed, (long long)r->calls,
           r->compliance_min);
    print_estimates(st);
}

static void print_decision(FILE *out, const rlvr_gate_report *r) {
    char failed[64];
    rlvr_gate_failed_criteria(r, failed, sizeof failed);
    if (r->passed) fprintf(out, "gate: PROMOTE\n");
    else fprintf(out, "gate: REJECT (%s)\n", failed);
}

/* ---- the command ----------------------------------------------------------------------------- */

static void state_free(gate_state *st) {
    for (size_t s = 0; s < RLVR_SPLIT_COUNT; s++)
        for (int i = 0; i < 2; i++) rlvr_eval_result_free(st->results[s][i]);
    rlvr_gate_report_free(st->report);
    free(st->json);
    rlvr_model_free(st->cand_model);
    rlvr_model_free(st->base_model);
    rlvr_config_free(st->cfg);
    rlvr_tokenizer_free(st->cand_tok);
    rlvr_tokenizer_free(st->base_tok);
    rlvr_pool_manifest_free(st->manifest);
    rlvr_task_pool_free(st->pool);
}

int rlvr_cmd_gate(int argc, char **argv) {
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0)) {
        usage(stdout);
        return RLVR_EXIT_OK;
    }
    gate_args a;
    if (parse(&a, argc, argv) < 0) {
        usage(stderr);
        return RLVR_EXIT_USAGE;
    }
    gate_state *st = calloc(1, sizeof *st);
    if (!st) {
        fprintf(stderr, "rlvr gate: error: out of memory\n");
        return RLVR_EXIT_USAGE;
    }
    int rc = load(st, &a);
    if (rc == 0) rc = evaluate(st, &a);
    if (rc == 0) rc = decide(st);
    if (rc == 0) rc = publish(st, &a);
    int status = RLVR_EXIT_USAGE; /* any error: never promote, never read as a plain reject */
    if (rc < 0) {
        const char *msg = rlvr_error_last();
        fprintf(stderr, "rlvr gate: error: %s\n", msg[0] ? msg : rlvr_error_name(rc));
    } else {
        if (a.json) printf("%s\n", st->json);
        else print_table(st);
        print_decision(a.json ? stderr : stdout, st->report);
        status = st->report->passed ? RLVR_EXIT_OK : RLVR_EXIT_FAILURE;
    }
    state_free(st);
    return status;
}
