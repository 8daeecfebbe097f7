#include "redteam.h"
#include "core/hash.h"
#include "core/fs.h"

#include "test.h"

#include "../enclave/fixture.h"

#include "core/log.h"
#include "core/sys.h"
#include "core/text.h"
#include "enclave/fsutil.h"
#include "enclave/gitrepo.h"
#include "enclave/reason.h"
#include "envs/gen.h"
#include "envs/harness.h"

#include <dirent.h>
#include <fcntl.h>
#include <git2.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

int redteam_start(int argc, char **argv, const char *program, const char *system_paths, const char **name,
                  rlvr_sandbox_host **host) {
    static char full[256];
    bool unprivileged = false, copy = false;
    *host = NULL;
    rlvr_log_init_from_env();
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--unprivileged") == 0) unprivileged = true;
        else if (strcmp(argv[i], "--copy") == 0) copy = true;
        else {
            fprintf(stderr, "usage: %s [--unprivileged] [--copy]\n", argv[0]);
            return 2;
        }
    }
    snprintf(full, sizeof full, "%s%s%s", program, unprivileged ? " --unprivileged" : "", copy ? " --copy" : "");
    *name = full;
    if (unprivileged) CHECK_MSG(geteuid() != 0, "--unprivileged, but running as root");
    int rc = fixture_host_paths(host, !copy, system_paths);
    CHECK_MSG(rc == 0, "host: %s", rlvr_error_last());
    if (rc) return redteam_summary(full, 0, 0);
    if (copy) CHECK_MSG(!rlvr_sandbox_host_overlay(*host), "--copy, but the sandboxes get an overlay");
    else if (!rlvr_sandbox_host_overlay(*host)) printf("  (no overlay on this kernel: copies in both modes)\n");
    return 0;
}

int redteam_dirs_new(redteam_dirs *d, const char *prefix) {
    memset(d, 0, sizeof *d);
    const char *tmp = getenv("TMPDIR");
    RLVR_TRY(rlvr_fs_mkdtemp(&d->root, tmp && tmp[0] ? tmp : "/tmp", prefix));
    chmod(d->root, 0755);
    snprintf(d->files, sizeof d->files, "%s/tasks", d->root);
    snprintf(d->scratch, sizeof d->scratch, "%s/scratch", d->root);
    snprintf(d->canary, sizeof d->canary, "%s/canary", d->files);
    RLVR_TRY(rlvr_mkdir_p(d->files, 0755));
    RLVR_TRY(rlvr_mkdir_p(d->scratch, 0755));
    return rlvr_fs_write_file(d->canary, "canary\n", 7);
}

void redteam_dirs_free(redteam_dirs *d) {
    if (d->root) rlvr_fs_remove_tree(d->root);
    free(d->root);
    memset(d, 0, sizeof *d);
}

/* ---- the host's state ----------------------------------------------------------------- */

typedef struct {
    uint64_t files, snapshot, judges;
    int scratch, fds;
} host_state;

/* The judge cache of the host (enclave/judge.c): one directory per judge
 * under scratch/judges, kept until the host is freed. */
#define JUDGE_CACHE "judges"

/* Folds what stat says of every file in `dir` into h. */
static uint64_t stamp_dir(uint64_t h, const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[PATH_MAX + 256];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (e->d_name[0] == '.' || lstat(path, &st) != 0) continue;
        uint64_t v[6] = {(uint64_t)st.st_ino, (uint64_t)st.st_mode, (uint64_t)st.st_size, (uint64_t)st.st_mtim.tv_sec,
                         (uint64_t)st.st_mtim.tv_nsec, (uint64_t)st.st_nlink};
        h = rlvr_fnv1a64_update(h, v, sizeof v);
    }
    if (d) closedir(d);
    return h;
}

/* The judge programs (judge mode) are execute-only: they cannot be hashed
 * by an unprivileged runtime, so their identity is what stat says of them
 * (any write changes the size or the modification time), and of the
 * directories holding them. */
static uint64_t judge_stamp(const char *scratch) {
    char cache[PATH_MAX];
    snprintf(cache, sizeof cache, "%s/" JUDGE_CACHE, scratch);
    uint64_t h = stamp_dir(RLVR_FNV1A64_INIT, cache);
    DIR *d = opendir(cache);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char dir[PATH_MAX + 256];
        snprintf(dir, sizeof dir, "%s/%s", cache, e->d_name);
        if (e->d_name[0] != '.') h = stamp_dir(h, dir);
    }
    if (d) closedir(d);
    return h;
}

