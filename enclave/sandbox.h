/* enclave/sandbox.h — Linux sandboxes for policy workspaces and verification
 * enclaves (docs/ENCLAVE.md).
 *
 * Three objects:
 * - rlvr_sandbox_host: what this machine allows, probed once (user
 *   namespaces, overlayfs), the seccomp filter, a private scratch directory,
 *   and the spawner: a small process, forked once, that every sandbox
 *   process is forked from (a fork copies the parent's page tables, and the
 *   runtime's grow with the model, the pool and the rollouts). Refuses with
 *   a message naming the missing kernel setting when sandboxes are
 *   impossible.
 * - rlvr_snapshot: a pristine tree owned by the runtime. It is never written
 *   through a sandbox: every sandbox sees it as the lower layer of an overlay
 *   (or, where overlay is not permitted, as a private copy).
 * - rlvr_sandbox: one isolated root built from read-only binds of the system
 *   (/usr, the /etc pieces programs need, a few /dev nodes) plus the snapshot
 *   at /work with a fresh copy-on-write layer; its own user, mount, network
 *   (loopback only; sockets of the inet families only where the sandbox asks
 *   for them), IPC, UTS and cgroup namespaces. Commands run in it one at
 *   a time; each run gets a fresh PID namespace (its init is the runtime's
 *   code; when the run ends every process of the run is killed), fresh IPC
 *   and mount namespaces, a fresh /tmp (tmpfs, size-capped) and /proc, all
 *   capabilities dropped, in verification enclaves file writes confined to
 *   /work, /tmp and /dev (Landlock: no writing into another process's
 *   /proc/PID/mem),
 *   no_new_privs and a seccomp filter. Files written to /work persist between
 *   runs of the same sandbox and vanish with it.
 *
 * Limits (rlvr_sandbox_limits) apply to every run; hitting one ends the run
 * (or marks it) and names the limit in rlvr_sandbox_result.limit.
 *
 * Threads: a host may be shared by threads; one sandbox is used by one thread
 * at a time. Library calls never print or exit; only the forked children do. */
#ifndef RLVR_ENCLAVE_SANDBOX_H
#define RLVR_ENCLAVE_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct rlvr_sandbox_host rlvr_sandbox_host;
typedef struct rlvr_snapshot rlvr_snapshot;
typedef struct rlvr_sandbox rlvr_sandbox;

/* ---- host ---------------------------------------------------------------- */

typedef struct {
    unsigned version;
    const char *scratch_dir; /* parent of the host's private scratch directory; NULL: $TMPDIR or /tmp */
    uid_t root_uid;          /* host uid sandboxes run as when the runtime is root (default 65534) */
    gid_t root_gid;          /* host gid likewise */
    bool overlay;            /* copy-on-write overlay when permitted (default); false forces copies */
    const char *system_paths;/* ':'-separated host paths bound read-only; NULL: RLVR_SANDBOX_SYSTEM_PATHS */
    bool landlock;           /* confine writes in verification enclaves when the kernel can (default) */
} rlvr_sandbox_host_options;

#define RLVR_SANDBOX_HOST_OPTIONS_VERSION 1
#define RLVR_SANDBOX_HOST_OPTIONS_INIT {RLVR_SANDBOX_HOST_OPTIONS_VERSION, NULL, 65534, 65534, true, NULL, true}

#define RLVR_SANDBOX_SYSTEM_PATHS                                                                          \
    "/usr:/bin:/sbin:/lib:/lib32:/lib64:/libx32:/etc/alternatives:/etc/ld.so.cache:/etc/ld.so.conf:" \
    "/etc/ld.so.conf.d:/etc/localtime"

/* Probes the machine. Fails with RLVR_EUNSUPPORTED and a message naming the
 * kernel setting (user.max_user_namespaces, kernel.unprivileged_userns_clone,
 * kernel.apparmor_restrict_unprivileged_userns) when no sandbox can be made. */
