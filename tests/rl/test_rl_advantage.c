/* Group advantages (std, mean, leave-one-out, exclusions), their properties
 * (zero variance → exactly 0; std form invariant to scaling rewards by c > 0),
 * MC turn credit, branch-point selection, and the entropy controller
 * converging into its band on a simulated entropy process. */
#include "core/rng.h"
#include "rl/advantage.h"
#include "rl/entropy.h"
#include "test.h"

static void test_group_forms(void) {
    double r[4] = {1, 0, 0.5, 0.5}, a[4];
    bool info;
    /* mean 0.5, population std sqrt(0.125) */
    CHECK_OK(rlvr_rl_group_advantages(a, &info, r, NULL, 4, RLVR_ADV_STD, 0.0));
    CHECK(info);
    CHECK_NEAR(a[0], 0.5 / sqrt(0.125), 1e-14);
    CHECK_NEAR(a[1], -0.5 / sqrt(0.125), 1e-14);
    CHECK(a[2] == 0.0 && a[3] == 0.0);
    CHECK_OK(rlvr_rl_group_advantages(a, &info, r, NULL, 4, RLVR_ADV_STD, 0.1));
    CHECK_NEAR(a[0], 0.5 / (sqrt(0.125) + 0.1), 1e-14);
    CHECK_OK(rlvr_rl_group_advantages(a, &info, r, NULL, 4, RLVR_ADV_MEAN, 0.0));
    CHECK_NEAR(a[0], 0.5, 1e-15);
    CHECK_NEAR(a[1], -0.5, 1e-15);
    /* leave-one-out: r_i − mean of the other three */
    CHECK_OK(rlvr_rl_group_advantages(a, &info, r, NULL, 4, RLVR_ADV_LOO, 0.0));
    CHECK_NEAR(a[0], 1 - 1.0 / 3, 1e-15);
    CHECK_NEAR(a[1], 0 - 2.0 / 3, 1e-15);
    CHECK_NEAR(a[2], 0.5 - 0.5, 1e-15);
    /* an excluded rollout (infra error) does not count and gets 0 */
    uint8_t inc[4] = {1, 1, 0, 1};
    double r2[4] = {1, 0, 99, 0};
    CHECK_OK(rlvr_rl_group_advantages(a, &info, r2, inc, 4, RLVR_ADV_MEAN, 0.0));
    CHECK(a[2] == 0.0);
    CHECK_NEAR(a[0], 1 - 1.0 / 3, 1e-15);
    /* one included rollout: no signal */
    uint8_t one[4] = {0, 1, 0, 0};
    CHECK_OK(rlvr_rl_group_advantages(a, &info, r2, one, 4, RLVR_ADV_LOO, 0.0));
    CHECK(!info && a[1] == 0.0);
    /* refusals */
    CHECK(rlvr_rl_group_advantages(a, &info, r, NULL, 0, RLVR_ADV_STD, 0) == RLVR_EINVAL);
    CHECK(rlvr_rl_group_advantages(a, &info, r, NULL, 4, RLVR_ADV_STD, -1) == RLVR_EINVAL);
    double nan_r[2] = {NAN, 1};
    CHECK(rlvr_rl_group_advantages(a, &info, nan_r, NULL, 2, RLVR_ADV_STD, 0) == RLVR_EINVAL);
}

