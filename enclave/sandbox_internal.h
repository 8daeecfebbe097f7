/* enclave/sandbox_internal.h — state shared by sandbox_host.c and sandbox.c.
 * Not part of the module's contract. */
#ifndef RLVR_ENCLAVE_SANDBOX_INTERNAL_H
#define RLVR_ENCLAVE_SANDBOX_INTERNAL_H

#include "enclave/sandbox.h"

#include <linux/filter.h>
#include <pthread.h>
#include <sys/types.h>

/* Inside every sandbox the processes run as this uid/gid; the user namespace
 * maps it to the host identity (the runtime's own uid, or root_uid when the
 * runtime is root). Nothing else is mapped. */
#define SB_INNER_UID 1000
#define SB_INNER_GID 1000

struct rlvr_sandbox_host {
    char *scratch;               /* private scratch directory (0711) */
    uid_t host_uid;              /* host identity of sandboxed processes */
    gid_t host_gid;
    bool privileged;             /* runtime is root and maps another uid */
    bool overlay;                /* overlayfs works here */
    bool landlock;               /* Landlock restricts writes (kernel 5.13+ with landlock enabled) */
    char **system_paths;         /* host paths bound read-only */
    size_t n_system_paths;
    struct sock_filter *filter;  /* seccomp program, built once */
    unsigned short filter_len;
    int cap_last;                /* highest capability number of the kernel */
    char describe[256];
    /* the spawner: the small process every holder and supervisor is forked
     * from (sandbox.c); -1 while none runs */
    pid_t spawner;
    pid_t spawner_owner; /* the process that started it (a fork of the runtime starts its own) */
    int spawner_sock;
    pthread_mutex_t spawner_lock; /* one request at a time */
};

struct rlvr_snapshot {
    rlvr_sandbox_host *host;
    char *path;
    bool sealed;
};

/* Message from a child that failed while building a sandbox: the first
 * character says where, so the host probe can react. */
enum { SB_STAGE_UNSHARE = 'U', SB_STAGE_OVERLAY = 'O', SB_STAGE_OTHER = 'X' };

/* Builds the seccomp program into host->filter (sandbox_host.c). */
int rlvr_sandbox_build_seccomp(rlvr_sandbox_host *host);

/* Creates a sandbox; when `stage` is not NULL it receives the stage letter of
 * a child-side failure (0 when the failure was not inside the child). */
int rlvr_sandbox_new_internal(rlvr_sandbox **out, rlvr_sandbox_host *host, const rlvr_sandbox_options *opt,
                              bool overlay, char *stage);

/* Starts the host's spawner (sandbox.c). Called once the host's fields are
 * final: the spawner and everything it forks see the host as it was then. */
int rlvr_spawner_start(rlvr_sandbox_host *host);

/* Ends the spawner, if one runs. */
void rlvr_spawner_stop(rlvr_sandbox_host *host);

#endif
