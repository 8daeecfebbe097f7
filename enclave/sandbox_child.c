/* enclave/sandbox_child.c — what every process of a sandbox shares.
 *
 * A sandbox's processes cannot return errors to the runtime: each is its own
 * process, and the runtime only reads pipes from them. So a process that
 * cannot go on says why in one message on a pipe (ERROR, or a run report
 * naming the failure) and exits; the helpers here are that, paths that must
 * fit, the descriptor layout each role starts with, and whole writes and
 * reads on those pipes. Only system calls and stack buffers: the command
 * calls some of them in a vfork-style child. */
#include "enclave/sandbox_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void rlvr_sb_fail(int fd, char stage, const char *fmt, ...) {
    char msg[512];
    int saved = errno;
    msg[0] = RLVR_SANDBOX_MSG_ERROR;
    msg[1] = stage;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg + 2, sizeof msg - 2, fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    size_t len = 2 + (size_t)n < sizeof msg ? 2 + (size_t)n : sizeof msg - 1;
    if (saved && len + 40 < sizeof msg) len += (size_t)snprintf(msg + len, sizeof msg - len, ": %s", strerror(saved));
    if (write(fd, msg, len) < 0) { /* nothing more to do */
    }
    _exit(RLVR_SANDBOX_EXIT_FAILED);
}

void rlvr_sb_report_error(int fd, rlvr_sb_run_report *r, const char *fmt, ...) {
    int saved = errno;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(r->error, sizeof r->error, fmt, ap);
    va_end(ap);
    if (saved && n >= 0 && (size_t)n + 4 < sizeof r->error)
        snprintf(r->error + n, sizeof r->error - (size_t)n, ": %s", strerror(saved));
    if (rlvr_sb_write_all(fd, r, sizeof *r) != 0) {
    }
    _exit(RLVR_SANDBOX_EXIT_REPORTED);
}

void rlvr_sb_path(int err_fd, char *buf, size_t cap, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= cap) {
        errno = ENAMETOOLONG;
        rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "path too long");
    }
}

int rlvr_sb_keep_fds(int *fds, int n) {
    int tmp[8];
    for (int i = 0; i < n; i++) {
        tmp[i] = -1;
        if (fds[i] >= 0 && (tmp[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 64)) < 0) return -1;
    }
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0) return -1;
    for (int fd = 0; fd < 3; fd++)
        if (dup2(null, fd) < 0) return -1;
    for (int i = 0; i < n; i++) {
        if (tmp[i] < 0) {
            close(3 + i);
            fds[i] = -1;
            continue;
        }
        if (dup3(tmp[i], 3 + i, O_CLOEXEC) < 0) return -1;
        fds[i] = 3 + i;
    }
    close_range((unsigned)(3 + n), ~0U, 0);
    return 0;
}

int rlvr_sb_write_all(int fd, const void *data, size_t len) {
    const char *p = data;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int rlvr_sb_read_message(int fd, char *buf, size_t cap) {
    for (;;) {
        ssize_t n = read(fd, buf, cap - 1);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -1;
        buf[n] = '\0';
        return (int)n;
    }
}
