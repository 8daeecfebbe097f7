/* core/error.h — error codes and the per-thread "last error" message.
 *
 * Library functions return 0 on success or a negative RLVR_E* code and leave
 * a message in a per-thread slot (libgit2's pattern). Messages say what
 * failed, on which file or task, and what to do. Library code never exits;
 * only jobs/ prints and decides the exit status. */
#ifndef RLVR_CORE_ERROR_H
#define RLVR_CORE_ERROR_H

#include <stddef.h>

enum {
    RLVR_OK = 0,
    RLVR_EINVAL = -1,      /* bad argument or bad input value */
    RLVR_ENOMEM = -2,      /* allocation failed */
    RLVR_EIO = -3,         /* read/write/open failed */
    RLVR_ECONFIG = -4,     /* configuration file or key is wrong */
    RLVR_EFORMAT = -5,     /* a file is not in the expected format/version */
    RLVR_ESYS = -6,        /* a system call failed (see errno text) */
    RLVR_ELIMIT = -7,      /* a configured limit was hit */
    RLVR_EUNSUPPORTED = -8,/* not available on this machine/build */
    RLVR_EMPI = -9,        /* an MPI call failed */
    RLVR_EHDF5 = -10,      /* an HDF5 call failed */
    RLVR_EGIT = -11,       /* a libgit2 call failed */
    RLVR_ESANDBOX = -12,   /* a sandbox could not be set up */
    RLVR_ECHECKSUM = -13,  /* stored data failed its checksum */
    RLVR_EINTERRUPTED = -14,/* stopped by a signal or request */
    RLVR_ENOTFOUND = -15,  /* a named thing does not exist */
    RLVR_EBLAS = -16,      /* a BLAS call reported a problem */
    RLVR_ESTATE = -17,     /* call not valid in the object's current state */
};

/* Sets the thread's last error to a formatted message and returns `code`,
 * so callers can write `return rlvr_error_set(RLVR_EINVAL, "...")`. */
int rlvr_error_set(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Same, remembering the source location (rlvr_error_where). */
int rlvr_error_set_at(int code, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Prepends context to the current message: "context: previous message".
 * Returns `code` unchanged, for `return rlvr_error_wrap(rc, "loading %s", p)`. */
int rlvr_error_wrap(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The last message set on this thread ("" when none). Valid until the next
 * error call on this thread. */
const char *rlvr_error_last(void);

/* Where the innermost error of the last message was set, "dir/file.c:LINE"
 * relative to the repository ("" when unknown): for developers; the `rlvr`
 * command shows it only at RLVR_LOG=debug, users see the message alone. */
const char *rlvr_error_where(void);

/* The code that went with the last message (RLVR_OK when none). */
int rlvr_error_last_code(void);

void rlvr_error_clear(void);

/* Short symbolic name of a code: "RLVR_EINVAL". */
const char *rlvr_error_name(int code);

/* ---- check macros: turn failures into RLVR_E* with file:line ---------- */

#define RLVR_FAIL(code, ...) rlvr_error_set_at((code), __FILE__, __LINE__, __VA_ARGS__)

/* Propagate a negative return code unchanged. */
#define RLVR_TRY(expr)                                                         \
    do {                                                                       \
        int rlvr_try_rc_ = (expr);                                             \
        if (rlvr_try_rc_ < 0) return rlvr_try_rc_;                             \
    } while (0)

/* Allocate `count` elements for pointer `ptr` (zeroed) or return RLVR_ENOMEM. */
#define RLVR_ALLOC(ptr, count)                                                 \
    do {                                                                       \
        size_t rlvr_n_ = (size_t)(count);                                      \
        (ptr) = calloc(rlvr_n_ ? rlvr_n_ : 1, sizeof(*(ptr)));                 \
        if (!(ptr))                                                            \
            return RLVR_FAIL(RLVR_ENOMEM, "out of memory allocating %zu x %zu bytes", \
                             rlvr_n_, sizeof(*(ptr)));                          \
    } while (0)

/* A libc/syscall that returns -1 and sets errno: on failure return RLVR_ESYS
 * with the call's description and strerror(errno). */
#define RLVR_SYSCHECK(expr, ...)                                               \
    do {                                                                       \
        if ((expr) == -1) return rlvr_error_errno_at(__FILE__, __LINE__, __VA_ARGS__); \
    } while (0)

int rlvr_error_errno_at(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
