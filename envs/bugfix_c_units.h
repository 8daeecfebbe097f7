/* envs/bugfix_c_units.h — the code the bugfix families build libraries
 * from (internal to envs/): C units for "bugfix-c", the same units in
 * Python for "bugfix-py".
 *
 * A unit is one or two C functions. Its lines may hold constants drawn per
 * repository ({K0}, {K1}, {K0+1}, {K1-1}: a constant plus or minus one
 * digit). Each edit is a one-line change (replace the one occurrence of
 * `from` by `to`, or delete the line) labelled with a bug template. An edit
 * is a planted bug, a near miss of another edit on the same line, or an
 * unrelated change, depending on how the generator uses it.
 *
 * `eval` computes what the C code returns for a call, with one edit applied
 * (edit -1: as written). It mirrors the C text line by line; the bugfix-c
 * tests compile every generated library and check that the compiled code
 * agrees with it. Every edit keeps the code free of undefined behaviour,
 * crashes and endless loops on the candidate arguments. */
#ifndef RLVR_ENVS_BUGFIX_C_UNITS_H
#define RLVR_ENVS_BUGFIX_C_UNITS_H

#include "core/rng.h"
#include "envs/gen_internal.h"

enum {
    BUG_NONE = 0, /* ends an edit table */
    BUG_OFF_BY_ONE,
    BUG_WRONG_OPERATOR,
    BUG_WRONG_CONSTANT,
    BUG_MISSING_CASE,
    BUG_WRONG_CONDITION,
    BUG_SWAPPED_ARGUMENTS,
    BUG_WRONG_VARIABLE,
    BUG_COUNT
};

#define BC_MAX_LINES 12
#define BC_MAX_EDITS 8
#define BC_MAX_FUNCS 2
#define BC_MAX_ARGS 3
#define BC_MAX_CONSTS 2
#define BC_MAX_CASES 24

typedef struct {
    int line;         /* index into the unit's lines */
    const char *from; /* NULL: delete the line */
    const char *to;
    int kind;         /* BUG_*; BUG_NONE ends the table */
} bc_edit;

typedef struct {
    const char *name;
    const char *proto;               /* declaration for lib.h */
    int n_args;
    const char *params[BC_MAX_ARGS]; /* parameter names */
    int open_line;                   /* the line that opens the body ("... {") */
} bc_func;

typedef struct {
    const char *name;
    const char *lines[BC_MAX_LINES + 1]; /* NULL-terminated */
    bc_func funcs[BC_MAX_FUNCS];         /* exported functions; name NULL ends */
    bc_edit edits[BC_MAX_EDITS + 1];
    /* Draws the unit's constants (NULL when it has none). */
    void (*constants)(rlvr_rng_stream *s, long k[BC_MAX_CONSTS]);
    /* Candidate arguments for function f; returns how many (≤ BC_MAX_CASES). */
    int (*cases)(rlvr_rng_stream *s, const long k[BC_MAX_CONSTS], int f, long out[][BC_MAX_ARGS]);
    /* What function f returns for arguments a with edit e applied (-1: none). */
    long (*eval)(const long k[BC_MAX_CONSTS], int f, const long a[BC_MAX_ARGS], int e);
} bc_unit;

extern const bc_unit bc_units[];
extern const int bc_n_units;
/* The bugfix-py catalog: the same functions (and evaluators) in Python;
 * `proto` is NULL, `open_line` is the `def` line. */
extern const bc_unit bp_units[];
extern const int bp_n_units;
extern const char *const bc_bug_names[BUG_COUNT];

int bc_unit_n_funcs(const bc_unit *u);
int bc_unit_n_edits(const bc_unit *u);

/* Appends line `line` of unit `u` (constants `k` filled in) with edit `edit`
 * applied (-1: none; a deleted line appends nothing). RLVR_EINVAL when the
 * edit's text does not occur exactly once in the line. */
int bc_render_line(rlvr_text *out, const bc_unit *u, const long *k, int line, int edit);

#endif
