/* tests/envs/test_public_results.c — public tests that report as JUnit XML
 * (public_tests.results): run_public_tests runs the real pytest in the
 * workspace and appends one line summing the file up (counts, the failing
 * ids), removes the file again so it never reaches the rollout's patch,
 * ignores a file an earlier run (or the policy) left, and names the reason
 * when the file is refused (a DTD). The spec round-trips the key. */
#include "enclave/gitrepo.h"
#include "enclave/workspace.h"
#include "envs/harness_internal.h"
#include "envs/task.h"
#include "envs_test.h"
#include "test.h"

#include <jansson.h>
#include <sys/stat.h>

static char *dir;

static const char public_test[] = "import os, sys\n"
                                  "sys.path.insert(0, os.getcwd())\n"
                                  "import calc\n"
                                  "def test_mul():\n    assert calc.mul(2, 3) == 6\n"
                                  "def test_double():\n    assert calc.mul(2, 2) == 4\n";

/* A task whose public command is `command`, its results public.xml. */
static rlvr_task *make_task(const char *id, const char *command) {
    char repo[4200], path[4300], cmd[9000], *out = NULL;
    snprintf(repo, sizeof repo, "%s/%s-repo", dir, id);
    snprintf(cmd, sizeof cmd, "mkdir -p %s/pub %s/../%s-hidden/tests", repo, repo, id);
    CHECK(run_cmd(cmd, NULL) == 0);
    snprintf(path, sizeof path, "%s/calc.py", repo);
    CHECK(write_text(path, "def mul(a, b):\n    return a + b\n") == 0);
    snprintf(path, sizeof path, "%s/pub/test_pub.py", repo);
    CHECK(write_text(path, public_test) == 0);
    snprintf(path, sizeof path, "%s/%s-hidden/tests/test_hidden.py", dir, id);
    CHECK(write_text(path, public_test) == 0);
    snprintf(cmd, sizeof cmd, "cd %s && git init -q && git config user.email t@t && git config user.name t && "
             "git add -A && git commit -qm base && git rev-parse HEAD", repo);
    CHECK(run_cmd(cmd, &out) == 0);
    char hidden[128];
    snprintf(hidden, sizeof hidden, "%s-hidden", id);
    json_t *spec = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s#, s:{s:s, s:[s], s:{s:s, s:s}}, "
        "s:{s:s, s:[s], s:s, s:{s:s, s:s}}, s:[s], s:[s], s:s}",
        "format", "rlvr-task/1", "id", id, "family", "calc", "split", "train", "split_key", "calc", "prompt", "fix mul",
        "repository", strrchr(repo, '/') + 1, "base_commit", out ? out : "", 40, "public_tests", "command", command,
        "files", "pub/test_pub.py", "results", "format", "junit", "path", "public.xml", "hidden_tests", "root", hidden,
        "files", "tests/test_hidden.py", "command", "python3 -I -m pytest -q --junitxml=report.xml tests", "results",
        "format", "junit", "path", "report.xml", "FAIL_TO_PASS", "tests/test_hidden.py::test_mul", "PASS_TO_PASS",
        "tests/test_hidden.py::test_double", "reference_patch",
        "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def mul(a, b):\n"
        "-    return a + b\n+    return a * b\n");
    free(out);
    snprintf(path, sizeof path, "%s/%s.json", dir, id);
    CHECK(spec && json_dump_file(spec, path, 0) == 0);
    json_decref(spec);
    rlvr_task *t = NULL;
    CHECK_OK(rlvr_task_load_file(&t, path));
    return t;
}

static char *tool(rlvr_sandbox *sb, const rlvr_task *t, rlvr_tool_id id, const char *command) {
    rlvr_tool_call call;
    memset(&call, 0, sizeof call);
    call.tool = id;
    call.command = (char *)command;
    harness_tool_outcome out;
    CHECK_OK(harness_tool_exec(sb, t, &call, 30, 1 << 20, &out));
    return out.text;
}

