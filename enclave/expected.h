/* enclave/expected.h — results as expected files.
 *
 * For test suites that write their output to files and compare them with
 * committed ones (golden or baseline files: inih's tests/baseline_*.txt, a
 * compiler's expected output, a formatter's): the test command runs in the
 * enclave and leaves files at known paths in the tree; each one is a test,
 * named by its path, that passes when its bytes equal the task's expected
 * copy. The expected copies stay on the host: they never enter the
 * enclave, so no code under test can read what it must produce, however it
 * runs (in the test program's process, beside the harness, at build time).
 * The files the run must write are removed before it starts and are
 * protected paths (no patch may create them); they are read after the run
 * by a process of the runtime inside the enclave, beneath /work, never
 * through a link, regular files only, no more bytes than the expected copy
 * plus one. */
#ifndef RLVR_ENCLAVE_EXPECTED_H
#define RLVR_ENCLAVE_EXPECTED_H

#include "enclave/sandbox.h"
#include "enclave/tap.h"

#include <stddef.h>

typedef struct {
    char *path; /* in the tree, relative to /work */
    char *data; /* the expected bytes */
    size_t len;
} rlvr_expected_file;

typedef struct {
    rlvr_expected_file *files;
    size_t n;
} rlvr_expected_set;

/* Reads dir/<path> for each path (NULL-terminated): the expected copies.
 * RLVR_EIO naming a missing or unreadable file; RLVR_EINVAL for a path that
 * is not a plain path in the tree. */
int rlvr_expected_load(rlvr_expected_set *out, const char *dir, const char *const *paths);
void rlvr_expected_free(rlvr_expected_set *s);

/* After a run in `sb`: reads the files the run left and compares each with
 * its expected copy. *out is a complete TAP report, one test per file in
 * the set's order ("ok" when equal; missing, not a regular file, larger or
 * different: "not ok"). Errors only when the sandbox could not run the
 * reader (RLVR_ESANDBOX) or out of memory. */
int rlvr_expected_judge(rlvr_sandbox *sb, const rlvr_expected_set *s, rlvr_tap_report *out);

#endif
