/* tests/enclave/test_sandbox.c — the sandbox: isolation, copy-on-write,
 * limits, seccomp, cleanup. Runs as root (ctest) and, with --unprivileged,
 * under setpriv as uid 65534; with --expect-refusal inside a user namespace
 * whose user.max_user_namespaces is 0. Every scenario runs twice: with
 * overlayfs snapshots and with copied snapshots. */
#include "test.h"
#include "core/fs.h"
#include "fixture.h"

#include "core/log.h"
#include "core/sys.h"
#include "enclave/fsutil.h"
#include "enclave/sandbox.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <linux/sched.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static rlvr_sandbox_host *host;

static int count_fds(void) {
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    while (d && (e = readdir(d))) n += e->d_name[0] != '.';
    if (d) closedir(d);
    return n - 1;
}

/* Runs `sh -c script` and returns the result (checked to have run). */
static rlvr_sandbox_result sh(rlvr_sandbox *sb, const char *script, double wall_s) {
    const char *argv[] = {"/bin/sh", "-c", script, NULL};
    rlvr_sandbox_cmd cmd = {.version = RLVR_SANDBOX_CMD_VERSION, .argv = argv, .wall_s = wall_s, .results_fd = true};
    rlvr_sandbox_result res;
    int rc = rlvr_sandbox_exec(sb, &cmd, &res);
    CHECK_MSG(rc == 0, "exec failed: %s", rlvr_error_last());
    if (rc != 0) memset(&res, 0, sizeof res), res.exit_code = -99;
    return res;
}

static rlvr_snapshot *make_tree(void) {
    rlvr_snapshot *snap = NULL;
    CHECK_OK(rlvr_snapshot_new(&snap, host));
    char path[4096];
    const char *root = rlvr_snapshot_path(snap);
    snprintf(path, sizeof path, "%s/src", root);
    CHECK_OK(rlvr_mkdir_p(path, 0755));
    snprintf(path, sizeof path, "%s/tests", root);
    CHECK_OK(rlvr_mkdir_p(path, 0755));
    snprintf(path, sizeof path, "%s/src/a.txt", root);
    CHECK_OK(rlvr_fs_write_file(path, "pristine\n", 9));
    snprintf(path, sizeof path, "%s/tests/t.sh", root);
    CHECK_OK(rlvr_fs_write_file(path, "echo test\n", 10));
    snprintf(path, sizeof path, "%s/hog.c", root);
    const char *hog =
        "#include <stdlib.h>\n#include <string.h>\n#include <unistd.h>\n#include <sys/wait.h>\n"
        "int main(int c, char **v) {\n"
        "  if (!strcmp(v[1], \"mem\")) { long mb = atol(v[2]); for (long i = 0; i < mb; i++) {\n"
        "      char *p = malloc(1 << 20); if (!p) return 3; memset(p, 1, 1 << 20); } return 0; }\n"
        "  if (!strcmp(v[1], \"forkmem\")) { int k = atoi(v[2]); long mb = atol(v[3]);\n"
        "    for (int j = 0; j < k; j++) if (fork() == 0) { for (long i = 0; i < mb; i++) {\n"
        "      char *p = malloc(1 << 20); if (!p) _exit(3); memset(p, 1, 1 << 20); } pause(); }\n"
        "    while (wait(NULL) > 0) {} return 0; }\n"
        "  if (!strcmp(v[1], \"forkbomb\")) { for (;;) { if (fork() == 0) pause(); } }\n"
        "  return 2; }\n";
    CHECK_OK(rlvr_fs_write_file(path, hog, strlen(hog)));
    CHECK_OK(rlvr_snapshot_seal(snap));
    return snap;
}

static rlvr_sandbox *make_sandbox_net(rlvr_snapshot *snap, const rlvr_sandbox_limits *limits, const char *private_dir,
                                      rlvr_sandbox_network network) {
    static const char *const readonly[] = {"tests", NULL};
    rlvr_sandbox_options opt = {.version = RLVR_SANDBOX_OPTIONS_VERSION, .kind = RLVR_SANDBOX_WORKSPACE,
                                .tree = snap, .readonly = readonly, .private_dir = private_dir, .network = network};
    if (limits) opt.limits = *limits;
    else rlvr_sandbox_limits_default(&opt.limits);
    rlvr_sandbox *sb = NULL;
    CHECK_OK(rlvr_sandbox_new(&sb, host, &opt));
    return sb;
}

static rlvr_sandbox *make_sandbox(rlvr_snapshot *snap, const rlvr_sandbox_limits *limits, const char *private_dir) {
    return make_sandbox_net(snap, limits, private_dir, RLVR_SANDBOX_NET_NONE);
}

/* ---- isolation ---------------------------------------------------------------- */

