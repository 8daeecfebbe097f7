/* policy/quant_kernels.c — bf16 and q8_0 matmul kernels (see quant_kernels.h).
 *
 * Built with -ffp-contract=off (policy/CMakeLists.txt): every product and
 * sum is rounded where the header says. AVX-512 kernels where the build
 * targets AVX512_BF16 / AVX512_VNNI (decided at build time by the
 * compiler's macros, as -march=native sets them), C loops otherwise; both
 * compute the same numbers. */
#include "policy/quant_kernels.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#if defined(__AVX512F__) && defined(__AVX512BF16__)
#define BF16_AVX512 1
#endif
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
#define Q8_AVX512 1
#endif

#define MG MATMUL_GROUP
#define QK 32                   /* inputs per q8_0 block */
#define Q8_BLOCK (34 * MG)      /* bytes of one block of a panel: 32·MG values, MG fp16 scales */
#define ROW_TILE 64             /* rows whose accumulators one pass keeps */
#define BF16_CHUNK 32           /* input pairs per pass (32 · MG words: 4 KB at MG = 32) */
#define Q8_CHUNK 4              /* blocks per pass (4 · 34 · MG bytes: 4.3 KB at MG = 32) */
#define L2_AHEAD ((uintptr_t)64 * 1024) /* also fetched into L2 this far ahead (as the float kernel) */

typedef union {
    uint32_t u;
    float f;
} bits32;

/* ---- number formats ------------------------------------------------------ */

/* bfloat16 of x, nearest even; magnitudes below 2^-126 (whose bf16 would be
 * subnormal) become signed zero, as AVX512_BF16 treats subnormal inputs. */
static inline uint16_t bf16_of(float x) {
    uint32_t u = ((bits32){.f = x}).u;
    if ((u & 0x7f800000u) == 0) return (uint16_t)((u >> 16) & 0x8000u);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static inline float f32_of_bf16(uint32_t h) { return ((bits32){.u = h << 16}).f; }

/* IEEE half of x, nearest even (subnormals and overflow to infinity included). */
static uint16_t fp16_of(float x) {
    uint32_t u = ((bits32){.f = x}).u, sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    if (a >= 0x7f800000u) return (uint16_t)(sign | (a > 0x7f800000u ? 0x7e00u : 0x7c00u));
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to 65536 or more */
    if (a < 0x38800000u) {                                   /* below 2^-14: a subnormal half */
        float v = ((bits32){.u = a}).f * 16777216.0f;       /* in units of 2^-24, exact */
        return (uint16_t)(sign | (uint32_t)nearbyintf(v));
    }
    a -= (uint32_t)(127 - 15) << 23;
    a += 0xfffu + ((a >> 13) & 1u);
    return (uint16_t)(sign | (a >> 13));
}

static inline float f32_of_fp16(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0) {
        float v = (float)m * 5.9604644775390625e-8f; /* m · 2^-24, exact */
        return sign ? -v : v;
    }
    if (e == 31) return ((bits32){.u = sign | 0x7f800000u | (m << 13)}).f;
    return ((bits32){.u = sign | ((e + 112u) << 23) | (m << 13)}).f;
}

/* ---- packing -------------------------------------------------------------- */

static int blocks_of(int C) { return (C + QK - 1) / QK; }
static int pairs_of(int C) { return (C + 1) / 2; }

/* Bytes of one panel. */
static size_t panel_bytes(rlvr_sampler_weights fmt, int C) {
    return fmt == RLVR_SAMPLER_WEIGHTS_BF16 ? (size_t)pairs_of(C) * MG * 4 : (size_t)blocks_of(C) * Q8_BLOCK;
}

size_t quant_packed_bytes(rlvr_sampler_weights fmt, int OC, int C) {
    return (size_t)((OC + MG - 1) / MG) * panel_bytes(fmt, C);
}

static void pack_bf16(uint8_t *panel, const float *weight, int C, int width) {
    uint16_t *h = (uint16_t *)(void *)panel; /* little-endian words: input 2p low, 2p + 1 high */
    for (int j = 0; j < width; j++) {
        const float *row = weight + (size_t)j * C;
        for (int k = 0; k < C; k++) h[((size_t)(k / 2) * MG + j) * 2 + (k & 1)] = bf16_of(row[k]);
    }
}

/* roundf(y) for |y| < 2^23 (halves away from zero) without a libm call:
 * the fraction |y| − trunc|y| is exact there. */
static inline int round_away(float y) {
    float a = fabsf(y);
    int q = (int)a;
    q += a - (float)q >= 0.5f;
    return y < 0.0f ? -q : q;
}

