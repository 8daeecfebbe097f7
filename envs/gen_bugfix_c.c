/* envs/gen_bugfix_c.c — the "bugfix-c" family: a small C library with one
 * planted bug, in its own git repository, with public and hidden tests. */
#include "core/config.h"
#include "core/error.h"
#include "envs/bugfix_c_units.h"
#include "envs/gen_internal.h"
#include "envs/tools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SLOTS 4
#define MAX_TESTS 32
#define MAX_ATTEMPTS 1000

/* Templates of train and eval; the regression split uses only the others. */
static const int trained[] = {BUG_OFF_BY_ONE, BUG_WRONG_OPERATOR, BUG_WRONG_CONSTANT, BUG_MISSING_CASE,
                              BUG_WRONG_CONDITION};
static const int held_out[] = {BUG_SWAPPED_ARGUMENTS, BUG_WRONG_VARIABLE};
#define N_TRAINED (int)(sizeof trained / sizeof trained[0])
#define N_HELD_OUT (int)(sizeof held_out / sizeof held_out[0])

int gen_bugfix_c_templates(rlvr_split split, const char **names, int cap) {
    const int *list = split == RLVR_SPLIT_REGRESSION ? held_out : trained;
    int n = split == RLVR_SPLIT_REGRESSION ? N_HELD_OUT : N_TRAINED;
    for (int i = 0; i < n && i < cap; i++) names[i] = bc_bug_names[list[i]];
    return n;
}

/* One repository: the units in file order, their constants, the bug. */
typedef struct {
    int n_slots;
    int unit[MAX_SLOTS];
    long k[MAX_SLOTS][BC_MAX_CONSTS];
    int bug_slot, bug_edit, bug_kind;
} library;

typedef struct {
    int slot, func;
    long a[BC_MAX_ARGS];
    long expected; /* correct code */
    long buggy;    /* with the planted bug */
    char name[48];
} test_case;

/* The chosen tests and the wrong patches' edits. */
typedef struct {
    test_case tests[MAX_TESTS];
    int n_tests;
    int n_fail;          /* tests[0 .. n_fail-1] are FAIL_TO_PASS before shuffling */
    int public_fail;     /* index of the public failing case */
    int public_pass[2];  /* indices of the public passing cases (-1: none) */
    int near_miss_edit;  /* another edit on the bug's line that still fails (-1: none) */
    int other_slot, other_edit; /* an unrelated edit elsewhere */
} test_plan;

static const bc_unit *unit_of(const library *lib, int slot) { return &bc_units[lib->unit[slot]]; }

/* ---- text of the library --------------------------------------------------------- */

/* lib.c with edits[slot] applied to each slot (-1: none), and `insert`
 * placed after line `insert_line` of `insert_slot` (insert == NULL: none). */
static int render_lib(rlvr_text *out, const library *lib, const int *edits, int insert_slot, int insert_line,
                      const char *insert) {
    rlvr_text_printf(out, "#include \"lib.h\"\n");
    for (int s = 0; s < lib->n_slots; s++) {
        const bc_unit *u = unit_of(lib, s);
        rlvr_text_printf(out, "\n");
        for (int l = 0; u->lines[l]; l++) {
            RLVR_TRY(bc_render_line(out, u, lib->k[s], l, edits[s]));
            if (insert && s == insert_slot && l == insert_line) rlvr_text_printf(out, "%s\n", insert);
        }
    }
    return gen_text_check(out);
}

static void render_header(rlvr_text *out, const library *lib) {
    rlvr_text_printf(out, "#ifndef LIB_H\n#define LIB_H\n\n");
    for (int s = 0; s < lib->n_slots; s++) {
        const bc_unit *u = unit_of(lib, s);
        for (int f = 0; f < bc_unit_n_funcs(u); f++) rlvr_text_printf(out, "%s\n", u->funcs[f].proto);
    }
    rlvr_text_printf(out, "\n#endif\n");
}

/* printf format: the compiler's name. Builds name every file: no -I (the
 * sources include "../lib.h" by its path), so no header the policy adds can
 * stand in for a system header; make is run with -f and -r, so no makefile
 * or built-in rule it would look up on its own is read. */
static const char makefile_format[] =
    "# make -f Makefile test: build and run the public tests (TAP on stdout).\n"
    "# make -f Makefile build/runner: the program the hidden tests call.\n"
    "CC = %s\n"
    "CFLAGS = -std=c11 -O0 -w\n"
    "\n"
    "test: build/public\n"
    "\t./build/public\n"
    "\n"
    "build/public: lib.c lib.h tests/public.c\n"
    "\t@mkdir -p build\n"
    "\t$(CC) $(CFLAGS) -o $@ lib.c tests/public.c\n"
    "\n"
    "build/runner: lib.c lib.h tests/runner.c\n"
    "\t@mkdir -p build\n"
    "\t$(CC) $(CFLAGS) -o $@ lib.c tests/runner.c\n"
    "\n"
    ".PHONY: test\n";

/* The public test command and the enclave's build of the code under test. */
#define PUBLIC_COMMAND "make -s -r -f Makefile test"
#define BUILD_COMMAND "make -s -r -B -f Makefile build/runner"

