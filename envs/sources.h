/* envs/sources.h — tasks from the user's world: mined from a repository's
 * history (`rlvr tasks mine`), imported from SWE-bench instances and from
 * Harbor task directories (`rlvr tasks import`). docs/TASKS.md "Your own
 * tasks" is the user's guide; every function writes a pool directory:
 *
 *   OUT/<id>.json        the task specs (command mode, envs/task.h)
 *   OUT/repos/<id>.git   each task's repository, scrubbed: a bare repository
 *                        holding only what is reachable from its base commit
 *   OUT/hidden/<id>/     its hidden test files, at their tree paths
 *   OUT/expected/<id>/   with results as expected files: the committed copies
 *                        (enclave/expected.h), never in an enclave
 *   OUT/<source>-report.jsonl  one line per commit, instance or directory
 *                        read, with what became of it and why
 *
 * Nothing is overwritten: a task whose spec, repository or hidden directory
 * exists already is refused. */
#ifndef RLVR_ENVS_SOURCES_H
#define RLVR_ENVS_SOURCES_H

#include "enclave/sandbox.h"
#include "envs/task.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* ---- the facts about a repository a person supplies ------------------------------
 *
 * One JSON object (docs/TASKS.md "Repository facts"): how its tests run and
 * report, in which environment, which paths are tests, code and documents.
 * Loading refuses unknown keys and wrong types naming the file and the key. */
typedef struct {
    char *source;          /* "facts.json" or "specs.json: tkem/cachetools", for messages */
    char *test_command;    /* "test_command": runs the tests in the enclave (the hidden command) */
    char *public_command;  /* "public_command": the policy's run_public_tests; NULL: test_command */
    char *install;         /* "install": a step run before either command (joined with &&); NULL: none */
    char *results_junit;   /* "results": {"format": "junit", "path": P}; NULL: TAP ("tap") or expected */
    rlvr_str_list expected;/* "results": {"format": "expected", "files": [GLOB, ...]}: the test command writes
                              these files, each compared with the commit's copy (enclave/expected.h) */
    char *environment_json;/* "environment", as the task key takes it, with the image path made absolute;
                              compact JSON; NULL: the host's system paths */
    rlvr_str_list tests;   /* "tests": protected-path globs of the test files (envs/diffgate.h rules) */
    rlvr_str_list code;    /* "code": globs of the code a fix may change; empty: every file that is
                              neither a test nor a document */
    rlvr_str_list docs;    /* "docs": globs of documents; empty: the built-in list (docs/, *.md, ...) */
    rlvr_str_list protect; /* "protected_paths": more globs no patch may touch (runner configuration) */
    char *budgets_json;    /* "budgets" and "tools": copied into every task as given; NULL: none */
    char *tools_json;
    bool network_loopback; /* "network": "loopback" */
    double wall_s;         /* "wall_s": the wall-time limit of one enclave run (default 120) */
} rlvr_repo_facts;

/* Reads the facts from a JSON file holding one object. */
int rlvr_repo_facts_load(rlvr_repo_facts *out, const char *path);
/* The same from JSON text; `source` names it, relative image paths resolve
 * against `base_dir`. */
int rlvr_repo_facts_parse(rlvr_repo_facts *out, const char *text, const char *source, const char *base_dir);
/* The file's facts (path may be NULL: none) with the keys of the JSON object
 * `overrides_json` (may be NULL) replacing its own: the command line's
 * flags over the file. */
int rlvr_repo_facts_load_merged(rlvr_repo_facts *out, const char *path, const char *overrides_json);

/* The facts a command line gives (`rlvr tasks mine`'s flags); NULL or none:
 * not given. */
typedef struct {
    const char *test_command; /* "test_command" */
    const char *results;      /* "tap" or "junit:PATH" */
    const char *environment;  /* an image path, made absolute when it exists */
    const char *const *tests; /* "tests" globs (n_tests of them) */
    size_t n_tests;
    const char *const *code;  /* "code" globs */
    size_t n_code;
} rlvr_repo_facts_flags;