static void pack_q8(uint8_t *panel, const float *weight, int C, int width) {
    int nb = blocks_of(C);
    for (int j = 0; j < width; j++) {
        const float *row = weight + (size_t)j * C;
        for (int b = 0; b < nb; b++) {
            uint8_t *blk = panel + (size_t)b * Q8_BLOCK;
            int k0 = b * QK, n = C - k0 < QK ? C - k0 : QK;
            float amax = 0.0f;
            for (int t = 0; t < n; t++) amax = fabsf(row[k0 + t]) > amax ? fabsf(row[k0 + t]) : amax;
            float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f; /* ggml's quantize_row_q8_0 */
            for (int t = 0; t < QK; t++) {
                int q = t < n ? round_away(row[k0 + t] * id) : 0;
                blk[((size_t)(t / 4) * MG + j) * 4 + (t & 3)] = (uint8_t)(q + 128);
            }
            uint16_t h = fp16_of(d);
            memcpy(blk + 32 * MG + 2 * j, &h, 2);
        }
    }
}

void quant_pack(rlvr_sampler_weights fmt, void *packed, const float *weight, int OC, int C, int g0, int g1) {
    size_t pb = panel_bytes(fmt, C);
    for (int g = g0; g < g1; g++) {
        uint8_t *panel = (uint8_t *)packed + (size_t)g * pb;
        int o0 = g * MG, width = OC - o0 < MG ? OC - o0 : MG;
        if (fmt == RLVR_SAMPLER_WEIGHTS_BF16) {
            memset(panel, 0, pb);
            pack_bf16(panel, weight + (size_t)o0 * C, C, width);
        } else {
            memset(panel, 128, pb); /* value 0 */
            for (int b = 0; b < blocks_of(C); b++) memset(panel + (size_t)b * Q8_BLOCK + 32 * MG, 0, 2 * MG);
            pack_q8(panel, weight + (size_t)o0 * C, C, width);
        }
    }
}

/* ---- activations ------------------------------------------------------------ */

/* One row's rounded input: bf16, pairs_of(C) words; q8_0, per block 32
 * int8 values, then the blocks' d_a (float) and −128·Σ q_a (int32). */
static size_t act_row_bytes(rlvr_sampler_weights fmt, int C) {
    return fmt == RLVR_SAMPLER_WEIGHTS_BF16 ? (size_t)pairs_of(C) * 4 : (size_t)blocks_of(C) * (QK + 8);
}

size_t quant_act_bytes(rlvr_sampler_weights fmt, int rows, int C) { return (size_t)rows * act_row_bytes(fmt, C); }

static void act_bf16(uint8_t *out, const float *x, int C) {
    uint16_t *h = (uint16_t *)(void *)out;
    for (int k = 0; k < C; k++) h[k] = bf16_of(x[k]);
    if (C & 1) h[C] = 0;
}

/* RNE of y (|y| < 2^22) by the 1.5·2^23 trick, vectorisable: the sum's low
 * mantissa bits are the rounded integer. */
static inline int32_t round_even(float y) {
    bits32 t = {.f = y + 12582912.0f};
    return (int32_t)(t.u - 0x4b400000u);
}

static void act_q8(uint8_t *out, const float *x, int C) {
    int nb = blocks_of(C);
    int8_t *q = (int8_t *)out;
    float *d = (float *)(void *)(out + (size_t)nb * QK);
    int32_t *corr = (int32_t *)(void *)(out + (size_t)nb * (QK + 4));
    for (int b = 0; b < nb; b++) {
        float v[QK] = {0};
        int k0 = b * QK, n = C - k0 < QK ? C - k0 : QK;
        memcpy(v, x + k0, (size_t)n * sizeof(float));
        float amax = 0.0f;
        for (int t = 0; t < QK; t++) amax = fabsf(v[t]) > amax ? fabsf(v[t]) : amax;
        float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        int32_t sum = 0;
        for (int t = 0; t < QK; t++) {
            int32_t qi = round_even(v[t] * id);
            q[k0 + t] = (int8_t)qi;
            sum += qi;
        }
        d[b] = amax / 127.0f;
        corr[b] = -128 * sum;
    }
}

/* ---- portable kernels ------------------------------------------------------- */

