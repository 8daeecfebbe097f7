/* policy/optim.c — AdamW over the model's flat buffers, global-norm clipping
 * and the learning-rate schedule (see optim.h).
 *
 * The update matches torch.optim.AdamW: with g the (clipped) gradient,
 *   m ← β1·m + (1−β1)·g,   v ← β2·v + (1−β2)·g²
 *   θ ← θ·(1 − lr·wd) − lr · (m / (1−β1^t)) / (sqrt(v / (1−β2^t)) + eps)
 * where wd is applied to weight matrices only (rlvr_model_tensor_decays). */
#include "policy/optim.h"

#include "core/error.h"

#include <math.h>

float rlvr_lr_at(const rlvr_adamw_config *cfg, int64_t step) {
    if (step < 1) step = 1;
    if (cfg->warmup_steps > 0 && step <= cfg->warmup_steps)
        return (float)((double)cfg->lr * (double)step / (double)cfg->warmup_steps);
    if (cfg->schedule == RLVR_LR_CONSTANT) return cfg->lr;
    /* cosine from lr at the end of warm-up down to min_lr_ratio·lr at total_steps */
    int64_t span = cfg->total_steps - cfg->warmup_steps;
    double progress = span > 0 ? (double)(step - cfg->warmup_steps) / (double)span : 1.0;
    if (progress > 1.0) progress = 1.0;
    double cosine = 0.5 * (1.0 + cos(3.14159265358979323846 * progress));
    double ratio = cfg->min_lr_ratio + (1.0 - cfg->min_lr_ratio) * cosine;
    return (float)(cfg->lr * ratio);
}

/* Σ x² in double over a fixed partition of the buffer (chunk boundaries
 * depend only on n), partials added in order: the same bits whatever the
 * number of threads. */
static double sum_squares(const float *x, size_t n) {
    enum { CHUNKS = 256 };
    double partial[CHUNKS];
    size_t chunk = (n + CHUNKS - 1) / CHUNKS;
#pragma omp parallel for schedule(static)
    for (int c = 0; c < CHUNKS; c++) {
        size_t i0 = (size_t)c * chunk, i1 = i0 + chunk < n ? i0 + chunk : n;
        double s = 0.0;
        for (size_t i = i0; i < i1; i++) s += (double)x[i] * x[i];
        partial[c] = s;
    }
    double total = 0.0;
    for (int c = 0; c < CHUNKS; c++) total += partial[c];
    return total;
}

float rlvr_model_grad_norm(rlvr_model *m) {
    const float *g = rlvr_model_grads(m);
    if (!g) return 0.0f;
    return (float)sqrt(sum_squares(g, rlvr_model_num_params(m)));
}

static int check_config(const rlvr_adamw_config *c, int64_t step) {
    if (step < 1) return RLVR_FAIL(RLVR_EINVAL, "adamw: step = %lld, steps count from 1", (long long)step);
    if (!(c->lr >= 0.0f) || !isfinite(c->lr)) return RLVR_FAIL(RLVR_EINVAL, "adamw: lr = %g must be >= 0", c->lr);
    if (!(c->beta1 >= 0.0f && c->beta1 < 1.0f) || !(c->beta2 >= 0.0f && c->beta2 < 1.0f))
        return RLVR_FAIL(RLVR_EINVAL, "adamw: beta1 = %g, beta2 = %g must lie in [0, 1)", c->beta1, c->beta2);
    if (!(c->eps > 0.0f)) return RLVR_FAIL(RLVR_EINVAL, "adamw: eps = %g must be > 0", c->eps);
    if (!(c->weight_decay >= 0.0f))
        return RLVR_FAIL(RLVR_EINVAL, "adamw: weight_decay = %g must be >= 0", c->weight_decay);
    return 0;
}

/* One tensor's update; `scale` is the clipping factor applied to its
 * gradient. Called by every thread of the step's parallel region: the loop
 * is shared out without a barrier at its end (elements are independent). */
static void adamw_tensor(float *p, float *m, float *v, const float *g, size_t n, float lr, float wd, float scale,
                         const rlvr_adamw_config *c, double bc1, double bc2) {
    float b1 = c->beta1, b2 = c->beta2, eps = c->eps;
    float step_size = (float)(lr / bc1);
    float inv_sqrt_bc2 = (float)(1.0 / sqrt(bc2));
    float decay = 1.0f - lr * wd;
#pragma omp for schedule(static) nowait
    for (size_t i = 0; i < n; i++) {
        float grad = g[i] * scale;
        float mi = b1 * m[i] + (1.0f - b1) * grad;
        float vi = b2 * v[i] + (1.0f - b2) * grad * grad;
        m[i] = mi;
        v[i] = vi;
        p[i] = p[i] * decay - step_size * mi / (sqrtf(vi) * inv_sqrt_bc2 + eps);
    }
}

int rlvr_model_adamw_step(rlvr_model *m, const rlvr_adamw_config *cfg, int64_t step, float *grad_norm) {
    RLVR_TRY(check_config(cfg, step));
    if (!rlvr_model_grads(m)) return RLVR_FAIL(RLVR_ESTATE, "adamw: no gradients (run backward first)");
    RLVR_TRY(rlvr_model_alloc_optim_state(m));
    float norm = rlvr_model_grad_norm(m);
    if (grad_norm) *grad_norm = norm;
    if (!isfinite(norm))
        return RLVR_FAIL(RLVR_EINVAL, "adamw: gradient norm is %g at step %lld; parameters left unchanged", norm,
                         (long long)step);
    /* torch.nn.utils.clip_grad_norm_: scale by max_norm / (norm + 1e-6) when above */
    float scale = 1.0f;
    if (cfg->grad_clip > 0.0f && norm > cfg->grad_clip) scale = (float)(cfg->grad_clip / (norm + 1e-6));
    float lr = rlvr_lr_at(cfg, step);
    double bc1 = 1.0 - pow(cfg->beta1, (double)step), bc2 = 1.0 - pow(cfg->beta2, (double)step);

    float *p = rlvr_model_params(m), *g = rlvr_model_grads(m), *mm = rlvr_model_adam_m(m), *vv = rlvr_model_adam_v(m);
#pragma omp parallel
    {
        size_t off = 0;
        for (int i = 0; i < RLVR_PARAM_TENSORS; i++) {
            size_t n = rlvr_model_tensor_size(m, i);
            float wd = rlvr_model_tensor_decays(i) ? cfg->weight_decay : 0.0f;
            adamw_tensor(p + off, mm + off, vv + off, g + off, n, lr, wd, scale, cfg, bc1, bc2);
            off += n;
        }
    }
    return 0;
}
