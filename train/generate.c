/* train/generate.c — a checkpoint's model answering a person
 * (train/generate.h). */
#include "train/generate.h"

#include "core/error.h"
#include "core/record.h"
#include "core/sys.h"
#include "core/text.h"
#include "io/checkpoint.h"
#include "train/sampling.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct rlvr_generator {
    rlvr_generate_options opt;
    rlvr_model *model;
    rlvr_tokenizer *tok;
    rlvr_sampler *sampler;
    int32_t stops[RLVR_TEMPLATE_MAX_STOPS];
    int n_stops;
    /* what slot 0 holds: the last call's prompt and sample 0 (a chat's
     * next turn continues from it instead of computing it again) */
    int32_t *held;
    int32_t n_held, cap_held;
    /* per sample: its text's bytes already given to on_text */
    size_t *streamed;
    char *text;        /* decode scratch for on_text */
    size_t text_cap;
};

void rlvr_generate_options_default(rlvr_generate_options *o) {
    *o = (rlvr_generate_options){.temperature = 1.0f, .top_p = 1.0f, .seed = 1, .max_new = 256, .samples = 1};
}

const char *rlvr_generate_stop_name(rlvr_generate_stop s) {
    static const char *const names[] = {"stop", "length", "context", "interrupted"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "?";
}

void rlvr_generation_free(rlvr_generation *g) {
    free(g->ids);
    free(g->logprobs);
    free(g->entropies);
    memset(g, 0, sizeof *g);
}

static int generation_push(rlvr_generation *g, const rlvr_sample *s) {
    if (g->n == g->cap) {
        int32_t cap = g->cap ? 2 * g->cap : 64;
        int32_t *ids = realloc(g->ids, (size_t)cap * sizeof *ids);
        if (ids) g->ids = ids;
        float *lp = realloc(g->logprobs, (size_t)cap * sizeof *lp);
        if (lp) g->logprobs = lp;
        float *h = realloc(g->entropies, (size_t)cap * sizeof *h);
        if (h) g->entropies = h;
        if (!ids || !lp || !h) return RLVR_FAIL(RLVR_ENOMEM, "generate: out of memory for %d tokens", (int)cap);
        g->cap = cap;
    }
    g->ids[g->n] = s->token;
    g->logprobs[g->n] = s->logprob;
    g->entropies[g->n] = s->entropy;
    g->n++;
    return 0;
}

/* ---- opening ------------------------------------------------------------------ */

static int check_options(const rlvr_generate_options *o) {
    if (!o->checkpoint || !o->checkpoint[0]) return RLVR_FAIL(RLVR_EINVAL, "generate: no checkpoint given");
    if (!(o->temperature >= 0.0f) || !isfinite(o->temperature))
        return RLVR_FAIL(RLVR_EINVAL, "temperature must be >= 0 (0 = greedy), got %g", (double)o->temperature);
    if (!(o->top_p > 0.0f && o->top_p <= 1.0f))
        return RLVR_FAIL(RLVR_EINVAL, "top-p must be in (0, 1], got %g", (double)o->top_p);
    if (o->max_new < 0) return RLVR_FAIL(RLVR_EINVAL, "max-new must be >= 0, got %d", (int)o->max_new);
    if (o->samples < 1 || o->samples > RLVR_GENERATE_MAX_SAMPLES)
        return RLVR_FAIL(RLVR_EINVAL, "samples must be in [1, %d], got %d", RLVR_GENERATE_MAX_SAMPLES,
                         (int)o->samples);
    return 0;
}

/* The checkpoint's tokenizer, then its model with the sampler
 * (train/sampling.h: loaded tensor by tensor for a packed format). */
static int load_checkpoint(rlvr_generator *g) {
    rlvr_checkpoint *ck = NULL;
    rlvr_model_config mc;
    int rc = rlvr_checkpoint_open(&ck, g->opt.checkpoint);
    if (rc == 0) rc = rlvr_checkpoint_model_config(ck, &mc);
    if (rc == 0) rc = rlvr_checkpoint_read_tokenizer(ck, &g->tok);
    if (rc == 0) rc = rlvr_tokenizer_check_model(g->tok, &mc);
    if (rc == 0 && (g->opt.context < 0 || g->opt.context > mc.max_seq))
        rc = RLVR_FAIL(RLVR_EINVAL, "context %d must be in [1, %d] (the model's max_seq; 0 = all of it)",
                       (int)g->opt.context, mc.max_seq);
    rlvr_sampler_config sc;
    rlvr_sampler_config_default(&sc);
    sc.temperature = g->opt.temperature;
    sc.top_p = g->opt.top_p;
    sc.seed = g->opt.seed;
    sc.kv_slots = g->opt.samples;
    sc.context = g->opt.context;
    sc.max_new_tokens = g->opt.max_new;
    sc.weights = g->opt.weights;
    if (rc == 0) rc = rlvr_sampling_load(ck, &sc, &g->model, &g->sampler);
    rlvr_checkpoint_close(ck);
    if (rc < 0 || g->opt.ignore_stop) return rc; /* g->n_stops = 0: the sampler has none either */
    g->n_stops = rlvr_template_stop_tokens(g->tok, g->stops);
    return rlvr_sampler_set_stop_tokens(g->sampler, g->stops, g->n_stops);
}

int rlvr_generator_open(rlvr_generator **out, const rlvr_generate_options *o) {
    *out = NULL;
    RLVR_TRY(check_options(o));
    rlvr_generator *g = calloc(1, sizeof *g);
    if (!g) return RLVR_FAIL(RLVR_ENOMEM, "generate: out of memory");
    g->opt = *o;
    int rc = load_checkpoint(g);
    if (rc == 0 && !(g->streamed = calloc((size_t)o->samples, sizeof *g->streamed)))
        rc = RLVR_FAIL(RLVR_ENOMEM, "generate: out of memory");
    if (rc < 0) {
        rlvr_generator_free(g);
        return rc;
    }
    *out = g;
    return 0;
}

void rlvr_generator_free(rlvr_generator *g) {
    if (!g) return;
    rlvr_sampler_free(g->sampler);
    rlvr_model_free(g->model);
    rlvr_tokenizer_free(g->tok);
    free(g->held);
    free(g->streamed);
    free(g->text);
    free(g);
}

const rlvr_tokenizer *rlvr_generator_tokenizer(const rlvr_generator *g) { return g->tok; }
const rlvr_generate_options *rlvr_generator_options(const rlvr_generator *g) { return &g->opt; }
int32_t rlvr_generator_context(const rlvr_generator *g) { return rlvr_sampler_context(g->sampler); }

bool rlvr_generator_chats(const rlvr_generator *g) {
    if (rlvr_tokenizer_kind_of(g->tok) != RLVR_TOKENIZER_HF) return true;
    size_t len = 0;
    return rlvr_tokenizer_chat_template(g->tok, &len) != NULL && len > 0;
}

/* ---- prompts ------------------------------------------------------------------ */

static int push_raw_text(rlvr_token_buf *b, const rlvr_tokenizer *t, const char *text, size_t len) {
    if (len == 0) return 0;
    int32_t n;
    RLVR_TRY(rlvr_tokenizer_encode_specials(t, text, len, NULL, 0, &n));
    RLVR_TRY(rlvr_token_buf_reserve(b, n));
    RLVR_TRY(rlvr_tokenizer_encode_specials(t, text, len, b->ids + b->n, b->cap - b->n, &n));
    memset(b->mask + b->n, RLVR_TOKEN_PROMPT, (size_t)n);
    b->n += n;
    return 0;
}

int rlvr_generate_prompt(const rlvr_generator *g, bool chat, const char *system, const char *text, size_t len,
                         rlvr_token_buf *out) {
    RLVR_TRY(rlvr_template_begin(out, g->tok));
    if (!chat) return push_raw_text(out, g->tok, text, len);
    if (system) RLVR_TRY(rlvr_template_message(out, g->tok, RLVR_ROLE_SYSTEM, system, strlen(system)));
    RLVR_TRY(rlvr_template_message(out, g->tok, RLVR_ROLE_USER, text, len));
    return rlvr_template_assistant_start(out, g->tok);
}

/* ---- sampling ----------------------------------------------------------------- */

static bool is_stop(const rlvr_generator *g, int32_t id) {
    for (int i = 0; i < g->n_stops; i++)
        if (g->stops[i] == id) return true;
    return false;
}

/* The sample's tokens that make its text: all but a final stop token. */
static int32_t text_tokens(const rlvr_generator *g, const rlvr_generation *s) {
    return s->n > 0 && is_stop(g, s->ids[s->n - 1]) ? s->n - 1 : s->n;
}

/* The sample's text decoded (specials by name) into g->text. */
static int decode_sample(rlvr_generator *g, const rlvr_generation *s, size_t *len) {
    int32_t n = text_tokens(g, s);
    RLVR_TRY(rlvr_tokenizer_decode(g->tok, s->ids, n, true, NULL, 0, len));
    if (*len + 1 > g->text_cap) {
        size_t cap = 2 * (*len + 1);
        char *p = realloc(g->text, cap);
        if (!p) return RLVR_FAIL(RLVR_ENOMEM, "generate: out of memory for %zu bytes of text", cap);
        g->text = p;
        g->text_cap = cap;
    }
    return rlvr_tokenizer_decode(g->tok, s->ids, n, true, g->text, g->text_cap, len);
}

/* Gives on_text the bytes of sample i beyond those already given. The
 * whole sample is decoded again each time: a token's text may depend on
 * its neighbours, and the decode is small beside a forward pass. */
static int stream(rlvr_generator *g, int i, const rlvr_generation *s, const rlvr_generate_hooks *h) {
    if (!h || !h->on_text) return 0;
    size_t len;
    RLVR_TRY(decode_sample(g, s, &len));
    if (len > g->streamed[i]) h->on_text(h->ctx, i, g->text + g->streamed[i], len - g->streamed[i]);
    if (len > g->streamed[i]) g->streamed[i] = len;
    return 0;
}

static int hold(rlvr_generator *g, const int32_t *a, int32_t na, const int32_t *b, int32_t nb) {
    int32_t n = na + nb;
    if (n > g->cap_held) {
        int32_t *p = realloc(g->held, (size_t)n * sizeof *p);
        if (!p) return RLVR_FAIL(RLVR_ENOMEM, "generate: out of memory for %d tokens", (int)n);
        g->held = p;
        g->cap_held = n;
    }
    if (na) memmove(g->held, a, (size_t)na * sizeof *a);
    if (nb) memcpy(g->held + na, b, (size_t)nb * sizeof *b);
    g->n_held = n;
    return 0;
}

/* Slot 0 made to hold `prompt`, computing only what it does not hold yet. */
static int prefill_prompt(rlvr_generator *g, const int32_t *prompt, int32_t n_prompt) {
    int32_t ctx = rlvr_sampler_context(g->sampler);
    if (n_prompt < 1) return RLVR_FAIL(RLVR_EINVAL, "generate: the prompt is empty");
    if (n_prompt >= ctx)
        return RLVR_FAIL(RLVR_ELIMIT, "the prompt's %d tokens leave no room in the context of %d", (int)n_prompt,
                         (int)ctx);
    bool continues = g->n_held > 0 && g->n_held < n_prompt &&
                     memcmp(g->held, prompt, (size_t)g->n_held * sizeof *prompt) == 0;
    int32_t from = continues ? g->n_held : 0;
    g->n_held = 0; /* until the slot holds the prompt again */
    if (!continues) RLVR_TRY(rlvr_sampler_reset(g->sampler, 0, 0, 0));
    RLVR_TRY(rlvr_sampler_prefill(g->sampler, 0, prompt + from, n_prompt - from));
    return 0;
}

static rlvr_generate_stop stop_of(rlvr_sample_stop s) {
    switch (s) {
    case RLVR_SAMPLE_STOP_TOKEN: return RLVR_GENERATE_STOP;
    case RLVR_SAMPLE_MAX_TOKENS: return RLVR_GENERATE_LENGTH;
    default: return RLVR_GENERATE_CONTEXT;
    }
}

/* Decodes every live slot until all have stopped or the caller interrupts. */
static int decode_all(rlvr_generator *g, int n, rlvr_generation *out, const rlvr_generate_hooks *h) {
    int32_t live[RLVR_GENERATE_MAX_SAMPLES];
    rlvr_sample got[RLVR_GENERATE_MAX_SAMPLES];
    int n_live = n;
    for (int i = 0; i < n; i++) live[i] = i;
    double t0 = rlvr_now();
    while (n_live > 0) {
        if (h && h->interrupt && *h->interrupt) {
            for (int k = 0; k < n_live; k++) out[live[k]].stop = RLVR_GENERATE_INTERRUPTED;
            break;
        }
        RLVR_TRY(rlvr_sampler_decode(g->sampler, live, n_live, got));
        double t = rlvr_now() - t0;
        int kept = 0;
        for (int k = 0; k < n_live; k++) {
            rlvr_generation *s = &out[live[k]];
            if (got[k].token >= 0) RLVR_TRY(generation_push(s, &got[k]));
            s->seconds = t;
            RLVR_TRY(stream(g, live[k], s, h));
            if (got[k].stop == RLVR_SAMPLE_CONTINUE)
                live[kept++] = live[k];
            else
                s->stop = stop_of(got[k].stop);
        }
        n_live = kept;
    }
    return 0;
}

int rlvr_generate(rlvr_generator *g, const int32_t *prompt, int32_t n_prompt, int n, rlvr_generation *out,
                  const rlvr_generate_hooks *hooks) {
    if (n < 1 || n > g->opt.samples)
        return RLVR_FAIL(RLVR_EINVAL, "generate: %d samples asked of a generator made for %d", n,
                         (int)g->opt.samples);
    for (int i = 0; i < n; i++) {
        rlvr_generation_free(&out[i]);
        g->streamed[i] = 0;
    }
    RLVR_TRY(prefill_prompt(g, prompt, n_prompt));
    for (int i = 1; i < n; i++) RLVR_TRY(rlvr_sampler_fork(g->sampler, i, 0, (uint32_t)i));
    RLVR_TRY(decode_all(g, n, out, hooks));
    return hold(g, prompt, n_prompt, out[0].ids, out[0].n);
}

/* ---- results ------------------------------------------------------------------ */

int rlvr_generation_text(const rlvr_generator *g, const rlvr_generation *s, char **out, size_t *len) {
    int32_t n = text_tokens(g, s);
    size_t need;
    RLVR_TRY(rlvr_tokenizer_decode(g->tok, s->ids, n, true, NULL, 0, &need));
    char *bytes = malloc(need + 1);
    if (!bytes) return RLVR_FAIL(RLVR_ENOMEM, "generate: out of memory for %zu bytes of text", need + 1);
    rlvr_text text = {0};
    int rc = rlvr_tokenizer_decode(g->tok, s->ids, n, true, bytes, need + 1, &need);
    if (rc == 0) rlvr_text_append_utf8(&text, bytes, need);
    free(bytes);
    if (rc == 0 && text.failed) rc = RLVR_FAIL(RLVR_ENOMEM, "generate: out of memory for %zu bytes of text", need);
    if (rc < 0) {
        rlvr_text_free(&text);
        return rc;
    }
    *out = text.data;
    *len = text.len;
    return 0;
}

static json_t *float_array(const float *v, int32_t n) {
    json_t *a = json_array();
    for (int32_t i = 0; a && i < n; i++) json_array_append_new(a, json_real(v[i]));
    return a;
}

int rlvr_generation_json(const rlvr_generator *g, const rlvr_generation *s, int sample, int32_t prompt_tokens,
                         char **out) {
    char *text = NULL;
    size_t len = 0;
    RLVR_TRY(rlvr_generation_text(g, s, &text, &len));
    json_t *ids = json_array();
    for (int32_t i = 0; ids && i < s->n; i++) json_array_append_new(ids, json_integer(s->ids[i]));
    json_t *o = json_pack("{s:i, s:s%, s:o, s:o, s:o, s:s, s:i, s:i, s:f, s:f}", "sample", sample, "text", text,
                          len, "token_ids", ids, "logprobs", float_array(s->logprobs, s->n), "entropies",
                          float_array(s->entropies, s->n), "stop", rlvr_generate_stop_name(s->stop),
                          "prompt_tokens", (int)prompt_tokens, "tokens", (int)s->n, "seconds", s->seconds,
                          "tokens_per_s", s->seconds > 0 ? s->n / s->seconds : 0.0);
    free(text);
    char *dump = o ? json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(9)) : NULL;
    json_decref(o);
    if (!dump) return RLVR_FAIL(RLVR_ENOMEM, "generate: out of memory for a JSON line");
    *out = dump;
    return 0;
}
