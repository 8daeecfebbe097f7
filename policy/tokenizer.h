/* policy/tokenizer.h — text <-> token ids, plus the special tokens of the
 * chat/tool template.
 *
 * rlvr's own two kinds share one id layout: ids 0..255 are the bytes
 * themselves and the special tokens follow (256 .. 256 + RLVR_SPECIAL_COUNT − 1).
 *   RLVR_TOKENIZER_BYTE  nothing more: one id per byte.
 *   RLVR_TOKENIZER_BPE   byte-pair merges after them: merge i joins two
 *                        earlier non-special ids into id
 *                        RLVR_TOKENIZER_FIRST_MERGE + i. Text is cut into
 *                        pieces first (policy/bpe.h), and within a piece the
 *                        lowest-numbered applicable merge is applied to
 *                        every occurrence, again and again (GPT-2's rule).
 * A third kind reads a pretrained model's tokenizer:
 *   RLVR_TOKENIZER_HF    Hugging Face byte-level BPE from its tokenizer.json
 *                        (GPT-2, Llama-3, Qwen2 style), giving the ids the
 *                        `tokenizers` library gives with
 *                        encode(add_special_tokens=False): the post-processor
 *                        (BOS and the like) is not applied. Its ids are the
 *                        file's; its special tokens are the file's added
 *                        tokens with special=true, and rlvr's fixed ones
 *                        (RLVR_SPECIAL_*) do not exist: the chat template
 *                        maps roles to the model's own markers.
 * Callers only use this header (encode, decode, special-id lookup,
 * vocabulary size), so they work with any kind.
 *
 * Special tokens never come out of encode(): text that happens to spell
 * "<|end_of_turn|>" encodes to its bytes. A tool's output therefore cannot
 * inject role markers or end a turn; only the template (policy/template.h)
 * inserts specials, and only the sampler can emit them for the policy.
 * rlvr_tokenizer_encode_specials is the one exception, for text that is
 * trusted to spell them (a chat template's own markup). */
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
    RLVR_TOKENIZER_HF = 2,   /* a Hugging Face byte-level BPE tokenizer.json */
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
/* A Hugging Face byte-level BPE tokenizer from the text of its
 * tokenizer.json (len bytes, kept verbatim: rlvr_tokenizer_hf_json).
 * `source` names the file in every message. Reads model.type BPE (vocab,
 * merges as "a b" or [a, b], ignore_merges), added_tokens (special,
 * single_word, lstrip, rstrip, normalized), a normalizer that is null, NFC
 * or a Sequence of NFC, a pre_tokenizer of Split (Regex or String pattern,
 * any behavior, invert) and exactly one ByteLevel stage (alone or in a
 * Sequence), and a ByteLevel decoder. The post_processor, truncation and
 * padding are ignored. Anything else (WordPiece, Unigram, WordLevel,
 * Metaspace, byte_fallback, dropout, another normalizer), bad JSON, merges
 * of tokens outside the vocabulary, ids out of range [0, 2^24) or given
 * twice: RLVR_EFORMAT naming the file and the field. RLVR_ENOMEM. */
int rlvr_tokenizer_new_hf_json(rlvr_tokenizer **out, const char *json, size_t len, const char *source);
/* The tokenizer.json text an HF tokenizer was built from (not
 * NUL-terminated); RLVR_EINVAL for the other kinds. */
int rlvr_tokenizer_hf_json(const rlvr_tokenizer *t, const char **json, size_t *len);
/* A copy (same kind and merges). */
int rlvr_tokenizer_clone(rlvr_tokenizer **out, const rlvr_tokenizer *t);
void rlvr_tokenizer_free(rlvr_tokenizer *t);

/* The merges of a BPE tokenizer (2 · *n ids), NULL and 0 for the byte and
 * HF ones (an HF tokenizer's merges stay in its tokenizer.json). */
const int32_t *rlvr_tokenizer_merges(const rlvr_tokenizer *t, int32_t *n);
/* Same kind and same merges (HF: the same tokenizer.json bytes), same chat
 * format and declared generation ids. */
bool rlvr_tokenizer_equal(const rlvr_tokenizer *a, const rlvr_tokenizer *b);
/* "byte", "bpe (N merges)" or "hf bpe (V ids, M merges, A added)" for messages. */
void rlvr_tokenizer_describe(const rlvr_tokenizer *t, char *out, size_t cap);
/* The bytes of one non-special id (its text), NULL for a special or an id
 * outside the vocabulary; *len gets their count. */
