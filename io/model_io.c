/* io/model_io.c — a model's files for `rlvr model` (io/model_io.h). */
#include "io/model_io.h"

#include "core/error.h"
#include "io/checkpoint.h"
#include "io/gguf_model.h"
#include "io/gguf_write.h"
#include "io/hf_export.h"
#include "io/hf_model.h"
#include "io/model_tokenizer.h"
#include "policy/template.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static bool is_gguf(const char *path) {
    size_t n = strlen(path);
    return n >= 5 && strcmp(path + n - 5, ".gguf") == 0;
}

static bool is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool rlvr_model_io_is_source(const char *path) { return is_gguf(path) || is_dir(path); }

static int source_config(const char *src, const rlvr_port_options *opt, rlvr_model_config *c, const char **arch) {
    if (is_gguf(src)) return rlvr_gguf_model_config(src, opt, c, arch);
    if (is_dir(src)) return rlvr_hf_model_config(src, opt, c, arch);
    return rlvr_error_set(RLVR_EINVAL, "%s: neither a model directory nor a .gguf file", src);
}

int rlvr_model_io_config(const char *path, const rlvr_port_options *opt, rlvr_model_config *c, const char **arch) {
    if (rlvr_model_io_is_source(path)) return source_config(path, opt, c, arch);
    *arch = "rlvr checkpoint";
    rlvr_checkpoint *ck = NULL;
    int rc = rlvr_checkpoint_open(&ck, path);
    if (rc == 0) rc = rlvr_checkpoint_model_config(ck, c);
    rlvr_checkpoint_close(ck);
    return rc;
}

static int load_source(const char *src, const rlvr_port_options *opt, rlvr_model **m) {
    if (is_gguf(src)) return rlvr_gguf_model_load(src, opt, m);
    if (is_dir(src)) return rlvr_hf_model_load(src, opt, m);
    return rlvr_error_set(RLVR_EINVAL, "%s: neither a model directory nor a .gguf file", src);
}

/* The model's tokenizer and chat format. */
static int load_tokenizer(const char *src, const char *family, rlvr_tokenizer **tok) {
    if (!is_gguf(src)) return rlvr_hf_dir_tokenizer(tok, src, family);
    rlvr_gguf *g = NULL;
    int rc = rlvr_gguf_open(&g, src);
    if (rc == 0) rc = rlvr_gguf_chat_tokenizer(tok, g, src, family);
    rlvr_gguf_free(g);
    return rc;
}

int rlvr_model_io_import(const char *src, const char *family, const char *out, const rlvr_port_options *opt,
                         rlvr_model **m_out, rlvr_tokenizer **tok_out) {
    rlvr_model *m = NULL;
    rlvr_tokenizer *tok = NULL;
    rlvr_model_config config;
    const char *arch = NULL;
    /* cheap refusals first: a model rlvr cannot run, a tokenizer it cannot use */
    int rc = source_config(src, opt, &config, &arch);
    if (rc == 0) rc = load_tokenizer(src, family, &tok);
    if (rc == 0) rc = load_source(src, opt, &m);
    if (rc == 0) rc = rlvr_tokenizer_check_model(tok, rlvr_model_config_of(m));
    if (rc == 0) rc = rlvr_port_save_checkpoint(out, m, tok);
    if (rc < 0) {
        rlvr_tokenizer_free(tok);
        rlvr_model_free(m);
        return rc;
    }
    *m_out = m;
    *tok_out = tok;
    return 0;
}

void rlvr_model_io_stop_texts(const rlvr_tokenizer *tok, char *out, size_t cap) {
    int32_t stops[RLVR_TEMPLATE_MAX_STOPS];
    int n = rlvr_template_stop_tokens(tok, stops);
    size_t at = 0;
    if (cap) out[0] = '\0';
    for (int i = 0; i < n && at + 1 < cap; i++) {
        char text[128];
        size_t len = 0;
        if (rlvr_tokenizer_decode(tok, &stops[i], 1, true, text, sizeof text, &len) < 0) {
            rlvr_error_clear();
            snprintf(text, sizeof text, "id %d", (int)stops[i]);
        }
        int k = snprintf(out + at, cap - at, "%s%s", i ? " " : "", text);
        if (k < 0 || (size_t)k >= cap - at) break;
        at += (size_t)k;
    }
}

