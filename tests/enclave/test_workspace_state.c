/* tests/enclave/test_workspace_state.c — snapshots of a workspace and their
 * restore into fresh workspaces (enclave/workspace.h "snapshots of a
 * workspace at a turn boundary"): what a state captures, that a restore
 * reproduces it exactly, that forks are isolated from each other and from
 * their parent, what is stripped, the archive parser's refusals (in the
 * runtime and inside the sandbox) and the size cap. Runs as root (ctest) and
 * with --unprivileged under setpriv as uid 65534; every scenario with
 * overlayfs snapshots and with copied ones. */
#include "test.h"
#include "fixture.h"

#include "core/log.h"
#include "enclave/workspace.h"

#include <stdint.h>
#include <unistd.h>

static rlvr_sandbox_host *host;
static fixture fx;

static rlvr_workspace *new_ws(int64_t disk_bytes) {
    rlvr_workspace_spec spec = {.version = RLVR_WORKSPACE_SPEC_VERSION, .repo_dir = fx.repo, .base_commit = fx.base,
                                .public_tests = fx.spec.public_tests};
    rlvr_sandbox_limits_default(&spec.limits);
    if (disk_bytes) spec.limits.disk_bytes = disk_bytes;
    rlvr_workspace *ws = NULL;
    CHECK_OK(rlvr_workspace_new(&ws, host, &spec));
    return ws;
}

/* Runs `sh -c script` in /work; its output (caller frees), "" on failure. */
static char *sh(rlvr_workspace *ws, const char *script) {
    const char *argv[] = {"/bin/sh", "-c", script, NULL};
    rlvr_sandbox_cmd cmd = {.version = RLVR_SANDBOX_CMD_VERSION, .argv = argv};
    rlvr_sandbox_result r;
    int rc = rlvr_sandbox_exec(rlvr_workspace_sandbox(ws), &cmd, &r);
    CHECK_MSG(rc == 0, "exec: %s", rlvr_error_last());
    if (rc != 0) return strdup("");
    CHECK_MSG(r.exit_code == 0, "`%s` exited %d: %s", script, r.exit_code, r.out);
    char *out = r.out;
    r.out = NULL;
    rlvr_sandbox_result_free(&r);
    return out;
}

static rlvr_workspace_state *snap(rlvr_workspace *ws) {
    rlvr_workspace_state *st = NULL;
    CHECK_OK(rlvr_workspace_snapshot(ws, &st));
    return st;
}

/* Whether a snapshot of `ws` now equals `st`. */
static bool snapshot_equals(rlvr_workspace *ws, const rlvr_workspace_state *st) {
    rlvr_workspace_state *now = snap(ws);
    bool eq = now && st && rlvr_workspace_state_equal(now, st);
    rlvr_workspace_state_free(now);
    return eq;
}

/* ---- hand-made archives (docs/FORMATS.md "Workspace state") ----------------------- */

typedef struct {
    unsigned char b[4096];
    size_t n;
    uint64_t files, dirs, deleted, bytes;
} archive;

static void le(archive *a, uint64_t v, int width) {
    for (int i = 0; i < width; i++) a->b[a->n++] = (unsigned char)(v >> (8 * i));
}

static void ar_start(archive *a) {
    memset(a, 0, sizeof *a);
    memcpy(a->b, "RLVR-STATE 1\n", 13);
    a->n = 13;
}

static void ar_entry(archive *a, char kind, uint32_t mode, const char *path, size_t path_len, const char *data, size_t size) {
    a->b[a->n++] = (unsigned char)kind;
    le(a, mode, 4);
    le(a, path_len, 4);
    le(a, size, 8);
    memcpy(a->b + a->n, path, path_len);
    a->n += path_len;
    memcpy(a->b + a->n, data, size);
    a->n += size;
    if (kind == 'F') a->files++, a->bytes += size;
    if (kind == 'D') a->dirs++;
    if (kind == 'X') a->deleted++;
}

