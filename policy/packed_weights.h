/* policy/packed_weights.h — the model's matrices packed for the
 * batch-invariant matmul (sampler_kernels.h), shared by the sampler and the
 * training forward so that both compute every product the same way; the
 * sampler may pack them in a quantized format instead (quant_kernels.h).
 *
 * Order in memory: the order a forward pass reads them (layer by layer: wq,
 * wk, wv, wo, w_gate, w_up, w_down; then the LM head), so the weights
 * stream through memory in one direction and the kernel's prefetch at the
 * end of one matrix fetches the start of the next. The pointers are layer
 * 0's; layer l's matrix is at + l·layer floats (f32), or at mat[kind] +
 * l·layer_bytes bytes (any format).
 *
 * Internal to policy/. */
#ifndef RLVR_POLICY_PACKED_WEIGHTS_H
#define RLVR_POLICY_PACKED_WEIGHTS_H

#include "policy/model.h"
#include "policy/sampler.h" /* rlvr_sampler_weights */

#include <stddef.h>

/* One matrix to pack: the model's weight (OC, C) into dst. */
typedef struct {
    void *dst;
    const float *src;
    int OC, C;
} packed_job;

/* The matrices of a layer in memory order, then the head (mat[]). */
enum { PW_WQ, PW_WK, PW_WV, PW_WO, PW_GATE, PW_UP, PW_DOWN, PW_HEAD, PW_KINDS };

typedef struct {
    rlvr_sampler_weights format;
    float *wq, *wk, *wv, *wo, *w_gate, *w_up, *w_down, *lm_head; /* f32 only (else NULL) */
    size_t layer;       /* floats of one layer's matrices (f32) */
    const unsigned char *mat[PW_KINDS]; /* layer 0's matrices and the head, any format */
    size_t layer_bytes; /* bytes of one layer's matrices */
    size_t bytes;       /* bytes of every matrix */
    void *memory;       /* every matrix, on a cache line */
    packed_job *jobs;   /* (n_jobs) what packed_weights_pack packs */
    int n_jobs;
} packed_weights;

/* Allocates the packed copy of model's matrices in float32 (not yet
 * filled); `owner` names the caller in the out-of-memory message. */
int packed_weights_init(packed_weights *p, const rlvr_model *model, const char *owner);
/* The same in any format. */
int packed_weights_init_as(packed_weights *p, const rlvr_model *model, rlvr_sampler_weights format,
                           const char *owner);
/* Copies the model's current matrices in (f32: about 15 ms per 100 MB of
 * weights on one core; the matrices are shared out among the threads). */
void packed_weights_pack(packed_weights *p);
/* Only the matrices whose source lies in [lo, hi) (one parameter tensor). */
void packed_weights_pack_range(packed_weights *p, const float *lo, const float *hi);
void packed_weights_free(packed_weights *p);

#endif
