/* policy/sampler_kernels.c — batch-invariant matmul and cached attention
 * (see sampler_kernels.h).
 *
 * Every multiply-add of a sum is spelled vmadd() (vectors) or madd()
 * (scalars): one fused multiply-add where the build has FMA. The file is
 * built with -ffp-contract=off (policy/CMakeLists.txt) so the compiler fuses
 * nothing else: under -ffp-contract=fast GCC 12 contracted `acc += a * b`
 * in some kernels and not in others on an AVX2 build, so scores() and
 * scores2() rounded one score differently and batch composition changed the
 * sampled log-probs. GCC vector extensions give 16 lanes (AVX-512), 8 (AVX,
 * AVX2) or 4 (SSE) without intrinsics. */
#include "policy/sampler_kernels.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

/* Matmul register block: RB rows × NV vectors of output channels, RB·NV
 * accumulators + NV weight vectors + one broadcast within the registers
 * (32 with AVX-512, 16 below). */
#if defined(__AVX512F__)
#define VW 16 /* lanes per vector (one register) */
#define RB 8
#elif defined(__AVX__)
#define VW 8
#define RB 6
#else
#define VW 4
#define RB 6
#endif
#define NV (MATMUL_GROUP / VW)
_Static_assert(MATMUL_GROUP % VW == 0, "MATMUL_GROUP must be whole vectors");
#define ROW_TILE 64 /* rows whose accumulators one call keeps (ROW_TILE × MATMUL_GROUP floats) */
#define K_CHUNK 64  /* inputs per pass: a chunk of a panel (K_CHUNK × MATMUL_GROUP floats) stays in L1
                       while every row block of the tile passes */
/* How far ahead of the next chunk the kernel also asks for the weights into
 * L2 (prefetcht1): 8 chunks, 64 KB with AVX-512. The next-chunk prefetch
 * alone left a G = 16 decode waiting on memory; this one made it 20–40 %
 * faster on a 2-vCPU AMD EPYC (Zen 4), batch 1 5–15 % (docs/POLICY.md,
 * "Speed"). Integer arithmetic: the address may lie past the weights'
 * end, and prefetching there is harmless. */
#define L2_AHEAD_BYTES ((uintptr_t)8 * K_CHUNK * MATMUL_GROUP * sizeof(float))

typedef float vf __attribute__((vector_size(VW * sizeof(float))));

/* s + a·b rounded as one lane of vmadd() is: one fused multiply-add where
 * the machine has FMA, a multiply and an add where it has not. */
static inline float madd(float s, float a, float b) {
#if defined(__FP_FAST_FMAF) /* the compiler's "fmaf is one instruction" */
    return __builtin_fmaf(a, b, s);
#else
    return s + a * b;
#endif
}

/* acc + x·w in every lane, rounded as madd rounds it: where the build has
 * FMA, the instruction itself. */
static inline vf vmadd(vf acc, vf x, vf w) {
#if defined(__FP_FAST_FMAF) && (defined(__x86_64__) || defined(__i386__)) && VW == 16
    return (vf)_mm512_fmadd_ps((__m512)x, (__m512)w, (__m512)acc);
#elif defined(__FP_FAST_FMAF) && (defined(__x86_64__) || defined(__i386__)) && VW == 8
    return (vf)_mm256_fmadd_ps((__m256)x, (__m256)w, (__m256)acc);
#elif defined(__FP_FAST_FMAF) && (defined(__x86_64__) || defined(__i386__)) && VW == 4
    return (vf)_mm_fmadd_ps((__m128)x, (__m128)w, (__m128)acc);
#else
    return acc + x * w;
#endif
}

/* x in every lane. −0 + x is x for every x (+0 + x is not, for x = −0), so
 * the compiler drops the addition and emits a plain broadcast. */
static inline vf broadcast(float x) { return -(vf){0} + x; }

static inline vf load(const float *p) {
    vf v;
    memcpy(&v, p, sizeof v); /* unaligned load */
    return v;
}

/* Pins a loaded vector in a register. Without it GCC folds the load into
 * every FMA that uses it, doubling the loads per FMA (the bottleneck). */
static inline vf pinned(vf v) {
#if defined(__x86_64__) || defined(__i386__)
    __asm__("" : "+v"(v));
#endif
    return v;
}

typedef float vf8 __attribute__((vector_size(8 * sizeof(float))));
typedef float vf4 __attribute__((vector_size(4 * sizeof(float))));
typedef float vf2 __attribute__((vector_size(2 * sizeof(float))));

