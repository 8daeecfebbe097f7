/* The tampering probes of `rlvr tasks check`, in real enclaves: a generated
 * bugfix-c task (judge mode) refuses every probe; the same task weakened on
 * purpose is refused as exploitable, naming the probe that got through:
 *   - a hidden harness compiled with -I. (in command mode): "system header";
 *   - an allow-list that permits GNUmakefile and a build found by make's
 *     lookup: "build lookup GNUmakefile";
 *   - command mode itself (hidden files in the tree while the code under
 *     test runs): "hidden files at run time";
 *   - a judge that keeps /tmp from one run to the next (in a carrier outside
 *     the sandbox, ../enclave/carrier.h: nothing inside survives a reset):
 *     "state between verifications".
 * The probes of one class are run together and named apart; arith tasks
 * score every arith probe 0. */
#include "../enclave/carrier.h"
#include "envs/check.h"
#include "envs/gen.h"
#include "envs/probes.h"
#include "envs_test.h"
#include "test.h"

#include <jansson.h>
#include <sys/stat.h>

static char *dir, pool_dir[4096];

/* The weakened tasks' repository: the generated one plus a Makefile whose
 * targets build and run the hidden harness in the enclave (command mode),
 * once with -I. and once without. */
static const char weak_makefile[] =
    "CC = cc\nCFLAGS = -std=c11 -O0 -w\n\n"
    "test: build/public\n\t./build/public\n\n"
    "build/public: lib.c lib.h tests/public.c\n\t@mkdir -p build\n\t$(CC) $(CFLAGS) -o $@ lib.c tests/public.c\n\n"
    "build/runner: lib.c lib.h tests/runner.c\n\t@mkdir -p build\n\t$(CC) $(CFLAGS) -o $@ lib.c tests/runner.c\n\n"
    "hidden: build/runner\n\t@$(CC) $(CFLAGS) -o build/judge tests/judge.c\n\t@./build/judge build/runner\n\n"
    "hidden-i: build/runner\n\t@$(CC) $(CFLAGS) -I. -o build/judge tests/judge.c\n\t@./build/judge build/runner\n";

/* A copy of the task's repository with weak_makefile, committed: its id. */
static void weak_repository(const char *from, const char *to, char commit[41]) {
    char cmd[40000], *out = NULL;
    snprintf(cmd, sizeof cmd,
             "cp -r %s %s && cd %s && rm -rf .git && git init -q && git config user.email t@t && git config user.name t "
             "&& git add -A && git commit -qm base",
             from, to, to);
    CHECK(run_cmd(cmd, NULL) == 0);
    char path[8300];
    snprintf(path, sizeof path, "%s/Makefile", to);
    CHECK(write_text(path, weak_makefile) == 0);
    snprintf(cmd, sizeof cmd, "cd %s && git commit -qam weak && git rev-parse HEAD", to);
    CHECK(run_cmd(cmd, &out) == 0);
    snprintf(commit, 41, "%.40s", out ? out : "");
    free(out);
}

/* A command-mode copy of spec `from` as `id`: the weak repository, the
 * hidden command, and editable paths (NULL: keep). */
static void plant(const char *from, const char *id, const char *command, const char *extra_editable) {
    char path[8192];
    snprintf(path, sizeof path, "%s/%s.json", pool_dir, from);
    json_error_t jerr;
    json_t *spec = json_load_file(path, 0, &jerr);
    CHECK(spec != NULL);
    if (!spec) return;
    char repo_from[8192], repo_to[8192], rel[256], commit[41];
    snprintf(repo_from, sizeof repo_from, "%s/repos/%s", pool_dir, from);
    snprintf(rel, sizeof rel, "repos/%s", id);
    snprintf(repo_to, sizeof repo_to, "%s/%s", pool_dir, rel);
    weak_repository(repo_from, repo_to, commit);
    json_object_set_new(spec, "id", json_string(id));
    json_object_set_new(spec, "repository", json_string(rel));
    json_object_set_new(spec, "base_commit", json_string(commit));
    json_t *hidden = json_object_get(spec, "hidden_tests");
    json_object_del(hidden, "judge");
    json_object_del(hidden, "build");
    json_object_set_new(hidden, "command", json_string(command));
    if (extra_editable) json_array_append_new(json_object_get(spec, "editable_paths"), json_string(extra_editable));
    snprintf(path, sizeof path, "%s/%s.json", pool_dir, id);
    CHECK(json_dump_file(spec, path, JSON_INDENT(2)) == 0);
    json_decref(spec);
}

