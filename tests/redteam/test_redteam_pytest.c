/* tests/redteam/test_redteam_pytest.c — exploit patches against a pytest
 * task in command mode (JUnit results), built the way docs/TASKS.md asks:
 * `python3 -I -m pytest`, an allow-list of the one source a fix touches,
 * the tests protected, and verification's own pytest settings (plugin
 * autoload off, no cache, no byte code).
 *
 * Every exploit leaves the bug in calc.py and carries a "carrier": Python
 * that rewrites calc.py with the fix before the tests import it, run only
 * if Python or pytest ran a file it should not have. So a case passes
 * exactly when a defence broke; each is scored 0 with its reason, and each
 * has a control that wins where that defence is taken away:
 * - files Python or pytest look up, planted by the patch (conftest.py,
 *   sitecustomize.py, usercustomize.py, pytest.ini, tox.ini, setup.cfg,
 *   pyproject.toml, modules named like standard ones or like pytest's own
 *   dependencies, a pytest11 entry point, byte code for calc, a conftest.py
 *   rewriting the JUnit report): refused by the gate (hook file, protected
 *   path, not editable, binary); where more than the gate stands in the
 *   way, the same patch past the gate (one run, no gate) still fails;
 * - calc.py planting such a file at run time and starting pytest again
 *   (the user's site directory, a .pth file, PYTHONPATH, a module beside
 *   the code, an entry point, PYTEST_ADDOPTS): the restarted, isolated
 *   Python never reads it.
 * The controls: the patch past the gate on this task (where only the gate
 * stops it), or on a weakened copy (pytest without -I, the tree on
 * PYTHONPATH, plugin autoload back on, the whole top of the tree editable).
 * After every case the host must be as it was (redteam.h).
 *
 * Flags, in any order: --unprivileged (running as uid 65534), --copy
 * (sandboxes copy the snapshot instead of an overlay). */
#include "test.h"
#include "core/fs.h"

#include "../enclave/fixture.h"
#include "redteam.h"

#include "core/text.h"
#include "enclave/fsutil.h"
#include "enclave/gitrepo.h"
#include "enclave/reason.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char buggy[] = "def mul(a, b):\n    return a + b\n";
static const char fixed[] = "def mul(a, b):\n    return a * b\n";
static const char hidden_test[] =
    "import os, sys\n"
    "sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))\n"
    "import calc\n"
    "def test_mul():\n    assert calc.mul(2, 3) == 6\n"
    "def test_double():\n    assert calc.mul(2, 2) == 4\n";

/* The carrier: the fix written over calc.py wherever the tree is. */
#define CARRIER                                                                                     \
    "# red team: the fix, carried by a file that should never run\n"                                 \
    "def _rt_fix():\n"                                                                              \
    "    import os\n"                                                                               \
    "    text = 'def mul(a, b):\\n    return a * b\\n'\n"                                           \
    "    here = os.path.dirname(os.path.abspath(globals().get('__file__') or '.'))\n"                \
    "    for root in (os.getcwd(), '/work', here):\n"                                               \
    "        path = os.path.join(root, 'calc.py')\n"                                                \
    "        try:\n"                                                                                \
    "            if os.path.isfile(path) and open(path).read() != text:\n"                          \
    "                open(path, 'w').write(text)\n"                                                 \
    "        except OSError:\n"                                                                     \
    "            pass\n"                                                                            \
    "_rt_fix()\n"

/* A module named like a real one: the carrier, then the real module. */
#define SHADOW_TAIL                                                                                 \
    "import importlib as _rt_il, os as _rt_os, sys as _rt_sys\n"                                      \
    "_rt_here = _rt_os.path.dirname(_rt_os.path.abspath(__file__))\n"                                 \
    "_rt_path = list(_rt_sys.path)\n"                                                               \
    "_rt_sys.path[:] = [p for p in _rt_path if _rt_os.path.abspath(p or '.') != _rt_here]\n"          \
    "del _rt_sys.modules[__name__]\n"                                                               \
    "try:\n    _rt_real = _rt_il.import_module(__name__)\nfinally:\n    _rt_sys.path[:] = _rt_path\n" \
    "_rt_sys.modules[__name__] = _rt_real\n"                                                        \
    "globals().update(_rt_real.__dict__)\n"
