/* tests/policy/test_sampler.c — the sampler against the trainer.
 *
 * Multi-turn rollouts sampled with tool observations prefilled between
 * policy turns are re-scored by the training forward pass
 * (rlvr_model_forward over the packed batch at the same temperature); every
 * recorded sampling log-prob matches (the requirement is 2e-5 absolute; the
 * training forward computes with the sampler's kernels, so it is checked
 * bit for bit, entropies too, at temperatures 1, 0.7 and 0.3, and for a
 * model with q/k/v biases and Llama-3 RoPE scaling). Group prefix
 * sharing (fork) gives the same tokens and log-probs as unshared decoding,
 * bit for bit. Also: the draw follows the distribution, a prefill split into
 * pieces equals one prefill, new weights are seen by the next call, and the
 * slot state machine refuses misuse.
 *
 * The fast weight formats ([sampler] weights = bf16, q8_0) run the same
 * checks of sharing, prefill pieces, copy-on-write and weight updates bit
 * for bit; their log-probs differ from the trainer's float32 ones, and the
 * test prints the max and mean |sampler − trainer| per format and checks
 * them against a loose bound that a broken kernel would exceed. */
#include "core/rng.h"
#include "policy/sampler.h"
#include "policy/template.h"
#include "sampler_sim.h"
#include "test.h"

#include <stdbool.h>

/* The format every sampler of the test is made with (main runs each). */
static rlvr_sampler_weights weights_under_test = RLVR_SAMPLER_WEIGHTS_F32;

static rlvr_model *make_model_shaped(bool tied, uint64_t seed, int d_model, int n_heads, int n_kv_heads) {
    rlvr_model_config cfg = {
        .vocab = 280, .d_model = d_model, .n_layers = 2, .n_heads = n_heads, .n_kv_heads = n_kv_heads, .d_ff = 172,
        .max_seq = 256, .rope_theta = 10000.0f, .norm_eps = 1e-5f, .tie_embeddings = tied,
        .init_seed = seed, .init_std = 0.2f, /* logits ~ N(0, 1.6²): peaked enough to be demanding */
    };
    rlvr_model *m = NULL;
    CHECK_OK(rlvr_model_new(&m, &cfg));
    return m;
}

/* A Qwen2-like model: q/k/v biases (random, so that they matter) and
 * Llama-3 RoPE scaling whose bands all hold some of the 8 pair frequencies
 * of head size 16 (wavelengths 6 … 20000 against 256/8 and 256/1). */
static rlvr_model *make_model_extras(uint64_t seed) {
    rlvr_model_config cfg = {
        .vocab = 280, .d_model = 64, .n_layers = 2, .n_heads = 4, .n_kv_heads = 2, .d_ff = 172, .max_seq = 256,
        .rope_theta = 10000.0f, .norm_eps = 1e-5f, .init_seed = seed, .init_std = 0.2f, .qkv_bias = true,
        .rope_scaling = {RLVR_ROPE_SCALING_LLAMA3, 8.0f, 1.0f, 8.0f, 256},
    };
    rlvr_model *m = NULL;
    CHECK_OK(rlvr_model_new(&m, &cfg));
    if (!m) return NULL;
    const rlvr_param_views *v = rlvr_model_param_views(m);
    rlvr_rng_stream s;
    rlvr_rng_stream_init(&s, seed, RLVR_RNG_TEST, 0, 3);
    for (int i = 0; i < cfg.n_layers * cfg.d_model; i++) v->bq[i] = 0.5f * (float)rlvr_rng_next_normal(&s);
    for (int i = 0; i < cfg.n_layers * 32; i++) {
        v->bk[i] = 0.5f * (float)rlvr_rng_next_normal(&s);
        v->bv[i] = 0.5f * (float)rlvr_rng_next_normal(&s);
    }
    return m;
}

/* Head size 16: 4 query heads, 2 KV heads. */
static rlvr_model *make_model(bool tied, uint64_t seed) { return make_model_shaped(tied, seed, 64, 4, 2); }

