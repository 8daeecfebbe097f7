#include "enclave/fsutil.h"
#include "core/hash.h"

#include "core/config.h"
#include "core/error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int rlvr_fs_mkdtemp(char **out, const char *parent, const char *prefix) {
    *out = NULL;
    size_t n = strlen(parent) + strlen(prefix) + 8;
    char *path = malloc(n + 1);
    if (!path) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    snprintf(path, n + 1, "%s/%sXXXXXX", parent, prefix);
    if (!mkdtemp(path)) {
        int rc = rlvr_error_errno_at(__FILE__, __LINE__, "creating a directory under %s", parent);
        free(path);
        return rc;
    }
    *out = path;
    return 0;
}

/* ---- remove ------------------------------------------------------------- */

static int remove_at(int dir, const char *name, int depth);

static int remove_dir_contents(int fd, int depth) {
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return rlvr_error_errno_at(__FILE__, __LINE__, "opening a directory to remove it");
    }
    int rc = 0;
    for (;;) {
        errno = 0;
        struct dirent *e = readdir(d);
        if (!e) break;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        int r = remove_at(dirfd(d), e->d_name, depth + 1);
        if (r < 0 && rc == 0) rc = r;
    }
    closedir(d);
    return rc;
}

static int remove_at(int dir, const char *name, int depth) {
    if (depth > 256) return RLVR_FAIL(RLVR_ELIMIT, "directory tree deeper than 256 levels at %s", name);
    struct stat st;
    if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) return 0;
        return rlvr_error_errno_at(__FILE__, __LINE__, "stat %s", name);
    }
    if (!S_ISDIR(st.st_mode)) {
        if (unlinkat(dir, name, 0) != 0 && errno != ENOENT)
            return rlvr_error_errno_at(__FILE__, __LINE__, "removing %s", name);
        return 0;
    }
    if ((st.st_mode & 0700) != 0700) fchmodat(dir, name, 0700, 0);
    int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return rlvr_error_errno_at(__FILE__, __LINE__, "opening directory %s", name);
    int rc = remove_dir_contents(fd, depth);
    if (unlinkat(dir, name, AT_REMOVEDIR) != 0 && errno != ENOENT && rc == 0)
        rc = rlvr_error_errno_at(__FILE__, __LINE__, "removing directory %s", name);
    return rc;
}

int rlvr_fs_remove_at(int dir, const char *name) { return remove_at(dir, name, 0); }

int rlvr_fs_remove_tree(const char *path) {
    int rc = remove_at(AT_FDCWD, path, 0);
    return rc < 0 ? rlvr_error_wrap(rc, "removing %s", path) : 0;
}

/* ---- copy --------------------------------------------------------------- */

static int copy_file_fd(int in, int out) {
    char buf[65536];
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (n == 0) return 0;
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(out, buf + off, (size_t)(n - off));
            if (w < 0) {
                if (errno == EINTR) continue;
                return -1;
            }
            off += w;
        }
    }
}

static int copy_at(int sdir, int ddir, const char *name, const char *what, uid_t uid, gid_t gid, int depth);

static int copy_dir_contents(int sfd, int dfd, const char *what, uid_t uid, gid_t gid, int depth) {
    DIR *d = fdopendir(sfd);
    if (!d) {
        close(sfd);
        return rlvr_error_errno_at(__FILE__, __LINE__, "reading directory %s", what);
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        rc = copy_at(dirfd(d), dfd, e->d_name, what, uid, gid, depth + 1);
    }
    closedir(d);
    return rc;
}

