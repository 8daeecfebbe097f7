/* bench/bench_enclave.c — `rlvr bench enclave`: what verifying a patch costs.
 *
 *   verify      one verification with a trivial hidden test: diff gate, a
 *               fresh enclave from the clean snapshot, applying a one-line
 *               patch (in the enclave), the test, the TAP judge. Median and
 *               p99 wall time for
 *                 overlay_pooled   the task's pooled enclave restored to the
 *                                  snapshot (a new copy-on-write layer)
 *                 overlay_fresh    a new sandbox (namespaces, root) per run
 *                 overlay_big      pooled, with a repository of 50 MB shaped
 *                                  like a source tree (≈ 3 300 files of
 *                                  1–64 KiB, log-uniform, 25 per directory)
 *                 copy_big         the same snapshot (work tree + .git)
 *                                  copied for every verification instead
 *                                  of the overlay
 *               The two big cases run cold: before each verification the
 *               snapshot's file contents are dropped from the page cache
 *               (posix_fadvise DONTNEED; a snapshot on tmpfs stays cached).
 *               against the ceiling of the same run: fork + exec of the same
 *               test command on the host without any isolation.
 *               Then a real bugfix-c task (the family's generator, tcc when
 *               installed), its reference patch verified on the pooled
 *               enclave two ways:
 *                 bugfix_command   command mode: the hidden test source in
 *                                  the tree, one command building the code
 *                                  under test and the harness and running it
 *                 bugfix_judge     judge mode (the family's own): the build
 *                                  of the code under test, then the judge
 *                                  built once per task, exec'd from its
 *                                  descriptor, one runner process per test
 *               and judge_build: what building a task's judge costs, once
 *               per verification task (median and p99 of its creation in
 *               judge mode less command mode).
 *               Then task environments (a SquashFS image of /bin/sh and
 *               its libraries, built here with mksquashfs; skipped with a
 *               note where it is missing), the same trivial test:
 *                 image_first      creating the verification task and its
 *                                  first verification on an image this
 *                                  process has not mounted yet (a copy per
 *                                  sample): the mount, its check, the
 *                                  sandbox and the run
 *                 image_pooled     later verifications on the mounted image,
 *                                  pooled enclave
 *                 image_fresh      later verifications, a new sandbox each
 *                                  (attaching its own tree of the mount)
 *   workspace_state
 *               what a branch point of Monte-Carlo credit costs on the
 *               bugfix-c task's repository (enclave/workspace.h): median
 *               and p99 seconds of
 *                 fresh        a new workspace (rlvr_workspace_new)
 *                 snapshot     rlvr_workspace_snapshot of a workspace that
 *                              edited three files and added one
 *                 restore      rlvr_workspace_restore of that state into a
 *                              fresh workspace (the restore alone)
 *                 new_restore  a new workspace and the restore together
 *               each with its ratio to `fresh`.
 *   throughput  verifications per second with one worker process per
 *               physical core (each with its own task and pooled enclave),
 *               against the ceiling's rate on as many cores.
 * --quick: 5 MB instead of 50 MB, fewer samples, 2 s of throughput.
 * Repositories go to $TMPDIR (or /tmp) and are removed afterwards. */
#include "bench/bench.h"
#include "core/fs.h"
#include "core/error.h"
#include "core/rng.h"
#include "core/sys.h"
#include "enclave/fsutil.h"
#include "enclave/gitrepo.h"
#include "enclave/verify.h"
#include "enclave/workspace.h"
#include "envs/gen.h"
#include "envs/harness.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define TRIVIAL_TEST "echo 1..1 >&${RLVR_RESULTS_FD:-1}; echo ok 1 - trivial >&${RLVR_RESULTS_FD:-1}"

static const char patch_text[] = "diff --git a/README b/README\n"
                                 "--- a/README\n"
                                 "+++ b/README\n"
                                 "@@ -1 +1 @@\n"
                                 "-hello\n"
                                 "+hello, enclave\n";

typedef struct {
    char config[64];
    double repo_mb;
    long tree_files;  /* files of the snapshot (work tree + .git) */
    double tree_mb;   /* and their megabytes */
    int samples;
    double median_ms, p99_ms, ceiling_ms, ratio;
} latency_row;

/* One case of the workspace-state part, in seconds. */
typedef struct {
    const char *config;
    int samples;
    double median_s, p99_s, ratio;
} state_row;