int rlvr_sandbox_host_new(rlvr_sandbox_host **out, const rlvr_sandbox_host_options *opt);
/* Removes the scratch directory (sandboxes and snapshots must be freed first). */
void rlvr_sandbox_host_free(rlvr_sandbox_host *host);

/* True when sandboxes get an overlay; false when they copy the snapshot. */
bool rlvr_sandbox_host_overlay(const rlvr_sandbox_host *host);
/* True when the runtime is root and sandboxes run as root_uid. */
bool rlvr_sandbox_host_privileged(const rlvr_sandbox_host *host);
/* True when Landlock confines writes in enclaves to /work, /tmp and /dev. */
bool rlvr_sandbox_host_landlock(const rlvr_sandbox_host *host);
/* Mounts the environment image at `path` for this host's sandboxes, once
 * per host process (later calls and sandboxes share the mount), and checks
 * its root: /bin/sh, and `workdir` (NULL: none) a directory there or a new
 * name under its root. `how` (cap bytes; NULL: not wanted) receives the way
 * it was mounted: "kernel squashfs" (root: a read-only loop device),
 * "squashfuse" (a user namespace of its own; unprivileged), "directory".
 * Errors name the file and, when no mount worked, what each way met. */
int rlvr_sandbox_host_image(rlvr_sandbox_host *host, const char *path, const char *workdir, char *how, size_t cap);
/* How many images this host process has mounted (directories not counted). */
size_t rlvr_sandbox_host_image_mounts(const rlvr_sandbox_host *host);
/* One line for logs and bench output: "user namespaces, uid 65534, overlay". */
const char *rlvr_sandbox_host_describe(const rlvr_sandbox_host *host);
/* The host's scratch directory (snapshots and sandbox mount points live here). */
const char *rlvr_sandbox_host_scratch(const rlvr_sandbox_host *host);
/* The spawner's pid (the runtime's one child for all its sandboxes: holders
 * and supervisors are the spawner's children); -1 when none runs. */
pid_t rlvr_sandbox_host_spawner(const rlvr_sandbox_host *host);

/* ---- snapshots ----------------------------------------------------------- */

/* An empty directory to fill (rlvr_snapshot_path), then rlvr_snapshot_seal. */
int rlvr_snapshot_new(rlvr_snapshot **out, rlvr_sandbox_host *host);
const char *rlvr_snapshot_path(const rlvr_snapshot *snap);
/* Hands the tree to the sandbox identity (ownership, permissions). After
 * this the tree must not change; sandboxes may be made from it. */
int rlvr_snapshot_seal(rlvr_snapshot *snap);
/* Removes the tree. */
void rlvr_snapshot_free(rlvr_snapshot *snap);

/* ---- sandboxes ----------------------------------------------------------- */

typedef struct {
    double wall_s;        /* wall time of one run; the whole process tree is killed */
    double cpu_s;         /* CPU time of one run, all its processes together */
    int64_t memory_bytes; /* address space of each process, and resident memory of the run */
    int32_t processes;    /* processes of one run at once */
    int64_t file_bytes;   /* largest file a process may write */
    int32_t open_files;   /* open descriptors per process */
    int64_t output_bytes; /* stdout + stderr kept; more ends the run */
    int64_t tmp_bytes;    /* size of the private /tmp */
    int64_t disk_bytes;   /* room for writes into /work (the copy-on-write layer) */
} rlvr_sandbox_limits;

/* Defaults: the [sandbox] table's (enclave/config.c; docs/CONFIG.md lists
 * them: 60 s wall and CPU, 1 GiB memory, 64 processes, ...). */
void rlvr_sandbox_limits_default(rlvr_sandbox_limits *limits);
/* RLVR_EINVAL with the field name when a limit is not positive. */
int rlvr_sandbox_limits_check(const rlvr_sandbox_limits *limits);

