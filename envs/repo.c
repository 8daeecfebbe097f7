/* envs/repo.c — the libgit2 calls of the generators: a repository with one
 * reproducible commit, and a unified diff between two versions of a file. */
#include "core/error.h"
#include "enclave/gitrepo.h"
#include "envs/gen_internal.h"

#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fixed identity and time: the commit id depends only on the tree. */
#define REPO_AUTHOR "rlvr"
#define REPO_EMAIL "rlvr@localhost"
#define REPO_TIME 946684800 /* 2000-01-01T00:00:00Z */

static int git_fail(int rc, const char *what, const char *where) {
    const git_error *e = git_error_last();
    return rlvr_error_set(RLVR_EGIT, "%s %s: libgit2 error %d: %s", what, where, rc, e && e->message ? e->message : "");
}

#define GIT_CHECK(call, what)                                   \
    do {                                                        \
        int git_rc_ = (call);                                   \
        if (git_rc_ < 0) {                                      \
            rc = git_fail(git_rc_, what, dir);                  \
            goto done;                                          \
        }                                                       \
    } while (0)

int gen_repo_create(const char *dir, const char *const *paths, const char *const *contents, size_t n,
                    char commit_hex[41]) {
    RLVR_TRY(gen_must_not_exist(dir));
    for (size_t i = 0; i < n; i++) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, paths[i]);
        RLVR_TRY(gen_write_file(p, contents[i], strlen(contents[i])));
    }
    RLVR_TRY(rlvr_git_init()); /* once per process: each init from zero re-reads the CA bundle */
    int rc = 0;
    git_repository *repo = NULL;
    git_index *index = NULL;
    git_tree *tree = NULL;
    git_signature *sig = NULL;
    git_oid tree_id, commit_id;
    GIT_CHECK(git_repository_init(&repo, dir, 0), "creating the git repository");
    GIT_CHECK(git_repository_index(&index, repo), "opening the index of");
    for (size_t i = 0; i < n; i++) GIT_CHECK(git_index_add_bypath(index, paths[i]), "adding a file to");
    GIT_CHECK(git_index_write(index), "writing the index of");
    GIT_CHECK(git_index_write_tree(&tree_id, index), "writing the tree of");
    GIT_CHECK(git_tree_lookup(&tree, repo, &tree_id), "reading the tree of");
    GIT_CHECK(git_signature_new(&sig, REPO_AUTHOR, REPO_EMAIL, REPO_TIME, 0), "making the signature for");
    GIT_CHECK(git_commit_create(&commit_id, repo, "HEAD", sig, sig, NULL, "base\n", tree, 0, NULL),
              "committing in");
    git_oid_tostr(commit_hex, 41, &commit_id);
done:
    git_signature_free(sig);
    git_tree_free(tree);
    git_index_free(index);
    git_repository_free(repo);
    return rc;
}

int gen_patch(char **out, const char *path, const char *before, const char *after) {
    *out = NULL;
    RLVR_TRY(rlvr_git_init());
    git_patch *patch = NULL;
    git_buf buf = {0};
    int rc = 0;
    const char *dir = path; /* for GIT_CHECK's message */
    GIT_CHECK(git_patch_from_buffers(&patch, before, strlen(before), path, after, strlen(after), path, NULL),
              "diffing");
    GIT_CHECK(git_patch_to_buf(&buf, patch), "printing the diff of");
    *out = malloc(buf.size + 1);
    if (!*out) {
        rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory making a patch");
        goto done;
    }
    memcpy(*out, buf.ptr, buf.size);
    (*out)[buf.size] = '\0';
done:
    git_buf_dispose(&buf);
    git_patch_free(patch);
    return rc;
}

int gen_apply_patch(const char *dir, const char *patch) {
    RLVR_TRY(rlvr_git_init());
    git_repository *repo = NULL;
    git_diff *diff = NULL;
    int rc = 0;
    GIT_CHECK(git_repository_open_ext(&repo, dir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL), "opening");
    GIT_CHECK(git_diff_from_buffer(&diff, patch, strlen(patch)), "parsing a patch for");
    GIT_CHECK(git_apply(repo, diff, GIT_APPLY_LOCATION_WORKDIR, NULL), "applying a patch to");
done:
    git_diff_free(diff);
    git_repository_free(repo);
    return rc;
}
