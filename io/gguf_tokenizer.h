/* io/gguf_tokenizer.h — the tokenizer a GGUF file carries, as rlvr's
 * Hugging Face kind (policy/tokenizer.h RLVR_TOKENIZER_HF).
 *
 * llama.cpp keeps a byte-level BPE tokenizer as metadata:
 * tokenizer.ggml.model "gpt2", tokenizer.ggml.tokens (id -> string, in
 * GPT-2's byte-mapped form), tokenizer.ggml.merges ("left right"),
 * tokenizer.ggml.token_type (3 control: a special added token; 4 user
 * defined: a non-special added token; every token is also in the BPE
 * vocabulary, which keeps the GGUF's ids) and
 * tokenizer.ggml.pre naming the pre-tokenizer:
 *   "default", "gpt-2"      GPT-2's ByteLevel regex
 *   "llama-bpe", "llama3"   Llama-3's Split regex, then ByteLevel, ignore_merges
 *   "qwen2"                 Qwen2's Split regex (single digits), NFC, then ByteLevel
 *   "smollm"                single digits, then GPT-2's ByteLevel regex
 * (an absent key is "default"; llama.cpp's own "default" also cuts
 * punctuation and digit runs apart, rlvr reads it as GPT-2's tokenizer.json
 * does). The tokenizer is built by writing the
 * tokenizer.json these describe and reading it, so a GGUF's tokenizer is
 * stored and exported like any other (rlvr_tokenizer_hf_json). */
#ifndef RLVR_IO_GGUF_TOKENIZER_H
#define RLVR_IO_GGUF_TOKENIZER_H

#include "io/gguf.h"
#include "io/gguf_write.h"
#include "policy/tokenizer.h"

/* RLVR_EFORMAT naming `path` and the key for another tokenizer model or
 * pre-tokenizer, missing or mistyped tokens/merges, bad token types;
 * RLVR_ENOMEM. */
int rlvr_gguf_tokenizer(rlvr_tokenizer **out, const rlvr_gguf *g, const char *path);

/* The other way: a Hugging Face byte-level BPE tokenizer.json as the keys
 * above, for a file being written. */
typedef struct {
    const char *json;          /* tokenizer.json text (len bytes) */
    size_t len;
    const char *source;        /* names it in messages */
    const char *chat_template; /* tokenizer.chat_template; NULL: not written */
    int32_t bos, eos, eot;     /* tokenizer.ggml.{bos,eos,eot}_token_id; -1: not written */
    bool add_bos;              /* tokenizer.ggml.add_bos_token: the chat format opens with bos */
} rlvr_gguf_tokenizer_spec;

/* Writes tokenizer.ggml.model "gpt2", .pre (the name above whose
 * tokenizer.json has this file's normalizer, pre_tokenizer and
 * ignore_merges), .tokens (every id up to the largest: the vocabulary's
 * string or the added token's content; an id neither names is "[PAD<id>]"
 * of type 5, unused), .token_type (1 normal, 3 special added, 4 other
 * added), .merges ("left right"), .add_bos_token, the ids and the template. Reading the
 * file back (rlvr_gguf_tokenizer) gives a tokenizer that encodes as this
 * one. RLVR_EFORMAT naming `source` and --no-tokenizer for what a GGUF
 * cannot carry: another pre-tokenizer, or an added token that is lstrip,
 * rstrip, single_word, or normalized by NFC with non-ASCII content (GGUF
 * has no key for these: they would read back false); RLVR_ENOMEM. */
int rlvr_gguf_put_tokenizer(rlvr_gguf_writer *w, const rlvr_gguf_tokenizer_spec *spec);

#endif