typedef enum {
    RLVR_SANDBOX_WORKSPACE = 0, /* the policy's workspace: repo + public tests, some paths read-only */
    RLVR_SANDBOX_ENCLAVE = 1,   /* the verification enclave: pristine repo + hidden tests */
} rlvr_sandbox_kind;

/* What a sandbox's runs may do with the network. Either way it is a
 * network namespace of its own holding only loopback, made fresh for every
 * verification (rlvr_sandbox_reset). */
typedef enum {
    RLVR_SANDBOX_NET_NONE = 0,     /* sockets of the inet families refused (EAFNOSUPPORT): AF_UNIX and
                                      AF_NETLINK only */
    RLVR_SANDBOX_NET_LOOPBACK = 1, /* AF_INET and AF_INET6 too, on loopback (a task's servers) */
} rlvr_sandbox_network;

typedef struct {
    unsigned version;
    rlvr_sandbox_kind kind;
    const rlvr_snapshot *tree;   /* sealed; mounted at /work, copy-on-write */
    const char *const *readonly; /* NULL-terminated paths under /work kept read-only (tests, build files) */
    const char *private_dir;     /* host directory bound read-only at /.rlvr/private, visible only to
                                    rlvr_sandbox_call (the runtime's own code), never to commands */
    rlvr_sandbox_limits limits;
    const char *judge_dir;       /* host directory of judge programs (enclaves; NULL: none), bound
                                    read-only at /.rlvr/judge and hidden from every process of every
                                    run: a command with `judge` set is exec'd from a descriptor opened
                                    before the directory is hidden, and nothing it starts can reach
                                    the program again (RLVR_SANDBOX_JUDGE_DIR) */
    rlvr_sandbox_network network; /* RLVR_SANDBOX_NET_NONE unless the task asks for loopback */
    const char *environment;     /* the root tree commands run in instead of the system paths: a
                                    directory, SquashFS or SIF image (enclave/image.h), mounted once
                                    per host process and shared (rlvr_sandbox_host_image); NULL: the
                                    host's system paths */
    const char *workdir;         /* absolute path where commands find /work and start (the same
                                    tree, bound there too); NULL: /work */
    const char *const *env;      /* NULL-terminated "KEY=VALUE" added to every command's environment
                                    (replacing a base entry of the same name; a command's own entries
                                    replace these), at most 32 entries and 4 KiB in all; NULL: none */
} rlvr_sandbox_options;

#define RLVR_SANDBOX_OPTIONS_VERSION 4

/* Where judge_dir appears inside the sandbox (to runs it is an empty
 * directory). */
#define RLVR_SANDBOX_JUDGE_DIR "/.rlvr/judge"

int rlvr_sandbox_new(rlvr_sandbox **out, rlvr_sandbox_host *host, const rlvr_sandbox_options *opt);
/* Pooled snapshot-restore: gives /work a fresh copy-on-write layer over the
 * snapshot (everything any run wrote is gone) and the sandbox a fresh
 * network and UTS namespace (every socket, address and counter the earlier
 * runs left is gone), keeping the user and mount namespaces. With each run's
 * fresh PID, IPC, mount and cgroup namespace, /tmp and /proc, no run can
 * tell the sandbox from a new one (the mount table included), for a few
 * mount calls and a network namespace instead of a new sandbox. */
int rlvr_sandbox_reset(rlvr_sandbox *sb);

/* Kills whatever still runs, releases the namespaces and the scratch space. */
void rlvr_sandbox_free(rlvr_sandbox *sb);
/* A run is over (and its result returned) as soon as its supervisor has
 * reported, which it does after every process of the run is gone; the
 * supervisor then still tears down the run's namespaces, off the caller's
 * critical path, and is reaped before the sandbox's next run starts (so it
 * never counts against that run's process limit) or when the sandbox is
 * freed. This waits for it now: afterwards the sandbox's holder is the
 * caller's only child process belonging to the sandbox. */
void rlvr_sandbox_settle(rlvr_sandbox *sb);
const rlvr_sandbox_limits *rlvr_sandbox_get_limits(const rlvr_sandbox *sb);

