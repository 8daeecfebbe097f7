/* jobs/main.c — the `rlvr` command: finds the verb and runs it. */
#include "core/buildinfo.h"
#include "core/config.h"
#include "core/error.h"
#include "core/log.h"
#include "jobs/commands.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef RLVR_VERSION
#define RLVR_VERSION "unknown"
#endif

const rlvr_command rlvr_commands[] = {
    {"bench", "WHAT [--quick] [--json] [--model NAME | --checkpoint FILE (policy)]",
     "run a benchmark and print JSON lines plus a table", rlvr_cmd_bench},
    {"config", "check FILE | keys [--markdown]", "validate a configuration file, or list every key", rlvr_cmd_config},
    {"plan", "CONFIG [--json]", "capacity planner: signal, false positives, MC cost, throughput", rlvr_cmd_plan},
    {"inspect", "FILE [--rollout N] [--verify]", "summarise a shard, checkpoint, metrics or manifest file", rlvr_cmd_inspect},
    {"tasks", "gen | list | check | mine | import", "generate, list, validate, mine from git history or import (SWE-bench, Harbor) a task pool", rlvr_cmd_tasks},
    {"rollout", "--task TASK [--checkpoint C] [--n N] [--show]", "run rollouts of one task through the harness and show them", rlvr_cmd_rollout},
    {"agent", "--task TASK [--checkpoint C] [--verify]", "run the policy on one task, printing each turn as it happens", rlvr_cmd_agent},
    {"verify", "--task TASK --patch FILE [--runs N] [--json]", "the enclave's verdict for one patch (or answer), as training scores it", rlvr_cmd_verify},
    {"sft", "CONFIG [--out DIR] [--resume]", "supervised bootstrap on demonstrations (reference solutions via the tools)", rlvr_cmd_sft},
    {"eval", "--checkpoint C [--checkpoint C2] --pool POOL [--json]", "pass@1 / pass@k / pass^k of checkpoints on held-out tasks, paired difference", rlvr_cmd_eval},
    {"train", "CONFIG [--out DIR] [--resume] [--until-step N]", "GRPO with verifiable rewards (after sft)", rlvr_cmd_train},
    {"quickstart", "[--out DIR] [--config F]", "the embedded default end to end: pool, SFT, RL, held-out evaluation", rlvr_cmd_quickstart},
    {"sweep", "--checkpoints GLOB --pool POOL --samples N [--shards S] [--local]", "evaluate many checkpoints as a Slurm job array (or --local): pass@k per checkpoint and family", rlvr_cmd_sweep},
    {"gate", "--candidate C --baseline B [--pool P] [--promote DIR]", "release gate: held-out target, regression suite, tool-call compliance; promote or reject", rlvr_cmd_gate},
    {"report", "RUN [--out FILE.html] [--sweep DIR]", "one self-contained HTML page of a run's metrics, gates and sweeps (SVG charts)", rlvr_cmd_report},
    {"submit", "CONFIG [--out RUNDIR] [--dry-run]", "the run as a Slurm chain: SFT, RL segments, a gate after each", rlvr_cmd_submit},
    {"status", "RUNDIR", "a run's Slurm chain: job states, markers, checkpoints, last metrics", rlvr_cmd_status},
    {"cancel", "RUNDIR", "cancel the queued and running jobs of a run's Slurm chain", rlvr_cmd_cancel},
    {"generate", "--checkpoint C (--prompt TEXT | --file F | -)", "a model's reply to one prompt: greedy or sampled, --n samples, log-probs, JSON", rlvr_cmd_generate},
    {"chat", "--checkpoint C [--system TEXT]", "talk to a model in its chat template (a terminal, or one reply per line of a pipe)", rlvr_cmd_chat},
    {"model", "import|export|info ... (model help)", "pretrained Llama/Mistral/Qwen2 weights (HF directory, GGUF) in and out of checkpoints", rlvr_cmd_model},
    {NULL, NULL, NULL, NULL},
};