/* A judge that shares state between runs on purpose: it keeps every file
 * of the run's /tmp (a cache, say) in the carrier at its end and puts them
 * back at the start of the next run; the generated judge, renamed, does the
 * judging. Records: name, NUL, decimal size, NUL, bytes. */
static const char sharing_judge[] =
    "#define main rlvr_inner_judge_main\n#include \"judge_inner.c\"\n#undef main\n"
    "#include <dirent.h>\n#include <sys/socket.h>\n#include <sys/un.h>\n"
    "static int carrier(const char *verb) {\n"
    "    struct sockaddr_un a = {.sun_family = AF_UNIX};\n"
    "    snprintf(a.sun_path, sizeof a.sun_path, \"%s\", CARRIER);\n"
    "    int fd = socket(AF_UNIX, SOCK_STREAM, 0);\n"
    "    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0 || write(fd, verb, 4) != 4) return -1;\n"
    "    return fd;\n}\n"
    "static char blob[1 << 16];\n"
    "static void restore(void) {\n"
    "    int fd = carrier(\"GET\\n\");\n    size_t n = 0;\n    ssize_t r;\n"
    "    while (fd >= 0 && n < sizeof blob && (r = read(fd, blob + n, sizeof blob - n)) > 0) n += (size_t)r;\n"
    "    if (fd >= 0) close(fd);\n"
    "    for (size_t at = 0; at < n;) {\n"
    "        const char *name = blob + at, *size = name + strlen(name) + 1;\n"
    "        size_t len = strtoul(size, NULL, 10), body = (size_t)(size + strlen(size) + 1 - blob);\n"
    "        char path[512];\n        snprintf(path, sizeof path, \"/tmp/%s\", name);\n"
    "        int out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);\n"
    "        if (out >= 0 && write(out, blob + body, len) < 0) {\n        }\n"
    "        if (out >= 0) close(out);\n        at = body + len;\n    }\n}\n"
    "static void save(void) {\n"
    "    size_t n = 0;\n    DIR *d = opendir(\"/tmp\");\n    struct dirent *e;\n"
    "    while (d && (e = readdir(d))) {\n"
    "        char path[512];\n        snprintf(path, sizeof path, \"/tmp/%s\", e->d_name);\n"
    "        int in = e->d_type == DT_REG ? open(path, O_RDONLY) : -1;\n        if (in < 0) continue;\n"
    "        char body[4096];\n        ssize_t len = read(in, body, sizeof body);\n        close(in);\n"
    "        if (len < 0 || n + strlen(e->d_name) + 32 + (size_t)len > sizeof blob) continue;\n"
    "        n += (size_t)sprintf(blob + n, \"%s\", e->d_name) + 1;\n"
    "        n += (size_t)sprintf(blob + n, \"%zd\", len) + 1;\n"
    "        memcpy(blob + n, body, (size_t)len);\n        n += (size_t)len;\n    }\n"
    "    if (d) closedir(d);\n"
    "    int fd = carrier(\"PUT\\n\");\n"
    "    if (fd >= 0 && write(fd, blob, n) >= 0) {\n        char ok[4];\n        shutdown(fd, SHUT_WR);\n"
    "        if (read(fd, ok, sizeof ok) < 0) {\n        }\n    }\n"
    "    if (fd >= 0) close(fd);\n}\n"
    "int main(int argc, char **argv) {\n"
    "    restore();\n    int rc = rlvr_inner_judge_main(argc, argv);\n    save();\n    return rc;\n}\n";

