/* envs/demo.c — a task's reference solution as a scripted policy. */
#include "envs/demo.h"

#include "core/error.h"
#include "enclave/gitrepo.h"

#include <git2.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEMO_MAX_CALLS 64

struct rlvr_demo {
    char *calls[DEMO_MAX_CALLS]; /* JSON of each call; the answer turn has none */
    int n_calls;
    char *answer;                /* "arith": the final reply; NULL otherwise */
    int mistake;                 /* index of the mistaken call of a recovery demonstration; -1: none */
};

/* One line of a hunk: ' ' context, '-' removed, '+' added. */
typedef struct {
    char kind;
    const char *text; /* without the kind, with its '\n' */
    size_t len;
} hunk_line;

typedef struct {
    hunk_line *lines;
    int n, cap;
} hunk;

static int hunk_push(hunk *h, char kind, const char *text, size_t len) {
    if (h->n == h->cap) {
        int cap = h->cap ? 2 * h->cap : 16;
        hunk_line *l = realloc(h->lines, (size_t)cap * sizeof *l);
        if (!l) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        h->lines = l, h->cap = cap;
    }
    h->lines[h->n++] = (hunk_line){kind, text, len};
    return 0;
}

static int add_call(rlvr_demo *d, const char *name, json_t *args) {
    if (d->n_calls == DEMO_MAX_CALLS) {
        json_decref(args);
        return RLVR_FAIL(RLVR_ELIMIT, "demonstration: more than %d calls", DEMO_MAX_CALLS);
    }
    json_t *c = json_object();
    json_object_set_new(c, "name", json_string(name));
    json_object_set_new(c, "arguments", args ? args : json_object());
    d->calls[d->n_calls] = json_dumps(c, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(c);
    if (!d->calls[d->n_calls]) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    d->n_calls++;
    return 0;
}

/* The file at the task's base commit, or NULL when it cannot be read. */
static char *base_file(const rlvr_task *t, const char *path, size_t *len) {
    if (t->repository_kind != RLVR_REPO_DIRECTORY || rlvr_git_init() < 0) return NULL;
    git_repository *repo = NULL;
    git_object *obj = NULL;
    char spec[4400];
    char *out = NULL;
    snprintf(spec, sizeof spec, "%s:%s", t->base_commit, path);
    if (git_repository_open(&repo, t->repository_path) == 0 && git_revparse_single(&obj, repo, spec) == 0 &&
        git_object_type(obj) == GIT_OBJECT_BLOB) {
        const git_blob *b = (const git_blob *)obj;
        *len = (size_t)git_blob_rawsize(b);
        out = malloc(*len + 1);
        if (out) {
            memcpy(out, git_blob_rawcontent(b), *len);
            out[*len] = 0;
        }
    }
    git_object_free(obj);
    git_repository_free(repo);
    return out;
}

static int occurrences(const char *hay, const char *needle) {
    int n = 0;
    if (!*needle) return 2; /* an empty text is never a unique anchor */
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
    return n;
}

/* old/new texts of hunk lines [from, to]: old skips '+', new skips '-'. */
static void render_side(const hunk *h, int from, int to, char skip, char *out) {
    size_t n = 0;
    for (int i = from; i <= to; i++)
        if (h->lines[i].kind != skip) memcpy(out + n, h->lines[i].text, h->lines[i].len), n += h->lines[i].len;
    out[n] = 0;
}

/* A recovery demonstration's mistake before its first edit: the edit's new
 * text given as its old one, which the base file does not hold, so the tool
 * refuses it (see demo.h). 0 without a call when the file does hold it. */
static int add_mistake_call(rlvr_demo *d, const char *path, const char *file, const char *neu) {
    if (!file || !*neu || strstr(file, neu)) return 0;
    d->mistake = d->n_calls;
    return add_call(d, "replace_in_file", json_pack("{s:s, s:s, s:s}", "path", path, "old", neu, "new", neu));
}

/* The smallest replace_in_file edit for one hunk (see demo.h), after the
 * mistake when `mistake` asks for one. */
static int add_hunk_call(rlvr_demo *d, const hunk *h, const char *path, const char *file, bool mistake) {
    int lo = -1, hi = -1;
    size_t total = 1;
    for (int i = 0; i < h->n; i++) {
        total += h->lines[i].len;
        if (h->lines[i].kind != ' ') {
            if (lo < 0) lo = i;
            hi = i;
        }
    }
    if (lo < 0) return 0; /* nothing changed */
    char *old = malloc(total), *neu = malloc(total);
    if (!old || !neu) {
        free(old), free(neu);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    }
    int from = lo, to = hi;
    render_side(h, from, to, '+', old);
    for (bool before = true; file && occurrences(file, old) != 1 && (from > 0 || to < h->n - 1); before = !before) {
        if ((before && from > 0) || to == h->n - 1) from--;
        else to++;
        render_side(h, from, to, '+', old);
    }
    if (!file || occurrences(file, old) != 1) from = 0, to = h->n - 1; /* the hunk as the patch has it */
    render_side(h, from, to, '+', old);
    render_side(h, from, to, '-', neu);
    int rc = mistake ? add_mistake_call(d, path, file, neu) : 0;
    if (rc == 0) rc = add_call(d, "replace_in_file", json_pack("{s:s, s:s, s:s}", "path", path, "old", old, "new", neu));
    free(old), free(neu);
    return rc;
}

/* Walks the reference patch: read_file per file, one edit per hunk (the
 * first after a mistake when `recovery`). */
static int tests_calls(rlvr_demo *d, const rlvr_task *t, bool recovery) {
    const char *p = t->reference_patch;
    char path[4096] = "";
    char *file = NULL;
    size_t file_len = 0;
    hunk h = {0};
    bool in_hunk = false;
    int rc = 0;
    while (rc == 0 && p && *p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p + 1) : strlen(p);
        bool header = strncmp(p, "diff ", 5) == 0 || strncmp(p, "@@", 2) == 0;
        if (header && in_hunk) {
            rc = add_hunk_call(d, &h, path, file, recovery && d->mistake < 0);
            h.n = 0;
            in_hunk = false;
        }
        if (rc < 0) break;
        if (strncmp(p, "+++ ", 4) == 0 && !in_hunk) {
            if (strncmp(p + 4, "b/", 2) != 0)
                rc = RLVR_FAIL(RLVR_EFORMAT, "%s: reference patch deletes a file; a demonstration edits files only",
                               t->source);
            else {
                snprintf(path, sizeof path, "%.*s", (int)(n - 7 + (nl ? 0 : 1)), p + 6);
                free(file);
                file = base_file(t, path, &file_len);
                rc = add_call(d, "read_file", json_pack("{s:s}", "path", path));
            }
        } else if (strncmp(p, "GIT binary patch", 16) == 0) {
            rc = RLVR_FAIL(RLVR_EFORMAT, "%s: reference patch is binary; a demonstration edits text only", t->source);
        } else if (p[0] == '@') {
            in_hunk = true;
        } else if (in_hunk && (p[0] == ' ' || p[0] == '-' || p[0] == '+')) {
            rc = hunk_push(&h, p[0], p + 1, n - 1);
        }
        p += n;
    }
    if (rc == 0 && in_hunk) rc = add_hunk_call(d, &h, path, file, recovery && d->mistake < 0);
    free(file);
    free(h.lines);
    if (rc == 0 && d->n_calls == 0)
        rc = RLVR_FAIL(RLVR_EFORMAT, "%s: reference patch has no hunk to demonstrate", t->source);
    if (rc == 0) rc = add_call(d, "submit", NULL);
    return rc;
}

