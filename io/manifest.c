/* io/manifest.c — the run manifest (schema: docs/FORMATS.md, "Run manifest"). */
#include "io/manifest.h"
#include "core/buildinfo.h"
#include "core/error.h"
#include "io/h5util.h"

#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Build-time fallbacks, set by io/CMakeLists.txt when the build is configured. */
#ifndef RLVR_BUILD_SOURCE_DIR
#define RLVR_BUILD_SOURCE_DIR "."
#endif
#ifndef RLVR_BUILD_GIT_COMMIT
#define RLVR_BUILD_GIT_COMMIT "unknown"
#endif
#ifndef RLVR_BUILD_GIT_DIRTY
#define RLVR_BUILD_GIT_DIRTY (-1)
#endif
#ifndef RLVR_BUILD_VERSION
#define RLVR_BUILD_VERSION "unknown"
#endif
#ifndef RLVR_BUILD_FLAGS
#define RLVR_BUILD_FLAGS "unknown"
#endif

extern char **environ;

struct rlvr_manifest {
    char *run_name, *config_text, *task_pool_hash;
    uint64_t config_hash, seed;
    int world_size, trainer_ranks, verifier_ranks, rollout_ranks;
    char **hosts;
    int n_hosts;
    char **slurm; /* "NAME=value" */
    int n_slurm;
    char hostname[256];
    char started_utc[32], finished_utc[32], status[32];
    int64_t final_step, final_policy_version;
    char git_commit[48], git_branch[256], git_source[16], git_error[512], source_dir[4096];
    int git_dirty;          /* 1, 0, or -1 unknown */
    int64_t git_untracked;  /* -1 unknown */
    char hdf5_version[32], mpi_version[256], libgit2_version[32], openblas_version[256], compiler[128];
    char cpu_model[256];
};

/* ---- libgit2 ------------------------------------------------------------------ */

static int git_fail_at(const char *file, int line, const char *what) {
    const git_error *e = git_error_last();
    return rlvr_error_set_at(RLVR_EGIT, file, line, "%s: %s", what, e && e->message ? e->message : "libgit2 error");
}

/* A libgit2 call returning < 0 on failure: RLVR_EGIT with its message. */
#define RLVR_GIT_GOTO(expr, rc, label, what)                                   \
    do {                                                                       \
        if ((expr) < 0) {                                                      \
            (rc) = git_fail_at(__FILE__, __LINE__, (what));                    \
            goto label;                                                        \
        }                                                                      \
    } while (0)

/* Commit of HEAD, branch, and whether tracked files differ from it. */
static int git_state(rlvr_manifest *m, const char *dir) {
    int rc = 0;
    git_repository *repo = NULL;
    git_reference *head = NULL;
    git_status_list *status = NULL;
    git_oid oid;
    RLVR_GIT_GOTO(git_repository_open_ext(&repo, dir, 0, NULL), rc, done, "opening the source repository");
    RLVR_GIT_GOTO(git_reference_name_to_id(&oid, repo, "HEAD"), rc, done, "resolving HEAD");
    git_oid_tostr(m->git_commit, sizeof m->git_commit, &oid);
    if (git_repository_head(&head, repo) == 0)
        snprintf(m->git_branch, sizeof m->git_branch, "%s",
                 git_repository_head_detached(repo) == 1 ? "HEAD" : git_reference_shorthand(head));
    git_status_options opts;
    RLVR_GIT_GOTO(git_status_options_init(&opts, GIT_STATUS_OPTIONS_VERSION), rc, done, "status options");
    opts.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
    opts.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS |
                 GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
    RLVR_GIT_GOTO(git_status_list_new(&status, repo, &opts), rc, done, "reading the work tree status");
    int dirty = 0;
    int64_t untracked = 0;
    size_t n = git_status_list_entrycount(status);
    for (size_t i = 0; i < n; i++) {
        unsigned s = git_status_byindex(status, i)->status;
        if (s & GIT_STATUS_WT_NEW) untracked++;
        if (s & (GIT_STATUS_INDEX_NEW | GIT_STATUS_INDEX_MODIFIED | GIT_STATUS_INDEX_DELETED |
                 GIT_STATUS_INDEX_RENAMED | GIT_STATUS_INDEX_TYPECHANGE | GIT_STATUS_WT_MODIFIED |
                 GIT_STATUS_WT_DELETED | GIT_STATUS_WT_TYPECHANGE | GIT_STATUS_WT_RENAMED))
            dirty = 1;
    }
    m->git_dirty = dirty;
    m->git_untracked = untracked;
    snprintf(m->git_source, sizeof m->git_source, "libgit2");
done:
    git_status_list_free(status);
    git_reference_free(head);
    git_repository_free(repo);
    return rc;
}

