/* io/safetensors.c — safetensors reader (io/safetensors.h).
 *
 * Layout: an 8-byte little-endian header length N, N bytes of JSON (an
 * object: tensor name -> {"dtype", "shape", "data_offsets": [begin, end)},
 * plus an optional "__metadata__" object of strings), then the data section,
 * to the end of the file. The JSON is parsed with jansson; everything it
 * says is copied out and checked against the data section's size before
 * any tensor byte is touched. */
#include "io/safetensors.h"

#include "core/error.h"
#include "io/fp16.h"
#include "io/mapped.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The safetensors library refuses longer headers (MAX_HEADER_SIZE). */
#define ST_MAX_HEADER 100000000u

struct rlvr_safetensors {
    char *path;
    unsigned char *map;
    uint64_t size;
    uint64_t data_start;   /* 8 + N */
    uint64_t data_len;     /* size - data_start */
    size_t n_tensors;
    rlvr_st_tensor *tensors; /* [n_tensors], by name; names and shapes owned */
    size_t n_meta;
    char **meta_keys;        /* [n_meta], by key */
    char **meta_values;      /* [n_meta] */
};

static const struct {
    const char *name;
    size_t size;
} dtypes[] = {
    [RLVR_ST_BOOL] = {"BOOL", 1},       [RLVR_ST_U8] = {"U8", 1},
    [RLVR_ST_I8] = {"I8", 1},           [RLVR_ST_F8_E5M2] = {"F8_E5M2", 1},
    [RLVR_ST_F8_E4M3] = {"F8_E4M3", 1}, [RLVR_ST_I16] = {"I16", 2},
    [RLVR_ST_U16] = {"U16", 2},         [RLVR_ST_F16] = {"F16", 2},
    [RLVR_ST_BF16] = {"BF16", 2},       [RLVR_ST_I32] = {"I32", 4},
    [RLVR_ST_U32] = {"U32", 4},         [RLVR_ST_F32] = {"F32", 4},
    [RLVR_ST_F64] = {"F64", 8},         [RLVR_ST_I64] = {"I64", 8},
    [RLVR_ST_U64] = {"U64", 8},
};
#define N_DTYPES (sizeof dtypes / sizeof dtypes[0])

const char *rlvr_st_dtype_name(rlvr_st_dtype dtype)
{
    return (unsigned)dtype < N_DTYPES ? dtypes[dtype].name : "unknown";
}

size_t rlvr_st_dtype_size(rlvr_st_dtype dtype)
{
    return (unsigned)dtype < N_DTYPES ? dtypes[dtype].size : 0;
}

static uint64_t ld64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* A non-negative JSON integer, as the format's unsigned fields must be. */
static int json_u64(const json_t *j, uint64_t *out)
{
    if (!json_is_integer(j)) return 0;
    json_int_t v = json_integer_value(j);
    if (v < 0) return 0;
    *out = (uint64_t)v;
    return 1;
}

/* Reads one tensor entry into *t (name, dtype, shape, offsets), checking
 * its own consistency and that it lies inside the data section. */