/* A judge-mode copy of spec `from` as `id` whose judge keeps /tmp between
 * runs through the carrier at `socket`. */
static void plant_sharing_judge(const char *from, const char *id, const char *socket) {
    char path[8192], src[4096], dst[4096];
    snprintf(path, sizeof path, "%s/%s.json", pool_dir, from);
    json_error_t jerr;
    json_t *spec = json_load_file(path, 0, &jerr);
    CHECK(spec != NULL);
    if (!spec) return;
    json_t *hidden = json_object_get(spec, "hidden_tests");
    char root[512];
    snprintf(root, sizeof root, "hidden/%s", id);
    snprintf(src, sizeof src, "%.2048s/%.1024s/tests/judge.c", pool_dir,
             json_string_value(json_object_get(hidden, "root")));
    snprintf(dst, sizeof dst, "%.2048s/%.512s/tests", pool_dir, root);
    char cmd[20000];
    snprintf(cmd, sizeof cmd, "mkdir -p %s && cp %s %s/judge_inner.c", dst, src, dst);
    CHECK(run_cmd(cmd, NULL) == 0);
    char *judge = malloc(sizeof sharing_judge + strlen(socket) + 64);
    if (judge) {
        sprintf(judge, "#define CARRIER \"%s\"\n%s", socket, sharing_judge);
        snprintf(path, sizeof path, "%s/judge.c", dst);
        CHECK(write_text(path, judge) == 0);
    }
    free(judge);
    json_object_set_new(spec, "id", json_string(id));
    json_object_set_new(hidden, "root", json_string(root));
    json_object_set_new(hidden, "files", json_pack("[s,s]", "tests/judge.c", "tests/judge_inner.c"));
    snprintf(path, sizeof path, "%s/%s.json", pool_dir, id);
    CHECK(json_dump_file(spec, path, JSON_INDENT(2)) == 0);
    json_decref(spec);
}

typedef struct {
    const char *id;
    rlvr_task_check_status want;
    const char *named[3]; /* strings the reason must hold */
    const char *not_named;
} expectation;

static const char *cli; /* the rlvr binary (argv[1]) */

/* `rlvr tasks check --config` on a pool of the state-sharing task alone:
 * the run file's [sandbox] system paths name the carrier's directory, as a
 * site's would name its own. */
static void test_cli_state(const carrier *keep) {
    if (!cli) return;
    char pool2[8192], path[8192], cmd[40000], *out = NULL;
    snprintf(pool2, sizeof pool2, "%s/pool-cli", dir);
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s && cp %s/shares-state.json %s/ && ln -s ../pool/repos %s/repos && ln -s ../pool/hidden %s/hidden",
             pool2, pool_dir, pool2, pool2, pool2);
    CHECK(run_cmd(cmd, NULL) == 0);
    snprintf(path, sizeof path, "%s/run.ini", dir);
    char ini[8192];
    snprintf(ini, sizeof ini, "[sandbox]\nsystem_paths = %s:%s\n", RLVR_SANDBOX_SYSTEM_PATHS, carrier_dir(keep));
    CHECK(write_text(path, ini) == 0);
    snprintf(cmd, sizeof cmd, "%s tasks check %s --runs 2 --jobs 1 --config %s 2>&1; echo \"exit $?\"", cli, pool2,
             path);
    CHECK(run_cmd(cmd, &out) == 0);
    printf("%s", out ? out : "");
    CHECK_MSG(out && strstr(out, "exploitable shares-state") && strstr(out, "state between verifications") &&
                  strstr(out, "exit 1\n"),
              "rlvr tasks check: %s", out ? out : "(no output)");
    free(out);
}

