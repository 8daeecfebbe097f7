/* Task difficulty tracking, band sampling, the group-size rule, dynamic
 * sampling decisions, the streaming repetition detector (against a brute-force
 * count) and the estimators (pass@k, pass^k, Wilson, paired bootstrap). */
#include "core/rng.h"
#include "rl/difficulty.h"
#include "rl/estimators.h"
#include "rl/repetition.h"
#include "test.h"

static const rlvr_difficulty_config dcfg = {.ema = 0.5, .unseen_weight = 0.25, .min_weight = 0.01,
                                            .band_low = 0.0, .band_high = 0.95, .group_target = 0.5,
                                            .max_group_size = 32};

static void test_tracker(void) {
    rlvr_difficulty *d;
    CHECK_OK(rlvr_rl_difficulty_new(&d, 4, &dcfg));
    CHECK(rlvr_rl_difficulty_weight(d, 0) == 0.25);
    CHECK_OK(rlvr_rl_difficulty_observe(d, 1, 1, 10)); /* first group sets p̂ */
    CHECK_NEAR(d->p_hat[1], 0.1, 1e-15);
    CHECK_OK(rlvr_rl_difficulty_observe(d, 1, 5, 10)); /* p̂ ← p̂ + 0.5·(0.5 − p̂) */
    CHECK_NEAR(d->p_hat[1], 0.3, 1e-15);
    CHECK(d->groups[1] == 2 && d->rollouts[1] == 20 && d->successes[1] == 6);
    CHECK_NEAR(rlvr_rl_difficulty_weight(d, 1), 0.21, 1e-15);
    CHECK_OK(rlvr_rl_difficulty_observe(d, 2, 0, 8)); /* never solved: floor */
    CHECK(rlvr_rl_difficulty_weight(d, 2) == 0.01);
    CHECK_OK(rlvr_rl_difficulty_observe(d, 3, 8, 8)); /* mastered: above the band */
    CHECK(rlvr_rl_difficulty_weight(d, 3) == 0.01);
    CHECK(rlvr_rl_difficulty_observe(d, 4, 0, 8) == RLVR_EINVAL);
    CHECK(rlvr_rl_difficulty_observe(d, 0, 9, 8) == RLVR_EINVAL);

    /* the first draw picks task q with probability w_q / Σw */
    double w[4], total = 0;
    for (int q = 0; q < 4; q++) total += (w[q] = rlvr_rl_difficulty_weight(d, q));
    int hits[4] = {0};
    const int draws = 20000;
    for (int step = 0; step < draws; step++) {
        int32_t t;
        CHECK_OK(rlvr_rl_difficulty_sample(&t, d, 1, 99, (uint32_t)step, 0));
        hits[t]++;
    }
    for (int q = 0; q < 4; q++)
        CHECK_MSG(fabs((double)hits[q] / draws - w[q] / total) < 0.01, "task %d: %d hits, expected share %.3f", q,
                  hits[q], w[q] / total);
    /* without replacement, then the order repeats; deterministic */
    int32_t a[10], b[10];
    CHECK_OK(rlvr_rl_difficulty_sample(a, d, 10, 7, 3, 1));
    CHECK_OK(rlvr_rl_difficulty_sample(b, d, 10, 7, 3, 1));
    CHECK(memcmp(a, b, sizeof a) == 0);
    int seen[4] = {0};
    for (int i = 0; i < 4; i++) seen[a[i]]++;
    for (int q = 0; q < 4; q++) CHECK(seen[q] == 1);
    for (int i = 4; i < 10; i++) CHECK(a[i] == a[i % 4]);
    CHECK_OK(rlvr_rl_difficulty_sample(b, d, 10, 7, 3, 2)); /* another round, another draw */
    CHECK(memcmp(a, b, sizeof a) != 0);

    /* group size: smallest G with 1 − (1 − p)^G ≥ target */
    CHECK(rlvr_rl_group_size_for(0.05, 8, 32, 0.5) == 14);
    CHECK(1 - pow(0.95, 13) < 0.5 && 1 - pow(0.95, 14) >= 0.5);
    CHECK(rlvr_rl_group_size_for(0.5, 8, 32, 0.5) == 8);
    CHECK(rlvr_rl_group_size_for(0.0, 8, 32, 0.5) == 8);
    CHECK(rlvr_rl_group_size_for(0.05, 8, 32, 0.999) == 32);
    CHECK(rlvr_rl_group_size_for(0.05, 8, 32, 0.0) == 8);
    CHECK(rlvr_rl_difficulty_group_size(d, 0, 8) == 8);  /* unseen */
    CHECK(rlvr_rl_difficulty_group_size(d, 1, 8) == 8);  /* p̂ = 0.3 is not hard */
    CHECK_OK(rlvr_rl_difficulty_observe(d, 0, 1, 20));   /* p̂ = 0.05 */
    CHECK(rlvr_rl_difficulty_group_size(d, 0, 8) == 14);
    CHECK_NEAR(rlvr_rl_zero_signal_probability(0.05, 8), pow(0.95, 8) + pow(0.05, 8), 1e-16);
    rlvr_rl_difficulty_free(d);

    /* nothing drawable */
    rlvr_difficulty_config zero = dcfg;
    zero.min_weight = 0;
    CHECK_OK(rlvr_rl_difficulty_new(&d, 2, &zero));
    CHECK_OK(rlvr_rl_difficulty_observe(d, 0, 0, 4));
    CHECK_OK(rlvr_rl_difficulty_observe(d, 1, 4, 4));
    int32_t t;
    CHECK(rlvr_rl_difficulty_sample(&t, d, 1, 1, 1, 1) == RLVR_ELIMIT);
    rlvr_rl_difficulty_free(d);
    CHECK(rlvr_rl_difficulty_new(&d, 0, &dcfg) == RLVR_EINVAL);
}

