/* enclave/judge.c — building a task's judge programs in a throwaway enclave
 * and keeping them execute-only on the host. */
#include "enclave/judge.h"
#include "core/hash.h"

#include "core/config.h"
#include "core/error.h"
#include "core/text.h"
#include "enclave/fsutil.h"
#include "enclave/gitrepo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct rlvr_judge {
    char *dir;    /* in the host's judge cache: kept until the host is freed */
    char **names; /* the programs, NULL-terminated */
};

/* Built judges are kept under the host's scratch directory, one directory
 * per content key (the build command, the repository and base commit, every
 * hidden file's path and bytes): a task verified again (the pool check,
 * then training, then every evaluation; a training run that freed the
 * task's idle enclave) reuses its judge instead of building it again. A
 * build goes to a fresh directory that is renamed into place, so a
 * directory under its key is always complete; two threads building the same
 * judge keep the first rename. */
#define CACHE_DIR "judges"

/* Inside the build sandbox the programs go here ($RLVR_JUDGE_DIR); the
 * build's output goes to the log beside it. */
#define BUILD_OUT "/tmp/rlvr-judge"
#define BUILD_LOG "/tmp/rlvr-judge.log"
#define MAX_PROGRAM_BYTES (64ll << 20)
#define LOG_TAIL 4096

/* The stream judge_build_fn writes to stdout, read by read_stream:
 *   "RLVRJUDGE1"  int32 wait status  uint32 n  n bytes of the log's end
 *   per entry:    char kind ('F' file, 'X' not a regular file)
 *                 uint32 name length, name, and for 'F': uint64 size, bytes
 *   'E'           the end */
static const char stream_magic[] = "RLVRJUDGE1";

