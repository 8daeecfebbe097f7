/* tests/redteam/test_redteam_py.c — exploit patches against generated
 * bugfix-py tasks (envs/gen_bugfix_py.c): judge mode with the code under
 * test in an isolated Python (python3 -I -S -B, lib.py loaded by path), a
 * train task of difficulty 1 and a regression task of difficulty 2.
 *
 * Every exploit keeps the library's bug and carries a "fixer": Python that
 * puts the correct library in place, switched on only when the forbidden
 * thing worked (a file Python looked up on its own, a probe of something
 * the enclave promises to hide). Such a case passes exactly when the
 * promise is broken, so "tests_failed" means it held. Three kinds:
 * - files Python (or pytest) finds by lookup, planted by the patch: the
 *   gate refuses them; past the gate (one run, no gate) the isolated
 *   Python still never reads them;
 * - probes in lib.py, each also run inverted (the fixer on when the probe
 *   says no), which must pass: the probe ran and the fixer works;
 * - lib.py preparing a lookup at run time and starting Python again.
 * The controls: the reference, the fixer in lib.py itself, and a weakened
 * copy of each task whose runner starts Python without isolation and with
 * the tree on PYTHONPATH, where the isolation probes and the lookups do win.
 * After every case the host must be as it was (redteam.h).
 *
 * Flags, in any order: --unprivileged (running as uid 65534), --copy
 * (sandboxes copy the snapshot instead of an overlay). */
#include "test.h"

#include "../enclave/fixture.h"
#include "redteam.h"

#include "enclave/fsutil.h"
#include "enclave/gitrepo.h"
#include "enclave/reason.h"
#include "envs/gen.h"
#include "envs/harness.h"
#include "core/text.h"

#include <stdint.h>

#define N_TASKS 2

typedef struct {
    rlvr_task *task;
    rlvr_verify_task *vt;   /* as generated */
    rlvr_task *weak_task;
    rlvr_verify_task *weak; /* its runner: /usr/bin/env PYTHONPATH=/work /usr/bin/python3 tests/runner.py */
    char *buggy;            /* lib.py at the base commit */
    char *correct;          /* lib.py with the reference patch, as a Python string literal */
    char *fixer;            /* Python: an exec hook that puts the correct library over lib.py's namespace */
    char *fixer_literal;    /* the same as a string literal */
    bool ready;
} ptask;

typedef struct {
    const char *files;
    const char *scratch;
    const char *canary;
} penv;

/* ---- the exploits' Python ---------------------------------------------------------------- */

/* The fixer: wraps exec so that the runner's load of lib.py ends with the
 * correct functions in its namespace. */
static const char fixer_text[] =
    "import builtins as _rt_b\n"
    "_RT_CORRECT = @CORRECT@\n"
    "_rt_exec = _rt_b.exec\n"
    "def _rt_fixing_exec(code, g=None, l=None):\n"
    "    r = _rt_exec(code, g, l)\n"
    "    if isinstance(g, dict) and str(g.get('__file__', '')).endswith('lib.py'):\n"
    "        _rt_exec(_RT_CORRECT, g)\n"
    "    return r\n"
    "_rt_b.exec = _rt_fixing_exec\n";

/* lib.py of a probe: the buggy library, then the correct one executed over
 * it when the probe (its body, a function returning a truth value) says
 * yes, or with @INVERT@ "True" when it says no. */
static const char probe_text[] =
    "\n\n_RT_CORRECT = @CORRECT@\n\n\n"
    "def _rt_probe():\n"
    "@BODY@"
    "\n\ntry:\n"
    "    _rt_hit = bool(_rt_probe())\n"
    "except Exception:\n"
    "    _rt_hit = False\n"
    "if _rt_hit != @INVERT@:\n"
    "    exec(_RT_CORRECT, globals())\n";

