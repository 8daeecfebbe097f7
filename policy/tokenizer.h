/* policy/tokenizer.h — text <-> token ids, plus the special tokens of the
 * chat/tool template.
 *
 * Two kinds share one id layout: ids 0..255 are the bytes themselves and
 * the special tokens follow (256 .. 256 + RLVR_SPECIAL_COUNT − 1).
 *   RLVR_TOKENIZER_BYTE  nothing more: one id per byte.
 *   RLVR_TOKENIZER_BPE   byte-pair merges after them: merge i joins two
 *                        earlier non-special ids into id
 *                        RLVR_TOKENIZER_FIRST_MERGE + i. Text is cut into
 *                        pieces first (policy/bpe.h), and within a piece the
 *                        lowest-numbered applicable merge is applied to
 *                        every occurrence, again and again (GPT-2's rule).
 * Callers only use this header (encode, decode, special-id lookup,
 * vocabulary size), so they work with either.
 *
 * Special tokens never come out of encode(): text that happens to spell
 * "<|end_of_turn|>" encodes to its bytes. A tool's output therefore cannot
 * inject role markers or end a turn; only the template (policy/template.h)
 * inserts specials, and only the sampler can emit them for the policy. */
#ifndef RLVR_POLICY_TOKENIZER_H
#define RLVR_POLICY_TOKENIZER_H

#include "policy/chat.h"
#include "policy/model.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    RLVR_TOKENIZER_BYTE = 0, /* 256 byte tokens + specials */
    RLVR_TOKENIZER_BPE = 1,  /* ... + byte-pair merges */
} rlvr_tokenizer_kind;

/* The special tokens. Stable order; their ids come from the tokenizer. */
typedef enum {
    RLVR_SPECIAL_BOS = 0,          /* <|bos|>            start of a conversation */
    RLVR_SPECIAL_EOS,              /* <|eos|>            the policy ends the episode */
    RLVR_SPECIAL_END_OF_TURN,      /* <|end_of_turn|>    closes every turn */
    RLVR_SPECIAL_SYSTEM,           /* <|system|>         role markers open a turn */
    RLVR_SPECIAL_USER,             /* <|user|> */
    RLVR_SPECIAL_ASSISTANT,        /* <|assistant|> */
    RLVR_SPECIAL_TOOL,             /* <|tool|> */
    RLVR_SPECIAL_TOOL_CALL_OPEN,   /* <|tool_call|>      the policy opens a tool call */
    RLVR_SPECIAL_TOOL_CALL_CLOSE,  /* <|/tool_call|> */
    RLVR_SPECIAL_OBSERVATION_OPEN, /* <|observation|>    the harness wraps tool output */
    RLVR_SPECIAL_OBSERVATION_CLOSE,/* <|/observation|> */
    RLVR_SPECIAL_COUNT
} rlvr_special_token;

typedef struct rlvr_tokenizer rlvr_tokenizer;

/* Id of the first merged token: after the bytes and the specials. */
#define RLVR_TOKENIZER_FIRST_MERGE (256 + RLVR_SPECIAL_COUNT)

/* The byte-level tokenizer (vocabulary 256 + RLVR_SPECIAL_COUNT). */
int rlvr_tokenizer_new_byte(rlvr_tokenizer **out);
/* A BPE tokenizer from n_merges merges (2 · n_merges ids: left, right of
 * each, in order). RLVR_EFORMAT naming the merge when one joins a special
 * id or an id not defined before it, or yields more than 65535 bytes;
 * RLVR_ENOMEM. n_merges = 0 is refused (use the byte tokenizer). */
int rlvr_tokenizer_new_bpe(rlvr_tokenizer **out, const int32_t *merges, int32_t n_merges);
/* A copy (same kind and merges). */
int rlvr_tokenizer_clone(rlvr_tokenizer **out, const rlvr_tokenizer *t);
void rlvr_tokenizer_free(rlvr_tokenizer *t);

