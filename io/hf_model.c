/* io/hf_model.c — Hugging Face Llama/Mistral/Qwen2 directories to a model. */
#include "io/hf_model.h"
#include "core/error.h"
#include "io/safetensors.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SUPPORTED "LlamaForCausalLM (llama), MistralForCausalLM (mistral) and Qwen2ForCausalLM (qwen2)"

/* The file names of the model tensors, in rlvr_param_views order. */
static const char *const hf_names[RLVR_PARAM_TENSORS] = {
    "model.embed_tokens.weight",
    "model.layers.%d.input_layernorm.weight",
    "model.layers.%d.self_attn.q_proj.weight",
    "model.layers.%d.self_attn.k_proj.weight",
    "model.layers.%d.self_attn.v_proj.weight",
    "model.layers.%d.self_attn.o_proj.weight",
    "model.layers.%d.post_attention_layernorm.weight",
    "model.layers.%d.mlp.gate_proj.weight",
    "model.layers.%d.mlp.up_proj.weight",
    "model.layers.%d.mlp.down_proj.weight",
    "model.norm.weight",
    "lm_head.weight",
    "model.layers.%d.self_attn.q_proj.bias",
    "model.layers.%d.self_attn.k_proj.bias",
    "model.layers.%d.self_attn.v_proj.bias",
};

const char *const *rlvr_hf_tensor_names(void) { return hf_names; }

/* ---- config.json ------------------------------------------------------------------------------ */

typedef struct {
    const char *path; /* ".../config.json", for messages */
    json_t *root;
} hf_config;

static int field_missing(const hf_config *c, const char *field, const char *what) {
    return RLVR_FAIL(RLVR_EFORMAT, "%s: field \"%s\" is missing or not %s (rlvr imports " SUPPORTED ")", c->path,
                     field, what);
}

/* A positive integer field; `dflt` > 0 stands in for an absent or null one. */
static int get_int(const hf_config *c, const char *field, int dflt, int *out) {
    json_t *v = json_object_get(c->root, field);
    if ((!v || json_is_null(v)) && dflt > 0) {
        *out = dflt;
        return 0;
    }
    if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > (1 << 30))
        return field_missing(c, field, "a positive integer");
    *out = (int)json_integer_value(v);
    return 0;
}

/* A positive number field of obj (prefix names obj in messages); `dflt`
 * (not NaN) stands in for an absent one. */
static int get_num(const json_t *obj, const hf_config *c, const char *prefix, const char *field, double dflt,
                   double *out) {
    json_t *v = json_object_get(obj, field);
    if (!v && !isnan(dflt)) {
        *out = dflt;
        return 0;
    }
    char full[128];
    snprintf(full, sizeof full, "%s%s", prefix, field);
    if (!json_is_number(v) || !(json_number_value(v) > 0)) return field_missing(c, full, "a positive number");
    *out = json_number_value(v);
    return 0;
}

/* A boolean field: absent or null reads as `dflt`. */
static int get_bool(const hf_config *c, const char *field, bool dflt, bool *out) {
    json_t *v = json_object_get(c->root, field);
    if (!v || json_is_null(v)) *out = dflt;
    else if (json_is_boolean(v)) *out = json_is_true(v);
    else return field_missing(c, field, "a boolean");
    return 0;
}

