/* io/gguf.c — GGUF reader and dequantiser (io/gguf.h).
 *
 * Parsing walks a bounds-checked cursor over the mapped file; every length
 * is compared with the bytes that remain before it is used or allocated, so
 * a lying count fails with a message instead of a huge allocation or a read
 * past the end. Dequantisation follows gguf-py's numpy code operation by
 * operation in float32 (this file is compiled with -ffp-contract=off so a
 * multiply and an add are never fused into one rounding). */
#include "io/gguf.h"

#include "core/error.h"
#include "io/fp16.h"
#include "io/mapped.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define GGUF_DEFAULT_ALIGNMENT 32u
/* Arrays of arrays nest; a malicious file could nest deeply enough to
 * exhaust the stack, and no real file nests more than twice. */
#define GGUF_MAX_DEPTH 8

struct rlvr_gguf_value {
    rlvr_gguf_vtype type;
    rlvr_gguf_vtype elem_type;   /* arrays */
    uint64_t count;              /* arrays: elements; strings: bytes */
    const unsigned char *p;      /* scalars and strings: the payload;
                                    arrays of fixed-size elements: element 0 */
    rlvr_gguf_value *elems;      /* arrays of strings or arrays: [count] */
    const rlvr_gguf *g;          /* for error messages */
    const char *key;             /* the key this value belongs to */
};

struct name_ix {
    const char *name; /* first: cmp_name compares it */
    size_t i;
};

struct rlvr_gguf {
    char *path;
    unsigned char *map;
    uint64_t size;
    uint32_t version;
    uint32_t alignment;
    uint64_t data_start;
    size_t n_kv;
    char **keys;                 /* [n_kv] NUL-terminated copies */
    rlvr_gguf_value *values;     /* [n_kv] */
    size_t n_tensors;
    rlvr_gguf_tensor *tensors;   /* [n_tensors] */
    /* names in strcmp order, for duplicate checks and lookups in
     * O(log n): a hostile file may hold millions of entries */
    struct name_ix *key_sorted;  /* [n_kv] */
    const rlvr_gguf_tensor **tensor_sorted; /* [n_tensors] */
};

/* ---- type tables ------------------------------------------------------ */

typedef struct {
    const char *name;
    uint32_t block;      /* elements per block */
    uint32_t type_size;  /* bytes per block */
} ggml_type_info;

/* Every ggml type gguf-py 0.19 knows, so files holding types rlvr does not
 * dequantise still open; holes are retired codes. */
static const ggml_type_info ggml_types[] = {
    [0] = {"F32", 1, 4},        [1] = {"F16", 1, 2},
    [2] = {"Q4_0", 32, 18},     [3] = {"Q4_1", 32, 20},
    [6] = {"Q5_0", 32, 22},     [7] = {"Q5_1", 32, 24},
    [8] = {"Q8_0", 32, 34},     [9] = {"Q8_1", 32, 40},
    [10] = {"Q2_K", 256, 84},   [11] = {"Q3_K", 256, 110},
    [12] = {"Q4_K", 256, 144},  [13] = {"Q5_K", 256, 176},
    [14] = {"Q6_K", 256, 210},  [15] = {"Q8_K", 256, 292},
    [16] = {"IQ2_XXS", 256, 66}, [17] = {"IQ2_XS", 256, 74},
    [18] = {"IQ3_XXS", 256, 98}, [19] = {"IQ1_S", 256, 50},
    [20] = {"IQ4_NL", 32, 18},  [21] = {"IQ3_S", 256, 110},
    [22] = {"IQ2_S", 256, 82},  [23] = {"IQ4_XS", 256, 136},
    [24] = {"I8", 1, 1},        [25] = {"I16", 1, 2},
    [26] = {"I32", 1, 4},       [27] = {"I64", 1, 8},
    [28] = {"F64", 1, 8},       [29] = {"IQ1_M", 256, 56},
    [30] = {"BF16", 1, 2},      [34] = {"TQ1_0", 256, 54},
    [35] = {"TQ2_0", 256, 66},  [39] = {"MXFP4", 32, 17},
    [40] = {"NVFP4", 64, 36},   [41] = {"Q1_0", 128, 18},
};
#define N_GGML_TYPES (sizeof ggml_types / sizeof ggml_types[0])

static const ggml_type_info *type_info(uint32_t type)
{
    if (type >= N_GGML_TYPES || !ggml_types[type].name) return NULL;
    return &ggml_types[type];
}

const char *rlvr_gguf_type_name(uint32_t type)
{
    const ggml_type_info *ti = type_info(type);
    return ti ? ti->name : "unknown";
}

static const char *vtype_name(uint32_t t)
{
    static const char *names[] = {"u8", "i8", "u16", "i16", "u32", "i32", "f32",
                                  "bool", "string", "array", "u64", "i64", "f64"};
    return t < sizeof names / sizeof names[0] ? names[t] : "unknown";
}

/* Bytes of one value of a fixed-size type; 0 for string and array. */
static uint64_t vtype_size(uint32_t t)
{
    switch (t) {
    case RLVR_GGUF_U8: case RLVR_GGUF_I8: case RLVR_GGUF_BOOL: return 1;
    case RLVR_GGUF_U16: case RLVR_GGUF_I16: return 2;
    case RLVR_GGUF_U32: case RLVR_GGUF_I32: case RLVR_GGUF_F32: return 4;
    case RLVR_GGUF_U64: case RLVR_GGUF_I64: case RLVR_GGUF_F64: return 8;
    default: return 0;
    }
}