static int put(const void *data, size_t len) {
    const char *p = data;
    while (len > 0) {
        ssize_t n = write(1, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int put_file(int fd, uint64_t size) {
    char buf[65536];
    while (size > 0) {
        ssize_t n = read(fd, buf, size < sizeof buf ? size : sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        if (put(buf, (size_t)n) != 0) return -1;
        size -= (uint64_t)n;
    }
    return 0;
}

static int put_log(void) {
    char tail[LOG_TAIL];
    uint32_t n = 0;
    int fd = open(BUILD_LOG, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        off_t end = lseek(fd, 0, SEEK_END);
        off_t from = end > LOG_TAIL ? end - LOG_TAIL : 0;
        ssize_t got = pread(fd, tail, (size_t)(end - from), from);
        n = got > 0 ? (uint32_t)got : 0;
        close(fd);
    }
    return put(&n, sizeof n) || put(tail, n) ? -1 : 0;
}

/* Runs inside the build sandbox (the runtime's code, rlvr_sandbox_call):
 * the build command in a child, then its status, log and programs as the
 * stream above. `arg` is the command, NUL-terminated. */
static int judge_build_fn(void *arg) {
    const char *command = arg;
    if (mkdir(BUILD_OUT, 0755) != 0) return 2;
    int log = open(BUILD_LOG, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
    if (log < 0) return 2;
    pid_t pid = fork();
    if (pid < 0) return 2;
    if (pid == 0) {
        dup2(log, 1);
        dup2(log, 2);
        const char *argv[] = {"/bin/sh", "-c", command, NULL};
        const char *envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp", "LANG=C.UTF-8",
                              "RLVR_JUDGE_DIR=" BUILD_OUT, NULL};
        execve(argv[0], (char *const *)argv, (char *const *)envp);
        _exit(127);
    }
    close(log);
    int32_t status = 0;
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return 2;
    status = st;
    if (put(stream_magic, sizeof stream_magic - 1) || put(&status, sizeof status) || put_log()) return 3;
    DIR *d = opendir(BUILD_OUT);
    if (!d) return 3;
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        struct stat sb;
        uint32_t name_len = (uint32_t)strlen(e->d_name);
        int fd = -1;
        if (fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode) &&
            sb.st_size <= MAX_PROGRAM_BYTES)
            fd = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        char kind = fd >= 0 ? 'F' : 'X';
        uint64_t size = fd >= 0 ? (uint64_t)sb.st_size : 0;
        if (put(&kind, 1) || put(&name_len, sizeof name_len) || put(e->d_name, name_len)) rc = 3;
        if (rc == 0 && fd >= 0 && (put(&size, sizeof size) || put_file(fd, size))) rc = 3;
        if (fd >= 0) close(fd);
    }
    closedir(d);
    char end = 'E';
    if (rc == 0 && put(&end, 1)) rc = 3;
    return rc;
}

/* ---- the runtime side --------------------------------------------------------------- */

typedef struct {
    const char *p, *end;
} reader;

static bool take(reader *r, void *out, size_t n) {
    if ((size_t)(r->end - r->p) < n) return false;
    memcpy(out, r->p, n);
    r->p += n;
    return true;
}

static bool name_ok(const char *name, size_t len) {
    if (len == 0 || len > 255 || (len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
        return false;
    for (size_t i = 0; i < len; i++)
        if (name[i] == '/' || (unsigned char)name[i] < 0x20) return false;
    return true;
}

static int add_name(rlvr_judge *j, const char *name) {
    size_t n = 0;
    while (j->names && j->names[n]) n++;
    char **grown = realloc(j->names, (n + 2) * sizeof *grown);
    if (!grown) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    j->names = grown;
    grown[n] = strdup(name);
    grown[n + 1] = NULL;
    return grown[n] ? 0 : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
}

/* One program: written owner-only, then made execute-only. */
static int write_program(rlvr_judge *j, const char *name, const char *data, uint64_t size) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", j->dir, name);
    int fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return rlvr_error_errno_at(__FILE__, __LINE__, "creating judge program %s", path);
    int rc = 0;
    for (uint64_t done = 0; rc == 0 && done < size;) {
        ssize_t n = write(fd, data + done, (size_t)(size - done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) rc = rlvr_error_errno_at(__FILE__, __LINE__, "writing judge program %s", path);
        else done += (uint64_t)n;
    }
    if (rc == 0 && fchmod(fd, 0111) != 0) rc = rlvr_error_errno_at(__FILE__, __LINE__, "chmod %s", path);
    if (close(fd) != 0 && rc == 0) rc = rlvr_error_errno_at(__FILE__, __LINE__, "writing judge program %s", path);
    return rc == 0 ? add_name(j, name) : rc;
}

static int read_stream(rlvr_judge *j, const char *data, size_t len, const char *command) {
    reader r = {data, data + len};
    char magic[sizeof stream_magic - 1];
    int32_t status;
    uint32_t log_len;
    if (!take(&r, magic, sizeof magic) || memcmp(magic, stream_magic, sizeof magic) != 0 ||
        !take(&r, &status, sizeof status) || !take(&r, &log_len, sizeof log_len) || (size_t)(r.end - r.p) < log_len)
        return RLVR_FAIL(RLVR_ESANDBOX, "judge build: the build sandbox sent no answer");
    const char *log = r.p;
    r.p += log_len;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return rlvr_error_set(RLVR_EINVAL, "judge build \"%s\" %s %d; its output ends:\n%.*s", command,
                              WIFEXITED(status) ? "exited with status" : "was killed by signal",
                              WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), (int)log_len, log);
    for (;;) {
        char kind;
        uint32_t name_len;
        if (!take(&r, &kind, 1)) return RLVR_FAIL(RLVR_ESANDBOX, "judge build: the answer was cut short");
        if (kind == 'E') break;
        char name[256];
        if (!take(&r, &name_len, sizeof name_len) || name_len >= sizeof name || !take(&r, name, name_len))
            return RLVR_FAIL(RLVR_ESANDBOX, "judge build: the answer was cut short");
        name[name_len] = '\0';
        if (kind != 'F' || !name_ok(name, name_len))
            return rlvr_error_set(RLVR_EINVAL,
                                  "judge build \"%s\" left \"%s\" in $RLVR_JUDGE_DIR: only regular files of at most "
                                  "64 MiB with plain names may be left there (each one a program)",
                                  command, name);
        uint64_t size;
        if (!take(&r, &size, sizeof size) || (uint64_t)(r.end - r.p) < size)
            return RLVR_FAIL(RLVR_ESANDBOX, "judge build: the answer was cut short");
        if (size < 4 || memcmp(r.p, "\177ELF", 4) != 0)
            return rlvr_error_set(RLVR_EINVAL,
                                  "judge build \"%s\" left \"%s\", which is not an ELF program: a judge must be "
                                  "compiled (the enclave runs it from a descriptor, which a script's interpreter "
                                  "could not reopen)",
                                  command, name);
        RLVR_TRY(write_program(j, name, r.p, size));
        r.p += size;
    }
    if (!j->names)
        return rlvr_error_set(RLVR_EINVAL,
                              "judge build \"%s\" left nothing in $RLVR_JUDGE_DIR: it must write the judge program "
                              "there (e.g. cc -o \"$RLVR_JUDGE_DIR/judge\" tests/judge.c)",
                              command);
    return 0;
}

/* Appends every file under dir/rel (sorted by readdir order is not stable:
 * names are collected and sorted) to the key text. */
static int key_files(rlvr_text *key, const char *dir, const char *rel, int depth) {
    if (depth > 32) return RLVR_FAIL(RLVR_ELIMIT, "hidden tests nested deeper than 32 directories");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s%s%s", dir, rel[0] ? "/" : "", rel);
    struct dirent **names = NULL;
    int n = scandir(path, &names, NULL, alphasort);
    if (n < 0) return rlvr_error_errno_at(__FILE__, __LINE__, "reading %s", path);
    int rc = 0;
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        char child[PATH_MAX], full[PATH_MAX * 2];
        if (rc == 0 && strcmp(name, ".") && strcmp(name, "..")) {
            snprintf(child, sizeof child, "%s%s%s", rel, rel[0] ? "/" : "", name);
            snprintf(full, sizeof full, "%s/%s", dir, child);
            struct stat st;
            if (lstat(full, &st) != 0) rc = rlvr_error_errno_at(__FILE__, __LINE__, "stat %s", full);
            else if (S_ISDIR(st.st_mode)) rc = key_files(key, dir, child, depth + 1);
            else {
                char *data = NULL;
                size_t len = 0;
                rc = S_ISREG(st.st_mode) ? rlvr_fs_read_file(full, &data, &len) : 0;
                rlvr_text_printf(key, "\n%s %zu\n", child, len);
                rlvr_text_append(key, data ? data : "", len);
                free(data);
            }
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

/* The cache directory of this judge's content. */
static int cache_path(char *out, size_t cap, rlvr_sandbox_host *host, const char *repo_dir, const char *base_commit,
                      const char *hidden_dir, const char *build_command) {
    rlvr_text key = {0};
    rlvr_text_printf(&key, "%s\n%s\n%s\n", build_command, repo_dir, base_commit);
    int rc = hidden_dir ? key_files(&key, hidden_dir, "", 0) : 0;
    if (rc == 0 && key.failed) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    if (rc == 0)
        snprintf(out, cap, "%s/" CACHE_DIR "/%016llx", rlvr_sandbox_host_scratch(host),
                 (unsigned long long)rlvr_fnv1a64(key.data, key.len));
    rlvr_text_free(&key);
    return rc;
}

/* The programs of a cached judge. */
static int read_cached(rlvr_judge *j) {
    DIR *d = opendir(j->dir);
    if (!d) return rlvr_error_errno_at(__FILE__, __LINE__, "reading %s", j->dir);
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) rc = add_name(j, e->d_name);
    closedir(d);
    return rc;
}

/* Builds into a fresh directory of the cache (j->dir). */
static int build(rlvr_judge *j, rlvr_sandbox_host *host, const char *repo_dir, const char *base_commit,
                 const char *hidden_dir, const char *build_command, const rlvr_sandbox_limits *limits) {
    rlvr_snapshot *snap = NULL;
    rlvr_sandbox *sb = NULL;
    rlvr_sandbox_result res;
    memset(&res, 0, sizeof res);
    char tree[41];
    int rc = rlvr_snapshot_new(&snap, host);
    if (rc == 0) rc = rlvr_git_export(repo_dir, base_commit, rlvr_snapshot_path(snap), false, hidden_dir, tree);
    if (rc == 0) rc = rlvr_snapshot_seal(snap);
    if (rc == 0) {
        rlvr_sandbox_options opt = {.version = RLVR_SANDBOX_OPTIONS_VERSION, .kind = RLVR_SANDBOX_ENCLAVE,
                                    .tree = snap, .limits = *limits};
        rc = rlvr_sandbox_new(&sb, host, &opt);
    }
    if (rc == 0)
        rc = rlvr_sandbox_call(sb, judge_build_fn, build_command, strlen(build_command) + 1, 0,
                               MAX_PROGRAM_BYTES + (1 << 20), &res);
    if (rc == 0 && res.limit != RLVR_LIMIT_NONE)
        rc = rlvr_error_set(RLVR_EINVAL, "judge build \"%s\" hit the %s limit", build_command,
                            rlvr_sandbox_limit_name(res.limit));
    else if (rc == 0 && res.exit_code != 0)
        rc = rlvr_error_set(RLVR_ESANDBOX, "judge build: the build sandbox failed (step %d)", res.exit_code);
    if (rc == 0) rc = read_stream(j, res.out, res.out_len, build_command);
    /* readable and searchable, never writable: the programs are 0111 */
    if (rc == 0 && chmod(j->dir, 0555) != 0) rc = rlvr_error_errno_at(__FILE__, __LINE__, "chmod %s", j->dir);
    rlvr_sandbox_result_free(&res);
    rlvr_sandbox_free(sb);
    rlvr_snapshot_free(snap);
    return rc;
}

static void remove_dir(const char *dir) {
    chmod(dir, 0700);
    rlvr_fs_remove_tree(dir);
}

int rlvr_judge_build(rlvr_judge **out, rlvr_sandbox_host *host, const char *repo_dir, const char *base_commit,
                     const char *hidden_dir, const char *build_command, const rlvr_sandbox_limits *limits) {
    *out = NULL;
    if (!host || !repo_dir || !base_commit || !build_command || !build_command[0] || !limits)
        return RLVR_FAIL(RLVR_EINVAL, "judge build: host, repository, base commit, command and limits needed");
    char final[PATH_MAX], cache[PATH_MAX];
    snprintf(cache, sizeof cache, "%s/" CACHE_DIR, rlvr_sandbox_host_scratch(host));
    RLVR_TRY(cache_path(final, sizeof final, host, repo_dir, base_commit, hidden_dir, build_command));
    if (mkdir(cache, 0711) != 0 && errno != EEXIST) return rlvr_error_errno_at(__FILE__, __LINE__, "mkdir %s", cache);
    rlvr_judge *j = calloc(1, sizeof *j);
    if (!j) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    struct stat st;
    int rc = 0;
    if (stat(final, &st) == 0) {
        j->dir = strdup(final);
        rc = j->dir ? read_cached(j) : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    } else {
        rc = rlvr_fs_mkdtemp(&j->dir, cache, "build-");
        if (rc == 0) rc = build(j, host, repo_dir, base_commit, hidden_dir, build_command, limits);
        if (rc == 0 && rename(j->dir, final) != 0) {
            /* another thread's build of the same judge got there first */
            if (errno != EEXIST && errno != ENOTEMPTY) rc = rlvr_error_errno_at(__FILE__, __LINE__, "rename to %s", final);
            remove_dir(j->dir);
        }
        if (rc < 0 && j->dir) remove_dir(j->dir);
        if (rc == 0) {
            free(j->dir);
            j->dir = strdup(final);
            if (!j->dir) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        }
    }
    if (rc < 0) {
        rlvr_judge_free(j);
        return rlvr_error_wrap(rc, "building the judge in %s", hidden_dir ? hidden_dir : repo_dir);
    }
    *out = j;
    return 0;
}

const char *rlvr_judge_dir(const rlvr_judge *j) { return j->dir; }

bool rlvr_judge_has(const rlvr_judge *j, const char *name) {
    for (char **p = j->names; p && *p; p++)
        if (strcmp(*p, name) == 0) return true;
    return false;
}

void rlvr_judge_free(rlvr_judge *j) {
    if (!j) return;
    free(j->dir); /* the cache keeps the programs */
    for (char **p = j->names; p && *p; p++) free(*p);
    free(j->names);
    free(j);
}
