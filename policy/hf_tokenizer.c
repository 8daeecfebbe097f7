/* policy/hf_tokenizer.c — Hugging Face byte-level BPE (the tokenizer.json
 * of GPT-2, Llama-3, Qwen2 and their kin), encoding to the ids the
 * `tokenizers` library gives.
 *
 * Encode follows tokenizers' pipeline step by step, because each step
 * changes ids when done differently:
 *   1. added tokens with normalized=false are cut out of the raw text
 *      (leftmost, longest match; single_word, lstrip, rstrip as tokenizers);
 *   2. the pieces between them are normalized (NFC), and added tokens with
 *      normalized=true are cut out of the normalized pieces;
 *   3. the pre-tokenizer stages run in order on what is left: Split cuts by
 *      a regex (PCRE2 in UTF + UCP mode, so \p{L}, \p{N}, \s mean what
 *      Oniguruma gives tokenizers) or a literal string, ByteLevel
 *      optionally prepends a space, cuts by GPT-2's regex and maps every
 *      byte to its printable code point (GPT-2's bytes_to_unicode);
 *   4. each piece becomes ids by BPE over the mapped string: with
 *      ignore_merges a piece that is itself a vocabulary entry is one id,
 *      otherwise its characters' ids are merged pair by pair, always the
 *      lowest-ranked adjacent pair, leftmost on ties (tokenizers'
 *      Word::merge_all, a min-heap on (rank, position)).
 * Vocabulary strings are kept in their mapped form, so lookups compare
 * exactly what tokenizers compares; each id's bytes for decode are the
 * mapped string mapped back (a string with a character outside the map
 * decodes to its own UTF-8, as tokenizers' ByteLevel decoder does). */
#include "policy/hf_tokenizer.h"
#include "core/hash.h"

#include "core/error.h"

#include <jansson.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <utf8proc.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_IDS (1 << 24)            /* ids are below this: bounds every table */
#define SUPPORTED "rlvr reads byte-level BPE tokenizers only (model.type BPE with a ByteLevel pre-tokenizer/decoder)"

/* GPT-2's regex, which ByteLevel(use_regex=true) splits by. */
static const char gpt2_pattern[] =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

enum behavior { B_ISOLATED, B_REMOVED, B_MERGED_PREV, B_MERGED_NEXT, B_CONTIGUOUS };

typedef struct {
    bool byte_level;       /* ByteLevel; otherwise Split */
    bool add_prefix_space; /* ByteLevel */
    pcre2_code *re;        /* ByteLevel with use_regex, or Split by a regex */
    char *literal;         /* Split by a string (NULL for a regex) */
    size_t literal_len;
    enum behavior behavior;
    bool invert;
} pretok;

typedef struct {
    int32_t id;
    char *content; /* as in the file: what decode writes */
    size_t len;
    char *match;   /* what is searched for: content, NFC'd when normalized and the normalizer is NFC */
    size_t match_len;
    bool special, single_word, lstrip, rstrip, normalized;
} added_token;

enum { ID_VOCAB = 1, ID_ADDED = 2, ID_SPECIAL = 4 };

struct rlvr_hf_tokenizer {
    char *json, *source;
    size_t json_len;
    int32_t vocab_size, n_vocab, n_merges, n_added;
    bool ignore_merges, nfc;
    uint16_t cp_of_byte[256];  /* GPT-2's map: byte -> code point */
    int16_t byte_of_cp[324];   /* its inverse; -1 for code points it never yields */
    /* vocabulary: mapped strings back to back, and a hash of them */
    char *vstr;
    size_t *voff;
    uint32_t *vlen;
    int32_t *vid;
    int32_t *vslot; /* (vcap) index into the entries, -1 empty */
    size_t vcap;
    /* merges: (left << 32 | right) + 1 -> rank, new id */
    uint64_t *pair_key;
    int32_t *pair_rank, *pair_new;
    size_t pair_cap;
    /* per id: flags and decoded bytes */
    uint8_t *flags;
    char **text;
    uint32_t *text_len;
    added_token *added;
    bool first_byte[2][256]; /* [normalized] bytes an added token of that set starts with */
    pretok *pre;
    int n_pre;
};

/* ---- small growable arrays ------------------------------------------------------------- */

static int grow(void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q) return RLVR_FAIL(RLVR_ENOMEM, "out of memory growing a buffer to %zu x %zu bytes", c, elem);
    *p = q, *cap = c;
    return 0;
}

typedef struct {
    char *p;
    size_t n, cap;
} buf_t;

static int buf_put(buf_t *b, const void *s, size_t k) {
    RLVR_TRY(grow((void **)&b->p, &b->cap, b->n + k, 1));
    if (k) memcpy(b->p + b->n, s, k);
    b->n += k;
    return 0;
}

typedef struct {
    size_t off, len;
    int32_t id; /* an added token's id, -1 for text */
} span_t;

typedef struct {
    span_t *v;
    size_t n, cap;
} spans_t;

static int spans_push(spans_t *s, size_t off, size_t len, int32_t id) {
    RLVR_TRY(grow((void **)&s->v, &s->cap, s->n + 1, sizeof *s->v));
    s->v[s->n++] = (span_t){off, len, id};
    return 0;
}

/* Where ids go: the first cap are stored, all are counted. `flags` is set
 * when special ids must not come out (encode without specials): the first
 * one that would is kept in `special`. */
typedef struct {
    int32_t *out;
    int32_t cap;
    int64_t n;
    const uint8_t *flags;
    int32_t special;
} sink_t;

static void sink_put(sink_t *s, int32_t id) {
    if (s->flags && (s->flags[id] & ID_SPECIAL) && s->special < 0) s->special = id;
    if (s->out && s->n < s->cap) s->out[s->n] = id;
    s->n++;
}

/* ---- hashing ----------------------------------------------------------------------------- */

/* Slot of string s in the vocabulary hash: its entry's, or the empty one it would take. */
static size_t vocab_slot(const rlvr_hf_tokenizer *h, const char *s, size_t n) {
    size_t i = (size_t)rlvr_fnv1a64(s, n) & (h->vcap - 1);
    for (;; i = (i + 1) & (h->vcap - 1)) {
        int32_t e = h->vslot[i];
        if (e < 0 || (h->vlen[e] == n && memcmp(h->vstr + h->voff[e], s, n) == 0)) return i;
    }
}

/* Id of the vocabulary entry spelled s (mapped form), or -1. */
static int32_t vocab_get(const rlvr_hf_tokenizer *h, const char *s, size_t n) {
    int32_t e = h->vslot[vocab_slot(h, s, n)];
    return e < 0 ? -1 : h->vid[e];
}

