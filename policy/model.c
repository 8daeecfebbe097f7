/* policy/model.c — the Llama-style policy: parameters, training forward over a
 * packed batch, backward of J = Σ w_t·logπ(o_t) + Σ e_t·H_t (see model.h).
 *
 * Reads top to bottom: sizes and views, initialisation, activations, the
 * forward pieces (embedding, attention, layer, head), the backward pieces in
 * reverse order, then the public entry points.
 *
 * The forward computes with the sampler's batch-invariant kernels
 * (sampler_kernels.h) on the same packed weights: every matmul output, the
 * RoPE rotation, the attention of each query row against its sequence's
 * keys, SwiGLU and the residual adds round exactly as they do when the
 * sampler decodes that token, so a sequence re-scored here gets the sampler's
 * log-probs bit for bit (docs/POLICY.md, "One forward"). The backward uses
 * BLAS: its order changes gradients in the last bits, never the policy.
 *
 * Attention keeps no (T, T) probabilities: the forward stores the per-row
 * log-sum-exp of the scores and the backward recomputes the probabilities
 * block by block (flash-attention style), so activation memory grows with
 * T, not T². The forward's tasks are (block of ATTN_BLOCK query rows, KV
 * head) pairs reading a head-major copy of the layer's keys and values, the
 * backward's (sequence, head) pairs, each with its own scratch; within a
 * backward task the blocks go through cblas_sgemm, computing only the key
 * columns up to the block's last row. In backward each query head writes
 * its own dK/dV slice; heads sharing a KV head are summed afterwards in a
 * fixed order, so there are no races, no atomics, and no dependence on the
 * thread count.
 *
 * Threads: OpenMP everywhere. sgemm is called both from serial code (the
 * backward's weight matmuls, which BLAS parallelises) and from inside the
 * attention's parallel region. OpenBLAS's OpenMP build handles both on the
 * same thread pool (single-threaded inside a region); its pthreads build
 * keeps a second pool whose threads compete with OpenMP's spinning workers,
 * which costs several times the step time unless OMP_WAIT_POLICY=passive. */
#include "policy/model.h"

#include "core/error.h"
#include "core/mem.h"
#include "core/rng.h"
#include "policy/kernels.h"
#include "policy/packed_weights.h"
#include "policy/sampler_kernels.h"

#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Query rows per attention block: big enough for sgemm to run at speed,
 * small enough that the masked upper triangle computed in vain stays small. */
enum { ATTN_BLOCK = 128 };
/* A task of the forward's matmuls: MATMUL_ROWS rows × MATMUL_PANELS panels
 * of output channels (any tiling gives the same bits). */
enum { MATMUL_ROWS = 64, MATMUL_PANELS = 4 };

/* Activations of one forward, kept for backward; T = tokens in the batch. */
typedef struct {
    float *resid;     /* (L+1, T, C) residual stream entering layer l; [L] leaves the last */
    float *resid_mid; /* (L, T, C) stream after attention, entering the MLP */
    float *xn1;       /* (L, T, C) RMSNorm before attention */
    float *rstd1;     /* (L, T) */
    float *q;         /* (L, T, C) queries after RoPE */
    float *k;         /* (L, T, kv_dim) keys after RoPE */
    float *v;         /* (L, T, kv_dim) */
    float *lse;       /* (L, T, H) log-sum-exp of each query row's scaled scores */
    float *ao;        /* (L, T, C) attention output, heads concatenated, before wo */
    float *xn2;       /* (L, T, C) RMSNorm before the MLP */
    float *rstd2;     /* (L, T) */
    float *gate;      /* (L, T, F) */
    float *up;        /* (L, T, F) */
    float *hmlp;      /* (L, T, F) silu(gate)·up */
    float *xf;        /* (T, C) final RMSNorm */
    float *rstdf;     /* (T) */
    float *logits;    /* (T, V) raw, before temperature */
} acts_t;
#define N_ACTS 17
_Static_assert(sizeof(acts_t) == N_ACTS * sizeof(float *), "N_ACTS must count acts_t's fields");

/* Gradient scratch of one backward (not kept between calls). */
typedef struct {
    float *dresid;  /* (T, C) gradient of the residual stream, walked down the layers */
    float *dxn;     /* (T, C) gradient of a norm's output */
    float *dq;      /* (T, C) */
    float *dk;      /* (T, kv_dim) */
    float *dv;      /* (T, kv_dim) */
    float *dk_head; /* (T, C) dK of every query head before the GQA sum */
    float *dv_head; /* (T, C) dV likewise */
    float *dao;     /* (T, C) */
    float *dh;      /* (T, F) */
    float *dgate;   /* (T, F) */
    float *dup;     /* (T, F) */
    float *dlogits; /* (T, V) */
} grad_acts_t;
#define N_GRAD_ACTS 12
_Static_assert(sizeof(grad_acts_t) == N_GRAD_ACTS * sizeof(float *), "N_GRAD_ACTS must count grad_acts_t's fields");

struct rlvr_model {
    rlvr_model_config cfg;
    int head_dim, kv_dim;
    size_t tensor_size[RLVR_PARAM_TENSORS]; /* elements; 0 for a tied lm_head */
    size_t num_params;
    float *params; /* (num_params) */
    atomic_uint_fast64_t params_version; /* rlvr_model_params_version */
    float *grads;  /* (num_params), lazily */
    float *adam_m; /* (num_params), lazily */
    float *adam_v; /* (num_params), lazily */
    rlvr_param_views pv, gv;

    /* activations, sized for act_tokens tokens; attention scratch for
     * att_threads threads and sequences up to att_seq tokens */
    size_t act_tokens, att_seq;
    int att_threads;
    float *act_memory;
    acts_t a;
    float *grad_act_memory;
    grad_acts_t g;
    float *att_scratch; /* (att_threads, 2, ATTN_BLOCK, att_seq) scores and their gradient */
    float *kv_heads;    /* (2, act_tokens, kv_dim) one layer's K and V, per sequence (n_kv_heads, len, hd) */

    /* the forward's batch-invariant kernels, made at the first forward */
    packed_weights pw;  /* the matrices, packed again at every forward */
    float *rope;        /* (max_seq, hd/2, 2) RoPE cos and sin */
    int64_t *zero_base; /* (max_seq) zeros: attention rows read their own sequence's block */
    int32_t *zero_len;  /* (max_seq) zeros: no shared prefix */

    /* the last forward's batch, copied: backward must not depend on caller memory */
    int n_seqs;
    int32_t *offsets;   /* (n_seqs + 1) */
    int32_t *tokens;    /* (T) */
    int32_t *positions; /* (T) position of each token inside its sequence */
    int32_t *targets;   /* (T) the next token of the same sequence, -1 at a sequence's end */
    int32_t *row_blocks;/* (n_row_blocks, 2) (sequence, first row) of each block of ATTN_BLOCK query rows */
    int n_row_blocks;
    size_t row_blocks_cap;
    size_t batch_cap_tokens, batch_cap_seqs;
    int n_tokens;
    float temperature;
    bool have_forward;
};

/* ---- sizes and views ------------------------------------------------------- */

