/* tests/train/test_mc_credit.c — Monte-Carlo turn credit from sandbox forks
 * on a task family whose values are known in closed form.
 *
 * The family: a bugfix-c task and a scripted "coin" policy with T turns.
 * At each turn t < T − 1 it plants the reference fix with probability p
 * (a replace_in_file call; Philox keyed by the rollout's sampling sequence
 * and t) unless the fix is already in, and otherwise runs a command that
 * appends a line to build/notes (a change of the workspace that the patch
 * never carries: build/ is ignored); turn T − 1 submits. Every turn has the
 * same number of tokens (L). The rollout passes iff the fix was planted,
 * so the state s_t before turn t has the value
 *     V(s_t) = 1                            when the fix is in the workspace,
 *     V(s_t) = 1 − (1 − p)^(T − 1 − t)      otherwise.
 * The parents run with workspace capture; every turn but the last changes
 * the workspace, so with max_branch_points = T − 1 every intermediate state
 * is a branch point. K forks per point continue from the restored
 * workspace and the recorded prefix, are verified in the enclave, and:
 *   1. V̂ at every branch point lies in the central 95 % binomial interval
 *      of Binomial(K, V)/K (seed fixed: the figures are reproducible);
 *      a fork from a planted state always passes (the restore carried the
 *      fix), from an unplanted one it passes only if it plants it;
 *   2. the decisive turn (the one that planted the fix) gets Â > 0 on all
 *      its policy tokens, in every parent that planted one, and the
 *      segments' advantages add up to the group advantage;
 *   3. forks start from the parent's prefix exactly: tokens, log-probs,
 *      masks and turns before the branch point are the parent's;
 *   4. the tokens the forks generate, over the parents' policy tokens,
 *      equal rlvr plan's prediction K·L·points·T/2 ÷ T·L within 10 %;
 *   5. the forks' records do not depend on how many sampler slots run them
 *      (prefix sharing) and the whole computation repeats bit for bit;
 *   6. the harness refuses a prefix that does not end where a turn of its
 *      parent begins, and a fork that would capture states. */
#include "core/rng.h"
#include "envs/demo.h"
#include "envs/harness.h"
#include "envs/pool.h"
#include "envs/tools.h"
#include "policy/model.h"
#include "rl/advantage.h"
#include "train/credit.h"
#include "test.h"
#include "../envs/envs_test.h"
#include "../envs/pool_fixture.h"

#include <jansson.h>
#include <math.h>

enum { T = 5, N_PARENTS = 4, K = 12 };
#define P_FIX 0.25
#define COIN_SEED 20261206ull

static rlvr_tokenizer *tok;
static char *dir;

/* ---- the coin policy --------------------------------------------------------------------- */

typedef struct {
    char *fix, *submit; /* call JSON */
    int32_t L;          /* tokens of every turn */
} coin;

static bool planted(const rlvr_rollout *r) {
    for (int32_t t = 0; t < r->n_turns; t++)
        if (strcmp(r->turns[t].tool_name, "replace_in_file") == 0 && r->turns[t].exit_status == 0) return true;
    return false;
}