static const char *str_field(const json_t *obj, const char *field) {
    json_t *v = json_object_get(obj, field);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* model_type, checked against architectures[0] when the file has one. */
static int arch_of(const hf_config *c, const char **arch) {
    static const char *const types[] = {"llama", "mistral", "qwen2"};
    static const char *const classes[] = {"LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM"};
    const char *type = str_field(c->root, "model_type");
    json_t *archs = json_object_get(c->root, "architectures");
    const char *cls = json_is_array(archs) ? json_string_value(json_array_get(archs, 0)) : NULL;
    for (int i = 0; i < 3; i++) {
        if (!type || strcmp(type, types[i]) != 0) continue;
        if (cls && strcmp(cls, classes[i]) != 0) break;
        *arch = types[i];
        return 0;
    }
    return RLVR_FAIL(RLVR_EFORMAT, "%s: field \"architectures\" is \"%s\" and \"model_type\" \"%s\": rlvr imports " SUPPORTED,
                     c->path, cls ? cls : "(none)", type ? type : "(none)");
}

static int rope_scaling(const hf_config *c, rlvr_rope_scaling *out) {
    json_t *rs = json_object_get(c->root, "rope_scaling");
    *out = (rlvr_rope_scaling){0};
    if (!rs || json_is_null(rs)) return 0;
    const char *type = str_field(rs, "rope_type");
    if (!type) type = str_field(rs, "type");
    if (type && strcmp(type, "default") == 0) return 0;
    if (!type || strcmp(type, "llama3") != 0)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: field \"rope_scaling\" has rope_type \"%s\": rlvr supports none (null) "
                                       "and \"llama3\"",
                         c->path, type ? type : "(none)");
    double f, lo, hi, orig;
    RLVR_TRY(get_num(rs, c, "rope_scaling.", "factor", NAN, &f));
    RLVR_TRY(get_num(rs, c, "rope_scaling.", "low_freq_factor", NAN, &lo));
    RLVR_TRY(get_num(rs, c, "rope_scaling.", "high_freq_factor", NAN, &hi));
    RLVR_TRY(get_num(rs, c, "rope_scaling.", "original_max_position_embeddings", NAN, &orig));
    if (!(hi > lo) || orig != floor(orig))
        return RLVR_FAIL(RLVR_EFORMAT, "%s: field \"rope_scaling\": high_freq_factor must exceed low_freq_factor and "
                                       "original_max_position_embeddings be an integer",
                         c->path);
    *out = (rlvr_rope_scaling){.kind = RLVR_ROPE_SCALING_LLAMA3, .factor = (float)f, .low_freq_factor = (float)lo,
                               .high_freq_factor = (float)hi, .original_max_seq = (int)orig};
    return 0;
}

/* What the forward does not compute: refuse rather than import a model that
 * would give different log-probs. */
static int refuse_unsupported(const hf_config *c, const char *arch, const rlvr_model_config *m) {
    const char *act = str_field(c->root, "hidden_act");
    if (json_object_get(c->root, "hidden_act") && (!act || strcmp(act, "silu") != 0))
        return RLVR_FAIL(RLVR_EFORMAT, "%s: field \"hidden_act\" is \"%s\": rlvr's MLP is SwiGLU (\"silu\")", c->path,
                         act ? act : "(not a string)");
    json_t *hd = json_object_get(c->root, "head_dim");
    if (hd && !json_is_null(hd) && (!json_is_integer(hd) || json_integer_value(hd) != m->d_model / m->n_heads))
        return RLVR_FAIL(RLVR_EFORMAT, "%s: field \"head_dim\" is %lld, rlvr needs hidden_size / num_attention_heads = %d",
                         c->path, (long long)json_integer_value(hd), m->d_model / m->n_heads);
    bool b;
    for (int i = 0; i < 2 && strcmp(arch, "qwen2") != 0; i++) {
        const char *f = i ? "mlp_bias" : "attention_bias";
        RLVR_TRY(get_bool(c, f, false, &b));
        if (b) return RLVR_FAIL(RLVR_EFORMAT, "%s: field \"%s\" is true: rlvr's %s has no such biases", c->path, f, arch);
    }
    if (strcmp(arch, "qwen2") == 0) {
        RLVR_TRY(get_bool(c, "use_sliding_window", false, &b));
        if (b) return RLVR_FAIL(RLVR_EFORMAT, "%s: field \"use_sliding_window\" is true: rlvr attends to every position", c->path);
    }
    json_t *sw = json_object_get(c->root, "sliding_window");
    if (strcmp(arch, "mistral") == 0 && sw && !json_is_null(sw) &&
        (!json_is_integer(sw) || json_integer_value(sw) < m->max_seq))
        return RLVR_FAIL(RLVR_EFORMAT, "%s: field \"sliding_window\" is %lld, below the context %d: rlvr attends to "
                                       "every position (pass a smaller --max-seq, or use a model without a window)",
                         c->path, (long long)json_integer_value(sw), m->max_seq);
    return 0;
}

