/* Checkpoints: round trips of model, moments, state arrays and the
 * tokenizer, `latest`, retention, and refusals that name the file and the
 * field. */
#include "io/checkpoint.h"
#include "io/file.h"
#include "io/h5util.h"
#include "io/shard.h"
#include "io_fixtures.h"
#include "test.h"

#include <sys/stat.h>

/* Field by field: the struct has padding bytes (after tie_embeddings),
 * which neither a copy nor a load has to preserve. */
static bool same_model_config(const rlvr_model_config *a, const rlvr_model_config *b) {
    return a->vocab == b->vocab && a->d_model == b->d_model && a->n_layers == b->n_layers &&
           a->n_heads == b->n_heads && a->n_kv_heads == b->n_kv_heads && a->d_ff == b->d_ff &&
           a->max_seq == b->max_seq && a->rope_theta == b->rope_theta && a->norm_eps == b->norm_eps &&
           a->tie_embeddings == b->tie_embeddings && a->init_seed == b->init_seed && a->init_std == b->init_std;
}

static const rlvr_model_config tiny = {
    .vocab = 40, .d_model = 16, .n_layers = 2, .n_heads = 4, .n_kv_heads = 2, .d_ff = 24, .max_seq = 32,
    .rope_theta = 10000.0f, .norm_eps = 1e-5f, .tie_embeddings = false, .init_seed = 7, .init_std = 0.02f,
};

static bool exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

static void fill(float *x, size_t n, uint32_t seq) {
    rlvr_rng_stream s;
    rlvr_rng_stream_init(&s, 99, RLVR_RNG_TEST, 1, seq);
    for (size_t i = 0; i < n; i++) x[i] = (float)rlvr_rng_next_normal(&s);
}

static int save(const char *dir, int64_t step, rlvr_model *m, int keep_last, bool mark) {
    rlvr_checkpoint_options opt = RLVR_CHECKPOINT_OPTIONS_INIT;
    opt.step = step;
    opt.policy_version = step + 100;
    opt.config_text = "[run]\nseed = 5\n";
    opt.config_hash = 0xfeedbeefcafef00dULL;
    opt.keep_last = keep_last;
    opt.mark = mark;
    opt.fsync = false;
    rlvr_checkpoint_writer *w;
    RLVR_TRY(rlvr_checkpoint_begin(&w, dir, &opt));
    int rc = m ? rlvr_checkpoint_put_model(w, m) : 0;
    int64_t cursor[3] = {step, 17, -4};
    rlvr_state_array a = {.name = "cursor", .dtype = RLVR_DT_I64, .rank = 1, .dims = {3}, .data = cursor};
    if (rc == 0) rc = rlvr_checkpoint_put_array(w, &a);
    if (rc < 0) {
        rlvr_checkpoint_abort(w);
        return rc;
    }
    return rlvr_checkpoint_commit(w, NULL, 0);
}

