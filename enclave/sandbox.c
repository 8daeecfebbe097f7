/* enclave/sandbox.c — building a sandbox and running commands in it.
 *
 * Processes (docs/ENCLAVE.md has the picture):
 *
 *   runtime ──fork──► Z        the spawner, once per host: a small process
 *                              that forks the holders and the supervisors on
 *                              the runtime's request (plan in a memfd,
 *                              descriptors over a socket; pidfds back).
 *   Z ──fork──► holder         user+mount+net+ipc+uts+cgroup namespaces; builds
 *                              the root, pivots into it, then serves resets
 *                              until the runtime closes its command pipe.
 *   Z ──fork──► M              one per run: joins the holder's namespaces,
 *                              opens fresh mount, PID, IPC and cgroup
 *                              namespaces, enforces the wall time, reports.
 *                 M ──fork──► I   pid 1 of the run: fresh /proc and /tmp, reaps
 *                              everything, samples CPU / memory / processes,
 *                              kills every process of the run when the main
 *                              one ends.
 *                 I ──fork──► P   the prepare step (runtime code, e.g. applying
 *                              a patch), when there is one; it never holds the
 *                              results descriptor.
 *                 I ──spawn─► C   drops every capability, sets rlimits,
 *                              no_new_privs, Landlock (enclaves), seccomp;
 *                              exec()s the command (CLONE_VM|CLONE_VFORK, as
 *                              posix_spawn) or calls the runtime's function.
 *
 * The runtime only ever reads pipes: stdout+stderr, the results fd and a
 * fixed-size status report from M. Nothing inside can write to the runtime's
 * memory or files. */
#include "enclave/fsutil.h"
#include "enclave/sandbox.h"
#include "enclave/sandbox_internal.h"

#include "core/error.h"
#include "core/flat.h"
#include "core/sys.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <linux/securebits.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RLVR_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define RLVR_SANITIZED 1
#endif
#endif
#ifndef RLVR_SANITIZED
#define RLVR_SANITIZED 0
#endif

struct rlvr_sandbox {
    rlvr_sandbox_host *host;
    pid_t holder;
    int holder_pidfd;
    int ctl_fd;    /* commands to the holder; closing it ends the holder */
    int answer_fd; /* the holder's answers */
    char *dir;     /* scratch: the mount point root/ */
    rlvr_sandbox_limits limits;
    bool has_private;
    bool has_judge; /* a judge directory is bound at RLVR_SANDBOX_JUDGE_DIR */
    bool landlock; /* enclaves only: confine writes (see restrict_writes) */
    /* the supervisor of the last finished run when it was still exiting
     * (tearing down its namespaces) as the run was finished: reaped before
     * the next run starts, so it never counts against that run's limits
     * (its pidfd; -1 when none) */
    int exiting;
    pid_t exiting_pid;
};

/* Whether the spawner's child `pid` (its `pidfd`) has ended and been
 * reaped, waiting for it when `block`. A pidfd turns readable at the exit,
 * before the spawner has reaped the child (a zombie still counts in /proc
 * and in its user's process count, which the next run's limit sees): until
 * then kill(pid, 0) succeeds. A blocking wait gives the reap a second. */
static bool process_ended(pid_t pid, int pidfd, bool block) {
    if (pidfd < 0) return true;
    struct pollfd p = {.fd = pidfd, .events = POLLIN};
    int r;
    while ((r = poll(&p, 1, block ? -1 : 0)) < 0 && errno == EINTR) {
    }
    if (r == 0) return false;
    if (!block) return kill(pid, 0) != 0;
    struct timespec nap = {0, 50 * 1000};
    for (int i = 0; i < 20000 && kill(pid, 0) == 0; i++) nanosleep(&nap, NULL);
    return true;
}

/* Waits for the last run's supervisor to end, when `block`; else notes it
 * when it has. */
static void reap_exiting(rlvr_sandbox *sb, bool block) {
    if (sb->exiting < 0) return;
    if (process_ended(sb->exiting_pid, sb->exiting, block)) {
        close(sb->exiting);
        sb->exiting = -1;
    }
}

void rlvr_sandbox_settle(rlvr_sandbox *sb) {
    if (sb) reap_exiting(sb, true);
}

/* ---- helpers for the children --------------------------------------------
 * Children report failures as one short message on a pipe and _exit(). */

static void child_fail(int fd, char stage, const char *fmt, ...) __attribute__((format(printf, 3, 4), noreturn));

static void child_fail(int fd, char stage, const char *fmt, ...) {
    char msg[512];
    int saved = errno;
    msg[0] = 'E';
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
    _exit(121);
}

/* snprintf for paths inside children: a path that does not fit fails the
 * child instead of being silently cut. */
static void cpath(int err_fd, char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void cpath(int err_fd, char *buf, size_t cap, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= cap) {
        errno = ENAMETOOLONG;
        child_fail(err_fd, SB_STAGE_OTHER, "path too long");
    }
}

/* Moves the descriptors in fds[0..n) to 3..3+n-1 (in order; -1 entries keep
 * their slot closed), points 0..2 at /dev/null and closes everything else. */
static int keep_fds(int *fds, int n) {
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

static int write_all(int fd, const void *data, size_t len) {
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

static int write_text(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    int rc = write_all(fd, text, strlen(text));
    if (close(fd) != 0) rc = -1;
    return rc;
}

static int make_ro(const char *path, bool recursive) {
    struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV};
    return mount_setattr(AT_FDCWD, path, recursive ? AT_RECURSIVE : 0, &attr, sizeof attr);
}

static int touch(const char *path, mode_t mode) {
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, mode);
    if (fd < 0) return -1;
    close(fd);
    return 0;
}

/* ---- the holder ---------------------------------------------------------- */

typedef struct {
    const rlvr_sandbox_host *host;
    const char *dir;
    const char *lower;
    bool overlay;
    const char *const *readonly;
    const char *private_dir;
    const char *judge_dir;
    int64_t disk_bytes;
    const char *hostname;
} holder_plan;

static int spawn_holder(rlvr_sandbox_host *host, const holder_plan *p, const int *fds, pid_t *pid, int *pidfd);

/* Binds host path `src` read-only at root+src: directories and files as
 * binds, symbolic links re-created as links; missing paths are skipped. */
static void bind_system_path(int err_fd, const char *root, const char *src) {
    struct stat st;
    if (lstat(src, &st) != 0) return;
    char dst[PATH_MAX];
    cpath(err_fd, dst, sizeof dst, "%s%s", root, src);
    char parent[PATH_MAX];
    cpath(err_fd, parent, sizeof parent, "%s", dst);
    char *slash = strrchr(parent, '/');
    if (slash && slash != parent) {
        *slash = '\0';
        if (rlvr_fs_mkdirs(parent, 0755) != 0) child_fail(err_fd, SB_STAGE_OTHER, "mkdir %s", parent);
    }
    if (S_ISLNK(st.st_mode)) {
        char target[PATH_MAX];
        ssize_t n = readlink(src, target, sizeof target - 1);
        if (n < 0) child_fail(err_fd, SB_STAGE_OTHER, "readlink %s", src);
        target[n] = '\0';
        if (symlink(target, dst) != 0 && errno != EEXIST) child_fail(err_fd, SB_STAGE_OTHER, "symlink %s", dst);
        return;
    }
    if (S_ISDIR(st.st_mode)) {
        if (mkdir(dst, 0755) != 0 && errno != EEXIST) child_fail(err_fd, SB_STAGE_OTHER, "mkdir %s", dst);
    } else if (touch(dst, 0644) != 0) {
        child_fail(err_fd, SB_STAGE_OTHER, "creating mount point %s", dst);
    }
    if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) != 0) child_fail(err_fd, SB_STAGE_OTHER, "bind %s", src);
    if (make_ro(dst, true) != 0) child_fail(err_fd, SB_STAGE_OTHER, "making %s read-only", src);
}

static bool system_path_listed(const rlvr_sandbox_host *host, const char *path) {
    for (size_t i = 0; i < host->n_system_paths; i++)
        if (strcmp(host->system_paths[i], path) == 0) return true;
    return false;
}

static void write_etc(int err_fd, const char *root, const rlvr_sandbox_host *host) {
    char path[PATH_MAX];
    cpath(err_fd, path, sizeof path, "%s/etc", root);
    if (mkdir(path, 0755) != 0 && errno != EEXIST) child_fail(err_fd, SB_STAGE_OTHER, "mkdir %s", path);
    static const struct {
        const char *name, *text;
    } files[] = {
        {"/etc/passwd", "sandbox:x:1000:1000:rlvr sandbox:/tmp:/bin/sh\n"
                        "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"},
        {"/etc/group", "sandbox:x:1000:\nnogroup:x:65534:\n"},
        {"/etc/hosts", "127.0.0.1 localhost\n::1 localhost\n"},
        {"/etc/hostname", "sandbox\n"},
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        if (system_path_listed(host, files[i].name)) continue;
        cpath(err_fd, path, sizeof path, "%s%s", root, files[i].name);
        if (rlvr_fs_write_file(path, files[i].text, strlen(files[i].text)) != 0)
            child_fail(err_fd, SB_STAGE_OTHER, "writing %s", path);
    }
}

static void make_dev(int err_fd, const char *root) {
    char dev[PATH_MAX], path[PATH_MAX], src[64];
    cpath(err_fd, dev, sizeof dev, "%s/dev", root);
    if (mkdir(dev, 0755) != 0) child_fail(err_fd, SB_STAGE_OTHER, "mkdir %s", dev);
    if (mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,mode=0755,nr_inodes=64") != 0)
        child_fail(err_fd, SB_STAGE_OTHER, "mounting /dev");
    static const char *const nodes[] = {"null", "zero", "full", "random", "urandom"};
    for (size_t i = 0; i < sizeof nodes / sizeof *nodes; i++) {
        cpath(err_fd, path, sizeof path, "%s/%s", dev, nodes[i]);
        cpath(err_fd, src, sizeof src, "/dev/%s", nodes[i]);
        if (touch(path, 0666) != 0) child_fail(err_fd, SB_STAGE_OTHER, "creating %s", path);
        if (mount(src, path, NULL, MS_BIND, NULL) != 0) child_fail(err_fd, SB_STAGE_OTHER, "bind %s", src);
    }
    static const char *const links[][2] = {
        {"fd", "/proc/self/fd"}, {"stdin", "/proc/self/fd/0"}, {"stdout", "/proc/self/fd/1"}, {"stderr", "/proc/self/fd/2"}};
    for (size_t i = 0; i < sizeof links / sizeof *links; i++) {
        cpath(err_fd, path, sizeof path, "%s/%s", dev, links[i][0]);
        if (symlink(links[i][1], path) != 0) child_fail(err_fd, SB_STAGE_OTHER, "symlink %s", path);
    }
    struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
    if (mount_setattr(AT_FDCWD, dev, 0, &attr, sizeof attr) != 0)
        child_fail(err_fd, SB_STAGE_OTHER, "making /dev read-only");
}

static void loopback_up(int err_fd) {
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0) child_fail(err_fd, SB_STAGE_OTHER, "socket for the loopback interface");
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
    if (ioctl(s, SIOCGIFFLAGS, &ifr) != 0) child_fail(err_fd, SB_STAGE_OTHER, "reading loopback flags");
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    if (ioctl(s, SIOCSIFFLAGS, &ifr) != 0) child_fail(err_fd, SB_STAGE_OTHER, "bringing loopback up");
    close(s);
}