static int parse_tensor(const rlvr_safetensors *st, const char *name, const json_t *j, rlvr_st_tensor *t)
{
    const char *p = st->path;
    if (!json_is_object(j))
        return RLVR_FAIL(RLVR_EFORMAT, "%s: tensor '%s': header entry is not an object", p, name);
    const json_t *jd = json_object_get(j, "dtype");
    const json_t *js = json_object_get(j, "shape");
    const json_t *jo = json_object_get(j, "data_offsets");
    if (!json_is_string(jd))
        return RLVR_FAIL(RLVR_EFORMAT, "%s: tensor '%s': \"dtype\" missing or not a string", p, name);
    if (!json_is_array(js))
        return RLVR_FAIL(RLVR_EFORMAT, "%s: tensor '%s': \"shape\" missing or not an array", p, name);
    if (!json_is_array(jo) || json_array_size(jo) != 2)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: tensor '%s': \"data_offsets\" missing or not [begin, end]", p, name);

    const char *dname = json_string_value(jd);
    size_t d = 0;
    while (d < N_DTYPES && strcmp(dtypes[d].name, dname) != 0) d++;
    if (d == N_DTYPES)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: tensor '%s': unknown dtype \"%s\"", p, name, dname);
    t->dtype = (rlvr_st_dtype)d;

    uint64_t begin, end;
    if (!json_u64(json_array_get(jo, 0), &begin) || !json_u64(json_array_get(jo, 1), &end))
        return RLVR_FAIL(RLVR_EFORMAT, "%s: tensor '%s': data_offsets are not non-negative integers", p, name);
    if (end < begin)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 ") end before they begin",
                         p, name, begin, end);
    if (end > st->data_len)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 ") run past the data "
                         "section (%" PRIu64 " bytes)", p, name, begin, end, st->data_len);
    t->begin = begin;
    t->end = end;

    size_t rank = json_array_size(js);
    uint64_t *shape = calloc(rank ? rank : 1, sizeof *shape);
    if (!shape) return RLVR_FAIL(RLVR_ENOMEM, "%s: out of memory reading tensor '%s'", p, name);
    t->shape = shape;
    t->rank = rank;
    uint64_t n = 1;
    int overflow = 0;
    for (size_t i = 0; i < rank; i++) {
        if (!json_u64(json_array_get(js, i), &shape[i]))
            return RLVR_FAIL(RLVR_EFORMAT, "%s: tensor '%s': shape[%zu] is not a non-negative integer", p, name, i);
        /* checked left to right, as the safetensors library does: a
         * product that overflows is refused even if a later dim is 0 */
        if (!overflow && shape[i] != 0 && n > UINT64_MAX / shape[i]) overflow = 1;
        if (!overflow) n *= shape[i];
    }
    size_t esz = dtypes[d].size;
    if (overflow || n > UINT64_MAX / esz)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: tensor '%s': shape's byte size overflows 64 bits", p, name);
    t->n_elements = n;
    if (n * esz != end - begin)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: tensor '%s': shape holds %" PRIu64 " elements of %s (%" PRIu64
                         " bytes) but data_offsets [%" PRIu64 ", %" PRIu64 ") span %" PRIu64 " bytes",
                         p, name, n, dtypes[d].name, n * esz, begin, end, end - begin);
    return 0;
}

static int cmp_tensor_name(const void *a, const void *b)
{
    return strcmp(((const rlvr_st_tensor *)a)->name, ((const rlvr_st_tensor *)b)->name);
}

