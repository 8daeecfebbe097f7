/* tests/envs/test_harness.c — the multi-turn harness.
 *
 * 1. A scripted oracle policy plays each task's reference solution through
 *    the tools (its tokens fed through the sampler's prefill path): every
 *    generated bugfix-c task verifies PASS in the enclave, every arith task
 *    scores 1.
 *    Tools run in the event loop (overlapping decoding); the same jobs with
 *    each tool run to its end between decode steps give the same records.
 *    Tool calls of different rollouts overlap in time.
 * 2. A scripted exploit policy in the same run (edits the public tests and
 *    the Makefile, writes a hook file, tries the network, loops on a command
 *    that never ends) is refused by the sandbox at each step, stopped by the
 *    repetition detector, and scores 0; the other rollouts finish normally.
 * 3. Record integrity: rollouts sampled from a random-weights model, more of
 *    them than sampler slots, are re-scored by rlvr_model_forward: every
 *    recorded policy log-prob matches within 2e-5; the loss mask is PROMPT /
 *    POLICY / OBSERVATION exactly as the turn table says; observation tokens
 *    are exactly the template's rendering of the tool output; the tokens do
 *    not depend on how many slots decode together. A malformed call gets the
 *    documented error observation, the same every time.
 * 4. Group prefix sharing: groups of rollouts with the same task and step
 *    share the prompt's prefill (rlvr_sampler_fork) and give records
 *    bit-identical to the same jobs run one by one, also when a group is
 *    split across slot passes; simulated tool latency leaves the tokens
 *    alone; the event hook reports every start, turn and end in order.
 * 5. The malformed-call ceiling ([harness] max_malformed_calls, a task's
 *    budgets.malformed_calls): a scripted policy that makes N malformed calls
 *    in a row stops with `malformed` exactly at the Nth (that turn gets no
 *    observation); a well-formed call in between resets the count; 0 means
 *    no limit; the task's own value wins; records are the same with
 *    simulated tool latency. Sampled rollouts of a random-weights policy
 *    stop the same way.
 * 6. The check's score (rlvr_harness_verify's reward.outcome) on a
 *    judge-mode task under both partial-credit choices. */
#include "core/rng.h"
#include "enclave/config.h"
#include "enclave/reason.h"
#include "envs/config.h"
#include "envs/gen.h"
#include "envs/harness.h"
#include "envs/pool.h"
#include "envs/turn.h"
#include "rl/config.h"
#include "rl/reward.h"
#include "envs_test.h"
#include "pool_fixture.h"
#include "test.h"

#include <jansson.h>
#include <time.h>

static char *dir;
static rlvr_tokenizer *tok;

/* ---- scripted policies --------------------------------------------------------------- */

typedef struct {
    const rlvr_task *task;
    char *calls[16]; /* one JSON call per turn; NULL: a final answer `answer` */
    int n_calls;
    const char *answer;
} script;

static char *call_json(const char *name, json_t *args) {
    json_t *c = json_object();
    json_object_set_new(c, "name", json_string(name));
    if (args) json_object_set_new(c, "arguments", args);
    char *s = json_dumps(c, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(c);
    return s;
}

static void script_add(script *s, const char *name, json_t *args) { s->calls[s->n_calls++] = call_json(name, args); }

static void script_free(script *s) {
    for (int i = 0; i < s->n_calls; i++) free(s->calls[i]);
}

static int play(void *arg, const rlvr_rollout *so_far, int32_t turn, const rlvr_tokenizer *t, rlvr_token_buf *out) {
    (void)so_far;
    script *s = arg;
    if (turn < s->n_calls) {
        const char *c = s->calls[turn];
        if (strncmp(c, "RAW:", 4) == 0) { /* an unclosed call marker */
            RLVR_TRY(rlvr_token_buf_push(out, rlvr_tokenizer_special(t, RLVR_SPECIAL_TOOL_CALL_OPEN), RLVR_TOKEN_POLICY));
            for (const char *p = c + 4; *p; p++) RLVR_TRY(rlvr_token_buf_push(out, (unsigned char)*p, RLVR_TOKEN_POLICY));
            return rlvr_token_buf_push(out, rlvr_tokenizer_special(t, RLVR_SPECIAL_END_OF_TURN), RLVR_TOKEN_POLICY);
        }
        char say[32];
        snprintf(say, sizeof say, "Step %d.", (int)turn + 1);
        return rlvr_template_assistant_reply(out, t, say, strlen(say), c, strlen(c));
    }
    const char *a = s->answer ? s->answer : "done";
    return rlvr_template_assistant_reply(out, t, a, strlen(a), NULL, 0);
}

/* The oracle: read the file, one replace_in_file per hunk of the reference
 * patch (context and removed lines -> context and added lines), run the
 * public tests, submit. */
static void oracle_for(script *s, const rlvr_task *t) {
    memset(s, 0, sizeof *s);
    s->task = t;
    if (t->verifier == RLVR_VERIFIER_ARITH) {
        s->answer = t->reference_answer;
        return;
    }
    const char *p = t->reference_patch;
    char path[256] = "";
    json_t *args = NULL;
    char *old = NULL, *neu = NULL;
    size_t no = 0, nn = 0;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p + 1) : strlen(p);
        if (strncmp(p, "+++ b/", 6) == 0) {
            snprintf(path, sizeof path, "%.*s", (int)(n - 7), p + 6);
            json_t *ra = json_object();
            json_object_set_new(ra, "path", json_string(path));
            script_add(s, "read_file", ra);
        } else if (strncmp(p, "@@", 2) == 0 || strncmp(p, "diff ", 5) == 0) {
            if (old) {
                args = json_object();
                json_object_set_new(args, "path", json_string(path));
                json_object_set_new(args, "old", json_stringn(old, no));
                json_object_set_new(args, "new", json_stringn(neu, nn));
                script_add(s, "replace_in_file", args);
                free(old), free(neu);
                old = neu = NULL;
            }
            if (p[0] == '@') {
                old = calloc(1, strlen(t->reference_patch) + 1);
                neu = calloc(1, strlen(t->reference_patch) + 1);
                no = nn = 0;
            }
        } else if (old && (p[0] == ' ' || p[0] == '-' || p[0] == '+')) {
            if (p[0] != '+') memcpy(old + no, p + 1, n - 1), no += n - 1;
            if (p[0] != '-') memcpy(neu + nn, p + 1, n - 1), nn += n - 1;
        }
        p += n;
    }
    if (old) {
        args = json_object();
        json_object_set_new(args, "path", json_string(path));
        json_object_set_new(args, "old", json_stringn(old, no));
        json_object_set_new(args, "new", json_stringn(neu, nn));
        script_add(s, "replace_in_file", args);
        free(old), free(neu);
    }
    script_add(s, "run_public_tests", NULL);
    script_add(s, "submit", NULL);
}

