/* core/flat.h — flat images of small structures.
 *
 * For data handed to a process that does not share the runtime's memory
 * (the sandbox spawner and the runs it starts, enclave/sandbox_spawner.c): values are
 * appended to one growing buffer and referred to by their offsets, so the
 * image can be written to a file descriptor and used wherever it is read
 * back, at any address. Offsets are 16-byte aligned, and 0 never names a
 * value: it stands for NULL. The first value put is at RLVR_FLAT_FIRST, so a
 * structure put first (reserved with p = NULL, filled in at the end) is the
 * image's root, found without its offset.
 *
 *   rlvr_flat f = {0};
 *   uint64_t name = rlvr_flat_str(&f, "main.c");
 *   ...                      (f.failed: out of memory somewhere on the way)
 *   reader: const char *s = rlvr_flat_at(image, name);
 */
#ifndef RLVR_CORE_FLAT_H
#define RLVR_CORE_FLAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RLVR_FLAT_FIRST 16

typedef struct {
    char *data; /* (cap) bytes; the first 16 are a header no offset names */
    size_t len, cap;
    bool failed; /* an allocation failed: the image is incomplete */
} rlvr_flat;

/* Appends `len` bytes of `p` (uninitialised when p is NULL but len > 0);
 * returns their offset, or 0 for len = 0 and p = NULL, or on failure. */
uint64_t rlvr_flat_put(rlvr_flat *f, const void *p, size_t len);

/* Appends the NUL-terminated `s`; 0 for NULL. */
uint64_t rlvr_flat_str(rlvr_flat *f, const char *s);

/* Appends a NULL-terminated string vector; 0 for NULL. */
uint64_t rlvr_flat_strv(rlvr_flat *f, const char *const *v);

void rlvr_flat_free(rlvr_flat *f);

/* The value at `off` of an image (NULL for 0). `image` must be 16-byte
 * aligned (malloc'd) for structures to be read in place. */
void *rlvr_flat_at(char *image, uint64_t off);

/* The string vector at `off`, turned into `const char *` pointers in place
 * (the image is writable); NULL for 0. */
const char **rlvr_flat_strv_at(char *image, uint64_t off);

#endif
