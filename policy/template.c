#include "policy/template_internal.h"

#include "core/error.h"
#include "core/record.h"

#include <stdlib.h>
#include <string.h>

/* ---- growable buffer ---- */

void rlvr_token_buf_free(rlvr_token_buf *b) {
    free(b->ids);
    free(b->mask);
    free(b->held);
    memset(b, 0, sizeof *b);
}

void rlvr_token_buf_clear(rlvr_token_buf *b) {
    b->n = 0;
    b->n_policy = 0;
    b->turns = 0;
    free(b->held);
    b->held = NULL;
    b->held_len = 0;
}

int rlvr_token_buf_reserve(rlvr_token_buf *b, int32_t extra) {
    if (extra < 0 || b->n > INT32_MAX - extra)
        return RLVR_FAIL(RLVR_EINVAL, "cannot reserve %d more tokens after %d", (int)extra, (int)b->n);
    int64_t need = (int64_t)b->n + extra;
    if (need <= b->cap) return 0;
    int64_t cap = b->cap ? b->cap : 64;
    while (cap < need) cap *= 2;
    if (cap > INT32_MAX) cap = INT32_MAX;
    int32_t *ids = realloc(b->ids, (size_t)cap * sizeof *ids);
    if (!ids) return RLVR_FAIL(RLVR_ENOMEM, "out of memory growing a token buffer to %lld ids", (long long)cap);
    b->ids = ids;
    uint8_t *mask = realloc(b->mask, (size_t)cap);
    if (!mask) return RLVR_FAIL(RLVR_ENOMEM, "out of memory growing a token mask to %lld", (long long)cap);
    b->mask = mask;
    b->cap = (int32_t)cap;
    return 0;
}

int rlvr_token_buf_push(rlvr_token_buf *b, int32_t id, uint8_t mask) {
    if (mask > RLVR_TOKEN_OBSERVATION) return RLVR_FAIL(RLVR_EINVAL, "token mask %u is not an RLVR_TOKEN_*", mask);
    RLVR_TRY(rlvr_token_buf_reserve(b, 1));
    b->ids[b->n] = id;
    b->mask[b->n] = mask;
    b->n++;
    if (mask == RLVR_TOKEN_POLICY) b->n_policy++;
    return 0;
}

/* ---- rendering ---- */

/* Harness tokens are prompt until the policy has spoken, observation after. */
static uint8_t harness_mask(const rlvr_token_buf *b) {
    return b->n_policy > 0 ? RLVR_TOKEN_OBSERVATION : RLVR_TOKEN_PROMPT;
}

static int push_special(rlvr_token_buf *b, const rlvr_tokenizer *t, rlvr_special_token s, uint8_t mask) {
    int32_t id = rlvr_tokenizer_special(t, s);
    if (id < 0) /* a pretrained model's tokenizer whose chat format was never set */
        return RLVR_FAIL(RLVR_EINVAL, "the tokenizer has no chat format to render turns with: a checkpoint imported "
                                      "from a model needs its chat template, or [template] family");
    return rlvr_token_buf_push(b, id, mask);
}

/* Encodes text straight into the buffer with one mask. */
int rlvr_template_push_text(rlvr_token_buf *b, const rlvr_tokenizer *t, const char *text, size_t len, uint8_t mask) {
    if (len == 0) return 0; /* nothing to encode; an empty buffer has no arrays to write into */
    int32_t n;
    RLVR_TRY(rlvr_tokenizer_encode(t, text, len, NULL, 0, &n));
    RLVR_TRY(rlvr_token_buf_reserve(b, n));
    RLVR_TRY(rlvr_tokenizer_encode(t, text, len, b->ids + b->n, b->cap - b->n, &n));
    memset(b->mask + b->n, mask, (size_t)n);
    b->n += n;
    if (mask == RLVR_TOKEN_POLICY) b->n_policy += n;
    return 0;
}