static int cmp_tensor_offsets(const void *a, const void *b)
{
    const rlvr_st_tensor *x = *(const rlvr_st_tensor *const *)a, *y = *(const rlvr_st_tensor *const *)b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The tensors' byte ranges, in offset order, must follow one another with
 * no gap and no overlap from 0 to the end of the data section. */
static int check_tiling(const rlvr_safetensors *st)
{
    int rc = 0;
    const rlvr_st_tensor **byoff = NULL;
    if (st->n_tensors) {
        byoff = calloc(st->n_tensors, sizeof *byoff);
        if (!byoff) return RLVR_FAIL(RLVR_ENOMEM, "%s: out of memory checking tensor offsets", st->path);
    }
    for (size_t i = 0; i < st->n_tensors; i++) byoff[i] = &st->tensors[i];
    if (st->n_tensors) qsort(byoff, st->n_tensors, sizeof *byoff, cmp_tensor_offsets);
    uint64_t at = 0;
    const rlvr_st_tensor *prev = NULL;
    for (size_t i = 0; i < st->n_tensors; i++) {
        const rlvr_st_tensor *t = byoff[i];
        if (t->begin < at) {
            rc = RLVR_FAIL(RLVR_EFORMAT, "%s: tensor '%s' [%" PRIu64 ", %" PRIu64 ") overlaps tensor '%s' [%" PRIu64
                           ", %" PRIu64 ")", st->path, t->name, t->begin, t->end, prev->name, prev->begin, prev->end);
            goto cleanup;
        }
        if (t->begin > at) {
            rc = RLVR_FAIL(RLVR_EFORMAT, "%s: bytes [%" PRIu64 ", %" PRIu64 ") of the data section belong to no "
                           "tensor (a hole before tensor '%s')", st->path, at, t->begin, t->name);
            goto cleanup;
        }
        at = t->end;
        prev = t;
    }
    if (at != st->data_len)
        rc = RLVR_FAIL(RLVR_EFORMAT, "%s: the tensors cover %" PRIu64 " bytes but the data section holds %" PRIu64
                       " (bytes after the last tensor)", st->path, at, st->data_len);
cleanup:
    free(byoff);
    return rc;
}

static int parse_metadata(rlvr_safetensors *st, const json_t *j)
{
    if (!json_is_object(j))
        return RLVR_FAIL(RLVR_EFORMAT, "%s: \"__metadata__\" is not an object", st->path);
    size_t n = json_object_size(j);
    st->meta_keys = calloc(n ? n : 1, sizeof *st->meta_keys);
    st->meta_values = calloc(n ? n : 1, sizeof *st->meta_values);
    if (!st->meta_keys || !st->meta_values)
        return RLVR_FAIL(RLVR_ENOMEM, "%s: out of memory reading __metadata__", st->path);
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)j, key, v) {
        if (!json_is_string(v))
            return RLVR_FAIL(RLVR_EFORMAT, "%s: __metadata__ value of '%s' is not a string", st->path, key);
        st->meta_keys[st->n_meta] = strdup(key);
        st->meta_values[st->n_meta] = strdup(json_string_value(v));
        st->n_meta++; /* counted first so free releases a half-copied pair */
        if (!st->meta_keys[st->n_meta - 1] || !st->meta_values[st->n_meta - 1])
            return RLVR_FAIL(RLVR_ENOMEM, "%s: out of memory reading __metadata__", st->path);
    }
    /* sort keys and values together: sort indices by key, then permute */
    for (size_t i = 1; i < st->n_meta; i++)
        for (size_t k = i; k > 0 && strcmp(st->meta_keys[k - 1], st->meta_keys[k]) > 0; k--) {
            char *tk = st->meta_keys[k], *tv = st->meta_values[k];
            st->meta_keys[k] = st->meta_keys[k - 1];
            st->meta_values[k] = st->meta_values[k - 1];
            st->meta_keys[k - 1] = tk;
            st->meta_values[k - 1] = tv;
        }
    return 0;
}

static int parse(rlvr_safetensors *st)
{
    int rc = 0;
    json_t *root = NULL;
    json_error_t jerr;
    const char *p = st->path;
    if (st->size < 8) {
        rc = RLVR_FAIL(RLVR_EFORMAT, "%s: %" PRIu64 " bytes is too short for a safetensors header length (8 bytes)",
                       p, st->size);
        goto cleanup;
    }
    uint64_t n = ld64(st->map);
    if (n > ST_MAX_HEADER) {
        rc = RLVR_FAIL(RLVR_EFORMAT, "%s: header length %" PRIu64 " exceeds the 100 MB limit", p, n);
        goto cleanup;
    }
    if (n > st->size - 8) {
        rc = RLVR_FAIL(RLVR_EFORMAT, "%s: header length %" PRIu64 " runs past the end of the file (%" PRIu64
                       " bytes)", p, n, st->size);
        goto cleanup;
    }
    st->data_start = 8 + n;
    st->data_len = st->size - st->data_start;
    const char *hdr = (const char *)st->map + 8;
    if (n == 0 || hdr[0] != '{') {
        rc = RLVR_FAIL(RLVR_EFORMAT, "%s: header does not start with '{' (not a safetensors JSON header)", p);
        goto cleanup;
    }
    root = json_loadb(hdr, (size_t)n, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        rc = RLVR_FAIL(RLVR_EFORMAT, "%s: header is not valid JSON: %s (line %d, column %d)", p, jerr.text,
                       jerr.line, jerr.column);
        goto cleanup;
    }
    if (!json_is_object(root)) {
        rc = RLVR_FAIL(RLVR_EFORMAT, "%s: header is not a JSON object", p);
        goto cleanup;
    }
    const json_t *meta = json_object_get(root, "__metadata__");
    if (meta && (rc = parse_metadata(st, meta)) < 0) goto cleanup;
    size_t n_entries = json_object_size(root) - (meta ? 1 : 0);
    st->tensors = calloc(n_entries ? n_entries : 1, sizeof *st->tensors);
    if (!st->tensors) {
        rc = RLVR_FAIL(RLVR_ENOMEM, "%s: out of memory for %zu tensors", p, n_entries);
        goto cleanup;
    }
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v) {
        if (strcmp(key, "__metadata__") == 0) continue;
        rlvr_st_tensor *t = &st->tensors[st->n_tensors];
        t->name = strdup(key);
        st->n_tensors++; /* counted first so free releases what it holds */
        if (!t->name) {
            rc = RLVR_FAIL(RLVR_ENOMEM, "%s: out of memory reading tensor names", p);
            goto cleanup;
        }
        if ((rc = parse_tensor(st, key, v, t)) < 0) goto cleanup;
    }
    if ((rc = check_tiling(st)) < 0) goto cleanup;
    if (st->n_tensors) qsort(st->tensors, st->n_tensors, sizeof *st->tensors, cmp_tensor_name);
