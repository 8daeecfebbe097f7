/* eval/evaljob.c — loading shared by the evaluation jobs, and `rlvr eval`
 * (eval/evaljob.h). */
#include "eval/evaljob.h"
#include "core/fs.h"

#include "core/error.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rlvr_evaljob_say(const rlvr_evaljob_hooks *hooks, const char *fmt, ...) {
    if (!hooks || !hooks->note) return;
    char small[1024], *line = small;
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    /* lines naming several paths may be longer than the buffer: never cut them */
    if (n >= (int)sizeof small && (line = malloc((size_t)n + 1)) != NULL) vsnprintf(line, (size_t)n + 1, fmt, again);
    va_end(again);
    va_end(ap);
    hooks->note(hooks->arg, line ? line : small);
    if (line != small) free(line);
}

int rlvr_evaljob_load_pool(rlvr_task_pool **pool, rlvr_pool_manifest **manifest, const char *pool_path,
                           const char *manifest_path, bool unchecked) {
    *pool = NULL;
    *manifest = NULL;
    int rc = rlvr_task_pool_load(pool, pool_path);
    if (rc == 0) rc = rlvr_task_pool_check_splits(*pool);
    if (rc == 0 && !unchecked) {
        char path[4096];
        rlvr_pool_manifest_default_path(path, sizeof path, pool_path);
        rc = rlvr_pool_manifest_load(manifest, manifest_path ? manifest_path : path, *pool);
        if (rc == RLVR_EIO)
            rc = rlvr_error_wrap(rc, "the pool has no validation manifest: run `rlvr tasks check %s` first, or "
                                     "pass --unchecked",
                                 pool_path);
    }
    if (rc < 0) {
        rlvr_pool_manifest_free(*manifest);
        rlvr_task_pool_free(*pool);
        *manifest = NULL;
        *pool = NULL;
    }
    return rc;
}

int rlvr_evaljob_load_checkpoint(const char *path, const rlvr_config_key *const *schemas, rlvr_tokenizer **tok,
                                 rlvr_model **model, rlvr_checkpoint_info *info, rlvr_config **stored_config) {
    rlvr_checkpoint *ck = NULL;
    *model = NULL, *tok = NULL;
    int rc = rlvr_checkpoint_open(&ck, path);
    if (rc < 0) return rlvr_error_wrap(rc, "checkpoint %s", path);
    *info = *rlvr_checkpoint_info_of(ck);
    info->config_text = "";
    rc = rlvr_checkpoint_load_model(ck, model);
    if (rc == 0) rc = rlvr_checkpoint_read_tokenizer(ck, tok);
    const char *text = rlvr_checkpoint_info_of(ck)->config_text;
    if (rc == 0 && stored_config && !*stored_config && text && text[0]) {
        rc = rlvr_config_parse(stored_config, text, path, schemas);
        if (rc < 0) rc = rlvr_error_wrap(rc, "the configuration stored in %s (give the run's with --config)", path);
    }
    rlvr_checkpoint_close(ck);
    if (rc == 0) rc = rlvr_tokenizer_check_model(*tok, rlvr_model_config_of(*model));
    if (rc < 0) {
        rlvr_model_free(*model);
        rlvr_tokenizer_free(*tok);
        *model = NULL, *tok = NULL;
        return rlvr_error_wrap(rc, "checkpoint %s", path);
    }
    return 0;
}

int rlvr_evaljob_options(rlvr_eval_options *o, const rlvr_config *cfg, int32_t samples, uint64_t seed,
                         const rlvr_evaljob_hooks *hooks) {
    rlvr_eval_options_default(o);
    if (cfg) RLVR_TRY(rlvr_eval_options_from_config(o, cfg));
    o->samples = samples;
    o->sampler.seed = seed;
    o->progress = hooks ? hooks->progress : NULL;
    o->progress_arg = hooks ? hooks->arg : NULL;
    return 0;
}

int rlvr_evaljob_write_text(const char *path, const char *text) { return rlvr_write_line_atomic(path, text); }

/* ---- `rlvr eval` ------------------------------------------------------------------------ */

void rlvr_evaljob_free(rlvr_evaljob *job) {
    if (!job) return;
    for (int i = 0; i < 2; i++) {
        rlvr_eval_result_free(job->results[i]);
        rlvr_model_free(job->models[i]);
        rlvr_tokenizer_free(job->toks[i]);
    }
    rlvr_config_free(job->cfg);
    free(job->tasks);
    rlvr_pool_manifest_free(job->manifest);
    rlvr_task_pool_free(job->pool);
    free(job);
}

