/* policy/kernels.c — the transformer's building blocks on CPU (see kernels.h).
 *
 * Element-wise kernels run under OpenMP over rows; their _row/_range forms
 * (declared in sampler_kernels.h) run on the calling thread, for callers
 * that split the work themselves (the sampler). Every reduction that
 * crosses rows (the dweight of RMSNorm) is split over columns instead, so
 * each output element is summed by one thread in row order: results do not
 * depend on the thread count. Matrix products go to cblas_sgemm. */
#include "policy/kernels.h"
#include "policy/sampler_kernels.h" /* the row forms the sampler uses */

#include <cblas.h>
#include <math.h>
#include <stddef.h>

/* ---- RMSNorm ------------------------------------------------------------ */

float rmsnorm_forward_row(float *out, const float *inp, const float *weight, int C, float eps) {
    double ss = 0.0;
    for (int c = 0; c < C; c++) ss += (double)inp[c] * inp[c];
    float r = (float)(1.0 / sqrt(ss / C + eps));
    for (int c = 0; c < C; c++) out[c] = inp[c] * r * weight[c];
    return r;
}

void rmsnorm_forward(float *out, float *rstd, const float *inp, const float *weight, int N, int C, float eps) {
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++) {
        float r = rmsnorm_forward_row(out + (size_t)n * C, inp + (size_t)n * C, weight, C, eps);
        if (rstd) rstd[n] = r;
    }
}

/* With x̂ = x·rstd and g = dout·weight:
 *   dx = rstd·(g − x̂·mean(g·x̂)),  dweight = Σ_rows dout·x̂. */
static void rmsnorm_backward_inp(float *dinp, const float *dout, const float *inp, const float *weight,
                                 const float *rstd, int N, int C) {
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++) {
        const float *x = inp + (size_t)n * C, *dy = dout + (size_t)n * C;
        float *dx = dinp + (size_t)n * C;
        float r = rstd[n];
        double dot = 0.0; /* Σ g·x̂ */
        for (int c = 0; c < C; c++) dot += (double)dy[c] * weight[c] * x[c] * r;
        float mean = (float)(dot / C);
        for (int c = 0; c < C; c++) dx[c] += r * (dy[c] * weight[c] - x[c] * r * mean);
    }
}

/* Columns are split across threads in blocks; each column sums its rows in order. */
static void rmsnorm_backward_weight(float *dweight, const float *dout, const float *inp, const float *rstd, int N,
                                    int C) {
    enum { BLOCK = 64 };
    int n_blocks = (C + BLOCK - 1) / BLOCK;
#pragma omp parallel for schedule(static)
    for (int b = 0; b < n_blocks; b++) {
        int c0 = b * BLOCK, c1 = c0 + BLOCK < C ? c0 + BLOCK : C;
        float acc[BLOCK] = {0};
        for (int n = 0; n < N; n++) {
            const float *x = inp + (size_t)n * C, *dy = dout + (size_t)n * C;
            float r = rstd[n];
            for (int c = c0; c < c1; c++) acc[c - c0] += dy[c] * x[c] * r;
        }
        for (int c = c0; c < c1; c++) dweight[c] += acc[c - c0];
    }
}

void rmsnorm_backward(float *dinp, float *dweight, const float *dout, const float *inp, const float *weight,
                      const float *rstd, int N, int C) {
    if (dinp) rmsnorm_backward_inp(dinp, dout, inp, weight, rstd, N, C);
    if (dweight) rmsnorm_backward_weight(dweight, dout, inp, rstd, N, C);
}

/* ---- RoPE (interleaved pairs) ------------------------------------------- */

/* LLAMA3 scaling of an inverse frequency f (transformers'
 * _compute_llama3_parameters): by wavelength λ = 2π/f, short waves stay,
 * long ones are slowed by `factor`, and the band between is interpolated.
 * The band test and the blend run in double on the double f, so that a
 * frequency inside a band is scaled exactly as its formula says; transformers
 * decides the band on float32 wavelengths, which can differ only for a λ
 * within a float32 rounding of a band edge (no published model has one). */
