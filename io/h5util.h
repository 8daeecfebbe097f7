/* io/h5util.h — HDF5 plumbing shared by the io/ files (internal to io/).
 *
 * - Check macros turn a failed HDF5 call into RLVR_EHDF5 with file:line and
 *   the HDF5 error stack's own words in rlvr_error_last(); a failed Fletcher32
 *   check becomes RLVR_ECHECKSUM. HDF5's automatic printing is switched off.
 * - Every dataset is chunked, with shuffle + deflate (when the level is > 0)
 *   and a Fletcher32 checksum per chunk, through rlvr_h5_dataset_create().
 * - Appendable 1-D columns buffer one chunk in memory and write whole chunks,
 *   so every chunk is compressed once.
 * HDF5 here is not built thread-safe: io/ is used from one thread at a time. */
#ifndef RLVR_IO_H5UTIL_H
#define RLVR_IO_H5UTIL_H

#include "core/fs.h"
#include "io/file.h"

#include <hdf5.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Switches HDF5's automatic error printing off (once per process). */
void rlvr_h5_init(void);

/* Builds an error from the current HDF5 error stack: "<what>: <HDF5's
 * messages> (at file:line)". Returns RLVR_ECHECKSUM when the stack reports
 * a checksum failure, else `code`. Clears the stack. */