static rlvr_sampler *make_sampler(const rlvr_model *m, float temperature, int slots, int context) {
    rlvr_sampler_config sc;
    rlvr_sampler_config_default(&sc);
    sc.temperature = temperature;
    sc.kv_slots = slots;
    sc.context = context;
    sc.max_new_tokens = 16;
    sc.seed = 0x5eed5eedULL;
    sc.weights = weights_under_test;
    rlvr_sampler *s = NULL;
    CHECK_OK(rlvr_sampler_new(&s, m, &sc));
    return s;
}

/* End of turn, end of episode, and a few common bytes so that some turns end
 * by a stop token and others by their limit. */
static void set_stops(rlvr_sampler *s, const rlvr_tokenizer *t) {
    int32_t ids[RLVR_TEMPLATE_MAX_STOPS + 9]; /* the stops and the 9 bytes below */
    int n = rlvr_template_stop_tokens(t, ids);
    const char *bytes = "e .\n;)0ta";
    for (const char *p = bytes; *p; p++) ids[n++] = (unsigned char)*p;
    CHECK_OK(rlvr_sampler_set_stop_tokens(s, ids, n));
}

/* Re-scores every record with the training forward; returns the largest
 * |Δ log-prob| over policy tokens (their mean in *mean_dlp) and the largest
 * |Δ entropy|. */
static double rescore(rlvr_model *m, const sim_run *run, float temperature, double *max_dent, double *mean_dlp) {
    int32_t offsets[SIM_MAX + 1] = {0};
    for (int i = 0; i < run->n; i++) offsets[i + 1] = offsets[i] + run->rec[i].n_tokens;
    int32_t total = offsets[run->n];
    int32_t *tokens = malloc((size_t)total * sizeof *tokens);
    float *lp = malloc((size_t)total * sizeof *lp), *ent = malloc((size_t)total * sizeof *ent);
    for (int i = 0; i < run->n; i++)
        memcpy(tokens + offsets[i], run->rec[i].tokens, (size_t)run->rec[i].n_tokens * sizeof *tokens);
    rlvr_batch batch = {.n_seqs = run->n, .offsets = offsets, .tokens = tokens};
    CHECK_OK(rlvr_model_forward(m, &batch, temperature, lp, ent));
    double max_dlp = 0.0, sum_dlp = 0.0;
    int counted = 0;
    *max_dent = 0.0;
    for (int i = 0; i < run->n; i++) {
        const rlvr_rollout *r = &run->rec[i];
        for (int k = 1; k < r->n_tokens; k++) {
            if (r->mask[k] != RLVR_TOKEN_POLICY) continue;
            size_t at = (size_t)offsets[i] + (size_t)k - 1; /* the position predicting token k */
            double d = fabs((double)lp[at] - r->logprobs[k]);
            double e = fabs((double)ent[at] - r->entropy[k]);
            if (d > max_dlp) max_dlp = d;
            if (e > *max_dent) *max_dent = e;
            sum_dlp += d;
            counted++;
        }
    }
    *mean_dlp = counted ? sum_dlp / counted : 0.0;
    free(tokens);
    free(lp);
    free(ent);
    return max_dlp;
}

/* The run must really interleave: policy tokens right after observations,
 * stops by token and by limit. */
static void check_coverage(const sim_run *run, const rlvr_tokenizer *t) {
    int after_obs = 0, policy = 0, obs = 0;
    for (int i = 0; i < run->n; i++) {
        const rlvr_rollout *r = &run->rec[i];
        for (int k = 1; k < r->n_tokens; k++) {
            policy += r->mask[k] == RLVR_TOKEN_POLICY;
            obs += r->mask[k] == RLVR_TOKEN_OBSERVATION;
            after_obs += r->mask[k] == RLVR_TOKEN_POLICY && r->mask[k - 1] == RLVR_TOKEN_OBSERVATION;
        }
        CHECK(r->prompt_tokens > 0 && r->mask[0] == RLVR_TOKEN_PROMPT);
        CHECK(r->tokens[r->prompt_tokens - 1] == rlvr_tokenizer_special(t, RLVR_SPECIAL_ASSISTANT));
    }
    CHECK_MSG(policy > 50 && obs > 50 && after_obs >= run->n, "policy %d, observation %d, after_obs %d", policy,
              obs, after_obs);
}

