/* policy/template_internal.h — what policy/template.c shares with the chat
 * families' rendering (policy/template_chat.c). Not for other folders. */
#ifndef RLVR_POLICY_TEMPLATE_INTERNAL_H
#define RLVR_POLICY_TEMPLATE_INTERNAL_H

#include "policy/chat.h"
#include "policy/template.h"

/* The chat families' tool-call markers: text in the assistant's reply. */
#define RLVR_CHAT_CALL_OPEN "<tool_call>"
#define RLVR_CHAT_CALL_CLOSE "</tool_call>"

/* Encodes text (no special tokens matched) into the buffer with one mask. */
int rlvr_template_push_text(rlvr_token_buf *b, const rlvr_tokenizer *t, const char *text, size_t len, uint8_t mask);

/* The chat families (c->family != RLVR_CHAT_NATIVE); same contracts as the
 * rlvr_template_* function of the same name. */
int rlvr_chat_render_begin(rlvr_token_buf *b, const rlvr_chat *c, uint8_t mask);
int rlvr_chat_render_message(rlvr_token_buf *b, const rlvr_tokenizer *t, const rlvr_chat *c, rlvr_role role,
                             const char *text, size_t len, uint8_t mask);
int rlvr_chat_render_assistant_start(rlvr_token_buf *b, const rlvr_tokenizer *t, const rlvr_chat *c, uint8_t mask);
int rlvr_chat_render_observation(rlvr_token_buf *b, const rlvr_tokenizer *t, const rlvr_chat *c, const char *text,
                                 size_t len);
int rlvr_chat_render_reply(rlvr_token_buf *b, const rlvr_tokenizer *t, const rlvr_chat *c, const char *text,
                           size_t len, const char *call, size_t call_len);
void rlvr_chat_parse_reply(const rlvr_tokenizer *t, const rlvr_chat *c, const int32_t *ids, int32_t n,
                           rlvr_reply_parts *out);
int rlvr_chat_reply_text(const rlvr_tokenizer *t, const int32_t *ids, int32_t n, const rlvr_reply_parts *p,
                         bool call, char **out, size_t *len);

#endif