static void ar_end(archive *a, uint64_t stripped) {
    a->b[a->n++] = 'E';
    le(a, a->files, 8);
    le(a, a->dirs, 8);
    le(a, a->deleted, 8);
    le(a, a->bytes, 8);
    le(a, stripped, 8);
}

/* ---- scenarios --------------------------------------------------------------------- */

/* A fresh workspace, and one whose commands only read, are the pristine
 * tree: an empty state, identical either way. */
static void test_empty(void) {
    rlvr_workspace *ws = new_ws(0);
    if (!ws) return;
    rlvr_workspace_state *a = snap(ws);
    free(sh(ws, "cat README src/calc.c >/dev/null; ls -la >/dev/null"));
    rlvr_workspace_state *b = snap(ws);
    if (a && b) {
        CHECK(rlvr_workspace_state_empty(a) && rlvr_workspace_state_empty(b));
        rlvr_workspace_state_stats s;
        rlvr_workspace_state_stats_of(a, &s);
        CHECK(s.files == 0 && s.dirs == 0 && s.deleted == 0 && s.bytes == 0 && s.stripped == 0);
        size_t len;
        rlvr_workspace_state_bytes(a, &len);
        CHECK_MSG(len == 13 + 41, "an empty archive has %zu bytes", len);
    }
    rlvr_workspace_state_free(a);
    rlvr_workspace_state_free(b);
    rlvr_workspace_free(ws);
}

/* Every kind of change the rollout can make to files and directories. */
static const char *const rollout =
    "printf 'calc\\n*.o\\n' > .gitignore && "                       /* edit */
    "echo note > notes.txt && "                                      /* new file */
    "printf 'a\\000b\\377\\000' > bin.dat && "                       /* binary, NUL bytes */
    "echo odd > \"$(printf 'odd\\nname')\" && "                      /* a newline in a name */
    "mkdir -p newdir/sub newdir/empty && echo deep > newdir/sub/deep.txt && " /* new directories */
    "rm Makefile && "                                                /* deleted file */
    "rm -r src && "                                                  /* deleted directory */
    "chmod 600 .git/HEAD && "                                        /* mode change only */
    "rm README && mkdir README && echo inside > README/inside.txt && " /* file -> directory */
    "mkdir locked && echo secret > locked/secret.txt && chmod 000 locked/secret.txt && chmod 500 locked";

/* What a workspace after `rollout` shows: contents, modes, absences. */
static const char *const inspect =
    "cat .gitignore notes.txt \"$(printf 'odd\\nname')\" newdir/sub/deep.txt README/inside.txt; "
    "od -An -c bin.dat | tr -s ' '; ls newdir/empty | wc -l; "
    "stat -c '%a %F' .git/HEAD locked locked/secret.txt README; "
    "test -e Makefile || echo no-Makefile; test -e src || echo no-src";
static const char *const inspect_expect =
    "calc\n*.o\nnote\nodd\ndeep\ninside\n a \\0 b 377 \\0\n0\n"
    "600 regular file\n500 directory\n0 regular file\n755 directory\nno-Makefile\nno-src\n";

