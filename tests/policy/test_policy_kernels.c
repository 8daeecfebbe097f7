/* tests/policy/test_policy_kernels.c — the kernels of policy/kernels.h in
 * isolation, and the whole model's gradient against finite differences on a
 * tiny config (a check that needs no PyTorch). */
#include "core/rng.h"
#include "policy/kernels.h"
#include "policy/sampler_kernels.h"
#include "policy/model.h"
#include "test.h"

#include <stdint.h>
#include <string.h>

static rlvr_rng_stream rng;

static void fill_normal(float *x, size_t n, double std) {
    for (size_t i = 0; i < n; i++) x[i] = (float)(std * rlvr_rng_next_normal(&rng));
}

static double dot(const float *a, const float *b, size_t n) {
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += (double)a[i] * b[i];
    return s;
}

/* ‖a − b‖ / ‖b‖ */
static double rel_diff(const float *a, const float *b, size_t n) {
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; i++) {
        num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        den += (double)b[i] * b[i];
    }
    return sqrt(num / (den > 0.0 ? den : 1.0));
}

/* RoPE is a rotation: backward is its transpose (⟨Rx, y⟩ = ⟨x, Rᵀy⟩) and
 * its inverse; position 0 leaves a row unchanged. */
static void test_rope(void) {
    enum { N = 7, H = 3, HD = 8, W = H * HD };
    float x[N * W], y[N * W], rx[N * W], ry[N * W];
    int32_t pos[N] = {0, 1, 2, 5, 17, 100, 2047};
    fill_normal(x, N * W, 1.0);
    fill_normal(y, N * W, 1.0);
    memcpy(rx, x, sizeof x);
    memcpy(ry, y, sizeof y);
    rope_forward(rx, pos, N, H, HD, 10000.0f, NULL);
    rope_backward(ry, pos, N, H, HD, 10000.0f, NULL);
    CHECK_NEAR(dot(rx, y, N * W), dot(x, ry, N * W), 1e-4);
    CHECK_NEAR(dot(rx, rx, N * W), dot(x, x, N * W), 1e-3);
    CHECK(memcmp(rx, x, W * sizeof(float)) == 0); /* row 0 sits at position 0 */
    CHECK(memcmp(rx + W, x + W, W * sizeof(float)) != 0);
    rope_backward(rx, pos, N, H, HD, 10000.0f, NULL);
    CHECK(rel_diff(rx, x, N * W) < 1e-6);
    /* the documented convention: pair (2i, 2i+1) turns by pos·theta^(-2i/hd) */
    float e[HD] = {0};
    e[2] = 1.0f; /* pair i = 1 */
    int32_t p3 = 3;
    rope_forward(e, &p3, 1, 1, HD, 10000.0f, NULL);
    double ang = 3.0 * pow(10000.0, -2.0 / HD);
    CHECK_NEAR(e[2], cos(ang), 1e-6);
    CHECK_NEAR(e[3], sin(ang), 1e-6);
}

/* Llama-3 scaling by band: with head size 16 and theta 1e4 the wavelengths
 * 2π·1e4^(i/8) are 6.3, 20 | 63, 199 | 628 … 2e4 against 256/8 and 256/1:
 * pairs 0-1 keep theta^(-2i/hd) bit for bit, 4-7 take it / 8 exactly, 2-3
 * fall between. Kind NONE (or NULL) is the unscaled power, bit for bit. */
static void test_rope_llama3(void) {
    enum { HD = 16 };
    rlvr_rope_scaling none = {0}, llama3 = {RLVR_ROPE_SCALING_LLAMA3, 8.0f, 1.0f, 8.0f, 256};
    for (int i = 0; i < HD / 2; i++) {
        double f = pow(10000.0, -2.0 * i / HD), g = rope_inv_freq(i, HD, 10000.0f, &llama3);
        CHECK(rope_inv_freq(i, HD, 10000.0f, NULL) == f && rope_inv_freq(i, HD, 10000.0f, &none) == f);
        if (i < 2) CHECK_MSG(g == f, "pair %d: %.17g, want %.17g", i, g, f);
        else if (i < 4) CHECK_MSG(g < f && g > f / 8.0, "pair %d: %.17g not inside (%.17g, %.17g)", i, g, f / 8.0, f);
        else CHECK_MSG(g == f / 8.0, "pair %d: %.17g, want %.17g", i, g, f / 8.0);
    }
    /* the sampler's table turns by the scaled frequency */
    float table[2 * HD];
    rope_table(table, 0, 2, HD, 10000.0f, &llama3);
    CHECK_NEAR(table[HD + 2 * 5 + 1], sin(pow(10000.0, -10.0 / HD) / 8.0), 1e-7); /* position 1, pair 5 */
}

