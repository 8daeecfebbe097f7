/* policy/hf_tokenizer.h — private to policy/tokenizer.c: the machinery of
 * the RLVR_TOKENIZER_HF kind, a Hugging Face byte-level BPE tokenizer read
 * from its tokenizer.json (what docs/POLICY.md "Tokenizer" lists as
 * supported). Callers use policy/tokenizer.h. */
#ifndef RLVR_POLICY_HF_TOKENIZER_H
#define RLVR_POLICY_HF_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct rlvr_hf_tokenizer rlvr_hf_tokenizer;

/* Parses tokenizer.json (len bytes, kept verbatim); `source` names the file
 * in every message. RLVR_EFORMAT for what rlvr does not read, RLVR_ENOMEM. */
int rlvr_hf_new(rlvr_hf_tokenizer **out, const char *json, size_t len, const char *source);
void rlvr_hf_free(rlvr_hf_tokenizer *h);

/* Encodes as tokenizers' encode(add_special_tokens=False); with specials
 * false, matches of special added tokens are dropped (their text goes
 * through BPE), as with encode_special_tokens = True. Writes the first cap
 * ids to out and counts them all in *n. */
int rlvr_hf_encode(const rlvr_hf_tokenizer *h, const char *text, size_t len, bool specials, int32_t *out,
                   int32_t cap, int64_t *n);

/* max id + 1. */
int32_t rlvr_hf_vocab_size(const rlvr_hf_tokenizer *h);
/* The bytes id decodes to (an added token: its content), NULL for an id
 * that names no token. */
const char *rlvr_hf_token_text(const rlvr_hf_tokenizer *h, int32_t id, size_t *len);
bool rlvr_hf_is_special(const rlvr_hf_tokenizer *h, int32_t id);
/* The added token whose content is `content`, or -1. */
int32_t rlvr_hf_find_added(const rlvr_hf_tokenizer *h, const char *content);
/* The tokenizer.json text and the source name it was read with. */
const char *rlvr_hf_json(const rlvr_hf_tokenizer *h, size_t *len);
const char *rlvr_hf_source(const rlvr_hf_tokenizer *h);
/* Counts for messages: vocabulary entries, merges, added tokens. */
void rlvr_hf_counts(const rlvr_hf_tokenizer *h, int32_t *vocab, int32_t *merges, int32_t *added);

#endif