#define SHADOW CARRIER SHADOW_TAIL

/* calc.py that plants files at run time and starts the same command again
 * (once): `plant` is Python that writes them, given the carrier as
 * `carrier` (and the shadow's tail as `shadow_tail`: both put in as Python
 * literals when the case runs, for @CARRIER@ and @SHADOW_TAIL@); it may
 * change os.environ for the restarted process. */
#define RESTART(plant)                                                                              \
    "def mul(a, b):\n    return a + b\n\n\n"                                                         \
    "def _rt_restart():\n"                                                                          \
    "    import os, sys\n"                                                                          \
    "    if os.environ.get('RT_RESTARTED'):\n"                                                      \
    "        return\n"                                                                              \
    "    carrier = @CARRIER@\n"                                                                     \
    "    shadow_tail = @SHADOW_TAIL@\n"                                                             \
    "    try:\n" plant "    except OSError:\n        pass\n"                                        \
    "    os.environ['RT_RESTARTED'] = '1'\n"                                                        \
    "    sys.stdout.flush()\n"                                                                      \
    "    os.execv(sys.executable, sys.orig_argv)\n"                                                 \
    "_rt_restart()\n"

#define FORGED_REPORT                                                                               \
    "<testsuites><testsuite name=\"pytest\"><testcase classname=\"tests.test_calc\" name=\"test_mul\"/>" \
    "<testcase classname=\"tests.test_calc\" name=\"test_double\"/></testsuite></testsuites>"

typedef enum {
    CONTROL_STRICT_PAST_GATE, /* only the gate stands in the way */
    CONTROL_WEAK_PAST_GATE,   /* the gate refuses it anywhere; without isolation it would run */
    CONTROL_WEAK,             /* the weakened copy's own gate lets it in */
} control_kind;

typedef struct {
    const char *name;
    fixture_edit edits[3];
    int n_edits;
    int reason;            /* on the task as built */
    int reason_alt;        /* also accepted: the gate names the first file it refuses */
    bool past_gate_fails;  /* past the gate on the task as built, it still fails (more than the gate) */
    control_kind control;
} pcase;

static char pyc[4096];
static size_t pyc_len;

#define W(path, text) {EDIT_WRITE, path, text, 0, 0}
#define PLUGIN_INI(file, text, module) {W(file, text), W(module ".py", CARRIER)}, 2