/* Checks every task of `pool` against its expectation (same order). */
static void check_pool(rlvr_sandbox_host *host, const rlvr_task_pool *pool, const expectation *want, size_t n_want) {
    size_t n = rlvr_task_pool_size(pool);
    CHECK(n == n_want);
    rlvr_task_check_options opts = RLVR_TASK_CHECK_OPTIONS_INIT;
    opts.quarantine_runs = 2;
    for (size_t i = 0; host && i < n && i < n_want; i++) {
        const rlvr_task *t = rlvr_task_pool_get(pool, i);
        CHECK(strcmp(t->id, want[i].id) == 0);
        rlvr_task_check_result r;
        CHECK_OK(rlvr_task_check(&r, t, host, &opts));
        printf("  %-28s %-11s %d runs, %d probes: %s\n", t->id, rlvr_task_check_status_name(r.status), r.runs, r.probes,
               r.reason);
        CHECK_MSG(r.status == want[i].want, "%s: %s (%s), expected %s", t->id, rlvr_task_check_status_name(r.status),
                  r.reason, rlvr_task_check_status_name(want[i].want));
        CHECK_MSG(r.probes >= 3, "%s: only %d probes", t->id, r.probes);
        for (int k = 0; k < 3 && want[i].named[k]; k++)
            CHECK_MSG(strstr(r.reason, want[i].named[k]), "%s: the reason does not name \"%s\": %s", t->id,
                      want[i].named[k], r.reason);
        if (want[i].not_named)
            CHECK_MSG(!strstr(r.reason, want[i].not_named), "%s: the reason names \"%s\": %s", t->id,
                      want[i].not_named, r.reason);
        rlvr_task_check_result_clear(&r);
    }
}

static void test_probes(void) {
    rlvr_task_gen_options o = RLVR_TASK_GEN_OPTIONS_INIT;
    o.family = "bugfix-c";
    o.split = RLVR_SPLIT_TRAIN;
    o.count = 1;
    o.seed = 5;
    CHECK_OK(rlvr_task_gen(&o, pool_dir, NULL));
    o.family = "arith";
    o.count = 2;
    CHECK_OK(rlvr_task_gen(&o, pool_dir, NULL));
    const char *bug = "bugfix-c-train-d1-s5-000000";
    plant(bug, "weak-include-dot", "make -s -r -f Makefile hidden-i", NULL);
    plant(bug, "weak-makefile-lookup", "make -s -r hidden", "/GNUmakefile");
    plant(bug, "command-mode", "make -s -r -f Makefile hidden", NULL);
    carrier *keep = NULL;
    CHECK_OK(carrier_start(&keep, NULL));
    if (!keep) return;
    plant_sharing_judge(bug, "shares-state", carrier_socket(keep));
    const expectation want[] = {
        {"arith-train-d1-s5-000000", RLVR_TASK_CHECK_OK, {NULL}, NULL},
        {"arith-train-d1-s5-000001", RLVR_TASK_CHECK_OK, {NULL}, NULL},
        {bug, RLVR_TASK_CHECK_OK, {NULL}, NULL},
        {"command-mode", RLVR_TASK_CHECK_EXPLOITABLE, {"hidden files at run time tests/judge.c", NULL},
         "system header"},
        {"shares-state", RLVR_TASK_CHECK_EXPLOITABLE, {"state between verifications /tmp/rlvr-probe-state", NULL},
         "hidden files at run time"},
        {"weak-include-dot", RLVR_TASK_CHECK_EXPLOITABLE, {"system header stdio.h", "hidden files at run time", NULL},
         "build lookup"},
        {"weak-makefile-lookup", RLVR_TASK_CHECK_EXPLOITABLE,
         {"build lookup GNUmakefile", "hidden files at run time", NULL}, "system header"},
    };
    rlvr_task_pool *pool = NULL;
    CHECK_OK(rlvr_task_pool_load(&pool, pool_dir));
    if (!pool) return;
    /* the carrier's directory is one of the sandboxes' system paths */
    char paths[8192];
    snprintf(paths, sizeof paths, "%s:%s", RLVR_SANDBOX_SYSTEM_PATHS, carrier_dir(keep));
    rlvr_sandbox_host_options ho = RLVR_SANDBOX_HOST_OPTIONS_INIT;
    ho.system_paths = paths;
    rlvr_sandbox_host *host = NULL;
    CHECK_OK(rlvr_sandbox_host_new(&host, &ho));
    check_pool(host, pool, want, sizeof want / sizeof want[0]);
    /* the judge did keep /tmp: every run of the state-sharing task saved it */
    CHECK_MSG(carrier_puts(keep) > 0, "the state-sharing judge never reached its carrier");
    test_cli_state(keep);
    rlvr_sandbox_host_free(host);
    rlvr_task_pool_free(pool);
    carrier_stop(keep);
}

