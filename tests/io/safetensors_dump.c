/* tests/io/safetensors_dump.c — opens a safetensors file with
 * io/safetensors.h and writes what it read for check_safetensors.py to
 * compare with the safetensors library and numpy:
 *   OUTDIR/meta.json   {"tensors": [{"name", "dtype", "shape", "offsets",
 *                      "found", "f32"}...], "metadata": {key: value},
 *                      "absent_tensor", "absent_key"}; names and strings as
 *                      hex of their bytes. "f32" is true when the tensor
 *                      converted, else the library's message.
 *   OUTDIR/<i>.f32     tensor i converted, raw little-endian float32
 *   OUTDIR/<i>.raw     tensor i's bytes as the file holds them
 * With --index, FILE is a model.safetensors.index.json and it writes
 *   OUTDIR/index.json  {"entries": [[name, shard path]...], "shards": [...],
 *                      "absent": true when an absent name is not found}
 * Usage: safetensors_dump [--index] FILE OUTDIR. Exit 1 with the library's
 * message on error. */
#include "io/safetensors.h"

#include "core/error.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void hex(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) fprintf(f, "%02x", (unsigned char)*s);
    fputc('"', f);
}

static int write_file(const char *dir, size_t i, const char *ext, const void *p, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%zu.%s", dir, i, ext);
    FILE *f = fopen(path, "wb");
    if (!f) return RLVR_FAIL(RLVR_EIO, "cannot write %s", path);
    size_t w = n ? fwrite(p, 1, n, f) : 0;
    if (fclose(f) != 0 || w != n) return RLVR_FAIL(RLVR_EIO, "cannot write %s", path);
    return 0;
}

static int dump(const char *file, const char *dir)
{
    rlvr_safetensors *st = NULL;
    FILE *f = NULL;
    float *buf = NULL;
    int rc = rlvr_safetensors_open(&st, file);
    if (rc < 0) goto cleanup;
    char path[4096];
    snprintf(path, sizeof path, "%s/meta.json", dir);
    f = fopen(path, "w");
    if (!f) {
        rc = RLVR_FAIL(RLVR_EIO, "cannot write %s", path);
        goto cleanup;
    }
    fprintf(f, "{\"tensors\": [");
    size_t n = rlvr_safetensors_tensor_count(st);
    for (size_t i = 0; i < n; i++) {
        const rlvr_st_tensor *t = rlvr_safetensors_tensor_at(st, i);
        fprintf(f, "%s\n {\"name\": ", i ? "," : "");
        hex(f, t->name);
        fprintf(f, ", \"dtype\": \"%s\", \"size\": %zu, \"shape\": [", rlvr_st_dtype_name(t->dtype),
                rlvr_st_dtype_size(t->dtype));
        for (size_t k = 0; k < t->rank; k++) fprintf(f, "%s%" PRIu64, k ? ", " : "", t->shape[k]);
        fprintf(f, "], \"n_elements\": %" PRIu64 ", \"offsets\": [%" PRIu64 ", %" PRIu64 "], \"found\": %s",
                t->n_elements, t->begin, t->end, rlvr_safetensors_tensor_find(st, t->name) == t ? "true" : "false");
        if ((rc = write_file(dir, i, "raw", rlvr_safetensors_tensor_data(st, t), (size_t)(t->end - t->begin))) < 0)
            goto cleanup;
        free(buf);
        buf = malloc(t->n_elements ? (size_t)t->n_elements * sizeof *buf : 1);
        if (!buf) {
            rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
            goto cleanup;
        }
        int crc = rlvr_safetensors_tensor_f32(st, t, buf);
        if (crc < 0) {
            fprintf(f, ", \"f32\": ");
            hex(f, rlvr_error_last());
        } else {
            fprintf(f, ", \"f32\": true");
            if ((rc = write_file(dir, i, "f32", buf, (size_t)t->n_elements * sizeof *buf)) < 0) goto cleanup;
        }
        fputc('}', f);
    }
    fprintf(f, "],\n\"metadata\": {");
    size_t m = rlvr_safetensors_metadata_count(st);
    for (size_t i = 0; i < m; i++) {
        const char *k, *v;
        if ((rc = rlvr_safetensors_metadata_at(st, i, &k, &v)) < 0) goto cleanup;
        fprintf(f, "%s\n ", i ? "," : "");
        hex(f, k);
        fputc(':', f);
        hex(f, v);
        if (rlvr_safetensors_metadata_find(st, k) != v) {
            rc = RLVR_FAIL(RLVR_EINVAL, "metadata_find does not find key %zu", i);
            goto cleanup;
        }
    }
    fprintf(f, "},\n\"absent_tensor\": %s, \"absent_key\": %s}\n",
            rlvr_safetensors_tensor_find(st, "no such tensor") ? "false" : "true",
            rlvr_safetensors_metadata_find(st, "no such key") ? "false" : "true");
cleanup:
    if (f && fclose(f) != 0 && rc == 0) rc = RLVR_FAIL(RLVR_EIO, "cannot write %s/meta.json", dir);
    free(buf);
    rlvr_safetensors_free(st);
    return rc;
}

static int dump_index(const char *file, const char *dir)
{
    rlvr_st_index *ix = NULL;
    FILE *f = NULL;
    int rc = rlvr_st_index_open(&ix, file);
    if (rc < 0) goto cleanup;
    char path[4096];
    snprintf(path, sizeof path, "%s/index.json", dir);
    f = fopen(path, "w");
    if (!f) {
        rc = RLVR_FAIL(RLVR_EIO, "cannot write %s", path);
        goto cleanup;
    }
    fprintf(f, "{\"entries\": [");
    for (size_t i = 0; i < rlvr_st_index_count(ix); i++) {
        const char *name, *shard;
        if ((rc = rlvr_st_index_at(ix, i, &name, &shard)) < 0) goto cleanup;
        if (rlvr_st_index_find(ix, name) != shard) {
            rc = RLVR_FAIL(RLVR_EINVAL, "rlvr_st_index_find does not find entry %zu", i);
            goto cleanup;
        }
        fprintf(f, "%s[", i ? ", " : "");
        hex(f, name);
        fputc(',', f);
        hex(f, shard);
        fputc(']', f);
    }
    fprintf(f, "], \"shards\": [");
    for (size_t i = 0; i < rlvr_st_index_shard_count(ix); i++) {
        if (i) fputc(',', f);
        hex(f, rlvr_st_index_shard(ix, i));
    }
    fprintf(f, "], \"absent\": %s}\n", rlvr_st_index_find(ix, "no such tensor") ? "false" : "true");
cleanup:
    if (f && fclose(f) != 0 && rc == 0) rc = RLVR_FAIL(RLVR_EIO, "cannot write %s/index.json", dir);
    rlvr_st_index_free(ix);
    return rc;
}

int main(int argc, char **argv)
{
    int index = argc == 4 && strcmp(argv[1], "--index") == 0;
    if (argc != 3 && !index) {
        fprintf(stderr, "usage: safetensors_dump [--index] FILE OUTDIR\n");
        return 2;
    }
    if ((index ? dump_index(argv[2], argv[3]) : dump(argv[1], argv[2])) < 0) {
        fprintf(stderr, "safetensors_dump: %s\n", rlvr_error_last());
        return 1;
    }
    return 0;
}
