/* tests/policy/test_generation_ids.c — the ids a pretrained model declares
 * for generation (rlvr_tokenizer_set_generation): sampling stops at each
 * besides the chat format's turn end, one that is not the turn end ends the
 * episode and reads back as the reply's end token, copies carry them,
 * equality compares them, and ids outside the vocabulary are refused with
 * the tokenizer unchanged. The import and export of the files that declare
 * them: test_model_port_*; their checkpoint round trip: test_hf_checkpoint. */
#include "policy/template.h"
#include "policy/tokenizer.h"
#include "test.h"

/* ids 0-4 the vocabulary, 5-8 special added tokens (chatml's markers and a
 * Llama-3.1-like end of message), 9 a non-special added token. */
static const char chat_json[] =
    "{\"version\": \"1.0\", \"truncation\": null, \"padding\": null, \"added_tokens\": [\n"
    "  {\"id\": 5, \"content\": \"<|im_end|>\", \"single_word\": false, \"lstrip\": false, \"rstrip\": false,"
    " \"normalized\": false, \"special\": true},\n"
    "  {\"id\": 6, \"content\": \"<|im_start|>\", \"single_word\": false, \"lstrip\": false, \"rstrip\": false,"
    " \"normalized\": false, \"special\": true},\n"
    "  {\"id\": 7, \"content\": \"<|endoftext|>\", \"single_word\": false, \"lstrip\": false, \"rstrip\": false,"
    " \"normalized\": false, \"special\": true},\n"
    "  {\"id\": 8, \"content\": \"<|eom|>\", \"single_word\": false, \"lstrip\": false, \"rstrip\": false,"
    " \"normalized\": false, \"special\": true},\n"
    "  {\"id\": 9, \"content\": \"<z>\", \"single_word\": false, \"lstrip\": false, \"rstrip\": false,"
    " \"normalized\": false, \"special\": false}],\n"
    " \"normalizer\": null,\n"
    " \"pre_tokenizer\": {\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": true, \"use_regex\": true},\n"
    " \"post_processor\": null,\n"
    " \"decoder\": {\"type\": \"ByteLevel\", \"add_prefix_space\": true, \"trim_offsets\": true, \"use_regex\": true},\n"
    " \"model\": {\"type\": \"BPE\", \"dropout\": null, \"unk_token\": null, \"continuing_subword_prefix\": null,\n"
    "           \"end_of_word_suffix\": null, \"fuse_unk\": false, \"byte_fallback\": false, \"ignore_merges\": false,\n"
    "           \"vocab\": {\"a\": 0, \"b\": 1, \"ab\": 2, \"\xc4\xa0\": 3, \"\xc4\xa0" "ab\": 4, \"<|im_end|>\": 5,"
    " \"<|im_start|>\": 6, \"<|endoftext|>\": 7, \"<|eom|>\": 8},\n"
    "           \"merges\": [[\"a\", \"b\"], \"\xc4\xa0 ab\"]}}\n";

enum { IM_END = 5, IM_START = 6, ENDOFTEXT = 7, EOM = 8, Z = 9 };

static bool stops_are(const rlvr_tokenizer *t, const int32_t *want, int n_want) {
    int32_t stops[RLVR_TEMPLATE_MAX_STOPS];
    int n = rlvr_template_stop_tokens(t, stops);
    return n == n_want && memcmp(stops, want, (size_t)n * sizeof *stops) == 0;
}

static void test_undeclared(const rlvr_tokenizer *t) {
    int n = -1;
    CHECK(rlvr_tokenizer_generation_bos(t) == -1);
    CHECK(rlvr_tokenizer_generation_eos(t, &n) && n == 0);
    CHECK(stops_are(t, (const int32_t[]){IM_END, ENDOFTEXT}, 2));
    CHECK(rlvr_tokenizer_ends_episode(t, ENDOFTEXT) && !rlvr_tokenizer_ends_episode(t, IM_END));
    CHECK(!rlvr_tokenizer_ends_episode(t, EOM) && !rlvr_tokenizer_ends_episode(t, Z) && !rlvr_tokenizer_ends_episode(t, -1));
}