static void test_agreement(rlvr_model *m, bool tied, float temperature, const rlvr_tokenizer *t) {
    if (!m) return;
    CHECK_OK(rlvr_tokenizer_check_model(t, rlvr_model_config_of(m)));
    rlvr_sampler *s = make_sampler(m, temperature, 8, 200);
    if (!s) {
        rlvr_model_free(m);
        return;
    }
    set_stops(s, t);

    sim_run shared = {.n = 8, .group_size = 4, .turns = 3, .step = 5, .tok = t};
    sim_options so = {.batch = 8, .order = 0, .share_prompt = true};
    CHECK_OK(sim_execute(&shared, s, &so));
    check_coverage(&shared, t);

    double max_dent = 0.0, mean_dlp = 0.0;
    double max_dlp = rescore(m, &shared, temperature, &max_dent, &mean_dlp);
    const char *fmt = rlvr_sampler_weights_name(weights_under_test);
    printf("agreement %-4s (tied=%d, tau=%.2f, head size %d): |sampler - trainer log-prob| max %.3g mean %.3g, "
           "max |dentropy| = %.3g\n",
           fmt, tied, (double)temperature, rlvr_model_config_of(m)->d_model / rlvr_model_config_of(m)->n_heads,
           max_dlp, mean_dlp, max_dent);
    if (rlvr_sampler_exact(rlvr_sampler_config_of(s))) {
        CHECK_MSG(max_dlp == 0.0, "sampling log-probs differ from the trainer's by %.3g", max_dlp);
        CHECK_MSG(max_dent == 0.0, "sampling entropies differ from the trainer's by %.3g", max_dent);
    } else {
        /* bf16 rounds each weight and activation by up to 2^-9 of itself,
         * q8_0 by up to 1/254 of its block's largest; over two layers and
         * the head the logits (spread 1.6 here) move by a few hundredths:
         * mean |Δ| about 0.02 (bf16) and 0.05 (q8_0). A kernel that reads
         * the wrong channel, block or scale moves them by their spread (a
         * mean near 1). */
        CHECK_MSG(max_dlp < 1.0 && mean_dlp < 0.15, "%s log-probs %.3g from the trainer's (mean %.3g)", fmt, max_dlp,
                  mean_dlp);
        CHECK_MSG(max_dent < 0.5, "%s entropies %.3g from the trainer's", fmt, max_dent);
        CHECK_MSG(max_dlp > 0.0, "%s log-probs equal the float32 trainer's: the format is not in use", fmt);
    }

    /* the same group without sharing: each rollout prefills its own prompt */
    sim_run alone = {.n = 8, .group_size = 4, .turns = 3, .step = 5, .tok = t};
    sim_options uo = {.batch = 8, .order = 0, .share_prompt = false};
    CHECK_OK(sim_execute(&alone, s, &uo));
    CHECK_MSG(sim_same(&shared, &alone), "shared-prefix rollouts differ from unshared ones");

    /* sharing must matter only through the prompt: rollouts of a group differ */
    CHECK(shared.rec[0].n_tokens != shared.rec[1].n_tokens ||
          memcmp(shared.rec[0].tokens, shared.rec[1].tokens, (size_t)shared.rec[0].n_tokens * 4) != 0);
    sim_free(&shared);
    sim_free(&alone);
    rlvr_sampler_free(s);
    rlvr_model_free(m);
}

