/* io/model_info.c — the facts of a model (io/model_info.h). */
#include "io/model_info.h"

#include "core/error.h"
#include "core/text.h"
#include "io/checkpoint.h"
#include "io/gguf.h"
#include "io/gguf_model.h"
#include "io/hf_model.h"
#include "io/model_io.h"
#include "io/model_tokenizer.h"
#include "io/safetensors.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- gathering ---- */

static void refuse(rlvr_model_info *f, const char *why) {
    if (f->n_refusals < RLVR_MODEL_INFO_REFUSALS) snprintf(f->refusals[f->n_refusals++], sizeof f->refusals[0], "%s", why);
}

/* The last error as a refusal, the error cleared. */
static void refuse_last(rlvr_model_info *f) {
    refuse(f, rlvr_error_last());
    rlvr_error_clear();
}

static void add_tensor(rlvr_model_info *f, const char *type, bool readable, uint64_t n_elements, uint64_t n_bytes) {
    rlvr_model_info_type *t = NULL;
    for (int i = 0; i < f->n_types && !t; i++)
        if (strcmp(f->types[i].name, type) == 0) t = &f->types[i];
    if (!t) {
        t = &f->types[f->n_types < RLVR_MODEL_INFO_TYPES ? f->n_types++ : RLVR_MODEL_INFO_TYPES - 1];
        if (!t->n_tensors) snprintf(t->name, sizeof t->name, "%s", type), t->readable = readable;
    }
    t->n_tensors++, t->n_elements += n_elements, t->n_bytes += n_bytes;
    f->n_tensors++, f->n_params += n_elements;
}

/* One refusal listing the weight types rlvr does not convert. */
static void refuse_unreadable_types(rlvr_model_info *f, const char *readable) {
    char names[256] = "";
    size_t at = 0;
    for (int i = 0; i < f->n_types; i++) {
        if (f->types[i].readable) continue;
        int k = snprintf(names + at, sizeof names - at, "%s%s (%llu tensors)", at ? ", " : "", f->types[i].name,
                         (unsigned long long)f->types[i].n_tensors);
        if (k > 0 && (size_t)k < sizeof names - at) at += (size_t)k;
    }
    if (!at) return;
    char why[640];
    snprintf(why, sizeof why, "weights of type %s, which rlvr does not convert (it reads %s)", names, readable);
    refuse(f, why);
}

static void copy_str(char *dst, size_t cap, const char *s, size_t n) {
    if (n >= cap) n = cap - 1;
    memcpy(dst, s, n);
    dst[n] = '\0';
}

/* A GGUF file: general.architecture, <arch>.context_length, the tensor
 * infos; then import's own checks. */
static int gguf_facts(const char *path, const char *family, const rlvr_port_options *opt, rlvr_model_info *f,
                      rlvr_tokenizer **tok, char *chat_error, size_t cap) {
    rlvr_gguf *g = NULL;
    RLVR_TRY(rlvr_gguf_open(&g, path));
    f->format = "gguf";
    const char *s = NULL;
    size_t n = 0;
    if (rlvr_gguf_get_string(g, "general.architecture", &s, &n) == 0) {
        copy_str(f->arch, sizeof f->arch, s, n);
        uint64_t ctx = 0;
        snprintf(f->context_key, sizeof f->context_key, "%s.context_length", f->arch);
        if (rlvr_gguf_get_u64(g, f->context_key, &ctx) == 0 && ctx <= INT32_MAX) f->context = (int64_t)ctx;
    }
    rlvr_error_clear();
    for (size_t i = 0; i < rlvr_gguf_tensor_count(g); i++) {
        const rlvr_gguf_tensor *t = rlvr_gguf_tensor_at(g, i);
        add_tensor(f, rlvr_gguf_type_name(t->type), rlvr_gguf_type_dequantises(t->type), t->n_elements, t->n_bytes);
    }
    const char *arch = NULL;
    if (rlvr_gguf_model_config(path, opt, &f->config, &arch) == 0) f->has_config = true;
    else refuse_last(f);
    refuse_unreadable_types(f, "F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q4_K, Q5_K, Q6_K");
    if (rlvr_gguf_chat_tokenizer_facts(tok, g, path, family, chat_error, cap) < 0) refuse_last(f);
    rlvr_gguf_free(g);
    return 0;
}