static host_state snapshot_host(const redteam_target *t) {
    if (t->settle) t->settle(t->settle_ctx);
    host_state s = {0};
    CHECK_OK(rlvr_fs_hash_tree(t->files, &s.files));
    CHECK_OK(rlvr_fs_hash_tree(rlvr_verify_task_tree(t->task), &s.snapshot));
    const char *scratch = rlvr_sandbox_host_scratch(t->host);
    s.judges = judge_stamp(scratch);
    s.scratch = fixture_count_entries(scratch);
    s.fds = fixture_count_entries("/proc/self/fd");
    return s;
}

static void check_host(const redteam_target *t, const char *name, const host_state *before, int pooled) {
    /* once the last run's supervisor has finished exiting */
    rlvr_verify_task_settle(t->task);
    host_state after = snapshot_host(t);
    CHECK_MSG(before->files == after.files, "case \"%s\" changed the task on the host", name);
    CHECK_MSG(before->snapshot == after.snapshot, "case \"%s\" changed the enclave's clean snapshot", name);
    CHECK_MSG(before->judges == after.judges, "case \"%s\" changed a judge program", name);
    CHECK_MSG(before->scratch == after.scratch, "case \"%s\" left entries in the scratch directory", name);
    CHECK_MSG(before->fds == after.fds, "case \"%s\" leaked descriptors (%d -> %d)", name, before->fds, after.fds);
    /* the sandbox processes are the spawner's children, not the runtime's */
    pid_t spawner = rlvr_sandbox_host_spawner(t->host);
    int children = fixture_count_children(spawner);
    CHECK_MSG(children == pooled, "case \"%s\": %d children of the spawner, expected the %d pooled enclaves", name,
              children, pooled);
    CHECK_MSG(fixture_count_grandchildren(spawner) == 0, "case \"%s\": a pooled enclave kept processes", name);
    CHECK_MSG(fixture_count_children(getpid()) == 1, "case \"%s\": the runtime has children besides the spawner",
              name);
    char *text = NULL;
    CHECK_OK(rlvr_fs_read_file(t->canary, &text, NULL));
    CHECK_MSG(text && strcmp(text, "canary\n") == 0, "case \"%s\" changed the canary", name);
    free(text);
}

rlvr_enclave_verdict redteam_verify(const redteam_target *t, const redteam_expect *x, const char *patch, size_t len,
                                    bool tests_changed, uint64_t seed, int pooled) {
    host_state before = snapshot_host(t);
    double t0 = rlvr_now();
    rlvr_enclave_verdict v;
    int r = rlvr_verify_patch(t->task, patch, len, tests_changed, seed, &v);
    CHECK_MSG(r == 0, "case \"%s\": %s", x->name, rlvr_error_last());
    if (r != 0) {
        memset(&v, 0, sizeof v);
        v.verdict = RLVR_VERDICT_NONE;
        return v;
    }
    bool scored_zero = v.verdict == RLVR_VERDICT_FAIL || v.verdict == RLVR_VERDICT_TIMEOUT ||
                       v.verdict == RLVR_VERDICT_REJECTED || v.verdict == RLVR_VERDICT_DROPPED;
    /* a control (expected to pass) shows that an exploit's way to win would work */
    if (x->verdict != RLVR_VERDICT_PASS)
        CHECK_MSG(scored_zero, "case \"%s\" was not scored 0: %s", x->name, rlvr_verdict_name(v.verdict));
    bool alt = x->reason_alt != RLVR_REASON_NONE && v.reason == x->reason_alt;
    if (alt) printf("  (%s: %s: %s)\n", x->name, x->alt_why ? x->alt_why : "the other accepted reason",
                    rlvr_reason_name(v.reason));
    bool not_yet = x->not_yet && v.verdict == RLVR_VERDICT_FAIL && v.reason == RLVR_REASON_TESTS_FAILED;
    CHECK_MSG((v.verdict == x->verdict && (v.reason == x->reason || alt)) || not_yet,
              "case \"%s\": %s/%s, expected %s/%s",
              x->name, rlvr_verdict_name(v.verdict), rlvr_reason_name(v.reason), rlvr_verdict_name(x->verdict),
              rlvr_reason_name(x->reason));
    if (x->verdict == RLVR_VERDICT_REJECTED || x->verdict == RLVR_VERDICT_DROPPED)
        CHECK_MSG(v.runs == 0, "case \"%s\": a refused patch ran in %d enclaves", x->name, v.runs);
    check_host(t, x->name, &before, pooled);
    printf("  %-52s %-8s %-22s %d runs  %.2f s\n", x->name, rlvr_verdict_name(v.verdict), rlvr_reason_name(v.reason),
           v.runs, rlvr_now() - t0);
    fflush(stdout);
    return v;
}