static uint64_t pair_key(int32_t a, int32_t b) { return ((uint64_t)(uint32_t)a << 32 | (uint32_t)b) + 1; }

static size_t pair_slot(const rlvr_hf_tokenizer *h, uint64_t key) {
    size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & (h->pair_cap - 1);
    while (h->pair_key[i] && h->pair_key[i] != key) i = (i + 1) & (h->pair_cap - 1);
    return i;
}

/* ---- GPT-2's byte <-> code point map ---------------------------------------------------- */

/* Printable Latin-1 bytes map to themselves; the other 68 bytes, in order,
 * to 256, 257, ... so every byte is a visible character. */
static void build_byte_map(rlvr_hf_tokenizer *h) {
    int next = 256;
    for (int b = 0; b < 256; b++) {
        bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        h->cp_of_byte[b] = (uint16_t)(printable ? b : next++);
    }
    for (int c = 0; c < 324; c++) h->byte_of_cp[c] = -1;
    for (int b = 0; b < 256; b++) h->byte_of_cp[h->cp_of_byte[b]] = (int16_t)b;
}

/* Appends the mapped form of n bytes. */
static int map_bytes(const rlvr_hf_tokenizer *h, buf_t *b, const char *s, size_t n) {
    RLVR_TRY(grow((void **)&b->p, &b->cap, b->n + 2 * n, 1));
    for (size_t i = 0; i < n; i++) {
        uint16_t cp = h->cp_of_byte[(unsigned char)s[i]];
        if (cp < 0x80) b->p[b->n++] = (char)cp;
        else b->p[b->n++] = (char)(0xC0 | cp >> 6), b->p[b->n++] = (char)(0x80 | (cp & 0x3F));
    }
    return 0;
}

/* The bytes a mapped string stands for (malloc'd): each character mapped
 * back, or the string's own bytes when one character is outside the map. */
static int unmap_string(const rlvr_hf_tokenizer *h, const char *s, size_t n, char **out, uint32_t *len) {
    char *o = malloc(n ? n : 1);
    if (!o) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t step = utf8proc_iterate((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)(n - i), &cp);
        if (step <= 0 || cp >= 324 || h->byte_of_cp[cp] < 0) {
            memcpy(o, s, n), k = n;
            break;
        }
        o[k++] = (char)h->byte_of_cp[cp];
        i += (size_t)step;
    }
    *out = o, *len = (uint32_t)k;
    return 0;
}

/* ---- NFC ---------------------------------------------------------------------------------- */

/* Appends the NFC form of n bytes. Invalid UTF-8 (rlvr encodes any bytes)
 * is copied as it is and the valid runs around it are normalized alone. */
static int append_nfc(buf_t *b, const char *s, size_t n) {
    size_t run = 0, i = 0;
    while (i <= n) {
        utf8proc_int32_t cp = 0;
        utf8proc_ssize_t step = i < n ? utf8proc_iterate((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)(n - i), &cp) : 0;
        if (i < n && step > 0) {
            i += (size_t)step;
            continue;
        }
        if (i > run) {
            utf8proc_uint8_t *norm = NULL;
            utf8proc_ssize_t k = utf8proc_map((const utf8proc_uint8_t *)s + run, (utf8proc_ssize_t)(i - run), &norm,
                                              UTF8PROC_STABLE | UTF8PROC_COMPOSE);
            if (k < 0) return RLVR_FAIL(RLVR_ENOMEM, "NFC normalization failed: %s", utf8proc_errmsg(k));
            int rc = buf_put(b, norm, (size_t)k);
            free(norm);
            RLVR_TRY(rc);
        }
        if (i == n) break;
        RLVR_TRY(buf_put(b, s + i, 1)); /* one invalid byte */
        run = ++i;
    }
    return 0;
}

/* ---- regexes -------------------------------------------------------------------------------- */

static int compile_regex(pcre2_code **out, const char *pattern, const char *source, const char *field) {
    int err;
    PCRE2_SIZE at;
    /* UCP: \s \w \d and POSIX classes by Unicode properties, as Oniguruma's;
     * MATCH_INVALID_UTF: rlvr encodes any bytes, invalid UTF-8 never matches */
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
                                   PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &err, &at, NULL);
    if (!re) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(err, msg, sizeof msg);
        return RLVR_FAIL(RLVR_EFORMAT, "%s: %s: the regex does not compile at offset %zu: %s", source, field,
                         (size_t)at, (const char *)msg);
    }
    (void)pcre2_jit_compile(re, PCRE2_JIT_COMPLETE); /* without JIT the interpreter gives the same matches */
    *out = re;
    return 0;
}

/* Next match of p in s[0..n) at or after `from`: 1 and [*ms, *me), or 0. */
static int find_next(const pretok *p, pcre2_match_data *md, const char *s, size_t n, size_t from, size_t *ms,
                     size_t *me) {
    if (!p->re) {
        const char *hit = memmem(s + from, n - from, p->literal, p->literal_len);
        if (!hit) return 0;
        *ms = (size_t)(hit - s), *me = *ms + p->literal_len;
        return 1;
    }
    int rc = pcre2_match(p->re, (PCRE2_SPTR)s, n, from, 0, md, NULL);
    if (rc == PCRE2_ERROR_NOMATCH) return 0;
    if (rc < 0) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(rc, msg, sizeof msg);
        return RLVR_FAIL(RLVR_ELIMIT, "pre-tokenizer regex failed on a text of %zu bytes: %s", n, (const char *)msg);
    }
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
    *ms = ov[0], *me = ov[1];
    return 1;
}

/* Length of the UTF-8 character at s[0] (1 for an invalid byte). */
static size_t char_len(const char *s, size_t n) {
    utf8proc_int32_t cp;
    utf8proc_ssize_t k = utf8proc_iterate((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)n, &cp);
    return k > 0 ? (size_t)k : 1;
}

/* Matches and the gaps between them, in order, as tokenizers' Pattern::find_matches
 * (id 1 marks a match, 0 a gap; with invert the two swap). */
static int find_matches(const pretok *p, pcre2_match_data *md, const char *s, size_t n, spans_t *out) {
    out->n = 0;
    if (n == 0 || (!p->re && p->literal_len == 0)) return n ? spans_push(out, 0, n, p->invert) : 0;
    size_t prev = 0, from = 0;
    while (from <= n) {
        size_t ms, me;
        int rc = find_next(p, md, s, n, from, &ms, &me);
        RLVR_TRY(rc);
        if (rc == 0) break;
        if (prev != ms) RLVR_TRY(spans_push(out, prev, ms - prev, p->invert));
        RLVR_TRY(spans_push(out, ms, me - ms, !p->invert));
        prev = me;
        /* after an empty match the search moves on by one character */
        from = me > ms ? me : me + (me < n ? char_len(s + me, n - me) : 1);
    }
    if (prev != n) RLVR_TRY(spans_push(out, prev, n - prev, p->invert));
    return 0;
}

