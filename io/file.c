/* io/file.c — identify, verify and list any rlvr file. */
#include "io/file.h"
#include "core/error.h"
#include "io/h5util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Opens read-only; a file a writer still holds in SWMR mode (metrics) only
 * opens for SWMR readers, so that is the second try. */
static int open_any(hid_t *fid, const char *path, int *version) {
    int rc = rlvr_h5_file_open(fid, path, NULL, 0, version, false);
    if (rc == RLVR_EFORMAT && H5Fis_hdf5(path) > 0) {
        char first[2048];
        snprintf(first, sizeof first, "%s", rlvr_error_last());
        if (rlvr_h5_file_open(fid, path, NULL, 0, version, true) == 0) return 0;
        H5Eclear2(H5E_DEFAULT);
        rlvr_error_set(rc, "%s", first);
    }
    return rc;
}

int rlvr_io_identify(const char *path, rlvr_file_kind *kind, int *format_version) {
    hid_t fid;
    RLVR_TRY(open_any(&fid, path, format_version));
    char format[64];
    int rc = rlvr_h5_attr_get_str(fid, "format", format, sizeof format, path);
    rlvr_h5_close(&fid);
    if (rc < 0) return rc;
    static const struct {
        const char *name;
        rlvr_file_kind kind;
    } kinds[] = {
        {RLVR_FORMAT_SHARD, RLVR_FILE_SHARD},
        {RLVR_FORMAT_CHECKPOINT, RLVR_FILE_CHECKPOINT},
        {RLVR_FORMAT_METRICS, RLVR_FILE_METRICS},
        {RLVR_FORMAT_MANIFEST, RLVR_FILE_MANIFEST},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (strcmp(format, kinds[i].name) == 0) {
            *kind = kinds[i].kind;
            return 0;
        }
    }
    *kind = RLVR_FILE_UNKNOWN;
    return rlvr_error_set(RLVR_EFORMAT, "%s: unknown format \"%s\"", path, format);
}

/* ---- verify --------------------------------------------------------------- */

typedef struct {
    const char *path;
    int64_t datasets, bytes;
} verify_ctx;

static int verify_dataset(hid_t loc, const char *name, void *user) {
    verify_ctx *v = user;
    int rc = 0;
    hid_t dset = H5I_INVALID_HID, type = H5I_INVALID_HID, mem = H5I_INVALID_HID, fspace = H5I_INVALID_HID,
          mspace = H5I_INVALID_HID, dcpl = H5I_INVALID_HID;
    unsigned char *buf = NULL;
    dset = H5Dopen2(loc, name, H5P_DEFAULT);
    RLVR_H5_GOTO(dset, rc, done, "%s: opening dataset /%s", v->path, name);
    type = H5Dget_type(dset);
    RLVR_H5_GOTO(type, rc, done, "%s: dataset /%s", v->path, name);
    mem = H5Tget_class(type) == H5T_STRING ? H5Tcopy(type) : H5Tget_native_type(type, H5T_DIR_DEFAULT);
    RLVR_H5_GOTO(mem, rc, done, "%s: dataset /%s", v->path, name);
    fspace = H5Dget_space(dset);
    RLVR_H5_GOTO(fspace, rc, done, "%s: dataset /%s", v->path, name);
    int rank = H5Sget_simple_extent_ndims(fspace);
    if (rank < 0 || rank > RLVR_IO_MAX_RANK) {
        rc = rlvr_error_set(RLVR_EFORMAT, "%s: dataset /%s has rank %d", v->path, name, rank);
        goto done;
    }
    hsize_t dims[RLVR_IO_MAX_RANK] = {1}, chunk[RLVR_IO_MAX_RANK] = {1};
    if (rank > 0) RLVR_H5_GOTO(H5Sget_simple_extent_dims(fspace, dims, NULL), rc, done, "%s: /%s", v->path, name);
    size_t esize = H5Tget_size(mem);
    size_t row = esize;
    for (int d = 1; d < rank; d++) row *= (size_t)dims[d];
    hsize_t block = dims[0];
    dcpl = H5Dget_create_plist(dset);
    if (rank > 0 && dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED && H5Pget_chunk(dcpl, rank, chunk) == rank)
        block = chunk[0];
    H5Eclear2(H5E_DEFAULT);
    if (block == 0) block = 1;
    size_t buf_bytes = (size_t)block * row;
    buf = malloc(buf_bytes ? buf_bytes : 1);
    if (!buf) {
        rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory verifying %s", v->path);
        goto done;
    }
    if (rank == 0) {
        RLVR_H5_GOTO(H5Dread(dset, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf), rc, done, "%s: dataset /%s", v->path,
                     name);
        v->bytes += (int64_t)esize;
    }
    for (hsize_t r = 0; rank > 0 && r < dims[0]; r += block) {
        hsize_t start[RLVR_IO_MAX_RANK] = {0}, count[RLVR_IO_MAX_RANK];
        memcpy(count, dims, sizeof count);
        start[0] = r;
        count[0] = dims[0] - r < block ? dims[0] - r : block;
        RLVR_H5_GOTO(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL), rc, done,
                     "%s: dataset /%s", v->path, name);
        mspace = H5Screate_simple(rank, count, NULL);
        RLVR_H5_GOTO(mspace, rc, done, "%s: dataset /%s", v->path, name);
        if (H5Dread(dset, mem, mspace, fspace, H5P_DEFAULT, buf) < 0) {
            rc = RLVR_H5_FAIL("%s: dataset /%s, rows %llu..%llu", v->path, name, (unsigned long long)r,
                              (unsigned long long)(r + count[0]));
            goto done;
        }
        rlvr_h5_close(&mspace);
        v->bytes += (int64_t)(count[0] * row);
    }
    v->datasets++;
