/* enclave/sandbox_confine.c — confining a process of a run before its code
 * runs.
 *
 * The namespaces keep a run away from the host; this keeps each process
 * inside them small: its own session, only its own descriptors, rlimits
 * (the kernel's per-process backstops under the init's run-wide limits),
 * default signals, no capabilities, locked securebits, no_new_privs,
 * Landlock in enclaves, and the host's seccomp filter last. The prepare
 * step and the command (both modes) go through it. Only system calls and
 * stack buffers: the command runs it in a vfork-style child. */
#include "enclave/sandbox_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <linux/securebits.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

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
    if (rs < 0) rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "landlock_create_ruleset");
    static const char *const writable[] = {"/work", "/tmp", "/dev"};
    for (size_t i = 0; i < sizeof writable / sizeof *writable; i++) {
        int fd = open(writable[i], O_PATH | O_CLOEXEC);
        if (fd < 0) rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "open %s for landlock", writable[i]);
        struct landlock_path_beneath_attr pb = {.allowed_access = i < 2 ? rw : LANDLOCK_ACCESS_FS_WRITE_FILE,
                                                .parent_fd = fd};
        if (syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) != 0)
            rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "landlock_add_rule %s", writable[i]);
        close(fd);
    }
    if (syscall(SYS_landlock_restrict_self, rs, 0) != 0)
        rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "landlock_restrict_self");
    close(rs);
}

/* Every capability gone for good (bounding set, ambient, securebits locked,
 * the sets cleared), no_new_privs, Landlock in enclaves, then seccomp. */
static void drop_privileges(int err_fd, const rlvr_sandbox *sb) {
    const rlvr_sandbox_host *host = sb->host;
    for (int cap = 0; cap <= host->cap_last; cap++)
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL)
            rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "dropping capability %d from the bounding set", cap);
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                                     SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                                     SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
              0, 0, 0) != 0)
        rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "setting securebits");
    struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    if (syscall(SYS_capset, &hdr, data) != 0) rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "clearing capabilities");
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "no_new_privs");
    if (sb->landlock) restrict_writes(err_fd);
    bool inet = sb->network == RLVR_SANDBOX_NET_LOOPBACK;
    struct sock_fprog prog = {.len = inet ? host->filter_inet_len : host->filter_len,
                              .filter = inet ? host->filter_inet : host->filter};
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0)
        rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "loading the seccomp filter");
}

void rlvr_sb_set_limit(int err_fd, int resource, rlim_t soft, rlim_t hard, const char *name) {
    struct rlimit rl = {soft, hard};
    if (setrlimit(resource, &rl) != 0) rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "setrlimit %s", name);
}

/* RLIMIT_NPROC of a run. The process limit itself is init's: it kills the
 * run when a sample sees `processes` of them. The kernel's cap is a backstop
 * above it that bounds a fork bomb between samples; it needs headroom, for
 * at exactly the limit (the user namespace's count includes the holder, the
 * supervisor and init: 3 more) a bomb whose forks fail collapses within
 * milliseconds and the 10 ms sampler saw it at the limit in only 28 of 40
 * runs (dash, `b() { b & b & wait; }; b`, 24 processes). */
static int64_t nproc_backstop(int32_t processes) { return 2 * (int64_t)processes + 3; }

/* Descriptors 0..2 (stdin from /dev/null; stdout to `out`; stderr to `out`
 * for a command, else /dev/null), 3 for results and 5 for a judge program
 * (commands only), `err` moved to 4, nothing else open. Returns err's new
 * number. */
