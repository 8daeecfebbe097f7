#include "rl/reward.h"

#include "core/error.h"

#include <math.h>
#include <stddef.h>

static int refuse(const char **bad_key, const char *key) {
    if (bad_key) *bad_key = key;
    return RLVR_EINVAL;
}

int rlvr_rl_reward_config_check(const rlvr_reward_config *c, const char **bad_key) {
    if (bad_key) *bad_key = NULL;
    if (!c) return RLVR_FAIL(RLVR_EINVAL, "reward config is NULL");
    if (!(c->format_weight >= 0)) {
        rlvr_error_set(RLVR_EINVAL, "format_weight = %g must be >= 0", c->format_weight);
        return refuse(bad_key, "format_weight");
    }
    if (c->max_tokens < 1) {
        rlvr_error_set(RLVR_EINVAL, "max_tokens = %lld must be >= 1", (long long)c->max_tokens);
        return refuse(bad_key, "max_tokens");
    }
    switch (c->length_penalty) {
    case RLVR_LENGTH_LINEAR: {
        double wrong = c->format_weight, correct = 1.0 - c->length_weight;
        if (!(c->length_weight >= 0)) {
            rlvr_error_set(RLVR_EINVAL, "length_weight = %g must be >= 0", c->length_weight);
            return refuse(bad_key, "length_weight");
        }
        if (!(c->format_weight + c->length_weight < 1.0)) {
            rlvr_error_set(RLVR_EINVAL,
                           "format_weight + length_weight = %g + %g = %g must be < 1: a short wrong "
                           "trajectory with perfect format scores up to format_weight = %g while a "
                           "correct one at max_tokens scores 1 - length_weight = %g",
                           c->format_weight, c->length_weight, c->format_weight + c->length_weight, wrong,
                           correct);
            return refuse(bad_key, "length_weight");
        }
        return 0;
    }
    case RLVR_LENGTH_THRESHOLD: {
        if (c->length_budget < 0 || c->length_budget >= c->max_tokens) {
            rlvr_error_set(RLVR_EINVAL, "length_budget = %lld must be in [0, max_tokens = %lld)",
                           (long long)c->length_budget, (long long)c->max_tokens);
            return refuse(bad_key, "length_budget");
        }
        if (!(c->format_weight < 1.0)) {
            rlvr_error_set(RLVR_EINVAL,
                           "format_weight = %g must be < 1: a short wrong trajectory with perfect format "
                           "would score as much as a correct one within the budget (1)",
                           c->format_weight);
            return refuse(bad_key, "format_weight");
        }
        double at_cap = c->length_slope * (double)(c->max_tokens - c->length_budget);
        double bound = 1.0 + c->format_weight;
        if (!(c->length_slope >= 0) || !(at_cap >= bound)) {
            rlvr_error_set(RLVR_EINVAL,
                           "length_slope x (max_tokens - length_budget) = %g x (%lld - %lld) = %g must be >= "
                           "1 + format_weight = %g, so a rollout at the cap never earns a positive reward "
                           "(use length_slope >= %.6g)",
                           c->length_slope, (long long)c->max_tokens, (long long)c->length_budget, at_cap, bound,
                           bound / (double)(c->max_tokens - c->length_budget));
            return refuse(bad_key, "length_slope");
        }
        return 0;
    }
    case RLVR_LENGTH_NONE:
        if (!(c->format_weight < 1.0)) {
            rlvr_error_set(RLVR_EINVAL,
                           "format_weight = %g must be < 1: a wrong trajectory with perfect format would "
                           "score as much as a correct one (1)",
                           c->format_weight);
            return refuse(bad_key, "format_weight");
        }
        return 0;
    }
    rlvr_error_set(RLVR_EINVAL, "unknown length_penalty %d", (int)c->length_penalty);
    return refuse(bad_key, "length_penalty");
}

bool rlvr_rl_stop_is_truncation(rlvr_stop_reason stop) {
    return stop == RLVR_STOP_MAX_TOKENS || stop == RLVR_STOP_TURN_LIMIT || stop == RLVR_STOP_CONTEXT ||
           stop == RLVR_STOP_REPETITION || stop == RLVR_STOP_MALFORMED;
}

static double length_term(const rlvr_reward_config *c, int64_t tokens) {
    switch (c->length_penalty) {
    case RLVR_LENGTH_LINEAR:
        return c->length_weight * (double)tokens / (double)c->max_tokens;
    case RLVR_LENGTH_THRESHOLD:
        return tokens > c->length_budget ? c->length_slope * (double)(tokens - c->length_budget) : 0.0;
    case RLVR_LENGTH_NONE:
        break;
    }
    return 0.0;
}

int rlvr_rl_reward(rlvr_reward *out, const rlvr_reward_input *in, const rlvr_reward_config *c) {
    if (!out || !in || !c) return RLVR_FAIL(RLVR_EINVAL, "reward: NULL argument");
    *out = (rlvr_reward){0};
    if (!(in->format >= 0 && in->format <= 1))
        return RLVR_FAIL(RLVR_EINVAL, "reward: format credit %g outside [0, 1]", in->format);
    if (in->policy_tokens < 0 || in->policy_tokens > c->max_tokens)
        return RLVR_FAIL(RLVR_EINVAL,
                         "reward: %lld policy tokens outside [0, max_tokens = %lld]; [reward] max_tokens must "
                         "equal the harness's policy-token budget",
                         (long long)in->policy_tokens, (long long)c->max_tokens);

    if (in->verdict == RLVR_VERDICT_INFRA || in->verdict == RLVR_VERDICT_DROPPED ||
        in->stop == RLVR_STOP_INFRA_ERROR) {
        out->excluded = true;
        return 0;
    }
    bool truncated = rlvr_rl_stop_is_truncation(in->stop);
    if (truncated && c->truncation == RLVR_TRUNCATION_EXCLUDE) {
        out->excluded = true;
        return 0;
    }
    double outcome = 0.0, format = 0.0;
    if (!truncated) {
        switch (in->verdict) {
        case RLVR_VERDICT_PASS:
            outcome = 1.0;
            format = in->format;
            break;
        case RLVR_VERDICT_FAIL:
            if (c->outcome != RLVR_OUTCOME_BINARY) { /* partial or fail_to_pass: the verifier chose the share */
                if (!(in->partial >= 0.0 && in->partial <= 1.0))
                    return RLVR_FAIL(RLVR_EINVAL, "reward: partial credit %g outside [0, 1]", in->partial);
                outcome = in->partial;
            }
            format = in->format;
            break;
        case RLVR_VERDICT_REJECTED:
        case RLVR_VERDICT_TIMEOUT:
            break;
        default:
            return RLVR_FAIL(RLVR_EINVAL, "reward: rollout has no verdict (verdict %d, stop reason %d)",
                             (int)in->verdict, (int)in->stop);
        }
    }
    out->outcome = outcome;
    out->format = format;
    out->length_penalty = length_term(c, in->policy_tokens);
    out->total = outcome + c->format_weight * format - out->length_penalty;
    return 0;
}
