/* jobs/gate.c — `rlvr gate --candidate C --baseline B --pool POOL ...`: the
 * release gate (eval/gate_run.h, docs/EVAL.md "Release gate"). Evaluates both
 * checkpoints with the same seeds on the held-out splits the reward never
 * saw, decides the three criteria, writes the report (JSON and HDF5) and,
 * with --promote RUNDIR, marks a passing candidate in RUNDIR/promoted.
 * Exit 0: promote; 1: reject; 2: usage, configuration or I/O error.
 * Parse, call, print. */
#include "core/error.h"
#include "eval/gate_run.h"
#include "jobs/args.h"
#include "jobs/commands.h"
#include "jobs/evalcommon.h"
#include "jobs/schemas.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

typedef struct {
    rlvr_gate_run_spec spec;
    bool json;
} gate_args;

/* Every value but --regression must be non-empty (--regression "": no regression check). */
static int check_nonempty(const rlvr_opt *opts) {
    for (const rlvr_opt *o = opts; o->kind != RLVR_OPT_END; o++) {
        const char *v = o->kind == RLVR_OPT_STRING ? *(const char **)o->out : NULL;
        if (v && !v[0] && strcmp(o->name, "--regression") != 0)
            return rlvr_args_error("gate", usage, "%s wants a value, got \"\"", o->name);
    }
    return RLVR_ARGS_CONTINUE;
}

