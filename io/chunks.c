/* io/chunks.c — parallel chunk encoding in HDF5's filter format. */
#include "io/chunks.h"
#include "core/error.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef struct {
    rlvr_h5_column *col;
    uint64_t offset;     /* first row */
    size_t rows;         /* rows of data in the chunk */
    unsigned char *raw;  /* (chunk_rows · elem_size) */
    unsigned char *out;  /* encoded chunk */
    size_t out_size;
    int rc;              /* 0, or a zlib / allocation failure */
} pending;

typedef struct {
    unsigned char *ptr;
    size_t cap;
} spare;

struct rlvr_h5_chunk_batch {
    pending *items;
    size_t n, cap;
    size_t bytes, max_bytes;
    int level;
    /* buffers of written chunks, reused: fresh pages cost a fault each */
    spare *spares;
    size_t n_spares, cap_spares;
};

unsigned char *rlvr_h5_chunk_batch_buffer(rlvr_h5_chunk_batch *b, size_t size) {
    size_t best = b->n_spares;
    for (size_t i = 0; i < b->n_spares; i++)
        if (b->spares[i].cap >= size && (best == b->n_spares || b->spares[i].cap < b->spares[best].cap)) best = i;
    if (best < b->n_spares) {
        unsigned char *p = b->spares[best].ptr;
        b->spares[best] = b->spares[--b->n_spares];
        return p;
    }
    return malloc(size);
}

/* Keeps a buffer for reuse (or frees it when the list is full). */
static void give_back(rlvr_h5_chunk_batch *b, unsigned char *p, size_t cap) {
    if (!p) return;
    if (b->n_spares == b->cap_spares) {
        size_t grown_cap = b->cap_spares ? b->cap_spares * 2 : 64;
        spare *grown = grown_cap <= 1024 ? realloc(b->spares, grown_cap * sizeof *grown) : NULL;
        if (!grown) {
            free(p);
            return;
        }
        b->spares = grown;
        b->cap_spares = grown_cap;
    }
    b->spares[b->n_spares++] = (spare){p, cap};
}

uint32_t rlvr_h5_fletcher32(const void *data_, size_t n) {
    const uint8_t *data = data_;
    size_t len = n / 2;
    uint32_t sum1 = 0, sum2 = 0;
    /* 360 sums fit in 32 bits before a reduction is needed */
    while (len) {
        size_t block = len > 360 ? 360 : len;
        len -= block;
        do {
            sum1 += (uint32_t)(((uint16_t)data[0]) << 8) | ((uint16_t)data[1]);
            data += 2;
            sum2 += sum1;
        } while (--block);
        sum1 = (sum1 & 0xffff) + (sum1 >> 16);
        sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    }
    if (n % 2) {
        sum1 += (uint32_t)(((uint16_t)*data) << 8);
        sum2 += sum1;
        sum1 = (sum1 & 0xffff) + (sum1 >> 16);
        sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    }
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    return (sum2 << 16) | sum1;
}

int rlvr_h5_chunk_batch_new(rlvr_h5_chunk_batch **out, int level, size_t max_bytes) {
    *out = calloc(1, sizeof **out);
    if (!*out) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    (*out)->level = level;
    (*out)->max_bytes = max_bytes;
    return 0;
}

static size_t out_cap(const rlvr_h5_column *c, int level) {
    size_t n = c->chunk_rows * c->elem_size;
    return level > 0 ? compressBound((uLong)n) + 4 : n + 4;
}

static void drop_items(rlvr_h5_chunk_batch *b) {
    for (size_t i = 0; i < b->n; i++) {
        pending *p = &b->items[i];
        give_back(b, p->raw, p->col->chunk_rows * p->col->elem_size);
        give_back(b, p->out, out_cap(p->col, b->level));
    }
    b->n = 0;
    b->bytes = 0;
}

void rlvr_h5_chunk_batch_free(rlvr_h5_chunk_batch *b) {
    if (!b) return;
    for (size_t i = 0; i < b->n; i++) {
        free(b->items[i].raw);
        free(b->items[i].out);
    }
    for (size_t i = 0; i < b->n_spares; i++) free(b->spares[i].ptr);
    free(b->spares);
    free(b->items);
    free(b);
}