/* Central differences of L = Σ r·f(x) against the analytic backward. */
typedef void (*fwd_fn)(float *out, const float *x, const float *w, int N, int C);

static void rms_fwd(float *out, const float *x, const float *w, int N, int C) {
    rmsnorm_forward(out, NULL, x, w, N, C, 1e-5f);
}

static double probe(fwd_fn f, const float *x, const float *w, const float *r, int N, int C, float *scratch) {
    f(scratch, x, w, N, C);
    return dot(scratch, r, (size_t)N * C);
}

static void test_rmsnorm(void) {
    enum { N = 5, C = 12 };
    float x[N * C], w[C], r[N * C], out[N * C], rstd[N], scratch[N * C];
    fill_normal(x, N * C, 1.0);
    fill_normal(w, C, 1.0);
    fill_normal(r, N * C, 1.0);
    rmsnorm_forward(out, rstd, x, w, N, C, 1e-5f);
    for (int n = 0; n < N; n++) {
        double ms = dot(x + n * C, x + n * C, C) / C;
        CHECK_NEAR(rstd[n], 1.0 / sqrt(ms + 1e-5), 1e-5);
    }
    float dx[N * C], dw[C], fdx[N * C], fdw[C];
    for (int i = 0; i < N * C; i++) dx[i] = 0.5f; /* backward must add, not overwrite */
    for (int i = 0; i < C; i++) dw[i] = -0.25f;
    rmsnorm_backward(dx, dw, r, x, w, rstd, N, C);
    for (int i = 0; i < N * C; i++) dx[i] -= 0.5f;
    for (int i = 0; i < C; i++) dw[i] += 0.25f;
    const float h = 1e-2f;
    for (int i = 0; i < N * C; i++) {
        float keep = x[i];
        x[i] = keep + h;
        double lp = probe(rms_fwd, x, w, r, N, C, scratch);
        x[i] = keep - h;
        double lm = probe(rms_fwd, x, w, r, N, C, scratch);
        x[i] = keep;
        fdx[i] = (float)((lp - lm) / (2 * h));
    }
    for (int i = 0; i < C; i++) {
        float keep = w[i];
        w[i] = keep + h;
        double lp = probe(rms_fwd, x, w, r, N, C, scratch);
        w[i] = keep - h;
        double lm = probe(rms_fwd, x, w, r, N, C, scratch);
        w[i] = keep;
        fdw[i] = (float)((lp - lm) / (2 * h));
    }
    CHECK_MSG(rel_diff(dx, fdx, N * C) < 1e-3, "rmsnorm dx rel %g", rel_diff(dx, fdx, N * C));
    CHECK_MSG(rel_diff(dw, fdw, C) < 1e-3, "rmsnorm dw rel %g", rel_diff(dw, fdw, C));
}

static void test_swiglu(void) {
    enum { N = 4, F = 9, NF = N * F };
    float g[NF], u[NF], r[NF], out[NF], dg[NF] = {0}, du[NF] = {0};
    fill_normal(g, NF, 2.0);
    fill_normal(u, NF, 1.0);
    fill_normal(r, NF, 1.0);
    swiglu_invariant(out, g, u, NF);
    for (int i = 0; i < NF; i++) CHECK_NEAR(out[i], g[i] / (1.0 + exp(-g[i])) * u[i], 1e-5);
    swiglu_backward(dg, du, r, g, u, N, F);
    const double h = 1e-3;
    for (int i = 0; i < NF; i++) {
        double silu_p = (g[i] + h) / (1.0 + exp(-(g[i] + h))), silu_m = (g[i] - h) / (1.0 + exp(-(g[i] - h)));
        CHECK_NEAR(dg[i], r[i] * u[i] * (silu_p - silu_m) / (2 * h), 1e-4);
        CHECK_NEAR(du[i], r[i] * g[i] / (1.0 + exp(-g[i])), 1e-5);
    }
}

