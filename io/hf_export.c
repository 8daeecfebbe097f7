/* io/hf_export.c — a model as a Hugging Face Llama or Qwen2 directory. */
#include "io/hf_export.h"
#include "core/error.h"
#include "io/hf_model.h"
#include "io/safetensors_write.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The shortest decimal that reads back as the same float32, as a JSON
 * number: 1e-05 rather than 9.99999974737875e-06. */
static json_t *json_float(float f) {
    char buf[32];
    for (int p = 1; p <= 9; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, (double)f);
        if (strtof(buf, NULL) == f) break;
    }
    return json_real(strtod(buf, NULL));
}

static json_t *rope_scaling_json(const rlvr_rope_scaling *r) {
    if (r->kind != RLVR_ROPE_SCALING_LLAMA3) return json_null();
    return json_pack("{s:s, s:o, s:o, s:o, s:i}", "rope_type", "llama3", "factor", json_float(r->factor),
                     "low_freq_factor", json_float(r->low_freq_factor), "high_freq_factor",
                     json_float(r->high_freq_factor), "original_max_position_embeddings", r->original_max_seq);
}

static const char *torch_dtype(rlvr_export_dtype d) {
    return d == RLVR_EXPORT_F32 ? "float32" : d == RLVR_EXPORT_F16 ? "float16" : "bfloat16";
}

static json_t *config_json(const rlvr_model_config *c, rlvr_export_dtype dtype) {
    bool qwen = c->qkv_bias;
    json_t *j = json_pack("{s:[s], s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:o, s:o, s:b, s:s, s:o, s:s, s:f, s:b}",
                          "architectures", qwen ? "Qwen2ForCausalLM" : "LlamaForCausalLM", "model_type",
                          qwen ? "qwen2" : "llama", "hidden_size", c->d_model, "intermediate_size", c->d_ff,
                          "num_hidden_layers", c->n_layers, "num_attention_heads", c->n_heads,
                          "num_key_value_heads", c->n_kv_heads, "vocab_size", c->vocab, "max_position_embeddings",
                          c->max_seq, "rms_norm_eps", json_float(c->norm_eps), "rope_theta",
                          json_float(c->rope_theta), "tie_word_embeddings", c->tie_embeddings, "hidden_act", "silu",
                          "rope_scaling", rope_scaling_json(&c->rope_scaling), "torch_dtype", torch_dtype(dtype),
                          "attention_dropout", 0.0, "use_cache", 1);
    if (!j) return NULL;
    int bad = qwen ? json_object_set_new(j, "use_sliding_window", json_false())
                   : json_object_set_new(j, "attention_bias", json_false()) ||
                         json_object_set_new(j, "mlp_bias", json_false());
    if (bad) {
        json_decref(j);
        return NULL;
    }
    return j;
}

/* One file of the temporary directory (the directory's rename is what
 * makes the export atomic; each file is fsynced before it). */
static int write_bytes(const char *dir, const char *name, const char *data, size_t len) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) return rlvr_error_errno_at(__FILE__, __LINE__, "creating %s", path);
    int bad = fwrite(data, 1, len, f) != len || fflush(f) != 0 || fsync(fileno(f)) != 0;
    bad |= fclose(f) != 0;
    return bad ? rlvr_error_errno_at(__FILE__, __LINE__, "writing %s", path) : 0;
}

static int write_json(const char *dir, const char *name, json_t *j) {
    char *text = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    size_t n = text ? strlen(text) : 0;
    char *line = text ? realloc(text, n + 2) : NULL;
    if (!line) {
        free(text);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory building %s/%s", dir, name);
    }
    line[n] = '\n';
    int rc = write_bytes(dir, name, line, n + 1);
    free(line);
    return rc;
}

typedef struct {
    rlvr_st_writer *w;
    rlvr_st_dtype dtype;
    int head_dim;
} st_export;

static int declare(void *user, const rlvr_port_tensor *t) {
    st_export *e = user;
    uint64_t shape[2] = {t->rows, t->cols};
    return rlvr_st_writer_add(e->w, t->name, e->dtype, t->cols ? 2 : 1, shape);
}

static int put(void *user, const rlvr_port_tensor *t) {
    st_export *e = user;
    const float *data;
    float *owned;
    RLVR_TRY(rlvr_port_export_data(t, true, e->head_dim, &data, &owned));
    int rc = rlvr_st_writer_put(e->w, data);
    free(owned);
    return rc;
}

