/* tests/io/test_sampler_formats_smollm2.c — how far the fast sampler
 * formats' log-probs are from the trainer's on a real model.
 *
 *   test_sampler_formats_smollm2 CKPT
 *
 * For each [sampler] weights format (f32, bf16, q8_0): four chat prompts,
 * each answered by 96 tokens drawn at τ = 1 (the four decoded together, as
 * a rollout rank does), then every sequence re-scored by the training
 * forward (float32, the kernels of docs/POLICY.md "One forward"); prints the
 * max and mean |sampler − trainer log-prob| over the sampled tokens. f32
 * must be 0 exactly. bf16 and q8_0 must stay within a loose bound: a
 * kernel reading a wrong channel, block or scale moves log-probs by nats,
 * not hundredths. */
#include "core/error.h"
#include "io/checkpoint.h"
#include "policy/model.h"
#include "policy/sampler.h"
#include "policy/template.h"
#include "policy/tokenizer.h"
#include "test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SEQS = 4, NEW = 96, MAX_PROMPT = 128 };

static const char *const prompts[SEQS] = {
    "What is the capital of France?",
    "Write a short poem about the sea.",
    "Explain what a hash table is in two sentences.",
    "List three prime numbers greater than 100.",
};

typedef struct {
    int32_t ids[MAX_PROMPT + NEW];
    int32_t n_prompt, n;
    float logprob[NEW]; /* the sampler's, of ids[n_prompt + k] */
} sequence;

static int render(sequence *q, const rlvr_tokenizer *tok, const char *text) {
    rlvr_token_buf b = {0};
    int rc = rlvr_template_begin(&b, tok);
    if (rc == 0) rc = rlvr_template_message(&b, tok, RLVR_ROLE_USER, text, strlen(text));
    if (rc == 0) rc = rlvr_template_assistant_start(&b, tok);
    if (rc == 0 && b.n > MAX_PROMPT) rc = RLVR_FAIL(RLVR_ELIMIT, "prompt of %d tokens", b.n);
    if (rc == 0) {
        memcpy(q->ids, b.ids, (size_t)b.n * sizeof(int32_t));
        q->n_prompt = q->n = b.n;
    }
    rlvr_token_buf_free(&b);
    return rc;
}

/* Samples NEW tokens per prompt in format w (stop tokens ignored: every
 * sequence is NEW tokens long). */
static int sample(rlvr_model *m, const rlvr_tokenizer *tok, rlvr_sampler_weights w, sequence *seq) {
    rlvr_sampler_config sc;
    rlvr_sampler_config_default(&sc);
    sc.kv_slots = SEQS;
    sc.context = MAX_PROMPT + NEW + 1;
    sc.max_new_tokens = 0;
    sc.seed = 2024;
    sc.weights = w;
    rlvr_sampler *s = NULL;
    RLVR_TRY(rlvr_sampler_new(&s, m, &sc));
    int rc = 0;
    int32_t slots[SEQS];
    for (int i = 0; i < SEQS && rc == 0; i++) {
        slots[i] = i;
        rc = render(&seq[i], tok, prompts[i]);
        if (rc == 0) rc = rlvr_sampler_reset(s, i, 0, (uint32_t)i);
        if (rc == 0) rc = rlvr_sampler_prefill(s, i, seq[i].ids, seq[i].n);
    }
    for (int k = 0; k < NEW && rc == 0; k++) {
        rlvr_sample out[SEQS];
        rc = rlvr_sampler_decode(s, slots, SEQS, out);
        for (int i = 0; i < SEQS && rc == 0; i++) {
            seq[i].logprob[k] = out[i].logprob;
            seq[i].ids[seq[i].n++] = out[i].token;
        }
    }
    rlvr_sampler_free(s);
    return rc;
}

/* The trainer's log-probs of the sampled tokens against the sampler's. */
static int rescore(rlvr_model *m, const sequence *seq, double *max_d, double *mean_d) {
    int32_t offsets[SEQS + 1] = {0};
    for (int i = 0; i < SEQS; i++) offsets[i + 1] = offsets[i] + seq[i].n;
    int32_t *ids = malloc((size_t)offsets[SEQS] * sizeof *ids);
    float *lp = malloc((size_t)offsets[SEQS] * sizeof *lp);
    int rc = ids && lp ? 0 : RLVR_FAIL(RLVR_ENOMEM, "rescore: out of memory");
    for (int i = 0; i < SEQS && rc == 0; i++) memcpy(ids + offsets[i], seq[i].ids, (size_t)seq[i].n * sizeof *ids);
    rlvr_batch b = {.n_seqs = SEQS, .offsets = offsets, .tokens = ids};
    if (rc == 0) rc = rlvr_model_forward(m, &b, 1.0f, lp, NULL);
    double sum = 0.0;
    *max_d = 0.0;
    for (int i = 0; i < SEQS && rc == 0; i++)
        for (int k = 0; k < NEW; k++) {
            double d = fabs((double)lp[offsets[i] + seq[i].n_prompt + k - 1] - seq[i].logprob[k]);
            sum += d;
            if (d > *max_d) *max_d = d;
        }
    *mean_d = sum / (SEQS * NEW);
    free(ids);
    free(lp);
    return rc;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: test_sampler_formats_smollm2 CKPT\n");
        return 2;
    }
    rlvr_checkpoint *ck = NULL;
    rlvr_model *m = NULL;
    rlvr_tokenizer *tok = NULL;
    CHECK_OK(rlvr_checkpoint_open(&ck, argv[1]));
    if (ck) CHECK_OK(rlvr_checkpoint_load_model(ck, &m));
    if (ck) CHECK_OK(rlvr_checkpoint_read_tokenizer(ck, &tok));
    static sequence seq[SEQS];
    for (int w = 0; m && tok && w < 3; w++) {
        double max_d = 0.0, mean_d = 0.0;
        CHECK_OK(sample(m, tok, (rlvr_sampler_weights)w, seq));
        CHECK_OK(rescore(m, seq, &max_d, &mean_d));
        printf("%-4s (%s): |sampler - trainer log-prob| over %d sampled tokens: max %.4f, mean %.4f\n",
               rlvr_sampler_weights_name((rlvr_sampler_weights)w),
               rlvr_sampler_weights_kernel((rlvr_sampler_weights)w), SEQS * NEW, max_d, mean_d);
        if (w == RLVR_SAMPLER_WEIGHTS_F32)
            CHECK_MSG(max_d == 0.0, "f32 log-probs differ from the trainer's by %.3g", max_d);
        else /* a broken kernel gives a mean above 1 */
            CHECK_MSG(mean_d < 0.2 && max_d > 0.0, "%s log-probs: mean |difference| %.3g",
                      rlvr_sampler_weights_name((rlvr_sampler_weights)w), mean_d);
    }
    rlvr_tokenizer_free(tok);
    rlvr_model_free(m);
    rlvr_checkpoint_close(ck);
    return test_summary("test_sampler_formats_smollm2");
}