static double rope_llama3(double f, const rlvr_rope_scaling *sc) {
    double orig = sc->original_max_seq, low = sc->low_freq_factor, high = sc->high_freq_factor;
    double wavelen = 2.0 * M_PI / f;
    if (wavelen < orig / high) return f;
    if (wavelen > orig / low) return f / sc->factor;
    double smooth = (orig / wavelen - low) / (high - low);
    return (1.0 - smooth) * f / sc->factor + smooth * f;
}

double rope_inv_freq(int i, int head_dim, float theta, const rlvr_rope_scaling *scaling) {
    /* the unscaled frequency is computed as it always was: models without
     * scaling keep every bit of their angles */
    double f = pow((double)theta, -2.0 * i / head_dim);
    if (scaling && scaling->kind == RLVR_ROPE_SCALING_LLAMA3) f = rope_llama3(f, scaling);
    return f;
}

/* cos and sin of pair i's angle at position pos, in double: the sampler and
 * trainer share them and they must not drift with position. */
static void rope_angle(float *c, float *s, double pos, int i, int head_dim, float theta,
                       const rlvr_rope_scaling *scaling) {
    double ang = pos * rope_inv_freq(i, head_dim, theta, scaling);
    *c = (float)cos(ang);
    *s = (float)sin(ang);
}

/* Turns pair i of every head of one row by (c, s). */
static void rope_pair(float *row, int i, int n_heads, int head_dim, float c, float s) {
    for (int h = 0; h < n_heads; h++) {
        float *p = row + (size_t)h * head_dim + 2 * i;
        float a = p[0], b = p[1];
        p[0] = a * c - b * s;
        p[1] = a * s + b * c;
    }
}

/* Rotates every pair (2i, 2i+1) of every head of row n by ±angle(pos, i).
 * sign = +1 forward, −1 transposed. */
static void rope_rotate(float *x, const int32_t *positions, int N, int n_heads, int head_dim, float theta,
                        const rlvr_rope_scaling *scaling, float sign) {
    int half = head_dim / 2;
    int width = n_heads * head_dim;
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++) {
        for (int i = 0; i < half; i++) {
            float c, s;
            rope_angle(&c, &s, positions[n], i, head_dim, theta, scaling);
            rope_pair(x + (size_t)n * width, i, n_heads, head_dim, c, sign * s);
        }
    }
}

void rope_table(float *table, int p0, int p1, int head_dim, float theta, const rlvr_rope_scaling *scaling) {
    int half = head_dim / 2;
    for (int p = p0; p < p1; p++)
        for (int i = 0; i < half; i++) {
            float *cs = table + ((size_t)p * half + i) * 2;
            rope_angle(&cs[0], &cs[1], p, i, head_dim, theta, scaling);
        }
}

void rope_forward_row(float *row, const float *table, int pos, int n_heads, int head_dim) {
    int half = head_dim / 2;
    const float *cs = table + (size_t)pos * half * 2;
    for (int i = 0; i < half; i++) rope_pair(row, i, n_heads, head_dim, cs[2 * i], cs[2 * i + 1]);
}

void rope_forward_heads(float *heads, const float *table, int pos, int n, int head_dim) {
    for (int h = 0; h < n; h++) rope_forward_row(heads + (size_t)h * head_dim, table, pos, 1, head_dim);
}

void rope_forward(float *x, const int32_t *positions, int N, int n_heads, int head_dim, float theta,
                  const rlvr_rope_scaling *scaling) {
    rope_rotate(x, positions, N, n_heads, head_dim, theta, scaling, 1.0f);
}

void rope_backward(float *dx, const int32_t *positions, int N, int n_heads, int head_dim, float theta,
                   const rlvr_rope_scaling *scaling) {
    rope_rotate(dx, positions, N, n_heads, head_dim, theta, scaling, -1.0f);
}

