/* envs/source_task.c — the spec a task source writes, test results over
 * several enclave runs, and the report file (envs/sources_internal.h). */
#include "envs/sources_internal.h"
#include "core/fs.h"

#include "core/error.h"
#include "enclave/fsutil.h"
#include "envs/harness.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void source_clean_name(char *out, size_t cap, const char *name) {
    size_t n = 0;
    for (const char *c = name; *c && n + 1 < cap; c++) {
        bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.' ||
                  *c == '_' || *c == '-';
        out[n++] = ok ? *c : '-';
    }
    out[n] = '\0';
}

static json_t *list_json(const rlvr_str_list *l) {
    json_t *a = json_array();
    for (size_t i = 0; a && l && i < l->n; i++) json_array_append_new(a, json_string(l->items[i]));
    return a;
}

static json_t *results_json(const char *junit) {
    return json_pack("{s:s, s:s}", "format", "junit", "path", junit);
}

/* "install && command" when the facts have an install step. */
static char *with_install(const rlvr_repo_facts *f, const char *command) {
    if (!f->install) return strdup(command);
    size_t n = strlen(f->install) + strlen(command) + 16;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s && %s", f->install, command);
    return s;
}

static json_t *tests_json(const source_task *t, const rlvr_repo_facts *f) {
    const char *command = t->test_command ? t->test_command : f->test_command;
    const char *junit = t->test_command ? t->results_junit : f->results_junit;
    char *hidden_cmd = with_install(f, command);
    char *public_cmd = with_install(f, f->public_command ? f->public_command : command);
    bool made = hidden_cmd && public_cmd;
    json_t *pub = json_pack("{s:s?, s:o}", "command", public_cmd, "files", list_json(t->public_files));
    if (pub && junit && !f->public_command) json_object_set_new(pub, "results", results_json(junit));
    json_t *hid = json_pack("{s:s, s:o, s:s?}", "root", t->hidden_root, "files", list_json(t->hidden_files),
                            "command", hidden_cmd);
    if (hid && junit) json_object_set_new(hid, "results", results_json(junit));
    if (hid && t->expected_root)
        json_object_set_new(hid, "results", json_pack("{s:s, s:s, s:o}", "format", "expected", "root", t->expected_root,
                                                      "files", list_json(t->expected_files)));
    free(hidden_cmd);
    free(public_cmd);
    json_t *o = json_object();
    if (!o || !pub || !hid || !made) {
        json_decref(o), json_decref(pub), json_decref(hid);
        return NULL;
    }
    json_object_set_new(o, "public_tests", pub);
    json_object_set_new(o, "hidden_tests", hid);
    return o;
}

static json_t *names_or_placeholder(const rlvr_str_list *l) {
    if (l && l->n) return list_json(l);
    return json_pack("[s]", "(to be found)");
}

json_t *source_task_json(const source_task *t, const rlvr_repo_facts *f) {
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "format", RLVR_TASK_FORMAT, "id", t->id,
                          "family", t->family, "split", rlvr_split_name(t->split), "split_key", t->split_key,
                          "verifier", "tests", "prompt", t->prompt, "repository", t->repository, "base_commit",
                          t->base_commit);
    json_t *tests = o ? tests_json(t, f) : NULL;
    if (!tests) {
        json_decref(o);
        return NULL;
    }
    json_object_update(o, tests);
    json_decref(tests);
    json_object_set_new(o, "FAIL_TO_PASS", names_or_placeholder(t->fail_to_pass));
    json_object_set_new(o, "PASS_TO_PASS", list_json(t->pass_to_pass));
    json_object_set_new(o, "reference_patch", json_string(t->reference_patch));
    json_t *protect = list_json(&f->tests);
    for (size_t i = 0; protect && i < f->protect.n; i++) json_array_append_new(protect, json_string(f->protect.items[i]));
    json_object_set_new(o, "protected_paths", protect);
    if (f->network_loopback) json_object_set_new(o, "network", json_string("loopback"));
    const char *env = t->environment_json ? t->environment_json : f->environment_json;
    if (env) json_object_set_new(o, "environment", json_loads(env, JSON_DECODE_ANY, NULL));
    if (f->tools_json) json_object_set_new(o, "tools", json_loads(f->tools_json, 0, NULL));
    if (t->budgets) json_object_set(o, "budgets", t->budgets);
    else if (f->budgets_json) json_object_set_new(o, "budgets", json_loads(f->budgets_json, 0, NULL));
    if (t->has_created_at) {
        char when[21];
        rlvr_task_time_format(t->created_at, when);
        json_object_set_new(o, "created_at", json_string(when));
    }
    if (t->metadata) json_object_set(o, "metadata", t->metadata);
    return o;
}

