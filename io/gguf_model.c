/* io/gguf_model.c — GGUF "llama" and "qwen2" files to a model. */
#include "io/gguf_model.h"
#include "core/error.h"
#include "io/gguf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const gguf_names[RLVR_PARAM_TENSORS] = {
    "token_embd.weight",       "blk.%d.attn_norm.weight", "blk.%d.attn_q.weight",   "blk.%d.attn_k.weight",
    "blk.%d.attn_v.weight",    "blk.%d.attn_output.weight", "blk.%d.ffn_norm.weight", "blk.%d.ffn_gate.weight",
    "blk.%d.ffn_up.weight",    "blk.%d.ffn_down.weight",  "output_norm.weight",     "output.weight",
    "blk.%d.attn_q.bias",      "blk.%d.attn_k.bias",      "blk.%d.attn_v.bias",
};

const char *const *rlvr_gguf_tensor_names(void) { return gguf_names; }

static int key_error(const char *path, const char *key, const char *what) {
    return RLVR_FAIL(RLVR_EFORMAT, "%s: key \"%s\" is missing or not %s", path, key, what);
}

/* <arch>.<suffix> as a positive integer; dflt > 0 stands in for an absent key. */
static int get_int(const rlvr_gguf *g, const char *path, const char *arch, const char *suffix, int dflt, int *out) {
    char key[128];
    snprintf(key, sizeof key, "%s.%s", arch, suffix);
    uint32_t v;
    int rc = rlvr_gguf_get_u32(g, key, &v);
    if (rc == RLVR_ENOTFOUND && dflt > 0) {
        *out = dflt;
        return 0;
    }
    if (rc < 0 || v < 1 || v > (1u << 30)) return key_error(path, key, "a positive integer");
    *out = (int)v;
    return 0;
}

static int get_f32(const rlvr_gguf *g, const char *path, const char *arch, const char *suffix, float dflt,
                   float *out) {
    char key[128];
    snprintf(key, sizeof key, "%s.%s", arch, suffix);
    int rc = rlvr_gguf_get_f32(g, key, out);
    if (rc == RLVR_ENOTFOUND && dflt > 0) {
        *out = dflt;
        return 0;
    }
    if (rc < 0 || !(*out > 0)) return key_error(path, key, "a positive float32");
    return 0;
}

static int arch_of(const rlvr_gguf *g, const char *path, const char **arch) {
    const char *s = NULL;
    size_t n = 0;
    if (rlvr_gguf_get_string(g, "general.architecture", &s, &n) < 0)
        return key_error(path, "general.architecture", "a string");
    if (n == 5 && memcmp(s, "llama", 5) == 0) *arch = "llama";
    else if (n == 5 && memcmp(s, "qwen2", 5) == 0) *arch = "qwen2";
    else
        return RLVR_FAIL(RLVR_EFORMAT, "%s: key \"general.architecture\" is \"%.*s\": rlvr imports \"llama\" and "
                                       "\"qwen2\"",
                         path, (int)(n > 64 ? 64 : n), s);
    return 0;
}

/* llama.cpp keeps Llama 3.1 RoPE scaling only as rope_freqs.weight, the
 * divisor of each frequency; rlvr's RoPE takes the llama3 parameters. The
 * ones every Llama 3.x release uses (low_freq_factor 1, high_freq_factor 4,
 * original context 8192 or <arch>.rope.scaling.original_context_length),
 * with factor = the last divisor, are taken when they give every divisor
 * back (to float rounding); anything else is refused. */
