/* train/conversation.h — a conversation with a checkpoint's model, behind
 * `rlvr chat`.
 *
 * The conversation is a list of messages (an optional system text, then
 * user and assistant turns). Before every reply the whole list is rendered
 * again with the model's chat format (policy/template.h) from the
 * messages' text, as Hugging Face's apply_chat_template renders the same
 * messages: a reply is kept as the text it decodes to, so what the model
 * reads next turn is what any other runtime given the saved conversation
 * would feed it. The KV rows of the previous turn are reused when the new
 * rendering starts with them (the usual case), and computed again when it
 * does not (a reply whose text encodes to other ids than were sampled).
 *
 * When the rendering and the room kept for a reply (max_new, at most half
 * the context) do not fit the context, the oldest turns (a user message
 * and its reply) are left out, one at a time, and the reply says how many;
 * the system text always stays. The messages left out are still part of
 * the conversation that is saved. */
#ifndef RLVR_TRAIN_CONVERSATION_H
#define RLVR_TRAIN_CONVERSATION_H

#include "train/generate.h"

#include <stddef.h>
#include <stdint.h>

typedef struct rlvr_conversation rlvr_conversation;

/* One reply. Zero-initialise; rlvr_conversation_turn_free releases it. */
typedef struct {
    rlvr_generation reply; /* ids, log-probs, why it stopped */
    char *text;            /* the reply's text (NUL-terminated), kept as the assistant's message */
    size_t len;
    int dropped;           /* turns left out from the front before this reply to fit the context */
    int32_t *prompt;       /* (n_prompt) the ids the reply continued: the rendered conversation */
    int32_t n_prompt;
} rlvr_conversation_turn;

void rlvr_conversation_turn_free(rlvr_conversation_turn *t);

/* A conversation drawing from `g` (borrowed; it must outlive the
 * conversation, and draws one sample per reply). `system` may be NULL. */
int rlvr_conversation_new(rlvr_conversation **out, rlvr_generator *g, const char *system);
void rlvr_conversation_free(rlvr_conversation *c);

/* Replaces the system text (NULL or "": none, so a template that adds its
 * own default system turn adds it). */
int rlvr_conversation_set_system(rlvr_conversation *c, const char *text);

/* Forgets every turn; the system text stays. */
void rlvr_conversation_reset(rlvr_conversation *c);

/* The user's message, then the model's reply into *out (freed first). The
 * message and the reply are appended to the conversation, an interrupted
 * reply with the text it had. RLVR_ELIMIT when the message alone leaves no
 * room for a reply in the context; the conversation is then unchanged. */
int rlvr_conversation_reply(rlvr_conversation *c, const char *user, size_t len, const rlvr_generate_hooks *hooks,
                            rlvr_conversation_turn *out);

/* Turns held (user messages answered). */
int rlvr_conversation_turns(const rlvr_conversation *c);

/* Writes the conversation, turns left out included, as a JSON array of
 * {"role": "system" | "user" | "assistant", "content": TEXT} objects (the
 * messages apply_chat_template takes), atomically. */
int rlvr_conversation_save(const rlvr_conversation *c, const char *path);

#endif
