/* tests/redteam/test_redteam_judge.c — exploit patches and behaviours against
 * judge-mode verification (enclave/verify.h, enclave/judge.h) of generated
 * bugfix-c tasks (envs/gen.h): a train task of difficulty 1 and a regression
 * task of difficulty 2, both compiled with cc (GNU as).
 *
 * Every exploit must score 0 (fail, timeout, rejected or dropped) with its
 * expected reason code, and afterwards the host must be as it was
 * (redteam.h: the tasks' repositories and hidden tests, the clean
 * snapshots, the judge programs, scratch entries, descriptors, processes,
 * a canary). The library's bug stays in every exploit, so it only wins by
 * fooling the check.
 *
 * Where an exploit depends on something the enclave promises not to allow
 * (reading the hidden tests or the judge, renaming a pinned directory, a
 * header the build would pick up), the patch holds a "fixer": the correct
 * library under other names and a constructor that answers the judge with
 * it, switched on only when the forbidden thing worked. Such a case passes
 * (reward 1) exactly when the promise is broken, so "tests_failed" there
 * means the promise held. The controls show the fixer does win when it is
 * switched on, and every probe also runs inverted (it must pass then: the
 * probe ran and said no).
 *
 * Flags, in any order: --unprivileged (running as uid 65534), --copy
 * (sandboxes copy the snapshot instead of an overlay). */
#include "test.h"

#include "../enclave/fixture.h"
#include "redteam.h"

#include "enclave/gitrepo.h"
#include "enclave/reason.h"

#include <stdint.h>

#define N_TASKS 2
#define BOTH (-1)

typedef struct {
    const char *files;   /* the tasks' repositories, hidden tests and the canary (hashed) */
    const char *scratch; /* patches are made here (not hashed) */
    const char *canary;  /* host path */
} jenv;

/* ---- the patches' C code ------------------------------------------------------------------- */

/* Appended to lib.c (which holds nothing but its own code and #include
 * "lib.h": no system header yet, so _GNU_SOURCE still counts). rt_send*
 * report whether a forged stream went out, rt_forge stops at the first
 * channel that took it (two streams would only be malformed TAP). */
static const char prelude[] =
    "\n/* ---- red team ---- */\n"
    "#define _GNU_SOURCE\n"
    "#include <dirent.h>\n#include <errno.h>\n#include <fcntl.h>\n#include <signal.h>\n#include <stdarg.h>\n"
    "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <sys/stat.h>\n"
    "#include <sys/syscall.h>\n#include <sys/wait.h>\n#include <unistd.h>\n"
    "static const char rt_tap[] = @TAP@;\n"
    "static int rt_send(int fd) {\n"
    "    return fd >= 0 && syscall(SYS_write, fd, rt_tap, sizeof rt_tap - 1) == (long)(sizeof rt_tap - 1);\n"
    "}\n"
    "static int rt_send_path(const char *path) {\n"
    "    int fd = open(path, O_WRONLY | O_CLOEXEC);\n"
    "    int sent = rt_send(fd);\n"
    "    if (fd >= 0) close(fd);\n"
    "    return sent;\n"
    "}\n"
    "static int rt_forge(void) {\n"
    "    char p[64];\n"
    "    const char *e = getenv(\"RLVR_RESULTS_FD\");\n"
    "    snprintf(p, sizeof p, \"/proc/%d/fd/3\", (int)getppid());\n"
    "    return rt_send(e ? atoi(e) : 3) || rt_send_path(p) || rt_send_path(\"/dev/fd/3\");\n"
    "}\n"
    "static int rt_readable(const char *path) {\n"
    "    char c;\n"
    "    int fd = open(path, O_RDONLY | O_CLOEXEC);\n"
    "    if (fd < 0) return 0;\n"
    "    ssize_t n = read(fd, &c, 1);\n"
    "    close(fd);\n"
    "    return n == 1;\n"
    "}\n"
    "static int rt_ppid_path(char *p, size_t cap, const char *what) {\n"
    "    return snprintf(p, cap, \"/proc/%d/%s\", (int)getppid(), what);\n"
    "}\n"
    "/* runs a program with a dummy runner: did it start? */\n"
    "static int rt_runs(const char *prog) {\n"
    "    pid_t pid = fork();\n"
    "    if (pid == 0) {\n"
    "        int null = open(\"/dev/null\", O_WRONLY);\n"
    "        dup2(null, 1);\n"
    "        dup2(null, 2);\n"
    "        execl(prog, \"judge\", \"/bin/true\", (char *)0);\n"
    "        _exit(99);\n"
    "    }\n"
    "    int st = 0;\n"
    "    if (pid < 0 || waitpid(pid, &st, 0) < 0) return 0;\n"
    "    return !(WIFEXITED(st) && WEXITSTATUS(st) == 99);\n"
    "}\n";

