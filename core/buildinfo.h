/* core/buildinfo.h — the version and the build, as `rlvr --version` prints
 * them: the commit the binary was built from, the compiler, the build type
 * and flags, the versions of the libraries as they report themselves at run
 * time, and the CPU features the kernels were compiled for against those of
 * the CPU running them. Module rlvr_buildinfo (core/CMakeLists.txt): it links
 * BLAS, HDF5, MPI and libgit2, which the rest of core/ does not. */
#ifndef RLVR_CORE_BUILDINFO_H
#define RLVR_CORE_BUILDINFO_H

#include <stddef.h>

typedef struct {
    const char *version;    /* "0.1.0" */
    const char *commit;     /* `git rev-parse --short HEAD` at build time, "-dirty" appended when tracked
                               files differed from it; "unknown" when built outside git */
    const char *build_type; /* CMAKE_BUILD_TYPE, e.g. "Release" */
    const char *flags;      /* the flags that change the code: "-O3 -march=native", sanitizers */
    char compiler[128];     /* "gcc 12.2.0" (__VERSION__ of the compiler that built this file) */
    char blas[256];         /* openblas_get_config() ("OpenBLAS 0.3.21 ... SKYLAKEX MAX_THREADS=64"), or
                               "not OpenBLAS" */
    char hdf5[32];          /* H5get_libversion: "1.10.8" */
    char hdf5_headers[32];  /* the headers' H5_VERSION the build compiled against */
    char mpi[160];          /* MPI_Get_library_version's first clause: "Open MPI v4.1.4" */
    char mpi_standard[16];  /* MPI_Get_version: "3.1" */
    char libgit2[32];       /* git_libgit2_version: "1.5.1" */
    char libgit2_headers[32];
    char cpu_built[160];    /* x86 features the build compiled for, among those the kernels use
                               ("avx avx2 fma avx512f"), "none" for none */
    char cpu_has[160];      /* the same features as this CPU reports them (__builtin_cpu_supports) */
    char cpu_missing[160];  /* compiled for, lacking here (the kernels would fault); "" when none */
} rlvr_buildinfo;

/* Fills *out. Needs no initialisation of any library (MPI allows
 * MPI_Get_library_version before MPI_Init). Never fails. */
void rlvr_buildinfo_get(rlvr_buildinfo *out);

/* The lines `rlvr --version` prints (docs/OPERATIONS.md, "Version and
 * build"), the first "rlvr VERSION", into buf (cut at cap); the length the
 * whole text needs, as snprintf. */
int rlvr_buildinfo_format(const rlvr_buildinfo *b, char *buf, size_t cap);

#endif
