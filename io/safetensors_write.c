/* io/safetensors_write.c — safetensors files from float32 tensors. */
#include "io/safetensors_write.h"
#include "core/error.h"
#include "io/weights_file.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint16_t rlvr_f32_to_bf16(float f) {
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    if (isnan(f)) return 0x7fc0;
    return (uint16_t)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}

/* numpy's npy_floatbits_to_halfbits with ties to even. */
uint16_t rlvr_f32_to_half(float f) {
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    uint16_t sign = (uint16_t)((b & 0x80000000u) >> 16);
    uint32_t exp = b & 0x7f800000u, sig = b & 0x007fffffu;
    if (exp >= 0x47800000u) { /* overflow, infinity or NaN */
        if (exp == 0x7f800000u && sig) {
            uint16_t h = (uint16_t)(0x7c00u + (sig >> 13));
            return (uint16_t)(sign + (h == 0x7c00u ? h + 1 : h)); /* keep a NaN a NaN */
        }
        return (uint16_t)(sign + 0x7c00u);
    }
    if (exp <= 0x38000000u) { /* half subnormal or zero */
        if (exp < 0x33000000u) return sign;
        uint32_t e = exp >> 23;
        uint32_t s = (0x00800000u + sig) >> (113 - e);
        /* the shift may drop set bits: they break a tie upwards */
        if ((s & 0x3fffu) != 0x1000u || (b & 0x7ffu)) s += 0x1000u;
        return (uint16_t)(sign + (s >> 13));
    }
    uint16_t h_exp = (uint16_t)((exp - 0x38000000u) >> 13);
    if ((sig & 0x3fffu) != 0x1000u) sig += 0x1000u;
    /* a carry out of the significand bumps the exponent, up to infinity */
    return (uint16_t)(sign + (uint16_t)((sig >> 13) + h_exp));
}

struct rlvr_st_writer {
    rlvr_wfile f; /* the tensors and the open file */
};

int rlvr_st_writer_new(rlvr_st_writer **out) {
    rlvr_st_writer *w = calloc(1, sizeof *w);
    if (!w) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    *out = w;
    return 0;
}

void rlvr_st_writer_free(rlvr_st_writer *w) {
    if (!w) return;
    rlvr_wfile_clear(&w->f);
    free(w);
}

static int wdtype(rlvr_st_dtype d) {
    return d == RLVR_ST_F32 ? RLVR_WFILE_F32 : d == RLVR_ST_F16 ? RLVR_WFILE_F16 : RLVR_WFILE_BF16;
}

int rlvr_st_writer_add(rlvr_st_writer *w, const char *name, rlvr_st_dtype dtype, size_t rank, const uint64_t *shape) {
    if (dtype != RLVR_ST_F32 && dtype != RLVR_ST_F16 && dtype != RLVR_ST_BF16)
        return RLVR_FAIL(RLVR_EINVAL, "safetensors writer: tensor %s: dtype %s (F32, F16 or BF16)", name,
                         rlvr_st_dtype_name(dtype));
    return rlvr_wfile_add(&w->f, name, wdtype(dtype), rank, shape);
}

static const char *dtype_name(int t) { return t == RLVR_WFILE_F32 ? "F32" : t == RLVR_WFILE_F16 ? "F16" : "BF16"; }

/* {"__metadata__": {"format": "pt"}, name: {dtype, shape, data_offsets}} */
static int header_json(const rlvr_wfile *f, char **text) {
    json_t *root = json_object(), *meta = json_object();
    int bad = !root || !meta || json_object_set_new(meta, "format", json_string("pt")) ||
              json_object_set_new(root, "__metadata__", meta);
    uint64_t at = 0;
    for (size_t i = 0; !bad && i < f->n; i++) {
        const rlvr_wfile_tensor *t = &f->t[i];
        json_t *shape = json_array();
        for (size_t d = 0; shape && d < t->rank; d++) bad |= json_array_append_new(shape, json_integer((json_int_t)t->shape[d]));
        uint64_t end = at + t->n_bytes;
        json_t *obj = json_pack("{s:s, s:o, s:[I, I]}", "dtype", dtype_name(t->type), "shape", shape, "data_offsets",
                                (json_int_t)at, (json_int_t)end);
        bad |= !obj || json_object_set_new(root, t->name, obj);
        at = end;
    }
    *text = bad ? NULL : json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(root);
    return *text ? 0 : RLVR_FAIL(RLVR_ENOMEM, "safetensors writer: building the header");
}

int rlvr_st_writer_open(rlvr_st_writer *w, const char *path) {
    char *json = NULL;
    RLVR_TRY(header_json(&w->f, &json));
    /* the header is padded with spaces so the data starts 8-aligned */
    size_t len = strlen(json), padded = (len + 7) / 8 * 8;
    unsigned char *head = malloc(8 + padded);
    if (!head) {
        free(json);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    }
    for (int i = 0; i < 8; i++) head[i] = (unsigned char)((uint64_t)padded >> (8 * i));
    memcpy(head + 8, json, len);
    memset(head + 8 + len, ' ', padded - len);
    free(json);
    int rc = rlvr_wfile_open(&w->f, path);
    if (rc == 0) rc = rlvr_wfile_write(&w->f, head, 8 + padded);
    free(head);
    return rc;
}

int rlvr_st_writer_put(rlvr_st_writer *w, const float *data) { return rlvr_wfile_put(&w->f, data, 1); }

int rlvr_st_writer_finish(rlvr_st_writer *w) { return rlvr_wfile_finish(&w->f); }
