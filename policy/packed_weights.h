/* policy/packed_weights.h — the model's matrices packed for the
 * batch-invariant matmul (sampler_kernels.h), shared by the sampler and the
 * training forward so that both compute every product the same way.
 *
 * Order in memory: the order a forward pass reads them (layer by layer: wq,
 * wk, wv, wo, w_gate, w_up, w_down; then the LM head), so the weights
 * stream through memory in one direction and the kernel's prefetch at the
 * end of one matrix fetches the start of the next. The pointers are layer
 * 0's; layer l's matrix is at + l·layer floats.
 *
 * Internal to policy/. */
#ifndef RLVR_POLICY_PACKED_WEIGHTS_H
#define RLVR_POLICY_PACKED_WEIGHTS_H

#include "policy/model.h"

#include <stddef.h>

/* One matrix to pack: the model's weight (OC, C) into dst. */
typedef struct {
    float *dst;
    const float *src;
    int OC, C;
} packed_job;

typedef struct {
    float *wq, *wk, *wv, *wo, *w_gate, *w_up, *w_down, *lm_head;
    size_t layer;       /* floats of one layer's matrices */
    float *memory;      /* every matrix, on a cache line */
    packed_job *jobs;   /* (n_jobs) what packed_weights_pack packs */
    int n_jobs;
} packed_weights;

/* Allocates the packed copy of model's matrices (not yet filled); `owner`
 * names the caller in the out-of-memory message. */
int packed_weights_init(packed_weights *p, const rlvr_model *model, const char *owner);
/* Copies the model's current matrices in (about 15 ms per 100 MB of
 * weights on one core; the matrices are shared out among the threads). */
void packed_weights_pack(packed_weights *p);
void packed_weights_free(packed_weights *p);

#endif
