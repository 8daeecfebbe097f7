/* enclave/sandbox_mounts.c — the file system a holder builds in its mount
 * namespace.
 *
 * Nothing of the host exists inside a sandbox unless it is mounted here: the
 * root is a small read-only tmpfs holding read-only binds of the system
 * paths, a synthetic /etc and /dev, and /work, which is the snapshot under a
 * copy-on-write layer (an overlay, or a copy where overlayfs is not
 * permitted) on a size-capped tmpfs. The holder builds it once and restores
 * /work between runs; each run's init then mounts its own /proc and /tmp
 * and hides the state (sandbox_init.c). Failures end the holder with ERROR
 * (the overlay's with its own stage, so the host's probe can fall back to
 * copies). */
#include "enclave/fsutil.h"
#include "core/fs.h"
#include "enclave/sandbox_internal.h"

#include "core/error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int make_ro(const char *path, bool recursive) {
    struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV};
    return mount_setattr(AT_FDCWD, path, recursive ? AT_RECURSIVE : 0, &attr, sizeof attr);
}

static int touch(const char *path, mode_t mode) {
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, mode);
    if (fd < 0) return -1;
    close(fd);
    return 0;
}

/* Binds `src` at `dst` (recursively) and makes it read-only. */
static int bind_ro(const char *src, const char *dst) {
    if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) != 0) return -1;
    return make_ro(dst, true);
}

/* Binds `src` read-only at `dst`: directories and files as binds,
 * symbolic links re-created as links; a missing `src` is skipped. */
static void bind_entry(int err_fd, const char *src, const char *dst) {
    struct stat st;
    if (lstat(src, &st) != 0) return;
    char parent[PATH_MAX];
    rlvr_sb_path(err_fd, parent, sizeof parent, "%s", dst);
    char *slash = strrchr(parent, '/');
    if (slash && slash != parent) {
        *slash = '\0';
        if (rlvr_mkdir_p(parent, 0755) != 0) rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "mkdir %s", parent);
    }
    if (S_ISLNK(st.st_mode)) {
        char target[PATH_MAX];
        ssize_t n = readlink(src, target, sizeof target - 1);
        if (n < 0) rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "readlink %s", src);
        target[n] = '\0';
        if (symlink(target, dst) != 0 && errno != EEXIST)
            rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "symlink %s", dst);
        return;
    }
    if (S_ISDIR(st.st_mode)) {
        if (mkdir(dst, 0755) != 0 && errno != EEXIST) rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "mkdir %s", dst);
    } else if (touch(dst, 0644) != 0) {
        rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "creating mount point %s", dst);
    }
    if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) != 0) rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "bind %s", src);
    if (make_ro(dst, true) != 0) rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "making %s read-only", src);
}

/* Binds host path `src` read-only at root+src. */
static void bind_system_path(int err_fd, const char *root, const char *src) {
    char dst[PATH_MAX];
    rlvr_sb_path(err_fd, dst, sizeof dst, "%s%s", root, src);
    bind_entry(err_fd, src, dst);
}

static bool system_path_listed(const rlvr_sandbox_host *host, const char *path) {
    for (size_t i = 0; i < host->n_system_paths; i++)
        if (strcmp(host->system_paths[i], path) == 0) return true;
    return false;
}

/* The synthetic /etc files, where the system paths bring none. */
static void write_etc(int err_fd, const char *root, const rlvr_sandbox_host *host) {
    char path[PATH_MAX];
    rlvr_sb_path(err_fd, path, sizeof path, "%s/etc", root);
    if (mkdir(path, 0755) != 0 && errno != EEXIST) rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "mkdir %s", path);
    static const struct {
        const char *name, *text;
    } files[] = {
        {"/etc/passwd", "sandbox:x:1000:1000:rlvr sandbox:/tmp:/bin/sh\n"
                        "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"},
        {"/etc/group", "sandbox:x:1000:\nnogroup:x:65534:\n"},
        {"/etc/hosts", "127.0.0.1 localhost\n::1 localhost\n"},
        {"/etc/hostname", "sandbox\n"},
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        if (system_path_listed(host, files[i].name)) continue;
        rlvr_sb_path(err_fd, path, sizeof path, "%s%s", root, files[i].name);
        if (rlvr_fs_write_file(path, files[i].text, strlen(files[i].text)) != 0)
            rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "writing %s", path);
    }
}

/* A read-only /dev of the harmless device nodes (bound from the host) and
 * the links to /proc/self/fd. */