int rlvr_h5_error_at(int code, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#define RLVR_H5_FAIL(...) rlvr_h5_error_at(RLVR_EHDF5, __FILE__, __LINE__, __VA_ARGS__)

/* An HDF5 call returning herr_t/hid_t/htri_t: negative means failure. On
 * failure sets rc and jumps to `label` (the function's cleanup). */
#define RLVR_H5_GOTO(expr, rc, label, ...)                                     \
    do {                                                                       \
        if ((expr) < 0) {                                                      \
            (rc) = RLVR_H5_FAIL(__VA_ARGS__);                                  \
            goto label;                                                        \
        }                                                                      \
    } while (0)

/* Same, returning the error directly (nothing to clean up). */
#define RLVR_H5_CHECK(expr, ...)                                               \
    do {                                                                       \
        if ((expr) < 0) return RLVR_H5_FAIL(__VA_ARGS__);                      \
    } while (0)

/* Closes any HDF5 id (file, group, dataset, space, type, plist, attribute)
 * and sets it to H5I_INVALID_HID; ignores invalid ids. */
void rlvr_h5_close(hid_t *id);

/* ---- files ------------------------------------------------------------ */

/* Creates (truncating) `path` in the HDF5 1.8 file format, whose metadata
 * is checksummed, or with swmr_capable in the 1.10 format that
 * single-writer/multiple-reader access needs. */
int rlvr_h5_file_create(hid_t *out, const char *path, bool swmr_capable);

/* Opens an existing rlvr file read-only after checking it exists and is
 * HDF5, and that its root `format` attribute equals `format` with a
 * `format_version` in [1, max_version]. swmr_read opens a file that a
 * single writer may still be appending to. On mismatch: RLVR_EFORMAT naming
 * the file and the attribute. *version gets the file's version if non-NULL. */
int rlvr_h5_file_open(hid_t *out, const char *path, const char *format, int max_version, int *version,
                      bool swmr_read);

/* Writes the `format` and `format_version` attributes on `file`. */
int rlvr_h5_write_format(hid_t file, const char *format, int version);

/* ---- attributes (scalars; strings are variable-length UTF-8) ------------ */

int rlvr_h5_attr_put_str(hid_t obj, const char *name, const char *value);
int rlvr_h5_attr_put_i64(hid_t obj, const char *name, int64_t value);
int rlvr_h5_attr_put_u64(hid_t obj, const char *name, uint64_t value);
int rlvr_h5_attr_put_f64(hid_t obj, const char *name, double value);

/* Getters: RLVR_EFORMAT naming `what` (usually the file) and the attribute
 * when it is missing or of the wrong kind. Strings are truncated to cap-1. */
int rlvr_h5_attr_get_str(hid_t obj, const char *name, char *buf, size_t cap, const char *what);
/* Allocated copy (free()); for long strings. */
int rlvr_h5_attr_get_str_alloc(hid_t obj, const char *name, char **out, const char *what);
int rlvr_h5_attr_get_i64(hid_t obj, const char *name, int64_t *out, const char *what);
int rlvr_h5_attr_get_u64(hid_t obj, const char *name, uint64_t *out, const char *what);
int rlvr_h5_attr_get_f64(hid_t obj, const char *name, double *out, const char *what);
bool rlvr_h5_attr_exists(hid_t obj, const char *name);

/* ---- types ------------------------------------------------------------- */

/* Little-endian file type and native memory type of a dtype (ids owned by
 * HDF5, do not close). */
hid_t rlvr_h5_file_type(rlvr_dtype t);
hid_t rlvr_h5_mem_type(rlvr_dtype t);
/* The dtype of a stored integer/float type; RLVR_EFORMAT if none fits. */
int rlvr_h5_dtype_of(hid_t type, rlvr_dtype *out);
/* A fixed-length, NUL-terminated string type of `size` bytes (close it). */
hid_t rlvr_h5_string_type(size_t size, bool nul_padded);

/* ---- datasets ---------------------------------------------------------- */

/* Creates a chunked dataset with shuffle + deflate(level) (level 0: neither)
 * and Fletcher32. rank 1..RLVR_IO_MAX_RANK. maxdims NULL: fixed size;
 * otherwise H5S_UNLIMITED entries allowed. chunk NULL: chosen from dims
 * (about 1 MiB, whole trailing dimensions). Creates missing parent groups. */
int rlvr_h5_dataset_create(hid_t *out, hid_t loc, const char *name, hid_t file_type, int rank,
                           const hsize_t *dims, const hsize_t *maxdims, const hsize_t *chunk, int level);

/* Chooses chunk dims of about `target_bytes` from the trailing dimensions. */
void rlvr_h5_choose_chunk(hsize_t *chunk, int rank, const hsize_t *dims, size_t elem_size, size_t target_bytes);

/* Writes a whole array dataset (created here) from `data`, one chunk row
 * block at a time so no second copy of the array is ever made. */
int rlvr_h5_write_array(hid_t loc, const char *name, rlvr_dtype t, int rank, const hsize_t *dims,
                        const void *data, int level);

/* Reads a dataset into `data` (elements of `t`), checking that its rank and
 * dims equal the expected ones (RLVR_EFORMAT naming `what` and the dataset
 * otherwise), one chunk row block at a time. */
int rlvr_h5_read_array(hid_t loc, const char *name, rlvr_dtype t, int rank, const hsize_t *dims, void *data,
                       const char *what);

/* Shape of a dataset: rank and dims (up to RLVR_IO_MAX_RANK). */
int rlvr_h5_dataset_shape(hid_t loc, const char *name, int *rank, hsize_t *dims, const char *what);

/* Reads a whole 1-D dataset of length *n into a malloc'd buffer of mem_type
 * elements (elem_size bytes each). */
int rlvr_h5_read_column(hid_t loc, const char *name, hid_t mem_type, size_t elem_size, void **out,
                        hsize_t *n, const char *what);

/* Text stored as a (1,) dataset of one fixed-length string (checksummed). */
int rlvr_h5_write_text(hid_t loc, const char *name, const char *text, int level);
int rlvr_h5_read_text(hid_t loc, const char *name, char **out, const char *what);

/* ---- appendable 1-D columns ------------------------------------------- */

typedef struct {
    hid_t dset;
    hid_t mem_type;      /* owned when owns_mem_type */
    bool owns_mem_type;
    size_t elem_size;
    size_t chunk_rows;   /* rows per chunk = buffer capacity */
    unsigned char *buf;  /* chunk_rows * elem_size (+ RLVR_H5_CHUNK_SLACK, io/chunks.h) */
    size_t n_buf;        /* rows waiting in buf */
    hsize_t n_file;      /* rows already in the file (or queued in batch) */
    hsize_t extent;      /* the dataset's current length */
    const char *name;    /* for messages; static storage */
    /* When set, whole chunks go to this batch (io/chunks.h) to be encoded
     * in parallel (buf itself is handed over when it fills); the last,
     * partial chunk seals the column. */
    struct rlvr_h5_chunk_batch *batch;
    bool sealed;
} rlvr_h5_column;

/* Creates an extendible 1-D dataset. mem_type is borrowed unless
 * owns_mem_type (then closed with the column). */
int rlvr_h5_column_create(rlvr_h5_column *c, hid_t loc, const char *name, hid_t file_type, hid_t mem_type,
                          bool owns_mem_type, size_t elem_size, size_t chunk_rows, int level);
/* Opens an existing extendible 1-D dataset for appending at its end. */
int rlvr_h5_column_open(rlvr_h5_column *c, hid_t loc, const char *name, hid_t mem_type, bool owns_mem_type,
                        size_t elem_size);
/* Appends n rows (buffered; whole chunks are written as they fill). */
int rlvr_h5_column_push(rlvr_h5_column *c, const void *rows, size_t n);
/* Writes the buffered rows (a partial chunk) to the file. */
int rlvr_h5_column_flush(rlvr_h5_column *c);
/* Rows pushed so far (file + buffer). */
static inline uint64_t rlvr_h5_column_rows(const rlvr_h5_column *c) { return c->n_file + c->n_buf; }
/* Closes without flushing. */
void rlvr_h5_column_close(rlvr_h5_column *c);

/* ---- whole-file walks -------------------------------------------------- */

/* Calls fn for every dataset under `loc` (path relative to loc, in name
 * order). Stops at the first negative return and returns it. */
typedef int (*rlvr_h5_dataset_fn)(hid_t loc, const char *path, void *user);
int rlvr_h5_visit_datasets(hid_t loc, rlvr_h5_dataset_fn fn, void *user);

/* ---- small POSIX helpers for atomic files ------------------------------ */

/* (mkdir -p, atomic text files and fsyncs are core/fs.h's) */

/* Writes a new HDF5 file atomically: creates path.part (HDF5 1.8 format),
 * lets `fill` write its contents, closes it, fsyncs, renames it over `path`
 * and fsyncs the directory. On any failure the part file is removed and the
 * error is wrapped with "writing <what> <path>". */
typedef int (*rlvr_h5_fill_fn)(hid_t file, const void *arg);
int rlvr_h5_write_atomic(const char *path, const char *what, rlvr_h5_fill_fn fill, const void *arg);
/* Current UTC time as "YYYY-MM-DDTHH:MM:SSZ". */
void rlvr_utc_now(char *buf, size_t cap);

#endif
