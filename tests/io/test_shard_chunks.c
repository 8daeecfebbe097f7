/* Shard chunk encoding (io/chunks.c): the Fletcher32 and shuffle that
 * replace HDF5's filters agree with HDF5's own, and chunks encoded by a
 * batch — any level, any number of helper threads, odd sizes, more chunks
 * in flight than the batch holds — are decoded and checksum-verified by
 * HDF5's own deflate and Fletcher32 filters into exactly the rows pushed. */
#include "io/chunks.h"
#include "io/h5util.h"
#include "io_fixtures.h"
#include "test.h"

#include <stdint.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* HDF5's implementation, exported by libhdf5 (H5private.h): the reference. */
uint32_t H5_checksum_fletcher32(const void *data, size_t len);

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t next_u32(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

static void test_fletcher32(void) {
    size_t cap = (1u << 20) + 7;
    unsigned char *buf = malloc(cap);
    if (!buf) {
        CHECK(buf != NULL);
        return;
    }
    int mismatches = 0, cases = 0;
    /* every length up to past several 64-word groups and HDF5's 360-word
     * blocks, in four kinds of content */
    for (int kind = 0; kind < 4; kind++) {
        for (size_t i = 0; i < 2000; i++)
            buf[i] = kind == 0 ? 0 : kind == 1 ? 0xff : kind == 2 ? (unsigned char)next_u32() : (unsigned char)(i % 3);
        for (size_t n = 0; n <= 2000; n++, cases++)
            if (rlvr_h5_fletcher32(buf, n) != H5_checksum_fletcher32(buf, n)) mismatches++;
    }
    /* sums that land on multiples of 65535 (HDF5 keeps 0xffff, not 0) */
    memset(buf, 0, 2000);
    buf[1] = 1;
    for (size_t n = 2; n <= 2000; n += 2, cases++) {
        buf[n - 1] = 0xff;
        buf[n - 2] = 0xff;
        if (rlvr_h5_fletcher32(buf, n) != H5_checksum_fletcher32(buf, n)) mismatches++;
    }
    /* big random buffers, even and odd, with a zero or non-zero last byte */
    for (size_t i = 0; i < cap; i++) buf[i] = (unsigned char)next_u32();
    const size_t big[] = {cap, cap - 1, 262144, 262147, 65536 * 8 + 1};
    for (size_t k = 0; k < sizeof big / sizeof big[0]; k++, cases++)
        if (rlvr_h5_fletcher32(buf, big[k]) != H5_checksum_fletcher32(buf, big[k])) mismatches++;
    CHECK_MSG(mismatches == 0, "%d of %d lengths disagree with H5_checksum_fletcher32", mismatches, cases);
    CHECK(rlvr_h5_fletcher32(buf, 0) == 0);
    free(buf);
}

static void test_shuffle(void) {
    const size_t elems[] = {1, 2, 3, 4, 8, 16};
    unsigned char src[16 * 70], got[16 * 70], want[16 * 70];
    for (size_t i = 0; i < sizeof src; i++) src[i] = (unsigned char)next_u32();
    int bad = 0;
    for (size_t e = 0; e < sizeof elems / sizeof elems[0]; e++)
        for (size_t count = 0; count <= 70; count++) {
            size_t k = elems[e];
            for (size_t j = 0; j < k; j++)
                for (size_t i = 0; i < count; i++) want[j * count + i] = src[i * k + j];
            memset(got, 0xaa, sizeof got);
            rlvr_h5_shuffle(got, src, count, k);
            if (memcmp(got, want, count * k) != 0 || (count * k < sizeof got && got[count * k] != 0xaa)) bad++;
        }
    CHECK_MSG(bad == 0, "%d shuffles differ from byte j of every element, then byte j+1", bad);
}

typedef struct {
    const char *name;
    rlvr_dtype dtype;
    size_t chunk_rows;
} column_case;

/* Writes `rows` rows of three columns through a batch at `level` with
 * `threads` threads in all, pushing `step` rows at a time, then reads them
 * back through HDF5 and checks every value and every chunk's checksum. */
static void round_trip(const char *dir, int level, int threads, size_t rows, size_t step, size_t chunk_rows) {
#ifdef _OPENMP
    omp_set_num_threads(threads);
#else
    (void)threads;
#endif
    char path[4200];
    snprintf(path, sizeof path, "%s/chunks_l%d_t%d_c%zu.h5", dir, level, threads, chunk_rows);
    const column_case cases[3] = {
        {"a/u8", RLVR_DT_U8, chunk_rows},       /* odd byte counts when chunk_rows is odd */
        {"a/f32", RLVR_DT_F32, chunk_rows * 2}, /* another chunk size in the same batch */
        {"b/i64", RLVR_DT_I64, chunk_rows},
    };
    unsigned char *data[3];
    for (int c = 0; c < 3; c++) {
        size_t es = rlvr_dtype_size(cases[c].dtype);
        data[c] = malloc(rows * es + 1);
        for (size_t i = 0; data[c] && i < rows * es; i++)
            /* mostly small values, like token ids and masks, with noise */
            data[c][i] = (unsigned char)(i % es == 0 ? next_u32() % 7 : i % 5 == 0 ? next_u32() : 0);
    }
    if (!data[0] || !data[1] || !data[2]) {
        CHECK(false);
        goto done_data;
    }
    hid_t file;
    CHECK_OK(rlvr_h5_file_create(&file, path, false));
    if (file < 0) goto done_data;
    rlvr_h5_column cols[3];
    rlvr_h5_chunk_batch *batch = NULL;
    CHECK_OK(rlvr_h5_chunk_batch_new(&batch, level, 1u << 16));
    for (int c = 0; c < 3; c++) {
        CHECK_OK(rlvr_h5_column_create(&cols[c], file, cases[c].name, rlvr_h5_file_type(cases[c].dtype),
                                       rlvr_h5_mem_type(cases[c].dtype), false, rlvr_dtype_size(cases[c].dtype),
                                       cases[c].chunk_rows, level));
        if (batch) CHECK_OK(rlvr_h5_chunk_batch_attach(batch, &cols[c]));
    }
    for (size_t at = 0; at < rows; at += step) {
        size_t k = rows - at < step ? rows - at : step;
        for (int c = 0; c < 3; c++) {
            size_t es = rlvr_dtype_size(cases[c].dtype);
            CHECK_OK(rlvr_h5_column_push(&cols[c], data[c] + at * es, k));
        }
    }
    for (int c = 0; c < 3; c++) CHECK_OK(rlvr_h5_column_flush(&cols[c]));
    if (batch) CHECK_OK(rlvr_h5_chunk_batch_write(batch));
    /* a sealed column takes no more rows */
    if (rows % chunk_rows != 0) {
        unsigned char one[8] = {0};
        CHECK(rlvr_h5_column_push(&cols[0], one, 1) == 0 && rlvr_h5_column_flush(&cols[0]) == RLVR_ESTATE);
    }
    for (int c = 0; c < 3; c++) {
        if (batch) rlvr_h5_chunk_batch_detach(batch, &cols[c]);
        rlvr_h5_column_close(&cols[c]);
    }
    rlvr_h5_chunk_batch_free(batch);
    rlvr_h5_close(&file);

    /* read back with HDF5's filters: deflate, shuffle, Fletcher32 verified */
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(f >= 0);
    for (int c = 0; f >= 0 && c < 3; c++) {
        size_t es = rlvr_dtype_size(cases[c].dtype);
        void *back = NULL;
        hsize_t n = 0;
        CHECK_OK(rlvr_h5_read_column(f, cases[c].name, rlvr_h5_mem_type(cases[c].dtype), es, &back, &n, path));
        CHECK_MSG(back && n == rows && memcmp(back, data[c], rows * es) == 0,
                  "%s at level %d, %d threads, chunk %zu: %llu rows back, %zu pushed, or values differ",
                  cases[c].name, level, threads, cases[c].chunk_rows, (unsigned long long)n, rows);
        free(back);
        /* each stored chunk: no filter skipped, Fletcher32 of the rest last */
        hid_t d = H5Dopen2(f, cases[c].name, H5P_DEFAULT);
        hid_t s = d >= 0 ? H5Dget_space(d) : H5I_INVALID_HID;
        hsize_t n_chunks = 0;
        CHECK(s >= 0 && H5Dget_num_chunks(d, s, &n_chunks) >= 0);
        CHECK(n_chunks == (rows + cases[c].chunk_rows - 1) / cases[c].chunk_rows);
        int bad = 0;
        for (hsize_t i = 0; i < n_chunks; i++) {
            hsize_t offset[1], size = 0;
            haddr_t addr;
            unsigned mask = 1;
            if (H5Dget_chunk_info(d, s, i, offset, &mask, &addr, &size) < 0 || mask != 0 || size < 4) {
                bad++;
                continue;
            }
            unsigned char *raw = malloc(size);
            uint32_t filters = 1;
            if (!raw || H5Dread_chunk(d, H5P_DEFAULT, offset, &filters, raw) < 0) {
                bad++;
            } else {
                uint32_t sum = H5_checksum_fletcher32(raw, size - 4), stored = 0;
                for (int b = 0; b < 4; b++) stored |= (uint32_t)raw[size - 4 + (size_t)b] << (8 * b);
                /* deflated chunks are zlib streams (RFC 1950: CM 8, CINFO <= 7) */
                bool zlib = level == 0 || ((raw[0] & 0x0f) == 8 && (raw[0] >> 4) <= 7 &&
                                           ((unsigned)raw[0] << 8 | raw[1]) % 31 == 0);
                if (filters != 0 || sum != stored || !zlib ||
                    (level == 0 && size != cases[c].chunk_rows * es + 4))
                    bad++;
            }
            free(raw);
        }
        CHECK_MSG(bad == 0, "%s at level %d: %d chunks are not what HDF5's filters store", cases[c].name, level,
                  bad);
        H5Eclear2(H5E_DEFAULT);
        if (s >= 0) H5Sclose(s);
        if (d >= 0) H5Dclose(d);
    }
    if (f >= 0) H5Fclose(f);
done_data:
    for (int c = 0; c < 3; c++) free(data[c]);
}

int main(void) {
    char dir[4096];
    fixture_tmpdir(dir, sizeof dir, "shard_chunks");
    test_fletcher32();
    test_shuffle();
    const int levels[] = {0, 1, 6, 9};
    for (size_t l = 0; l < sizeof levels / sizeof levels[0]; l++) {
        round_trip(dir, levels[l], 1, 10007, 333, 1001); /* alone: every chunk stored as it fills */
        round_trip(dir, levels[l], 3, 10007, 333, 1001); /* two helpers */
    }
    /* many more tiny chunks than the batch keeps in flight */
    round_trip(dir, 1, 2, 3001, 7, 3);
    round_trip(dir, 0, 2, 3001, 7, 3);
    /* whole chunks pushed at once, straight from the caller's memory */
    round_trip(dir, 1, 2, 4096, 4096, 512);
    fixture_rmtree(dir);
    return test_summary("test_shard_chunks");
}
