/* tests/redteam/test_redteam_carry.c — state carried from one verification
 * to the next on a pooled enclave.
 *
 * A task's verifications share one pooled enclave, restored between them
 * (rlvr_sandbox_reset). If anything a run leaves in the kernel outlived
 * the reset, a patch that fixes nothing could learn the answers across
 * verifications: the code under test sees whether its last answer was
 * right (the judge restarts the runner only after a wrong one) and keeps
 * what it learnt where the next verification finds it. Every case here
 * runs on the pooled enclave of one generated bugfix-c task (judge mode,
 * redteam.h) and keeps the library's bug; the C code of the channels, the
 * learner included, is tests/redteam/carry_channels.c, read at run time
 * and appended to lib.c.
 *
 * - The learner: answers each call with a candidate (what the buggy
 *   library returns, then +1, -1, +2, -2, ...), and keeps "candidate c of
 *   this call is wrong" in every channel that holds facts (sockets in
 *   TIME_WAIT on 127.0.0.1 and ::1, read back from /proc/net/tcp(6) and by
 *   bind, System V and POSIX IPC objects, files in /tmp and /work). It must
 *   score 0 on LEARNER_TRIES consecutive verifications, each patch
 *   different by a comment.
 * - Its control: the same learner with a channel that does survive, the
 *   carrier outside the enclave (../enclave/carrier.h: a thread of this
 *   program serving a unix socket in a directory bound into the sandboxes
 *   as a system path).
 *   It must win within CONTROL_TRIES verifications: the right answers of
 *   the task's failing tests are a few candidates from the buggy values
 *   (1 and 3 below them: candidates 2 and 6, so it needs 7), so the
 *   learner would win if any channel carried its facts.
 * - One case per channel: a writer verification (the marker written,
 *   fails), then a reader verification whose patch holds the fixer behind
 *   a probe that is true only when the marker is found: it must fail with
 *   tests_failed. Its control writes and reads in one run and must pass (the
 *   reader would win if the channel carried over); where the write is
 *   refused even within a run (sysctls, names, addresses, routes, flags,
 *   page-cache eviction; sockets of the inet families where the enclave
 *   refuses them), the control is that the write is refused and the reader
 *   finds nothing. The page cache has one more control: evicted from
 *   outside, the reader wins (page_cache_control).
 * - The whole set twice: a task without a network, and one that asks for
 *   loopback, whose inet channels are written within a run and must be
 *   gone at the next verification.
 *
 * After every case the usual red-team checks hold (redteam.h). Flags, in
 * any order: --unprivileged (running as uid 65534), --copy (sandboxes copy
 * the snapshot instead of an overlay). */
#include "test.h"

#include "../enclave/fixture.h"
#include "../enclave/carrier.h"
#include "redteam.h"

#include "enclave/fsutil.h"
#include "enclave/gitrepo.h"
#include "enclave/reason.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* The channels' numbers, names and flags and their markers (the
 * functions are for the patches only: unused here). */
#define CARRY_DECLARATIONS_ONLY
#include "carry_channels.c"

#define LEARNER_TRIES 20
#define CONTROL_TRIES 40

/* ---- the patches ---------------------------------------------------------------------------------- */

typedef struct {
    redteam_jtask *jt;
    const char *channels; /* carry_channels.c */
    const char *scratch;
    redteam_target target;
    uint64_t seed;
} carry_env;

/* Scores the patch that makes lib.c `lib` (NULL: out of memory, a failed
 * check); the verdict. */
static rlvr_enclave_verdict verify_lib(carry_env *e, const redteam_expect *x, const char *lib) {
    rlvr_enclave_verdict v = {.verdict = RLVR_VERDICT_NONE};
    char *patch = NULL;
    size_t len = 0;
    fixture_edit edit = {EDIT_WRITE, "lib.c", lib, 0, 0};
    int rc = lib ? fixture_patch_repo(e->jt->task->repository_path, e->jt->task->base_commit, e->scratch, &edit, 1,
                                      &patch, &len)
                 : RLVR_ENOMEM;
    CHECK_MSG(rc == 0, "case \"%s\": building the patch: %s", x->name, rlvr_error_last());
    if (rc == 0) v = redteam_verify(&e->target, x, patch, len, false, e->seed++, 1);
    free(patch);
    return v;
}

/* lib.c: the buggy library, `defines`, the channels, the dispatch to the
 * library's own functions, then `code`. */
