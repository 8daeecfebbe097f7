/* policy/bpe.c — pieces and merge learning for the BPE tokenizer (policy/bpe.h). */
#include "policy/bpe.h"
#include "core/hash.h"

#include "core/error.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* ---- pieces ----------------------------------------------------------------------------- */

enum { C_LETTER, C_DIGIT, C_BLANK, C_NEWLINE, C_BACKSLASH, C_PUNCT };

static int byte_class(unsigned char c) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80) return C_LETTER;
    if (c >= '0' && c <= '9') return C_DIGIT;
    if (c == ' ' || c == '\t') return C_BLANK;
    if (c == '\n' || c == '\r') return C_NEWLINE;
    if (c == '\\') return C_BACKSLASH;
    return C_PUNCT;
}

/* A letter, digit or punctuation byte: what a single leading space joins. */
static bool joins_space(int cls) { return cls == C_LETTER || cls == C_DIGIT || cls == C_PUNCT; }

static size_t run_end(const unsigned char *s, size_t len, size_t i, int cls) {
    while (i < len && byte_class(s[i]) == cls) i++;
    return i;
}

/* End of the piece body starting at s[i] (no leading-space rule). */
static size_t body_end(const unsigned char *s, size_t len, size_t i) {
    int cls = byte_class(s[i]);
    switch (cls) {
    case C_DIGIT: return i + 1;
    case C_BACKSLASH: return i + 2 <= len ? i + 2 : len;
    case C_BLANK: {
        size_t j = run_end(s, len, i, cls);
        /* the last space before a word starts the word's piece */
        if (j < len && j - 1 > i && s[j - 1] == ' ' && joins_space(byte_class(s[j]))) return j - 1;
        return j;
    }
    default: return run_end(s, len, i, cls);
    }
}

size_t rlvr_bpe_piece_end(const char *text, size_t len, size_t at) {
    const unsigned char *s = (const unsigned char *)text;
    size_t end;
    if (s[at] == ' ' && at + 1 < len && joins_space(byte_class(s[at + 1]))) end = body_end(s, len, at + 1);
    else end = body_end(s, len, at);
    return end - at > RLVR_BPE_MAX_PIECE ? at + RLVR_BPE_MAX_PIECE : end;
}

/* ---- counting pieces -------------------------------------------------------------------- */

typedef struct {
    uint64_t hash; /* 0: empty slot */
    uint32_t off, len;
    int64_t count;
} piece_entry;

struct rlvr_bpe_trainer {
    piece_entry *slots; /* open addressing, power-of-two size */
    size_t cap, used;
    char *bytes; /* the distinct pieces, back to back */
    size_t n_bytes, cap_bytes;
    int64_t pieces, total_bytes;
};

static uint64_t piece_hash(const char *p, size_t n) {
    uint64_t h = rlvr_fnv1a64(p, n);
    return h ? h : 1;
}

int rlvr_bpe_trainer_new(rlvr_bpe_trainer **out) {
    *out = NULL;
    rlvr_bpe_trainer *t = calloc(1, sizeof *t);
    if (!t) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    t->cap = 1024;
    t->slots = calloc(t->cap, sizeof *t->slots);
    if (!t->slots) {
        free(t);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    }
    *out = t;
    return 0;
}

void rlvr_bpe_trainer_free(rlvr_bpe_trainer *t) {
    if (!t) return;
    free(t->slots);
    free(t->bytes);
    free(t);
}

void rlvr_bpe_trainer_counts(const rlvr_bpe_trainer *t, int64_t *pieces, int64_t *bytes) {
    *pieces = t->pieces;
    *bytes = t->total_bytes;
}

static piece_entry *find_slot(piece_entry *slots, size_t cap, const char *arena, uint64_t h, const char *p,
                              size_t n) {
    for (size_t i = h & (cap - 1);; i = (i + 1) & (cap - 1)) {
        piece_entry *e = &slots[i];
        if (e->hash == 0 || (e->hash == h && e->len == n && memcmp(arena + e->off, p, n) == 0)) return e;
    }
}

static piece_entry *empty_slot(piece_entry *slots, size_t cap, uint64_t h) {
    size_t i = h & (cap - 1);
    while (slots[i].hash) i = (i + 1) & (cap - 1);
    return &slots[i];
}

static int grow_slots(rlvr_bpe_trainer *t) {
    size_t cap = t->cap * 2;
    piece_entry *slots = calloc(cap, sizeof *slots);
    if (!slots) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    for (size_t i = 0; i < t->cap; i++)
        if (t->slots[i].hash) *empty_slot(slots, cap, t->slots[i].hash) = t->slots[i];
    free(t->slots);
    t->slots = slots, t->cap = cap;
    return 0;
}

static int count_piece(rlvr_bpe_trainer *t, const char *p, size_t n) {
    if (2 * (t->used + 1) > t->cap) RLVR_TRY(grow_slots(t));
    uint64_t h = piece_hash(p, n);
    piece_entry *e = find_slot(t->slots, t->cap, t->bytes, h, p, n);
    if (e->hash == 0) {
        if (t->n_bytes + n > t->cap_bytes) {
            size_t cap = t->cap_bytes ? 2 * t->cap_bytes : 65536;
            while (cap < t->n_bytes + n) cap *= 2;
            char *b = realloc(t->bytes, cap);
            if (!b) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
            t->bytes = b, t->cap_bytes = cap;
        }
        memcpy(t->bytes + t->n_bytes, p, n);
        *e = (piece_entry){h, (uint32_t)t->n_bytes, (uint32_t)n, 0};
        t->n_bytes += n;
        t->used++;
    }
    e->count++;
    return 0;
}

