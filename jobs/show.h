/* jobs/show.h — trajectories rendered for humans (`rlvr rollout --show`,
 * `rlvr agent`): the prompt and the headers dimmed, the policy's text inside
 * {{...}}, each observation inside [[...]], in colour when asked. Each piece
 * can be printed as soon as the harness reports it (envs/harness.h events). */
#ifndef RLVR_JOBS_SHOW_H
#define RLVR_JOBS_SHOW_H

#include "core/record.h"
#include "policy/tokenizer.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct {
    FILE *out;
    const rlvr_tokenizer *tok;
    bool color;
} show_style;

/* Decodes ids [from, to) of the record with the special tokens spelled out. */
void show_tokens(const show_style *st, const rlvr_rollout *r, int32_t from, int32_t to);

/* "==== <title>: prompt (N tokens) ====" and the prompt. */
void show_prompt(const show_style *st, const rlvr_rollout *r, const char *title);
/* Turn `number` (from 1): its header and the policy's text. */
void show_policy(const show_style *st, const rlvr_rollout *r, const rlvr_turn *t, int32_t number);
/* The turn's observation with its tool, exit status and duration; nothing
 * when the turn got none. */
void show_observation(const show_style *st, const rlvr_rollout *r, const rlvr_turn *t);
/* "==== end: <stop reason> ====". */
void show_end(const show_style *st, const rlvr_rollout *r);
/* All of the above for a finished record. */
void show_rollout(const show_style *st, const rlvr_rollout *r, const char *title);

#endif