static int confine_fds(bool exec, int out, int results, int err, int judge) {
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0) rlvr_sb_fail(err, RLVR_SANDBOX_STAGE_OTHER, "open /dev/null");
    int hi_out = fcntl(out, F_DUPFD_CLOEXEC, 64);
    int hi_res = results >= 0 && exec ? fcntl(results, F_DUPFD_CLOEXEC, 64) : -1;
    int hi_err = fcntl(err, F_DUPFD_CLOEXEC, 64);
    int hi_null = fcntl(null, F_DUPFD_CLOEXEC, 64);
    int hi_judge = judge >= 0 && exec ? fcntl(judge, F_DUPFD_CLOEXEC, 64) : -1;
    if (judge >= 0 && exec && hi_judge < 0) rlvr_sb_fail(err, RLVR_SANDBOX_STAGE_OTHER, "dup");
    if (hi_out < 0 || hi_err < 0 || hi_null < 0 || (results >= 0 && exec && hi_res < 0))
        rlvr_sb_fail(err, RLVR_SANDBOX_STAGE_OTHER, "dup");
    if (dup2(hi_null, 0) < 0 || dup2(hi_out, 1) < 0 || dup2(exec ? hi_out : hi_null, 2) < 0)
        rlvr_sb_fail(hi_err, RLVR_SANDBOX_STAGE_OTHER, "dup2");
    if (hi_res >= 0 && dup2(hi_res, RLVR_SANDBOX_RESULTS_FD) < 0) rlvr_sb_fail(hi_err, RLVR_SANDBOX_STAGE_OTHER, "dup2");
    if (hi_res < 0) close(RLVR_SANDBOX_RESULTS_FD);
    err = dup3(hi_err, 4, O_CLOEXEC);
    if (err < 0) rlvr_sb_fail(hi_err, RLVR_SANDBOX_STAGE_OTHER, "dup3");
    if (hi_judge >= 0 && dup3(hi_judge, SB_JUDGE_FD, O_CLOEXEC) < 0) rlvr_sb_fail(err, RLVR_SANDBOX_STAGE_OTHER, "dup3");
    close_range(hi_judge >= 0 ? SB_JUDGE_FD + 1 : SB_JUDGE_FD, ~0U, 0);
    return err;
}

static void confine_cwd(int err, const rlvr_sb_run_plan *plan) {
    char cwd[PATH_MAX];
    const char *rel = plan->cmd && plan->cmd->cwd ? plan->cmd->cwd : "";
    /* commands start in the environment's working directory (the same
     * tree as /work); the runtime's own calls always in /work */
    const char *top = plan->cmd && plan->sb->workdir[0] ? plan->sb->workdir : "/work";
    rlvr_sb_path(err, cwd, sizeof cwd, "%s/%s", top, rel);
    if (chdir(cwd) != 0) rlvr_sb_fail(err, RLVR_SANDBOX_STAGE_OTHER, "chdir %s", cwd);
}

/* Every rlimit but the address space (the command sets that last), and the
 * first place in line for the OOM killer. */
static void confine_rlimits(int err, const rlvr_sandbox_limits *l) {
    rlim_t cpu = (rlim_t)(l->cpu_s + 0.999);
    rlvr_sb_set_limit(err, RLIMIT_CPU, cpu, cpu + 1, "cpu");
    rlim_t nproc = (rlim_t)nproc_backstop(l->processes);
    rlvr_sb_set_limit(err, RLIMIT_NPROC, nproc, nproc, "nproc");
    rlvr_sb_set_limit(err, RLIMIT_FSIZE, (rlim_t)l->file_bytes, (rlim_t)l->file_bytes, "fsize");
    rlvr_sb_set_limit(err, RLIMIT_NOFILE, (rlim_t)l->open_files, (rlim_t)l->open_files, "nofile");
    rlvr_sb_set_limit(err, RLIMIT_CORE, 0, 0, "core");
    int adj = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (adj >= 0) {
        if (rlvr_sb_write_all(adj, "1000", 4) != 0) {
        }
        close(adj);
    }
}

/* The runtime may ignore signals (SIGPIPE under MPI); the run's code starts
 * clean. */
static void reset_signals(void) {
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP) signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

int rlvr_sb_confine(const rlvr_sb_run_plan *plan, bool exec, int out, int results, int err, int judge) {
    setsid();
    err = confine_fds(exec, out, results, err, judge);
    confine_cwd(err, plan);
    confine_rlimits(err, &plan->sb->limits);
    reset_signals();
    drop_privileges(err, plan->sb);
    return err;
}
