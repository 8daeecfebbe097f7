/* io/chunks.c — chunk encoding in HDF5's filter format, on helper threads
 * while the caller goes on appending. */
#include "io/chunks.h"
#include "core/error.h"

#include <fcntl.h>
#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

enum {
    RING = 256,       /* chunks in flight at most (queued, not yet stored) */
    MAX_HELPERS = 63,
    MAX_SPARES = 1024, /* buffers kept for reuse, per batch and in the cache */
};
#define CACHE_BYTES ((size_t)64 << 20)

typedef struct {
    rlvr_h5_column *col;
    uint64_t offset;     /* first row */
    size_t rows;         /* rows of data in the chunk */
    unsigned char *raw;  /* chunk_rows · elem_size + RLVR_H5_CHUNK_SLACK */
    unsigned char *out;  /* deflated chunk + checksum (level > 0; NULL at level 0) */
    size_t out_cap;
    const unsigned char *stored; /* what goes to the file: raw or out */
    size_t stored_size;
    int rc;              /* 0, RLVR_ENOMEM or RLVR_EIO (deflate failed) */
    bool done;           /* encoded; under the batch's lock */
} pending;

typedef struct {
    unsigned char *ptr;
    size_t cap;
} spare;

/* Levels up to this one go to ISA-L's igzip (its levels 1..3, several
 * times faster than libdeflate on shuffled chunks); denser levels go to
 * libdeflate. Both write standard zlib streams. */
enum { ISAL_MAX_LEVEL = ISAL_DEF_MAX_LEVEL };

/* What one thread keeps from chunk to chunk: the compressor of the batch's
 * level (igzip's stream and level buffer, or libdeflate's). */
typedef struct {
    struct isal_zstream *igzip;
    unsigned char *igzip_level_buf;
    struct libdeflate_compressor *deflate;
    unsigned char *scratch; /* the shuffled chunk */
    size_t scratch_cap;
} worker;

typedef struct {
    rlvr_h5_chunk_batch *batch;
    worker w;
    pthread_t thread;
} helper;

struct rlvr_h5_chunk_batch {
    int level;
    size_t max_bytes;
    /* chunks [head, tail) are in flight, ring[i % RING]; [claim, tail) are
     * not being encoded by anyone yet. head moves on the caller's thread. */
    pending ring[RING];
    uint64_t head, tail, claim;
    size_t bytes; /* raw bytes in flight */
    int failed;   /* the first error; every later call fails */
    /* early writeback: the file's descriptor (-1: none), every how many
     * stored bytes, and the stored bytes since the last one */
    int writeback_fd;
    size_t writeback_every, unsynced;
    /* the caller's: buffers of stored chunks (fresh pages cost a fault
     * each) and its own compressor */
    spare *spares;
    size_t n_spares, cap_spares;
    worker mine;
    helper *helpers;
    int n_helpers;
    bool stop;
    pthread_mutex_t lock;
    pthread_cond_t work; /* a chunk was queued, or stop */
    pthread_cond_t done; /* a helper finished a chunk */
};

static unsigned char *take_buffer(rlvr_h5_chunk_batch *b, size_t cap) {
    size_t best = b->n_spares;
    for (size_t i = 0; i < b->n_spares; i++)
        if (b->spares[i].cap >= cap && (best == b->n_spares || b->spares[i].cap < b->spares[best].cap)) best = i;
    if (best < b->n_spares) {
        unsigned char *p = b->spares[best].ptr;
        b->spares[best] = b->spares[--b->n_spares];
        return p;
    }
    return malloc(cap);
}

unsigned char *rlvr_h5_chunk_batch_buffer(rlvr_h5_chunk_batch *b, size_t size) {
    return take_buffer(b, size + RLVR_H5_CHUNK_SLACK);
}

static bool grow_spares(spare **list, size_t *cap, size_t need) {
    if (need <= *cap) return true;
    size_t grown_cap = *cap ? *cap * 2 : 64;
    while (grown_cap < need) grown_cap *= 2;
    spare *grown = realloc(*list, grown_cap * sizeof *grown);
    if (!grown) return false;
    *list = grown;
    *cap = grown_cap;
    return true;
}