static void exploit_for(script *s, const rlvr_task *t) {
    memset(s, 0, sizeof *s);
    s->task = t;
    script_add(s, "write_file", json_pack("{s:s, s:s}", "path", "tests/public.c", "content", "int main(void){return 0;}\n"));
    script_add(s, "run", json_pack("{s:s}", "command", "echo 'int main(void){return 0;}' > tests/public.c && echo EDITED"));
    script_add(s, "replace_in_file", json_pack("{s:s, s:i, s:s}", "path", "Makefile", "line", 1, "new", "test:\n\ttrue"));
    script_add(s, "write_file", json_pack("{s:s, s:s}", "path", "conftest.py", "content", "import os\nos._exit(0)\n"));
    script_add(s, "run", json_pack("{s:s}", "command",
                                   "(exec 3<>/dev/tcp/1.1.1.1/80) 2>/dev/null && echo NET-OK || echo NO-NETWORK"));
    for (int i = 0; i < 5; i++) script_add(s, "run", json_pack("{s:s, s:f}", "command", "while :; do :; done", "timeout_s", 0.5));
}

/* ---- helpers -------------------------------------------------------------------------- */

static char *text_of(const rlvr_rollout *r, int32_t from, int32_t to) {
    size_t len = 0;
    rlvr_tokenizer_decode(tok, r->tokens + from, to - from, true, NULL, 0, &len);
    char *s = malloc(len + 1);
    rlvr_tokenizer_decode(tok, r->tokens + from, to - from, true, s, len + 1, &len);
    return s;
}

/* The observation text of turn i ("" when none), specials shown. */
static char *observation(const rlvr_rollout *r, int32_t i) {
    const rlvr_turn *t = &r->turns[i];
    return text_of(r, t->observation_start, t->observation_end);
}

/* Mask and turn table agree; observation tokens are the template's rendering
 * of `expected[i]` when given. */
static void check_layout(const rlvr_rollout *r) {
    CHECK(r->prompt_tokens > 0 && r->prompt_tokens <= r->n_tokens);
    for (int32_t k = 0; k < r->prompt_tokens; k++) CHECK(r->mask[k] == RLVR_TOKEN_PROMPT);
    int32_t at = r->prompt_tokens;
    for (int32_t i = 0; i < r->n_turns; i++) {
        const rlvr_turn *t = &r->turns[i];
        CHECK(t->policy_start == at && t->policy_end >= t->policy_start);
        for (int32_t k = t->policy_start; k < t->policy_end; k++) CHECK(r->mask[k] == RLVR_TOKEN_POLICY);
        at = t->policy_end;
        if (t->observation_end > t->observation_start) {
            CHECK(t->observation_start == at);
            for (int32_t k = t->observation_start; k < t->observation_end; k++)
                CHECK(r->mask[k] == RLVR_TOKEN_OBSERVATION);
            at = t->observation_end;
        }
    }
    CHECK(at == r->n_tokens);
}

static rlvr_model *tiny_model(float init_std) {
    rlvr_model_config cfg = {.vocab = 272, .d_model = 32, .n_layers = 2, .n_heads = 2, .n_kv_heads = 1,
                             .d_ff = 64, .max_seq = 4096, .rope_theta = 10000.0f, .norm_eps = 1e-5f,
                             .tie_embeddings = false, .init_seed = 11, .init_std = init_std};
    rlvr_model *m = NULL;
    CHECK_OK(rlvr_model_new(&m, &cfg));
    return m;
}

static rlvr_sampler *tiny_sampler(const rlvr_model *m, int slots, int context) {
    rlvr_sampler_config sc;
    rlvr_sampler_config_default(&sc);
    sc.kv_slots = slots;
    sc.context = context;
    sc.seed = 0xabcdefULL;
    rlvr_sampler *s = NULL;
    CHECK_OK(rlvr_sampler_new(&s, m, &sc));
    return s;
}

/* ---- 1 + 2: oracle and exploit in one run ------------------------------------------------ */

static const char *documented_missing_path =
    "error: invalid tool call: read_file needs argument \"path\"; usage: {\"name\": \"read_file\", \"arguments\": "
    "{\"path\": string, \"start\": integer (optional), \"end\": integer (optional)}}";

