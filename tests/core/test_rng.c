/* Philox wrapper: Random123's known-answer vectors through our keying
 * (counter = position, sequence, step, purpose; key = seed lo, hi), stream
 * consistency, and basic distribution sanity. */
#include "core/rng.h"
#include "test.h"

#include <stdint.h>

typedef struct {
    uint32_t ctr[4], key[2], expect[4];
} kat;

/* Random123 kat_vectors, philox4x32 with 10 rounds. */
static const kat kats[] = {
    {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

static void test_known_answers(void) {
    for (size_t i = 0; i < sizeof kats / sizeof kats[0]; i++) {
        const kat *k = &kats[i];
        uint64_t seed = (uint64_t)k->key[0] | ((uint64_t)k->key[1] << 32);
        uint32_t out[4];
        rlvr_rng_block(out, seed, k->ctr[3], k->ctr[2], k->ctr[1], k->ctr[0]);
        for (int w = 0; w < 4; w++) CHECK_MSG(out[w] == k->expect[w], "vector %zu word %d: %08x", i, w, out[w]);
    }
}

static void test_stream_matches_blocks(void) {
    rlvr_rng_stream s;
    rlvr_rng_stream_init(&s, 42, RLVR_RNG_TEST, 7, 3);
    for (uint32_t pos = 0; pos < 5; pos++) {
        uint32_t block[4];
        rlvr_rng_block(block, 42, RLVR_RNG_TEST, 7, 3, pos);
        for (int w = 0; w < 4; w++) CHECK(rlvr_rng_next_u32(&s) == block[w]);
    }
    /* a copied stream continues identically: the state is plain data */
    rlvr_rng_stream copy = s;
    for (int i = 0; i < 9; i++) CHECK(rlvr_rng_next_u32(&s) == rlvr_rng_next_u32(&copy));
}

static void test_distributions(void) {
    rlvr_rng_stream s;
    rlvr_rng_stream_init(&s, 1, RLVR_RNG_TEST, 0, 0);
    const int n = 200000;
    double sum = 0, sum2 = 0, usum = 0;
    int below_counts[7] = {0};
    for (int i = 0; i < n; i++) {
        double u = rlvr_rng_next_uniform(&s);
        CHECK(u >= 0.0 && u < 1.0);
        usum += u;
        double z = rlvr_rng_next_normal(&s);
        sum += z;
        sum2 += z * z;
        below_counts[rlvr_rng_next_below(&s, 7)]++;
    }
    CHECK_NEAR(usum / n, 0.5, 0.005);
    CHECK_NEAR(sum / n, 0.0, 0.01);
    CHECK_NEAR(sum2 / n, 1.0, 0.02);
    for (int b = 0; b < 7; b++) CHECK_NEAR(below_counts[b] / (double)n, 1.0 / 7, 0.005);
    /* different purposes give different numbers */
    CHECK(rlvr_rng_uniform(9, RLVR_RNG_SAMPLE, 0, 0, 0) != rlvr_rng_uniform(9, RLVR_RNG_INIT, 0, 0, 0));
}

int main(void) {
    test_known_answers();
    test_stream_matches_blocks();
    test_distributions();
    return test_summary("test_rng");
}
