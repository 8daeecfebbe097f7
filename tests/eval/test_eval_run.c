/* tests/eval/test_eval_run.c — rlvr_eval_run end to end on generated tasks
 * (4 arith, 2 bugfix-c, and a bugfix-c copy whose repository is gone).
 * With --arith: the arith tasks only, in process, without a sandbox host
 * (fast).
 *
 * 1. A scripted oracle plays a chosen number of correct samples per task
 *    (the reference answer / `patch -p1` of the reference patch, then
 *    submit) and wrong ones (a wrong answer / patch), the last wrong sample
 *    of a bugfix-c task after one malformed call. Expected: c per task as
 *    chosen, n = samples, the broken task all infra and excluded, tool-call
 *    compliance 16/18 for bugfix-c, and one enclave verification per
 *    distinct patch of a task (the rest are cache hits).
 * 2. A random-weights model: nothing passes; the per-task counts, tokens
 *    and verifications are the same with 8 rollouts at once in batches of
 *    two tasks as with 3 at once in batches of one task. */
#include "envs/gen.h"
#include "eval/eval.h"
#include "../envs/envs_test.h"
#include "test.h"

#include <jansson.h>

enum { SAMPLES = 4 };

static char *dir;
static bool arith_only;
static rlvr_tokenizer *tok;

typedef struct {
    const rlvr_eval_task *tasks;
    size_t n;
    int32_t target[16]; /* correct samples wanted per task */
} oracle;

static size_t task_pos(const oracle *o, const char *id) {
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->tasks[i].task->id, id) == 0) return i;
    return 0;
}

static int reply(rlvr_token_buf *out, const rlvr_tokenizer *t, const char *text, json_t *call) {
    char *c = call ? json_dumps(call, JSON_COMPACT) : NULL;
    json_decref(call);
    int rc = rlvr_template_assistant_reply(out, t, text, strlen(text), c, c ? strlen(c) : 0);
    free(c);
    return rc;
}

static json_t *patch_call(const char *patch) {
    size_t need = strlen(patch) + 64;
    char *cmd = malloc(need);
    snprintf(cmd, need, "patch -p1 -s <<'RLVR_EOF'\n%sRLVR_EOF\n", patch);
    json_t *c = json_pack("{s:s, s:{s:s}}", "name", "run", "arguments", "command", cmd);
    free(cmd);
    return c;
}

static int play(void *arg, const rlvr_rollout *so_far, int32_t turn, const rlvr_tokenizer *t, rlvr_token_buf *out) {
    const oracle *o = arg;
    size_t pos = task_pos(o, so_far->task_id);
    const rlvr_task *task = o->tasks[pos].task;
    int32_t j = (int32_t)(so_far->sample_sequence - o->tasks[pos].index * SAMPLES);
    bool good = j < o->target[pos];
    if (task->verifier == RLVR_VERIFIER_ARITH)
        return reply(out, t, good ? task->reference_answer : task->wrong_answers.items[0], NULL);
    bool malformed = j == SAMPLES - 1 && !good;
    if (malformed && turn == 0) return reply(out, t, "Let me look.", json_pack("{s:s}", "name", "read_file"));
    int32_t step = turn - malformed;
    if (step == 0) return reply(out, t, "Fixing.", patch_call(good ? task->reference_patch : task->wrong_patches.items[0]));
    return reply(out, t, "Done.", json_pack("{s:s}", "name", "submit"));
}

