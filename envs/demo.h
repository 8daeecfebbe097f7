/* envs/demo.h — demonstrations: a task's reference solution played through
 * the tools by a scripted policy (rlvr_harness_script_fn), so that SFT data,
 * the oracle of the tests and a human watching `rlvr agent` all go through
 * the harness, the chat template and the sandboxed tools exactly as a
 * sampled rollout does (docs/TASKS.md "Harness", no second code path).
 *
 * "tests" tasks: for every file the reference patch changes
 *     turn: read_file {"path": P}
 *     turn: replace_in_file {"path": P, "old": O, "new": N}   one per hunk
 * then submit {}. O and N are the smallest edit that reproduces the hunk:
 * the hunk's removed and added lines with just enough unchanged lines around
 * them that O occurs exactly once in the base file (read from the base
 * commit with libgit2; for a repository that cannot be read, e.g. a bundle,
 * the hunk's full context is used). Short, unique edits are what a small
 * policy can learn to write.
 * "arith" tasks: one turn whose text is the reference answer.
 * Each turn's text before the call is empty: the demonstration teaches the
 * calls, not prose.
 *
 * A recovery demonstration ("tests" tasks) makes the mistake a small policy
 * makes most — an `old` text the file does not hold — and recovers from it:
 * before the first edit it calls
 *     replace_in_file {"path": P, "old": N, "new": N}
 * with that edit's new text N as the old one (the fixed code, which the base
 * file does not contain), the tool refuses it with its usual error
 * observation, and the demonstration goes on with the correct edit. SFT
 * trains on the recovery, not on the mistake: rlvr_demo_mask_mistake turns
 * the mistaken turn's policy tokens into context. */
#ifndef RLVR_ENVS_DEMO_H
#define RLVR_ENVS_DEMO_H

#include "core/record.h"
#include "envs/task.h"
#include "policy/template.h"
#include "policy/tokenizer.h"

#include <stdbool.h>

typedef struct rlvr_demo rlvr_demo;

/* Builds the demonstration of a task. RLVR_EFORMAT naming the task when its
 * reference patch cannot be turned into edits (no hunk, a binary diff, a
 * file deletion); RLVR_ENOMEM. */
int rlvr_demo_new(rlvr_demo **out, const rlvr_task *task);

/* Builds the recovery demonstration of a "tests" task (above). Besides
 * rlvr_demo_new's errors, RLVR_ENOTFOUND naming the task when none can be
 * made: an arith task, a base file that cannot be read, or a first edit
 * whose new text already occurs in the file. */
int rlvr_demo_new_recovery(rlvr_demo **out, const rlvr_task *task);
void rlvr_demo_free(rlvr_demo *d);

/* Index of the mistaken call (= its turn) of a recovery demonstration; -1
 * for a plain one. */
int rlvr_demo_mistake(const rlvr_demo *d);

/* Whether a played demonstration is fit to imitate: the episode ended by
 * itself (stop DONE), every call parsed, and every tool call succeeded
 * except the mistaken one, which the tool refused. `calls` and
 * `calls_parsed` are the harness job's counts. */
bool rlvr_demo_usable(const rlvr_demo *d, const rlvr_rollout *r, int32_t calls, int32_t calls_parsed);

/* Turns the policy tokens of the mistaken turn of a played recovery
 * demonstration into RLVR_TOKEN_PROMPT (context the policy conditions on,
 * no loss); a plain demonstration is left as it is. */
void rlvr_demo_mask_mistake(const rlvr_demo *d, rlvr_rollout *r);

/* Number of turns the demonstration plays (calls, and the final answer for
 * "arith" tasks). */
int rlvr_demo_turns(const rlvr_demo *d);

/* The JSON of call `i` (0-based, < rlvr_demo_turns), NULL for a turn
 * without a call. */
const char *rlvr_demo_call(const rlvr_demo *d, int i);

/* The harness script (envs/harness.h rlvr_harness_script_fn) playing the
 * demonstration; `arg` is the rlvr_demo. After the last call it ends the
 * episode with a turn without a call. */
int rlvr_demo_script(void *arg, const rlvr_rollout *so_far, int32_t turn, const rlvr_tokenizer *tok,
                     rlvr_token_buf *out);

#endif
