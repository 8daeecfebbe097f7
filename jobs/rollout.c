/* jobs/rollout.c — `rlvr rollout --task TASK [--checkpoint C] --n N --show`:
 * runs N rollouts of one task through the harness (envs/harness.h, the same
 * code path as training and evaluation; jobs/play.h), verifies them, and
 * prints one line per rollout; --show renders each trajectory for humans
 * with the policy's text and the tools' observations told apart
 * (jobs/show.h). Without --checkpoint the policy is a small random-weights
 * model (to watch the harness, not to solve anything). */
#include "core/error.h"
#include "enclave/reason.h"
#include "jobs/commands.h"
#include "jobs/play.h"
#include "jobs/show.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    play_options play;
    int n;
    bool show;
} rollout_opts;

static void usage(FILE *out) {
    fprintf(out, "usage: rlvr rollout --task TASK [--checkpoint C] [--n N] [--show] [--seed S] [--temperature T]\n"
                 "                    [--color | --no-color]\n"
                 "%s"
                 "  --n N              rollouts (default 1)\n"
                 "  --show             render each trajectory: policy text and observations told apart\n",
            play_flags_help);
}

static int parse(rollout_opts *o, int argc, char **argv) {
    memset(o, 0, sizeof *o);
    play_options_default(&o->play);
    o->n = 1;
    for (int i = 1; i < argc; i++) {
        int got = play_parse_flag(&o->play, argc, argv, &i);
        if (got < 0) return -1;
        if (got > 0) continue;
        char *end = NULL;
        if (strcmp(argv[i], "--n") == 0 && i + 1 < argc) {
            long n = strtol(argv[++i], &end, 10);
            if (*end || n < 1 || n > 4096) return -1;
            o->n = (int)n;
        } else if (strcmp(argv[i], "--show") == 0) o->show = true;
        else return -1;
    }
    return o->play.task ? 0 : -1;
}

static void summary(int i, const rlvr_harness_job *j) {
    const rlvr_rollout *r = &j->record;
    printf("rollout %d: task %s, %d turns, %d policy tokens, %d tokens, stop %s, verdict %s%s%s, "
           "calls %d (%d parsed), generate %.3f s, tools %.3f s, verify %.3f s\n",
           i, r->task_id, r->n_turns, rlvr_rollout_policy_tokens(r), r->n_tokens, rlvr_stop_reason_name(r->stop),
           rlvr_verdict_name(r->verdict), r->verdict_reason ? " / " : "",
           r->verdict_reason ? rlvr_reason_name(r->verdict_reason) : "", j->calls, j->calls_parsed,
           r->timings.generate_s, r->timings.tool_s, r->timings.verify_s);
}

int rlvr_cmd_rollout(int argc, char **argv) {
    rollout_opts o;
    if (parse(&o, argc, argv) < 0) {
        usage(stderr);
        return RLVR_EXIT_USAGE;
    }
    play_setup p;
    memset(&p, 0, sizeof p);
    rlvr_harness_job *jobs = calloc((size_t)o.n, sizeof *jobs);
    int rc = jobs ? play_open(&p, &o.play, o.n < 16 ? o.n : 16) : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    for (int i = 0; rc == 0 && i < o.n; i++) {
        jobs[i].task = p.task;
        jobs[i].sequence = (uint32_t)i;
    }
    if (rc == 0) rc = rlvr_harness_run(p.sampler, p.tok, &p.opt, jobs, o.n);
    for (int i = 0; rc == 0 && i < o.n; i++) rc = play_verify(&p, &jobs[i], o.play.seed + (uint64_t)i);
    int passed = 0;
    show_style st = {.out = stdout, .tok = p.tok, .color = o.play.color};
    for (int i = 0; rc == 0 && i < o.n; i++) {
        char title[32];
        snprintf(title, sizeof title, "rollout %d", i);
        if (o.show) show_rollout(&st, &jobs[i].record, title);
        summary(i, &jobs[i]);
        passed += jobs[i].record.verdict == RLVR_VERDICT_PASS;
    }
    if (rc == 0) printf("%d of %d rollouts passed\n", passed, o.n);
    for (int i = 0; jobs && i < o.n; i++) rlvr_harness_job_clear(&jobs[i]);
    free(jobs);
    play_close(&p);
    return rc < 0 ? rlvr_cmd_fail("rollout", rc) : RLVR_EXIT_OK;
}