static char *wander_call(int32_t turn) {
    char cmd[96];
    snprintf(cmd, sizeof cmd, "mkdir -p build && echo 'turn %d' >> build/notes", (int)turn);
    json_t *c = json_pack("{s:s, s:{s:s}}", "name", "run", "arguments", "command", cmd);
    char *s = json_dumps(c, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(c);
    return s;
}

/* One assistant turn of exactly L tokens: text padding, then the call. */
static int padded_turn(rlvr_token_buf *out, const char *call, int32_t L) {
    rlvr_token_buf probe = {0};
    int rc = rlvr_template_assistant_reply(&probe, tok, "", 0, call, strlen(call));
    int32_t pad = L - probe.n;
    rlvr_token_buf_free(&probe);
    RLVR_TRY(rc);
    if (pad < 0) return RLVR_FAIL(RLVR_EINVAL, "turn longer than L");
    char *text = malloc((size_t)pad + 1);
    for (int32_t i = 0; i < pad; i++) text[i] = (char)('a' + i % 26);
    text[pad] = 0;
    rc = rlvr_template_assistant_reply(out, tok, text, (size_t)pad, call, strlen(call));
    free(text);
    return rc;
}

static const char *coin_call(const coin *c, const rlvr_rollout *so_far, int32_t turn, char **owned) {
    *owned = NULL;
    if (turn >= T - 1) return c->submit;
    double u = rlvr_rng_uniform(COIN_SEED, RLVR_RNG_TEST, 0, so_far->sample_sequence, (uint32_t)turn);
    if (!planted(so_far) && u < P_FIX) return c->fix;
    return *owned = wander_call(turn);
}

static int coin_script(void *arg, const rlvr_rollout *so_far, int32_t turn, const rlvr_tokenizer *t,
                       rlvr_token_buf *out) {
    (void)t;
    const coin *c = arg;
    char *owned;
    const char *call = coin_call(c, so_far, turn, &owned);
    int rc = padded_turn(out, call, c->L);
    free(owned);
    return rc;
}

/* The fix: the replace_in_file call of the task's one-hunk demonstration. */
static bool coin_init(coin *c, const rlvr_task *task) {
    memset(c, 0, sizeof *c);
    rlvr_demo *d = NULL;
    if (rlvr_demo_new(&d, task) < 0) return false;
    bool ok = rlvr_demo_turns(d) == 3 && strstr(rlvr_demo_call(d, 1), "replace_in_file");
    if (ok) {
        c->fix = strdup(rlvr_demo_call(d, 1));
        c->submit = strdup(rlvr_demo_call(d, 2));
        char *w = wander_call(0);
        size_t longest = strlen(c->fix) > strlen(w) ? strlen(c->fix) : strlen(w);
        c->L = (int32_t)longest + 48; /* room for the template's tokens around the call */
        free(w);
    }
    rlvr_demo_free(d);
    return ok;
}

static void coin_free(coin *c) { free(c->fix), free(c->submit); }

/* ---- closed-form values --------------------------------------------------------------------- */

static double true_value(const rlvr_rollout *parent, int32_t t) {
    rlvr_rollout before = *parent;
    before.n_turns = t; /* the turns before s_t */
    return planted(&before) ? 1.0 : 1.0 - pow(1.0 - P_FIX, T - 1 - t);
}

static double binom_pmf(int k, int n, double p) {
    return exp(lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0) + (k ? k * log(p) : 0) +
               (n - k ? (n - k) * log1p(-p) : 0));
}

/* Central 95 % interval of Binomial(n, p): [lo, hi] with at most 2.5 % below and above. */
static void binom_interval(int n, double p, int *lo, int *hi) {
    if (p >= 1.0) {
        *lo = *hi = n;
        return;
    }
    double c = 0;
    *lo = 0;
    while (*lo < n && c + binom_pmf(*lo, n, p) <= 0.025) c += binom_pmf((*lo)++, n, p);
    c = 0;
    *hi = n;
    while (*hi > 0 && c + binom_pmf(*hi, n, p) <= 0.025) c += binom_pmf((*hi)--, n, p);
}

/* ---- the run ------------------------------------------------------------------------------------ */

typedef struct {
    rlvr_harness_job parents[N_PARENTS];
    rlvr_credit_forks forks;
    double reward[N_PARENTS];
    char *fixed_patch; /* the verified patches: planted or not */
} mc_run;

static rlvr_sampler *sampler_with(const rlvr_model *m, int slots) {
    rlvr_sampler_config sc;
    rlvr_sampler_config_default(&sc);
    sc.kv_slots = slots;
    sc.context = 4096;
    sc.seed = 7;
    rlvr_sampler *s = NULL;
    CHECK_OK(rlvr_sampler_new(&s, m, &sc));
    return s;
}

/* Verdicts of jobs: the patch verified in the enclave once per distinct patch. */
static void verify_jobs(rlvr_harness_job *jobs, int n, rlvr_verify_task *vt, char **seen_patch, int *seen_pass,
                        int *n_seen) {
    for (int i = 0; i < n; i++) {
        rlvr_harness_job *j = &jobs[i];
        CHECK(j->record.stop == RLVR_STOP_DONE);
        const char *p = j->patch ? j->patch : "";
        int s = 0;
        while (s < *n_seen && strcmp(seen_patch[s], p) != 0) s++;
        if (s == *n_seen) {
            CHECK_OK(rlvr_harness_verify(j, vt, 1));
            seen_patch[s] = strdup(p);
            seen_pass[s] = j->record.verdict == RLVR_VERDICT_PASS;
            (*n_seen)++;
        }
        j->record.verdict = seen_pass[s] ? RLVR_VERDICT_PASS : RLVR_VERDICT_FAIL;
    }
}