static void test_identity(rlvr_sandbox *sb) {
    rlvr_sandbox_result r = sh(sb,
                               "id -u; hostname; grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status; "
                               "ls /proc | grep -c '^[0-9]'; test -e /root || echo no-root; test -e /home || echo no-home; "
                               "test -e /etc/shadow || echo no-shadow; cat /etc/passwd | head -1; echo \"$PATH|$HOME|$LD_PRELOAD\"",
                               10);
    CHECK_MSG(r.exit_code == 0, "exit %d: %s", r.exit_code, r.out);
    CHECK(strstr(r.out, "1000\nworkspace\n") == r.out);
    CHECK(strstr(r.out, "CapEff:\t0000000000000000"));
    CHECK(strstr(r.out, "CapBnd:\t0000000000000000"));
    CHECK(strstr(r.out, "NoNewPrivs:\t1"));
    CHECK(strstr(r.out, "Seccomp:\t2"));
    /* sh, ls and grep at most, plus our init: nothing of the host */
    CHECK(strstr(r.out, "\n4\n") || strstr(r.out, "\n3\n") || strstr(r.out, "\n2\n"));
    CHECK(strstr(r.out, "no-root\nno-home\nno-shadow\nsandbox:x:1000"));
    CHECK(strstr(r.out, "/usr/local/bin:/usr/bin:/bin|/tmp|\n"));
    CHECK(r.limit == RLVR_LIMIT_NONE);
    rlvr_sandbox_result_free(&r);
}

static void test_tree(rlvr_sandbox *sb, rlvr_snapshot *snap) {
    uint64_t before, after;
    CHECK_OK(rlvr_fs_hash_tree(rlvr_snapshot_path(snap), &before));
    rlvr_sandbox_result r = sh(sb, "cat src/a.txt && echo changed > src/a.txt && echo new > src/b.txt && rm hog.c.none 2>/dev/null; "
                                   "echo x > tests/t.sh && echo WROTE-TESTS; touch tests/new && echo ADDED-TEST; "
                                   "mv tests tests2 && echo MOVED-TESTS; echo y > /usr/evil && echo WROTE-USR; "
                                   "echo z > /evil && echo WROTE-ROOT; echo done",
                               10);
    CHECK(strstr(r.out, "pristine\n") == r.out);
    CHECK(!strstr(r.out, "WROTE-TESTS") && !strstr(r.out, "ADDED-TEST") && !strstr(r.out, "MOVED-TESTS"));
    CHECK(!strstr(r.out, "WROTE-USR") && !strstr(r.out, "WROTE-ROOT"));
    CHECK(strstr(r.out, "done\n"));
    rlvr_sandbox_result_free(&r);
    /* writes persist between runs of one sandbox */
    r = sh(sb, "cat src/a.txt src/b.txt tests/t.sh", 10);
    CHECK_MSG(strcmp(r.out, "changed\nnew\necho test\n") == 0, "got: %s", r.out);
    rlvr_sandbox_result_free(&r);
    /* and never reach the snapshot */
    CHECK_OK(rlvr_fs_hash_tree(rlvr_snapshot_path(snap), &after));
    CHECK(before == after);
}

/* In an enclave a process of a run cannot write into another's memory (the
 * test harness's) through /proc/PID/mem; files are writable only under
 * /work, /tmp, /dev. Pipes are not files to Landlock: reopening them through
 * /proc (/dev/stdout) works, in enclaves and workspaces alike. */
static void test_landlock(rlvr_sandbox *workspace, rlvr_snapshot *snap) {
    const char *script = "sleep 5 & p=$!; (exec 9>/proc/$p/mem) 2>/dev/null && echo MEMOPEN; "
                         "(exec 9>/proc/$$/mem) 2>/dev/null && echo MEMOPEN2; kill $p; "
                         "echo to-stderr > /dev/stderr; echo ok > /tmp/w && echo ok > src/w && echo ok > /dev/null && "
                         "echo WRITES";
    rlvr_sandbox_options opt = {.version = RLVR_SANDBOX_OPTIONS_VERSION, .kind = RLVR_SANDBOX_ENCLAVE, .tree = snap};
    rlvr_sandbox_limits_default(&opt.limits);
    rlvr_sandbox *enclave = NULL;
    CHECK_OK(rlvr_sandbox_new(&enclave, host, &opt));
    if (!enclave) return;
    rlvr_sandbox_result r = sh(enclave, script, 10);
    if (rlvr_sandbox_host_landlock(host)) CHECK_MSG(strcmp(r.out, "to-stderr\nWRITES\n") == 0, "got: %s", r.out);
    else CHECK(strstr(r.out, "to-stderr\nWRITES\n") != NULL);
    rlvr_sandbox_result_free(&r);
    rlvr_sandbox_free(enclave);
    r = sh(workspace, "echo to-stderr > /dev/stderr; echo to-stdout > /dev/stdout", 10);
    CHECK_MSG(strcmp(r.out, "to-stderr\nto-stdout\n") == 0, "workspace: %s", r.out);
    rlvr_sandbox_result_free(&r);
}

