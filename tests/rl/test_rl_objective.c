/* The token objective: hand-computed values for every clip region, the sign
 * convention, a finite-difference check of dlogp, refusals, and the design
 * properties: zero-variance groups contribute nothing, and with a constant
 * normaliser a failed rollout's per-token weight does not shrink with its
 * length (with 1/|o_i| it does). */
#include "core/rng.h"
#include "rl/advantage.h"
#include "rl/objective.h"
#include "test.h"

static const rlvr_objective_options base_opt = {.clip_low = 0.2, .clip_high = 0.28, .is_cap = 2.0,
                                                .kl_beta = 0, .entropy_coef = 0,
                                                .aggregation = RLVR_AGG_CONSTANT, .normaliser = 1};

/* One policy token with ratio ρ and advantage A, N = 1: returns w, loss in *loss. */
static double one_token(double ratio, double A, const rlvr_objective_options *o, double *loss,
                        rlvr_objective_stats *st_out) {
    int32_t off[2] = {0, 1};
    uint8_t mask[1] = {1};
    double sample[1] = {-1.0}, logp[1] = {-1.0 + log(ratio)}, adv[1] = {A}, w[1];
    rlvr_objective_input in = {.n_seqs = 1, .offsets = off, .mask = mask, .logp = logp, .logp_sample = sample,
                               .advantage = adv};
    rlvr_objective_stats st;
    CHECK_OK(rlvr_rl_objective(w, NULL, &st, &in, o));
    if (loss) *loss = st.loss;
    if (st_out) *st_out = st;
    return w[0];
}

static void test_regions_and_sign(void) {
    double loss;
    rlvr_objective_stats st;
    /* inside the clip range, A > 0: M = ρA, w = −ρA (descent raises log π) */
    double w = one_token(1.1, 2.0, &base_opt, &loss, &st);
    CHECK_NEAR(w, -2.2, 1e-14);
    CHECK_NEAR(loss, -2.2, 1e-14);
    CHECK(w < 0);
    CHECK(st.clipped_low == 0 && st.clipped_high == 0 && st.is_truncated == 0);
    CHECK_NEAR(st.ratio_mean, 1.1, 1e-14);
    /* above 1 + ε_high with A > 0: clipped, M = 1.28·A, no gradient */
    w = one_token(1.5, 2.0, &base_opt, &loss, &st);
    CHECK(w == 0.0);
    CHECK_NEAR(loss, -2.56, 1e-14);
    CHECK(st.clipped_high == 1 && st.clip_frac_high == 1.0);
    /* above 1 + ε_high with A < 0: the unclipped term is the minimum, gradient flows */
    w = one_token(1.5, -1.0, &base_opt, &loss, NULL);
    CHECK_NEAR(w, 1.5, 1e-14);
    CHECK_NEAR(loss, 1.5, 1e-14);
    /* below 1 − ε_low with A < 0: clipped at 0.8 */
    w = one_token(0.5, -1.0, &base_opt, &loss, &st);
    CHECK(w == 0.0);
    CHECK_NEAR(loss, 0.8, 1e-14);
    CHECK(st.clipped_low == 1);
    /* below 1 − ε_low with A > 0: unclipped ρA is the minimum */
    w = one_token(0.5, 3.0, &base_opt, &loss, NULL);
    CHECK_NEAR(w, -1.5, 1e-14);
    /* ratio beyond the cap C = 2 with A < 0: truncated to C·A, no gradient */
    w = one_token(3.0, -1.0, &base_opt, &loss, &st);
    CHECK(w == 0.0);
    CHECK_NEAR(loss, 2.0, 1e-14);
    CHECK(st.is_truncated == 1 && st.is_trunc_frac == 1.0);
    CHECK_NEAR(st.ratio_mean, 3.0, 1e-13); /* the diagnostic reports the untruncated ratio */
    /* A = 0: nothing */
    w = one_token(1.1, 0.0, &base_opt, &loss, NULL);
    CHECK(w == 0.0 && loss == 0.0);
    /* clip-higher: a token at ρ = 1.25 still learns with ε_high = 0.28, not with symmetric 0.2 */
    rlvr_objective_options sym = base_opt;
    sym.clip_high = 0.2;
    CHECK(one_token(1.25, 1.0, &base_opt, NULL, NULL) != 0.0);
    CHECK(one_token(1.25, 1.0, &sym, NULL, NULL) == 0.0);
}

