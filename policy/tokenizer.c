#include "policy/tokenizer.h"

#include "core/error.h"
#include "policy/bpe.h"
#include "policy/hf_tokenizer.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BYTE_TOKENS 256

struct rlvr_tokenizer {
    rlvr_tokenizer_kind kind;
    int32_t vocab_size;
    int32_t special_ids[RLVR_SPECIAL_COUNT]; /* id of each special token */
    /* BPE only */
    int32_t n_merges;
    int32_t *merges;        /* (n_merges, 2) left and right id of each merge */
    uint32_t *text_off;     /* (vocab_size) where each id's bytes start in text; specials: unused */
    uint16_t *text_len;     /* (vocab_size) their count (0 for specials) */
    char *text;             /* the bytes of every non-special id, back to back */
    uint64_t *pair_key;     /* (pair_cap) open addressing: (left << 32 | right) + 1, 0 = empty */
    int32_t *pair_rank;     /* (pair_cap) the merge index of that pair */
    size_t pair_cap;
    /* the chat format: native (from special_ids) unless a template family was set */
    rlvr_chat chat;
    char *chat_template; /* the Jinja text it was recognised from (NUL-terminated), NULL when none */
    size_t chat_template_len;
    /* what a pretrained model's files declare for generation (HF only) */
    int32_t gen_bos;                          /* -1: none */
    int32_t gen_eos[RLVR_TOKENIZER_MAX_EOS]; /* (n_gen_eos) ids generation stops at */
    int n_gen_eos;
    /* HF only */
    rlvr_hf_tokenizer *hf;
};

static const char *const special_names[RLVR_SPECIAL_COUNT] = {
    [RLVR_SPECIAL_BOS] = "<|bos|>",
    [RLVR_SPECIAL_EOS] = "<|eos|>",
    [RLVR_SPECIAL_END_OF_TURN] = "<|end_of_turn|>",
    [RLVR_SPECIAL_SYSTEM] = "<|system|>",
    [RLVR_SPECIAL_USER] = "<|user|>",
    [RLVR_SPECIAL_ASSISTANT] = "<|assistant|>",
    [RLVR_SPECIAL_TOOL] = "<|tool|>",
    [RLVR_SPECIAL_TOOL_CALL_OPEN] = "<|tool_call|>",
    [RLVR_SPECIAL_TOOL_CALL_CLOSE] = "<|/tool_call|>",
    [RLVR_SPECIAL_OBSERVATION_OPEN] = "<|observation|>",
    [RLVR_SPECIAL_OBSERVATION_CLOSE] = "<|/observation|>",
};

static int copy_chat(rlvr_tokenizer *to, const rlvr_tokenizer *from);

/* The native format of policy/template.h, over this tokenizer's special ids. */
static rlvr_chat native_chat(const rlvr_tokenizer *t) {
    return (rlvr_chat){.family = RLVR_CHAT_NATIVE,
                          .begin = t->special_ids[RLVR_SPECIAL_BOS],
                          .turn_open = -1,
                          .header_end = -1,
                          .turn_end = t->special_ids[RLVR_SPECIAL_END_OF_TURN],
                          .episode_end = t->special_ids[RLVR_SPECIAL_EOS]};
}

int rlvr_tokenizer_new_byte(rlvr_tokenizer **out) {
    *out = NULL;
    rlvr_tokenizer *t;
    RLVR_ALLOC(t, 1);
    t->kind = RLVR_TOKENIZER_BYTE;
    t->gen_bos = -1;
    /* specials follow the bytes in enum order */
    for (int i = 0; i < RLVR_SPECIAL_COUNT; i++) t->special_ids[i] = BYTE_TOKENS + i;
    t->vocab_size = BYTE_TOKENS + RLVR_SPECIAL_COUNT;
    t->chat = native_chat(t);
    *out = t;
    return 0;
}

/* ---- BPE tables ---------------------------------------------------------------------- */

static uint64_t pair_key(int32_t left, int32_t right) { return ((uint64_t)(uint32_t)left << 32 | (uint32_t)right) + 1; }

static size_t pair_index(const rlvr_tokenizer *t, uint64_t key) {
    size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & (t->pair_cap - 1);
    while (t->pair_key[i] && t->pair_key[i] != key) i = (i + 1) & (t->pair_cap - 1);
    return i;
}

