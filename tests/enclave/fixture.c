#include "fixture.h"
#include "core/fs.h"

#include "core/error.h"
#include "enclave/diffgate.h"
#include "enclave/fsutil.h"
#include "enclave/gitrepo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SH_CALC(MUL)                                                        \
    "#!/bin/sh\n"                                                           \
    "# calc.sh OP A [B]: a tiny calculator\n"                               \
    "op=$1\n"                                                               \
    "a=$2\n"                                                                \
    "b=$3\n"                                                                \
    "case $op in\n"                                                         \
    "  add) echo $((a + b)) ;;\n"                                           \
    "  sub) echo $((a - b)) ;;\n"                                           \
    "  mul) echo $((" MUL ")) ;;\n"                                         \
    "  neg) echo $((0 - a)) ;;\n"                                           \
    "  *) echo \"calc: unknown operation $op\" >&2; exit 2 ;;\n"            \
    "esac\n"

static const char sh_calc_broken[] = SH_CALC("a + b");
static const char sh_calc_fixed[] = SH_CALC("a * b");

#define C_CALC_SUB_MUL(SUB, MUL)                                            \
    "#include \"calc.h\"\n"                                                 \
    "\n"                                                                    \
    "long calc_add(long a, long b) { return a + b; }\n"                     \
    "long calc_sub(long a, long b) { return " SUB "; }\n"                   \
    "long calc_mul(long a, long b) { return " MUL "; }\n"                   \
    "long calc_neg(long a) { return -a; }\n"
#define C_CALC(MUL) C_CALC_SUB_MUL("a - b", MUL)
/* the same text as a format of the two expressions */
#define C_CALC_FORMAT C_CALC_SUB_MUL("%s", "%s")

static const char c_calc_broken[] = C_CALC("a + b");
static const char c_calc_fixed[] = C_CALC("a * b");

static const char c_calc_h[] =
    "long calc_add(long a, long b);\nlong calc_sub(long a, long b);\n"
    "long calc_mul(long a, long b);\nlong calc_neg(long a);\n";

static const char c_main[] =
    "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include \"calc.h\"\n\n"
    "int main(int argc, char **argv) {\n"
    "    if (argc < 3) return 2;\n"
    "    long a = atol(argv[2]), b = argc > 3 ? atol(argv[3]) : 0, r;\n"
    "    if (!strcmp(argv[1], \"add\")) r = calc_add(a, b);\n"
    "    else if (!strcmp(argv[1], \"sub\")) r = calc_sub(a, b);\n"
    "    else if (!strcmp(argv[1], \"mul\")) r = calc_mul(a, b);\n"
    "    else if (!strcmp(argv[1], \"neg\")) r = calc_neg(a);\n"
    "    else return 2;\n"
    "    printf(\"%ld\\n\", r);\n"
    "    return 0;\n"
    "}\n";

static const char c_makefile[] =
    "calc: src/main.c src/calc.c src/calc.h\n"
    "\tcc -O0 -w -o calc src/main.c src/calc.c\n";

/* The hidden tests. CALC is how one calculation runs; the code under test
 * never gets the results descriptor (3>&-). */
#define HIDDEN_RUN(CALC) HIDDEN_RUN_DEF("calc() { " CALC " \"$@\" 2>/dev/null 3>&-; }\n")
#define HIDDEN_RUN_DEF(CALC_DEF)                                                                                    \
    "#!/bin/sh\n"                                                                                           \
    "# Hidden tests: TAP to $RLVR_RESULTS_FD (stdout when unset), in the order of $RLVR_TEST_ORDER.\n"     \
    "fd=${RLVR_RESULTS_FD:-1}\n"                                                                            \
    "seed=${RLVR_TEST_SEED:-0}\n"                                                                           \
    "set -- ${RLVR_TEST_ORDER:-add sub mul mul_neg neg}\n"                                                  \
    CALC_DEF                                                                                                \
    "check() { want=$1; shift; [ \"$(calc \"$@\")\" = \"$want\" ]; }\n"                                     \
    "echo \"1..$#\" >&$fd\n"                                                                                \
    "n=0\n"                                                                                                 \
    "failed=0\n"                                                                                            \
    "for t in \"$@\"; do\n"                                                                                 \
    "    n=$((n + 1))\n"                                                                                    \
    "    case $t in\n"                                                                                      \
    "    add) check 5 add 2 3 ;;\n"                                                                         \
    "    sub) check 1 sub 3 2 ;;\n"                                                                         \
    "    mul) check 6 mul 2 3 ;;\n"                                                                         \
    "    mul_neg) check -6 mul -2 3 ;;\n"                                                                   \
    "    neg) check -4 neg 4 ;;\n"                                                                          \
    "    mul_seeded)\n"                                                                                     \
    "        if [ $((seed % 1000)) -lt 200 ]; then x=2; y=2; else x=$((3 + seed % 7)); y=$((5 + seed % 11)); fi\n" \
    "        check $((x * y)) mul $x $y ;;\n"                                                               \
    "    planted) [ $(((seed / 1000) % 1000)) -ge 100 ] ;;\n"                                               \
    "    *) false ;;\n"                                                                                     \
    "    esac\n"                                                                                            \
    "    if [ $? -eq 0 ]; then echo \"ok $n - $t\" >&$fd; else echo \"not ok $n - $t\" >&$fd; failed=1; fi\n" \
    "done\n"                                                                                                \
    "exit $failed\n"

