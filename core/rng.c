#include "core/rng.h"

#include <Random123/philox.h>
#include <math.h>

void rlvr_rng_block(uint32_t out[4], uint64_t seed, uint32_t purpose, uint32_t step, uint32_t sequence,
                    uint32_t position) {
    philox4x32_ctr_t ctr = {{position, sequence, step, purpose}};
    philox4x32_key_t key = {{(uint32_t)seed, (uint32_t)(seed >> 32)}};
    philox4x32_ctr_t r = philox4x32(ctr, key);
    for (int i = 0; i < 4; i++) out[i] = r.v[i];
}

static double uniform_from_words(uint32_t hi, uint32_t lo) {
    uint64_t bits = ((uint64_t)hi << 21) ^ (uint64_t)(lo >> 11); /* 53 bits */
    return (double)(bits & ((1ULL << 53) - 1)) * (1.0 / 9007199254740992.0);
}

double rlvr_rng_uniform(uint64_t seed, uint32_t purpose, uint32_t step, uint32_t sequence, uint32_t position) {
    uint32_t b[4];
    rlvr_rng_block(b, seed, purpose, step, sequence, position);
    return uniform_from_words(b[0], b[1]);
}

void rlvr_rng_stream_init(rlvr_rng_stream *s, uint64_t seed, uint32_t purpose, uint32_t step, uint32_t sequence) {
    *s = (rlvr_rng_stream){.seed = seed, .purpose = purpose, .step = step, .sequence = sequence, .used = 4};
}

uint32_t rlvr_rng_next_u32(rlvr_rng_stream *s) {
    if (s->used >= 4) {
        rlvr_rng_block(s->buffer, s->seed, s->purpose, s->step, s->sequence, s->position++);
        s->used = 0;
    }
    return s->buffer[s->used++];
}

double rlvr_rng_next_uniform(rlvr_rng_stream *s) {
    uint32_t hi = rlvr_rng_next_u32(s);
    uint32_t lo = rlvr_rng_next_u32(s);
    return uniform_from_words(hi, lo);
}

double rlvr_rng_next_normal(rlvr_rng_stream *s) {
    double u1 = rlvr_rng_next_uniform(s);
    double u2 = rlvr_rng_next_uniform(s);
    /* 1 - u1 is in (0, 1], so the log is finite */
    return sqrt(-2.0 * log(1.0 - u1)) * cos(6.283185307179586 * u2);
}

uint32_t rlvr_rng_next_below(rlvr_rng_stream *s, uint32_t n) {
    /* Lemire's method with rejection keeps the draw unbiased */
    uint64_t m = (uint64_t)rlvr_rng_next_u32(s) * n;
    uint32_t low = (uint32_t)m;
    if (low < n) {
        uint32_t threshold = (uint32_t)(-n) % n;
        while (low < threshold) {
            m = (uint64_t)rlvr_rng_next_u32(s) * n;
            low = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}