static void test_changes_and_forks(void) {
    rlvr_workspace *parent = new_ws(0);
    if (!parent) return;
    free(sh(parent, rollout));
    rlvr_workspace_state *st = snap(parent);
    if (!st) {
        rlvr_workspace_free(parent);
        return;
    }
    rlvr_workspace_state_stats s;
    rlvr_workspace_state_stats_of(st, &s);
    /* files: .gitignore notes.txt bin.dat odd\nname deep.txt .git/HEAD inside.txt secret.txt;
     * dirs: newdir newdir/sub newdir/empty README locked; deleted: Makefile src README */
    CHECK_MSG(s.files == 8 && s.dirs == 5 && s.deleted == 3 && s.stripped == 0,
              "files %lld dirs %lld deleted %lld stripped %lld", (long long)s.files, (long long)s.dirs,
              (long long)s.deleted, (long long)s.stripped);
    CHECK(!rlvr_workspace_state_empty(st));
    /* deterministic: a second snapshot of the same files is the same bytes */
    CHECK(snapshot_equals(parent, st));
    size_t len;
    const void *bytes = rlvr_workspace_state_bytes(st, &len);
    char *copy = malloc(len);
    memcpy(copy, bytes, len);
    /* the bytes read back are the same state */
    rlvr_workspace_state *back = NULL;
    CHECK_OK(rlvr_workspace_state_from_bytes(&back, bytes, len));
    CHECK(back && rlvr_workspace_state_equal(back, st));
    rlvr_workspace_state_free(back);

    char *seen = sh(parent, inspect);
    CHECK_MSG(strcmp(seen, inspect_expect) == 0, "parent: %s", seen);
    free(seen);

    /* restored into fresh workspaces of the same task: the same files */
    rlvr_workspace *forks[3] = {0};
    for (int i = 0; i < 3; i++) {
        forks[i] = new_ws(0);
        if (!forks[i]) continue;
        CHECK_OK(rlvr_workspace_restore(forks[i], st));
        CHECK_MSG(snapshot_equals(forks[i], st), "fork %d differs from the state", i);
        seen = sh(forks[i], inspect);
        CHECK_MSG(strcmp(seen, inspect_expect) == 0, "fork %d: %s", i, seen);
        free(seen);
    }
    if (forks[0] && forks[1] && forks[2]) {
        /* one fork rewrites every file it can in place (a shared inode
         * would carry that to its siblings), then deletes everything */
        free(sh(forks[0], "chmod -R u+rwx /work 2>/dev/null; "
                          "find /work -type f -exec sh -c 'echo evil > \"$1\"' _ {} \\; 2>/dev/null; "
                          "find /work -mindepth 1 -delete 2>/dev/null; echo evil > /work/evil.txt; true"));
        char *left = sh(forks[0], "find /work -type f | sort");
        CHECK_MSG(strcmp(left, "/work/evil.txt\n/work/tests/public/run.sh\n") == 0, "left in the fork: %s", left);
        free(left);
        /* the parent keeps writing after the snapshot */
        free(sh(parent, "echo later > README/inside.txt && rm notes.txt && echo more > more.txt"));
        for (int i = 1; i < 3; i++) {
            CHECK_MSG(snapshot_equals(forks[i], st), "fork %d changed with its sibling or parent", i);
            seen = sh(forks[i], inspect);
            CHECK_MSG(strcmp(seen, inspect_expect) == 0, "fork %d after its sibling: %s", i, seen);
            free(seen);
        }
        CHECK(!snapshot_equals(parent, st));
        /* the parent's own files are its own: untouched by the forks */
        seen = sh(parent, "cat README/inside.txt more.txt .gitignore; test -e notes.txt || echo no-notes; test -e evil.txt || echo no-evil");
        CHECK_MSG(strcmp(seen, "later\nmore\ncalc\n*.o\nno-notes\nno-evil\n") == 0, "parent: %s", seen);
        free(seen);
    }
    const void *after = rlvr_workspace_state_bytes(st, &len);
    CHECK(after == bytes && memcmp(after, copy, len) == 0);
    free(copy);
    for (int i = 0; i < 3; i++) rlvr_workspace_free(forks[i]);
    rlvr_workspace_state_free(st);
    rlvr_workspace_free(parent);
}