static int parse_config(const hf_config *c, const rlvr_port_options *opt, rlvr_model_config *m, const char **arch) {
    RLVR_TRY(arch_of(c, arch));
    rlvr_port_config_init(m);
    int max_pos = 0;
    double theta = 0, eps = 0;
    RLVR_TRY(get_int(c, "hidden_size", 0, &m->d_model));
    RLVR_TRY(get_int(c, "intermediate_size", 0, &m->d_ff));
    RLVR_TRY(get_int(c, "num_hidden_layers", 0, &m->n_layers));
    RLVR_TRY(get_int(c, "num_attention_heads", 0, &m->n_heads));
    RLVR_TRY(get_int(c, "num_key_value_heads", m->n_heads, &m->n_kv_heads));
    RLVR_TRY(get_int(c, "vocab_size", 0, &m->vocab));
    RLVR_TRY(get_int(c, "max_position_embeddings", 0, &max_pos));
    RLVR_TRY(get_num(c->root, c, "", "rms_norm_eps", NAN, &eps));
    RLVR_TRY(get_num(c->root, c, "", "rope_theta", 10000.0, &theta)); /* transformers' default for all three */
    RLVR_TRY(get_bool(c, "tie_word_embeddings", false, &m->tie_embeddings));
    RLVR_TRY(rope_scaling(c, &m->rope_scaling));
    m->rope_theta = (float)theta, m->norm_eps = (float)eps;
    m->max_seq = rlvr_port_max_seq(max_pos, opt);
    m->qkv_bias = strcmp(*arch, "qwen2") == 0;
    if (m->d_model % m->n_heads || m->n_heads % m->n_kv_heads || (m->d_model / m->n_heads) % 2)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: fields \"hidden_size\" %d, \"num_attention_heads\" %d and "
                                       "\"num_key_value_heads\" %d do not give whole, even heads",
                         c->path, m->d_model, m->n_heads, m->n_kv_heads);
    return refuse_unsupported(c, *arch, m);
}

int rlvr_hf_model_config(const char *dir, const rlvr_port_options *opt, rlvr_model_config *out, const char **arch) {
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/config.json", dir) >= sizeof path)
        return RLVR_FAIL(RLVR_EINVAL, "path too long: %s", dir);
    json_error_t jerr;
    hf_config c = {.path = path, .root = json_load_file(path, 0, &jerr)};
    if (!c.root)
        return RLVR_FAIL(jerr.line < 0 ? RLVR_EIO : RLVR_EFORMAT, "%s: cannot read it: %s (line %d)", path, jerr.text,
                         jerr.line);
    rlvr_model_config m;
    const char *a = NULL;
    int rc = json_is_object(c.root) ? parse_config(&c, opt, &m, &a)
                                    : RLVR_FAIL(RLVR_EFORMAT, "%s: not a JSON object", path);
    json_decref(c.root);
    if (rc < 0) return rc;
    *out = m;
    if (arch) *arch = a;
    return 0;
}

/* ---- weights ---------------------------------------------------------------------------------- */

/* model.safetensors, or the index and every shard it names. */
typedef struct {
    char where[4096];          /* the file tensors are looked up in, for messages */
    rlvr_st_index *ix;         /* NULL for one file */
    rlvr_safetensors **files;  /* one per shard (index order), or the single file */
    size_t n_files;
    int head_dim;
} hf_weights;

