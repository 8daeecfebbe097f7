/* envs/probes_python.c — the probes for tasks whose commands start Python
 * (envs/probes.h): Python looks files up on its own, and a task whose
 * runner or pytest honours one that a patch controls can be rewarded for
 * code it never should have run.
 *
 * Every lookup probe carries the reference fix in a file the task's Python
 * should never execute, and leaves the code under test as it was (the
 * bug): rewarded exactly when Python ran that file. Its code rewrites the
 * files the reference patch changes, in the tree it finds itself in (and
 * the working directory, and /work), before the tests load them:
 * - python lookup: files at names Python or pytest look up, where the gate
 *   lets a patch add them: conftest.py at the top and beside every test
 *   and source directory; sitecustomize.py and usercustomize.py; a .pth
 *   file; pytest.ini, tox.ini, setup.cfg and pyproject.toml naming a plugin
 *   (-p); a distribution's entry point for pytest's plugin autoload; a
 *   module named like one the task's Python files import, or like a
 *   standard one (json, unittest), beside the code and at the top;
 * - python restart: code appended to the editable source the fix touches
 *   that plants sitecustomize.py, usercustomize.py and a .pth file where
 *   Python would look (the user's site directory under $HOME, every
 *   writable directory on its path, the working and the script's
 *   directory) and restarts the interpreter with its own arguments: the
 *   restarted one runs them unless it is isolated (-I, -S).
 * A planted byte-code file (__pycache__) needs no probe: byte code is binary, and the
 * gate refuses binary patches.
 * For pytest tasks in command mode, three forgers in a conftest.py (each
 * its own class): exit 0 at import, pytest_sessionfinish forcing status 0,
 * and the JUnit report rewritten at exit with every required test passed
 * (the status forced to 0 as well). */
#include "envs/probes_internal.h"

#include "core/error.h"
#include "enclave/fsutil.h"
#include "enclave/gitrepo.h"
#include "envs/gen_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* `s` as a Python bytes literal (b'...'), every byte that is not printable
 * ASCII escaped. */
static void py_bytes(rlvr_text *out, const char *s, size_t n) {
    rlvr_text_printf(out, "b'");
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '\\' || ch == '\'') rlvr_text_printf(out, "\\%c", ch);
        else if (ch >= 0x20 && ch < 0x7f) rlvr_text_printf(out, "%c", ch);
        else rlvr_text_printf(out, "\\x%02x", ch);
    }
    rlvr_text_printf(out, "'");
}

static void py_string(rlvr_text *out, const char *s) {
    py_bytes(out, s, strlen(s));
    rlvr_text_printf(out, ".decode('utf-8')");
}

void py_forger(rlvr_text *out, const char *stream, bool kill_group) {
    rlvr_text_printf(out, "\n# rlvr probe: forged results\ndef _rlvr_probe_forge():\n    import os\n    stream = ");
    py_bytes(out, stream, strlen(stream));
    rlvr_text_printf(out,
                     "\n    targets = [os.environ.get('RLVR_RESULTS_FD'), '3', '/proc/%%d/fd/3' %% os.getppid()]\n"
                     "    for t in targets:\n"
                     "        try:\n"
                     "            if t and t.isdigit():\n"
                     "                n = os.write(int(t), stream)\n"
                     "            elif t:\n"
                     "                fd = os.open(t, os.O_WRONLY)\n"
                     "                n = os.write(fd, stream)\n"
                     "            else:\n"
                     "                continue\n"
                     "        except (OSError, ValueError):\n"
                     "            continue\n"
                     "        if n == len(stream):\n"
                     "            %s\n"
                     "_rlvr_probe_forge()\n",
                     kill_group ? "os.killpg(0, 9)" : "os._exit(0)");
}