static void make_dev(int err_fd, const char *root) {
    char dev[PATH_MAX], path[PATH_MAX], src[64];
    rlvr_sb_path(err_fd, dev, sizeof dev, "%s/dev", root);
    if (mkdir(dev, 0755) != 0) rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "mkdir %s", dev);
    if (mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,mode=0755,nr_inodes=64") != 0)
        rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "mounting /dev");
    static const char *const nodes[] = {"null", "zero", "full", "random", "urandom"};
    for (size_t i = 0; i < sizeof nodes / sizeof *nodes; i++) {
        rlvr_sb_path(err_fd, path, sizeof path, "%s/%s", dev, nodes[i]);
        rlvr_sb_path(err_fd, src, sizeof src, "/dev/%s", nodes[i]);
        if (touch(path, 0666) != 0) rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "creating %s", path);
        if (mount(src, path, NULL, MS_BIND, NULL) != 0) rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "bind %s", src);
    }
    static const char *const links[][2] = {
        {"fd", "/proc/self/fd"}, {"stdin", "/proc/self/fd/0"}, {"stdout", "/proc/self/fd/1"}, {"stderr", "/proc/self/fd/2"}};
    for (size_t i = 0; i < sizeof links / sizeof *links; i++) {
        rlvr_sb_path(err_fd, path, sizeof path, "%s/%s", dev, links[i][0]);
        if (symlink(links[i][1], path) != 0) rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "symlink %s", path);
    }
    struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
    if (mount_setattr(AT_FDCWD, dev, 0, &attr, sizeof attr) != 0)
        rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "making /dev read-only");
}

/* Binds every directory between /work and the read-only path readonly[i]
 * onto itself (writable). A mount point cannot be renamed or removed
 * (EBUSY), so a run cannot move a read-only file's directory aside and put
 * another file at its path. An overlay refuses such renames of directories
 * it merges by accident of its design (EXDEV); a copy of the snapshot would
 * not. Directories an earlier path already pinned are skipped. */
static void pin_ancestors(int err_fd, const char *work, const char *const *readonly, size_t i) {
    const char *rel = readonly[i];
    for (const char *slash = strchr(rel, '/'); slash; slash = strchr(slash + 1, '/')) {
        size_t n = (size_t)(slash - rel);
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++) seen = strncmp(readonly[j], rel, n + 1) == 0;
        if (seen) continue;
        char dir[PATH_MAX];
        rlvr_sb_path(err_fd, dir, sizeof dir, "%s/%.*s", work, (int)n, rel);
        struct stat st;
        if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) return;
        if (mount(dir, dir, NULL, MS_BIND, NULL) != 0)
            rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "pinning %.*s", (int)n, rel);
    }
}

/* /work as the snapshot under an overlay whose upper layer lives in `state`. */
static void mount_overlay(int err_fd, const char *state, const char *lower, const char *work) {
    char upper[PATH_MAX], owork[PATH_MAX], opts[3 * PATH_MAX + 64];
    rlvr_sb_path(err_fd, upper, sizeof upper, "%s/upper", state);
    rlvr_sb_path(err_fd, owork, sizeof owork, "%s/owork", state);
    if (mkdir(upper, 0755) != 0 || mkdir(owork, 0700) != 0)
        rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "mkdir in state");
    rlvr_sb_path(err_fd, opts, sizeof opts, "lowerdir=%s,upperdir=%s,workdir=%s,userxattr", lower, upper, owork);
    if (mount("overlay", work, "overlay", MS_NOSUID | MS_NODEV, opts) != 0)
        rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OVERLAY, "mounting overlayfs (%s)", opts);
}

/* /work as a copy of the snapshot in `state`, where overlayfs is not
 * permitted. */
static void mount_copy(int err_fd, const char *state, const char *lower, const char *work) {
    char copy[PATH_MAX];
    rlvr_sb_path(err_fd, copy, sizeof copy, "%s/tree", state);
    if (rlvr_fs_copy_tree(lower, copy, (uid_t)-1, (gid_t)-1) != 0)
        rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "copying the snapshot: %s", rlvr_error_last());
    if (mount(copy, work, NULL, MS_BIND, NULL) != 0) rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "binding the copy");
}

/* The read-only paths bound over themselves, after their directories are
 * pinned. */