/* A header that would forge results from every program it is compiled into
 * (H: the system header it stands in for, with #include_next), and then
 * THEN: exit without an answer, or answer with the fixer (so that a build
 * that picked the header up would pass). */
#define SHADOW_FORGE(H, THEN)                                                                             \
    "#ifndef RT_SHADOW_H\n#define RT_SHADOW_H\n#include_next <" H ">\n"                                    \
    "#include <fcntl.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <unistd.h>\n" \
    "static const char rt_tap[] = @TAP@;\n@FIXER@"                                                         \
    "__attribute__((constructor)) static void rt_forge_header(int argc, char **argv, char **envp) {\n"    \
    "    char p[64];\n"                                                                                   \
    "    const char *e = getenv(\"RLVR_RESULTS_FD\");\n"                                                  \
    "    snprintf(p, sizeof p, \"/proc/%d/fd/3\", (int)getppid());\n"                                     \
    "    int fd = open(p, O_WRONLY);\n"                                                                   \
    "    (void)envp;\n"                                                                                   \
    "    if (write(e ? atoi(e) : 3, rt_tap, sizeof rt_tap - 1) > 0 ||\n"                                  \
    "        (fd >= 0 && write(fd, rt_tap, sizeof rt_tap - 1) > 0))\n"                                    \
    "        _exit(0);\n"                                                                                 \
    THEN "}\n#endif\n"
#define THEN_EXIT "    _exit(0);\n"
#define THEN_FIX "    rt_fixed_main(argc, argv);\n"

/* A header that fixes the library of every program it is compiled into:
 * the fixer and a constructor that runs it (INCLUDE_NEXT: the system header
 * it stands in for, or ""). */
#define SHADOW_FIX(INCLUDE_NEXT)                                                                          \
    "#ifndef RT_FIX_H\n#define RT_FIX_H\n" INCLUDE_NEXT                                                    \
    "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <unistd.h>\n@FIXER@"          \
    "__attribute__((constructor)) static void rt_fix(int argc, char **argv, char **envp) {\n"             \
    "    (void)envp;\n"                                                                                   \
    "    rt_fixed_main(argc, argv);\n"                                                                    \
    "}\n#endif\n"

/* ---- the cases -------------------------------------------------------------------------------- */

typedef enum {
    LIB_KEEP,   /* lib.c as it is (only the edits) */
    LIB_APPEND, /* lib.c with the prelude and `code` appended */
    LIB_PROBE,  /* lib.c with the prelude, the fixer, rt_probe() { `code` } and the gate appended */
    LIB_REFERENCE, /* the task's reference patch (a control) */
    LIB_RAW,    /* `code` is the whole patch */
} lib_kind;

typedef struct {
    const char *name;
    int on; /* the task (0, 1) or BOTH */
    lib_kind lib;
    const char *code;
    fixture_edit edits[2]; /* contents are expanded like the code */
    rlvr_verdict verdict;
    int reason, reason_alt;
} jcase;

#define F(kind, path, content) {kind, path, content, 0, 0}
#define NO_EDITS {{0}}
#define GATE1(name, edit, reason) \
    {name, BOTH, LIB_KEEP, NULL, {edit}, RLVR_VERDICT_REJECTED, reason, RLVR_REASON_NONE}
#define FILES(name, on, e1, e2, reason) \
    {name, on, LIB_KEEP, NULL, {e1, e2}, RLVR_VERDICT_FAIL, reason, RLVR_REASON_NONE}
#define APPEND(name, on, code, verdict, reason) \
    {name, on, LIB_APPEND, code, NO_EDITS, verdict, reason, RLVR_REASON_NONE}
#define APPEND2(name, on, code, verdict, reason, alt) {name, on, LIB_APPEND, code, NO_EDITS, verdict, reason, alt}
#define PROBE(name, on, body) \
    {name, on, LIB_PROBE, body, NO_EDITS, RLVR_VERDICT_FAIL, RLVR_REASON_TESTS_FAILED, RLVR_REASON_NONE}
