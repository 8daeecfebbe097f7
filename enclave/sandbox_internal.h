/* enclave/sandbox_internal.h — what the files of the sandbox share: the host,
 * a sandbox, the plans the spawner hands its children, a run's report, and
 * the steps each process role calls in the others' files. Not part of the
 * module's contract. docs/ENCLAVE.md "Sandbox processes" says which process
 * runs which file. */
#ifndef RLVR_ENCLAVE_SANDBOX_INTERNAL_H
#define RLVR_ENCLAVE_SANDBOX_INTERNAL_H

#include "enclave/sandbox.h"
#include "enclave/sandbox_protocol.h"

#include <linux/filter.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

/* Inside every sandbox the processes run as this uid/gid; the user namespace
 * maps it to the host identity (the runtime's own uid, or root_uid when the
 * runtime is root). Nothing else is mapped. */
#define SB_INNER_UID 1000
#define SB_INNER_GID 1000

/* Where a judge program's descriptor sits in the command (until its exec). */
#define SB_JUDGE_FD 5

struct rlvr_sandbox_host {
    char *scratch;               /* private scratch directory (0711) */
    uid_t host_uid;              /* host identity of sandboxed processes */
    gid_t host_gid;
    bool privileged;             /* runtime is root and maps another uid */
    bool overlay;                /* overlayfs works here */
    bool landlock;               /* Landlock restricts writes (kernel 5.13+ with landlock enabled) */
    char **system_paths;         /* host paths bound read-only */
    size_t n_system_paths;
    struct sock_filter *filter;  /* seccomp program, built once: sockets of the inet families refused */
    unsigned short filter_len;
    struct sock_filter *filter_inet; /* the same with AF_INET and AF_INET6 (RLVR_SANDBOX_NET_LOOPBACK) */
    unsigned short filter_inet_len;
    int cap_last;                /* highest capability number of the kernel */
    char describe[256];
    /* the spawner: the small process every holder and supervisor is forked
     * from (sandbox_spawner.c); -1 while none runs */
    pid_t spawner;
    pid_t spawner_owner; /* the process that started it (a fork of the runtime starts its own) */
    int spawner_sock;
    pthread_mutex_t spawner_lock; /* one request at a time */
    /* environment images mounted for this host's sandboxes
     * (sandbox_image.c) */
    pthread_mutex_t images_lock;
    struct rlvr_sb_image *images;
    size_t image_mounts; /* image servers started (one per image per process) */
};

struct rlvr_snapshot {
    rlvr_sandbox_host *host;
    char *path;
    bool sealed;
};

/* A sandbox as the runtime holds it. The spawner gets a copy of it by value
 * with each run (its host pointer is valid there: the spawner was forked
 * after the host was made). */
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
    bool landlock; /* enclaves only: confine writes (sandbox_confine.c) */
    rlvr_sandbox_network network; /* which seccomp program its runs load */
    char workdir[256]; /* where commands find /work (the environment's working directory); "" for /work */
    char env[4096];    /* the sandbox's own "KEY=VALUE" entries, each NUL-terminated, an empty one last */
    /* the supervisor of the last finished run when it was still exiting
     * (tearing down its namespaces) as the run was finished: reaped before
     * the next run starts, so it never counts against that run's limits
     * (its pidfd; -1 when none) */
    int exiting;
    pid_t exiting_pid;
};

/* What a holder builds: its sandbox's root and /work. */
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
    /* the environment: a root tree replacing the system paths, as a
     * detached mount (image_tree >= 0, image_dir NULL) or a host
     * directory (image_dir); neither: the host's system paths */
    int image_tree;
    const char *image_dir;
    const char *workdir; /* NULL: /work only */
} rlvr_sb_holder_plan;

/* What an image server mounts (sandbox_image.c). */
typedef struct {
    const char *path;       /* the SquashFS or SIF file */
    const char *mountpoint; /* an empty directory in the host's scratch */
    uint64_t offset, size;  /* the SquashFS region of the file */
    bool privileged;        /* the runtime is root: try the kernel's squashfs first */
} rlvr_sb_image_plan;

typedef struct rlvr_sb_image rlvr_sb_image;

/* What one run does: a command (exec mode) or the runtime's function (call
 * mode), in sandbox `sb`. */
typedef struct {
    const rlvr_sandbox *sb;
    const rlvr_sandbox_cmd *cmd; /* exec mode */
    rlvr_sandbox_fn fn;          /* call mode */
    const void *arg;             /* arg_len bytes: the run gets a copy */
    size_t arg_len;
    double wall_s;
} rlvr_sb_run_plan;

/* What init tells the supervisor and the supervisor tells the runtime:
 * fixed size, one write. */