static char *lib_with(const carry_env *e, const char *defines, const char *code) {
    const char *parts[] = {e->jt->buggy, "\n/* ---- red team ---- */\n", defines, e->channels, e->jt->dispatch, code,
                           NULL};
    return redteam_concat(parts);
}

/* lib.c of a probe: the fixer answers only when `body` says true. */
static char *probe_with(const carry_env *e, const char *body) {
    return redteam_probe_lib(e->jt, e->channels, body, false);
}

/* ---- the learner and its control ------------------------------------------------------------------ */

/* The learner's lib.c for verification k with `carriers` (a mask of
 * channels) and, when `memory` is given, the carrier's socket. */
static char *learner_lib(const carry_env *e, int k, unsigned carriers, const char *memory) {
    char defines[PATH_MAX + 256], code[256];
    int n = snprintf(defines, sizeof defines, "/* the learner, verification %d */\n", k);
    if (memory) snprintf(defines + n, sizeof defines - (size_t)n, "#define CARRY_MEMORY_PATH \"%s\"\n", memory);
    snprintf(code, sizeof code,
             "__attribute__((constructor)) static void rt_learn(void) {\n    carry_learner(rt_lib_call, %#xu);\n}\n",
             carriers);
    return lib_with(e, defines, code);
}

static void learner(carry_env *e) {
    unsigned carriers = 0;
    for (int ch = 0; ch < CARRY_N; ch++)
        if (carry_channels[ch].flags & CARRY_FACTS) carriers |= 1u << ch;
    printf("the learner, keeping its facts in every channel that holds facts:\n");
    int won = 0;
    for (int k = 1; k <= LEARNER_TRIES && !won; k++) {
        char name[64];
        snprintf(name, sizeof name, "learner, verification %d of %d", k, LEARNER_TRIES);
        redteam_expect x = {.name = name, .verdict = RLVR_VERDICT_FAIL, .reason = RLVR_REASON_TESTS_FAILED};
        char *lib = learner_lib(e, k, carriers, NULL);
        rlvr_enclave_verdict v = verify_lib(e, &x, lib);
        free(lib);
        if (v.verdict == RLVR_VERDICT_PASS || v.verdict == RLVR_VERDICT_DROPPED) won = k;
    }
    CHECK_MSG(!won, "the learner won at verification %d: a channel carried what it learnt", won);
    if (!won) printf("the learner scored 0 on %d consecutive verifications\n", LEARNER_TRIES);
}

/* The same learner given a channel that does survive: the test's carrier
 * outside every sandbox (../enclave/carrier.h), bound in as a system path. */
static void learner_control(carry_env *e, const carrier *memory) {
    printf("control: the learner keeping its facts in the carrier outside the enclave:\n");
    int won = 0;
    for (int k = 1; k <= CONTROL_TRIES && !won; k++) {
        char name[64];
        snprintf(name, sizeof name, "control: learner with memory, verification %d", k);
        redteam_expect x = {.name = name, .verdict = RLVR_VERDICT_PASS, .not_yet = true};
        char *lib = learner_lib(e, k, 1u << CARRY_MEMORY, carrier_socket(memory));
        rlvr_enclave_verdict v = verify_lib(e, &x, lib);
        free(lib);
        if (v.verdict == RLVR_VERDICT_PASS) won = k;
    }
    CHECK_MSG(won, "the learner with a channel that survives did not win in %d verifications (%d facts, %d requests)",
              CONTROL_TRIES, carrier_facts(memory), carrier_requests(memory));
    CHECK_MSG(carrier_facts(memory) > 0, "the learner kept no fact in the carrier");
    if (won)
        printf("control: the learner won at verification %d with %d facts kept outside (%d requests)\n", won,
               carrier_facts(memory), carrier_requests(memory));
}

/* ---- one case per channel ------------------------------------------------------------------------ */

/* Whether the enclave's runs may open sockets of the inet families (the
 * patch answers correctly only if they may). */
static bool inet_allowed(carry_env *e) {
    redteam_expect x = {.name = "probe: inet sockets in the enclave", .verdict = RLVR_VERDICT_PASS, .not_yet = true};
    char *lib = probe_with(e, "    int s = socket(AF_INET, SOCK_STREAM, 0);\n    if (s >= 0) close(s);\n"
                              "    return s >= 0;\n");
    rlvr_enclave_verdict v = verify_lib(e, &x, lib);
    free(lib);
    printf("inet sockets in the enclave: %s\n", v.verdict == RLVR_VERDICT_PASS ? "allowed" : "refused");
    return v.verdict == RLVR_VERDICT_PASS;
}

