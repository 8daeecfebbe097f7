#include "enclave/verify.h"

#include "core/error.h"
#include "core/rng.h"
#include "core/sys.h"
#include "enclave/diffgate.h"
#include "enclave/fsutil.h"
#include "enclave/gitrepo.h"
#include "enclave/judge.h"
#include "enclave/expected.h"
#include "enclave/junit.h"
#include "enclave/reason.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <git2.h>
#include <git2/sys/repository.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct rlvr_verify_task {
    rlvr_sandbox_host *host;
    rlvr_snapshot *snap;
    char *test_command; /* command mode */
    rlvr_judge *judge;  /* judge mode */
    char **judge_argv;
    char *build_command;
    char **editable;
    char **required;    /* fail_to_pass + pass_to_pass, or NULL */
    char **pass_to_pass;/* of required; NULL when required is */
    char **order;       /* default RLVR_TEST_ORDER */
    char **protected;   /* task globs + public tests + hidden files */
    char **quarantined;
    char **readonly;    /* enclave paths the tests' processes cannot change: hidden files, public tests */
    rlvr_sandbox_limits limits;
    int consensus;
    bool fresh;
    rlvr_sandbox_network network;
    char *results_junit; /* the JUnit file's path in /work, or NULL: TAP on the results descriptor */
    rlvr_expected_set expected; /* results as expected files (n == 0: none); the copies stay here */
    char *environment;   /* the environment image, or NULL: the host's system paths */
    char *workdir;       /* where commands start, or NULL: /work */
    char **env;          /* the task's own environment entries */
    rlvr_diffgate_rules rules;
    rlvr_sandbox *enclave; /* pooled: restored (rlvr_sandbox_reset) before every run but the first */
    bool used;
    rlvr_partial_credit credit;
};

/* ---- string lists ------------------------------------------------------------ */

static size_t list_len(const char *const *l) {
    size_t n = 0;
    while (l && l[n]) n++;
    return n;
}

static void list_free(char **l) {
    for (char **p = l; p && *p; p++) free(*p);
    free(l);
}

/* Appends copies of `add` to the NULL-terminated list *l. */
static int list_extend(char ***l, const char *const *add) {
    size_t n = list_len((const char *const *)*l), k = list_len(add);
    char **grown = realloc(*l, (n + k + 1) * sizeof *grown);
    if (!grown) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    *l = grown;
    for (size_t i = 0; i < k; i++) {
        grown[n + i] = strdup(add[i]);
        if (!grown[n + i]) {
            grown[n + i] = NULL;
            return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        }
        grown[n + i + 1] = NULL;
    }
    grown[n + k] = NULL;
    return 0;
}

static int list_push(char ***l, const char *s) {
    const char *one[2] = {s, NULL};
    return list_extend(l, one);
}

static int check_names(const char *const *names, const char *what) {
    for (const char *const *p = names; p && *p; p++) {
        if (!(*p)[0]) return RLVR_FAIL(RLVR_EINVAL, "%s: empty test name", what);
        for (const char *s = *p; *s; s++)
            if (isspace((unsigned char)*s) || *s == '#')
                return RLVR_FAIL(RLVR_EINVAL, "%s: test name \"%s\" contains whitespace or '#'", what, *p);
    }
    return 0;
}

/* Every file under `dir`: as an escaped glob anchored at the tree root
 * (protected paths) and as a plain path (read-only in the enclave). */
static int hidden_globs(const char *dir, const char *rel, char ***out, char ***paths, int depth) {
    if (depth > 64) return RLVR_FAIL(RLVR_ELIMIT, "hidden tests nested deeper than 64 directories");
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s%s%s", dir, rel[0] ? "/" : "", rel) >= sizeof path)
        return RLVR_FAIL(RLVR_EINVAL, "hidden test path too long under %s", dir);
    DIR *d = opendir(path);
    if (!d) return rlvr_error_errno_at(__FILE__, __LINE__, "reading the hidden tests in %s", path);
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char child[PATH_MAX];
        if (snprintf(child, sizeof child, "%s%s%s", rel, rel[0] ? "/" : "", e->d_name) >= (int)sizeof child) {
            rc = RLVR_FAIL(RLVR_EINVAL, "hidden test path too long under %s", rel);
            break;
        }
        char full[PATH_MAX];
        if (snprintf(full, sizeof full, "%s/%s", dir, child) >= (int)sizeof full) {
            rc = RLVR_FAIL(RLVR_EINVAL, "hidden test path too long: %s", child);
            break;
        }
        struct stat st;
        if (lstat(full, &st) != 0) {
            rc = rlvr_error_errno_at(__FILE__, __LINE__, "stat %s", full);
            break;
        }
        if (S_ISDIR(st.st_mode)) {
            rc = hidden_globs(dir, child, out, paths, depth + 1);
            continue;
        }
        char glob[2 * PATH_MAX + 2], *g = glob;
        *g++ = '/'; /* anchored even when the file sits at the top */
        for (const char *s = child; *s && g < glob + sizeof glob - 3; s++) {
            if (strchr("*?[]\\", *s)) *g++ = '\\';
            *g++ = *s;
        }
        *g = '\0';
        rc = list_push(out, glob);
        if (rc == 0 && paths) rc = list_push(paths, child);
    }
    closedir(d);
    return rc;
}