/* The pieces a Split keeps from the matches/gaps of one piece, as tokenizers'
 * NormalizedString::split for each delimiter behavior. */
static int apply_behavior(enum behavior b, const spans_t *m, spans_t *out) {
    if (b == B_MERGED_NEXT) {
        size_t first = out->n;
        bool prev_match = false;
        for (size_t k = m->n; k-- > 0;) { /* right to left, as tokenizers folds it */
            bool is_match = m->v[k].id != 0;
            if (is_match && !prev_match && out->n > first) {
                span_t *last = &out->v[out->n - 1];
                last->len += last->off - m->v[k].off, last->off = m->v[k].off;
            } else {
                RLVR_TRY(spans_push(out, m->v[k].off, m->v[k].len, -1));
            }
            prev_match = is_match;
        }
        for (size_t i = first, j = out->n - 1; i < j; i++, j--) {
            span_t t = out->v[i];
            out->v[i] = out->v[j], out->v[j] = t;
        }
        return 0;
    }
    size_t first = out->n;
    bool prev_match = false;
    for (size_t k = 0; k < m->n; k++) {
        bool is_match = m->v[k].id != 0;
        bool join = (b == B_CONTIGUOUS && is_match == prev_match) || (b == B_MERGED_PREV && is_match && !prev_match);
        if (b == B_REMOVED && is_match) {
        } else if (join && out->n > first) {
            span_t *last = &out->v[out->n - 1];
            last->len = m->v[k].off + m->v[k].len - last->off;
        } else {
            RLVR_TRY(spans_push(out, m->v[k].off, m->v[k].len, -1));
        }
        prev_match = is_match;
    }
    return 0;
}

/* ---- loading ------------------------------------------------------------------------------ */

static const char *type_of(json_t *obj) {
    const char *t = json_is_object(obj) ? json_string_value(json_object_get(obj, "type")) : NULL;
    return t ? t : "(no type)";
}

/* A boolean member: its value, `dflt` when absent or null; RLVR_EFORMAT otherwise. */
static int get_bool(json_t *obj, const char *key, bool dflt, bool *out, const char *source, const char *field) {
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v)) *out = dflt;
    else if (json_is_boolean(v)) *out = json_is_true(v);
    else return RLVR_FAIL(RLVR_EFORMAT, "%s: %s.%s must be true or false", source, field, key);
    return 0;
}

static int parse_normalizer(rlvr_hf_tokenizer *h, json_t *n, const char *field) {
    if (!n || json_is_null(n)) return 0;
    const char *t = type_of(n);
    if (strcmp(t, "NFC") == 0) {
        h->nfc = true;
        return 0;
    }
    if (strcmp(t, "Sequence") == 0) {
        json_t *list = json_object_get(n, "normalizers");
        if (!json_is_array(list))
            return RLVR_FAIL(RLVR_EFORMAT, "%s: %s.normalizers must be a list", h->source, field);
        size_t i;
        json_t *e;
        json_array_foreach(list, i, e) RLVR_TRY(parse_normalizer(h, e, field));
        return 0;
    }
    return RLVR_FAIL(RLVR_EFORMAT, "%s: %s is \"%s\"; rlvr supports no normalizer, NFC, or a Sequence of NFC",
                     h->source, field, t);
}

static int add_pretok(rlvr_hf_tokenizer *h, pretok **p) {
    pretok *q = realloc(h->pre, (size_t)(h->n_pre + 1) * sizeof *q);
    if (!q) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    h->pre = q;
    *p = &q[h->n_pre++];
    memset(*p, 0, sizeof **p);
    return 0;
}

static int parse_split(rlvr_hf_tokenizer *h, json_t *s, pretok *p) {
    static const char *const names[] = {"Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous"};
    const char *b = json_string_value(json_object_get(s, "behavior"));
    int k = 0;
    while (b && k < 5 && strcmp(b, names[k]) != 0) k++;
    if (!b || k == 5)
        return RLVR_FAIL(RLVR_EFORMAT,
                         "%s: pre_tokenizer Split.behavior is %s; rlvr supports Isolated, Removed, "
                         "MergedWithPrevious, MergedWithNext, Contiguous",
                         h->source, b ? b : "missing");
    p->behavior = (enum behavior)k;
    RLVR_TRY(get_bool(s, "invert", false, &p->invert, h->source, "pre_tokenizer Split"));
    json_t *pat = json_object_get(s, "pattern");
    const char *re = json_string_value(json_object_get(pat, "Regex"));
    json_t *lit = json_object_get(pat, "String");
    if (re) return compile_regex(&p->re, re, h->source, "pre_tokenizer Split.pattern.Regex");
    if (!json_is_string(lit))
        return RLVR_FAIL(RLVR_EFORMAT, "%s: pre_tokenizer Split.pattern must be {\"Regex\": ...} or {\"String\": ...}",
                         h->source);
    p->literal_len = json_string_length(lit);
    p->literal = malloc(p->literal_len + 1);
    if (!p->literal) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    memcpy(p->literal, json_string_value(lit), p->literal_len + 1);
    return 0;
}

static int parse_pretok(rlvr_hf_tokenizer *h, json_t *n) {
    const char *t = type_of(n);
    if (strcmp(t, "Sequence") == 0) {
        json_t *list = json_object_get(n, "pretokenizers");
        if (!json_is_array(list))
            return RLVR_FAIL(RLVR_EFORMAT, "%s: pre_tokenizer.pretokenizers must be a list", h->source);
        size_t i;
        json_t *e;
        json_array_foreach(list, i, e) RLVR_TRY(parse_pretok(h, e));
        return 0;
    }
    pretok *p = NULL;
    if (strcmp(t, "Split") == 0) {
        RLVR_TRY(add_pretok(h, &p));
        return parse_split(h, n, p);
    }
    if (strcmp(t, "Digits") == 0) { /* Rust's char::is_numeric is \p{N}: each alone, or runs of them */
        bool individual = false;
        RLVR_TRY(add_pretok(h, &p));
        RLVR_TRY(get_bool(n, "individual_digits", false, &individual, h->source, "pre_tokenizer Digits"));
        p->behavior = individual ? B_ISOLATED : B_CONTIGUOUS;
        return compile_regex(&p->re, "\\p{N}", h->source, "pre_tokenizer Digits");
    }
    if (strcmp(t, "ByteLevel") == 0) {
        bool use_regex = true;
        RLVR_TRY(add_pretok(h, &p));
        p->byte_level = true;
        RLVR_TRY(get_bool(n, "add_prefix_space", true, &p->add_prefix_space, h->source, "pre_tokenizer ByteLevel"));
        RLVR_TRY(get_bool(n, "use_regex", true, &use_regex, h->source, "pre_tokenizer ByteLevel"));
        return use_regex ? compile_regex(&p->re, gpt2_pattern, h->source, "pre_tokenizer ByteLevel") : 0;
    }
    return RLVR_FAIL(RLVR_EFORMAT,
                     "%s: pre_tokenizer is \"%s\"; rlvr supports ByteLevel, Split, Digits, and a Sequence of them "
                     "with one ByteLevel (%s)",
                     h->source, t, SUPPORTED);
}