__attribute__((unused)) static void panel_bf16_c(float *out, int ldo, const uint8_t *act, size_t ars, int rows, const uint8_t *panel,
                         int pairs, int width) {
    for (int r = 0; r < rows; r++) {
        float acc[MG] = {0};
        for (int p = 0; p < pairs; p++) {
            uint32_t ap, w[MG];
            memcpy(&ap, act + (size_t)r * ars + (size_t)p * 4, 4);
            memcpy(w, panel + (size_t)p * MG * 4, sizeof w);
            float a0 = f32_of_bf16(ap & 0xffffu), a1 = f32_of_bf16(ap >> 16);
            for (int j = 0; j < MG; j++) {
                acc[j] = acc[j] + a1 * f32_of_bf16(w[j] >> 16); /* exact product, one rounding */
                acc[j] = acc[j] + a0 * f32_of_bf16(w[j] & 0xffffu);
            }
        }
        memcpy(out + (size_t)r * ldo, acc, (size_t)width * sizeof(float));
    }
}

__attribute__((unused)) static void panel_q8_c(float *out, int ldo, const uint8_t *act, size_t ars, int rows, const uint8_t *panel, int nb,
                       int width) {
    for (int r = 0; r < rows; r++) {
        const uint8_t *row = act + (size_t)r * ars;
        const int8_t *qa = (const int8_t *)row;
        float acc[MG] = {0};
        for (int b = 0; b < nb; b++) {
            const uint8_t *blk = panel + (size_t)b * Q8_BLOCK;
            float da;
            int32_t corr, s[MG];
            memcpy(&da, row + (size_t)nb * QK + (size_t)b * 4, 4);
            memcpy(&corr, row + (size_t)nb * (QK + 4) + (size_t)b * 4, 4);
            for (int j = 0; j < MG; j++) s[j] = corr;
            for (int t = 0; t < QK; t++) {
                int32_t a = qa[b * QK + t];
                for (int j = 0; j < MG; j++) s[j] += (int32_t)blk[((size_t)(t / 4) * MG + j) * 4 + (t & 3)] * a;
            }
            for (int j = 0; j < MG; j++) {
                uint16_t h;
                memcpy(&h, blk + 32 * MG + 2 * j, 2);
                float dwa = f32_of_fp16(h) * da, term = (float)s[j] * dwa;
                acc[j] = acc[j] + term;
            }
        }
        memcpy(out + (size_t)r * ldo, acc, (size_t)width * sizeof(float));
    }
}

/* ---- AVX-512 kernels ---------------------------------------------------------- */

#if defined(BF16_AVX512) || defined(Q8_AVX512)
_Static_assert(MG == 32, "the AVX-512 kernels take a panel as two vectors of 16 channels");

static inline __m512i pinned_i(__m512i v) {
    __asm__("" : "+v"(v));
    return v;
}
#endif

#if defined(BF16_AVX512)
#define RB16 8 /* rows per register block: 16 accumulators */

/* acc (rb, 32) += rows' pairs [p0, p1) · panel, from zero when `first`;
 * `next` (or NULL) is prefetched as the float kernel does. */
static inline __attribute__((always_inline)) void bf16_block(float *acc, const uint8_t *act, size_t ars,
                                                             const uint8_t *panel, int p0, int p1, bool first,
                                                             const uint8_t *next, int rb) {
    __m512 s[RB16][2];
    for (int r = 0; r < rb; r++)
        for (int v = 0; v < 2; v++) s[r][v] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(acc + r * 32 + v * 16);
    for (int p = p0; p < p1; p++) {
        const uint8_t *wp = panel + (size_t)p * 128;
        __m512i w0 = pinned_i(_mm512_loadu_si512(wp)), w1 = pinned_i(_mm512_loadu_si512(wp + 64));
        if (next) {
            size_t at = (size_t)(p - p0) * 128;
            __builtin_prefetch(next + at, 0, 3);
            __builtin_prefetch(next + at + 64, 0, 3);
            __builtin_prefetch((const void *)((uintptr_t)next + at + L2_AHEAD), 0, 2);
            __builtin_prefetch((const void *)((uintptr_t)next + at + 64 + L2_AHEAD), 0, 2);
        }
        for (int r = 0; r < rb; r++) {
            uint32_t a;
            memcpy(&a, act + (size_t)r * ars + (size_t)p * 4, 4);
            __m512i av = _mm512_set1_epi32((int)a);
            s[r][0] = _mm512_dpbf16_ps(s[r][0], (__m512bh)av, (__m512bh)w0);
            s[r][1] = _mm512_dpbf16_ps(s[r][1], (__m512bh)av, (__m512bh)w1);
        }
    }
    for (int r = 0; r < rb; r++)
        for (int v = 0; v < 2; v++) _mm512_storeu_ps(acc + r * 32 + v * 16, s[r][v]);
}

