#include "rl/advantage.h"

#include "core/error.h"

#include <math.h>
#include <stdlib.h>

static bool included(const uint8_t *include, int i) { return !include || include[i]; }

bool rlvr_rl_group_informative(const double *rewards, const uint8_t *include, int G) {
    int n = 0;
    double first = 0;
    for (int i = 0; i < G; i++) {
        if (!included(include, i)) continue;
        if (n++ == 0) first = rewards[i];
        else if (rewards[i] != first) return true;
    }
    return false;
}

/* Population std of the included rewards (0 with fewer than one). */
static double included_std(const double *rewards, const uint8_t *include, int G) {
    int n = 0;
    double sum = 0, ss = 0;
    for (int i = 0; i < G; i++)
        if (included(include, i)) n++, sum += rewards[i];
    if (n == 0) return 0;
    double mean = sum / n;
    for (int i = 0; i < G; i++)
        if (included(include, i)) ss += (rewards[i] - mean) * (rewards[i] - mean);
    return sqrt(ss / n);
}

int rlvr_rl_group_scale(double *scale, const double *rewards, const uint8_t *include, int G, rlvr_advantage_kind kind,
                        double eps) {
    if (!scale || !rewards || G < 1) return RLVR_FAIL(RLVR_EINVAL, "group scale: bad arguments (G = %d)", G);
    *scale = kind == RLVR_ADV_STD && rlvr_rl_group_informative(rewards, include, G)
                 ? included_std(rewards, include, G) + eps
                 : 1.0;
    return 0;
}

int rlvr_rl_group_advantages(double *adv, bool *informative, const double *rewards, const uint8_t *include, int G,
                             rlvr_advantage_kind kind, double eps) {
    if (!adv || !rewards || G < 1) return RLVR_FAIL(RLVR_EINVAL, "group advantages: bad arguments (G = %d)", G);
    if (!(eps >= 0)) return RLVR_FAIL(RLVR_EINVAL, "group advantages: eps = %g must be >= 0", eps);
    if (kind != RLVR_ADV_STD && kind != RLVR_ADV_MEAN && kind != RLVR_ADV_LOO)
        return RLVR_FAIL(RLVR_EINVAL, "group advantages: unknown kind %d", (int)kind);
    int n = 0;
    double sum = 0;
    for (int i = 0; i < G; i++) {
        adv[i] = 0.0;
        if (!included(include, i)) continue;
        if (!isfinite(rewards[i]))
            return RLVR_FAIL(RLVR_EINVAL, "group advantages: reward %d is not finite", i);
        n++;
        sum += rewards[i];
    }
    bool signal = rlvr_rl_group_informative(rewards, include, G);
    if (informative) *informative = signal;
    if (!signal) return 0; /* exactly zero, not (r - mean) rounding noise */

    double mean = sum / n;
    double scale = kind == RLVR_ADV_STD ? 1.0 / (included_std(rewards, include, G) + eps) : 1.0;
    for (int i = 0; i < G; i++) {
        if (!included(include, i)) continue;
        if (kind == RLVR_ADV_LOO) adv[i] = rewards[i] - (sum - rewards[i]) / (n - 1);
        else adv[i] = (rewards[i] - mean) * scale;
    }
    return 0;
}

int rlvr_rl_mc_value(double *value, const double *fork_rewards, int K) {
    if (!value || !fork_rewards || K < 1) return RLVR_FAIL(RLVR_EINVAL, "MC value: need K >= 1 fork rewards");
    double s = 0;
    for (int k = 0; k < K; k++) s += fork_rewards[k];
    *value = s / K;
    return 0;
}

