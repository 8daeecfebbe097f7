/* tests/envs/test_demo.c — demonstrations (envs/demo.h) played through the
 * harness and verified in the enclave.
 *
 * 1. Plain demonstrations of generated bugfix-c tasks: read_file, the
 *    edits, submit; every tool call succeeds, the patch passes, no mistake.
 * 2. Recovery demonstrations of the same tasks: one call more, right before
 *    the first edit — replace_in_file whose old text is that edit's new
 *    text; the tool refuses it with the documented error observation, the
 *    episode goes on and its patch passes like the plain one's, and
 *    rlvr_demo_usable accepts it. After rlvr_demo_mask_mistake the mistaken
 *    turn's tokens are context (PROMPT) and every other policy token is
 *    still POLICY, so SFT trains on the recovery only.
 * 3. A plain record with a refused call, or a recovery record whose mistake
 *    succeeded, is not usable; arith tasks have no recovery demonstration
 *    (RLVR_ENOTFOUND).
 * 4. Played again with no_patch (as SFT plays them), a demonstration gives
 *    the same tokens and mask and no patch. */
#include "core/error.h"
#include "enclave/config.h"
#include "envs/demo.h"
#include "envs/gen.h"
#include "envs/harness.h"
#include "envs/pool.h"
#include "envs_test.h"
#include "pool_fixture.h"
#include "test.h"

#include <jansson.h>

#define MAX_TASKS 8

static rlvr_sampler *tiny_sampler(rlvr_model **m) {
    rlvr_model_config cfg = {.vocab = 272, .d_model = 32, .n_layers = 1, .n_heads = 2, .n_kv_heads = 1,
                             .d_ff = 64, .max_seq = 4096, .rope_theta = 10000.0f, .norm_eps = 1e-5f,
                             .tie_embeddings = false, .init_seed = 3, .init_std = 0.02f};
    CHECK_OK(rlvr_model_new(m, &cfg));
    rlvr_sampler_config sc;
    rlvr_sampler_config_default(&sc);
    sc.kv_slots = 2 * MAX_TASKS;
    sc.context = 4096;
    rlvr_sampler *s = NULL;
    if (*m) CHECK_OK(rlvr_sampler_new(&s, *m, &sc));
    return s;
}

/* Argument `key` of call i of a demonstration, or NULL. */
static char *call_arg(const rlvr_demo *d, int i, const char *key) {
    const char *text = rlvr_demo_call(d, i);
    json_t *j = text ? json_loads(text, 0, NULL) : NULL;
    const char *v = json_string_value(json_object_get(json_object_get(j, "arguments"), key));
    char *out = v ? strdup(v) : NULL;
    json_decref(j);
    return out;
}

static void check_structure(const rlvr_demo *plain, const rlvr_demo *rec) {
    CHECK(rlvr_demo_mistake(plain) == -1);
    int m = rlvr_demo_mistake(rec);
    CHECK_MSG(m == 1, "mistake at call %d, expected 1 (after read_file)", m);
    CHECK(rlvr_demo_turns(rec) == rlvr_demo_turns(plain) + 1);
    /* the other calls are the plain demonstration's, in order */
    for (int i = 0, k = 0; i < rlvr_demo_turns(rec); i++) {
        if (i == m) continue;
        CHECK(rlvr_demo_call(rec, i) && rlvr_demo_call(plain, k) &&
              strcmp(rlvr_demo_call(rec, i), rlvr_demo_call(plain, k)) == 0);
        k++;
    }
    char *old = call_arg(rec, m, "old"), *neu = call_arg(rec, m, "new"), *fix = call_arg(rec, m + 1, "new");
    CHECK(old && fix && strcmp(old, fix) == 0); /* the first edit's new text given as the old one */
    CHECK(neu && fix && strcmp(neu, fix) == 0);
    free(old), free(neu), free(fix);
}