/* The members of model that change ids and that rlvr does not implement must be off. */
static int check_model_options(rlvr_hf_tokenizer *h, json_t *model) {
    const char *t = json_string_value(json_object_get(model, "type"));
    if (t && strcmp(t, "BPE") != 0)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: model.type is \"%s\"; %s", h->source, t, SUPPORTED);
    bool fallback = false;
    RLVR_TRY(get_bool(model, "byte_fallback", false, &fallback, h->source, "model"));
    if (fallback)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: model.byte_fallback is true (a SentencePiece-style BPE); %s", h->source,
                         SUPPORTED);
    RLVR_TRY(get_bool(model, "ignore_merges", false, &h->ignore_merges, h->source, "model"));
    json_t *d = json_object_get(model, "dropout");
    if (d && !json_is_null(d) && !(json_is_number(d) && json_number_value(d) == 0.0))
        return RLVR_FAIL(RLVR_EFORMAT, "%s: model.dropout is set; rlvr encodes deterministically (dropout null)",
                         h->source);
    static const char *const empty_keys[] = {"continuing_subword_prefix", "end_of_word_suffix"};
    for (int i = 0; i < 2; i++) {
        const char *v = json_string_value(json_object_get(model, empty_keys[i]));
        if (v && v[0])
            return RLVR_FAIL(RLVR_EFORMAT, "%s: model.%s is \"%s\"; rlvr supports none (null)", h->source,
                             empty_keys[i], v);
    }
    return 0;
}

/* Grows the per-id tables to hold id. */
static int claim_id(rlvr_hf_tokenizer *h, json_int_t id, const char *field) {
    if (id < 0 || id >= MAX_IDS)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: %s: id %lld is out of range [0, %d)", h->source, field, (long long)id,
                         MAX_IDS);
    if (id < h->vocab_size) return 0;
    int32_t n = (int32_t)id + 1;
    uint8_t *f = realloc(h->flags, (size_t)n);
    char **t = realloc(h->text, (size_t)n * sizeof *t);
    if (f) h->flags = f;
    if (t) h->text = t;
    uint32_t *l = realloc(h->text_len, (size_t)n * sizeof *l);
    if (l) h->text_len = l;
    if (!f || !t || !l) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    memset(f + h->vocab_size, 0, (size_t)(n - h->vocab_size));
    memset(t + h->vocab_size, 0, (size_t)(n - h->vocab_size) * sizeof *t);
    memset(l + h->vocab_size, 0, (size_t)(n - h->vocab_size) * sizeof *l);
    h->vocab_size = n;
    return 0;
}

static int parse_vocab(rlvr_hf_tokenizer *h, json_t *vocab) {
    if (!json_is_object(vocab)) return RLVR_FAIL(RLVR_EFORMAT, "%s: model.vocab must be an object (token: id)", h->source);
    size_t n = json_object_size(vocab), total = 0, k = 0, len;
    if (n == 0 || n > MAX_IDS) return RLVR_FAIL(RLVR_EFORMAT, "%s: model.vocab has %zu entries", h->source, n);
    const char *key;
    json_t *v;
    json_object_keylen_foreach(vocab, key, len, v) total += len; /* a key may hold \u0000 */
    RLVR_ALLOC(h->vstr, total);
    RLVR_ALLOC(h->voff, n);
    RLVR_ALLOC(h->vlen, n);
    RLVR_ALLOC(h->vid, n);
    for (h->vcap = 64; h->vcap < 2 * n;) h->vcap *= 2;
    RLVR_ALLOC(h->vslot, h->vcap);
    for (size_t i = 0; i < h->vcap; i++) h->vslot[i] = -1;
    total = 0;
    json_object_keylen_foreach(vocab, key, len, v) {
        if (!json_is_integer(v))
            return RLVR_FAIL(RLVR_EFORMAT, "%s: model.vocab[\"%s\"] must be an integer id", h->source, key);
        json_int_t id = json_integer_value(v);
        RLVR_TRY(claim_id(h, id, "model.vocab"));
        if (h->flags[id])
            return RLVR_FAIL(RLVR_EFORMAT, "%s: model.vocab gives id %lld to two tokens (one is \"%s\")", h->source,
                             (long long)id, key);
        memcpy(h->vstr + total, key, len);
        h->voff[k] = total, h->vlen[k] = (uint32_t)len, h->vid[k] = (int32_t)id;
        h->vslot[vocab_slot(h, key, len)] = (int32_t)k;
        total += len, k++;
        h->flags[id] = ID_VOCAB;
        RLVR_TRY(unmap_string(h, key, len, &h->text[id], &h->text_len[id]));
    }
    h->n_vocab = (int32_t)n;
    return 0;
}

/* One merge as its two token strings (borrowed from the JSON). */
static int merge_parts(rlvr_hf_tokenizer *h, json_t *m, size_t i, const char **a, size_t *la, const char **b,
                       size_t *lb) {
    if (json_is_array(m) && json_array_size(m) == 2 && json_is_string(json_array_get(m, 0)) &&
        json_is_string(json_array_get(m, 1))) {
        *a = json_string_value(json_array_get(m, 0)), *la = json_string_length(json_array_get(m, 0));
        *b = json_string_value(json_array_get(m, 1)), *lb = json_string_length(json_array_get(m, 1));
        return 0;
    }
    const char *s = json_string_value(m), *sp = s ? strchr(s, ' ') : NULL;
    if (!sp || strchr(sp + 1, ' '))
        return RLVR_FAIL(RLVR_EFORMAT, "%s: model.merges[%zu] must be \"left right\" (one space) or [left, right]",
                         h->source, i);
    *a = s, *la = (size_t)(sp - s), *b = sp + 1, *lb = json_string_length(m) - *la - 1;
    return 0;
}

