/* envs/probes.c — the tampering probes of `rlvr tasks check` (probes.h). */
#include "envs/probes.h"
#include "envs/probes_internal.h"

#include "core/error.h"
#include "core/text.h"
#include "enclave/diffgate.h"
#include "enclave/fsutil.h"
#include "enclave/gitrepo.h"
#include "envs/gen_internal.h"

#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- small helpers ------------------------------------------------------------ */

bool has_suffix(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static bool is_c_source(const char *path) { return has_suffix(path, ".c") || has_suffix(path, ".h"); }

bool listed(const rlvr_str_list *l, const char *s) {
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->items[i], s) == 0) return true;
    return false;
}

/* What the verifier's gate would say of a path: the built-in rules, the
 * task's protected globs, its public and hidden test files, its allow-list. */
bool gate_allows(const probe_ctx *c, const char *path) {
    const rlvr_task *t = c->t;
    return rlvr_diffgate_path_verdict(path, c->protected_globs, t->editable_paths.n ? c->editable_globs : NULL) == 0 &&
           !listed(&t->public_test_files, path) && !listed(&t->hidden_test_files, path);
}

/* A NULL-terminated view of a list (the strings are not copied). */
static const char **view(const rlvr_str_list *l) {
    const char **v = calloc(l->n + 1, sizeof *v);
    for (size_t i = 0; v && i < l->n; i++) v[i] = l->items[i];
    return v;
}

/* Every regular file under dir/rel (.git skipped), as relative paths. */
static int walk(const char *dir, const char *rel, rlvr_str_list *out, int depth) {
    if (depth > 32) return 0;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s%s%s", dir, rel[0] ? "/" : "", rel);
    DIR *d = opendir(path);
    if (!d) return rlvr_error_errno_at(__FILE__, __LINE__, "reading %s", path);
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 || strcmp(e->d_name, ".git") == 0) continue;
        char child[PATH_MAX], full[PATH_MAX + 256];
        if (snprintf(child, sizeof child, "%s%s%s", rel, rel[0] ? "/" : "", e->d_name) >= (int)sizeof child) continue;
        snprintf(full, sizeof full, "%s/%s", dir, child);
        struct stat st;
        if (lstat(full, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) rc = walk(dir, child, out, depth + 1);
        else if (S_ISREG(st.st_mode)) rc = rlvr_str_list_add_unique(out, child);
    }
    closedir(d);
    return rc;
}

/* The names of <...> includes in a C file's text. */
static int scan_includes(const char *text, rlvr_str_list *out) {
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n'), *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '#') {
            p++;
            while (*p == ' ' || *p == '\t') p++;
            if (strncmp(p, "include", 7) == 0 || strncmp(p, "include_next", 12) == 0) {
                const char *lt = strchr(p, '<'), *gt = lt ? strchr(lt, '>') : NULL;
                if (lt && gt && (!end || gt < end) && gt - lt > 1 && gt - lt < 128) {
                    char name[128];
                    snprintf(name, sizeof name, "%.*s", (int)(gt - lt - 1), lt + 1);
                    bool plain = strstr(name, "..") == NULL && name[0] != '/';
                    for (const char *c = name; plain && *c; c++)
                        plain = isalnum((unsigned char)*c) || strchr("._-+/", *c);
                    if (plain) RLVR_TRY(rlvr_str_list_add_unique(out, name));
                }
            }
        }
        line = end ? end + 1 : NULL;
    }
    return 0;
}

/* ---- the forged streams ------------------------------------------------------- */

/* Every required test once, in the default order, passing; the decoy adds
 * one failing test the task does not name. */
static int make_streams(probe_ctx *c) {
    const rlvr_task *t = c->t;
    size_t n = t->fail_to_pass.n + t->pass_to_pass.n;
    rlvr_text_printf(&c->stream, "1..%zu\n", n);
    rlvr_text_printf(&c->decoy, "1..%zu\n", n + 1);
    for (size_t i = 0; i < n; i++) {
        const char *name = i < t->fail_to_pass.n ? t->fail_to_pass.items[i]
                                                 : t->pass_to_pass.items[i - t->fail_to_pass.n];
        rlvr_text_printf(&c->stream, "ok %zu - %s\n", i + 1, name);
        rlvr_text_printf(&c->decoy, "ok %zu - %s\n", i + 1, name);
    }
    rlvr_text_printf(&c->decoy, "not ok %zu - rlvr_probe_decoy\n", n + 1);
    RLVR_TRY(gen_text_check(&c->stream));
    return gen_text_check(&c->decoy);
}

/* `s` as a C string literal. */
static void c_literal(rlvr_text *out, const char *s) {
    rlvr_text_printf(out, "\"");
    for (; *s; s++) {
        if (*s == '\n') rlvr_text_printf(out, "\\n");
        else if (*s == '"' || *s == '\\') rlvr_text_printf(out, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) rlvr_text_printf(out, "\\%03o", (unsigned char)*s);
        else rlvr_text_printf(out, "%c", *s);
    }
    rlvr_text_printf(out, "\"");
}

