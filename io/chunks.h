/* io/chunks.h — whole chunks of appendable columns encoded on every core
 * and stored with H5Dwrite_chunk (internal to io/).
 *
 * HDF5 runs its filters inside H5Dwrite, one chunk after another on the
 * calling thread, and zlib's deflate is slow; a shard step would spend most
 * of its time there. A batch instead runs the pipeline the dataset declares
 * — shuffle (level > 0), deflate in a zlib wrapper (level > 0: ISA-L's
 * igzip at levels 1..3, libdeflate at 4..9), Fletcher32 appended
 * little-endian — itself: helper threads encode chunks
 * as soon as they are queued, while the caller goes on filling the next
 * ones, and the caller stores the encoded chunks in the order they were
 * queued (all HDF5 calls stay on the caller's thread). The bytes stored are
 * a standard zlib stream (RFC 1950) of the shuffled chunk followed by
 * HDF5's Fletcher32 of those bytes, so every HDF5 reader (h5py, h5dump,
 * rlvr) decodes and checks them with HDF5's own deflate and Fletcher32
 * filters.
 *
 * Threads: omp_get_max_threads() in all (OMP_NUM_THREADS), the caller
 * included, so there are that many minus one helpers; they live as long as
 * the batch and sleep when there is nothing to encode. Level 0 has no
 * helpers: a checksum is cheaper than handing a chunk over. A child of
 * fork() must not go on with a batch its parent was filling.
 *
 * Buffers: a chunk's raw buffer holds chunk_rows · elem_size bytes plus
 * RLVR_H5_CHUNK_SLACK, where an uncompressed chunk's checksum goes, so
 * level 0 stores the buffer itself. Buffers of stored chunks are reused,
 * and a freed batch leaves them (up to 64 MiB) to the next one, so a shard
 * a step does not fault fresh pages in every step; each thread keeps its
 * compressor and shuffle scratch. */
#ifndef RLVR_IO_CHUNKS_H
#define RLVR_IO_CHUNKS_H

#include "io/h5util.h"

#include <stddef.h>
#include <stdint.h>

/* Bytes after a chunk's data for its Fletcher32 checksum. */
#define RLVR_H5_CHUNK_SLACK 4

typedef struct rlvr_h5_chunk_batch rlvr_h5_chunk_batch;

/* level: the deflate level the columns were created with, 0..9 as for
 * H5Pset_deflate (0: no shuffle or deflate). max_bytes: raw bytes of
 * queued chunks not yet stored beyond which rlvr_h5_chunk_batch_add waits
 * (encoding chunks itself meanwhile). */
int rlvr_h5_chunk_batch_new(rlvr_h5_chunk_batch **out, int level, size_t max_bytes);
/* Stops the helpers and frees everything, stored or not. NULL: no-op. */
void rlvr_h5_chunk_batch_free(rlvr_h5_chunk_batch *b);

/* Column c (no rows pushed yet) sends its chunks to the batch from now on;
 * its buffer becomes one of the batch's pool. */
int rlvr_h5_chunk_batch_attach(rlvr_h5_chunk_batch *b, rlvr_h5_column *c);
/* Before the batch is freed: column c's buffer goes back to the pool
 * (pushed rows not yet queued are dropped) and c is detached. */
void rlvr_h5_chunk_batch_detach(rlvr_h5_chunk_batch *b, rlvr_h5_column *c);

/* A buffer of at least `size` + RLVR_H5_CHUNK_SLACK bytes for
 * rlvr_h5_chunk_batch_add, reusing those of chunks already stored
 * (malloc'd; NULL when out of memory). */
unsigned char *rlvr_h5_chunk_batch_buffer(rlvr_h5_chunk_batch *b, size_t size);

/* Queues rows [offset, offset + rows) of column c; `raw` holds a whole
 * chunk (chunk_rows · elem_size bytes, zero beyond `rows`, plus
 * RLVR_H5_CHUNK_SLACK bytes of room) and is owned by the batch from now on,
 * also on failure. Stores the chunks encoded so far. After a failure every
 * later call fails too. */
int rlvr_h5_chunk_batch_add(rlvr_h5_chunk_batch *b, rlvr_h5_column *c, uint64_t offset, size_t rows,
                            unsigned char *raw);

/* Asks the kernel to start writing the file (`fd`, the one HDF5 writes
 * through) to disk each time another `every` bytes were stored, so that the
 * fsync at the end has little left to wait for (Linux; elsewhere a no-op).
 * fd < 0: never. */
void rlvr_h5_chunk_batch_writeback(rlvr_h5_chunk_batch *b, int fd, size_t every);

/* Encodes (with the helpers) and stores every queued chunk, extending each
 * dataset to the rows queued for it. */
int rlvr_h5_chunk_batch_write(rlvr_h5_chunk_batch *b);

/* HDF5's Fletcher32 (H5_checksum_fletcher32): 16-bit big-endian words. */
uint32_t rlvr_h5_fletcher32(const void *data, size_t n);

/* HDF5's shuffle filter (H5Z_filter_shuffle) on `count` elements of
 * `elem_size` bytes: byte j of every element, then byte j+1, ... */
void rlvr_h5_shuffle(unsigned char *dst, const unsigned char *src, size_t count, size_t elem_size);

#endif
