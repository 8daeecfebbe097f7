/* enclave/sandbox_spawner.c — the spawner process, and the runtime's side
 * of its requests.
 *
 * A fork copies the parent's page tables, and the runtime's grow with the
 * pool, the rollouts and the allocator's heap: forking the supervisors from
 * the runtime cost 1.7 ms at 48 MB touched against 0.18 ms at 2 MB (2-vCPU
 * VM), and during the quickstart's RL a quarter of the runtime's own time
 * went to fork and to the copy-on-write faults after it. The spawner is
 * forked once, with the host (rlvr_sandbox_host_new), and forks the holders
 * and the supervisors on request. It is the same program, so function
 * pointers (a run's prepare step, a called function) stay valid in it;
 * everything else a child needs comes as a flat image (core/flat.h) in a
 * memfd, passed with the child's descriptors over a socket. The answer is
 * the child's pid and a pidfd: the runtime signals and waits for its
 * sandbox processes through those, and the spawner reaps them. The spawner
 * ends (exit 0) when the runtime's end of the socket closes; the
 * supervisors die with it (PR_SET_PDEATHSIG), the holders when their
 * command pipes close. It exits RLVR_SANDBOX_EXIT_SPAWNER when it cannot
 * set itself up or wait; a child that cannot map its plan exits
 * RLVR_SANDBOX_EXIT_NO_PLAN. */
#include "enclave/sandbox_internal.h"

#include "core/error.h"
#include "core/flat.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

enum { SPAWN_MAX_FDS = 5 };

/* The request: the role to fork (RLVR_SANDBOX_ROLE_HOLDER or _SUPERVISOR),
 * which of the descriptor slots are passed (the memfd with the image is
 * slot 0) and where the plan is in the image. */
typedef struct {
    uint8_t role;
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
    uint64_t dir, lower, readonly, private_dir, judge_dir, hostname, image_dir, workdir;
    int32_t overlay;
} wire_holder;

/* An image server's plan in the image. */
typedef struct {
    uint64_t path, mountpoint;
    uint64_t offset, size;
    int32_t privileged;
} wire_image;

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

/* ---- the spawner's children ---------------------------------------------- */

static void spawned_holder(pid_t spawner, char *image, uint64_t root, int *fds) __attribute__((noreturn));

static void spawned_holder(pid_t spawner, char *image, uint64_t root, int *fds) {
    const wire_holder *w = (const wire_holder *)(void *)(image + root);
    rlvr_sb_holder_plan plan = {
        .host = w->host,
        .dir = rlvr_flat_at(image, w->dir),
        .lower = rlvr_flat_at(image, w->lower),
        .overlay = w->overlay != 0,
        .readonly = rlvr_flat_strv_at(image, w->readonly),
        .private_dir = rlvr_flat_at(image, w->private_dir),
        .judge_dir = rlvr_flat_at(image, w->judge_dir),
        .disk_bytes = w->disk_bytes,
        .hostname = rlvr_flat_at(image, w->hostname),
        .image_tree = fds[3],
        .image_dir = rlvr_flat_at(image, w->image_dir),
        .workdir = rlvr_flat_at(image, w->workdir),
    };
    rlvr_sb_holder_main(spawner, fds, &plan);
}

static void spawned_image(char *image, uint64_t root, int *fds) __attribute__((noreturn));

static void spawned_image(char *image, uint64_t root, int *fds) {
    const wire_image *w = (const wire_image *)(void *)(image + root);
    rlvr_sb_image_plan plan = {.path = rlvr_flat_at(image, w->path), .mountpoint = rlvr_flat_at(image, w->mountpoint),
                               .offset = w->offset, .size = w->size, .privileged = w->privileged != 0};
    rlvr_sb_image_main(&plan, fds);
}

static void spawned_supervisor(pid_t spawner, char *image, uint64_t root, int *fds) __attribute__((noreturn));

