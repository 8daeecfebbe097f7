/* Every worked example of docs/RL.md "Worked examples", to the printed
 * precision: through the individual functions, and through the
 * planner on examples/plan-worked-examples.ini (what `rlvr plan` prints). */
#include "core/config.h"
#include "rl/advantage.h"
#include "rl/config.h"
#include "rl/difficulty.h"
#include "rl/estimators.h"
#include "rl/plan.h"
#include "test.h"

/* value rounded to `d` decimals equals `printed` */
#define CHECK_PRINTED(value, d, printed)                                                             \
    do {                                                                                             \
        double v_ = (value), s_ = pow(10.0, d);                                                      \
        CHECK_MSG(round(v_ * s_) == round((printed) * s_), "%s = %.10g, docs/RL.md prints %.*f", #value, v_, \
                  (int)(d), (double)(printed));                                                      \
    } while (0)

static void test_functions(void) {
    /* docs/RL.md "Worked examples" 1: p = 0.18 → pass@8 = 79.6 %, pass@16 = 95.8 % */
    CHECK_PRINTED(100 * rlvr_rl_pass_at_k_rate(0.18, 8), 1, 79.6);
    CHECK_PRINTED(100 * rlvr_rl_pass_at_k_rate(0.18, 16), 1, 95.8);

    /* example 5: one success in a group of 16 → mean 0.0625, advantage √15 ≈ 3.87 */
    double r[16] = {1}, adv[16];
    bool informative;
    CHECK_OK(rlvr_rl_group_advantages(adv, &informative, r, NULL, 16, RLVR_ADV_STD, 1e-6));
    CHECK(informative);
    CHECK_PRINTED(adv[0], 2, 3.87);
    CHECK_OK(rlvr_rl_group_advantages(adv, NULL, r, NULL, 16, RLVR_ADV_STD, 0.0));
    CHECK_NEAR(adv[0], sqrt(15.0), 1e-12);
    CHECK_NEAR(adv[1], -1.0 / sqrt(15.0), 1e-12);
    CHECK_OK(rlvr_rl_group_advantages(adv, NULL, r, NULL, 16, RLVR_ADV_MEAN, 0.0));
    CHECK(adv[0] == 1.0 - 0.0625); /* the mean is exactly 0.0625 */
    /* the largest a binary group can give: no group of 16 with k ≥ 1 successes beats it */
    for (int k = 2; k <= 15; k++) {
        double rk[16] = {0};
        for (int i = 0; i < k; i++) rk[i] = 1;
        CHECK_OK(rlvr_rl_group_advantages(adv, NULL, rk, NULL, 16, RLVR_ADV_STD, 0.0));
        CHECK(adv[0] < sqrt(15.0));
    }

    /* example 6: a task solved 5 % of the time leaves a group of 8 without signal: 0.95^8 ≈ 0.66 */
    CHECK_PRINTED(rlvr_rl_zero_signal_probability(0.05, 8), 2, 0.66);

    /* example 3: V̂(s0) = 0.05, after the debugger turn 0.60 → Â = +0.55, from K = 20 forks */
    double before[20] = {1}, after[20] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, v[2], a;
    CHECK_OK(rlvr_rl_mc_value(&v[0], before, 20));
    CHECK_OK(rlvr_rl_mc_value(&v[1], after, 20));
    CHECK_NEAR(v[0], 0.05, 1e-15);
    CHECK_NEAR(v[1], 0.60, 1e-15);
    uint8_t valued[2] = {1, 1};
    CHECK_OK(rlvr_rl_turn_advantages(&a, v, valued, 1));
    CHECK_PRINTED(a, 2, 0.55);

    /* example 4: T = 30, L = 512, K = 8 at every intermediate turn */
    rlvr_mc_cost c;
    CHECK_OK(rlvr_rl_mc_cost(&c, 30, 512, 8, NULL, 0));
    CHECK(c.base_tokens == 15360);
    CHECK(c.turn_sum == 435);
    CHECK(c.mc_tokens == 1781760);
    CHECK(c.total_tokens == 1797120);
    CHECK_PRINTED(c.ratio, 0, 117);

    /* example 7: flaky test: 1 − 0.8^16 ≈ 0.97; consensus 0.20^3 = 0.008 */
    CHECK_PRINTED(rlvr_rl_pass_at_k_rate(0.20, 16), 2, 0.97);
    CHECK_PRINTED(rlvr_rl_pass_hat_k_rate(0.20, 3), 3, 0.008);

    /* docs/EVAL.md "Worked example": 3 successes in 16 samples */
    double e;
    CHECK_OK(rlvr_rl_pass_at_k(&e, 16, 3, 1));
    CHECK_NEAR(e, 0.1875, 1e-15);
    CHECK_OK(rlvr_rl_pass_at_k(&e, 16, 3, 4));
    CHECK_PRINTED(100 * e, 1, 60.7); /* 1 − 715/1820 */
    CHECK_OK(rlvr_rl_pass_at_k(&e, 16, 3, 8));
    CHECK_NEAR(e, 0.9, 1e-12); /* 1 − 1287/12870 */
    CHECK_OK(rlvr_rl_pass_hat_k(&e, 16, 3, 2));
    CHECK_NEAR(e, 0.025, 1e-15); /* 3/120 */
    CHECK_PRINTED(100 * rlvr_rl_pass_at_k_rate(0.1875, 8), 1, 81.0); /* plugging p̂ in instead */
}