static void test_tmp_private(rlvr_sandbox *sb) {
    rlvr_sandbox_result r = sh(sb, "ls -A /tmp | wc -l; echo secret > /tmp/x; cat /tmp/x", 10);
    CHECK(strcmp(r.out, "0\nsecret\n") == 0);
    rlvr_sandbox_result_free(&r);
    r = sh(sb, "ls -A /tmp | wc -l", 10);
    CHECK_MSG(strcmp(r.out, "0\n") == 0, "a run saw the previous run's /tmp: %s", r.out);
    rlvr_sandbox_result_free(&r);
}

static int private_fn(void *arg) {
    (void)arg;
    int ok = access("/.rlvr/private/key", R_OK) == 0;
    printf("%s", ok ? "visible" : "hidden"); /* stdio works; the runtime's buffered output does not leak in */
    return 0;
}

static void test_private(rlvr_sandbox *sb) {
    rlvr_sandbox_result r = sh(sb, "cat /.rlvr/private/key 2>/dev/null || echo hidden", 10);
    CHECK_MSG(strcmp(r.out, "hidden\n") == 0, "a command saw the private dir: %s", r.out);
    rlvr_sandbox_result_free(&r);
    CHECK_OK(rlvr_sandbox_call(sb, private_fn, NULL, 0, 10, 100, &r));
    CHECK(strcmp(r.out, "visible") == 0);
    rlvr_sandbox_result_free(&r);
}

/* ---- network -------------------------------------------------------------------- */

typedef struct {
    uint16_t port;
    char other[64]; /* a non-loopback address of this machine, or "" */
} net_arg;

static int try_connect(const char *ip, uint16_t port) {
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, ip, &a.sin_addr);
    int rc = connect(s, (struct sockaddr *)&a, sizeof a);
    close(s);
    return rc;
}

/* Whether socket(family) is refused with EAFNOSUPPORT (the raw system call,
 * with garbage in the upper half of the register when `high`: the kernel
 * ignores it for an int, and so must the filter). */
static bool family_refused(long family, bool high) {
    long fd = syscall(SYS_socket, family | (high ? 0x100000000L : 0), SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0) close((int)fd);
    return fd < 0 && errno == EAFNOSUPPORT;
}

/* A sandbox without a network: the inet families and every other one but
 * AF_UNIX and AF_NETLINK are refused (AF_VSOCK would reach the hypervisor). */
static int no_net_fn(void *p) {
    (void)p;
    int bad = 0;
    if (!family_refused(AF_INET, false) || !family_refused(AF_INET6, false)) bad |= 1;
    if (!family_refused(AF_INET, true) || !family_refused(AF_INET6, true)) bad |= 2;
    if (!family_refused(AF_VSOCK, false) || !family_refused(AF_PACKET, false)) bad |= 4;
    int u = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int n = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0);
    if (u < 0 || n < 0) bad |= 8;
    if (u >= 0) close(u);
    if (n >= 0) close(n);
    return bad;
}

/* A sandbox with loopback: nothing outside it answers, its own loopback
 * does. */
static int net_fn(void *p) {
    const net_arg *a = p;
    int bad = 0;
    if (try_connect("127.0.0.1", a->port) == 0) bad |= 1;
    if (a->other[0] && try_connect(a->other, a->port) == 0) bad |= 2;
    if (try_connect("8.8.8.8", 53) == 0) bad |= 4;
    int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(a->port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(l, 1) != 0 ||
        try_connect("127.0.0.1", a->port) != 0)
        bad |= 8;
    if (l >= 0) close(l);
    return bad;
}

/* One connection on loopback whose client closes first: the client's end
 * stays in TIME_WAIT for a minute, in the network namespace. */
