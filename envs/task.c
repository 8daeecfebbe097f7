/* envs/task.c — loading, checking and writing task specs (jansson). */
#include "envs/task.h"
#include "core/fs.h"

#include "core/config.h"
#include "core/error.h"
#include "enclave/diffgate.h"
#include "enclave/image.h"
#include "enclave/reason.h"
#include "envs/history.h"
#include "envs/tools.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static const char *const split_names[RLVR_SPLIT_COUNT] = {"train", "eval", "regression"};

const char *rlvr_split_name(rlvr_split split) {
    return (unsigned)split < RLVR_SPLIT_COUNT ? split_names[split] : NULL;
}

static const char *closest_split(const char *name) {
    const char *best = split_names[0];
    for (int s = 1; s < RLVR_SPLIT_COUNT; s++)
        if (rlvr_edit_distance(name, split_names[s]) < rlvr_edit_distance(name, best)) best = split_names[s];
    return best;
}

int rlvr_split_parse(const char *name, rlvr_split *out) {
    for (int s = 0; s < RLVR_SPLIT_COUNT; s++)
        if (strcmp(name, split_names[s]) == 0) {
            *out = (rlvr_split)s;
            return 0;
        }
    return rlvr_error_set(RLVR_EINVAL, "split \"%s\" is not train|eval|regression; did you mean \"%s\"?", name,
                          closest_split(name));
}

void rlvr_task_budgets_resolve(const rlvr_task_budgets *task, const rlvr_task_budgets *run, rlvr_task_budgets *out) {
    out->turns = task->turns > 0 ? task->turns : run->turns;
    out->policy_tokens = task->policy_tokens > 0 ? task->policy_tokens : run->policy_tokens;
    out->context_tokens = task->context_tokens > 0 ? task->context_tokens : run->context_tokens;
    out->tool_timeout_s = task->tool_timeout_s > 0 ? task->tool_timeout_s : run->tool_timeout_s;
    out->malformed_calls = task->malformed_calls > 0 ? task->malformed_calls : run->malformed_calls;
    out->verify_timeout_s = task->verify_timeout_s > 0 ? task->verify_timeout_s : run->verify_timeout_s;
}

/* ---- freeing ------------------------------------------------------------ */

void rlvr_str_list_clear(rlvr_str_list *l) {
    for (size_t i = 0; i < l->n; i++) free(l->items[i]);
    free(l->items);
    l->items = NULL;
    l->n = 0;
}

int rlvr_str_list_add_unique(rlvr_str_list *l, const char *s) {
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->items[i], s) == 0) return 0;
    char **grown = realloc(l->items, (l->n + 1) * sizeof *grown);
    if (!grown) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    l->items = grown;
    if (!(l->items[l->n] = strdup(s))) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    l->n++;
    return 0;
}

void rlvr_task_free(rlvr_task *t) {
    if (!t) return;
    char **strings[] = {&t->source, &t->base_dir, &t->id, &t->family, &t->template_name, &t->split_key, &t->prompt,
                        &t->repository, &t->repository_path, &t->base_commit, &t->public_test_command, &t->public_results_junit,
                        &t->hidden_root, &t->hidden_root_path, &t->hidden_test_command, &t->judge_build,
                        &t->hidden_build_command, &t->hidden_results_junit, &t->reference_patch,
                        &t->reference_answer, &t->metadata_json, &t->environment, &t->environment_path,
                        &t->environment_workdir, &t->expected_root, &t->expected_root_path};
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) free(*strings[i]);
    rlvr_str_list *lists[] = {&t->public_test_files, &t->hidden_test_files, &t->fail_to_pass, &t->pass_to_pass,
                              &t->wrong_patches, &t->protected_paths, &t->wrong_answers, &t->judge_run,
                              &t->editable_paths, &t->environment_env, &t->expected_files};
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) rlvr_str_list_clear(lists[i]);
    free(t);
}

/* ---- the derived allow-list ----------------------------------------------- */

/* Copies text to out escaping glob characters; false when it does not fit. */
static bool glob_escape(char *out, size_t cap, const char *text, size_t len) {
    size_t k = 0;
    for (size_t i = 0; i < len; i++) {
        if (strchr("*?[]\\", text[i])) {
            if (k + 1 >= cap) return false;
            out[k++] = '\\';
        }
        if (k + 1 >= cap) return false;
        out[k++] = text[i];
    }
    out[k] = '\0';
    return true;
}

/* The allow-list glob of one changed file (see rlvr_task_editable_from_patch). */
static int editable_glob_of(const char *path, size_t len, rlvr_str_list *out) {
    const char *slash = memrchr(path, '/', len);
    const char *name = slash ? slash + 1 : path;
    const char *dot = memrchr(name, '.', len - (size_t)(name - path));
    char dir[2048], ext[256], glob[2400];
    size_t dir_len = slash ? (size_t)(slash - path) : 0;
    if (!glob_escape(dir, sizeof dir, path, dir_len)) return 0;
    if (dot && dot > name && dot + 1 < path + len) {
        if (!glob_escape(ext, sizeof ext, dot + 1, (size_t)(path + len - dot - 1))) return 0;
        snprintf(glob, sizeof glob, "/%s%s*.%s", dir, dir_len ? "/" : "", ext);
    } else {
        char whole[2048];
        if (!glob_escape(whole, sizeof whole, path, len)) return 0;
        snprintf(glob, sizeof glob, "/%s", whole);
    }
    return rlvr_str_list_add_unique(out, glob);
}

int rlvr_task_editable_from_patch(const char *patch, rlvr_str_list *out) {
    for (const char *line = patch; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        bool plus = n > 6 && strncmp(line, "+++ b/", 6) == 0, minus = n > 6 && strncmp(line, "--- a/", 6) == 0;
        if (plus || minus) {
            const char *p = line + 6;
            size_t len = n - 6;
            while (len > 0 && (p[len - 1] == '\r' || p[len - 1] == '\t')) len--;
            RLVR_TRY(editable_glob_of(p, len, out));
        }
        line = end ? end + 1 : NULL;
    }
    return 0;
}

/* ---- reading ------------------------------------------------------------ */

typedef struct {
    const char *source;
    rlvr_task *task;
} reader;

