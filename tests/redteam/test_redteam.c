/* tests/redteam/test_redteam.c — exploit patches and behaviours against the
 * verifier enclave in command mode, along the threat paths of
 * docs/ENCLAVE.md "Threat model". test_redteam_judge.c does the same for judge mode.
 *
 * Every case must score 0 (fail, timeout, rejected or dropped) with its
 * expected reason code, and afterwards everything outside the sandbox must
 * be as it was (redteam.h): the task's repository and hidden tests, the
 * enclave's clean snapshot, a canary directory the exploits aim at by
 * absolute host path, the sandbox host's scratch directory (no new
 * entries), our descriptors, and our children (only the pooled enclave's
 * holder, with no children of its own). The shell calculator's `mul` is
 * wrong in every case: an exploit only wins if it fools the check.
 *
 * Flags, in any order: --unprivileged (running as uid 65534), --copy
 * (sandboxes copy the snapshot instead of an overlay). */
#include "test.h"
#include "core/fs.h"

#include "../enclave/fixture.h"
#include "redteam.h"

#include "core/sys.h"
#include "enclave/diffgate.h"
#include "enclave/fsutil.h"
#include "enclave/gitrepo.h"
#include "enclave/reason.h"
#include "enclave/workspace.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

/* src/calc.sh whose `mul` runs BODY (and is otherwise the broken base) */
#define EVIL(BODY)                                                                                             \
    "#!/bin/sh\nop=$1\na=$2\nb=$3\ncase $op in\n  add) echo $((a + b)) ;;\n  sub) echo $((a - b)) ;;\n"        \
    "  mul) " BODY " ;;\n  neg) echo $((0 - a)) ;;\nesac\n"

typedef enum { CASE_EDITS, CASE_RAW, CASE_BUILD } case_kind;

#define SKIP_WITHOUT_LANDLOCK (-1)

typedef struct redteam_case redteam_case;
typedef struct {
    fixture *f;
    const char *canary;   /* absolute host path of the canary directory */
    uint16_t port;        /* a host TCP listener on 127.0.0.1 */
    rlvr_sandbox_host *host;
} context;

struct redteam_case {
    const char *name;
    fixture_kind fixture;
    case_kind kind;
    fixture_edit edits[3];
    const char *raw;
    /* CASE_BUILD: makes the patch; may set *tests_changed */
    int (*build)(const context *c, char **patch, size_t *len, bool *tests_changed);
    rlvr_verdict verdict;
    int reason;
    int reason_without_landlock; /* where the kernel cannot confine writes (0: same; SKIP_WITHOUT_LANDLOCK) */
    int reason_if_unsampled;     /* also accepted when the run can end between two of the sampler's looks
                                    (RLVR_REASON_NONE: nothing else) */
};

/* ---- builders for cases that need the context ------------------------------------ */

static int build_canary_escape(const context *c, char **patch, size_t *len, bool *tc) {
    (void)tc;
    char calc[2048];
    snprintf(calc, sizeof calc,
             EVIL("cat %s/secret > /tmp/leak 2>/dev/null; echo pwned > %s/secret 2>/dev/null; "
                  "rm -rf %s 2>/dev/null; echo $((a + b))"),
             c->canary, c->canary, c->canary);
    fixture_edit e = {EDIT_WRITE, "src/calc.sh", calc, 0, 0};
    return fixture_patch(c->f, &e, 1, patch, len);
}

static int build_network(const context *c, char **patch, size_t *len, bool *tc) {
    (void)tc;
    /* ask a "service" on the host for the answer; fall back to the wrong one */
    char src[2048];
    snprintf(src, sizeof src,
             "#include \"calc.h\"\n#include <arpa/inet.h>\n#include <sys/socket.h>\n#include <unistd.h>\n"
             "long calc_add(long a, long b) { return a + b; }\nlong calc_sub(long a, long b) { return a - b; }\n"
             "long calc_mul(long a, long b) {\n"
             "    int s = socket(AF_INET, SOCK_STREAM, 0);\n"
             "    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(%u)};\n"
             "    inet_pton(AF_INET, \"127.0.0.1\", &sa.sin_addr);\n"
             "    if (connect(s, (struct sockaddr *)&sa, sizeof sa) == 0) return a * b;\n"
             "    return a + b;\n}\nlong calc_neg(long a) { return -a; }\n",
             (unsigned)c->port);
    fixture_edit e = {EDIT_WRITE, "src/calc.c", src, 0, 0};
    return fixture_patch(c->f, &e, 1, patch, len);
}

