/* policy/model_config.c — [model] and [optim]: schema tables and readers. */
#include "policy/model_config.h"

#include "core/error.h"

#include <stddef.h>

/* [optim] as written: the schedule is the index of its name in the key's
 * choices, whose order is not rlvr_lr_schedule's. */
typedef struct {
    rlvr_adamw_config adamw;
    int schedule;
} optim_keys;

/* rlvr_lr_schedule of each choice of [optim] schedule, in the choices' order. */
static const rlvr_lr_schedule schedules[] = {RLVR_LR_COSINE, RLVR_LR_CONSTANT};

const rlvr_config_key rlvr_model_config_keys[] = {
    RLVR_KEY_I32("model", "vocab", rlvr_model_config, vocab, "272", 2, 16777216,
        "output rows of the LM head; at least the tokenizer's vocabulary (267 for the byte tokenizer, 267 + [tokenizer] "
        "merges for bpe)"),
    RLVR_KEY_I32("model", "d_model", rlvr_model_config, d_model, "256", 2, 65536, "width C of the residual stream"),
    RLVR_KEY_I32("model", "n_layers", rlvr_model_config, n_layers, "4", 1, 1024, "number of transformer blocks L"),
    RLVR_KEY_I32("model", "n_heads", rlvr_model_config, n_heads, "8", 1, 4096,
        "query heads H; divides d_model, and d_model / n_heads is even"),
    RLVR_KEY_I32("model", "n_kv_heads", rlvr_model_config, n_kv_heads, "4", 1, 4096,
        "key/value heads (grouped-query attention); divides n_heads"),
    RLVR_KEY_I32("model", "d_ff", rlvr_model_config, d_ff, "688", 1, 1048576, "hidden width F of the SwiGLU MLP"),
    RLVR_KEY_I32("model", "max_seq", rlvr_model_config, max_seq, "2048", 1, 16777216,
        "longest sequence (prompt + rollout) the policy accepts"),
    RLVR_KEY_FLOAT("model", "rope_theta", rlvr_model_config, rope_theta, "10000", 2, 1e12,
        "RoPE base: pair i turns by pos * theta^(-2i/head_dim)"),
    RLVR_KEY_ENUM("model", "rope_scaling", rlvr_model_config, rope_scaling.kind, "none", "none|llama3",
        "RoPE frequency scaling: none, or llama3 (Llama 3.1's rope_type \"llama3\", the four rope_* keys below)"),
    RLVR_KEY_FLOAT("model", "rope_scaling_factor", rlvr_model_config, rope_scaling.factor, "8", 0.001, 1e6,
        "llama3: long wavelengths are slowed by this factor"),
    RLVR_KEY_FLOAT("model", "rope_low_freq_factor", rlvr_model_config, rope_scaling.low_freq_factor, "1", 0.001, 1e6,
        "llama3: wavelengths above rope_original_max_seq / this are divided by the factor"),
    RLVR_KEY_FLOAT("model", "rope_high_freq_factor", rlvr_model_config, rope_scaling.high_freq_factor, "4", 0.001,
        1e6, "llama3: wavelengths below rope_original_max_seq / this stay; > rope_low_freq_factor"),
    RLVR_KEY_I32("model", "rope_original_max_seq", rlvr_model_config, rope_scaling.original_max_seq, "8192", 1,
        16777216, "llama3: the context length the model was pretrained with"),
    RLVR_KEY_BOOL("model", "qkv_bias", rlvr_model_config, qkv_bias, "false",
        "the q, k and v projections add a bias (Qwen2); biases start at 0 and are not decayed"),
    RLVR_KEY_FLOAT("model", "norm_eps", rlvr_model_config, norm_eps, "1e-5", 0, 1, "epsilon inside every RMSNorm"),
    RLVR_KEY_BOOL("model", "tie_embeddings", rlvr_model_config, tie_embeddings, "true",
        "the LM head reuses the token embedding matrix"),
    RLVR_KEY_U64("model", "init_seed", rlvr_model_config, init_seed, "1234", 0, 9.2e18,
        "seed of the weight initialisation (Philox, purpose INIT)"),
    RLVR_KEY_FLOAT("model", "init_std", rlvr_model_config, init_std, "0.02", 0, 10,
        "std of the normal init of weight matrices (wo, w_down: / sqrt(2 n_layers)); 0 means 0.02"),
    RLVR_KEY_END,
};