static void safetensors_file(rlvr_model_info *f, const char *path) {
    rlvr_safetensors *st = NULL;
    if (rlvr_safetensors_open(&st, path) < 0) {
        refuse_last(f);
        return;
    }
    for (size_t i = 0; i < rlvr_safetensors_tensor_count(st); i++) {
        const rlvr_st_tensor *t = rlvr_safetensors_tensor_at(st, i);
        add_tensor(f, rlvr_st_dtype_name(t->dtype), rlvr_st_dtype_converts(t->dtype), t->n_elements, t->end - t->begin);
    }
    rlvr_safetensors_free(st);
}

/* A model directory: config.json's model_type and max_position_embeddings,
 * the safetensors headers (every shard the index names); then import's own
 * checks. */
static int hf_facts(const char *dir, const char *family, const rlvr_port_options *opt, rlvr_model_info *f,
                    rlvr_tokenizer **tok, char *chat_error, size_t cap) {
    char path[4200];
    f->format = "hf";
    snprintf(f->context_key, sizeof f->context_key, "max_position_embeddings");
    snprintf(path, sizeof path, "%s/config.json", dir);
    json_t *cfg = json_load_file(path, 0, NULL);
    if (cfg) {
        json_t *type = json_object_get(cfg, "model_type"), *archs = json_object_get(cfg, "architectures");
        const char *a = json_is_string(type) ? json_string_value(type) : json_string_value(json_array_get(archs, 0));
        if (a) snprintf(f->arch, sizeof f->arch, "%s", a);
        json_t *ctx = json_object_get(cfg, "max_position_embeddings");
        if (json_is_integer(ctx) && json_integer_value(ctx) > 0) f->context = json_integer_value(ctx);
        json_decref(cfg);
    }
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
    if (access(path, F_OK) == 0) {
        rlvr_st_index *ix = NULL;
        if (rlvr_st_index_open(&ix, path) < 0) refuse_last(f);
        for (size_t i = 0; ix && i < rlvr_st_index_shard_count(ix); i++) safetensors_file(f, rlvr_st_index_shard(ix, i));
        rlvr_st_index_free(ix);
    } else {
        snprintf(path, sizeof path, "%s/model.safetensors", dir);
        safetensors_file(f, path);
    }
    const char *arch = NULL;
    if (rlvr_hf_model_config(dir, opt, &f->config, &arch) == 0) f->has_config = true;
    else refuse_last(f);
    refuse_unreadable_types(f, "F32, F16, BF16, F64");
    if (rlvr_hf_dir_tokenizer_facts(tok, dir, family, chat_error, cap) < 0) refuse_last(f);
    return 0;
}

static int ckpt_tensor(void *user, const rlvr_checkpoint_tensor *t) {
    static const char *const names[] = {[RLVR_DT_F32] = "F32", [RLVR_DT_F64] = "F64"};
    const char *name = (size_t)t->dtype < sizeof names / sizeof names[0] && names[t->dtype] ? names[t->dtype]
                                                                                             : rlvr_dtype_name(t->dtype);
    add_tensor(user, name, t->dtype == RLVR_DT_F32, t->n_elements, t->n_bytes);
    return 0;
}

/* A checkpoint: its configuration, its tensors' dataset headers, its
 * tokenizer. */
