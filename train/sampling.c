/* train/sampling.c — see sampling.h. */
#include "train/sampling.h"

#include "core/error.h"

/* The other formats: tensor by tensor into a blank model and the sampler's
 * packed copy, each matrix released once packed. */
static int load_streamed(const rlvr_checkpoint *ck, const rlvr_sampler_config *sc, rlvr_model **model,
                         rlvr_sampler **sampler) {
    rlvr_model_config cfg;
    RLVR_TRY(rlvr_checkpoint_model_config(ck, &cfg));
    rlvr_model *m = NULL;
    rlvr_sampler *s = NULL;
    int rc = rlvr_model_new_blank(&m, &cfg);
    if (rc < 0) return rlvr_error_wrap(rc, "the checkpoint's model");
    rc = rlvr_sampler_new_unpacked(&s, m, sc);
    for (int i = 0; rc == 0 && i < RLVR_PARAM_TENSORS; i++) {
        rc = rlvr_checkpoint_read_model_tensor(ck, m, i);
        if (rc == 0 && rlvr_sampler_pack_tensor(s, i)) rlvr_model_release_tensor(m, i);
    }
    if (rc < 0) {
        rlvr_sampler_free(s);
        rlvr_model_free(m);
        return rc;
    }
    *model = m;
    *sampler = s;
    return 0;
}

int rlvr_sampling_load(const rlvr_checkpoint *ck, const rlvr_sampler_config *sc, rlvr_model **model,
                       rlvr_sampler **sampler) {
    *model = NULL;
    *sampler = NULL;
    if (sc->weights != RLVR_SAMPLER_WEIGHTS_F32) return load_streamed(ck, sc, model, sampler);
    rlvr_model *m = NULL;
    RLVR_TRY(rlvr_checkpoint_load_model(ck, &m));
    int rc = rlvr_sampler_new(sampler, m, sc);
    if (rc < 0) {
        rlvr_model_free(m);
        return rc;
    }
    *model = m;
    return 0;
}
