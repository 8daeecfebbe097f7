/* jobs/eval.c — `rlvr eval --checkpoint C [--checkpoint C2] --pool POOL ...`:
 * evaluates one or two checkpoints on the held-out tasks of a validated pool
 * (eval/eval.h) and prints a table per checkpoint — pass@1 with its interval,
 * pass@k, pass^k, infra, tool-call compliance, per family — and, for two,
 * the paired difference (second − first) with its interval. --json prints
 * the same as one JSON document; --out writes it to a file. docs/EVAL.md. */
#include "core/config.h"
#include "core/error.h"
#include "core/sys.h"
#include "eval/eval.h"
#include "io/checkpoint.h"
#include "jobs/commands.h"
#include "jobs/evalcommon.h"
#include "jobs/schemas.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *checkpoints[2];
    int n_checkpoints;
    const char *pool, *manifest, *config, *out;
    bool all_splits, unchecked, json;
    rlvr_split split;
    int64_t samples, limit, kv_slots, consensus;
    uint64_t seed;
    double temperature; /* < 0: the configuration's */
} eval_args;

static void usage(FILE *out) {
    fprintf(out,
            "usage: rlvr eval --checkpoint C [--checkpoint C2] --pool POOL [--split eval|train|regression|all]\n"
            "                 [--samples N] [--seed S] [--temperature T] [--limit N] [--kv-slots N]\n"
            "                 [--consensus K] [--config RUN.ini] [--manifest PATH | --unchecked]\n"
            "                 [--json] [--out FILE.json]\n"
            "  --checkpoint C   policy weights (twice: the second is compared with the first)\n"
            "  --pool POOL      task pool (directory or .jsonl), checked with `rlvr tasks check`\n"
            "  --split S        tasks of this split (default eval; all: every split)\n"
            "  --samples N      rollouts per task (default 4); pass@k for k = 1, 2, 4, ... N\n"
            "  --seed S         sampling seed (default 1)\n"
            "  --temperature T  sampling temperature (default: the run's [sampler] temperature)\n"
            "  --limit N        the first N tasks of the split only\n"
            "  --kv-slots N     rollouts decoded at once (default: the run's [sampler] kv_slots)\n"
            "  --consensus K    enclave runs a passing patch needs (default: the run's [enclave])\n"
            "  --config FILE    the run's configuration (default: the one stored in the first checkpoint)\n"
            "  --manifest PATH  the pool's validation manifest (default POOL.manifest.json)\n"
            "  --unchecked      evaluate a pool that was never checked (every task, no quarantine)\n"
            "  --json           print the result as JSON instead of tables\n"
            "  --out FILE       also write the JSON to FILE\n");
}

static int parse_value(eval_args *a, const char *flag, const char *v) {
    int64_t n;
    if (strcmp(flag, "--checkpoint") == 0) {
        if (a->n_checkpoints == 2) {
            fprintf(stderr, "rlvr eval: at most two --checkpoint\n");
            return -1;
        }
        a->checkpoints[a->n_checkpoints++] = v;
    } else if (strcmp(flag, "--pool") == 0) a->pool = v;
    else if (strcmp(flag, "--manifest") == 0) a->manifest = v;
    else if (strcmp(flag, "--config") == 0) a->config = v;
    else if (strcmp(flag, "--out") == 0) a->out = v;
    else if (strcmp(flag, "--split") == 0) {
        a->all_splits = strcmp(v, "all") == 0;
        if (!a->all_splits && rlvr_split_parse(v, &a->split) < 0) {
            fprintf(stderr, "rlvr eval: --split: %s\n", rlvr_error_last());
            return -1;
        }
    } else if (strcmp(flag, "--samples") == 0) return rlvr_cmd_parse_int("eval", flag, v, 1, 1 << 20, &a->samples);
    else if (strcmp(flag, "--limit") == 0) return rlvr_cmd_parse_int("eval", flag, v, 1, INT32_MAX, &a->limit);
    else if (strcmp(flag, "--kv-slots") == 0) return rlvr_cmd_parse_int("eval", flag, v, 1, 4096, &a->kv_slots);
    else if (strcmp(flag, "--consensus") == 0) return rlvr_cmd_parse_int("eval", flag, v, 1, 100, &a->consensus);
    else if (strcmp(flag, "--seed") == 0) {
        if (rlvr_cmd_parse_int("eval", flag, v, 0, INT64_MAX, &n) < 0) return -1;
        a->seed = (uint64_t)n;
    } else if (strcmp(flag, "--temperature") == 0) {
        char *end;
        a->temperature = strtod(v, &end);
        if (*end || !(a->temperature > 0) || !isfinite(a->temperature)) {
            fprintf(stderr, "rlvr eval: --temperature wants a positive number, got \"%s\"\n", v);
            return -1;
        }
    } else {
        fprintf(stderr, "rlvr eval: unknown option %s\n", flag);
        return -1;
    }
    return 0;
}

