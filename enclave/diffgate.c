#include "enclave/diffgate.h"

#include "core/error.h"
#include "enclave/gitrepo.h"
#include "enclave/reason.h"

#include <ctype.h>
#include <fnmatch.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Files that configure a shell, a tool or a process's environment. */
const char *const rlvr_diffgate_env_files[] = {
    ".env", ".env.*", "*.env", ".envrc", ".profile", ".bashrc", ".bash_profile", ".bash_login", ".bash_logout",
    ".zshrc", ".zshenv", ".zprofile", ".npmrc", ".yarnrc", ".pypirc", ".netrc", ".pip", "pip.conf", ".curlrc",
    ".wgetrc", ".inputrc", "ld.so.preload", NULL,
};

/* Files a test runner, interpreter, compiler driver or debugger loads on its
 * own: they can change what a test run reports without changing the code. */
const char *const rlvr_diffgate_hook_files[] = {
    "conftest.py", "sitecustomize.py", "usercustomize.py", "*.pth", "pytest.ini", ".pytest.ini", "tox.ini",
    "noxfile.py", ".coveragerc", "CTestTestfile.cmake", "CTestCustom.cmake", ".gdbinit", ".lldbinit",
    "*.so", "*.so.*", "*.dylib", "*.dll", NULL,
};

/* ---- globs ------------------------------------------------------------------- */

bool rlvr_diffgate_glob_match(const char *glob, const char *path) {
    bool anchored = glob[0] == '/';
    while (glob[0] == '/') glob++;
    char g[1024];
    size_t gl = strlen(glob);
    if (gl == 0 || gl >= sizeof g) return false;
    memcpy(g, glob, gl + 1);
    while (gl > 0 && g[gl - 1] == '/') g[--gl] = '\0';
    if (gl == 0) return false;
    if (!anchored && !strchr(g, '/')) {
        /* any one component */
        const char *c = path;
        char comp[1024];
        while (*c) {
            const char *e = strchr(c, '/');
            size_t n = e ? (size_t)(e - c) : strlen(c);
            if (n < sizeof comp) {
                memcpy(comp, c, n);
                comp[n] = '\0';
                if (fnmatch(g, comp, 0) == 0) return true;
            }
            if (!e) break;
            c = e + 1;
        }
        return false;
    }
    /* anchored: the path or one of its leading directories */
    char prefix[4096];
    size_t pl = strlen(path);
    if (pl >= sizeof prefix) return false;
    memcpy(prefix, path, pl + 1);
    for (;;) {
        if (fnmatch(g, prefix, FNM_PATHNAME) == 0) return true;
        char *slash = strrchr(prefix, '/');
        if (!slash) return false;
        *slash = '\0';
    }
}

bool rlvr_diffgate_editable_match(const char *glob, const char *path) {
    size_t gl = strlen(glob);
    if (gl == 0 || gl >= 1024) return false;
    if (!strchr(glob, '/')) {
        const char *name = strrchr(path, '/');
        return fnmatch(glob, name ? name + 1 : path, 0) == 0;
    }
    while (glob[0] == '/') glob++, gl--;
    if (gl == 0) return false;
    if (glob[gl - 1] == '/') {
        /* a directory: everything beneath it */
        char dir[1024];
        memcpy(dir, glob, gl - 1);
        dir[gl - 1] = '\0';
        char prefix[4096];
        size_t pl = strlen(path);
        if (pl >= sizeof prefix) return false;
        memcpy(prefix, path, pl + 1);
        for (char *slash = strrchr(prefix, '/'); slash; slash = strrchr(prefix, '/')) {
            *slash = '\0';
            if (fnmatch(dir, prefix, FNM_PATHNAME) == 0) return true;
        }
        return false;
    }
    return fnmatch(glob, path, FNM_PATHNAME) == 0;
}

bool rlvr_diffgate_path_editable(const char *path, const char *const *editable_globs) {
    if (!editable_globs) return true;
    for (const char *const *g = editable_globs; *g; g++)
        if (rlvr_diffgate_editable_match(*g, path)) return true;
    return false;
}

static bool any_match(const char *const *globs, const char *path) {
    for (const char *const *g = globs; g && *g; g++)
        if (rlvr_diffgate_glob_match(*g, path)) return true;
    return false;
}