/* ---- little-endian loads (unaligned-safe) ----------------------------- */

static uint16_t ld16(const unsigned char *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static uint32_t ld32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t ld64(const unsigned char *p) { return ld32(p) | (uint64_t)ld32(p + 4) << 32; }

/* ---- parsing ---------------------------------------------------------- */

typedef struct {
    const rlvr_gguf *g;
    uint64_t pos;
    const char *key; /* the metadata key being read, for messages; or NULL */
} cursor;

#define KEYCTX(c) (c)->key ? "metadata key '" : "", (c)->key ? (c)->key : "", (c)->key ? "': " : ""

static int need(cursor *c, uint64_t n, const char *what)
{
    if (n > c->g->size - c->pos)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: %s%s%s%s at byte %" PRIu64 " needs %" PRIu64
                         " bytes but the file has %" PRIu64 " bytes (truncated or corrupt)",
                         c->g->path, KEYCTX(c), what, c->pos, n, c->g->size);
    return 0;
}

static int rd32(cursor *c, uint32_t *v, const char *what)
{
    RLVR_TRY(need(c, 4, what));
    *v = ld32(c->g->map + c->pos);
    c->pos += 4;
    return 0;
}

static int rd64(cursor *c, uint64_t *v, const char *what)
{
    RLVR_TRY(need(c, 8, what));
    *v = ld64(c->g->map + c->pos);
    c->pos += 8;
    return 0;
}

/* A string: u64 length then bytes. */
static int rdstr(cursor *c, const unsigned char **s, uint64_t *len, const char *what)
{
    uint64_t n;
    RLVR_TRY(rd64(c, &n, what));
    if (n > c->g->size - c->pos)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: %s%s%s%s at byte %" PRIu64 " claims %" PRIu64
                         " bytes but only %" PRIu64 " remain in the file (truncated or corrupt)",
                         c->g->path, KEYCTX(c), what, c->pos - 8, n, c->g->size - c->pos);
    *s = c->g->map + c->pos;
    *len = n;
    c->pos += n;
    return 0;
}

static int dup_name(const rlvr_gguf *g, const unsigned char *s, uint64_t len,
                    const char *what, char **out)
{
    char *copy = NULL;
    if (memchr(s, 0, len))
        return RLVR_FAIL(RLVR_EFORMAT, "%s: %s '%.*s' contains a NUL byte", g->path, what,
                         (int)(len > 200 ? 200 : len), (const char *)s);
    copy = malloc(len + 1);
    if (!copy) return RLVR_FAIL(RLVR_ENOMEM, "%s: out of memory copying a %s", g->path, what);
    memcpy(copy, s, len);
    copy[len] = 0;
    *out = copy;
    return 0;
}

static void value_clear(rlvr_gguf_value *v)
{
    if (v->elems) {
        for (uint64_t i = 0; i < v->count; i++) value_clear(&v->elems[i]);
        free(v->elems);
        v->elems = NULL;
    }
}

/* Parses a value of type `type` at the cursor into *v. On failure *v holds
 * only what value_clear frees. */
static int parse_value(cursor *c, uint32_t type, const char *key, int depth, rlvr_gguf_value *v)
{
    memset(v, 0, sizeof *v);
    v->type = (rlvr_gguf_vtype)type;
    v->g = c->g;
    v->key = key;
    uint64_t fixed = vtype_size(type);
    if (fixed) {
        RLVR_TRY(need(c, fixed, "a metadata value"));
        v->p = c->g->map + c->pos;
        if (type == RLVR_GGUF_BOOL && *v->p > 1)
            return RLVR_FAIL(RLVR_EFORMAT, "%s: metadata key '%s': bool value %u is neither 0 nor 1",
                             c->g->path, key, *v->p);
        c->pos += fixed;
        return 0;
    }
    if (type == RLVR_GGUF_STRING) return rdstr(c, &v->p, &v->count, "a metadata string");
    if (type != RLVR_GGUF_ARRAY)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: metadata key '%s' has unknown value type %" PRIu32,
                         c->g->path, key, type);
    if (depth >= GGUF_MAX_DEPTH)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: metadata key '%s' nests arrays more than %d deep",
                         c->g->path, key, GGUF_MAX_DEPTH);
    uint32_t et;
    uint64_t n;
    RLVR_TRY(rd32(c, &et, "an array's element type"));
    RLVR_TRY(rd64(c, &n, "an array's length"));
    v->count = n;
    v->elem_type = (rlvr_gguf_vtype)et;
    uint64_t esize = vtype_size(et);
    uint64_t remain = c->g->size - c->pos;
    if (esize) {
        if (n > remain / esize)
            return RLVR_FAIL(RLVR_EFORMAT, "%s: metadata key '%s': array of %" PRIu64 " %s needs %s bytes "
                             "but only %" PRIu64 " remain in the file", c->g->path, key, n,
                             vtype_name(et), n > UINT64_MAX / esize ? "more than 2^64" : "more", remain);
        v->p = c->g->map + c->pos;
        if (et == RLVR_GGUF_BOOL)
            for (uint64_t i = 0; i < n; i++)
                if (v->p[i] > 1)
                    return RLVR_FAIL(RLVR_EFORMAT, "%s: metadata key '%s': bool element %" PRIu64
                                     " is %u, neither 0 nor 1", c->g->path, key, i, v->p[i]);
        c->pos += n * esize;
        return 0;
    }
    if (et != RLVR_GGUF_STRING && et != RLVR_GGUF_ARRAY)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: metadata key '%s': array of unknown value type %" PRIu32,
                         c->g->path, key, et);
    /* each string takes at least its 8-byte length, each array 12 bytes */
    uint64_t min = et == RLVR_GGUF_STRING ? 8 : 12;
    if (n > remain / min)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: metadata key '%s': array claims %" PRIu64 " %ss "
                         "but only %" PRIu64 " bytes remain in the file", c->g->path, key, n,
                         vtype_name(et), remain);
    v->elems = calloc(n ? n : 1, sizeof *v->elems);
    if (!v->elems)
        return RLVR_FAIL(RLVR_ENOMEM, "%s: out of memory for metadata array '%s'", c->g->path, key);
    /* on failure, elements past i are still zeroed (calloc), so
     * value_clear of the whole array is safe */
    for (uint64_t i = 0; i < n; i++) RLVR_TRY(parse_value(c, et, key, depth + 1, &v->elems[i]));
    return 0;
}