static void test_model_round_trip(const char *dir) {
    rlvr_model *m = NULL;
    CHECK_OK(rlvr_model_new(&m, &tiny));
    if (!m) return;
    CHECK_OK(rlvr_model_alloc_optim_state(m));
    size_t n = rlvr_model_num_params(m);
    fill(rlvr_model_adam_m(m), n, 1);
    fill(rlvr_model_adam_v(m), n, 2);

    rlvr_checkpoint_options opt = RLVR_CHECKPOINT_OPTIONS_INIT;
    opt.step = 12;
    opt.policy_version = 13;
    opt.config_text = "[model]\nd_model = 16\n";
    opt.config_hash = 12345;
    opt.compression = 4;
    rlvr_checkpoint_writer *w = NULL;
    CHECK_OK(rlvr_checkpoint_begin(&w, dir, &opt));
    if (!w) return;
    CHECK_OK(rlvr_checkpoint_put_model(w, m));
    CHECK(rlvr_checkpoint_put_model(w, m) == RLVR_EINVAL);

    float table[5][3];
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 3; j++) table[i][j] = (float)(i * 10 + j) + 0.5f;
    const char *text = "task pool v3";
    rlvr_state_array arrays[] = {
        {.name = "difficulty/table", .dtype = RLVR_DT_F32, .rank = 2, .dims = {5, 3}, .data = table},
        {.name = "notes", .dtype = RLVR_DT_U8, .rank = 1, .dims = {(int64_t)strlen(text)}, .data = text},
        {.name = "empty", .dtype = RLVR_DT_F64, .rank = 1, .dims = {0}, .data = NULL},
    };
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) CHECK_OK(rlvr_checkpoint_put_array(w, &arrays[i]));
    CHECK(rlvr_checkpoint_put_array(w, &arrays[0]) == RLVR_EINVAL); /* twice */
    rlvr_state_array bad = arrays[1];
    bad.name = "has space";
    CHECK(rlvr_checkpoint_put_array(w, &bad) == RLVR_EINVAL);
    bad.name = "../escape";
    CHECK(rlvr_checkpoint_put_array(w, &bad) == RLVR_EINVAL);
    bad.name = "/abs";
    CHECK(rlvr_checkpoint_put_array(w, &bad) == RLVR_EINVAL);

    rlvr_rng_stream rng;
    rlvr_rng_stream_init(&rng, 77, RLVR_RNG_SAMPLE, 3, 9);
    for (int i = 0; i < 7; i++) rlvr_rng_next_u32(&rng); /* mid-buffer */
    CHECK_OK(rlvr_checkpoint_put_rng(w, "rng/sampler", &rng));
    char path[4096] = "";
    CHECK_OK(rlvr_checkpoint_commit(w, path, sizeof path));

    char latest[4096] = "";
    CHECK_OK(rlvr_checkpoint_latest(dir, latest, sizeof latest));
    CHECK(strcmp(latest, path) == 0);

    rlvr_checkpoint *ck = NULL;
    CHECK_OK(rlvr_checkpoint_open(&ck, path));
    if (!ck) return;
    const rlvr_checkpoint_info *info = rlvr_checkpoint_info_of(ck);
    CHECK(info->step == 12 && info->policy_version == 13);
    CHECK(info->config_hash == 12345);
    CHECK(strcmp(info->config_text, "[model]\nd_model = 16\n") == 0);
    CHECK(info->has_model && info->has_moments);

    rlvr_model *back = NULL;
    CHECK_OK(rlvr_checkpoint_load_model(ck, &back));
    if (back) {
        CHECK(same_model_config(rlvr_model_config_of(back), &tiny));
        CHECK(memcmp(rlvr_model_params(back), rlvr_model_params(m), n * sizeof(float)) == 0);
        CHECK(rlvr_model_adam_m(back) && memcmp(rlvr_model_adam_m(back), rlvr_model_adam_m(m), n * 4) == 0);
        CHECK(rlvr_model_adam_v(back) && memcmp(rlvr_model_adam_v(back), rlvr_model_adam_v(m), n * 4) == 0);
        rlvr_model_free(back);
    }

    float table_back[5][3];
    int64_t dims[RLVR_IO_MAX_RANK] = {5, 3};
    rlvr_dtype dt;
    int rank;
    int64_t got[RLVR_IO_MAX_RANK];
    CHECK_OK(rlvr_checkpoint_array_shape(ck, "difficulty/table", &dt, &rank, got));
    CHECK(dt == RLVR_DT_F32 && rank == 2 && got[0] == 5 && got[1] == 3);
    CHECK_OK(rlvr_checkpoint_read_array(ck, "difficulty/table", RLVR_DT_F32, 2, dims, table_back));
    CHECK(memcmp(table, table_back, sizeof table) == 0);
    char text_back[32] = "";
    int64_t tdims[RLVR_IO_MAX_RANK] = {(int64_t)strlen(text)};
    CHECK_OK(rlvr_checkpoint_read_array(ck, "notes", RLVR_DT_U8, 1, tdims, text_back));
    CHECK(strcmp(text_back, text) == 0);
    int64_t zero[RLVR_IO_MAX_RANK] = {0};
    CHECK_OK(rlvr_checkpoint_read_array(ck, "empty", RLVR_DT_F64, 1, zero, NULL));

    rlvr_rng_stream rng_back;
    memset(&rng_back, 0, sizeof rng_back);
    CHECK_OK(rlvr_checkpoint_read_rng(ck, "rng/sampler", &rng_back));
    bool same = true;
    for (int i = 0; i < 20; i++) same = same && rlvr_rng_next_u32(&rng) == rlvr_rng_next_u32(&rng_back);
    CHECK(same);

    /* refusals name the file and the field */
    CHECK(rlvr_checkpoint_read_array(ck, "difficulty/table", RLVR_DT_F64, 2, dims, table_back) == RLVR_EFORMAT);
    CHECK(strstr(rlvr_error_last(), "difficulty/table") && strstr(rlvr_error_last(), path));
    CHECK(strstr(rlvr_error_last(), "float32"));
    int64_t wrong[RLVR_IO_MAX_RANK] = {3, 5};
    CHECK(rlvr_checkpoint_read_array(ck, "difficulty/table", RLVR_DT_F32, 2, wrong, table_back) == RLVR_EFORMAT);
    CHECK(strstr(rlvr_error_last(), "shape (5, 3), expected (3, 5)"));
    CHECK(rlvr_checkpoint_read_array(ck, "nothing", RLVR_DT_F32, 1, wrong, table_back) == RLVR_ENOTFOUND);
    CHECK(strstr(rlvr_error_last(), "nothing"));

    rlvr_model_config other = tiny;
    other.d_ff = 32;
    rlvr_model *m2 = NULL;
    CHECK_OK(rlvr_model_new(&m2, &other));
    if (m2) {
        CHECK(rlvr_checkpoint_read_model(ck, m2) == RLVR_EFORMAT);
        CHECK(strstr(rlvr_error_last(), "d_ff is 24 in the checkpoint, 32 in the model"));
        CHECK(strstr(rlvr_error_last(), path));
        rlvr_model_free(m2);
    }
    other = tiny;
    other.tie_embeddings = true;
    CHECK_OK(rlvr_model_new(&m2, &other));
    if (m2) {
        CHECK(rlvr_checkpoint_read_model(ck, m2) == RLVR_EFORMAT);
        CHECK(strstr(rlvr_error_last(), "tie_embeddings"));
        rlvr_model_free(m2);
    }
    rlvr_checkpoint_close(ck);

    int64_t n_datasets = 0;
    CHECK_OK(rlvr_io_verify(path, &n_datasets, NULL));
    CHECK(n_datasets == 3 * 12 + 1 + 4); /* params, 2 moments, config, 4 state arrays */
    rlvr_file_kind kind;
    CHECK_OK(rlvr_io_identify(path, &kind, NULL));
    CHECK(kind == RLVR_FILE_CHECKPOINT);

    /* a stored shape that no longer matches the stored configuration */
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t g = H5Gopen2(f, "model", H5P_DEFAULT);
    CHECK_OK(rlvr_h5_attr_put_i64(g, "d_ff", 32));
    H5Gclose(g);
    H5Fclose(f);
    CHECK_OK(rlvr_checkpoint_open(&ck, path));
    if (ck) {
        CHECK(rlvr_checkpoint_load_model(ck, &back) == RLVR_EFORMAT);
        CHECK(strstr(rlvr_error_last(), "model/params/w_gate has shape (2, 24, 16), expected (2, 32, 16)"));
        CHECK(strstr(rlvr_error_last(), path));
        rlvr_checkpoint_close(ck);
    }
    rlvr_model_free(m);
}

