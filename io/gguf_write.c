/* io/gguf_write.c — GGUF v3 files, and a model as one. */
#include "io/gguf_write.h"
#include "core/error.h"
#include "io/gguf_model.h"
#include "io/gguf_tokenizer.h"
#include "io/weights_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ALIGNMENT 32

/* The header grows in memory: it is written in one piece once every key
 * and tensor is known. */
typedef struct {
    unsigned char *p;
    size_t len, cap;
    int oom;
} bytes;

static void put_bytes(bytes *b, const void *src, size_t n) {
    if (b->oom) return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n) cap *= 2;
        unsigned char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p, b->cap = cap;
    }
    memcpy(b->p + b->len, src, n);
    b->len += n;
}

/* Little-endian integers of `size` bytes. */
static void put_le(bytes *b, uint64_t v, int size) {
    unsigned char le[8];
    for (int i = 0; i < size; i++) le[i] = (unsigned char)(v >> (8 * i));
    put_bytes(b, le, (size_t)size);
}

static void put_str(bytes *b, const char *s) {
    put_le(b, strlen(s), 8);
    put_bytes(b, s, strlen(s));
}

struct rlvr_gguf_writer {
    bytes kv;        /* the key/value section */
    uint64_t n_kv;
    rlvr_wfile f;    /* the tensors */
};

int rlvr_gguf_writer_new(rlvr_gguf_writer **out) {
    rlvr_gguf_writer *w = calloc(1, sizeof *w);
    if (!w) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    *out = w;
    return 0;
}

void rlvr_gguf_writer_free(rlvr_gguf_writer *w) {
    if (!w) return;
    free(w->kv.p);
    rlvr_wfile_clear(&w->f);
    free(w);
}

static int kv_head(rlvr_gguf_writer *w, const char *key, uint32_t type) {
    put_str(&w->kv, key);
    put_le(&w->kv, type, 4);
    w->n_kv++;
    return w->kv.oom ? RLVR_FAIL(RLVR_ENOMEM, "out of memory") : 0;
}

int rlvr_gguf_writer_kv_string(rlvr_gguf_writer *w, const char *key, const char *value) {
    RLVR_TRY(kv_head(w, key, RLVR_GGUF_STRING));
    put_str(&w->kv, value);
    return w->kv.oom ? RLVR_FAIL(RLVR_ENOMEM, "out of memory") : 0;
}

int rlvr_gguf_writer_kv_u32(rlvr_gguf_writer *w, const char *key, uint32_t value) {
    RLVR_TRY(kv_head(w, key, RLVR_GGUF_U32));
    put_le(&w->kv, value, 4);
    return w->kv.oom ? RLVR_FAIL(RLVR_ENOMEM, "out of memory") : 0;
}

int rlvr_gguf_writer_kv_bool(rlvr_gguf_writer *w, const char *key, bool value) {
    RLVR_TRY(kv_head(w, key, RLVR_GGUF_BOOL));
    put_le(&w->kv, value ? 1 : 0, 1);
    return w->kv.oom ? RLVR_FAIL(RLVR_ENOMEM, "out of memory") : 0;
}

int rlvr_gguf_writer_kv_f32(rlvr_gguf_writer *w, const char *key, float value) {
    uint32_t bits;
    memcpy(&bits, &value, 4);
    RLVR_TRY(kv_head(w, key, RLVR_GGUF_F32));
    put_le(&w->kv, bits, 4);
    return w->kv.oom ? RLVR_FAIL(RLVR_ENOMEM, "out of memory") : 0;
}

int rlvr_gguf_writer_kv_strings(rlvr_gguf_writer *w, const char *key, const char *const *strs, const size_t *lens,
                                uint64_t n) {
    RLVR_TRY(kv_head(w, key, RLVR_GGUF_ARRAY));
    put_le(&w->kv, RLVR_GGUF_STRING, 4);
    put_le(&w->kv, n, 8);
    for (uint64_t i = 0; i < n; i++) {
        put_le(&w->kv, lens[i], 8);
        put_bytes(&w->kv, strs[i], lens[i]);
    }
    return w->kv.oom ? RLVR_FAIL(RLVR_ENOMEM, "out of memory") : 0;
}

int rlvr_gguf_writer_kv_i32s(rlvr_gguf_writer *w, const char *key, const int32_t *v, uint64_t n) {
    RLVR_TRY(kv_head(w, key, RLVR_GGUF_ARRAY));
    put_le(&w->kv, RLVR_GGUF_I32, 4);
    put_le(&w->kv, n, 8);
    for (uint64_t i = 0; i < n; i++) put_le(&w->kv, (uint32_t)v[i], 4);
    return w->kv.oom ? RLVR_FAIL(RLVR_ENOMEM, "out of memory") : 0;
}

