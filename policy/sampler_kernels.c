/* policy/sampler_kernels.c — batch-invariant matmul and cached attention
 * (see sampler_kernels.h).
 *
 * Built with -ffp-contract=fast (policy/CMakeLists.txt) so `acc += a * w`
 * becomes one fused multiply-add wherever the machine has FMA; every element
 * still goes through the same expression, so the rounding is the same for
 * all of them. GCC vector extensions give 16 lanes (AVX-512), 8 (AVX, AVX2)
 * or 4 (SSE) without intrinsics. */
#include "policy/sampler_kernels.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#if defined(__AVX512F__)
#define VW 16 /* lanes per vector (one register) */
#define RB 4  /* rows per register block */
#elif defined(__AVX__)
#define VW 8
#define RB 2
#else
#define VW 4
#define RB 2
#endif
#define OB 4  /* output channels per register block */
#define ROW_TILE 64 /* rows kept hot in cache while all weights stream past */
/* Below this many multiply-adds a call runs on one thread: waking a team
 * costs more than the work (decode of small models makes many tiny calls). */
#define PARALLEL_MACS (1 << 16)

typedef float vf __attribute__((vector_size(VW * sizeof(float))));

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
    for (int k = 0; k < nv; k++) acc += load(a + (size_t)k * VW) * load(b + (size_t)k * VW);
    float s = hsum(acc);
    for (int i = nv * VW; i < n; i++) s += a[i] * b[i];
    return s;
}

/* out[r][j] = dot_invariant(a[r], w[j]) for an rb × ob block, with rb and ob
 * compile-time constants at every call (the accumulators stay in registers).
 * The arithmetic per element is exactly dot_invariant's. */
static inline __attribute__((always_inline)) void block(float *out, int ldo, const float *a, int lda,
                                                        const float *w, int C, int pf, int rb, int ob) {
    vf acc[RB][OB];
    for (int r = 0; r < rb; r++)
        for (int j = 0; j < ob; j++) acc[r][j] = (vf){0};
    int nv = C / VW;
    for (int k = 0; k < nv; k++) {
        /* each input vector is loaded once and used ob (or rb) times */
        vf av[RB];
        for (int r = 0; r < rb; r++) av[r] = pinned(load(a + (size_t)r * lda + (size_t)k * VW));
        /* Software prefetch of the next block of weights (the OB rows after
         * these, contiguous; the next output group of the same thread):
         * streaming weights from memory is what stalls the batched decode.
         * Changes no arithmetic. */
        if (pf)
            for (int j = 0; j < ob; j++) __builtin_prefetch(w + (size_t)ob * C + ((size_t)k * ob + j) * VW, 0, 3);
        for (int j = 0; j < ob; j++) {
            vf wv = pinned(load(w + (size_t)j * C + (size_t)k * VW));
            for (int r = 0; r < rb; r++) acc[r][j] += av[r] * wv;
        }
    }
    for (int r = 0; r < rb; r++) {
        float sums[OB];
        if (ob == 4) {
            vf4 s4 = hsum4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]);
            for (int j = 0; j < 4; j++) sums[j] = s4[j];
        } else {
            for (int j = 0; j < ob; j++) sums[j] = hsum(acc[r][j]);
        }
        for (int j = 0; j < ob; j++) {
            const float *ar = a + (size_t)r * lda, *wj = w + (size_t)j * C;
            float s = sums[j];
            for (int i = nv * VW; i < C; i++) s += ar[i] * wj[i];
            out[(size_t)r * ldo + j] = s;
        }
    }
}

typedef void (*block_fn)(float *, int, const float *, int, const float *, int, int);
#define BLOCK_FN(R, O)                                                                          \
    static void block_##R##_##O(float *out, int ldo, const float *a, int lda, const float *w, int C, int pf) { \
        block(out, ldo, a, lda, w, C, pf, R, O);                                                    \
    }
BLOCK_FN(1, 1)
BLOCK_FN(1, 4)
BLOCK_FN(2, 1)
BLOCK_FN(2, 4)
#if RB == 4
BLOCK_FN(3, 1)
BLOCK_FN(3, 4)
BLOCK_FN(4, 1)
BLOCK_FN(4, 4)
#endif

/* [rows in block - 1][0: one output, 1: OB outputs] */
static const block_fn blocks[RB][2] = {
    {block_1_1, block_1_4},
    {block_2_1, block_2_4},
#if RB == 4
    {block_3_1, block_3_4},
    {block_4_1, block_4_4},
#endif
};