/* Merge index of the pair, or INT32_MAX when it never merges. */
static int32_t pair_rank(const rlvr_tokenizer *t, int32_t left, int32_t right) {
    size_t i = pair_index(t, pair_key(left, right));
    return t->pair_key[i] ? t->pair_rank[i] : INT32_MAX;
}

static int check_merge(const int32_t *m, int32_t i) {
    for (int k = 0; k < 2; k++) {
        int32_t id = m[2 * i + k];
        bool defined = (id >= 0 && id < BYTE_TOKENS) ||
                       (id >= RLVR_TOKENIZER_FIRST_MERGE && id < RLVR_TOKENIZER_FIRST_MERGE + i);
        if (!defined)
            return RLVR_FAIL(RLVR_EFORMAT,
                             "BPE merge %d joins id %d, which is a special token or not defined before it (merge i may "
                             "join bytes 0-255 and merged ids %d .. %d + i - 1)",
                             (int)i, (int)id, RLVR_TOKENIZER_FIRST_MERGE, RLVR_TOKENIZER_FIRST_MERGE);
    }
    return 0;
}

/* Each id's bytes (a merged id: its left's, then its right's) and the pair table. */
static int build_bpe_tables(rlvr_tokenizer *t) {
    size_t total = BYTE_TOKENS;
    RLVR_ALLOC(t->text_off, (size_t)t->vocab_size);
    RLVR_ALLOC(t->text_len, (size_t)t->vocab_size);
    for (int32_t i = 0; i < t->n_merges; i++) {
        RLVR_TRY(check_merge(t->merges, i));
        int32_t a = t->merges[2 * i], b = t->merges[2 * i + 1], id = RLVR_TOKENIZER_FIRST_MERGE + i;
        size_t len = (size_t)(a < BYTE_TOKENS ? 1 : t->text_len[a]) + (b < BYTE_TOKENS ? 1 : t->text_len[b]);
        if (len > UINT16_MAX)
            return RLVR_FAIL(RLVR_EFORMAT, "BPE merge %d makes a token of %zu bytes (at most 65535)", (int)i, len);
        t->text_len[id] = (uint16_t)len;
        total += len;
        if (total > UINT32_MAX)
            return RLVR_FAIL(RLVR_EFORMAT, "BPE merges up to %d spell more than 4 GiB of token text", (int)i);
    }
    RLVR_ALLOC(t->text, total);
    for (int32_t id = 0; id < BYTE_TOKENS; id++) t->text[id] = (char)id, t->text_off[id] = (uint32_t)id, t->text_len[id] = 1;
    size_t at = BYTE_TOKENS;
    for (int32_t i = 0; i < t->n_merges; i++) {
        int32_t a = t->merges[2 * i], b = t->merges[2 * i + 1], id = RLVR_TOKENIZER_FIRST_MERGE + i;
        t->text_off[id] = (uint32_t)at;
        memcpy(t->text + at, t->text + t->text_off[a], t->text_len[a]);
        memcpy(t->text + at + t->text_len[a], t->text + t->text_off[b], t->text_len[b]);
        at += t->text_len[id];
    }
    t->pair_cap = 64;
    while (t->pair_cap < 2 * (size_t)t->n_merges) t->pair_cap *= 2;
    RLVR_ALLOC(t->pair_key, t->pair_cap);
    RLVR_ALLOC(t->pair_rank, t->pair_cap);
    for (int32_t i = 0; i < t->n_merges; i++) {
        uint64_t key = pair_key(t->merges[2 * i], t->merges[2 * i + 1]);
        size_t k = pair_index(t, key);
        if (t->pair_key[k]) continue; /* a repeated pair: the first merge wins, the later one never applies */
        t->pair_key[k] = key, t->pair_rank[k] = i;
    }
    return 0;
}