static void weights_free(hf_weights *w) {
    for (size_t i = 0; i < w->n_files; i++) rlvr_safetensors_free(w->files[i]);
    free(w->files);
    rlvr_st_index_free(w->ix);
}

static int weights_open(hf_weights *w, const char *dir) {
    snprintf(w->where, sizeof w->where, "%s/model.safetensors.index.json", dir);
    size_t n = 1;
    if (access(w->where, F_OK) == 0) {
        RLVR_TRY(rlvr_st_index_open(&w->ix, w->where));
        n = rlvr_st_index_shard_count(w->ix);
    } else {
        snprintf(w->where, sizeof w->where, "%s/model.safetensors", dir);
    }
    w->files = calloc(n, sizeof *w->files);
    if (!w->files) return RLVR_FAIL(RLVR_ENOMEM, "out of memory opening %s", w->where);
    for (; w->n_files < n; w->n_files++)
        RLVR_TRY(rlvr_safetensors_open(&w->files[w->n_files], w->ix ? rlvr_st_index_shard(w->ix, w->n_files) : w->where));
    return 0;
}

static const rlvr_st_tensor *weights_find(const hf_weights *w, const char *name, size_t *file) {
    *file = 0;
    if (w->ix) {
        const char *shard = rlvr_st_index_find(w->ix, name);
        if (!shard) return NULL;
        while (*file < w->n_files && strcmp(rlvr_st_index_shard(w->ix, *file), shard) != 0) ++*file;
        if (*file == w->n_files) return NULL;
    }
    return rlvr_safetensors_tensor_find(w->files[*file], name);
}

static int read_tensor(void *user, const rlvr_port_tensor *t) {
    const hf_weights *w = user;
    size_t f;
    const rlvr_st_tensor *st = weights_find(w, t->name, &f);
    if (!st) return RLVR_FAIL(RLVR_EFORMAT, "%s: tensor \"%s\" is missing", w->where, t->name);
    size_t rank = t->cols ? 2 : 1;
    bool ok = st->rank == rank && st->shape[0] == t->rows && (rank == 1 || st->shape[1] == t->cols);
    if (!ok)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: tensor \"%s\" has shape [%llu%s%llu], config.json says [%zu%s%zu]",
                         w->ix ? rlvr_st_index_find(w->ix, t->name) : w->where, t->name,
                         (unsigned long long)(st->rank ? st->shape[0] : 0), st->rank > 1 ? ", " : "",
                         (unsigned long long)(st->rank > 1 ? st->shape[1] : 0), t->rows, t->cols ? ", " : "", t->cols);
    RLVR_TRY(rlvr_safetensors_tensor_f32(w->files[f], st, t->data));
    if (!rlvr_port_is_rope_rows(t->tensor)) return 0;
    return rlvr_port_permute_rope(t->data, t->rows, t->cols, w->head_dim, true);
}

typedef struct {
    const char *dir;
    const rlvr_port_options *opt;
} hf_fill;

static int fill(rlvr_model *m, void *user) {
    const hf_fill *f = user;
    const rlvr_model_config *c = rlvr_model_config_of(m);
    hf_weights w = {.head_dim = c->d_model / c->n_heads};
    int rc = weights_open(&w, f->dir);
    if (rc == 0) rc = rlvr_port_for_each(m, hf_names, read_tensor, &w, f->opt);
    weights_free(&w);
    return rc;
}

int rlvr_hf_model_load(const char *dir, const rlvr_port_options *opt, rlvr_model **out) {
    rlvr_model_config cfg;
    RLVR_TRY(rlvr_hf_model_config(dir, opt, &cfg, NULL));
    hf_fill f = {.dir = dir, .opt = opt};
    int rc = rlvr_port_new_model(out, &cfg, fill, &f);
    return rc < 0 ? rlvr_error_wrap(rc, "importing %s", dir) : 0;
}