static int parse_merges(rlvr_hf_tokenizer *h, json_t *merges) {
    if (!json_is_array(merges)) return RLVR_FAIL(RLVR_EFORMAT, "%s: model.merges must be a list", h->source);
    size_t n = json_array_size(merges);
    if (n > MAX_IDS) return RLVR_FAIL(RLVR_EFORMAT, "%s: model.merges has %zu entries", h->source, n);
    for (h->pair_cap = 64; h->pair_cap < 2 * n;) h->pair_cap *= 2;
    RLVR_ALLOC(h->pair_key, h->pair_cap);
    RLVR_ALLOC(h->pair_rank, h->pair_cap);
    RLVR_ALLOC(h->pair_new, h->pair_cap);
    buf_t joined = {0};
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const char *a = NULL, *b = NULL;
        size_t la = 0, lb = 0;
        rc = merge_parts(h, json_array_get(merges, i), i, &a, &la, &b, &lb);
        int32_t ia = rc ? -1 : vocab_get(h, a, la), ib = rc ? -1 : vocab_get(h, b, lb);
        if (rc == 0 && (ia < 0 || ib < 0))
            rc = RLVR_FAIL(RLVR_EFORMAT, "%s: model.merges[%zu] joins \"%.*s\", which is not in model.vocab", h->source,
                           i, (int)(ia < 0 ? la : lb), ia < 0 ? a : b);
        joined.n = 0;
        if (rc == 0) rc = buf_put(&joined, a, la);
        if (rc == 0) rc = buf_put(&joined, b, lb);
        int32_t inew = rc ? -1 : vocab_get(h, joined.p, joined.n);
        if (rc == 0 && inew < 0)
            rc = RLVR_FAIL(RLVR_EFORMAT, "%s: model.merges[%zu] makes \"%.*s\", which is not in model.vocab", h->source,
                           i, (int)joined.n, joined.p);
        if (rc == 0) { /* a repeated pair: the later merge wins, as in tokenizers' merge map */
            size_t s = pair_slot(h, pair_key(ia, ib));
            h->pair_key[s] = pair_key(ia, ib), h->pair_rank[s] = (int32_t)i, h->pair_new[s] = inew;
        }
    }
    free(joined.p);
    h->n_merges = (int32_t)n;
    return rc;
}

static int copy_str(char **out, const char *s, size_t n) {
    *out = malloc(n + 1);
    if (!*out) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    memcpy(*out, s, n), (*out)[n] = '\0';
    return 0;
}

static int parse_added_token(rlvr_hf_tokenizer *h, json_t *e, size_t i, added_token *a) {
    json_t *id = json_object_get(e, "id"), *content = json_object_get(e, "content");
    if (!json_is_integer(id) || !json_is_string(content) || json_string_length(content) == 0)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: added_tokens[%zu] needs an integer id and a non-empty content", h->source, i);
    RLVR_TRY(claim_id(h, json_integer_value(id), "added_tokens"));
    a->id = (int32_t)json_integer_value(id);
    RLVR_TRY(copy_str(&a->content, json_string_value(content), json_string_length(content)));
    a->len = json_string_length(content);
    RLVR_TRY(get_bool(e, "special", false, &a->special, h->source, "added_tokens[]"));
    RLVR_TRY(get_bool(e, "single_word", false, &a->single_word, h->source, "added_tokens[]"));
    RLVR_TRY(get_bool(e, "lstrip", false, &a->lstrip, h->source, "added_tokens[]"));
    RLVR_TRY(get_bool(e, "rstrip", false, &a->rstrip, h->source, "added_tokens[]"));
    RLVR_TRY(get_bool(e, "normalized", !a->special, &a->normalized, h->source, "added_tokens[]"));
    uint8_t f = h->flags[a->id];
    if (f & ID_ADDED)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: added_tokens gives id %d to two tokens (one is \"%s\")", h->source,
                         (int)a->id, a->content);
    if ((f & ID_VOCAB) && (h->text_len[a->id] != a->len || memcmp(h->text[a->id], a->content, a->len) != 0))
        return RLVR_FAIL(RLVR_EFORMAT, "%s: added token \"%s\" has id %d, which model.vocab gives another token",
                         h->source, a->content, (int)a->id);
    free(h->text[a->id]);
    RLVR_TRY(copy_str(&h->text[a->id], a->content, a->len));
    h->text_len[a->id] = (uint32_t)a->len;
    h->flags[a->id] = (uint8_t)(f | ID_ADDED | (a->special ? ID_SPECIAL : 0));
    buf_t m = {0};
    int rc = h->nfc && a->normalized ? append_nfc(&m, a->content, a->len) : buf_put(&m, a->content, a->len);
    a->match = m.p, a->match_len = m.n;
    if (rc == 0 && m.n > 0) h->first_byte[a->normalized][(unsigned char)m.p[0]] = true;
    return rc;
}

/* tokenizers ignores the ids in added_tokens and numbers the tokens again
 * as it adds them: the vocabulary's id for text already in it, else the next
 * id after the vocabulary and the added tokens before. A file whose ids
 * differ would encode to other ids there than here: refused. */
static int check_added_id(const rlvr_hf_tokenizer *h, size_t i, int32_t *max_added) {
    const added_token *a = &h->added[i];
    int32_t want = vocab_get(h, a->content, a->len);
    if (want < 0) want = *max_added >= h->n_vocab ? *max_added + 1 : h->n_vocab;
    if (a->id != want)
        return RLVR_FAIL(RLVR_EFORMAT,
                         "%s: added_tokens[%zu] \"%s\" has id %d, where tokenizers numbers it %d (the vocabulary's "
                         "id of that text, else the next id after model.vocab and the added tokens before it)",
                         h->source, i, a->content, (int)a->id, (int)want);
    if (a->id > *max_added) *max_added = a->id;
    return 0;
}

static int parse_added(rlvr_hf_tokenizer *h, json_t *list) {
    if (!list || json_is_null(list)) return 0;
    if (!json_is_array(list)) return RLVR_FAIL(RLVR_EFORMAT, "%s: added_tokens must be a list", h->source);
    RLVR_ALLOC(h->added, json_array_size(list));
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e) {
        h->n_added = (int32_t)i + 1; /* counted first: rlvr_hf_free frees a half-parsed one */
        RLVR_TRY(parse_added_token(h, e, i, &h->added[i]));
    }
    int32_t max_added = -1;
    for (i = 0; i < (size_t)h->n_added; i++) RLVR_TRY(check_added_id(h, i, &max_added));
    return 0;
}