/* Over many sequence ids the mean sampled log-prob estimates −H. */
static void test_distribution(const rlvr_tokenizer *t) {
    rlvr_model *m = make_model(false, 3);
    rlvr_sampler *s = make_sampler(m, 1.0f, 2, 128);
    rlvr_token_buf b = {0};
    sim_render_prompt(&b, t, 0);
    CHECK_OK(rlvr_sampler_reset(s, 0, 0, 0));
    CHECK_OK(rlvr_sampler_prefill(s, 0, b.ids, b.n));
    enum { DRAWS = 4000 };
    double sum = 0.0, sum2 = 0.0, H = 0.0;
    int32_t slot = 1;
    for (int i = 0; i < DRAWS; i++) {
        rlvr_sample out;
        CHECK_OK(rlvr_sampler_fork(s, 1, 0, (uint32_t)i + 1));
        CHECK_OK(rlvr_sampler_decode(s, &slot, 1, &out));
        sum += out.logprob;
        sum2 += (double)out.logprob * out.logprob;
        H = out.entropy;
    }
    double mean = sum / DRAWS, sd = sqrt(sum2 / DRAWS - mean * mean);
    printf("distribution: mean log-prob %.4f, -entropy %.4f, sd %.3f\n", mean, -H, sd);
    CHECK_MSG(fabs(mean + H) < 5.0 * sd / sqrt((double)DRAWS), "mean %.4f vs -H %.4f", mean, -H);
    rlvr_token_buf_free(&b);
    rlvr_sampler_free(s);
    rlvr_model_free(m);
}

/* One prefill equals the same tokens prefilled in pieces, bit for bit. */
static void test_prefill_pieces(const rlvr_tokenizer *t) {
    rlvr_model *m = make_model(false, 5);
    rlvr_sampler *s = make_sampler(m, 0.9f, 2, 256);
    rlvr_token_buf b = {0};
    sim_render_prompt(&b, t, 3);
    while (b.n < 150) rlvr_token_buf_push(&b, 'a' + b.n % 26, RLVR_TOKEN_PROMPT); /* > one prefill chunk */
    CHECK_OK(rlvr_sampler_reset(s, 0, 1, 42));
    CHECK_OK(rlvr_sampler_prefill(s, 0, b.ids, b.n));
    CHECK_OK(rlvr_sampler_reset(s, 1, 1, 42));
    int cuts[] = {0, 1, 2, 70, 71, 140, b.n};
    for (int c = 0; c + 1 < (int)(sizeof cuts / sizeof cuts[0]); c++)
        CHECK_OK(rlvr_sampler_prefill(s, 1, b.ids + cuts[c], cuts[c + 1] - cuts[c]));
    CHECK(rlvr_sampler_len(s, 0) == b.n && rlvr_sampler_len(s, 1) == b.n);
    int same = 1;
    for (int step = 0; step < 20; step++) {
        int32_t slots[2] = {0, 1};
        rlvr_sample out[2];
        CHECK_OK(rlvr_sampler_decode(s, slots, 2, out));
        same &= out[0].token == out[1].token && memcmp(&out[0].logprob, &out[1].logprob, sizeof(float)) == 0 &&
                out[0].position == b.n + step;
        if (out[0].stop) break;
    }
    CHECK(same);
    rlvr_token_buf_free(&b);
    rlvr_sampler_free(s);
    rlvr_model_free(m);
}

/* A slot's token history, to rebuild it unshared. */
typedef struct {
    int32_t ids[512];
    int n;
} history;

static void decode_into(rlvr_sampler *s, int32_t slot, history *h, rlvr_sample *out) {
    CHECK_OK(rlvr_sampler_decode(s, &slot, 1, out));
    h->ids[h->n++] = out->token;
}

/* Decodes `steps` tokens in `slot` and in a fresh unshared `ref` slot
 * prefilled with the same history and sequence id; all must agree bitwise. */
