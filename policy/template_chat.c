/* policy/template_chat.c — the chat families of policy/chat.h rendered to
 * ids, and a sampled turn read back with text call markers.
 *
 * A rendering collects the text between two special tokens and encodes it
 * in one piece when the next special token (or the end) comes: that is how
 * HF tokenizers encode a rendered template (added tokens split the text
 * first, each piece between them is pre-tokenised on its own), so a harness
 * turn gets the reference's ids. Special tokens never come from text: the
 * pieces are encoded with rlvr_tokenizer_encode, which does not match them,
 * so a tool output that spells "<|im_end|>" stays text. */
#include "policy/template_internal.h"

#include "core/error.h"
#include "core/record.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CALL_OPEN RLVR_CHAT_CALL_OPEN
#define CALL_CLOSE RLVR_CHAT_CALL_CLOSE

typedef struct {
    rlvr_token_buf *b;
    const rlvr_tokenizer *t;
    uint8_t mask;
    char *text; /* (cap) the text since the last special token */
    size_t len, cap;
    int rc; /* the first failure; later calls do nothing */
} render;

static void put_text(render *r, const char *s, size_t n) {
    if (r->rc || n == 0) return;
    if (r->len + n > r->cap) {
        size_t cap = r->cap ? r->cap : 256;
        while (cap < r->len + n) cap *= 2;
        char *p = realloc(r->text, cap);
        if (!p) {
            r->rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory rendering a chat turn");
            return;
        }
        r->text = p;
        r->cap = cap;
    }
    memcpy(r->text + r->len, s, n);
    r->len += n;
}

static void put_str(render *r, const char *s) { put_text(r, s, strlen(s)); }

static void flush(render *r) {
    if (r->rc || r->len == 0) return;
    r->rc = rlvr_template_push_text(r->b, r->t, r->text, r->len, r->mask);
    r->len = 0;
}

static void put_id(render *r, int32_t id) {
    flush(r);
    if (!r->rc) r->rc = rlvr_token_buf_push(r->b, id, r->mask);
}

static int finish(render *r) {
    flush(r);
    free(r->text);
    return r->rc;
}

static render start(rlvr_token_buf *b, const rlvr_tokenizer *t, uint8_t mask) {
    return (render){.b = b, .t = t, .mask = mask};
}

static const char *role_name(const rlvr_chat *c, rlvr_role role) {
    switch (role) {
    case RLVR_ROLE_SYSTEM: return "system";
    case RLVR_ROLE_USER: return "user";
    case RLVR_ROLE_ASSISTANT: return "assistant";
    case RLVR_ROLE_TOOL: return c->family == RLVR_CHAT_LLAMA3 && c->variant.ipython ? "ipython" : "tool";
    }
    return "user";
}

/* ASCII white space (a NUL byte is text, not white space). */
static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

/* Jinja's trim: white space off both ends. */
static void put_trimmed(render *r, const char *s, size_t n) {
    while (n > 0 && is_space(s[0])) s++, n--;
    while (n > 0 && is_space(s[n - 1])) n--;
    put_text(r, s, n);
}

/* The text as a JSON string, as transformers' tojson filter writes it
 * (json.dumps with ensure_ascii off): Llama 3.1's template passes a tool
 * result through it. */
static void put_json_string(render *r, const char *s, size_t n) {
    put_str(r, "\"");
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        const char *esc = ch == '"' ? "\\\"" : ch == '\\' ? "\\\\" : ch == '\n' ? "\\n" : ch == '\r' ? "\\r"
                        : ch == '\t' ? "\\t" : ch == '\b' ? "\\b" : ch == '\f' ? "\\f" : NULL;
        char hex[8];
        if (!esc && ch < 0x20) {
            snprintf(hex, sizeof hex, "\\u%04x", ch);
            esc = hex;
        }
        if (esc) put_str(r, esc);
        else put_text(r, s + i, 1);
    }
    put_str(r, "\"");
}

