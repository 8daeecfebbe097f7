/* envs/harness_internal.h — what harness.c needs from harness_tools.c. */
#ifndef RLVR_ENVS_HARNESS_INTERNAL_H
#define RLVR_ENVS_HARNESS_INTERNAL_H

#include "enclave/sandbox.h"
#include "envs/task.h"
#include "envs/tools.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What one tool call gave: the observation text the policy sees. */
typedef struct {
    char *text;         /* malloc'd, NUL-terminated */
    size_t len;
    int exit_status;    /* 0 success; the command's status for run / run_public_tests; -1 killed */
    bool truncated;     /* cut to the output cap */
    double duration_s;
} harness_tool_outcome;

/* Runs a parsed call (not submit) in the workspace sandbox `sb`. Returns 0
 * with *out filled whatever the tool did; a negative code when the sandbox
 * itself failed (infrastructure) or out of memory. */
int harness_tool_exec(rlvr_sandbox *sb, const rlvr_task *task, const rlvr_tool_call *call, double timeout_s,
                      int64_t out_cap, harness_tool_outcome *out);

/* The same in two halves, for the harness's event loop: start forks the
 * tool's sandbox run and returns at once (its pipes: run->run, see
 * enclave/sandbox.h "runs without blocking"); finish reaps it into *out
 * (waiting if it has not ended). abort kills a started tool. */
typedef struct {
    rlvr_sandbox_run *run;
    double timeout_s;
    bool command; /* run / run_public_tests: the observation ends with a status line */
    rlvr_sandbox *sb;
    const char *results; /* run_public_tests of a task with public JUnit results: the file to sum up */
} harness_tool_run;

int harness_tool_start(rlvr_sandbox *sb, const rlvr_task *task, const rlvr_tool_call *call, double timeout_s,
                       harness_tool_run *run);
int harness_tool_finish(harness_tool_run *run, int64_t out_cap, harness_tool_outcome *out);
void harness_tool_abort(harness_tool_run *run);

void harness_tool_outcome_free(harness_tool_outcome *o);

#endif
