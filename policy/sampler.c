/* policy/sampler.c — KV-cache sampler (see sampler.h for the contract).
 *
 * Layout of the run state (C = d_model, KV = n_kv_heads·hd, F = d_ff,
 * V = vocab, S = kv_slots, T = context, R = rows per forward call):
 *   key_cache, value_cache  (L, S, n_kv_heads, T, hd): one KV head's
 *                           positions side by side, which attention streams
 *   logits                  (S, V)  next-token logits of each slot's last token
 * A slot forked from another reads positions below its shared_len from its
 * parent's rows (copy-on-write, one level deep: a fork of a fork points at
 * the root and copies the middle slot's private rows).
 * One forward call processes R "rows", each a (slot, position, token); a
 * decode step has one row per slot, a prefill chunk the rows of one slot.
 *
 * Threads: a forward call is one OpenMP parallel region at most, and none
 * when its work is small (small models decode one sequence on the calling
 * thread: waking a team and meeting at barriers costs more than the work,
 * and far more when the machine is oversubscribed and a waiting thread
 * spins). The threads split the rows into contiguous groups, each group
 * running every layer on its own rows without waiting for the others;
 * prefill rows attend to each other's keys, so there the groups meet once
 * per layer, after storing K and V. When there are too few rows to go
 * round (one sequence of a large model, a G = 16 group), the threads of a
 * group also split each step's output channels and meet after each step:
 * four times per layer when each can take whole KV heads through q/k/v,
 * RoPE, the K/V store and attention (docs/POLICY.md, "Threads").
 * Every output element is computed whole by one thread with the kernels of
 * sampler_kernels.h, so the split changes no bit.
 *
 * Weights: the matmuls read a packed copy of the model's matrices
 * (matmul_pack: k-major panels), made at creation and remade before a
 * forward call whenever rlvr_model_params_version says the parameters may
 * have changed since (an optimizer step, a checkpoint load, a broadcast), so
 * every call still computes with the model's current weights. */
#include "policy/sampler.h"

#include "core/error.h"
#include "core/mem.h"
#include "core/rng.h"
#include "policy/kernels.h"
#include "policy/packed_weights.h"
#include "policy/quant_kernels.h"
#include "policy/sampler_kernels.h"

#include <math.h>
#include <omp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Rows per prefill forward call: more rows = more weight reuse and fewer
 * meetings of the threads per token. */
#define PREFILL_ROWS 128
/* A forward call below this many multiply-adds runs on the calling thread. */
#define PARALLEL_MACS (4.0 * 1024 * 1024)
/* Threads split the channels of a row group only when each step between
 * two barriers has at least this many multiply-adds. */
#define STEP_MACS (128.0 * 1024)
/* Each row group reads all the weights, splitting channels reads each
 * weight once per call. Weights up to ROW_GROUP_BYTES come from the caches
 * and a row group may be one row; larger ones come from memory, and a group
 * needs ROW_GROUP_ROWS rows for its arithmetic to hide that. */
#define ROW_GROUP_BYTES (4u << 20)
#define ROW_GROUP_ROWS 32

const rlvr_config_key rlvr_sampler_config_keys[] = {
    RLVR_KEY_FLOAT("sampler", "temperature", rlvr_sampler_config, temperature, "1.0", 0.01, 100.0,
        "sampling temperature τ: the policy is softmax(logits/τ) in sampling and in training"),
    RLVR_KEY_I32("sampler", "max_new_tokens", rlvr_sampler_config, max_new_tokens, "512", 0, 10000000,
        "most tokens the sampler draws in one turn when used on its own (benches, library callers); harness "
        "rollouts replace it by the policy-token budget left or the context room (0 = until the context is full)"),
    RLVR_KEY_I32("sampler", "kv_slots", rlvr_sampler_config, kv_slots, "64", 1, 65536,
        "sequences one rollout rank keeps in its KV cache at once (environments in flight × G)"),
    RLVR_KEY_I32("sampler", "context_tokens", rlvr_sampler_config, context, "0", 0, 10000000,
        "positions per KV slot; 0 = [model] max_seq"),
    RLVR_KEY_ENUM("sampler", "weights", rlvr_sampler_config, weights, "f32", "f32|bf16|q8_0",
        "format of the sampler's copy of the weights: f32 (exact: the trainer's log-probs), bf16 or q8_0 (GGUF's "
        "Q8_0) for faster rollouts whose log-probs differ from the trainer's (docs/POLICY.md \"Weight formats\")"),
    RLVR_KEY_END,
};

void rlvr_sampler_config_default(rlvr_sampler_config *c) {
    memset(c, 0, sizeof *c);
    (void)rlvr_config_fill_defaults(rlvr_sampler_config_keys, "sampler", c); /* parses: test_config_tables */
    c->version = RLVR_SAMPLER_CONFIG_VERSION;
    c->top_p = 1.0f;
}

bool rlvr_sampler_exact(const rlvr_sampler_config *c) {
    /* the sampler's float32 kernels are the training forward's (docs/POLICY.md "One forward") */
    return c->weights == RLVR_SAMPLER_WEIGHTS_F32;
}

static const char *const weights_names[] = {"f32", "bf16", "q8_0"};
enum { WEIGHTS_FORMATS = sizeof weights_names / sizeof weights_names[0] };

const char *rlvr_sampler_weights_name(rlvr_sampler_weights w) {
    return (unsigned)w < WEIGHTS_FORMATS ? weights_names[w] : "?";
}

const char *rlvr_sampler_weights_kernel(rlvr_sampler_weights w) {
    if (w == RLVR_SAMPLER_WEIGHTS_F32) {
#if defined(__AVX512F__)
        return "avx512";
#elif defined(__AVX__)
        return "avx";
#else
        return "portable";
#endif
    }
    return quant_kernel_name(w);
}

int rlvr_sampler_weights_parse(const char *name, rlvr_sampler_weights *out) {
    for (int i = 0; i < WEIGHTS_FORMATS; i++)
        if (strcmp(name, weights_names[i]) == 0) {
            *out = (rlvr_sampler_weights)i;
            return 0;
        }
    return RLVR_FAIL(RLVR_EINVAL, "unknown weight format \"%s\"; known: f32, bf16, q8_0", name);
}

int rlvr_sampler_config_from(rlvr_sampler_config *out, const rlvr_config *cfg) {
    RLVR_TRY(rlvr_config_fill(cfg, rlvr_sampler_config_keys, "sampler", out));
    out->version = RLVR_SAMPLER_CONFIG_VERSION;
    out->top_p = 1.0f; /* not a key: training samples from the whole distribution */
    return 0;
}