static void format_call(char *out, size_t cap, const library *lib, const test_case *t) {
    const bc_func *fn = &unit_of(lib, t->slot)->funcs[t->func];
    size_t n = (size_t)snprintf(out, cap, "%s(", fn->name);
    for (int i = 0; i < fn->n_args && n < cap; i++) n += (size_t)snprintf(out + n, cap - n, "%s%ld", i ? ", " : "", t->a[i]);
    if (n < cap) snprintf(out + n, cap - n, ")");
}

/* The names and expected values of a test program (TAP, the contract of
 * enclave/verify.h). */
static void render_table(rlvr_text *out, const test_case *tests, const int *which, int n) {
    rlvr_text_printf(out, "#define N %d\n\n", n);
    rlvr_text_printf(out, "static const char *names[N] = {");
    for (int i = 0; i < n; i++) rlvr_text_printf(out, "%s\"%s\"", i ? ", " : "", tests[which[i]].name);
    rlvr_text_printf(out, "};\n");
    rlvr_text_printf(out, "static const int expected[N] = {");
    for (int i = 0; i < n; i++) rlvr_text_printf(out, "%s%ld", i ? ", " : "", tests[which[i]].expected);
    rlvr_text_printf(out, "};\n");
}

/* plan_order(): RLVR_TEST_ORDER (test names separated by spaces) sets the
 * order, else RLVR_TEST_SEED=N shuffles it. */
static void render_plan_order(rlvr_text *out) {
    rlvr_text_printf(out,
                 "static void plan_order(int *order) {\n"
                 "    int n = 0, used[N] = {0};\n"
                 "    for (const char *p = getenv(\"RLVR_TEST_ORDER\"); p && *p;) {\n"
                 "        size_t len = strcspn(p, \" \");\n"
                 "        for (int i = 0; i < N; i++)\n"
                 "            if (!used[i] && strlen(names[i]) == len && strncmp(names[i], p, len) == 0) {\n"
                 "                used[i] = 1;\n"
                 "                order[n++] = i;\n"
                 "                break;\n"
                 "            }\n"
                 "        p += len;\n"
                 "        while (*p == ' ') p++;\n"
                 "    }\n"
                 "    int listed = n;\n"
                 "    for (int i = 0; i < N; i++)\n"
                 "        if (!used[i]) order[n++] = i;\n"
                 "    const char *seed = getenv(\"RLVR_TEST_SEED\");\n"
                 "    if (listed == 0 && seed && *seed) {\n"
                 "        unsigned long long s = strtoull(seed, NULL, 10);\n"
                 "        for (int i = N - 1; i > 0; i--) {\n"
                 "            s = s * 6364136223846793005ULL + 1442695040888963407ULL;\n"
                 "            int j = (int)((s >> 33) %% (unsigned long long)(i + 1));\n"
                 "            int t = order[i];\n"
                 "            order[i] = order[j];\n"
                 "            order[j] = t;\n"
                 "        }\n"
                 "    }\n"
                 "}\n\n");
}

/* The public tests: the library linked in, a failing test followed by a
 * comment saying what the call returned and what was expected (TAP on
 * stdout for the policy; RLVR_RESULTS_FD is honoured as the hidden tests'
 * contract has it). */
static void render_public_tests(rlvr_text *out, const library *lib, const test_case *tests, const int *which, int n) {
    rlvr_text_printf(out, "/* Public tests. TAP goes to $RLVR_RESULTS_FD (default stdout); $RLVR_TEST_ORDER\n"
                          " * (names) or $RLVR_TEST_SEED (a number) sets the order. */\n");
    rlvr_text_printf(out, "#define _POSIX_C_SOURCE 200809L /* fdopen */\n"
                          "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\n#include \"../lib.h\"\n\n");
    render_table(out, tests, which, n);
    rlvr_text_printf(out, "static const char *calls[N] = {");
    for (int i = 0; i < n; i++) {
        char call[128];
        format_call(call, sizeof call, lib, &tests[which[i]]);
        rlvr_text_printf(out, "%s\"%s\"", i ? ", " : "", call);
    }
    rlvr_text_printf(out, "};\n\nstatic int run(int i) {\n    switch (i) {\n");
    for (int i = 0; i < n; i++) {
        char call[128];
        format_call(call, sizeof call, lib, &tests[which[i]]);
        rlvr_text_printf(out, "    case %d: return %s;\n", i, call);
    }
    rlvr_text_printf(out, "    }\n    return 0;\n}\n\n");
    render_plan_order(out);
    rlvr_text_printf(out,
                 "int main(void) {\n"
                 "    const char *fd = getenv(\"RLVR_RESULTS_FD\");\n"
                 "    FILE *tap = fd && *fd ? fdopen(atoi(fd), \"w\") : NULL;\n"
                 "    if (!tap) tap = stdout;\n"
                 "    int order[N], failed = 0;\n"
                 "    plan_order(order);\n"
                 "    fprintf(tap, \"1..%%d\\n\", N);\n"
                 "    for (int k = 0; k < N; k++) {\n"
                 "        int i = order[k], got = run(i);\n"
                 "        fprintf(tap, \"%%s %%d - %%s\\n\", got == expected[i] ? \"ok\" : \"not ok\", k + 1, names[i]);\n"
                 "        if (got != expected[i])\n"
                 "            fprintf(tap, \"# %%s returned %%d, expected %%d\\n\", calls[i], got, expected[i]);\n"
                 "        failed += got != expected[i];\n"
                 "    }\n"
                 "    fflush(tap);\n"
                 "    return failed != 0;\n"
                 "}\n");
}