/* Links, FIFOs and devices are stripped; a hard link is carried as a copy. */
static void test_stripping(void) {
    rlvr_workspace *ws = new_ws(0);
    if (!ws) return;
    char *out = sh(ws, "ln -s /etc/passwd link_out && ln -s README link_in && mkfifo fifo && "
                       "echo data > orig && ln orig hard && "
                       "(mknod dev c 1 3 2>/dev/null && echo MKNOD-OK || echo MKNOD-REFUSED)");
    bool mknod_ok = strstr(out, "MKNOD-OK") != NULL;
    /* no CAP_MKNOD in a sandbox */
    CHECK_MSG(strstr(out, "MKNOD-REFUSED"), "mknod: %s", out);
    free(out);
    rlvr_workspace_state *st = snap(ws);
    if (st) {
        rlvr_workspace_state_stats s;
        rlvr_workspace_state_stats_of(st, &s);
        CHECK_MSG(s.stripped == 3 + (mknod_ok ? 1 : 0) && s.files == 2 && s.bytes == 10 && s.dirs == 0 && s.deleted == 0,
                  "stripped %lld files %lld bytes %lld", (long long)s.stripped, (long long)s.files, (long long)s.bytes);
        rlvr_workspace *fork = new_ws(0);
        if (fork) {
            CHECK_OK(rlvr_workspace_restore(fork, st));
            out = sh(fork, "for f in link_out link_in fifo dev; do test -e $f || test -L $f || echo no-$f; done; "
                           "cat orig hard; stat -c %h orig hard");
            CHECK_MSG(strcmp(out, "no-link_out\nno-link_in\nno-fifo\nno-dev\ndata\ndata\n1\n1\n") == 0, "fork: %s", out);
            free(out);
            rlvr_workspace_free(fork);
        }
    }
    rlvr_workspace_state_free(st);
    rlvr_workspace_free(ws);
}

/* A state over RLVR_WORKSPACE_STATE_MAX_BYTES is refused, saying so. */
static void test_cap(void) {
    rlvr_workspace *ws = new_ws((int64_t)64 << 20);
    if (!ws) return;
    free(sh(ws, "head -c 17000000 /dev/zero > big"));
    rlvr_workspace_state *st = NULL;
    int rc = rlvr_workspace_snapshot(ws, &st);
    CHECK_MSG(rc == RLVR_ELIMIT && st == NULL, "rc %d: %s", rc, rlvr_error_last());
    CHECK_MSG(strstr(rlvr_error_last(), "bytes a state may carry"), "message: %s", rlvr_error_last());
    /* under the cap again: a state */
    free(sh(ws, "rm big && head -c 1000000 /dev/zero > big"));
    st = snap(ws);
    if (st) {
        rlvr_workspace_state_stats s;
        rlvr_workspace_state_stats_of(st, &s);
        CHECK(s.files == 1 && s.bytes == 1000000);
    }
    rlvr_workspace_state_free(st);
    rlvr_workspace_free(ws);
}

/* A tree 300 directories deep is carried; a path over the 4 000 bytes an
 * archive carries is RLVR_ELIMIT. */
static void test_depth(void) {
    rlvr_workspace *ws = new_ws(0);
    rlvr_workspace *fork = new_ws(0);
    if (!ws || !fork) {
        rlvr_workspace_free(ws);
        rlvr_workspace_free(fork);
        return;
    }
    free(sh(ws, "p=deep; for i in $(seq 300); do p=$p/d; done; mkdir -p $p && echo bottom > $p/f"));
    rlvr_workspace_state *st = snap(ws);
    if (st) {
        rlvr_workspace_state_stats s;
        rlvr_workspace_state_stats_of(st, &s);
        CHECK(s.dirs == 301 && s.files == 1);
        CHECK_OK(rlvr_workspace_restore(fork, st));
        char *out = sh(fork, "cat deep/$(seq -s/ 300 | sed 's/[0-9]*/d/g')/f");
        CHECK_MSG(strcmp(out, "bottom\n") == 0, "deep file: %s", out);
        free(out);
        CHECK(snapshot_equals(fork, st));
    }
    rlvr_workspace_state_free(st);
    /* 19 names of 210 bytes: 4 008 bytes */
    free(sh(ws, "n=$(printf '%0210d' 0); p=$n; for i in $(seq 18); do p=$p/$n; done; mkdir -p $p"));
    st = NULL;
    int rc = rlvr_workspace_snapshot(ws, &st);
    CHECK_MSG(rc == RLVR_ELIMIT && !st && strstr(rlvr_error_last(), "longer than"), "rc %d: %s", rc, rlvr_error_last());
    rlvr_workspace_state_free(st);
    rlvr_workspace_free(ws);
    rlvr_workspace_free(fork);
}

