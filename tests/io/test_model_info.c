/* io/model_info.h without a command: the facts of a checkpoint, of the same
 * model exported as a GGUF file and as a Hugging Face directory, each
 * compared with the model itself; refusals collected rather than returned
 * (a directory with an unsupported architecture and no tokenizer reports
 * both, and its weights still); text and JSON carry the same facts. */
#include "io/model_info.h"
#include "io/model_io.h"
#include "io_fixtures.h"
#include "test.h"

#include <jansson.h>

/* Parameters and stacked tensors the model stores (the tied LM head has none). */
static void model_counts(const rlvr_model *m, uint64_t *params, uint64_t *tensors) {
    *params = 0, *tensors = 0;
    for (int i = 0; i < RLVR_PARAM_TENSORS; i++) {
        size_t n = rlvr_model_tensor_size(m, i);
        *params += n;
        *tensors += n ? 1 : 0;
    }
}

static bool refusal_names(const rlvr_model_info *f, const char *a, const char *b) {
    for (int i = 0; i < f->n_refusals; i++)
        if (strstr(f->refusals[i], a) && (!b || strstr(f->refusals[i], b))) return true;
    return false;
}

static void check_json(const rlvr_model_info *f, const char *path) {
    char *s = NULL;
    CHECK_OK(rlvr_model_info_json(f, path, &s));
    json_t *j = s ? json_loads(s, 0, NULL) : NULL;
    CHECK_MSG(j != NULL, "%s: --json is not JSON", path);
    if (j) {
        CHECK(json_integer_value(json_object_get(j, "parameters")) == (json_int_t)f->n_params);
        CHECK(strcmp(json_string_value(json_object_get(j, "format")), f->format) == 0);
        CHECK(json_array_size(json_object_get(j, "refusals")) == (size_t)f->n_refusals);
        CHECK(json_array_size(json_object_get(j, "stops")) == (size_t)f->n_stops);
        CHECK(json_array_size(json_object_get(j, "weight_types")) == (size_t)f->n_types);
        CHECK(json_is_null(json_object_get(j, "model")) == !f->has_config);
    }
    json_decref(j);
    free(s);
}