static void test_format_refusals(const char *dir) {
    char path[4096];
    CHECK_OK(save(dir, 1, NULL, 0, false));
    CHECK_OK(rlvr_checkpoint_path(path, sizeof path, dir, 1));
    rlvr_checkpoint *ck = NULL;
    CHECK_OK(rlvr_checkpoint_open(&ck, path));
    if (ck) {
        rlvr_model_config cfg;
        CHECK(!rlvr_checkpoint_info_of(ck)->has_model);
        CHECK(rlvr_checkpoint_model_config(ck, &cfg) == RLVR_EFORMAT);
        CHECK(strstr(rlvr_error_last(), "no model"));
        rlvr_checkpoint_close(ck);
    }
    /* a newer format version */
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    CHECK_OK(rlvr_h5_attr_put_i64(f, "format_version", RLVR_CHECKPOINT_FORMAT_VERSION + 1));
    H5Fclose(f);
    CHECK(rlvr_checkpoint_open(&ck, path) == RLVR_EFORMAT);
    CHECK(strstr(rlvr_error_last(), "format_version") && strstr(rlvr_error_last(), path));
    /* another kind of rlvr file */
    rlvr_shard_writer *w;
    char shard[4096];
    CHECK_OK(rlvr_shard_create(&w, dir, 0, 0, NULL));
    CHECK_OK(rlvr_shard_commit(w, shard, sizeof shard));
    CHECK(rlvr_checkpoint_open(&ck, shard) == RLVR_EFORMAT);
    CHECK(strstr(rlvr_error_last(), "\"rlvr.rollout_shard\", expected \"rlvr.checkpoint\""));
}