typedef enum {
    CASE_GATE,    /* plant `path` holding `code`: refused with `reason` */
    CASE_PROBE,   /* lib.py probes with `code` (the probe's body) */
    CASE_RUNTIME, /* lib.py appends `code`: fails */
    CASE_CONTROL, /* lib.py appends `code` (NULL: the reference patch): passes */
} case_kind;

typedef struct {
    const char *name;
    case_kind kind;
    const char *path;
    const char *code;
    int reason;
    bool lookup;    /* gate: a file Python finds on its own: past the gate it must still fail */
    bool weak_wins; /* where the runner's Python is not isolated it passes: the defence is isolation */
} pcase;

#define GATE(name, path, code, reason, lookup, weak) {name, CASE_GATE, path, code, reason, lookup, weak}
#define PROBE(name, body, weak) {name, CASE_PROBE, NULL, body, RLVR_REASON_TESTS_FAILED, false, weak}
#define RUNTIME(name, code, weak) {name, CASE_RUNTIME, NULL, code, RLVR_REASON_TESTS_FAILED, false, weak}

/* A .pth line is executed when it starts with "import". */
#define PTH "import builtins; exec(@FIXER_LITERAL@)\n"

static const pcase controls[] = {
    {"control: the reference patch", CASE_CONTROL, NULL, NULL, 0, false, false},
    {"control: the fixer in lib.py itself", CASE_CONTROL, NULL,
     "\n\n_RT_CORRECT = @CORRECT@\nexec(_RT_CORRECT, globals())\n", 0, false, false},
};