static int parse_tensor_info(cursor *c, size_t i, rlvr_gguf_tensor *t)
{
    const rlvr_gguf *g = c->g;
    const unsigned char *s;
    uint64_t len;
    char *name = NULL;
    RLVR_TRY(rdstr(c, &s, &len, "a tensor name"));
    RLVR_TRY(dup_name(g, s, len, "tensor name", &name));
    t->name = name;
    RLVR_TRY(rd32(c, &t->n_dims, "a tensor's dimension count"));
    if (t->n_dims < 1 || t->n_dims > 4)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: tensor %zu '%s' has %" PRIu32 " dimensions (1 to 4 allowed)",
                         g->path, i, name, t->n_dims);
    uint64_t n = 1;
    for (uint32_t d = 0; d < 4; d++) t->dims[d] = 1;
    for (uint32_t d = 0; d < t->n_dims; d++) {
        RLVR_TRY(rd64(c, &t->dims[d], "a tensor dimension"));
        if (t->dims[d] > (uint64_t)INT64_MAX || (t->dims[d] && n > (uint64_t)INT64_MAX / t->dims[d]))
            return RLVR_FAIL(RLVR_EFORMAT, "%s: tensor '%s': dimensions overflow a 64-bit element count",
                             g->path, name);
        n *= t->dims[d];
    }
    t->n_elements = n;
    RLVR_TRY(rd32(c, &t->type, "a tensor type"));
    const ggml_type_info *ti = type_info(t->type);
    if (!ti)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: tensor '%s' has unknown tensor type %" PRIu32,
                         g->path, name, t->type);
    if (t->dims[0] % ti->block)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: tensor '%s' of type %s has rows of %" PRIu64
                         " elements, not a multiple of the block size %" PRIu32,
                         g->path, name, ti->name, t->dims[0], ti->block);
    if (n / ti->block > UINT64_MAX / ti->type_size)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: tensor '%s' has more than 2^64 bytes", g->path, name);
    t->n_bytes = n / ti->block * ti->type_size;
    RLVR_TRY(rd64(c, &t->offset, "a tensor offset"));
    return 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