int rlvr_sampler_config_validate(const rlvr_config *cfg, const rlvr_model_config *model) {
    rlvr_sampler_config c;
    rlvr_sampler_config_default(&c);
    RLVR_TRY(rlvr_config_fill(cfg, rlvr_sampler_config_keys, "sampler", &c));
    if (c.context > model->max_seq)
        return rlvr_config_error(cfg, "sampler", "context_tokens", "%lld exceeds [model] max_seq = %d",
                                 (long long)c.context, model->max_seq);
    return 0;
}

typedef struct {
    int32_t len;         /* tokens in the sequence: positions 0..len-1 */
    int32_t parent;      /* slot holding positions 0..shared_len-1, or -1 */
    int32_t shared_len;  /* positions read from the parent's rows */
    int32_t refs;        /* slots that read a prefix of this slot's rows */
    int32_t turn_tokens; /* tokens sampled since the last prefill */
    int32_t turn_limit;  /* cap on turn_tokens; 0 = none */
    uint32_t step, sequence; /* Philox identity of the draws */
    bool stopped;        /* a stop was reported; decode needs a prefill first */
} slot_state;

struct rlvr_sampler {
    const rlvr_model *model; /* borrowed: config and weights */
    packed_weights pw;       /* every matrix packed for the matmul, in cfg.weights' format */
    uint64_t packed_version; /* rlvr_model_params_version when packed */
    double pack_seconds;     /* how long the last packing took */
    rlvr_model_config mc;
    rlvr_sampler_config cfg;
    int ctx;       /* T: positions per slot */
    int kv_dim;    /* KV = n_kv_heads · head_dim */
    int head_dim;  /* hd = C / H */
    int max_rows;  /* R: rows one forward call can hold */
    int threads;   /* threads the per-thread scratch is sized for (grows with OpenMP's maximum) */
    /* schedule thresholds (sampler_set_schedule overrides them in tests) */
    double parallel_macs; /* a forward call below this runs on one thread */
    double step_macs;     /* fewest multiply-adds between two barriers */
    int rows_each;        /* fewest rows of a row group */

    float *key_cache;   /* (L, S, n_kv_heads, T, hd) */
    float *value_cache; /* (L, S, n_kv_heads, T, hd) */
    float *logits;      /* (S, V) pending next-token logits per slot */
    slot_state *slots;  /* (S) */
    int32_t *stop_ids;  /* (n_stop) */
    int n_stop;

    /* activations of one forward call */
    int32_t *row_slot, *row_pos, *row_tok; /* (R) */
    int64_t *row_kv;    /* (R) float offset of the row's slot in one layer's cache */
    int64_t *row_prefix;/* (R) same for the slot's parent (the shared prefix) */
    int32_t *row_shared;/* (R) positions the row reads from its parent */
    float *rope;        /* (T, hd/2, 2) RoPE cos and sin per position, filled up to rope_len */
    int rope_len;
    float *x;           /* (R, C) residual stream */
    float *xn;          /* (threads, R, C) normalised input of a sublayer, per thread */
    float *q;           /* (R, C) */
    float *k, *v;       /* (R, KV) */
    float *att;         /* (R, C) attention output before wo */
    float *proj;        /* (R, C) output of wo / w_down before the residual add */
    float *gate, *up;   /* (R, F) */
    float *hidden;      /* (R, F) swiglu(gate, up) */
    float *scores;      /* (threads, 2T) attention scratch of each thread */
    unsigned char *act; /* (threads, act_bytes) inputs rounded for the quantized kernels */
    size_t act_bytes;   /* per thread; 0 for f32 */
    int32_t *bounds;    /* (threads + 1) first row of each row group of a forward call */
    float *row_logits;  /* (R, V) */
    float *probs;       /* (R, V) sampling distribution per decoded slot */
    uint8_t *seen;      /* (S) duplicate-slot check of one decode call */
};

/* ---- construction ---------------------------------------------------- */

/* Weights of one layer (floats). */
static size_t layer_weights(const rlvr_model_config *m, int kv_dim) {
    size_t C = (size_t)m->d_model;
    return 2 * C * C + 2 * (size_t)kv_dim * C + 3 * (size_t)m->d_ff * C;
}

static int check_config(const rlvr_sampler_config *cfg, const rlvr_model_config *mc) {
    if (cfg->version != RLVR_SAMPLER_CONFIG_VERSION)
        return RLVR_FAIL(RLVR_EINVAL, "sampler config version %d, this build knows %d (use rlvr_sampler_config_default)",
                         cfg->version, RLVR_SAMPLER_CONFIG_VERSION);
    if (!(cfg->temperature >= 0.0f) || !isfinite(cfg->temperature))
        return RLVR_FAIL(RLVR_EINVAL, "sampler temperature must be >= 0 (0 = greedy), got %g",
                         (double)cfg->temperature);
    if (!(cfg->top_p > 0.0f && cfg->top_p <= 1.0f))
        return RLVR_FAIL(RLVR_EINVAL, "sampler top_p must be in (0, 1], got %g", (double)cfg->top_p);
    if (cfg->kv_slots < 1) return RLVR_FAIL(RLVR_EINVAL, "sampler kv_slots must be >= 1, got %d", cfg->kv_slots);
    if (cfg->context < 0 || cfg->context > mc->max_seq)
        return RLVR_FAIL(RLVR_EINVAL, "sampler context %d must be in [0, model max_seq = %d]", cfg->context,
                         mc->max_seq);
    if (cfg->max_new_tokens < 0)
        return RLVR_FAIL(RLVR_EINVAL, "sampler max_new_tokens must be >= 0, got %d", cfg->max_new_tokens);
    if ((unsigned)cfg->weights >= WEIGHTS_FORMATS)
        return RLVR_FAIL(RLVR_EINVAL, "sampler weights format %d unknown (f32, bf16, q8_0)", (int)cfg->weights);
    return 0;
}

static int alloc_floats(float **p, size_t n, const char *what) {
    *p = malloc((n ? n : 1) * sizeof **p);
    if (!*p) return RLVR_FAIL(RLVR_ENOMEM, "sampler: out of memory for %s (%zu floats)", what, n);
    return 0;
}

/* The caches and activations, rewritten at every step: memory that the
 * sandboxes' forks do not write-protect (core/mem.h). */
static int alloc_unshared(float **p, size_t n, const char *what) {
    *p = rlvr_mem_alloc(n * sizeof **p);
    if (!*p) return RLVR_FAIL(RLVR_ENOMEM, "sampler: out of memory for %s (%zu floats)", what, n);
    return 0;
}