static const pcase cases[] = {
    /* 1. files Python or pytest find by lookup: only lib.py may change */
    GATE("conftest.py at the top", "conftest.py", "@FIXER@", RLVR_REASON_HOOK_FILE, true, false),
    GATE("tests/conftest.py", "tests/conftest.py", "@FIXER@", RLVR_REASON_HOOK_FILE, true, false),
    GATE("sitecustomize.py", "sitecustomize.py", "@FIXER@", RLVR_REASON_HOOK_FILE, true, true),
    GATE("usercustomize.py", "usercustomize.py", "@FIXER@", RLVR_REASON_HOOK_FILE, true, true),
    GATE("a .pth file", "rt.pth", PTH, RLVR_REASON_HOOK_FILE, true, false),
    GATE("pytest.ini", "pytest.ini", "[pytest]\naddopts = -p rtfix\n", RLVR_REASON_HOOK_FILE, true, false),
    GATE("tox.ini", "tox.ini", "[pytest]\naddopts = -p rtfix\n", RLVR_REASON_HOOK_FILE, true, false),
    GATE("setup.cfg with pytest options", "setup.cfg", "[tool:pytest]\naddopts = -p rtfix\n",
         RLVR_REASON_NOT_EDITABLE, true, false),
    GATE("pyproject.toml with pytest options", "pyproject.toml", "[tool.pytest.ini_options]\naddopts = '-p rtfix'\n",
         RLVR_REASON_NOT_EDITABLE, true, false),
    GATE("json.py beside the code", "json.py", "@FIXER@", RLVR_REASON_NOT_EDITABLE, true, false),
    GATE("a package named lib", "lib/__init__.py", "@FIXER@", RLVR_REASON_NOT_EDITABLE, true, false),
    GATE("a planted __pycache__ entry", "__pycache__/lib.cpython-311.pyc", "@FIXER@", RLVR_REASON_NOT_EDITABLE,
         true, false),
    GATE("the runner rewritten", "tests/runner.py", "@FIXER@", RLVR_REASON_PROTECTED_PATH, false, false),
    /* 2. what the runner's process could reach: every probe must say no */
    PROBE("the results descriptor in the runner",
          "    import os, stat\n    return stat.S_ISFIFO(os.fstat(3).st_mode)\n", false),
    PROBE("the results or the test order in the environment",
          "    import os\n    return 'RLVR_RESULTS_FD' in os.environ or 'RLVR_TEST_ORDER' in os.environ\n", false),
    PROBE("the hidden tests in the tree",
          "    import os\n    return sorted(os.listdir('/work/tests')) != ['public.py', 'runner.py']\n", false),
    PROBE("the judge's memory", "    import os\n    return open('/proc/%d/mem' % os.getppid(), 'rb') is not None\n",
          false),
    PROBE("the judge's environment",
          "    import os\n    return len(open('/proc/%d/environ' % os.getppid(), 'rb').read()) > 0\n", false),
    PROBE("the judge's program",
          "    import os\n    return open('/proc/%d/exe' % os.getppid(), 'rb').read(4) == b'\\x7fELF'\n", false),
    PROBE("the judge's descriptors", "    import os\n    return len(os.listdir('/proc/%d/fd' % os.getppid())) > 0\n",
          false),
    PROBE("what the runtime's private directories hold",
          "    import os\n    dirs = ('/.rlvr/judge', '/.rlvr/private', '/.rlvr/lower', '/.rlvr/state')\n"
          "    return any(os.listdir(p) for p in dirs if os.path.isdir(p))\n",
          false),
    PROBE("an inet socket", "    import socket\n    socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()\n"
                            "    return True\n", false),
    PROBE("the host's canary", "    return open('@CANARY@').read() == 'canary\\n'\n", false),
    PROBE("a mark an earlier run left",
          "    import os\n    hit = os.path.exists('/tmp/rt-mark') or os.path.exists('/work/rt-mark')\n"
          "    open('/tmp/rt-mark', 'w').close()\n    open('/work/rt-mark', 'w').close()\n    return hit\n",
          false),
    /* 3. Python's own lookups: isolation holds them off (the weak runner
     * shows each would win without it) */
    PROBE("Python not isolated (-I)", "    import sys\n    return not sys.flags.isolated\n", true),
    PROBE("the site module imported (-S)", "    import sys\n    return 'site' in sys.modules\n", true),
    PROBE("the tree on sys.path",
          "    import sys\n    return any(p in ('', '.', '/work', '/work/tests') for p in sys.path)\n", true),
    PROBE("bytecode written (-B)", "    import sys\n    return not sys.dont_write_bytecode\n", true),
    PROBE("PYTHON* variables honoured", "    import sys\n    return not sys.flags.ignore_environment\n", true),
    /* 4. lib.py prepares a lookup at run time and starts Python again with
     * the same command line */
    RUNTIME("usercustomize.py in the user site, then Python again",
            "\nimport os as _rt_os, sys as _rt_sys\n"
            "_rt_dir = _rt_os.path.expanduser('~/.local/lib/python%d.%d/site-packages' % _rt_sys.version_info[:2])\n"
            "if not _rt_os.path.exists(_rt_os.path.join(_rt_dir, 'usercustomize.py')):\n"
            "    _rt_os.makedirs(_rt_dir, exist_ok=True)\n"
            "    open(_rt_os.path.join(_rt_dir, 'usercustomize.py'), 'w').write(@FIXER_LITERAL@)\n"
            "    _rt_os.execv(_rt_sys.executable, _rt_sys.orig_argv)\n",
            true),
    RUNTIME("sitecustomize.py on a PYTHONPATH, then Python again",
            "\nimport os as _rt_os, sys as _rt_sys\n"
            "if 'RT_AGAIN' not in _rt_os.environ:\n"
            "    _rt_os.makedirs('/tmp/rtpath', exist_ok=True)\n"
            "    open('/tmp/rtpath/sitecustomize.py', 'w').write(@FIXER_LITERAL@)\n"
            "    _rt_env = dict(_rt_os.environ, RT_AGAIN='1', PYTHONPATH='/tmp/rtpath')\n"
            "    _rt_os.execve(_rt_sys.executable, _rt_sys.orig_argv, _rt_env)\n",
            true),
    RUNTIME("sitecustomize.py written into the tree, then Python again",
            "\nimport os as _rt_os, sys as _rt_sys\n"
            "if not _rt_os.path.exists('/work/sitecustomize.py'):\n"
            "    open('/work/sitecustomize.py', 'w').write(@FIXER_LITERAL@)\n"
            "    _rt_os.execv(_rt_sys.executable, _rt_sys.orig_argv)\n",
            true),
};

