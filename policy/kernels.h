/* policy/kernels.h — the transformer's building blocks on CPU (llm.c style).
 *
 * Conventions: outputs first, then inputs, then sizes. Backward functions
 * take the d* buffers first and ACCUMULATE (+=) into them; zeroing is the
 * caller's job. N is a number of rows (positions), C a width. Shared by the
 * training forward/backward (model.c) and the sampler (sampler.c).
 *
 * RoPE convention (the only one in rlvr): interleaved pairs, as in Meta's
 * Llama and llama2.c. Within each head of size hd, dimensions (2i, 2i+1) are
 * rotated by angle pos · theta^(-2i/hd), i = 0 .. hd/2-1:
 *   x'[2i]   = x[2i]·cos − x[2i+1]·sin
 *   x'[2i+1] = x[2i]·sin + x[2i+1]·cos
 * (HuggingFace checkpoints use the half-split form; converting one means
 * permuting the rows of wq and wk.) With a rlvr_rope_scaling of kind LLAMA3
 * the frequency theta^(-2i/hd) is rescaled (rope_inv_freq); every RoPE
 * function takes the scaling, NULL or kind NONE meaning none. */
#ifndef RLVR_POLICY_KERNELS_H
#define RLVR_POLICY_KERNELS_H

#include "policy/model.h"

#include <stdint.h>

/* out = inp / rms(inp) * weight, per row; rstd (N) = 1/sqrt(mean(x²)+eps)
 * (may be NULL when no backward follows). */
void rmsnorm_forward(float *out, float *rstd, const float *inp, const float *weight, int N, int C, float eps);
void rmsnorm_backward(float *dinp, float *dweight, const float *dout, const float *inp, const float *weight,
                      const float *rstd, int N, int C);

/* The inverse frequency of pair i (0 <= i < hd/2), in double: the one place
 * that computes it, for the forward, the backward and the sampler. */
double rope_inv_freq(int i, int head_dim, float theta, const rlvr_rope_scaling *scaling);
/* In place on x (N, n_heads·hd); positions (N) give each row's position. */
void rope_forward(float *x, const int32_t *positions, int N, int n_heads, int head_dim, float theta,
                  const rlvr_rope_scaling *scaling);
/* The transposed rotation, in place on dx. */
void rope_backward(float *dx, const int32_t *positions, int N, int n_heads, int head_dim, float theta,
                   const rlvr_rope_scaling *scaling);

/* row (n) += bias (n): the q/k/v bias, one float add per element, so the
 * training forward and the sampler round it alike. */
void bias_add_row(float *row, const float *bias, int n);
/* dst[rows[n]] += src[n] for every row n of src (N, C); rows NULL adds
 * every row into dst's first (a bias's gradient: Σ_n dout[n]). Columns are
 * split across threads and each column walks the rows in order: rows that
 * meet add up in a fixed order, without atomics (the embedding's gradient). */
void scatter_add_rows(float *dst, const float *src, const int32_t *rows, int N, int C);

/* The backward of out = silu(gate)·up, (N, F) (the forward:
 * swiglu_invariant, sampler_kernels.h). */
void swiglu_backward(float *dgate, float *dup, const float *dout, const float *gate, const float *up, int N, int F);

/* The backward of out (N, OC) = inp (N, C) · weight (OC, C)ᵀ (the forward:
 * the batch-invariant matmul of sampler_kernels.h), through cblas_sgemm:
 * dinp += dout · weight ; dweight += doutᵀ · inp. Either may be NULL. */
void matmul_backward(float *dinp, float *dweight, const float *dout, const float *inp, const float *weight, int N,
                     int C, int OC);

/* From one row of raw logits (V) at a temperature: log π(target) (target < 0:
 * returns 0) and the entropy of softmax(logits / temperature). Computed in
 * double internally. Writes the probabilities to probs (V) when non-NULL. */
float logits_logprob_entropy(float *entropy, float *probs, const float *logits, int V, float temperature,
                             int32_t target);

/* logits_logprob_entropy in two halves, for a caller that draws the target
 * from the probabilities first (the sampler): the stats call does the
 * passes over V (entropy and probs as above, and the max zmax and log-sum
 * log_sum of the scaled logits), logits_logprob_at the target's log-prob
 * from them, bit for bit what logits_logprob_entropy returns for that
 * target. Saves the second pass of exps over V a second full call costs
 * (a tenth of a G = 16 decode step at a 49k vocabulary). */
void logits_softmax_stats(double *zmax, double *log_sum, float *entropy, float *probs, const float *logits, int V,
                          float temperature);
float logits_logprob_at(const float *logits, float temperature, double zmax, double log_sum, int32_t target);

#endif