static void test_declared(rlvr_tokenizer *t) {
    /* the turn end and a repeat among them: kept once, in their order */
    CHECK_OK(rlvr_tokenizer_set_generation(t, IM_START, (const int32_t[]){IM_END, EOM, Z, EOM}, 4, "gen.json"));
    int n = -1;
    const int32_t *eos = rlvr_tokenizer_generation_eos(t, &n);
    CHECK(n == 3 && eos[0] == IM_END && eos[1] == EOM && eos[2] == Z);
    CHECK(rlvr_tokenizer_generation_bos(t) == IM_START);
    CHECK(stops_are(t, (const int32_t[]){IM_END, ENDOFTEXT, EOM, Z}, 4));
    CHECK(rlvr_tokenizer_ends_episode(t, EOM) && rlvr_tokenizer_ends_episode(t, Z));
    CHECK(!rlvr_tokenizer_ends_episode(t, IM_END) && !rlvr_tokenizer_ends_episode(t, 0));

    /* a reply ended by a declared id reads back with it as its end token */
    rlvr_reply_parts p;
    rlvr_template_parse_reply(t, (const int32_t[]){2, 4, EOM}, 3, &p);
    CHECK(p.end_token == EOM && !p.malformed && p.text_bytes == 5);
    /* a non-special declared id ends the text too */
    rlvr_template_parse_reply(t, (const int32_t[]){0, Z}, 2, &p);
    CHECK_MSG(p.end_token == Z && !p.malformed && p.text_bytes == 1, "end %d malformed %d bytes %zu",
              (int)p.end_token, p.malformed, p.text_bytes);
    char *text = NULL;
    size_t len = 0;
    CHECK_OK(rlvr_template_reply_text(t, (const int32_t[]){0, Z}, 2, &p, false, &text, &len));
    CHECK(text && len == 1 && text[0] == 'a');
    free(text);
    /* tokens after a declared end: malformed, as after the turn end */
    rlvr_template_parse_reply(t, (const int32_t[]){0, EOM, 1}, 3, &p);
    CHECK(p.malformed);
}

static void test_copies(const rlvr_tokenizer *t) {
    rlvr_tokenizer *c = NULL;
    CHECK_OK(rlvr_tokenizer_clone(&c, t));
    if (!c) return;
    CHECK(rlvr_tokenizer_equal(c, t));
    int n = 0;
    CHECK(rlvr_tokenizer_generation_eos(c, &n) && n == 3 && rlvr_tokenizer_generation_bos(c) == IM_START);
    CHECK_OK(rlvr_tokenizer_set_generation(c, IM_START, (const int32_t[]){IM_END, EOM}, 2, "other"));
    CHECK(!rlvr_tokenizer_equal(c, t));
    CHECK_OK(rlvr_tokenizer_set_generation(c, -1, (const int32_t[]){IM_END, EOM, Z}, 3, "other"));
    CHECK(!rlvr_tokenizer_equal(c, t));
    rlvr_tokenizer_free(c);
}

static void test_refusals(rlvr_tokenizer *t) {
    CHECK(rlvr_tokenizer_set_generation(t, -1, (const int32_t[]){IM_END, 10}, 2, "gen.json") == RLVR_EFORMAT);
    CHECK_MSG(strstr(rlvr_error_last(), "gen.json: eos_token_id 10 is outside the tokenizer's 10 ids"), "%s",
              rlvr_error_last());
    CHECK(rlvr_tokenizer_set_generation(t, 10, NULL, 0, "gen.json") == RLVR_EFORMAT);
    CHECK(strstr(rlvr_error_last(), "bos_token_id 10"));
    int32_t many[RLVR_TOKENIZER_MAX_EOS + 1] = {0};
    CHECK(rlvr_tokenizer_set_generation(t, -1, many, RLVR_TOKENIZER_MAX_EOS + 1, "gen.json") == RLVR_EFORMAT);
    int n = 0;
    CHECK(rlvr_tokenizer_generation_eos(t, &n) && n == 3 && rlvr_tokenizer_generation_bos(t) == IM_START);
}

int main(void) {
    rlvr_tokenizer *t = NULL;
    CHECK_OK(rlvr_tokenizer_new_hf_json(&t, chat_json, sizeof chat_json - 1, "chat.json"));
    if (t) CHECK_OK(rlvr_tokenizer_set_chat(t, "chatml", NULL, 0, "chat.json"));
    if (t && rlvr_tokenizer_chat(t)->family == RLVR_CHAT_CHATML) {
        CHECK(rlvr_tokenizer_vocab_size(t) == 10);
        test_undeclared(t);
        test_declared(t);
        test_copies(t);
        test_refusals(t);
    }
    rlvr_tokenizer_free(t);
    return test_summary("test_generation_ids");
}
