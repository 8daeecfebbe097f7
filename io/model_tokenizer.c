/* io/model_tokenizer.c — see io/model_tokenizer.h. */
#include "io/model_tokenizer.h"

#include "core/error.h"
#include "io/gguf_tokenizer.h"
#include "io/mapped.h"

#include <unistd.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sets the chat format from `jinja` (may be NULL) or `family`. */
static int attach_chat(rlvr_tokenizer *tok, const char *family, const char *jinja, size_t len, const char *source) {
    if (family && strcmp(family, "native") == 0) /* rlvr's own markers are no pretrained vocabulary's */
        return RLVR_FAIL(RLVR_EINVAL,
                         "%s: --template native renders rlvr's own special tokens, which a pretrained model's "
                         "tokenizer does not have; name chatml, llama3 or mistral",
                         source);
    if (!jinja && !family)
        return RLVR_FAIL(RLVR_EFORMAT,
                         "%s: the model has no chat template; name the family it was tuned with: "
                         "`rlvr model import --template chatml|llama3|mistral`",
                         source);
    return rlvr_tokenizer_set_chat(tok, family, jinja, len, source);
}

/* tokenizer_config.json's chat_template: a string, or [{"name", "template"}]. */
static const char *config_template(json_t *cfg) {
    json_t *t = json_object_get(cfg, "chat_template");
    if (json_is_string(t)) return json_string_value(t);
    const char *first = NULL;
    for (size_t i = 0; i < json_array_size(t); i++) {
        json_t *e = json_array_get(t, i);
        const char *name = json_string_value(json_object_get(e, "name"));
        const char *text = json_string_value(json_object_get(e, "template"));
        if (!text) continue;
        if (name && strcmp(name, "default") == 0) return text;
        if (!first) first = text;
    }
    return first;
}

int rlvr_hf_dir_tokenizer(rlvr_tokenizer **out, const char *dir, const char *family) {
    *out = NULL;
    char path[4096], cfg_path[4096];
    int n = snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    int m = snprintf(cfg_path, sizeof cfg_path, "%s/tokenizer_config.json", dir);
    if (n < 0 || (size_t)n >= sizeof path || m < 0 || (size_t)m >= sizeof cfg_path)
        return RLVR_FAIL(RLVR_ELIMIT, "path too long: %s", dir);
    rlvr_mapped_file json = {0};
    rlvr_tokenizer *tok = NULL;
    json_t *cfg = NULL;
    int rc = 0;
    if (access(path, F_OK) != 0)
        rc = RLVR_FAIL(RLVR_ENOTFOUND, "%s does not exist: rlvr reads a model's byte-level BPE tokenizer from its "
                                       "tokenizer.json (a sentencepiece tokenizer.model alone is not read)", path);
    if (rc == 0) rc = rlvr_mapped_file_open(&json, path);
    if (rc == 0) rc = rlvr_tokenizer_new_hf_json(&tok, (const char *)json.data, (size_t)json.size, path);
    const char *jinja = NULL;
    if (rc == 0) {
        json_error_t jerr;
        cfg = json_load_file(cfg_path, JSON_DECODE_INT_AS_REAL, &jerr); /* model_max_length is often 1e30 */
        if (!cfg && strstr(jerr.text, "unable to open") == NULL)
            rc = RLVR_FAIL(RLVR_EFORMAT, "%s:%d: %s", cfg_path, jerr.line, jerr.text);
        if (cfg) jinja = config_template(cfg);
    }
    if (rc == 0) rc = attach_chat(tok, family, jinja, jinja ? strlen(jinja) : 0, jinja ? cfg_path : dir);
    json_decref(cfg);
    rlvr_mapped_file_close(&json);
    if (rc < 0) {
        rlvr_tokenizer_free(tok);
        return rc;
    }
    *out = tok;
    return 0;
}

int rlvr_gguf_chat_tokenizer(rlvr_tokenizer **out, const rlvr_gguf *g, const char *path, const char *family) {
    *out = NULL;
    rlvr_tokenizer *tok = NULL;
    RLVR_TRY(rlvr_gguf_tokenizer(&tok, g, path));
    const char *jinja = NULL;
    size_t len = 0;
    int rc = 0;
    if (rlvr_gguf_find(g, "tokenizer.chat_template")) rc = rlvr_gguf_get_string(g, "tokenizer.chat_template", &jinja, &len);
    char source[4200];
    snprintf(source, sizeof source, "%s: tokenizer.chat_template", path);
    if (rc == 0) rc = attach_chat(tok, family, jinja, len, jinja ? source : path);
    if (rc < 0) {
        rlvr_tokenizer_free(tok);
        return rc;
    }
    *out = tok;
    return 0;
}
