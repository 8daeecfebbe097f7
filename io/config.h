/* io/config.h — the configuration sections io/ owns: [run] (name, output
 * directory, seed), [checkpoint] (how often, how many kept) and [shards]
 * (rollout shard storage). docs/CONFIG.md documents every key.
 *
 * A run's files live under <out_dir>/<name>/:
 *   manifest.h5                     run manifest (io/manifest.h)
 *   metrics.h5                      per-step metrics (io/metrics.h)
 *   shards/step_N.rank_R.h5         rollout shards (io/shard.h)
 *   checkpoints/step_N.h5, latest   checkpoints (io/checkpoint.h) */
#ifndef RLVR_IO_CONFIG_H
#define RLVR_IO_CONFIG_H

#include "core/config.h"
#include "io/checkpoint.h"
#include "io/shard.h"

#include <stdbool.h>
#include <stdint.h>

/* Schema table of [run], [checkpoint] and [shards]. */
extern const rlvr_config_key rlvr_io_config_keys[];

#define RLVR_IO_PATH_CAP 4096

typedef struct {
    const char *name;   /* [run] name; lives as long as the config */
    const char *out_dir; /* [run] out_dir, likewise */
    uint64_t seed;      /* [run] seed */
    char run_dir[RLVR_IO_PATH_CAP];
    char shard_dir[RLVR_IO_PATH_CAP];
    char checkpoint_dir[RLVR_IO_PATH_CAP];
    char metrics_path[RLVR_IO_PATH_CAP];
    char manifest_path[RLVR_IO_PATH_CAP];
    int64_t checkpoint_every;      /* steps between checkpoints */
    int checkpoint_keep;           /* newest kept (0: all) */
    int64_t checkpoint_keep_every; /* also keep every Nth step's checkpoint (0: none) */
    int checkpoint_compression;
    bool shards;                   /* write rollout shards */
    int shard_compression;
    int64_t shard_chunk_tokens;
} rlvr_io_settings;

/* Reads the io sections (the config must have been loaded with
 * rlvr_io_config_keys among its schemas) and derives the paths. A run name
 * that is not a plain file name is refused with the file, line and key. */
int rlvr_io_settings_read(rlvr_io_settings *out, const rlvr_config *cfg);

/* Puts the run's files under `run_dir` instead of <out_dir>/<name> (the
 * jobs' --out option, and the sft/ part of a run). */
int rlvr_io_settings_set_run_dir(rlvr_io_settings *s, const char *run_dir);

/* Shard writer options from the settings. */
rlvr_shard_options rlvr_io_shard_options(const rlvr_io_settings *s);

/* True when a checkpoint is due after `step` optimizer steps. */
bool rlvr_io_checkpoint_due(const rlvr_io_settings *s, int64_t step);

/* Checkpoint options for `step` from the settings: retention, marking every
 * keep_every-th step, compression, the config text and hash. */
rlvr_checkpoint_options rlvr_io_checkpoint_options(const rlvr_io_settings *s, const rlvr_config *cfg,
                                                   int64_t step, int64_t policy_version);

#endif
