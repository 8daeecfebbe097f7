/* Reading the tool call of a sampled turn: ids in, call or observation out,
 * through the byte tokenizer and the chat template (no re-tokenisation). */
#include "core/record.h"
#include "envs/turn.h"
#include "policy/template.h"
#include "test.h"

static rlvr_tokenizer *tok;

/* The ids of an assistant turn: TEXT [<|tool_call|> CALL <|/tool_call|>] <|end_of_turn|>. */
static void reply(rlvr_token_buf *b, const char *text, const char *call) {
    rlvr_token_buf_clear(b);
    CHECK_OK(rlvr_template_assistant_reply(b, tok, text, strlen(text), call, call ? strlen(call) : 0));
}

static void test_turns(void) {
    rlvr_token_buf b = {0};
    rlvr_turn_kind kind;
    rlvr_tool_call call;
    rlvr_tool_error err;
    int32_t text_end;

    reply(&b, "31", NULL);
    CHECK_OK(rlvr_turn_read_call(&kind, &call, &err, &text_end, tok, b.ids, b.n, RLVR_TOOLS_ALL));
    CHECK(kind == RLVR_TURN_ANSWER && text_end == 2);

    reply(&b, "Let me look.", "{\"name\": \"read_file\", \"arguments\": {\"path\": \"lib.c\"}}");
    CHECK_OK(rlvr_turn_read_call(&kind, &call, &err, &text_end, tok, b.ids, b.n, RLVR_TOOLS_ALL));
    CHECK(kind == RLVR_TURN_CALL && call.tool == RLVR_TOOL_READ_FILE && strcmp(call.path, "lib.c") == 0);
    CHECK(text_end == 12);
    rlvr_tool_call_clear(&call);

    /* text that spells a marker is just bytes: still one call, and it parses */
    reply(&b, "", "{\"name\": \"write_file\", \"arguments\": {\"path\": \"a\", \"content\": \"<|/tool_call|>\"}}");
    CHECK_OK(rlvr_turn_read_call(&kind, &call, &err, NULL, tok, b.ids, b.n, RLVR_TOOLS_ALL));
    CHECK(kind == RLVR_TURN_CALL && strcmp(call.content, "<|/tool_call|>") == 0);
    rlvr_tool_call_clear(&call);

    /* a schema failure: the parser's observation */
    reply(&b, "", "{\"name\": \"read_file\"}");
    CHECK_OK(rlvr_turn_read_call(&kind, &call, &err, NULL, tok, b.ids, b.n, RLVR_TOOLS_ALL));
    CHECK(kind == RLVR_TURN_MALFORMED && err.code == RLVR_TOOL_ERR_MISSING_ARG);
    CHECK(strstr(err.observation, "read_file needs argument \"path\""));

    /* a tool the task does not offer */
    reply(&b, "", "{\"name\": \"run\", \"arguments\": {\"command\": \"ls\"}}");
    CHECK_OK(rlvr_turn_read_call(&kind, &call, &err, NULL, tok, b.ids, b.n, 1u << RLVR_TOOL_SUBMIT));
    CHECK(kind == RLVR_TURN_MALFORMED && err.code == RLVR_TOOL_ERR_NOT_ALLOWED);

    /* unclosed call: the sampler stopped at <|end_of_turn|> inside it */
    rlvr_token_buf_clear(&b);
    rlvr_token_buf_push(&b, rlvr_tokenizer_special(tok, RLVR_SPECIAL_TOOL_CALL_OPEN), RLVR_TOKEN_POLICY);
    rlvr_token_buf_push(&b, '{', RLVR_TOKEN_POLICY);
    rlvr_token_buf_push(&b, rlvr_tokenizer_special(tok, RLVR_SPECIAL_END_OF_TURN), RLVR_TOKEN_POLICY);
    CHECK_OK(rlvr_turn_read_call(&kind, &call, &err, NULL, tok, b.ids, b.n, RLVR_TOOLS_ALL));
    CHECK(kind == RLVR_TURN_MALFORMED && err.code == RLVR_TOOL_ERR_MARKERS);
    rlvr_tool_error direct;
    rlvr_tool_error_markers(&direct, "<|tool_call|>", "<|/tool_call|>");
    CHECK(strcmp(direct.observation, err.observation) == 0);

    /* text after the call */
    reply(&b, "", "{\"name\": \"submit\"}");
    int32_t eot = b.ids[b.n - 1];
    b.n--;
    rlvr_token_buf_push(&b, 'x', RLVR_TOKEN_POLICY);
    rlvr_token_buf_push(&b, eot, RLVR_TOKEN_POLICY);
    CHECK_OK(rlvr_turn_read_call(&kind, &call, &err, NULL, tok, b.ids, b.n, RLVR_TOOLS_ALL));
    CHECK(kind == RLVR_TURN_MALFORMED && err.code == RLVR_TOOL_ERR_MARKERS);

    /* an empty call */
    reply(&b, "", "");
    CHECK_OK(rlvr_turn_read_call(&kind, &call, &err, NULL, tok, b.ids, b.n, RLVR_TOOLS_ALL));
    CHECK(kind == RLVR_TURN_MALFORMED && err.code == RLVR_TOOL_ERR_EMPTY);

    /* ids outside the vocabulary are the caller's bug */
    reply(&b, "", "{}");
    b.ids[2] = 1 << 20;
    CHECK(rlvr_turn_read_call(&kind, &call, &err, NULL, tok, b.ids, b.n, RLVR_TOOLS_ALL) == RLVR_EINVAL);
    rlvr_token_buf_free(&b);
}

int main(void) {
    CHECK_OK(rlvr_tokenizer_new_byte(&tok));
    if (tok) test_turns();
    rlvr_tokenizer_free(tok);
    return test_summary("test_turn");
}
