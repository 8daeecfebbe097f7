/* jobs/verify.c — `rlvr verify --task TASK --patch FILE`: the verdict the
 * enclave gives one patch (or one arith answer), scored exactly as training
 * scores a rollout that ends with it (envs/score.h): parse, call, print. */
#include "core/config.h"
#include "core/error.h"
#include "enclave/config.h"
#include "enclave/fsutil.h"
#include "enclave/reason.h"
#include "envs/score.h"
#include "jobs/args.h"
#include "jobs/commands.h"
#include "jobs/schemas.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *task, *patch, *config;
    int64_t runs, seed; /* runs 0: the configuration's consensus_runs */
    bool json;
} verify_args;

static void usage(FILE *out) {
    fprintf(out,
            "usage: rlvr verify --task TASK --patch FILE [--runs N] [--seed S] [--config RUN.ini] [--json]\n"
            "  --task TASK       a task spec file (docs/TASKS.md)\n"
            "  --patch FILE      a unified git patch against the task's base commit, or an arith task's\n"
            "                    answer; - reads standard input\n"
            "  --runs N          runs a passing patch needs, all passing (default: [enclave] consensus_runs, 3)\n"
            "  --seed S          the runs' seeds and shuffled test orders (default 1)\n"
            "  --config RUN.ini  [sandbox], [enclave] and [reward] outcome of a run, as its training scores\n"
            "  --json            one JSON object instead of the summary\n"
            "Prints the verdict only (outcome, reason, partial credit, runs, durations), never a test\n"
            "name or the hidden tests' output. Exit status: 0 pass, 1 fail, rejected, timeout or dropped,\n"
            "2 bad usage, a task or patch that cannot be read, or an enclave that failed (infra).\n");
}

static int parse(verify_args *a, int argc, char **argv) {
    *a = (verify_args){.seed = 1};
    const rlvr_opt opts[] = {
        RLVR_OPT("--task", RLVR_OPT_STRING, &a->task, "TASK", .required = true),
        RLVR_OPT("--patch", RLVR_OPT_STRING, &a->patch, "FILE", .required = true),
        RLVR_OPT("--config", RLVR_OPT_STRING, &a->config, "RUN.ini"),
        RLVR_OPT("--runs", RLVR_OPT_INT, &a->runs, "N", .min = 1, .max = 100),
        RLVR_OPT("--seed", RLVR_OPT_INT, &a->seed, "S", .min = 0, .max = INT64_MAX),
        RLVR_OPT("--json", RLVR_OPT_FLAG, &a->json, NULL),
        {0},
    };
    return rlvr_args_parse("verify", opts, usage, argc, argv);
}

static void print_human(const rlvr_task *t, const rlvr_score *s) {
    const rlvr_enclave_verdict *v = &s->verdict;
    printf("task %s (%s%s): %s\n", t->id, t->verifier == RLVR_VERIFIER_ARITH ? "arith" : "tests",
           t->verifier == RLVR_VERIFIER_ARITH ? "" : s->judged ? ", judge mode" : ", command mode",
           rlvr_verdict_name(v->verdict));
    printf("  reason: %s (%d)\n", rlvr_reason_name(v->reason), (int)v->reason);
    if (v->tests_total > 0)
        printf("  tests: %d of %d passed in the first run (partial %.3f); FAIL_TO_PASS %d of %d (share %.3f)%s\n",
               v->tests_passed, v->tests_total, v->partial, v->f2p_passed, v->f2p_total, v->f2p_partial,
               v->p2p_failed ? "; a PASS_TO_PASS test failed" : "");
    printf("  outcome as the reward takes it: %.3f\n", s->outcome);
    if (t->verifier == RLVR_VERIFIER_ARITH) printf("  checked in process in %.3f s\n", v->wall_s);
    else printf("  runs: %d in %.2f s (in enclaves %.2f s)\n", (int)v->runs, v->wall_s, v->enclave_s);
}

static void print_json(const rlvr_task *t, const rlvr_score *s) {
    const rlvr_enclave_verdict *v = &s->verdict;
    printf("{\"task\": \"%s\", \"verdict\": \"%s\", \"reason\": \"%s\", \"reason_code\": %d, \"judged\": %s, "
           "\"partial\": %.6g, \"tests_passed\": %d, \"tests_total\": %d, \"f2p_partial\": %.6g, "
           "\"f2p_passed\": %d, \"f2p_total\": %d, \"p2p_failed\": %s, \"outcome\": %.6g, \"runs\": %d, "
           "\"wall_s\": %.6g, \"enclave_s\": %.6g}\n",
           t->id, rlvr_verdict_name(v->verdict), rlvr_reason_name(v->reason), (int)v->reason,
           s->judged ? "true" : "false", v->partial, v->tests_passed, v->tests_total, v->f2p_partial, v->f2p_passed,
           v->f2p_total, v->p2p_failed ? "true" : "false", s->outcome, (int)v->runs, v->wall_s, v->enclave_s);
}

/* The exit status a verdict means. */
static int exit_for(rlvr_verdict v) {
    return v == RLVR_VERDICT_PASS ? RLVR_EXIT_OK : v == RLVR_VERDICT_INFRA ? RLVR_EXIT_USAGE : RLVR_EXIT_FAILURE;
}

int rlvr_cmd_verify(int argc, char **argv) {
    verify_args a;
    int parsed = parse(&a, argc, argv);
    if (parsed != RLVR_ARGS_CONTINUE) return parsed;
    rlvr_config *cfg = NULL;
    rlvr_task *task = NULL;
    rlvr_sandbox_host *host = NULL;
    char *text = NULL;
    size_t len = 0;
    rlvr_score_options so;
    rlvr_sandbox_host_options ho = RLVR_SANDBOX_HOST_OPTIONS_INIT;
    rlvr_score s;
    /* without --config, every section's defaults */
    int rc = a.config ? rlvr_config_load(&cfg, a.config, rlvr_all_config_schemas)
                      : rlvr_config_parse(&cfg, "", "(defaults)", rlvr_all_config_schemas);
    if (rc == 0) rc = rlvr_score_options_from_config(&so, cfg);
    if (rc == 0) rc = rlvr_sandbox_host_options_from_config(cfg, &ho);
    if (rc == 0) rc = rlvr_task_load_file(&task, a.task);
    if (rc == 0) rc = strcmp(a.patch, "-") == 0 ? rlvr_fs_read_fd(0, "standard input", &text, &len)
                                                 : rlvr_fs_read_file(a.patch, &text, &len);
    if (rc == 0 && task->verifier == RLVR_VERIFIER_TESTS) rc = rlvr_sandbox_host_new(&host, &ho);
    if (rc == 0) {
        if (a.runs) so.consensus_runs = (int)a.runs;
        so.seed = (uint64_t)a.seed;
        rc = rlvr_score_patch(task, host, &so, text, len, &s);
    }
    int status = RLVR_EXIT_USAGE;
    if (rc < 0) {
        rlvr_cmd_fail("verify", rc);
    } else {
        if (a.json) print_json(task, &s);
        else print_human(task, &s);
        status = exit_for(s.verdict.verdict);
    }
    free(text);
    rlvr_sandbox_host_free(host);
    rlvr_task_free(task);
    rlvr_config_free(cfg);
    return status;
}