static rlvr_task_pool *make_pool(void) {
    char pool_dir[4096];
    snprintf(pool_dir, sizeof pool_dir, "%s/pool", dir);
    rlvr_task_gen_options o = RLVR_TASK_GEN_OPTIONS_INIT;
    o.split = RLVR_SPLIT_EVAL;
    o.family = "arith";
    o.count = 4;
    o.seed = 3;
    CHECK_OK(rlvr_task_gen(&o, pool_dir, NULL));
    o.family = arith_only ? "arith" : "bugfix-c";
    o.count = arith_only ? 0 : 2;
    if (o.count) CHECK_OK(rlvr_task_gen(&o, pool_dir, NULL));
    o.split = RLVR_SPLIT_TRAIN;
    o.count = 1;
    o.first = 5;
    CHECK_OK(rlvr_task_gen(&o, pool_dir, NULL));
    rlvr_task_pool *pool = NULL;
    CHECK_OK(rlvr_task_pool_load(&pool, pool_dir));
    return pool;
}

/* A bugfix-c task whose repository does not exist: every workspace fails. */
static rlvr_task *broken_copy(const rlvr_task *t) {
    char *json = NULL;
    rlvr_task *c = NULL;
    CHECK_OK(rlvr_task_to_json(t, 0, &json));
    if (json) CHECK_OK(rlvr_task_parse(&c, json, strlen(json), "copy", t->base_dir));
    free(json);
    if (!c) return NULL;
    free(c->id);
    c->id = strdup("broken-repo");
    free(c->repository_path);
    c->repository_path = strdup("/nonexistent/rlvr-eval-test-repo");
    return c;
}

static void base_options(rlvr_eval_options *o, rlvr_sandbox_host *host) {
    rlvr_eval_options_default(o);
    o->samples = SAMPLES;
    o->sampler.seed = 17;
    o->sampler.kv_slots = 8;
    o->harness.host = host;
    o->harness.budgets = (rlvr_task_budgets){.turns = 3, .policy_tokens = 1500, .context_tokens = 4096,
                                             .tool_timeout_s = 10};
    o->consensus_runs = 1;
    o->verify_threads = 2;
    o->resamples = 500;
}

static void test_select(const rlvr_task_pool *pool) {
    rlvr_eval_task *t = NULL;
    size_t n = 0;
    rlvr_split eval = RLVR_SPLIT_EVAL, reg = RLVR_SPLIT_REGRESSION;
    CHECK_OK(rlvr_eval_tasks_from_pool(&t, &n, pool, NULL, &eval, 0));
    CHECK(n == (arith_only ? 4u : 6u));
    for (size_t i = 0; t && i < n; i++) {
        CHECK(t[i].task == rlvr_task_pool_get(pool, t[i].index) && t[i].task->split == RLVR_SPLIT_EVAL);
        CHECK(i == 0 || t[i].index > t[i - 1].index);
    }
    free(t);
    CHECK_OK(rlvr_eval_tasks_from_pool(&t, &n, pool, NULL, NULL, 3));
    CHECK(n == 3 && t && t[2].index == 2);
    free(t);
    CHECK(rlvr_eval_tasks_from_pool(&t, &n, pool, NULL, &reg, 0) == RLVR_EINVAL && !t);
}

/* The eval tasks of the pool (arith first: the pool is in file-name order)
 * plus the broken copy. */
static size_t eval_tasks(const rlvr_task_pool *pool, rlvr_task *broken, rlvr_eval_task *out) {
    rlvr_eval_task *t = NULL;
    size_t n = 0;
    rlvr_split eval = RLVR_SPLIT_EVAL;
    CHECK_OK(rlvr_eval_tasks_from_pool(&t, &n, pool, NULL, &eval, 0));
    memcpy(out, t, n * sizeof *t);
    free(t);
    if (broken) out[n++] = (rlvr_eval_task){.task = broken, .index = 1000};
    return n;
}

/* Task 0 wants 3 correct samples, task 1 none: compliance 16/18; the
 * reference and a wrong patch verified for task 0, one wrong patch for
 * task 1, the other 5 rollouts from the cache. */
