/* io/model_tokenizer.h — a pretrained model's tokenizer with its chat
 * format (policy/chat.h), as `rlvr model import` stores it in the
 * checkpoint.
 *
 * From a Hugging Face directory: tokenizer.json (policy/tokenizer.h, the HF
 * kind) and the chat template of tokenizer_config.json ("chat_template": a
 * string, or a list of {"name", "template"} of which "default" or else the
 * first is taken). From a GGUF file: the tokenizer.ggml.* vocabulary
 * (io/gguf_tokenizer.h) and tokenizer.chat_template.
 *
 * With them, the ids the model declares for generation
 * (rlvr_tokenizer_set_generation): from a directory, bos_token_id and
 * eos_token_id (an id or a list) of generation_config.json, else of
 * config.json, else the ids of tokenizer_config.json's bos_token and
 * eos_token texts (which must be added tokens); from a GGUF file,
 * tokenizer.ggml.bos_token_id and the eos, eot and eom ids. A malformed
 * file or field, or an id outside the vocabulary, is RLVR_EFORMAT naming
 * the file and the field.
 *
 * `family` NULL recognises the family from the template; a family name
 * ("chatml", "llama3", "mistral") renders that family instead, for a
 * template rlvr does not recognise or a model without one. Errors name the
 * file: a missing tokenizer.json, a tokenizer of a kind rlvr does not read,
 * no template and no family, a template of no family. */
#ifndef RLVR_IO_MODEL_TOKENIZER_H
#define RLVR_IO_MODEL_TOKENIZER_H

#include "io/gguf.h"
#include "policy/tokenizer.h"

int rlvr_hf_dir_tokenizer(rlvr_tokenizer **out, const char *dir, const char *family);
int rlvr_gguf_chat_tokenizer(rlvr_tokenizer **out, const rlvr_gguf *g, const char *path, const char *family);

/* The same for `rlvr model info`, which reports rather than fails: a chat
 * format that cannot be set (no template and no family, a template of no
 * family, a vocabulary without the family's markers) leaves the tokenizer
 * without one (rlvr_tokenizer_chat says native) and its refusal in
 * chat_error (cap bytes; "" when the format was set). */
int rlvr_hf_dir_tokenizer_facts(rlvr_tokenizer **out, const char *dir, const char *family, char *chat_error,
                                size_t cap);
int rlvr_gguf_chat_tokenizer_facts(rlvr_tokenizer **out, const rlvr_gguf *g, const char *path, const char *family,
                                   char *chat_error, size_t cap);

#endif