/* Keeps a buffer for reuse (or frees it when the list is full). */
static void give_back(rlvr_h5_chunk_batch *b, unsigned char *p, size_t cap) {
    if (!p) return;
    if (b->n_spares >= MAX_SPARES || !grow_spares(&b->spares, &b->cap_spares, b->n_spares + 1)) {
        free(p);
        return;
    }
    b->spares[b->n_spares++] = (spare){p, cap};
}

/* Buffers outlive their batch: a shard is written every step, and each
 * fresh page costs a fault (several microseconds in a virtual machine). A
 * new batch starts with the buffers the last ones left, up to CACHE_BYTES. */
static struct {
    pthread_mutex_t lock;
    spare *list;
    size_t n, cap, bytes;
} cache = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void cache_take(rlvr_h5_chunk_batch *b) {
    pthread_mutex_lock(&cache.lock);
    if (cache.n > 0 && grow_spares(&b->spares, &b->cap_spares, cache.n)) {
        memcpy(b->spares, cache.list, cache.n * sizeof *cache.list);
        b->n_spares = cache.n;
        cache.n = 0;
        cache.bytes = 0;
    }
    pthread_mutex_unlock(&cache.lock);
}

static void cache_keep(rlvr_h5_chunk_batch *b) {
    pthread_mutex_lock(&cache.lock);
    for (size_t i = 0; i < b->n_spares; i++) {
        spare s = b->spares[i];
        if (cache.bytes + s.cap <= CACHE_BYTES && cache.n < MAX_SPARES &&
            grow_spares(&cache.list, &cache.cap, cache.n + 1)) {
            cache.list[cache.n++] = s;
            cache.bytes += s.cap;
        } else {
            free(s.ptr);
        }
    }
    b->n_spares = 0;
    pthread_mutex_unlock(&cache.lock);
}

int rlvr_h5_chunk_batch_attach(rlvr_h5_chunk_batch *b, rlvr_h5_column *c) {
    if (c->n_buf != 0 || c->batch)
        return RLVR_FAIL(RLVR_ESTATE, "column %s: attached to a chunk batch after rows were pushed", c->name);
    unsigned char *buf = take_buffer(b, c->chunk_rows * c->elem_size + RLVR_H5_CHUNK_SLACK);
    if (!buf) return RLVR_FAIL(RLVR_ENOMEM, "out of memory for a chunk of %s", c->name);
    free(c->buf);
    c->buf = buf;
    c->batch = b;
    return 0;
}

void rlvr_h5_chunk_batch_detach(rlvr_h5_chunk_batch *b, rlvr_h5_column *c) {
    if (c->batch != b) return;
    give_back(b, c->buf, c->chunk_rows * c->elem_size + RLVR_H5_CHUNK_SLACK);
    c->buf = NULL;
    c->n_buf = 0;
    c->batch = NULL;
}

/* ---- Fletcher32 ----------------------------------------------------------- */

/* HDF5 sums 16-bit big-endian words w_0 … w_{m-1} (an odd last byte is the
 * high byte of a last word) into sum1 = Σ w_i and sum2 = Σ (m − i)·w_i,
 * folded to 16 bits as it goes. Folding keeps the value mod 65535 and never
 * turns a positive value into 0, so HDF5's result is each sum mod 65535,
 * except that a positive sum ≡ 0 comes out as 0xffff; a sum is 0 only when
 * every word is. Here words are summed 64 at a time, which vectorises:
 * sum2 += 64·sum1 + Σ (64 − i)·w_i, then sum1 += Σ w_i. */
enum { FLETCHER_GROUP = 64 };

static inline uint32_t be16(const uint8_t *p) { return (uint32_t)p[0] << 8 | p[1]; }