/* ---- the task ------------------------------------------------------------------- */

/* Exactly one of command mode and judge mode. */
static int check_mode(const rlvr_verify_spec *spec) {
    bool command = spec->test_command && spec->test_command[0];
    bool judged = spec->judge_build || spec->judge_argv;
    if (command == judged)
        return RLVR_FAIL(RLVR_EINVAL, "verification spec needs either test_command or judge_build with judge_argv");
    if (judged && (!spec->judge_build || !spec->judge_build[0] || !spec->judge_argv || !spec->judge_argv[0]))
        return RLVR_FAIL(RLVR_EINVAL, "verification spec: judge mode needs judge_build and judge_argv");
    if (judged && (strchr(spec->judge_argv[0], '/') || !spec->judge_argv[0][0]))
        return RLVR_FAIL(RLVR_EINVAL, "verification spec: judge program \"%s\" must be a file name the judge build "
                         "leaves in $RLVR_JUDGE_DIR", spec->judge_argv[0]);
    if (spec->build_command && !judged)
        return RLVR_FAIL(RLVR_EINVAL, "verification spec: build_command needs judge mode (in command mode the test "
                         "command builds)");
    /* a judge writes TAP to its descriptor; a results file beside the code
     * under test would be the code's to write */
    if (spec->results_junit && judged)
        return RLVR_FAIL(RLVR_EINVAL, "verification spec: results_junit is for command mode");
    if (spec->expected_files && (judged || spec->results_junit || !spec->expected_dir))
        return RLVR_FAIL(RLVR_EINVAL, "verification spec: expected files are command mode's own results (with "
                                      "expected_dir, without results_junit)");
    if (spec->results_junit && rlvr_diffgate_check_path(spec->results_junit, NULL) != RLVR_REASON_NONE)
        return RLVR_FAIL(RLVR_EINVAL, "verification spec: results_junit \"%s\" must be a plain path inside the tree "
                         "(no \"..\", no .git, not a hook or environment file)", spec->results_junit);
    return 0;
}

/* The spec's checks that need no resource. */
static int check_spec(const rlvr_verify_spec *spec) {
    if (!spec || spec->version != RLVR_VERIFY_SPEC_VERSION)
        return RLVR_FAIL(RLVR_EINVAL, "verification spec missing or of another version");
    if (!spec->repo_dir || !spec->base_commit)
        return RLVR_FAIL(RLVR_EINVAL, "verification spec needs repo_dir and base_commit");
    RLVR_TRY(check_mode(spec));
    if (spec->consensus_runs < 1 || spec->consensus_runs > 64)
        return RLVR_FAIL(RLVR_EINVAL, "consensus_runs must be 1..64 (got %d)", spec->consensus_runs);
    RLVR_TRY(rlvr_sandbox_limits_check(&spec->limits));
    RLVR_TRY(check_names(spec->fail_to_pass, "fail_to_pass"));
    RLVR_TRY(check_names(spec->pass_to_pass, "pass_to_pass"));
    RLVR_TRY(check_names(spec->test_order, "test_order"));
    return check_names(spec->quarantined, "quarantined");
}

/* A copy of `s` into *dst (NULL stays NULL). */
static int dup_or_null(char **dst, const char *s) {
    if (s && !(*dst = strdup(s))) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    return 0;
}

/* The task's own copies of the spec's commands, names and lists. */
static int copy_spec(rlvr_verify_task *t, const rlvr_verify_spec *spec, bool judged) {
    t->limits = spec->limits;
    t->consensus = spec->consensus_runs;
    t->fresh = spec->fresh_enclaves;
    t->network = spec->network;
    t->rules = (rlvr_diffgate_rules)RLVR_DIFFGATE_RULES_INIT;
    if (spec->max_patch_bytes) t->rules.max_bytes = spec->max_patch_bytes;
    if (spec->max_patch_files) t->rules.max_files = spec->max_patch_files;
    RLVR_TRY(judged ? list_extend(&t->judge_argv, spec->judge_argv) : dup_or_null(&t->test_command, spec->test_command));
    RLVR_TRY(dup_or_null(&t->build_command, spec->build_command));
    RLVR_TRY(dup_or_null(&t->results_junit, spec->results_junit));
    RLVR_TRY(dup_or_null(&t->environment, spec->environment));
    RLVR_TRY(dup_or_null(&t->workdir, spec->workdir));
    RLVR_TRY(list_extend(&t->env, spec->env));
    if (spec->editable_globs) {
        RLVR_TRY(list_extend(&t->editable, spec->editable_globs));
        if (!t->editable) RLVR_TRY(list_extend(&t->editable, NULL));
    }
    if (spec->fail_to_pass || spec->pass_to_pass) {
        RLVR_TRY(list_extend(&t->required, spec->fail_to_pass));
        RLVR_TRY(list_extend(&t->required, spec->pass_to_pass));
        RLVR_TRY(list_extend(&t->pass_to_pass, spec->pass_to_pass));
    }
    return list_extend(&t->order, spec->test_order ? spec->test_order : (const char *const *)t->required);
}