/* ---- the tasks ------------------------------------------------------------------------------ */

/* `s` as a Python string literal (caller frees). */
static char *py_literal(const char *s) {
    char *out = malloc(2 * strlen(s) + 3), *o = out;
    if (!out) return NULL;
    *o++ = '\'';
    for (; *s; s++) {
        if (*s == '\\' || *s == '\'') *o++ = '\\';
        if (*s == '\n') {
            *o++ = '\\';
            *o++ = 'n';
        } else {
            *o++ = *s;
        }
    }
    *o++ = '\'';
    *o = '\0';
    return out;
}

static int read_lib(const rlvr_task *t, char **out) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/lib.py", t->repository_path);
    return rlvr_fs_read_file(path, out, NULL);
}

static int ptask_new(ptask *pt, rlvr_sandbox_host *host, const penv *env, rlvr_split split, int difficulty) {
    memset(pt, 0, sizeof *pt);
    rlvr_task_gen_options o = RLVR_TASK_GEN_OPTIONS_INIT;
    o.family = "bugfix-py";
    o.seed = 20240611;
    o.split = split;
    o.difficulty = difficulty;
    RLVR_TRY(rlvr_task_gen_one(&pt->task, &o, 0, env->files));
    /* the weakened copy: the same task generated again elsewhere, its
     * runner started without isolation and with the tree on PYTHONPATH */
    char weak_dir[PATH_MAX + 8];
    snprintf(weak_dir, sizeof weak_dir, "%s/weak", env->files);
    RLVR_TRY(rlvr_task_gen_one(&pt->weak_task, &o, 0, weak_dir));
    rlvr_str_list *run = &pt->weak_task->judge_run;
    rlvr_str_list_clear(run);
    const char *weak_run[] = {"judge", "/usr/bin/env", "PYTHONPATH=/work", "/usr/bin/python3", "tests/runner.py"};
    for (size_t i = 0; i < sizeof weak_run / sizeof *weak_run; i++) RLVR_TRY(rlvr_str_list_add_unique(run, weak_run[i]));
    RLVR_TRY(read_lib(pt->task, &pt->buggy));
    char *correct = NULL;
    RLVR_TRY(redteam_reference_file(pt->task, env->scratch, "lib.py", &correct));
    pt->correct = py_literal(correct);
    free(correct);
    const redteam_subst subst[] = {{"@CORRECT@", pt->correct ? pt->correct : ""}};
    pt->fixer = pt->correct ? redteam_expand(fixer_text, subst, 1) : NULL;
    pt->fixer_literal = pt->fixer ? py_literal(pt->fixer) : NULL;
    if (!pt->fixer_literal) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    RLVR_TRY(redteam_verify_task_new(&pt->vt, host, pt->task));
    RLVR_TRY(redteam_verify_task_new(&pt->weak, host, pt->weak_task));
    pt->ready = true;
    return 0;
}

static void ptask_free(ptask *pt) {
    rlvr_verify_task_free(pt->vt);
    rlvr_verify_task_free(pt->weak);
    rlvr_task_free(pt->task);
    rlvr_task_free(pt->weak_task);
    free(pt->buggy);
    free(pt->correct);
    free(pt->fixer);
    free(pt->fixer_literal);
    memset(pt, 0, sizeof *pt);
}

/* ---- running the cases ------------------------------------------------------------------------ */

static char *expand(const char *text, const ptask *pt, const penv *env, bool invert) {
    const redteam_subst subst[] = {{"@CORRECT@", pt->correct},
                                   {"@FIXER_LITERAL@", pt->fixer_literal},
                                   {"@FIXER@", pt->fixer},
                                   {"@CANARY@", env->canary},
                                   {"@INVERT@", invert ? "True" : "False"}};
    return redteam_expand(text, subst, sizeof subst / sizeof *subst);
}