static int time_wait_fn(void *p) {
    (void)p;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(40123), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (l < 0 || c < 0 || bind(l, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(l, 1) != 0 ||
        connect(c, (struct sockaddr *)&sa, sizeof sa) != 0)
        return 1;
    int s = accept(l, NULL, NULL);
    close(c);
    char byte;
    if (s < 0 || read(s, &byte, 1) != 0) return 2; /* the client's FIN */
    close(s);
    close(l);
    return 0;
}

/* A loopback sandbox's network is new after every reset: a socket left in
 * TIME_WAIT, the interface's counters and the host name are the first
 * run's again. */
static void test_network_reset(rlvr_sandbox *sb) {
    const char *show = "grep -c '^ *[0-9]*: [0-9A-F:]* [0-9A-F:]* 06 ' /proc/net/tcp; "
                       "awk -F: '/lo:/ {split($2, f, \" \"); print (f[2] > 0 ? \"packets\" : \"none\")}' /proc/net/dev; "
                       "hostname";
    rlvr_sandbox_result r;
    CHECK_OK(rlvr_sandbox_call(sb, time_wait_fn, NULL, 0, 20, 100, &r));
    CHECK_MSG(r.exit_code == 0, "making a TIME_WAIT socket: %d", r.exit_code);
    rlvr_sandbox_result_free(&r);
    /* the control: the next run sees what the last one left */
    r = sh(sb, show, 10);
    CHECK_MSG(strcmp(r.out, "1\npackets\nworkspace\n") == 0, "before the reset: %s", r.out);
    rlvr_sandbox_result_free(&r);
    CHECK_OK(rlvr_sandbox_reset(sb));
    r = sh(sb, show, 10);
    CHECK_MSG(strcmp(r.out, "0\nnone\nworkspace\n") == 0, "after the reset: %s", r.out);
    rlvr_sandbox_result_free(&r);
}

static void test_network(rlvr_sandbox *sb, rlvr_sandbox *with_net) {
    rlvr_sandbox_result r;
    CHECK_OK(rlvr_sandbox_call(sb, no_net_fn, NULL, 0, 20, 100, &r));
    CHECK_MSG(r.exit_code == 0, "socket families that should be refused were not: mask %d", r.exit_code);
    rlvr_sandbox_result_free(&r);
    int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    CHECK(bind(l, (struct sockaddr *)&a, sizeof a) == 0);
    CHECK(listen(l, 4) == 0);
    socklen_t len = sizeof a;
    getsockname(l, (struct sockaddr *)&a, &len);
    net_arg arg = {.port = ntohs(a.sin_port)};
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) == 0) {
        for (struct ifaddrs *i = ifs; i; i = i->ifa_next)
            if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && strcmp(i->ifa_name, "lo") != 0) {
                inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, arg.other, sizeof arg.other);
                break;
            }
        freeifaddrs(ifs);
    }
    CHECK(try_connect("127.0.0.1", arg.port) == 0); /* the listener works from outside */
    int c = accept(l, NULL, NULL);
    if (c >= 0) close(c);
    CHECK_OK(rlvr_sandbox_call(with_net, net_fn, &arg, sizeof arg, 20, 100, &r));
    CHECK_MSG(r.exit_code == 0, "with loopback: connections that should fail succeeded, or loopback failed: mask %d",
              r.exit_code);
    rlvr_sandbox_result_free(&r);
    c = accept(l, NULL, NULL);
    CHECK_MSG(c < 0 && (errno == EAGAIN || errno == EWOULDBLOCK), "the host listener saw a connection from a sandbox");
    if (c >= 0) close(c);
    close(l);
    r = sh(sb, "cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '", 10);
    CHECK_MSG(strcmp(r.out, "lo\n") == 0, "interfaces: %s", r.out);
    rlvr_sandbox_result_free(&r);
    test_network_reset(with_net);
}

/* ---- the page cache ------------------------------------------------------------- */

/* Whether the first page of `path` is in the page cache. */
static int page_cached(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    void *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) return -1;
    unsigned char v = 0;
    int rc = mincore(m, 4096, &v) == 0 ? (v & 1) : -1;
    munmap(m, 4096);
    return rc;
}

/* Written back first: a dirty page cannot be dropped. */
static int evict(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    int rc = fdatasync(fd) == 0 ? posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) : -1;
    close(fd);
    return rc;
}

/* A run reads a tree file, then asks for its pages to be evicted, by advice
 * on the descriptor and on a mapping: both succeed and do nothing. */
static int evict_fn(void *arg) {
    (void)arg;
    int fd = open("/work/src/a.txt", O_RDONLY | O_CLOEXEC);
    char buf[16];
    if (fd < 0 || read(fd, buf, sizeof buf) < 0) return 1;
    void *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
    int bad = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0;
    if (m == MAP_FAILED || madvise(m, 4096, MADV_PAGEOUT) != 0 || madvise(m, 4096, MADV_COLD) != 0) bad |= 2;
    if (m != MAP_FAILED) munmap(m, 4096);
    close(fd);
    return bad;
}

/* The snapshot's pages stay cached whatever a run asks: an overlay reads
 * its lower files' pages, which outlive every run and every enclave made
 * from the snapshot, and the sandbox owns those files, so mincore would
 * show it which pages an earlier run evicted. The control: evicted from
 * here, the page does leave the cache (the check below can fail). */
static void test_page_cache(rlvr_sandbox *sb, rlvr_snapshot *snap) {
    char path[4096];
    snprintf(path, sizeof path, "%s/src/a.txt", rlvr_snapshot_path(snap));
    CHECK_OK(rlvr_sandbox_reset(sb)); /* /work/src/a.txt is the snapshot's file again, not a copy */
    CHECK(evict(path) == 0);
    CHECK_MSG(page_cached(path) == 0, "the control: eviction does not work on this file system");
    rlvr_sandbox_result r;
    CHECK_OK(rlvr_sandbox_call(sb, evict_fn, NULL, 0, 20, 100, &r));
    CHECK_MSG(r.exit_code == 0, "advice refused or failed: mask %d", r.exit_code);
    rlvr_sandbox_result_free(&r);
    if (rlvr_sandbox_host_overlay(host))
        CHECK_MSG(page_cached(path) == 1, "the run's read did not bring the page in (through the overlay)");
    char buf[16];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    CHECK(fd >= 0 && read(fd, buf, sizeof buf) > 0 && fdatasync(fd) == 0);
    if (fd >= 0) close(fd);
    CHECK_OK(rlvr_sandbox_call(sb, evict_fn, NULL, 0, 20, 100, &r));
    rlvr_sandbox_result_free(&r);
    CHECK_MSG(page_cached(path) == 1, "a run evicted a page of the snapshot");
}