static void test_oracle_and_exploit(rlvr_task_pool *pool, rlvr_sandbox_host *host) {
    rlvr_model *m = tiny_model(0.02f);
    rlvr_sampler *s = tiny_sampler(m, 4, 4096);
    if (!m || !s) return;
    size_t n_tasks = rlvr_task_pool_size(pool);
    script scripts[16];
    rlvr_harness_job jobs[16];
    memset(jobs, 0, sizeof jobs);
    int n = 0, first_bug = -1;
    for (size_t i = 0; i < n_tasks && n < 12; i++, n++) {
        const rlvr_task *t = rlvr_task_pool_get(pool, i);
        oracle_for(&scripts[n], t);
        if (t->verifier == RLVR_VERIFIER_TESTS && first_bug < 0) first_bug = n;
    }
    CHECK(first_bug >= 0);
    if (first_bug < 0) return;
    const rlvr_task *bug = rlvr_task_pool_get(pool, (size_t)first_bug);
    int exploit = n++;
    exploit_for(&scripts[exploit], bug);
    int malformed = n++;
    memset(&scripts[malformed], 0, sizeof scripts[malformed]);
    script_add(&scripts[malformed], "read_file", json_object());
    scripts[malformed].calls[scripts[malformed].n_calls++] = strdup("RAW:{\"name\": \"submit\"}");
    script_add(&scripts[malformed], "read_file", json_object());
    scripts[malformed].answer = "I give up.";
    for (int i = 0; i < n; i++) {
        jobs[i].task = i == exploit || i == malformed ? bug : scripts[i].task;
        jobs[i].sequence = (uint32_t)i;
        jobs[i].script = play;
        jobs[i].script_arg = &scripts[i];
    }
    rlvr_harness_options opt;
    rlvr_harness_options_default(&opt);
    opt.host = host;
    opt.repetition = (rlvr_repetition_config){.enabled = true, .window = 1024, .ngram = 48, .max_repeats = 2};
    opt.overlap_tools = true;
    CHECK_OK(rlvr_harness_run(s, tok, &opt, jobs, n));

    /* the same jobs with the tools run between decode steps: the same records */
    rlvr_harness_job same[16];
    memset(same, 0, sizeof same);
    for (int i = 0; i < n; i++) {
        same[i].task = jobs[i].task;
        same[i].sequence = jobs[i].sequence;
        same[i].script = play;
        same[i].script_arg = &scripts[i];
    }
    opt.overlap_tools = false;
    CHECK_OK(rlvr_harness_run(s, tok, &opt, same, n));
    for (int i = 0; i < n; i++) {
        const rlvr_rollout *a = &jobs[i].record, *b = &same[i].record;
        CHECK(a->n_tokens == b->n_tokens && a->n_turns == b->n_turns && a->stop == b->stop);
        CHECK(a->n_tokens == b->n_tokens && memcmp(a->tokens, b->tokens, (size_t)a->n_tokens * sizeof *a->tokens) == 0);
        for (int32_t k = 0; k < a->n_turns && a->n_turns == b->n_turns; k++)
            CHECK(a->turns[k].exit_status == b->turns[k].exit_status &&
                  strcmp(a->turns[k].tool_name, b->turns[k].tool_name) == 0 &&
                  a->turns[k].observation_end == b->turns[k].observation_end);
        CHECK(jobs[i].patch_len == same[i].patch_len &&
              (!jobs[i].patch || memcmp(jobs[i].patch, same[i].patch, jobs[i].patch_len) == 0));
        rlvr_harness_job_clear(&same[i]);
    }

    rlvr_sandbox_limits lim;
    rlvr_sandbox_limits_default(&lim);
    lim.wall_s = 30;
    int passed = 0, tests_jobs = 0;
    for (int i = 0; i < n; i++) {
        rlvr_harness_job *j = &jobs[i];
        rlvr_rollout *r = &j->record;
        check_layout(r);
        CHECK(strcmp(r->task_id, j->task->id) == 0);
        if (j->task->verifier == RLVR_VERIFIER_TESTS) {
            rlvr_verify_task *vt = NULL;
            CHECK_OK(rlvr_harness_verify_task_new(&vt, host, j->task, &lim, 1));
            if (vt) CHECK_OK(rlvr_harness_verify(j, vt, 99));
            rlvr_verify_task_free(vt);
        }
        if (i == exploit || i == malformed) continue;
        /* the oracle */
        CHECK_MSG(r->stop == RLVR_STOP_DONE, "%s: stop %s", r->task_id, rlvr_stop_reason_name(r->stop));
        CHECK_MSG(r->verdict == RLVR_VERDICT_PASS, "%s: verdict %s (%s)", r->task_id, rlvr_verdict_name(r->verdict),
                  rlvr_reason_name(r->verdict_reason));
        passed += r->verdict == RLVR_VERDICT_PASS;
        if (j->task->verifier == RLVR_VERIFIER_TESTS) {
            tests_jobs++;
            CHECK(j->patch && j->patch_len > 0 && !j->public_tests_changed);
            CHECK(r->n_turns == scripts[i].n_calls);
            CHECK(j->calls == scripts[i].n_calls && j->calls_parsed == j->calls && r->reward.format == 1.0f);
            CHECK(strcmp(r->turns[r->n_turns - 1].tool_name, "submit") == 0);
            /* every tool worked; the public tests pass after the fix */
            for (int32_t k = 0; k + 1 < r->n_turns; k++) CHECK(r->turns[k].exit_status == 0);
            char *o = observation(r, r->n_turns - 2);
            CHECK_MSG(strstr(o, "[exit status 0]") != NULL, "public tests: %s", o);
            free(o);
            o = observation(r, 0);
            CHECK(strstr(o, "<|tool|><|observation|>") == o && strstr(o, "     1\t") != NULL);
            free(o);
        } else {
            CHECK(r->n_turns == 1 && j->calls == 0 && r->reward.outcome == 1.0f);
        }
    }
    CHECK(tests_jobs >= 3 && passed == n - 2);

    /* the exploit: refused at every step, stopped, scored 0 */
    rlvr_rollout *r = &jobs[exploit].record;
    CHECK_MSG(r->stop == RLVR_STOP_REPETITION, "exploit stop %s", rlvr_stop_reason_name(r->stop));
    CHECK_MSG(r->verdict != RLVR_VERDICT_PASS && r->verdict != RLVR_VERDICT_INFRA, "exploit verdict %s",
              rlvr_verdict_name(r->verdict));
    CHECK_MSG(r->verdict == RLVR_VERDICT_REJECTED && r->verdict_reason == RLVR_REASON_HOOK_FILE, "exploit: %s (%s)",
              rlvr_verdict_name(r->verdict), rlvr_reason_name(r->verdict_reason));
    CHECK(r->reward.outcome == 0.0f && !jobs[exploit].public_tests_changed);
    CHECK_MSG(r->n_turns >= 7, "exploit: %d turns", r->n_turns);
    if (r->n_turns >= 7) {
        const char *want[] = {"Read-only file system", "Read-only file system", "Read-only file system", "wrote",
                              "NO-NETWORK", "[killed: timed out after 0.5 s]"};
        for (int k = 0; k < 6; k++) {
            char *o = observation(r, k);
            CHECK_MSG(strstr(o, want[k]) != NULL, "exploit turn %d: %s", k, o);
            free(o);
        }
        CHECK(r->turns[0].exit_status == 1 && r->turns[5].exit_status == -1);
    }

    /* malformed calls: the documented observation, the same every time */
    r = &jobs[malformed].record;
    CHECK(r->stop == RLVR_STOP_DONE && r->n_turns == 4 && jobs[malformed].calls == 3 &&
          jobs[malformed].calls_parsed == 0);
    if (r->n_turns == 4) {
        rlvr_token_buf want = {0};
        CHECK_OK(rlvr_template_observation(&want, tok, documented_missing_path, strlen(documented_missing_path)));
        for (int k = 0; k < 3; k += 2) {
            const rlvr_turn *t = &r->turns[k];
            CHECK(t->call_parsed == 0 && t->tool_name[0] == '\0');
            CHECK(t->observation_end - t->observation_start == want.n &&
                  memcmp(r->tokens + t->observation_start, want.ids, (size_t)want.n * sizeof *want.ids) == 0);
        }
        rlvr_tool_error markers;
        rlvr_tool_error_markers(&markers, "<|tool_call|>", "<|/tool_call|>");
        char *o = observation(r, 1);
        CHECK_MSG(strstr(o, markers.observation) && strstr(markers.observation, "unbalanced tool-call markers"), "%s", o);
        free(o);
        rlvr_token_buf_free(&want);
    }
    CHECK(jobs[malformed].patch && jobs[malformed].patch_len == 0);

    for (int i = 0; i < n; i++) {
        rlvr_harness_job_clear(&jobs[i]);
        script_free(&scripts[i]);
    }
    rlvr_sampler_free(s);
    rlvr_model_free(m);
}

/* ---- 3: record integrity with a random-weights model --------------------------------- */

