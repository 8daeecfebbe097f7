/* rl/advantage.h — group advantages (GRPO) and Monte-Carlo turn credit
 * (docs/RL.md "One training step"; figures in "Worked examples" 3–5).
 *
 * A group is the G rollouts of one task drawn from π_θold, with rewards r_i.
 *   std:  A_i = (r_i − mean(r)) / (std(r) + ε), population std (1/G)
 *   mean: A_i = r_i − mean(r)                      (equal weight per task)
 *   loo:  A_i = r_i − mean_{j≠i} r_j               (leave-one-out baseline)
 * A group whose (included) rewards are all equal is zero-variance: it carries
 * no signal, its advantages are exactly 0, and dynamic sampling drops it.
 *
 * Turn credit: V̂(s) = (1/K)·Σ_k R(τ_k^(s)) over K forks from state s, and
 * Â = V̂(s_{t+1}) − V̂(s_t). Turns between two valued states share the value
 * difference of their segment. */
#ifndef RLVR_RL_ADVANTAGE_H
#define RLVR_RL_ADVANTAGE_H

#include <stdbool.h>
#include <stdint.h>

typedef enum { RLVR_ADV_STD = 0, RLVR_ADV_MEAN = 1, RLVR_ADV_LOO = 2 } rlvr_advantage_kind;

/* Advantages of one group of G rollouts.
 *   adv[G]          out: advantage of each rollout (0 for excluded ones)
 *   informative     out (may be NULL): false for a zero-variance group
 *   rewards[G]      r_i
 *   include[G]      may be NULL (all included); 0 marks a rollout excluded
 *                   from the loss, which then does not count in the group
 * eps ≥ 0 is ε of the std form. A group with fewer than two included
 * rollouts is zero-variance. Advantages of a zero-variance group are exactly
 * 0.0. RLVR_EINVAL for G < 1 or non-finite rewards. */
int rlvr_rl_group_advantages(double *adv, bool *informative, const double *rewards, const uint8_t *include, int G,
                             rlvr_advantage_kind kind, double eps);

/* s of a group: A_i = (r_i − b_i)/s with s = std(r) + ε for `std`, 1 for
 * `mean` and `loo` (Monte-Carlo turn credit divides its value differences by
 * the same s). *scale = 1 for a zero-variance group. */
int rlvr_rl_group_scale(double *scale, const double *rewards, const uint8_t *include, int G, rlvr_advantage_kind kind,
                        double eps);

/* True when the included rewards are not all equal (and at least two). */
bool rlvr_rl_group_informative(const double *rewards, const uint8_t *include, int G);

/* V̂(s) = mean of the K fork rewards. RLVR_EINVAL for K < 1. */
int rlvr_rl_mc_value(double *value, const double *fork_rewards, int K);

/* Per-turn advantages of one trajectory with n_turns turns. Turn t leads from
 * state s_t to s_{t+1}; value[n_turns + 1] holds V̂(s_0..s_T) where
 * valued[j] != 0. valued[0] (the start, e.g. the group's mean reward) and
 * valued[n_turns] (the outcome R) must be set. Turn t gets V̂(s_b) − V̂(s_a)
 * with a the last valued state ≤ t and b the first valued state ≥ t + 1; with
 * every state valued this is V̂(s_{t+1}) − V̂(s_t). */
int rlvr_rl_turn_advantages(double *turn_adv, const double *value, const uint8_t *valued, int n_turns);

/* Chooses the states to fork from (branching at every turn costs K·T²
 * tokens, docs/RL.md "Worked examples" 4, so branch selectively). Candidate
 * branch point t ∈ [1, n_turns − 1] is the state before turn t. First the
 * states right after a state-changing tool call (state_changed[t − 1] != 0),
 * then states whose next-token entropy entropy[t] ≥ entropy_threshold, highest
 * first; at most max_points, returned ascending in turns[] with the count in
 * *n_points. Ties go to the earlier turn. entropy or state_changed may be NULL
 * (that criterion off). */
int rlvr_rl_branch_turns(int *turns, int *n_points, const double *entropy, const uint8_t *state_changed,
                         int n_turns, int max_points, double entropy_threshold);

/* Token cost of MC turn credit for a trajectory of `turns` turns of
 * tokens_per_turn tokens with K forks at each branch point: a fork from the
 * state before turn t generates the remaining T − t turns.
 *   base  = T·L,  mc = K·L·Σ_{t∈B}(T − t),  total = base + mc,  ratio = total / base */
typedef struct {
    int64_t base_tokens;
    int64_t turn_sum;   /* Σ_{t∈B} (T − t) */
    int64_t mc_tokens;
    int64_t total_tokens;
    double ratio;       /* total / base */
} rlvr_mc_cost;

/* branch_turns == NULL: every intermediate turn (t = 1..T−1). */
int rlvr_rl_mc_cost(rlvr_mc_cost *out, int turns, int64_t tokens_per_turn, int forks, const int *branch_turns,
                    int n_branch);

/* Expected MC tokens when `points` (at most T − 1) branch points fall uniformly among the
 * intermediate turns: K·L·points·T/2 (the mean of T − t over t = 1..T−1).
 * Returns the expected extra tokens; *ratio (may be NULL) gets (base + mc) / base. */
double rlvr_rl_mc_cost_expected(int turns, int64_t tokens_per_turn, int forks, int points, double *ratio);

#endif
