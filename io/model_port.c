/* io/model_port.c — the tensor walk, the RoPE row permutation and the
 * checkpoint file shared by the model importers and exporters. */
#include "io/model_port.h"
#include "core/error.h"
#include "io/checkpoint.h"
#include "io/h5util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Model tensors by their index in rlvr_param_views. */
enum { T_EMBED = 0, T_WQ = 2, T_WK = 3, T_FINAL_NORM = 10, T_LM_HEAD = 11, T_BQ = 12, T_BK = 13 };

/* Pointer of model tensor i in the views (their order is the header's). */
static float *view_of(const rlvr_param_views *v, int i) {
    float *const all[RLVR_PARAM_TENSORS] = {v->embed,  v->attn_norm, v->wq,         v->wk,      v->wv,
                                            v->wo,     v->mlp_norm,  v->w_gate,     v->w_up,    v->w_down,
                                            v->final_norm, v->lm_head, v->bq,       v->bk,      v->bv};
    return all[i];
}

/* Per-layer shape of model tensor i (rows, cols; cols 0 for a vector) and
 * whether it is stacked over layers. */
static void layer_shape(const rlvr_model_config *c, int i, size_t *rows, size_t *cols, bool *per_layer) {
    size_t V = (size_t)c->vocab, C = (size_t)c->d_model, F = (size_t)c->d_ff;
    size_t K = C / (size_t)c->n_heads * (size_t)c->n_kv_heads;
    static const char shapes[RLVR_PARAM_TENSORS][3] = {"VC", "C", "CC", "KC", "KC", "CC", "C", "FC",
                                                       "FC", "CF", "C", "VC", "C", "K", "K"};
    size_t d[2] = {0, 0};
    for (int k = 0; k < 2 && shapes[i][k]; k++)
        d[k] = shapes[i][k] == 'V' ? V : shapes[i][k] == 'C' ? C : shapes[i][k] == 'F' ? F : K;
    *rows = d[0], *cols = d[1];
    *per_layer = !(i == T_EMBED || i == T_FINAL_NORM || i == T_LM_HEAD);
}

/* Whether the model has model tensor i in a file. */
static bool has_tensor(const rlvr_model_config *c, int i) {
    if (i == T_LM_HEAD) return !c->tie_embeddings;
    if (i >= T_BQ) return c->qkv_bias;
    return true;
}

int rlvr_port_tensor_count(const rlvr_model_config *cfg) {
    int n = 0;
    for (int i = 0; i < RLVR_PARAM_TENSORS; i++) {
        size_t r, c;
        bool per_layer;
        layer_shape(cfg, i, &r, &c, &per_layer);
        if (has_tensor(cfg, i)) n += per_layer ? cfg->n_layers : 1;
    }
    return n;
}

bool rlvr_port_is_rope_rows(int tensor) { return tensor == T_WQ || tensor == T_WK || tensor == T_BQ || tensor == T_BK; }

/* Calls fn for model tensor i of `layer` (-1: a global tensor). */
static int visit(const rlvr_model *m, const char *const names[RLVR_PARAM_TENSORS], int i, int layer,
                 rlvr_port_tensor_fn fn, void *user, const rlvr_port_options *opt, int *done) {
    const rlvr_model_config *c = rlvr_model_config_of(m);
    rlvr_port_tensor t = {.tensor = i, .layer = layer};
    bool per_layer;
    layer_shape(c, i, &t.rows, &t.cols, &per_layer);
    size_t n = t.rows * (t.cols ? t.cols : 1);
    t.data = view_of(rlvr_model_param_views(m), i) + (per_layer ? (size_t)layer * n : 0);
    char name[256];
    snprintf(name, sizeof name, names[i], layer);
    t.name = name;
    RLVR_TRY(fn(user, &t));
    ++*done;
    if (opt && opt->progress) opt->progress(opt->progress_user, name, *done, rlvr_port_tensor_count(c));
    return 0;
}