/* chatml: after the policy's <|im_end|> the template has a newline. */
static void chatml_tail(render *r) {
    if (r->b->n > 0 && r->b->mask[r->b->n - 1] == RLVR_TOKEN_POLICY) put_str(r, "\n");
}

static void chatml_turn(render *r, const rlvr_chat *c, rlvr_role role, const char *text, size_t len) {
    put_id(r, c->turn_open);
    if (role == RLVR_ROLE_TOOL && c->variant.tool_response) {
        put_str(r, "user\n<tool_response>\n");
        put_text(r, text, len);
        put_str(r, "\n</tool_response>");
    } else {
        put_str(r, role_name(c, role));
        put_str(r, "\n");
        put_text(r, text, len);
    }
    put_id(r, c->turn_end);
    put_str(r, "\n");
}

static void llama3_header(render *r, const rlvr_chat *c, const char *role) {
    put_id(r, c->turn_open);
    put_str(r, role);
    put_id(r, c->header_end);
    put_str(r, "\n\n");
}

static void llama3_turn(render *r, const rlvr_chat *c, rlvr_role role, const char *text, size_t len) {
    llama3_header(r, c, role_name(c, role));
    if (role == RLVR_ROLE_SYSTEM && c->variant.dated_system) {
        put_str(r, "Cutting Knowledge Date: December 2023\nToday Date: ");
        put_str(r, c->variant.today);
        put_str(r, "\n\n");
    }
    if (role == RLVR_ROLE_TOOL && c->variant.ipython) put_json_string(r, text, len);
    else put_trimmed(r, text, len);
    put_id(r, c->turn_end);
}

/* mistral: a user (or tool) turn, opened by the held system text if any. */
static void mistral_inst(render *r, const char *text, size_t len) {
    rlvr_token_buf *b = r->b;
    put_str(r, "[INST] ");
    if (b->held) {
        put_text(r, b->held, b->held_len);
        if (len > 0) put_str(r, "\n\n");
        free(b->held);
        b->held = NULL;
        b->held_len = 0;
    }
    put_text(r, text, len);
    put_str(r, " [/INST]");
}

static int hold_system(rlvr_token_buf *b, const char *text, size_t len) {
    char *held = malloc(len + 1);
    if (!held) return RLVR_FAIL(RLVR_ENOMEM, "out of memory holding a system prompt");
    memcpy(held, text, len);
    held[len] = '\0';
    free(b->held);
    b->held = held;
    b->held_len = len;
    return 0;
}

/* The system turn a template writes when the conversation opens without one. */
static void implicit_system(render *r, const rlvr_chat *c, rlvr_role role) {
    if (r->b->turns > 0 || role == RLVR_ROLE_SYSTEM) return;
    if (c->family == RLVR_CHAT_CHATML && c->variant.default_system)
        chatml_turn(r, c, RLVR_ROLE_SYSTEM, c->variant.default_system, strlen(c->variant.default_system));
    if (c->family == RLVR_CHAT_LLAMA3 && c->variant.dated_system) llama3_turn(r, c, RLVR_ROLE_SYSTEM, "", 0);
}

/* A harness turn (system, user, tool) in the family's form. */
static void harness_turn(render *r, const rlvr_chat *c, rlvr_role role, const char *text, size_t len) {
    implicit_system(r, c, role);
    switch (c->family) {
    case RLVR_CHAT_CHATML:
        chatml_tail(r);
        chatml_turn(r, c, role, text, len);
        break;
    case RLVR_CHAT_LLAMA3: llama3_turn(r, c, role, text, len); break;
    default: mistral_inst(r, text, len); break;
    }
    r->b->turns++;
}

static void assistant_open(render *r, const rlvr_chat *c) {
    switch (c->family) {
    case RLVR_CHAT_CHATML:
        chatml_tail(r);
        put_id(r, c->turn_open);
        put_str(r, "assistant\n");
        break;
    case RLVR_CHAT_LLAMA3: llama3_header(r, c, "assistant"); break;
    default:
        if (r->b->held) mistral_inst(r, "", 0); /* a system prompt with no user turn after it */
        break;
    }
}

