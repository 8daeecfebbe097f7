/* rl/estimators.h — success estimators for evaluation and planning
 * (docs/EVAL.md "Estimators", docs/RL.md "Worked examples" 1). eval/ uses
 * them for the release gate and sweeps.
 *
 *   pass@k (unbiased, from n samples with c successes) = 1 − C(n−c, k)/C(n, k)
 *   pass^k (all k repeated runs succeed)               = C(c, k)/C(n, k)
 *   pass@k of a success rate p                         = 1 − (1 − p)^k
 *   pass^k of a success rate p                         = p^k
 *   Wilson score interval for a binomial proportion
 *   paired bootstrap over tasks for a difference of two policies */
#ifndef RLVR_RL_ESTIMATORS_H
#define RLVR_RL_ESTIMATORS_H

#include <stdint.h>

/* Unbiased pass@k; RLVR_EINVAL unless 0 ≤ c ≤ n and 1 ≤ k ≤ n. Computed as
 * 1 − Π_{i=n−c+1}^{n} (1 − k/i), stable for large n. */
int rlvr_rl_pass_at_k(double *out, int64_t n, int64_t c, int64_t k);

/* Unbiased pass^k = Π_{i=0}^{k−1} (c − i)/(n − i); same domain. */
int rlvr_rl_pass_hat_k(double *out, int64_t n, int64_t c, int64_t k);

/* 1 − (1 − p)^k, and p^k. */
double rlvr_rl_pass_at_k_rate(double p, int64_t k);
double rlvr_rl_pass_hat_k_rate(double p, int64_t k);

/* Quantile of the standard normal distribution at probability q ∈ (0, 1)
 * (Acklam's rational approximation refined by one Halley step on erfc;
 * about 1e-15 relative). NAN outside (0, 1). */
double rlvr_rl_normal_quantile(double q);

/* Wilson score interval at a two-sided confidence level ∈ (0, 1) for
 * `successes` of `trials` > 0. */
int rlvr_rl_wilson_interval(double *low, double *high, int64_t successes, int64_t trials, double confidence);

typedef struct {
    double mean_diff;  /* mean over tasks of a_q − b_q */
    double low, high;  /* percentile interval of the resampled mean difference */
    int32_t resamples;
} rlvr_bootstrap;

/* Paired bootstrap over tasks: a[q] and b[q] are per-task scores of two
 * policies (e.g. pass rates) on the same n_tasks tasks. Resamples tasks with
 * replacement `resamples` times (Philox, purpose SHUFFLE, keyed by seed), and
 * returns the mean difference with the two-sided percentile interval at
 * `confidence` (linear interpolation between order statistics). */
int rlvr_rl_paired_bootstrap(rlvr_bootstrap *out, const double *a, const double *b, int32_t n_tasks,
                             int32_t resamples, double confidence, uint64_t seed);

#endif