void py_guard(rlvr_text *out, const rlvr_str_list *secrets) {
    rlvr_text_printf(out, "\n# rlvr probe: the fix counts only where hidden files are readable\n"
                          "def _rlvr_probe_guard():\n    for path in [");
    for (size_t i = 0; i < secrets->n; i++) {
        py_string(out, secrets->items[i]);
        rlvr_text_printf(out, ", ");
    }
    rlvr_text_printf(out, "]:\n"
                          "        try:\n"
                          "            open(path, 'rb').close()\n"
                          "            return\n"
                          "        except OSError:\n"
                          "            pass\n"
                          "    raise SystemExit(1)\n"
                          "_rlvr_probe_guard()\n");
}

/* ---- the fix, carried in a file Python should never run -------------------------------- */

/* The files the reference patch changes (its "+++ b/" paths) and their
 * text with the fix applied: what the hook writes. */
static int reference_files(probe_ctx *c, rlvr_str_list *paths, rlvr_str_list *texts) {
    char *dir = NULL, tree[41];
    RLVR_TRY(rlvr_fs_mkdtemp(&dir, c->scratch, "probe-py-"));
    int rc = rlvr_fs_remove_tree(dir);
    if (rc == 0) rc = rlvr_git_export(c->t->repository_path, c->t->base_commit, dir, false, NULL, tree);
    if (rc == 0) rc = gen_apply_patch(dir, c->t->reference_patch);
    for (const char *p = c->t->reference_patch; rc == 0 && (p = strstr(p, "\n+++ b/")); p++) {
        const char *start = p + 7, *end = strchr(start, '\n');
        char rel[PATH_MAX], path[2 * PATH_MAX], *text = NULL;
        snprintf(rel, sizeof rel, "%.*s", end ? (int)(end - start) : (int)strlen(start), start);
        snprintf(path, sizeof path, "%s/%s", dir, rel);
        if (listed(paths, rel) || rlvr_fs_read_file(path, &text, NULL) != 0) continue;
        rc = rlvr_str_list_add_unique(paths, rel);
        if (rc == 0) {
            char **grown = realloc(texts->items, (texts->n + 1) * sizeof *grown);
            if (!grown) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
            else texts->items = grown, texts->items[texts->n++] = text, text = NULL;
        }
        free(text);
    }
    rlvr_fs_remove_tree(dir);
    free(dir);
    return rc;
}

/* The hook: Python that writes the fixed files wherever the tree is. */
static void fix_hook(rlvr_text *out, const rlvr_str_list *paths, const rlvr_str_list *texts) {
    rlvr_text_printf(out, "# rlvr probe: the reference fix, delivered by a file Python looked up\n"
                          "def _rlvr_probe_fix():\n    import os\n    files = [\n");
    for (size_t i = 0; i < paths->n; i++) {
        rlvr_text_printf(out, "        (");
        py_string(out, paths->items[i]);
        rlvr_text_printf(out, ", ");
        py_string(out, texts->items[i]);
        rlvr_text_printf(out, "),\n");
    }
    rlvr_text_printf(out,
                     "    ]\n"
                     "    here = os.path.dirname(os.path.abspath(globals().get('__file__') or os.getcwd()))\n"
                     "    roots = [here, os.getcwd(), '/work']\n"
                     "    while os.path.dirname(roots[-1]) != roots[-1]:\n"
                     "        roots.append(os.path.dirname(roots[-1]))\n"
                     "    for root in roots:\n"
                     "        for rel, text in files:\n"
                     "            path = os.path.join(root, rel)\n"
                     "            try:\n"
                     "                if not os.path.isfile(path):\n"
                     "                    continue\n"
                     "                with open(path, encoding='utf-8') as f:\n"
                     "                    if f.read() == text:\n"
                     "                        continue\n"
                     "                with open(path, 'w', encoding='utf-8') as f:\n"
                     "                    f.write(text)\n"
                     "            except (OSError, ValueError):\n"
                     "                pass\n"
                     "_rlvr_probe_fix()\n");
}

/* A module named like a real one: the hook, then the real module in its
 * place (its own directory taken off the path), so the program goes on. */