typedef struct {
    int32_t started;   /* the main process was started */
    int32_t finished;  /* init reaped the main process and wrote this */
    int32_t status;    /* wait status of the main process */
    int32_t limit;     /* rlvr_sandbox_limit */
    int32_t max_procs;
    int32_t prepare_status;
    int64_t max_rss;
    double cpu_s;
    char error[256];   /* infrastructure failure inside the sandbox */
} rlvr_sb_run_report;

/* ---- sandbox_host.c ------------------------------------------------------- */

/* Builds the seccomp programs into host->filter and host->filter_inet. */
int rlvr_sandbox_build_seccomp(rlvr_sandbox_host *host);

/* ---- sandbox.c: the runtime's side of a sandbox --------------------------- */

/* Creates a sandbox; when `stage` is not NULL it receives the stage byte
 * (RLVR_SANDBOX_STAGE_*) of a failure inside the holder (0 when the failure
 * was not inside it). */
int rlvr_sandbox_new_internal(rlvr_sandbox **out, rlvr_sandbox_host *host, const rlvr_sandbox_options *opt,
                              bool overlay, char *stage);

/* Whether the spawner's child `pid` (its `pidfd`) has ended and been reaped,
 * waiting for it when `block`. */
bool rlvr_sb_process_ended(pid_t pid, int pidfd, bool block);

/* Waits for the last run's supervisor to end, when `block`; else notes it
 * when it has. */
void rlvr_sb_reap_exiting(rlvr_sandbox *sb, bool block);

/* Whether `p` is a relative path without empty, "." or ".." components or
 * control characters. */
bool rlvr_sb_path_is_simple(const char *p);

/* ---- sandbox_image.c: environment images ------------------------------------ */

/* The image at `path` for one sandbox: mounted on the host's first use,
 * then a fresh detached tree of it in *tree (for a directory image, an
 * O_PATH descriptor of it, and *directory set); the way it was mounted in
 * `how` (NULL: not wanted). */
int rlvr_sb_image_acquire(rlvr_sandbox_host *host, const char *path, int *tree, bool *directory, char *how,
                          size_t cap);

/* Ends every image server of the host (its sandboxes must be gone). */
void rlvr_sb_images_free(rlvr_sandbox_host *host);

/* ---- sandbox_spawner.c ------------------------------------------------------ */

/* Starts the host's spawner. Called once the host's fields are final: the
 * spawner and everything it forks see the host as it was then. */
int rlvr_spawner_start(rlvr_sandbox_host *host);

/* Ends the spawner, if one runs. */
void rlvr_spawner_stop(rlvr_sandbox_host *host);

/* Has the spawner fork a holder for plan `p`; fds: its report, go and
 * command pipes (sandbox_holder.c). */
int rlvr_sb_spawn_holder(rlvr_sandbox_host *host, const rlvr_sb_holder_plan *p, const int *fds, pid_t *pid,
                         int *pidfd);

/* Has the spawner fork an image server for `p`; `sock` its end of the
 * socket (sandbox_image.c). */
int rlvr_sb_spawn_image(rlvr_sandbox_host *host, const rlvr_sb_image_plan *p, int sock, pid_t *pid, int *pidfd);

/* Has the spawner fork a supervisor for `plan`; fds: output, results (-1
 * allowed), status and stop pipes (sandbox_supervisor.c). */
int rlvr_sb_spawn_supervisor(const rlvr_sb_run_plan *plan, const int *fds, pid_t *pid, int *pidfd);

/* ---- the process roles: each never returns ----------------------------------- */

/* sandbox_image.c. fds: the socket to the runtime. */
void rlvr_sb_image_main(const rlvr_sb_image_plan *plan, int *fds) __attribute__((noreturn));

/* sandbox_holder.c. fds: report, go, command pipes, the image's tree (-1: none). */
void rlvr_sb_holder_main(pid_t parent, int *fds, const rlvr_sb_holder_plan *plan) __attribute__((noreturn));

/* sandbox_supervisor.c. fds: output, results (-1 allowed), status, stop. */
void rlvr_sb_supervisor_main(pid_t parent, const rlvr_sb_run_plan *plan, int *fds) __attribute__((noreturn));

/* sandbox_init.c. */
void rlvr_sb_init_main(const rlvr_sb_run_plan *plan, int out, int results, int report_fd, int life)
    __attribute__((noreturn));

/* sandbox_prepare.c: the command's prepare step; `err` is its setup error
 * pipe, closed once the setup worked. */
void rlvr_sb_prepare_main(const rlvr_sb_run_plan *plan, int out, int err) __attribute__((noreturn));

/* sandbox_command.c: the command, exec mode. */
void rlvr_sb_command_main(const rlvr_sb_run_plan *plan, int out, int results, int err, int judge)
    __attribute__((noreturn));

