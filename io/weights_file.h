/* io/weights_file.h — internal to io/: what the safetensors and GGUF
 * writers share: a list of declared float tensors, and one output file
 * they are streamed to in order, converted from float32 (F32, F16 or
 * BF16) one tensor at a time. */
#ifndef RLVR_IO_WEIGHTS_FILE_H
#define RLVR_IO_WEIGHTS_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum { RLVR_WFILE_F32, RLVR_WFILE_F16, RLVR_WFILE_BF16 };

typedef struct {
    char *name;
    int type;            /* RLVR_WFILE_* */
    size_t rank;         /* 1..4 */
    uint64_t shape[4];
    uint64_t n_elements, n_bytes;
} rlvr_wfile_tensor;

typedef struct {
    rlvr_wfile_tensor *t;
    size_t n, cap;
    size_t next;          /* the next tensor rlvr_wfile_put writes */
    FILE *fp;
    char *path;
    uint64_t pos;         /* bytes written */
    uint64_t data_start;  /* where the tensor data begins (alignment is relative to it) */
} rlvr_wfile;

int rlvr_wfile_add(rlvr_wfile *f, const char *name, int type, size_t rank, const uint64_t *shape);
/* Creates path for writing. */
int rlvr_wfile_open(rlvr_wfile *f, const char *path);
int rlvr_wfile_write(rlvr_wfile *f, const void *bytes, size_t n);
/* Zero bytes up to the next multiple of align after data_start. */
int rlvr_wfile_pad(rlvr_wfile *f, uint64_t align);
/* Writes tensor `next` from float32 data, then pads to `align`. */
int rlvr_wfile_put(rlvr_wfile *f, const float *data, uint64_t align);
/* Every tensor written: flush, fsync, close. */
int rlvr_wfile_finish(rlvr_wfile *f);
/* Frees the list and closes the file if open (it is not removed). */
void rlvr_wfile_clear(rlvr_wfile *f);

#endif
