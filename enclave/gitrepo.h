/* enclave/gitrepo.h — the libgit2 pieces the enclave needs: initialisation
 * that ignores the user's and the system's git configuration, and exports
 * of one commit's tree into a fresh repository that holds nothing else (no
 * history, no refs, no remotes: nothing "from the future" to copy from). */
#ifndef RLVR_ENCLAVE_GITREPO_H
#define RLVR_ENCLAVE_GITREPO_H

#include <stdbool.h>

/* Turns a negative libgit2 return into RLVR_EGIT with git_error_last()'s
 * message, the call's text and file:line. */
#define RLVR_GIT_CHECK(expr)                                                              \
    do {                                                                                  \
        int rlvr_git_rc_ = (expr);                                                        \
        if (rlvr_git_rc_ < 0) return rlvr_git_fail(rlvr_git_rc_, #expr, __FILE__, __LINE__); \
    } while (0)

int rlvr_git_fail(int git_rc, const char *what, const char *file, int line);

/* git_libgit2_init() once per process, with the global, XDG and system
 * configuration search paths emptied. Safe to call many times. */
int rlvr_git_init(void);

/* Initialises a repository in `dir` (an existing directory of files), adds
 * every file that is not ignored, writes the index and makes one commit with
 * `message` by a fixed author at a fixed time, so equal trees give equal
 * commit ids. `commit_hex` (41 bytes) receives the commit id. For fixtures
 * and benchmarks that need a real repository. */
int rlvr_git_init_commit_all(const char *dir, const char *message, char commit_hex[41]);

/* Exports the tree of `rev` (a commit-ish revspec) of the repository at
 * `repo_dir` (bare or not) into a new repository at `dest` (an empty or
 * missing directory): the tree's objects only, one commit, and, unless
 * `bare`, the tree checked out with a matching index. When `extra_dir` is
 * given (non-bare only), its files are copied over the checkout and are part
 * of that one commit (the enclave's hidden tests). `tree_hex` (41 bytes)
 * receives the exported base tree's id (without the extra files). */
int rlvr_git_export(const char *repo_dir, const char *rev, const char *dest, bool bare, const char *extra_dir,
                    char tree_hex[41]);

#endif