int main(void) {
    char dir[4096], paths[4][4200];
    fixture_tmpdir(dir, sizeof dir, "model-info");
    static const char *const names[4] = {"model.h5", "model.gguf", "hf", "hf/config.json"};
    for (int i = 0; i < 4; i++) snprintf(paths[i], sizeof paths[i], "%s/%s", dir, names[i]);
    const char *ckpt = paths[0], *gguf = paths[1], *hf = paths[2], *cfg_path = paths[3];

    rlvr_tokenizer *tok = NULL;
    rlvr_model *m = NULL;
    rlvr_model_config cfg;
    CHECK_OK(fixture_tiny_model(ckpt, &tok, &m, &cfg));
    if (!m) return test_summary("test_model_info");
    uint64_t params, tensors;
    model_counts(m, &params, &tensors);
    CHECK(params == rlvr_model_num_params(m));

    /* the checkpoint: its own configuration, tensors and tokenizer */
    rlvr_port_options po = {0};
    rlvr_model_info f;
    CHECK_OK(rlvr_model_info_read(ckpt, NULL, &po, &f));
    CHECK(strcmp(f.format, "checkpoint") == 0 && strcmp(f.arch, "rlvr checkpoint") == 0);
    CHECK_MSG(f.n_params == params && f.n_tensors == tensors, "checkpoint: %llu params in %llu tensors",
              (unsigned long long)f.n_params, (unsigned long long)f.n_tensors);
    CHECK(f.n_types == 1 && strcmp(f.types[0].name, "F32") == 0 && f.types[0].n_elements == params);
    CHECK(f.types[0].n_bytes > 0);
    CHECK(f.context == 64 && f.max_seq == 64 && f.max_seq_cap == 0 && f.has_config);
    CHECK(f.has_tokenizer && strcmp(f.tokenizer_kind, "byte") == 0 && f.vocab_size == cfg.vocab);
    CHECK(f.chat_family && strcmp(f.chat_family, "native") == 0 && !f.pretrained);
    int32_t stops[RLVR_TEMPLATE_MAX_STOPS];
    int n_stops = rlvr_template_stop_tokens(tok, stops);
    CHECK(f.n_stops == n_stops);
    for (int i = 0; i < n_stops && i < f.n_stops; i++) CHECK(f.stops[i] == stops[i]);
    CHECK(f.n_stops > 0 && strcmp(f.stop_texts[0], "<|end_of_turn|>") == 0);
    CHECK_MSG(f.n_refusals == 0, "checkpoint: refused: %s", f.n_refusals ? f.refusals[0] : "");
    char *text = NULL;
    CHECK_OK(rlvr_model_info_text(&f, ckpt, &text));
    /* a model rlvr created keeps its initialisation in [model]; a pretrained one has none */
    CHECK(text && strstr(text, "init_seed = 1234") && strstr(text, "[train] init") && strstr(text, "max_seq = 64"));
    free(text);
    check_json(&f, ckpt);

    /* the same model as a GGUF file: every tensor F32, the context from llama.context_length */
    rlvr_export_options eo = {.dtype = RLVR_EXPORT_F32};
    CHECK_OK(rlvr_model_io_export(ckpt, NULL, gguf, true, &eo));
    CHECK_OK(rlvr_model_info_read(gguf, NULL, &po, &f));
    CHECK(strcmp(f.format, "gguf") == 0 && strcmp(f.arch, "llama") == 0);
    uint64_t file_tensors = (uint64_t)rlvr_port_tensor_count(&cfg); /* one per layer */
    CHECK_MSG(f.n_params == params && f.n_tensors == file_tensors, "gguf: %llu params in %llu tensors",
              (unsigned long long)f.n_params, (unsigned long long)f.n_tensors);
    CHECK(f.n_types == 1 && strcmp(f.types[0].name, "F32") == 0);
    CHECK(f.types[0].n_bytes == 4 * params);
    CHECK(f.context == 64 && strcmp(f.context_key, "llama.context_length") == 0 && f.max_seq == 64);
    CHECK(f.max_seq_cap == RLVR_IMPORT_MAX_SEQ_DEFAULT && f.has_config && f.pretrained);
    /* rlvr's byte tokenizer has no GGUF form: the tokenizer is refused, the rest still reported */
    CHECK(!f.has_tokenizer && f.n_refusals >= 1 && refusal_names(&f, gguf, "tokenizer"));
    check_json(&f, gguf);

    /* the cap: a smaller --max-seq gives the smaller max_seq */
    po.max_seq = 32;
    CHECK_OK(rlvr_model_info_read(gguf, NULL, &po, &f));
    CHECK(f.context == 64 && f.max_seq == 32 && f.max_seq_cap == 32 && f.config.max_seq == 32);
    CHECK_OK(rlvr_model_info_text(&f, gguf, &text));
    CHECK(text && strstr(text, "--max-seq 64") && strstr(text, "max_seq = 32") && !strstr(text, "init_seed"));
    free(text);
    po.max_seq = 0;

    /* a directory of an architecture rlvr does not run and without a
     * tokenizer: both refusals, and the weights still counted */
    CHECK_OK(rlvr_model_io_export(ckpt, hf, NULL, true, &eo));
    json_t *c = json_load_file(cfg_path, 0, NULL);
    CHECK(c != NULL);
    if (c) {
        json_object_set_new(c, "model_type", json_string("gpt2"));
        json_object_set_new(c, "architectures", json_pack("[s]", "GPT2LMHeadModel"));
        CHECK(json_dump_file(c, cfg_path, 0) == 0);
        json_decref(c);
    }
    CHECK_OK(rlvr_model_info_read(hf, NULL, &po, &f));
    CHECK(strcmp(f.format, "hf") == 0 && strcmp(f.arch, "gpt2") == 0 && !f.has_config);
    CHECK(f.n_params == params && f.n_tensors == file_tensors && strcmp(f.types[0].name, "F32") == 0);
    CHECK(f.context == 64 && f.max_seq == 64);
    CHECK_MSG(refusal_names(&f, "config.json", "GPT2LMHeadModel") && refusal_names(&f, "tokenizer.json", NULL),
              "hf: %d refusals, first: %s", f.n_refusals, f.n_refusals ? f.refusals[0] : "");
    CHECK_OK(rlvr_model_info_text(&f, hf, &text));
    CHECK(text && strstr(text, "would refuse") && !strstr(text, "[model]"));
    free(text);
    check_json(&f, hf);

    CHECK(rlvr_model_info_read("/nonexistent.h5", NULL, &po, &f) < 0);
    CHECK(rlvr_model_info_read("/nonexistent.gguf", NULL, &po, &f) < 0);

    char buf[32];
    rlvr_model_info_count_text(134515008, buf, sizeof buf);
    CHECK(strcmp(buf, "134.5 M") == 0);
    rlvr_model_info_count_text(950, buf, sizeof buf);
    CHECK(strcmp(buf, "950") == 0);
    rlvr_model_info_count_text(7615616512ull, buf, sizeof buf);
    CHECK(strcmp(buf, "7.6 B") == 0);

    rlvr_model_free(m);
    rlvr_tokenizer_free(tok);
    fixture_rmtree(dir);
    return test_summary("test_model_info");
}
