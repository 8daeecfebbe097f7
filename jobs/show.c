/* jobs/show.c — trajectories rendered for humans (jobs/show.h). */
#include "jobs/show.h"

#include <stdlib.h>

static const char *dim(const show_style *st) { return st->color ? "\033[2m" : ""; }
static const char *off(const show_style *st) { return st->color ? "\033[0m" : ""; }

void show_tokens(const show_style *st, const rlvr_rollout *r, int32_t from, int32_t to) {
    size_t len = 0;
    if (to <= from || rlvr_tokenizer_decode(st->tok, r->tokens + from, to - from, true, NULL, 0, &len) < 0) {
        fputs("<ids outside the tokenizer>", st->out);
        return;
    }
    char *s = malloc(len + 1);
    if (s && rlvr_tokenizer_decode(st->tok, r->tokens + from, to - from, true, s, len + 1, &len) == 0)
        fwrite(s, 1, len, st->out);
    free(s);
}

void show_prompt(const show_style *st, const rlvr_rollout *r, const char *title) {
    fprintf(st->out, "%s==== %s: prompt (%d tokens) ====%s\n", dim(st), title, r->prompt_tokens, off(st));
    show_tokens(st, r, 0, r->prompt_tokens);
    fputc('\n', st->out);
    fflush(st->out);
}

void show_policy(const show_style *st, const rlvr_rollout *r, const rlvr_turn *t, int32_t number) {
    fprintf(st->out, "%s---- turn %d: policy, %d tokens ----%s\n%s{{", dim(st), number, t->policy_end - t->policy_start,
            off(st), st->color ? "\033[32m" : "");
    show_tokens(st, r, t->policy_start, t->policy_end);
    fprintf(st->out, "}}%s\n", off(st));
    fflush(st->out);
}

void show_observation(const show_style *st, const rlvr_rollout *r, const rlvr_turn *t) {
    if (t->observation_end <= t->observation_start) return;
    fprintf(st->out, "%s---- observation: %s, exit %d, %.3f s%s ----%s\n%s[[", dim(st),
            t->tool_name[0] ? t->tool_name : "error", t->exit_status, t->duration_s, t->output_truncated ? ", cut" : "",
            off(st), st->color ? "\033[36m" : "");
    show_tokens(st, r, t->observation_start, t->observation_end);
    fprintf(st->out, "]]%s\n", off(st));
    fflush(st->out);
}

void show_end(const show_style *st, const rlvr_rollout *r) {
    fprintf(st->out, "%s==== end: %s ====%s\n", dim(st), rlvr_stop_reason_name(r->stop), off(st));
    fflush(st->out);
}

void show_rollout(const show_style *st, const rlvr_rollout *r, const char *title) {
    show_prompt(st, r, title);
    for (int32_t t = 0; t < r->n_turns; t++) {
        show_policy(st, r, &r->turns[t], t + 1);
        show_observation(st, r, &r->turns[t]);
    }
    show_end(st, r);
}
