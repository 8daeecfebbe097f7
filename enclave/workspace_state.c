/* enclave/workspace_state.c — a workspace's state at a turn boundary:
 * snapshot, restore into a fresh workspace, and the archive between them
 * (enclave/workspace.h; format: docs/FORMATS.md "Workspace state").
 *
 * Both halves run inside a workspace's sandbox, as the runtime's own code
 * (rlvr_sandbox_call): the snapshot walks /work beside the pristine tree,
 * which runtime calls see read-only at /.rlvr/lower, and prints the archive;
 * the restore gets the archive as its argument and applies it under /work.
 * The runtime's process never opens a file the policy wrote: it only holds
 * archive bytes, which one parser (state_parse) checks on both sides. */
#include "enclave/workspace.h"

#include "core/error.h"
#include "core/flat.h"
#include "enclave/fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STATE_MAGIC "RLVR-STATE 1\n"
#define STATE_MAGIC_LEN (sizeof STATE_MAGIC - 1)
#define ENTRY_HEAD 17  /* kind, mode (u32), path length (u32), content length (u64) */
#define TRAILER_LEN 41 /* 'E', then files, dirs, deleted, bytes, stripped (u64 each) */
/* the longest path an archive carries: "/.rlvr/lower/" + path fits PATH_MAX */
#define STATE_PATH_MAX 4000
/* a path being walked (one name may overshoot before it is refused) and
 * the same under /work or /.rlvr/lower */
#define REL_CAP (STATE_PATH_MAX + NAME_MAX + 2)
#define ABS_CAP (REL_CAP + 16)

enum { KIND_DIR = 'D', KIND_FILE = 'F', KIND_DELETE = 'X', KIND_END = 'E' };

/* exit codes of the functions run in the sandbox */
enum { FN_OK = 0, FN_ERROR = 2, FN_OUTPUT = 3, FN_LIMIT = 4 };

struct rlvr_workspace_state {
    char *data; /* the archive */
    size_t len;
    rlvr_workspace_state_stats stats;
};

typedef struct {
    char kind;
    uint32_t mode;
    const char *path; /* path_len bytes, not NUL-terminated */
    size_t path_len;
    const char *data; /* content (files) */
    uint64_t size;
} state_entry;