static const char *const tensor_names[RLVR_PARAM_TENSORS] = {
    "embed", "attn_norm", "wq", "wk", "wv", "wo", "mlp_norm", "w_gate", "w_up", "w_down", "final_norm", "lm_head",
    "bq", "bk", "bv",
};

enum { T_EMBED, T_ATTN_NORM, T_WQ, T_WK, T_WV, T_WO, T_MLP_NORM, T_W_GATE, T_W_UP, T_W_DOWN, T_FINAL_NORM, T_LM_HEAD,
       T_BQ, T_BK, T_BV };

static void fill_tensor_sizes(size_t sizes[RLVR_PARAM_TENSORS], const rlvr_model_config *c) {
    size_t V = c->vocab, C = c->d_model, L = c->n_layers, F = c->d_ff;
    size_t kv = C / c->n_heads * c->n_kv_heads;
    sizes[T_EMBED] = V * C;
    sizes[T_ATTN_NORM] = L * C;
    sizes[T_WQ] = L * C * C;
    sizes[T_WK] = L * kv * C;
    sizes[T_WV] = L * kv * C;
    sizes[T_WO] = L * C * C;
    sizes[T_MLP_NORM] = L * C;
    sizes[T_W_GATE] = L * F * C;
    sizes[T_W_UP] = L * F * C;
    sizes[T_W_DOWN] = L * C * F;
    sizes[T_FINAL_NORM] = C;
    sizes[T_LM_HEAD] = c->tie_embeddings ? 0 : V * C;
    sizes[T_BQ] = c->qkv_bias ? L * C : 0;
    sizes[T_BK] = c->qkv_bias ? L * kv : 0;
    sizes[T_BV] = c->qkv_bias ? L * kv : 0;
}

static void point_views(rlvr_param_views *views, float *base, const size_t sizes[RLVR_PARAM_TENSORS], bool tied) {
    float **ptrs[RLVR_PARAM_TENSORS] = {
        &views->embed, &views->attn_norm, &views->wq,     &views->wk,   &views->wv,         &views->wo,
        &views->mlp_norm, &views->w_gate, &views->w_up, &views->w_down, &views->final_norm, &views->lm_head,
        &views->bq,       &views->bk,     &views->bv,
    };
    for (int i = 0; i < RLVR_PARAM_TENSORS; i++) {
        *ptrs[i] = base;
        base += sizes[i];
    }
    if (tied) views->lm_head = views->embed;
}

/* The LLAMA3 parameters must give a frequency band between two positive
 * wavelengths (original_max_seq / high_freq_factor < ... / low_freq_factor)
 * and a finite slow-down; the other fields are ignored with kind NONE. */
static int rope_scaling_validate(const rlvr_rope_scaling *r) {
    if (r->kind == RLVR_ROPE_SCALING_NONE) return 0;
    if (r->kind != RLVR_ROPE_SCALING_LLAMA3)
        return RLVR_FAIL(RLVR_EINVAL, "model: rope scaling kind %d is not none (0) or llama3 (1)", (int)r->kind);
    if (!(r->factor > 0.0f) || !isfinite(r->factor))
        return RLVR_FAIL(RLVR_EINVAL, "model: rope_scaling_factor = %g, must be a finite number > 0", r->factor);
    if (!(r->low_freq_factor > 0.0f) || !isfinite(r->low_freq_factor))
        return RLVR_FAIL(RLVR_EINVAL, "model: rope_low_freq_factor = %g, must be a finite number > 0",
                         r->low_freq_factor);
    if (!(r->high_freq_factor > r->low_freq_factor) || !isfinite(r->high_freq_factor))
        return RLVR_FAIL(RLVR_EINVAL, "model: rope_high_freq_factor = %g, must be finite and > rope_low_freq_factor = %g",
                         r->high_freq_factor, r->low_freq_factor);
    if (r->original_max_seq < 1)
        return RLVR_FAIL(RLVR_EINVAL, "model: rope_original_max_seq = %d, needs at least 1", r->original_max_seq);
    return 0;
}

int rlvr_model_config_validate(const rlvr_model_config *c) {
    if (!c) return RLVR_FAIL(RLVR_EINVAL, "model config is NULL");
    if (c->vocab < 2) return RLVR_FAIL(RLVR_EINVAL, "model: vocab = %d, needs at least 2", c->vocab);
    if (c->d_model < 2) return RLVR_FAIL(RLVR_EINVAL, "model: d_model = %d, needs at least 2", c->d_model);
    if (c->n_layers < 1) return RLVR_FAIL(RLVR_EINVAL, "model: n_layers = %d, needs at least 1", c->n_layers);
    if (c->n_heads < 1 || c->d_model % c->n_heads != 0)
        return RLVR_FAIL(RLVR_EINVAL, "model: n_heads = %d must be >= 1 and divide d_model = %d", c->n_heads,
                         c->d_model);
    if ((c->d_model / c->n_heads) % 2 != 0)
        return RLVR_FAIL(RLVR_EINVAL, "model: head size d_model / n_heads = %d must be even (RoPE rotates pairs)",
                         c->d_model / c->n_heads);
    if (c->n_kv_heads < 1 || c->n_heads % c->n_kv_heads != 0)
        return RLVR_FAIL(RLVR_EINVAL, "model: n_kv_heads = %d must be >= 1 and divide n_heads = %d", c->n_kv_heads,
                         c->n_heads);
    if (c->d_ff < 1) return RLVR_FAIL(RLVR_EINVAL, "model: d_ff = %d, needs at least 1", c->d_ff);
    if (c->max_seq < 1) return RLVR_FAIL(RLVR_EINVAL, "model: max_seq = %d, needs at least 1", c->max_seq);
    if (!(c->rope_theta > 1.0f) || !isfinite(c->rope_theta))
        return RLVR_FAIL(RLVR_EINVAL, "model: rope_theta = %g, must be a finite number > 1", c->rope_theta);
    RLVR_TRY(rope_scaling_validate(&c->rope_scaling));
    if (!(c->norm_eps >= 0.0f) || !isfinite(c->norm_eps))
        return RLVR_FAIL(RLVR_EINVAL, "model: norm_eps = %g, must be finite and >= 0", c->norm_eps);
    if (!(c->init_std >= 0.0f) || !isfinite(c->init_std))
        return RLVR_FAIL(RLVR_EINVAL, "model: init_std = %g, must be finite and >= 0 (0 = 0.02)", c->init_std);
    /* int offsets in kernels and sgemm: keep every (rows, cols) product of one matrix in range */
    double biggest = (double)c->vocab * c->d_model;
    if ((double)c->d_ff * c->d_model > biggest) biggest = (double)c->d_ff * c->d_model;
    if (biggest >= 2147483647.0)
        return RLVR_FAIL(RLVR_EINVAL, "model: a %g-element weight matrix is too large", biggest);
    return 0;
}

/* ---- initialisation -------------------------------------------------------- */

/* Uniform in (0, 1) from 64 random bits (never 0, so log() is finite). */
static double unit_open(uint32_t hi, uint32_t lo) {
    return ((double)(hi >> 5) * 67108864.0 + (double)(lo >> 6) + 0.5) / 9007199254740992.0;
}

/* Normal(0, std²) for every element of tensor `id`: element pair p takes one
 * Philox block (seed, INIT, step 0, sequence id, position p) and Box-Muller,
 * so the values do not depend on threads or on other tensors. */
