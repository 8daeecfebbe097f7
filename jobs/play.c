/* jobs/play.c — the two verbs that play one task through the harness
 * (train/play.h, the code path training and evaluation use), printing the
 * trajectories for humans: the prompt and the headers dimmed, the policy's
 * text inside {{...}}, each observation inside [[...]], in colour when asked.
 * Without --checkpoint the policy is a small random-weights model (to watch
 * the harness, not to solve anything).
 *   `rlvr rollout --task TASK [--n N] [--show]`: N rollouts, verified, one
 *   line each; --show renders each trajectory.
 *   `rlvr agent --task TASK [--verify]`: interactive and deployment use of
 *   the policy (docs/TASKS.md "Harness"): one rollout printed as it happens
 *   from the harness's events, then the patch it leaves in its workspace
 *   and, with --verify, the enclave's verdict. Exit status 0 when the
 *   rollout ran, whatever its verdict. */
#include "core/error.h"
#include "enclave/reason.h"
#include "jobs/args.h"
#include "jobs/commands.h"
#include "jobs/schemas.h"
#include "train/play.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- printing ------------------------------------------------------------- */

typedef struct {
    const rlvr_tokenizer *tok;
    bool color;
} show_style;

static const char *dim(const show_style *st) { return st->color ? "\033[2m" : ""; }
static const char *off(const show_style *st) { return st->color ? "\033[0m" : ""; }

/* Ids [from, to) of the record decoded with the special tokens spelled out. */
static void show_tokens(const show_style *st, const rlvr_rollout *r, int32_t from, int32_t to) {
    size_t len = 0;
    if (to <= from || rlvr_tokenizer_decode(st->tok, r->tokens + from, to - from, true, NULL, 0, &len) < 0) {
        fputs("<ids outside the tokenizer>", stdout);
        return;
    }
    char *s = malloc(len + 1);
    if (s && rlvr_tokenizer_decode(st->tok, r->tokens + from, to - from, true, s, len + 1, &len) == 0)
        fwrite(s, 1, len, stdout);
    free(s);
}

static void show_prompt(const show_style *st, const rlvr_rollout *r, const char *title) {
    printf("%s==== %s: prompt (%d tokens) ====%s\n", dim(st), title, r->prompt_tokens, off(st));
    show_tokens(st, r, 0, r->prompt_tokens);
    putchar('\n');
    fflush(stdout);
}

static void show_policy(const show_style *st, const rlvr_rollout *r, const rlvr_turn *t, int32_t number) {
    printf("%s---- turn %d: policy, %d tokens ----%s\n%s{{", dim(st), number, t->policy_end - t->policy_start, off(st),
           st->color ? "\033[32m" : "");
    show_tokens(st, r, t->policy_start, t->policy_end);
    printf("}}%s\n", off(st));
    fflush(stdout);
}

/* Nothing when the turn got no observation. */
static void show_observation(const show_style *st, const rlvr_rollout *r, const rlvr_turn *t) {
    if (t->observation_end <= t->observation_start) return;
    printf("%s---- observation: %s, exit %d, %.3f s%s ----%s\n%s[[", dim(st), t->tool_name[0] ? t->tool_name : "error",
           t->exit_status, t->duration_s, t->output_truncated ? ", cut" : "", off(st), st->color ? "\033[36m" : "");
    show_tokens(st, r, t->observation_start, t->observation_end);
    printf("]]%s\n", off(st));
    fflush(stdout);
}

static void show_end(const show_style *st, const rlvr_rollout *r) {
    printf("%s==== end: %s ====%s\n", dim(st), rlvr_stop_reason_name(r->stop), off(st));
    fflush(stdout);
}

/* ---- the shared flags --------------------------------------------------------- */

#define PLAY_FLAGS_HELP                                                                           \
    "  --task TASK        a task spec (.json)\n"                                                  \
    "  --checkpoint C     policy weights (default: a small random-weights model)\n"              \
    "  --seed S           sampling seed (default 1)\n"                                            \
    "  --temperature T    sampling temperature (default 1; 0 = greedy)\n"                          \
    "  --weights F        the sampler's weight format: f32 (default; the trainer's log-probs),\n"    \
    "                     bf16 or q8_0: faster, less memory, log-probs a few hundredths of a nat off\n" \
    "  --color, --no-color  colour the trajectory (default: on a terminal, unless NO_COLOR is set)\n"

typedef struct {
    rlvr_play_options play;
    int64_t seed, n;
    double temperature;
    const char *weights;
    bool color, no_color, show, verify;
} play_args;

