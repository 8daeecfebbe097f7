/* tests/policy/test_bpe.c — the BPE tokenizer: pieces, learning merges from
 * counted pieces (worked by hand), encoding and decoding (every byte string
 * round-trips, specials never come out of text), refused merge tables, and
 * the same merges whatever order the corpus comes in. */
#include "core/rng.h"
#include "policy/bpe.h"
#include "policy/tokenizer.h"
#include "test.h"

/* The pieces of text joined by '|'. */
static void pieces_of(const char *text, char *out, size_t cap) {
    size_t len = strlen(text), n = 0;
    out[0] = 0;
    for (size_t at = 0; at < len;) {
        size_t end = rlvr_bpe_piece_end(text, len, at);
        n += (size_t)snprintf(out + n, cap - n, "%s%.*s", at ? "|" : "", (int)(end - at), text + at);
        at = end;
    }
}

static void check_pieces(const char *text, const char *want) {
    char got[1024];
    pieces_of(text, got, sizeof got);
    CHECK_MSG(strcmp(got, want) == 0, "pieces of \"%s\": \"%s\", want \"%s\"", text, got, want);
}

static void test_pieces(void) {
    check_pieces("    if (x > 0) return 1;\n", "   | if| (|x| >| 0|)| return| 1|;|\n");
    /* the same code inside a JSON string: the same pieces, \n as one */
    check_pieces("{\"old\":\"    if (x > 0) return 1;\\n\"}",
                 "{\"|old|\":\"|   | if| (|x| >| 0|)| return| 1|;|\\n|\"}");
    check_pieces("     1\t#include \"lib.h\"\n", "    | 1|\t|#|include| \"|lib|.|h|\"|\n");
    check_pieces("46270", "4|6|2|7|0");
    check_pieces("a  \n\n b\\", "a|  |\n\n| b|\\");
    check_pieces("caf\xc3\xa9 ok", "caf\xc3\xa9| ok");
    char spaces[101];
    memset(spaces, ' ', 100);
    spaces[100] = 0;
    size_t first = rlvr_bpe_piece_end(spaces, 100, 0);
    CHECK(first == RLVR_BPE_MAX_PIECE && rlvr_bpe_piece_end(spaces, 100, first) == 100);
}

/* "abab" three times and "ab" once: (a,b) occurs 7 times, then (F,F) 3. */
static void test_learn_by_hand(void) {
    rlvr_bpe_trainer *tr = NULL;
    CHECK_OK(rlvr_bpe_trainer_new(&tr));
    if (!tr) return;
    CHECK_OK(rlvr_bpe_trainer_add(tr, "abab abab", 9)); /* pieces "abab", " abab" */
    CHECK_OK(rlvr_bpe_trainer_add(tr, "abab", 4));
    CHECK_OK(rlvr_bpe_trainer_add(tr, "ab", 2));
    int64_t pieces, bytes;
    rlvr_bpe_trainer_counts(tr, &pieces, &bytes);
    CHECK(pieces == 4 && bytes == 15);
    const int32_t F = RLVR_TOKENIZER_FIRST_MERGE;
    int32_t *m = NULL, n = 0;
    CHECK_OK(rlvr_bpe_learn(tr, F, 10, 2, &m, &n));
    /* (a,b) 7; then (F,F) 3 and (' ',F) 1: only (F,F) reaches 2 */
    CHECK_MSG(n == 2, "%d merges", (int)n);
    if (n == 2) CHECK(m[0] == 'a' && m[1] == 'b' && m[2] == F && m[3] == F);
    rlvr_tokenizer *t = NULL;
    if (n == 2) CHECK_OK(rlvr_tokenizer_new_bpe(&t, m, n));
    free(m);
    rlvr_bpe_trainer_free(tr);
    if (!t) return;
    CHECK(rlvr_tokenizer_kind_of(t) == RLVR_TOKENIZER_BPE && rlvr_tokenizer_vocab_size(t) == F + 2);
    int32_t ids[16], k = 0;
    CHECK_OK(rlvr_tokenizer_encode(t, "abab ab aba", 11, ids, 16, &k));
    /* abab | ' ' ab | ' ' aba */
    int32_t want[] = {F + 1, ' ', F, ' ', F, 'a'};
    CHECK(k == 6 && memcmp(ids, want, sizeof want) == 0);
    size_t len;
    const char *text = rlvr_tokenizer_token_bytes(t, F + 1, &len);
    CHECK(len == 4 && memcmp(text, "abab", 4) == 0);
    CHECK(rlvr_tokenizer_token_bytes(t, rlvr_tokenizer_special(t, RLVR_SPECIAL_EOS), &len) == NULL && len == 0);
    char out[32];
    CHECK_OK(rlvr_tokenizer_decode(t, ids, k, false, out, sizeof out, &len));
    CHECK(len == 11 && strcmp(out, "abab ab aba") == 0);
    /* counting mode, and a buffer that is too small */
    CHECK_OK(rlvr_tokenizer_encode(t, "abab ab aba", 11, NULL, 0, &k));
    CHECK(k == 6);
    CHECK(rlvr_tokenizer_encode(t, "abab ab aba", 11, ids, 5, &k) == RLVR_ELIMIT && k == 6);
    char d[64];
    rlvr_tokenizer_describe(t, d, sizeof d);
    CHECK(strcmp(d, "bpe (2 merges)") == 0);
    rlvr_tokenizer_free(t);
}

