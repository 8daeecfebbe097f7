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

/* ---- writing: a tokenizer.json as tokenizer.ggml.* keys ---------------------------------- */

enum { TYPE_NORMAL = 1, TYPE_UNUSED = 5 };

static bool is_type(json_t *o, const char *type) {
    const char *t = json_string_value(json_object_get(o, "type"));
    return t && strcmp(t, type) == 0;
}

/* A boolean field with tokenizers' default when absent. */
static bool flag(json_t *o, const char *field, bool dflt) {
    json_t *v = json_object_get(o, field);
    return json_is_boolean(v) ? json_is_true(v) : dflt;
}

static bool is_byte_level(json_t *o, bool use_regex) {
    return is_type(o, "ByteLevel") && !flag(o, "add_prefix_space", true) && flag(o, "use_regex", true) == use_regex;
}

static bool is_split(json_t *o, const char *regex) {
    const char *p = json_string_value(json_object_get(json_object_get(o, "pattern"), "Regex"));
    const char *b = json_string_value(json_object_get(o, "behavior"));
    return is_type(o, "Split") && p && strcmp(p, regex) == 0 && b && strcmp(b, "Isolated") == 0 &&
           !flag(o, "invert", false);
}

/* 0: no normalizer, 1: NFC (alone or a Sequence of NFC), -1: another. */
static int nfc_normalizer(json_t *n) {
    if (!n || json_is_null(n)) return 0;
    if (is_type(n, "NFC")) return 1;
    json_t *list = json_object_get(n, "normalizers");
    if (!is_type(n, "Sequence") || json_array_size(list) == 0) return -1;
    for (size_t i = 0; i < json_array_size(list); i++)
        if (!is_type(json_array_get(list, i), "NFC")) return -1;
    return 1;
}

/* The tokenizer.ggml.pre whose tokenizer.json (see pipeline()) this file's
 * normalizer, pre_tokenizer and ignore_merges equal; NULL when none does. */
static const char *pre_name(json_t *root) {
    int nfc = nfc_normalizer(json_object_get(root, "normalizer"));
    json_t *pre = json_object_get(root, "pre_tokenizer"), *one[1] = {pre}, **stages = one;
    json_t *list = json_object_get(pre, "pretokenizers");
    size_t n = 1;
    json_t *seq[2];
    if (is_type(pre, "Sequence")) {
        n = json_array_size(list);
        if (n < 1 || n > 2) return NULL;
        for (size_t i = 0; i < n; i++) seq[i] = json_array_get(list, i);
        stages = seq;
    }
    bool ignore = flag(json_object_get(root, "model"), "ignore_merges", false);
    if (n == 1) return nfc == 0 && !ignore && is_byte_level(stages[0], true) ? "gpt-2" : NULL;
    if (nfc == 0 && ignore && is_split(stages[0], llama3_pattern) && is_byte_level(stages[1], false))
        return "llama-bpe";
    if (nfc == 1 && !ignore && is_split(stages[0], qwen2_pattern) && is_byte_level(stages[1], false)) return "qwen2";
    bool digits = (is_type(stages[0], "Digits") && flag(stages[0], "individual_digits", false)) ||
                  is_split(stages[0], "\\p{N}");
    if (nfc == 0 && !ignore && digits && is_byte_level(stages[1], true)) return "smollm";
    return NULL;
}

/* The GGUF's token list: id -> the vocabulary's string or the added
 * token's content; ids neither names get "[PAD<id>]" (type unused), as
 * llama.cpp's converter writes them. */
typedef struct {
    int32_t n;
    const char **text; /* (n) */
    size_t *len;       /* (n) */
    int32_t *type;     /* (n) */
    char *pads;        /* the "[PAD<id>]" strings, 16 bytes each */
} token_list;

static void token_list_free(token_list *t) { free(t->text), free(t->len), free(t->type), free(t->pads); }

static int token_slot(token_list *t, json_int_t id, const char *source) {
    if (id < 0 || id >= t->n) return RLVR_FAIL(RLVR_EFORMAT, "%s: token id %lld out of range", source, (long long)id);
    return (int)id;
}