static void test_kl_entropy_decoupled(void) {
    int32_t off[2] = {0, 3};
    uint8_t mask[3] = {0, 1, 1};
    double sample[3] = {0, -1.0, -2.0}, logp[3] = {0, -1.0, -2.0}, ref[3] = {0, -1.5, -1.0};
    double ent[3] = {9, 0.7, 1.3}, adv[1] = {0.0}, w[3], e[3];
    rlvr_objective_options o = base_opt;
    o.kl_beta = 0.1;
    o.entropy_coef = 0.01;
    o.aggregation = RLVR_AGG_TOKENS;
    o.normaliser = 0;
    rlvr_objective_input in = {.n_seqs = 1, .offsets = off, .mask = mask, .logp = logp, .logp_sample = sample,
                               .logp_ref = ref, .entropy = ent, .advantage = adv};
    rlvr_objective_stats st;
    CHECK_OK(rlvr_rl_objective(w, e, &st, &in, &o));
    double x1 = -0.5, x2 = 1.0; /* log π_ref − log π */
    double D1 = exp(x1) - x1 - 1, D2 = exp(x2) - x2 - 1;
    CHECK(D1 > 0 && D2 > 0); /* k3 is never negative */
    CHECK(st.normaliser == 2.0 && st.tokens == 2);
    CHECK_NEAR(st.kl_mean, (D1 + D2) / 2, 1e-15);
    CHECK_NEAR(st.loss, -((-0.1 * D1 + 0.01 * 0.7) + (-0.1 * D2 + 0.01 * 1.3)) / 2, 1e-15);
    CHECK(w[0] == 0.0 && e[0] == 0.0); /* prompt token */
    CHECK_NEAR(w[1], -0.5 * (-0.1 * (1 - exp(x1))), 1e-15);
    CHECK_NEAR(w[2], -0.5 * (-0.1 * (1 - exp(x2))), 1e-15);
    CHECK_NEAR(e[1], -0.5 * 0.01, 1e-16);
    CHECK_NEAR(st.entropy_mean, 1.0, 1e-15);

    /* decoupled: ratio to the proximal policy, IS weight min(π_prox/π_sample, C) */
    double prox[3] = {0, -1.0 + log(3.0), -2.0 + log(1.5)}; /* weights 3 → C = 2, and 1.5 */
    double lp2[3] = {0, prox[1] + log(1.1), prox[2] + log(1.1)}, adv2[1] = {1.0};
    rlvr_objective_input dec = {.n_seqs = 1, .offsets = off, .mask = mask, .logp = lp2, .logp_sample = sample,
                                .logp_prox = prox, .advantage = adv2};
    CHECK_OK(rlvr_rl_objective(w, NULL, &st, &dec, &base_opt));
    CHECK_NEAR(w[1], -2.0 * 1.1, 1e-13);
    CHECK_NEAR(w[2], -1.5 * 1.1, 1e-13);
    CHECK(st.is_truncated == 1);
}

