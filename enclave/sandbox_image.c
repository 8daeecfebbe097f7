/* enclave/sandbox_image.c — environment images: one mount per image per
 * host process, shared by every sandbox (enclave/image.h).
 *
 * A SquashFS or SIF image is mounted by an image server: a process of its
 * own (forked by the spawner), in a mount namespace of its own, so the
 * mount never appears in the host's table and disappears with the server
 * and the last sandbox using it. A holder gets its own copy of the mount
 * as a detached tree (open_tree(OPEN_TREE_CLONE), passed over the server's
 * socket), which it attaches in its root: the image is read once by the
 * kernel (or squashfuse) for every sandbox of the host. Two ways to mount,
 * tried in order:
 * - the kernel's squashfs on a read-only loop device: only where the
 *   runtime is root (the loop device and the mount need the host's
 *   CAP_SYS_ADMIN);
 * - squashfuse (Debian's, built on libsquashfuse) in a user namespace of
 *   the server's own: works unprivileged wherever /dev/fuse may be opened.
 * When neither works the error says what each attempt met. A directory
 * needs no server: the holder binds it. */
#include "enclave/image.h"
#include "enclave/sandbox_internal.h"

#include "core/error.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/loop.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SQUASHFUSE "/usr/bin/squashfuse"

/* One image of a host. */
struct rlvr_sb_image {
    struct rlvr_sb_image *next;
    pid_t owner;       /* the process that mounted it (a fork mounts its own) */
    rlvr_image_info info;
    char *path;
    int sock;          /* to the server; -1 for a directory */
    pid_t pid;
    int pidfd;
    char how[64];      /* "kernel squashfs", "squashfuse", "directory" */
};

/* ---- the image server ------------------------------------------------------ */

/* Messages: the server's first is IMAGE_OK + how, or IMAGE_ERROR + why; a
 * request IMAGE_CLONE gets IMAGE_OK with the tree's descriptor attached,
 * or IMAGE_ERROR + why. */
enum { IMAGE_OK = 'O', IMAGE_ERROR = 'E', IMAGE_CLONE = 'C' };

static void server_say(int sock, char kind, const char *text) {
    char msg[1024];
    int n = snprintf(msg, sizeof msg, "%c%s", kind, text);
    if (n < 0) return;
    if (send(sock, msg, (size_t)(n < (int)sizeof msg ? n : (int)sizeof msg - 1), MSG_NOSIGNAL) < 0) {
    }
}

/* The kernel's squashfs on a loop device over the image's bytes. */
static int mount_kernel(const rlvr_sb_image_plan *p, char *why, size_t cap) {
    int img = open(p->path, O_RDONLY | O_CLOEXEC), ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
    int loop = -1, rc = -1;
    char dev[64];
    if (img < 0 || ctl < 0) {
        snprintf(why, cap, "opening %s: %s", img < 0 ? p->path : "/dev/loop-control", strerror(errno));
        goto cleanup;
    }
    for (int tries = 0; tries < 16 && loop < 0; tries++) {
        int n = ioctl(ctl, LOOP_CTL_GET_FREE);
        if (n < 0) {
            snprintf(why, cap, "no free loop device: %s", strerror(errno));
            goto cleanup;
        }
        snprintf(dev, sizeof dev, "/dev/loop%d", n);
        loop = open(dev, O_RDONLY | O_CLOEXEC);
        if (loop < 0) {
            snprintf(why, cap, "opening %s: %s", dev, strerror(errno));
            goto cleanup;
        }
        struct loop_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.fd = (uint32_t)img;
        cfg.info.lo_offset = p->offset;
        cfg.info.lo_sizelimit = p->size;
        cfg.info.lo_flags = LO_FLAGS_READ_ONLY | LO_FLAGS_AUTOCLEAR;
        if (ioctl(loop, LOOP_CONFIGURE, &cfg) == 0) break;
        int e = errno;
        close(loop);
        loop = -1;
        if (e != EBUSY) {
            snprintf(why, cap, "configuring %s: %s", dev, strerror(e));
            goto cleanup;
        }
    }
    if (loop < 0) {
        snprintf(why, cap, "every free loop device was taken before it could be configured");
        goto cleanup;
    }
    if (mount(dev, p->mountpoint, "squashfs", MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) != 0) {
        snprintf(why, cap, "mounting %s (squashfs): %s", dev, strerror(errno));
        goto cleanup;
    }
    rc = 0;
cleanup:
    /* the loop device detaches itself when its last user, the mount, goes */
    if (loop >= 0) close(loop);
    if (ctl >= 0) close(ctl);
    if (img >= 0) close(img);
    return rc;
}

