/* train/pack.c — records → packed batch → forward/backward (train/pack.h). */
#include "train/pack.h"

#include "core/error.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static int grow(rlvr_pack *p, int64_t tokens, int seqs) {
    if (seqs + 1 > p->cap_seqs) {
        int32_t *o = realloc(p->offsets, (size_t)(seqs + 1) * sizeof *o);
        if (!o) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        p->offsets = o, p->cap_seqs = seqs + 1;
    }
    if (tokens <= p->cap) return 0;
    int64_t cap = tokens + tokens / 2;
    void **f[] = {(void **)&p->logp,    (void **)&p->entropy,  (void **)&p->dlogp,    (void **)&p->dentropy,
                  (void **)&p->next_lp, (void **)&p->next_ent, (void **)&p->next_dlp, (void **)&p->next_dent};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        void *q = realloc(*f[i], (size_t)cap * sizeof(float));
        if (!q) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        *f[i] = q;
    }
    int32_t *t = realloc(p->tokens, (size_t)cap * sizeof *t);
    if (!t) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    p->tokens = t;
    uint8_t *m = realloc(p->policy, (size_t)cap);
    if (!m) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    p->policy = m;
    p->cap = cap;
    return 0;
}

int rlvr_pack_records(rlvr_pack *p, const rlvr_rollout *const *records, int n) {
    int64_t total = 0;
    int seqs = 0;
    for (int i = 0; i < n; i++)
        if (records[i] && records[i]->n_tokens > 0) total += records[i]->n_tokens, seqs++;
    RLVR_TRY(grow(p, total > 0 ? total : 1, seqs));
    p->n_seqs = 0;
    p->offsets[0] = 0;
    int64_t at = 0;
    for (int i = 0; i < n; i++) {
        const rlvr_rollout *r = records[i];
        if (!r || r->n_tokens <= 0) continue;
        memcpy(p->tokens + at, r->tokens, (size_t)r->n_tokens * sizeof *p->tokens);
        for (int32_t t = 0; t < r->n_tokens; t++) p->policy[at + t] = r->mask[t] == RLVR_TOKEN_POLICY;
        at += r->n_tokens;
        p->offsets[++p->n_seqs] = (int32_t)at;
    }
    memset(p->dlogp, 0, (size_t)(at > 0 ? at : 1) * sizeof(float));
    memset(p->dentropy, 0, (size_t)(at > 0 ? at : 1) * sizeof(float));
    return 0;
}

void rlvr_pack_free(rlvr_pack *p) {
    free(p->offsets), free(p->tokens), free(p->policy), free(p->logp), free(p->entropy), free(p->dlogp);
    free(p->dentropy), free(p->next_lp), free(p->next_ent), free(p->next_dlp), free(p->next_dent);
    memset(p, 0, sizeof *p);
}

int64_t rlvr_pack_policy_tokens(const rlvr_pack *p) {
    int64_t n = 0;
    for (int64_t t = 0; t < (p->n_seqs ? p->offsets[p->n_seqs] : 0); t++) n += p->policy[t];
    return n;
}

int rlvr_pack_forward(rlvr_pack *p, rlvr_model *m, float temperature) {
    if (p->n_seqs == 0) return RLVR_FAIL(RLVR_EINVAL, "empty batch");
    rlvr_batch b = {.n_seqs = p->n_seqs, .offsets = p->offsets, .tokens = p->tokens};
    RLVR_TRY(rlvr_model_forward(m, &b, temperature, p->next_lp, p->next_ent));
    for (int s = 0; s < p->n_seqs; s++) {
        int32_t a = p->offsets[s], e = p->offsets[s + 1];
        p->logp[a] = 0, p->entropy[a] = 0;
        for (int32_t t = a + 1; t < e; t++) p->logp[t] = p->next_lp[t - 1], p->entropy[t] = p->next_ent[t - 1];
    }
    return 0;
}

int rlvr_pack_backward(rlvr_pack *p, rlvr_model *m) {
    bool entropy_term = false;
    for (int s = 0; s < p->n_seqs; s++) {
        int32_t a = p->offsets[s], e = p->offsets[s + 1];
        for (int32_t t = a; t + 1 < e; t++) p->next_dlp[t] = p->dlogp[t + 1], p->next_dent[t] = p->dentropy[t + 1];
        p->next_dlp[e - 1] = 0, p->next_dent[e - 1] = 0;
        for (int32_t t = a; t < e && !entropy_term; t++) entropy_term = p->dentropy[t] != 0;
    }
    /* without an entropy term the backward skips the entropy gradient */
    return rlvr_model_backward(m, p->next_dlp, entropy_term ? p->next_dent : NULL);
}