static int copy_at(int sdir, int ddir, const char *name, const char *what, uid_t uid, gid_t gid, int depth) {
    if (depth > 256) return RLVR_FAIL(RLVR_ELIMIT, "copying %s: tree deeper than 256 levels", what);
    struct stat st;
    if (fstatat(sdir, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return rlvr_error_errno_at(__FILE__, __LINE__, "copying %s: stat %s", what, name);
    mode_t perm = st.st_mode & 07777 & ~(mode_t)(S_ISUID | S_ISGID);
    if (S_ISDIR(st.st_mode)) {
        if (mkdirat(ddir, name, 0700) != 0)
            return rlvr_error_errno_at(__FILE__, __LINE__, "copying %s: mkdir %s", what, name);
        int sfd = openat(sdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int dfd = openat(ddir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sfd < 0 || dfd < 0) {
            int rc = rlvr_error_errno_at(__FILE__, __LINE__, "copying %s: open directory %s", what, name);
            if (sfd >= 0) close(sfd);
            if (dfd >= 0) close(dfd);
            return rc;
        }
        int rc = copy_dir_contents(sfd, dfd, what, uid, gid, depth);
        if (rc == 0 && uid != (uid_t)-1 && fchown(dfd, uid, gid) != 0)
            rc = rlvr_error_errno_at(__FILE__, __LINE__, "copying %s: chown %s", what, name);
        if (rc == 0 && fchmod(dfd, perm) != 0)
            rc = rlvr_error_errno_at(__FILE__, __LINE__, "copying %s: chmod %s", what, name);
        close(dfd);
        return rc;
    }
    if (S_ISLNK(st.st_mode)) {
        char target[PATH_MAX];
        ssize_t n = readlinkat(sdir, name, target, sizeof target - 1);
        if (n < 0) return rlvr_error_errno_at(__FILE__, __LINE__, "copying %s: readlink %s", what, name);
        target[n] = '\0';
        if (symlinkat(target, ddir, name) != 0)
            return rlvr_error_errno_at(__FILE__, __LINE__, "copying %s: symlink %s", what, name);
        if (uid != (uid_t)-1 && fchownat(ddir, name, uid, gid, AT_SYMLINK_NOFOLLOW) != 0)
            return rlvr_error_errno_at(__FILE__, __LINE__, "copying %s: chown %s", what, name);
        return 0;
    }
    if (!S_ISREG(st.st_mode)) return 0;
    int in = openat(sdir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (in < 0) return rlvr_error_errno_at(__FILE__, __LINE__, "copying %s: open %s", what, name);
    int out = openat(ddir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (out < 0) {
        int rc = rlvr_error_errno_at(__FILE__, __LINE__, "copying %s: create %s", what, name);
        close(in);
        return rc;
    }
    int rc = 0;
    if (copy_file_fd(in, out) != 0) rc = rlvr_error_errno_at(__FILE__, __LINE__, "copying %s: %s", what, name);
    if (rc == 0 && uid != (uid_t)-1 && fchown(out, uid, gid) != 0)
        rc = rlvr_error_errno_at(__FILE__, __LINE__, "copying %s: chown %s", what, name);
    if (rc == 0 && fchmod(out, perm) != 0) rc = rlvr_error_errno_at(__FILE__, __LINE__, "copying %s: chmod %s", what, name);
    close(in);
    close(out);
    return rc;
}

int rlvr_fs_copy_tree(const char *src, const char *dst, uid_t uid, gid_t gid) {
    struct stat st;
    if (lstat(src, &st) != 0) return rlvr_error_errno_at(__FILE__, __LINE__, "copying %s", src);
    if (!S_ISDIR(st.st_mode)) return RLVR_FAIL(RLVR_EINVAL, "copying %s: not a directory", src);
    if (mkdir(dst, 0700) != 0) return rlvr_error_errno_at(__FILE__, __LINE__, "copying %s: mkdir %s", src, dst);
    int sfd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int dfd = open(dst, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sfd < 0 || dfd < 0) {
        int rc = rlvr_error_errno_at(__FILE__, __LINE__, "copying %s to %s: open", src, dst);
        if (sfd >= 0) close(sfd);
        if (dfd >= 0) close(dfd);
        return rc;
    }
    int rc = copy_dir_contents(sfd, dfd, src, uid, gid, 0);
    if (rc == 0 && uid != (uid_t)-1 && fchown(dfd, uid, gid) != 0)
        rc = rlvr_error_errno_at(__FILE__, __LINE__, "copying %s: chown %s", src, dst);
    if (rc == 0 && fchmod(dfd, st.st_mode & 0777) != 0)
        rc = rlvr_error_errno_at(__FILE__, __LINE__, "copying %s: chmod %s", src, dst);
    close(dfd);
    return rc;
}

static int merge_at(int sdir, int ddir, const char *name, const char *what, int depth) {
    if (depth > 256) return RLVR_FAIL(RLVR_ELIMIT, "merging %s: tree deeper than 256 levels", what);
    struct stat st, dt;
    if (fstatat(sdir, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return rlvr_error_errno_at(__FILE__, __LINE__, "merging %s: stat %s", what, name);
    bool exists = fstatat(ddir, name, &dt, AT_SYMLINK_NOFOLLOW) == 0;
    if (!S_ISDIR(st.st_mode) || (exists && !S_ISDIR(dt.st_mode))) {
        if (exists) {
            int r = S_ISDIR(dt.st_mode) ? remove_at(ddir, name, depth) : (unlinkat(ddir, name, 0) == 0 ? 0 : -1);
            if (r != 0) return rlvr_error_errno_at(__FILE__, __LINE__, "merging %s: replacing %s", what, name);
        }
        if (!S_ISDIR(st.st_mode)) return copy_at(sdir, ddir, name, what, (uid_t)-1, (gid_t)-1, depth);
        exists = false;
    }
    if (!exists && mkdirat(ddir, name, st.st_mode & 0777) != 0)
        return rlvr_error_errno_at(__FILE__, __LINE__, "merging %s: mkdir %s", what, name);
    int sfd = openat(sdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int dfd = openat(ddir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sfd < 0 || dfd < 0) {
        int rc = rlvr_error_errno_at(__FILE__, __LINE__, "merging %s: open %s", what, name);
        if (sfd >= 0) close(sfd);
        if (dfd >= 0) close(dfd);
        return rc;
    }
    DIR *d = fdopendir(sfd);
    if (!d) {
        close(sfd);
        close(dfd);
        return rlvr_error_errno_at(__FILE__, __LINE__, "merging %s: read %s", what, name);
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        rc = merge_at(dirfd(d), dfd, e->d_name, what, depth + 1);
    }
    closedir(d);
    close(dfd);
    return rc;
}

int rlvr_fs_merge_tree(const char *src, const char *dst) {
    int sfd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (sfd < 0) return rlvr_error_errno_at(__FILE__, __LINE__, "merging %s into %s", src, dst);
    int dfd = open(dst, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        close(sfd);
        return rlvr_error_errno_at(__FILE__, __LINE__, "merging %s into %s", src, dst);
    }
    DIR *d = fdopendir(sfd);
    if (!d) {
        close(sfd);
        close(dfd);
        return rlvr_error_errno_at(__FILE__, __LINE__, "reading %s", src);
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        rc = merge_at(dirfd(d), dfd, e->d_name, src, 1);
    }
    closedir(d);
    close(dfd);
    return rc;
}

/* ---- chown -------------------------------------------------------------- */

static int chown_at(int dir, const char *name, uid_t uid, gid_t gid, int depth) {
    if (depth > 256) return RLVR_FAIL(RLVR_ELIMIT, "chown: tree deeper than 256 levels");
    if (fchownat(dir, name, uid, gid, AT_SYMLINK_NOFOLLOW) != 0)
        return rlvr_error_errno_at(__FILE__, __LINE__, "chown %s", name);
    struct stat st;
    if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return rlvr_error_errno_at(__FILE__, __LINE__, "stat %s", name);
    if (!S_ISDIR(st.st_mode)) return 0;
    int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return rlvr_error_errno_at(__FILE__, __LINE__, "open %s", name);
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return rlvr_error_errno_at(__FILE__, __LINE__, "read %s", name);
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        rc = chown_at(dirfd(d), e->d_name, uid, gid, depth + 1);
    }
    closedir(d);
    return rc;
}

int rlvr_fs_chown_tree(const char *path, uid_t uid, gid_t gid) {
    int rc = chown_at(AT_FDCWD, path, uid, gid, 0);
    return rc < 0 ? rlvr_error_wrap(rc, "changing the owner of %s", path) : 0;
}

/* ---- hash --------------------------------------------------------------- */

static void fnv_update(uint64_t *h, const void *data, size_t n) { *h = rlvr_fnv1a64_update(*h, data, n); }

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int rlvr_fs_sorted_names(DIR *d, char ***out, size_t *count) {
    *out = NULL;
    *count = 0;
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *e;
    for (;;) {
        errno = 0;
        if (!(e = readdir(d))) {
            if (errno != 0) rc = rlvr_error_errno_at(__FILE__, __LINE__, "reading a directory");
            break;
        }
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            char **grown = realloc(names, cap * sizeof *names);
            if (!grown) {
                rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
                break;
            }
            names = grown;
        }
        names[n] = strdup(e->d_name);
        if (!names[n]) {
            rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
            break;
        }
        n++;
    }
    if (rc < 0) {
        rlvr_fs_free_names(names, n);
        return rc;
    }
    if (n > 1) qsort(names, n, sizeof *names, cmp_names);
    *out = names;
    *count = n;
    return 0;
}

void rlvr_fs_free_names(char **names, size_t n) {
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
}

static int hash_at(int dir, const char *name, const char *rel, uint64_t *h, int depth) {
    if (depth > 256) return RLVR_FAIL(RLVR_ELIMIT, "hash: tree deeper than 256 levels");
    struct stat st;
    if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return rlvr_error_errno_at(__FILE__, __LINE__, "stat %s", rel);
    uint32_t kind = S_ISDIR(st.st_mode) ? 1 : S_ISLNK(st.st_mode) ? 2 : S_ISREG(st.st_mode) ? 3 : 4;
    uint32_t perm = st.st_mode & 07777;
    fnv_update(h, rel, strlen(rel) + 1);
    fnv_update(h, &kind, sizeof kind);
    fnv_update(h, &perm, sizeof perm);
    if (kind == 2) {
        char target[PATH_MAX];
        ssize_t n = readlinkat(dir, name, target, sizeof target);
        if (n < 0) return rlvr_error_errno_at(__FILE__, __LINE__, "readlink %s", rel);
        fnv_update(h, target, (size_t)n);
        return 0;
    }
    if (kind == 3) {
        int64_t size = st.st_size;
        fnv_update(h, &size, sizeof size);
        int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) return rlvr_error_errno_at(__FILE__, __LINE__, "open %s", rel);
        char buf[65536];
        ssize_t n;
        while ((n = read(fd, buf, sizeof buf)) > 0) fnv_update(h, buf, (size_t)n);
        close(fd);
        return n < 0 ? rlvr_error_errno_at(__FILE__, __LINE__, "read %s", rel) : 0;
    }
    if (kind != 1) return 0;
    int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return rlvr_error_errno_at(__FILE__, __LINE__, "open %s", rel);
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return rlvr_error_errno_at(__FILE__, __LINE__, "read %s", rel);
    }
    char **names = NULL;
    size_t n = 0;
    int rc = rlvr_fs_sorted_names(d, &names, &n);
    for (size_t i = 0; i < n && rc == 0; i++) {
        char child[PATH_MAX];
        snprintf(child, sizeof child, "%s/%s", rel, names[i]);
        rc = hash_at(dirfd(d), names[i], child, h, depth + 1);
    }
    rlvr_fs_free_names(names, n);
    closedir(d);
    return rc;
}

int rlvr_fs_hash_tree(const char *path, uint64_t *out) {
    uint64_t h = RLVR_FNV1A64_INIT;
    int rc = hash_at(AT_FDCWD, path, ".", &h, 0);
    if (rc < 0) return rlvr_error_wrap(rc, "hashing %s", path);
    *out = h;
    return 0;
}

/* ---- files -------------------------------------------------------------- */

int rlvr_fs_write_file(const char *path, const void *data, size_t len) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return rlvr_error_errno_at(__FILE__, __LINE__, "creating %s", path);
    const char *p = data;
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, p + off, len - off);
        if (w < 0) {
            if (errno == EINTR) continue;
            int rc = rlvr_error_errno_at(__FILE__, __LINE__, "writing %s", path);
            close(fd);
            return rc;
        }
        off += (size_t)w;
    }
    if (close(fd) != 0) return rlvr_error_errno_at(__FILE__, __LINE__, "closing %s", path);
    return 0;
}

int rlvr_fs_read_fd(int fd, const char *name, char **out, size_t *len) {
    *out = NULL;
    if (len) *len = 0;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    if (!buf) return RLVR_FAIL(RLVR_ENOMEM, "out of memory reading %s", name);
    for (;;) {
        if (n + 1 >= cap) {
            char *grown = realloc(buf, cap * 2);
            if (!grown) {
                free(buf);
                return RLVR_FAIL(RLVR_ENOMEM, "out of memory reading %s", name);
            }
            buf = grown;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r < 0) {
            if (errno == EINTR) continue;
            int rc = rlvr_error_errno_at(__FILE__, __LINE__, "reading %s", name);
            free(buf);
            return rc;
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    buf[n] = '\0';
    *out = buf;
    if (len) *len = n;
    return 0;
}

int rlvr_fs_read_file(const char *path, char **out, size_t *len) {
    *out = NULL;
    if (len) *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return rlvr_error_errno_at(__FILE__, __LINE__, "opening %s", path);
    int rc = rlvr_fs_read_fd(fd, path, out, len);
    close(fd);
    return rc;
}

void rlvr_fs_dirname(char *out, size_t cap, const char *path) {
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(out, cap, ".");
    else if (slash == path) snprintf(out, cap, "/");
    else snprintf(out, cap, "%.*s", (int)(slash - path), path);
}