uint32_t rlvr_h5_fletcher32(const void *data_, size_t n) {
    const uint8_t *p = data_;
    size_t words = n / 2;
    uint64_t s1 = 0, s2 = 0, total = 0;
    for (; words >= FLETCHER_GROUP; words -= FLETCHER_GROUP, p += 2 * FLETCHER_GROUP) {
        uint32_t a = 0, b = 0; /* b <= 2080 · 65535 < 2^32 */
        for (uint32_t i = 0; i < FLETCHER_GROUP; i++) {
            uint32_t w = be16(p + 2 * i);
            a += w;
            b += (FLETCHER_GROUP - i) * w;
        }
        s2 = (s2 + FLETCHER_GROUP * s1 + b) % 65535;
        s1 = (s1 + a) % 65535;
        total += a;
    }
    for (; words > 0; words--, p += 2) {
        uint32_t w = be16(p);
        s1 += w;
        s2 += s1;
        total += w;
    }
    if (n % 2) {
        s1 += (uint32_t)p[0] << 8;
        s2 += s1;
        total += p[0];
    }
    if (total == 0) return 0;
    uint32_t f1 = (uint32_t)(s1 % 65535), f2 = (uint32_t)(s2 % 65535);
    if (f1 == 0) f1 = 0xffff;
    if (f2 == 0) f2 = 0xffff;
    return f2 << 16 | f1;
}

/* ---- shuffle ---------------------------------------------------------------- */

/* The element size as a constant lets the compiler unroll and vectorise. */
static inline __attribute__((always_inline)) void shuffle_k(unsigned char *restrict dst,
                                                            const unsigned char *restrict src, size_t count,
                                                            size_t k) {
    for (size_t i = 0; i < count; i++)
        for (size_t j = 0; j < k; j++) dst[j * count + i] = src[i * k + j];
}

void rlvr_h5_shuffle(unsigned char *restrict dst, const unsigned char *restrict src, size_t count, size_t elem) {
    switch (elem) {
    case 1: memcpy(dst, src, count); break;
    case 2: shuffle_k(dst, src, count, 2); break;
    case 4: shuffle_k(dst, src, count, 4); break;
    case 8: shuffle_k(dst, src, count, 8); break;
    default: shuffle_k(dst, src, count, elem); break;
    }
}

/* ---- encoding ----------------------------------------------------------------- */

static size_t chunk_bytes(const rlvr_h5_column *c) { return c->chunk_rows * c->elem_size; }

/* Room for a zlib stream of n bytes from either compressor. igzip stores
 * the data (5 bytes per 65535-byte stored block + 2-byte header + 4-byte
 * trailer) when its compressed output would not fit that much room, so it
 * never fails given this bound; libdeflate's own bound is larger still. */
static size_t zlib_bound(size_t n) {
    size_t stored = n + 5 * (n / 65535 + 1) + 2 + 4;
    size_t libdeflate = libdeflate_zlib_compress_bound(NULL, n);
    return stored > libdeflate ? stored : libdeflate;
}

static size_t igzip_level_buf_size(int level) {
    switch (level) {
    case 1: return ISAL_DEF_LVL1_DEFAULT;
    case 2: return ISAL_DEF_LVL2_DEFAULT;
    default: return ISAL_DEF_LVL3_DEFAULT;
    }
}

/* igzip counts in 32 bits; larger chunks (HDF5 caps them at 4 GiB) go to
 * libdeflate. */
static bool use_igzip(int level, size_t n) { return level <= ISAL_MAX_LEVEL && zlib_bound(n) <= UINT32_MAX; }

/* One zlib stream of in[0..n) into out (cap bytes, at least zlib_bound(n)):
 * its size, or 0 when out of memory or the compressor failed (rc says
 * which). The compressor is created on first use and kept by the thread. */