/* `path` as an anchored glob ("/path") appended to *list. */
static int push_anchored(char ***list, const char *path) {
    char g[PATH_MAX];
    size_t n = strlen(path);
    if (n + 2 > sizeof g) return RLVR_FAIL(RLVR_EINVAL, "path too long: %s", path);
    g[0] = '/';
    memcpy(g + 1, path, n + 1);
    return list_push(list, g);
}

/* Many hidden files: their top-level directories are mounted read-only
 * instead of each file. */
static int readonly_tops(rlvr_verify_task *t) {
    char **tops = NULL;
    int rc = 0;
    for (char **p = t->readonly; rc == 0 && *p; p++) {
        char top[PATH_MAX];
        snprintf(top, sizeof top, "%s", *p);
        char *slash = strchr(top, '/');
        if (slash) *slash = '\0';
        bool seen = false;
        for (char **q = tops; q && *q; q++) seen |= strcmp(*q, top) == 0;
        if (!seen) rc = list_push(&tops, top);
    }
    if (rc < 0) {
        list_free(tops);
        return rc;
    }
    list_free(t->readonly);
    t->readonly = tops;
    return 0;
}

/* What no patch may touch (the task's protected globs, its public tests, a
 * results file, the expected files, the hidden files) and what the enclave
 * mounts read-only. In judge mode the enclave never holds the hidden files:
 * they are protected paths (a patch may not create them) but nothing to
 * mount. */
static int protect_paths(rlvr_verify_task *t, const rlvr_verify_spec *spec, bool judged) {
    RLVR_TRY(list_extend(&t->protected, spec->protected_globs));
    for (const char *const *p = spec->public_tests; p && *p; p++) RLVR_TRY(push_anchored(&t->protected, *p));
    if (spec->results_junit) RLVR_TRY(push_anchored(&t->protected, spec->results_junit));
    if (spec->expected_files) RLVR_TRY(rlvr_expected_load(&t->expected, spec->expected_dir, spec->expected_files));
    for (size_t i = 0; i < t->expected.n; i++) RLVR_TRY(push_anchored(&t->protected, t->expected.files[i].path));
    if (spec->hidden_dir) RLVR_TRY(hidden_globs(spec->hidden_dir, "", &t->protected, judged ? NULL : &t->readonly, 0));
    if (list_len((const char *const *)t->readonly) > 64) RLVR_TRY(readonly_tops(t));
    RLVR_TRY(list_extend(&t->readonly, spec->public_tests));
    if (!t->protected) RLVR_TRY(list_extend(&t->protected, NULL));
    if (!t->readonly) RLVR_TRY(list_extend(&t->readonly, NULL));
    return 0;
}

int rlvr_verify_task_new(rlvr_verify_task **out, rlvr_sandbox_host *host, const rlvr_verify_spec *spec) {
    *out = NULL;
    RLVR_TRY(check_spec(spec));
    rlvr_verify_task *t = calloc(1, sizeof *t);
    if (!t) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    t->host = host;
    bool judged = spec->judge_argv != NULL;
    char tree[41];
    int rc = copy_spec(t, spec, judged);
    if (rc < 0) goto cleanup;
    /* the environment is mounted (once per process) and checked now, so a
     * task that cannot run fails here naming its image, not in a run */
    if (spec->environment && (rc = rlvr_sandbox_host_image(host, spec->environment, spec->workdir, NULL, 0)) < 0)
        goto cleanup;
    if ((rc = protect_paths(t, spec, judged)) < 0) goto cleanup;
    if ((rc = rlvr_verify_task_set_quarantine(t, spec->quarantined)) < 0) goto cleanup;
    if (judged) {
        rc = rlvr_judge_build(&t->judge, host, spec->repo_dir, spec->base_commit, spec->hidden_dir, spec->judge_build,
                              &spec->limits);
        if (rc == 0 && !rlvr_judge_has(t->judge, spec->judge_argv[0]))
            rc = rlvr_error_set(RLVR_EINVAL, "the judge build \"%s\" did not leave the judge program \"%s\"",
                                spec->judge_build, spec->judge_argv[0]);
        if (rc < 0) goto cleanup;
    }
    if ((rc = rlvr_snapshot_new(&t->snap, host)) < 0) goto cleanup;
    rc = rlvr_git_export(spec->repo_dir, spec->base_commit, rlvr_snapshot_path(t->snap), false,
                         judged ? NULL : spec->hidden_dir, tree);
    if (rc == 0) rc = rlvr_snapshot_seal(t->snap);
    if (rc < 0) goto cleanup;
    t->rules.protected_globs = (const char *const *)t->protected;
    t->rules.editable_globs = (const char *const *)t->editable;
    *out = t;
    return 0;

cleanup:
    rlvr_verify_task_free(t);
    return rlvr_error_wrap(rc, "preparing verification of %s", spec->repo_dir);
}

