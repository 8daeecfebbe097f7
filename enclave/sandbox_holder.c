/* enclave/sandbox_holder.c — the holder process: one per sandbox.
 *
 * Forked by the spawner when a sandbox is made. It exists so that a
 * sandbox's namespaces and root outlive its runs: built once, they are
 * joined by every run's supervisor, and /work is restored between runs
 * without building anything else again. It creates the user, mount,
 * network, IPC, UTS and cgroup namespaces, says UNSHARED and waits for GO
 * (the runtime writes its uid/gid maps in between), builds the root
 * (sandbox_mounts.c), brings up the loopback interface, pivots into the
 * root and says READY. Then it serves RESET (answering READY) until its
 * command pipe reaches EOF, which also happens when the runtime dies, and
 * exits 0. Failures: ERROR and RLVR_SANDBOX_EXIT_FAILED, or
 * RLVR_SANDBOX_EXIT_HOLDER_LOST when it cannot even say why. */
#include "enclave/sandbox_internal.h"

#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

/* The network namespace is empty but for loopback, which starts down. */
static void loopback_up(int err_fd) {
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0) rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "socket for the loopback interface");
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
    if (ioctl(s, SIOCGIFFLAGS, &ifr) != 0) rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "reading loopback flags");
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    if (ioctl(s, SIOCSIFFLAGS, &ifr) != 0) rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "bringing loopback up");
    close(s);
}

/* Everything the holder does after its namespaces exist and are mapped; on
 * error it reports and exits. */
static void holder_build(int err_fd, const rlvr_sb_holder_plan *p) {
    char root[PATH_MAX];
    rlvr_sb_path(err_fd, root, sizeof root, "%s/root", p->dir);
    rlvr_sb_mount_root(err_fd, root, p);
    loopback_up(err_fd);
    if (sethostname(p->hostname, strlen(p->hostname)) != 0)
        rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "sethostname");
    rlvr_sb_pivot_root(err_fd, root);
}

/* The namespaces, then UNSHARED, and GO back once the maps are written. */
static void holder_unshare(int report, int go) {
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP) != 0)
        rlvr_sb_fail(report, RLVR_SANDBOX_STAGE_UNSHARE, "unshare(user, mount, net, ipc, uts, cgroup namespaces)");
    char byte = RLVR_SANDBOX_MSG_UNSHARED;
    if (rlvr_sb_write_all(report, &byte, 1) != 0) _exit(RLVR_SANDBOX_EXIT_HOLDER_LOST);
    if (read(go, &byte, 1) != 1) _exit(RLVR_SANDBOX_EXIT_HOLDER_LOST);
    close(go);
}

static void holder_ready(int report) {
    char byte = RLVR_SANDBOX_MSG_READY;
    if (rlvr_sb_write_all(report, &byte, 1) != 0) _exit(RLVR_SANDBOX_EXIT_HOLDER_LOST);
}

/* Serves RESET until EOF on `ctl`. A failed reset is reported and ends the
 * holder. */
static void holder_serve(int report, int ctl, const rlvr_sb_holder_plan *plan) __attribute__((noreturn));

static void holder_serve(int report, int ctl, const rlvr_sb_holder_plan *plan) {
    for (;;) {
        char byte;
        ssize_t n = read(ctl, &byte, 1);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) _exit(0);
        if (byte == RLVR_SANDBOX_MSG_RESET) {
            /* the old copy-on-write layer (and everything any run wrote)
             * goes away with its tmpfs */
            rlvr_sb_remount_work(report, plan);
            holder_ready(report);
        }
    }
}

/* fds[0] answers to the runtime, fds[1] go-ahead from the runtime, fds[2]
 * commands. */
void rlvr_sb_holder_main(pid_t parent, int *fds, const rlvr_sb_holder_plan *plan) {
    if (rlvr_sb_keep_fds(fds, 3) != 0) _exit(RLVR_SANDBOX_EXIT_HOLDER_LOST);
    int report = fds[0], go = fds[1], ctl = fds[2];
    /* no PR_SET_PDEATHSIG: it fires when the creating *thread* ends; the
     * holder ends when its command pipe reaches EOF, which also happens when
     * the runtime dies */
    if (getppid() != parent) _exit(RLVR_SANDBOX_EXIT_HOLDER_LOST);
    holder_unshare(report, go);
    if (rlvr_sb_become_inner(plan->host) != 0)
        rlvr_sb_fail(report, RLVR_SANDBOX_STAGE_OTHER, "switching to the sandbox identity");
    prctl(PR_SET_DUMPABLE, 1);
    holder_build(report, plan);
    holder_ready(report);
    holder_serve(report, ctl, plan);
}
