/* enclave/fsutil.h — small file-tree helpers the enclave and its tests share.
 *
 * None of them follows symbolic links: a link is copied, hashed or removed as
 * a link, never as what it points to. */
#ifndef RLVR_ENCLAVE_FSUTIL_H
#define RLVR_ENCLAVE_FSUTIL_H

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Creates a fresh directory "<parent>/<prefix>XXXXXX" (mode 0700) and returns
 * its path in *out (caller frees). */
int rlvr_fs_mkdtemp(char **out, const char *parent, const char *prefix);

/* Removes `path` and everything below it; a missing path is not an error.
 * Read-only directories inside are made writable first. */
int rlvr_fs_remove_tree(const char *path);

/* Removes `name` in the directory `dir` (a descriptor, or AT_FDCWD) and
 * everything below it, never following a link; missing is not an error. */
int rlvr_fs_remove_at(int dir, const char *name);

/* The names in `d` but "." and "..", sorted bytewise (strcmp), so that a
 * walk over them is deterministic; free with rlvr_fs_free_names. */
int rlvr_fs_sorted_names(DIR *d, char ***out, size_t *n);
void rlvr_fs_free_names(char **names, size_t n);

/* Copies the tree at `src` to `dst` (which must not exist): regular files,
 * directories and symbolic links with their permission bits; other file types
 * are skipped. When uid != (uid_t)-1 every copy is chowned to uid:gid. */
int rlvr_fs_copy_tree(const char *src, const char *dst, uid_t uid, gid_t gid);

/* Copies the tree at `src` into the existing directory `dst`: directories
 * are created as needed, files and links replace what is there. */
int rlvr_fs_merge_tree(const char *src, const char *dst);

/* Changes the owner of `path` and everything below it (links themselves). */
int rlvr_fs_chown_tree(const char *path, uid_t uid, gid_t gid);

/* 64-bit FNV-1a hash of the tree: every entry's relative path, type,
 * permission bits, size, contents (files) or target (links), in sorted order.
 * Two trees hash equal iff they look the same to a reader. */
int rlvr_fs_hash_tree(const char *path, uint64_t *out);

/* Writes `len` bytes to `path` (created or truncated, mode 0644). */
int rlvr_fs_write_file(const char *path, const void *data, size_t len);

/* Reads a whole file; *out is NUL-terminated (caller frees). */
int rlvr_fs_read_file(const char *path, char **out, size_t *len);
/* The same from an open descriptor to its end (standard input, a pipe);
 * `name` names it in messages. The descriptor stays open. */
int rlvr_fs_read_fd(int fd, const char *name, char **out, size_t *len);


/* The directory part of `path` ("." when it has none) into out. */
void rlvr_fs_dirname(char *out, size_t cap, const char *path);

#endif