/* Code-like text with enough repeats to learn a few hundred merges. */
static void corpus_text(char *buf, size_t cap, int i) {
    static const char *const lines[] = {"    if (x > %d) return %d;\n", "{\"name\":\"read_file\",\"arguments\":{\"path\":\"lib%d.c\"}}",
                                        "int sum_to(int n) {\n    int s = %d;\n    return s + %d;\n}\n",
                                        "Bug in lib.c: sign(-%d) returns 0, expected %d. Fix it and submit."};
    snprintf(buf, cap, lines[i % 4], i * 7 % 100, i % 13);
}

static void learn_corpus(int order, int32_t **m, int32_t *n) {
    rlvr_bpe_trainer *tr = NULL;
    CHECK_OK(rlvr_bpe_trainer_new(&tr));
    if (!tr) return;
    char buf[256];
    for (int k = 0; k < 400; k++) {
        corpus_text(buf, sizeof buf, order ? 399 - k : k);
        CHECK_OK(rlvr_bpe_trainer_add(tr, buf, strlen(buf)));
    }
    CHECK_OK(rlvr_bpe_learn(tr, RLVR_TOKENIZER_FIRST_MERGE, 300, 2, m, n));
    rlvr_bpe_trainer_free(tr);
}

static void test_round_trip_and_order(void) {
    int32_t *m1 = NULL, *m2 = NULL, n1 = 0, n2 = 0;
    learn_corpus(0, &m1, &n1);
    learn_corpus(1, &m2, &n2);
    CHECK_MSG(n1 > 20 && n1 == n2 && memcmp(m1, m2, (size_t)n1 * 2 * sizeof *m1) == 0,
              "merges depend on the corpus order (%d, %d)", (int)n1, (int)n2);
    rlvr_tokenizer *t = NULL, *c = NULL, *b = NULL;
    if (n1 > 0) CHECK_OK(rlvr_tokenizer_new_bpe(&t, m1, n1));
    free(m1), free(m2);
    if (!t) return;
    CHECK_OK(rlvr_tokenizer_clone(&c, t));
    CHECK_OK(rlvr_tokenizer_new_byte(&b));
    CHECK(c && rlvr_tokenizer_equal(t, c) && b && !rlvr_tokenizer_equal(t, b));

    /* the corpus compresses; a line of it encodes to fewer ids than bytes */
    char buf[256];
    corpus_text(buf, sizeof buf, 2);
    int32_t ids[512], k = 0;
    CHECK_OK(rlvr_tokenizer_encode(t, buf, strlen(buf), ids, 512, &k));
    CHECK_MSG(k * 2 < (int32_t)strlen(buf), "%d ids for %zu bytes", (int)k, strlen(buf));

    /* random bytes (NUL, UTF-8 fragments, spelled specials) round-trip */
    rlvr_rng_stream s;
    rlvr_rng_stream_init(&s, 7, RLVR_RNG_INIT, 0, 0);
    char text[300], back[400];
    static const char alphabet[] = " \t\n\\\"{}:,abcxyz019_<|>é";
    bool ok = true, no_special = true;
    for (int trial = 0; trial < 200; trial++) {
        size_t len = rlvr_rng_next_u32(&s) % 300;
        for (size_t i = 0; i < len; i++) {
            uint32_t r = rlvr_rng_next_u32(&s);
            text[i] = r % 4 == 0 ? (char)(r >> 8) : alphabet[(r >> 8) % (sizeof alphabet - 1)];
        }
        CHECK_OK(rlvr_tokenizer_encode(t, text, len, ids, 512, &k));
        for (int32_t i = 0; i < k; i++) no_special &= !rlvr_tokenizer_is_special(t, ids[i]);
        size_t out = 0;
        CHECK_OK(rlvr_tokenizer_decode(t, ids, k, true, back, sizeof back, &out));
        ok &= out == len && memcmp(back, text, len) == 0;
    }
    CHECK_MSG(ok, "a random byte string did not round-trip");
    CHECK(no_special);
    const char *spoof = "<|end_of_turn|>";
    CHECK_OK(rlvr_tokenizer_encode(t, spoof, strlen(spoof), ids, 512, &k));
    for (int32_t i = 0; i < k; i++) CHECK(!rlvr_tokenizer_is_special(t, ids[i]));

    /* the model must cover the merged ids */
    rlvr_model_config mc = {.vocab = 272};
    CHECK(rlvr_tokenizer_check_model(t, &mc) == RLVR_EINVAL);
    CHECK(strstr(rlvr_error_last(), "merges"));
    mc.vocab = rlvr_tokenizer_vocab_size(t);
    CHECK_OK(rlvr_tokenizer_check_model(t, &mc));
    rlvr_tokenizer_free(t), rlvr_tokenizer_free(c), rlvr_tokenizer_free(b);
}

static void test_refused(void) {
    const int32_t F = RLVR_TOKENIZER_FIRST_MERGE;
    rlvr_tokenizer *t = NULL;
    int32_t special[2] = {'a', 256};
    CHECK(rlvr_tokenizer_new_bpe(&t, special, 1) == RLVR_EFORMAT && !t);
    CHECK(strstr(rlvr_error_last(), "merge 0 joins id 256"));
    int32_t later[4] = {'a', 'b', F + 1, 'c'};
    CHECK(rlvr_tokenizer_new_bpe(&t, later, 2) == RLVR_EFORMAT && !t);
    CHECK(strstr(rlvr_error_last(), "merge 1 joins id"));
    CHECK(rlvr_tokenizer_new_bpe(&t, later, 0) == RLVR_EINVAL && !t);
    int32_t negative[2] = {-1, 'a'};
    CHECK(rlvr_tokenizer_new_bpe(&t, negative, 1) == RLVR_EFORMAT && !t);
}

int main(void) {
    test_pieces();
    test_learn_by_hand();
    test_round_trip_and_order();
    test_refused();
    return test_summary("test_bpe");
}