typedef struct {
    latency_row rows[12];
    int n;
    state_row states[4];
    int n_states;
    int64_t state_bytes, state_files; /* of the state the snapshot rows make */
    double judge_build_ms, judge_build_p99_ms; /* once per task */
    int judge_build_samples;
    double per_s, ceiling_per_s;
    int workers;
    double seconds;
    long verifications;
    bool quick;
} report;

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Percentile by the nearest-rank method. */
static double percentile(double *v, int n, double p) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    int k = (int)ceil(p * n) - 1;
    if (k < 0) k = 0;
    if (k >= n) k = n - 1;
    return v[k];
}

/* Size of the next file of a source-shaped tree: log-uniform between 1 and
 * 64 KiB (mean ≈ 15 KiB, like the files of a C or Python project). */
static size_t source_file_bytes(rlvr_rng_stream *s) {
    double u = (double)rlvr_rng_next_below(s, 1u << 20) / (double)(1u << 20);
    return (size_t)(1024.0 * exp(u * log(64.0)));
}

/* `mb` megabytes of text shaped like a source repository: files of
 * source_file_bytes() in directories of 25 (src/pNN/dNN/fNNN.txt), so a
 * copy pays what copying a real checkout pays per file, not just per byte. */
static int write_source_tree(const char *dir, double mb, uint64_t seed) {
    size_t max_bytes = 64 * 1024, total = 0, want = (size_t)(mb * 1e6);
    char *buf = malloc(max_bytes);
    if (!buf) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    rlvr_rng_stream s;
    rlvr_rng_stream_init(&s, seed, RLVR_RNG_TEST, 0, 0);
    int rc = 0;
    char path[PATH_MAX];
    for (int f = 0; rc == 0 && total < want; f++) {
        size_t n = source_file_bytes(&s);
        if (n > want - total) n = want - total;
        for (size_t i = 0; i < n; i++) buf[i] = (i % 80 == 79) ? '\n' : (char)('a' + rlvr_rng_next_below(&s, 26));
        int len = snprintf(path, sizeof path, "%s/src/p%02d/d%02d", dir, f / 250, f / 25 % 10);
        if (len < 0 || (size_t)len + 16 > sizeof path) rc = RLVR_FAIL(RLVR_EINVAL, "path too long under %s", dir);
        if (rc == 0 && f % 25 == 0) rc = rlvr_mkdir_p(path, 0755);
        if (rc == 0) {
            snprintf(path + len, sizeof path - (size_t)len, "/f%03d.txt", f % 25);
            rc = rlvr_fs_write_file(path, buf, n);
        }
        total += n;
    }
    free(buf);
    return rc;
}

/* A repository with README (what the bench patch edits) and, when mb > 0,
 * a source-shaped tree of `mb` megabytes; one commit. */
static int make_repo(const char *dir, double mb, uint64_t seed, char commit_hex[41]) {
    RLVR_TRY(rlvr_mkdir_p(dir, 0755));
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/README", dir) >= (int)sizeof path)
        return RLVR_FAIL(RLVR_EINVAL, "path too long: %s", dir);
    RLVR_TRY(rlvr_fs_write_file(path, "hello\n", 6));
    if (mb > 0) RLVR_TRY(write_source_tree(dir, mb, seed));
    return rlvr_git_init_commit_all(dir, "bench\n", commit_hex);
}

/* Files and megabytes of the tree nftw() walks (count_tree). */
static long tree_files;
static double tree_bytes;

static int count_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
    (void)path, (void)ftw;
    if (type == FTW_F && S_ISREG(st->st_mode)) {
        tree_files++;
        tree_bytes += (double)st->st_size;
    }
    return 0;
}

/* Drops a file's pages from the page cache (only clean pages of a
 * disk-backed file system can go; on tmpfs this does nothing). */
static int evict_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
    (void)ftw;
    if (type != FTW_F || !S_ISREG(st->st_mode)) return 0;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        close(fd);
    }
    return 0;
}

/* Makes the next verification start cold: the snapshot's file contents
 * leave the page cache, as on a node that has not touched the repository
 * yet. Directory entries and inodes stay cached. */
static void evict_tree(const char *dir) { nftw(dir, evict_entry, 32, FTW_PHYS); }

/* Files and megabytes under `dir`: the snapshot a copy has to copy. */
static void count_tree(const char *dir, long *files, double *mb) {
    tree_files = 0;
    tree_bytes = 0;
    if (nftw(dir, count_entry, 32, FTW_PHYS) != 0) tree_files = 0, tree_bytes = 0;
    *files = tree_files;
    *mb = tree_bytes / 1e6;
}

