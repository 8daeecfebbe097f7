/* io/checkpoint_model.c — the model's part of a checkpoint: configuration
 * (attributes of /model), parameters (/model/params/<tensor>) and AdamW
 * moments (/optimizer/adam_m|adam_v/<tensor>), streamed between the model's
 * flat buffers and the file one chunk block at a time; and the tokenizer
 * (/tokenizer) the model's ids belong to. */
#include "core/error.h"
#include "io/checkpoint.h"
#include "io/checkpoint_internal.h"
#include "io/h5util.h"
#include "policy/bpe.h"
#include "policy/model.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Shape of tensor `name` from the configuration (policy/model.h lists it). */
static int tensor_shape(const rlvr_model_config *c, const char *name, int *rank, hsize_t dims[3]) {
    hsize_t V = (hsize_t)c->vocab, C = (hsize_t)c->d_model, L = (hsize_t)c->n_layers, F = (hsize_t)c->d_ff;
    hsize_t kv = C / (hsize_t)c->n_heads * (hsize_t)c->n_kv_heads;
    static const struct {
        const char *name;
        int rank;
        char dims[4]; /* letters: V C L F K(kv) */
    } shapes[] = {
        {"embed", 2, "VC"},   {"attn_norm", 2, "LC"}, {"wq", 3, "LCC"},     {"wk", 3, "LKC"},
        {"wv", 3, "LKC"},     {"wo", 3, "LCC"},       {"mlp_norm", 2, "LC"}, {"w_gate", 3, "LFC"},
        {"w_up", 3, "LFC"},   {"w_down", 3, "LCF"},   {"final_norm", 1, "C"}, {"lm_head", 2, "VC"},
        {"bq", 2, "LC"},      {"bk", 2, "LK"},        {"bv", 2, "LK"},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        if (strcmp(shapes[i].name, name) != 0) continue;
        *rank = shapes[i].rank;
        for (int d = 0; d < *rank; d++) {
            switch (shapes[i].dims[d]) {
            case 'V': dims[d] = V; break;
            case 'C': dims[d] = C; break;
            case 'L': dims[d] = L; break;
            case 'F': dims[d] = F; break;
            default: dims[d] = kv; break;
            }
        }
        return 0;
    }
    return RLVR_FAIL(RLVR_ESTATE, "checkpoint: the model has a tensor \"%s\" this rlvr does not know how to shape",
                     name);
}

/* Calls fn for every stored tensor (or tensor `only` alone, when >= 0)
 * with its offset in the flat buffers. */
typedef int (*tensor_fn)(const char *name, int rank, const hsize_t *dims, size_t offset, void *user);

static int for_tensors(const rlvr_model *m, int only, tensor_fn fn, void *user) {
    const rlvr_model_config *c = rlvr_model_config_of(m);
    size_t offset = 0;
    for (int i = 0; i < RLVR_PARAM_TENSORS; i++) {
        size_t n = rlvr_model_tensor_size(m, i);
        if (n == 0) continue; /* the tied LM head */
        if (only >= 0 && i != only) {
            offset += n;
            continue;
        }
        const char *name = rlvr_model_tensor_name(i);
        int rank = 0;
        hsize_t dims[3] = {0, 0, 0};
        RLVR_TRY(tensor_shape(c, name, &rank, dims));
        hsize_t count = 1;
        for (int d = 0; d < rank; d++) count *= dims[d];
        if (count != n)
            return RLVR_FAIL(RLVR_ESTATE, "checkpoint: tensor %s has %zu elements, its shape says %llu", name, n,
                             (unsigned long long)count);
        RLVR_TRY(fn(name, rank, dims, offset, user));
        offset += n;
    }
    if (only < 0 && offset != rlvr_model_num_params(m))
        return RLVR_FAIL(RLVR_ESTATE, "checkpoint: tensors cover %zu of %zu parameters", offset,
                         rlvr_model_num_params(m));
    return 0;
}