/* Binds every directory between /work and the read-only path readonly[i]
 * onto itself (writable). A mount point cannot be renamed or removed
 * (EBUSY), so a run cannot move a read-only file's directory aside and put
 * another file at its path. An overlay refuses such renames of directories
 * it merges by accident of its design (EXDEV); a copy of the snapshot would
 * not. Directories an earlier path already pinned are skipped. */
static void pin_ancestors(int err_fd, const char *work, const char *const *readonly, size_t i) {
    const char *rel = readonly[i];
    for (const char *slash = strchr(rel, '/'); slash; slash = strchr(slash + 1, '/')) {
        size_t n = (size_t)(slash - rel);
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++) seen = strncmp(readonly[j], rel, n + 1) == 0;
        if (seen) continue;
        char dir[PATH_MAX];
        cpath(err_fd, dir, sizeof dir, "%s/%.*s", work, (int)n, rel);
        struct stat st;
        if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) return;
        if (mount(dir, dir, NULL, MS_BIND, NULL) != 0) child_fail(err_fd, SB_STAGE_OTHER, "pinning %.*s", (int)n, rel);
    }
}

/* Mounts a fresh /work under `prefix` ("" once the holder has pivoted):
 * a new tmpfs at .rlvr/state holds the copy-on-write layer (or the copy),
 * the snapshot bound at .rlvr/lower is the overlay's lower layer, and the
 * read-only paths are bound over themselves. Runs never see .rlvr/state or
 * .rlvr/lower: their init unmounts both. */
static void mount_work(int err_fd, const char *prefix, const holder_plan *p) {
    char state[PATH_MAX], lower[PATH_MAX], work[PATH_MAX], path[PATH_MAX], opts[3 * PATH_MAX + 64];
    cpath(err_fd, state, sizeof state, "%s/.rlvr/state", prefix);
    cpath(err_fd, lower, sizeof lower, "%s/.rlvr/lower", prefix);
    cpath(err_fd, work, sizeof work, "%s/work", prefix);
    cpath(err_fd, opts, sizeof opts, "size=%lld,mode=0755,nr_inodes=%lld", (long long)p->disk_bytes,
          (long long)(p->disk_bytes / 4096 + 1024));
    if (mount("tmpfs", state, "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0)
        child_fail(err_fd, SB_STAGE_OTHER, "mounting the state tmpfs");
    if (p->overlay) {
        char upper[PATH_MAX], owork[PATH_MAX];
        cpath(err_fd, upper, sizeof upper, "%s/upper", state);
        cpath(err_fd, owork, sizeof owork, "%s/owork", state);
        if (mkdir(upper, 0755) != 0 || mkdir(owork, 0700) != 0) child_fail(err_fd, SB_STAGE_OTHER, "mkdir in state");
        cpath(err_fd, opts, sizeof opts, "lowerdir=%s,upperdir=%s,workdir=%s,userxattr", lower, upper, owork);
        if (mount("overlay", work, "overlay", MS_NOSUID | MS_NODEV, opts) != 0)
            child_fail(err_fd, SB_STAGE_OVERLAY, "mounting overlayfs (%s)", opts);
    } else {
        char copy[PATH_MAX];
        cpath(err_fd, copy, sizeof copy, "%s/tree", state);
        if (rlvr_fs_copy_tree(lower, copy, (uid_t)-1, (gid_t)-1) != 0)
            child_fail(err_fd, SB_STAGE_OTHER, "copying the snapshot: %s", rlvr_error_last());
        if (mount(copy, work, NULL, MS_BIND, NULL) != 0) child_fail(err_fd, SB_STAGE_OTHER, "binding the copy");
    }
    for (size_t i = 0; p->readonly && p->readonly[i]; i++) pin_ancestors(err_fd, work, p->readonly, i);
    for (const char *const *r = p->readonly; r && *r; r++) {
        cpath(err_fd, path, sizeof path, "%s/%s", work, *r);
        struct stat st;
        if (lstat(path, &st) != 0 || S_ISLNK(st.st_mode)) continue;
        if (mount(path, path, NULL, MS_BIND | MS_REC, NULL) != 0 || make_ro(path, true) != 0)
            child_fail(err_fd, SB_STAGE_OTHER, "making %s read-only", *r);
    }
}

/* Everything the holder does after its namespaces exist; on error it
 * reports and exits. */
static void holder_build(int err_fd, const holder_plan *p) {
    char root[PATH_MAX], path[PATH_MAX];
    cpath(err_fd, root, sizeof root, "%s/root", p->dir);

    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) child_fail(err_fd, SB_STAGE_OTHER, "making / private");
    if (mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=2m,mode=0755,nr_inodes=8192") != 0)
        child_fail(err_fd, SB_STAGE_OTHER, "mounting the root tmpfs");
    static const char *const dirs[] = {"work", ".rlvr", ".rlvr/state", ".rlvr/lower", ".rlvr/private", ".rlvr/judge"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        cpath(err_fd, path, sizeof path, "%s/%s", root, dirs[i]);
        if (mkdir(path, i == 2 ? 0700 : 0755) != 0) child_fail(err_fd, SB_STAGE_OTHER, "mkdir %s", path);
    }
    cpath(err_fd, path, sizeof path, "%s/.rlvr/lower", root);
    if (mount(p->lower, path, NULL, MS_BIND | MS_REC, NULL) != 0 || make_ro(path, true) != 0)
        child_fail(err_fd, SB_STAGE_OTHER, "binding the snapshot");
    mount_work(err_fd, root, p);
    for (size_t i = 0; i < p->host->n_system_paths; i++) bind_system_path(err_fd, root, p->host->system_paths[i]);
    write_etc(err_fd, root, p->host);
    make_dev(err_fd, root);
    /* a proc mount must already be visible before a user namespace may mount
     * a fresh one; each run covers this one with its own */
    cpath(err_fd, path, sizeof path, "%s/proc", root);
    if (mkdir(path, 0555) != 0) child_fail(err_fd, SB_STAGE_OTHER, "mkdir %s", path);
    if (mount("/proc", path, NULL, MS_BIND | MS_REC, NULL) != 0) child_fail(err_fd, SB_STAGE_OTHER, "binding /proc");
    cpath(err_fd, path, sizeof path, "%s/tmp", root);
    if (mkdir(path, 01777) != 0 || chmod(path, 01777) != 0) child_fail(err_fd, SB_STAGE_OTHER, "mkdir %s", path);
    if (p->private_dir) {
        cpath(err_fd, path, sizeof path, "%s/.rlvr/private", root);
        if (mount(p->private_dir, path, NULL, MS_BIND | MS_REC, NULL) != 0 || make_ro(path, true) != 0)
            child_fail(err_fd, SB_STAGE_OTHER, "binding the private directory %s", p->private_dir);
    }
    if (p->judge_dir) {
        cpath(err_fd, path, sizeof path, "%s" RLVR_SANDBOX_JUDGE_DIR, root);
        if (mount(p->judge_dir, path, NULL, MS_BIND | MS_REC, NULL) != 0 || make_ro(path, true) != 0)
            child_fail(err_fd, SB_STAGE_OTHER, "binding the judge directory %s", p->judge_dir);
    }
    loopback_up(err_fd);
    if (sethostname(p->hostname, strlen(p->hostname)) != 0) child_fail(err_fd, SB_STAGE_OTHER, "sethostname");

    if (chdir(root) != 0) child_fail(err_fd, SB_STAGE_OTHER, "chdir %s", root);
    if (syscall(SYS_pivot_root, ".", ".") != 0) child_fail(err_fd, SB_STAGE_OTHER, "pivot_root");
    if (umount2(".", MNT_DETACH) != 0) child_fail(err_fd, SB_STAGE_OTHER, "detaching the old root");
    if (chdir("/") != 0) child_fail(err_fd, SB_STAGE_OTHER, "chdir /");
    struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV};
    if (mount_setattr(AT_FDCWD, "/", 0, &attr, sizeof attr) != 0)
        child_fail(err_fd, SB_STAGE_OTHER, "making the root read-only");
}

/* Restores /work to the snapshot: the old copy-on-write layer (and
 * everything any run wrote) goes away with its tmpfs. In the holder, between
 * runs. A failure is reported and ends the holder. */
static void holder_reset(int err_fd, const holder_plan *p) {
    if (umount2("/work", MNT_DETACH) != 0) child_fail(err_fd, SB_STAGE_OTHER, "unmounting /work");
    if (umount2("/.rlvr/state", MNT_DETACH) != 0) child_fail(err_fd, SB_STAGE_OTHER, "unmounting the state");
    mount_work(err_fd, "", p);
}

/* The holder process: fds[0] answers to the runtime, fds[1] go-ahead from
 * the runtime, fds[2] commands ('R' = reset; EOF = exit). */
static void holder_main(pid_t parent, int *fds, const holder_plan *plan) {
    if (keep_fds(fds, 3) != 0) _exit(120);
    int report = fds[0], go = fds[1], ctl = fds[2];
    /* no PR_SET_PDEATHSIG: it fires when the creating *thread* ends; the
     * holder ends when its command pipe reaches EOF, which also happens when
     * the runtime dies */
    if (getppid() != parent) _exit(120);
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP) != 0)
        child_fail(report, SB_STAGE_UNSHARE, "unshare(user, mount, net, ipc, uts, cgroup namespaces)");
    if (write_all(report, "U", 1) != 0) _exit(120);
    char byte;
    if (read(go, &byte, 1) != 1) _exit(120);
    close(go);
    if (plan->host->privileged) {
        if (setresgid(SB_INNER_GID, SB_INNER_GID, SB_INNER_GID) != 0 || setgroups(0, NULL) != 0 ||
            setresuid(SB_INNER_UID, SB_INNER_UID, SB_INNER_UID) != 0)
            child_fail(report, SB_STAGE_OTHER, "switching to the sandbox identity");
    }
    prctl(PR_SET_DUMPABLE, 1);
    holder_build(report, plan);
    if (write_all(report, "K", 1) != 0) _exit(120);
    for (;;) {
        ssize_t n = read(ctl, &byte, 1);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) _exit(0);
        if (byte == 'R') {
            holder_reset(report, plan);
            if (write_all(report, "K", 1) != 0) _exit(120);
        }
    }
}

static int read_message(int fd, char *buf, size_t cap) {
    for (;;) {
        ssize_t n = read(fd, buf, cap - 1);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -1;
        buf[n] = '\0';
        return (int)n;
    }
}

static int write_maps(pid_t pid, const rlvr_sandbox_host *host) {
    char path[64], text[64];
    snprintf(path, sizeof path, "/proc/%d/uid_map", (int)pid);
    snprintf(text, sizeof text, "%u %u 1\n", SB_INNER_UID, (unsigned)host->host_uid);
    if (write_text(path, text) != 0) return rlvr_error_errno_at(__FILE__, __LINE__, "writing %s", path);
    if (!host->privileged) {
        snprintf(path, sizeof path, "/proc/%d/setgroups", (int)pid);
        if (write_text(path, "deny") != 0) return rlvr_error_errno_at(__FILE__, __LINE__, "writing %s", path);
    }
    snprintf(path, sizeof path, "/proc/%d/gid_map", (int)pid);
    snprintf(text, sizeof text, "%u %u 1\n", SB_INNER_GID, (unsigned)host->host_gid);
    if (write_text(path, text) != 0) return rlvr_error_errno_at(__FILE__, __LINE__, "writing %s", path);
    return 0;
}

static bool path_is_simple(const char *p) {
    if (!p[0] || p[0] == '/') return false;
    for (const char *s = p; *s; s++)
        if ((unsigned char)*s < 32) return false;
    const char *c = p;
    while (*c) {
        const char *e = strchr(c, '/');
        size_t n = e ? (size_t)(e - c) : strlen(c);
        if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.')) return false;
        c += n + (e ? 1 : 0);
        if (!e) break;
    }
    return true;
}

