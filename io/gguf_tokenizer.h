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
#include "policy/tokenizer.h"

/* RLVR_EFORMAT naming `path` and the key for another tokenizer model or
 * pre-tokenizer, missing or mistyped tokens/merges, bad token types;
 * RLVR_ENOMEM. */
int rlvr_gguf_tokenizer(rlvr_tokenizer **out, const rlvr_gguf *g, const char *path);

#endif