static void check_bugfix(const rlvr_eval_result *r) {
    const rlvr_eval_group *bug = rlvr_eval_result_group(r, "bugfix-c"), *all = rlvr_eval_result_group(r, "all");
    CHECK(bug && all);
    if (!bug || !all) return;
    CHECK(all->infra == SAMPLES);
    CHECK_NEAR(bug->pass_at[0].value, (0.75 + 0) / 2, 1e-12);
    CHECK(bug->calls == 18 && bug->calls_parsed == 16);
    CHECK_NEAR(bug->compliance, 16.0 / 18, 1e-12);
    CHECK_MSG(r->stats.verifications == 3 && r->stats.verify_cache_hits == 5, "verifications %lld, hits %lld",
              (long long)r->stats.verifications, (long long)r->stats.verify_cache_hits);
}

static void test_oracle(const rlvr_eval_task *tasks, size_t n, const rlvr_model *m, rlvr_sandbox_host *host) {
    oracle o = {.tasks = tasks, .n = n};
    int32_t arith_target[4] = {0, 1, 2, 4}, bug_target[2] = {3, 0};
    int a = 0, b = 0, want_c = 0;
    for (size_t i = 0; i < n; i++) {
        if (tasks[i].task == NULL || strcmp(tasks[i].task->id, "broken-repo") == 0) continue;
        o.target[i] = tasks[i].task->verifier == RLVR_VERIFIER_ARITH ? arith_target[a++ % 4] : bug_target[b++ % 2];
        want_c += o.target[i];
    }
    CHECK(a == 4 && b == (arith_only ? 0 : 2));
    rlvr_eval_options opt;
    base_options(&opt, host);
    opt.script = play;
    opt.script_arg = &o;
    rlvr_eval_result *r = NULL;
    CHECK_OK(rlvr_eval_run(&r, m, tok, tasks, n, &opt));
    if (!r) return;
    for (size_t i = 0; i < n; i++) {
        const rlvr_eval_task_result *t = &r->tasks[i];
        CHECK(strcmp(t->id, tasks[i].task->id) == 0 && t->index == tasks[i].index);
        if (strcmp(t->id, "broken-repo") == 0) {
            CHECK_MSG(t->n == 0 && t->infra == SAMPLES, "broken: n %d infra %d", t->n, t->infra);
            continue;
        }
        CHECK_MSG(t->n == SAMPLES && t->c == o.target[i] && t->infra == 0 && t->truncated == 0,
                  "%s: n %d c %d (want %d) infra %d truncated %d", t->id, t->n, t->c, o.target[i], t->infra,
                  t->truncated);
    }
    const rlvr_eval_group *all = rlvr_eval_result_group(r, "all"), *ar = rlvr_eval_result_group(r, "arith");
    CHECK(all && ar && ar->calls == 0 && r->n_groups == (arith_only ? 2u : 3u));
    if (ar) CHECK_NEAR(ar->pass_at[0].value, (0 + 0.25 + 0.5 + 1) / 4, 1e-12);
    if (all) CHECK(all->successes == want_c && all->n_tasks == a + b && all->excluded == !arith_only);
    if (arith_only) CHECK(r->stats.verifications == 0 && r->stats.verify_cache_hits == 0);
    else check_bugfix(r);
    CHECK(r->stats.rollouts == (int64_t)n * SAMPLES);
    printf("oracle: generate %.2f s, verify %.2f s, wall %.2f s\n", r->stats.generate_s, r->stats.verify_s,
           r->stats.wall_s);
    rlvr_eval_result_free(r);
}

static rlvr_eval_result *sampled(const rlvr_eval_task *tasks, size_t n, const rlvr_model *m,
                                 rlvr_sandbox_host *host, int32_t kv_slots, int32_t batch) {
    rlvr_eval_options opt;
    base_options(&opt, host);
    opt.sampler.kv_slots = kv_slots;
    opt.batch_rollouts = batch;
    opt.harness.budgets.turns = 2;
    opt.harness.budgets.policy_tokens = 256;
    rlvr_eval_result *r = NULL;
    CHECK_OK(rlvr_eval_run(&r, m, tok, tasks, n, &opt));
    return r;
}