void rlvr_verify_task_free(rlvr_verify_task *t) {
    if (!t) return;
    rlvr_sandbox_free(t->enclave);
    rlvr_snapshot_free(t->snap);
    rlvr_judge_free(t->judge);
    list_free(t->judge_argv);
    free(t->build_command);
    list_free(t->editable);
    list_free(t->readonly);
    free(t->test_command);
    free(t->results_junit);
    rlvr_expected_free(&t->expected);
    free(t->environment);
    free(t->workdir);
    list_free(t->env);
    list_free(t->required);
    list_free(t->pass_to_pass);
    list_free(t->order);
    list_free(t->protected);
    list_free(t->quarantined);
    free(t);
}

void rlvr_verify_task_settle(rlvr_verify_task *t) {
    if (t) rlvr_sandbox_settle(t->enclave);
}

const char *rlvr_verify_task_tree(const rlvr_verify_task *t) { return rlvr_snapshot_path(t->snap); }

bool rlvr_verify_task_judged(const rlvr_verify_task *t) { return t->judge != NULL; }

void rlvr_verify_task_set_partial_credit(rlvr_verify_task *t, rlvr_partial_credit credit) { t->credit = credit; }

rlvr_partial_credit rlvr_verify_task_partial_credit(const rlvr_verify_task *t) { return t->credit; }

rlvr_sandbox *rlvr_verify_task_enclave(rlvr_verify_task *t) { return t->fresh ? NULL : t->enclave; }

int rlvr_verify_task_set_quarantine(rlvr_verify_task *t, const char *const *names) {
    RLVR_TRY(check_names(names, "quarantined"));
    char **copy = NULL;
    int rc = list_extend(&copy, names);
    if (rc < 0) {
        list_free(copy);
        return rc;
    }
    list_free(t->quarantined);
    t->quarantined = copy;
    return 0;
}

/* ---- one enclave run ------------------------------------------------------------------ */

int rlvr_reason_for_limit(rlvr_sandbox_limit limit) {
    switch (limit) {
    case RLVR_LIMIT_NONE: return RLVR_REASON_NONE;
    case RLVR_LIMIT_WALL: return RLVR_REASON_TIMEOUT;
    case RLVR_LIMIT_CPU: return RLVR_REASON_CPU_LIMIT;
    case RLVR_LIMIT_MEMORY: return RLVR_REASON_MEMORY_LIMIT;
    case RLVR_LIMIT_PROCESSES: return RLVR_REASON_PROCESS_LIMIT;
    case RLVR_LIMIT_FILE_SIZE: return RLVR_REASON_FILE_SIZE_LIMIT;
    case RLVR_LIMIT_DISK: return RLVR_REASON_DISK_LIMIT;
    case RLVR_LIMIT_OUTPUT: return RLVR_REASON_OUTPUT_LIMIT;
    }
    return RLVR_REASON_SANDBOX_ERROR;
}

enum { APPLY_OK = 0, APPLY_REFUSED = 10, APPLY_BROKEN = 11 };

/* apply_fn's argument, copied into the run: the patch's length, the patch,
 * then the results file to remove before the tests, NUL-terminated ("" for
 * none) */
typedef struct {
    size_t len;
    char patch[];
} apply_arg;

/* The stand-in index of apply_fn, in the run's own fresh /tmp. */
#define APPLY_SCRATCH_INDEX "/tmp/.rlvr-apply-index"