static int parse_pipeline(rlvr_hf_tokenizer *h, json_t *root) {
    RLVR_TRY(parse_normalizer(h, json_object_get(root, "normalizer"), "normalizer"));
    json_t *pre = json_object_get(root, "pre_tokenizer");
    if (!pre || json_is_null(pre))
        return RLVR_FAIL(RLVR_EFORMAT, "%s: pre_tokenizer is null; %s", h->source, SUPPORTED);
    RLVR_TRY(parse_pretok(h, pre));
    int n_bl = 0;
    for (int i = 0; i < h->n_pre; i++) n_bl += h->pre[i].byte_level;
    if (n_bl != 1)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: pre_tokenizer has %d ByteLevel stages; %s (exactly one)", h->source, n_bl,
                         SUPPORTED);
    const char *dec = type_of(json_object_get(root, "decoder"));
    if (strcmp(dec, "ByteLevel") != 0)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: decoder is \"%s\"; %s", h->source, dec, SUPPORTED);
    return 0;
}

static int parse_root(rlvr_hf_tokenizer *h, json_t *root) {
    if (!json_is_object(root)) return RLVR_FAIL(RLVR_EFORMAT, "%s: a tokenizer.json holds one JSON object", h->source);
    json_t *model = json_object_get(root, "model");
    if (!json_is_object(model)) return RLVR_FAIL(RLVR_EFORMAT, "%s: model is missing; %s", h->source, SUPPORTED);
    RLVR_TRY(check_model_options(h, model));
    RLVR_TRY(parse_pipeline(h, root));
    RLVR_TRY(parse_vocab(h, json_object_get(model, "vocab")));
    RLVR_TRY(parse_merges(h, json_object_get(model, "merges")));
    RLVR_TRY(parse_added(h, json_object_get(root, "added_tokens")));
    return 0;
}

int rlvr_hf_new(rlvr_hf_tokenizer **out, const char *json, size_t len, const char *source) {
    rlvr_hf_tokenizer *h = NULL;
    json_t *root = NULL;
    int rc = 0;
    h = calloc(1, sizeof *h);
    if (!h) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    build_byte_map(h);
    rc = copy_str(&h->source, source, strlen(source));
    if (rc == 0) rc = copy_str(&h->json, json, len);
    h->json_len = len;
    if (rc < 0) goto cleanup;
    json_error_t err;
    root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &err);
    if (!root) {
        rc = RLVR_FAIL(RLVR_EFORMAT, "%s: not valid JSON (line %d, column %d): %s", source, err.line, err.column,
                       err.text);
        goto cleanup;
    }
    rc = parse_root(h, root);
cleanup:
    json_decref(root);
    if (rc < 0) {
        rlvr_hf_free(h);
        return rc;
    }
    *out = h;
    return 0;
}

void rlvr_hf_free(rlvr_hf_tokenizer *h) {
    if (!h) return;
    for (int i = 0; i < h->n_pre; i++) pcre2_code_free(h->pre[i].re), free(h->pre[i].literal);
    for (int32_t i = 0; i < h->n_added; i++) free(h->added[i].content), free(h->added[i].match);
    for (int32_t i = 0; h->text && i < h->vocab_size; i++) free(h->text[i]);
    free(h->pre), free(h->added), free(h->text), free(h->text_len), free(h->flags);
    free(h->vstr), free(h->voff), free(h->vlen), free(h->vid), free(h->vslot);
    free(h->pair_key), free(h->pair_rank), free(h->pair_new);
    free(h->json), free(h->source);
    free(h);
}

/* ---- added tokens in text ----------------------------------------------------------------- */

/* Rust's char::is_whitespace (the White_Space property), for lstrip/rstrip. */
static bool is_white(utf8proc_int32_t c) {
    return (c >= 9 && c <= 13) || c == ' ' || c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
           c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

/* A word character for single_word: what \w matches in Rust's regex crate
 * (letters, marks, decimal and letter numbers, connector punctuation, the
 * zero-width joiners), which tokenizers tests on both sides of the match. */
static bool is_word(utf8proc_int32_t c) {
    if (c == 0x200C || c == 0x200D) return true;
    utf8proc_category_t k = utf8proc_category(c);
    return (k >= UTF8PROC_CATEGORY_LU && k <= UTF8PROC_CATEGORY_ME) || k == UTF8PROC_CATEGORY_ND ||
           k == UTF8PROC_CATEGORY_NL || k == UTF8PROC_CATEGORY_PC;
}

/* Start of the character that ends at s[end] (exclusive), and the character. */
static size_t char_before(const char *s, size_t end, utf8proc_int32_t *c) {
    size_t b = end - 1;
    while (b > 0 && end - b < 4 && ((unsigned char)s[b] & 0xC0) == 0x80) b--;
    if (utf8proc_iterate((const utf8proc_uint8_t *)s + b, (utf8proc_ssize_t)(end - b), c) != (utf8proc_ssize_t)(end - b))
        *c = -1, b = end - 1;
    return b;
}

static utf8proc_int32_t char_at(const char *s, size_t n, size_t at) {
    utf8proc_int32_t c = -1;
    if (at < n && utf8proc_iterate((const utf8proc_uint8_t *)s + at, (utf8proc_ssize_t)(n - at), &c) < 0) c = -1;
    return c;
}

/* The longest added token of set `normalized` that starts at s[at], or NULL. */
static const added_token *longest_at(const rlvr_hf_tokenizer *h, bool normalized, const char *s, size_t n, size_t at) {
    const added_token *best = NULL;
    if (!h->first_byte[normalized][(unsigned char)s[at]]) return NULL;
    for (int32_t i = 0; i < h->n_added; i++) {
        const added_token *a = &h->added[i];
        if (a->normalized != normalized || a->match_len > n - at || (best && a->match_len <= best->match_len)) continue;
        if (memcmp(s + at, a->match, a->match_len) == 0) best = a;
    }
    return best;
}

/* Cuts s[0..n) at the added tokens of one set, as tokenizers'
 * AddedVocabulary::find_matches: leftmost-longest matches, a special one
 * skipped when !specials, single_word requiring no word character around,
 * lstrip/rstrip swallowing whitespace on that side. Appends spans of s
 * (id -1 for text between tokens). */
static int split_added(const rlvr_hf_tokenizer *h, bool normalized, bool specials, const char *s, size_t n,
                       spans_t *out) {
    size_t start_off = 0, at = 0;
    while (at < n) {
        const added_token *a = longest_at(h, normalized, s, n, at);
        if (!a) {
            at++;
            continue;
        }
        size_t start = at, stop = at + a->match_len;
        at = stop;
        if (a->special && !specials) continue;
        if (a->single_word) {
            utf8proc_int32_t before = -1, after = char_at(s, n, stop);
            if (start > 0) char_before(s, start, &before);
            if ((before >= 0 && is_word(before)) || (after >= 0 && is_word(after))) continue;
        }
        if (a->lstrip) {
            utf8proc_int32_t c;
            size_t ns = start;
            while (ns > 0) {
                size_t b = char_before(s, ns, &c);
                if (c < 0 || !is_white(c)) break;
                ns = b;
            }
            start = ns > start_off ? ns : start_off;
        }
        if (a->rstrip) {
            utf8proc_int32_t c;
            while (stop < n && (c = char_at(s, n, stop)) >= 0 && is_white(c)) stop += char_len(s + stop, n - stop);
        }
        if (start_off < start) RLVR_TRY(spans_push(out, start_off, start - start_off, -1));
        RLVR_TRY(spans_push(out, start, stop - start, a->id));
        start_off = stop;
    }
    if (start_off < n) RLVR_TRY(spans_push(out, start_off, n - start_off, -1));
    return 0;
}

/* ---- BPE of one piece ------------------------------------------------------------------- */

typedef struct {
    int32_t rank, pos, new_id;
} merge_t;

typedef struct {
    int32_t *id, *prev, *next;
    bool *dead;
    merge_t *heap;
    size_t cap, heap_cap, heap_n;
} word_t;

static bool merge_less(merge_t a, merge_t b) { return a.rank < b.rank || (a.rank == b.rank && a.pos < b.pos); }

static int heap_push(word_t *w, merge_t m) {
    RLVR_TRY(grow((void **)&w->heap, &w->heap_cap, w->heap_n + 1, sizeof *w->heap));
    size_t i = w->heap_n++;
    while (i > 0 && merge_less(m, w->heap[(i - 1) / 2])) w->heap[i] = w->heap[(i - 1) / 2], i = (i - 1) / 2;
    w->heap[i] = m;
    return 0;
}

static merge_t heap_pop(word_t *w) {
    merge_t top = w->heap[0], last = w->heap[--w->heap_n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= w->heap_n) break;
        if (c + 1 < w->heap_n && merge_less(w->heap[c + 1], w->heap[c])) c++;
        if (!merge_less(w->heap[c], last)) break;
        w->heap[i] = w->heap[c], i = c;
    }
    if (w->heap_n) w->heap[i] = last;
    return top;
}

