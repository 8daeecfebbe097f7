/* enclave/sandbox_host.c — probing what the machine allows, the seccomp
 * filter, snapshots and limits. The processes that build and run sandboxes
 * are one file each, sandbox_<role>.c (docs/ENCLAVE.md "Sandbox
 * processes"). */
#include "enclave/fsutil.h"
#include "enclave/sandbox.h"
#include "enclave/sandbox_internal.h"

#include "core/error.h"
#include "core/log.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <linux/sched.h>
#include <sys/syscall.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

/* ---- limits ------------------------------------------------------------- */

int rlvr_sandbox_limits_check(const rlvr_sandbox_limits *l) {
    const char *bad = NULL;
    if (!(l->wall_s > 0)) bad = "wall_s";
    else if (!(l->cpu_s > 0)) bad = "cpu_s";
    else if (l->memory_bytes < ((int64_t)16 << 20)) bad = "memory_bytes (at least 16 MiB)";
    else if (l->processes < 1) bad = "processes";
    else if (l->file_bytes < 1) bad = "file_bytes";
    else if (l->open_files < 16) bad = "open_files (at least 16)";
    else if (l->output_bytes < 1) bad = "output_bytes";
    else if (l->tmp_bytes < 4096) bad = "tmp_bytes";
    else if (l->disk_bytes < ((int64_t)1 << 20)) bad = "disk_bytes (at least 1 MiB)";
    if (bad) return RLVR_FAIL(RLVR_EINVAL, "sandbox limit %s is out of range", bad);
    return 0;
}

const char *rlvr_sandbox_limit_name(rlvr_sandbox_limit limit) {
    switch (limit) {
    case RLVR_LIMIT_NONE: return "none";
    case RLVR_LIMIT_WALL: return "wall_time";
    case RLVR_LIMIT_CPU: return "cpu_time";
    case RLVR_LIMIT_MEMORY: return "memory";
    case RLVR_LIMIT_PROCESSES: return "processes";
    case RLVR_LIMIT_FILE_SIZE: return "file_size";
    case RLVR_LIMIT_DISK: return "disk";
    case RLVR_LIMIT_OUTPUT: return "output";
    }
    return "unknown";
}

/* ---- seccomp ------------------------------------------------------------ */

/* Denied with EPERM: ways out of the namespaces, kernel attack surface the
 * tests never need, and ways to read other processes' memory. */
static const char *const denied_syscalls[] = {
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
    "mount", "umount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig", "fsmount", "fspick",
    "move_mount", "open_tree", "mount_setattr", "unshare", "setns",
    "bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "open_by_handle_at", "name_to_handle_at", "quotactl", "quotactl_fd", "swapon", "swapoff", "reboot",
    "acct", "syslog", "lookup_dcookie", "uselib", "vhangup", "iopl", "ioperm", "fanotify_init",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname", "setdomainname",
    "nfsservctl", "vm86", "vm86old",
    /* the page cache as a carrier: reading which pages of a file are cached
     * (another process's choice), or evicting them in another's name */
    "cachestat", "process_madvise",
};

static const unsigned long namespace_flags[] = {
    CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWIPC, CLONE_NEWUTS, CLONE_NEWCGROUP,
};

/* socket(2) families a run may open: AF_UNIX, AF_NETLINK (glibc reads
 * interfaces through it; the run's network namespace holds nothing but
 * loopback) and, where the sandbox has a network, AF_INET and AF_INET6.
 * Every other family is refused: AF_VSOCK would reach the hypervisor of a
 * virtual machine, which no network namespace separates; the rest is kernel
 * surface no test needs. The comparisons mask the upper half of the
 * register, which the kernel ignores for an int argument. */
static int add_socket_rules(scmp_filter_ctx ctx, bool inet) {
    for (int family = 0; family < AF_MAX; family++) {
        bool allowed = family == AF_UNIX || family == AF_NETLINK || (inet && (family == AF_INET || family == AF_INET6));
        if (allowed) continue;
        int r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
                                 SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, (scmp_datum_t)family));
        if (r < 0) return RLVR_FAIL(RLVR_ESANDBOX, "seccomp rule for socket family %d: %s", family, strerror(-r));
    }
    return 0;
}

/* Eviction from the page cache, a no-op that succeeds: both calls are
 * advice. The page cache outlives every run and is shared with every
 * sandbox made from the same snapshot (an overlay reads its lower files'
 * pages), and the sandbox owns the snapshot's files, so mincore(2) tells it
 * exactly which of their pages are cached: with eviction a run could write
 * bits there that a later verification reads. Without it a run can only
 * bring pages in, and the snapshot was just written: they are cached. */
