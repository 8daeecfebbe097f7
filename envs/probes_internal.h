/* envs/probes_internal.h — what the probe classes' files share
 * (envs/probes.c: the classes for every task; envs/probes_python.c: the
 * ones for tasks that start Python). Not part of the module's contract. */
#ifndef RLVR_ENVS_PROBES_INTERNAL_H
#define RLVR_ENVS_PROBES_INTERNAL_H

#include "core/text.h"
#include "envs/probes.h"

#include <limits.h>
#include <stdbool.h>

typedef enum { EDIT_NEW, EDIT_APPEND, EDIT_AFTER_FIRST_LINE } edit_kind;

typedef struct {
    edit_kind kind;
    char path[PATH_MAX];
    const char *text;
} probe_edit;

typedef struct {
    const rlvr_task *t;
    const char *scratch;
    char *base;         /* a checkout of the base commit (probes read it, never write it) */
    rlvr_str_list files;/* every file of the base tree, relative */
    rlvr_text stream;   /* a passing TAP stream: every required test ok, in the default order */
    rlvr_text decoy;    /* the same, one more failing test the task does not name */
    rlvr_probe_set *out;
    const char **protected_globs, **editable_globs; /* the task's, NULL-terminated, for gate_allows */
} probe_ctx;

/* Whether `s` ends with `suffix`. */
bool has_suffix(const char *s, const char *suffix);
/* Whether `s` is an item of `l`. */
bool listed(const rlvr_str_list *l, const char *s);
/* What the verifier's gate would say of a path: the built-in rules, the
 * task's protected globs, its public and hidden test files, its allow-list. */
bool gate_allows(const probe_ctx *c, const char *path);
/* Whether one of the task's commands names `word` (a whole word). */
bool commands_mention(const rlvr_task *t, const char *word);
/* The edits against the base checkout as one patch. */
int patch_from_base(probe_ctx *c, const probe_edit *edits, size_t n, rlvr_text *out);
/* One probe: the edits against the base (on the reference fix when
 * `reference`). */
int add_probe(probe_ctx *c, const char *klass, const char *part, bool reference, const probe_edit *edits, size_t n);
/* The paths the code under test must never open: the hidden files where
 * the tree would hold them, and the judge's program. */
void secret_paths(const rlvr_task *t, rlvr_str_list *out);
/* Where a guard goes: the editable C, shell or Python source the reference
 * fix touches, else any editable one; NULL when there is none. */
const char *guard_target(const probe_ctx *c);
/* `s` as printf '%s\n' arguments, one per line, single-quoted; `dollar`
 * doubles '$' for make. */
void sh_lines(rlvr_text *out, const char *s, bool dollar);

/* ---- envs/probes_python.c ------------------------------------------------------- */

/* Python code run where it is appended (a module's import, a runner's exec
 * of a file): the forged stream to every results channel it can reach,
 * then exit 0 (`kill_group`: kill its process group instead). */
void py_forger(rlvr_text *out, const char *stream, bool kill_group);
/* Python: exit 1 unless one of the secret paths opens. */
void py_guard(rlvr_text *out, const rlvr_str_list *secrets);
/* The classes for tasks whose commands start Python (python lookup, python
 * restart, pytest forgers); nothing for others. */
int probe_python(probe_ctx *c);

#endif