/* Which limit ended (or marked) a run. */
typedef enum {
    RLVR_LIMIT_NONE = 0,
    RLVR_LIMIT_WALL,      /* wall time: the run was killed */
    RLVR_LIMIT_CPU,       /* CPU time (run total or one process) */
    RLVR_LIMIT_MEMORY,    /* resident memory of the run, or a process at its address-space cap */
    RLVR_LIMIT_PROCESSES, /* the run reached its process count */
    RLVR_LIMIT_FILE_SIZE, /* a process was killed for writing past the file-size limit */
    RLVR_LIMIT_DISK,      /* /work or /tmp full */
    RLVR_LIMIT_OUTPUT,    /* captured output cap: the run was killed */
} rlvr_sandbox_limit;

const char *rlvr_sandbox_limit_name(rlvr_sandbox_limit limit);

/* The fd a command may write structured results (TAP) to; also in the
 * environment as RLVR_RESULTS_FD. Readers live outside the sandbox. */
#define RLVR_SANDBOX_RESULTS_FD 3

typedef struct {
    int exit_code;            /* 0..255 when the main process exited, -1 when a signal ended it */
    int signal;               /* that signal, 0 if none */
    rlvr_sandbox_limit limit; /* RLVR_LIMIT_NONE when no limit was hit */
    double wall_s;            /* whole run, as the runtime saw it */
    double cpu_s;             /* all processes of the run */
    int64_t max_rss_bytes;    /* largest resident size of the run's processes together (sampled every
                                 10 ms), at least the largest peak of one reaped process (the kernel's) */
    int32_t max_processes;    /* most processes seen at once */
    char *out;                /* stdout and stderr interleaved, NUL-terminated, at most the cap */
    size_t out_len;
    bool out_truncated;       /* more output was produced than kept */
    char *results;            /* what the run wrote to RLVR_SANDBOX_RESULTS_FD, NUL-terminated */
    size_t results_len;
    int prepare_status;       /* what cmd->prepare returned (0: ran the command, or no prepare) */
} rlvr_sandbox_result;

typedef struct {
    unsigned version;
    const char *const *argv;  /* NULL-terminated; argv[0] absolute or found in /usr/local/bin:/usr/bin:/bin */
    const char *const *env;   /* NULL-terminated "KEY=VALUE" added to the minimal environment, or NULL */
    const char *cwd;          /* relative to /work; NULL for /work */
    double wall_s;            /* 0: the sandbox's limit; never more than it */
    int64_t output_bytes;     /* 0: the sandbox's limit; never more than it */
    bool results_fd;          /* open RLVR_SANDBOX_RESULTS_FD as a results channel */
    int (*prepare)(void *arg);/* runtime code run inside first, in a process of its own without
                                 the results fd (isolation as rlvr_sandbox_call); non-zero
                                 return: the command is not run */
    const void *prepare_arg;  /* prepare_arg_len bytes, copied into the run: prepare gets a
                                 pointer to the copy (16-byte aligned; NULL when the length is 0) */
    size_t prepare_arg_len;
    bool judge;               /* argv[0] names a program in the sandbox's judge_dir (a plain file
                                 name): it is exec'd from a descriptor the run's init opened before
                                 hiding the directory. It must be a binary (a script's interpreter
                                 could not reopen it) */
} rlvr_sandbox_cmd;

#define RLVR_SANDBOX_CMD_VERSION 3

/* Runs a command. Returns 0 when the run happened, whatever the command did
 * (see *res); a negative code when the sandbox itself failed (infrastructure:
 * the caller reports RLVR_VERDICT_INFRA, never a policy failure).
 * The minimal environment is PATH, HOME=/tmp, TMPDIR=/tmp, LANG=C.UTF-8,
 * USER=sandbox, and RLVR_RESULTS_FD when results_fd is set, then the
 * sandbox's env and the command's own (each replacing an entry of the same
 * name); nothing of the runtime's own environment leaks in. stdin is /dev/null. */