static void test_dynamic_sampling(void) {
    rlvr_dynsample_config cfg = {.max_rounds = 3, .max_oversample = 4};
    rlvr_dynsample ds;
    CHECK_OK(rlvr_rl_dynsample_begin(&ds, &cfg, 10));
    CHECK(rlvr_rl_dynsample_next_round(&ds) == 10);
    for (int i = 0; i < 10; i++) CHECK(rlvr_rl_dynsample_offer(&ds, i < 4) == (i < 4));
    CHECK(ds.kept == 4 && ds.dropped_zero == 6);
    CHECK(rlvr_rl_dynsample_next_round(&ds) == 15); /* 6 missing / 0.4 informative */
    for (int i = 0; i < 15; i++) CHECK(rlvr_rl_dynsample_offer(&ds, true) == (i < 6));
    CHECK(ds.kept == 10 && ds.dropped_surplus == 9);
    CHECK(rlvr_rl_dynsample_next_round(&ds) == 0);
    CHECK(rlvr_rl_dynsample_shortfall(&ds) == 0);

    /* all groups uninformative: capped rounds, the shortfall is reported */
    CHECK_OK(rlvr_rl_dynsample_begin(&ds, &cfg, 10));
    int32_t n, rounds = 0;
    while ((n = rlvr_rl_dynsample_next_round(&ds)) > 0) {
        rounds++;
        CHECK(n <= 40);
        for (int i = 0; i < n; i++) CHECK(!rlvr_rl_dynsample_offer(&ds, false));
    }
    CHECK(rounds == 3 && ds.drawn == 10 + 40 + 40);
    CHECK(rlvr_rl_dynsample_shortfall(&ds) == 10);
    /* max_rounds = 1: one draw, no re-draw, zero-variance groups still dropped */
    cfg.max_rounds = 1;
    CHECK_OK(rlvr_rl_dynsample_begin(&ds, &cfg, 5));
    CHECK(rlvr_rl_dynsample_next_round(&ds) == 5);
    CHECK(!rlvr_rl_dynsample_offer(&ds, false));
    CHECK(rlvr_rl_dynsample_next_round(&ds) == 0);
    CHECK(rlvr_rl_dynsample_shortfall(&ds) == 5);
    cfg.max_oversample = 0.5;
    const char *bad;
    CHECK(rlvr_rl_dynsample_config_check(&cfg, &bad) == RLVR_EINVAL && strcmp(bad, "max_oversample") == 0);
}

