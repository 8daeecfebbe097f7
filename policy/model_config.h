/* policy/model_config.h — the [model] and [optim] sections of a run's INI
 * file (keys documented in docs/CONFIG.md).
 *
 * The schema tables go to rlvr_config_load() with the other modules'
 * tables; the readers then fill the C structs and check what a single key's
 * range cannot (d_model divisible by n_heads, ...), naming the key, file and
 * line in an RLVR_ECONFIG error. */
#ifndef RLVR_POLICY_MODEL_CONFIG_H
#define RLVR_POLICY_MODEL_CONFIG_H

#include "core/config.h"
#include "policy/model.h"
#include "policy/optim.h"

/* NULL-terminated key tables (key == NULL ends each). */
extern const rlvr_config_key rlvr_model_config_keys[];
extern const rlvr_config_key rlvr_optim_config_keys[];

/* Fills *out from [model] of a configuration loaded with rlvr_model_config_keys. */
int rlvr_model_config_read(rlvr_model_config *out, const rlvr_config *cfg);

/* Fills *out from [optim] of a configuration loaded with rlvr_optim_config_keys. */
int rlvr_adamw_config_read(rlvr_adamw_config *out, const rlvr_config *cfg);

#endif