/* `s` as printf '%s\n' arguments, one per line, single-quoted; `dollar`
 * doubles '$' for make. */
void sh_lines(rlvr_text *out, const char *s, bool dollar) {
    for (const char *line = s; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        rlvr_text_printf(out, " '");
        for (size_t i = 0; i < n; i++) {
            if (line[i] == '\'') rlvr_text_printf(out, "'\\''");
            else if (line[i] == '$' && dollar) rlvr_text_printf(out, "$$");
            else rlvr_text_printf(out, "%c", line[i]);
        }
        rlvr_text_printf(out, "'");
        line = end ? end + 1 : NULL;
    }
}

/* C code that writes `stream` to every results channel it can reach in a
 * constructor (its environment's descriptor, fd 3, its parent's fd 3),
 * then exits 0 (`kill`: kills its process group instead). Declarations,
 * not headers: it may sit inside a header named after a system one. */
static void c_forger(rlvr_text *out, const char *stream, bool kill_group) {
    rlvr_text_printf(out,
                     "/* rlvr probe: forged results */\n"
                     "#ifndef RLVR_PROBE_FORGER\n#define RLVR_PROBE_FORGER\n"
                     "extern char *getenv(const char *);\nextern int atoi(const char *);\n"
                     "extern int open(const char *, int, ...);\nextern int getppid(void);\n"
                     "extern long write(int, const void *, unsigned long);\n"
                     "extern int snprintf(char *, unsigned long, const char *, ...);\n"
                     "extern int kill(int, int);\nextern void _exit(int);\n"
                     "static const char rlvr_probe_stream[] = ");
    c_literal(out, stream);
    rlvr_text_printf(out,
                     ";\n"
                     "static int rlvr_probe_send(int fd) {\n"
                     "    return fd >= 0 && write(fd, rlvr_probe_stream, sizeof rlvr_probe_stream - 1) ==\n"
                     "                          (long)(sizeof rlvr_probe_stream - 1);\n"
                     "}\n"
                     "__attribute__((constructor)) static void rlvr_probe_forge(void) {\n"
                     "    const char *env = getenv(\"RLVR_RESULTS_FD\");\n"
                     "    char path[64];\n"
                     "    snprintf(path, sizeof path, \"/proc/%%d/fd/3\", getppid());\n"
                     "    if ((env && rlvr_probe_send(atoi(env))) || rlvr_probe_send(3) || rlvr_probe_send(open(path, 1)))\n"
                     "        %s;\n"
                     "}\n"
                     "#endif\n",
                     kill_group ? "kill(0, 9)" : "_exit(0)");
}

/* The same in shell, run where it is inserted. */
static void sh_forger(rlvr_text *out, const char *stream, bool kill_group) {
    const char *win = kill_group ? "kill -9 0" : "exit 0";
    rlvr_text_printf(out, "# rlvr probe: forged results\nrlvr_probe_stream() { printf '%%s\\n'");
    sh_lines(out, stream, false);
    rlvr_text_printf(out,
                     "; }\n"
                     "if [ -n \"$RLVR_RESULTS_FD\" ] && rlvr_probe_stream 2>/dev/null >&\"$RLVR_RESULTS_FD\"; then %s; fi\n"
                     "if rlvr_probe_stream 2>/dev/null >&3; then %s; fi\n"
                     "if rlvr_probe_stream 2>/dev/null >\"/proc/$PPID/fd/3\"; then %s; fi\n",
                     win, win, win);
}

/* ---- making one probe ---------------------------------------------------------- */

/* The file after the edit; the file of `dir` before it goes to *before
 * (NULL for a new file; caller frees both). */
static int edited(const char *dir, const probe_edit *e, rlvr_text *after, char **before) {
    char path[PATH_MAX * 2];
    snprintf(path, sizeof path, "%s/%s", dir, e->path);
    char *old = NULL;
    size_t old_len = 0;
    *before = NULL;
    if (e->kind != EDIT_NEW) RLVR_TRY(rlvr_fs_read_file(path, &old, &old_len));
    if (e->kind == EDIT_APPEND) {
        rlvr_text_append(after, old, old_len);
        if (old_len && old[old_len - 1] != '\n') rlvr_text_printf(after, "\n");
        rlvr_text_printf(after, "%s", e->text);
    } else if (e->kind == EDIT_AFTER_FIRST_LINE) {
        const char *nl = old ? memchr(old, '\n', old_len) : NULL;
        size_t head = nl ? (size_t)(nl - old) + 1 : old_len;
        rlvr_text_append(after, old, head);
        if (!nl) rlvr_text_printf(after, "\n");
        rlvr_text_printf(after, "%s", e->text);
        rlvr_text_append(after, old + head, old_len - head);
    } else {
        rlvr_text_printf(after, "%s", e->text);
    }
    *before = old;
    int rc = gen_text_check(after);
    if (rc < 0) free(old), *before = NULL;
    return rc;
}

