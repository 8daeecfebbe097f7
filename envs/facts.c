/* envs/facts.c — the facts about a repository a person supplies
 * (envs/sources.h), and what they make of a path. */
#include "envs/sources.h"

#include "core/error.h"
#include "enclave/diffgate.h"
#include "enclave/fsutil.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Documents when the facts name none: never code, never tests. */
static const char *const default_docs[] = {"*.md",     "*.rst",     "*.adoc",   "/docs",     "/doc",
                                           "README*",  "LICENSE*",  "LICENCE*", "COPYING*",  "AUTHORS*",
                                           "CHANGELOG*", "CHANGES*", "NEWS*",   "HISTORY*",  NULL};

/* Code when the facts name none: sources by their extension. Build files,
 * packaging and runner configuration are "other": they are never part of a
 * reference patch. */
static const char *const default_code[] = {"*.c",  "*.h",  "*.cc", "*.cpp", "*.cxx", "*.hpp", "*.hh", "*.py",
                                           "*.pyx", "*.go", "*.rs", "*.java", "*.kt", "*.js",  "*.ts", "*.rb",
                                           "*.php", "*.cs", "*.swift", "*.scala", "*.lua", "*.pl", NULL};

static const char *const fact_keys[] = {"test_command", "public_command", "install", "results", "environment",
                                        "tests", "code", "docs", "protected_paths", "budgets", "tools", "network",
                                        "wall_s", NULL};

void rlvr_repo_facts_free(rlvr_repo_facts *f) {
    if (!f) return;
    char **strings[] = {&f->source, &f->test_command, &f->public_command, &f->install, &f->results_junit,
                        &f->environment_json, &f->budgets_json, &f->tools_json};
    for (size_t i = 0; i < sizeof strings / sizeof *strings; i++) free(*strings[i]);
    rlvr_str_list_clear(&f->tests);
    rlvr_str_list_clear(&f->code);
    rlvr_str_list_clear(&f->docs);
    rlvr_str_list_clear(&f->protect);
    rlvr_str_list_clear(&f->expected);
    memset(f, 0, sizeof *f);
}

static int facts_error(const rlvr_repo_facts *f, const char *key, const char *what) {
    return rlvr_error_set(RLVR_EFORMAT, "repository facts %s: key \"%s\" %s", f->source, key, what);
}

static int get_string(const rlvr_repo_facts *f, json_t *o, const char *key, bool required, char **out) {
    json_t *v = json_object_get(o, key);
    if (!v) return required ? facts_error(f, key, "missing (how the tests run in the enclave)") : 0;
    if (!json_is_string(v) || json_string_length(v) == 0) return facts_error(f, key, "must be a non-empty string");
    if (!(*out = strdup(json_string_value(v)))) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    return 0;
}

static int get_globs(const rlvr_repo_facts *f, json_t *o, const char *key, rlvr_str_list *out) {
    json_t *v = json_object_get(o, key);
    if (!v) return 0;
    if (!json_is_array(v)) return facts_error(f, key, "must be an array of path globs");
    size_t i;
    json_t *g;
    json_array_foreach(v, i, g) {
        if (!json_is_string(g) || json_string_length(g) == 0)
            return facts_error(f, key, "must be an array of non-empty strings");
        RLVR_TRY(rlvr_str_list_add_unique(out, json_string_value(g)));
    }
    return 0;
}

static int get_object_text(const rlvr_repo_facts *f, json_t *o, const char *key, bool array, char **out) {
    json_t *v = json_object_get(o, key);
    if (!v) return 0;
    if (array ? !json_is_array(v) : !json_is_object(v))
        return facts_error(f, key, array ? "must be an array" : "must be an object");
    if (!(*out = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER))) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    return 0;
}

static int read_results(rlvr_repo_facts *f, json_t *o) {
    json_t *v = json_object_get(o, "results");
    if (!v || (json_is_string(v) && strcmp(json_string_value(v), "tap") == 0)) return 0;
    json_t *format = json_is_object(v) ? json_object_get(v, "format") : NULL;
    if (json_is_string(format) && strcmp(json_string_value(format), "expected") == 0) {
        json_t *files = json_object_get(v, "files");
        if (json_object_size(v) != 2 || !json_is_array(files) || json_array_size(files) == 0)
            return facts_error(f, "results", "with the format \"expected\" takes \"files\": globs of the files the "
                                             "test command writes (\"tests/baseline_*.txt\")");
        return get_globs(f, v, "files", &f->expected);
    }
    json_t *path = json_is_object(v) ? json_object_get(v, "path") : NULL;
    if (!json_is_string(format) || strcmp(json_string_value(format), "junit") != 0 || !json_is_string(path) ||
        json_string_length(path) == 0 || json_object_size(v) != 2)
        return facts_error(f, "results", "must be \"tap\", {\"format\": \"junit\", \"path\": \"report.xml\"} or "
                                         "{\"format\": \"expected\", \"files\": [GLOB, ...]}");
    if (!(f->results_junit = strdup(json_string_value(path)))) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    return 0;
}