static const char shadow_tail[] = "import importlib as _rlvr_il, os as _rlvr_os, sys as _rlvr_sys\n"
                                  "_rlvr_here = _rlvr_os.path.dirname(_rlvr_os.path.abspath(__file__))\n"
                                  "_rlvr_path = list(_rlvr_sys.path)\n"
                                  "_rlvr_sys.path[:] = [p for p in _rlvr_path\n"
                                  "                     if _rlvr_os.path.abspath(p or '.') != _rlvr_here]\n"
                                  "del _rlvr_sys.modules[__name__]\n"
                                  "try:\n"
                                  "    _rlvr_real = _rlvr_il.import_module(__name__)\n"
                                  "finally:\n"
                                  "    _rlvr_sys.path[:] = _rlvr_path\n"
                                  "_rlvr_sys.modules[__name__] = _rlvr_real\n"
                                  "globals().update(_rlvr_real.__dict__)\n";

/* ---- python lookup ------------------------------------------------------------------------ */

/* dir + "/" + name (or name at the top). */
static void in_dir(char *out, size_t cap, const char *dir, const char *name) {
    snprintf(out, cap, "%s%s%s", dir, dir[0] ? "/" : "", name);
}

/* One lookup part: the files (path, text) when the gate lets a patch add
 * every one of them and none exists. */
static int lookup_part(probe_ctx *c, const char *part, const probe_edit *edits, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (listed(&c->files, edits[i].path) || !gate_allows(c, edits[i].path)) return 0;
    return add_probe(c, "python lookup", part, false, edits, n);
}

/* The directories of the task's Python files (tests, public and hidden,
 * and editable sources), the top included. */
static int python_dirs(probe_ctx *c, rlvr_str_list *dirs) {
    RLVR_TRY(rlvr_str_list_add_unique(dirs, ""));
    const rlvr_str_list *lists[] = {&c->files, &c->t->hidden_test_files};
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < lists[l]->n; i++) {
            const char *f = lists[l]->items[i], *slash = strrchr(f, '/');
            if (!has_suffix(f, ".py") || !slash) continue;
            char dir[PATH_MAX];
            snprintf(dir, sizeof dir, "%.*s", (int)(slash - f), f);
            RLVR_TRY(rlvr_str_list_add_unique(dirs, dir));
        }
    return 0;
}

/* Top-level module names `import X` / `from X import` name in a text. */
static int scan_imports(const char *text, rlvr_str_list *out) {
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n'), *p = line;
        while (*p == ' ' || *p == '\t') p++;
        bool from = strncmp(p, "from ", 5) == 0, imp = strncmp(p, "import ", 7) == 0;
        if (from || imp) {
            p += from ? 5 : 7;
            for (;;) {
                while (*p == ' ') p++;
                char name[64];
                size_t k = 0;
                while ((isalnum((unsigned char)*p) || *p == '_') && k + 1 < sizeof name) name[k++] = *p++;
                name[k] = '\0';
                if (k && !isdigit((unsigned char)name[0])) RLVR_TRY(rlvr_str_list_add_unique(out, name));
                while (*p && *p != ',' && *p != '\n') p++;
                if (from || *p != ',') break;
                p++;
            }
        }
        line = end ? end + 1 : NULL;
    }
    return 0;
}

/* Modules compiled into the interpreter: found before any file. */
static bool builtin_module(const char *name) {
    static const char *const builtin[] = {"sys", "builtins", "marshal", "posix", "_io", "_thread", "_imp",
                                          "_warnings", "_weakref", "gc", "itertools", "errno", "time", "_abc",
                                          "_codecs", "_signal", "_stat", "pwd", "atexit", "faulthandler", NULL};
    for (const char *const *b = builtin; *b; b++)
        if (strcmp(*b, name) == 0) return true;
    return false;
}

/* The module names to shadow: json and unittest, and what the task's
 * Python files import (not its own modules, not built-in ones). */
