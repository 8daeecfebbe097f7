/* train/sampling.h — a checkpoint's model loaded for sampling alone, as the
 * inference verbs (`rlvr generate`, `rlvr chat`, `rlvr agent`, `rlvr
 * rollout`) use it (docs/POLICY.md "Weight formats").
 *
 * With f32 weights this is rlvr_checkpoint_load_model then
 * rlvr_sampler_new. With another format the float32 matrices are never
 * all resident: the model is made blank (rlvr_model_new_blank), then each
 * tensor is read, packed into the sampler's copy and, when the sampler no
 * longer reads it, given back to the kernel (rlvr_model_release_tensor).
 * What stays of the model is the embedding table, the norm weights and
 * the biases; the released matrices read as 0, so such a model is only the
 * sampler's shape and lookup tables: it must not train, be saved, or have
 * its parameters changed (the sampler would pack zeros). */
#ifndef RLVR_TRAIN_SAMPLING_H
#define RLVR_TRAIN_SAMPLING_H

#include "io/checkpoint.h"
#include "policy/model.h"
#include "policy/sampler.h"

/* The checkpoint's model and a sampler of `sc` on it; both the caller's
 * (free the sampler first). *model and *sampler are set only on success. */
int rlvr_sampling_load(const rlvr_checkpoint *ck, const rlvr_sampler_config *sc, rlvr_model **model,
                       rlvr_sampler **sampler);

#endif
