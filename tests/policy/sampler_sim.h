/* tests/policy/sampler_sim.h — a miniature multi-turn harness for the
 * sampler tests: rollouts alternate policy turns (decoded in batches) and
 * tool observations (rendered by the template and prefilled), scheduled turn
 * by turn like the rollout rank does, and recorded in rlvr_rollout records.
 *
 * What a rollout sees depends only on its own history: the prompt, its
 * sequence id, and an observation derived from its own last token. How the
 * rollouts are batched, ordered, placed in slots or whether the group prompt
 * is shared is up to the caller (sim_options), and must not change a bit. */
#ifndef RLVR_TESTS_SAMPLER_SIM_H
#define RLVR_TESTS_SAMPLER_SIM_H

#include "core/record.h"
#include "policy/model.h"
#include "policy/sampler.h"
#include "policy/template.h"
#include "test.h"

#include <stdbool.h>

enum { SIM_MAX = 16 };

typedef struct {
    int batch;          /* most slots per decode call */
    int order;          /* 0: ascending, 1: descending, 2: rotate by the step number */
    bool share_prompt;  /* prefill a group's prompt once and fork it */
    int slot_shift;     /* rollout i lives in slot (i + slot_shift) % n */
} sim_options;

typedef struct {
    int n;                        /* rollouts */
    int group_size;               /* rollouts [g·G, (g+1)·G) share prompt g */
    int turns;                    /* policy turns per rollout */
    uint32_t step;                /* Philox step of every draw */
    const rlvr_tokenizer *tok;
    rlvr_rollout rec[SIM_MAX];    /* results */
    /* per-rollout run state */
    int slot[SIM_MAX];
    int turn[SIM_MAX];
    bool done[SIM_MAX];
} sim_run;

static uint32_t sim_sequence(int i) { return 1000u + 7u * (uint32_t)i; }

/* Per-rollout turn limit: different lengths put rollouts in different
 * phases at the same step. */
static int32_t sim_turn_limit(int i, int turn) { return 3 + (i * 5 + turn * 3) % 9; }

static void sim_render_prompt(rlvr_token_buf *b, const rlvr_tokenizer *t, int group) {
    char user[96];
    int n = snprintf(user, sizeof user, "task %d: the build fails in parse.c; fix the off-by-one", group);
    rlvr_template_begin(b, t);
    rlvr_template_message(b, t, RLVR_ROLE_SYSTEM, "You are a careful engineer.", 27);
    rlvr_template_message(b, t, RLVR_ROLE_USER, user, (size_t)n);
    rlvr_template_assistant_start(b, t);
}

/* Appends buffer tokens [from, b->n) to the record with their masks. */
static int sim_record_tokens(rlvr_rollout *r, const rlvr_token_buf *b, int from) {
    for (int k = from; k < b->n; k++) RLVR_TRY(rlvr_rollout_push_token(r, b->ids[k], 0.0f, 0.0f, b->mask[k]));
    return 0;
}

/* The prompt of rollout i: its own prefill, or a fork of the group leader. */
static int sim_start(sim_run *run, rlvr_sampler *s, int i, const sim_options *opt) {
    int group = i / run->group_size, leader = group * run->group_size;
    rlvr_rollout *r = &run->rec[i];
    rlvr_token_buf b = {0};
    sim_render_prompt(&b, run->tok, group);
    int rc = sim_record_tokens(r, &b, 0);
    r->prompt_tokens = b.n;
    if (rc == 0) {
        if (opt->share_prompt && i != leader)
            rc = rlvr_sampler_fork(s, run->slot[i], run->slot[leader], sim_sequence(i));
        else if ((rc = rlvr_sampler_reset(s, run->slot[i], run->step, sim_sequence(i))) == 0)
            rc = rlvr_sampler_prefill(s, run->slot[i], b.ids, b.n);
    }
    if (rc == 0) rc = rlvr_sampler_set_turn_limit(s, run->slot[i], sim_turn_limit(i, 0));
    rlvr_token_buf_free(&b);
    return rc;
}

/* After a stop: the next turn's observation (from the rollout's own last
 * token), or the end of the rollout. */