static int alloc_state(rlvr_sampler *s) {
    const rlvr_model_config *m = &s->mc;
    size_t S = (size_t)s->cfg.kv_slots, T = (size_t)s->ctx, R = (size_t)s->max_rows;
    size_t C = (size_t)m->d_model, F = (size_t)m->d_ff, V = (size_t)m->vocab, KV = (size_t)s->kv_dim;
    size_t cache = (size_t)m->n_layers * S * T * KV;
    RLVR_TRY(alloc_unshared(&s->key_cache, cache, "the key cache"));
    RLVR_TRY(alloc_unshared(&s->value_cache, cache, "the value cache"));
    RLVR_TRY(alloc_unshared(&s->logits, S * V, "slot logits"));
    RLVR_ALLOC(s->slots, S);
    for (size_t i = 0; i < S; i++) s->slots[i].parent = -1;
    RLVR_ALLOC(s->seen, S);
    RLVR_ALLOC(s->row_slot, R);
    RLVR_ALLOC(s->row_pos, R);
    RLVR_ALLOC(s->row_tok, R);
    RLVR_ALLOC(s->row_kv, R);
    RLVR_ALLOC(s->row_prefix, R);
    RLVR_ALLOC(s->row_shared, R);
    RLVR_TRY(alloc_unshared(&s->rope, T * (size_t)s->head_dim, "the RoPE table"));
    RLVR_TRY(alloc_unshared(&s->x, R * C, "activations"));
    RLVR_TRY(alloc_floats(&s->xn, (size_t)s->threads * R * C, "activations"));
    RLVR_TRY(alloc_unshared(&s->q, R * C, "activations"));
    RLVR_TRY(alloc_unshared(&s->k, R * KV, "activations"));
    RLVR_TRY(alloc_unshared(&s->v, R * KV, "activations"));
    RLVR_TRY(alloc_unshared(&s->att, R * C, "activations"));
    RLVR_TRY(alloc_unshared(&s->proj, R * C, "activations"));
    RLVR_TRY(alloc_unshared(&s->gate, R * F, "activations"));
    RLVR_TRY(alloc_unshared(&s->up, R * F, "activations"));
    RLVR_TRY(alloc_unshared(&s->hidden, R * F, "activations"));
    RLVR_TRY(alloc_floats(&s->scores, (size_t)s->threads * 2 * T, "attention scores"));
    if (s->cfg.weights != RLVR_SAMPLER_WEIGHTS_F32) {
        int widest = m->d_ff > m->d_model ? m->d_ff : m->d_model;
        s->act_bytes = quant_act_bytes(s->cfg.weights, (int)R, widest);
        s->act = malloc((size_t)s->threads * s->act_bytes);
        if (!s->act) return RLVR_FAIL(RLVR_ENOMEM, "sampler: out of memory for rounded activations");
    }
    RLVR_ALLOC(s->bounds, (size_t)s->threads + 1);
    RLVR_TRY(alloc_unshared(&s->row_logits, R * V, "logits"));
    RLVR_TRY(alloc_unshared(&s->probs, R * V, "probabilities"));
    return 0;
}

/* Packs the weights again when the model's parameters may have changed
 * since they were last packed. */
static void refresh_packed(rlvr_sampler *s) {
    uint64_t version = rlvr_model_params_version(s->model);
    if (version == s->packed_version) return;
    double t0 = omp_get_wtime();
    packed_weights_pack(&s->pw);
    s->pack_seconds = omp_get_wtime() - t0;
    s->packed_version = version;
}

static int sampler_make(rlvr_sampler **out, const rlvr_model *model, const rlvr_sampler_config *cfg, bool pack) {
    *out = NULL;
    const rlvr_model_config *mc = rlvr_model_config_of(model);
    RLVR_TRY(check_config(cfg, mc));
    rlvr_sampler *s;
    RLVR_ALLOC(s, 1);
    s->model = model;
    s->mc = *mc;
    s->cfg = *cfg;
    s->ctx = cfg->context ? cfg->context : mc->max_seq;
    s->head_dim = mc->d_model / mc->n_heads;
    s->kv_dim = mc->n_kv_heads * s->head_dim;
    s->max_rows = cfg->kv_slots > PREFILL_ROWS ? cfg->kv_slots : PREFILL_ROWS;
    s->threads = omp_get_max_threads();
    static const double bytes_per_weight[] = {4.0, 2.0, 34.0 / 32.0};
    size_t bytes = (size_t)((double)mc->n_layers * layer_weights(mc, s->kv_dim) * bytes_per_weight[cfg->weights]);
    s->parallel_macs = PARALLEL_MACS;
    s->step_macs = STEP_MACS;
    s->rows_each = bytes <= ROW_GROUP_BYTES ? 1 : ROW_GROUP_ROWS;
    int rc = alloc_state(s);
    if (rc == 0) rc = packed_weights_init_as(&s->pw, model, cfg->weights, "sampler");
    if (rc < 0) {
        rlvr_sampler_free(s);
        return rc;
    }
    s->packed_version = rlvr_model_params_version(model) - 1; /* not packed yet */
    if (pack) refresh_packed(s);
    *out = s;
    return 0;
}

int rlvr_sampler_new(rlvr_sampler **out, const rlvr_model *model, const rlvr_sampler_config *cfg) {
    return sampler_make(out, model, cfg, true);
}

int rlvr_sampler_new_unpacked(rlvr_sampler **out, const rlvr_model *model, const rlvr_sampler_config *cfg) {
    return sampler_make(out, model, cfg, false);
}

bool rlvr_sampler_pack_tensor(rlvr_sampler *s, int i) {
    size_t n = rlvr_model_tensor_size(s->model, i);
    const float *lo = rlvr_model_params_read(s->model) + rlvr_model_tensor_offset(s->model, i);
    double t0 = omp_get_wtime();
    if (n > 0) packed_weights_pack_range(&s->pw, lo, lo + n);
    s->pack_seconds += omp_get_wtime() - t0;
    s->packed_version = rlvr_model_params_version(s->model);
    bool packed = false;
    for (int j = 0; n > 0 && j < s->pw.n_jobs; j++) packed |= s->pw.jobs[j].src >= lo && s->pw.jobs[j].src < lo + n;
    return packed && lo != rlvr_model_param_views(s->model)->embed;
}

void rlvr_sampler_free(rlvr_sampler *s) {
    if (!s) return;
    float *bufs[] = {s->key_cache, s->value_cache, s->logits, s->x,     s->q,          s->k,   s->v,
                     s->att,       s->proj,        s->gate,   s->up,    s->hidden,     s->probs, s->row_logits,
                     s->rope};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) rlvr_mem_free(bufs[i]);
    free(s->xn);
    free(s->scores);
    free(s->act);
    free(s->slots);
    free(s->seen);
    free(s->row_slot);
    free(s->row_pos);
    free(s->row_tok);
    free(s->row_kv);
    free(s->row_prefix);
    free(s->row_shared);
    free(s->bounds);
    free(s->stop_ids);
    packed_weights_free(&s->pw);
    free(s);
}