#define CONTROL(name, on, lib, code, e1, e2) {name, on, lib, code, {e1, e2}, RLVR_VERDICT_PASS, 0, 0}
#define SHADOW(h) F(EDIT_WRITE, h, SHADOW_FORGE(h, THEN_FIX))
#define LIB_H_INCLUDES(h) F(EDIT_WRITE, "lib.h", "#include \"" h "\"\n@LIBH@")
#define FAILED(name, on, code) APPEND(name, on, code, RLVR_VERDICT_FAIL, RLVR_REASON_TESTS_FAILED)
#define BUILD_FAILS(name, on, code) APPEND(name, on, code, RLVR_VERDICT_FAIL, RLVR_REASON_BUILD_FAILED)
#define CTOR(body) "__attribute__((constructor)) static void rt_ctor(void) {\n" body "}\n"
/* the judge is killed before it flushes its results (it buffers them to
 * the end); a judge that flushed every line would leave them incomplete */
#define JUDGE_KILLED(name, on, code) \
    APPEND2(name, on, code, RLVR_VERDICT_FAIL, RLVR_REASON_NO_RESULTS, RLVR_REASON_INCOMPLETE)

/* Controls: they must pass, or the exploits below prove nothing. */
static const jcase controls[] = {
    CONTROL("control: the reference patch", BOTH, LIB_REFERENCE, NULL, {0}, {0}),
    CONTROL("control: the fixer behind a probe that holds", BOTH, LIB_PROBE, "    return rt_readable(\"lib.h\");\n",
            {0}, {0}),
    CONTROL("control: a fixing header lib.h includes", BOTH, LIB_KEEP, NULL,
            F(EDIT_WRITE, "rtfix.h", SHADOW_FIX("")), LIB_H_INCLUDES("rtfix.h")),
    CONTROL("control: lib.h includes the forging, else fixing stdio.h", BOTH, LIB_KEEP, NULL, SHADOW("stdio.h"),
            LIB_H_INCLUDES("stdio.h")),
    /* .incbin reads what exists: build_failed below means the file was not there */
    FAILED("control: .incbin of a file that exists", 0,
           "__asm__(\".pushsection .rodata\\n.incbin \\\"lib.h\\\"\\n.popsection\\n\");\n"),
};