/* tests/runner.c (public): answers the judge's calls, one per line on
 * stdin ("sign -9"), with what the library returns, one line each. It holds
 * no expected value. */
static void render_runner(rlvr_text *out, const library *lib) {
    rlvr_text_printf(out, "/* The hidden tests run the library through this program: each line on stdin,\n"
                          " * NAME ARG..., is one call, answered by one line on stdout, what NAME(ARG...)\n"
                          " * returns. A line it does not understand ends it with exit status 2. */\n"
                          "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\n#include \"../lib.h\"\n\n"
                          "int main(void) {\n"
                          "    char line[256];\n"
                          "    while (fgets(line, sizeof line, stdin)) {\n"
                          "        char f[64], *p = line, *end;\n"
                          "        int a[%d] = {0}, n = 0;\n"
                          "        size_t len = strcspn(p, \" \\n\");\n"
                          "        if (len == 0 || len >= sizeof f) return 2;\n"
                          "        memcpy(f, p, len);\n"
                          "        f[len] = '\\0';\n"
                          "        for (p += len; *p == ' '; p = end) {\n"
                          "            long v = strtol(p + 1, &end, 10);\n"
                          "            if (end == p + 1 || n == %d) return 2;\n"
                          "            a[n++] = (int)v;\n"
                          "        }\n"
                          "        if (*p != '\\n') return 2;\n",
                     BC_MAX_ARGS, BC_MAX_ARGS);
    for (int s = 0; s < lib->n_slots; s++) {
        const bc_unit *u = unit_of(lib, s);
        for (int f = 0; f < bc_unit_n_funcs(u); f++) {
            const bc_func *fn = &u->funcs[f];
            rlvr_text_printf(out, "        %sif (strcmp(f, \"%s\") == 0 && n == %d)\n            printf(\"%%d\\n\", %s(",
                             s || f ? "else " : "", fn->name, fn->n_args, fn->name);
            for (int i = 0; i < fn->n_args; i++) rlvr_text_printf(out, "%sa[%d]", i ? ", " : "", i);
            rlvr_text_printf(out, "));\n");
        }
    }
    rlvr_text_printf(out, "        else\n            return 2;\n        fflush(stdout);\n    }\n    return 0;\n}\n");
}

/* tests/judge.c (hidden): the expected values and the TAP, with the code
 * under test out of its process. The runner runs in a child that holds
 * nothing but the two pipes of the calls and stderr (never the results
 * descriptor), with a clean environment; each test writes its call and
 * passes only when the answer line is exactly the expected value. After a
 * wrong answer (or none) the runner is killed and the next test starts a
 * fresh one: a crash fails its own test only. */
