/* train/play.h — one task played by a policy through the harness
 * (envs/harness.h), the code path training and evaluation use, for the
 * verbs that show it (`rlvr rollout`, `rlvr agent`). The policy is a
 * checkpoint's model with the harness settings it was trained with, or
 * without one a small random-weights model with the byte tokenizer (to
 * watch the harness, not to solve anything). */
#ifndef RLVR_TRAIN_PLAY_H
#define RLVR_TRAIN_PLAY_H

#include "core/config.h"
#include "envs/harness.h"

#include <stdint.h>

typedef struct {
    const char *task;        /* a task spec file */
    const char *checkpoint;  /* NULL: random weights */
    uint64_t seed;           /* sampling seed (and the random model's init seed) */
    float temperature;
    rlvr_sampler_weights weights; /* the sampler's weight format (f32, the default: the trainer's own
                                     log-probs; bf16 and q8_0 keep less of the model in memory) */
    /* the key tables the checkpoint's stored configuration is parsed with
     * ([harness], [repetition] and [sandbox] are read from it) */
    const rlvr_config_key *const *schemas;
} rlvr_play_options;

typedef struct {
    rlvr_task *task;
    rlvr_tokenizer *tok;
    rlvr_model *model;
    rlvr_sampler *sampler;
    rlvr_sandbox_host *host;  /* "tests" tasks */
    rlvr_verify_task *verify; /* made by rlvr_play_verify */
    rlvr_harness_options opt; /* the checkpoint's (or the defaults), with the host */
} rlvr_play;

/* Loads the task, the tokenizer and the policy, and makes a sampler with
 * `slots` KV slots whose context fits the task's budget and the model. On
 * failure what was made stays in *p for rlvr_play_close, which the caller
 * calls in every case. */
int rlvr_play_open(rlvr_play *p, const rlvr_play_options *o, int slots);

/* Verifies a finished "tests" job in the enclave (one run); "arith" jobs
 * were scored by the harness and are left as they are. */
int rlvr_play_verify(rlvr_play *p, rlvr_harness_job *job, uint64_t seed);

/* Frees what rlvr_play_open made; *p is zeroed. */
void rlvr_play_close(rlvr_play *p);

#endif
