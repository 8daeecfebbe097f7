/* The bugfix catalogs: for every unit, every edit (and the unedited code),
 * several constant draws and every candidate argument, the compiled C code
 * (bugfix-c) and the Python code (bugfix-py) return what the generator's
 * evaluator says. One C program holds all the C variants (renamed by
 * macros), so this costs one compile; one Python program runs every Python
 * variant in a namespace of its own. */
#include "envs/bugfix_c_units.h"
#include "envs_test.h"
#include "test.h"

#include <ctype.h>
#include <stdbool.h>

#define SEEDS 4

/* Function names defined by the unit ("int f(" or "static int f(" at the
 * start of a line). */
static int defined_names(const bc_unit *u, char names[][32]) {
    int n = 0;
    for (int l = 0; u->lines[l]; l++) {
        const char *p = u->lines[l];
        if (strncmp(p, "static ", 7) == 0) p += 7;
        if (strncmp(p, "int ", 4) != 0) continue;
        p += 4;
        size_t len = 0;
        while (isalnum((unsigned char)p[len]) || p[len] == '_') len++;
        if (p[len] == '(' && n < 4) snprintf(names[n++], 32, "%.*s", (int)len, p);
    }
    return n;
}

/* Runs the program and compares its output lines with want[]. */
static void compare(const char *lang, const char *cmd, const char *path, const long *want, char (*label)[64],
                    size_t n_want) {
    char *out = NULL;
    CHECK(run_cmd(cmd, &out) == 0);
    size_t line = 0, mismatches = 0;
    for (char *p = out; p && *p && line < n_want; line++) {
        long got = strtol(p, &p, 10);
        if (got != want[line] && mismatches++ < 10)
            fprintf(stderr, "%s: %s returns %ld, the evaluator %ld (see %s)\n", label[line], lang, got, want[line],
                    path);
        while (*p == '\n') p++;
    }
    CHECK_MSG(line == n_want, "%s: %zu results for %zu calls", lang, line, n_want);
    CHECK_MSG(mismatches == 0, "%s: %zu of %zu calls disagree", lang, mismatches, n_want);
    free(out);
}

/* Every Python variant in its own namespace, every call printed. */
static void check_python(const char *dir) {
    rlvr_text src = {0};
    long *want = NULL;
    char (*label)[64] = NULL;
    size_t n_want = 0, cap_want = 0;
    rlvr_text_printf(&src, "ns = []\n");
    int variant = 0;
    for (int seed = 0; seed < SEEDS; seed++) {
        for (int ui = 0; ui < bp_n_units; ui++) {
            const bc_unit *u = &bp_units[ui];
            rlvr_rng_stream s;
            rlvr_rng_stream_init(&s, (uint64_t)seed, RLVR_RNG_TEST, 0, (uint32_t)ui);
            long k[BC_MAX_CONSTS] = {0};
            if (u->constants) u->constants(&s, k);
            long args[BC_MAX_FUNCS][BC_MAX_CASES][BC_MAX_ARGS];
            int n_cases[BC_MAX_FUNCS];
            for (int f = 0; f < bc_unit_n_funcs(u); f++) n_cases[f] = u->cases(&s, k, f, args[f]);
            for (int e = -1; e < bc_unit_n_edits(u); e++, variant++) {
                rlvr_text_printf(&src, "ns.append({})\nexec(r'''\n");
                for (int l = 0; u->lines[l]; l++) CHECK_OK(bc_render_line(&src, u, k, l, e));
                rlvr_text_printf(&src, "''', ns[%d])\n", variant);
                for (int f = 0; f < bc_unit_n_funcs(u); f++) {
                    const bc_func *fn = &u->funcs[f];
                    for (int c = 0; c < n_cases[f]; c++) {
                        rlvr_text_printf(&src, "r = ns[%d][\"%s\"](", variant, fn->name);
                        for (int a = 0; a < fn->n_args; a++) rlvr_text_printf(&src, "%s%ld", a ? ", " : "", args[f][c][a]);
                        /* an int, never a bool: the runner refuses anything else */
                        rlvr_text_printf(&src, ")\nprint(r if type(r) is int else \"not-an-int\")\n");
                        if (n_want == cap_want) {
                            cap_want = cap_want ? 2 * cap_want : 1024;
                            want = realloc(want, cap_want * sizeof *want);
                            label = realloc(label, cap_want * sizeof *label);
                        }
                        snprintf(label[n_want], sizeof label[0], "%s edit %d: %s(%ld, %ld, %ld)", u->name, e,
                                 fn->name, args[f][c][0], args[f][c][1], args[f][c][2]);
                        want[n_want++] = u->eval(k, f, args[f][c], e);
                    }
                }
            }
        }
    }
    CHECK_OK(gen_text_check(&src));
    char path[4096], cmd[8192];
    snprintf(path, sizeof path, "%s/units.py", dir);
    CHECK(write_text(path, src.data) == 0);
    snprintf(cmd, sizeof cmd, "cd %s && /usr/bin/python3 -I -S -B units.py", dir);
    compare("Python", cmd, path, want, label, n_want);
    printf("Python: %d variants, %zu calls compared\n", variant, n_want);
    free(want);
    free(label);
    rlvr_text_free(&src);
}