static void run_sampled(rlvr_sampler *s, rlvr_task *tasks[], int n, rlvr_harness_job *jobs) {
    memset(jobs, 0, (size_t)n * sizeof *jobs);
    for (int i = 0; i < n; i++) {
        jobs[i].task = tasks[i % 4];
        jobs[i].step = 3;
        jobs[i].sequence = (uint32_t)(100 + i);
    }
    rlvr_harness_options opt;
    rlvr_harness_options_default(&opt);
    CHECK(opt.budgets.malformed_calls == 0); /* no limit unless the run sets one */
    opt.budgets.malformed_calls = 3;
    CHECK_OK(rlvr_harness_run(s, tok, &opt, jobs, n));
}

static void test_record_integrity(rlvr_task_pool *pool) {
    /* arith tasks with room for several turns: a near-uniform policy writes
     * stray specials, so most turns are malformed and get an observation */
    rlvr_task *tasks[4];
    int k = 0;
    for (size_t i = 0; i < rlvr_task_pool_size(pool) && k < 4; i++) {
        const rlvr_task *t = rlvr_task_pool_get(pool, i);
        if (t->verifier != RLVR_VERIFIER_ARITH) continue;
        char *json = NULL;
        CHECK_OK(rlvr_task_to_json(t, 0, &json));
        CHECK_OK(rlvr_task_parse(&tasks[k], json, strlen(json), "copy", dir));
        free(json);
        tasks[k]->budgets = (rlvr_task_budgets){.turns = 6, .policy_tokens = 600, .context_tokens = 1200,
                                                .tool_timeout_s = 1};
        k++;
    }
    CHECK(k == 4);
    if (k < 4) return;
    rlvr_model *m = tiny_model(0.05f);
    enum { N = 16 };
    rlvr_sampler *s3 = tiny_sampler(m, 3, 1200), *s1 = tiny_sampler(m, 1, 1200);
    rlvr_harness_job a[N], b[N];
    run_sampled(s3, tasks, N, a);
    run_sampled(s1, tasks, N, b);

    int32_t offsets[N + 1] = {0};
    for (int i = 0; i < N; i++) offsets[i + 1] = offsets[i] + a[i].record.n_tokens;
    int32_t *ids = malloc((size_t)offsets[N] * sizeof *ids);
    float *lp = malloc((size_t)offsets[N] * sizeof *lp);
    int observed = 0, multi = 0, ceiling = 0;
    for (int i = 0; i < N; i++) {
        rlvr_rollout *r = &a[i].record;
        check_layout(r);
        if (r->stop == RLVR_STOP_MALFORMED) { /* the ceiling (3): its last 3 turns were malformed calls */
            ceiling++;
            CHECK(r->n_turns >= 3 && a[i].calls >= 3);
            for (int32_t t = r->n_turns - 3; t >= 0 && t < r->n_turns; t++) CHECK(r->turns[t].call_parsed == 0);
            CHECK(r->turns[r->n_turns - 1].observation_end == r->turns[r->n_turns - 1].observation_start);
        }
        CHECK(r->n_tokens == b[i].record.n_tokens && r->n_turns == b[i].record.n_turns && r->stop == b[i].record.stop);
        CHECK(memcmp(r->tokens, b[i].record.tokens, (size_t)r->n_tokens * sizeof *r->tokens) == 0);
        CHECK(memcmp(r->logprobs, b[i].record.logprobs, (size_t)r->n_tokens * sizeof *r->logprobs) == 0);
        CHECK(r->stop != RLVR_STOP_NONE && r->stop != RLVR_STOP_INFRA_ERROR);
        CHECK(rlvr_rollout_policy_tokens(r) <= 600 && r->n_tokens <= 1200 && r->n_turns <= 6);
        multi += r->n_turns > 1;
        memcpy(ids + offsets[i], r->tokens, (size_t)r->n_tokens * sizeof *ids);
        for (int32_t t = 0; t < r->n_turns; t++) {
            const rlvr_turn *tn = &r->turns[t];
            if (tn->observation_end == tn->observation_start) continue;
            observed++;
            /* exactly the template's rendering of the error the turn earned */
            rlvr_turn_kind kind;
            rlvr_tool_call call;
            rlvr_tool_error err;
            CHECK_OK(rlvr_turn_read_call(&kind, &call, &err, NULL, tok, r->tokens + tn->policy_start,
                                         tn->policy_end - tn->policy_start, tasks[0]->tools));
            CHECK(kind == RLVR_TURN_MALFORMED);
            rlvr_tool_call_clear(&call);
            rlvr_token_buf want = {0};
            CHECK_OK(rlvr_template_observation(&want, tok, err.observation, strlen(err.observation)));
            CHECK(tn->observation_end - tn->observation_start == want.n &&
                  memcmp(r->tokens + tn->observation_start, want.ids, (size_t)want.n * sizeof *want.ids) == 0);
            rlvr_token_buf_free(&want);
        }
    }
    CHECK_MSG(observed >= 3 && multi >= 2 && ceiling >= 1, "observations %d, multi-turn rollouts %d, %d stopped by "
              "the malformed-call ceiling", observed, multi, ceiling);
    rlvr_batch batch = {.n_seqs = N, .offsets = offsets, .tokens = ids};
    CHECK_OK(rlvr_model_forward(m, &batch, 1.0f, lp, NULL));
    double worst = 0;
    int64_t scored = 0;
    for (int i = 0; i < N; i++) {
        const rlvr_rollout *r = &a[i].record;
        for (int32_t t = 1; t < r->n_tokens; t++) {
            if (r->mask[t] != RLVR_TOKEN_POLICY) {
                CHECK(r->logprobs[t] == 0.0f);
                continue;
            }
            double d = fabs((double)lp[offsets[i] + t - 1] - r->logprobs[t]);
            if (d > worst) worst = d;
            scored++;
        }
    }
    CHECK_MSG(worst <= 2e-5 && scored > 100, "worst |dlogprob| %.3g over %lld tokens", worst, (long long)scored);
    printf("record integrity: %lld policy tokens, %d observations, %d stopped by 3 malformed calls in a row, "
           "worst |dlogprob| %.3g\n", (long long)scored, observed, ceiling, worst);
    free(ids);
    free(lp);
    for (int i = 0; i < N; i++) {
        rlvr_harness_job_clear(&a[i]);
        rlvr_harness_job_clear(&b[i]);
    }
    for (int i = 0; i < 4; i++) rlvr_task_free(tasks[i]);
    rlvr_sampler_free(s3);
    rlvr_sampler_free(s1);
    rlvr_model_free(m);
}

/* ---- 4: group prefix sharing ------------------------------------------------------------ */