/* Parses the shared flags and the verb's own (`extra`, up to 2 entries). */
static int play_parse(play_args *a, const char *verb, void (*usage)(FILE *), const rlvr_opt *extra, int argc,
                      char **argv) {
    rlvr_opt opts[10] = {
        RLVR_OPT("--task", RLVR_OPT_STRING, &a->play.task, "TASK", .required = true),
        RLVR_OPT("--checkpoint", RLVR_OPT_STRING, &a->play.checkpoint, "C"),
        RLVR_OPT("--seed", RLVR_OPT_INT, &a->seed, "S", .min = 0, .max = INT64_MAX),
        RLVR_OPT("--temperature", RLVR_OPT_DOUBLE, &a->temperature, "T"),
        RLVR_OPT("--color", RLVR_OPT_FLAG, &a->color, NULL),
        RLVR_OPT("--no-color", RLVR_OPT_FLAG, &a->no_color, NULL),
        RLVR_OPT("--weights", RLVR_OPT_STRING, &a->weights, "F"),
    };
    for (int k = 0; extra[k].kind != RLVR_OPT_END; k++) opts[7 + k] = extra[k];
    int parsed = rlvr_args_parse(verb, opts, usage, argc, argv);
    if (parsed != RLVR_ARGS_CONTINUE) return parsed;
    if (!(a->temperature >= 0) || !isfinite(a->temperature))
        return rlvr_args_error(verb, usage, "--temperature wants a number >= 0 (0 = greedy)");
    if (a->weights && rlvr_sampler_weights_parse(a->weights, &a->play.weights) < 0)
        return rlvr_args_error(verb, usage, "--weights wants f32, bf16 or q8_0");
    a->play.seed = (uint64_t)a->seed;
    a->play.temperature = (float)a->temperature;
    a->play.schemas = rlvr_all_config_schemas;
    if (!a->color) a->color = !a->no_color && isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
    return RLVR_ARGS_CONTINUE;
}

static void play_args_default(play_args *a) { *a = (play_args){.seed = 1, .temperature = 1.0, .n = 1}; }

/* ---- rlvr rollout ------------------------------------------------------------- */

static void rollout_usage(FILE *out) {
    fprintf(out, "usage: rlvr rollout --task TASK [--checkpoint C] [--n N] [--show] [--seed S] [--temperature T]\n"
                 "                    [--weights F] [--color | --no-color]\n" PLAY_FLAGS_HELP
                 "  --n N              rollouts (default 1)\n"
                 "  --show             render each trajectory: policy text and observations told apart\n");
}

static void rollout_summary(int i, const rlvr_harness_job *j) {
    const rlvr_rollout *r = &j->record;
    printf("rollout %d: task %s, %d turns, %d policy tokens, %d tokens, stop %s, verdict %s%s%s, "
           "calls %d (%d parsed), generate %.3f s, tools %.3f s, verify %.3f s\n",
           i, r->task_id, r->n_turns, rlvr_rollout_policy_tokens(r), r->n_tokens, rlvr_stop_reason_name(r->stop),
           rlvr_verdict_name(r->verdict), r->verdict_reason ? " / " : "",
           r->verdict_reason ? rlvr_reason_name(r->verdict_reason) : "", j->calls, j->calls_parsed,
           r->timings.generate_s, r->timings.tool_s, r->timings.verify_s);
}

int rlvr_cmd_rollout(int argc, char **argv) {
    play_args a;
    play_args_default(&a);
    const rlvr_opt extra[] = {
        RLVR_OPT("--n", RLVR_OPT_INT, &a.n, "N", .min = 1, .max = 4096),
        RLVR_OPT("--show", RLVR_OPT_FLAG, &a.show, NULL),
        {0},
    };
    int parsed = play_parse(&a, "rollout", rollout_usage, extra, argc, argv);
    if (parsed != RLVR_ARGS_CONTINUE) return parsed;
    int n = (int)a.n;
    rlvr_play p;
    memset(&p, 0, sizeof p);
    rlvr_harness_job *jobs = calloc((size_t)n, sizeof *jobs);
    int rc = jobs ? rlvr_play_open(&p, &a.play, n < 16 ? n : 16) : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    for (int i = 0; rc == 0 && i < n; i++) {
        jobs[i].task = p.task;
        jobs[i].sequence = (uint32_t)i;
    }
    if (rc == 0) rc = rlvr_harness_run(p.sampler, p.tok, &p.opt, jobs, n);
    for (int i = 0; rc == 0 && i < n; i++) rc = rlvr_play_verify(&p, &jobs[i], a.play.seed + (uint64_t)i);
    int passed = 0;
    show_style st = {.tok = p.tok, .color = a.color};
    for (int i = 0; rc == 0 && i < n; i++) {
        const rlvr_rollout *r = &jobs[i].record;
        if (a.show) {
            char title[32];
            snprintf(title, sizeof title, "rollout %d", i);
            show_prompt(&st, r, title);
            for (int32_t t = 0; t < r->n_turns; t++) {
                show_policy(&st, r, &r->turns[t], t + 1);
                show_observation(&st, r, &r->turns[t]);
            }
            show_end(&st, r);
        }
        rollout_summary(i, &jobs[i]);
        passed += r->verdict == RLVR_VERDICT_PASS;
    }
    if (rc == 0) printf("%d of %d rollouts passed\n", passed, n);
    for (int i = 0; jobs && i < n; i++) rlvr_harness_job_clear(&jobs[i]);
    free(jobs);
    rlvr_play_close(&p);
    return rc < 0 ? rlvr_cmd_fail("rollout", rc) : RLVR_EXIT_OK;
}