static int add_page_cache_rules(scmp_filter_ctx ctx) {
    int r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(0), SCMP_SYS(fadvise64), 0);
    const unsigned long advice[] = {MADV_COLD, MADV_PAGEOUT};
    for (size_t i = 0; r >= 0 && i < sizeof advice / sizeof *advice; i++)
        r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(0), SCMP_SYS(madvise), 1,
                             SCMP_A2(SCMP_CMP_MASKED_EQ, 0xffffffffu, (scmp_datum_t)advice[i]));
    return r < 0 ? RLVR_FAIL(RLVR_ESANDBOX, "seccomp rule for page-cache advice: %s", strerror(-r)) : 0;
}

/* The rules every run gets. */
static int add_rules(scmp_filter_ctx ctx, bool inet) {
    for (size_t i = 0; i < sizeof denied_syscalls / sizeof *denied_syscalls; i++) {
        int nr = seccomp_syscall_resolve_name(denied_syscalls[i]);
        if (nr == __NR_SCMP_ERROR) continue; /* not on this architecture */
        int r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
        if (r < 0 && r != -EDOM && r != -EFAULT)
            return RLVR_FAIL(RLVR_ESANDBOX, "seccomp rule for %s: %s", denied_syscalls[i], strerror(-r));
    }
    /* clone with any namespace flag; clone3 hides its flags in memory, so it
     * answers ENOSYS and libc falls back to clone */
    for (size_t i = 0; i < sizeof namespace_flags / sizeof *namespace_flags; i++) {
        int r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                                 SCMP_A0(SCMP_CMP_MASKED_EQ, namespace_flags[i], namespace_flags[i]));
        if (r < 0) return RLVR_FAIL(RLVR_ESANDBOX, "seccomp rule for clone: %s", strerror(-r));
    }
    int clone3 = seccomp_syscall_resolve_name("clone3");
    if (clone3 != __NR_SCMP_ERROR) {
        int r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), clone3, 0);
        if (r < 0) return RLVR_FAIL(RLVR_ESANDBOX, "seccomp rule for clone3: %s", strerror(-r));
    }
    /* pushing characters into a terminal's input queue */
    const unsigned long bad_ioctls[] = {TIOCSTI, TIOCLINUX};
    for (size_t i = 0; i < 2; i++) {
        int r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                                 SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, bad_ioctls[i]));
        if (r < 0) return RLVR_FAIL(RLVR_ESANDBOX, "seccomp rule for ioctl: %s", strerror(-r));
    }
    RLVR_TRY(add_page_cache_rules(ctx));
    return add_socket_rules(ctx, inet);
}

/* The rules as a BPF program the kernel loads (*out, *len; caller frees). */
static int export_program(scmp_filter_ctx ctx, struct sock_filter **out, unsigned short *len) {
    int fd = memfd_create("rlvr-seccomp", MFD_CLOEXEC);
    if (fd < 0) return rlvr_error_errno_at(__FILE__, __LINE__, "memfd_create for the seccomp program");
    int rc = 0, r = seccomp_export_bpf(ctx, fd);
    if (r < 0) rc = RLVR_FAIL(RLVR_ESANDBOX, "seccomp_export_bpf: %s", strerror(-r));
    off_t size = rc == 0 ? lseek(fd, 0, SEEK_END) : 0;
    struct sock_filter *prog = NULL;
    if (rc == 0 &&
        (size <= 0 || size % (off_t)sizeof(struct sock_filter) != 0 || size / (off_t)sizeof(struct sock_filter) > 0xffff))
        rc = RLVR_FAIL(RLVR_ESANDBOX, "seccomp program has an unexpected size (%lld bytes)", (long long)size);
    if (rc == 0 && !(prog = malloc((size_t)size))) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    if (rc == 0 && pread(fd, prog, (size_t)size, 0) != (ssize_t)size)
        rc = rlvr_error_errno_at(__FILE__, __LINE__, "reading the seccomp program back");
    close(fd);
    if (rc < 0) {
        free(prog);
        return rc;
    }
    *out = prog;
    *len = (unsigned short)(size / (off_t)sizeof(struct sock_filter));
    return 0;
}