static void spawned_supervisor(pid_t spawner, char *image, uint64_t root, int *fds) {
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
    rlvr_sb_run_plan plan = {.sb = &w->sb, .cmd = w->has_cmd ? &cmd : NULL, .fn = w->fn,
                             .arg = rlvr_flat_at(image, w->arg), .wall_s = w->wall_s};
    rlvr_sb_supervisor_main(spawner, &plan, fds);
}

/* A child of the spawner: maps its image, becomes a holder or a
 * supervisor. slots[0] is the memfd; the rest are the role's descriptors. */
static void spawned_main(const spawn_request *req, pid_t spawner, int *slots) __attribute__((noreturn));

static void spawned_main(const spawn_request *req, pid_t spawner, int *slots) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    /* a private, writable mapping: page-aligned, and string vectors are
     * turned into pointers in place without touching the runtime's memfd */
    struct stat st;
    if (fstat(slots[0], &st) != 0 || st.st_size <= 0) _exit(RLVR_SANDBOX_EXIT_NO_PLAN);
    char *image = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, slots[0], 0);
    if (image == MAP_FAILED) _exit(RLVR_SANDBOX_EXIT_NO_PLAN);
    close(slots[0]);
    if (req->role == RLVR_SANDBOX_ROLE_HOLDER) spawned_holder(spawner, image, req->root, slots + 1);
    if (req->role == RLVR_SANDBOX_ROLE_IMAGE) spawned_image(image, req->root, slots + 1);
    spawned_supervisor(spawner, image, req->root, slots + 1);
}

/* ---- the spawner ------------------------------------------------------------ */

/* Receives one request; 1 with its descriptors in slots, 0 at EOF, -1 on
 * error, -2 for a malformed request. */
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

/* Job signals (Slurm's SIGTERM to every process of the step) are the
 * runtime's to act on: the spawner ends when the runtime's socket closes.
 * Children are noticed through a signalfd; its descriptor. */
static int spawner_signals(void) {
    static const int ignored[] = {SIGHUP, SIGINT, SIGTERM, SIGUSR1, SIGUSR2, SIGPIPE};
    for (size_t i = 0; i < sizeof ignored / sizeof *ignored; i++) signal(ignored[i], SIG_IGN);
    signal(SIGCHLD, SIG_DFL);
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_SETMASK, &chld, NULL);
    return signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* Forks the child `req` asks for and answers with its pid and pidfd. */
static void spawner_fork(int sock, int sfd, pid_t self, const spawn_request *req, int *slots) {
    pid_t pid = fork();
    if (pid == 0) {
        /* the ignored job signals stay ignored in the holder and the
         * supervisor, as the runtime's handlers were before; a command
         * starts with every signal at its default (sandbox_confine.c) */
        close(sock);
        close(sfd);
        spawned_main(req, self, slots);
    }
    /* the child is reaped only by a later spawner_reap: it is still there
     * (at worst a zombie) for pidfd_open */
    int pidfd = pid > 0 ? pidfd_open(pid, 0) : -1;
    int err = pid < 0 ? errno : pidfd < 0 ? errno : 0;
    if (pid > 0 && pidfd < 0) kill(pid, SIGKILL);
    for (int i = 0; i < SPAWN_MAX_FDS; i++)
        if (slots[i] >= 0) close(slots[i]);
    spawner_answer(sock, err ? -err : pid, pidfd);
    if (pidfd >= 0) close(pidfd);
}

static void spawner_main(int sock) __attribute__((noreturn));

static void spawner_main(int sock) {
    if (rlvr_sb_keep_fds(&sock, 1) != 0) _exit(RLVR_SANDBOX_EXIT_SPAWNER);
    int sfd = spawner_signals();
    if (sfd < 0) _exit(RLVR_SANDBOX_EXIT_SPAWNER);
    pid_t self = getpid();
    for (;;) {
        struct pollfd p[2] = {{.fd = sock, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR) continue;
            _exit(RLVR_SANDBOX_EXIT_SPAWNER);
        }
        if (p[1].revents) spawner_reap(sfd);
        if (!p[0].revents) continue;
        spawn_request req;
        int slots[SPAWN_MAX_FDS];
        int r = spawner_receive(sock, &req, slots);
        if (r == -1 && errno == EINTR) continue;
        if (r == 0 || r == -1) _exit(0); /* the runtime is gone */
        if (r < 0) spawner_answer(sock, -EINVAL, -1);
        else spawner_fork(sock, sfd, self, &req, slots);
    }
}