static void render_judge(rlvr_text *out, const library *lib, const test_case *tests, const int *which, int n) {
    rlvr_text_printf(out, "/* Hidden tests (the judge): judge RUNNER. TAP goes to $RLVR_RESULTS_FD (default\n"
                          " * stdout); $RLVR_TEST_ORDER (names) or $RLVR_TEST_SEED (a number) sets the order. */\n"
                          "#define _GNU_SOURCE\n#include <errno.h>\n#include <fcntl.h>\n#include <signal.h>\n"
                          "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <sys/prctl.h>\n"
                          "#include <sys/wait.h>\n#include <unistd.h>\n\n");
    render_table(out, tests, which, n);
    rlvr_text_printf(out, "static const char *const calls[N] = {");
    for (int i = 0; i < n; i++) {
        const test_case *t = &tests[which[i]];
        const bc_func *fn = &unit_of(lib, t->slot)->funcs[t->func];
        rlvr_text_printf(out, "%s\"%s", i ? ", " : "", fn->name);
        for (int a = 0; a < fn->n_args; a++) rlvr_text_printf(out, " %ld", t->a[a]);
        rlvr_text_printf(out, "\\n\"");
    }
    rlvr_text_printf(out, "};\n\n");
    render_plan_order(out);
    rlvr_text_printf(out,
                 "static pid_t runner_pid = -1;\n"
                 "static FILE *to_runner, *from_runner;\n\n"
                 "static void stop_runner(void) {\n"
                 "    if (runner_pid < 0) return;\n"
                 "    fclose(to_runner);\n"
                 "    fclose(from_runner);\n"
                 "    kill(runner_pid, SIGKILL);\n"
                 "    while (waitpid(runner_pid, NULL, 0) < 0 && errno == EINTR) {\n"
                 "    }\n"
                 "    runner_pid = -1;\n"
                 "}\n\n"
                 "static int start_runner(const char *runner) {\n"
                 "    int in[2], out[2];\n"
                 "    if (pipe2(in, O_CLOEXEC) != 0) return -1;\n"
                 "    if (pipe2(out, O_CLOEXEC) != 0) return -1;\n"
                 "    pid_t pid = fork();\n"
                 "    if (pid < 0) return -1;\n"
                 "    if (pid == 0) {\n"
                 "        if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0) _exit(127);\n"
                 "        for (long fd = 3, max = sysconf(_SC_OPEN_MAX); fd < max && fd < 65536; fd++) close((int)fd);\n"
                 "        signal(SIGPIPE, SIG_DFL);\n"
                 "        char *argv[] = {(char *)runner, NULL};\n"
                 "        char *envp[] = {\"PATH=/usr/local/bin:/usr/bin:/bin\", \"HOME=/tmp\", \"LANG=C.UTF-8\", NULL};\n"
                 "        execve(runner, argv, envp);\n"
                 "        _exit(127);\n"
                 "    }\n"
                 "    close(in[0]);\n"
                 "    close(out[1]);\n"
                 "    runner_pid = pid;\n"
                 "    to_runner = fdopen(in[1], \"w\");\n"
                 "    from_runner = fdopen(out[0], \"r\");\n"
                 "    if (to_runner && from_runner) return 0;\n"
                 "    kill(pid, SIGKILL);\n"
                 "    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {\n"
                 "    }\n"
                 "    if (to_runner) fclose(to_runner); else close(in[1]);\n"
                 "    if (from_runner) fclose(from_runner); else close(out[0]);\n"
                 "    runner_pid = -1;\n"
                 "    return -1;\n"
                 "}\n\n"
                 "static int run(const char *runner, int i) {\n"
                 "    if (runner_pid < 0 && start_runner(runner) != 0) return 0;\n"
                 "    char got[32], want[24];\n"
                 "    snprintf(want, sizeof want, \"%%d\\n\", expected[i]);\n"
                 "    int ok = fputs(calls[i], to_runner) >= 0 && fflush(to_runner) == 0 &&\n"
                 "             fgets(got, sizeof got, from_runner) && strcmp(got, want) == 0;\n"
                 "    if (!ok) stop_runner();\n"
                 "    return ok;\n"
                 "}\n\n"
                 "int main(int argc, char **argv) {\n"
                 "    /* nothing of this process for the code under test to read: memory, fds, environment */\n"
                 "    prctl(PR_SET_DUMPABLE, 0);\n"
                 "    signal(SIGPIPE, SIG_IGN); /* a runner that died fails its test, not the judge */\n"
                 "    if (argc != 2) {\n"
                 "        fprintf(stderr, \"usage: judge RUNNER\\n\");\n"
                 "        return 2;\n"
                 "    }\n"
                 "    const char *fd = getenv(\"RLVR_RESULTS_FD\");\n"
                 "    FILE *tap = fd && *fd ? fdopen(atoi(fd), \"w\") : NULL;\n"
                 "    if (!tap) tap = stdout;\n"
                 "    fcntl(fileno(tap), F_SETFD, FD_CLOEXEC);\n"
                 "    int order[N], failed = 0;\n"
                 "    plan_order(order);\n"
                 "    fprintf(tap, \"1..%%d\\n\", N);\n"
                 "    for (int k = 0; k < N; k++) {\n"
                 "        int i = order[k], ok = run(argv[1], i);\n"
                 "        fprintf(tap, \"%%s %%d - %%s\\n\", ok ? \"ok\" : \"not ok\", k + 1, names[i]);\n"
                 "        failed += !ok;\n"
                 "    }\n"
                 "    stop_runner();\n"
                 "    fflush(tap);\n"
                 "    return failed != 0;\n"
                 "}\n");
}

/* ---- choosing the library, the bug and the tests ------------------------------------ */

static bool unit_has_kind(const bc_unit *u, int kind) {
    for (int e = 0; e < bc_unit_n_edits(u); e++)
        if (u->edits[e].kind == kind) return true;
    return false;
}

static void choose_library(rlvr_rng_stream *s, library *lib, int n_slots, int kind) {
    memset(lib, 0, sizeof *lib);
    int with_kind[64], n_with = 0;
    for (int u = 0; u < bc_n_units; u++)
        if (unit_has_kind(&bc_units[u], kind)) with_kind[n_with++] = u;
    int bug_unit = with_kind[rlvr_rng_next_below(s, (uint32_t)n_with)];
    const bc_unit *bu = &bc_units[bug_unit];
    int edits[BC_MAX_EDITS], n_edits = 0;
    for (int e = 0; e < bc_unit_n_edits(bu); e++)
        if (bu->edits[e].kind == kind) edits[n_edits++] = e;
    /* the other units: a partial shuffle of the rest of the catalog */
    int rest[64], n_rest = 0;
    for (int u = 0; u < bc_n_units; u++)
        if (u != bug_unit) rest[n_rest++] = u;
    for (int i = 0; i < n_slots - 1; i++) {
        int j = i + (int)rlvr_rng_next_below(s, (uint32_t)(n_rest - i));
        int t = rest[i];
        rest[i] = rest[j];
        rest[j] = t;
    }
    lib->n_slots = n_slots;
    lib->bug_slot = (int)rlvr_rng_next_below(s, (uint32_t)n_slots);
    for (int slot = 0, r = 0; slot < n_slots; slot++) lib->unit[slot] = slot == lib->bug_slot ? bug_unit : rest[r++];
    lib->bug_edit = edits[rlvr_rng_next_below(s, (uint32_t)n_edits)];
    lib->bug_kind = kind;
    for (int slot = 0; slot < n_slots; slot++)
        if (unit_of(lib, slot)->constants) unit_of(lib, slot)->constants(s, lib->k[slot]);
}