/* Inside the enclave: apply onto /work. */
static int apply_fn(void *p) {
    const apply_arg *a = p;
    if (a->len == 0) return APPLY_OK;
    /* the run is forked from the spawner, which may predate the runtime's
     * own libgit2 start */
    git_libgit2_init();
    git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0);
    git_repository *repo = NULL;
    if (git_repository_open_ext(&repo, "/work", GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0) return APPLY_BROKEN;
    git_diff *diff = NULL;
    int rc = APPLY_OK;
    if (git_diff_from_buffer(&diff, a->patch, a->len) < 0) rc = APPLY_REFUSED;
    /* Applying to the work tree (`git apply`, not --index) never needs the
     * repository's index, but libgit2 reads it and writes it back: for a
     * checkout of thousands of files that is most of the cost. An empty
     * index in the run's private /tmp stands in for it (the real one is
     * left untouched). */
    git_index *scratch_index = NULL;
    if (rc == APPLY_OK && (git_index_open(&scratch_index, APPLY_SCRATCH_INDEX) < 0 ||
                           git_repository_set_index(repo, scratch_index) < 0))
        rc = APPLY_BROKEN;
    git_index_free(scratch_index);
    /* one pass: git_apply computes every post-image in memory before it
     * writes a file, so a patch that does not apply leaves /work untouched
     * (no separate GIT_APPLY_CHECK pass needed) */
    if (rc == APPLY_OK && git_apply(repo, diff, GIT_APPLY_LOCATION_WORKDIR, NULL) < 0) rc = APPLY_REFUSED;
    unlink(APPLY_SCRATCH_INDEX);
    git_diff_free(diff);
    git_repository_free(repo);
    return rc;
}

/* Inside the enclave, before the tests of a task without a build: the
 * patch, then no results file but the one the tests will write (a JUnit
 * file is command mode's, which has no build step). */
static int tests_prepare_fn(void *p) {
    const apply_arg *a = p;
    int rc = apply_fn(p);
    /* the results files, NUL-terminated one after the other, an empty one last */
    for (const char *r = a->patch + a->len; rc == APPLY_OK && r[0]; r += strlen(r) + 1)
        if (rlvr_junit_remove_in_sandbox(r) < 0) rc = APPLY_BROKEN;
    return rc;
}

/* Run k's seed and test order. */
static uint32_t run_seed(uint64_t seed, int run_index) {
    uint32_t w[4];
    rlvr_rng_block(w, seed, RLVR_RNG_SHUFFLE, 0, (uint32_t)run_index, 0);
    return w[0];
}

static char *order_env(const rlvr_verify_task *t, uint64_t seed, int run_index) {
    size_t n = list_len((const char *const *)t->order);
    const char **o = calloc(n + 1, sizeof *o);
    if (!o) return NULL;
    for (size_t i = 0; i < n; i++) o[i] = t->order[i];
    if (run_index > 0 && n >= 2) {
        rlvr_rng_stream s;
        rlvr_rng_stream_init(&s, seed, RLVR_RNG_SHUFFLE, 1, (uint32_t)run_index);
        for (size_t i = n - 1; i > 0; i--) {
            size_t j = rlvr_rng_next_below(&s, (uint32_t)(i + 1));
            const char *tmp = o[i];
            o[i] = o[j];
            o[j] = tmp;
        }
        bool same = true;
        for (size_t i = 0; i < n; i++) same &= o[i] == t->order[i];
        if (same) /* a re-run must not repeat the default order */
            for (size_t i = 0; i < n / 2; i++) {
                const char *tmp = o[i];
                o[i] = o[n - 1 - i];
                o[n - 1 - i] = tmp;
            }
    }
    size_t len = strlen("RLVR_TEST_ORDER=") + 1;
    for (size_t i = 0; i < n; i++) len += strlen(o[i]) + 1;
    char *env = malloc(len);
    if (env) {
        char *p = env + sprintf(env, "RLVR_TEST_ORDER=");
        for (size_t i = 0; i < n; i++) p += sprintf(p, "%s%s", i ? " " : "", o[i]);
    }
    free(o);
    return env;
}

/* A fresh enclave from the clean snapshot: the pooled one restored, or a
 * new one. */
static int enclave_ready(rlvr_verify_task *t) {
    if (t->enclave && t->used && t->fresh) {
        rlvr_sandbox_free(t->enclave);
        t->enclave = NULL;
    }
    if (t->enclave && t->used && rlvr_sandbox_reset(t->enclave) < 0) {
        rlvr_sandbox_free(t->enclave);
        t->enclave = NULL;
    }
    if (!t->enclave) {
        rlvr_sandbox_options opt = {.version = RLVR_SANDBOX_OPTIONS_VERSION, .kind = RLVR_SANDBOX_ENCLAVE,
                                    .tree = t->snap, .readonly = (const char *const *)t->readonly, .limits = t->limits,
                                    .judge_dir = t->judge ? rlvr_judge_dir(t->judge) : NULL,
                                    .network = t->network, .environment = t->environment, .workdir = t->workdir,
                                    .env = (const char *const *)t->env};
        RLVR_TRY(rlvr_sandbox_new(&t->enclave, t->host, &opt));
    }
    t->used = true;
    return 0;
}

