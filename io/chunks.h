/* io/chunks.h — whole chunks of appendable columns compressed on every core
 * and stored with H5Dwrite_chunk (internal to io/).
 *
 * HDF5 runs its filters inside H5Dwrite, one chunk after another on one
 * thread, and deflate is slow; a shard step would spend most of its time
 * there. A batch instead collects full chunks, runs the same pipeline the
 * dataset declares — shuffle (level > 0), zlib deflate (level > 0),
 * Fletcher32 appended little-endian — on all cores (OpenMP), and writes the
 * results in order. The bytes stored are what HDF5's own filters would have
 * stored, so every HDF5 reader (h5py, h5dump, rlvr) decodes and checks them
 * the usual way. */
#ifndef RLVR_IO_CHUNKS_H
#define RLVR_IO_CHUNKS_H

#include "io/h5util.h"

#include <stddef.h>
#include <stdint.h>

typedef struct rlvr_h5_chunk_batch rlvr_h5_chunk_batch;

/* level: the deflate level the columns were created with (0: no shuffle or
 * deflate). max_bytes: queued raw bytes that trigger a write. */
int rlvr_h5_chunk_batch_new(rlvr_h5_chunk_batch **out, int level, size_t max_bytes);
void rlvr_h5_chunk_batch_free(rlvr_h5_chunk_batch *b);

/* A buffer of at least `size` bytes for rlvr_h5_chunk_batch_add, reusing
 * those of chunks already written (malloc'd; NULL when out of memory). */
unsigned char *rlvr_h5_chunk_batch_buffer(rlvr_h5_chunk_batch *b, size_t size);

/* Queues rows [offset, offset + rows) of column c; `raw` holds a whole
 * chunk (chunk_rows · elem_size bytes, zero beyond `rows`) and is owned by
 * the batch from now on, also on failure. Writes the batch when full. */
int rlvr_h5_chunk_batch_add(rlvr_h5_chunk_batch *b, rlvr_h5_column *c, uint64_t offset, size_t rows,
                            unsigned char *raw);

/* Encodes every queued chunk in parallel, then extends the datasets and
 * writes the chunks in the order they were queued. */
int rlvr_h5_chunk_batch_write(rlvr_h5_chunk_batch *b);

/* HDF5's Fletcher32 (H5_checksum_fletcher32): 16-bit big-endian words. */
uint32_t rlvr_h5_fletcher32(const void *data, size_t n);

#endif