static void init_normal(float *w, size_t n, uint64_t seed, int id, double std) {
    size_t pairs = (n + 1) / 2;
#pragma omp parallel for schedule(static)
    for (size_t p = 0; p < pairs; p++) {
        uint32_t b[4];
        rlvr_rng_block(b, seed, RLVR_RNG_INIT, 0, (uint32_t)id, (uint32_t)p);
        double r = sqrt(-2.0 * log(unit_open(b[0], b[1])));
        double a = 6.283185307179586 * unit_open(b[2], b[3]);
        w[2 * p] = (float)(std * r * cos(a));
        if (2 * p + 1 < n) w[2 * p + 1] = (float)(std * r * sin(a));
    }
}

static void init_params(rlvr_model *m) {
    const rlvr_model_config *c = &m->cfg;
    double std = c->init_std > 0.0f ? c->init_std : 0.02;
    double out_std = std / sqrt(2.0 * c->n_layers); /* residual projections: GPT-2's scaling */
    float *base = m->params;
    for (int i = 0; i < RLVR_PARAM_TENSORS; i++) {
        size_t n = m->tensor_size[i];
        if (i == T_ATTN_NORM || i == T_MLP_NORM || i == T_FINAL_NORM) {
            for (size_t j = 0; j < n; j++) base[j] = 1.0f;
        } else if (i == T_BQ || i == T_BK || i == T_BV) {
            memset(base, 0, n * sizeof(float)); /* a fresh model adds no bias until training moves it */
        } else {
            init_normal(base, n, c->init_seed, i, (i == T_WO || i == T_W_DOWN) ? out_std : std);
        }
        base += n;
    }
}

int rlvr_model_new_blank(rlvr_model **out, const rlvr_model_config *cfg) {
    *out = NULL;
    RLVR_TRY(rlvr_model_config_validate(cfg));
    rlvr_model *m;
    RLVR_ALLOC(m, 1);
    m->cfg = *cfg;
    m->head_dim = cfg->d_model / cfg->n_heads;
    m->kv_dim = m->head_dim * cfg->n_kv_heads;
    fill_tensor_sizes(m->tensor_size, cfg);
    for (int i = 0; i < RLVR_PARAM_TENSORS; i++) m->num_params += m->tensor_size[i];
    m->params = rlvr_mem_alloc(m->num_params * sizeof(float));
    if (!m->params) {
        size_t n = m->num_params;
        free(m);
        return RLVR_FAIL(RLVR_ENOMEM, "model: out of memory for %zu parameters", n);
    }
    point_views(&m->pv, m->params, m->tensor_size, cfg->tie_embeddings);
    *out = m;
    return 0;
}

int rlvr_model_new(rlvr_model **out, const rlvr_model_config *cfg) {
    RLVR_TRY(rlvr_model_new_blank(out, cfg));
    init_params(*out);
    return 0;
}

void rlvr_model_release_tensor(rlvr_model *m, int i) {
    if (i < 0 || i >= RLVR_PARAM_TENSORS) return;
    rlvr_mem_release(m->params + rlvr_model_tensor_offset(m, i), m->tensor_size[i] * sizeof(float));
}

void rlvr_model_free(rlvr_model *m) {
    if (!m) return;
    rlvr_mem_free(m->params);
    rlvr_mem_free(m->grads);
    rlvr_mem_free(m->adam_m);
    rlvr_mem_free(m->adam_v);
    rlvr_mem_free(m->act_memory);
    rlvr_mem_free(m->grad_act_memory);
    rlvr_mem_free(m->att_scratch);
    rlvr_mem_free(m->kv_heads);
    packed_weights_free(&m->pw);
    free(m->rope);
    free(m->zero_base);
    free(m->zero_len);
    free(m->offsets);
    free(m->tokens);
    free(m->positions);
    free(m->targets);
    free(m->row_blocks);
    free(m);
}

/* ---- accessors ---------------------------------------------------------------- */

const rlvr_model_config *rlvr_model_config_of(const rlvr_model *m) { return &m->cfg; }
size_t rlvr_model_num_params(const rlvr_model *m) { return m->num_params; }
float *rlvr_model_params(rlvr_model *m) {
    atomic_fetch_add_explicit(&m->params_version, 1, memory_order_relaxed); /* the caller may write */
    return m->params;
}
const float *rlvr_model_params_read(const rlvr_model *m) { return m->params; }
uint64_t rlvr_model_params_version(const rlvr_model *m) {
    return atomic_load_explicit(&((rlvr_model *)m)->params_version, memory_order_relaxed);
}
float *rlvr_model_grads(rlvr_model *m) { return m->grads; }
float *rlvr_model_adam_m(rlvr_model *m) { return m->adam_m; }
float *rlvr_model_adam_v(rlvr_model *m) { return m->adam_v; }
const rlvr_param_views *rlvr_model_param_views(const rlvr_model *m) { return &m->pv; }
const rlvr_param_views *rlvr_model_grad_views(const rlvr_model *m) { return m->grads ? &m->gv : NULL; }
const float *rlvr_model_logits(const rlvr_model *m) { return m->have_forward ? m->a.logits : NULL; }

const char *rlvr_model_tensor_name(int i) { return i >= 0 && i < RLVR_PARAM_TENSORS ? tensor_names[i] : NULL; }

size_t rlvr_model_tensor_size(const rlvr_model *m, int i) {
    return i >= 0 && i < RLVR_PARAM_TENSORS ? m->tensor_size[i] : 0;
}

size_t rlvr_model_tensor_offset(const rlvr_model *m, int i) {
    size_t offset = 0;
    for (int j = 0; j < i && j < RLVR_PARAM_TENSORS; j++) offset += m->tensor_size[j];
    return offset;
}

bool rlvr_model_tensor_decays(int i) {
    return i == T_EMBED || i == T_WQ || i == T_WK || i == T_WV || i == T_WO || i == T_W_GATE || i == T_W_UP ||
           i == T_W_DOWN || i == T_LM_HEAD;
}

static int alloc_zeroed(float **buf, size_t n, const char *what) {
    if (*buf) return 0;
    *buf = rlvr_mem_alloc(n * sizeof(float)); /* zeroed */
    if (!*buf) return RLVR_FAIL(RLVR_ENOMEM, "model: out of memory for %s (%zu floats)", what, n);
    return 0;
}

int rlvr_model_zero_grad(rlvr_model *m) {
    if (!m->grads) {
        RLVR_TRY(alloc_zeroed(&m->grads, m->num_params, "gradients"));
        point_views(&m->gv, m->grads, m->tensor_size, m->cfg.tie_embeddings);
        return 0;
    }
    memset(m->grads, 0, m->num_params * sizeof(float));
    return 0;
}

int rlvr_model_alloc_optim_state(rlvr_model *m) {
    if (!m->grads) RLVR_TRY(rlvr_model_zero_grad(m));
    RLVR_TRY(alloc_zeroed(&m->adam_m, m->num_params, "AdamW first moments"));
    RLVR_TRY(alloc_zeroed(&m->adam_v, m->num_params, "AdamW second moments"));
    return 0;
}

/* ---- FLOP count --------------------------------------------------------------- */