/* What the apply step's status says: 0 when the patch applied (or there
 * was none to apply); otherwise the run is over and *out says why. */
static int apply_outcome(int prepare_status, rlvr_verify_run *out) {
    if (prepare_status == APPLY_OK) return 0;
    if (prepare_status == APPLY_REFUSED) {
        out->reason = RLVR_REASON_APPLY_FAILED;
    } else {
        out->infra = true;
        out->reason = RLVR_REASON_APPLY_ERROR;
    }
    return 1;
}

/* The build of the code under test (judge mode), after the patch is
 * applied: 0 when it succeeded, 1 when the run is over (*out says why), a
 * negative code when the sandbox failed. */
static int run_build(rlvr_verify_task *t, const rlvr_sandbox_cmd *apply, rlvr_verify_run *out) {
    const char *argv[] = {"/bin/sh", "-c", t->build_command, NULL};
    rlvr_sandbox_cmd cmd = *apply;
    cmd.argv = argv;
    rlvr_sandbox_result res;
    double t0 = rlvr_now();
    RLVR_TRY(rlvr_sandbox_exec(t->enclave, &cmd, &res));
    out->build_s = rlvr_now() - t0;
    int over = apply_outcome(res.prepare_status, out);
    if (!over && res.limit != RLVR_LIMIT_NONE) {
        out->limit = res.limit;
        out->reason = rlvr_reason_for_limit(res.limit);
        over = 1;
    } else if (!over && res.exit_code != 0) {
        out->reason = RLVR_REASON_BUILD_FAILED;
        over = 1;
    }
    rlvr_sandbox_result_free(&res);
    return over;
}

/* The JUnit file the run left: the task's test names give pytest's node
 * ids back. */
static int read_junit(rlvr_verify_task *t, rlvr_tap_report *out) {
    char **known = NULL;
    int rc = list_extend(&known, (const char *const *)t->required);
    if (rc == 0) rc = list_extend(&known, (const char *const *)t->quarantined);
    if (rc == 0 && !known) rc = list_extend(&known, NULL);
    if (rc == 0) rc = rlvr_junit_read(t->enclave, t->results_junit, (const char *const *)known, NULL, out);
    list_free(known);
    return rc;
}

/* The hidden tests (the judge, or the test command) and their judgement. */
static int run_tests(rlvr_verify_task *t, const rlvr_sandbox_cmd *cmd, rlvr_verify_run *out) {
    rlvr_sandbox_result res;
    RLVR_TRY(rlvr_sandbox_exec(t->enclave, cmd, &res));
    if (!apply_outcome(res.prepare_status, out)) {
        out->limit = res.limit;
        int rc = t->expected.n     ? rlvr_expected_judge(t->enclave, &t->expected, &out->tap)
                 : t->results_junit ? read_junit(t, &out->tap)
                                    : rlvr_tap_parse(res.results, res.results_len, &out->tap);
        if (rc < 0) {
            rlvr_sandbox_result_free(&res);
            return rc;
        }
        rlvr_tap_expect x = {.required = (const char *const *)t->required,
                             .quarantined = (const char *const *)t->quarantined,
                             .exit_code = res.exit_code,
                             .pass_to_pass = (const char *const *)t->pass_to_pass};
        rlvr_tap_judge(&out->tap, &x, &out->judgement);
        /* a limit ends the run as a failure, whatever the results said, and
         * earns no partial credit */
        if (res.limit != RLVR_LIMIT_NONE) out->judgement.passed = out->judgement.f2p_passed = 0;
        out->reason = res.limit != RLVR_LIMIT_NONE ? rlvr_reason_for_limit(res.limit) : out->judgement.reason;
    }
    rlvr_sandbox_result_free(&res);
    return 0;
}