static const char hidden_sh[] = HIDDEN_RUN("sh src/calc.sh");
static const char hidden_c[] = HIDDEN_RUN("./calc");
/* the flaky fixture runs thousands of times: the calculator is sourced in a
 * subshell (a fork, no exec) */
static const char hidden_flaky[] =
    HIDDEN_RUN_DEF("calc() { (set -- \"$@\"; . ./src/calc.sh) 2>/dev/null 3>&-; }\n");

/* The judge of FIXTURE_JUDGE: expected values live here only; each test
 * runs the code under test (argv[1]) in a child that has nothing but
 * /dev/null, the answer pipe and stderr. */
static const char judge_c[] =
    "#define _GNU_SOURCE\n#include <fcntl.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
    "#include <sys/prctl.h>\n#include <sys/wait.h>\n#include <unistd.h>\n"
    "#define N 5\n"
    "static const char *names[N] = {\"add\", \"sub\", \"mul\", \"mul_neg\", \"neg\"};\n"
    "static const char *calls[N][3] = {{\"add\", \"2\", \"3\"}, {\"sub\", \"3\", \"2\"}, {\"mul\", \"2\", \"3\"},\n"
    "                                  {\"mul\", \"-2\", \"3\"}, {\"neg\", \"4\", \"0\"}};\n"
    "static const char *want[N] = {\"5\\n\", \"1\\n\", \"6\\n\", \"-6\\n\", \"-4\\n\"};\n"
    "static int run(const char *prog, int i) {\n"
    "    int p[2];\n"
    "    if (pipe(p) != 0) return 0;\n"
    "    pid_t pid = fork();\n"
    "    if (pid == 0) {\n"
    "        int null = open(\"/dev/null\", O_RDONLY);\n"
    "        dup2(null, 0);\n"
    "        dup2(p[1], 1);\n"
    "        for (int fd = 3; fd < 1024; fd++) close(fd);\n"
    "        char *argv[] = {(char *)prog, (char *)calls[i][0], (char *)calls[i][1], (char *)calls[i][2], NULL};\n"
    "        char *envp[] = {\"PATH=/usr/bin:/bin\", NULL};\n"
    "        execve(prog, argv, envp);\n"
    "        _exit(127);\n"
    "    }\n"
    "    close(p[1]);\n"
    "    char buf[64];\n"
    "    size_t n = 0;\n"
    "    ssize_t r;\n"
    "    while (n < sizeof buf - 1 && (r = read(p[0], buf + n, sizeof buf - 1 - n)) > 0) n += (size_t)r;\n"
    "    buf[n] = 0;\n"
    "    close(p[0]);\n"
    "    int st = 0;\n"
    "    waitpid(pid, &st, 0);\n"
    "    return WIFEXITED(st) && WEXITSTATUS(st) == 0 && strcmp(buf, want[i]) == 0;\n"
    "}\n"
    "int main(int argc, char **argv) {\n"
    "    prctl(PR_SET_DUMPABLE, 0);\n"
    "    if (argc < 2) return 2;\n"
    "    const char *fd = getenv(\"RLVR_RESULTS_FD\");\n"
    "    FILE *tap = fd ? fdopen(atoi(fd), \"w\") : stdout;\n"
    "    if (!tap) return 2;\n"
    "    fcntl(fileno(tap), F_SETFD, FD_CLOEXEC);\n"
    "    int order[N], n = 0, failed = 0;\n"
    "    char list[512];\n"
    "    snprintf(list, sizeof list, \"%s\", getenv(\"RLVR_TEST_ORDER\") ? getenv(\"RLVR_TEST_ORDER\") : \"\");\n"
    "    for (char *t = strtok(list, \" \"); t && n < N; t = strtok(NULL, \" \"))\n"
    "        for (int i = 0; i < N; i++)\n"
    "            if (strcmp(t, names[i]) == 0) order[n++] = i;\n"
    "    if (n == 0)\n"
    "        for (int i = 0; i < N; i++) order[n++] = i;\n"
    "    fprintf(tap, \"1..%d\\n\", n);\n"
    "    for (int k = 0; k < n; k++) {\n"
    "        int ok = run(argv[1], order[k]);\n"
    "        failed |= !ok;\n"
    "        fprintf(tap, \"%s %d - %s\\n\", ok ? \"ok\" : \"not ok\", k + 1, names[order[k]]);\n"
    "    }\n"
    "    fflush(tap);\n"
    "    return failed;\n"
    "}\n";