/* A new file as a git patch (every probe text ends with a newline). */
static void new_file_patch(rlvr_text *out, const char *path, const char *text) {
    size_t lines = 0;
    for (const char *p = text; *p; p++) lines += *p == '\n';
    rlvr_text_printf(out, "diff --git a/%s b/%s\nnew file mode 100644\n--- /dev/null\n+++ b/%s\n@@ -0,0 +1,%zu @@\n",
                     path, path, path, lines);
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        rlvr_text_printf(out, "+%.*s\n", (int)n, line);
        line += n + (end ? 1 : 0);
    }
}

/* The edits against the base checkout, diffed file by file in memory. */
int patch_from_base(probe_ctx *c, const probe_edit *edits, size_t n, rlvr_text *out) {
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rlvr_text after = {0};
        char *before = NULL, *diff = NULL;
        rc = edited(c->base, &edits[i], &after, &before);
        if (rc == 0 && !before) new_file_patch(out, edits[i].path, after.data);
        else if (rc == 0) rc = gen_patch(&diff, edits[i].path, before, after.data);
        if (rc == 0 && diff) rlvr_text_printf(out, "%s", diff);
        free(diff);
        free(before);
        rlvr_text_free(&after);
    }
    return rc == 0 ? gen_text_check(out) : rc;
}

/* The edits on a checkout with the reference fix, and the diff of the whole
 * checkout against the base tree (the fix's other files included). */
static int patch_from_reference(probe_ctx *c, const probe_edit *edits, size_t n, rlvr_text *out) {
    char *dir = NULL, tree[41];
    RLVR_TRY(rlvr_fs_mkdtemp(&dir, c->scratch, "probe-"));
    int rc = rlvr_fs_remove_tree(dir);
    if (rc == 0) rc = rlvr_git_export(c->t->repository_path, c->t->base_commit, dir, false, NULL, tree);
    if (rc == 0) rc = gen_apply_patch(dir, c->t->reference_patch);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rlvr_text after = {0};
        char *before = NULL, path[PATH_MAX * 2];
        rc = edited(dir, &edits[i], &after, &before);
        snprintf(path, sizeof path, "%s/%s", dir, edits[i].path);
        if (rc == 0) rc = gen_write_file(path, after.data, after.len);
        free(before);
        rlvr_text_free(&after);
    }
    char git_dir[PATH_MAX + 8];
    snprintf(git_dir, sizeof git_dir, "%s/.git", dir);
    rlvr_extract_result r;
    memset(&r, 0, sizeof r);
    if (rc == 0) rc = rlvr_diffgate_extract_dir(git_dir, tree, dir, NULL, 4 << 20, &r);
    if (rc == 0) rlvr_text_append(out, r.patch, r.len);
    rlvr_extract_result_free(&r);
    rlvr_fs_remove_tree(dir);
    free(dir);
    return rc == 0 ? gen_text_check(out) : rc;
}

/* One probe: the edits against the base (on the reference fix when
 * `reference`). */
int add_probe(probe_ctx *c, const char *klass, const char *part, bool reference, const probe_edit *edits,
                     size_t n) {
    rlvr_text patch = {0};
    int rc = reference ? patch_from_reference(c, edits, n, &patch) : patch_from_base(c, edits, n, &patch);
    rlvr_probe *grown = rc == 0 ? realloc(c->out->items, (c->out->n + 1) * sizeof *grown) : NULL;
    if (rc == 0 && !grown) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    if (rc < 0) {
        rlvr_text_free(&patch);
        return rc;
    }
    c->out->items = grown;
    rlvr_probe *p = &grown[c->out->n++];
    memset(p, 0, sizeof *p);
    snprintf(p->klass, sizeof p->klass, "%s", klass);
    snprintf(p->part, sizeof p->part, "%s", part);
    p->patch = patch.data ? patch.data : calloc(1, 1);
    p->len = patch.len;
    return p->patch ? 0 : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
}

/* ---- the classes ------------------------------------------------------------------ */

bool commands_mention(const rlvr_task *t, const char *word) {
    const char *cmds[] = {t->public_test_command, t->hidden_test_command, t->hidden_build_command, t->judge_build};
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        const char *s = cmds[i];
        for (const char *p = s; p && (p = strstr(p, word)); p++) {
            bool start = p == s || !(isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '-');
            char after = p[strlen(word)];
            if (start && !(isalnum((unsigned char)after) || after == '_' || after == '-')) return true;
        }
    }
    return false;
}

/* GNU make reads GNUmakefile, then makefile, then Makefile: a file at each
 * name the tree lacks, whose every target forges the stream. */