static void protect_readonly(int err_fd, const char *work, const char *const *readonly) {
    char path[PATH_MAX];
    for (size_t i = 0; readonly && readonly[i]; i++) pin_ancestors(err_fd, work, readonly, i);
    for (const char *const *r = readonly; r && *r; r++) {
        rlvr_sb_path(err_fd, path, sizeof path, "%s/%s", work, *r);
        struct stat st;
        if (lstat(path, &st) != 0 || S_ISLNK(st.st_mode)) continue;
        if (bind_ro(path, path) != 0) rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "making %s read-only", *r);
    }
}

/* Mounts a fresh /work (the holder has pivoted): a new tmpfs at
 * /.rlvr/state holds the copy-on-write layer (or the copy), the snapshot
 * bound at /.rlvr/lower is the overlay's lower layer, and the read-only
 * paths are bound over themselves. Runs never see /.rlvr/state (their init
 * unmounts it), commands never see /.rlvr/lower either; the runtime's own
 * calls keep it (the pristine tree a workspace's snapshot compares /work
 * with). */
void rlvr_sb_mount_work(int err_fd, const rlvr_sb_holder_plan *p) {
    const char *state = "/.rlvr/state", *lower = "/.rlvr/lower", *work = "/work";
    char opts[128];
    rlvr_sb_path(err_fd, opts, sizeof opts, "size=%lld,mode=0755,nr_inodes=%lld", (long long)p->disk_bytes,
                 (long long)(p->disk_bytes / 4096 + 1024));
    if (mount("tmpfs", state, "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0)
        rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "mounting the state tmpfs");
    if (p->overlay) mount_overlay(err_fd, state, lower, work);
    else mount_copy(err_fd, state, lower, work);
    protect_readonly(err_fd, work, p->readonly);
    /* the environment's working directory is the same tree (its read-only
     * paths included): commands start there */
    if (p->workdir && mount(work, p->workdir, NULL, MS_BIND | MS_REC, NULL) != 0)
        rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "binding /work at %s", p->workdir);
}

/* The root tmpfs and its skeleton, and the snapshot bound read-only at
 * .rlvr/lower. */
static void mount_skeleton(int err_fd, const char *root, const char *snapshot) {
    char path[PATH_MAX];
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "making / private");
    if (mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=2m,mode=0755,nr_inodes=8192") != 0)
        rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "mounting the root tmpfs");
    static const char *const dirs[] = {"work", ".rlvr", ".rlvr/state", ".rlvr/lower", ".rlvr/private", ".rlvr/judge"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        rlvr_sb_path(err_fd, path, sizeof path, "%s/%s", root, dirs[i]);
        if (mkdir(path, i == 2 ? 0700 : 0755) != 0) rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "mkdir %s", path);
    }
    rlvr_sb_path(err_fd, path, sizeof path, "%s/.rlvr/lower", root);
    if (bind_ro(snapshot, path) != 0) rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "binding the snapshot");
}

/* The mount points each run covers with its own: /proc and /tmp. */
static void mount_run_points(int err_fd, const char *root) {
    char path[PATH_MAX];
    /* a proc mount must already be visible before a user namespace may mount
     * a fresh one; each run covers this one with its own */
    rlvr_sb_path(err_fd, path, sizeof path, "%s/proc", root);
    if (mkdir(path, 0555) != 0) rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "mkdir %s", path);
    if (mount("/proc", path, NULL, MS_BIND | MS_REC, NULL) != 0)
        rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "binding /proc");
    rlvr_sb_path(err_fd, path, sizeof path, "%s/tmp", root);
    if (mkdir(path, 01777) != 0 || chmod(path, 01777) != 0)
        rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "mkdir %s", path);
}

/* The private and judge directories, read-only; runs that must not see
 * them have their init unmount them. */
static void bind_hidden_dirs(int err_fd, const char *root, const rlvr_sb_holder_plan *p) {
    char path[PATH_MAX];
    if (p->private_dir) {
        rlvr_sb_path(err_fd, path, sizeof path, "%s/.rlvr/private", root);
        if (bind_ro(p->private_dir, path) != 0)
            rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "binding the private directory %s", p->private_dir);
    }
    if (p->judge_dir) {
        rlvr_sb_path(err_fd, path, sizeof path, "%s" RLVR_SANDBOX_JUDGE_DIR, root);
        if (bind_ro(p->judge_dir, path) != 0)
            rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "binding the judge directory %s", p->judge_dir);
    }
}

/* The names at the top of the root the sandbox makes itself: an image's
 * own are not bound. */