static void test_matmul(void) {
    enum { N = 6, C = 5, OC = 7 };
    float x[N * C], w[OC * C], out[N * OC], dout[N * OC], dx[N * C], dw[OC * C];
    fill_normal(x, N * C, 1.0);
    fill_normal(w, OC * C, 1.0);
    fill_normal(dout, N * OC, 1.0);
    float packed[((OC + MATMUL_GROUP - 1) / MATMUL_GROUP) * MATMUL_GROUP * C];
    matmul_pack(packed, w, OC, C, 0, (OC + MATMUL_GROUP - 1) / MATMUL_GROUP);
    matmul_forward_invariant(out, x, packed, N, C, OC);
    for (int n = 0; n < N; n++)
        for (int o = 0; o < OC; o++) CHECK_NEAR(out[n * OC + o], dot(x + n * C, w + o * C, C), 1e-5);
    for (int i = 0; i < N * C; i++) dx[i] = 1.0f;
    for (int i = 0; i < OC * C; i++) dw[i] = 2.0f;
    matmul_backward(dx, dw, dout, x, w, N, C, OC);
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++) {
            double s = 1.0;
            for (int o = 0; o < OC; o++) s += (double)dout[n * OC + o] * w[o * C + c];
            CHECK_NEAR(dx[n * C + c], s, 1e-5);
        }
    for (int o = 0; o < OC; o++)
        for (int c = 0; c < C; c++) {
            double s = 2.0;
            for (int n = 0; n < N; n++) s += (double)dout[n * OC + o] * x[n * C + c];
            CHECK_NEAR(dw[o * C + c], s, 1e-5);
        }
}

/* The cached attention is batch-invariant bit for bit: a row's output does
 * not depend on where its shared prefix ends (prefix slot + own slot holding
 * the same keys), nor on whether its query heads are computed two at a
 * time (scores2, weighted_values2) or one at a time. Positions 0 .. 99 and
 * a head size with a tail cover every vector width's blocks and tails. */
static void test_attention_invariance(void) {
    enum { H = 4, KV = 2, T = 128, HD = 20 };
    size_t slot = (size_t)KV * T * HD;
    static float kc[2 * KV * T * HD], vc[2 * KV * T * HD];
    fill_normal(kc, slot, 1.0);
    fill_normal(vc, slot, 1.0);
    memcpy(kc + slot, kc, slot * sizeof(float));
    memcpy(vc + slot, vc, slot * sizeof(float));
    float q[H * HD], whole[H * HD], other[H * HD], scores[2 * T];
    fill_normal(q, H * HD, 1.0);
    int split_differs = 0, heads_differ = 0;
    for (int32_t pos = 0; pos < 100; pos++) {
        int64_t zero = 0, second = (int64_t)slot;
        int32_t none = 0;
        attention_rows one = {kc, vc, &zero, &none, &zero, &pos, H, KV, HD, T, NULL};
        attention_forward_cached(whole, scores, q, &one, 0, 1, 0, H);
        for (int32_t P = 1; P <= pos + 1; P++) {
            attention_rows shared = {kc, vc, &zero, &P, &second, &pos, H, KV, HD, T, NULL};
            attention_forward_cached(other, scores, q, &shared, 0, 1, 0, H);
            split_differs += memcmp(whole, other, sizeof whole) != 0;
        }
        for (int h = 0; h < H; h++) attention_forward_cached(other, scores, q, &one, 0, 1, h, h + 1);
        heads_differ += memcmp(whole, other, sizeof whole) != 0;
    }
    CHECK_MSG(split_differs == 0, "attention depends on where the shared prefix ends (%d cases)", split_differs);
    CHECK_MSG(heads_differ == 0, "attention of heads one at a time differs from two at a time (%d positions)",
              heads_differ);
}

static void test_logprob_entropy(void) {
    enum { V = 23 };
    float logits[V], probs[V];
    fill_normal(logits, V, 3.0);
    const float temps[3] = {1.0f, 0.5f, 2.0f};
    for (int k = 0; k < 3; k++) {
        float tau = temps[k], H;
        float lp = logits_logprob_entropy(&H, probs, logits, V, tau, 4);
        double z[V], zmax = -INFINITY, sum = 0.0;
        for (int v = 0; v < V; v++) zmax = fmax(zmax, z[v] = logits[v] / (double)tau);
        for (int v = 0; v < V; v++) sum += exp(z[v] - zmax);
        double ent = 0.0, psum = 0.0;
        for (int v = 0; v < V; v++) {
            double lpv = z[v] - zmax - log(sum);
            ent -= exp(lpv) * lpv;
            psum += probs[v];
            CHECK_NEAR(probs[v], exp(lpv), 1e-7);
        }
        CHECK_NEAR(lp, z[4] - zmax - log(sum), 1e-6);
        CHECK_NEAR(H, ent, 1e-6);
        CHECK_NEAR(psum, 1.0, 1e-6);
        /* the sampler's two halves: the same entropy, probs and log-probs, bit for bit */
        float H2, probs2[V];
        double zm, ls;
        logits_softmax_stats(&zm, &ls, &H2, probs2, logits, V, tau);
        CHECK(memcmp(&H2, &H, sizeof H) == 0 && memcmp(probs2, probs, sizeof probs) == 0);
        for (int t = 0; t < V; t++) {
            float whole = logits_logprob_entropy(NULL, NULL, logits, V, tau, t);
            float half = logits_logprob_at(logits, tau, zm, ls, t);
            CHECK_MSG(memcmp(&whole, &half, sizeof whole) == 0, "tau %g target %d: %.9g != %.9g", tau, t, whole, half);
        }
    }
    float H;
    CHECK(logits_logprob_entropy(&H, NULL, logits, V, 1.0f, -1) == 0.0f);
    for (int v = 0; v < V; v++) logits[v] = 0.0f;
    logits_logprob_entropy(&H, NULL, logits, V, 1.0f, 0);
    CHECK_NEAR(H, log((double)V), 1e-6);
}