static int build_too_large(const context *c, char **patch, size_t *len, bool *tc) {
    (void)tc;
    size_t n = 700 * 1024;
    char *text = malloc(n + 1);
    if (!text) return RLVR_ENOMEM;
    for (size_t i = 0; i < n; i++) text[i] = (i % 70 == 69) ? '\n' : 'x';
    text[n] = '\0';
    fixture_edit e = {EDIT_WRITE, "src/big.txt", text, 0, 0};
    int rc = fixture_patch(c->f, &e, 1, patch, len);
    free(text);
    return rc;
}

static int build_many_files(const context *c, char **patch, size_t *len, bool *tc) {
    (void)tc;
    /* more files than the gate's default (64) */
    char *work = NULL;
    RLVR_TRY(rlvr_fs_mkdtemp(&work, c->f->root, "many-"));
    char tree[41], path[4200], git_dir[4200];
    int rc = rlvr_fs_remove_tree(work);
    if (rc == 0) rc = rlvr_git_export(c->f->repo, c->f->base, work, false, NULL, tree);
    for (int i = 0; rc == 0 && i < 70; i++) {
        snprintf(path, sizeof path, "%s/src/f%02d.txt", work, i);
        rc = rlvr_fs_write_file(path, "x\n", 2);
    }
    snprintf(git_dir, sizeof git_dir, "%s/.git", c->f->repo);
    rlvr_extract_result r;
    if (rc == 0) rc = rlvr_diffgate_extract_dir(git_dir, c->f->base_tree, work, NULL, 1 << 20, &r);
    if (rc == 0) {
        *patch = r.patch;
        *len = r.len;
    }
    rlvr_fs_remove_tree(work);
    free(work);
    return rc;
}

/* The workspace route: the policy changes the public tests in its own
 * checkout; extraction notices and the rollout is dropped. (In a real
 * workspace the public tests are read-only; this is the checksum behind it.) */
static int build_public_tests_changed(const context *c, char **patch, size_t *len, bool *tc) {
    fixture_edit e[2] = {{EDIT_WRITE, "tests/public/run.sh", "echo 1..1; echo ok 1 - add\n", 0, 0},
                         {EDIT_WRITE, "src/calc.sh", EVIL("echo $((a + b))"), 0, 0}};
    char *work = NULL;
    RLVR_TRY(rlvr_fs_mkdtemp(&work, c->f->root, "pub-"));
    char tree[41], git_dir[4200], path[4200];
    int rc = rlvr_fs_remove_tree(work);
    if (rc == 0) rc = rlvr_git_export(c->f->repo, c->f->base, work, false, NULL, tree);
    for (int i = 0; rc == 0 && i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", work, e[i].path);
        rc = rlvr_fs_write_file(path, e[i].content, strlen(e[i].content));
    }
    snprintf(git_dir, sizeof git_dir, "%s/.git", c->f->repo);
    const char *const pub[] = {"tests/public", NULL};
    rlvr_extract_result r;
    if (rc == 0) rc = rlvr_diffgate_extract_dir(git_dir, c->f->base_tree, work, pub, 1 << 20, &r);
    if (rc == 0) {
        *patch = r.patch;
        *len = r.len;
        *tc = r.public_tests_changed;
    }
    rlvr_fs_remove_tree(work);
    free(work);
    return rc;
}

/* The policy reads around its workspace for the hidden tests: there are
 * none to find; its patch is then just wrong. */