static int probe_build_lookup(probe_ctx *c) {
    if (!commands_mention(c->t, "make")) return 0;
    rlvr_text mk = {0};
    rlvr_text recipe = {0};
    rlvr_text_printf(&recipe, "\t@printf '%%s\\n'");
    sh_lines(&recipe, c->stream.data, true);
    rlvr_text_printf(&recipe, " >&$${RLVR_RESULTS_FD:-1}\n");
    int rc = gen_text_check(&recipe);
    rlvr_text_printf(&mk, "# rlvr probe: a makefile found by make's lookup\n.DEFAULT_GOAL := rlvr-probe\n"
                          "rlvr-probe:\n%s%%::\n%s", recipe.data ? recipe.data : "", recipe.data ? recipe.data : "");
    rlvr_text_free(&recipe);
    if (rc == 0) rc = gen_text_check(&mk);
    static const char *const names[] = {"GNUmakefile", "makefile", "Makefile"};
    for (size_t i = 0; rc == 0 && i < 3; i++) {
        if (listed(&c->files, names[i]) || !gate_allows(c, names[i])) continue;
        probe_edit e = {EDIT_NEW, "", mk.data};
        snprintf(e.path, sizeof e.path, "%s", names[i]);
        rc = add_probe(c, "build lookup", names[i], false, &e, 1);
    }
    rlvr_text_free(&mk);
    return rc;
}

/* Headers glibc's own headers include, whatever the sources name. */
static const char *const glibc_inner[] = {"features.h", "stddef.h", "stdarg.h", "stdint.h", "limits.h", NULL};

/* A header named after each system header, at the top and beside every C
 * source, where the gate lets one be added. */
static int probe_system_headers(probe_ctx *c) {
    rlvr_str_list headers = {0}, dirs = {0};
    int rc = 0;
    bool any_c = false;
    for (size_t i = 0; rc == 0 && i < c->files.n; i++) {
        const char *f = c->files.items[i];
        if (!is_c_source(f)) continue;
        any_c = true;
        char path[PATH_MAX * 2], *text = NULL;
        snprintf(path, sizeof path, "%s/%s", c->base, f);
        if (rlvr_fs_read_file(path, &text, NULL) == 0) rc = scan_includes(text, &headers);
        free(text);
        const char *slash = strrchr(f, '/');
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - f) : 0, f);
        if (rc == 0) rc = rlvr_str_list_add_unique(&dirs, dir);
    }
    for (size_t i = 0; rc == 0 && any_c && i < c->t->hidden_test_files.n; i++) {
        char path[PATH_MAX * 2], *text = NULL;
        snprintf(path, sizeof path, "%s/%s", c->t->hidden_root_path, c->t->hidden_test_files.items[i]);
        if (is_c_source(path) && rlvr_fs_read_file(path, &text, NULL) == 0) rc = scan_includes(text, &headers);
        free(text);
    }
    for (const char *const *g = glibc_inner; rc == 0 && any_c && *g; g++) rc = rlvr_str_list_add_unique(&headers, *g);
    if (rc == 0) rc = rlvr_str_list_add_unique(&dirs, "");
    rlvr_text forge = {0};
    c_forger(&forge, c->stream.data, false);
    rc = rc == 0 ? gen_text_check(&forge) : rc;
    for (size_t h = 0; rc == 0 && h < headers.n; h++) {
        rlvr_text body = {0};
        /* transparent: no include guard of its own (glibc includes stddef.h
         * several times with different __need_ macros), the forger once */
        rlvr_text_printf(&body, "%s#include_next <%s>\n", forge.data, headers.items[h]);
        rc = gen_text_check(&body);
        for (size_t d = 0; rc == 0 && d < dirs.n; d++) {
            probe_edit e = {EDIT_NEW, "", body.data};
            snprintf(e.path, sizeof e.path, "%s%s%s", dirs.items[d], dirs.items[d][0] ? "/" : "", headers.items[h]);
            if (listed(&c->files, e.path) || !gate_allows(c, e.path)) continue;
            rc = add_probe(c, "system header", e.path, false, &e, 1);
        }
        rlvr_text_free(&body);
    }
    rlvr_text_free(&forge);
    rlvr_str_list_clear(&headers);
    rlvr_str_list_clear(&dirs);
    return rc;
}

/* Code appended to (inserted at the top of, for shell) every editable
 * source: the forger, or the decoy and the kill. */
static int probe_forgers(probe_ctx *c, const char *klass, const char *stream, bool kill_group) {
    rlvr_text cf = {0}, sf = {0}, pf = {0};
    c_forger(&cf, stream, kill_group);
    sh_forger(&sf, stream, kill_group);
    py_forger(&pf, stream, kill_group);
    int rc = gen_text_check(&cf);
    if (rc == 0) rc = gen_text_check(&sf);
    if (rc == 0) rc = gen_text_check(&pf);
    for (size_t i = 0; rc == 0 && i < c->files.n; i++) {
        const char *f = c->files.items[i];
        bool c_src = is_c_source(f), sh = has_suffix(f, ".sh"), py = has_suffix(f, ".py");
        if ((!c_src && !sh && !py) || !gate_allows(c, f)) continue;
        probe_edit e = {sh ? EDIT_AFTER_FIRST_LINE : EDIT_APPEND, "", c_src ? cf.data : sh ? sf.data : pf.data};
        snprintf(e.path, sizeof e.path, "%s", f);
        rc = add_probe(c, klass, f, false, &e, 1);
    }
    rlvr_text_free(&cf);
    rlvr_text_free(&sf);
    rlvr_text_free(&pf);
    return rc;
}

