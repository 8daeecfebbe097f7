/* enclave/reason.h — why the enclave decided what it decided.
 *
 * A verdict (core/record.h) says pass / fail / rejected / timeout / infra /
 * dropped; the reason code says why, with a stable number that is stored in
 * rollout shards (rlvr_rollout.verdict_reason) and counted in metrics.
 * Numbers never change meaning; new codes get new numbers. Hundreds group the
 * stage that decided: 1xx diff gate, 2xx apply, 3xx tests, 4xx limits,
 * 5xx infrastructure. docs/ENCLAVE.md lists every code. */
#ifndef RLVR_ENCLAVE_REASON_H
#define RLVR_ENCLAVE_REASON_H

typedef enum {
    RLVR_REASON_NONE = 0,

    /* diff gate: the patch is refused and nothing runs (verdict REJECTED) */
    RLVR_REASON_PATCH_PARSE = 100,      /* not a git patch libgit2 can parse */
    RLVR_REASON_PATCH_TOO_LARGE = 101,  /* more bytes than the gate allows */
    RLVR_REASON_TOO_MANY_FILES = 102,   /* more files than the gate allows */
    RLVR_REASON_BINARY = 103,           /* a binary delta */
    RLVR_REASON_SYMLINK = 104,          /* a symbolic link is added, changed or a type change */
    RLVR_REASON_SUBMODULE = 105,        /* a gitlink (submodule) entry */
    RLVR_REASON_MODE_CHANGE = 106,      /* file mode changed (e.g. made executable) */
    RLVR_REASON_PATH_OUTSIDE = 107,     /* absolute path, "..", "." or empty component, control characters */
    RLVR_REASON_GIT_PATH = 108,         /* .git, .gitignore, .gitattributes, .gitmodules, ... */
    RLVR_REASON_ENV_FILE = 109,         /* environment files: .env, .envrc, shell profiles, ... */
    RLVR_REASON_HOOK_FILE = 110,        /* test-runner hooks: conftest.py, sitecustomize.py, *.pth, ... */
    RLVR_REASON_PROTECTED_PATH = 111,   /* the task's protected globs: tests, build files, runner config */
    RLVR_REASON_NOT_EDITABLE = 112,     /* a path outside the task's editable globs (its allow-list) */

    /* the rollout is dropped entirely (verdict DROPPED) */
    RLVR_REASON_PUBLIC_TESTS_CHANGED = 120, /* the public tests' checksum changed in the workspace */

    /* apply (verdict FAIL) */
    RLVR_REASON_APPLY_FAILED = 200,     /* git apply --check or the apply itself failed */

    /* hidden tests (verdict FAIL, or DROPPED for mixed consensus) */
    RLVR_REASON_TESTS_FAILED = 300,     /* at least one required test did not pass */
    RLVR_REASON_TEST_SKIPPED = 301,     /* a required test was skipped (or marked TODO) */
    RLVR_REASON_NO_RESULTS = 302,       /* no TAP results at all: an invalid run, never a pass */
    RLVR_REASON_INCOMPLETE = 303,       /* no plan, fewer results than planned, a required test missing */
    RLVR_REASON_RESULTS_INVALID = 304,  /* malformed TAP, duplicate or out-of-range numbers, bail out */
    RLVR_REASON_EXIT_STATUS = 305,      /* the test command was killed, or failed while its results claim a pass */
    RLVR_REASON_BUILD_FAILED = 306,     /* the build of the code under test failed: nothing was tested */
    RLVR_REASON_RESULTS_UNSAFE = 307,   /* a JUnit results file with a DTD, an entity or an external reference */
    RLVR_REASON_RESULTS_TOO_LARGE = 308,/* a JUnit results file beyond its size, depth, count or name limits */
    RLVR_REASON_CONSENSUS_MIXED = 310,  /* passed once, failed a consensus re-run: flaky, excluded */

    /* limits (verdict TIMEOUT for wall and CPU time, FAIL otherwise) */
    RLVR_REASON_TIMEOUT = 400,          /* wall time; a timeout is never a pass */
    RLVR_REASON_CPU_LIMIT = 401,        /* CPU time; verdict TIMEOUT too (verify.c verdict_for) */
    RLVR_REASON_MEMORY_LIMIT = 402,
    RLVR_REASON_PROCESS_LIMIT = 403,
    RLVR_REASON_FILE_SIZE_LIMIT = 404,
    RLVR_REASON_DISK_LIMIT = 405,       /* the tree or /tmp filled up */
    RLVR_REASON_OUTPUT_LIMIT = 406,     /* captured output cap */

    /* infrastructure (verdict INFRA: excluded from the loss, never scored 0) */
    RLVR_REASON_SANDBOX_ERROR = 500,    /* the sandbox could not be set up or failed */
    RLVR_REASON_APPLY_ERROR = 501,      /* the apply step failed for a reason other than the patch */
} rlvr_reason;

/* Short stable name, "binary", "timeout", ... ("unknown" for other numbers). */
const char *rlvr_reason_name(int reason);

#endif
