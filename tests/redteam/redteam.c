#include "redteam.h"

#include "test.h"

#include "../enclave/fixture.h"

#include "core/log.h"
#include "core/sys.h"
#include "enclave/fsutil.h"
#include "enclave/reason.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

int redteam_start(int argc, char **argv, const char *program, const char **name, rlvr_sandbox_host **host) {
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
    rlvr_sandbox_host_options opt = RLVR_SANDBOX_HOST_OPTIONS_INIT;
    opt.overlay = !copy;
    int rc = rlvr_sandbox_host_new(host, &opt);
    CHECK_MSG(rc == 0, "host: %s", rlvr_error_last());
    if (rc) return redteam_summary(full, 0, 0);
    printf("sandbox host: %s\n", rlvr_sandbox_host_describe(*host));
    if (copy) CHECK_MSG(!rlvr_sandbox_host_overlay(*host), "--copy, but the sandboxes get an overlay");
    else if (!rlvr_sandbox_host_overlay(*host)) printf("  (no overlay on this kernel: copies in both modes)\n");
    return 0;
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
        for (size_t i = 0; i < 6; i++) h = (h ^ v[i]) * 1099511628211ull;
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
    uint64_t h = stamp_dir(1469598103934665603ull, cache);
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
    CHECK_MSG(v.verdict == x->verdict && (v.reason == x->reason || alt), "case \"%s\": %s/%s, expected %s/%s",
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
