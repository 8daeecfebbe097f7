#include "policy/tokenizer.h"

#include "core/error.h"

#include <stdlib.h>
#include <string.h>

#define BYTE_TOKENS 256

struct rlvr_tokenizer {
    rlvr_tokenizer_kind kind;
    int32_t vocab_size;
    int32_t special_ids[RLVR_SPECIAL_COUNT]; /* id of each special token */
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

int rlvr_tokenizer_new_byte(rlvr_tokenizer **out) {
    *out = NULL;
    rlvr_tokenizer *t;
    RLVR_ALLOC(t, 1);
    t->kind = RLVR_TOKENIZER_BYTE;
    /* specials follow the bytes in enum order */
    for (int i = 0; i < RLVR_SPECIAL_COUNT; i++) t->special_ids[i] = BYTE_TOKENS + i;
    t->vocab_size = BYTE_TOKENS + RLVR_SPECIAL_COUNT;
    *out = t;
    return 0;
}

void rlvr_tokenizer_free(rlvr_tokenizer *t) { free(t); }

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

bool rlvr_tokenizer_is_special(const rlvr_tokenizer *t, int32_t id) { return special_index(t, id) >= 0; }

int rlvr_tokenizer_encode(const rlvr_tokenizer *t, const char *text, size_t len, int32_t *out, int32_t cap,
                          int32_t *n_out) {
    (void)t; /* one kind today: every byte is its own token */
    if (len > (size_t)INT32_MAX) return RLVR_FAIL(RLVR_EINVAL, "text of %zu bytes is too long to encode", len);
    *n_out = (int32_t)len;
    if (!out && cap == 0) return 0;
    if ((int32_t)len > cap)
        return RLVR_FAIL(RLVR_ELIMIT, "encoding needs %zu ids, the buffer holds %d", len, (int)cap);
    for (size_t i = 0; i < len; i++) out[i] = (int32_t)(unsigned char)text[i];
    return 0;
}

/* The bytes one id decodes to; NULL/0 for a skipped special. */
static const char *piece_of(const rlvr_tokenizer *t, int32_t id, bool specials, char *byte, size_t *n) {
    if (id >= 0 && id < BYTE_TOKENS) {
        *byte = (char)(unsigned char)id;
        *n = 1;
        return byte;
    }
    int s = special_index(t, id);
    if (s < 0 || !specials) {
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
        char byte;
        size_t k;
        const char *piece = piece_of(t, ids[i], specials, &byte, &k);
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
    if (cfg->vocab < t->vocab_size)
        return RLVR_FAIL(RLVR_EINVAL,
                         "[model] vocab = %d is smaller than the tokenizer's %d ids (256 bytes + %d special "
                         "tokens); set vocab >= %d",
                         cfg->vocab, (int)t->vocab_size, RLVR_SPECIAL_COUNT, (int)t->vocab_size);
    return 0;
}