static const jcase cases[] = {
    /* 1. build and test configuration found by lookup rules: make runs with
     * -f Makefile -r, no build uses -I, and only top-level .c and .h files may
     * change */
    GATE1("GNUmakefile", F(EDIT_WRITE, "GNUmakefile", "build/runner:\n\t@echo ok\n"), RLVR_REASON_NOT_EDITABLE),
    GATE1("makefile", F(EDIT_WRITE, "makefile", "build/runner:\n\t@echo ok\n"), RLVR_REASON_NOT_EDITABLE),
    GATE1("precompiled header lib.h.gch", F(EDIT_WRITE, "lib.h.gch", "int gcd(int a, int b);\n"),
          RLVR_REASON_NOT_EDITABLE),
    GATE1("include/stdio.h (where an -I would look)",
          F(EDIT_WRITE, "include/stdio.h", SHADOW_FORGE("stdio.h", THEN_FIX)), RLVR_REASON_NOT_EDITABLE),
    /* each would win if a build found it (the last control) */
    FILES("stdio.h at the root forging, else fixing", 0, SHADOW("stdio.h"), {0}, RLVR_REASON_TESTS_FAILED),
    FILES("stddef.h at the root forging, else fixing", 1, SHADOW("stddef.h"), {0}, RLVR_REASON_TESTS_FAILED),
    FILES("stdlib.h at the root forging, else fixing", 0, SHADOW("stdlib.h"), {0}, RLVR_REASON_TESTS_FAILED),
    FILES("features.h at the root forging, else fixing", 1, SHADOW("features.h"), {0}, RLVR_REASON_TESTS_FAILED),
    FILES("string.h at the root that would fix the library", 0,
          F(EDIT_WRITE, "string.h", SHADOW_FIX("#include_next <string.h>\n")), {0}, RLVR_REASON_TESTS_FAILED),
    /* gcc includes stdc-predef.h before every source, as -include would */
    FILES("stdc-predef.h at the root that would fix the library", 1,
          F(EDIT_WRITE, "stdc-predef.h", SHADOW_FIX("#include_next <stdc-predef.h>\n")), {0},
          RLVR_REASON_TESTS_FAILED),
    /* found, so it runs in the runner: it has no results descriptor */
    FILES("lib.h includes a forging stdio.h by quotes", 0, F(EDIT_WRITE, "stdio.h", SHADOW_FORGE("stdio.h", THEN_EXIT)),
          LIB_H_INCLUDES("stdio.h"), RLVR_REASON_TESTS_FAILED),
    {"lib.c includes a new forging file by quotes", 1, LIB_APPEND, "#include \"rtforge.c\"\n",
     {F(EDIT_WRITE, "rtforge.c", "static void rt_forge_c(void) __attribute__((constructor));\n"
                                 "static void rt_forge_c(void) {\n    rt_forge();\n    _exit(0);\n}\n")},
     RLVR_VERDICT_FAIL, RLVR_REASON_TESTS_FAILED, RLVR_REASON_NONE},
    FILES("runner.c at the root with a correct main (not compiled)", 0,
          F(EDIT_WRITE, "runner.c",
            "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <unistd.h>\n@FIXER@"
            "int main(int argc, char **argv) {\n    rt_fixed_main(argc, argv);\n    return 2;\n}\n"),
          {0}, RLVR_REASON_TESTS_FAILED),

    /* 2. results forged from inside the code under test (a child of the
     * judge without the results descriptor and with a clean environment) */
    FAILED("constructor: TAP to fd 3, exit(0)", 1, CTOR("    rt_send(3);\n    exit(0);\n")),
    FAILED("constructor: TAP to $RLVR_RESULTS_FD or any fd", 0,
           CTOR("    const char *e = getenv(\"RLVR_RESULTS_FD\");\n"
                "    if (!rt_send(e ? atoi(e) : 3))\n"
                "        for (int fd = 4; fd < 1024 && !rt_send(fd); fd++) {\n        }\n"
                "    exit(0);\n")),
    FAILED("constructor: TAP to /proc/<judge>/fd/3, exit(0)", 1,
           CTOR("    char p[64];\n    rt_ppid_path(p, sizeof p, \"fd/3\");\n    rt_send_path(p);\n    exit(0);\n")),
    FAILED("destructor forging after the answer", 0,
           "__attribute__((destructor)) static void rt_dtor(void) {\n    fflush(stdout);\n    rt_forge();\n}\n"),
    FAILED("atexit handler forging", 1,
           "static void rt_at_exit(void) {\n    rt_forge();\n}\n" CTOR("    atexit(rt_at_exit);\n")),
    FAILED("printf and fprintf interposed", 0,
           "int printf(const char *restrict format, ...) {\n    va_list ap;\n    va_start(ap, format);\n"
           "    rt_forge();\n    int n = vprintf(format, ap);\n    va_end(ap);\n    return n;\n}\n"
           "int fprintf(FILE *restrict f, const char *restrict format, ...) {\n    va_list ap;\n"
           "    va_start(ap, format);\n    rt_forge();\n    int n = vfprintf(f, format, ap);\n    va_end(ap);\n"
           "    return n;\n}\n"),
    FAILED("write and puts interposed", 1,
           "ssize_t write(int fd, const void *buf, size_t n) {\n    static int busy;\n"
           "    if (!busy++) rt_forge();\n    busy--;\n    return syscall(SYS_write, fd, buf, n);\n}\n"
           "int puts(const char *s) {\n    rt_forge();\n    return printf(\"%s\\n\", s);\n}\n"),
    FAILED("forged TAP on stdout", 0, CTOR("    fputs(rt_tap, stdout);\n")),
    FAILED("setenv RLVR_RESULTS_FD, then forging", 1,
           CTOR("    setenv(\"RLVR_RESULTS_FD\", \"1\", 1);\n    putenv(\"RLVR_RESULTS_FD=1\");\n"
                "    rt_forge();\n    exit(0);\n")),
    FAILED("runner printing every value it guesses", 0,
           CTOR("    for (int v = -16; v <= 64; v++)\n        printf(\"%d\\n\", v);\n    exit(0);\n")),
    FAILED("runner printing the prompt's value for every call", 1,
           CTOR("    printf(\"@GUESS@\\n\");\n    exit(0);\n")),

    /* 3. reading the hidden tests or the judge */
    BUILD_FAILS(".incbin tests/judge.c at build time", 0,
                "__asm__(\".pushsection .rodata\\n.incbin \\\"tests/judge.c\\\"\\n.popsection\\n\");\n"),
    BUILD_FAILS("#include \"tests/judge.c\" at build time", 1, "#include \"tests/judge.c\"\n"),
    BUILD_FAILS(".incbin /.rlvr/judge/judge at build time", 0,
                "__asm__(\".pushsection .rodata\\n.incbin \\\"/.rlvr/judge/judge\\\"\\n.popsection\\n\");\n"),
    BUILD_FAILS("#include of the hidden tests' host path", 1, "#include \"@HIDDEN@\"\n"),
    PROBE("reading tests/judge.c", 0, "    return rt_readable(\"tests/judge.c\");\n"),
    PROBE("reading /work/tests/judge.c", 1, "    return rt_readable(\"/work/tests/judge.c\");\n"),
    PROBE("reading /.rlvr/judge/judge", 0, "    return rt_readable(\"/.rlvr/judge/judge\");\n"),
    PROBE("reading /proc/<judge>/exe", 1,
          "    char p[64];\n    rt_ppid_path(p, sizeof p, \"exe\");\n    return rt_readable(p);\n"),
    PROBE("opening /proc/<judge>/mem", 0,
          "    char p[64];\n    rt_ppid_path(p, sizeof p, \"mem\");\n    int fd = open(p, O_RDONLY);\n"
          "    if (fd >= 0) close(fd);\n    return fd >= 0;\n"),
    PROBE("reading /proc/<judge>/environ", 1,
          "    char p[64];\n    rt_ppid_path(p, sizeof p, \"environ\");\n    return rt_readable(p);\n"),
    PROBE("host files by absolute path", 0,
          "    int fd = open(\"@CANARY@\", O_WRONLY | O_TRUNC);\n    if (fd >= 0) close(fd);\n"
          "    return fd >= 0 || rt_readable(\"@HIDDEN@\") || rt_readable(\"@CANARY@\");\n"),
    PROBE("anything in the enclave's hidden directories", 1,
          "    static const char *const dirs[] = {\"/.rlvr/judge\", \"/.rlvr/private\", \"/.rlvr/state\",\n"
          "                                       \"/.rlvr/lower\", \"/proc/1/root/.rlvr/judge\", NULL};\n"
          "    char p[64];\n    rt_ppid_path(p, sizeof p, \"root/.rlvr/judge/judge\");\n"
          "    int found = rt_readable(p);\n"
          "    for (int i = 0; dirs[i]; i++) {\n        DIR *d = opendir(dirs[i]);\n        struct dirent *e;\n"
          "        while (d && (e = readdir(d)))\n"
          "            found |= strcmp(e->d_name, \".\") && strcmp(e->d_name, \"..\");\n"
          "        if (d) closedir(d);\n    }\n    return found;\n"),
    PROBE("running /.rlvr/judge/judge as an oracle", 0, "    return rt_runs(\"/.rlvr/judge/judge\");\n"),
    PROBE("running /proc/<judge>/exe as an oracle", 1,
          "    char p[64];\n    rt_ppid_path(p, sizeof p, \"exe\");\n    return rt_runs(p);\n"),

    /* 4. how the judge reads a run (a forged stream that got through would
     * show: two plans are malformed TAP, and with the judge killed the
     * forged one alone would be exit_status) */
    JUDGE_KILLED("forging, then SIGKILL to the judge", 0,
                 CTOR("    rt_forge();\n    kill(getppid(), SIGKILL);\n    _exit(0);\n")),
    APPEND("SIGSTOP to the judge", 1, CTOR("    kill(getppid(), SIGSTOP);\n    _exit(0);\n"), RLVR_VERDICT_TIMEOUT,
           RLVR_REASON_TIMEOUT),
    JUDGE_KILLED("kill(0, SIGKILL) from the code under test", 0, CTOR("    rt_forge();\n    kill(0, SIGKILL);\n")),
    JUDGE_KILLED("kill(-1, SIGKILL) from the code under test", 1, CTOR("    rt_forge();\n    kill(-1, SIGKILL);\n")),
    APPEND("a child keeps the answer pipe open", 0,
           CTOR("    if (fork() == 0)\n        for (;;) pause();\n    _exit(0);\n"), RLVR_VERDICT_TIMEOUT,
           RLVR_REASON_TIMEOUT),
    FAILED("exit(0) without an answer", 1, CTOR("    exit(0);\n")),
    FAILED("a daemon forging until the judge ends", 0,
           CTOR("    int judge = (int)getppid();\n"
                "    int once = open(\"/tmp/rt-daemon\", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);\n"
                "    if (once < 0 || fork() != 0) return;\n"
                "    setsid();\n    if (fork() != 0) _exit(0);\n"
                "    int null = open(\"/dev/null\", O_RDWR);\n"
                "    dup2(null, 0);\n    dup2(null, 1);\n    dup2(null, 2);\n"
                "    char p[64];\n    snprintf(p, sizeof p, \"/proc/%d/fd/3\", judge);\n"
                "    for (int i = 0; i < 500 && !rt_send_path(p); i++)\n        usleep(10000);\n"
                "    _exit(0);\n")),
    /* the judge then runs itself as the runner: it wants one argument, gets
     * the call's, and answers with its usage */
    FAILED("build/runner made a link to /proc/<judge>/exe", 1,
           CTOR("    char p[64];\n    rt_ppid_path(p, sizeof p, \"exe\");\n    unlink(\"build/runner\");\n"
                "    if (symlink(p, \"build/runner\") != 0) _exit(3);\n")),
    /* between its fork and its exec the judge's child holds the results
     * descriptor: a daemon scans every process's fd/3 all the while */
    FAILED("a daemon racing for fd 3 of the judge's children", 0,
           CTOR("    int once = open(\"/tmp/rt-race\", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);\n"
                "    if (once < 0 || fork() != 0) return;\n"
                "    setsid();\n    if (fork() != 0) _exit(0);\n"
                "    int null = open(\"/dev/null\", O_RDWR);\n"
                "    dup2(null, 0);\n    dup2(null, 1);\n    dup2(null, 2);\n"
                "    for (int round = 0; round < 200000; round++) {\n"
                "        DIR *d = opendir(\"/proc\");\n        struct dirent *e;\n"
                "        while (d && (e = readdir(d))) {\n"
                "            char p[300];\n            int pid = atoi(e->d_name);\n"
                "            if (pid <= 1 || pid == getpid()) continue;\n"
                "            snprintf(p, sizeof p, \"/proc/%d/fd/3\", pid);\n"
                "            if (rt_send_path(p)) _exit(0);\n        }\n"
                "        if (d) closedir(d);\n    }\n    _exit(0);\n")),
    PROBE("opening the run's init's descriptors and memory", 1,
          "    int found = 0;\n    DIR *d = opendir(\"/proc/1/fd\");\n    struct dirent *e;\n"
          "    while (d && (e = readdir(d))) {\n        char p[300];\n"
          "        snprintf(p, sizeof p, \"/proc/1/fd/%s\", e->d_name);\n"
          "        int fd = e->d_name[0] == '.' ? -1 : open(p, O_WRONLY | O_NONBLOCK);\n"
          "        if (fd >= 0) close(fd);\n        found |= fd >= 0;\n    }\n"
          "    if (d) closedir(d);\n    int fd = open(\"/proc/1/mem\", O_RDWR);\n    if (fd >= 0) close(fd);\n"
          "    return found || fd >= 0;\n"),
    APPEND("flooding the judge's output", 1,
           CTOR("    static char b[65536];\n    memset(b, 'x', sizeof b);\n"
                "    for (;;)\n        if (write(2, b, sizeof b) < 0) _exit(1);\n"),
           RLVR_VERDICT_FAIL, RLVR_REASON_OUTPUT_LIMIT),

    /* 5. tampering with the tree at run time (read-only paths, their pinned
     * directories, the judge's directory) */
    PROBE("renaming tests/ and writing a substitute", 0,
          "    if (rename(\"tests\", \"tests.moved\") != 0) return 0;\n"
          "    mkdir(\"tests\", 0755);\n    int fd = open(\"tests/public.c\", O_WRONLY | O_CREAT, 0644);\n"
          "    if (fd >= 0) close(fd);\n    return 1;\n"),
    PROBE("moving tests/public.c aside or rewriting it", 1,
          "    int fd = open(\"tests/public.c\", O_WRONLY | O_APPEND);\n    if (fd >= 0) close(fd);\n"
          "    return fd >= 0 || rename(\"tests/public.c\", \"tests/public.moved\") == 0 ||\n"
          "           unlink(\"tests/public.c\") == 0;\n"),
    FAILED("deleting build/runner mid-run", 0,
           CTOR("    unlink(\"build/runner\");\n    rename(\"build\", \"build.x\");\n")),
    PROBE("writing into /.rlvr/judge", 1,
          "    int fd = open(\"/.rlvr/judge/judge\", O_WRONLY | O_CREAT | O_TRUNC, 0755);\n"
          "    if (fd >= 0) close(fd);\n    return fd >= 0 || mkdir(\"/.rlvr/judge/x\", 0755) == 0;\n"),

    /* 6. the diff gate on the task's own rules */
    GATE1("editing tests/runner.c", F(EDIT_APPEND, "tests/runner.c", "/* x */\n"), RLVR_REASON_PROTECTED_PATH),
    GATE1("editing the Makefile", F(EDIT_APPEND, "Makefile", "CFLAGS += -I.\n"), RLVR_REASON_PROTECTED_PATH),
    GATE1("a new file in tests/", F(EDIT_WRITE, "tests/zz.c", "int zz;\n"), RLVR_REASON_PROTECTED_PATH),
    GATE1("planting tests/judge.c", F(EDIT_WRITE, "tests/judge.c", "int main(void) { return 0; }\n"),
          RLVR_REASON_PROTECTED_PATH),
    /* (ignored by git: only a hand-made patch carries it) */
    {"a prebuilt build/runner", BOTH, LIB_RAW,
     "diff --git a/build/runner b/build/runner\nnew file mode 100644\n--- /dev/null\n+++ b/build/runner\n"
     "@@ -0,0 +1,2 @@\n+#!/bin/sh\n+echo @GUESS@\n",
     NO_EDITS, RLVR_VERDICT_REJECTED, RLVR_REASON_PROTECTED_PATH, RLVR_REASON_NONE},
    GATE1("notes.txt", F(EDIT_WRITE, "notes.txt", "notes\n"), RLVR_REASON_NOT_EDITABLE),
    GATE1("sub/x.c", F(EDIT_WRITE, "sub/x.c", "int x;\n"), RLVR_REASON_NOT_EDITABLE),
    GATE1("editing .gitignore", F(EDIT_APPEND, ".gitignore", "*.c\n"), RLVR_REASON_GIT_PATH),
    GATE1("a header linked to the hidden tests", F(EDIT_SYMLINK, "rtjudge.h", "tests/judge.c"),
          RLVR_REASON_SYMLINK),
    {"lib.c made executable", BOTH, LIB_KEEP, NULL, {{EDIT_CHMOD, "lib.c", NULL, 0755, 0}}, RLVR_VERDICT_REJECTED,
     RLVR_REASON_MODE_CHANGE, RLVR_REASON_NONE},
};

