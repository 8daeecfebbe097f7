/* tests/io/gguf_dump.c — opens a GGUF file with io/gguf.h and writes what
 * it read for check_gguf.py to compare with gguf-py:
 *   OUTDIR/meta.json   metadata ({"key": [type, value]}; strings as hex of
 *                      their bytes, arrays as [elem_type, [values]]) and the
 *                      tensor list (name, type, dims)
 *   OUTDIR/<i>.f32     tensor i dequantised, raw little-endian float32
 * Usage: gguf_dump FILE OUTDIR. Exit 1 with the library's message on error. */
#include "io/gguf.h"

#include "core/error.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static int dump_value(FILE *f, const rlvr_gguf_value *v, uint32_t type, const rlvr_gguf_value *arr, uint64_t i);

/* Writes one scalar, string or array: the value `v` itself when arr is
 * NULL, else element i of `arr` (whose elements have type `type`). */
static int dump_value(FILE *f, const rlvr_gguf_value *v, uint32_t type, const rlvr_gguf_value *arr, uint64_t i)
{
    switch (type) {
    case RLVR_GGUF_U8: case RLVR_GGUF_U16: case RLVR_GGUF_U32: case RLVR_GGUF_U64: {
        uint64_t x;
        RLVR_TRY(arr ? rlvr_gguf_array_u64(arr, i, &x) : rlvr_gguf_value_u64(v, &x));
        fprintf(f, "%" PRIu64, x);
        return 0;
    }
    case RLVR_GGUF_I8: case RLVR_GGUF_I16: case RLVR_GGUF_I32: case RLVR_GGUF_I64: {
        int64_t x;
        RLVR_TRY(arr ? rlvr_gguf_array_i64(arr, i, &x) : rlvr_gguf_value_i64(v, &x));
        fprintf(f, "%" PRId64, x);
        return 0;
    }
    case RLVR_GGUF_F32: {
        float x;
        RLVR_TRY(arr ? rlvr_gguf_array_f32(arr, i, &x) : rlvr_gguf_value_f32(v, &x));
        fprintf(f, "%.9g", (double)x);
        return 0;
    }
    case RLVR_GGUF_F64: {
        double x;
        RLVR_TRY(arr ? rlvr_gguf_array_f64(arr, i, &x) : rlvr_gguf_value_f64(v, &x));
        fprintf(f, "%.17g", x);
        return 0;
    }
    case RLVR_GGUF_BOOL: {
        int x;
        RLVR_TRY(arr ? rlvr_gguf_array_bool(arr, i, &x) : rlvr_gguf_value_bool(v, &x));
        fprintf(f, "%s", x ? "true" : "false");
        return 0;
    }
    case RLVR_GGUF_STRING: {
        const char *s;
        size_t len;
        RLVR_TRY(arr ? rlvr_gguf_array_string(arr, i, &s, &len) : rlvr_gguf_value_string(v, &s, &len));
        fputc('"', f);
        for (size_t k = 0; k < len; k++) fprintf(f, "%02x", (unsigned char)s[k]);
        fputc('"', f);
        return 0;
    }
    case RLVR_GGUF_ARRAY: {
        const rlvr_gguf_value *a = v;
        if (arr) RLVR_TRY(rlvr_gguf_array_array(arr, i, &a));
        uint64_t n = rlvr_gguf_array_len(a);
        uint32_t et = rlvr_gguf_array_type(a);
        fprintf(f, "[%" PRIu32 ", [", et);
        for (uint64_t k = 0; k < n; k++) {
            if (k) fputc(',', f);
            RLVR_TRY(dump_value(f, NULL, et, a, k));
        }
        fprintf(f, "]]");
        return 0;
    }
    default:
        return RLVR_FAIL(RLVR_EINVAL, "value type %" PRIu32, type);
    }
}

/* Tries every typed getter on `key` (arr NULL) or on element 0 of array
 * `arr`, and writes {"getter": value} for those that succeed, so the
 * checker can compare the conversions with the widening rules. */
