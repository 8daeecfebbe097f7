/* train/inspect.c — a run's rollouts for a human (train/inspect.h). */
#include "train/inspect.h"

#include "core/error.h"
#include "train/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int rlvr_inspect_shard_tokenizer(const char *shard_path, rlvr_tokenizer **tok, char *found, size_t cap) {
    char dir[4096], path[4200];
    *tok = NULL;
    if (cap) found[0] = '\0';
    snprintf(dir, sizeof dir, "%s", shard_path);
    for (int up = 0; up < 2; up++) { /* <run>/shards/<file> -> <run> */
        char *slash = strrchr(dir, '/');
        if (slash) *slash = 0;
        else snprintf(dir, sizeof dir, ".");
    }
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    if (access(path, R_OK) == 0) {
        RLVR_TRY(rlvr_tokenizer_file_read(path, tok));
        snprintf(found, cap, "%s", path);
        return 0;
    }
    if (rlvr_tokenizer_new_byte(tok) < 0) {
        *tok = NULL;
        rlvr_error_clear();
    }
    return 0;
}

static void put_token(FILE *f, const rlvr_tokenizer *tok, int32_t id) {
    char buf[64];
    size_t len = 0;
    if (!tok || rlvr_tokenizer_decode(tok, &id, 1, true, buf, sizeof buf, &len) < 0) {
        rlvr_error_clear();
        fprintf(f, "<%d>", id);
        return;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)buf[i];
        if (c == '\n' || c == '\t' || c >= 0x20) fputc(c, f);
        else fprintf(f, "\\x%02x", c);
    }
}

/* The tokens as text, segments marked (see train/inspect.h). */
static void put_text(FILE *f, const rlvr_rollout *r, const rlvr_tokenizer *tok, bool color) {
    static const char *const reset = "\033[0m";
    int who = -1;
    for (int32_t t = 0; t < r->n_tokens; t++) {
        int m = r->mask[t];
        if (m != who) { /* close the previous segment, open the next */
            if (who == RLVR_TOKEN_POLICY) fputs(color ? reset : "}}", f);
            if (who == RLVR_TOKEN_OBSERVATION) fputs(color ? reset : "]]", f);
            if (m == RLVR_TOKEN_POLICY) fputs(color ? "\033[32m" : "{{", f);
            if (m == RLVR_TOKEN_OBSERVATION) fputs(color ? "\033[36m" : "[[", f);
            who = m;
        }
        put_token(f, tok, r->tokens[t]);
    }
    if (who == RLVR_TOKEN_POLICY) fputs(color ? reset : "}}", f);
    if (who == RLVR_TOKEN_OBSERVATION) fputs(color ? reset : "]]", f);
    fputc('\n', f);
}

/* Its header: identity, verdict, reward, sizes, timings, seed, turns. */
static void put_header(FILE *f, const rlvr_rollout *r, int64_t index, float advantage, bool color) {
    const char *bold = color ? "\033[1m" : "", *dim = color ? "\033[2m" : "", *off = color ? "\033[0m" : "";
    fprintf(f, "\n%s── rollout %lld: task %s, group %lld, index %d, policy version %lld (staleness %lld)%s\n", bold,
            (long long)index, r->task_id, (long long)r->group_id, r->rollout_index, (long long)r->policy_version,
            (long long)r->staleness, off);
    fprintf(f, "   verdict %s (reason %d), stop %s, advantage %+.4f\n", rlvr_verdict_name(r->verdict),
            r->verdict_reason, rlvr_stop_reason_name(r->stop), advantage);
    fprintf(f, "   reward %.4f = outcome %.4f, format %.4f, length penalty %.4f\n", r->reward.total,
            r->reward.outcome, r->reward.format, r->reward.length_penalty);
    fprintf(f,
            "   tokens %d (prompt %d, policy %d), turns %d; seconds: generate %.3f, tool %.3f, verify %.3f, "
            "queue %.3f\n",
            r->n_tokens, r->prompt_tokens, rlvr_rollout_policy_tokens(r), r->n_turns, r->timings.generate_s,
            r->timings.tool_s, r->timings.verify_s, r->timings.queue_s);
    fprintf(f, "   seed %llu, sample sequence %u\n", (unsigned long long)r->seed, r->sample_sequence);
    for (int32_t k = 0; k < r->n_turns; k++) {
        const rlvr_turn *u = &r->turns[k];
        fprintf(f, "   turn %d: policy [%d, %d)", k, u->policy_start, u->policy_end);
        if (u->tool_name[0])
            fprintf(f, ", tool %s exit %d in %.3f s%s%s, observation [%d, %d)", u->tool_name, u->exit_status,
                    u->duration_s, u->call_parsed ? "" : ", call did not parse",
                    u->output_truncated ? ", output truncated" : "", u->observation_start, u->observation_end);
        fputc('\n', f);
    }
    fprintf(f, "   %s(prompt plain, %spolicy%s%s, %sobservation%s%s)%s\n", dim, color ? "\033[32m" : "",
            color ? "" : " in {{ }}", off, color ? "\033[36m" : "", color ? "" : " in [[ ]]", off, off);
}

int rlvr_inspect_rollout(const rlvr_rollout *r, int64_t index, float advantage, const rlvr_tokenizer *tok,
                         bool color, bool tokens, char **text) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len); /* the text is built in memory */
    if (!f) return RLVR_FAIL(RLVR_ENOMEM, "out of memory rendering a rollout");
    put_header(f, r, index, advantage, color);
    put_text(f, r, tok, color);
    if (tokens) {
        static const char *const who[] = {"prompt", "policy", "observation"};
        fprintf(f, "   %6s %8s %-12s %10s %10s\n", "pos", "id", "who", "logprob", "entropy");
        for (int32_t t = 0; t < r->n_tokens; t++)
            fprintf(f, "   %6d %8d %-12s %10.4f %10.4f\n", t, r->tokens[t], r->mask[t] <= 2 ? who[r->mask[t]] : "?",
                    r->logprobs[t], r->entropy[t]);
    }
    bool ok = !ferror(f);
    if (fclose(f) != 0 || !ok) {
        free(buf);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory rendering a rollout");
    }
    *text = buf;
    return 0;
}
