/* Every deflate level of shard chunks (io/chunks.c: ISA-L's igzip at
 * levels 1..3, libdeflate at 4..9): chunks written through a batch are
 * standard zlib streams that HDF5's own deflate filter decodes into exactly
 * the rows pushed, also for incompressible data (where igzip's output would
 * be larger than its input and it must store the data instead, within the
 * stored-block bound); and the same input at the same level gives the same
 * chunk bytes whatever the number of threads.
 *
 * Usage: test_chunk_levels [DIR] — with DIR, the files of every level and
 * each column's raw values (COLUMN.bin) are left there for
 * test_chunk_levels_readers.sh (h5py and h5dump). */
#include "io/chunks.h"
#include "io/h5util.h"
#include "io_fixtures.h"
#include "test.h"

#include <stdint.h>
#ifdef _OPENMP
#include <omp.h>
#endif

enum { N_COLUMNS = 3, ROWS = 300007 };

typedef struct {
    const char *name; /* also the .bin file's name */
    rlvr_dtype dtype;
    size_t chunk_rows;
} column_case;

static const column_case cases[N_COLUMNS] = {
    {"tokens", RLVR_DT_I32, 65536}, /* small ids: compress well after the shuffle */
    {"noise", RLVR_DT_U8, 200003},  /* random bytes: several 64 KiB stored blocks per chunk */
    {"logprob", RLVR_DT_F32, 40000},
};

