/* envs/gen_bugfix_py.c — the "bugfix-py" family: the bugfix-c draw (units,
 * bug, tests) written in Python, judged in judge mode by the same C judge.
 *
 * Python finds files on its own (the script's directory and the current one
 * on sys.path, site-packages, *.pth, sitecustomize.py, __pycache__). So the
 * library is never imported: tests/public.py and tests/runner.py read lib.py
 * by its path and execute its source, and Python starts isolated: -I (no
 * PYTHON* variables, no user site, no script directory on sys.path), -S (no
 * site module: no .pth, no sitecustomize), -B (no bytecode written). A
 * module the policy names like a standard one beside lib.py is never on
 * sys.path; the allow-list admits lib.py alone. */
#include "core/error.h"
#include "envs/bugfix_c_units.h"
#include "envs/gen_bugfix.h"
#include "envs/gen_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The one Python the tasks name (the judge execs it by path). */
#define PYTHON "/usr/bin/python3"
#define PUBLIC_COMMAND "python3 -I -S -B tests/public.py"

/* ---- text of the library --------------------------------------------------------- */

/* lib.py with edits[slot] applied to each slot (-1: none), and `insert`
 * placed after line `insert_line` of `insert_slot` (insert == NULL: none). */
static int render_lib(rlvr_text *out, const bf_library *lib, const int *edits, int insert_slot, int insert_line,
                      const char *insert) {
    rlvr_text_printf(out, "\"\"\"The library.\"\"\"\n");
    for (int s = 0; s < lib->n_slots; s++) {
        const bc_unit *u = bf_unit_of(lib, s);
        rlvr_text_printf(out, "\n\n");
        for (int l = 0; u->lines[l]; l++) {
            RLVR_TRY(bc_render_line(out, u, lib->k[s], l, edits[s]));
            if (insert && s == insert_slot && l == insert_line) rlvr_text_printf(out, "%s\n", insert);
        }
    }
    return gen_text_check(out);
}

/* Both test scripts load the library this way: by its path, its source
 * executed in a fresh module; nothing is looked up, no cache is read. */
static const char py_loader[] =
    "import os\n"
    "import sys\n\n"
    "ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))\n\n\n"
    "def load(path):\n"
    "    \"\"\"The library by its path: no import lookup, no bytecode cache.\"\"\"\n"
    "    with open(path, encoding=\"utf-8\") as f:\n"
    "        source = f.read()\n"
    "    module = type(sys)(\"lib\")\n"
    "    module.__file__ = path\n"
    "    exec(compile(source, path, \"exec\"), module.__dict__)\n"
    "    return module\n\n\n"
    "lib = load(os.path.join(ROOT, \"lib.py\"))\n";

/* tests/public.py: the failing case and up to two passing ones, TAP on
 * stdout (or $RLVR_RESULTS_FD), a failing test followed by a comment with
 * what the call returned and what was expected. */
static void render_public_tests(rlvr_text *out, const bf_library *lib, const bf_test_case *tests, const int *which,
                                int n) {
    rlvr_text_printf(out, "\"\"\"Public tests: python3 -I -S -B tests/public.py. TAP goes to $RLVR_RESULTS_FD\n"
                          "(default stdout); $RLVR_TEST_ORDER (names) sets the order.\"\"\"\n%s\n"
                          "TESTS = [\n",
                     py_loader);
    for (int i = 0; i < n; i++) {
        const bf_test_case *t = &tests[which[i]];
        const bc_func *fn = &bf_unit_of(lib, t->slot)->funcs[t->func];
        rlvr_text_printf(out, "    (\"%s\", \"%s\", (", t->name, fn->name);
        for (int a = 0; a < fn->n_args; a++) rlvr_text_printf(out, "%s%ld", a ? ", " : "", t->a[a]);
        rlvr_text_printf(out, "%s), %ld),\n", fn->n_args == 1 ? "," : "", t->expected);
    }
    rlvr_text_printf(out,
                     "]\n\n\n"
                     "def main():\n"
                     "    fd = os.environ.get(\"RLVR_RESULTS_FD\")\n"
                     "    out = os.fdopen(int(fd), \"w\") if fd else sys.stdout\n"
                     "    order = os.environ.get(\"RLVR_TEST_ORDER\", \"\").split()\n"
                     "    tests = sorted(TESTS, key=lambda t: order.index(t[0]) if t[0] in order else len(order))\n"
                     "    print(f\"1..{len(tests)}\", file=out)\n"
                     "    failed = 0\n"
                     "    for k, (name, fn, args, want) in enumerate(tests, 1):\n"
                     "        call = f\"{fn}({', '.join(map(str, args))})\"\n"
                     "        try:\n"
                     "            got = getattr(lib, fn)(*args)\n"
                     "        except Exception as e:\n"
                     "            got = f\"an exception ({type(e).__name__}: {e})\"\n"
                     "        ok = type(got) is int and got == want\n"
                     "        print(f\"{'ok' if ok else 'not ok'} {k} - {name}\", file=out)\n"
                     "        if not ok:\n"
                     "            print(f\"# {call} returned {got!r}, expected {want}\", file=out)\n"
                     "        failed += not ok\n"
                     "    out.flush()\n"
                     "    return 1 if failed else 0\n\n\n"
                     "sys.exit(main())\n");
}

