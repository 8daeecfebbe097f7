/* train/quickstart.c — the quickstart's stages (train/quickstart.h). */
#include "train/quickstart.h"

#include "core/error.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/sys.h"
#include "io/checkpoint.h"
#include "train/config.h"
#include "train/run.h"
#include "train/sft.h"
#include "train/trainer.h"

#include <jansson.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const stage_names[RLVR_QUICKSTART_STAGES] = {"pool", "sft", "rl", "eval_sft", "eval_rl"};

const char *rlvr_quickstart_stage_name(rlvr_quickstart_stage s) {
    return (unsigned)s < RLVR_QUICKSTART_STAGES ? stage_names[s] : "?";
}

static void say(const rlvr_quickstart_options *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const rlvr_quickstart_options *o, const char *fmt, ...) {
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (o && o->progress) o->progress(o->progress_arg, line);
    else rlvr_log_info("%s", line);
}

typedef struct {
    const rlvr_quickstart_options *opt;
    const char *what;
} eval_progress_arg;

static void eval_progress(void *arg, const rlvr_eval_progress *p) {
    const eval_progress_arg *a = arg;
    say(a->opt, "eval %s: %zu/%zu tasks, pass %.3f so far, %.1f rollouts/s, %.0f s", a->what, p->tasks_done,
        p->tasks_total, p->scored ? (double)p->passed / (double)p->scored : 0.0, p->rollouts_per_s, p->elapsed_s);
}

/* A checkpoint on the held-out split, [quickstart] eval_samples per task. */
static int evaluate(rlvr_run *r, const char *checkpoint, const char *what, const rlvr_quickstart_options *qo,
                    rlvr_eval_result **out) {
    rlvr_model *model = NULL;
    rlvr_eval_task *tasks = NULL;
    size_t n = 0;
    rlvr_split split = RLVR_SPLIT_EVAL;
    eval_progress_arg pa = {qo, what};
    rlvr_eval_options o;
    rlvr_eval_options_default(&o);
    int rc = rlvr_eval_options_from_config(&o, r->cfg);
    rlvr_quickstart_config q = {.eval_samples = 4};
    if (rc == 0) rc = rlvr_quickstart_config_read(&q, r->cfg);
    o.samples = (int32_t)q.eval_samples;
    o.sampler.seed = r->io.seed;
    o.progress = eval_progress;
    o.progress_arg = &pa;
    if (rc == 0) rc = rlvr_run_host(r);
    o.harness.host = r->host;
    if (rc == 0) rc = rlvr_eval_tasks_from_pool(&tasks, &n, r->pool, r->pool_manifest, &split, 0);
    if (rc == 0) rc = rlvr_run_load_model(r, checkpoint, false, &model);
    if (rc == 0) {
        say(qo, "eval %s: %zu held-out tasks × %d samples from %s", what, n, o.samples, checkpoint);
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
    int rc = rlvr_write_text_atomic(path, text);
    free(text);
    return rc;
}

static int write_summary(const rlvr_quickstart_result *q) {
    const rlvr_eval_group *gs = rlvr_eval_result_group(q->sft, "all"), *gr = rlvr_eval_result_group(q->rl, "all");
    json_t *phases = json_object();
    for (int i = 0; phases && i < RLVR_QUICKSTART_STAGES; i++)
        json_object_set_new(phases, stage_names[i], json_real(q->stage_s[i]));
    json_t *j = json_pack("{s:f, s:f, s:f, s:f, s:f, s:i, s:i, s:f, s:o, s:s}", "sft_pass1", gs->pass_at[0].value,
                          "rl_pass1", gr->pass_at[0].value, "diff_mean", q->diff.mean_diff, "diff_ci_low", q->diff.low,
                          "diff_ci_high", q->diff.high, "n_tasks", q->diff.n_tasks, "samples_per_task",
                          q->sft->samples, "wall_minutes", q->minutes, "phase_seconds", phases, "run_dir", q->run_dir);
    char path[RLVR_IO_PATH_CAP], *text = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    int rc = text ? rlvr_run_path(path, sizeof path, q->run_dir, "summary.json") : RLVR_FAIL(RLVR_ENOMEM, "oom");
    if (rc == 0) rc = rlvr_write_text_atomic(path, text);
    free(text);
    return rc;
}

int rlvr_quickstart_run(const char *config_text, size_t len, const char *out_dir,
                        const rlvr_config_key *const *schemas, const rlvr_quickstart_options *opt,
                        rlvr_quickstart_result *out) {
    memset(out, 0, sizeof *out);
    double t0 = rlvr_now(), started = t0;
    char cfg_path[RLVR_IO_PATH_CAP], sft_ck[RLVR_IO_PATH_CAP], rl_ck[RLVR_IO_PATH_CAP];
    RLVR_TRY(rlvr_mkdir_p(out_dir, 0755));
    RLVR_TRY(rlvr_run_path(cfg_path, sizeof cfg_path, out_dir, "quickstart.ini"));
    RLVR_TRY(rlvr_write_file_atomic(cfg_path, config_text, len));
    rlvr_run r;
    RLVR_TRY(rlvr_run_load(&r, cfg_path, out_dir, schemas));
    say(opt, "quickstart: run directory %s, configuration %s", out_dir, cfg_path);
    snprintf(out->run_dir, sizeof out->run_dir, "%s", r.io.run_dir);
#define STAGE_DONE(stage)                                                                        \
    do {                                                                                         \
        double now = rlvr_now();                                                                 \
        out->stage_s[stage] = now - started;                                                     \
        started = now;                                                                           \
        say(opt, "quickstart: %s done in %.0f s", stage_names[stage], out->stage_s[stage]);     \
    } while (0)
    int rc = rlvr_run_pool(&r, true); /* built once; SFT and RL reuse it */
    if (rc == 0) STAGE_DONE(RLVR_QUICKSTART_POOL);
    if (rc == 0) rc = rlvr_sft_run(&r, true, sft_ck, sizeof sft_ck);
    if (rc == 0) STAGE_DONE(RLVR_QUICKSTART_SFT);
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
    if (rc == 0) STAGE_DONE(RLVR_QUICKSTART_RL);
    if (rc == 0) rc = evaluate(&r, sft_ck, "SFT", opt, &out->sft);
    if (rc == 0) rc = save_eval(&r, "eval_sft.json", out->sft);
    if (rc == 0) STAGE_DONE(RLVR_QUICKSTART_EVAL_SFT);
    if (rc == 0) rc = evaluate(&r, rl_ck, "RL", opt, &out->rl);
    if (rc == 0) rc = save_eval(&r, "eval_rl.json", out->rl);
    if (rc == 0) STAGE_DONE(RLVR_QUICKSTART_EVAL_RL);
#undef STAGE_DONE
    out->minutes = (rlvr_now() - t0) / 60.0;
    if (rc == 0) rc = rlvr_eval_compare(&out->diff, out->sft, out->rl, NULL, 0.95, 2000);
    if (rc == 0) rc = write_summary(out);
    rlvr_run_close(&r);
    if (rc != 0) rlvr_quickstart_result_clear(out);
    return rc;
}

void rlvr_quickstart_result_clear(rlvr_quickstart_result *r) {
    rlvr_eval_result_free(r->sft);
    rlvr_eval_result_free(r->rl);
    memset(r, 0, sizeof *r);
}
