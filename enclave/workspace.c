#include "enclave/workspace.h"

#include "core/error.h"
#include "core/flat.h"
#include "enclave/fsutil.h"
#include "enclave/gitrepo.h"
#include "enclave/reason.h"

#include <git2.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct rlvr_workspace {
    rlvr_sandbox_host *host;
    rlvr_snapshot *snap;   /* the checkout the policy sees */
    char *private_dir;     /* runtime-only: base.git */
    rlvr_sandbox *sb;
    char base_tree[41];
    char **public_tests;   /* owned copy, NULL-terminated */
    size_t max_patch_bytes;
    double extract_wall_s;
};

static char **copy_list(const char *const *list) {
    size_t n = 0;
    for (const char *const *p = list; p && *p; p++) n++;
    char **out = calloc(n + 1, sizeof *out);
    if (!out) return NULL;
    for (size_t i = 0; i < n; i++) {
        out[i] = strdup(list[i]);
        if (!out[i]) {
            for (size_t j = 0; j < i; j++) free(out[j]);
            free(out);
            return NULL;
        }
    }
    return out;
}

static void free_list(char **list) {
    for (char **p = list; p && *p; p++) free(*p);
    free(list);
}

int rlvr_workspace_new(rlvr_workspace **out, rlvr_sandbox_host *host, const rlvr_workspace_spec *spec) {
    *out = NULL;
    if (!spec || spec->version != RLVR_WORKSPACE_SPEC_VERSION || !spec->repo_dir || !spec->base_commit)
        return RLVR_FAIL(RLVR_EINVAL, "workspace spec missing, of another version, or without repo_dir/base_commit");
    rlvr_workspace *ws = calloc(1, sizeof *ws);
    if (!ws) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    ws->host = host;
    ws->max_patch_bytes = spec->max_patch_bytes ? spec->max_patch_bytes : 512 * 1024;
    ws->extract_wall_s = spec->limits.wall_s > 0 ? spec->limits.wall_s : 60;
    ws->public_tests = copy_list(spec->public_tests);
    int rc = ws->public_tests ? 0 : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    char tree2[41];
    if (rc == 0) rc = rlvr_snapshot_new(&ws->snap, host);
    if (rc == 0) rc = rlvr_git_export(spec->repo_dir, spec->base_commit, rlvr_snapshot_path(ws->snap), false, NULL, ws->base_tree);
    if (rc == 0) rc = rlvr_snapshot_seal(ws->snap);
    if (rc == 0) rc = rlvr_fs_mkdtemp(&ws->private_dir, rlvr_sandbox_host_scratch(host), "private-");
    if (rc == 0 && chmod(ws->private_dir, 0755) != 0)
        rc = rlvr_error_errno_at(__FILE__, __LINE__, "chmod %s", ws->private_dir);
    char base_git[PATH_MAX];
    if (rc == 0) {
        snprintf(base_git, sizeof base_git, "%s/base.git", ws->private_dir);
        rc = rlvr_git_export(spec->repo_dir, spec->base_commit, base_git, true, NULL, tree2);
    }
    if (rc == 0 && strcmp(tree2, ws->base_tree) != 0)
        rc = RLVR_FAIL(RLVR_ESTATE, "the two exports of %s disagree on the base tree", spec->repo_dir);
    if (rc == 0) {
        /* public tests first, then the rest of the read-only paths */
        size_t n = 0;
        for (const char *const *p = spec->public_tests; p && *p; p++) n++;
        for (const char *const *p = spec->readonly; p && *p; p++) n++;
        const char **ro = calloc(n + 1, sizeof *ro);
        if (!ro) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        else {
            size_t k = 0;
            for (const char *const *p = spec->public_tests; p && *p; p++) ro[k++] = *p;
            for (const char *const *p = spec->readonly; p && *p; p++) ro[k++] = *p;
            rlvr_sandbox_options opt = {.version = RLVR_SANDBOX_OPTIONS_VERSION, .kind = RLVR_SANDBOX_WORKSPACE,
                                        .tree = ws->snap, .readonly = ro, .private_dir = ws->private_dir,
                                        .limits = spec->limits, .network = spec->network,
                                        .environment = spec->environment, .workdir = spec->workdir,
                                        .env = spec->env};
            rc = rlvr_sandbox_new(&ws->sb, host, &opt);
            free(ro);
        }
    }
    if (rc < 0) {
        rlvr_workspace_free(ws);
        return rlvr_error_wrap(rc, "creating a workspace for %s", spec->repo_dir);
    }
    *out = ws;
    return 0;
}

