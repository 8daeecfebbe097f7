/* jobs/quickstart.c — `rlvr quickstart [--out DIR]`: the embedded default,
 * end to end on one machine with no cluster and no download:
 *   1. generate and validate a bugfix-c pool (train and held-out eval splits),
 *   2. SFT on demonstrations of the train tasks (train/sft.c),
 *   3. RL, synchronous GRPO (train/trainer.c),
 *   4. evaluate the SFT and the RL checkpoints on the held-out split with the
 *      same seeds (eval/eval.h): pass@1, pass@k with intervals, and the
 *      paired difference RL − SFT with its bootstrap interval over tasks,
 *   5. print a before/after table and write DIR/summary.json.
 * The configuration is written to DIR/quickstart.ini first (the same text as
 * examples/quickstart.ini, or the file given with --config), so the run is
 * reproducible from its directory;
 * rerunning the command resumes whatever stage was interrupted. */
#include "core/error.h"
#include "core/fs.h"
#include "core/sys.h"
#include "eval/eval.h"
#include "io/checkpoint.h"
#include "jobs/commands.h"
#include "jobs/run.h"
#include "train/config.h"
#include "train/sft.h"
#include "train/trainer.h"

#include <jansson.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* examples/quickstart.ini, kept identical by tests/jobs/test_quickstart_config.sh */
static const char quickstart_ini[] =
#include "quickstart_ini.inc"
    ;

/* The run's configuration into its directory: the embedded default, or a
 * copy of the user's file. */
static int write_config(const char *path, const char *from) {
    char *text = NULL;
    size_t n = strlen(quickstart_ini);
    if (from) {
        FILE *in = fopen(from, "rb");
        if (!in) return RLVR_FAIL(RLVR_EIO, "cannot read %s", from);
        text = malloc(1 << 20);
        n = text ? fread(text, 1, (1 << 20) - 1, in) : 0;
        bool full = text && !feof(in) ? false : true;
        fclose(in);
        if (!text || !full) {
            free(text);
            return RLVR_FAIL(RLVR_ELIMIT, "%s: not readable or larger than 1 MiB", from);
        }
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        free(text);
        return RLVR_FAIL(RLVR_EIO, "cannot write %s", path);
    }
    bool ok = fwrite(text ? text : quickstart_ini, 1, n, f) == n;
    free(text);
    ok &= fclose(f) == 0;
    return ok ? 0 : RLVR_FAIL(RLVR_EIO, "cannot write %s", path);
}

typedef struct {
    rlvr_eval_result *res;
    double wall_s;
} eval_outcome;

static void progress(void *arg, const rlvr_eval_progress *p) {
    const char *what = arg;
    fprintf(stderr, "eval %s: %zu/%zu tasks, pass %.3f so far, %.1f rollouts/s, %.0f s\n", what, p->tasks_done,
            p->tasks_total, p->scored ? (double)p->passed / (double)p->scored : 0.0, p->rollouts_per_s, p->elapsed_s);
}

static int evaluate(rlvr_run *r, const char *checkpoint, const char *what, rlvr_eval_result **out) {
    rlvr_model *model = NULL;
    rlvr_eval_task *tasks = NULL;
    size_t n = 0;
    rlvr_split split = RLVR_SPLIT_EVAL;
    rlvr_eval_options o;
    rlvr_eval_options_default(&o);
    int rc = rlvr_eval_options_from_config(&o, r->cfg);
    rlvr_quickstart_config q = {.eval_samples = 4};
    if (rc == 0) rc = rlvr_quickstart_config_read(&q, r->cfg);
    o.samples = (int32_t)q.eval_samples;
    o.sampler.seed = r->io.seed;
    o.progress = progress;
    o.progress_arg = (void *)what;
    if (rc == 0) rc = rlvr_run_host(r);
    o.harness.host = r->host;
    if (rc == 0) rc = rlvr_eval_tasks_from_pool(&tasks, &n, r->pool, r->pool_manifest, &split, 0);
    if (rc == 0) rc = rlvr_run_load_model(r, checkpoint, false, &model);
    if (rc == 0) {
        fprintf(stderr, "eval %s: %zu held-out tasks × %d samples from %s\n", what, n, o.samples, checkpoint);
        rc = rlvr_eval_run(out, model, r->tok, tasks, n, &o);
    }
    free(tasks);
    rlvr_model_free(model);
    return rc;
}

