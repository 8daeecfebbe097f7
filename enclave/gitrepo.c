#include "enclave/gitrepo.h"

#include "core/error.h"
#include "enclave/fsutil.h"

#include <git2.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int rlvr_git_fail(int git_rc, const char *what, const char *file, int line) {
    const git_error *e = git_error_last();
    return rlvr_error_set_at(RLVR_EGIT, file, line, "%s: %s (libgit2 %d)", what, e && e->message ? e->message : "failed",
                             git_rc);
}

static pthread_once_t git_once = PTHREAD_ONCE_INIT;
static int git_init_rc;

static void git_init_once(void) {
    if (git_libgit2_init() < 0) {
        git_init_rc = -1;
        return;
    }
    /* only the repository's own config counts: never ~/.gitconfig or /etc/gitconfig */
    const int levels[] = {GIT_CONFIG_LEVEL_GLOBAL, GIT_CONFIG_LEVEL_XDG, GIT_CONFIG_LEVEL_SYSTEM,
                          GIT_CONFIG_LEVEL_PROGRAMDATA};
    for (size_t i = 0; i < sizeof levels / sizeof *levels; i++)
        if (git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, levels[i], "") < 0) git_init_rc = -1;
}

int rlvr_git_init(void) {
    pthread_once(&git_once, git_init_once);
    if (git_init_rc < 0) return rlvr_git_fail(-1, "initialising libgit2", __FILE__, __LINE__);
    return 0;
}

/* ---- export ----------------------------------------------------------------- */

typedef struct {
    git_odb *src, *dst;
    int rc;
} copy_ctx;

static int copy_object(git_odb *src, git_odb *dst, const git_oid *id) {
    if (git_odb_exists(dst, id)) return 0;
    git_odb_object *obj = NULL;
    RLVR_GIT_CHECK(git_odb_read(&obj, src, id));
    git_oid written;
    int rc = git_odb_write(&written, dst, git_odb_object_data(obj), git_odb_object_size(obj), git_odb_object_type(obj));
    git_odb_object_free(obj);
    RLVR_GIT_CHECK(rc);
    return 0;
}

static int copy_entry(const char *root, const git_tree_entry *entry, void *payload) {
    (void)root;
    copy_ctx *c = payload;
    git_object_t type = git_tree_entry_type(entry);
    if (type != GIT_OBJECT_BLOB && type != GIT_OBJECT_TREE) return 0; /* gitlinks point outside */
    c->rc = copy_object(c->src, c->dst, git_tree_entry_id(entry));
    return c->rc < 0 ? -1 : 0;
}

static int commit_tree(git_repository *repo, const git_oid *tree_id, git_oid *commit_id) {
    git_tree *tree = NULL;
    RLVR_GIT_CHECK(git_tree_lookup(&tree, repo, tree_id));
    git_signature *sig = NULL;
    int rc = git_signature_new(&sig, "rlvr", "rlvr@localhost", 0, 0);
    if (rc == 0) rc = git_commit_create(commit_id, repo, "HEAD", sig, sig, NULL, "base\n", tree, 0, NULL);
    git_signature_free(sig);
    git_tree_free(tree);
    RLVR_GIT_CHECK(rc);
    return 0;
}

int rlvr_git_init_commit_all(const char *dir, const char *message, char commit_hex[41]) {
    git_repository *repo = NULL;
    git_index *index = NULL;
    git_signature *sig = NULL;
    git_tree *tree = NULL;
    git_oid tree_id, commit_id;
    RLVR_TRY(rlvr_git_init());
    RLVR_GIT_CHECK(git_repository_init(&repo, dir, 0));
    int rc = git_repository_index(&index, repo);
    if (rc == 0) rc = git_index_add_all(index, NULL, 0, NULL, NULL);
    if (rc == 0) rc = git_index_write(index);
    if (rc == 0) rc = git_index_write_tree(&tree_id, index);
    if (rc == 0) rc = git_tree_lookup(&tree, repo, &tree_id);
    if (rc == 0) rc = git_signature_new(&sig, "rlvr", "rlvr@localhost", 1700000000, 0);
    if (rc == 0) rc = git_commit_create(&commit_id, repo, "HEAD", sig, sig, NULL, message, tree, 0, NULL);
    if (rc == 0) git_oid_tostr(commit_hex, 41, &commit_id);
    int out = rc < 0 ? rlvr_git_fail(rc, "committing the files of a new repository", __FILE__, __LINE__) : 0;
    git_signature_free(sig);
    git_tree_free(tree);
    git_index_free(index);
    git_repository_free(repo);
    if (out < 0) rlvr_error_wrap(out, "repository %s", dir);
    return out;
}

