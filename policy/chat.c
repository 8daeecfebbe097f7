/* policy/chat.c — chat format families: names, recognition of a Jinja
 * template, and the variant details read from its text. */
#include "policy/chat.h"

#include "core/error.h"

#include <stdlib.h>
#include <string.h>

static const char *const family_names[RLVR_CHAT_FAMILIES] = {
    [RLVR_CHAT_NATIVE] = "native",
    [RLVR_CHAT_CHATML] = "chatml",
    [RLVR_CHAT_LLAMA3] = "llama3",
    [RLVR_CHAT_MISTRAL] = "mistral",
};

const char *rlvr_chat_family_name(rlvr_chat_family f) {
    return (int)f >= 0 && f < RLVR_CHAT_FAMILIES ? family_names[f] : NULL;
}

int rlvr_chat_family_parse(const char *name, rlvr_chat_family *out) {
    for (int f = 0; f < RLVR_CHAT_FAMILIES; f++)
        if (strcmp(name, family_names[f]) == 0) {
            *out = (rlvr_chat_family)f;
            return 0;
        }
    return RLVR_FAIL(RLVR_EINVAL, "chat template family \"%s\" is not one of native, chatml, llama3, mistral", name);
}

/* `what` in the first len bytes of a template (not NUL-terminated). */
static const char *find(const char *s, size_t len, const char *what) {
    return memmem(s, len, what, strlen(what));
}

static bool has(const char *s, size_t len, const char *what) { return find(s, len, what) != NULL; }

int rlvr_chat_recognise(const char *jinja, size_t len, const char *source, rlvr_chat_family *out) {
    /* The marker tokens are what the model was tuned on; the Jinja around
     * them only arranges roles, which the families below reproduce. */
    if (has(jinja, len, "<|im_start|>") && has(jinja, len, "<|im_end|>")) {
        *out = RLVR_CHAT_CHATML;
        return 0;
    }
    if (has(jinja, len, "<|start_header_id|>") && has(jinja, len, "<|end_header_id|>") &&
        has(jinja, len, "<|eot_id|>")) {
        *out = RLVR_CHAT_LLAMA3;
        return 0;
    }
    if (has(jinja, len, "[INST]") && has(jinja, len, "[/INST]")) {
        *out = RLVR_CHAT_MISTRAL;
        return 0;
    }
    return RLVR_FAIL(RLVR_EFORMAT,
                     "%s: the chat template is none of the families rlvr renders (chatml: <|im_start|>/<|im_end|>, "
                     "llama3: <|start_header_id|>/<|eot_id|>, mistral: [INST]/[/INST]); if the model follows one of "
                     "them, name it: `rlvr model import --template chatml|llama3|mistral`, or [template] family in "
                     "the run's configuration",
                     source);
}

/* The text of the Jinja string literal (single or double quoted) holding
 * `start`, unescaped (\n, \t, \\, \', \"), from `start` to the first `stop`
 * after it, malloc'd into *out; *out NULL when `start` is in no literal or
 * no `stop` follows. RLVR_ENOMEM. */
static int literal_from(const char *jinja, size_t len, const char *start, const char *stop, char **out_text) {
    *out_text = NULL;
    /* find the quote that opens the literal holding `start` */
    char quote = 0;
    for (const char *p = jinja; p < start; p++) {
        if (quote && *p == '\\') {
            p++;
            continue;
        }
        if (!quote && (*p == '\'' || *p == '"')) quote = *p;
        else if (quote && *p == quote) quote = 0;
    }
    if (!quote) return 0;
    const char *end = find(start, len - (size_t)(start - jinja), stop);
    if (!end) return 0;
    char *out = malloc((size_t)(end - start) + 1);
    if (!out) return RLVR_FAIL(RLVR_ENOMEM, "out of memory reading a chat template");
    size_t n = 0;
    for (const char *p = start; p < end; p++) {
        if (*p == '\\' && p + 1 < end) {
            p++;
            out[n++] = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p;
        } else {
            out[n++] = *p;
        }
    }
    out[n] = '\0';
    *out_text = out;
    return 0;
}

/* chatml: the text of the system turn the template writes when the first
 * message is not a system message, e.g.
 *   {{ '<|im_start|>system\nYou are a helpful AI assistant ...<|im_end|>\n' }} */