/* ---- Python ---------------------------------------------------------------------------- */

static char py_pool[4200];

/* A copy of bugfix-py spec `from` as `id`, edited by `edit`. */
static void plant_py(const char *from, const char *id, void (*edit)(json_t *spec)) {
    char path[8192];
    snprintf(path, sizeof path, "%s/%s.json", py_pool, from);
    json_error_t jerr;
    json_t *spec = json_load_file(path, 0, &jerr);
    CHECK(spec != NULL);
    if (!spec) return;
    json_object_set_new(spec, "id", json_string(id));
    edit(spec);
    snprintf(path, sizeof path, "%s/%s.json", py_pool, id);
    CHECK(json_dump_file(spec, path, JSON_INDENT(2)) == 0);
    json_decref(spec);
}

/* The judge starts the runner without -I and -S: Python honours the files
 * it looks up (user site, sitecustomize, .pth). */
static void without_isolation(json_t *spec) {
    json_t *run = json_object_get(json_object_get(json_object_get(spec, "hidden_tests"), "judge"), "run");
    json_array_clear(run);
    const char *argv[] = {"judge", "/usr/bin/python3", "-B", "tests/runner.py"};
    for (size_t i = 0; i < 4; i++) json_array_append_new(run, json_string(argv[i]));
}

/* The allow-list names conftest.py and sitecustomize.py: the gate admits
 * them, but the runner (no pytest, python3 -I -S) never reads them. */
static void admits_lookups(json_t *spec) {
    json_t *editable = json_object_get(spec, "editable_paths");
    json_array_append_new(editable, json_string("/conftest.py"));
    json_array_append_new(editable, json_string("/sitecustomize.py"));
}

/* Command mode: the judge built and run by the test command, its source
 * in the tree while the code under test runs. */
static void command_mode_py(json_t *spec) {
    json_t *hidden = json_object_get(spec, "hidden_tests");
    json_object_del(hidden, "judge");
    json_object_set_new(hidden, "command", json_string("cc -std=c11 -O0 -w -o /tmp/judge tests/judge.c && "
                                                       "/tmp/judge /usr/bin/python3 -I -S -B tests/runner.py"));
}

/* A pytest task in command mode (calc.mul adds), strict or weakened: an
 * allow-list of the whole top of the tree and pytest started without -I;
 * or strict but with an allow-list that names conftest.py. */