static rlvr_workspace *workspace(rlvr_sandbox_host *host, const rlvr_task *t) {
    const char *pub[] = {"pub/test_pub.py", NULL};
    rlvr_workspace_spec spec = {.version = RLVR_WORKSPACE_SPEC_VERSION, .repo_dir = t->repository_path,
                                .base_commit = t->base_commit, .public_tests = pub};
    rlvr_sandbox_limits_default(&spec.limits);
    rlvr_workspace *ws = NULL;
    CHECK_OK(rlvr_workspace_new(&ws, host, &spec));
    return ws;
}

static void test_summary_line(rlvr_sandbox_host *host) {
    rlvr_task *t = make_task("pub", "python3 -I -m pytest -q -p no:cacheprovider --junitxml=public.xml pub");
    if (!t) return;
    CHECK(t->public_results_junit && strcmp(t->public_results_junit, "public.xml") == 0);
    /* the key round-trips through the writer */
    char *json = NULL;
    CHECK_OK(rlvr_task_to_json(t, 0, &json));
    CHECK(json && strstr(json, "\"public.xml\""));
    free(json);
    rlvr_workspace *ws = workspace(host, t);
    if (!ws) return;
    rlvr_sandbox *sb = rlvr_workspace_sandbox(ws);
    char *text = tool(sb, t, RLVR_TOOL_RUN_PUBLIC_TESTS, NULL);
    CHECK_MSG(text && strstr(text, "[public test results public.xml: 1 passed, 1 failed, 0 skipped; failed: "
                                   "pub.test_pub.test_mul]"),
              "observation: %s", text ? text : "(none)");
    free(text);
    /* removed again: the patch never carries it */
    text = tool(sb, t, RLVR_TOOL_RUN, "test -e public.xml && echo PRESENT || echo ABSENT");
    CHECK_MSG(text && strstr(text, "ABSENT"), "after the tool: %s", text ? text : "(none)");
    free(text);
    /* a file the policy leaves is not what the next run reports: the
     * command below writes none, and the old one is gone before it runs */
    text = tool(sb, t, RLVR_TOOL_RUN, "printf '<testsuite><testcase classname=\"x\" name=\"forged\"/></testsuite>' "
                                      "> public.xml && echo WRITTEN");
    CHECK(text && strstr(text, "WRITTEN"));
    free(text);
    rlvr_workspace_free(ws);
    rlvr_task_free(t);

    t = make_task("pub-none", "true");
    if (!t) return;
    ws = workspace(host, t);
    sb = ws ? rlvr_workspace_sandbox(ws) : NULL;
    if (sb) {
        text = tool(sb, t, RLVR_TOOL_RUN, "printf '<testsuite><testcase classname=\"x\" name=\"forged\"/></testsuite>' "
                                          "> public.xml");
        free(text);
        text = tool(sb, t, RLVR_TOOL_RUN_PUBLIC_TESTS, NULL);
        CHECK_MSG(text && strstr(text, "[public test results public.xml: no tests reported]"), "stale file: %s",
                  text ? text : "(none)");
        free(text);
    }
    rlvr_workspace_free(ws);
    rlvr_task_free(t);

    t = make_task("pub-dtd", "printf '<!DOCTYPE t [<!ENTITY a \"x\">]><testsuite/>' > public.xml");
    if (!t) return;
    ws = workspace(host, t);
    sb = ws ? rlvr_workspace_sandbox(ws) : NULL;
    if (sb) {
        text = tool(sb, t, RLVR_TOOL_RUN_PUBLIC_TESTS, NULL);
        CHECK_MSG(text && strstr(text, "[public test results public.xml: refused (results_unsafe)]"), "a DTD: %s",
                  text ? text : "(none)");
        free(text);
    }
    rlvr_workspace_free(ws);
    rlvr_task_free(t);
}

int main(void) {
    dir = tmpdir_make("public-results");
    chmod(dir, 0755);
    rlvr_sandbox_host_options ho = RLVR_SANDBOX_HOST_OPTIONS_INIT;
    rlvr_sandbox_host *host = NULL;
    CHECK_OK(rlvr_sandbox_host_new(&host, &ho));
    if (host) test_summary_line(host);
    rlvr_sandbox_host_free(host);
    rm_rf(dir);
    free(dir);
    return test_summary("test_public_results");
}
