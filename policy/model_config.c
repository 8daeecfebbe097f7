/* policy/model_config.c — [model] and [optim]: schema tables and readers. */
#include "policy/model_config.h"

#include "core/error.h"

#include <string.h>

const rlvr_config_key rlvr_model_config_keys[] = {
    {"model", "vocab", RLVR_CFG_INT, "272",
     "output rows of the LM head; at least the tokenizer's vocabulary (267 for the byte tokenizer, 267 + [tokenizer] "
     "merges for bpe)",
     NULL,
     RLVR_CFG_RANGE(2, 16777216)},
    {"model", "d_model", RLVR_CFG_INT, "256", "width C of the residual stream", NULL, RLVR_CFG_RANGE(2, 65536)},
    {"model", "n_layers", RLVR_CFG_INT, "4", "number of transformer blocks L", NULL, RLVR_CFG_RANGE(1, 1024)},
    {"model", "n_heads", RLVR_CFG_INT, "8", "query heads H; divides d_model, and d_model / n_heads is even", NULL,
     RLVR_CFG_RANGE(1, 4096)},
    {"model", "n_kv_heads", RLVR_CFG_INT, "4", "key/value heads (grouped-query attention); divides n_heads", NULL,
     RLVR_CFG_RANGE(1, 4096)},
    {"model", "d_ff", RLVR_CFG_INT, "688", "hidden width F of the SwiGLU MLP", NULL, RLVR_CFG_RANGE(1, 1048576)},
    {"model", "max_seq", RLVR_CFG_INT, "2048", "longest sequence (prompt + rollout) the policy accepts", NULL,
     RLVR_CFG_RANGE(1, 16777216)},
    {"model", "rope_theta", RLVR_CFG_FLOAT, "10000", "RoPE base: pair i turns by pos * theta^(-2i/head_dim)", NULL,
     RLVR_CFG_RANGE(2, 1e12)},
    {"model", "norm_eps", RLVR_CFG_FLOAT, "1e-5", "epsilon inside every RMSNorm", NULL, RLVR_CFG_RANGE(0, 1)},
    {"model", "tie_embeddings", RLVR_CFG_BOOL, "true", "the LM head reuses the token embedding matrix", NULL,
     RLVR_CFG_ANY},
    {"model", "init_seed", RLVR_CFG_INT, "1234", "seed of the weight initialisation (Philox, purpose INIT)", NULL,
     RLVR_CFG_RANGE(0, 9.2e18)},
    {"model", "init_std", RLVR_CFG_FLOAT, "0.02",
     "std of the normal init of weight matrices (wo, w_down: / sqrt(2 n_layers)); 0 means 0.02", NULL,
     RLVR_CFG_RANGE(0, 10)},
    {NULL, NULL, 0, NULL, NULL, NULL, 0, 0},
};

const rlvr_config_key rlvr_optim_config_keys[] = {
    {"optim", "lr", RLVR_CFG_FLOAT, "3e-4", "peak learning rate of AdamW", NULL, RLVR_CFG_RANGE(0, 10)},
    {"optim", "beta1", RLVR_CFG_FLOAT, "0.9", "AdamW first-moment decay", NULL, RLVR_CFG_RANGE(0, 0.999999)},
    {"optim", "beta2", RLVR_CFG_FLOAT, "0.95", "AdamW second-moment decay", NULL, RLVR_CFG_RANGE(0, 0.999999)},
    {"optim", "eps", RLVR_CFG_FLOAT, "1e-8", "AdamW denominator epsilon", NULL, RLVR_CFG_RANGE(1e-30, 1)},
    {"optim", "weight_decay", RLVR_CFG_FLOAT, "0.1", "decoupled weight decay, on weight matrices only (not norms)",
     NULL, RLVR_CFG_RANGE(0, 10)},
    {"optim", "grad_clip", RLVR_CFG_FLOAT, "1.0", "maximum global L2 norm of the gradient; 0 disables clipping",
     NULL, RLVR_CFG_RANGE(0, 1e9)},
    {"optim", "warmup_steps", RLVR_CFG_INT, "10", "linear warm-up of the learning rate from 0 over these steps",
     NULL, RLVR_CFG_RANGE(0, 1e12)},
    {"optim", "total_steps", RLVR_CFG_INT, "1000", "step at which the cosine schedule reaches min_lr_ratio * lr",
     NULL, RLVR_CFG_RANGE(1, 1e12)},
    {"optim", "min_lr_ratio", RLVR_CFG_FLOAT, "0.1", "floor of the cosine schedule as a fraction of lr", NULL,
     RLVR_CFG_RANGE(0, 1)},
    {"optim", "schedule", RLVR_CFG_ENUM, "cosine", "learning rate after warm-up: cosine decay or constant",
     "cosine|constant", RLVR_CFG_ANY},
    {NULL, NULL, 0, NULL, NULL, NULL, 0, 0},
};

