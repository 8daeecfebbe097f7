/* envs/history.c — libgit2 pieces of the task sources (envs/history.h). */
#include "envs/history.h"
#include "core/fs.h"

#include "core/error.h"
#include "core/text.h"
#include "enclave/fsutil.h"
#include "enclave/gitrepo.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Turns a libgit2 failure into RLVR_EGIT naming the repository. */
static int git_error_at(int git_rc, const char *what, const char *where) {
    const git_error *e = git_error_last();
    return rlvr_error_set(RLVR_EGIT, "%s (%s): %s (libgit2 %d)", what, where ? where : "repository",
                          e && e->message ? e->message : "failed", git_rc);
}

static const char *repo_name(git_repository *repo) {
    const char *p = git_repository_workdir(repo);
    return p ? p : git_repository_path(repo);
}

bool rlvr_history_is_bundle(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    char head[17] = {0};
    size_t n = fread(head, 1, 16, f);
    fclose(f);
    return n == 16 && (memcmp(head, "# v2 git bundle\n", 16) == 0 || memcmp(head, "# v3 git bundle\n", 16) == 0);
}

/* ---- bundles ---------------------------------------------------------------------- */

/* The bundle's header: "-<oid> ..." prerequisites, "@capability" lines
 * (v3), "<oid> <refname>" refs, then an empty line and the pack. */
typedef struct {
    git_oid *ids;
    char **names;
    size_t n;
    size_t pack_offset;
} bundle_header;

static void bundle_header_free(bundle_header *h) {
    for (size_t i = 0; i < h->n; i++) free(h->names[i]);
    free(h->ids);
    free(h->names);
    memset(h, 0, sizeof *h);
}

static int bundle_parse_header(const char *data, size_t len, const char *path, bundle_header *out) {
    memset(out, 0, sizeof *out);
    size_t pos = 16; /* the signature line, checked by rlvr_history_is_bundle */
    for (;;) {
        const char *nl = memchr(data + pos, '\n', len - pos);
        if (!nl) return rlvr_error_set(RLVR_EFORMAT, "git bundle %s: the header has no end", path);
        size_t line_len = (size_t)(nl - (data + pos));
        const char *line = data + pos;
        pos += line_len + 1;
        if (line_len == 0) break;
        if (line[0] == '@') continue;
        if (line[0] == '-')
            return rlvr_error_set(RLVR_EFORMAT,
                                  "git bundle %s needs prerequisite commits it does not hold (an incremental bundle); "
                                  "make a full one with git bundle create FILE --all",
                                  path);
        if (line_len < GIT_OID_HEXSZ + 2 || line[GIT_OID_HEXSZ] != ' ')
            return rlvr_error_set(RLVR_EFORMAT, "git bundle %s: header line \"%.*s\" is no \"<id> <ref>\"", path,
                                  (int)(line_len > 80 ? 80 : line_len), line);
        git_oid id;
        if (git_oid_fromstrn(&id, line, GIT_OID_HEXSZ) < 0)
            return rlvr_error_set(RLVR_EFORMAT, "git bundle %s: bad object id in the header", path);
        git_oid *ids = realloc(out->ids, (out->n + 1) * sizeof *ids);
        if (ids) out->ids = ids;
        char **names = realloc(out->names, (out->n + 1) * sizeof *names);
        if (names) out->names = names;
        char *name = strndup(line + GIT_OID_HEXSZ + 1, line_len - GIT_OID_HEXSZ - 1);
        if (!ids || !names || !name) {
            free(name);
            return RLVR_FAIL(RLVR_ENOMEM, "out of memory reading git bundle %s", path);
        }
        out->ids[out->n] = id;
        out->names[out->n++] = name;
    }
    out->pack_offset = pos;
    if (out->n == 0) return rlvr_error_set(RLVR_EFORMAT, "git bundle %s names no refs", path);
    return 0;
}

