/* jobs/generate.c — `rlvr generate`: a checkpoint's model answering one
 * prompt (train/generate.h): parse, call, print. Tokens stream to the
 * terminal as they are sampled; Ctrl-C stops the sampling and keeps what
 * was sampled. */
#include "core/error.h"
#include "enclave/fsutil.h"
#include "jobs/args.h"
#include "jobs/commands.h"
#include "jobs/talk.h"
#include "train/generate.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    rlvr_generate_options gen;
    const char *prompt, *file, *system, *dash;
    int64_t n, max_new, seed, context;
    double temperature, top_p;
    const char *weights;
    bool chat, raw, logprobs, json, ignore_stop;
} generate_args;

static void usage(FILE *out) {
    fprintf(out,
            "usage: rlvr generate --checkpoint C (--prompt TEXT | --file F | -) [--chat | --raw]\n"
            "                     [--system TEXT] [--max-new N] [--temperature T] [--top-p P] [--seed S]\n"
            "                     [--n N] [--context N] [--weights F] [--ignore-stop] [--logprobs] [--json]\n"
            "  --checkpoint C   an rlvr checkpoint (`rlvr model import`, sft, train)\n"
            "  --prompt TEXT    the prompt; --file F reads it from a file, - from standard input\n"
            "  --chat           render the prompt as a user turn in the model's chat format (the default\n"
            "                   for a model that has one); --raw continues the text as it is\n"
            "  --system TEXT    with --chat: the system turn (default: the one the model's template adds)\n"
            "  --max-new N      tokens per sample at most (default 256; 0 = until the context is full)\n"
            "  --temperature T  sampling temperature (default 1, as rollouts sample; 0 = greedy)\n"
            "  --top-p P        sample from the most probable tokens holding P of the mass (default 1)\n"
            "  --seed S         sampling seed (default 1): the same seed gives the same samples\n"
            "  --n N            samples sharing the prompt's KV rows, as a group's rollouts (default 1, at most %d)\n"
            "  --context N      positions per sample (default: the model's max_seq)\n"
            "  --weights F      the sampler's weight format: f32 (default; log-probs exactly the trainer's),\n"
            "                   bf16 or q8_0 (GGUF's Q8_0): faster, log-probs a few hundredths of a nat off\n"
            "  --ignore-stop    sample through the stop tokens: --max-new tokens each (comparisons, timing)\n"
            "  --logprobs       each token's log-prob and entropy under the model at T (T = 1 when greedy)\n"
            "  --json           one JSON object per sample: text, token_ids, logprobs, entropies, stop, ...\n"
            "A single sample streams as it is sampled; Ctrl-C stops it and keeps what was sampled.\n",
            RLVR_GENERATE_MAX_SAMPLES);
}

static int parse(generate_args *a, int argc, char **argv) {
    *a = (generate_args){.n = 1, .max_new = 256, .seed = 1, .temperature = 1.0, .top_p = 1.0};
    const rlvr_opt opts[] = {
        RLVR_OPT("--checkpoint", RLVR_OPT_STRING, &a->gen.checkpoint, "C", .required = true),
        RLVR_OPT("--prompt", RLVR_OPT_STRING, &a->prompt, "TEXT"),
        RLVR_OPT("--file", RLVR_OPT_STRING, &a->file, "F"),
        RLVR_OPT("--system", RLVR_OPT_STRING, &a->system, "TEXT"),
        RLVR_OPT("--chat", RLVR_OPT_FLAG, &a->chat, NULL),
        RLVR_OPT("--raw", RLVR_OPT_FLAG, &a->raw, NULL),
        RLVR_TALK_SAMPLING_OPTS(a),
        RLVR_OPT("--n", RLVR_OPT_INT, &a->n, "N", .min = 1, .max = RLVR_GENERATE_MAX_SAMPLES),
        RLVR_OPT("--ignore-stop", RLVR_OPT_FLAG, &a->ignore_stop, NULL),
        RLVR_OPT("--logprobs", RLVR_OPT_FLAG, &a->logprobs, NULL),
        RLVR_OPT("--json", RLVR_OPT_FLAG, &a->json, NULL),
        RLVR_OPT(NULL, RLVR_OPT_STRING, &a->dash, "-"),
        {0},
    };
    int rc = rlvr_args_parse("generate", opts, usage, argc, argv);
    if (rc != RLVR_ARGS_CONTINUE) return rc;
    if (a->dash && strcmp(a->dash, "-") != 0)
        return rlvr_args_error("generate", usage, "unexpected argument \"%s\" (the prompt goes after --prompt)",
                               a->dash);
    if (!!a->prompt + !!a->file + !!a->dash != 1)
        return rlvr_args_error("generate", usage, "missing the prompt: give one of --prompt TEXT, --file F or -");
    if (a->chat && a->raw) return rlvr_args_error("generate", usage, "--chat and --raw exclude each other");
    if (a->raw && a->system) return rlvr_args_error("generate", usage, "--system needs --chat");
    const char *wrong = rlvr_talk_options(&a->gen, a->temperature, a->top_p, a->seed, a->max_new, a->context);
    if (!wrong) wrong = rlvr_talk_weights(&a->gen, a->weights);
    if (wrong) return rlvr_args_error("generate", usage, "%s", wrong);
    a->gen.samples = (int32_t)a->n;
    a->gen.ignore_stop = a->ignore_stop;
    return RLVR_ARGS_CONTINUE;
}