static int for_each_tensor(const rlvr_model *m, tensor_fn fn, void *user) { return for_tensors(m, -1, fn, user); }

typedef struct {
    hid_t loc;
    const char *group; /* "model/params" */
    float *base;
    int level;
    const char *what;  /* file, for messages */
} tensor_io;

static int write_tensor(const char *name, int rank, const hsize_t *dims, size_t offset, void *user) {
    tensor_io *t = user;
    char path[128];
    snprintf(path, sizeof path, "%s/%s", t->group, name);
    return rlvr_h5_write_array(t->loc, path, RLVR_DT_F32, rank, dims, t->base + offset, t->level);
}

static int read_tensor(const char *name, int rank, const hsize_t *dims, size_t offset, void *user) {
    tensor_io *t = user;
    char path[128];
    snprintf(path, sizeof path, "%s/%s", t->group, name);
    return rlvr_h5_read_array(t->loc, path, RLVR_DT_F32, rank, dims, t->base + offset, t->what);
}

static const char *const rope_scaling_names[] = {"none", "llama3"}; /* by rlvr_rope_scaling_kind */

/* qkv_bias and the RoPE scaling (attributes added after the first format:
 * all written, whatever their values). */
static int write_config_extras(hid_t g, const rlvr_model_config *c) {
    const rlvr_rope_scaling *r = &c->rope_scaling;
    int rc = 0;
    if ((rc = rlvr_h5_attr_put_i64(g, "qkv_bias", c->qkv_bias ? 1 : 0)) < 0 ||
        (rc = rlvr_h5_attr_put_str(g, "rope_scaling", rope_scaling_names[r->kind == RLVR_ROPE_SCALING_LLAMA3])) < 0 ||
        (rc = rlvr_h5_attr_put_f64(g, "rope_scaling_factor", r->factor)) < 0 ||
        (rc = rlvr_h5_attr_put_f64(g, "rope_low_freq_factor", r->low_freq_factor)) < 0 ||
        (rc = rlvr_h5_attr_put_f64(g, "rope_high_freq_factor", r->high_freq_factor)) < 0 ||
        (rc = rlvr_h5_attr_put_i64(g, "rope_original_max_seq", r->original_max_seq)) < 0)
        return rc;
    return 0;
}

/* The same back. A checkpoint written before these attributes existed has
 * none of them and holds a model without biases or scaling. */
static int read_config_extras(hid_t g, rlvr_model_config *c, const char *what) {
    int64_t bias = 0, orig = 0;
    double factor = 0.0, low = 0.0, high = 0.0;
    char kind[16] = "none";
    int rc = 0;
    if (rlvr_h5_attr_exists(g, "qkv_bias") && (rc = rlvr_h5_attr_get_i64(g, "qkv_bias", &bias, what)) < 0) return rc;
    if (!rlvr_h5_attr_exists(g, "rope_scaling")) {
        c->qkv_bias = bias != 0;
        return 0;
    }
    if ((rc = rlvr_h5_attr_get_str(g, "rope_scaling", kind, sizeof kind, what)) < 0 ||
        (rc = rlvr_h5_attr_get_f64(g, "rope_scaling_factor", &factor, what)) < 0 ||
        (rc = rlvr_h5_attr_get_f64(g, "rope_low_freq_factor", &low, what)) < 0 ||
        (rc = rlvr_h5_attr_get_f64(g, "rope_high_freq_factor", &high, what)) < 0 ||
        (rc = rlvr_h5_attr_get_i64(g, "rope_original_max_seq", &orig, what)) < 0)
        return rc;
    bool llama3 = strcmp(kind, rope_scaling_names[1]) == 0;
    if (!llama3 && strcmp(kind, rope_scaling_names[0]) != 0)
        return rlvr_error_set(RLVR_EFORMAT, "%s: rope_scaling is \"%s\", not none or llama3", what, kind);
    if (orig < 0 || orig > INT32_MAX)
        return rlvr_error_set(RLVR_EFORMAT, "%s: rope_original_max_seq %lld is out of range", what, (long long)orig);
    c->qkv_bias = bias != 0;
    c->rope_scaling = (rlvr_rope_scaling){.kind = llama3 ? RLVR_ROPE_SCALING_LLAMA3 : RLVR_ROPE_SCALING_NONE,
                                          .factor = (float)factor, .low_freq_factor = (float)low,
                                          .high_freq_factor = (float)high, .original_max_seq = (int)orig};
    return 0;
}

