/* envs/gen_bugfix.c — what the bugfix families share: a library drawn from
 * a unit catalog with one planted bug, the test plan, and the hidden judge
 * (see gen_bugfix.h). */
#include "envs/gen_bugfix.h"
#include "core/hash.h"

#include "core/config.h"
#include "core/error.h"
#include "envs/tools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BF_MAX_ATTEMPTS 1000

/* Templates of train and eval; the regression split uses only the others. */
static const int trained[] = {BUG_OFF_BY_ONE, BUG_WRONG_OPERATOR, BUG_WRONG_CONSTANT, BUG_MISSING_CASE,
                              BUG_WRONG_CONDITION};
static const int held_out[] = {BUG_SWAPPED_ARGUMENTS, BUG_WRONG_VARIABLE};
#define N_TRAINED (int)(sizeof trained / sizeof trained[0])
#define N_HELD_OUT (int)(sizeof held_out / sizeof held_out[0])

int bf_templates(rlvr_split split, const char **names, int cap) {
    const int *list = split == RLVR_SPLIT_REGRESSION ? held_out : trained;
    int n = split == RLVR_SPLIT_REGRESSION ? N_HELD_OUT : N_TRAINED;
    for (int i = 0; i < n && i < cap; i++) names[i] = bc_bug_names[list[i]];
    return n;
}

const bc_unit *bf_unit_of(const bf_library *lib, int slot) { return &lib->lang->units[lib->unit[slot]]; }

void bf_format_call(char *out, size_t cap, const bf_library *lib, const bf_test_case *t) {
    const bc_func *fn = &bf_unit_of(lib, t->slot)->funcs[t->func];
    size_t n = (size_t)snprintf(out, cap, "%s(", fn->name);
    for (int i = 0; i < fn->n_args && n < cap; i++) n += (size_t)snprintf(out + n, cap - n, "%s%ld", i ? ", " : "", t->a[i]);
    if (n < cap) snprintf(out + n, cap - n, ")");
}

/* The names and expected values of a test program (TAP, the contract of
 * enclave/verify.h). */