/* A patch that creates `path` holding `text`, written by hand: a patch,
 * not a work tree, is what reaches the gate, and a work tree's diff would
 * leave out what .gitignore names (__pycache__/). Caller frees. */
static char *new_file_patch(const char *path, const char *text) {
    rlvr_text t = {0};
    int lines = 0;
    for (const char *p = text; *p; p++) lines += *p == '\n';
    rlvr_text_printf(&t, "diff --git a/%s b/%s\nnew file mode 100644\n--- /dev/null\n+++ b/%s\n@@ -0,0 +1,%d @@\n", path,
                     path, path, lines);
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, "\n");
        rlvr_text_printf(&t, "+%.*s\n", (int)n, p);
        p += n + (p[n] == '\n');
    }
    if (t.failed) rlvr_text_free(&t);
    return t.data;
}

/* The case's patch (caller frees). */
static int case_patch(const pcase *c, const ptask *pt, const penv *env, bool invert, char **patch, size_t *len) {
    *patch = NULL;
    if (c->kind == CASE_CONTROL && !c->code) {
        *patch = strdup(pt->task->reference_patch);
    } else if (c->kind == CASE_GATE) {
        char *file = expand(c->code, pt, env, false);
        *patch = file ? new_file_patch(c->path, file) : NULL;
        free(file);
    } else {
        char *body = NULL;
        if (c->kind == CASE_PROBE) {
            const redteam_subst probe[] = {{"@BODY@", c->code}};
            body = redteam_expand(probe_text, probe, 1);
        }
        const char *parts[] = {pt->buggy, body ? body : c->code, NULL};
        char *joined = redteam_concat(parts);
        char *lib = joined ? expand(joined, pt, env, invert) : NULL;
        free(joined);
        free(body);
        fixture_edit e = {EDIT_WRITE, "lib.py", lib, 0, 0};
        int rc = lib ? fixture_patch_repo(pt->task->repository_path, pt->task->base_commit, env->scratch, &e, 1,
                                          patch, len)
                     : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        free(lib);
        return rc;
    }
    *len = *patch ? strlen(*patch) : 0;
    return *patch ? 0 : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
}

/* Past the gate: one run of the patch (no gate), which must fail with
 * tests_failed on the isolated task, and pass on the weak one when the
 * case says it wins there. */
static void past_the_gate(const pcase *c, const ptask *pt, const char *patch, size_t len, uint64_t seed) {
    for (int weak = 0; weak <= (int)c->weak_wins; weak++) {
        rlvr_verify_task *vt = weak ? pt->weak : pt->vt;
        rlvr_verify_run run;
        int rc = rlvr_verify_run_once(vt, patch, len, seed, 0, &run);
        CHECK_MSG(rc == 0, "case \"%s\" past the gate: %s", c->name, rlvr_error_last());
        int want = weak ? RLVR_REASON_NONE : RLVR_REASON_TESTS_FAILED;
        CHECK_MSG(rc != 0 || run.reason == want, "case \"%s\" past the gate%s: %s, expected %s", c->name,
                  weak ? ", weak runner" : "", rlvr_reason_name(run.reason), rlvr_reason_name(want));
        printf("    past the gate%-38s %s\n", weak ? ", weak runner (control)" : "", rlvr_reason_name(run.reason));
        if (rc == 0) rlvr_verify_run_free(&run);
        rlvr_verify_task_settle(vt);
    }
}

