/* core/mem.c — see mem.h. A 64-byte header in front of the buffer records
 * the mapping's length, so freeing needs only the pointer. Under
 * AddressSanitizer: the heap (mem.h). */
#include "core/mem.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { HEADER = 64 };

void rlvr_mem_release(void *p, size_t bytes) {
    long page = sysconf(_SC_PAGESIZE);
    if (!p || page <= 0) return;
    uintptr_t lo = ((uintptr_t)p + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    uintptr_t hi = ((uintptr_t)p + bytes) & ~((uintptr_t)page - 1);
    /* best effort: on failure the pages simply stay */
    if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

#if !RLVR_MEM_FORK_PRIVATE
/* exactly `bytes` long, so that ASan catches the first byte past the end */
void *rlvr_mem_alloc(size_t bytes) {
    void *p = NULL;
    int rc = posix_memalign(&p, HEADER, bytes ? bytes : 1);
    if (rc != 0) {
        errno = rc;
        return NULL;
    }
    memset(p, 0, bytes ? bytes : 1);
    return p;
}

void rlvr_mem_free(void *p) { free(p); }
#else

void *rlvr_mem_alloc(size_t bytes) {
    if (bytes > SIZE_MAX - HEADER) {
        errno = ENOMEM;
        return NULL;
    }
    size_t len = bytes + HEADER;
    void *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) return NULL;
    /* best effort: a kernel without MADV_DONTFORK still gives working memory */
    (void)madvise(base, len, MADV_DONTFORK);
    *(size_t *)base = len;
    return (char *)base + HEADER;
}

void rlvr_mem_free(void *p) {
    if (!p) return;
    char *base = (char *)p - HEADER;
    munmap(base, *(size_t *)base);
}
#endif