/* ---- seccomp ----------------------------------------------------------------------- */

static int syscalls_fn(void *arg) {
    (void)arg;
    int allowed = 0;
    if (ptrace(PTRACE_TRACEME, 0, 0, 0) == 0) allowed |= 1 << 0;
    if (unshare(CLONE_NEWUSER) == 0) allowed |= 1 << 1;
    if (syscall(SYS_bpf, 0, NULL, 0) != -1 || errno != EPERM) allowed |= 1 << 2;
    if (syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0) != -1 || errno != EPERM) allowed |= 1 << 3;
    if (syscall(SYS_keyctl, 0, 0, 0, 0, 0) != -1 || errno != EPERM) allowed |= 1 << 4;
    if (syscall(SYS_add_key, "user", "x", "y", 1, 0) != -1 || errno != EPERM) allowed |= 1 << 5;
    if (syscall(SYS_userfaultfd, 0) != -1 || errno != EPERM) allowed |= 1 << 6;
    if (syscall(SYS_io_uring_setup, 1, NULL) != -1 || errno != EPERM) allowed |= 1 << 7;
    if (syscall(SYS_mount, "none", "/tmp", "tmpfs", 0, NULL) != -1 || errno != EPERM) allowed |= 1 << 8;
    if (syscall(SYS_setns, 0, 0) != -1 || errno != EPERM) allowed |= 1 << 9;
    if (syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0) != -1 || errno != EPERM) allowed |= 1 << 10;
    if (syscall(SYS_clone3, NULL, 0) != -1 || errno != ENOSYS) allowed |= 1 << 11;
    if (syscall(SYS_chroot, "/tmp") != -1 || errno != EPERM) allowed |= 1 << 12;
    return allowed ? 1 + (allowed & 0x3f) + ((allowed >> 6) ? 64 : 0) : 0;
}

static void test_seccomp(rlvr_sandbox *sb) {
    rlvr_sandbox_result r;
    CHECK_OK(rlvr_sandbox_call(sb, syscalls_fn, NULL, 0, 10, 100, &r));
    CHECK_MSG(r.exit_code == 0, "a denied system call went through (code %d)", r.exit_code);
    rlvr_sandbox_result_free(&r);
    r = sh(sb, "unshare -U true 2>/dev/null && echo UNSHARED; unshare -rm true 2>/dev/null && echo UNSHARED2; echo end", 10);
    CHECK_MSG(strcmp(r.out, "end\n") == 0, "got %s", r.out);
    rlvr_sandbox_result_free(&r);
}

/* ---- limits ----------------------------------------------------------------------- */

static void test_wall_and_survivors(rlvr_sandbox *sb) {
    double t0 = rlvr_now();
    rlvr_sandbox_result r = sh(sb, "sleep 30", 0.4);
    CHECK(r.limit == RLVR_LIMIT_WALL);
    CHECK(r.exit_code == -1 && r.signal == SIGKILL);
    CHECK_MSG(rlvr_now() - t0 < 5.0, "the timeout took %.2f s", rlvr_now() - t0);
    rlvr_sandbox_result_free(&r);
    /* a background process cannot outlive its run: it neither finishes the
     * write nor keeps the pipe open */
    t0 = rlvr_now();
    r = sh(sb, "(sleep 2; echo late > late.txt; echo late) & setsid sh -c 'sleep 3; echo late2 > late2.txt' & echo early", 10);
    CHECK(strcmp(r.out, "early\n") == 0);
    CHECK(r.limit == RLVR_LIMIT_NONE && r.exit_code == 0);
    CHECK_MSG(rlvr_now() - t0 < 1.8, "the run waited for its background processes (%.2f s)", rlvr_now() - t0);
    rlvr_sandbox_result_free(&r);
    sleep(3);
    r = sh(sb, "ls late.txt late2.txt 2>/dev/null | wc -l", 10);
    CHECK_MSG(strcmp(r.out, "0\n") == 0, "a background process survived its run: %s", r.out);
    rlvr_sandbox_result_free(&r);
    rlvr_sandbox_settle(sb);
    pid_t spawner = rlvr_sandbox_host_spawner(host);
    CHECK_MSG(fixture_count_children(spawner) == 1, "%d children of the spawner; only the sandbox's holder should be left",
              fixture_count_children(spawner));
    CHECK_MSG(fixture_count_children(getpid()) == 1, "%d children; only the spawner should be left",
              fixture_count_children(getpid()));
}

/* The spawner killed between runs: the next run starts a new one and runs
 * in the same sandbox (its holder outlives the spawner). */