/* All rows of one row tile against output channels [o0, o1). */
static void tile_columns(float *out, const float *inp, const float *weight, int rows, int C, int OC, int o0,
                         int o1) {
    for (int r = 0; r < rows; r += RB) {
        int rb = rows - r < RB ? rows - r : RB;
        const float *a = inp + (size_t)r * C;
        float *o = out + (size_t)r * OC;
        int j = o0;
        for (; j + OB <= o1; j += OB) blocks[rb - 1][1](o + j, OC, a, C, weight + (size_t)j * C, C, 1);
        for (; j < o1; j++) blocks[rb - 1][0](o + j, OC, a, C, weight + (size_t)j * C, C, 0);
    }
}

/* Row tile [r0, r0+rows) of several products sharing one input, as one
 * parallel loop over all their OB-wide output groups (one team wake-up). */
static void tile_multi(const matmul_target *t, int n, const int *group_start, int n_groups, const float *inp,
                       int r0, int rows, int C) {
    const float *a = inp + (size_t)r0 * C;
    size_t macs = 0;
    for (int i = 0; i < n; i++) macs += (size_t)rows * C * (size_t)t[i].OC;
#pragma omp parallel for schedule(static) if (macs >= PARALLEL_MACS)
    for (int g = 0; g < n_groups; g++) {
        int i = 0;
        while (g >= group_start[i + 1]) i++;
        int OC = t[i].OC, o0 = (g - group_start[i]) * OB, o1 = o0 + OB < OC ? o0 + OB : OC;
        tile_columns(t[i].out + (size_t)r0 * OC, a, t[i].weight, rows, C, OC, o0, o1);
    }
}

void matmul_forward_invariant_multi(const matmul_target *targets, int n, const float *inp, int N, int C) {
    int group_start[MATMUL_MAX_TARGETS + 1] = {0};
    for (int i = 0; i < n; i++) group_start[i + 1] = group_start[i] + (targets[i].OC + OB - 1) / OB;
    for (int r0 = 0; r0 < N; r0 += ROW_TILE) {
        int rows = N - r0 < ROW_TILE ? N - r0 : ROW_TILE;
        tile_multi(targets, n, group_start, group_start[n], inp, r0, rows, C);
    }
}

void matmul_forward_invariant(float *out, const float *inp, const float *weight, int N, int C, int OC) {
    matmul_target t = {out, weight, OC};
    matmul_forward_invariant_multi(&t, 1, inp, N, C);
}

/* sc[t] = dot_invariant(q, k_t, hd) for positions t0..t1-1 (k_t at
 * k + t·kv_dim), four keys at a time (independent chains) with the same
 * arithmetic per score. */
static void scores(float *sc, const float *q, const float *k, int t0, int t1, int kv_dim, int hd) {
    int nv = hd / VW, t = t0;
    for (; t + 4 <= t1; t += 4) {
        const float *k0 = k + (size_t)t * kv_dim;
        vf a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
        for (int c = 0; c < nv; c++) {
            vf qv = load(q + (size_t)c * VW);
            a0 += qv * load(k0 + (size_t)c * VW);
            a1 += qv * load(k0 + kv_dim + (size_t)c * VW);
            a2 += qv * load(k0 + 2 * (size_t)kv_dim + (size_t)c * VW);
            a3 += qv * load(k0 + 3 * (size_t)kv_dim + (size_t)c * VW);
        }
        vf4 s4 = hsum4(a0, a1, a2, a3);
        for (int j = 0; j < 4; j++) {
            float s = s4[j];
            const float *kj = k0 + (size_t)j * kv_dim;
            for (int i = nv * VW; i < hd; i++) s += q[i] * kj[i];
            sc[t + j] = s;
        }
    }
    for (; t < t1; t++) sc[t] = dot_invariant(q, k + (size_t)t * kv_dim, hd);
}

/* o[0..3] += Σ_{t0 <= t < t1} w[t]·v_t[0 .. 4·VW) in t order. */
static inline __attribute__((always_inline)) void accumulate4(vf o[4], const float *w, const float *v, int t0,
                                                              int t1, int kv_dim) {
    for (int t = t0; t < t1; t++) {
        const float *vt = v + (size_t)t * kv_dim;
        vf wt = {0};
        wt += w[t]; /* broadcast */
        for (int j = 0; j < 4; j++) o[j] += wt * load(vt + j * VW);
    }
}