void redteam_check_host_clean(rlvr_sandbox_host *host) {
    CHECK(fixture_count_children(rlvr_sandbox_host_spawner(host)) == 0);
    /* nothing but the judge cache, which holds finished judges only */
    const char *scratch = rlvr_sandbox_host_scratch(host);
    char cache[PATH_MAX];
    snprintf(cache, sizeof cache, "%s/" JUDGE_CACHE, scratch);
    int cached = access(cache, F_OK) == 0;
    CHECK_MSG(fixture_count_entries(scratch) == cached, "entries left in the scratch directory %s", scratch);
    DIR *d = opendir(cache);
    struct dirent *e;
    while (d && (e = readdir(d)))
        CHECK_MSG(strncmp(e->d_name, "build-", 6) != 0, "an unfinished judge build in %s: %s", cache, e->d_name);
    if (d) closedir(d);
}

int redteam_summary(const char *name, int checks, int failures) {
    test_checks += checks;
    test_failures += failures;
    return test_summary(name);
}

/* ---- generated bugfix-c tasks in judge mode ------------------------------------------------------ */

/* After the fixer: the runner answers correctly only when rt_probe() says
 * the forbidden thing worked. */
static const char probe_gate[] =
    "__attribute__((constructor)) static void rt_gate(int argc, char **argv, char **envp) {\n"
    "    (void)envp;\n"
    "    if (rt_probe()) rt_fixed_main(argc, argv);\n"
    "}\n";

char *redteam_expand(const char *text, const redteam_subst *subst, size_t n) {
    size_t cap = strlen(text) + 1;
    for (const char *p = text; (p = strchr(p, '@')); p++)
        for (size_t k = 0; k < n; k++)
            if (strncmp(p, subst[k].key, strlen(subst[k].key)) == 0) cap += strlen(subst[k].value);
    char *out = malloc(cap), *o = out;
    if (!out) return NULL;
    for (const char *p = text; *p;) {
        bool done = false;
        for (size_t k = 0; k < n && !done; k++) {
            size_t len = strlen(subst[k].key);
            if (*p == '@' && strncmp(p, subst[k].key, len) == 0) {
                o += sprintf(o, "%s", subst[k].value);
                p += len;
                done = true;
            }
        }
        if (!done) *o++ = *p++;
    }
    *o = '\0';
    return out;
}

char *redteam_concat(const char *const *parts) {
    size_t n = 1;
    for (const char *const *p = parts; *p; p++) n += strlen(*p);
    char *out = malloc(n);
    if (!out) return NULL;
    out[0] = '\0';
    for (const char *const *p = parts; *p; p++) strcat(out, *p);
    return out;
}

char *redteam_probe_lib(const redteam_jtask *jt, const char *prelude, const char *body, bool invert) {
    const char *parts[] = {jt->buggy, prelude, jt->fixer, "static int rt_probe_body(void) {\n", body, "}\n",
                           invert ? "static int rt_probe(void) {\n    return !rt_probe_body();\n}\n"
                                  : "static int rt_probe(void) {\n    return rt_probe_body();\n}\n",
                           probe_gate, NULL};
    return redteam_concat(parts);
}

/* The text's buffer into *out, or RLVR_ENOMEM. */
static int take_text(rlvr_text *t, char **out) {
    if (t->failed || !t->data) {
        rlvr_text_free(t);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    }
    *out = t->data;
    return 0;
}

/* The start of the line after the one at p (NULL after the last). */
static const char *next_line(const char *p) {
    const char *nl = strchr(p, '\n');
    return nl && nl[1] ? nl + 1 : NULL;
}

#define MAX_NAMES 64

/* The function names and parameter counts lib.h declares ("int NAME(int a, int b);"). */
static int declared(const char *header, char names[][64], int *n_args, int cap) {
    int n = 0;
    for (const char *line = header; line && n < cap; line = next_line(line)) {
        const char *paren = strchr(line, '(');
        const char *eol = strchr(line, '\n');
        if (strncmp(line, "int ", 4) != 0 || !paren || (eol && paren > eol)) continue;
        snprintf(names[n], 64, "%.*s", (int)(paren - line - 4), line + 4);
        n_args[n] = 1;
        for (const char *c = paren; *c && *c != ')'; c++) n_args[n] += *c == ',';
        n++;
    }
    return n;
}

/* static int FN(const char *f, const int *a, int n, int *r): *r = PREFIX<f>(a...) for the library's
 * functions; 0 for a name or argument count that is none of them. */