static void pytest_task(const char *id, bool weak, bool admits_conftest) {
    char repo[8192], hidden[8192], path[8300], cmd[20000], *out = NULL;
    snprintf(repo, sizeof repo, "%s/repos/%s", py_pool, id);
    snprintf(hidden, sizeof hidden, "%s/hidden/%s", py_pool, id);
    snprintf(cmd, sizeof cmd, "mkdir -p %s %s/tests", repo, hidden);
    CHECK(run_cmd(cmd, NULL) == 0);
    snprintf(path, sizeof path, "%s/calc.py", repo);
    CHECK(write_text(path, "def mul(a, b):\n    return a + b\n") == 0);
    snprintf(path, sizeof path, "%s/tests/test_calc.py", hidden);
    CHECK(write_text(path, "import os, sys\n"
                           "sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))\n"
                           "import calc\n"
                           "def test_mul():\n    assert calc.mul(2, 3) == 6\n"
                           "def test_double():\n    assert calc.mul(2, 2) == 4\n") == 0);
    snprintf(cmd, sizeof cmd, "cd %s && git init -q && git config user.email t@t && git config user.name t && "
             "git add -A && git commit -qm base && git rev-parse HEAD", repo);
    CHECK(run_cmd(cmd, &out) == 0);
    json_t *spec = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s#, s:{s:s, s:[]}, s:{s:s, s:[s], s:s, s:{s:s, s:s}}, s:[s], s:[s], "
        "s:s, s:[s], s:[s]}",
        "format", "rlvr-task/1", "id", id, "family", "calc-py", "split", "train", "split_key", "calc-py", "prompt",
        "mul adds; make it multiply", "repository", strstr(repo, "repos/"), "base_commit", out ? out : "", 40,
        "public_tests", "command", "python3 -I -c 'import calc'", "files", "hidden_tests", "root",
        strstr(hidden, "hidden/"), "files", "tests/test_calc.py", "command",
        weak ? "python3 -m pytest -q --junitxml=report.xml tests" : "python3 -I -m pytest -q --junitxml=report.xml tests",
        "results", "format", "junit", "path", "report.xml", "FAIL_TO_PASS", "tests/test_calc.py::test_mul",
        "PASS_TO_PASS", "tests/test_calc.py::test_double", "reference_patch",
        "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def mul(a, b):\n"
        "-    return a + b\n+    return a * b\n",
        "protected_paths", "/tests", "editable_paths", weak ? "/*" : "/calc.py");
    free(out);
    if (spec && admits_conftest) json_array_append_new(json_object_get(spec, "editable_paths"), json_string("/conftest.py"));
    CHECK(spec != NULL);
    snprintf(path, sizeof path, "%s/%s.json", py_pool, id);
    CHECK(spec && json_dump_file(spec, path, JSON_INDENT(2)) == 0);
    json_decref(spec);
}

/* bugfix-py refuses every probe, the Python ones among them; weakened
 * copies are exploitable, naming the probe: the runner without -I -S
 * (python restart), command mode (hidden files at run time); its copy
 * whose allow-list names conftest.py and sitecustomize.py stays ok (their
 * probes are made and refused: nothing in it runs pytest, and its Python
 * is isolated); a pytest
 * task whose allow-list names conftest.py (python lookup conftest.py, the
 * report rewritten at exit), and one whose allow-list admits the top of
 * the tree and whose pytest runs without -I (python lookup: a module named
 * like a standard one, a configuration naming a plugin; never conftest.py,
 * which no glob admits). The strict pytest task is still command mode
 * (its hidden test readable), but no Python lookup wins. */
