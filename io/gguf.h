/* io/gguf.h — reading GGUF files (llama.cpp's model format) and
 * dequantising their tensors to float32; the first step of importing
 * pretrained weights.
 *
 * The file is mapped read-only and validated completely by rlvr_gguf_open
 * (it is untrusted input): every count, length, dimension, type and offset
 * is checked against the file's size before anything is read, so the
 * accessors below never fail on a file that opened. Strings in the file
 * are not NUL-terminated; getters return pointer + length into the mapping,
 * valid until rlvr_gguf_free. Format subset: docs/FORMATS.md, "GGUF (read)". */
#ifndef RLVR_IO_GGUF_H
#define RLVR_IO_GGUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Metadata value types, numbered as in the file. */
typedef enum {
    RLVR_GGUF_U8 = 0,
    RLVR_GGUF_I8 = 1,
    RLVR_GGUF_U16 = 2,
    RLVR_GGUF_I16 = 3,
    RLVR_GGUF_U32 = 4,
    RLVR_GGUF_I32 = 5,
    RLVR_GGUF_F32 = 6,
    RLVR_GGUF_BOOL = 7,
    RLVR_GGUF_STRING = 8,
    RLVR_GGUF_ARRAY = 9,
    RLVR_GGUF_U64 = 10,
    RLVR_GGUF_I64 = 11,
    RLVR_GGUF_F64 = 12,
} rlvr_gguf_vtype;

/* Tensor types (ggml's numbering) that rlvr_gguf_tensor_f32 dequantises.
 * Files may hold other ggml types; they open, and only dequantising them
 * is refused. */
enum {
    RLVR_GGML_F32 = 0,
    RLVR_GGML_F16 = 1,
    RLVR_GGML_Q4_0 = 2,
    RLVR_GGML_Q4_1 = 3,
    RLVR_GGML_Q8_0 = 8,
    RLVR_GGML_Q4_K = 12,
    RLVR_GGML_Q5_K = 13,
    RLVR_GGML_Q6_K = 14,
    RLVR_GGML_BF16 = 30,
};

typedef struct rlvr_gguf rlvr_gguf;

/* A metadata value (a key's value, or an element of an array of arrays). */
typedef struct rlvr_gguf_value rlvr_gguf_value;

typedef struct rlvr_gguf_tensor {
    const char *name;     /* NUL-terminated */
    uint32_t n_dims;      /* 1..4 */
    uint64_t dims[4];     /* [n_dims] as ggml's ne: dims[0] varies fastest
                             (a row); entries past n_dims are 1 */
    uint32_t type;        /* ggml type code (RLVR_GGML_* or another known one) */
    uint64_t n_elements;  /* product of dims */
    uint64_t n_bytes;     /* encoded size in the file */
    uint64_t offset;      /* from the start of the data section */
} rlvr_gguf_tensor;

/* Opens and validates `path` (GGUF version 2 or 3, little-endian). */
int rlvr_gguf_open(rlvr_gguf **out, const char *path);
void rlvr_gguf_free(rlvr_gguf *g);

uint32_t rlvr_gguf_version(const rlvr_gguf *g);
/* general.alignment, or 32 when the file does not set it. */
uint32_t rlvr_gguf_alignment(const rlvr_gguf *g);

/* ---- metadata ---------------------------------------------------------- */

size_t rlvr_gguf_kv_count(const rlvr_gguf *g);
/* Key i (< rlvr_gguf_kv_count), NUL-terminated, and its value. */
const char *rlvr_gguf_kv_key(const rlvr_gguf *g, size_t i);
const rlvr_gguf_value *rlvr_gguf_kv_value(const rlvr_gguf *g, size_t i);
/* The value of `key`, or NULL when the file has no such key. */
const rlvr_gguf_value *rlvr_gguf_find(const rlvr_gguf *g, const char *key);

rlvr_gguf_vtype rlvr_gguf_value_type(const rlvr_gguf_value *v);
/* Arrays: element type and count. For other values the count is 0 and the
 * element type means nothing. */
rlvr_gguf_vtype rlvr_gguf_array_type(const rlvr_gguf_value *v);
uint64_t rlvr_gguf_array_len(const rlvr_gguf_value *v);

/* Typed getters by key. RLVR_ENOTFOUND when the key is absent,
 * RLVR_EFORMAT when its type does not convert without loss; widening is by
 * type, never by value: u32 takes u8/u16/u32; i32 takes i8/i16/i32/u8/u16;
 * u64 takes any unsigned; i64 takes any signed and u8/u16/u32; f32 takes
 * f32; f64 takes f32/f64; bool and string take only themselves. `*out` is
 * set only on success. */