static int bundle_index_pack(git_repository *repo, const char *data, size_t len, const char *path) {
    git_odb *odb = NULL;
    git_odb_writepack *wp = NULL;
    git_indexer_progress stats = {0};
    int rc = git_repository_odb(&odb, repo);
    if (rc == 0) rc = git_odb_write_pack(&wp, odb, NULL, NULL);
    if (rc == 0) rc = wp->append(wp, data, len, &stats);
    if (rc == 0) rc = wp->commit(wp, &stats);
    int out = rc < 0 ? git_error_at(rc, "indexing the pack of the git bundle", path) : 0;
    if (wp) wp->free(wp);
    git_odb_free(odb);
    return out;
}

static int bundle_make_refs(git_repository *repo, const bundle_header *h, const char *path) {
    const git_oid *head = NULL;
    const char *head_ref = NULL;
    for (size_t i = 0; i < h->n; i++) {
        if (strcmp(h->names[i], "HEAD") == 0) {
            head = &h->ids[i];
            continue;
        }
        git_reference *ref = NULL;
        int rc = git_reference_create(&ref, repo, h->names[i], &h->ids[i], 1, NULL);
        git_reference_free(ref);
        if (rc < 0) return git_error_at(rc, "creating a ref of the git bundle", path);
    }
    /* HEAD follows the branch the bundle's HEAD points at, else the first ref */
    for (size_t i = 0; i < h->n && !head_ref; i++)
        if (strcmp(h->names[i], "HEAD") != 0 && (!head || git_oid_equal(head, &h->ids[i]))) head_ref = h->names[i];
    int rc = 0;
    if (head_ref && strncmp(head_ref, "refs/heads/", 11) == 0) rc = git_repository_set_head(repo, head_ref);
    else if (head) rc = git_repository_set_head_detached(repo, head);
    else if (head_ref) {
        git_object *obj = NULL;
        rc = git_revparse_single(&obj, repo, head_ref);
        if (rc == 0) rc = git_repository_set_head_detached(repo, git_object_id(obj));
        git_object_free(obj);
    }
    return rc < 0 ? git_error_at(rc, "setting HEAD from the git bundle", path) : 0;
}

static int unbundle(git_repository **out, const char *path, const char *dest) {
    char *data = NULL;
    size_t len = 0;
    bundle_header h = {0};
    git_repository *repo = NULL;
    int rc = rlvr_fs_read_file(path, &data, &len);
    if (rc == 0) rc = bundle_parse_header(data, len, path, &h);
    if (rc == 0) {
        int g = git_repository_init(&repo, dest, 1);
        if (g < 0) rc = git_error_at(g, "creating a repository to unpack the git bundle into", dest);
    }
    if (rc == 0) rc = bundle_index_pack(repo, data + h.pack_offset, len - h.pack_offset, path);
    if (rc == 0) rc = bundle_make_refs(repo, &h, path);
    bundle_header_free(&h);
    free(data);
    if (rc < 0) {
        git_repository_free(repo);
        return rc;
    }
    *out = repo;
    return 0;
}