static void print_help(FILE *out) {
    fprintf(out,
            "rlvr %s — reinforcement learning with verifiable rewards for tool-using agents\n\n"
            "usage: rlvr VERB [ARGS]\n\n",
            RLVR_VERSION);
    for (const rlvr_command *c = rlvr_commands; c->name; c++)
        fprintf(out, "  rlvr %-6s %-28s %s\n", c->name, c->usage, c->summary);
    fprintf(out,
            "\n  rlvr help                           this text\n"
            "  rlvr --version                      version and build\n\n"
            "Environment: RLVR_LOG=error|warn|info|debug sets the log level (default info).\n"
            "Documentation: README.md, docs/CONFIG.md, docs/FORMATS.md\n");
}

int rlvr_cmd_parse_int(const char *verb, const char *flag, const char *text, int64_t lo, int64_t hi, int64_t *out) {
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end || v < lo || v > hi) {
        fprintf(stderr, "rlvr %s: %s wants an integer in %lld..%lld, got \"%s\"\n", verb, flag, (long long)lo,
                (long long)hi, text);
        return -1;
    }
    *out = v;
    return 0;
}

int rlvr_cmd_fail(const char *verb, int rc) {
    const char *msg = rlvr_error_last(), *where = rlvr_error_where();
    if (where[0] && rlvr_log_get_level() >= RLVR_LOG_DEBUG)
        fprintf(stderr, "rlvr %s: error: %s (at %s)\n", verb, msg[0] ? msg : rlvr_error_name(rc), where);
    else
        fprintf(stderr, "rlvr %s: error: %s\n", verb, msg[0] ? msg : rlvr_error_name(rc));
    return rc == RLVR_ECONFIG ? RLVR_EXIT_USAGE : RLVR_EXIT_FAILURE;
}

/* OpenMP threads that spin while waiting starve everything else on the
 * node: tool and test processes in sandboxes, other MPI ranks, other jobs.
 * On 2 shared cores a spinning pool made generation 3-10x slower. libgomp
 * reads OMP_WAIT_POLICY when it is loaded, before main, so when the user has
 * not chosen a policy rlvr sets "passive" and executes itself once again.
 * Set OMP_WAIT_POLICY (e.g. active) to keep your own choice. */
static void prefer_passive_openmp(int argc, char **argv) {
    /* `generate` and `chat` run no sandbox beside the sampler: libgomp's
     * default, a short spin before sleeping, keeps a decode step's 4-6
     * barriers per layer from paying a wake-up each (q8_0 batch-1 decode of
     * SmolLM2 85 -> 125 tokens/s here) and still sleeps while chat waits
     * for the next line (docs/OPERATIONS.md "rlvr generate") */
    bool talking = argc > 1 && (strcmp(argv[1], "generate") == 0 || strcmp(argv[1], "chat") == 0);
    if (getenv("OMP_WAIT_POLICY") || talking) {
        prctl(PR_SET_NAME, "rlvr"); /* after the exec, ps would show "exe" */
        return;
    }
    if (setenv("OMP_WAIT_POLICY", "passive", 1) != 0) return;
    execv("/proc/self/exe", argv); /* returns only on failure: go on as we are */
}

int main(int argc, char **argv) {
    prefer_passive_openmp(argc, argv);
    rlvr_log_set_level(RLVR_LOG_INFO);
    rlvr_log_init_from_env();
    if (argc < 2 || strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        print_help(stdout);
        return argc < 2 ? RLVR_EXIT_USAGE : RLVR_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        rlvr_buildinfo b;
        char text[2048];
        rlvr_buildinfo_get(&b);
        rlvr_buildinfo_format(&b, text, sizeof text);
        fputs(text, stdout);
        return RLVR_EXIT_OK;
    }
    for (const rlvr_command *c = rlvr_commands; c->name; c++)
        if (strcmp(argv[1], c->name) == 0) return c->run(argc - 1, argv + 1);

    const char *closest = NULL;
    size_t best = (size_t)-1;
    for (const rlvr_command *c = rlvr_commands; c->name; c++) {
        size_t d = rlvr_edit_distance(argv[1], c->name);
        if (d < best) {
            best = d;
            closest = c->name;
        }
    }
    fprintf(stderr, "rlvr: unknown verb \"%s\"", argv[1]);
    if (closest && best <= 3) fprintf(stderr, "; did you mean \"%s\"?", closest);
    fprintf(stderr, " (rlvr help lists the verbs)\n");
    return RLVR_EXIT_USAGE;
}