int rlvr_diffgate_check_path(const char *path, const char *const *protected_globs) {
    if (!path || !path[0] || path[0] == '/' || strlen(path) >= 4096) return RLVR_REASON_PATH_OUTSIDE;
    for (const unsigned char *s = (const unsigned char *)path; *s; s++)
        if (*s < 0x20 || *s == 0x7f || *s == '\\') return RLVR_REASON_PATH_OUTSIDE;
    const char *c = path;
    for (;;) {
        const char *e = strchr(c, '/');
        size_t n = e ? (size_t)(e - c) : strlen(c);
        if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.')) return RLVR_REASON_PATH_OUTSIDE;
        /* .git, .gitignore, .gitattributes, .gitmodules, .github, ... in any
         * letter case (case-insensitive file systems exist) */
        if (n >= 4 && strncasecmp(c, ".git", 4) == 0) return RLVR_REASON_GIT_PATH;
        if (!e) break;
        c = e + 1;
    }
    if (any_match(rlvr_diffgate_env_files, path)) return RLVR_REASON_ENV_FILE;
    if (any_match(rlvr_diffgate_hook_files, path)) return RLVR_REASON_HOOK_FILE;
    if (any_match(protected_globs, path)) return RLVR_REASON_PROTECTED_PATH;
    return RLVR_REASON_NONE;
}

/* Whether the allow-list names `path` itself: an entry without wildcards
 * equal to it (with or without the leading '/'). */
static bool named_exactly(const char *path, const char *const *editable_globs) {
    for (const char *const *g = editable_globs; g && *g; g++) {
        const char *e = (*g)[0] == '/' ? *g + 1 : *g;
        if (!strpbrk(e, "*?[\\") && strcmp(e, path) == 0) return true;
    }
    return false;
}

int rlvr_diffgate_path_verdict(const char *path, const char *const *protected_globs,
                               const char *const *editable_globs) {
    int r = rlvr_diffgate_check_path(path, protected_globs);
    /* a hook file the task's author admitted by its exact name is theirs:
     * `rlvr tasks check` then shows whether the task's runner honours it
     * (its python lookup probes), and refuses the task when it does. A
     * glob never admits one. */
    if (r == RLVR_REASON_HOOK_FILE && named_exactly(path, editable_globs) && !any_match(protected_globs, path))
        r = RLVR_REASON_NONE;
    if (r == RLVR_REASON_NONE && !rlvr_diffgate_path_editable(path, editable_globs)) r = RLVR_REASON_NOT_EDITABLE;
    return r;
}

/* ---- validation ----------------------------------------------------------------- */

static bool line_starts(const char *text, size_t len, const char *prefix) {
    size_t pl = strlen(prefix);
    const char *p = text, *end = text + len;
    while (p < end) {
        if ((size_t)(end - p) >= pl && memcmp(p, prefix, pl) == 0) return true;
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) break;
        p = nl + 1;
    }
    return false;
}

/* Header lines naming a path that starts at the file system's root:
 * libgit2 would quietly strip the slash, the gate refuses instead. */
static bool raw_absolute_path(const char *text, size_t len) {
    static const char *const heads[] = {"diff --git ", "--- ", "+++ ", "rename from ", "rename to ", "copy from ",
                                        "copy to "};
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        for (size_t h = 0; h < sizeof heads / sizeof *heads; h++) {
            size_t hl = strlen(heads[h]);
            if ((size_t)(le - p) < hl || memcmp(p, heads[h], hl) != 0) continue;
            for (const char *t = p + hl; t < le;) {
                while (t < le && *t == ' ') t++;
                const char *te = t;
                while (te < le && *te != ' ') te++;
                size_t tl = (size_t)(te - t);
                bool devnull = tl == 9 && memcmp(t, "/dev/null", 9) == 0;
                if (tl > 0 && !devnull && (t[0] == '/' || (tl > 2 && (t[0] == 'a' || t[0] == 'b') && t[1] == '/' && t[2] == '/')))
                    return true;
                t = te;
            }
        }
        p = nl ? nl + 1 : end;
    }
    return false;
}

/* 0: the patch states no mode (a plain "--- a/x +++ b/x" change): unchanged */
static int check_mode(uint16_t mode) {
    if (mode == 0) return RLVR_REASON_NONE;
    if (mode == GIT_FILEMODE_LINK) return RLVR_REASON_SYMLINK;
    if (mode == GIT_FILEMODE_COMMIT) return RLVR_REASON_SUBMODULE;
    if (mode != GIT_FILEMODE_BLOB && mode != GIT_FILEMODE_BLOB_EXECUTABLE) return RLVR_REASON_MODE_CHANGE;
    return RLVR_REASON_NONE;
}

