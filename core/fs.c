#include "core/fs.h"
#include "core/error.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int rlvr_mkdir_p(const char *path, mode_t mode) {
    char buf[PATH_MAX];
    int n = snprintf(buf, sizeof buf, "%s", path);
    if (n <= 0 || (size_t)n >= sizeof buf) return RLVR_FAIL(RLVR_EINVAL, "path too long: %s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, mode) != 0 && errno != EEXIST)
            return rlvr_error_errno_at(__FILE__, __LINE__, "creating directory %s", buf);
        *p = '/';
    }
    if (mkdir(buf, mode) != 0 && errno != EEXIST)
        return rlvr_error_errno_at(__FILE__, __LINE__, "creating directory %s", buf);
    return 0;
}

int rlvr_fsync_path(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return rlvr_error_errno_at(__FILE__, __LINE__, "opening %s to fsync", path);
    int rc = 0;
    if (fsync(fd) != 0) rc = rlvr_error_errno_at(__FILE__, __LINE__, "fsync %s", path);
    close(fd);
    return rc;
}

int rlvr_fsync_parent_dir(const char *path) {
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == dir) dir[1] = '\0';
    else *slash = '\0';
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return rlvr_error_errno_at(__FILE__, __LINE__, "opening directory %s to fsync", dir);
    int rc = 0;
    if (fsync(fd) != 0) rc = rlvr_error_errno_at(__FILE__, __LINE__, "fsync directory %s", dir);
    close(fd);
    return rc;
}

int rlvr_publish(const char *part, const char *path, bool durable) {
    if (durable) RLVR_TRY(rlvr_fsync_path(part));
    if (rename(part, path) != 0) return rlvr_error_errno_at(__FILE__, __LINE__, "renaming %s to %s", part, path);
    return durable ? rlvr_fsync_parent_dir(path) : 0;
}

/* Every byte to `fd`, retrying short writes and EINTR. */
static int write_all(int fd, const char *name, const char *p, size_t len) {
    size_t done = 0;
    while (done < len) {
        ssize_t k = write(fd, p + done, len - done);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return rlvr_error_errno_at(__FILE__, __LINE__, "writing %s", name);
        done += (size_t)k;
    }
    return 0;
}

/* `data` then `tail` (may be empty) as the new contents of `path`. */
static int write_atomic(const char *path, const void *data, size_t len, const char *tail, size_t tail_len) {
    char part[PATH_MAX];
    if ((size_t)snprintf(part, sizeof part, "%s.part", path) >= sizeof part)
        return RLVR_FAIL(RLVR_EINVAL, "path too long: %s", path);
    int fd = open(part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return rlvr_error_errno_at(__FILE__, __LINE__, "creating %s", part);
    int rc = write_all(fd, part, data, len);
    if (rc == 0) rc = write_all(fd, part, tail, tail_len);
    if (close(fd) != 0 && rc == 0) rc = rlvr_error_errno_at(__FILE__, __LINE__, "closing %s", part);
    if (rc == 0) rc = rlvr_publish(part, path, true);
    if (rc < 0) unlink(part);
    return rc;
}

int rlvr_write_file_atomic(const char *path, const void *data, size_t len) {
    return write_atomic(path, data, len, "", 0);
}

int rlvr_write_text_atomic(const char *path, const char *text) { return write_atomic(path, text, strlen(text), "", 0); }

int rlvr_write_line_atomic(const char *path, const char *text) {
    return write_atomic(path, text, strlen(text), "\n", 1);
}