int rlvr_port_for_each(const rlvr_model *m, const char *const names[RLVR_PARAM_TENSORS],
                       rlvr_port_tensor_fn fn, void *user, const rlvr_port_options *opt) {
    const rlvr_model_config *c = rlvr_model_config_of(m);
    int done = 0; /* the embedding, layer by layer as files list them, the final norm and head */
    RLVR_TRY(visit(m, names, T_EMBED, -1, fn, user, opt, &done));
    for (int l = 0; l < c->n_layers; l++)
        for (int i = 1; i < RLVR_PARAM_TENSORS; i++) {
            size_t r, cc;
            bool per_layer;
            layer_shape(c, i, &r, &cc, &per_layer);
            if (per_layer && has_tensor(c, i)) RLVR_TRY(visit(m, names, i, l, fn, user, opt, &done));
        }
    RLVR_TRY(visit(m, names, T_FINAL_NORM, -1, fn, user, opt, &done));
    if (has_tensor(c, T_LM_HEAD)) RLVR_TRY(visit(m, names, T_LM_HEAD, -1, fn, user, opt, &done));
    return 0;
}

int rlvr_port_permute_rope(float *w, size_t rows, size_t cols, int head_dim, bool to_interleaved) {
    size_t width = cols ? cols : 1, hd = (size_t)head_dim, half = hd / 2;
    if (hd == 0 || hd % 2 || rows % hd)
        return RLVR_FAIL(RLVR_EINVAL, "RoPE permutation: %zu rows are not whole heads of even size %d", rows,
                         head_dim);
    float *head = malloc(hd * width * sizeof *head);
    if (!head) return RLVR_FAIL(RLVR_ENOMEM, "out of memory permuting RoPE rows");
    for (size_t h = 0; h < rows / hd; h++) {
        float *base = w + h * hd * width;
        memcpy(head, base, hd * width * sizeof *head);
        for (size_t i = 0; i < half; i++)
            for (size_t k = 0; k < 2; k++) {
                size_t inter = 2 * i + k, split = i + k * half;
                size_t dst = to_interleaved ? inter : split, src = to_interleaved ? split : inter;
                memcpy(base + dst * width, head + src * width, width * sizeof *head);
            }
    }
    free(head);
    return 0;
}

int rlvr_port_max_seq(int trained, const rlvr_port_options *opt) {
    int cap = opt && opt->max_seq > 0 ? opt->max_seq : RLVR_IMPORT_MAX_SEQ_DEFAULT;
    return trained < cap ? trained : cap;
}

/* [model]'s defaults of the two keys a pretrained model has no value for
 * (docs/CONFIG.md), so that a run's [model] section equals the imported
 * configuration with only the architecture keys set. */
#define DEFAULT_INIT_SEED 1234
#define DEFAULT_INIT_STD 0.02f

void rlvr_port_config_init(rlvr_model_config *c) {
    *c = (rlvr_model_config){.init_seed = DEFAULT_INIT_SEED, .init_std = DEFAULT_INIT_STD};
}

int rlvr_port_new_model(rlvr_model **out, const rlvr_model_config *cfg, int (*fill)(rlvr_model *m, void *user),
                        void *user) {
    rlvr_model *m = NULL;
    int rc = rlvr_model_new(&m, cfg);
    if (rc == 0) rc = fill(m, user);
    if (rc < 0) {
        rlvr_model_free(m);
        return rc;
    }
    (void)rlvr_model_params(m); /* the weights changed behind the views: count it */
    *out = m;
    return 0;
}

/* The checkpoint writer names its files by step inside a directory and keeps
 * a `latest` tracker there; an imported model is one file, so it is written
 * into a private directory and only the finished file is moved out. */