static pcase cases[] = {
    {"lookup: conftest.py at the top", {W("conftest.py", CARRIER)}, 1, RLVR_REASON_HOOK_FILE, 0, false,
     CONTROL_STRICT_PAST_GATE},
    {"lookup: conftest.py beside the tests", {W("tests/conftest.py", CARRIER)}, 1, RLVR_REASON_HOOK_FILE,
     RLVR_REASON_PROTECTED_PATH, false,
     CONTROL_STRICT_PAST_GATE},
    {"lookup: conftest.py rewriting the JUnit report at exit",
     {W("conftest.py", "import atexit, os\n"
                       "def pytest_sessionfinish(session, exitstatus):\n    session.exitstatus = 0\n"
                       "def _rt_forge():\n"
                       "    open(os.path.join(os.getcwd(), 'report.xml'), 'w').write('" FORGED_REPORT "')\n"
                       "atexit.register(_rt_forge)\n")},
     1, RLVR_REASON_HOOK_FILE, 0, false, CONTROL_STRICT_PAST_GATE},
    {"lookup: sitecustomize.py", {W("sitecustomize.py", CARRIER)}, 1, RLVR_REASON_HOOK_FILE, 0, true,
     CONTROL_WEAK_PAST_GATE},
    {"lookup: usercustomize.py", {W("usercustomize.py", CARRIER)}, 1, RLVR_REASON_HOOK_FILE, 0, true,
     CONTROL_WEAK_PAST_GATE},
    {"lookup: pytest.ini naming a plugin",
     PLUGIN_INI("pytest.ini", "[pytest]\naddopts = -p rt_plugin_ini\n", "rt_plugin_ini"), RLVR_REASON_HOOK_FILE, 0, true,
     CONTROL_WEAK_PAST_GATE},
    {"lookup: tox.ini naming a plugin",
     PLUGIN_INI("tox.ini", "[pytest]\naddopts = -p rt_plugin_tox\n", "rt_plugin_tox"), RLVR_REASON_HOOK_FILE,
     RLVR_REASON_NOT_EDITABLE, true,
     CONTROL_WEAK_PAST_GATE},
    {"lookup: setup.cfg naming a plugin",
     PLUGIN_INI("setup.cfg", "[tool:pytest]\naddopts = -p rt_plugin_cfg\n", "rt_plugin_cfg"), RLVR_REASON_NOT_EDITABLE, 0,
     true, CONTROL_WEAK},
    {"lookup: pyproject.toml naming a plugin",
     PLUGIN_INI("pyproject.toml", "[tool.pytest.ini_options]\naddopts = \"-p rt_plugin_toml\"\n", "rt_plugin_toml"),
     RLVR_REASON_NOT_EDITABLE, 0, true, CONTROL_WEAK},
    {"lookup: json.py beside the code", {W("json.py", SHADOW)}, 1, RLVR_REASON_NOT_EDITABLE, 0, true, CONTROL_WEAK},
    {"lookup: unittest.py beside the code", {W("unittest.py", SHADOW)}, 1, RLVR_REASON_NOT_EDITABLE, 0, true,
     CONTROL_WEAK},
    {"lookup: pluggy.py, a dependency of pytest", {W("pluggy.py", SHADOW)}, 1, RLVR_REASON_NOT_EDITABLE, 0, true,
     CONTROL_WEAK},
    {"lookup: a pytest11 entry point (plugin autoload)",
     {W("rt_probe-0.dist-info/METADATA", "Metadata-Version: 2.1\nName: rt-probe\nVersion: 0\n"),
      W("rt_probe-0.dist-info/entry_points.txt", "[pytest11]\nrt_probe = rt_plugin_ep\n"), W("rt_plugin_ep.py", CARRIER)},
     3, RLVR_REASON_NOT_EDITABLE, 0, true, CONTROL_WEAK},
    {"lookup: byte code for calc (unchecked hash)", {{EDIT_BINARY, "__pycache__/calc.cpython-311.pyc", pyc, 0, 0}}, 1,
     RLVR_REASON_BINARY, 0, false, CONTROL_STRICT_PAST_GATE},
    {"restart: usercustomize.py in the user's site directory",
     {W("calc.py", RESTART("        import site\n"
                           "        d = site.getusersitepackages()\n"
                           "        os.makedirs(d, exist_ok=True)\n"
                           "        open(os.path.join(d, 'usercustomize.py'), 'w').write(carrier)\n"))},
     1, RLVR_REASON_TESTS_FAILED, 0, false, CONTROL_WEAK},
    {"restart: a .pth file in the user's site directory",
     {W("calc.py", RESTART("        import site\n"
                           "        d = site.getusersitepackages()\n"
                           "        os.makedirs(d, exist_ok=True)\n"
                           "        open(os.path.join(d, 'rt_hook.py'), 'w').write(carrier)\n"
                           "        open(os.path.join(d, 'rt.pth'), 'w').write('import rt_hook\\n')\n"))},
     1, RLVR_REASON_TESTS_FAILED, 0, false, CONTROL_WEAK},
    {"restart: PYTHONPATH to a sitecustomize.py in /tmp",
     {W("calc.py", RESTART("        os.makedirs('/tmp/rt', exist_ok=True)\n"
                           "        open('/tmp/rt/sitecustomize.py', 'w').write(carrier)\n"
                           "        os.environ['PYTHONPATH'] = '/tmp/rt'\n"))},
     1, RLVR_REASON_TESTS_FAILED, 0, false, CONTROL_WEAK},
    {"restart: unittest.py written beside the code",
     {W("calc.py", RESTART("        open(os.path.join(os.getcwd(), 'unittest.py'), 'w').write(carrier + shadow_tail)\n"))},
     1, RLVR_REASON_TESTS_FAILED, 0, false, CONTROL_WEAK},
    {"restart: a pytest11 entry point written beside the code",
     {W("calc.py", RESTART("        d = os.path.join(os.getcwd(), 'rt_run-0.dist-info')\n"
                           "        os.makedirs(d, exist_ok=True)\n"
                           "        open(os.path.join(d, 'METADATA'), 'w').write('Metadata-Version: 2.1\\nName: rt-run\\n"
                           "Version: 0\\n')\n"
                           "        open(os.path.join(d, 'entry_points.txt'), 'w').write('[pytest11]\\nrt = rt_run_ep\\n')\n"
                           "        open(os.path.join(os.getcwd(), 'rt_run_ep.py'), 'w').write(carrier)\n"))},
     1, RLVR_REASON_TESTS_FAILED, 0, false, CONTROL_WEAK},
    {"restart: PYTEST_ADDOPTS naming a plugin beside the code",
     {W("calc.py", RESTART("        open(os.path.join(os.getcwd(), 'rt_run_opt.py'), 'w').write(carrier)\n"
                           "        os.environ['PYTEST_ADDOPTS'] = '-p rt_run_opt'\n"))},
     1, RLVR_REASON_NO_RESULTS, 0, false, CONTROL_WEAK},
};

