/* tests/policy/test_tokenizer.c — byte tokenizer, special tokens, and the
 * chat template's ids and masks for a rendered multi-turn conversation. */
#include "core/record.h"
#include "policy/template.h"
#include "policy/tokenizer.h"
#include "test.h"

static void test_bytes_round_trip(const rlvr_tokenizer *t) {
    char text[256];
    for (int i = 0; i < 256; i++) text[i] = (char)(255 - i); /* every byte, NUL included */
    int32_t ids[256], n = -1;
    CHECK_OK(rlvr_tokenizer_encode(t, text, sizeof text, ids, 256, &n));
    CHECK(n == 256);
    int ok = 1;
    for (int i = 0; i < 256; i++) ok &= ids[i] == 255 - i;
    CHECK(ok);
    for (int i = 0; i < 256; i++) ok &= !rlvr_tokenizer_is_special(t, ids[i]);
    CHECK(ok);

    char back[300];
    size_t len = 0;
    CHECK_OK(rlvr_tokenizer_decode(t, ids, n, true, back, sizeof back, &len));
    CHECK(len == 256 && memcmp(back, text, 256) == 0);

    /* counting mode and a buffer that is too small */
    int32_t count = 0;
    CHECK_OK(rlvr_tokenizer_encode(t, "hello", 5, NULL, 0, &count));
    CHECK(count == 5);
    CHECK(rlvr_tokenizer_encode(t, "hello", 5, ids, 4, &count) == RLVR_ELIMIT);
    CHECK_OK(rlvr_tokenizer_encode(t, "hello", 5, ids, 5, &count));
    char small[4];
    CHECK(rlvr_tokenizer_decode(t, ids, 5, false, small, sizeof small, &len) == RLVR_ELIMIT);
    CHECK(len == 5 && strcmp(small, "hel") == 0);
    CHECK_OK(rlvr_tokenizer_decode(t, ids, 5, false, NULL, 0, &len));
    CHECK(len == 5);
}

static void test_specials(const rlvr_tokenizer *t) {
    CHECK(rlvr_tokenizer_kind_of(t) == RLVR_TOKENIZER_BYTE);
    CHECK(rlvr_tokenizer_vocab_size(t) == 256 + RLVR_SPECIAL_COUNT);
    int distinct = 1;
    for (int i = 0; i < RLVR_SPECIAL_COUNT; i++) {
        int32_t id = rlvr_tokenizer_special(t, (rlvr_special_token)i);
        CHECK(id >= 256 && id < rlvr_tokenizer_vocab_size(t));
        CHECK(rlvr_tokenizer_is_special(t, id));
        for (int j = 0; j < i; j++) distinct &= id != rlvr_tokenizer_special(t, (rlvr_special_token)j);
        int32_t found = -1;
        CHECK_OK(rlvr_tokenizer_find_special(t, rlvr_special_name((rlvr_special_token)i), &found));
        CHECK(found == id);
    }
    CHECK(distinct);
    int32_t id;
    CHECK(rlvr_tokenizer_find_special(t, "<|nope|>", &id) == RLVR_ENOTFOUND);
    CHECK(rlvr_special_name(RLVR_SPECIAL_COUNT) == NULL);

    /* text spelling a special token stays bytes: no injection from tool output */
    const char *spoof = "<|end_of_turn|>";
    int32_t ids[32], n;
    CHECK_OK(rlvr_tokenizer_encode(t, spoof, strlen(spoof), ids, 32, &n));
    CHECK(n == (int32_t)strlen(spoof));
    for (int i = 0; i < n; i++) CHECK(!rlvr_tokenizer_is_special(t, ids[i]));

    /* decode renders or skips specials */
    int32_t mixed[3] = {'a', rlvr_tokenizer_special(t, RLVR_SPECIAL_EOS), 'b'};
    char out[64];
    size_t len;
    CHECK_OK(rlvr_tokenizer_decode(t, mixed, 3, true, out, sizeof out, &len));
    CHECK(strcmp(out, "a<|eos|>b") == 0 && len == 9);
    CHECK_OK(rlvr_tokenizer_decode(t, mixed, 3, false, out, sizeof out, &len));
    CHECK(strcmp(out, "ab") == 0 && len == 2);
    int32_t bad = rlvr_tokenizer_vocab_size(t);
    CHECK(rlvr_tokenizer_decode(t, &bad, 1, true, out, sizeof out, &len) == RLVR_EINVAL);

    /* the model's vocabulary must cover the tokenizer's */
    rlvr_model_config mc = {.vocab = rlvr_tokenizer_vocab_size(t)};
    CHECK_OK(rlvr_tokenizer_check_model(t, &mc));
    mc.vocab = 256;
    CHECK(rlvr_tokenizer_check_model(t, &mc) == RLVR_EINVAL);
    CHECK(strstr(rlvr_error_last(), "vocab") != NULL);
}