/* Whether something is mounted at `mnt` (its device differs from its
 * parent's). */
static bool mounted_at(const char *mnt) {
    char parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%s/..", mnt);
    struct stat a, b;
    return stat(mnt, &a) == 0 && stat(parent, &b) == 0 && a.st_dev != b.st_dev;
}

/* squashfuse in the foreground, a child of the server that dies with it;
 * 0 once the mount is there. */
static int mount_fuse(const rlvr_sb_image_plan *p, pid_t *daemon, char *why, size_t cap) {
    if (access("/dev/fuse", R_OK | W_OK) != 0) {
        snprintf(why, cap, "/dev/fuse: %s", strerror(errno));
        return -1;
    }
    if (access(SQUASHFUSE, X_OK) != 0) {
        snprintf(why, cap, SQUASHFUSE ": %s (Debian's squashfuse package)", strerror(errno));
        return -1;
    }
    int err[2];
    if (pipe2(err, O_CLOEXEC) != 0) {
        snprintf(why, cap, "pipe: %s", strerror(errno));
        return -1;
    }
    char opts[96];
    /* root's mount serves the sandboxes' other uid only with allow_other;
     * unprivileged, the sandboxes run as the mounting uid */
    snprintf(opts, sizeof opts, "ro,offset=%llu%s", (unsigned long long)p->offset, p->privileged ? ",allow_other" : "");
    pid_t c = fork();
    if (c == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        dup2(err[1], 2);
        execl(SQUASHFUSE, "squashfuse", "-f", "-o", opts, p->path, p->mountpoint, (char *)NULL);
        dprintf(2, "exec " SQUASHFUSE ": %s", strerror(errno));
        _exit(127);
    }
    close(err[1]);
    if (c < 0) {
        close(err[0]);
        snprintf(why, cap, "fork: %s", strerror(errno));
        return -1;
    }
    struct timespec nap = {0, 2 * 1000 * 1000};
    for (int i = 0; i < 5000; i++) { /* 10 s */
        if (mounted_at(p->mountpoint)) {
            close(err[0]);
            *daemon = c;
            return 0;
        }
        int st;
        if (waitpid(c, &st, WNOHANG) == c) {
            char text[512];
            ssize_t n = read(err[0], text, sizeof text - 1);
            text[n > 0 ? n : 0] = '\0';
            for (char *s = text; *s; s++)
                if (*s == '\n') *s = ' ';
            snprintf(why, cap, "squashfuse exited %d: %.300s", WIFEXITED(st) ? WEXITSTATUS(st) : -1, text);
            close(err[0]);
            return -1;
        }
        nanosleep(&nap, NULL);
    }
    kill(c, SIGKILL);
    close(err[0]);
    snprintf(why, cap, "squashfuse did not mount within 10 s");
    return -1;
}

/* A user namespace where the server is root, mapped to its own uid (the
 * unprivileged path to a FUSE mount). */
