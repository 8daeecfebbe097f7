/* jobs/eval.c — `rlvr eval --checkpoint C [--checkpoint C2] --pool POOL ...`:
 * evaluates one or two checkpoints on the held-out tasks of a validated pool
 * (eval/evaljob.h) and prints a table per checkpoint — pass@1 with its interval,
 * pass@k, pass^k, infra, tool-call compliance, per family — and, for two,
 * the paired difference (second − first) with its interval. --json prints
 * the same as one JSON document; --out writes it to a file. docs/EVAL.md.
 * Parse, call, print. */
#include "core/error.h"
#include "eval/evaljob.h"
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
            "usage: rlvr eval --checkpoint C [--checkpoint C2] --pool POOL [--split eval|train|regression|all]\n"
            "                 [--samples N] [--seed S] [--temperature T] [--limit N] [--kv-slots N]\n"
            "                 [--consensus K] [--config RUN.ini] [--manifest PATH | --unchecked]\n"
            "                 [--json] [--out FILE.json]\n"
            "  --checkpoint C   policy weights (twice: the second is compared with the first)\n"
            "  --pool POOL      task pool (directory or .jsonl), checked with `rlvr tasks check`\n"
            "  --split S        tasks of this split (default eval; all: every split)\n"
            "  --samples N      rollouts per task (default 4); pass@k for k = 1, 2, 4, ... N\n"
            "  --seed S         sampling seed (default 1)\n"
            "  --temperature T  sampling temperature (default: the run's [sampler] temperature; 0 = greedy)\n"
            "  --limit N        the first N tasks of the split only\n"
            "  --kv-slots N     rollouts decoded at once (default: the run's [sampler] kv_slots)\n"
            "  --consensus K    enclave runs a passing patch needs (default: the run's [enclave])\n"
            "  --config FILE    the run's configuration (default: the one stored in the first checkpoint)\n"
            "  --manifest PATH  the pool's validation manifest (default POOL.manifest.json)\n"
            "  --unchecked      evaluate a pool that was never checked (every task, no quarantine)\n"
            "  --json           print the result as JSON instead of tables\n"
            "  --out FILE       also write the JSON to FILE\n");
}

typedef struct {
    rlvr_evaljob_spec spec;
    bool json;
    const char *out;
} eval_args;

/* The table's flags into the library's spec; --split and --temperature are converted after. */
static int parse(eval_args *a, int argc, char **argv) {
    rlvr_evaljob_spec *s = &a->spec;
    a->json = false;
    a->out = NULL;
    *s = (rlvr_evaljob_spec){.split = RLVR_SPLIT_EVAL, .samples = 4, .seed = 1, .temperature = -1,
                             .schemas = rlvr_all_config_schemas};
    rlvr_opt_list ckpts = {0};
    const char *split = NULL, *temperature = NULL;
    int64_t seed = 1;
    const rlvr_opt opts[] = {
        RLVR_OPT("--checkpoint", RLVR_OPT_LIST, &ckpts, "C", .required = true),
        RLVR_OPT("--pool", RLVR_OPT_STRING, &s->pool, "POOL", .required = true),
        RLVR_OPT("--split", RLVR_OPT_STRING, &split, "S"),
        RLVR_OPT("--samples", RLVR_OPT_INT, &s->samples, "N", .min = 1, .max = 1 << 20),
        RLVR_OPT("--seed", RLVR_OPT_INT, &seed, "S", .min = 0, .max = INT64_MAX),
        RLVR_OPT("--temperature", RLVR_OPT_STRING, &temperature, "T"),
        RLVR_OPT("--limit", RLVR_OPT_INT, &s->limit, "N", .min = 1, .max = INT32_MAX),
        RLVR_OPT("--kv-slots", RLVR_OPT_INT, &s->kv_slots, "N", .min = 1, .max = 4096),
        RLVR_OPT("--consensus", RLVR_OPT_INT, &s->consensus, "K", .min = 1, .max = 100),
        RLVR_OPT("--config", RLVR_OPT_STRING, &s->config, "FILE"),
        RLVR_OPT("--manifest", RLVR_OPT_STRING, &s->manifest, "PATH"),
        RLVR_OPT("--unchecked", RLVR_OPT_FLAG, &s->unchecked, NULL),
        RLVR_OPT("--json", RLVR_OPT_FLAG, &a->json, NULL),
        RLVR_OPT("--out", RLVR_OPT_STRING, &a->out, "FILE"),
        {0},
    };
    int rc = rlvr_args_parse("eval", opts, usage, argc, argv);
    s->n_checkpoints = (int)ckpts.n;
    for (size_t i = 0; i < ckpts.n && i < 2; i++) s->checkpoints[i] = ckpts.items[i];
    rlvr_opt_list_free(&ckpts);
    s->seed = (uint64_t)seed;
    if (rc != RLVR_ARGS_CONTINUE) return rc;
    if (s->n_checkpoints > 2) return rlvr_args_error("eval", usage, "at most two --checkpoint");
    s->all_splits = split && strcmp(split, "all") == 0;
    if (split && !s->all_splits && rlvr_split_parse(split, &s->split) < 0)
        return rlvr_args_error("eval", usage, "--split: %s", rlvr_error_last());
    char *end = NULL;
    if (temperature) s->temperature = strtod(temperature, &end);
    if (temperature && (*end || !(s->temperature >= 0) || !isfinite(s->temperature)))
        return rlvr_args_error("eval", usage, "--temperature wants a number >= 0 (0 = greedy), got \"%s\"",
                               temperature);
    if (s->unchecked && s->manifest) return rlvr_args_error("eval", usage, "--manifest and --unchecked exclude each other");
    return RLVR_ARGS_CONTINUE;
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

static void print_comparison(const rlvr_evaljob_spec *a, const rlvr_eval_comparison *c) {
    printf("\npaired difference of pass@1 (%s − %s), bootstrap over %d tasks: %+.3f [%+.3f, %+.3f] (%.3f → %.3f)\n",
           a->checkpoints[1], a->checkpoints[0], c->n_tasks, c->mean_diff, c->low, c->high, c->base_pass1,
           c->cand_pass1);
}

static int report(const rlvr_evaljob *job, const eval_args *e) {
    const rlvr_evaljob_spec *a = &e->spec;
    char *doc = NULL;
    if (e->json || e->out) RLVR_TRY(rlvr_evaljob_document(job, a, &doc));
    int rc = e->out ? rlvr_evaljob_write_text(e->out, doc) : 0;
    if (e->json) printf("%s\n", doc);
    else
        for (int i = 0; i < a->n_checkpoints; i++) print_result(a->checkpoints[i], &job->info[i], job->results[i]);
    if (!e->json && job->compared) print_comparison(a, &job->comparison);
    free(doc);
    return rc;
}

int rlvr_cmd_eval(int argc, char **argv) {
    eval_args a;
    int parsed = parse(&a, argc, argv);
    if (parsed != RLVR_ARGS_CONTINUE) return parsed;
    double last;
    a.spec.hooks = rlvr_cmd_eval_hooks(&last);
    rlvr_evaljob *job = NULL;
    int rc = rlvr_evaljob_run(&job, &a.spec);
    if (rc == 0) rc = report(job, &a);
    rlvr_evaljob_free(job);
    return rc < 0 ? rlvr_cmd_fail("eval", rc) : RLVR_EXIT_OK;
}
