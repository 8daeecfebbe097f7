/* tests/enclave/test_fingerprint.c — a run in a pooled enclave after many
 * verifications must be indistinguishable from a run in a fresh enclave.
 *
 * A pooled enclave (one per task, restored with rlvr_sandbox_reset between
 * verifications) that kept anything of an earlier verification would let
 * code under test learn across verifications (tests/redteam/
 * test_redteam_carry.c attacks that). The helper program `fingerprint`
 * (tests/enclave/fingerprint.c) prints everything a run can observe of its
 * kernel surroundings, one field per line; its `write` mode writes a mark
 * into every channel a run could leave one in
 * (tests/redteam/carry_channels.c). A copy of it sits in a directory the
 * sandbox host binds into its sandboxes (a system path: the same absolute
 * path inside), so a run can exec it.
 *
 * "Fresh" here is the first run of a brand-new sandbox made with
 * rlvr_sandbox_new from the same options verify.c gives the task's
 * enclaves (kind ENCLAVE, the task's snapshot exported the same way, the
 * same read-only paths, limits and network), before anything else ran in
 * it: what a verification in a new enclave would see. (An enclave that
 * was reset once is not fresh in this sense: comparing two reset enclaves
 * would miss a reset that changes what a new enclave looks like.)
 *
 *   F_fresh   the fingerprint of that fresh sandbox;
 *   F0        the pooled enclave of a verify task of the same fixture after
 *             one verification, reset (rlvr_verify_task_enclave);
 *   F_pooled  the same enclave after N more verifications of a patch whose
 *             calc.sh runs `fingerprint write` first (each patch differs by
 *             a comment), reset again.
 * F_pooled must equal F_fresh field by field; every difference is printed
 * (field, both values) and fails the test. Namespace ids are compared as
 * what they say: "earlier" when the run is in the namespace of that kind
 * that the pooled enclave's holder had when F0 was taken, "own" when not (a
 * fresh sandbox's namespaces are all its own). The kernel reuses the id of
 * a namespace that is gone, so the test holds the holder's namespaces open
 * (/proc/HOLDER/ns/KIND) from F0 to the comparison: an equal id is then the
 * same namespace. The user namespace is left out: the holder keeps it for
 * the sandbox's life by design (the one mapped id; what a user namespace
 * holds, keyrings, is refused by seccomp). F0 itself must see the held
 * network, UTS and user namespaces as "earlier" (its run joined them).
 *
 * And a check that the fingerprint sees the channels at all: in another
 * brand-new sandbox, `write` then `fingerprint` in the same run must differ
 * from F_fresh in the sockets in TIME_WAIT, the loopback counters, the
 * abstract socket, the IPC objects, /tmp, /work and the processes.
 *
 * Usage: test_fingerprint HELPER [--copy] [--unprivileged] */
#include "test.h"
#include "fixture.h"

#include "core/log.h"
#include "enclave/fsutil.h"
#include "enclave/gitrepo.h"
#include "enclave/reason.h"
#include "enclave/sandbox.h"
#include "enclave/verify.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

/* Verifications of the writer before the pooled fingerprint. */
#define N_WRITES 25


/* ---- fingerprints -------------------------------------------------------------------------- */

typedef struct {
    char *text;   /* the helper's output, split in place */
    char **field; /* field names, in the output's order */
    char **value;
    size_t n;
    size_t *sorted; /* indices by field name */
} fprint;

static const fprint *sort_target;

static int by_field(const void *a, const void *b) {
    return strcmp(sort_target->field[*(const size_t *)a], sort_target->field[*(const size_t *)b]);
}