static void test_properties(void) {
    rlvr_rng_stream s;
    rlvr_rng_stream_init(&s, 11, RLVR_RNG_TEST, 3, 0);
    for (int trial = 0; trial < 200; trial++) {
        int G = 2 + (int)rlvr_rng_next_below(&s, 30);
        double r[32], rc[32], a[32], ac[32];
        bool info;
        /* zero variance: every form gives exactly 0 (even for values like 0.1 whose mean rounds) */
        double v = 0.1 * (double)rlvr_rng_next_below(&s, 10);
        for (int i = 0; i < G; i++) r[i] = v;
        for (int k = 0; k < 3; k++) {
            CHECK_OK(rlvr_rl_group_advantages(a, &info, r, NULL, G, (rlvr_advantage_kind)k, 1e-6));
            CHECK(!info);
            for (int i = 0; i < G; i++) CHECK(a[i] == 0.0);
        }
        /* scaling by c > 0 leaves std-normalised advantages unchanged (ε = 0) */
        double c = 0.01 + 100 * rlvr_rng_next_uniform(&s);
        for (int i = 0; i < G; i++) {
            r[i] = rlvr_rng_next_uniform(&s) < 0.3 ? 1.0 : rlvr_rng_next_uniform(&s);
            rc[i] = c * r[i];
        }
        CHECK_OK(rlvr_rl_group_advantages(a, &info, r, NULL, G, RLVR_ADV_STD, 0.0));
        CHECK_OK(rlvr_rl_group_advantages(ac, NULL, rc, NULL, G, RLVR_ADV_STD, 0.0));
        double sum = 0, sq = 0;
        for (int i = 0; i < G; i++) {
            CHECK_NEAR(ac[i], a[i], 1e-12 * (1 + fabs(a[i])));
            sum += a[i];
            sq += a[i] * a[i];
        }
        if (info) {
            CHECK_NEAR(sum, 0.0, 1e-12);    /* mean 0 */
            CHECK_NEAR(sq / G, 1.0, 1e-12); /* unit population variance */
        }
    }
}

static void test_turn_credit(void) {
    /* 4 turns, states s0..s4; values known at s0 (baseline), s2 (a branch point) and s4 (outcome) */
    double v[5] = {0.25, 0, 0.6, 0, 1.0}, adv[4];
    uint8_t valued[5] = {1, 0, 1, 0, 1};
    CHECK_OK(rlvr_rl_turn_advantages(adv, v, valued, 4));
    CHECK_NEAR(adv[0], 0.35, 1e-15);
    CHECK_NEAR(adv[1], 0.35, 1e-15);
    CHECK_NEAR(adv[2], 0.4, 1e-15);
    CHECK_NEAR(adv[3], 0.4, 1e-15);
    /* without branch points every turn shares the trajectory signal R − V̂(s0) */
    uint8_t ends[5] = {1, 0, 0, 0, 1};
    CHECK_OK(rlvr_rl_turn_advantages(adv, v, ends, 4));
    for (int t = 0; t < 4; t++) CHECK_NEAR(adv[t], 0.75, 1e-15);
    uint8_t missing_end[5] = {1, 0, 1, 0, 0};
    CHECK(rlvr_rl_turn_advantages(adv, v, missing_end, 4) == RLVR_EINVAL);

    /* branch points: after state changes first, then highest entropy, ≤ k, ascending */
    double ent[8] = {0, 0.2, 2.5, 0.1, 1.7, 3.0, 0.4, 1.2};
    uint8_t changed[8] = {0, 0, 0, 0, 0, 0, 1, 0}; /* turn 6 ran an edit → branch at state 7 */
    int turns[8], n;
    CHECK_OK(rlvr_rl_branch_turns(turns, &n, ent, changed, 8, 3, 1.0));
    CHECK(n == 3 && turns[0] == 2 && turns[1] == 5 && turns[2] == 7);
    CHECK_OK(rlvr_rl_branch_turns(turns, &n, ent, NULL, 8, 2, 1.0));
    CHECK(n == 2 && turns[0] == 2 && turns[1] == 5);
    CHECK_OK(rlvr_rl_branch_turns(turns, &n, ent, NULL, 8, 10, 1.0));
    CHECK(n == 4 && turns[0] == 2 && turns[1] == 4 && turns[2] == 5 && turns[3] == 7);
    CHECK_OK(rlvr_rl_branch_turns(turns, &n, ent, changed, 1, 3, 0.0));
    CHECK(n == 0);

    /* selective cost: K·L·Σ(T − t) over the chosen points */
    rlvr_mc_cost c;
    int chosen[3] = {2, 5, 7};
    CHECK_OK(rlvr_rl_mc_cost(&c, 8, 100, 4, chosen, 3));
    CHECK(c.turn_sum == 6 + 3 + 1 && c.mc_tokens == 4 * 100 * 10 && c.base_tokens == 800);
    int outside[1] = {8};
    CHECK(rlvr_rl_mc_cost(&c, 8, 100, 4, outside, 1) == RLVR_EINVAL);
    /* the expectation over uniform points matches the average over all single points */
    double ratio;
    CHECK_NEAR(rlvr_rl_mc_cost_expected(30, 512, 8, 1, &ratio), 8.0 * 512 * 435 / 29, 1e-6);
    CHECK_NEAR(rlvr_rl_mc_cost_expected(30, 512, 8, 99, NULL), 1781760.0, 1e-6);
}

