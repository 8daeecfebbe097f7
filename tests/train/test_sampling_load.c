/* tests/train/test_sampling_load.c — a checkpoint loaded for sampling
 * (train/sampling.h), on small random models (tied and untied LM head,
 * with q/k/v biases):
 * - with bf16 and q8_0 weights the streamed load gives a sampler whose
 *   tokens, log-probs and entropies are bit-identical to those of the
 *   ordinary path (the model loaded in full, rlvr_sampler_new on it), over
 *   a prefill, forks and decode steps at τ = 1;
 * - the matrices the packed copy covers (wq ... w_down, an untied lm_head)
 *   are really given back: mincore() finds none of their whole pages
 *   resident, while the embedding table, the norms and the biases the
 *   sampler still reads are, and so is every matrix of the fully loaded
 *   model (so the page count can tell the two apart);
 * - with f32 weights nothing is released (every matrix page resident). */
#include "core/error.h"
#include "io/checkpoint.h"
#include "policy/model.h"
#include "policy/sampler.h"
#include "test.h"
#include "train_fixtures.h"
#include "train/sampling.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { SLOTS = 3, STEPS = 24 };

static int write_checkpoint(const char *dir, bool tied, char *path, size_t cap) {
    rlvr_tokenizer *tok = NULL;
    rlvr_model *m = NULL;
    int rc = rlvr_tokenizer_new_byte(&tok);
    if (rc == 0) {
        rlvr_model_config c = {.vocab = rlvr_tokenizer_vocab_size(tok), .d_model = 64, .n_layers = 2, .n_heads = 4,
                               .n_kv_heads = 2, .d_ff = 256, .max_seq = 128, .rope_theta = 10000.0f,
                               .norm_eps = 1e-5f, .tie_embeddings = tied, .qkv_bias = true, .init_seed = 17,
                               .init_std = 0.3f};
        rc = rlvr_model_new(&m, &c);
    }
    /* biases of 0 would hide a bias read from released memory: give them values */
    if (rc == 0) {
        float *p = rlvr_model_params(m);
        for (int i = RLVR_PARAM_TENSORS - 3; i < RLVR_PARAM_TENSORS; i++) { /* bq, bk, bv */
            float *t = p + rlvr_model_tensor_offset(m, i);
            for (size_t k = 0; k < rlvr_model_tensor_size(m, i); k++) t[k] = 0.01f * (float)((k * 7 + (size_t)i) % 13);
        }
    }
    if (rc == 0) rc = fixture_save_checkpoint(dir, m, tok, path, cap);
    rlvr_model_free(m);
    rlvr_tokenizer_free(tok);
    return rc;
}

/* Whole pages of tensor i resident in memory, and how many whole pages it has. */
static size_t resident_pages(const rlvr_model *m, int i, size_t *pages) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = (uintptr_t)(rlvr_model_params_read(m) + rlvr_model_tensor_offset(m, i));
    uintptr_t lo = (a + page - 1) / page * page, hi = (a + rlvr_model_tensor_size(m, i) * sizeof(float)) / page * page;
    *pages = hi > lo ? (hi - lo) / page : 0;
    if (*pages == 0) return 0;
    unsigned char *vec = calloc(*pages, 1);
    size_t n = 0;
    if (vec && mincore((void *)lo, hi - lo, vec) == 0)
        for (size_t k = 0; k < *pages; k++) n += vec[k] & 1;
    free(vec);
    return n;
}

