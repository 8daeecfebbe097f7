/* policy/template.h — the chat/tool template, rendered straight to token ids
 * (never text that is tokenised again: re-tokenising a transcript can
 * merge boundaries into tokens the policy never emitted).
 *
 * A conversation is a token sequence:
 *
 *   <|bos|>
 *   <|system|> TEXT <|end_of_turn|>                                      (optional)
 *   <|user|> TEXT <|end_of_turn|>
 *   <|assistant|> TEXT [<|tool_call|> CALL <|/tool_call|>] <|end_of_turn|>
 *   <|tool|> <|observation|> OUTPUT <|/observation|> <|end_of_turn|>
 *   <|assistant|> ...
 *
 * Who produces which token decides the loss mask (core/record.h):
 * - The policy samples, in an assistant turn, everything after the
 *   <|assistant|> marker: its TEXT, the <|tool_call|> / <|/tool_call|>
 *   markers and the CALL between them, and the closing <|end_of_turn|>
 *   (or <|eos|> to end the episode). These are RLVR_TOKEN_POLICY.
 * - The harness inserts everything else: <|bos|>, role markers (including
 *   the <|assistant|> that opens each policy turn), system/user text, and the
 *   whole tool turn with its observation wrappers. Harness tokens before the
 *   first policy token are RLVR_TOKEN_PROMPT; after it they are
 *   RLVR_TOKEN_OBSERVATION (they condition later turns, never the loss).
 * The sampler's stop tokens for a policy turn are <|end_of_turn|> and <|eos|>
 * (rlvr_template_stop_tokens). A turn without a tool call is the final answer. */
#ifndef RLVR_POLICY_TEMPLATE_H
#define RLVR_POLICY_TEMPLATE_H

#include "policy/chat.h"
#include "policy/tokenizer.h"

#include <stddef.h>
#include <stdint.h>

/* A growable token sequence with a mask per token. Zero-initialise it
 * (rlvr_token_buf b = {0}) and release it with rlvr_token_buf_free. */
typedef struct {
    int32_t *ids;     /* (cap) token ids */
    uint8_t *mask;    /* (cap) RLVR_TOKEN_* of each id */
    int32_t n, cap;   /* tokens held, room */
    int32_t n_policy; /* RLVR_TOKEN_POLICY tokens held */
    int32_t turns;    /* messages rendered (the chat families' first-turn rules) */
    char *held;       /* mistral: the system text, held until the first user turn opens */
    size_t held_len;
} rlvr_token_buf;

void rlvr_token_buf_free(rlvr_token_buf *b);
/* Forgets the tokens (and the turn count), keeps the memory. */
void rlvr_token_buf_clear(rlvr_token_buf *b);
/* Makes room for `extra` more tokens. */
int rlvr_token_buf_reserve(rlvr_token_buf *b, int32_t extra);
int rlvr_token_buf_push(rlvr_token_buf *b, int32_t id, uint8_t mask);

typedef enum { RLVR_ROLE_SYSTEM = 0, RLVR_ROLE_USER, RLVR_ROLE_ASSISTANT, RLVR_ROLE_TOOL } rlvr_role;

/* ---- harness-inserted tokens (PROMPT, or OBSERVATION after policy tokens) ---- */

/* <|bos|>: the first token of every conversation. */
int rlvr_template_begin(rlvr_token_buf *b, const rlvr_tokenizer *t);

/* A whole turn of `role`:
 *   SYSTEM, USER:  <|role|> TEXT <|end_of_turn|>
 *   TOOL:          <|tool|> <|observation|> TEXT <|/observation|> <|end_of_turn|>
 *   ASSISTANT:     <|assistant|> then TEXT <|end_of_turn|> as policy tokens
 *                  (a demonstration; same as assistant_start + assistant_reply
 *                  without a tool call). */