/* The environment as the task key takes it, its image made absolute so the
 * pool can live anywhere. */
static int read_environment(rlvr_repo_facts *f, json_t *o, const char *base_dir) {
    json_t *v = json_object_get(o, "environment");
    if (!v) return 0;
    json_t *copy = json_deep_copy(v);
    json_t *image = json_is_string(copy) ? copy : json_is_object(copy) ? json_object_get(copy, "image") : NULL;
    int rc = 0;
    if (!json_is_string(image) || json_string_length(image) == 0)
        rc = facts_error(f, "environment", "must be an image path or {\"image\": PATH, \"workdir\": ..., \"env\": {...}}");
    else if (json_string_value(image)[0] != '/') {
        char abs[8192];
        snprintf(abs, sizeof abs, "%s/%s", base_dir, json_string_value(image));
        char *real = realpath(abs, NULL);
        if (!real) rc = facts_error(f, "environment", "names an image that does not exist");
        else json_string_set(image, real);
        free(real);
    }
    if (rc == 0 && !(f->environment_json = json_dumps(copy, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY)))
        rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    json_decref(copy);
    return rc;
}

static int read_facts(rlvr_repo_facts *f, json_t *o, const char *base_dir) {
    if (!json_is_object(o)) return rlvr_error_set(RLVR_EFORMAT, "repository facts %s: must be a JSON object", f->source);
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v) {
        bool known = false;
        for (const char *const *k = fact_keys; *k && !known; k++) known = strcmp(*k, key) == 0;
        if (!known) return facts_error(f, key, "is unknown (keys: test_command, public_command, install, results, "
                                               "environment, tests, code, docs, protected_paths, budgets, tools, "
                                               "network, wall_s)");
    }
    RLVR_TRY(get_string(f, o, "test_command", true, &f->test_command));
    RLVR_TRY(get_string(f, o, "public_command", false, &f->public_command));
    RLVR_TRY(get_string(f, o, "install", false, &f->install));
    RLVR_TRY(read_results(f, o));
    RLVR_TRY(read_environment(f, o, base_dir));
    RLVR_TRY(get_globs(f, o, "tests", &f->tests));
    RLVR_TRY(get_globs(f, o, "code", &f->code));
    RLVR_TRY(get_globs(f, o, "docs", &f->docs));
    RLVR_TRY(get_globs(f, o, "protected_paths", &f->protect));
    RLVR_TRY(get_object_text(f, o, "budgets", false, &f->budgets_json));
    RLVR_TRY(get_object_text(f, o, "tools", true, &f->tools_json));
    json_t *net = json_object_get(o, "network");
    if (net && (!json_is_string(net) || (strcmp(json_string_value(net), "none") != 0 &&
                                          strcmp(json_string_value(net), "loopback") != 0)))
        return facts_error(f, "network", "must be \"none\" or \"loopback\"");
    f->network_loopback = net && strcmp(json_string_value(net), "loopback") == 0;
    json_t *wall = json_object_get(o, "wall_s");
    f->wall_s = 120;
    if (wall) {
        if (!json_is_number(wall) || !(json_number_value(wall) > 0 && json_number_value(wall) <= 86400))
            return facts_error(f, "wall_s", "must be a number of seconds in (0, 86400]");
        f->wall_s = json_number_value(wall);
    }
    return 0;
}

int rlvr_repo_facts_parse(rlvr_repo_facts *out, const char *text, const char *source, const char *base_dir) {
    memset(out, 0, sizeof *out);
    if (!(out->source = strdup(source))) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    json_error_t jerr;
    json_t *o = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
    int rc = o ? read_facts(out, o, base_dir ? base_dir : ".")
               : rlvr_error_set(RLVR_EFORMAT, "repository facts %s: not valid JSON at line %d column %d: %s", source,
                                jerr.line, jerr.column, jerr.text);
    json_decref(o);
    if (rc < 0) rlvr_repo_facts_free(out);
    return rc;
}

int rlvr_repo_facts_load(rlvr_repo_facts *out, const char *path) {
    return rlvr_repo_facts_load_merged(out, path, NULL);
}

