/* tests/train/test_generate.c — a checkpoint's model answering a person
 * (train/generate.h, train/conversation.h), against the training forward.
 *
 *   test_generate [CKPT]
 *
 * Without CKPT it writes a small random-weights checkpoint (byte tokenizer)
 * and runs every check on it; with one (the SmolLM2 reference test) it runs
 * the generation checks on that model:
 * - every sampled token's log-prob and entropy equal the training forward's
 *   at the same temperature within 1e-5 (τ = 1 for greedy), and greedy
 *   tokens are the forward's argmax;
 * - the same seed gives the same samples, and sample 0 of n is the sample
 *   of n = 1; a prompt that continues the last one (a chat's next turn)
 *   gives what a fresh generator gives;
 * - top-p draws only from the nucleus, computed here by sorting (and the
 *   same check finds tokens outside it when top-p is off, so it can fail);
 * - a conversation leaves its oldest turns out when the context fills, its
 *   prompt is the rendering of the turns kept, it refuses a message longer
 *   than the context without changing, and it saves as JSON messages. */
#include "core/error.h"
#include "io/checkpoint.h"
#include "policy/model.h"
#include "test.h"
#include "train_fixtures.h"
#include "train/conversation.h"
#include "train/generate.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOGPROB_TOL 1e-5

static int write_random_checkpoint(const char *dir, char *path, size_t cap) {
    rlvr_tokenizer *tok = NULL;
    rlvr_model *m = NULL;
    int rc = rlvr_tokenizer_new_byte(&tok);
    if (rc == 0) {
        rlvr_model_config c = {.vocab = rlvr_tokenizer_vocab_size(tok), .d_model = 32, .n_layers = 2, .n_heads = 4,
                               .n_kv_heads = 2, .d_ff = 64, .max_seq = 256, .rope_theta = 10000.0f,
                               .norm_eps = 1e-5f, .init_seed = 11, .init_std = 0.2f};
        rc = rlvr_model_new(&m, &c);
    }
    if (rc == 0) rc = fixture_save_checkpoint(dir, m, tok, path, cap);
    rlvr_model_free(m);
    rlvr_tokenizer_free(tok);
    return rc;
}

static rlvr_generator *open_gen(const char *ckpt, float temperature, float top_p, int samples, int32_t max_new,
                                int32_t context) {
    rlvr_generate_options o;
    rlvr_generate_options_default(&o);
    o.checkpoint = ckpt;
    o.temperature = temperature;
    o.top_p = top_p;
    o.seed = 5;
    o.samples = samples;
    o.max_new = max_new;
    o.context = context;
    rlvr_generator *g = NULL;
    CHECK_OK(rlvr_generator_open(&g, &o));
    return g;
}

/* The training forward over prompt + sample at temperature tau: its
 * log-probs and entropies of the sampled tokens, and (greedy) its argmax. */
static void check_against_forward(rlvr_model *m, const rlvr_token_buf *prompt, const rlvr_generation *s, float tau,
                                  bool greedy) {
    int32_t T = prompt->n + s->n;
    int32_t *tokens = malloc((size_t)T * sizeof *tokens);
    float *lp = malloc((size_t)T * sizeof *lp), *h = malloc((size_t)T * sizeof *h);
    memcpy(tokens, prompt->ids, (size_t)prompt->n * sizeof *tokens);
    memcpy(tokens + prompt->n, s->ids, (size_t)s->n * sizeof *tokens);
    int32_t offsets[2] = {0, T};
    rlvr_batch batch = {.n_seqs = 1, .offsets = offsets, .tokens = tokens};
    CHECK_OK(rlvr_model_forward(m, &batch, tau, lp, h));
    int V = rlvr_model_config_of(m)->vocab;
    double worst = 0.0;
    int argmax_misses = 0;
    for (int32_t i = 0; i < s->n; i++) {
        int32_t t = prompt->n + i - 1; /* the position that predicts sample token i */
        double d = fabs((double)lp[t] - s->logprobs[i]), dh = fabs((double)h[t] - s->entropies[i]);
        if (d > worst) worst = d;
        if (dh > worst) worst = dh;
        if (greedy) {
            const float *row = rlvr_model_logits(m) + (size_t)t * V;
            int32_t best = 0;
            for (int v = 1; v < V; v++)
                if (row[v] > row[best]) best = v;
            argmax_misses += best != s->ids[i];
        }
    }
    CHECK_MSG(worst <= LOGPROB_TOL, "sampler vs training forward: max |delta| %.3g over %d tokens (tau %g)", worst,
              (int)s->n, (double)tau);
    CHECK_MSG(argmax_misses == 0, "%d greedy tokens are not the forward's argmax", argmax_misses);
    free(tokens);
    free(lp);
    free(h);
}