int rlvr_gguf_writer_add(rlvr_gguf_writer *w, const char *name, uint32_t type, uint32_t n_dims, const uint64_t *dims) {
    if (type != RLVR_GGML_F32 && type != RLVR_GGML_F16)
        return RLVR_FAIL(RLVR_EINVAL, "GGUF writer: tensor %s: type %s (F32 or F16)", name, rlvr_gguf_type_name(type));
    return rlvr_wfile_add(&w->f, name, type == RLVR_GGML_F32 ? RLVR_WFILE_F32 : RLVR_WFILE_F16, n_dims, dims);
}

/* Magic, version, counts, the key/value section, then each tensor's name,
 * dims, type and offset (from the aligned start of the data section). */
static int header(const rlvr_gguf_writer *w, bytes *h) {
    put_bytes(h, "GGUF", 4);
    put_le(h, 3, 4);
    put_le(h, w->f.n, 8);
    put_le(h, w->n_kv, 8);
    put_bytes(h, w->kv.p, w->kv.len);
    uint64_t offset = 0;
    for (size_t i = 0; i < w->f.n; i++) {
        const rlvr_wfile_tensor *t = &w->f.t[i];
        put_str(h, t->name);
        put_le(h, t->rank, 4);
        for (size_t d = 0; d < t->rank; d++) put_le(h, t->shape[d], 8);
        put_le(h, t->type == RLVR_WFILE_F32 ? RLVR_GGML_F32 : RLVR_GGML_F16, 4);
        put_le(h, offset, 8);
        offset += (t->n_bytes + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
    }
    return h->oom ? RLVR_FAIL(RLVR_ENOMEM, "out of memory") : 0;
}

int rlvr_gguf_writer_open(rlvr_gguf_writer *w, const char *path) {
    bytes h = {0};
    int rc = header(w, &h);
    if (rc == 0) rc = rlvr_wfile_open(&w->f, path);
    if (rc == 0) rc = rlvr_wfile_write(&w->f, h.p, h.len);
    free(h.p);
    if (rc == 0) rc = rlvr_wfile_pad(&w->f, ALIGNMENT); /* data_start is 0: aligned to the file */
    w->f.data_start = w->f.pos;
    return rc;
}

int rlvr_gguf_writer_put(rlvr_gguf_writer *w, const float *data) { return rlvr_wfile_put(&w->f, data, ALIGNMENT); }

int rlvr_gguf_writer_finish(rlvr_gguf_writer *w) { return rlvr_wfile_finish(&w->f); }

/* ---- a model as GGUF ---------------------------------------------------------------------------- */

typedef struct {
    rlvr_gguf_writer *w;
    uint32_t matrix_type;
    bool half_split; /* qwen2: NEOX rope */
    int head_dim;
} gguf_export;

static int declare(void *user, const rlvr_port_tensor *t) {
    gguf_export *e = user;
    uint64_t dims[2] = {t->cols ? t->cols : t->rows, t->rows};
    return rlvr_gguf_writer_add(e->w, t->name, t->cols ? e->matrix_type : RLVR_GGML_F32, t->cols ? 2 : 1, dims);
}

static int put(void *user, const rlvr_port_tensor *t) {
    gguf_export *e = user;
    const float *data;
    float *owned;
    RLVR_TRY(rlvr_port_export_data(t, e->half_split, e->head_dim, &data, &owned));
    int rc = rlvr_gguf_writer_put(e->w, data);
    free(owned);
    return rc;
}

static int metadata(rlvr_gguf_writer *w, const rlvr_model_config *c, const char *arch, rlvr_export_dtype dtype) {
    static const char *const ints[] = {"context_length", "embedding_length", "block_count", "feed_forward_length",
                                       "rope.dimension_count", "attention.head_count", "attention.head_count_kv",
                                       "vocab_size"};
    uint32_t vals[] = {(uint32_t)c->max_seq, (uint32_t)c->d_model, (uint32_t)c->n_layers, (uint32_t)c->d_ff,
                       (uint32_t)(c->d_model / c->n_heads), (uint32_t)c->n_heads, (uint32_t)c->n_kv_heads,
                       (uint32_t)c->vocab};
    char key[128];
    RLVR_TRY(rlvr_gguf_writer_kv_string(w, "general.architecture", arch));
    RLVR_TRY(rlvr_gguf_writer_kv_string(w, "general.name", "rlvr export"));
    RLVR_TRY(rlvr_gguf_writer_kv_u32(w, "general.file_type", dtype == RLVR_EXPORT_F16 ? 1 : 0));
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        snprintf(key, sizeof key, "%s.%s", arch, ints[i]);
        RLVR_TRY(rlvr_gguf_writer_kv_u32(w, key, vals[i]));
    }
    snprintf(key, sizeof key, "%s.attention.layer_norm_rms_epsilon", arch);
    RLVR_TRY(rlvr_gguf_writer_kv_f32(w, key, c->norm_eps));
    snprintf(key, sizeof key, "%s.rope.freq_base", arch);
    return rlvr_gguf_writer_kv_f32(w, key, c->rope_theta);
}

