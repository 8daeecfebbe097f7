/* envs/harness_tools.c — the agent's tools, executed inside the workspace
 * sandbox (never on host paths).
 *
 * File tools (list_files, read_file, search, replace_in_file, write_file)
 * are the runtime's own code run with rlvr_sandbox_call: a child under the
 * sandbox's isolation that sees the workspace at /work and writes its answer
 * to stdout. Paths are relative to the repository; after symlinks are
 * resolved they must stay inside /work. run and run_public_tests are shell
 * commands (rlvr_sandbox_exec). */
#include "envs/harness_internal.h"

#include "core/error.h"
#include "core/flat.h"
#include "core/text.h"
#include "enclave/junit.h"
#include "enclave/reason.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WORK "/work"

void harness_tool_outcome_free(harness_tool_outcome *o) {
    free(o->text);
    memset(o, 0, sizeof *o);
}

/* ---- inside the sandbox ----------------------------------------------------------- */

/* "/work/<rel>" when rel is a plain relative path; 1 with a message otherwise. */
static int join_path(char *out, size_t cap, const char *rel) {
    if (!rel || !*rel) rel = ".";
    if (rel[0] == '/') {
        printf("error: path \"%s\" must be relative to the repository root\n", rel);
        return 1;
    }
    for (const char *p = rel; *p;) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.') {
            printf("error: path \"%s\" must stay inside the repository (no \"..\")\n", rel);
            return 1;
        }
        p += n + (e ? 1 : 0);
        if (!e) break;
    }
    if ((size_t)snprintf(out, cap, WORK "/%s", rel) >= cap) {
        printf("error: path too long\n");
        return 1;
    }
    return 0;
}

static int inside_work(const char *resolved) {
    return strcmp(resolved, WORK) == 0 || strncmp(resolved, WORK "/", strlen(WORK) + 1) == 0;
}

/* An existing path, symlinks resolved, inside /work. */
static int existing_path(char *out, const char *rel) {
    char joined[PATH_MAX];
    if (join_path(joined, sizeof joined, rel)) return 1;
    if (!realpath(joined, out)) {
        printf("error: %s: %s\n", rel && *rel ? rel : ".", strerror(errno));
        return 1;
    }
    if (!inside_work(out)) {
        printf("error: path \"%s\" leads outside the repository\n", rel);
        return 1;
    }
    return 0;
}

static const char *shown(const char *resolved) {
    return strcmp(resolved, WORK) == 0 ? "." : resolved + strlen(WORK) + 1;
}

static char *read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0, got;
    char *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            char *b = realloc(buf, cap *= 2);
            if (!b) free(buf);
            buf = b;
        }
    }
    fclose(f);
    if (buf) buf[n] = '\0';
    *len = n;
    return buf;
}

static int write_all(const char *path, const char *data, size_t len, const char *rel) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);
    if (fd < 0) {
        printf("error: cannot write %s: %s\n", rel, strerror(errno));
        return 1;
    }
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0) {
            if (errno == EINTR) continue;
            printf("error: cannot write %s: %s\n", rel, strerror(errno));
            close(fd);
            return 1;
        }
        off += (size_t)w;
    }
    if (close(fd) != 0) {
        printf("error: cannot write %s: %s\n", rel, strerror(errno));
        return 1;
    }
    return 0;
}

typedef struct {
    char **items;
    size_t n, cap;
} names;

static void names_add(names *l, const char *s) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        char **p = realloc(l->items, cap * sizeof *p);
        if (!p) return;
        l->items = p;
        l->cap = cap;
    }
    char *c = strdup(s);
    if (c) l->items[l->n++] = c;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Every file (and directory, with a trailing '/') under dir, relative to
 * /work, .git skipped, no symlinks followed. */
static void walk(names *out, const char *dir, int depth) {
    if (depth > 32) return;
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, ".git")) continue;
        char p[PATH_MAX];
        if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, e->d_name) >= sizeof p) continue;
        struct stat st;
        if (lstat(p, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            char q[PATH_MAX + 1];
            snprintf(q, sizeof q, "%s/", shown(p));
            names_add(out, q);
            walk(out, p, depth + 1);
        } else {
            names_add(out, shown(p));
        }
    }
    closedir(d);
}

