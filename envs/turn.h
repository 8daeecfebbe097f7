/* envs/turn.h — reading the tool call out of one sampled policy turn.
 *
 * The policy's turn is the token ids it sampled after <|assistant|>, the
 * stop token included (policy/template.h). Its call, if any, is the text
 * between <|tool_call|> and <|/tool_call|>: decoded from the ids (never
 * re-tokenised) and parsed against the task's tools (envs/tools.h). A turn
 * whose markers are unbalanced, or with anything after the call but the stop
 * token, gets the RLVR_TOOL_ERR_MARKERS observation; a call that fails its
 * schema gets the parser's observation. The words are the same in training,
 * evaluation and deployment. */
#ifndef RLVR_ENVS_TURN_H
#define RLVR_ENVS_TURN_H

#include "envs/tools.h"
#include "policy/tokenizer.h"

#include <stdint.h>

typedef enum {
    RLVR_TURN_ANSWER = 0,    /* no tool call: the turn is a final answer */
    RLVR_TURN_CALL = 1,      /* a call that parsed: *call is filled */
    RLVR_TURN_MALFORMED = 2, /* *err holds the observation the policy gets */
} rlvr_turn_kind;

/* Returns 0 with *kind set; RLVR_EINVAL for ids outside the vocabulary,
 * RLVR_ENOMEM. `text_end` (may be NULL) receives the end of the turn's free
 * text in ids. */
int rlvr_turn_read_call(rlvr_turn_kind *kind, rlvr_tool_call *call, rlvr_tool_error *err, int32_t *text_end,
                        const rlvr_tokenizer *tok, const int32_t *ids, int32_t n, uint32_t allowed);

#endif