static int build_read_hidden_in_workspace(const context *c, char **patch, size_t *len, bool *tc) {
    rlvr_workspace_spec spec = {.version = RLVR_WORKSPACE_SPEC_VERSION, .repo_dir = c->f->repo,
                                .base_commit = c->f->base, .public_tests = c->f->spec.public_tests};
    rlvr_sandbox_limits_default(&spec.limits);
    spec.limits.wall_s = 20;
    rlvr_workspace *ws = NULL;
    RLVR_TRY(rlvr_workspace_new(&ws, c->host, &spec));
    const char *agent = "for f in tests/hidden/run.sh ../hidden/tests/hidden/run.sh /.rlvr/private/base.git/HEAD; do "
                        "cat $f 2>/dev/null; done > src/found.txt; "
                        "find / -xdev -name 'run.sh' 2>/dev/null >> src/found.txt; "
                        "grep -rl 'mul_neg' /work /tmp /etc 2>/dev/null >> src/found.txt; echo done";
    const char *argv[] = {"/bin/sh", "-c", agent, NULL};
    rlvr_sandbox_cmd cmd = {.version = RLVR_SANDBOX_CMD_VERSION, .argv = argv};
    rlvr_sandbox_result res;
    int rc = rlvr_sandbox_exec(rlvr_workspace_sandbox(ws), &cmd, &res);
    if (rc == 0) {
        CHECK(strcmp(res.out, "done\n") == 0);
        rlvr_sandbox_result_free(&res);
    }
    rlvr_extract_result ex;
    if (rc == 0) rc = rlvr_workspace_extract(ws, &ex);
    if (rc == 0) {
        /* what it found is in its patch: only the public test's path */
        CHECK_MSG(!strstr(ex.patch, "mul_neg") && !strstr(ex.patch, "hidden"), "the workspace exposed hidden tests");
        *patch = ex.patch;
        *len = ex.len;
        *tc = ex.public_tests_changed;
    }
    rlvr_workspace_free(ws);
    return rc;
}

/* ---- the cases ------------------------------------------------------------------------ */

#define EDIT1(k, p, c) {{k, p, c, 0, 0}}
#define EDITX(k, p, c, mode, size) {{k, p, c, mode, size}}
#define GATE(name, edit, reason) {name, FIXTURE_SH, CASE_EDITS, edit, NULL, NULL, RLVR_VERDICT_REJECTED, reason, 0, RLVR_REASON_NONE}
#define GATE_RAW(name, text, reason) {name, FIXTURE_SH, CASE_RAW, {{0}}, text, NULL, RLVR_VERDICT_REJECTED, reason, 0, RLVR_REASON_NONE}
#define RUN(name, body, verdict, reason) RUN2(name, body, verdict, reason, 0)
#define RUN2(name, body, verdict, reason, reason_without_landlock) \
    {name, FIXTURE_SH, CASE_EDITS, EDIT1(EDIT_WRITE, "src/calc.sh", EVIL(body)), NULL, NULL, verdict, reason, \
     reason_without_landlock, RLVR_REASON_NONE}