static int same_continuation(rlvr_sampler *s, int slot, int ref, const history *h, uint32_t seq, int steps) {
    history a = *h, b = *h;
    CHECK_OK(rlvr_sampler_reset(s, ref, 1, seq));
    CHECK_OK(rlvr_sampler_prefill(s, ref, h->ids, h->n));
    int same = 1;
    for (int i = 0; i < steps; i++) {
        rlvr_sample x, y;
        decode_into(s, slot, &a, &x);
        decode_into(s, ref, &b, &y);
        same &= x.token == y.token && memcmp(&x.logprob, &y.logprob, sizeof(float)) == 0 &&
                memcmp(&x.entropy, &y.entropy, sizeof(float)) == 0 && x.position == y.position;
    }
    return same;
}

/* Copy-on-write sharing: forks of forks, the parent overwritten while its
 * readers continue, a fork into a parent's own slot. Every continuation
 * equals the same history prefilled into a slot of its own. */
static void test_copy_on_write(const rlvr_tokenizer *t) {
    rlvr_model *m = make_model(true, 13);
    rlvr_sampler_config sc;
    rlvr_sampler_config_default(&sc);
    sc.kv_slots = 6;
    sc.context = 256;
    sc.max_new_tokens = 0;
    sc.seed = 4;
    sc.weights = weights_under_test;
    rlvr_sampler *s = NULL;
    CHECK_OK(rlvr_sampler_new(&s, m, &sc));
    if (!s) {
        rlvr_model_free(m);
        return;
    }
    history h[4] = {{.n = 0}};
    rlvr_token_buf b = {0};
    sim_render_prompt(&b, t, 1);
    for (int i = 0; i < 4; i++) {
        memcpy(h[i].ids, b.ids, (size_t)b.n * sizeof(int32_t));
        h[i].n = b.n;
    }
    CHECK_OK(rlvr_sampler_reset(s, 0, 1, 100));
    CHECK_OK(rlvr_sampler_prefill(s, 0, b.ids, b.n));
    CHECK_OK(rlvr_sampler_fork(s, 1, 0, 101));
    CHECK_OK(rlvr_sampler_fork(s, 2, 0, 102));
    rlvr_sample out;
    for (int k = 0; k < 6; k++)
        for (int i = 0; i < 3; i++) decode_into(s, i, &h[i], &out);
    /* an observation appended to a reader, then a branch of the reader */
    CHECK_OK(rlvr_sampler_prefill(s, 1, (const int32_t[]){'o', 'k', '\n'}, 3));
    for (int i = 0; i < 3; i++) h[1].ids[h[1].n++] = "ok\n"[i];
    CHECK_OK(rlvr_sampler_fork(s, 3, 1, 103));
    h[3] = h[1];
    /* the parent's slot is reused for something else while 1, 2, 3 live */
    CHECK_OK(rlvr_sampler_reset(s, 0, 9, 9));
    CHECK_OK(rlvr_sampler_prefill(s, 0, (const int32_t[]){5, 6, 7, 8}, 4));
    CHECK(same_continuation(s, 1, 5, &h[1], 101, 8));
    CHECK(same_continuation(s, 2, 5, &h[2], 102, 8));
    CHECK(same_continuation(s, 3, 5, &h[3], 103, 8));

    /* a fork into the slot its source reads from */
    CHECK_OK(rlvr_sampler_reset(s, 0, 1, 200));
    CHECK_OK(rlvr_sampler_prefill(s, 0, b.ids, b.n));
    CHECK_OK(rlvr_sampler_fork(s, 4, 0, 204));
    history h4 = {.n = b.n};
    memcpy(h4.ids, b.ids, (size_t)b.n * sizeof(int32_t));
    for (int k = 0; k < 3; k++) decode_into(s, 4, &h4, &out);
    CHECK_OK(rlvr_sampler_fork(s, 0, 4, 300));
    CHECK(same_continuation(s, 0, 5, &h4, 300, 6));
    CHECK(same_continuation(s, 4, 5, &h4, 204, 6));
    rlvr_token_buf_free(&b);
    rlvr_sampler_free(s);
    rlvr_model_free(m);
}

/* `steps` tokens decoded from a fresh prompt in slot 0 (same step and
 * sequence every time), into out. */