/* ---- the runtime's side ---------------------------------------------------- */

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

/* The spawner's answer: the pid, and the pidfd when one came (-1 if not). */
static int spawn_receive_answer(int sock, pid_t *pid, int *pidfd) {
    spawn_answer a;
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } actl;
    struct iovec aiov = {.iov_base = &a, .iov_len = sizeof a};
    struct msghdr amsg = {.msg_iov = &aiov, .msg_iovlen = 1, .msg_control = actl.buf, .msg_controllen = sizeof actl.buf};
    ssize_t n;
    while ((n = recvmsg(sock, &amsg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
    }
    if (n != sizeof a) {
        errno = n < 0 ? errno : EPIPE;
        return -1;
    }
    *pidfd = -1;
    struct cmsghdr *c = CMSG_FIRSTHDR(&amsg);
    if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) memcpy(pidfd, CMSG_DATA(c), sizeof *pidfd);
    *pid = a.pid;
    return 0;
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
    return spawn_receive_answer(sock, pid, pidfd);
}

/* The exchange under the host's lock. A fork of the runtime (bench workers)
 * must not share the parent's spawner: requests from two processes on one
 * socket would mix. A spawner that is gone (killed) is started again, once
 * per request. */
static int spawn_locked(rlvr_sandbox_host *host, const spawn_request *req, const int *fds, int nfds, pid_t *pid,
                        int *pidfd) {
    int rc = 0;
    pthread_mutex_lock(&host->spawner_lock);
    if (host->spawner_sock >= 0 && host->spawner_owner != getpid()) rlvr_spawner_stop(host);
    for (int attempt = 0;; attempt++) {
        if (host->spawner_sock < 0) rc = rlvr_spawner_start(host);
        if (rc < 0) break;
        if (spawn_exchange(host->spawner_sock, req, fds, nfds, pid, pidfd) == 0) break;
        int saved = errno;
        rlvr_spawner_stop(host);
        if (attempt == 1) {
            errno = saved;
            rc = rlvr_error_errno_at(__FILE__, __LINE__, "the sandbox spawner did not answer");
            break;
        }
    }
    pthread_mutex_unlock(&host->spawner_lock);
    return rc;
}

/* Asks the spawner for a child in `role` running `image` (plan at `root`)
 * with the descriptors slots[0..n) (-1: none). */
