/* Reward assembly (docs/RL.md "Rewards that cannot reorder success"):
 * outcome, partial credit (partial and fail_to_pass), format shaping, linear and threshold length
 * penalties, the truncation policy, exclusions, and the invariant that a
 * valid configuration never ranks a wrong trajectory above a correct one
 * (within the budget). */
#include "rl/reward.h"
#include "test.h"

static const rlvr_reward_config linear = {.outcome = RLVR_OUTCOME_BINARY, .format_weight = 0.1,
                                          .length_penalty = RLVR_LENGTH_LINEAR, .length_weight = 0.2,
                                          .max_tokens = 1000, .length_budget = 0, .length_slope = 0,
                                          .truncation = RLVR_TRUNCATION_FAIL};
static const rlvr_reward_config threshold = {.outcome = RLVR_OUTCOME_PARTIAL, .format_weight = 0.05,
                                             .length_penalty = RLVR_LENGTH_THRESHOLD, .length_weight = 0,
                                             .max_tokens = 1000, .length_budget = 600, .length_slope = 0.003,
                                             .truncation = RLVR_TRUNCATION_FAIL};

static rlvr_reward score(const rlvr_reward_config *c, rlvr_verdict v, rlvr_stop_reason stop, double format,
                         int64_t tokens) {
    rlvr_reward_input in = {.verdict = v, .stop = stop, .partial = 0.75,
                            .format = format, .policy_tokens = tokens};
    rlvr_reward out;
    CHECK_OK(rlvr_rl_reward(&out, &in, c));
    return out;
}

static void test_values(void) {
    CHECK_OK(rlvr_rl_reward_config_check(&linear, NULL));
    CHECK_OK(rlvr_rl_reward_config_check(&threshold, NULL));
    rlvr_reward r = score(&linear, RLVR_VERDICT_PASS, RLVR_STOP_DONE, 0.5, 250);
    CHECK_NEAR(r.total, 1 + 0.1 * 0.5 - 0.2 * 0.25, 1e-15);
    CHECK(r.outcome == 1.0 && !r.excluded);
    CHECK_NEAR(r.length_penalty, 0.05, 1e-15);
    /* binary outcome ignores partial tests */
    r = score(&linear, RLVR_VERDICT_FAIL, RLVR_STOP_DONE, 1.0, 0);
    CHECK(r.outcome == 0.0);
    CHECK_NEAR(r.total, 0.1, 1e-15);
    /* partial credit: 3 of 4 sealed tests */
    r = score(&threshold, RLVR_VERDICT_FAIL, RLVR_STOP_DONE, 0.0, 100);
    CHECK_NEAR(r.outcome, 0.75, 1e-15);
    rlvr_reward_input out_of_range = {.verdict = RLVR_VERDICT_FAIL, .stop = RLVR_STOP_DONE, .partial = 1.5,
                                      .policy_tokens = 10};
    CHECK(rlvr_rl_reward(&r, &out_of_range, &threshold) == RLVR_EINVAL);
    /* fail_to_pass: the verifier's FAIL_TO_PASS share arrives as partial and
     * scores like partial credit, range check included */
    rlvr_reward_config f2p = threshold;
    f2p.outcome = RLVR_OUTCOME_FAIL_TO_PASS;
    CHECK_OK(rlvr_rl_reward_config_check(&f2p, NULL));
    r = score(&f2p, RLVR_VERDICT_FAIL, RLVR_STOP_DONE, 0.0, 100);
    CHECK_NEAR(r.outcome, 0.75, 1e-15);
    CHECK_NEAR(r.total, 0.75, 1e-15);
    r = score(&f2p, RLVR_VERDICT_PASS, RLVR_STOP_DONE, 0.0, 100);
    CHECK(r.outcome == 1.0);
    r = score(&f2p, RLVR_VERDICT_REJECTED, RLVR_STOP_DONE, 1.0, 100);
    CHECK(r.outcome == 0.0 && r.format == 0.0);
    r = score(&f2p, RLVR_VERDICT_FAIL, RLVR_STOP_MAX_TOKENS, 1.0, 100); /* truncated: no credit */
    CHECK(r.outcome == 0.0);
    CHECK(rlvr_rl_reward(&r, &out_of_range, &f2p) == RLVR_EINVAL);
    /* threshold: free within the budget, γ per token beyond */
    r = score(&threshold, RLVR_VERDICT_PASS, RLVR_STOP_DONE, 1.0, 600);
    CHECK_NEAR(r.total, 1.05, 1e-15);
    r = score(&threshold, RLVR_VERDICT_PASS, RLVR_STOP_DONE, 1.0, 800);
    CHECK_NEAR(r.total, 1.05 - 0.003 * 200, 1e-14);
    /* at the cap a correct rollout with perfect format earns nothing positive */
    r = score(&threshold, RLVR_VERDICT_PASS, RLVR_STOP_DONE, 1.0, 1000);
    CHECK(r.total <= 0.0);
    /* rejected patch and timeout: failure, no format credit */
    r = score(&linear, RLVR_VERDICT_REJECTED, RLVR_STOP_DONE, 1.0, 100);
    CHECK(r.outcome == 0 && r.format == 0);
    CHECK_NEAR(r.total, -0.02, 1e-15);
    r = score(&linear, RLVR_VERDICT_TIMEOUT, RLVR_STOP_DONE, 1.0, 100);
    CHECK(r.outcome == 0 && r.format == 0);
}