static void emit_dispatch(rlvr_text *t, const char *fn, const char *prefix, char names[][64], const int *n_args,
                          int n) {
    rlvr_text_printf(t, "static int %s(const char *f, const int *a, int n, int *r) {\n", fn);
    for (int i = 0; i < n; i++) {
        rlvr_text_printf(t, "    %sif (strcmp(f, \"%s\") == 0 && n == %d)\n        *r = %s%s(", i ? "else " : "",
                         names[i], n_args[i], prefix, names[i]);
        for (int a = 0; a < n_args[i]; a++) rlvr_text_printf(t, "%sa[%d]", a ? ", " : "", a);
        rlvr_text_printf(t, ");\n");
    }
    rlvr_text_printf(t, "    else\n        return 0;\n    return 1;\n}\n");
}

/* The fixer: the correct library's functions, static and renamed rt_fixed_*
 * (by macros, so their calls to each other follow), and rt_fixed_main(),
 * which answers the judge's calls (one per line on stdin, "NAME ARG...")
 * with them as the runner would, and exits. The dispatch: rt_lib_call()
 * with the library's own functions. */
static int make_fixer(redteam_jtask *jt) {
    char names[MAX_NAMES][64];
    int n_args[MAX_NAMES];
    int n = declared(jt->header, names, n_args, MAX_NAMES);
    if (n == 0) return RLVR_FAIL(RLVR_EINVAL, "no function in lib.h");
    rlvr_text t = {0}, d = {0};
    rlvr_text_printf(&t, "/* the library as it should be */\n");
    for (int i = 0; i < n; i++) rlvr_text_printf(&t, "#define %s rt_fixed_%s\n", names[i], names[i]);
    for (const char *line = jt->header; line; line = next_line(line))
        if (strncmp(line, "int ", 4) == 0) rlvr_text_printf(&t, "static %.*s\n", (int)strcspn(line, "\n"), line);
    for (const char *line = jt->correct; line; line = next_line(line)) {
        int len = (int)strcspn(line, "\n");
        if (strncmp(line, "#include", 8) == 0) continue;
        rlvr_text_printf(&t, "%s%.*s\n", strncmp(line, "int ", 4) == 0 ? "static " : "", len, line);
    }
    for (int i = 0; i < n; i++) rlvr_text_printf(&t, "#undef %s\n", names[i]);
    emit_dispatch(&t, "rt_fixed_call", "rt_fixed_", names, n_args, n);
    rlvr_text_printf(&t, "static void rt_fixed_main(int argc, char **argv) {\n"
                         "    int a[8] = {0}, r, n = 0;\n"
                         "    char line[256], *p, *end;\n"
                         "    (void)argc, (void)argv;\n"
                         "    while (fgets(line, sizeof line, stdin)) {\n"
                         "        size_t len = strcspn(line, \" \\n\");\n"
                         "        for (n = 0, p = line + len; *p == ' ' && n < 8; p = end) a[n++] = (int)strtol(p + 1, &end, 10);\n"
                         "        line[len] = 0;\n"
                         "        if (!rt_fixed_call(line, a, n, &r)) _exit(2);\n"
                         "        printf(\"%%d\\n\", r);\n        fflush(stdout);\n"
                         "    }\n    _exit(0);\n}\n");
    emit_dispatch(&d, "rt_lib_call", "", names, n_args, n);
    RLVR_TRY(take_text(&t, &jt->fixer));
    return take_text(&d, &jt->dispatch);
}

int redteam_reference_file(const rlvr_task *task, const char *scratch, const char *file, char **out) {
    char *work = NULL;
    RLVR_TRY(rlvr_fs_mkdtemp(&work, scratch, "ref-"));
    char tree[41], path[PATH_MAX];
    int rc = rlvr_fs_remove_tree(work);
    if (rc == 0) rc = rlvr_git_export(task->repository_path, task->base_commit, work, false, NULL, tree);
    git_repository *repo = NULL;
    git_diff *diff = NULL;
    const char *ref = task->reference_patch;
    if (rc == 0 && git_repository_open(&repo, work) < 0) rc = rlvr_git_fail(-1, "open", __FILE__, __LINE__);
    if (rc == 0 && git_diff_from_buffer(&diff, ref, strlen(ref)) < 0)
        rc = rlvr_git_fail(-1, "diff", __FILE__, __LINE__);
    if (rc == 0 && git_apply(repo, diff, GIT_APPLY_LOCATION_WORKDIR, NULL) < 0)
        rc = rlvr_git_fail(-1, "apply", __FILE__, __LINE__);
    snprintf(path, sizeof path, "%s/%s", work, file);
    if (rc == 0) rc = rlvr_fs_read_file(path, out, NULL);
    git_diff_free(diff);
    git_repository_free(repo);
    rlvr_fs_remove_tree(work);
    free(work);
    return rc;
}

