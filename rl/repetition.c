#include "rl/repetition.h"

#include "core/error.h"

#include <stdlib.h>
#include <string.h>

#define MERSENNE61 ((1ULL << 61) - 1)
#define HASH_BASE 0x0F3A5C7B9D2E4F61ULL /* < 2^61 − 1 */

typedef struct {
    uint64_t key; /* n-gram hash + 1; 0 = empty slot */
    int32_t count;
} slot;

struct rlvr_repetition {
    rlvr_repetition_config cfg;
    uint64_t base_pow;   /* B^(n−1) mod P */
    uint64_t *tokens;    /* (n) ring of the last n token values */
    uint64_t *window;    /* (W) ring of the keys of the last W n-grams */
    slot *table;         /* (mask + 1) counts of the keys in the window */
    uint64_t mask;
    uint64_t hash;       /* hash of the last min(seen, n) tokens */
    int64_t seen;        /* tokens pushed */
    int32_t last_count;
    bool stopped;
};

static uint64_t mulmod(uint64_t a, uint64_t b) {
    __uint128_t p = (__uint128_t)a * b;
    uint64_t lo = (uint64_t)(p & MERSENNE61), hi = (uint64_t)(p >> 61);
    uint64_t s = lo + hi;
    return s >= MERSENNE61 ? s - MERSENNE61 : s;
}

static uint64_t addmod(uint64_t a, uint64_t b) {
    uint64_t s = a + b;
    return s >= MERSENNE61 ? s - MERSENNE61 : s;
}

static uint64_t slot_of(const rlvr_repetition *r, uint64_t key) {
    /* splitmix64 finaliser spreads the polynomial hash over the table */
    uint64_t z = key + 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return (z ^ (z >> 31)) & r->mask;
}

static int32_t table_add(rlvr_repetition *r, uint64_t key) {
    uint64_t i = slot_of(r, key);
    while (r->table[i].key && r->table[i].key != key) i = (i + 1) & r->mask;
    r->table[i].key = key;
    return ++r->table[i].count;
}

static void table_remove(rlvr_repetition *r, uint64_t key) {
    uint64_t i = slot_of(r, key);
    while (r->table[i].key != key) i = (i + 1) & r->mask; /* present by construction */
    if (--r->table[i].count > 0) return;
    /* backward-shift deletion keeps every probe chain unbroken */
    uint64_t hole = i;
    for (uint64_t j = (i + 1) & r->mask; r->table[j].key; j = (j + 1) & r->mask) {
        uint64_t home = slot_of(r, r->table[j].key);
        /* move j into the hole when its home is not in (hole, j] cyclically */
        bool between = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!between) {
            r->table[hole] = r->table[j];
            hole = j;
        }
    }
    r->table[hole] = (slot){0, 0};
}

static int refuse(const char **bad_key, const char *key) {
    if (bad_key) *bad_key = key;
    return RLVR_EINVAL;
}

int rlvr_rl_repetition_config_check(const rlvr_repetition_config *c, const char **bad_key) {
    if (bad_key) *bad_key = NULL;
    if (!c) return RLVR_FAIL(RLVR_EINVAL, "repetition config is NULL");
    if (c->ngram < 1) {
        rlvr_error_set(RLVR_EINVAL, "ngram = %d must be >= 1", c->ngram);
        return refuse(bad_key, "ngram");
    }
    if (c->window < c->ngram || c->window > (1 << 24)) {
        rlvr_error_set(RLVR_EINVAL, "window = %d must be in [ngram = %d, 16777216]", c->window, c->ngram);
        return refuse(bad_key, "window");
    }
    if (c->max_repeats < 1) {
        rlvr_error_set(RLVR_EINVAL, "max_repeats = %d must be >= 1", c->max_repeats);
        return refuse(bad_key, "max_repeats");
    }
    return 0;
}

int rlvr_rl_repetition_new(rlvr_repetition **out, const rlvr_repetition_config *cfg) {
    if (!out) return RLVR_FAIL(RLVR_EINVAL, "repetition: out is NULL");
    *out = NULL;
    RLVR_TRY(rlvr_rl_repetition_config_check(cfg, NULL));
    rlvr_repetition *r = calloc(1, sizeof *r);
    if (!r) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    r->cfg = *cfg;
    uint64_t cap = 16;
    while (cap < 2 * (uint64_t)cfg->window) cap *= 2;
    r->mask = cap - 1;
    r->tokens = calloc((size_t)cfg->ngram, sizeof *r->tokens);
    r->window = calloc((size_t)cfg->window, sizeof *r->window);
    r->table = calloc((size_t)cap, sizeof *r->table);
    if (!r->tokens || !r->window || !r->table) {
        rlvr_rl_repetition_free(r);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory for a repetition window of %d", cfg->window);
    }
    r->base_pow = 1;
    for (int32_t i = 1; i < cfg->ngram; i++) r->base_pow = mulmod(r->base_pow, HASH_BASE);
    *out = r;
    return 0;
}

void rlvr_rl_repetition_free(rlvr_repetition *r) {
    if (!r) return;
    free(r->tokens);
    free(r->window);
    free(r->table);
    free(r);
}

void rlvr_rl_repetition_reset(rlvr_repetition *r) {
    /* clear only what the window holds: O(window), not O(table) per rollout */
    int64_t ngrams = r->seen - r->cfg.ngram + 1;
    int64_t live = ngrams < r->cfg.window ? ngrams : r->cfg.window;
    for (int64_t m = ngrams - live; m < ngrams && live > 0; m++)
        table_remove(r, r->window[m % r->cfg.window]);
    r->hash = 0;
    r->seen = 0;
    r->last_count = 0;
    r->stopped = false;
}

bool rlvr_rl_repetition_push(rlvr_repetition *r, int32_t token) {
    if (!r->cfg.enabled) return false;
    const int32_t n = r->cfg.ngram, W = r->cfg.window;
    uint64_t v = (uint64_t)(uint32_t)token + 1;
    int64_t pos = r->seen % n;
    if (r->seen >= n) /* drop the token leaving the n-gram */
        r->hash = addmod(r->hash, MERSENNE61 - mulmod(r->tokens[pos], r->base_pow));
    r->hash = addmod(mulmod(r->hash, HASH_BASE), v);
    r->tokens[pos] = v;
    r->seen++;
    if (r->seen < n) return r->stopped;

    int64_t m = r->seen - n; /* index of this n-gram */
    uint64_t key = r->hash + 1;
    if (m >= W) table_remove(r, r->window[m % W]);
    r->window[m % W] = key;
    r->last_count = table_add(r, key);
    if (r->last_count > r->cfg.max_repeats) r->stopped = true;
    return r->stopped;
}

int32_t rlvr_rl_repetition_last_count(const rlvr_repetition *r) { return r->last_count; }