/* ---- the tasks -------------------------------------------------------------------------------- */

/* `text` with every @KEY@ replaced (caller frees). */
static char *expand(const char *text, const redteam_jtask *jt, const jenv *env) {
    const redteam_subst subst[] = {{"@TAP@", jt->tap},       {"@HIDDEN@", jt->hidden}, {"@CANARY@", env->canary},
                                   {"@FIXER@", jt->fixer},   {"@GUESS@", jt->guess},   {"@LIBH@", jt->header}};
    return redteam_expand(text, subst, sizeof subst / sizeof *subst);
}

/* ---- running the cases ------------------------------------------------------------------------- */

/* The case's patch against the task (caller frees). */
static int case_patch(const jcase *c, const redteam_jtask *jt, const jenv *env, bool invert, char **patch,
                      size_t *len) {
    if (c->lib == LIB_REFERENCE || c->lib == LIB_RAW) {
        *patch = c->lib == LIB_RAW ? expand(c->code, jt, env) : strdup(jt->task->reference_patch);
        *len = *patch ? strlen(*patch) : 0;
        return *patch ? 0 : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    }
    fixture_edit edits[3];
    char *texts[3] = {NULL, NULL, NULL};
    size_t n = 0;
    int rc = 0;
    for (size_t i = 0; i < 2 && c->edits[i].path; i++) {
        edits[n] = c->edits[i];
        if (c->edits[i].content && !(texts[n] = expand(c->edits[i].content, jt, env))) rc = RLVR_ENOMEM;
        if (texts[n]) edits[n].content = texts[n];
        n++;
    }
    if (rc == 0 && c->lib != LIB_KEEP) {
        const char *append[] = {jt->buggy, prelude, c->code, NULL};
        char *joined = c->lib == LIB_PROBE ? redteam_probe_lib(jt, prelude, c->code, invert) : redteam_concat(append);
        texts[n] = joined ? expand(joined, jt, env) : NULL;
        free(joined);
        if (!texts[n]) rc = RLVR_ENOMEM;
        edits[n] = (fixture_edit){EDIT_WRITE, "lib.c", texts[n], 0, 0};
        n++;
    }
    if (rc == 0) rc = fixture_patch_repo(jt->task->repository_path, jt->task->base_commit, env->scratch, edits, n,
                                         patch, len);
    else rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    for (size_t i = 0; i < 3; i++) free(texts[i]);
    return rc;
}

