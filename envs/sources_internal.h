/* envs/sources_internal.h — what mining and the importers share: the task
 * spec they write, the record of test results over several enclave runs,
 * and the report file. Internal to envs/. */
#ifndef RLVR_ENVS_SOURCES_INTERNAL_H
#define RLVR_ENVS_SOURCES_INTERNAL_H

#include "enclave/verify.h"
#include "envs/sources.h"
#include "envs/task.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* One task as a source makes it. Paths are as the spec will hold them:
 * relative to the pool for the spec that is written, absolute for the
 * provisional one the enclave runs use. */
typedef struct {
    const char *id, *family, *split_key, *prompt;
    rlvr_split split;
    const char *repository;            /* the task's repository */
    const char *base_commit;           /* 40 hex digits */
    const char *hidden_root;           /* directory holding the hidden files */
    const rlvr_str_list *hidden_files; /* paths in the tree */
    const rlvr_str_list *public_files; /* the base tree's test files */
    const rlvr_str_list *fail_to_pass, *pass_to_pass; /* empty: a placeholder name (provisional spec) */
    const char *reference_patch;
    const char *test_command;          /* NULL: the facts' */
    const char *results_junit;         /* with test_command: NULL for TAP */
    const char *environment_json;      /* NULL: the facts' */
    const char *expected_root;         /* results as expected files under this directory; NULL: none */
    const rlvr_str_list *expected_files;
    int64_t created_at;
    bool has_created_at;
    json_t *metadata;                  /* borrowed; NULL: none */
    json_t *budgets;                   /* borrowed; NULL: the facts' */
} source_task;

/* The spec's JSON object (a new reference), or NULL when out of memory. */
json_t *source_task_json(const source_task *t, const rlvr_repo_facts *facts);

/* Parses the object as a spec whose relative paths resolve against
 * base_dir: the loader's checks on what a source made. */
int source_task_parse(rlvr_task **out, json_t *spec, const char *source, const char *base_dir);

/* Writes the object as OUT/<id>.json (refusing an existing file). */
int source_task_write(json_t *spec, const char *out_dir, const char *id);

/* "name" reduced to [A-Za-z0-9._-] (others become '-'), at most `cap`-1 bytes. */
void source_clean_name(char *out, size_t cap, const char *name);

/* ---- test results over several runs --------------------------------------------- */

enum { SIDE_BEFORE = 0, SIDE_AFTER = 1 };

typedef struct {
    char *name;
    int pass[2], fail[2], skip[2]; /* runs of each side that reported it so */
} observed_test;

typedef struct {
    observed_test *tests;
    size_t n, cap;
    int runs[2];           /* runs made on each side */
    bool infra, limit;     /* a run failed in the enclave, or hit its limit */
    bool unreadable[2];    /* a run of that side reported nothing readable (no results, malformed) */
    char detail[256];      /* what went wrong first */
} observation;

/* Runs `patch` `runs` times on the verify task (the first in the default
 * order) and records every test's result under `side`. Returns 0 (what went
 * wrong is in obs), a negative code only for out of memory. */
int observe(rlvr_verify_task *vt, const char *patch, int side, int runs, uint64_t seed, observation *obs);
void observation_free(observation *obs);

/* A verify task over the spec whose enclave runs have `wall_s` each. With
 * every_test, it requires no names, so every test a run reports is
 * recorded (a provisional spec's); else the task's own names are judged. */
int source_verify_task_new(rlvr_verify_task **out, rlvr_sandbox_host *host, const rlvr_task *task, double wall_s,
                           bool every_test);

/* Makes the pool directory with its repos/ and hidden/ and puts its absolute
 * path in out_abs: the provisional specs name everything by it. */
int source_pool_open(const char *out_dir, char *out_abs, size_t cap);

/* ---- the report ----------------------------------------------------------------- */

/* Opens OUT/<name> for appending one JSON object per line. */
int source_report_open(FILE **out, const char *out_dir, const char *name);
/* Writes the object as one line (and frees it). */
void source_report_line(FILE *f, json_t *line);

#endif