void bf_render_table(rlvr_text *out, const bf_test_case *tests, const int *which, int n) {
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
void bf_render_plan_order(rlvr_text *out) {
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

/* tests/judge.c (hidden): the expected values and the TAP, with the code
 * under test out of its process. The runner runs in a child that holds
 * nothing but the two pipes of the calls and stderr (never the results
 * descriptor), with a clean environment; each test writes its call and
 * passes only when the answer line is exactly the expected value. After a
 * wrong answer (or none) the runner is killed and the next test starts a
 * fresh one: a crash fails its own test only. The judge's arguments name
 * the runner: one program (`judge RUNNER`), or with runner_args a program
 * and its arguments (`judge /usr/bin/python3 -I ... tests/runner.py`). */
static void render_judge(rlvr_text *out, const bf_library *lib, const bf_test_case *tests, const int *which, int n,
                         bool runner_args) {
    rlvr_text_printf(out, "/* Hidden tests (the judge): judge RUNNER%s. TAP goes to $RLVR_RESULTS_FD (default\n"
                          " * stdout); $RLVR_TEST_ORDER (names) or $RLVR_TEST_SEED (a number) sets the order. */\n"
                          "#define _GNU_SOURCE\n#include <errno.h>\n#include <fcntl.h>\n#include <signal.h>\n"
                          "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <sys/prctl.h>\n"
                          "#include <sys/wait.h>\n#include <unistd.h>\n\n",
                     runner_args ? " [ARG...]" : "");
    bf_render_table(out, tests, which, n);
    rlvr_text_printf(out, "static const char *const calls[N] = {");
    for (int i = 0; i < n; i++) {
        const bf_test_case *t = &tests[which[i]];
        const bc_func *fn = &bf_unit_of(lib, t->slot)->funcs[t->func];
        rlvr_text_printf(out, "%s\"%s", i ? ", " : "", fn->name);
        for (int a = 0; a < fn->n_args; a++) rlvr_text_printf(out, " %ld", t->a[a]);
        rlvr_text_printf(out, "\\n\"");
    }
    rlvr_text_printf(out, "};\n\n");
    bf_render_plan_order(out);
    const char *param = runner_args ? "char **runner" : "const char *runner";
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
                 "static int start_runner(%s) {\n"
                 "    int in[2], out[2];\n"
                 "    if (pipe2(in, O_CLOEXEC) != 0) return -1;\n"
                 "    if (pipe2(out, O_CLOEXEC) != 0) return -1;\n"
                 "    pid_t pid = fork();\n"
                 "    if (pid < 0) return -1;\n"
                 "    if (pid == 0) {\n"
                 "        if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0) _exit(127);\n"
                 "        for (long fd = 3, max = sysconf(_SC_OPEN_MAX); fd < max && fd < 65536; fd++) close((int)fd);\n"
                 "        signal(SIGPIPE, SIG_DFL);\n"
                 "%s"
                 "        char *envp[] = {\"PATH=/usr/local/bin:/usr/bin:/bin\", \"HOME=/tmp\", \"LANG=C.UTF-8\", NULL};\n"
                 "        %s\n"
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
                 "static int run(%s, int i) {\n"
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
                 "    if (argc %s) {\n"
                 "        fprintf(stderr, \"usage: judge RUNNER%s\\n\");\n"
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
                 "        int i = order[k], ok = run(%s, i);\n"
                 "        fprintf(tap, \"%%s %%d - %%s\\n\", ok ? \"ok\" : \"not ok\", k + 1, names[i]);\n"
                 "        failed += !ok;\n"
                 "    }\n"
                 "    stop_runner();\n"
                 "    fflush(tap);\n"
                 "    return failed != 0;\n"
                 "}\n",
                 param, runner_args ? "" : "        char *argv[] = {(char *)runner, NULL};\n",
                 runner_args ? "execve(runner[0], runner, envp);" : "execve(runner, argv, envp);", param,
                 runner_args ? "< 2" : "!= 2", runner_args ? " [ARG...]" : "", runner_args ? "argv + 1" : "argv[1]");
}

/* ---- choosing the library, the bug and the tests ------------------------------------ */

static bool unit_has_kind(const bc_unit *u, int kind) {
    for (int e = 0; e < bc_unit_n_edits(u); e++)
        if (u->edits[e].kind == kind) return true;
    return false;
}

static void choose_library(rlvr_rng_stream *s, const bf_language *lang, bf_library *lib, int n_slots, int kind) {
    memset(lib, 0, sizeof *lib);
    lib->lang = lang;
    int with_kind[64], n_with = 0;
    for (int u = 0; u < *lang->n_units; u++)
        if (unit_has_kind(&lang->units[u], kind)) with_kind[n_with++] = u;
    int bug_unit = with_kind[rlvr_rng_next_below(s, (uint32_t)n_with)];
    const bc_unit *bu = &lang->units[bug_unit];
    int edits[BC_MAX_EDITS], n_edits = 0;
    for (int e = 0; e < bc_unit_n_edits(bu); e++)
        if (bu->edits[e].kind == kind) edits[n_edits++] = e;
    /* the other units: a partial shuffle of the rest of the catalog */
    int rest[64], n_rest = 0;
    for (int u = 0; u < *lang->n_units; u++)
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
        if (bf_unit_of(lib, slot)->constants) bf_unit_of(lib, slot)->constants(s, lib->k[slot]);
}

/* Units and constants: what makes two repositories the same code. */
static void library_signature(const bf_library *lib, char *out, size_t cap) {
    size_t n = (size_t)snprintf(out, cap, "%s", lib->lang->family);
    for (int s = 0; s < lib->n_slots && n < cap; s++) {
        n += (size_t)snprintf(out + n, cap - n, "/%s", bf_unit_of(lib, s)->name);
        for (int c = 0; c < BC_MAX_CONSTS && n < cap; c++)
            if (lib->k[s][c]) n += (size_t)snprintf(out + n, cap - n, ":%ld", lib->k[s][c]);
    }
}

/* All candidate cases of the library with their correct and buggy values. */
static int candidate_cases(rlvr_rng_stream *s, const bf_library *lib, bf_test_case *out, int cap) {
    int n = 0;
    for (int slot = 0; slot < lib->n_slots; slot++) {
        const bc_unit *u = bf_unit_of(lib, slot);
        for (int f = 0; f < bc_unit_n_funcs(u); f++) {
            long args[BC_MAX_CASES][BC_MAX_ARGS];
            int m = u->cases(s, lib->k[slot], f, args);
            for (int i = 0; i < m && n < cap; i++) {
                bool dup = false;
                for (int j = 0; j < n && !dup; j++)
                    dup = out[j].slot == slot && out[j].func == f && memcmp(out[j].a, args[i], sizeof args[i]) == 0;
                if (dup) continue;
                bf_test_case *t = &out[n++];
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

static bool fails_with(const bf_library *lib, const bf_test_plan *plan, int edit) {
    const bc_unit *u = bf_unit_of(lib, lib->bug_slot);
    for (int i = 0; i < plan->n_tests; i++) {
        const bf_test_case *t = &plan->tests[i];
        if (t->slot == lib->bug_slot && u->eval(lib->k[t->slot], t->func, t->a, edit) != t->expected) return true;
    }
    return false;
}

/* Chooses the tests; false when this library and bug cannot make a task
 * (fewer than two failing cases of one function). */
static bool plan_tests(rlvr_rng_stream *s, const bf_library *lib, bf_test_plan *plan) {
    bf_test_case c[BC_MAX_CASES * BF_MAX_SLOTS * BC_MAX_FUNCS];
    int n = candidate_cases(s, lib, c, (int)(sizeof c / sizeof c[0]));
    memset(plan, 0, sizeof *plan);
    plan->public_pass[0] = plan->public_pass[1] = -1;
    const bc_unit *bu = bf_unit_of(lib, lib->bug_slot);
    /* the public failing function: one of the bug unit's with ≥ 2 failing cases */
    int funcs[BC_MAX_FUNCS], n_funcs = 0;
    for (int f = 0; f < bc_unit_n_funcs(bu); f++) {
        int failing = 0;
        for (int i = 0; i < n; i++) failing += c[i].slot == lib->bug_slot && c[i].func == f && c[i].buggy != c[i].expected;
        if (failing >= 2) funcs[n_funcs++] = f;
    }
    if (!n_funcs) return false;
    int pub_func = funcs[rlvr_rng_next_below(s, (uint32_t)n_funcs)];
    bool used[BC_MAX_CASES * BF_MAX_SLOTS * BC_MAX_FUNCS] = {false};
    int idx[BC_MAX_CASES * BF_MAX_SLOTS * BC_MAX_FUNCS], m;
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
        const bc_unit *u = bf_unit_of(lib, slot);
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
        const bf_test_case *t = &plan->tests[i];
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
    plan->other_edit = (int)rlvr_rng_next_below(s, (uint32_t)bc_unit_n_edits(bf_unit_of(lib, plan->other_slot)));
    return true;
}

/* Shuffles the tests (so FAIL_TO_PASS are not always first) and names them
 * function_N in the new order; the public indices follow. */
static void name_tests(rlvr_rng_stream *s, const bf_library *lib, bf_test_plan *plan, int perm[BF_MAX_TESTS]) {
    int n = plan->n_tests;
    for (int i = 0; i < n; i++) perm[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rlvr_rng_next_below(s, (uint32_t)(i + 1));
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    int counts[BF_MAX_SLOTS][BC_MAX_FUNCS] = {{0}};
    for (int k = 0; k < n; k++) {
        bf_test_case *t = &plan->tests[perm[k]];
        snprintf(t->name, sizeof t->name, "%s_%d", bf_unit_of(lib, t->slot)->funcs[t->func].name,
                 ++counts[t->slot][t->func]);
    }
}

/* Draws task `index`'s library, bug and tests from the catalog: the
 * library's signature goes to sig (it decides the split and names the
 * content), the tests' order to perm. */
static int draw(rlvr_rng_stream *s, const bf_language *lang, const rlvr_task_gen_options *opts, bf_library *lib,
                bf_test_plan *plan, int perm[BF_MAX_TESTS], char *sig, size_t sig_cap) {
    const int *kinds = opts->split == RLVR_SPLIT_REGRESSION ? held_out : trained;
    int n_kinds = opts->split == RLVR_SPLIT_REGRESSION ? N_HELD_OUT : N_TRAINED;
    int kind = kinds[rlvr_rng_next_below(s, (uint32_t)n_kinds)];
    for (int attempt = 0;; attempt++) {
        if (attempt == BF_MAX_ATTEMPTS)
            return RLVR_FAIL(RLVR_EINVAL, "%s: no usable library for template %s after %d draws", lang->family,
                             bc_bug_names[kind], BF_MAX_ATTEMPTS);
        choose_library(s, lang, lib, opts->difficulty + 1, kind);
        library_signature(lib, sig, sig_cap);
        if (gen_bucket_allows(sig, opts->split) && plan_tests(s, lib, plan)) break;
    }
    name_tests(s, lib, plan, perm);
    return 0;
}

/* ---- the versions of the library ---------------------------------------------------------- */

static void versions_free(bf_versions *v) {
    rlvr_text_free(&v->correct);
    rlvr_text_free(&v->buggy);
    for (int i = 0; i < 3; i++) rlvr_text_free(&v->wrong[i]);
}

static int render_versions(bf_versions *v, const bf_library *lib, const bf_test_plan *plan, bf_render_lib_fn render_lib,
                           bf_hardcode_fn hardcode_line) {
    int none[BF_MAX_SLOTS] = {-1, -1, -1, -1}, bug[BF_MAX_SLOTS] = {-1, -1, -1, -1};
    bug[lib->bug_slot] = lib->bug_edit;
    RLVR_TRY(render_lib(&v->correct, lib, none, -1, -1, NULL));
    RLVR_TRY(render_lib(&v->buggy, lib, bug, -1, -1, NULL));
    /* wrong patches: the public case special-cased, the bug's line edited
     * another wrong way, and the bug left in place beside an unrelated change */
    const bf_test_case *pub = &plan->tests[plan->public_fail];
    char line[256];
    hardcode_line(line, sizeof line, lib, pub);
    int open = bf_unit_of(lib, pub->slot)->funcs[pub->func].open_line;
    RLVR_TRY(render_lib(&v->wrong[v->n_wrong++], lib, bug, pub->slot, open, line));
    if (plan->near_miss_edit >= 0) {
        int near[BF_MAX_SLOTS] = {-1, -1, -1, -1};
        near[lib->bug_slot] = plan->near_miss_edit;
        RLVR_TRY(render_lib(&v->wrong[v->n_wrong++], lib, near, -1, -1, NULL));
    }
    int unrelated[BF_MAX_SLOTS];
    memcpy(unrelated, bug, sizeof unrelated);
    unrelated[plan->other_slot] = plan->other_edit;
    return render_lib(&v->wrong[v->n_wrong++], lib, unrelated, -1, -1, NULL);
}

/* The public tests' cases: the failing one and up to two passing ones
 * (indices into plan->tests); returns how many. */
static int public_cases(const bf_test_plan *plan, int idx[3]) {
    int n = 0;
    idx[n++] = plan->public_fail;
    for (int i = 0; i < 2; i++)
        if (plan->public_pass[i] >= 0) idx[n++] = plan->public_pass[i];
    return n;
}

/* ---- the task ---------------------------------------------------------------------------- */

static void prompt_for(char *out, size_t cap, const bf_language *lang, const bf_library *lib, const bf_test_case *pub,
                       int difficulty) {
    char call[128];
    bf_format_call(call, sizeof call, lib, pub);
    if (difficulty == 1)
        snprintf(out, cap, "Bug in %s: %s returns %ld, expected %ld. Fix it and submit.", lang->lib_file, call,
                 pub->buggy, pub->expected);
    else if (difficulty == 2)
        snprintf(out, cap, "Bug: %s should return %ld. Fix %s and submit.", call, pub->expected, lang->lib_file);
    else
        snprintf(out, cap, "A public test fails. Fix the bug in %s and submit.", lang->lib_file);
}

static size_t list_len(const char *const *l) {
    size_t n = 0;
    while (l && l[n]) n++;
    return n;
}

/* The task spec from the draw and the library's versions, once the
 * repository is written at `commit`: ids, prompt, budgets, tests, patches,
 * paths. */
static int fill_task(rlvr_task *t, const bf_language *lang, const rlvr_task_gen_options *opts, const char *id,
                     const char *out_dir, const bf_library *lib, const bf_test_plan *plan, const bf_versions *v,
                     const char *commit, const char *sig) {
    char buf[8192], prompt[512];
    RLVR_TRY(gen_strdup(&t->source, "(generated)"));
    RLVR_TRY(gen_strdup(&t->base_dir, out_dir));
    RLVR_TRY(gen_strdup(&t->id, id));
    RLVR_TRY(gen_strdup(&t->family, lang->family));
    RLVR_TRY(gen_strdup(&t->template_name, bc_bug_names[lib->bug_kind]));
    t->split = opts->split;
    snprintf(buf, sizeof buf, "%s/%016llx", lang->family, (unsigned long long)rlvr_fnv1a64(sig, strlen(sig)));
    RLVR_TRY(gen_strdup(&t->split_key, buf));
    prompt_for(prompt, sizeof prompt, lang, lib, &plan->tests[plan->public_fail], opts->difficulty);
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
    RLVR_TRY(gen_strdup(&t->public_test_command, lang->public_command));
    RLVR_TRY(gen_list(&t->public_test_files, &lang->public_file, 1));
    snprintf(buf, sizeof buf, "hidden/%s", id);
    RLVR_TRY(gen_strdup(&t->hidden_root, buf));
    snprintf(buf, sizeof buf, "%s/hidden/%s", out_dir, id);
    RLVR_TRY(gen_strdup(&t->hidden_root_path, buf));
    const char *hidden_files[] = {"tests/judge.c"};
    RLVR_TRY(gen_list(&t->hidden_test_files, hidden_files, 1));
    snprintf(buf, sizeof buf, "%s -std=c11 -O0 -w -o \"$RLVR_JUDGE_DIR/judge\" tests/judge.c", gen_compiler(opts));
    RLVR_TRY(gen_strdup(&t->judge_build, buf));
    RLVR_TRY(gen_list(&t->judge_run, lang->judge_run, list_len(lang->judge_run)));
    if (lang->build_command) RLVR_TRY(gen_strdup(&t->hidden_build_command, lang->build_command));
    const char *f2p[BF_MAX_TESTS], *p2p[BF_MAX_TESTS];
    int nf = 0, np = 0;
    for (int i = 0; i < plan->n_tests; i++) {
        if (i < plan->n_fail) f2p[nf++] = plan->tests[i].name;
        else p2p[np++] = plan->tests[i].name;
    }
    RLVR_TRY(gen_list(&t->fail_to_pass, f2p, (size_t)nf));
    RLVR_TRY(gen_list(&t->pass_to_pass, p2p, (size_t)np));
    RLVR_TRY(gen_patch(&t->reference_patch, lang->lib_file, v->buggy.data, v->correct.data));
    RLVR_ALLOC(t->wrong_patches.items, v->n_wrong);
    for (int i = 0; i < v->n_wrong; i++) {
        RLVR_TRY(gen_patch(&t->wrong_patches.items[i], lang->lib_file, v->buggy.data, v->wrong[i].data));
        t->wrong_patches.n = (size_t)i + 1;
    }
    RLVR_TRY(gen_list(&t->protected_paths, lang->protected, list_len(lang->protected)));
    RLVR_TRY(gen_list(&t->editable_paths, lang->editable, list_len(lang->editable)));
    rlvr_text meta = {0};
    rlvr_text_printf(&meta, "{\"bug_unit\":\"%s\",\"difficulty\":%d,\"units\":[", bf_unit_of(lib, lib->bug_slot)->name, d);
    for (int s = 0; s < lib->n_slots; s++) rlvr_text_printf(&meta, "%s\"%s\"", s ? "," : "", bf_unit_of(lib, s)->name);
    rlvr_text_printf(&meta, "]}");
    int rc = gen_text_check(&meta);
    if (rc == 0) t->metadata_json = meta.data;
    else rlvr_text_free(&meta);
    return rc;
}

static void texts_free(bf_texts *x) {
    versions_free(&x->v);
    rlvr_text_free(&x->header);
    rlvr_text_free(&x->pub);
    rlvr_text_free(&x->runner);
    rlvr_text_free(&x->judge);
}

static int render_texts(bf_texts *x, const bf_language *lang, const bf_library *lib, const bf_test_plan *plan,
                        const int *perm) {
    RLVR_TRY(render_versions(&x->v, lib, plan, lang->render_lib, lang->hardcode_line));
    /* tests: hidden = all, in the shuffled order; public = the failing case and up to two passing ones */
    int pub[3], n_pub = public_cases(plan, pub);
    lang->render_files(x, lib, plan->tests, pub, n_pub);
    render_judge(&x->judge, lib, plan->tests, perm, plan->n_tests, lang->runner_args);
    RLVR_TRY(gen_text_check(&x->header));
    RLVR_TRY(gen_text_check(&x->judge));
    RLVR_TRY(gen_text_check(&x->runner));
    return gen_text_check(&x->pub);
}

/* repos/<id> with the buggy library, hidden/<id>/tests/judge.c; nothing is
 * overwritten. */
static int write_files(const bf_texts *x, const bf_language *lang, const rlvr_task_gen_options *opts,
                       const char *out_dir, const char *id, char commit[41]) {
    char repo[4096], hidden[4096];
    snprintf(repo, sizeof repo, "%s/repos/%s", out_dir, id);
    snprintf(hidden, sizeof hidden, "%s/hidden/%s/tests/judge.c", out_dir, id);
    RLVR_TRY(gen_must_not_exist(hidden));
    RLVR_TRY(lang->write_repo(x, opts, repo, commit));
    return gen_write_file(hidden, x->judge.data, x->judge.len);
}

int bf_generate(rlvr_task **out, const bf_language *lang, const rlvr_task_gen_options *opts, int64_t index,
                const char *out_dir) {
    rlvr_rng_stream s;
    gen_stream(&s, opts, lang->family_code, index);
    bf_library lib;
    bf_test_plan plan;
    int perm[BF_MAX_TESTS];
    char sig[512], id[64], commit[41];
    rlvr_task_gen_id(id, sizeof id, opts, index);
    RLVR_TRY(draw(&s, lang, opts, &lib, &plan, perm, sig, sizeof sig));
    bf_texts x;
    memset(&x, 0, sizeof x);
    rlvr_task *t = calloc(1, sizeof *t);
    int rc = t ? 0 : RLVR_FAIL(RLVR_ENOMEM, "out of memory generating a task");
    if (rc == 0) rc = render_texts(&x, lang, &lib, &plan, perm);
    if (rc == 0) rc = write_files(&x, lang, opts, out_dir, id, commit);
    if (rc == 0) rc = fill_task(t, lang, opts, id, out_dir, &lib, &plan, &x.v, commit, sig);
    texts_free(&x);
    if (rc < 0) {
        rlvr_task_free(t);
        return rlvr_error_wrap(rc, "generating %s task %s", lang->family, id);
    }
    *out = t;
    return 0;
}