double rlvr_model_forward_flops(const rlvr_model_config *c, const rlvr_batch *b) {
    double C = c->d_model, F = c->d_ff, V = c->vocab, L = c->n_layers;
    double kv = (double)c->d_model / c->n_heads * c->n_kv_heads;
    double macs_per_token = L * (2.0 * C * C + 2.0 * C * kv + 3.0 * C * F) + V * C;
    double T = b->offsets[b->n_seqs];
    double att_macs = 0.0; /* causal: row i of a sequence sees i+1 keys, for QKᵀ and for PV */
    for (int s = 0; s < b->n_seqs; s++) {
        double n = b->offsets[s + 1] - b->offsets[s];
        att_macs += L * C * n * (n + 1.0);
    }
    return 2.0 * (macs_per_token * T + att_macs);
}

double rlvr_model_train_flops(const rlvr_model_config *c, const rlvr_batch *b) {
    return 3.0 * rlvr_model_forward_flops(c, b);
}

/* ---- activations ----------------------------------------------------------------- */

static size_t acts_sizes(size_t sizes[N_ACTS], const rlvr_model *m, size_t T) {
    size_t C = m->cfg.d_model, L = m->cfg.n_layers, F = m->cfg.d_ff, V = m->cfg.vocab, H = m->cfg.n_heads;
    size_t kv = m->kv_dim;
    size_t s[N_ACTS] = {/* in acts_t's order: resid, resid_mid, xn1, rstd1, q, k, v, lse, ao,
                         * xn2, rstd2, gate, up, hmlp, xf, rstdf, logits */
        (L + 1) * T * C, L * T * C, L * T * C, L * T, L * T * C, L * T * kv, L * T * kv, L * T * H, L * T * C,
        L * T * C,       L * T,     L * T * F, L * T * F,        L * T * F,  T * C,      T,          T * V,
    };
    size_t total = 0;
    for (int i = 0; i < N_ACTS; i++) total += (sizes[i] = s[i]);
    return total;
}

static size_t grad_acts_sizes(size_t sizes[N_GRAD_ACTS], const rlvr_model *m, size_t T) {
    size_t C = m->cfg.d_model, F = m->cfg.d_ff, V = m->cfg.vocab, kv = m->kv_dim;
    /* in grad_acts_t's order: dresid, dxn, dq, dk, dv, dk_head, dv_head, dao, dh, dgate, dup, dlogits */
    size_t s[N_GRAD_ACTS] = {T * C, T * C, T * C, T * kv, T * kv, T * C, T * C, T * C, T * F, T * F, T * F, T * V};
    size_t total = 0;
    for (int i = 0; i < N_GRAD_ACTS; i++) total += (sizes[i] = s[i]);
    return total;
}

/* Points each field in `fields` (n of them, in the sizes' order) into base. */
static void point_fields(float **const *fields, int n, float *base, const size_t *sizes) {
    for (int i = 0; i < n; i++) {
        *fields[i] = base;
        base += sizes[i];
    }
}

static void acts_point(acts_t *a, float *base, const size_t sizes[N_ACTS]) {
    float **const fields[N_ACTS] = {
        &a->resid, &a->resid_mid, &a->xn1, &a->rstd1, &a->q,    &a->k,  &a->v,     &a->lse,   &a->ao,
        &a->xn2,   &a->rstd2,     &a->gate, &a->up,   &a->hmlp, &a->xf, &a->rstdf, &a->logits,
    };
    point_fields(fields, N_ACTS, base, sizes);
}

static void grad_acts_point(grad_acts_t *g, float *base, const size_t sizes[N_GRAD_ACTS]) {
    float **const fields[N_GRAD_ACTS] = {
        &g->dresid, &g->dxn, &g->dq, &g->dk, &g->dv, &g->dk_head, &g->dv_head, &g->dao, &g->dh, &g->dgate, &g->dup,
        &g->dlogits,
    };
    point_fields(fields, N_GRAD_ACTS, base, sizes);
}

/* Grows the activation buffers to hold T tokens and sequences up to max_len. */
static int acts_ensure(rlvr_model *m, size_t T, size_t max_len) {
    if (T > m->act_tokens) {
        size_t sizes[N_ACTS];
        size_t total = acts_sizes(sizes, m, T);
        rlvr_mem_free(m->act_memory);
        rlvr_mem_free(m->grad_act_memory);
        m->grad_act_memory = NULL;
        m->act_tokens = 0;
        m->act_memory = rlvr_mem_alloc(total * sizeof(float));
        if (!m->act_memory) return RLVR_FAIL(RLVR_ENOMEM, "model: out of memory for activations of %zu tokens", T);
        acts_point(&m->a, m->act_memory, sizes);
        rlvr_mem_free(m->kv_heads);
        m->kv_heads = rlvr_mem_alloc(2 * T * (size_t)m->kv_dim * sizeof(float));
        if (!m->kv_heads) return RLVR_FAIL(RLVR_ENOMEM, "model: out of memory for the keys of %zu tokens", T);
        m->act_tokens = T; /* backward scratch follows lazily (grad_acts_ensure) */
    }
    int threads = omp_get_max_threads();
    if (max_len > m->att_seq || threads > m->att_threads) {
        size_t len = max_len > m->att_seq ? max_len : m->att_seq;
        int nt = threads > m->att_threads ? threads : m->att_threads;
        rlvr_mem_free(m->att_scratch);
        m->att_seq = 0;
        m->att_threads = 0;
        m->att_scratch = rlvr_mem_alloc((size_t)nt * 2 * ATTN_BLOCK * len * sizeof(float));
        if (!m->att_scratch) return RLVR_FAIL(RLVR_ENOMEM, "model: out of memory for attention scratch");
        m->att_seq = len;
        m->att_threads = nt;
    }
    return 0;
}

/* What the batch-invariant forward needs beyond the activations, once. */
static int invariant_ensure(rlvr_model *m) {
    if (m->pw.memory) return 0;
    size_t S = (size_t)m->cfg.max_seq;
    if (!m->rope) { /* a failed earlier call may have left some of these */
        m->rope = malloc(S * (size_t)m->head_dim * sizeof(float));
        if (m->rope) rope_table(m->rope, 0, m->cfg.max_seq, m->head_dim, m->cfg.rope_theta, &m->cfg.rope_scaling);
    }
    if (!m->zero_base) m->zero_base = calloc(S, sizeof(int64_t));
    if (!m->zero_len) m->zero_len = calloc(S, sizeof(int32_t));
    if (!m->rope || !m->zero_base || !m->zero_len)
        return RLVR_FAIL(RLVR_ENOMEM, "model: out of memory for the RoPE table of %zu positions", S);
    return packed_weights_init(&m->pw, m, "model forward");
}

static int grad_acts_ensure(rlvr_model *m) {
    if (m->grad_act_memory) return 0;
    size_t gsizes[N_GRAD_ACTS];
    size_t gtotal = grad_acts_sizes(gsizes, m, m->act_tokens);
    m->grad_act_memory = rlvr_mem_alloc(gtotal * sizeof(float));
    if (!m->grad_act_memory) return RLVR_FAIL(RLVR_ENOMEM, "model: out of memory for backward scratch");
    grad_acts_point(&m->g, m->grad_act_memory, gsizes);
    return 0;
}

