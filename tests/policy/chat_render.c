/* tests/policy/chat_render.c — renders conversations with rlvr's chat
 * families for check_chat_templates.py.
 *
 *   chat_render TOKENIZER_JSON TEMPLATE_FILE CONVERSATIONS_JSON
 *
 * CONVERSATIONS_JSON is a list of {"messages": [{"role", "content"}...],
 * "generation": bool}. For each, one line of token ids. A tool message that
 * ends a conversation with "generation" goes through the harness's
 * observation rendering (tool turn + the assistant's opening); other
 * messages through rlvr_template_message, then the assistant's opening when
 * "generation" is set. Exit 1 with the library's message on any error (the
 * recognition of an unknown template is checked that way).
 *
 *   chat_render TOKENIZER_JSON TEMPLATE_FILE --reply TEXT
 *
 * reads back a policy turn: TEXT encoded as the policy would sample it,
 * then the turn's end token; prints one JSON object with the call markers
 * (rlvr_template_call_markers), the parsed TEXT and CALL parts
 * (rlvr_template_reply_text; call null when none) and "malformed". */
#include "core/error.h"
#include "policy/template.h"
#include "policy/tokenizer.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    fclose(f);
    if (s) s[n] = '\0';
    *len = (size_t)n;
    return s;
}

static int role_of(const char *name, rlvr_role *out) {
    static const char *const names[] = {"system", "user", "assistant", "tool"};
    for (int i = 0; i < 4; i++)
        if (strcmp(name, names[i]) == 0) {
            *out = (rlvr_role)i;
            return 0;
        }
    return RLVR_FAIL(RLVR_EINVAL, "unknown role %s", name);
}

static int render(const rlvr_tokenizer *tok, json_t *conv, rlvr_token_buf *b) {
    json_t *msgs = json_object_get(conv, "messages");
    bool gen = json_is_true(json_object_get(conv, "generation"));
    size_t n = json_array_size(msgs);
    RLVR_TRY(rlvr_template_begin(b, tok));
    for (size_t i = 0; i < n; i++) {
        json_t *m = json_array_get(msgs, i);
        const char *content = json_string_value(json_object_get(m, "content"));
        rlvr_role role;
        RLVR_TRY(role_of(json_string_value(json_object_get(m, "role")), &role));
        if (role == RLVR_ROLE_TOOL && gen && i + 1 == n) return rlvr_template_observation(b, tok, content, strlen(content));
        RLVR_TRY(rlvr_template_message(b, tok, role, content, strlen(content)));
    }
    return gen ? rlvr_template_assistant_start(b, tok) : 0;
}

static int read_reply(const rlvr_tokenizer *tok, const char *text) {
    rlvr_token_buf b = {0};
    int rc = rlvr_template_assistant_reply(&b, tok, text, strlen(text), NULL, 0); /* TEXT, then the turn's end */
    rlvr_reply_parts parts;
    if (rc == 0) rlvr_template_parse_reply(tok, b.ids, b.n, &parts);
    char *body = NULL, *call = NULL;
    size_t nb = 0, nc = 0;
    if (rc == 0) rc = rlvr_template_reply_text(tok, b.ids, b.n, &parts, false, &body, &nb);
    if (rc == 0 && parts.call_start >= 0) rc = rlvr_template_reply_text(tok, b.ids, b.n, &parts, true, &call, &nc);
    if (rc == 0) {
        const char *open, *close;
        rlvr_template_call_markers(tok, &open, &close);
        json_t *j = json_pack("{s:s, s:s, s:s%, s:o, s:b}", "open", open, "close", close, "text", body, nb, "call",
                              call ? json_stringn(call, nc) : json_null(), "malformed", parts.malformed);
        char *dump = json_dumps(j, JSON_ENSURE_ASCII);
        printf("%s\n", dump);
        free(dump);
        json_decref(j);
    }
    free(body);
    free(call);
    rlvr_token_buf_free(&b);
    return rc;
}

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[3], "--reply") == 0) {
        size_t tlen = 0, jlen = 0;
        char *tj = slurp(argv[1], &tlen), *jinja = slurp(argv[2], &jlen);
        rlvr_tokenizer *tok = NULL;
        int rc = tj && jinja ? rlvr_tokenizer_new_hf_json(&tok, tj, tlen, argv[1]) : RLVR_EIO;
        if (rc == 0) rc = rlvr_tokenizer_set_chat(tok, NULL, jinja, jlen, argv[2]);
        if (rc == 0) rc = read_reply(tok, argv[4]);
        if (rc != 0) fprintf(stderr, "chat_render: %s\n", rlvr_error_last());
        rlvr_tokenizer_free(tok);
        free(tj);
        free(jinja);
        return rc == 0 ? 0 : 1;
    }
    if (argc != 4) {
        fprintf(stderr, "usage: chat_render TOKENIZER_JSON TEMPLATE_FILE CONVERSATIONS_JSON\n");
        return 2;
    }
    size_t tlen = 0, jlen = 0;
    char *tj = slurp(argv[1], &tlen), *jinja = slurp(argv[2], &jlen);
    json_error_t jerr;
    json_t *convs = json_load_file(argv[3], 0, &jerr);
    if (!tj || !jinja || !convs) {
        fprintf(stderr, "chat_render: cannot read the inputs\n");
        return 2;
    }
    rlvr_tokenizer *tok = NULL;
    int rc = rlvr_tokenizer_new_hf_json(&tok, tj, tlen, argv[1]);
    if (rc == 0) rc = rlvr_tokenizer_set_chat(tok, NULL, jinja, jlen, argv[2]);
    for (size_t c = 0; rc == 0 && c < json_array_size(convs); c++) {
        rlvr_token_buf b = {0};
        rc = render(tok, json_array_get(convs, c), &b);
        for (int32_t i = 0; rc == 0 && i < b.n; i++) printf("%s%d", i ? " " : "", (int)b.ids[i]);
        if (rc == 0) printf("\n");
        rlvr_token_buf_free(&b);
    }
    if (rc != 0) fprintf(stderr, "chat_render: %s\n", rlvr_error_last());
    rlvr_tokenizer_free(tok);
    json_decref(convs);
    free(tj);
    free(jinja);
    return rc == 0 ? 0 : 1;
}