static const rlvr_entropy_config ecfg = {.coef = 0.0, .adaptive = true, .target_low = 0.4, .target_high = 0.6,
                                         .lr = 0.05, .coef_min = 0.0, .coef_max = 0.5};

/* Simulated process: entropy relaxes toward a level raised by the bonus,
 * H_eq(α) = 0.1 + 4α, minus a collapse drift, plus noise. */
static void test_entropy_controller(void) {
    rlvr_entropy_controller c;
    CHECK_OK(rlvr_rl_entropy_init(&c, &ecfg));
    rlvr_rng_stream s;
    rlvr_rng_stream_init(&s, 5, RLVR_RNG_TEST, 4, 0);
    double H = 2.0; /* starts far above the band */
    int in_band_tail = 0;
    const int steps = 3000;
    rlvr_entropy_controller saved = c;
    for (int k = 0; k < steps; k++) {
        H += 0.2 * ((0.1 + 4.0 * c.coef) - H) + 0.01 * rlvr_rng_next_normal(&s);
        CHECK_OK(rlvr_rl_entropy_update(&c, H));
        CHECK(c.coef >= ecfg.coef_min && c.coef <= ecfg.coef_max);
        if (k >= steps - 500) in_band_tail += rlvr_rl_entropy_in_band(&c, H);
        if (k == 1000) saved = c; /* a checkpoint is a struct copy */
    }
    CHECK_MSG(in_band_tail >= 495, "only %d of the last 500 steps in the band", in_band_tail);
    CHECK_NEAR(c.coef, 0.1, 0.02); /* equilibrium: 0.1 + 4α = 0.5 */
    CHECK(c.updates == steps);

    /* the formula: α − η·(H̄ − mid), clipped */
    rlvr_entropy_controller d;
    CHECK_OK(rlvr_rl_entropy_init(&d, &ecfg));
    d.coef = 0.2;
    CHECK_OK(rlvr_rl_entropy_update(&d, 0.3));
    CHECK_NEAR(d.coef, 0.2 - 0.05 * (0.3 - 0.5), 1e-15);
    CHECK_OK(rlvr_rl_entropy_update(&d, 100.0));
    CHECK(d.coef == 0.0);
    CHECK_OK(rlvr_rl_entropy_update(&d, -100.0));
    CHECK(d.coef == 0.5);
    /* resumed from the copy, the same inputs give the same coefficients */
    rlvr_entropy_controller a = saved, b = saved;
    for (int k = 0; k < 10; k++) {
        CHECK_OK(rlvr_rl_entropy_update(&a, 0.45 + 0.01 * k));
        CHECK_OK(rlvr_rl_entropy_update(&b, 0.45 + 0.01 * k));
    }
    /* field by field: the configuration inside has padding bytes after `adaptive` */
    CHECK(a.coef == b.coef && a.updates == b.updates && a.last_entropy == b.last_entropy);
    /* not adaptive: the coefficient stays */
    rlvr_entropy_config fixed = ecfg;
    fixed.adaptive = false;
    fixed.coef = 0.003;
    CHECK_OK(rlvr_rl_entropy_init(&d, &fixed));
    CHECK_OK(rlvr_rl_entropy_update(&d, 5.0));
    CHECK(d.coef == 0.003 && d.last_entropy == 5.0);
    CHECK(rlvr_rl_entropy_update(&d, NAN) == RLVR_EINVAL);
}

int main(void) {
    test_group_forms();
    test_properties();
    test_turn_credit();
    test_entropy_controller();
    return test_summary("test_rl_advantage");
}
