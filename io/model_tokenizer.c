/* io/model_tokenizer.c — see io/model_tokenizer.h. */
#include "io/model_tokenizer.h"

#include "core/error.h"
#include "io/gguf_tokenizer.h"
#include "io/mapped.h"

#include <unistd.h>
#include <jansson.h>
#include <stdint.h>
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

/* attach_chat, or with `chat_error` non-NULL its refusal kept there (cap
 * bytes) and the tokenizer left without a chat format. */
static int attach_chat_or_note(rlvr_tokenizer *tok, const char *family, const char *jinja, size_t len,
                               const char *source, char *chat_error, size_t cap) {
    int rc = attach_chat(tok, family, jinja, len, source);
    if (rc >= 0 || !chat_error || rc == RLVR_ENOMEM) return rc;
    snprintf(chat_error, cap, "%s", rlvr_error_last());
    rlvr_error_clear();
    return 0;
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

/* ---- the declared generation ids ---- */

typedef struct {
    int32_t bos;                              /* -1: not declared */
    int32_t eos[RLVR_TOKENIZER_MAX_EOS];
    int n_eos;                                /* -1: not declared */
} declared_ids;

/* `field` of `obj` as ids below `vocab`: an integer or a list of integers;
 * absent or null leaves *n at -1 (not declared). */
static int json_ids(json_t *obj, const char *field, int32_t vocab, int32_t *ids, int cap, int *n, const char *path) {
    json_t *v = json_object_get(obj, field);
    *n = -1;
    if (!v || json_is_null(v)) return 0;
    size_t count = json_is_array(v) ? json_array_size(v) : 1;
    if (count > (size_t)cap)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: %s lists %zu ids; rlvr keeps at most %d", path, field, count, cap);
    for (size_t i = 0; i < count; i++) {
        json_t *e = json_is_array(v) ? json_array_get(v, i) : v;
        double d = json_is_integer(e) ? (double)json_integer_value(e) : json_is_real(e) ? json_real_value(e) : -1.0;
        if (!(json_is_number(e) && d >= 0 && d <= INT32_MAX && d == (double)(int32_t)d))
            return RLVR_FAIL(RLVR_EFORMAT, "%s: %s must be a token id or a list of them (non-negative integers); "
                                           "fix the field or remove it", path, field);
        if (d >= vocab)
            return RLVR_FAIL(RLVR_EFORMAT, "%s: %s %.0f is outside the tokenizer's %d ids; fix the field or remove it",
                             path, field, d, (int)vocab);
        ids[i] = (int32_t)d;
    }
    *n = (int)count;
    return 0;
}

/* Fills what `path` (a generation_config.json or config.json) declares and
 * `d` does not have yet. A missing file declares nothing. */
static int json_file_ids(declared_ids *d, int32_t vocab, const char *dir, const char *name) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    json_error_t jerr;
    json_t *j = json_load_file(path, JSON_DECODE_INT_AS_REAL, &jerr);
    if (!j) {
        if (access(path, F_OK) != 0) return 0;
        return RLVR_FAIL(RLVR_EFORMAT, "%s:%d: %s", path, jerr.line, jerr.text);
    }
    int32_t bos[1];
    int n_bos = -1, n_eos = -1, rc = 0;
    if (!json_is_object(j)) rc = RLVR_FAIL(RLVR_EFORMAT, "%s: not a JSON object", path);
    if (rc == 0) rc = json_ids(j, "bos_token_id", vocab, bos, 1, &n_bos, path);
    int32_t eos[RLVR_TOKENIZER_MAX_EOS];
    if (rc == 0) rc = json_ids(j, "eos_token_id", vocab, eos, RLVR_TOKENIZER_MAX_EOS, &n_eos, path);
    json_decref(j);
    RLVR_TRY(rc);
    if (d->bos < 0 && n_bos == 1) d->bos = bos[0];
    if (d->n_eos < 0 && n_eos >= 0) memcpy(d->eos, eos, sizeof eos), d->n_eos = n_eos;
    return 0;
}

/* tokenizer_config.json's bos_token / eos_token (a string or an object with
 * "content"): the added token it names, or *id = -1 when absent or null. */
static int config_token(const rlvr_tokenizer *tok, json_t *cfg, const char *field, int32_t *id, const char *path) {
    json_t *v = json_object_get(cfg, field);
    *id = -1;
    if (json_is_object(v)) v = json_object_get(v, "content");
    if (!v || json_is_null(v)) return 0;
    if (!json_is_string(v))
        return RLVR_FAIL(RLVR_EFORMAT, "%s: %s must be a token's text (or {\"content\": text}); fix the field",
                         path, field);
    if (rlvr_tokenizer_find_special(tok, json_string_value(v), id) < 0) {
        rlvr_error_clear();
        return RLVR_FAIL(RLVR_EFORMAT, "%s: %s \"%s\" is not an added token of the tokenizer.json beside it; "
                                       "fix the field or the tokenizer", path, field, json_string_value(v));
    }
    return 0;
}

/* What the directory declares for generation, as transformers' generate
 * reads it: generation_config.json, then config.json, then (texts)
 * tokenizer_config.json. Every id is checked against the vocabulary. */
