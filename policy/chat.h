/* policy/chat.h — chat formats: which tokens open, close and end the turns
 * of a conversation for a given tokenizer (policy/template.h renders with
 * them).
 *
 * rlvr's own tokenizers (byte, BPE) use the native format of
 * policy/template.h: one special token per role marker. A pretrained
 * model's tokenizer comes with a Jinja chat template; rlvr does not run
 * Jinja. It recognises the families in real use by their marker tokens and
 * renders them itself, straight to ids:
 *
 *   chatml   <|im_start|>ROLE\nTEXT<|im_end|>\n                  (SmolLM2, Qwen2)
 *            the policy samples after "<|im_start|>assistant\n" and stops
 *            at <|im_end|>; the harness adds the "\n" after it. A template
 *            that adds a system turn when the conversation has none (both
 *            do) gets that same turn. Qwen2's templates put a tool result in
 *            a user turn as "<tool_response>\nTEXT\n</tool_response>";
 *            others in a "tool" turn.
 *   llama3   <|begin_of_text|> then <|start_header_id|>ROLE<|end_header_id|>\n\nTEXT<|eot_id|>
 *            with every TEXT trimmed of surrounding white space as the
 *            template does; tool results in an "ipython" turn where the
 *            template names that role (Llama 3.1), else "tool"; a template
 *            that dates its system turn ("Cutting Knowledge Date") gets the
 *            same two lines.
 *   mistral  <s>[INST] USER [/INST]REPLY</s>: the system text opens the
 *            first user turn (followed by a blank line); a tool result is a
 *            user turn. The policy's turn ends at </s>, which therefore
 *            cannot also end the episode.
 *
 * Text between two special tokens is encoded in one piece, as HF tokenizers
 * encode a rendered template (its added tokens split the text first), so a
 * harness turn gets the ids the reference renders. In these families a tool
 * call is the text "<tool_call>CALL</tool_call>" inside the assistant's
 * reply (a single token where the vocabulary has one, as Qwen2's does). */
#ifndef RLVR_POLICY_CHAT_H
#define RLVR_POLICY_CHAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    RLVR_CHAT_NATIVE = 0, /* rlvr's special tokens (policy/template.h) */
    RLVR_CHAT_CHATML,
    RLVR_CHAT_LLAMA3,
    RLVR_CHAT_MISTRAL,
} rlvr_chat_family;

#define RLVR_CHAT_FAMILIES 4

/* "native", "chatml", "llama3", "mistral"; NULL when out of range. */
const char *rlvr_chat_family_name(rlvr_chat_family f);
/* The family of that name: RLVR_EINVAL (message lists the names) when none. */
int rlvr_chat_family_parse(const char *name, rlvr_chat_family *out);

/* The family a Jinja chat template belongs to, from its marker tokens.
 * RLVR_EFORMAT naming `source` when it is none of chatml, llama3, mistral:
 * the message says that [template] family selects one. */
int rlvr_chat_recognise(const char *jinja, size_t len, const char *source, rlvr_chat_family *out);

/* What a family's rendering needs to know from the template text beyond
 * its family (see the families above). */
typedef struct {
    char *default_system;    /* chatml: the system turn's text when the conversation has none; NULL = none */
    bool tool_response;      /* chatml: tool results as <tool_response> in a user turn (Qwen2) */
    bool ipython;            /* llama3: tool results in an "ipython" turn */
    bool dated_system;       /* llama3: the system turn starts with the knowledge and today dates */
    char today[32];          /* llama3 dated_system: the date the template uses when none is given */
} rlvr_chat_variant;

/* Reads the variant of `family` from the template text (NULL text: the
 * family's plain form). RLVR_ENOMEM. Free with rlvr_chat_variant_free. */
int rlvr_chat_variant_read(rlvr_chat_variant *out, rlvr_chat_family family, const char *jinja, size_t len);
void rlvr_chat_variant_free(rlvr_chat_variant *v);

/* A family resolved against one tokenizer's ids (-1: the family has no
 * such token, or the vocabulary lacks an optional one). */
typedef struct {
    rlvr_chat_family family;
    rlvr_chat_variant variant;
    int32_t begin;       /* opens a conversation: <|bos|>, <|begin_of_text|>, <s>; -1 for chatml */
    int32_t turn_open;   /* chatml <|im_start|>, llama3 <|start_header_id|> */
    int32_t header_end;  /* llama3 <|end_header_id|> */
    int32_t turn_end;    /* ends every turn, the policy's too: <|end_of_turn|>, <|im_end|>, <|eot_id|>, </s> */
    int32_t episode_end; /* the policy ends the episode: <|eos|>, chatml <|endoftext|>, llama3 <|end_of_text|>; -1 none */
} rlvr_chat;

/* Marker names of a family, for messages: the tokens the vocabulary must hold. */
typedef int (*rlvr_chat_lookup)(const void *tokenizer, const char *name, int32_t *id);

/* Resolves `family` (not native) with the template text (may be NULL) and
 * a lookup of token names (RLVR_ENOTFOUND when absent). RLVR_EFORMAT
 * naming `source` and the token when the vocabulary lacks a required
 * marker. Free with rlvr_chat_free. */
int rlvr_chat_resolve(rlvr_chat *out, rlvr_chat_family family, const char *jinja, size_t len,
                      rlvr_chat_lookup lookup, const void *tokenizer, const char *source);
void rlvr_chat_free(rlvr_chat *c);

#endif