static int spawn(rlvr_sandbox_host *host, rlvr_sandbox_role role, const rlvr_flat *image, uint64_t root,
                 const int *slots, int n, pid_t *pid, int *pidfd) {
    *pid = -1;
    *pidfd = -1;
    if (image->failed) return RLVR_FAIL(RLVR_ENOMEM, "out of memory for a sandbox plan");
    int mem = memfd_create("rlvr-sandbox-plan", MFD_CLOEXEC);
    if (mem < 0) return rlvr_error_errno_at(__FILE__, __LINE__, "memfd for a sandbox plan");
    if (rlvr_sb_write_all(mem, image->data, image->len) != 0) {
        int rc = rlvr_error_errno_at(__FILE__, __LINE__, "writing a sandbox plan");
        close(mem);
        return rc;
    }
    spawn_request req = {.role = (uint8_t)role, .n_slots = (uint8_t)(n + 1), .root = root};
    int fds[SPAWN_MAX_FDS], nfds = 0;
    for (int i = 0; i <= n && i < SPAWN_MAX_FDS; i++) {
        int fd = i == 0 ? mem : slots[i - 1];
        if (fd < 0) continue;
        req.present |= (uint8_t)(1u << i);
        fds[nfds++] = fd;
    }
    int rc = spawn_locked(host, &req, fds, nfds, pid, pidfd);
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

int rlvr_sb_spawn_holder(rlvr_sandbox_host *host, const rlvr_sb_holder_plan *p, const int *fds, pid_t *pid,
                         int *pidfd) {
    rlvr_flat f = {0};
    uint64_t root = rlvr_flat_put(&f, NULL, sizeof(wire_holder));
    wire_holder w = {.host = p->host, .disk_bytes = p->disk_bytes, .overlay = p->overlay};
    w.dir = rlvr_flat_str(&f, p->dir);
    w.lower = rlvr_flat_str(&f, p->lower);
    w.readonly = rlvr_flat_strv(&f, p->readonly);
    w.private_dir = rlvr_flat_str(&f, p->private_dir);
    w.judge_dir = rlvr_flat_str(&f, p->judge_dir);
    w.hostname = rlvr_flat_str(&f, p->hostname);
    w.image_dir = rlvr_flat_str(&f, p->image_dir);
    w.workdir = rlvr_flat_str(&f, p->workdir);
    if (!f.failed) memcpy(f.data + root, &w, sizeof w);
    int slots[4] = {fds[0], fds[1], fds[2], p->image_tree};
    int rc = spawn(host, RLVR_SANDBOX_ROLE_HOLDER, &f, root, slots, 4, pid, pidfd);
    rlvr_flat_free(&f);
    return rc;
}

int rlvr_sb_spawn_image(rlvr_sandbox_host *host, const rlvr_sb_image_plan *p, int sock, pid_t *pid, int *pidfd) {
    rlvr_flat f = {0};
    uint64_t root = rlvr_flat_put(&f, NULL, sizeof(wire_image));
    wire_image w = {.offset = p->offset, .size = p->size, .privileged = p->privileged};
    w.path = rlvr_flat_str(&f, p->path);
    w.mountpoint = rlvr_flat_str(&f, p->mountpoint);
    if (!f.failed) memcpy(f.data + root, &w, sizeof w);
    int rc = spawn(host, RLVR_SANDBOX_ROLE_IMAGE, &f, root, &sock, 1, pid, pidfd);
    rlvr_flat_free(&f);
    return rc;
}

/* A run's plan as an image. */
static uint64_t put_run(rlvr_flat *f, const rlvr_sb_run_plan *plan) {
    uint64_t root = rlvr_flat_put(f, NULL, sizeof(wire_run));
    wire_run w;
    memset(&w, 0, sizeof w);
    w.sb = *plan->sb;
    w.wall_s = plan->wall_s;
    w.fn = plan->fn;
    w.arg = plan->arg_len ? rlvr_flat_put(f, plan->arg, plan->arg_len) : 0;
    if (plan->cmd) {
        const rlvr_sandbox_cmd *c = plan->cmd;
        w.has_cmd = 1;
        w.results_fd = c->results_fd;
        w.judge = c->judge;
        w.argv = rlvr_flat_strv(f, c->argv);
        w.env = rlvr_flat_strv(f, c->env);
        w.cwd = rlvr_flat_str(f, c->cwd);
        w.prepare = c->prepare;
        w.prepare_arg = c->prepare_arg_len ? rlvr_flat_put(f, c->prepare_arg, c->prepare_arg_len) : 0;
    }
    if (!f->failed) memcpy(f->data + root, &w, sizeof w);
    return root;
}

int rlvr_sb_spawn_supervisor(const rlvr_sb_run_plan *plan, const int *fds, pid_t *pid, int *pidfd) {
    rlvr_flat f = {0};
    uint64_t root = put_run(&f, plan);
    int rc = spawn(plan->sb->host, RLVR_SANDBOX_ROLE_SUPERVISOR, &f, root, fds, 4, pid, pidfd);
    rlvr_flat_free(&f);
    return rc;
}