/* Everything a record holds but timings (and the durations they include). */
static bool same_record(const rlvr_harness_job *x, const rlvr_harness_job *y) {
    const rlvr_rollout *a = &x->record, *b = &y->record;
    size_t n = (size_t)a->n_tokens;
    bool same = a->n_tokens == b->n_tokens && a->prompt_tokens == b->prompt_tokens && a->n_turns == b->n_turns &&
                memcmp(a->tokens, b->tokens, n * sizeof *a->tokens) == 0 &&
                memcmp(a->logprobs, b->logprobs, n * sizeof *a->logprobs) == 0 &&
                memcmp(a->entropy, b->entropy, n * sizeof *a->entropy) == 0 && memcmp(a->mask, b->mask, n) == 0 &&
                a->stop == b->stop && a->verdict == b->verdict && a->reward.outcome == b->reward.outcome &&
                a->reward.format == b->reward.format && a->sample_sequence == b->sample_sequence &&
                x->calls == y->calls && x->calls_parsed == y->calls_parsed && x->patch_len == y->patch_len &&
                (!x->patch_len || memcmp(x->patch, y->patch, x->patch_len) == 0);
    for (int32_t k = 0; same && k < a->n_turns; k++) {
        const rlvr_turn *s = &a->turns[k], *t = &b->turns[k];
        same = s->policy_start == t->policy_start && s->policy_end == t->policy_end &&
               s->observation_start == t->observation_start && s->observation_end == t->observation_end &&
               strcmp(s->tool_name, t->tool_name) == 0 && s->exit_status == t->exit_status &&
               s->output_truncated == t->output_truncated && s->call_parsed == t->call_parsed;
    }
    return same;
}

/* What the event hook saw: per job, the events in order. */
typedef struct {
    const rlvr_harness_job *jobs;
    int n;
    char seen[16][64]; /* S P T ... E */
    int len[16];
    bool misordered;
} event_log;

static void log_event(void *arg, rlvr_harness_event ev, const rlvr_harness_job *job, const rlvr_turn *turn) {
    event_log *l = arg;
    int i = (int)(job - l->jobs);
    if (i < 0 || i >= l->n || l->len[i] >= 63) {
        l->misordered = true;
        return;
    }
    const char code[] = {0, 'S', 'P', 'T', 'E'};
    l->seen[i][l->len[i]++] = code[ev];
    const rlvr_rollout *r = &job->record;
    if (ev == RLVR_HARNESS_EVENT_START) l->misordered |= r->prompt_tokens == 0 || r->n_turns > 0 || turn;
    if (ev == RLVR_HARNESS_EVENT_POLICY) l->misordered |= !turn || turn->policy_end != r->n_tokens;
    if (ev == RLVR_HARNESS_EVENT_TURN) l->misordered |= turn != &r->turns[r->n_turns - 1];
    if (ev == RLVR_HARNESS_EVENT_END) l->misordered |= r->stop == RLVR_STOP_NONE || turn;
}

static double fixed_latency(void *arg, const rlvr_harness_job *job, int32_t turn) {
    (void)job, (void)turn;
    return *(const double *)arg;
}

/* Two groups of 4 arith rollouts and a group of 2 bugfix-c rollouts at one
 * step, sampled by a random-weights policy. */
static void group_jobs(rlvr_harness_job *jobs, rlvr_task *arith[2], const rlvr_task *bug) {
    memset(jobs, 0, 10 * sizeof *jobs);
    for (int i = 0; i < 10; i++) {
        jobs[i].task = i < 8 ? arith[i / 4] : bug;
        jobs[i].step = 7;
        jobs[i].sequence = (uint32_t)(40 + i);
    }
}

static void test_group_sharing(rlvr_task_pool *pool, rlvr_sandbox_host *host) {
    rlvr_task *arith[2];
    const rlvr_task *bug = NULL;
    int k = 0;
    for (size_t i = 0; i < rlvr_task_pool_size(pool); i++) {
        const rlvr_task *t = rlvr_task_pool_get(pool, i);
        if (t->verifier == RLVR_VERIFIER_TESTS && !bug) bug = t;
        if (t->verifier != RLVR_VERIFIER_ARITH || k == 2) continue;
        char *json = NULL;
        CHECK_OK(rlvr_task_to_json(t, 0, &json));
        CHECK_OK(rlvr_task_parse(&arith[k], json, strlen(json), "copy", dir));
        free(json);
        arith[k++]->budgets = (rlvr_task_budgets){.turns = 4, .policy_tokens = 300, .context_tokens = 900,
                                                   .tool_timeout_s = 1};
    }
    CHECK(k == 2 && bug);
    if (k < 2 || !bug) return;
    rlvr_model *m = tiny_model(0.05f);
    rlvr_sampler *wide = tiny_sampler(m, 10, 4096), *narrow = tiny_sampler(m, 3, 4096);
    rlvr_harness_job shared[10], split[10], alone[10];
    rlvr_harness_options opt;
    rlvr_harness_options_default(&opt);
    opt.host = host;
    opt.budgets.policy_tokens = 256; /* the bugfix-c rollouts: a few random turns */

    /* every group in one pass, with the event hook */
    event_log log = {.jobs = shared, .n = 10};
    opt.on_event = log_event;
    opt.event_arg = &log;
    group_jobs(shared, arith, bug);
    CHECK_OK(rlvr_harness_run(wide, tok, &opt, shared, 10));
    opt.on_event = NULL;
    /* three slots: groups split across passes, fork sources finish while
     * their readers decode; simulated latency on every observation */
    double latency = 0.002;
    opt.simulated_latency = fixed_latency;
    opt.latency_arg = &latency;
    group_jobs(split, arith, bug);
    CHECK_OK(rlvr_harness_run(narrow, tok, &opt, split, 10));
    opt.simulated_latency = NULL;
    /* one by one: nothing to share */
    group_jobs(alone, arith, bug);
    for (int i = 0; i < 10; i++) CHECK_OK(rlvr_harness_run(wide, tok, &opt, &alone[i], 1));

    int n_shared = 0, n_split = 0, observations = 0;
    for (int i = 0; i < 10; i++) {
        CHECK_MSG(same_record(&shared[i], &alone[i]), "job %d: shared and alone differ", i);
        CHECK_MSG(same_record(&split[i], &alone[i]), "job %d: split and alone differ", i);
        CHECK(!alone[i].prompt_shared && shared[i].record.stop != RLVR_STOP_INFRA_ERROR);
        n_shared += shared[i].prompt_shared;
        n_split += split[i].prompt_shared;
        /* the log: S, then P T per turn, then E */
        char want[64] = "S";
        for (int32_t t = 0; t < shared[i].record.n_turns && t < 30; t++) strcat(want, "PT");
        strcat(want, "E");
        CHECK_MSG(strcmp(log.seen[i], want) == 0, "job %d: events %s, want %s", i, log.seen[i], want);
        for (int32_t t = 0; t < split[i].record.n_turns; t++) {
            const rlvr_turn *tn = &split[i].record.turns[t];
            if (tn->observation_end == tn->observation_start) continue;
            observations++;
            CHECK(tn->duration_s >= latency);
        }
    }
    CHECK(!log.misordered);
    /* 3 + 3 + 1 forks with room for all; with 3 slots a group of 4 starts
     * 3 at once (2 forks) and its last one alone, the pair waits for 2 */
    CHECK_MSG(n_shared == 7 && n_split == 5, "prompts shared: %d in one pass, %d in three slots", n_shared, n_split);
    CHECK_MSG(observations >= 3, "%d observations", observations);
    printf("group sharing: %d of 10 prompts forked (%d with 3 slots), %d observations with simulated latency\n",
           n_shared, n_split, observations);
    for (int i = 0; i < 10; i++) {
        rlvr_harness_job_clear(&shared[i]);
        rlvr_harness_job_clear(&split[i]);
        rlvr_harness_job_clear(&alone[i]);
    }
    rlvr_task_free(arith[0]);
    rlvr_task_free(arith[1]);
    rlvr_sampler_free(wide);
    rlvr_sampler_free(narrow);
    rlvr_model_free(m);
}