static void put_u32(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put_u64(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get_u32(const unsigned char *p) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}
static uint64_t get_u64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

/* ---- the parser (runtime and sandbox) ----------------------------------------------- */

/* A path the restore may apply: relative, below /work, one name per
 * component. Anything else would let an archive write outside the tree. */
static int check_path(const char *p, size_t n, size_t at) {
    if (n == 0) return RLVR_FAIL(RLVR_EFORMAT, "workspace state: empty path in the entry at byte %zu", at);
    if (n > STATE_PATH_MAX)
        return RLVR_FAIL(RLVR_EFORMAT, "workspace state: path of %zu bytes (at most %d) in the entry at byte %zu", n,
                         STATE_PATH_MAX, at);
    if (memchr(p, '\0', n)) return RLVR_FAIL(RLVR_EFORMAT, "workspace state: NUL in the path of the entry at byte %zu", at);
    if (p[0] == '/') return RLVR_FAIL(RLVR_EFORMAT, "workspace state: absolute path in the entry at byte %zu", at);
    for (size_t i = 0; i <= n;) {
        const char *slash = memchr(p + i, '/', n - i);
        size_t len = slash ? (size_t)(slash - (p + i)) : n - i;
        if (len == 0) return RLVR_FAIL(RLVR_EFORMAT, "workspace state: empty component in the path of the entry at byte %zu", at);
        if ((len == 1 && p[i] == '.') || (len == 2 && p[i] == '.' && p[i + 1] == '.'))
            return RLVR_FAIL(RLVR_EFORMAT, "workspace state: '%.*s' component in the path of the entry at byte %zu", (int)len,
                             p + i, at);
        if (len > NAME_MAX)
            return RLVR_FAIL(RLVR_EFORMAT, "workspace state: a name longer than %d bytes in the entry at byte %zu", NAME_MAX, at);
        i += len + 1;
    }
    return 0;
}

typedef int (*state_visit)(const state_entry *e, void *ctx);

/* Checks the whole archive: the header, every entry (kind, mode, lengths,
 * path), the trailer's counts against the entries, nothing after it. With
 * `visit`, calls it on each entry in order; a caller that must not act on a
 * malformed archive parses once without `visit` first. */
static int state_parse(const char *data, size_t len, state_visit visit, void *ctx, rlvr_workspace_state_stats *stats) {
    const unsigned char *p = (const unsigned char *)data;
    if (len > RLVR_WORKSPACE_STATE_MAX_BYTES)
        return RLVR_FAIL(RLVR_EFORMAT, "workspace state: %zu bytes, more than a state may have (%zu)", len,
                         RLVR_WORKSPACE_STATE_MAX_BYTES);
    if (len < STATE_MAGIC_LEN || memcmp(p, STATE_MAGIC, STATE_MAGIC_LEN) != 0)
        return RLVR_FAIL(RLVR_EFORMAT, "workspace state: no \"RLVR-STATE 1\" header (not an archive, or another version)");
    rlvr_workspace_state_stats seen = {0};
    size_t at = STATE_MAGIC_LEN;
    for (;;) {
        if (at == len) return RLVR_FAIL(RLVR_EFORMAT, "workspace state: truncated at byte %zu (no trailer)", at);
        if (p[at] == KIND_END) break;
        if (len - at < ENTRY_HEAD) return RLVR_FAIL(RLVR_EFORMAT, "workspace state: truncated entry at byte %zu", at);
        state_entry e = {.kind = (char)p[at], .mode = get_u32(p + at + 1)};
        uint32_t path_len = get_u32(p + at + 5);
        e.size = get_u64(p + at + 9);
        if (e.kind != KIND_DIR && e.kind != KIND_FILE && e.kind != KIND_DELETE)
            return RLVR_FAIL(RLVR_EFORMAT, "workspace state: unknown entry kind 0x%02x at byte %zu", p[at], at);
        if (e.mode > 0777 || (e.kind == KIND_DELETE && e.mode != 0))
            return RLVR_FAIL(RLVR_EFORMAT, "workspace state: mode %o in the entry at byte %zu", e.mode, at);
        if (e.kind != KIND_FILE && e.size != 0)
            return RLVR_FAIL(RLVR_EFORMAT, "workspace state: content in a '%c' entry at byte %zu", e.kind, at);
        size_t rest = len - at - ENTRY_HEAD;
        if (path_len > rest || e.size > rest - path_len)
            return RLVR_FAIL(RLVR_EFORMAT, "workspace state: the entry at byte %zu runs past the end (%zu bytes)", at, len);
        e.path = data + at + ENTRY_HEAD;
        e.path_len = path_len;
        e.data = e.path + path_len;
        RLVR_TRY(check_path(e.path, e.path_len, at));
        if (e.kind == KIND_FILE) seen.files++, seen.bytes += (int64_t)e.size;
        else if (e.kind == KIND_DIR) seen.dirs++;
        else seen.deleted++;
        if (visit) RLVR_TRY(visit(&e, ctx));
        at += ENTRY_HEAD + path_len + (size_t)e.size;
    }
    if (len - at != TRAILER_LEN)
        return RLVR_FAIL(RLVR_EFORMAT, "workspace state: a trailer of %zu bytes at byte %zu (%d expected)", len - at, at,
                         TRAILER_LEN);
    uint64_t files = get_u64(p + at + 1), dirs = get_u64(p + at + 9), deleted = get_u64(p + at + 17),
             bytes = get_u64(p + at + 25), stripped = get_u64(p + at + 33);
    if (files != (uint64_t)seen.files || dirs != (uint64_t)seen.dirs || deleted != (uint64_t)seen.deleted ||
        bytes != (uint64_t)seen.bytes || stripped > INT64_MAX)
        return RLVR_FAIL(RLVR_EFORMAT, "workspace state: the trailer's counts disagree with the entries");
    seen.stripped = (int64_t)stripped;
    if (stats) *stats = seen;
    return 0;
}

/* ---- the snapshot (inside the sandbox) ------------------------------------------------ */

typedef enum { NODE_NONE, NODE_FILE, NODE_DIR, NODE_LINK, NODE_OTHER } node_kind;

static node_kind kind_of(mode_t m) {
    return S_ISREG(m) ? NODE_FILE : S_ISDIR(m) ? NODE_DIR : S_ISLNK(m) ? NODE_LINK : NODE_OTHER;
}

typedef struct {
    char *buf; /* the archive so far */
    size_t len, cap;
    rlvr_workspace_state_stats stats;
} snap_walk;

/* Room for `n` more bytes and the trailer, within the cap. */
static int walk_reserve(snap_walk *w, size_t n) {
    size_t max = RLVR_WORKSPACE_STATE_MAX_BYTES;
    if (n > max || w->len + n + TRAILER_LEN > max)
        return RLVR_FAIL(RLVR_ELIMIT, "the workspace's changes need more than the %zu bytes a state may carry", max);
    if (w->len + n + TRAILER_LEN <= w->cap) return 0;
    size_t cap = w->cap ? w->cap : 65536;
    while (cap < w->len + n + TRAILER_LEN) cap *= 2;
    if (cap > max) cap = max;
    char *grown = realloc(w->buf, cap);
    if (!grown) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    w->buf = grown;
    w->cap = cap;
    return 0;
}

static int walk_entry(snap_walk *w, char kind, uint32_t mode, const char *rel, uint64_t size) {
    size_t n = strlen(rel);
    RLVR_TRY(walk_reserve(w, ENTRY_HEAD + n + (size_t)size));
    unsigned char *h = (unsigned char *)w->buf + w->len;
    h[0] = (unsigned char)kind;
    put_u32(h + 1, mode);
    put_u32(h + 5, (uint32_t)n);
    put_u64(h + 9, size);
    memcpy(w->buf + w->len + ENTRY_HEAD, rel, n);
    w->len += ENTRY_HEAD + n;
    if (kind == KIND_FILE) w->stats.files++, w->stats.bytes += (int64_t)size;
    else if (kind == KIND_DIR) w->stats.dirs++;
    else w->stats.deleted++;
    return 0;
}

/* Opens a file of /work for reading; one its mode makes unreadable (the
 * rollout's chmod, and the sandbox has no capability to override it) is
 * opened under a moment's u+r, its own mode put back at once. */
static int open_readable(const char *path, mode_t mode) {
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0 || errno != EACCES || (mode & 0400)) return fd;
    if (chmod(path, (mode & 07777) | 0400) != 0) return -1;
    fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    int saved = errno;
    if (chmod(path, mode & 07777) != 0 && fd >= 0) {
        close(fd);
        return -1;
    }
    errno = saved;
    return fd;
}