/* Units and constants: what makes two repositories the same code. */
static void library_signature(const library *lib, char *out, size_t cap) {
    size_t n = (size_t)snprintf(out, cap, "bugfix-c");
    for (int s = 0; s < lib->n_slots && n < cap; s++) {
        n += (size_t)snprintf(out + n, cap - n, "/%s", unit_of(lib, s)->name);
        for (int c = 0; c < BC_MAX_CONSTS && n < cap; c++)
            if (lib->k[s][c]) n += (size_t)snprintf(out + n, cap - n, ":%ld", lib->k[s][c]);
    }
}

/* All candidate cases of the library with their correct and buggy values. */
static int candidate_cases(rlvr_rng_stream *s, const library *lib, test_case *out, int cap) {
    int n = 0;
    for (int slot = 0; slot < lib->n_slots; slot++) {
        const bc_unit *u = unit_of(lib, slot);
        for (int f = 0; f < bc_unit_n_funcs(u); f++) {
            long args[BC_MAX_CASES][BC_MAX_ARGS];
            int m = u->cases(s, lib->k[slot], f, args);
            for (int i = 0; i < m && n < cap; i++) {
                bool dup = false;
                for (int j = 0; j < n && !dup; j++)
                    dup = out[j].slot == slot && out[j].func == f && memcmp(out[j].a, args[i], sizeof args[i]) == 0;
                if (dup) continue;
                test_case *t = &out[n++];
                memset(t, 0, sizeof *t);
                t->slot = slot;
                t->func = f;
                memcpy(t->a, args[i], sizeof t->a);
                t->expected = u->eval(lib->k[slot], f, t->a, -1);
                t->buggy = slot == lib->bug_slot ? u->eval(lib->k[slot], f, t->a, lib->bug_edit) : t->expected;
            }
        }
    }
    return n;
}

/* A random member of idx[0..n); -1 when n is 0. */
static int pick(rlvr_rng_stream *s, const int *idx, int n) {
    return n ? idx[rlvr_rng_next_below(s, (uint32_t)n)] : -1;
}

static bool fails_with(const library *lib, const test_plan *plan, int edit) {
    const bc_unit *u = unit_of(lib, lib->bug_slot);
    for (int i = 0; i < plan->n_tests; i++) {
        const test_case *t = &plan->tests[i];
        if (t->slot == lib->bug_slot && u->eval(lib->k[t->slot], t->func, t->a, edit) != t->expected) return true;
    }
    return false;
}

/* Chooses the tests; false when this library and bug cannot make a task
 * (fewer than two failing cases of one function). */
