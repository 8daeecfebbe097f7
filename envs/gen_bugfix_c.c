/* envs/gen_bugfix_c.c — the "bugfix-c" family: a small C library with one
 * planted bug, in its own git repository, with public and hidden tests. */
#include "core/error.h"
#include "envs/bugfix_c_units.h"
#include "envs/gen_bugfix.h"
#include "envs/gen_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- text of the library --------------------------------------------------------- */

/* lib.c with edits[slot] applied to each slot (-1: none), and `insert`
 * placed after line `insert_line` of `insert_slot` (insert == NULL: none). */
static int render_lib(rlvr_text *out, const bf_library *lib, const int *edits, int insert_slot, int insert_line,
                      const char *insert) {
    rlvr_text_printf(out, "#include \"lib.h\"\n");
    for (int s = 0; s < lib->n_slots; s++) {
        const bc_unit *u = bf_unit_of(lib, s);
        rlvr_text_printf(out, "\n");
        for (int l = 0; u->lines[l]; l++) {
            RLVR_TRY(bc_render_line(out, u, lib->k[s], l, edits[s]));
            if (insert && s == insert_slot && l == insert_line) rlvr_text_printf(out, "%s\n", insert);
        }
    }
    return gen_text_check(out);
}

static void render_header(rlvr_text *out, const bf_library *lib) {
    rlvr_text_printf(out, "#ifndef LIB_H\n#define LIB_H\n\n");
    for (int s = 0; s < lib->n_slots; s++) {
        const bc_unit *u = bf_unit_of(lib, s);
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

/* The public tests: the library linked in, a failing test followed by a
 * comment saying what the call returned and what was expected (TAP on
 * stdout for the policy; RLVR_RESULTS_FD is honoured as the hidden tests'
 * contract has it). */
static void render_public_tests(rlvr_text *out, const bf_library *lib, const bf_test_case *tests, const int *which, int n) {
    rlvr_text_printf(out, "/* Public tests. TAP goes to $RLVR_RESULTS_FD (default stdout); $RLVR_TEST_ORDER\n"
                          " * (names) or $RLVR_TEST_SEED (a number) sets the order. */\n");
    rlvr_text_printf(out, "#define _POSIX_C_SOURCE 200809L /* fdopen */\n"
                          "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\n#include \"../lib.h\"\n\n");
    bf_render_table(out, tests, which, n);
    rlvr_text_printf(out, "static const char *calls[N] = {");
    for (int i = 0; i < n; i++) {
        char call[128];
        bf_format_call(call, sizeof call, lib, &tests[which[i]]);
        rlvr_text_printf(out, "%s\"%s\"", i ? ", " : "", call);
    }
    rlvr_text_printf(out, "};\n\nstatic int run(int i) {\n    switch (i) {\n");
    for (int i = 0; i < n; i++) {
        char call[128];
        bf_format_call(call, sizeof call, lib, &tests[which[i]]);
        rlvr_text_printf(out, "    case %d: return %s;\n", i, call);
    }
    rlvr_text_printf(out, "    }\n    return 0;\n}\n\n");
    bf_render_plan_order(out);
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
static void render_runner(rlvr_text *out, const bf_library *lib) {
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
        const bc_unit *u = bf_unit_of(lib, s);
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

/* ---- the family ------------------------------------------------------------------------ */

/* "    if (x == 5 && lo == 1) return 3;" — passes the public case only. */
static void hardcode_line(char *out, size_t cap, const bf_library *lib, const bf_test_case *pub) {
    const bc_func *fn = &bf_unit_of(lib, pub->slot)->funcs[pub->func];
    size_t n = (size_t)snprintf(out, cap, "    if (");
    for (int i = 0; i < fn->n_args && n < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s%s == %ld", i ? " && " : "", fn->params[i], pub->a[i]);
    if (n < cap) snprintf(out + n, cap - n, ") return %ld;", pub->expected);
}

/* lib.h, the public tests and the runner. */
static void render_files(bf_texts *x, const bf_library *lib, const bf_test_case *tests, const int *pub, int n_pub) {
    render_header(&x->header, lib);
    render_runner(&x->runner, lib);
    render_public_tests(&x->pub, lib, tests, pub, n_pub);
}

static int write_repo(const bf_texts *x, const rlvr_task_gen_options *opts, const char *repo, char commit[41]) {
    char makefile[sizeof makefile_format + 64];
    snprintf(makefile, sizeof makefile, makefile_format, gen_compiler(opts));
    const char *paths[] = {".gitignore", "Makefile", "lib.c", "lib.h", "tests/public.c", "tests/runner.c"};
    const char *contents[] = {"build/\n", makefile, x->v.buggy.data, x->header.data, x->pub.data, x->runner.data};
    return gen_repo_create(repo, paths, contents, 6, commit);
}

static const char *const c_judge_run[] = {"judge", "build/runner", NULL};
static const char *const c_protected[] = {"/tests", "/Makefile", "/.gitignore", "/build", NULL};
/* the library's sources, at the top: a new file there is compiled only if
 * lib.c includes it */
static const char *const c_editable[] = {"/*.c", "/*.h", NULL};
static const bf_language bugfix_c = {
    .family = "bugfix-c", .family_code = FAMILY_BUGFIX_C, .units = bc_units, .n_units = &bc_n_units, .lib_file = "lib.c",
    .public_file = "tests/public.c", .public_command = PUBLIC_COMMAND, .build_command = BUILD_COMMAND,
    .judge_run = c_judge_run, .runner_args = false, .protected = c_protected, .editable = c_editable,
    .render_lib = render_lib, .hardcode_line = hardcode_line, .render_files = render_files,
    .write_repo = write_repo};

int gen_bugfix_c_templates(rlvr_split split, const char **names, int cap) { return bf_templates(split, names, cap); }

int gen_bugfix_c_task(rlvr_task **out, const rlvr_task_gen_options *opts, int64_t index, const char *out_dir) {
    return bf_generate(out, &bugfix_c, opts, index, out_dir);
}
