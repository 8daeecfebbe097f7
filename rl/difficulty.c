#include "rl/difficulty.h"

#include "core/error.h"
#include "core/rng.h"

#include <math.h>
#include <stdlib.h>

static int refuse(const char **bad_key, const char *key) {
    if (bad_key) *bad_key = key;
    return RLVR_EINVAL;
}

int rlvr_rl_difficulty_config_check(const rlvr_difficulty_config *c, const char **bad_key) {
    if (bad_key) *bad_key = NULL;
    if (!c) return RLVR_FAIL(RLVR_EINVAL, "difficulty config is NULL");
    if (!(c->ema > 0 && c->ema <= 1)) {
        rlvr_error_set(RLVR_EINVAL, "ema = %g must be in (0, 1]", c->ema);
        return refuse(bad_key, "ema");
    }
    if (!(c->unseen_weight > 0) || !isfinite(c->unseen_weight)) {
        rlvr_error_set(RLVR_EINVAL, "unseen_weight = %g must be > 0 (unseen tasks must be drawable)",
                       c->unseen_weight);
        return refuse(bad_key, "unseen_weight");
    }
    if (!(c->min_weight >= 0) || !isfinite(c->min_weight)) {
        rlvr_error_set(RLVR_EINVAL, "min_weight = %g must be >= 0", c->min_weight);
        return refuse(bad_key, "min_weight");
    }
    if (!(c->band_low >= 0 && c->band_low <= c->band_high && c->band_high <= 1)) {
        rlvr_error_set(RLVR_EINVAL, "band [%g, %g] must satisfy 0 <= band_low <= band_high <= 1", c->band_low,
                       c->band_high);
        return refuse(bad_key, "band_high");
    }
    if (!(c->group_target >= 0 && c->group_target < 1)) {
        rlvr_error_set(RLVR_EINVAL, "group_target = %g must be in [0, 1)", c->group_target);
        return refuse(bad_key, "group_target");
    }
    if (c->max_group_size < 1) {
        rlvr_error_set(RLVR_EINVAL, "max_group_size = %d must be >= 1", c->max_group_size);
        return refuse(bad_key, "max_group_size");
    }
    return 0;
}

int rlvr_rl_difficulty_new(rlvr_difficulty **out, int32_t n_tasks, const rlvr_difficulty_config *cfg) {
    if (!out) return RLVR_FAIL(RLVR_EINVAL, "difficulty: out is NULL");
    *out = NULL;
    if (n_tasks < 1) return RLVR_FAIL(RLVR_EINVAL, "difficulty: need at least one task (got %d)", n_tasks);
    RLVR_TRY(rlvr_rl_difficulty_config_check(cfg, NULL));
    rlvr_difficulty *d = calloc(1, sizeof *d);
    if (!d) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    d->cfg = *cfg;
    d->n_tasks = n_tasks;
    d->p_hat = calloc((size_t)n_tasks, sizeof *d->p_hat);
    d->groups = calloc((size_t)n_tasks, sizeof *d->groups);
    d->rollouts = calloc((size_t)n_tasks, sizeof *d->rollouts);
    d->successes = calloc((size_t)n_tasks, sizeof *d->successes);
    if (!d->p_hat || !d->groups || !d->rollouts || !d->successes) {
        rlvr_rl_difficulty_free(d);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory for %d tasks", n_tasks);
    }
    *out = d;
    return 0;
}

void rlvr_rl_difficulty_free(rlvr_difficulty *d) {
    if (!d) return;
    free(d->p_hat);
    free(d->groups);
    free(d->rollouts);
    free(d->successes);
    free(d);
}

int rlvr_rl_difficulty_observe(rlvr_difficulty *d, int32_t task, int32_t successes, int32_t rollouts) {
    if (!d || task < 0 || task >= d->n_tasks)
        return RLVR_FAIL(RLVR_EINVAL, "difficulty: task %d outside [0, %d)", task, d ? d->n_tasks : 0);
    if (rollouts < 1 || successes < 0 || successes > rollouts)
        return RLVR_FAIL(RLVR_EINVAL, "difficulty: %d successes of %d rollouts", successes, rollouts);
    double rate = (double)successes / (double)rollouts;
    if (d->groups[task] == 0) d->p_hat[task] = rate;
    else d->p_hat[task] += d->cfg.ema * (rate - d->p_hat[task]);
    d->groups[task]++;
    d->rollouts[task] += rollouts;
    d->successes[task] += successes;
    return 0;
}

double rlvr_rl_difficulty_weight(const rlvr_difficulty *d, int32_t task) {
    if (d->groups[task] == 0) return d->cfg.unseen_weight;
    double p = d->p_hat[task];
    if (p < d->cfg.band_low || p > d->cfg.band_high) return d->cfg.min_weight;
    double w = p * (1.0 - p);
    return w > d->cfg.min_weight ? w : d->cfg.min_weight;
}

typedef struct {
    double key;
    int32_t task;
} keyed_task;

static int keyed_cmp(const void *pa, const void *pb) {
    const keyed_task *a = pa, *b = pb;
    if (a->key != b->key) return a->key > b->key ? -1 : 1;
    return a->task - b->task;
}

