/* tests/train/test_dp_update.c — the update batch the leader broadcasts to
 * data-parallel trainer ranks (train/dp.c): encoded and decoded back, every
 * field equal — tokens, sampling log-probs, masks, advantages, and the
 * per-token advantages of Monte-Carlo credit (present or absent). */
#include "train/dist_internal.h"
#include "test.h"

#include <string.h>

static void make(rlvr_rollout *r, int32_t n, int seed) {
    CHECK_OK(rlvr_rollout_init(r, n, 1));
    for (int32_t k = 0; k < n; k++)
        CHECK_OK(rlvr_rollout_push_token(r, (seed * 31 + k) % 251, -0.01f * (float)(k + seed), 0.5f,
                                         k < 3 ? RLVR_TOKEN_PROMPT : k % 5 == 4 ? RLVR_TOKEN_OBSERVATION
                                                                                : RLVR_TOKEN_POLICY));
}

static void round_trip(bool with_tok_adv) {
    enum { N = 3 };
    rlvr_rollout recs[N];
    const rlvr_rollout *ptrs[N];
    float *ta[N];
    const float *cta[N];
    double adv[N] = {0.75, -0.25, -0.5};
    int32_t len[N] = {11, 1, 29};
    for (int i = 0; i < N; i++) {
        make(&recs[i], len[i], i + 1);
        ptrs[i] = &recs[i];
        ta[i] = malloc((size_t)len[i] * sizeof *ta[i]);
        for (int32_t k = 0; k < len[i]; k++) ta[i][k] = recs[i].mask[k] == RLVR_TOKEN_POLICY ? 0.125f * (float)(k - i) : 0;
        cta[i] = ta[i];
    }
    rlvr_update_batch b = {.step = 17, .n = N, .recs = ptrs, .adv = adv, .tok_adv = with_tok_adv ? cta : NULL};
    b.opt.clip_low = 0.2, b.opt.clip_high = 0.28, b.opt.is_cap = 2, b.opt.normaliser = 123;
    rlvr_dist_dp p = {0};
    rlvr_dist_dp_view v = {0};
    CHECK_OK(rlvr_dist_dp_encode_update(&p, &b));
    CHECK_OK(rlvr_dist_dp_decode_update(&p, &v));
    CHECK(v.b.step == 17 && v.b.n == N && v.b.opt.normaliser == 123 && v.b.opt.clip_high == 0.28);
    CHECK((v.b.tok_adv != NULL) == with_tok_adv);
    for (int i = 0; i < N && v.b.n == N; i++) {
        const rlvr_rollout *r = v.b.recs[i];
        CHECK(v.b.adv[i] == adv[i] && r->n_tokens == len[i]);
        CHECK(memcmp(r->tokens, recs[i].tokens, (size_t)len[i] * sizeof *r->tokens) == 0);
        CHECK(memcmp(r->logprobs, recs[i].logprobs, (size_t)len[i] * sizeof *r->logprobs) == 0);
        CHECK(memcmp(r->mask, recs[i].mask, (size_t)len[i]) == 0);
        if (with_tok_adv) CHECK(memcmp(v.b.tok_adv[i], ta[i], (size_t)len[i] * sizeof *ta[i]) == 0);
    }
    rlvr_dist_dp_view_free(&v);
    free(p.update_buf);
    for (int i = 0; i < N; i++) rlvr_rollout_free(&recs[i]), free(ta[i]);
}

int main(void) {
    round_trip(false);
    round_trip(true);
    return test_summary("test_dp_update");
}