/* A pretrained model's tokenizer and chat template, so llama.cpp can run the file. */
static int put_tokenizer(rlvr_gguf_writer *w, const rlvr_export_options *opt) {
    int32_t eos = opt->n_eos_token_ids > 0 ? opt->eos_token_ids[0] : -1;
    rlvr_gguf_tokenizer_spec spec = {.json = opt->tokenizer_json,
                                     .len = opt->tokenizer_json_len,
                                     .source = "the checkpoint's tokenizer (/tokenizer/json)",
                                     .chat_template = opt->chat_template,
                                     .bos = opt->bos_token_id,
                                     .eos = eos,
                                     .eot = opt->turn_end_token_id != eos ? opt->turn_end_token_id : -1,
                                     .add_bos = opt->bos_token != NULL};
    return rlvr_gguf_put_tokenizer(w, &spec);
}

static int write_model(const rlvr_model *m, const char *path, const rlvr_export_options *opt, rlvr_gguf_writer *w) {
    const rlvr_model_config *c = rlvr_model_config_of(m);
    const char *arch = c->qkv_bias ? "qwen2" : "llama";
    gguf_export e = {.w = w, .matrix_type = opt->dtype == RLVR_EXPORT_F16 ? RLVR_GGML_F16 : RLVR_GGML_F32,
                     .half_split = c->qkv_bias, .head_dim = c->d_model / c->n_heads};
    bool scaled = c->rope_scaling.kind == RLVR_ROPE_SCALING_LLAMA3;
    float factors[512];
    uint64_t n_factors = (uint64_t)e.head_dim / 2;
    if (scaled && n_factors > sizeof factors / sizeof factors[0])
        return RLVR_FAIL(RLVR_EINVAL, "GGUF export: head_dim %d is too large for rope_freqs", e.head_dim);
    if (scaled) rlvr_port_llama3_divisors(c, factors);
    rlvr_port_options po = {.progress = opt->progress, .progress_user = opt->progress_user};
    RLVR_TRY(metadata(w, c, arch, opt->dtype));
    if (opt->tokenizer_json) RLVR_TRY(put_tokenizer(w, opt));
    RLVR_TRY(rlvr_port_for_each(m, rlvr_gguf_tensor_names(), declare, &e, NULL));
    if (scaled) RLVR_TRY(rlvr_gguf_writer_add(w, "rope_freqs.weight", RLVR_GGML_F32, 1, &n_factors));
    RLVR_TRY(rlvr_gguf_writer_open(w, path));
    RLVR_TRY(rlvr_port_for_each(m, rlvr_gguf_tensor_names(), put, &e, &po));
    if (scaled) RLVR_TRY(rlvr_gguf_writer_put(w, factors));
    return rlvr_gguf_writer_finish(w);
}

int rlvr_gguf_export(const rlvr_model *m, const char *path, const rlvr_export_options *opt) {
    if (opt->dtype != RLVR_EXPORT_F32 && opt->dtype != RLVR_EXPORT_F16)
        return RLVR_FAIL(RLVR_EINVAL, "GGUF export: dtype %s (F32 or F16)", rlvr_export_dtype_name(opt->dtype));
    char part[4200];
    if ((size_t)snprintf(part, sizeof part, "%s.part", path) >= sizeof part)
        return RLVR_FAIL(RLVR_EINVAL, "path too long: %s", path);
    rlvr_gguf_writer *w = NULL;
    RLVR_TRY(rlvr_gguf_writer_new(&w));
    int rc = write_model(m, part, opt, w);
    rlvr_gguf_writer_free(w);
    if (rc == 0) rc = rlvr_port_publish(part, path);
    if (rc < 0) unlink(part);
    return rc < 0 ? rlvr_error_wrap(rc, "exporting to %s", path) : 0;
}