int rlvr_bpe_trainer_add(rlvr_bpe_trainer *t, const char *text, size_t len) {
    for (size_t at = 0; at < len;) {
        size_t end = rlvr_bpe_piece_end(text, len, at);
        RLVR_TRY(count_piece(t, text + at, end - at));
        t->pieces++;
        at = end;
    }
    t->total_bytes += (int64_t)len;
    return 0;
}

/* ---- learning merges -------------------------------------------------------------------- */

/* Every distinct piece as ids, shrinking as merges apply. */
typedef struct {
    int32_t *ids;   /* words back to back */
    size_t *start;  /* (n + 1) */
    uint32_t *len;  /* (n) current length of each */
    int64_t *count; /* (n) */
    size_t n;
} word_set;

typedef struct {
    uint64_t key; /* (left << 32 | right) + 1; 0: empty */
    int64_t count;
} pair_entry;

static void word_set_free(word_set *w) { free(w->ids), free(w->start), free(w->len), free(w->count); }

static int word_set_build(word_set *w, const rlvr_bpe_trainer *t) {
    memset(w, 0, sizeof *w);
    w->n = t->used;
    w->ids = malloc((t->n_bytes ? t->n_bytes : 1) * sizeof *w->ids);
    w->start = malloc((w->n + 1) * sizeof *w->start);
    w->len = malloc((w->n ? w->n : 1) * sizeof *w->len);
    w->count = malloc((w->n ? w->n : 1) * sizeof *w->count);
    if (!w->ids || !w->start || !w->len || !w->count) {
        word_set_free(w);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    }
    size_t k = 0, at = 0;
    for (size_t i = 0; i < t->cap; i++) {
        const piece_entry *e = &t->slots[i];
        if (!e->hash) continue;
        w->start[k] = at, w->len[k] = e->len, w->count[k] = e->count;
        for (uint32_t j = 0; j < e->len; j++) w->ids[at++] = (unsigned char)t->bytes[e->off + j];
        k++;
    }
    w->start[k] = at;
    return 0;
}

static pair_entry *pair_slot(pair_entry *slots, size_t cap, uint64_t key) {
    uint64_t h = key * 0x9E3779B97F4A7C15ull;
    for (size_t i = (size_t)(h >> 20) & (cap - 1);; i = (i + 1) & (cap - 1))
        if (slots[i].key == 0 || slots[i].key == key) return &slots[i];
}

/* The most frequent adjacent pair; false when none occurs min_count times. */
static bool best_pair(const word_set *w, pair_entry *slots, size_t cap, int64_t min_count, int32_t *left,
                      int32_t *right) {
    memset(slots, 0, cap * sizeof *slots);
    for (size_t i = 0; i < w->n; i++) {
        const int32_t *p = w->ids + w->start[i];
        for (uint32_t j = 0; j + 1 < w->len[i]; j++) {
            uint64_t key = ((uint64_t)(uint32_t)p[j] << 32 | (uint32_t)p[j + 1]) + 1;
            pair_entry *e = pair_slot(slots, cap, key);
            e->key = key;
            e->count += w->count[i];
        }
    }
    uint64_t best = 0;
    int64_t best_count = min_count - 1;
    for (size_t i = 0; i < cap; i++) /* ties: the smaller key, i.e. left id, then right id */
        if (slots[i].key && (slots[i].count > best_count || (slots[i].count == best_count && slots[i].key < best)))
            best = slots[i].key, best_count = slots[i].count;
    if (!best || best_count < min_count) return false;
    *left = (int32_t)((best - 1) >> 32), *right = (int32_t)(uint32_t)(best - 1);
    return true;
}

static void apply_merge(word_set *w, int32_t left, int32_t right, int32_t id) {
    for (size_t i = 0; i < w->n; i++) {
        int32_t *p = w->ids + w->start[i];
        uint32_t out = 0;
        for (uint32_t j = 0; j < w->len[i]; j++) {
            if (j + 1 < w->len[i] && p[j] == left && p[j + 1] == right) p[out++] = id, j++;
            else p[out++] = p[j];
        }
        w->len[i] = out;
    }
}

int rlvr_bpe_learn(rlvr_bpe_trainer *t, int32_t first_id, int32_t max_merges, int64_t min_count, int32_t **merges,
                   int32_t *n_merges) {
    *merges = NULL, *n_merges = 0;
    if (min_count < 1) min_count = 1;
    word_set w;
    RLVR_TRY(word_set_build(&w, t));
    size_t symbols = w.start[w.n], cap = 1024;
    while (cap < 2 * symbols) cap *= 2; /* every pair fits with room to spare */
    pair_entry *slots = calloc(cap, sizeof *slots);
    int32_t *m = malloc((size_t)(max_merges > 0 ? max_merges : 1) * 2 * sizeof *m);
    if (!slots || !m) {
        free(slots), free(m), word_set_free(&w);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    }
    int32_t n = 0, left, right;
    while (n < max_merges && best_pair(&w, slots, cap, min_count, &left, &right)) {
        m[2 * n] = left, m[2 * n + 1] = right;
        apply_merge(&w, left, right, first_id + n);
        n++;
    }
    free(slots);
    word_set_free(&w);
    *merges = m, *n_merges = n;
    return 0;
}