static int write_in(const char *tmpdir, rlvr_model *m, const rlvr_tokenizer *tok, char *written, size_t cap) {
    rlvr_checkpoint_options o = RLVR_CHECKPOINT_OPTIONS_INIT;
    o.keep_last = 0;
    rlvr_checkpoint_writer *w = NULL;
    RLVR_TRY(rlvr_checkpoint_begin(&w, tmpdir, &o));
    int rc = rlvr_checkpoint_put_model(w, m);
    if (rc == 0 && tok) rc = rlvr_checkpoint_put_tokenizer(w, tok);
    if (rc < 0) {
        rlvr_checkpoint_abort(w);
        return rc;
    }
    return rlvr_checkpoint_commit(w, written, cap);
}

static void remove_tmpdir(const char *tmpdir, const char *written) {
    char latest[4200];
    snprintf(latest, sizeof latest, "%s/latest", tmpdir);
    if (written[0]) unlink(written);
    unlink(latest);
    rmdir(tmpdir);
}

int rlvr_port_save_checkpoint(const char *path, rlvr_model *m, const rlvr_tokenizer *tok) {
    char tmpdir[4096], written[4200] = "";
    if ((size_t)snprintf(tmpdir, sizeof tmpdir, "%s.tmp", path) >= sizeof tmpdir)
        return RLVR_FAIL(RLVR_EINVAL, "checkpoint path too long: %s", path);
    if (access(path, F_OK) == 0)
        return RLVR_FAIL(RLVR_ESTATE, "%s exists: remove it or write the checkpoint elsewhere", path);
    if (access(tmpdir, F_OK) == 0)
        return RLVR_FAIL(RLVR_ESTATE, "%s exists (another import writing %s, or one that crashed): remove it", tmpdir,
                         path);
    int rc = write_in(tmpdir, m, tok, written, sizeof written);
    if (rc == 0) rc = rlvr_port_publish(written, path);
    if (rc == 0) written[0] = 0;
    remove_tmpdir(tmpdir, written);
    return rc < 0 ? rlvr_error_wrap(rc, "writing checkpoint %s", path) : 0;
}

/* ---- export ----------------------------------------------------------------------------------- */

const char *rlvr_export_dtype_name(rlvr_export_dtype d) {
    return d == RLVR_EXPORT_F32 ? "F32" : d == RLVR_EXPORT_F16 ? "F16" : "BF16";
}

int rlvr_port_export_data(const rlvr_port_tensor *t, bool half_split, int head_dim, const float **data,
                          float **owned) {
    *owned = NULL;
    *data = t->data;
    if (!half_split || !rlvr_port_is_rope_rows(t->tensor)) return 0;
    size_t n = t->rows * (t->cols ? t->cols : 1);
    float *copy = malloc(n * sizeof *copy);
    if (!copy) return RLVR_FAIL(RLVR_ENOMEM, "out of memory exporting %s", t->name);
    memcpy(copy, t->data, n * sizeof *copy);
    int rc = rlvr_port_permute_rope(copy, t->rows, t->cols, head_dim, false);
    if (rc < 0) {
        free(copy);
        return rc;
    }
    *data = *owned = copy;
    return 0;
}

int rlvr_port_publish(const char *tmp, const char *path) { return rlvr_publish(tmp, path, true); }

void rlvr_port_llama3_divisors(const rlvr_model_config *c, float *out) {
    const rlvr_rope_scaling *r = &c->rope_scaling;
    int hd = c->d_model / c->n_heads;
    double lo_wave = r->original_max_seq / (double)r->low_freq_factor;
    double hi_wave = r->original_max_seq / (double)r->high_freq_factor;
    for (int i = 0; i < hd / 2; i++) {
        float freq = 1.0f / powf(c->rope_theta, (float)(2 * i) / (float)hd);
        double wave = 2 * M_PI / freq;
        if (wave < hi_wave) out[i] = 1.0f;
        else if (wave > lo_wave) out[i] = r->factor;
        else {
            double s = (r->original_max_seq / wave - r->low_freq_factor) / (r->high_freq_factor - r->low_freq_factor);
            out[i] = (float)(1.0 / ((1 - s) / r->factor + s));
        }
    }
}
