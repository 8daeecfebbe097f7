/* envs/import_harbor.c — `rlvr tasks import harbor`: Harbor task directories
 * (the format of Terminal-Bench) as rlvr tasks (envs/sources.h).
 *
 *   DIR/instruction.md      the prompt
 *   DIR/task.toml           [agent] and [verifier] timeout_sec → budgets;
 *                           [metadata] and the rest → metadata
 *   DIR/environment/        a Dockerfile: its WORKDIR is the workspace, the
 *                           files it COPYs there the initial tree; the image
 *                           itself comes from the user (--image)
 *   DIR/solution/solve.sh   run once in a throwaway workspace: what it
 *                           leaves is the reference patch
 *   DIR/tests/test.sh       the hidden tests; it writes a reward file
 *                           (reward.txt: 1, 0 or a fraction; reward.json:
 *                           {"reward": x}), and only a reward of 1 passes
 *
 * Harbor runs tests from /tests and reads rewards from /logs/verifier; the
 * enclave's root is read-only, so the hidden files lie in the tree at
 * .harbor/tests and those two absolute paths are rewritten in them
 * (docs/TASKS.md "Harbor tasks"). */
#include "envs/sources_internal.h"
#include "core/fs.h"

#include "core/error.h"
#include "core/sys.h"
#include "core/text.h"
#include "enclave/fsutil.h"
#include "enclave/gitrepo.h"
#include "enclave/workspace.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define HARBOR_TESTS ".harbor/tests"
#define HARBOR_LOGS "/tmp/harbor/logs/verifier"

/* The command that runs test.sh and turns its reward file into one TAP
 * result, "reward"; the results descriptor is closed for everything the
 * test script starts. */
static const char harbor_command[] =
    "mkdir -p " HARBOR_LOGS " && rm -f " HARBOR_LOGS "/reward.txt " HARBOR_LOGS "/reward.json; "
    "if command -v bash >/dev/null 2>&1; then bash /work/" HARBOR_TESTS "/test.sh; "
    "else sh /work/" HARBOR_TESTS "/test.sh; fi </dev/null 3>&-; "
    "r=$(head -c 64 " HARBOR_LOGS "/reward.txt 2>/dev/null | tr -d ' \\t\\r\\n'); "
    "[ -n \"$r\" ] || r=$(sed -n 's/.*\"reward\"[[:space:]]*:[[:space:]]*\\([0-9.eE+-]*\\).*/\\1/p' " HARBOR_LOGS
    "/reward.json 2>/dev/null | head -n 1); "
    "case \"$r\" in 1|1.|1.0|1.00|1.000|1.0000) echo 'ok 1 - reward' >&3 ;; *) echo 'not ok 1 - reward' >&3 ;; esac; "
    "echo 1..1 >&3";

typedef struct {
    const rlvr_harbor_import_options *o;
    rlvr_sandbox_host *host;
    const char *out_dir;
    char out_abs[4096];
    FILE *report;
    rlvr_import_summary *sum;
} harbor;