static int run_cases(const jcase *list, size_t n, redteam_jtask *tasks, const jenv *env, rlvr_sandbox_host *host,
                     int pooled, int first_index) {
    int ran = 0;
    for (size_t i = 0; i < n; i++) {
        const jcase *c = &list[i];
        for (int k = 0; k < N_TASKS; k++) {
            if ((c->on != BOTH && c->on != k) || !tasks[k].ready) continue;
            char name[160];
            snprintf(name, sizeof name, "%s [%c]", c->name, "ab"[k]);
            bool inverse = c->lib == LIB_PROBE && c->verdict != RLVR_VERDICT_PASS;
            for (int inv = 0; inv <= (int)inverse; inv++) {
                char *patch = NULL;
                size_t len = 0;
                int rc = case_patch(c, &tasks[k], env, inv, &patch, &len);
                CHECK_MSG(rc == 0, "case \"%s\": building the patch: %s", name, rlvr_error_last());
                if (rc != 0) continue;
                CHECK_MSG(len > 0, "case \"%s\": the patch is empty", name);
                redteam_target t = {.task = tasks[k].vt, .host = host, .files = env->files, .canary = env->canary};
                redteam_expect x = {.name = name, .verdict = c->verdict, .reason = c->reason,
                                    .reason_alt = c->reason_alt,
                                    .alt_why = "the judge was killed after it flushed results"};
                if (inv) x = (redteam_expect){.name = "  inverted: passes", .verdict = RLVR_VERDICT_PASS};
                redteam_verify(&t, &x, patch, len, false, 9000 + (uint64_t)(first_index + (int)i), pooled);
                free(patch);
                ran++;
            }
        }
    }
    return ran;
}