/* ---- rlvr agent --------------------------------------------------------------- */

static void agent_usage(FILE *out) {
    fprintf(out, "usage: rlvr agent --task TASK [--checkpoint C] [--seed S] [--temperature T] [--verify]\n"
                 "                  [--weights F] [--color | --no-color]\n" PLAY_FLAGS_HELP
                 "  --verify           verify the rollout's patch in the enclave and print the verdict\n");
}

/* The harness's events, printed as they come. */
static void on_event(void *arg, rlvr_harness_event ev, const rlvr_harness_job *job, const rlvr_turn *turn) {
    const show_style *st = arg;
    const rlvr_rollout *r = &job->record;
    char title[RLVR_TASK_ID_CAP + 16];
    switch (ev) {
    case RLVR_HARNESS_EVENT_START:
        snprintf(title, sizeof title, "agent: task %s", r->task_id);
        show_prompt(st, r, title);
        break;
    case RLVR_HARNESS_EVENT_POLICY: show_policy(st, r, turn, r->n_turns + 1); break;
    case RLVR_HARNESS_EVENT_TURN: show_observation(st, r, turn); break;
    case RLVR_HARNESS_EVENT_END: show_end(st, r); break;
    }
}

static void print_patch(const rlvr_harness_job *j) {
    if (j->task->verifier != RLVR_VERIFIER_TESTS) return;
    if (j->record.stop == RLVR_STOP_INFRA_ERROR) printf("---- patch: none (infrastructure error) ----\n");
    else if (j->patch_reason) printf("---- patch: refused (%s) ----\n", rlvr_reason_name(j->patch_reason));
    else if (!j->patch || j->patch_len == 0) printf("---- patch: none (the workspace is unchanged) ----\n");
    else {
        printf("---- patch (%zu bytes%s) ----\n", j->patch_len,
               j->public_tests_changed ? "; changes the public tests: a training rollout would be dropped" : "");
        fwrite(j->patch, 1, j->patch_len, stdout);
        if (j->patch[j->patch_len - 1] != '\n') putchar('\n');
    }
}

static void print_verdict(bool verified, const rlvr_harness_job *j) {
    const rlvr_rollout *r = &j->record;
    if (j->task->verifier == RLVR_VERIFIER_TESTS && !verified) {
        printf("---- verdict: not verified (--verify runs the hidden tests in the enclave) ----\n");
        return;
    }
    printf("---- verdict: %s%s%s%s ----\n", rlvr_verdict_name(r->verdict), r->verdict_reason ? " / " : "",
           r->verdict_reason ? rlvr_reason_name(r->verdict_reason) : "",
           j->task->verifier == RLVR_VERIFIER_TESTS ? "" : " (scored in process)");
}

int rlvr_cmd_agent(int argc, char **argv) {
    play_args a;
    play_args_default(&a);
    const rlvr_opt extra[] = {RLVR_OPT("--verify", RLVR_OPT_FLAG, &a.verify, NULL), {0}};
    int parsed = play_parse(&a, "agent", agent_usage, extra, argc, argv);
    if (parsed != RLVR_ARGS_CONTINUE) return parsed;
    rlvr_play p;
    rlvr_harness_job job;
    memset(&job, 0, sizeof job);
    int rc = rlvr_play_open(&p, &a.play, 1);
    show_style st = {.tok = p.tok, .color = a.color};
    if (rc == 0) {
        if (!a.play.checkpoint) fprintf(stderr, "rlvr agent: no --checkpoint: the policy has random weights\n");
        p.opt.on_event = on_event;
        p.opt.event_arg = &st;
        job.task = p.task;
        rc = rlvr_harness_run(p.sampler, p.tok, &p.opt, &job, 1);
    }
    if (rc == 0) print_patch(&job);
    if (rc == 0 && a.verify) rc = rlvr_play_verify(&p, &job, a.play.seed);
    if (rc == 0) {
        const rlvr_rollout *r = &job.record;
        print_verdict(a.verify, &job);
        printf("agent: task %s, %d turns, %d policy tokens, %d tokens, stop %s, calls %d (%d parsed), "
               "generate %.3f s, tools %.3f s, verify %.3f s\n",
               r->task_id, r->n_turns, rlvr_rollout_policy_tokens(r), r->n_tokens, rlvr_stop_reason_name(r->stop),
               job.calls, job.calls_parsed, r->timings.generate_s, r->timings.tool_s, r->timings.verify_s);
    }
    rlvr_harness_job_clear(&job);
    rlvr_play_close(&p);
    return rc < 0 ? rlvr_cmd_fail("agent", rc) : RLVR_EXIT_OK;
}