static bool plan_tests(rlvr_rng_stream *s, const library *lib, test_plan *plan) {
    test_case c[BC_MAX_CASES * MAX_SLOTS * BC_MAX_FUNCS];
    int n = candidate_cases(s, lib, c, (int)(sizeof c / sizeof c[0]));
    memset(plan, 0, sizeof *plan);
    plan->public_pass[0] = plan->public_pass[1] = -1;
    const bc_unit *bu = unit_of(lib, lib->bug_slot);
    /* the public failing function: one of the bug unit's with ≥ 2 failing cases */
    int funcs[BC_MAX_FUNCS], n_funcs = 0;
    for (int f = 0; f < bc_unit_n_funcs(bu); f++) {
        int failing = 0;
        for (int i = 0; i < n; i++) failing += c[i].slot == lib->bug_slot && c[i].func == f && c[i].buggy != c[i].expected;
        if (failing >= 2) funcs[n_funcs++] = f;
    }
    if (!n_funcs) return false;
    int pub_func = funcs[rlvr_rng_next_below(s, (uint32_t)n_funcs)];
    bool used[BC_MAX_CASES * MAX_SLOTS * BC_MAX_FUNCS] = {false};
    int idx[BC_MAX_CASES * MAX_SLOTS * BC_MAX_FUNCS], m;
#define COLLECT(cond)                                                          \
    do {                                                                       \
        m = 0;                                                                 \
        for (int i = 0; i < n; i++)                                            \
            if (!used[i] && (cond)) idx[m++] = i;                              \
    } while (0)
#define TAKE(i)                                                                \
    do {                                                                       \
        int take_ = (i);                                                       \
        if (take_ < 0) break;                                                  \
        used[take_] = true;                                                    \
        plan->tests[plan->n_tests++] = c[take_];                               \
    } while (0)
    /* FAIL_TO_PASS: two cases of the public function, one of the other */
    for (int k = 0; k < 2; k++) {
        COLLECT(c[i].slot == lib->bug_slot && c[i].func == pub_func && c[i].buggy != c[i].expected);
        TAKE(pick(s, idx, m));
    }
    plan->public_fail = 0;
    COLLECT(c[i].slot == lib->bug_slot && c[i].func != pub_func && c[i].buggy != c[i].expected);
    if (m) TAKE(pick(s, idx, m));
    plan->n_fail = plan->n_tests;
    /* PASS_TO_PASS: two cases of every function that the bug leaves alone */
    for (int slot = 0; slot < lib->n_slots; slot++) {
        const bc_unit *u = unit_of(lib, slot);
        for (int f = 0; f < bc_unit_n_funcs(u); f++)
            for (int k = 0; k < 2; k++) {
                COLLECT(c[i].slot == slot && c[i].func == f && c[i].buggy == c[i].expected);
                if (m) TAKE(pick(s, idx, m));
            }
    }
#undef COLLECT
#undef TAKE
    /* public passing cases: one of the public function, one of another unit */
    for (int i = plan->n_fail; i < plan->n_tests; i++) {
        const test_case *t = &plan->tests[i];
        if (plan->public_pass[0] < 0 && t->slot == lib->bug_slot && t->func == pub_func) plan->public_pass[0] = i;
        if (plan->public_pass[1] < 0 && t->slot != lib->bug_slot) plan->public_pass[1] = i;
    }
    /* near miss: another edit of the bug's line that the hidden tests reject */
    int near[BC_MAX_EDITS], n_near = 0;
    for (int e = 0; e < bc_unit_n_edits(bu); e++)
        if (e != lib->bug_edit && bu->edits[e].line == bu->edits[lib->bug_edit].line && fails_with(lib, plan, e))
            near[n_near++] = e;
    plan->near_miss_edit = n_near ? near[rlvr_rng_next_below(s, (uint32_t)n_near)] : -1;
    /* unrelated change: any edit of another unit */
    plan->other_slot = (lib->bug_slot + 1 + (int)rlvr_rng_next_below(s, (uint32_t)(lib->n_slots - 1))) % lib->n_slots;
    plan->other_edit = (int)rlvr_rng_next_below(s, (uint32_t)bc_unit_n_edits(unit_of(lib, plan->other_slot)));
    return true;
}

/* Shuffles the tests (so FAIL_TO_PASS are not always first) and names them
 * function_N in the new order; the public indices follow. */