/* The merges of a BPE tokenizer (2 · *n ids), NULL and 0 for the byte one. */
const int32_t *rlvr_tokenizer_merges(const rlvr_tokenizer *t, int32_t *n);
/* Same kind and same merges. */
bool rlvr_tokenizer_equal(const rlvr_tokenizer *a, const rlvr_tokenizer *b);
/* "byte", or "bpe (N merges)" for messages. */
void rlvr_tokenizer_describe(const rlvr_tokenizer *t, char *out, size_t cap);
/* The bytes of one non-special id (its text), NULL for a special or an id
 * outside the vocabulary; *len gets their count. */
const char *rlvr_tokenizer_token_bytes(const rlvr_tokenizer *t, int32_t id, size_t *len);

rlvr_tokenizer_kind rlvr_tokenizer_kind_of(const rlvr_tokenizer *t);
/* Number of ids: every id is in [0, vocab_size). */
int32_t rlvr_tokenizer_vocab_size(const rlvr_tokenizer *t);

/* Id of a special token (which must be < RLVR_SPECIAL_COUNT). */
int32_t rlvr_tokenizer_special(const rlvr_tokenizer *t, rlvr_special_token which);
/* Printed name of a special token, "<|eos|>"; NULL when out of range. */
const char *rlvr_special_name(rlvr_special_token which);
/* Finds a special token by its printed name: RLVR_ENOTFOUND when none. */
int rlvr_tokenizer_find_special(const rlvr_tokenizer *t, const char *name, int32_t *id);
/* True when id is one of the special tokens. */
bool rlvr_tokenizer_is_special(const rlvr_tokenizer *t, int32_t id);

/* Encodes len bytes of text (any bytes, NUL included) into ids.
 * *n_out receives the number of ids the text encodes to. With out == NULL
 * and cap == 0 only counts; otherwise RLVR_ELIMIT when cap is too small
 * (nothing beyond cap is written). Never produces special ids. */
int rlvr_tokenizer_encode(const rlvr_tokenizer *t, const char *text, size_t len, int32_t *out, int32_t cap,
                          int32_t *n_out);

/* Decodes ids to bytes. Special tokens are written as their names when
 * `specials` is true and skipped otherwise. *len_out receives the byte count
 * (no terminator counted). With out == NULL and cap == 0 only counts;
 * otherwise the text is NUL-terminated and RLVR_ELIMIT means it needed
 * *len_out + 1 > cap bytes. An id outside the vocabulary is RLVR_EINVAL. */
int rlvr_tokenizer_decode(const rlvr_tokenizer *t, const int32_t *ids, int32_t n, bool specials, char *out,
                          size_t cap, size_t *len_out);

/* The model must have an output row for every id: RLVR_EINVAL with a message
 * naming both sizes when cfg->vocab < vocab_size. A larger vocab is fine:
 * the rows past the tokenizer's are ids no text belongs to. */
int rlvr_tokenizer_check_model(const rlvr_tokenizer *t, const rlvr_model_config *cfg);

/* ---- chat format (policy/chat.h) ---- */

/* Sets how turns are rendered: `family` by name ("native", "chatml",
 * "llama3", "mistral"), or NULL to recognise it from the Jinja text `jinja`
 * (len bytes; may be NULL with a family). The text is kept (checkpoints and
 * exports carry it) and its variant details read. RLVR_EFORMAT naming
 * `source` for a template no family matches or a vocabulary that lacks the
 * family's markers; RLVR_EINVAL for an unknown family name. On failure
 * the tokenizer keeps its format. */
int rlvr_tokenizer_set_chat(rlvr_tokenizer *t, const char *family, const char *jinja, size_t len,
                            const char *source);
/* The format turns are rendered with; native unless set. Never NULL. */
const rlvr_chat *rlvr_tokenizer_chat(const rlvr_tokenizer *t);
/* The Jinja text set with the format (NUL-terminated), NULL when none. */
const char *rlvr_tokenizer_chat_template(const rlvr_tokenizer *t, size_t *len);

#endif