/* The text of a special token (its id -1: none). */
static int token_text(const rlvr_tokenizer *tok, int32_t id, char *buf, size_t cap, const char **out) {
    *out = NULL;
    if (id < 0) return 0;
    size_t len = 0;
    RLVR_TRY(rlvr_tokenizer_decode(tok, &id, 1, true, buf, cap, &len));
    *out = buf;
    return 0;
}

/* The export options' tokenizer fields for a pretrained (HF) tokenizer;
 * nothing for rlvr's own. */
static int export_tokenizer(const rlvr_tokenizer *tok, rlvr_export_options *opt, char bos[256], char eos[256],
                            int32_t eos_ids[RLVR_TEMPLATE_MAX_STOPS]) {
    if (rlvr_tokenizer_kind_of(tok) != RLVR_TOKENIZER_HF) return 0;
    RLVR_TRY(rlvr_tokenizer_hf_json(tok, &opt->tokenizer_json, &opt->tokenizer_json_len));
    size_t len = 0;
    opt->chat_template = rlvr_tokenizer_chat_template(tok, &len);
    const rlvr_chat *c = rlvr_tokenizer_chat(tok);
    /* generation_config.json: what the model declared, with the turn end
     * first when it is not among them (a GGUF's eos_token_id is the first),
     * then the rest of the ids a reply stops at, so that generate stops
     * where rlvr's sampler does and an import of the export stops there too */
    int n = 0;
    const int32_t *declared = rlvr_tokenizer_generation_eos(tok, &n);
    bool has_turn_end = false;
    for (int i = 0; i < n; i++) has_turn_end |= declared[i] == c->turn_end;
    opt->n_eos_token_ids = 0;
    if (!has_turn_end && c->turn_end >= 0) eos_ids[opt->n_eos_token_ids++] = c->turn_end;
    for (int i = 0; i < n; i++) eos_ids[opt->n_eos_token_ids++] = declared[i];
    int32_t stops[RLVR_TEMPLATE_MAX_STOPS];
    int n_stops = rlvr_template_stop_tokens(tok, stops);
    for (int i = 0; i < n_stops; i++) {
        bool listed = stops[i] < 0;
        for (int k = 0; k < opt->n_eos_token_ids; k++) listed |= eos_ids[k] == stops[i];
        if (!listed && opt->n_eos_token_ids < RLVR_TOKENIZER_MAX_EOS) eos_ids[opt->n_eos_token_ids++] = stops[i];
    }
    opt->eos_token_ids = eos_ids;
    int32_t gen_bos = rlvr_tokenizer_generation_bos(tok);
    opt->bos_token_id = gen_bos >= 0 ? gen_bos : c->begin;
    opt->turn_end_token_id = c->turn_end;
    RLVR_TRY(token_text(tok, c->begin, bos, 256, &opt->bos_token));
    return token_text(tok, c->turn_end, eos, 256, &opt->eos_token);
}

int rlvr_model_io_export(const char *ckpt, const char *dir, const char *gguf, bool with_tokenizer,
                         const rlvr_export_options *options) {
    if (!dir == !gguf) return RLVR_FAIL(RLVR_EINVAL, "export to a directory or to a GGUF file, one of the two");
    rlvr_export_options opt = *options;
    rlvr_checkpoint *ck = NULL;
    rlvr_model *m = NULL;
    rlvr_tokenizer *tok = NULL;
    char bos[256], eos[256];
    int32_t eos_ids[RLVR_TEMPLATE_MAX_STOPS];
    int rc = rlvr_checkpoint_open(&ck, ckpt);
    if (rc == 0) rc = rlvr_checkpoint_load_model(ck, &m);
    if (rc == 0) rc = rlvr_checkpoint_read_tokenizer(ck, &tok);
    rlvr_checkpoint_close(ck);
    if (rc == 0 && with_tokenizer) rc = export_tokenizer(tok, &opt, bos, eos, eos_ids);
    if (rc == 0) rc = gguf ? rlvr_gguf_export(m, gguf, &opt) : rlvr_hf_export(m, dir, &opt);
    rlvr_tokenizer_free(tok);
    rlvr_model_free(m);
    return rc;
}