static void collect_git(rlvr_manifest *m) {
    snprintf(m->git_source, sizeof m->git_source, "build");
    snprintf(m->git_commit, sizeof m->git_commit, "%s", RLVR_BUILD_GIT_COMMIT);
    m->git_dirty = RLVR_BUILD_GIT_DIRTY;
    m->git_untracked = -1;
    if (git_libgit2_init() < 0) {
        snprintf(m->git_error, sizeof m->git_error, "libgit2 did not initialise");
        return;
    }
    if (git_state(m, m->source_dir) < 0) {
        /* keep the build-time values; say why */
        snprintf(m->git_error, sizeof m->git_error, "%s", rlvr_error_last());
        snprintf(m->git_source, sizeof m->git_source, "build");
        snprintf(m->git_commit, sizeof m->git_commit, "%s", RLVR_BUILD_GIT_COMMIT);
        m->git_dirty = RLVR_BUILD_GIT_DIRTY;
        m->git_untracked = -1;
        rlvr_error_clear();
    }
    git_libgit2_shutdown();
}

/* ---- environment and versions --------------------------------------------- */

/* The CPU's "model name" from /proc/cpuinfo ("unknown" where there is none,
 * e.g. most non-x86 kernels): OpenBLAS picks its kernels for the CPU it runs
 * on, so bit-identity holds between runs on the same model. */
static void collect_cpu_model(rlvr_manifest *m) {
    snprintf(m->cpu_model, sizeof m->cpu_model, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0) continue;
        const char *colon = strchr(line, ':');
        if (!colon) continue;
        const char *v = colon + 1 + strspn(colon + 1, " \t");
        snprintf(m->cpu_model, sizeof m->cpu_model, "%.*s", (int)strcspn(v, "\n"), v);
        break;
    }
    fclose(f);
}

/* The library versions and the compiler as `rlvr --version` shows them
 * (core/buildinfo.h). */
static void collect_versions(rlvr_manifest *m) {
    collect_cpu_model(m);
    rlvr_buildinfo b;
    rlvr_buildinfo_get(&b);
    snprintf(m->hdf5_version, sizeof m->hdf5_version, "%s", b.hdf5);
    snprintf(m->mpi_version, sizeof m->mpi_version, "%s", b.mpi);
    snprintf(m->openblas_version, sizeof m->openblas_version, "%s", b.blas);
    snprintf(m->compiler, sizeof m->compiler, "%s", b.compiler);
    snprintf(m->libgit2_version, sizeof m->libgit2_version, "%s", b.libgit2);
}

static int collect_slurm(rlvr_manifest *m) {
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "SLURM_", 6) != 0 || !strchr(*e, '=')) continue;
        char **grown = realloc(m->slurm, (size_t)(m->n_slurm + 1) * sizeof *grown);
        if (!grown) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        m->slurm = grown;
        if (!(m->slurm[m->n_slurm] = strdup(*e))) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        m->n_slurm++;
    }
    return 0;
}

static char *dup_or_empty(const char *s) { return strdup(s ? s : ""); }

int rlvr_manifest_new(rlvr_manifest **out, const rlvr_manifest_options *opt) {
    *out = NULL;
    if (!opt || opt->version != RLVR_MANIFEST_OPTIONS_VERSION)
        return RLVR_FAIL(RLVR_EINVAL, "rlvr_manifest_options: version %d, expected %d (use _INIT)",
                         opt ? opt->version : -1, RLVR_MANIFEST_OPTIONS_VERSION);
    if (opt->n_hosts < 0 || (opt->n_hosts > 0 && !opt->hosts))
        return RLVR_FAIL(RLVR_EINVAL, "rlvr_manifest_options: %d hosts without a list", opt->n_hosts);
    rlvr_h5_init();
    rlvr_manifest *m = calloc(1, sizeof *m);
    if (!m) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    m->run_name = dup_or_empty(opt->run_name);
    m->config_text = dup_or_empty(opt->config_text);
    m->task_pool_hash = dup_or_empty(opt->task_pool_hash);
    m->hosts = calloc((size_t)(opt->n_hosts > 0 ? opt->n_hosts : 1), sizeof *m->hosts);
    int rc = 0;
    if (!m->run_name || !m->config_text || !m->task_pool_hash || !m->hosts) {
        rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        goto fail;
    }
    for (int i = 0; i < opt->n_hosts; i++) {
        if (!(m->hosts[i] = dup_or_empty(opt->hosts[i]))) {
            rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
            goto fail;
        }
        m->n_hosts = i + 1;
    }
    m->config_hash = opt->config_hash;
    m->seed = opt->seed;
    m->world_size = opt->world_size;
    m->trainer_ranks = opt->trainer_ranks;
    m->verifier_ranks = opt->verifier_ranks;
    m->rollout_ranks = opt->rollout_ranks;
    if (gethostname(m->hostname, sizeof m->hostname - 1) != 0) snprintf(m->hostname, sizeof m->hostname, "unknown");
    rlvr_utc_now(m->started_utc, sizeof m->started_utc);
    snprintf(m->status, sizeof m->status, "running");
    m->final_step = m->final_policy_version = -1;
    snprintf(m->source_dir, sizeof m->source_dir, "%s", opt->source_dir ? opt->source_dir : RLVR_BUILD_SOURCE_DIR);
    if ((rc = collect_slurm(m)) < 0) goto fail;
    collect_versions(m);
    collect_git(m);
    *out = m;
    return 0;
fail:
    rlvr_manifest_free(m);
    return rc;
}