int source_task_parse(rlvr_task **out, json_t *spec, const char *source, const char *base_dir) {
    char *text = json_dumps(spec, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (!text) return RLVR_FAIL(RLVR_ENOMEM, "out of memory writing a task spec");
    int rc = rlvr_task_parse(out, text, strlen(text), source, base_dir);
    free(text);
    return rc;
}

int source_task_write(json_t *spec, const char *out_dir, const char *id) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.json", out_dir, id);
    struct stat st;
    if (lstat(path, &st) == 0) return rlvr_error_set(RLVR_EIO, "%s exists already; nothing is overwritten", path);
    char *text = json_dumps(spec, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (!text) return RLVR_FAIL(RLVR_ENOMEM, "out of memory writing %s", path);
    int rc = rlvr_write_line_atomic(path, text);
    free(text);
    return rc;
}

/* ---- observations ------------------------------------------------------------------ */

void observation_free(observation *obs) {
    for (size_t i = 0; i < obs->n; i++) free(obs->tests[i].name);
    free(obs->tests);
    memset(obs, 0, sizeof *obs);
}

static observed_test *observed(observation *obs, const char *name) {
    for (size_t i = 0; i < obs->n; i++)
        if (strcmp(obs->tests[i].name, name) == 0) return &obs->tests[i];
    if (obs->n == obs->cap) {
        size_t cap = obs->cap ? obs->cap * 2 : 64;
        observed_test *grown = realloc(obs->tests, cap * sizeof *grown);
        if (!grown) return NULL;
        obs->tests = grown;
        obs->cap = cap;
    }
    observed_test *t = &obs->tests[obs->n];
    memset(t, 0, sizeof *t);
    if (!(t->name = strdup(name))) return NULL;
    obs->n++;
    return t;
}

static void note(observation *obs, const char *fmt, const char *what) {
    if (!obs->detail[0]) snprintf(obs->detail, sizeof obs->detail, fmt, what);
}

int observe(rlvr_verify_task *vt, const char *patch, int side, int runs, uint64_t seed, observation *obs) {
    for (int k = 0; k < runs; k++) {
        rlvr_verify_run run;
        RLVR_TRY(rlvr_verify_run_once(vt, patch, strlen(patch), seed + (uint64_t)k, k, &run));
        obs->runs[side]++;
        const char *side_name = side == SIDE_BEFORE ? "before the fix" : "after the fix";
        if (run.infra) {
            obs->infra = true;
            char what[200];
            snprintf(what, sizeof what, "%s: %.160s", side_name, rlvr_error_last());
            note(obs, "the enclave failed %s", what);
        } else if (run.limit != RLVR_LIMIT_NONE) {
            obs->limit = true;
            note(obs, "a run hit its limit %s", side_name);
        }
        if (run.tap.malformed || run.tap.bail_out || run.tap.n_tests == 0) {
            obs->unreadable[side] = true;
            note(obs, "the tests reported nothing readable %s", side_name);
        }
        int rc = 0;
        for (int i = 0; rc == 0 && !run.tap.malformed && i < run.tap.n_tests; i++) {
            const rlvr_tap_test *t = &run.tap.tests[i];
            observed_test *o = observed(obs, t->name);
            if (!o) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
            else if (t->status == RLVR_TAP_PASS) o->pass[side]++;
            else if (t->status == RLVR_TAP_FAIL) o->fail[side]++;
            else o->skip[side]++;
        }
        rlvr_verify_run_free(&run);
        RLVR_TRY(rc);
    }
    return 0;
}

int source_verify_task_new(rlvr_verify_task **out, rlvr_sandbox_host *host, const rlvr_task *task, double wall_s,
                           bool every_test) {
    rlvr_sandbox_limits limits;
    rlvr_sandbox_limits_default(&limits);
    limits.wall_s = wall_s;
    limits.cpu_s = wall_s;
    rlvr_verify_spec spec;
    rlvr_harness_verify_views views;
    int rc = rlvr_harness_verify_spec(&spec, &views, task, &limits, 1);
    if (rc == 0 && every_test) spec.fail_to_pass = spec.pass_to_pass = NULL;
    if (rc == 0) rc = rlvr_verify_task_new(out, host, &spec);
    rlvr_harness_verify_views_free(&views);
    return rc;
}

int source_pool_open(const char *out_dir, char *out_abs, size_t cap) {
    const char *subs[] = {"", "/repos", "/hidden"};
    for (size_t i = 0; i < sizeof subs / sizeof *subs; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s%s", out_dir, subs[i]);
        RLVR_TRY(rlvr_mkdir_p(path, 0755));
    }
    char *abs = realpath(out_dir, NULL);
    if (!abs) return rlvr_error_set(RLVR_EIO, "%s: %s", out_dir, strerror(errno));
    snprintf(out_abs, cap, "%s", abs);
    free(abs);
    return 0;
}

/* ---- the report -------------------------------------------------------------------- */

int source_report_open(FILE **out, const char *out_dir, const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", out_dir, name);
    *out = fopen(path, "a");
    if (!*out) return rlvr_error_set(RLVR_EIO, "cannot write %s: %s", path, strerror(errno));
    return 0;
}

void source_report_line(FILE *f, json_t *line) {
    char *text = line ? json_dumps(line, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    if (f && text) {
        fprintf(f, "%s\n", text);
        fflush(f);
    }
    free(text);
    json_decref(line);
}
