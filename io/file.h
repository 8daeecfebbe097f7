/* io/file.h — what every file rlvr writes has in common.
 *
 * Every rlvr file is HDF5 with two attributes on its root group:
 *   format          string  "rlvr.rollout_shard" | "rlvr.checkpoint" |
 *                           "rlvr.metrics" | "rlvr.manifest"
 *   format_version  int64   1, 2, ...; readers refuse newer versions
 * and every dataset is chunked with a Fletcher32 checksum per chunk, so a
 * flipped byte is found when it is read. docs/FORMATS.md is the schema. */
#ifndef RLVR_IO_FILE_H
#define RLVR_IO_FILE_H

#include <stddef.h>
#include <stdint.h>

#define RLVR_IO_MAX_RANK 4

/* Element types of stored arrays (stable numbers). */
typedef enum {
    RLVR_DT_U8 = 1,
    RLVR_DT_I32 = 2,
    RLVR_DT_U32 = 3,
    RLVR_DT_I64 = 4,
    RLVR_DT_U64 = 5,
    RLVR_DT_F32 = 6,
    RLVR_DT_F64 = 7,
} rlvr_dtype;

size_t rlvr_dtype_size(rlvr_dtype t);      /* 0 for an unknown value */
const char *rlvr_dtype_name(rlvr_dtype t); /* "float32" ... */

typedef enum {
    RLVR_FILE_UNKNOWN = 0,
    RLVR_FILE_SHARD = 1,
    RLVR_FILE_CHECKPOINT = 2,
    RLVR_FILE_METRICS = 3,
    RLVR_FILE_MANIFEST = 4,
} rlvr_file_kind;

#define RLVR_FORMAT_SHARD "rlvr.rollout_shard"
#define RLVR_FORMAT_CHECKPOINT "rlvr.checkpoint"
#define RLVR_FORMAT_METRICS "rlvr.metrics"
#define RLVR_FORMAT_MANIFEST "rlvr.manifest"

/* Reads the format attributes of any rlvr file. RLVR_EIO when it cannot be
 * opened, RLVR_EFORMAT when it is not HDF5 or not an rlvr file (the message
 * says which). A file that a writer still appends to (metrics) is opened in
 * SWMR-read mode. */
int rlvr_io_identify(const char *path, rlvr_file_kind *kind, int *format_version);

/* Reads every dataset of the file in full, chunk by chunk, which verifies
 * every Fletcher32 checksum. RLVR_ECHECKSUM naming the dataset on the first
 * bad chunk. Optional counts of datasets and (uncompressed) bytes read. */
int rlvr_io_verify(const char *path, int64_t *n_datasets, int64_t *n_bytes);

/* One stored dataset, for listings (rlvr inspect). */
typedef struct {
    const char *path;            /* "/model/params/wq" */
    int rank;
    uint64_t dims[RLVR_IO_MAX_RANK];
    const char *type;            /* "float32", "int64", "string[64]", ... */
    uint64_t stored_bytes;       /* bytes on disk (compressed) */
} rlvr_io_dataset_info;

/* A dataset's shape as Python writes a tuple: "(3, 4)", "(5,)", "()". */
void rlvr_io_shape_text(const rlvr_io_dataset_info *d, char *out, size_t cap);

/* Calls fn for every dataset in name order; stops on a negative return. */
int rlvr_io_list(const char *path, int (*fn)(const rlvr_io_dataset_info *info, void *user), void *user);

/* Text stored as a one-string dataset ("/run/config"); free() *out. */
int rlvr_io_read_text(const char *path, const char *dataset, char **out);

/* A 1-D dataset of fixed-length strings ("/hosts"): fn once per entry. */
int rlvr_io_read_strings(const char *path, const char *dataset, int (*fn)(const char *s, void *user), void *user);

/* Attributes of a group ("/" for the root, "/slurm") as text, for
 * listings: fn(name, value) in name order. */
int rlvr_io_list_attributes(const char *path, const char *group,
                            int (*fn)(const char *name, const char *value, void *user), void *user);

#endif