static int rope_from_divisors(const rlvr_gguf *g, const char *path, const char *arch, const rlvr_gguf_tensor *t,
                              rlvr_model_config *m) {
    float file[512], ours[512];
    uint64_t n = (uint64_t)(m->d_model / m->n_heads / 2);
    if (t->n_dims != 1 || t->dims[0] != n || n > 512)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: tensor \"rope_freqs.weight\" is not [head_dim / 2 = %llu]", path,
                         (unsigned long long)n);
    RLVR_TRY(rlvr_gguf_tensor_f32(g, t, file));
    char key[128];
    uint32_t orig = 8192;
    snprintf(key, sizeof key, "%s.rope.scaling.original_context_length", arch);
    (void)rlvr_gguf_get_u32(g, key, &orig); /* absent: Llama 3.x's 8192 */
    m->rope_scaling = (rlvr_rope_scaling){.kind = RLVR_ROPE_SCALING_LLAMA3, .factor = file[n - 1],
                                          .low_freq_factor = 1, .high_freq_factor = 4, .original_max_seq = (int)orig};
    rlvr_port_llama3_divisors(m, ours);
    for (uint64_t i = 0; i < n; i++)
        if (!(fabsf(ours[i] - file[i]) <= 1e-5f * fabsf(file[i])))
            return RLVR_FAIL(RLVR_EFORMAT, "%s: tensor \"rope_freqs.weight\" (RoPE scaling): divisor %llu is %.9g, "
                                           "llama3 scaling with factor %g, low_freq_factor 1, high_freq_factor 4 and "
                                           "original context %u gives %.9g; rlvr needs the llama3 parameters, which "
                                           "the file does not keep: import the Hugging Face directory instead",
                             path, (unsigned long long)i, (double)file[i], (double)file[n - 1], orig, (double)ours[i]);
    return 0;
}

static int rope_scaling(const rlvr_gguf *g, const char *path, const char *arch, rlvr_model_config *m) {
    char key[128];
    snprintf(key, sizeof key, "%s.rope.scaling.type", arch);
    const char *s = NULL;
    size_t n = 0;
    if (rlvr_gguf_get_string(g, key, &s, &n) == 0 && !(n == 4 && memcmp(s, "none", 4) == 0))
        return RLVR_FAIL(RLVR_EFORMAT, "%s: key \"%s\" is \"%.*s\": rlvr imports GGUF RoPE scaling only as llama3 "
                                       "divisors (rope_freqs.weight)",
                         path, key, (int)(n > 64 ? 64 : n), s);
    const rlvr_gguf_tensor *t = rlvr_gguf_tensor_find(g, "rope_freqs.weight");
    return t ? rope_from_divisors(g, path, arch, t, m) : 0;
}

static int parse_config(const rlvr_gguf *g, const char *path, const rlvr_port_options *opt, rlvr_model_config *m,
                        const char **arch) {
    RLVR_TRY(arch_of(g, path, arch));
    const char *a = *arch;
    rlvr_port_config_init(m);
    int ctx = 0, rope_dims = 0;
    RLVR_TRY(get_int(g, path, a, "embedding_length", 0, &m->d_model));
    RLVR_TRY(get_int(g, path, a, "block_count", 0, &m->n_layers));
    RLVR_TRY(get_int(g, path, a, "feed_forward_length", 0, &m->d_ff));
    RLVR_TRY(get_int(g, path, a, "attention.head_count", 0, &m->n_heads));
    RLVR_TRY(get_int(g, path, a, "attention.head_count_kv", m->n_heads, &m->n_kv_heads));
    RLVR_TRY(get_int(g, path, a, "context_length", 0, &ctx));
    RLVR_TRY(get_f32(g, path, a, "attention.layer_norm_rms_epsilon", 0, &m->norm_eps));
    RLVR_TRY(get_f32(g, path, a, "rope.freq_base", 10000.0f, &m->rope_theta)); /* llama.cpp's default */
    if (m->d_model % m->n_heads || m->n_heads % m->n_kv_heads || (m->d_model / m->n_heads) % 2)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: keys %s.embedding_length %d, attention.head_count %d and head_count_kv %d "
                                       "do not give whole, even heads",
                         path, a, m->d_model, m->n_heads, m->n_kv_heads);
    RLVR_TRY(get_int(g, path, a, "rope.dimension_count", m->d_model / m->n_heads, &rope_dims));
    if (rope_dims != m->d_model / m->n_heads)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: key \"%s.rope.dimension_count\" is %d: rlvr rotates whole heads (%d)", path,
                         a, rope_dims, m->d_model / m->n_heads);
    RLVR_TRY(rope_scaling(g, path, a, m));
    const rlvr_gguf_tensor *emb = rlvr_gguf_tensor_find(g, "token_embd.weight");
    if (!emb || emb->n_dims != 2 || emb->dims[0] != (uint64_t)m->d_model || emb->dims[1] < 1 || emb->dims[1] > (1u << 30))
        return RLVR_FAIL(RLVR_EFORMAT, "%s: tensor \"token_embd.weight\" is missing or not [%d, vocab]", path,
                         m->d_model);
    m->vocab = (int)emb->dims[1];
    m->tie_embeddings = rlvr_gguf_tensor_find(g, "output.weight") == NULL;
    m->qkv_bias = strcmp(a, "qwen2") == 0;
    m->max_seq = rlvr_port_max_seq(ctx, opt);
    return 0;
}

