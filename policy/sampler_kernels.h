/* policy/sampler_kernels.h — batch-invariant kernels for the sampler.
 *
 * The sampler must draw the same tokens whether a sequence is decoded alone
 * or with 15 others (docs/POLICY.md "Batch invariance"). BLAS gives no such
 * promise: sgemm may block and sum a row differently depending on the number
 * of rows M. Here every output element is computed by one thread in one
 * fixed order, whatever the other rows are, how many there are, or how many
 * threads run:
 *   - matmul: out[r][o] = (((0 + a[0]·w[o][0]) + a[1]·w[o][1]) + ...) over
 *     the inner dimension in order, one fused multiply-add per term where
 *     the machine has FMA (matmul_reference_element spells it out);
 *   - attention scores: dot_invariant (vector lanes over the inner
 *     dimension, a fixed reduction tree, then the scalar tail).
 * The matmul is an outer-product register block (rows × MATMUL_GROUP output
 * channels, each row's input broadcast against vectors of weights) over
 * weights re-packed once into k-major panels (matmul_pack); rows never mix
 * inside a block, so a row's bits do not depend on the block it shares.
 *
 * The kernels run on the calling thread over a part of the work (rows,
 * output groups, attention tasks); the sampler decides how to split a
 * forward pass over its threads (sampler.c).
 *
 * The training forward (model.c) runs the same kernels, so it computes
 * every token's log-prob exactly as the sampler did (docs/POLICY.md, "One
 * forward"); the backward uses kernels.h and BLAS. Internal to policy/. */
#ifndef RLVR_POLICY_SAMPLER_KERNELS_H
#define RLVR_POLICY_SAMPLER_KERNELS_H

#include "policy/model.h" /* rlvr_rope_scaling */

#include <stddef.h>
#include <stdint.h>

/* dot(a, b) over n elements in the fixed order described above. */
float dot_invariant(const float *a, const float *b, int n);

/* Output channels per panel of packed weights: the matmul's register block
 * width and the unit of splitting columns (two vectors of the widest vector
 * unit the build targets: measured as fast as three on AVX-512, and finer
 * for splitting a layer's channels evenly over threads). */
#if defined(__AVX512F__)
#define MATMUL_GROUP 32
#elif defined(__AVX__)
#define MATMUL_GROUP 16
#else
#define MATMUL_GROUP 8
#endif

/* Packed weights: an (OC, C) matrix (out, in) as ceil(OC / MATMUL_GROUP)
 * panels, panel g holding channels g·MATMUL_GROUP .. +MATMUL_GROUP−1 as
 * (C, MATMUL_GROUP) row-major (k-major: the group's weights of input k side
 * by side), channels past OC zero. matmul_packed_floats is its size;
 * matmul_pack fills panels [g0, g1) from weight (OC, C). */
size_t matmul_packed_floats(int OC, int C);
void matmul_pack(float *packed, const float *weight, int OC, int C, int g0, int g1);

/* Products of one input with several weight matrices (q, k, v; gate, up):
 * targets[i].out (N, OC_i) = inp (N, C) · targets[i] weight (OC_i, C)ᵀ. */
typedef struct {
    float *out;           /* (N, OC) */
    const void *packed;   /* the weight (OC, C) packed by matmul_pack (floats), or by
                             quant_pack for the quantized kernels (quant_kernels.h) */
    int OC;
} matmul_target;

/* Output groups of n targets: each target's panels, numbered target after
 * target (the last group of a target may be narrower than MATMUL_GROUP). */
int matmul_groups(const matmul_target *targets, int n);

/* The part rows [r0, r1) × groups [g0, g1) of the products, on the calling
 * thread: out[r][o] = matmul_reference_element(inp[r], weight[o], C) bit
 * for bit, so any split of rows and groups over threads or calls gives the
 * same bits. */
void matmul_invariant_part(const matmul_target *targets, int n, const float *inp, int C, int r0, int r1, int g0,
                           int g1);

/* The whole product out (N, OC) = inp (N, C) · weightᵀ on the calling
 * thread, from the packed weight. */
void matmul_forward_invariant(float *out, const float *inp, const float *packed, int N, int C, int OC);

/* One output element as the matmul computes it: Σ_k a[k]·w[k] in order k =
 * 0 .. n−1 from 0, each term one fused multiply-add where the build has FMA
 * (a multiply and an add where it has not). Scalar; for tests. */
