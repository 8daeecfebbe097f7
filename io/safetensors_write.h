/* io/safetensors_write.h — writing safetensors files from float32 data (the
 * weights of an exported model), and the float32 → 16-bit roundings the
 * weight writers share.
 *
 *   rlvr_st_writer_new(&w)
 *   rlvr_st_writer_add(w, name, dtype, rank, shape) ...   every tensor, in order
 *   rlvr_st_writer_open(w, path)                         header ("__metadata__":
 *   rlvr_st_writer_put(w, data) ...                      {"format": "pt"})
 *   rlvr_st_writer_finish(w)                             fsync, close
 *   rlvr_st_writer_free(w)
 *
 * Tensors are stored in the order they were added, with no gaps, as the
 * reader (io/safetensors.h) and the safetensors library require. The file
 * is written where it is told: callers make it atomic (a temporary name or
 * directory, renamed). */
#ifndef RLVR_IO_SAFETENSORS_WRITE_H
#define RLVR_IO_SAFETENSORS_WRITE_H

#include "io/safetensors.h"

#include <stddef.h>
#include <stdint.h>

/* float32 to bfloat16, round to nearest even (NaN → 0x7fc0), as PyTorch's
 * tensor.to(torch.bfloat16). */
uint16_t rlvr_f32_to_bf16(float f);
/* float32 to IEEE half, round to nearest even with subnormals and overflow
 * to infinity, as numpy's astype(np.float16). */
uint16_t rlvr_f32_to_half(float f);

typedef struct rlvr_st_writer rlvr_st_writer;

int rlvr_st_writer_new(rlvr_st_writer **out);
void rlvr_st_writer_free(rlvr_st_writer *w);
/* Declares the next tensor: dtype F32, F16 or BF16, rank 1 or 2. */
int rlvr_st_writer_add(rlvr_st_writer *w, const char *name, rlvr_st_dtype dtype, size_t rank, const uint64_t *shape);
/* Creates `path` and writes the header of every declared tensor. */
int rlvr_st_writer_open(rlvr_st_writer *w, const char *path);
/* Writes the next declared tensor's elements, converted to its dtype. */
int rlvr_st_writer_put(rlvr_st_writer *w, const float *data);
/* Checks every tensor was written, fsyncs and closes the file. */
int rlvr_st_writer_finish(rlvr_st_writer *w);

#endif