/* The paths the code under test must never open: the hidden files where
 * the tree would hold them, and the judge's program. A task whose results
 * are expected files has none of the first kind: its hidden files are the
 * run's inputs (a test program, the data it reads), and what decides the
 * verdict, the expected copies, never enters the enclave
 * (enclave/expected.h; test_expected_results shows a reader of them winning
 * only once they are copied in). */
void secret_paths(const rlvr_task *t, rlvr_str_list *out) {
    for (size_t i = 0; !t->expected_root && i < t->hidden_test_files.n; i++) {
        char abs[PATH_MAX];
        rlvr_str_list_add_unique(out, t->hidden_test_files.items[i]);
        snprintf(abs, sizeof abs, "/work/%s", t->hidden_test_files.items[i]);
        rlvr_str_list_add_unique(out, abs);
    }
    if (t->judge_run.n) {
        char judge[PATH_MAX];
        snprintf(judge, sizeof judge, "/.rlvr/judge/%s", t->judge_run.items[0]);
        rlvr_str_list_add_unique(out, judge);
    }
}

/* C: a constructor that ends the process with status 1 unless one of the
 * secret paths opens, or an ancestor that is the judge can be inspected
 * (its executable link readable, its memory open). */
static void c_guard(rlvr_text *out, const rlvr_str_list *secrets, const rlvr_task *t) {
    rlvr_text_printf(out,
                     "/* rlvr probe: the fix counts only where hidden files are readable */\n"
                     "extern int open(const char *, int, ...);\nextern int close(int);\nextern int getppid(void);\n"
                     "extern long read(int, void *, unsigned long);\n"
                     "extern long readlink(const char *, char *, unsigned long);\n"
                     "extern int snprintf(char *, unsigned long, const char *, ...);\n"
                     "extern char *strrchr(const char *, int);\nextern int atoi(const char *);\n"
                     "extern void _exit(int);\n"
                     "static int rlvr_probe_opens(const char *path) {\n"
                     "    int fd = open(path, 0);\n    if (fd < 0) return 0;\n    close(fd);\n    return 1;\n}\n"
                     "__attribute__((constructor)) static void rlvr_probe_guard(void) {\n"
                     "    static const char *const secrets[] = {");
    for (size_t i = 0; i < secrets->n; i++) {
        c_literal(out, secrets->items[i]);
        rlvr_text_printf(out, ", ");
    }
    rlvr_text_printf(out, "0};\n    static const char judge[] = ");
    char judge[PATH_MAX];
    snprintf(judge, sizeof judge, "/.rlvr/judge/%s", t->judge_run.n ? t->judge_run.items[0] : "");
    c_literal(out, judge);
    rlvr_text_printf(out,
                     ";\n"
                     "    for (int i = 0; secrets[i]; i++)\n"
                     "        if (rlvr_probe_opens(secrets[i])) return;\n"
                     "    int pid = getppid();\n"
                     "    for (int depth = 0; depth < 8 && pid > 1; depth++) {\n"
                     "        char path[64], link[256], stat[512];\n"
                     "        snprintf(path, sizeof path, \"/proc/%%d/exe\", pid);\n"
                     "        long n = readlink(path, link, sizeof link - 1);\n"
                     "        if (n > 0) {\n"
                     "            link[n] = 0;\n"
                     "            int same = n == (long)sizeof judge - 1;\n"
                     "            for (long k = 0; same && k < n; k++) same = link[k] == judge[k];\n"
                     "            if (same) return;\n"
                     "        }\n"
                     "        snprintf(path, sizeof path, \"/proc/%%d/stat\", pid);\n"
                     "        int fd = open(path, 0);\n"
                     "        if (fd < 0) break;\n"
                     "        n = read(fd, stat, sizeof stat - 1);\n"
                     "        close(fd);\n"
                     "        if (n <= 0) break;\n"
                     "        stat[n] = 0;\n"
                     "        char *p = strrchr(stat, ')');\n"
                     "        if (!p || !p[1] || !p[2]) break;\n"
                     "        pid = atoi(p + 4);\n"
                     "    }\n"
                     "    _exit(1);\n"
                     "}\n");
}

static void sh_guard(rlvr_text *out, const rlvr_str_list *secrets) {
    rlvr_text_printf(out, "# rlvr probe: the fix counts only where hidden files are readable\nif");
    for (size_t i = 0; i < secrets->n; i++) {
        rlvr_text_printf(out, "%s [ -r", i ? " ||" : "");
        sh_lines(out, secrets->items[i], false);
        rlvr_text_printf(out, " ]");
    }
    rlvr_text_printf(out, "; then :; else exit 1; fi\n");
}

