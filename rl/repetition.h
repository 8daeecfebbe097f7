/* rl/repetition.h — streaming n-gram repetition detector (docs/CONFIG.md
 * "[repetition]").
 *
 * The rollout worker feeds every policy token as it is sampled. The detector
 * counts how often each n-gram occurs among the n-grams that end in the last
 * `window` tokens; when one occurs more than `max_repeats` times the rollout
 * is stopped (RLVR_STOP_REPETITION) and scored as a failure, freeing its
 * inference slot early.
 *
 * O(1) per token: a rolling polynomial hash modulo the Mersenne prime
 * 2^61 − 1 identifies the n-gram (collision probability about n / 2^61 per
 * pair), a ring buffer holds the hashes of the window, and an open-addressing
 * table with backward-shift deletion holds their counts. Memory is
 * O(window + n), allocated once; one detector per sequence slot, reset
 * between rollouts. */
#ifndef RLVR_RL_REPETITION_H
#define RLVR_RL_REPETITION_H

#include <stdbool.h>
#include <stdint.h>

/* [repetition] section. */
typedef struct {
    bool enabled;
    int32_t window;      /* tokens, ≥ ngram */
    int32_t ngram;       /* n ≥ 1 */
    int32_t max_repeats; /* stop when an n-gram occurs more often than this, ≥ 1 */
} rlvr_repetition_config;

typedef struct rlvr_repetition rlvr_repetition;

int rlvr_rl_repetition_config_check(const rlvr_repetition_config *cfg, const char **bad_key);

int rlvr_rl_repetition_new(rlvr_repetition **out, const rlvr_repetition_config *cfg);
void rlvr_rl_repetition_free(rlvr_repetition *r);

/* Forgets every token (start of a new rollout). */
void rlvr_rl_repetition_reset(rlvr_repetition *r);

/* Feeds one token. Returns true once some n-gram has occurred more than
 * max_repeats times within the window (and stays true until reset).
 * Always false when the detector is disabled. */
bool rlvr_rl_repetition_push(rlvr_repetition *r, int32_t token);

/* Occurrences within the window of the n-gram that ended with the last token
 * (0 before n tokens were seen). */
int32_t rlvr_rl_repetition_last_count(const rlvr_repetition *r);

#endif