int rlvr_sandbox_new_internal(rlvr_sandbox **out, rlvr_sandbox_host *host, const rlvr_sandbox_options *opt,
                              bool overlay, char *stage) {
    *out = NULL;
    if (stage) *stage = 0;
    if (!opt || opt->version != RLVR_SANDBOX_OPTIONS_VERSION)
        return RLVR_FAIL(RLVR_EINVAL, "rlvr_sandbox_options missing or of another version");
    if (!opt->tree || !opt->tree->sealed) return RLVR_FAIL(RLVR_EINVAL, "sandbox tree missing or not sealed");
    RLVR_TRY(rlvr_sandbox_limits_check(&opt->limits));
    for (const char *const *r = opt->readonly; r && *r; r++)
        if (!path_is_simple(*r)) return RLVR_FAIL(RLVR_EINVAL, "read-only path \"%s\" is not a plain relative path", *r);
    if (opt->private_dir && opt->private_dir[0] != '/')
        return RLVR_FAIL(RLVR_EINVAL, "private directory \"%s\" must be absolute", opt->private_dir);
    if (opt->judge_dir && opt->judge_dir[0] != '/')
        return RLVR_FAIL(RLVR_EINVAL, "judge directory \"%s\" must be absolute", opt->judge_dir);

    rlvr_sandbox *sb = calloc(1, sizeof *sb);
    if (!sb) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    sb->host = host;
    sb->holder = -1;
    sb->holder_pidfd = -1;
    sb->exiting = -1;
    sb->ctl_fd = -1;
    sb->answer_fd = -1;
    sb->limits = opt->limits;
    sb->has_private = opt->private_dir != NULL;
    sb->has_judge = opt->judge_dir != NULL;
    sb->landlock = host->landlock && opt->kind == RLVR_SANDBOX_ENCLAVE;
    int rc = rlvr_fs_mkdtemp(&sb->dir, host->scratch, "sb-");
    char path[PATH_MAX];
    if (rc == 0 && chmod(sb->dir, 0711) != 0) rc = rlvr_error_errno_at(__FILE__, __LINE__, "chmod %s", sb->dir);
    if (rc == 0) {
        snprintf(path, sizeof path, "%s/root", sb->dir);
        if (mkdir(path, 0755) != 0) rc = rlvr_error_errno_at(__FILE__, __LINE__, "mkdir %s", path);
    }
    if (rc < 0) {
        rlvr_sandbox_free(sb);
        return rc;
    }

    holder_plan plan = {
        .host = host,
        .dir = sb->dir,
        .lower = opt->tree->path,
        .overlay = overlay,
        .readonly = opt->readonly,
        .private_dir = opt->private_dir,
        .judge_dir = opt->judge_dir,
        .disk_bytes = opt->limits.disk_bytes,
        .hostname = opt->kind == RLVR_SANDBOX_WORKSPACE ? "workspace" : "enclave",
    };
    int report[2] = {-1, -1}, go[2] = {-1, -1}, ctl[2] = {-1, -1};
    if (pipe2(report, O_CLOEXEC) != 0 || pipe2(go, O_CLOEXEC) != 0 || pipe2(ctl, O_CLOEXEC) != 0) {
        rc = rlvr_error_errno_at(__FILE__, __LINE__, "pipe");
        goto fail;
    }
    int holder_fds[3] = {report[1], go[0], ctl[0]};
    pid_t pid;
    rc = spawn_holder(host, &plan, holder_fds, &pid, &sb->holder_pidfd);
    if (rc < 0) goto fail;
    sb->holder = pid;
    close(report[1]);
    close(go[0]);
    close(ctl[0]);
    report[1] = go[0] = ctl[0] = -1;
    sb->ctl_fd = ctl[1];
    ctl[1] = -1;

    char msg[600];
    int n = read_message(report[0], msg, sizeof msg);
    if (n <= 0 || msg[0] != 'U') {
        if (n > 1 && msg[0] == 'E' && stage) *stage = msg[1];
        rc = RLVR_FAIL(RLVR_ESANDBOX, "sandbox holder: %s", n > 2 && msg[0] == 'E' ? msg + 2 : "exited early");
        goto fail;
    }
    rc = write_maps(pid, host);
    if (rc < 0) goto fail;
    if (write_all(go[1], "G", 1) != 0) {
        rc = rlvr_error_errno_at(__FILE__, __LINE__, "starting the sandbox holder");
        goto fail;
    }
    n = read_message(report[0], msg, sizeof msg);
    if (n <= 0 || msg[0] != 'K') {
        if (n > 1 && msg[0] == 'E' && stage) *stage = msg[1];
        rc = RLVR_FAIL(RLVR_ESANDBOX, "building the sandbox: %s", n > 2 && msg[0] == 'E' ? msg + 2 : "holder exited early");
        goto fail;
    }
    sb->answer_fd = report[0];
    close(go[1]);
    *out = sb;
    return 0;

fail:
    for (int i = 0; i < 2; i++) {
        if (report[i] >= 0) close(report[i]);
        if (go[i] >= 0) close(go[i]);
        if (ctl[i] >= 0) close(ctl[i]);
    }
    rlvr_sandbox_free(sb);
    return rc;
}

int rlvr_sandbox_new(rlvr_sandbox **out, rlvr_sandbox_host *host, const rlvr_sandbox_options *opt) {
    return rlvr_sandbox_new_internal(out, host, opt, host->overlay, NULL);
}

void rlvr_sandbox_free(rlvr_sandbox *sb) {
    if (!sb) return;
    reap_exiting(sb, true);
    if (sb->ctl_fd >= 0) close(sb->ctl_fd);
    if (sb->answer_fd >= 0) close(sb->answer_fd);
    if (sb->holder_pidfd >= 0) {
        pidfd_send_signal(sb->holder_pidfd, SIGKILL, NULL, 0);
        process_ended(sb->holder, sb->holder_pidfd, true);
        close(sb->holder_pidfd);
    }
    if (sb->dir) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/root", sb->dir);
        rmdir(path);
        rmdir(sb->dir);
        free(sb->dir);
    }
    free(sb);
}

const rlvr_sandbox_limits *rlvr_sandbox_get_limits(const rlvr_sandbox *sb) { return &sb->limits; }

int rlvr_sandbox_reset(rlvr_sandbox *sb) {
    if (sb->holder <= 0 || sb->ctl_fd < 0) return RLVR_FAIL(RLVR_ESTATE, "the sandbox is gone");
    if (write_all(sb->ctl_fd, "R", 1) != 0) return rlvr_error_errno_at(__FILE__, __LINE__, "asking the sandbox to reset");
    struct pollfd p = {.fd = sb->answer_fd, .events = POLLIN};
    int r;
    while ((r = poll(&p, 1, 60 * 1000)) < 0 && errno == EINTR) {
    }
    char msg[600];
    int n = r > 0 ? read_message(sb->answer_fd, msg, sizeof msg) : 0;
    if (n == 1 && msg[0] == 'K') return 0;
    /* the holder is unusable now: make sure it is gone */
    close(sb->ctl_fd);
    sb->ctl_fd = -1;
    pidfd_send_signal(sb->holder_pidfd, SIGKILL, NULL, 0);
    return RLVR_FAIL(RLVR_ESANDBOX, "resetting the sandbox: %s",
                     n > 2 && msg[0] == 'E' ? msg + 2 : r == 0 ? "no answer within 60 s" : "the holder ended");
}

/* ---- runs ------------------------------------------------------------------ */

/* What I tells M and M tells the runtime: fixed size, one write. */
typedef struct {
    int32_t started;   /* the main process was started */
    int32_t finished;  /* I reaped the main process and wrote this */
    int32_t status;    /* wait status of the main process */
    int32_t limit;     /* rlvr_sandbox_limit */
    int32_t max_procs;
    int32_t prepare_status;
    int64_t max_rss;
    double cpu_s;
    char error[256];   /* infrastructure failure inside the sandbox */
} run_report;

typedef struct {
    const rlvr_sandbox *sb;
    const rlvr_sandbox_cmd *cmd; /* exec mode */
    rlvr_sandbox_fn fn;          /* call mode */
    const void *arg;             /* arg_len bytes: the run gets a copy */
    size_t arg_len;
    double wall_s;
} run_plan;

static void report_error(int fd, run_report *r, const char *fmt, ...) __attribute__((format(printf, 3, 4), noreturn));

static void report_error(int fd, run_report *r, const char *fmt, ...) {
    int saved = errno;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(r->error, sizeof r->error, fmt, ap);
    va_end(ap);
    if (saved && n >= 0 && (size_t)n + 4 < sizeof r->error)
        snprintf(r->error + n, sizeof r->error - (size_t)n, ": %s", strerror(saved));
    if (write_all(fd, r, sizeof *r) != 0) {
    }
    _exit(122);
}

/* -- C: the command ---------------------------------------------------------- */

static const char *const base_env[] = {
    "PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp", "LANG=C.UTF-8", "USER=sandbox",
    "LOGNAME=sandbox", "SHELL=/bin/sh",
};

/* Landlock (verification enclaves): files may be opened for writing only
 * beneath /work, /tmp and /dev. Above all this keeps the code under test out
 * of its test harness's /proc/PID/mem (same uid, so nothing else stops it;
 * seccomp cannot see paths). Pipes are not file-system objects to Landlock:
 * /dev/stdout keeps working, and a process can still reopen another's
 * results pipe through /proc; the TAP judge is what catches forged lines. */
static void restrict_writes(int err_fd) {
    /* REFER (ABI 2) must be handled and granted, or Landlock refuses every
     * rename into another directory (EXDEV) */
    const __u64 rw = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REFER;
    struct landlock_ruleset_attr attr = {.handled_access_fs = rw};
    int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
    if (rs < 0) child_fail(err_fd, SB_STAGE_OTHER, "landlock_create_ruleset");
    static const char *const writable[] = {"/work", "/tmp", "/dev"};
    for (size_t i = 0; i < sizeof writable / sizeof *writable; i++) {
        int fd = open(writable[i], O_PATH | O_CLOEXEC);
        if (fd < 0) child_fail(err_fd, SB_STAGE_OTHER, "open %s for landlock", writable[i]);
        struct landlock_path_beneath_attr pb = {.allowed_access = i < 2 ? rw : LANDLOCK_ACCESS_FS_WRITE_FILE,
                                                .parent_fd = fd};
        if (syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) != 0)
            child_fail(err_fd, SB_STAGE_OTHER, "landlock_add_rule %s", writable[i]);
        close(fd);
    }
    if (syscall(SYS_landlock_restrict_self, rs, 0) != 0) child_fail(err_fd, SB_STAGE_OTHER, "landlock_restrict_self");
    close(rs);
}

static void drop_privileges(int err_fd, const rlvr_sandbox *sb) {
    const rlvr_sandbox_host *host = sb->host;
    for (int cap = 0; cap <= host->cap_last; cap++)
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL)
            child_fail(err_fd, SB_STAGE_OTHER, "dropping capability %d from the bounding set", cap);
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                                     SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                                     SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
              0, 0, 0) != 0)
        child_fail(err_fd, SB_STAGE_OTHER, "setting securebits");
    struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    if (syscall(SYS_capset, &hdr, data) != 0) child_fail(err_fd, SB_STAGE_OTHER, "clearing capabilities");
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) child_fail(err_fd, SB_STAGE_OTHER, "no_new_privs");
    if (sb->landlock) restrict_writes(err_fd);
    struct sock_fprog prog = {.len = host->filter_len, .filter = host->filter};
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0)
        child_fail(err_fd, SB_STAGE_OTHER, "loading the seccomp filter");
}