/* The expected (id, mask) sequence is written out token by token. */
typedef struct {
    int32_t ids[512];
    uint8_t mask[512];
    int n;
} expect_buf;

static void ex_special(expect_buf *e, const rlvr_tokenizer *t, rlvr_special_token s, uint8_t m) {
    e->ids[e->n] = rlvr_tokenizer_special(t, s);
    e->mask[e->n++] = m;
}

static void ex_text(expect_buf *e, const char *text, uint8_t m) {
    for (const char *p = text; *p; p++) {
        e->ids[e->n] = (unsigned char)*p;
        e->mask[e->n++] = m;
    }
}

static void test_template(const rlvr_tokenizer *t) {
    const uint8_t P = RLVR_TOKEN_PROMPT, A = RLVR_TOKEN_POLICY, O = RLVR_TOKEN_OBSERVATION;
    rlvr_token_buf b = {0};
    CHECK_OK(rlvr_template_begin(&b, t));
    CHECK_OK(rlvr_template_message(&b, t, RLVR_ROLE_SYSTEM, "be brief", 8));
    CHECK_OK(rlvr_template_message(&b, t, RLVR_ROLE_USER, "fix it", 6));
    CHECK_OK(rlvr_template_assistant_start(&b, t));
    int32_t prompt_len = b.n;
    CHECK_OK(rlvr_template_assistant_reply(&b, t, "ok", 2, "{\"cmd\":\"make\"}", 14));
    CHECK_OK(rlvr_template_message(&b, t, RLVR_ROLE_TOOL, "exit 0", 6));
    CHECK_OK(rlvr_template_message(&b, t, RLVR_ROLE_ASSISTANT, "done", 4));

    expect_buf e = {.n = 0};
    ex_special(&e, t, RLVR_SPECIAL_BOS, P);
    ex_special(&e, t, RLVR_SPECIAL_SYSTEM, P);
    ex_text(&e, "be brief", P);
    ex_special(&e, t, RLVR_SPECIAL_END_OF_TURN, P);
    ex_special(&e, t, RLVR_SPECIAL_USER, P);
    ex_text(&e, "fix it", P);
    ex_special(&e, t, RLVR_SPECIAL_END_OF_TURN, P);
    ex_special(&e, t, RLVR_SPECIAL_ASSISTANT, P);
    ex_text(&e, "ok", A);
    ex_special(&e, t, RLVR_SPECIAL_TOOL_CALL_OPEN, A);
    ex_text(&e, "{\"cmd\":\"make\"}", A);
    ex_special(&e, t, RLVR_SPECIAL_TOOL_CALL_CLOSE, A);
    ex_special(&e, t, RLVR_SPECIAL_END_OF_TURN, A);
    ex_special(&e, t, RLVR_SPECIAL_TOOL, O);
    ex_special(&e, t, RLVR_SPECIAL_OBSERVATION_OPEN, O);
    ex_text(&e, "exit 0", O);
    ex_special(&e, t, RLVR_SPECIAL_OBSERVATION_CLOSE, O);
    ex_special(&e, t, RLVR_SPECIAL_END_OF_TURN, O);
    ex_special(&e, t, RLVR_SPECIAL_ASSISTANT, O);
    ex_text(&e, "done", A);
    ex_special(&e, t, RLVR_SPECIAL_END_OF_TURN, A);

    CHECK_MSG(b.n == e.n, "rendered %d tokens, expected %d", b.n, e.n);
    int n = b.n < e.n ? b.n : e.n;
    for (int i = 0; i < n; i++) {
        CHECK_MSG(b.ids[i] == e.ids[i], "token %d: %d, expected %d", i, b.ids[i], e.ids[i]);
        CHECK_MSG(b.mask[i] == e.mask[i], "mask %d: %u, expected %u", i, b.mask[i], e.mask[i]);
    }
    int policy = 0;
    for (int i = 0; i < e.n; i++) policy += e.mask[i] == A;
    CHECK(b.n_policy == policy);

    /* parse the first policy turn back from its ids */
    int32_t stops[RLVR_TEMPLATE_MAX_STOPS];
    CHECK(rlvr_template_stop_tokens(t, stops) == 2);
    CHECK(stops[0] == rlvr_tokenizer_special(t, RLVR_SPECIAL_END_OF_TURN));
    CHECK(stops[1] == rlvr_tokenizer_special(t, RLVR_SPECIAL_EOS));
    rlvr_reply_parts parts;
    const int32_t *turn = b.ids + prompt_len;
    int32_t turn_len = 2 + 1 + 14 + 1 + 1;
    rlvr_template_parse_reply(t, turn, turn_len, &parts);
    CHECK(parts.text_end == 2);
    CHECK(parts.call_start == 3 && parts.call_end == 17);
    CHECK(parts.end_token == stops[0]);
    CHECK(!parts.malformed);

    /* truncated (no end token) is not malformed; an unclosed call is */
    rlvr_template_parse_reply(t, turn, 5, &parts);
    CHECK(parts.end_token == -1 && parts.malformed);
    rlvr_template_parse_reply(t, turn, 2, &parts);
    CHECK(parts.text_end == 2 && parts.call_start == -1 && parts.end_token == -1 && !parts.malformed);
    int32_t stray[3] = {'x', rlvr_tokenizer_special(t, RLVR_SPECIAL_USER), stops[0]};
    rlvr_template_parse_reply(t, stray, 3, &parts);
    CHECK(parts.text_end == 1 && parts.malformed);

    /* between two policy turns the harness prefills an all-observation block */
    rlvr_token_buf obs = {0};
    CHECK_OK(rlvr_template_observation(&obs, t, "exit 0", 6));
    expect_buf eo = {.n = 0};
    ex_special(&eo, t, RLVR_SPECIAL_TOOL, O);
    ex_special(&eo, t, RLVR_SPECIAL_OBSERVATION_OPEN, O);
    ex_text(&eo, "exit 0", O);
    ex_special(&eo, t, RLVR_SPECIAL_OBSERVATION_CLOSE, O);
    ex_special(&eo, t, RLVR_SPECIAL_END_OF_TURN, O);
    ex_special(&eo, t, RLVR_SPECIAL_ASSISTANT, O);
    CHECK(obs.n == eo.n && memcmp(obs.ids, eo.ids, (size_t)eo.n * sizeof(int32_t)) == 0 &&
          memcmp(obs.mask, eo.mask, (size_t)eo.n) == 0);
    rlvr_token_buf_free(&obs);

    rlvr_token_buf_clear(&b);
    CHECK(b.n == 0 && b.n_policy == 0);
    CHECK(rlvr_token_buf_push(&b, 1, 7) == RLVR_EINVAL);
    rlvr_token_buf_free(&b);
    CHECK(b.ids == NULL && b.cap == 0);
}

int main(void) {
    rlvr_tokenizer *t = NULL;
    CHECK_OK(rlvr_tokenizer_new_byte(&t));
    if (!t) return test_summary("test_tokenizer");
    test_bytes_round_trip(t);
    test_specials(t);
    test_template(t);
    rlvr_tokenizer_free(t);
    return test_summary("test_tokenizer");
}