/* Cuts every sequence into blocks of ATTN_BLOCK query rows: the forward's
 * attention tasks are (block, head) pairs. */
static int row_blocks_fill(rlvr_model *m) {
    size_t n = 0;
    for (int s = 0; s < m->n_seqs; s++) n += (size_t)(m->offsets[s + 1] - m->offsets[s] + ATTN_BLOCK - 1) / ATTN_BLOCK;
    if (n > m->row_blocks_cap) {
        int32_t *grown = realloc(m->row_blocks, 2 * n * sizeof(int32_t));
        if (!grown) return RLVR_FAIL(RLVR_ENOMEM, "model forward: out of memory for %zu attention blocks", n);
        m->row_blocks = grown;
        m->row_blocks_cap = n;
    }
    int32_t *rb = m->row_blocks;
    for (int s = 0; s < m->n_seqs; s++)
        for (int32_t r0 = 0; r0 < m->offsets[s + 1] - m->offsets[s]; r0 += ATTN_BLOCK) {
            *rb++ = s;
            *rb++ = r0;
        }
    m->n_row_blocks = (int)n;
    return 0;
}

/* Copies the batch (backward runs after the caller may have reused it) and
 * derives each token's position inside its sequence. */
static int batch_copy(rlvr_model *m, const rlvr_batch *b, size_t *max_len) {
    if (!b || b->n_seqs < 1 || !b->offsets || !b->tokens)
        return RLVR_FAIL(RLVR_EINVAL, "model forward: empty batch (n_seqs must be >= 1)");
    if (b->offsets[0] != 0) return RLVR_FAIL(RLVR_EINVAL, "model forward: offsets[0] = %d, must be 0", b->offsets[0]);
    *max_len = 0;
    for (int s = 0; s < b->n_seqs; s++) {
        int32_t len = b->offsets[s + 1] - b->offsets[s];
        if (len < 0) return RLVR_FAIL(RLVR_EINVAL, "model forward: offsets decrease at sequence %d", s);
        if (len > m->cfg.max_seq)
            return RLVR_FAIL(RLVR_EINVAL, "model forward: sequence %d has %d tokens, max_seq is %d", s, len,
                             m->cfg.max_seq);
        if ((size_t)len > *max_len) *max_len = (size_t)len;
    }
    size_t T = (size_t)b->offsets[b->n_seqs];
    if (T == 0) return RLVR_FAIL(RLVR_EINVAL, "model forward: the batch holds no tokens");
    for (size_t t = 0; t < T; t++)
        if (b->tokens[t] < 0 || b->tokens[t] >= m->cfg.vocab)
            return RLVR_FAIL(RLVR_EINVAL, "model forward: token %zu = %d is outside the vocabulary [0, %d)", t,
                             b->tokens[t], m->cfg.vocab);
    if (T > m->batch_cap_tokens) {
        int32_t **arrays[3] = {&m->tokens, &m->positions, &m->targets};
        for (int i = 0; i < 3; i++) {
            int32_t *grown = realloc(*arrays[i], T * sizeof(int32_t));
            if (!grown) return RLVR_FAIL(RLVR_ENOMEM, "model forward: out of memory for %zu tokens", T);
            *arrays[i] = grown;
        }
        m->batch_cap_tokens = T;
    }
    if ((size_t)b->n_seqs + 1 > m->batch_cap_seqs) {
        int32_t *off = realloc(m->offsets, ((size_t)b->n_seqs + 1) * sizeof(int32_t));
        if (!off) return RLVR_FAIL(RLVR_ENOMEM, "model forward: out of memory for %d sequences", b->n_seqs);
        m->offsets = off;
        m->batch_cap_seqs = (size_t)b->n_seqs + 1;
    }
    memcpy(m->tokens, b->tokens, T * sizeof(int32_t));
    memcpy(m->offsets, b->offsets, ((size_t)b->n_seqs + 1) * sizeof(int32_t));
    for (int s = 0; s < b->n_seqs; s++)
        for (int32_t t = b->offsets[s]; t < b->offsets[s + 1]; t++) {
            m->positions[t] = t - b->offsets[s];
            m->targets[t] = t + 1 < b->offsets[s + 1] ? b->tokens[t + 1] : -1;
        }
    m->n_seqs = b->n_seqs;
    m->n_tokens = (int)T;
    return row_blocks_fill(m);
}

/* ---- forward pieces ------------------------------------------------------------------- */

static void embedding_forward(float *out, const int32_t *tokens, const float *embed, int T, int C) {
#pragma omp parallel for schedule(static)
    for (int t = 0; t < T; t++) memcpy(out + (size_t)t * C, embed + (size_t)tokens[t] * C, C * sizeof(float));
}

/* The targets' products with inp (T, C) (matmul_target: out (T, OC) = inp ·
 * weightᵀ) through the batch-invariant kernel, tiles of rows × panels
 * shared out among the threads, each panel's tiles in turn so the panel
 * stays in cache. */
static void matmul_rows(const matmul_target *targets, int n, const float *inp, int C, int T) {
    int groups = matmul_groups(targets, n);
    int row_tiles = (T + MATMUL_ROWS - 1) / MATMUL_ROWS, group_tiles = (groups + MATMUL_PANELS - 1) / MATMUL_PANELS;
#pragma omp parallel for schedule(dynamic, 1)
    for (int i = 0; i < row_tiles * group_tiles; i++) {
        int r0 = i % row_tiles * MATMUL_ROWS, g0 = i / row_tiles * MATMUL_PANELS;
        int r1 = r0 + MATMUL_ROWS < T ? r0 + MATMUL_ROWS : T;
        int g1 = g0 + MATMUL_PANELS < groups ? g0 + MATMUL_PANELS : groups;
        matmul_invariant_part(targets, n, inp, C, r0, r1, g0, g1);
    }
}

/* out (T, OC) = base + inp (T, C) · weightᵀ: a residual branch's projection
 * (rounded on its own, as the sampler does) added to the stream. */
static void matmul_residual(float *out, const float *base, const float *inp, const float *packed, int T, int C,
                            int OC) {
    matmul_target t = {out, packed, OC};
    matmul_rows(&t, 1, inp, C, T);
    size_t n = (size_t)T * OC;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) out[i] += base[i];
}

/* RoPE on every row of x (T, n_heads·hd) at its position, head by head as
 * the sampler turns them. */
static void rope_rows(const rlvr_model *m, float *x, int n_heads) {
    size_t width = (size_t)n_heads * m->head_dim;
#pragma omp parallel for schedule(static)
    for (int t = 0; t < m->n_tokens; t++)
        rope_forward_heads(x + t * width, m->rope, m->positions[t], n_heads, m->head_dim);
}

/* q (T, C) += bq[l], k and v (T, kv_dim) += bk[l], bv[l] on every row,
 * before RoPE (as the sampler adds them). */
static void qkv_bias_rows(const rlvr_model *m, int l, float *q, float *k, float *v) {
    const rlvr_param_views *p = &m->pv;
    int C = m->cfg.d_model, kv = m->kv_dim;
#pragma omp parallel for schedule(static)
    for (int t = 0; t < m->n_tokens; t++) {
        bias_add_row(q + (size_t)t * C, p->bq + (size_t)l * C, C);
        bias_add_row(k + (size_t)t * kv, p->bk + (size_t)l * kv, kv);
        bias_add_row(v + (size_t)t * kv, p->bv + (size_t)l * kv, kv);
    }
}