static void set_limit(int err_fd, int resource, rlim_t soft, rlim_t hard, const char *name) {
    struct rlimit rl = {soft, hard};
    if (setrlimit(resource, &rl) != 0) child_fail(err_fd, SB_STAGE_OTHER, "setrlimit %s", name);
}

/* Where a judge program's descriptor sits in the command (child_setup). */
#define SB_JUDGE_FD 5

static void exec_command(const rlvr_sandbox_cmd *cmd) {
    const char *envp[64];
    size_t n = 0;
    for (size_t i = 0; i < sizeof base_env / sizeof *base_env; i++) envp[n++] = base_env[i];
    char results_env[32];
    if (cmd->results_fd) {
        snprintf(results_env, sizeof results_env, "RLVR_RESULTS_FD=%d", RLVR_SANDBOX_RESULTS_FD);
        envp[n++] = results_env;
    }
    for (const char *const *e = cmd->env; e && *e && n < 63; e++) envp[n++] = *e;
    envp[n] = NULL;
    const char *prog = cmd->argv[0];
    char found[PATH_MAX];
    if (!strchr(prog, '/')) {
        static const char *const dirs[] = {"/usr/local/bin", "/usr/bin", "/bin"};
        for (size_t i = 0; i < 3; i++) {
            snprintf(found, sizeof found, "%s/%s", dirs[i], prog);
            if (access(found, X_OK) == 0) {
                prog = found;
                break;
            }
        }
    }
    if (cmd->judge) /* from the descriptor: the directory is hidden by now */
        syscall(SYS_execveat, SB_JUDGE_FD, "", (char *const *)cmd->argv, (char *const *)envp, AT_EMPTY_PATH);
    else
        execve(prog, (char *const *)cmd->argv, (char *const *)envp);
    char msg[PATH_MAX + 64];
    int len = snprintf(msg, sizeof msg, "rlvr sandbox: cannot run %s: %s\n", cmd->argv[0], strerror(errno));
    if (write_all(1, msg, (size_t)len) != 0) {
    }
    _exit(127);
}

typedef enum {
    ROLE_EXEC,    /* the command: stdout+stderr to out, results on fd 3, then exec */
    ROLE_CALL,    /* the runtime's function: answer on stdout */
    ROLE_PREPARE, /* the runtime's prepare step: never holds the results descriptor */
} child_role;

/* RLIMIT_NPROC of a run. The process limit itself is I's: it kills the run
 * when a sample sees `processes` of them. The kernel's cap is a backstop
 * above it that bounds a fork bomb between samples; it needs headroom, for
 * at exactly the limit (the user namespace's count includes the holder, M
 * and I: 3 more) a bomb whose forks fail collapses within milliseconds and
 * the 10 ms sampler saw it at the limit in only 28 of 40 runs (dash,
 * `b() { b & b & wait; }; b`, 24 processes). */
static int64_t nproc_backstop(int32_t processes) { return 2 * (int64_t)processes + 3; }

/* What every process inside a run does before the runtime's code or the
 * command runs: its own session, descriptors 0..2 (and 3 for results, 5 for
 * a judge program), the working directory, rlimits, no capabilities,
 * no_new_privs, seccomp. `err` reports setup failures to I; returns its new
 * number (4). Only system calls and stack buffers: safe in a vfork-style
 * child. */
static int child_setup(const run_plan *plan, child_role role, int out, int results, int err, int judge) {
    const rlvr_sandbox_limits *l = &plan->sb->limits;
    setsid();
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0) child_fail(err, SB_STAGE_OTHER, "open /dev/null");
    int hi_out = fcntl(out, F_DUPFD_CLOEXEC, 64);
    int hi_res = results >= 0 && role == ROLE_EXEC ? fcntl(results, F_DUPFD_CLOEXEC, 64) : -1;
    int hi_err = fcntl(err, F_DUPFD_CLOEXEC, 64);
    int hi_null = fcntl(null, F_DUPFD_CLOEXEC, 64);
    int hi_judge = judge >= 0 && role == ROLE_EXEC ? fcntl(judge, F_DUPFD_CLOEXEC, 64) : -1;
    if (judge >= 0 && role == ROLE_EXEC && hi_judge < 0) child_fail(err, SB_STAGE_OTHER, "dup");
    if (hi_out < 0 || hi_err < 0 || hi_null < 0 || (results >= 0 && role == ROLE_EXEC && hi_res < 0))
        child_fail(err, SB_STAGE_OTHER, "dup");
    if (dup2(hi_null, 0) < 0 || dup2(hi_out, 1) < 0 || dup2(role == ROLE_EXEC ? hi_out : hi_null, 2) < 0)
        child_fail(hi_err, SB_STAGE_OTHER, "dup2");
    if (hi_res >= 0 && dup2(hi_res, RLVR_SANDBOX_RESULTS_FD) < 0) child_fail(hi_err, SB_STAGE_OTHER, "dup2");
    if (hi_res < 0) close(RLVR_SANDBOX_RESULTS_FD);
    err = dup3(hi_err, 4, O_CLOEXEC);
    if (err < 0) child_fail(hi_err, SB_STAGE_OTHER, "dup3");
    if (hi_judge >= 0 && dup3(hi_judge, SB_JUDGE_FD, O_CLOEXEC) < 0) child_fail(err, SB_STAGE_OTHER, "dup3");
    close_range(hi_judge >= 0 ? SB_JUDGE_FD + 1 : SB_JUDGE_FD, ~0U, 0);

    char cwd[PATH_MAX];
    const char *rel = plan->cmd && plan->cmd->cwd ? plan->cmd->cwd : "";
    cpath(err, cwd, sizeof cwd, "/work/%s", rel);
    if (chdir(cwd) != 0) child_fail(err, SB_STAGE_OTHER, "chdir %s", cwd);

    rlim_t cpu = (rlim_t)(l->cpu_s + 0.999);
    set_limit(err, RLIMIT_CPU, cpu, cpu + 1, "cpu");
    rlim_t nproc = (rlim_t)nproc_backstop(l->processes);
    set_limit(err, RLIMIT_NPROC, nproc, nproc, "nproc");
    set_limit(err, RLIMIT_FSIZE, (rlim_t)l->file_bytes, (rlim_t)l->file_bytes, "fsize");
    set_limit(err, RLIMIT_NOFILE, (rlim_t)l->open_files, (rlim_t)l->open_files, "nofile");
    set_limit(err, RLIMIT_CORE, 0, 0, "core");
    int adj = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (adj >= 0) {
        if (write_all(adj, "1000", 4) != 0) {
        }
        close(adj);
    }
    /* the runtime may ignore signals (SIGPIPE under MPI); the command starts clean */
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP) signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    drop_privileges(err, plan->sb);
    return err;
}

/* The command (exec mode). The address-space cap comes last: the runtime's
 * code before it may be built with sanitizers that reserve terabytes. */
static void command_main(const run_plan *plan, int out, int results, int err, int judge) {
    err = child_setup(plan, ROLE_EXEC, out, results, err, judge);
    const rlvr_sandbox_limits *l = &plan->sb->limits;
    set_limit(err, RLIMIT_AS, (rlim_t)l->memory_bytes, (rlim_t)l->memory_bytes, "as");
    exec_command(plan->cmd);
}

typedef struct {
    const run_plan *plan;
    int out, results, err, judge;
} command_args;

/* Entry of the command spawned with CLONE_VM | CLONE_VFORK (as
 * posix_spawn does): no copy of the runtime's page tables; I waits until
 * the exec. */
static int command_entry(void *p) {
    const command_args *a = p;
    command_main(a->plan, a->out, a->results, a->err, a->judge);
    return 127;
}

/* The runtime's function (call mode) or prepare step: its return value is
 * the exit code. */
static void runtime_code_main(const run_plan *plan, child_role role, int out, int err) {
    err = child_setup(plan, role, out, -1, err, -1);
    close(err); /* tells I the setup worked */
    /* whatever the runtime had buffered in stdio must not leak into the answer */
    __fpurge(stdout);
    __fpurge(stderr);
    /* the arguments are this process's own copies (from the spawner's image) */
    int rc = role == ROLE_CALL ? plan->fn((void *)plan->arg) : plan->cmd->prepare((void *)plan->cmd->prepare_arg);
    fflush(stdout);
    _exit(rc & 0xff);
}

/* Waits for a child's setup report: 0 when it closed the pipe (exec or
 * setup done), -1 with the message in `error` when it failed. */
static int wait_setup(int fd, char *error, size_t cap) {
    char msg[512];
    int n = read_message(fd, msg, sizeof msg);
    close(fd);
    if (n > 2 && msg[0] == 'E') {
        size_t len = strnlen(msg + 2, cap - 1);
        memcpy(error, msg + 2, len);
        error[len] = '\0';
        return -1;
    }
    return 0;
}

/* -- I: pid 1 of the run ----------------------------------------------------- */

typedef struct {
    int procs;
    double cpu_s;     /* live processes, including their reaped children */
    int64_t rss;      /* bytes, live processes together */
    int64_t rss_max;  /* bytes, the largest one */
} run_sample;

static void sample_run(run_sample *s, long ticks_per_s, long page) {
    s->procs = 0;
    s->cpu_s = 0;
    s->rss = 0;
    s->rss_max = 0;
    DIR *d = opendir("/proc");
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 1) continue;
        char path[64], buf[1024];
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0) continue;
        buf[n] = '\0';
        char *p = strrchr(buf, ')');
        if (!p) continue;
        /* after ")": state ppid pgrp session tty tpgid flags minflt cminflt
         * majflt cmajflt utime stime cutime cstime priority nice threads
         * itrealvalue starttime vsize rss */
        char state;
        unsigned long long ut, st, cut, cst, vsize;
        long long rss;
        if (sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu %*d %*d %*d %*d %*u %llu %lld",
                   &state, &ut, &st, &cut, &cst, &vsize, &rss) != 7)
            continue;
        s->procs++;
        s->cpu_s += (double)(ut + st + cut + cst) / (double)ticks_per_s;
        if (rss > 0) s->rss += rss * page;
        if (rss * page > s->rss_max) s->rss_max = rss * page;
    }
    closedir(d);
}

/* The run's processes other than I: /proc's numeric entries, without
 * reading them (tens of microseconds where sample_run takes a millisecond
 * in a fork bomb). */
static int count_run_processes(void) {
    int n = 0;
    DIR *d = opendir("/proc");
    if (!d) return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        n += !*end && pid > 1;
    }
    closedir(d);
    return n;
}

static double rusage_cpu(const struct rusage *ru) {
    return (double)ru->ru_utime.tv_sec + 1e-6 * (double)ru->ru_utime.tv_usec + (double)ru->ru_stime.tv_sec +
           1e-6 * (double)ru->ru_stime.tv_usec;
}

static bool nearly_full(const char *path) {
    struct statvfs v;
    if (statvfs(path, &v) != 0) return false;
    double free_bytes = (double)v.f_bavail * (double)v.f_frsize;
    return free_bytes < 128.0 * 1024 || (v.f_files > 0 && v.f_favail == 0);
}