/* Count of the n-gram ending at position i among those ending in (i − W, i]. */
static int brute_count(const int32_t *x, int i, int n, int W) {
    if (i + 1 < n) return 0;
    int c = 0;
    for (int j = i; j > i - W && j + 1 >= n; j--) {
        bool same = true;
        for (int k = 0; k < n && same; k++) same = x[j - k] == x[i - k];
        c += same;
    }
    return c;
}

static void test_repetition(void) {
    rlvr_rng_stream s;
    rlvr_rng_stream_init(&s, 17, RLVR_RNG_TEST, 6, 0);
    const int sizes[][3] = {{1, 1, 3}, {3, 20, 4}, {4, 7, 2}, {2, 64, 30}};
    for (int c = 0; c < 4; c++) {
        rlvr_repetition_config cfg = {.enabled = true, .ngram = sizes[c][0], .window = sizes[c][1],
                                      .max_repeats = sizes[c][2]};
        rlvr_repetition *r;
        CHECK_OK(rlvr_rl_repetition_new(&r, &cfg));
        for (int rollout = 0; rollout < 3; rollout++) { /* reuse after reset */
            enum { LEN = 600 };
            int32_t x[LEN];
            bool stopped = false;
            int mismatches = 0;
            for (int i = 0; i < LEN; i++) {
                x[i] = (int32_t)rlvr_rng_next_below(&s, 2 + (uint32_t)rollout) - 1; /* includes −1 */
                bool got = rlvr_rl_repetition_push(r, x[i]);
                int want = brute_count(x, i, cfg.ngram, cfg.window);
                stopped |= want > cfg.max_repeats;
                mismatches += rlvr_rl_repetition_last_count(r) != want || got != stopped;
            }
            CHECK_MSG(mismatches == 0, "config %d rollout %d: %d mismatches", c, rollout, mismatches);
            rlvr_rl_repetition_reset(r);
        }
        rlvr_rl_repetition_free(r);
    }

    /* a loop of period 5 in fresh text: caught after max_repeats + 1 occurrences */
    rlvr_repetition_config cfg = {.enabled = true, .ngram = 4, .window = 100, .max_repeats = 3};
    rlvr_repetition *r;
    CHECK_OK(rlvr_rl_repetition_new(&r, &cfg));
    int stop_at = -1;
    for (int i = 0; i < 200 && stop_at < 0; i++)
        if (rlvr_rl_repetition_push(r, i < 50 ? 1000 + i : 7 + i % 5)) stop_at = i;
    CHECK_MSG(stop_at == 50 + 3 + 3 * 5, "stopped at %d", stop_at);
    rlvr_rl_repetition_reset(r);
    for (int i = 0; i < 1000; i++) CHECK(!rlvr_rl_repetition_push(r, i)); /* no repeats */
    rlvr_rl_repetition_free(r);
    cfg.enabled = false;
    CHECK_OK(rlvr_rl_repetition_new(&r, &cfg));
    for (int i = 0; i < 100; i++) CHECK(!rlvr_rl_repetition_push(r, 5));
    rlvr_rl_repetition_free(r);
    cfg.window = 2;
    CHECK(rlvr_rl_repetition_new(&r, &cfg) == RLVR_EINVAL);
}

static double binom(int n, int k) {
    if (k < 0 || k > n) return 0;
    double b = 1;
    for (int i = 1; i <= k; i++) b = b * (n - k + i) / i;
    return b;
}