cleanup:
    json_decref(root);
    return rc;
}

int rlvr_safetensors_open(rlvr_safetensors **out, const char *path)
{
    rlvr_safetensors *st = NULL;
    rlvr_mapped_file file = {0};
    int rc = 0;
    st = calloc(1, sizeof *st);
    if (!st) return RLVR_FAIL(RLVR_ENOMEM, "out of memory opening %s", path);
    st->path = strdup(path);
    if (!st->path) {
        rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory opening %s", path);
        goto cleanup;
    }
    if ((rc = rlvr_mapped_file_open(&file, path)) < 0) goto cleanup;
    st->map = file.data;
    st->size = file.size;
    rc = parse(st);
    if (rc < 0) goto cleanup;
    *out = st;
    st = NULL;
cleanup:
    rlvr_safetensors_free(st);
    return rc;
}

void rlvr_safetensors_free(rlvr_safetensors *st)
{
    if (!st) return;
    for (size_t i = 0; i < st->n_tensors; i++) {
        free((char *)st->tensors[i].name);
        free((uint64_t *)st->tensors[i].shape);
    }
    free(st->tensors);
    for (size_t i = 0; i < st->n_meta; i++) {
        free(st->meta_keys[i]);
        free(st->meta_values[i]);
    }
    free(st->meta_keys);
    free(st->meta_values);
    rlvr_mapped_file_close(&(rlvr_mapped_file){st->map, st->size});
    free(st->path);
    free(st);
}

size_t rlvr_safetensors_tensor_count(const rlvr_safetensors *st) { return st->n_tensors; }

const rlvr_st_tensor *rlvr_safetensors_tensor_at(const rlvr_safetensors *st, size_t i)
{
    return i < st->n_tensors ? &st->tensors[i] : NULL;
}

const rlvr_st_tensor *rlvr_safetensors_tensor_find(const rlvr_safetensors *st, const char *name)
{
    if (!st->n_tensors) return NULL;
    rlvr_st_tensor key = {.name = name};
    return bsearch(&key, st->tensors, st->n_tensors, sizeof *st->tensors, cmp_tensor_name);
}

const void *rlvr_safetensors_tensor_data(const rlvr_safetensors *st, const rlvr_st_tensor *t)
{
    return st->map + st->data_start + t->begin;
}

size_t rlvr_safetensors_metadata_count(const rlvr_safetensors *st) { return st->n_meta; }

int rlvr_safetensors_metadata_at(const rlvr_safetensors *st, size_t i, const char **key, const char **value)
{
    if (i >= st->n_meta)
        return RLVR_FAIL(RLVR_EINVAL, "%s: metadata entry %zu of %zu", st->path, i, st->n_meta);
    *key = st->meta_keys[i];
    *value = st->meta_values[i];
    return 0;
}

const char *rlvr_safetensors_metadata_find(const rlvr_safetensors *st, const char *key)
{
    if (!st->n_meta) return NULL;
    char *const *k = bsearch(&key, st->meta_keys, st->n_meta, sizeof *st->meta_keys, cmp_str);
    return k ? st->meta_values[k - st->meta_keys] : NULL;
}

bool rlvr_st_dtype_converts(rlvr_st_dtype dtype)
{
    return dtype == RLVR_ST_F32 || dtype == RLVR_ST_F16 || dtype == RLVR_ST_BF16 || dtype == RLVR_ST_F64;
}

