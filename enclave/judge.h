/* enclave/judge.h — judge programs: a task's hidden tests, compiled once and
 * kept where the code under test can neither read nor run them.
 *
 * A judge is the program that holds a task's expected values and writes the
 * TAP results; it runs the code under test in processes of its own, over a
 * narrow channel (a command line in, an answer out). Built once per task:
 * the task's build command runs in a throwaway enclave holding the base tree
 * with the hidden files copied over it and $RLVR_JUDGE_DIR (an empty
 * directory); what it leaves there (regular files, each a program) is
 * copied out to a host directory and made execute-only (mode 0111, owned by
 * the runtime). Those directories form a cache in the sandbox host's
 * scratch space, keyed by the judge's content: a task verified again (by
 * the pool check, training, each evaluation) reuses its judge; they go
 * with the host. Verification enclaves bind that directory read-only at
 * RLVR_SANDBOX_JUDGE_DIR and hide it from every run: the judge command is
 * exec'd from a descriptor (enclave/sandbox.h, rlvr_sandbox_cmd.judge). A
 * program exec'd without read permission is not dumpable, so processes of
 * the same uid cannot open its /proc/PID/mem, fd/ or exe either. The hidden
 * files themselves never enter the verification enclave. */
#ifndef RLVR_ENCLAVE_JUDGE_H
#define RLVR_ENCLAVE_JUDGE_H

#include "enclave/sandbox.h"

typedef struct rlvr_judge rlvr_judge;

/* Builds the judge of a task: `build_command` runs with /bin/sh -c in /work
 * (the tree of `base_commit` of `repo_dir` with `hidden_dir` copied over
 * it) under `limits`, and leaves its programs in $RLVR_JUDGE_DIR. A failing
 * build is RLVR_EINVAL with the command's exit status and the end of its
 * output; a build that leaves no program, a directory, a link or a file
 * larger than 64 MiB is refused likewise. */
int rlvr_judge_build(rlvr_judge **out, rlvr_sandbox_host *host, const char *repo_dir, const char *base_commit,
                     const char *hidden_dir, const char *build_command, const rlvr_sandbox_limits *limits);

/* The host directory holding the programs (for rlvr_sandbox_options.judge_dir). */
const char *rlvr_judge_dir(const rlvr_judge *judge);

/* True when the build left a program of that name. */
bool rlvr_judge_has(const rlvr_judge *judge, const char *name);

void rlvr_judge_free(rlvr_judge *judge);

#endif