static int ckpt_facts(const char *path, rlvr_model_info *f, rlvr_tokenizer **tok) {
    rlvr_checkpoint *ck = NULL;
    RLVR_TRY(rlvr_checkpoint_open(&ck, path));
    f->format = "checkpoint";
    snprintf(f->arch, sizeof f->arch, "rlvr checkpoint");
    snprintf(f->context_key, sizeof f->context_key, "max_seq");
    if (rlvr_checkpoint_model_config(ck, &f->config) == 0) {
        f->has_config = true;
        f->context = f->max_seq = f->config.max_seq;
    } else {
        refuse_last(f);
    }
    if (f->has_config && rlvr_checkpoint_model_tensors(ck, ckpt_tensor, f) < 0) refuse_last(f);
    if (rlvr_checkpoint_read_tokenizer(ck, tok) < 0) refuse_last(f);
    rlvr_checkpoint_close(ck);
    return 0;
}

static void token_text(const rlvr_tokenizer *tok, int32_t id, char *buf, size_t cap) {
    size_t len = 0;
    if (rlvr_tokenizer_decode(tok, &id, 1, true, buf, cap, &len) < 0) {
        rlvr_error_clear();
        snprintf(buf, cap, "id %d", (int)id);
    }
}

/* Tokenizer kind, vocabulary, chat family, BOS and stop ids. */
static void tokenizer_facts(rlvr_model_info *f, const rlvr_tokenizer *tok, bool has_chat) {
    static const char *const kinds[] = {[RLVR_TOKENIZER_BYTE] = "byte", [RLVR_TOKENIZER_BPE] = "bpe",
                                        [RLVR_TOKENIZER_HF] = "hf"};
    f->has_tokenizer = true;
    f->tokenizer_kind = kinds[rlvr_tokenizer_kind_of(tok)];
    rlvr_tokenizer_describe(tok, f->tokenizer_desc, sizeof f->tokenizer_desc);
    f->vocab_size = rlvr_tokenizer_vocab_size(tok);
    const rlvr_chat *c = rlvr_tokenizer_chat(tok);
    int32_t ids[RLVR_TEMPLATE_MAX_STOPS];
    int n = 0;
    if (has_chat) {
        f->chat_family = rlvr_chat_family_name(c->family);
        n = rlvr_template_stop_tokens(tok, ids);
    } else { /* no chat format: only what the files declare */
        const int32_t *eos = rlvr_tokenizer_generation_eos(tok, &n);
        memcpy(ids, eos, (size_t)n * sizeof *ids);
    }
    int32_t bos = rlvr_tokenizer_generation_bos(tok);
    f->bos = bos >= 0 ? bos : has_chat ? c->begin : -1;
    if (f->bos >= 0) token_text(tok, f->bos, f->bos_text, sizeof f->bos_text);
    for (int i = 0; i < n; i++) {
        if (ids[i] < 0) continue;
        f->stops[f->n_stops] = ids[i];
        token_text(tok, ids[i], f->stop_texts[f->n_stops], sizeof f->stop_texts[0]);
        f->n_stops++;
    }
}

int rlvr_model_info_read(const char *path, const char *family, const rlvr_port_options *opt, rlvr_model_info *out) {
    rlvr_model_info *f = calloc(1, sizeof *f);
    if (!f) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    f->context = -1, f->max_seq = -1, f->bos = -1;
    snprintf(f->arch, sizeof f->arch, "(none)");
    rlvr_tokenizer *tok = NULL;
    char chat_error[640] = "";
    bool source = rlvr_model_io_is_source(path);
    int rc = 0;
    if (!source) rc = ckpt_facts(path, f, &tok);
    else if (access(path, F_OK) != 0) rc = RLVR_FAIL(RLVR_ENOTFOUND, "%s does not exist", path);
    else if (strlen(path) >= 5 && strcmp(path + strlen(path) - 5, ".gguf") == 0)
        rc = gguf_facts(path, family, opt, f, &tok, chat_error, sizeof chat_error);
    else rc = hf_facts(path, family, opt, f, &tok, chat_error, sizeof chat_error);
    if (rc == 0 && source) {
        f->pretrained = true;
        f->max_seq_cap = opt && opt->max_seq > 0 ? opt->max_seq : RLVR_IMPORT_MAX_SEQ_DEFAULT;
        if (f->has_config) f->max_seq = f->config.max_seq;
        else if (f->context > 0) f->max_seq = rlvr_port_max_seq((int)f->context, opt);
    }
    if (rc == 0 && chat_error[0]) refuse(f, chat_error);
    if (rc == 0 && tok) {
        tokenizer_facts(f, tok, chat_error[0] == '\0');
        if (!source) f->pretrained = rlvr_tokenizer_kind_of(tok) == RLVR_TOKENIZER_HF;
        if (f->has_config && rlvr_tokenizer_check_model(tok, &f->config) < 0) refuse_last(f);
    }
    rlvr_tokenizer_free(tok);
    if (rc == 0) *out = *f;
    free(f);
    return rc;
}

