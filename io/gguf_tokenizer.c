/* io/gguf_tokenizer.c — a GGUF file's byte-level BPE tokenizer, written
 * out as the tokenizer.json it stands for and read by policy/tokenizer.h. */
#include "io/gguf_tokenizer.h"

#include "core/error.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TYPE_CONTROL = 3, TYPE_USER_DEFINED = 4 };

static const char llama3_pattern[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"
    "\\s+(?!\\S)|\\s+";
static const char qwen2_pattern[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"
    "\\s+(?!\\S)|\\s+";

/* json_object_set_new that reports allocation failure (a NULL value too). */
static int put(json_t *obj, const char *key, json_t *v) {
    if (!v || json_object_set_new(obj, key, v) < 0) return RLVR_FAIL(RLVR_ENOMEM, "out of memory building JSON");
    return 0;
}

static int append(json_t *arr, json_t *v) {
    if (!v || json_array_append_new(arr, v) < 0) return RLVR_FAIL(RLVR_ENOMEM, "out of memory building JSON");
    return 0;
}

static json_t *split_isolated(const char *regex) {
    return json_pack("{s:s, s:{s:s}, s:s, s:b}", "type", "Split", "pattern", "Regex", regex, "behavior", "Isolated",
                     "invert", 0);
}

static json_t *byte_level(bool use_regex) {
    return json_pack("{s:s, s:b, s:b, s:b}", "type", "ByteLevel", "add_prefix_space", 0, "trim_offsets", 1,
                     "use_regex", use_regex);
}

/* The normalizer, pre_tokenizer and model.ignore_merges of tokenizer.ggml.pre. */
static int pipeline(json_t *root, json_t *model, const char *pre, const char *path) {
    json_t *seq = json_array();
    if (!seq) return RLVR_FAIL(RLVR_ENOMEM, "out of memory building JSON");
    int rc = put(root, "pre_tokenizer", json_pack("{s:s, s:o}", "type", "Sequence", "pretokenizers", seq));
    bool ignore_merges = false, nfc = false;
    if (rc < 0) return rc;
    if (strcmp(pre, "default") == 0 || strcmp(pre, "gpt-2") == 0) {
        rc = append(seq, byte_level(true));
    } else if (strcmp(pre, "llama-bpe") == 0 || strcmp(pre, "llama3") == 0) {
        rc = append(seq, split_isolated(llama3_pattern));
        if (rc == 0) rc = append(seq, byte_level(false));
        ignore_merges = true;
    } else if (strcmp(pre, "qwen2") == 0) {
        rc = append(seq, split_isolated(qwen2_pattern));
        if (rc == 0) rc = append(seq, byte_level(false));
        nfc = true;
    } else if (strcmp(pre, "smollm") == 0) {
        rc = append(seq, split_isolated("\\p{N}"));
        if (rc == 0) rc = append(seq, byte_level(true));
    } else {
        return RLVR_FAIL(RLVR_EFORMAT,
                         "%s: tokenizer.ggml.pre is \"%s\"; rlvr reads \"default\", \"gpt-2\", \"llama-bpe\", "
                         "\"llama3\", \"qwen2\" and \"smollm\"",
                         path, pre);
    }
    if (rc == 0) rc = put(root, "normalizer", nfc ? json_pack("{s:s}", "type", "NFC") : json_null());
    if (rc == 0) rc = put(model, "ignore_merges", json_boolean(ignore_merges));
    return rc;
}

/* Token i's type: tokenizer.ggml.token_type[i], or 1 (normal) without that key. */
static int token_type(const rlvr_gguf_value *types, uint64_t i, int32_t *type, const char *path) {
    *type = 1;
    if (!types) return 0;
    if (rlvr_gguf_array_i32(types, i, type) < 0)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: tokenizer.ggml.token_type[%llu] is not an integer", path,
                         (unsigned long long)i);
    return 0;
}

/* model.vocab and added_tokens from tokens + token types. Every token is in
 * the vocabulary, so the added tokens keep their GGUF ids (tokenizers gives
 * an added token the vocabulary's id of its text). */
static int vocabulary(json_t *root, json_t *model, const rlvr_gguf *g, const char *path) {
    const rlvr_gguf_value *tokens = NULL, *types = NULL;
    if (rlvr_gguf_get_array(g, "tokenizer.ggml.tokens", &tokens) < 0 ||
        rlvr_gguf_array_type(tokens) != RLVR_GGUF_STRING || rlvr_gguf_array_len(tokens) == 0)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: tokenizer.ggml.tokens must be a non-empty array of strings", path);
    uint64_t n = rlvr_gguf_array_len(tokens);
    if (rlvr_gguf_find(g, "tokenizer.ggml.token_type") &&
        (rlvr_gguf_get_array(g, "tokenizer.ggml.token_type", &types) < 0 || rlvr_gguf_array_len(types) != n))
        return RLVR_FAIL(RLVR_EFORMAT, "%s: tokenizer.ggml.token_type must be an array of %llu integers", path,
                         (unsigned long long)n);
    json_t *vocab = json_object(), *added = json_array();
    int rc = put(model, "vocab", vocab);
    if (rc == 0) rc = put(root, "added_tokens", added);
    else json_decref(added);
    for (uint64_t i = 0; i < n && rc == 0; i++) {
        const char *s;
        size_t len;
        int32_t type;
        rc = token_type(types, i, &type, path);
        if (rc == 0) rc = rlvr_gguf_array_string(tokens, i, &s, &len);
        json_t *str = rc == 0 ? json_stringn(s, len) : NULL;
        if (rc == 0 && !str)
            rc = RLVR_FAIL(RLVR_EFORMAT, "%s: tokenizer.ggml.tokens[%llu] is not UTF-8", path, (unsigned long long)i);
        if (rc < 0) break;
        if (json_object_getn(vocab, s, len)) {
            json_decref(str);
            rc = RLVR_FAIL(RLVR_EFORMAT, "%s: tokenizer.ggml.tokens[%llu] repeats an earlier token", path,
                           (unsigned long long)i);
        } else if (json_object_setn_new(vocab, s, len, json_integer((json_int_t)i)) < 0) {
            json_decref(str);
            rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory building JSON");
        } else if (type == TYPE_CONTROL || type == TYPE_USER_DEFINED) {
            rc = append(added, json_pack("{s:I, s:o, s:b, s:b, s:b, s:b, s:b}", "id", (json_int_t)i, "content", str,
                                         "single_word", 0, "lstrip", 0, "rstrip", 0, "normalized", 0, "special",
                                         type == TYPE_CONTROL));
        } else {
            json_decref(str);
        }
    }
    return rc;
}

static int merges(json_t *model, const rlvr_gguf *g, const char *path) {
    const rlvr_gguf_value *m = NULL;
    json_t *list = json_array();
    int rc = put(model, "merges", list);
    if (rc < 0 || !rlvr_gguf_find(g, "tokenizer.ggml.merges")) return rc;
    if (rlvr_gguf_get_array(g, "tokenizer.ggml.merges", &m) < 0 || rlvr_gguf_array_type(m) != RLVR_GGUF_STRING)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: tokenizer.ggml.merges must be an array of strings", path);
    for (uint64_t i = 0; i < rlvr_gguf_array_len(m) && rc == 0; i++) {
        const char *s;
        size_t len;
        rc = rlvr_gguf_array_string(m, i, &s, &len);
        json_t *str = rc == 0 ? json_stringn(s, len) : NULL;
        if (rc == 0 && !str)
            rc = RLVR_FAIL(RLVR_EFORMAT, "%s: tokenizer.ggml.merges[%llu] is not UTF-8", path, (unsigned long long)i);
        if (rc == 0) rc = append(list, str);
    }
    return rc;
}

static int build_json(json_t *root, const rlvr_gguf *g, const char *path) {
    const char *s = "(missing or not a string)";
    size_t len = strlen(s);
    if (rlvr_gguf_get_string(g, "tokenizer.ggml.model", &s, &len) < 0 || len != 4 || memcmp(s, "gpt2", 4) != 0)
        return RLVR_FAIL(RLVR_EFORMAT,
                         "%s: tokenizer.ggml.model is \"%.*s\"; rlvr reads GGUF byte-level BPE tokenizers only "
                         "(\"gpt2\")",
                         path, (int)(len < 64 ? len : 64), s);
    char pre[64] = "default";
    if (rlvr_gguf_find(g, "tokenizer.ggml.pre")) {
        if (rlvr_gguf_get_string(g, "tokenizer.ggml.pre", &s, &len) < 0 || len >= sizeof pre)
            return RLVR_FAIL(RLVR_EFORMAT, "%s: tokenizer.ggml.pre must be a short string", path);
        memcpy(pre, s, len), pre[len] = '\0';
    }
    json_t *model = json_pack("{s:s, s:n, s:n, s:n, s:n, s:b, s:b}", "type", "BPE", "dropout", "unk_token",
                              "continuing_subword_prefix", "end_of_word_suffix", "fuse_unk", 0, "byte_fallback", 0);
    RLVR_TRY(put(root, "version", json_string("1.0")));
    RLVR_TRY(put(root, "model", model));
    RLVR_TRY(pipeline(root, model, pre, path));
    RLVR_TRY(put(root, "post_processor", json_null()));
    RLVR_TRY(put(root, "decoder", json_pack("{s:s, s:b, s:b, s:b}", "type", "ByteLevel", "add_prefix_space", 1,
                                            "trim_offsets", 1, "use_regex", 1)));
    RLVR_TRY(vocabulary(root, model, g, path));
    return merges(model, g, path);
}

int rlvr_gguf_tokenizer(rlvr_tokenizer **out, const rlvr_gguf *g, const char *path) {
    json_t *root = json_object();
    char *text = NULL, source[4200];
    int rc = root ? build_json(root, g, path) : RLVR_FAIL(RLVR_ENOMEM, "out of memory building JSON");
    if (rc == 0) {
        text = json_dumps(root, JSON_COMPACT);
        if (!text) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory writing JSON");
    }
    snprintf(source, sizeof source, "%s (tokenizer.json from its GGUF metadata)", path);
    if (rc == 0) rc = rlvr_tokenizer_new_hf_json(out, text, strlen(text), source);
    free(text);
    json_decref(root);
    return rc;
}