const char *rlvr_tokenizer_token_bytes(const rlvr_tokenizer *t, int32_t id, size_t *len);

rlvr_tokenizer_kind rlvr_tokenizer_kind_of(const rlvr_tokenizer *t);
/* Number of ids: every id is in [0, vocab_size). */
int32_t rlvr_tokenizer_vocab_size(const rlvr_tokenizer *t);

/* Id of a special token (which must be < RLVR_SPECIAL_COUNT); -1 for the
 * HF kind, which has none of rlvr's fixed specials. */
int32_t rlvr_tokenizer_special(const rlvr_tokenizer *t, rlvr_special_token which);
/* Printed name of a special token, "<|eos|>"; NULL when out of range. */
const char *rlvr_special_name(rlvr_special_token which);
/* Finds a special token by its printed name: RLVR_ENOTFOUND when none. The
 * HF kind finds any of its added tokens by content ("<|im_end|>"). */
int rlvr_tokenizer_find_special(const rlvr_tokenizer *t, const char *name, int32_t *id);
/* True when id is one of the special tokens (HF: an added token with
 * special=true). */
bool rlvr_tokenizer_is_special(const rlvr_tokenizer *t, int32_t id);

/* Encodes len bytes of text (any bytes, NUL included) into ids.
 * *n_out receives the number of ids the text encodes to. With out == NULL
 * and cap == 0 only counts; otherwise RLVR_ELIMIT when cap is too small
 * (nothing beyond cap is written). Never produces special ids: the HF kind
 * cuts only its non-special added tokens out of the text and encodes the
 * text of special ones as ordinary bytes (tokenizers with
 * encode_special_tokens = True). Should the file's merges spell a special
 * token from plain text, encode fails with RLVR_EFORMAT rather than give
 * its id. */
int rlvr_tokenizer_encode(const rlvr_tokenizer *t, const char *text, size_t len, int32_t *out, int32_t cap,
                          int32_t *n_out);
/* The same, except that special tokens spelled in the text become their
 * ids: the HF kind's special added tokens (tokenizers' default encode), the
 * other kinds' printed names ("<|eos|>"), leftmost and longest first. */
int rlvr_tokenizer_encode_specials(const rlvr_tokenizer *t, const char *text, size_t len, int32_t *out, int32_t cap,
                                   int32_t *n_out);

/* Decodes ids to bytes. Special tokens are written as their names (HF:
 * their content) when `specials` is true and skipped otherwise. *len_out receives the byte count
 * (no terminator counted). With out == NULL and cap == 0 only counts;
 * otherwise the text is NUL-terminated and RLVR_ELIMIT means it needed
 * *len_out + 1 > cap bytes. An id outside the vocabulary (HF: or one that
 * names no token) is RLVR_EINVAL. */
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

/* ---- what a pretrained model declares for generation ---- */

#define RLVR_TOKENIZER_MAX_EOS 8

/* Sets the ids a pretrained model's files declare (generation_config.json
 * or config.json bos_token_id/eos_token_id, a GGUF's tokenizer.ggml.*_token_id):
 * `bos` (-1: none) and the n_eos ids generation ends at, in their order,
 * repeats dropped. Sampling stops at each of them besides the chat format's
 * turn end; one that is not the turn end ends the episode, as the format's
 * episode end does. Copies, checkpoints and HF exports carry them.
 * RLVR_EFORMAT naming `source` for an id outside the vocabulary or more
 * than RLVR_TOKENIZER_MAX_EOS ids; the tokenizer is unchanged on failure. */
int rlvr_tokenizer_set_generation(rlvr_tokenizer *t, int32_t bos, const int32_t *eos, int n_eos, const char *source);
/* The declared bos id, -1 when none was declared. */
int32_t rlvr_tokenizer_generation_bos(const rlvr_tokenizer *t);
/* The declared eos ids (*n of them, 0 when none were declared). */
const int32_t *rlvr_tokenizer_generation_eos(const rlvr_tokenizer *t, int *n);
/* True when a sampled `id` ends the episode, not only the turn: the chat
 * format's episode end (<|eos|> natively; none for mistral, whose </s> ends
 * every reply), or a declared eos id other than the format's turn end. */
bool rlvr_tokenizer_ends_episode(const rlvr_tokenizer *t, int32_t id);

#endif