static int check_delta(const git_diff_delta *d, const rlvr_diffgate_rules *rules, const char **bad_path) {
    bool has_old = d->status != GIT_DELTA_ADDED, has_new = d->status != GIT_DELTA_DELETED;
    switch (d->status) {
    case GIT_DELTA_ADDED:
    case GIT_DELTA_DELETED:
    case GIT_DELTA_MODIFIED:
    case GIT_DELTA_RENAMED:
    case GIT_DELTA_COPIED:
        break;
    case GIT_DELTA_TYPECHANGE:
        *bad_path = d->new_file.path;
        return (d->old_file.mode == GIT_FILEMODE_COMMIT || d->new_file.mode == GIT_FILEMODE_COMMIT)
                   ? RLVR_REASON_SUBMODULE
                   : RLVR_REASON_SYMLINK;
    default:
        *bad_path = d->new_file.path ? d->new_file.path : d->old_file.path;
        return RLVR_REASON_PATCH_PARSE;
    }
    const char *paths[2] = {has_old ? d->old_file.path : NULL, has_new ? d->new_file.path : NULL};
    for (int i = 0; i < 2; i++) {
        if (!paths[i] && ((i == 0 && has_old) || (i == 1 && has_new))) return RLVR_REASON_PATH_OUTSIDE;
        if (!paths[i]) continue;
        int r = rlvr_diffgate_path_verdict(paths[i], rules->protected_globs, rules->editable_globs);
        if (r != RLVR_REASON_NONE) {
            *bad_path = paths[i];
            return r;
        }
    }
    *bad_path = has_new ? d->new_file.path : d->old_file.path;
    if (has_old) {
        int r = check_mode(d->old_file.mode);
        if (r != RLVR_REASON_NONE) return r;
    }
    if (has_new) {
        int r = check_mode(d->new_file.mode);
        if (r != RLVR_REASON_NONE) return r;
    }
    if (has_old && has_new && d->old_file.mode && d->new_file.mode && d->old_file.mode != d->new_file.mode)
        return RLVR_REASON_MODE_CHANGE;
    if (d->flags & GIT_DIFF_FLAG_BINARY) return RLVR_REASON_BINARY;
    return RLVR_REASON_NONE;
}

typedef struct {
    int binary;
} binary_probe;

static int on_binary(const git_diff_delta *d, const git_diff_binary *b, void *payload) {
    (void)d;
    (void)b;
    ((binary_probe *)payload)->binary = 1;
    return 0;
}

int rlvr_diffgate_validate(const char *patch, size_t len, const rlvr_diffgate_rules *rules, rlvr_diffgate_report *out) {
    memset(out, 0, sizeof *out);
    rlvr_diffgate_rules defaults = RLVR_DIFFGATE_RULES_INIT;
    if (!rules) rules = &defaults;
    if (rules->version != RLVR_DIFFGATE_RULES_VERSION)
        return RLVR_FAIL(RLVR_EINVAL, "rlvr_diffgate_rules version %u (this build knows %u)", rules->version,
                         RLVR_DIFFGATE_RULES_VERSION);
    RLVR_TRY(rlvr_git_init());
    if (len > rules->max_bytes) {
        out->reason = RLVR_REASON_PATCH_TOO_LARGE;
        return 0;
    }
    if (len == 0) return 0; /* nothing to apply: the tests decide */
    if (memchr(patch, '\0', len)) {
        out->reason = RLVR_REASON_BINARY;
        return 0;
    }
    /* libgit2 may not report a "Binary files differ" stanza as a delta flag
     * when the literal data is missing; the text says it plainly */
    if (line_starts(patch, len, "GIT binary patch") || line_starts(patch, len, "Binary files ")) {
        out->reason = RLVR_REASON_BINARY;
        return 0;
    }
    if (raw_absolute_path(patch, len)) {
        out->reason = RLVR_REASON_PATH_OUTSIDE;
        return 0;
    }
    git_diff *diff = NULL;
    if (git_diff_from_buffer(&diff, patch, len) < 0) {
        out->reason = RLVR_REASON_PATCH_PARSE;
        snprintf(out->path, sizeof out->path, "%s", git_error_last() ? git_error_last()->message : "");
        return 0;
    }
    size_t n = git_diff_num_deltas(diff);
    out->files = (int)n;
    if (n == 0 && len > 0) {
        /* text that is not empty but holds no file change is not a git patch */
        bool only_space = true;
        for (size_t i = 0; i < len && only_space; i++) only_space = isspace((unsigned char)patch[i]);
        if (!only_space) out->reason = RLVR_REASON_PATCH_PARSE;
    }
    if (out->reason == RLVR_REASON_NONE && (int)n > rules->max_files) out->reason = RLVR_REASON_TOO_MANY_FILES;
    for (size_t i = 0; i < n && out->reason == RLVR_REASON_NONE; i++) {
        const git_diff_delta *d = git_diff_get_delta(diff, i);
        const char *bad = NULL;
        out->reason = check_delta(d, rules, &bad);
        if (out->reason != RLVR_REASON_NONE) snprintf(out->path, sizeof out->path, "%s", bad ? bad : "");
    }
    if (out->reason == RLVR_REASON_NONE) {
        binary_probe bp = {0};
        if (git_diff_foreach(diff, NULL, on_binary, NULL, NULL, &bp) < 0) out->reason = RLVR_REASON_PATCH_PARSE;
        else if (bp.binary) out->reason = RLVR_REASON_BINARY;
    }
    git_diff_free(diff);
    return 0;
}