static void task_spec(rlvr_verify_spec *s, const char *repo, const char *commit, bool fresh) {
    memset(s, 0, sizeof *s);
    s->version = RLVR_VERIFY_SPEC_VERSION;
    s->repo_dir = repo;
    s->base_commit = commit;
    s->test_command = TRIVIAL_TEST;
    s->consensus_runs = 1;
    s->fresh_enclaves = fresh;
    rlvr_sandbox_limits_default(&s->limits);
    s->limits.wall_s = 30;
    s->limits.disk_bytes = (int64_t)512 << 20;
}

static void emit_latency(const report *rep, const latency_row *r);

/* Median and p99 of `samples` verifications of `patch` (after one warm-up). */
static int measure(rlvr_sandbox_host *host, const rlvr_verify_spec *spec, const char *patch, bool cold, int samples,
                   latency_row *row) {
    rlvr_verify_task *task = NULL;
    RLVR_TRY(rlvr_verify_task_new(&task, host, spec));
    double *t = calloc((size_t)samples, sizeof *t);
    int rc = t ? 0 : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    for (int i = -1; rc == 0 && i < samples; i++) {
        rlvr_enclave_verdict v;
        if (cold) evict_tree(rlvr_verify_task_tree(task));
        double t0 = rlvr_now();
        rc = rlvr_verify_patch(task, patch, strlen(patch), false, (uint64_t)(i + 1), &v);
        double dt = rlvr_now() - t0;
        if (rc == 0 && v.verdict != RLVR_VERDICT_PASS)
            rc = RLVR_FAIL(RLVR_ESANDBOX, "bench verification did not pass: %s (reason %d)", rlvr_verdict_name(v.verdict),
                           (int)v.reason);
        if (rc == 0 && i >= 0) t[i] = dt * 1e3;
    }
    if (rc == 0) {
        count_tree(rlvr_verify_task_tree(task), &row->tree_files, &row->tree_mb);
        row->samples = samples;
        row->median_ms = percentile(t, samples, 0.5);
        row->p99_ms = percentile(t, samples, 0.99);
    }
    free(t);
    rlvr_verify_task_free(task);
    return rc;
}

/* The task's verification spec in command mode: what a harness that
 * shares the enclave with the code under test does, one command. */
static void command_mode(rlvr_verify_spec *s, const rlvr_task *t, const char *compiler, char *cmd, size_t cap) {
    snprintf(cmd, cap,
             "%s >/dev/null && %s -std=c11 -O0 -w -o /tmp/judge tests/judge.c && exec /tmp/judge build/runner",
             t->hidden_build_command, compiler);
    s->test_command = cmd;
    s->judge_build = NULL;
    s->judge_argv = NULL;
    s->build_command = NULL;
}

/* The judge's build, once per task: creating the verification task in
 * judge mode less creating it in command mode, `samples` times each. Each
 * sample's build command differs by a shell comment, so none is served by
 * the host's judge cache (enclave/judge.h). */
static int judge_build_cost(rlvr_sandbox_host *host, const rlvr_verify_spec *judge, const rlvr_verify_spec *command,
                            int samples, report *rep) {
    double *d = calloc((size_t)samples, sizeof *d);
    if (!d) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    int rc = 0;
    for (int i = 0; rc == 0 && i < samples; i++) {
        double t[2];
        char build[4096];
        snprintf(build, sizeof build, "%s # sample %d", judge->judge_build, i);
        rlvr_verify_spec fresh = *judge;
        fresh.judge_build = build;
        for (int k = 0; rc == 0 && k < 2; k++) {
            rlvr_verify_task *task = NULL;
            double t0 = rlvr_now();
            rc = rlvr_verify_task_new(&task, host, k == 0 ? &fresh : command);
            t[k] = rlvr_now() - t0;
            rlvr_verify_task_free(task);
        }
        d[i] = (t[0] - t[1]) * 1e3;
    }
    if (rc == 0) {
        rep->judge_build_samples = samples;
        rep->judge_build_ms = percentile(d, samples, 0.5);
        rep->judge_build_p99_ms = percentile(d, samples, 0.99);
    }
    free(d);
    return rc;
}

/* The compiler bugfix-c tasks are built with here. */
static const char *bugfix_compiler(void) { return access("/usr/bin/tcc", X_OK) == 0 ? "tcc" : "cc"; }

/* A bugfix-c task of the family (its pool under `dir`). */
static int bugfix_task(rlvr_task **out, const char *dir) {
    rlvr_task_gen_options o = RLVR_TASK_GEN_OPTIONS_INIT;
    o.family = "bugfix-c";
    o.seed = 1;
    o.compiler = bugfix_compiler();
    char pool[PATH_MAX];
    snprintf(pool, sizeof pool, "%s/pool", dir);
    return rlvr_task_gen_one(out, &o, 0, pool);
}

