/* train/credit.h — Monte-Carlo turn credit from sandbox forks (docs/RL.md
 * "Turn credit").
 *
 * After a step's rollouts are scored, each trained rollout gets branch
 * points (rlvr_rl_branch_turns: states after a turn that changed the
 * workspace first, then states whose first sampled token had high entropy),
 * and each branch point K fork jobs: the rollout continued from that state
 * (envs/harness.h rlvr_harness_prefix) by the current policy. The caller
 * runs, verifies and scores the forks like any rollout, then
 * rlvr_credit_values gives V̂ at each branch point and
 * rlvr_credit_token_advantages spreads the rollout's group advantage over
 * its turns:
 *
 *   group advantage  A_i = (R_i − b_i) / s_i   (b_i baseline, s_i scale of [grpo] advantage)
 *   valued states    V̂(s_0) = b_i, V̂(s_t) = mean fork reward at each branch point t, V̂(s_T) = R_i
 *   turn t           Â_t = (V̂(s_b) − V̂(s_a)) / s_i, a = last valued state ≤ t, b = first valued > t
 *
 * so the segments' advantages add up to A_i and a rollout without branch
 * points keeps A_i on every token (outcome credit).
 *
 * Philox keys: a fork of parent (step, sequence) at its branch point b
 * (0-based, ascending turns), fork k, samples as
 *   step word = RLVR_CREDIT_FORK_STEP_BIT | b << 24 | step,  sequence = parent sequence << 6 | k
 * so its draws depend only on (rollout, branch point, fork), never on the
 * rank that runs it, and never collide with a parent's (step < 2^24). */
#ifndef RLVR_TRAIN_CREDIT_H
#define RLVR_TRAIN_CREDIT_H

#include "envs/harness.h"
#include "rl/advantage.h"
#include "rl/config.h"

#include <stddef.h>
#include <stdint.h>

#define RLVR_CREDIT_FORK_STEP_BIT 0x80000000u
#define RLVR_CREDIT_MAX_FORKS 64         /* k < 2^6 */
#define RLVR_CREDIT_MAX_BRANCH_POINTS 64 /* b < 2^7, and a fork's step word keeps bit 31 */
#define RLVR_CREDIT_MAX_STEP ((1u << 24) - 1u)
#define RLVR_CREDIT_MAX_SEQUENCE ((1u << 26) - 1u)

typedef struct {
    int parent;                 /* index of the parent among rlvr_credit_plan's jobs */
    int32_t turn;               /* the state before this policy turn of the parent */
    int first_fork;             /* forks [first_fork, first_fork + K) */
    rlvr_harness_prefix prefix; /* the forks' start (points into the parent job) */
    double value;               /* V̂(s_turn): mean reward of the included forks (after values) */
    int scored;                 /* included forks; 0: the point is dropped */
} rlvr_credit_branch;

typedef struct {
    int K;
    rlvr_credit_branch *branches; /* (n_branches) in parent order, turns ascending */
    int n_branches;
    rlvr_harness_job *forks;      /* (n_forks = K·n_branches) to run, verify and score */
    int n_forks;
    size_t *fork_pool_index;      /* (n_forks) the parent's pool index */
    double *fork_reward;          /* (n_forks) set by the caller: R of each fork */
    uint8_t *fork_include;        /* (n_forks) set by the caller: 0 = excluded (infra, truncation) */
} rlvr_credit_forks;

/* Branch points of parents[i] (finished, scored, with capture outputs for
 * "tests" tasks) where use[i] != 0, and their fork jobs. pool_index[i] is
 * parent i's task in the pool. A "tests" parent can branch only at states
 * it captured. *out is filled on success (free it with
 * rlvr_credit_forks_free; the fork jobs point into the parents, which must
 * outlive them). RLVR_EINVAL for a parent whose step or sequence does not
 * fit the fork keys. */
int rlvr_credit_plan(rlvr_credit_forks *out, const rlvr_harness_job *parents, const uint8_t *use,
                     const size_t *pool_index, int n, const rlvr_credit_config *cfg);

/* V̂ and `scored` of every branch point from fork_reward / fork_include. */
int rlvr_credit_values(rlvr_credit_forks *f);

/* Per-token advantages of parent `parent` (record rec): tok_adv[rec->n_tokens]
 * gets Â of its turn on policy tokens, 0 elsewhere; `reward` R_i,
 * `group_adv` A_i and `scale` s_i as above. *nonzero_turns (may be NULL)
 * gets its turns with Â ≠ 0. Without branch points every policy token gets A_i. */
int rlvr_credit_token_advantages(float *tok_adv, int *nonzero_turns, const rlvr_credit_forks *f, int parent,
                                 const rlvr_rollout *rec, double reward, double group_adv, double scale);

/* The tokens the fork generated itself (its policy tokens past the parent's). */
int64_t rlvr_credit_fork_tokens(const rlvr_harness_job *fork);

void rlvr_credit_forks_free(rlvr_credit_forks *f);

#endif