static void conversions(FILE *f, const rlvr_gguf *g, const char *key, const rlvr_gguf_value *arr)
{
    uint32_t u32; int32_t i32; uint64_t u64; int64_t i64; float f32; double f64; int b;
    const char *s; size_t len; const rlvr_gguf_value *a;
    const char *sep = "";
    fputc('{', f);
#define TRY_GET(name, var, fmt, cast)                                                        \
    if ((arr ? rlvr_gguf_array_##name(arr, 0, &var) : rlvr_gguf_get_##name(g, key, &var)) == 0) { \
        fprintf(f, "%s\"" #name "\": " fmt, sep, cast var);                                   \
        sep = ", ";                                                                          \
    }
    TRY_GET(u32, u32, "%" PRIu32, )
    TRY_GET(i32, i32, "%" PRId32, )
    TRY_GET(u64, u64, "%" PRIu64, )
    TRY_GET(i64, i64, "%" PRId64, )
    TRY_GET(f32, f32, "%.9g", (double))
    TRY_GET(f64, f64, "%.17g", )
    TRY_GET(bool, b, "%d", )
#undef TRY_GET
    if ((arr ? rlvr_gguf_array_string(arr, 0, &s, &len) : rlvr_gguf_get_string(g, key, &s, &len)) == 0) {
        fprintf(f, "%s\"string\": %zu", sep, len);
        sep = ", ";
    }
    if ((arr ? rlvr_gguf_array_array(arr, 0, &a) : rlvr_gguf_get_array(g, key, &a)) == 0)
        fprintf(f, "%s\"array\": %" PRIu64, sep, rlvr_gguf_array_len(a));
    fputc('}', f);
}

static int run(const char *path, const char *dir)
{
    rlvr_gguf *g = NULL;
    FILE *f = NULL;
    float *buf = NULL;
    char name[4096];
    int rc = 0;
    if ((rc = rlvr_gguf_open(&g, path)) < 0) goto cleanup;
    snprintf(name, sizeof name, "%s/meta.json", dir);
    if (!(f = fopen(name, "w"))) {
        rc = RLVR_FAIL(RLVR_EIO, "cannot write %s", name);
        goto cleanup;
    }
    fprintf(f, "{\"version\": %" PRIu32 ", \"alignment\": %" PRIu32 ", \"meta\": {", rlvr_gguf_version(g),
            rlvr_gguf_alignment(g));
    for (size_t i = 0; i < rlvr_gguf_kv_count(g); i++) {
        const rlvr_gguf_value *v = rlvr_gguf_kv_value(g, i);
        /* keys in the test files are plain ASCII without quotes */
        fprintf(f, "%s\"%s\": [%d, ", i ? ", " : "", rlvr_gguf_kv_key(g, i), (int)rlvr_gguf_value_type(v));
        if ((rc = dump_value(f, v, rlvr_gguf_value_type(v), NULL, 0)) < 0) goto cleanup;
        fputc(']', f);
    }
    /* by-key getters and array element getters, on every key */
    fprintf(f, "}, \"conv\": {");
    for (size_t i = 0; i < rlvr_gguf_kv_count(g); i++) {
        fprintf(f, "%s\"%s\": ", i ? ", " : "", rlvr_gguf_kv_key(g, i));
        conversions(f, g, rlvr_gguf_kv_key(g, i), NULL);
    }
    fprintf(f, "}, \"elem_conv\": {");
    const char *sep = "";
    for (size_t i = 0; i < rlvr_gguf_kv_count(g); i++) {
        const rlvr_gguf_value *v = rlvr_gguf_kv_value(g, i);
        if (rlvr_gguf_value_type(v) != RLVR_GGUF_ARRAY || !rlvr_gguf_array_len(v)) continue;
        fprintf(f, "%s\"%s\": ", sep, rlvr_gguf_kv_key(g, i));
        conversions(f, g, NULL, v);
        sep = ", ";
    }
    /* an absent key and an index past the end are errors, not values */
    const rlvr_gguf_value *some = rlvr_gguf_kv_count(g) ? rlvr_gguf_kv_value(g, 0) : NULL;
    uint32_t dummy;
    int absent = rlvr_gguf_get_u32(g, "no.such.key", &dummy);
    fprintf(f, "}, \"absent\": [%d, \"%s\"], \"find_absent\": %d", absent, rlvr_error_name(absent),
            rlvr_gguf_find(g, "no.such.key") == NULL && rlvr_gguf_tensor_find(g, "no.such.tensor") == NULL);
    for (size_t i = 0; some && i < rlvr_gguf_kv_count(g); i++) {
        const rlvr_gguf_value *v = rlvr_gguf_kv_value(g, i);
        if (rlvr_gguf_value_type(v) == RLVR_GGUF_ARRAY) {
            uint64_t x;
            fprintf(f, ", \"past_end\": %d", rlvr_gguf_array_u64(v, rlvr_gguf_array_len(v), &x));
            break;
        }
    }
    fprintf(f, ", \"tensors\": [");
    for (size_t i = 0; i < rlvr_gguf_tensor_count(g); i++) {
        const rlvr_gguf_tensor *t = rlvr_gguf_tensor_at(g, i);
        if (rlvr_gguf_tensor_find(g, t->name) != t) {
            rc = RLVR_FAIL(RLVR_EINVAL, "tensor_find(%s) does not return tensor %zu", t->name, i);
            goto cleanup;
        }
        fprintf(f, "%s{\"name\": \"%s\", \"type\": \"%s\", \"dims\": [", i ? ", " : "", t->name,
                rlvr_gguf_type_name(t->type));
        for (uint32_t d = 0; d < t->n_dims; d++) fprintf(f, "%s%" PRIu64, d ? ", " : "", t->dims[d]);
        fprintf(f, "]}");
    }
    fprintf(f, "]}\n");
    if (fclose(f)) {
        f = NULL;
        rc = RLVR_FAIL(RLVR_EIO, "cannot write %s", name);
        goto cleanup;
    }
    f = NULL;
    for (size_t i = 0; i < rlvr_gguf_tensor_count(g); i++) {
        const rlvr_gguf_tensor *t = rlvr_gguf_tensor_at(g, i);
        free(buf);
        buf = malloc(t->n_elements ? t->n_elements * sizeof *buf : 1);
        if (!buf) {
            rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
            goto cleanup;
        }
        if ((rc = rlvr_gguf_tensor_f32(g, t, buf)) < 0) goto cleanup;
        snprintf(name, sizeof name, "%s/%zu.f32", dir, i);
        if (!(f = fopen(name, "wb")) || fwrite(buf, sizeof *buf, t->n_elements, f) != t->n_elements ||
            fclose(f)) {
            f = NULL;
            rc = RLVR_FAIL(RLVR_EIO, "cannot write %s", name);
            goto cleanup;
        }
        f = NULL;
    }
cleanup:
    if (f) fclose(f);
    free(buf);
    rlvr_gguf_free(g);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: gguf_dump FILE OUTDIR\n");
        return 2;
    }
    if (run(argv[1], argv[2]) < 0) {
        fprintf(stderr, "gguf_dump: %s\n", rlvr_error_last());
        return 1;
    }
    return 0;
}
