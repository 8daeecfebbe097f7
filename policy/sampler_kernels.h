/* policy/sampler_kernels.h — batch-invariant kernels for the sampler.
 *
 * The sampler must draw the same tokens whether a sequence is decoded alone
 * or with 15 others (SPEC §5, DESIGN "Determinism"). BLAS gives no such
 * promise: sgemm may block and sum a row differently depending on the number
 * of rows M. Here every output element is ONE dot product computed by one
 * thread in one fixed order (vector lanes over the inner dimension, a fixed
 * reduction tree, then the scalar tail), whatever the other rows are, how
 * many there are, or how many threads run. Rows are register-blocked with
 * each weight row reused across the batch, which is what makes batched
 * decoding faster than one sequence at a time.
 *
 * Internal to policy/ (the training path uses kernels.h and BLAS). */
#ifndef RLVR_POLICY_SAMPLER_KERNELS_H
#define RLVR_POLICY_SAMPLER_KERNELS_H

#include <stdint.h>

/* dot(a, b) over n elements in the fixed order described above. */
float dot_invariant(const float *a, const float *b, int n);

/* out (N, OC) = inp (N, C) · weight (OC, C)ᵀ; out[n][o] = dot_invariant(inp[n], weight[o], C)
 * bit for bit. Parallel over output channels (OpenMP). */
void matmul_forward_invariant(float *out, const float *inp, const float *weight, int N, int C, int OC);

/* Several products of the same input in one parallel loop (q, k, v; gate,
 * up): targets[i].out (N, OC_i) = inp (N, C) · targets[i].weight (OC_i, C)ᵀ,
 * each element exactly as matmul_forward_invariant computes it. */
#define MATMUL_MAX_TARGETS 4
typedef struct {
    float *out;           /* (N, OC) */
    const float *weight;  /* (OC, C) */
    int OC;
} matmul_target;
void matmul_forward_invariant_multi(const matmul_target *targets, int n, const float *inp, int N, int C);

/* Where each query row's keys and values live (float offsets into the
 * caches): positions t < prefix_len[r] at prefix_base[r] + t·kv_dim (a
 * prefix shared with other sequences), positions prefix_len[r] .. pos[r] at
 * kv_base[r] + t·kv_dim (the row's own sequence). */
typedef struct {
    const int64_t *prefix_base; /* (N) */
    const int32_t *prefix_len;  /* (N) */
    const int64_t *kv_base;     /* (N) */
    const int32_t *pos;         /* (N) position of the query row */
} attention_rows;

/* Causal attention of N query rows against KV caches, one (row, head) per
 * task: row r attends to positions 0..pos[r].
 *   out    (N, H·hd)   attention output (before wo)
 *   scores (N, H, ctx) scratch
 *   q      (N, H·hd)   queries after RoPE
 * Query head h reads KV head h / (H / n_kv_heads); scale 1/sqrt(hd). Each
 * score is a dot_invariant and each output element a sum in position order,
 * so a row's result does not depend on the other rows or on where (shared
 * prefix or own rows) identical keys are stored. */
void attention_forward_cached(float *out, float *scores, const float *q, const float *kcache, const float *vcache,
                              const attention_rows *rows, int N, int n_heads, int n_kv_heads, int head_dim,
                              int ctx);

#endif
