/* envs/task.h — a task spec: what the policy works on and how it is checked.
 *
 * A task is one JSON object (docs/TASKS.md documents every field). Two kinds
 * of verification:
 * - "tests" (default): a repository (directory or git bundle) at a base
 *   commit, public tests the policy may run, hidden test files and command
 *   run only in the enclave, FAIL_TO_PASS / PASS_TO_PASS test names
 *   (SWE-bench's field names), a reference patch and deliberately wrong
 *   patches (unified git diffs), protected path globs.
 * - "arith": a single-turn arithmetic problem (envs/arith.h) scored in
 *   process, with a reference answer and wrong answers.
 * Both carry id, family, split (train / eval / regression), split key
 * (repository or template: train and eval/regression never share one),
 * prompt, tool set and budgets.
 *
 * Loading checks every field; a refusal names the spec and the field:
 *   task spec tasks/x.json: field "hidden_tests" missing
 * Relative paths in a spec are relative to the spec file's directory. */
#ifndef RLVR_ENVS_TASK_H
#define RLVR_ENVS_TASK_H

#include "envs/arith.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RLVR_TASK_FORMAT "rlvr-task/1"

typedef enum { RLVR_SPLIT_TRAIN = 0, RLVR_SPLIT_EVAL = 1, RLVR_SPLIT_REGRESSION = 2, RLVR_SPLIT_COUNT } rlvr_split;

typedef enum { RLVR_VERIFIER_TESTS = 0, RLVR_VERIFIER_ARITH = 1 } rlvr_verifier_kind;

typedef enum { RLVR_REPO_DIRECTORY = 0, RLVR_REPO_BUNDLE = 1 } rlvr_repo_kind;

/* "train" / "eval" / "regression"; NULL when out of range. */
const char *rlvr_split_name(rlvr_split split);
/* RLVR_EINVAL (with a "did you mean") for other names. */
int rlvr_split_parse(const char *name, rlvr_split *out);

typedef struct {
    char **items;
    size_t n;
} rlvr_str_list;

/* Appends a copy of `s` unless the list holds it already. */
int rlvr_str_list_add_unique(rlvr_str_list *l, const char *s);
/* Frees the strings and the array; the list is empty afterwards. */
void rlvr_str_list_clear(rlvr_str_list *l);

/* Ceilings on one rollout (docs/CONFIG.md "[harness]"). 0 means "the run's [harness] value". */
typedef struct {
    int64_t turns;          /* policy turns */
    int64_t policy_tokens;  /* tokens the policy samples, all turns together */
    int64_t context_tokens; /* prompt + policy + observations */
    double tool_timeout_s;  /* wall time of one tool call */
    int64_t malformed_calls; /* malformed tool calls in a row that stop the rollout; in the run's
                                [harness] budgets 0 = no limit */
    double verify_timeout_s; /* wall (and CPU) seconds of one enclave run of this task's tests, replacing
                                the run's; 0 = the run's */
} rlvr_task_budgets;