/* The value of a field, or NULL. */
static const char *fp_get(const fprint *f, const char *name) {
    size_t lo = 0, hi = f->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(f->field[f->sorted[mid]], name);
        if (c == 0) return f->value[f->sorted[mid]];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

static void fp_free(fprint *f) {
    free(f->text);
    free(f->field);
    free(f->value);
    free(f->sorted);
    memset(f, 0, sizeof *f);
}

/* Runs `argv` in the sandbox (reset first when `reset`) and parses what it
 * printed as fields. */
static int fp_take(rlvr_sandbox *sb, bool reset, const char *const *argv, fprint *out, const char *what) {
    memset(out, 0, sizeof *out);
    if (reset) CHECK_OK(rlvr_sandbox_reset(sb));
    rlvr_sandbox_cmd cmd = {.version = RLVR_SANDBOX_CMD_VERSION, .argv = argv};
    rlvr_sandbox_result res;
    int rc = rlvr_sandbox_exec(sb, &cmd, &res);
    CHECK_MSG(rc == 0, "%s: %s", what, rlvr_error_last());
    if (rc != 0) return -1;
    CHECK_MSG(res.exit_code == 0 && !res.out_truncated && res.limit == RLVR_LIMIT_NONE,
              "%s: exit %d, limit %s, %s output:\n%.2000s", what, res.exit_code, rlvr_sandbox_limit_name(res.limit),
              res.out_truncated ? "truncated" : "whole", res.out);
    out->text = res.out;
    res.out = NULL;
    rlvr_sandbox_result_free(&res);
    size_t cap = 1;
    for (const char *p = out->text; *p; p++) cap += *p == '\n';
    out->field = calloc(cap, sizeof *out->field);
    out->value = calloc(cap, sizeof *out->value);
    out->sorted = calloc(cap, sizeof *out->sorted);
    if (!out->field || !out->value || !out->sorted) return -1;
    for (char *line = out->text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        char *tab = strchr(line, '\t');
        CHECK_MSG(tab != NULL, "%s: a line without a field: %s", what, line);
        if (!tab) continue;
        *tab = '\0';
        out->field[out->n] = line;
        out->value[out->n] = tab + 1;
        out->sorted[out->n] = out->n;
        out->n++;
    }
    sort_target = out;
    qsort(out->sorted, out->n, sizeof *out->sorted, by_field);
    for (size_t i = 1; i < out->n; i++)
        CHECK_MSG(strcmp(out->field[out->sorted[i - 1]], out->field[out->sorted[i]]) != 0, "%s: field %s twice",
                  what, out->field[out->sorted[i]]);
    printf("%s: %zu fields\n", what, out->n);
    return 0;
}

/* The namespaces of a process, held open (so that their ids are not
 * reused), with their ids as /proc shows them ("net:[4026532531]"). */
#define N_NS 10
static const char *const ns_kinds[N_NS] = {"cgroup", "ipc", "mnt", "net", "pid", "pid_for_children", "time",
                                           "time_for_children", "user", "uts"};
typedef struct {
    int fd[N_NS];
    char id[N_NS][64];
} held_ns;

static void hold_namespaces(held_ns *h, pid_t pid) {
    for (int k = 0; k < N_NS; k++) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/ns/%s", (int)pid, ns_kinds[k]);
        h->fd[k] = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = readlink(path, h->id[k], sizeof h->id[k] - 1);
        CHECK_MSG(h->fd[k] >= 0 && n > 0, "holding %s: %s", path, strerror(errno));
        h->id[k][n > 0 ? n : 0] = '\0';
    }
}

static void release_namespaces(held_ns *h) {
    for (int k = 0; k < N_NS; k++)
        if (h->fd[k] >= 0) close(h->fd[k]);
}

/* Namespace ids as what they say of the run (see the top). */
static void fp_namespaces(fprint *f, const held_ns *h) {
    static char own[] = "own", earlier[] = "earlier", kept[] = "(the holder's, kept by design)";
    for (size_t i = 0; i < f->n; i++) {
        if (strncmp(f->field[i], "ns ", 3) != 0) continue;
        const char *v = own;
        for (int k = 0; k < N_NS; k++)
            if (strcmp(f->field[i] + 3, ns_kinds[k]) == 0 && strcmp(f->value[i], h->id[k]) == 0) v = earlier;
        f->value[i] = strcmp(f->field[i], "ns user") == 0 ? kept : (char *)v;
    }
}