static bool sandbox_owned(const char *name) {
    static const char *const owned[] = {".", "..", "proc", "tmp", "dev", "sys", "work", ".rlvr"};
    for (size_t i = 0; i < sizeof owned / sizeof *owned; i++)
        if (strcmp(owned[i], name) == 0) return true;
    return false;
}

/* The environment's root tree in place of the system paths: attached (a
 * detached tree from the image server) or bound (a directory) at a
 * staging point, its top-level entries bound read-only into the root one
 * by one (the sandbox's own mount points stay the sandbox's), the staging
 * point gone again. Synthetic /etc files only where the image has no
 * /etc. */
static void mount_image(int err_fd, const char *root, const rlvr_sb_holder_plan *p) {
    char stage[PATH_MAX], src[PATH_MAX], dst[PATH_MAX];
    rlvr_sb_path(err_fd, stage, sizeof stage, "%s/.rlvr/image", root);
    if (mkdir(stage, 0755) != 0) rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "mkdir %s", stage);
    if (p->image_dir) {
        if (mount(p->image_dir, stage, NULL, MS_BIND | MS_REC, NULL) != 0)
            rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "binding the environment %s", p->image_dir);
    } else if (syscall(SYS_move_mount, p->image_tree, "", AT_FDCWD, stage, MOVE_MOUNT_F_EMPTY_PATH) != 0) {
        rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "attaching the environment image");
    }
    DIR *d = opendir(stage);
    if (!d) rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "reading the environment's root");
    bool etc = false;
    for (struct dirent *e; (e = readdir(d));) {
        if (sandbox_owned(e->d_name)) continue;
        etc = etc || strcmp(e->d_name, "etc") == 0;
        rlvr_sb_path(err_fd, src, sizeof src, "%s/%s", stage, e->d_name);
        rlvr_sb_path(err_fd, dst, sizeof dst, "%s/%s", root, e->d_name);
        bind_entry(err_fd, src, dst);
    }
    closedir(d);
    if (umount2(stage, MNT_DETACH) != 0 || rmdir(stage) != 0)
        rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "detaching the environment's staging point");
    if (!etc) write_etc(err_fd, root, p->host);
}

/* The working directory's mount point, where the image has none: a new
 * name directly under the root (the task check refused anything else). */
static void make_workdir_point(int err_fd, const char *root, const char *workdir) {
    char path[PATH_MAX];
    rlvr_sb_path(err_fd, path, sizeof path, "%s%s", root, workdir);
    struct stat st;
    if (lstat(path, &st) == 0) return;
    if (mkdir(path, 0755) != 0) rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "mkdir %s", path);
}

void rlvr_sb_mount_root(int err_fd, const char *root, const rlvr_sb_holder_plan *p) {
    mount_skeleton(err_fd, root, p->lower);
    if (p->image_tree >= 0 || p->image_dir) {
        mount_image(err_fd, root, p);
    } else {
        for (size_t i = 0; i < p->host->n_system_paths; i++) bind_system_path(err_fd, root, p->host->system_paths[i]);
        write_etc(err_fd, root, p->host);
    }
    if (p->workdir) make_workdir_point(err_fd, root, p->workdir);
    make_dev(err_fd, root);
    mount_run_points(err_fd, root);
    bind_hidden_dirs(err_fd, root, p);
}

void rlvr_sb_remount_work(int err_fd, const rlvr_sb_holder_plan *p) {
    if (p->workdir && umount2(p->workdir, MNT_DETACH) != 0)
        rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "unmounting %s", p->workdir);
    if (umount2("/work", MNT_DETACH) != 0) rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "unmounting /work");
    if (umount2("/.rlvr/state", MNT_DETACH) != 0)
        rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "unmounting the state");
    rlvr_sb_mount_work(err_fd, p);
}

void rlvr_sb_pivot_root(int err_fd, const char *root) {
    if (chdir(root) != 0) rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "chdir %s", root);
    if (syscall(SYS_pivot_root, ".", ".") != 0) rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "pivot_root");
    if (umount2(".", MNT_DETACH) != 0) rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "detaching the old root");
    if (chdir("/") != 0) rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "chdir /");
    struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV};
    if (mount_setattr(AT_FDCWD, "/", 0, &attr, sizeof attr) != 0)
        rlvr_sb_fail(err_fd, RLVR_SANDBOX_STAGE_OTHER, "making the root read-only");
}