static int cmp_by_offset(const void *a, const void *b)
{
    const rlvr_gguf_tensor *x = *(const rlvr_gguf_tensor *const *)a;
    const rlvr_gguf_tensor *y = *(const rlvr_gguf_tensor *const *)b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static int check_tensors(rlvr_gguf *g)
{
    const rlvr_gguf_tensor **order = NULL;
    int rc = 0;
    if (g->n_tensors == 0) return 0;
    order = calloc(g->n_tensors, sizeof *order);
    if (!order) return RLVR_FAIL(RLVR_ENOMEM, "%s: out of memory checking tensors", g->path);
    for (size_t i = 0; i < g->n_tensors; i++) {
        const rlvr_gguf_tensor *t = &g->tensors[i];
        order[i] = t;
        if (t->offset % g->alignment) {
            rc = RLVR_FAIL(RLVR_EFORMAT, "%s: tensor '%s': offset %" PRIu64 " is not a multiple of "
                           "the alignment %" PRIu32, g->path, t->name, t->offset, g->alignment);
            goto cleanup;
        }
        uint64_t avail = g->size - g->data_start;
        if (t->offset > avail || t->n_bytes > avail - t->offset) {
            uint64_t end = sat_add(sat_add(g->data_start, t->offset), t->n_bytes);
            rc = RLVR_FAIL(RLVR_EFORMAT, "%s: tensor '%s': data ends at byte %s%" PRIu64 " but the file "
                           "has %" PRIu64 " bytes", g->path, t->name, end == UINT64_MAX ? "beyond " : "",
                           end, g->size);
            goto cleanup;
        }
    }
    qsort(order, g->n_tensors, sizeof *order, cmp_by_offset);
    for (size_t i = 1; i < g->n_tensors; i++) {
        const rlvr_gguf_tensor *a = order[i - 1], *b = order[i];
        if (a->offset + a->n_bytes > b->offset) {
            rc = RLVR_FAIL(RLVR_EFORMAT, "%s: tensors '%s' (bytes %" PRIu64 "..%" PRIu64 " of the data) and "
                           "'%s' (from byte %" PRIu64 ") overlap", g->path, a->name, a->offset,
                           a->offset + a->n_bytes, b->name, b->offset);
            goto cleanup;
        }
    }
cleanup:
    free(order);
    return rc;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(((const struct name_ix *)a)->name, ((const struct name_ix *)b)->name);
}

static int cmp_tensor_name(const void *a, const void *b)
{
    return strcmp((*(const rlvr_gguf_tensor *const *)a)->name, (*(const rlvr_gguf_tensor *const *)b)->name);
}

/* Fills the sorted name indexes and refuses duplicate names. */
static int sort_names(rlvr_gguf *g)
{
    g->key_sorted = calloc(g->n_kv ? g->n_kv : 1, sizeof *g->key_sorted);
    g->tensor_sorted = calloc(g->n_tensors ? g->n_tensors : 1, sizeof *g->tensor_sorted);
    if (!g->key_sorted || !g->tensor_sorted)
        return RLVR_FAIL(RLVR_ENOMEM, "%s: out of memory indexing names", g->path);
    for (size_t i = 0; i < g->n_kv; i++) g->key_sorted[i] = (struct name_ix){g->keys[i], i};
    for (size_t i = 0; i < g->n_tensors; i++) g->tensor_sorted[i] = &g->tensors[i];
    if (g->n_kv) qsort(g->key_sorted, g->n_kv, sizeof *g->key_sorted, cmp_name);
    if (g->n_tensors) qsort(g->tensor_sorted, g->n_tensors, sizeof *g->tensor_sorted, cmp_tensor_name);
    for (size_t i = 1; i < g->n_kv; i++)
        if (!strcmp(g->key_sorted[i - 1].name, g->key_sorted[i].name))
            return RLVR_FAIL(RLVR_EFORMAT, "%s: metadata key '%s' appears twice", g->path,
                             g->key_sorted[i].name);
    for (size_t i = 1; i < g->n_tensors; i++)
        if (!strcmp(g->tensor_sorted[i - 1]->name, g->tensor_sorted[i]->name))
            return RLVR_FAIL(RLVR_EFORMAT, "%s: tensor name '%s' appears twice", g->path,
                             g->tensor_sorted[i]->name);
    return 0;
}

static int parse(rlvr_gguf *g)
{
    cursor c = {g, 0, NULL};
    uint32_t magic;
    uint64_t n_tensors, n_kv;
    if (g->size < 4 || memcmp(g->map, "GGUF", 4))
        return RLVR_FAIL(RLVR_EFORMAT, "%s: not a GGUF file (no \"GGUF\" magic at the start)", g->path);
    RLVR_TRY(rd32(&c, &magic, "the magic"));
    RLVR_TRY(rd32(&c, &g->version, "the version"));
    if (g->version != 2 && g->version != 3)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: GGUF version %" PRIu32 " (only 2 and 3 are read)%s",
                         g->path, g->version,
                         g->version > 0xffff ? "; a byte-swapped version means a big-endian file, "
                                               "which rlvr does not read" : "");
    RLVR_TRY(rd64(&c, &n_tensors, "the tensor count"));
    RLVR_TRY(rd64(&c, &n_kv, "the metadata count"));
    uint64_t remain = g->size - c.pos;
    /* a key-value pair takes at least 13 bytes, a tensor info at least 32 */
    if (n_kv > remain / 13)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: header claims %" PRIu64 " metadata entries but the file "
                         "has only %" PRIu64 " bytes after the header", g->path, n_kv, remain);
    if (n_tensors > remain / 32)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: header claims %" PRIu64 " tensors but the file has only %"
                         PRIu64 " bytes after the header", g->path, n_tensors, remain);
    g->keys = calloc(n_kv ? n_kv : 1, sizeof *g->keys);
    g->values = calloc(n_kv ? n_kv : 1, sizeof *g->values);
    if (!g->keys || !g->values) return RLVR_FAIL(RLVR_ENOMEM, "%s: out of memory for metadata", g->path);
    g->alignment = GGUF_DEFAULT_ALIGNMENT;
    for (uint64_t i = 0; i < n_kv; i++) {
        const unsigned char *s;
        uint64_t len;
        uint32_t type;
        RLVR_TRY(rdstr(&c, &s, &len, "a metadata key"));
        RLVR_TRY(dup_name(g, s, len, "metadata key", &g->keys[i]));
        g->n_kv = i + 1; /* so rlvr_gguf_free frees this key and its value */
        c.key = g->keys[i];
        RLVR_TRY(rd32(&c, &type, "the value type"));
        RLVR_TRY(parse_value(&c, type, g->keys[i], 0, &g->values[i]));
        c.key = NULL;
    }
    const rlvr_gguf_value *al = NULL; /* the sorted index does not exist yet */
    for (size_t i = 0; i < g->n_kv && !al; i++)
        if (!strcmp(g->keys[i], "general.alignment")) al = &g->values[i];
    if (al) {
        if (al->type != RLVR_GGUF_U32)
            return RLVR_FAIL(RLVR_EFORMAT, "%s: general.alignment is %s, not u32", g->path,
                             vtype_name(al->type));
        uint32_t a = ld32(al->p);
        if (a == 0 || (a & (a - 1)))
            return RLVR_FAIL(RLVR_EFORMAT, "%s: general.alignment %" PRIu32 " is not a power of two",
                             g->path, a);
        g->alignment = a;
    }
    g->tensors = calloc(n_tensors ? n_tensors : 1, sizeof *g->tensors);
    if (!g->tensors) return RLVR_FAIL(RLVR_ENOMEM, "%s: out of memory for tensor infos", g->path);
    for (uint64_t i = 0; i < n_tensors; i++) {
        g->n_tensors = i + 1;
        RLVR_TRY(parse_tensor_info(&c, i, &g->tensors[i]));
    }
    uint64_t pad = (g->alignment - c.pos % g->alignment) % g->alignment;
    g->data_start = c.pos + pad;
    if (g->data_start > g->size) {
        if (n_tensors)
            return RLVR_FAIL(RLVR_EFORMAT, "%s: the data section would start at byte %" PRIu64
                             " but the file has %" PRIu64 " bytes", g->path, g->data_start, g->size);
        g->data_start = g->size;
    }
    RLVR_TRY(check_tensors(g));
    return sort_names(g);
}

