/* jobs/agent.c — `rlvr agent --task TASK [--checkpoint C] [--verify]`:
 * interactive and deployment use of the policy, in the harness it is trained
 * in (docs/TASKS.md "Harness"). One rollout of the task through the
 * harness — the code path training and evaluation use (envs/harness.h,
 * jobs/play.h) — printed as it happens from the
 * harness's events: the prompt, each policy turn as soon as it is written
 * ({{...}}), each tool's observation when the tool returns ([[...]]), the
 * end; then the patch the rollout leaves in its workspace and, with
 * --verify, the enclave's verdict on it. Without --checkpoint the policy is
 * a small random-weights model (to watch the harness, not to solve
 * anything). Exit status 0 when the rollout ran, whatever its verdict. */
#include "core/error.h"
#include "enclave/reason.h"
#include "jobs/commands.h"
#include "jobs/play.h"
#include "jobs/show.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    play_options play;
    bool verify;
} agent_opts;

static void usage(FILE *out) {
    fprintf(out, "usage: rlvr agent --task TASK [--checkpoint C] [--seed S] [--temperature T] [--verify]\n"
                 "                  [--color | --no-color]\n"
                 "%s"
                 "  --verify           verify the rollout's patch in the enclave and print the verdict\n",
            play_flags_help);
}

static int parse(agent_opts *o, int argc, char **argv) {
    memset(o, 0, sizeof *o);
    play_options_default(&o->play);
    for (int i = 1; i < argc; i++) {
        int got = play_parse_flag(&o->play, argc, argv, &i);
        if (got < 0) return -1;
        if (got > 0) continue;
        if (strcmp(argv[i], "--verify") == 0) o->verify = true;
        else return -1;
    }
    return o->play.task ? 0 : -1;
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

static void print_verdict(const agent_opts *o, const rlvr_harness_job *j) {
    const rlvr_rollout *r = &j->record;
    if (j->task->verifier == RLVR_VERIFIER_TESTS && !o->verify) {
        printf("---- verdict: not verified (--verify runs the hidden tests in the enclave) ----\n");
        return;
    }
    printf("---- verdict: %s%s%s%s ----\n", rlvr_verdict_name(r->verdict), r->verdict_reason ? " / " : "",
           r->verdict_reason ? rlvr_reason_name(r->verdict_reason) : "",
           j->task->verifier == RLVR_VERIFIER_TESTS ? "" : " (scored in process)");
}

int rlvr_cmd_agent(int argc, char **argv) {
    agent_opts o;
    if (parse(&o, argc, argv) < 0) {
        usage(stderr);
        return RLVR_EXIT_USAGE;
    }
    play_setup p;
    rlvr_harness_job job;
    memset(&job, 0, sizeof job);
    int rc = play_open(&p, &o.play, 1);
    show_style st = {.out = stdout, .tok = p.tok, .color = o.play.color};
    if (rc == 0) {
        if (!o.play.checkpoint) fprintf(stderr, "rlvr agent: no --checkpoint: the policy has random weights\n");
        p.opt.on_event = on_event;
        p.opt.event_arg = &st;
        job.task = p.task;
        rc = rlvr_harness_run(p.sampler, p.tok, &p.opt, &job, 1);
    }
    if (rc == 0) print_patch(&job);
    if (rc == 0 && o.verify) rc = play_verify(&p, &job, o.play.seed);
    if (rc == 0) {
        const rlvr_rollout *r = &job.record;
        print_verdict(&o, &job);
        printf("agent: task %s, %d turns, %d policy tokens, %d tokens, stop %s, calls %d (%d parsed), "
               "generate %.3f s, tools %.3f s, verify %.3f s\n",
               r->task_id, r->n_turns, rlvr_rollout_policy_tokens(r), r->n_tokens, rlvr_stop_reason_name(r->stop),
               job.calls, job.calls_parsed, r->timings.generate_s, r->timings.tool_s, r->timings.verify_s);
    }
    rlvr_harness_job_clear(&job);
    play_close(&p);
    return rc < 0 ? rlvr_cmd_fail("agent", rc) : RLVR_EXIT_OK;
}