int rlvr_verify_run_once(rlvr_verify_task *t, const char *patch, size_t len, uint64_t seed, int run_index,
                         rlvr_verify_run *out) {
    memset(out, 0, sizeof *out);
    out->tap.planned = -1;
    out->test_seed = run_seed(seed, run_index);
    double t0 = rlvr_now();
    char seed_env[48];
    snprintf(seed_env, sizeof seed_env, "RLVR_TEST_SEED=%u", out->test_seed);
    char *order = order_env(t, seed, run_index);
    /* the results files the run must write itself: removed first */
    size_t results_len = 1;
    if (t->results_junit) results_len += strlen(t->results_junit) + 1;
    for (size_t i = 0; i < t->expected.n; i++) results_len += strlen(t->expected.files[i].path) + 1;
    size_t arg_len = sizeof(apply_arg) + len + results_len;
    apply_arg *arg = malloc(arg_len);
    if (!order || !arg) {
        free(order);
        free(arg);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    }
    arg->len = len;
    if (len) memcpy(arg->patch, patch, len);
    char *results = arg->patch + len;
    if (t->results_junit) results = stpcpy(results, t->results_junit) + 1;
    for (size_t i = 0; i < t->expected.n; i++) results = stpcpy(results, t->expected.files[i].path) + 1;
    *results = '\0';
    /* pytest as the hidden tests run it: no plugins but the ones the
     * command names (installed distributions' entry points, a tree on the
     * path among them), no cache written into the tree, no byte code */
    const char *env[] = {seed_env, order, "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1", "PYTEST_ADDOPTS=-p no:cacheprovider",
                         "PYTHONDONTWRITEBYTECODE=1", NULL};
    const char *sh_argv[] = {"/bin/sh", "-c", t->test_command, NULL};
    rlvr_sandbox_cmd apply = {.version = RLVR_SANDBOX_CMD_VERSION, .prepare = apply_fn, .prepare_arg = arg,
                              .prepare_arg_len = arg_len};
    /* the tests: the judge from its descriptor, or the test command; they
     * apply the patch themselves when no build runs first */
    rlvr_sandbox_cmd tests = {.version = RLVR_SANDBOX_CMD_VERSION,
                              .argv = t->judge ? (const char *const *)t->judge_argv : sh_argv, .env = env,
                              .results_fd = true, .judge = t->judge != NULL};
    if (!t->build_command) {
        tests.prepare = tests_prepare_fn;
        tests.prepare_arg = arg;
        tests.prepare_arg_len = arg_len;
    }
    int rc = enclave_ready(t);
    int over = 0;
    if (rc == 0 && t->build_command) over = rc = run_build(t, &apply, out);
    if (rc > 0) rc = 0;
    if (rc == 0 && !over) rc = run_tests(t, &tests, out);
    if (rc < 0) { /* whatever went wrong, the next run starts from a new enclave */
        rlvr_sandbox_free(t->enclave);
        t->enclave = NULL;
    }
    free(order);
    free(arg);
    if (rc == RLVR_ENOMEM) return rc;
    if (rc < 0) {
        out->infra = true;
        out->reason = RLVR_REASON_SANDBOX_ERROR;
    }
    out->wall_s = rlvr_now() - t0;
    return 0;
}

void rlvr_verify_run_free(rlvr_verify_run *run) {
    if (!run) return;
    rlvr_tap_report_free(&run->tap);
}

/* ---- the verdict ------------------------------------------------------------------------ */

/* The first run's partial credit (consensus re-runs only confirm a pass). */
static void first_run_credit(const rlvr_tap_judgement *j, rlvr_enclave_verdict *out) {
    if (j->total > 0) {
        out->partial = (float)j->passed / (float)j->total;
        out->tests_passed = j->passed;
        out->tests_total = j->total;
    }
    out->f2p_passed = j->f2p_passed;
    out->f2p_total = j->f2p_total;
    out->p2p_failed = j->p2p_failed;
    if (j->f2p_total > 0 && !j->p2p_failed) out->f2p_partial = (float)j->f2p_passed / (float)j->f2p_total;
}

/* Wall and CPU time are one budget to the code under test: a busy loop
 * meets both limits at about the same moment, and which fires first depends
 * on the machine's load. Both are verdict timeout (the reason still names
 * the clock), so a run's reward does not depend on which fired. */
static rlvr_verdict verdict_for(int reason) {
    if (reason == RLVR_REASON_NONE) return RLVR_VERDICT_PASS;
    if (reason == RLVR_REASON_TIMEOUT || reason == RLVR_REASON_CPU_LIMIT) return RLVR_VERDICT_TIMEOUT;
    if (reason >= 500) return RLVR_VERDICT_INFRA;
    return RLVR_VERDICT_FAIL;
}