int rlvr_h5_chunk_batch_add(rlvr_h5_chunk_batch *b, rlvr_h5_column *c, uint64_t offset, size_t rows,
                            unsigned char *raw) {
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        pending *grown = realloc(b->items, cap * sizeof *grown);
        if (!grown) {
            free(raw);
            return RLVR_FAIL(RLVR_ENOMEM, "out of memory queueing a chunk of %s", c->name);
        }
        b->items = grown;
        b->cap = cap;
    }
    /* the output buffer is taken now, on this thread: the pool is not shared */
    unsigned char *out = rlvr_h5_chunk_batch_buffer(b, out_cap(c, b->level));
    if (!out) {
        free(raw);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory queueing a chunk of %s", c->name);
    }
    b->items[b->n++] = (pending){.col = c, .offset = offset, .rows = rows, .raw = raw, .out = out};
    b->bytes += c->chunk_rows * c->elem_size;
    if (b->bytes >= b->max_bytes) return rlvr_h5_chunk_batch_write(b);
    return 0;
}

/* shuffle → deflate → Fletcher32, as the dataset's filter pipeline says. */
static void encode(pending *p, int level) {
    size_t elem = p->col->elem_size, n = p->col->chunk_rows * elem;
    const unsigned char *data = p->raw;
    unsigned char *shuffled = NULL;
    if (level > 0 && elem > 1) {
        /* byte j of every element, then byte j+1, ... (H5Z shuffle) */
        shuffled = malloc(n);
        if (!shuffled) {
            p->rc = RLVR_ENOMEM;
            return;
        }
        size_t count = p->col->chunk_rows;
        for (size_t j = 0; j < elem; j++)
            for (size_t i = 0; i < count; i++) shuffled[j * count + i] = p->raw[i * elem + j];
        data = shuffled;
    }
    size_t cap = out_cap(p->col, level);
    size_t size = n;
    if (level > 0) {
        uLongf dst = (uLongf)(cap - 4);
        if (compress2(p->out, &dst, data, (uLong)n, level) != Z_OK) {
            free(shuffled);
            p->rc = RLVR_EIO;
            return;
        }
        size = dst;
    } else {
        memcpy(p->out, data, n);
    }
    free(shuffled);
    uint32_t sum = rlvr_h5_fletcher32(p->out, size);
    for (int k = 0; k < 4; k++) p->out[size + (size_t)k] = (unsigned char)(sum >> (8 * k));
    p->out_size = size + 4;
}

int rlvr_h5_chunk_batch_write(rlvr_h5_chunk_batch *b) {
    long n = (long)b->n;
    int level = b->level;
#pragma omp parallel for schedule(dynamic, 1)
    for (long i = 0; i < n; i++) encode(&b->items[i], level);
    int rc = 0;
    for (size_t i = 0; i < b->n && rc == 0; i++) {
        pending *p = &b->items[i];
        rlvr_h5_column *c = p->col;
        if (p->rc == RLVR_ENOMEM) {
            rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory compressing a chunk of %s", c->name);
            break;
        }
        if (p->rc < 0) {
            rc = RLVR_FAIL(RLVR_EIO, "zlib could not compress a chunk of %s", c->name);
            break;
        }
        hsize_t end[1] = {(hsize_t)(p->offset + p->rows)}, offset[1] = {(hsize_t)p->offset};
        if (end[0] > c->extent) {
            if (H5Dset_extent(c->dset, end) < 0) {
                rc = RLVR_H5_FAIL("extending %s to %llu rows", c->name, (unsigned long long)end[0]);
                break;
            }
            c->extent = end[0];
        }
        if (H5Dwrite_chunk(c->dset, H5P_DEFAULT, 0, offset, p->out_size, p->out) < 0)
            rc = RLVR_H5_FAIL("writing a chunk of %s at row %llu", c->name, (unsigned long long)offset[0]);
    }
    drop_items(b);
    return rc;
}
