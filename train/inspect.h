/* train/inspect.h — a run's rollouts for a human (`rlvr inspect`): the
 * tokenizer a shard's ids decode with, and one rollout's tokens as text
 * with the policy's and the observations' tokens told apart. */
#ifndef RLVR_TRAIN_INSPECT_H
#define RLVR_TRAIN_INSPECT_H

#include "core/record.h"
#include "policy/tokenizer.h"

#include <stdbool.h>
#include <stddef.h>

/* The tokenizer of the run a rollout shard belongs to: <run>/tokenizer.json
 * beside <run>/shards/ (a BPE run), its path copied to `found`; else the
 * byte tokenizer, `found` empty (*tok NULL when even that cannot be made:
 * ids then render as <id>). An unreadable tokenizer.json is an error. The
 * caller frees *tok. */
int rlvr_inspect_shard_tokenizer(const char *shard_path, rlvr_tokenizer **tok, char *found, size_t cap);

/* One rollout for a human, as `rlvr inspect --rollout N` prints it: a
 * header (its identity, verdict, reward, sizes, timings, seed and turns),
 * then its tokens as text ending in a newline: the prompt plain, the
 * policy's tokens inside {{ }} and the observations' inside [[ ]], or with
 * `color` in ANSI green and cyan. Each token is the tokenizer's bytes
 * (special tokens by name), control bytes other than newline and tab
 * escaped as \xNN; ids outside the tokenizer (or with no tokenizer) as
 * <id>. With `tokens` a table of every token follows (position, id, who,
 * log-prob, entropy). *text is malloc'd, the caller's. RLVR_ENOMEM. */
int rlvr_inspect_rollout(const rlvr_rollout *r, int64_t index, float advantage, const rlvr_tokenizer *tok,
                         bool color, bool tokens, char **text);

#endif
