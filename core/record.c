#include "core/record.h"
#include "core/error.h"

#include <stdlib.h>
#include <string.h>

static int grow_tokens(rlvr_rollout *r, int32_t need) {
    if (need <= r->cap_tokens) return 0;
    int32_t cap = r->cap_tokens > 0 ? r->cap_tokens : 64;
    while (cap < need) cap *= 2;
    int32_t *tokens = realloc(r->tokens, (size_t)cap * sizeof *tokens);
    if (tokens) r->tokens = tokens;
    float *logprobs = realloc(r->logprobs, (size_t)cap * sizeof *logprobs);
    if (logprobs) r->logprobs = logprobs;
    uint8_t *mask = realloc(r->mask, (size_t)cap * sizeof *mask);
    if (mask) r->mask = mask;
    float *entropy = realloc(r->entropy, (size_t)cap * sizeof *entropy);
    if (entropy) r->entropy = entropy;
    if (!tokens || !logprobs || !mask || !entropy)
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory growing a rollout to %d tokens", cap);
    r->cap_tokens = cap;
    return 0;
}

static int grow_turns(rlvr_rollout *r, int32_t need) {
    if (need <= r->cap_turns) return 0;
    int32_t cap = r->cap_turns > 0 ? r->cap_turns : 8;
    while (cap < need) cap *= 2;
    rlvr_turn *turns = realloc(r->turns, (size_t)cap * sizeof *turns);
    if (!turns) return RLVR_FAIL(RLVR_ENOMEM, "out of memory growing a rollout to %d turns", cap);
    r->turns = turns;
    r->cap_turns = cap;
    return 0;
}

int rlvr_rollout_init(rlvr_rollout *r, int32_t cap_tokens, int32_t cap_turns) {
    memset(r, 0, sizeof *r);
    int rc = grow_tokens(r, cap_tokens > 0 ? cap_tokens : 1);
    if (rc == 0) rc = grow_turns(r, cap_turns > 0 ? cap_turns : 1);
    if (rc < 0) rlvr_rollout_free(r);
    return rc;
}

void rlvr_rollout_free(rlvr_rollout *r) {
    free(r->tokens);
    free(r->logprobs);
    free(r->mask);
    free(r->entropy);
    free(r->turns);
    memset(r, 0, sizeof *r);
}

void rlvr_rollout_reset(rlvr_rollout *r) {
    r->n_tokens = 0;
    r->n_turns = 0;
    r->prompt_tokens = 0;
    r->stop = RLVR_STOP_NONE;
    r->verdict = RLVR_VERDICT_NONE;
    r->verdict_reason = 0;
    memset(&r->reward, 0, sizeof r->reward);
    memset(&r->timings, 0, sizeof r->timings);
}

int rlvr_rollout_push_token(rlvr_rollout *r, int32_t token, float logprob, float entropy, uint8_t mask) {
    RLVR_TRY(grow_tokens(r, r->n_tokens + 1));
    int32_t i = r->n_tokens++;
    r->tokens[i] = token;
    r->logprobs[i] = logprob;
    r->entropy[i] = entropy;
    r->mask[i] = mask;
    return 0;
}

int rlvr_rollout_push_turn(rlvr_rollout *r, const rlvr_turn *turn, int32_t *index) {
    RLVR_TRY(grow_turns(r, r->n_turns + 1));
    r->turns[r->n_turns] = *turn;
    if (index) *index = r->n_turns;
    r->n_turns++;
    return 0;
}

int32_t rlvr_rollout_policy_tokens(const rlvr_rollout *r) {
    int32_t n = 0;
    for (int32_t i = 0; i < r->n_tokens; i++) n += r->mask[i] == RLVR_TOKEN_POLICY;
    return n;
}

int rlvr_rollout_copy(rlvr_rollout *dst, const rlvr_rollout *src) {
    *dst = *src;
    dst->tokens = NULL;
    dst->logprobs = NULL;
    dst->mask = NULL;
    dst->entropy = NULL;
    dst->turns = NULL;
    dst->cap_tokens = dst->cap_turns = 0;
    int rc = grow_tokens(dst, src->n_tokens > 0 ? src->n_tokens : 1);
    if (rc == 0) rc = grow_turns(dst, src->n_turns > 0 ? src->n_turns : 1);
    if (rc < 0) {
        rlvr_rollout_free(dst);
        return rc;
    }
    size_t n = (size_t)src->n_tokens;
    memcpy(dst->tokens, src->tokens, n * sizeof *dst->tokens);
    memcpy(dst->logprobs, src->logprobs, n * sizeof *dst->logprobs);
    memcpy(dst->mask, src->mask, n * sizeof *dst->mask);
    memcpy(dst->entropy, src->entropy, n * sizeof *dst->entropy);
    memcpy(dst->turns, src->turns, (size_t)src->n_turns * sizeof *dst->turns);
    return 0;
}

const char *rlvr_stop_reason_name(rlvr_stop_reason s) {
    static const char *const names[] = {"none", "done", "max_tokens", "turn_limit",
                                        "context", "repetition", "infra_error", "malformed"};
    return (unsigned)s < RLVR_STOP_COUNT ? names[s] : "unknown";
}

const char *rlvr_verdict_name(rlvr_verdict v) {
    static const char *const names[] = {"none", "pass", "fail", "rejected", "timeout", "infra", "dropped"};
    return (unsigned)v < RLVR_VERDICT_COUNT ? names[v] : "unknown";
}
