/* train/sft.h — the supervised bootstrap behind `rlvr sft` and the
 * quickstart (train/sft.c describes the job). */
#ifndef RLVR_TRAIN_SFT_H
#define RLVR_TRAIN_SFT_H

#include "core/record.h"
#include "policy/model.h"
#include "train/run.h"

#include <stddef.h>
#include <stdbool.h>

/* Renders the demonstrations of the usable train tasks (unless [sft]
 * pool_demos is false) and of rlvr_run_demo_tasks through the harness
 * ([sampler] kv_slots per harness call, a progress line every four calls;
 * records moved to *out, *n_out of them; free each with rlvr_rollout_free).
 * 1 when a signal (rlvr_run_stop_flag) stopped it between calls: nothing is
 * returned. */
int rlvr_sft_demos(rlvr_run *r, rlvr_model *model, rlvr_rollout **out, int *n_out);

/* A pending BPE run learns its tokenizer ([tokenizer] merges) from the text
 * of the first [tokenizer] corpus_demos demonstrations, rendered with the
 * byte tokenizer, and sets it (rlvr_run_set_tokenizer); 0 and nothing done
 * when the run is not pending. 1 when a signal stopped the rendering. */
int rlvr_sft_learn_tokenizer(rlvr_run *r, rlvr_model *model);
/* The SFT job: 0 when finished (final checkpoint path to final_checkpoint),
 * 1 when stopped by a signal (at the next step boundary, after a
 * checkpoint; while the pool is checked or the demonstrations render,
 * before any step: nothing new to save), negative on error. On 0 and 1
 * final_checkpoint holds the latest checkpoint, "" when there is none. */
int rlvr_sft_run(rlvr_run *r, bool resume, char *final_checkpoint, size_t cap);

#endif