static int export_into(git_repository *src, const char *rev, const char *dest, bool bare, const char *extra_dir,
                       char tree_hex[41]) {
    git_object *obj = NULL;
    git_tree *tree = NULL;
    git_repository *dst = NULL;
    git_odb *sodb = NULL, *dodb = NULL;
    git_index *index = NULL;
    int rc = git_revparse_single(&obj, src, rev);
    if (rc < 0) return rlvr_git_fail(rc, "finding the base commit", __FILE__, __LINE__);
    git_object *peeled = NULL;
    rc = git_object_peel(&peeled, obj, GIT_OBJECT_TREE);
    git_object_free(obj);
    if (rc < 0) return rlvr_git_fail(rc, "reading the base commit's tree", __FILE__, __LINE__);
    tree = (git_tree *)peeled;
    git_oid_tostr(tree_hex, 41, git_tree_id(tree));

    rc = git_repository_init(&dst, dest, bare);
    if (rc < 0) {
        rc = rlvr_git_fail(rc, "creating the exported repository", __FILE__, __LINE__);
        goto done;
    }
    if ((rc = git_repository_odb(&sodb, src)) < 0 || (rc = git_repository_odb(&dodb, dst)) < 0) {
        rc = rlvr_git_fail(rc, "opening object databases", __FILE__, __LINE__);
        goto done;
    }
    copy_ctx c = {sodb, dodb, 0};
    rc = copy_object(sodb, dodb, git_tree_id(tree));
    if (rc == 0) {
        int w = git_tree_walk(tree, GIT_TREEWALK_PRE, copy_entry, &c);
        if (c.rc < 0) rc = c.rc;
        else if (w < 0) rc = rlvr_git_fail(w, "walking the base tree", __FILE__, __LINE__);
    }
    if (rc < 0) goto done;

    git_oid commit_id, final_tree;
    git_oid_cpy(&final_tree, git_tree_id(tree));
    if (!bare) {
        git_tree *dtree = NULL;
        rc = git_tree_lookup(&dtree, dst, git_tree_id(tree));
        if (rc == 0) {
            git_checkout_options co;
            git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
            co.checkout_strategy = GIT_CHECKOUT_FORCE;
            rc = git_checkout_tree(dst, (git_object *)dtree, &co);
            git_tree_free(dtree);
        }
        if (rc < 0) {
            rc = rlvr_git_fail(rc, "checking out the base tree", __FILE__, __LINE__);
            goto done;
        }
        if (extra_dir) {
            rc = rlvr_fs_merge_tree(extra_dir, dest);
            if (rc < 0) goto done;
            if ((rc = git_repository_index(&index, dst)) < 0 ||
                (rc = git_index_add_all(index, NULL, GIT_INDEX_ADD_FORCE, NULL, NULL)) < 0 ||
                (rc = git_index_write(index)) < 0 || (rc = git_index_write_tree(&final_tree, index)) < 0) {
                rc = rlvr_git_fail(rc, "adding the extra files", __FILE__, __LINE__);
                goto done;
            }
        }
    }
    rc = commit_tree(dst, &final_tree, &commit_id);
done:
    git_index_free(index);
    git_odb_free(sodb);
    git_odb_free(dodb);
    git_repository_free(dst);
    git_tree_free(tree);
    return rc;
}

int rlvr_git_export(const char *repo_dir, const char *rev, const char *dest, bool bare, const char *extra_dir,
                    char tree_hex[41]) {
    RLVR_TRY(rlvr_git_init());
    if (bare && extra_dir) return RLVR_FAIL(RLVR_EINVAL, "exporting %s: extra files need a working tree", repo_dir);
    git_repository *src = NULL;
    int rc = git_repository_open_ext(&src, repo_dir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
    if (rc < 0) return rlvr_error_wrap(rlvr_git_fail(rc, "opening the repository", __FILE__, __LINE__), "exporting %s", repo_dir);
    rc = export_into(src, rev, dest, bare, extra_dir, tree_hex);
    git_repository_free(src);
    return rc < 0 ? rlvr_error_wrap(rc, "exporting %s at %s", repo_dir, rev) : 0;
}
