/* tests/policy/test_model_checkpoint.c — q/k/v biases and RoPE scaling in
 * checkpoints (io/checkpoint_model.c).
 *
 * A model with qkv_bias and Llama-3 scaling is stored and read back: the
 * configuration field by field, every parameter (the biases included) bit
 * for bit, and a model of another scaling is refused. A checkpoint written
 * before these attributes existed (they are deleted here) reads as
 * qkv_bias false and no scaling, and loads into such a model. */
#include "core/rng.h"
#include "io/checkpoint.h"
#include "io/h5util.h"
#include "policy/model.h"
#include "test.h"

#include <stdlib.h>
#include <unistd.h>

static rlvr_model_config base_config(void) {
    return (rlvr_model_config){.vocab = 50, .d_model = 32, .n_layers = 2, .n_heads = 4, .n_kv_heads = 2,
                               .d_ff = 40, .max_seq = 64, .rope_theta = 10000.0f, .norm_eps = 1e-5f,
                               .init_seed = 3, .init_std = 0.05f};
}

/* Stores `m` as step `step` of dir; the file's path into path. */
static int store(const char *dir, int64_t step, rlvr_model *m, char *path, size_t cap) {
    rlvr_checkpoint_options opt = RLVR_CHECKPOINT_OPTIONS_INIT;
    opt.step = step;
    opt.fsync = false;
    opt.keep_last = 0;
    rlvr_checkpoint_writer *w = NULL;
    RLVR_TRY(rlvr_checkpoint_begin(&w, dir, &opt));
    int rc = rlvr_checkpoint_put_model(w, m);
    if (rc < 0) {
        rlvr_checkpoint_abort(w);
        return rc;
    }
    return rlvr_checkpoint_commit(w, path, cap);
}

static void test_round_trip(const char *dir) {
    rlvr_model_config c = base_config();
    c.qkv_bias = true;
    c.rope_scaling = (rlvr_rope_scaling){RLVR_ROPE_SCALING_LLAMA3, 8.0f, 1.0f, 4.0f, 32};
    rlvr_model *m = NULL;
    CHECK_OK(rlvr_model_new(&m, &c));
    if (!m) return;
    rlvr_rng_stream s;
    rlvr_rng_stream_init(&s, 5, RLVR_RNG_TEST, 0, 1);
    float *p = rlvr_model_params(m);
    size_t n = rlvr_model_num_params(m);
    for (size_t i = 0; i < n; i++) p[i] = (float)rlvr_rng_next_normal(&s); /* the biases too */
    char path[4096];
    CHECK_OK(store(dir, 1, m, path, sizeof path));
    rlvr_checkpoint *ck = NULL;
    CHECK_OK(rlvr_checkpoint_open(&ck, path));
    if (!ck) return;
    rlvr_model_config back;
    CHECK_OK(rlvr_checkpoint_model_config(ck, &back));
    CHECK(back.qkv_bias && back.rope_scaling.kind == RLVR_ROPE_SCALING_LLAMA3);
    CHECK(back.rope_scaling.factor == 8.0f && back.rope_scaling.low_freq_factor == 1.0f &&
          back.rope_scaling.high_freq_factor == 4.0f && back.rope_scaling.original_max_seq == 32);
    rlvr_model *loaded = NULL;
    CHECK_OK(rlvr_checkpoint_load_model(ck, &loaded));
    if (loaded) {
        CHECK(rlvr_model_num_params(loaded) == n);
        CHECK(memcmp(rlvr_model_params_read(loaded), p, n * sizeof(float)) == 0);
        CHECK(rlvr_model_param_views(loaded)->bv[0] == rlvr_model_param_views(m)->bv[0]);
    }
    /* a model that differs only in its scaling is not this checkpoint's */
    rlvr_model *other = NULL;
    c.rope_scaling.factor = 16.0f;
    CHECK_OK(rlvr_model_new(&other, &c));
    if (other) CHECK(rlvr_checkpoint_read_model(ck, other) == RLVR_EFORMAT);
    CHECK_MSG(strstr(rlvr_error_last(), "rope_scaling.factor"), "%s", rlvr_error_last());
    rlvr_model_free(other);
    rlvr_model_free(loaded);
    rlvr_checkpoint_close(ck);
    rlvr_model_free(m);
}

static void test_old_checkpoint(const char *dir) {
    rlvr_model_config c = base_config();
    rlvr_model *m = NULL;
    CHECK_OK(rlvr_model_new(&m, &c));
    if (!m) return;
    char path[4096];
    CHECK_OK(store(dir, 2, m, path, sizeof path));
    static const char *const added[] = {"qkv_bias",           "rope_scaling",         "rope_scaling_factor",
                                        "rope_low_freq_factor", "rope_high_freq_factor", "rope_original_max_seq"};
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t g = H5Gopen2(f, "model", H5P_DEFAULT);
    for (size_t i = 0; i < sizeof added / sizeof added[0]; i++) CHECK(H5Adelete(g, added[i]) >= 0);
    H5Gclose(g);
    H5Fclose(f);
    rlvr_checkpoint *ck = NULL;
    CHECK_OK(rlvr_checkpoint_open(&ck, path));
    if (ck) {
        rlvr_model_config back;
        memset(&back, 0xff, sizeof back);
        CHECK_OK(rlvr_checkpoint_model_config(ck, &back));
        CHECK(!back.qkv_bias && back.rope_scaling.kind == RLVR_ROPE_SCALING_NONE);
        CHECK(back.rope_scaling.factor == 0.0f && back.rope_scaling.original_max_seq == 0);
        CHECK_OK(rlvr_checkpoint_read_model(ck, m));
    }
    rlvr_checkpoint_close(ck);
    rlvr_model_free(m);
}

int main(void) {
    char dir[] = "/tmp/rlvr_model_ckpt_XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_round_trip(dir);
    test_old_checkpoint(dir);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return test_summary("test_model_checkpoint");
}
