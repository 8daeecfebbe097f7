/* io/h5util.c — HDF5 plumbing shared by the io/ files. */
#include "io/h5util.h"
#include "core/fs.h"
#include "core/error.h"
#include "io/chunks.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- errors ------------------------------------------------------------ */

static pthread_once_t h5_once = PTHREAD_ONCE_INIT;

static void h5_init_once(void) {
    H5open();
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

void rlvr_h5_init(void) { pthread_once(&h5_once, h5_init_once); }

typedef struct {
    char text[900];
    size_t len;
    int count;
    bool checksum;
    char last[256];
} h5_walk;

/* Most specific message first; keeps three distinct ones. */
static herr_t h5_walk_cb(unsigned n, const H5E_error2_t *e, void *data) {
    (void)n;
    h5_walk *w = data;
    if (!e->desc || !e->desc[0]) return 0;
    if (strcasestr(e->desc, "checksum")) w->checksum = true;
    if (w->count >= 3 || strcmp(w->last, e->desc) == 0) return 0;
    snprintf(w->last, sizeof w->last, "%s", e->desc);
    int k = snprintf(w->text + w->len, sizeof w->text - w->len, "%s%s() %s", w->count ? "; " : "",
                     e->func_name ? e->func_name : "?", e->desc);
    if (k > 0) w->len += (size_t)k < sizeof w->text - w->len ? (size_t)k : sizeof w->text - w->len - 1;
    w->count++;
    return 0;
}

int rlvr_h5_error_at(int code, const char *file, int line, const char *fmt, ...) {
    char what[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    h5_walk w = {.len = 0};
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, h5_walk_cb, &w);
    H5Eclear2(H5E_DEFAULT);
    if (w.checksum) code = RLVR_ECHECKSUM;
    if (w.count == 0) return rlvr_error_set_at(code, file, line, "%s", what);
    return rlvr_error_set_at(code, file, line, "%s%s (HDF5: %s)", what,
                             code == RLVR_ECHECKSUM ? ": stored data failed its checksum, the file is corrupt"
                                                    : "",
                             w.text);
}

void rlvr_h5_close(hid_t *id) {
    if (*id < 0) return;
    htri_t valid = H5Iis_valid(*id);
    if (valid > 0) {
        herr_t rc = 0;
        switch (H5Iget_type(*id)) {
        case H5I_FILE: rc = H5Fclose(*id); break;
        case H5I_GROUP: rc = H5Gclose(*id); break;
        case H5I_DATASET: rc = H5Dclose(*id); break;
        case H5I_DATASPACE: rc = H5Sclose(*id); break;
        case H5I_DATATYPE: rc = H5Tclose(*id); break;
        case H5I_ATTR: rc = H5Aclose(*id); break;
        case H5I_GENPROP_LST: rc = H5Pclose(*id); break;
        default: break;
        }
        if (rc < 0) H5Eclear2(H5E_DEFAULT);
    }
    *id = H5I_INVALID_HID;
}

/* ---- files ------------------------------------------------------------- */

int rlvr_h5_file_create(hid_t *out, const char *path, bool swmr_capable) {
    rlvr_h5_init();
    *out = H5I_INVALID_HID;
    int rc = 0;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    RLVR_H5_GOTO(fapl, rc, done, "creating %s", path);
    RLVR_H5_GOTO(H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG), rc, done, "creating %s", path);
    /* 1.8 format at least: superblock, object headers and B-trees carry
     * checksums, so damaged metadata is refused, not misread; SWMR needs
     * the 1.10 format */
    RLVR_H5_GOTO(H5Pset_libver_bounds(fapl, swmr_capable ? H5F_LIBVER_LATEST : H5F_LIBVER_V18, H5F_LIBVER_LATEST),
                 rc, done, "creating %s", path);
    *out = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (*out < 0) rc = rlvr_h5_error_at(RLVR_EIO, __FILE__, __LINE__, "cannot create HDF5 file %s", path);
done:
    rlvr_h5_close(&fapl);
    return rc;
}

int rlvr_h5_write_format(hid_t file, const char *format, int version) {
    RLVR_TRY(rlvr_h5_attr_put_str(file, "format", format));
    return rlvr_h5_attr_put_i64(file, "format_version", version);
}