/* The task verified in command and in judge mode. */
static int bugfix_cases(rlvr_sandbox_host *host, const rlvr_task *t, int samples, double ceil_ms, report *rep) {
    const char *compiler = bugfix_compiler();
    rlvr_sandbox_limits lim;
    rlvr_sandbox_limits_default(&lim);
    /* the spec the family's tasks get in training and evaluation */
    rlvr_verify_spec judge, command;
    rlvr_harness_verify_views views;
    int rc = rlvr_harness_verify_spec(&judge, &views, t, &lim, 1);
    command = judge;
    char cmd[2048];
    command_mode(&command, t, compiler, cmd, sizeof cmd);
    const char *configs[] = {"bugfix_command", "bugfix_judge"};
    for (int k = 0; rc == 0 && k < 2; k++) {
        latency_row *r = &rep->rows[rep->n];
        snprintf(r->config, sizeof r->config, "%s", configs[k]);
        r->ceiling_ms = ceil_ms;
        rc = measure(host, k == 0 ? &command : &judge, t->reference_patch, false, samples, r);
        if (rc == 0) {
            r->ratio = r->median_ms / ceil_ms;
            emit_latency(rep, r);
            rep->n++;
        }
    }
    if (rc == 0) rc = judge_build_cost(host, &judge, &command, samples / 2 > 5 ? samples / 2 : 5, rep);
    if (rc == 0) {
        printf("{\"bench\":\"enclave\",\"case\":\"judge_build\",\"config\":\"bugfix_judge\",\"compiler\":\"%s\","
               "\"samples\":%d,\"median_ms\":%.4g,\"p99_ms\":%.4g,\"quick\":%s}\n",
               compiler, rep->judge_build_samples, rep->judge_build_ms, rep->judge_build_p99_ms,
               rep->quick ? "true" : "false");
        fflush(stdout);
    }
    rlvr_harness_verify_views_free(&views);
    return rc;
}

/* ---- task environments ------------------------------------------------------------ */

/* A root of /bin/sh (the host's dash) and the libraries it loads, as
 * SquashFS image copies dir/image-K.sqfs for K < copies; RLVR_ENOTFOUND
 * where mksquashfs is missing. */
static int make_images(const char *dir, int copies) {
    if (access("/usr/bin/mksquashfs", X_OK) != 0)
        return RLVR_FAIL(RLVR_ENOTFOUND, "/usr/bin/mksquashfs is missing (Debian's squashfs-tools)");
    char cmd[3 * PATH_MAX];
    snprintf(cmd, sizeof cmd,
             "set -e; r='%s/image-root'; mkdir -p \"$r/usr/bin\" \"$r/usr/lib64\" \"$r/usr/lib/x86_64-linux-gnu\"; "
             "ln -s usr/bin \"$r/bin\"; ln -s usr/lib \"$r/lib\"; ln -s usr/lib64 \"$r/lib64\"; "
             "cp /bin/dash \"$r/usr/bin/sh\"; for l in $(ldd /bin/dash | awk '/=>/ {print $3} /^\\t\\// {print $1}'); "
             "do case $l in */ld-linux*) cp -L $l \"$r/usr/lib64/\" ;; *) cp -L $l \"$r/usr/lib/x86_64-linux-gnu/\" ;; "
             "esac; done; mksquashfs \"$r\" '%s/image-0.sqfs' -quiet -noappend -all-root -no-progress >/dev/null",
             dir, dir);
    if (system(cmd) != 0) return RLVR_FAIL(RLVR_EIO, "building the bench's environment image in %s", dir);
    for (int k = 1; k < copies; k++) {
        snprintf(cmd, sizeof cmd, "cp '%s/image-0.sqfs' '%s/image-%d.sqfs'", dir, dir, k);
        if (system(cmd) != 0) return RLVR_FAIL(RLVR_EIO, "copying the bench's environment image");
    }
    return 0;
}