/* Pushes the merge of symbols pos and its next, when there is one. */
static int push_pair(const rlvr_hf_tokenizer *h, word_t *w, int32_t pos) {
    int32_t nx = w->next[pos];
    if (nx < 0) return 0;
    size_t s = pair_slot(h, pair_key(w->id[pos], w->id[nx]));
    if (!h->pair_key[s]) return 0;
    return heap_push(w, (merge_t){h->pair_rank[s], pos, h->pair_new[s]});
}

static int word_reserve(word_t *w, size_t n) {
    if (n <= w->cap) return 0;
    size_t c = w->cap;
    RLVR_TRY(grow((void **)&w->id, &c, n, sizeof *w->id));
    c = w->cap;
    RLVR_TRY(grow((void **)&w->prev, &c, n, sizeof *w->prev));
    c = w->cap;
    RLVR_TRY(grow((void **)&w->next, &c, n, sizeof *w->next));
    c = w->cap;
    RLVR_TRY(grow((void **)&w->dead, &c, n, sizeof *w->dead));
    w->cap = c;
    return 0;
}

/* The piece's characters as symbols (a character outside the vocabulary is
 * dropped, as tokenizers does without an unk token); returns their count. */
static int word_init(const rlvr_hf_tokenizer *h, word_t *w, const char *s, size_t n, int32_t *count) {
    RLVR_TRY(word_reserve(w, n));
    int32_t m = 0;
    for (size_t i = 0; i < n;) {
        size_t k = char_len(s + i, n - i);
        int32_t id = vocab_get(h, s + i, k);
        i += k;
        if (id < 0) continue;
        w->id[m] = id, w->prev[m] = m - 1, w->next[m] = m + 1, w->dead[m] = false;
        m++;
    }
    if (m > 0) w->next[m - 1] = -1;
    *count = m;
    return 0;
}

/* tokenizers' Word::merge_all without dropout. */
static int bpe_piece(const rlvr_hf_tokenizer *h, word_t *w, const char *s, size_t n, sink_t *sink) {
    if (h->ignore_merges) {
        int32_t id = vocab_get(h, s, n);
        if (id >= 0) {
            sink_put(sink, id);
            return 0;
        }
    }
    int32_t m;
    RLVR_TRY(word_init(h, w, s, n, &m));
    w->heap_n = 0;
    for (int32_t i = 0; i + 1 < m; i++) RLVR_TRY(push_pair(h, w, i));
    while (w->heap_n) {
        merge_t top = heap_pop(w);
        int32_t nx = w->next[top.pos];
        if (w->dead[top.pos] || nx < 0) continue;
        size_t s2 = pair_slot(h, pair_key(w->id[top.pos], w->id[nx]));
        if (!h->pair_key[s2] || h->pair_new[s2] != top.new_id) continue; /* a stale entry */
        w->id[top.pos] = top.new_id;
        w->dead[nx] = true;
        w->next[top.pos] = w->next[nx];
        if (w->next[nx] >= 0) w->prev[w->next[nx]] = top.pos;
        if (w->prev[top.pos] >= 0) RLVR_TRY(push_pair(h, w, w->prev[top.pos]));
        RLVR_TRY(push_pair(h, w, top.pos));
    }
    for (int32_t i = 0; i < m; i++)
        if (!w->dead[i]) sink_put(sink, w->id[i]);
    return 0;
}

/* ---- the pipeline ----------------------------------------------------------------------- */

typedef struct {
    buf_t a, b;          /* the pieces' bytes, before and after a stage */
    spans_t pa, pb, hits; /* their spans; matches of one Split */
    buf_t norm;
    spans_t added;
    word_t word;
    pcre2_match_data *md;
} work_t;

static void work_free(work_t *k) {
    free(k->a.p), free(k->b.p), free(k->pa.v), free(k->pb.v), free(k->hits.v), free(k->norm.p), free(k->added.v);
    free(k->word.id), free(k->word.prev), free(k->word.next), free(k->word.dead), free(k->word.heap);
    pcre2_match_data_free(k->md);
}