const rlvr_sampler_config *rlvr_sampler_config_of(const rlvr_sampler *s) { return &s->cfg; }

double rlvr_sampler_pack_seconds(const rlvr_sampler *s) { return s->pack_seconds; }

int rlvr_sampler_set_stop_tokens(rlvr_sampler *s, const int32_t *ids, int n) {
    if (n < 0) return RLVR_FAIL(RLVR_EINVAL, "negative stop-token count %d", n);
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= s->mc.vocab)
            return RLVR_FAIL(RLVR_EINVAL, "stop token %d is outside the model vocabulary [0, %d)", (int)ids[i],
                             s->mc.vocab);
    int32_t *copy;
    RLVR_ALLOC(copy, n);
    if (n) memcpy(copy, ids, (size_t)n * sizeof *ids);
    free(s->stop_ids);
    s->stop_ids = copy;
    s->n_stop = n;
    return 0;
}

/* ---- slots --------------------------------------------------------------- */

static int check_slot(const rlvr_sampler *s, int slot) {
    if (slot < 0 || slot >= s->cfg.kv_slots)
        return RLVR_FAIL(RLVR_EINVAL, "sampler slot %d outside [0, %d)", slot, s->cfg.kv_slots);
    return 0;
}

/* Float offset of (layer, slot) in a cache: its (n_kv_heads, T, hd) block. */
static size_t cache_offset(const rlvr_sampler *s, int layer, int slot) {
    return (((size_t)layer * s->cfg.kv_slots + (size_t)slot) * (size_t)s->ctx) * (size_t)s->kv_dim;
}

/* Copies positions [from, to) of src's own rows into dst's rows, all layers. */
static void copy_rows(rlvr_sampler *s, int dst, int src, int from, int to) {
    size_t hd = (size_t)s->head_dim, head = (size_t)s->ctx * hd, n = (size_t)(to - from) * hd * sizeof(float);
    if (to <= from) return;
    for (int l = 0; l < s->mc.n_layers; l++)
        for (size_t g = 0; g < (size_t)s->mc.n_kv_heads; g++) {
            size_t d = cache_offset(s, l, dst) + g * head + (size_t)from * hd;
            size_t f = cache_offset(s, l, src) + g * head + (size_t)from * hd;
            memcpy(s->key_cache + d, s->key_cache + f, n);
            memcpy(s->value_cache + d, s->value_cache + f, n);
        }
}

/* The copy in copy-on-write: slot takes its own copy of the parent's prefix. */
static void materialize(rlvr_sampler *s, int slot) {
    slot_state *st = &s->slots[slot];
    copy_rows(s, slot, st->parent, 0, st->shared_len);
    s->slots[st->parent].refs--;
    st->parent = -1;
    st->shared_len = 0;
}

/* Before a slot's rows are overwritten: its readers get their own copies and
 * it stops reading its parent. */
static void release(rlvr_sampler *s, int slot) {
    for (int i = 0; s->slots[slot].refs > 0 && i < s->cfg.kv_slots; i++)
        if (s->slots[i].parent == slot) materialize(s, i);
    slot_state *st = &s->slots[slot];
    if (st->parent >= 0) s->slots[st->parent].refs--;
    st->parent = -1;
    st->shared_len = 0;
}

int rlvr_sampler_reset(rlvr_sampler *s, int slot, uint32_t step, uint32_t sequence) {
    RLVR_TRY(check_slot(s, slot));
    release(s, slot);
    s->slots[slot] = (slot_state){
        .parent = -1, .step = step, .sequence = sequence, .turn_limit = s->cfg.max_new_tokens};
    return 0;
}

int32_t rlvr_sampler_len(const rlvr_sampler *s, int slot) {
    return slot >= 0 && slot < s->cfg.kv_slots ? s->slots[slot].len : 0;
}

int32_t rlvr_sampler_context(const rlvr_sampler *s) { return s->ctx; }

int rlvr_sampler_set_turn_limit(rlvr_sampler *s, int slot, int32_t max_new) {
    RLVR_TRY(check_slot(s, slot));
    if (max_new < 1) return RLVR_FAIL(RLVR_EINVAL, "turn limit must be >= 1, got %d", (int)max_new);
    s->slots[slot].turn_limit = max_new;
    return 0;
}

/* dst reads src's positions (or src's parent's, for the part src itself
 * shares) in place; only rows src holds privately are copied. Positions
 * below a slot's len are never rewritten while the slot lives, so readers
 * stay valid until release() hands them copies. */
int rlvr_sampler_fork(rlvr_sampler *s, int dst, int src, uint32_t sequence) {
    RLVR_TRY(check_slot(s, dst));
    RLVR_TRY(check_slot(s, src));
    if (dst == src) return RLVR_FAIL(RLVR_EINVAL, "sampler fork: source and destination are both slot %d", src);
    if (s->slots[src].len == 0) return RLVR_FAIL(RLVR_ESTATE, "sampler fork: source slot %d holds no tokens", src);
    release(s, dst); /* may materialize src if src was reading dst */
    slot_state *from = &s->slots[src], *to = &s->slots[dst];
    *to = *from;
    to->sequence = sequence;
    to->refs = 0;
    if (from->parent >= 0) {
        copy_rows(s, dst, src, from->shared_len, from->len);
    } else {
        to->parent = src;
        to->shared_len = from->len;
    }
    s->slots[to->parent].refs++;
    size_t V = (size_t)s->mc.vocab;
    memcpy(s->logits + (size_t)dst * V, s->logits + (size_t)src * V, V * sizeof(float));
    return 0;
}

/* ---- forward over rows ------------------------------------------------- */

/* How a forward call splits over threads: the rows into row_groups
 * contiguous groups of about equal work (s->bounds), each shared by `cols`
 * threads that split every step's rows, channels and attention tasks and
 * meet after it (cols = 1: a group never waits inside a layer). */
typedef struct {
    int threads, row_groups, cols;
} schedule;

/* What one thread computes in a forward call. */
typedef struct {
    int r0, r1;     /* its group's rows */
    int col, cols;  /* its index among the threads sharing those rows */
    bool sync_kv;   /* other groups read these rows' keys: wait after storing K and V */
    bool by_heads;  /* q/k/v, RoPE, K/V store and attention split by KV heads: no barrier among them */
    float *xn;      /* (R, C) its own normalised inputs */
    float *scores;  /* (2T) its attention scratch */
    unsigned char *act; /* its scratch for rounded inputs (quantized formats) */
} part;