static inline __attribute__((always_inline)) void accumulate1(vf *o, const float *w, const float *v, int t0,
                                                              int t1, int kv_dim) {
    for (int t = t0; t < t1; t++) {
        vf wt = {0};
        wt += w[t];
        *o += wt * load(v + (size_t)t * kv_dim);
    }
}

/* out (hd) = Σ_t w[t]·v_t over t = 0..p, summed in t order per element;
 * v_t is vp + t·kv_dim for t < P (the shared prefix), v + t·kv_dim after.
 * Up to 4 vectors of out stay in registers across t. */
static void weighted_values(float *out, const float *w, const float *vp, int P, const float *v, int p, int kv_dim,
                            int hd) {
    int nv = hd / VW, c = 0;
    for (; c + 4 <= nv; c += 4) {
        vf o[4] = {{0}, {0}, {0}, {0}};
        accumulate4(o, w, vp + (size_t)c * VW, 0, P, kv_dim);
        accumulate4(o, w, v + (size_t)c * VW, P, p + 1, kv_dim);
        memcpy(out + (size_t)c * VW, o, sizeof o);
    }
    for (; c < nv; c++) {
        vf o = {0};
        accumulate1(&o, w, vp + (size_t)c * VW, 0, P, kv_dim);
        accumulate1(&o, w, v + (size_t)c * VW, P, p + 1, kv_dim);
        memcpy(out + (size_t)c * VW, &o, sizeof o);
    }
    for (int d = nv * VW; d < hd; d++) {
        float o = 0.0f;
        for (int t = 0; t <= p; t++) o += w[t] * (t < P ? vp : v)[(size_t)t * kv_dim + d];
        out[d] = o;
    }
}

/* One query head of one row: softmax(q·Kᵀ·scale) · V over positions 0..p,
 * positions below P read from the prefix (kp, vp). */
static void attend_one(float *out, float *sc, const float *q, const float *kp, const float *vp, int P,
                       const float *k, const float *v, int p, int kv_dim, int hd, float scale) {
    scores(sc, q, kp, 0, P, kv_dim, hd);
    scores(sc, q, k, P, p + 1, kv_dim, hd);
    float mx = -INFINITY;
    for (int t = 0; t <= p; t++) {
        sc[t] *= scale;
        if (sc[t] > mx) mx = sc[t];
    }
    float sum = 0.0f;
    for (int t = 0; t <= p; t++) {
        sc[t] = expf(sc[t] - mx);
        sum += sc[t];
    }
    float inv = 1.0f / sum;
    for (int t = 0; t <= p; t++) sc[t] *= inv;
    weighted_values(out, sc, vp, P, v, p, kv_dim, hd);
}

void attention_forward_cached(float *out, float *scores_buf, const float *q, const float *kcache,
                              const float *vcache, const attention_rows *rows, int N, int n_heads, int n_kv_heads,
                              int head_dim, int ctx) {
    int C = n_heads * head_dim, kv_dim = n_kv_heads * head_dim;
    int group = n_heads / n_kv_heads;
    float scale = 1.0f / sqrtf((float)head_dim);
    size_t macs = 0; /* QKᵀ and PV */
    for (int r = 0; r < N; r++) macs += 2 * (size_t)(rows->pos[r] + 1) * (size_t)C;
    int tasks = n_kv_heads * N * group;
    /* KV-head-major order: one thread takes all rows of a KV head in turn,
     * so a prefix shared by several rows is read from memory once and then
     * from cache. */
#pragma omp parallel for schedule(static) if (macs >= PARALLEL_MACS)
    for (int i = 0; i < tasks; i++) {
        int g = i / (N * group), r = (i / group) % N, h = g * group + i % group;
        size_t off = (size_t)g * head_dim;
        const float *kp = kcache + rows->prefix_base[r] + off, *vp = vcache + rows->prefix_base[r] + off;
        const float *k = kcache + rows->kv_base[r] + off, *v = vcache + rows->kv_base[r] + off;
        attend_one(out + (size_t)r * C + (size_t)h * head_dim, scores_buf + ((size_t)r * n_heads + h) * ctx,
                   q + (size_t)r * C + (size_t)h * head_dim, kp, vp, rows->prefix_len[r], k, v, rows->pos[r],
                   kv_dim, head_dim, scale);
    }
}
