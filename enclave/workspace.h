/* enclave/workspace.h — the policy's workspace (rollout side).
 *
 * A sandbox holding the task's repository at its base commit as a fresh
 * single-commit repository (no history to copy answers from) with the public
 * tests and the build configuration mounted read-only. The agent's tools run
 * commands in it (rlvr_workspace_sandbox + rlvr_sandbox_exec). At the end of
 * the rollout rlvr_workspace_extract diffs the files against a copy of the
 * base tree that only the runtime holds; the workspace's own .git is never
 * read. The diff runs inside the sandbox (the runtime's code, policy's files). */
#ifndef RLVR_ENCLAVE_WORKSPACE_H
#define RLVR_ENCLAVE_WORKSPACE_H

#include "enclave/diffgate.h"
#include "enclave/sandbox.h"

typedef struct rlvr_workspace rlvr_workspace;

typedef struct {
    unsigned version;
    const char *repo_dir;            /* the task's repository (bare or not) */
    const char *base_commit;         /* revspec of the commit the rollout starts from */
    const char *const *public_tests; /* paths (NULL-terminated): read-only, and checksummed at extraction */
    const char *const *readonly;     /* more read-only paths: build and test-runner configuration */
    rlvr_sandbox_limits limits;      /* for every command the agent runs */
    size_t max_patch_bytes;          /* larger patches are refused at extraction (0: 512 KiB) */
} rlvr_workspace_spec;

#define RLVR_WORKSPACE_SPEC_VERSION 1

int rlvr_workspace_new(rlvr_workspace **out, rlvr_sandbox_host *host, const rlvr_workspace_spec *spec);
void rlvr_workspace_free(rlvr_workspace *ws);

/* The sandbox the agent's commands run in. */
rlvr_sandbox *rlvr_workspace_sandbox(rlvr_workspace *ws);

/* The id of the base tree every patch is relative to (40 hex digits). */
const char *rlvr_workspace_base_tree(const rlvr_workspace *ws);

/* Extracts the rollout's patch. Returns 0 with *out filled, or a negative
 * code (infrastructure) when the extraction itself failed. */
int rlvr_workspace_extract(rlvr_workspace *ws, rlvr_extract_result *out);

#endif
