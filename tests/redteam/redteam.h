/* tests/redteam/redteam.h — what the red-team programs (test_redteam.c,
 * test_redteam_judge.c, test_redteam_carry.c) share: their command line,
 * the sandbox host, one case's verification with the checks that follow
 * every case, and the generated judge-mode tasks with the pieces their
 * patches are made of.
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
#include "envs/task.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The flags, in any order:
 *   --unprivileged  running as a user without privileges (checked: euid != 0)
 *   --copy          sandboxes copy the snapshot (rlvr_sandbox_host_options.overlay = false)
 * Starts the log, parses them and makes the sandbox host they ask for
 * (printing its description; under --copy it must use copies), binding
 * `system_paths` (NULL: RLVR_SANDBOX_SYSTEM_PATHS) into its sandboxes. *name
 * gets "PROGRAM [--unprivileged] [--copy]" for the summary. Returns 0, or
 * the exit status to end with: 2 for a bad flag, the summary's when no host. */
int redteam_start(int argc, char **argv, const char *program, const char *system_paths, const char **name,
                  rlvr_sandbox_host **host);

/* Where a program keeps its tasks: a new directory under $TMPDIR (mode
 * 0755, so that the sandbox identity can read the repositories) holding
 * `files` (the tasks' repositories and hidden tests, and the canary, which
 * holds "canary\n") and `scratch` (patches are made there; not hashed). */
typedef struct {
    char *root;
    char files[PATH_MAX];
    char scratch[PATH_MAX];
    char canary[PATH_MAX + 16];
} redteam_dirs;

int redteam_dirs_new(redteam_dirs *d, const char *prefix);
void redteam_dirs_free(redteam_dirs *d);

/* One task under attack. */
typedef struct {
    rlvr_verify_task *task;
    rlvr_sandbox_host *host;
    const char *files;  /* host directory with the task's repository and hidden tests (hashed) */
    const char *canary; /* host file the exploits aim at by absolute path: stays "canary\n" */
    /* optional: waits until a helper of the test outside the enclave (a
     * control's carrier) has closed what a run's processes opened to it,
     * before the host's descriptors are counted */
    void (*settle)(void *ctx);
    void *settle_ctx;
} redteam_target;

/* What a case must come to. */
typedef struct {
    const char *name;
    rlvr_verdict verdict;
    int reason;
    int reason_alt; /* also accepted, and said when it happens (RLVR_REASON_NONE: nothing else) */
    const char *alt_why; /* what the alternative means ("ended before the sampler saw it at the limit") */
    bool not_yet; /* a control that learns across verifications: failing with tests_failed (it has not
                     learnt enough yet) is accepted as well */
} redteam_expect;

/* Scores the patch (rlvr_verify_patch) and checks: score 0 with the
 * expected verdict and reason (a control may expect a pass instead), no enclave run for a refused patch, the host
 * unchanged afterwards with `pooled` pooled enclaves alive. Prints one line.
 * Returns the verdict (verdict NONE when verification itself failed). */
rlvr_enclave_verdict redteam_verify(const redteam_target *t, const redteam_expect *x, const char *patch, size_t len,
                                    bool tests_changed, uint64_t seed, int pooled);

/* The task's verify task with small limits (the timeouts and floods end
 * quickly) and 2 consensus runs; the untouched repository must fail, which
 * also makes its pooled enclave: it stays for every case. */
int redteam_verify_task_new(rlvr_verify_task **out, rlvr_sandbox_host *host, const rlvr_task *task);

/* `file` of the task's repository with the reference patch applied (in a
 * checkout under `scratch`); caller frees. */
int redteam_reference_file(const rlvr_task *task, const char *scratch, const char *file, char **out);

/* ---- generated bugfix-c tasks in judge mode ------------------------------------------------- */

/* One generated bugfix-c task (envs/gen.h, seed 20240611, compiled with
 * cc) with the pieces the exploit patches are made of. */
typedef struct {
    rlvr_task *task;
    rlvr_verify_task *vt;
    char *buggy;    /* lib.c at the base commit */
    char *header;   /* lib.h */
    char *correct;  /* lib.c with the reference patch */
    char *fixer;    /* C: the correct library as rt_fixed_*() and rt_fixed_main() (below) */
    char *dispatch; /* C: rt_lib_call(NAME, ARGS, N, &RESULT), a call of the library's own functions by
                       name (0 when NAME/N is none of them) */
    char *tap;      /* a perfect TAP stream of the first run's order, as a C string literal */
    char guess[24]; /* the value the prompt gives away (the public failing case's expected value) */
    char hidden[PATH_MAX]; /* tests/judge.c on the host */
    bool ready;
} redteam_jtask;

/* Generates the task (split and difficulty; with `loopback` it asks for
 * "network": "loopback") under `dir`, its pieces (the reference applied in
 * a checkout under `scratch`), and its verify task with small limits and 2
 * consensus runs; then verifies the untouched
 * repository (it must fail with tests_failed), which makes the task's
 * pooled enclave: it stays for every case. */
int redteam_jtask_new(redteam_jtask *jt, rlvr_sandbox_host *host, const char *dir, const char *scratch, bool loopback,
                      rlvr_split split, int difficulty);
void redteam_jtask_free(redteam_jtask *jt);

/* lib.c of a probe: the buggy library, `prelude` (system headers and
 * helpers), the fixer, rt_probe() { `body` } (negated when `invert`), and a
 * constructor that hands the runner to the fixer when rt_probe() is true.
 * Such a patch passes exactly when the probe holds: "tests_failed" means
 * the promise the probe tests held, and the inverted probe passing shows
 * that the probe ran and said no. NULL when out of memory; caller frees. */
char *redteam_probe_lib(const redteam_jtask *jt, const char *prelude, const char *body, bool invert);

/* `text` with every key of `subst` replaced by its value (caller frees;
 * NULL when out of memory). */
typedef struct {
    const char *key, *value;
} redteam_subst;
char *redteam_expand(const char *text, const redteam_subst *subst, size_t n);
/* The NULL-terminated parts joined (caller frees). */
char *redteam_concat(const char *const *parts);

/* At the end: no sandbox process and no scratch entry left but the host's
 * judge cache (finished judges only). */
void redteam_check_host_clean(rlvr_sandbox_host *host);

/* test_summary() over the program's checks and this file's. */
int redteam_summary(const char *name, int checks, int failures);

#endif
