#include "rl/objective.h"

#include "core/error.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>

int rlvr_rl_objective_options_check(const rlvr_objective_options *o) {
    if (!o) return RLVR_FAIL(RLVR_EINVAL, "objective: options are NULL");
    if (!(o->clip_low >= 0 && o->clip_low < 1))
        return rlvr_error_set(RLVR_EINVAL, "objective: clip_low = %g must be in [0, 1)", o->clip_low);
    if (!(o->clip_high >= 0 && isfinite(o->clip_high)))
        return rlvr_error_set(RLVR_EINVAL, "objective: clip_high = %g must be >= 0", o->clip_high);
    if (!(o->is_cap >= 1 + o->clip_high) || !isfinite(o->is_cap))
        return rlvr_error_set(RLVR_EINVAL, "objective: is_cap = %g must be >= 1 + clip_high = %g", o->is_cap,
                              1 + o->clip_high);
    if (!(o->kl_beta >= 0 && isfinite(o->kl_beta)))
        return rlvr_error_set(RLVR_EINVAL, "objective: kl_beta = %g must be >= 0", o->kl_beta);
    if (!isfinite(o->entropy_coef))
        return rlvr_error_set(RLVR_EINVAL, "objective: entropy_coef is not finite");
    switch (o->aggregation) {
    case RLVR_AGG_TOKENS:
    case RLVR_AGG_SEQUENCE:
        if (!(o->normaliser >= 0 && isfinite(o->normaliser)))
            return rlvr_error_set(RLVR_EINVAL, "objective: normaliser = %g must be >= 0 (0 = count)",
                                  o->normaliser);
        return 0;
    case RLVR_AGG_CONSTANT:
        if (!(o->normaliser > 0 && isfinite(o->normaliser)))
            return rlvr_error_set(RLVR_EINVAL,
                                  "objective: constant aggregation needs normaliser > 0 (got %g)", o->normaliser);
        return 0;
    }
    return rlvr_error_set(RLVR_EINVAL, "objective: unknown aggregation %d", (int)o->aggregation);
}

static int check_input(const rlvr_objective_input *in, const rlvr_objective_options *o) {
    if (!in) return RLVR_FAIL(RLVR_EINVAL, "objective: input is NULL");
    if (in->n_seqs < 0) return rlvr_error_set(RLVR_EINVAL, "objective: n_seqs = %d", in->n_seqs);
    if (in->n_seqs == 0) return 0;
    if (!in->offsets || !in->mask || !in->logp || !in->logp_sample)
        return rlvr_error_set(RLVR_EINVAL, "objective: offsets, mask, logp and logp_sample are required");
    if (!in->advantage && !in->token_advantage)
        return rlvr_error_set(RLVR_EINVAL, "objective: advantage or token_advantage is required");
    if (o->kl_beta > 0 && !in->logp_ref)
        return rlvr_error_set(RLVR_EINVAL, "objective: kl_beta = %g > 0 needs logp_ref", o->kl_beta);
    if (o->entropy_coef != 0 && !in->entropy)
        return rlvr_error_set(RLVR_EINVAL, "objective: entropy_coef = %g needs entropy", o->entropy_coef);
    if (in->offsets[0] != 0) return rlvr_error_set(RLVR_EINVAL, "objective: offsets[0] = %d, not 0", in->offsets[0]);
    for (int s = 0; s < in->n_seqs; s++)
        if (in->offsets[s + 1] < in->offsets[s])
            return rlvr_error_set(RLVR_EINVAL, "objective: offsets decrease at sequence %d", s);
    return 0;
}

static bool finite_at(const double *a, int32_t t) { return !a || isfinite(a[t]); }