typedef void (*bf16_fn)(float *, const uint8_t *, size_t, const uint8_t *, int, int, bool, const uint8_t *);
#define BF16_FN(R)                                                                                            \
    static void bf16_##R(float *acc, const uint8_t *act, size_t ars, const uint8_t *panel, int p0, int p1,      \
                         bool first, const uint8_t *next) {                                                   \
        bf16_block(acc, act, ars, panel, p0, p1, first, next, R);                                             \
    }
BF16_FN(1)
BF16_FN(2)
BF16_FN(3)
BF16_FN(4)
BF16_FN(5)
BF16_FN(6)
BF16_FN(7)
BF16_FN(8)
static const bf16_fn bf16_blocks[RB16] = {bf16_1, bf16_2, bf16_3, bf16_4, bf16_5, bf16_6, bf16_7, bf16_8};

static void panel_bf16(float *out, int ldo, const uint8_t *act, size_t ars, int rows, const uint8_t *panel, int pairs,
                       int width) {
    float acc[ROW_TILE * 32] __attribute__((aligned(64)));
    for (int p0 = 0; p0 < pairs; p0 += BF16_CHUNK) {
        int p1 = pairs - p0 < BF16_CHUNK ? pairs : p0 + BF16_CHUNK;
        for (int r = 0; r < rows; r += RB16) {
            int rb = rows - r < RB16 ? rows - r : RB16;
            bf16_blocks[rb - 1](acc + (size_t)r * 32, act + (size_t)r * ars, ars, panel, p0, p1, p0 == 0,
                                r == 0 ? panel + (size_t)p1 * 128 : NULL);
        }
    }
    for (int r = 0; r < rows; r++) memcpy(out + (size_t)r * ldo, acc + (size_t)r * 32, (size_t)width * sizeof(float));
}
#else
#define panel_bf16 panel_bf16_c
#endif

#if defined(Q8_AVX512)
#define RB8 6 /* rows per register block: 12 integer and 12 float accumulators */

/* acc (rb, 32) += rows' blocks [b0, b1) · panel, from zero when `first`. */
static inline __attribute__((always_inline)) void q8_block(float *acc, const uint8_t *act, size_t ars, int nb,
                                                           const uint8_t *panel, int b0, int b1, bool first,
                                                           const uint8_t *next, int rb) {
    __m512 f[RB8][2];
    for (int r = 0; r < rb; r++)
        for (int v = 0; v < 2; v++) f[r][v] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(acc + r * 32 + v * 16);
    for (int b = b0; b < b1; b++) {
        const uint8_t *blk = panel + (size_t)b * Q8_BLOCK;
        __m512i s[RB8][2];
        for (int r = 0; r < rb; r++) {
            int32_t corr;
            memcpy(&corr, act + (size_t)r * ars + (size_t)nb * (QK + 4) + (size_t)b * 4, 4);
            s[r][0] = s[r][1] = _mm512_set1_epi32(corr);
        }
        if (next) {
            size_t at = (size_t)(b - b0) * Q8_BLOCK;
            for (int line = 0; line < Q8_BLOCK; line += 64) {
                __builtin_prefetch(next + at + line, 0, 3);
                __builtin_prefetch((const void *)((uintptr_t)next + at + line + L2_AHEAD), 0, 2);
            }
        }
        for (int i = 0; i < QK / 4; i++) {
            __m512i w0 = pinned_i(_mm512_loadu_si512(blk + i * 128)), w1 = pinned_i(_mm512_loadu_si512(blk + i * 128 + 64));
            for (int r = 0; r < rb; r++) {
                int32_t a;
                memcpy(&a, act + (size_t)r * ars + (size_t)b * QK + (size_t)i * 4, 4);
                __m512i av = _mm512_set1_epi32(a);
                s[r][0] = _mm512_dpbusd_epi32(s[r][0], w0, av);
                s[r][1] = _mm512_dpbusd_epi32(s[r][1], w1, av);
            }
        }
        __m512 d0 = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(blk + 32 * 32)));
        __m512 d1 = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(blk + 32 * 32 + 32)));
        for (int r = 0; r < rb; r++) {
            float da;
            memcpy(&da, act + (size_t)r * ars + (size_t)nb * QK + (size_t)b * 4, 4);
            __m512 dav = _mm512_set1_ps(da);
            f[r][0] = _mm512_add_ps(f[r][0], _mm512_mul_ps(_mm512_cvtepi32_ps(s[r][0]), _mm512_mul_ps(d0, dav)));
            f[r][1] = _mm512_add_ps(f[r][1], _mm512_mul_ps(_mm512_cvtepi32_ps(s[r][1]), _mm512_mul_ps(d1, dav)));
        }
    }
    for (int r = 0; r < rb; r++)
        for (int v = 0; v < 2; v++) _mm512_storeu_ps(acc + r * 32 + v * 16, f[r][v]);
}