/* Central differences of the loss agree with dlogp away from the kinks. */
static void test_finite_differences(void) {
    rlvr_rng_stream s;
    rlvr_rng_stream_init(&s, 7, RLVR_RNG_TEST, 1, 0);
    enum { S = 4, L = 9, T = S * L };
    int32_t off[S + 1];
    uint8_t mask[T];
    double logp[T], sample[T], ref[T], ent[T], adv[S] = {1.3, -0.7, 0.4, -2.0}, w[T];
    for (int i = 0; i <= S; i++) off[i] = i * L;
    for (int t = 0; t < T; t++) {
        mask[t] = (t % L) >= 2;
        sample[t] = -0.2 - 3 * rlvr_rng_next_uniform(&s);
        logp[t] = sample[t] + 0.6 * (rlvr_rng_next_uniform(&s) - 0.5);
        ref[t] = logp[t] + 0.4 * rlvr_rng_next_normal(&s);
        ent[t] = 2 * rlvr_rng_next_uniform(&s);
    }
    rlvr_objective_options o = {.clip_low = 0.2, .clip_high = 0.28, .is_cap = 2, .kl_beta = 0.3,
                                .entropy_coef = 0.02, .aggregation = RLVR_AGG_SEQUENCE};
    rlvr_objective_input in = {.n_seqs = S, .offsets = off, .mask = mask, .logp = logp, .logp_sample = sample,
                               .logp_ref = ref, .entropy = ent, .advantage = adv};
    rlvr_objective_stats st;
    CHECK_OK(rlvr_rl_objective(w, NULL, &st, &in, &o));
    double scratch[T];
    int checked = 0;
    for (int t = 0; t < T; t++) {
        double r = exp(logp[t] - sample[t]);
        if (fabs(r - 0.8) < 1e-3 || fabs(r - 1.28) < 1e-3) continue; /* kink */
        const double h = 1e-6, keep = logp[t];
        rlvr_objective_stats plus, minus;
        logp[t] = keep + h;
        CHECK_OK(rlvr_rl_objective(scratch, NULL, &plus, &in, &o));
        logp[t] = keep - h;
        CHECK_OK(rlvr_rl_objective(scratch, NULL, &minus, &in, &o));
        logp[t] = keep;
        double fd = (plus.loss - minus.loss) / (2 * h);
        CHECK_MSG(fabs(fd - w[t]) <= 1e-7 * (1 + fabs(w[t])), "token %d: fd %.12g vs w %.12g", t, fd, w[t]);
        checked++;
    }
    CHECK(checked > T / 2);
}

/* A zero-variance group has advantages exactly 0 and, with β = α_H = 0 and a
 * fixed normaliser, adding it changes neither the loss nor any weight. */
static void test_zero_variance_contributes_nothing(void) {
    const int G = 4;
    double informative[4] = {1, 0, 0, 1}, uniform[4] = {1, 1, 1, 1};
    double adv[8];
    bool info;
    CHECK_OK(rlvr_rl_group_advantages(adv, &info, informative, NULL, G, RLVR_ADV_STD, 1e-6));
    CHECK(info);
    CHECK_OK(rlvr_rl_group_advantages(adv + G, &info, uniform, NULL, G, RLVR_ADV_STD, 1e-6));
    CHECK(!info);
    for (int i = 0; i < G; i++) CHECK(adv[G + i] == 0.0);

    enum { L = 5, T = 8 * L };
    int32_t off[9];
    uint8_t mask[T];
    double logp[T], sample[T], w_all[T], w_half[T];
    rlvr_rng_stream s;
    rlvr_rng_stream_init(&s, 3, RLVR_RNG_TEST, 2, 0);
    for (int i = 0; i <= 8; i++) off[i] = i * L;
    for (int t = 0; t < T; t++) {
        mask[t] = 1;
        sample[t] = -1 - rlvr_rng_next_uniform(&s);
        logp[t] = sample[t] + 0.8 * (rlvr_rng_next_uniform(&s) - 0.5);
    }
    rlvr_objective_options o = base_opt;
    o.normaliser = 123;
    rlvr_objective_input all = {.n_seqs = 8, .offsets = off, .mask = mask, .logp = logp, .logp_sample = sample,
                                .advantage = adv};
    rlvr_objective_input half = all;
    half.n_seqs = 4;
    rlvr_objective_stats st_all, st_half;
    CHECK_OK(rlvr_rl_objective(w_all, NULL, &st_all, &all, &o));
    CHECK_OK(rlvr_rl_objective(w_half, NULL, &st_half, &half, &o));
    CHECK(st_all.loss == st_half.loss);
    for (int t = 0; t < 4 * L; t++) CHECK(w_all[t] == w_half[t]);
    for (int t = 4 * L; t < T; t++) CHECK(w_all[t] == 0.0);
}

/* Per-token weight of a failed rollout (A < 0, ratio 1) for lengths 10 and
 * 1000: constant under a constant normaliser, shrinking as 1/|o| per sequence. */