int rlvr_chat_render_begin(rlvr_token_buf *b, const rlvr_chat *c, uint8_t mask) {
    if (c->begin < 0) return 0;
    return rlvr_token_buf_push(b, c->begin, mask);
}

int rlvr_chat_render_message(rlvr_token_buf *b, const rlvr_tokenizer *t, const rlvr_chat *c, rlvr_role role,
                             const char *text, size_t len, uint8_t mask) {
    if (c->family == RLVR_CHAT_MISTRAL && role == RLVR_ROLE_SYSTEM && b->turns == 0) {
        b->turns++;
        return hold_system(b, text, len);
    }
    render r = start(b, t, mask);
    harness_turn(&r, c, role, text, len);
    return finish(&r);
}

int rlvr_chat_render_assistant_start(rlvr_token_buf *b, const rlvr_tokenizer *t, const rlvr_chat *c, uint8_t mask) {
    render r = start(b, t, mask);
    implicit_system(&r, c, RLVR_ROLE_ASSISTANT);
    assistant_open(&r, c);
    b->turns++;
    return finish(&r);
}

int rlvr_chat_render_observation(rlvr_token_buf *b, const rlvr_tokenizer *t, const rlvr_chat *c, const char *text,
                                 size_t len) {
    render r = start(b, t, RLVR_TOKEN_OBSERVATION);
    /* the policy's <|im_end|> came last; in a fresh buffer chatml_tail cannot see it */
    bool fresh = !(b->n > 0 && b->mask[b->n - 1] == RLVR_TOKEN_POLICY);
    if (c->family == RLVR_CHAT_CHATML && fresh) put_str(&r, "\n");
    harness_turn(&r, c, RLVR_ROLE_TOOL, text, len);
    assistant_open(&r, c);
    return finish(&r);
}

int rlvr_chat_render_reply(rlvr_token_buf *b, const rlvr_tokenizer *t, const rlvr_chat *c, const char *text,
                           size_t len, const char *call, size_t call_len) {
    render r = start(b, t, RLVR_TOKEN_POLICY);
    put_text(&r, text, len);
    if (call) {
        put_str(&r, CALL_OPEN);
        put_text(&r, call, call_len);
        put_str(&r, CALL_CLOSE);
    }
    put_id(&r, c->turn_end);
    return finish(&r);
}

/* ---- reading a sampled turn back --------------------------------------------- */

/* The decoded bytes of ids[0, n) (no specials among them) and where each
 * token starts in them: starts has n + 1 entries. */
static int decode_with_starts(const rlvr_tokenizer *t, const int32_t *ids, int32_t n, char **text, size_t **starts) {
    size_t total = 0;
    size_t *at = malloc(((size_t)n + 1) * sizeof *at);
    if (!at) return RLVR_FAIL(RLVR_ENOMEM, "out of memory reading a reply");
    for (int32_t i = 0; i < n; i++) {
        size_t k = 0;
        const char *bytes = rlvr_tokenizer_token_bytes(t, ids[i], &k);
        at[i] = total;
        total += bytes ? k : 0;
    }
    at[n] = total;
    char *s = malloc(total + 1);
    if (!s) {
        free(at);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory reading a reply");
    }
    for (int32_t i = 0; i < n; i++) {
        size_t k = 0;
        const char *bytes = rlvr_tokenizer_token_bytes(t, ids[i], &k);
        if (bytes) memcpy(s + at[i], bytes, k);
    }
    s[total] = '\0';
    *text = s;
    *starts = at;
    return 0;
}

/* `what` in s[from, len). */
static const char *find_in(const char *s, size_t len, size_t from, const char *what) {
    return from <= len ? memmem(s + from, len - from, what, strlen(what)) : NULL;
}

/* The token holding byte `pos` (the first token starting after it when it
 * falls on a boundary). */
