/* tests/policy/test_model_train.c — the training path end to end.
 *
 * 1. A tiny model overfits a fixed batch of a small synthetic language
 *    (x_i = x_{i-1} + x_{i-2} mod V: every token after the second follows
 *    from the prefix) to a mean cross-entropy below 0.05.
 * 2. Training restored from a copy of (parameters, AdamW moments, step, RNG
 *    state) into a freshly built model continues bit-exactly. The RNG
 *    shuffles the packing order of the batch every step, so a wrong RNG
 *    restore changes the bits.
 * 3. Forward and backward give the same bits with 1 and 2 OpenMP threads. */
#include "core/rng.h"
#include "policy/model.h"
#include "policy/optim.h"
#include "test.h"

#include <omp.h>
#include <stdint.h>

enum { V = 16, N_SEQS = 8, MAX_LEN = 16 };

/* The fixed batch: sequence s has length 10 + s % 7 and starts (a, b). */
typedef struct {
    int32_t len[N_SEQS];
    int32_t tok[N_SEQS][MAX_LEN];
} corpus;

static void make_corpus(corpus *c) {
    rlvr_rng_stream s;
    rlvr_rng_stream_init(&s, 3, RLVR_RNG_TEST, 0, 0);
    for (int i = 0; i < N_SEQS; i++) {
        c->len[i] = 10 + i % 7;
        c->tok[i][0] = (int32_t)rlvr_rng_next_below(&s, V);
        c->tok[i][1] = (int32_t)rlvr_rng_next_below(&s, V);
        for (int t = 2; t < c->len[i]; t++) c->tok[i][t] = (c->tok[i][t - 1] + c->tok[i][t - 2]) % V;
    }
}

/* The trainer's whole state besides the model: step counter and RNG. */
typedef struct {
    int64_t step;
    rlvr_rng_stream rng; /* shuffles the packing order */
} train_state;

typedef struct {
    int32_t offsets[N_SEQS + 1];
    int32_t tokens[N_SEQS * MAX_LEN];
    float dlogprob[N_SEQS * MAX_LEN]; /* -mask / N: cross-entropy on predictable positions */
    rlvr_batch batch;
} packed;

/* Packs the corpus in the order `perm`; position 0 of a sequence (predicting
 * the free second token) is masked out. */
static void pack(packed *p, const corpus *c, const int *perm) {
    int T = 0, n = 0;
    p->offsets[0] = 0;
    for (int k = 0; k < N_SEQS; k++) {
        int s = perm[k];
        for (int t = 0; t < c->len[s]; t++) {
            p->tokens[T + t] = c->tok[s][t];
            p->dlogprob[T + t] = t >= 1 && t + 1 < c->len[s] ? 1.0f : 0.0f;
            n += p->dlogprob[T + t] != 0.0f;
        }
        T += c->len[s];
        p->offsets[k + 1] = T;
    }
    for (int t = 0; t < T; t++) p->dlogprob[t] *= -1.0f / (float)n;
    p->batch = (rlvr_batch){N_SEQS, p->offsets, p->tokens};
}