static rlvr_model *load_model(const char *ckpt) {
    rlvr_checkpoint *ck = NULL;
    rlvr_model *m = NULL;
    CHECK_OK(rlvr_checkpoint_open(&ck, ckpt));
    if (ck) CHECK_OK(rlvr_checkpoint_load_model(ck, &m));
    rlvr_checkpoint_close(ck);
    return m;
}

static void prompt_of(const rlvr_generator *g, const char *text, rlvr_token_buf *b) {
    rlvr_token_buf_clear(b);
    CHECK_OK(rlvr_generate_prompt(g, true, NULL, text, strlen(text), b));
}

static bool same_sample(const rlvr_generation *a, const rlvr_generation *b) {
    return a->n == b->n && a->stop == b->stop && memcmp(a->ids, b->ids, (size_t)a->n * sizeof *a->ids) == 0 &&
           memcmp(a->logprobs, b->logprobs, (size_t)a->n * sizeof *a->logprobs) == 0;
}

static void test_logprobs_and_determinism(const char *ckpt, rlvr_model *m) {
    const char *q = "What is the capital of France?";
    rlvr_token_buf p = {0};
    rlvr_generation a[3] = {0}, b[3] = {0}, one = {0};
    for (int greedy = 0; greedy <= 1; greedy++) {
        float tau = greedy ? 0.0f : 0.8f;
        rlvr_generator *g = open_gen(ckpt, tau, 1.0f, 3, 24, 0), *g2 = open_gen(ckpt, tau, 1.0f, 3, 24, 0);
        if (!g || !g2) return;
        prompt_of(g, q, &p);
        CHECK_OK(rlvr_generate(g, p.ids, p.n, 3, a, NULL));
        for (int i = 0; i < 3; i++) check_against_forward(m, &p, &a[i], greedy ? 1.0f : tau, greedy);
        CHECK_OK(rlvr_generate(g2, p.ids, p.n, 3, b, NULL));
        for (int i = 0; i < 3; i++) CHECK_MSG(same_sample(&a[i], &b[i]), "sample %d differs between two runs", i);
        CHECK_OK(rlvr_generate(g2, p.ids, p.n, 1, &one, NULL));
        CHECK_MSG(same_sample(&a[0], &one), "sample 0 of 3 differs from the sample of 1");
        if (!greedy) CHECK_MSG(!same_sample(&a[0], &a[1]) || !same_sample(&a[1], &a[2]), "three samples all equal");
        rlvr_generator_free(g);
        rlvr_generator_free(g2);
    }
    for (int i = 0; i < 3; i++) {
        rlvr_generation_free(&a[i]);
        rlvr_generation_free(&b[i]);
    }
    rlvr_generation_free(&one);
    rlvr_token_buf_free(&p);
}

/* A chat's next turn: the held rows reused give what a fresh generator gives. */
static void test_continuation(const char *ckpt) {
    rlvr_generator *g = open_gen(ckpt, 0.9f, 1.0f, 1, 12, 0), *fresh = open_gen(ckpt, 0.9f, 1.0f, 1, 12, 0);
    if (!g || !fresh) return;
    rlvr_token_buf p = {0};
    rlvr_generation s = {0}, t = {0}, u = {0};
    prompt_of(g, "Say something.", &p);
    CHECK_OK(rlvr_generate(g, p.ids, p.n, 1, &s, NULL));
    rlvr_token_buf longer = {0};
    for (int32_t i = 0; i < p.n; i++) CHECK_OK(rlvr_token_buf_push(&longer, p.ids[i], 0));
    for (int32_t i = 0; i < s.n; i++) CHECK_OK(rlvr_token_buf_push(&longer, s.ids[i], 1));
    CHECK_OK(rlvr_template_message(&longer, rlvr_generator_tokenizer(g), RLVR_ROLE_USER, "More.", 5));
    CHECK_OK(rlvr_template_assistant_start(&longer, rlvr_generator_tokenizer(g)));
    CHECK_OK(rlvr_generate(g, longer.ids, longer.n, 1, &t, NULL));
    CHECK_OK(rlvr_generate(fresh, longer.ids, longer.n, 1, &u, NULL));
    CHECK_MSG(same_sample(&t, &u), "a continued prompt differs from the same prompt computed afresh");
    rlvr_generation_free(&s);
    rlvr_generation_free(&t);
    rlvr_generation_free(&u);
    rlvr_token_buf_free(&p);
    rlvr_token_buf_free(&longer);
    rlvr_generator_free(g);
    rlvr_generator_free(fresh);
}