static void decode_fresh(rlvr_sampler *s, const int32_t *prompt, int n, int steps, rlvr_sample *out) {
    int32_t slot = 0;
    CHECK_OK(rlvr_sampler_reset(s, 0, 3, 33));
    CHECK_OK(rlvr_sampler_prefill(s, 0, prompt, n));
    for (int i = 0; i < steps; i++) CHECK_OK(rlvr_sampler_decode(s, &slot, 1, &out[i]));
}

static bool same_samples(const rlvr_sample *a, const rlvr_sample *b, int n) {
    for (int i = 0; i < n; i++)
        if (a[i].token != b[i].token || memcmp(&a[i].logprob, &b[i].logprob, sizeof(float)) != 0 ||
            memcmp(&a[i].entropy, &b[i].entropy, sizeof(float)) != 0)
            return false;
    return true;
}

/* The sampler computes with packed copies of the weights: a change of the
 * model's parameters (as an optimizer step or a checkpoint load makes it,
 * through rlvr_model_params) is seen by the next call, exactly as by a
 * sampler created after the change. */
static void test_weight_update(void) {
    enum { STEPS = 12 };
    rlvr_model *m = make_model(false, 5);
    rlvr_sampler *s = make_sampler(m, 1.0f, 2, 64);
    int32_t prompt[6] = {'a', 'b', 'c', 'd', 'e', 'f'};
    rlvr_sample before[STEPS], after[STEPS], fresh[STEPS];
    decode_fresh(s, prompt, 6, STEPS, before);
    uint64_t v0 = rlvr_model_params_version(m);
    CHECK(rlvr_model_params_read(m) != NULL && rlvr_model_params_version(m) == v0); /* reading is no change */
    float *p = rlvr_model_params(m);
    CHECK(rlvr_model_params_read(m) == p && rlvr_model_params_version(m) != v0);
    for (size_t i = 0; i < rlvr_model_num_params(m); i++) p[i] *= 1.25f; /* sharper logits */
    decode_fresh(s, prompt, 6, STEPS, after);
    rlvr_sampler *s2 = make_sampler(m, 1.0f, 2, 64);
    decode_fresh(s2, prompt, 6, STEPS, fresh);
    CHECK_MSG(same_samples(after, fresh, STEPS), "a sampler did not see its model's new weights");
    CHECK(!same_samples(before, after, STEPS));
    rlvr_sampler_free(s2);
    rlvr_sampler_free(s);
    rlvr_model_free(m);
}