int rlvr_h5_file_open(hid_t *out, const char *path, const char *format, int max_version, int *version,
                      bool swmr_read) {
    rlvr_h5_init();
    *out = H5I_INVALID_HID;
    struct stat st;
    if (stat(path, &st) != 0)
        return rlvr_error_set(errno == ENOENT ? RLVR_ENOTFOUND : RLVR_EIO, "cannot open %s: %s", path,
                              strerror(errno));
    if (!S_ISREG(st.st_mode)) return rlvr_error_set(RLVR_EIO, "cannot open %s: not a regular file", path);
    htri_t is_h5 = H5Fis_hdf5(path);
    if (is_h5 <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return rlvr_error_set(RLVR_EFORMAT, "%s is not an rlvr file: no HDF5 signature (expected format \"%s\")",
                              path, format ? format : "rlvr.*");
    }
    int rc = 0;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    RLVR_H5_GOTO(fapl, rc, fail, "opening %s", path);
    RLVR_H5_GOTO(H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG), rc, fail, "opening %s", path);
    *out = H5Fopen(path, H5F_ACC_RDONLY | (swmr_read ? H5F_ACC_SWMR_READ : 0), fapl);
    if (*out < 0) {
        rc = rlvr_h5_error_at(RLVR_EFORMAT, __FILE__, __LINE__,
                              "%s: cannot open as HDF5 (truncated, damaged or still being written)", path);
        goto fail;
    }
    char have[64];
    rc = rlvr_h5_attr_get_str(*out, "format", have, sizeof have, path);
    if (rc < 0) {
        rc = rlvr_error_set(RLVR_EFORMAT, "%s is not an rlvr file: root attribute \"format\" is missing", path);
        goto fail;
    }
    if (format && strcmp(have, format) != 0) {
        rc = rlvr_error_set(RLVR_EFORMAT, "%s: attribute \"format\" is \"%s\", expected \"%s\"", path, have,
                            format);
        goto fail;
    }
    int64_t v = 0;
    rc = rlvr_h5_attr_get_i64(*out, "format_version", &v, path);
    if (rc < 0) goto fail;
    if (v < 1 || (max_version > 0 && v > max_version)) {
        rc = rlvr_error_set(RLVR_EFORMAT,
                            "%s: attribute \"format_version\" is %lld; this rlvr reads %s versions 1..%d "
                            "(a newer rlvr wrote it?)",
                            path, (long long)v, have, max_version);
        goto fail;
    }
    if (version) *version = (int)v;
    rlvr_h5_close(&fapl);
    return 0;
fail:
    rlvr_h5_close(out);
    rlvr_h5_close(&fapl);
    return rc;
}

/* ---- attributes ---------------------------------------------------------- */

static int attr_put(hid_t obj, const char *name, hid_t type, hid_t mem_type, const void *value) {
    int rc = 0;
    hid_t space = H5I_INVALID_HID, attr = H5I_INVALID_HID;
    htri_t exists = H5Aexists(obj, name);
    RLVR_H5_GOTO(exists, rc, done, "checking attribute %s", name);
    if (exists) RLVR_H5_GOTO(H5Adelete(obj, name), rc, done, "replacing attribute %s", name);
    space = H5Screate(H5S_SCALAR);
    RLVR_H5_GOTO(space, rc, done, "writing attribute %s", name);
    attr = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    RLVR_H5_GOTO(attr, rc, done, "creating attribute %s", name);
    RLVR_H5_GOTO(H5Awrite(attr, mem_type, value), rc, done, "writing attribute %s", name);
done:
    rlvr_h5_close(&attr);
    rlvr_h5_close(&space);
    return rc;
}

int rlvr_h5_attr_put_str(hid_t obj, const char *name, const char *value) {
    hid_t type = H5Tcopy(H5T_C_S1);
    RLVR_H5_CHECK(type, "string type for attribute %s", name);
    int rc = 0;
    RLVR_H5_GOTO(H5Tset_size(type, H5T_VARIABLE), rc, done, "string type for attribute %s", name);
    RLVR_H5_GOTO(H5Tset_cset(type, H5T_CSET_UTF8), rc, done, "string type for attribute %s", name);
    const char *v = value ? value : "";
    rc = attr_put(obj, name, type, type, &v);
done:
    rlvr_h5_close(&type);
    return rc;
}

int rlvr_h5_attr_put_i64(hid_t obj, const char *name, int64_t value) {
    return attr_put(obj, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value);
}

int rlvr_h5_attr_put_u64(hid_t obj, const char *name, uint64_t value) {
    return attr_put(obj, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, &value);
}

int rlvr_h5_attr_put_f64(hid_t obj, const char *name, double value) {
    return attr_put(obj, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value);
}

bool rlvr_h5_attr_exists(hid_t obj, const char *name) {
    htri_t e = H5Aexists(obj, name);
    if (e < 0) H5Eclear2(H5E_DEFAULT);
    return e > 0;
}

/* Opens attribute `name` and checks it holds one value of class `cls`. */
static int attr_open(hid_t *attr, hid_t *type, hid_t obj, const char *name, H5T_class_t cls, const char *what) {
    *attr = *type = H5I_INVALID_HID;
    if (!rlvr_h5_attr_exists(obj, name))
        return rlvr_error_set(RLVR_EFORMAT, "%s: attribute \"%s\" is missing", what, name);
    *attr = H5Aopen(obj, name, H5P_DEFAULT);
    RLVR_H5_CHECK(*attr, "%s: opening attribute \"%s\"", what, name);
    *type = H5Aget_type(*attr);
    hid_t space = H5Aget_space(*attr);
    hssize_t n = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
    rlvr_h5_close(&space);
    H5T_class_t have = *type >= 0 ? H5Tget_class(*type) : H5T_NO_CLASS;
    bool ok = n == 1 && (have == cls || (cls == H5T_FLOAT && have == H5T_INTEGER));
    if (!ok) {
        rlvr_h5_close(type);
        rlvr_h5_close(attr);
        H5Eclear2(H5E_DEFAULT);
        return rlvr_error_set(RLVR_EFORMAT, "%s: attribute \"%s\" is not a single %s", what, name,
                              cls == H5T_STRING ? "string" : cls == H5T_INTEGER ? "integer" : "number");
    }
    return 0;
}