/* image_first, image_pooled and image_fresh (see the top of the file). */
static int image_cases(rlvr_sandbox_host *host, const char *dir, const char *repo, const char *commit, int samples,
                       double ceil_ms, report *rep) {
    int firsts = samples / 3 > 5 ? samples / 3 : 5;
    int rc = make_images(dir, firsts);
    if (rc == RLVR_ENOTFOUND) {
        fprintf(stderr, "bench enclave: environment cases skipped: %s\n", rlvr_error_last());
        return 0;
    }
    char image[PATH_MAX];
    double *t = calloc((size_t)firsts, sizeof *t);
    if (rc == 0 && !t) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    latency_row *r = &rep->rows[rep->n];
    for (int k = 0; rc == 0 && k < firsts; k++) {
        snprintf(image, sizeof image, "%s/image-%d.sqfs", dir, k);
        rlvr_verify_spec spec;
        task_spec(&spec, repo, commit, false);
        spec.environment = image;
        rlvr_verify_task *task = NULL;
        rlvr_enclave_verdict v;
        double t0 = rlvr_now();
        rc = rlvr_verify_task_new(&task, host, &spec);
        if (rc == 0) rc = rlvr_verify_patch(task, patch_text, strlen(patch_text), false, 1, &v);
        t[k] = (rlvr_now() - t0) * 1e3;
        if (rc == 0 && v.verdict != RLVR_VERDICT_PASS)
            rc = RLVR_FAIL(RLVR_ESANDBOX, "bench verification in an image did not pass: %s (reason %d)",
                           rlvr_verdict_name(v.verdict), (int)v.reason);
        rlvr_verify_task_free(task);
    }
    if (rc == 0) {
        snprintf(r->config, sizeof r->config, "image_first");
        r->tree_files = rep->rows[0].tree_files; /* the small repository's, as the rows after it */
        r->tree_mb = rep->rows[0].tree_mb;
        r->samples = firsts;
        r->median_ms = percentile(t, firsts, 0.5);
        r->p99_ms = percentile(t, firsts, 0.99);
        r->ceiling_ms = ceil_ms;
        r->ratio = r->median_ms / ceil_ms;
        emit_latency(rep, r);
        rep->n++;
    }
    free(t);
    snprintf(image, sizeof image, "%s/image-0.sqfs", dir);
    const char *configs[] = {"image_pooled", "image_fresh"};
    for (int k = 0; rc == 0 && k < 2; k++) {
        r = &rep->rows[rep->n];
        snprintf(r->config, sizeof r->config, "%s", configs[k]);
        r->ceiling_ms = ceil_ms;
        rlvr_verify_spec spec;
        task_spec(&spec, repo, commit, k == 1);
        spec.environment = image;
        rc = measure(host, &spec, patch_text, false, samples, r);
        if (rc == 0) {
            r->ratio = r->median_ms / ceil_ms;
            emit_latency(rep, r);
            rep->n++;
        }
    }
    return rc;
}

/* ---- workspace states ------------------------------------------------------------ */

/* A fresh workspace of the task, as the harness makes one. */
static int task_workspace(rlvr_workspace **out, rlvr_sandbox_host *host, const rlvr_task *t, const char *const *pub) {
    rlvr_workspace_spec spec = {.version = RLVR_WORKSPACE_SPEC_VERSION, .repo_dir = t->repository_path,
                                .base_commit = t->base_commit, .public_tests = pub};
    rlvr_sandbox_limits_default(&spec.limits);
    return rlvr_workspace_new(out, host, &spec);
}

/* What the parent workspace changes before its snapshot: three files of the
 * tree (outside the read-only tests) edited, one added. */
#define STATE_EDITS                                                                                            \
    "for f in $(find . -path ./.git -prune -o -path ./tests -prune -o -type f -print | sort | head -3); do " \
    "echo '/* edited */' >> \"$f\" || exit 1; done; echo note > notes.txt"

static void state_row_set(state_row *r, const char *config, double *t, int samples) {
    r->config = config;
    r->samples = samples;
    r->median_s = percentile(t, samples, 0.5);
    r->p99_s = percentile(t, samples, 0.99);
}

