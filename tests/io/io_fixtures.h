/* tests/io/io_fixtures.h — deterministic rollouts and scratch directories
 * shared by the io tests. */
#ifndef RLVR_TESTS_IO_FIXTURES_H
#define RLVR_TESTS_IO_FIXTURES_H

#include "core/record.h"
#include "core/rng.h"
#include "io/model_port.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A fresh empty directory under $TMPDIR (or /tmp) for one test. */
static inline void fixture_tmpdir(char *buf, size_t cap, const char *name) {
    const char *base = getenv("TMPDIR");
    snprintf(buf, cap, "%s/rlvr-%s-XXXXXX", base && base[0] ? base : "/tmp", name);
    if (!mkdtemp(buf)) {
        perror("mkdtemp");
        exit(2);
    }
}

/* Removes a directory tree made by a test. */
static inline void fixture_rmtree(const char *dir) {
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", dir);
}

/* A tiny Llama-shaped model over rlvr's byte tokenizer (d_model 16, 2
 * layers, 4 heads over 2 KV heads, max_seq 64), saved as checkpoint `ckpt`.
 * *tok and *m are the caller's (also after a failure, when set). */
static inline int fixture_tiny_model(const char *ckpt, rlvr_tokenizer **tok, rlvr_model **m, rlvr_model_config *cfg) {
    *tok = NULL, *m = NULL;
    int rc = rlvr_tokenizer_new_byte(tok);
    if (rc < 0) return rc;
    rlvr_port_config_init(cfg);
    cfg->vocab = rlvr_tokenizer_vocab_size(*tok), cfg->d_model = 16, cfg->n_layers = 2, cfg->n_heads = 4;
    cfg->n_kv_heads = 2, cfg->d_ff = 40, cfg->max_seq = 64, cfg->rope_theta = 10000.0f, cfg->norm_eps = 1e-5f;
    rc = rlvr_model_new(m, cfg);
    return rc < 0 ? rc : rlvr_port_save_checkpoint(ckpt, *m, *tok);
}

/* Rollout number `k` of a made-up step: a prompt, then `turns` policy turns
 * each followed by an observation, every value a function of (seed, k). */
static inline int fixture_rollout(rlvr_rollout *r, uint64_t seed, int k, int turns, int tokens_per_segment) {
    rlvr_rollout_reset(r);
    rlvr_rng_stream s;
    rlvr_rng_stream_init(&s, seed, RLVR_RNG_TEST, 0, (uint32_t)k);
    snprintf(r->task_id, sizeof r->task_id, "task-%03d", k / 4);
    r->group_id = 1000 + k / 4;
    r->rollout_index = k % 4;
    r->policy_version = 7 + k % 3;
    r->staleness = k % 2;
    r->seed = seed;
    r->sample_sequence = (uint32_t)(k * 31 + 5);
    int prompt = tokens_per_segment / 2 + 1;
    for (int t = 0; t < prompt; t++)
        if (rlvr_rollout_push_token(r, (int32_t)(32 + rlvr_rng_next_below(&s, 95)), 0.0f, 0.0f, RLVR_TOKEN_PROMPT))
            return -1;
    r->prompt_tokens = prompt;
    for (int u = 0; u < turns; u++) {
        rlvr_turn turn = {0};
        turn.policy_start = r->n_tokens;
        int n = tokens_per_segment + (int)rlvr_rng_next_below(&s, 5);
        for (int t = 0; t < n; t++) {
            int32_t id = (int32_t)rlvr_rng_next_below(&s, 300);
            float lp = -(float)rlvr_rng_next_uniform(&s) * 4.0f;
            float h = (float)rlvr_rng_next_uniform(&s) * 3.0f;
            if (rlvr_rollout_push_token(r, id, lp, h, RLVR_TOKEN_POLICY)) return -1;
        }
        turn.policy_end = r->n_tokens;
        turn.observation_start = r->n_tokens;
        int m = u + 1 < turns ? tokens_per_segment : 0;
        for (int t = 0; t < m; t++)
            if (rlvr_rollout_push_token(r, (int32_t)(32 + rlvr_rng_next_below(&s, 95)), 0.0f, 0.0f,
                                        RLVR_TOKEN_OBSERVATION))
                return -1;
        turn.observation_end = r->n_tokens;
        snprintf(turn.tool_name, sizeof turn.tool_name, "%s", m ? (u % 2 ? "run_tests" : "edit_file") : "");
        turn.exit_status = m ? (int32_t)(u % 3) - 1 : -1;
        turn.duration_s = 0.25f * (float)u;
        turn.output_truncated = (uint8_t)(u == 1);
        turn.call_parsed = (uint8_t)(u % 2 == 0);
        if (rlvr_rollout_push_turn(r, &turn, NULL)) return -1;
    }
    r->stop = (rlvr_stop_reason)(1 + k % (RLVR_STOP_COUNT - 1));
    r->verdict = (rlvr_verdict)(k % RLVR_VERDICT_COUNT);
    r->verdict_reason = k % 5;
    r->reward.outcome = r->verdict == RLVR_VERDICT_PASS ? 1.0f : 0.0f;
    r->reward.format = 0.5f;
    r->reward.length_penalty = 0.001f * (float)r->n_tokens;
    r->reward.total = r->reward.outcome + 0.1f * r->reward.format - r->reward.length_penalty;
    r->timings = (rlvr_timings){1.5 + k, 0.25 * k, 0.125, 0.0625 * k};
    return 0;
}

/* True when two records hold the same rollout, bit for bit. */
static inline bool fixture_same_rollout(const rlvr_rollout *a, const rlvr_rollout *b) {
    size_t n = (size_t)a->n_tokens;
    if (strcmp(a->task_id, b->task_id) || a->group_id != b->group_id || a->rollout_index != b->rollout_index ||
        a->policy_version != b->policy_version || a->staleness != b->staleness || a->seed != b->seed ||
        a->sample_sequence != b->sample_sequence || a->n_tokens != b->n_tokens ||
        a->prompt_tokens != b->prompt_tokens || a->n_turns != b->n_turns || a->stop != b->stop ||
        a->verdict != b->verdict || a->verdict_reason != b->verdict_reason)
        return false;
    if (memcmp(&a->reward, &b->reward, sizeof a->reward) || memcmp(&a->timings, &b->timings, sizeof a->timings))
        return false;
    if (n && (memcmp(a->tokens, b->tokens, n * sizeof *a->tokens) ||
              memcmp(a->logprobs, b->logprobs, n * sizeof *a->logprobs) || memcmp(a->mask, b->mask, n) ||
              memcmp(a->entropy, b->entropy, n * sizeof *a->entropy)))
        return false;
    for (int32_t k = 0; k < a->n_turns; k++) {
        const rlvr_turn *x = &a->turns[k], *y = &b->turns[k];
        if (x->policy_start != y->policy_start || x->policy_end != y->policy_end ||
            x->observation_start != y->observation_start || x->observation_end != y->observation_end ||
            strcmp(x->tool_name, y->tool_name) || x->exit_status != y->exit_status ||
            x->duration_s != y->duration_s || x->output_truncated != y->output_truncated ||
            x->call_parsed != y->call_parsed)
            return false;
    }
    return true;
}

#endif
