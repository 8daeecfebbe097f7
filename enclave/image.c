/* enclave/image.c — what an environment path is, and whether a root tree
 * holds what a task needs (enclave/image.h).
 *
 * Only the SquashFS superblock and the SIF header and descriptors are
 * parsed here, with every offset checked against the file's size: a
 * truncated download is refused at load time with the sizes in the
 * message, instead of failing at the first read of a missing block inside
 * a run (where it would look like the policy's fault). */
#include "enclave/image.h"

#include "core/error.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* SquashFS 4 superblock (little-endian, 96 bytes). */
enum {
    SQFS_SUPER_BYTES = 96,
    SQFS_MAGIC = 0x73717368, /* "hsqs" */
};

/* SIF: a 128-byte global header, then fixed-size descriptors. */
enum {
    SIF_HEADER_BYTES = 128,
    SIF_MAGIC_AT = 32,
    SIF_DESCR_BYTES = 585,
    SIF_DATA_PARTITION = 0x4004,
    SIF_FS_SQUASH = 1,
    SIF_PART_SYSTEM = 1,
    SIF_PART_PRIMSYS = 2,
    SIF_MAX_DESCRIPTORS = 4096,
};

static uint16_t le16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t le32(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t le64(const unsigned char *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }

static int read_at(int fd, const char *path, void *buf, size_t len, uint64_t at) {
    ssize_t n = pread(fd, buf, len, (off_t)at);
    if (n < 0) return rlvr_error_errno_at(__FILE__, __LINE__, "reading %s", path);
    if ((size_t)n != len)
        return RLVR_FAIL(RLVR_EINVAL, "environment image %s is truncated: %zu bytes wanted at offset %llu", path, len,
                         (unsigned long long)at);
    return 0;
}

/* The SquashFS superblock at `at` of a file: its bytes_used, checked
 * against the `room` the file holds from there. */
static int squashfs_check(int fd, const char *path, uint64_t at, uint64_t room, uint64_t *size) {
    unsigned char sb[SQFS_SUPER_BYTES];
    unsigned char magic[4] = {0};
    if (room < sizeof magic || pread(fd, magic, sizeof magic, (off_t)at) != (ssize_t)sizeof magic ||
        le32(magic) != SQFS_MAGIC)
        return RLVR_FAIL(RLVR_EINVAL, "environment %s is neither a directory nor a SquashFS or SIF image", path);
    if (room < sizeof sb)
        return RLVR_FAIL(RLVR_EINVAL, "environment image %s is truncated: %llu bytes cannot hold a SquashFS superblock",
                         path, (unsigned long long)room);
    RLVR_TRY(read_at(fd, path, sb, sizeof sb, at));
    if (le32(sb) != SQFS_MAGIC)
        return RLVR_FAIL(RLVR_EINVAL, "environment %s is neither a directory nor a SquashFS or SIF image", path);
    uint32_t block_size = le32(sb + 12);
    uint16_t compression = le16(sb + 20), block_log = le16(sb + 22), major = le16(sb + 28);
    uint64_t bytes_used = le64(sb + 40);
    if (major != 4)
        return RLVR_FAIL(RLVR_EINVAL, "environment image %s is SquashFS version %u; only version 4 is mounted", path,
                         (unsigned)major);
    if (block_log < 12 || block_log > 20 || block_size != 1u << block_log || compression < 1 || compression > 6)
        return RLVR_FAIL(RLVR_EINVAL,
                         "environment image %s has a corrupt SquashFS superblock (block size %u, log %u, "
                         "compression %u); rebuild it with mksquashfs",
                         path, block_size, (unsigned)block_log, (unsigned)compression);
    if (bytes_used < sizeof sb || bytes_used > room)
        return RLVR_FAIL(RLVR_EINVAL,
                         "environment image %s is truncated: its SquashFS superblock says %llu bytes, the file holds "
                         "%llu",
                         path, (unsigned long long)bytes_used, (unsigned long long)room);
    /* every table starts inside the image (the export and xattr tables may
     * be absent: all ones) */
    for (int off = 48; off <= 88; off += 8) {
        uint64_t start = le64(sb + off);
        if (start != UINT64_MAX && start >= bytes_used)
            return RLVR_FAIL(RLVR_EINVAL, "environment image %s has a corrupt SquashFS superblock (a table at %llu "
                             "past its %llu bytes)", path, (unsigned long long)start, (unsigned long long)bytes_used);
    }
    *size = bytes_used;
    return 0;
}

/* The primary (else the first) SquashFS system partition of a SIF file. */
static int sif_partition(int fd, const char *path, uint64_t file_size, uint64_t *offset, uint64_t *room) {
    unsigned char h[SIF_HEADER_BYTES];
    RLVR_TRY(read_at(fd, path, h, sizeof h, 0));
    int64_t total = (int64_t)le64(h + 88), descr_off = (int64_t)le64(h + 96);
    if (total <= 0 || total > SIF_MAX_DESCRIPTORS || descr_off < SIF_HEADER_BYTES ||
        (uint64_t)descr_off + (uint64_t)total * SIF_DESCR_BYTES > file_size)
        return RLVR_FAIL(RLVR_EINVAL, "SIF file %s is truncated or corrupt: %lld descriptors at offset %lld", path,
                         (long long)total, (long long)descr_off);
    bool found = false;
    for (int64_t i = 0; i < total; i++) {
        unsigned char d[SIF_DESCR_BYTES];
        RLVR_TRY(read_at(fd, path, d, sizeof d, (uint64_t)descr_off + (uint64_t)i * SIF_DESCR_BYTES));
        /* datatype i32, used u8, id, group, link u32, offset, size, ... i64;
         * the partition's fstype and parttype open the 384 extra bytes */
        if (!d[4] || le32(d) != SIF_DATA_PARTITION) continue;
        uint32_t fstype = le32(d + 201), parttype = le32(d + 205);
        if (fstype != SIF_FS_SQUASH || (parttype != SIF_PART_SYSTEM && parttype != SIF_PART_PRIMSYS)) continue;
        int64_t off = (int64_t)le64(d + 17), size = (int64_t)le64(d + 25);
        if (off <= 0 || size <= 0 || (uint64_t)off + (uint64_t)size > file_size)
            return RLVR_FAIL(RLVR_EINVAL, "SIF file %s is truncated: its SquashFS partition spans %lld+%lld bytes, the "
                             "file holds %llu", path, (long long)off, (long long)size, (unsigned long long)file_size);
        if (found && parttype != SIF_PART_PRIMSYS) continue;
        *offset = (uint64_t)off;
        *room = (uint64_t)size;
        found = true;
        if (parttype == SIF_PART_PRIMSYS) break;
    }
    if (!found)
        return RLVR_FAIL(RLVR_EINVAL, "SIF file %s has no SquashFS system partition (encrypted or ext3 images are not "
                         "mounted)", path);
    return 0;
}

int rlvr_image_inspect(const char *path, rlvr_image_info *out) {
    int fd = -1, rc = 0;
    rlvr_image_info info = {0};
    struct stat st;
    if (stat(path, &st) != 0) {
        rc = RLVR_FAIL(errno == ENOENT ? RLVR_ENOTFOUND : RLVR_EIO, "environment %s: %s", path, strerror(errno));
        goto cleanup;
    }
    info.device = (uint64_t)st.st_dev;
    info.inode = (uint64_t)st.st_ino;
    if (S_ISDIR(st.st_mode)) {
        info.kind = RLVR_IMAGE_DIRECTORY;
        goto done;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = RLVR_FAIL(RLVR_EINVAL, "environment %s is neither a directory nor a SquashFS or SIF image", path);
        goto cleanup;
    }
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        rc = rlvr_error_errno_at(__FILE__, __LINE__, "opening environment image %s", path);
        goto cleanup;
    }
    char magic[10] = {0};
    bool sif = pread(fd, magic, sizeof magic, SIF_MAGIC_AT) == (ssize_t)sizeof magic &&
               memcmp(magic, "SIF_MAGIC", 10) == 0;
    uint64_t room = (uint64_t)st.st_size;
    if (sif) {
        info.kind = RLVR_IMAGE_SIF;
        rc = sif_partition(fd, path, (uint64_t)st.st_size, &info.offset, &room);
        if (rc < 0) goto cleanup;
    } else {
        info.kind = RLVR_IMAGE_SQUASHFS;
    }
    rc = squashfs_check(fd, path, info.offset, room, &info.size);
    if (rc < 0) goto cleanup;
    info.extent = room;
done:
    *out = info;
cleanup:
    if (fd >= 0) close(fd);
    return rc;
}