static void expect_format_error(const void *data, size_t len, const char *what, const char *message) {
    rlvr_workspace_state *st = NULL;
    int rc = rlvr_workspace_state_from_bytes(&st, data, len);
    CHECK_MSG(rc == RLVR_EFORMAT && st == NULL, "%s: rc %d", what, rc);
    if (message) CHECK_MSG(strstr(rlvr_error_last(), message), "%s: %s", what, rlvr_error_last());
    rlvr_workspace_state_free(st);
}

/* A well-formed state of one entry that the restore into `ws` refuses,
 * naming `message`. */
static void refused_entry(rlvr_workspace *ws, char kind, uint32_t mode, const char *path, const char *data,
                          const char *message) {
    archive a;
    ar_start(&a);
    ar_entry(&a, kind, mode, path, strlen(path), data, strlen(data));
    ar_end(&a, 0);
    rlvr_workspace_state *st = NULL;
    CHECK_OK(rlvr_workspace_state_from_bytes(&st, a.b, a.n));
    if (!st) return;
    int rc = rlvr_workspace_restore(ws, st);
    CHECK_MSG(rc == RLVR_ESANDBOX && strstr(rlvr_error_last(), message), "%s: rc %d: %s", path, rc, rlvr_error_last());
    rlvr_workspace_state_free(st);
}

/* The parser refuses every malformed archive, in the runtime and inside the
 * sandbox, before anything is written. */
