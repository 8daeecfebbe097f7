/* slurm/config.h — the [slurm] section of a run configuration (the resources
 * and the shape of a chain, slurm/chain.h) and Slurm's time formats.
 * docs/CONFIG.md lists the keys from rlvr_slurm_config_keys. */
#ifndef RLVR_SLURM_CONFIG_H
#define RLVR_SLURM_CONFIG_H

#include "core/config.h"

#include <stdbool.h>
#include <stdint.h>

/* Schema table of [slurm] (collected with the others for `rlvr config`). */
extern const rlvr_config_key rlvr_slurm_config_keys[];

/* [slurm], read and checked (strings live as long as the config). */
typedef struct {
    const char *partition, *account, *qos, *time, *mem, *extra; /* "" = Slurm's default / none */
    int64_t nodes, ntasks_per_node, cpus_per_task, gpus_per_node; /* 0 = not requested */
    int64_t segments, grace_s, max_requeues;
    const char *launcher; /* "srun" or "none" */
    const char *baseline; /* "sft", "promoted" or a checkpoint path */
    bool gate;
} rlvr_slurm_config;

/* Fills *s from cfg's [slurm] (defaults for keys it lacks) and checks it:
 * text keys without white space, `time` a Slurm time longer than grace_s,
 * a non-empty baseline. RLVR_ECONFIG naming the key otherwise. */
int rlvr_slurm_config_read(rlvr_slurm_config *s, const rlvr_config *cfg);

/* Slurm's time formats to seconds: "MINUTES", "MINUTES:SECONDS",
 * "HOURS:MINUTES:SECONDS", "DAYS-HOURS", "DAYS-HOURS:MINUTES" and
 * "DAYS-HOURS:MINUTES:SECONDS", every field decimal digits. Anything else is
 * RLVR_EINVAL with a message that quotes `text` and says what is wrong. */
int rlvr_slurm_time_seconds(const char *text, int64_t *seconds);

#endif