static int save_eval(const rlvr_run *r, const char *name, const rlvr_eval_result *res) {
    char path[RLVR_IO_PATH_CAP], *text = NULL;
    RLVR_TRY(rlvr_run_path(path, sizeof path, r->io.run_dir, name));
    RLVR_TRY(rlvr_eval_result_to_json(res, 2, &text));
    FILE *f = fopen(path, "w");
    int rc = f && fputs(text, f) >= 0 ? 0 : RLVR_FAIL(RLVR_EIO, "cannot write %s", path);
    if (f && fclose(f) != 0 && rc == 0) rc = RLVR_FAIL(RLVR_EIO, "cannot write %s", path);
    free(text);
    return rc;
}

static void print_row(const char *name, const rlvr_eval_group *g) {
    printf("  %-5s  %.3f [%.3f, %.3f]", name, g->pass_at[0].value, g->pass_at[0].low, g->pass_at[0].high);
    for (int i = 1; i < g->n_k; i++)
        printf("   pass@%lld %.3f [%.3f, %.3f]", (long long)g->k[i], g->pass_at[i].value, g->pass_at[i].low,
               g->pass_at[i].high);
    printf("   compliance %.3f\n", g->compliance);
}

/* Wall seconds of each stage in this invocation (a resumed stage counts only
 * what it did this time), for the progress log and summary.json. */
enum { PHASE_POOL, PHASE_SFT, PHASE_RL, PHASE_EVAL_SFT, PHASE_EVAL_RL, PHASE_COUNT };
static const char *const phase_names[PHASE_COUNT] = {"pool", "sft", "rl", "eval_sft", "eval_rl"};

typedef struct {
    double seconds[PHASE_COUNT];
    double started;
} phase_clock;

static void phase_done(phase_clock *c, int phase) {
    double now = rlvr_now();
    c->seconds[phase] = now - c->started;
    c->started = now;
    fprintf(stderr, "quickstart: %s done in %.0f s\n", phase_names[phase], c->seconds[phase]);
}

static json_t *phase_json(const phase_clock *c) {
    json_t *o = json_object();
    for (int i = 0; o && i < PHASE_COUNT; i++) json_object_set_new(o, phase_names[i], json_real(c->seconds[i]));
    return o;
}