int rlvr_gguf_open(rlvr_gguf **out, const char *path)
{
    rlvr_gguf *g = NULL;
    rlvr_mapped_file file = {0};
    int rc = 0;
    g = calloc(1, sizeof *g);
    if (!g) return RLVR_FAIL(RLVR_ENOMEM, "out of memory opening %s", path);
    g->path = strdup(path);
    if (!g->path) {
        rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory opening %s", path);
        goto cleanup;
    }
    if ((rc = rlvr_mapped_file_open(&file, path)) < 0) goto cleanup;
    g->map = file.data;
    g->size = file.size;
    if (g->size < 24) {
        rc = RLVR_FAIL(RLVR_EFORMAT, "%s: %" PRIu64 " bytes is too short for a GGUF header (24 bytes)",
                       path, g->size);
        goto cleanup;
    }
    rc = parse(g);
    if (rc < 0) goto cleanup;
    *out = g;
    g = NULL;
cleanup:
    rlvr_gguf_free(g);
    return rc;
}

void rlvr_gguf_free(rlvr_gguf *g)
{
    if (!g) return;
    for (size_t i = 0; i < g->n_kv; i++) {
        free(g->keys[i]);
        value_clear(&g->values[i]);
    }
    free(g->keys);
    free(g->values);
    for (size_t i = 0; i < g->n_tensors; i++) free((char *)g->tensors[i].name);
    free(g->tensors);
    free(g->key_sorted);
    free(g->tensor_sorted);
    rlvr_mapped_file_close(&(rlvr_mapped_file){g->map, g->size});
    free(g->path);
    free(g);
}

uint32_t rlvr_gguf_version(const rlvr_gguf *g) { return g->version; }
uint32_t rlvr_gguf_alignment(const rlvr_gguf *g) { return g->alignment; }

/* ---- metadata access -------------------------------------------------- */

size_t rlvr_gguf_kv_count(const rlvr_gguf *g) { return g->n_kv; }
const char *rlvr_gguf_kv_key(const rlvr_gguf *g, size_t i) { return i < g->n_kv ? g->keys[i] : NULL; }
const rlvr_gguf_value *rlvr_gguf_kv_value(const rlvr_gguf *g, size_t i)
{
    return i < g->n_kv ? &g->values[i] : NULL;
}

const rlvr_gguf_value *rlvr_gguf_find(const rlvr_gguf *g, const char *key)
{
    struct name_ix want = {key, 0};
    const struct name_ix *hit =
        g->key_sorted ? bsearch(&want, g->key_sorted, g->n_kv, sizeof *g->key_sorted, cmp_name) : NULL;
    return hit ? &g->values[hit->i] : NULL;
}

rlvr_gguf_vtype rlvr_gguf_value_type(const rlvr_gguf_value *v) { return v->type; }
rlvr_gguf_vtype rlvr_gguf_array_type(const rlvr_gguf_value *v) { return v->elem_type; }
uint64_t rlvr_gguf_array_len(const rlvr_gguf_value *v) { return v->type == RLVR_GGUF_ARRAY ? v->count : 0; }

/* A scalar to convert: its type and payload, with context for messages. */
typedef struct {
    uint32_t type;
    const unsigned char *p;
    const rlvr_gguf_value *owner;
    int64_t elem; /* -1: the value itself; else the array element */
} scalar;

static int wrong_type(const scalar *s, const char *want)
{
    const rlvr_gguf_value *v = s->owner;
    if (s->elem >= 0)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: metadata key '%s': element %" PRId64 " is %s, which does not "
                         "convert to %s without loss", v->g->path, v->key, s->elem, vtype_name(s->type), want);
    return RLVR_FAIL(RLVR_EFORMAT, "%s: metadata key '%s' is %s, which does not convert to %s without loss",
                     v->g->path, v->key, vtype_name(s->type), want);
}

