/* rl/difficulty.h — difficulty-aware task selection, the group-size rule and
 * dynamic sampling: the countermeasures to zero-variance groups
 * (docs/RL.md "Worked examples" 6).
 *
 * Tracker: per task an exponential moving average p̂(q) of the success rate
 * of its groups, with counts. The first group sets p̂ to its rate; later ones
 * move it: p̂ ← p̂ + η·(rate − p̂).
 *
 * Sampling weight: unseen tasks get unseen_weight; seen tasks inside the band
 * [band_low, band_high] get max(p̂(1 − p̂), min_weight); seen tasks outside
 * the band get min_weight (so they are re-probed now and then). Tasks are
 * drawn without replacement with probability proportional to weight
 * (Efraimidis–Spirakis keys log(u)/w, u from Philox keyed by seed, step,
 * round and task index), so a draw does not depend on anything but those.
 *
 * Group size: P(at least one success in G) = 1 − (1 − p)^G. For a task with
 * low but nonzero p̂, G grows from the default until that probability reaches
 * the target, up to max_group_size.
 *
 * Dynamic sampling: zero-variance groups are always dropped (an all-pass or
 * all-fail group costs G rollouts and gives no gradient); the sampler keeps
 * drawing rounds until the step holds the required informative groups or the
 * round cap is hit, and reports the shortfall. */
#ifndef RLVR_RL_DIFFICULTY_H
#define RLVR_RL_DIFFICULTY_H

#include <stdbool.h>
#include <stdint.h>

/* [difficulty] section. */
typedef struct {
    double ema;                 /* η ∈ (0, 1]: weight of the newest group's rate */
    double unseen_weight;       /* > 0: weight of a task never tried */
    double min_weight;          /* ≥ 0: floor for seen tasks */
    double band_low, band_high; /* p̂ band of full weight, 0 ≤ low ≤ high ≤ 1 */
    double group_target;        /* target P(≥ 1 success in the group) in [0, 1); 0 = rule off */
    int32_t max_group_size;     /* ≥ the default group size */
} rlvr_difficulty_config;

/* The tracker's state: a plain struct whose arrays a checkpoint stores. */
typedef struct {
    rlvr_difficulty_config cfg;
    int32_t n_tasks;
    double *p_hat;      /* (n_tasks) EMA of success; 0 while unseen */
    int64_t *groups;    /* (n_tasks) groups observed; 0 = unseen */
    int64_t *rollouts;  /* (n_tasks) scored rollouts observed */
    int64_t *successes; /* (n_tasks) successful rollouts observed */
} rlvr_difficulty;

int rlvr_rl_difficulty_config_check(const rlvr_difficulty_config *cfg, const char **bad_key);

/* Allocates a tracker for n_tasks tasks, all unseen. */
int rlvr_rl_difficulty_new(rlvr_difficulty **out, int32_t n_tasks, const rlvr_difficulty_config *cfg);
void rlvr_rl_difficulty_free(rlvr_difficulty *d);

/* Records one scored group of task `task`: `successes` of `rollouts`. */
int rlvr_rl_difficulty_observe(rlvr_difficulty *d, int32_t task, int32_t successes, int32_t rollouts);

/* Sampling weight of a task (see above). */
double rlvr_rl_difficulty_weight(const rlvr_difficulty *d, int32_t task);

/* Draws n task indices into tasks[n], without replacement while tasks with
 * positive weight remain; beyond that the same order repeats. Deterministic
 * in (seed, step, round). RLVR_ELIMIT when no task has positive weight. */
int rlvr_rl_difficulty_sample(int32_t *tasks, const rlvr_difficulty *d, int32_t n, uint64_t seed, uint32_t step,
                              uint32_t round);

/* Group size for a task whose success rate is p: the smallest G in
 * [default_G, max_G] with 1 − (1 − p)^G ≥ target when 0 < p < 1 and target > 0,
 * else default_G (max_G when even that does not reach the target). */
int32_t rlvr_rl_group_size_for(double p, int32_t default_G, int32_t max_G, double target);

/* The rule applied to a tracked task (unseen tasks get default_G). */
int32_t rlvr_rl_difficulty_group_size(const rlvr_difficulty *d, int32_t task, int32_t default_G);

/* Probability that a group of G rollouts of a task with success rate p has
 * all rewards equal (binary rewards): (1 − p)^G + p^G. */
double rlvr_rl_zero_signal_probability(double p, int32_t G);

/* [dynamic_sampling] section and the per-step state. */
typedef struct {
    int32_t max_rounds;      /* ≥ 1; 1 = draw once, never re-draw */
    double max_oversample;   /* ≥ 1: a round draws at most this × the missing groups */
} rlvr_dynsample_config;

typedef struct {
    rlvr_dynsample_config cfg;
    int32_t required;        /* informative groups the step needs */
    int32_t rounds;          /* rounds started */
    int32_t drawn;           /* groups drawn */
    int32_t kept;            /* informative groups kept */
    int32_t dropped_zero;    /* zero-variance groups dropped */
    int32_t dropped_surplus; /* informative groups beyond the requirement */
} rlvr_dynsample;

int rlvr_rl_dynsample_config_check(const rlvr_dynsample_config *cfg, const char **bad_key);

/* Starts a step that needs `required` informative groups. */
/* The most groups a step can draw for `required` informative ones: the
 * first round's, then every re-draw at the largest oversampling. */
int64_t rlvr_rl_dynsample_max_drawn(const rlvr_dynsample_config *cfg, int32_t required);

int rlvr_rl_dynsample_begin(rlvr_dynsample *ds, const rlvr_dynsample_config *cfg, int32_t required);

/* How many groups to draw in the next round: 0 when the step is full or the
 * round cap is reached. The first round draws the missing groups; later
 * rounds scale them by the observed informative share (at most
 * max_oversample). Starts the round. */
int32_t rlvr_rl_dynsample_next_round(rlvr_dynsample *ds);

/* Decides about one scored group: true = keep it in the batch. */
bool rlvr_rl_dynsample_offer(rlvr_dynsample *ds, bool informative);

/* Informative groups still missing (0 when the step is full). */
int32_t rlvr_rl_dynsample_shortfall(const rlvr_dynsample *ds);

#endif