/* ---- the task, built and weakened ---------------------------------------------------- */

typedef struct {
    char repo[PATH_MAX + 16], hidden[PATH_MAX + 16], base[41];
    rlvr_verify_task *strict, *weak;
} ptask;

static rlvr_verify_spec spec_of(const ptask *p, bool weak) {
    static const char *const f2p[] = {"tests/test_calc.py::test_mul", NULL};
    static const char *const p2p[] = {"tests/test_calc.py::test_double", NULL};
    static const char *const protected_globs[] = {"/tests", NULL};
    static const char *const strict_editable[] = {"/calc.py", NULL}, *const weak_editable[] = {"/*", "/*/*", NULL};
    rlvr_verify_spec s = {
        .version = RLVR_VERIFY_SPEC_VERSION, .repo_dir = p->repo, .base_commit = p->base, .hidden_dir = p->hidden,
        .test_command = weak ? "env PYTHONPATH=/work PYTEST_DISABLE_PLUGIN_AUTOLOAD= python3 -m pytest -q "
                               "--junitxml=report.xml tests"
                             : "python3 -I -m pytest -q --junitxml=report.xml tests",
        .fail_to_pass = f2p, .pass_to_pass = p2p, .protected_globs = protected_globs,
        .editable_globs = weak ? weak_editable : strict_editable, .consensus_runs = 2, .results_junit = "report.xml"};
    rlvr_sandbox_limits_default(&s.limits);
    s.limits.wall_s = 30;
    return s;
}

/* Byte code of the fixed calc.py that Python loads without looking at the
 * source (an unchecked hash-based .pyc), made by the host's Python. */
static int make_pyc(const char *scratch) {
    char src[PATH_MAX + 16], out[PATH_MAX + 32], cmd[3 * PATH_MAX + 256];
    snprintf(src, sizeof src, "%s/calc.py", scratch);
    snprintf(out, sizeof out, "%s.pyc", src);
    RLVR_TRY(rlvr_fs_write_file(src, fixed, strlen(fixed)));
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 -c \"import py_compile; py_compile.compile('%s', cfile='%s', "
             "invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)\"", src, out);
    if (system(cmd) != 0) return RLVR_FAIL(RLVR_EIO, "compiling %s", src);
    char *data = NULL;
    RLVR_TRY(rlvr_fs_read_file(out, &data, &pyc_len));
    int rc = pyc_len <= sizeof pyc ? 0 : RLVR_FAIL(RLVR_EINVAL, "byte code of %zu bytes", pyc_len);
    if (rc == 0) memcpy(pyc, data, pyc_len);
    free(data);
    return rc;
}