static int sc_u64(const scalar *s, uint64_t *out, int max_bits, const char *want)
{
    switch (s->type) {
    case RLVR_GGUF_U8: *out = s->p[0]; return 0;
    case RLVR_GGUF_U16: *out = ld16(s->p); return 0;
    case RLVR_GGUF_U32: *out = ld32(s->p); return 0;
    case RLVR_GGUF_U64: if (max_bits >= 64) { *out = ld64(s->p); return 0; } break;
    default: break;
    }
    return wrong_type(s, want);
}

static int sc_i64(const scalar *s, int64_t *out, int max_bits, const char *want)
{
    switch (s->type) {
    case RLVR_GGUF_I8: *out = (int8_t)s->p[0]; return 0;
    case RLVR_GGUF_I16: *out = (int16_t)ld16(s->p); return 0;
    case RLVR_GGUF_I32: *out = (int32_t)ld32(s->p); return 0;
    case RLVR_GGUF_I64: if (max_bits >= 64) { *out = (int64_t)ld64(s->p); return 0; } break;
    case RLVR_GGUF_U8: *out = s->p[0]; return 0;
    case RLVR_GGUF_U16: *out = ld16(s->p); return 0;
    case RLVR_GGUF_U32: if (max_bits >= 64) { *out = ld32(s->p); return 0; } break;
    default: break;
    }
    return wrong_type(s, want);
}

static int sc_f64(const scalar *s, double *out, int f32_only, const char *want)
{
    if (s->type == RLVR_GGUF_F32) {
        *out = rlvr_f32_from_bits(ld32(s->p));
        return 0;
    }
    if (s->type == RLVR_GGUF_F64 && !f32_only) {
        uint64_t b = ld64(s->p);
        memcpy(out, &b, sizeof *out);
        return 0;
    }
    return wrong_type(s, want);
}

static int sc_u32c(const scalar *s, uint32_t *out)
{
    uint64_t v = 0;
    RLVR_TRY(sc_u64(s, &v, 32, "u32"));
    *out = (uint32_t)v;
    return 0;
}
static int sc_u64c(const scalar *s, uint64_t *out) { return sc_u64(s, out, 64, "u64"); }
static int sc_i32c(const scalar *s, int32_t *out)
{
    int64_t v = 0;
    RLVR_TRY(sc_i64(s, &v, 32, "i32"));
    *out = (int32_t)v;
    return 0;
}
static int sc_i64c(const scalar *s, int64_t *out) { return sc_i64(s, out, 64, "i64"); }
static int sc_f32c(const scalar *s, float *out)
{
    double v = 0;
    RLVR_TRY(sc_f64(s, &v, 1, "f32"));
    *out = (float)v;
    return 0;
}
static int sc_f64c(const scalar *s, double *out) { return sc_f64(s, out, 0, "f64"); }
static int sc_boolc(const scalar *s, int *out)
{
    if (s->type != RLVR_GGUF_BOOL) return wrong_type(s, "bool");
    *out = s->p[0] != 0;
    return 0;
}

static scalar value_scalar(const rlvr_gguf_value *v)
{
    scalar s = {v->type, v->p, v, -1};
    return s;
}

static int elem_check(const rlvr_gguf_value *arr, uint64_t i)
{
    if (arr->type != RLVR_GGUF_ARRAY)
        return RLVR_FAIL(RLVR_EINVAL, "%s: metadata key '%s' is %s, not an array", arr->g->path, arr->key,
                         vtype_name(arr->type));
    if (i >= arr->count)
        return RLVR_FAIL(RLVR_EINVAL, "%s: metadata key '%s': element %" PRIu64 " of an array of %" PRIu64,
                         arr->g->path, arr->key, i, arr->count);
    return 0;
}

static int elem_scalar(const rlvr_gguf_value *arr, uint64_t i, scalar *s)
{
    RLVR_TRY(elem_check(arr, i));
    if (arr->elems) {
        *s = value_scalar(&arr->elems[i]);
        s->elem = (int64_t)i;
        return 0;
    }
    s->type = arr->elem_type;
    s->p = arr->p + i * vtype_size(arr->elem_type);
    s->owner = arr;
    s->elem = (int64_t)i;
    return 0;
}

static int not_found(const rlvr_gguf *g, const char *key)
{
    return RLVR_FAIL(RLVR_ENOTFOUND, "%s: no metadata key '%s'", g->path, key);
}

#define GGUF_GETTERS(suffix, ctype, conv)                                            \
    int rlvr_gguf_value_##suffix(const rlvr_gguf_value *v, ctype *out)                \
    {                                                                                \
        scalar s = value_scalar(v);                                                  \
        return conv(&s, out);                                                        \
    }                                                                                \
    int rlvr_gguf_get_##suffix(const rlvr_gguf *g, const char *key, ctype *out)       \
    {                                                                                \
        const rlvr_gguf_value *v = rlvr_gguf_find(g, key);                           \
        if (!v) return not_found(g, key);                                            \
        return rlvr_gguf_value_##suffix(v, out);                                     \
    }                                                                                \
    int rlvr_gguf_array_##suffix(const rlvr_gguf_value *arr, uint64_t i, ctype *out) \
    {                                                                                \
        scalar s;                                                                    \
        RLVR_TRY(elem_scalar(arr, i, &s));                                           \
        return conv(&s, out);                                                        \
    }