int rlvr_history_open(git_repository **out, const char *path, const char *scratch, char **unbundled) {
    *out = NULL;
    if (unbundled) *unbundled = NULL;
    RLVR_TRY(rlvr_git_init());
    struct stat st;
    if (stat(path, &st) != 0) return rlvr_error_set(RLVR_EIO, "repository %s: %s", path, strerror(errno));
    if (S_ISREG(st.st_mode) && rlvr_history_is_bundle(path)) {
        if (!scratch || !unbundled)
            return rlvr_error_set(RLVR_EINVAL, "repository %s is a git bundle; clone it first (git clone %s DIR)", path,
                                  path);
        char *tmp = NULL, dest[4200];
        RLVR_TRY(rlvr_fs_mkdtemp(&tmp, scratch, ".unbundle-"));
        snprintf(dest, sizeof dest, "%s/repo.git", tmp);
        int rc = unbundle(out, path, dest);
        if (rc < 0) {
            rlvr_fs_remove_tree(tmp);
            free(tmp);
            return rc;
        }
        *unbundled = tmp;
        return 0;
    }
    if (!S_ISDIR(st.st_mode))
        return rlvr_error_set(RLVR_EINVAL, "repository %s is neither a git repository directory nor a git bundle",
                              path);
    int g = git_repository_open_ext(out, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
    if (g < 0) return git_error_at(g, "opening the git repository", path);
    return 0;
}

void rlvr_history_path(git_repository *repo, char *out, size_t cap) {
    const char *p = git_repository_is_bare(repo) ? git_repository_path(repo) : git_repository_workdir(repo);
    char *real = realpath(p, NULL);
    snprintf(out, cap, "%s", real ? real : p);
    free(real);
}

/* ---- changes and diffs ---------------------------------------------------------------- */

void rlvr_history_changes_free(rlvr_history_changes *c) {
    for (size_t i = 0; i < c->n; i++) free(c->items[i].path);
    free(c->items);
    memset(c, 0, sizeof *c);
}

static int tree_of(git_tree **out, const git_commit *commit, git_repository *repo) {
    *out = NULL;
    if (!commit) return 0;
    int g = git_commit_tree(out, commit);
    return g < 0 ? git_error_at(g, "reading a commit's tree", repo_name(repo)) : 0;
}

int rlvr_history_changes_of(git_repository *repo, const git_commit *parent, const git_commit *commit,
                            rlvr_history_changes *out) {
    memset(out, 0, sizeof *out);
    git_tree *a = NULL, *b = NULL;
    git_diff *diff = NULL;
    git_diff_options opts;
    git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
    int rc = tree_of(&a, parent, repo);
    if (rc == 0) rc = tree_of(&b, commit, repo);
    if (rc == 0) {
        int g = git_diff_tree_to_tree(&diff, repo, a, b, &opts);
        if (g < 0) rc = git_error_at(g, "diffing a commit", repo_name(repo));
    }
    size_t n = rc == 0 ? git_diff_num_deltas(diff) : 0;
    if (n && !(out->items = calloc(n, sizeof *out->items))) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const git_diff_delta *d = git_diff_get_delta(diff, i);
        const char *path = d->status == GIT_DELTA_DELETED ? d->old_file.path : d->new_file.path;
        rlvr_history_change *c = &out->items[out->n];
        if (!(c->path = strdup(path))) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        c->status = d->status == GIT_DELTA_ADDED      ? 'A'
                    : d->status == GIT_DELTA_DELETED  ? 'D'
                    : d->status == GIT_DELTA_TYPECHANGE ? 'T'
                                                        : 'M';
        c->binary = (d->flags & GIT_DIFF_FLAG_BINARY) != 0;
        if (rc == 0) out->n++;
    }
    git_diff_free(diff);
    git_tree_free(a);
    git_tree_free(b);
    if (rc < 0) rlvr_history_changes_free(out);
    return rc;
}

int rlvr_history_diff(git_repository *repo, const git_tree *from, const git_tree *to, char *const *paths, size_t n,
                      char **out) {
    *out = NULL;
    git_diff_options opts;
    git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
    opts.flags |= GIT_DIFF_DISABLE_PATHSPEC_MATCH | GIT_DIFF_SHOW_BINARY;
    opts.pathspec.strings = (char **)paths;
    opts.pathspec.count = n;
    git_diff *diff = NULL;
    git_buf buf = {0};
    int g = git_diff_tree_to_tree(&diff, repo, (git_tree *)from, (git_tree *)to, &opts);
    if (g == 0) g = git_diff_to_buf(&buf, diff, GIT_DIFF_FORMAT_PATCH);
    int rc = g < 0 ? git_error_at(g, "writing a diff", repo_name(repo)) : 0;
    if (rc == 0 && !(*out = strndup(buf.ptr ? buf.ptr : "", buf.size))) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    git_buf_dispose(&buf);
    git_diff_free(diff);
    return rc;
}

/* ---- files of a tree ----------------------------------------------------------------- */