static void init_main(const run_plan *plan, int out, int results, int report_fd, int life) {
    run_report rep;
    memset(&rep, 0, sizeof rep);
    const rlvr_sandbox_limits *l = &plan->sb->limits;
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) report_error(report_fd, &rep, "prctl");
    struct pollfd pl = {.fd = life, .events = POLLIN};
    if (poll(&pl, 1, 0) > 0) _exit(123); /* M is already gone */
    if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
        report_error(report_fd, &rep, "mounting /proc");
    char opts[128];
    snprintf(opts, sizeof opts, "size=%lld,mode=1777,nr_inodes=%lld", (long long)l->tmp_bytes,
             (long long)(l->tmp_bytes / 4096 + 256));
    if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0) report_error(report_fd, &rep, "mounting /tmp");
    /* the copy-on-write layer and the snapshot stay out of reach of every
     * run; the private directory of runtime-only calls out of commands' */
    if (umount2("/.rlvr/state", MNT_DETACH) != 0 || umount2("/.rlvr/lower", MNT_DETACH) != 0)
        report_error(report_fd, &rep, "hiding the sandbox's state");
    if (!plan->fn && plan->sb->has_private && umount2("/.rlvr/private", MNT_DETACH) != 0)
        report_error(report_fd, &rep, "hiding the private directory");
    /* the judge directory from everything: a judge command keeps only a
     * descriptor of its program, opened here and closed at its exec, so
     * nothing the judge starts (the code under test) can run or read it */
    int judge = -1;
    if (plan->sb->has_judge) {
        if (!plan->fn && plan->cmd->judge) {
            char path[PATH_MAX];
            snprintf(path, sizeof path, RLVR_SANDBOX_JUDGE_DIR "/%s", plan->cmd->argv[0]);
            judge = open(path, O_PATH | O_CLOEXEC);
            if (judge < 0) report_error(report_fd, &rep, "opening the judge program %s", plan->cmd->argv[0]);
        }
        if (umount2(RLVR_SANDBOX_JUDGE_DIR, MNT_DETACH) != 0) report_error(report_fd, &rep, "hiding the judge directory");
    }

    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);
    bool run_command = true;
    int cerr[2];
    if (!plan->fn && plan->cmd->prepare) {
        /* the prepare step (applying a patch) runs in its own process,
         * which never holds the results descriptor */
        if (pipe2(cerr, O_CLOEXEC) != 0) report_error(report_fd, &rep, "pipe");
        pid_t p = fork();
        if (p < 0) report_error(report_fd, &rep, "fork for the prepare step");
        if (p == 0) {
            close(cerr[0]);
            close(report_fd);
            close(life);
            if (results >= 0) close(results);
            runtime_code_main(plan, ROLE_PREPARE, out, cerr[1]);
        }
        close(cerr[1]);
        if (wait_setup(cerr[0], rep.error, sizeof rep.error) != 0) {
            kill(-1, SIGKILL);
            while (waitpid(-1, NULL, 0) > 0 || errno == EINTR) {
            }
            if (write_all(report_fd, &rep, sizeof rep) != 0) {
            }
            _exit(122);
        }
        int st;
        while (waitpid(p, &st, 0) < 0 && errno == EINTR) {
        }
        rep.started = 1;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            rep.prepare_status = WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
            rep.status = st;
            run_command = false;
        }
    }
    pid_t c = -1;
    if (run_command) {
        if (pipe2(cerr, O_CLOEXEC) != 0) report_error(report_fd, &rep, "pipe");
        if (plan->fn) {
            c = fork();
            if (c == 0) {
                close(cerr[0]);
                close(report_fd);
                close(life);
                if (results >= 0) close(results);
                runtime_code_main(plan, ROLE_CALL, out, cerr[1]);
            }
        } else if (RLVR_SANITIZED) {
            /* sanitizer runtimes cannot run on a borrowed stack under the
             * address-space cap: a plain fork */
            c = fork();
            if (c == 0) {
                close(cerr[0]);
                close(report_fd);
                close(life);
                command_main(plan, out, results, cerr[1], judge);
            }
        } else {
            /* C's stack; the command's own memory starts at its exec */
            size_t stack_size = 256 * 1024;
            char *stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
            if (stack == MAP_FAILED) report_error(report_fd, &rep, "mmap for the command's stack");
            command_args args = {plan, out, results, cerr[1], judge};
            c = clone(command_entry, stack + stack_size, CLONE_VM | CLONE_VFORK | SIGCHLD, &args);
            munmap(stack, stack_size);
        }
        if (c < 0) report_error(report_fd, &rep, "starting the command");
        if (judge >= 0) close(judge);
        close(cerr[1]);
        close(out);
        if (results >= 0) close(results);
        if (wait_setup(cerr[0], rep.error, sizeof rep.error) != 0) {
            kill(-1, SIGKILL);
            while (waitpid(-1, NULL, 0) > 0 || errno == EINTR) {
            }
            if (write_all(report_fd, &rep, sizeof rep) != 0) {
            }
            _exit(122);
        }
        rep.started = 1;
    } else {
        close(out);
        if (results >= 0) close(results);
    }

    long ticks = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
    bool c_done = !run_command;
    rlvr_sandbox_limit limit = RLVR_LIMIT_NONE;
    /* the command's processes only (not the prepare step, which is the
     * runtime's code): the CPU C and the orphans reaped here used, each with
     * its own reaped descendants. Memory comes from sampling alone: a
     * process's ru_maxrss includes the runtime's pages it shared before
     * exec, and sampling starts after C's exec. */
    double reaped_cpu = 0;
    int64_t peak_one = 0;
    bool check_memory = plan->fn == NULL;
    struct timespec tick = {0, 10 * 1000 * 1000}, fast_tick = {0, 1000 * 1000};
    bool crowded = false;
    double next_full = 0;
    for (;;) {
        int st;
        struct rusage ru;
        pid_t p;
        while ((p = wait4(-1, &st, c_done ? 0 : WNOHANG, &ru)) > 0 || (p < 0 && errno == EINTR)) {
            if (p < 0) continue;
            reaped_cpu += rusage_cpu(&ru);
            /* the kernel's high-water mark: exact, where the 10 ms samples
             * miss the last megabytes of a process that grows fast and
             * dies at its address-space cap */
            int64_t peak = (int64_t)ru.ru_maxrss * 1024;
            if (peak > peak_one) peak_one = peak;
            if (peak > rep.max_rss) rep.max_rss = peak;
            if (WIFSIGNALED(st) && WTERMSIG(st) == SIGXFSZ && limit == RLVR_LIMIT_NONE) limit = RLVR_LIMIT_FILE_SIZE;
            if (WIFSIGNALED(st) && WTERMSIG(st) == SIGXCPU && limit == RLVR_LIMIT_NONE) limit = RLVR_LIMIT_CPU;
            if (p == c) {
                c_done = true;
                rep.status = st;
                /* the main process ended: nothing of the run may outlive it */
                kill(-1, SIGKILL);
            }
        }
        if (c_done) break; /* and every process reaped (ECHILD) */
        sigtimedwait(&chld, NULL, crowded ? &fast_tick : &tick);
        /* a run with over a quarter of its processes is counted every
         * millisecond between full samples: a fork bomb whose forks fail
         * at the backstop collapses within milliseconds. The count also
         * precedes every full sample: reading each process's stat takes
         * about a millisecond in a bomb, long enough for it to fall back
         * under the limit (with three busy loops on 2 cores the bomb was
         * caught in 382 of 400 runs with it, 357 of 400 without) */
        int n = count_run_processes();
        crowded = n > l->processes / 4;
        if (crowded && n < l->processes && rlvr_now() < next_full) continue;
        next_full = rlvr_now() + 0.01;
        run_sample s;
        sample_run(&s, ticks, page);
        double cpu = s.cpu_s + reaped_cpu;
        if (s.procs > rep.max_procs) rep.max_procs = s.procs;
        if (n > rep.max_procs) rep.max_procs = n;
        if (s.rss > rep.max_rss) rep.max_rss = s.rss;
        if (s.rss_max > peak_one) peak_one = s.rss_max;
        rlvr_sandbox_limit hit = RLVR_LIMIT_NONE;
        if (cpu >= l->cpu_s) hit = RLVR_LIMIT_CPU;
        else if (check_memory && s.rss >= l->memory_bytes) hit = RLVR_LIMIT_MEMORY;
        else if (s.procs >= l->processes || n >= l->processes) hit = RLVR_LIMIT_PROCESSES;
        if (hit != RLVR_LIMIT_NONE) {
            if (limit == RLVR_LIMIT_NONE || limit == RLVR_LIMIT_FILE_SIZE) limit = hit;
            kill(-1, SIGKILL);
        }
    }
    rep.cpu_s = reaped_cpu;
    int st = rep.status;
    if (limit == RLVR_LIMIT_NONE && WIFSIGNALED(st) && WTERMSIG(st) == SIGXCPU) limit = RLVR_LIMIT_CPU;
    if (limit == RLVR_LIMIT_NONE && WIFSIGNALED(st) && WTERMSIG(st) == SIGXFSZ) limit = RLVR_LIMIT_FILE_SIZE;
    if (limit == RLVR_LIMIT_NONE && rep.cpu_s >= l->cpu_s) limit = RLVR_LIMIT_CPU;
    /* a process that ran into its address-space cap: its resident peak is
     * close to it, less what the cap counts and RSS does not (mapped
     * libraries, allocator arenas: 14 MB of a 96 MB cap measured for a
     * glibc program on Debian 12, so 0.9 of the cap missed it) */
    bool abnormal = WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) != 0);
    if (limit == RLVR_LIMIT_NONE && check_memory && abnormal && peak_one >= (int64_t)(0.75 * (double)l->memory_bytes))
        limit = RLVR_LIMIT_MEMORY;
    if (limit == RLVR_LIMIT_NONE && (nearly_full("/work") || nearly_full("/tmp"))) limit = RLVR_LIMIT_DISK;
    rep.limit = limit;
    rep.finished = 1;
    if (write_all(report_fd, &rep, sizeof rep) != 0) {
    }
    _exit(0);
}

/* -- M: joins the sandbox, supervises one run --------------------------------- */