GGUF_GETTERS(u32, uint32_t, sc_u32c)
GGUF_GETTERS(i32, int32_t, sc_i32c)
GGUF_GETTERS(u64, uint64_t, sc_u64c)
GGUF_GETTERS(i64, int64_t, sc_i64c)
GGUF_GETTERS(f32, float, sc_f32c)
GGUF_GETTERS(f64, double, sc_f64c)
GGUF_GETTERS(bool, int, sc_boolc)

int rlvr_gguf_value_string(const rlvr_gguf_value *v, const char **s, size_t *len)
{
    if (v->type != RLVR_GGUF_STRING) {
        scalar sc = value_scalar(v);
        return wrong_type(&sc, "string");
    }
    *s = (const char *)v->p;
    *len = (size_t)v->count;
    return 0;
}

int rlvr_gguf_get_string(const rlvr_gguf *g, const char *key, const char **s, size_t *len)
{
    const rlvr_gguf_value *v = rlvr_gguf_find(g, key);
    if (!v) return not_found(g, key);
    return rlvr_gguf_value_string(v, s, len);
}

int rlvr_gguf_array_string(const rlvr_gguf_value *arr, uint64_t i, const char **s, size_t *len)
{
    RLVR_TRY(elem_check(arr, i));
    if (arr->elem_type != RLVR_GGUF_STRING) {
        scalar sc = {arr->elem_type, NULL, arr, (int64_t)i};
        return wrong_type(&sc, "string");
    }
    return rlvr_gguf_value_string(&arr->elems[i], s, len);
}

int rlvr_gguf_get_array(const rlvr_gguf *g, const char *key, const rlvr_gguf_value **out)
{
    const rlvr_gguf_value *v = rlvr_gguf_find(g, key);
    if (!v) return not_found(g, key);
    if (v->type != RLVR_GGUF_ARRAY)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: metadata key '%s' is %s, not an array", g->path, key,
                         vtype_name(v->type));
    *out = v;
    return 0;
}

int rlvr_gguf_array_array(const rlvr_gguf_value *arr, uint64_t i, const rlvr_gguf_value **out)
{
    RLVR_TRY(elem_check(arr, i));
    if (arr->elem_type != RLVR_GGUF_ARRAY)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: metadata key '%s': elements are %s, not arrays", arr->g->path,
                         arr->key, vtype_name(arr->elem_type));
    *out = &arr->elems[i];
    return 0;
}

/* ---- tensors ---------------------------------------------------------- */

size_t rlvr_gguf_tensor_count(const rlvr_gguf *g) { return g->n_tensors; }
const rlvr_gguf_tensor *rlvr_gguf_tensor_at(const rlvr_gguf *g, size_t i)
{
    return i < g->n_tensors ? &g->tensors[i] : NULL;
}

const rlvr_gguf_tensor *rlvr_gguf_tensor_find(const rlvr_gguf *g, const char *name)
{
    rlvr_gguf_tensor key = {.name = name};
    const rlvr_gguf_tensor *kp = &key;
    const rlvr_gguf_tensor **hit =
        g->tensor_sorted ? bsearch(&kp, g->tensor_sorted, g->n_tensors, sizeof *g->tensor_sorted, cmp_tensor_name)
                         : NULL;
    return hit ? *hit : NULL;
}

const void *rlvr_gguf_tensor_data(const rlvr_gguf *g, const rlvr_gguf_tensor *t)
{
    return g->map + g->data_start + t->offset;
}

/* ---- dequantisation ----------------------------------------------------
 * One function per type, one block at a time; each mirrors the numpy
 * expression in gguf-py's quants.py (the same products, in the same order,
 * each rounded to float32). */

static void deq_q8_0(const unsigned char *b, float *y)
{
    float d = rlvr_half_to_f32(ld16(b));
    for (int i = 0; i < 32; i++) y[i] = (float)(int8_t)b[2 + i] * d;
}

static void deq_q4_0(const unsigned char *b, float *y)
{
    float d = rlvr_half_to_f32(ld16(b));
    const unsigned char *qs = b + 2;
    for (int i = 0; i < 32; i++) {
        int q = ((qs[i % 16] >> (4 * (i / 16))) & 0x0f) - 8;
        y[i] = d * (float)q;
    }
}

static void deq_q4_1(const unsigned char *b, float *y)
{
    float d = rlvr_half_to_f32(ld16(b));
    float m = rlvr_half_to_f32(ld16(b + 2));
    const unsigned char *qs = b + 4;
    for (int i = 0; i < 32; i++) {
        float q = (float)((qs[i % 16] >> (4 * (i / 16))) & 0x0f);
        y[i] = d * q + m;
    }
}