/* The tokenizer's chat family when it is not the native one, else NULL. */
static const rlvr_chat *family_of(const rlvr_tokenizer *t) {
    const rlvr_chat *c = rlvr_tokenizer_chat(t);
    return c->family == RLVR_CHAT_NATIVE ? NULL : c;
}

int rlvr_template_begin(rlvr_token_buf *b, const rlvr_tokenizer *t) {
    const rlvr_chat *c = family_of(t);
    if (c) return rlvr_chat_render_begin(b, c, harness_mask(b));
    return push_special(b, t, RLVR_SPECIAL_BOS, harness_mask(b));
}

int rlvr_template_assistant_start(rlvr_token_buf *b, const rlvr_tokenizer *t) {
    const rlvr_chat *c = family_of(t);
    if (c) return rlvr_chat_render_assistant_start(b, t, c, harness_mask(b));
    return push_special(b, t, RLVR_SPECIAL_ASSISTANT, harness_mask(b));
}

static int render_tool(rlvr_token_buf *b, const rlvr_tokenizer *t, const char *text, size_t len, uint8_t m) {
    RLVR_TRY(push_special(b, t, RLVR_SPECIAL_TOOL, m));
    RLVR_TRY(push_special(b, t, RLVR_SPECIAL_OBSERVATION_OPEN, m));
    RLVR_TRY(rlvr_template_push_text(b, t, text, len, m));
    RLVR_TRY(push_special(b, t, RLVR_SPECIAL_OBSERVATION_CLOSE, m));
    return push_special(b, t, RLVR_SPECIAL_END_OF_TURN, m);
}

int rlvr_template_message(rlvr_token_buf *b, const rlvr_tokenizer *t, rlvr_role role, const char *text,
                          size_t len) {
    uint8_t m = harness_mask(b);
    const rlvr_chat *c = family_of(t);
    if (c && role != RLVR_ROLE_ASSISTANT) return rlvr_chat_render_message(b, t, c, role, text, len, m);
    switch (role) {
    case RLVR_ROLE_SYSTEM:
    case RLVR_ROLE_USER:
        RLVR_TRY(push_special(b, t, role == RLVR_ROLE_SYSTEM ? RLVR_SPECIAL_SYSTEM : RLVR_SPECIAL_USER, m));
        RLVR_TRY(rlvr_template_push_text(b, t, text, len, m));
        return push_special(b, t, RLVR_SPECIAL_END_OF_TURN, m);
    case RLVR_ROLE_TOOL:
        return render_tool(b, t, text, len, m);
    case RLVR_ROLE_ASSISTANT:
        RLVR_TRY(rlvr_template_assistant_start(b, t));
        return rlvr_template_assistant_reply(b, t, text, len, NULL, 0);
    }
    return RLVR_FAIL(RLVR_EINVAL, "unknown chat role %d", (int)role);
}

int rlvr_template_observation(rlvr_token_buf *b, const rlvr_tokenizer *t, const char *text, size_t len) {
    const rlvr_chat *c = family_of(t);
    if (c) return rlvr_chat_render_observation(b, t, c, text, len);
    RLVR_TRY(render_tool(b, t, text, len, RLVR_TOKEN_OBSERVATION));
    return push_special(b, t, RLVR_SPECIAL_ASSISTANT, RLVR_TOKEN_OBSERVATION);
}

int rlvr_template_assistant_reply(rlvr_token_buf *b, const rlvr_tokenizer *t, const char *text, size_t len,
                                  const char *call, size_t call_len) {
    const rlvr_chat *c = family_of(t);
    if (c) return rlvr_chat_render_reply(b, t, c, text, len, call, call_len);
    const uint8_t m = RLVR_TOKEN_POLICY;
    RLVR_TRY(rlvr_template_push_text(b, t, text, len, m));
    if (call) {
        RLVR_TRY(push_special(b, t, RLVR_SPECIAL_TOOL_CALL_OPEN, m));
        RLVR_TRY(rlvr_template_push_text(b, t, call, call_len, m));
        RLVR_TRY(push_special(b, t, RLVR_SPECIAL_TOOL_CALL_CLOSE, m));
    }
    return push_special(b, t, RLVR_SPECIAL_END_OF_TURN, m);
}