static void test_state_machine(void) {
    rlvr_model *m = make_model(false, 9);
    rlvr_sampler *s = make_sampler(m, 1.0f, 3, 8);
    int32_t toks[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    int32_t slot0 = 0, two[2] = {0, 0};
    rlvr_sample out[2];
    CHECK_OK(rlvr_sampler_reset(s, 0, 0, 1));
    CHECK(rlvr_sampler_decode(s, &slot0, 1, out) == RLVR_ESTATE); /* empty */
    CHECK(rlvr_sampler_prefill(s, 0, toks, 9) == RLVR_ELIMIT);    /* beyond the context */
    CHECK(rlvr_sampler_prefill(s, 0, toks, 0) == RLVR_EINVAL);
    int32_t bad = 280;
    CHECK(rlvr_sampler_prefill(s, 0, &bad, 1) == RLVR_EINVAL);
    CHECK(rlvr_sampler_len(s, 0) == 0);
    CHECK_OK(rlvr_sampler_prefill(s, 0, toks, 5));
    CHECK(rlvr_sampler_decode(s, two, 2, out) == RLVR_EINVAL); /* same slot twice */
    CHECK(rlvr_sampler_fork(s, 0, 0, 2) == RLVR_EINVAL);
    CHECK(rlvr_sampler_fork(s, 2, 1, 2) == RLVR_ESTATE); /* empty source */
    CHECK(rlvr_sampler_reset(s, 3, 0, 0) == RLVR_EINVAL);

    /* turn limit: 2 tokens, then MAX_TOKENS and a refusal until a prefill */
    CHECK_OK(rlvr_sampler_set_turn_limit(s, 0, 2));
    CHECK_OK(rlvr_sampler_decode(s, &slot0, 1, out));
    CHECK(out[0].stop == RLVR_SAMPLE_CONTINUE && out[0].position == 5);
    CHECK_OK(rlvr_sampler_decode(s, &slot0, 1, out));
    CHECK(out[0].stop == RLVR_SAMPLE_MAX_TOKENS && rlvr_sampler_len(s, 0) == 7);
    CHECK(rlvr_sampler_decode(s, &slot0, 1, out) == RLVR_ESTATE);
    /* the last position fills the context */
    CHECK_OK(rlvr_sampler_prefill(s, 0, toks, 1));
    CHECK(rlvr_sampler_len(s, 0) == 8);
    CHECK_OK(rlvr_sampler_decode(s, &slot0, 1, out));
    CHECK(out[0].token == -1 && out[0].stop == RLVR_SAMPLE_CONTEXT);

    /* a stop token is sampled, returned, appended and stops the turn */
    CHECK_OK(rlvr_sampler_reset(s, 1, 0, 9));
    CHECK_OK(rlvr_sampler_prefill(s, 1, toks, 3));
    int32_t all[280];
    for (int i = 0; i < 280; i++) all[i] = i;
    CHECK_OK(rlvr_sampler_set_stop_tokens(s, all, 280));
    int32_t slot1 = 1;
    CHECK_OK(rlvr_sampler_decode(s, &slot1, 1, out));
    CHECK(out[0].token >= 0 && out[0].stop == RLVR_SAMPLE_STOP_TOKEN && rlvr_sampler_len(s, 1) == 4);
    CHECK(rlvr_sampler_set_stop_tokens(s, &bad, 1) == RLVR_EINVAL);

    rlvr_sampler_config sc;

    rlvr_sampler_config_default(&sc);
    rlvr_sampler *s2 = NULL;
    sc.temperature = -1.0f; /* 0 is greedy; below is nothing */
    CHECK(rlvr_sampler_new(&s2, m, &sc) == RLVR_EINVAL && s2 == NULL);
    sc.temperature = 1.0f;
    sc.top_p = 0.0f;
    CHECK(rlvr_sampler_new(&s2, m, &sc) == RLVR_EINVAL && s2 == NULL);
    sc.top_p = 1.5f;
    CHECK(rlvr_sampler_new(&s2, m, &sc) == RLVR_EINVAL && s2 == NULL);
    sc.top_p = 1.0f;
    sc.context = 1000;
    CHECK(rlvr_sampler_new(&s2, m, &sc) == RLVR_EINVAL);
    sc.context = 0;
    sc.version = 99;
    CHECK(rlvr_sampler_new(&s2, m, &sc) == RLVR_EINVAL);
    rlvr_sampler_free(s);
    rlvr_model_free(m);
}

static void test_config_keys(void) {
    const rlvr_config_key *schemas[] = {rlvr_sampler_config_keys, NULL};
    rlvr_config *cfg = NULL;
    const char *text = "[sampler]\ntemperature = 0.7\nmax_new_tokens = 96\nkv_slots = 32\n";
    CHECK_OK(rlvr_config_parse(&cfg, text, "test.ini", schemas));
    rlvr_sampler_config sc;
    rlvr_sampler_config_default(&sc);
    sc.seed = 77;
    if (cfg) CHECK_OK(rlvr_sampler_config_from(&sc, cfg));
    CHECK(fabsf(sc.temperature - 0.7f) < 1e-7f && sc.max_new_tokens == 96 && sc.kv_slots == 32);
    CHECK(sc.context == 0 && sc.seed == 77 && sc.version == RLVR_SAMPLER_CONFIG_VERSION);
    rlvr_model_config mc = {.max_seq = 64};
    if (cfg) CHECK_OK(rlvr_sampler_config_validate(cfg, &mc));
    rlvr_config_free(cfg);
    CHECK_OK(rlvr_config_parse(&cfg, "[sampler]\n\ncontext_tokens = 100\n", "t.ini", schemas));
    if (cfg) CHECK(rlvr_sampler_config_validate(cfg, &mc) == RLVR_ECONFIG);
    CHECK(strstr(rlvr_error_last(), "t.ini:3") != NULL);
    rlvr_config_free(cfg);
    CHECK(rlvr_config_parse(&cfg, "[sampler]\ntemperature = 0\n", "t.ini", schemas) == RLVR_ECONFIG);
    CHECK(rlvr_config_parse(&cfg, "[sampler]\nkv_slot = 4\n", "t.ini", schemas) == RLVR_ECONFIG);
    CHECK(strstr(rlvr_error_last(), "kv_slots") != NULL); /* did you mean */

    /* weights: the default is f32, the only exact format; unknown names are refused */
    CHECK(sc.weights == RLVR_SAMPLER_WEIGHTS_F32 && rlvr_sampler_exact(&sc));
    const char *names[] = {"f32", "bf16", "q8_0"};
    for (int i = 0; i < 3; i++) {
        char text[64];
        snprintf(text, sizeof text, "[sampler]\nweights = %s\n", names[i]);
        CHECK_OK(rlvr_config_parse(&cfg, text, "t.ini", schemas));
        if (cfg) CHECK_OK(rlvr_sampler_config_from(&sc, cfg));
        CHECK((int)sc.weights == i && rlvr_sampler_exact(&sc) == (i == 0));
        CHECK(strcmp(rlvr_sampler_weights_name(sc.weights), names[i]) == 0);
        rlvr_sampler_weights parsed;
        CHECK(rlvr_sampler_weights_parse(names[i], &parsed) == 0 && (int)parsed == i);
        rlvr_config_free(cfg);
        cfg = NULL;
    }
    rlvr_sampler_weights parsed;
    CHECK(rlvr_sampler_weights_parse("q4_0", &parsed) == RLVR_EINVAL);
    CHECK(rlvr_config_parse(&cfg, "[sampler]\nweights = q4_0\n", "t.ini", schemas) == RLVR_ECONFIG);
    CHECK(strstr(rlvr_error_last(), "weights") != NULL);
}

int main(void) {
    rlvr_tokenizer *t = NULL;
    CHECK_OK(rlvr_tokenizer_new_byte(&t));
    if (!t) return test_summary("test_sampler");
    test_agreement(make_model(false, 7), false, 1.0f, t);
    test_agreement(make_model(true, 11), true, 0.7f, t);
    test_agreement(make_model(false, 13), false, 0.3f, t);
    /* head size 24: the kernels' scalar tails (AVX-512) and odd vector
     * counts (AVX2); three query heads per KV head */
    test_agreement(make_model_shaped(false, 17, 72, 3, 1), false, 1.0f, t);
    test_agreement(make_model_extras(19), false, 1.0f, t); /* q/k/v biases and Llama-3 RoPE scaling */
    test_distribution(t);
    test_prefill_pieces(t);
    test_copy_on_write(t);
    test_weight_update();
    test_state_machine();
    test_config_keys();
    /* the fast formats: the trainer mismatch, and every sharing and update guarantee bit for bit */
    rlvr_sampler_weights fast[] = {RLVR_SAMPLER_WEIGHTS_BF16, RLVR_SAMPLER_WEIGHTS_Q8_0};
    for (int i = 0; i < 2; i++) {
        weights_under_test = fast[i];
        test_agreement(make_model(false, 7), false, 1.0f, t);
        test_agreement(make_model(true, 11), true, 0.7f, t);
        test_agreement(make_model_shaped(false, 17, 72, 3, 1), false, 1.0f, t);
        test_agreement(make_model_extras(19), false, 1.0f, t);
        test_prefill_pieces(t);
        test_copy_on_write(t);
        test_weight_update();
    }
    rlvr_tokenizer_free(t);
    return test_summary("test_sampler");
}
