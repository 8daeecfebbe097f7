/* An HF tokenizer in a checkpoint: /tokenizer kind "hf" holds the
 * tokenizer.json text verbatim and reads back equal, encoding the same; a
 * damaged text is refused naming the checkpoint. Older kinds:
 * test_checkpoint. */
#include "io/checkpoint.h"
#include "io/h5util.h"
#include "io_fixtures.h"
#include "policy/hf_sample.h"
#include "policy/template.h"
#include "test.h"

/* Writes checkpoint 1 with tok; its path goes to path. */
static void write_checkpoint(const char *dir, const rlvr_tokenizer *tok, char *path, size_t cap) {
    rlvr_checkpoint_options opt = RLVR_CHECKPOINT_OPTIONS_INIT;
    opt.step = 1, opt.fsync = false;
    rlvr_checkpoint_writer *w = NULL;
    CHECK_OK(rlvr_checkpoint_begin(&w, dir, &opt));
    if (!w) return;
    CHECK_OK(rlvr_checkpoint_put_tokenizer(w, tok));
    CHECK_OK(rlvr_checkpoint_commit(w, path, cap));
}

static int read_back(const char *path, rlvr_tokenizer **out) {
    rlvr_checkpoint *ck = NULL;
    *out = NULL;
    int rc = rlvr_checkpoint_open(&ck, path);
    if (rc == 0) rc = rlvr_checkpoint_read_tokenizer(ck, out);
    rlvr_checkpoint_close(ck);
    return rc;
}

static void test_round_trip(const char *dir, const rlvr_tokenizer *tok, char *path, size_t cap) {
    write_checkpoint(dir, tok, path, cap);
    rlvr_tokenizer *back = NULL;
    CHECK_OK(read_back(path, &back));
    CHECK(back && rlvr_tokenizer_kind_of(back) == RLVR_TOKENIZER_HF && rlvr_tokenizer_equal(back, tok));
    int32_t a[8], b[8], na = 0, nb = -1;
    CHECK_OK(rlvr_tokenizer_encode_specials(tok, "ab ab<|im_end|>", 15, a, 8, &na));
    if (back) CHECK_OK(rlvr_tokenizer_encode_specials(back, "ab ab<|im_end|>", 15, b, 8, &nb));
    CHECK(na == 3 && na == nb && memcmp(a, b, sizeof a[0] * 3) == 0);
    rlvr_tokenizer_free(back);
}

/* The stored text replaced by a Unigram model: refused, naming the checkpoint. */
static void test_damaged(const char *path) {
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t g = H5Gopen2(f, "tokenizer", H5P_DEFAULT);
    H5Ldelete(g, "json", H5P_DEFAULT);
    CHECK_OK(rlvr_h5_write_text(g, "json", "{\"model\": {\"type\": \"Unigram\"}}", 0));
    H5Gclose(g);
    H5Fclose(f);
    rlvr_tokenizer *t = NULL;
    CHECK(read_back(path, &t) == RLVR_EFORMAT && !t);
    CHECK_MSG(strstr(rlvr_error_last(), path) && strstr(rlvr_error_last(), "/tokenizer/json: model.type is"), "%s",
              rlvr_error_last());
}

/* A chat family whose markers the vocabulary lacks is refused naming the
 * token; the tokenizer keeps its format (none, so rendering fails clearly). */
static void test_chat_needs_markers(const rlvr_tokenizer *tok) {
    rlvr_tokenizer *t = NULL;
    CHECK_OK(rlvr_tokenizer_clone(&t, tok));
    if (!t) return;
    const char jinja[] = "{{ '<|im_start|>' + m + '<|im_end|>' }}";
    CHECK(rlvr_tokenizer_set_chat(t, NULL, jinja, sizeof jinja - 1, "tokenizer_config.json") == RLVR_EFORMAT);
    CHECK_MSG(strstr(rlvr_error_last(), "tokenizer_config.json") && strstr(rlvr_error_last(), "<|im_start|>"), "%s",
              rlvr_error_last());
    CHECK(rlvr_tokenizer_chat(t)->family == RLVR_CHAT_NATIVE);
    rlvr_token_buf b = {0};
    CHECK(rlvr_template_begin(&b, t) == RLVR_EINVAL);
    CHECK_MSG(strstr(rlvr_error_last(), "no chat format"), "%s", rlvr_error_last());
    rlvr_token_buf_free(&b);
    rlvr_tokenizer_free(t);
}

/* Declared generation ids travel with the tokenizer; stored ones outside
 * the vocabulary are refused naming the checkpoint. */
static void test_generation_ids(const char *dir, const rlvr_tokenizer *tok, char *path, size_t cap) {
    rlvr_tokenizer *t = NULL;
    CHECK_OK(rlvr_tokenizer_clone(&t, tok));
    if (!t) return;
    CHECK_OK(rlvr_tokenizer_set_generation(t, 2, (const int32_t[]){5, 7}, 2, "gen"));
    test_round_trip(dir, t, path, cap);
    rlvr_tokenizer *back = NULL;
    CHECK_OK(read_back(path, &back));
    int n = 0;
    const int32_t *eos = back ? rlvr_tokenizer_generation_eos(back, &n) : NULL;
    CHECK(back && rlvr_tokenizer_generation_bos(back) == 2 && n == 2 && eos[0] == 5 && eos[1] == 7);
    CHECK(back && !rlvr_tokenizer_equal(back, tok));
    rlvr_tokenizer_free(back);

    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t g = H5Gopen2(f, "tokenizer", H5P_DEFAULT);
    H5Ldelete(g, "eos_token_ids", H5P_DEFAULT);
    hsize_t dims[1] = {1};
    CHECK_OK(rlvr_h5_write_array(g, "eos_token_ids", RLVR_DT_I32, 1, dims, (const int32_t[]){9}, 0));
    H5Gclose(g);
    H5Fclose(f);
    CHECK(read_back(path, &back) == RLVR_EFORMAT && !back);
    CHECK_MSG(strstr(rlvr_error_last(), path) && strstr(rlvr_error_last(), "eos_token_id 9 is outside"), "%s",
              rlvr_error_last());
    rlvr_tokenizer_free(t);
}

int main(void) {
    char dir[4096], path[4096];
    fixture_tmpdir(dir, sizeof dir, "hfckpt");
    rlvr_tokenizer *tok = NULL;
    CHECK_OK(rlvr_tokenizer_new_hf_json(&tok, hf_sample_json, sizeof hf_sample_json - 1, "sample.json"));
    if (tok) {
        test_round_trip(dir, tok, path, sizeof path);
        test_damaged(path);
        test_chat_needs_markers(tok);
        test_generation_ids(dir, tok, path, sizeof path);
    }
    rlvr_tokenizer_free(tok);
    fixture_rmtree(dir);
    return test_summary("test_hf_checkpoint");
}