/* One program: with or without the inet families. */
static int build_program(bool inet, struct sock_filter **out, unsigned short *len) {
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx) return RLVR_FAIL(RLVR_ESANDBOX, "seccomp_init failed (is libseccomp usable on this kernel?)");
    int rc = add_rules(ctx, inet);
    if (rc == 0) rc = export_program(ctx, out, len);
    seccomp_release(ctx);
    return rc;
}

int rlvr_sandbox_build_seccomp(rlvr_sandbox_host *host) {
    RLVR_TRY(build_program(false, &host->filter, &host->filter_len));
    return build_program(true, &host->filter_inet, &host->filter_inet_len);
}

/* ---- probing ------------------------------------------------------------ */

static long read_sysctl(const char *path) {
    FILE *f = fopen(path, "re");
    if (!f) return -1;
    long v = -1;
    if (fscanf(f, "%ld", &v) != 1) v = -1;
    fclose(f);
    return v;
}

/* Is `id` inside one of the ranges of /proc/self/{uid,gid}_map? */
static bool id_mapped(const char *map, unsigned long id) {
    FILE *f = fopen(map, "re");
    if (!f) return false;
    unsigned long inner, outer, count;
    bool found = false;
    while (fscanf(f, "%lu %lu %lu", &inner, &outer, &count) == 3)
        if (id >= inner && id - inner < count) found = true;
    fclose(f);
    return found;
}

/* Explains why user namespaces cannot be created, naming the setting. */
static int refuse_userns(const rlvr_sandbox_host *host, const char *detail) {
    long max_ns = read_sysctl("/proc/sys/user/max_user_namespaces");
    long clone_ok = read_sysctl("/proc/sys/kernel/unprivileged_userns_clone");
    long apparmor = read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
    char why[512];
    if (max_ns == 0)
        snprintf(why, sizeof why,
                 "user namespaces are disabled: the kernel setting user.max_user_namespaces is 0 "
                 "(an administrator can enable them with `sysctl -w user.max_user_namespaces=15000`)");
    else if (!host->privileged && clone_ok == 0)
        snprintf(why, sizeof why,
                 "unprivileged user namespaces are disabled: the kernel setting "
                 "kernel.unprivileged_userns_clone is 0 (enable with `sysctl -w kernel.unprivileged_userns_clone=1`, "
                 "or run the verifier as root)");
    else if (!host->privileged && apparmor == 1)
        snprintf(why, sizeof why,
                 "AppArmor restricts unprivileged user namespaces: the kernel setting "
                 "kernel.apparmor_restrict_unprivileged_userns is 1 (set it to 0, or give rlvr an AppArmor "
                 "profile with `userns,`, or run the verifier as root)");
    else
        snprintf(why, sizeof why,
                 "the kernel refused to create user/mount/pid/network namespaces (it needs CONFIG_USER_NS, "
                 "CONFIG_PID_NS, CONFIG_NET_NS; user.max_user_namespaces is %ld)", max_ns);
    return RLVR_FAIL(RLVR_EUNSUPPORTED, "cannot build sandboxes on this machine: %s; %s", why, detail);
}

/* The places a sandbox mounts for itself (sandbox_mounts.c, each run's
 * /proc and /tmp): a system path there would be hidden or collide. */
static const char *sandbox_own_path(const char *p, size_t len) {
    static const char *const own[] = {"/", "/tmp", "/work", "/proc", "/dev", "/.rlvr"};
    for (size_t i = 0; i < sizeof own / sizeof *own; i++) {
        size_t k = strlen(own[i]);
        bool root = k == 1;
        if (root ? len == 1 : len >= k && strncmp(p, own[i], k) == 0 && (len == k || p[k] == '/')) return own[i];
    }
    return NULL;
}

static int split_paths(rlvr_sandbox_host *host, const char *list) {
    size_t n = 1;
    for (const char *p = list; *p; p++) n += *p == ':';
    host->system_paths = calloc(n, sizeof *host->system_paths);
    if (!host->system_paths) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    const char *p = list;
    while (*p) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > 0) {
            if (p[0] != '/') return RLVR_FAIL(RLVR_EINVAL, "sandbox system path \"%.*s\" is not absolute", (int)len, p);
            const char *mine = sandbox_own_path(p, len);
            if (mine)
                return RLVR_FAIL(RLVR_EINVAL,
                                 "sandbox system path \"%.*s\" lies in %s, which every sandbox mounts for itself; "
                                 "[sandbox] system_paths may name directories elsewhere",
                                 (int)len, p, mine);
            char *s = strndup(p, len);
            if (!s) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
            host->system_paths[host->n_system_paths++] = s;
        }
        p += len + (end ? 1 : 0);
        if (!end) break;
    }
    return 0;
}

