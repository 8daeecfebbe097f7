/* tests/enclave/test_flat.c — 10 000 verifications in a row leave open
 * descriptors, mounts, child processes, scratch entries and resident memory
 * flat (docs/ENCLAVE.md "What the tests show"). Each verification is cheap (a one-line TAP
 * test, the real path otherwise: gate, restored enclave, prepare, run,
 * judge); RLVR_FLAT_N overrides the count. Label: slow. */
#include "test.h"

#include "fixture.h"

#include "core/log.h"
#include "core/sys.h"
#include "enclave/reason.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

static int count_lines(const char *path) {
    FILE *f = fopen(path, "re");
    if (!f) return -1;
    int n = 0, c;
    while ((c = fgetc(f)) != EOF) n += c == '\n';
    fclose(f);
    return n;
}

static long rss_kb(void) {
    FILE *f = fopen("/proc/self/status", "re");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1) break;
    if (f) fclose(f);
    return kb;
}

typedef struct {
    int fds, mounts, children, grandchildren, scratch;
    long rss_kb;
} sample;

static sample take(rlvr_sandbox_host *host) {
    sample s;
    s.fds = fixture_count_entries("/proc/self/fd");
    s.mounts = count_lines("/proc/self/mountinfo");
    s.children = fixture_count_children(rlvr_sandbox_host_spawner(host));
    s.grandchildren = fixture_count_grandchildren(rlvr_sandbox_host_spawner(host));
    s.scratch = fixture_count_entries(rlvr_sandbox_host_scratch(host));
    s.rss_kb = rss_kb();
    return s;
}

int main(void) {
    rlvr_log_init_from_env();
    int n = 10000;
    if (getenv("RLVR_FLAT_N")) n = atoi(getenv("RLVR_FLAT_N"));
    if (n < 200) n = 200;
    rlvr_sandbox_host *host = NULL;
    int rc = rlvr_sandbox_host_new(&host, NULL);
    CHECK_MSG(rc == 0, "host: %s", rlvr_error_last());
    fixture f;
    if (rc == 0) rc = fixture_create(&f, FIXTURE_SH, NULL);
    CHECK_MSG(rc == 0, "fixture: %s", rlvr_error_last());
    if (rc) return test_summary("test_flat");
    f.spec.test_command = "echo 1..1 >&3; echo ok 1 - trivial >&3";
    f.spec.fail_to_pass = NULL;
    f.spec.pass_to_pass = NULL;
    f.spec.test_order = NULL;
    f.spec.consensus_runs = 1;
    rlvr_verify_task *task = NULL;
    CHECK_OK(rlvr_verify_task_new(&task, host, &f.spec));
    if (!task) return test_summary("test_flat");
    /* a real (small) patch: the prepare step applies it every time */
    const char *patch = "diff --git a/README b/README\nindex 0000000..1111111 100644\n--- a/README\n+++ b/README\n"
                        "@@ -1 +1 @@\n-A tiny calculator. `mul` is wrong.\n+A tiny calculator.\n";
    int warmup = n / 10, checkpoints = 10, passes = 0;
    sample base = {0}, last = {0};
    double t0 = rlvr_now();
    for (int i = 0; i < n; i++) {
        rlvr_enclave_verdict v;
        rc = rlvr_verify_patch(task, patch, strlen(patch), false, (uint64_t)i, &v);
        if (rc != 0 || v.verdict != RLVR_VERDICT_PASS) {
            CHECK_MSG(0, "verification %d: rc %d verdict %s reason %s: %s", i, rc, rlvr_verdict_name(v.verdict),
                      rlvr_reason_name(v.reason), rlvr_error_last());
            break;
        }
        passes++;
        bool sample_now = i + 1 == warmup || (i + 1 > warmup && (i + 1) % (n / checkpoints) == 0);
        if (sample_now) rlvr_verify_task_settle(task); /* the last run's supervisor may still be exiting */
        if (i + 1 == warmup) base = take(host);
        if (i + 1 > warmup && (i + 1) % (n / checkpoints) == 0) {
            last = take(host);
            printf("%6d verifications, %.1f ms each: fds %d mounts %d children %d (+%d) scratch %d rss %ld kB\n", i + 1,
                   1e3 * (rlvr_now() - t0) / (i + 1), last.fds, last.mounts, last.children, last.grandchildren,
                   last.scratch, last.rss_kb);
            fflush(stdout);
            CHECK_MSG(last.fds == base.fds, "descriptors grew: %d -> %d", base.fds, last.fds);
            CHECK_MSG(last.mounts == base.mounts, "mounts grew: %d -> %d", base.mounts, last.mounts);
            CHECK_MSG(last.children == base.children && last.children == 1, "children: %d -> %d", base.children,
                      last.children);
            CHECK_MSG(last.grandchildren == 0, "the pooled enclave kept %d processes", last.grandchildren);
            CHECK_MSG(last.scratch == base.scratch, "scratch entries grew: %d -> %d", base.scratch, last.scratch);
            /* allocator noise is allowed, growth with the count is not */
            CHECK_MSG(last.rss_kb - base.rss_kb < 2048, "resident memory grew by %ld kB", last.rss_kb - base.rss_kb);
        }
    }
    CHECK(passes == n);
    printf("%d verifications in %.1f s\n", passes, rlvr_now() - t0);
    rlvr_verify_task_free(task);
    fixture_free(&f);
    sample end = take(host);
    CHECK(end.children == 0 && end.scratch == 0);
    rlvr_sandbox_host_free(host);
    return test_summary("test_flat");
}
