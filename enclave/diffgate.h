/* enclave/diffgate.h — what may leave the policy's workspace.
 *
 * Extraction (rollout side) never trusts the workspace's .git: it diffs the
 * base tree of a runtime-owned repository against the workspace's files,
 * untracked files included (ignored ones not), into a unified git patch.
 * Validation (verifier side) parses that patch with libgit2, exactly as the
 * enclave will apply it, and refuses anything but text changes to ordinary
 * files inside the tree, with a reason code (enclave/reason.h).
 *
 * Path globs (protected paths):
 * - a glob without '/' matches any single path component, anywhere:
 *   "conftest.py", "*.pth", "tests" (every directory named tests);
 * - a glob with '/' (a leading '/' anchors a plain name too: "/Makefile")
 *   is anchored at the tree's root and matches the path or any of its
 *   leading directories: "tests/unit" protects tests/unit/x.c,
 *   "build/[a-z]*.mk" protects build/a.mk ("*" never crosses "/").
 * Matching is case-sensitive except for the built-in .git rule.
 *
 * Editable globs (the task's allow-list) say what a patch may change or
 * create; every other path is refused (NOT_EDITABLE), new files included.
 * They are stricter than protected globs, since they grant rather than deny:
 * - a glob without '/' matches the file's name, in any directory: "*.c";
 * - a glob with '/' (or a leading '/') must match the whole path from the
 *   tree's root: "/lib.c", "src/lib?.h" (wildcards never cross "/");
 * - a glob ending in '/' covers everything beneath that directory: "src/".
 * The deny rules (path shape, .git*, environment and hook files, protected
 * globs) are checked first and win. */
#ifndef RLVR_ENCLAVE_DIFFGATE_H
#define RLVR_ENCLAVE_DIFFGATE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    char *patch;               /* unified git patch, NUL-terminated ("" when nothing changed) */
    size_t len;
    bool public_tests_changed; /* a public test file differs from the base: drop the rollout */
    int reason;                /* RLVR_REASON_NONE or RLVR_REASON_PATCH_TOO_LARGE (patch then empty) */
} rlvr_extract_result;

/* Diffs the tree `base_tree` (hex id) of the repository at `repo_dir`
 * against the directory `workdir`. `public_tests` (NULL-terminated paths,
 * may be NULL) are compared including ignored files. Files larger than
 * max_bytes count as binary; a patch longer than max_bytes is not returned
 * (reason PATCH_TOO_LARGE). */
int rlvr_diffgate_extract_dir(const char *repo_dir, const char *base_tree, const char *workdir,
                              const char *const *public_tests, size_t max_bytes, rlvr_extract_result *out);
void rlvr_extract_result_free(rlvr_extract_result *r);

typedef struct {
    unsigned version;
    const char *const *protected_globs; /* the task's: tests, build files, runner configuration (NULL-terminated) */
    size_t max_bytes;                   /* largest patch accepted */
    int max_files;                      /* most files one patch may touch */
    const char *const *editable_globs;  /* the task's allow-list (NULL-terminated); NULL: no allow-list */
} rlvr_diffgate_rules;

#define RLVR_DIFFGATE_RULES_VERSION 2
#define RLVR_DIFFGATE_RULES_INIT {RLVR_DIFFGATE_RULES_VERSION, NULL, 512 * 1024, 64, NULL}

typedef struct {
    int reason;      /* RLVR_REASON_NONE when the patch is accepted */
    int files;       /* files the patch touches */
    char path[256];  /* the offending path, for the runtime's logs only: never sent to the policy */
} rlvr_diffgate_report;

/* Validates a patch. Returns 0 with out->reason set (NONE = accepted), or a
 * negative code when validation itself could not run. */
int rlvr_diffgate_validate(const char *patch, size_t len, const rlvr_diffgate_rules *rules, rlvr_diffgate_report *out);

/* The reason a single path would be refused for (RLVR_REASON_NONE if none):
 * path shape, .git*, environment files, hook files, then `protected_globs`. */
int rlvr_diffgate_check_path(const char *path, const char *const *protected_globs);

/* The gate's verdict on one path under a task's rules: check_path's, then
 * the allow-list (NOT_EDITABLE); a hook file the allow-list names exactly
 * ("/conftest.py", no wildcard) and no protected glob covers is admitted:
 * the author's explicit choice, which `rlvr tasks check` then probes. */
int rlvr_diffgate_path_verdict(const char *path, const char *const *protected_globs,
                               const char *const *editable_globs);

/* Does `glob` (rules above) match `path`? */
bool rlvr_diffgate_glob_match(const char *glob, const char *path);

/* Does the editable glob `glob` (rules above) match `path`? */
bool rlvr_diffgate_editable_match(const char *glob, const char *path);

/* True when `path` may be changed or created under the allow-list
 * `editable_globs` (NULL: no allow-list, everything the deny rules let
 * through). */
bool rlvr_diffgate_path_editable(const char *path, const char *const *editable_globs);

/* Built-in lists, NULL-terminated, for docs and tests. */
extern const char *const rlvr_diffgate_env_files[];
extern const char *const rlvr_diffgate_hook_files[];

#endif