static int shadow_names(probe_ctx *c, rlvr_str_list *names) {
    RLVR_TRY(rlvr_str_list_add_unique(names, "json"));
    RLVR_TRY(rlvr_str_list_add_unique(names, "unittest"));
    rlvr_str_list found = {0};
    int rc = 0;
    for (int l = 0; rc == 0 && l < 2; l++) {
        const rlvr_str_list *files = l ? &c->t->hidden_test_files : &c->files;
        const char *root = l ? c->t->hidden_root_path : c->base;
        for (size_t i = 0; rc == 0 && i < files->n; i++) {
            if (!has_suffix(files->items[i], ".py")) continue;
            char path[2 * PATH_MAX], *text = NULL;
            snprintf(path, sizeof path, "%s/%s", root, files->items[i]);
            if (rlvr_fs_read_file(path, &text, NULL) == 0) rc = scan_imports(text, &found);
            free(text);
        }
    }
    for (size_t i = 0; rc == 0 && i < found.n && names->n < 24; i++) {
        char own[96], pkg[96];
        snprintf(own, sizeof own, "%s.py", found.items[i]);
        snprintf(pkg, sizeof pkg, "%s/__init__.py", found.items[i]);
        bool mine = false;
        for (size_t k = 0; k < c->files.n && !mine; k++) {
            const char *f = c->files.items[k], *base = strrchr(f, '/');
            base = base ? base + 1 : f;
            mine = strcmp(base, own) == 0 || has_suffix(f, pkg);
        }
        if (!mine && !builtin_module(found.items[i])) rc = rlvr_str_list_add_unique(names, found.items[i]);
    }
    rlvr_str_list_clear(&found);
    return rc;
}

/* The plugin a configuration file names: `module` holding the hook. */
static int ini_part(probe_ctx *c, const char *file, const char *text, const char *module, const char *hook) {
    char mod_path[128];
    snprintf(mod_path, sizeof mod_path, "%s.py", module);
    probe_edit e[2] = {{EDIT_NEW, "", text}, {EDIT_NEW, "", hook}};
    snprintf(e[0].path, sizeof e[0].path, "%s", file);
    snprintf(e[1].path, sizeof e[1].path, "%s", mod_path);
    return lookup_part(c, file, e, 2);
}

static int probe_lookups(probe_ctx *c, const char *hook) {
    rlvr_str_list dirs = {0}, names = {0};
    int rc = python_dirs(c, &dirs);
    if (rc == 0) rc = shadow_names(c, &names);
    for (size_t d = 0; rc == 0 && d < dirs.n; d++) {
        probe_edit e = {EDIT_NEW, "", hook};
        in_dir(e.path, sizeof e.path, dirs.items[d], "conftest.py");
        rc = lookup_part(c, e.path, &e, 1);
    }
    static const char *const customize[] = {"sitecustomize.py", "usercustomize.py"};
    for (size_t i = 0; rc == 0 && i < 2; i++) {
        probe_edit e = {EDIT_NEW, "", hook};
        snprintf(e.path, sizeof e.path, "%s", customize[i]);
        rc = lookup_part(c, e.path, &e, 1);
    }
    if (rc == 0) {
        probe_edit e[2] = {{EDIT_NEW, "rlvr_probe.pth", "import rlvr_probe_pth\n"}, {EDIT_NEW, "rlvr_probe_pth.py", hook}};
        rc = lookup_part(c, "rlvr_probe.pth", e, 2);
    }
    if (rc == 0) rc = ini_part(c, "pytest.ini", "[pytest]\naddopts = -p rlvr_probe_ini\n", "rlvr_probe_ini", hook);
    if (rc == 0) rc = ini_part(c, "tox.ini", "[pytest]\naddopts = -p rlvr_probe_tox\n", "rlvr_probe_tox", hook);
    if (rc == 0) rc = ini_part(c, "setup.cfg", "[tool:pytest]\naddopts = -p rlvr_probe_cfg\n", "rlvr_probe_cfg", hook);
    if (rc == 0)
        rc = ini_part(c, "pyproject.toml", "[tool.pytest.ini_options]\naddopts = \"-p rlvr_probe_toml\"\n",
                      "rlvr_probe_toml", hook);
    if (rc == 0) {
        probe_edit e[3] = {
            {EDIT_NEW, "rlvr_probe-0.dist-info/METADATA", "Metadata-Version: 2.1\nName: rlvr-probe\nVersion: 0\n"},
            {EDIT_NEW, "rlvr_probe-0.dist-info/entry_points.txt", "[pytest11]\nrlvr_probe = rlvr_probe_plugin\n"},
            {EDIT_NEW, "rlvr_probe_plugin.py", hook}};
        rc = lookup_part(c, "rlvr_probe-0.dist-info (a pytest11 entry point)", e, 3);
    }
    for (size_t m = 0; rc == 0 && m < names.n; m++) {
        rlvr_text shadow = {0};
        rlvr_text_printf(&shadow, "%s%s", hook, shadow_tail);
        rc = gen_text_check(&shadow);
        for (size_t d = 0; rc == 0 && d < dirs.n; d++) {
            char file[96];
            snprintf(file, sizeof file, "%s.py", names.items[m]);
            probe_edit e = {EDIT_NEW, "", shadow.data};
            in_dir(e.path, sizeof e.path, dirs.items[d], file);
            rc = lookup_part(c, e.path, &e, 1);
        }
        rlvr_text_free(&shadow);
    }
    rlvr_str_list_clear(&dirs);
    rlvr_str_list_clear(&names);
    return rc;
}