int main(void) {
    rlvr_text src = {0}, calls = {0};
    long *want = NULL;
    char (*label)[64] = NULL;
    size_t n_want = 0, cap_want = 0;
    rlvr_text_printf(&src, "#include <stdio.h>\n\n");
    int variant = 0;
    for (int seed = 0; seed < SEEDS; seed++) {
        for (int ui = 0; ui < bc_n_units; ui++) {
            const bc_unit *u = &bc_units[ui];
            rlvr_rng_stream s;
            rlvr_rng_stream_init(&s, (uint64_t)seed, RLVR_RNG_TEST, 0, (uint32_t)ui);
            long k[BC_MAX_CONSTS] = {0};
            if (u->constants) u->constants(&s, k);
            long args[BC_MAX_FUNCS][BC_MAX_CASES][BC_MAX_ARGS];
            int n_cases[BC_MAX_FUNCS];
            for (int f = 0; f < bc_unit_n_funcs(u); f++) n_cases[f] = u->cases(&s, k, f, args[f]);
            char names[4][32];
            int n_names = defined_names(u, names);
            CHECK_MSG(n_names >= bc_unit_n_funcs(u), "unit %s: function definitions not found", u->name);
            for (int e = -1; e < bc_unit_n_edits(u); e++, variant++) {
                for (int i = 0; i < n_names; i++) rlvr_text_printf(&src, "#define %s v%d_%s\n", names[i], variant, names[i]);
                for (int l = 0; u->lines[l]; l++) CHECK_OK(bc_render_line(&src, u, k, l, e));
                for (int i = 0; i < n_names; i++) rlvr_text_printf(&src, "#undef %s\n", names[i]);
                for (int f = 0; f < bc_unit_n_funcs(u); f++) {
                    const bc_func *fn = &u->funcs[f];
                    for (int c = 0; c < n_cases[f]; c++) {
                        rlvr_text_printf(&calls, "    printf(\"%%d\\n\", v%d_%s(", variant, fn->name);
                        for (int a = 0; a < fn->n_args; a++) rlvr_text_printf(&calls, "%s%ld", a ? ", " : "", args[f][c][a]);
                        rlvr_text_printf(&calls, "));\n");
                        if (n_want == cap_want) {
                            cap_want = cap_want ? 2 * cap_want : 1024;
                            want = realloc(want, cap_want * sizeof *want);
                            label = realloc(label, cap_want * sizeof *label);
                        }
                        snprintf(label[n_want], sizeof label[0], "%s edit %d: %s(%ld, %ld, %ld)", u->name, e,
                                 fn->name, args[f][c][0], args[f][c][1], args[f][c][2]);
                        want[n_want++] = u->eval(k, f, args[f][c], e);
                    }
                }
            }
        }
    }
    rlvr_text_printf(&src, "\nint main(void) {\n%s    return 0;\n}\n", calls.data);
    CHECK_OK(gen_text_check(&src));

    char *dir = tmpdir_make("bcunits"), path[4096], cmd[8192];
    snprintf(path, sizeof path, "%s/units.c", dir);
    CHECK(write_text(path, src.data) == 0);
    snprintf(cmd, sizeof cmd, "cd %s && cc -std=c11 -O0 -w -o units units.c && ./units", dir);
    compare("C", cmd, path, want, label, n_want);
    printf("C: %d variants, %zu calls compared\n", variant, n_want);
    check_python(dir);
    free(want);
    free(label);
    rlvr_text_free(&src);
    rlvr_text_free(&calls);
    if (test_failures == 0) rm_rf(dir);
    free(dir);
    return test_summary("test_bugfix_c_units");
}