static int job_options(rlvr_eval_options *o, const rlvr_evaljob *job, const rlvr_evaljob_spec *s) {
    RLVR_TRY(rlvr_evaljob_options(o, job->cfg, (int32_t)s->samples, s->seed, &s->hooks));
    if (s->temperature >= 0) o->sampler.temperature = (float)s->temperature;
    if (s->kv_slots > 0) o->sampler.kv_slots = (int32_t)s->kv_slots;
    if (s->consensus > 0) o->consensus_runs = (int)s->consensus;
    return 0;
}

static int job_evaluate(rlvr_evaljob *job, const rlvr_evaljob_spec *s) {
    RLVR_TRY(rlvr_evaljob_load_pool(&job->pool, &job->manifest, s->pool, s->manifest, s->unchecked));
    RLVR_TRY(rlvr_eval_tasks_from_pool(&job->tasks, &job->n_tasks, job->pool, job->manifest,
                                       s->all_splits ? NULL : &s->split, (size_t)s->limit));
    if (s->config) RLVR_TRY(rlvr_config_load(&job->cfg, s->config, s->schemas));
    /* the first checkpoint's stored configuration when no --config is given */
    for (int i = 0; i < s->n_checkpoints; i++)
        RLVR_TRY(rlvr_evaljob_load_checkpoint(s->checkpoints[i], s->schemas, &job->toks[i], &job->models[i],
                                              &job->info[i], i == 0 && !s->config ? &job->cfg : NULL));
    rlvr_eval_options o;
    RLVR_TRY(job_options(&o, job, s));
    for (int i = 0; i < s->n_checkpoints; i++) {
        rlvr_evaljob_say(&s->hooks, "eval: %s on %zu tasks x %lld samples", s->checkpoints[i], job->n_tasks,
                         (long long)s->samples);
        RLVR_TRY(rlvr_eval_run(&job->results[i], job->models[i], job->toks[i], job->tasks, job->n_tasks, &o));
    }
    if (s->n_checkpoints == 2) {
        RLVR_TRY(rlvr_eval_compare(&job->comparison, job->results[0], job->results[1], NULL, 0.95, 2000));
        job->compared = true;
    }
    return 0;
}

int rlvr_evaljob_run(rlvr_evaljob **out, const rlvr_evaljob_spec *spec) {
    if (spec->n_checkpoints < 1 || spec->n_checkpoints > 2)
        return RLVR_FAIL(RLVR_EINVAL, "one or two checkpoints, not %d", spec->n_checkpoints);
    rlvr_evaljob *job = calloc(1, sizeof *job);
    if (!job) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    int rc = job_evaluate(job, spec);
    if (rc < 0) {
        rlvr_evaljob_free(job);
        return rc;
    }
    *out = job;
    return 0;
}

static json_t *loads(const char *text) { return text ? json_loads(text, 0, NULL) : NULL; }

static json_t *checkpoint_json(const rlvr_evaljob *job, const rlvr_evaljob_spec *s, int i) {
    char *text = NULL;
    if (rlvr_eval_result_to_json(job->results[i], 0, &text) < 0) return NULL;
    json_t *r = json_pack("{s:s, s:I, s:I, s:o}", "checkpoint", s->checkpoints[i], "step",
                          (json_int_t)job->info[i].step, "policy_version", (json_int_t)job->info[i].policy_version,
                          "result", loads(text));
    free(text);
    return r;
}

int rlvr_evaljob_document(const rlvr_evaljob *job, const rlvr_evaljob_spec *s, char **out) {
    json_t *results = json_array();
    for (int i = 0; results && i < s->n_checkpoints; i++) json_array_append_new(results, checkpoint_json(job, s, i));
    json_t *doc = json_pack("{s:s, s:s, s:s, s:o}", "format", "rlvr-eval-report/1", "pool", s->pool, "split",
                            s->all_splits ? "all" : rlvr_split_name(s->split), "checkpoints", results);
    char *text = NULL;
    if (doc && job->compared && rlvr_eval_comparison_to_json(&job->comparison, &text) == 0)
        json_object_set_new(doc, "comparison", loads(text));
    free(text);
    bool complete = doc && json_array_size(results) == (size_t)s->n_checkpoints &&
                    (!job->compared || json_object_get(doc, "comparison"));
    *out = complete ? json_dumps(doc, JSON_PRESERVE_ORDER | JSON_INDENT(2) | JSON_REAL_PRECISION(10)) : NULL;
    json_decref(doc);
    return *out ? 0 : RLVR_FAIL(RLVR_ENOMEM, "out of memory rendering the report");
}