static void test_spawner_restart(rlvr_sandbox *sb) {
    pid_t old = rlvr_sandbox_host_spawner(host);
    CHECK(old > 0 && kill(old, SIGKILL) == 0);
    rlvr_sandbox_result r = sh(sb, "echo again", 10);
    CHECK_MSG(r.out && strcmp(r.out, "again\n") == 0, "after the spawner was killed: %s", r.out ? r.out : rlvr_error_last());
    rlvr_sandbox_result_free(&r);
    pid_t now = rlvr_sandbox_host_spawner(host);
    CHECK_MSG(now > 0 && now != old, "spawner %d, killed %d", (int)now, (int)old);
    CHECK(fixture_count_children(getpid()) == 1); /* the killed one was reaped */
}

static void test_limits(rlvr_snapshot *snap) {
    rlvr_sandbox_limits l;
    rlvr_sandbox_limits_default(&l);
    l.wall_s = 20;
    l.cpu_s = 5;
    l.memory_bytes = 96 << 20;
    l.processes = 12;
    l.file_bytes = 1 << 20;
    l.output_bytes = 64 << 10;
    l.tmp_bytes = 1 << 20;
    l.disk_bytes = 8 << 20;
    rlvr_sandbox *sb = make_sandbox(snap, &l, NULL);
    if (!sb) return;
    rlvr_sandbox_result r = sh(sb, "cc -O0 -o hog hog.c && echo built", 60);
    CHECK_MSG(strcmp(r.out, "built\n") == 0, "building the helper: %s", r.out);
    rlvr_sandbox_result_free(&r);


    r = sh(sb, "exec ./hog mem 400", 0);
    CHECK_MSG(r.limit == RLVR_LIMIT_MEMORY, "memory bomb: limit %s exit %d rss %lld", rlvr_sandbox_limit_name(r.limit),
              r.exit_code, (long long)r.max_rss_bytes);
    CHECK(r.exit_code != 0);
    rlvr_sandbox_result_free(&r);

    r = sh(sb, "exec ./hog forkmem 4 40", 0);
    CHECK_MSG(r.limit == RLVR_LIMIT_MEMORY, "memory bomb in 4 processes: limit %s", rlvr_sandbox_limit_name(r.limit));
    rlvr_sandbox_result_free(&r);

    r = sh(sb, "exec ./hog forkbomb", 0);
    CHECK_MSG(r.limit == RLVR_LIMIT_PROCESSES, "fork bomb: limit %s procs %d", rlvr_sandbox_limit_name(r.limit),
              r.max_processes);
    /* the kernel's backstop (twice the limit) bounds what a bomb reaches between two looks */
    CHECK_MSG(r.max_processes <= 2 * l.processes, "fork bomb reached %d processes", r.max_processes);
    rlvr_sandbox_result_free(&r);

    r = sh(sb, "exec head -c 5000000 /dev/zero > big", 0);
    CHECK_MSG(r.limit == RLVR_LIMIT_FILE_SIZE, "big file: limit %s", rlvr_sandbox_limit_name(r.limit));
    CHECK(r.signal == SIGXFSZ);
    rlvr_sandbox_result_free(&r);
    r = sh(sb, "rm -f big; stat -c %s big 2>/dev/null; echo ok", 0);
    rlvr_sandbox_result_free(&r);

    r = sh(sb, "i=0; while [ $i -lt 20 ]; do head -c 1000000 /dev/zero > fill$i 2>/dev/null; i=$((i+1)); done; echo tried", 0);
    CHECK_MSG(r.limit == RLVR_LIMIT_DISK, "filling /work: limit %s", rlvr_sandbox_limit_name(r.limit));
    rlvr_sandbox_result_free(&r);
    r = sh(sb, "rm -f fill*; head -c 3000000 /dev/zero > /tmp/f 2>/dev/null; echo tried", 0);
    CHECK_MSG(r.limit == RLVR_LIMIT_DISK, "filling /tmp: limit %s", rlvr_sandbox_limit_name(r.limit));
    rlvr_sandbox_result_free(&r);

    r = sh(sb, "yes flood", 0);
    CHECK(r.limit == RLVR_LIMIT_OUTPUT);
    CHECK(r.out_truncated && r.out_len == (size_t)l.output_bytes);
    rlvr_sandbox_result_free(&r);

    /* a command that does not exist is the command's failure, not ours */
    const char *argv[] = {"no-such-command", NULL};
    rlvr_sandbox_cmd cmd = {.version = RLVR_SANDBOX_CMD_VERSION, .argv = argv};
    CHECK_OK(rlvr_sandbox_exec(sb, &cmd, &r));
    CHECK(r.exit_code == 127 && strstr(r.out, "cannot run no-such-command"));
    rlvr_sandbox_result_free(&r);
    rlvr_sandbox_free(sb);

    l.cpu_s = 0.5;
    sb = make_sandbox(snap, &l, NULL);
    if (!sb) return;
    double t0 = rlvr_now();
    r = sh(sb, "while :; do :; done", 0);
    CHECK_MSG(r.limit == RLVR_LIMIT_CPU, "busy loop: limit %s", rlvr_sandbox_limit_name(r.limit));
    CHECK(r.exit_code != 0 && r.cpu_s >= 0.5 && rlvr_now() - t0 < 15);
    rlvr_sandbox_result_free(&r);
    rlvr_sandbox_free(sb);
}