int rlvr_tokenizer_new_bpe(rlvr_tokenizer **out, const int32_t *merges, int32_t n_merges) {
    *out = NULL;
    if (n_merges < 1 || n_merges > (1 << 24))
        return RLVR_FAIL(RLVR_EINVAL, "a BPE tokenizer needs 1 .. %d merges, got %d", 1 << 24, (int)n_merges);
    rlvr_tokenizer *t;
    RLVR_TRY(rlvr_tokenizer_new_byte(&t));
    t->kind = RLVR_TOKENIZER_BPE;
    t->n_merges = n_merges;
    t->vocab_size = RLVR_TOKENIZER_FIRST_MERGE + n_merges;
    int rc = 0;
    t->merges = malloc((size_t)n_merges * 2 * sizeof *t->merges);
    if (!t->merges) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    if (rc == 0) memcpy(t->merges, merges, (size_t)n_merges * 2 * sizeof *merges);
    if (rc == 0) rc = build_bpe_tables(t);
    if (rc < 0) {
        rlvr_tokenizer_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

int rlvr_tokenizer_new_hf_json(rlvr_tokenizer **out, const char *json, size_t len, const char *source) {
    *out = NULL;
    rlvr_tokenizer *t;
    RLVR_ALLOC(t, 1);
    t->kind = RLVR_TOKENIZER_HF;
    t->gen_bos = -1;
    for (int i = 0; i < RLVR_SPECIAL_COUNT; i++) t->special_ids[i] = -1; /* rlvr's fixed specials do not exist */
    int rc = rlvr_hf_new(&t->hf, json, len, source);
    if (rc < 0) {
        free(t);
        return rc;
    }
    t->vocab_size = rlvr_hf_vocab_size(t->hf);
    t->chat = native_chat(t); /* no markers (-1) until rlvr_tokenizer_set_chat names a family */
    *out = t;
    return 0;
}

int rlvr_tokenizer_hf_json(const rlvr_tokenizer *t, const char **json, size_t *len) {
    if (t->kind != RLVR_TOKENIZER_HF)
        return RLVR_FAIL(RLVR_EINVAL, "only a Hugging Face tokenizer has a tokenizer.json (this one is kind %d)",
                         (int)t->kind);
    *json = rlvr_hf_json(t->hf, len);
    return 0;
}

int rlvr_tokenizer_clone(rlvr_tokenizer **out, const rlvr_tokenizer *t) {
    rlvr_tokenizer *c = NULL;
    if (t->kind == RLVR_TOKENIZER_HF) {
        size_t len;
        const char *json = rlvr_hf_json(t->hf, &len);
        RLVR_TRY(rlvr_tokenizer_new_hf_json(&c, json, len, rlvr_hf_source(t->hf)));
    } else {
        RLVR_TRY(t->kind == RLVR_TOKENIZER_BPE ? rlvr_tokenizer_new_bpe(&c, t->merges, t->n_merges)
                                               : rlvr_tokenizer_new_byte(&c));
    }
    int rc = copy_chat(c, t);
    if (rc == 0) rc = rlvr_tokenizer_set_generation(c, t->gen_bos, t->gen_eos, t->n_gen_eos, "a tokenizer copy");
    if (rc != 0) {
        rlvr_tokenizer_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

void rlvr_tokenizer_free(rlvr_tokenizer *t) {
    if (!t) return;
    rlvr_chat_free(&t->chat);
    free(t->chat_template);
    rlvr_hf_free(t->hf);
    free(t->merges), free(t->text_off), free(t->text_len), free(t->text), free(t->pair_key), free(t->pair_rank);
    free(t);
}

const int32_t *rlvr_tokenizer_merges(const rlvr_tokenizer *t, int32_t *n) {
    *n = t->n_merges;
    return t->n_merges ? t->merges : NULL;
}

static bool same_chat(const rlvr_tokenizer *a, const rlvr_tokenizer *b) {
    if (a->chat.family != b->chat.family || a->chat_template_len != b->chat_template_len) return false;
    return a->chat_template_len == 0 || memcmp(a->chat_template, b->chat_template, a->chat_template_len) == 0;
}

static bool same_generation(const rlvr_tokenizer *a, const rlvr_tokenizer *b) {
    return a->gen_bos == b->gen_bos && a->n_gen_eos == b->n_gen_eos &&
           memcmp(a->gen_eos, b->gen_eos, (size_t)a->n_gen_eos * sizeof *a->gen_eos) == 0;
}

bool rlvr_tokenizer_equal(const rlvr_tokenizer *a, const rlvr_tokenizer *b) {
    if (!same_chat(a, b) || !same_generation(a, b)) return false;
    if (a->kind == RLVR_TOKENIZER_HF && b->kind == RLVR_TOKENIZER_HF) {
        size_t la, lb;
        const char *ja = rlvr_hf_json(a->hf, &la), *jb = rlvr_hf_json(b->hf, &lb);
        return la == lb && memcmp(ja, jb, la) == 0;
    }
    return a->kind == b->kind && a->n_merges == b->n_merges &&
           (a->n_merges == 0 || memcmp(a->merges, b->merges, (size_t)a->n_merges * 2 * sizeof *a->merges) == 0);
}

void rlvr_tokenizer_describe(const rlvr_tokenizer *t, char *out, size_t cap) {
    if (t->kind == RLVR_TOKENIZER_HF) {
        int32_t v, m, a;
        rlvr_hf_counts(t->hf, &v, &m, &a);
        snprintf(out, cap, "hf bpe (%d ids, %d merges, %d added)", (int)t->vocab_size, (int)m, (int)a);
    } else if (t->kind == RLVR_TOKENIZER_BPE) snprintf(out, cap, "bpe (%d merges)", (int)t->n_merges);
    else snprintf(out, cap, "byte");
}

rlvr_tokenizer_kind rlvr_tokenizer_kind_of(const rlvr_tokenizer *t) { return t->kind; }

int32_t rlvr_tokenizer_vocab_size(const rlvr_tokenizer *t) { return t->vocab_size; }

int32_t rlvr_tokenizer_special(const rlvr_tokenizer *t, rlvr_special_token which) {
    if ((int)which < 0 || which >= RLVR_SPECIAL_COUNT) return -1;
    return t->special_ids[which];
}

const char *rlvr_special_name(rlvr_special_token which) {
    if ((int)which < 0 || which >= RLVR_SPECIAL_COUNT) return NULL;
    return special_names[which];
}

int rlvr_tokenizer_find_special(const rlvr_tokenizer *t, const char *name, int32_t *id) {
    if (t->kind == RLVR_TOKENIZER_HF) {
        int32_t found = rlvr_hf_find_added(t->hf, name);
        if (found < 0)
            return RLVR_FAIL(RLVR_ENOTFOUND, "%s has no added token \"%s\"", rlvr_hf_source(t->hf), name);
        *id = found;
        return 0;
    }
    for (int i = 0; i < RLVR_SPECIAL_COUNT; i++) {
        if (strcmp(name, special_names[i]) == 0) {
            *id = t->special_ids[i];
            return 0;
        }
    }
    return RLVR_FAIL(RLVR_ENOTFOUND, "no special token named \"%s\" (names look like \"<|eos|>\")", name);
}

/* Index of id in the special table, or -1. */
static int special_index(const rlvr_tokenizer *t, int32_t id) {
    for (int i = 0; i < RLVR_SPECIAL_COUNT; i++)
        if (t->special_ids[i] == id) return i;
    return -1;
}

bool rlvr_tokenizer_is_special(const rlvr_tokenizer *t, int32_t id) {
    return t->kind == RLVR_TOKENIZER_HF ? rlvr_hf_is_special(t->hf, id) : special_index(t, id) >= 0;
}

/* Ids of one piece (at most RLVR_BPE_MAX_PIECE bytes) into ids; returns their count. */
static int32_t encode_piece(const rlvr_tokenizer *t, const unsigned char *p, size_t n, int32_t *ids) {
    int32_t m = (int32_t)n;
    for (int32_t i = 0; i < m; i++) ids[i] = p[i];
    while (m > 1) {
        int32_t best = INT32_MAX;
        for (int32_t i = 0; i + 1 < m; i++) {
            int32_t r = pair_rank(t, ids[i], ids[i + 1]);
            if (r < best) best = r;
        }
        if (best == INT32_MAX) break;
        int32_t left = t->merges[2 * best], right = t->merges[2 * best + 1], out = 0;
        for (int32_t i = 0; i < m; i++) {
            if (i + 1 < m && ids[i] == left && ids[i + 1] == right) ids[out++] = RLVR_TOKENIZER_FIRST_MERGE + best, i++;
            else ids[out++] = ids[i];
        }
        m = out;
    }
    return m;
}

/* The HF kind's encode, with encode()'s counting and cap rules. */
static int encode_hf(const rlvr_tokenizer *t, const char *text, size_t len, bool specials, int32_t *out, int32_t cap,
                     int32_t *n_out) {
    bool counting = !out && cap == 0;
    int64_t n = 0;
    RLVR_TRY(rlvr_hf_encode(t->hf, text, len, specials, counting ? NULL : out, counting ? 0 : cap, &n));
    if (n > INT32_MAX) return RLVR_FAIL(RLVR_ELIMIT, "text of %zu bytes encodes to more than 2^31 ids", len);
    *n_out = (int32_t)n;
    if (!counting && n > cap)
        return RLVR_FAIL(RLVR_ELIMIT, "encoding needs %d ids, the buffer holds %d", (int)n, (int)cap);
    return 0;
}

int rlvr_tokenizer_encode(const rlvr_tokenizer *t, const char *text, size_t len, int32_t *out, int32_t cap,
                          int32_t *n_out) {
    if (len > (size_t)INT32_MAX) return RLVR_FAIL(RLVR_EINVAL, "text of %zu bytes is too long to encode", len);
    bool counting = !out && cap == 0;
    int32_t n = 0;
    if (t->kind == RLVR_TOKENIZER_HF) return encode_hf(t, text, len, false, out, cap, n_out);
    if (t->kind == RLVR_TOKENIZER_BYTE) {
        n = (int32_t)len;
        for (size_t i = 0; !counting && i < len && i < (size_t)cap; i++) out[i] = (int32_t)(unsigned char)text[i];
    } else {
        int32_t ids[RLVR_BPE_MAX_PIECE];
        for (size_t at = 0; at < len;) {
            size_t end = rlvr_bpe_piece_end(text, len, at);
            int32_t k = encode_piece(t, (const unsigned char *)text + at, end - at, ids);
            for (int32_t i = 0; !counting && i < k && n + i < cap; i++) out[n + i] = ids[i];
            n += k;
            at = end;
        }
    }
    *n_out = n;
    if (!counting && n > cap)
        return RLVR_FAIL(RLVR_ELIMIT, "encoding needs %d ids, the buffer holds %d", (int)n, (int)cap);
    return 0;
}

/* The special whose printed name starts text[at..len), longest first; -1 when none. */
static int special_at(const char *text, size_t len, size_t at) {
    int best = -1;
    size_t best_len = 0;
    for (int i = 0; i < RLVR_SPECIAL_COUNT; i++) {
        size_t k = strlen(special_names[i]);
        if (k > best_len && k <= len - at && memcmp(text + at, special_names[i], k) == 0) best = i, best_len = k;
    }
    return best;
}

int rlvr_tokenizer_encode_specials(const rlvr_tokenizer *t, const char *text, size_t len, int32_t *out, int32_t cap,
                                   int32_t *n_out) {
    if (len > (size_t)INT32_MAX) return RLVR_FAIL(RLVR_EINVAL, "text of %zu bytes is too long to encode", len);
    if (t->kind == RLVR_TOKENIZER_HF) return encode_hf(t, text, len, true, out, cap, n_out);
    /* the text between printed names goes through encode(), the names become their ids */
    bool counting = !out && cap == 0;
    int64_t n = 0;
    size_t start = 0;
    for (size_t at = 0; at <= len; at++) {
        int s = at < len ? special_at(text, len, at) : -1;
        if (s < 0 && at < len) continue;
        int32_t k = 0;
        RLVR_TRY(rlvr_tokenizer_encode(t, text + start, at - start, NULL, 0, &k));
        if (!counting && n + k <= cap) RLVR_TRY(rlvr_tokenizer_encode(t, text + start, at - start, out + n, k, &k));
        n += k;
        if (s < 0) break;
        if (!counting && n < cap) out[n] = t->special_ids[s];
        n++;
        at += strlen(special_names[s]) - 1;
        start = at + 1;
    }
    if (n > INT32_MAX) return RLVR_FAIL(RLVR_ELIMIT, "text of %zu bytes encodes to more than 2^31 ids", len);
    *n_out = (int32_t)n;
    if (!counting && n > cap)
        return RLVR_FAIL(RLVR_ELIMIT, "encoding needs %d ids, the buffer holds %d", (int)n, (int)cap);
    return 0;
}

const char *rlvr_tokenizer_token_bytes(const rlvr_tokenizer *t, int32_t id, size_t *len) {
    static const char bytes[BYTE_TOKENS] = {
#define B4(i) (char)(i), (char)((i) + 1), (char)((i) + 2), (char)((i) + 3)
#define B16(i) B4(i), B4((i) + 4), B4((i) + 8), B4((i) + 12)
#define B64(i) B16(i), B16((i) + 16), B16((i) + 32), B16((i) + 48)
        B64(0), B64(64), B64(128), B64(192)
#undef B64
#undef B16
#undef B4
    };
    *len = 0;
    if (t->kind == RLVR_TOKENIZER_HF) return rlvr_hf_is_special(t->hf, id) ? NULL : rlvr_hf_token_text(t->hf, id, len);
    if (id < 0 || id >= t->vocab_size || special_index(t, id) >= 0) return NULL;
    if (id < BYTE_TOKENS) {
        *len = 1;
        return &bytes[id];
    }
    *len = t->text_len[id];
    return t->text + t->text_off[id];
}

/* The bytes one id decodes to; NULL/0 for a skipped special. */
static const char *piece_of(const rlvr_tokenizer *t, int32_t id, bool specials, size_t *n) {
    if (t->kind == RLVR_TOKENIZER_HF) {
        if (rlvr_hf_is_special(t->hf, id) && !specials) {
            *n = 0;
            return NULL;
        }
        return rlvr_hf_token_text(t->hf, id, n);
    }
    int s = special_index(t, id);
    if (s < 0) return rlvr_tokenizer_token_bytes(t, id, n);
    if (!specials) {
        *n = 0;
        return NULL;
    }
    *n = strlen(special_names[s]);
    return special_names[s];
}

int rlvr_tokenizer_decode(const rlvr_tokenizer *t, const int32_t *ids, int32_t n, bool specials, char *out,
                          size_t cap, size_t *len_out) {
    size_t len = 0, written = 0;
    bool counting = !out && cap == 0;
    for (int32_t i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= t->vocab_size)
            return RLVR_FAIL(RLVR_EINVAL, "token %d at index %d is outside the vocabulary [0, %d)", (int)ids[i],
                             (int)i, (int)t->vocab_size);
        size_t k;
        const char *piece = piece_of(t, ids[i], specials, &k);
        if (!piece && t->kind == RLVR_TOKENIZER_HF && (specials || !rlvr_hf_is_special(t->hf, ids[i])))
            return RLVR_FAIL(RLVR_EINVAL, "token %d at index %d names no token of %s", (int)ids[i], (int)i,
                             rlvr_hf_source(t->hf));
        if (k > 0 && !counting && len + k < cap && len == written) {
            memcpy(out + len, piece, k); /* stop writing at the first piece that does not fit */
            written += k;
        }
        len += k;
    }
    *len_out = len;
    if (counting) return 0;
    if (len + 1 > cap) {
        if (cap > 0) out[written] = '\0';
        return RLVR_FAIL(RLVR_ELIMIT, "decoded text needs %zu bytes, the buffer holds %zu", len + 1, cap);
    }
    out[len] = '\0';
    return 0;
}

int rlvr_tokenizer_check_model(const rlvr_tokenizer *t, const rlvr_model_config *cfg) {
    if (t->kind == RLVR_TOKENIZER_HF && cfg->vocab < t->vocab_size)
        return RLVR_FAIL(RLVR_EINVAL, "[model] vocab = %d is smaller than the %d ids of %s; set vocab >= %d",
                         cfg->vocab, (int)t->vocab_size, rlvr_hf_source(t->hf), (int)t->vocab_size);
    if (cfg->vocab < t->vocab_size)
        return RLVR_FAIL(RLVR_EINVAL,
                         "[model] vocab = %d is smaller than the tokenizer's %d ids (256 bytes + %d special "
                         "tokens + %d merges); set vocab >= %d",
                         cfg->vocab, (int)t->vocab_size, RLVR_SPECIAL_COUNT, (int)t->n_merges, (int)t->vocab_size);
    return 0;
}

/* ---- chat format --------------------------------------------------------------- */

static int lookup_token(const void *tokenizer, const char *name, int32_t *id) {
    return rlvr_tokenizer_find_special(tokenizer, name, id);
}

int rlvr_tokenizer_set_chat(rlvr_tokenizer *t, const char *family, const char *jinja, size_t len,
                            const char *source) {
    rlvr_chat_family f;
    if (family) RLVR_TRY(rlvr_chat_family_parse(family, &f));
    else if (jinja) RLVR_TRY(rlvr_chat_recognise(jinja, len, source, &f));
    else return RLVR_FAIL(RLVR_EINVAL, "%s: no chat template and no [template] family to render turns with", source);
    char *text = NULL;
    if (jinja) {
        text = malloc(len + 1);
        if (!text) return RLVR_FAIL(RLVR_ENOMEM, "out of memory keeping a chat template");
        memcpy(text, jinja, len);
        text[len] = '\0';
    }
    rlvr_chat chat;
    int rc = 0;
    if (f == RLVR_CHAT_NATIVE) {
        chat = native_chat(t);
    } else {
        rc = rlvr_chat_resolve(&chat, f, jinja, len, lookup_token, t, source);
    }
    if (rc != 0) {
        free(text);
        return rc;
    }
    rlvr_chat_free(&t->chat);
    free(t->chat_template);
    t->chat = chat;
    t->chat_template = text;
    t->chat_template_len = text ? len : 0;
    return 0;
}

static int copy_chat(rlvr_tokenizer *to, const rlvr_tokenizer *from) {
    if (from->chat.family == RLVR_CHAT_NATIVE && !from->chat_template) return 0;
    return rlvr_tokenizer_set_chat(to, rlvr_chat_family_name(from->chat.family), from->chat_template,
                                   from->chat_template_len, "the tokenizer's chat template");
}

const rlvr_chat *rlvr_tokenizer_chat(const rlvr_tokenizer *t) { return &t->chat; }

const char *rlvr_tokenizer_chat_template(const rlvr_tokenizer *t, size_t *len) {
    *len = t->chat_template_len;
    return t->chat_template;
}

/* ---- the model's declared generation tokens ---- */

int rlvr_tokenizer_set_generation(rlvr_tokenizer *t, int32_t bos, const int32_t *eos, int n_eos, const char *source) {
    if (n_eos < 0 || n_eos > RLVR_TOKENIZER_MAX_EOS)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: %d end-of-sequence ids; rlvr keeps at most %d", source, n_eos,
                         RLVR_TOKENIZER_MAX_EOS);
    if (bos < -1 || bos >= t->vocab_size)
        return RLVR_FAIL(RLVR_EFORMAT, "%s: bos_token_id %d is outside the tokenizer's %d ids", source, (int)bos,
                         (int)t->vocab_size);
    int32_t kept[RLVR_TOKENIZER_MAX_EOS];
    int n = 0;
    for (int i = 0; i < n_eos; i++) {
        if (eos[i] < 0 || eos[i] >= t->vocab_size)
            return RLVR_FAIL(RLVR_EFORMAT, "%s: eos_token_id %d is outside the tokenizer's %d ids", source,
                             (int)eos[i], (int)t->vocab_size);
        bool seen = false;
        for (int j = 0; j < n; j++) seen |= kept[j] == eos[i];
        if (!seen) kept[n++] = eos[i];
    }
    t->gen_bos = bos;
    memcpy(t->gen_eos, kept, (size_t)n * sizeof *kept);
    t->n_gen_eos = n;
    return 0;
}

int32_t rlvr_tokenizer_generation_bos(const rlvr_tokenizer *t) { return t->gen_bos; }

const int32_t *rlvr_tokenizer_generation_eos(const rlvr_tokenizer *t, int *n) {
    *n = t->n_gen_eos;
    return t->gen_eos;
}

bool rlvr_tokenizer_ends_episode(const rlvr_tokenizer *t, int32_t id) {
    if (id < 0) return false;
    if (id == t->chat.episode_end) return true;
    if (id == t->chat.turn_end) return false;
    for (int i = 0; i < t->n_gen_eos; i++)
        if (t->gen_eos[i] == id) return true;
    return false;
}