/* Fixed pairwise tree over the lanes, the same for every element:
 * lane i += lane i + VW/2, then i + VW/4, ... (one shuffle and one add per level). */
static inline float hsum(vf v) {
#if VW == 16
    vf8 v8 = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) +
             __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
    vf4 v4 = __builtin_shufflevector(v8, v8, 0, 1, 2, 3) + __builtin_shufflevector(v8, v8, 4, 5, 6, 7);
#elif VW == 8
    vf4 v4 = __builtin_shufflevector(v, v, 0, 1, 2, 3) + __builtin_shufflevector(v, v, 4, 5, 6, 7);
#else
    vf4 v4 = v;
#endif
    vf2 v2 = __builtin_shufflevector(v4, v4, 0, 1) + __builtin_shufflevector(v4, v4, 2, 3);
    return v2[0] + v2[1];
}

/* hsum of four vectors at once, returning {hsum(a), hsum(b), hsum(c), hsum(d)}
 * bit for bit: the same pairs are added at every level, only arranged side
 * by side in the lanes (IEEE addition is commutative). */
static inline vf4 hsum4(vf a, vf b, vf c, vf d) {
#if VW == 16
    /* level 1: [a lanes i + i+8 | b lanes i + i+8], same for c, d */
    vf ab = __builtin_shufflevector(a, b, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23) +
            __builtin_shufflevector(a, b, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
    vf cd = __builtin_shufflevector(c, d, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23) +
            __builtin_shufflevector(c, d, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
    /* level 2: i + i+4 within each group of 8 -> [a4 | b4 | c4 | d4] */
    vf x = __builtin_shufflevector(ab, cd, 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27) +
           __builtin_shufflevector(ab, cd, 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31);
    /* level 3: i + i+2 within each group of 4 */
    vf8 y = __builtin_shufflevector(x, x, 0, 1, 4, 5, 8, 9, 12, 13) +
            __builtin_shufflevector(x, x, 2, 3, 6, 7, 10, 11, 14, 15);
#elif VW == 8
    /* level 1: i + i+4 -> [a4 | b4], [c4 | d4] */
    vf8 ab = __builtin_shufflevector(a, b, 0, 1, 2, 3, 8, 9, 10, 11) +
             __builtin_shufflevector(a, b, 4, 5, 6, 7, 12, 13, 14, 15);
    vf8 cd = __builtin_shufflevector(c, d, 0, 1, 2, 3, 8, 9, 10, 11) +
             __builtin_shufflevector(c, d, 4, 5, 6, 7, 12, 13, 14, 15);
    /* level 2: i + i+2 within each group of 4 */
    vf8 y = __builtin_shufflevector(ab, cd, 0, 1, 4, 5, 8, 9, 12, 13) +
            __builtin_shufflevector(ab, cd, 2, 3, 6, 7, 10, 11, 14, 15);
#else
    /* level 1: i + i+2 -> [a2 | b2 | c2 | d2] */
    vf4 ab = __builtin_shufflevector(a, b, 0, 1, 4, 5) + __builtin_shufflevector(a, b, 2, 3, 6, 7);
    vf4 cd = __builtin_shufflevector(c, d, 0, 1, 4, 5) + __builtin_shufflevector(c, d, 2, 3, 6, 7);
    vf8 y = __builtin_shufflevector(ab, cd, 0, 1, 2, 3, 4, 5, 6, 7);
#endif
    /* last level: lane 0 + lane 1 of each pair */
    return __builtin_shufflevector(y, y, 0, 2, 4, 6) + __builtin_shufflevector(y, y, 1, 3, 5, 7);
}

float dot_invariant(const float *a, const float *b, int n) {
    int nv = n / VW;
    vf acc = {0};
    for (int k = 0; k < nv; k++) acc = vmadd(acc, load(a + (size_t)k * VW), load(b + (size_t)k * VW));
    float s = hsum(acc);
    for (int i = nv * VW; i < n; i++) s = madd(s, a[i], b[i]);
    return s;
}

/* ---- matmul ------------------------------------------------------------------ */

float matmul_reference_element(const float *a, const float *w, int n) {
    float s = 0.0f;
    for (int k = 0; k < n; k++) s = madd(s, a[k], w[k]);
    return s;
}

size_t matmul_packed_floats(int OC, int C) {
    return (size_t)((OC + MATMUL_GROUP - 1) / MATMUL_GROUP) * MATMUL_GROUP * (size_t)C;
}

void matmul_pack(float *packed, const float *weight, int OC, int C, int g0, int g1) {
    for (int g = g0; g < g1; g++) {
        float *panel = packed + (size_t)g * C * MATMUL_GROUP;
        int o0 = g * MATMUL_GROUP, width = OC - o0 < MATMUL_GROUP ? OC - o0 : MATMUL_GROUP;
        /* channel by channel: one weight row read in order, written with stride */
        for (int j = 0; j < width; j++) {
            const float *row = weight + (size_t)(o0 + j) * C;
            for (int k = 0; k < C; k++) panel[(size_t)k * MATMUL_GROUP + j] = row[k];
        }
        for (int j = width; j < MATMUL_GROUP; j++)
            for (int k = 0; k < C; k++) panel[(size_t)k * MATMUL_GROUP + j] = 0.0f;
    }
}

/* acc (rb, MATMUL_GROUP) += a (rb rows, stride lda) [k0, k1) · panel [k0, k1),
 * starting from zero when `first`: for each k in order, every accumulator
 * takes one multiply-add of its row's input (broadcast) with the panel's
 * weights of k. rb is a compile-time constant at every call, so the
 * accumulators stay in registers between the chunk's load and store. A
 * non-NULL `next` is the following chunk, prefetched into L1 while this one
 * runs, and the weights L2_AHEAD_BYTES past it into L2 (the weights stream
 * from memory; no arithmetic changes). */
static inline __attribute__((always_inline)) void panel_block(float *acc, const float *a, size_t lda,
                                                              const float *panel, int k0, int k1, bool first,
                                                              const float *next, int rb) {
    vf sum[RB][NV];
    for (int r = 0; r < rb; r++)
        for (int v = 0; v < NV; v++) sum[r][v] = first ? (vf){0} : load(acc + r * MATMUL_GROUP + v * VW);
    for (int k = k0; k < k1; k++) {
        const float *wk = panel + (size_t)k * MATMUL_GROUP;
        vf w[NV];
        for (int v = 0; v < NV; v++) w[v] = pinned(load(wk + v * VW));
        if (next) /* prefetcht0: with prefetchnta, batch-1 decoding ran 3x slower on an Intel Xeon */
            for (int v = 0; v < NV; v++) {
                size_t at = ((size_t)(k - k0) * MATMUL_GROUP + (size_t)v * VW) * sizeof(float);
                __builtin_prefetch((const void *)((uintptr_t)next + at), 0, 3);
                __builtin_prefetch((const void *)((uintptr_t)next + at + L2_AHEAD_BYTES), 0, 2);
            }
        for (int r = 0; r < rb; r++) {
            vf x = broadcast(a[(size_t)r * lda + (size_t)k]);
            for (int v = 0; v < NV; v++) sum[r][v] = vmadd(sum[r][v], x, w[v]);
        }
    }
    for (int r = 0; r < rb; r++)
        for (int v = 0; v < NV; v++) memcpy(acc + r * MATMUL_GROUP + v * VW, &sum[r][v], sizeof(vf));
}

typedef void (*block_fn)(float *, const float *, size_t, const float *, int, int, bool, const float *);
#define BLOCK_FN(R)                                                                                        \
    static void block_##R(float *acc, const float *a, size_t lda, const float *panel, int k0, int k1,       \
                          bool first, const float *next) {                                                 \
        panel_block(acc, a, lda, panel, k0, k1, first, next, R);                                           \
    }
BLOCK_FN(1)
BLOCK_FN(2)
BLOCK_FN(3)
BLOCK_FN(4)
BLOCK_FN(5)
BLOCK_FN(6)
#if RB == 8
BLOCK_FN(7)
BLOCK_FN(8)
#endif

/* [rows in the block - 1] */
static const block_fn blocks[RB] = {
    block_1, block_2, block_3, block_4, block_5, block_6,
#if RB == 8
    block_7, block_8,
#endif
};

/* One panel (output channels o0 .. o0 + width − 1) for `rows` rows of a
 * tile: chunk by chunk of the inputs, every row block passes while the
 * chunk is in L1; the first block prefetches the next chunk (at the end of
 * the panel, the next panel: panels are contiguous). */
static void tile_panel(float *out, int ldo, const float *inp, int C, int rows, const float *panel, int width) {
    float acc[ROW_TILE * MATMUL_GROUP] __attribute__((aligned(64)));
    for (int k0 = 0; k0 < C; k0 += K_CHUNK) {
        int k1 = C - k0 < K_CHUNK ? C : k0 + K_CHUNK;
        for (int r = 0; r < rows; r += RB) {
            int rb = rows - r < RB ? rows - r : RB;
            blocks[rb - 1](acc + (size_t)r * MATMUL_GROUP, inp + (size_t)r * C, (size_t)C, panel, k0, k1, k0 == 0,
                           r == 0 ? panel + (size_t)k1 * MATMUL_GROUP : NULL);
        }
    }
    for (int r = 0; r < rows; r++)
        memcpy(out + (size_t)r * ldo, acc + (size_t)r * MATMUL_GROUP, (size_t)width * sizeof(float));
}

int matmul_groups(const matmul_target *targets, int n) {
    int groups = 0;
    for (int i = 0; i < n; i++) groups += (targets[i].OC + MATMUL_GROUP - 1) / MATMUL_GROUP;
    return groups;
}

/* Groups [g0, g1) of the targets for one row tile (rows r0 .. r0+rows-1). */
static void tile_groups(const matmul_target *t, int n, const float *inp, int r0, int rows, int C, int g0, int g1) {
    const float *a = inp + (size_t)r0 * C;
    int first = 0; /* first group of target i */
    for (int i = 0; i < n && first < g1; i++) {
        int OC = t[i].OC, groups = (OC + MATMUL_GROUP - 1) / MATMUL_GROUP;
        for (int g = g0 > first ? g0 - first : 0; g < groups && first + g < g1; g++) {
            int o0 = g * MATMUL_GROUP, width = OC - o0 < MATMUL_GROUP ? OC - o0 : MATMUL_GROUP;
            tile_panel(t[i].out + (size_t)r0 * OC + o0, OC, a, C, rows,
                       (const float *)t[i].packed + (size_t)g * C * MATMUL_GROUP, width);
        }
        first += groups;
    }
}

void matmul_invariant_part(const matmul_target *targets, int n, const float *inp, int C, int r0, int r1, int g0,
                           int g1) {
    for (int r = r0; r < r1; r += ROW_TILE) {
        int rows = r1 - r < ROW_TILE ? r1 - r : ROW_TILE;
        tile_groups(targets, n, inp, r, rows, C, g0, g1);
    }
}

void matmul_forward_invariant(float *out, const float *inp, const float *packed, int N, int C, int OC) {
    matmul_target t = {out, packed, OC};
    matmul_invariant_part(&t, 1, inp, C, 0, N, 0, matmul_groups(&t, 1));
}

/* ---- attention ------------------------------------------------------------ */

/* The hsums of VW vectors side by side: lane j = hsum(a[j]) bit for bit.
 * Each level adds, for two vectors at once, the same lane pairs as hsum's
 * level (i + VW/2, then i + VW/4, ...), halving the vectors per key until
 * one lane per key is left. */
#if VW == 16
static inline vf pairs8(vf a, vf b) {
    return __builtin_shufflevector(a, b, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23) +
           __builtin_shufflevector(a, b, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
}
static inline vf pairs4(vf a, vf b) {
    return __builtin_shufflevector(a, b, 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27) +
           __builtin_shufflevector(a, b, 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31);
}
static inline vf pairs2(vf a, vf b) {
    return __builtin_shufflevector(a, b, 0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29) +
           __builtin_shufflevector(a, b, 2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31);
}
static inline vf pairs1(vf a, vf b) {
    return __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30) +
           __builtin_shufflevector(a, b, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
}
static inline vf hsum_lanes(const vf a[VW]) {
    vf b[8], c[4];
    for (int j = 0; j < 8; j++) b[j] = pairs8(a[2 * j], a[2 * j + 1]);
    for (int j = 0; j < 4; j++) c[j] = pairs4(b[2 * j], b[2 * j + 1]);
    return pairs1(pairs2(c[0], c[1]), pairs2(c[2], c[3]));
}
#elif VW == 8
static inline vf pairs4(vf a, vf b) {
    return __builtin_shufflevector(a, b, 0, 1, 2, 3, 8, 9, 10, 11) +
           __builtin_shufflevector(a, b, 4, 5, 6, 7, 12, 13, 14, 15);
}
static inline vf pairs2(vf a, vf b) {
    return __builtin_shufflevector(a, b, 0, 1, 4, 5, 8, 9, 12, 13) +
           __builtin_shufflevector(a, b, 2, 3, 6, 7, 10, 11, 14, 15);
}
static inline vf pairs1(vf a, vf b) {
    return __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14) +
           __builtin_shufflevector(a, b, 1, 3, 5, 7, 9, 11, 13, 15);
}
static inline vf hsum_lanes(const vf a[VW]) {
    return pairs1(pairs2(pairs4(a[0], a[1]), pairs4(a[2], a[3])), pairs2(pairs4(a[4], a[5]), pairs4(a[6], a[7])));
}
#else
static inline vf hsum_lanes(const vf a[VW]) { return hsum4(a[0], a[1], a[2], a[3]); }
#endif

/* sc[t] = dot_invariant(q, k_t, hd) for positions t0..t1-1 (k_t at
 * k + t·kv_dim), VW keys at a time (independent chains, one vector of
 * scores) with the same arithmetic per score. */
static void scores(float *sc, const float *q, const float *k, int t0, int t1, int kv_dim, int hd) {
    int nv = hd / VW, t = t0;
    for (; t + VW <= t1; t += VW) {
        const float *kt = k + (size_t)t * kv_dim;
        vf acc[VW];
        for (int j = 0; j < VW; j++) acc[j] = (vf){0};
        for (int c = 0; c < nv; c++) {
            vf qv = pinned(load(q + (size_t)c * VW));
            for (int j = 0; j < VW; j++) acc[j] = vmadd(acc[j], qv, load(kt + (size_t)j * kv_dim + (size_t)c * VW));
        }
        vf s = hsum_lanes(acc);
        for (int i = nv * VW; i < hd; i++)
            for (int j = 0; j < VW; j++) s[j] = madd(s[j], q[i], kt[(size_t)j * kv_dim + i]);
        memcpy(sc + t, &s, sizeof s);
    }
    for (; t < t1; t++) sc[t] = dot_invariant(q, k + (size_t)t * kv_dim, hd);
}

/* scores() for two queries against the same keys (two query heads of one
 * row sharing a KV head): each key is loaded once for both; VW/2 keys at a
 * time, lanes [0, VW/2) for q0 and [VW/2, VW) for q1. Same arithmetic per
 * score as scores(). */
static void scores2(float *sc0, float *sc1, const float *q0, const float *q1, const float *k, int t0, int t1,
                    int kv_dim, int hd) {
    enum { KB = VW / 2 };
    int nv = hd / VW, t = t0;
    for (; t + KB <= t1; t += KB) {
        const float *kt = k + (size_t)t * kv_dim;
        vf acc[VW];
        for (int j = 0; j < VW; j++) acc[j] = (vf){0};
        for (int c = 0; c < nv; c++) {
            vf a0 = pinned(load(q0 + (size_t)c * VW)), a1 = pinned(load(q1 + (size_t)c * VW));
            for (int j = 0; j < KB; j++) {
                vf kv = load(kt + (size_t)j * kv_dim + (size_t)c * VW);
                acc[j] = vmadd(acc[j], a0, kv);
                acc[KB + j] = vmadd(acc[KB + j], a1, kv);
            }
        }
        vf s = hsum_lanes(acc);
        for (int i = nv * VW; i < hd; i++)
            for (int j = 0; j < KB; j++) {
                s[j] = madd(s[j], q0[i], kt[(size_t)j * kv_dim + i]);
                s[KB + j] = madd(s[KB + j], q1[i], kt[(size_t)j * kv_dim + i]);
            }
        memcpy(sc0 + t, &s, KB * sizeof(float));
        memcpy(sc1 + t, (const float *)&s + KB, KB * sizeof(float));
    }
    for (; t < t1; t++) {
        sc0[t] = dot_invariant(q0, k + (size_t)t * kv_dim, hd);
        sc1[t] = dot_invariant(q1, k + (size_t)t * kv_dim, hd);
    }
}

typedef int32_t vi __attribute__((vector_size(VW * sizeof(int32_t))));
typedef uint32_t vu __attribute__((vector_size(VW * sizeof(uint32_t))));

static inline vf blend(vi mask, vf yes, vf no) { return (vf)(((vi)yes & mask) | ((vi)no & ~mask)); }

/* e^x for x <= 0 (Cephes' expf: x = n·ln 2 + r, |r| <= ln 2 / 2, a degree-6
 * polynomial for e^r, 2^n from the exponent bits); about 1 ulp. Below -87
 * it returns e^-87 instead of a subnormal or 0: a weight of 1e-38 next to
 * the maximum's weight of 1 changes nothing. */
static inline vf exp_nonpositive(vf x) {
    const vf magic = broadcast(12582912.0f); /* 1.5·2^23: adding it rounds to an integer */
    x = blend(x < -87.0f, broadcast(-87.0f), x);
    vf t = x * 1.44269504088896341f + magic;
    vf n = t - magic;
    vf r = x - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    vf poly = broadcast(1.9875691500e-4f);
    poly = poly * r + 1.3981999507e-3f;
    poly = poly * r + 8.3334519073e-3f;
    poly = poly * r + 4.1665795894e-2f;
    poly = poly * r + 1.6666665459e-1f;
    poly = poly * r + 5.0000001201e-1f;
    poly = poly * (r * r) + r + 1.0f;
    vu bits = ((vu)t - (vu)magic + 127u) << 23; /* 2^n */
    return poly * (vf)bits;
}

/* g·σ(g)·u lane by lane, σ(g) from e = e^−|g| (1/(1 + e) for g ≥ 0, e/(1 + e)
 * below), so every element takes the same steps wherever it sits. */
static inline vf swiglu_lanes(vf g, vf u) {
    vf e = exp_nonpositive(blend(g < 0.0f, g, -g));
    vf sig = blend(g < 0.0f, e, broadcast(1.0f)) / (1.0f + e);
    return g * sig * u;
}

void swiglu_invariant(float *out, const float *gate, const float *up, size_t n) {
    size_t i = 0;
    for (; i + VW <= n; i += VW) {
        vf r = swiglu_lanes(load(gate + i), load(up + i));
        memcpy(out + i, &r, sizeof r);
    }
    if (i < n) { /* the tail in the low lanes of one more vector */
        float g[VW] = {0}, u[VW] = {0}, r[VW];
        memcpy(g, gate + i, (n - i) * sizeof(float));
        memcpy(u, up + i, (n - i) * sizeof(float));
        vf v = swiglu_lanes(load(g), load(u));
        memcpy(r, &v, sizeof v);
        memcpy(out + i, r, (n - i) * sizeof(float));
    }
}

/* w[t] = e^(scale·(sc[t] − max)) for t < n, returning Σ w[t] (lanes by t
 * mod VW, then hsum) and setting *shift = scale·max. The order depends on
 * n only. */
static float softmax_weights(float *w, const float *sc, int n, float scale, float *shift_out) {
    vf vmax = broadcast(-INFINITY);
    int t = 0;
    for (; t + VW <= n; t += VW) {
        vf x = load(sc + t);
        vmax = blend(x > vmax, x, vmax);
    }
    float mx = -INFINITY;
    for (int j = 0; j < VW; j++) mx = vmax[j] > mx ? vmax[j] : mx;
    for (; t < n; t++) mx = sc[t] > mx ? sc[t] : mx;
    float shift = mx * scale;
    *shift_out = shift;
    vf sum = {0};
    for (t = 0; t + VW <= n; t += VW) {
        vf e = exp_nonpositive(load(sc + t) * scale - shift);
        memcpy(w + t, &e, sizeof e);
        sum += e;
    }
    if (t < n) { /* the last n − t positions in the low lanes, zeros above */
        float x[VW];
        for (int j = 0; j < VW; j++) x[j] = t + j < n ? sc[t + j] : mx;
        vf e = exp_nonpositive(load(x) * scale - shift);
        for (int j = 0; j < VW; j++) {
            if (t + j < n) w[t + j] = e[j];
            else e[j] = 0.0f;
        }
        sum += e;
    }
    return hsum(sum);
}

/* o[t mod 4][c] += w[t]·v_t[c·VW ..] for t in [t0, t1), c < nc: four
 * partial sums by position (independent chains), each in position order. */
static inline __attribute__((always_inline)) void accumulate(vf o[4][2], int nc, const float *w, const float *v,
                                                             int t0, int t1, int kv_dim) {
#define STEP(s, t)                                                                  \
    do {                                                                            \
        vf wt = broadcast(w[t]);                                                    \
        for (int c = 0; c < nc; c++) o[s][c] = vmadd(o[s][c], wt, load(v + (size_t)(t) * kv_dim + c * VW)); \
    } while (0)
    int t = t0;
    for (; t < t1 && (t & 3); t++) STEP(t & 3, t);
    for (; t + 4 <= t1; t += 4) {
        STEP(0, t);
        STEP(1, t + 1);
        STEP(2, t + 2);
        STEP(3, t + 3);
    }
    for (; t < t1; t++) STEP(t & 3, t);
#undef STEP
}

/* The elements of weighted_values past the last whole vector, one by one. */
static void weighted_values_tail(float *out, const float *w, const float *vp, int P, const float *v, int n,
                                 int kv_dim, int hd, float inv) {
    for (int d = hd / VW * VW; d < hd; d++) {
        float o[4] = {0};
        for (int t = 0; t < n; t++) o[t & 3] = madd(o[t & 3], w[t], (t < P ? vp : v)[(size_t)t * kv_dim + d]);
        out[d] = ((o[0] + o[1]) + (o[2] + o[3])) * inv;
    }
}

/* out (hd) = inv · Σ_t w[t]·v_t over t < n, each element summed as
 * (S0 + S1) + (S2 + S3), S_j the position-ordered sum over t ≡ j (mod 4);
 * v_t is vp + t·kv_dim for t < P (the shared prefix), v + t·kv_dim after. */
static void weighted_values(float *out, const float *w, const float *vp, int P, const float *v, int n, int kv_dim,
                            int hd, float inv) {
    int nv = hd / VW;
    for (int c = 0; c < nv; c += 2) {
        int nc = nv - c < 2 ? 1 : 2;
        vf o[4][2] = {{{0}}};
        if (nc == 2) {
            accumulate(o, 2, w, vp + (size_t)c * VW, 0, P, kv_dim);
            accumulate(o, 2, w, v + (size_t)c * VW, P, n, kv_dim);
        } else {
            accumulate(o, 1, w, vp + (size_t)c * VW, 0, P, kv_dim);
            accumulate(o, 1, w, v + (size_t)c * VW, P, n, kv_dim);
        }
        for (int j = 0; j < nc; j++) {
            vf r = ((o[0][j] + o[1][j]) + (o[2][j] + o[3][j])) * inv;
            memcpy(out + (size_t)(c + j) * VW, &r, sizeof r);
        }
    }
    weighted_values_tail(out, w, vp, P, v, n, kv_dim, hd, inv);
}

/* accumulate() for two heads' weights (w0, w1) over the same values: each
 * value vector is loaded once for both. */
static inline __attribute__((always_inline)) void accumulate2(vf o0[4][2], vf o1[4][2], int nc, const float *w0,
                                                              const float *w1, const float *v, int t0, int t1,
                                                              int kv_dim) {
#define STEP2(s, t)                                                                 \
    do {                                                                            \
        vf wt0 = broadcast(w0[t]), wt1 = broadcast(w1[t]);                          \
        for (int c = 0; c < nc; c++) {                                              \
            vf vv = load(v + (size_t)(t) * kv_dim + c * VW);                        \
            o0[s][c] = vmadd(o0[s][c], wt0, vv);                                    \
            o1[s][c] = vmadd(o1[s][c], wt1, vv);                                    \
        }                                                                           \
    } while (0)
    int t = t0;
    for (; t < t1 && (t & 3); t++) STEP2(t & 3, t);
    for (; t + 4 <= t1; t += 4) {
        STEP2(0, t);
        STEP2(1, t + 1);
        STEP2(2, t + 2);
        STEP2(3, t + 3);
    }
    for (; t < t1; t++) STEP2(t & 3, t);
#undef STEP2
}

/* weighted_values() of two heads over the same values, bit for bit. */
static void weighted_values2(float *out0, float *out1, const float *w0, const float *w1, const float *vp, int P,
                             const float *v, int n, int kv_dim, int hd, float inv0, float inv1) {
    int nv = hd / VW;
    for (int c = 0; c < nv; c += 2) {
        int nc = nv - c < 2 ? 1 : 2;
        vf o0[4][2] = {{{0}}}, o1[4][2] = {{{0}}};
        if (nc == 2) {
            accumulate2(o0, o1, 2, w0, w1, vp + (size_t)c * VW, 0, P, kv_dim);
            accumulate2(o0, o1, 2, w0, w1, v + (size_t)c * VW, P, n, kv_dim);
        } else {
            accumulate2(o0, o1, 1, w0, w1, vp + (size_t)c * VW, 0, P, kv_dim);
            accumulate2(o0, o1, 1, w0, w1, v + (size_t)c * VW, P, n, kv_dim);
        }
        for (int j = 0; j < nc; j++) {
            vf r0 = ((o0[0][j] + o0[1][j]) + (o0[2][j] + o0[3][j])) * inv0;
            vf r1 = ((o1[0][j] + o1[1][j]) + (o1[2][j] + o1[3][j])) * inv1;
            memcpy(out0 + (size_t)(c + j) * VW, &r0, sizeof r0);
            memcpy(out1 + (size_t)(c + j) * VW, &r1, sizeof r1);
        }
    }
    weighted_values_tail(out0, w0, vp, P, v, n, kv_dim, hd, inv0);
    weighted_values_tail(out1, w1, vp, P, v, n, kv_dim, hd, inv1);
}

/* Where one head's log-sum-exp goes (NULL: nowhere). */
static void put_lse(float *lse, float shift, float sum) {
    if (lse) *lse = shift + logf(sum);
}

/* One query head of one row: softmax(q·Kᵀ·scale) · V over positions 0..p,
 * positions below P read from the prefix (kp, vp). */
static void attend_one(float *out, float *lse, float *sc, const float *q, const float *kp, const float *vp, int P,
                       const float *k, const float *v, int p, int kv_dim, int hd, float scale) {
    float shift;
    scores(sc, q, kp, 0, P, kv_dim, hd);
    scores(sc, q, k, P, p + 1, kv_dim, hd);
    float sum = softmax_weights(sc, sc, p + 1, scale, &shift);
    put_lse(lse, shift, sum);
    weighted_values(out, sc, vp, P, v, p + 1, kv_dim, hd, 1.0f / sum);
}

/* attend_one for two query heads of one row (the same keys and values). */
static void attend_two(float *out0, float *out1, float *lse0, float *lse1, float *sc0, float *sc1, const float *q0,
                       const float *q1, const float *kp, const float *vp, int P, const float *k, const float *v,
                       int p, int kv_dim, int hd, float scale) {
    float shift0, shift1;
    scores2(sc0, sc1, q0, q1, kp, 0, P, kv_dim, hd);
    scores2(sc0, sc1, q0, q1, k, P, p + 1, kv_dim, hd);
    float sum0 = softmax_weights(sc0, sc0, p + 1, scale, &shift0);
    float sum1 = softmax_weights(sc1, sc1, p + 1, scale, &shift1);
    put_lse(lse0, shift0, sum0);
    put_lse(lse1, shift1, sum1);
    weighted_values2(out0, out1, sc0, sc1, vp, P, v, p + 1, kv_dim, hd, 1.0f / sum0, 1.0f / sum1);
}

void attention_forward_cached(float *out, float *scores_buf, const float *q, const attention_rows *a, int r0, int r1,
                              int t0, int t1) {
    int hd = a->head_dim, C = a->n_heads * hd, stride = hd; /* one KV head's positions lie side by side */
    int group = a->n_heads / a->n_kv_heads, N = r1 - r0;
    float scale = 1.0f / sqrtf((float)hd);
    for (int i = t0; i < t1;) {
        int g = i / (N * group), r = r0 + (i / group) % N, h = g * group + i % group;
        size_t off = (size_t)g * a->positions * hd, at = (size_t)r * C + (size_t)h * hd;
        const float *kp = a->kcache + a->prefix_base[r] + off, *vp = a->vcache + a->prefix_base[r] + off;
        const float *k = a->kcache + a->kv_base[r] + off, *v = a->vcache + a->kv_base[r] + off;
        float *lse = a->lse ? a->lse + (size_t)r * a->n_heads + h : NULL;
        if (i % group + 1 < group && i + 1 < t1) { /* task i + 1: head h + 1 of the same row */
            attend_two(out + at, out + at + hd, lse, lse ? lse + 1 : NULL, scores_buf, scores_buf + a->pos[r] + 1,
                       q + at, q + at + hd, kp, vp, a->prefix_len[r], k, v, a->pos[r], stride, hd, scale);
            i += 2;
        } else {
            attend_one(out + at, lse, scores_buf, q + at, kp, vp, a->prefix_len[r], k, v, a->pos[r], stride, hd,
                       scale);
            i++;
        }
    }
}