int rlvr_gguf_model_config(const char *path, const rlvr_port_options *opt, rlvr_model_config *out,
                           const char **arch) {
    rlvr_gguf *g = NULL;
    RLVR_TRY(rlvr_gguf_open(&g, path));
    rlvr_model_config m;
    const char *a = NULL;
    int rc = parse_config(g, path, opt, &m, &a);
    rlvr_gguf_free(g);
    if (rc < 0) return rc;
    *out = m;
    if (arch) *arch = a;
    return 0;
}

typedef struct {
    const char *path;
    const rlvr_port_options *opt;
    rlvr_gguf *g;
    bool permute; /* qwen2: NEOX rope, rows in half-split order */
    int head_dim;
} gguf_fill;

/* ggml lists dims fastest first: a (rows, cols) matrix is [cols, rows]. */
static int read_tensor(void *user, const rlvr_port_tensor *t) {
    const gguf_fill *f = user;
    const rlvr_gguf_tensor *gt = rlvr_gguf_tensor_find(f->g, t->name);
    if (!gt) return RLVR_FAIL(RLVR_EFORMAT, "%s: tensor \"%s\" is missing", f->path, t->name);
    bool ok = t->cols ? gt->n_dims == 2 && gt->dims[0] == t->cols && gt->dims[1] == t->rows
                      : gt->n_dims == 1 && gt->dims[0] == t->rows;
    if (!ok)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: tensor \"%s\" has %u dims [%llu, %llu], the metadata says [%zu, %zu]",
                         f->path, t->name, gt->n_dims, (unsigned long long)gt->dims[0],
                         (unsigned long long)gt->dims[1], t->cols ? t->cols : t->rows, t->cols ? t->rows : 1);
    int rc = rlvr_gguf_tensor_f32(f->g, gt, t->data);
    if (rc < 0) return rlvr_error_wrap(rc, "%s: tensor \"%s\"", f->path, t->name);
    if (!f->permute || !rlvr_port_is_rope_rows(t->tensor)) return 0;
    return rlvr_port_permute_rope(t->data, t->rows, t->cols, f->head_dim, true);
}

static int fill(rlvr_model *m, void *user) {
    return rlvr_port_for_each(m, gguf_names, read_tensor, user, ((gguf_fill *)user)->opt);
}

int rlvr_gguf_model_load(const char *path, const rlvr_port_options *opt, rlvr_model **out) {
    gguf_fill f = {.path = path, .opt = opt};
    RLVR_TRY(rlvr_gguf_open(&f.g, path));
    rlvr_model_config cfg;
    const char *arch = NULL;
    int rc = parse_config(f.g, path, opt, &cfg, &arch);
    if (rc == 0) {
        f.permute = strcmp(arch, "qwen2") == 0;
        f.head_dim = cfg.d_model / cfg.n_heads;
        rc = rlvr_port_new_model(out, &cfg, fill, &f);
    }
    rlvr_gguf_free(f.g);
    return rc < 0 ? rlvr_error_wrap(rc, "importing %s", path) : 0;
}