static int tool_list_files(const rlvr_tool_call *c) {
    char path[PATH_MAX];
    if (existing_path(path, c->path)) return 1;
    names l = {0};
    walk(&l, path, 0);
    qsort(l.items, l.n, sizeof *l.items, cmp_str);
    for (size_t i = 0; i < l.n; i++) printf("%s\n", l.items[i]);
    if (l.n == 0) printf("(empty)\n");
    return 0;
}

static int tool_read_file(const rlvr_tool_call *c) {
    char path[PATH_MAX];
    if (existing_path(path, c->path)) return 1;
    size_t len;
    char *text = read_all(path, &len);
    if (!text) {
        printf("error: cannot read %s: %s\n", c->path, strerror(errno));
        return 1;
    }
    int64_t line = 1;
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if ((c->start == 0 || line >= c->start) && (c->end == 0 || line <= c->end))
            printf("%6lld\t%.*s\n", (long long)line, (int)n, p);
        p += n + (nl ? 1 : 0);
        line++;
    }
    if (c->start > 0 && c->start >= line) printf("(the file has %lld lines)\n", (long long)(line - 1));
    free(text);
    return 0;
}

static void search_file(const char *path, const char *pattern, size_t plen, int *hits) {
    size_t len;
    char *text = read_all(path, &len);
    if (!text || memchr(text, '\0', len)) { /* unreadable or binary */
        free(text);
        return;
    }
    int64_t line = 1;
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (memmem(p, n, pattern, plen)) {
            printf("%s:%lld:%.*s\n", shown(path), (long long)line, (int)n, p);
            (*hits)++;
        }
        p += n + (nl ? 1 : 0);
        line++;
    }
    free(text);
}

static int tool_search(const rlvr_tool_call *c) {
    char path[PATH_MAX];
    if (existing_path(path, c->path)) return 1;
    size_t plen = strlen(c->pattern);
    if (plen == 0) {
        printf("error: empty search pattern\n");
        return 1;
    }
    struct stat st;
    int hits = 0;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        names l = {0};
        walk(&l, path, 0);
        qsort(l.items, l.n, sizeof *l.items, cmp_str);
        for (size_t i = 0; i < l.n; i++) {
            size_t n = strlen(l.items[i]);
            if (n && l.items[i][n - 1] == '/') continue;
            char p[PATH_MAX];
            snprintf(p, sizeof p, WORK "/%s", l.items[i]);
            struct stat fs;
            if (lstat(p, &fs) == 0 && S_ISREG(fs.st_mode)) search_file(p, c->pattern, plen, &hits);
        }
    } else {
        search_file(path, c->pattern, plen, &hits);
    }
    if (hits == 0) printf("no matches\n");
    return 0;
}

static int tool_replace(const rlvr_tool_call *c) {
    char path[PATH_MAX];
    if (existing_path(path, c->path)) return 1;
    size_t len;
    char *text = read_all(path, &len);
    if (!text) {
        printf("error: cannot read %s: %s\n", c->path, strerror(errno));
        return 1;
    }
    const char *from = NULL;
    size_t cut = 0;
    if (c->old_text) {
        if (c->old_len == 0) {
            printf("error: \"old\" must not be empty\n");
            free(text);
            return 1;
        }
        int count = 0;
        for (const char *p = text; (p = memmem(p, len - (size_t)(p - text), c->old_text, c->old_len)); p++) {
            if (!from) from = p;
            count++;
        }
        if (count != 1) {
            if (count == 0) printf("error: the \"old\" text does not occur in %s\n", c->path);
            else printf("error: the \"old\" text occurs %d times in %s; give more context to make it unique\n", count, c->path);
            free(text);
            return 1;
        }
        cut = c->old_len;
    } else {
        const char *p = text, *end = text + len;
        for (int64_t line = 1; p < end && line < c->line; line++) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            p = nl ? nl + 1 : end;
        }
        if (p >= end) {
            printf("error: %s has fewer than %lld lines\n", c->path, (long long)c->line);
            free(text);
            return 1;
        }
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        from = p;
        cut = nl ? (size_t)(nl - p) : (size_t)(end - p);
    }
    size_t head = (size_t)(from - text), tail = len - head - cut;
    char *out = malloc(head + c->new_len + tail + 1);
    if (!out) {
        free(text);
        printf("error: out of memory\n");
        return 1;
    }
    memcpy(out, text, head);
    memcpy(out + head, c->new_text, c->new_len);
    memcpy(out + head + c->new_len, from + cut, tail);
    int rc = write_all(path, out, head + c->new_len + tail, c->path);
    if (rc == 0) printf("replaced 1 %s in %s\n", c->old_text ? "occurrence" : "line", c->path);
    free(out);
    free(text);
    return rc;
}