int rlvr_h5_attr_get_str_alloc(hid_t obj, const char *name, char **out, const char *what) {
    *out = NULL;
    hid_t attr, type;
    RLVR_TRY(attr_open(&attr, &type, obj, name, H5T_STRING, what));
    int rc = 0;
    hid_t mem = H5I_INVALID_HID;
    htri_t is_var = H5Tis_variable_str(type);
    RLVR_H5_GOTO(is_var, rc, done, "%s: attribute \"%s\"", what, name);
    if (is_var) {
        mem = H5Tcopy(H5T_C_S1);
        RLVR_H5_GOTO(mem, rc, done, "%s: attribute \"%s\"", what, name);
        RLVR_H5_GOTO(H5Tset_size(mem, H5T_VARIABLE), rc, done, "%s: attribute \"%s\"", what, name);
        RLVR_H5_GOTO(H5Tset_cset(mem, H5Tget_cset(type)), rc, done, "%s: attribute \"%s\"", what, name);
        char *p = NULL;
        RLVR_H5_GOTO(H5Aread(attr, mem, &p), rc, done, "%s: reading attribute \"%s\"", what, name);
        *out = strdup(p ? p : "");
        H5free_memory(p);
    } else {
        size_t size = H5Tget_size(type);
        *out = calloc(size + 1, 1);
        if (*out) RLVR_H5_GOTO(H5Aread(attr, type, *out), rc, done, "%s: reading attribute \"%s\"", what, name);
    }
    if (!*out) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory reading attribute %s", name);
done:
    if (rc < 0) {
        free(*out);
        *out = NULL;
    }
    rlvr_h5_close(&mem);
    rlvr_h5_close(&type);
    rlvr_h5_close(&attr);
    return rc;
}

int rlvr_h5_attr_get_str(hid_t obj, const char *name, char *buf, size_t cap, const char *what) {
    char *s;
    RLVR_TRY(rlvr_h5_attr_get_str_alloc(obj, name, &s, what));
    snprintf(buf, cap, "%s", s);
    free(s);
    return 0;
}

static int attr_get_num(hid_t obj, const char *name, hid_t mem, H5T_class_t cls, void *out, const char *what) {
    hid_t attr, type;
    RLVR_TRY(attr_open(&attr, &type, obj, name, cls, what));
    int rc = 0;
    if (H5Aread(attr, mem, out) < 0) rc = RLVR_H5_FAIL("%s: reading attribute \"%s\"", what, name);
    rlvr_h5_close(&type);
    rlvr_h5_close(&attr);
    return rc;
}

int rlvr_h5_attr_get_i64(hid_t obj, const char *name, int64_t *out, const char *what) {
    return attr_get_num(obj, name, H5T_NATIVE_INT64, H5T_INTEGER, out, what);
}

int rlvr_h5_attr_get_u64(hid_t obj, const char *name, uint64_t *out, const char *what) {
    return attr_get_num(obj, name, H5T_NATIVE_UINT64, H5T_INTEGER, out, what);
}

int rlvr_h5_attr_get_f64(hid_t obj, const char *name, double *out, const char *what) {
    return attr_get_num(obj, name, H5T_NATIVE_DOUBLE, H5T_FLOAT, out, what);
}

/* ---- types --------------------------------------------------------------- */

size_t rlvr_dtype_size(rlvr_dtype t) {
    switch (t) {
    case RLVR_DT_U8: return 1;
    case RLVR_DT_I32:
    case RLVR_DT_U32:
    case RLVR_DT_F32: return 4;
    case RLVR_DT_I64:
    case RLVR_DT_U64:
    case RLVR_DT_F64: return 8;
    }
    return 0;
}

const char *rlvr_dtype_name(rlvr_dtype t) {
    switch (t) {
    case RLVR_DT_U8: return "uint8";
    case RLVR_DT_I32: return "int32";
    case RLVR_DT_U32: return "uint32";
    case RLVR_DT_I64: return "int64";
    case RLVR_DT_U64: return "uint64";
    case RLVR_DT_F32: return "float32";
    case RLVR_DT_F64: return "float64";
    }
    return "unknown";
}

hid_t rlvr_h5_file_type(rlvr_dtype t) {
    switch (t) {
    case RLVR_DT_U8: return H5T_STD_U8LE;
    case RLVR_DT_I32: return H5T_STD_I32LE;
    case RLVR_DT_U32: return H5T_STD_U32LE;
    case RLVR_DT_I64: return H5T_STD_I64LE;
    case RLVR_DT_U64: return H5T_STD_U64LE;
    case RLVR_DT_F32: return H5T_IEEE_F32LE;
    case RLVR_DT_F64: return H5T_IEEE_F64LE;
    }
    return H5I_INVALID_HID;
}