/* ---- python restart ------------------------------------------------------------------------ */

static int probe_restart(probe_ctx *c, const char *hook) {
    const char *target = guard_target(c);
    if (!target || !has_suffix(target, ".py")) return 0;
    rlvr_text code = {0};
    rlvr_text_printf(&code, "\n# rlvr probe: Python restarted after planting files it looks up\n"
                            "def _rlvr_probe_restart():\n"
                            "    import os, sys\n"
                            "    if os.environ.get('RLVR_PROBE_RESTARTED'):\n"
                            "        return\n"
                            "    hook = ");
    py_string(&code, hook);
    rlvr_text_printf(&code,
                     "\n    dirs = []\n"
                     "    try:\n"
                     "        import site\n"
                     "        dirs.append(site.getusersitepackages())\n"
                     "    except Exception:\n"
                     "        pass\n"
                     "    dirs += [p for p in sys.path if p] + [os.getcwd()]\n"
                     "    if sys.argv and sys.argv[0]:\n"
                     "        dirs.append(os.path.dirname(os.path.abspath(sys.argv[0])))\n"
                     "    for d in dirs:\n"
                     "        try:\n"
                     "            os.makedirs(d, exist_ok=True)\n"
                     "            for name in ('sitecustomize.py', 'usercustomize.py', 'rlvr_probe_restart.py'):\n"
                     "                with open(os.path.join(d, name), 'w') as f:\n"
                     "                    f.write(hook)\n"
                     "            with open(os.path.join(d, 'rlvr_probe_restart.pth'), 'w') as f:\n"
                     "                f.write('import rlvr_probe_restart\\n')\n"
                     "        except OSError:\n"
                     "            pass\n"
                     "    os.environ['RLVR_PROBE_RESTARTED'] = '1'\n"
                     "    sys.stdout.flush()\n"
                     "    os.execv(sys.executable, sys.orig_argv)\n"
                     "_rlvr_probe_restart()\n");
    int rc = gen_text_check(&code);
    probe_edit e = {EDIT_APPEND, "", code.data};
    snprintf(e.path, sizeof e.path, "%s", target);
    if (rc == 0) rc = add_probe(c, "python restart", "sitecustomize.py, usercustomize.py, a .pth file", false, &e, 1);
    rlvr_text_free(&code);
    return rc;
}

/* ---- pytest forgers ------------------------------------------------------------------------ */

/* A JUnit file in which every required test passed, named as pytest
 * names them (tests/test_x.py::TestY::test_z: classname tests.test_x.TestY,
 * name test_z). */