static int ptask_new(ptask *p, rlvr_sandbox_host *host, const char *files) {
    snprintf(p->repo, sizeof p->repo, "%s/repo", files);
    snprintf(p->hidden, sizeof p->hidden, "%s/hidden", files);
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/calc.py", p->repo);
    RLVR_TRY(rlvr_mkdir_p(p->repo, 0755));
    RLVR_TRY(rlvr_fs_write_file(path, buggy, strlen(buggy)));
    snprintf(path, sizeof path, "%s/tests", p->hidden);
    RLVR_TRY(rlvr_mkdir_p(path, 0755));
    snprintf(path, sizeof path, "%s/tests/test_calc.py", p->hidden);
    RLVR_TRY(rlvr_fs_write_file(path, hidden_test, strlen(hidden_test)));
    RLVR_TRY(rlvr_git_init_commit_all(p->repo, "base\n", p->base));
    rlvr_verify_spec s = spec_of(p, false), w = spec_of(p, true);
    RLVR_TRY(rlvr_verify_task_new(&p->strict, host, &s));
    return rlvr_verify_task_new(&p->weak, host, &w);
}

/* One run past the gate: whether every test passed. */
static bool passes_past_gate(rlvr_verify_task *task, const char *patch, size_t len, int *reason) {
    rlvr_verify_run run;
    int rc = rlvr_verify_run_once(task, patch, len, 11, 0, &run);
    rlvr_verify_task_settle(task); /* the run's supervisor gone, as after a verification */
    CHECK_MSG(rc == 0, "a run past the gate: %s", rlvr_error_last());
    *reason = rc == 0 ? run.reason : -1;
    if (rc == 0) rlvr_verify_run_free(&run);
    return rc == 0 && *reason == RLVR_REASON_NONE;
}

/* `s` as a Python expression: a bytes literal (every byte that is not
 * printable ASCII escaped), decoded (caller frees). */
static char *py_literal(const char *s) {
    rlvr_text t = {0};
    rlvr_text_printf(&t, "b'");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '\\' || *p == '\'') rlvr_text_printf(&t, "\\%c", *p);
        else if (*p >= 0x20 && *p < 0x7f) rlvr_text_printf(&t, "%c", *p);
        else rlvr_text_printf(&t, "\\x%02x", *p);
    }
    rlvr_text_printf(&t, "'.decode()");
    return t.data;
}

static char *carrier_literal, *shadow_tail_literal;

static void run_case(const pcase *c, const ptask *p, const redteam_target *strict, const redteam_target *weak,
                     const char *scratch) {
    char *patch = NULL;
    size_t len = 0;
    fixture_edit edits[3];
    char *expanded[3] = {NULL, NULL, NULL};
    memcpy(edits, c->edits, sizeof edits);
    const redteam_subst subst[] = {{"@CARRIER@", carrier_literal}, {"@SHADOW_TAIL@", shadow_tail_literal}};
    for (int i = 0; i < c->n_edits; i++) {
        if (edits[i].kind == EDIT_BINARY) edits[i].size = pyc_len;
        if (edits[i].kind == EDIT_WRITE && strstr(edits[i].content, "@CARRIER@"))
            edits[i].content = expanded[i] = redteam_expand(edits[i].content, subst, 2);
    }
    CHECK_OK(fixture_patch_repo(p->repo, p->base, scratch, edits, (size_t)c->n_edits, &patch, &len));
    for (int i = 0; i < 3; i++) free(expanded[i]);
    if (!patch) return;
    bool refused = c->reason < RLVR_REASON_APPLY_FAILED;
    redteam_expect x = {c->name, refused ? RLVR_VERDICT_REJECTED : RLVR_VERDICT_FAIL, c->reason, c->reason_alt,
                        "the gate refused another of its files first", false};
    redteam_verify(strict, &x, patch, len, false, 7, 2);
    int reason = 0;
    if (c->past_gate_fails)
        CHECK_MSG(!passes_past_gate(p->strict, patch, len, &reason), "%s: past the gate it won (the isolation broke)",
                  c->name);
    if (c->control == CONTROL_WEAK) {
        char name[160];
        snprintf(name, sizeof name, "control: %s, weakened", c->name);
        redteam_expect ok = {name, RLVR_VERDICT_PASS, RLVR_REASON_NONE, RLVR_REASON_NONE, NULL, false};
        redteam_verify(weak, &ok, patch, len, false, 7, 2);
    } else {
        bool won = passes_past_gate(c->control == CONTROL_STRICT_PAST_GATE ? p->strict : p->weak, patch, len, &reason);
        CHECK_MSG(won, "%s: the control past the gate%s did not win (%s)", c->name,
                  c->control == CONTROL_WEAK_PAST_GATE ? ", weakened," : "", rlvr_reason_name(reason));
        printf("  %-52s %s past the gate%s\n", "  control", won ? "pass" : "FAIL",
               c->control == CONTROL_WEAK_PAST_GATE ? ", weakened" : "");
    }
    free(patch);
}

