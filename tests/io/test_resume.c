/* Resume exactness: train N steps, save a checkpoint (model, AdamW moments,
 * step, the data RNG), load it into a freshly built model in a fresh
 * trainer state, train N more steps: every loss and every bit of the
 * parameters and moments equals those of a run that never stopped. Two
 * broken restores (no checkpoint; moments zeroed) must differ, so the
 * comparison can fail. */
#include "core/rng.h"
#include "io/checkpoint.h"
#include "io_fixtures.h"
#include "policy/model.h"
#include "policy/optim.h"
#include "test.h"

enum { V = 48, N_SEQS = 4, MAX_LEN = 20, STEPS = 6 };

static const rlvr_model_config config = {
    .vocab = V, .d_model = 32, .n_layers = 2, .n_heads = 4, .n_kv_heads = 2, .d_ff = 48, .max_seq = MAX_LEN,
    .rope_theta = 10000.0f, .norm_eps = 1e-5f, .tie_embeddings = false, .init_seed = 21, .init_std = 0.05f,
};
static const rlvr_adamw_config adamw = {
    .lr = 5e-3f, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f, .weight_decay = 0.1f, .grad_clip = 1.0f,
    .warmup_steps = 2, .total_steps = 2 * STEPS, .min_lr_ratio = 0.1f, .schedule = RLVR_LR_COSINE,
};

/* Everything the trainer owns besides the model. */
typedef struct {
    int64_t step;
    rlvr_rng_stream data; /* draws each step's batch */
} trainer;

/* One step of next-token cross-entropy on a batch drawn from st->data
 * (sequence lengths and first tokens are random). */
static int train_step(rlvr_model *m, trainer *st, double *loss) {
    int32_t offsets[N_SEQS + 1] = {0}, tokens[N_SEQS * MAX_LEN];
    float lp[N_SEQS * MAX_LEN], dlp[N_SEQS * MAX_LEN];
    int T = 0, n = 0;
    for (int s = 0; s < N_SEQS; s++) {
        int len = 8 + (int)rlvr_rng_next_below(&st->data, MAX_LEN - 8 + 1);
        int32_t first = (int32_t)rlvr_rng_next_below(&st->data, V);
        for (int t = 0; t < len; t++) {
            tokens[T + t] = (first + 3 * t) % V; /* learnable: loss falls */
            dlp[T + t] = t + 1 < len ? 1.0f : 0.0f;
            n += t + 1 < len;
        }
        T += len;
        offsets[s + 1] = T;
    }
    for (int t = 0; t < T; t++) dlp[t] *= -1.0f / (float)n;
    rlvr_batch b = {N_SEQS, offsets, tokens};
    RLVR_TRY(rlvr_model_forward(m, &b, 1.0f, lp, NULL));
    double J = 0;
    for (int t = 0; t < T; t++) J += (double)dlp[t] * lp[t];
    *loss = J;
    RLVR_TRY(rlvr_model_zero_grad(m));
    RLVR_TRY(rlvr_model_backward(m, dlp, NULL));
    return rlvr_model_adamw_step(m, &adamw, ++st->step, NULL);
}

static bool same_state(rlvr_model *a, rlvr_model *b) {
    size_t n = rlvr_model_num_params(a) * sizeof(float);
    return rlvr_model_num_params(a) == rlvr_model_num_params(b) &&
           memcmp(rlvr_model_params(a), rlvr_model_params(b), n) == 0 &&
           memcmp(rlvr_model_adam_m(a), rlvr_model_adam_m(b), n) == 0 &&
           memcmp(rlvr_model_adam_v(a), rlvr_model_adam_v(b), n) == 0;
}

