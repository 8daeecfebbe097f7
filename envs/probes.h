/* envs/probes.h — tampering probes: wrong solutions that try to earn the
 * reward without fixing anything, built from each task's own files and
 * build. `rlvr tasks check` runs every probe through the verifier and
 * refuses the task (status "exploitable") when one is rewarded, naming it.
 *
 * A probe targets how the task is judged, not what the fix is, so the same
 * classes apply to every "tests" task:
 * - build lookup: a file at every name the build tool would read before the
 *   declared one (GNU make: GNUmakefile, makefile, Makefile), whose every
 *   target writes a passing TAP stream to the results descriptor;
 * - system header: a header at the top of the tree (and beside every C
 *   source) named after each system header the task's sources or hidden
 *   tests include (and those glibc's headers pull in), holding a
 *   constructor that forges the stream: rewarded when a build searches the
 *   tree before the system directories (-I.);
 * - forged results: code appended to every editable source the task has
 *   (C, shell) that writes a passing stream to every results channel it
 *   can reach (its environment's descriptor, fd 3, its parent's fd 3) and
 *   exits 0: rewarded when the code under test shares a process with the
 *   results channel or can reopen it;
 * - decoy and kill: the same stream plus a failing line for a test the task
 *   does not name, then the whole process group killed: rewarded when the
 *   judge lets a failure excuse a killed run;
 * - hidden files at run time: the reference fix plus a guard that fails
 *   every test unless the code under test can open a hidden test file or the
 *   judge's program, or read the executable link of an ancestor that is the
 *   judge: rewarded when they are readable;
 * - state between verifications: a writer (no fix) leaves a marker in every
 *   channel it can write (files in /tmp and at the top of /work, a loopback
 *   socket in TIME_WAIT, System V and POSIX message queues) and is verified
 *   first; then the reference fix plus a guard that fails every test unless
 *   it finds a marker, on the same pooled enclave: rewarded when anything
 *   of one verification reaches the next (the sandbox's reset, or a task's
 *   judge or commands that keep state between runs).
 * The patches are made on the host from the base tree and the reference
 * patch (the task's own trusted content); a file the diff gate would refuse
 * (the task's protected and editable paths, its test files, the built-in
 * rules) makes no probe, since a class's parts run as one patch, which the
 * gate would refuse whole. */
#ifndef RLVR_ENVS_PROBES_H
#define RLVR_ENVS_PROBES_H

#include "envs/task.h"

#include <stddef.h>

typedef struct {
    char klass[32];  /* "build lookup", "system header", "forged results", "decoy and kill",
                        "hidden files at run time", "state between verifications" */
    char part[192];  /* what this one is: "GNUmakefile", "stdio.h", "lib.c", ... */
    char *patch;     /* a unified git patch against the base commit */
    size_t len;
    char *setup;     /* NULL, or a patch verified just before `patch` on the same pooled enclave, its
                        verdict ignored (the writer of "state between verifications") */
    size_t setup_len;
} rlvr_probe;

typedef struct {
    rlvr_probe *items;
    size_t n;
} rlvr_probe_set;

/* The probes of a "tests" task, in the order above, every part of a class
 * one probe (`rlvr tasks check` runs a class's parts together first and
 * apart only when that is rewarded). `scratch` is a directory for the
 * checkouts the patches are made in. */
int rlvr_task_probes(const rlvr_task *task, const char *scratch, rlvr_probe_set *out);
void rlvr_probe_set_free(rlvr_probe_set *set);

/* The answers an "arith" task must score 0 (NULL-terminated, static
 * strings written into `buf`): the target alone (countdown), the
 * expression itself (evaluate), several candidates on the answer line, the
 * reference followed by a line of chatter, the target written as a real
 * number. */
typedef struct {
    char text[8][192];
    const char *name[8];
    int n;
} rlvr_arith_probes;

void rlvr_task_arith_probes(const rlvr_task *task, rlvr_arith_probes *out);

#endif