static int sim_after_turn(sim_run *run, rlvr_sampler *s, int i, const rlvr_sample *last) {
    rlvr_rollout *r = &run->rec[i];
    int32_t eos = rlvr_tokenizer_special(run->tok, RLVR_SPECIAL_EOS);
    run->turn[i]++;
    if (last->stop == RLVR_SAMPLE_CONTEXT || last->token == eos || run->turn[i] >= run->turns) {
        run->done[i] = true;
        r->stop = last->stop == RLVR_SAMPLE_CONTEXT ? RLVR_STOP_CONTEXT : RLVR_STOP_DONE;
        return 0;
    }
    char out[64];
    int n = snprintf(out, sizeof out, "exit %d\nlast token %d", (int)(last->token % 3), (int)last->token);
    rlvr_token_buf b = {0};
    int rc = rlvr_template_observation(&b, run->tok, out, (size_t)n);
    if (rc == 0 && rlvr_sampler_len(s, run->slot[i]) + b.n > rlvr_sampler_context(s)) {
        run->done[i] = true; /* the observation does not fit: truncated */
        r->stop = RLVR_STOP_CONTEXT;
    } else if (rc == 0) {
        rc = sim_record_tokens(r, &b, 0);
        if (rc == 0) rc = rlvr_sampler_prefill(s, run->slot[i], b.ids, b.n);
        if (rc == 0) rc = rlvr_sampler_set_turn_limit(s, run->slot[i], sim_turn_limit(i, run->turn[i]));
    }
    rlvr_token_buf_free(&b);
    return rc;
}

/* The rollouts ready to decode this step, in the requested order. */
static int sim_ready(const sim_run *run, const sim_options *opt, int step, int *ready) {
    int m = 0;
    for (int k = 0; k < run->n; k++) {
        int i = opt->order == 1 ? run->n - 1 - k : opt->order == 2 ? (k + step) % run->n : k;
        if (!run->done[i]) ready[m++] = i;
    }
    return m;
}

/* Decodes one batch of rollouts and handles their stops. */
static int sim_decode_batch(sim_run *run, rlvr_sampler *s, const int *which, int m) {
    int32_t slots[SIM_MAX];
    rlvr_sample out[SIM_MAX];
    for (int k = 0; k < m; k++) slots[k] = run->slot[which[k]];
    RLVR_TRY(rlvr_sampler_decode(s, slots, m, out));
    for (int k = 0; k < m; k++) {
        int i = which[k];
        if (out[k].token >= 0)
            RLVR_TRY(rlvr_rollout_push_token(&run->rec[i], out[k].token, out[k].logprob, out[k].entropy,
                                             RLVR_TOKEN_POLICY));
        if (out[k].stop != RLVR_SAMPLE_CONTINUE) RLVR_TRY(sim_after_turn(run, s, i, &out[k]));
    }
    return 0;
}

/* Runs every rollout to the end. The sampler must have >= n slots; the
 * records are (re)initialised here and freed by sim_free. */
static int sim_execute(sim_run *run, rlvr_sampler *s, const sim_options *opt) {
    for (int i = 0; i < run->n; i++) {
        RLVR_TRY(rlvr_rollout_init(&run->rec[i], 256, 4));
        run->slot[i] = (i + opt->slot_shift) % run->n;
        run->turn[i] = 0;
        run->done[i] = false;
    }
    for (int i = 0; i < run->n; i++) RLVR_TRY(sim_start(run, s, i, opt));
    int ready[SIM_MAX];
    for (int step = 0;; step++) {
        int m = sim_ready(run, opt, step, ready);
        if (m == 0) break;
        for (int k = 0; k < m; k += opt->batch)
            RLVR_TRY(sim_decode_batch(run, s, ready + k, m - k < opt->batch ? m - k : opt->batch));
    }
    return 0;
}

static void sim_free(sim_run *run) {
    for (int i = 0; i < run->n; i++) rlvr_rollout_free(&run->rec[i]);
}

/* Bitwise equality of two runs' records: ids, masks, log-probs, entropies. */
static int sim_same(const sim_run *a, const sim_run *b) {
    if (a->n != b->n) return 0;
    for (int i = 0; i < a->n; i++) {
        const rlvr_rollout *x = &a->rec[i], *y = &b->rec[i];
        size_t n = (size_t)x->n_tokens;
        if (x->n_tokens != y->n_tokens || x->stop != y->stop) return 0;
        if (memcmp(x->tokens, y->tokens, n * sizeof *x->tokens) || memcmp(x->mask, y->mask, n) ||
            memcmp(x->logprobs, y->logprobs, n * sizeof(float)) || memcmp(x->entropy, y->entropy, n * sizeof(float)))
            return 0;
    }
    return 1;
}

#endif
