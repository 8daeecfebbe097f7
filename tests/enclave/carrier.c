/* tests/enclave/carrier.c — the surviving carrier of carrier.h. */
#include "carrier.h"

#include "core/error.h"
#include "enclave/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define CARRIER_MAX (1 << 20)

struct carrier {
    char *dir;
    char path[PATH_MAX];
    int listen_fd;
    int stop[2]; /* a byte on stop[1] ends the thread */
    pthread_t thread;
    char *blob;
    size_t len;
    int puts, requests;
    int busy; /* the thread is between a connection's accept and its close (atomic) */
    unsigned facts[4096];
    int n_facts;
};

/* Reads until EOF (or the cap) into a new buffer. */
static size_t read_all(int fd, char **out) {
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (ssize_t r = 1; buf && r > 0 && n < CARRIER_MAX;) {
        if (n == cap) {
            char *grown = realloc(buf, cap *= 2);
            if (!grown) break;
            buf = grown;
        }
        r = read(fd, buf + n, cap - n);
        if (r > 0) n += (size_t)r;
    }
    *out = buf;
    return buf ? n : 0;
}

static bool has_fact(const carrier *c, unsigned v) {
    for (int i = 0; i < c->n_facts; i++)
        if (c->facts[i] == v) return true;
    return false;
}

/* The request's first line, without its newline, one byte at a time (a
 * PUT's bytes follow it). */
static bool read_line(int fd, char *line, size_t cap) {
    for (size_t n = 0; n + 1 < cap; n++) {
        if (read(fd, &line[n], 1) != 1) return false;
        if (line[n] == '\n') {
            line[n] = '\0';
            return true;
        }
    }
    return false;
}

static void serve_one(carrier *c, int fd) {
    char line[64];
    unsigned v;
    if (!read_line(fd, line, sizeof line)) return;
    c->requests++;
    if (sscanf(line, "add %u", &v) == 1 || sscanf(line, "has %u", &v) == 1) {
        bool add = line[0] == 'a', known = has_fact(c, v);
        if (add && !known && c->n_facts < (int)(sizeof c->facts / sizeof *c->facts)) c->facts[c->n_facts++] = v;
        char answer = add || known ? '1' : '0';
        if (write(fd, &answer, 1) != 1) {
        }
    } else if (strcmp(line, "GET") == 0) {
        for (size_t off = 0; off < c->len;) {
            ssize_t w = write(fd, c->blob + off, c->len - off);
            if (w <= 0) break;
            off += (size_t)w;
        }
    } else if (strcmp(line, "PUT") == 0) {
        char *blob = NULL;
        size_t n = read_all(fd, &blob);
        if (blob) {
            free(c->blob);
            c->blob = blob;
            c->len = n;
            c->puts++;
            if (write(fd, "ok\n", 3) != 3) {
            }
        }
    }
}

static void *carrier_main(void *arg) {
    carrier *c = arg;
    for (;;) {
        struct pollfd p[2] = {{.fd = c->listen_fd, .events = POLLIN}, {.fd = c->stop[0], .events = POLLIN}};
        if (poll(p, 2, -1) < 0 && errno != EINTR) break;
        if (p[1].revents) break;
        if (!p[0].revents) continue;
        /* busy before the accept: while a connection waits the listening
         * socket is readable, after it the flag says so (carrier_settle) */
        __atomic_store_n(&c->busy, 1, __ATOMIC_SEQ_CST);
        int fd = accept4(c->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd >= 0) {
            serve_one(c, fd);
            close(fd);
        }
        __atomic_store_n(&c->busy, 0, __ATOMIC_SEQ_CST);
    }
    return NULL;
}

void carrier_settle(const carrier *c) {
    for (int waited_ms = 0; waited_ms < 5000; waited_ms += 5) {
        struct pollfd p = {.fd = c->listen_fd, .events = POLLIN};
        bool queued = poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
        if (!queued && !__atomic_load_n(&c->busy, __ATOMIC_SEQ_CST)) return;
        usleep(5000);
    }
}

void carrier_settle_hook(void *c) { carrier_settle(c); }

int carrier_start(carrier **out, const char *parent) {
    *out = NULL;
    carrier *c = calloc(1, sizeof *c);
    if (!c) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    c->listen_fd = c->stop[0] = c->stop[1] = -1;
    int rc = rlvr_fs_mkdtemp(&c->dir, parent ? parent : "/var/tmp", "carrier-");
    if (rc == 0 && chmod(c->dir, 0755) != 0) rc = rlvr_error_errno_at(__FILE__, __LINE__, "chmod %s", c->dir);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (rc == 0) {
        snprintf(c->path, sizeof c->path, "%s/sock", c->dir);
        if (strlen(c->path) >= sizeof a.sun_path) rc = RLVR_FAIL(RLVR_EINVAL, "socket path too long: %s", c->path);
        else snprintf(a.sun_path, sizeof a.sun_path, "%s", c->path);
    }
    if (rc == 0 && (c->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        rc = rlvr_error_errno_at(__FILE__, __LINE__, "socket");
    if (rc == 0 && (bind(c->listen_fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(c->listen_fd, 16) != 0 ||
                    chmod(c->path, 0777) != 0))
        rc = rlvr_error_errno_at(__FILE__, __LINE__, "serving %s", c->path);
    if (rc == 0 && pipe2(c->stop, O_CLOEXEC) != 0) rc = rlvr_error_errno_at(__FILE__, __LINE__, "pipe");
    if (rc == 0 && pthread_create(&c->thread, NULL, carrier_main, c) != 0) {
        close(c->stop[0]);
        close(c->stop[1]);
        c->stop[0] = c->stop[1] = -1;
        rc = RLVR_FAIL(RLVR_ESTATE, "pthread_create");
    }
    if (rc < 0) {
        carrier_stop(c);
        return rc;
    }
    *out = c;
    return 0;
}

const char *carrier_dir(const carrier *c) { return c->dir; }
const char *carrier_socket(const carrier *c) { return c->path; }
int carrier_puts(const carrier *c) { return c->puts; }
int carrier_facts(const carrier *c) { return c->n_facts; }
int carrier_requests(const carrier *c) { return c->requests; }

void carrier_stop(carrier *c) {
    if (!c) return;
    if (c->stop[1] >= 0) {
        if (write(c->stop[1], "x", 1) != 1) {
        }
        pthread_join(c->thread, NULL);
        close(c->stop[0]);
        close(c->stop[1]);
    }
    if (c->listen_fd >= 0) close(c->listen_fd);
    if (c->dir) {
        rlvr_fs_remove_tree(c->dir);
        free(c->dir);
    }
    free(c->blob);
    free(c);
}