static int parse(gate_args *a, int argc, char **argv) {
    rlvr_gate_run_spec *s = &a->spec;
    *s = (rlvr_gate_run_spec){.target_split = RLVR_SPLIT_EVAL, .tolerance = NAN, .regression_tolerance = NAN,
                              .compliance = NAN, .samples = -1, .limit = -1, .seed = -1, .kv_slots = -1,
                              .schemas = rlvr_all_config_schemas};
    a->json = false;
    const char *split = NULL;
    const rlvr_opt opts[] = {
        RLVR_OPT("--candidate", RLVR_OPT_STRING, &s->candidate, "C", .required = true),
        RLVR_OPT("--baseline", RLVR_OPT_STRING, &s->baseline, "B", .required = true),
        RLVR_OPT("--pool", RLVR_OPT_STRING, &s->pool, "POOL"),
        RLVR_OPT("--manifest", RLVR_OPT_STRING, &s->manifest, "PATH"),
        RLVR_OPT("--config", RLVR_OPT_STRING, &s->config, "FILE"),
        RLVR_OPT("--promote", RLVR_OPT_STRING, &s->promote, "DIR"),
        RLVR_OPT("--report", RLVR_OPT_STRING, &s->report, "PREFIX"),
        RLVR_OPT("--family", RLVR_OPT_STRING, &s->family, "F"),
        RLVR_OPT("--regression", RLVR_OPT_STRING, &s->regression, "L"),
        RLVR_OPT("--split", RLVR_OPT_STRING, &split, "S"),
        RLVR_OPT("--tolerance", RLVR_OPT_DOUBLE, &s->tolerance, "T", .dmin = -1, .dmax = 1),
        RLVR_OPT("--regression-tolerance", RLVR_OPT_DOUBLE, &s->regression_tolerance, "T", .dmin = -1, .dmax = 1),
        RLVR_OPT("--compliance", RLVR_OPT_DOUBLE, &s->compliance, "P", .dmin = 0, .dmax = 1),
        RLVR_OPT("--samples", RLVR_OPT_INT, &s->samples, "N", .min = 1, .max = 1 << 20),
        RLVR_OPT("--limit", RLVR_OPT_INT, &s->limit, "N", .min = 1, .max = INT32_MAX),
        RLVR_OPT("--seed", RLVR_OPT_INT, &s->seed, "S", .min = 0, .max = INT64_MAX),
        RLVR_OPT("--kv-slots", RLVR_OPT_INT, &s->kv_slots, "N", .min = 1, .max = 4096),
        RLVR_OPT("--json", RLVR_OPT_FLAG, &a->json, NULL),
        {0},
    };
    int rc = rlvr_args_parse("gate", opts, usage, argc, argv);
    if (rc == RLVR_ARGS_CONTINUE) rc = check_nonempty(opts);
    if (rc != RLVR_ARGS_CONTINUE) return rc;
    s->target_split_set = split != NULL;
    if (split && rlvr_split_parse(split, &s->target_split) < 0)
        return rlvr_args_error("gate", usage, "--split: %s", rlvr_error_last());
    return RLVR_ARGS_CONTINUE;
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

static void print_estimates(const rlvr_gate_run *g) {
    int64_t n = g->opt.samples;
    char h_at[32], h_hat[32];
    snprintf(h_at, sizeof h_at, "pass@%lld", (long long)n);
    snprintf(h_hat, sizeof h_hat, "pass^%lld", (long long)n);
    printf("\n  %-24s %5s  %-24s %7s %7s  %-24s %7s %7s\n", "split/family", "tasks", "baseline pass@1 [95% CI]", h_at,
           h_hat, "candidate pass@1 [95% CI]", h_at, h_hat);
    for (size_t s = 0; s < g->n_splits; s++) {
        const rlvr_eval_result *b = g->results[s][0], *c = g->results[s][1];
        const char *split = rlvr_split_name(g->splits[s].split);
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

static void print_table(const rlvr_gate_run *g) {
    const rlvr_gate_report *r = g->report;
    printf("gate: candidate %s (step %lld, policy version %lld)\n      baseline  %s (step %lld)\n"
           "      %d samples per task, seed %llu, %.0f %% paired bootstrap intervals (%d resamples)\n\n",
           r->candidate, (long long)r->candidate_step, (long long)r->candidate_version, r->baseline,
           (long long)g->base_info.step, g->opt.samples, (unsigned long long)g->opt.seed,
           100 * g->opt.confidence, g->opt.resamples);
    print_test("target", &r->target);
    if (r->regression_no_tasks) printf("  %-11s %s  no tasks (the pool has no regression task to check)\n",
                                       "regression", verdict(r->regression_passed));
    for (size_t i = 0; i < r->n_regression; i++) print_test("regression", &r->regression[i]);
    printf("  %-11s %s  %.4f (%lld of %lld tool calls parsed), needs >= %.4f\n", "compliance",
           verdict(r->compliance_passed), r->compliance, (long long)r->calls_parsed, (long long)r->calls,
           r->compliance_min);
    print_estimates(g);
}

static void print_decision(FILE *out, const rlvr_gate_report *r) {
    char failed[64];
    rlvr_gate_failed_criteria(r, failed, sizeof failed);
    if (r->passed) fprintf(out, "gate: PROMOTE\n");
    else fprintf(out, "gate: REJECT (%s)\n", failed);
}

/* ---- the command ----------------------------------------------------------------------------- */

int rlvr_cmd_gate(int argc, char **argv) {
    gate_args a;
    int parsed = parse(&a, argc, argv);
    if (parsed != RLVR_ARGS_CONTINUE) return parsed;
    double last;
    a.spec.hooks = rlvr_cmd_eval_hooks(&last);
    rlvr_gate_run *g = NULL;
    int rc = rlvr_gate_run_load(&g, &a.spec);
    if (rc == 0) rc = rlvr_gate_run_evaluate(g);
    if (rc == 0) rc = rlvr_gate_run_decide(g);
    if (rc == 0) rc = rlvr_gate_run_publish(g);
    int status = RLVR_EXIT_USAGE; /* any error: never promote, never read as a plain reject */
    if (rc < 0) {
        const char *msg = rlvr_error_last();
        fprintf(stderr, "rlvr gate: error: %s\n", msg[0] ? msg : rlvr_error_name(rc));
    } else {
        if (a.json) printf("%s\n", g->json);
        else print_table(g);
        print_decision(a.json ? stderr : stdout, g->report);
        status = g->report->passed ? RLVR_EXIT_OK : RLVR_EXIT_FAILURE;
    }
    rlvr_gate_run_free(g);
    return status;
}