static void test_latest_and_retention(const char *dir) {
    char path[4096];
    CHECK(rlvr_checkpoint_latest(dir, path, sizeof path) == RLVR_ENOTFOUND);
    for (int64_t step = 1; step <= 6; step++) {
        CHECK_OK(save(dir, step, NULL, 2, step == 2));
        char want[4096];
        CHECK_OK(rlvr_checkpoint_path(want, sizeof want, dir, step));
        CHECK_OK(rlvr_checkpoint_latest(dir, path, sizeof path));
        CHECK(strcmp(path, want) == 0);
    }
    int64_t steps[16];
    size_t n = 0;
    CHECK_OK(rlvr_checkpoint_list(dir, steps, 16, &n));
    CHECK(n == 3 && steps[0] == 2 && steps[1] == 5 && steps[2] == 6);
    /* marking after the fact */
    CHECK_OK(rlvr_checkpoint_mark(dir, 5));
    CHECK(rlvr_checkpoint_mark(dir, 4) == RLVR_ENOTFOUND);
    CHECK_OK(save(dir, 7, NULL, 1, false));
    CHECK_OK(rlvr_checkpoint_list(dir, steps, 16, &n));
    CHECK(n == 3 && steps[0] == 2 && steps[1] == 5 && steps[2] == 7);
    /* a stale .part from a crashed save is cleaned up by the next save */
    char stale[4400];
    snprintf(stale, sizeof stale, "%s/step_00000008.h5.part", dir);
    FILE *f = fopen(stale, "w");
    if (f) fclose(f);
    CHECK_OK(save(dir, 9, NULL, 1, false));
    CHECK(!exists(stale));
    /* abort leaves nothing */
    rlvr_checkpoint_options opt = RLVR_CHECKPOINT_OPTIONS_INIT;
    opt.step = 10;
    rlvr_checkpoint_writer *w = NULL;
    CHECK_OK(rlvr_checkpoint_begin(&w, dir, &opt));
    rlvr_checkpoint_abort(w);
    CHECK_OK(rlvr_checkpoint_path(path, sizeof path, dir, 10));
    CHECK(!exists(path));
    snprintf(stale, sizeof stale, "%s.part", path);
    CHECK(!exists(stale));
    /* a damaged tracker */
    char latest[4400];
    snprintf(latest, sizeof latest, "%s/latest", dir);
    f = fopen(latest, "w");
    if (f) {
        fputs("../../etc/passwd\n", f);
        fclose(f);
    }
    CHECK(rlvr_checkpoint_latest(dir, path, sizeof path) == RLVR_EFORMAT);
    CHECK(strstr(rlvr_error_last(), "latest"));
    opt.version = 0;
    CHECK(rlvr_checkpoint_begin(&w, dir, &opt) == RLVR_EINVAL);
}

/* A checkpoint with the given tokenizer (NULL: none stored, as before
 * tokenizers were), read back. */
static rlvr_tokenizer *tokenizer_round_trip(const char *dir, int64_t step, const rlvr_tokenizer *tok) {
    rlvr_checkpoint_options opt = RLVR_CHECKPOINT_OPTIONS_INIT;
    opt.step = step;
    opt.fsync = false;
    rlvr_checkpoint_writer *w = NULL;
    CHECK_OK(rlvr_checkpoint_begin(&w, dir, &opt));
    if (!w) return NULL;
    if (tok) {
        CHECK_OK(rlvr_checkpoint_put_tokenizer(w, tok));
        CHECK(rlvr_checkpoint_put_tokenizer(w, tok) == RLVR_EINVAL);
    }
    char path[4096];
    CHECK_OK(rlvr_checkpoint_commit(w, path, sizeof path));
    rlvr_checkpoint *ck = NULL;
    rlvr_tokenizer *back = NULL;
    CHECK_OK(rlvr_checkpoint_open(&ck, path));
    if (ck) CHECK_OK(rlvr_checkpoint_read_tokenizer(ck, &back));
    rlvr_checkpoint_close(ck);
    return back;
}

