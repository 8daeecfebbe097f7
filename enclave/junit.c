#include "enclave/junit.h"

#include "core/error.h"
#include "enclave/reason.h"

#include <errno.h>
#include <expat.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* A task's test name as a JUnit file would carry it. */
typedef struct {
    const char *id;
    char *classname; /* pytest node ids only (NULL for other names) */
    char *name;
} known_id;

typedef struct {
    XML_Parser parser;
    const rlvr_junit_limits *limits;
    rlvr_tap_report *report;
    known_id *known;
    int n_known;
    int depth;
    int suites;        /* <testsuite> elements open */
    int case_depth;    /* depth of the open <testcase>, 0 when none */
    char *classname, *name, *file; /* of the open testcase */
    rlvr_tap_status status;
    int refused;       /* a reason code once the file is refused */
    bool oom;
} junit_state;

int rlvr_junit_mangle_pytest_id(const char *node_id, char **classname, char **name) {
    *classname = *name = NULL;
    /* parameters ("[...]") stay in the name whatever they hold */
    size_t path_len = strcspn(node_id, "[");
    char *c = malloc(path_len + 1);
    if (!c) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < path_len; i++) {
        if (node_id[i] == ':' && node_id[i + 1] == ':' && i + 1 < path_len) {
            c[k++] = '.';
            i++;
        } else {
            c[k++] = node_id[i] == '/' ? '.' : node_id[i];
        }
    }
    c[k] = '\0';
    /* the file's ".py" goes: it ends the first "::" component */
    const char *sep = strstr(node_id, "::");
    size_t file_len = sep && (size_t)(sep - node_id) < path_len ? (size_t)(sep - node_id) : path_len;
    if (file_len >= 3 && strncmp(node_id + file_len - 3, ".py", 3) == 0) memmove(c + file_len - 3, c + file_len, k - file_len + 1);
    /* the last dotted component (the function) is the name */
    char *dot = strrchr(c, '.');
    const char *fn = dot ? dot + 1 : c;
    size_t fn_len = strlen(fn);
    char *n = malloc(fn_len + strlen(node_id + path_len) + 1);
    if (!n) {
        free(c);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    }
    memcpy(n, fn, fn_len);
    strcpy(n + fn_len, node_id + path_len);
    if (dot) *dot = '\0';
    else c[0] = '\0';
    *classname = c;
    *name = n;
    return 0;
}

static void refuse(junit_state *s, int reason) {
    if (!s->refused) s->refused = reason;
    XML_StopParser(s->parser, XML_FALSE);
}

static const char *attr(const XML_Char **atts, const char *key) {
    for (int i = 0; atts[i]; i += 2)
        if (strcmp(atts[i], key) == 0) return atts[i + 1];
    return NULL;
}

static char *dup_bounded(junit_state *s, const char *v) {
    if (!v) return NULL;
    if (strlen(v) > s->limits->max_name) {
        refuse(s, RLVR_REASON_RESULTS_TOO_LARGE);
        return NULL;
    }
    char *d = strdup(v);
    if (!d) {
        s->oom = true;
        XML_StopParser(s->parser, XML_FALSE);
    }
    return d;
}

static void open_testcase(junit_state *s, const XML_Char **atts) {
    if (s->suites == 0 || s->case_depth) {
        refuse(s, RLVR_REASON_RESULTS_INVALID); /* outside a suite, or inside another testcase */
        return;
    }
    s->case_depth = s->depth;
    s->status = RLVR_TAP_PASS;
    const char *name = attr(atts, "name");
    if (!name || !name[0]) {
        refuse(s, RLVR_REASON_RESULTS_INVALID);
        return;
    }
    const char *st = attr(atts, "status");
    if (st && (strcmp(st, "notrun") == 0 || strcmp(st, "disabled") == 0)) s->status = RLVR_TAP_SKIP;
    s->name = dup_bounded(s, name);
    s->classname = dup_bounded(s, attr(atts, "classname") ? attr(atts, "classname") : "");
    s->file = dup_bounded(s, attr(atts, "file"));
}