static int write_blob(git_repository *repo, const git_tree_entry *e, const char *dest) {
    git_blob *blob = NULL;
    int g = git_blob_lookup(&blob, repo, git_tree_entry_id(e));
    if (g < 0) return git_error_at(g, "reading a file", repo_name(repo));
    char dir[4096];
    rlvr_fs_dirname(dir, sizeof dir, dest);
    int rc = rlvr_mkdir_p(dir, 0755);
    if (rc == 0) rc = rlvr_fs_write_file(dest, git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
    if (rc == 0 && git_tree_entry_filemode(e) == GIT_FILEMODE_BLOB_EXECUTABLE && chmod(dest, 0755) != 0)
        rc = rlvr_error_set(RLVR_EIO, "chmod %s: %s", dest, strerror(errno));
    git_blob_free(blob);
    return rc;
}

int rlvr_history_write_files(git_repository *repo, const git_tree *tree, char *const *paths, size_t n,
                             const char *dest_dir) {
    for (size_t i = 0; i < n; i++) {
        git_tree_entry *e = NULL;
        int g = git_tree_entry_bypath(&e, tree, paths[i]);
        if (g == GIT_ENOTFOUND) return rlvr_error_set(RLVR_ENOTFOUND, "%s is not in the tree", paths[i]);
        if (g < 0) return git_error_at(g, "looking a file up", repo_name(repo));
        int rc = 0;
        if (git_tree_entry_type(e) != GIT_OBJECT_BLOB || git_tree_entry_filemode(e) == GIT_FILEMODE_LINK)
            rc = rlvr_error_set(RLVR_EFORMAT, "%s is not a regular file in the tree", paths[i]);
        char dest[4096];
        if (rc == 0 && snprintf(dest, sizeof dest, "%s/%s", dest_dir, paths[i]) >= (int)sizeof dest)
            rc = rlvr_error_set(RLVR_EINVAL, "path %s/%s is too long", dest_dir, paths[i]);
        if (rc == 0) rc = write_blob(repo, e, dest);
        git_tree_entry_free(e);
        RLVR_TRY(rc);
    }
    return 0;
}

typedef struct {
    bool (*match)(const char *, void *);
    void *arg;
    rlvr_str_list *out;
    int rc;
} walk_ctx;

static int walk_entry(const char *root, const git_tree_entry *e, void *payload) {
    walk_ctx *w = payload;
    if (git_tree_entry_type(e) != GIT_OBJECT_BLOB) return 0;
    char path[4096];
    snprintf(path, sizeof path, "%s%s", root, git_tree_entry_name(e));
    if (w->match(path, w->arg) && (w->rc = rlvr_str_list_add_unique(w->out, path)) < 0) return -1;
    return 0;
}

int rlvr_history_tree_paths(git_repository *repo, const git_tree *tree, bool (*match)(const char *path, void *arg),
                            void *arg, rlvr_str_list *out) {
    walk_ctx w = {match, arg, out, 0};
    int g = git_tree_walk(tree, GIT_TREEWALK_PRE, walk_entry, &w);
    if (w.rc < 0) return w.rc;
    return g < 0 ? git_error_at(g, "walking a tree", repo_name(repo)) : 0;
}

int rlvr_history_apply(git_repository *repo, const git_tree *tree, const char *patch, git_tree **out_tree,
                       rlvr_str_list *touched) {
    *out_tree = NULL;
    git_diff *diff = NULL;
    git_index *index = NULL;
    git_oid id;
    int g = git_diff_from_buffer(&diff, patch, strlen(patch));
    if (g < 0) {
        const git_error *e = git_error_last();
        return rlvr_error_set(RLVR_EFORMAT, "not a unified git diff: %s", e && e->message ? e->message : "unreadable");
    }
    g = git_apply_to_tree(&index, repo, (git_tree *)tree, diff, NULL);
    int rc = 0;
    if (g < 0) {
        const git_error *e = git_error_last();
        rc = rlvr_error_set(RLVR_EFORMAT, "does not apply: %s", e && e->message ? e->message : "failed");
    }
    for (size_t i = 0; rc == 0 && touched && i < git_diff_num_deltas(diff); i++) {
        const git_diff_delta *d = git_diff_get_delta(diff, i);
        if (d->status != GIT_DELTA_DELETED) rc = rlvr_str_list_add_unique(touched, d->new_file.path);
    }
    if (rc == 0 && (g = git_index_write_tree_to(&id, index, repo)) < 0)
        rc = git_error_at(g, "writing the patched tree", repo_name(repo));
    if (rc == 0 && (g = git_tree_lookup(out_tree, repo, &id)) < 0)
        rc = git_error_at(g, "reading the patched tree", repo_name(repo));
    git_index_free(index);
    git_diff_free(diff);
    return rc;
}

/* ---- the scrubbed copy ------------------------------------------------------------------ */

int rlvr_history_write_scrubbed(git_repository *repo, const git_oid *base, const char *dest_dir) {
    struct stat st;
    if (lstat(dest_dir, &st) == 0) return rlvr_error_set(RLVR_EIO, "%s exists already; nothing is overwritten", dest_dir);
    git_repository *dst = NULL;
    git_revwalk *walk = NULL;
    git_packbuilder *pb = NULL;
    git_reference *ref = NULL;
    char pack_dir[4096];
    int rc = 0, g = git_repository_init(&dst, dest_dir, 1);
    if (g < 0) return git_error_at(g, "creating the task's repository", dest_dir);
    snprintf(pack_dir, sizeof pack_dir, "%s/objects/pack", git_repository_path(dst));
    /* every object reachable from base, nothing else: one pack written from
     * the source repository straight into the new one */
    if ((g = git_revwalk_new(&walk, repo)) == 0 && (g = git_revwalk_push(walk, base)) == 0 &&
        (g = git_packbuilder_new(&pb, repo)) == 0 && (g = git_packbuilder_insert_walk(pb, walk)) == 0)
        g = git_packbuilder_write(pb, pack_dir, 0, NULL, NULL);
    if (g < 0) rc = git_error_at(g, "packing the history up to the base commit", repo_name(repo));
    if (rc == 0 && (g = git_reference_create(&ref, dst, "refs/heads/main", base, 1, NULL)) < 0)
        rc = git_error_at(g, "creating the branch of", dest_dir);
    if (rc == 0 && (g = git_repository_set_head(dst, "refs/heads/main")) < 0)
        rc = git_error_at(g, "setting HEAD of", dest_dir);
    git_reference_free(ref);
    git_packbuilder_free(pb);
    git_revwalk_free(walk);
    git_repository_free(dst);
    if (rc < 0) rlvr_fs_remove_tree(dest_dir);
    return rc;
}

/* ---- messages ---------------------------------------------------------------------------- */

/* "Token: value" with a token of letters, digits and '-' (git's trailers). */
static bool is_trailer_line(const char *s, size_t n) {
    size_t i = 0;
    while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '-')) i++;
    return i > 0 && i + 1 < n && s[i] == ':' && s[i + 1] == ' ';
}

int rlvr_history_message(const git_commit *commit, char **out) {
    *out = NULL;
    const char *msg = git_commit_message(commit);
    char *text = strdup(msg ? msg : "");
    if (!text) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    size_t len = strlen(text);
    while (len && isspace((unsigned char)text[len - 1])) text[--len] = '\0';
    /* drop the last paragraph when every line of it is a trailer */
    char *para = NULL;
    for (char *p = text; (p = strstr(p, "\n\n")); p += 2) para = p + 2;
    if (para) {
        bool all = true;
        for (char *line = para; all && *line;) {
            char *nl = strchr(line, '\n');
            size_t n = nl ? (size_t)(nl - line) : strlen(line);
            all = is_trailer_line(line, n);
            line = nl ? nl + 1 : line + n;
        }
        if (all) {
            *para = '\0';
            len = strlen(text);
            while (len && isspace((unsigned char)text[len - 1])) text[--len] = '\0';
        }
    }
    size_t lead = 0;
    while (isspace((unsigned char)text[lead])) lead++;
    memmove(text, text + lead, strlen(text + lead) + 1);
    *out = text;
    return 0;
}