static void run_mc(mc_run *m, const rlvr_task *task, coin *c, rlvr_sandbox_host *host, const rlvr_model *model,
                   int slots, rlvr_verify_task *vt) {
    memset(m, 0, sizeof *m);
    rlvr_harness_options opt;
    rlvr_harness_options_default(&opt);
    opt.host = host;
    opt.budgets.turns = T;
    opt.repetition.enabled = false;
    rlvr_sampler *s = sampler_with(model, slots);
    for (int i = 0; i < N_PARENTS; i++)
        m->parents[i] = (rlvr_harness_job){.task = task, .step = 3, .sequence = (uint32_t)(1024 + i),
                                           .script = coin_script, .script_arg = c,
                                           .capture_tools = 1u << RLVR_TOOL_REPLACE_IN_FILE | 1u << RLVR_TOOL_RUN};
    CHECK_OK(rlvr_harness_run(s, tok, &opt, m->parents, N_PARENTS));
    char *seen[4] = {0};
    int pass[4] = {0}, n_seen = 0;
    verify_jobs(m->parents, N_PARENTS, vt, seen, pass, &n_seen);
    for (int i = 0; i < N_PARENTS; i++) m->reward[i] = m->parents[i].record.verdict == RLVR_VERDICT_PASS;

    rlvr_credit_config cc = {.mc = true, .forks = K, .max_branch_points = T - 1, .branch_entropy = 1.0,
                             .branch_on_state_change = true};
    size_t pool_index[N_PARENTS] = {0};
    CHECK_OK(rlvr_credit_plan(&m->forks, m->parents, NULL, pool_index, N_PARENTS, &cc));
    rlvr_credit_forks *f = &m->forks;
    for (int j = 0; j < f->n_forks; j++) f->forks[j].script = coin_script, f->forks[j].script_arg = c;
    CHECK_OK(rlvr_harness_run(s, tok, &opt, f->forks, f->n_forks));
    verify_jobs(f->forks, f->n_forks, vt, seen, pass, &n_seen);
    for (int j = 0; j < f->n_forks; j++) {
        f->fork_reward[j] = f->forks[j].record.verdict == RLVR_VERDICT_PASS;
        f->fork_include[j] = 1;
    }
    CHECK_OK(rlvr_credit_values(f));
    CHECK(n_seen == 2); /* the empty patch and the fix */
    for (int i = 0; i < n_seen; i++) free(seen[i]);
    rlvr_sampler_free(s);
}

static void mc_run_free(mc_run *m) {
    rlvr_credit_forks_free(&m->forks);
    for (int i = 0; i < N_PARENTS; i++) rlvr_harness_job_clear(&m->parents[i]);
}

/* 3: a fork's record starts with its parent's prefix exactly. */
static void check_prefixes(const mc_run *m) {
    const rlvr_credit_forks *f = &m->forks;
    for (int bi = 0; bi < f->n_branches; bi++) {
        const rlvr_credit_branch *br = &f->branches[bi];
        const rlvr_rollout *p = &m->parents[br->parent].record;
        int32_t end = p->turns[br->turn].policy_start;
        for (int k = 0; k < f->K; k++) {
            const rlvr_rollout *r = &f->forks[br->first_fork + k].record;
            CHECK(r->n_tokens > end && r->n_turns == T && r->prompt_tokens == p->prompt_tokens);
            CHECK(memcmp(r->tokens, p->tokens, (size_t)end * sizeof *r->tokens) == 0);
            CHECK(memcmp(r->logprobs, p->logprobs, (size_t)end * sizeof *r->logprobs) == 0);
            CHECK(memcmp(r->mask, p->mask, (size_t)end) == 0);
            CHECK(memcmp(r->turns, p->turns, (size_t)br->turn * sizeof *r->turns) == 0);
            CHECK(f->forks[br->first_fork + k].prefix_policy_tokens == (int32_t)br->turn * (int32_t)(p->turns[0].policy_end - p->turns[0].policy_start));
        }
    }
}

