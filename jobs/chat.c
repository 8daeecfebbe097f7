/* jobs/chat.c — `rlvr chat`: a conversation with a checkpoint's model
 * (train/conversation.h): parse, call, print. On a terminal it prompts;
 * on a pipe every input line is one user message and gets one reply, so a
 * conversation can be scripted. Ctrl-C stops the reply being sampled, not
 * the program. */
#include "core/error.h"
#include "jobs/args.h"
#include "jobs/commands.h"
#include "jobs/talk.h"
#include "train/conversation.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    rlvr_generate_options gen;
    const char *system;
    int64_t max_new, seed, context;
    double temperature, top_p;
    const char *weights;
    bool json;
} chat_args;

static void usage(FILE *out) {
    fprintf(out,
            "usage: rlvr chat --checkpoint C [--system TEXT] [--max-new N] [--temperature T] [--top-p P]\n"
            "                 [--seed S] [--context N] [--weights F] [--json]\n"
            "  --checkpoint C   an rlvr checkpoint (`rlvr model import`, sft, train)\n"
            "  --system TEXT    the system turn (default: the one the model's template adds)\n"
            "  --max-new N      tokens per reply at most (default 512; 0 = until the context is full)\n"
            "  --temperature T  sampling temperature (default 1; 0 = greedy)\n"
            "  --top-p P        sample from the most probable tokens holding P of the mass (default 1)\n"
            "  --seed S         sampling seed (default 1)\n"
            "  --context N      positions the conversation may fill (default: the model's max_seq); when\n"
            "                   it is full the oldest turns are left out, with a notice\n"
            "  --weights F      the sampler's weight format: f32 (default; log-probs exactly the trainer's),\n"
            "                   bf16 or q8_0 (GGUF's Q8_0): faster, log-probs a few hundredths of a nat off\n"
            "  --json           each reply as one JSON line: turn, reply, token_ids, prompt_ids, dropped, stop\n"
            "Each input line is a message. /reset forgets the conversation, /system TEXT sets the system\n"
            "turn (no TEXT: none), /save FILE writes the conversation as JSON messages, /quit ends (so does\n"
            "end of input); start a message with // to send one that begins with /. Ctrl-C stops a reply.\n");
}

static int parse(chat_args *a, int argc, char **argv) {
    *a = (chat_args){.max_new = 512, .seed = 1, .temperature = 1.0, .top_p = 1.0};
    const rlvr_opt opts[] = {
        RLVR_OPT("--checkpoint", RLVR_OPT_STRING, &a->gen.checkpoint, "C", .required = true),
        RLVR_OPT("--system", RLVR_OPT_STRING, &a->system, "TEXT"),
        RLVR_TALK_SAMPLING_OPTS(a),
        RLVR_OPT("--json", RLVR_OPT_FLAG, &a->json, NULL),
        {0},
    };
    int rc = rlvr_args_parse("chat", opts, usage, argc, argv);
    if (rc != RLVR_ARGS_CONTINUE) return rc;
    const char *wrong = rlvr_talk_options(&a->gen, a->temperature, a->top_p, a->seed, a->max_new, a->context);
    if (!wrong) wrong = rlvr_talk_weights(&a->gen, a->weights);
    if (wrong) return rlvr_args_error("chat", usage, "%s", wrong);
    a->gen.samples = 1;
    return RLVR_ARGS_CONTINUE;
}

static void print_ids(const char *name, const int32_t *ids, int32_t n) {
    printf(",\"%s\":[", name);
    for (int32_t i = 0; i < n; i++) printf("%s%d", i ? "," : "", (int)ids[i]);
    printf("]");
}

/* --json: the reply's line. The text is the library's JSON rendering of it. */
static void print_json(rlvr_generator *g, const rlvr_conversation *c, const rlvr_conversation_turn *t) {
    char *sample = NULL;
    if (rlvr_generation_json(g, &t->reply, 0, t->n_prompt, &sample) < 0) return;
    printf("{\"turn\":%d,\"dropped\":%d", rlvr_conversation_turns(c), t->dropped);
    print_ids("prompt_ids", t->prompt, t->n_prompt);
    printf(",\"reply\":%s}\n", sample);
    fflush(stdout);
    free(sample);
}