static int hf_declared(rlvr_tokenizer *tok, const char *dir, json_t *cfg, const char *cfg_path) {
    declared_ids d = {.bos = -1, .n_eos = -1};
    int32_t vocab = rlvr_tokenizer_vocab_size(tok);
    RLVR_TRY(json_file_ids(&d, vocab, dir, "generation_config.json"));
    RLVR_TRY(json_file_ids(&d, vocab, dir, "config.json"));
    int32_t bos = -1, eos = -1;
    if (cfg) RLVR_TRY(config_token(tok, cfg, "bos_token", &bos, cfg_path));
    if (cfg) RLVR_TRY(config_token(tok, cfg, "eos_token", &eos, cfg_path));
    if (d.bos < 0) d.bos = bos;
    if (d.n_eos < 0) d.n_eos = 0;
    if (d.n_eos == 0 && eos >= 0) d.eos[d.n_eos++] = eos;
    char source[4200];
    snprintf(source, sizeof source, "%s (generation_config.json, config.json)", dir);
    return rlvr_tokenizer_set_generation(tok, d.bos, d.eos, d.n_eos, source);
}

static int gguf_token_id(const rlvr_tokenizer *tok, const rlvr_gguf *g, const char *key, int32_t *id,
                         const char *path) {
    uint32_t v;
    if (rlvr_gguf_get_u32(g, key, &v) < 0) {
        rlvr_error_clear();
        return RLVR_FAIL(RLVR_EFORMAT, "%s: %s must be a uint32 token id", path, key);
    }
    if (v >= (uint32_t)rlvr_tokenizer_vocab_size(tok))
        return RLVR_FAIL(RLVR_EFORMAT, "%s: %s %u is outside the tokenizer's %d ids (tokenizer.ggml.tokens)", path,
                         key, (unsigned)v, (int)rlvr_tokenizer_vocab_size(tok));
    *id = (int32_t)v;
    return 0;
}

/* A GGUF's tokenizer.ggml.bos_token_id, and eos, eot and eom as the ids
 * generation ends at (llama.cpp stops at each). */
static int gguf_declared(rlvr_tokenizer *tok, const rlvr_gguf *g, const char *path) {
    static const char *const ends[] = {"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id",
                                       "tokenizer.ggml.eom_token_id"};
    int32_t bos = -1, eos[3];
    int n = 0;
    if (rlvr_gguf_find(g, "tokenizer.ggml.bos_token_id"))
        RLVR_TRY(gguf_token_id(tok, g, "tokenizer.ggml.bos_token_id", &bos, path));
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++)
        if (rlvr_gguf_find(g, ends[i])) RLVR_TRY(gguf_token_id(tok, g, ends[i], &eos[n++], path));
    return rlvr_tokenizer_set_generation(tok, bos, eos, n, path);
}

static int hf_dir_tokenizer(rlvr_tokenizer **out, const char *dir, const char *family, char *chat_error,
                            size_t cap) {
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
    if (rc == 0)
        rc = attach_chat_or_note(tok, family, jinja, jinja ? strlen(jinja) : 0, jinja ? cfg_path : dir, chat_error, cap);
    if (rc == 0) rc = hf_declared(tok, dir, cfg, cfg_path);
    json_decref(cfg);
    rlvr_mapped_file_close(&json);
    if (rc < 0) {
        rlvr_tokenizer_free(tok);
        return rc;
    }
    *out = tok;
    return 0;
}

static int gguf_chat_tokenizer(rlvr_tokenizer **out, const rlvr_gguf *g, const char *path, const char *family,
                               char *chat_error, size_t cap) {
    *out = NULL;
    rlvr_tokenizer *tok = NULL;
    RLVR_TRY(rlvr_gguf_tokenizer(&tok, g, path));
    const char *jinja = NULL;
    size_t len = 0;
    int rc = 0;
    if (rlvr_gguf_find(g, "tokenizer.chat_template")) rc = rlvr_gguf_get_string(g, "tokenizer.chat_template", &jinja, &len);
    char source[4200];
    snprintf(source, sizeof source, "%s: tokenizer.chat_template", path);
    if (rc == 0) rc = attach_chat_or_note(tok, family, jinja, len, jinja ? source : path, chat_error, cap);
    if (rc == 0) rc = gguf_declared(tok, g, path);
    if (rc < 0) {
        rlvr_tokenizer_free(tok);
        return rc;
    }
    *out = tok;
    return 0;
}

int rlvr_hf_dir_tokenizer(rlvr_tokenizer **out, const char *dir, const char *family) {
    return hf_dir_tokenizer(out, dir, family, NULL, 0);
}

int rlvr_gguf_chat_tokenizer(rlvr_tokenizer **out, const rlvr_gguf *g, const char *path, const char *family) {
    return gguf_chat_tokenizer(out, g, path, family, NULL, 0);
}

int rlvr_hf_dir_tokenizer_facts(rlvr_tokenizer **out, const char *dir, const char *family, char *chat_error,
                                size_t cap) {
    if (cap) chat_error[0] = '\0';
    return hf_dir_tokenizer(out, dir, family, chat_error, cap);
}

int rlvr_gguf_chat_tokenizer_facts(rlvr_tokenizer **out, const rlvr_gguf *g, const char *path, const char *family,
                                   char *chat_error, size_t cap) {
    if (cap) chat_error[0] = '\0';
    return gguf_chat_tokenizer(out, g, path, family, chat_error, cap);
}
