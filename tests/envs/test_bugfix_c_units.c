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

/* The calls a program must answer, with what the evaluator says. */
typedef struct {
    long *want;
    char (*label)[64];
    size_t n, cap;
} expected;

static void expect_call(expected *x, const bc_unit *u, int e, int f, const long *args, const long *k) {
    if (x->n == x->cap) {
        x->cap = x->cap ? 2 * x->cap : 1024;
        x->want = realloc(x->want, x->cap * sizeof *x->want);
        x->label = realloc(x->label, x->cap * sizeof *x->label);
    }
    snprintf(x->label[x->n], sizeof x->label[0], "%s edit %d: %s(%ld, %ld, %ld)", u->name, e, u->funcs[f].name,
             args[0], args[1], args[2]);
    x->want[x->n++] = u->eval(k, f, args, e);
}

/* How one language's program is written: a variant's definitions (unit u
 * with edit e as variant v) into `defs`, one call printing its result into
 * `calls`, and the whole program from both. */
typedef struct {
    const char *name;
    const bc_unit *units;
    const int *n_units;
    const char *file;    /* the program's file name */
    const char *command; /* runs it in its directory */
    void (*variant)(rlvr_text *defs, const bc_unit *u, const long *k, int e, int v);
    void (*call)(rlvr_text *calls, int v, const bc_func *fn, const long *args);
    void (*program)(rlvr_text *out, const rlvr_text *defs, const rlvr_text *calls);
} language;

static void c_variant(rlvr_text *defs, const bc_unit *u, const long *k, int e, int v) {
    char names[4][32];
    int n_names = defined_names(u, names);
    CHECK_MSG(n_names >= bc_unit_n_funcs(u), "unit %s: function definitions not found", u->name);
    for (int i = 0; i < n_names; i++) rlvr_text_printf(defs, "#define %s v%d_%s\n", names[i], v, names[i]);
    for (int l = 0; u->lines[l]; l++) CHECK_OK(bc_render_line(defs, u, k, l, e));
    for (int i = 0; i < n_names; i++) rlvr_text_printf(defs, "#undef %s\n", names[i]);
}

static void c_call(rlvr_text *calls, int v, const bc_func *fn, const long *args) {
    rlvr_text_printf(calls, "    printf(\"%%d\\n\", v%d_%s(", v, fn->name);
    for (int a = 0; a < fn->n_args; a++) rlvr_text_printf(calls, "%s%ld", a ? ", " : "", args[a]);
    rlvr_text_printf(calls, "));\n");
}

static void c_program(rlvr_text *out, const rlvr_text *defs, const rlvr_text *calls) {
    rlvr_text_printf(out, "#include <stdio.h>\n\n%s\nint main(void) {\n%s    return 0;\n}\n", defs->data, calls->data);
}

/* Every Python variant runs in a namespace of its own. */
static void py_variant(rlvr_text *defs, const bc_unit *u, const long *k, int e, int v) {
    rlvr_text_printf(defs, "ns.append({})\nexec(r'''\n");
    for (int l = 0; u->lines[l]; l++) CHECK_OK(bc_render_line(defs, u, k, l, e));
    rlvr_text_printf(defs, "''', ns[%d])\n", v);
}

static void py_call(rlvr_text *calls, int v, const bc_func *fn, const long *args) {
    rlvr_text_printf(calls, "r = ns[%d][\"%s\"](", v, fn->name);
    for (int a = 0; a < fn->n_args; a++) rlvr_text_printf(calls, "%s%ld", a ? ", " : "", args[a]);
    /* an int, never a bool: the runner refuses anything else */
    rlvr_text_printf(calls, ")\nprint(r if type(r) is int else \"not-an-int\")\n");
}

static void py_program(rlvr_text *out, const rlvr_text *defs, const rlvr_text *calls) {
    rlvr_text_printf(out, "ns = []\n%s%s", defs->data, calls->data);
}

/* Writes the language's program over every unit, edit, constant draw and
 * candidate argument, runs it in `dir` and compares each answer with the
 * evaluator. */
static void check_language(const language *lang, const char *dir) {
    rlvr_text defs = {0}, calls = {0}, src = {0};
    expected x = {0};
    int variant = 0;
    for (int seed = 0; seed < SEEDS; seed++) {
        for (int ui = 0; ui < *lang->n_units; ui++) {
            const bc_unit *u = &lang->units[ui];
            rlvr_rng_stream s;
            rlvr_rng_stream_init(&s, (uint64_t)seed, RLVR_RNG_TEST, 0, (uint32_t)ui);
            long k[BC_MAX_CONSTS] = {0};
            if (u->constants) u->constants(&s, k);
            long args[BC_MAX_FUNCS][BC_MAX_CASES][BC_MAX_ARGS];
            int n_cases[BC_MAX_FUNCS];
            for (int f = 0; f < bc_unit_n_funcs(u); f++) n_cases[f] = u->cases(&s, k, f, args[f]);
            for (int e = -1; e < bc_unit_n_edits(u); e++, variant++) {
                lang->variant(&defs, u, k, e, variant);
                for (int f = 0; f < bc_unit_n_funcs(u); f++)
                    for (int c = 0; c < n_cases[f]; c++) {
                        lang->call(&calls, variant, &u->funcs[f], args[f][c]);
                        expect_call(&x, u, e, f, args[f][c], k);
                    }
            }
        }
    }
    lang->program(&src, &defs, &calls);
    CHECK_OK(gen_text_check(&src));
    char path[4096], cmd[8192];
    snprintf(path, sizeof path, "%s/%s", dir, lang->file);
    CHECK(write_text(path, src.data) == 0);
    snprintf(cmd, sizeof cmd, "cd %s && %s", dir, lang->command);
    char *out = NULL;
    CHECK(run_cmd(cmd, &out) == 0);
    size_t line = 0, mismatches = 0;
    for (char *p = out; p && *p && line < x.n; line++) {
        long got = strtol(p, &p, 10);
        if (got != x.want[line] && mismatches++ < 10)
            fprintf(stderr, "%s: %s returns %ld, the evaluator %ld (see %s)\n", x.label[line], lang->name, got,
                    x.want[line], path);
        while (*p == '\n') p++;
    }
    CHECK_MSG(line == x.n, "%s: %zu results for %zu calls", lang->name, line, x.n);
    CHECK_MSG(mismatches == 0, "%s: %zu of %zu calls disagree", lang->name, mismatches, x.n);
    printf("%s: %d variants, %zu calls compared\n", lang->name, variant, x.n);
    free(out);
    free(x.want);
    free(x.label);
    rlvr_text_free(&defs);
    rlvr_text_free(&calls);
    rlvr_text_free(&src);
}

int main(void) {
    static const language languages[] = {
        {"C", bc_units, &bc_n_units, "units.c", "cc -std=c11 -O0 -w -o units units.c && ./units", c_variant, c_call,
         c_program},
        {"Python", bp_units, &bp_n_units, "units.py", "/usr/bin/python3 -I -S -B units.py", py_variant, py_call,
         py_program},
    };
    char *dir = tmpdir_make("bcunits");
    for (size_t i = 0; i < sizeof languages / sizeof languages[0]; i++) check_language(&languages[i], dir);
    if (test_failures == 0) rm_rf(dir);
    free(dir);
    return test_summary("test_bugfix_c_units");
}