done:
    free(buf);
    rlvr_h5_close(&dcpl);
    rlvr_h5_close(&mspace);
    rlvr_h5_close(&fspace);
    rlvr_h5_close(&mem);
    rlvr_h5_close(&type);
    rlvr_h5_close(&dset);
    return rc;
}

int rlvr_io_verify(const char *path, int64_t *n_datasets, int64_t *n_bytes) {
    hid_t fid;
    RLVR_TRY(open_any(&fid, path, NULL));
    verify_ctx v = {.path = path};
    int rc = rlvr_h5_visit_datasets(fid, verify_dataset, &v);
    rlvr_h5_close(&fid);
    if (n_datasets) *n_datasets = v.datasets;
    if (n_bytes) *n_bytes = v.bytes;
    return rc;
}

/* ---- listings ------------------------------------------------------------- */

typedef struct {
    const char *path;
    int (*fn)(const rlvr_io_dataset_info *info, void *user);
    void *user;
} list_ctx;

static int list_dataset(hid_t loc, const char *name, void *user) {
    list_ctx *l = user;
    rlvr_io_dataset_info info = {0};
    char full[1024], type_name[64];
    snprintf(full, sizeof full, "/%s", name);
    info.path = full;
    info.type = type_name;
    hid_t dset = H5Dopen2(loc, name, H5P_DEFAULT);
    RLVR_H5_CHECK(dset, "%s: opening dataset %s", l->path, full);
    hid_t type = H5Dget_type(dset), space = H5Dget_space(dset);
    int rank = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
    hsize_t dims[RLVR_IO_MAX_RANK] = {0};
    if (rank > 0 && rank <= RLVR_IO_MAX_RANK) H5Sget_simple_extent_dims(space, dims, NULL);
    info.rank = rank > 0 && rank <= RLVR_IO_MAX_RANK ? rank : 0;
    for (int d = 0; d < info.rank; d++) info.dims[d] = dims[d];
    rlvr_dtype dt;
    if (type >= 0 && H5Tget_class(type) == H5T_STRING)
        snprintf(type_name, sizeof type_name, "string[%zu]", H5Tget_size(type));
    else if (type >= 0 && rlvr_h5_dtype_of(type, &dt) == 0)
        snprintf(type_name, sizeof type_name, "%s", rlvr_dtype_name(dt));
    else
        snprintf(type_name, sizeof type_name, "other");
    info.stored_bytes = H5Dget_storage_size(dset);
    H5Eclear2(H5E_DEFAULT);
    rlvr_h5_close(&space);
    rlvr_h5_close(&type);
    rlvr_h5_close(&dset);
    return l->fn(&info, l->user);
}

int rlvr_io_list(const char *path, int (*fn)(const rlvr_io_dataset_info *info, void *user), void *user) {
    hid_t fid;
    RLVR_TRY(open_any(&fid, path, NULL));
    list_ctx l = {.path = path, .fn = fn, .user = user};
    int rc = rlvr_h5_visit_datasets(fid, list_dataset, &l);
    rlvr_h5_close(&fid);
    return rc;
}

typedef struct {
    const char *path;
    int (*fn)(const char *name, const char *value, void *user);
    void *user;
    int rc;
} attr_ctx;