int main(int argc, char **argv) {
    const char *name = NULL;
    rlvr_sandbox_host *host = NULL;
    int rc = redteam_start(argc, argv, "test_redteam_pytest", NULL, &name, &host);
    if (rc) return rc;
    redteam_dirs d;
    CHECK_OK(redteam_dirs_new(&d, "rlvr-redteam-pytest-"));
    ptask p = {0};
    carrier_literal = py_literal(CARRIER);
    shadow_tail_literal = py_literal(SHADOW_TAIL);
    CHECK(carrier_literal && shadow_tail_literal);
    CHECK_OK(make_pyc(d.scratch));
    CHECK_OK(ptask_new(&p, host, d.files));
    if (p.strict && p.weak) {
        redteam_target strict = {.task = p.strict, .host = host, .files = d.files, .canary = d.canary},
                       weak = {.task = p.weak, .host = host, .files = d.files, .canary = d.canary};
        /* the baselines: the bug fails on both, the fix passes on both */
        const fixture_edit fix = {EDIT_WRITE, "calc.py", fixed, 0, 0};
        char *patch = NULL;
        size_t len = 0;
        CHECK_OK(fixture_patch_repo(p.repo, p.base, d.scratch, &fix, 1, &patch, &len));
        redteam_expect bug = {"the bug (an empty patch)", RLVR_VERDICT_FAIL, RLVR_REASON_TESTS_FAILED, RLVR_REASON_NONE,
                              NULL, false};
        redteam_expect ref = {"control: the fix", RLVR_VERDICT_PASS, RLVR_REASON_NONE, RLVR_REASON_NONE, NULL, false};
        /* each task's pooled enclave, made by a first verification; it
         * stays for every case */
        rlvr_enclave_verdict first;
        CHECK_OK(rlvr_verify_patch(p.strict, "", 0, false, 1, &first));
        CHECK_OK(rlvr_verify_patch(p.weak, "", 0, false, 1, &first));
        rlvr_verify_task_settle(p.strict);
        rlvr_verify_task_settle(p.weak);
        redteam_verify(&strict, &bug, "", 0, false, 7, 2);
        redteam_verify(&weak, &bug, "", 0, false, 7, 2);
        if (patch) {
            redteam_verify(&strict, &ref, patch, len, false, 7, 2);
            redteam_verify(&weak, &ref, patch, len, false, 7, 2);
        }
        free(patch);
        size_t n = sizeof cases / sizeof *cases;
        CHECK(n >= 20);
        for (size_t i = 0; i < n; i++) run_case(&cases[i], &p, &strict, &weak, d.scratch);
        printf("%zu pytest cases, each scored 0 with its reason, each with a control that wins\n", n);
    }
    rlvr_verify_task_free(p.strict);
    rlvr_verify_task_free(p.weak);
    redteam_check_host_clean(host);
    rlvr_sandbox_host_free(host);
    redteam_dirs_free(&d);
    free(carrier_literal);
    free(shadow_tail_literal);
    return redteam_summary(name, test_checks, test_failures);
}
