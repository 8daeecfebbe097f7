/* jobs/evalcommon.c — loading shared by the evaluation commands
 * (jobs/evalcommon.h). */
#include "jobs/evalcommon.h"

#include "core/error.h"
#include "jobs/schemas.h"

#include <stdio.h>

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

int rlvr_evaljob_load_checkpoint(const char *path, rlvr_tokenizer **tok, rlvr_model **model,
                                 rlvr_checkpoint_info *info, rlvr_config **stored_config) {
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
        rc = rlvr_config_parse(stored_config, text, path, rlvr_all_config_schemas);
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

void rlvr_evaljob_progress(void *arg, const rlvr_eval_progress *p) {
    double *last = arg;
    if (p->tasks_done < p->tasks_total && p->elapsed_s - *last < 2.0) return;
    *last = p->elapsed_s;
    fprintf(stderr, "eval: %zu/%zu tasks, passed %lld of %lld scored (%.1f %%), infra %lld, %.2f rollouts/s, %.0f s\n",
            p->tasks_done, p->tasks_total, (long long)p->passed, (long long)p->scored,
            p->scored ? 100.0 * (double)p->passed / (double)p->scored : 0.0, (long long)p->infra, p->rollouts_per_s,
            p->elapsed_s);
}

int rlvr_evaljob_options(rlvr_eval_options *o, const rlvr_config *cfg, int32_t samples, uint64_t seed,
                         double *last) {
    rlvr_eval_options_default(o);
    if (cfg) RLVR_TRY(rlvr_eval_options_from_config(o, cfg));
    o->samples = samples;
    o->sampler.seed = seed;
    o->progress = rlvr_evaljob_progress;
    o->progress_arg = last;
    return 0;
}