static const char public_sh[] =
    "#!/bin/sh\n# Public test: TAP on stdout.\necho 1..1\n"
    "[ \"$(sh src/calc.sh add 2 3)\" = 5 ] && echo 'ok 1 - add' || echo 'not ok 1 - add'\n";
static const char public_c[] =
    "#!/bin/sh\n# Public test: TAP on stdout.\nmake -s calc || exit 1\necho 1..1\n"
    "[ \"$(./calc add 2 3)\" = 5 ] && echo 'ok 1 - add' || echo 'not ok 1 - add'\n";

const fixture_edit fixture_reference_sh[] = {{EDIT_WRITE, "src/calc.sh", sh_calc_fixed, 0, 0}};
const fixture_edit fixture_reference_c[] = {{EDIT_WRITE, "src/calc.c", c_calc_fixed, 0, 0}};

int fixture_sh_calc(char *buf, size_t cap, const char *mul_expr) {
    int n = snprintf(buf, cap,
                     "#!/bin/sh\nop=$1\na=$2\nb=$3\ncase $op in\n  add) echo $((a + b)) ;;\n  sub) echo $((a - b)) ;;\n"
                     "  mul) echo $((%s)) ;;\n  neg) echo $((0 - a)) ;;\n  *) exit 2 ;;\nesac\n",
                     mul_expr);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

int fixture_c_calc(char *buf, size_t cap, const char *sub_expr, const char *mul_expr) {
    int n = snprintf(buf, cap, C_CALC_FORMAT, sub_expr, mul_expr);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* ---- building ------------------------------------------------------------------ */

static int write_at(const char *root, const char *rel, const char *content, size_t len) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) {
        *slash = '\0';
        RLVR_TRY(rlvr_mkdir_p(dir, 0755));
    }
    return rlvr_fs_write_file(path, content, len);
}

static int apply_edits(const char *root, const fixture_edit *edits, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const fixture_edit *e = &edits[i];
        char path[PATH_MAX], other[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", root, e->path);
        switch (e->kind) {
        case EDIT_WRITE: RLVR_TRY(write_at(root, e->path, e->content, strlen(e->content))); break;
        case EDIT_BINARY: RLVR_TRY(write_at(root, e->path, e->content, e->size)); break;
        case EDIT_APPEND: {
            int fd = open(path, O_WRONLY | O_APPEND);
            if (fd < 0 || write(fd, e->content, strlen(e->content)) < 0) return rlvr_error_errno_at(__FILE__, __LINE__, "append %s", path);
            close(fd);
            break;
        }
        case EDIT_DELETE:
            if (unlink(path) != 0) return rlvr_error_errno_at(__FILE__, __LINE__, "unlink %s", path);
            break;
        case EDIT_CHMOD:
            if (chmod(path, e->mode) != 0) return rlvr_error_errno_at(__FILE__, __LINE__, "chmod %s", path);
            break;
        case EDIT_SYMLINK:
            if (symlink(e->content, path) != 0) return rlvr_error_errno_at(__FILE__, __LINE__, "symlink %s", path);
            break;
        case EDIT_RENAME:
            snprintf(other, sizeof other, "%s/%s", root, e->content);
            if (rename(path, other) != 0) return rlvr_error_errno_at(__FILE__, __LINE__, "rename %s", path);
            break;
        }
    }
    return 0;
}