/* kv_heads ← the layer's k and v (T, kv_dim), each sequence's block laid
 * out (n_kv_heads, len, hd) as in the sampler's cache. */
static void kv_to_heads(rlvr_model *m, const float *k, const float *v) {
    size_t kv = (size_t)m->kv_dim, hd = (size_t)m->head_dim, half = (size_t)m->n_tokens * kv;
#pragma omp parallel for schedule(static)
    for (int s = 0; s < m->n_seqs; s++) {
        size_t t0 = (size_t)m->offsets[s], n = (size_t)(m->offsets[s + 1] - m->offsets[s]);
        for (size_t t = 0; t < n; t++)
            for (size_t g = 0; g < (size_t)m->cfg.n_kv_heads; g++) {
                size_t from = (t0 + t) * kv + g * hd, to = t0 * kv + (g * n + t) * hd;
                memcpy(m->kv_heads + to, k + from, hd * sizeof(float));
                memcpy(m->kv_heads + half + to, v + from, hd * sizeof(float));
            }
    }
}

/* One (sequence, head) slice of the attention tensors. Rows are positions of
 * the sequence; q, o have row stride C, k, v row stride kv_dim. */
typedef struct {
    const float *q, *k, *v;
    float *o;       /* forward output, or dO in backward */
    float *lse;     /* (n) row log-sum-exp, stride H */
    int n;          /* sequence length */
    int ldq, ldkv;  /* row strides */
    int lse_stride; /* H */
    int hd;
    float scale;    /* 1/sqrt(hd) */
} head_slice;

/* S (rows, cols) = scale · Q[r0:r1] · K[0:cols]ᵀ. */
static void scores_block(float *S, const head_slice *h, int r0, int rows, int cols) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, cols, h->hd, h->scale, h->q + (size_t)r0 * h->ldq,
                h->ldq, h->k, h->ldkv, 0.0f, S, cols);
}

/* The slice of head `hq` of sequence s in one layer's q/k/v/out tensors. */
static head_slice slice_of(const rlvr_model *m, int s, int hq, const float *q, const float *k, const float *v,
                           float *o, float *lse) {
    int C = m->cfg.d_model, hd = m->head_dim, H = m->cfg.n_heads;
    int hkv = hq / (H / m->cfg.n_kv_heads);
    size_t t0 = (size_t)m->offsets[s];
    head_slice h = {
        .q = q + t0 * C + (size_t)hq * hd,
        .k = k + t0 * m->kv_dim + (size_t)hkv * hd,
        .v = v + t0 * m->kv_dim + (size_t)hkv * hd,
        .o = o + t0 * C + (size_t)hq * hd,
        .lse = lse + t0 * H + hq,
        .n = m->offsets[s + 1] - m->offsets[s],
        .ldq = C,
        .ldkv = m->kv_dim,
        .lse_stride = H,
        .hd = hd,
        .scale = 1.0f / sqrtf((float)hd),
    };
    return h;
}

/* Threads for the attention tasks: the current OpenMP setting, capped by the
 * scratch allocated at the last forward. */
static int attention_threads(const rlvr_model *m) {
    int nt = omp_get_max_threads();
    return nt < m->att_threads ? nt : m->att_threads;
}

/* This thread's scores and score-gradient blocks, (ATTN_BLOCK, att_seq) each. */
static float *thread_scratch(const rlvr_model *m, int which) {
    return m->att_scratch + ((size_t)omp_get_thread_num() * 2 + which) * ATTN_BLOCK * m->att_seq;
}

/* Attention of every query row against its sequence's keys (kv_heads),
 * with the sampler's kernel: out (T, C) and the rows' log-sum-exp (T, H).
 * A task is one (block of ATTN_BLOCK rows, KV head), taken in reverse
 * order so that a sequence's later blocks (which reach more keys) start
 * first; tasks write disjoint rows and heads. */
static void attention_forward(rlvr_model *m, float *out, float *lse, const float *q) {
    int KVH = m->cfg.n_kv_heads, H = m->cfg.n_heads, C = m->cfg.d_model, group = H / KVH;
    int n_tasks = m->n_row_blocks * KVH;
    size_t half = (size_t)m->n_tokens * m->kv_dim;
#pragma omp parallel for schedule(dynamic, 1) num_threads(attention_threads(m))
    for (int task = n_tasks - 1; task >= 0; task--) {
        const int32_t *blk = m->row_blocks + 2 * (task / KVH);
        int s = blk[0], r0 = blk[1], g = task % KVH;
        int t0 = m->offsets[s], n = m->offsets[s + 1] - t0, r1 = r0 + ATTN_BLOCK < n ? r0 + ATTN_BLOCK : n;
        attention_rows rows = {m->kv_heads + (size_t)t0 * m->kv_dim, m->kv_heads + half + (size_t)t0 * m->kv_dim,
                               m->zero_base, m->zero_len, m->zero_base, m->positions + t0, H, KVH, m->head_dim, n,
                               lse + (size_t)t0 * H};
        int per_head = (r1 - r0) * group;
        attention_forward_cached(out + (size_t)t0 * C, thread_scratch(m, 0), q + (size_t)t0 * C, &rows, r0, r1,
                                 g * per_head, (g + 1) * per_head);
    }
}

static void layer_forward(rlvr_model *m, int l) {
    const rlvr_model_config *c = &m->cfg;
    const rlvr_param_views *p = &m->pv;
    const packed_weights *pw = &m->pw;
    acts_t *a = &m->a;
    int T = m->n_tokens, C = c->d_model, F = c->d_ff, kv = m->kv_dim, H = c->n_heads;
    size_t TC = (size_t)T * C, Tkv = (size_t)T * kv, TF = (size_t)T * F, at = (size_t)l * pw->layer;
    const float *x = a->resid + l * TC;
    float *xn1 = a->xn1 + l * TC, *q = a->q + l * TC, *k = a->k + l * Tkv, *v = a->v + l * Tkv;
    float *ao = a->ao + l * TC, *mid = a->resid_mid + l * TC, *xn2 = a->xn2 + l * TC;
    float *gate = a->gate + l * TF, *up = a->up + l * TF, *hm = a->hmlp + l * TF;

    rmsnorm_forward(xn1, a->rstd1 + (size_t)l * T, x, p->attn_norm + (size_t)l * C, T, C, c->norm_eps);
    matmul_target qkv[3] = {{q, pw->wq + at, C}, {k, pw->wk + at, kv}, {v, pw->wv + at, kv}};
    matmul_rows(qkv, 3, xn1, C, T);
    if (c->qkv_bias) qkv_bias_rows(m, l, q, k, v);
    rope_rows(m, q, H);
    rope_rows(m, k, c->n_kv_heads);
    kv_to_heads(m, k, v);
    attention_forward(m, ao, a->lse + (size_t)l * T * H, q);
    matmul_residual(mid, x, ao, pw->wo + at, T, C, C);

    rmsnorm_forward(xn2, a->rstd2 + (size_t)l * T, mid, p->mlp_norm + (size_t)l * C, T, C, c->norm_eps);
    matmul_target gate_up[2] = {{gate, pw->w_gate + at, F}, {up, pw->w_up + at, F}};
    matmul_rows(gate_up, 2, xn2, C, T);
#pragma omp parallel for schedule(static)
    for (int t = 0; t < T; t++) swiglu_invariant(hm + (size_t)t * F, gate + (size_t)t * F, up + (size_t)t * F, F);
    matmul_residual(a->resid + (l + 1) * TC, mid, hm, pw->w_down + at, T, F, C);
}