void rlvr_manifest_free(rlvr_manifest *m) {
    if (!m) return;
    for (int i = 0; i < m->n_hosts; i++) free(m->hosts[i]);
    for (int i = 0; i < m->n_slurm; i++) free(m->slurm[i]);
    free(m->hosts);
    free(m->slurm);
    free(m->run_name);
    free(m->config_text);
    free(m->task_pool_hash);
    free(m);
}

int rlvr_manifest_finish(rlvr_manifest *m, const char *status, int64_t final_step, int64_t final_policy_version) {
    if (!status || !status[0] || strlen(status) >= sizeof m->status)
        return RLVR_FAIL(RLVR_EINVAL, "manifest status must be a short word such as \"finished\"");
    snprintf(m->status, sizeof m->status, "%s", status);
    rlvr_utc_now(m->finished_utc, sizeof m->finished_utc);
    m->final_step = final_step;
    m->final_policy_version = final_policy_version;
    return 0;
}

const char *rlvr_manifest_git_commit(const rlvr_manifest *m) { return m->git_commit; }
bool rlvr_manifest_git_dirty(const rlvr_manifest *m) { return m->git_dirty == 1; }
const char *rlvr_manifest_git_source(const rlvr_manifest *m) { return m->git_source; }

/* ---- writing ---------------------------------------------------------------- */

static int write_hosts(hid_t file, char *const *hosts, int n) {
    size_t width = 1;
    for (int i = 0; i < n; i++)
        if (strlen(hosts[i]) + 1 > width) width = strlen(hosts[i]) + 1;
    hid_t type = rlvr_h5_string_type(width, false);
    RLVR_H5_CHECK(type, "string type for /hosts");
    char *buf = calloc((size_t)(n > 0 ? n : 1), width);
    int rc = 0;
    hid_t dset = H5I_INVALID_HID;
    if (!buf) {
        rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++) memcpy(buf + (size_t)i * width, hosts[i], strlen(hosts[i]));
    hsize_t dims[1] = {(hsize_t)n};
    if ((rc = rlvr_h5_dataset_create(&dset, file, "hosts", type, 1, dims, NULL, NULL, 4)) < 0) goto done;
    if (n > 0) RLVR_H5_GOTO(H5Dwrite(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf), rc, done, "writing /hosts");
done:
    rlvr_h5_close(&dset);
    rlvr_h5_close(&type);
    free(buf);
    return rc;
}

static int write_slurm(hid_t file, char *const *vars, int n) {
    hid_t g = H5Gcreate2(file, "slurm", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    RLVR_H5_CHECK(g, "creating group /slurm");
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        char name[256];
        const char *eq = strchr(vars[i], '=');
        size_t len = (size_t)(eq - vars[i]) < sizeof name - 1 ? (size_t)(eq - vars[i]) : sizeof name - 1;
        memcpy(name, vars[i], len);
        name[len] = '\0';
        rc = rlvr_h5_attr_put_str(g, name, eq + 1);
    }
    rlvr_h5_close(&g);
    return rc;
}