static bool is_packed_matrix(const rlvr_model *m, int i) {
    static const char *const names[] = {"wq", "wk", "wv", "wo", "w_gate", "w_up", "w_down", "lm_head"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (strcmp(rlvr_model_tensor_name(i), names[k]) == 0) return rlvr_model_tensor_size(m, i) > 0;
    return false;
}

/* released: the streamed model (packed matrices gone, the rest there); else all there. */
static void check_pages(const rlvr_model *m, bool released, const char *what) {
    int matrices = 0;
    for (int i = 0; i < RLVR_PARAM_TENSORS; i++) {
        size_t pages = 0, resident = resident_pages(m, i, &pages);
        if (pages == 0) continue;
        bool gone = released && is_packed_matrix(m, i);
        matrices += is_packed_matrix(m, i);
        CHECK_MSG(resident == (gone ? 0 : pages), "%s: tensor %s: %zu of %zu whole pages resident, expected %zu", what,
                  rlvr_model_tensor_name(i), resident, pages, gone ? (size_t)0 : pages);
    }
    CHECK_MSG(matrices >= 7, "%s: only %d matrices span a whole page", what, matrices);
}

/* The same draws from both samplers: a prompt, forks, STEPS decode steps. */
static void check_same_draws(rlvr_sampler *a, rlvr_sampler *b, const char *what) {
    static const int32_t prompt[] = {72, 101, 108, 108, 111, 44, 32, 119, 111, 114, 108, 100};
    rlvr_sampler *s[2] = {a, b};
    rlvr_sample out[2][SLOTS];
    int32_t slots[SLOTS];
    for (int k = 0; k < 2; k++) {
        CHECK_OK(rlvr_sampler_reset(s[k], 0, 3, 0));
        CHECK_OK(rlvr_sampler_prefill(s[k], 0, prompt, (int)(sizeof prompt / sizeof prompt[0])));
        for (int j = 1; j < SLOTS; j++) CHECK_OK(rlvr_sampler_fork(s[k], j, 0, (uint32_t)j));
    }
    for (int j = 0; j < SLOTS; j++) slots[j] = j;
    int differ = 0, n = 0;
    for (int step = 0; step < STEPS; step++) {
        for (int k = 0; k < 2; k++) CHECK_OK(rlvr_sampler_decode(s[k], slots, SLOTS, out[k]));
        for (int j = 0; j < SLOTS; j++, n++)
            differ += out[0][j].token != out[1][j].token ||
                      memcmp(&out[0][j].logprob, &out[1][j].logprob, sizeof(float)) != 0 ||
                      memcmp(&out[0][j].entropy, &out[1][j].entropy, sizeof(float)) != 0;
    }
    CHECK_MSG(differ == 0, "%s: %d of %d draws differ between the streamed and the ordinary load", what, differ, n);
}

static void test_checkpoint(const char *path, bool tied) {
    static const rlvr_sampler_weights formats[] = {RLVR_SAMPLER_WEIGHTS_F32, RLVR_SAMPLER_WEIGHTS_BF16,
                                                   RLVR_SAMPLER_WEIGHTS_Q8_0};
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
        char what[64];
        snprintf(what, sizeof what, "%s, %s", tied ? "tied" : "untied", rlvr_sampler_weights_name(formats[f]));
        rlvr_sampler_config sc;
        rlvr_sampler_config_default(&sc);
        sc.temperature = 1.0f;
        sc.kv_slots = SLOTS;
        sc.seed = 9;
        sc.weights = formats[f];
        rlvr_checkpoint *ck = NULL;
        rlvr_model *full = NULL, *streamed = NULL;
        rlvr_sampler *ordinary = NULL, *loaded = NULL;
        CHECK_OK(rlvr_checkpoint_open(&ck, path));
        if (ck) CHECK_OK(rlvr_checkpoint_load_model(ck, &full));
        if (full) CHECK_OK(rlvr_sampler_new(&ordinary, full, &sc));
        if (ck) CHECK_OK(rlvr_sampling_load(ck, &sc, &streamed, &loaded));
        rlvr_checkpoint_close(ck);
        if (ordinary && loaded) {
            check_pages(full, false, what);
            check_pages(streamed, formats[f] != RLVR_SAMPLER_WEIGHTS_F32, what);
            check_same_draws(ordinary, loaded, what);
        }
        rlvr_sampler_free(loaded);
        rlvr_sampler_free(ordinary);
        rlvr_model_free(streamed);
        rlvr_model_free(full);
    }
}

int main(void) {
    char dir[] = "/tmp/rlvr-test-sampling-load-XXXXXX", path[4200];
    if (!mkdtemp(dir)) return 1;
    for (int tied = 0; tied < 2; tied++) {
        CHECK_OK(write_checkpoint(dir, tied, path, sizeof path));
        test_checkpoint(path, tied);
        unlink(path);
    }
    rmdir(dir);
    return test_summary("test_sampling_load");
}
