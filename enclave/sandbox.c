/* enclave/sandbox.c — the runtime's side of a sandbox: making one (its
 * holder), resetting it, freeing it.
 *
 * The runtime never enters a sandbox. It asks the spawner for a holder
 * (sandbox_spawner.c), writes the holder's uid/gid maps when the holder says
 * UNSHARED (sandbox_ids.c), sends GO, and waits for READY; a reset is RESET
 * and READY again, and closing the command pipe ends the holder. Runs are in
 * sandbox_run.c; docs/ENCLAVE.md "Sandbox processes" has every process and
 * message. */
#include "enclave/fsutil.h"
#include "enclave/image.h"
#include "enclave/sandbox.h"
#include "enclave/sandbox_internal.h"

#include "core/error.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A pidfd turns readable at the exit, before the spawner has reaped the
 * child (a zombie still counts in /proc and in its user's process count,
 * which the next run's limit sees): until then kill(pid, 0) succeeds. A
 * blocking wait gives the reap a second. */
bool rlvr_sb_process_ended(pid_t pid, int pidfd, bool block) {
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

void rlvr_sb_reap_exiting(rlvr_sandbox *sb, bool block) {
    if (sb->exiting < 0) return;
    if (rlvr_sb_process_ended(sb->exiting_pid, sb->exiting, block)) {
        close(sb->exiting);
        sb->exiting = -1;
    }
}

void rlvr_sandbox_settle(rlvr_sandbox *sb) {
    if (sb) rlvr_sb_reap_exiting(sb, true);
}

bool rlvr_sb_path_is_simple(const char *p) {
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

static int options_check(const rlvr_sandbox_options *opt) {
    if (!opt || opt->version != RLVR_SANDBOX_OPTIONS_VERSION)
        return RLVR_FAIL(RLVR_EINVAL, "rlvr_sandbox_options missing or of another version");
    if (!opt->tree || !opt->tree->sealed) return RLVR_FAIL(RLVR_EINVAL, "sandbox tree missing or not sealed");
    RLVR_TRY(rlvr_sandbox_limits_check(&opt->limits));
    for (const char *const *r = opt->readonly; r && *r; r++)
        if (!rlvr_sb_path_is_simple(*r))
            return RLVR_FAIL(RLVR_EINVAL, "read-only path \"%s\" is not a plain relative path", *r);
    if (opt->private_dir && opt->private_dir[0] != '/')
        return RLVR_FAIL(RLVR_EINVAL, "private directory \"%s\" must be absolute", opt->private_dir);
    if (opt->judge_dir && opt->judge_dir[0] != '/')
        return RLVR_FAIL(RLVR_EINVAL, "judge directory \"%s\" must be absolute", opt->judge_dir);
    if (opt->network != RLVR_SANDBOX_NET_NONE && opt->network != RLVR_SANDBOX_NET_LOOPBACK)
        return RLVR_FAIL(RLVR_EINVAL, "sandbox network %d is neither none nor loopback", (int)opt->network);
    size_t env_bytes = 1, env_n = 0;
    for (const char *const *e = opt->env; e && *e; e++, env_n++) {
        const char *eq = strchr(*e, '=');
        if (!eq || eq == *e) return RLVR_FAIL(RLVR_EINVAL, "sandbox environment entry \"%s\" is not KEY=VALUE", *e);
        env_bytes += strlen(*e) + 1;
    }
    if (env_n > 32 || env_bytes > sizeof ((rlvr_sandbox *)0)->env)
        return RLVR_FAIL(RLVR_EINVAL, "sandbox environment: %zu entries of %zu bytes; at most 32 and %zu", env_n,
                         env_bytes, sizeof ((rlvr_sandbox *)0)->env);
    if (opt->workdir) {
        RLVR_TRY(rlvr_image_workdir_check(opt->workdir));
        if (strlen(opt->workdir) >= sizeof ((rlvr_sandbox *)0)->workdir)
            return RLVR_FAIL(RLVR_EINVAL, "working directory \"%s\" is too long", opt->workdir);
    }
    return 0;
}

/* The sandbox without its holder: its scratch directory and mount point. */
static int sandbox_alloc(rlvr_sandbox **out, rlvr_sandbox_host *host, const rlvr_sandbox_options *opt) {
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
    sb->network = opt->network;
    if (opt->workdir && strcmp(opt->workdir, "/work") != 0) snprintf(sb->workdir, sizeof sb->workdir, "%s", opt->workdir);
    size_t at = 0; /* fits: options_check measured it */
    for (const char *const *e = opt->env; e && *e; e++) {
        size_t n = strlen(*e) + 1;
        memcpy(sb->env + at, *e, n);
        at += n;
    }
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
    *out = sb;
    return 0;
}

/* The holder's answer on `fd`: 0 when it is `expected`, else the failure
 * (what the holder said, or `early` when it said nothing) with the stage
 * byte of an ERROR in *stage. */
static int holder_answer(int fd, char expected, const char *what, const char *early, char *stage) {
    char msg[600];
    int n = rlvr_sb_read_message(fd, msg, sizeof msg);
    if (n > 0 && msg[0] == expected) return 0;
    if (n > 1 && msg[0] == RLVR_SANDBOX_MSG_ERROR && stage) *stage = msg[1];
    return RLVR_FAIL(RLVR_ESANDBOX, "%s: %s", what, n > 2 && msg[0] == RLVR_SANDBOX_MSG_ERROR ? msg + 2 : early);
}

/* UNSHARED, the maps, GO, READY. */
static int holder_handshake(rlvr_sandbox *sb, int report, int go, char *stage) {
    RLVR_TRY(holder_answer(report, RLVR_SANDBOX_MSG_UNSHARED, "sandbox holder", "exited early", stage));
    RLVR_TRY(rlvr_sb_write_id_maps(sb->holder, sb->host));
    char byte = RLVR_SANDBOX_MSG_GO;
    if (rlvr_sb_write_all(go, &byte, 1) != 0)
        return rlvr_error_errno_at(__FILE__, __LINE__, "starting the sandbox holder");
    return holder_answer(report, RLVR_SANDBOX_MSG_READY, "building the sandbox", "holder exited early", stage);
}

/* Starts sb's holder for `plan` and waits until its root is built. */
static int holder_start(rlvr_sandbox *sb, const rlvr_sb_holder_plan *plan, char *stage) {
    int report[2] = {-1, -1}, go[2] = {-1, -1}, ctl[2] = {-1, -1};
    int rc = 0;
    if (pipe2(report, O_CLOEXEC) != 0 || pipe2(go, O_CLOEXEC) != 0 || pipe2(ctl, O_CLOEXEC) != 0) {
        rc = rlvr_error_errno_at(__FILE__, __LINE__, "pipe");
        goto cleanup;
    }
    int holder_fds[3] = {report[1], go[0], ctl[0]};
    pid_t pid;
    rc = rlvr_sb_spawn_holder(sb->host, plan, holder_fds, &pid, &sb->holder_pidfd);
    if (rc < 0) goto cleanup;
    sb->holder = pid;
    close(report[1]);
    close(go[0]);
    close(ctl[0]);
    report[1] = go[0] = ctl[0] = -1;
    sb->ctl_fd = ctl[1];
    ctl[1] = -1;
    rc = holder_handshake(sb, report[0], go[1], stage);
    if (rc < 0) goto cleanup;
    sb->answer_fd = report[0];
    report[0] = -1;

cleanup:
    for (int i = 0; i < 2; i++) {
        if (report[i] >= 0) close(report[i]);
        if (go[i] >= 0) close(go[i]);
        if (ctl[i] >= 0) close(ctl[i]);
    }
    return rc;
}

int rlvr_sandbox_new_internal(rlvr_sandbox **out, rlvr_sandbox_host *host, const rlvr_sandbox_options *opt,
                              bool overlay, char *stage) {
    *out = NULL;
    if (stage) *stage = 0;
    RLVR_TRY(options_check(opt));
    rlvr_sandbox *sb = NULL;
    RLVR_TRY(sandbox_alloc(&sb, host, opt));
    rlvr_sb_holder_plan plan = {
        .host = host,
        .dir = sb->dir,
        .lower = opt->tree->path,
        .overlay = overlay,
        .readonly = opt->readonly,
        .private_dir = opt->private_dir,
        .judge_dir = opt->judge_dir,
        .disk_bytes = opt->limits.disk_bytes,
        .hostname = opt->kind == RLVR_SANDBOX_WORKSPACE ? "workspace" : "enclave",
        .image_tree = -1,
        .workdir = sb->workdir[0] ? sb->workdir : NULL,
    };
    int rc = 0;
    if (opt->environment) {
        bool directory = false;
        rc = rlvr_sb_image_acquire(host, opt->environment, &plan.image_tree, &directory, NULL, 0);
        if (rc == 0 && directory) {
            /* the holder binds the path itself: a directory of the host's
             * mount table cannot be attached from a descriptor elsewhere */
            close(plan.image_tree);
            plan.image_tree = -1;
            plan.image_dir = opt->environment;
        }
    }
    if (rc == 0) rc = holder_start(sb, &plan, stage);
    if (plan.image_tree >= 0) close(plan.image_tree);
    if (rc < 0) {
        rlvr_sandbox_free(sb);
        return rc;
    }
    *out = sb;
    return 0;
}

int rlvr_sandbox_new(rlvr_sandbox **out, rlvr_sandbox_host *host, const rlvr_sandbox_options *opt) {
    return rlvr_sandbox_new_internal(out, host, opt, host->overlay, NULL);
}

void rlvr_sandbox_free(rlvr_sandbox *sb) {
    if (!sb) return;
    rlvr_sb_reap_exiting(sb, true);
    if (sb->ctl_fd >= 0) close(sb->ctl_fd);
    if (sb->answer_fd >= 0) close(sb->answer_fd);
    if (sb->holder_pidfd >= 0) {
        pidfd_send_signal(sb->holder_pidfd, SIGKILL, NULL, 0);
        rlvr_sb_process_ended(sb->holder, sb->holder_pidfd, true);
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
    char byte = RLVR_SANDBOX_MSG_RESET;
    if (rlvr_sb_write_all(sb->ctl_fd, &byte, 1) != 0)
        return rlvr_error_errno_at(__FILE__, __LINE__, "asking the sandbox to reset");
    struct pollfd p = {.fd = sb->answer_fd, .events = POLLIN};
    int r;
    while ((r = poll(&p, 1, 60 * 1000)) < 0 && errno == EINTR) {
    }
    char msg[600];
    int n = r > 0 ? rlvr_sb_read_message(sb->answer_fd, msg, sizeof msg) : 0;
    if (n == 1 && msg[0] == RLVR_SANDBOX_MSG_READY) return 0;
    /* the holder is unusable now: make sure it is gone */
    close(sb->ctl_fd);
    sb->ctl_fd = -1;
    pidfd_send_signal(sb->holder_pidfd, SIGKILL, NULL, 0);
    return RLVR_FAIL(RLVR_ESANDBOX, "resetting the sandbox: %s",
                     n > 2 && msg[0] == RLVR_SANDBOX_MSG_ERROR ? msg + 2
                     : r == 0                                 ? "no answer within 60 s"
                                                              : "the holder ended");
}