static void test_model(const rlvr_eval_task *tasks, size_t n, const rlvr_model *m, rlvr_sandbox_host *host) {
    rlvr_eval_result *a = sampled(tasks, n, m, host, 8, 8), *b = sampled(tasks, n, m, NULL, 3, 1);
    if (!a || !b) return;
    int64_t tokens = 0;
    for (size_t i = 0; i < n; i++) {
        const rlvr_eval_task_result *x = &a->tasks[i], *y = &b->tasks[i];
        CHECK(x->c == 0);
        CHECK_MSG(x->n == y->n && x->c == y->c && x->infra == y->infra && x->truncated == y->truncated &&
                      x->calls == y->calls && x->calls_parsed == y->calls_parsed &&
                      x->policy_tokens == y->policy_tokens,
                  "%s: n %d/%d truncated %d/%d tokens %lld/%lld", x->id, x->n, y->n, x->truncated, y->truncated,
                  (long long)x->policy_tokens, (long long)y->policy_tokens);
        tokens += x->policy_tokens;
    }
    CHECK(tokens > 0);
    printf("random model: %lld policy tokens, %lld verifications, %lld cache hits, generate %.2f s, verify %.2f s\n",
           (long long)tokens, (long long)a->stats.verifications, (long long)a->stats.verify_cache_hits,
           a->stats.generate_s, a->stats.verify_s);
    CHECK(a->stats.verifications == b->stats.verifications && a->stats.verify_cache_hits == b->stats.verify_cache_hits);
    CHECK(a->stats.verifications <= (arith_only ? 0 : 2)); /* random text edits nothing: one empty patch per task */
    const rlvr_eval_group *all = rlvr_eval_result_group(a, "all");
    CHECK(all && all->successes == 0 && all->pass_at[0].value == 0 && all->compliance >= 0 && all->compliance <= 1);
    rlvr_eval_result_free(a);
    rlvr_eval_result_free(b);
}

int main(int argc, char **argv) {
    arith_only = argc > 1 && strcmp(argv[1], "--arith") == 0;
    dir = tmpdir_make("eval_run");
    CHECK_OK(rlvr_tokenizer_new_byte(&tok));
    rlvr_sandbox_host *host = NULL;
    rlvr_sandbox_host_options ho = RLVR_SANDBOX_HOST_OPTIONS_INIT;
    if (!arith_only) CHECK_OK(rlvr_sandbox_host_new(&host, &ho));
    rlvr_task_pool *pool = make_pool();
    rlvr_model_config cfg = {.vocab = rlvr_tokenizer_vocab_size(tok), .d_model = 32, .n_layers = 2, .n_heads = 2,
                             .n_kv_heads = 1, .d_ff = 64, .max_seq = 4096, .rope_theta = 10000.0f, .norm_eps = 1e-5f,
                             .init_seed = 5, .init_std = 0.02f};
    rlvr_model *m = NULL;
    CHECK_OK(rlvr_model_new(&m, &cfg));
    if (pool && (host || arith_only) && m) {
        test_select(pool);
        rlvr_eval_task tasks[16];
        const rlvr_task *bug = NULL;
        for (size_t i = 0; i < rlvr_task_pool_size(pool); i++)
            if (rlvr_task_pool_get(pool, i)->verifier == RLVR_VERIFIER_TESTS) bug = rlvr_task_pool_get(pool, i);
        rlvr_task *broken = bug ? broken_copy(bug) : NULL;
        size_t n = eval_tasks(pool, broken, tasks);
        test_oracle(tasks, n, m, host);
        test_model(tasks, n, m, host);
        rlvr_task_free(broken);
    }
    rlvr_model_free(m);
    rlvr_task_pool_free(pool);
    rlvr_sandbox_host_free(host);
    rlvr_tokenizer_free(tok);
    rm_rf(dir);
    free(dir);
    return test_summary(arith_only ? "test_eval_run --arith" : "test_eval_run");
}
