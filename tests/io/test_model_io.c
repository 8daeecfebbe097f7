/* What `rlvr model info|export` asks of io/model_io.h (no command): a
 * checkpoint's configuration, the same model exported as a GGUF file and as
 * a Hugging Face directory read back as sources, and the refusals. */
#include "io/model_io.h"
#include "io_fixtures.h"
#include "test.h"

static void check_same(const rlvr_model_config *a, const rlvr_model_config *b, const char *what) {
    CHECK_MSG(a->vocab == b->vocab && a->d_model == b->d_model && a->n_layers == b->n_layers &&
                  a->n_heads == b->n_heads && a->n_kv_heads == b->n_kv_heads && a->d_ff == b->d_ff,
              "%s: vocab %d d_model %d layers %d heads %d/%d d_ff %d", what, b->vocab, b->d_model, b->n_layers,
              b->n_heads, b->n_kv_heads, b->d_ff);
}

int main(void) {
    char dir[4096], ckpt[4200], gguf[4200], hf[4200], back[4200];
    fixture_tmpdir(dir, sizeof dir, "model-io");
    snprintf(ckpt, sizeof ckpt, "%s/model.h5", dir);
    snprintf(gguf, sizeof gguf, "%s/model.gguf", dir);
    snprintf(hf, sizeof hf, "%s/hf", dir);
    snprintf(back, sizeof back, "%s/back.h5", dir);

    rlvr_tokenizer *tok = NULL;
    rlvr_model *m = NULL;
    rlvr_model_config cfg;
    CHECK_OK(fixture_tiny_model(ckpt, &tok, &m, &cfg));

    rlvr_model_config got;
    const char *arch = NULL;
    rlvr_port_options po = {0};
    CHECK(!rlvr_model_io_is_source(ckpt));
    CHECK_OK(rlvr_model_io_config(ckpt, &po, &got, &arch));
    CHECK(arch && strcmp(arch, "rlvr checkpoint") == 0);
    check_same(&cfg, &got, "checkpoint");
    CHECK(got.max_seq == 64);

    rlvr_export_options eo = {.dtype = RLVR_EXPORT_F32};
    CHECK_OK(rlvr_model_io_export(ckpt, NULL, gguf, true, &eo));
    CHECK(rlvr_model_io_is_source(gguf));
    CHECK_OK(rlvr_model_io_config(gguf, &po, &got, &arch));
    CHECK(arch && strcmp(arch, "llama") == 0);
    check_same(&cfg, &got, "gguf");

    CHECK_OK(rlvr_model_io_export(ckpt, hf, NULL, true, &eo));
    CHECK(rlvr_model_io_is_source(hf));
    CHECK_OK(rlvr_model_io_config(hf, &po, &got, &arch));
    check_same(&cfg, &got, "hf directory");

    /* one destination, exactly */
    CHECK(rlvr_model_io_export(ckpt, hf, gguf, true, &eo) == RLVR_EINVAL);
    CHECK(rlvr_model_io_export(ckpt, NULL, NULL, true, &eo) == RLVR_EINVAL);
    /* rlvr's byte tokenizer has no Hugging Face form: the import refuses it and hands back nothing */
    rlvr_model *im = NULL;
    rlvr_tokenizer *it = NULL;
    CHECK(rlvr_model_io_import(hf, NULL, back, &po, &im, &it) < 0);
    CHECK(im == NULL && it == NULL);
    CHECK(rlvr_model_io_import(ckpt, NULL, back, &po, &im, &it) == RLVR_EINVAL);
    CHECK(rlvr_model_io_config("/nonexistent.h5", &po, &got, &arch) < 0);

    rlvr_model_free(m);
    rlvr_tokenizer_free(tok);
    fixture_rmtree(dir);
    return test_summary("test_model_io");
}