int rlvr_rl_turn_advantages(double *turn_adv, const double *value, const uint8_t *valued, int n_turns) {
    if (!turn_adv || !value || !valued || n_turns < 1)
        return RLVR_FAIL(RLVR_EINVAL, "turn advantages: bad arguments (%d turns)", n_turns);
    if (!valued[0] || !valued[n_turns])
        return RLVR_FAIL(RLVR_EINVAL, "turn advantages: the start state and the final state must have values");
    int a = 0;
    while (a < n_turns) {
        int b = a + 1;
        while (!valued[b]) b++;
        double d = value[b] - value[a];
        for (int t = a; t < b; t++) turn_adv[t] = d;
        a = b;
    }
    return 0;
}

typedef struct {
    int turn;
    int priority; /* 0 state change, 1 entropy */
    double entropy;
} branch_candidate;

static int candidate_cmp(const void *pa, const void *pb) {
    const branch_candidate *a = pa, *b = pb;
    if (a->priority != b->priority) return a->priority - b->priority;
    if (a->priority == 1 && a->entropy != b->entropy) return a->entropy > b->entropy ? -1 : 1;
    return a->turn - b->turn;
}

static int int_cmp(const void *pa, const void *pb) { return *(const int *)pa - *(const int *)pb; }

int rlvr_rl_branch_turns(int *turns, int *n_points, const double *entropy, const uint8_t *state_changed,
                         int n_turns, int max_points, double entropy_threshold) {
    if (!turns || !n_points || n_turns < 0 || max_points < 0)
        return RLVR_FAIL(RLVR_EINVAL, "branch turns: bad arguments");
    *n_points = 0;
    if (n_turns < 2 || max_points == 0) return 0;
    branch_candidate *cand;
    RLVR_ALLOC(cand, n_turns);
    int n = 0;
    for (int t = 1; t < n_turns; t++) {
        if (state_changed && state_changed[t - 1]) cand[n++] = (branch_candidate){t, 0, 0};
        else if (entropy && entropy[t] >= entropy_threshold) cand[n++] = (branch_candidate){t, 1, entropy[t]};
    }
    qsort(cand, (size_t)n, sizeof *cand, candidate_cmp);
    int k = n < max_points ? n : max_points;
    for (int i = 0; i < k; i++) turns[i] = cand[i].turn;
    free(cand);
    qsort(turns, (size_t)k, sizeof *turns, int_cmp);
    *n_points = k;
    return 0;
}

int rlvr_rl_mc_cost(rlvr_mc_cost *out, int turns, int64_t tokens_per_turn, int forks, const int *branch_turns,
                    int n_branch) {
    if (!out || turns < 1 || tokens_per_turn < 1 || forks < 0 || (branch_turns && n_branch < 0))
        return RLVR_FAIL(RLVR_EINVAL, "MC cost: bad arguments (T = %d, L = %lld, K = %d)", turns,
                         (long long)tokens_per_turn, forks);
    int64_t sum = 0;
    if (!branch_turns) {
        for (int t = 1; t < turns; t++) sum += turns - t;
    } else {
        for (int i = 0; i < n_branch; i++) {
            int t = branch_turns[i];
            if (t < 1 || t >= turns)
                return RLVR_FAIL(RLVR_EINVAL, "MC cost: branch turn %d outside [1, %d]", t, turns - 1);
            sum += turns - t;
        }
    }
    out->base_tokens = (int64_t)turns * tokens_per_turn;
    out->turn_sum = sum;
    out->mc_tokens = (int64_t)forks * tokens_per_turn * sum;
    out->total_tokens = out->base_tokens + out->mc_tokens;
    out->ratio = (double)out->total_tokens / (double)out->base_tokens;
    return 0;
}

double rlvr_rl_mc_cost_expected(int turns, int64_t tokens_per_turn, int forks, int points, double *ratio) {
    if (points > turns - 1) points = turns - 1; /* every intermediate turn at most */
    if (points < 0) points = 0;
    double mc = turns >= 2 ? (double)forks * (double)tokens_per_turn * points * turns / 2.0 : 0.0;
    double base = (double)turns * (double)tokens_per_turn;
    if (ratio) *ratio = base > 0 ? (base + mc) / base : 0.0;
    return mc;
}