int rlvr_sandbox_exec(rlvr_sandbox *sb, const rlvr_sandbox_cmd *cmd, rlvr_sandbox_result *res);

/* Runs the runtime's own function inside the sandbox under the same
 * isolation (namespaces, no capabilities, seccomp, wall/CPU/process/file
 * limits; not the memory limits, since the runtime may be built with
 * sanitizers): used to apply patches and to extract diffs without
 * reading policy-controlled files from the runtime's process. The function
 * writes its answer to fd 1 (captured into res->out, up to output_bytes,
 * which may exceed the sandbox's output limit); its return value becomes the
 * exit code (0..255). /.rlvr/private is visible to it, and so is the
 * pristine snapshot, read-only at /.rlvr/lower (commands see neither). */
/* The run does not share the runtime's memory (it is forked from the
 * sandbox spawner, not from the runtime): its argument is `arg_len` bytes at
 * `arg`, copied into the run, and `fn` gets a pointer to the copy (16-byte
 * aligned; NULL when arg_len is 0). An argument with pointers in it must be
 * flattened first (core/flat.h). */
typedef int (*rlvr_sandbox_fn)(void *arg);
int rlvr_sandbox_call(rlvr_sandbox *sb, rlvr_sandbox_fn fn, const void *arg, size_t arg_len, double wall_s,
                      int64_t output_bytes, rlvr_sandbox_result *res);

void rlvr_sandbox_result_free(rlvr_sandbox_result *res);

/* ---- runs without blocking ------------------------------------------------------------
 * rlvr_sandbox_exec and rlvr_sandbox_call, split so that one thread can
 * drive the runs of many sandboxes with poll(2) while it does other work
 * (the harness decodes for the rollouts that are not waiting on a tool):
 *
 *   rlvr_sandbox_exec_start / rlvr_sandbox_call_start   start the run, return at once;
 *   rlvr_sandbox_run_pollfds    the run's pipes (≤ 3) to add to a poll set;
 *   rlvr_sandbox_run_advance    after poll: reads what is ready, enforces the
 *                               output cap and the backstop; 1 when the run has ended;
 *   rlvr_sandbox_run_deadline   the latest time (rlvr_now clock) by which the
 *                               caller must call advance again even if no fd is ready;
 *   rlvr_sandbox_run_finish     fills *res exactly as the blocking call would
 *                               (waits first if it has not ended), frees the
 *                               run; the supervisor is reaped at once or
 *                               later (rlvr_sandbox_settle);
 *   rlvr_sandbox_run_abort      kills and reaps a run whose result is not wanted.
 *
 * The limits (wall time, CPU, memory, ...) are enforced inside the sandbox
 * by its supervisor, whether or not the caller polls; the caller's polling
 * only drains output. The command, the function's argument and the sandbox
 * must outlive the start call only (the run works on its own copy);
 * the sandbox must outlive the run, and a sandbox runs one thing at a time. */
typedef struct rlvr_sandbox_run rlvr_sandbox_run;
struct pollfd;
int rlvr_sandbox_exec_start(rlvr_sandbox *sb, const rlvr_sandbox_cmd *cmd, rlvr_sandbox_run **out);
int rlvr_sandbox_call_start(rlvr_sandbox *sb, rlvr_sandbox_fn fn, const void *arg, size_t arg_len, double wall_s,
                            int64_t output_bytes, rlvr_sandbox_run **out);
int rlvr_sandbox_run_pollfds(const rlvr_sandbox_run *run, struct pollfd *fds, int cap);
int rlvr_sandbox_run_advance(rlvr_sandbox_run *run, const struct pollfd *fds, int n);
double rlvr_sandbox_run_deadline(const rlvr_sandbox_run *run);
int rlvr_sandbox_run_finish(rlvr_sandbox_run *run, rlvr_sandbox_result *res);
void rlvr_sandbox_run_abort(rlvr_sandbox_run *run);

#endif