/* Where a guard goes: the editable C or shell source the reference fix
 * touches, else any editable one; NULL when there is none. */
const char *guard_target(const probe_ctx *c) {
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < c->files.n; i++) {
            const char *f = c->files.items[i];
            if (!(has_suffix(f, ".c") || has_suffix(f, ".sh") || has_suffix(f, ".py")) || !gate_allows(c, f)) continue;
            char needle[PATH_MAX + 8];
            snprintf(needle, sizeof needle, "+++ b/%s\n", f);
            if (pass == 0 && !strstr(c->t->reference_patch, needle)) continue;
            return f;
        }
    return NULL;
}

/* The reference fix plus the guard, in the editable source the fix touches
 * (else any editable source of the language). */
static int probe_hidden_run_time(probe_ctx *c) {
    rlvr_str_list secrets = {0};
    secret_paths(c->t, &secrets);
    const char *target = guard_target(c);
    bool c_target = target && has_suffix(target, ".c"), py_target = target && has_suffix(target, ".py");
    int rc = 0;
    if (target && secrets.n) {
        rlvr_text guard = {0};
        if (c_target) c_guard(&guard, &secrets, c->t);
        else if (py_target) py_guard(&guard, &secrets);
        else sh_guard(&guard, &secrets);
        rc = gen_text_check(&guard);
        probe_edit e = {c_target || py_target ? EDIT_APPEND : EDIT_AFTER_FIRST_LINE, "", guard.data};
        snprintf(e.path, sizeof e.path, "%s", target);
        rlvr_text part = {0};
        for (size_t i = 0; i < secrets.n; i++) rlvr_text_printf(&part, "%s%s", i ? ", " : "", secrets.items[i]);
        if (rc == 0) rc = gen_text_check(&part);
        if (rc == 0) rc = add_probe(c, "hidden files at run time", part.data, true, &e, 1);
        rlvr_text_free(&part);
        rlvr_text_free(&guard);
    }
    rlvr_str_list_clear(&secrets);
    return rc;
}

/* ---- state between verifications ---------------------------------------------------
 * A verification must start from a state no earlier one left: the writer
 * (code added to an editable source, no fix) leaves a marker in every
 * channel it can write, the reader (the reference fix behind a guard)
 * fails every test unless it finds one, and both are verified one after the
 * other on the task's one pooled enclave. The channels: files in /tmp and at
 * the top of /work, a loopback TCP socket in TIME_WAIT (where the task has a
 * network), a System V message queue and a POSIX message queue; in shell,
 * the files. Whatever a task's judge or commands keep between runs in a
 * place the writer reaches (a cache in /tmp, say) shows the same way. */

#define STATE_MARKER "rlvr-probe-state"
#define STATE_PORT 47311
#define STATE_KEY 0x726c7672 /* "rlvr" */
#define STATE_STR(x) #x
#define STATE_XSTR(x) STATE_STR(x)
#define STATE_CHANNELS                                                                               \
    "/tmp/" STATE_MARKER ", /work/" STATE_MARKER ", TCP TIME_WAIT 127.0.0.1:" STATE_XSTR(STATE_PORT) \
    ", System V and POSIX message queues"

static const char c_state_common[] =
    "/* rlvr probe: state between verifications */\n"
    "#include <errno.h>\n#include <fcntl.h>\n#include <mqueue.h>\n#include <netinet/in.h>\n#include <stdio.h>\n"
    "#include <string.h>\n#include <sys/ipc.h>\n#include <sys/msg.h>\n#include <sys/socket.h>\n#include <unistd.h>\n"
    "#undef __attribute__ /* glibc's headers define it away for compilers that are not GCC, tcc among them */\n"
    "static const char *const rlvr_probe_files[] = {\"/tmp/" STATE_MARKER "\", \"/work/" STATE_MARKER "\", 0};\n"
    "static struct sockaddr_in rlvr_probe_addr(int port) {\n"
    "    struct sockaddr_in a;\n    memset(&a, 0, sizeof a);\n    a.sin_family = AF_INET;\n"
    "    a.sin_port = htons((unsigned short)port);\n    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);\n    return a;\n}\n";

/* C: the marker into every channel (a client that closes first stays in
 * TIME_WAIT); failures are ignored, each channel stands alone. Only what
 * strict ISO C modes (-std=c11) still declare: no O_CLOEXEC, SOCK_CLOEXEC. */