static int enter_own_userns(char *why, size_t cap) {
    uid_t uid = getuid();
    gid_t gid = getgid();
    char text[64];
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
        snprintf(why, cap, "unshare(user, mount namespaces): %s", strerror(errno));
        return -1;
    }
    snprintf(text, sizeof text, "0 %u 1\n", (unsigned)uid);
    bool ok = rlvr_sb_write_text("/proc/self/setgroups", "deny") == 0 && rlvr_sb_write_text("/proc/self/uid_map", text) == 0;
    snprintf(text, sizeof text, "0 %u 1\n", (unsigned)gid);
    ok = ok && rlvr_sb_write_text("/proc/self/gid_map", text) == 0;
    if (!ok || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
        snprintf(why, cap, "mapping the server's user namespace: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* Mounts the image one way or the other; the way in `how`, or what each
 * attempt met in `why`. */
static int server_mount(const rlvr_sb_image_plan *p, pid_t *daemon, char *how, size_t how_cap, char *why, size_t cap) {
    char kernel[400], fuse[400];
    if (!p->privileged) {
        snprintf(kernel, sizeof kernel, "needs root (rlvr runs as uid %u)", (unsigned)getuid());
    } else if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
        snprintf(kernel, sizeof kernel, "a private mount namespace: %s", strerror(errno));
    } else if (mount_kernel(p, kernel, sizeof kernel) == 0) {
        snprintf(how, how_cap, "kernel squashfs");
        return 0;
    }
    if ((p->privileged || enter_own_userns(fuse, sizeof fuse) == 0) && mount_fuse(p, daemon, fuse, sizeof fuse) == 0) {
        snprintf(how, how_cap, "squashfuse");
        return 0;
    }
    snprintf(why, cap, "cannot mount environment image %s: kernel squashfs: %s; squashfuse: %s", p->path, kernel, fuse);
    return -1;
}

/* Answers one clone request. */
static void server_clone(int sock, const char *mnt) {
    int tree = (int)syscall(SYS_open_tree, AT_FDCWD, mnt, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
    if (tree < 0) {
        char why[128];
        snprintf(why, sizeof why, "open_tree: %s", strerror(errno));
        server_say(sock, IMAGE_ERROR, why);
        return;
    }
    char ok = IMAGE_OK;
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {.iov_base = &ok, .iov_len = 1};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &tree, sizeof tree);
    if (sendmsg(sock, &msg, MSG_NOSIGNAL) < 0) {
    }
    close(tree);
}

void rlvr_sb_image_main(const rlvr_sb_image_plan *plan, int *fds) {
    if (rlvr_sb_keep_fds(fds, 1) != 0) _exit(RLVR_SANDBOX_EXIT_FAILED);
    int sock = fds[0];
    pid_t daemon = -1;
    char how[64], why[1024];
    if (server_mount(plan, &daemon, how, sizeof how, why, sizeof why) != 0) {
        server_say(sock, IMAGE_ERROR, why);
        _exit(RLVR_SANDBOX_EXIT_FAILED);
    }
    server_say(sock, IMAGE_OK, how);
    for (;;) {
        char req;
        ssize_t n = recv(sock, &req, 1, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        if (req == IMAGE_CLONE) server_clone(sock, plan->mountpoint);
    }
    if (daemon > 0) kill(daemon, SIGKILL);
    _exit(0);
}

/* ---- the runtime's side ------------------------------------------------------ */

/* The server's answer on `sock` (waiting up to 30 s); the descriptor
 * attached to an IMAGE_OK in *fd when fd is not NULL. */
static int image_answer(int sock, const char *path, char *text, size_t cap, int *fd) {
    struct pollfd pl = {.fd = sock, .events = POLLIN};
    int r;
    while ((r = poll(&pl, 1, 30 * 1000)) < 0 && errno == EINTR) {
    }
    if (r == 0) return RLVR_FAIL(RLVR_ESANDBOX, "environment image %s: its server did not answer within 30 s", path);
    char msg[1024];
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {.iov_base = msg, .iov_len = sizeof msg - 1};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
    ssize_t n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
    int got = -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) memcpy(&got, CMSG_DATA(c), sizeof got);
    if (n <= 0) {
        if (got >= 0) close(got);
        return RLVR_FAIL(RLVR_ESANDBOX, "environment image %s: its server ended without an answer", path);
    }
    msg[n] = '\0';
    if (msg[0] != IMAGE_OK) {
        if (got >= 0) close(got);
        return RLVR_FAIL(RLVR_ESANDBOX, "%s", msg[0] == IMAGE_ERROR ? msg + 1 : "a malformed answer from an image server");
    }
    if (text && cap) {
        size_t len = strnlen(msg + 1, cap - 1);
        memcpy(text, msg + 1, len);
        text[len] = '\0';
    }
    if (fd) {
        if (got < 0) return RLVR_FAIL(RLVR_ESANDBOX, "environment image %s: the server sent no tree", path);
        *fd = got;
    } else if (got >= 0) {
        close(got);
    }
    return 0;
}

static void image_free(rlvr_sb_image *img) {
    if (img->sock >= 0) close(img->sock); /* the server ends at EOF */
    if (img->pidfd >= 0) {
        if (!rlvr_sb_process_ended(img->pid, img->pidfd, false)) {
            struct pollfd pl = {.fd = img->pidfd, .events = POLLIN};
            if (poll(&pl, 1, 5000) == 0) pidfd_send_signal(img->pidfd, SIGKILL, NULL, 0);
            rlvr_sb_process_ended(img->pid, img->pidfd, true);
        }
        close(img->pidfd);
    }
    free(img->path);
    free(img);
}

/* Starts the server for a SquashFS or SIF image and waits for its mount. */
static int image_start(rlvr_sandbox_host *host, rlvr_sb_image *img) {
    static unsigned counter;
    char mnt[PATH_MAX];
    snprintf(mnt, sizeof mnt, "%s/image-%u", host->scratch, __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED));
    if (mkdir(mnt, 0755) != 0 && errno != EEXIST) return rlvr_error_errno_at(__FILE__, __LINE__, "mkdir %s", mnt);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
        return rlvr_error_errno_at(__FILE__, __LINE__, "socketpair for an image server");
    rlvr_sb_image_plan plan = {.path = img->path, .mountpoint = mnt, .offset = img->info.offset,
                               .size = img->info.extent, .privileged = host->privileged};
    int rc = rlvr_sb_spawn_image(host, &plan, sv[1], &img->pid, &img->pidfd);
    close(sv[1]);
    if (rc < 0) {
        close(sv[0]);
        return rc;
    }
    img->sock = sv[0];
    return image_answer(img->sock, img->path, img->how, sizeof img->how, NULL);
}

