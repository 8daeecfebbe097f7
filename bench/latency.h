/* bench/latency.h — the heavy-tailed tool/environment latency of the
 * benchmarks (bench_harness.c per tool turn, bench_pipeline.c per rollout).
 *
 * Lognormal (median, σ), cut at cap_s, drawn with Philox keyed by (seed,
 * RLVR_RNG_TEST, step, sequence, turn): the same rollout waits the same
 * latency in every run that keys it alike. */
#ifndef RLVR_BENCH_LATENCY_H
#define RLVR_BENCH_LATENCY_H

#include <stdint.h>

typedef struct {
    uint64_t seed;
    double median_s, sigma, cap_s;
} rlvr_latency_law;

/* Seconds turn `turn` of the rollout keyed (step, sequence) waits. */
double rlvr_latency_draw(const rlvr_latency_law *law, uint32_t step, uint32_t sequence, int32_t turn);

#endif