/* `samples` of each workspace-state case, all in this run. */
static int workspace_state_cases(rlvr_sandbox_host *host, const rlvr_task *t, int samples, report *rep) {
    const char **pub = calloc(t->public_test_files.n + 1, sizeof *pub);
    double *times[4] = {calloc((size_t)samples, sizeof(double)), calloc((size_t)samples, sizeof(double)),
                        calloc((size_t)samples, sizeof(double)), calloc((size_t)samples, sizeof(double))};
    rlvr_workspace *parent = NULL;
    rlvr_workspace_state *st = NULL;
    int rc = pub && times[0] && times[1] && times[2] && times[3] ? 0 : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < t->public_test_files.n; i++) pub[i] = t->public_test_files.items[i];
    /* (a) a fresh workspace */
    for (int i = 0; rc == 0 && i < samples; i++) {
        rlvr_workspace *ws = NULL;
        double t0 = rlvr_now();
        rc = task_workspace(&ws, host, t, pub);
        times[0][i] = rlvr_now() - t0; /* as new_restore: without the free */
        rlvr_workspace_free(ws);
    }
    /* (b) snapshots of a workspace that changed a few files */
    if (rc == 0) rc = task_workspace(&parent, host, t, pub);
    if (rc == 0) {
        const char *argv[] = {"/bin/sh", "-c", STATE_EDITS, NULL};
        rlvr_sandbox_cmd cmd = {.version = RLVR_SANDBOX_CMD_VERSION, .argv = argv};
        rlvr_sandbox_result res;
        rc = rlvr_sandbox_exec(rlvr_workspace_sandbox(parent), &cmd, &res);
        if (rc == 0) {
            if (res.exit_code != 0) rc = RLVR_FAIL(RLVR_ESANDBOX, "the bench's edits in the workspace failed: %s", res.out);
            rlvr_sandbox_result_free(&res);
        }
    }
    for (int i = 0; rc == 0 && i < samples; i++) {
        rlvr_workspace_state_free(st);
        st = NULL;
        double t0 = rlvr_now();
        rc = rlvr_workspace_snapshot(parent, &st);
        times[1][i] = rlvr_now() - t0;
    }
    /* (c) the state restored into fresh workspaces */
    for (int i = 0; rc == 0 && i < samples; i++) {
        rlvr_workspace *ws = NULL;
        double t0 = rlvr_now();
        rc = task_workspace(&ws, host, t, pub);
        double t1 = rlvr_now();
        if (rc == 0) rc = rlvr_workspace_restore(ws, st);
        double t2 = rlvr_now();
        rlvr_workspace_free(ws);
        times[2][i] = t2 - t1;
        times[3][i] = t2 - t0;
    }
    if (rc == 0) {
        rlvr_workspace_state_stats stats;
        rlvr_workspace_state_stats_of(st, &stats);
        size_t len;
        rlvr_workspace_state_bytes(st, &len);
        rep->state_bytes = (int64_t)len;
        rep->state_files = stats.files;
        static const char *const configs[] = {"fresh", "snapshot", "restore", "new_restore"};
        for (int k = 0; k < 4; k++) state_row_set(&rep->states[k], configs[k], times[k], samples);
        rep->n_states = 4;
        for (int k = 0; k < 4; k++) {
            state_row *r = &rep->states[k];
            r->ratio = r->median_s / rep->states[0].median_s;
            printf("{\"bench\":\"enclave\",\"case\":\"workspace_state\",\"config\":\"%s\",\"state_bytes\":%lld,"
                   "\"state_files\":%lld,\"samples\":%d,\"median_s\":%.4g,\"p99_s\":%.4g,\"ratio\":%.4g,\"quick\":%s}\n",
                   r->config, (long long)rep->state_bytes, (long long)rep->state_files, r->samples, r->median_s,
                   r->p99_s, r->ratio, rep->quick ? "true" : "false");
        }
        fflush(stdout);
    }
    rlvr_workspace_state_free(st);
    rlvr_workspace_free(parent);
    for (int k = 0; k < 4; k++) free(times[k]);
    free(pub);
    return rc;
}

/* The ceiling: the same test command by fork + exec on the host. */
static int ceiling(int samples, double *median_ms) {
    double *t = calloc((size_t)samples, sizeof *t);
    if (!t) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    for (int i = 0; i < samples; i++) {
        double t0 = rlvr_now();
        pid_t p = fork();
        if (p < 0) {
            free(t);
            return rlvr_error_errno_at(__FILE__, __LINE__, "fork");
        }
        if (p == 0) {
            if (!freopen("/dev/null", "w", stdout)) _exit(126);
            execl("/bin/sh", "sh", "-c", TRIVIAL_TEST, (char *)NULL);
            _exit(127);
        }
        int st;
        waitpid(p, &st, 0);
        t[i] = (rlvr_now() - t0) * 1e3;
    }
    *median_ms = percentile(t, samples, 0.5);
    free(t);
    return 0;
}