static size_t compress_zlib(worker *w, int level, const unsigned char *in, size_t n, unsigned char *out, size_t cap,
                            int *rc) {
    if (use_igzip(level, n)) {
        if (!w->igzip) {
            w->igzip = malloc(sizeof *w->igzip);
            w->igzip_level_buf = malloc(igzip_level_buf_size(level));
            if (!w->igzip || !w->igzip_level_buf) {
                free(w->igzip);
                free(w->igzip_level_buf);
                w->igzip = NULL;
                w->igzip_level_buf = NULL;
                *rc = RLVR_ENOMEM;
                return 0;
            }
        }
        /* every field from zero each time, hist_bits (which
         * isal_deflate_stateless_init leaves alone and which picks the
         * window) included: the output must not depend on what the
         * thread compressed before */
        struct isal_zstream *z = w->igzip;
        memset(z, 0, sizeof *z);
        isal_deflate_stateless_init(z);
        z->hist_bits = 0; /* igzip's default window, 32 KiB */
        z->level = (uint32_t)level;
        z->level_buf = w->igzip_level_buf;
        z->level_buf_size = (uint32_t)igzip_level_buf_size(level);
        z->gzip_flag = IGZIP_ZLIB;
        z->end_of_stream = 1;
        z->flush = NO_FLUSH;
        z->next_in = (uint8_t *)in; /* igzip reads it only */
        z->avail_in = (uint32_t)n;
        z->next_out = out;
        z->avail_out = (uint32_t)cap;
        if (isal_deflate_stateless(z) != COMP_OK || z->avail_in != 0) {
            *rc = RLVR_EIO;
            return 0;
        }
        return z->total_out;
    }
    if (!w->deflate && !(w->deflate = libdeflate_alloc_compressor(level))) {
        *rc = RLVR_ENOMEM;
        return 0;
    }
    size_t size = libdeflate_zlib_compress(w->deflate, in, n, out, cap);
    if (size == 0) *rc = RLVR_EIO; /* cannot happen: cap is at least libdeflate's bound */
    return size;
}

static void put_checksum(unsigned char *data, size_t size) {
    uint32_t sum = rlvr_h5_fletcher32(data, size);
    for (int k = 0; k < 4; k++) data[size + (size_t)k] = (unsigned char)(sum >> (8 * k));
}

/* shuffle → deflate → Fletcher32, as the dataset's filter pipeline says.
 * Runs on any thread: touches only the chunk and the thread's worker. */
static void encode(pending *p, int level, worker *w) {
    size_t elem = p->col->elem_size, count = p->col->chunk_rows, n = count * elem;
    if (level == 0) {
        put_checksum(p->raw, n);
        p->stored = p->raw;
        p->stored_size = n + 4;
        return;
    }
    const unsigned char *data = p->raw;
    if (elem > 1 && count > 1) {
        if (w->scratch_cap < n) {
            free(w->scratch);
            w->scratch_cap = 0;
            if (!(w->scratch = malloc(n))) {
                p->rc = RLVR_ENOMEM;
                return;
            }
            w->scratch_cap = n;
        }
        rlvr_h5_shuffle(w->scratch, p->raw, count, elem);
        data = w->scratch;
    }
    size_t size = compress_zlib(w, level, data, n, p->out, p->out_cap - RLVR_H5_CHUNK_SLACK, &p->rc);
    if (size == 0) return;
    put_checksum(p->out, size);
    p->stored = p->out;
    p->stored_size = size + 4;
}

static void *helper_main(void *arg) {
    helper *h = arg;
    rlvr_h5_chunk_batch *b = h->batch;
    pthread_mutex_lock(&b->lock);
    for (;;) {
        while (!b->stop && b->claim == b->tail) pthread_cond_wait(&b->work, &b->lock);
        if (b->stop) break;
        pending *p = &b->ring[b->claim++ % RING];
        pthread_mutex_unlock(&b->lock);
        encode(p, b->level, &h->w);
        pthread_mutex_lock(&b->lock);
        p->done = true;
        pthread_cond_signal(&b->done);
    }
    pthread_mutex_unlock(&b->lock);
    return NULL;
}

/* ---- batches ------------------------------------------------------------------ */

static void worker_free(worker *w) {
    free(w->igzip);
    free(w->igzip_level_buf);
    libdeflate_free_compressor(w->deflate);
    free(w->scratch);
}

