/* train/credit.c — branch points, fork jobs and turn advantages of
 * Monte-Carlo credit (train/credit.h). */
#include "train/credit.h"

#include "core/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void rlvr_credit_forks_free(rlvr_credit_forks *f) {
    if (!f) return;
    for (int i = 0; i < f->n_forks; i++) rlvr_harness_job_clear(&f->forks[i]);
    free(f->branches);
    free(f->forks);
    free(f->fork_pool_index);
    free(f->fork_reward);
    free(f->fork_include);
    memset(f, 0, sizeof *f);
}

int64_t rlvr_credit_fork_tokens(const rlvr_harness_job *fork) {
    return (int64_t)rlvr_rollout_policy_tokens(&fork->record) - fork->prefix_policy_tokens;
}

/* The state s_t (before policy turn t) of a parent: *state for its prefix;
 * false when the fork could not start there (a "tests" parent whose
 * workspace at that point was not captured). */
static bool state_before(const rlvr_harness_job *p, int32_t t, const rlvr_workspace_state **state) {
    *state = NULL;
    if (p->task->verifier != RLVR_VERIFIER_TESTS) return true;
    if (!p->turn_state) return false;
    int32_t s = p->turn_state[t - 1];
    if (s == RLVR_HARNESS_STATE_UNKNOWN || s >= p->n_states) return false;
    if (s >= 0) *state = p->states[s];
    return true;
}

/* Branch points of one parent: the criteria of rl/advantage.h over the turns
 * whose state a fork can start from. */
static int parent_branch_turns(int *turns, int *n, const rlvr_harness_job *p, const rlvr_credit_config *cfg) {
    const rlvr_rollout *r = &p->record;
    *n = 0;
    if (r->n_turns < 2) return 0;
    double *entropy = malloc((size_t)r->n_turns * sizeof *entropy);
    uint8_t *changed = calloc((size_t)r->n_turns, 1);
    int rc = entropy && changed ? 0 : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    for (int32_t t = 0; rc == 0 && t < r->n_turns; t++) {
        const rlvr_turn *tu = &r->turns[t];
        const rlvr_workspace_state *st;
        /* entropy[t] and changed[t - 1] put s_t forward; an unreachable s_t gets neither */
        bool reachable = t >= 1 && state_before(p, t, &st);
        entropy[t] = reachable && tu->policy_end > tu->policy_start ? r->entropy[tu->policy_start] : -INFINITY;
        if (t >= 1) changed[t - 1] = reachable && cfg->branch_on_state_change && p->turn_changed && p->turn_changed[t - 1];
    }
    if (rc == 0)
        rc = rlvr_rl_branch_turns(turns, n, entropy, changed, r->n_turns, cfg->max_branch_points, cfg->branch_entropy);
    free(entropy);
    free(changed);
    return rc;
}

static int check_keys(const rlvr_harness_job *p, const rlvr_credit_config *cfg) {
    if (p->step > RLVR_CREDIT_MAX_STEP || p->sequence > RLVR_CREDIT_MAX_SEQUENCE)
        return RLVR_FAIL(RLVR_EINVAL,
                         "Monte-Carlo credit: rollout (step %u, sequence %u) is past the fork keys' range (steps "
                         "below %u, sequences below %u)",
                         p->step, p->sequence, RLVR_CREDIT_MAX_STEP + 1, RLVR_CREDIT_MAX_SEQUENCE + 1);
    if (cfg->forks < 1 || cfg->forks > RLVR_CREDIT_MAX_FORKS || cfg->max_branch_points > RLVR_CREDIT_MAX_BRANCH_POINTS)
        return RLVR_FAIL(RLVR_EINVAL, "Monte-Carlo credit: forks %d (1..%d), max_branch_points %d (at most %d)",
                         cfg->forks, RLVR_CREDIT_MAX_FORKS, cfg->max_branch_points, RLVR_CREDIT_MAX_BRANCH_POINTS);
    return 0;
}

/* The K fork jobs of branch point b (index among the parent's) at f->branches[bi]. */
static void make_forks(rlvr_credit_forks *f, int bi, int b, const rlvr_harness_job *p, size_t pool_index) {
    rlvr_credit_branch *br = &f->branches[bi];
    for (int k = 0; k < f->K; k++) {
        int j = br->first_fork + k;
        rlvr_harness_job *fork = &f->forks[j];
        memset(fork, 0, sizeof *fork);
        fork->task = p->task;
        fork->step = RLVR_CREDIT_FORK_STEP_BIT | (uint32_t)b << 24 | p->step;
        fork->sequence = p->sequence << 6 | (uint32_t)k;
        fork->prefix = &br->prefix;
        f->fork_pool_index[j] = pool_index;
    }
}