static void supervisor_main(pid_t runtime, const run_plan *plan, int *fds) {
    /* fds: out, results (-1 allowed), status, ctl */
    if (keep_fds(fds, 4) != 0) _exit(124);
    int out = fds[0], results = fds[1], status = fds[2], ctl = fds[3];
    run_report rep;
    memset(&rep, 0, sizeof rep);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != runtime) _exit(124);

    static const char *const kinds[] = {"user", "mnt", "net", "ipc", "uts"};
    int ns[5];
    for (int i = 0; i < 5; i++) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/ns/%s", (int)plan->sb->holder, kinds[i]);
        ns[i] = open(path, O_RDONLY | O_CLOEXEC);
        if (ns[i] < 0) report_error(status, &rep, "opening %s", path);
    }
    for (int i = 0; i < 5; i++) {
        if (setns(ns[i], 0) != 0) report_error(status, &rep, "joining the sandbox's %s namespace", kinds[i]);
        close(ns[i]);
    }
    if (plan->sb->host->privileged) {
        prctl(PR_SET_KEEPCAPS, 1);
        if (setresgid(SB_INNER_GID, SB_INNER_GID, SB_INNER_GID) != 0 || setgroups(0, NULL) != 0 ||
            setresuid(SB_INNER_UID, SB_INNER_UID, SB_INNER_UID) != 0)
            report_error(status, &rep, "switching to the sandbox identity");
    }
    /* fresh mount, PID and IPC namespaces per run: nothing a run leaves in
     * them (processes, System V shared memory, message queues) survives it */
    if (unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWCGROUP) != 0)
        report_error(status, &rep, "unshare(mount, pid, ipc, cgroup namespaces) for the run");
    int rpipe[2], life[2];
    if (pipe2(rpipe, O_CLOEXEC) != 0 || pipe2(life, O_CLOEXEC) != 0) report_error(status, &rep, "pipe");
    pid_t init = fork();
    if (init < 0) report_error(status, &rep, "fork for the run's init");
    if (init == 0) {
        close(rpipe[0]);
        close(life[1]);
        close(status);
        close(ctl);
        init_main(plan, out, results, rpipe[1], life[0]);
    }
    close(rpipe[1]);
    close(life[0]);
    close(out);
    if (results >= 0) close(results);
    double deadline = rlvr_now() + plan->wall_s;
    int pidfd = pidfd_open(init, 0);
    if (pidfd < 0) {
        kill(init, SIGKILL);
        waitpid(init, NULL, 0);
        report_error(status, &rep, "pidfd_open");
    }
    rlvr_sandbox_limit limit = RLVR_LIMIT_NONE;
    bool ctl_open = true, reported = false;
    size_t got = 0;
    for (;;) {
        double left = deadline - rlvr_now();
        if (left <= 0) {
            limit = RLVR_LIMIT_WALL;
            kill(init, SIGKILL);
            break;
        }
        struct pollfd p[3] = {{.fd = pidfd, .events = POLLIN}, {.fd = rpipe[0], .events = POLLIN},
                              {.fd = ctl, .events = POLLIN}};
        int r = poll(p, ctl_open ? 3 : 2, (int)(left * 1000) + 1);
        if (r < 0 && errno != EINTR) {
            kill(init, SIGKILL);
            break;
        }
        if (r > 0 && p[1].revents) {
            /* I writes its report only once every process of the run is
             * reaped, and then just exits: the runtime hears it at once and
             * need not wait for the namespaces to be torn down */
            ssize_t n = read(rpipe[0], (char *)&rep + got, sizeof rep - got);
            if (n > 0) got += (size_t)n;
            if (n <= 0 || got == sizeof rep) {
                reported = got == sizeof rep;
                break;
            }
        }
        if (r > 0 && p[0].revents) break;
        if (r > 0 && ctl_open && p[2].revents) {
            /* the runtime asks to stop the run (output cap) */
            kill(init, SIGKILL);
            ctl_open = false;
            break;
        }
    }
    if (!reported) { /* I ended (or was killed) without its whole report */
        int st;
        while (waitpid(init, &st, 0) < 0 && errno == EINTR) {
        }
        ssize_t n = got < sizeof rep ? read(rpipe[0], (char *)&rep + got, sizeof rep - got) : 0;
        if (n > 0) got += (size_t)n;
        if (got != sizeof rep) memset(&rep, 0, sizeof rep), rep.started = 1;
    }
    if (limit == RLVR_LIMIT_WALL) rep.limit = RLVR_LIMIT_WALL;
    if (write_all(status, &rep, sizeof rep) != 0) {
    }
    close(status);
    while (waitpid(init, NULL, 0) < 0 && errno == EINTR) {
    }
    _exit(0);
}

/* -- Z: the spawner ------------------------------------------------------------
 * A fork copies the parent's page tables, and the runtime's grow with the
 * pool, the rollouts and the allocator's heap: forking the supervisors from
 * the runtime cost 1.7 ms at 48 MB touched against 0.18 ms at 2 MB (2-vCPU
 * VM), and during the quickstart's RL a quarter of the runtime's own time
 * went to fork and to the copy-on-write faults after it. The spawner is
 * forked once, with the host, and forks the holders and the supervisors on
 * request. It is the same program, so function pointers (a run's prepare
 * step, a called function) stay valid in it; everything else a child needs
 * comes as a flat image (core/flat.h) in a memfd, passed with the child's
 * descriptors over a socket. The answer is the child's pid and a pidfd: the
 * runtime signals and waits for its sandbox processes through those, and the
 * spawner reaps them. The spawner ends when the runtime's end of the socket
 * closes; the supervisors die with it (PR_SET_PDEATHSIG), the holders when
 * their command pipes close. */

enum { SPAWN_HOLDER = 'H', SPAWN_RUN = 'R', SPAWN_MAX_FDS = 5 };

/* The request: the kind, which of the descriptor slots are passed (the
 * memfd with the image is slot 0) and where the plan is in the image. */
typedef struct {
    char kind;
    uint8_t n_slots, present;
    uint64_t root;
} spawn_request;

typedef struct {
    int32_t pid; /* > 0: the child; else -errno */
} spawn_answer;

/* A holder's plan in the image. */
typedef struct {
    const rlvr_sandbox_host *host; /* valid in the spawner, forked after the host was made */
    int64_t disk_bytes;
    uint64_t dir, lower, readonly, private_dir, judge_dir, hostname;
    int32_t overlay;
} wire_holder;

/* A run's plan in the image. The sandbox goes by value (its host pointer is
 * valid in the spawner). */
typedef struct {
    rlvr_sandbox sb;
    double wall_s;
    rlvr_sandbox_fn fn;
    uint64_t arg;
    int32_t has_cmd, results_fd, judge;
    uint64_t argv, env, cwd;
    int (*prepare)(void *);
    uint64_t prepare_arg;
} wire_run;

static void spawned_holder(pid_t spawner, char *image, uint64_t root, int *fds) {
    const wire_holder *w = (const wire_holder *)(void *)(image + root);
    holder_plan plan = {
        .host = w->host,
        .dir = rlvr_flat_at(image, w->dir),
        .lower = rlvr_flat_at(image, w->lower),
        .overlay = w->overlay != 0,
        .readonly = rlvr_flat_strv_at(image, w->readonly),
        .private_dir = rlvr_flat_at(image, w->private_dir),
        .judge_dir = rlvr_flat_at(image, w->judge_dir),
        .disk_bytes = w->disk_bytes,
        .hostname = rlvr_flat_at(image, w->hostname),
    };
    holder_main(spawner, fds, &plan);
}

static void spawned_run(pid_t spawner, char *image, uint64_t root, int *fds) {
    wire_run *w = (wire_run *)(void *)(image + root);
    w->sb.dir = NULL;
    rlvr_sandbox_cmd cmd = {.version = RLVR_SANDBOX_CMD_VERSION,
                            .argv = rlvr_flat_strv_at(image, w->argv),
                            .env = rlvr_flat_strv_at(image, w->env),
                            .cwd = rlvr_flat_at(image, w->cwd),
                            .results_fd = w->results_fd != 0,
                            .judge = w->judge != 0,
                            .prepare = w->prepare,
                            .prepare_arg = rlvr_flat_at(image, w->prepare_arg)};
    run_plan plan = {.sb = &w->sb, .cmd = w->has_cmd ? &cmd : NULL, .fn = w->fn,
                     .arg = rlvr_flat_at(image, w->arg), .wall_s = w->wall_s};
    supervisor_main(spawner, &plan, fds);
}

/* A child of the spawner: reads its image, becomes a holder or a
 * supervisor. slots[0] is the memfd; the rest are the role's descriptors. */
static void spawned_main(const spawn_request *req, pid_t spawner, int *slots) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    /* a private, writable mapping: page-aligned, and string vectors are
     * turned into pointers in place without touching the runtime's memfd */
    struct stat st;
    if (fstat(slots[0], &st) != 0 || st.st_size <= 0) _exit(126);
    char *image = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, slots[0], 0);
    if (image == MAP_FAILED) _exit(126);
    close(slots[0]);
    if (req->kind == SPAWN_HOLDER) spawned_holder(spawner, image, req->root, slots + 1);
    spawned_run(spawner, image, req->root, slots + 1);
}

/* Receives one request; 0 at EOF, -1 on error. */
static int spawner_receive(int sock, spawn_request *req, int *slots) {
    union {
        char buf[CMSG_SPACE(SPAWN_MAX_FDS * sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {.iov_base = req, .iov_len = sizeof *req};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
    ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    if (n <= 0) return (int)n;
    int fds[SPAWN_MAX_FDS], nfds = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            for (int i = 0; i < k; i++) {
                int fd;
                memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
                if (nfds < SPAWN_MAX_FDS) fds[nfds++] = fd;
                else close(fd);
            }
        }
    /* slot 0 (the image) must be there, and one descriptor per slot present */
    bool ok = n == sizeof *req && req->n_slots <= SPAWN_MAX_FDS && (req->present & 1) &&
              req->present < (1u << req->n_slots) && __builtin_popcount(req->present) == nfds;
    if (!ok) {
        for (int i = 0; i < nfds; i++) close(fds[i]);
        return -2;
    }
    for (int i = 0, k = 0; i < SPAWN_MAX_FDS; i++) slots[i] = req->present >> i & 1 ? fds[k++] : -1;
    return 1;
}

static void spawner_answer(int sock, pid_t pid, int pidfd) {
    spawn_answer a = {.pid = pid};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    memset(&ctl, 0, sizeof ctl);
    struct iovec iov = {.iov_base = &a, .iov_len = sizeof a};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    if (pidfd >= 0) {
        msg.msg_control = ctl.buf;
        msg.msg_controllen = sizeof ctl.buf;
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &pidfd, sizeof pidfd);
    }
    while (sendmsg(sock, &msg, MSG_NOSIGNAL) < 0 && errno == EINTR) {
    }
}

static void spawner_reap(int sfd) {
    struct signalfd_siginfo si;
    while (read(sfd, &si, sizeof si) > 0) {
    }
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
}

static void spawner_main(int sock) {
    if (keep_fds(&sock, 1) != 0) _exit(125);
    /* job signals (Slurm's SIGTERM to every process of the step) are the
     * runtime's to act on: the spawner ends when the runtime's socket closes */
    static const int ignored[] = {SIGHUP, SIGINT, SIGTERM, SIGUSR1, SIGUSR2, SIGPIPE};
    for (size_t i = 0; i < sizeof ignored / sizeof *ignored; i++) signal(ignored[i], SIG_IGN);
    signal(SIGCHLD, SIG_DFL);
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_SETMASK, &chld, NULL);
    int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd < 0) _exit(125);
    pid_t self = getpid();
    for (;;) {
        struct pollfd p[2] = {{.fd = sock, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR) continue;
            _exit(125);
        }
        if (p[1].revents) spawner_reap(sfd);
        if (!p[0].revents) continue;
        spawn_request req;
        int slots[SPAWN_MAX_FDS];
        int r = spawner_receive(sock, &req, slots);
        if (r == -1 && errno == EINTR) continue;
        if (r == 0 || r == -1) _exit(0); /* the runtime is gone */
        if (r < 0) {
            spawner_answer(sock, -EINVAL, -1);
            continue;
        }
        pid_t pid = fork();
        if (pid == 0) {
            /* the ignored job signals stay ignored in the holder and the
             * supervisor, as the runtime's handlers were before; a command
             * starts with every signal at its default (child_setup) */
            close(sock);
            close(sfd);
            spawned_main(&req, self, slots);
        }
        /* the child is reaped only by a later spawner_reap: it is still
         * there (at worst a zombie) for pidfd_open */
        int pidfd = pid > 0 ? pidfd_open(pid, 0) : -1;
        int err = pid < 0 ? errno : pidfd < 0 ? errno : 0;
        if (pid > 0 && pidfd < 0) kill(pid, SIGKILL);
        for (int i = 0; i < SPAWN_MAX_FDS; i++)
            if (slots[i] >= 0) close(slots[i]);
        spawner_answer(sock, err ? -err : pid, pidfd);
        if (pidfd >= 0) close(pidfd);
    }
}