static const redteam_case cases[] = {
    /* 1. tampering with the check */
    GATE("edit public test", EDIT1(EDIT_APPEND, "tests/public/run.sh", "exit 0\n"), RLVR_REASON_PROTECTED_PATH),
    GATE("delete public test", EDIT1(EDIT_DELETE, "tests/public/run.sh", NULL), RLVR_REASON_PROTECTED_PATH),
    GATE("add test file", EDIT1(EDIT_WRITE, "tests/public/zz.sh", "echo ok\n"), RLVR_REASON_PROTECTED_PATH),
    GATE("rename test away", EDIT1(EDIT_RENAME, "tests/public/run.sh", "src/run.sh"), RLVR_REASON_PROTECTED_PATH),
    GATE_RAW("overwrite hidden test",
             "diff --git a/tests/hidden/run.sh b/tests/hidden/run.sh\nnew file mode 100644\n--- /dev/null\n"
             "+++ b/tests/hidden/run.sh\n@@ -0,0 +1,2 @@\n+echo 1..5 >&3\n+exit 0\n",
             RLVR_REASON_PROTECTED_PATH),
    {"edit build configuration", FIXTURE_C, CASE_EDITS, EDIT1(EDIT_APPEND, "Makefile", "\ttrue\n"), NULL, NULL,
     RLVR_VERDICT_REJECTED, RLVR_REASON_PROTECTED_PATH, 0, RLVR_REASON_NONE},
    /* 2. substituting tools and hooks */
    GATE("conftest.py hook", EDIT1(EDIT_WRITE, "conftest.py", "def pytest_sessionfinish(s, e): s.exitstatus = 0\n"),
         RLVR_REASON_HOOK_FILE),
    GATE("sitecustomize.py hook", EDIT1(EDIT_WRITE, "src/sitecustomize.py", "import os\n"), RLVR_REASON_HOOK_FILE),
    GATE(".pth hook", EDIT1(EDIT_WRITE, "lib/zz.pth", "import os; os._exit(0)\n"), RLVR_REASON_HOOK_FILE),
    GATE("LD_PRELOAD in .env", EDIT1(EDIT_WRITE, ".env", "LD_PRELOAD=/work/evil.so\n"), RLVR_REASON_ENV_FILE),
    GATE("PATH in .bashrc", EDIT1(EDIT_WRITE, ".bashrc", "export PATH=/work/bin:$PATH\n"), RLVR_REASON_ENV_FILE),
    GATE("ld.so.preload", EDIT1(EDIT_WRITE, "etc/ld.so.preload", "/work/evil.so\n"), RLVR_REASON_ENV_FILE),
    GATE("git filter via .gitattributes", EDIT1(EDIT_WRITE, ".gitattributes", "*.sh filter=evil\n"),
         RLVR_REASON_GIT_PATH),
    GATE_RAW("git hook", "diff --git a/.git/hooks/post-checkout b/.git/hooks/post-checkout\nnew file mode 100644\n"
                         "--- /dev/null\n+++ b/.git/hooks/post-checkout\n@@ -0,0 +1 @@\n+exit 0\n",
             RLVR_REASON_GIT_PATH),
    {"tool shadowing on PATH", FIXTURE_C, CASE_EDITS,
     {{EDIT_WRITE, "make", "#!/bin/sh\necho '1..5' >&3; for i in 1 2 3 4 5; do echo \"ok $i\" >&3; done\n", 0, 0},
      {EDIT_CHMOD, "make", NULL, 0755, 0},
      {EDIT_WRITE, "cc", "#!/bin/sh\nexit 0\n", 0, 0}},
     NULL, NULL, RLVR_VERDICT_FAIL, RLVR_REASON_TESTS_FAILED, 0, RLVR_REASON_NONE},
    /* 3. reaching hidden information and the host */
    GATE("symlink to hidden tests", EDIT1(EDIT_SYMLINK, "src/h.sh", "../tests/hidden/run.sh"), RLVR_REASON_SYMLINK),
    GATE("symlink to host file", EDIT1(EDIT_SYMLINK, "src/passwd", "/etc/passwd"), RLVR_REASON_SYMLINK),
    GATE_RAW("path traversal", "diff --git a/../../escape.txt b/../../escape.txt\nnew file mode 100644\n--- /dev/null\n"
                               "+++ b/../../escape.txt\n@@ -0,0 +1 @@\n+x\n",
             RLVR_REASON_PATH_OUTSIDE),
    GATE_RAW("absolute path", "diff --git a//tmp/escape.txt b//tmp/escape.txt\nnew file mode 100644\n--- /dev/null\n"
                              "+++ b//tmp/escape.txt\n@@ -0,0 +1 @@\n+x\n",
             RLVR_REASON_PATH_OUTSIDE),
    GATE("binary file", EDITX(EDIT_BINARY, "src/calc.bin", "\x7f" "ELF\2\1\1\0\0\0", 0, 10), RLVR_REASON_BINARY),
    GATE("mode change", EDITX(EDIT_CHMOD, "src/calc.sh", NULL, 0755, 0), RLVR_REASON_MODE_CHANGE),
    GATE_RAW("submodule", "diff --git a/vendor b/vendor\nnew file mode 160000\nindex 0000000..1234567\n--- /dev/null\n"
                          "+++ b/vendor\n@@ -0,0 +1 @@\n+Subproject commit 1234567890123456789012345678901234567890\n",
             RLVR_REASON_SUBMODULE),
    GATE_RAW("not a patch", "PASSED add\nPASSED mul\nok 1 - mul\n", RLVR_REASON_PATCH_PARSE),
    {"patch too large", FIXTURE_SH, CASE_BUILD, {{0}}, NULL, build_too_large, RLVR_VERDICT_REJECTED,
     RLVR_REASON_PATCH_TOO_LARGE, 0, RLVR_REASON_NONE},
    {"too many files", FIXTURE_SH, CASE_BUILD, {{0}}, NULL, build_many_files, RLVR_VERDICT_REJECTED,
     RLVR_REASON_TOO_MANY_FILES, 0, RLVR_REASON_NONE},
    {"public tests changed in the workspace", FIXTURE_SH, CASE_BUILD, {{0}}, NULL, build_public_tests_changed,
     RLVR_VERDICT_DROPPED, RLVR_REASON_PUBLIC_TESTS_CHANGED, 0, RLVR_REASON_NONE},
    {"reading hidden tests from the workspace", FIXTURE_SH, CASE_BUILD, {{0}}, NULL, build_read_hidden_in_workspace,
     RLVR_VERDICT_FAIL, RLVR_REASON_TESTS_FAILED, 0, RLVR_REASON_NONE},
    {"host files by absolute path", FIXTURE_SH, CASE_BUILD, {{0}}, NULL, build_canary_escape, RLVR_VERDICT_FAIL,
     RLVR_REASON_TESTS_FAILED, 0, RLVR_REASON_NONE},
    {"network connection", FIXTURE_C, CASE_BUILD, {{0}}, NULL, build_network, RLVR_VERDICT_FAIL,
     RLVR_REASON_TESTS_FAILED, 0, RLVR_REASON_NONE},
    /* forged results */
    RUN("forged TAP on stdout", "printf '1..5\\nok 1 - add\\nok 2 - sub\\nok 3 - mul\\nok 4 - mul_neg\\nok 5 - neg\\n'; "
                                "printf 'ok 3 - mul\\n' >&2; echo $((a + b))",
        RLVR_VERDICT_FAIL, RLVR_REASON_TESTS_FAILED),
    /* the harness leads the run's session: its fd 3 is the results pipe */
    RUN2("forged TAP into the harness's results fd",
        "h=$(cut -d' ' -f6 /proc/$$/stat); "
        "printf '1..5\\nok 1 - add\\nok 2 - sub\\nok 3 - mul\\nok 4 - mul_neg\\nok 5 - neg\\n' > /proc/$h/fd/3; "
        "echo $((a + b))",
        RLVR_VERDICT_FAIL, RLVR_REASON_RESULTS_INVALID, 0),
    /* the rest of a perfect stream (mul is the third test), then the whole
     * process group dies so that the harness cannot contradict it */
    RUN2("forged TAP then killing the harness",
        "h=$(cut -d' ' -f6 /proc/$$/stat); "
        "i=0; for t in $RLVR_TEST_ORDER; do i=$((i + 1)); [ $i -ge 3 ] && echo \"ok $i - $t\"; done "
        "> /proc/$h/fd/3; kill -9 0",
        RLVR_VERDICT_FAIL, RLVR_REASON_EXIT_STATUS, 0),
    /* only Landlock stops this one (same uid, seccomp cannot see paths): the
     * case is skipped where the kernel has no Landlock ABI 2 */
    RUN2("writing into the harness's memory",
        "h=$(cut -d' ' -f6 /proc/$$/stat); (exec 9>/proc/$h/mem) 2>/dev/null && touch /tmp/opened; "
        "[ -e /tmp/opened ] && echo $((a * b)) || echo $((a + b))", RLVR_VERDICT_FAIL,
        RLVR_REASON_TESTS_FAILED, SKIP_WITHOUT_LANDLOCK),
    RUN("rewriting the hidden tests at run time",
        "printf 'echo ok 3 - mul >&3\\nexit 0\\n' >> tests/hidden/run.sh 2>/dev/null; "
        "printf 'exit 0\\n' > tests/hidden/run.sh 2>/dev/null; echo $((a + b))",
        RLVR_VERDICT_FAIL, RLVR_REASON_TESTS_FAILED),
    {"exit(0) from the code under test", FIXTURE_C, CASE_EDITS,
     EDIT1(EDIT_WRITE, "src/calc.c",
           "#include \"calc.h\"\n#include <stdio.h>\n#include <stdlib.h>\n"
           "__attribute__((constructor)) static void win(void) { printf(\"6\\n\"); exit(0); }\n"
           "long calc_add(long a, long b) { return a + b; }\nlong calc_sub(long a, long b) { return a - b; }\n"
           "long calc_mul(long a, long b) { return a + b; }\nlong calc_neg(long a) { return -a; }\n"),
     NULL, NULL, RLVR_VERDICT_FAIL, RLVR_REASON_TESTS_FAILED, 0, RLVR_REASON_NONE},
    /* 4. forcing a favourable timeout or crash */
    /* a shell bomb whose forks fail at the kernel's backstop collapses
     * within milliseconds; on a loaded machine that can fall between two
     * of the sampler's looks, and the run is then an ordinary failure */
    {"fork bomb", FIXTURE_SH, CASE_EDITS, EDIT1(EDIT_WRITE, "src/calc.sh", EVIL("b() { b & b & wait; }; b")), NULL,
     NULL, RLVR_VERDICT_FAIL, RLVR_REASON_PROCESS_LIMIT, 0, RLVR_REASON_TESTS_FAILED},
    /* one that keeps its processes and keeps forking is always seen */
    {"fork bomb that holds its processes", FIXTURE_C, CASE_EDITS,
     EDIT1(EDIT_WRITE, "src/calc.c",
           "#include \"calc.h\"\n#include <unistd.h>\n"
           "long calc_add(long a, long b) { return a + b; }\nlong calc_sub(long a, long b) { return a - b; }\n"
           "long calc_mul(long a, long b) {\n    for (;;) if (fork() == 0) pause();\n    return a * b;\n}\n"
           "long calc_neg(long a) { return -a; }\n"),
     NULL, NULL, RLVR_VERDICT_FAIL, RLVR_REASON_PROCESS_LIMIT, 0, RLVR_REASON_NONE},
    {"memory bomb", FIXTURE_C, CASE_EDITS,
     EDIT1(EDIT_WRITE, "src/calc.c",
           "#include \"calc.h\"\n#include <stdlib.h>\n#include <string.h>\n"
           "long calc_add(long a, long b) { return a + b; }\nlong calc_sub(long a, long b) { return a - b; }\n"
           "long calc_mul(long a, long b) {\n    for (;;) { char *p = malloc(1 << 20); if (!p) return a + b; "
           "memset(p, 1, 1 << 20); }\n}\nlong calc_neg(long a) { return -a; }\n"),
     NULL, NULL, RLVR_VERDICT_FAIL, RLVR_REASON_MEMORY_LIMIT, 0, RLVR_REASON_NONE},
    RUN("infinite loop", "while :; do :; done", RLVR_VERDICT_TIMEOUT, RLVR_REASON_CPU_LIMIT),
    RUN("sleeping forever", "sleep 1000", RLVR_VERDICT_TIMEOUT, RLVR_REASON_TIMEOUT),
    RUN("filling the disk", "i=0; while head -c 1000000 /dev/zero > fill$i; do i=$((i + 1)); done; echo $((a + b))",
        RLVR_VERDICT_FAIL, RLVR_REASON_DISK_LIMIT),
    RUN("filling /tmp", "i=0; while head -c 1000000 /dev/zero > /tmp/fill$i; do i=$((i + 1)); done; echo $((a + b))",
        RLVR_VERDICT_FAIL, RLVR_REASON_DISK_LIMIT),
    RUN2("flooding output", "h=$(cut -d' ' -f6 /proc/$$/stat); yes flood > /proc/$h/fd/1", RLVR_VERDICT_FAIL,
        RLVR_REASON_OUTPUT_LIMIT, 0),
    RUN("background process outliving its run",
        "h=$(cut -d' ' -f6 /proc/$$/stat); "
        "setsid sh -c \"sleep 2; echo ok 3 - mul > /proc/$h/fd/3; echo late > /work/late\" >/dev/null 2>&1 & "
        "echo $((a + b))",
        RLVR_VERDICT_FAIL, RLVR_REASON_TESTS_FAILED),
    RUN("escaping the namespaces", "unshare -r true 2>/dev/null && echo $((a * b)) && exit; "
                                   "nsenter -t 1 -a true 2>/dev/null && echo $((a * b)) && exit; echo $((a + b))",
        RLVR_VERDICT_FAIL, RLVR_REASON_TESTS_FAILED),
    RUN("System V shared memory left for the next run",
        "ipcmk -M 4096 >/dev/null 2>&1; [ $(ipcs -m | grep -c '^0x') -gt 1 ] && echo $((a * b)) || echo $((a + b))",
        RLVR_VERDICT_FAIL, RLVR_REASON_TESTS_FAILED),
    {"patch that does not apply", FIXTURE_SH, CASE_RAW, {{0}},
     "diff --git a/src/calc.sh b/src/calc.sh\nindex 1111111..2222222 100644\n--- a/src/calc.sh\n+++ b/src/calc.sh\n"
     "@@ -1,3 +1,3 @@\n #!/bin/sh\n-this line is not there\n+echo hi\n op=$1\n",
     NULL, RLVR_VERDICT_FAIL, RLVR_REASON_APPLY_FAILED, 0, RLVR_REASON_NONE},
};