static void test_estimators(void) {
    for (int n = 1; n <= 20; n++)
        for (int c = 0; c <= n; c++)
            for (int k = 1; k <= n; k++) {
                double at, hat;
                CHECK_OK(rlvr_rl_pass_at_k(&at, n, c, k));
                CHECK_OK(rlvr_rl_pass_hat_k(&hat, n, c, k));
                CHECK_NEAR(at, 1 - binom(n - c, k) / binom(n, k), 1e-12);
                CHECK_NEAR(hat, binom(c, k) / binom(n, k), 1e-12);
            }
    double v;
    CHECK_OK(rlvr_rl_pass_at_k(&v, 10, 3, 1));
    CHECK_NEAR(v, 0.3, 1e-15); /* pass@1 is the success rate */
    CHECK(rlvr_rl_pass_at_k(&v, 10, 3, 11) == RLVR_EINVAL);
    CHECK(rlvr_rl_pass_hat_k(&v, 10, 11, 1) == RLVR_EINVAL);
    CHECK_OK(rlvr_rl_pass_at_k(&v, 100000, 1, 50000));
    CHECK_NEAR(v, 0.5, 1e-9);

    CHECK_NEAR(rlvr_rl_normal_quantile(0.975), 1.959963984540054, 1e-14);
    CHECK_NEAR(rlvr_rl_normal_quantile(0.5), 0.0, 1e-15);
    CHECK_NEAR(rlvr_rl_normal_quantile(1e-10), -6.361340902404056, 1e-12);
    CHECK_NEAR(rlvr_rl_normal_quantile(0.9), 1.2815515655446004, 1e-14);
    CHECK(isnan(rlvr_rl_normal_quantile(1.0)));
    double lo, hi;
    CHECK_OK(rlvr_rl_wilson_interval(&lo, &hi, 5, 10, 0.95));
    CHECK_NEAR(lo, 0.2365931, 1e-6);
    CHECK_NEAR(hi, 0.7634069, 1e-6);
    CHECK_OK(rlvr_rl_wilson_interval(&lo, &hi, 0, 20, 0.95));
    CHECK(lo == 0.0 && hi > 0.15 && hi < 0.17); /* 0.1611 */
    CHECK(rlvr_rl_wilson_interval(&lo, &hi, 3, 0, 0.95) == RLVR_EINVAL);

    /* paired bootstrap */
    enum { Q = 300 };
    double a[Q], b[Q];
    rlvr_rng_stream s;
    rlvr_rng_stream_init(&s, 23, RLVR_RNG_TEST, 7, 0);
    for (int q = 0; q < Q; q++) {
        b[q] = rlvr_rng_next_uniform(&s);
        a[q] = b[q] + 0.1;
    }
    rlvr_bootstrap bs, bs2;
    CHECK_OK(rlvr_rl_paired_bootstrap(&bs, a, b, Q, 500, 0.95, 1));
    CHECK_NEAR(bs.mean_diff, 0.1, 1e-12);
    CHECK_NEAR(bs.low, 0.1, 1e-12);
    CHECK_NEAR(bs.high, 0.1, 1e-12);
    for (int q = 0; q < Q; q++) a[q] = b[q] + 0.05 + 0.5 * (rlvr_rng_next_uniform(&s) - 0.5);
    CHECK_OK(rlvr_rl_paired_bootstrap(&bs, a, b, Q, 2000, 0.95, 1));
    CHECK_OK(rlvr_rl_paired_bootstrap(&bs2, a, b, Q, 2000, 0.95, 1));
    CHECK(bs.low == bs2.low && bs.high == bs2.high);
    CHECK(bs.low < bs.mean_diff && bs.mean_diff < bs.high);
    /* the interval is about ±1.96·sd/√Q for this sample */
    double sd = 0.5 / sqrt(12.0), half = 1.96 * sd / sqrt((double)Q);
    CHECK(fabs((bs.high - bs.low) / 2 - half) < 0.25 * half);
    CHECK(bs.low > 0);
    CHECK(rlvr_rl_paired_bootstrap(&bs, a, b, 0, 10, 0.95, 1) == RLVR_EINVAL);
}

int main(void) {
    test_tracker();
    test_dynamic_sampling();
    test_repetition();
    test_estimators();
    return test_summary("test_rl_tasks");
}
