/* policy/sampler.c — KV-cache sampler (see sampler.h for the contract).
 *
 * Layout of the run state (C = d_model, KV = n_kv_heads·hd, F = d_ff,
 * V = vocab, S = kv_slots, T = context, R = rows per forward call):
 *   key_cache, value_cache  (L, S, T, KV)
 *   logits                  (S, V)  next-token logits of each slot's last token
 * A slot forked from another reads positions below its shared_len from its
 * parent's rows (copy-on-write, one level deep: a fork of a fork points at
 * the root and copies the middle slot's private rows).
 * One forward call processes R "rows", each a (slot, position, token); a
 * decode step has one row per slot, a prefill chunk the rows of one slot. */
#include "policy/sampler.h"

#include "core/error.h"
#include "core/rng.h"
#include "policy/kernels.h"
#include "policy/sampler_kernels.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define PREFILL_ROWS 64 /* rows per prefill forward call (more rows = more weight reuse) */

const rlvr_config_key rlvr_sampler_config_keys[] = {
    {"sampler", "temperature", RLVR_CFG_FLOAT, "1.0",
     "sampling temperature τ: the policy is softmax(logits/τ) in sampling and in training", NULL,
     RLVR_CFG_RANGE(0.01, 100.0)},
    {"sampler", "max_new_tokens", RLVR_CFG_INT, "512",
     "most tokens the policy samples in one turn before the turn is cut (0 = until the context is full)", NULL,
     RLVR_CFG_RANGE(0, 10000000)},
    {"sampler", "kv_slots", RLVR_CFG_INT, "64",
     "sequences one rollout rank keeps in its KV cache at once (environments in flight × G)", NULL,
     RLVR_CFG_RANGE(1, 65536)},
    {"sampler", "context_tokens", RLVR_CFG_INT, "0", "positions per KV slot; 0 = [model] max_seq", NULL,
     RLVR_CFG_RANGE(0, 10000000)},
    {NULL, NULL, 0, NULL, NULL, NULL, RLVR_CFG_ANY},
};

int rlvr_sampler_config_from(rlvr_sampler_config *out, const rlvr_config *cfg) {
    double temperature;
    int64_t max_new, slots, context;
    RLVR_TRY(rlvr_config_get_double(cfg, "sampler", "temperature", &temperature));
    RLVR_TRY(rlvr_config_get_int(cfg, "sampler", "max_new_tokens", &max_new));
    RLVR_TRY(rlvr_config_get_int(cfg, "sampler", "kv_slots", &slots));
    RLVR_TRY(rlvr_config_get_int(cfg, "sampler", "context_tokens", &context));
    out->version = RLVR_SAMPLER_CONFIG_VERSION;
    out->temperature = (float)temperature;
    out->max_new_tokens = (int32_t)max_new;
    out->kv_slots = (int32_t)slots;
    out->context = (int32_t)context;
    return 0;
}

int rlvr_sampler_config_validate(const rlvr_config *cfg, const rlvr_model_config *model) {
    int64_t context;
    RLVR_TRY(rlvr_config_get_int(cfg, "sampler", "context_tokens", &context));
    if (context > model->max_seq)
        return rlvr_config_error(cfg, "sampler", "context_tokens", "%lld exceeds [model] max_seq = %d",
                                 (long long)context, model->max_seq);
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
    rlvr_model_config mc;
    rlvr_sampler_config cfg;
    int ctx;       /* T: positions per slot */
    int kv_dim;    /* KV = n_kv_heads · head_dim */
    int head_dim;  /* hd = C / H */
    int max_rows;  /* R: rows one forward call can hold */

    float *key_cache;   /* (L, S, T, KV) */
    float *value_cache; /* (L, S, T, KV) */
    float *logits;      /* (S, V) pending next-token logits per slot */
    slot_state *slots;  /* (S) */
    int32_t *stop_ids;  /* (n_stop) */
    int n_stop;

    /* activations of one forward call */
    int32_t *row_slot, *row_pos, *row_tok; /* (R) */
    int64_t *row_kv;    /* (R) float offset of the row's slot in one layer's cache */
    int64_t *row_prefix;/* (R) same for the slot's parent (the shared prefix) */
    int32_t *row_shared;/* (R) positions the row reads from its parent */
    float *x;           /* (R, C) residual stream */
    float *xn;          /* (R, C) normalised input of a sublayer */
    float *q;           /* (R, C) */
    float *k, *v;       /* (R, KV) */
    float *att;         /* (R, C) attention output before wo */
    float *proj;        /* (R, C) output of wo / w_down before the residual add */
    float *gate, *up;   /* (R, F) */
    float *hidden;      /* (R, F) swiglu(gate, up) */
    float *scores;      /* (R, H, T) */
    float *row_logits;  /* (R, V) */
    float *probs;       /* (R, V) sampling distribution per decoded slot */
    uint8_t *seen;      /* (S) duplicate-slot check of one decode call */
};