static int32_t token_at(const size_t *starts, int32_t n, size_t pos) {
    int32_t i = 0;
    while (i < n && starts[i + 1] <= pos) i++;
    return i;
}

static bool blank(const char *s, size_t from, size_t to) {
    for (size_t i = from; i < to; i++)
        if (!is_space(s[i])) return false;
    return true;
}

/* TEXT [<tool_call> CALL </tool_call>] in the body's text. */
static void split_call(rlvr_reply_parts *out, const char *s, size_t len, const size_t *starts, int32_t body) {
    out->text_bytes = len;
    out->text_end = body;
    const char *open = find_in(s, len, 0, CALL_OPEN);
    if (!open) return;
    size_t a = (size_t)(open - s), b = a + strlen(CALL_OPEN);
    out->text_bytes = a;
    out->text_end = token_at(starts, body, a);
    const char *close = find_in(s, len, b, CALL_CLOSE);
    if (!close || find_in(s, (size_t)(close - s), b, CALL_OPEN)) {
        out->malformed = 1; /* unclosed, or opened twice */
        return;
    }
    size_t e = (size_t)(close - s), after = e + strlen(CALL_CLOSE);
    if (!blank(s, after, len)) out->malformed = 1; /* text after the call */
    while (b < e && is_space(s[b])) b++;
    while (e > b && is_space(s[e - 1])) e--;
    out->call_byte_start = b;
    out->call_byte_end = e;
    out->call_start = token_at(starts, body, b);
    out->call_end = e > b ? token_at(starts, body, e - 1) + 1 : out->call_start;
}

/* A reply's text runs to its first special token, or to a declared eos id
 * that the vocabulary does not mark special. */
static bool ends_body(const rlvr_tokenizer *t, int32_t id) {
    return rlvr_tokenizer_is_special(t, id) || rlvr_tokenizer_ends_episode(t, id);
}

void rlvr_chat_parse_reply(const rlvr_tokenizer *t, const rlvr_chat *c, const int32_t *ids, int32_t n,
                           rlvr_reply_parts *out) {
    *out = (rlvr_reply_parts){.call_start = -1, .call_end = -1, .end_token = -1};
    int32_t body = 0;
    while (body < n && !ends_body(t, ids[body])) body++;
    int32_t i = body;
    if (i < n && (ids[i] == c->turn_end || rlvr_tokenizer_ends_episode(t, ids[i]))) out->end_token = ids[i++];
    if (i < n) out->malformed = 1; /* a stray special, or tokens after the end */
    char *s = NULL;
    size_t *starts = NULL;
    if (decode_with_starts(t, ids, body, &s, &starts) != 0) {
        rlvr_error_clear();
        out->malformed = 1; /* cannot read it: the harness treats it as the policy's mistake */
        out->text_end = body;
        return;
    }
    split_call(out, s, starts[body], starts, body);
    free(s);
    free(starts);
}

int rlvr_chat_reply_text(const rlvr_tokenizer *t, const int32_t *ids, int32_t n, const rlvr_reply_parts *p,
                         bool call, char **out, size_t *len) {
    int32_t body = 0, vocab = rlvr_tokenizer_vocab_size(t);
    for (; body < n && !ends_body(t, ids[body]); body++)
        if (ids[body] < 0 || ids[body] >= vocab)
            return RLVR_FAIL(RLVR_EINVAL, "token id %d is outside the vocabulary", (int)ids[body]);
    char *s = NULL;
    size_t *starts = NULL;
    RLVR_TRY(decode_with_starts(t, ids, body, &s, &starts));
    size_t from = call ? p->call_byte_start : 0, to = call ? p->call_byte_end : p->text_bytes;
    if (to > starts[body]) to = starts[body];
    if (from > to) from = to;
    free(starts);
    memmove(s, s + from, to - from);
    s[to - from] = '\0';
    *out = s;
    *len = to - from;
    return 0;
}