static herr_t attr_cb(hid_t loc, const char *name, const H5A_info_t *ainfo, void *data) {
    (void)ainfo;
    attr_ctx *a = data;
    char value[512];
    hid_t attr = H5Aopen(loc, name, H5P_DEFAULT);
    hid_t type = attr >= 0 ? H5Aget_type(attr) : H5I_INVALID_HID;
    H5T_class_t cls = type >= 0 ? H5Tget_class(type) : H5T_NO_CLASS;
    rlvr_h5_close(&type);
    rlvr_h5_close(&attr);
    H5Eclear2(H5E_DEFAULT);
    if (cls == H5T_STRING) {
        char *s = NULL;
        a->rc = rlvr_h5_attr_get_str_alloc(loc, name, &s, a->path);
        if (a->rc < 0) return 1;
        a->rc = a->fn(name, s, a->user);
        free(s);
        return a->rc < 0 ? 1 : 0;
    }
    if (cls == H5T_INTEGER) {
        int64_t i;
        uint64_t u;
        hid_t at = H5Aopen(loc, name, H5P_DEFAULT), t = H5Aget_type(at);
        bool is_signed = H5Tget_sign(t) == H5T_SGN_2;
        rlvr_h5_close(&t);
        rlvr_h5_close(&at);
        if (is_signed && rlvr_h5_attr_get_i64(loc, name, &i, a->path) == 0)
            snprintf(value, sizeof value, "%" PRId64, i);
        else if (!is_signed && rlvr_h5_attr_get_u64(loc, name, &u, a->path) == 0)
            snprintf(value, sizeof value, "%" PRIu64, u);
        else
            snprintf(value, sizeof value, "(unreadable)");
    } else if (cls == H5T_FLOAT) {
        double d;
        if (rlvr_h5_attr_get_f64(loc, name, &d, a->path) == 0) snprintf(value, sizeof value, "%.17g", d);
        else snprintf(value, sizeof value, "(unreadable)");
    } else {
        snprintf(value, sizeof value, "(not shown)");
    }
    a->rc = a->fn(name, value, a->user);
    return a->rc < 0 ? 1 : 0;
}

int rlvr_io_list_attributes(const char *path, const char *group,
                            int (*fn)(const char *name, const char *value, void *user), void *user) {
    hid_t fid;
    RLVR_TRY(open_any(&fid, path, NULL));
    int rc = 0;
    hid_t g = H5Oopen(fid, group && group[0] ? group : "/", H5P_DEFAULT);
    if (g < 0) {
        H5Eclear2(H5E_DEFAULT);
        rlvr_h5_close(&fid);
        return rlvr_error_set(RLVR_ENOTFOUND, "%s: no group %s", path, group);
    }
    attr_ctx a = {.path = path, .fn = fn, .user = user, .rc = 0};
    hsize_t idx = 0;
    if (H5Aiterate2(g, H5_INDEX_NAME, H5_ITER_INC, &idx, attr_cb, &a) < 0)
        rc = a.rc < 0 ? a.rc : RLVR_H5_FAIL("%s: listing the attributes of %s", path, group);
    else
        rc = a.rc < 0 ? a.rc : 0;
    H5Oclose(g);
    rlvr_h5_close(&fid);
    return rc;
}

int rlvr_io_read_text(const char *path, const char *dataset, char **out) {
    hid_t fid;
    RLVR_TRY(open_any(&fid, path, NULL));
    int rc = rlvr_h5_read_text(fid, dataset[0] == '/' ? dataset + 1 : dataset, out, path);
    rlvr_h5_close(&fid);
    return rc;
}

int rlvr_io_read_strings(const char *path, const char *dataset, int (*fn)(const char *s, void *user), void *user) {
    hid_t fid;
    RLVR_TRY(open_any(&fid, path, NULL));
    const char *name = dataset[0] == '/' ? dataset + 1 : dataset;
    int rc = 0;
    hid_t dset = H5I_INVALID_HID, type = H5I_INVALID_HID, mem = H5I_INVALID_HID;
    char *buf = NULL;
    int rank = 0;
    hsize_t dims[RLVR_IO_MAX_RANK];
    if ((rc = rlvr_h5_dataset_shape(fid, name, &rank, dims, path)) < 0) goto done;
    dset = H5Dopen2(fid, name, H5P_DEFAULT);
    RLVR_H5_GOTO(dset, rc, done, "%s: opening %s", path, dataset);
    type = H5Dget_type(dset);
    if (rank != 1 || type < 0 || H5Tget_class(type) != H5T_STRING || H5Tis_variable_str(type) != 0) {
        H5Eclear2(H5E_DEFAULT);
        rc = rlvr_error_set(RLVR_EFORMAT, "%s: %s is not a list of fixed-length strings", path, dataset);
        goto done;
    }
    size_t width = H5Tget_size(type);
    mem = rlvr_h5_string_type(width + 1, false);
    RLVR_H5_GOTO(mem, rc, done, "%s: %s", path, dataset);
    buf = calloc(dims[0] ? (size_t)dims[0] : 1, width + 1);
    if (!buf) {
        rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory reading %s", dataset);
        goto done;
    }
    if (dims[0] > 0) RLVR_H5_GOTO(H5Dread(dset, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf), rc, done, "%s: reading %s",
                                  path, dataset);
    for (hsize_t i = 0; i < dims[0] && rc == 0; i++) rc = fn(buf + i * (width + 1), user);
done:
    free(buf);
    rlvr_h5_close(&mem);
    rlvr_h5_close(&type);
    rlvr_h5_close(&dset);
    rlvr_h5_close(&fid);
    return rc;
}

void rlvr_io_shape_text(const rlvr_io_dataset_info *d, char *out, size_t cap) {
    size_t n = (size_t)snprintf(out, cap, "(");
    for (int i = 0; i < d->rank && n < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s%llu", i ? ", " : "", (unsigned long long)d->dims[i]);
    if (n < cap) snprintf(out + n, cap - n, "%s)", d->rank == 1 ? "," : "");
}