/* A direct child of the open testcase: its outcome. */
static void testcase_child(junit_state *s, const char *el) {
    static const char *const failures[] = {"failure",     "error",      "rerunFailure",
                                           "rerunError",  "flakyFailure", "flakyError", NULL};
    for (const char *const *f = failures; *f; f++)
        if (strcmp(el, *f) == 0) {
            s->status = RLVR_TAP_FAIL;
            return;
        }
    if (strcmp(el, "skipped") == 0 && s->status != RLVR_TAP_FAIL) s->status = RLVR_TAP_SKIP;
}

static void XMLCALL on_start(void *u, const XML_Char *el, const XML_Char **atts) {
    junit_state *s = u;
    if (++s->depth > s->limits->max_depth) {
        refuse(s, RLVR_REASON_RESULTS_TOO_LARGE);
        return;
    }
    if (s->depth == 1 && strcmp(el, "testsuites") != 0 && strcmp(el, "testsuite") != 0) {
        refuse(s, RLVR_REASON_RESULTS_INVALID);
        return;
    }
    if (s->case_depth) {
        if (strcmp(el, "testcase") == 0) refuse(s, RLVR_REASON_RESULTS_INVALID); /* one inside another */
        else if (s->depth == s->case_depth + 1) testcase_child(s, el);
        return;
    }
    if (strcmp(el, "testsuite") == 0) s->suites++;
    else if (strcmp(el, "testcase") == 0) open_testcase(s, atts);
}

/* "dir/test_x.py" as pytest writes it in a classname: "dir.test_x". */
static bool classname_starts_with_file(const char *classname, const char *file, size_t *consumed) {
    size_t n = strlen(file);
    if (n >= 3 && strcmp(file + n - 3, ".py") == 0) n -= 3;
    if (n == 0 || strlen(classname) < n) return false;
    for (size_t i = 0; i < n; i++)
        if (classname[i] != (file[i] == '/' ? '.' : file[i])) return false;
    if (classname[n] != '\0' && classname[n] != '.') return false;
    *consumed = n;
    return true;
}

/* The testcase's id: a task's pytest node id it mangles to, pytest's node id
 * from the file attribute, or classname.name. */
static char *testcase_id(junit_state *s) {
    for (int i = 0; i < s->n_known; i++)
        if (s->known[i].classname && strcmp(s->known[i].classname, s->classname) == 0 &&
            strcmp(s->known[i].name, s->name) == 0)
            return strdup(s->known[i].id);
    size_t cn = strlen(s->classname), nn = strlen(s->name);
    size_t consumed;
    char *id = malloc(cn + nn + (s->file ? strlen(s->file) : 0) + 8 + cn);
    if (!id) return NULL;
    if (s->file && classname_starts_with_file(s->classname, s->file, &consumed)) {
        char *p = id + sprintf(id, "%s", s->file);
        for (const char *c = s->classname + consumed; *c; c++) {
            if (*c == '.') p += sprintf(p, "::");
            else *p++ = *c;
        }
        sprintf(p, "::%s", s->name);
    } else if (cn == 0 || strcmp(s->classname, s->name) == 0) {
        strcpy(id, s->name);
    } else {
        sprintf(id, "%s.%s", s->classname, s->name);
    }
    return id;
}

static void close_testcase(junit_state *s) {
    rlvr_tap_report *r = s->report;
    s->case_depth = 0;
    if (s->refused || s->oom) return;
    if (r->n_tests >= s->limits->max_tests) {
        refuse(s, RLVR_REASON_RESULTS_TOO_LARGE);
        return;
    }
    char *id = testcase_id(s);
    if (id && strlen(id) > s->limits->max_name) {
        free(id);
        refuse(s, RLVR_REASON_RESULTS_TOO_LARGE);
        return;
    }
    if (id && r->n_tests % 64 == 0) {
        rlvr_tap_test *grown = realloc(r->tests, (size_t)(r->n_tests + 64) * sizeof *grown);
        if (!grown) {
            free(id);
            id = NULL;
        } else {
            r->tests = grown;
        }
    }
    if (!id) {
        s->oom = true;
        XML_StopParser(s->parser, XML_FALSE);
        return;
    }
    r->tests[r->n_tests] = (rlvr_tap_test){.name = id, .number = r->n_tests + 1, .status = s->status};
    r->n_tests++;
}

static void clear_testcase(junit_state *s) {
    free(s->classname);
    free(s->name);
    free(s->file);
    s->classname = s->name = s->file = NULL;
}

