/* tests/policy/test_hf_tokenizer_api.c — the HF tokenizer kind through
 * policy/tokenizer.h on a tiny tokenizer.json (hf_sample.h): encode never
 * gives special ids, encode_specials does, decode, token bytes, the lookups,
 * equal/clone/describe; and encode_specials of rlvr's own kinds. The ids
 * against the tokenizers library: test_hf_tokenizer. */
#include "policy/hf_sample.h"
#include "policy/tokenizer.h"
#include "test.h"

static bool ids_are(const int32_t *ids, int32_t n, const int32_t *want, int32_t n_want) {
    return n == n_want && memcmp(ids, want, (size_t)n * sizeof *ids) == 0;
}

static void test_encode(const rlvr_tokenizer *t) {
    int32_t ids[16], n = -1;
    CHECK_OK(rlvr_tokenizer_encode(t, "ab ab", 5, ids, 16, &n));
    CHECK(ids_are(ids, n, (const int32_t[]){2, 4}, 2));
    /* the special's text goes through BPE (its characters are not in the vocabulary) */
    CHECK_OK(rlvr_tokenizer_encode(t, "ab<|im_end|>ab", 14, ids, 16, &n));
    CHECK(ids_are(ids, n, (const int32_t[]){2, 2}, 2));
    CHECK_OK(rlvr_tokenizer_encode_specials(t, "ab<|im_end|>ab", 14, ids, 16, &n));
    CHECK(ids_are(ids, n, (const int32_t[]){2, 5, 2}, 3));
    /* a non-special added token is matched by both */
    CHECK_OK(rlvr_tokenizer_encode(t, "a<x>b", 5, ids, 16, &n));
    CHECK(ids_are(ids, n, (const int32_t[]){0, 7, 1}, 3));
    int32_t count = 0;
    CHECK_OK(rlvr_tokenizer_encode(t, "ab ab", 5, NULL, 0, &count));
    CHECK(count == 2);
    CHECK(rlvr_tokenizer_encode(t, "ab ab", 5, ids, 1, &count) == RLVR_ELIMIT && count == 2 && ids[0] == 2);
    CHECK(rlvr_tokenizer_encode_specials(t, "ab<|im_end|>", 12, ids, 1, &count) == RLVR_ELIMIT && count == 2);
    CHECK_OK(rlvr_tokenizer_encode(t, "", 0, ids, 16, &n));
    CHECK(n == 0);
}

static void test_decode(const rlvr_tokenizer *t) {
    char out[64];
    size_t len = 0;
    const int32_t ids[] = {2, 4, 5, 7};
    CHECK_OK(rlvr_tokenizer_decode(t, ids, 4, false, out, sizeof out, &len));
    CHECK(len == 8 && strcmp(out, "ab ab<x>") == 0);
    CHECK_OK(rlvr_tokenizer_decode(t, ids, 4, true, out, sizeof out, &len));
    CHECK(strcmp(out, "ab ab<|im_end|><x>") == 0);
    CHECK(rlvr_tokenizer_decode(t, (const int32_t[]){6}, 1, true, out, sizeof out, &len) == RLVR_EINVAL);
    CHECK(rlvr_tokenizer_decode(t, (const int32_t[]){9}, 1, true, out, sizeof out, &len) == RLVR_EINVAL);
    CHECK_OK(rlvr_tokenizer_decode(t, (const int32_t[]){8}, 1, true, out, sizeof out, &len));
    CHECK(strcmp(out, "c") == 0);
}

static void test_lookups(const rlvr_tokenizer *t) {
    CHECK(rlvr_tokenizer_kind_of(t) == RLVR_TOKENIZER_HF);
    CHECK(rlvr_tokenizer_vocab_size(t) == 9);
    char what[100];
    rlvr_tokenizer_describe(t, what, sizeof what);
    CHECK_MSG(strcmp(what, "hf bpe (9 ids, 2 merges, 2 added)") == 0, "%s", what);
    size_t len = 0;
    const char *b = rlvr_tokenizer_token_bytes(t, 3, &len);
    CHECK(b && len == 1 && b[0] == ' ');
    b = rlvr_tokenizer_token_bytes(t, 7, &len);
    CHECK(b && len == 3 && memcmp(b, "<x>", 3) == 0);
    CHECK(rlvr_tokenizer_token_bytes(t, 5, &len) == NULL && len == 0);
    CHECK(rlvr_tokenizer_token_bytes(t, 6, &len) == NULL);
    CHECK(rlvr_tokenizer_is_special(t, 5) && !rlvr_tokenizer_is_special(t, 7) && !rlvr_tokenizer_is_special(t, 2));
    for (int s = 0; s < RLVR_SPECIAL_COUNT; s++) CHECK(rlvr_tokenizer_special(t, (rlvr_special_token)s) == -1);
    int32_t id = -1;
    CHECK_OK(rlvr_tokenizer_find_special(t, "<|im_end|>", &id));
    CHECK(id == 5);
    CHECK_OK(rlvr_tokenizer_find_special(t, "<x>", &id));
    CHECK(id == 7);
    CHECK(rlvr_tokenizer_find_special(t, "<|eos|>", &id) == RLVR_ENOTFOUND);
    int32_t n_merges = -1;
    CHECK(rlvr_tokenizer_merges(t, &n_merges) == NULL && n_merges == 0);
}