/* Pooled restore: a reset sandbox has none of the previous runs' writes,
 * and no run sees another run's System V IPC objects. */
static void test_reset(rlvr_sandbox *sb, rlvr_snapshot *snap) {
    rlvr_sandbox_result r = sh(sb, "echo dirty > src/a.txt; echo new > planted.txt; rm -f hog.c; "
                                   "ipcmk -M 4096 >/dev/null 2>&1 && echo SHM", 10);
    CHECK(strcmp(r.out, "SHM\n") == 0);
    rlvr_sandbox_result_free(&r);
    r = sh(sb, "cat src/a.txt; ipcs -m | grep -c '^0x'", 10);
    CHECK_MSG(strcmp(r.out, "dirty\n0\n") == 0, "before reset: %s", r.out);
    rlvr_sandbox_result_free(&r);
    CHECK_OK(rlvr_sandbox_reset(sb));
    r = sh(sb, "cat src/a.txt; ls planted.txt 2>/dev/null; ls hog.c; ls -A /tmp | wc -l", 10);
    CHECK_MSG(strcmp(r.out, "pristine\nhog.c\n0\n") == 0, "after reset: %s", r.out);
    rlvr_sandbox_result_free(&r);
    /* read-only paths are read-only again after a reset */
    r = sh(sb, "(echo x > tests/t.sh) 2>/dev/null && echo WROTE; cat tests/t.sh", 10);
    CHECK_MSG(strcmp(r.out, "echo test\n") == 0, "after reset: %s", r.out);
    rlvr_sandbox_result_free(&r);
    uint64_t h1, h2;
    CHECK_OK(rlvr_fs_hash_tree(rlvr_snapshot_path(snap), &h1));
    for (int i = 0; i < 3; i++) CHECK_OK(rlvr_sandbox_reset(sb));
    CHECK_OK(rlvr_fs_hash_tree(rlvr_snapshot_path(snap), &h2));
    CHECK(h1 == h2);
}

/* Threads share a host; each uses its own sandbox. A sandbox outlives the
 * thread that created it. */
typedef struct {
    rlvr_snapshot *snap;
    rlvr_sandbox *made;
    int ok;
} thread_arg;

static void *thread_main(void *p) {
    thread_arg *a = p;
    rlvr_sandbox_options opt = {.version = RLVR_SANDBOX_OPTIONS_VERSION, .kind = RLVR_SANDBOX_ENCLAVE, .tree = a->snap};
    rlvr_sandbox_limits_default(&opt.limits);
    if (rlvr_sandbox_new(&a->made, host, &opt) != 0) return NULL;
    for (int i = 0; i < 4; i++) {
        char script[64];
        snprintf(script, sizeof script, "echo %d > src/n; cat src/n", i);
        const char *argv[] = {"/bin/sh", "-c", script, NULL};
        rlvr_sandbox_cmd cmd = {.version = RLVR_SANDBOX_CMD_VERSION, .argv = argv};
        rlvr_sandbox_result r;
        if (rlvr_sandbox_exec(a->made, &cmd, &r) != 0) return NULL;
        char want[16];
        snprintf(want, sizeof want, "%d\n", i);
        a->ok += strcmp(r.out, want) == 0;
        rlvr_sandbox_result_free(&r);
    }
    return NULL;
}

static void test_threads(rlvr_snapshot *snap) {
    pthread_t t[2];
    thread_arg a[2] = {{snap, NULL, 0}, {snap, NULL, 0}};
    for (int i = 0; i < 2; i++) CHECK(pthread_create(&t[i], NULL, thread_main, &a[i]) == 0);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < 2; i++) {
        CHECK_MSG(a[i].ok == 4, "thread %d: %d of 4 runs right", i, a[i].ok);
        if (!a[i].made) continue;
        /* the creating thread is gone; the sandbox still works */
        rlvr_sandbox_result r = sh(a[i].made, "cat src/n", 10);
        CHECK(strcmp(r.out, "3\n") == 0);
        rlvr_sandbox_result_free(&r);
        rlvr_sandbox_free(a[i].made);
    }
}

static int prepare_fail(void *arg) { return *(int *)arg; }

static void test_prepare(rlvr_sandbox *sb) {
    int code = 7;
    const char *argv[] = {"/bin/sh", "-c", "echo RAN", NULL};
    rlvr_sandbox_cmd cmd = {.version = RLVR_SANDBOX_CMD_VERSION, .argv = argv, .prepare = prepare_fail, .prepare_arg = &code,
                            .prepare_arg_len = sizeof code};
    rlvr_sandbox_result r;
    CHECK_OK(rlvr_sandbox_exec(sb, &cmd, &r));
    CHECK(r.prepare_status == 7 && !strstr(r.out, "RAN"));
    rlvr_sandbox_result_free(&r);
    code = 0;
    CHECK_OK(rlvr_sandbox_exec(sb, &cmd, &r));
    CHECK(r.prepare_status == 0 && strcmp(r.out, "RAN\n") == 0);
    rlvr_sandbox_result_free(&r);
}