static int parse(eval_args *a, int argc, char **argv) {
    memset(a, 0, sizeof *a);
    a->split = RLVR_SPLIT_EVAL;
    a->samples = 4;
    a->seed = 1;
    a->temperature = -1;
    for (int i = 1; i < argc; i++) {
        const char *flag = argv[i];
        if (strcmp(flag, "--json") == 0) a->json = true;
        else if (strcmp(flag, "--unchecked") == 0) a->unchecked = true;
        else if (i + 1 >= argc) {
            fprintf(stderr, "rlvr eval: %s needs a value\n", flag);
            return -1;
        } else if (parse_value(a, flag, argv[++i]) < 0) return -1;
    }
    if (a->n_checkpoints == 0 || !a->pool) {
        fprintf(stderr, "rlvr eval: --checkpoint and --pool are required\n");
        return -1;
    }
    if (a->unchecked && a->manifest) {
        fprintf(stderr, "rlvr eval: --manifest and --unchecked exclude each other\n");
        return -1;
    }
    return 0;
}

/* ---- what to evaluate, and how ---------------------------------------------------------- */

typedef struct {
    rlvr_task_pool *pool;
    rlvr_pool_manifest *manifest;
    rlvr_eval_task *tasks;
    size_t n_tasks;
    rlvr_config *cfg;
    rlvr_tokenizer *toks[2]; /* each checkpoint's own */
    rlvr_model *models[2];
    rlvr_checkpoint_info info[2];
    rlvr_eval_result *results[2];
} eval_state;

static int load_pool(eval_state *st, const eval_args *a) {
    RLVR_TRY(rlvr_evaljob_load_pool(&st->pool, &st->manifest, a->pool, a->manifest, a->unchecked));
    return rlvr_eval_tasks_from_pool(&st->tasks, &st->n_tasks, st->pool, st->manifest,
                                     a->all_splits ? NULL : &a->split, (size_t)a->limit);
}

/* The model of checkpoint i; the first one's stored configuration is kept
 * when no --config is given. */
static int load_checkpoint(eval_state *st, const eval_args *a, int i) {
    return rlvr_evaljob_load_checkpoint(a->checkpoints[i], &st->toks[i], &st->models[i], &st->info[i],
                                        i == 0 && !a->config ? &st->cfg : NULL);
}

static int options_for(rlvr_eval_options *o, const eval_state *st, const eval_args *a, double *last) {
    RLVR_TRY(rlvr_evaljob_options(o, st->cfg, (int32_t)a->samples, a->seed, last));
    if (a->temperature > 0) o->sampler.temperature = (float)a->temperature;
    if (a->kv_slots > 0) o->sampler.kv_slots = (int32_t)a->kv_slots;
    if (a->consensus > 0) o->consensus_runs = (int)a->consensus;
    return 0;
}

