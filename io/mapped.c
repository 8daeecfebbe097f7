/* io/mapped.c — a whole file mapped read-only (io/mapped.h). */
#include "io/mapped.h"

#include "core/error.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int rlvr_mapped_file_open(rlvr_mapped_file *out, const char *path) {
    rlvr_mapped_file m = {0};
    struct stat sb;
    int rc = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return RLVR_FAIL(RLVR_EIO, "cannot open %s: %s", path, strerror(errno));
    if (fstat(fd, &sb) < 0) {
        rc = RLVR_FAIL(RLVR_EIO, "cannot stat %s: %s", path, strerror(errno));
        goto cleanup;
    }
    if (!S_ISREG(sb.st_mode)) {
        rc = RLVR_FAIL(RLVR_EINVAL, "%s: not a regular file", path);
        goto cleanup;
    }
    m.size = (uint64_t)sb.st_size;
    if (m.size > 0) { /* mmap refuses a length of 0 */
        void *p = mmap(NULL, m.size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            rc = RLVR_FAIL(RLVR_EIO, "cannot mmap %s: %s", path, strerror(errno));
            goto cleanup;
        }
        m.data = p;
    }
    *out = m;
cleanup:
    close(fd);
    return rc;
}

void rlvr_mapped_file_close(rlvr_mapped_file *m) {
    if (m->data) munmap(m->data, m->size);
    m->data = NULL;
    m->size = 0;
}