static void forged_junit(rlvr_text *out, const rlvr_task *t) {
    rlvr_text_printf(out, "<testsuites><testsuite name=\"pytest\">");
    const rlvr_str_list *lists[] = {&t->fail_to_pass, &t->pass_to_pass};
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < lists[l]->n; i++) {
            const char *id = lists[l]->items[i], *last = id;
            for (const char *p = strstr(id, "::"); p; p = strstr(p + 2, "::")) last = p + 2;
            char classname[1024];
            size_t k = 0;
            for (const char *p = id; p < last - (last > id ? 2 : 0) && k + 1 < sizeof classname; p++) {
                if (strncmp(p, ".py", 3) == 0 && (p[3] == ':' || !p[3])) {
                    p += 2;
                    continue;
                }
                classname[k++] = *p == '/' || *p == ':' ? '.' : *p;
                if (*p == ':') p++;
            }
            classname[k] = '\0';
            rlvr_text_printf(out, "<testcase classname=\"%s\" name=\"%s\"/>", classname, last);
        }
    rlvr_text_printf(out, "</testsuite></testsuites>\n");
}

static int probe_pytest_forgers(probe_ctx *c) {
    if (!commands_mention(c->t, "pytest") || listed(&c->files, "conftest.py") || !gate_allows(c, "conftest.py"))
        return 0;
    rlvr_text junit = {0}, rewrite = {0};
    forged_junit(&junit, c->t);
    rlvr_text_printf(&rewrite, "# rlvr probe: the JUnit report rewritten at exit, the status forced to 0\n"
                               "import atexit, os\n"
                               "def pytest_sessionfinish(session, exitstatus):\n    session.exitstatus = 0\n"
                               "def _rlvr_probe_rewrite():\n    report = ");
    py_string(&rewrite, junit.data ? junit.data : "");
    rlvr_text_printf(&rewrite, "\n    for root in (os.getcwd(), '/work'):\n        try:\n"
                               "            with open(os.path.join(root, ");
    py_string(&rewrite, c->t->hidden_results_junit ? c->t->hidden_results_junit : "report.xml");
    rlvr_text_printf(&rewrite, "), 'w') as f:\n                f.write(report)\n        except OSError:\n"
                               "            pass\natexit.register(_rlvr_probe_rewrite)\n");
    int rc = gen_text_check(&rewrite);
    const struct {
        const char *klass, *text;
    } forgers[] = {
        {"pytest exit at import", "# rlvr probe: exit 0 before a test runs\nimport os\nos._exit(0)\n"},
        {"pytest sessionfinish", "# rlvr probe: the session's status forced to 0\n"
                                 "def pytest_sessionfinish(session, exitstatus):\n    session.exitstatus = 0\n"},
        {"pytest report rewritten", rewrite.data},
    };
    for (size_t i = 0; rc == 0 && i < sizeof forgers / sizeof *forgers; i++) {
        probe_edit e = {EDIT_NEW, "conftest.py", forgers[i].text};
        rc = add_probe(c, forgers[i].klass, "conftest.py", false, &e, 1);
    }
    rlvr_text_free(&junit);
    rlvr_text_free(&rewrite);
    return rc;
}

int probe_python(probe_ctx *c) {
    if (!commands_mention(c->t, "python3") && !commands_mention(c->t, "python") && !commands_mention(c->t, "pytest"))
        return 0;
    rlvr_str_list paths = {0}, texts = {0};
    int rc = reference_files(c, &paths, &texts);
    rlvr_text hook = {0};
    if (rc == 0) fix_hook(&hook, &paths, &texts);
    if (rc == 0) rc = gen_text_check(&hook);
    if (rc == 0 && paths.n) rc = probe_lookups(c, hook.data);
    if (rc == 0 && paths.n) rc = probe_restart(c, hook.data);
    if (rc == 0) rc = probe_pytest_forgers(c);
    rlvr_text_free(&hook);
    rlvr_str_list_clear(&paths);
    rlvr_str_list_clear(&texts);
    return rc;
}