static int evaluate(eval_state *st, const eval_args *a) {
    RLVR_TRY(load_pool(st, a));
    if (a->config) RLVR_TRY(rlvr_config_load(&st->cfg, a->config, rlvr_all_config_schemas));
    for (int i = 0; i < a->n_checkpoints; i++) RLVR_TRY(load_checkpoint(st, a, i));
    rlvr_eval_options o;
    double last = 0;
    RLVR_TRY(options_for(&o, st, a, &last));
    for (int i = 0; i < a->n_checkpoints; i++) {
        fprintf(stderr, "eval: %s on %zu tasks x %lld samples\n", a->checkpoints[i], st->n_tasks,
                (long long)a->samples);
        last = 0;
        RLVR_TRY(rlvr_eval_run(&st->results[i], st->models[i], st->toks[i], st->tasks, st->n_tasks, &o));
    }
    return 0;
}

static void state_free(eval_state *st) {
    for (int i = 0; i < 2; i++) {
        rlvr_eval_result_free(st->results[i]);
        rlvr_model_free(st->models[i]);
        rlvr_tokenizer_free(st->toks[i]);
    }
    rlvr_config_free(st->cfg);
    free(st->tasks);
    rlvr_pool_manifest_free(st->manifest);
    rlvr_task_pool_free(st->pool);
}

/* ---- tables ----------------------------------------------------------------------------- */

static void fmt_estimate(char *buf, size_t cap, const rlvr_eval_estimate *e) {
    if (isnan(e->value)) snprintf(buf, cap, "-");
    else snprintf(buf, cap, "%.3f", e->value);
}

static void print_group(const rlvr_eval_group *g) {
    char p1[64], at[32], hat[32];
    if (isnan(g->pass_at[0].value)) snprintf(p1, sizeof p1, "-");
    else snprintf(p1, sizeof p1, "%.3f [%.3f, %.3f]", g->pass_at[0].value, g->pass_at[0].low, g->pass_at[0].high);
    int32_t last = g->n_k - 1;
    fmt_estimate(at, sizeof at, &g->pass_at[last]);
    fmt_estimate(hat, sizeof hat, &g->pass_hat[last]);
    printf("  %-14s %6d %8lld  %-24s", g->name, g->n_tasks, (long long)g->samples, p1);
    for (int32_t k = 1; k < last; k++) {
        char v[32];
        fmt_estimate(v, sizeof v, &g->pass_at[k]);
        printf(" %7s", v);
    }
    printf(" %7s %7s %6lld %6lld %9.1f%%\n", at, hat, (long long)g->infra, (long long)g->truncated,
           100.0 * g->compliance);
}

static void print_result(const char *path, const rlvr_checkpoint_info *info, const rlvr_eval_result *r) {
    printf("\n%s (step %lld, policy version %lld): %zu tasks x %d samples, seed %llu, temperature %g\n", path,
           (long long)info->step, (long long)info->policy_version, r->n_tasks, r->samples,
           (unsigned long long)r->seed, r->temperature);
    const rlvr_eval_group *all = &r->groups[0];
    int32_t last = all->n_k - 1;
    printf("  %-14s %6s %8s  %-24s", "family", "tasks", "samples", "pass@1 [95% CI]");
    for (int32_t k = 1; k < last; k++) {
        char h[16];
        snprintf(h, sizeof h, "pass@%lld", (long long)all->k[k]);
        printf(" %7s", h);
    }
    char h1[16], h2[16];
    snprintf(h1, sizeof h1, "pass@%lld", (long long)all->k[last]);
    snprintf(h2, sizeof h2, "pass^%lld", (long long)all->k[last]);
    printf(" %7s %7s %6s %6s %10s\n", h1, h2, "infra", "trunc", "compliance");
    for (size_t g = 1; g < r->n_groups; g++) print_group(&r->groups[g]);
    print_group(all);
    printf("  rollouts %lld, enclave verifications %lld (cache hits %lld), %.1f s (generate %.1f s, verify %.1f s)\n",
           (long long)r->stats.rollouts, (long long)r->stats.verifications, (long long)r->stats.verify_cache_hits,
           r->stats.wall_s, r->stats.generate_s, r->stats.verify_s);
}