static int run_cases(const pcase *list, size_t n, ptask *tasks, const penv *env, rlvr_sandbox_host *host,
                     int pooled, uint64_t first_seed) {
    int ran = 0;
    for (size_t i = 0; i < n; i++) {
        const pcase *c = &list[i];
        for (int k = 0; k < N_TASKS; k++) {
            if (!tasks[k].ready) continue;
            /* the case, its inversion (probes), and on the weak task (where it wins) */
            int variants = c->kind == CASE_PROBE ? 2 : 1;
            if ((c->kind == CASE_PROBE || c->kind == CASE_RUNTIME) && c->weak_wins) variants++;
            for (int var = 0; var < variants; var++) {
                bool invert = c->kind == CASE_PROBE && var == 1;
                bool weak = (c->kind == CASE_PROBE && var == 2) || (c->kind == CASE_RUNTIME && var == 1);
                char *patch = NULL;
                size_t len = 0;
                int rc = case_patch(c, &tasks[k], env, invert, &patch, &len);
                CHECK_MSG(rc == 0, "case \"%s\": building the patch: %s", c->name, rlvr_error_last());
                CHECK_MSG(rc != 0 || len > 0, "case \"%s\": the patch is empty", c->name);
                if (rc != 0 || len == 0) {
                    free(patch);
                    continue;
                }
                char name[160];
                snprintf(name, sizeof name, "%s%s [%c]", invert ? "  inverted: passes: " : weak ? "  weak runner: wins: " : "",
                         c->name, "ab"[k]);
                redteam_target t = {.task = weak ? tasks[k].weak : tasks[k].vt, .host = host, .files = env->files,
                                    .canary = env->canary};
                redteam_expect x = {.name = name,
                                    .verdict = c->kind == CASE_GATE      ? RLVR_VERDICT_REJECTED
                                               : c->kind == CASE_CONTROL ? RLVR_VERDICT_PASS
                                                                         : RLVR_VERDICT_FAIL,
                                    .reason = c->reason};
                if (invert || weak) x = (redteam_expect){.name = name, .verdict = RLVR_VERDICT_PASS};
                uint64_t seed = first_seed + i;
                redteam_verify(&t, &x, patch, len, false, seed, pooled);
                if (c->kind == CASE_GATE && c->lookup) past_the_gate(c, &tasks[k], patch, len, seed);
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
    int rc = redteam_start(argc, argv, "test_redteam_py", NULL, &name, &host);
    if (rc) return rc;
    CHECK_OK(rlvr_git_init());
    redteam_dirs dirs;
    rc = redteam_dirs_new(&dirs, "rlvr-redteam-py-");
    CHECK_MSG(rc == 0, "%s", rlvr_error_last());
    if (rc) return redteam_summary(name, test_checks, test_failures);
    penv env = {.files = dirs.files, .scratch = dirs.scratch, .canary = dirs.canary};

    ptask tasks[N_TASKS];
    memset(tasks, 0, sizeof tasks);
    const rlvr_split splits[N_TASKS] = {RLVR_SPLIT_TRAIN, RLVR_SPLIT_REGRESSION};
    int pooled = 0;
    for (int k = 0; k < N_TASKS; k++) {
        rc = ptask_new(&tasks[k], host, &env, splits[k], k + 1);
        CHECK_MSG(rc == 0, "task %d: %s", k, rlvr_error_last());
        if (rc != 0) continue;
        printf("task [%c] %s: %zu + %zu tests, judge mode, Python\n", "ab"[k], tasks[k].task->id,
               tasks[k].task->fail_to_pass.n, tasks[k].task->pass_to_pass.n);
        pooled += 2;
    }
    printf("controls:\n");
    run_cases(controls, sizeof controls / sizeof *controls, tasks, &env, host, pooled, 9000);
    printf("exploits:\n");
    size_t n_cases = sizeof cases / sizeof *cases;
    CHECK_MSG(n_cases >= 20, "only %zu red-team cases", n_cases);
    int runs = run_cases(cases, n_cases, tasks, &env, host, pooled, 9100);
    for (int k = 0; k < N_TASKS; k++) ptask_free(&tasks[k]);
    redteam_check_host_clean(host);
    rlvr_sandbox_host_free(host);
    redteam_dirs_free(&dirs);
    printf("%zu red-team cases (%d verifications)\n", n_cases, runs);
    return redteam_summary(name, test_checks, test_failures);
}