int rlvr_spawner_start(rlvr_sandbox_host *host) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
        return rlvr_error_errno_at(__FILE__, __LINE__, "socketpair for the sandbox spawner");
    pid_t pid = fork();
    if (pid < 0) {
        close(sv[0]);
        close(sv[1]);
        return rlvr_error_errno_at(__FILE__, __LINE__, "fork for the sandbox spawner");
    }
    if (pid == 0) {
        close(sv[0]);
        spawner_main(sv[1]);
    }
    close(sv[1]);
    host->spawner = pid;
    host->spawner_owner = getpid();
    host->spawner_sock = sv[0];
    return 0;
}

void rlvr_spawner_stop(rlvr_sandbox_host *host) {
    if (host->spawner_sock >= 0) close(host->spawner_sock);
    host->spawner_sock = -1;
    /* in a fork of the process that started it, the spawner is not ours:
     * closing our copy of the socket is all */
    if (host->spawner > 0 && host->spawner_owner == getpid()) {
        kill(host->spawner, SIGKILL);
        while (waitpid(host->spawner, NULL, 0) < 0 && errno == EINTR) {
        }
    }
    host->spawner = -1;
}

/* One request and its answer; -1 with errno when the spawner is unreachable. */
static int spawn_exchange(int sock, const spawn_request *req, const int *fds, int nfds, pid_t *pid, int *pidfd) {
    union {
        char buf[CMSG_SPACE(SPAWN_MAX_FDS * sizeof(int))];
        struct cmsghdr align;
    } ctl;
    memset(&ctl, 0, sizeof ctl);
    struct iovec iov = {.iov_base = (void *)req, .iov_len = sizeof *req};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                         .msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int))};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
    memcpy(CMSG_DATA(c), fds, (size_t)nfds * sizeof(int));
    ssize_t n;
    while ((n = sendmsg(sock, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
    }
    if (n < 0) return -1;
    spawn_answer a;
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } actl;
    struct iovec aiov = {.iov_base = &a, .iov_len = sizeof a};
    struct msghdr amsg = {.msg_iov = &aiov, .msg_iovlen = 1, .msg_control = actl.buf, .msg_controllen = sizeof actl.buf};
    while ((n = recvmsg(sock, &amsg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
    }
    if (n != sizeof a) {
        errno = n < 0 ? errno : EPIPE;
        return -1;
    }
    *pidfd = -1;
    c = CMSG_FIRSTHDR(&amsg);
    if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) memcpy(pidfd, CMSG_DATA(c), sizeof *pidfd);
    *pid = a.pid;
    return 0;
}

/* Asks the spawner for a child running `image` (plan at `root`) with the
 * descriptors slots[0..n) (-1: none). A spawner that is gone (killed) is
 * started again, once per request. */
static int spawn(rlvr_sandbox_host *host, char kind, const rlvr_flat *image, uint64_t root, const int *slots, int n,
                 pid_t *pid, int *pidfd) {
    *pid = -1;
    *pidfd = -1;
    if (image->failed) return RLVR_FAIL(RLVR_ENOMEM, "out of memory for a sandbox plan");
    int mem = memfd_create("rlvr-sandbox-plan", MFD_CLOEXEC);
    if (mem < 0) return rlvr_error_errno_at(__FILE__, __LINE__, "memfd for a sandbox plan");
    if (write_all(mem, image->data, image->len) != 0) {
        int rc = rlvr_error_errno_at(__FILE__, __LINE__, "writing a sandbox plan");
        close(mem);
        return rc;
    }
    spawn_request req = {.kind = kind, .n_slots = (uint8_t)(n + 1), .root = root};
    int fds[SPAWN_MAX_FDS], nfds = 0;
    for (int i = 0; i <= n && i < SPAWN_MAX_FDS; i++) {
        int fd = i == 0 ? mem : slots[i - 1];
        if (fd < 0) continue;
        req.present |= (uint8_t)(1u << i);
        fds[nfds++] = fd;
    }
    int rc = 0;
    pthread_mutex_lock(&host->spawner_lock);
    /* a fork of the runtime (bench workers) must not share the parent's
     * spawner: requests from two processes on one socket would mix */
    if (host->spawner_sock >= 0 && host->spawner_owner != getpid()) rlvr_spawner_stop(host);
    for (int attempt = 0;; attempt++) {
        if (host->spawner_sock < 0) rc = rlvr_spawner_start(host);
        if (rc < 0) break;
        if (spawn_exchange(host->spawner_sock, &req, fds, nfds, pid, pidfd) == 0) break;
        int saved = errno;
        rlvr_spawner_stop(host);
        if (attempt == 1) {
            errno = saved;
            rc = rlvr_error_errno_at(__FILE__, __LINE__, "the sandbox spawner did not answer");
            break;
        }
    }
    pthread_mutex_unlock(&host->spawner_lock);
    close(mem);
    if (rc == 0 && *pid <= 0) {
        errno = -*pid;
        rc = rlvr_error_errno_at(__FILE__, __LINE__, "the sandbox spawner could not fork");
    }
    if (rc == 0 && *pidfd < 0) {
        rc = RLVR_FAIL(RLVR_ESANDBOX, "the sandbox spawner sent no pidfd");
    }
    return rc;
}

static int spawn_holder(rlvr_sandbox_host *host, const holder_plan *p, const int *fds, pid_t *pid, int *pidfd) {
    rlvr_flat f = {0};
    uint64_t root = rlvr_flat_put(&f, NULL, sizeof(wire_holder));
    wire_holder w = {.host = p->host, .disk_bytes = p->disk_bytes, .overlay = p->overlay};
    w.dir = rlvr_flat_str(&f, p->dir);
    w.lower = rlvr_flat_str(&f, p->lower);
    w.readonly = rlvr_flat_strv(&f, p->readonly);
    w.private_dir = rlvr_flat_str(&f, p->private_dir);
    w.judge_dir = rlvr_flat_str(&f, p->judge_dir);
    w.hostname = rlvr_flat_str(&f, p->hostname);
    if (!f.failed) memcpy(f.data + root, &w, sizeof w);
    int rc = spawn(host, SPAWN_HOLDER, &f, root, fds, 3, pid, pidfd);
    rlvr_flat_free(&f);
    return rc;
}

static int spawn_supervisor(const run_plan *plan, const int *fds, pid_t *pid, int *pidfd) {
    rlvr_flat f = {0};
    uint64_t root = rlvr_flat_put(&f, NULL, sizeof(wire_run));
    wire_run w;
    memset(&w, 0, sizeof w);
    w.sb = *plan->sb;
    w.wall_s = plan->wall_s;
    w.fn = plan->fn;
    w.arg = plan->arg_len ? rlvr_flat_put(&f, plan->arg, plan->arg_len) : 0;
    if (plan->cmd) {
        const rlvr_sandbox_cmd *c = plan->cmd;
        w.has_cmd = 1;
        w.results_fd = c->results_fd;
        w.judge = c->judge;
        w.argv = rlvr_flat_strv(&f, c->argv);
        w.env = rlvr_flat_strv(&f, c->env);
        w.cwd = rlvr_flat_str(&f, c->cwd);
        w.prepare = c->prepare;
        w.prepare_arg = c->prepare_arg_len ? rlvr_flat_put(&f, c->prepare_arg, c->prepare_arg_len) : 0;
    }
    if (!f.failed) memcpy(f.data + root, &w, sizeof w);
    int rc = spawn(plan->sb->host, SPAWN_RUN, &f, root, fds, 4, pid, pidfd);
    rlvr_flat_free(&f);
    return rc;
}

/* -- the runtime side ---------------------------------------------------------- */

typedef struct {
    char *data;
    size_t len, cap, limit;
    bool truncated;
} capture;

static int capture_read(capture *c, int fd) {
    char buf[65536];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) return errno == EINTR || errno == EAGAIN ? 1 : -1;
    if (n == 0) return 0;
    size_t keep = (size_t)n;
    if (c->len + keep > c->limit) {
        keep = c->limit > c->len ? c->limit - c->len : 0;
        c->truncated = true;
    }
    if (keep > 0) {
        if (c->len + keep + 1 > c->cap) {
            size_t cap = c->cap ? c->cap : 4096;
            while (cap < c->len + keep + 1) cap *= 2;
            char *grown = realloc(c->data, cap);
            if (!grown) return -2;
            c->data = grown;
            c->cap = cap;
        }
        memcpy(c->data + c->len, buf, keep);
        c->len += keep;
    }
    return 1;
}

static char *capture_take(capture *c, size_t *len) {
    if (!c->data) c->data = malloc(1);
    if (c->data) c->data[c->len] = '\0';
    *len = c->data ? c->len : 0;
    char *d = c->data;
    c->data = NULL;
    return d;
}

/* One run in flight (rlvr_sandbox_run_*): the supervisor M and the
 * runtime's ends of its pipes (-1 once closed). */
struct rlvr_sandbox_run {
    rlvr_sandbox *sb;
    pid_t m_pid;
    int m; /* the supervisor's pidfd (-1 once it has ended or was handed on) */
    int out, rs, status, ctl;
    capture cout, cres;
    run_report rep;
    size_t rep_len;
    bool stop_sent, killed;
    double start, backstop, wall_s;
    int rc; /* an error met while reading (out of memory, poll) */
};

static void close_fd(int *fd) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
}

static void close_pipe(int p[2]) {
    close_fd(&p[0]);
    close_fd(&p[1]);
}

static int run_start(rlvr_sandbox *sb, const run_plan *plan, int64_t output_bytes, bool want_results,
                     rlvr_sandbox_run **out) {
    *out = NULL;
    int o[2] = {-1, -1}, rs[2] = {-1, -1}, status[2] = {-1, -1}, ctl[2] = {-1, -1};
    int rc = 0;
    rlvr_sandbox_run *run = calloc(1, sizeof *run);
    if (!run) return RLVR_FAIL(RLVR_ENOMEM, "out of memory for a sandbox run");
    if (pipe2(o, O_CLOEXEC) != 0 || pipe2(status, O_CLOEXEC) != 0 || pipe2(ctl, O_CLOEXEC) != 0 ||
        (want_results && pipe2(rs, O_CLOEXEC) != 0)) {
        rc = rlvr_error_errno_at(__FILE__, __LINE__, "pipe for a sandbox run");
        goto fail;
    }
    /* pipes belong to their creator with mode 0600: the sandbox identity
     * must own the ones it writes to, or reopening its own stdout through
     * /proc/self/fd (/dev/stdout) fails */
    if (sb->host->privileged &&
        (fchown(o[1], sb->host->host_uid, sb->host->host_gid) != 0 ||
         (rs[1] >= 0 && fchown(rs[1], sb->host->host_uid, sb->host->host_gid) != 0))) {
        rc = rlvr_error_errno_at(__FILE__, __LINE__, "handing a pipe to the sandbox identity");
        goto fail;
    }
    reap_exiting(sb, true);
    run->sb = sb;
    run->start = rlvr_now();
    run->wall_s = plan->wall_s;
    run->backstop = run->start + plan->wall_s + 10.0;
    run->cout.limit = (size_t)output_bytes;
    run->cres.limit = (size_t)sb->limits.output_bytes;
    int fds[4] = {o[1], rs[1], status[1], ctl[0]};
    rc = spawn_supervisor(plan, fds, &run->m_pid, &run->m);
    if (rc < 0) goto fail;
    close_fd(&o[1]);
    close_fd(&status[1]);
    close_fd(&ctl[0]);
    close_fd(&rs[1]);
    run->out = o[0], run->rs = rs[0], run->status = status[0], run->ctl = ctl[1];
    *out = run;
    return 0;
fail:
    close_pipe(o);
    close_pipe(rs);
    close_pipe(status);
    close_pipe(ctl);
    free(run);
    return rc;
}

