/* io/safetensors.h — reading safetensors files (Hugging Face's weight
 * format) and converting their float tensors to float32.
 *
 * The file is mapped read-only and validated completely by
 * rlvr_safetensors_open (it is untrusted input), with the rules the
 * safetensors library 0.4.5 enforces: header length within the file and at
 * most 100 MB, a JSON object header, known dtypes, shape product x dtype size
 * equal to each tensor's byte range, and the tensors' ranges tiling the data
 * section exactly (no overlap, no hole, nothing after the last tensor).
 * Accessors never fail on a file that opened. Strings returned point into
 * the reader and stay valid until rlvr_safetensors_free. Format subset:
 * docs/FORMATS.md, "safetensors (read)". */
#ifndef RLVR_IO_SAFETENSORS_H
#define RLVR_IO_SAFETENSORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Element types, as named in the header ("F32", "BF16", ...). */
typedef enum {
    RLVR_ST_BOOL,
    RLVR_ST_U8,
    RLVR_ST_I8,
    RLVR_ST_F8_E5M2,
    RLVR_ST_F8_E4M3,
    RLVR_ST_I16,
    RLVR_ST_U16,
    RLVR_ST_F16,
    RLVR_ST_BF16,
    RLVR_ST_I32,
    RLVR_ST_U32,
    RLVR_ST_F32,
    RLVR_ST_F64,
    RLVR_ST_I64,
    RLVR_ST_U64,
} rlvr_st_dtype;

typedef struct rlvr_safetensors rlvr_safetensors;

typedef struct rlvr_st_tensor {
    const char *name;       /* NUL-terminated */
    rlvr_st_dtype dtype;
    size_t rank;            /* 0 for a scalar */
    const uint64_t *shape;  /* [rank], row-major (last index fastest) */
    uint64_t n_elements;    /* product of shape (1 for a scalar) */
    uint64_t begin, end;    /* byte range [begin, end) in the data section */
} rlvr_st_tensor;

/* Opens and validates `path`. RLVR_EIO when it cannot be read,
 * RLVR_EFORMAT when it breaks the format; the message names the file. */
int rlvr_safetensors_open(rlvr_safetensors **out, const char *path);
void rlvr_safetensors_free(rlvr_safetensors *st);

/* Tensors, in strcmp order of their names. */
size_t rlvr_safetensors_tensor_count(const rlvr_safetensors *st);
const rlvr_st_tensor *rlvr_safetensors_tensor_at(const rlvr_safetensors *st, size_t i);
/* The tensor called `name`, or NULL. */
const rlvr_st_tensor *rlvr_safetensors_tensor_find(const rlvr_safetensors *st, const char *name);
/* The raw little-endian bytes of `t` ([t->end - t->begin]) in the mapping. */
const void *rlvr_safetensors_tensor_data(const rlvr_safetensors *st, const rlvr_st_tensor *t);

/* The header's name of a dtype ("BF16"); "unknown" for a bad value. */
const char *rlvr_st_dtype_name(rlvr_st_dtype dtype);
/* Bytes per element (1, 2, 4 or 8); 0 for a bad value. */
size_t rlvr_st_dtype_size(rlvr_st_dtype dtype);

/* "__metadata__": the number of entries, entry i (keys in strcmp order),
 * and the value of `key` or NULL when absent. */
size_t rlvr_safetensors_metadata_count(const rlvr_safetensors *st);
int rlvr_safetensors_metadata_at(const rlvr_safetensors *st, size_t i, const char **key, const char **value);
const char *rlvr_safetensors_metadata_find(const rlvr_safetensors *st, const char *key);

/* Converts `t` into out[t->n_elements] (row-major), bit-identical to
 * numpy's astype(np.float32): F32 as is, F16 and BF16 exactly, F64 rounded
 * to nearest even. Other dtypes give RLVR_EUNSUPPORTED naming the dtype. */
int rlvr_safetensors_tensor_f32(const rlvr_safetensors *st, const rlvr_st_tensor *t, float *out);
/* True for the dtypes rlvr_safetensors_tensor_f32 converts. */
bool rlvr_st_dtype_converts(rlvr_st_dtype dtype);

/* ---- sharded checkpoints --------------------------------------------- */

/* model.safetensors.index.json: {"metadata": {...}, "weight_map": {tensor
 * name: shard file name}}. Shard names are plain file names in the index's
 * directory (no '/', not "." or ".."); the reader gives them joined to that
 * directory. It does not open the shards. */
typedef struct rlvr_st_index rlvr_st_index;

int rlvr_st_index_open(rlvr_st_index **out, const char *path);
void rlvr_st_index_free(rlvr_st_index *ix);
/* Tensor entries, in strcmp order of name: name and its shard's path. */
size_t rlvr_st_index_count(const rlvr_st_index *ix);
int rlvr_st_index_at(const rlvr_st_index *ix, size_t i, const char **name, const char **shard);
/* The path of the shard holding `name`, or NULL. */
const char *rlvr_st_index_find(const rlvr_st_index *ix, const char *name);
/* The distinct shard paths, in strcmp order. */
size_t rlvr_st_index_shard_count(const rlvr_st_index *ix);
const char *rlvr_st_index_shard(const rlvr_st_index *ix, size_t i);

#endif