int rlvr_rl_objective(double *dlogp, double *dentropy, rlvr_objective_stats *st, const rlvr_objective_input *in,
                      const rlvr_objective_options *o) {
    if (!dlogp || !st) return RLVR_FAIL(RLVR_EINVAL, "objective: dlogp and stats are required");
    RLVR_TRY(rlvr_rl_objective_options_check(o));
    RLVR_TRY(check_input(in, o));
    *st = (rlvr_objective_stats){0};
    if (in->n_seqs == 0) return 0;

    /* pass 1: policy tokens, and the normaliser */
    int64_t tokens = 0, active_seqs = 0;
    for (int s = 0; s < in->n_seqs; s++) {
        int64_t n = 0;
        for (int32_t t = in->offsets[s]; t < in->offsets[s + 1]; t++) n += in->mask[t] != 0;
        tokens += n;
        active_seqs += n > 0;
    }
    double norm = o->normaliser;
    if (norm == 0) norm = (double)(o->aggregation == RLVR_AGG_SEQUENCE ? active_seqs : tokens);
    st->normaliser = norm;

    const double lo = 1.0 - o->clip_low, hi = 1.0 + o->clip_high, cap = o->is_cap;
    const bool decoupled = in->logp_prox != NULL;
    for (int s = 0; s < in->n_seqs; s++) {
        const int32_t begin = in->offsets[s], end = in->offsets[s + 1];
        double weight = 0; /* n_t for this sequence */
        if (o->aggregation == RLVR_AGG_SEQUENCE) {
            int64_t n = 0;
            for (int32_t t = begin; t < end; t++) n += in->mask[t] != 0;
            if (n > 0) weight = 1.0 / (norm * (double)n);
        } else if (norm > 0) {
            weight = 1.0 / norm;
        }
        for (int32_t t = begin; t < end; t++) {
            dlogp[t] = 0.0;
            if (dentropy) dentropy[t] = 0.0;
            if (!in->mask[t]) continue;
            const double A = in->token_advantage ? in->token_advantage[t] : in->advantage[s];
            if (!isfinite(in->logp[t]) || !isfinite(in->logp_sample[t]) || !isfinite(A) ||
                !finite_at(in->logp_prox, t) || !finite_at(in->logp_ref, t) || !finite_at(in->entropy, t))
                return rlvr_error_set(RLVR_EINVAL, "objective: non-finite input at token %d of sequence %d",
                                      t - begin, s);

            /* importance ratio, its truncation at C, and the constant weight */
            double ratio, is_weight = 1.0;
            bool truncated;
            if (decoupled) {
                ratio = exp(in->logp[t] - in->logp_prox[t]);
                double behaviour = exp(in->logp_prox[t] - in->logp_sample[t]);
                truncated = behaviour > cap;
                is_weight = truncated ? cap : behaviour;
            } else {
                ratio = exp(in->logp[t] - in->logp_sample[t]);
                truncated = ratio > cap;
            }
            const double r = decoupled || !truncated ? ratio : cap;

            /* clipped surrogate and dM/dlog π */
            const double clipped = r < lo ? lo : (r > hi ? hi : r);
            const double unclipped_term = r * A, clipped_term = clipped * A;
            const double M = is_weight * (unclipped_term < clipped_term ? unclipped_term : clipped_term);
            bool active = (A > 0 && r <= hi) || (A < 0 && r >= lo);
            if (!decoupled && truncated) active = false; /* ρ held at C: constant */
            const double dM = active ? is_weight * ratio * A : 0.0;

            /* KL k3 and its derivative */
            double D = 0.0, dD = 0.0;
            if (in->logp_ref) {
                const double x = in->logp_ref[t] - in->logp[t], ex = exp(x);
                D = ex - x - 1.0;
                dD = 1.0 - ex;
            }
            const double H = in->entropy ? in->entropy[t] : 0.0;

            const double J = M - o->kl_beta * D + o->entropy_coef * H;
            st->loss -= weight * J;
            st->surrogate += weight * M;
            st->kl_term += weight * D;
            st->entropy_term += weight * H;
            dlogp[t] = -weight * (dM - o->kl_beta * dD);
            if (dentropy) dentropy[t] = -weight * o->entropy_coef;

            st->tokens++;
            st->clipped_low += A < 0 && ratio < lo;
            st->clipped_high += A > 0 && ratio > hi;
            st->is_truncated += truncated;
            st->ratio_sum += ratio;
            st->kl_sum += D;
            st->entropy_sum += H;
        }
    }
    if (st->tokens > 0) {
        double n = (double)st->tokens;
        st->clip_frac_low = (double)st->clipped_low / n;
        st->clip_frac_high = (double)st->clipped_high / n;
        st->is_trunc_frac = (double)st->is_truncated / n;
        st->ratio_mean = st->ratio_sum / n;
        st->kl_mean = st->kl_sum / n;
        st->entropy_mean = st->entropy_sum / n;
    }
    return 0;
}