static int write_contents(hid_t f, const rlvr_manifest *m) {
    RLVR_TRY(rlvr_h5_write_format(f, RLVR_FORMAT_MANIFEST, RLVR_MANIFEST_FORMAT_VERSION));
    RLVR_TRY(rlvr_h5_attr_put_str(f, "run_name", m->run_name));
    RLVR_TRY(rlvr_h5_attr_put_str(f, "status", m->status));
    RLVR_TRY(rlvr_h5_attr_put_str(f, "started_utc", m->started_utc));
    RLVR_TRY(rlvr_h5_attr_put_str(f, "finished_utc", m->finished_utc));
    RLVR_TRY(rlvr_h5_attr_put_i64(f, "final_step", m->final_step));
    RLVR_TRY(rlvr_h5_attr_put_i64(f, "final_policy_version", m->final_policy_version));
    RLVR_TRY(rlvr_h5_attr_put_str(f, "rlvr_version", RLVR_BUILD_VERSION));
    RLVR_TRY(rlvr_h5_attr_put_str(f, "git_commit", m->git_commit));
    RLVR_TRY(rlvr_h5_attr_put_i64(f, "git_dirty", m->git_dirty));
    RLVR_TRY(rlvr_h5_attr_put_i64(f, "git_untracked", m->git_untracked));
    RLVR_TRY(rlvr_h5_attr_put_str(f, "git_branch", m->git_branch));
    RLVR_TRY(rlvr_h5_attr_put_str(f, "git_source", m->git_source));
    RLVR_TRY(rlvr_h5_attr_put_str(f, "git_error", m->git_error));
    RLVR_TRY(rlvr_h5_attr_put_str(f, "source_dir", m->source_dir));
    RLVR_TRY(rlvr_h5_attr_put_u64(f, "config_hash", m->config_hash));
    RLVR_TRY(rlvr_h5_attr_put_u64(f, "seed", m->seed));
    RLVR_TRY(rlvr_h5_attr_put_i64(f, "world_size", m->world_size));
    RLVR_TRY(rlvr_h5_attr_put_i64(f, "trainer_ranks", m->trainer_ranks));
    RLVR_TRY(rlvr_h5_attr_put_i64(f, "verifier_ranks", m->verifier_ranks));
    RLVR_TRY(rlvr_h5_attr_put_i64(f, "rollout_ranks", m->rollout_ranks));
    RLVR_TRY(rlvr_h5_attr_put_str(f, "hostname", m->hostname));
    RLVR_TRY(rlvr_h5_attr_put_str(f, "task_pool_hash", m->task_pool_hash));
    RLVR_TRY(rlvr_h5_attr_put_str(f, "hdf5_version", m->hdf5_version));
    RLVR_TRY(rlvr_h5_attr_put_str(f, "mpi_version", m->mpi_version));
    RLVR_TRY(rlvr_h5_attr_put_str(f, "libgit2_version", m->libgit2_version));
    RLVR_TRY(rlvr_h5_attr_put_str(f, "openblas_version", m->openblas_version));
    RLVR_TRY(rlvr_h5_attr_put_str(f, "compiler", m->compiler));
    RLVR_TRY(rlvr_h5_attr_put_str(f, "cpu_model", m->cpu_model));
    RLVR_TRY(rlvr_h5_attr_put_str(f, "build_flags", RLVR_BUILD_FLAGS));
    RLVR_TRY(rlvr_h5_write_text(f, "run/config", m->config_text, 4));
    RLVR_TRY(write_hosts(f, m->hosts, m->n_hosts));
    return write_slurm(f, m->slurm, m->n_slurm);
}

static int fill_manifest(hid_t f, const void *arg) { return write_contents(f, arg); }

int rlvr_manifest_write(const rlvr_manifest *m, const char *path) {
    return rlvr_h5_write_atomic(path, "manifest", fill_manifest, m);
}

/* ---- reading ---------------------------------------------------------------- */

typedef struct {
    const char *name;
    char *buf;
    size_t cap;
    bool found;
} attr_lookup;

static int find_attr(const char *name, const char *value, void *user) {
    attr_lookup *a = user;
    if (strcmp(name, a->name) != 0) return 0;
    snprintf(a->buf, a->cap, "%s", value);
    a->found = true;
    return 0;
}

int rlvr_manifest_read_attr(const char *path, const char *name, char *buf, size_t cap) {
    hid_t f;
    RLVR_TRY(rlvr_h5_file_open(&f, path, RLVR_FORMAT_MANIFEST, RLVR_MANIFEST_FORMAT_VERSION, NULL, false));
    rlvr_h5_close(&f);
    attr_lookup a = {.name = name, .buf = buf, .cap = cap, .found = false};
    RLVR_TRY(rlvr_io_list_attributes(path, "/", find_attr, &a));
    if (!a.found) return rlvr_error_set(RLVR_ENOTFOUND, "%s: no attribute \"%s\"", path, name);
    return 0;
}