typedef void (*q8_fn)(float *, const uint8_t *, size_t, int, const uint8_t *, int, int, bool, const uint8_t *);
#define Q8_FN(R)                                                                                              \
    static void q8_##R(float *acc, const uint8_t *act, size_t ars, int nb, const uint8_t *panel, int b0, int b1, \
                       bool first, const uint8_t *next) {                                                     \
        q8_block(acc, act, ars, nb, panel, b0, b1, first, next, R);                                           \
    }
Q8_FN(1)
Q8_FN(2)
Q8_FN(3)
Q8_FN(4)
Q8_FN(5)
Q8_FN(6)
static const q8_fn q8_blocks[RB8] = {q8_1, q8_2, q8_3, q8_4, q8_5, q8_6};

static void panel_q8(float *out, int ldo, const uint8_t *act, size_t ars, int rows, const uint8_t *panel, int nb,
                     int width) {
    float acc[ROW_TILE * 32] __attribute__((aligned(64)));
    for (int b0 = 0; b0 < nb; b0 += Q8_CHUNK) {
        int b1 = nb - b0 < Q8_CHUNK ? nb : b0 + Q8_CHUNK;
        for (int r = 0; r < rows; r += RB8) {
            int rb = rows - r < RB8 ? rows - r : RB8;
            q8_blocks[rb - 1](acc + (size_t)r * 32, act + (size_t)r * ars, ars, nb, panel, b0, b1, b0 == 0,
                              r == 0 ? panel + (size_t)b1 * Q8_BLOCK : NULL);
        }
    }
    for (int r = 0; r < rows; r++) memcpy(out + (size_t)r * ldo, acc + (size_t)r * 32, (size_t)width * sizeof(float));
}
#else
#define panel_q8 panel_q8_c
#endif

const char *quant_kernel_name(rlvr_sampler_weights fmt) {
#if defined(BF16_AVX512)
    if (fmt == RLVR_SAMPLER_WEIGHTS_BF16) return "avx512_bf16";
#endif
#if defined(Q8_AVX512)
    if (fmt == RLVR_SAMPLER_WEIGHTS_Q8_0) return "avx512_vnni";
#endif
    (void)fmt;
    return "portable";
}

/* ---- the product ----------------------------------------------------------------- */

void quant_matmul_part(rlvr_sampler_weights fmt, const matmul_target *t, int n, const float *inp, int C, int r0,
                       int r1, int g0, int g1, void *act_buf) {
    if (r0 >= r1 || g0 >= g1) return;
    uint8_t *act = act_buf;
    size_t ars = act_row_bytes(fmt, C), pb = panel_bytes(fmt, C);
    bool bf16 = fmt == RLVR_SAMPLER_WEIGHTS_BF16;
    for (int r = r0; r < r1; r++) {
        uint8_t *row = act + (size_t)(r - r0) * ars;
        if (bf16)
            act_bf16(row, inp + (size_t)r * C, C);
        else
            act_q8(row, inp + (size_t)r * C, C);
    }
    int inner = bf16 ? pairs_of(C) : blocks_of(C);
    for (int rt = r0; rt < r1; rt += ROW_TILE) {
        int rows = r1 - rt < ROW_TILE ? r1 - rt : ROW_TILE;
        const uint8_t *a = act + (size_t)(rt - r0) * ars;
        int first = 0; /* first group of target i */
        for (int i = 0; i < n && first < g1; i++) {
            int OC = t[i].OC, groups = (OC + MG - 1) / MG;
            for (int g = g0 > first ? g0 - first : 0; g < groups && first + g < g1; g++) {
                int o0 = g * MG, width = OC - o0 < MG ? OC - o0 : MG;
                float *out = t[i].out + (size_t)rt * OC + o0;
                const uint8_t *panel = (const uint8_t *)t[i].packed + (size_t)g * pb;
                if (bf16)
                    panel_bf16(out, OC, a, ars, rows, panel, inner, width);
                else
                    panel_q8(out, OC, a, ars, rows, panel, inner, width);
            }
            first += groups;
        }
    }
}
