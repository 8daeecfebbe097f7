/* train/run.h — what the training runtime (sft, train, the quickstart) shares:
 * one configuration checked against every module's keys, the run directory,
 * the validated task pool, the policy model, and the stop flag that signal
 * handlers set.
 *
 * Run directory (<out_dir>/<name>, or --out):
 *   pool/                     built-in tasks, generated on first use ([tasks] pool empty)
 *   pool.manifest.json        their validation (`rlvr tasks check`)
 *   sft/checkpoints/, sft/metrics.h5      `rlvr sft`
 *   checkpoints/, metrics.h5, shards/, manifest.h5   `rlvr train`
 * docs/OPERATIONS.md describes the layout, resume and exit codes. */
#ifndef RLVR_TRAIN_RUN_H
#define RLVR_TRAIN_RUN_H

#include "core/config.h"
#include "enclave/config.h"
#include "enclave/sandbox.h"
#include "envs/check.h"
#include "envs/config.h"
#include "envs/harness.h"
#include "envs/pool.h"
#include "io/config.h"
#include "policy/model.h"
#include "policy/optim.h"
#include "policy/sampler.h"
#include "policy/tokenizer.h"
#include "rl/config.h"
#include "train/config.h"

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct {
    rlvr_config *cfg;
    rlvr_io_settings io;          /* the RL run's paths (run_dir = the whole run's directory) */
    rlvr_model_config model;
    rlvr_adamw_config optim;
    rlvr_sampler_config sampler;  /* seed = [run] seed */
    rlvr_rl_config rl;
    uint32_t credit_tools;      /* [credit] state_changing_tools as a tool mask (mode = mc) */
    rlvr_tasks_config tasks;
    rlvr_harness_options harness; /* host set by rlvr_run_host */
    rlvr_enclave_settings enclave;
    rlvr_sft_config sft;
    rlvr_train_config train;
    int64_t stop_step;            /* the last step this job takes: [train] steps, or --until-step */
    rlvr_tokenizer_config tokenizer;
    rlvr_pretrained_config pretrained; /* [pretrained], [template] */
    rlvr_tokenizer *tok;          /* the run's tokenizer (rlvr_run_set_tokenizer) */
    bool tok_pending;             /* [tokenizer] kind = bpe and none yet: tok is a byte placeholder */
    /* the pool (rlvr_run_pool) */
    char pool_path[RLVR_IO_PATH_CAP];
    rlvr_task_pool *pool;
    rlvr_pool_manifest *pool_manifest;
    int32_t *split_tasks[RLVR_SPLIT_COUNT]; /* usable tasks of each split, as pool indices */
    int32_t n_split[RLVR_SPLIT_COUNT];
    rlvr_sandbox_host *host;      /* rlvr_run_host */
} rlvr_run;

/* Loads and checks the configuration (the keys of `schemas`, a
 * NULL-terminated list that outlives r and holds at least
 * rlvr_train_schemas' tables; cross-key rules) and derives the run's paths;
 * `out_dir` (may be NULL) replaces <out_dir>/<name>. Errors name the file,
 * line and key. Nothing is read from or written to the run directory but
 * <run>/tokenizer.json when it exists. */
int rlvr_run_load(rlvr_run *r, const char *config_path, const char *out_dir, const rlvr_config_key *const *schemas);
/* The same from configuration text in memory; `name` stands for the file
 * name in messages. */
int rlvr_run_parse(rlvr_run *r, const char *text, const char *name, const char *out_dir,
                   const rlvr_config_key *const *schemas);
void rlvr_run_close(rlvr_run *r);

/* The validated task pool. [tasks] pool set: loads it and its manifest
 * (refusing a pool without one, or one that changed since it was checked:
 * run `rlvr tasks check`). Built-in family: generates <run_dir>/pool and
 * checks it ([tasks] check_runs, check_jobs) when `may_build`, else
 * refuses. Split hygiene is checked either way. Progress goes to stderr.
 * Loads once: later calls return 0. */
int rlvr_run_pool(rlvr_run *r, bool may_build);

/* The sandbox host "tests" tasks need (idempotent); sets harness.host. */
int rlvr_run_host(rlvr_run *r);

/* A fresh model from [model] (init_seed), or the model stored in a
 * checkpoint (its configuration must equal [model]'s, field by field, and
 * its tokenizer the run's: rlvr_run_set_tokenizer, which a run still
 * waiting for its BPE tokenizer takes it from). */
int rlvr_run_new_model(const rlvr_run *r, rlvr_model **out);
int rlvr_run_load_model(rlvr_run *r, const char *checkpoint_path, bool moments, rlvr_model **out);
/* (moments false: the AdamW moments start at zero, e.g. RL after SFT) */