void rlvr_h5_chunk_batch_free(rlvr_h5_chunk_batch *b) {
    if (!b) return;
    pthread_mutex_lock(&b->lock);
    b->stop = true;
    pthread_cond_broadcast(&b->work);
    pthread_mutex_unlock(&b->lock);
    for (int i = 0; i < b->n_helpers; i++) {
        pthread_join(b->helpers[i].thread, NULL);
        worker_free(&b->helpers[i].w);
    }
    for (uint64_t i = b->head; i < b->tail; i++) {
        free(b->ring[i % RING].raw);
        free(b->ring[i % RING].out);
    }
    cache_keep(b);
    worker_free(&b->mine);
    pthread_cond_destroy(&b->done);
    pthread_cond_destroy(&b->work);
    pthread_mutex_destroy(&b->lock);
    free(b->helpers);
    free(b->spares);
    free(b);
}

int rlvr_h5_chunk_batch_new(rlvr_h5_chunk_batch **out, int level, size_t max_bytes) {
    *out = NULL;
    if (level < 0 || level > 9) return RLVR_FAIL(RLVR_EINVAL, "deflate level %d is outside 0..9", level);
    rlvr_h5_chunk_batch *b = calloc(1, sizeof *b);
    if (!b) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    b->level = level;
    b->writeback_fd = -1;
    if (pthread_mutex_init(&b->lock, NULL) != 0) {
        free(b);
        return RLVR_FAIL(RLVR_ENOMEM, "cannot create a mutex");
    }
    if (pthread_cond_init(&b->work, NULL) != 0 || pthread_cond_init(&b->done, NULL) != 0) {
        /* a condition variable that was created holds no resources on
         * Linux; destroying the mutex is what remains */
        pthread_mutex_destroy(&b->lock);
        free(b);
        return RLVR_FAIL(RLVR_ENOMEM, "cannot create a condition variable");
    }
#ifdef _OPENMP
    int threads = omp_get_max_threads();
#else
    int threads = 1;
#endif
    int want = level > 0 ? threads - 1 : 0;
    if (want > MAX_HELPERS) want = MAX_HELPERS;
    if (want > 0 && (b->helpers = calloc((size_t)want, sizeof *b->helpers)) != NULL)
        for (int i = 0; i < want; i++) {
            b->helpers[i].batch = b;
            /* fewer helpers than asked (no threads to be had) only costs time */
            if (pthread_create(&b->helpers[i].thread, NULL, helper_main, &b->helpers[i]) != 0) break;
            b->n_helpers++;
        }
    /* alone, there is nothing to wait for: store each chunk as it comes */
    b->max_bytes = b->n_helpers > 0 ? max_bytes : 0;
    cache_take(b);
    *out = b;
    return 0;
}

/* Checks, extends the dataset to every row queued for it, and writes one
 * encoded chunk (caller's thread); its buffers go back to the pool. */
static int store(rlvr_h5_chunk_batch *b, pending *p) {
    rlvr_h5_column *c = p->col;
    int rc = 0;
    if (p->rc == RLVR_ENOMEM) {
        rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory compressing a chunk of %s", c->name);
    } else if (p->rc < 0) {
        rc = RLVR_FAIL(RLVR_EIO, "%s could not compress a chunk of %s (level %d)",
                       use_igzip(b->level, chunk_bytes(c)) ? "ISA-L igzip" : "libdeflate", c->name,
                       b->level);
    } else if (c->extent < c->n_file) {
        hsize_t end[1] = {c->n_file};
        if (H5Dset_extent(c->dset, end) < 0)
            rc = RLVR_H5_FAIL("extending %s to %llu rows", c->name, (unsigned long long)end[0]);
        else
            c->extent = end[0];
    }
    hsize_t offset[1] = {(hsize_t)p->offset};
    if (rc == 0 && H5Dwrite_chunk(c->dset, H5P_DEFAULT, 0, offset, p->stored_size, p->stored) < 0)
        rc = RLVR_H5_FAIL("writing a chunk of %s at row %llu", c->name, (unsigned long long)offset[0]);
    if (rc == 0 && b->writeback_fd >= 0 && (b->unsynced += p->stored_size) >= b->writeback_every) {
        b->unsynced = 0;
#ifdef SYNC_FILE_RANGE_WRITE
        /* a hint: the commit's fsync is what guarantees and reports */
        (void)sync_file_range(b->writeback_fd, 0, 0, SYNC_FILE_RANGE_WRITE);
#endif
    }
    give_back(b, p->raw, chunk_bytes(c) + RLVR_H5_CHUNK_SLACK);
    give_back(b, p->out, p->out_cap);
    p->raw = p->out = NULL;
    return rc;
}