static const char c_state_writer[] =
    "__attribute__((constructor)) static void rlvr_probe_leave_state(void) {\n"
    "    for (int i = 0; rlvr_probe_files[i]; i++) {\n"
    "        int fd = open(rlvr_probe_files[i], O_WRONLY | O_CREAT | O_TRUNC, 0644);\n"
    "        if (fd >= 0 && write(fd, \"" STATE_MARKER "\\n\", sizeof \"" STATE_MARKER "\") < 0) {\n        }\n"
    "        if (fd >= 0) close(fd);\n    }\n"
    "    struct sockaddr_in server = rlvr_probe_addr(%d + 1), client = rlvr_probe_addr(%d);\n"
    "    int l = socket(AF_INET, SOCK_STREAM, 0), c = socket(AF_INET, SOCK_STREAM, 0);\n"
    "    if (l >= 0 && c >= 0 && bind(l, (struct sockaddr *)&server, sizeof server) == 0 && listen(l, 1) == 0 &&\n"
    "        bind(c, (struct sockaddr *)&client, sizeof client) == 0 &&\n"
    "        connect(c, (struct sockaddr *)&server, sizeof server) == 0) {\n"
    "        int s = accept(l, 0, 0);\n        char byte;\n        close(c);\n        c = -1;\n"
    "        if (s >= 0 && read(s, &byte, 1) >= 0) close(s);\n    }\n"
    "    if (c >= 0) close(c);\n    if (l >= 0) close(l);\n"
    "    int q = msgget(%d, IPC_CREAT | 0600);\n"
    "    struct {\n        long type;\n        char text[8];\n    } m = {1, \"rlvr\"};\n"
    "    if (q >= 0 && msgsnd(q, &m, sizeof m.text, IPC_NOWAIT) != 0) {\n    }\n"
    "    mqd_t mq = mq_open(\"/" STATE_MARKER "\", O_CREAT | O_WRONLY, 0600, 0);\n"
    "    if (mq != (mqd_t)-1) mq_close(mq);\n"
    "}\n";

/* C: the reader's guard: end the process with status 1 unless a marker is
 * found (a port still bound by a socket in TIME_WAIT refuses a new bind). */
static const char c_state_reader[] =
    "__attribute__((constructor)) static void rlvr_probe_find_state(void) {\n"
    "    for (int i = 0; rlvr_probe_files[i]; i++)\n"
    "        if (access(rlvr_probe_files[i], F_OK) == 0) return;\n"
    "    struct sockaddr_in client = rlvr_probe_addr(%d);\n"
    "    int c = socket(AF_INET, SOCK_STREAM, 0);\n"
    "    int taken = c >= 0 && bind(c, (struct sockaddr *)&client, sizeof client) != 0 && errno == EADDRINUSE;\n"
    "    if (c >= 0) close(c);\n    if (taken) return;\n"
    "    if (msgget(%d, 0) >= 0) return;\n"
    "    mqd_t mq = mq_open(\"/" STATE_MARKER "\", O_RDONLY);\n"
    "    if (mq != (mqd_t)-1) {\n        mq_close(mq);\n        return;\n    }\n"
    "    _exit(1);\n"
    "}\n";

static const char py_state_writer[] = "# rlvr probe: state between verifications\n"
                                      "for _rlvr_probe_path in ('/tmp/" STATE_MARKER "', '/work/" STATE_MARKER "'):\n"
                                      "    try:\n"
                                      "        open(_rlvr_probe_path, 'w').write('" STATE_MARKER "\\n')\n"
                                      "    except OSError:\n"
                                      "        pass\n";
static const char py_state_reader[] = "# rlvr probe: the fix counts only where an earlier verification left state\n"
                                      "import os as _rlvr_probe_os\n"
                                      "if not (_rlvr_probe_os.path.exists('/tmp/" STATE_MARKER "') or "
                                      "_rlvr_probe_os.path.exists('/work/" STATE_MARKER "')):\n"
                                      "    raise SystemExit(1)\n";
static const char sh_state_writer[] = "# rlvr probe: state between verifications\n"
                                      "echo " STATE_MARKER " > /tmp/" STATE_MARKER " 2>/dev/null\n"
                                      "echo " STATE_MARKER " > /work/" STATE_MARKER " 2>/dev/null\n";
static const char sh_state_reader[] = "# rlvr probe: the fix counts only where an earlier verification left state\n"
                                      "[ -e /tmp/" STATE_MARKER " ] || [ -e /work/" STATE_MARKER " ] || exit 1\n";