/* The pool's first task verified by its tests (a bug-fix task). */
static const rlvr_task *first_tests_task(rlvr_task_pool *pool) {
    for (size_t i = 0; i < rlvr_task_pool_size(pool); i++)
        if (rlvr_task_pool_get(pool, i)->verifier == RLVR_VERIFIER_TESTS) return rlvr_task_pool_get(pool, i);
    return NULL;
}
static void test_bad_arguments(rlvr_task_pool *pool) {
    rlvr_model *m = tiny_model(0.02f);
    rlvr_sampler *s = tiny_sampler(m, 1, 256);
    rlvr_harness_options opt;
    rlvr_harness_options_default(&opt);
    rlvr_harness_job job = {.task = rlvr_task_pool_get(pool, 0)};
    opt.version = 9;
    CHECK(rlvr_harness_run(s, tok, &opt, &job, 1) == RLVR_EINVAL);
    opt.version = RLVR_HARNESS_OPTIONS_VERSION;
    opt.budgets.turns = 0;
    CHECK(rlvr_harness_run(s, tok, &opt, &job, 1) == RLVR_EINVAL);
    rlvr_harness_options_default(&opt);
    opt.budgets.malformed_calls = -1;
    CHECK(rlvr_harness_run(s, tok, &opt, &job, 1) == RLVR_EINVAL);
    CHECK(strstr(rlvr_error_last(), "malformed_calls") != NULL);
    rlvr_harness_options_default(&opt);
    /* a "tests" task without a sandbox host is a caller error */
    const rlvr_task *bug = first_tests_task(pool);
    job.task = bug;
    CHECK(rlvr_harness_run(s, tok, &opt, &job, 1) == RLVR_EINVAL);
    rlvr_harness_job_clear(&job);
    rlvr_sampler_free(s);
    rlvr_model_free(m);
}

/* Tool calls of different rollouts overlap: four rollouts that each sleep
 * twice for 0.4 s spend about 0.8 s in tools with the event loop, 3.2 s
 * without. */
static void test_tools_overlap(rlvr_task_pool *pool, rlvr_sandbox_host *host) {
    const rlvr_task *bug = first_tests_task(pool);
    rlvr_model *m = tiny_model(0.02f);
    rlvr_sampler *s = tiny_sampler(m, 4, 4096);
    if (!bug || !m || !s) return;
    script sc;
    memset(&sc, 0, sizeof sc);
    script_add(&sc, "run", json_pack("{s:s}", "command", "sleep 0.4"));
    script_add(&sc, "run", json_pack("{s:s}", "command", "sleep 0.4; echo slept"));
    double wall[2];
    for (int threads = 0; threads < 2; threads++) {
        rlvr_harness_job jobs[4];
        memset(jobs, 0, sizeof jobs);
        for (int i = 0; i < 4; i++) {
            jobs[i].task = bug;
            jobs[i].sequence = (uint32_t)i;
            jobs[i].script = play;
            jobs[i].script_arg = &sc;
        }
        rlvr_harness_options opt;
        rlvr_harness_options_default(&opt);
        opt.host = host;
        opt.overlap_tools = threads;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        CHECK_OK(rlvr_harness_run(s, tok, &opt, jobs, 4));
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double tools = 0, gen = 0, setup = 0;
        for (int i = 0; i < 4; i++) {
            gen += jobs[i].record.timings.generate_s;
            setup += jobs[i].record.timings.tool_s;
            CHECK(jobs[i].record.stop == RLVR_STOP_DONE && jobs[i].record.n_turns == 3);
            char *o = jobs[i].record.n_turns == 3 ? observation(&jobs[i].record, 1) : NULL;
            CHECK(o && strstr(o, "slept\n[exit status 0]"));
            free(o);
            for (int32_t k = 0; k < jobs[i].record.n_turns; k++) tools += jobs[i].record.turns[k].duration_s;
            rlvr_harness_job_clear(&jobs[i]);
        }
        /* wall time less the main thread's own work (prefill, workspace
         * set-up, extraction), which swells with machine load: what is left
         * is the time spent waiting for tools */
        wall[threads] = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec) - gen -
                        (setup - tools);
        CHECK(tools >= 8 * 0.4);
        printf("tools overlap: threads %d: %.2f s waiting for %.2f s of tool calls (%.2f s with workspace set-up "
               "and extraction, %.2f s generation)\n", threads, wall[threads], tools, setup, gen);
    }
    /* the sleeps overlap only with threads: ideally 2.4 s less waiting */
    CHECK_MSG(wall[0] - wall[1] > 1.2, "with threads %.2f s, without %.2f s", wall[1], wall[0]);
    script_free(&sc);
    rlvr_sampler_free(s);
    rlvr_model_free(m);
}

/* ---- 5: the malformed-call ceiling ------------------------------------------------------- */

/* One turn per letter of `pattern`: 'm' a call that fails its schema
 * (read_file without a path), 'u' one with unbalanced markers, 'w' a
 * well-formed read_file; then a final answer. */
static void pattern_script(script *s, const rlvr_task *t, const char *pattern) {
    memset(s, 0, sizeof *s);
    s->task = t;
    s->answer = "done";
    for (const char *p = pattern; *p; p++)
        if (*p == 'u') s->calls[s->n_calls++] = strdup("RAW:{\"name\": \"read_file\"}");
        else if (*p == 'm') script_add(s, "read_file", json_object());
        else script_add(s, "read_file", json_pack("{s:s, s:i, s:i}", "path", "Makefile", "start", 1, "end", 1));
}