/* Reads exactly `n` bytes of `fd` into `buf` (the file is not written
 * meanwhile: no other process of the workspace runs). */
static int read_exact(int fd, char *buf, size_t n, const char *rel) {
    for (size_t off = 0; off < n;) {
        ssize_t r = read(fd, buf + off, n - off);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return rlvr_error_errno_at(__FILE__, __LINE__, "reading %s", rel);
        if (r == 0) return RLVR_FAIL(RLVR_ESTATE, "%s shrank while it was read", rel);
        off += (size_t)r;
    }
    return 0;
}

/* Whether two files of `size` bytes hold the same bytes. */
static int same_content(const char *wpath, mode_t wmode, const char *lpath, size_t size, const char *rel, bool *same) {
    *same = true;
    int a = open_readable(wpath, wmode), b = a >= 0 ? open(lpath, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : -1;
    int rc = a < 0 || b < 0 ? rlvr_error_errno_at(__FILE__, __LINE__, "opening %s", rel) : 0;
    static char x[65536], y[65536];
    for (size_t off = 0; rc == 0 && off < size && *same;) {
        size_t n = size - off < sizeof x ? size - off : sizeof x;
        rc = read_exact(a, x, n, rel);
        if (rc == 0) rc = read_exact(b, y, n, rel);
        if (rc == 0) *same = memcmp(x, y, n) == 0;
        off += n;
    }
    if (a >= 0) close(a);
    if (b >= 0) close(b);
    return rc;
}

/* A new or changed file: its entry and content. */
static int walk_file(snap_walk *w, const char *wpath, const struct stat *st, const char *rel) {
    size_t size = (size_t)st->st_size;
    RLVR_TRY(walk_entry(w, KIND_FILE, st->st_mode & 0777, rel, size));
    int fd = open_readable(wpath, st->st_mode);
    if (fd < 0) return rlvr_error_errno_at(__FILE__, __LINE__, "opening %s", rel);
    int rc = read_exact(fd, w->buf + w->len, size, rel);
    close(fd);
    w->len += size;
    return rc;
}

static int walk_dir(snap_walk *w, char *rel, size_t rel_len, mode_t mode, bool in_lower);

/* `rel` under /work and under the pristine tree. The buffers are static:
 * the walk recurses once per directory level (a path of 4 000 bytes may
 * be 2 000 deep), so its frames keep no path buffers; the snapshot runs
 * alone in its own process. Valid until the next call. */
static const char *work_path(const char *rel) {
    static char buf[ABS_CAP];
    snprintf(buf, sizeof buf, rel[0] ? "/work/%s" : "/work", rel);
    return buf;
}
static const char *lower_path(const char *rel) {
    static char buf[ABS_CAP];
    snprintf(buf, sizeof buf, rel[0] ? "/.rlvr/lower/%s" : "/.rlvr/lower", rel);
    return buf;
}

/* One name of a directory, in /work (`in_work`), in the pristine tree
 * (`in_lower`) or both: the entries it needs. `rel` is its path. */
static int walk_name(snap_walk *w, char *rel, size_t rel_len, bool in_work, bool in_lower) {
    const char *wpath = work_path(rel), *lpath = lower_path(rel);
    struct stat ws, ls;
    if (in_work && lstat(wpath, &ws) != 0) return rlvr_error_errno_at(__FILE__, __LINE__, "stat %s", rel);
    if (in_lower && lstat(lpath, &ls) != 0) return rlvr_error_errno_at(__FILE__, __LINE__, "stat %s", rel);
    node_kind wk = in_work ? kind_of(ws.st_mode) : NODE_NONE, lk = in_lower ? kind_of(ls.st_mode) : NODE_NONE;
    if (lk != NODE_NONE && wk == lk) {
        if (wk == NODE_DIR) {
            if ((ws.st_mode & 0777) != (ls.st_mode & 0777)) RLVR_TRY(walk_entry(w, KIND_DIR, ws.st_mode & 0777, rel, 0));
            return walk_dir(w, rel, rel_len, ws.st_mode, true);
        }
        if (wk == NODE_FILE) {
            bool same = (ws.st_mode & 0777) == (ls.st_mode & 0777) && ws.st_size == ls.st_size;
            if (same) RLVR_TRY(same_content(wpath, ws.st_mode, lpath, (size_t)ws.st_size, rel, &same));
            return same ? 0 : walk_file(w, wpath, &ws, rel);
        }
        if (wk == NODE_LINK) {
            /* a link of the pristine tree, left alone or pointed elsewhere:
             * a changed one cannot be carried, and goes */
            static char a[PATH_MAX], b[PATH_MAX];
            ssize_t na = readlink(wpath, a, sizeof a), nb = readlink(lpath, b, sizeof b);
            if (na < 0 || nb < 0) return rlvr_error_errno_at(__FILE__, __LINE__, "readlink %s", rel);
            if (na == nb && memcmp(a, b, (size_t)na) == 0) return 0;
        } else {
            return 0; /* no such thing in a git tree; unchanged as far as a state goes */
        }
    }
    /* gone, or of another type: the pristine path goes first */
    if (lk != NODE_NONE) RLVR_TRY(walk_entry(w, KIND_DELETE, 0, rel, 0));
    switch (wk) {
    case NODE_NONE: return 0;
    case NODE_FILE: return walk_file(w, wpath, &ws, rel);
    case NODE_DIR:
        RLVR_TRY(walk_entry(w, KIND_DIR, ws.st_mode & 0777, rel, 0));
        return walk_dir(w, rel, rel_len, ws.st_mode, false);
    default:
        /* links, devices, FIFOs, sockets: nothing that could reach outside
         * the tree is carried */
        w->stats.stripped++;
        return 0;
    }
}

/* Sorted names of a directory. */
static int names_of(const char *path, char ***names, size_t *n) {
    DIR *d = opendir(path);
    if (!d) return rlvr_error_errno_at(__FILE__, __LINE__, "opening directory %s", path);
    int rc = rlvr_fs_sorted_names(d, names, n);
    closedir(d);
    return rc;
}

/* The directory `rel` ("" for the top): its names in /work and the
 * pristine tree merged in sorted order, each walked. A directory of /work
 * whose mode keeps its owner out is opened up (u+rwx) for the walk below
 * it and given its mode back after. */
static int walk_dir(snap_walk *w, char *rel, size_t rel_len, mode_t mode, bool in_lower) {
    bool opened_up = rel_len > 0 && (mode & 0700) != 0700;
    if (opened_up && chmod(work_path(rel), (mode & 07777) | 0700) != 0)
        return rlvr_error_errno_at(__FILE__, __LINE__, "opening up directory %s", rel);
    char **wn = NULL, **ln = NULL;
    size_t nw = 0, nl = 0;
    int rc = names_of(work_path(rel), &wn, &nw);
    if (rc == 0 && in_lower) rc = names_of(lower_path(rel), &ln, &nl);
    for (size_t i = 0, j = 0; rc == 0 && (i < nw || j < nl);) {
        int c = i == nw ? 1 : j == nl ? -1 : strcmp(wn[i], ln[j]);
        const char *name = c <= 0 ? wn[i] : ln[j];
        size_t len = rel_len + (rel_len ? 1 : 0) + strlen(name);
        if (len > STATE_PATH_MAX) {
            rc = RLVR_FAIL(RLVR_ELIMIT, "a path in the workspace is longer than the %d bytes a state carries",
                           STATE_PATH_MAX);
            break;
        }
        if (rel_len) rel[rel_len] = '/';
        strcpy(rel + rel_len + (rel_len ? 1 : 0), name);
        rc = walk_name(w, rel, len, c <= 0, c >= 0);
        rel[rel_len] = '\0';
        if (c <= 0) i++;
        if (c >= 0) j++;
    }
    rlvr_fs_free_names(wn, nw);
    rlvr_fs_free_names(ln, nl);
    if (opened_up && chmod(work_path(rel), mode & 07777) != 0 && rc == 0)
        rc = rlvr_error_errno_at(__FILE__, __LINE__, "restoring the mode of directory %s", rel);
    return rc;
}

/* rlvr_sandbox_call's function: the archive on stdout, or "RLVR-LIMIT msg"
 * (FN_LIMIT) or "RLVR-ERROR msg" (FN_ERROR). The archive is built whole
 * before a byte is written, so an answer is one or the other. */
static int snapshot_fn(void *arg) {
    (void)arg;
    snap_walk w = {0};
    static char rel[REL_CAP];
    rel[0] = '\0';
    int rc = walk_reserve(&w, STATE_MAGIC_LEN);
    if (rc == 0) {
        memcpy(w.buf, STATE_MAGIC, STATE_MAGIC_LEN);
        w.len = STATE_MAGIC_LEN;
        rc = walk_dir(&w, rel, 0, 0755, true);
    }
    if (rc < 0) {
        printf("%s %s\n", rc == RLVR_ELIMIT ? "RLVR-LIMIT" : "RLVR-ERROR", rlvr_error_last());
        free(w.buf);
        return rc == RLVR_ELIMIT ? FN_LIMIT : FN_ERROR;
    }
    unsigned char *t = (unsigned char *)w.buf + w.len; /* walk_reserve kept room for it */
    t[0] = KIND_END;
    put_u64(t + 1, (uint64_t)w.stats.files);
    put_u64(t + 9, (uint64_t)w.stats.dirs);
    put_u64(t + 17, (uint64_t)w.stats.deleted);
    put_u64(t + 25, (uint64_t)w.stats.bytes);
    put_u64(t + 33, (uint64_t)w.stats.stripped);
    w.len += TRAILER_LEN;
    size_t wrote = fwrite(w.buf, 1, w.len, stdout);
    free(w.buf);
    return wrote == w.len && fflush(stdout) == 0 ? FN_OK : FN_OUTPUT;
}

/* A run's wall time for the state's calls: the workspace's own limit. */
static double call_wall_s(rlvr_workspace *ws) { return rlvr_sandbox_get_limits(rlvr_workspace_sandbox(ws))->wall_s; }

/* What a failed call said, for a message. */
static const char *call_message(const rlvr_sandbox_result *res, const char *prefix) {
    size_t n = strlen(prefix);
    return res->out && strncmp(res->out, prefix, n) == 0 ? res->out + n : "no answer";
}

int rlvr_workspace_snapshot(rlvr_workspace *ws, rlvr_workspace_state **out) {
    *out = NULL;
    rlvr_sandbox_result res;
    RLVR_TRY(rlvr_sandbox_call(rlvr_workspace_sandbox(ws), snapshot_fn, NULL, 0, call_wall_s(ws),
                               (int64_t)RLVR_WORKSPACE_STATE_MAX_BYTES + 4096, &res));
    rlvr_workspace_state *st = NULL;
    int rc = 0;
    if (res.limit == RLVR_LIMIT_NONE && res.exit_code == FN_LIMIT) {
        rc = RLVR_FAIL(RLVR_ELIMIT, "snapshot of the workspace: %s", call_message(&res, "RLVR-LIMIT "));
    } else if (res.out_truncated || res.exit_code != FN_OK || res.limit != RLVR_LIMIT_NONE) {
        rc = RLVR_FAIL(RLVR_ESANDBOX, "snapshot in the workspace failed (exit %d, limit %s): %s", res.exit_code,
                       rlvr_sandbox_limit_name(res.limit), call_message(&res, "RLVR-ERROR "));
    } else if (!(st = calloc(1, sizeof *st))) {
        rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    } else {
        /* the answer is the archive: kept as it came, checked like any other */
        st->data = res.out;
        st->len = res.out_len;
        res.out = NULL;
        rc = state_parse(st->data, st->len, NULL, NULL, &st->stats);
        if (rc < 0) rc = rlvr_error_wrap(RLVR_ESANDBOX, "the snapshot in the workspace gave a malformed archive");
    }
    rlvr_sandbox_result_free(&res);
    if (rc < 0) {
        rlvr_workspace_state_free(st);
        return rc;
    }
    *out = st;
    return 0;
}

/* ---- the restore (inside the sandbox) ------------------------------------------------- */

typedef struct {
    int work; /* /work */
    /* the directories' entries, whose modes are set last: a directory made
     * read-only or unsearchable must still take the entries below it */
    const state_entry *dirs;
    size_t n_dirs, cap_dirs;
} restore_ctx;

/* The directory holding `path` (below /work), reached one component at a
 * time without following a link: a link of the pristine tree never takes a
 * write outside /work. `leaf` gets the last component (in `buf`). */
static int open_parent(const restore_ctx *c, const state_entry *e, char *buf, const char **leaf) {
    memcpy(buf, e->path, e->path_len);
    buf[e->path_len] = '\0';
    int fd = c->work;
    char *name = buf;
    for (char *slash; (slash = strchr(name, '/')); name = slash + 1) {
        *slash = '\0';
        int next = openat(fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int saved = errno;
        if (fd != c->work) close(fd);
        errno = saved;
        if (next < 0) {
            *slash = '/';
            return rlvr_error_errno_at(__FILE__, __LINE__, "%s: reaching its directory", buf);
        }
        *slash = '/';
        fd = next;
    }
    *leaf = name;
    return fd;
}

static int write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int apply_entry(const state_entry *e, void *ctx) {
    restore_ctx *c = ctx;
    char path[STATE_PATH_MAX + 1];
    const char *leaf = NULL;
    int dir = open_parent(c, e, path, &leaf);
    if (dir < 0) return dir;
    int rc = 0;
    struct stat st;
    if (e->kind == KIND_DELETE) {
        /* the path is the pristine tree's: missing means another task's state */
        if (fstatat(dir, leaf, &st, AT_SYMLINK_NOFOLLOW) != 0) rc = rlvr_error_errno_at(__FILE__, __LINE__, "%s: deleting it", path);
        else if (S_ISDIR(st.st_mode)) rc = rlvr_fs_remove_at(dir, leaf);
        else if (unlinkat(dir, leaf, 0) != 0) rc = rlvr_error_errno_at(__FILE__, __LINE__, "%s: deleting it", path);
    } else if (e->kind == KIND_DIR) {
        if (mkdirat(dir, leaf, 0700) != 0 &&
            (errno != EEXIST || fstatat(dir, leaf, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)))
            rc = rlvr_error_errno_at(__FILE__, __LINE__, "%s: making the directory", path);
        if (rc == 0 && c->n_dirs == c->cap_dirs) {
            size_t cap = c->cap_dirs ? 2 * c->cap_dirs : 64;
            state_entry *grown = realloc((void *)c->dirs, cap * sizeof *grown);
            if (!grown) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
            else c->dirs = grown, c->cap_dirs = cap;
        }
        if (rc == 0) ((state_entry *)c->dirs)[c->n_dirs++] = *e;
    } else {
        /* a file of the pristine tree is replaced, never written through:
         * its inode may be a read-only bind or shared by a hard link */
        if (unlinkat(dir, leaf, 0) != 0 && errno != ENOENT)
            rc = rlvr_error_errno_at(__FILE__, __LINE__, "%s: replacing it", path);
        int fd = rc == 0 ? openat(dir, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
        if (rc == 0 && fd < 0) rc = rlvr_error_errno_at(__FILE__, __LINE__, "%s: creating it", path);
        if (rc == 0 && (write_all(fd, e->data, (size_t)e->size) != 0 || fchmod(fd, e->mode) != 0))
            rc = rlvr_error_errno_at(__FILE__, __LINE__, "%s: writing it", path);
        if (fd >= 0 && close(fd) != 0 && rc == 0) rc = rlvr_error_errno_at(__FILE__, __LINE__, "%s: writing it", path);
    }
    if (dir != c->work) close(dir);
    return rc;
}

/* The directories' modes, deepest first (their entries come in pre-order). */
static int apply_dir_modes(restore_ctx *c) {
    for (size_t i = c->n_dirs; i-- > 0;) {
        const state_entry *e = &c->dirs[i];
        char path[STATE_PATH_MAX + 1];
        const char *leaf = NULL;
        int dir = open_parent(c, e, path, &leaf);
        if (dir < 0) return dir;
        struct stat st;
        int rc = 0;
        if (fstatat(dir, leaf, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) || fchmodat(dir, leaf, e->mode, 0) != 0)
            rc = rlvr_error_errno_at(__FILE__, __LINE__, "%s: setting the directory's mode", path);
        if (dir != c->work) close(dir);
        RLVR_TRY(rc);
    }
    return 0;
}

/* restore_fn's argument: a flat image with this at its root */
typedef struct {
    uint64_t archive; /* offset of the archive's bytes */
    uint64_t len;
} restore_arg;

/* rlvr_sandbox_call's function: "RLVR-RESTORED\n", or "RLVR-ERROR msg".
 * The archive is checked whole before anything is written, so a malformed
 * one leaves /work untouched. */
static int restore_fn(void *p) {
    const restore_arg *a = rlvr_flat_at(p, RLVR_FLAT_FIRST);
    const char *data = rlvr_flat_at(p, a->archive);
    restore_ctx c = {.work = -1};
    int rc = state_parse(data, (size_t)a->len, NULL, NULL, NULL);
    if (rc == 0 && (c.work = open("/work", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
        rc = rlvr_error_errno_at(__FILE__, __LINE__, "opening /work");
    if (rc == 0) rc = state_parse(data, (size_t)a->len, apply_entry, &c, NULL);
    if (rc == 0) rc = apply_dir_modes(&c);
    if (c.work >= 0) close(c.work);
    free((void *)c.dirs);
    if (rc < 0) {
        printf("RLVR-ERROR %s\n", rlvr_error_last());
        return FN_ERROR;
    }
    printf("RLVR-RESTORED\n");
    return fflush(stdout) == 0 ? FN_OK : FN_OUTPUT;
}

int rlvr_workspace_restore(rlvr_workspace *ws, const rlvr_workspace_state *st) {
    if (!ws || !st) return RLVR_FAIL(RLVR_EINVAL, "restoring a workspace state: no workspace or no state");
    /* the pristine tree is what a fresh workspace already has */
    if (rlvr_workspace_state_empty(st)) return 0;
    rlvr_flat f = {0};
    uint64_t root = rlvr_flat_put(&f, NULL, sizeof(restore_arg));
    restore_arg arg = {.archive = rlvr_flat_put(&f, st->data, st->len), .len = st->len};
    if (!f.failed) memcpy(f.data + root, &arg, sizeof arg);
    rlvr_sandbox_result res;
    int call = f.failed ? RLVR_FAIL(RLVR_ENOMEM, "out of memory")
                        : rlvr_sandbox_call(rlvr_workspace_sandbox(ws), restore_fn, f.data, f.len, call_wall_s(ws), 4096, &res);
    rlvr_flat_free(&f);
    RLVR_TRY(call);
    int rc = 0;
    if (res.exit_code != FN_OK || res.limit != RLVR_LIMIT_NONE || strcmp(res.out, "RLVR-RESTORED\n") != 0)
        rc = RLVR_FAIL(RLVR_ESANDBOX, "restoring the state in the workspace failed (exit %d, limit %s): %s", res.exit_code,
                       rlvr_sandbox_limit_name(res.limit), call_message(&res, "RLVR-ERROR "));
    rlvr_sandbox_result_free(&res);
    return rc;
}

/* ---- the archive in the runtime --------------------------------------------------------- */

const void *rlvr_workspace_state_bytes(const rlvr_workspace_state *st, size_t *len) {
    *len = st->len;
    return st->data;
}

int rlvr_workspace_state_from_bytes(rlvr_workspace_state **out, const void *data, size_t len) {
    *out = NULL;
    rlvr_workspace_state_stats stats;
    RLVR_TRY(state_parse(data, len, NULL, NULL, &stats));
    rlvr_workspace_state *st = calloc(1, sizeof *st);
    char *copy = malloc(len + 1);
    if (!st || !copy) {
        free(st);
        free(copy);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    }
    memcpy(copy, data, len);
    copy[len] = '\0';
    st->data = copy;
    st->len = len;
    st->stats = stats;
    *out = st;
    return 0;
}

bool rlvr_workspace_state_equal(const rlvr_workspace_state *a, const rlvr_workspace_state *b) {
    return a->len == b->len && memcmp(a->data, b->data, a->len) == 0;
}

bool rlvr_workspace_state_empty(const rlvr_workspace_state *st) {
    return st->stats.files == 0 && st->stats.dirs == 0 && st->stats.deleted == 0;
}

void rlvr_workspace_state_stats_of(const rlvr_workspace_state *st, rlvr_workspace_state_stats *out) { *out = st->stats; }

void rlvr_workspace_state_free(rlvr_workspace_state *st) {
    if (!st) return;
    free(st->data);
    free(st);
}