/* The prompt's text from --prompt, --file or standard input. */
static int read_prompt(const generate_args *a, char **text, size_t *len) {
    if (a->prompt) {
        *len = strlen(a->prompt);
        *text = strdup(a->prompt);
        return *text ? 0 : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    }
    if (a->file) return rlvr_fs_read_file(a->file, text, len);
    return rlvr_fs_read_fd(STDIN_FILENO, "standard input", text, len);
}

static void print_sample(const rlvr_generator *g, const rlvr_generation *s, int i, int n, int32_t n_prompt,
                         const generate_args *a, bool streamed) {
    if (a->json) {
        char *line = NULL;
        if (rlvr_generation_json(g, s, i, n_prompt, &line) == 0) printf("%s\n", line);
        free(line);
        return;
    }
    if (n > 1) {
        printf("--- sample %d of %d ---\n", i + 1, n);
        char *text = NULL;
        size_t len = 0;
        if (rlvr_generation_text(g, s, &text, &len) == 0) fwrite(text, 1, len, stdout);
        free(text);
    }
    if (n > 1 || streamed) printf("\n");
    if (a->logprobs) rlvr_talk_print_logprobs(g, s, n_prompt);
    fflush(stdout);
    rlvr_talk_print_summary(g, s);
}

int rlvr_cmd_generate(int argc, char **argv) {
    generate_args a;
    int parsed = parse(&a, argc, argv);
    if (parsed != RLVR_ARGS_CONTINUE) return parsed;
    rlvr_generator *g = NULL;
    rlvr_token_buf prompt = {0};
    rlvr_generation samples[RLVR_GENERATE_MAX_SAMPLES] = {0};
    char *text = NULL;
    size_t len = 0;
    int rc = read_prompt(&a, &text, &len);
    if (rc == 0) rc = rlvr_generator_open(&g, &a.gen);
    bool chat = g && (a.chat || (!a.raw && rlvr_generator_chats(g)));
    if (rc == 0) rc = rlvr_generate_prompt(g, chat, a.system, text, len, &prompt);
    bool stream = a.n == 1 && !a.json;
    rlvr_generate_hooks hooks = {.on_text = stream ? rlvr_talk_print_text : NULL,
                                 .interrupt = rlvr_talk_catch_interrupt()};
    if (rc == 0) rc = rlvr_generate(g, prompt.ids, prompt.n, (int)a.n, samples, &hooks);
    for (int i = 0; rc == 0 && i < a.n; i++) print_sample(g, &samples[i], i, (int)a.n, prompt.n, &a, stream);
    for (int i = 0; i < a.n; i++) rlvr_generation_free(&samples[i]);
    rlvr_token_buf_free(&prompt);
    rlvr_generator_free(g);
    free(text);
    return rc == 0 ? RLVR_EXIT_OK : rlvr_cmd_fail("generate", rc);
}
