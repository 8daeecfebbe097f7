/* enclave/sandbox_holder.c — the holder process: one per sandbox.
 *
 * Forked by the spawner when a sandbox is made. It exists so that a
 * sandbox's namespaces and root outlive its runs: built once, they are
 * joined by every run's supervisor, and restored between verifications
 * without building anything else again. It creates the user, mount,
 * network, IPC, UTS and cgroup namespaces, says UNSHARED and waits for GO
 * (the runtime writes its uid/gid maps in between), builds the root
 * (sandbox_mounts.c), brings up the loopback interface, pivots into the
 * root, mounts /work and says READY. Then it serves RESET (answering
 * READY) until its command pipe reaches EOF, which also happens when the
 * runtime dies, and exits 0. A reset leaves nothing of the earlier runs
 * that a later run could observe: /work gets a fresh copy-on-write layer
 * and the holder moves into a fresh network and UTS namespace (the runs
 * join the holder's current ones), so sockets in any state (TIME_WAIT
 * included), interface counters and addresses die with the verification
 * that made them. Failures: ERROR and RLVR_SANDBOX_EXIT_FAILED, or
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

/* The network and UTS namespaces the holder is in, as a fresh one has
 * them: loopback up, the sandbox's host name. */
static void network_ready(int err_fd, const rlvr_sb_holder_plan *p) {
    loopback_up(err_fd);
    if (sethostname(p->hostname, strlen(p->hostname)) != 0)
        rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "sethostname");
}

/* Everything the holder does after its namespaces exist and are mapped; on
 * error it reports and exits. /work is mounted after the pivot, as every
 * reset mounts it: a run after a reset sees the same mount table, in the
 * same order and with the same options, as the first run of a new sandbox
 * (mounted before the pivot, the overlay's options would name the host's
 * scratch path, and its place in the table would differ). */
static void holder_build(int err_fd, const rlvr_sb_holder_plan *p) {
    char root[PATH_MAX];
    rlvr_sb_path(err_fd, root, sizeof root, "%s/root", p->dir);
    rlvr_sb_mount_root(err_fd, root, p);
    network_ready(err_fd, p);
    rlvr_sb_pivot_root(err_fd, root);
    rlvr_sb_mount_work(err_fd, p);
}

/* A fresh network and UTS namespace for the holder, which the next runs
 * join: whatever the earlier runs left in the old ones (sockets in
 * TIME_WAIT, bound abstract names, interface and protocol counters) goes
 * with them. Only a process of the sandbox could reach them, and none is
 * left: every run's processes are gone before the runtime resets. */
static void fresh_network(int err_fd, const rlvr_sb_holder_plan *p) {
    if (unshare(CLONE_NEWNET | CLONE_NEWUTS) != 0)
        rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "unshare(net, uts namespaces) for the reset");
    network_ready(err_fd, p);
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
             * goes away with its tmpfs; the old network with its namespace */
            fresh_network(report, plan);
            rlvr_sb_remount_work(report, plan);
            holder_ready(report);
        }
    }
}

/* fds[0] answers to the runtime, fds[1] go-ahead from the runtime, fds[2]
 * commands, fds[3] the environment image's tree (-1: none). */
void rlvr_sb_holder_main(pid_t parent, int *fds, const rlvr_sb_holder_plan *plan) {
    if (rlvr_sb_keep_fds(fds, 4) != 0) _exit(RLVR_SANDBOX_EXIT_HOLDER_LOST);
    int report = fds[0], go = fds[1], ctl = fds[2];
    rlvr_sb_holder_plan moved = *plan;
    moved.image_tree = fds[3];
    plan = &moved;
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
