/* train/conversation.c — a conversation with a checkpoint's model
 * (train/conversation.h). */
#include "train/conversation.h"

#include "core/error.h"
#include "core/fs.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    rlvr_role role; /* USER or ASSISTANT */
    char *text;
    size_t len;
} message;

struct rlvr_conversation {
    rlvr_generator *g;
    char *system;   /* NULL: none */
    message *msgs;  /* user, assistant, user, assistant, ... */
    int n, cap;
    int first;      /* the oldest message still rendered (a user message) */
};

void rlvr_conversation_turn_free(rlvr_conversation_turn *t) {
    rlvr_generation_free(&t->reply);
    free(t->text);
    free(t->prompt);
    memset(t, 0, sizeof *t);
}

int rlvr_conversation_new(rlvr_conversation **out, rlvr_generator *g, const char *system) {
    *out = NULL;
    rlvr_conversation *c = calloc(1, sizeof *c);
    if (!c) return RLVR_FAIL(RLVR_ENOMEM, "chat: out of memory");
    c->g = g;
    int rc = rlvr_conversation_set_system(c, system);
    if (rc < 0) {
        rlvr_conversation_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

void rlvr_conversation_reset(rlvr_conversation *c) {
    for (int i = 0; i < c->n; i++) free(c->msgs[i].text);
    c->n = 0;
    c->first = 0;
}

void rlvr_conversation_free(rlvr_conversation *c) {
    if (!c) return;
    rlvr_conversation_reset(c);
    free(c->msgs);
    free(c->system);
    free(c);
}

int rlvr_conversation_set_system(rlvr_conversation *c, const char *text) {
    char *copy = NULL;
    if (text && text[0] && !(copy = strdup(text))) return RLVR_FAIL(RLVR_ENOMEM, "chat: out of memory");
    free(c->system);
    c->system = copy;
    return 0;
}

int rlvr_conversation_turns(const rlvr_conversation *c) { return c->n / 2; }

static int append(rlvr_conversation *c, rlvr_role role, const char *text, size_t len) {
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 16;
        message *m = realloc(c->msgs, (size_t)cap * sizeof *m);
        if (!m) return RLVR_FAIL(RLVR_ENOMEM, "chat: out of memory for %d messages", cap);
        c->msgs = m;
        c->cap = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy) return RLVR_FAIL(RLVR_ENOMEM, "chat: out of memory for a message of %zu bytes", len);
    memcpy(copy, text, len);
    copy[len] = '\0';
    c->msgs[c->n++] = (message){.role = role, .text = copy, .len = len};
    return 0;
}

/* The messages from c->first, the new user message and the opening of
 * the assistant's reply, rendered into b (cleared first). */
static int render(const rlvr_conversation *c, const char *user, size_t len, rlvr_token_buf *b) {
    const rlvr_tokenizer *t = rlvr_generator_tokenizer(c->g);
    rlvr_token_buf_clear(b);
    RLVR_TRY(rlvr_template_begin(b, t));
    if (c->system) RLVR_TRY(rlvr_template_message(b, t, RLVR_ROLE_SYSTEM, c->system, strlen(c->system)));
    for (int i = c->first; i < c->n; i++)
        RLVR_TRY(rlvr_template_message(b, t, c->msgs[i].role, c->msgs[i].text, c->msgs[i].len));
    RLVR_TRY(rlvr_template_message(b, t, RLVR_ROLE_USER, user, len));
    return rlvr_template_assistant_start(b, t);
}

/* The room a reply is given: max_new, at most half the context. */
static int32_t reply_room(const rlvr_conversation *c) {
    int32_t ctx = rlvr_generator_context(c->g), max_new = rlvr_generator_options(c->g)->max_new;
    return max_new > 0 && max_new < ctx / 2 ? max_new : ctx / 2;
}

/* Renders the conversation, leaving out its oldest turns until it and the
 * reply's room fit the context; *dropped counts them. c->first moves only
 * on success. */
static int render_to_fit(rlvr_conversation *c, const char *user, size_t len, rlvr_token_buf *b, int *dropped) {
    int32_t ctx = rlvr_generator_context(c->g), room = reply_room(c);
    int first = c->first;
    *dropped = 0;
    for (;;) {
        RLVR_TRY(render(c, user, len, b));
        if (b->n + room <= ctx) break;
        if (c->first >= c->n) {
            if (b->n < ctx) break; /* no turn left to drop: the reply gets what room there is */
            c->first = first;
            *dropped = 0;
            return RLVR_FAIL(RLVR_ELIMIT,
                             "the message and the system text make %d tokens, more than the context of %d: "
                             "shorten them, or give --context (at most the model's max_seq)",
                             (int)b->n, (int)ctx);
        }
        c->first += 2;
        (*dropped)++;
    }
    return 0;
}

int rlvr_conversation_reply(rlvr_conversation *c, const char *user, size_t len, const rlvr_generate_hooks *hooks,
                            rlvr_conversation_turn *out) {
    rlvr_conversation_turn_free(out);
    rlvr_token_buf b = {0};
    int rc = render_to_fit(c, user, len, &b, &out->dropped);
    if (rc == 0) rc = rlvr_generate(c->g, b.ids, b.n, 1, &out->reply, hooks);
    if (rc == 0) rc = rlvr_generation_text(c->g, &out->reply, &out->text, &out->len);
    if (rc == 0) rc = append(c, RLVR_ROLE_USER, user, len);
    if (rc == 0) {
        rc = append(c, RLVR_ROLE_ASSISTANT, out->text, out->len);
        if (rc < 0) free(c->msgs[--c->n].text); /* never a user message without its reply */
    }
    if (rc == 0) {
        out->prompt = b.ids; /* the buffer's ids are the caller's now */
        out->n_prompt = b.n;
        b.ids = NULL;
    }
    rlvr_token_buf_free(&b);
    return rc;
}

/* ---- saving ------------------------------------------------------------------- */

static int push_message(json_t *a, const char *role, const char *text, size_t len) {
    json_t *m = json_pack("{s:s, s:s%}", "role", role, "content", text, len);
    if (!m || json_array_append_new(a, m) != 0)
        return RLVR_FAIL(RLVR_EFORMAT, "chat: a message is not valid UTF-8, or memory ran out");
    return 0;
}

int rlvr_conversation_save(const rlvr_conversation *c, const char *path) {
    json_t *a = json_array();
    char *dump = NULL;
    int rc = a ? 0 : RLVR_FAIL(RLVR_ENOMEM, "chat: out of memory");
    if (rc == 0 && c->system) rc = push_message(a, "system", c->system, strlen(c->system));
    for (int i = 0; rc == 0 && i < c->n; i++)
        rc = push_message(a, c->msgs[i].role == RLVR_ROLE_USER ? "user" : "assistant", c->msgs[i].text,
                          c->msgs[i].len);
    if (rc == 0 && !(dump = json_dumps(a, JSON_INDENT(2) | JSON_ENSURE_ASCII)))
        rc = RLVR_FAIL(RLVR_ENOMEM, "chat: out of memory");
    if (rc == 0) rc = rlvr_write_line_atomic(path, dump);
    free(dump);
    json_decref(a);
    return rc;
}