/* The perfect stream for the first run (the default order: FAIL_TO_PASS,
 * then PASS_TO_PASS), as a C string literal. */
static int make_tap(redteam_jtask *jt) {
    const rlvr_str_list *lists[2] = {&jt->task->fail_to_pass, &jt->task->pass_to_pass};
    rlvr_text t = {0};
    rlvr_text_printf(&t, "\"1..%zu\\n", lists[0]->n + lists[1]->n);
    int k = 0;
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < lists[l]->n; i++) rlvr_text_printf(&t, "ok %d - %s\\n", ++k, lists[l]->items[i]);
    rlvr_text_printf(&t, "\"");
    return take_text(&t, &jt->tap);
}

static int read_repo_file(const redteam_jtask *jt, const char *rel, char **out) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", jt->task->repository_path, rel);
    return rlvr_fs_read_file(path, out, NULL);
}

int redteam_verify_task_new(rlvr_verify_task **out, rlvr_sandbox_host *host, const rlvr_task *t) {
    /* small limits: the timeouts and floods end quickly */
    rlvr_sandbox_limits lim;
    rlvr_sandbox_limits_default(&lim);
    lim.wall_s = 6;
    lim.cpu_s = 5;
    lim.memory_bytes = 256 << 20;
    lim.processes = 32;
    lim.file_bytes = 8 << 20;
    lim.output_bytes = 64 << 10;
    lim.tmp_bytes = 32 << 20;
    lim.disk_bytes = 32 << 20;
    RLVR_TRY(rlvr_harness_verify_task_new(out, host, t, &lim, 2));
    /* the untouched repository fails; this also makes the task's pooled
     * enclave, which then stays for every case */
    rlvr_enclave_verdict v = fixture_verify(*out, "", 0, 1);
    CHECK_MSG(v.verdict == RLVR_VERDICT_FAIL && v.reason == RLVR_REASON_TESTS_FAILED,
              "task %s untouched: %s/%s", t->id, rlvr_verdict_name(v.verdict), rlvr_reason_name(v.reason));
    rlvr_verify_task_settle(*out);
    return 0;
}

int redteam_jtask_new(redteam_jtask *jt, rlvr_sandbox_host *host, const char *dir, const char *scratch, bool loopback,
                      rlvr_split split, int difficulty) {
    memset(jt, 0, sizeof *jt);
    rlvr_task_gen_options o = RLVR_TASK_GEN_OPTIONS_INIT;
    o.family = "bugfix-c";
    o.seed = 20240611;
    o.split = split;
    o.difficulty = difficulty;
    o.compiler = "cc";
    RLVR_TRY(rlvr_task_gen_one(&jt->task, &o, 0, dir));
    jt->task->network = loopback; /* "network": "loopback": inet sockets in its sandboxes */
    const rlvr_task *t = jt->task;
    snprintf(jt->hidden, sizeof jt->hidden, "%s/%s", t->hidden_root_path, t->hidden_test_files.items[0]);
    RLVR_TRY(read_repo_file(jt, "lib.c", &jt->buggy));
    RLVR_TRY(read_repo_file(jt, "lib.h", &jt->header));
    RLVR_TRY(redteam_reference_file(jt->task, scratch, "lib.c", &jt->correct));
    RLVR_TRY(make_fixer(jt));
    RLVR_TRY(make_tap(jt));
    /* the public failing case's expected value, as the prompt gives it away */
    const char *e = strstr(t->prompt, "expected ");
    e = e ? e + 9 : strstr(t->prompt, "should return ");
    if (e && e[0] == 's') e += 14;
    snprintf(jt->guess, sizeof jt->guess, "%ld", e ? strtol(e, NULL, 10) : 0L);
    RLVR_TRY(redteam_verify_task_new(&jt->vt, host, t));
    CHECK(rlvr_verify_task_judged(jt->vt));
    jt->ready = true;
    return 0;
}

void redteam_jtask_free(redteam_jtask *jt) {
    rlvr_verify_task_free(jt->vt);
    rlvr_task_free(jt->task);
    free(jt->buggy);
    free(jt->header);
    free(jt->correct);
    free(jt->fixer);
    free(jt->dispatch);
    free(jt->tap);
    memset(jt, 0, sizeof *jt);
}