/* tests/runner.py (public): answers the judge's calls, one per line on
 * stdin ("sign -9"), with what the library returns, one line each. It holds
 * no expected value. */
static void render_runner(rlvr_text *out, const bf_library *lib) {
    rlvr_text_printf(out, "\"\"\"The hidden tests run the library through this program: each line on stdin,\n"
                          "NAME ARG..., is one call, answered by one line on stdout, what NAME(ARG...)\n"
                          "returns. A line it does not understand ends it with exit status 2, an answer\n"
                          "that is not an int with status 3.\"\"\"\n%s\n"
                          "ARITY = {",
                     py_loader);
    int k = 0;
    for (int s = 0; s < lib->n_slots; s++) {
        const bc_unit *u = bf_unit_of(lib, s);
        for (int f = 0; f < bc_unit_n_funcs(u); f++)
            rlvr_text_printf(out, "%s\"%s\": %d", k++ ? ", " : "", u->funcs[f].name, u->funcs[f].n_args);
    }
    rlvr_text_printf(out, "}\n\n"
                          "for line in sys.stdin:\n"
                          "    parts = line.split()\n"
                          "    if not parts or ARITY.get(parts[0]) != len(parts) - 1:\n"
                          "        sys.exit(2)\n"
                          "    try:\n"
                          "        args = [int(a) for a in parts[1:]]\n"
                          "    except ValueError:\n"
                          "        sys.exit(2)\n"
                          "    result = getattr(lib, parts[0])(*args)\n"
                          "    if type(result) is not int:\n"
                          "        sys.exit(3)\n"
                          "    print(result, flush=True)\n");
}

/* "    if x == 5 and lo == 1: return 3" — passes the public case only. */
static void hardcode_line(char *out, size_t cap, const bf_library *lib, const bf_test_case *pub) {
    const bc_func *fn = &bf_unit_of(lib, pub->slot)->funcs[pub->func];
    size_t n = (size_t)snprintf(out, cap, "    if ");
    for (int i = 0; i < fn->n_args && n < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s%s == %ld", i ? " and " : "", fn->params[i], pub->a[i]);
    if (n < cap) snprintf(out + n, cap - n, ": return %ld", pub->expected);
}

/* The public tests and the runner. */
static void render_files(bf_texts *x, const bf_library *lib, const bf_test_case *tests, const int *pub, int n_pub) {
    render_runner(&x->runner, lib);
    render_public_tests(&x->pub, lib, tests, pub, n_pub);
}

static int write_repo(const bf_texts *x, const rlvr_task_gen_options *opts, const char *repo, char commit[41]) {
    (void)opts;
    const char *paths[] = {".gitignore", "lib.py", "tests/public.py", "tests/runner.py"};
    const char *contents[] = {"__pycache__/\n", x->v.buggy.data, x->pub.data, x->runner.data};
    return gen_repo_create(repo, paths, contents, 4, commit);
}

static const char *const py_judge_run[] = {"judge", PYTHON, "-I", "-S", "-B", "tests/runner.py", NULL};
static const char *const py_protected[] = {"/tests", "/.gitignore", NULL};
static const char *const py_editable[] = {"/lib.py", NULL};
static const bf_language bugfix_py = {
    .family = "bugfix-py", .family_code = FAMILY_BUGFIX_PY, .units = bp_units, .n_units = &bp_n_units, .lib_file = "lib.py",
    .public_file = "tests/public.py", .public_command = PUBLIC_COMMAND, .build_command = NULL,
    .judge_run = py_judge_run, .runner_args = true, .protected = py_protected, .editable = py_editable,
    .render_lib = render_lib, .hardcode_line = hardcode_line, .render_files = render_files,
    .write_repo = write_repo};

int gen_bugfix_py_templates(rlvr_split split, const char **names, int cap) { return bf_templates(split, names, cap); }

int gen_bugfix_py_task(rlvr_task **out, const rlvr_task_gen_options *opts, int64_t index, const char *out_dir) {
    return bf_generate(out, &bugfix_py, opts, index, out_dir);
}
