#include "rl/entropy.h"

#include "core/error.h"

#include <math.h>
#include <stddef.h>

static int refuse(const char **bad_key, const char *key) {
    if (bad_key) *bad_key = key;
    return RLVR_EINVAL;
}

int rlvr_rl_entropy_config_check(const rlvr_entropy_config *c, const char **bad_key) {
    if (bad_key) *bad_key = NULL;
    if (!c) return RLVR_FAIL(RLVR_EINVAL, "entropy config is NULL");
    if (!(c->target_low >= 0) || !(c->target_low < c->target_high) || !isfinite(c->target_high)) {
        rlvr_error_set(RLVR_EINVAL, "target_low = %g must be >= 0 and below target_high = %g", c->target_low,
                       c->target_high);
        return refuse(bad_key, "target_high");
    }
    if (!(c->lr >= 0) || !isfinite(c->lr)) {
        rlvr_error_set(RLVR_EINVAL, "lr = %g must be >= 0", c->lr);
        return refuse(bad_key, "lr");
    }
    if (!(c->coef_min <= c->coef_max) || !isfinite(c->coef_min) || !isfinite(c->coef_max)) {
        rlvr_error_set(RLVR_EINVAL, "coef_min = %g must be <= coef_max = %g", c->coef_min, c->coef_max);
        return refuse(bad_key, "coef_max");
    }
    if (c->adaptive && !(c->coef >= c->coef_min && c->coef <= c->coef_max)) {
        rlvr_error_set(RLVR_EINVAL, "coef = %g must lie in [coef_min, coef_max] = [%g, %g]", c->coef, c->coef_min,
                       c->coef_max);
        return refuse(bad_key, "coef");
    }
    return 0;
}

int rlvr_rl_entropy_init(rlvr_entropy_controller *c, const rlvr_entropy_config *cfg) {
    if (!c) return RLVR_FAIL(RLVR_EINVAL, "entropy controller is NULL");
    RLVR_TRY(rlvr_rl_entropy_config_check(cfg, NULL));
    *c = (rlvr_entropy_controller){.cfg = *cfg, .coef = cfg->coef, .updates = 0, .last_entropy = 0.0};
    return 0;
}

int rlvr_rl_entropy_update(rlvr_entropy_controller *c, double mean_entropy) {
    if (!c) return RLVR_FAIL(RLVR_EINVAL, "entropy controller is NULL");
    if (!isfinite(mean_entropy)) return RLVR_FAIL(RLVR_EINVAL, "entropy controller: mean entropy is not finite");
    c->updates++;
    c->last_entropy = mean_entropy;
    if (!c->cfg.adaptive) return 0;
    double mid = 0.5 * (c->cfg.target_low + c->cfg.target_high);
    double a = c->coef - c->cfg.lr * (mean_entropy - mid);
    if (a < c->cfg.coef_min) a = c->cfg.coef_min;
    if (a > c->cfg.coef_max) a = c->cfg.coef_max;
    c->coef = a;
    return 0;
}

bool rlvr_rl_entropy_in_band(const rlvr_entropy_controller *c, double h) {
    return h >= c->cfg.target_low && h <= c->cfg.target_high;
}
