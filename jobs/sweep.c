/* jobs/sweep.c — `rlvr sweep`: offline evaluation of many checkpoints on
 * the held-out tasks of a pool, split into cells (checkpoint × task shard)
 * that run as a Slurm job array (or one after another with --local), and an
 * aggregation into pass@k per checkpoint and family (eval/sweep.h,
 * docs/EVAL.md "Sweeps"). Parse, call, print.
 *
 *   rlvr sweep --checkpoints GLOB --pool POOL --samples N ...   plan + run/submit
 *   rlvr sweep cell DIR [INDEX]                                 one cell
 *   rlvr sweep aggregate DIR                                    the tables */
#include "core/error.h"
#include "eval/sweep.h"
#include "jobs/args.h"
#include "jobs/commands.h"
#include "jobs/evalcommon.h"
#include "jobs/schemas.h"

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    rlvr_sweep_spec spec;
    rlvr_sweep_submit_options submit;
    const char *out;
    bool local;
} sweep_args;

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

static int parse(sweep_args *a, int argc, char **argv) {
    *a = (sweep_args){.spec = {.split = "eval", .shards = 1, .seed = 1}, .submit = {.max_parallel = 4, .cpus = 1}};
    int64_t seed = 1;
    const rlvr_opt opts[] = {
        RLVR_OPT("--checkpoints", RLVR_OPT_STRING, &a->spec.checkpoints, "GLOB", .required = true),
        RLVR_OPT("--pool", RLVR_OPT_STRING, &a->spec.pool, "POOL", .required = true),
        RLVR_OPT("--samples", RLVR_OPT_INT, &a->spec.samples, "N", .required = true, .min = 1, .max = 1 << 20),
        RLVR_OPT("--shards", RLVR_OPT_INT, &a->spec.shards, "S", .min = 1, .max = 100000),
        RLVR_OPT("--out", RLVR_OPT_STRING, &a->out, "DIR"),
        RLVR_OPT("--local", RLVR_OPT_FLAG, &a->local, NULL),
        RLVR_OPT("--max-parallel", RLVR_OPT_INT, &a->submit.max_parallel, "T", .min = 1, .max = 100000),
        RLVR_OPT("--split", RLVR_OPT_STRING, &a->spec.split, "S"),
        RLVR_OPT("--seed", RLVR_OPT_INT, &seed, "S", .min = 0, .max = INT64_MAX),
        RLVR_OPT("--config", RLVR_OPT_STRING, &a->spec.config, "FILE"),
        RLVR_OPT("--cpus", RLVR_OPT_INT, &a->submit.cpus, "C", .min = 1, .max = 4096),
        RLVR_OPT("--dry-run", RLVR_OPT_FLAG, &a->submit.dry_run, NULL),
        {0},
    };
    int rc = rlvr_args_parse("sweep", opts, usage, argc, argv);
    if (rc != RLVR_ARGS_CONTINUE) return rc;
    a->spec.seed = (uint64_t)seed;
    rlvr_split s;
    if (strcmp(a->spec.split, "all") != 0 && rlvr_split_parse(a->spec.split, &s) < 0)
        return rlvr_args_error("sweep", usage, "--split: %s", rlvr_error_last());
    if (a->local && a->submit.dry_run)
        return rlvr_args_error("sweep", usage, "--dry-run is for Slurm submissions; leave out --local");
    return RLVR_ARGS_CONTINUE;
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
static void print_table(const rlvr_sweep_plan *p, const rlvr_sweep_table *t, const char *dir) {
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

static int aggregate(const rlvr_sweep_plan *p, const char *dir) {
    rlvr_sweep_table t;
    RLVR_TRY(rlvr_sweep_aggregate(p, dir, &t));
    print_table(p, &t, dir);
    rlvr_sweep_table_free(&t);
    return 0;
}

static int sweep_main(const sweep_args *a) {
    rlvr_sweep_plan p;
    char dir[PATH_MAX];
    double last;
    rlvr_evaljob_hooks hooks = rlvr_cmd_eval_hooks(&last), to_stdout = rlvr_cmd_eval_stdout_hooks();
    int rc = rlvr_sweep_plan_make(&p, &a->spec);
    if (rc == 0) rc = rlvr_sweep_dir(dir, &p, a->out);
    if (rc == 0) rc = rlvr_sweep_plan_write(&p, dir);
    if (rc == 0)
        fprintf(stderr, "sweep: %zu checkpoints (steps %lld..%lld) x %zu shards of %zu %s tasks = %zu cells in %s\n",
                p.n_ckpts, (long long)p.ckpts[0].step, (long long)p.ckpts[p.n_ckpts - 1].step, p.n_shards,
                p.n_tasks, p.split, rlvr_sweep_cells(&p), dir);
    size_t *missing = NULL, n_missing = 0;
    if (rc == 0) rc = rlvr_sweep_find_missing(&p, dir, &missing, &n_missing, &hooks);
    if (rc == 0 && a->local) {
        rc = rlvr_sweep_run_cells(&p, dir, missing, n_missing, rlvr_all_config_schemas, &hooks);
        if (rc == 0) rc = aggregate(&p, dir);
    } else if (rc == 0) {
        rc = rlvr_sweep_submit(&p, dir, missing, n_missing, &a->submit, &to_stdout);
    }
    free(missing);
    rlvr_sweep_plan_free(&p);
    return rc;
}

static void cell_usage(FILE *out) {
    fprintf(out, "usage: rlvr sweep cell DIR [INDEX]\n"
                 "  evaluates cell INDEX of the sweep in DIR (default: $SLURM_ARRAY_TASK_ID, as an array task)\n");
}

static int cell_main(int argc, char **argv) {
    const char *dir = NULL, *index_text = getenv("SLURM_ARRAY_TASK_ID");
    const rlvr_opt opts[] = {
        RLVR_OPT(NULL, RLVR_OPT_STRING, &dir, "DIR", .required = true),
        RLVR_OPT(NULL, RLVR_OPT_STRING, &index_text, "INDEX"),
        {0},
    };
    int parsed = rlvr_args_parse("sweep cell", opts, cell_usage, argc - 1, argv + 1);
    if (parsed != RLVR_ARGS_CONTINUE) return parsed;
    if (!index_text) return rlvr_args_error("sweep cell", cell_usage, "missing INDEX (or run it as a Slurm array task)");
    int64_t index = 0;
    if (rlvr_cmd_parse_int("sweep cell", "INDEX", index_text, 0, INT32_MAX, &index) < 0) return RLVR_EXIT_USAGE;
    double last;
    rlvr_evaljob_hooks hooks = rlvr_cmd_eval_hooks(&last);
    int rc = rlvr_sweep_run_cell(dir, index, rlvr_all_config_schemas, &hooks);
    return rc < 0 ? rlvr_cmd_fail("sweep cell", rc) : RLVR_EXIT_OK;
}

static void aggregate_usage(FILE *out) {
    fprintf(out, "usage: rlvr sweep aggregate DIR\n"
                 "  writes DIR/sweep.h5 and DIR/sweep.csv from the finished cells and prints the table\n");
}

static int aggregate_main(int argc, char **argv) {
    const char *sweep_dir = NULL;
    const rlvr_opt opts[] = {RLVR_OPT(NULL, RLVR_OPT_STRING, &sweep_dir, "DIR", .required = true), {0}};
    int parsed = rlvr_args_parse("sweep aggregate", opts, aggregate_usage, argc - 1, argv + 1);
    if (parsed != RLVR_ARGS_CONTINUE) return parsed;
    rlvr_sweep_plan p;
    rlvr_sweep_table t;
    char dir[PATH_MAX];
    int rc = rlvr_sweep_aggregate_dir(sweep_dir, &p, dir, &t);
    if (rc == 0) print_table(&p, &t, dir);
    rlvr_sweep_table_free(&t);
    rlvr_sweep_plan_free(&p);
    return rc < 0 ? rlvr_cmd_fail("sweep aggregate", rc) : RLVR_EXIT_OK;
}

int rlvr_cmd_sweep(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "cell") == 0) return cell_main(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "aggregate") == 0) return aggregate_main(argc, argv);
    sweep_args a;
    int parsed = parse(&a, argc, argv);
    if (parsed != RLVR_ARGS_CONTINUE) return parsed;
    int rc = sweep_main(&a);
    return rc < 0 ? rlvr_cmd_fail("sweep", rc) : RLVR_EXIT_OK;
}