/* ByteLevel on every piece: the prefix space, GPT-2's split, the byte map. */
static int stage_byte_level(const rlvr_hf_tokenizer *h, const pretok *p, work_t *k) {
    k->b.n = 0, k->pb.n = 0;
    buf_t tmp = {0};
    int rc = 0;
    for (size_t i = 0; i < k->pa.n && rc == 0; i++) {
        tmp.n = 0;
        const span_t *sp = &k->pa.v[i];
        if (p->add_prefix_space && (sp->len == 0 || k->a.p[sp->off] != ' ')) rc = buf_put(&tmp, " ", 1);
        if (rc == 0) rc = buf_put(&tmp, k->a.p + sp->off, sp->len);
        if (rc == 0 && p->re) rc = find_matches(p, k->md, tmp.p, tmp.n, &k->hits);
        else if (rc == 0) k->hits.n = 0, rc = spans_push(&k->hits, 0, tmp.n, 0);
        for (size_t j = 0; j < k->hits.n && rc == 0; j++) {
            size_t at = k->b.n;
            if (k->hits.v[j].len == 0) continue;
            rc = map_bytes(h, &k->b, tmp.p + k->hits.v[j].off, k->hits.v[j].len);
            if (rc == 0) rc = spans_push(&k->pb, at, k->b.n - at, -1);
        }
    }
    free(tmp.p);
    if (rc == 0) {
        buf_t t = k->a;
        k->a = k->b, k->b = t;
    }
    return rc;
}

/* Split on every piece; the bytes stay where they are. */
static int stage_split(const pretok *p, work_t *k) {
    k->pb.n = 0;
    for (size_t i = 0; i < k->pa.n; i++) {
        const span_t *sp = &k->pa.v[i];
        size_t first = k->pb.n;
        RLVR_TRY(find_matches(p, k->md, k->a.p + sp->off, sp->len, &k->hits));
        RLVR_TRY(apply_behavior(p->behavior, &k->hits, &k->pb));
        size_t keep = first;
        for (size_t j = first; j < k->pb.n; j++) /* offsets into the buffer; empty pieces go */
            if (k->pb.v[j].len) k->pb.v[keep] = k->pb.v[j], k->pb.v[keep++].off += sp->off;
        k->pb.n = keep;
    }
    return 0;
}

/* Pre-tokenizes and encodes text that holds no added token. */
static int encode_text(const rlvr_hf_tokenizer *h, const char *s, size_t n, work_t *k, sink_t *sink) {
    if (n == 0) return 0;
    k->a.n = 0, k->pa.n = 0;
    RLVR_TRY(buf_put(&k->a, s, n));
    RLVR_TRY(spans_push(&k->pa, 0, n, -1));
    for (int i = 0; i < h->n_pre; i++) {
        if (h->pre[i].byte_level) RLVR_TRY(stage_byte_level(h, &h->pre[i], k));
        else RLVR_TRY(stage_split(&h->pre[i], k));
        spans_t t = k->pa;
        k->pa = k->pb, k->pb = t;
    }
    for (size_t i = 0; i < k->pa.n; i++) RLVR_TRY(bpe_piece(h, &k->word, k->a.p + k->pa.v[i].off, k->pa.v[i].len, sink));
    return 0;
}

/* Text between non-normalized added tokens: normalize, cut at the normalized ones, encode the rest. */
static int encode_segment(const rlvr_hf_tokenizer *h, const char *s, size_t n, bool specials, work_t *k,
                          sink_t *sink) {
    k->norm.n = 0;
    if (h->nfc) {
        RLVR_TRY(append_nfc(&k->norm, s, n));
        s = k->norm.p, n = k->norm.n;
    }
    k->added.n = 0;
    RLVR_TRY(split_added(h, true, specials, s, n, &k->added));
    /* encode_text reuses the work buffers but not norm or added */
    for (size_t i = 0; i < k->added.n; i++) {
        span_t sp = k->added.v[i];
        if (sp.id >= 0) sink_put(sink, sp.id);
        else RLVR_TRY(encode_text(h, s + sp.off, sp.len, k, sink));
    }
    return 0;
}

int rlvr_hf_encode(const rlvr_hf_tokenizer *h, const char *text, size_t len, bool specials, int32_t *out,
                   int32_t cap, int64_t *n) {
    work_t k = {0};
    spans_t raw = {0};
    sink_t sink = {out, cap, 0, specials ? NULL : h->flags, -1};
    int rc = 0;
    k.md = pcre2_match_data_create(1, NULL);
    if (!k.md) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    if (rc == 0) rc = split_added(h, false, specials, text, len, &raw);
    for (size_t i = 0; i < raw.n && rc == 0; i++) {
        if (raw.v[i].id >= 0) sink_put(&sink, raw.v[i].id);
        else rc = encode_segment(h, text + raw.v[i].off, raw.v[i].len, specials, &k, &sink);
    }
    free(raw.v);
    work_free(&k);
    /* a vocabulary whose merges (or ignore_merges) spell a special token
     * from plain text would let text end a turn: refused rather than given */
    if (rc == 0 && sink.special >= 0)
        rc = RLVR_FAIL(RLVR_EFORMAT, "%s: the text's BPE gives special token %d (\"%s\"); encode never gives specials",
                       h->source, (int)sink.special, h->text[sink.special]);
    if (rc == 0) *n = sink.n;
    return rc;
}

/* ---- lookups ------------------------------------------------------------------------------ */

int32_t rlvr_hf_vocab_size(const rlvr_hf_tokenizer *h) { return h->vocab_size; }

const char *rlvr_hf_token_text(const rlvr_hf_tokenizer *h, int32_t id, size_t *len) {
    *len = 0;
    if (id < 0 || id >= h->vocab_size || !h->flags[id]) return NULL;
    *len = h->text_len[id];
    return h->text[id];
}

bool rlvr_hf_is_special(const rlvr_hf_tokenizer *h, int32_t id) {
    return id >= 0 && id < h->vocab_size && (h->flags[id] & ID_SPECIAL);
}

int32_t rlvr_hf_find_added(const rlvr_hf_tokenizer *h, const char *content) {
    size_t n = strlen(content);
    for (int32_t i = 0; i < h->n_added; i++)
        if (h->added[i].len == n && memcmp(h->added[i].content, content, n) == 0) return h->added[i].id;
    return -1;
}

const char *rlvr_hf_json(const rlvr_hf_tokenizer *h, size_t *len) {
    *len = h->json_len;
    return h->json;
}

const char *rlvr_hf_source(const rlvr_hf_tokenizer *h) { return h->source; }

void rlvr_hf_counts(const rlvr_hf_tokenizer *h, int32_t *vocab, int32_t *merges, int32_t *added) {
    *vocab = h->n_vocab, *merges = h->n_merges, *added = h->n_added;
}