/* Attention multiply-adds of one row per layer (QKᵀ and PV). */
static double attention_macs(const rlvr_sampler *s, int r) { return 2.0 * (s->row_pos[r] + 1) * s->mc.d_model; }

/* Multiply-adds of rows [0, n) through all layers, and the head for rows [head_from, n). */
static double forward_macs(const rlvr_sampler *s, int n, int head_from) {
    const rlvr_model_config *m = &s->mc;
    double attention = 0.0;
    for (int r = 0; r < n; r++) attention += attention_macs(s, r);
    return m->n_layers * ((double)n * layer_weights(m, s->kv_dim) + attention) +
           (double)(n - head_from) * m->vocab * m->d_model;
}

/* Splits rows [0, n) into `groups` contiguous groups of about equal work
 * (later prefill rows attend to more positions). */
static void balance_rows(rlvr_sampler *s, int n, int groups) {
    double per_row = (double)layer_weights(&s->mc, s->kv_dim), total = 0.0, done = 0.0;
    for (int r = 0; r < n; r++) total += per_row + attention_macs(s, r);
    s->bounds[0] = 0;
    int g = 1;
    for (int r = 0; r < n && g < groups; r++) {
        done += per_row + attention_macs(s, r);
        while (g < groups && done >= total * g / groups) s->bounds[g++] = r + 1;
    }
    while (g <= groups) s->bounds[g++] = n;
}

static schedule plan(rlvr_sampler *s, int threads, int n, int head_from) {
    schedule sc = {1, 1, 1};
    double macs = forward_macs(s, n, head_from);
    if (threads >= 2 && macs >= s->parallel_macs) {
        int groups = n / s->rows_each < threads ? n / s->rows_each : threads;
        if (groups >= 2)
            sc = (schedule){groups * (threads / groups), groups, threads / groups};
        else if (macs / (8.0 * s->mc.n_layers) >= s->step_macs)
            sc = (schedule){threads, 1, threads}; /* four to six barriers per layer */
    }
    if (sc.row_groups > 1) balance_rows(s, n, sc.row_groups);
    return sc;
}

/* Whether the threads sharing rows can each take whole KV heads (their
 * query heads, keys and values) through q/k/v, RoPE, the K/V store and
 * attention without meeting: every thread gets as many KV heads, and a
 * head's channels fill whole panels. Not when other row groups read the
 * keys stored (prefill split by rows). */
static bool split_by_heads(const rlvr_sampler *s, int cols, bool sync_kv) {
    if (sync_kv) return false;
    return cols == 1 || (s->mc.n_kv_heads % cols == 0 && s->head_dim % MATMUL_GROUP == 0);
}

static part part_of(const rlvr_sampler *s, const schedule *sc, int tid, int n, bool prefill) {
    int g = tid / sc->cols;
    bool sync_kv = prefill && sc->row_groups > 1;
    return (part){.r0 = sc->row_groups > 1 ? s->bounds[g] : 0,
                  .r1 = sc->row_groups > 1 ? s->bounds[g + 1] : n,
                  .col = tid % sc->cols,
                  .cols = sc->cols,
                  .sync_kv = sync_kv,
                  .by_heads = split_by_heads(s, sc->cols, sync_kv),
                  .xn = s->xn + (size_t)tid * s->max_rows * s->mc.d_model,
                  .scores = s->scores + (size_t)tid * 2 * s->ctx,
                  .act = s->act ? s->act + (size_t)tid * s->act_bytes : NULL};
}

/* [lo, hi): this thread's share of n items split among the threads of its rows. */
static void share(const part *p, int n, int *lo, int *hi) {
    *lo = (int)((int64_t)n * p->col / p->cols);
    *hi = (int)((int64_t)n * (p->col + 1) / p->cols);
}

/* The threads sharing rows wait for each other's step. */
static void sync_cols(const part *p) {
    if (p->cols > 1) {
#pragma omp barrier
    }
}

/* Layer l's matrix `kind` (PW_*; the head with l = 0) in the packed copy. */
static const void *weight(const rlvr_sampler *s, int kind, int l) {
    return s->pw.mat[kind] + (size_t)l * s->pw.layer_bytes;
}

/* matmul_invariant_part, or its form for the sampler's quantized format
 * (which rounds the part's rows of inp into the thread's scratch). */
static void matmul_part(const rlvr_sampler *s, const part *p, const matmul_target *t, int n, const float *inp, int C,
                        int r0, int r1, int g0, int g1) {
    if (s->cfg.weights == RLVR_SAMPLER_WEIGHTS_F32)
        matmul_invariant_part(t, n, inp, C, r0, r1, g0, g1);
    else
        quant_matmul_part(s->cfg.weights, t, n, inp, C, r0, r1, g0, g1, p->act);
}

/* The thread's xn = RMSNorm(x) for all the part's rows: each thread sharing
 * rows normalises them itself (a few rows × C, cheaper than meeting). */
static void norm_rows(rlvr_sampler *s, const part *p, const float *weight) {
    size_t C = (size_t)s->mc.d_model;
    for (int r = p->r0; r < p->r1; r++)
        rmsnorm_forward_row(p->xn + r * C, s->x + r * C, weight, (int)C, s->mc.norm_eps);
}

/* out = inp · weightᵀ (OC channels) for this thread's share of the channels,
 * then x += out on those channels. */
static void project_add(rlvr_sampler *s, const part *p, const float *inp, const void *packed, int in) {
    int C = s->mc.d_model, g0, g1;
    matmul_target t = {s->proj, packed, C};
    share(p, matmul_groups(&t, 1), &g0, &g1);
    matmul_part(s, p, &t, 1, inp, in, p->r0, p->r1, g0, g1);
    int o0 = g0 * MATMUL_GROUP, o1 = g1 * MATMUL_GROUP < C ? g1 * MATMUL_GROUP : C;
    for (int r = p->r0; r < p->r1; r++)
        for (int o = o0; o < o1; o++) s->x[(size_t)r * C + o] += s->proj[(size_t)r * C + o];
}

/* Row r's q, k and v of KV heads [g0, g1) (and their query heads) += the
 * layer's biases, before RoPE, as the training forward adds them. */
static void bias_heads(rlvr_sampler *s, int l, int r, int g0, int g1) {
    const rlvr_param_views *w = rlvr_model_param_views(s->model);
    size_t C = (size_t)s->mc.d_model, KV = (size_t)s->kv_dim, hd = (size_t)s->head_dim;
    size_t group = (size_t)(s->mc.n_heads / s->mc.n_kv_heads), q0 = (size_t)g0 * group * hd, k0 = (size_t)g0 * hd;
    int nq = (int)((size_t)(g1 - g0) * group * hd), nk = (int)((size_t)(g1 - g0) * hd);
    bias_add_row(s->q + r * C + q0, w->bq + (size_t)l * C + q0, nq);
    bias_add_row(s->k + r * KV + k0, w->bk + (size_t)l * KV + k0, nk);
    bias_add_row(s->v + r * KV + k0, w->bv + (size_t)l * KV + k0, nk);
}