static void test_parser(void) {
    archive a;
    ar_start(&a);
    ar_entry(&a, 'F', 0644, "first.txt", 9, "one\n", 4);
    ar_entry(&a, 'X', 0, "Makefile", 8, "", 0);
    ar_entry(&a, 'D', 0755, "d", 1, "", 0);
    ar_entry(&a, 'F', 0600, "d/x", 3, "two\0", 4);
    ar_end(&a, 2);
    rlvr_workspace_state *st = NULL;
    CHECK_OK(rlvr_workspace_state_from_bytes(&st, a.b, a.n));
    if (st) {
        rlvr_workspace_state_stats s;
        rlvr_workspace_state_stats_of(st, &s);
        CHECK(s.files == 2 && s.dirs == 1 && s.deleted == 1 && s.bytes == 8 && s.stripped == 2);
    }
    rlvr_workspace_state_free(st);
    /* every prefix is truncated */
    for (size_t n = 0; n < a.n; n++) expect_format_error(a.b, n, "prefix", NULL);
    /* a byte more */
    unsigned char more[4200];
    memcpy(more, a.b, a.n);
    more[a.n] = 0;
    expect_format_error(more, a.n + 1, "trailing byte", "trailer");
    /* the first entry's path length and content length, and the trailer's
     * counts, each set wrong */
    static const struct {
        size_t at;
        unsigned char value;
        const char *message;
    } flips[] = {
        {13 + 5, 0xff, "runs past the end"}, {13 + 5 + 3, 0x80, "runs past the end"}, {13 + 5, 8, NULL},
        {13 + 9, 5, NULL},                   {13 + 9 + 7, 0x01, "runs past the end"}, {13, 'Q', "unknown entry kind"},
        {13 + 2, 0xff, "mode"},              {0, 'X', "header"},
    };
    for (size_t i = 0; i < sizeof flips / sizeof *flips; i++) {
        memcpy(more, a.b, a.n);
        more[flips[i].at] = flips[i].value;
        expect_format_error(more, a.n, "flipped field", flips[i].message);
    }
    memcpy(more, a.b, a.n);
    more[a.n - 41 + 1] ^= 1; /* the trailer's file count */
    expect_format_error(more, a.n, "trailer count", "counts disagree");
    /* paths that leave /work or are not plain */
    static const char *const bad[] = {"../x", "a/../b", "/etc/passwd", "a//b", "a/", "./a", "a/.", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        archive b;
        ar_start(&b);
        ar_entry(&b, 'F', 0644, bad[i], strlen(bad[i]), "x", 1);
        ar_end(&b, 0);
        expect_format_error(b.b, b.n, bad[i], "path");
    }
    archive nul;
    ar_start(&nul);
    ar_entry(&nul, 'F', 0644, "a\0b", 3, "x", 1);
    ar_end(&nul, 0);
    expect_format_error(nul.b, nul.n, "NUL in a path", "NUL");
    archive dcontent;
    ar_start(&dcontent);
    ar_entry(&dcontent, 'D', 0755, "d", 1, "x", 1);
    dcontent.files++, dcontent.dirs--; /* counts as the bytes claim */
    ar_end(&dcontent, 0);
    expect_format_error(dcontent.b, dcontent.n, "content in a directory", NULL);

    /* inside: an archive whose path was changed after the runtime's check
     * (the check bypassed on purpose) is refused whole by the restore */
    rlvr_workspace *ws = new_ws(0);
    if (!ws) return;
    archive c;
    ar_start(&c);
    ar_entry(&c, 'F', 0644, "first.txt", 9, "one\n", 4);
    ar_entry(&c, 'F', 0644, "ab/x", 4, "evil", 4);
    ar_end(&c, 0);
    st = NULL;
    CHECK_OK(rlvr_workspace_state_from_bytes(&st, c.b, c.n));
    if (st) {
        size_t len;
        char *raw = (char *)rlvr_workspace_state_bytes(st, &len);
        char *path = memmem(raw, len, "ab/x", 4);
        CHECK(path != NULL);
        if (path) memcpy(path, "../x", 4);
        int rc = rlvr_workspace_restore(ws, st);
        CHECK_MSG(rc == RLVR_ESANDBOX && strstr(rlvr_error_last(), "'..' component"), "rc %d: %s", rc, rlvr_error_last());
        char *out = sh(ws, "test -e first.txt && echo APPLIED; test -e ../x && echo ESCAPED; true");
        CHECK_MSG(strcmp(out, "") == 0, "a refused archive was applied: %s", out);
        free(out);
    }
    rlvr_workspace_state_free(st);
    /* a state touching the public tests (read-only here, so never changed in
     * a parent) is an error, not skipped */
    refused_entry(ws, 'F', 0644, "tests/public/run.sh", "exit 0\n", "tests/public/run.sh");
    /* a deletion of a path the pristine tree does not have: another task's state */
    refused_entry(ws, 'X', 0, "no-such-file", "", "no-such-file");
    rlvr_workspace_free(ws);
}

static void scenario(bool overlay) {
    int rc = fixture_host(&host, overlay);
    CHECK_MSG(rc == 0, "host: %s", rlvr_error_last());
    if (rc) return;
    test_empty();
    test_changes_and_forks();
    test_stripping();
    test_cap();
    test_depth();
    test_parser();
    rlvr_sandbox_host_free(host);
    host = NULL;
}

int main(int argc, char **argv) {
    rlvr_log_init_from_env();
    bool unprivileged = argc > 1 && strcmp(argv[argc - 1], "--unprivileged") == 0;
    if (unprivileged) CHECK(geteuid() != 0);
    int rc = fixture_create(&fx, FIXTURE_C, NULL);
    CHECK_MSG(rc == 0, "fixture: %s", rlvr_error_last());
    if (rc == 0) {
        scenario(true);
        scenario(false);
    }
    fixture_free(&fx);
    return test_summary(unprivileged ? "test_workspace_state --unprivileged" : "test_workspace_state");
}