/* The run's tokenizer. With [tokenizer] kind = byte it is the byte
 * tokenizer from the start. With kind = bpe it is <run>/tokenizer.json
 * (docs/FORMATS.md "Tokenizer"), read by rlvr_run_open once it exists; until
 * then the run is pending (tok is the byte tokenizer as a placeholder) and
 * the first tokenizer set is kept: learned by `rlvr sft`, or taken from the
 * checkpoint a job starts from, and written to <run>/tokenizer.json
 * (atomically). Later ones must equal it: RLVR_EFORMAT naming `from` (the
 * checkpoint) otherwise, and when a pending run is offered a byte
 * tokenizer or one with more ids than [model] vocab. Takes ownership of
 * tok (freed on error). */
int rlvr_run_set_tokenizer(rlvr_run *r, rlvr_tokenizer *tok, const char *from);
/* Reads a tokenizer file (<run>/tokenizer.json, docs/FORMATS.md
 * "Tokenizer"); RLVR_EFORMAT naming the file when it is not one. */
int rlvr_tokenizer_file_read(const char *path, rlvr_tokenizer **out);

/* A pending run reads <run>/tokenizer.json when it exists now (a rank that
 * opened the run before the leader wrote it); 0 either way. */
int rlvr_run_reload_tokenizer(rlvr_run *r);
/* rlvr_run_reload_tokenizer, then RLVR_ESTATE saying how to get one when
 * the run is still pending (jobs that tokenize: RL, evaluation). */
int rlvr_run_require_tokenizer(rlvr_run *r);

/* The run manifest of one job (io/manifest.h, docs/FORMATS.md "Run
 * manifest") at `path`: gathered and written now with status "running"
 * (config text and hash, seed, the pool's content hash, rank layout, host
 * names — `hosts` NULL: this host for every rank). rlvr_run_manifest_end
 * rewrites it with the outcome of the job: rc 0 "finished", 1
 * "interrupted" (stopped by a signal after a checkpoint), negative "failed",
 * with the last step and policy version; it frees *m. */
typedef struct rlvr_manifest rlvr_manifest;
int rlvr_run_manifest_begin(const rlvr_run *r, const char *path, const int layout[3], const char *const *hosts,
                            int n_hosts, rlvr_manifest **out);
int rlvr_run_manifest_end(rlvr_manifest *m, const char *path, int rc, int64_t step, int64_t version);

/* Seconds since 1970 (metrics' time_unix). */
double rlvr_run_unix_time(void);

/* [sft] extra_demos > 0: the extra train tasks for demonstrations only,
 * generated into <run>/sft/demo_tasks on first use and loaded (*out NULL
 * when extra_demos is 0): the indices after the pool's train tasks, or
 * before them with [sft] pool_demos = false. They are never validated:
 * only their reference solutions are played. */
int rlvr_run_demo_tasks(rlvr_run *r, rlvr_task_pool **out);

/* What a training job was asked to do (the command line of sft and train):
 * the configuration file, the run directory replacing <out_dir>/<name>
 * (NULL: none), whether to resume from the latest checkpoint, and
 * until_step > 0: end this job after that step with a checkpoint, a segment
 * of a chain, without changing the schedule, which still spans [train]
 * steps. */
typedef struct {
    const char *config, *out;
    bool resume;
    int64_t until_step; /* 0: none */
} rlvr_run_args;

/* True when Slurm requeued this job (SLURM_RESTART_COUNT > 0): a training
 * job then resumes from its latest checkpoint. */
bool rlvr_run_slurm_restarted(void);

/* ---- signals: the handler only sets the flag; jobs act at step boundaries ---- */

/* SIGTERM, SIGINT, SIGUSR1, SIGUSR2 set rlvr_run_stop_flag (to the signal). */
void rlvr_run_install_signals(void);
extern volatile sig_atomic_t rlvr_run_stop_flag;


/* "<dir>/<leaf>" into out (RLVR_ELIMIT when too long). */
int rlvr_run_path(char *out, size_t cap, const char *dir, const char *leaf);

/* Validates a pool in parallel (jobs workers), printing one line per task to
 * `progress` (NULL: through core/log, as progress), and writes its manifest.
 * *ok = usable tasks. */
int rlvr_run_check_pool(const char *pool_path, const char *manifest_path, const rlvr_task_check_options *opts,
                        const rlvr_sandbox_host_options *host_options, int jobs, bool json, FILE *progress, size_t *ok,
                        size_t *total);

#endif