hid_t rlvr_h5_mem_type(rlvr_dtype t) {
    switch (t) {
    case RLVR_DT_U8: return H5T_NATIVE_UINT8;
    case RLVR_DT_I32: return H5T_NATIVE_INT32;
    case RLVR_DT_U32: return H5T_NATIVE_UINT32;
    case RLVR_DT_I64: return H5T_NATIVE_INT64;
    case RLVR_DT_U64: return H5T_NATIVE_UINT64;
    case RLVR_DT_F32: return H5T_NATIVE_FLOAT;
    case RLVR_DT_F64: return H5T_NATIVE_DOUBLE;
    }
    return H5I_INVALID_HID;
}

int rlvr_h5_dtype_of(hid_t type, rlvr_dtype *out) {
    H5T_class_t cls = H5Tget_class(type);
    size_t size = H5Tget_size(type);
    if (cls == H5T_INTEGER) {
        bool is_signed = H5Tget_sign(type) == H5T_SGN_2;
        if (size == 1 && !is_signed) { *out = RLVR_DT_U8; return 0; }
        if (size == 4) { *out = is_signed ? RLVR_DT_I32 : RLVR_DT_U32; return 0; }
        if (size == 8) { *out = is_signed ? RLVR_DT_I64 : RLVR_DT_U64; return 0; }
    } else if (cls == H5T_FLOAT) {
        if (size == 4) { *out = RLVR_DT_F32; return 0; }
        if (size == 8) { *out = RLVR_DT_F64; return 0; }
    }
    H5Eclear2(H5E_DEFAULT);
    return rlvr_error_set(RLVR_EFORMAT, "stored element type (class %d, %zu bytes) is not one rlvr uses", (int)cls,
                          size);
}

hid_t rlvr_h5_string_type(size_t size, bool nul_padded) {
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0) return t;
    if (H5Tset_size(t, size ? size : 1) < 0 ||
        H5Tset_strpad(t, nul_padded ? H5T_STR_NULLPAD : H5T_STR_NULLTERM) < 0) {
        H5Tclose(t);
        return H5I_INVALID_HID;
    }
    return t;
}

/* ---- datasets ------------------------------------------------------------ */

void rlvr_h5_choose_chunk(hsize_t *chunk, int rank, const hsize_t *dims, size_t elem_size, size_t target_bytes) {
    size_t bytes = elem_size;
    for (int d = 0; d < rank; d++) {
        chunk[d] = dims[d] > 0 ? dims[d] : 1;
        bytes *= (size_t)chunk[d];
    }
    for (int d = 0; d < rank && bytes > target_bytes; d++) {
        while (bytes > target_bytes && chunk[d] > 1) {
            hsize_t half = (chunk[d] + 1) / 2;
            bytes = bytes / (size_t)chunk[d] * (size_t)half;
            chunk[d] = half;
        }
    }
}

int rlvr_h5_dataset_create(hid_t *out, hid_t loc, const char *name, hid_t file_type, int rank,
                           const hsize_t *dims, const hsize_t *maxdims, const hsize_t *chunk, int level) {
    *out = H5I_INVALID_HID;
    if (rank < 1 || rank > RLVR_IO_MAX_RANK)
        return RLVR_FAIL(RLVR_EINVAL, "dataset %s: rank %d is outside 1..%d", name, rank, RLVR_IO_MAX_RANK);
    hsize_t cdims[RLVR_IO_MAX_RANK], mdims[RLVR_IO_MAX_RANK];
    if (chunk) memcpy(cdims, chunk, (size_t)rank * sizeof *cdims);
    else rlvr_h5_choose_chunk(cdims, rank, dims, H5Tget_size(file_type), 1u << 20);
    for (int d = 0; d < rank; d++) {
        mdims[d] = maxdims ? maxdims[d] : dims[d];
        if (mdims[d] != H5S_UNLIMITED && cdims[d] > mdims[d]) mdims[d] = H5S_UNLIMITED;
    }
    int rc = 0;
    hid_t space = H5I_INVALID_HID, dcpl = H5I_INVALID_HID, lcpl = H5I_INVALID_HID;
    space = H5Screate_simple(rank, dims, mdims);
    RLVR_H5_GOTO(space, rc, done, "dataspace for %s", name);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    RLVR_H5_GOTO(dcpl, rc, done, "properties for %s", name);
    RLVR_H5_GOTO(H5Pset_chunk(dcpl, rank, cdims), rc, done, "chunking %s", name);
    if (level > 0) {
        RLVR_H5_GOTO(H5Pset_shuffle(dcpl), rc, done, "shuffle filter for %s", name);
        RLVR_H5_GOTO(H5Pset_deflate(dcpl, (unsigned)(level > 9 ? 9 : level)), rc, done, "deflate for %s", name);
    }
    RLVR_H5_GOTO(H5Pset_fletcher32(dcpl), rc, done, "Fletcher32 for %s", name);
    lcpl = H5Pcreate(H5P_LINK_CREATE);
    RLVR_H5_GOTO(lcpl, rc, done, "properties for %s", name);
    RLVR_H5_GOTO(H5Pset_create_intermediate_group(lcpl, 1), rc, done, "properties for %s", name);
    *out = H5Dcreate2(loc, name, file_type, space, lcpl, dcpl, H5P_DEFAULT);
    RLVR_H5_GOTO(*out, rc, done, "creating dataset %s", name);
done:
    rlvr_h5_close(&lcpl);
    rlvr_h5_close(&dcpl);
    rlvr_h5_close(&space);
    return rc;
}

