/* tests/redteam/redteam.h — what the red-team programs (test_redteam.c,
 * test_redteam_judge.c) share: their command line, the sandbox host, and
 * one case's verification with the checks that follow every case.
 *
 * After a case everything outside the sandbox must be as it was: the task's
 * files on the host (repository, hidden tests, a canary), the enclave's
 * clean snapshot, the judge programs (judge mode), the sandbox host's
 * scratch directory (no new entries), our descriptors, and our children
 * (only the pooled enclaves' holders, with no children of their own).
 *
 * The checks here count in this file's own CHECK counters (test.h keeps
 * them per translation unit): a program ends with redteam_summary(). */
#ifndef RLVR_TESTS_REDTEAM_H
#define RLVR_TESTS_REDTEAM_H

#include "enclave/sandbox.h"
#include "enclave/verify.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The flags, in any order:
 *   --unprivileged  running as a user without privileges (checked: euid != 0)
 *   --copy          sandboxes copy the snapshot (rlvr_sandbox_host_options.overlay = false)
 * Starts the log, parses them and makes the sandbox host they ask for
 * (printing its description; under --copy it must use copies). *name gets
 * "PROGRAM [--unprivileged] [--copy]" for the summary. Returns 0, or the
 * exit status to end with: 2 for a bad flag, the summary's when no host. */
int redteam_start(int argc, char **argv, const char *program, const char **name, rlvr_sandbox_host **host);

/* One task under attack. */
typedef struct {
    rlvr_verify_task *task;
    rlvr_sandbox_host *host;
    const char *files;  /* host directory with the task's repository and hidden tests (hashed) */
    const char *canary; /* host file the exploits aim at by absolute path: stays "canary\n" */
} redteam_target;

/* What a case must come to. */
typedef struct {
    const char *name;
    rlvr_verdict verdict;
    int reason;
    int reason_alt; /* also accepted, and said when it happens (RLVR_REASON_NONE: nothing else) */
    const char *alt_why; /* what the alternative means ("ended before the sampler saw it at the limit") */
} redteam_expect;

/* Scores the patch (rlvr_verify_patch) and checks: score 0 with the
 * expected verdict and reason (a control may expect a pass instead), no enclave run for a refused patch, the host
 * unchanged afterwards with `pooled` pooled enclaves alive. Prints one line.
 * Returns the verdict (verdict NONE when verification itself failed). */
rlvr_enclave_verdict redteam_verify(const redteam_target *t, const redteam_expect *x, const char *patch, size_t len,
                                    bool tests_changed, uint64_t seed, int pooled);

/* At the end: no sandbox process and no scratch entry left but the host's
 * judge cache (finished judges only). */
void redteam_check_host_clean(rlvr_sandbox_host *host);

/* test_summary() over the program's checks and this file's. */
int redteam_summary(const char *name, int checks, int failures);

#endif