/* J = Σ w·logπ + Σ e·H of the whole model at its current parameters. */
static double model_objective(rlvr_model *m, const rlvr_batch *b, float tau, const float *w, const float *e,
                              float *lp, float *ent) {
    if (rlvr_model_forward(m, b, tau, lp, ent) != 0) return NAN;
    int T = b->offsets[b->n_seqs];
    return dot(w, lp, (size_t)T) + dot(e, ent, (size_t)T);
}

/* Finite differences through the whole model on a tiny GQA config with
 * q/k/v biases: a probe of every tensor (a handful of elements each)
 * against the backward. */
static void test_model_finite_differences(void) {
    rlvr_model_config cfg = {.vocab = 11, .d_model = 8, .n_layers = 2, .n_heads = 2, .n_kv_heads = 1, .d_ff = 12,
                             .max_seq = 16, .rope_theta = 100.0f, .norm_eps = 1e-5f, .tie_embeddings = false,
                             .qkv_bias = true, .init_seed = 5, .init_std = 0.5f};
    rlvr_model *m;
    CHECK_OK(rlvr_model_new(&m, &cfg));
    if (!m) return;
    /* biases start at 0: give them values so their probes are not at a special point */
    const rlvr_param_views *v = rlvr_model_param_views(m);
    size_t n_bias = (size_t)cfg.n_layers * (size_t)cfg.d_model;
    fill_normal(v->bq, n_bias, 0.3);
    fill_normal(v->bk, n_bias / 2, 0.3);
    fill_normal(v->bv, n_bias / 2, 0.3);
    int32_t offsets[3] = {0, 7, 12}, tokens[12];
    for (int t = 0; t < 12; t++) tokens[t] = (int32_t)rlvr_rng_next_below(&rng, 11);
    rlvr_batch b = {2, offsets, tokens};
    float w[12], e[12], lp[12], ent[12];
    fill_normal(w, 12, 1.0);
    fill_normal(e, 12, 0.3);
    const float tau = 0.8f;
    model_objective(m, &b, tau, w, e, lp, ent);
    CHECK_OK(rlvr_model_zero_grad(m));
    CHECK_OK(rlvr_model_backward(m, w, e));
    float *p = rlvr_model_params(m);
    const float *g = rlvr_model_grads(m);
    size_t off = 0;
    for (int i = 0; i < RLVR_PARAM_TENSORS; i++) {
        size_t n = rlvr_model_tensor_size(m, i);
        if (n == 0) continue; /* a tied head */
        float analytic[6], numeric[6];
        for (int k = 0; k < 6; k++) {
            size_t j = off + rlvr_rng_next_below(&rng, (uint32_t)n);
            float keep = p[j];
            const float h = 2e-3f;
            p[j] = keep + h;
            double jp = model_objective(m, &b, tau, w, e, lp, ent);
            p[j] = keep - h;
            double jm = model_objective(m, &b, tau, w, e, lp, ent);
            p[j] = keep;
            numeric[k] = (float)((jp - jm) / (2.0 * h));
            analytic[k] = g[j];
        }
        double err = rel_diff(analytic, numeric, 6);
        if (getenv("RLVR_TEST_VERBOSE")) printf("  fd %-10s rel %.3g\n", rlvr_model_tensor_name(i), err);
        CHECK_MSG(err < 2e-2, "tensor %s: analytic vs finite differences rel %g", rlvr_model_tensor_name(i), err);
        off += n;
    }
    rlvr_model_free(m);
}

int main(void) {
    rlvr_rng_stream_init(&rng, 2024, RLVR_RNG_TEST, 0, 0);
    test_rope();
    test_rope_llama3();
    test_rmsnorm();
    test_swiglu();
    test_matmul();
    test_attention_invariance();
    test_logprob_entropy();
    test_model_finite_differences();
    return test_summary("test_policy_kernels");
}