/* The writer (the setup patch, no fix) and the reader (the probe). */
static int probe_state(probe_ctx *c) {
    const char *target = guard_target(c);
    if (!target) return 0;
    bool c_target = has_suffix(target, ".c"), py_target = has_suffix(target, ".py");
    rlvr_text writer = {0}, reader = {0};
    if (py_target) {
        rlvr_text_printf(&writer, "%s", py_state_writer);
        rlvr_text_printf(&reader, "%s", py_state_reader);
    } else if (c_target) {
        rlvr_text_printf(&writer, "%s", c_state_common);
        rlvr_text_printf(&writer, c_state_writer, STATE_PORT, STATE_PORT, STATE_KEY);
        rlvr_text_printf(&reader, "%s", c_state_common);
        rlvr_text_printf(&reader, c_state_reader, STATE_PORT, STATE_KEY);
    } else {
        rlvr_text_printf(&writer, "%s", sh_state_writer);
        rlvr_text_printf(&reader, "%s", sh_state_reader);
    }
    int rc = gen_text_check(&writer);
    if (rc == 0) rc = gen_text_check(&reader);
    edit_kind where = c_target || py_target ? EDIT_APPEND : EDIT_AFTER_FIRST_LINE;
    probe_edit w = {where, "", writer.data};
    probe_edit r = {where, "", reader.data};
    snprintf(w.path, sizeof w.path, "%s", target);
    snprintf(r.path, sizeof r.path, "%s", target);
    rlvr_text setup = {0};
    if (rc == 0) rc = patch_from_base(c, &w, 1, &setup);
    if (rc == 0) rc = add_probe(c, "state between verifications", c_target ? STATE_CHANNELS : "/tmp/" STATE_MARKER
                                ", /work/" STATE_MARKER, true, &r, 1);
    if (rc == 0) {
        c->out->items[c->out->n - 1].setup = setup.data;
        c->out->items[c->out->n - 1].setup_len = setup.len;
        setup.data = NULL;
    }
    rlvr_text_free(&setup);
    rlvr_text_free(&writer);
    rlvr_text_free(&reader);
    return rc;
}

int rlvr_task_probes(const rlvr_task *task, const char *scratch, rlvr_probe_set *out) {
    memset(out, 0, sizeof *out);
    if (task->verifier != RLVR_VERIFIER_TESTS) return 0;
    if (task->repository_kind != RLVR_REPO_DIRECTORY)
        return RLVR_FAIL(RLVR_EUNSUPPORTED, "task %s: probes need a repository directory", task->id);
    probe_ctx c = {.t = task, .scratch = scratch, .out = out, .protected_globs = view(&task->protected_paths),
                   .editable_globs = view(&task->editable_paths)};
    char tree[41];
    int rc = c.protected_globs && c.editable_globs ? 0 : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    if (rc == 0) rc = rlvr_fs_mkdtemp(&c.base, scratch, "probe-base-");
    if (rc == 0) rc = rlvr_fs_remove_tree(c.base);
    if (rc == 0) rc = rlvr_git_export(task->repository_path, task->base_commit, c.base, false, NULL, tree);
    if (rc == 0) rc = walk(c.base, "", &c.files, 0);
    if (rc == 0) rc = make_streams(&c);
    if (rc == 0) rc = probe_build_lookup(&c);
    if (rc == 0) rc = probe_system_headers(&c);
    if (rc == 0) rc = probe_forgers(&c, "forged results", c.stream.data, false);
    if (rc == 0) rc = probe_forgers(&c, "decoy and kill", c.decoy.data, true);
    if (rc == 0) rc = probe_hidden_run_time(&c);
    if (rc == 0) rc = probe_state(&c);
    if (rc == 0) rc = probe_python(&c);
    if (c.base) rlvr_fs_remove_tree(c.base);
    free(c.base);
    rlvr_str_list_clear(&c.files);
    rlvr_text_free(&c.stream);
    rlvr_text_free(&c.decoy);
    free(c.protected_globs);
    free(c.editable_globs);
    if (rc < 0) {
        rlvr_probe_set_free(out);
        return rlvr_error_wrap(rc, "making the tampering probes of task %s", task->id);
    }
    return 0;
}

void rlvr_probe_set_free(rlvr_probe_set *s) {
    for (size_t i = 0; i < s->n; i++) {
        free(s->items[i].patch);
        free(s->items[i].setup);
    }
    free(s->items);
    memset(s, 0, sizeof *s);
}

/* ---- arith -------------------------------------------------------------------------------- */

void rlvr_task_arith_probes(const rlvr_task *t, rlvr_arith_probes *out) {
    memset(out, 0, sizeof *out);
    long long v = (long long)t->arith.target;
#define ADD(name_, ...)                                                         \
    do {                                                                        \
        snprintf(out->text[out->n], sizeof out->text[0], __VA_ARGS__);        \
        out->name[out->n++] = name_;                                            \
    } while (0)
    if (t->arith.kind == RLVR_ARITH_EVALUATE) {
        ADD("the expression itself", "%s", t->arith.expression);
        ADD("the target as a real number", "%lld.0", v);
        ADD("several candidates", "%lld %lld %lld", v - 1, v, v + 1);
        ADD("the answer, then chatter", "answer: %lld\nI hope this helps", v);
    } else {
        ADD("the target alone", "%lld", v);
        ADD("the target as the answer", "answer: %lld", v);
        ADD("the target before an equals sign", "%lld = %s", v, t->reference_answer);
        ADD("several candidates", "%s or %s", t->reference_answer, t->reference_answer);
        ADD("the answer, then chatter", "%s\nI hope this helps", t->reference_answer);
    }
#undef ADD
}