static const char *const sh_f2p[] = {"mul", "mul_neg", NULL};
static const char *const sh_p2p[] = {"add", "sub", "neg", NULL};
static const char *const flaky_f2p[] = {"mul_seeded", NULL};
static const char *const flaky_p2p[] = {"add", NULL};
static const char *const sh_order[] = {"add", "sub", "mul", "mul_neg", "neg", NULL};
static const char *const protected_globs[] = {"tests", "Makefile", NULL};
static const char *const public_tests[] = {"tests/public", NULL};
static const char *const judge_argv[] = {"judge", "./calc", NULL};

int fixture_create(fixture *f, fixture_kind kind, const char *parent) {
    memset(f, 0, sizeof *f);
    f->kind = kind;
    RLVR_TRY(rlvr_git_init());
    if (!parent) parent = getenv("TMPDIR");
    if (!parent || !parent[0]) parent = "/tmp";
    RLVR_TRY(rlvr_fs_mkdtemp(&f->root, parent, "rlvr-fixture-"));
    chmod(f->root, 0755);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/repo", f->root);
    f->repo = strdup(path);
    snprintf(path, sizeof path, "%s/hidden", f->root);
    f->hidden = strdup(path);
    if (!f->repo || !f->hidden) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    RLVR_TRY(rlvr_mkdir_p(f->repo, 0755));
    RLVR_TRY(rlvr_mkdir_p(f->hidden, 0755));
    bool c = kind == FIXTURE_C || kind == FIXTURE_JUDGE;
    RLVR_TRY(write_at(f->repo, "README", "A tiny calculator. `mul` is wrong.\n", 35));
    if (c) {
        RLVR_TRY(write_at(f->repo, "src/calc.c", c_calc_broken, strlen(c_calc_broken)));
        RLVR_TRY(write_at(f->repo, "src/calc.h", c_calc_h, strlen(c_calc_h)));
        RLVR_TRY(write_at(f->repo, "src/main.c", c_main, strlen(c_main)));
        RLVR_TRY(write_at(f->repo, "Makefile", c_makefile, strlen(c_makefile)));
        RLVR_TRY(write_at(f->repo, "tests/public/run.sh", public_c, strlen(public_c)));
        RLVR_TRY(write_at(f->repo, ".gitignore", "calc\n", 5));
        if (kind == FIXTURE_JUDGE) RLVR_TRY(write_at(f->hidden, "tests/judge.c", judge_c, strlen(judge_c)));
        else RLVR_TRY(write_at(f->hidden, "tests/hidden/run.sh", hidden_c, strlen(hidden_c)));
    } else {
        RLVR_TRY(write_at(f->repo, "src/calc.sh", sh_calc_broken, strlen(sh_calc_broken)));
        RLVR_TRY(write_at(f->repo, "tests/public/run.sh", public_sh, strlen(public_sh)));
        const char *hidden = kind == FIXTURE_FLAKY ? hidden_flaky : hidden_sh;
        RLVR_TRY(write_at(f->hidden, "tests/hidden/run.sh", hidden, strlen(hidden)));
    }
    RLVR_TRY(rlvr_git_init_commit_all(f->repo, "fixture base\n", f->base));
    /* the base tree id, via an export (also checks the export works) */
    snprintf(path, sizeof path, "%s/probe-export", f->root);
    RLVR_TRY(rlvr_git_export(f->repo, f->base, path, true, NULL, f->base_tree));
    RLVR_TRY(rlvr_fs_remove_tree(path));

    rlvr_verify_spec *s = &f->spec;
    s->version = RLVR_VERIFY_SPEC_VERSION;
    s->repo_dir = f->repo;
    s->base_commit = f->base;
    s->hidden_dir = f->hidden;
    if (kind == FIXTURE_JUDGE) {
        s->judge_build = "cc -O0 -w -o \"$RLVR_JUDGE_DIR/judge\" tests/judge.c";
        s->judge_argv = judge_argv;
        s->build_command = "make -s calc";
    } else {
        s->test_command = c ? "make -s calc >/dev/null 2>&1; sh tests/hidden/run.sh" : "sh tests/hidden/run.sh";
    }
    s->fail_to_pass = kind == FIXTURE_FLAKY ? flaky_f2p : sh_f2p;
    s->pass_to_pass = kind == FIXTURE_FLAKY ? flaky_p2p : sh_p2p;
    s->test_order = kind == FIXTURE_FLAKY ? NULL : sh_order;
    s->protected_globs = protected_globs;
    s->public_tests = public_tests;
    rlvr_sandbox_limits_default(&s->limits);
    s->limits.wall_s = 20;
    s->limits.cpu_s = 10;
    s->limits.memory_bytes = 256 << 20;
    s->limits.processes = 32;
    s->limits.file_bytes = 8 << 20;
    s->limits.output_bytes = 64 << 10;
    s->limits.tmp_bytes = 16 << 20;
    s->limits.disk_bytes = 32 << 20;
    s->consensus_runs = 3;
    return 0;
}

