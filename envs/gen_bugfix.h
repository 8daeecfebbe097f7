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
#include <stdint.h>

#define BF_MAX_SLOTS 4
#define BF_MAX_TESTS 32

typedef struct bf_language bf_language; /* below */

/* One repository: the units in file order, their constants, the bug. */
typedef struct {
    const bf_language *lang; /* its units come from lang->units */
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

/* The templates of a split: train and eval share five bug kinds, the
 * regression split has the two others. */
int bf_templates(rlvr_split split, const char **names, int cap);

const bc_unit *bf_unit_of(const bf_library *lib, int slot);

/* "name(1, -2)" */
void bf_format_call(char *out, size_t cap, const bf_library *lib, const bf_test_case *t);

/* C text: the names and expected values of a test program (N, names[],
 * expected[]), and plan_order() (RLVR_TEST_ORDER, else RLVR_TEST_SEED). */
void bf_render_table(rlvr_text *out, const bf_test_case *tests, const int *which, int n);
void bf_render_plan_order(rlvr_text *out);

/* ---- a language ------------------------------------------------------------------------- */

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

/* Everything a task's files hold: the library's versions, the header (C
 * only), the public tests, the runner and the judge. */
typedef struct {
    bf_versions v;
    rlvr_text header, pub, runner, judge;
} bf_texts;

/* What differs between the languages' tasks. Lists are NULL-terminated. */
struct bf_language {
    const char *family;         /* "bugfix-c": also the library signature's prefix */
    uint32_t family_code;       /* of the task's random stream (gen_stream) */
    const bc_unit *units;       /* the catalog */
    const int *n_units;
    const char *lib_file;       /* the file the bug is in, the only one a fix needs: "lib.c" */
    const char *public_file;    /* the public tests */
    const char *public_command;
    const char *build_command;  /* builds the code under test in the enclave; NULL: nothing to build */
    const char *const *judge_run;  /* "judge" and the runner's command line */
    bool runner_args;              /* the runner is a command line, not one program (envs/gen_bugfix.c render_judge) */
    const char *const *protected;  /* protected_paths */
    const char *const *editable;   /* editable_paths */
    bf_render_lib_fn render_lib;
    bf_hardcode_fn hardcode_line;
    /* the header, the public tests (cases `pub`) and the runner */
    void (*render_files)(bf_texts *x, const bf_library *lib, const bf_test_case *tests, const int *pub, int n_pub);
    /* the repository at `repo` holding the buggy library and the public files */
    int (*write_repo)(const bf_texts *x, const rlvr_task_gen_options *opts, const char *repo, char commit[41]);
};

/* Task `index` of a bugfix family: draws it, writes its repository and
 * hidden judge under out_dir and returns its spec. */
int bf_generate(rlvr_task **out, const bf_language *lang, const rlvr_task_gen_options *opts, int64_t index,
                const char *out_dir);

#endif