static int demo_new(rlvr_demo **out, const rlvr_task *task, bool recovery) {
    *out = NULL;
    rlvr_demo *d = calloc(1, sizeof *d);
    if (!d) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    d->mistake = -1;
    int rc = 0;
    if (task->verifier == RLVR_VERIFIER_ARITH) {
        d->answer = strdup(task->reference_answer ? task->reference_answer : "");
        if (!d->answer) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    } else {
        rc = tests_calls(d, task, recovery);
    }
    if (rc == 0 && recovery && d->mistake < 0)
        rc = RLVR_FAIL(RLVR_ENOTFOUND, "%s: no mistaken edit to recover from (an arith task, an unreadable base "
                                       "file, or a fix whose new text the file already holds)",
                       task->source ? task->source : task->id);
    if (rc < 0) {
        rlvr_demo_free(d);
        return rc;
    }
    *out = d;
    return 0;
}

int rlvr_demo_new(rlvr_demo **out, const rlvr_task *task) { return demo_new(out, task, false); }

int rlvr_demo_new_recovery(rlvr_demo **out, const rlvr_task *task) { return demo_new(out, task, true); }

int rlvr_demo_mistake(const rlvr_demo *d) { return d->mistake; }

bool rlvr_demo_usable(const rlvr_demo *d, const rlvr_rollout *r, int32_t calls, int32_t calls_parsed) {
    if (r->stop != RLVR_STOP_DONE || calls != calls_parsed) return false;
    for (int32_t t = 0; t < r->n_turns; t++) {
        bool refused = r->turns[t].exit_status != 0;
        if (r->turns[t].tool_name[0] && refused != (t == d->mistake)) return false;
    }
    return d->mistake < 0 || d->mistake < r->n_turns;
}

void rlvr_demo_mask_mistake(const rlvr_demo *d, rlvr_rollout *r) {
    if (d->mistake < 0 || d->mistake >= r->n_turns) return;
    const rlvr_turn *t = &r->turns[d->mistake];
    for (int32_t k = t->policy_start; k < t->policy_end && k < r->n_tokens; k++)
        if (r->mask[k] == RLVR_TOKEN_POLICY) r->mask[k] = RLVR_TOKEN_PROMPT;
}

void rlvr_demo_free(rlvr_demo *d) {
    if (!d) return;
    for (int i = 0; i < d->n_calls; i++) free(d->calls[i]);
    free(d->answer);
    free(d);
}

int rlvr_demo_turns(const rlvr_demo *d) { return d->n_calls + (d->answer ? 1 : 0); }

const char *rlvr_demo_call(const rlvr_demo *d, int i) { return i >= 0 && i < d->n_calls ? d->calls[i] : NULL; }

int rlvr_demo_script(void *arg, const rlvr_rollout *so_far, int32_t turn, const rlvr_tokenizer *tok,
                     rlvr_token_buf *out) {
    (void)so_far;
    const rlvr_demo *d = arg;
    if (turn < d->n_calls)
        return rlvr_template_assistant_reply(out, tok, "", 0, d->calls[turn], strlen(d->calls[turn]));
    const char *a = d->answer ? d->answer : "";
    return rlvr_template_assistant_reply(out, tok, a, strlen(a), NULL, 0);
}