void fixture_free(fixture *f) {
    if (f->root) rlvr_fs_remove_tree(f->root);
    free(f->root);
    free(f->repo);
    free(f->hidden);
    memset(f, 0, sizeof *f);
}

int fixture_patch(const fixture *f, const fixture_edit *edits, size_t n_edits, char **patch, size_t *len) {
    return fixture_patch_repo(f->repo, f->base, f->root, edits, n_edits, patch, len);
}

int fixture_patch_repo(const char *repo, const char *base, const char *scratch, const fixture_edit *edits,
                       size_t n_edits, char **patch, size_t *len) {
    *patch = NULL;
    *len = 0;
    char *work = NULL;
    RLVR_TRY(rlvr_fs_mkdtemp(&work, scratch, "edit-"));
    char tree[41], git_dir[PATH_MAX];
    int rc = rlvr_fs_remove_tree(work);
    if (rc == 0) rc = rlvr_git_export(repo, base, work, false, NULL, tree);
    if (rc == 0) rc = apply_edits(work, edits, n_edits);
    snprintf(git_dir, sizeof git_dir, "%s/.git", repo);
    rlvr_extract_result r;
    if (rc == 0) rc = rlvr_diffgate_extract_dir(git_dir, tree, work, NULL, 8 << 20, &r);
    if (rc == 0) {
        *patch = r.patch;
        *len = r.len;
    }
    rlvr_fs_remove_tree(work);
    free(work);
    return rc;
}

rlvr_enclave_verdict fixture_verify(rlvr_verify_task *task, const char *patch, size_t len, uint64_t seed) {
    rlvr_enclave_verdict v;
    int rc = rlvr_verify_patch(task, patch, len, false, seed, &v);
    if (rc != 0) {
        fprintf(stderr, "rlvr_verify_patch: %s\n", rlvr_error_last());
        memset(&v, 0, sizeof v);
        v.verdict = RLVR_VERDICT_NONE;
        v.reason = -1;
    }
    return v;
}

int fixture_children(pid_t parent, pid_t *kids, int cap) {
    int n = 0;
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[300], buf[512];
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        ssize_t k = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (k <= 0) continue;
        buf[k] = 0;
        char *p = strrchr(buf, ')');
        int ppid = 0;
        if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1 || ppid != parent) continue;
        if (n < cap) kids[n] = (pid_t)atoi(e->d_name);
        n++;
    }
    if (d) closedir(d);
    return n;
}

int fixture_count_children(pid_t parent) { return fixture_children(parent, NULL, 0); }

int fixture_count_grandchildren(pid_t parent) {
    pid_t kids[256];
    int nk = fixture_children(parent, kids, 256), n = 0;
    for (int i = 0; i < nk && i < 256; i++) n += fixture_count_children(kids[i]);
    return n;
}

int fixture_count_entries(const char *dir) {
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) n += e->d_name[0] != '.';
    if (d) closedir(d);
    return n;
}

int fixture_host(rlvr_sandbox_host **out, bool overlay) { return fixture_host_paths(out, overlay, NULL); }

int fixture_variant(int argc, char **argv, bool *unprivileged, bool *copy, char **scratch, const char *prefix) {
    *unprivileged = *copy = false;
    for (int i = 1; i < argc; i++) {
        *unprivileged |= strcmp(argv[i], "--unprivileged") == 0;
        *copy |= strcmp(argv[i], "--copy") == 0;
    }
    if (*unprivileged && geteuid() == 0) return RLVR_FAIL(RLVR_EINVAL, "--unprivileged, but running as root");
    const char *tmp = getenv("TMPDIR");
    return rlvr_fs_mkdtemp(scratch, tmp ? tmp : "/tmp", prefix);
}

int fixture_host_paths(rlvr_sandbox_host **out, bool overlay, const char *system_paths) {
    rlvr_sandbox_host_options opt = RLVR_SANDBOX_HOST_OPTIONS_INIT;
    opt.overlay = overlay;
    opt.system_paths = system_paths;
    RLVR_TRY(rlvr_sandbox_host_new(out, &opt));
    printf("sandbox host: %s\n", rlvr_sandbox_host_describe(*out));
    return 0;
}
