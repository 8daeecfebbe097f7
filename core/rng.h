/* core/rng.h — counter-based randomness (Philox4x32-10 from Random123).
 *
 * Every random number in rlvr is a pure function of where it is used, never
 * of how many ranks there are or in which order work finished:
 *
 *   key     = (seed low 32 bits, seed high 32 bits)
 *   counter = (position, sequence, step, purpose)
 *
 * - seed:     the run seed ([run] seed).
 * - purpose:  what the numbers are for (RLVR_RNG_* below), so two uses never
 *             share a stream.
 * - step:     training step or another outer index (0 where there is none).
 * - sequence: the rollout / sequence id (task index, group, rollout index
 *             folded together by the caller), or a tensor id for weight init.
 * - position: token position or element block within the sequence.
 *
 * One Philox call gives 128 random bits. A stream (rlvr_rng_stream) walks the
 * position word for sequential draws; its whole state is the five numbers
 * above plus a buffer index, so saving it in a checkpoint is trivial. */
#ifndef RLVR_CORE_RNG_H
#define RLVR_CORE_RNG_H

#include <stdint.h>

enum {
    RLVR_RNG_INIT = 1,      /* weight initialisation */
    RLVR_RNG_SAMPLE = 2,    /* token sampling */
    RLVR_RNG_TASKS = 3,     /* task selection */
    RLVR_RNG_SHUFFLE = 4,   /* test order shuffles, data shuffles */
    RLVR_RNG_ENV = 5,       /* environment / task generation */
    RLVR_RNG_TEST = 6,      /* tests and benchmarks */
    RLVR_RNG_DROPOUT = 7,   /* reserved */
};

/* The raw block: 4 x 32 random bits for (seed, purpose, step, sequence, position). */
void rlvr_rng_block(uint32_t out[4], uint64_t seed, uint32_t purpose, uint32_t step, uint32_t sequence,
                    uint32_t position);

/* A uniform double in [0, 1) with 53 random bits, from the block's first two words. */
double rlvr_rng_uniform(uint64_t seed, uint32_t purpose, uint32_t step, uint32_t sequence, uint32_t position);

/* Sequential draws along the position word. */
typedef struct {
    uint64_t seed;
    uint32_t purpose, step, sequence;
    uint32_t position;  /* next block to generate */
    uint32_t buffer[4];
    uint32_t used;      /* words of buffer already consumed (4 = empty) */
} rlvr_rng_stream;

void rlvr_rng_stream_init(rlvr_rng_stream *s, uint64_t seed, uint32_t purpose, uint32_t step, uint32_t sequence);
uint32_t rlvr_rng_next_u32(rlvr_rng_stream *s);
/* Uniform in [0, 1), 53 bits. */
double rlvr_rng_next_uniform(rlvr_rng_stream *s);
/* Standard normal (Box-Muller on two uniforms). */
double rlvr_rng_next_normal(rlvr_rng_stream *s);
/* Uniform integer in [0, n) without modulo bias; n > 0. */
uint32_t rlvr_rng_next_below(rlvr_rng_stream *s, uint32_t n);

#endif