static void scenario(bool overlay) {
    int rc = fixture_host(&host, overlay);
    CHECK_MSG(rc == 0, "host: %s", rlvr_error_last());
    if (rc) return;
    CHECK(rlvr_sandbox_host_overlay(host) == overlay);
    CHECK(rlvr_sandbox_host_privileged(host) == (geteuid() == 0));
    int fds = count_fds();

    char private_dir[4096];
    snprintf(private_dir, sizeof private_dir, "%s/private-XXXXXX", rlvr_sandbox_host_scratch(host));
    CHECK(mkdtemp(private_dir) != NULL);
    chmod(private_dir, 0755);
    char key[4200];
    snprintf(key, sizeof key, "%s/key", private_dir);
    CHECK_OK(rlvr_fs_write_file(key, "k", 1));

    rlvr_snapshot *snap = make_tree();
    rlvr_sandbox *sb = make_sandbox(snap, NULL, private_dir);
    if (sb) {
        test_identity(sb);
        test_tree(sb, snap);
        test_tmp_private(sb);
        test_landlock(sb, snap);
        test_private(sb);
        rlvr_sandbox *with_net = make_sandbox_net(snap, NULL, NULL, RLVR_SANDBOX_NET_LOOPBACK);
        if (with_net) test_network(sb, with_net);
        rlvr_sandbox_free(with_net);
        test_seccomp(sb);
        test_page_cache(sb, snap);
        test_wall_and_survivors(sb);
        test_prepare(sb);
        test_spawner_restart(sb);
        test_reset(sb, snap);
        rlvr_sandbox_free(sb);
    }
    if (overlay) test_limits(snap);
    test_threads(snap);
    rlvr_snapshot_free(snap);
    rlvr_fs_remove_tree(private_dir);
    CHECK(fixture_count_children(rlvr_sandbox_host_spawner(host)) == 0);
    CHECK(fixture_count_children(getpid()) == 1);
    CHECK_MSG(count_fds() == fds, "descriptors leaked: %d before, %d after", fds, count_fds());
    /* nothing is left in the scratch directory but what we made */
    DIR *d = opendir(rlvr_sandbox_host_scratch(host));
    int left = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) left += e->d_name[0] != '.';
    if (d) closedir(d);
    CHECK_MSG(left == 0, "%d entries left in the scratch directory", left);
    char scratch[4096];
    snprintf(scratch, sizeof scratch, "%s", rlvr_sandbox_host_scratch(host));
    rlvr_sandbox_host_free(host);
    host = NULL;
    CHECK(access(scratch, F_OK) != 0);
}

/* System paths the sandbox mounts itself are refused, naming the key. */
static void test_system_path_refusals(void) {
    static const char *const bad[] = {"/usr:/tmp/x", "/tmp", "/work/y", "/proc", "/dev/shm", "/.rlvr", "/"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        rlvr_sandbox_host_options o = RLVR_SANDBOX_HOST_OPTIONS_INIT;
        o.system_paths = bad[i];
        rlvr_sandbox_host *h = NULL;
        CHECK_MSG(rlvr_sandbox_host_new(&h, &o) == RLVR_EINVAL && !h, "system paths %s accepted", bad[i]);
        CHECK_MSG(strstr(rlvr_error_last(), "system_paths"), "%s: %s", bad[i], rlvr_error_last());
        rlvr_sandbox_host_free(h);
    }
    /* a name that only starts like one of them is fine */
    rlvr_sandbox_host_options o = RLVR_SANDBOX_HOST_OPTIONS_INIT;
    o.system_paths = "/usr:/tmpfoo:/devices";
    rlvr_sandbox_host *h = NULL;
    CHECK_OK(rlvr_sandbox_host_new(&h, &o));
    rlvr_sandbox_host_free(h);
}

int main(int argc, char **argv) {
    rlvr_log_init_from_env();
    bool refusal = argc > 1 && strcmp(argv[1], "--expect-refusal") == 0;
    bool unprivileged = argc > 1 && strcmp(argv[argc - 1], "--unprivileged") == 0;
    if (refusal) {
        rlvr_sandbox_host *h = NULL;
        int rc = rlvr_sandbox_host_new(&h, NULL);
        CHECK(rc == RLVR_EUNSUPPORTED && h == NULL);
        CHECK_MSG(strstr(rlvr_error_last(), "user.max_user_namespaces"), "message: %s", rlvr_error_last());
        printf("refusal: %s\n", rlvr_error_last());
        return test_summary("test_sandbox --expect-refusal");
    }
    if (unprivileged) CHECK(geteuid() != 0);
    test_system_path_refusals();
    scenario(true);
    scenario(false);
    return test_summary(unprivileged ? "test_sandbox --unprivileged" : "test_sandbox");
}