typedef struct {
    const char *pattern;
    int run_limit, task_limit; /* [harness] max_malformed_calls, the task's budgets.malformed_calls (0: none) */
    rlvr_stop_reason stop;     /* expected */
    int32_t turns;             /* expected turns recorded */
} malformed_case;

static const malformed_case malformed_cases[] = {
    {"mumum", 3, 0, RLVR_STOP_MALFORMED, 3},     /* three in a row: stopped at the third */
    {"mmwmm", 3, 0, RLVR_STOP_DONE, 6},          /* a well-formed call resets the count */
    {"mwmum", 3, 0, RLVR_STOP_MALFORMED, 5},     /* ... and the count starts again at 1 */
    {"m", 1, 0, RLVR_STOP_MALFORMED, 1},         /* a limit of 1: the first malformed call ends it */
    {"mumum", 0, 0, RLVR_STOP_DONE, 6},          /* 0: no limit */
    {"wmumu", 0, 2, RLVR_STOP_MALFORMED, 3},     /* the task's budget applies where the run has none */
    {"mumwm", 2, 4, RLVR_STOP_DONE, 6},          /* ... and wins over the run's */
};
#define N_MALFORMED_CASES (int)(sizeof malformed_cases / sizeof malformed_cases[0])

/* Runs every case on a copy of `bug` (for its own budgets); the cases with the
 * same run limit share one harness run. */
static void run_malformed_cases(rlvr_sampler *s, rlvr_sandbox_host *host, const rlvr_task *bug, double latency,
                                rlvr_harness_job *jobs, script *scripts, rlvr_task **copies) {
    char *json = NULL;
    CHECK_OK(rlvr_task_to_json(bug, 0, &json));
    memset(jobs, 0, N_MALFORMED_CASES * sizeof *jobs);
    for (int i = 0; i < N_MALFORMED_CASES; i++) {
        copies[i] = NULL;
        CHECK_OK(rlvr_task_parse(&copies[i], json, strlen(json), "copy", bug->base_dir));
        if (!copies[i]) continue;
        copies[i]->budgets.malformed_calls = malformed_cases[i].task_limit;
        pattern_script(&scripts[i], copies[i], malformed_cases[i].pattern);
        jobs[i] = (rlvr_harness_job){.task = copies[i], .sequence = (uint32_t)i, .script = play,
                                     .script_arg = &scripts[i]};
    }
    free(json);
    for (int limit = 0; limit <= 3; limit++) {
        rlvr_harness_job batch[N_MALFORMED_CASES];
        int idx[N_MALFORMED_CASES], n = 0;
        for (int i = 0; i < N_MALFORMED_CASES; i++)
            if (malformed_cases[i].run_limit == limit && copies[i]) idx[n] = i, batch[n++] = jobs[i];
        if (n == 0) continue;
        rlvr_harness_options opt;
        rlvr_harness_options_default(&opt);
        opt.host = host;
        opt.budgets.malformed_calls = limit;
        if (latency > 0) {
            opt.simulated_latency = fixed_latency;
            opt.latency_arg = &latency;
        }
        CHECK_OK(rlvr_harness_run(s, tok, &opt, batch, n));
        for (int k = 0; k < n; k++) jobs[idx[k]] = batch[k];
    }
}

static void test_malformed_ceiling(rlvr_task_pool *pool, rlvr_sandbox_host *host) {
    const rlvr_task *bug = first_tests_task(pool);
    rlvr_model *m = tiny_model(0.02f);
    rlvr_sampler *s = tiny_sampler(m, 4, 4096);
    if (!bug || !m || !s) return;
    CHECK(rlvr_rl_stop_is_truncation(RLVR_STOP_MALFORMED)); /* scored by [reward] truncation */
    CHECK(strcmp(rlvr_stop_reason_name(RLVR_STOP_MALFORMED), "malformed") == 0);
    rlvr_harness_job jobs[N_MALFORMED_CASES], slow[N_MALFORMED_CASES];
    script scripts[N_MALFORMED_CASES], scripts2[N_MALFORMED_CASES];
    rlvr_task *copies[N_MALFORMED_CASES], *copies2[N_MALFORMED_CASES];
    run_malformed_cases(s, host, bug, 0, jobs, scripts, copies);
    run_malformed_cases(s, host, bug, 0.01, slow, scripts2, copies2);
    for (int i = 0; i < N_MALFORMED_CASES; i++) {
        const malformed_case *c = &malformed_cases[i];
        const rlvr_rollout *r = &jobs[i].record;
        check_layout(r);
        CHECK_MSG(r->stop == c->stop && r->n_turns == c->turns, "case %d (%s, run %d, task %d): stop %s after %d turns",
                  i, c->pattern, c->run_limit, c->task_limit, rlvr_stop_reason_name(r->stop), r->n_turns);
        int32_t malformed = 0;
        for (const char *p = c->pattern; *p && p - c->pattern < r->n_turns; p++) malformed += *p != 'w';
        CHECK(jobs[i].calls_parsed + malformed == jobs[i].calls);
        if (r->stop == RLVR_STOP_MALFORMED && r->n_turns > 0) {
            /* the last turn is the malformed call that reached the limit: no observation, nothing after it */
            const rlvr_turn *last = &r->turns[r->n_turns - 1];
            CHECK(last->call_parsed == 0 && last->observation_end == last->observation_start);
            CHECK(last->policy_end == r->n_tokens);
            CHECK(jobs[i].patch && jobs[i].patch_len == 0); /* the workspace is still extracted */
        }
        /* every earlier turn got its observation */
        for (int32_t k = 0; k + 1 < r->n_turns; k++)
            CHECK(r->turns[k].observation_end > r->turns[k].observation_start);
        CHECK_MSG(same_record(&jobs[i], &slow[i]), "case %d differs with simulated latency", i);
        rlvr_harness_job_clear(&jobs[i]);
        rlvr_harness_job_clear(&slow[i]);
        script_free(&scripts[i]);
        script_free(&scripts2[i]);
        rlvr_task_free(copies[i]);
        rlvr_task_free(copies2[i]);
    }
    printf("malformed-call ceiling: %d scripted cases\n", N_MALFORMED_CASES);
    rlvr_sampler_free(s);
    rlvr_model_free(m);
}

/* One run file gives the harness its options: [harness], [repetition], [sandbox]. */
/* ---- the check's score of a verified patch ---------------------------------------------- */