const rlvr_config_key rlvr_optim_config_keys[] = {
    RLVR_KEY_FLOAT("optim", "lr", optim_keys, adamw.lr, "3e-4", 0, 10, "peak learning rate of AdamW"),
    RLVR_KEY_FLOAT("optim", "beta1", optim_keys, adamw.beta1, "0.9", 0, 0.999999, "AdamW first-moment decay"),
    RLVR_KEY_FLOAT("optim", "beta2", optim_keys, adamw.beta2, "0.95", 0, 0.999999, "AdamW second-moment decay"),
    RLVR_KEY_FLOAT("optim", "eps", optim_keys, adamw.eps, "1e-8", 1e-30, 1, "AdamW denominator epsilon"),
    RLVR_KEY_FLOAT("optim", "weight_decay", optim_keys, adamw.weight_decay, "0.1", 0, 10,
        "decoupled weight decay, on weight matrices only (not norms)"),
    RLVR_KEY_FLOAT("optim", "grad_clip", optim_keys, adamw.grad_clip, "1.0", 0, 1e9,
        "maximum global L2 norm of the gradient; 0 disables clipping"),
    RLVR_KEY_I64("optim", "warmup_steps", optim_keys, adamw.warmup_steps, "10", 0, 1e12,
        "linear warm-up of the learning rate from 0 over these steps"),
    RLVR_KEY_I64("optim", "total_steps", optim_keys, adamw.total_steps, "1000", 1, 1e12,
        "step at which the cosine schedule reaches min_lr_ratio * lr"),
    RLVR_KEY_FLOAT("optim", "min_lr_ratio", optim_keys, adamw.min_lr_ratio, "0.1", 0, 1,
        "floor of the cosine schedule as a fraction of lr"),
    RLVR_KEY_ENUM("optim", "schedule", optim_keys, schedule, "cosine", "cosine|constant",
        "learning rate after warm-up: cosine decay or constant"),
    RLVR_KEY_END,
};

int rlvr_model_config_read(rlvr_model_config *out, const rlvr_config *cfg) {
    rlvr_model_config c = {0};
    RLVR_TRY(rlvr_config_fill(cfg, rlvr_model_config_keys, "model", &c));
    if (c.d_model % c.n_heads != 0)
        return rlvr_config_error(cfg, "model", "n_heads", "%d does not divide d_model = %d", c.n_heads, c.d_model);
    if ((c.d_model / c.n_heads) % 2 != 0)
        return rlvr_config_error(cfg, "model", "n_heads",
                                 "head size d_model / n_heads = %d must be even (RoPE rotates pairs)",
                                 c.d_model / c.n_heads);
    if (c.n_heads % c.n_kv_heads != 0)
        return rlvr_config_error(cfg, "model", "n_kv_heads", "%d does not divide n_heads = %d", c.n_kv_heads,
                                 c.n_heads);
    if (c.rope_scaling.kind == RLVR_ROPE_SCALING_NONE)
        c.rope_scaling = (rlvr_rope_scaling){0}; /* one form of "no scaling", as in checkpoints without it */
    else if (!(c.rope_scaling.high_freq_factor > c.rope_scaling.low_freq_factor))
        return rlvr_config_error(cfg, "model", "rope_high_freq_factor", "%g is not above rope_low_freq_factor = %g",
                                 c.rope_scaling.high_freq_factor, c.rope_scaling.low_freq_factor);
    if (rlvr_model_config_validate(&c) != 0)
        return rlvr_config_error(cfg, "model", "d_model", "%s", rlvr_error_last());
    *out = c;
    return 0;
}

int rlvr_adamw_config_read(rlvr_adamw_config *out, const rlvr_config *cfg) {
    optim_keys k = {0};
    RLVR_TRY(rlvr_config_fill(cfg, rlvr_optim_config_keys, "optim", &k));
    rlvr_adamw_config o = k.adamw;
    o.schedule = schedules[k.schedule];
    if (o.schedule == RLVR_LR_COSINE && o.warmup_steps >= o.total_steps)
        return rlvr_config_error(cfg, "optim", "warmup_steps",
                                 "%lld is not below total_steps = %lld; the cosine schedule would never decay",
                                 (long long)o.warmup_steps, (long long)o.total_steps);
    *out = o;
    return 0;
}
