/* tests/io/io_samples.h — one small file of every kind rlvr writes, for the
 * corruption test and the h5py / h5dump readers test. */
#ifndef RLVR_TESTS_IO_SAMPLES_H
#define RLVR_TESTS_IO_SAMPLES_H

#include "core/error.h"
#include "io/checkpoint.h"
#include "io/manifest.h"
#include "io/metrics.h"
#include "io/shard.h"
#include "io_fixtures.h"

#include <math.h>

static const rlvr_model_config sample_model_config = {
    .vocab = 40, .d_model = 16, .n_layers = 2, .n_heads = 4, .n_kv_heads = 2, .d_ff = 24, .max_seq = 32,
    .rope_theta = 10000.0f, .norm_eps = 1e-5f, .tie_embeddings = true, .init_seed = 3, .init_std = 0.02f,
};

/* dir/step_00000005.rank_0001.h5 with n rollouts, at the default level,
 * in chunks of 64 tokens: readers decode many chunks that were encoded on
 * helper threads, not just one partial chunk per column. */
static inline int sample_shard(const char *dir, int n, char *path, size_t cap) {
    rlvr_shard_writer *w;
    rlvr_shard_options opt = RLVR_SHARD_OPTIONS_INIT;
    opt.chunk_tokens = 64;
    RLVR_TRY(rlvr_shard_create(&w, dir, 5, 1, &opt));
    rlvr_rollout r;
    int rc = rlvr_rollout_init(&r, 16, 2);
    for (int k = 0; rc == 0 && k < n; k++) {
        rc = fixture_rollout(&r, 11, k, 1 + k % 3, 12);
        if (rc == 0) rc = rlvr_shard_append(w, &r, (float)k - 1.5f);
    }
    rlvr_rollout_free(&r);
    if (rc < 0) {
        rlvr_shard_abort(w);
        return rc;
    }
    return rlvr_shard_commit(w, path, cap);
}

/* dir/ckpt/step_00000003.h5 with a model, moments and state arrays. */
static inline int sample_checkpoint(const char *dir, char *path, size_t cap) {
    rlvr_model *m;
    RLVR_TRY(rlvr_model_new(&m, &sample_model_config));
    int rc = rlvr_model_alloc_optim_state(m);
    size_t n = rlvr_model_num_params(m);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rlvr_model_adam_m(m)[i] = 1e-3f * (float)(i % 97);
        rlvr_model_adam_v(m)[i] = 1e-6f * (float)(i % 89);
    }
    char sub[4200];
    snprintf(sub, sizeof sub, "%s/ckpt", dir);
    rlvr_checkpoint_options opt = RLVR_CHECKPOINT_OPTIONS_INIT;
    opt.step = 3;
    opt.policy_version = 3;
    opt.config_text = "[run]\nname = sample\n";
    opt.config_hash = 99;
    opt.fsync = false;
    rlvr_checkpoint_writer *w = NULL;
    if (rc == 0) rc = rlvr_checkpoint_begin(&w, sub, &opt);
    if (rc == 0) rc = rlvr_checkpoint_put_model(w, m);
    float table[4][2] = {{0.5f, 3}, {0.25f, 8}, {0.75f, 4}, {0.0f, 1}};
    rlvr_state_array a = {.name = "difficulty/table", .dtype = RLVR_DT_F32, .rank = 2, .dims = {4, 2}, .data = table};
    if (rc == 0) rc = rlvr_checkpoint_put_array(w, &a);
    rlvr_rng_stream s;
    rlvr_rng_stream_init(&s, 5, RLVR_RNG_TASKS, 3, 0);
    if (rc == 0) rc = rlvr_checkpoint_put_rng(w, "rng/tasks", &s);
    if (rc == 0) rc = rlvr_checkpoint_commit(w, path, cap);
    else rlvr_checkpoint_abort(w);
    rlvr_model_free(m);
    return rc;
}

/* dir/metrics.h5 with `rows` rows, closed. */
static inline int sample_metrics(const char *dir, int rows, char *path, size_t cap) {
    snprintf(path, cap, "%s/metrics.h5", dir);
    rlvr_metrics *m;
    RLVR_TRY(rlvr_metrics_open(&m, path, -1));
    int rc = 0;
    for (int s = 1; rc == 0 && s <= rows; s++) {
        rlvr_metrics_row row;
        rlvr_metrics_row_init(&row, s);
        row.value[RLVR_METRIC_REWARD_MEAN] = 0.1 * s;
        row.value[RLVR_METRIC_LOSS] = 1.0 / s;
        rc = rlvr_metrics_append(m, &row);
    }
    int close_rc = rlvr_metrics_close(m);
    return rc < 0 ? rc : close_rc;
}

/* dir/manifest.h5. */
static inline int sample_manifest(const char *dir, char *path, size_t cap) {
    snprintf(path, cap, "%s/manifest.h5", dir);
    const char *hosts[] = {"nodeA", "nodeB"};
    rlvr_manifest_options opt = RLVR_MANIFEST_OPTIONS_INIT;
    opt.run_name = "sample";
    opt.config_text = "[run]\nname = sample\n";
    opt.hosts = hosts;
    opt.n_hosts = 2;
    rlvr_manifest *m;
    RLVR_TRY(rlvr_manifest_new(&m, &opt));
    int rc = rlvr_manifest_finish(m, "finished", 3, 3);
    if (rc == 0) rc = rlvr_manifest_write(m, path);
    rlvr_manifest_free(m);
    return rc;
}

#endif