float matmul_reference_element(const float *a, const float *w, int n);

/* Causal attention of query rows against the KV caches. A slot's cache
 * block is (n_kv_heads, positions, head_dim): KV head g's key (value) of
 * position t at block + (g·positions + t)·head_dim, so one head's
 * positions lie side by side. Row r's blocks (float offsets into the
 * caches): positions t < prefix_len[r] from the block at prefix_base[r] (a
 * prefix shared with other sequences), positions prefix_len[r] .. pos[r]
 * from the block at kv_base[r] (the row's own sequence). Query head h reads
 * KV head h / (n_heads / n_kv_heads). */
typedef struct {
    const float *kcache, *vcache;
    const int64_t *prefix_base; /* (N) */
    const int32_t *prefix_len;  /* (N) */
    const int64_t *kv_base;     /* (N) */
    const int32_t *pos;         /* (N) position of the query row */
    int n_heads, n_kv_heads, head_dim;
    int positions;              /* T: positions of a slot's block */
    float *lse;                 /* (N, n_heads) or NULL: row r's log-sum-exp of head h's scaled
                                   scores at r·n_heads + h (the training backward's input) */
} attention_rows;

/* Tasks [t0, t1) of rows [r0, r1) on the calling thread; a task is one
 * (row, query head), numbered KV head major (KV head, then row, then query
 * head within the KV head's group) so that one thread takes the rows of a
 * KV head in turn and reads a shared prefix once; two query heads of one
 * row in the same call are computed together (each key and value loaded
 * once for both), with the same arithmetic as one at a time. There are
 * (r1 - r0)·n_heads tasks.
 *   out    (N, H·hd)   attention output (before wo)
 *   scores (2·(max pos + 1)) the calling thread's scratch
 *   q      (N, H·hd)   queries after RoPE
 * Row r attends to positions 0..pos[r] with scale 1/sqrt(hd). Each score
 * is a dot_invariant; the softmax weights come from a vectorised exp and
 * are summed in lanes by position; each output element is four partial sums
 * over positions t ≡ 0, 1, 2, 3 (mod 4), each in position order, added as
 * (S0 + S1) + (S2 + S3). Every order depends on positions only, so a row's
 * result does not depend on the other rows, on how the tasks are split, or
 * on where (shared prefix or own rows) identical keys are stored. */
void attention_forward_cached(float *out, float *scores, const float *q, const attention_rows *a, int r0, int r1,
                              int t0, int t1);

/* out[i] = silu(gate[i])·up[i] for i < n, vectorised (a Cephes-style exp,
 * about 1 ulp): each element's result depends on its own inputs only. */
void swiglu_invariant(float *out, const float *gate, const float *up, size_t n);

/* Row forms of kernels.h's element-wise kernels, on the calling thread, for
 * a caller that splits the work itself. Defined in kernels.c next to the
 * parallel forms, so that the sampler, the training forward and their
 * backward share one implementation:
 *   rmsnorm_forward_row: one row of rmsnorm_forward; returns its rstd.
 *   rope_table: (cos, sin) of every pair for positions [p0, p1) into table
 *     (positions, hd/2, 2), exactly as rope_forward computes them;
 *     rope_forward_row turns one row (n_heads·hd) at position pos from the
 *     table, bit for bit as rope_forward would.
 *   rope_forward_heads: rope_forward_row on n heads of one row, one head
 *     at a time: rope_forward_row may round differently with another
 *     number of heads (the compiler vectorises its loop over heads), and
 *     the sampler's threads may take any heads, so both forward passes
 *     turn heads one by one. */
float rmsnorm_forward_row(float *out, const float *inp, const float *weight, int C, float eps);
void rope_table(float *table, int p0, int p1, int head_dim, float theta, const rlvr_rope_scaling *scaling);
void rope_forward_row(float *row, const float *table, int pos, int n_heads, int head_dim);
void rope_forward_heads(float *heads, const float *table, int pos, int n, int head_dim);

/* Test hook (sampler.c): how the sampler splits forward calls over threads.
 * A call with fewer than parallel_macs multiply-adds runs on one thread;
 * threads split a group's channels only with step_macs between barriers;
 * row groups take at least rows_each rows. 0, 0, 1 sends every call to the
 * threads; the defaults depend on the model's size. */
struct rlvr_sampler;
void sampler_set_schedule(struct rlvr_sampler *s, double parallel_macs, double step_macs, int rows_each);

#endif