static int by_prob_desc(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Tokens of s whose probability (τ = 1) lies below the top-p nucleus of
 * its position, the nucleus found by sorting the forward's probabilities. */
static int outside_nucleus(rlvr_model *m, const rlvr_token_buf *prompt, const rlvr_generation *s, float top_p) {
    int32_t T = prompt->n + s->n;
    int32_t *tokens = malloc((size_t)T * sizeof *tokens);
    memcpy(tokens, prompt->ids, (size_t)prompt->n * sizeof *tokens);
    memcpy(tokens + prompt->n, s->ids, (size_t)s->n * sizeof *tokens);
    int32_t offsets[2] = {0, T};
    rlvr_batch batch = {.n_seqs = 1, .offsets = offsets, .tokens = tokens};
    CHECK_OK(rlvr_model_forward(m, &batch, 1.0f, NULL, NULL));
    int V = rlvr_model_config_of(m)->vocab, outside = 0;
    float *probs = malloc((size_t)V * sizeof *probs), *sorted = malloc((size_t)V * sizeof *sorted);
    for (int32_t i = 0; i < s->n; i++) {
        const float *row = rlvr_model_logits(m) + (size_t)(prompt->n + i - 1) * V;
        double zmax = row[0], sum = 0.0;
        for (int v = 1; v < V; v++) zmax = row[v] > zmax ? row[v] : zmax;
        for (int v = 0; v < V; v++) sum += exp((double)row[v] - zmax);
        for (int v = 0; v < V; v++) sorted[v] = probs[v] = (float)(exp((double)row[v] - zmax) / sum);
        qsort(sorted, (size_t)V, sizeof *sorted, by_prob_desc);
        double cum = 0.0;
        int k = 0;
        while (k < V && cum < top_p) cum += sorted[k++];
        /* a little slack for the float sums in another order */
        if (probs[s->ids[i]] < sorted[k - 1] * (1.0f - 1e-4f)) outside++;
    }
    free(probs);
    free(sorted);
    free(tokens);
    return outside;
}

static void test_top_p(const char *ckpt, rlvr_model *m) {
    rlvr_generator *nucleus = open_gen(ckpt, 1.0f, 0.5f, 4, 32, 0), *full = open_gen(ckpt, 1.0f, 1.0f, 4, 32, 0);
    if (!nucleus || !full) return;
    rlvr_token_buf p = {0};
    rlvr_generation a[4] = {0}, b[4] = {0};
    prompt_of(nucleus, "Tell me a story.", &p);
    CHECK_OK(rlvr_generate(nucleus, p.ids, p.n, 4, a, NULL));
    CHECK_OK(rlvr_generate(full, p.ids, p.n, 4, b, NULL));
    int in = 0, control = 0;
    for (int i = 0; i < 4; i++) {
        in += outside_nucleus(m, &p, &a[i], 0.5f);
        control += outside_nucleus(m, &p, &b[i], 0.5f);
        check_against_forward(m, &p, &a[i], 1.0f, false); /* the model's log-probs, not the nucleus' */
    }
    CHECK_MSG(in == 0, "top-p 0.5 drew %d tokens outside the nucleus", in);
    CHECK_MSG(control > 0, "control: without top-p no token fell outside the 0.5 nucleus, so the check cannot fail");
    for (int i = 0; i < 4; i++) {
        rlvr_generation_free(&a[i]);
        rlvr_generation_free(&b[i]);
    }
    rlvr_token_buf_free(&p);
    rlvr_generator_free(nucleus);
    rlvr_generator_free(full);
}

/* The turns kept, rendered here from the saved messages' text. */
static void render_kept(const rlvr_tokenizer *t, json_t *msgs, size_t from, const char *user, rlvr_token_buf *b) {
    rlvr_token_buf_clear(b);
    CHECK_OK(rlvr_template_begin(b, t));
    for (size_t i = from; i < json_array_size(msgs); i++) {
        json_t *m = json_array_get(msgs, i);
        const char *role = json_string_value(json_object_get(m, "role")),
                   *text = json_string_value(json_object_get(m, "content"));
        CHECK_OK(rlvr_template_message(b, t, strcmp(role, "user") == 0 ? RLVR_ROLE_USER : RLVR_ROLE_ASSISTANT, text,
                                       strlen(text)));
    }
    CHECK_OK(rlvr_template_message(b, t, RLVR_ROLE_USER, user, strlen(user)));
    CHECK_OK(rlvr_template_assistant_start(b, t));
}

static void test_conversation(const char *ckpt, const char *dir) {
    rlvr_generator *g = open_gen(ckpt, 1.0f, 1.0f, 1, 16, 96);
    rlvr_conversation *c = NULL;
    if (!g) return;
    CHECK_OK(rlvr_conversation_new(&c, g, NULL));
    if (!c) return;
    char save[4200];
    snprintf(save, sizeof save, "%s/chat.json", dir);
    rlvr_conversation_turn t = {0};
    rlvr_token_buf want = {0};
    int dropped = 0;
    const char *lines[] = {"hello there", "what is 2 + 2?", "and 3 + 3?", "thanks, bye"};
    for (int k = 0; k < 4; k++) {
        /* the saved conversation before this turn, and the turns kept */
        CHECK_OK(rlvr_conversation_save(c, save));
        json_t *msgs = json_load_file(save, 0, NULL);
        CHECK(json_is_array(msgs) && json_array_size(msgs) == (size_t)(2 * k));
        CHECK_OK(rlvr_conversation_reply(c, lines[k], strlen(lines[k]), NULL, &t));
        dropped += t.dropped;
        render_kept(rlvr_generator_tokenizer(g), msgs, (size_t)(2 * dropped), lines[k], &want);
        CHECK_MSG(t.n_prompt == want.n && memcmp(t.prompt, want.ids, (size_t)want.n * sizeof *want.ids) == 0,
                  "turn %d: the prompt is not the rendering of the %d turns kept", k, k - dropped);
        CHECK(t.n_prompt + 16 <= 96 || dropped == k);
        json_decref(msgs);
    }
    CHECK_MSG(dropped > 0, "four turns in a context of 96 tokens left nothing out");
    CHECK(rlvr_conversation_turns(c) == 4);
    /* a message longer than the context: refused, the conversation unchanged */
    char longer[200];
    memset(longer, 'x', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    CHECK(rlvr_conversation_reply(c, longer, strlen(longer), NULL, &t) == RLVR_ELIMIT);
    CHECK(rlvr_conversation_turns(c) == 4);
    CHECK_OK(rlvr_conversation_set_system(c, "be brief"));
    CHECK_OK(rlvr_conversation_save(c, save));
    json_t *msgs = json_load_file(save, 0, NULL);
    CHECK(json_array_size(msgs) == 9);
    json_t *first = json_array_get(msgs, 0), *last = json_array_get(msgs, 8);
    CHECK(first && strcmp(json_string_value(json_object_get(first, "role")), "system") == 0);
    CHECK(last && strcmp(json_string_value(json_object_get(last, "role")), "assistant") == 0);
    json_decref(msgs);
    rlvr_conversation_reset(c);
    CHECK(rlvr_conversation_turns(c) == 0);
    rlvr_conversation_turn_free(&t);
    rlvr_token_buf_free(&want);
    rlvr_conversation_free(c);
    rlvr_generator_free(g);
    unlink(save);
}

int main(int argc, char **argv) {
    char dir[] = "/tmp/rlvr-test-generate-XXXXXX", path[4200];
    if (!mkdtemp(dir)) return 1;
    const char *ckpt = argc > 1 ? argv[1] : NULL;
    if (!ckpt) {
        CHECK_OK(write_random_checkpoint(dir, path, sizeof path));
        ckpt = path;
    }
    rlvr_model *m = load_model(ckpt);
    if (m) {
        test_logprobs_and_determinism(ckpt, m);
        test_continuation(ckpt);
        test_top_p(ckpt, m);
        if (argc == 1) test_conversation(ckpt, dir);
    }
    rlvr_model_free(m);
    if (argc == 1) unlink(path);
    rmdir(dir);
    return test_summary("test_generate");
}
