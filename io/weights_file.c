/* io/weights_file.c — declared tensors streamed to one file (the
 * safetensors and GGUF writers). */
#include "io/weights_file.h"
#include "core/error.h"
#include "io/safetensors_write.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int rlvr_wfile_add(rlvr_wfile *f, const char *name, int type, size_t rank, const uint64_t *shape) {
    if (rank < 1 || rank > 4 || f->fp) return RLVR_FAIL(RLVR_EINVAL, "weights writer: tensor %s: rank %zu", name, rank);
    if (f->n == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 64;
        rlvr_wfile_tensor *t = realloc(f->t, cap * sizeof *t);
        if (!t) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        f->t = t, f->cap = cap;
    }
    rlvr_wfile_tensor *t = &f->t[f->n];
    *t = (rlvr_wfile_tensor){.type = type, .rank = rank, .n_elements = 1, .name = strdup(name)};
    if (!t->name) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    for (size_t d = 0; d < rank; d++) t->shape[d] = shape[d], t->n_elements *= shape[d];
    t->n_bytes = t->n_elements * (type == RLVR_WFILE_F32 ? 4 : 2);
    f->n++;
    return 0;
}

int rlvr_wfile_open(rlvr_wfile *f, const char *path) {
    f->path = strdup(path);
    if (!f->path) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    f->fp = fopen(path, "wb");
    if (!f->fp) return rlvr_error_errno_at(__FILE__, __LINE__, "creating %s", path);
    return 0;
}

int rlvr_wfile_write(rlvr_wfile *f, const void *bytes, size_t n) {
    if (n && fwrite(bytes, 1, n, f->fp) != n) return rlvr_error_errno_at(__FILE__, __LINE__, "writing %s", f->path);
    f->pos += n;
    return 0;
}

int rlvr_wfile_pad(rlvr_wfile *f, uint64_t align) {
    static const unsigned char zeros[64];
    uint64_t rel = (f->pos - f->data_start) % align;
    return rel ? rlvr_wfile_write(f, zeros, (size_t)(align - rel)) : 0;
}

/* Little-endian 16-bit values, as both formats store them. */
static void encode(unsigned char *dst, const float *src, size_t n, int type) {
    for (size_t i = 0; i < n; i++) {
        if (type == RLVR_WFILE_F32) {
            uint32_t b;
            memcpy(&b, &src[i], 4);
            for (int k = 0; k < 4; k++) dst[4 * i + (size_t)k] = (unsigned char)(b >> (8 * k));
            continue;
        }
        uint16_t h = type == RLVR_WFILE_F16 ? rlvr_f32_to_half(src[i]) : rlvr_f32_to_bf16(src[i]);
        dst[2 * i] = (unsigned char)h, dst[2 * i + 1] = (unsigned char)(h >> 8);
    }
}

int rlvr_wfile_put(rlvr_wfile *f, const float *data, uint64_t align) {
    if (!f->fp || f->next >= f->n) return RLVR_FAIL(RLVR_ESTATE, "weights writer: more tensors than declared");
    const rlvr_wfile_tensor *t = &f->t[f->next];
    enum { CHUNK = 1 << 16 };
    unsigned char *buf = malloc(CHUNK * 4);
    if (!buf) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    int rc = 0;
    size_t width = t->type == RLVR_WFILE_F32 ? 4 : 2;
    for (uint64_t at = 0; rc == 0 && at < t->n_elements; at += CHUNK) {
        size_t k = (size_t)(t->n_elements - at < CHUNK ? t->n_elements - at : CHUNK);
        encode(buf, data + at, k, t->type);
        rc = rlvr_wfile_write(f, buf, k * width);
    }
    free(buf);
    if (rc == 0 && align > 1) rc = rlvr_wfile_pad(f, align);
    if (rc == 0) f->next++;
    return rc;
}

int rlvr_wfile_finish(rlvr_wfile *f) {
    if (!f->fp || f->next != f->n)
        return RLVR_FAIL(RLVR_ESTATE, "weights writer: %zu of %zu tensors written", f->next, f->n);
    int bad = fflush(f->fp) != 0 || fsync(fileno(f->fp)) != 0;
    int rc = bad ? rlvr_error_errno_at(__FILE__, __LINE__, "writing %s", f->path) : 0;
    if (fclose(f->fp) != 0 && rc == 0) rc = rlvr_error_errno_at(__FILE__, __LINE__, "closing %s", f->path);
    f->fp = NULL;
    return rc;
}

void rlvr_wfile_clear(rlvr_wfile *f) {
    if (f->fp) fclose(f->fp);
    for (size_t i = 0; i < f->n; i++) free(f->t[i].name);
    free(f->t);
    free(f->path);
    *f = (rlvr_wfile){0};
}