int rlvr_image_workdir_check(const char *workdir) {
    size_t len = strlen(workdir);
    if (workdir[0] != '/' || len < 2 || len > 200)
        return RLVR_FAIL(RLVR_EINVAL, "environment workdir \"%s\" must be an absolute path of at most 200 bytes "
                         "other than /", workdir);
    static const char *const owned[] = {"proc", "dev", "tmp", ".rlvr", "sys"};
    const char *c = workdir + 1;
    for (int i = 0; *c; i++) {
        const char *e = strchr(c, '/');
        size_t n = e ? (size_t)(e - c) : strlen(c);
        bool bad = n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.');
        for (size_t k = 0; k < n; k++) bad = bad || (unsigned char)c[k] < 32;
        for (size_t k = 0; i == 0 && k < sizeof owned / sizeof *owned; k++)
            bad = bad || (strlen(owned[k]) == n && memcmp(owned[k], c, n) == 0);
        if (bad)
            return RLVR_FAIL(RLVR_EINVAL, "environment workdir \"%s\" must be a plain absolute path outside /proc, "
                             "/dev, /tmp, /sys and /.rlvr", workdir);
        if (!e) break;
        c = e + 1;
    }
    return 0;
}

/* openat2 inside the root: symbolic links resolve as the sandbox sees them. */
static int open_in_root(int root_fd, const char *rel, int flags) {
    struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC), .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
    return (int)syscall(SYS_openat2, root_fd, rel, &how, sizeof how);
}

int rlvr_image_check_root(int root_fd, const char *what, const char *workdir) {
    int fd = open_in_root(root_fd, "bin/sh", O_PATH);
    struct stat st;
    bool sh = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111);
    if (fd >= 0) close(fd);
    if (!sh) return RLVR_FAIL(RLVR_EINVAL, "environment %s has no executable /bin/sh", what);
    if (!workdir) return 0;
    RLVR_TRY(rlvr_image_workdir_check(workdir));
    fd = open_in_root(root_fd, workdir + 1, O_PATH);
    if (fd >= 0) {
        bool dir = fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
        close(fd);
        if (!dir) return RLVR_FAIL(RLVR_EINVAL, "environment workdir %s is not a directory in %s", workdir, what);
        return 0;
    }
    if (strchr(workdir + 1, '/'))
        return RLVR_FAIL(RLVR_EINVAL, "environment workdir %s is outside %s: it must be a directory there or a new "
                         "name directly under its root", workdir, what);
    return 0;
}