/* RoPE on the row's q and k of KV heads [g0, g1) (and their query heads),
 * then those heads' K and V into its slot's own rows (a row's position is
 * always past its slot's shared prefix). */
static void rope_store(rlvr_sampler *s, int l, int r, int g0, int g1) {
    const rlvr_model_config *m = &s->mc;
    size_t C = (size_t)m->d_model, KV = (size_t)s->kv_dim, hd = (size_t)s->head_dim;
    int group = m->n_heads / m->n_kv_heads;
    float *k = s->k + r * KV + (size_t)g0 * hd;
    if (m->qkv_bias) bias_heads(s, l, r, g0, g1);
    rope_forward_heads(s->q + r * C + (size_t)g0 * group * hd, s->rope, s->row_pos[r], (g1 - g0) * group, (int)hd);
    rope_forward_heads(k, s->rope, s->row_pos[r], g1 - g0, (int)hd);
    size_t at = (size_t)l * s->cfg.kv_slots * s->ctx * KV + (size_t)s->row_kv[r] + (size_t)s->row_pos[r] * hd;
    for (size_t g = (size_t)g0; g < (size_t)g1; g++) {
        size_t to = at + g * (size_t)s->ctx * hd;
        memcpy(s->key_cache + to, s->k + r * KV + g * hd, hd * sizeof(float));
        memcpy(s->value_cache + to, s->v + r * KV + g * hd, hd * sizeof(float));
    }
}

/* Channels [o0, o1) of a target as its panels [o0, o1) / MATMUL_GROUP (o0
 * on a panel boundary), for rows [r0, r1). */
static void matmul_channels(const rlvr_sampler *s, const part *p, const matmul_target *t, int C, int o0, int o1) {
    matmul_part(s, p, t, 1, p->xn, C, p->r0, p->r1, o0 / MATMUL_GROUP, (o1 + MATMUL_GROUP - 1) / MATMUL_GROUP);
}

/* q, k, v of this thread's KV heads, RoPE, the K/V store and attention of
 * those heads, without waiting for the other threads (part.by_heads). */
static void attend_own_heads(rlvr_sampler *s, int l, const part *p, const attention_rows *rows) {
    const rlvr_model_config *m = &s->mc;
    int C = m->d_model, KV = s->kv_dim, hd = s->head_dim, group = m->n_heads / m->n_kv_heads, g0, g1;
    share(p, m->n_kv_heads, &g0, &g1);
    if (g0 == g1) return;
    matmul_target q = {s->q, weight(s, PW_WQ, l), C}, k = {s->k, weight(s, PW_WK, l), KV},
                  v = {s->v, weight(s, PW_WV, l), KV};
    matmul_channels(s, p, &q, C, g0 * group * hd, g1 * group * hd);
    matmul_channels(s, p, &k, C, g0 * hd, g1 * hd);
    matmul_channels(s, p, &v, C, g0 * hd, g1 * hd);
    for (int r = p->r0; r < p->r1; r++) rope_store(s, l, r, g0, g1);
    int tasks = (p->r1 - p->r0) * group; /* per KV head */
    attention_forward_cached(s->att, p->scores, s->q, rows, p->r0, p->r1, g0 * tasks, g1 * tasks);
}

/* The same work split by steps: rows' channels, then rows, then attention
 * tasks, the threads meeting after each. */
static void attend_by_steps(rlvr_sampler *s, int l, const part *p, const attention_rows *rows) {
    const rlvr_model_config *m = &s->mc;
    int C = m->d_model, KV = s->kv_dim, lo, hi;
    matmul_target qkv[3] = {{s->q, weight(s, PW_WQ, l), C}, {s->k, weight(s, PW_WK, l), KV},
                            {s->v, weight(s, PW_WV, l), KV}};
    share(p, matmul_groups(qkv, 3), &lo, &hi);
    matmul_part(s, p, qkv, 3, p->xn, C, p->r0, p->r1, lo, hi);
    sync_cols(p);
    share(p, p->r1 - p->r0, &lo, &hi);
    for (int r = p->r0 + lo; r < p->r0 + hi; r++) rope_store(s, l, r, 0, m->n_kv_heads);
    if (p->cols > 1 || p->sync_kv) {
#pragma omp barrier
    }
    share(p, (p->r1 - p->r0) * m->n_heads, &lo, &hi);
    attention_forward_cached(s->att, p->scores, s->q, rows, p->r0, p->r1, lo, hi);
}

/* x += Attention(RMSNorm(x)) for layer l. */
static void attention_block(rlvr_sampler *s, const rlvr_param_views *w, int l, const part *p) {
    const rlvr_model_config *m = &s->mc;
    int C = m->d_model;
    size_t layer = (size_t)l * s->cfg.kv_slots * s->ctx * s->kv_dim;
    norm_rows(s, p, w->attn_norm + (size_t)l * C);
    attention_rows rows = {s->key_cache + layer, s->value_cache + layer, s->row_prefix, s->row_shared, s->row_kv,
                           s->row_pos, m->n_heads, m->n_kv_heads, s->head_dim, s->ctx, NULL};
    if (p->by_heads)
        attend_own_heads(s, l, p, &rows);
    else
        attend_by_steps(s, l, p, &rows);
    sync_cols(p);
    project_add(s, p, s->att, weight(s, PW_WO, l), C);
    sync_cols(p);
}

/* x += SwiGLU-MLP(RMSNorm(x)) for layer l; gate and up are split alike so
 * each thread applies SwiGLU to the channels it computed. */
static void mlp_block(rlvr_sampler *s, const rlvr_param_views *w, int l, const part *p) {
    const rlvr_model_config *m = &s->mc;
    int C = m->d_model, F = m->d_ff, g0, g1;
    norm_rows(s, p, w->mlp_norm + (size_t)l * C);
    matmul_target gate = {s->gate, weight(s, PW_GATE, l), F}, up = {s->up, weight(s, PW_UP, l), F};
    share(p, matmul_groups(&gate, 1), &g0, &g1);
    matmul_part(s, p, &gate, 1, p->xn, C, p->r0, p->r1, g0, g1);
    matmul_part(s, p, &up, 1, p->xn, C, p->r0, p->r1, g0, g1);
    int o0 = g0 * MATMUL_GROUP, o1 = g1 * MATMUL_GROUP < F ? g1 * MATMUL_GROUP : F;
    for (int r = p->r0; r < p->r1 && o0 < o1; r++) {
        size_t at = (size_t)r * F + (size_t)o0;
        swiglu_invariant(s->hidden + at, s->gate + at, s->up + at, (size_t)(o1 - o0));
    }
    sync_cols(p);
    project_add(s, p, s->hidden, weight(s, PW_DOWN, l), F);
    sync_cols(p);
}