/* Stores encoded chunks in queue order; while more than max_bytes or
 * max_items are in flight, encodes queued chunks itself or waits for the
 * helpers. */
static int pump(rlvr_h5_chunk_batch *b, size_t max_bytes, uint64_t max_items) {
    pthread_mutex_lock(&b->lock);
    while (b->failed == 0 && b->head < b->tail) {
        pending *p = &b->ring[b->head % RING];
        if (p->done) {
            pthread_mutex_unlock(&b->lock);
            size_t bytes = chunk_bytes(p->col);
            int rc = store(b, p);
            pthread_mutex_lock(&b->lock);
            b->head++;
            b->bytes -= bytes;
            if (rc < 0) b->failed = rc;
            continue;
        }
        if (b->bytes <= max_bytes && b->tail - b->head <= max_items) break;
        if (b->claim < b->tail) {
            pending *q = &b->ring[b->claim++ % RING];
            pthread_mutex_unlock(&b->lock);
            encode(q, b->level, &b->mine);
            pthread_mutex_lock(&b->lock);
            q->done = true;
            continue;
        }
        pthread_cond_wait(&b->done, &b->lock);
    }
    int rc = b->failed;
    pthread_mutex_unlock(&b->lock);
    return rc;
}

static int failed_before(const rlvr_h5_chunk_batch *b) {
    return rlvr_error_set(b->failed, "a chunk could not be stored earlier in this file");
}

int rlvr_h5_chunk_batch_add(rlvr_h5_chunk_batch *b, rlvr_h5_column *c, uint64_t offset, size_t rows,
                            unsigned char *raw) {
    if (b->failed) {
        free(raw);
        return failed_before(b);
    }
    int rc = pump(b, SIZE_MAX, RING - 1); /* a free slot */
    if (rc < 0) {
        free(raw);
        return rc;
    }
    /* the output buffer is taken here: the pool is the caller's */
    unsigned char *out = NULL;
    size_t out_cap = 0;
    if (b->level > 0) {
        out_cap = zlib_bound(chunk_bytes(c)) + RLVR_H5_CHUNK_SLACK;
        if (!(out = take_buffer(b, out_cap))) {
            free(raw);
            /* the column counted these rows already: the file cannot be finished */
            b->failed = RLVR_ENOMEM;
            return RLVR_FAIL(RLVR_ENOMEM, "out of memory queueing a chunk of %s", c->name);
        }
    }
    /* the slot is free: no helper looks at it until tail moves past it */
    b->ring[b->tail % RING] =
        (pending){.col = c, .offset = offset, .rows = rows, .raw = raw, .out = out, .out_cap = out_cap};
    pthread_mutex_lock(&b->lock);
    b->tail++;
    b->bytes += chunk_bytes(c);
    if (b->n_helpers > 0) pthread_cond_signal(&b->work);
    pthread_mutex_unlock(&b->lock);
    return pump(b, b->max_bytes, RING - 1);
}

void rlvr_h5_chunk_batch_writeback(rlvr_h5_chunk_batch *b, int fd, size_t every) {
    b->writeback_fd = fd;
    b->writeback_every = every;
    b->unsynced = 0;
}

int rlvr_h5_chunk_batch_write(rlvr_h5_chunk_batch *b) {
    if (b->failed) return failed_before(b);
    return pump(b, 0, 0);
}