int rlvr_rl_difficulty_sample(int32_t *tasks, const rlvr_difficulty *d, int32_t n, uint64_t seed, uint32_t step,
                              uint32_t round) {
    if (!tasks || !d || n < 0) return RLVR_FAIL(RLVR_EINVAL, "difficulty sample: bad arguments");
    if (n == 0) return 0;
    keyed_task *k;
    RLVR_ALLOC(k, d->n_tasks);
    int32_t m = 0;
    for (int32_t q = 0; q < d->n_tasks; q++) {
        double w = rlvr_rl_difficulty_weight(d, q);
        if (!(w > 0)) continue;
        /* 1 - u ∈ (0, 1]: log is finite; larger key = drawn earlier */
        double u = rlvr_rng_uniform(seed, RLVR_RNG_TASKS, step, round, (uint32_t)q);
        k[m++] = (keyed_task){log(1.0 - u) / w, q};
    }
    if (m == 0) {
        free(k);
        return RLVR_FAIL(RLVR_ELIMIT, "difficulty sample: no task has a positive weight (raise min_weight)");
    }
    qsort(k, (size_t)m, sizeof *k, keyed_cmp);
    for (int32_t i = 0; i < n; i++) tasks[i] = k[i % m].task;
    free(k);
    return 0;
}

int32_t rlvr_rl_group_size_for(double p, int32_t default_G, int32_t max_G, double target) {
    if (!(p > 0 && p < 1) || !(target > 0) || max_G <= default_G) return default_G;
    for (int32_t G = default_G; G <= max_G; G++)
        if (1.0 - pow(1.0 - p, G) >= target) return G;
    return max_G;
}

int32_t rlvr_rl_difficulty_group_size(const rlvr_difficulty *d, int32_t task, int32_t default_G) {
    if (d->groups[task] == 0) return default_G;
    return rlvr_rl_group_size_for(d->p_hat[task], default_G, d->cfg.max_group_size, d->cfg.group_target);
}

double rlvr_rl_zero_signal_probability(double p, int32_t G) { return pow(1.0 - p, G) + pow(p, G); }

int rlvr_rl_dynsample_config_check(const rlvr_dynsample_config *c, const char **bad_key) {
    if (bad_key) *bad_key = NULL;
    if (!c) return RLVR_FAIL(RLVR_EINVAL, "dynamic sampling config is NULL");
    if (c->max_rounds < 1) {
        rlvr_error_set(RLVR_EINVAL, "max_rounds = %d must be >= 1", c->max_rounds);
        return refuse(bad_key, "max_rounds");
    }
    if (!(c->max_oversample >= 1) || !isfinite(c->max_oversample)) {
        rlvr_error_set(RLVR_EINVAL, "max_oversample = %g must be >= 1", c->max_oversample);
        return refuse(bad_key, "max_oversample");
    }
    return 0;
}

int rlvr_rl_dynsample_begin(rlvr_dynsample *ds, const rlvr_dynsample_config *cfg, int32_t required) {
    if (!ds) return RLVR_FAIL(RLVR_EINVAL, "dynamic sampling: state is NULL");
    RLVR_TRY(rlvr_rl_dynsample_config_check(cfg, NULL));
    if (required < 1) return RLVR_FAIL(RLVR_EINVAL, "dynamic sampling: need >= 1 group (got %d)", required);
    *ds = (rlvr_dynsample){.cfg = *cfg, .required = required};
    return 0;
}

int64_t rlvr_rl_dynsample_max_drawn(const rlvr_dynsample_config *cfg, int32_t required) {
    int64_t redraw = (int64_t)ceil((double)required * cfg->max_oversample - 1e-9);
    return required + (int64_t)(cfg->max_rounds > 1 ? cfg->max_rounds - 1 : 0) * redraw;
}

int32_t rlvr_rl_dynsample_next_round(rlvr_dynsample *ds) {
    int32_t missing = ds->required - ds->kept;
    if (missing <= 0 || ds->rounds >= ds->cfg.max_rounds) return 0;
    double factor = 1.0;
    if (ds->drawn > 0) {
        double share = (double)(ds->kept + ds->dropped_surplus) / (double)ds->drawn;
        factor = share > 0 ? 1.0 / share : ds->cfg.max_oversample;
        if (factor > ds->cfg.max_oversample) factor = ds->cfg.max_oversample;
    }
    ds->rounds++;
    return (int32_t)ceil((double)missing * factor - 1e-9);
}

bool rlvr_rl_dynsample_offer(rlvr_dynsample *ds, bool informative) {
    ds->drawn++;
    if (!informative) {
        ds->dropped_zero++;
        return false;
    }
    if (ds->kept >= ds->required) {
        ds->dropped_surplus++;
        return false;
    }
    ds->kept++;
    return true;
}

int32_t rlvr_rl_dynsample_shortfall(const rlvr_dynsample *ds) {
    int32_t missing = ds->required - ds->kept;
    return missing > 0 ? missing : 0;
}
