/* policy/quant_kernels.h — the sampler's matmul on bf16 and q8_0 weights.
 *
 * The sampler's fast formats ([sampler] weights = bf16 | q8_0;
 * docs/POLICY.md "Weight formats"). The split into panels of MATMUL_GROUP
 * output channels is the float32 kernel's (sampler_kernels.h), so the
 * sampler shares work among threads the same way; only what a panel holds
 * and how a dot product is rounded differ. Every output element is still
 * computed whole by one thread in one fixed order, from its own row's
 * input only (activations are rounded or quantized per row), so a row's
 * bits do not depend on the other rows, the row blocks or the split.
 *
 * bf16 (weights and activations rounded to bfloat16, nearest even; values
 *   below 2^-126 in magnitude become zero): out[r][o] is, from s = 0, for
 *   each pair of inputs k = 0, 2, 4, ...: s = s + a[k+1]·w[k+1], then
 *   s = s + a[k]·w[k], each product exact in float32 and each sum rounded
 *   once (AVX512_BF16's vdpbf16ps, or the same in C); an odd C gets a zero
 *   pair element.
 *   Panel: (ceil(C/2), MATMUL_GROUP) 32-bit words, word (p, j) holding
 *   channel j's bf16 of inputs 2p (low half) and 2p+1 (high half).
 * q8_0 (GGUF's Q8_0 weights: each channel's inputs in blocks of 32, one
 *   fp16 scale d = max|w|/127 per block and int8 values q = round(w/d),
 *   halves away from zero, as ggml's quantize_row_q8_0 computes them):
 *   each row's input is quantized per block of 32 as d_a = max|x|/127
 *   (float32), q_a = x·(127/max|x|) rounded to nearest even (0 for an all
 *   zero block). Per block b the integer dot S_b = Σ q_w·q_a is exact; then
 *   s = s + S_b·(d_w·d_a) over the blocks in order, each multiply and add
 *   rounded once in float32. Inputs past C are zero.
 *   Panel: per block of 32 inputs, 8 groups of 4 inputs × MATMUL_GROUP
 *   channels as bytes q_w + 128 (group i, channel j, input 4i + t at byte
 *   (i·MATMUL_GROUP + j)·4 + t: one 32-bit word per channel, the operand of
 *   AVX512_VNNI's vpdpbusd), then the channels' fp16 scales: 34 bytes per
 *   32 weights. The offset is undone exactly: Σ (q_w + 128)·q_a − 128·Σ q_a.
 *
 * Internal to policy/. */
#ifndef RLVR_POLICY_QUANT_KERNELS_H
#define RLVR_POLICY_QUANT_KERNELS_H

#include "policy/sampler.h"         /* rlvr_sampler_weights */
#include "policy/sampler_kernels.h" /* matmul_target, MATMUL_GROUP */

#include <stddef.h>

/* Bytes of an (OC, C) matrix packed in a quantized format (bf16, q8_0). */
size_t quant_packed_bytes(rlvr_sampler_weights fmt, int OC, int C);

/* Fills panels [g0, g1) of `packed` from weight (OC, C), channels past OC
 * zero. */
void quant_pack(rlvr_sampler_weights fmt, void *packed, const float *weight, int OC, int C, int g0, int g1);

/* Scratch bytes for `rows` rows of a C-wide input rounded to the format. */
size_t quant_act_bytes(rlvr_sampler_weights fmt, int rows, int C);

/* matmul_invariant_part for weights packed by quant_pack: rows [r0, r1) ×
 * groups [g0, g1) of the targets' products with inp (N, C), on the calling
 * thread; `act` (quant_act_bytes for r1 − r0 rows) receives the rounded
 * inputs. */
void quant_matmul_part(rlvr_sampler_weights fmt, const matmul_target *targets, int n, const float *inp, int C,
                       int r0, int r1, int g0, int g1, void *act);

/* The kernel this build runs the format with: "avx512_bf16" or
 * "avx512_vnni" where the build targets those instructions, "portable" (C
 * the compiler vectorises) otherwise. */
const char *quant_kernel_name(rlvr_sampler_weights fmt);

#endif