static void channel(carry_env *e, int ch, bool inet) {
    unsigned marker = CARRY_MARKER(ch);
    bool refused = (carry_channels[ch].flags & CARRY_REFUSED) || ((carry_channels[ch].flags & CARRY_INET) && !inet);
    char name[160], code[512];
    printf("%s:\n", carry_channels[ch].name);

    /* the writer: leaves the marker once per run, then the buggy runner goes on */
    snprintf(name, sizeof name, "writer: %s", carry_channels[ch].name);
    snprintf(code, sizeof code,
             "__attribute__((constructor)) static void rt_write(void) {\n"
             "    int once = open(\"/tmp/rlvr-carry-writer\", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);\n"
             "    if (once >= 0) carry_write(%d, %#xu);\n}\n",
             ch, marker);
    redteam_expect x = {.name = name, .verdict = RLVR_VERDICT_FAIL, .reason = RLVR_REASON_TESTS_FAILED};
    char *lib = lib_with(e, "", code);
    verify_lib(e, &x, lib);
    free(lib);

    /* the reader: the fixer behind the marker */
    snprintf(name, sizeof name, "reader in the next verification");
    snprintf(code, sizeof code, "    return carry_read(%d, %#xu) == 1;\n", ch, marker);
    lib = probe_with(e, code);
    verify_lib(e, &x, lib);
    free(lib);

    /* the control: within one run the reader finds the marker, or the write is refused */
    if (refused) {
        snprintf(name, sizeof name, "control: write refused in its own run, none found");
        snprintf(code, sizeof code, "    return carry_write(%d, %#xu) != 0 && carry_read(%d, %#xu) == 0;\n", ch, marker,
                 ch, marker);
    } else {
        snprintf(name, sizeof name, "control: written and found in one run");
        snprintf(code, sizeof code, "    carry_write(%d, %#xu);\n    return carry_read(%d, %#xu) == 1;\n", ch, marker,
                 ch, marker);
    }
    x = (redteam_expect){.name = name, .verdict = RLVR_VERDICT_PASS};
    lib = probe_with(e, code);
    verify_lib(e, &x, lib);
    free(lib);
}

/* The page cache's control. A run's eviction is refused (the channel's own
 * control shows it within one run), so the reader is shown to win by
 * evicting the page from here, outside any sandbox, as a sandbox that let
 * runs evict would: with overlays the enclave reads the snapshot's own
 * pages, and the reader, verified next, must pass. Called directly, not
 * through redteam_verify, whose look at the snapshot before a case reads
 * every file back into the cache. With copies the enclave reads a copy
 * made at the reset (all of it cached): nothing to show. */
static void page_cache_control(carry_env *e) {
    if (!rlvr_sandbox_host_overlay(e->target.host)) {
        printf("control: the page cache (copies of the snapshot: every page of a copy is cached)\n");
        return;
    }
    char host_file[PATH_MAX], code[128];
    snprintf(host_file, sizeof host_file, "%s/%s", rlvr_verify_task_tree(e->jt->vt),
             CARRY_PAGE_FILE + strlen("/work/"));
    snprintf(code, sizeof code, "    return carry_read(%d, 0) == 1;\n", CARRY_PAGE_CACHE);
    char *lib = probe_with(e, code), *patch = NULL;
    size_t len = 0;
    fixture_edit edit = {EDIT_WRITE, "lib.c", lib, 0, 0};
    int rc = lib ? fixture_patch_repo(e->jt->task->repository_path, e->jt->task->base_commit, e->scratch, &edit, 1,
                                      &patch, &len)
                 : RLVR_ENOMEM;
    CHECK_MSG(rc == 0, "page cache control: %s", rlvr_error_last());
    /* written back first: a dirty page cannot be dropped */
    int fd = open(host_file, O_RDONLY | O_CLOEXEC);
    CHECK_MSG(fd >= 0 && fdatasync(fd) == 0 && posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0, "evicting %s",
              host_file);
    if (fd >= 0) close(fd);
    CHECK_MSG(carry_page_cached(host_file) == 0, "the control: %s stays cached on this file system", host_file);
    rlvr_enclave_verdict v = {.verdict = RLVR_VERDICT_NONE};
    if (rc == 0) CHECK_OK(rlvr_verify_patch(e->jt->vt, patch, len, false, e->seed++, &v));
    rlvr_verify_task_settle(e->jt->vt); /* as redteam_verify leaves it: the last run's supervisor reaped */
    CHECK_MSG(v.verdict == RLVR_VERDICT_PASS, "the page cache's control: the reader did not win (%s/%s)",
              rlvr_verdict_name(v.verdict), rlvr_reason_name(v.reason));
    printf("control: the page cache, evicted from outside: the reader %s\n", rlvr_verdict_name(v.verdict));
    char *back = NULL; /* the page cached again, as the snapshot's pages are */
    CHECK_OK(rlvr_fs_read_file(host_file, &back, NULL));
    free(back);
    free(patch);
    free(lib);
}