/* A line that starts with one /: a command. Returns 1 to go on, 0 to end. */
static int command(rlvr_conversation *c, const char *line) {
    int rc = 0;
    if (strcmp(line, "/quit") == 0 || strcmp(line, "/exit") == 0) return 0;
    if (strcmp(line, "/reset") == 0) {
        rlvr_conversation_reset(c);
        fprintf(stderr, "(the conversation is forgotten)\n");
    } else if (strncmp(line, "/system", 7) == 0 && (line[7] == ' ' || line[7] == '\0')) {
        rc = rlvr_conversation_set_system(c, line[7] ? line + 8 : NULL);
        if (rc == 0) fprintf(stderr, "(system turn %s)\n", line[7] && line[8] ? "set" : "removed");
    } else if (strncmp(line, "/save ", 6) == 0 && line[6]) {
        rc = rlvr_conversation_save(c, line + 6);
        if (rc == 0) fprintf(stderr, "(saved to %s)\n", line + 6);
    } else {
        fprintf(stderr, "(unknown command %s: /reset, /system TEXT, /save FILE, /quit; // sends a /)\n", line);
    }
    if (rc < 0) fprintf(stderr, "rlvr chat: error: %s\n", rlvr_error_last());
    return 1;
}

static int reply(rlvr_generator *g, rlvr_conversation *c, const char *text, size_t len, bool json,
                 volatile sig_atomic_t *stop) {
    rlvr_conversation_turn t = {0};
    rlvr_generate_hooks hooks = {.on_text = json ? NULL : rlvr_talk_print_text, .interrupt = stop};
    *stop = 0;
    int rc = rlvr_conversation_reply(c, text, len, &hooks, &t);
    if (rc == 0 && t.dropped > 0)
        fprintf(stderr, "(the context of %d tokens is full: left out the oldest %d turn%s)\n",
                (int)rlvr_generator_context(g), t.dropped, t.dropped == 1 ? "" : "s");
    if (rc == 0 && json) print_json(g, c, &t);
    if (rc == 0 && !json) {
        printf("\n");
        fflush(stdout);
        if (t.reply.stop != RLVR_GENERATE_STOP) rlvr_talk_print_summary(g, &t.reply);
    }
    rlvr_conversation_turn_free(&t);
    return rc;
}

/* Reads messages until /quit or the end of input. */
static int converse(rlvr_generator *g, rlvr_conversation *c, bool json) {
    bool tty = isatty(STDIN_FILENO);
    volatile sig_atomic_t *stop = rlvr_talk_catch_interrupt();
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    for (;;) {
        if (tty) fprintf(stderr, "> ");
        errno = 0;
        ssize_t n = getline(&line, &cap, stdin);
        if (n < 0 && errno == EINTR) { /* Ctrl-C at the prompt */
            clearerr(stdin);
            *stop = 0;
            fprintf(stderr, "\n(Ctrl-D or /quit ends the chat)\n");
            continue;
        }
        if (n < 0) break;
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
        if (n == 0) continue;
        if (line[0] == '/' && line[1] != '/') {
            if (!command(c, line)) break;
            continue;
        }
        const char *text = line[0] == '/' ? line + 1 : line;
        rc = reply(g, c, text, strlen(text), json, stop);
        if (rc == RLVR_ELIMIT) { /* that message is refused; the conversation goes on */
            fprintf(stderr, "rlvr chat: error: %s\n", rlvr_error_last());
            rc = 0;
        }
        if (rc < 0) break;
    }
    free(line);
    return rc;
}

int rlvr_cmd_chat(int argc, char **argv) {
    chat_args a;
    int parsed = parse(&a, argc, argv);
    if (parsed != RLVR_ARGS_CONTINUE) return parsed;
    rlvr_generator *g = NULL;
    rlvr_conversation *c = NULL;
    int rc = rlvr_generator_open(&g, &a.gen);
    if (rc == 0) rc = rlvr_conversation_new(&c, g, a.system);
    if (rc == 0 && isatty(STDIN_FILENO))
        fprintf(stderr, "chatting with %s (context %d tokens); /reset, /system TEXT, /save FILE, /quit\n",
                a.gen.checkpoint, (int)rlvr_generator_context(g));
    if (rc == 0) rc = converse(g, c, a.json);
    rlvr_conversation_free(c);
    rlvr_generator_free(g);
    return rc == 0 ? RLVR_EXIT_OK : rlvr_cmd_fail("chat", rc);
}