/* The probe's function: inside the sandbox, check that we are who we should
 * be and that the host cannot be seen. */
static int probe_fn(void *arg) {
    (void)arg;
    if (getuid() != SB_INNER_UID) return 10;
    if (access("/work", R_OK | X_OK) != 0) return 11;
    return 0;
}

static int probe(rlvr_sandbox_host *host) {
    rlvr_snapshot *snap = NULL;
    int rc = rlvr_snapshot_new(&snap, host);
    if (rc == 0) {
        char path[4096];
        snprintf(path, sizeof path, "%s/probe", rlvr_snapshot_path(snap));
        rc = rlvr_fs_write_file(path, "probe\n", 6);
    }
    if (rc == 0) rc = rlvr_snapshot_seal(snap);
    rlvr_sandbox_options opt = {.version = RLVR_SANDBOX_OPTIONS_VERSION, .kind = RLVR_SANDBOX_ENCLAVE, .tree = snap};
    rlvr_sandbox_limits_default(&opt.limits);
    opt.limits.wall_s = 20;
    rlvr_sandbox *sb = NULL;
    char stage = 0;
    if (rc == 0 && host->overlay) {
        rc = rlvr_sandbox_new_internal(&sb, host, &opt, true, &stage);
        if (rc < 0 && stage == RLVR_SANDBOX_STAGE_OVERLAY) {
            rlvr_log_info("sandbox: overlayfs is not permitted here (%s); every sandbox copies its tree instead",
                          rlvr_error_last());
            host->overlay = false;
            rc = 0;
        }
    }
    if (rc == 0 && !sb) rc = rlvr_sandbox_new_internal(&sb, host, &opt, false, &stage);
    if (rc < 0 && stage == RLVR_SANDBOX_STAGE_UNSHARE) {
        char detail[1024];
        snprintf(detail, sizeof detail, "%s", rlvr_error_last());
        rc = refuse_userns(host, detail);
    }
    if (rc == 0) {
        rlvr_sandbox_result res;
        rc = rlvr_sandbox_call(sb, probe_fn, NULL, 0, 20, 4096, &res);
        if (rc == 0 && res.exit_code != 0)
            rc = RLVR_FAIL(RLVR_ESANDBOX, "the probe sandbox did not behave (check %d, signal %d, limit %s)",
                           res.exit_code, res.signal, rlvr_sandbox_limit_name(res.limit));
        if (rc == 0) rlvr_sandbox_result_free(&res);
    }
    rlvr_sandbox_free(sb);
    rlvr_snapshot_free(snap);
    return rc;
}