/* ---- construction ---------------------------------------------------- */

static int check_config(const rlvr_sampler_config *cfg, const rlvr_model_config *mc) {
    if (cfg->version != RLVR_SAMPLER_CONFIG_VERSION)
        return RLVR_FAIL(RLVR_EINVAL, "sampler config version %d, this build knows %d (use RLVR_SAMPLER_CONFIG_INIT)",
                         cfg->version, RLVR_SAMPLER_CONFIG_VERSION);
    if (!(cfg->temperature > 0.0f) || !isfinite(cfg->temperature))
        return RLVR_FAIL(RLVR_EINVAL, "sampler temperature must be > 0, got %g", (double)cfg->temperature);
    if (cfg->kv_slots < 1) return RLVR_FAIL(RLVR_EINVAL, "sampler kv_slots must be >= 1, got %d", cfg->kv_slots);
    if (cfg->context < 0 || cfg->context > mc->max_seq)
        return RLVR_FAIL(RLVR_EINVAL, "sampler context %d must be in [0, model max_seq = %d]", cfg->context,
                         mc->max_seq);
    if (cfg->max_new_tokens < 0)
        return RLVR_FAIL(RLVR_EINVAL, "sampler max_new_tokens must be >= 0, got %d", cfg->max_new_tokens);
    return 0;
}

static int alloc_floats(float **p, size_t n, const char *what) {
    *p = malloc((n ? n : 1) * sizeof **p);
    if (!*p) return RLVR_FAIL(RLVR_ENOMEM, "sampler: out of memory for %s (%zu floats)", what, n);
    return 0;
}

static int alloc_state(rlvr_sampler *s) {
    const rlvr_model_config *m = &s->mc;
    size_t S = (size_t)s->cfg.kv_slots, T = (size_t)s->ctx, R = (size_t)s->max_rows;
    size_t C = (size_t)m->d_model, F = (size_t)m->d_ff, V = (size_t)m->vocab, KV = (size_t)s->kv_dim;
    size_t cache = (size_t)m->n_layers * S * T * KV;
    RLVR_TRY(alloc_floats(&s->key_cache, cache, "the key cache"));
    RLVR_TRY(alloc_floats(&s->value_cache, cache, "the value cache"));
    RLVR_TRY(alloc_floats(&s->logits, S * V, "slot logits"));
    RLVR_ALLOC(s->slots, S);
    for (size_t i = 0; i < S; i++) s->slots[i].parent = -1;
    RLVR_ALLOC(s->seen, S);
    RLVR_ALLOC(s->row_slot, R);
    RLVR_ALLOC(s->row_pos, R);
    RLVR_ALLOC(s->row_tok, R);
    RLVR_ALLOC(s->row_kv, R);
    RLVR_ALLOC(s->row_prefix, R);
    RLVR_ALLOC(s->row_shared, R);
    RLVR_TRY(alloc_floats(&s->x, R * C, "activations"));
    RLVR_TRY(alloc_floats(&s->xn, R * C, "activations"));
    RLVR_TRY(alloc_floats(&s->q, R * C, "activations"));
    RLVR_TRY(alloc_floats(&s->k, R * KV, "activations"));
    RLVR_TRY(alloc_floats(&s->v, R * KV, "activations"));
    RLVR_TRY(alloc_floats(&s->att, R * C, "activations"));
    RLVR_TRY(alloc_floats(&s->proj, R * C, "activations"));
    RLVR_TRY(alloc_floats(&s->gate, R * F, "activations"));
    RLVR_TRY(alloc_floats(&s->up, R * F, "activations"));
    RLVR_TRY(alloc_floats(&s->hidden, R * F, "activations"));
    RLVR_TRY(alloc_floats(&s->scores, R * (size_t)m->n_heads * T, "attention scores"));
    RLVR_TRY(alloc_floats(&s->row_logits, R * V, "logits"));
    RLVR_TRY(alloc_floats(&s->probs, R * V, "probabilities"));
    return 0;
}

