/* jobs/evalcommon.c — printing what the evaluation library reports
 * (jobs/evalcommon.h). */
#include "jobs/evalcommon.h"

#include <stdio.h>

static void note_stderr(void *arg, const char *line) {
    *(double *)arg = 0;
    fprintf(stderr, "%s\n", line);
}

static void note_stdout(void *arg, const char *line) {
    (void)arg;
    printf("%s\n", line);
}

static void progress(void *arg, const rlvr_eval_progress *p) {
    double *last = arg;
    if (p->tasks_done < p->tasks_total && p->elapsed_s - *last < 2.0) return;
    *last = p->elapsed_s;
    fprintf(stderr, "eval: %zu/%zu tasks, passed %lld of %lld scored (%.1f %%), infra %lld, %.2f rollouts/s, %.0f s\n",
            p->tasks_done, p->tasks_total, (long long)p->passed, (long long)p->scored,
            p->scored ? 100.0 * (double)p->passed / (double)p->scored : 0.0, (long long)p->infra, p->rollouts_per_s,
            p->elapsed_s);
}

rlvr_evaljob_hooks rlvr_cmd_eval_hooks(double *last) {
    *last = 0;
    return (rlvr_evaljob_hooks){.note = note_stderr, .progress = progress, .arg = last};
}

rlvr_evaljob_hooks rlvr_cmd_eval_stdout_hooks(void) { return (rlvr_evaljob_hooks){.note = note_stdout}; }