/* sandbox_command.c: the command's arguments when spawned with
 * CLONE_VM | CLONE_VFORK, and its entry then. */
typedef struct {
    const rlvr_sb_run_plan *plan;
    int out, results, err, judge;
} rlvr_sb_command_args;
int rlvr_sb_command_entry(void *args);

/* sandbox_command.c: the runtime's function, call mode. */
void rlvr_sb_call_main(const rlvr_sb_run_plan *plan, int out, int err) __attribute__((noreturn));

/* sandbox_command.c: runs runtime code (the call, or the prepare step) in a
 * process that is already confined: closes `err` (the setup worked), then
 * exits with fn(arg)'s value. */
void rlvr_sb_run_runtime_code(int err, int (*fn)(void *), void *arg) __attribute__((noreturn));

/* ---- sandbox_child.c: what the sandbox's processes share ---------------------- */

/* Sends ERROR with `stage` and the message (and errno's text) on `fd`, then
 * exits with RLVR_SANDBOX_EXIT_FAILED. */
void rlvr_sb_fail(int fd, char stage, const char *fmt, ...) __attribute__((format(printf, 3, 4), noreturn));

/* Writes a run report naming the failure (and errno's text) on `fd`, then
 * exits with RLVR_SANDBOX_EXIT_REPORTED. */
void rlvr_sb_report_error(int fd, rlvr_sb_run_report *r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));

/* snprintf for paths inside children: a path that does not fit fails the
 * child (rlvr_sb_fail on err_fd) instead of being silently cut. */
void rlvr_sb_path(int err_fd, char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Moves the descriptors in fds[0..n) to 3..3+n-1 (in order; -1 entries keep
 * their slot closed), points 0..2 at /dev/null and closes everything else. */
int rlvr_sb_keep_fds(int *fds, int n);

/* write() until all of it is written; -1 with errno on error. */
int rlvr_sb_write_all(int fd, const void *data, size_t len);

/* One read of a message into buf (NUL-terminated); its length, -1 on error. */
int rlvr_sb_read_message(int fd, char *buf, size_t cap);

/* ---- sandbox_ids.c: user-namespace identity -------------------------------------- */

/* Writes `text` to the existing file `path` (a /proc map); -1 with errno. */
int rlvr_sb_write_text(const char *path, const char *text);

/* Writes the uid/gid maps of the holder `pid` (from the runtime). */
int rlvr_sb_write_id_maps(pid_t pid, const rlvr_sandbox_host *host);

/* Switches to the sandbox identity where the runtime is root; -1 with errno
 * when it could not. */
int rlvr_sb_become_inner(const rlvr_sandbox_host *host);

/* ---- sandbox_mounts.c: the holder's file system ---------------------------------- */

/* Builds the sandbox's root at `root` (not yet pivoted into), all but /work. */
void rlvr_sb_mount_root(int err_fd, const char *root, const rlvr_sb_holder_plan *p);

/* Mounts /work (after the pivot) over the snapshot, as a reset does. */
void rlvr_sb_mount_work(int err_fd, const rlvr_sb_holder_plan *p);

/* Restores /work (after the pivot) to the snapshot. */
void rlvr_sb_remount_work(int err_fd, const rlvr_sb_holder_plan *p);

/* Makes `root` the root directory and the old root unreachable. */
void rlvr_sb_pivot_root(int err_fd, const char *root);

/* ---- sandbox_confine.c: confining a process of a run ------------------------------- */

/* What every process inside a run does before the runtime's code or the
 * command runs; returns the new number of `err` (4). `exec`: the command
 * (stderr to `out`, the results and judge descriptors kept). */
int rlvr_sb_confine(const rlvr_sb_run_plan *plan, bool exec, int out, int results, int err, int judge);

/* setrlimit, failing the child (rlvr_sb_fail on err_fd) when it cannot. */
void rlvr_sb_set_limit(int err_fd, int resource, rlim_t soft, rlim_t hard, const char *name);

/* ---- sandbox_usage.c: measuring a run from its init -------------------------------- */

typedef struct {
    int procs;
    double cpu_s;     /* live processes, including their reaped children */
    int64_t rss;      /* bytes, live processes together */
    int64_t rss_max;  /* bytes, the largest one */
} rlvr_sb_sample;

/* Reads every process of the run but init from /proc. */
void rlvr_sb_sample_run(rlvr_sb_sample *s, long ticks_per_s, long page);

/* The run's processes other than init, counted without reading them. */
int rlvr_sb_count_processes(void);

/* CPU seconds (user + system) of a rusage. */
double rlvr_sb_rusage_cpu(const struct rusage *ru);

/* Whether the file system at `path` is nearly full (bytes or inodes). */
bool rlvr_sb_nearly_full(const char *path);

#endif