/* Next-token logits of the part's rows from head_from on, into row_logits. */
static void head(rlvr_sampler *s, const rlvr_param_views *w, const part *p, int head_from) {
    part h = *p;
    if (h.r0 < head_from) h.r0 = head_from;
    if (h.r0 > h.r1) h.r0 = h.r1; /* no rows */
    norm_rows(s, &h, w->final_norm);
    matmul_target t = {s->row_logits, weight(s, PW_HEAD, 0), s->mc.vocab};
    int g0, g1;
    share(&h, matmul_groups(&t, 1), &g0, &g1);
    matmul_part(s, &h, &t, 1, h.xn, s->mc.d_model, h.r0, h.r1, g0, g1);
}

static void forward_part(rlvr_sampler *s, const part *p, int head_from) {
    const rlvr_param_views *w = rlvr_model_param_views(s->model);
    for (int l = 0; l < s->mc.n_layers; l++) {
        attention_block(s, w, l, p);
        mlp_block(s, w, l, p);
    }
    head(s, w, p, head_from);
}

/* Embeddings, where each row's keys live, and the RoPE table up to the rows' positions. */
static void prepare_rows(rlvr_sampler *s, int n) {
    const rlvr_param_views *w = rlvr_model_param_views(s->model);
    size_t C = (size_t)s->mc.d_model, slot_floats = (size_t)s->ctx * s->kv_dim;
    int top = 0;
    for (int r = 0; r < n; r++) {
        const slot_state *st = &s->slots[s->row_slot[r]];
        memcpy(s->x + r * C, w->embed + (size_t)s->row_tok[r] * C, C * sizeof(float));
        s->row_kv[r] = (int64_t)((size_t)s->row_slot[r] * slot_floats);
        s->row_prefix[r] = st->parent >= 0 ? (int64_t)((size_t)st->parent * slot_floats) : s->row_kv[r];
        s->row_shared[r] = st->parent >= 0 ? st->shared_len : 0;
        if (s->row_pos[r] + 1 > top) top = s->row_pos[r] + 1;
    }
    if (top > s->rope_len) {
        rope_table(s->rope, s->rope_len, top, s->head_dim, s->mc.rope_theta, &s->mc.rope_scaling);
        s->rope_len = top;
    }
}

/* OpenMP's thread count, growing the per-thread scratch to it when it rose
 * since the last call (on failure, the threads there is scratch for). */
static int usable_threads(rlvr_sampler *s) {
    int want = omp_get_max_threads();
    if (want <= s->threads) return want;
    float *scores = realloc(s->scores, (size_t)want * 2 * s->ctx * sizeof(float));
    if (scores) s->scores = scores;
    float *xn = realloc(s->xn, (size_t)want * s->max_rows * s->mc.d_model * sizeof(float));
    if (xn) s->xn = xn;
    int32_t *bounds = realloc(s->bounds, ((size_t)want + 1) * sizeof(int32_t));
    if (bounds) s->bounds = bounds;
    bool act_ok = true; /* f32 keeps no rounded inputs */
    if (s->act_bytes) {
        unsigned char *act = realloc(s->act, (size_t)want * s->act_bytes);
        if (act) s->act = act;
        act_ok = act != NULL;
    }
    if (scores && xn && bounds && act_ok) s->threads = want;
    return s->threads;
}

/* Runs rows [0, n) (row_slot/row_pos/row_tok filled) through the decoder,
 * storing their K/V in the caches, and sets the logits of the slots of
 * rows [head_from, n). prefill: the rows are one sequence's consecutive
 * positions (each attends to the ones before it). */
static void forward_rows(rlvr_sampler *s, int n, int head_from, bool prefill) {
    refresh_packed(s);
    prepare_rows(s, n);
    schedule sc = plan(s, usable_threads(s), n, head_from);
    if (sc.threads == 1) {
        part p = part_of(s, &sc, 0, n, prefill);
        forward_part(s, &p, head_from);
    } else {
#pragma omp parallel num_threads(sc.threads)
        {
            schedule team = sc;
            if (omp_get_num_threads() != sc.threads) /* fewer threads than asked for */
                team = (schedule){omp_get_num_threads(), 1, omp_get_num_threads()};
            part p = part_of(s, &team, omp_get_thread_num(), n, prefill);
            forward_part(s, &p, head_from);
        }
    }
    size_t V = (size_t)s->mc.vocab;
    for (int r = head_from; r < n; r++)
        memcpy(s->logits + (size_t)s->row_slot[r] * V, s->row_logits + r * V, V * sizeof(float));
}

void sampler_set_schedule(rlvr_sampler *s, double parallel_macs, double step_macs, int rows_each) {
    s->parallel_macs = parallel_macs;
    s->step_macs = step_macs;
    s->rows_each = rows_each > 0 ? rows_each : 1;
}

/* ---- prefill --------------------------------------------------------------- */

int rlvr_sampler_prefill(rlvr_sampler *s, int slot, const int32_t *tokens, int n) {
    RLVR_TRY(check_slot(s, slot));
    slot_state *st = &s->slots[slot];
    if (n < 1) return RLVR_FAIL(RLVR_EINVAL, "sampler prefill of %d tokens into slot %d", n, slot);
    if (n > s->ctx - st->len)
        return RLVR_FAIL(RLVR_ELIMIT, "sampler slot %d: %d tokens + %d new exceed the context of %d", slot, st->len,
                         n, s->ctx);
    for (int i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= s->mc.vocab)
            return RLVR_FAIL(RLVR_EINVAL, "prefill token %d at index %d is outside the vocabulary [0, %d)",
                             (int)tokens[i], i, s->mc.vocab);
    /* chunks change nothing but speed: every row is computed on its own */
    for (int done = 0; done < n;) {
        int rows = n - done < PREFILL_ROWS ? n - done : PREFILL_ROWS;
        for (int r = 0; r < rows; r++) {
            s->row_slot[r] = slot;
            s->row_pos[r] = st->len + r;
            s->row_tok[r] = tokens[done + r];
        }
        forward_rows(s, rows, done + rows == n ? rows - 1 : rows, true);
        st->len += rows;
        done += rows;
    }
    st->turn_tokens = 0;
    st->turn_limit = s->cfg.max_new_tokens;
    st->stopped = false;
    return 0;
}