int rlvr_sandbox_run_pollfds(const rlvr_sandbox_run *run, struct pollfd *fds, int cap) {
    int n = 0;
    const int mine[3] = {run->out, run->rs, run->status};
    for (int i = 0; i < 3; i++)
        if (mine[i] >= 0 && n < cap) fds[n++] = (struct pollfd){.fd = mine[i], .events = POLLIN};
    return run->killed ? 0 : n;
}

double rlvr_sandbox_run_deadline(const rlvr_sandbox_run *run) { return run->backstop; }

/* Ended: killed, or the output and results pipes are at EOF and M's report
 * is in (or M is gone). M may still be exiting then. */
static bool run_ended(const rlvr_sandbox_run *run) {
    return run->killed || (run->out < 0 && run->rs < 0 && (run->status < 0 || run->rep_len == sizeof run->rep));
}

static void run_kill(rlvr_sandbox_run *run) {
    if (run->m >= 0) pidfd_send_signal(run->m, SIGKILL, NULL, 0);
    run->killed = true;
}

static void run_read(rlvr_sandbox_run *run, int fd) {
    if (fd == run->out || fd == run->rs) {
        bool is_out = fd == run->out;
        int k = capture_read(is_out ? &run->cout : &run->cres, fd);
        if (k <= 0) close_fd(is_out ? &run->out : &run->rs);
        if (k == -2 && run->rc == 0)
            run->rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory capturing %s", is_out ? "output" : "results");
    } else if (fd == run->status) {
        ssize_t n = read(run->status, (char *)&run->rep + run->rep_len, sizeof run->rep - run->rep_len);
        if (n > 0) run->rep_len += (size_t)n;
        else if (n == 0 || errno != EINTR) close_fd(&run->status);
    }
}

int rlvr_sandbox_run_advance(rlvr_sandbox_run *run, const struct pollfd *fds, int n) {
    for (int i = 0; i < n; i++)
        if (fds[i].revents && fds[i].fd >= 0) run_read(run, fds[i].fd);
    if ((run->cout.truncated || run->cres.truncated) && !run->stop_sent) {
        if (write_all(run->ctl, "S", 1) != 0) { /* M gone already: it ends anyway */
        }
        run->stop_sent = true;
    }
    /* M itself is stuck: the last resort (its init dies with it) */
    if (!run_ended(run) && rlvr_now() >= run->backstop) run_kill(run);
    return run_ended(run) ? 1 : 0;
}

/* Blocks until the run has ended (what rlvr_sandbox_exec does in full). */
static void run_wait(rlvr_sandbox_run *run) {
    while (!run_ended(run)) {
        struct pollfd p[3];
        int np = rlvr_sandbox_run_pollfds(run, p, 3);
        double left = run->backstop - rlvr_now();
        int r = left > 0 ? poll(p, (nfds_t)np, (int)(left * 1000) + 1) : 0;
        if (r < 0 && errno != EINTR) {
            if (run->rc == 0) run->rc = rlvr_error_errno_at(__FILE__, __LINE__, "poll on a sandbox run");
            run_kill(run);
            break;
        }
        if (r < 0) continue;
        rlvr_sandbox_run_advance(run, p, np);
    }
}

static void run_free(rlvr_sandbox_run *run) {
    close_fd(&run->m);
    close_fd(&run->out);
    close_fd(&run->rs);
    close_fd(&run->status);
    close_fd(&run->ctl);
    free(run->cout.data);
    free(run->cres.data);
    free(run);
}

/* The report of an ended run as its result. */
static int run_result(rlvr_sandbox_run *run, rlvr_sandbox_result *res) {
    run_report *rep = &run->rep;
    res->wall_s = rlvr_now() - run->start;
    res->out = capture_take(&run->cout, &res->out_len);
    res->out_truncated = run->cout.truncated;
    res->results = capture_take(&run->cres, &res->results_len);
    if (!res->out || !res->results) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    if (run->rc < 0) return run->rc;
    if (run->killed)
        return RLVR_FAIL(RLVR_ESANDBOX, "the sandbox run's supervisor did not finish within %.1f s", run->wall_s + 10.0);
    if (run->rep_len != sizeof *rep) return RLVR_FAIL(RLVR_ESANDBOX, "the sandbox run's supervisor ended without a report");
    rep->error[sizeof rep->error - 1] = '\0';
    if (rep->error[0]) return RLVR_FAIL(RLVR_ESANDBOX, "sandbox run: %s", rep->error);
    if (!rep->started) return RLVR_FAIL(RLVR_ESANDBOX, "sandbox run: the command was never started");
    res->limit = (rlvr_sandbox_limit)rep->limit;
    if (run->stop_sent) res->limit = RLVR_LIMIT_OUTPUT;
    if (rep->finished && WIFEXITED(rep->status)) {
        res->exit_code = WEXITSTATUS(rep->status);
    } else {
        res->exit_code = -1;
        res->signal = rep->finished && WIFSIGNALED(rep->status) ? WTERMSIG(rep->status) : SIGKILL;
    }
    res->prepare_status = rep->prepare_status;
    res->cpu_s = rep->cpu_s;
    res->max_rss_bytes = rep->max_rss;
    res->max_processes = rep->max_procs;
    return 0;
}

/* M has reported and has nothing left to do but exit: reap it now if it is
 * gone, else before the sandbox's next run (or at its end). */
static void reap_supervisor(rlvr_sandbox_run *run) {
    rlvr_sandbox *sb = run->sb;
    if (process_ended(run->m_pid, run->m, run->killed)) return; /* run_free closes the pidfd */
    reap_exiting(sb, true); /* one run at a time: nothing should be left */
    sb->exiting = run->m;
    sb->exiting_pid = run->m_pid;
    run->m = -1;
}

int rlvr_sandbox_run_finish(rlvr_sandbox_run *run, rlvr_sandbox_result *res) {
    memset(res, 0, sizeof *res);
    run_wait(run);
    reap_supervisor(run);
    int rc = run_result(run, res);
    if (rc < 0) rlvr_sandbox_result_free(res);
    run_free(run);
    return rc;
}

void rlvr_sandbox_run_abort(rlvr_sandbox_run *run) {
    if (!run) return;
    run_kill(run);
    process_ended(run->m_pid, run->m, true);
    run_free(run);
}

static int run(rlvr_sandbox *sb, const run_plan *plan, int64_t output_bytes, bool want_results, rlvr_sandbox_result *res) {
    memset(res, 0, sizeof *res);
    rlvr_sandbox_run *r = NULL;
    RLVR_TRY(run_start(sb, plan, output_bytes, want_results, &r));
    return rlvr_sandbox_run_finish(r, res);
}

/* The plan of a command, checked; *cap its output cap. */
static int exec_plan(rlvr_sandbox *sb, const rlvr_sandbox_cmd *cmd, run_plan *plan, int64_t *cap) {
    *cap = 0;
    if (!cmd || cmd->version != RLVR_SANDBOX_CMD_VERSION || !cmd->argv || !cmd->argv[0])
        return RLVR_FAIL(RLVR_EINVAL, "sandbox command missing, of another version, or without argv");
    if (cmd->cwd && cmd->cwd[0] && !path_is_simple(cmd->cwd))
        return RLVR_FAIL(RLVR_EINVAL, "sandbox working directory \"%s\" is not a plain relative path", cmd->cwd);
    size_t n_env = 0;
    for (const char *const *e = cmd->env; e && *e; e++, n_env++)
        if (!strchr(*e, '=')) return RLVR_FAIL(RLVR_EINVAL, "environment entry \"%s\" has no '='", *e);
    if (n_env > 48) return RLVR_FAIL(RLVR_EINVAL, "too many environment entries (%zu, at most 48)", n_env);
    if (cmd->judge && !sb->has_judge) return RLVR_FAIL(RLVR_EINVAL, "a judge command in a sandbox without judge_dir");
    if (cmd->judge && (strchr(cmd->argv[0], '/') || !path_is_simple(cmd->argv[0])))
        return RLVR_FAIL(RLVR_EINVAL, "judge program \"%s\" must be a file name in the judge directory", cmd->argv[0]);
    *plan = (run_plan){.sb = sb, .cmd = cmd};
    plan->wall_s = cmd->wall_s > 0 && cmd->wall_s < sb->limits.wall_s ? cmd->wall_s : sb->limits.wall_s;
    *cap = cmd->output_bytes > 0 && cmd->output_bytes < sb->limits.output_bytes ? cmd->output_bytes
                                                                               : sb->limits.output_bytes;
    return 0;
}

int rlvr_sandbox_exec(rlvr_sandbox *sb, const rlvr_sandbox_cmd *cmd, rlvr_sandbox_result *res) {
    memset(res, 0, sizeof *res);
    run_plan plan;
    int64_t cap;
    RLVR_TRY(exec_plan(sb, cmd, &plan, &cap));
    int rc = run(sb, &plan, cap, cmd->results_fd, res);
    return rc < 0 ? rlvr_error_wrap(rc, "running %s in a sandbox", cmd->argv[0]) : 0;
}

int rlvr_sandbox_exec_start(rlvr_sandbox *sb, const rlvr_sandbox_cmd *cmd, rlvr_sandbox_run **out) {
    *out = NULL;
    run_plan plan;
    int64_t cap;
    RLVR_TRY(exec_plan(sb, cmd, &plan, &cap));
    int rc = run_start(sb, &plan, cap, cmd->results_fd, out);
    return rc < 0 ? rlvr_error_wrap(rc, "starting %s in a sandbox", cmd->argv[0]) : 0;
}

static run_plan call_plan(rlvr_sandbox *sb, rlvr_sandbox_fn fn, const void *arg, size_t arg_len, double wall_s) {
    run_plan plan = {.sb = sb, .fn = fn, .arg = arg, .arg_len = arg_len};
    plan.wall_s = wall_s > 0 ? wall_s : sb->limits.wall_s;
    return plan;
}

int rlvr_sandbox_call(rlvr_sandbox *sb, rlvr_sandbox_fn fn, const void *arg, size_t arg_len, double wall_s,
                      int64_t output_bytes, rlvr_sandbox_result *res) {
    memset(res, 0, sizeof *res);
    if (!fn) return RLVR_FAIL(RLVR_EINVAL, "rlvr_sandbox_call without a function");
    run_plan plan = call_plan(sb, fn, arg, arg_len, wall_s);
    int rc = run(sb, &plan, output_bytes > 0 ? output_bytes : sb->limits.output_bytes, false, res);
    return rc < 0 ? rlvr_error_wrap(rc, "calling into a sandbox") : 0;
}

int rlvr_sandbox_call_start(rlvr_sandbox *sb, rlvr_sandbox_fn fn, const void *arg, size_t arg_len, double wall_s,
                            int64_t output_bytes, rlvr_sandbox_run **out) {
    *out = NULL;
    if (!fn) return RLVR_FAIL(RLVR_EINVAL, "rlvr_sandbox_call_start without a function");
    run_plan plan = call_plan(sb, fn, arg, arg_len, wall_s);
    int rc = run_start(sb, &plan, output_bytes > 0 ? output_bytes : sb->limits.output_bytes, false, out);
    return rc < 0 ? rlvr_error_wrap(rc, "calling into a sandbox") : 0;
}

void rlvr_sandbox_result_free(rlvr_sandbox_result *res) {
    if (!res) return;
    free(res->out);
    free(res->results);
    res->out = res->results = NULL;
    res->out_len = res->results_len = 0;
}