/* `workers` processes verify for `seconds`; returns the total count. */
static int throughput(rlvr_sandbox_host *host, const char *repo, const char *commit, int workers, double seconds,
                      long *total) {
    *total = 0;
    int fds[2];
    if (pipe(fds) != 0) return rlvr_error_errno_at(__FILE__, __LINE__, "pipe");
    fflush(stdout);
    pid_t kids[64];
    if (workers > 64) workers = 64;
    for (int w = 0; w < workers; w++) {
        pid_t p = fork();
        if (p < 0) return rlvr_error_errno_at(__FILE__, __LINE__, "fork");
        kids[w] = p;
        if (p > 0) continue;
        close(fds[0]);
        rlvr_verify_spec spec;
        task_spec(&spec, repo, commit, false);
        rlvr_verify_task *task = NULL;
        long n = -1;
        if (rlvr_verify_task_new(&task, host, &spec) == 0) {
            n = 0;
            double end = rlvr_now() + seconds;
            while (rlvr_now() < end) {
                rlvr_enclave_verdict v;
                if (rlvr_verify_patch(task, patch_text, strlen(patch_text), false, (uint64_t)n, &v) != 0 ||
                    v.verdict != RLVR_VERDICT_PASS) {
                    n = -1;
                    break;
                }
                n++;
            }
            rlvr_verify_task_free(task);
        }
        ssize_t wr = write(fds[1], &n, sizeof n);
        _exit(wr == (ssize_t)sizeof n ? 0 : 1);
    }
    close(fds[1]);
    int rc = 0;
    for (int w = 0; w < workers; w++) {
        long n = -1;
        if (read(fds[0], &n, sizeof n) != (ssize_t)sizeof n || n < 0)
            rc = RLVR_FAIL(RLVR_ESANDBOX, "a throughput worker failed");
        else *total += n;
    }
    close(fds[0]);
    /* the workers only: the sandbox spawner is a child of this process too */
    for (int w = 0; w < workers; w++)
        while (waitpid(kids[w], NULL, 0) < 0 && errno == EINTR) {
        }
    return rc;
}

static void emit_latency(const report *rep, const latency_row *r) {
    printf("{\"bench\":\"enclave\",\"case\":\"verify\",\"config\":\"%s\",\"repo_mb\":%.3g,\"snapshot_files\":%ld,"
           "\"snapshot_mb\":%.4g,\"samples\":%d,\"median_ms\":%.4g,\"p99_ms\":%.4g,\"ceiling_ms\":%.4g,\"ratio\":%.4g,"
           "\"quick\":%s}\n",
           r->config, r->repo_mb, r->tree_files, r->tree_mb, r->samples, r->median_ms, r->p99_ms, r->ceiling_ms, r->ratio,
           rep->quick ? "true" : "false");
    fflush(stdout);
}