/* ---- printing ---- */

void rlvr_model_info_count_text(uint64_t n, char *buf, size_t cap) {
    if (n >= 1000000000ull) snprintf(buf, cap, "%.1f B", (double)n / 1e9);
    else if (n >= 1000000ull) snprintf(buf, cap, "%.1f M", (double)n / 1e6);
    else if (n >= 1000ull) snprintf(buf, cap, "%.1f K", (double)n / 1e3);
    else snprintf(buf, cap, "%llu", (unsigned long long)n);
}

/* The [model] section a run uses, as JSON (keys in the section's order). */
static json_t *model_section(const rlvr_model_info *f) {
    const rlvr_model_config *c = &f->config;
    const rlvr_rope_scaling *r = &c->rope_scaling;
    bool llama3 = r->kind == RLVR_ROPE_SCALING_LLAMA3;
    json_t *m = json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:f, s:f, s:b, s:b, s:s}", "vocab", c->vocab,
                          "d_model", c->d_model, "n_layers", c->n_layers, "n_heads", c->n_heads, "n_kv_heads",
                          c->n_kv_heads, "d_ff", c->d_ff, "max_seq", c->max_seq, "rope_theta", (double)c->rope_theta,
                          "norm_eps", (double)c->norm_eps, "tie_embeddings", c->tie_embeddings, "qkv_bias",
                          c->qkv_bias, "rope_scaling", llama3 ? "llama3" : "none");
    if (m && llama3) {
        json_object_set_new(m, "rope_scaling_factor", json_real((double)r->factor));
        json_object_set_new(m, "rope_low_freq_factor", json_real((double)r->low_freq_factor));
        json_object_set_new(m, "rope_high_freq_factor", json_real((double)r->high_freq_factor));
        json_object_set_new(m, "rope_original_max_seq", json_integer(r->original_max_seq));
    }
    if (m && !f->pretrained) { /* a model rlvr created: its initialisation is part of its configuration */
        json_object_set_new(m, "init_seed", json_integer((json_int_t)c->init_seed));
        json_object_set_new(m, "init_std", json_real((double)c->init_std));
    }
    return m;
}

static json_t *id_text(int32_t id, const char *text) { return json_pack("{s:i, s:s}", "id", (int)id, "text", text); }

