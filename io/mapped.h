/* io/mapped.h — a whole file mapped read-only, the input of the model-file
 * readers (io/gguf.h, io/safetensors.h). The bytes are untrusted: a reader
 * checks every offset against `size` before it reads. */
#ifndef RLVR_IO_MAPPED_H
#define RLVR_IO_MAPPED_H

#include <stdint.h>

typedef struct {
    unsigned char *data; /* (size) bytes; NULL for an empty file */
    uint64_t size;
} rlvr_mapped_file;

/* Maps the regular file at `path`. Errors name the file: RLVR_EIO when it
 * cannot be opened, stat'ed or mapped, RLVR_EINVAL when it is not a regular
 * file. *out is set only on success. */
int rlvr_mapped_file_open(rlvr_mapped_file *out, const char *path);

/* Unmaps; a zeroed struct is fine. */
void rlvr_mapped_file_close(rlvr_mapped_file *m);

#endif
