/* core/buildinfo.c — the version and the build (core/buildinfo.h). */
#include "core/buildinfo.h"

#include "rlvr_git_commit.h" /* generated on every build: RLVR_GIT_COMMIT */

#include <git2.h>
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#ifndef RLVR_VERSION
#define RLVR_VERSION "unknown"
#endif
#ifndef RLVR_BUILD_TYPE
#define RLVR_BUILD_TYPE "unknown"
#endif
#ifndef RLVR_BUILD_FLAGS_USED
#define RLVR_BUILD_FLAGS_USED "unknown"
#endif

/* OpenBLAS's own report; weak, because a reference BLAS has no such symbol. */
extern char *openblas_get_config(void) __attribute__((weak));

/* Appends word (space-separated) to a buffer of cap bytes. */
static void add_word(char *buf, size_t cap, const char *word) {
    size_t n = strlen(buf);
    snprintf(buf + n, cap - n, "%s%s", n ? " " : "", word);
}

/* The features the kernels (policy/sampler_kernels.c, bench/roofline.c) and
 * the compiler's vectorised loops use that the build assumed, each between
 * spaces. */
static const char built_for[] = " "
#ifdef __SSE4_2__
                                "sse4.2 "
#endif
#ifdef __AVX__
                                "avx "
#endif
#ifdef __AVX2__
                                "avx2 "
#endif
#ifdef __FMA__
                                "fma "
#endif
#ifdef __AVX512F__
                                "avx512f "
#endif
    ;

/* What the build assumed against what this CPU has. */
static void cpu_features(rlvr_buildinfo *b) {
    b->cpu_built[0] = b->cpu_has[0] = b->cpu_missing[0] = '\0';
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    const struct {
        const char *name;
        int has;
    } features[] = {
        /* __builtin_cpu_supports takes string literals only */
        {"sse4.2", __builtin_cpu_supports("sse4.2")}, {"avx", __builtin_cpu_supports("avx")},
        {"avx2", __builtin_cpu_supports("avx2")},     {"fma", __builtin_cpu_supports("fma")},
        {"avx512f", __builtin_cpu_supports("avx512f")},
    };
    for (size_t i = 0; i < sizeof features / sizeof features[0]; i++) {
        char word[16];
        snprintf(word, sizeof word, " %s ", features[i].name);
        int built = strstr(built_for, word) != NULL;
        if (built) add_word(b->cpu_built, sizeof b->cpu_built, features[i].name);
        if (features[i].has) add_word(b->cpu_has, sizeof b->cpu_has, features[i].name);
        if (built && !features[i].has) add_word(b->cpu_missing, sizeof b->cpu_missing, features[i].name);
    }
#else
    snprintf(b->cpu_has, sizeof b->cpu_has, "(not reported on this architecture)");
#endif
    if (!b->cpu_built[0]) snprintf(b->cpu_built, sizeof b->cpu_built, "none");
    if (!b->cpu_has[0]) snprintf(b->cpu_has, sizeof b->cpu_has, "none");
}

void rlvr_buildinfo_get(rlvr_buildinfo *b) {
    memset(b, 0, sizeof *b);
    b->version = RLVR_VERSION;
    b->commit = RLVR_GIT_COMMIT;
    b->build_type = RLVR_BUILD_TYPE;
    b->flags = RLVR_BUILD_FLAGS_USED;
#if defined(__clang__)
    snprintf(b->compiler, sizeof b->compiler, "clang %s", __clang_version__);
#elif defined(__GNUC__)
    snprintf(b->compiler, sizeof b->compiler, "gcc %s", __VERSION__);
#else
    snprintf(b->compiler, sizeof b->compiler, "unknown");
#endif
    snprintf(b->blas, sizeof b->blas, "%s", openblas_get_config ? openblas_get_config() : "not OpenBLAS");
    size_t n = strlen(b->blas); /* OpenBLAS ends its text with a space */
    while (n && b->blas[n - 1] == ' ') b->blas[--n] = '\0';

    unsigned maj = 0, min = 0, rel = 0;
    if (H5get_libversion(&maj, &min, &rel) >= 0) snprintf(b->hdf5, sizeof b->hdf5, "%u.%u.%u", maj, min, rel);
    else snprintf(b->hdf5, sizeof b->hdf5, "unknown");
    snprintf(b->hdf5_headers, sizeof b->hdf5_headers, "%s", H5_VERSION);

    char mpi[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0, version = 0, subversion = 0;
    if (MPI_Get_library_version(mpi, &len) == MPI_SUCCESS) {
        mpi[strcspn(mpi, "\n,")] = '\0'; /* "Open MPI v4.1.4, package: ..., ident: ..." */
        snprintf(b->mpi, sizeof b->mpi, "%s", mpi);
    } else {
        snprintf(b->mpi, sizeof b->mpi, "unknown");
    }
    if (MPI_Get_version(&version, &subversion) == MPI_SUCCESS)
        snprintf(b->mpi_standard, sizeof b->mpi_standard, "%d.%d", version, subversion);

    int gmaj = 0, gmin = 0, grev = 0;
    if (git_libgit2_version(&gmaj, &gmin, &grev) == 0)
        snprintf(b->libgit2, sizeof b->libgit2, "%d.%d.%d", gmaj, gmin, grev);
    else
        snprintf(b->libgit2, sizeof b->libgit2, "unknown");
    snprintf(b->libgit2_headers, sizeof b->libgit2_headers, "%s", LIBGIT2_VERSION);
    cpu_features(b);
}

int rlvr_buildinfo_format(const rlvr_buildinfo *b, char *buf, size_t cap) {
    char hdf5_note[64] = "", git2_note[64] = "", missing[256] = "";
    /* headers other than the library loaded: a build against one version run with another */
    if (strcmp(b->hdf5, b->hdf5_headers) != 0)
        snprintf(hdf5_note, sizeof hdf5_note, " (built with headers %s)", b->hdf5_headers);
    if (strcmp(b->libgit2, b->libgit2_headers) != 0)
        snprintf(git2_note, sizeof git2_note, " (built with headers %s)", b->libgit2_headers);
    if (b->cpu_missing[0])
        snprintf(missing, sizeof missing, "\n  warning: built for %s, which this CPU lacks", b->cpu_missing);
    return snprintf(buf, cap,
                    "rlvr %s\n"
                    "commit:   %s\n"
                    "compiler: %s\n"
                    "build:    %s, %s\n"
                    "BLAS:     %s\n"
                    "HDF5:     %s%s\n"
                    "MPI:      %s (MPI %s)\n"
                    "libgit2:  %s%s\n"
                    "CPU:      built for %s; this CPU has %s%s\n",
                    b->version, b->commit, b->compiler, b->build_type, b->flags, b->blas, b->hdf5, hdf5_note,
                    b->mpi, b->mpi_standard[0] ? b->mpi_standard : "?", b->libgit2, git2_note, b->cpu_built,
                    b->cpu_has, missing);
}
