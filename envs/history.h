/* envs/history.h — a repository's history as task material (libgit2): the
 * pieces `rlvr tasks mine` and `rlvr tasks import` share.
 *
 * - opening a repository directory, or a git bundle unpacked into a fresh
 *   bare repository (libgit2 reads no bundles itself);
 * - the files one commit changes, the unified diff of some of them, and
 *   their contents at a commit;
 * - a test patch applied to a commit's tree (what a SWE-bench instance's
 *   `test_patch` leaves);
 * - the scrubbed copy a task's repository becomes: a new bare repository
 *   holding exactly the objects reachable from the base commit, one branch
 *   at it, and nothing else (no later commits, tags, other refs, reflogs,
 *   ORIG_HEAD or FETCH_HEAD), so no path from the task leads to its fix.
 *
 * Internal to envs/: the types are libgit2's. Every function returns 0 or a
 * negative RLVR_E* code with a message naming the repository. */
#ifndef RLVR_ENVS_HISTORY_H
#define RLVR_ENVS_HISTORY_H

#include "envs/task.h"

#include <git2.h>
#include <stdbool.h>

/* True when `path` is a file that starts like a git bundle (v2 or v3). */
bool rlvr_history_is_bundle(const char *path);

/* Opens the repository at `path` (a directory, bare or not). A git bundle is
 * unpacked first into a new bare repository in a fresh directory under
 * `scratch` (NULL refuses bundles), returned in *unbundled for the caller to
 * remove and free (NULL when nothing was unpacked): its pack is indexed and
 * its refs created, HEAD following the bundle's. A bundle that needs
 * prerequisite commits is refused. */
int rlvr_history_open(git_repository **out, const char *path, const char *scratch, char **unbundled);

/* The repository's work tree, or its git directory when bare, made
 * absolute: what a task spec names. */
void rlvr_history_path(git_repository *repo, char *out, size_t cap);

/* One changed path of a commit against its parent. */
typedef struct {
    char *path;   /* the new path (the old one for a deletion) */
    char status;  /* 'A' added, 'M' modified, 'D' deleted, 'T' type changed */
    bool binary;  /* either side is binary */
} rlvr_history_change;

typedef struct {
    rlvr_history_change *items;
    size_t n;
} rlvr_history_changes;

/* The paths `commit` changes against `parent` (exact paths, no rename
 * detection: a rename is a deletion and an addition). */
int rlvr_history_changes_of(git_repository *repo, const git_commit *parent, const git_commit *commit,
                            rlvr_history_changes *out);
void rlvr_history_changes_free(rlvr_history_changes *c);

/* The unified git diff from `from` to `to` restricted to `paths` (exact
 * paths, n of them); *out is malloc'd, "" when nothing differs. */
int rlvr_history_diff(git_repository *repo, const git_tree *from, const git_tree *to, char *const *paths, size_t n,
                      char **out);

/* Writes the blobs of `paths` in `tree` under dest_dir at the same relative
 * paths (directories created, the executable bit kept). A path missing from
 * the tree is RLVR_ENOTFOUND. */
int rlvr_history_write_files(git_repository *repo, const git_tree *tree, char *const *paths, size_t n,
                             const char *dest_dir);

/* Every blob path of `tree` for which match(path, arg) is true, in tree
 * order. */
int rlvr_history_tree_paths(git_repository *repo, const git_tree *tree, bool (*match)(const char *path, void *arg),
                            void *arg, rlvr_str_list *out);

/* Applies the unified diff `patch` to `tree` in memory: *out_tree is the
 * result, `touched` (may be NULL) receives the paths the patch leaves as
 * files (its new paths; deleted files are left out). RLVR_EFORMAT with
 * libgit2's reason when the text is no diff or does not apply. */
int rlvr_history_apply(git_repository *repo, const git_tree *tree, const char *patch, git_tree **out_tree,
                       rlvr_str_list *touched);

/* Writes the scrubbed repository of `base` to `dest_dir` (must not exist): a
 * bare repository with one pack of the objects reachable from `base`, the
 * branch refs/heads/main at `base` and HEAD on it. */
int rlvr_history_write_scrubbed(git_repository *repo, const git_oid *base, const char *dest_dir);

/* The commit message without trailers (Signed-off-by:, Co-authored-by:, …
 * in the last paragraph) and surrounding blank lines; *out is malloc'd. */
int rlvr_history_message(const git_commit *commit, char **out);

#endif