/* ---- biases ---------------------------------------------------------------- */

void bias_add_row(float *row, const float *bias, int n) {
    for (int i = 0; i < n; i++) row[i] += bias[i];
}

void scatter_add_rows(float *dst, const float *src, const int32_t *rows, int N, int C) {
    enum { BLOCK = 64 };
    int n_blocks = (C + BLOCK - 1) / BLOCK;
#pragma omp parallel for schedule(static)
    for (int b = 0; b < n_blocks; b++) {
        int c0 = b * BLOCK, c1 = c0 + BLOCK < C ? c0 + BLOCK : C;
        for (int n = 0; n < N; n++) {
            float *d = dst + (rows ? (size_t)rows[n] * C : 0);
            const float *x = src + (size_t)n * C;
            for (int j = c0; j < c1; j++) d[j] += x[j];
        }
    }
}

/* ---- SwiGLU --------------------------------------------------------------- */

/* silu(g) = g·σ(g), silu'(g) = σ(g)·(1 + g·(1 − σ(g))). */
void swiglu_backward(float *dgate, float *dup, const float *dout, const float *gate, const float *up, int N,
                     int F) {
    size_t total = (size_t)N * F;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < total; i++) {
        float g = gate[i];
        float sig = 1.0f / (1.0f + expf(-g));
        float silu = g * sig;
        if (dgate) dgate[i] += dout[i] * up[i] * sig * (1.0f + g * (1.0f - sig));
        if (dup) dup[i] += dout[i] * silu;
    }
}

/* ---- matmul backward through BLAS (the forward: sampler_kernels.h) ----------- */

void matmul_backward(float *dinp, float *dweight, const float *dout, const float *inp, const float *weight, int N,
                     int C, int OC) {
    if (N == 0) return;
    /* dinp (N, C) += dout (N, OC) · weight (OC, C) */
    if (dinp)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, C, OC, 1.0f, dout, OC, weight, C, 1.0f, dinp, C);
    /* dweight (OC, C) += doutᵀ (OC, N) · inp (N, C) */
    if (dweight)
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OC, C, N, 1.0f, dout, OC, inp, C, 1.0f, dweight, C);
}

/* ---- softmax head ----------------------------------------------------------- */

void logits_softmax_stats(double *zmax_out, double *log_sum_out, float *entropy, float *probs, const float *logits,
                          int V, float temperature) {
    double inv_t = 1.0 / temperature;
    double zmax = -INFINITY;
    for (int v = 0; v < V; v++) {
        double z = logits[v] * inv_t;
        if (z > zmax) zmax = z;
    }
    double sum = 0.0, sum_pz = 0.0; /* Σ e^(z−zmax), Σ e^(z−zmax)·(z−zmax) */
    for (int v = 0; v < V; v++) {
        double d = logits[v] * inv_t - zmax;
        double e = exp(d);
        sum += e;
        sum_pz += e * d;
    }
    double log_sum = log(sum);
    /* H = log Σe^d − Σ p·d with d = z − zmax (shift-invariant). */
    if (entropy) *entropy = (float)(log_sum - sum_pz / sum);
    if (probs) {
        double inv_sum = 1.0 / sum;
        for (int v = 0; v < V; v++) probs[v] = (float)(exp(logits[v] * inv_t - zmax) * inv_sum);
    }
    *zmax_out = zmax;
    *log_sum_out = log_sum;
}

float logits_logprob_at(const float *logits, float temperature, double zmax, double log_sum, int32_t target) {
    double inv_t = 1.0 / temperature;
    return (float)(logits[target] * inv_t - zmax - log_sum);
}

float logits_logprob_entropy(float *entropy, float *probs, const float *logits, int V, float temperature,
                             int32_t target) {
    double zmax, log_sum;
    logits_softmax_stats(&zmax, &log_sum, entropy, probs, logits, V, temperature);
    if (target < 0 || target >= V) return 0.0f;
    return logits_logprob_at(logits, temperature, zmax, log_sum, target);
}