static void XMLCALL on_end(void *u, const XML_Char *el) {
    junit_state *s = u;
    if (s->case_depth && s->depth == s->case_depth) {
        close_testcase(s);
        clear_testcase(s);
    } else if (!s->case_depth && strcmp(el, "testsuite") == 0) {
        s->suites--;
    }
    s->depth--;
}

/* Any document type declaration: where DTDs, entities and external
 * resources start. A results file needs none of them. */
static void XMLCALL on_doctype(void *u, const XML_Char *name, const XML_Char *sysid, const XML_Char *pubid,
                               int has_internal_subset) {
    (void)name, (void)sysid, (void)pubid, (void)has_internal_subset;
    refuse(u, RLVR_REASON_RESULTS_UNSAFE);
}

static void XMLCALL on_entity_decl(void *u, const XML_Char *name, int is_param, const XML_Char *value, int len,
                                   const XML_Char *base, const XML_Char *sysid, const XML_Char *pubid,
                                   const XML_Char *notation) {
    (void)name, (void)is_param, (void)value, (void)len, (void)base, (void)sysid, (void)pubid, (void)notation;
    refuse(u, RLVR_REASON_RESULTS_UNSAFE);
}

static int XMLCALL on_external_entity(XML_Parser p, const XML_Char *context, const XML_Char *base,
                                      const XML_Char *sysid, const XML_Char *pubid) {
    (void)context, (void)base, (void)sysid, (void)pubid;
    refuse(XML_GetUserData(p), RLVR_REASON_RESULTS_UNSAFE);
    return XML_STATUS_ERROR;
}

static void free_known(known_id *k, int n) {
    for (int i = 0; i < n; i++) {
        free(k[i].classname);
        free(k[i].name);
    }
    free(k);
}

static int make_known(const char *const *names, known_id **out, int *n_out) {
    int n = 0;
    while (names && names[n]) n++;
    known_id *k = calloc((size_t)n + 1, sizeof *k);
    if (!k) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
        k[i].id = names[i];
        if (!strstr(names[i], "::")) continue;
        int rc = rlvr_junit_mangle_pytest_id(names[i], &k[i].classname, &k[i].name);
        if (rc < 0) {
            free_known(k, n);
            return rc;
        }
    }
    *out = k;
    *n_out = n;
    return 0;
}

int rlvr_junit_parse(const char *text, size_t len, const char *const *known, const rlvr_junit_limits *limits,
                     rlvr_tap_report *out) {
    memset(out, 0, sizeof *out);
    out->planned = -1;
    rlvr_junit_limits defaults = RLVR_JUNIT_LIMITS_INIT;
    if (!limits) limits = &defaults;
    if (len > limits->max_bytes) {
        out->malformed = true;
        out->invalid_reason = RLVR_REASON_RESULTS_TOO_LARGE;
        return 0;
    }
    junit_state s = {.limits = limits, .report = out};
    RLVR_TRY(make_known(known, &s.known, &s.n_known));
    s.parser = XML_ParserCreate(NULL);
    if (!s.parser) {
        free_known(s.known, s.n_known);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory creating the XML parser");
    }
    XML_SetUserData(s.parser, &s);
    XML_SetElementHandler(s.parser, on_start, on_end);
    XML_SetStartDoctypeDeclHandler(s.parser, on_doctype);
    XML_SetEntityDeclHandler(s.parser, on_entity_decl);
    XML_SetExternalEntityRefHandler(s.parser, on_external_entity);
    XML_SetParamEntityParsing(s.parser, XML_PARAM_ENTITY_PARSING_NEVER);
    bool ok = len <= (size_t)INT32_MAX && XML_Parse(s.parser, text, (int)len, XML_TRUE) == XML_STATUS_OK;
    if (!ok && !s.refused) s.refused = RLVR_REASON_RESULTS_INVALID;
    if (!s.refused && s.depth != 0) s.refused = RLVR_REASON_RESULTS_INVALID;
    clear_testcase(&s);
    XML_ParserFree(s.parser);
    free_known(s.known, s.n_known);
    if (s.oom) {
        rlvr_tap_report_free(out);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory parsing JUnit XML");
    }
    if (s.refused) {
        rlvr_tap_report_free(out);
        out->malformed = true;
        if (s.refused != RLVR_REASON_RESULTS_INVALID) out->invalid_reason = s.refused;
        return 0;
    }
    out->planned = out->n_tests;
    return 0;
}

