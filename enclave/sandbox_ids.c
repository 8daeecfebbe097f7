/* enclave/sandbox_ids.c — the identity inside a sandbox's user namespace.
 *
 * A sandbox maps exactly one id: SB_INNER_UID/GID inside to the host
 * identity (the runtime's own, or the configured uid when the runtime is
 * root), so nothing inside can act as any other host user. The maps are
 * written from outside (the runtime, once the holder has unshared); where
 * the runtime is root, the holder and each supervisor then switch to the
 * inner identity themselves. */
#include "enclave/sandbox_internal.h"

#include "core/error.h"

#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int rlvr_sb_write_text(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    int rc = rlvr_sb_write_all(fd, text, strlen(text));
    if (close(fd) != 0) rc = -1;
    return rc;
}

int rlvr_sb_write_id_maps(pid_t pid, const rlvr_sandbox_host *host) {
    char path[64], text[64];
    snprintf(path, sizeof path, "/proc/%d/uid_map", (int)pid);
    snprintf(text, sizeof text, "%u %u 1\n", SB_INNER_UID, (unsigned)host->host_uid);
    if (rlvr_sb_write_text(path, text) != 0) return rlvr_error_errno_at(__FILE__, __LINE__, "writing %s", path);
    if (!host->privileged) {
        snprintf(path, sizeof path, "/proc/%d/setgroups", (int)pid);
        if (rlvr_sb_write_text(path, "deny") != 0) return rlvr_error_errno_at(__FILE__, __LINE__, "writing %s", path);
    }
    snprintf(path, sizeof path, "/proc/%d/gid_map", (int)pid);
    snprintf(text, sizeof text, "%u %u 1\n", SB_INNER_GID, (unsigned)host->host_gid);
    if (rlvr_sb_write_text(path, text) != 0) return rlvr_error_errno_at(__FILE__, __LINE__, "writing %s", path);
    return 0;
}

int rlvr_sb_become_inner(const rlvr_sandbox_host *host) {
    if (!host->privileged) return 0; /* the runtime's own uid is already the mapped one */
    if (setresgid(SB_INNER_GID, SB_INNER_GID, SB_INNER_GID) != 0 || setgroups(0, NULL) != 0 ||
        setresuid(SB_INNER_UID, SB_INNER_UID, SB_INNER_UID) != 0)
        return -1;
    return 0;
}