int rlvr_template_message(rlvr_token_buf *b, const rlvr_tokenizer *t, rlvr_role role, const char *text,
                          size_t len);

/* <|assistant|>: opens a policy turn; the sampler continues from here. */
int rlvr_template_assistant_start(rlvr_token_buf *b, const rlvr_tokenizer *t);

/* What the harness prefills between two policy turns of a rollout, all
 * RLVR_TOKEN_OBSERVATION whatever the buffer held before (it is usually a
 * fresh one):
 *   <|tool|> <|observation|> TEXT <|/observation|> <|end_of_turn|> <|assistant|> */
int rlvr_template_observation(rlvr_token_buf *b, const rlvr_tokenizer *t, const char *text, size_t len);

/* ---- policy tokens (RLVR_TOKEN_POLICY) ---- */

/* What the policy emits in one assistant turn, for demonstrations (SFT) and
 * tests: TEXT, then <|tool_call|> CALL <|/tool_call|> when call != NULL, then
 * <|end_of_turn|>. */
int rlvr_template_assistant_reply(rlvr_token_buf *b, const rlvr_tokenizer *t, const char *text, size_t len,
                                  const char *call, size_t call_len);

#define RLVR_TEMPLATE_MAX_STOPS (2 + RLVR_TOKENIZER_MAX_EOS)

/* The ids that end a policy turn: out[0] = the turn's end (<|end_of_turn|>
 * natively), then the episode's end (<|eos|>) where the format has one, then
 * a pretrained model's declared eos ids that are neither
 * (rlvr_tokenizer_set_generation). Returns the count (1 ..
 * RLVR_TEMPLATE_MAX_STOPS). */
int rlvr_template_stop_tokens(const rlvr_tokenizer *t, int32_t out[RLVR_TEMPLATE_MAX_STOPS]);

/* How the policy writes a tool call, for prompts and error messages:
 * natively the names of the <|tool_call|> and <|/tool_call|> special
 * tokens, in the chat families the text "<tool_call>" and "</tool_call>". */
void rlvr_template_call_markers(const rlvr_tokenizer *t, const char **open, const char **close);

/* ---- reading a sampled turn back (ids only, no re-tokenisation) ---- */

/* Where the parts of one policy turn lie. Natively the call markers are
 * tokens and the index ranges are exact. In the chat families the markers
 * are text ("<tool_call>", "</tool_call>") that may start or end inside a
 * token: the byte ranges into the decoded turn are exact, the index ranges
 * name the tokens that hold those bytes. Read the parts' text with
 * rlvr_template_reply_text. */
typedef struct {
    int32_t text_end;               /* TEXT is [0, text_end) */
    int32_t call_start, call_end;   /* CALL is [call_start, call_end); both -1 when no call */
    int32_t end_token;              /* the id that ended the turn (<|end_of_turn|>, <|eos|>), -1 if none */
    int malformed;                  /* 1: an unclosed or repeated call marker, or a stray special */
    size_t text_bytes;              /* families: TEXT is bytes [0, text_bytes) of the decoded turn */
    size_t call_byte_start, call_byte_end; /* families: CALL's bytes (white space around it dropped) */
} rlvr_reply_parts;

/* Splits the ids the policy sampled in one turn (everything after the
 * assistant's opening, stop token included when present). Never fails on
 * odd content: the harness decides what a malformed turn means. */
void rlvr_template_parse_reply(const rlvr_tokenizer *t, const int32_t *ids, int32_t n, rlvr_reply_parts *out);

/* The text of the turn's TEXT (call = false) or CALL (call = true) part, as
 * parsed into `p`: malloc'd, NUL-terminated, *len bytes. RLVR_ENOMEM;
 * RLVR_EINVAL for an id outside the vocabulary. */
int rlvr_template_reply_text(const rlvr_tokenizer *t, const int32_t *ids, int32_t n, const rlvr_reply_parts *p,
                             bool call, char **out, size_t *len);

#endif