/* Prints every field whose value differs (or that only one has); returns
 * how many. */
static int fp_compare(const fprint *a, const char *a_name, const fprint *b, const char *b_name) {
    int diffs = 0;
    for (size_t i = 0; i < a->n; i++) {
        const char *other = fp_get(b, a->field[i]);
        if (other && strcmp(other, a->value[i]) == 0) continue;
        if (++diffs <= 80)
            printf("  field %s: %s \"%s\" %s %s%s%s\n", a->field[i], a_name, a->value[i], b_name, other ? "\"" : "",
                   other ? other : "(none)", other ? "\"" : "");
    }
    for (size_t i = 0; i < b->n; i++) {
        if (fp_get(a, b->field[i])) continue;
        if (++diffs <= 80)
            printf("  field %s: %s (none) %s \"%s\"\n", b->field[i], a_name, b_name, b->value[i]);
    }
    if (diffs > 80) printf("  ... %d differences in all\n", diffs);
    return diffs;
}

/* True when some field starting with `prefix` differs between a and b. */
static bool fp_differs(const fprint *a, const fprint *b, const char *prefix) {
    size_t n = strlen(prefix);
    for (int k = 0; k < 2; k++) {
        const fprint *x = k ? b : a, *y = k ? a : b;
        for (size_t i = 0; i < x->n; i++) {
            if (strncmp(x->field[i], prefix, n) != 0) continue;
            const char *other = fp_get(y, x->field[i]);
            if (!other || strcmp(other, x->value[i]) != 0) return true;
        }
    }
    return false;
}

/* ---- the sandboxes ------------------------------------------------------------------------------ */

/* A brand-new sandbox as verify.c would make the fixture task's enclave:
 * its own snapshot, exported the same way (the base commit with the hidden
 * files in one commit), the same read-only paths (the hidden files, then
 * the public tests), limits and network. */
static rlvr_sandbox *fresh_sandbox(rlvr_sandbox_host *host, const fixture *f, rlvr_snapshot **snap) {
    static const char *const readonly[] = {"tests/hidden/run.sh", "tests/public", NULL};
    char tree[41];
    rlvr_sandbox *sb = NULL;
    *snap = NULL;
    CHECK_OK(rlvr_snapshot_new(snap, host));
    if (!*snap) return NULL;
    CHECK_OK(rlvr_git_export(f->repo, f->base, rlvr_snapshot_path(*snap), false, f->hidden, tree));
    CHECK_OK(rlvr_snapshot_seal(*snap));
    rlvr_sandbox_options opt = {.version = RLVR_SANDBOX_OPTIONS_VERSION, .kind = RLVR_SANDBOX_ENCLAVE,
                                .tree = *snap, .readonly = readonly, .limits = f->spec.limits,
                                .network = f->spec.network};
    CHECK_OK(rlvr_sandbox_new(&sb, host, &opt));
    return sb;
}

/* The writer's patch: calc.sh runs `HELPER write` before its job (the
 * bug stays: the patch fails), with a comment that makes each patch
 * differ. */
static int writer_patch(const fixture *f, const char *helper, int k, char **patch, size_t *len) {
    char calc[2048], text[PATH_MAX + 4096];
    if (fixture_sh_calc(calc, sizeof calc, "a + b") != 0) return -1;
    const char *body = strchr(calc, '\n') + 1;
    snprintf(text, sizeof text, "#!/bin/sh\n# writer, verification %d\n%s write >/dev/null 2>&1\n%s", k, helper, body);
    fixture_edit e = {EDIT_WRITE, "src/calc.sh", text, 0, 0};
    return fixture_patch(f, &e, 1, patch, len);
}

/* A copy of the helper in a new directory under /var/tmp (not /tmp, which
 * every run covers with its own): its path in *helper, the directory's in
 * *dir. */