int rlvr_template_stop_tokens(const rlvr_tokenizer *t, int32_t out[RLVR_TEMPLATE_MAX_STOPS]) {
    const rlvr_chat *c = rlvr_tokenizer_chat(t);
    int n = 0;
    out[n++] = c->turn_end;
    if (c->episode_end >= 0) out[n++] = c->episode_end;
    int n_eos = 0;
    const int32_t *eos = rlvr_tokenizer_generation_eos(t, &n_eos);
    for (int i = 0; i < n_eos; i++)
        if (eos[i] != c->turn_end && eos[i] != c->episode_end) out[n++] = eos[i];
    return n;
}

void rlvr_template_call_markers(const rlvr_tokenizer *t, const char **open, const char **close) {
    if (family_of(t)) {
        *open = RLVR_CHAT_CALL_OPEN;
        *close = RLVR_CHAT_CALL_CLOSE;
        return;
    }
    *open = rlvr_special_name(RLVR_SPECIAL_TOOL_CALL_OPEN);
    *close = rlvr_special_name(RLVR_SPECIAL_TOOL_CALL_CLOSE);
}

/* ---- parsing a sampled turn ---- */

static bool is(const rlvr_tokenizer *t, int32_t id, rlvr_special_token s) {
    return id == rlvr_tokenizer_special(t, s);
}

void rlvr_template_parse_reply(const rlvr_tokenizer *t, const int32_t *ids, int32_t n, rlvr_reply_parts *out) {
    const rlvr_chat *c = family_of(t);
    if (c) {
        rlvr_chat_parse_reply(t, c, ids, n, out);
        return;
    }
    *out = (rlvr_reply_parts){.text_end = -1, .call_start = -1, .call_end = -1, .end_token = -1};
    int32_t i = 0;
    /* TEXT: up to the first special token */
    while (i < n && !rlvr_tokenizer_is_special(t, ids[i])) i++;
    out->text_end = i;
    if (i < n && is(t, ids[i], RLVR_SPECIAL_TOOL_CALL_OPEN)) {
        out->call_start = ++i;
        while (i < n && !rlvr_tokenizer_is_special(t, ids[i])) i++;
        out->call_end = i;
        if (i < n && is(t, ids[i], RLVR_SPECIAL_TOOL_CALL_CLOSE))
            i++;
        else
            out->malformed = 1; /* the call was not closed */
    }
    if (i < n && (is(t, ids[i], RLVR_SPECIAL_END_OF_TURN) || is(t, ids[i], RLVR_SPECIAL_EOS)))
        out->end_token = ids[i++];
    /* anything left (text after the call, a stray marker, tokens after the end) */
    if (i < n) out->malformed = 1;
}

int rlvr_template_reply_text(const rlvr_tokenizer *t, const int32_t *ids, int32_t n, const rlvr_reply_parts *p,
                             bool call, char **out, size_t *len) {
    if (family_of(t)) return rlvr_chat_reply_text(t, ids, n, p, call, out, len);
    int32_t from = call ? p->call_start : 0, to = call ? p->call_end : p->text_end;
    if (from < 0 || to < from || to > n) from = to = 0;
    size_t need = 0;
    RLVR_TRY(rlvr_tokenizer_decode(t, ids + from, to - from, false, NULL, 0, &need));
    char *s = malloc(need + 1);
    if (!s) return RLVR_FAIL(RLVR_ENOMEM, "out of memory reading a reply");
    int rc = rlvr_tokenizer_decode(t, ids + from, to - from, false, s, need + 1, &need);
    if (rc != 0) {
        free(s);
        return rc;
    }
    *out = s;
    *len = need;
    return 0;
}