static void head_outputs(const rlvr_model *m, float *logprob_next, float *entropy) {
    int V = m->cfg.vocab, T = m->n_tokens;
#pragma omp parallel for schedule(static)
    for (int t = 0; t < T; t++) {
        float h;
        float lp = logits_logprob_entropy(&h, NULL, m->a.logits + (size_t)t * V, V, m->temperature, m->targets[t]);
        if (logprob_next) logprob_next[t] = lp;
        if (entropy) entropy[t] = h;
    }
}

int rlvr_model_forward(rlvr_model *m, const rlvr_batch *batch, float temperature, float *logprob_next,
                       float *entropy) {
    if (!(temperature > 0.0f) || !isfinite(temperature))
        return RLVR_FAIL(RLVR_EINVAL, "model forward: temperature = %g, must be finite and > 0", temperature);
    m->have_forward = false;
    size_t max_len = 0;
    RLVR_TRY(batch_copy(m, batch, &max_len));
    RLVR_TRY(acts_ensure(m, (size_t)m->n_tokens, max_len));
    RLVR_TRY(invariant_ensure(m));
    packed_weights_pack(&m->pw); /* the parameters as they are now, however they were written */
    m->temperature = temperature;
    const rlvr_model_config *c = &m->cfg;
    int T = m->n_tokens, C = c->d_model;

    embedding_forward(m->a.resid, m->tokens, m->pv.embed, T, C);
    for (int l = 0; l < c->n_layers; l++) layer_forward(m, l);
    rmsnorm_forward(m->a.xf, m->a.rstdf, m->a.resid + (size_t)c->n_layers * T * C, m->pv.final_norm, T, C,
                    c->norm_eps);
    matmul_target head = {m->a.logits, m->pw.lm_head, c->vocab};
    matmul_rows(&head, 1, m->a.xf, C, T);
    if (logprob_next || entropy) head_outputs(m, logprob_next, entropy);
    m->have_forward = true;
    return 0;
}

/* ---- backward pieces (reverse order) ---------------------------------------------------- */

/* dz_j = w·(δ_j,target − p_j) − e·p_j·(log p_j + H), z = logits/τ; dlogits = dz/τ.
 * Computed in double per row. */
static void head_backward_row(float *dl, const float *logits, int V, float temperature, int32_t target, double w,
                              double e) {
    double inv_t = 1.0 / temperature, zmax = -INFINITY;
    for (int j = 0; j < V; j++) zmax = fmax(zmax, logits[j] * inv_t);
    double sum = 0.0, sum_pd = 0.0;
    for (int j = 0; j < V; j++) {
        double d = logits[j] * inv_t - zmax;
        double ex = exp(d);
        sum += ex;
        sum_pd += ex * d;
    }
    double log_sum = log(sum), H = log_sum - sum_pd / sum;
    for (int j = 0; j < V; j++) {
        double logp = logits[j] * inv_t - zmax - log_sum, p = exp(logp);
        double dz = -w * p - e * p * (logp + H);
        if (j == target) dz += w;
        dl[j] = (float)(dz * inv_t);
    }
}

static void head_backward(rlvr_model *m, const float *dlogprob, const float *dentropy) {
    int V = m->cfg.vocab, T = m->n_tokens;
#pragma omp parallel for schedule(static)
    for (int t = 0; t < T; t++) {
        int32_t target = m->targets[t];
        double w = target >= 0 && dlogprob ? dlogprob[t] : 0.0;
        double e = dentropy ? dentropy[t] : 0.0;
        head_backward_row(m->g.dlogits + (size_t)t * V, m->a.logits + (size_t)t * V, V, m->temperature, target, w,
                          e);
    }
}

/* Recomputes P for a block from the stored log-sum-exp (0 above the diagonal). */
static void probs_block(float *S, const float *lse, int lse_stride, int r0, int rows, int cols) {
    for (int i = 0; i < rows; i++) {
        float *s = S + (size_t)i * cols;
        float l = lse[(size_t)(r0 + i) * lse_stride];
        int last = r0 + i;
        for (int j = 0; j <= last; j++) s[j] = expf(s[j] - l);
        for (int j = last + 1; j < cols; j++) s[j] = 0.0f;
    }
}

/* dP ← P ∘ (dP − Σ_j P·dP), row by row: the softmax backward in O(cols). */
static void softmax_block_backward(float *dP, const float *P, int rows, int cols) {
    for (int i = 0; i < rows; i++) {
        const float *p = P + (size_t)i * cols;
        float *d = dP + (size_t)i * cols;
        float dot = 0.0f;
        for (int j = 0; j < cols; j++) dot += p[j] * d[j];
        for (int j = 0; j < cols; j++) d[j] = p[j] * (d[j] - dot);
    }
}

/* One head's backward: h->o holds dO; dq is this head's slice of dQ (stride
 * C), dk/dv its own slices of dK/dV per query head (stride C); all three are
 * accumulated. */
static void attention_head_backward(const head_slice *h, float *dq, float *dk, float *dv, float *S, float *dS) {
    for (int r0 = 0; r0 < h->n; r0 += ATTN_BLOCK) {
        int rows = h->n - r0 < ATTN_BLOCK ? h->n - r0 : ATTN_BLOCK;
        int cols = r0 + rows;
        const float *dO = h->o + (size_t)r0 * h->ldq;
        scores_block(S, h, r0, rows, cols);
        probs_block(S, h->lse, h->lse_stride, r0, rows, cols);
        /* dP (rows, cols) = dO · V[0:cols]ᵀ */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, cols, h->hd, 1.0f, dO, h->ldq, h->v, h->ldkv, 0.0f,
                    dS, cols);
        /* dV[0:cols] += Pᵀ · dO */
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, cols, h->hd, rows, 1.0f, S, cols, dO, h->ldq, 1.0f, dv,
                    h->ldq);
        softmax_block_backward(dS, S, rows, cols);
        /* dQ[r0:r1] += scale · dS · K[0:cols] ;  dK[0:cols] += scale · dSᵀ · Q[r0:r1] */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, h->hd, cols, h->scale, dS, cols, h->k, h->ldkv,
                    1.0f, dq + (size_t)r0 * h->ldq, h->ldq);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, cols, h->hd, rows, h->scale, dS, cols,
                    h->q + (size_t)r0 * h->ldq, h->ldq, 1.0f, dk, h->ldq);
    }
}

/* dk (T, kv_dim) += Σ over the query heads of each KV head of dk_head
 * (T, C), in head order; the same for dv. */