static double failed_weight(int len, rlvr_aggregation agg) {
    int32_t off[3] = {0, 10, 10 + len};
    uint8_t *mask = calloc((size_t)off[2], 1);
    double *lp = calloc((size_t)off[2], sizeof *lp), *w = calloc((size_t)off[2], sizeof *w);
    double adv[2] = {1.0, -1.0};
    for (int t = 0; t < off[2]; t++) mask[t] = 1, lp[t] = -0.5;
    rlvr_objective_options o = base_opt;
    o.aggregation = agg;
    o.normaliser = agg == RLVR_AGG_CONSTANT ? 4096 : 0;
    rlvr_objective_input in = {.n_seqs = 2, .offsets = off, .mask = mask, .logp = lp, .logp_sample = lp,
                               .advantage = adv};
    rlvr_objective_stats st;
    CHECK_OK(rlvr_rl_objective(w, NULL, &st, &in, &o));
    double out = w[off[1] + len / 2];
    free(mask);
    free(lp);
    free(w);
    return out;
}

static void test_constant_normaliser_length(void) {
    double short_c = failed_weight(10, RLVR_AGG_CONSTANT), long_c = failed_weight(1000, RLVR_AGG_CONSTANT);
    CHECK(short_c > 0); /* A < 0: descent lowers the token's log-prob */
    CHECK(long_c == short_c);
    CHECK_NEAR(long_c, 1.0 / 4096, 1e-18);
    double short_s = failed_weight(10, RLVR_AGG_SEQUENCE), long_s = failed_weight(1000, RLVR_AGG_SEQUENCE);
    CHECK_NEAR(short_s / long_s, 100.0, 1e-9); /* 1/|o_i| shrinks the long failure's penalty */
}

static void test_refusals(void) {
    int32_t off[2] = {0, 1};
    uint8_t mask[1] = {1};
    double lp[1] = {-1}, adv[1] = {1}, w[1];
    rlvr_objective_input in = {.n_seqs = 1, .offsets = off, .mask = mask, .logp = lp, .logp_sample = lp,
                               .advantage = adv};
    rlvr_objective_stats st;
    rlvr_objective_options o = base_opt;
    o.kl_beta = 0.1;
    CHECK(rlvr_rl_objective(w, NULL, &st, &in, &o) == RLVR_EINVAL);
    CHECK(strstr(rlvr_error_last(), "logp_ref") != NULL);
    o = base_opt;
    o.entropy_coef = 0.01;
    CHECK(rlvr_rl_objective(w, NULL, &st, &in, &o) == RLVR_EINVAL);
    o = base_opt;
    o.normaliser = 0;
    CHECK(rlvr_rl_objective(w, NULL, &st, &in, &o) == RLVR_EINVAL);
    o = base_opt;
    o.is_cap = 1.1;
    CHECK(rlvr_rl_objective(w, NULL, &st, &in, &o) == RLVR_EINVAL);
    CHECK(strstr(rlvr_error_last(), "is_cap") != NULL);
    o = base_opt;
    o.clip_low = 1.0;
    CHECK(rlvr_rl_objective(w, NULL, &st, &in, &o) == RLVR_EINVAL);
    double bad[1] = {NAN};
    in.logp = bad;
    CHECK(rlvr_rl_objective(w, NULL, &st, &in, &base_opt) == RLVR_EINVAL);
    in.logp = lp;
    in.advantage = NULL;
    CHECK(rlvr_rl_objective(w, NULL, &st, &in, &base_opt) == RLVR_EINVAL);
    int32_t off_bad[2] = {1, 1};
    in.advantage = adv;
    in.offsets = off_bad;
    CHECK(rlvr_rl_objective(w, NULL, &st, &in, &base_opt) == RLVR_EINVAL);
}

int main(void) {
    test_regions_and_sign();
    test_kl_entropy_decoupled();
    test_finite_differences();
    test_zero_variance_contributes_nothing();
    test_constant_normaliser_length();
    test_refusals();
    return test_summary("test_rl_objective");
}