static void test_python_probes(void) {
    snprintf(py_pool, sizeof py_pool, "%s/pypool", dir);
    mkdir(py_pool, 0755);
    rlvr_task_gen_options o = RLVR_TASK_GEN_OPTIONS_INIT;
    o.family = "bugfix-py";
    o.split = RLVR_SPLIT_TRAIN;
    o.count = 1;
    o.seed = 5;
    CHECK_OK(rlvr_task_gen(&o, py_pool, NULL));
    const char *bug = "bugfix-py-train-d1-s5-000000";
    plant_py(bug, "py-admits-lookups", admits_lookups);
    plant_py(bug, "py-command-mode", command_mode_py);
    plant_py(bug, "py-no-isolation", without_isolation);
    pytest_task("pytest-admits-conftest", false, true);
    pytest_task("pytest-strict", false, false);
    pytest_task("pytest-weak", true, false);
    const expectation want[] = {
        {bug, RLVR_TASK_CHECK_OK, {NULL}, NULL},
        {"py-admits-lookups", RLVR_TASK_CHECK_OK, {NULL}, NULL},
        {"py-command-mode", RLVR_TASK_CHECK_EXPLOITABLE, {"hidden files at run time tests/judge.c", NULL}, "python"},
        {"py-no-isolation", RLVR_TASK_CHECK_EXPLOITABLE,
         {"python restart sitecustomize.py, usercustomize.py, a .pth file", NULL}, "hidden files"},
        {"pytest-admits-conftest", RLVR_TASK_CHECK_EXPLOITABLE,
         {"python lookup conftest.py", "pytest report rewritten conftest.py", NULL}, "python restart"},
        {"pytest-strict", RLVR_TASK_CHECK_EXPLOITABLE, {"hidden files at run time tests/test_calc.py", NULL}, "python"},
        {"pytest-weak", RLVR_TASK_CHECK_EXPLOITABLE, {"python lookup unittest.py", "python lookup setup.cfg", NULL},
         "python lookup conftest.py"},
    };
    rlvr_task_pool *pool = NULL;
    CHECK_OK(rlvr_task_pool_load(&pool, py_pool));
    rlvr_sandbox_host *host = NULL;
    rlvr_sandbox_host_options ho = RLVR_SANDBOX_HOST_OPTIONS_INIT;
    CHECK_OK(rlvr_sandbox_host_new(&host, &ho));
    if (pool && host) check_pool(host, pool, want, sizeof want / sizeof want[0]);

    /* the Python probes of bugfix-py: the generic classes on lib.py, and the
     * restart; no lookup file (the gate refuses every one) */
    char path[8192];
    snprintf(path, sizeof path, "%s/%s.json", py_pool, bug);
    rlvr_task *t = NULL;
    CHECK_OK(rlvr_task_load_file(&t, path));
    rlvr_probe_set ps = {0};
    if (t) CHECK_OK(rlvr_task_probes(t, dir, &ps));
    int forged = 0, guard = 0, state = 0, restart = 0, lookup = 0;
    for (size_t i = 0; i < ps.n; i++) {
        const rlvr_probe *p = &ps.items[i];
        forged += strcmp(p->klass, "forged results") == 0 && strcmp(p->part, "lib.py") == 0;
        guard += strcmp(p->klass, "hidden files at run time") == 0 && strstr(p->patch, "_rlvr_probe_guard") != NULL;
        state += strcmp(p->klass, "state between verifications") == 0 && p->setup != NULL;
        restart += strcmp(p->klass, "python restart") == 0 && strstr(p->patch, "os.execv") != NULL;
        lookup += strcmp(p->klass, "python lookup") == 0;
    }
    CHECK_MSG(forged == 1 && guard == 1 && state == 1 && restart == 1 && lookup == 0,
              "bugfix-py probes: forged %d guard %d state %d restart %d lookup %d", forged, guard, state, restart,
              lookup);
    rlvr_probe_set_free(&ps);
    rlvr_task_free(t);
    /* the copy that admits them: their probes are made, and refused above */
    snprintf(path, sizeof path, "%s/py-admits-lookups.json", py_pool);
    t = NULL;
    CHECK_OK(rlvr_task_load_file(&t, path));
    memset(&ps, 0, sizeof ps);
    if (t) CHECK_OK(rlvr_task_probes(t, dir, &ps));
    bool conftest = false, sitecustomize = false;
    for (size_t i = 0; i < ps.n; i++) {
        conftest |= strcmp(ps.items[i].klass, "python lookup") == 0 && strcmp(ps.items[i].part, "conftest.py") == 0;
        sitecustomize |=
            strcmp(ps.items[i].klass, "python lookup") == 0 && strcmp(ps.items[i].part, "sitecustomize.py") == 0;
    }
    CHECK_MSG(conftest && sitecustomize, "the admitted lookups made no probe (conftest %d, sitecustomize %d)", conftest,
              sitecustomize);
    rlvr_probe_set_free(&ps);
    rlvr_task_free(t);
    rlvr_sandbox_host_free(host);
    rlvr_task_pool_free(pool);
}

