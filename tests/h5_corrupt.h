/* tests/h5_corrupt.h — damaging an HDF5 dataset on purpose, for the tests
 * that check corruption is detected (checksums) and refused. */
#ifndef RLVR_TESTS_H5_CORRUPT_H
#define RLVR_TESTS_H5_CORRUPT_H

#include "io/file.h"

#include <fcntl.h>
#include <hdf5.h>
#include <stdbool.h>
#include <unistd.h>

/* Inverts three bytes in the middle of chunk 0 of `dataset` in the file at
 * `path`, in place (the chunk's address from HDF5 itself, so the bytes are
 * the dataset's and nothing else). False when the chunk cannot be found or
 * written. */
static inline bool test_corrupt_chunk(const char *path, const char *dataset) {
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return false;
    hid_t d = H5Dopen2(f, dataset, H5P_DEFAULT);
    hid_t s = d >= 0 ? H5Dget_space(d) : H5I_INVALID_HID;
    hsize_t offset[RLVR_IO_MAX_RANK];
    unsigned mask = 0;
    haddr_t addr = 0;
    hsize_t size = 0;
    bool ok = s >= 0 && H5Dget_chunk_info(d, s, 0, offset, &mask, &addr, &size) >= 0 && size > 8;
    if (s >= 0) H5Sclose(s);
    if (d >= 0) H5Dclose(d);
    H5Fclose(f);
    int fd = ok ? open(path, O_RDWR) : -1;
    if (fd < 0) return false;
    for (int k = 0; k < 3; k++) {
        off_t at = (off_t)(addr + size / 2 + (hsize_t)k);
        unsigned char c;
        ok = ok && pread(fd, &c, 1, at) == 1;
        c ^= 0xff;
        ok = ok && pwrite(fd, &c, 1, at) == 1;
    }
    close(fd);
    return ok;
}

#endif