static int summarize(const rlvr_run *r, const rlvr_eval_result *sft, const rlvr_eval_result *rl, double minutes,
                     const phase_clock *clock) {
    rlvr_eval_comparison c;
    RLVR_TRY(rlvr_eval_compare(&c, sft, rl, NULL, 0.95, 2000));
    const rlvr_eval_group *gs = rlvr_eval_result_group(sft, "all"), *gr = rlvr_eval_result_group(rl, "all");
    printf("\nheld-out pass rates (%d tasks × %d samples, 95 %% bootstrap intervals over tasks)\n", c.n_tasks,
           sft->samples);
    printf("  model  pass@1\n");
    print_row("SFT", gs);
    print_row("RL", gr);
    printf("  RL − SFT pass@1: %+.3f [%+.3f, %+.3f] (paired bootstrap over tasks)%s\n", c.mean_diff, c.low, c.high,
           c.low > 0 ? "  — RL is better" : "");
    printf("\nrun directory: %s (summary.json, eval_sft.json, eval_rl.json, metrics.h5, checkpoints/, shards/)\n",
           r->io.run_dir);
    printf("wall time: %.1f min (", minutes);
    for (int i = 0; i < PHASE_COUNT; i++) printf("%s%s %.0f s", i ? ", " : "", phase_names[i], clock->seconds[i]);
    printf(")\n");
    json_t *j = json_pack("{s:f, s:f, s:f, s:f, s:f, s:i, s:i, s:f, s:o, s:s}", "sft_pass1", gs->pass_at[0].value,
                          "rl_pass1", gr->pass_at[0].value, "diff_mean", c.mean_diff, "diff_ci_low", c.low,
                          "diff_ci_high", c.high, "n_tasks", c.n_tasks, "samples_per_task", sft->samples,
                          "wall_minutes", minutes, "phase_seconds", phase_json(clock), "run_dir", r->io.run_dir);
    char path[RLVR_IO_PATH_CAP];
    int rc = j ? rlvr_run_path(path, sizeof path, r->io.run_dir, "summary.json") : RLVR_FAIL(RLVR_ENOMEM, "oom");
    if (rc == 0 && json_dump_file(j, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0)
        rc = RLVR_FAIL(RLVR_EIO, "cannot write %s", path);
    json_decref(j);
    return rc;
}

static int quickstart(const char *out_dir, const char *config) {
    double t0 = rlvr_now();
    char cfg_path[RLVR_IO_PATH_CAP];
    RLVR_TRY(rlvr_mkdir_p(out_dir, 0755));
    RLVR_TRY(rlvr_run_path(cfg_path, sizeof cfg_path, out_dir, "quickstart.ini"));
    RLVR_TRY(write_config(cfg_path, config));
    rlvr_run r;
    RLVR_TRY(rlvr_run_open(&r, cfg_path, out_dir));
    fprintf(stderr, "quickstart: run directory %s, configuration %s\n", out_dir, cfg_path);
    char sft_ck[RLVR_IO_PATH_CAP], rl_ck[RLVR_IO_PATH_CAP];
    phase_clock clock = {.started = t0};
    int rc = rlvr_run_pool(&r, true); /* built once; SFT and RL reuse it */
    if (rc == 0) phase_done(&clock, PHASE_POOL);
    if (rc == 0) rc = rlvr_sft_run(&r, true, sft_ck, sizeof sft_ck);
    if (rc == 0) phase_done(&clock, PHASE_SFT);
    /* SFT's freed demonstrations stay resident in the heap (47 MB after SFT,
     * 18 MB trimmed), and every sandbox fork during RL and the evaluations
     * copies the page tables of what is resident (docs/CONFIG.md "The
     * quickstart") */
    malloc_trim(0);
    rlvr_trainer *t = NULL;
    if (rc == 0) rc = rlvr_trainer_new(&t, &r, true);
    if (rc == 0) rc = rlvr_trainer_run(t);
    rlvr_trainer_free(t);
    if (rc == 0) rc = rlvr_checkpoint_latest(r.io.checkpoint_dir, rl_ck, sizeof rl_ck);
    if (rc == 0) phase_done(&clock, PHASE_RL);
    rlvr_eval_result *sft = NULL, *rl = NULL;
    if (rc == 0) rc = evaluate(&r, sft_ck, "SFT", &sft);
    if (rc == 0) rc = save_eval(&r, "eval_sft.json", sft);
    if (rc == 0) phase_done(&clock, PHASE_EVAL_SFT);
    if (rc == 0) rc = evaluate(&r, rl_ck, "RL", &rl);
    if (rc == 0) rc = save_eval(&r, "eval_rl.json", rl);
    if (rc == 0) phase_done(&clock, PHASE_EVAL_RL);
    if (rc == 0) rc = summarize(&r, sft, rl, (rlvr_now() - t0) / 60.0, &clock);
    rlvr_eval_result_free(sft);
    rlvr_eval_result_free(rl);
    rlvr_run_close(&r);
    return rc;
}

int rlvr_cmd_quickstart(int argc, char **argv) {
    const char *out = "runs/quickstart", *config = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) out = argv[++i];
        else if (strcmp(argv[i], "--config") == 0 && i + 1 < argc) config = argv[++i];
        else if (strcmp(argv[i], "--print-config") == 0) {
            fputs(quickstart_ini, stdout);
            return RLVR_EXIT_OK;
        } else {
            fprintf(stderr, "usage: rlvr quickstart [--out DIR] [--config FILE] [--print-config]\n"
                            "  --config FILE  run these stages on another configuration (e.g.\n"
                            "                 examples/quickstart-arith.ini) instead of the embedded default\n");
            return RLVR_EXIT_USAGE;
        }
    }
    rlvr_run_install_signals();
    int rc = quickstart(out, config);
    if (rc == 1) {
        fprintf(stderr, "quickstart: stopped by signal %d after a checkpoint; run it again to resume\n",
                (int)rlvr_run_stop_flag);
        return RLVR_EXIT_STOPPED;
    }
    return rc < 0 ? rlvr_cmd_fail("quickstart", rc) : RLVR_EXIT_OK;
}
