/* enclave/junit.h — per-test results of a hidden-test run, from JUnit XML.
 *
 * Real test suites report as JUnit XML (pytest --junitxml, ctest
 * --output-junit, Maven Surefire, go-junit-report). A task may declare that
 * its results come as such a file at a path in /work instead of as TAP on
 * the results descriptor; the runtime reads the file once the run is over
 * and parses it here, outside the sandbox, into the same report TAP gives
 * (enclave/tap.h), so both are judged by rlvr_tap_judge.
 *
 * The file is written by code the policy may reach, so the parser (expat)
 * is hardened and refuses rather than guesses:
 * - no document type declaration at all: no DTD, no entity declarations,
 *   no external entities or parameter entities, so neither the "billion
 *   laughs" expansion nor an external resource can happen
 *   (RLVR_REASON_RESULTS_UNSAFE);
 * - bounded file size, element depth, testcase count and name length
 *   (RLVR_REASON_RESULTS_TOO_LARGE);
 * - anything that is not well-formed XML, a root other than <testsuites> or
 *   <testsuite>, a <testcase> outside a <testsuite>, or one without a name
 *   is RLVR_REASON_RESULTS_INVALID.
 * A well-formed file is complete by construction (its root element closed):
 * the report's plan is its number of testcases.
 *
 * A testcase's status: a <failure>, <error>, <rerunFailure>, <rerunError>,
 * <flakyFailure> or <flakyError> child is a failure; otherwise a <skipped>
 * child, or a status attribute "notrun" or "disabled" (ctest), is a skip;
 * otherwise it passed. Other children (<system-out>, <properties>) are
 * ignored.
 *
 * A testcase's id (docs/ENCLAVE.md "JUnit XML results" has an example per
 * producer):
 * - pytest's node id (tests/test_x.py::TestY::test_z[p]) when one of the
 *   task's test names mangles to the testcase's classname and name the way
 *   pytest's junitxml plugin writes them (path separators and "::" become
 *   ".", ".py" is dropped, parameters stay in the name), or when the
 *   testcase carries pytest's file attribute (junit_family=xunit1) and the
 *   file is the start of the classname;
 * - otherwise "classname.name", or just the name when the classname is
 *   empty or equal to it (ctest writes the test's name in both). */
#ifndef RLVR_ENCLAVE_JUNIT_H
#define RLVR_ENCLAVE_JUNIT_H

#include "enclave/sandbox.h"
#include "enclave/tap.h"

#include <stddef.h>

typedef struct {
    size_t max_bytes; /* the file (also enforced when it is read) */
    int max_depth;    /* element nesting */
    int max_tests;    /* testcases */
    size_t max_name;  /* bytes of a classname, a name, or the id made of them */
} rlvr_junit_limits;

#define RLVR_JUNIT_LIMITS_INIT {16u << 20, 64, 100000, 4096}

/* Parses a JUnit XML document into *out (tests with ids and statuses,
 * planned = the number of testcases). `known` (NULL-terminated, or NULL)
 * are the task's test names, used to give a pytest testcase its node id.
 * A file that is refused leaves out->malformed set and out->invalid_reason
 * saying why (RESULTS_UNSAFE, RESULTS_TOO_LARGE or RESULTS_INVALID), with
 * no tests. Only allocation failures are errors. */
int rlvr_junit_parse(const char *text, size_t len, const char *const *known, const rlvr_junit_limits *limits,
                     rlvr_tap_report *out);

/* Reads the results file at `path` (relative to /work) out of a sandbox
 * whose run is over, in a process of its own inside the sandbox (the
 * runtime never opens a file the code under test controls), and parses it.
 * The path is resolved beneath /work without following any symbolic link;
 * a missing file is a report with no tests (NO_RESULTS); anything but a
 * regular file is RESULTS_INVALID; a file over limits->max_bytes is
 * RESULTS_TOO_LARGE and is not read. Returns 0 with *out filled, or a
 * negative code when the sandbox failed. */
int rlvr_junit_read(rlvr_sandbox *sb, const char *path, const char *const *known, const rlvr_junit_limits *limits,
                    rlvr_tap_report *out);

/* Removes the results file at `path` (relative to /work) if it exists. For
 * a command's prepare step, inside the sandbox, so that only what the run
 * writes is read: 0 on success or when it was not there, -1 otherwise. */
int rlvr_junit_remove_in_sandbox(const char *path);

/* Opens `path` beneath /work, inside the sandbox: never through a symbolic
 * link or a magic link, never blocking on a FIFO (openat2 RESOLVE_BENEATH).
 * -1 with errno on failure. For the readers of results files. */
int rlvr_junit_open_in_work(const char *path, int flags);

/* pytest's form of a node id in a JUnit file: *classname gets the dotted
 * path and classes, *name the function with its parameters. Both are
 * allocated; the caller frees them. Returns 0, or RLVR_ENOMEM. */
int rlvr_junit_mangle_pytest_id(const char *node_id, char **classname, char **name);

#endif
