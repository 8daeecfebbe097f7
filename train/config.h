/* train/config.h — the sections of the configuration that belong to the
 * training runtime: [sft], [train], [tokenizer] and [quickstart] (key tables
 * documented in docs/CONFIG.md), each filled into its struct by
 * rlvr_config_fill. */
#ifndef RLVR_TRAIN_CONFIG_H
#define RLVR_TRAIN_CONFIG_H

#include "core/config.h"
#include "enclave/config.h"
#include "envs/config.h"
#include "eval/gate.h"
#include "io/config.h"
#include "mpi/layout.h"
#include "policy/model_config.h"
#include "policy/sampler.h"
#include "rl/config.h"

#include <stdbool.h>
#include <stdint.h>

extern const rlvr_config_key rlvr_tokenizer_config_keys[];
extern const rlvr_config_key rlvr_pretrained_config_keys[];
extern const rlvr_config_key rlvr_sft_config_keys[];
extern const rlvr_config_key rlvr_train_config_keys[];
extern const rlvr_config_key rlvr_quickstart_config_keys[];

/* Every module's key table the training runtime reads, in dependency order
 * (docs/DESIGN.md, "Folders"), as initialisers: the one place the tables are
 * listed. rlvr_train_schemas is this list; the `rlvr` command's list
 * (jobs/schemas.c) appends the sections of the command alone, e.g. [slurm]. */
#define RLVR_TRAIN_SCHEMA_TABLES                                                                        \
    rlvr_model_config_keys, rlvr_optim_config_keys, rlvr_sampler_config_keys, rlvr_rl_config_keys,     \
        rlvr_rl_plan_config_keys, rlvr_sandbox_config_keys, rlvr_enclave_config_keys,                  \
        rlvr_tasks_config_keys, rlvr_harness_config_keys, rlvr_layout_config_keys, rlvr_io_config_keys, \
        rlvr_tokenizer_config_keys, rlvr_sft_config_keys, rlvr_train_config_keys,                      \
        rlvr_quickstart_config_keys, rlvr_gate_config_keys, rlvr_pretrained_config_keys

/* NULL-terminated: RLVR_TRAIN_SCHEMA_TABLES. For callers that open a run
 * without the command: benchmarks, tests. */
extern const rlvr_config_key *const rlvr_train_schemas[];

/* [sft]: supervised bootstrap on demonstrations. */
typedef struct {
    int64_t steps;           /* optimizer steps */
    int64_t batch_sequences; /* demonstrations per step */
    double lr;               /* peak learning rate (the other AdamW settings come from [optim]) */
    int64_t warmup_steps;
    double min_lr_ratio;
    double temperature;      /* τ of the fitted distribution */
    int64_t extra_demos;     /* built-in pool: train tasks generated for demonstrations only */
    bool pool_demos;         /* false: only those are demonstrations, and they come before the pool's */
    double recovery_share;   /* share of demonstrations also played as recovery demonstrations (envs/demo.h) */
} rlvr_sft_config;

/* [train]: the RL job. */
typedef struct {
    int64_t steps;           /* optimizer steps of the RL run */
    const char *init;        /* "sft", "scratch" or a checkpoint path */
    int64_t max_staleness;   /* Δv_max; 0 = synchronous */
    bool verify_cache;       /* verify identical patches of a task once per run */
    int64_t verify_threads;  /* one process: tasks verified at once (0 = physical cores) */
    int64_t verify_enclaves; /* per-task verification enclaves kept alive at once */
    bool promoted_only;      /* rollout_policy = promoted: rollouts use only the RUN/promoted checkpoint */
} rlvr_train_config;

/* [tokenizer]: how text becomes the policy's ids. */
typedef struct {
    bool bpe;             /* kind = bpe (else byte) */
    int64_t merges;       /* bpe: merges to learn at most */
    int64_t corpus_demos; /* bpe: demonstrations whose text the merges are learned from */
} rlvr_tokenizer_config;

/* [pretrained] and [template]: a run that starts from an imported model. */
typedef struct {
    const char *checkpoint; /* `rlvr model import` output; "" = the run's own model and tokenizer */
    const char *family;     /* [template] family: "auto" (the checkpoint's) or a family name (policy/chat.h) */
} rlvr_pretrained_config;

/* [quickstart]: the `rlvr quickstart` command's own settings. */
typedef struct {
    int64_t eval_samples; /* samples per held-out task of its evaluations */
} rlvr_quickstart_config;

/* Read one section from a configuration loaded with its key table (the
 * file's values or the defaults), then check what spans keys; errors name
 * the file, line and key (RLVR_ECONFIG). */
int rlvr_sft_config_read(rlvr_sft_config *o, const rlvr_config *cfg);
int rlvr_train_config_read(rlvr_train_config *o, const rlvr_config *cfg);
int rlvr_tokenizer_config_read(rlvr_tokenizer_config *o, const rlvr_config *cfg);
int rlvr_quickstart_config_read(rlvr_quickstart_config *o, const rlvr_config *cfg);
int rlvr_pretrained_config_read(rlvr_pretrained_config *o, const rlvr_config *cfg);

#endif