static int refuse(const char *file, const char *field, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int refuse(const char *file, const char *field, const char *fmt, ...) {
    char what[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return rlvr_error_set(RLVR_EFORMAT, "harbor task %s%s%s%s: %s", file, field ? ": \"" : "", field ? field : "",
                          field ? "\"" : "", what);
}

/* ---- task.toml: the subset Harbor writes ----------------------------------------- */

/* A TOML scalar or one-line array of scalars; *end past it. NULL when the
 * value is none of those. */
static json_t *toml_value(const char *s, const char **end) {
    while (*s == ' ' || *s == '\t') s++;
    if (*s == '"' || *s == '\'') {
        char q = *s++;
        char buf[4096];
        size_t n = 0;
        for (; *s && *s != q && n + 1 < sizeof buf; s++) {
            if (q == '"' && *s == '\\' && s[1]) {
                s++;
                buf[n++] = *s == 'n' ? '\n' : *s == 't' ? '\t' : *s;
            } else buf[n++] = *s;
        }
        if (*s != q) return NULL;
        buf[n] = '\0';
        *end = s + 1;
        return json_string(buf);
    }
    if (*s == '[') {
        json_t *a = json_array();
        s++;
        for (;;) {
            while (*s == ' ' || *s == '\t' || *s == ',') s++;
            if (*s == ']') {
                *end = s + 1;
                return a;
            }
            json_t *v = toml_value(s, &s);
            if (!v) {
                json_decref(a);
                return NULL;
            }
            json_array_append_new(a, v);
        }
    }
    if (strncmp(s, "true", 4) == 0 || strncmp(s, "false", 5) == 0) {
        *end = s + (s[0] == 't' ? 4 : 5);
        return json_boolean(s[0] == 't');
    }
    char *e;
    double d = strtod(s, &e);
    if (e == s) return NULL;
    *end = e;
    bool integral = !memchr(s, '.', (size_t)(e - s)) && !memchr(s, 'e', (size_t)(e - s)) &&
                    !memchr(s, 'E', (size_t)(e - s));
    return integral ? json_integer((json_int_t)d) : json_real(d);
}

static int toml_read(const char *path, json_t **out) {
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    RLVR_TRY(rlvr_fs_read_file(path, &text, &len));
    json_t *root = json_object(), *section = root;
    int rc = 0, line_no = 0;
    for (char *line = text, *next; rc == 0 && line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        line_no++;
        while (isspace((unsigned char)*line)) line++;
        if (*line == '#' || *line == '\0') continue;
        if (*line == '[') {
            char *close = strchr(line, ']');
            if (!close || line[1] == '[') {
                rc = rlvr_error_set(RLVR_EFORMAT, "%s:%d: a section header this reader does not take", path, line_no);
                break;
            }
            *close = '\0';
            section = json_object_get(root, line + 1);
            if (!section) json_object_set_new(root, line + 1, section = json_object());
            continue;
        }
        char *eq = strchr(line, '=');
        if (!eq) {
            rc = rlvr_error_set(RLVR_EFORMAT, "%s:%d: expected KEY = VALUE", path, line_no);
            break;
        }
        char *k_end = eq;
        while (k_end > line && isspace((unsigned char)k_end[-1])) k_end--;
        *k_end = '\0';
        const char *after;
        json_t *v = toml_value(eq + 1, &after);
        while (v && (*after == ' ' || *after == '\t')) after++;
        if (!v || (*after && *after != '#')) {
            json_decref(v);
            rc = rlvr_error_set(RLVR_EFORMAT, "%s:%d: the value of %s is not a string, number, boolean or one-line array",
                                path, line_no, line);
            break;
        }
        json_object_set_new(section, line, v);
    }
    free(text);
    if (rc < 0) json_decref(root);
    else *out = root;
    return rc;
}

/* ---- the environment's Dockerfile ---------------------------------------------------- */

typedef struct {
    char workdir[1024];   /* "" when the Dockerfile sets none */
    rlvr_str_list copies; /* "SRC\tDEST-relative-to-workdir" pairs into the initial tree */
} dockerfile;

/* rel against base; "" when it does not fit */
static void join_path(char *out, size_t cap, const char *base, const char *rel) {
    int n = rel[0] == '/' ? snprintf(out, cap, "%s", rel)
                          : snprintf(out, cap, "%s/%s", strcmp(base, "/") == 0 ? "" : base, rel);
    if (n < 0 || (size_t)n >= cap) out[0] = '\0';
}

/* COPY/ADD lines whose destination lies in the working directory. */
static int dockerfile_copy(dockerfile *d, char *args) {
    char *words[64];
    int n = 0;
    for (char *w = strtok(args, " \t"); w && n < 64; w = strtok(NULL, " \t"))
        if (strncmp(w, "--", 2) == 0) {
            if (strncmp(w, "--from=", 7) == 0) return 0; /* another stage's files */
        } else words[n++] = w;
    if (n < 2) return 0;
    char dest[2048];
    join_path(dest, sizeof dest, d->workdir[0] ? d->workdir : "/", words[n - 1]);
    size_t wl = strlen(d->workdir);
    const char *rel = NULL;
    if (wl && strncmp(dest, d->workdir, wl) == 0 && (dest[wl] == '/' || dest[wl] == '\0'))
        rel = dest[wl] ? dest + wl + 1 : "";
    if (!rel) return 0;
    for (int i = 0; i < n - 1; i++) {
        char pair[4200];
        snprintf(pair, sizeof pair, "%s\t%s", words[i], rel);
        RLVR_TRY(rlvr_str_list_add_unique(&d->copies, pair));
    }
    return 0;
}

static int dockerfile_read(const char *path, dockerfile *d) {
    char *text = NULL;
    size_t len = 0;
    RLVR_TRY(rlvr_fs_read_file(path, &text, &len));
    /* continuation lines joined */
    for (char *c = text; (c = strstr(c, "\\\n"));) c[0] = c[1] = ' ';
    int rc = 0;
    for (char *line = text, *next; rc == 0 && line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        while (isspace((unsigned char)*line)) line++;
        if (strncasecmp(line, "WORKDIR", 7) == 0 && isspace((unsigned char)line[7])) {
            char *w = line + 8;
            while (isspace((unsigned char)*w)) w++;
            char *e = w + strlen(w);
            while (e > w && isspace((unsigned char)e[-1])) *--e = '\0';
            char joined[1024];
            join_path(joined, sizeof joined, d->workdir[0] ? d->workdir : "/", w);
            snprintf(d->workdir, sizeof d->workdir, "%s", joined);
        } else if ((strncasecmp(line, "COPY", 4) == 0 || strncasecmp(line, "ADD", 3) == 0) &&
                   isspace((unsigned char)line[line[0] == 'A' || line[0] == 'a' ? 3 : 4]))
            rc = dockerfile_copy(d, line + (line[0] == 'A' || line[0] == 'a' ? 3 : 4));
    }
    free(text);
    return rc;
}

/* ---- one task directory ------------------------------------------------------------------ */

typedef struct {
    char id[64], dir[4096], repo_rel[256], repo_abs[4400], hidden_rel[256], hidden_abs[4400];
    char base_hex[41];
    char *prompt, *reference;
    json_t *toml, *environment;
    dockerfile docker;
    rlvr_str_list hidden;
} harbor_task;

static void harbor_task_free(harbor_task *t) {
    free(t->prompt);
    free(t->reference);
    json_decref(t->toml);
    json_decref(t->environment);
    rlvr_str_list_clear(&t->docker.copies);
    rlvr_str_list_clear(&t->hidden);
}

static bool is_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Copies one regular file, rewriting Harbor's absolute paths in text files
 * when `rewrite` is set. */
static int copy_file(const char *from, const char *to, bool rewrite) {
    char *data = NULL;
    size_t len = 0;
    RLVR_TRY(rlvr_fs_read_file(from, &data, &len));
    char dir[4400];
    rlvr_fs_dirname(dir, sizeof dir, to);
    int rc = rlvr_mkdir_p(dir, 0755);
    rlvr_text out = {0};
    bool text = !memchr(data, '\0', len);
    for (size_t i = 0; rc == 0 && i < len;) {
        static const char logs[] = "/logs/verifier", tests[] = "/tests/";
        bool boundary = i == 0 || strchr(" \t\n\"'=(:", data[i - 1]);
        if (rewrite && text && boundary && len - i >= sizeof logs - 1 && memcmp(data + i, logs, sizeof logs - 1) == 0) {
            rlvr_text_printf(&out, "%s", HARBOR_LOGS);
            i += sizeof logs - 1;
        } else if (rewrite && text && boundary && len - i >= sizeof tests - 1 &&
                   memcmp(data + i, tests, sizeof tests - 1) == 0) {
            rlvr_text_printf(&out, "/work/%s/", HARBOR_TESTS);
            i += sizeof tests - 1;
        } else rlvr_text_append(&out, data + i++, 1);
    }
    if (rc == 0 && out.failed) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    if (rc == 0) rc = rlvr_fs_write_file(to, out.data ? out.data : "", out.len);
    struct stat st;
    if (rc == 0 && stat(from, &st) == 0 && (st.st_mode & 0111)) chmod(to, 0755);
    rlvr_text_free(&out);
    free(data);
    return rc;
}

/* Copies the tree under `from` (a file or a directory) to `to`; `rel` the
 * path under the tests directory, for the hidden-file list. */
static int copy_tree(const char *from, const char *to, bool rewrite, const char *rel, rlvr_str_list *files) {
    struct stat st;
    if (lstat(from, &st) != 0) return rlvr_error_set(RLVR_EIO, "%s: %s", from, strerror(errno));
    if (S_ISREG(st.st_mode)) {
        if (files) {
            char path[4400];
            snprintf(path, sizeof path, "%s/%s", HARBOR_TESTS, rel);
            RLVR_TRY(rlvr_str_list_add_unique(files, path));
        }
        return copy_file(from, to, rewrite);
    }
    if (!S_ISDIR(st.st_mode)) return 0; /* links and devices stay out */
    DIR *d = opendir(from);
    if (!d) return rlvr_error_set(RLVR_EIO, "%s: %s", from, strerror(errno));
    char **names = NULL;
    size_t n = 0;
    int rc = rlvr_fs_sorted_names(d, &names, &n);
    closedir(d);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char a[4400], b[4400], r[4400];
        snprintf(a, sizeof a, "%s/%s", from, names[i]);
        snprintf(b, sizeof b, "%s/%s", to, names[i]);
        snprintf(r, sizeof r, "%s%s%s", rel, rel[0] ? "/" : "", names[i]);
        rc = copy_tree(a, b, rewrite, r, files);
    }
    rlvr_fs_free_names(names, n);
    return rc;
}

static int read_text(const char *path, char **out) {
    size_t len;
    RLVR_TRY(rlvr_fs_read_file(path, out, &len));
    while (len && isspace((unsigned char)(*out)[len - 1])) (*out)[--len] = '\0';
    return 0;
}

/* The initial tree: the files the Dockerfile copies into its working
 * directory, as one commit. */
static int make_repository(harbor_task *t) {
    RLVR_TRY(rlvr_mkdir_p(t->repo_abs, 0755));
    for (size_t i = 0; i < t->docker.copies.n; i++) {
        char src[4400], rel[2048], dst[8800];
        char *pair = t->docker.copies.items[i], *tab = strchr(pair, '\t');
        snprintf(src, sizeof src, "%s/environment/%.*s", t->dir, (int)(tab - pair), pair);
        snprintf(rel, sizeof rel, "%s", strcmp(tab + 1, ".") == 0 ? "" : tab + 1);
        bool into_dir = rel[0] == '\0' || rel[strlen(rel) - 1] == '/';
        size_t rl = strlen(rel);
        while (rl && rel[rl - 1] == '/') rel[--rl] = '\0';
        struct stat st;
        if (stat(src, &st) != 0) continue; /* a URL, or a file outside the build context */
        /* Docker's rules: a directory's contents go to the destination; a
         * file goes into it when it is a directory ("dir/", "."), else it
         * is the destination */
        if (S_ISREG(st.st_mode) && into_dir)
            snprintf(dst, sizeof dst, "%s%s%s/%s", t->repo_abs, rel[0] ? "/" : "", rel, strrchr(src, '/') + 1);
        else snprintf(dst, sizeof dst, "%s%s%s", t->repo_abs, rel[0] ? "/" : "", rel);
        RLVR_TRY(copy_tree(src, dst, false, "", NULL));
    }
    return rlvr_git_init_commit_all(t->repo_abs, "base\n", t->base_hex);
}

/* solve.sh in a throwaway workspace: what it leaves is the reference. */
static int make_reference(const harbor *h, harbor_task *t, const char *image, const char *workdir) {
    char *solve = NULL, path[4400];
    snprintf(path, sizeof path, "%s/solution/solve.sh", t->dir);
    RLVR_TRY(read_text(path, &solve));
    rlvr_workspace_spec spec = {.version = RLVR_WORKSPACE_SPEC_VERSION, .repo_dir = t->repo_abs,
                                .base_commit = t->base_hex, .environment = image, .workdir = workdir};
    rlvr_sandbox_limits_default(&spec.limits);
    rlvr_workspace *ws = NULL;
    rlvr_sandbox_result res = {0};
    rlvr_extract_result ex = {0};
    const char *argv[] = {"/bin/sh", "-c", solve, NULL};
    rlvr_sandbox_cmd cmd = {.version = RLVR_SANDBOX_CMD_VERSION, .argv = argv, .wall_s = 600};
    int rc = rlvr_workspace_new(&ws, h->host, &spec);
    if (rc == 0) rc = rlvr_sandbox_exec(rlvr_workspace_sandbox(ws), &cmd, &res);
    if (rc == 0 && (res.exit_code != 0 || res.limit != RLVR_LIMIT_NONE))
        rc = refuse(path, NULL, "exits %d%s%s in a fresh workspace; its output ends: %.300s", res.exit_code,
                    res.limit ? ", " : "", res.limit ? rlvr_sandbox_limit_name(res.limit) : "",
                    res.out && res.out_len > 300 ? res.out + res.out_len - 300 : res.out ? res.out : "");
    if (rc == 0) rc = rlvr_workspace_extract(ws, &ex);
    if (rc == 0 && ex.reason != 0) rc = refuse(path, NULL, "leaves a change the workspace cannot carry out");
    if (rc == 0 && (!ex.patch || !ex.patch[0])) rc = refuse(path, NULL, "changes nothing in the working directory");
    if (rc == 0 && !(t->reference = strdup(ex.patch))) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    rlvr_extract_result_free(&ex);
    rlvr_sandbox_result_free(&res);
    rlvr_workspace_free(ws);
    free(solve);
    return rc;
}

static json_t *budgets_of(const json_t *toml) {
    json_t *b = json_object();
    double agent = json_number_value(json_object_get(json_object_get(toml, "agent"), "timeout_sec"));
    double verifier = json_number_value(json_object_get(json_object_get(toml, "verifier"), "timeout_sec"));
    if (agent > 0) json_object_set_new(b, "tool_timeout_s", json_real(agent > 86400 ? 86400 : agent));
    if (verifier > 0) json_object_set_new(b, "verify_timeout_s", json_real(verifier > 86400 ? 86400 : verifier));
    if (json_object_size(b) == 0) {
        json_decref(b);
        return NULL;
    }
    return b;
}

/* The required files, the environment (an image for a Dockerfile). */
static int read_task_dir(const harbor *h, harbor_task *t) {
    char path[4400];
    const char *required[] = {"instruction.md", "task.toml", "tests/test.sh", "solution/solve.sh"};
    for (size_t i = 0; i < sizeof required / sizeof *required; i++) {
        snprintf(path, sizeof path, "%s/%s", t->dir, required[i]);
        if (!is_file(path)) return refuse(t->dir, required[i], "missing (a Harbor task has instruction.md, task.toml, "
                                                               "tests/test.sh and solution/solve.sh)");
    }
    snprintf(path, sizeof path, "%s/instruction.md", t->dir);
    RLVR_TRY(read_text(path, &t->prompt));
    if (!t->prompt[0]) return refuse(path, NULL, "is empty: it is the task's prompt");
    snprintf(path, sizeof path, "%s/task.toml", t->dir);
    RLVR_TRY(toml_read(path, &t->toml));
    snprintf(path, sizeof path, "%s/environment/Dockerfile", t->dir);
    if (is_file(path)) {
        RLVR_TRY(dockerfile_read(path, &t->docker));
        if (!h->o->image)
            return refuse(path, NULL, "the task's environment is a Dockerfile, which rlvr does not build: give the "
                                      "image built from it (--image IMAGE: a root directory, SquashFS or SIF file)");
        const char *wd = t->docker.workdir[0] && strcmp(t->docker.workdir, "/") != 0 ? t->docker.workdir : "/work";
        t->environment = json_pack("{s:s, s:s}", "image", h->o->image, "workdir", wd);
    } else {
        snprintf(path, sizeof path, "%s/environment", t->dir);
        struct stat st;
        if (stat(path, &st) == 0)
            return refuse(path, NULL, "holds no Dockerfile: rlvr takes a task whose environment is a Dockerfile "
                                      "(with --image) or a task without one");
    }
    return 0;
}

static json_t *task_metadata(const harbor_task *t) {
    json_t *meta = json_object();
    json_object_set_new(meta, "source", json_string("harbor"));
    json_object_set_new(meta, "harbor_dir", json_string(t->dir));
    const char *key;
    json_t *v;
    json_object_foreach(t->toml, key, v) json_object_set(meta, key, v); /* [metadata], [agent], [verifier], ... */
    return meta;
}

static int import_task(harbor *h, harbor_task *t) {
    RLVR_TRY(read_task_dir(h, t));
    struct stat st;
    char spec_path[4400];
    snprintf(spec_path, sizeof spec_path, "%s/%s.json", h->out_abs, t->id);
    if (lstat(spec_path, &st) == 0 || lstat(t->repo_abs, &st) == 0 || lstat(t->hidden_abs, &st) == 0)
        return refuse(t->dir, NULL, "task %s exists already in %s; nothing is overwritten", t->id, h->out_dir);
    const char *image = t->environment ? json_string_value(json_object_get(t->environment, "image")) : NULL;
    const char *workdir = t->environment ? json_string_value(json_object_get(t->environment, "workdir")) : NULL;
    char tests_dir[4400], hidden_tests[8800];
    snprintf(tests_dir, sizeof tests_dir, "%s/tests", t->dir);
    snprintf(hidden_tests, sizeof hidden_tests, "%s/%s", t->hidden_abs, HARBOR_TESTS);
    int rc = make_repository(t);
    if (rc == 0) rc = make_reference(h, t, image, workdir);
    if (rc == 0) rc = copy_tree(tests_dir, hidden_tests, true, "", &t->hidden);
    rlvr_repo_facts facts = {.test_command = (char *)harbor_command, .wall_s = 600};
    static const char *const f2p_names[] = {"reward"};
    rlvr_str_list f2p = {(char **)f2p_names, 1}, none = {0};
    json_t *meta = task_metadata(t), *budgets = budgets_of(t->toml);
    char *env_text = t->environment ? json_dumps(t->environment, JSON_COMPACT) : NULL;
    source_task st_ = {.id = t->id, .family = "harbor", .split_key = t->id, .prompt = t->prompt,
                       .split = h->o->split, .repository = t->repo_rel, .base_commit = t->base_hex,
                       .hidden_root = t->hidden_rel, .hidden_files = &t->hidden, .public_files = &none,
                       .fail_to_pass = &f2p, .pass_to_pass = &none, .reference_patch = t->reference,
                       .test_command = harbor_command, .environment_json = env_text, .metadata = meta,
                       .budgets = budgets};
    json_t *spec = rc == 0 ? source_task_json(&st_, &facts) : NULL;
    if (rc == 0 && !spec) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    if (spec) {
        /* nothing public to run: the tests are the hidden ones */
        json_object_set_new(json_object_get(spec, "public_tests"), "command",
                            json_string("echo 'this task has no public tests'"));
        json_object_set_new(spec, "tools", json_pack("[s,s,s,s,s,s,s]", "list_files", "read_file", "search",
                                                     "replace_in_file", "write_file", "run", "submit"));
        json_object_set_new(spec, "protected_paths", json_pack("[s]", "/.harbor"));
    }
    rlvr_task *check = NULL;
    if (rc == 0 && source_task_parse(&check, spec, t->dir, h->out_abs) < 0) rc = refuse(t->dir, NULL, "%s", rlvr_error_last());
    rlvr_task_free(check);
    if (rc == 0) rc = source_task_write(spec, h->out_abs, t->id);
    json_decref(spec);
    json_decref(meta);
    json_decref(budgets);
    free(env_text);
    return rc;
}

static int import_dir(harbor *h, const char *dir) {
    harbor_task t = {0};
    char trimmed[4096];
    snprintf(trimmed, sizeof trimmed, "%s", dir);
    size_t n = strlen(trimmed);
    while (n > 1 && trimmed[n - 1] == '/') trimmed[--n] = '\0';
    snprintf(t.dir, sizeof t.dir, "%s", trimmed);
    const char *base = strrchr(trimmed, '/') ? strrchr(trimmed, '/') + 1 : trimmed;
    char clean[64];
    source_clean_name(clean, sizeof clean, base);
    snprintf(t.id, sizeof t.id, "harbor-%.55s", clean);
    snprintf(t.repo_rel, sizeof t.repo_rel, "repos/%s", t.id);
    snprintf(t.repo_abs, sizeof t.repo_abs, "%s/%s", h->out_abs, t.repo_rel);
    snprintf(t.hidden_rel, sizeof t.hidden_rel, "hidden/%s", t.id);
    snprintf(t.hidden_abs, sizeof t.hidden_abs, "%s/%s", h->out_abs, t.hidden_rel);
    struct stat st;
    bool existed = lstat(t.repo_abs, &st) == 0 || lstat(t.hidden_abs, &st) == 0;
    int rc = import_task(h, &t);
    if (rc < 0 && rc != RLVR_ENOMEM && !existed) {
        rlvr_fs_remove_tree(t.repo_abs);
        rlvr_fs_remove_tree(t.hidden_abs);
    }
    json_t *line = json_pack("{s:s, s:s, s:s}", "dir", dir, "id", t.id, "outcome", rc == 0 ? "imported" : "refused");
    if (line && rc < 0) json_object_set_new(line, "reason", json_string(rlvr_error_last()));
    if (h->o->progress) {
        if (rc == 0) fprintf(h->o->progress, "%s imported as %s\n", dir, t.id);
        else fprintf(h->o->progress, "%s refused: %s\n", dir, rlvr_error_last());
        fflush(h->o->progress);
    }
    source_report_line(h->report, line);
    harbor_task_free(&t);
    h->sum->read++;
    if (rc == 0) h->sum->imported++;
    else if (rc != RLVR_ENOMEM) h->sum->refused++;
    return rc == RLVR_ENOMEM ? rc : 0;
}

int rlvr_tasks_import_harbor(const rlvr_harbor_import_options *o, rlvr_sandbox_host *host, const char *out_dir,
                             rlvr_import_summary *out) {
    memset(out, 0, sizeof *out);
    if (!o || o->version != RLVR_HARBOR_IMPORT_OPTIONS_VERSION || !o->dirs || !host)
        return RLVR_FAIL(RLVR_EINVAL, "harbor import: task directories and a sandbox host are needed");
    double t0 = rlvr_now();
    harbor h = {.o = o, .host = host, .out_dir = out_dir, .sum = out};
    int rc = source_pool_open(out_dir, h.out_abs, sizeof h.out_abs);
    if (rc == 0) rc = source_report_open(&h.report, out_dir, "harbor-report.jsonl");
    for (const char *const *d = o->dirs; rc == 0 && *d; d++) rc = import_dir(&h, *d);
    if (h.report) fclose(h.report);
    out->wall_s = rlvr_now() - t0;
    return rc;
}