int rlvr_bench_enclave(const rlvr_bench_options *opt) {
    report rep;
    memset(&rep, 0, sizeof rep);
    rep.quick = opt->quick;
    double big_mb = opt->quick ? 5 : 50;
    int samples = opt->quick ? 15 : 100, big_samples = opt->quick ? 5 : 20;
    rep.seconds = opt->quick ? 2 : 10;
    rep.workers = rlvr_physical_cores();

    RLVR_TRY(rlvr_git_init());
    const char *base = getenv("TMPDIR");
    char *dir = NULL;
    RLVR_TRY(rlvr_fs_mkdtemp(&dir, base && base[0] ? base : "/tmp", "rlvr-bench-enclave-"));
    chmod(dir, 0755);
    char small[PATH_MAX], big[PATH_MAX], small_commit[41], big_commit[41];
    snprintf(small, sizeof small, "%s/small", dir);
    snprintf(big, sizeof big, "%s/big", dir);
    rlvr_sandbox_host *overlay = NULL, *copy = NULL;
    rlvr_sandbox_host_options ho = RLVR_SANDBOX_HOST_OPTIONS_INIT;
    int rc = make_repo(small, 0, 1, small_commit);
    if (rc == 0) rc = make_repo(big, big_mb, 2, big_commit);
    if (rc == 0) rc = rlvr_sandbox_host_new(&overlay, &ho);
    ho.overlay = false;
    if (rc == 0) rc = rlvr_sandbox_host_new(&copy, &ho);
    if (rc == 0) {
        printf("{\"bench\":\"enclave\",\"case\":\"host\",\"config\":\"%s\",\"quick\":%s}\n",
               rlvr_sandbox_host_describe(overlay), rep.quick ? "true" : "false");
        fflush(stdout);
    }
    double ceil_ms = 0;
    if (rc == 0) rc = ceiling(samples, &ceil_ms);
    struct {
        const char *config;
        rlvr_sandbox_host *host;
        const char *repo, *commit;
        double mb;
        bool fresh, cold;
        int samples;
    } cases[] = {
        {"overlay_pooled", overlay, small, small_commit, 0, false, false, samples},
        {"overlay_fresh", overlay, small, small_commit, 0, true, false, samples},
        /* both big cases start every verification with the snapshot's
         * pages out of the page cache */
        {"overlay_big", overlay, big, big_commit, big_mb, false, true, big_samples},
        {"copy_big", copy, big, big_commit, big_mb, false, true, big_samples},
    };
    for (size_t i = 0; rc == 0 && i < sizeof cases / sizeof *cases; i++) {
        latency_row *r = &rep.rows[rep.n];
        snprintf(r->config, sizeof r->config, "%s", cases[i].config);
        r->repo_mb = cases[i].mb;
        r->ceiling_ms = ceil_ms;
        rlvr_verify_spec spec;
        task_spec(&spec, cases[i].repo, cases[i].commit, cases[i].fresh);
        rc = measure(cases[i].host, &spec, patch_text, cases[i].cold, cases[i].samples, r);
        if (rc == 0) {
            r->ratio = r->median_ms / ceil_ms;
            emit_latency(&rep, r);
            rep.n++;
        }
    }
    if (rc == 0) rc = image_cases(overlay, dir, small, small_commit, samples, ceil_ms, &rep);
    rlvr_task *bugfix = NULL;
    if (rc == 0) rc = bugfix_task(&bugfix, dir);
    if (rc == 0) rc = bugfix_cases(overlay, bugfix, samples, ceil_ms, &rep);
    if (rc == 0) rc = workspace_state_cases(overlay, bugfix, opt->quick ? 8 : 50, &rep);
    rlvr_task_free(bugfix);
    if (rc == 0) rc = throughput(overlay, small, small_commit, rep.workers, rep.seconds, &rep.verifications);
    if (rc == 0) {
        rep.per_s = (double)rep.verifications / rep.seconds;
        rep.ceiling_per_s = rep.workers * 1e3 / ceil_ms;
        double copy_vs_overlay = rep.n >= 4 ? rep.rows[3].median_ms / rep.rows[2].median_ms : 0;
        double first_vs_later = 0;
        for (int i = 0; i + 1 < rep.n; i++)
            if (strcmp(rep.rows[i].config, "image_first") == 0)
                first_vs_later = rep.rows[i].median_ms / rep.rows[i + 1].median_ms;
        printf("{\"bench\":\"enclave\",\"case\":\"throughput\",\"config\":\"overlay_pooled\",\"workers\":%d,"
               "\"seconds\":%.3g,\"verifications\":%ld,\"per_s\":%.4g,\"ceiling_per_s\":%.4g,\"ratio\":%.4g,"
               "\"copy_vs_overlay\":%.4g,\"quick\":%s}\n",
               rep.workers, rep.seconds, rep.verifications, rep.per_s, rep.ceiling_per_s, rep.per_s / rep.ceiling_per_s,
               copy_vs_overlay, rep.quick ? "true" : "false");
        fflush(stdout);
        if (!opt->json_only) {
            printf("\n%-16s %8s %15s %8s %10s %10s %12s %7s\n", "verify", "repo MB", "snapshot files", "samples",
                   "median ms", "p99 ms", "ceiling ms", "ratio");
            for (int i = 0; i < rep.n; i++) {
                const latency_row *r = &rep.rows[i];
                printf("%-16s %8.3g %15ld %8d %10.2f %10.2f %12.2f %7.2f\n", r->config, r->repo_mb, r->tree_files,
                       r->samples, r->median_ms, r->p99_ms, r->ceiling_ms, r->ratio);
            }
            printf("cold copy of the %.3g MB repository vs the overlay: %.1fx slower\n", big_mb, copy_vs_overlay);
            if (first_vs_later > 0)
                printf("an environment image's first verification (its mount) vs the later ones: %.1fx\n",
                       first_vs_later);
            printf("judge build, once per task: median %.2f ms, p99 %.2f ms (%d samples)\n", rep.judge_build_ms,
                   rep.judge_build_p99_ms, rep.judge_build_samples);
            printf("\n%-16s %8s %12s %12s %7s   (state: %lld files, %lld bytes)\n", "workspace state", "samples",
                   "median ms", "p99 ms", "ratio", (long long)rep.state_files, (long long)rep.state_bytes);
            for (int i = 0; i < rep.n_states; i++) {
                const state_row *r = &rep.states[i];
                printf("%-16s %8d %12.2f %12.2f %7.2f\n", r->config, r->samples, r->median_s * 1e3, r->p99_s * 1e3,
                       r->ratio);
            }
            printf("throughput: %.1f verifications/s on %d workers (ceiling %.1f/s, ratio %.2f)\n", rep.per_s,
                   rep.workers, rep.ceiling_per_s, rep.per_s / rep.ceiling_per_s);
            printf("sandbox host: %s\n", rlvr_sandbox_host_describe(overlay));
        }
    }
    rlvr_sandbox_host_free(overlay);
    rlvr_sandbox_host_free(copy);
    rlvr_fs_remove_tree(dir);
    free(dir);
    return rc;
}