/* ---- extraction ------------------------------------------------------------------- */

void rlvr_extract_result_free(rlvr_extract_result *r) {
    if (!r) return;
    free(r->patch);
    memset(r, 0, sizeof *r);
}

static int public_tests_changed(git_repository *repo, git_tree *tree, const char *const *public_tests, bool *changed) {
    *changed = false;
    size_t n = 0;
    for (const char *const *p = public_tests; p && *p; p++) n++;
    if (n == 0) return 0;
    git_diff_options o;
    git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
    o.flags = GIT_DIFF_INCLUDE_UNTRACKED | GIT_DIFF_RECURSE_UNTRACKED_DIRS | GIT_DIFF_INCLUDE_IGNORED |
              GIT_DIFF_RECURSE_IGNORED_DIRS | GIT_DIFF_INCLUDE_TYPECHANGE;
    o.pathspec.strings = (char **)public_tests;
    o.pathspec.count = n;
    git_diff *diff = NULL;
    RLVR_GIT_CHECK(git_diff_tree_to_workdir(&diff, repo, tree, &o));
    *changed = git_diff_num_deltas(diff) > 0;
    git_diff_free(diff);
    return 0;
}

int rlvr_diffgate_extract_dir(const char *repo_dir, const char *base_tree, const char *workdir,
                              const char *const *public_tests, size_t max_bytes, rlvr_extract_result *out) {
    memset(out, 0, sizeof *out);
    RLVR_TRY(rlvr_git_init());
    git_repository *repo = NULL;
    git_tree *tree = NULL;
    git_diff *diff = NULL;
    git_buf buf = GIT_BUF_INIT;
    git_oid id;
    int rc = git_repository_open_bare(&repo, repo_dir);
    if (rc < 0) {
        rc = rlvr_git_fail(rc, "opening the runtime's copy of the repository", __FILE__, __LINE__);
        goto done;
    }
    if ((rc = git_repository_set_workdir(repo, workdir, 0)) < 0 || (rc = git_oid_fromstr(&id, base_tree)) < 0 ||
        (rc = git_tree_lookup(&tree, repo, &id)) < 0) {
        rc = rlvr_git_fail(rc, "finding the base tree", __FILE__, __LINE__);
        goto done;
    }
    rc = public_tests_changed(repo, tree, public_tests, &out->public_tests_changed);
    if (rc < 0) goto done;
    git_diff_options o;
    git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
    o.flags = GIT_DIFF_INCLUDE_UNTRACKED | GIT_DIFF_RECURSE_UNTRACKED_DIRS | GIT_DIFF_SHOW_UNTRACKED_CONTENT |
              GIT_DIFF_INCLUDE_TYPECHANGE | GIT_DIFF_SHOW_BINARY;
    o.max_size = (git_off_t)max_bytes;
    if ((rc = git_diff_tree_to_workdir(&diff, repo, tree, &o)) < 0 || (rc = git_diff_to_buf(&buf, diff, GIT_DIFF_FORMAT_PATCH)) < 0) {
        rc = rlvr_git_fail(rc, "diffing the workspace", __FILE__, __LINE__);
        goto done;
    }
    if (buf.size > max_bytes) {
        out->reason = RLVR_REASON_PATCH_TOO_LARGE;
        out->patch = calloc(1, 1);
    } else {
        out->patch = malloc(buf.size + 1);
        if (out->patch) {
            memcpy(out->patch, buf.ptr ? buf.ptr : "", buf.size);
            out->patch[buf.size] = '\0';
            out->len = buf.size;
        }
    }
    if (!out->patch) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
done:
    git_buf_dispose(&buf);
    git_diff_free(diff);
    git_tree_free(tree);
    git_repository_free(repo);
    if (rc < 0) {
        rlvr_extract_result_free(out);
        return rlvr_error_wrap(rc, "extracting the patch from %s", workdir);
    }
    return 0;
}