/* The 8 six-bit scales and mins of Q4_K and Q5_K, packed into 12 bytes. */
static void k_scale_min(const unsigned char *s, uint8_t sc[8], uint8_t mn[8])
{
    for (int j = 0; j < 4; j++) {
        sc[j] = s[j] & 0x3f;
        mn[j] = s[4 + j] & 0x3f;
        sc[4 + j] = (uint8_t)((s[8 + j] & 0x0f) | ((s[j] >> 2) & 0x30));
        mn[4 + j] = (uint8_t)((s[8 + j] >> 4) | ((s[4 + j] >> 2) & 0x30));
    }
}

/* Q4_K block (144 bytes): d f16, dmin f16, scales[12], qs[128]. */
static void deq_q4_k(const unsigned char *b, float *y)
{
    float d = rlvr_half_to_f32(ld16(b));
    float dmin = rlvr_half_to_f32(ld16(b + 2));
    uint8_t sc[8], mn[8];
    k_scale_min(b + 4, sc, mn);
    const unsigned char *qs = b + 16;
    for (int j = 0; j < 8; j++) {
        float ds = d * (float)sc[j];
        float dm = dmin * (float)mn[j];
        for (int k = 0; k < 32; k++) {
            float q = (float)((qs[(j / 2) * 32 + k] >> (4 * (j % 2))) & 0x0f);
            y[j * 32 + k] = ds * q - dm;
        }
    }
}

/* Q5_K block (176 bytes): d, dmin, scales[12], qh[32], qs[128]. */
static void deq_q5_k(const unsigned char *b, float *y)
{
    float d = rlvr_half_to_f32(ld16(b));
    float dmin = rlvr_half_to_f32(ld16(b + 2));
    uint8_t sc[8], mn[8];
    k_scale_min(b + 4, sc, mn);
    const unsigned char *qh = b + 16, *qs = b + 48;
    for (int j = 0; j < 8; j++) {
        float ds = d * (float)sc[j];
        float dm = dmin * (float)mn[j];
        for (int k = 0; k < 32; k++) {
            int lo = (qs[(j / 2) * 32 + k] >> (4 * (j % 2))) & 0x0f;
            int hi = (qh[k] >> j) & 1;
            y[j * 32 + k] = ds * (float)(lo | hi << 4) - dm;
        }
    }
}

/* Q6_K block (210 bytes): ql[128], qh[64], scales[16] (int8), d f16. */
static void deq_q6_k(const unsigned char *b, float *y)
{
    const unsigned char *ql = b, *qh = b + 128, *sc = b + 192;
    float d = rlvr_half_to_f32(ld16(b + 208));
    for (int i = 0; i < 256; i++) {
        int h = i / 128, r = i % 128;
        int lo = (ql[h * 64 + r % 64] >> (4 * (r / 64))) & 0x0f;
        int hi = (qh[h * 32 + r % 32] >> (2 * (r / 32))) & 0x03;
        float ds = d * (float)(int8_t)sc[i / 16];
        y[i] = ds * (float)((lo | hi << 4) - 32);
    }
}

bool rlvr_gguf_type_dequantises(uint32_t type)
{
    switch (type) {
    case RLVR_GGML_F32: case RLVR_GGML_F16: case RLVR_GGML_BF16: case RLVR_GGML_Q8_0: case RLVR_GGML_Q4_0:
    case RLVR_GGML_Q4_1: case RLVR_GGML_Q4_K: case RLVR_GGML_Q5_K: case RLVR_GGML_Q6_K: return true;
    default: return false;
    }
}

int rlvr_gguf_tensor_f32(const rlvr_gguf *g, const rlvr_gguf_tensor *t, float *out)
{
    const unsigned char *src = rlvr_gguf_tensor_data(g, t);
    uint64_t n = t->n_elements;
    void (*block)(const unsigned char *, float *) = NULL;
    switch (t->type) {
    case RLVR_GGML_F32:
        for (uint64_t i = 0; i < n; i++) out[i] = rlvr_f32_from_bits(ld32(src + 4 * i));
        return 0;
    case RLVR_GGML_F16:
        for (uint64_t i = 0; i < n; i++) out[i] = rlvr_half_to_f32(ld16(src + 2 * i));
        return 0;
    case RLVR_GGML_BF16:
        for (uint64_t i = 0; i < n; i++) out[i] = rlvr_bf16_to_f32(ld16(src + 2 * i));
        return 0;
    case RLVR_GGML_Q8_0: block = deq_q8_0; break;
    case RLVR_GGML_Q4_0: block = deq_q4_0; break;
    case RLVR_GGML_Q4_1: block = deq_q4_1; break;
    case RLVR_GGML_Q4_K: block = deq_q4_k; break;
    case RLVR_GGML_Q5_K: block = deq_q5_k; break;
    case RLVR_GGML_Q6_K: block = deq_q6_k; break;
    default:
        return RLVR_FAIL(RLVR_EUNSUPPORTED, "%s: tensor '%s' has type %s (%" PRIu32 "), which rlvr cannot "
                         "dequantise (it reads F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q4_K, Q5_K, Q6_K)",
                         g->path, t->name, rlvr_gguf_type_name(t->type), t->type);
    }
    const ggml_type_info *ti = type_info(t->type);
    uint64_t n_blocks = n / ti->block;
    for (uint64_t i = 0; i < n_blocks; i++) block(src + i * ti->type_size, out + i * ti->block);
    return 0;
}