static void shuffled(int *perm, rlvr_rng_stream *rng) {
    for (int i = 0; i < N_SEQS; i++) perm[i] = i;
    for (int i = N_SEQS - 1; i > 0; i--) {
        int j = (int)rlvr_rng_next_below(rng, (uint32_t)i + 1);
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

/* Mean cross-entropy over the masked positions: J = Σ dlogprob·logπ with
 * dlogprob = -mask/N. */
static double mean_loss(const packed *p, const float *lp) {
    double J = 0.0;
    for (int t = 0; t < p->offsets[N_SEQS]; t++) J += (double)p->dlogprob[t] * lp[t];
    return J;
}

static int train_step(rlvr_model *m, train_state *st, const corpus *c, const rlvr_adamw_config *opt, double *loss) {
    int perm[N_SEQS];
    packed p;
    float lp[N_SEQS * MAX_LEN];
    shuffled(perm, &st->rng);
    pack(&p, c, perm);
    RLVR_TRY(rlvr_model_forward(m, &p.batch, 1.0f, lp, NULL));
    *loss = mean_loss(&p, lp);
    RLVR_TRY(rlvr_model_zero_grad(m));
    RLVR_TRY(rlvr_model_backward(m, p.dlogprob, NULL));
    return rlvr_model_adamw_step(m, opt, ++st->step, NULL);
}

static const rlvr_model_config tiny = {.vocab = V, .d_model = 32, .n_layers = 2, .n_heads = 4, .n_kv_heads = 2,
                                       .d_ff = 64, .max_seq = MAX_LEN, .rope_theta = 10000.0f, .norm_eps = 1e-5f,
                                       .tie_embeddings = true, .init_seed = 42, .init_std = 0.1f};
static const rlvr_adamw_config opt = {.lr = 1e-2f, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f,
                                      .weight_decay = 0.0f, .grad_clip = 1.0f, .warmup_steps = 10,
                                      .total_steps = 400, .min_lr_ratio = 0.1f, .schedule = RLVR_LR_COSINE};

/* A copy of everything training needs, taken between two steps. */
typedef struct {
    float *params, *m, *v; /* (num_params) */
    train_state st;
} snapshot;

static void snapshot_take(snapshot *s, rlvr_model *m, const train_state *st) {
    size_t n = rlvr_model_num_params(m) * sizeof(float);
    s->params = malloc(n);
    s->m = malloc(n);
    s->v = malloc(n);
    memcpy(s->params, rlvr_model_params(m), n);
    memcpy(s->m, rlvr_model_adam_m(m), n);
    memcpy(s->v, rlvr_model_adam_v(m), n);
    s->st = *st;
}

static int snapshot_restore(rlvr_model **out, train_state *st, const snapshot *s) {
    rlvr_model_config cfg = tiny;
    cfg.init_seed = 777; /* a different init: only the restore may make it match */
    RLVR_TRY(rlvr_model_new(out, &cfg));
    RLVR_TRY(rlvr_model_alloc_optim_state(*out));
    size_t n = rlvr_model_num_params(*out) * sizeof(float);
    memcpy(rlvr_model_params(*out), s->params, n);
    memcpy(rlvr_model_adam_m(*out), s->m, n);
    memcpy(rlvr_model_adam_v(*out), s->v, n);
    *st = s->st;
    return 0;
}

static void test_learns_and_resumes(void) {
    corpus c;
    make_corpus(&c);
    rlvr_model *a = NULL, *b = NULL;
    train_state sa, sb;
    sa.step = 0;
    rlvr_rng_stream_init(&sa.rng, 9, RLVR_RNG_SHUFFLE, 0, 0);
    CHECK_OK(rlvr_model_new(&a, &tiny));
    if (!a) return;
    double loss = 0.0, first = 0.0, lb = 0.0;
    for (int i = 0; i < 60; i++) {
        CHECK_OK(train_step(a, &sa, &c, &opt, &loss));
        if (i == 0) first = loss;
    }
    snapshot snap;
    snapshot_take(&snap, a, &sa);
    CHECK_OK(snapshot_restore(&b, &sb, &snap));
    int same_losses = 1;
    for (int i = 0; i < 20 && b; i++) {
        CHECK_OK(train_step(a, &sa, &c, &opt, &loss));
        CHECK_OK(train_step(b, &sb, &c, &opt, &lb));
        same_losses &= memcmp(&loss, &lb, sizeof loss) == 0;
    }
    size_t bytes = rlvr_model_num_params(a) * sizeof(float);
    CHECK(b && same_losses);
    CHECK(b && memcmp(rlvr_model_params(a), rlvr_model_params(b), bytes) == 0);
    CHECK(b && memcmp(rlvr_model_adam_v(a), rlvr_model_adam_v(b), bytes) == 0);
    CHECK(b && sa.step == sb.step);
    /* and the restore really mattered: the snapshot is behind the trained model */
    CHECK(memcmp(rlvr_model_params(a), snap.params, bytes) != 0);

    while (sa.step < 400 && loss >= 0.05) CHECK_OK(train_step(a, &sa, &c, &opt, &loss));
    printf("synthetic language: loss %.4f at step 1 -> %.4f at step %lld\n", first, loss, (long long)sa.step);
    CHECK_MSG(loss < 0.05, "mean loss %.4f after %lld steps", loss, (long long)sa.step);
    CHECK(first > 1.0);
    free(snap.params);
    free(snap.m);
    free(snap.v);
    rlvr_model_free(a);
    rlvr_model_free(b);
}

/* Gradients of one backward with `threads` OpenMP threads. */
static float *grads_with_threads(int threads, const packed *p, const float *dentropy) {
    omp_set_num_threads(threads);
    rlvr_model_config cfg = tiny;
    cfg.tie_embeddings = false;
    rlvr_model *m;
    if (rlvr_model_new(&m, &cfg) != 0) return NULL;
    float *g = NULL;
    if (rlvr_model_forward(m, &p->batch, 0.9f, NULL, NULL) == 0 && rlvr_model_zero_grad(m) == 0 &&
        rlvr_model_backward(m, p->dlogprob, dentropy) == 0) {
        size_t n = rlvr_model_num_params(m) * sizeof(float);
        g = malloc(n);
        memcpy(g, rlvr_model_grads(m), n);
    }
    rlvr_model_free(m);
    return g;
}

static void test_thread_count_invariance(void) {
    corpus c;
    make_corpus(&c);
    int perm[N_SEQS];
    for (int i = 0; i < N_SEQS; i++) perm[i] = N_SEQS - 1 - i;
    packed p;
    pack(&p, &c, perm);
    float dent[N_SEQS * MAX_LEN];
    for (int t = 0; t < N_SEQS * MAX_LEN; t++) dent[t] = 0.01f * (float)(t % 5);
    float *g1 = grads_with_threads(1, &p, dent), *g2 = grads_with_threads(2, &p, dent);
    rlvr_model_config cfg = tiny;
    cfg.tie_embeddings = false;
    rlvr_model *m;
    CHECK_OK(rlvr_model_new(&m, &cfg));
    CHECK(g1 && g2 && memcmp(g1, g2, rlvr_model_num_params(m) * sizeof(float)) == 0);
    rlvr_model_free(m);
    free(g1);
    free(g2);
    omp_set_num_threads(2);
}

static void test_errors(void) {
    rlvr_model_config bad = tiny;
    rlvr_model *m = NULL;
    bad.n_kv_heads = 3;
    CHECK(rlvr_model_new(&m, &bad) == RLVR_EINVAL && m == NULL);
    CHECK(strstr(rlvr_error_last(), "n_kv_heads") != NULL);
    CHECK_OK(rlvr_model_new(&m, &tiny));
    if (!m) return;
    float w[4] = {1, 1, 1, 1};
    CHECK(rlvr_model_backward(m, w, NULL) == RLVR_ESTATE);
    int32_t offsets[2] = {0, 4}, tokens[4] = {1, 2, V, 3};
    rlvr_batch b = {1, offsets, tokens};
    CHECK(rlvr_model_forward(m, &b, 1.0f, NULL, NULL) == RLVR_EINVAL);
    CHECK(strstr(rlvr_error_last(), "vocabulary") != NULL);
    tokens[2] = 0;
    CHECK(rlvr_model_forward(m, &b, 0.0f, NULL, NULL) == RLVR_EINVAL);
    int32_t long_offsets[2] = {0, MAX_LEN + 1}, long_tokens[MAX_LEN + 1] = {0};
    rlvr_batch lb = {1, long_offsets, long_tokens};
    CHECK(rlvr_model_forward(m, &lb, 1.0f, NULL, NULL) == RLVR_EINVAL);
    CHECK(strstr(rlvr_error_last(), "max_seq") != NULL);
    CHECK(rlvr_model_adamw_step(m, &opt, 1, NULL) == RLVR_ESTATE);
    rlvr_model_free(m);
}

/* The schedule at its landmarks, from its definition in optim.h. */
static void test_schedule(void) {
    rlvr_adamw_config o = opt;
    o.warmup_steps = 10;
    o.total_steps = 110;
    CHECK_NEAR(rlvr_lr_at(&o, 1), o.lr / 10, 1e-9);
    CHECK_NEAR(rlvr_lr_at(&o, 10), o.lr, 1e-9);
    CHECK_NEAR(rlvr_lr_at(&o, 60), o.lr * (o.min_lr_ratio + (1 - o.min_lr_ratio) * 0.5), 1e-8);
    CHECK_NEAR(rlvr_lr_at(&o, 110), o.lr * o.min_lr_ratio, 1e-9);
    CHECK_NEAR(rlvr_lr_at(&o, 1000), o.lr * o.min_lr_ratio, 1e-9);
    o.schedule = RLVR_LR_CONSTANT;
    CHECK_NEAR(rlvr_lr_at(&o, 1000), o.lr, 1e-9);
}

int main(void) {
    test_errors();
    test_schedule();
    test_thread_count_invariance();
    test_learns_and_resumes();
    return test_summary("test_model_train");
}
