/* tests/enclave/fixture.h — small task repositories the enclave tests build
 * for themselves: a git repository at a base commit, hidden tests that print
 * TAP to $RLVR_RESULTS_FD in the order of $RLVR_TEST_ORDER, a reference
 * patch and wrong patches made by editing a checkout and diffing it.
 *
 * Kinds:
 *   FIXTURE_SH     a shell calculator (src/calc.sh) whose `mul` is wrong;
 *                  hidden tests add sub mul mul_neg neg; no compiler needed.
 *   FIXTURE_C      the same calculator in C (src/calc.c, src/main.c, a
 *                  Makefile); the hidden test command builds it first.
 *   FIXTURE_JUDGE  the C calculator verified in judge mode: a judge
 *                  program built from tests/judge.c (hidden) runs ./calc
 *                  once per test in a child without the results
 *                  descriptor; `make -s calc` builds the code under test.
 *   FIXTURE_FLAKY  the shell calculator with two seeded tests:
 *                  mul_seeded picks its inputs from RLVR_TEST_SEED so that a
 *                  patch computing a+b instead of a*b passes it with
 *                  probability 0.2; planted fails on any code with
 *                  probability 0.1 (for the quarantine pass). */
#ifndef RLVR_TESTS_ENCLAVE_FIXTURE_H
#define RLVR_TESTS_ENCLAVE_FIXTURE_H

#include "enclave/verify.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef enum { FIXTURE_SH, FIXTURE_C, FIXTURE_FLAKY, FIXTURE_JUDGE } fixture_kind;

typedef struct {
    fixture_kind kind;
    char *root;          /* temporary directory with everything below */
    char *repo;          /* the repository's work tree */
    char *hidden;        /* the hidden tests, laid out as in the tree */
    char base[41];       /* base commit id */
    char base_tree[41];  /* its tree id */
    rlvr_verify_spec spec; /* ready to use (limits small, consensus 3) */
} fixture;

/* Creates a fixture under `parent` (NULL: $TMPDIR or /tmp). */
int fixture_create(fixture *f, fixture_kind kind, const char *parent);
void fixture_free(fixture *f);

typedef enum {
    EDIT_WRITE,   /* write `content` to `path` (creating directories) */
    EDIT_APPEND,  /* append `content` */
    EDIT_DELETE,  /* remove `path` */
    EDIT_CHMOD,   /* chmod `path` to `mode` */
    EDIT_SYMLINK, /* `path` becomes a link to `content` */
    EDIT_BINARY,  /* write `size` bytes of `content` (may contain NUL) */
    EDIT_RENAME,  /* rename `path` to `content` */
} fixture_edit_kind;

typedef struct {
    fixture_edit_kind kind;
    const char *path;
    const char *content;
    unsigned mode;
    size_t size;
} fixture_edit;

/* Applies the edits to a fresh checkout of the base commit and returns the
 * extracted patch (caller frees). */
int fixture_patch(const fixture *f, const fixture_edit *edits, size_t n_edits, char **patch, size_t *len);
/* The same for any work tree `repo` (its .git beside the files) at commit
 * `base`: the checkout is made in a temporary directory under `scratch`. */
int fixture_patch_repo(const char *repo, const char *base, const char *scratch, const fixture_edit *edits,
                       size_t n_edits, char **patch, size_t *len);

/* The reference solution and a few wrong ones, as edits. */
extern const fixture_edit fixture_reference_sh[];   /* 1 edit */
extern const fixture_edit fixture_reference_c[];    /* 1 edit */
/* `mul` source lines for the shell calculator: correct, and plausible wrong ones */
#define FIXTURE_SH_MUL_LINE(expr) "  mul) echo $((" expr ")) ;;\n"
/* The whole src/calc.sh with `mul` computing `expr`. */
int fixture_sh_calc(char *buf, size_t cap, const char *mul_expr);
/* The whole src/calc.c of FIXTURE_C and FIXTURE_JUDGE with `sub` and `mul`
 * returning the given expressions of a and b. */
int fixture_c_calc(char *buf, size_t cap, const char *sub_expr, const char *mul_expr);

/* Runs a patch through rlvr_verify_patch and returns the verdict. */
rlvr_enclave_verdict fixture_verify(rlvr_verify_task *task, const char *patch, size_t len, uint64_t seed);

/* Processes on the host whose parent is `parent` (zombies included), read
 * from /proc: leak checks after sandboxes are torn down. */
/* Processes whose parent is `parent` (from /proc): their number; the first
 * `cap` pids go to kids. */
int fixture_children(pid_t parent, pid_t *kids, int cap);
int fixture_count_children(pid_t parent);
/* Processes whose parent is one of `parent`'s children. */
int fixture_count_grandchildren(pid_t parent);

/* A sandbox host with overlays (or, with overlay false, copied snapshots);
 * prints its description. */
int fixture_host(rlvr_sandbox_host **out, bool overlay);
/* The same with `system_paths` bound read-only into its sandboxes (NULL:
 * RLVR_SANDBOX_SYSTEM_PATHS). */
int fixture_host_paths(rlvr_sandbox_host **out, bool overlay, const char *system_paths);

/* The variant a four-variant test runs (--unprivileged: as uid 65534,
 * checked; --copy: copied snapshots) and its scratch directory under
 * $TMPDIR (caller removes and frees). */
int fixture_variant(int argc, char **argv, bool *unprivileged, bool *copy, char **scratch, const char *prefix);

/* Entries of a directory, hidden ones excepted (e.g. /proc/self/fd). */
int fixture_count_entries(const char *dir);

#endif