/* ---- decode ----------------------------------------------------------------- */

static bool is_stop_token(const rlvr_sampler *s, int32_t token) {
    for (int i = 0; i < s->n_stop; i++)
        if (s->stop_ids[i] == token) return true;
    return false;
}

/* Inverse CDF in vocabulary order over the tokens whose probability is at
 * least `floor` (and above 0); the last such token absorbs rounding. */
static int32_t draw(const float *probs, int V, double u, float floor) {
    double total = 0.0;
    for (int v = 0; v < V; v++)
        if (probs[v] >= floor) total += probs[v];
    double target = u * total, cdf = 0.0;
    int32_t last = 0;
    for (int v = 0; v < V; v++) {
        if (probs[v] <= 0.0f || probs[v] < floor) continue;
        cdf += probs[v];
        last = v;
        if (cdf > target) return v;
    }
    return last;
}

static double mass_at_least(const float *probs, int V, float t) {
    double m = 0.0;
    for (int v = 0; v < V; v++)
        if (probs[v] >= t) m += probs[v];
    return m;
}

/* Top-p: the largest probability t such that the tokens at or above t hold
 * at least top_p of the mass, by bisection on t rather than a sort of the
 * vocabulary (no buffer, and ties at t are all kept, so the nucleus does
 * not depend on an order among equal probabilities). */
static float nucleus_floor(const float *probs, int V, float top_p) {
    double total = 0.0;
    float hi = 0.0f;
    for (int v = 0; v < V; v++) {
        total += probs[v];
        if (probs[v] > hi) hi = probs[v];
    }
    double target = (double)top_p * total;
    if (mass_at_least(probs, V, hi) >= target) return hi;
    float lo = 0.0f; /* invariant: mass(>= lo) >= target > mass(>= hi) */
    for (int it = 0; it < 64; it++) {
        float mid = lo + (hi - lo) / 2;
        if (mid <= lo || mid >= hi) break;
        if (mass_at_least(probs, V, mid) >= target)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static int32_t argmax(const float *logits, int V) {
    int32_t best = 0;
    for (int v = 1; v < V; v++)
        if (logits[v] > logits[best]) best = v;
    return best;
}

static int check_decode_slots(rlvr_sampler *s, const int32_t *slots, int n) {
    if (n < 0 || n > s->cfg.kv_slots)
        return RLVR_FAIL(RLVR_EINVAL, "sampler decode of %d slots (kv_slots = %d)", n, s->cfg.kv_slots);
    memset(s->seen, 0, (size_t)s->cfg.kv_slots);
    for (int i = 0; i < n; i++) {
        RLVR_TRY(check_slot(s, slots[i]));
        const slot_state *st = &s->slots[slots[i]];
        if (s->seen[slots[i]]) return RLVR_FAIL(RLVR_EINVAL, "sampler decode lists slot %d twice", slots[i]);
        s->seen[slots[i]] = 1;
        if (st->len == 0) return RLVR_FAIL(RLVR_ESTATE, "sampler slot %d is empty: prefill it first", slots[i]);
        if (st->stopped)
            return RLVR_FAIL(RLVR_ESTATE, "sampler slot %d stopped; prefill (e.g. an observation) to continue",
                             slots[i]);
    }
    return 0;
}

/* Draws slot's next token from its pending logits (no state change). */
static void sample_one(rlvr_sampler *s, int slot, float *probs, rlvr_sample *out) {
    const slot_state *st = &s->slots[slot];
    const float *logits = s->logits + (size_t)slot * s->mc.vocab;
    float tau = s->cfg.temperature;
    *out = (rlvr_sample){.token = -1, .position = st->len};
    if (st->len >= s->ctx) {
        out->stop = RLVR_SAMPLE_CONTEXT;
        return;
    }
    double zmax, log_sum;
    if (tau == 0.0f) { /* greedy: the model's own distribution (τ = 1) is what gets reported */
        logits_softmax_stats(&zmax, &log_sum, &out->entropy, probs, logits, s->mc.vocab, 1.0f);
        out->token = argmax(logits, s->mc.vocab);
        out->logprob = logits_logprob_at(logits, 1.0f, zmax, log_sum, out->token);
        return;
    }
    logits_softmax_stats(&zmax, &log_sum, &out->entropy, probs, logits, s->mc.vocab, tau);
    double u = rlvr_rng_uniform(s->cfg.seed, RLVR_RNG_SAMPLE, st->step, st->sequence, (uint32_t)st->len);
    float floor = s->cfg.top_p < 1.0f ? nucleus_floor(probs, s->mc.vocab, s->cfg.top_p) : 0.0f;
    out->token = draw(probs, s->mc.vocab, u, floor);
    out->logprob = logits_logprob_at(logits, tau, zmax, log_sum, out->token);
}

/* After the token is appended: which stop, if any, applies. */
static rlvr_sample_stop stop_after(const rlvr_sampler *s, const slot_state *st, int32_t token) {
    if (is_stop_token(s, token)) return RLVR_SAMPLE_STOP_TOKEN;
    if (st->turn_limit > 0 && st->turn_tokens >= st->turn_limit) return RLVR_SAMPLE_MAX_TOKENS;
    if (st->len >= s->ctx) return RLVR_SAMPLE_CONTEXT;
    return RLVR_SAMPLE_CONTINUE;
}

int rlvr_sampler_decode(rlvr_sampler *s, const int32_t *slots, int n, rlvr_sample *out) {
    RLVR_TRY(check_decode_slots(s, slots, n));
    size_t V = (size_t)s->mc.vocab;
    if ((size_t)n * V >= (1u << 15) && s->threads > 1) {
#pragma omp parallel for schedule(static)
        for (int i = 0; i < n; i++) sample_one(s, slots[i], s->probs + i * V, &out[i]);
    } else {
        for (int i = 0; i < n; i++) sample_one(s, slots[i], s->probs + i * V, &out[i]);
    }

    /* append every sampled token (stop tokens too: the KV holds the whole context) */
    int rows = 0;
    for (int i = 0; i < n; i++) {
        if (out[i].token < 0) continue;
        s->row_slot[rows] = slots[i];
        s->row_pos[rows] = out[i].position;
        s->row_tok[rows] = out[i].token;
        rows++;
    }
    if (rows > 0) forward_rows(s, rows, 0, false);
    for (int i = 0; i < n; i++) {
        slot_state *st = &s->slots[slots[i]];
        if (out[i].token >= 0) {
            st->len++;
            st->turn_tokens++;
            out[i].stop = stop_after(s, st, out[i].token);
        }
        if (out[i].stop != RLVR_SAMPLE_CONTINUE) st->stopped = true;
    }
    return 0;
}