/* ---- main -------------------------------------------------------------------------------------- */

/* carry_channels.c: $RLVR_SOURCE_DIR/tests/redteam, or beside this file. */
static int read_channels(char **out) {
    const char *src = getenv("RLVR_SOURCE_DIR");
    char path[PATH_MAX];
    if (src && src[0]) snprintf(path, sizeof path, "%s/tests/redteam/carry_channels.c", src);
    else snprintf(path, sizeof path, "%.*s/carry_channels.c", (int)(strrchr(__FILE__, '/') - __FILE__), __FILE__);
    return rlvr_fs_read_file(path, out, NULL);
}

/* Every channel, the learner and (with `memory`) its control against one
 * task: the default (no inet sockets) or one that asks for loopback, where
 * the network channels are written in a run and must be gone at the next
 * verification (each has a network namespace of its own). */
static void attack(rlvr_sandbox_host *host, const redteam_dirs *dirs, const char *channels, bool loopback,
                   const carrier *memory) {
    redteam_jtask jt;
    int rc = redteam_jtask_new(&jt, host, dirs->files, dirs->scratch, loopback,
                               loopback ? RLVR_SPLIT_EVAL : RLVR_SPLIT_TRAIN, 1);
    CHECK_MSG(rc == 0, "task: %s", rlvr_error_last());
    if (rc != 0) return;
    printf("task %s: %zu + %zu tests, judge mode, one pooled enclave, network %s\n", jt.task->id,
           jt.task->fail_to_pass.n, jt.task->pass_to_pass.n, loopback ? "loopback" : "none");
    carry_env e = {.jt = &jt, .channels = channels, .scratch = dirs->scratch, .seed = loopback ? 8000 : 7000,
                   .target = {.task = jt.vt, .host = host, .files = dirs->files, .canary = dirs->canary,
                              .settle = memory ? carrier_settle_hook : NULL, .settle_ctx = (void *)memory}};
    bool inet = inet_allowed(&e);
    CHECK_MSG(inet == loopback, "inet sockets %s in a task with network %s", inet ? "allowed" : "refused",
              loopback ? "loopback" : "none");
    for (int ch = 0; ch < CARRY_N; ch++) channel(&e, ch, inet);
    page_cache_control(&e);
    learner(&e);
    if (memory) learner_control(&e, memory);
    redteam_jtask_free(&jt);
}

int main(int argc, char **argv) {
    /* the carrier's directory, bound into every sandbox (not under /tmp,
     * which every run covers with its own) */
    carrier *memory = NULL;
    char paths[PATH_MAX + 512];
    if (carrier_start(&memory, NULL) != 0) {
        fprintf(stderr, "test_redteam_carry: no carrier: %s\n", rlvr_error_last());
        return 1;
    }
    snprintf(paths, sizeof paths, "%s:%s", RLVR_SANDBOX_SYSTEM_PATHS, carrier_dir(memory));

    const char *name = NULL;
    rlvr_sandbox_host *host = NULL;
    int rc = redteam_start(argc, argv, "test_redteam_carry", paths, &name, &host);
    if (rc) return rc;
    CHECK_OK(rlvr_git_init());
    redteam_dirs dirs;
    rc = redteam_dirs_new(&dirs, "rlvr-redteam-carry-");
    CHECK_MSG(rc == 0, "%s", rlvr_error_last());
    char *channels = NULL;
    CHECK_OK(read_channels(&channels));
    if (rc == 0 && channels) {
        attack(host, &dirs, channels, false, memory);
        attack(host, &dirs, channels, true, NULL);
    }
    free(channels);
    redteam_check_host_clean(host);
    rlvr_sandbox_host_free(host);
    redteam_dirs_free(&dirs);
    carrier_stop(memory);
    printf("%d channels, a learner and its control\n", CARRY_N);
    return redteam_summary(name, test_checks, test_failures);
}