/* ---- the results file in a sandbox ---------------------------------------- */

/* read_results_fn's argument: the size cap, then the path under /work. */
typedef struct {
    uint64_t max_bytes;
    char path[];
} results_arg;

enum { RESULTS_READ = 0, RESULTS_MISSING = 20, RESULTS_NOT_FILE = 21, RESULTS_TOO_BIG = 22, RESULTS_IO = 23 };

/* The file beneath /work, never through a symbolic link, never blocking
 * on a FIFO. */
int rlvr_junit_open_in_work(const char *path, int flags) {
    int dir = open("/work", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return -1;
    struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC | O_NOCTTY | O_NONBLOCK),
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    int fd = (int)syscall(SYS_openat2, dir, path, &how, sizeof how);
    int saved = errno;
    close(dir);
    errno = saved;
    return fd;
}

/* Inside the sandbox: the file's bytes on stdout, or why not as the status. */
static int read_results_fn(void *p) {
    const results_arg *a = p;
    int fd = rlvr_junit_open_in_work(a->path, O_RDONLY);
    if (fd < 0) return errno == ENOENT ? RESULTS_MISSING : RESULTS_NOT_FILE;
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) return RESULTS_NOT_FILE;
    if ((uint64_t)st.st_size > a->max_bytes) return RESULTS_TOO_BIG;
    char buf[65536];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0)
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(1, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) return RESULTS_IO;
            off += w;
        }
    return n < 0 ? RESULTS_IO : RESULTS_READ;
}

int rlvr_junit_remove_in_sandbox(const char *path) {
    int dir = open("/work", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return -1;
    /* the parent is resolved beneath /work: a link in the path cannot
     * point the removal elsewhere */
    char parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%s", path);
    char *slash = strrchr(parent, '/');
    const char *base = path;
    int pdir = dir;
    if (slash) {
        *slash = '\0';
        base = path + (slash - parent) + 1;
        struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                               .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
        pdir = (int)syscall(SYS_openat2, dir, parent, &how, sizeof how);
    }
    int rc = 0;
    if (pdir < 0) rc = errno == ENOENT ? 0 : -1;
    else if (unlinkat(pdir, base, 0) < 0 && errno != ENOENT) rc = -1;
    if (pdir >= 0 && pdir != dir) close(pdir);
    close(dir);
    return rc;
}

int rlvr_junit_read(rlvr_sandbox *sb, const char *path, const char *const *known, const rlvr_junit_limits *limits,
                    rlvr_tap_report *out) {
    memset(out, 0, sizeof *out);
    out->planned = -1;
    rlvr_junit_limits defaults = RLVR_JUNIT_LIMITS_INIT;
    if (!limits) limits = &defaults;
    size_t path_len = strlen(path);
    results_arg *a = malloc(sizeof *a + path_len + 1);
    if (!a) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    a->max_bytes = limits->max_bytes;
    memcpy(a->path, path, path_len + 1);
    rlvr_sandbox_result res;
    int rc = rlvr_sandbox_call(sb, read_results_fn, a, sizeof *a + path_len + 1, 0, (int64_t)limits->max_bytes + 1,
                               &res);
    free(a);
    if (rc < 0) return rlvr_error_wrap(rc, "reading the results file %s", path);
    if (res.limit != RLVR_LIMIT_NONE || res.exit_code == RESULTS_IO || res.exit_code < 0) {
        rc = RLVR_FAIL(RLVR_ESANDBOX, "reading the results file %s: %s", path,
                       res.limit != RLVR_LIMIT_NONE ? rlvr_sandbox_limit_name(res.limit) : "read failed");
    } else if (res.exit_code == RESULTS_READ && !res.out_truncated) {
        rc = rlvr_junit_parse(res.out, res.out_len, known, limits, out);
    } else if (res.exit_code != RESULTS_MISSING) {
        out->malformed = true;
        out->invalid_reason = res.exit_code == RESULTS_TOO_BIG || res.out_truncated ? RLVR_REASON_RESULTS_TOO_LARGE : 0;
    }
    rlvr_sandbox_result_free(&res);
    return rc;
}