static int copy_helper(const char *built, char **dir, char *helper, size_t cap) {
    RLVR_TRY(rlvr_fs_mkdtemp(dir, "/var/tmp", "rlvr-fingerprint-"));
    chmod(*dir, 0755);
    char *bytes = NULL;
    size_t n = 0;
    RLVR_TRY(rlvr_fs_read_file(built, &bytes, &n));
    snprintf(helper, cap, "%s/fingerprint", *dir);
    int rc = rlvr_fs_write_file(helper, bytes, n);
    free(bytes);
    if (rc == 0 && chmod(helper, 0755) != 0) rc = rlvr_error_errno_at(__FILE__, __LINE__, "chmod %s", helper);
    return rc;
}

int main(int argc, char **argv) {
    rlvr_log_init_from_env();
    bool copy = false, unprivileged = false;
    const char *built = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--copy") == 0) copy = true;
        else if (strcmp(argv[i], "--unprivileged") == 0) unprivileged = true;
        else built = argv[i];
    }
    if (!built) {
        fprintf(stderr, "usage: %s HELPER [--copy] [--unprivileged]\n", argv[0]);
        return 2;
    }
    char name[96];
    snprintf(name, sizeof name, "test_fingerprint%s%s", copy ? " --copy" : "", unprivileged ? " --unprivileged" : "");
    if (unprivileged) CHECK(geteuid() != 0);

    char *dir = NULL, helper[PATH_MAX], paths[PATH_MAX + 512];
    CHECK_OK(copy_helper(built, &dir, helper, sizeof helper));
    if (!dir) return test_summary(name);
    snprintf(paths, sizeof paths, "%s:%s", RLVR_SANDBOX_SYSTEM_PATHS, dir);
    rlvr_sandbox_host *host = NULL;
    CHECK_OK(fixture_host_paths(&host, !copy, paths));
    fixture f;
    CHECK_OK(fixture_create(&f, FIXTURE_SH, NULL));
    if (!host || !f.root) return test_summary(name);
    f.spec.limits.output_bytes = 4 << 20; /* a fingerprint is some 100 KiB */
    f.spec.limits.processes = 64;         /* the writer's daemons */
    /* the task asks for inet sockets on loopback, as the fresh sandboxes do:
     * then the writer reaches every network channel (sockets in TIME_WAIT,
     * counters), and the reset must still leave nothing of them */
    f.spec.network = RLVR_SANDBOX_NET_LOOPBACK;

    const char *fingerprint[] = {helper, "fingerprint", NULL};
    const char *write_then_fingerprint[] = {"/bin/sh", "-c", "\"$0\" write && \"$0\" fingerprint", helper, NULL};
    fprint f_fresh = {0}, f0 = {0}, f_pooled = {0}, w = {0};

    /* F0: the pooled enclave after one verification; its holder is the
     * spawner's one child, and its namespaces are held from now on */
    rlvr_verify_task *vt = NULL;
    CHECK_OK(rlvr_verify_task_new(&vt, host, &f.spec));
    rlvr_enclave_verdict v = vt ? fixture_verify(vt, "", 0, 1) : (rlvr_enclave_verdict){0};
    CHECK(v.verdict == RLVR_VERDICT_FAIL);
    rlvr_sandbox *pooled = vt ? rlvr_verify_task_enclave(vt) : NULL;
    CHECK_MSG(pooled != NULL, "no pooled enclave after a verification");
    if (pooled) fp_take(pooled, true, fingerprint, &f0, "F0 (the pooled enclave after one verification)");
    held_ns held;
    memset(&held, -1, sizeof held.fd);
    pid_t holder[4];
    if (vt) rlvr_verify_task_settle(vt);
    int n_holders = fixture_children(rlvr_sandbox_host_spawner(host), holder, 4);
    CHECK_MSG(n_holders == 1, "%d children of the spawner, expected the pooled enclave's holder", n_holders);
    if (n_holders == 1) hold_namespaces(&held, holder[0]);
    if (f0.n && n_holders == 1) {
        fp_namespaces(&f0, &held);
        static const char *const joined[] = {"ns net", "ns uts", "ns time"};
        for (size_t i = 0; i < sizeof joined / sizeof *joined; i++)
            CHECK_MSG(fp_get(&f0, joined[i]) && strcmp(fp_get(&f0, joined[i]), "earlier") == 0,
                      "F0's %s is not the holder's", joined[i]);
    }

    /* F_fresh */
    rlvr_snapshot *snap = NULL, *wsnap = NULL;
    rlvr_sandbox *fresh = fresh_sandbox(host, &f, &snap);
    if (fresh) fp_take(fresh, false, fingerprint, &f_fresh, "F_fresh (a brand-new sandbox's first run)");

    /* the writer within its own run: the fingerprint sees the channels */
    rlvr_sandbox *wsb = fresh_sandbox(host, &f, &wsnap);
    if (wsb && fp_take(wsb, false, write_then_fingerprint, &w, "write, then fingerprint in the same run") == 0) {
        for (size_t i = 0; i < w.n; i++)
            if (strncmp(w.field[i], "write ", 6) == 0) printf("  %s: %s\n", w.field[i], w.value[i]);
        const char *inet = fp_get(&w, "inet sockets");
        CHECK_MSG(inet && strcmp(inet, "ok") == 0, "inet sockets in the writer's sandbox: %s", inet ? inet : "?");
        static const char *const seen[] = {
            "/proc/net/tcp line",     "/proc/net/tcp6 line",    "/proc/net/dev line",  "/proc/net/snmp line",
            "/proc/net/netstat line", "/proc/net/sockstat line", "/proc/net/unix line", "/proc/sysvipc/shm line",
            "/proc/sysvipc/msg line", "/proc/sysvipc/sem line", "mqueue ",             "bind tcp 127.0.0.1 ",
            "bind udp 127.0.0.1 ",    "bind tcp ::1 ",          "bind unix ",          "/tmp/",
            "/work/",                 "process ",
        };
        for (size_t i = 0; i < sizeof seen / sizeof *seen; i++)
            CHECK_MSG(fp_differs(&w, &f_fresh, seen[i]), "the fingerprint does not see the writer's \"%s\" fields",
                      seen[i]);
    }
    rlvr_sandbox_free(fresh);
    rlvr_sandbox_free(wsb);
    rlvr_snapshot_free(snap);
    rlvr_snapshot_free(wsnap);

    /* F_pooled */
    int failed = 0;
    for (int k = 0; pooled && k < N_WRITES; k++) {
        char *patch = NULL;
        size_t len = 0;
        CHECK_OK(writer_patch(&f, helper, k, &patch, &len));
        v = fixture_verify(vt, patch, len, 100 + (uint64_t)k);
        failed += v.verdict == RLVR_VERDICT_FAIL && v.reason == RLVR_REASON_TESTS_FAILED;
        free(patch);
    }
    CHECK_MSG(failed == N_WRITES, "%d of %d writer verifications failed with tests_failed", failed, N_WRITES);
    if (pooled && rlvr_verify_task_enclave(vt) == pooled)
        fp_take(pooled, true, fingerprint, &f_pooled, "F_pooled (the same enclave after the writer's verifications)");
    else
        CHECK_MSG(false, "the pooled enclave was replaced");

    /* the comparison */
    if (f_fresh.n && f_pooled.n && n_holders == 1) {
        fp_namespaces(&f_fresh, &held);
        fp_namespaces(&f_pooled, &held);
        int diffs = fp_compare(&f_fresh, "fresh", &f_pooled, "pooled");
        CHECK_MSG(diffs == 0, "%d fields of the pooled enclave differ from a fresh one", diffs);
        if (diffs == 0) printf("F_pooled equals F_fresh (%zu fields)\n", f_fresh.n);
    }

    fp_free(&f_fresh);
    fp_free(&f0);
    fp_free(&f_pooled);
    fp_free(&w);
    release_namespaces(&held);
    rlvr_verify_task_free(vt);
    CHECK(fixture_count_children(rlvr_sandbox_host_spawner(host)) == 0);
    rlvr_sandbox_host_free(host);
    fixture_free(&f);
    rlvr_fs_remove_tree(dir);
    free(dir);
    return test_summary(name);
}