int rlvr_safetensors_tensor_f32(const rlvr_safetensors *st, const rlvr_st_tensor *t, float *out)
{
    const unsigned char *src = rlvr_safetensors_tensor_data(st, t);
    uint64_t n = t->n_elements;
    switch (t->dtype) {
    case RLVR_ST_F32:
        for (uint64_t i = 0; i < n; i++) {
            const unsigned char *b = src + 4 * i;
            out[i] = rlvr_f32_from_bits((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                                        (uint32_t)b[3] << 24);
        }
        return 0;
    case RLVR_ST_F16:
        for (uint64_t i = 0; i < n; i++) out[i] = rlvr_half_to_f32((uint16_t)(src[2 * i] | src[2 * i + 1] << 8));
        return 0;
    case RLVR_ST_BF16:
        for (uint64_t i = 0; i < n; i++) out[i] = rlvr_bf16_to_f32((uint16_t)(src[2 * i] | src[2 * i + 1] << 8));
        return 0;
    case RLVR_ST_F64:
        for (uint64_t i = 0; i < n; i++) {
            uint64_t b = ld64(src + 8 * i);
            double d;
            memcpy(&d, &b, sizeof d);
            out[i] = (float)d; /* round to nearest even, as numpy's cast */
        }
        return 0;
    default:
        return RLVR_FAIL(RLVR_EUNSUPPORTED, "%s: tensor '%s' has dtype %s, which rlvr does not convert to float32 "
                         "(it converts F32, F16, BF16, F64)", st->path, t->name, rlvr_st_dtype_name(t->dtype));
    }
}

/* ---- sharded checkpoints --------------------------------------------- */

struct rlvr_st_index {
    char *path;
    size_t n;
    char **names;    /* [n], strcmp order */
    char **shard_of; /* [n], each one of shards[] */
    size_t n_shards;
    char **shards;   /* [n_shards], distinct, strcmp order */
};

static int cmp_pair(const void *a, const void *b)
{
    return strcmp(((char *const *)a)[0], ((char *const *)b)[0]);
}

static int index_parse(rlvr_st_index *ix, const json_t *root)
{
    const char *p = ix->path;
    int rc = 0;
    char **pairs = NULL; /* [2n]: name, shard file name (borrowed from root) */
    char *dir = NULL;
    if (!json_is_object(root)) return RLVR_FAIL(RLVR_EFORMAT, "%s: not a JSON object", p);
    const json_t *wm = json_object_get(root, "weight_map");
    if (!json_is_object(wm)) return RLVR_FAIL(RLVR_EFORMAT, "%s: \"weight_map\" missing or not an object", p);
    size_t n = json_object_size(wm);
    const char *slash = strrchr(p, '/');
    size_t dlen = slash ? (size_t)(slash - p) + 1 : 0;
    dir = strndup(p, dlen);
    pairs = calloc(2 * (n ? n : 1), sizeof *pairs);
    ix->names = calloc(n ? n : 1, sizeof *ix->names);
    ix->shard_of = calloc(n ? n : 1, sizeof *ix->shard_of);
    ix->shards = calloc(n ? n : 1, sizeof *ix->shards);
    if (!dir || !pairs || !ix->names || !ix->shard_of || !ix->shards) {
        rc = RLVR_FAIL(RLVR_ENOMEM, "%s: out of memory for %zu entries", p, n);
        goto cleanup;
    }
    const char *key;
    json_t *v;
    size_t k = 0;
    json_object_foreach((json_t *)wm, key, v) {
        if (!json_is_string(v)) {
            rc = RLVR_FAIL(RLVR_EFORMAT, "%s: weight_map entry '%s' is not a string", p, key);
            goto cleanup;
        }
        const char *f = json_string_value(v);
        if (!*f || strchr(f, '/') || strcmp(f, ".") == 0 || strcmp(f, "..") == 0) {
            rc = RLVR_FAIL(RLVR_EFORMAT, "%s: weight_map entry '%s' names shard \"%s\", which is not a plain file "
                           "name in the index's directory", p, key, f);
            goto cleanup;
        }
        pairs[2 * k] = (char *)key;
        pairs[2 * k + 1] = (char *)f;
        k++;
    }
    if (n) qsort(pairs, n, 2 * sizeof *pairs, cmp_pair);
    for (size_t i = 0; i < n; i++) {
        ix->names[i] = strdup(pairs[2 * i]);
        ix->n = i + 1;
        if (!ix->names[i]) {
            rc = RLVR_FAIL(RLVR_ENOMEM, "%s: out of memory", p);
            goto cleanup;
        }
    }
    /* distinct shard file names, sorted, then joined to the directory */
    for (size_t i = 0; i < n; i++) ix->shards[i] = pairs[2 * i + 1];
    if (n) qsort(ix->shards, n, sizeof *ix->shards, cmp_str);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (m == 0 || strcmp(ix->shards[m - 1], ix->shards[i]) != 0) ix->shards[m++] = ix->shards[i];
    for (size_t i = 0; i < m; i++) {
        const char *f = ix->shards[i];
        char *full = malloc(dlen + strlen(f) + 1);
        if (!full) {
            for (size_t j = i; j < m; j++) ix->shards[j] = NULL;
            ix->n_shards = i;
            rc = RLVR_FAIL(RLVR_ENOMEM, "%s: out of memory", p);
            goto cleanup;
        }
        memcpy(full, dir, dlen);
        strcpy(full + dlen, f);
        ix->shards[i] = full;
        ix->n_shards = i + 1;
    }
    for (size_t i = 0; i < n; i++) {
        const char *f = pairs[2 * i + 1];
        size_t lo = 0, hi = m;
        while (lo < hi) { /* shards[] are dir + name: compare past dir */
            size_t mid = (lo + hi) / 2;
            int c = strcmp(ix->shards[mid] + dlen, f);
            if (c == 0) { lo = mid; break; }
            if (c < 0) lo = mid + 1;
            else hi = mid;
        }
        ix->shard_of[i] = ix->shards[lo];
    }
cleanup:
    free(pairs);
    free(dir);
    return rc;
}

int rlvr_st_index_open(rlvr_st_index **out, const char *path)
{
    rlvr_st_index *ix = NULL;
    json_t *root = NULL;
    json_error_t jerr;
    int rc = 0;
    ix = calloc(1, sizeof *ix);
    if (!ix) return RLVR_FAIL(RLVR_ENOMEM, "out of memory opening %s", path);
    ix->path = strdup(path);
    if (!ix->path) {
        rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory opening %s", path);
        goto cleanup;
    }
    root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        rc = RLVR_FAIL(jerr.line < 0 ? RLVR_EIO : RLVR_EFORMAT, "%s: cannot read the index: %s (line %d, column %d)",
                       path, jerr.text, jerr.line, jerr.column);
        goto cleanup;
    }
    rc = index_parse(ix, root);
    if (rc < 0) goto cleanup;
    *out = ix;
    ix = NULL;
cleanup:
    json_decref(root);
    rlvr_st_index_free(ix);
    return rc;
}