/* Rows of the leading dimension per block: the chunk's. */
static hsize_t dataset_block_rows(hid_t dset, int rank) {
    hid_t dcpl = H5Dget_create_plist(dset);
    hsize_t chunk[RLVR_IO_MAX_RANK] = {0};
    hsize_t rows = 0;
    if (dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED && H5Pget_chunk(dcpl, rank, chunk) == rank)
        rows = chunk[0];
    if (dcpl >= 0) H5Pclose(dcpl);
    H5Eclear2(H5E_DEFAULT);
    return rows ? rows : 1024;
}

/* Reads or writes `dset` in blocks of leading-dimension rows. */
static int transfer_blocks(hid_t dset, hid_t mem_type, size_t elem_size, int rank, const hsize_t *dims,
                           void *data, bool write, const char *what, const char *name) {
    size_t row_elems = 1;
    for (int d = 1; d < rank; d++) row_elems *= (size_t)dims[d];
    hsize_t block = dataset_block_rows(dset, rank);
    int rc = 0;
    hid_t fspace = H5I_INVALID_HID, mspace = H5I_INVALID_HID;
    fspace = H5Dget_space(dset);
    RLVR_H5_GOTO(fspace, rc, done, "%s: dataset %s", what, name);
    for (hsize_t r = 0; r < dims[0]; r += block) {
        hsize_t start[RLVR_IO_MAX_RANK] = {0}, count[RLVR_IO_MAX_RANK];
        memcpy(count, dims, (size_t)rank * sizeof *count);
        start[0] = r;
        count[0] = dims[0] - r < block ? dims[0] - r : block;
        RLVR_H5_GOTO(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL), rc, done,
                     "%s: dataset %s", what, name);
        mspace = H5Screate_simple(rank, count, NULL);
        RLVR_H5_GOTO(mspace, rc, done, "%s: dataset %s", what, name);
        unsigned char *p = (unsigned char *)data + (size_t)r * row_elems * elem_size;
        if (write)
            RLVR_H5_GOTO(H5Dwrite(dset, mem_type, mspace, fspace, H5P_DEFAULT, p), rc, done,
                         "%s: writing dataset %s", what, name);
        else
            RLVR_H5_GOTO(H5Dread(dset, mem_type, mspace, fspace, H5P_DEFAULT, p), rc, done,
                         "%s: reading dataset %s", what, name);
        rlvr_h5_close(&mspace);
    }
done:
    rlvr_h5_close(&mspace);
    rlvr_h5_close(&fspace);
    return rc;
}

int rlvr_h5_write_array(hid_t loc, const char *name, rlvr_dtype t, int rank, const hsize_t *dims,
                        const void *data, int level) {
    hid_t dset;
    RLVR_TRY(rlvr_h5_dataset_create(&dset, loc, name, rlvr_h5_file_type(t), rank, dims, NULL, NULL, level));
    int rc = transfer_blocks(dset, rlvr_h5_mem_type(t), rlvr_dtype_size(t), rank, dims, (void *)data, true,
                             "writing", name);
    rlvr_h5_close(&dset);
    return rc;
}

int rlvr_h5_dataset_shape(hid_t loc, const char *name, int *rank, hsize_t *dims, const char *what) {
    htri_t exists = H5Lexists(loc, name, H5P_DEFAULT);
    if (exists <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return rlvr_error_set(RLVR_EFORMAT, "%s: dataset %s is missing", what, name);
    }
    hid_t dset = H5Dopen2(loc, name, H5P_DEFAULT);
    RLVR_H5_CHECK(dset, "%s: opening dataset %s", what, name);
    hid_t space = H5Dget_space(dset);
    int r = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
    int rc = 0;
    if (r < 1 || r > RLVR_IO_MAX_RANK) {
        H5Eclear2(H5E_DEFAULT);
        rc = rlvr_error_set(RLVR_EFORMAT, "%s: dataset %s has rank %d, not 1..%d", what, name, r, RLVR_IO_MAX_RANK);
    } else if (H5Sget_simple_extent_dims(space, dims, NULL) < 0) {
        rc = RLVR_H5_FAIL("%s: dataset %s", what, name);
    } else {
        *rank = r;
    }
    H5Sclose(space);
    H5Dclose(dset);
    return rc;
}

