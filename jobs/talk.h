/* jobs/talk.h — what `rlvr generate` and `rlvr chat` share on the command
 * line: the sampling flags, Ctrl-C, and how a sample is printed. */
#ifndef RLVR_JOBS_TALK_H
#define RLVR_JOBS_TALK_H

#include "train/generate.h"

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

/* The sampling flags of a verb's table; `a` has int64_t max_new, seed,
 * context, double temperature, top_p and const char *weights. */
#define RLVR_TALK_SAMPLING_OPTS(a)                                                                    \
    RLVR_OPT("--max-new", RLVR_OPT_INT, &(a)->max_new, "N", .min = 0, .max = 10000000),             \
        RLVR_OPT("--temperature", RLVR_OPT_DOUBLE, &(a)->temperature, "T", .dmin = 0, .dmax = 100),  \
        RLVR_OPT("--top-p", RLVR_OPT_DOUBLE, &(a)->top_p, "P", .dmin = 0, .dmax = 1),                \
        RLVR_OPT("--seed", RLVR_OPT_INT, &(a)->seed, "S", .min = 0, .max = INT64_MAX),               \
        RLVR_OPT("--context", RLVR_OPT_INT, &(a)->context, "N", .min = 0, .max = 10000000),           \
        RLVR_OPT("--weights", RLVR_OPT_STRING, &(a)->weights, "F")

/* The flags' values into `o` (its checkpoint and samples are left as they
 * are): NULL, or what is wrong with them for rlvr_args_error. */
const char *rlvr_talk_options(rlvr_generate_options *o, double temperature, double top_p, int64_t seed, int64_t max_new,
                       int64_t context);

/* --weights F (NULL: not given, f32) into o->weights: NULL, or what is
 * wrong for rlvr_args_error. */
const char *rlvr_talk_weights(rlvr_generate_options *o, const char *weights);

/* Catches SIGINT from now on (without restarting reads); the returned flag
 * is raised by it and is the hooks' interrupt. */
volatile sig_atomic_t *rlvr_talk_catch_interrupt(void);

/* rlvr_generate_hooks.on_text: the bytes to standard output, flushed. */
void rlvr_talk_print_text(void *ctx, int sample, const char *bytes, size_t len);

/* A sample's tokens, one line each: position, id, log-prob, entropy, text. */
void rlvr_talk_print_logprobs(const rlvr_generator *g, const rlvr_generation *s, int32_t n_prompt);

/* "(N tokens, stopped at TOKEN, X tokens/s)" on standard error. */
void rlvr_talk_print_summary(const rlvr_generator *g, const rlvr_generation *s);

#endif