static int write_weights(const rlvr_model *m, const char *dir, const rlvr_export_options *opt) {
    const rlvr_model_config *c = rlvr_model_config_of(m);
    st_export e = {.head_dim = c->d_model / c->n_heads};
    e.dtype = opt->dtype == RLVR_EXPORT_F32 ? RLVR_ST_F32 : opt->dtype == RLVR_EXPORT_F16 ? RLVR_ST_F16 : RLVR_ST_BF16;
    char path[4200];
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    RLVR_TRY(rlvr_st_writer_new(&e.w));
    int rc = rlvr_port_for_each(m, rlvr_hf_tensor_names(), declare, &e, NULL);
    if (rc == 0) rc = rlvr_st_writer_open(e.w, path);
    rlvr_port_options po = {.progress = opt->progress, .progress_user = opt->progress_user};
    if (rc == 0) rc = rlvr_port_for_each(m, rlvr_hf_tensor_names(), put, &e, &po);
    if (rc == 0) rc = rlvr_st_writer_finish(e.w);
    rlvr_st_writer_free(e.w);
    return rc;
}

/* generate() stops at eos_token_id: a pretrained model's declared ids and its turn end. */
static json_t *generation_config_json(const rlvr_export_options *opt) {
    json_t *j = json_pack("{s:b}", "_from_model_config", 1);
    if (!j || !opt->tokenizer_json) return j;
    if (opt->bos_token_id >= 0) json_object_set_new(j, "bos_token_id", json_integer(opt->bos_token_id));
    if (opt->n_eos_token_ids == 1) json_object_set_new(j, "eos_token_id", json_integer(opt->eos_token_ids[0]));
    json_t *list = opt->n_eos_token_ids > 1 ? json_array() : NULL;
    for (int i = 0; list && i < opt->n_eos_token_ids; i++) json_array_append_new(list, json_integer(opt->eos_token_ids[i]));
    if (list) json_object_set_new(j, "eos_token_id", list);
    return j;
}

/* What transformers' AutoTokenizer needs beside tokenizer.json: the class,
 * the chat template, the tokens that open and end a conversation. */
static json_t *tokenizer_config_json(const rlvr_export_options *opt) {
    json_t *j = json_pack("{s:s, s:b}", "tokenizer_class", "PreTrainedTokenizerFast", "clean_up_tokenization_spaces",
                          0);
    if (j && opt->chat_template) json_object_set_new(j, "chat_template", json_string(opt->chat_template));
    if (j && opt->bos_token) json_object_set_new(j, "bos_token", json_string(opt->bos_token));
    if (j && opt->eos_token) json_object_set_new(j, "eos_token", json_string(opt->eos_token));
    return j;
}

static int write_all(const rlvr_model *m, const char *dir, const rlvr_export_options *opt) {
    const rlvr_model_config *c = rlvr_model_config_of(m);
    int rc = write_json(dir, "config.json", config_json(c, opt->dtype));
    if (rc == 0)
        rc = write_json(dir, "generation_config.json", generation_config_json(opt));
    if (rc == 0 && opt->tokenizer_json)
        rc = write_bytes(dir, "tokenizer.json", opt->tokenizer_json, opt->tokenizer_json_len);
    if (rc == 0 && opt->tokenizer_json) rc = write_json(dir, "tokenizer_config.json", tokenizer_config_json(opt));
    if (rc == 0) rc = write_weights(m, dir, opt);
    return rc;
}

/* Removes what an export left in its temporary directory. */
static void remove_tmp(const char *tmp) {
    static const char *const files[] = {"config.json", "generation_config.json", "tokenizer.json",
                                        "tokenizer_config.json", "model.safetensors"};
    char path[4200];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", tmp, files[i]);
        unlink(path);
    }
    rmdir(tmp);
}

int rlvr_hf_export(const rlvr_model *m, const char *dir, const rlvr_export_options *opt) {
    char tmp[4096];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", dir) >= sizeof tmp)
        return RLVR_FAIL(RLVR_EINVAL, "path too long: %s", dir);
    if (access(dir, F_OK) == 0 || access(tmp, F_OK) == 0)
        return RLVR_FAIL(RLVR_ESTATE, "%s (or %s) already exists: export into a new directory", dir, tmp);
    if (mkdir(tmp, 0777) != 0) return rlvr_error_errno_at(__FILE__, __LINE__, "creating %s", tmp);
    int rc = write_all(m, tmp, opt);
    if (rc == 0) rc = rlvr_port_publish(tmp, dir);
    if (rc < 0) remove_tmp(tmp);
    return rc < 0 ? rlvr_error_wrap(rc, "exporting to %s", dir) : 0;
}