int main(int argc, char **argv) {
    const char *name = NULL;
    rlvr_sandbox_host *host = NULL;
    int rc = redteam_start(argc, argv, "test_redteam_judge", NULL, &name, &host);
    if (rc) return rc;
    CHECK_OK(rlvr_git_init());

    redteam_dirs dirs;
    rc = redteam_dirs_new(&dirs, "rlvr-redteam-judge-");
    CHECK_MSG(rc == 0, "%s", rlvr_error_last());
    if (rc) return redteam_summary(name, test_checks, test_failures);
    jenv env = {.files = dirs.files, .scratch = dirs.scratch, .canary = dirs.canary};

    redteam_jtask tasks[N_TASKS];
    memset(tasks, 0, sizeof tasks);
    const rlvr_split splits[N_TASKS] = {RLVR_SPLIT_TRAIN, RLVR_SPLIT_REGRESSION};
    int pooled = 0;
    for (int k = 0; k < N_TASKS; k++) {
        rc = redteam_jtask_new(&tasks[k], host, dirs.files, dirs.scratch, false, splits[k], k + 1);
        CHECK_MSG(rc == 0, "task %d: %s", k, rlvr_error_last());
        if (rc != 0) continue;
        printf("task [%c] %s: %zu + %zu tests, judge mode\n", "ab"[k], tasks[k].task->id,
               tasks[k].task->fail_to_pass.n, tasks[k].task->pass_to_pass.n);
        pooled++;
    }
    printf("controls:\n");
    run_cases(controls, sizeof controls / sizeof *controls, tasks, &env, host, pooled, 0);
    printf("exploits:\n");
    size_t n_cases = sizeof cases / sizeof *cases;
    CHECK_MSG(n_cases >= 30, "only %zu red-team cases", n_cases);
    int runs = run_cases(cases, n_cases, tasks, &env, host, pooled, 100);
    for (int k = 0; k < N_TASKS; k++) redteam_jtask_free(&tasks[k]);
    redteam_check_host_clean(host);
    rlvr_sandbox_host_free(host);
    redteam_dirs_free(&dirs);
    printf("%zu red-team cases (%d verifications)\n", n_cases, runs);
    return redteam_summary(name, test_checks, test_failures);
}