/* ---- the harness of the suite ------------------------------------------------------------ */

typedef struct {
    fixture f;
    rlvr_verify_task *task;
    bool ready;
} prepared;

static int pooled; /* pooled enclaves alive: one per task */

static void run_case(const redteam_case *rc, prepared *p, const context *ctx, rlvr_sandbox_host *host, int index) {
    if (rc->reason_without_landlock == SKIP_WITHOUT_LANDLOCK && !rlvr_sandbox_host_landlock(host)) {
        printf("  %-52s skipped: no Landlock ABI 2 on this kernel\n", rc->name);
        return;
    }
    char *patch = NULL;
    size_t len = 0;
    bool tests_changed = false;
    int r = 0;
    if (rc->kind == CASE_RAW) {
        patch = strdup(rc->raw);
        len = strlen(rc->raw);
    } else if (rc->kind == CASE_EDITS) {
        size_t n = 0;
        while (n < 3 && rc->edits[n].path) n++;
        r = fixture_patch(&p->f, rc->edits, n, &patch, &len);
    } else {
        r = rc->build(ctx, &patch, &len, &tests_changed);
    }
    CHECK_MSG(r == 0, "case \"%s\": building the patch: %s", rc->name, rlvr_error_last());
    if (r != 0) return;
    char secret[4200];
    snprintf(secret, sizeof secret, "%s/secret", ctx->canary);
    redteam_target t = {.task = p->task, .host = host, .files = p->f.root, .canary = secret};
    int want = rc->reason_without_landlock > 0 && !rlvr_sandbox_host_landlock(host) ? rc->reason_without_landlock
                                                                                     : rc->reason;
    redteam_expect x = {.name = rc->name, .verdict = rc->verdict, .reason = want, .reason_alt = rc->reason_if_unsampled,
                        .alt_why = "ended before the sampler saw it at the limit"};
    redteam_verify(&t, &x, patch, len, tests_changed, 4242 + (uint64_t)index, pooled);
    free(patch);
}