static void name_tests(rlvr_rng_stream *s, const library *lib, test_plan *plan, int perm[MAX_TESTS]) {
    int n = plan->n_tests;
    for (int i = 0; i < n; i++) perm[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rlvr_rng_next_below(s, (uint32_t)(i + 1));
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    int counts[MAX_SLOTS][BC_MAX_FUNCS] = {{0}};
    for (int k = 0; k < n; k++) {
        test_case *t = &plan->tests[perm[k]];
        snprintf(t->name, sizeof t->name, "%s_%d", unit_of(lib, t->slot)->funcs[t->func].name,
                 ++counts[t->slot][t->func]);
    }
}

/* ---- the task -------------------------------------------------------------------------- */

static void prompt_for(char *out, size_t cap, const library *lib, const test_case *pub, int difficulty) {
    char call[128];
    format_call(call, sizeof call, lib, pub);
    if (difficulty == 1)
        snprintf(out, cap, "Bug in lib.c: %s returns %ld, expected %ld. Fix it and submit.", call, pub->buggy,
                 pub->expected);
    else if (difficulty == 2)
        snprintf(out, cap, "Bug: %s should return %ld. Fix lib.c and submit.", call, pub->expected);
    else
        snprintf(out, cap, "A public test fails. Fix the bug in lib.c and submit.");
}

/* "    if (x == 5 && lo == 1) return 3;" — passes the public case only. */
static void hardcode_line(char *out, size_t cap, const library *lib, const test_case *pub) {
    const bc_func *fn = &unit_of(lib, pub->slot)->funcs[pub->func];
    size_t n = (size_t)snprintf(out, cap, "    if (");
    for (int i = 0; i < fn->n_args && n < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s%s == %ld", i ? " && " : "", fn->params[i], pub->a[i]);
    if (n < cap) snprintf(out + n, cap - n, ") return %ld;", pub->expected);
}

typedef struct {
    rlvr_text correct, buggy, header, pub, runner, judge;
    rlvr_text wrong[3];
    int n_wrong;
} texts;

static void texts_free(texts *x) {
    rlvr_text_free(&x->correct);
    rlvr_text_free(&x->buggy);
    rlvr_text_free(&x->header);
    rlvr_text_free(&x->pub);
    rlvr_text_free(&x->runner);
    rlvr_text_free(&x->judge);
    for (int i = 0; i < 3; i++) rlvr_text_free(&x->wrong[i]);
}

static int render_all(texts *x, const library *lib, const test_plan *plan, const int *perm) {
    int none[MAX_SLOTS] = {-1, -1, -1, -1}, bug[MAX_SLOTS] = {-1, -1, -1, -1};
    bug[lib->bug_slot] = lib->bug_edit;
    RLVR_TRY(render_lib(&x->correct, lib, none, -1, -1, NULL));
    RLVR_TRY(render_lib(&x->buggy, lib, bug, -1, -1, NULL));
    render_header(&x->header, lib);
    /* wrong patches: the public case special-cased, the bug's line edited
     * another wrong way, and the bug left in place beside an unrelated change */
    const test_case *pub = &plan->tests[plan->public_fail];
    char line[256];
    hardcode_line(line, sizeof line, lib, pub);
    int open = unit_of(lib, pub->slot)->funcs[pub->func].open_line;
    RLVR_TRY(render_lib(&x->wrong[x->n_wrong++], lib, bug, pub->slot, open, line));
    if (plan->near_miss_edit >= 0) {
        int near[MAX_SLOTS] = {-1, -1, -1, -1};
        near[lib->bug_slot] = plan->near_miss_edit;
        RLVR_TRY(render_lib(&x->wrong[x->n_wrong++], lib, near, -1, -1, NULL));
    }
    int unrelated[MAX_SLOTS];
    memcpy(unrelated, bug, sizeof unrelated);
    unrelated[plan->other_slot] = plan->other_edit;
    RLVR_TRY(render_lib(&x->wrong[x->n_wrong++], lib, unrelated, -1, -1, NULL));
    /* tests: hidden = all, in the shuffled order; public = the failing case and up to two passing ones */
    render_judge(&x->judge, lib, plan->tests, perm, plan->n_tests);
    render_runner(&x->runner, lib);
    int pub_idx[3], n_pub = 0;
    pub_idx[n_pub++] = plan->public_fail;
    for (int i = 0; i < 2; i++)
        if (plan->public_pass[i] >= 0) pub_idx[n_pub++] = plan->public_pass[i];
    render_public_tests(&x->pub, lib, plan->tests, pub_idx, n_pub);
    RLVR_TRY(gen_text_check(&x->header));
    RLVR_TRY(gen_text_check(&x->judge));
    RLVR_TRY(gen_text_check(&x->runner));
    return gen_text_check(&x->pub);
}

static int write_files(const texts *x, const char *compiler, const char *out_dir, const char *id, char commit[41]) {
    char repo[4096], hidden[4096], makefile[sizeof makefile_format + 64];
    snprintf(makefile, sizeof makefile, makefile_format, compiler);
    snprintf(repo, sizeof repo, "%s/repos/%s", out_dir, id);
    snprintf(hidden, sizeof hidden, "%s/hidden/%s/tests/judge.c", out_dir, id);
    RLVR_TRY(gen_must_not_exist(hidden));
    const char *paths[] = {".gitignore", "Makefile", "lib.c", "lib.h", "tests/public.c", "tests/runner.c"};
    const char *contents[] = {"build/\n", makefile, x->buggy.data, x->header.data, x->pub.data, x->runner.data};
    RLVR_TRY(gen_repo_create(repo, paths, contents, 6, commit));
    return gen_write_file(hidden, x->judge.data, x->judge.len);
}

static int fill_task(rlvr_task *t, const rlvr_task_gen_options *opts, const char *id, const char *out_dir,
                     const library *lib, const test_plan *plan, const texts *x, const char *commit, const char *sig) {
    char buf[8192], prompt[512];
    RLVR_TRY(gen_strdup(&t->source, "(generated)"));
    RLVR_TRY(gen_strdup(&t->base_dir, out_dir));
    RLVR_TRY(gen_strdup(&t->id, id));
    RLVR_TRY(gen_strdup(&t->family, "bugfix-c"));
    RLVR_TRY(gen_strdup(&t->template_name, bc_bug_names[lib->bug_kind]));
    t->split = opts->split;
    snprintf(buf, sizeof buf, "bugfix-c/%016llx", (unsigned long long)rlvr_fnv1a64(sig, strlen(sig)));
    RLVR_TRY(gen_strdup(&t->split_key, buf));
    prompt_for(prompt, sizeof prompt, lib, &plan->tests[plan->public_fail], opts->difficulty);
    RLVR_TRY(gen_strdup(&t->prompt, prompt));
    t->verifier = RLVR_VERIFIER_TESTS;
    t->tools = opts->tools ? opts->tools : RLVR_TOOLS_ALL;
    int d = opts->difficulty;
    t->budgets = (rlvr_task_budgets){.turns = 4 + 4 * d, .policy_tokens = 512 * (d + 1), .context_tokens = 4096 * d,
                                     .tool_timeout_s = 10.0};
    snprintf(buf, sizeof buf, "repos/%s", id);
    RLVR_TRY(gen_strdup(&t->repository, buf));
    snprintf(buf, sizeof buf, "%s/repos/%s", out_dir, id);
    RLVR_TRY(gen_strdup(&t->repository_path, buf));
    t->repository_kind = RLVR_REPO_DIRECTORY;
    RLVR_TRY(gen_strdup(&t->base_commit, commit));
    RLVR_TRY(gen_strdup(&t->public_test_command, PUBLIC_COMMAND));
    const char *pub_files[] = {"tests/public.c"};
    RLVR_TRY(gen_list(&t->public_test_files, pub_files, 1));
    snprintf(buf, sizeof buf, "hidden/%s", id);
    RLVR_TRY(gen_strdup(&t->hidden_root, buf));
    snprintf(buf, sizeof buf, "%s/hidden/%s", out_dir, id);
    RLVR_TRY(gen_strdup(&t->hidden_root_path, buf));
    const char *hidden_files[] = {"tests/judge.c"};
    RLVR_TRY(gen_list(&t->hidden_test_files, hidden_files, 1));
    snprintf(buf, sizeof buf, "%s -std=c11 -O0 -w -o \"$RLVR_JUDGE_DIR/judge\" tests/judge.c", gen_compiler(opts));
    RLVR_TRY(gen_strdup(&t->judge_build, buf));
    const char *judge_run[] = {"judge", "build/runner"};
    RLVR_TRY(gen_list(&t->judge_run, judge_run, 2));
    RLVR_TRY(gen_strdup(&t->hidden_build_command, BUILD_COMMAND));
    const char *f2p[MAX_TESTS], *p2p[MAX_TESTS];
    int nf = 0, np = 0;
    for (int i = 0; i < plan->n_tests; i++) {
        if (i < plan->n_fail) f2p[nf++] = plan->tests[i].name;
        else p2p[np++] = plan->tests[i].name;
    }
    RLVR_TRY(gen_list(&t->fail_to_pass, f2p, (size_t)nf));
    RLVR_TRY(gen_list(&t->pass_to_pass, p2p, (size_t)np));
    RLVR_TRY(gen_patch(&t->reference_patch, "lib.c", x->buggy.data, x->correct.data));
    RLVR_ALLOC(t->wrong_patches.items, x->n_wrong);
    for (int i = 0; i < x->n_wrong; i++) {
        RLVR_TRY(gen_patch(&t->wrong_patches.items[i], "lib.c", x->buggy.data, x->wrong[i].data));
        t->wrong_patches.n = (size_t)i + 1;
    }
    const char *protected[] = {"/tests", "/Makefile", "/.gitignore", "/build"};
    RLVR_TRY(gen_list(&t->protected_paths, protected, 4));
    /* the library's sources, at the top: a new file there is compiled only
     * if lib.c includes it */
    const char *editable[] = {"/*.c", "/*.h"};
    RLVR_TRY(gen_list(&t->editable_paths, editable, 2));
    rlvr_text meta = {0};
    rlvr_text_printf(&meta, "{\"bug_unit\":\"%s\",\"difficulty\":%d,\"units\":[", unit_of(lib, lib->bug_slot)->name, d);
    for (int s = 0; s < lib->n_slots; s++) rlvr_text_printf(&meta, "%s\"%s\"", s ? "," : "", unit_of(lib, s)->name);
    rlvr_text_printf(&meta, "]}");
    int rc = gen_text_check(&meta);
    if (rc == 0) t->metadata_json = meta.data;
    else rlvr_text_free(&meta);
    return rc;
}

int gen_bugfix_c_task(rlvr_task **out, const rlvr_task_gen_options *opts, int64_t index, const char *out_dir) {
    rlvr_rng_stream s;
    gen_stream(&s, opts, 1, index);
    const int *kinds = opts->split == RLVR_SPLIT_REGRESSION ? held_out : trained;
    int n_kinds = opts->split == RLVR_SPLIT_REGRESSION ? N_HELD_OUT : N_TRAINED;
    int kind = kinds[rlvr_rng_next_below(&s, (uint32_t)n_kinds)];
    library lib;
    test_plan plan;
    char sig[512];
    for (int attempt = 0;; attempt++) {
        if (attempt == MAX_ATTEMPTS)
            return RLVR_FAIL(RLVR_EINVAL, "bugfix-c: no usable library for template %s after %d draws",
                             bc_bug_names[kind], MAX_ATTEMPTS);
        choose_library(&s, &lib, opts->difficulty + 1, kind);
        library_signature(&lib, sig, sizeof sig);
        if (gen_bucket_allows(sig, opts->split) && plan_tests(&s, &lib, &plan)) break;
    }
    int perm[MAX_TESTS];
    name_tests(&s, &lib, &plan, perm);
    char id[64], commit[41];
    rlvr_task_gen_id(id, sizeof id, opts, index);
    texts x;
    memset(&x, 0, sizeof x);
    rlvr_task *t = calloc(1, sizeof *t);
    int rc = t ? 0 : RLVR_FAIL(RLVR_ENOMEM, "out of memory generating a task");
    if (rc == 0) rc = render_all(&x, &lib, &plan, perm);
    if (rc == 0) rc = write_files(&x, gen_compiler(opts), out_dir, id, commit);
    if (rc == 0) rc = fill_task(t, opts, id, out_dir, &lib, &plan, &x, commit, sig);
    texts_free(&x);
    if (rc < 0) {
        rlvr_task_free(t);
        return rlvr_error_wrap(rc, "generating bugfix-c task %s", id);
    }
    *out = t;
    return 0;
}