static void test_identity(const rlvr_tokenizer *t) {
    const char *json = NULL;
    size_t len = 0;
    CHECK_OK(rlvr_tokenizer_hf_json(t, &json, &len));
    CHECK(len == sizeof hf_sample_json - 1 && memcmp(json, hf_sample_json, len) == 0);
    rlvr_tokenizer *c = NULL, *other = NULL, *byte = NULL;
    CHECK_OK(rlvr_tokenizer_clone(&c, t));
    CHECK(c && rlvr_tokenizer_equal(c, t));
    /* the same tokenizer spelled with other whitespace is another file */
    CHECK_OK(rlvr_tokenizer_new_hf_json(&other, hf_sample_json, sizeof hf_sample_json - 2, "other.json"));
    CHECK(other && !rlvr_tokenizer_equal(other, t));
    CHECK_OK(rlvr_tokenizer_new_byte(&byte));
    CHECK(!rlvr_tokenizer_equal(byte, t) && !rlvr_tokenizer_equal(t, byte));
    CHECK(rlvr_tokenizer_hf_json(byte, &json, &len) == RLVR_EINVAL);
    rlvr_tokenizer_free(c), rlvr_tokenizer_free(other), rlvr_tokenizer_free(byte);

    rlvr_tokenizer *bad = NULL;
    const char *unigram = "{\"model\": {\"type\": \"Unigram\"}}";
    CHECK(rlvr_tokenizer_new_hf_json(&bad, unigram, strlen(unigram), "u.json") == RLVR_EFORMAT);
    CHECK(bad == NULL && strstr(rlvr_error_last(), "u.json: model.type is \"Unigram\""));
    rlvr_model_config cfg = {.vocab = 8};
    CHECK(rlvr_tokenizer_check_model(t, &cfg) == RLVR_EINVAL && strstr(rlvr_error_last(), "sample.json"));
    cfg.vocab = 9;
    CHECK_OK(rlvr_tokenizer_check_model(t, &cfg));
}

/* A special token that BPE spells from plain text ("a" made special): encode
 * refuses rather than give its id; encode_specials gives it. */
static void test_special_from_bpe(void) {
    char json[sizeof hf_sample_json + 16];
    const char *from = strstr(hf_sample_json, "\"id\": 5, \"content\": \"<|im_end|>\"");
    if (!from) return;
    size_t head = (size_t)(from - hf_sample_json);
    int k = snprintf(json, sizeof json, "%.*s\"id\": 0, \"content\": \"a\"%s", (int)head, hf_sample_json,
                     from + strlen("\"id\": 5, \"content\": \"<|im_end|>\""));
    rlvr_tokenizer *t = NULL;
    CHECK_OK(rlvr_tokenizer_new_hf_json(&t, json, (size_t)k, "a.json"));
    if (!t) return;
    int32_t ids[8], n = -1;
    CHECK(rlvr_tokenizer_encode(t, "ba", 2, ids, 8, &n) == RLVR_EFORMAT);
    CHECK_MSG(strstr(rlvr_error_last(), "a.json: the text's BPE gives special token 0"), "%s", rlvr_error_last());
    CHECK_OK(rlvr_tokenizer_encode_specials(t, "ba", 2, ids, 8, &n));
    CHECK(ids_are(ids, n, (const int32_t[]){1, 0}, 2));
    rlvr_tokenizer_free(t);
}

/* rlvr's own kinds: encode_specials turns printed names into their ids, longest first. */
static void test_own_kinds(void) {
    rlvr_tokenizer *byte = NULL, *bpe = NULL;
    CHECK_OK(rlvr_tokenizer_new_byte(&byte));
    CHECK_OK(rlvr_tokenizer_new_bpe(&bpe, (const int32_t[]){'a', 'b'}, 1));
    if (!byte || !bpe) return;
    int32_t ids[32], n = -1;
    int32_t eos = rlvr_tokenizer_special(byte, RLVR_SPECIAL_EOS);
    CHECK_OK(rlvr_tokenizer_encode_specials(byte, "a<|eos|>b<|eos", 14, ids, 32, &n));
    CHECK(n == 8 && ids[0] == 'a' && ids[1] == eos && ids[2] == 'b' && ids[3] == '<' && ids[7] == 's');
    CHECK_OK(rlvr_tokenizer_encode(byte, "a<|eos|>", 8, ids, 32, &n));
    CHECK(n == 8);
    int32_t user = rlvr_tokenizer_special(bpe, RLVR_SPECIAL_USER);
    CHECK_OK(rlvr_tokenizer_encode_specials(bpe, "<|user|>ab<|/tool_call|>", 24, ids, 32, &n));
    CHECK(ids_are(ids, n,
                  (const int32_t[]){user, RLVR_TOKENIZER_FIRST_MERGE,
                                    rlvr_tokenizer_special(bpe, RLVR_SPECIAL_TOOL_CALL_CLOSE)},
                  3));
    int32_t count = 0;
    CHECK_OK(rlvr_tokenizer_encode_specials(bpe, "<|user|>ab", 10, NULL, 0, &count));
    CHECK(count == 2);
    CHECK(rlvr_tokenizer_encode_specials(bpe, "<|user|>ab", 10, ids, 1, &count) == RLVR_ELIMIT && count == 2);
    rlvr_tokenizer_free(byte), rlvr_tokenizer_free(bpe);
}

int main(void) {
    rlvr_tokenizer *t = NULL;
    CHECK_OK(rlvr_tokenizer_new_hf_json(&t, hf_sample_json, sizeof hf_sample_json - 1, "sample.json"));
    if (t) {
        test_encode(t);
        test_decode(t);
        test_lookups(t);
        test_identity(t);
        rlvr_tokenizer_free(t);
    }
    test_own_kinds();
    test_special_from_bpe();
    return test_summary("test_hf_tokenizer_api");
}
