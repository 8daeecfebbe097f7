#include "rl/estimators.h"

#include "core/error.h"
#include "core/rng.h"

#include <math.h>
#include <stdlib.h>

static int check_nck(int64_t n, int64_t c, int64_t k, const char *what) {
    if (n < 1 || c < 0 || c > n || k < 1 || k > n)
        return RLVR_FAIL(RLVR_EINVAL, "%s: need 0 <= c <= n and 1 <= k <= n (n = %lld, c = %lld, k = %lld)", what,
                         (long long)n, (long long)c, (long long)k);
    return 0;
}

int rlvr_rl_pass_at_k(double *out, int64_t n, int64_t c, int64_t k) {
    RLVR_TRY(check_nck(n, c, k, "pass@k"));
    if (n - c < k) {
        *out = 1.0;
        return 0;
    }
    double none = 1.0; /* C(n−c, k)/C(n, k) */
    for (int64_t i = n - c + 1; i <= n; i++) none *= 1.0 - (double)k / (double)i;
    *out = 1.0 - none;
    return 0;
}

int rlvr_rl_pass_hat_k(double *out, int64_t n, int64_t c, int64_t k) {
    RLVR_TRY(check_nck(n, c, k, "pass^k"));
    double all = 1.0;
    for (int64_t i = 0; i < k; i++) all *= (double)(c - i) / (double)(n - i);
    *out = all > 0 ? all : 0.0;
    return 0;
}

double rlvr_rl_pass_at_k_rate(double p, int64_t k) { return 1.0 - pow(1.0 - p, (double)k); }
double rlvr_rl_pass_hat_k_rate(double p, int64_t k) { return pow(p, (double)k); }

double rlvr_rl_normal_quantile(double q) {
    if (!(q > 0 && q < 1)) return NAN;
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                               1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                               6.680131188771972e+01,  -1.328068155288572e+01};
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                               -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                               3.754408661907416e+00};
    const double low = 0.02425;
    double x;
    if (q < low) {
        double s = sqrt(-2 * log(q));
        x = (((((c[0] * s + c[1]) * s + c[2]) * s + c[3]) * s + c[4]) * s + c[5]) /
            ((((d[0] * s + d[1]) * s + d[2]) * s + d[3]) * s + 1);
    } else if (q <= 1 - low) {
        double s = q - 0.5, r = s * s;
        x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * s /
            (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
    } else {
        double s = sqrt(-2 * log(1 - q));
        x = -(((((c[0] * s + c[1]) * s + c[2]) * s + c[3]) * s + c[4]) * s + c[5]) /
            ((((d[0] * s + d[1]) * s + d[2]) * s + d[3]) * s + 1);
    }
    /* one Halley step on Φ(x) − q with Φ(x) = erfc(−x/√2)/2 */
    double e = 0.5 * erfc(-x / sqrt(2.0)) - q;
    double u = e * sqrt(2 * M_PI) * exp(x * x / 2);
    return x - u / (1 + x * u / 2);
}

int rlvr_rl_wilson_interval(double *low, double *high, int64_t successes, int64_t trials, double confidence) {
    if (!low || !high || trials < 1 || successes < 0 || successes > trials)
        return RLVR_FAIL(RLVR_EINVAL, "Wilson interval: %lld successes of %lld trials", (long long)successes,
                         (long long)trials);
    if (!(confidence > 0 && confidence < 1))
        return RLVR_FAIL(RLVR_EINVAL, "Wilson interval: confidence %g outside (0, 1)", confidence);
    double z = rlvr_rl_normal_quantile(0.5 + confidence / 2), n = (double)trials;
    double p = (double)successes / n, z2 = z * z;
    double denom = 1 + z2 / n;
    double centre = (p + z2 / (2 * n)) / denom;
    double half = z / denom * sqrt(p * (1 - p) / n + z2 / (4 * n * n));
    /* the bounds at 0 and n successes are exactly 0 and 1 */
    *low = successes == 0 ? 0.0 : (centre - half > 0 ? centre - half : 0.0);
    *high = successes == trials ? 1.0 : (centre + half < 1 ? centre + half : 1.0);
    return 0;
}

static int double_cmp(const void *pa, const void *pb) {
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* Linear interpolation between order statistics (type 7). */
static double quantile_sorted(const double *x, int32_t n, double q) {
    double h = (n - 1) * q;
    int32_t i = (int32_t)floor(h);
    if (i >= n - 1) return x[n - 1];
    return x[i] + (h - i) * (x[i + 1] - x[i]);
}

int rlvr_rl_paired_bootstrap(rlvr_bootstrap *out, const double *a, const double *b, int32_t n_tasks,
                             int32_t resamples, double confidence, uint64_t seed) {
    if (!out || !a || !b || n_tasks < 1 || resamples < 1)
        return RLVR_FAIL(RLVR_EINVAL, "paired bootstrap: need tasks and resamples (%d, %d)", n_tasks, resamples);
    if (!(confidence > 0 && confidence < 1))
        return RLVR_FAIL(RLVR_EINVAL, "paired bootstrap: confidence %g outside (0, 1)", confidence);
    double *diff, *means;
    RLVR_ALLOC(diff, n_tasks);
    means = calloc((size_t)resamples, sizeof *means);
    if (!means) {
        free(diff);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory for %d resamples", resamples);
    }
    double total = 0;
    for (int32_t q = 0; q < n_tasks; q++) {
        diff[q] = a[q] - b[q];
        total += diff[q];
    }
    for (int32_t r = 0; r < resamples; r++) {
        rlvr_rng_stream s;
        rlvr_rng_stream_init(&s, seed, RLVR_RNG_SHUFFLE, 0, (uint32_t)r);
        double sum = 0;
        for (int32_t q = 0; q < n_tasks; q++) sum += diff[rlvr_rng_next_below(&s, (uint32_t)n_tasks)];
        means[r] = sum / n_tasks;
    }
    qsort(means, (size_t)resamples, sizeof *means, double_cmp);
    double tail = (1 - confidence) / 2;
    *out = (rlvr_bootstrap){.mean_diff = total / n_tasks,
                            .low = quantile_sorted(means, resamples, tail),
                            .high = quantile_sorted(means, resamples, 1 - tail),
                            .resamples = resamples};
    free(diff);
    free(means);
    return 0;
}