int rlvr_h5_read_array(hid_t loc, const char *name, rlvr_dtype t, int rank, const hsize_t *dims, void *data,
                       const char *what) {
    int have_rank;
    hsize_t have[RLVR_IO_MAX_RANK];
    RLVR_TRY(rlvr_h5_dataset_shape(loc, name, &have_rank, have, what));
    bool same = have_rank == rank;
    for (int d = 0; same && d < rank; d++) same = have[d] == dims[d];
    if (!same) {
        char hs[128] = "", ws[128] = "";
        size_t hn = 0, wn = 0;
        for (int d = 0; d < have_rank; d++)
            hn += (size_t)snprintf(hs + hn, sizeof hs - hn, "%s%llu", d ? ", " : "", (unsigned long long)have[d]);
        for (int d = 0; d < rank; d++)
            wn += (size_t)snprintf(ws + wn, sizeof ws - wn, "%s%llu", d ? ", " : "", (unsigned long long)dims[d]);
        return rlvr_error_set(RLVR_EFORMAT, "%s: dataset %s has shape (%s), expected (%s)", what, name, hs, ws);
    }
    hid_t dset = H5Dopen2(loc, name, H5P_DEFAULT);
    RLVR_H5_CHECK(dset, "%s: opening dataset %s", what, name);
    hid_t type = H5Dget_type(dset);
    rlvr_dtype stored;
    int rc = type >= 0 ? rlvr_h5_dtype_of(type, &stored) : RLVR_H5_FAIL("%s: dataset %s", what, name);
    if (rc == 0 && stored != t)
        rc = rlvr_error_set(RLVR_EFORMAT, "%s: dataset %s holds %s, expected %s", what, name,
                            rlvr_dtype_name(stored), rlvr_dtype_name(t));
    else if (rc < 0)
        rc = rlvr_error_wrap(rc, "%s: dataset %s", what, name);
    if (rc == 0)
        rc = transfer_blocks(dset, rlvr_h5_mem_type(t), rlvr_dtype_size(t), rank, dims, data, false, what, name);
    rlvr_h5_close(&type);
    rlvr_h5_close(&dset);
    return rc;
}

int rlvr_h5_read_column(hid_t loc, const char *name, hid_t mem_type, size_t elem_size, void **out,
                        hsize_t *n, const char *what) {
    *out = NULL;
    int rank;
    hsize_t dims[RLVR_IO_MAX_RANK];
    RLVR_TRY(rlvr_h5_dataset_shape(loc, name, &rank, dims, what));
    if (rank != 1) return rlvr_error_set(RLVR_EFORMAT, "%s: dataset %s has rank %d, expected 1", what, name, rank);
    void *buf = malloc(dims[0] ? (size_t)dims[0] * elem_size : 1);
    if (!buf) return RLVR_FAIL(RLVR_ENOMEM, "%s: out of memory reading %s", what, name);
    hid_t dset = H5Dopen2(loc, name, H5P_DEFAULT);
    int rc = 0;
    if (dset < 0) rc = RLVR_H5_FAIL("%s: opening dataset %s", what, name);
    else rc = transfer_blocks(dset, mem_type, elem_size, 1, dims, buf, false, what, name);
    rlvr_h5_close(&dset);
    if (rc < 0) {
        free(buf);
        return rc;
    }
    *out = buf;
    *n = dims[0];
    return 0;
}