static int write_config(hid_t file, const rlvr_model_config *c) {
    hid_t g = H5Gcreate2(file, "model", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    RLVR_H5_CHECK(g, "creating group /model");
    int rc = 0;
    if ((rc = rlvr_h5_attr_put_i64(g, "vocab", c->vocab)) < 0 ||
        (rc = rlvr_h5_attr_put_i64(g, "d_model", c->d_model)) < 0 ||
        (rc = rlvr_h5_attr_put_i64(g, "n_layers", c->n_layers)) < 0 ||
        (rc = rlvr_h5_attr_put_i64(g, "n_heads", c->n_heads)) < 0 ||
        (rc = rlvr_h5_attr_put_i64(g, "n_kv_heads", c->n_kv_heads)) < 0 ||
        (rc = rlvr_h5_attr_put_i64(g, "d_ff", c->d_ff)) < 0 ||
        (rc = rlvr_h5_attr_put_i64(g, "max_seq", c->max_seq)) < 0 ||
        (rc = rlvr_h5_attr_put_f64(g, "rope_theta", c->rope_theta)) < 0 ||
        (rc = rlvr_h5_attr_put_f64(g, "norm_eps", c->norm_eps)) < 0 ||
        (rc = rlvr_h5_attr_put_i64(g, "tie_embeddings", c->tie_embeddings ? 1 : 0)) < 0 ||
        (rc = rlvr_h5_attr_put_u64(g, "init_seed", c->init_seed)) < 0 ||
        (rc = rlvr_h5_attr_put_f64(g, "init_std", c->init_std)) < 0 || (rc = write_config_extras(g, c)) < 0)
        rc = rlvr_error_wrap(rc, "writing the model configuration");
    H5Gclose(g);
    return rc;
}

int rlvr_checkpoint_put_model(rlvr_checkpoint_writer *w, rlvr_model *model) {
    if (w->has_model) return RLVR_FAIL(RLVR_EINVAL, "checkpoint %s: the model is stored twice", w->part);
    const rlvr_model_config *c = rlvr_model_config_of(model);
    int rc = write_config(w->file, c);
    tensor_io t = {.loc = w->file, .group = "model/params", .base = rlvr_model_params(model),
                   .level = w->opt.compression, .what = w->part};
    if (rc == 0) rc = for_each_tensor(model, write_tensor, &t);
    bool moments = rlvr_model_adam_m(model) && rlvr_model_adam_v(model);
    if (rc == 0 && moments) {
        t.group = "optimizer/adam_m";
        t.base = rlvr_model_adam_m(model);
        rc = for_each_tensor(model, write_tensor, &t);
        if (rc == 0) {
            t.group = "optimizer/adam_v";
            t.base = rlvr_model_adam_v(model);
            rc = for_each_tensor(model, write_tensor, &t);
        }
    }
    if (rc == 0) rc = rlvr_h5_attr_put_i64(w->file, "has_model", 1);
    if (rc == 0) rc = rlvr_h5_attr_put_i64(w->file, "has_moments", moments ? 1 : 0);
    if (rc < 0) return rlvr_error_wrap(rc, "checkpoint %s", w->part);
    w->has_model = true;
    return 0;
}

int rlvr_checkpoint_model_config(const rlvr_checkpoint *ck, rlvr_model_config *cfg) {
    if (!ck->info.has_model || !rlvr_ckpt_path_exists(ck->file, "model"))
        return rlvr_error_set(RLVR_EFORMAT, "%s: the checkpoint holds no model", ck->path);
    hid_t g = H5Gopen2(ck->file, "model", H5P_DEFAULT);
    RLVR_H5_CHECK(g, "%s: opening /model", ck->path);
    int64_t vocab, d_model, n_layers, n_heads, n_kv, d_ff, max_seq, tie;
    uint64_t seed;
    double theta, eps, std;
    char what[4200];
    snprintf(what, sizeof what, "%s: /model", ck->path);
    int rc = 0;
    if ((rc = rlvr_h5_attr_get_i64(g, "vocab", &vocab, what)) < 0 ||
        (rc = rlvr_h5_attr_get_i64(g, "d_model", &d_model, what)) < 0 ||
        (rc = rlvr_h5_attr_get_i64(g, "n_layers", &n_layers, what)) < 0 ||
        (rc = rlvr_h5_attr_get_i64(g, "n_heads", &n_heads, what)) < 0 ||
        (rc = rlvr_h5_attr_get_i64(g, "n_kv_heads", &n_kv, what)) < 0 ||
        (rc = rlvr_h5_attr_get_i64(g, "d_ff", &d_ff, what)) < 0 ||
        (rc = rlvr_h5_attr_get_i64(g, "max_seq", &max_seq, what)) < 0 ||
        (rc = rlvr_h5_attr_get_f64(g, "rope_theta", &theta, what)) < 0 ||
        (rc = rlvr_h5_attr_get_f64(g, "norm_eps", &eps, what)) < 0 ||
        (rc = rlvr_h5_attr_get_i64(g, "tie_embeddings", &tie, what)) < 0 ||
        (rc = rlvr_h5_attr_get_u64(g, "init_seed", &seed, what)) < 0 ||
        (rc = rlvr_h5_attr_get_f64(g, "init_std", &std, what)) < 0) {
        H5Gclose(g);
        return rc;
    }
    rlvr_model_config extras = {0};
    rc = read_config_extras(g, &extras, what);
    H5Gclose(g);
    if (rc < 0) return rc;
    int64_t ints[] = {vocab, d_model, n_layers, n_heads, n_kv, d_ff, max_seq};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (ints[i] < 1 || ints[i] > INT32_MAX)
            return rlvr_error_set(RLVR_EFORMAT, "%s: a /model size attribute is out of range (%lld)", ck->path,
                                  (long long)ints[i]);
    *cfg = (rlvr_model_config){
        .vocab = (int)vocab, .d_model = (int)d_model, .n_layers = (int)n_layers, .n_heads = (int)n_heads,
        .n_kv_heads = (int)n_kv, .d_ff = (int)d_ff, .max_seq = (int)max_seq, .rope_theta = (float)theta,
        .norm_eps = (float)eps, .tie_embeddings = tie != 0, .init_seed = seed, .init_std = (float)std,
        .qkv_bias = extras.qkv_bias, .rope_scaling = extras.rope_scaling,
    };
    return 0;
}

/* The first field in which two configurations differ, or NULL. */
static const char *config_difference(const rlvr_model_config *a, const rlvr_model_config *b, char *buf,
                                     size_t cap) {
#define DIFF_INT(f)                                                                                      \
    if (a->f != b->f) {                                                                                  \
        snprintf(buf, cap, #f " is %lld in the checkpoint, %lld in the model", (long long)a->f,          \
                 (long long)b->f);                                                                       \
        return buf;                                                                                      \
    }
#define DIFF_FLOAT(f)                                                                                    \
    if (memcmp(&a->f, &b->f, sizeof a->f) != 0) {                                                        \
        snprintf(buf, cap, #f " is %.9g in the checkpoint, %.9g in the model", (double)a->f, (double)b->f); \
        return buf;                                                                                      \
    }
    DIFF_INT(vocab)
    DIFF_INT(d_model)
    DIFF_INT(n_layers)
    DIFF_INT(n_heads)
    DIFF_INT(n_kv_heads)
    DIFF_INT(d_ff)
    DIFF_INT(max_seq)
    DIFF_FLOAT(rope_theta)
    DIFF_FLOAT(norm_eps)
    DIFF_INT(tie_embeddings)
    DIFF_INT(init_seed)
    DIFF_FLOAT(init_std)
    DIFF_INT(qkv_bias)
    DIFF_INT(rope_scaling.kind)
    DIFF_FLOAT(rope_scaling.factor)
    DIFF_FLOAT(rope_scaling.low_freq_factor)
    DIFF_FLOAT(rope_scaling.high_freq_factor)
    DIFF_INT(rope_scaling.original_max_seq)
#undef DIFF_INT
#undef DIFF_FLOAT
    return NULL;
}

typedef struct {
    int (*fn)(void *user, const rlvr_checkpoint_tensor *t);
    void *user;
    const char *what; /* the file, for messages */
} tensor_walk;

static int describe_tensor(hid_t loc, const char *name, void *user) {
    const tensor_walk *w = user;
    rlvr_checkpoint_tensor t = {.name = name};
    hid_t dset = H5Dopen2(loc, name, H5P_DEFAULT);
    RLVR_H5_CHECK(dset, "%s: opening /model/params/%s", w->what, name);
    hid_t type = H5Dget_type(dset), space = H5Dget_space(dset);
    hssize_t n = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
    int rc = type >= 0 ? rlvr_h5_dtype_of(type, &t.dtype) : RLVR_H5_FAIL("%s: /model/params/%s", w->what, name);
    if (rc == 0 && n < 0) rc = RLVR_H5_FAIL("%s: the shape of /model/params/%s", w->what, name);
    t.n_elements = n < 0 ? 0 : (uint64_t)n;
    t.n_bytes = (uint64_t)H5Dget_storage_size(dset);
    rlvr_h5_close(&space);
    rlvr_h5_close(&type);
    rlvr_h5_close(&dset);
    if (rc < 0) return rlvr_error_wrap(rc, "%s: /model/params/%s", w->what, name);
    return w->fn(w->user, &t);
}

int rlvr_checkpoint_model_tensors(const rlvr_checkpoint *ck, int (*fn)(void *user, const rlvr_checkpoint_tensor *t),
                                  void *user) {
    if (!ck->info.has_model || !rlvr_ckpt_path_exists(ck->file, "model/params"))
        return rlvr_error_set(RLVR_EFORMAT, "%s: the checkpoint holds no model", ck->path);
    hid_t g = H5Gopen2(ck->file, "model/params", H5P_DEFAULT);
    RLVR_H5_CHECK(g, "%s: opening /model/params", ck->path);
    tensor_walk w = {.fn = fn, .user = user, .what = ck->path};
    int rc = rlvr_h5_visit_datasets(g, describe_tensor, &w);
    rlvr_h5_close(&g);
    return rc;
}

static int check_stored_config(const rlvr_checkpoint *ck, const rlvr_model *model) {
    rlvr_model_config stored;
    RLVR_TRY(rlvr_checkpoint_model_config(ck, &stored));
    char why[256];
    if (config_difference(&stored, rlvr_model_config_of(model), why, sizeof why))
        return rlvr_error_set(RLVR_EFORMAT, "%s: model configuration differs: %s", ck->path, why);
    return 0;
}

int rlvr_checkpoint_read_model_tensor(const rlvr_checkpoint *ck, rlvr_model *model, int i) {
    if (i < 0 || i >= RLVR_PARAM_TENSORS)
        return RLVR_FAIL(RLVR_EINVAL, "checkpoint: no parameter tensor %d", i);
    RLVR_TRY(check_stored_config(ck, model));
    if (rlvr_model_tensor_size(model, i) == 0) return 0;
    tensor_io t = {.loc = ck->file, .group = "model/params", .base = rlvr_model_params(model), .what = ck->path};
    return for_tensors(model, i, read_tensor, &t);
}

int rlvr_checkpoint_read_model(const rlvr_checkpoint *ck, rlvr_model *model) {
    RLVR_TRY(check_stored_config(ck, model));
    tensor_io t = {.loc = ck->file, .group = "model/params", .base = rlvr_model_params(model), .what = ck->path};
    RLVR_TRY(for_each_tensor(model, read_tensor, &t));
    if (ck->info.has_moments) {
        RLVR_TRY(rlvr_model_alloc_optim_state(model));
        t.group = "optimizer/adam_m";
        t.base = rlvr_model_adam_m(model);
        RLVR_TRY(for_each_tensor(model, read_tensor, &t));
        t.group = "optimizer/adam_v";
        t.base = rlvr_model_adam_v(model);
        RLVR_TRY(for_each_tensor(model, read_tensor, &t));
    } else if (rlvr_model_adam_m(model) && rlvr_model_adam_v(model)) {
        /* saved before the first optimizer step: moments are zero */
        size_t n = rlvr_model_num_params(model);
        memset(rlvr_model_adam_m(model), 0, n * sizeof(float));
        memset(rlvr_model_adam_v(model), 0, n * sizeof(float));
    }
    return 0;
}

int rlvr_checkpoint_load_model(const rlvr_checkpoint *ck, rlvr_model **out) {
    *out = NULL;
    rlvr_model_config cfg;
    RLVR_TRY(rlvr_checkpoint_model_config(ck, &cfg));
    rlvr_model *m;
    int rc = rlvr_model_new(&m, &cfg);
    if (rc < 0) return rlvr_error_wrap(rc, "%s: stored model configuration", ck->path);
    rc = rlvr_checkpoint_read_model(ck, m);
    if (rc < 0) {
        rlvr_model_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

/* ---- tokenizer ---------------------------------------------------------------------------- */

/* An HF tokenizer is its tokenizer.json, verbatim: /tokenizer/json. */
static int put_hf_json(hid_t g, const rlvr_tokenizer *tok, int level) {
    const char *json;
    size_t len;
    RLVR_TRY(rlvr_tokenizer_hf_json(tok, &json, &len));
    if (memchr(json, '\0', len)) /* the text dataset is NUL-terminated; JSON never holds a raw NUL */
        return RLVR_FAIL(RLVR_EINVAL, "the tokenizer.json text holds a NUL byte");
    char *text = malloc(len + 1);
    if (!text) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    memcpy(text, json, len), text[len] = '\0';
    int rc = rlvr_h5_write_text(g, "json", text, level);
    free(text);
    return rc;
}

/* The chat format, when it is not the native one: attribute chat_family and
 * the Jinja text it came from (/tokenizer/chat_template, when there is one). */
static int put_chat(hid_t g, const rlvr_tokenizer *tok, int level) {
    size_t len = 0;
    const char *jinja = rlvr_tokenizer_chat_template(tok, &len);
    rlvr_chat_family f = rlvr_tokenizer_chat(tok)->family;
    if (f == RLVR_CHAT_NATIVE && !jinja) return 0;
    RLVR_TRY(rlvr_h5_attr_put_str(g, "chat_family", rlvr_chat_family_name(f)));
    if (!jinja) return 0;
    if (memchr(jinja, '\0', len)) return RLVR_FAIL(RLVR_EINVAL, "the chat template holds a NUL byte");
    return rlvr_h5_write_text(g, "chat_template", jinja, level);
}

/* A pretrained model's declared generation ids, when it declared any:
 * attribute bos_token_id and dataset eos_token_ids (n) int32. */
static int put_generation(hid_t g, const rlvr_tokenizer *tok, int level) {
    int n = 0;
    const int32_t *eos = rlvr_tokenizer_generation_eos(tok, &n);
    int32_t bos = rlvr_tokenizer_generation_bos(tok);
    if (bos >= 0) RLVR_TRY(rlvr_h5_attr_put_i64(g, "bos_token_id", bos));
    hsize_t dims[1] = {(hsize_t)n};
    return n > 0 ? rlvr_h5_write_array(g, "eos_token_ids", RLVR_DT_I32, 1, dims, eos, level) : 0;
}

int rlvr_checkpoint_put_tokenizer(rlvr_checkpoint_writer *w, const rlvr_tokenizer *tok) {
    if (rlvr_ckpt_path_exists(w->file, "tokenizer"))
        return RLVR_FAIL(RLVR_EINVAL, "checkpoint %s: the tokenizer is stored twice", w->part);
    hid_t g = H5Gcreate2(w->file, "tokenizer", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    RLVR_H5_CHECK(g, "%s: creating group /tokenizer", w->part);
    int32_t n = 0;
    const int32_t *merges = rlvr_tokenizer_merges(tok, &n);
    rlvr_tokenizer_kind kind = rlvr_tokenizer_kind_of(tok);
    bool bpe = kind == RLVR_TOKENIZER_BPE;
    int rc = rlvr_h5_attr_put_str(g, "kind", bpe ? "bpe" : kind == RLVR_TOKENIZER_HF ? "hf" : "byte");
    if (rc == 0 && bpe) rc = rlvr_h5_attr_put_str(g, "pieces", RLVR_BPE_PIECES);
    hsize_t dims[2] = {(hsize_t)n, 2};
    if (rc == 0 && bpe) rc = rlvr_h5_write_array(g, "merges", RLVR_DT_I32, 2, dims, merges, w->opt.compression);
    if (rc == 0 && kind == RLVR_TOKENIZER_HF) rc = put_hf_json(g, tok, w->opt.compression);
    if (rc == 0) rc = put_chat(g, tok, w->opt.compression);
    if (rc == 0) rc = put_generation(g, tok, w->opt.compression);
    H5Gclose(g);
    return rc < 0 ? rlvr_error_wrap(rc, "checkpoint %s: writing the tokenizer", w->part) : 0;
}

static int read_bpe(hid_t g, const char *path, rlvr_tokenizer **out) {
    char pieces[64], what[4200];
    snprintf(what, sizeof what, "%s: /tokenizer", path);
    RLVR_TRY(rlvr_h5_attr_get_str(g, "pieces", pieces, sizeof pieces, what));
    if (strcmp(pieces, RLVR_BPE_PIECES) != 0)
        return rlvr_error_set(RLVR_EFORMAT, "%s: tokenizer pieces \"%s\", this rlvr cuts text as \"%s\"", path,
                              pieces, RLVR_BPE_PIECES);
    int rank = 0;
    hsize_t dims[RLVR_IO_MAX_RANK];
    RLVR_TRY(rlvr_h5_dataset_shape(g, "merges", &rank, dims, what));
    if (rank != 2 || dims[1] != 2 || dims[0] < 1 || dims[0] > (1 << 24))
        return rlvr_error_set(RLVR_EFORMAT, "%s: /tokenizer/merges must be (n, 2) with 1 <= n <= %d", path, 1 << 24);
    int32_t *m = malloc((size_t)dims[0] * 2 * sizeof *m);
    if (!m) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    int rc = rlvr_h5_read_array(g, "merges", RLVR_DT_I32, 2, dims, m, what);
    if (rc == 0) rc = rlvr_tokenizer_new_bpe(out, m, (int32_t)dims[0]);
    free(m);
    return rc < 0 ? rlvr_error_wrap(rc, "%s", path) : 0;
}

static int read_chat(hid_t g, const char *path, rlvr_tokenizer *tok) {
    if (!rlvr_h5_attr_exists(g, "chat_family")) return 0;
    char family[32], what[4200], source[4200];
    snprintf(what, sizeof what, "%s: /tokenizer", path);
    RLVR_TRY(rlvr_h5_attr_get_str(g, "chat_family", family, sizeof family, what));
    char *jinja = NULL;
    if (rlvr_ckpt_path_exists(g, "chat_template")) RLVR_TRY(rlvr_h5_read_text(g, "chat_template", &jinja, what));
    snprintf(source, sizeof source, "%s: /tokenizer/chat_template", path);
    int rc = rlvr_tokenizer_set_chat(tok, family, jinja, jinja ? strlen(jinja) : 0, source);
    free(jinja);
    return rc;
}

static int read_generation(hid_t g, const char *path, rlvr_tokenizer *tok) {
    char what[4200];
    snprintf(what, sizeof what, "%s: /tokenizer", path);
    int64_t bos = -1;
    if (rlvr_h5_attr_exists(g, "bos_token_id")) RLVR_TRY(rlvr_h5_attr_get_i64(g, "bos_token_id", &bos, what));
    int32_t eos[RLVR_TOKENIZER_MAX_EOS];
    int n = 0;
    if (rlvr_ckpt_path_exists(g, "eos_token_ids")) {
        int rank = 0;
        hsize_t dims[RLVR_IO_MAX_RANK];
        RLVR_TRY(rlvr_h5_dataset_shape(g, "eos_token_ids", &rank, dims, what));
        if (rank != 1 || dims[0] < 1 || dims[0] > RLVR_TOKENIZER_MAX_EOS)
            return rlvr_error_set(RLVR_EFORMAT, "%s: /tokenizer/eos_token_ids must be (n) with 1 <= n <= %d", path,
                                  RLVR_TOKENIZER_MAX_EOS);
        RLVR_TRY(rlvr_h5_read_array(g, "eos_token_ids", RLVR_DT_I32, 1, dims, eos, what));
        n = (int)dims[0];
    }
    if (bos < -1 || bos > INT32_MAX)
        return rlvr_error_set(RLVR_EFORMAT, "%s: /tokenizer bos_token_id %lld is not a token id", path, (long long)bos);
    return rlvr_tokenizer_set_generation(tok, (int32_t)bos, eos, n, what);
}

static int read_hf(hid_t g, const char *path, rlvr_tokenizer **out) {
    char *json = NULL, what[4200], source[4200];
    snprintf(what, sizeof what, "%s: /tokenizer", path);
    RLVR_TRY(rlvr_h5_read_text(g, "json", &json, what));
    snprintf(source, sizeof source, "%s: /tokenizer/json", path);
    int rc = rlvr_tokenizer_new_hf_json(out, json, strlen(json), source);
    free(json);
    return rc;
}

int rlvr_checkpoint_read_tokenizer(const rlvr_checkpoint *ck, rlvr_tokenizer **out) {
    *out = NULL;
    if (!rlvr_ckpt_path_exists(ck->file, "tokenizer")) return rlvr_tokenizer_new_byte(out);
    hid_t g = H5Gopen2(ck->file, "tokenizer", H5P_DEFAULT);
    RLVR_H5_CHECK(g, "%s: opening /tokenizer", ck->path);
    char kind[32], what[4200];
    snprintf(what, sizeof what, "%s: /tokenizer", ck->path);
    int rc = rlvr_h5_attr_get_str(g, "kind", kind, sizeof kind, what);
    if (rc == 0) {
        if (strcmp(kind, "byte") == 0) rc = rlvr_tokenizer_new_byte(out);
        else if (strcmp(kind, "bpe") == 0) rc = read_bpe(g, ck->path, out);
        else if (strcmp(kind, "hf") == 0) rc = read_hf(g, ck->path, out);
        else rc = rlvr_error_set(RLVR_EFORMAT, "%s: tokenizer kind \"%s\" (this rlvr knows byte, bpe and hf)", ck->path,
                                 kind);
    }
    if (rc == 0) rc = read_chat(g, ck->path, *out);
    if (rc == 0) rc = read_generation(g, ck->path, *out);
    if (rc < 0) {
        rlvr_tokenizer_free(*out);
        *out = NULL;
    }
    H5Gclose(g);
    return rc;
}