static void gqa_sum(float *dk, float *dv, const float *dk_head, const float *dv_head, int T, int n_heads,
                    int n_kv_heads, int hd) {
    int group = n_heads / n_kv_heads, C = n_heads * hd, kv = n_kv_heads * hd;
#pragma omp parallel for schedule(static)
    for (int t = 0; t < T; t++)
        for (int hq = 0; hq < n_heads; hq++) {
            const float *sk = dk_head + (size_t)t * C + (size_t)hq * hd, *sv = dv_head + (size_t)t * C + (size_t)hq * hd;
            float *ok = dk + (size_t)t * kv + (size_t)(hq / group) * hd, *ov = dv + (size_t)t * kv + (size_t)(hq / group) * hd;
            for (int d = 0; d < hd; d++) {
                ok[d] += sk[d];
                ov[d] += sv[d];
            }
        }
}

/* dq += ..., dk/dv += ... for one layer's attention; dout holds dO. */
static void attention_backward(rlvr_model *m, float *dq, float *dk, float *dv, float *dout, const float *q,
                               const float *k, const float *v, float *lse) {
    grad_acts_t *g = &m->g;
    int H = m->cfg.n_heads, n_tasks = m->n_seqs * H;
    size_t TC = (size_t)m->n_tokens * m->cfg.d_model;
    memset(g->dk_head, 0, TC * sizeof(float));
    memset(g->dv_head, 0, TC * sizeof(float));
#pragma omp parallel for schedule(dynamic, 1) num_threads(attention_threads(m))
    for (int task = 0; task < n_tasks; task++) {
        head_slice h = slice_of(m, task / H, task % H, q, k, v, dout, lse);
        if (h.n == 0) continue;
        size_t oq = (size_t)(h.q - q); /* this head's column block, rows from the sequence start */
        attention_head_backward(&h, dq + oq, g->dk_head + oq, g->dv_head + oq, thread_scratch(m, 0),
                                thread_scratch(m, 1));
    }
    gqa_sum(dk, dv, g->dk_head, g->dv_head, m->n_tokens, H, m->cfg.n_kv_heads, m->head_dim);
}

static void layer_backward(rlvr_model *m, int l) {
    const rlvr_model_config *c = &m->cfg;
    const rlvr_param_views *p = &m->pv, *gp = &m->gv;
    acts_t *a = &m->a;
    grad_acts_t *g = &m->g;
    int T = m->n_tokens, C = c->d_model, F = c->d_ff, kv = m->kv_dim, H = c->n_heads, hd = m->head_dim;
    size_t TC = (size_t)T * C, Tkv = (size_t)T * kv, TF = (size_t)T * F;
    size_t oC = (size_t)l * C, oCC = (size_t)l * C * C, oKC = (size_t)l * kv * C, oFC = (size_t)l * F * C;
    const float *x = a->resid + l * TC, *mid = a->resid_mid + l * TC;

    /* MLP branch: g->dresid holds d(resid[l+1]) = d(mid) through the skip */
    memset(g->dh, 0, TF * sizeof(float));
    matmul_backward(g->dh, gp->w_down + oFC, g->dresid, a->hmlp + l * TF, p->w_down + oFC, T, F, C);
    memset(g->dgate, 0, TF * sizeof(float));
    memset(g->dup, 0, TF * sizeof(float));
    swiglu_backward(g->dgate, g->dup, g->dh, a->gate + l * TF, a->up + l * TF, T, F);
    memset(g->dxn, 0, TC * sizeof(float));
    matmul_backward(g->dxn, gp->w_gate + oFC, g->dgate, a->xn2 + l * TC, p->w_gate + oFC, T, C, F);
    matmul_backward(g->dxn, gp->w_up + oFC, g->dup, a->xn2 + l * TC, p->w_up + oFC, T, C, F);
    rmsnorm_backward(g->dresid, gp->mlp_norm + oC, g->dxn, mid, p->mlp_norm + oC, a->rstd2 + (size_t)l * T, T, C);

    /* attention branch: g->dresid now holds d(mid) = d(resid[l]) through the skip */
    memset(g->dao, 0, TC * sizeof(float));
    matmul_backward(g->dao, gp->wo + oCC, g->dresid, a->ao + l * TC, p->wo + oCC, T, C, C);
    memset(g->dq, 0, TC * sizeof(float));
    memset(g->dk, 0, Tkv * sizeof(float));
    memset(g->dv, 0, Tkv * sizeof(float));
    attention_backward(m, g->dq, g->dk, g->dv, g->dao, a->q + l * TC, a->k + l * Tkv, a->v + l * Tkv,
                       a->lse + (size_t)l * T * H);
    rope_backward(g->dq, m->positions, T, H, hd, c->rope_theta, &c->rope_scaling);
    rope_backward(g->dk, m->positions, T, c->n_kv_heads, hd, c->rope_theta, &c->rope_scaling);
    if (c->qkv_bias) { /* the biases were added before RoPE: their gradient is dq, dk, dv summed over tokens */
        scatter_add_rows(gp->bq + oC, g->dq, NULL, T, C);
        scatter_add_rows(gp->bk + (size_t)l * kv, g->dk, NULL, T, kv);
        scatter_add_rows(gp->bv + (size_t)l * kv, g->dv, NULL, T, kv);
    }
    memset(g->dxn, 0, TC * sizeof(float));
    const float *xn1 = a->xn1 + l * TC;
    matmul_backward(g->dxn, gp->wq + oCC, g->dq, xn1, p->wq + oCC, T, C, C);
    matmul_backward(g->dxn, gp->wk + oKC, g->dk, xn1, p->wk + oKC, T, C, kv);
    matmul_backward(g->dxn, gp->wv + oKC, g->dv, xn1, p->wv + oKC, T, C, kv);
    rmsnorm_backward(g->dresid, gp->attn_norm + oC, g->dxn, x, p->attn_norm + oC, a->rstd1 + (size_t)l * T, T, C);
}

int rlvr_model_backward(rlvr_model *m, const float *dlogprob, const float *dentropy) {
    if (!m->have_forward) return RLVR_FAIL(RLVR_ESTATE, "model backward: no forward pass to differentiate");
    if (!dlogprob && !dentropy) return RLVR_FAIL(RLVR_EINVAL, "model backward: dlogprob and dentropy are both NULL");
    if (!m->grads) RLVR_TRY(rlvr_model_zero_grad(m));
    RLVR_TRY(grad_acts_ensure(m));
    const rlvr_model_config *c = &m->cfg;
    int T = m->n_tokens, C = c->d_model, L = c->n_layers;
    grad_acts_t *g = &m->g;

    head_backward(m, dlogprob, dentropy);
    memset(g->dxn, 0, (size_t)T * C * sizeof(float));
    matmul_backward(g->dxn, m->gv.lm_head, g->dlogits, m->a.xf, m->pv.lm_head, T, C, c->vocab);
    memset(g->dresid, 0, (size_t)T * C * sizeof(float));
    rmsnorm_backward(g->dresid, m->gv.final_norm, g->dxn, m->a.resid + (size_t)L * T * C, m->pv.final_norm,
                     m->a.rstdf, T, C);
    for (int l = L - 1; l >= 0; l--) layer_backward(m, l);
    scatter_add_rows(m->gv.embed, g->dresid, m->tokens, T, C); /* dembed[token] += dresid[t] */
    return 0;
}