static int get_int(const rlvr_config *cfg, const char *section, const char *key, int *out) {
    int64_t v;
    RLVR_TRY(rlvr_config_get_int(cfg, section, key, &v));
    *out = (int)v; /* the schema ranges keep every key inside int */
    return 0;
}

static int get_float(const rlvr_config *cfg, const char *section, const char *key, float *out) {
    double v;
    RLVR_TRY(rlvr_config_get_double(cfg, section, key, &v));
    *out = (float)v;
    return 0;
}

int rlvr_model_config_read(rlvr_model_config *out, const rlvr_config *cfg) {
    rlvr_model_config c = {0};
    int64_t seed;
    RLVR_TRY(get_int(cfg, "model", "vocab", &c.vocab));
    RLVR_TRY(get_int(cfg, "model", "d_model", &c.d_model));
    RLVR_TRY(get_int(cfg, "model", "n_layers", &c.n_layers));
    RLVR_TRY(get_int(cfg, "model", "n_heads", &c.n_heads));
    RLVR_TRY(get_int(cfg, "model", "n_kv_heads", &c.n_kv_heads));
    RLVR_TRY(get_int(cfg, "model", "d_ff", &c.d_ff));
    RLVR_TRY(get_int(cfg, "model", "max_seq", &c.max_seq));
    RLVR_TRY(get_float(cfg, "model", "rope_theta", &c.rope_theta));
    RLVR_TRY(get_float(cfg, "model", "norm_eps", &c.norm_eps));
    RLVR_TRY(rlvr_config_get_bool(cfg, "model", "tie_embeddings", &c.tie_embeddings));
    RLVR_TRY(rlvr_config_get_int(cfg, "model", "init_seed", &seed));
    c.init_seed = (uint64_t)seed;
    RLVR_TRY(get_float(cfg, "model", "init_std", &c.init_std));

    if (c.d_model % c.n_heads != 0)
        return rlvr_config_error(cfg, "model", "n_heads", "%d does not divide d_model = %d", c.n_heads, c.d_model);
    if ((c.d_model / c.n_heads) % 2 != 0)
        return rlvr_config_error(cfg, "model", "n_heads",
                                 "head size d_model / n_heads = %d must be even (RoPE rotates pairs)",
                                 c.d_model / c.n_heads);
    if (c.n_heads % c.n_kv_heads != 0)
        return rlvr_config_error(cfg, "model", "n_kv_heads", "%d does not divide n_heads = %d", c.n_kv_heads,
                                 c.n_heads);
    if (rlvr_model_config_validate(&c) != 0)
        return rlvr_config_error(cfg, "model", "d_model", "%s", rlvr_error_last());
    *out = c;
    return 0;
}

int rlvr_adamw_config_read(rlvr_adamw_config *out, const rlvr_config *cfg) {
    rlvr_adamw_config o = {0};
    const char *schedule;
    RLVR_TRY(get_float(cfg, "optim", "lr", &o.lr));
    RLVR_TRY(get_float(cfg, "optim", "beta1", &o.beta1));
    RLVR_TRY(get_float(cfg, "optim", "beta2", &o.beta2));
    RLVR_TRY(get_float(cfg, "optim", "eps", &o.eps));
    RLVR_TRY(get_float(cfg, "optim", "weight_decay", &o.weight_decay));
    RLVR_TRY(get_float(cfg, "optim", "grad_clip", &o.grad_clip));
    RLVR_TRY(rlvr_config_get_int(cfg, "optim", "warmup_steps", &o.warmup_steps));
    RLVR_TRY(rlvr_config_get_int(cfg, "optim", "total_steps", &o.total_steps));
    RLVR_TRY(get_float(cfg, "optim", "min_lr_ratio", &o.min_lr_ratio));
    RLVR_TRY(rlvr_config_get_string(cfg, "optim", "schedule", &schedule));
    o.schedule = strcmp(schedule, "constant") == 0 ? RLVR_LR_CONSTANT : RLVR_LR_COSINE;
    if (o.schedule == RLVR_LR_COSINE && o.warmup_steps >= o.total_steps)
        return rlvr_config_error(cfg, "optim", "warmup_steps",
                                 "%lld is not below total_steps = %lld; the cosine schedule would never decay",
                                 (long long)o.warmup_steps, (long long)o.total_steps);
    *out = o;
    return 0;
}
