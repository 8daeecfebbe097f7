/* envs/turn.c — the tool call of one sampled turn. */
#include "envs/turn.h"

#include "core/error.h"
#include "policy/template.h"

#include <stdlib.h>
#include <string.h>

int rlvr_turn_read_call(rlvr_turn_kind *kind, rlvr_tool_call *call, rlvr_tool_error *err, int32_t *text_end,
                        const rlvr_tokenizer *tok, const int32_t *ids, int32_t n, uint32_t allowed) {
    memset(call, 0, sizeof *call);
    err->code = RLVR_TOOL_ERR_NONE;
    err->observation[0] = '\0';
    rlvr_reply_parts parts;
    rlvr_template_parse_reply(tok, ids, n, &parts);
    if (text_end) *text_end = parts.text_end;
    if (parts.malformed) {
        const char *open, *close;
        rlvr_template_call_markers(tok, &open, &close);
        rlvr_tool_error_markers(err, open, close);
        *kind = RLVR_TURN_MALFORMED;
        return 0;
    }
    if (parts.call_start < 0) {
        *kind = RLVR_TURN_ANSWER;
        return 0;
    }
    char *text = NULL;
    size_t len = 0;
    int rc = rlvr_template_reply_text(tok, ids, n, &parts, true, &text, &len);
    if (rc == 0) {
        rc = rlvr_tool_call_parse(call, err, text, len, allowed);
        if (rc == 0) {
            *kind = RLVR_TURN_CALL;
        } else if (rc == RLVR_EINVAL && err->code != RLVR_TOOL_ERR_NONE) {
            *kind = RLVR_TURN_MALFORMED; /* the policy's mistake, not ours */
            rc = 0;
        }
    }
    free(text);
    return rc;
}