static void check_played(rlvr_harness_job *j, const rlvr_demo *d, rlvr_verify_task *vt) {
    const rlvr_rollout *r = &j->record;
    CHECK_MSG(r->stop == RLVR_STOP_DONE, "%s: stop %s", r->task_id, rlvr_stop_reason_name(r->stop));
    CHECK(r->n_turns == rlvr_demo_turns(d));
    int m = rlvr_demo_mistake(d);
    for (int32_t t = 0; t + 1 < r->n_turns; t++) {
        CHECK_MSG((r->turns[t].exit_status != 0) == (t == m), "%s turn %d: exit %d", r->task_id, (int)t,
                  (int)r->turns[t].exit_status);
        if (t == m) {
            /* the tool's own refusal, as a sampled rollout gets it */
            char obs[256];
            int32_t n = 0;
            for (int32_t k = r->turns[t].observation_start; k < r->turns[t].observation_end && n < 255; k++)
                if (r->tokens[k] < 256) obs[n++] = (char)r->tokens[k];
            obs[n] = 0;
            CHECK_MSG(strstr(obs, "error: the \"old\" text does not occur in") != NULL, "observation: %s", obs);
        }
    }
    CHECK(rlvr_demo_usable(d, r, j->calls, j->calls_parsed));
    CHECK_OK(rlvr_harness_verify(j, vt, 1));
    CHECK_MSG(r->verdict == RLVR_VERDICT_PASS, "%s: verdict %s", r->task_id, rlvr_verdict_name(r->verdict));
}

static void check_mask(rlvr_rollout *r, const rlvr_demo *d) {
    int32_t policy_before = 0, policy_after = 0;
    for (int32_t k = 0; k < r->n_tokens; k++) policy_before += r->mask[k] == RLVR_TOKEN_POLICY;
    rlvr_demo_mask_mistake(d, r);
    const rlvr_turn *mt = &r->turns[rlvr_demo_mistake(d)];
    for (int32_t k = 0; k < r->n_tokens; k++) {
        bool in_mistake = k >= mt->policy_start && k < mt->policy_end;
        policy_after += r->mask[k] == RLVR_TOKEN_POLICY;
        if (in_mistake) CHECK(r->mask[k] == RLVR_TOKEN_PROMPT);
    }
    CHECK(policy_after == policy_before - (mt->policy_end - mt->policy_start));
    CHECK(policy_after > 0);
}