static int save(const char *dir, rlvr_model *m, const trainer *st, char *path, size_t cap) {
    rlvr_checkpoint_options opt = RLVR_CHECKPOINT_OPTIONS_INIT;
    opt.step = st->step;
    opt.policy_version = st->step;
    opt.fsync = false;
    rlvr_checkpoint_writer *w;
    RLVR_TRY(rlvr_checkpoint_begin(&w, dir, &opt));
    int rc = rlvr_checkpoint_put_model(w, m);
    if (rc == 0) rc = rlvr_checkpoint_put_rng(w, "rng/data", &st->data);
    if (rc < 0) {
        rlvr_checkpoint_abort(w);
        return rc;
    }
    return rlvr_checkpoint_commit(w, path, cap);
}

/* A fresh trainer and model from the checkpoint at `path`. */
static int resume(const char *path, rlvr_model **m, trainer *st) {
    rlvr_checkpoint *ck;
    RLVR_TRY(rlvr_checkpoint_open(&ck, path));
    memset(st, 0xff, sizeof *st); /* nothing survives from before */
    int rc = rlvr_checkpoint_load_model(ck, m);
    if (rc == 0) rc = rlvr_checkpoint_read_rng(ck, "rng/data", &st->data);
    st->step = rlvr_checkpoint_info_of(ck)->step;
    rlvr_checkpoint_close(ck);
    return rc;
}

int main(void) {
    char dir[4096], path[4200];
    fixture_tmpdir(dir, sizeof dir, "resume");

    /* uninterrupted */
    rlvr_model *a = NULL;
    trainer ta = {0};
    rlvr_rng_stream_init(&ta.data, 8, RLVR_RNG_SHUFFLE, 0, 0);
    CHECK_OK(rlvr_model_new(&a, &config));
    if (!a) return test_summary("test_resume");
    double loss_a[2 * STEPS];
    for (int k = 0; k < 2 * STEPS; k++) CHECK_OK(train_step(a, &ta, &loss_a[k]));
    CHECK(loss_a[2 * STEPS - 1] < loss_a[0]);

    /* stopped after STEPS, saved, resumed in a fresh model */
    rlvr_model *b = NULL;
    trainer tb = {0};
    rlvr_rng_stream_init(&tb.data, 8, RLVR_RNG_SHUFFLE, 0, 0);
    CHECK_OK(rlvr_model_new(&b, &config));
    double loss;
    for (int k = 0; k < STEPS; k++) CHECK_OK(train_step(b, &tb, &loss));
    CHECK_OK(save(dir, b, &tb, path, sizeof path));
    trainer saved = tb;
    rlvr_model_free(b);

    rlvr_model *c = NULL;
    trainer tc;
    CHECK_OK(resume(path, &c, &tc));
    if (!c) return test_summary("test_resume");
    CHECK(tc.step == STEPS);
    bool same_losses = true;
    for (int k = STEPS; k < 2 * STEPS; k++) {
        CHECK_OK(train_step(c, &tc, &loss));
        same_losses = same_losses && loss == loss_a[k];
    }
    CHECK_MSG(same_losses, "losses after the resume differ from the uninterrupted run");
    CHECK_MSG(same_state(a, c), "parameters or moments differ from the uninterrupted run");
    CHECK(tc.step == ta.step);

    /* broken restores must not match: without the checkpoint ... */
    rlvr_model *d = NULL;
    trainer td = saved;
    CHECK_OK(rlvr_model_new(&d, &config));
    for (int k = STEPS; d && k < 2 * STEPS; k++) CHECK_OK(train_step(d, &td, &loss));
    CHECK(d && !same_state(a, d));
    rlvr_model_free(d);
    /* ... and with the moments lost */
    trainer te;
    rlvr_model *e = NULL;
    CHECK_OK(resume(path, &e, &te));
    if (e) {
        memset(rlvr_model_adam_m(e), 0, rlvr_model_num_params(e) * sizeof(float));
        for (int k = STEPS; k < 2 * STEPS; k++) CHECK_OK(train_step(e, &te, &loss));
        CHECK(!same_state(a, e));
        rlvr_model_free(e);
    }
    rlvr_model_free(c);
    rlvr_model_free(a);
    fixture_rmtree(dir);
    return test_summary("test_resume");
}