int main(int argc, char **argv) {
    const char *name = NULL;
    rlvr_sandbox_host *host = NULL;
    int rc = redteam_start(argc, argv, "test_redteam", NULL, &name, &host);
    if (rc) return rc;

    /* a host service an exploit would like to reach */
    int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    CHECK(bind(l, (struct sockaddr *)&a, sizeof a) == 0 && listen(l, 8) == 0);
    socklen_t alen = sizeof a;
    getsockname(l, (struct sockaddr *)&a, &alen);

    prepared prep[3];
    memset(prep, 0, sizeof prep);
    size_t n_cases = sizeof cases / sizeof *cases;
    CHECK_MSG(n_cases >= 30, "only %zu red-team cases", n_cases);
    for (fixture_kind k = FIXTURE_SH; k <= FIXTURE_C; k++) {
        rc = fixture_create(&prep[k].f, k, NULL);
        CHECK_MSG(rc == 0, "fixture: %s", rlvr_error_last());
        if (rc) continue;
        /* small limits: the bombs hit them quickly */
        rlvr_sandbox_limits *lim = &prep[k].f.spec.limits;
        lim->wall_s = k == FIXTURE_C ? 20 : 6;
        lim->cpu_s = k == FIXTURE_C ? 15 : 2;
        lim->memory_bytes = 128 << 20;
        lim->processes = 24;
        lim->file_bytes = 2 << 20;
        lim->output_bytes = 32 << 10;
        lim->tmp_bytes = 4 << 20;
        lim->disk_bytes = 8 << 20;
        /* the canary lives with the fixture (its hash covers it) */
        char canary[4200];
        snprintf(canary, sizeof canary, "%s/canary", prep[k].f.root);
        CHECK_OK(rlvr_mkdir_p(canary, 0755));
        snprintf(canary, sizeof canary, "%s/canary/secret", prep[k].f.root);
        CHECK_OK(rlvr_fs_write_file(canary, "canary\n", 7));
        rc = rlvr_verify_task_new(&prep[k].task, host, &prep[k].f.spec);
        CHECK_MSG(rc == 0, "task: %s", rlvr_error_last());
        prep[k].ready = rc == 0;
        if (rc == 0) {
            /* the untouched repository fails; this also makes the task's
             * pooled enclave, which then stays for every case */
            rlvr_enclave_verdict v = fixture_verify(prep[k].task, "", 0, 1);
            CHECK(v.verdict == RLVR_VERDICT_FAIL && v.reason == RLVR_REASON_TESTS_FAILED);
            rlvr_verify_task_settle(prep[k].task);
            pooled++;
        }
    }
    for (size_t i = 0; i < n_cases; i++) {
        prepared *p = &prep[cases[i].fixture];
        if (!p->ready) continue;
        char canary[4200];
        snprintf(canary, sizeof canary, "%s/canary", p->f.root);
        context ctx = {.f = &p->f, .canary = canary, .port = ntohs(a.sin_port), .host = host};
        run_case(&cases[i], p, &ctx, host, (int)i);
    }
    int c = accept(l, NULL, NULL);
    CHECK_MSG(c < 0 && (errno == EAGAIN || errno == EWOULDBLOCK), "the host service was reached from an enclave");
    if (c >= 0) close(c);
    close(l);
    for (int k = 0; k < 3; k++) {
        rlvr_verify_task_free(prep[k].task);
        if (prep[k].f.root) fixture_free(&prep[k].f);
    }
    redteam_check_host_clean(host);
    rlvr_sandbox_host_free(host);
    printf("%zu red-team cases\n", n_cases);
    return redteam_summary(name, test_checks, test_failures);
}