/* Read-only after loading; free with rlvr_task_free. */
typedef struct {
    char *source;       /* where it was read: "pool/x.json" or "pool.jsonl:12" */
    char *base_dir;     /* directory relative paths are resolved against */

    char *id;           /* [A-Za-z0-9._-], 1..63 bytes, unique in a pool */
    char *family;       /* "bugfix-c", "arith", "swe-bench", ... */
    char *template_name;/* generator template ("off_by_one"), NULL when none */
    rlvr_split split;
    char *split_key;
    char *prompt;
    rlvr_verifier_kind verifier;
    uint32_t tools;     /* mask of 1u << rlvr_tool_id (envs/tools.h) */
    rlvr_task_budgets budgets;

    /* verifier "tests" */
    char *repository;       /* as written in the spec */
    char *repository_path;  /* resolved against base_dir */
    rlvr_repo_kind repository_kind;
    char *base_commit;      /* 40 lowercase hex digits */
    char *public_test_command;
    char *public_results_junit; /* "results": {"format": "junit", "path": P}: run_public_tests reads the JUnit
                                   file P the command leaves and sums it up for the policy; NULL: output only */
    rlvr_str_list public_test_files; /* paths in the tree (checksummed by the diff gate) */
    char *hidden_root;      /* as written: directory holding the hidden files */
    char *hidden_root_path; /* resolved */
    rlvr_str_list hidden_test_files; /* paths in the tree, copied from hidden_root/<same path> */
    char *hidden_test_command; /* command mode (NULL in judge mode) */
    char *judge_build;         /* judge mode: builds the judge from the hidden files (enclave/judge.h) */
    rlvr_str_list judge_run;   /* judge mode: the program the judge build left, then its arguments */
    char *hidden_build_command;/* judge mode, optional: builds the code under test in the enclave */
    char *hidden_results_junit;/* "results": {"format": "junit", "path": P}: the hidden tests' results are
                                  the JUnit XML file P in the tree (enclave/junit.h); NULL: TAP */
    char *expected_root;       /* "results": {"format": "expected", "root": R, "files": [...]}: the results
                                  are the files the command leaves, compared with the copies under R
                                  (enclave/expected.h); NULL: TAP or JUnit. As written */
    char *expected_root_path;  /* resolved */
    rlvr_str_list expected_files; /* their tree paths: one test each, named by the path */
    rlvr_str_list fail_to_pass, pass_to_pass;
    char *reference_patch;
    rlvr_str_list wrong_patches;
    rlvr_str_list protected_paths;   /* path globs a patch must not touch (docs/TASKS.md) */
    rlvr_str_list editable_paths;    /* the allow-list: globs of what a patch may change or create
                                        (enclave/diffgate.h); when the spec gives none, derived from
                                        the reference patch (editable_derived) */
    bool editable_derived;           /* editable_paths came from the reference patch: not written back */
    bool network;                    /* "network": "loopback": the workspace's and the enclave's runs may
                                        open inet sockets on their own loopback (default "none": refused) */
    /* "environment": the root tree the workspace's commands, the build and
     * the hidden tests run in (enclave/image.h); NULL: the host's */
    char *environment;               /* the image as written: a directory, SquashFS or SIF file */
    char *environment_path;          /* resolved against the spec's directory */
    char *environment_workdir;       /* where the repository appears and commands start; NULL: /work */
    rlvr_str_list environment_env;   /* "KEY=VALUE" for every command, in the spec's order */

    /* verifier "arith" */
    rlvr_arith_problem arith;
    char *reference_answer;
    rlvr_str_list wrong_answers;

    char *metadata_json; /* the free-form "metadata" object, compact JSON; NULL when none */
    int64_t created_at;  /* "created_at": when the task's change was made (UTC seconds since 1970; a mined
                            task's fix commit); with has_created_at. Train and eval tasks may share a split
                            key only when every train task is older than every eval task (envs/pool.h) */
    bool has_created_at;
} rlvr_task;

/* "2019-03-04T12:30:00Z" (fractions and a "+HH:MM" offset accepted, a bare
 * date is midnight UTC) to seconds since 1970; RLVR_EINVAL (no message) for
 * anything else. */
int rlvr_task_time_parse(const char *text, int64_t *out);
/* The same time written back, "2019-03-04T12:30:00Z" (21 bytes with NUL). */
void rlvr_task_time_format(int64_t t, char out[21]);

/* Reads and checks one spec file. RLVR_EIO when unreadable, RLVR_EFORMAT
 * when a field is missing or wrong (message names file and field). */
int rlvr_task_load_file(rlvr_task **out, const char *path);

/* Same from JSON text: `source` names it in messages, relative paths resolve
 * against `base_dir`. */
int rlvr_task_parse(rlvr_task **out, const char *text, size_t len, const char *source, const char *base_dir);

void rlvr_task_free(rlvr_task *task);

/* The spec as JSON text (fields in the documented order; paths as written),
 * pretty-printed when `indent` > 0, one line otherwise. *out is malloc'd. */
int rlvr_task_to_json(const rlvr_task *task, int indent, char **out);

/* Writes the spec to `path` (pretty-printed, trailing newline). */
int rlvr_task_write_file(const rlvr_task *task, const char *path);

/* The allow-list a task without editable_paths gets: for every file the
 * reference patch changes, creates or deletes, the files with its extension
 * in its directory ("/src/" then "*.c"; an exact path when it has no
 * extension).
 * Tasks mined from repositories thus get a list as narrow as their fix. */
int rlvr_task_editable_from_patch(const char *patch, rlvr_str_list *out);

/* The run's budgets with the task's non-zero values taking precedence. */
void rlvr_task_budgets_resolve(const rlvr_task_budgets *task, const rlvr_task_budgets *run, rlvr_task_budgets *out);

#endif