int rlvr_verify_patch(rlvr_verify_task *t, const char *patch, size_t len, bool public_tests_changed, uint64_t seed,
                      rlvr_enclave_verdict *out) {
    memset(out, 0, sizeof *out);
    double t0 = rlvr_now();
    if (!patch && len > 0) return RLVR_FAIL(RLVR_EINVAL, "patch is NULL but its length is %zu", len);
    if (public_tests_changed) {
        out->verdict = RLVR_VERDICT_DROPPED;
        out->reason = RLVR_REASON_PUBLIC_TESTS_CHANGED;
        out->wall_s = rlvr_now() - t0;
        return 0;
    }
    rlvr_diffgate_report gate;
    int rc = rlvr_diffgate_validate(patch ? patch : "", len, &t->rules, &gate);
    if (rc == RLVR_ENOMEM || rc == RLVR_EINVAL) return rc;
    if (rc < 0 || gate.reason != RLVR_REASON_NONE) {
        out->verdict = rc < 0 ? RLVR_VERDICT_INFRA : RLVR_VERDICT_REJECTED;
        out->reason = rc < 0 ? RLVR_REASON_SANDBOX_ERROR : gate.reason;
        out->wall_s = rlvr_now() - t0;
        return 0;
    }
    for (int k = 0; k < t->consensus; k++) {
        rlvr_verify_run run;
        rc = rlvr_verify_run_once(t, patch, len, seed, k, &run);
        if (rc < 0) return rc;
        out->runs++;
        out->enclave_s += run.wall_s;
        if (k == 0) first_run_credit(&run.judgement, out);
        int reason = run.reason;
        bool infra = run.infra;
        rlvr_verify_run_free(&run);
        if (infra) {
            out->verdict = RLVR_VERDICT_INFRA;
            out->reason = reason;
            break;
        }
        if (reason != RLVR_REASON_NONE) {
            if (k == 0) {
                out->verdict = verdict_for(reason);
                out->reason = reason;
            } else {
                /* passed before, fails now: flaky, excluded from the loss */
                out->verdict = RLVR_VERDICT_DROPPED;
                out->reason = RLVR_REASON_CONSENSUS_MIXED;
            }
            break;
        }
        out->verdict = RLVR_VERDICT_PASS;
        out->reason = RLVR_REASON_NONE;
    }
    out->wall_s = rlvr_now() - t0;
    return 0;
}

/* ---- quarantine --------------------------------------------------------------------------- */

void rlvr_quarantine_free(rlvr_quarantine *q) {
    if (!q) return;
    list_free(q->tests);
    memset(q, 0, sizeof *q);
}

int rlvr_verify_quarantine(rlvr_verify_task *t, const char *reference, size_t len, int runs, uint64_t seed,
                           double max_share, rlvr_quarantine *out) {
    memset(out, 0, sizeof *out);
    if (runs < 1) return RLVR_FAIL(RLVR_EINVAL, "quarantine needs at least one run (got %d)", runs);
    char **saved = t->quarantined;
    t->quarantined = NULL; /* judge every test during the pass */
    char **names = NULL;
    bool *failed = NULL;
    size_t n = 0;
    int rc = 0;
    if (t->required) rc = list_extend(&names, (const char *const *)t->required);
    for (int i = 0; rc == 0 && i < runs; i++) {
        rlvr_verify_run run;
        rc = rlvr_verify_run_once(t, reference, len, seed, i, &run);
        if (rc < 0) break;
        out->runs++;
        if (run.infra) {
            rc = RLVR_FAIL(RLVR_ESANDBOX, "quarantine run %d: the enclave failed (%s)", i, rlvr_reason_name(run.reason));
            rlvr_verify_run_free(&run);
            break;
        }
        bool whole_run_broken = run.reason == RLVR_REASON_APPLY_FAILED || run.reason == RLVR_REASON_BUILD_FAILED ||
                                run.limit != RLVR_LIMIT_NONE ||
                                run.reason == RLVR_REASON_NO_RESULTS || run.reason == RLVR_REASON_RESULTS_INVALID;
        if (whole_run_broken) {
            out->drop_task = true;
            out->drop_reason = run.reason;
            rlvr_verify_run_free(&run);
            break;
        }
        if (!names) {
            for (int j = 0; rc == 0 && j < run.tap.n_tests; j++) rc = list_push(&names, run.tap.tests[j].name);
            if (rc == 0 && !names) rc = list_extend(&names, NULL);
        }
        if (rc == 0 && !failed) {
            n = list_len((const char *const *)names);
            failed = calloc(n + 1, sizeof *failed);
            if (!failed) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        }
        for (size_t j = 0; rc == 0 && j < n; j++) {
            int count = 0;
            const rlvr_tap_test *r = rlvr_tap_find(&run.tap, names[j], &count);
            if (!r || count != 1 || r->status != RLVR_TAP_PASS) failed[j] = true;
        }
        rlvr_verify_run_free(&run);
    }
    if (rc == 0) {
        out->n_total = (int)n;
        for (size_t j = 0; rc == 0 && j < n; j++)
            if (failed[j]) {
                rc = list_push(&out->tests, names[j]);
                out->n_tests++;
            }
        if (rc == 0 && !out->tests) rc = list_extend(&out->tests, NULL);
        if (rc == 0 && !out->drop_task && n > 0 && (double)out->n_tests > max_share * (double)n) {
            out->drop_task = true;
            out->drop_reason = RLVR_REASON_TESTS_FAILED;
        }
    }
    free(failed);
    list_free(names);
    t->quarantined = saved;
    if (rc < 0) rlvr_quarantine_free(out);
    return rc;
}
