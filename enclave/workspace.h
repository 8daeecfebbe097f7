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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct rlvr_workspace rlvr_workspace;

typedef struct {
    unsigned version;
    const char *repo_dir;            /* the task's repository (bare or not) */
    const char *base_commit;         /* revspec of the commit the rollout starts from */
    const char *const *public_tests; /* paths (NULL-terminated): read-only, and checksummed at extraction */
    const char *const *readonly;     /* more read-only paths: build and test-runner configuration */
    rlvr_sandbox_limits limits;      /* for every command the agent runs */
    size_t max_patch_bytes;          /* larger patches are refused at extraction (0: 512 KiB) */
    rlvr_sandbox_network network;    /* the task's: inet sockets on loopback, or none (the default) */
    const char *environment;         /* the task's environment (rlvr_sandbox_options); NULL: the host's */
    const char *workdir;             /* where the agent's commands start; NULL: /work */
    const char *const *env;          /* the task's "KEY=VALUE" entries for every command; NULL: none */
} rlvr_workspace_spec;

#define RLVR_WORKSPACE_SPEC_VERSION 2

int rlvr_workspace_new(rlvr_workspace **out, rlvr_sandbox_host *host, const rlvr_workspace_spec *spec);
void rlvr_workspace_free(rlvr_workspace *ws);

/* The sandbox the agent's commands run in. */
rlvr_sandbox *rlvr_workspace_sandbox(rlvr_workspace *ws);

/* The id of the base tree every patch is relative to (40 hex digits). */
const char *rlvr_workspace_base_tree(const rlvr_workspace *ws);

/* Extracts the rollout's patch. Returns 0 with *out filled, or a negative
 * code (infrastructure) when the extraction itself failed. */
int rlvr_workspace_extract(rlvr_workspace *ws, rlvr_extract_result *out);

/* ---- snapshots of a workspace at a turn boundary (Monte-Carlo credit) ----------
 *
 * A workspace state is what the rollout changed in /work relative to the
 * task's pristine tree: new and changed regular files (content and mode
 * bits 0777), new directories, and deleted paths. It is made inside the
 * workspace's sandbox by the runtime's own code (rlvr_sandbox_call), which
 * compares /work against the pristine tree, so the runtime never reads a
 * policy-written file from its own process; the bytes it returns are an
 * opaque archive (docs/FORMATS.md "Workspace state"). Nothing outside the
 * workspace tree can be carried: symbolic links, device files, FIFOs and
 * sockets the rollout created are stripped (counted in stats.stripped) and
 * a hard link is carried as a plain copy of its content.
 *
 * Restoring applies a state to a fresh workspace of the same task (inside
 * that workspace's sandbox): afterwards its files are those of the snapshot,
 * and what is written there is seen by no other workspace or state. */
typedef struct rlvr_workspace_state rlvr_workspace_state;

typedef struct {
    int64_t files;    /* new or changed regular files carried */
    int64_t dirs;     /* new directories */
    int64_t deleted;  /* paths of the pristine tree that are gone */
    int64_t bytes;    /* content bytes carried */
    int64_t stripped; /* symlinks, devices, FIFOs, sockets left out */
} rlvr_workspace_state_stats;

/* Captures the workspace's current state (enclave/workspace_state.c; the
 * same files give the same bytes). RLVR_ELIMIT when the changes exceed
 * RLVR_WORKSPACE_STATE_MAX_BYTES, archive included, or a path is longer
 * than an archive carries (4 000 bytes) (the caller skips that branch
 * point); RLVR_ESANDBOX or another negative code when the capture itself
 * failed (infrastructure). */
#define RLVR_WORKSPACE_STATE_MAX_BYTES ((size_t)16 << 20)
int rlvr_workspace_snapshot(rlvr_workspace *ws, rlvr_workspace_state **out);

/* Applies `st` to `ws`, a workspace of the same task that no command has
 * written yet (an empty state is a no-op). The archive is checked whole
 * inside the sandbox before anything is written. Returns 0, or a negative
 * code: RLVR_ESANDBOX with the path when the state does not fit `ws` (it
 * touches a read-only path such as the public tests, or deletes a path `ws`
 * lacks), or the call itself failed (infrastructure). */
int rlvr_workspace_restore(rlvr_workspace *ws, const rlvr_workspace_state *st);

/* The archive bytes (to send a state to another rank) and a state read back
 * from them; rlvr_workspace_state_from_bytes validates the archive and
 * refuses a malformed one (RLVR_EFORMAT) without touching any workspace. */
const void *rlvr_workspace_state_bytes(const rlvr_workspace_state *st, size_t *len);
int rlvr_workspace_state_from_bytes(rlvr_workspace_state **out, const void *data, size_t len);

/* True when both states carry the same changes (byte-identical archives). */
bool rlvr_workspace_state_equal(const rlvr_workspace_state *a, const rlvr_workspace_state *b);
/* True when the state carries no change (the pristine tree). */
bool rlvr_workspace_state_empty(const rlvr_workspace_state *st);
void rlvr_workspace_state_stats_of(const rlvr_workspace_state *st, rlvr_workspace_state_stats *out);
void rlvr_workspace_state_free(rlvr_workspace_state *st);

#endif
