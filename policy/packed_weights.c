/* policy/packed_weights.c — see packed_weights.h. */
#include "policy/packed_weights.h"

#include "core/error.h"
#include "core/mem.h"
#include "policy/quant_kernels.h"
#include "policy/sampler_kernels.h"

#include <stdlib.h>
#include <string.h>

static size_t matrix_bytes(rlvr_sampler_weights format, int OC, int C) {
    return format == RLVR_SAMPLER_WEIGHTS_F32 ? matmul_packed_floats(OC, C) * sizeof(float)
                                              : quant_packed_bytes(format, OC, C);
}

int packed_weights_init(packed_weights *p, const rlvr_model *model, const char *owner) {
    return packed_weights_init_as(p, model, RLVR_SAMPLER_WEIGHTS_F32, owner);
}

int packed_weights_init_as(packed_weights *p, const rlvr_model *model, rlvr_sampler_weights format,
                           const char *owner) {
    memset(p, 0, sizeof *p);
    p->format = format;
    const rlvr_param_views *w = rlvr_model_param_views(model);
    const rlvr_model_config *m = rlvr_model_config_of(model);
    int C = m->d_model, KV = m->n_kv_heads * (m->d_model / m->n_heads), F = m->d_ff, L = m->n_layers;
    struct {
        const float *src;
        int OC, C;
    } kinds[] = {{w->wq, C, C},     {w->wk, KV, C},   {w->wv, KV, C},  {w->wo, C, C},
                 {w->w_gate, F, C}, {w->w_up, F, C},  {w->w_down, C, F}};
    enum { KINDS = sizeof kinds / sizeof kinds[0] };
    _Static_assert((int)KINDS == (int)PW_HEAD, "one matrix kind per layer matrix");
    for (int i = 0; i < KINDS; i++) p->layer_bytes += matrix_bytes(format, kinds[i].OC, kinds[i].C);
    p->layer = p->layer_bytes / sizeof(float);
    p->bytes = (size_t)L * p->layer_bytes + matrix_bytes(format, m->vocab, C);
    /* on a cache line, so that (for inner sizes that keep panels whole
     * lines long, as model widths do) no weight vector straddles two lines */
    p->memory = rlvr_mem_alloc(p->bytes); /* 64-byte aligned; not inherited by forks */
    p->jobs = malloc(((size_t)L * KINDS + 1) * sizeof *p->jobs);
    if (!p->memory || !p->jobs) {
        size_t bytes = p->bytes;
        packed_weights_free(p);
        return RLVR_FAIL(RLVR_ENOMEM, "%s: out of memory for the packed weights (%zu bytes)", owner, bytes);
    }
    unsigned char *at = p->memory;
    for (int l = 0; l < L; l++)
        for (int i = 0; i < KINDS; i++) {
            if (l == 0) p->mat[i] = at;
            p->jobs[p->n_jobs++] =
                (packed_job){at, kinds[i].src + (size_t)l * kinds[i].OC * kinds[i].C, kinds[i].OC, kinds[i].C};
            at += matrix_bytes(format, kinds[i].OC, kinds[i].C);
        }
    p->mat[PW_HEAD] = at;
    p->jobs[p->n_jobs++] = (packed_job){at, w->lm_head, m->vocab, C};
    if (format == RLVR_SAMPLER_WEIGHTS_F32) {
        float **f32[PW_KINDS] = {&p->wq, &p->wk, &p->wv, &p->wo, &p->w_gate, &p->w_up, &p->w_down, &p->lm_head};
        for (int i = 0; i < PW_KINDS; i++) *f32[i] = (float *)(void *)p->mat[i];
    }
    return 0;
}

void packed_weights_pack(packed_weights *p) { packed_weights_pack_range(p, NULL, NULL); }

void packed_weights_pack_range(packed_weights *p, const float *lo, const float *hi) {
#pragma omp parallel for schedule(dynamic, 1) if (p->n_jobs > 1)
    for (int i = 0; i < p->n_jobs; i++) {
        const packed_job *j = &p->jobs[i];
        if (lo && (j->src < lo || j->src >= hi)) continue;
        int groups = (j->OC + MATMUL_GROUP - 1) / MATMUL_GROUP;
        if (p->format == RLVR_SAMPLER_WEIGHTS_F32)
            matmul_pack(j->dst, j->src, j->OC, j->C, 0, groups);
        else
            quant_pack(p->format, j->dst, j->src, j->OC, j->C, 0, groups);
    }
}

void packed_weights_free(packed_weights *p) {
    rlvr_mem_free(p->memory);
    free(p->jobs);
    memset(p, 0, sizeof *p);
}