static int tool_write(const rlvr_tool_call *c) {
    char joined[PATH_MAX];
    if (join_path(joined, sizeof joined, c->path)) return 1;
    /* create the parent directories, each checked to stay inside /work */
    for (char *s = strchr(joined + strlen(WORK) + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = '\0';
        char real[PATH_MAX];
        if (mkdir(joined, 0755) != 0 && errno != EEXIST) {
            printf("error: cannot create directory %s: %s\n", shown(joined), strerror(errno));
            return 1;
        }
        if (!realpath(joined, real) || !inside_work(real)) {
            printf("error: path \"%s\" leads outside the repository\n", c->path);
            return 1;
        }
        *s = '/';
    }
    int rc = write_all(joined, c->content, c->content_len, c->path);
    if (rc == 0) printf("wrote %zu bytes to %s\n", c->content_len, c->path);
    return rc;
}

/* A call as file_tool_fn's argument: a flat image (core/flat.h) with this
 * at its root; the strings are offsets, each with its NUL. */
typedef struct {
    rlvr_tool_call call; /* the numbers; its pointers are NULL */
    uint64_t path, pattern, old_text, new_text, content, command;
} flat_call;

static int flatten_call(const rlvr_tool_call *c, rlvr_flat *f) {
    uint64_t root = rlvr_flat_put(f, NULL, sizeof(flat_call));
    flat_call w = {.call = *c};
    w.call.path = w.call.pattern = w.call.old_text = w.call.new_text = w.call.content = w.call.command = NULL;
    w.path = rlvr_flat_str(f, c->path);
    w.pattern = rlvr_flat_str(f, c->pattern);
    w.old_text = c->old_text ? rlvr_flat_put(f, c->old_text, c->old_len + 1) : 0;
    w.new_text = c->new_text ? rlvr_flat_put(f, c->new_text, c->new_len + 1) : 0;
    w.content = c->content ? rlvr_flat_put(f, c->content, c->content_len + 1) : 0;
    w.command = rlvr_flat_str(f, c->command);
    if (f->failed) return RLVR_FAIL(RLVR_ENOMEM, "out of memory for a tool call");
    memcpy(f->data + root, &w, sizeof w);
    return 0;
}

static int file_tool_fn(void *arg) {
    const flat_call *w = rlvr_flat_at(arg, RLVR_FLAT_FIRST);
    rlvr_tool_call call = w->call;
    call.path = rlvr_flat_at(arg, w->path);
    call.pattern = rlvr_flat_at(arg, w->pattern);
    call.old_text = rlvr_flat_at(arg, w->old_text);
    call.new_text = rlvr_flat_at(arg, w->new_text);
    call.content = rlvr_flat_at(arg, w->content);
    call.command = rlvr_flat_at(arg, w->command);
    const rlvr_tool_call *c = &call;
    int rc = 1;
    switch (c->tool) {
    case RLVR_TOOL_LIST_FILES: rc = tool_list_files(c); break;
    case RLVR_TOOL_READ_FILE: rc = tool_read_file(c); break;
    case RLVR_TOOL_SEARCH: rc = tool_search(c); break;
    case RLVR_TOOL_REPLACE_IN_FILE: rc = tool_replace(c); break;
    case RLVR_TOOL_WRITE_FILE: rc = tool_write(c); break;
    default: printf("error: not a file tool\n"); break;
    }
    fflush(stdout);
    return rc;
}

/* ---- the runtime's side ------------------------------------------------------------- */

/* The observation: output cut to out_cap bytes, then a status line for
 * commands. */
static int make_text(harness_tool_outcome *o, const rlvr_sandbox_result *res, int64_t out_cap, bool command,
                     double timeout_s) {
    size_t keep = res->out_len;
    if ((int64_t)keep > out_cap) {
        keep = (size_t)out_cap;
        o->truncated = true;
    }
    if (res->out_truncated) o->truncated = true;
    char tail[160] = "";
    size_t t = 0;
    if (o->truncated) t += (size_t)snprintf(tail, sizeof tail, "%s[output cut to %lld bytes]\n",
                                            keep && res->out[keep - 1] != '\n' ? "\n" : "", (long long)keep);
    if (command) {
        if (res->limit == RLVR_LIMIT_WALL)
            snprintf(tail + t, sizeof tail - t, "[killed: timed out after %g s]", timeout_s);
        else if (res->limit != RLVR_LIMIT_NONE && res->limit != RLVR_LIMIT_OUTPUT)
            snprintf(tail + t, sizeof tail - t, "[killed: %s limit]", rlvr_sandbox_limit_name(res->limit));
        else if (res->exit_code < 0)
            snprintf(tail + t, sizeof tail - t, "[killed by signal %d]", res->signal);
        else
            snprintf(tail + t, sizeof tail - t, "[exit status %d]", res->exit_code);
    }
    size_t tl = strlen(tail);
    bool nl = command && keep && res->out[keep - 1] != '\n' && !o->truncated;
    o->text = malloc(keep + tl + 2);
    if (!o->text) return RLVR_FAIL(RLVR_ENOMEM, "out of memory for a tool observation");
    memcpy(o->text, res->out, keep);
    size_t n = keep;
    if (nl) o->text[n++] = '\n';
    memcpy(o->text + n, tail, tl);
    n += tl;
    o->text[n] = '\0';
    o->len = n;
    o->exit_status = res->limit != RLVR_LIMIT_NONE && res->limit != RLVR_LIMIT_OUTPUT ? -1 : res->exit_code;
    return 0;
}

/* The prepare step of run_public_tests with JUnit results: the file of an
 * earlier run (or one the policy wrote) removed. */
static int public_results_prepare(void *arg) { return rlvr_junit_remove_in_sandbox(arg) == 0 ? 0 : 1; }

/* The public JUnit results after run_public_tests, summed up on one line
 * appended to the observation (counts, then the failing ids, at most 8),
 * and the file removed. */
static int append_public_results(harness_tool_run *run, harness_tool_outcome *out) {
    rlvr_tap_report r;
    memset(&r, 0, sizeof r);
    int rc = rlvr_junit_read(run->sb, run->results, NULL, NULL, &r);
    rlvr_text line = {0};
    if (rc < 0) {
        rlvr_text_printf(&line, "\n[public test results %s: could not be read]", run->results);
    } else if (r.malformed) {
        rlvr_text_printf(&line, "\n[public test results %s: refused (%s)]", run->results,
                         rlvr_reason_name(r.invalid_reason ? r.invalid_reason : RLVR_REASON_RESULTS_INVALID));
    } else if (r.n_tests == 0) {
        rlvr_text_printf(&line, "\n[public test results %s: no tests reported]", run->results);
    } else {
        int passed = 0, failed = 0, skipped = 0;
        for (int i = 0; i < r.n_tests; i++) {
            passed += r.tests[i].status == RLVR_TAP_PASS;
            failed += r.tests[i].status == RLVR_TAP_FAIL;
            skipped += r.tests[i].status == RLVR_TAP_SKIP || r.tests[i].status == RLVR_TAP_TODO;
        }
        rlvr_text_printf(&line, "\n[public test results %s: %d passed, %d failed, %d skipped", run->results, passed,
                         failed, skipped);
        for (int i = 0, shown = 0; i < r.n_tests; i++) {
            if (r.tests[i].status != RLVR_TAP_FAIL) continue;
            if (shown == 8) {
                rlvr_text_printf(&line, ", ...");
                break;
            }
            rlvr_text_printf(&line, "%s%s", shown++ ? ", " : "; failed: ", r.tests[i].name);
        }
        rlvr_text_printf(&line, "]");
    }
    rlvr_tap_report_free(&r);
    /* gone again, so that the file never reaches the rollout's patch */
    rlvr_sandbox_result res;
    if (rc == 0 && rlvr_sandbox_call(run->sb, public_results_prepare, run->results, strlen(run->results) + 1, 10, 0,
                                     &res) == 0)
        rlvr_sandbox_result_free(&res);
    rc = line.data ? 0 : RLVR_FAIL(RLVR_ENOMEM, "out of memory for a tool observation");
    char *grown = rc == 0 ? realloc(out->text, out->len + line.len + 1) : NULL;
    if (rc == 0 && !grown) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory for a tool observation");
    if (rc == 0) {
        memcpy(grown + out->len, line.data, line.len + 1);
        out->text = grown;
        out->len += line.len;
    }
    rlvr_text_free(&line);
    return rc;
}

int harness_tool_start(rlvr_sandbox *sb, const rlvr_task *task, const rlvr_tool_call *call, double timeout_s,
                       harness_tool_run *run) {
    memset(run, 0, sizeof *run);
    if (call->tool == RLVR_TOOL_SUBMIT || (unsigned)call->tool >= RLVR_TOOL_COUNT)
        return RLVR_FAIL(RLVR_EINVAL, "harness: tool %d is not executed", (int)call->tool);
    double t = timeout_s;
    if (call->tool == RLVR_TOOL_RUN && call->timeout_s > 0 && call->timeout_s < t) t = call->timeout_s;
    run->timeout_s = t;
    run->command = call->tool == RLVR_TOOL_RUN || call->tool == RLVR_TOOL_RUN_PUBLIC_TESTS;
    int rc;
    if (run->command) {
        const char *cmdline = call->tool == RLVR_TOOL_RUN ? call->command : task->public_test_command;
        if (!cmdline) return RLVR_FAIL(RLVR_EINVAL, "task %s has no public test command", task->id);
        const char *argv[] = {"/bin/sh", "-c", cmdline, NULL};
        rlvr_sandbox_cmd cmd = {.version = RLVR_SANDBOX_CMD_VERSION, .argv = argv, .wall_s = t};
        if (call->tool == RLVR_TOOL_RUN_PUBLIC_TESTS && task->public_results_junit) {
            /* only what this run writes is summed up */
            run->sb = sb;
            run->results = task->public_results_junit;
            cmd.prepare = public_results_prepare;
            cmd.prepare_arg = run->results;
            cmd.prepare_arg_len = strlen(run->results) + 1;
        }
        rc = rlvr_sandbox_exec_start(sb, &cmd, &run->run);
    } else {
        /* the run gets a copy: the call may go once this returns */
        rlvr_flat f = {0};
        rc = flatten_call(call, &f);
        if (rc == 0) rc = rlvr_sandbox_call_start(sb, file_tool_fn, f.data, f.len, t, 0, &run->run);
        rlvr_flat_free(&f);
    }
    return rc < 0 ? rlvr_error_wrap(rc, "running tool %s", rlvr_tool_name(call->tool)) : 0;
}

int harness_tool_finish(harness_tool_run *run, int64_t out_cap, harness_tool_outcome *out) {
    memset(out, 0, sizeof *out);
    rlvr_sandbox_result res;
    int rc = rlvr_sandbox_run_finish(run->run, &res);
    run->run = NULL;
    if (rc < 0) return rlvr_error_wrap(rc, "running a tool");
    out->duration_s = res.wall_s;
    /* a file tool over its time: say so, like a command */
    bool command = run->command || res.limit == RLVR_LIMIT_WALL;
    rc = make_text(out, &res, out_cap, command, run->timeout_s);
    rlvr_sandbox_result_free(&res);
    if (rc == 0 && run->results) rc = append_public_results(run, out);
    return rc;
}

void harness_tool_abort(harness_tool_run *run) {
    rlvr_sandbox_run_abort(run->run);
    run->run = NULL;
}

int harness_tool_exec(rlvr_sandbox *sb, const rlvr_task *task, const rlvr_tool_call *call, double timeout_s,
                      int64_t out_cap, harness_tool_outcome *out) {
    memset(out, 0, sizeof *out);
    harness_tool_run run;
    RLVR_TRY(harness_tool_start(sb, task, call, timeout_s, &run));
    return harness_tool_finish(&run, out_cap, out);
}