static uint64_t rng_state;
static uint32_t next_u32(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

static void fill(unsigned char *data[N_COLUMNS]) {
    rng_state = 0x9e3779b97f4a7c15ull;
    int32_t *tokens = (int32_t *)data[0];
    float *logprob = (float *)data[2];
    for (size_t i = 0; i < ROWS; i++) {
        tokens[i] = (int32_t)(next_u32() % 300);
        data[1][i] = (unsigned char)next_u32();
        logprob[i] = -(float)(next_u32() % 10000) / 1000.0f;
    }
}

/* Writes every column at `level` with `threads` threads in all. */
static void write_file(const char *path, int level, int threads, unsigned char *data[N_COLUMNS]) {
#ifdef _OPENMP
    omp_set_num_threads(threads);
#else
    (void)threads;
#endif
    hid_t file;
    CHECK_OK(rlvr_h5_file_create(&file, path, false));
    if (file < 0) return;
    rlvr_h5_chunk_batch *batch = NULL;
    CHECK_OK(rlvr_h5_chunk_batch_new(&batch, level, 1u << 20));
    rlvr_h5_column cols[N_COLUMNS];
    for (int c = 0; c < N_COLUMNS; c++) {
        CHECK_OK(rlvr_h5_column_create(&cols[c], file, cases[c].name, rlvr_h5_file_type(cases[c].dtype),
                                       rlvr_h5_mem_type(cases[c].dtype), false, rlvr_dtype_size(cases[c].dtype),
                                       cases[c].chunk_rows, level));
        if (batch) CHECK_OK(rlvr_h5_chunk_batch_attach(batch, &cols[c]));
    }
    const size_t step = 4999;
    for (size_t at = 0; at < ROWS; at += step) {
        size_t k = ROWS - at < step ? ROWS - at : step;
        for (int c = 0; c < N_COLUMNS; c++)
            CHECK_OK(rlvr_h5_column_push(&cols[c], data[c] + at * rlvr_dtype_size(cases[c].dtype), k));
    }
    for (int c = 0; c < N_COLUMNS; c++) CHECK_OK(rlvr_h5_column_flush(&cols[c]));
    if (batch) CHECK_OK(rlvr_h5_chunk_batch_write(batch));
    for (int c = 0; c < N_COLUMNS; c++) {
        if (batch) rlvr_h5_chunk_batch_detach(batch, &cols[c]);
        rlvr_h5_column_close(&cols[c]);
    }
    rlvr_h5_chunk_batch_free(batch);
    rlvr_h5_close(&file);
}

/* Largest zlib stream of n bytes stored uncompressed: 2-byte header,
 * 5 bytes per 65535-byte stored block, 4-byte Adler-32. */
static size_t stored_zlib_size(size_t n) { return 2 + 5 * ((n + 65534) / 65535) + n + 4; }

/* Every stored chunk of column c, concatenated (*out, malloc'd), after
 * checking that each is a zlib stream (level > 0) no larger than storing
 * its data would be (levels 1..3: igzip falls back to stored blocks). */
static size_t read_chunks(hid_t f, int c, int level, unsigned char **out) {
    *out = NULL;
    size_t es = rlvr_dtype_size(cases[c].dtype), total = 0;
    hid_t d = H5Dopen2(f, cases[c].name, H5P_DEFAULT);
    hid_t s = d >= 0 ? H5Dget_space(d) : H5I_INVALID_HID;
    hsize_t n_chunks = 0;
    CHECK(s >= 0 && H5Dget_num_chunks(d, s, &n_chunks) >= 0);
    int bad = 0;
    for (hsize_t i = 0; i < n_chunks; i++) {
        hsize_t offset[1], size = 0;
        haddr_t addr;
        unsigned mask = 1;
        uint32_t filters = 1;
        unsigned char *grown = NULL;
        if (H5Dget_chunk_info(d, s, i, offset, &mask, &addr, &size) < 0 || size < 4 ||
            !(grown = realloc(*out, total + size)) ||
            (*out = grown, H5Dread_chunk(d, H5P_DEFAULT, offset, &filters, *out + total) < 0)) {
            bad++;
            continue;
        }
        const unsigned char *z = *out + total;
        size_t raw = cases[c].chunk_rows * es;
        bool zlib = level == 0 || ((z[0] & 0x0f) == 8 && (z[0] >> 4) <= 7 && ((unsigned)z[0] << 8 | z[1]) % 31 == 0);
        bool fits = level == 0 ? size == raw + 4 : level > 3 || size <= stored_zlib_size(raw) + 4;
        if (!zlib || !fits) bad++;
        total += size;
    }
    CHECK_MSG(bad == 0, "%s at level %d: %d chunks are not zlib streams within the stored bound", cases[c].name,
              level, bad);
    H5Eclear2(H5E_DEFAULT);
    if (s >= 0) H5Sclose(s);
    if (d >= 0) H5Dclose(d);
    return total;
}

/* HDF5's filters give back every value; returns the bytes stored. */
static size_t check_file(const char *path, int level, unsigned char *data[N_COLUMNS]) {
    size_t stored = 0;
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(f >= 0);
    for (int c = 0; f >= 0 && c < N_COLUMNS; c++) {
        size_t es = rlvr_dtype_size(cases[c].dtype);
        void *back = NULL;
        hsize_t n = 0;
        CHECK_OK(rlvr_h5_read_column(f, cases[c].name, rlvr_h5_mem_type(cases[c].dtype), es, &back, &n, path));
        CHECK_MSG(back && n == ROWS && memcmp(back, data[c], ROWS * es) == 0,
                  "%s at level %d: %llu rows back of %d, or values differ", cases[c].name, level,
                  (unsigned long long)n, ROWS);
        free(back);
        unsigned char *chunks;
        stored += read_chunks(f, c, level, &chunks);
        free(chunks);
    }
    if (f >= 0) H5Fclose(f);
    return stored;
}

/* The chunk bytes of two files written at the same level agree. */
static void check_same_chunks(const char *a, const char *b, int level) {
    hid_t fa = H5Fopen(a, H5F_ACC_RDONLY, H5P_DEFAULT), fb = H5Fopen(b, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(fa >= 0 && fb >= 0);
    for (int c = 0; fa >= 0 && fb >= 0 && c < N_COLUMNS; c++) {
        unsigned char *ca, *cb;
        size_t na = read_chunks(fa, c, level, &ca), nb = read_chunks(fb, c, level, &cb);
        CHECK_MSG(na == nb && na > 0 && memcmp(ca, cb, na) == 0,
                  "%s at level %d: 1 and 3 threads stored different chunks (%zu vs %zu bytes)", cases[c].name,
                  level, na, nb);
        free(ca);
        free(cb);
    }
    if (fa >= 0) H5Fclose(fa);
    if (fb >= 0) H5Fclose(fb);
}

/* Leaves freed memory full of small numbers, which a compressor state
 * taken from the heap next must not depend on (igzip reads a window size
 * from its stream structure: 12 would mean 4 KiB). Returns a block to free
 * afterwards: it keeps the freed ones from going back to the system. */
static void *dirty_heap(void) {
    enum { BLOCKS = 32, SIZE = 100000 };
    void *p[BLOCKS];
    for (int i = 0; i < BLOCKS; i++)
        if ((p[i] = malloc(SIZE))) memset(p[i], 12, SIZE);
    void *fence = malloc(64);
    for (int i = 0; i < BLOCKS; i++) free(p[i]);
    return fence;
}

static bool save(const char *dir, const char *name, const void *p, size_t n) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.bin", dir, name);
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(p, 1, n, f) == n;
    if (f && fclose(f) != 0) ok = false;
    return ok;
}

int main(int argc, char **argv) {
    char dir[4096];
    bool keep = argc > 1;
    if (keep) snprintf(dir, sizeof dir, "%s", argv[1]);
    else fixture_tmpdir(dir, sizeof dir, "chunk_levels");
    unsigned char *data[N_COLUMNS];
    for (int c = 0; c < N_COLUMNS; c++) data[c] = malloc(ROWS * rlvr_dtype_size(cases[c].dtype));
    if (!data[0] || !data[1] || !data[2]) {
        CHECK(false);
        return test_summary("test_chunk_levels");
    }
    fill(data);
    for (int c = 0; keep && c < N_COLUMNS; c++)
        CHECK_MSG(save(dir, cases[c].name, data[c], ROWS * rlvr_dtype_size(cases[c].dtype)), "writing %s/%s.bin",
                  dir, cases[c].name);
    for (int level = 0; level <= 9; level++) {
        char one[4200], three[4200];
        snprintf(one, sizeof one, "%s/level%d.h5", dir, level);
        snprintf(three, sizeof three, "%s/level%d_t3.h5", dir, level);
        void *fence = dirty_heap(); /* the caller compresses alone: its state comes from there */
        write_file(one, level, 1, data);
        free(fence);
        write_file(three, level, 3, data);
        size_t stored = check_file(one, level, data);
        check_file(three, level, data);
        check_same_chunks(one, three, level);
        printf("level %d: %zu bytes stored\n", level, stored);
        remove(three);
        if (!keep) remove(one);
    }
    for (int c = 0; c < N_COLUMNS; c++) free(data[c]);
    if (!keep) fixture_rmtree(dir);
    return test_summary("test_chunk_levels");
}
