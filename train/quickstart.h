/* train/quickstart.h — a configuration end to end on one machine with no
 * cluster and no download (`rlvr quickstart`):
 *   1. generate and validate its pool (train and held-out eval splits),
 *   2. SFT on demonstrations of the train tasks (train/sft.h),
 *   3. RL, synchronous GRPO (train/trainer.h),
 *   4. evaluate the SFT and the RL checkpoints on the held-out split with
 *      the same seeds (eval/eval.h): pass@1, pass@k with intervals, and the
 *      paired difference RL − SFT with its bootstrap interval over tasks,
 *   5. write OUT/summary.json (and OUT/eval_sft.json, OUT/eval_rl.json).
 * The configuration text is written to OUT/quickstart.ini first, so the run
 * is reproducible from its directory; running it again resumes whatever
 * stage was interrupted. */
#ifndef RLVR_TRAIN_QUICKSTART_H
#define RLVR_TRAIN_QUICKSTART_H

#include "core/config.h"
#include "eval/eval.h"
#include "io/config.h"

#include <stddef.h>

typedef enum {
    RLVR_QUICKSTART_POOL,
    RLVR_QUICKSTART_SFT,
    RLVR_QUICKSTART_RL,
    RLVR_QUICKSTART_EVAL_SFT,
    RLVR_QUICKSTART_EVAL_RL,
    RLVR_QUICKSTART_STAGES
} rlvr_quickstart_stage;

/* "pool", "sft", "rl", "eval_sft", "eval_rl" (summary.json's keys). */
const char *rlvr_quickstart_stage_name(rlvr_quickstart_stage s);

typedef struct {
    /* one line of progress at a time, without its newline ("quickstart: sft
     * done in 12 s", "eval SFT: 3/8 tasks, ..."); NULL: rlvr_log_info */
    void (*progress)(void *arg, const char *line);
    void *progress_arg;
} rlvr_quickstart_options;

typedef struct {
    rlvr_eval_result *sft, *rl;      /* the held-out evaluations */
    rlvr_eval_comparison diff;       /* RL − SFT pass@1, paired over tasks (95 %, 2000 resamples) */
    double stage_s[RLVR_QUICKSTART_STAGES]; /* wall seconds of each stage in this invocation */
    double minutes;                  /* wall minutes of this invocation */
    char run_dir[RLVR_IO_PATH_CAP];
} rlvr_quickstart_result;

/* Runs the stages on `config_text` (len bytes; the keys of `schemas`) in
 * out_dir (created when missing). Returns 0 when done (*out filled, freed
 * with rlvr_quickstart_result_clear), 1 when a signal stopped it after a
 * checkpoint (rlvr_run_stop_flag; run it again to resume), or an error. */
int rlvr_quickstart_run(const char *config_text, size_t len, const char *out_dir,
                        const rlvr_config_key *const *schemas, const rlvr_quickstart_options *opt,
                        rlvr_quickstart_result *out);

void rlvr_quickstart_result_clear(rlvr_quickstart_result *r);

#endif
