/* policy/model.h — the policy: a Llama-style decoder-only transformer on CPU.
 *
 *   tokens → embedding → L × [ x += Attn(RMSNorm(x)) ; x += SwiGLU(RMSNorm(x)) ]
 *          → RMSNorm → LM head → logits / temperature → softmax = π(·|prefix)
 *
 * Attention: RoPE (interleaved pairs, see kernels.h), grouped-query attention
 * (query head h reads KV head h / (n_heads / n_kv_heads)), causal within each
 * sequence of a packed batch (no attention across sequences, no padding).
 *
 * State follows llm.c: parameters, gradients and the two AdamW moments each
 * live in one flat float buffer with the same layout, and rlvr_param_views
 * points into it. An all-reduce or an optimizer step is one loop over the
 * flat buffer. Temperature is part of the policy distribution: the trainer
 * and the sampler both use softmax(logits / temperature). */
#ifndef RLVR_POLICY_MODEL_H
#define RLVR_POLICY_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* RoPE frequency scaling. NONE: frequency i of a head is
 * theta^(-2i/hd). LLAMA3 (Llama 3.1's "rope_type": "llama3"): with
 * wavelength λ = 2π / f, frequencies with λ < original_max_seq /
 * high_freq_factor stay, those with λ > original_max_seq / low_freq_factor
 * are divided by factor, and the ones between are interpolated with
 * s = (original_max_seq / λ − low_freq_factor) / (high_freq_factor − low_freq_factor):
 * f' = (1 − s)·f / factor + s·f. */
typedef enum { RLVR_ROPE_SCALING_NONE = 0, RLVR_ROPE_SCALING_LLAMA3 = 1 } rlvr_rope_scaling_kind;

typedef struct {
    rlvr_rope_scaling_kind kind;
    float factor;          /* LLAMA3: e.g. 8 */
    float low_freq_factor; /* LLAMA3: e.g. 1 */
    float high_freq_factor;/* LLAMA3: e.g. 4 */
    int original_max_seq;  /* LLAMA3: the pretraining context, e.g. 8192 */
} rlvr_rope_scaling;

typedef struct {
    int vocab;          /* V */
    int d_model;        /* C */
    int n_layers;       /* L */
    int n_heads;        /* H query heads; head_dim = C / H */
    int n_kv_heads;     /* KV heads, divides H */
    int d_ff;           /* F, SwiGLU hidden width */
    int max_seq;        /* longest sequence (positions 0..max_seq-1) */
    float rope_theta;   /* RoPE base, e.g. 10000 */
    rlvr_rope_scaling rope_scaling; /* zero = none */
    float norm_eps;     /* RMSNorm epsilon */
    bool tie_embeddings;/* LM head shares the embedding matrix */
    bool qkv_bias;      /* q, k and v projections add a bias (Qwen2) */
    uint64_t init_seed; /* weight initialisation seed (Philox, purpose INIT) */
    float init_std;     /* std of the normal init of matrices (0 = 0.02) */
} rlvr_model_config;

/* Views into one flat buffer, in this order. Shapes use C = d_model,
 * hd = C / H, KV·hd = kv_dim, F = d_ff, V = vocab. Matrices are (out, in)
 * row-major like PyTorch's nn.Linear.weight. */
typedef struct {
    float *embed;      /* (V, C) */
    float *attn_norm;  /* (L, C) */
    float *wq;         /* (L, C, C)       rows = H·hd */
    float *wk;         /* (L, kv_dim, C) */
    float *wv;         /* (L, kv_dim, C) */
    float *wo;         /* (L, C, C) */
    float *mlp_norm;   /* (L, C) */
    float *w_gate;     /* (L, F, C) */
    float *w_up;       /* (L, F, C) */
    float *w_down;     /* (L, C, F) */
    float *final_norm; /* (C) */
    float *lm_head;    /* (V, C); == embed when tie_embeddings */
    float *bq;         /* (L, C)      only with qkv_bias (0 elements otherwise) */
    float *bk;         /* (L, kv_dim) only with qkv_bias */
    float *bv;         /* (L, kv_dim) only with qkv_bias */
} rlvr_param_views;

/* The biases come last so that a model without them has the flat layout
 * of the first twelve tensors alone. */
#define RLVR_PARAM_TENSORS 15

/* A packed batch: n_seqs sequences laid end to end, no padding.
 * Sequence s occupies tokens[offsets[s] .. offsets[s+1]). */
typedef struct {
    int n_seqs;
    const int32_t *offsets; /* (n_seqs + 1), offsets[0] = 0 */
    const int32_t *tokens;  /* (offsets[n_seqs]) */
} rlvr_batch;

typedef struct rlvr_model rlvr_model;

/* Checks the configuration (divisibility, sizes); RLVR_EINVAL with a message. */
int rlvr_model_config_validate(const rlvr_model_config *cfg);

/* Allocates parameters and initialises them deterministically from
 * cfg->init_seed: matrices N(0, init_std²) (output projections wo, w_down
 * scaled by 1/sqrt(2L)), norm weights 1, q/k/v biases 0. Gradients, moments and activations
 * are allocated lazily. */
int rlvr_model_new(rlvr_model **out, const rlvr_model_config *cfg);
/* The same model with every parameter 0 and no page of the parameter
 * buffer touched yet (it costs memory only as it is written): for a model
 * whose parameters are read in at once, e.g. a checkpoint streamed tensor
 * by tensor into a sampler (rlvr_sampler_pack_tensor). */
int rlvr_model_new_blank(rlvr_model **out, const rlvr_model_config *cfg);
void rlvr_model_free(rlvr_model *m);

/* Gives the memory of parameter tensor i back to the kernel (the whole
 * pages inside it; core/mem.h): its values read as 0 afterwards, and the
 * parameters version does not change. Only for a model that is from then
 * on the shape and the remaining tensors for a sampler that packed tensor
 * i already (rlvr_sampler_pack_tensor): never for one that trains, is
 * saved, or whose sampler may repack. */
void rlvr_model_release_tensor(rlvr_model *m, int i);

const rlvr_model_config *rlvr_model_config_of(const rlvr_model *m);
/* Number of distinct parameters (the tied LM head counted once). */
size_t rlvr_model_num_params(const rlvr_model *m);

/* Flat buffers (all num_params long, same layout). Gradients and moments are
 * allocated on first use; these return NULL before. */
float *rlvr_model_params(rlvr_model *m);
/* The same buffer for reading only (hashing, publishing, saving): does not
 * count as a change of the parameters. */
const float *rlvr_model_params_read(const rlvr_model *m);
/* A number that changes whenever the parameters may have changed: every
 * rlvr_model_params call counts as one (it hands out the writable buffer;
 * optimizer steps, checkpoint loads and weight broadcasts all go through
 * it; rlvr_model_params_read does not). Holders of derived copies (the sampler's packed weights) compare it
 * before use. Writes through rlvr_model_param_views are not counted: make
 * them before creating a sampler, or call rlvr_model_params afterwards. */
uint64_t rlvr_model_params_version(const rlvr_model *m);
float *rlvr_model_grads(rlvr_model *m);
float *rlvr_model_adam_m(rlvr_model *m);
float *rlvr_model_adam_v(rlvr_model *m);
/* Views for params (or grads) by tensor. */
const rlvr_param_views *rlvr_model_param_views(const rlvr_model *m);
const rlvr_param_views *rlvr_model_grad_views(const rlvr_model *m);
/* Name and element count of tensor i (0 <= i < RLVR_PARAM_TENSORS), for
 * checkpoints and tests; a tied lm_head reports 0 elements. */
const char *rlvr_model_tensor_name(int i);
size_t rlvr_model_tensor_size(const rlvr_model *m, int i);
/* Where tensor i starts in the flat buffers (elements). */
size_t rlvr_model_tensor_offset(const rlvr_model *m, int i);
/* True for the matrices AdamW decays (embed, wq, wk, wv, wo, w_gate, w_up,
 * w_down, lm_head); false for the RMSNorm weights and the q/k/v biases. */
bool rlvr_model_tensor_decays(int i);

/* Allocates (zeroed) the gradient and AdamW moment buffers now, so that a
 * checkpoint can be restored into rlvr_model_adam_m/v before the first step. */
int rlvr_model_alloc_optim_state(rlvr_model *m);

/* Floating-point operations of one forward over `batch` (2 per multiply-add):
 * every matmul, plus causal attention (row i of a sequence sees i+1 keys, in
 * QKᵀ and in PV). A training step (forward + backward) counts 3× that. For
 * benchmarks: GFLOP/s = flops / seconds / 1e9. */
double rlvr_model_forward_flops(const rlvr_model_config *cfg, const rlvr_batch *batch);
double rlvr_model_train_flops(const rlvr_model_config *cfg, const rlvr_batch *batch);

/* Training forward over a packed batch at a temperature (> 0).
 * For every position t of sequence s (offsets[s] <= t < offsets[s+1]):
 *   logprob_next[t] = log π(tokens[t+1] | tokens[offsets[s]..t])  (0 at the last position)
 *   entropy[t]      = H(π(·| tokens[offsets[s]..t]))
 * Either output may be NULL. Keeps what backward needs. */
int rlvr_model_forward(rlvr_model *m, const rlvr_batch *batch, float temperature, float *logprob_next,
                       float *entropy);

/* Raw logits of the last forward, (T_total, V), before temperature; NULL
 * when no forward succeeded. Valid until the next forward. */
const float *rlvr_model_logits(const rlvr_model *m);

/* Backward of the objective
 *   J = Σ_t dlogprob[t] · logprob_next[t] + Σ_t dentropy[t] · entropy[t]
 * through the last forward, ACCUMULATING into the gradient buffer (+=).
 * dentropy may be NULL. Cross-entropy SFT on masked positions is
 * dlogprob[t] = -mask[t] / N (minimising J); RL passes the per-token weights
 * of the loss. Gradients are of J as given (the caller picks the sign). */
int rlvr_model_backward(rlvr_model *m, const float *dlogprob, const float *dentropy);

/* Zeroes the gradient buffer (allocating it on first use). */
int rlvr_model_zero_grad(rlvr_model *m);

#endif