static void print_comparison(const eval_args *a, const rlvr_eval_comparison *c) {
    printf("\npaired difference of pass@1 (%s − %s), bootstrap over %d tasks: %+.3f [%+.3f, %+.3f] (%.3f → %.3f)\n",
           a->checkpoints[1], a->checkpoints[0], c->n_tasks, c->mean_diff, c->low, c->high, c->base_pass1,
           c->cand_pass1);
}

/* ---- JSON ------------------------------------------------------------------------------- */

static json_t *loads(const char *text) { return text ? json_loads(text, 0, NULL) : NULL; }

static json_t *checkpoint_json(const eval_state *st, const eval_args *a, int i) {
    char *text = NULL;
    if (rlvr_eval_result_to_json(st->results[i], 0, &text) < 0) return NULL;
    json_t *r = json_pack("{s:s, s:I, s:I, s:o}", "checkpoint", a->checkpoints[i], "step",
                          (json_int_t)st->info[i].step, "policy_version", (json_int_t)st->info[i].policy_version,
                          "result", loads(text));
    free(text);
    return r;
}

/* {"format", "pool", "split", "checkpoints": [{checkpoint, step, policy_version,
 * result}], "comparison"} */
static int document(const eval_state *st, const eval_args *a, const rlvr_eval_comparison *cmp, char **out) {
    json_t *results = json_array();
    for (int i = 0; results && i < a->n_checkpoints; i++) json_array_append_new(results, checkpoint_json(st, a, i));
    json_t *doc = json_pack("{s:s, s:s, s:s, s:o}", "format", "rlvr-eval-report/1", "pool", a->pool, "split",
                            a->all_splits ? "all" : rlvr_split_name(a->split), "checkpoints", results);
    char *text = NULL;
    if (doc && cmp && rlvr_eval_comparison_to_json(cmp, &text) == 0) json_object_set_new(doc, "comparison", loads(text));
    free(text);
    bool complete = doc && json_array_size(results) == (size_t)a->n_checkpoints && (!cmp || json_object_get(doc, "comparison"));
    *out = complete ? json_dumps(doc, JSON_PRESERVE_ORDER | JSON_INDENT(2) | JSON_REAL_PRECISION(10)) : NULL;
    json_decref(doc);
    return *out ? 0 : RLVR_FAIL(RLVR_ENOMEM, "out of memory rendering the report");
}

static int write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (!f) return rlvr_error_errno_at(__FILE__, __LINE__, "opening %s", path);
    bool ok = fputs(text, f) >= 0 && fputc('\n', f) != EOF;
    if (fclose(f) != 0) ok = false;
    return ok ? 0 : rlvr_error_errno_at(__FILE__, __LINE__, "writing %s", path);
}

static int report(const eval_state *st, const eval_args *a) {
    rlvr_eval_comparison cmp;
    bool two = a->n_checkpoints == 2;
    if (two) RLVR_TRY(rlvr_eval_compare(&cmp, st->results[0], st->results[1], NULL, 0.95, 2000));
    char *doc = NULL;
    if (a->json || a->out) RLVR_TRY(document(st, a, two ? &cmp : NULL, &doc));
    int rc = a->out ? write_file(a->out, doc) : 0;
    if (a->json) printf("%s\n", doc);
    else
        for (int i = 0; i < a->n_checkpoints; i++) print_result(a->checkpoints[i], &st->info[i], st->results[i]);
    if (!a->json && two) print_comparison(a, &cmp);
    free(doc);
    return rc;
}

int rlvr_cmd_eval(int argc, char **argv) {
    eval_args a;
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0)) {
        usage(stdout);
        return RLVR_EXIT_OK;
    }
    if (parse(&a, argc, argv) < 0) {
        usage(stderr);
        return RLVR_EXIT_USAGE;
    }
    eval_state st;
    memset(&st, 0, sizeof st);
    int rc = evaluate(&st, &a);
    if (rc == 0) rc = report(&st, &a);
    state_free(&st);
    return rc < 0 ? rlvr_cmd_fail("eval", rc) : RLVR_EXIT_OK;
}