/* 1: V̂ in the 95 % interval of the closed-form value at every branch point. */
static void check_values(const mc_run *m) {
    const rlvr_credit_forks *f = &m->forks;
    CHECK(f->n_branches == N_PARENTS * (T - 1)); /* every turn changed the workspace */
    int planted_points = 0, open_points = 0;
    for (int bi = 0; bi < f->n_branches; bi++) {
        const rlvr_credit_branch *br = &f->branches[bi];
        double v = true_value(&m->parents[br->parent].record, br->turn);
        int lo, hi, wins = (int)lround(br->value * K);
        binom_interval(K, v, &lo, &hi);
        printf("parent %d  s_%d  V = %.4f  V_hat = %2d/%d = %.3f  95%% interval [%d, %d]\n", br->parent, br->turn, v,
               wins, K, br->value, lo, hi);
        CHECK(br->scored == K);
        CHECK(wins >= lo && wins <= hi);
        if (v == 1.0) planted_points++;
        else open_points++;
    }
    CHECK(planted_points > 0 && open_points > 0); /* both kinds of state were tried */
}

/* 2: the decisive turn's advantage is positive; segments add up to A_i. */
static void check_advantages(const mc_run *m) {
    bool informative = false;
    double adv[N_PARENTS], scale = 1;
    CHECK_OK(rlvr_rl_group_advantages(adv, &informative, m->reward, NULL, N_PARENTS, RLVR_ADV_STD, 1e-6));
    CHECK_OK(rlvr_rl_group_scale(&scale, m->reward, NULL, N_PARENTS, RLVR_ADV_STD, 1e-6));
    CHECK(informative);
    int decisive = 0;
    for (int i = 0; i < N_PARENTS; i++) {
        const rlvr_rollout *r = &m->parents[i].record;
        float *ta = malloc((size_t)r->n_tokens * sizeof *ta);
        int nz = 0;
        CHECK_OK(rlvr_credit_token_advantages(ta, &nz, &m->forks, i, r, m->reward[i], adv[i], scale));
        double sum = 0;
        for (int32_t t = 0; t < r->n_turns; t++) {
            float a = ta[r->turns[t].policy_start];
            for (int32_t k = r->turns[t].policy_start; k < r->turns[t].policy_end; k++) CHECK(ta[k] == a);
            sum += a; /* every state is valued: one turn per segment */
            bool fix_turn = strcmp(r->turns[t].tool_name, "replace_in_file") == 0 && r->turns[t].exit_status == 0;
            if (fix_turn) {
                printf("parent %d: decisive turn %d  A_hat = %+.3f (x scale %.3f)\n", i, t, a, scale);
                CHECK(a > 0);
                decisive++;
            }
        }
        CHECK(fabs(sum - adv[i]) < 1e-4 * (1 + fabs(adv[i])));
        for (int32_t k = 0; k < r->n_tokens; k++)
            if (r->mask[k] != RLVR_TOKEN_POLICY) CHECK(ta[k] == 0.0f);
        free(ta);
    }
    CHECK(decisive > 0);
}

/* 4: fork tokens over trajectory tokens against the planner's prediction. */
static void check_cost(const mc_run *m, const coin *c) {
    int64_t fork_tokens = 0, parent_tokens = 0;
    for (int j = 0; j < m->forks.n_forks; j++) fork_tokens += rlvr_credit_fork_tokens(&m->forks.forks[j]);
    for (int i = 0; i < N_PARENTS; i++) parent_tokens += rlvr_rollout_policy_tokens(&m->parents[i].record);
    double measured = (double)fork_tokens / (double)parent_tokens, ratio = 0;
    rlvr_rl_mc_cost_expected(T, c->L, K, T - 1, &ratio); /* what rlvr plan prints: (base + mc) / base */
    double predicted = ratio - 1;
    printf("fork tokens / trajectory tokens: measured %.3f, rlvr plan %.3f (T = %d, L = %d, K = %d, %d points)\n",
           measured, predicted, T, (int)c->L, K, T - 1);
    CHECK(fabs(measured - predicted) <= 0.10 * predicted);
}

/* Forks the harness refuses: a prefix outside its parent, or one that
 * would capture states. */
