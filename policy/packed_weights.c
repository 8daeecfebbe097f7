/* policy/packed_weights.c — see packed_weights.h. */
#include "policy/packed_weights.h"

#include "core/error.h"
#include "core/mem.h"
#include "policy/sampler_kernels.h"

#include <stdlib.h>
#include <string.h>

int packed_weights_init(packed_weights *p, const rlvr_model *model, const char *owner) {
    memset(p, 0, sizeof *p);
    const rlvr_param_views *w = rlvr_model_param_views(model);
    const rlvr_model_config *m = rlvr_model_config_of(model);
    int C = m->d_model, KV = m->n_kv_heads * (m->d_model / m->n_heads), F = m->d_ff, L = m->n_layers;
    struct {
        float **dst;
        const float *src;
        int OC, C;
    } kinds[] = {{&p->wq, w->wq, C, C},         {&p->wk, w->wk, KV, C},         {&p->wv, w->wv, KV, C},
                 {&p->wo, w->wo, C, C},         {&p->w_gate, w->w_gate, F, C}, {&p->w_up, w->w_up, F, C},
                 {&p->w_down, w->w_down, C, F}};
    enum { KINDS = sizeof kinds / sizeof kinds[0] };
    for (int i = 0; i < KINDS; i++) p->layer += matmul_packed_floats(kinds[i].OC, kinds[i].C);
    size_t head = matmul_packed_floats(m->vocab, C), total = (size_t)L * p->layer + head;
    /* on a cache line, so that (for inner sizes that keep panels whole
     * lines long, as model widths do) no weight vector straddles two lines */
    p->memory = rlvr_mem_alloc(total * sizeof(float)); /* 64-byte aligned; not inherited by forks */
    p->jobs = malloc(((size_t)L * KINDS + 1) * sizeof *p->jobs);
    if (!p->memory || !p->jobs) {
        packed_weights_free(p);
        return RLVR_FAIL(RLVR_ENOMEM, "%s: out of memory for the packed weights (%zu floats)", owner, total);
    }
    float *at = p->memory;
    for (int l = 0; l < L; l++)
        for (int i = 0; i < KINDS; i++) {
            if (l == 0) *kinds[i].dst = at;
            p->jobs[p->n_jobs++] =
                (packed_job){at, kinds[i].src + (size_t)l * kinds[i].OC * kinds[i].C, kinds[i].OC, kinds[i].C};
            at += matmul_packed_floats(kinds[i].OC, kinds[i].C);
        }
    p->lm_head = at;
    p->jobs[p->n_jobs++] = (packed_job){at, w->lm_head, m->vocab, C};
    return 0;
}

void packed_weights_pack(packed_weights *p) {
#pragma omp parallel for schedule(dynamic, 1) if (p->n_jobs > 1)
    for (int i = 0; i < p->n_jobs; i++) {
        const packed_job *j = &p->jobs[i];
        matmul_pack(j->dst, j->src, j->OC, j->C, 0, (j->OC + MATMUL_GROUP - 1) / MATMUL_GROUP);
    }
}

void packed_weights_free(packed_weights *p) {
    rlvr_mem_free(p->memory);
    free(p->jobs);
    memset(p, 0, sizeof *p);
}
