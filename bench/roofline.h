/* bench/roofline.h — the machine's own limits, measured in the benchmark's
 * run: the vector FMA peak of all threads and the memory read bandwidth.
 * A figure's roofline bound is the most tokens/s its arithmetic and its
 * weight traffic allow at those limits (docs/POLICY.md, "Speed").
 * Internal to bench/. */
#ifndef RLVR_BENCH_ROOFLINE_H
#define RLVR_BENCH_ROOFLINE_H

#include <stddef.h>

typedef struct {
    double fma_peak_gflops; /* all OpenMP threads, independent FMA chains in registers */
    double read_gbps;       /* all OpenMP threads reading a buffer far larger than the caches */
    int vector_bits;        /* width of the FMAs timed (the matmul kernel's vectors) */
} roofline;

/* Measures both limits, each for at least min_s seconds (best of the
 * rounds: the machine may be shared). The bandwidth is read from a buffer of
 * read_bytes, at least 256 MB: a decode step streams the model's weights
 * once, so a buffer of their size sees the caches as the step does (some
 * machines' last-level caches hold a few hundred MB). */
int roofline_measure(roofline *r, double min_s, size_t read_bytes);

/* Tokens/s bound for `tokens` tokens costing `flops` and reading `bytes`
 * from memory: tokens / max(flops / peak, bytes / bandwidth). */
double roofline_tokens_per_s(const roofline *r, double tokens, double flops, double bytes);

#endif