static void check_refusals(const mc_run *m, const rlvr_task *task, const rlvr_model *model) {
    rlvr_harness_options opt;
    rlvr_harness_options_default(&opt);
    rlvr_sandbox_host *host = NULL;
    rlvr_sandbox_host_options ho = RLVR_SANDBOX_HOST_OPTIONS_INIT;
    CHECK_OK(rlvr_sandbox_host_new(&host, &ho));
    opt.host = host;
    rlvr_sampler *s = sampler_with(model, 1);
    const rlvr_rollout *parent = &m->parents[0].record;
    rlvr_harness_prefix bad[] = {
        {.record = parent, .turn = 0, .tokens = parent->prompt_tokens},                          /* before turn 1 */
        {.record = parent, .turn = 2, .tokens = parent->turns[2].policy_start + 1},              /* mid-turn */
        {.record = parent, .turn = parent->n_turns + 1, .tokens = parent->n_tokens},             /* past the end */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        rlvr_harness_job j = {.task = task, .step = 1, .prefix = &bad[i]};
        CHECK(rlvr_harness_run(s, tok, &opt, &j, 1) == RLVR_EINVAL);
        rlvr_harness_job_clear(&j);
    }
    rlvr_harness_prefix good = {.record = parent, .turn = 1, .tokens = parent->turns[1].policy_start};
    rlvr_harness_job j = {.task = task, .step = 1, .prefix = &good, .capture_tools = 1u << RLVR_TOOL_RUN};
    CHECK(rlvr_harness_run(s, tok, &opt, &j, 1) == RLVR_EINVAL);
    rlvr_harness_job_clear(&j);
    rlvr_sampler_free(s);
    rlvr_sandbox_host_free(host);
}

/* 5: the same forks with one sampler slot: identical records. */
static void check_same(const mc_run *a, const mc_run *b) {
    CHECK(a->forks.n_forks == b->forks.n_forks);
    for (int j = 0; j < a->forks.n_forks && j < b->forks.n_forks; j++) {
        const rlvr_rollout *x = &a->forks.forks[j].record, *y = &b->forks.forks[j].record;
        CHECK(x->n_tokens == y->n_tokens && memcmp(x->tokens, y->tokens, (size_t)x->n_tokens * sizeof *x->tokens) == 0);
        CHECK(a->forks.fork_reward[j] == b->forks.fork_reward[j]);
    }
    for (int bi = 0; bi < a->forks.n_branches && bi < b->forks.n_branches; bi++)
        CHECK(a->forks.branches[bi].value == b->forks.branches[bi].value);
}

int main(void) {
    dir = tmpdir_make("mc_credit");
    CHECK_OK(rlvr_tokenizer_new_byte(&tok));
    rlvr_task_pool *pool = pool_fixture(dir, 6, 1, 9);
    const rlvr_task *task = NULL;
    coin c;
    for (size_t i = 0; pool && !task && i < rlvr_task_pool_size(pool); i++)
        if (coin_init(&c, rlvr_task_pool_get(pool, i))) task = rlvr_task_pool_get(pool, i);
    CHECK(task != NULL);
    rlvr_sandbox_host *host = NULL;
    rlvr_sandbox_host_options ho = RLVR_SANDBOX_HOST_OPTIONS_INIT;
    CHECK_OK(rlvr_sandbox_host_new(&host, &ho));
    rlvr_model_config mc = {.vocab = 272, .d_model = 16, .n_layers = 1, .n_heads = 2, .n_kv_heads = 1,
                            .d_ff = 32, .max_seq = 4096, .rope_theta = 10000.0f, .norm_eps = 1e-5f,
                            .init_seed = 3, .init_std = 0.02f};
    rlvr_model *model = NULL;
    CHECK_OK(rlvr_model_new(&model, &mc));
    rlvr_verify_task *vt = NULL;
    rlvr_sandbox_limits lim;
    rlvr_sandbox_limits_default(&lim);
    if (task && host) CHECK_OK(rlvr_harness_verify_task_new(&vt, host, task, &lim, 1));
    if (task && host && model && vt) {
        mc_run a, b;
        run_mc(&a, task, &c, host, model, 8, vt);
        check_prefixes(&a);
        check_values(&a);
        check_advantages(&a);
        check_cost(&a, &c);
        check_refusals(&a, task, model);
        run_mc(&b, task, &c, host, model, 1, vt);
        check_same(&a, &b);
        mc_run_free(&a);
        mc_run_free(&b);
    }
    rlvr_verify_task_free(vt);
    rlvr_model_free(model);
    rlvr_sandbox_host_free(host);
    if (task) coin_free(&c);
    rlvr_task_pool_free(pool);
    rlvr_tokenizer_free(tok);
    rm_rf(dir);
    free(dir);
    return test_summary("test_mc_credit");
}