void rlvr_workspace_free(rlvr_workspace *ws) {
    if (!ws) return;
    rlvr_sandbox_free(ws->sb);
    rlvr_snapshot_free(ws->snap);
    if (ws->private_dir) {
        rlvr_fs_remove_tree(ws->private_dir);
        free(ws->private_dir);
    }
    free_list(ws->public_tests);
    free(ws);
}

rlvr_sandbox *rlvr_workspace_sandbox(rlvr_workspace *ws) { return ws->sb; }
const char *rlvr_workspace_base_tree(const rlvr_workspace *ws) { return ws->base_tree; }

/* ---- extraction inside the sandbox ------------------------------------------------
 * Answer on stdout: "RLVR-EXTRACT <tests_changed> <reason> <len>\n" then the
 * patch, or "RLVR-ERROR <message>\n". */

/* extract_fn's argument: a flat image (core/flat.h) with this at its root */
typedef struct {
    size_t max_patch_bytes;
    char base_tree[41];
    uint64_t public_tests; /* string vector */
} extract_arg;

static int extract_fn(void *p) {
    const extract_arg *a = rlvr_flat_at(p, RLVR_FLAT_FIRST);
    const char **public_tests = rlvr_flat_strv_at(p, a->public_tests);
    /* libgit2 may not be started in the spawner this run was forked from;
     * the runtime's copy is owned by the runtime's uid, not the sandbox's */
    git_libgit2_init();
    git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0);
    rlvr_extract_result r;
    int rc = rlvr_diffgate_extract_dir("/.rlvr/private/base.git", a->base_tree, "/work", public_tests,
                                       a->max_patch_bytes, &r);
    if (rc < 0) {
        printf("RLVR-ERROR %s\n", rlvr_error_last());
        return 2;
    }
    printf("RLVR-EXTRACT %d %d %zu\n", r.public_tests_changed ? 1 : 0, r.reason, r.len);
    fwrite(r.patch, 1, r.len, stdout);
    rlvr_extract_result_free(&r);
    return fflush(stdout) == 0 ? 0 : 3;
}

int rlvr_workspace_extract(rlvr_workspace *ws, rlvr_extract_result *out) {
    memset(out, 0, sizeof *out);
    rlvr_flat f = {0};
    uint64_t root = rlvr_flat_put(&f, NULL, sizeof(extract_arg));
    extract_arg arg = {.max_patch_bytes = ws->max_patch_bytes};
    memcpy(arg.base_tree, ws->base_tree, sizeof arg.base_tree);
    arg.public_tests = rlvr_flat_strv(&f, (const char *const *)ws->public_tests);
    if (!f.failed) memcpy(f.data + root, &arg, sizeof arg);
    rlvr_sandbox_result res;
    int call = f.failed ? RLVR_FAIL(RLVR_ENOMEM, "out of memory")
                        : rlvr_sandbox_call(ws->sb, extract_fn, f.data, f.len, ws->extract_wall_s,
                                            (int64_t)ws->max_patch_bytes + 4096, &res);
    rlvr_flat_free(&f);
    RLVR_TRY(call);
    int rc = 0;
    int changed = 0, reason = 0;
    size_t len = 0;
    int header = 0;
    if (res.out_truncated) {
        out->reason = RLVR_REASON_PATCH_TOO_LARGE;
    } else if (res.exit_code != 0 || res.limit != RLVR_LIMIT_NONE) {
        const char *msg = strncmp(res.out, "RLVR-ERROR ", 11) == 0 ? res.out + 11 : "no answer";
        rc = RLVR_FAIL(RLVR_ESANDBOX, "extraction in the workspace failed (exit %d, limit %s): %s", res.exit_code,
                       rlvr_sandbox_limit_name(res.limit), msg);
    } else if (sscanf(res.out, "RLVR-EXTRACT %d %d %zu\n%n", &changed, &reason, &len, &header) != 3 || header <= 0 ||
               (size_t)header + len != res.out_len) {
        rc = RLVR_FAIL(RLVR_ESANDBOX, "extraction in the workspace gave a malformed answer");
    } else {
        out->public_tests_changed = changed != 0;
        out->reason = reason;
    }
    if (rc == 0) {
        size_t n = out->reason == RLVR_REASON_NONE ? len : 0;
        out->patch = malloc(n + 1);
        if (!out->patch) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        else {
            if (n) memcpy(out->patch, res.out + header, n);
            out->patch[n] = '\0';
            out->len = n;
        }
    }
    rlvr_sandbox_result_free(&res);
    return rc;
}