static void test_planner_on_example_file(void) {
    char path[512];
    test_source_path(path, sizeof path, "examples/plan-worked-examples.ini");
    static const rlvr_config_key *const schemas[] = {rlvr_rl_config_keys, rlvr_rl_plan_config_keys, NULL};
    rlvr_config *cfg;
    CHECK_OK(rlvr_config_load(&cfg, path, schemas));
    if (!cfg) return;
    rlvr_rl_config rl;
    rlvr_plan_inputs in;
    rlvr_plan_report r;
    CHECK_OK(rlvr_rl_config_load(&rl, cfg));
    CHECK_OK(rlvr_rl_plan_inputs_load(&in, cfg));
    rlvr_config_free(cfg);
    CHECK_OK(rlvr_rl_plan(&r, &in));

    CHECK(r.n_groups == 2 && r.groups[0].G == 8 && r.groups[1].G == 16);
    CHECK_PRINTED(100 * r.groups[0].pass_at_g, 1, 79.6);
    CHECK_PRINTED(100 * r.groups[1].pass_at_g, 1, 95.8);
    CHECK_PRINTED(r.groups[0].hard_no_success, 2, 0.66);
    CHECK_NEAR(r.groups[1].lone_winner_mean, 0.0625, 1e-15);
    CHECK_PRINTED(r.groups[1].lone_winner_advantage, 2, 3.87);
    CHECK_PRINTED(r.groups[1].flaky_lucky_pass, 2, 0.97);

    /* example 2: 1024 × 8 = 8192; 819 true; 184 false; 184/1003 = 18.3 % */
    CHECK(r.rollouts_per_step == 8192);
    CHECK(r.true_positives == 819);
    CHECK(r.false_positives == 184);
    CHECK(r.true_positives + r.false_positives == 1003);
    CHECK_PRINTED(100 * r.false_positive_share, 1, 18.3);

    CHECK_PRINTED(r.consensus_false_pass, 3, 0.008);
    CHECK(r.mc_full.total_tokens == 1797120);
    CHECK_PRINTED(r.mc_full.ratio, 0, 117);
    CHECK_PRINTED(r.turn_advantage, 2, 0.55);

    /* example 8: 4.5 s useful; cold 8 s → 56.25 %, 115 200/h; snapshot 4.515 s → 99.7 %, ≈ 204 120/h; 1.77× */
    CHECK_NEAR(r.useful_s, 4.5, 1e-12);
    CHECK_NEAR(r.cold_cycle_s, 8.0, 1e-12);
    CHECK_PRINTED(100 * r.cold_useful, 2, 56.25);
    CHECK_PRINTED(r.cold_rollouts_per_h, 0, 115200);
    CHECK_NEAR(r.snapshot_cycle_s, 4.515, 1e-12);
    CHECK_PRINTED(100 * r.snapshot_useful, 1, 99.7);
    CHECK_PRINTED(r.snapshot_rollouts_per_h, 0, 204120);
    CHECK_PRINTED(r.reset_speedup, 2, 1.77);

    /* beyond the worked examples: consistent, deterministic figures */
    CHECK(r.hard_group_size == 14); /* smallest G with 1 − 0.95^G ≥ 0.5 */
    CHECK(r.waves == 32);
    CHECK(r.sync_step_s > r.async_step_s && r.async_step_s >= in.train_step_s);
    CHECK(r.expected_wave_max_s > r.rollout_mean_s);
    rlvr_plan_report again;
    CHECK_OK(rlvr_rl_plan(&again, &in));
    CHECK(again.sync_step_s == r.sync_step_s);

    /* different inputs give different figures: nothing is fixed */
    in.success_rate = 0.5;
    in.groups_per_step = 10;
    CHECK_OK(rlvr_rl_plan(&again, &in));
    CHECK_NEAR(again.groups[0].pass_at_g, 1 - pow(0.5, 8), 1e-15);
    CHECK(again.rollouts_per_step == 80 && again.true_positives == 8);
}

int main(void) {
    test_functions();
    test_planner_on_example_file();
    return test_summary("test_rl_examples");
}