int rlvr_credit_plan(rlvr_credit_forks *out, const rlvr_harness_job *parents, const uint8_t *use,
                     const size_t *pool_index, int n, const rlvr_credit_config *cfg) {
    memset(out, 0, sizeof *out);
    if (!parents || !pool_index || !cfg || n < 0) return RLVR_FAIL(RLVR_EINVAL, "credit plan: bad arguments");
    rlvr_credit_forks f = {.K = cfg->forks};
    int max_points = cfg->max_branch_points, cap = 0;
    for (int i = 0; i < n; i++)
        if (!use || use[i]) {
            RLVR_TRY(check_keys(&parents[i], cfg));
            cap += max_points;
        }
    int *turns = malloc((size_t)(max_points > 0 ? max_points : 1) * sizeof *turns);
    f.branches = calloc((size_t)(cap > 0 ? cap : 1), sizeof *f.branches);
    int rc = turns && f.branches ? 0 : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    for (int i = 0; rc == 0 && i < n; i++) {
        if (use && !use[i]) continue;
        int np = 0;
        rc = parent_branch_turns(turns, &np, &parents[i], cfg);
        for (int b = 0; rc == 0 && b < np; b++) {
            rlvr_credit_branch *br = &f.branches[f.n_branches++];
            br->parent = i;
            br->turn = turns[b];
            br->first_fork = (f.n_branches - 1) * f.K;
            br->prefix.record = &parents[i].record;
            br->prefix.turn = turns[b];
            br->prefix.tokens = parents[i].record.turns[turns[b]].policy_start;
            state_before(&parents[i], turns[b], &br->prefix.state);
        }
    }
    int nf = f.n_branches * f.K;
    if (rc == 0) {
        f.forks = calloc((size_t)(nf > 0 ? nf : 1), sizeof *f.forks);
        f.fork_pool_index = calloc((size_t)(nf > 0 ? nf : 1), sizeof *f.fork_pool_index);
        f.fork_reward = calloc((size_t)(nf > 0 ? nf : 1), sizeof *f.fork_reward);
        f.fork_include = calloc((size_t)(nf > 0 ? nf : 1), 1);
        if (!f.forks || !f.fork_pool_index || !f.fork_reward || !f.fork_include)
            rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory for %d forks", nf);
    }
    for (int bi = 0, b = 0; rc == 0 && bi < f.n_branches; bi++) {
        b = bi > 0 && f.branches[bi - 1].parent == f.branches[bi].parent ? b + 1 : 0;
        make_forks(&f, bi, b, &parents[f.branches[bi].parent], pool_index[f.branches[bi].parent]);
    }
    free(turns);
    if (rc < 0) {
        rlvr_credit_forks_free(&f); /* n_forks is still 0: no job to clear */
        return rc;
    }
    f.n_forks = nf;
    *out = f;
    return 0;
}

int rlvr_credit_values(rlvr_credit_forks *f) {
    if (!f) return RLVR_FAIL(RLVR_EINVAL, "credit values: no forks");
    for (int bi = 0; bi < f->n_branches; bi++) {
        rlvr_credit_branch *br = &f->branches[bi];
        double sum = 0;
        int n = 0;
        for (int k = 0; k < f->K; k++) {
            int j = br->first_fork + k;
            if (!f->fork_include[j]) continue;
            sum += f->fork_reward[j];
            n++;
        }
        br->scored = n;
        br->value = n > 0 ? sum / n : 0.0;
    }
    return 0;
}

int rlvr_credit_token_advantages(float *tok_adv, int *nonzero_turns, const rlvr_credit_forks *f, int parent,
                                 const rlvr_rollout *rec, double reward, double group_adv, double scale) {
    if (!tok_adv || !rec || !(scale > 0)) return RLVR_FAIL(RLVR_EINVAL, "token advantages: bad arguments");
    int T = rec->n_turns;
    for (int32_t k = 0; k < rec->n_tokens; k++)
        tok_adv[k] = rec->mask[k] == RLVR_TOKEN_POLICY ? (float)group_adv : 0.0f;
    if (nonzero_turns) *nonzero_turns = group_adv != 0 ? T : 0;
    if (T < 1 || !f) return 0;
    double *value = calloc((size_t)T + 1, sizeof *value), *turn_adv = calloc((size_t)T, sizeof *turn_adv);
    uint8_t *valued = calloc((size_t)T + 1, 1);
    int rc = value && turn_adv && valued ? 0 : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    int points = 0;
    for (int bi = 0; rc == 0 && bi < f->n_branches; bi++) {
        const rlvr_credit_branch *br = &f->branches[bi];
        if (br->parent != parent || br->scored == 0) continue;
        value[br->turn] = br->value;
        valued[br->turn] = 1;
        points++;
    }
    if (rc == 0 && points > 0) {
        value[0] = reward - group_adv * scale; /* the group's baseline b_i */
        value[T] = reward;
        valued[0] = valued[T] = 1;
        rc = rlvr_rl_turn_advantages(turn_adv, value, valued, T);
        int nz = 0;
        for (int t = 0; rc == 0 && t < T; t++) {
            const rlvr_turn *tu = &rec->turns[t];
            float a = (float)(turn_adv[t] / scale);
            for (int32_t k = tu->policy_start; k < tu->policy_end; k++)
                if (rec->mask[k] == RLVR_TOKEN_POLICY) tok_adv[k] = a;
            nz += turn_adv[t] != 0;
        }
        if (nonzero_turns) *nonzero_turns = nz;
    }
    free(value);
    free(turn_adv);
    free(valued);
    return rc;
}
