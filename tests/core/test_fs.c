/* tests/core/test_fs.c — core/fs.h and core/hash.h: mkdir -p over existing
 * and missing parents, an atomic write that replaces a file whole and
 * leaves no part file, one that fails leaves the old contents, and FNV-1a's
 * vectors (one-shot equal to streamed). */
#include "core/fs.h"
#include "core/hash.h"
#include "test.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    static char buf[256];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

int main(void) {
    char dir[] = "/tmp/rlvr-test-fs-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char deep[512], file[512], part[600];
    snprintf(deep, sizeof deep, "%s/a/b/c", dir);
    CHECK_OK(rlvr_mkdir_p(deep, 0755));
    CHECK_OK(rlvr_mkdir_p(deep, 0755)); /* existing: not an error */
    struct stat st;
    CHECK(stat(deep, &st) == 0 && S_ISDIR(st.st_mode));

    snprintf(file, sizeof file, "%s/a/b/c/f.txt", dir);
    snprintf(part, sizeof part, "%s.part", file);
    CHECK_OK(rlvr_write_text_atomic(file, "first"));
    CHECK_OK(rlvr_write_file_atomic(file, "second!", 6));
    char *got = slurp(file);
    CHECK_MSG(got && strcmp(got, "second") == 0, "contents: %s", got ? got : "(none)");
    CHECK(access(part, F_OK) != 0);
    CHECK_OK(rlvr_write_line_atomic(file, "{}"));
    got = slurp(file);
    CHECK(got && strcmp(got, "{}\n") == 0);
    CHECK_OK(rlvr_write_file_atomic(file, "second!", 6));

    /* a path under a regular file cannot be created: an error, nothing left */
    char bad[700];
    snprintf(bad, sizeof bad, "%s/x", file);
    CHECK(rlvr_write_text_atomic(bad, "lost") < 0);
    CHECK(rlvr_mkdir_p(bad, 0755) < 0);
    got = slurp(file);
    CHECK(got && strcmp(got, "second") == 0);

    /* FNV-1a 64 with rlvr's offset basis (see core/hash.h), computed by an
     * independent implementation */
    CHECK(rlvr_fnv1a64("", 0) == 0x14650fb0739d0383ULL);
    CHECK(rlvr_fnv1a64("a", 1) == 0x44bd8ad473cd9906ULL);
    CHECK(rlvr_fnv1a64("foobar", 6) == 0x88fad7c0a8ff07f2ULL);
    CHECK(rlvr_fnv1a64_update(rlvr_fnv1a64("foo", 3), "bar", 3) == rlvr_fnv1a64("foobar", 6));

    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    return test_summary("test_fs");
}
