/* rl/entropy.h — the adaptive entropy coefficient (docs/CONFIG.md "[entropy]").
 *
 * Entropy collapse makes a group's rollouts copies of each other: rewards
 * become equal and the gradient vanishes. The entropy bonus α_H·H_t of the
 * objective (rl/objective.h) is steered toward a target band
 * [H*_min, H*_max] of the mean policy-token entropy H̄_k of step k:
 *
 *   α_{k+1} = clip(α_k − η_α·(H̄_k − (H*_min + H*_max)/2), α_min, α_max)
 *
 * The controller is a plain struct: its whole state is its fields, which a
 * checkpoint saves and restores as they are. */
#ifndef RLVR_RL_ENTROPY_H
#define RLVR_RL_ENTROPY_H

#include <stdbool.h>
#include <stdint.h>

/* [entropy] section. */
typedef struct {
    double coef;                    /* α_0, the starting coefficient */
    bool adaptive;                  /* false: α stays at coef */
    double target_low, target_high; /* H*_min < H*_max, nats */
    double lr;                      /* η_α ≥ 0 */
    double coef_min, coef_max;      /* α_min ≤ coef ≤ α_max */
} rlvr_entropy_config;

typedef struct {
    rlvr_entropy_config cfg;
    double coef;         /* α_k: the coefficient to use for the next step */
    int64_t updates;     /* steps observed */
    double last_entropy; /* H̄ of the last step observed */
} rlvr_entropy_controller;

/* Checks the configuration; RLVR_EINVAL with the key in *bad_key. */
int rlvr_rl_entropy_config_check(const rlvr_entropy_config *cfg, const char **bad_key);

/* Starts a controller at α_0 = cfg->coef. */
int rlvr_rl_entropy_init(rlvr_entropy_controller *c, const rlvr_entropy_config *cfg);

/* Feeds the mean policy-token entropy of a step; c->coef becomes α_{k+1}
 * (unchanged when not adaptive). RLVR_EINVAL for a non-finite entropy. */
int rlvr_rl_entropy_update(rlvr_entropy_controller *c, double mean_entropy);

/* True when h lies in [target_low, target_high]. */
bool rlvr_rl_entropy_in_band(const rlvr_entropy_controller *c, double h);

#endif