static void test_tokenizer(const char *dir) {
    const int32_t F = RLVR_TOKENIZER_FIRST_MERGE;
    int32_t merges[6] = {'a', 'b', F, 'c', ' ', F + 1};
    rlvr_tokenizer *bpe = NULL, *byte = NULL, *back = NULL;
    CHECK_OK(rlvr_tokenizer_new_bpe(&bpe, merges, 3));
    CHECK_OK(rlvr_tokenizer_new_byte(&byte));
    if (!bpe || !byte) return;
    back = tokenizer_round_trip(dir, 1, bpe);
    CHECK(back && rlvr_tokenizer_equal(back, bpe));
    rlvr_tokenizer_free(back);
    back = tokenizer_round_trip(dir, 2, byte);
    CHECK(back && rlvr_tokenizer_equal(back, byte));
    rlvr_tokenizer_free(back);
    back = tokenizer_round_trip(dir, 3, NULL); /* none stored: byte-level */
    CHECK(back && rlvr_tokenizer_kind_of(back) == RLVR_TOKENIZER_BYTE);
    rlvr_tokenizer_free(back);

    /* an unknown kind, another pieces rule, merges that refer forward */
    char path[4096];
    CHECK_OK(rlvr_checkpoint_path(path, sizeof path, dir, 1));
    const struct {
        const char *attr, *value, *message;
    } bad[] = {{"kind", "sentencepiece", "tokenizer kind \"sentencepiece\""},
               {"pieces", "rlvr-pieces/9", "tokenizer pieces \"rlvr-pieces/9\""}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
        hid_t g = H5Gopen2(f, "tokenizer", H5P_DEFAULT);
        H5Adelete(g, bad[i].attr);
        CHECK_OK(rlvr_h5_attr_put_str(g, bad[i].attr, bad[i].value));
        H5Gclose(g);
        H5Fclose(f);
        rlvr_checkpoint *ck = NULL;
        rlvr_tokenizer *t = NULL;
        CHECK_OK(rlvr_checkpoint_open(&ck, path));
        if (ck) CHECK(rlvr_checkpoint_read_tokenizer(ck, &t) == RLVR_EFORMAT && !t);
        CHECK_MSG(strstr(rlvr_error_last(), bad[i].message) && strstr(rlvr_error_last(), path), "%s",
                  rlvr_error_last());
        rlvr_checkpoint_close(ck);
        f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT); /* put it back for the next case */
        g = H5Gopen2(f, "tokenizer", H5P_DEFAULT);
        H5Adelete(g, bad[i].attr);
        CHECK_OK(rlvr_h5_attr_put_str(g, bad[i].attr, i == 0 ? "bpe" : "rlvr-pieces/1"));
        H5Gclose(g);
        H5Fclose(f);
    }
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, "tokenizer/merges", H5P_DEFAULT);
    int32_t forward[6] = {'a', 'b', F + 2, 'c', ' ', F + 1};
    H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, forward);
    H5Dclose(d);
    H5Fclose(f);
    rlvr_checkpoint *ck = NULL;
    rlvr_tokenizer *t = NULL;
    CHECK_OK(rlvr_checkpoint_open(&ck, path));
    if (ck) CHECK(rlvr_checkpoint_read_tokenizer(ck, &t) == RLVR_EFORMAT && !t);
    CHECK_MSG(strstr(rlvr_error_last(), "merge 1 joins id") && strstr(rlvr_error_last(), path), "%s", rlvr_error_last());
    rlvr_checkpoint_close(ck);
    rlvr_tokenizer_free(bpe), rlvr_tokenizer_free(byte);
}

int main(void) {
    char dir[4096], sub[4200];
    fixture_tmpdir(dir, sizeof dir, "ckpt");
    snprintf(sub, sizeof sub, "%s/model", dir);
    test_model_round_trip(sub);
    snprintf(sub, sizeof sub, "%s/formats", dir);
    test_format_refusals(sub);
    snprintf(sub, sizeof sub, "%s/retention", dir);
    test_latest_and_retention(sub);
    snprintf(sub, sizeof sub, "%s/tokenizer", dir);
    test_tokenizer(sub);
    fixture_rmtree(dir);
    return test_summary("test_checkpoint");
}