int rlvr_model_info_json(const rlvr_model_info *f, const char *path, char **out) {
    char count[32];
    rlvr_model_info_count_text(f->n_params, count, sizeof count);
    json_t *types = json_array(), *stops = json_array(), *refusals = json_array();
    for (int i = 0; types && i < f->n_types; i++) {
        const rlvr_model_info_type *t = &f->types[i];
        json_array_append_new(types, json_pack("{s:s, s:I, s:I, s:I, s:b}", "type", t->name, "tensors",
                                               (json_int_t)t->n_tensors, "parameters", (json_int_t)t->n_elements,
                                               "bytes", (json_int_t)t->n_bytes, "readable", t->readable));
    }
    for (int i = 0; stops && i < f->n_stops; i++) json_array_append_new(stops, id_text(f->stops[i], f->stop_texts[i]));
    for (int i = 0; refusals && i < f->n_refusals; i++) json_array_append_new(refusals, json_string(f->refusals[i]));
    json_t *tok = f->has_tokenizer ? json_pack("{s:s, s:s, s:i}", "kind", f->tokenizer_kind, "description",
                                               f->tokenizer_desc, "vocab_size", (int)f->vocab_size)
                                   : json_null();
    json_t *o = json_pack("{s:s, s:s, s:s, s:I, s:s, s:I, s:o}", "source", path, "format", f->format,
                          "architecture", f->arch, "parameters", (json_int_t)f->n_params, "parameters_text", count,
                          "tensors", (json_int_t)f->n_tensors, "weight_types", types);
    if (o) {
        json_object_set_new(o, "context_length", f->context >= 0 ? json_integer(f->context) : json_null());
        json_object_set_new(o, "context_key", json_string(f->context_key));
        json_object_set_new(o, "max_seq", f->max_seq >= 0 ? json_integer(f->max_seq) : json_null());
        json_object_set_new(o, "max_seq_cap", f->max_seq_cap > 0 ? json_integer(f->max_seq_cap) : json_null());
        json_object_set_new(o, "pretrained", json_boolean(f->pretrained));
        json_object_set_new(o, "tokenizer", tok);
        json_object_set_new(o, "chat_family", f->chat_family ? json_string(f->chat_family) : json_null());
        json_object_set_new(o, "bos", f->bos >= 0 ? id_text(f->bos, f->bos_text) : json_null());
        json_object_set_new(o, "stops", stops);
        json_object_set_new(o, "refusals", refusals);
        json_object_set_new(o, "model", f->has_config ? model_section(f) : json_null());
    } else {
        json_decref(tok), json_decref(stops), json_decref(refusals);
    }
    char *s = o ? json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9)) : NULL;
    json_decref(o);
    if (!s) return RLVR_FAIL(RLVR_ENOMEM, "out of memory writing the model's facts as JSON");
    *out = s;
    return 0;
}

static void mib(uint64_t bytes, char *buf, size_t cap) {
    if (bytes >= 1024ull * 1024) snprintf(buf, cap, "%.1f MiB", (double)bytes / (1024.0 * 1024.0));
    else snprintf(buf, cap, "%.1f KiB", (double)bytes / 1024.0);
}

static void text_weights(rlvr_text *t, const rlvr_model_info *f) {
    char count[32], size[32];
    rlvr_model_info_count_text(f->n_params, count, sizeof count);
    rlvr_text_printf(t, "  parameters    %llu (%s) in %llu tensors\n", (unsigned long long)f->n_params, count,
                     (unsigned long long)f->n_tensors);
    for (int i = 0; i < f->n_types; i++) {
        const rlvr_model_info_type *w = &f->types[i];
        rlvr_model_info_count_text(w->n_elements, count, sizeof count);
        mib(w->n_bytes, size, sizeof size);
        rlvr_text_printf(t, "  %-13s %-5s %llu tensor%s, %s parameters, %llu bytes (%s)%s\n", i ? "" : "weights",
                         w->name, (unsigned long long)w->n_tensors, w->n_tensors == 1 ? "" : "s", count,
                         (unsigned long long)w->n_bytes, size, w->readable ? "" : ", not read by rlvr");
    }
}

static void text_context(rlvr_text *t, const rlvr_model_info *f) {
    if (f->context >= 0) rlvr_text_printf(t, "  context       %lld (%s)", (long long)f->context, f->context_key);
    else rlvr_text_printf(t, "  context       unknown (no %s)", f->context_key[0] ? f->context_key : "context key");
    if (f->max_seq < 0) rlvr_text_printf(t, "\n");
    else if (!f->max_seq_cap) rlvr_text_printf(t, "; a run uses max_seq %d\n", f->max_seq);
    else if (f->max_seq < f->context)
        rlvr_text_printf(t, "; rlvr imports it with max_seq %d, the import's cap (`--max-seq %lld` keeps it all: "
                            "activations grow with max_seq)\n",
                         f->max_seq, (long long)f->context);
    else rlvr_text_printf(t, "; rlvr imports it with max_seq %d, all of it\n", f->max_seq);
}

