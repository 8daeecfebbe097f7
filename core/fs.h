/* core/fs.h — the one home of the file-system chores every module needs:
 * creating a directory with its parents, writing a file so that a reader
 * sees either the old contents or the whole new ones (never a torn file),
 * and the fsyncs that make a rename durable. */
#ifndef RLVR_CORE_FS_H
#define RLVR_CORE_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* mkdir -p: creates `path` and every missing parent with `mode` (before the
 * umask). An existing directory is not an error. */
int rlvr_mkdir_p(const char *path, mode_t mode);

/* Writes `len` bytes to `path` atomically: `path`.part (mode 0644 before
 * the umask), fsync, rename over `path`, fsync of the directory. On failure
 * the part file is removed and `path` is untouched. */
int rlvr_write_file_atomic(const char *path, const void *data, size_t len);
/* The same for a NUL-terminated text, and for a text and a newline after it
 * (a JSON document as one line). */
int rlvr_write_text_atomic(const char *path, const char *text);
int rlvr_write_line_atomic(const char *path, const char *text);

/* Puts a finished `part` (a file, or a directory of finished files) at
 * `path` in one step, the last step of every atomic write: when `durable`,
 * an fsync of `part`, the rename, an fsync of the directory; else the rename
 * alone. On failure `path` is untouched and `part` is the caller's to
 * remove. */
int rlvr_publish(const char *part, const char *path, bool durable);

/* fsync a file by path. */
int rlvr_fsync_path(const char *path);
/* fsync the directory that contains `path` (so a rename there is durable). */
int rlvr_fsync_parent_dir(const char *path);

#endif