/* The file's facts (path may be NULL: none) with the flags' keys replacing
 * its own. RLVR_ECONFIG for results that are neither tap nor junit:PATH. */
int rlvr_repo_facts_load_flags(rlvr_repo_facts *out, const char *path, const rlvr_repo_facts_flags *flags);
void rlvr_repo_facts_free(rlvr_repo_facts *f);

/* Whether the path is one of the expected files the test command writes. */
bool rlvr_repo_facts_expected(const rlvr_repo_facts *f, const char *path);

/* What a path is to these facts: 't' test, 'd' document, 'c' code, 'o' other
 * (neither: build and packaging files when `code` is given). */
char rlvr_repo_facts_classify(const rlvr_repo_facts *f, const char *path);

/* ---- mining ---------------------------------------------------------------------- */

#define RLVR_MINE_OPTIONS_VERSION 1

typedef struct {
    unsigned version;           /* RLVR_MINE_OPTIONS_VERSION */
    const char *repo;           /* a git repository directory or a git bundle */
    const char *rev;            /* where the walk starts; NULL: HEAD */
    const char *name;           /* task id prefix and split key; NULL: the repository's directory name */
    const rlvr_repo_facts *facts;
    int64_t since, until;       /* commit times (UTC seconds) to take, inclusive; 0: unbounded */
    int max_tasks;              /* stop once this many tasks are kept (newest first); 0: no limit */
    double eval_share;          /* the newest share of the kept tasks that become eval tasks (0..1) */
    int runs;                   /* enclave runs on each side, before and after the fix (≥ 2) */
    uint64_t seed;              /* test seeds and orders of those runs */
    FILE *progress;             /* one line per commit examined; NULL: quiet */
} rlvr_mine_options;

#define RLVR_MINE_OPTIONS_INIT {RLVR_MINE_OPTIONS_VERSION, NULL, NULL, NULL, NULL, 0, 0, 0, 0.2, 2, 1, NULL}

/* Why a commit did or did not become a task. */
typedef enum {
    RLVR_MINE_KEPT = 0,
    RLVR_MINE_MERGE,            /* a merge or the root commit: no single parent to be the base */
    RLVR_MINE_TESTS_ONLY,       /* changes tests and no code */
    RLVR_MINE_DOCS_ONLY,        /* changes documents only */
    RLVR_MINE_NO_TESTS,         /* changes code and no test file */
    RLVR_MINE_OTHER_ONLY,       /* changes neither code nor tests (build files, packaging, CI) */
    RLVR_MINE_BINARY,           /* the code part of the change is binary */
    RLVR_MINE_BUILD_BROKEN,     /* after the fix the tests report nothing, or nothing passes */
    RLVR_MINE_FAILS_AFTER,      /* after the fix some tests still fail (the change needs more than its code) */
    RLVR_MINE_NO_FAIL_TO_PASS,  /* no test fails before and passes after */
    RLVR_MINE_FLAKY,            /* every FAIL_TO_PASS candidate flips between runs */
    RLVR_MINE_TIMEOUT,          /* a run hit its limit */
    RLVR_MINE_INFRA,            /* the enclave failed */
    RLVR_MINE_OUTCOME_COUNT
} rlvr_mine_outcome;

/* "kept", "merge", "tests_only", ... as the report writes them. */
const char *rlvr_mine_outcome_name(rlvr_mine_outcome o);
/* Whether an outcome is decided before any test runs (not a candidate). */
bool rlvr_mine_outcome_precheck(rlvr_mine_outcome o);

typedef struct {
    int64_t examined;                       /* commits in the range */
    int64_t candidates;                     /* commits that change code and tests */
    int64_t counts[RLVR_MINE_OUTCOME_COUNT];
    int64_t train, eval;                    /* kept tasks by split */
    int64_t boundary;                       /* commit time of the oldest eval task (0: no eval task) */
    double wall_s;
} rlvr_mine_summary;

