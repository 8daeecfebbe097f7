/* jobs/talk.c — what `rlvr generate` and `rlvr chat` share (jobs/talk.h). */
#include "jobs/talk.h"

#include <stdio.h>
#include <string.h>

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig) {
    (void)sig;
    interrupted = 1;
}

volatile sig_atomic_t *rlvr_talk_catch_interrupt(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    return &interrupted;
}

const char *rlvr_talk_options(rlvr_generate_options *o, double temperature, double top_p, int64_t seed,
                              int64_t max_new, int64_t context) {
    if (!(top_p > 0)) return "--top-p wants a number in (0, 1]";
    o->temperature = (float)temperature;
    o->top_p = (float)top_p;
    o->seed = (uint64_t)seed;
    o->max_new = (int32_t)max_new;
    o->context = (int32_t)context;
    return NULL;
}

const char *rlvr_talk_weights(rlvr_generate_options *o, const char *weights) {
    if (weights && rlvr_sampler_weights_parse(weights, &o->weights) < 0) return "--weights wants f32, bf16 or q8_0";
    return NULL;
}

void rlvr_talk_print_text(void *ctx, int sample, const char *bytes, size_t len) {
    (void)ctx;
    (void)sample;
    fwrite(bytes, 1, len, stdout);
    fflush(stdout);
}

/* A token's text with control characters escaped, for one table cell. */
static void token_cell(const rlvr_tokenizer *t, int32_t id, char *out, size_t cap) {
    char text[256];
    size_t len = 0, k = 0;
    if (rlvr_tokenizer_decode(t, &id, 1, true, text, sizeof text, &len) < 0) len = 0;
    for (size_t i = 0; i < len && k + 5 < cap; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '\n') k += (size_t)snprintf(out + k, cap - k, "\\n");
        else if (c == '\t') k += (size_t)snprintf(out + k, cap - k, "\\t");
        else if (c < 0x20 || c == 0x7f) k += (size_t)snprintf(out + k, cap - k, "\\x%02x", c);
        else out[k++] = (char)c;
    }
    out[k] = '\0';
}

void rlvr_talk_print_logprobs(const rlvr_generator *g, const rlvr_generation *s, int32_t n_prompt) {
    const rlvr_tokenizer *t = rlvr_generator_tokenizer(g);
    printf("%8s %8s %10s %9s  %s\n", "position", "id", "logprob", "entropy", "token");
    for (int32_t i = 0; i < s->n; i++) {
        char cell[128];
        token_cell(t, s->ids[i], cell, sizeof cell);
        printf("%8d %8d %10.5f %9.5f  \"%s\"\n", (int)(n_prompt + i), (int)s->ids[i], (double)s->logprobs[i],
               (double)s->entropies[i], cell);
    }
}

void rlvr_talk_print_summary(const rlvr_generator *g, const rlvr_generation *s) {
    char end[128] = "";
    if (s->stop == RLVR_GENERATE_STOP && s->n > 0) {
        char cell[96];
        token_cell(rlvr_generator_tokenizer(g), s->ids[s->n - 1], cell, sizeof cell);
        snprintf(end, sizeof end, " at %s", cell);
    }
    const char *why = s->stop == RLVR_GENERATE_STOP          ? "stopped"
                      : s->stop == RLVR_GENERATE_LENGTH      ? "reached --max-new"
                      : s->stop == RLVR_GENERATE_CONTEXT     ? "filled the context"
                                                             : "interrupted";
    fprintf(stderr, "(%d tokens, %s%s, %.1f tokens/s)\n", (int)s->n, why, end,
            s->seconds > 0 ? s->n / s->seconds : 0.0);
}
