/* bench/roofline.c — FMA peak and read bandwidth (see roofline.h).
 *
 * The FMA loop keeps CHAINS independent accumulators in registers, enough
 * to cover the FMA latency on every x86-64 core of the last decade (4
 * cycles × 2 pipes, with room), and uses the same vector width as the
 * matmul kernel (policy/sampler_kernels.c), so the peak is the one that
 * kernel could reach. The read loop sums a buffer of READ_BYTES (or more)
 * with vector loads into READ_CHAINS independent sums, every thread its own
 * contiguous part. */
#include "bench/roofline.h"

#include "core/error.h"
#include "core/sys.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#if defined(__AVX512F__)
#define VW 16
#define CHAINS 16
#elif defined(__AVX__)
#define VW 8
#define CHAINS 12
#else
#define VW 4
#define CHAINS 12
#endif
#define FMA_ITERS 4000000L
#define READ_CHAINS 8 /* independent sums: the adds never wait for each other */
#define READ_BYTES ((size_t)256 << 20) /* the least: past most last-level caches */

typedef float vf __attribute__((vector_size(VW * sizeof(float))));

static inline vf fma_lanes(vf acc, vf x, vf y) {
#if defined(__FMA__) && VW == 16
    return (vf)_mm512_fmadd_ps((__m512)acc, (__m512)x, (__m512)y);
#elif defined(__FMA__) && VW == 8
    return (vf)_mm256_fmadd_ps((__m256)acc, (__m256)x, (__m256)y);
#elif defined(__FMA__) && VW == 4
    return (vf)_mm_fmadd_ps((__m128)acc, (__m128)x, (__m128)y);
#else
    return acc * x + y; /* a multiply and an add: the same two flops */
#endif
}

/* One thread's FMA loop; returns a value that depends on every chain so
 * the compiler keeps them all. */
static float fma_loop(long iters) {
    vf acc[CHAINS], x = (vf){0} + 0.999999f, y = (vf){0} + 1e-7f;
    for (int i = 0; i < CHAINS; i++) acc[i] = (vf){0} + 1.0f + 1e-3f * (float)i;
    for (long k = 0; k < iters; k++)
        for (int i = 0; i < CHAINS; i++) acc[i] = fma_lanes(acc[i], x, y);
    float s = 0.0f;
    for (int i = 0; i < CHAINS; i++)
        for (int j = 0; j < VW; j++) s += acc[i][j];
    return s;
}

static double fma_peak_once(volatile float *sink) {
    int threads = omp_get_max_threads();
    double t0 = rlvr_now();
#pragma omp parallel
    {
        float s = fma_loop(FMA_ITERS);
        if (s == 0.0f) *sink = s; /* never true; keeps the result live */
    }
    double t = rlvr_now() - t0;
    return (double)threads * FMA_ITERS * CHAINS * VW * 2.0 / t / 1e9;
}

static double read_once(const float *buf, size_t n, volatile float *sink) {
    double t0 = rlvr_now();
#pragma omp parallel
    {
        int tid = omp_get_thread_num(), threads = omp_get_num_threads();
        size_t per = n / VW / (size_t)threads * VW, lo = per * (size_t)tid, hi = lo + per;
        vf a[READ_CHAINS] = {{0}};
        for (size_t i = lo; i + READ_CHAINS * VW <= hi; i += READ_CHAINS * VW)
            for (int j = 0; j < READ_CHAINS; j++) {
                vf v;
                memcpy(&v, buf + i + (size_t)j * VW, sizeof v);
                a[j] += v;
            }
        vf s = a[0];
        for (int j = 1; j < READ_CHAINS; j++) s += a[j];
        if (s[0] == -1.0f) *sink = s[0]; /* never true (the buffer is > 0) */
    }
    return (double)(n * sizeof(float)) / (rlvr_now() - t0) / 1e9;
}

int roofline_measure(roofline *r, double min_s, size_t read_bytes) {
    volatile float sink = 0.0f;
    size_t n = (read_bytes > READ_BYTES ? read_bytes : READ_BYTES) / sizeof(float);
    float *buf = malloc(n * sizeof *buf);
    if (!buf)
        return RLVR_FAIL(RLVR_ENOMEM, "bench: out of memory for the %zu MB bandwidth buffer",
                         n * sizeof *buf >> 20);
    /* Writes every page before the timing, with a non-zero byte: malloc +
     * memset(0) may become calloc, whose untouched pages all map the one
     * zero page and read from the cache. 0x3f3f3f3f is 0.747f. */
    memset(buf, 0x3f, n * sizeof *buf);
    *r = (roofline){.vector_bits = VW * 32};
    double t0 = rlvr_now();
    int rounds = 0;
    do {
        double g = fma_peak_once(&sink), b = read_once(buf, n, &sink);
        if (g > r->fma_peak_gflops) r->fma_peak_gflops = g;
        if (b > r->read_gbps) r->read_gbps = b;
        rounds++;
    } while (rlvr_now() - t0 < min_s || rounds < 3);
    free(buf);
    return 0;
}

double roofline_tokens_per_s(const roofline *r, double tokens, double flops, double bytes) {
    double compute_s = flops / (r->fma_peak_gflops * 1e9), memory_s = bytes / (r->read_gbps * 1e9);
    return tokens / (compute_s > memory_s ? compute_s : memory_s);
}
