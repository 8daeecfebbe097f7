/* envs/gen_bugfix.h — what the bugfix families (bugfix-c, bugfix-py) share
 * (internal to envs/).
 *
 * A task is a small library drawn from a catalog of units (envs/
 * bugfix_c_units.h has the unit's form; the catalog is per language) with
 * one planted bug of the task's template, and a test plan: FAIL_TO_PASS
 * cases of the buggy function, PASS_TO_PASS cases of every function the bug
 * leaves alone, a public failing case and up to two passing ones, and the
 * edits the wrong patches make. The hidden tests are a judge in C (an ELF
 * program built from the hidden tests/judge.c) that holds the expected
 * values and asks the code under test through a runner program, one call a
 * line; the language decides only how the library, the public tests and the
 * runner are written. */
#ifndef RLVR_ENVS_GEN_BUGFIX_H
#define RLVR_ENVS_GEN_BUGFIX_H

#include "core/rng.h"
#include "core/text.h"
#include "envs/bugfix_c_units.h"
#include "envs/gen_internal.h"

#include <stdbool.h>
#include <stddef.h>

#define BF_MAX_SLOTS 4
#define BF_MAX_TESTS 32

typedef struct {
    const bc_unit *units;
    int n_units;
    const char *family; /* "bugfix-c": the signature's prefix */
} bf_catalog;

/* One repository: the units in file order, their constants, the bug. */
typedef struct {
    const bf_catalog *catalog;
    int n_slots;
    int unit[BF_MAX_SLOTS];
    long k[BF_MAX_SLOTS][BC_MAX_CONSTS];
    int bug_slot, bug_edit, bug_kind;
} bf_library;

typedef struct {
    int slot, func;
    long a[BC_MAX_ARGS];
    long expected; /* correct code */
    long buggy;    /* with the planted bug */
    char name[48];
} bf_test_case;

/* The chosen tests and the wrong patches' edits. */
typedef struct {
    bf_test_case tests[BF_MAX_TESTS];
    int n_tests;
    int n_fail;          /* tests[0 .. n_fail-1] are FAIL_TO_PASS before shuffling */
    int public_fail;     /* index of the public failing case */
    int public_pass[2];  /* indices of the public passing cases (-1: none) */
    int near_miss_edit;  /* another edit on the bug's line that still fails (-1: none) */
    int other_slot, other_edit; /* an unrelated edit elsewhere */
} bf_test_plan;

/* What differs between the languages' tasks. Lists are NULL-terminated. */
typedef struct {
    const char *family;         /* "bugfix-c" */
    const char *lib_file;       /* the file the bug is in, the only one a fix needs: "lib.c" */
    const char *public_file;    /* the public tests */
    const char *public_command;
    const char *build_command;  /* builds the code under test in the enclave; NULL: nothing to build */
    const char *const *judge_run;  /* "judge" and the runner's command line */
    const char *const *protected;  /* protected_paths */
    const char *const *editable;   /* editable_paths */
} bf_language;

/* The templates of a split: train and eval share five bug kinds, the
 * regression split has the two others. */
int bf_templates(rlvr_split split, const char **names, int cap);

const bc_unit *bf_unit_of(const bf_library *lib, int slot);

/* Draws task `index`'s library, bug and tests from the catalog (the stream
 * `s` is the task's): the library's signature goes to sig (it decides the
 * split), the shuffled order of the tests to perm; the tests are named
 * function_N in that order. */
int bf_draw(rlvr_rng_stream *s, const bf_catalog *cat, const rlvr_task_gen_options *opts, bf_library *lib,
            bf_test_plan *plan, int perm[BF_MAX_TESTS], char *sig, size_t sig_cap);

/* "name(1, -2)" */
void bf_format_call(char *out, size_t cap, const bf_library *lib, const bf_test_case *t);

/* C text: the names and expected values of a test program (N, names[],
 * expected[]), and plan_order() (RLVR_TEST_ORDER, else RLVR_TEST_SEED). */
void bf_render_table(rlvr_text *out, const bf_test_case *tests, const int *which, int n);
void bf_render_plan_order(rlvr_text *out);

/* tests/judge.c (hidden): the expected values and the TAP, with the code
 * under test out of its process. The runner runs in a child that holds
 * nothing but the two pipes of the calls and stderr (never the results
 * descriptor), with a clean environment; each test writes its call and
 * passes only when the answer line is exactly the expected value. After a
 * wrong answer (or none) the runner is killed and the next test starts a
 * fresh one: a crash fails its own test only. The judge's arguments name
 * the runner: one program (`judge RUNNER`), or with runner_args a program
 * and its arguments (`judge /usr/bin/python3 -I ... tests/runner.py`). */
void bf_render_judge(rlvr_text *out, const bf_library *lib, const bf_test_case *tests, const int *which, int n,
                     bool runner_args);

/* A language's library text: edits[slot] applied to each slot (-1: none),
 * `insert` placed after line `insert_line` of `insert_slot` (NULL: none). */
typedef int (*bf_render_lib_fn)(rlvr_text *out, const bf_library *lib, const int *edits, int insert_slot,
                                int insert_line, const char *insert);
/* A line that returns the public case's expected value for its arguments
 * only, to go right after the function's opening line. */
typedef void (*bf_hardcode_fn)(char *out, size_t cap, const bf_library *lib, const bf_test_case *pub);

/* The library before and after the fix, and the wrong versions: the public
 * case special-cased, the bug's line edited another wrong way (when there
 * is one), the bug left in place beside an unrelated change. */
typedef struct {
    rlvr_text correct, buggy;
    rlvr_text wrong[3];
    int n_wrong;
} bf_versions;

int bf_render_versions(bf_versions *v, const bf_library *lib, const bf_test_plan *plan, bf_render_lib_fn render_lib,
                       bf_hardcode_fn hardcode_line);
void bf_versions_free(bf_versions *v);

/* The public tests' cases: the failing one and up to two passing ones
 * (indices into plan->tests); returns how many. */
int bf_public_cases(const bf_test_plan *plan, int idx[3]);

/* Fills a task spec from the draw and the texts (the library before and
 * after the fix, the wrong versions), once the repository is written at
 * `commit`: ids, prompt, budgets, tests, patches, paths. */
int bf_fill_task(rlvr_task *t, const bf_language *lang, const rlvr_task_gen_options *opts, const char *id,
                 const char *out_dir, const bf_library *lib, const bf_test_plan *plan, const char *buggy,
                 const char *correct, const rlvr_text *wrong, int n_wrong, const char *commit, const char *sig);

#endif