static int read_default_system(rlvr_chat_variant *v, const char *jinja, size_t len) {
    static const char *const opens[] = {"<|im_start|>system\\n", "<|im_start|>system\n"};
    for (size_t k = 0; k < 2; k++) {
        const char *p = jinja;
        for (const char *at; (at = find(p, len - (size_t)(p - jinja), opens[k])) != NULL; p = at + 1) {
            const char *text = at + strlen(opens[k]);
            char *lit = NULL;
            RLVR_TRY(literal_from(jinja, len, text, "<|im_end|>", &lit));
            if (!lit) continue;
            /* a turn with Jinja in it ('...system\n' + messages[0]['content']) is the real system turn */
            bool plain = strpbrk(lit, "'\"{}") == NULL;
            if (plain) {
                v->default_system = lit;
                return 0;
            }
            free(lit);
        }
    }
    return 0;
}

/* llama3.1: {%- set date_string = "26 Jul 2024" %} */
static void read_today(rlvr_chat_variant *v, const char *jinja, size_t len) {
    const char *at = find(jinja, len, "date_string = \"");
    if (!at) return;
    at += strlen("date_string = \"");
    size_t n = 0;
    while (at + n < jinja + len && at[n] != '"' && n + 1 < sizeof v->today) n++;
    memcpy(v->today, at, n);
    v->today[n] = '\0';
}

int rlvr_chat_variant_read(rlvr_chat_variant *out, rlvr_chat_family family, const char *jinja, size_t len) {
    rlvr_chat_variant v = {0};
    if (jinja) {
        if (family == RLVR_CHAT_CHATML) {
            RLVR_TRY(read_default_system(&v, jinja, len));
            v.tool_response = has(jinja, len, "<tool_response>");
        } else if (family == RLVR_CHAT_LLAMA3) {
            v.ipython = has(jinja, len, "ipython");
            v.dated_system = has(jinja, len, "Cutting Knowledge Date");
            if (v.dated_system) read_today(&v, jinja, len);
        }
    }
    *out = v;
    return 0;
}

void rlvr_chat_variant_free(rlvr_chat_variant *v) {
    free(v->default_system);
    v->default_system = NULL;
}

/* ---- resolving a family's marker tokens ---------------------------------- */

typedef struct {
    const char *name;
    bool required;
    int32_t *slot;
} marker;

static int resolve_markers(const marker *m, size_t n, rlvr_chat_family family, rlvr_chat_lookup lookup,
                           const void *tokenizer, const char *source) {
    for (size_t i = 0; i < n; i++) {
        *m[i].slot = -1;
        int rc = lookup(tokenizer, m[i].name, m[i].slot);
        if (rc == RLVR_ENOTFOUND && !m[i].required) {
            rlvr_error_clear();
            continue;
        }
        if (rc == RLVR_ENOTFOUND)
            return RLVR_FAIL(RLVR_EFORMAT,
                             "%s: the %s chat format needs the token %s, which the tokenizer does not have; choose "
                             "the family the model was tuned with in [template] family",
                             source, rlvr_chat_family_name(family), m[i].name);
        RLVR_TRY(rc);
    }
    return 0;
}

int rlvr_chat_resolve(rlvr_chat *out, rlvr_chat_family family, const char *jinja, size_t len,
                      rlvr_chat_lookup lookup, const void *tokenizer, const char *source) {
    rlvr_chat c = {.family = family, .begin = -1, .turn_open = -1, .header_end = -1, .turn_end = -1,
                   .episode_end = -1};
    switch (family) {
    case RLVR_CHAT_CHATML: {
        const marker m[] = {{"<|im_start|>", true, &c.turn_open},
                            {"<|im_end|>", true, &c.turn_end},
                            {"<|endoftext|>", false, &c.episode_end}};
        RLVR_TRY(resolve_markers(m, 3, family, lookup, tokenizer, source));
        break;
    }
    case RLVR_CHAT_LLAMA3: {
        const marker m[] = {{"<|begin_of_text|>", true, &c.begin},
                            {"<|start_header_id|>", true, &c.turn_open},
                            {"<|end_header_id|>", true, &c.header_end},
                            {"<|eot_id|>", true, &c.turn_end},
                            {"<|end_of_text|>", false, &c.episode_end}};
        RLVR_TRY(resolve_markers(m, 5, family, lookup, tokenizer, source));
        break;
    }
    case RLVR_CHAT_MISTRAL: {
        /* </s> ends every reply, so nothing is left to end the episode */
        const marker m[] = {{"<s>", true, &c.begin}, {"</s>", true, &c.turn_end}};
        RLVR_TRY(resolve_markers(m, 2, family, lookup, tokenizer, source));
        break;
    }
    default:
        return RLVR_FAIL(RLVR_EINVAL, "%s: chat family %d is not a template family", source, (int)family);
    }
    if (c.episode_end == c.turn_end) c.episode_end = -1;
    RLVR_TRY(rlvr_chat_variant_read(&c.variant, family, jinja, len));
    *out = c;
    return 0;
}

void rlvr_chat_free(rlvr_chat *c) { rlvr_chat_variant_free(&c->variant); }
