/* tests/core/test_buildinfo.c — what `rlvr --version` reports
 * (core/buildinfo.h) against the sources themselves: the commit equals
 * `git rev-parse --short HEAD` of the source tree ($RLVR_SOURCE_DIR), with
 * "-dirty" exactly when `git diff --quiet HEAD` says tracked files changed
 * (skipped when the tree is not a git work tree); each library version
 * equals what the library reports when this test asks it directly; the CPU
 * features match this file's own compile-time macros and
 * __builtin_cpu_supports; the formatted text carries every field. */
#include "test.h"

#include "core/buildinfo.h"

#include <dlfcn.h>
#include <git2.h>
#include <hdf5.h>
#include <mpi.h>

/* The first line git prints for `args` in the source tree; 0 when git
 * exited 0. */
static int git_line(const char *src, const char *args, char *out, size_t cap) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "git -C '%s' %s 2>/dev/null", src, args);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    out[0] = '\0';
    if (!fgets(out, (int)cap, p)) out[0] = '\0';
    out[strcspn(out, "\n")] = '\0';
    return pclose(p);
}

static void check_commit(const rlvr_buildinfo *b) {
    const char *src = getenv("RLVR_SOURCE_DIR");
    char top[1024], head[64], ignored[8], real_src[1024], real_top[1024];
    if (!src || git_line(src, "rev-parse --show-toplevel", top, sizeof top) != 0 || !realpath(src, real_src) ||
        !realpath(top, real_top) || strcmp(real_src, real_top) != 0) {
        printf("test_buildinfo: source tree not a git work tree: commit %s not checked\n", b->commit);
        CHECK(strcmp(b->commit, "unknown") == 0 || strlen(b->commit) >= 7);
        return;
    }
    CHECK(git_line(src, "rev-parse --short HEAD", head, sizeof head) == 0);
    int dirty = git_line(src, "diff --quiet HEAD --", ignored, sizeof ignored) != 0;
    char want[80];
    snprintf(want, sizeof want, "%s%s", head, dirty ? "-dirty" : "");
    CHECK_MSG(strcmp(b->commit, want) == 0, "commit %s, the source tree is at %s (rebuilt since?)", b->commit, want);
}

int main(void) {
    rlvr_buildinfo b;
    rlvr_buildinfo_get(&b);
    CHECK(strcmp(b.version, WANT_VERSION) == 0);
    check_commit(&b);

    unsigned maj, min, rel;
    CHECK(H5get_libversion(&maj, &min, &rel) >= 0);
    char want[MPI_MAX_LIBRARY_VERSION_STRING];
    snprintf(want, sizeof want, "%u.%u.%u", maj, min, rel);
    CHECK_MSG(strcmp(b.hdf5, want) == 0, "HDF5 %s, the library says %s", b.hdf5, want);

    int gmaj, gmin, grev;
    CHECK(git_libgit2_version(&gmaj, &gmin, &grev) == 0);
    snprintf(want, sizeof want, "%d.%d.%d", gmaj, gmin, grev);
    CHECK_MSG(strcmp(b.libgit2, want) == 0, "libgit2 %s, the library says %s", b.libgit2, want);

    int len = 0, v = 0, sv = 0;
    CHECK(MPI_Get_library_version(want, &len) == MPI_SUCCESS);
    CHECK_MSG(strncmp(want, b.mpi, strlen(b.mpi)) == 0 && strchr(",\n", want[strlen(b.mpi)]),
              "MPI %s is not the first clause of \"%s\"", b.mpi, want);
    CHECK(MPI_Get_version(&v, &sv) == MPI_SUCCESS);
    snprintf(want, sizeof want, "%d.%d", v, sv);
    CHECK(strcmp(b.mpi_standard, want) == 0);

    /* looked up by name here (the library declares it weak) */
    char *(*config)(void) = (char *(*)(void))dlsym(RTLD_DEFAULT, "openblas_get_config");
    if (config) {
        snprintf(want, sizeof want, "%s", config());
        for (size_t n = strlen(want); n && want[n - 1] == ' ';) want[--n] = '\0';
        CHECK_MSG(strcmp(b.blas, want) == 0, "BLAS %s, OpenBLAS says %s", b.blas, want);
        CHECK(strncmp(b.blas, "OpenBLAS ", 9) == 0);
    } else {
        CHECK(strcmp(b.blas, "not OpenBLAS") == 0);
    }

#if defined(__x86_64__)
    __builtin_cpu_init();
    char padded[200];
    snprintf(padded, sizeof padded, " %s ", b.cpu_built);
#ifdef __AVX2__
    CHECK(strstr(padded, " avx2 ") != NULL);
#else
    CHECK(strstr(padded, " avx2 ") == NULL);
#endif
#ifdef __AVX512F__
    CHECK(strstr(padded, " avx512f ") != NULL);
#else
    CHECK(strstr(padded, " avx512f ") == NULL);
#endif
    snprintf(padded, sizeof padded, " %s ", b.cpu_has);
    CHECK((strstr(padded, " avx2 ") != NULL) == (__builtin_cpu_supports("avx2") != 0));
    CHECK((strstr(padded, " avx512f ") != NULL) == (__builtin_cpu_supports("avx512f") != 0));
    CHECK((strstr(padded, " fma ") != NULL) == (__builtin_cpu_supports("fma") != 0));
    CHECK(b.cpu_missing[0] == '\0'); /* this test runs, so the CPU has what the build assumed */
#endif

    char text[2048], line[400];
    int n = rlvr_buildinfo_format(&b, text, sizeof text);
    CHECK(n > 0 && (size_t)n < sizeof text);
    snprintf(line, sizeof line, "rlvr %s\ncommit:   %s\n", b.version, b.commit);
    CHECK(strncmp(text, line, strlen(line)) == 0);
    const char *fields[] = {b.compiler, b.build_type, b.flags, b.blas, b.hdf5, b.mpi, b.libgit2, b.cpu_built,
                            b.cpu_has};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        CHECK_MSG(strstr(text, fields[i]) != NULL, "\"%s\" missing from:\n%s", fields[i], text);
    return test_summary("test_buildinfo");
}