static int token_list_build(token_list *t, json_t *vocab, json_t *added, const char *source) {
    json_int_t max = -1;
    const char *key;
    size_t klen;
    json_t *v;
    json_object_keylen_foreach(vocab, key, klen, v) if (json_integer_value(v) > max) max = json_integer_value(v);
    for (size_t i = 0; i < json_array_size(added); i++) {
        json_int_t id = json_integer_value(json_object_get(json_array_get(added, i), "id"));
        if (id > max) max = id;
    }
    if (max < 0 || max >= (1 << 24)) return RLVR_FAIL(RLVR_EFORMAT, "%s: no token ids in range", source);
    t->n = (int32_t)max + 1;
    t->text = calloc((size_t)t->n, sizeof *t->text);
    t->len = calloc((size_t)t->n, sizeof *t->len);
    t->type = calloc((size_t)t->n, sizeof *t->type);
    t->pads = calloc((size_t)t->n, 16);
    if (!t->text || !t->len || !t->type || !t->pads) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    json_object_keylen_foreach(vocab, key, klen, v) {
        int i = token_slot(t, json_integer_value(v), source);
        if (i < 0) return i;
        t->text[i] = key, t->len[i] = klen, t->type[i] = TYPE_NORMAL;
    }
    for (size_t k = 0; k < json_array_size(added); k++) {
        json_t *a = json_array_get(added, k), *content = json_object_get(a, "content");
        int i = token_slot(t, json_integer_value(json_object_get(a, "id")), source);
        if (i < 0) return i;
        t->text[i] = json_string_value(content), t->len[i] = json_string_length(content);
        t->type[i] = flag(a, "special", false) ? TYPE_CONTROL : TYPE_USER_DEFINED;
    }
    for (int32_t i = 0; i < t->n; i++) {
        if (t->text[i]) continue;
        char *pad = t->pads + (size_t)i * 16;
        t->len[i] = (size_t)snprintf(pad, 16, "[PAD%d]", (int)i);
        t->text[i] = pad, t->type[i] = TYPE_UNUSED;
    }
    return 0;
}

/* model.merges as "left right" strings (the file may hold pairs). */
static int merge_strings(json_t *merges, char ***out, size_t **lens, size_t *n, const char *source) {
    *n = json_array_size(merges);
    *out = calloc(*n ? *n : 1, sizeof **out);
    *lens = calloc(*n ? *n : 1, sizeof **lens);
    if (!*out || !*lens) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    for (size_t i = 0; i < *n; i++) {
        json_t *m = json_array_get(merges, i), *a = json_array_get(m, 0), *b = json_array_get(m, 1);
        size_t la = json_string_length(a), lb = json_string_length(b);
        if (json_is_string(m)) a = m, la = json_string_length(m), b = NULL, lb = 0;
        else if (!json_is_string(a) || !json_is_string(b))
            return RLVR_FAIL(RLVR_EFORMAT, "%s: model.merges[%zu] is not a merge", source, i);
        char *s = malloc(la + lb + 2);
        if (!s) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        memcpy(s, json_string_value(a), la);
        if (b) s[la] = ' ', memcpy(s + la + 1, json_string_value(b), lb), la += lb + 1;
        (*out)[i] = s, (*lens)[i] = la;
    }
    return 0;
}

/* GGUF has no key for an added token's lstrip, rstrip, single_word or
 * normalized: rlvr_gguf_tokenizer reads them false. A token that needs one
 * (normalized matters only where NFC can change its content) is refused. */