static void test_truncation_and_exclusion(void) {
    const rlvr_stop_reason stops[] = {RLVR_STOP_MAX_TOKENS, RLVR_STOP_TURN_LIMIT, RLVR_STOP_CONTEXT,
                                      RLVR_STOP_REPETITION, RLVR_STOP_MALFORMED};
    rlvr_reward_config excl = linear;
    excl.truncation = RLVR_TRUNCATION_EXCLUDE;
    for (int i = 0; i < 5; i++) {
        CHECK(rlvr_rl_stop_is_truncation(stops[i]));
        /* fail: scored as a failure even if the verifier passed it; no format credit */
        rlvr_reward r = score(&linear, RLVR_VERDICT_PASS, stops[i], 1.0, 1000);
        CHECK(!r.excluded && r.outcome == 0.0 && r.format == 0.0);
        CHECK_NEAR(r.total, -0.2, 1e-15);
        /* exclude: dropped from the loss */
        r = score(&excl, RLVR_VERDICT_NONE, stops[i], 1.0, 1000);
        CHECK(r.excluded && r.total == 0.0);
    }
    CHECK(!rlvr_rl_stop_is_truncation(RLVR_STOP_DONE));
    /* infra errors and dropped rollouts are excluded, never scored 0 */
    rlvr_reward r = score(&linear, RLVR_VERDICT_INFRA, RLVR_STOP_DONE, 1.0, 10);
    CHECK(r.excluded);
    r = score(&linear, RLVR_VERDICT_FAIL, RLVR_STOP_INFRA_ERROR, 1.0, 10);
    CHECK(r.excluded);
    r = score(&linear, RLVR_VERDICT_DROPPED, RLVR_STOP_DONE, 1.0, 10);
    CHECK(r.excluded);
    /* bad inputs */
    rlvr_reward_input in = {.verdict = RLVR_VERDICT_NONE, .stop = RLVR_STOP_DONE, .policy_tokens = 10};
    CHECK(rlvr_rl_reward(&r, &in, &linear) == RLVR_EINVAL);
    in.verdict = RLVR_VERDICT_PASS;
    in.policy_tokens = 1001;
    CHECK(rlvr_rl_reward(&r, &in, &linear) == RLVR_EINVAL);
    CHECK(strstr(rlvr_error_last(), "max_tokens") != NULL);
    in.policy_tokens = 10;
    in.format = 1.5;
    CHECK(rlvr_rl_reward(&r, &in, &linear) == RLVR_EINVAL);
}

/* Under every configuration the check accepts, on a grid of lengths and
 * format credits: any correct trajectory (within the budget for threshold)
 * scores above any wrong one. */
static void test_ordering_invariant(void) {
    const double weights[] = {0, 0.1, 0.3, 0.49, 0.5, 0.7, 0.95, 1.0};
    int accepted = 0, refused = 0;
    for (int p = 0; p < 3; p++)
        for (size_t i = 0; i < sizeof weights / sizeof *weights; i++)
            for (size_t j = 0; j < sizeof weights / sizeof *weights; j++) {
                rlvr_reward_config c = {.outcome = RLVR_OUTCOME_BINARY, .format_weight = weights[i],
                                        .length_penalty = (rlvr_length_penalty)p, .length_weight = weights[j],
                                        .max_tokens = 100, .length_budget = 60,
                                        .length_slope = weights[j] / 10 + 0.02};
                if (rlvr_rl_reward_config_check(&c, NULL) != 0) {
                    refused++;
                    continue;
                }
                accepted++;
                int64_t longest_correct = p == RLVR_LENGTH_THRESHOLD ? c.length_budget : c.max_tokens;
                double worst_correct = score(&c, RLVR_VERDICT_PASS, RLVR_STOP_DONE, 0.0, longest_correct).total;
                double best_wrong = score(&c, RLVR_VERDICT_FAIL, RLVR_STOP_DONE, 1.0, 0).total;
                CHECK_MSG(worst_correct > best_wrong, "penalty %d, lambda %g, weight %g: %g <= %g", p, weights[i],
                          weights[j], worst_correct, best_wrong);
                if (p == RLVR_LENGTH_THRESHOLD)
                    CHECK(score(&c, RLVR_VERDICT_PASS, RLVR_STOP_DONE, 1.0, c.max_tokens).total <= 0.0);
            }
    CHECK(accepted > 20 && refused > 10);
}

int main(void) {
    test_values();
    test_truncation_and_exclusion();
    test_ordering_invariant();
    return test_summary("test_rl_reward");
}