int rlvr_h5_write_text(hid_t loc, const char *name, const char *text, int level) {
    size_t len = text ? strlen(text) : 0;
    hid_t type = rlvr_h5_string_type(len ? len : 1, true);
    RLVR_H5_CHECK(type, "string type for %s", name);
    hsize_t dims[1] = {1}, chunk[1] = {1};
    hid_t dset;
    int rc = rlvr_h5_dataset_create(&dset, loc, name, type, 1, dims, NULL, chunk, level);
    if (rc == 0) {
        char *buf = calloc(len ? len : 1, 1);
        if (!buf) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory writing %s", name);
        else {
            if (len) memcpy(buf, text, len);
            if (H5Dwrite(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
                rc = RLVR_H5_FAIL("writing text dataset %s", name);
            free(buf);
        }
        rlvr_h5_close(&dset);
    }
    rlvr_h5_close(&type);
    return rc;
}

int rlvr_h5_read_text(hid_t loc, const char *name, char **out, const char *what) {
    *out = NULL;
    int rank;
    hsize_t dims[RLVR_IO_MAX_RANK];
    RLVR_TRY(rlvr_h5_dataset_shape(loc, name, &rank, dims, what));
    if (rank != 1 || dims[0] != 1)
        return rlvr_error_set(RLVR_EFORMAT, "%s: text dataset %s should hold one string", what, name);
    hid_t dset = H5Dopen2(loc, name, H5P_DEFAULT);
    RLVR_H5_CHECK(dset, "%s: opening dataset %s", what, name);
    int rc = 0;
    hid_t type = H5Dget_type(dset);
    if (type < 0 || H5Tget_class(type) != H5T_STRING || H5Tis_variable_str(type) != 0) {
        H5Eclear2(H5E_DEFAULT);
        rc = rlvr_error_set(RLVR_EFORMAT, "%s: dataset %s is not a fixed-length string", what, name);
    } else {
        size_t size = H5Tget_size(type);
        char *buf = calloc(size + 1, 1);
        if (!buf) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory reading %s", name);
        else if (H5Dread(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
            rc = RLVR_H5_FAIL("%s: reading dataset %s", what, name);
            free(buf);
        } else {
            *out = buf;
        }
    }
    rlvr_h5_close(&type);
    rlvr_h5_close(&dset);
    return rc;
}

/* ---- appendable columns ------------------------------------------------ */

int rlvr_h5_column_create(rlvr_h5_column *c, hid_t loc, const char *name, hid_t file_type, hid_t mem_type,
                          bool owns_mem_type, size_t elem_size, size_t chunk_rows, int level) {
    memset(c, 0, sizeof *c);
    c->dset = H5I_INVALID_HID;
    c->mem_type = mem_type;
    c->owns_mem_type = owns_mem_type;
    c->elem_size = elem_size;
    c->chunk_rows = chunk_rows ? chunk_rows : 1024;
    c->name = name;
    c->buf = malloc(c->chunk_rows * elem_size + RLVR_H5_CHUNK_SLACK);
    if (!c->buf) {
        rlvr_h5_column_close(c);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory for column %s", name);
    }
    hsize_t dims[1] = {0}, maxdims[1] = {H5S_UNLIMITED}, chunk[1] = {c->chunk_rows};
    int rc = rlvr_h5_dataset_create(&c->dset, loc, name, file_type, 1, dims, maxdims, chunk, level);
    if (rc < 0) rlvr_h5_column_close(c);
    return rc;
}

int rlvr_h5_column_open(rlvr_h5_column *c, hid_t loc, const char *name, hid_t mem_type, bool owns_mem_type,
                        size_t elem_size) {
    memset(c, 0, sizeof *c);
    c->mem_type = mem_type;
    c->owns_mem_type = owns_mem_type;
    c->elem_size = elem_size;
    c->name = name;
    c->dset = H5Dopen2(loc, name, H5P_DEFAULT);
    int rc = 0;
    if (c->dset < 0) {
        rc = RLVR_H5_FAIL("opening column %s", name);
        goto fail;
    }
    hid_t space = H5Dget_space(c->dset);
    hsize_t n = 0;
    if (space < 0 || H5Sget_simple_extent_ndims(space) != 1 || H5Sget_simple_extent_dims(space, &n, NULL) < 0) {
        rlvr_h5_close(&space);
        H5Eclear2(H5E_DEFAULT);
        rc = rlvr_error_set(RLVR_EFORMAT, "column %s is not a 1-D dataset", name);
        goto fail;
    }
    rlvr_h5_close(&space);
    c->n_file = c->extent = n;
    c->chunk_rows = (size_t)dataset_block_rows(c->dset, 1);
    c->buf = malloc(c->chunk_rows * elem_size + RLVR_H5_CHUNK_SLACK);
    if (!c->buf) {
        rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory for column %s", name);
        goto fail;
    }
    return 0;
fail:
    rlvr_h5_column_close(c);
    return rc;
}

/* Batch mode: queues `raw` (a chunk buffer of the batch's, rows [n_file,
 * n_file + k) in it) after zeroing the rest of the chunk; a partial chunk
 * is the column's last. `raw` belongs to the batch from here on. */
static int column_queue(rlvr_h5_column *c, unsigned char *raw, size_t k) {
    if (c->sealed || c->n_file % c->chunk_rows != 0) {
        free(raw);
        return RLVR_FAIL(RLVR_ESTATE, "column %s: rows appended after its last chunk", c->name);
    }
    memset(raw + k * c->elem_size, 0, (c->chunk_rows - k) * c->elem_size);
    uint64_t at = c->n_file;
    c->n_file += k;
    c->sealed = k < c->chunk_rows;
    return rlvr_h5_chunk_batch_add(c->batch, c, at, k, raw);
}

/* Batch mode, rows from the caller's memory: copied into whole chunks. */
static int column_queue_copy(rlvr_h5_column *c, const unsigned char *rows, size_t n) {
    while (n > 0) {
        size_t k = n < c->chunk_rows ? n : c->chunk_rows;
        unsigned char *raw = rlvr_h5_chunk_batch_buffer(c->batch, c->chunk_rows * c->elem_size);
        if (!raw) return RLVR_FAIL(RLVR_ENOMEM, "out of memory for a chunk of %s", c->name);
        memcpy(raw, rows, k * c->elem_size);
        RLVR_TRY(column_queue(c, raw, k));
        rows += k * c->elem_size;
        n -= k;
    }
    return 0;
}

static int column_write(rlvr_h5_column *c, const void *rows, size_t n) {
    if (n == 0) return 0;
    if (c->batch) return column_queue_copy(c, rows, n);
    hsize_t size[1] = {c->n_file + n}, start[1] = {c->n_file}, count[1] = {n};
    RLVR_H5_CHECK(H5Dset_extent(c->dset, size), "extending column %s to %llu rows", c->name,
                  (unsigned long long)size[0]);
    int rc = 0;
    hid_t fspace = H5Dget_space(c->dset), mspace = H5I_INVALID_HID;
    RLVR_H5_GOTO(fspace, rc, done, "column %s", c->name);
    RLVR_H5_GOTO(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL), rc, done, "column %s",
                 c->name);
    mspace = H5Screate_simple(1, count, NULL);
    RLVR_H5_GOTO(mspace, rc, done, "column %s", c->name);
    RLVR_H5_GOTO(H5Dwrite(c->dset, c->mem_type, mspace, fspace, H5P_DEFAULT, rows), rc, done,
                 "writing column %s", c->name);
    c->n_file += n;
    c->extent = c->n_file;
done:
    rlvr_h5_close(&mspace);
    rlvr_h5_close(&fspace);
    return rc;
}

/* Room left before the buffer reaches the next chunk boundary of the file. */
static size_t column_room(const rlvr_h5_column *c) {
    size_t to_boundary = c->chunk_rows - (size_t)(c->n_file % c->chunk_rows);
    return to_boundary - c->n_buf;
}

int rlvr_h5_column_push(rlvr_h5_column *c, const void *rows, size_t n) {
    const unsigned char *p = rows;
    while (n > 0) {
        /* whole aligned chunks straight from the caller's memory */
        if (c->n_buf == 0 && c->n_file % c->chunk_rows == 0 && n >= c->chunk_rows) {
            size_t k = n / c->chunk_rows * c->chunk_rows;
            RLVR_TRY(column_write(c, p, k));
            p += k * c->elem_size;
            n -= k;
            continue;
        }
        size_t room = column_room(c);
        size_t k = n < room ? n : room;
        memcpy(c->buf + c->n_buf * c->elem_size, p, k * c->elem_size);
        c->n_buf += k;
        p += k * c->elem_size;
        n -= k;
        if (column_room(c) == 0) RLVR_TRY(rlvr_h5_column_flush(c));
    }
    return 0;
}

int rlvr_h5_column_flush(rlvr_h5_column *c) {
    if (c->n_buf == 0) return 0;
    if (c->batch) {
        /* the buffer itself goes to the batch (no copy); a fresh one, from
         * the chunks already written, takes its place */
        if (c->sealed) return RLVR_FAIL(RLVR_ESTATE, "column %s: rows appended after its last chunk", c->name);
        unsigned char *fresh = rlvr_h5_chunk_batch_buffer(c->batch, c->chunk_rows * c->elem_size);
        if (!fresh) return RLVR_FAIL(RLVR_ENOMEM, "out of memory for a chunk of %s", c->name);
        unsigned char *full = c->buf;
        size_t k = c->n_buf;
        c->buf = fresh;
        c->n_buf = 0;
        return column_queue(c, full, k);
    }
    RLVR_TRY(column_write(c, c->buf, c->n_buf));
    c->n_buf = 0;
    return 0;
}

void rlvr_h5_column_close(rlvr_h5_column *c) {
    rlvr_h5_close(&c->dset);
    if (c->owns_mem_type) rlvr_h5_close(&c->mem_type);
    free(c->buf);
    c->buf = NULL;
    c->n_buf = 0;
}

/* ---- walks --------------------------------------------------------------- */

typedef struct {
    hid_t loc;
    rlvr_h5_dataset_fn fn;
    void *user;
    int rc;
} visit_ctx;

static herr_t visit_cb(hid_t obj, const char *name, const H5O_info_t *info, void *data) {
    (void)obj;
    visit_ctx *v = data;
    if (info->type != H5O_TYPE_DATASET) return 0;
    v->rc = v->fn(v->loc, name, v->user);
    return v->rc < 0 ? 1 : 0;
}

int rlvr_h5_visit_datasets(hid_t loc, rlvr_h5_dataset_fn fn, void *user) {
    visit_ctx v = {.loc = loc, .fn = fn, .user = user, .rc = 0};
    if (H5Ovisit2(loc, H5_INDEX_NAME, H5_ITER_INC, visit_cb, &v, H5O_INFO_BASIC) < 0)
        return v.rc < 0 ? v.rc : RLVR_H5_FAIL("walking the datasets of a file");
    return v.rc;
}

/* ---- POSIX helpers ------------------------------------------------------- */

int rlvr_h5_write_atomic(const char *path, const char *what, rlvr_h5_fill_fn fill, const void *arg) {
    char part[4200];
    if ((size_t)snprintf(part, sizeof part, "%s.part", path) >= sizeof part)
        return RLVR_FAIL(RLVR_EINVAL, "%s path too long: %s", what, path);
    rlvr_h5_init();
    hid_t f;
    RLVR_TRY(rlvr_h5_file_create(&f, part, false));
    int rc = fill(f, arg);
    if (rc == 0 && H5Fclose(f) < 0) rc = RLVR_H5_FAIL("closing %s", part);
    else if (rc < 0) rlvr_h5_close(&f);
    if (rc == 0) rc = rlvr_publish(part, path, true);
    if (rc < 0) {
        unlink(part);
        return rlvr_error_wrap(rc, "writing %s %s", what, path);
    }
    return 0;
}

void rlvr_utc_now(char *buf, size_t cap) {
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
