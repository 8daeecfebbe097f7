/* jobs/play.h — what `rlvr rollout` and `rlvr agent` share: one task played
 * by a policy through the harness (envs/harness.h), the code path training
 * and evaluation use. The policy is a checkpoint's model, or without one a
 * small random-weights model (to watch the harness, not to solve anything). */
#ifndef RLVR_JOBS_PLAY_H
#define RLVR_JOBS_PLAY_H

#include "envs/harness.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    const char *task, *checkpoint; /* paths; checkpoint NULL: random weights */
    uint64_t seed;                 /* sampling seed (and the random model's init seed) */
    float temperature;
    bool color;
} play_options;

/* Defaults: seed 1, temperature 1, colour when stdout is a terminal and
 * NO_COLOR is unset. */
void play_options_default(play_options *o);

/* Reads one of the shared flags at argv[*i] (--task, --checkpoint, --seed,
 * --temperature, --color, --no-color), advancing *i past its value. Returns
 * 1 when it was one, 0 when not, -1 for a bad value. */
int play_parse_flag(play_options *o, int argc, char **argv, int *i);

/* "  --task TASK ..." lines for a usage text. */
extern const char play_flags_help[];

typedef struct {
    rlvr_task *task;
    rlvr_tokenizer *tok;
    rlvr_model *model;
    rlvr_sampler *sampler;
    rlvr_sandbox_host *host;   /* "tests" tasks */
    rlvr_verify_task *verify;  /* made by play_verify */
    rlvr_harness_options opt;  /* the defaults, with the host */
} play_setup;

/* Loads the task, the tokenizer and the policy, and makes a sampler with
 * `slots` KV slots whose context fits the task's budget and the model. */
int play_open(play_setup *p, const play_options *o, int slots);

/* Verifies a finished "tests" job in the enclave (one run); "arith" jobs
 * were scored by the harness and are left as they are. */
int play_verify(play_setup *p, rlvr_harness_job *job, uint64_t seed);

void play_close(play_setup *p);

#endif