static bool any_glob(const char *const *globs, const char *path) {
    for (; globs && *globs; globs++)
        if (rlvr_diffgate_glob_match(*globs, path)) return true;
    return false;
}

bool rlvr_repo_facts_expected(const rlvr_repo_facts *f, const char *path) {
    for (size_t i = 0; i < f->expected.n; i++)
        if (rlvr_diffgate_glob_match(f->expected.items[i], path)) return true;
    return false;
}

char rlvr_repo_facts_classify(const rlvr_repo_facts *f, const char *path) {
    for (size_t i = 0; i < f->tests.n; i++)
        if (rlvr_diffgate_glob_match(f->tests.items[i], path)) return 't';
    bool doc = false, code = false;
    if (f->docs.n == 0) doc = any_glob(default_docs, path);
    for (size_t i = 0; i < f->docs.n && !doc; i++) doc = rlvr_diffgate_glob_match(f->docs.items[i], path);
    if (doc) return 'd';
    if (f->code.n == 0) code = any_glob(default_code, path);
    for (size_t i = 0; i < f->code.n && !code; i++) code = rlvr_diffgate_glob_match(f->code.items[i], path);
    return code ? 'c' : 'o';
}

int rlvr_repo_facts_load_merged(rlvr_repo_facts *out, const char *path, const char *overrides_json) {
    memset(out, 0, sizeof *out);
    json_t *base = NULL, *over = NULL;
    char dir[4096] = ".";
    int rc = 0;
    if (path) {
        char *text = NULL;
        size_t len = 0;
        json_error_t jerr;
        rc = rlvr_fs_read_file(path, &text, &len);
        if (rc == 0 && !(base = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr)))
            rc = rlvr_error_set(RLVR_EFORMAT, "repository facts %s: not valid JSON at line %d column %d: %s", path,
                                jerr.line, jerr.column, jerr.text);
        if (rc == 0 && !json_is_object(base))
            rc = rlvr_error_set(RLVR_EFORMAT, "repository facts %s: must be a JSON object", path);
        free(text);
        rlvr_fs_dirname(dir, sizeof dir, path);
    } else base = json_object();
    if (rc == 0 && overrides_json && !(over = json_loads(overrides_json, 0, NULL)))
        rc = RLVR_FAIL(RLVR_EINVAL, "repository facts: the overrides are not a JSON object");
    if (rc == 0 && over) json_object_update(base, over);
    char *merged = rc == 0 ? json_dumps(base, JSON_COMPACT) : NULL;
    if (rc == 0 && !merged) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    if (rc == 0) rc = rlvr_repo_facts_parse(out, merged, path ? path : "(command line)", dir);
    free(merged);
    json_decref(base);
    json_decref(over);
    return rc;
}

static int add_globs(json_t *over, const char *key, const char *const *globs, size_t n) {
    if (n == 0) return 0;
    json_t *a = json_array();
    if (!a || json_object_set_new(over, key, a) != 0) return -1;
    for (size_t i = 0; i < n; i++)
        if (json_array_append_new(a, json_string(globs[i])) != 0) return -1;
    return 0;
}

int rlvr_repo_facts_load_flags(rlvr_repo_facts *out, const char *path, const rlvr_repo_facts_flags *flags) {
    const char *results = flags->results;
    if (results && strcmp(results, "tap") != 0 && !(strncmp(results, "junit:", 6) == 0 && results[6]))
        return RLVR_FAIL(RLVR_ECONFIG, "results wants tap or junit:PATH, got \"%s\"", results);
    json_t *over = json_object();
    bool ok = over != NULL;
    if (ok && flags->test_command)
        ok = json_object_set_new(over, "test_command", json_string(flags->test_command)) == 0;
    if (ok && flags->environment) { /* a relative image path names a file from here, not from the facts file */
        char *real = realpath(flags->environment, NULL);
        ok = json_object_set_new(over, "environment", json_string(real ? real : flags->environment)) == 0;
        free(real);
    }
    if (ok && results)
        ok = json_object_set_new(over, "results",
                                 strcmp(results, "tap") == 0
                                     ? json_string("tap")
                                     : json_pack("{s:s, s:s}", "format", "junit", "path", results + 6)) == 0;
    if (ok) ok = add_globs(over, "tests", flags->tests, flags->n_tests) == 0;
    if (ok) ok = add_globs(over, "code", flags->code, flags->n_code) == 0;
    char *text = ok ? json_dumps(over, JSON_COMPACT) : NULL;
    json_decref(over);
    if (!text) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    int rc = rlvr_repo_facts_load_merged(out, path, text);
    free(text);
    return rc;
}