static int check_added_flags(json_t *added, bool nfc, const char *source) {
    for (size_t i = 0; i < json_array_size(added); i++) {
        json_t *a = json_array_get(added, i);
        const char *content = json_string_value(json_object_get(a, "content"));
        bool ascii = true;
        for (const char *c = content ? content : ""; *c; c++) ascii &= (unsigned char)*c < 0x80;
        bool special = flag(a, "special", false);
        const char *lost = flag(a, "lstrip", false) ? "lstrip" : flag(a, "rstrip", false) ? "rstrip"
                         : flag(a, "single_word", false) ? "single_word"
                         : nfc && !ascii && flag(a, "normalized", !special) ? "normalized" : NULL;
        if (lost)
            return RLVR_FAIL(RLVR_EFORMAT,
                             "%s: added token \"%s\" is %s, which a GGUF file cannot say (llama.cpp would match it "
                             "otherwise); export with --no-tokenizer to write the weights alone",
                             source, content ? content : "?", lost);
    }
    return 0;
}

static int put_keys(rlvr_gguf_writer *w, json_t *root, const char *pre, const rlvr_gguf_tokenizer_spec *spec) {
    json_t *model = json_object_get(root, "model");
    token_list t = {0};
    char **merges = NULL;
    size_t *merge_lens = NULL, n_merges = 0;
    bool nfc = nfc_normalizer(json_object_get(root, "normalizer")) == 1;
    int rc = check_added_flags(json_object_get(root, "added_tokens"), nfc, spec->source);
    if (rc == 0)
        rc = token_list_build(&t, json_object_get(model, "vocab"), json_object_get(root, "added_tokens"), spec->source);
    if (rc == 0) rc = merge_strings(json_object_get(model, "merges"), &merges, &merge_lens, &n_merges, spec->source);
    if (rc == 0) rc = rlvr_gguf_writer_kv_string(w, "tokenizer.ggml.model", "gpt2");
    if (rc == 0) rc = rlvr_gguf_writer_kv_string(w, "tokenizer.ggml.pre", pre);
    if (rc == 0) rc = rlvr_gguf_writer_kv_strings(w, "tokenizer.ggml.tokens", t.text, t.len, (uint64_t)t.n);
    if (rc == 0) rc = rlvr_gguf_writer_kv_i32s(w, "tokenizer.ggml.token_type", t.type, (uint64_t)t.n);
    if (rc == 0)
        rc = rlvr_gguf_writer_kv_strings(w, "tokenizer.ggml.merges", (const char *const *)merges, merge_lens, n_merges);
    const char *id_keys[] = {"tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id"};
    int32_t ids[] = {spec->bos, spec->eos, spec->eot};
    for (int i = 0; i < 3 && rc == 0; i++)
        if (ids[i] >= 0) rc = ids[i] < t.n ? rlvr_gguf_writer_kv_u32(w, id_keys[i], (uint32_t)ids[i])
                                           : RLVR_FAIL(RLVR_EINVAL, "%s: %s %d is outside the %d tokens", spec->source,
                                                       id_keys[i], (int)ids[i], (int)t.n);
    if (rc == 0) rc = rlvr_gguf_writer_kv_bool(w, "tokenizer.ggml.add_bos_token", spec->add_bos);
    if (rc == 0 && spec->chat_template) rc = rlvr_gguf_writer_kv_string(w, "tokenizer.chat_template", spec->chat_template);
    for (size_t i = 0; merges && i < n_merges; i++) free(merges[i]);
    free(merges), free(merge_lens);
    token_list_free(&t);
    return rc;
}

int rlvr_gguf_put_tokenizer(rlvr_gguf_writer *w, const rlvr_gguf_tokenizer_spec *spec) {
    json_error_t err;
    json_t *root = json_loadb(spec->json, spec->len, JSON_ALLOW_NUL, &err);
    if (!root) return RLVR_FAIL(RLVR_EFORMAT, "%s: not valid JSON: %s", spec->source, err.text);
    const char *pre = pre_name(root);
    int rc = pre ? put_keys(w, root, pre, spec)
                 : RLVR_FAIL(RLVR_EFORMAT,
                             "%s: its normalizer and pre_tokenizer are none of llama.cpp's \"gpt-2\", \"llama-bpe\", "
                             "\"qwen2\" or \"smollm\", so a GGUF file cannot carry this tokenizer; export with "
                             "--no-tokenizer to write the weights alone",
                             spec->source);
    json_decref(root);
    return rc;
}