static void text_tokenizer(rlvr_text *t, const rlvr_model_info *f) {
    if (!f->has_tokenizer) {
        rlvr_text_printf(t, "  tokenizer     none read (below)\n");
        return;
    }
    rlvr_text_printf(t, "  tokenizer     %s: %s, vocabulary %d\n", f->tokenizer_kind, f->tokenizer_desc,
                     (int)f->vocab_size);
    if (f->chat_family) rlvr_text_printf(t, "  chat family   %s\n", f->chat_family);
    else rlvr_text_printf(t, "  chat family   none recognised: name the family the model was tuned with, "
                             "`--template chatml|llama3|mistral`\n");
    if (f->bos >= 0) rlvr_text_printf(t, "  bos           %d %s\n", (int)f->bos, f->bos_text);
    else rlvr_text_printf(t, "  bos           none\n");
    rlvr_text_printf(t, "  stops         ");
    for (int i = 0; i < f->n_stops; i++) rlvr_text_printf(t, "%s%d %s", i ? ", " : "", (int)f->stops[i], f->stop_texts[i]);
    rlvr_text_printf(t, "%s\n", f->n_stops ? (f->chat_family ? "" : " (declared; no chat format)") : "none");
}

/* The [model] section, from the same JSON keys --json prints. */
static void text_section(rlvr_text *t, const rlvr_model_info *f) {
    json_t *m = model_section(f);
    if (!m) {
        t->failed = true;
        return;
    }
    rlvr_text_printf(t, "# the [model] section a run uses, head_dim %d%s\n[model]\n", f->config.d_model / f->config.n_heads,
                     f->pretrained ? "; [pretrained] checkpoint = CKPT takes it from the checkpoint" : "");
    const char *key;
    json_t *v;
    json_object_foreach(m, key, v) {
        if (json_is_string(v)) rlvr_text_printf(t, "%s = %s\n", key, json_string_value(v));
        else if (json_is_boolean(v)) rlvr_text_printf(t, "%s = %s\n", key, json_is_true(v) ? "true" : "false");
        else if (json_is_integer(v)) rlvr_text_printf(t, "%s = %lld\n", key, (long long)json_integer_value(v));
        else rlvr_text_printf(t, "%s = %.9g\n", key, json_real_value(v));
    }
    json_decref(m);
}

int rlvr_model_info_text(const rlvr_model_info *f, const char *path, char **out) {
    rlvr_text t = {0};
    bool ckpt = strcmp(f->format, "checkpoint") == 0;
    rlvr_text_printf(&t, "%s: %s\n  architecture  %s\n", path,
                     ckpt ? "an rlvr checkpoint" : strcmp(f->format, "gguf") == 0 ? "a GGUF file"
                                                                                  : "a Hugging Face model directory",
                     f->arch);
    text_weights(&t, f);
    text_context(&t, f);
    text_tokenizer(&t, f);
    if (f->n_refusals) {
        rlvr_text_printf(&t, "  refused       %s:\n", ckpt ? "a run would refuse it" : "`rlvr model import` would refuse it");
        for (int i = 0; i < f->n_refusals; i++) rlvr_text_printf(&t, "                - %s\n", f->refusals[i]);
    } else if (ckpt && f->pretrained) {
        rlvr_text_printf(&t, "  use           [pretrained] checkpoint = %s in a run, --checkpoint %s on a verb\n", path,
                         path);
    } else if (ckpt) {
        rlvr_text_printf(&t, "  use           --checkpoint %s on a verb; [train] init = %s in a run whose [model] is "
                             "the section below\n",
                         path, path);
    } else {
        rlvr_text_printf(&t, "  import        nothing refused: `rlvr model import %s --out CKPT.h5`, then "
                             "[pretrained] checkpoint = CKPT.h5 in a run, --checkpoint CKPT.h5 on a verb\n",
                         path);
    }
    if (f->has_config) text_section(&t, f);
    if (t.failed || !t.data) {
        rlvr_text_free(&t);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory writing the model's facts");
    }
    *out = t.data;
    return 0;
}
