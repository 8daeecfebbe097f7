/* policy/optim.h — AdamW with decoupled weight decay and bias correction,
 * global-norm gradient clipping, and the learning-rate schedule. Operates on
 * the model's flat buffers (params, grads, m, v), one loop. */
#ifndef RLVR_POLICY_OPTIM_H
#define RLVR_POLICY_OPTIM_H

#include "policy/model.h"

#include <stdint.h>

typedef enum { RLVR_LR_CONSTANT = 0, RLVR_LR_COSINE = 1 } rlvr_lr_schedule;

typedef struct {
    float lr;            /* peak learning rate */
    float beta1, beta2;  /* 0.9, 0.95 */
    float eps;           /* 1e-8 */
    float weight_decay;  /* decoupled; applied to matrices only (not norms) */
    float grad_clip;     /* max global L2 norm; <= 0 disables */
    int64_t warmup_steps;/* linear warm-up from 0 over this many steps */
    int64_t total_steps; /* cosine decays to min_lr_ratio·lr at this step */
    float min_lr_ratio;
    rlvr_lr_schedule schedule;
} rlvr_adamw_config;

/* Learning rate at optimizer step `step` (1-based). */
float rlvr_lr_at(const rlvr_adamw_config *cfg, int64_t step);

/* L2 norm of the whole gradient buffer (deterministic reduction order). */
float rlvr_model_grad_norm(rlvr_model *m);

/* One AdamW step number `step` (1-based, used for bias correction and the
 * schedule): clips gradients to grad_clip by global norm, updates params and
 * moments in place. Writes the pre-clip gradient norm to *grad_norm if non-NULL. */
int rlvr_model_adamw_step(rlvr_model *m, const rlvr_adamw_config *cfg, int64_t step, float *grad_norm);

#endif
