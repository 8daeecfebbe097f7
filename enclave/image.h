/* enclave/image.h — task environments: the root file system a task's
 * commands run in instead of the host's (docs/TASKS.md "environment").
 *
 * An environment is a directory holding a root tree (an unpacked OCI image,
 * `docker export`, debootstrap output), a SquashFS image, or a SIF file
 * (Apptainer/Singularity), whose primary SquashFS partition is used. This
 * file only reads: it says what a path is and where the SquashFS bytes lie,
 * refusing what no mount would accept (a truncated or corrupt superblock, a
 * SIF without a SquashFS system partition), and checks a mounted or
 * unpacked root for what every task needs (/bin/sh, the working directory).
 * Mounting is the sandbox host's (sandbox_image.c): one mount per image per
 * host process, shared by every sandbox. */
#ifndef RLVR_ENCLAVE_IMAGE_H
#define RLVR_ENCLAVE_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    RLVR_IMAGE_DIRECTORY = 1, /* a root tree, bound read-only */
    RLVR_IMAGE_SQUASHFS = 2,  /* a SquashFS file (from offset 0) */
    RLVR_IMAGE_SIF = 3,       /* a SIF file: its SquashFS partition */
} rlvr_image_kind;

typedef struct {
    rlvr_image_kind kind;
    uint64_t offset;     /* where the SquashFS starts in the file (0 but for SIF) */
    uint64_t size;       /* bytes of the SquashFS (its superblock's bytes_used) */
    uint64_t extent;     /* bytes the file holds for it from offset (the SIF partition's, or the rest of
                            the file: a loop device over only `size` bytes would cut its last sector) */
    uint64_t device;     /* st_dev and st_ino of the path: one mount per file */
    uint64_t inode;
} rlvr_image_info;

/* What `path` is. RLVR_EINVAL naming the file and what is wrong: neither a
 * directory nor a SquashFS/SIF file, a truncated or corrupt SquashFS
 * superblock, a SIF without a SquashFS system partition. RLVR_EIO when the
 * file cannot be read. */
int rlvr_image_inspect(const char *path, rlvr_image_info *out);

/* Whether `workdir` is a working directory a task may name: absolute, plain
 * components (no ".", "..", empty or control characters), at most 200
 * bytes, and none of the paths the sandbox owns (/proc, /dev, /tmp, /.rlvr,
 * and / itself). RLVR_EINVAL naming it otherwise. */
int rlvr_image_workdir_check(const char *workdir);

/* Checks the root tree open at `root_fd` (a directory, or a mounted image)
 * for what every task needs, resolving every path inside the root as the
 * sandbox will (symbolic links included): an executable /bin/sh, and
 * `workdir` (NULL: none) a directory there or a new name directly under
 * the root. RLVR_EINVAL naming `what` (the image's path) otherwise. */
int rlvr_image_check_root(int root_fd, const char *what, const char *workdir);

#endif