/* The host's image for `path`, mounted on first use (under images_lock). */
static int image_get(rlvr_sandbox_host *host, const char *path, rlvr_sb_image **out) {
    /* a mounted image is found by its file alone: every sandbox of a
     * pooled or fresh enclave asks, and reading its headers again would
     * say nothing new */
    struct stat st;
    pid_t self = getpid();
    bool known = stat(path, &st) == 0;
    for (rlvr_sb_image *i = known ? host->images : NULL; i; i = i->next)
        if (i->owner == self && i->info.device == (uint64_t)st.st_dev && i->info.inode == (uint64_t)st.st_ino) {
            *out = i;
            return 0;
        }
    rlvr_image_info info;
    RLVR_TRY(rlvr_image_inspect(path, &info));
    rlvr_sb_image *img = calloc(1, sizeof *img);
    if (!img || !(img->path = strdup(path))) {
        free(img);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    }
    img->owner = self;
    img->info = info;
    img->sock = img->pidfd = -1;
    img->pid = -1;
    int rc = 0;
    if (info.kind == RLVR_IMAGE_DIRECTORY) {
        snprintf(img->how, sizeof img->how, "directory");
    } else {
        rc = image_start(host, img);
        if (rc == 0) host->image_mounts++;
    }
    if (rc < 0) {
        image_free(img);
        return rc;
    }
    img->next = host->images;
    host->images = img;
    *out = img;
    return 0;
}

/* A detached tree of the image for one holder (a directory's is opened
 * O_PATH: the holder binds the host path instead). */
static int image_tree(rlvr_sb_image *img, int *fd) {
    if (img->info.kind == RLVR_IMAGE_DIRECTORY) {
        *fd = open(img->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (*fd < 0) return rlvr_error_errno_at(__FILE__, __LINE__, "opening environment %s", img->path);
        return 0;
    }
    char req = IMAGE_CLONE;
    if (send(img->sock, &req, 1, MSG_NOSIGNAL) != 1)
        return rlvr_error_errno_at(__FILE__, __LINE__, "asking the server of %s for a tree", img->path);
    return image_answer(img->sock, img->path, NULL, 0, fd);
}

int rlvr_sb_image_acquire(rlvr_sandbox_host *host, const char *path, int *tree, bool *directory, char *how,
                          size_t cap) {
    pthread_mutex_lock(&host->images_lock);
    rlvr_sb_image *img = NULL;
    int rc = image_get(host, path, &img);
    if (rc == 0) rc = image_tree(img, tree);
    if (rc == 0) {
        *directory = img->info.kind == RLVR_IMAGE_DIRECTORY;
        if (how) snprintf(how, cap, "%s", img->how);
    }
    pthread_mutex_unlock(&host->images_lock);
    return rc;
}

void rlvr_sb_images_free(rlvr_sandbox_host *host) {
    while (host->images) {
        rlvr_sb_image *i = host->images;
        host->images = i->next;
        image_free(i);
    }
}

int rlvr_sandbox_host_image(rlvr_sandbox_host *host, const char *path, const char *workdir, char *how, size_t cap) {
    int tree = -1;
    bool directory = false;
    RLVR_TRY(rlvr_sb_image_acquire(host, path, &tree, &directory, how, cap));
    int rc = rlvr_image_check_root(tree, path, workdir);
    close(tree);
    return rc;
}

size_t rlvr_sandbox_host_image_mounts(const rlvr_sandbox_host *host) { return host->image_mounts; }