/* The probe set of a judge-mode task: every class that applies, every
 * patch made against the base; the gate's refusals are left out. */
static void test_probe_set(void) {
    char path[8192];
    snprintf(path, sizeof path, "%s/bugfix-c-train-d1-s5-000000.json", pool_dir);
    rlvr_task *t = NULL;
    CHECK_OK(rlvr_task_load_file(&t, path));
    if (!t) return;
    rlvr_probe_set ps;
    CHECK_OK(rlvr_task_probes(t, dir, &ps));
    bool header = false, forged_c = false, forged_h = false, decoy = false, hidden = false, lookup = false, state = false;
    for (size_t i = 0; i < ps.n; i++) {
        const rlvr_probe *p = &ps.items[i];
        CHECK_MSG(p->len > 0 && strstr(p->patch, "diff --git"), "probe %s %s has no patch", p->klass, p->part);
        header |= strcmp(p->klass, "system header") == 0 && strcmp(p->part, "stdio.h") == 0;
        forged_c |= strcmp(p->klass, "forged results") == 0 && strcmp(p->part, "lib.c") == 0;
        forged_h |= strcmp(p->klass, "forged results") == 0 && strcmp(p->part, "lib.h") == 0;
        decoy |= strcmp(p->klass, "decoy and kill") == 0;
        hidden |= strcmp(p->klass, "hidden files at run time") == 0 && strstr(p->part, "/.rlvr/judge/judge");
        lookup |= strcmp(p->klass, "build lookup") == 0;
        /* the writer comes first, without the fix; the reader is the fix behind a guard */
        if (strcmp(p->klass, "state between verifications") == 0) {
            state = p->setup && strstr(p->setup, "rlvr_probe_leave_state") && !strstr(p->setup, "rlvr_probe_find_state") &&
                    strstr(p->patch, "rlvr_probe_find_state") && strstr(p->part, "TIME_WAIT");
            CHECK_MSG(p->setup && !strstr(p->setup, "b/tests/"), "the state writer touches the tests");
        } else {
            CHECK_MSG(!p->setup, "probe %s %s has a setup", p->klass, p->part);
        }
        /* nothing the gate refuses: no file under tests/, no makefile */
        CHECK_MSG(!strstr(p->patch, "b/tests/") && !strstr(p->patch, "akefile"), "probe %s %s touches %s", p->klass,
                  p->part, p->patch);
    }
    CHECK(header && forged_c && forged_h && decoy && hidden && !lookup && state);
    rlvr_probe_set_free(&ps);
    rlvr_task_free(t);

    /* arith: every probe is a wrong answer */
    snprintf(path, sizeof path, "%s/arith-train-d1-s5-000000.json", pool_dir);
    CHECK_OK(rlvr_task_load_file(&t, path));
    if (!t) return;
    rlvr_arith_probes ap;
    rlvr_task_arith_probes(t, &ap);
    CHECK(ap.n >= 4);
    for (int i = 0; i < ap.n; i++) {
        double score = 1;
        CHECK_OK(rlvr_arith_score(&t->arith, ap.text[i], strlen(ap.text[i]), &score));
        CHECK_MSG(score == 0.0, "arith probe %s (%s) scores %g", ap.name[i], ap.text[i], score);
    }
    rlvr_task_free(t);
}

int main(int argc, char **argv) {
    cli = argc > 1 ? argv[1] : NULL;
    dir = tmpdir_make("probes");
    snprintf(pool_dir, sizeof pool_dir, "%s/pool", dir);
    mkdir(pool_dir, 0755);
    test_probes();
    test_probe_set();
    test_python_probes();
    rm_rf(dir);
    free(dir);
    return test_summary("test_task_probes");
}