/* Walks the history newest first and writes the kept tasks to out_dir (a
 * pool, see the top of this file; the report is mine-report.jsonl). Each
 * candidate runs in fresh enclaves of `host`: the tests as of the fix over
 * the base commit, `runs` times untouched and `runs` times with the code
 * part of the change; FAIL_TO_PASS are the tests that fail in every run
 * before and pass in every run after, PASS_TO_PASS those that pass in all;
 * a test whose result differs between runs of one side is left out
 * (metadata "unstable"). The newest eval_share of the kept tasks become
 * eval tasks, so every train task's fix is older than every eval task's.
 * Returns 0 with *out filled even when nothing was kept. */
int rlvr_tasks_mine(const rlvr_mine_options *opts, rlvr_sandbox_host *host, const char *out_dir,
                    rlvr_mine_summary *out);

/* ---- SWE-bench instances --------------------------------------------------------- */

#define RLVR_SWE_IMPORT_OPTIONS_VERSION 1

typedef struct {
    unsigned version;        /* RLVR_SWE_IMPORT_OPTIONS_VERSION */
    const char *jsonl;       /* the instances, one JSON object per line */
    const char *specs;       /* JSON: {"owner/name": facts, ...} (the per-repository table) */
    const char *repos_dir;   /* holds each repository as NAME, NAME.git, NAME.bundle, OWNER__NAME[...] */
    rlvr_split split;        /* the split of every imported task */
    bool check_base;         /* run every instance once at its base commit and refuse one whose
                                FAIL_TO_PASS tests pass there (needs a host) */
    uint64_t seed;
    FILE *progress;
} rlvr_swe_import_options;

#define RLVR_SWE_IMPORT_OPTIONS_INIT {RLVR_SWE_IMPORT_OPTIONS_VERSION, NULL, NULL, NULL, RLVR_SPLIT_EVAL, true, 1, NULL}

typedef struct {
    int64_t read, imported, refused;
    double wall_s;
} rlvr_import_summary;

/* Imports every instance of the file into out_dir. An instance that cannot
 * become a task (a missing field, an unknown repository, a test_patch that
 * does not apply, FAIL_TO_PASS passing at the base) is refused with a line
 * naming FILE:LINE and the field, and the others go on: *out counts both.
 * Errors of the file as a whole (unreadable, a bad spec table) are returned. */
int rlvr_tasks_import_swe(const rlvr_swe_import_options *opts, rlvr_sandbox_host *host, const char *out_dir,
                          rlvr_import_summary *out);

/* ---- Harbor task directories ----------------------------------------------------- */

#define RLVR_HARBOR_IMPORT_OPTIONS_VERSION 1

typedef struct {
    unsigned version;          /* RLVR_HARBOR_IMPORT_OPTIONS_VERSION */
    const char *const *dirs;   /* task directories (NULL-terminated) */
    const char *image;         /* the environment for tasks whose environment is a Dockerfile; NULL: none */
    rlvr_split split;
    FILE *progress;
} rlvr_harbor_import_options;

#define RLVR_HARBOR_IMPORT_OPTIONS_INIT {RLVR_HARBOR_IMPORT_OPTIONS_VERSION, NULL, NULL, RLVR_SPLIT_TRAIN, NULL}

/* Imports each directory as one task (docs/TASKS.md "Harbor tasks"): the
 * reference patch comes from running solution/solve.sh once in a throwaway
 * workspace of `host`. A directory that cannot become a task is refused
 * with a line naming the file and the field; the others go on. */
int rlvr_tasks_import_harbor(const rlvr_harbor_import_options *opts, rlvr_sandbox_host *host, const char *out_dir,
                             rlvr_import_summary *out);

#endif