static int field_error(const reader *r, const char *field, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int field_error(const reader *r, const char *field, const char *fmt, ...) {
    char what[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return rlvr_error_set(RLVR_EFORMAT, "task spec %s: field \"%s\" %s", r->source, field, what);
}

static int no_memory(void) { return RLVR_FAIL(RLVR_ENOMEM, "out of memory reading a task spec"); }

static const char *json_kind(const json_t *v) {
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a real number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "?";
}

/* Refuses keys of `obj` that are not in `allowed` (NULL-terminated). */
static int check_keys(const reader *r, json_t *obj, const char *prefix, const char *const *allowed) {
    const char *key;
    json_t *value;
    json_object_foreach(obj, key, value) {
        const char *best = NULL;
        size_t best_d = (size_t)-1;
        bool known = false;
        for (const char *const *a = allowed; *a; a++) {
            if (strcmp(*a, key) == 0) known = true;
            size_t d = rlvr_edit_distance(key, *a);
            if (d < best_d) best_d = d, best = *a;
        }
        if (known) continue;
        char field[256];
        snprintf(field, sizeof field, "%s%s", prefix, key);
        if (best && best_d <= 3) return field_error(r, field, "is not a task field; did you mean \"%s%s\"?", prefix, best);
        return field_error(r, field, "is not a task field (docs/TASKS.md lists them)");
    }
    return 0;
}

/* A string field. required: missing is an error; nonempty: "" is an error. */
static int get_string(const reader *r, json_t *obj, const char *prefix, const char *key, bool required, bool nonempty,
                      char **out) {
    char field[256];
    snprintf(field, sizeof field, "%s%s", prefix, key);
    json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (!v) return required ? field_error(r, field, "missing") : 0;
    if (!json_is_string(v)) return field_error(r, field, "must be a string, not %s", json_kind(v));
    if (strlen(json_string_value(v)) != json_string_length(v))
        return field_error(r, field, "must not contain NUL bytes");
    if (nonempty && json_string_length(v) == 0) return field_error(r, field, "must not be empty");
    *out = strdup(json_string_value(v));
    return *out ? 0 : no_memory();
}

static int list_from_array(const reader *r, const char *field, json_t *arr, bool nonempty_items, rlvr_str_list *out) {
    size_t n = json_array_size(arr);
    RLVR_ALLOC(out->items, n);
    size_t i;
    json_t *item;
    json_array_foreach(arr, i, item) {
        if (!json_is_string(item))
            return field_error(r, field, "item %zu must be a string, not %s", i, json_kind(item));
        if (strlen(json_string_value(item)) != json_string_length(item))
            return field_error(r, field, "item %zu must not contain NUL bytes", i);
        if (nonempty_items && json_string_length(item) == 0) return field_error(r, field, "item %zu is empty", i);
        out->items[i] = strdup(json_string_value(item));
        if (!out->items[i]) return no_memory();
        out->n = i + 1;
    }
    return 0;
}

/* An array of strings. `swe_string`: SWE-bench stores FAIL_TO_PASS and
 * PASS_TO_PASS as a string holding a JSON array; accept that too. */
static int get_list(const reader *r, json_t *obj, const char *prefix, const char *key, bool required, bool nonempty,
                    bool swe_string, rlvr_str_list *out) {
    char field[256];
    snprintf(field, sizeof field, "%s%s", prefix, key);
    json_t *v = json_object_get(obj, key);
    if (!v) return required ? field_error(r, field, "missing") : 0;
    json_t *decoded = NULL;
    if (swe_string && json_is_string(v)) {
        json_error_t jerr;
        decoded = json_loads(json_string_value(v), 0, &jerr);
        if (!decoded || !json_is_array(decoded)) {
            json_decref(decoded);
            return field_error(r, field, "is a string but not a JSON array of test names");
        }
        v = decoded;
    }
    int rc;
    if (!json_is_array(v)) rc = field_error(r, field, "must be an array of strings, not %s", json_kind(v));
    else if (nonempty && json_array_size(v) == 0) rc = field_error(r, field, "must not be empty");
    else rc = list_from_array(r, field, v, true, out);
    json_decref(decoded);
    return rc;
}

static char *join_path(const char *dir, const char *rel) {
    if (rel[0] == '/' || !dir || !dir[0]) return strdup(rel);
    size_t n = strlen(dir) + strlen(rel) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", dir, rel);
    return p;
}

/* A path inside the repository tree: relative, no "..", no empty parts. */
static int check_tree_path(const reader *r, const char *field, const char *p) {
    if (p[0] == '/') return field_error(r, field, "path \"%s\" must be relative to the repository", p);
    const char *s = p;
    while (*s) {
        const char *e = strchr(s, '/');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n == 0 || (n == 2 && s[0] == '.' && s[1] == '.'))
            return field_error(r, field, "path \"%s\" must stay inside the repository (no \"..\" or \"//\")", p);
        s += n + (e ? 1 : 0);
    }
    return 0;
}

static int check_tree_paths(const reader *r, const char *field, const rlvr_str_list *l) {
    for (size_t i = 0; i < l->n; i++) RLVR_TRY(check_tree_path(r, field, l->items[i]));
    return 0;
}

static bool is_hex40(const char *s) {
    if (strlen(s) != 40) return false;
    for (; *s; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f'))) return false;
    return true;
}

static bool is_git_dir(const char *dir) {
    char p[4096];
    struct stat st;
    snprintf(p, sizeof p, "%s/.git", dir);
    if (stat(p, &st) == 0) return true;
    snprintf(p, sizeof p, "%s/HEAD", dir); /* bare repository */
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int read_repository(const reader *r, json_t *root) {
    rlvr_task *t = r->task;
    RLVR_TRY(get_string(r, root, "", "repository", true, true, &t->repository));
    t->repository_path = join_path(t->base_dir, t->repository);
    if (!t->repository_path) return no_memory();
    struct stat st;
    if (stat(t->repository_path, &st) != 0)
        return field_error(r, "repository", "\"%s\" does not exist (looked at %s)", t->repository, t->repository_path);
    if (S_ISDIR(st.st_mode)) {
        if (!is_git_dir(t->repository_path))
            return field_error(r, "repository", "\"%s\" is a directory but not a git repository", t->repository);
        t->repository_kind = RLVR_REPO_DIRECTORY;
    } else {
        if (!rlvr_history_is_bundle(t->repository_path))
            return field_error(r, "repository", "\"%s\" is neither a git repository directory nor a git bundle",
                               t->repository);
        t->repository_kind = RLVR_REPO_BUNDLE;
    }
    RLVR_TRY(get_string(r, root, "", "base_commit", true, true, &t->base_commit));
    if (!is_hex40(t->base_commit))
        return field_error(r, "base_commit", "\"%s\" is not a commit id (40 lowercase hex digits)", t->base_commit);
    return 0;
}

static int read_results(const reader *r, json_t *section, const char *name, char **out);

static int read_public_tests(const reader *r, json_t *root) {
    rlvr_task *t = r->task;
    json_t *pub = json_object_get(root, "public_tests");
    if (!pub) return field_error(r, "public_tests", "missing");
    if (!json_is_object(pub)) return field_error(r, "public_tests", "must be an object, not %s", json_kind(pub));
    static const char *const keys[] = {"command", "files", "results", NULL};
    RLVR_TRY(check_keys(r, pub, "public_tests.", keys));
    RLVR_TRY(get_string(r, pub, "public_tests.", "command", true, true, &t->public_test_command));
    RLVR_TRY(read_results(r, pub, "public_tests", &t->public_results_junit));
    RLVR_TRY(get_list(r, pub, "public_tests.", "files", false, false, false, &t->public_test_files));
    return check_tree_paths(r, "public_tests.files", &t->public_test_files);
}

/* hidden_tests.judge: {"build": command, "run": [program, args...]}. */
static int read_judge(const reader *r, json_t *hid) {
    rlvr_task *t = r->task;
    json_t *j = json_object_get(hid, "judge");
    if (!j) return 0;
    if (!json_is_object(j)) return field_error(r, "hidden_tests.judge", "must be an object, not %s", json_kind(j));
    static const char *const keys[] = {"build", "run", NULL};
    RLVR_TRY(check_keys(r, j, "hidden_tests.judge.", keys));
    RLVR_TRY(get_string(r, j, "hidden_tests.judge.", "build", true, true, &t->judge_build));
    RLVR_TRY(get_list(r, j, "hidden_tests.judge.", "run", true, true, false, &t->judge_run));
    const char *prog = t->judge_run.items[0];
    if (strchr(prog, '/') || strcmp(prog, ".") == 0 || strcmp(prog, "..") == 0)
        return field_error(r, "hidden_tests.judge.run", "item 0 \"%s\" must name a program the judge build leaves in "
                           "$RLVR_JUDGE_DIR (a file name, no '/')", prog);
    return 0;
}

/* <section>.results: {"format": "tap"} (the default: TAP on the results
 * descriptor, or for public tests the output alone) or {"format": "junit",
 * "path": P} (a JUnit XML file at P in the tree, read once the tests are
 * over); *out gets P for junit. */
static int read_results(const reader *r, json_t *section, const char *name, char **out) {
    json_t *res = json_object_get(section, "results");
    *out = NULL;
    if (!res) return 0;
    char field[64], prefix[64];
    snprintf(field, sizeof field, "%s.results", name);
    snprintf(prefix, sizeof prefix, "%s.results.", name);
    if (!json_is_object(res)) return field_error(r, field, "must be an object, not %s", json_kind(res));
    static const char *const keys[] = {"format", "path", "root", "files", NULL};
    RLVR_TRY(check_keys(r, res, prefix, keys));
    char *format = NULL, *path = NULL;
    int rc = get_string(r, res, prefix, "format", true, true, &format);
    if (rc == 0 && strcmp(format, "expected") == 0) { /* read_expected's */
        free(format);
        return strcmp(name, "hidden_tests") == 0
                   ? 0
                   : field_error(r, field, "\"expected\" is for hidden_tests (the public tests report as they run)");
    }
    if (rc == 0 && (json_object_get(res, "root") || json_object_get(res, "files")))
        rc = field_error(r, field, "\"root\" and \"files\" are for the format \"expected\"");
    if (rc == 0) rc = get_string(r, res, prefix, "path", false, true, &path);
    bool junit = format && strcmp(format, "junit") == 0;
    snprintf(field, sizeof field, "%s.results.format", name);
    char path_field[64];
    snprintf(path_field, sizeof path_field, "%s.results.path", name);
    if (rc == 0 && !junit && strcmp(format, "tap") != 0)
        rc = field_error(r, field, "is \"%s\"; use \"tap\", \"junit\" or \"expected\"", format);
    else if (rc == 0 && junit && !path)
        rc = field_error(r, path_field, "missing: a JUnit file's path in the tree (\"report.xml\")");
    else if (rc == 0 && !junit && path)
        rc = field_error(r, path_field, "is for \"junit\" (TAP comes on the results descriptor)");
    else if (rc == 0 && junit && rlvr_diffgate_check_path(path, NULL) != RLVR_REASON_NONE)
        rc = field_error(r, path_field,
                         "\"%s\" must be a plain relative path in the tree (no \"..\", no .git, not a hook or "
                         "environment file)", path);
    free(format);
    if (rc == 0 && junit) *out = path;
    else free(path);
    return rc;
}

/* hidden_tests.results {"format": "expected", "root": DIR, "files": [...]}:
 * files the command leaves, compared with copies under root that never
 * enter the enclave (enclave/expected.h). Returns 0 when the format is
 * another. */
static int read_expected(const reader *r, json_t *hid) {
    rlvr_task *t = r->task;
    json_t *res = json_object_get(hid, "results");
    json_t *format = json_is_object(res) ? json_object_get(res, "format") : NULL;
    if (!json_is_string(format) || strcmp(json_string_value(format), "expected") != 0) return 0;
    if (json_object_get(res, "path"))
        return field_error(r, "hidden_tests.results.path", "is for \"junit\" (\"expected\" names its files)");
    RLVR_TRY(get_string(r, res, "hidden_tests.results.", "root", true, true, &t->expected_root));
    RLVR_TRY(get_list(r, res, "hidden_tests.results.", "files", true, true, false, &t->expected_files));
    RLVR_TRY(check_tree_paths(r, "hidden_tests.results.files", &t->expected_files));
    if (!(t->expected_root_path = join_path(t->base_dir, t->expected_root))) return no_memory();
    struct stat st;
    if (stat(t->expected_root_path, &st) != 0 || !S_ISDIR(st.st_mode))
        return field_error(r, "hidden_tests.results.root", "\"%s\" is not a directory (looked at %s)",
                           t->expected_root, t->expected_root_path);
    for (size_t i = 0; i < t->expected_files.n; i++) {
        const char *f = t->expected_files.items[i];
        char *p = join_path(t->expected_root_path, f);
        if (!p) return no_memory();
        int ok = stat(p, &st) == 0 && S_ISREG(st.st_mode);
        free(p);
        if (!ok)
            return field_error(r, "hidden_tests.results.files", "\"%s\" is not a file under \"%s\"", f,
                               t->expected_root);
        if (rlvr_diffgate_check_path(f, NULL) != RLVR_REASON_NONE)
            return field_error(r, "hidden_tests.results.files",
                               "\"%s\" must be a plain relative path in the tree (no .git, hook or environment file)",
                               f);
        for (size_t k = 0; k < t->hidden_test_files.n; k++)
            if (strcmp(t->hidden_test_files.items[k], f) == 0) /* it would be copied into the enclave */
                return field_error(r, "hidden_tests.results.files",
                                   "\"%s\" is also a hidden file: an expected copy never enters the enclave", f);
        for (size_t k = 0; k < t->public_test_files.n; k++)
            if (strcmp(t->public_test_files.items[k], f) == 0) /* read-only, where the run must write it */
                return field_error(r, "hidden_tests.results.files",
                                   "\"%s\" is also a public test file, read-only while the tests run; leave it out "
                                   "of public_tests.files",
                                   f);
    }
    return 0;
}

static int read_hidden_tests(const reader *r, json_t *root) {
    rlvr_task *t = r->task;
    json_t *hid = json_object_get(root, "hidden_tests");
    if (!hid) return field_error(r, "hidden_tests", "missing");
    if (!json_is_object(hid)) return field_error(r, "hidden_tests", "must be an object, not %s", json_kind(hid));
    static const char *const keys[] = {"root", "files", "command", "build", "judge", "results", NULL};
    RLVR_TRY(check_keys(r, hid, "hidden_tests.", keys));
    RLVR_TRY(read_results(r, hid, "hidden_tests", &t->hidden_results_junit));
    RLVR_TRY(get_string(r, hid, "hidden_tests.", "root", true, true, &t->hidden_root));
    json_t *res = json_object_get(hid, "results");
    json_t *format = json_is_object(res) ? json_object_get(res, "format") : NULL;
    bool expected = json_is_string(format) && strcmp(json_string_value(format), "expected") == 0;
    /* with expected files the hidden files are the run's inputs, and a
     * change may need none */
    RLVR_TRY(get_list(r, hid, "hidden_tests.", "files", true, !expected, false, &t->hidden_test_files));
    RLVR_TRY(read_judge(r, hid));
    if (expected && t->judge_build)
        return field_error(r, "hidden_tests.results",
                           "\"expected\" is for command mode (a judge writes TAP to its results descriptor)");
    RLVR_TRY(get_string(r, hid, "hidden_tests.", "command", !t->judge_build, true, &t->hidden_test_command));
    if (t->judge_build && t->hidden_test_command)
        return field_error(r, "hidden_tests.command",
                           "is for tasks without a judge (hidden_tests.judge runs the tests; hidden_tests.build builds "
                           "the code under test)");
    if (t->judge_build && t->hidden_results_junit)
        return field_error(r, "hidden_tests.results",
                           "\"junit\" is for command mode (a judge writes TAP to its results descriptor)");
    RLVR_TRY(get_string(r, hid, "hidden_tests.", "build", false, true, &t->hidden_build_command));
    if (t->hidden_build_command && !t->judge_build)
        return field_error(r, "hidden_tests.build", "needs hidden_tests.judge (without one, the command builds)");
    RLVR_TRY(check_tree_paths(r, "hidden_tests.files", &t->hidden_test_files));
    t->hidden_root_path = join_path(t->base_dir, t->hidden_root);
    if (!t->hidden_root_path) return no_memory();
    struct stat st;
    if (stat(t->hidden_root_path, &st) != 0 || !S_ISDIR(st.st_mode))
        return field_error(r, "hidden_tests.root", "\"%s\" is not a directory (looked at %s)", t->hidden_root,
                           t->hidden_root_path);
    for (size_t i = 0; i < t->hidden_test_files.n; i++) {
        char *p = join_path(t->hidden_root_path, t->hidden_test_files.items[i]);
        if (!p) return no_memory();
        int ok = stat(p, &st) == 0 && S_ISREG(st.st_mode);
        free(p);
        if (!ok)
            return field_error(r, "hidden_tests.files", "\"%s\" is not a file under hidden_tests.root \"%s\"",
                               t->hidden_test_files.items[i], t->hidden_root);
    }
    return read_expected(r, hid);
}

static bool looks_like_patch(const char *p) {
    return (strncmp(p, "diff --git ", 11) == 0 || strncmp(p, "--- ", 4) == 0 || strstr(p, "\n--- ")) &&
           (strncmp(p, "+++ ", 4) == 0 || strstr(p, "\n+++ ")) && strstr(p, "\n@@ ");
}

/* "network": "none" (the default: no inet sockets in the task's sandboxes)
 * or "loopback" (a task whose tests talk to a server they start). */
static int read_network(const reader *r, json_t *root) {
    char *s = NULL;
    RLVR_TRY(get_string(r, root, "", "network", false, true, &s));
    bool loopback = s && strcmp(s, "loopback") == 0, none = !s || strcmp(s, "none") == 0;
    int rc = loopback || none ? 0 : field_error(r, "network", "is \"%s\"; use \"none\" or \"loopback\"", s);
    free(s);
    r->task->network = loopback;
    return rc;
}

/* environment.env: {"NAME": "value", ...} as "NAME=value" entries. Names
 * are C identifiers; RLVR_* belong to rlvr. */
static int read_environment_env(const reader *r, json_t *env) {
    if (!env) return 0;
    if (!json_is_object(env)) return field_error(r, "environment.env", "must be an object, not %s", json_kind(env));
    const char *key;
    json_t *value;
    json_object_foreach(env, key, value) {
        bool ok = (key[0] >= 'A' && key[0] <= 'Z') || (key[0] >= 'a' && key[0] <= 'z') || key[0] == '_';
        for (const char *c = key; ok && *c; c++)
            ok = (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_';
        if (!ok || strncmp(key, "RLVR_", 5) == 0)
            return field_error(r, "environment.env", "name \"%s\" must be a variable name (letters, digits, '_'; "
                               "RLVR_* are rlvr's own)", key);
        if (!json_is_string(value) || strlen(json_string_value(value)) != json_string_length(value))
            return field_error(r, "environment.env", "value of %s must be a string without NUL bytes", key);
        size_t n = strlen(key) + json_string_length(value) + 2;
        char *entry = malloc(n);
        if (!entry) return no_memory();
        snprintf(entry, n, "%s=%s", key, json_string_value(value));
        int rc = rlvr_str_list_add_unique(&r->task->environment_env, entry);
        free(entry);
        RLVR_TRY(rc);
    }
    if (r->task->environment_env.n > 32)
        return field_error(r, "environment.env", "has %zu entries; at most 32", r->task->environment_env.n);
    return 0;
}

/* "environment": "IMAGE" or {"image": IMAGE, "workdir": "/testbed", "env":
 * {...}}. The image is inspected now (what it is, whether it is whole);
 * whether it mounts and holds /bin/sh and the working directory is the
 * task check's (and every verification's) to find out. */
static int read_environment(const reader *r, json_t *root) {
    rlvr_task *t = r->task;
    json_t *e = json_object_get(root, "environment");
    if (!e) return 0;
    if (json_is_string(e)) {
        RLVR_TRY(get_string(r, root, "", "environment", true, true, &t->environment));
    } else if (json_is_object(e)) {
        static const char *const keys[] = {"image", "workdir", "env", NULL};
        RLVR_TRY(check_keys(r, e, "environment.", keys));
        RLVR_TRY(get_string(r, e, "environment.", "image", true, true, &t->environment));
        RLVR_TRY(get_string(r, e, "environment.", "workdir", false, true, &t->environment_workdir));
        RLVR_TRY(read_environment_env(r, json_object_get(e, "env")));
    } else {
        return field_error(r, "environment", "must be an image path or an object, not %s", json_kind(e));
    }
    if (t->environment_workdir && rlvr_image_workdir_check(t->environment_workdir) < 0)
        return field_error(r, "environment.workdir", "\"%s\" must be a plain absolute path outside /proc, /dev, /tmp, "
                           "/sys and /.rlvr", t->environment_workdir);
    if (!(t->environment_path = join_path(t->base_dir, t->environment))) return no_memory();
    rlvr_image_info info;
    if (rlvr_image_inspect(t->environment_path, &info) < 0)
        return field_error(r, "environment", "%s", rlvr_error_last());
    return 0;
}

static int read_tests_verifier(const reader *r, json_t *root) {
    rlvr_task *t = r->task;
    RLVR_TRY(read_repository(r, root));
    RLVR_TRY(read_public_tests(r, root));
    RLVR_TRY(read_hidden_tests(r, root));
    RLVR_TRY(get_list(r, root, "", "FAIL_TO_PASS", true, true, true, &t->fail_to_pass));
    RLVR_TRY(get_list(r, root, "", "PASS_TO_PASS", true, false, true, &t->pass_to_pass));
    RLVR_TRY(get_string(r, root, "", "reference_patch", true, true, &t->reference_patch));
    if (!looks_like_patch(t->reference_patch))
        return field_error(r, "reference_patch", "is not a unified diff (needs ---, +++ and @@ lines)");
    RLVR_TRY(get_list(r, root, "", "wrong_patches", false, false, false, &t->wrong_patches));
    for (size_t i = 0; i < t->wrong_patches.n; i++)
        if (!looks_like_patch(t->wrong_patches.items[i]))
            return field_error(r, "wrong_patches", "item %zu is not a unified diff (needs ---, +++ and @@ lines)", i);
    RLVR_TRY(get_list(r, root, "", "protected_paths", false, false, false, &t->protected_paths));
    RLVR_TRY(get_list(r, root, "", "editable_paths", false, true, false, &t->editable_paths));
    RLVR_TRY(read_network(r, root));
    RLVR_TRY(read_environment(r, root));
    if (t->editable_paths.n == 0) {
        t->editable_derived = true;
        return rlvr_task_editable_from_patch(t->reference_patch, &t->editable_paths);
    }
    return 0;
}

static int get_int(const reader *r, json_t *obj, const char *prefix, const char *key, int64_t min, int64_t max,
                   int64_t *out, bool required) {
    char field[256];
    snprintf(field, sizeof field, "%s%s", prefix, key);
    json_t *v = json_object_get(obj, key);
    if (!v) return required ? field_error(r, field, "missing") : 0;
    if (!json_is_integer(v)) return field_error(r, field, "must be an integer, not %s", json_kind(v));
    int64_t x = json_integer_value(v);
    if (x < min || x > max)
        return field_error(r, field, "is %lld, must be between %lld and %lld", (long long)x, (long long)min,
                           (long long)max);
    *out = x;
    return 0;
}

static int read_arith_verifier(const reader *r, json_t *root) {
    rlvr_task *t = r->task;
    json_t *a = json_object_get(root, "arith");
    if (!a) return field_error(r, "arith", "missing");
    if (!json_is_object(a)) return field_error(r, "arith", "must be an object, not %s", json_kind(a));
    static const char *const keys[] = {"kind", "expression", "numbers", "target", NULL};
    RLVR_TRY(check_keys(r, a, "arith.", keys));
    char *kind = NULL;
    RLVR_TRY(get_string(r, a, "arith.", "kind", true, true, &kind));
    int rc = rlvr_arith_kind_parse(kind, &t->arith.kind);
    free(kind);
    if (rc < 0) return field_error(r, "arith.kind", "must be evaluate|countdown");
    RLVR_TRY(get_int(r, a, "arith.", "target", INT64_MIN, INT64_MAX, &t->arith.target, true));
    if (t->arith.kind == RLVR_ARITH_EVALUATE) {
        if (json_object_get(a, "numbers")) return field_error(r, "arith.numbers", "is for kind \"countdown\" only");
        char *expr = NULL;
        RLVR_TRY(get_string(r, a, "arith.", "expression", true, true, &expr));
        size_t n = strlen(expr);
        if (n < RLVR_ARITH_EXPR_CAP) memcpy(t->arith.expression, expr, n + 1);
        free(expr);
        if (n >= RLVR_ARITH_EXPR_CAP)
            return field_error(r, "arith.expression", "is longer than %d bytes", RLVR_ARITH_EXPR_CAP - 1);
    } else {
        if (json_object_get(a, "expression"))
            return field_error(r, "arith.expression", "is for kind \"evaluate\" only");
        json_t *nums = json_object_get(a, "numbers");
        if (!nums) return field_error(r, "arith.numbers", "missing");
        if (!json_is_array(nums) || json_array_size(nums) < 2 || json_array_size(nums) > RLVR_ARITH_MAX_NUMBERS)
            return field_error(r, "arith.numbers", "must be an array of 2..%d integers", RLVR_ARITH_MAX_NUMBERS);
        size_t i;
        json_t *item;
        json_array_foreach(nums, i, item) {
            if (!json_is_integer(item) || json_integer_value(item) < 0)
                return field_error(r, "arith.numbers", "item %zu must be a non-negative integer", i);
            t->arith.numbers[i] = json_integer_value(item);
        }
        t->arith.n_numbers = (int32_t)json_array_size(nums);
    }
    if (rlvr_arith_check_problem(&t->arith) < 0) return field_error(r, "arith", "%s", rlvr_error_last());
    RLVR_TRY(get_string(r, root, "", "reference_answer", true, true, &t->reference_answer));
    return get_list(r, root, "", "wrong_answers", false, false, false, &t->wrong_answers);
}

static int read_tools(const reader *r, json_t *root) {
    rlvr_task *t = r->task;
    json_t *v = json_object_get(root, "tools");
    if (!v) {
        t->tools = t->verifier == RLVR_VERIFIER_TESTS ? RLVR_TOOLS_ALL : 0;
        return 0;
    }
    if (!json_is_array(v)) return field_error(r, "tools", "must be an array of tool names, not %s", json_kind(v));
    t->tools = 0;
    size_t i;
    json_t *item;
    json_array_foreach(v, i, item) {
        rlvr_tool_id id;
        if (!json_is_string(item)) return field_error(r, "tools", "item %zu must be a tool name", i);
        if (rlvr_tool_find(json_string_value(item), &id) < 0) return field_error(r, "tools", "%s", rlvr_error_last());
        t->tools |= 1u << id;
    }
    return 0;
}

static int read_budgets(const reader *r, json_t *root) {
    rlvr_task_budgets *b = &r->task->budgets;
    json_t *v = json_object_get(root, "budgets");
    if (!v) return 0;
    if (!json_is_object(v)) return field_error(r, "budgets", "must be an object, not %s", json_kind(v));
    static const char *const keys[] = {"turns", "policy_tokens", "context_tokens", "tool_timeout_s",
                                       "malformed_calls", "verify_timeout_s", NULL};
    RLVR_TRY(check_keys(r, v, "budgets.", keys));
    RLVR_TRY(get_int(r, v, "budgets.", "turns", 1, 1000000, &b->turns, false));
    RLVR_TRY(get_int(r, v, "budgets.", "policy_tokens", 1, INT32_MAX, &b->policy_tokens, false));
    RLVR_TRY(get_int(r, v, "budgets.", "context_tokens", 1, INT32_MAX, &b->context_tokens, false));
    RLVR_TRY(get_int(r, v, "budgets.", "malformed_calls", 1, 1000000, &b->malformed_calls, false));
    json_t *to = json_object_get(v, "tool_timeout_s");
    if (to) {
        if (!json_is_number(to) || !(json_number_value(to) > 0) || json_number_value(to) > 86400)
            return field_error(r, "budgets.tool_timeout_s", "must be a number of seconds in (0, 86400]");
        b->tool_timeout_s = json_number_value(to);
    }
    json_t *vt = json_object_get(v, "verify_timeout_s");
    if (vt) {
        if (!json_is_number(vt) || !(json_number_value(vt) > 0) || json_number_value(vt) > 86400)
            return field_error(r, "budgets.verify_timeout_s", "must be a number of seconds in (0, 86400]");
        b->verify_timeout_s = json_number_value(vt);
    }
    if (b->policy_tokens && b->context_tokens && b->policy_tokens > b->context_tokens)
        return field_error(r, "budgets.policy_tokens", "(%lld) exceeds budgets.context_tokens (%lld)",
                           (long long)b->policy_tokens, (long long)b->context_tokens);
    return 0;
}

static int check_id(const reader *r, const char *id) {
    size_t n = strlen(id);
    if (n == 0 || n >= 64) return field_error(r, "id", "\"%s\" must be 1..63 bytes long", id);
    for (const char *c = id; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.' ||
              *c == '_' || *c == '-'))
            return field_error(r, "id", "\"%s\" may hold only letters, digits, '.', '_' and '-'", id);
    return 0;
}

/* ---- times ("created_at") -------------------------------------------------- */

static bool digits(const char *s, int n, int *out) {
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

int rlvr_task_time_parse(const char *text, int64_t *out) {
    int y, mo, d, h = 0, mi = 0, sec = 0, off = 0;
    const char *p = text;
    if (!digits(p, 4, &y) || p[4] != '-' || !digits(p + 5, 2, &mo) || p[7] != '-' || !digits(p + 8, 2, &d))
        return RLVR_EINVAL;
    p += 10;
    if (*p == 'T' || *p == ' ') {
        if (!digits(p + 1, 2, &h) || p[3] != ':' || !digits(p + 4, 2, &mi) || p[6] != ':' || !digits(p + 7, 2, &sec))
            return RLVR_EINVAL;
        p += 9;
        if (*p == '.')
            for (p++; *p >= '0' && *p <= '9'; p++) {}
        int oh, om;
        if (*p == 'Z') p++;
        else if ((*p == '+' || *p == '-') && digits(p + 1, 2, &oh) && p[3] == ':' && digits(p + 4, 2, &om)) {
            off = (*p == '-' ? -1 : 1) * (oh * 3600 + om * 60);
            p += 6;
        }
    }
    if (*p || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return RLVR_EINVAL;
    /* days from the civil date (proleptic Gregorian), no time zone database */
    int yy = mo <= 2 ? y - 1 : y;
    int64_t era = (yy >= 0 ? yy : yy - 399) / 400;
    int64_t yoe = yy - era * 400, doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t days = era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
    *out = days * 86400 + h * 3600 + mi * 60 + sec - off;
    return 0;
}

void rlvr_task_time_format(int64_t t, char out[21]) {
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(out, 21, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int read_created_at(const reader *r, json_t *root) {
    char *s = NULL;
    RLVR_TRY(get_string(r, root, "", "created_at", false, true, &s));
    if (!s) return 0;
    int rc = rlvr_task_time_parse(s, &r->task->created_at);
    if (rc < 0)
        rc = field_error(r, "created_at", "is \"%s\"; write a UTC time as 2019-03-04T12:30:00Z (or a date, 2019-03-04)",
                         s);
    else r->task->has_created_at = true;
    free(s);
    return rc;
}

static const char *const top_keys[] = {
    "format",         "id",           "family",       "template",        "split",         "split_key",
    "verifier",       "prompt",       "repository",   "base_commit",     "public_tests",  "hidden_tests",
    "FAIL_TO_PASS",   "PASS_TO_PASS", "reference_patch", "wrong_patches", "protected_paths", "editable_paths",
    "network",        "environment",  "arith",          "reference_answer", "wrong_answers", "tools",     "budgets",
    "metadata",       "created_at",   NULL,
};

/* Fields that belong to one verifier only. */
static const char *const tests_only[] = {"repository",   "base_commit",     "public_tests",  "hidden_tests",
                                         "FAIL_TO_PASS", "PASS_TO_PASS",    "reference_patch", "wrong_patches",
                                         "protected_paths", "editable_paths", "network", "environment", NULL};
static const char *const arith_only[] = {"arith", "reference_answer", "wrong_answers", NULL};

static int read_root(const reader *r, json_t *root) {
    rlvr_task *t = r->task;
    if (!json_is_object(root))
        return rlvr_error_set(RLVR_EFORMAT, "task spec %s: must be a JSON object, not %s", r->source, json_kind(root));
    RLVR_TRY(check_keys(r, root, "", top_keys));
    char *s = NULL;
    RLVR_TRY(get_string(r, root, "", "format", true, true, &s));
    int bad_format = strcmp(s, RLVR_TASK_FORMAT) != 0;
    if (bad_format) field_error(r, "format", "is \"%s\"; this rlvr reads \"%s\"", s, RLVR_TASK_FORMAT);
    free(s);
    if (bad_format) return RLVR_EFORMAT;
    RLVR_TRY(get_string(r, root, "", "id", true, true, &t->id));
    RLVR_TRY(check_id(r, t->id));
    RLVR_TRY(get_string(r, root, "", "family", true, true, &t->family));
    RLVR_TRY(get_string(r, root, "", "template", false, true, &t->template_name));
    RLVR_TRY(get_string(r, root, "", "split", true, true, &s));
    int rc = rlvr_split_parse(s, &t->split);
    if (rc < 0) rc = field_error(r, "split", "must be train|eval|regression, not \"%s\" (did you mean \"%s\"?)", s,
                                 closest_split(s));
    free(s);
    RLVR_TRY(rc);
    RLVR_TRY(get_string(r, root, "", "split_key", true, true, &t->split_key));
    RLVR_TRY(get_string(r, root, "", "verifier", false, true, &s));
    if (s && strcmp(s, "arith") == 0) t->verifier = RLVR_VERIFIER_ARITH;
    else if (s && strcmp(s, "tests") != 0) rc = field_error(r, "verifier", "is \"%s\", must be tests|arith", s);
    free(s);
    RLVR_TRY(rc);
    RLVR_TRY(get_string(r, root, "", "prompt", true, true, &t->prompt));
    const char *const *foreign = t->verifier == RLVR_VERIFIER_TESTS ? arith_only : tests_only;
    for (const char *const *f = foreign; *f; f++)
        if (json_object_get(root, *f))
            return field_error(r, *f, "is not used by verifier \"%s\"",
                               t->verifier == RLVR_VERIFIER_TESTS ? "tests" : "arith");
    RLVR_TRY(t->verifier == RLVR_VERIFIER_TESTS ? read_tests_verifier(r, root) : read_arith_verifier(r, root));
    RLVR_TRY(read_tools(r, root));
    RLVR_TRY(read_budgets(r, root));
    RLVR_TRY(read_created_at(r, root));
    json_t *meta = json_object_get(root, "metadata");
    if (meta) {
        if (!json_is_object(meta)) return field_error(r, "metadata", "must be an object, not %s", json_kind(meta));
        t->metadata_json = json_dumps(meta, JSON_COMPACT | JSON_SORT_KEYS);
        if (!t->metadata_json) return no_memory();
    }
    return 0;
}

int rlvr_task_parse(rlvr_task **out, const char *text, size_t len, const char *source, const char *base_dir) {
    *out = NULL;
    rlvr_task *t = calloc(1, sizeof *t);
    if (!t) return no_memory();
    t->source = strdup(source);
    t->base_dir = strdup(base_dir ? base_dir : ".");
    if (!t->source || !t->base_dir) {
        rlvr_task_free(t);
        return no_memory();
    }
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    int rc;
    if (!root)
        rc = rlvr_error_set(RLVR_EFORMAT, "task spec %s: not valid JSON at line %d column %d: %s", source, jerr.line,
                            jerr.column, jerr.text);
    else {
        reader r = {t->source, t};
        rc = read_root(&r, root);
    }
    json_decref(root);
    if (rc < 0) {
        rlvr_task_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

static char *dir_of(const char *path) {
    const char *slash = strrchr(path, '/');
    if (!slash) return strdup(".");
    if (slash == path) return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

int rlvr_task_load_file(rlvr_task **out, const char *path) {
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return rlvr_error_set(RLVR_EIO, "task spec %s: cannot open: %s", path, strerror(errno));
    char *text = NULL;
    size_t len = 0, cap = 0;
    int rc = 0;
    for (;;) {
        if (len + 4096 > cap) {
            cap = cap ? cap * 2 : 8192;
            char *grown = realloc(text, cap);
            if (!grown) {
                rc = no_memory();
                break;
            }
            text = grown;
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    if (rc == 0 && ferror(f)) rc = rlvr_error_set(RLVR_EIO, "task spec %s: read failed", path);
    fclose(f);
    char *dir = rc == 0 ? dir_of(path) : NULL;
    if (rc == 0 && !dir) rc = no_memory();
    if (rc == 0) rc = rlvr_task_parse(out, text, len, path, dir);
    free(dir);
    free(text);
    return rc;
}

/* ---- writing ------------------------------------------------------------ */

static int set_new(json_t *obj, const char *key, json_t *value) {
    if (!value || json_object_set_new(obj, key, value) != 0)
        return RLVR_FAIL(RLVR_ENOMEM, "writing a task spec: field \"%s\": out of memory or not UTF-8", key);
    return 0;
}

static json_t *list_json(const rlvr_str_list *l) {
    json_t *a = json_array();
    for (size_t i = 0; a && i < l->n; i++)
        if (json_array_append_new(a, json_string(l->items[i])) != 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

/* "results": {"format": "junit", "path": P} into `section`. */
static int results_json(json_t *section, const char *path) {
    json_t *res = json_object();
    RLVR_TRY(set_new(section, "results", res));
    RLVR_TRY(set_new(res, "format", json_string("junit")));
    return set_new(res, "path", json_string(path));
}

static int tests_json(const rlvr_task *t, json_t *o) {
    RLVR_TRY(set_new(o, "repository", json_string(t->repository)));
    RLVR_TRY(set_new(o, "base_commit", json_string(t->base_commit)));
    json_t *pub = json_object();
    RLVR_TRY(set_new(o, "public_tests", pub));
    RLVR_TRY(set_new(pub, "command", json_string(t->public_test_command)));
    RLVR_TRY(set_new(pub, "files", list_json(&t->public_test_files)));
    if (t->public_results_junit) RLVR_TRY(results_json(pub, t->public_results_junit));
    json_t *hid = json_object();
    RLVR_TRY(set_new(o, "hidden_tests", hid));
    RLVR_TRY(set_new(hid, "root", json_string(t->hidden_root)));
    RLVR_TRY(set_new(hid, "files", list_json(&t->hidden_test_files)));
    if (t->judge_build) {
        json_t *j = json_object();
        RLVR_TRY(set_new(hid, "judge", j));
        RLVR_TRY(set_new(j, "build", json_string(t->judge_build)));
        RLVR_TRY(set_new(j, "run", list_json(&t->judge_run)));
    } else {
        RLVR_TRY(set_new(hid, "command", json_string(t->hidden_test_command)));
    }
    if (t->hidden_build_command) RLVR_TRY(set_new(hid, "build", json_string(t->hidden_build_command)));
    if (t->hidden_results_junit) RLVR_TRY(results_json(hid, t->hidden_results_junit));
    if (t->expected_root) {
        json_t *e = json_object();
        RLVR_TRY(set_new(hid, "results", e));
        RLVR_TRY(set_new(e, "format", json_string("expected")));
        RLVR_TRY(set_new(e, "root", json_string(t->expected_root)));
        RLVR_TRY(set_new(e, "files", list_json(&t->expected_files)));
    }
    RLVR_TRY(set_new(o, "FAIL_TO_PASS", list_json(&t->fail_to_pass)));
    RLVR_TRY(set_new(o, "PASS_TO_PASS", list_json(&t->pass_to_pass)));
    RLVR_TRY(set_new(o, "reference_patch", json_string(t->reference_patch)));
    RLVR_TRY(set_new(o, "wrong_patches", list_json(&t->wrong_patches)));
    RLVR_TRY(set_new(o, "protected_paths", list_json(&t->protected_paths)));
    if (!t->editable_derived) RLVR_TRY(set_new(o, "editable_paths", list_json(&t->editable_paths)));
    if (t->network) RLVR_TRY(set_new(o, "network", json_string("loopback")));
    if (t->environment) {
        json_t *e = json_object();
        RLVR_TRY(set_new(o, "environment", e));
        RLVR_TRY(set_new(e, "image", json_string(t->environment)));
        if (t->environment_workdir) RLVR_TRY(set_new(e, "workdir", json_string(t->environment_workdir)));
        if (t->environment_env.n) {
            json_t *vars = json_object();
            RLVR_TRY(set_new(e, "env", vars));
            for (size_t i = 0; i < t->environment_env.n; i++) {
                const char *entry = t->environment_env.items[i], *eq = strchr(entry, '=');
                char name[256];
                snprintf(name, sizeof name, "%.*s", (int)(eq - entry), entry);
                RLVR_TRY(set_new(vars, name, json_string(eq + 1)));
            }
        }
    }
    return 0;
}

static int arith_json(const rlvr_task *t, json_t *o) {
    json_t *a = json_object();
    RLVR_TRY(set_new(o, "arith", a));
    RLVR_TRY(set_new(a, "kind", json_string(rlvr_arith_kind_name(t->arith.kind))));
    if (t->arith.kind == RLVR_ARITH_EVALUATE) {
        RLVR_TRY(set_new(a, "expression", json_string(t->arith.expression)));
    } else {
        json_t *nums = json_array();
        RLVR_TRY(set_new(a, "numbers", nums));
        for (int i = 0; i < t->arith.n_numbers; i++)
            if (json_array_append_new(nums, json_integer(t->arith.numbers[i])) != 0)
                return RLVR_FAIL(RLVR_ENOMEM, "out of memory writing a task spec");
    }
    RLVR_TRY(set_new(a, "target", json_integer(t->arith.target)));
    RLVR_TRY(set_new(o, "reference_answer", json_string(t->reference_answer)));
    return set_new(o, "wrong_answers", list_json(&t->wrong_answers));
}

static int budgets_json(const rlvr_task *t, json_t *o) {
    const rlvr_task_budgets *b = &t->budgets;
    if (!b->turns && !b->policy_tokens && !b->context_tokens && !(b->tool_timeout_s > 0) && !b->malformed_calls &&
        !(b->verify_timeout_s > 0))
        return 0;
    json_t *j = json_object();
    RLVR_TRY(set_new(o, "budgets", j));
    if (b->turns) RLVR_TRY(set_new(j, "turns", json_integer(b->turns)));
    if (b->policy_tokens) RLVR_TRY(set_new(j, "policy_tokens", json_integer(b->policy_tokens)));
    if (b->context_tokens) RLVR_TRY(set_new(j, "context_tokens", json_integer(b->context_tokens)));
    if (b->tool_timeout_s > 0) RLVR_TRY(set_new(j, "tool_timeout_s", json_real(b->tool_timeout_s)));
    if (b->malformed_calls) RLVR_TRY(set_new(j, "malformed_calls", json_integer(b->malformed_calls)));
    if (b->verify_timeout_s > 0) RLVR_TRY(set_new(j, "verify_timeout_s", json_real(b->verify_timeout_s)));
    return 0;
}

static int task_json(const rlvr_task *t, json_t *o) {
    RLVR_TRY(set_new(o, "format", json_string(RLVR_TASK_FORMAT)));
    RLVR_TRY(set_new(o, "id", json_string(t->id)));
    RLVR_TRY(set_new(o, "family", json_string(t->family)));
    if (t->template_name) RLVR_TRY(set_new(o, "template", json_string(t->template_name)));
    RLVR_TRY(set_new(o, "split", json_string(rlvr_split_name(t->split))));
    RLVR_TRY(set_new(o, "split_key", json_string(t->split_key)));
    RLVR_TRY(set_new(o, "verifier", json_string(t->verifier == RLVR_VERIFIER_TESTS ? "tests" : "arith")));
    RLVR_TRY(set_new(o, "prompt", json_string(t->prompt)));
    RLVR_TRY(t->verifier == RLVR_VERIFIER_TESTS ? tests_json(t, o) : arith_json(t, o));
    json_t *tools = json_array();
    RLVR_TRY(set_new(o, "tools", tools));
    for (int i = 0; i < RLVR_TOOL_COUNT; i++)
        if (t->tools & (1u << i))
            if (json_array_append_new(tools, json_string(rlvr_tool_name((rlvr_tool_id)i))) != 0)
                return RLVR_FAIL(RLVR_ENOMEM, "out of memory writing a task spec");
    RLVR_TRY(budgets_json(t, o));
    if (t->has_created_at) {
        char when[21];
        rlvr_task_time_format(t->created_at, when);
        RLVR_TRY(set_new(o, "created_at", json_string(when)));
    }
    if (t->metadata_json) {
        json_error_t jerr;
        json_t *meta = json_loads(t->metadata_json, 0, &jerr);
        if (!meta) return rlvr_error_set(RLVR_EFORMAT, "task %s: metadata is not valid JSON", t->id);
        RLVR_TRY(set_new(o, "metadata", meta));
    }
    return 0;
}

int rlvr_task_to_json(const rlvr_task *task, int indent, char **out) {
    *out = NULL;
    json_t *o = json_object();
    if (!o) return RLVR_FAIL(RLVR_ENOMEM, "out of memory writing a task spec");
    int rc = task_json(task, o);
    if (rc == 0) {
        size_t flags = indent > 0 ? JSON_INDENT(indent) : JSON_COMPACT;
        *out = json_dumps(o, flags | JSON_REAL_PRECISION(10));
        if (!*out) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory writing a task spec");
    }
    json_decref(o);
    return rc;
}

int rlvr_task_write_file(const rlvr_task *task, const char *path) {
    char *text;
    RLVR_TRY(rlvr_task_to_json(task, 2, &text));
    int rc = rlvr_write_line_atomic(path, text);
    free(text);
    return rc < 0 ? rlvr_error_wrap(rc, "writing task spec %s", path) : 0;
}
