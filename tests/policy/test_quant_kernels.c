/* tests/policy/test_quant_kernels.c — the bf16 and q8_0 matmul kernels
 * (policy/quant_kernels.h) against a scalar reference written here from
 * the numerics docs/POLICY.md "Weight formats" states: bf16 rounding by
 * bit arithmetic, fp16 scales by the compiler's _Float16 conversion, the
 * quantized values by libm's roundf / nearbyintf, the dot products in the
 * stated order in float32. Every output element must equal the reference
 * bit for bit, in whichever kernel the build runs (AVX512_BF16 /
 * AVX512_VNNI or the portable C). Also: a row's result does not depend on
 * the other rows, their number, or how rows and channels are split into
 * calls (the sampler's batch invariance at the kernel), and the products
 * stay within the formats' rounding of a double-precision product. */
#include "core/rng.h"
#include "policy/quant_kernels.h"
#include "test.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fill(float *x, size_t n, uint32_t id, float scale) {
    rlvr_rng_stream s;
    rlvr_rng_stream_init(&s, 321, RLVR_RNG_TEST, 0, id);
    for (size_t i = 0; i < n; i++) x[i] = scale * (float)rlvr_rng_next_normal(&s);
}

static float bits_to_float(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* bf16 nearest even; magnitudes under 2^-126 to signed zero (the format's
 * stated flush). Inputs here are finite. */
static float ref_bf16(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    if (fabsf(x) < 0x1p-126f) return bits_to_float(u & 0x80000000u);
    uint32_t lower = u & 0xffffu, upper = u & 0xffff0000u;
    if (lower > 0x8000u || (lower == 0x8000u && (upper & 0x10000u))) upper += 0x10000u;
    return bits_to_float(upper);
}

/* out[o] of one row in the bf16 numerics. */
static float ref_bf16_dot(const float *x, const float *w, int C) {
    /* volatile: GCC 12.2 -O2 miscompiled this in-order reduction when it
     * vectorised it (-fno-tree-vectorize, -O1 and -O0 agreed with each other) */
    volatile float s = 0.0f;
    for (int k = 0; k < C; k += 2) {
        float a1 = k + 1 < C ? ref_bf16(x[k + 1]) : 0.0f, w1 = k + 1 < C ? ref_bf16(w[k + 1]) : 0.0f;
        s = s + (float)((double)a1 * w1); /* the product is exact in float */
        s = s + (float)((double)ref_bf16(x[k]) * ref_bf16(w[k]));
    }
    return s;
}

/* One row's q8_0 dot: GGUF Q8_0 weights (fp16 d, roundf), activations per
 * block of 32 with d_a = amax/127 and nearest-even values. */
static float ref_q8_dot(const float *x, const float *w, int C) {
    volatile float s = 0.0f; /* as in ref_bf16_dot */
    for (int k0 = 0; k0 < C; k0 += 32) {
        int n = C - k0 < 32 ? C - k0 : 32;
        float wmax = 0.0f, xmax = 0.0f;
        for (int t = 0; t < n; t++) {
            wmax = fmaxf(wmax, fabsf(w[k0 + t]));
            xmax = fmaxf(xmax, fabsf(x[k0 + t]));
        }
        float dw = wmax / 127.0f, idw = dw != 0.0f ? 1.0f / dw : 0.0f;
        float dw16 = (float)(_Float16)dw;
        float da = xmax / 127.0f, ida = xmax != 0.0f ? 127.0f / xmax : 0.0f;
        int64_t S = 0;
        for (int t = 0; t < n; t++) {
            float xi = x[k0 + t] * ida;
            S += (int64_t)roundf(w[k0 + t] * idw) * (int64_t)nearbyintf(xi);
        }
        float scale = dw16 * da, term = (float)S * scale;
        s = s + term;
    }
    return s;
}

static float ref_dot(rlvr_sampler_weights f, const float *x, const float *w, int C) {
    return f == RLVR_SAMPLER_WEIGHTS_BF16 ? ref_bf16_dot(x, w, C) : ref_q8_dot(x, w, C);
}

static void check_kernel(rlvr_sampler_weights f, int C, int OC) {
    enum { N = 19 }; /* several register blocks of rows and a remainder */
    float *inp = malloc((size_t)N * C * sizeof(float)), *w = malloc((size_t)OC * C * sizeof(float));
    void *packed = malloc(quant_packed_bytes(f, OC, C));
    void *act = malloc(quant_act_bytes(f, N, C));
    float *all = malloc((size_t)N * OC * sizeof(float)), *part = malloc((size_t)N * OC * sizeof(float));
    float *one = malloc((size_t)OC * sizeof(float));
    fill(w, (size_t)OC * C, 2, 0.05f);
    fill(inp, (size_t)N * C, 1, 1.0f);
    for (int k = 0; k < C; k++) inp[(size_t)3 * C + k] = 0.0f;                /* an all-zero row */
    for (int k = 0; k < C && k < 32; k++) inp[(size_t)5 * C + k] = 0.0f;      /* a zero block */
    for (int k = 0; k < C; k++) inp[(size_t)7 * C + k] *= 1e4f;              /* a large row */
    for (int k = 0; k < C; k++) w[(size_t)(OC / 2) * C + k] = 0.0f;           /* a zero channel */
    int groups = (OC + MATMUL_GROUP - 1) / MATMUL_GROUP;
    quant_pack(f, packed, w, OC, C, 0, groups / 2); /* panels are independent */
    quant_pack(f, packed, w, OC, C, groups / 2, groups);
    matmul_target t = {all, packed, OC};
    quant_matmul_part(f, &t, 1, inp, C, 0, N, 0, groups, act);

    int exact = 0, alone = 1, split = 1;
    double max_rel = 0.0;
    for (int n = 0; n < N; n++)
        for (int o = 0; o < OC; o++) {
            const float *x = inp + (size_t)n * C, *wo = w + (size_t)o * C;
            float e = ref_dot(f, x, wo, C), got = all[(size_t)n * OC + o];
            exact += memcmp(&e, &got, sizeof e) == 0;
            if (memcmp(&e, &got, sizeof e) != 0 && exact + 5 > n * OC + o) /* the first few misses */
                printf("  %s C=%d OC=%d row %d channel %d: kernel %.9g reference %.9g\n",
                       rlvr_sampler_weights_name(f), C, OC, n, o, (double)got, (double)e);
            double ref = 0.0, mag = 0.0;
            for (int c = 0; c < C; c++) {
                ref += (double)x[c] * wo[c];
                mag += fabs((double)x[c] * wo[c]);
            }
            if (mag > 0) max_rel = fmax(max_rel, fabs(got - ref) / mag);
        }
    /* each row alone, and the rows reversed */
    matmul_target t1 = {one, packed, OC};
    for (int n = 0; n < N; n++) {
        quant_matmul_part(f, &t1, 1, inp + (size_t)n * C, C, 0, 1, 0, groups, act);
        alone &= memcmp(one, all + (size_t)n * OC, OC * sizeof(float)) == 0;
    }
    /* uneven splits of rows and groups */
    matmul_target tp = {part, packed, OC};
    for (int rsplit = 1; rsplit < N; rsplit += 5)
        for (int gsplit = 0; gsplit <= groups; gsplit += groups / 2 + 1) {
            memset(part, 0, (size_t)N * OC * sizeof(float));
            quant_matmul_part(f, &tp, 1, inp, C, 0, rsplit, 0, gsplit, act);
            quant_matmul_part(f, &tp, 1, inp, C, rsplit, N, gsplit, groups, act);
            quant_matmul_part(f, &tp, 1, inp, C, rsplit, N, 0, gsplit, act);
            quant_matmul_part(f, &tp, 1, inp, C, 0, rsplit, gsplit, groups, act);
            split &= memcmp(part, all, (size_t)N * OC * sizeof(float)) == 0;
        }
    /* bf16 keeps 8 significant bits of each factor (relative error 2^-8 per
     * product at most), q8_0 about 7 of each (1/254 of the block's maximum) */
    double bound = f == RLVR_SAMPLER_WEIGHTS_BF16 ? 2.0 * 0x1p-8 : 2.0 / 127.0 * 8;
    printf("%-5s (%s) C=%3d OC=%3d: %d/%d elements equal the reference, max error %.3g of Σ|x·w|\n",
           rlvr_sampler_weights_name(f), rlvr_sampler_weights_kernel(f), C, OC, exact, N * OC, max_rel);
    CHECK_MSG(exact == N * OC, "%s kernel differs from the reference at %d of %d elements (C=%d OC=%d)",
              rlvr_sampler_weights_name(f), N * OC - exact, N * OC, C, OC);
    CHECK_MSG(alone, "%s: a row alone differs from the row in a batch (C=%d OC=%d)", rlvr_sampler_weights_name(f), C,
              OC);
    CHECK_MSG(split, "%s: a split into parts changes the product (C=%d OC=%d)", rlvr_sampler_weights_name(f), C, OC);
    CHECK_MSG(max_rel < bound, "%s error %.3g above %.3g (C=%d OC=%d)", rlvr_sampler_weights_name(f), max_rel, bound,
              C, OC);
    free(inp);
    free(w);
    free(packed);
    free(act);
    free(all);
    free(part);
    free(one);
}

/* Several targets in one call (q, k, v) give what each gives alone. */
static void check_targets(rlvr_sampler_weights f) {
    enum { N = 5, C = 96 };
    int oc[3] = {64, 40, 40};
    float *inp = malloc((size_t)N * C * sizeof(float)), *out[3], *alone = malloc((size_t)N * 64 * sizeof(float));
    void *packed[3], *act = malloc(quant_act_bytes(f, N, C));
    matmul_target t[3];
    fill(inp, (size_t)N * C, 7, 1.0f);
    for (int i = 0; i < 3; i++) {
        float *w = malloc((size_t)oc[i] * C * sizeof(float));
        fill(w, (size_t)oc[i] * C, 10 + (uint32_t)i, 0.1f);
        packed[i] = malloc(quant_packed_bytes(f, oc[i], C));
        quant_pack(f, packed[i], w, oc[i], C, 0, (oc[i] + MATMUL_GROUP - 1) / MATMUL_GROUP);
        out[i] = malloc((size_t)N * oc[i] * sizeof(float));
        t[i] = (matmul_target){out[i], packed[i], oc[i]};
        free(w);
    }
    int groups = matmul_groups(t, 3), ok = 1;
    quant_matmul_part(f, t, 3, inp, C, 0, N, 0, groups / 2, act);
    quant_matmul_part(f, t, 3, inp, C, 0, N, groups / 2, groups, act);
    for (int i = 0; i < 3; i++) {
        matmul_target a = {alone, packed[i], oc[i]};
        quant_matmul_part(f, &a, 1, inp, C, 0, N, 0, (oc[i] + MATMUL_GROUP - 1) / MATMUL_GROUP, act);
        ok &= memcmp(alone, out[i], (size_t)N * oc[i] * sizeof(float)) == 0;
        free(out[i]);
        free(packed[i]);
    }
    CHECK_MSG(ok, "%s: targets computed together differ from each alone", rlvr_sampler_weights_name(f));
    free(inp);
    free(alone);
    free(act);
}

int main(void) {
    rlvr_sampler_weights formats[] = {RLVR_SAMPLER_WEIGHTS_BF16, RLVR_SAMPLER_WEIGHTS_Q8_0};
    for (int i = 0; i < 2; i++) {
        check_kernel(formats[i], 64, 40);
        check_kernel(formats[i], 37, 23); /* odd C: a half pair, a partial block; a partial panel */
        check_kernel(formats[i], 576, 2 * MATMUL_GROUP + 5); /* SmolLM2's width: several input chunks */
        check_kernel(formats[i], 200, 9);
        check_targets(formats[i]);
    }
    return test_summary("test_quant_kernels");
}