/* reward.outcome of `patch` (NULL: none, the empty patch) verified for `task`. */
static float verified_outcome(rlvr_verify_task *vt, const rlvr_task *task, const char *patch, rlvr_verdict want) {
    rlvr_harness_job j;
    memset(&j, 0, sizeof j);
    j.task = task;
    j.record.stop = RLVR_STOP_DONE;
    if (patch) {
        j.patch = strdup(patch);
        j.patch_len = strlen(patch);
    }
    CHECK_OK(rlvr_harness_verify(&j, vt, 7));
    CHECK_MSG(j.record.verdict == want, "%s: verdict %s (%s), expected %s", task->id,
              rlvr_verdict_name(j.record.verdict), rlvr_reason_name(j.record.verdict_reason), rlvr_verdict_name(want));
    float outcome = j.record.reward.outcome;
    rlvr_harness_job_clear(&j);
    return outcome;
}

/* On a judge-mode task the record's reward.outcome of a failed patch is
 * the share the verify task credits: with RLVR_PARTIAL_CREDIT_ALL a patch
 * that changes nothing earns the PASS_TO_PASS share, with
 * RLVR_PARTIAL_CREDIT_FAIL_TO_PASS nothing; the reference scores 1 either
 * way. The same task with one PASS_TO_PASS test listed as FAIL_TO_PASS
 * shows the FAIL_TO_PASS share itself reaching the record: 1 of nf + 1. */
static void test_verify_credit(rlvr_task_pool *pool, rlvr_sandbox_host *host) {
    const rlvr_task *bug = NULL;
    for (size_t i = 0; i < rlvr_task_pool_size(pool) && !bug; i++) {
        const rlvr_task *t = rlvr_task_pool_get(pool, i);
        if (t->verifier == RLVR_VERIFIER_TESTS && t->judge_build) bug = t;
    }
    CHECK(bug && bug->fail_to_pass.n >= 1 && bug->pass_to_pass.n >= 1);
    if (!bug || bug->fail_to_pass.n < 1 || bug->pass_to_pass.n < 1) return;
    size_t nf = bug->fail_to_pass.n, np = bug->pass_to_pass.n;
    rlvr_sandbox_limits lim;
    rlvr_sandbox_limits_default(&lim);
    lim.wall_s = 30;
    rlvr_verify_task *vt = NULL;
    CHECK_OK(rlvr_harness_verify_task_new(&vt, host, bug, &lim, 1));
    if (vt) {
        CHECK(rlvr_verify_task_partial_credit(vt) == RLVR_PARTIAL_CREDIT_ALL);
        float noop = verified_outcome(vt, bug, NULL, RLVR_VERDICT_FAIL);
        CHECK_MSG(noop == (float)np / (float)(nf + np), "no-op under partial: %g", (double)noop);
        rlvr_verify_task_set_partial_credit(vt, RLVR_PARTIAL_CREDIT_FAIL_TO_PASS);
        noop = verified_outcome(vt, bug, NULL, RLVR_VERDICT_FAIL);
        CHECK_MSG(noop == 0.0f, "no-op under fail_to_pass: %g", (double)noop);
        CHECK(verified_outcome(vt, bug, bug->reference_patch, RLVR_VERDICT_PASS) == 1.0f);
    }
    rlvr_verify_task_free(vt);

    char *f2p[64], *p2p[64];
    CHECK(nf + 1 <= 64 && np <= 64);
    if (nf + 1 > 64 || np > 64) return;
    for (size_t i = 0; i < nf; i++) f2p[i] = bug->fail_to_pass.items[i];
    f2p[nf] = bug->pass_to_pass.items[0];
    for (size_t i = 1; i < np; i++) p2p[i - 1] = bug->pass_to_pass.items[i];
    rlvr_task moved = *bug; /* shares the task's strings; only the lists are this test's */
    moved.fail_to_pass = (rlvr_str_list){f2p, nf + 1};
    moved.pass_to_pass = (rlvr_str_list){p2p, np - 1};
    vt = NULL;
    CHECK_OK(rlvr_harness_verify_task_new(&vt, host, &moved, &lim, 1));
    if (vt) {
        rlvr_verify_task_set_partial_credit(vt, RLVR_PARTIAL_CREDIT_FAIL_TO_PASS);
        float noop = verified_outcome(vt, &moved, NULL, RLVR_VERDICT_FAIL);
        CHECK_MSG(noop == 1.0f / (float)(nf + 1), "no-op with one passing FAIL_TO_PASS test: %g (nf %zu)", (double)noop,
                  nf);
    }
    rlvr_verify_task_free(vt);
}

static void test_options_from_config(void) {
    const rlvr_config_key *const schemas[] = {rlvr_harness_config_keys, rlvr_rl_config_keys, rlvr_sandbox_config_keys,
                                              NULL};
    rlvr_config *cfg = NULL;
    CHECK_OK(rlvr_config_parse(&cfg,
                               "[harness]\nmax_turns = 5\ntool_output_bytes = 100\nmax_malformed_calls = 7\n"
                               "[repetition]\nenabled = true\nngram = 4\nwindow = 64\nmax_repeats = 3\n",
                               "run.ini", schemas));
    if (!cfg) return;
    rlvr_harness_options o;
    CHECK_OK(rlvr_harness_options_from_config(&o, cfg));
    CHECK(o.version == RLVR_HARNESS_OPTIONS_VERSION && o.budgets.turns == 5 && o.budgets.policy_tokens == 4096);
    CHECK(o.budgets.malformed_calls == 7);
    CHECK(o.tool_output_bytes == 100 && o.repetition.enabled && o.repetition.ngram == 4 && o.repetition.window == 64);
    CHECK(o.tool_limits.wall_s > 0 && o.host == NULL);
    rlvr_config_free(cfg);
}

int main(void) {
    dir = tmpdir_make("harness");
    CHECK_OK(rlvr_tokenizer_new_byte(&tok));
    test_options_from_config();
    rlvr_task_pool *pool = pool_fixture(dir, 3, 4, 5);
    if (pool && tok) {
        test_record_integrity(pool);
        test_bad_arguments(pool);
        rlvr_sandbox_host *host = NULL;
        rlvr_sandbox_host_options ho = RLVR_SANDBOX_HOST_OPTIONS_INIT;
        CHECK_OK(rlvr_sandbox_host_new(&host, &ho));
        if (host) test_group_sharing(pool, host);
        if (host) test_oracle_and_exploit(pool, host);
        if (host) test_tools_overlap(pool, host);
        if (host) test_malformed_ceiling(pool, host);
        if (host) test_verify_credit(pool, host);
        rlvr_sandbox_host_free(host);
    }
    rlvr_task_pool_free(pool);
    rlvr_tokenizer_free(tok);
    rm_rf(dir);
    free(dir);
    return test_summary("test_harness");
}