int rlvr_sampler_new(rlvr_sampler **out, const rlvr_model *model, const rlvr_sampler_config *cfg) {
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
    int rc = alloc_state(s);
    if (rc < 0) {
        rlvr_sampler_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

void rlvr_sampler_free(rlvr_sampler *s) {
    if (!s) return;
    float *bufs[] = {s->key_cache, s->value_cache, s->logits, s->x,      s->xn,         s->q,
                     s->k,         s->v,           s->att,    s->proj,   s->gate,       s->up,
                     s->hidden,    s->scores,      s->probs,  s->row_logits};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) free(bufs[i]);
    free(s->slots);
    free(s->seen);
    free(s->row_slot);
    free(s->row_pos);
    free(s->row_tok);
    free(s->row_kv);
    free(s->row_prefix);
    free(s->row_shared);
    free(s->stop_ids);
    free(s);
}

const rlvr_sampler_config *rlvr_sampler_config_of(const rlvr_sampler *s) { return &s->cfg; }

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

/* Float offset of (layer, slot) in a cache: its T × KV block. */
static size_t cache_offset(const rlvr_sampler *s, int layer, int slot) {
    return (((size_t)layer * s->cfg.kv_slots + (size_t)slot) * (size_t)s->ctx) * (size_t)s->kv_dim;
}

/* Copies positions [from, to) of src's own rows into dst's rows, all layers. */
static void copy_rows(rlvr_sampler *s, int dst, int src, int from, int to) {
    size_t KV = (size_t)s->kv_dim, at = (size_t)from * KV, n = (size_t)(to - from) * KV * sizeof(float);
    if (to <= from) return;
    for (int l = 0; l < s->mc.n_layers; l++) {
        memcpy(s->key_cache + cache_offset(s, l, dst) + at, s->key_cache + cache_offset(s, l, src) + at, n);
        memcpy(s->value_cache + cache_offset(s, l, dst) + at, s->value_cache + cache_offset(s, l, src) + at, n);
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

static void add_inplace(float *x, const float *y, size_t n) {
    for (size_t i = 0; i < n; i++) x[i] += y[i];
}

/* Writes the rows' new K and V into their slots' own rows (a row's position
 * is always past its slot's shared prefix) and notes where each row's
 * keys live for the attention. */
static void store_kv(rlvr_sampler *s, int layer, int n) {
    size_t KV = (size_t)s->kv_dim;
    for (int r = 0; r < n; r++) {
        const slot_state *st = &s->slots[s->row_slot[r]];
        size_t base = cache_offset(s, layer, s->row_slot[r]), at = base + (size_t)s->row_pos[r] * KV;
        memcpy(s->key_cache + at, s->k + (size_t)r * KV, KV * sizeof(float));
        memcpy(s->value_cache + at, s->v + (size_t)r * KV, KV * sizeof(float));
        s->row_kv[r] = (int64_t)base;
        s->row_prefix[r] = st->parent >= 0 ? (int64_t)cache_offset(s, layer, st->parent) : (int64_t)base;
        s->row_shared[r] = st->parent >= 0 ? st->shared_len : 0;
    }
}

/* x += Attention(RMSNorm(x)) for layer l. */
static void attention_block(rlvr_sampler *s, const rlvr_param_views *w, int l, int n) {
    const rlvr_model_config *m = &s->mc;
    int C = m->d_model, KV = s->kv_dim, hd = s->head_dim;
    size_t CC = (size_t)C * C, KC = (size_t)KV * C;
    rmsnorm_forward(s->xn, NULL, s->x, w->attn_norm + (size_t)l * C, n, C, m->norm_eps);
    matmul_target qkv[3] = {{s->q, w->wq + l * CC, C}, {s->k, w->wk + l * KC, KV}, {s->v, w->wv + l * KC, KV}};
    matmul_forward_invariant_multi(qkv, 3, s->xn, n, C);
    rope_forward(s->q, s->row_pos, n, m->n_heads, hd, m->rope_theta);
    rope_forward(s->k, s->row_pos, n, m->n_kv_heads, hd, m->rope_theta);
    store_kv(s, l, n);
    attention_rows rows = {s->row_prefix, s->row_shared, s->row_kv, s->row_pos};
    attention_forward_cached(s->att, s->scores, s->q, s->key_cache, s->value_cache, &rows, n, m->n_heads,
                             m->n_kv_heads, hd, s->ctx);
    matmul_forward_invariant(s->proj, s->att, w->wo + l * CC, n, C, C);
    add_inplace(s->x, s->proj, (size_t)n * C);
}

/* x += SwiGLU-MLP(RMSNorm(x)) for layer l. */
static void mlp_block(rlvr_sampler *s, const rlvr_param_views *w, int l, int n) {
    const rlvr_model_config *m = &s->mc;
    int C = m->d_model, F = m->d_ff;
    size_t FC = (size_t)F * C;
    rmsnorm_forward(s->xn, NULL, s->x, w->mlp_norm + (size_t)l * C, n, C, m->norm_eps);
    matmul_target gate_up[2] = {{s->gate, w->w_gate + l * FC, F}, {s->up, w->w_up + l * FC, F}};
    matmul_forward_invariant_multi(gate_up, 2, s->xn, n, C);
    swiglu_forward(s->hidden, s->gate, s->up, n, F);
    matmul_forward_invariant(s->proj, s->hidden, w->w_down + l * FC, n, F, C);
    add_inplace(s->x, s->proj, (size_t)n * C);
}

/* Runs rows [0, n) (row_slot/row_pos/row_tok filled) through the decoder,
 * leaving the final residual stream in x and their K/V in the caches. */
static void forward_rows(rlvr_sampler *s, int n) {
    const rlvr_param_views *w = rlvr_model_param_views(s->model);
    size_t C = (size_t)s->mc.d_model;
    for (int r = 0; r < n; r++) memcpy(s->x + r * C, w->embed + (size_t)s->row_tok[r] * C, C * sizeof(float));
    for (int l = 0; l < s->mc.n_layers; l++) {
        attention_block(s, w, l, n);
        mlp_block(s, w, l, n);
    }
}

/* Next-token logits of rows [first, first + m) into their slots' logits. */
static void emit_logits(rlvr_sampler *s, int first, int m) {
    const rlvr_param_views *w = rlvr_model_param_views(s->model);
    size_t C = (size_t)s->mc.d_model, V = (size_t)s->mc.vocab;
    rmsnorm_forward(s->xn, NULL, s->x + (size_t)first * C, w->final_norm, m, (int)C, s->mc.norm_eps);
    matmul_forward_invariant(s->row_logits, s->xn, w->lm_head, m, (int)C, (int)V);
    for (int i = 0; i < m; i++)
        memcpy(s->logits + (size_t)s->row_slot[first + i] * V, s->row_logits + i * V, V * sizeof(float));
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
        forward_rows(s, rows);
        st->len += rows;
        done += rows;
        if (done == n) emit_logits(s, rows - 1, 1);
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

/* Inverse CDF in vocabulary order; the last token with mass absorbs rounding. */
static int32_t draw(const float *probs, int V, double u) {
    double total = 0.0;
    for (int v = 0; v < V; v++) total += probs[v];
    double target = u * total, cdf = 0.0;
    int32_t last = 0;
    for (int v = 0; v < V; v++) {
        if (probs[v] <= 0.0f) continue;
        cdf += probs[v];
        last = v;
        if (cdf > target) return v;
    }
    return last;
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
    logits_logprob_entropy(&out->entropy, probs, logits, s->mc.vocab, tau, -1);
    double u = rlvr_rng_uniform(s->cfg.seed, RLVR_RNG_SAMPLE, st->step, st->sequence, (uint32_t)st->len);
    out->token = draw(probs, s->mc.vocab, u);
    out->logprob = logits_logprob_entropy(NULL, NULL, logits, s->mc.vocab, tau, out->token);
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
#pragma omp parallel for schedule(static) if ((size_t)n * V >= (1u << 15))
    for (int i = 0; i < n; i++) sample_one(s, slots[i], s->probs + i * V, &out[i]);

    /* append every sampled token (stop tokens too: the KV holds the whole context) */
    int rows = 0;
    for (int i = 0; i < n; i++) {
        if (out[i].token < 0) continue;
        s->row_slot[rows] = slots[i];
        s->row_pos[rows] = out[i].position;
        s->row_tok[rows] = out[i].token;
        rows++;
    }
    if (rows > 0) {
        forward_rows(s, rows);
        emit_logits(s, 0, rows);
    }
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