void rlvr_st_index_free(rlvr_st_index *ix)
{
    if (!ix) return;
    for (size_t i = 0; i < ix->n; i++) free(ix->names[i]);
    for (size_t i = 0; i < ix->n_shards; i++) free(ix->shards[i]);
    free(ix->names);
    free(ix->shard_of);
    free(ix->shards);
    free(ix->path);
    free(ix);
}

size_t rlvr_st_index_count(const rlvr_st_index *ix) { return ix->n; }

int rlvr_st_index_at(const rlvr_st_index *ix, size_t i, const char **name, const char **shard)
{
    if (i >= ix->n) return RLVR_FAIL(RLVR_EINVAL, "%s: index entry %zu of %zu", ix->path, i, ix->n);
    *name = ix->names[i];
    *shard = ix->shard_of[i];
    return 0;
}

const char *rlvr_st_index_find(const rlvr_st_index *ix, const char *name)
{
    if (!ix->n) return NULL;
    char *const *k = bsearch(&name, ix->names, ix->n, sizeof *ix->names, cmp_str);
    return k ? ix->shard_of[k - ix->names] : NULL;
}

size_t rlvr_st_index_shard_count(const rlvr_st_index *ix) { return ix->n_shards; }

const char *rlvr_st_index_shard(const rlvr_st_index *ix, size_t i)
{
    return i < ix->n_shards ? ix->shards[i] : NULL;
}