int rlvr_sandbox_host_new(rlvr_sandbox_host **out, const rlvr_sandbox_host_options *opt) {
    *out = NULL;
    rlvr_sandbox_host_options defaults = RLVR_SANDBOX_HOST_OPTIONS_INIT;
    if (!opt) opt = &defaults;
    if (opt->version != RLVR_SANDBOX_HOST_OPTIONS_VERSION)
        return RLVR_FAIL(RLVR_EINVAL, "rlvr_sandbox_host_options version %u (this build knows %u)", opt->version,
                         RLVR_SANDBOX_HOST_OPTIONS_VERSION);
    const char *base = opt->scratch_dir;
    if (!base || !base[0]) base = getenv("TMPDIR");
    if (!base || !base[0]) base = "/tmp";
    if (base[0] != '/' || strpbrk(base, ",:\\\n"))
        return RLVR_FAIL(RLVR_EINVAL,
                         "sandbox scratch directory \"%s\" must be an absolute path without ',', ':', '\\' "
                         "(overlayfs options cannot quote them)",
                         base);

    rlvr_sandbox_host *host = calloc(1, sizeof *host);
    if (!host) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    host->spawner = -1;
    host->spawner_sock = -1;
    pthread_mutex_init(&host->spawner_lock, NULL);
    pthread_mutex_init(&host->images_lock, NULL);
    host->overlay = opt->overlay;
    FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
    host->cap_last = 40;
    if (f) {
        if (fscanf(f, "%d", &host->cap_last) != 1) host->cap_last = 40;
        fclose(f);
    }
    uid_t euid = geteuid();
    gid_t egid = getegid();
    host->privileged = euid == 0 && id_mapped("/proc/self/uid_map", opt->root_uid) &&
                       id_mapped("/proc/self/gid_map", opt->root_gid) && opt->root_uid != 0;
    host->host_uid = host->privileged ? opt->root_uid : euid;
    host->host_gid = host->privileged ? opt->root_gid : egid;

    int abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    host->landlock = opt->landlock && abi >= 2; /* ABI 1 cannot allow renames between directories */
    if (opt->landlock && !host->landlock)
        rlvr_log_info("sandbox: Landlock ABI 2 is not available (kernel < 5.19 or lsm= without landlock); processes "
                      "of a run can write into each other's /proc/PID/mem");
    int rc = split_paths(host, opt->system_paths ? opt->system_paths : RLVR_SANDBOX_SYSTEM_PATHS);
    if (rc == 0) rc = rlvr_fs_mkdtemp(&host->scratch, base, "rlvr-sandbox-");
    if (rc == 0 && chmod(host->scratch, 0711) != 0)
        rc = rlvr_error_errno_at(__FILE__, __LINE__, "chmod %s", host->scratch);
    if (rc == 0) rc = rlvr_sandbox_build_seccomp(host);
    /* last, once the fields every sandbox process reads are set (the
     * probe's overlay verdict travels in each holder's plan) */
    if (rc == 0) rc = rlvr_spawner_start(host);
    if (rc == 0) rc = probe(host);
    if (rc < 0) {
        rlvr_sandbox_host_free(host);
        return rlvr_error_wrap(rc, "preparing sandboxes");
    }
    snprintf(host->describe, sizeof host->describe, "user namespaces as host uid %u (%s), %s, %s",
             (unsigned)host->host_uid, host->privileged ? "runtime is root" : "unprivileged",
             host->overlay ? "overlayfs snapshots" : "copied snapshots", host->landlock ? "landlock" : "no landlock");
    rlvr_log_debug("sandbox: %s", host->describe);
    *out = host;
    return 0;
}

void rlvr_sandbox_host_free(rlvr_sandbox_host *host) {
    if (!host) return;
    rlvr_sb_images_free(host);
    rlvr_spawner_stop(host);
    pthread_mutex_destroy(&host->spawner_lock);
    pthread_mutex_destroy(&host->images_lock);
    if (host->scratch) {
        rlvr_fs_remove_tree(host->scratch);
        free(host->scratch);
    }
    for (size_t i = 0; i < host->n_system_paths; i++) free(host->system_paths[i]);
    free(host->system_paths);
    free(host->filter);
    free(host->filter_inet);
    free(host);
}

bool rlvr_sandbox_host_overlay(const rlvr_sandbox_host *host) { return host->overlay; }
bool rlvr_sandbox_host_privileged(const rlvr_sandbox_host *host) { return host->privileged; }
bool rlvr_sandbox_host_landlock(const rlvr_sandbox_host *host) { return host->landlock; }
const char *rlvr_sandbox_host_describe(const rlvr_sandbox_host *host) { return host->describe; }
const char *rlvr_sandbox_host_scratch(const rlvr_sandbox_host *host) { return host->scratch; }
pid_t rlvr_sandbox_host_spawner(const rlvr_sandbox_host *host) { return host->spawner; }

/* ---- snapshots ---------------------------------------------------------- */

int rlvr_snapshot_new(rlvr_snapshot **out, rlvr_sandbox_host *host) {
    *out = NULL;
    rlvr_snapshot *s = calloc(1, sizeof *s);
    if (!s) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    s->host = host;
    int rc = rlvr_fs_mkdtemp(&s->path, host->scratch, "snap-");
    if (rc < 0) {
        free(s);
        return rc;
    }
    *out = s;
    return 0;
}

const char *rlvr_snapshot_path(const rlvr_snapshot *snap) { return snap->path; }

int rlvr_snapshot_seal(rlvr_snapshot *snap) {
    if (snap->sealed) return 0;
    /* the sandbox identity owns the tree so that commands may change their
     * copy-on-write view of it; the runtime (root) can still remove it */
    if (snap->host->privileged) RLVR_TRY(rlvr_fs_chown_tree(snap->path, snap->host->host_uid, snap->host->host_gid));
    if (chmod(snap->path, 0755) != 0) return rlvr_error_errno_at(__FILE__, __LINE__, "chmod %s", snap->path);
    snap->sealed = true;
    return 0;
}

void rlvr_snapshot_free(rlvr_snapshot *snap) {
    if (!snap) return;
    rlvr_fs_remove_tree(snap->path);
    free(snap->path);
    free(snap);
}