int rlvr_gguf_get_u32(const rlvr_gguf *g, const char *key, uint32_t *out);
int rlvr_gguf_get_i32(const rlvr_gguf *g, const char *key, int32_t *out);
int rlvr_gguf_get_u64(const rlvr_gguf *g, const char *key, uint64_t *out);
int rlvr_gguf_get_i64(const rlvr_gguf *g, const char *key, int64_t *out);
int rlvr_gguf_get_f32(const rlvr_gguf *g, const char *key, float *out);
int rlvr_gguf_get_f64(const rlvr_gguf *g, const char *key, double *out);
int rlvr_gguf_get_bool(const rlvr_gguf *g, const char *key, int *out);
int rlvr_gguf_get_string(const rlvr_gguf *g, const char *key, const char **s, size_t *len);
int rlvr_gguf_get_array(const rlvr_gguf *g, const char *key, const rlvr_gguf_value **out);

/* The same conversions on a value (e.g. from rlvr_gguf_kv_value). */
int rlvr_gguf_value_u32(const rlvr_gguf_value *v, uint32_t *out);
int rlvr_gguf_value_i32(const rlvr_gguf_value *v, int32_t *out);
int rlvr_gguf_value_u64(const rlvr_gguf_value *v, uint64_t *out);
int rlvr_gguf_value_i64(const rlvr_gguf_value *v, int64_t *out);
int rlvr_gguf_value_f32(const rlvr_gguf_value *v, float *out);
int rlvr_gguf_value_f64(const rlvr_gguf_value *v, double *out);
int rlvr_gguf_value_bool(const rlvr_gguf_value *v, int *out);
int rlvr_gguf_value_string(const rlvr_gguf_value *v, const char **s, size_t *len);

/* Element i of array `arr`, with the same conversions. RLVR_EINVAL when
 * `arr` is not an array or i >= its length. */
int rlvr_gguf_array_u32(const rlvr_gguf_value *arr, uint64_t i, uint32_t *out);
int rlvr_gguf_array_i32(const rlvr_gguf_value *arr, uint64_t i, int32_t *out);
int rlvr_gguf_array_u64(const rlvr_gguf_value *arr, uint64_t i, uint64_t *out);
int rlvr_gguf_array_i64(const rlvr_gguf_value *arr, uint64_t i, int64_t *out);
int rlvr_gguf_array_f32(const rlvr_gguf_value *arr, uint64_t i, float *out);
int rlvr_gguf_array_f64(const rlvr_gguf_value *arr, uint64_t i, double *out);
int rlvr_gguf_array_bool(const rlvr_gguf_value *arr, uint64_t i, int *out);
int rlvr_gguf_array_string(const rlvr_gguf_value *arr, uint64_t i, const char **s, size_t *len);
int rlvr_gguf_array_array(const rlvr_gguf_value *arr, uint64_t i, const rlvr_gguf_value **out);

/* ---- tensors ----------------------------------------------------------- */

size_t rlvr_gguf_tensor_count(const rlvr_gguf *g);
const rlvr_gguf_tensor *rlvr_gguf_tensor_at(const rlvr_gguf *g, size_t i);
/* The tensor called `name`, or NULL. */
const rlvr_gguf_tensor *rlvr_gguf_tensor_find(const rlvr_gguf *g, const char *name);
/* The encoded bytes of `t` ([t->n_bytes]) inside the mapping. */
const void *rlvr_gguf_tensor_data(const rlvr_gguf *g, const rlvr_gguf_tensor *t);

/* ggml's name of a tensor type ("Q4_K"), or "unknown". */
const char *rlvr_gguf_type_name(uint32_t type);

/* Dequantises `t` into out[t->n_elements] (in file order, dims[0] fastest),
 * bit-identical to gguf-py's gguf.quants.dequantize. Types F32, F16, BF16,
 * Q8_0, Q4_0, Q4_1, Q4_K, Q5_K, Q6_K; others give RLVR_EUNSUPPORTED. */
int rlvr_gguf_tensor_f32(const rlvr_gguf *g, const rlvr_gguf_tensor *t, float *out);
/* True for the types rlvr_gguf_tensor_f32 dequantises. */
bool rlvr_gguf_type_dequantises(uint32_t type);

#endif