int main(void) {
    char *dir = tmpdir_make("demo");
    rlvr_task_pool *pool = pool_fixture(dir, 4, 1, 9);
    rlvr_tokenizer *tok = NULL;
    CHECK_OK(rlvr_tokenizer_new_byte(&tok));
    rlvr_model *model = NULL;
    rlvr_sampler *s = pool && tok ? tiny_sampler(&model) : NULL;
    rlvr_sandbox_host *host = NULL;
    rlvr_sandbox_host_options ho = RLVR_SANDBOX_HOST_OPTIONS_INIT;
    CHECK_OK(rlvr_sandbox_host_new(&host, &ho));

    const rlvr_task *tasks[MAX_TASKS];
    rlvr_demo *plain[MAX_TASKS] = {0}, *rec[MAX_TASKS] = {0};
    rlvr_harness_job jobs[2 * MAX_TASKS];
    memset(jobs, 0, sizeof jobs);
    int n = 0;
    for (size_t i = 0; pool && i < rlvr_task_pool_size(pool) && n < MAX_TASKS; i++) {
        const rlvr_task *t = rlvr_task_pool_get(pool, i);
        rlvr_demo *d = NULL;
        if (t->verifier == RLVR_VERIFIER_ARITH) {
            CHECK(rlvr_demo_new_recovery(&d, t) == RLVR_ENOTFOUND && d == NULL);
            continue;
        }
        tasks[n] = t;
        CHECK_OK(rlvr_demo_new(&plain[n], t));
        CHECK_OK(rlvr_demo_new_recovery(&rec[n], t));
        if (plain[n] && rec[n]) check_structure(plain[n], rec[n]);
        n++;
    }
    CHECK(n == 4);
    for (int i = 0; i < n && plain[i] && rec[i]; i++) {
        jobs[2 * i] = (rlvr_harness_job){.task = tasks[i], .sequence = (uint32_t)(2 * i), .script = rlvr_demo_script,
                                         .script_arg = plain[i]};
        jobs[2 * i + 1] = (rlvr_harness_job){.task = tasks[i], .sequence = (uint32_t)(2 * i + 1),
                                             .script = rlvr_demo_script, .script_arg = rec[i]};
    }
    rlvr_harness_options opt;
    rlvr_harness_options_default(&opt);
    opt.host = host;
    opt.budgets.malformed_calls = 1; /* a refused edit is not malformed: the quickstart's ceiling lets it pass */
    if (s && host) CHECK_OK(rlvr_harness_run(s, tok, &opt, jobs, 2 * n));

    rlvr_sandbox_limits lim;
    rlvr_sandbox_limits_default(&lim);
    lim.wall_s = 30;
    for (int i = 0; s && host && i < n; i++) {
        rlvr_verify_task *vt = NULL;
        CHECK_OK(rlvr_harness_verify_task_new(&vt, host, tasks[i], &lim, 1));
        if (!vt) continue;
        check_played(&jobs[2 * i], plain[i], vt);
        check_played(&jobs[2 * i + 1], rec[i], vt);
        /* a refusal where none is expected, and a mistake that went through, are not usable */
        CHECK(!rlvr_demo_usable(plain[i], &jobs[2 * i + 1].record, jobs[2 * i + 1].calls,
                                jobs[2 * i + 1].calls_parsed));
        rlvr_rollout *r = &jobs[2 * i + 1].record;
        int m = rlvr_demo_mistake(rec[i]);
        r->turns[m].exit_status = 0;
        CHECK(!rlvr_demo_usable(rec[i], r, jobs[2 * i + 1].calls, jobs[2 * i + 1].calls_parsed));
        r->turns[m].exit_status = 1;
        check_mask(r, rec[i]);
        rlvr_demo_mask_mistake(plain[i], &jobs[2 * i].record); /* a plain demonstration is left alone */
        for (int32_t k = 0; k < jobs[2 * i].record.n_turns; k++)
            CHECK(jobs[2 * i].record.mask[jobs[2 * i].record.turns[k].policy_start] == RLVR_TOKEN_POLICY);
        rlvr_verify_task_free(vt);
    }

    /* no_patch (SFT's demonstrations): the same record, no extraction */
    if (s && host && n > 0 && plain[0]) {
        rlvr_harness_job again = {.task = tasks[0], .sequence = 0, .script = rlvr_demo_script,
                                  .script_arg = plain[0], .no_patch = true};
        CHECK_OK(rlvr_harness_run(s, tok, &opt, &again, 1));
        const rlvr_rollout *a = &again.record, *b = &jobs[0].record;
        CHECK(again.patch == NULL && jobs[0].patch != NULL);
        CHECK(a->n_tokens == b->n_tokens && a->stop == b->stop &&
              memcmp(a->tokens, b->tokens, (size_t)a->n_tokens * sizeof *a->tokens) == 0 &&
              memcmp(a->mask, b->mask, (size_t)a->n_tokens) == 0);
        CHECK(rlvr_demo_usable(plain[0], a, again.calls, again.calls_parsed));
        rlvr_harness_job_clear(&again);
    }

    for (int i = 0; i < 2 * n; i++) rlvr_harness_job_clear(&jobs[i]);
    for (int i = 0; i < n; i++) rlvr_demo_free(plain[i]), rlvr_demo_free(rec[i]);
    rlvr_sampler_free(s);
    rlvr_model_free(model);
    rlvr_sandbox_host_free(host);
    rlvr_tokenizer_free(tok);
    rlvr_task_pool_free(pool);
    rm_rf(dir);
    free(dir);
    return test_summary("test_demo");
}
