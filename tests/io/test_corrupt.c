/* Corruption: bytes flipped inside a dataset's chunk are caught by the
 * Fletcher32 checksum and refused with a clear error; truncated files are
 * refused; nothing crashes. Every kind of rlvr file is tried. */
#include "io/file.h"
#include "io/h5util.h"
#include "io_samples.h"
#include "h5_corrupt.h"
#include "test.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>

static int copy_file(const char *from, const char *to) {
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    int rc = in && out ? 0 : -1;
    char buf[65536];
    size_t n;
    while (rc == 0 && in && (n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n) rc = -1;
    if (in) fclose(in);
    if (out && fclose(out) != 0) rc = -1;
    return rc;
}

/* Copies `path` to `bad` with three bytes in the middle of the dataset's
 * first chunk inverted. */
static bool corrupt_chunk(const char *path, const char *bad, const char *dataset) {
    return copy_file(path, bad) == 0 && test_corrupt_chunk(bad, dataset);
}

static bool truncate_copy(const char *path, const char *bad, double fraction) {
    struct stat st;
    if (stat(path, &st) != 0 || copy_file(path, bad) != 0) return false;
    return truncate(bad, (off_t)((double)st.st_size * fraction)) == 0;
}

static bool says(const char *what) {
    bool ok = strstr(rlvr_error_last(), what) != NULL;
    if (!ok) fprintf(stderr, "  message was: %s\n", rlvr_error_last());
    return ok;
}

static void test_shard(const char *dir) {
    char path[4200], bad[4300];
    CHECK_OK(sample_shard(dir, 40, path, sizeof path));
    snprintf(bad, sizeof bad, "%s.bad", path);
    const char *datasets[] = {"tokens/id", "tokens/logprob", "rollouts/reward_total", "turns/tool_name"};
    for (size_t i = 0; i < sizeof datasets / sizeof datasets[0]; i++) {
        CHECK_MSG(corrupt_chunk(path, bad, datasets[i]), "could not corrupt %s", datasets[i]);
        rlvr_shard *s = NULL;
        CHECK(rlvr_shard_open(&s, bad) == RLVR_ECHECKSUM);
        CHECK(s == NULL);
        CHECK(says("checksum") && says(datasets[i]) && says(bad));
        CHECK(rlvr_io_verify(bad, NULL, NULL) == RLVR_ECHECKSUM);
        CHECK(says(datasets[i]));
    }
    rlvr_shard *s = NULL;
    CHECK_OK(rlvr_shard_open(&s, path)); /* the original is fine */
    rlvr_shard_close(s);
}

static void test_checkpoint(const char *dir) {
    char path[4200], bad[4300];
    CHECK_OK(sample_checkpoint(dir, path, sizeof path));
    snprintf(bad, sizeof bad, "%s.bad", path);
    CHECK(corrupt_chunk(path, bad, "model/params/wq"));
    rlvr_checkpoint *ck = NULL;
    CHECK_OK(rlvr_checkpoint_open(&ck, bad)); /* the header is intact */
    rlvr_model *m = NULL;
    if (ck) {
        CHECK(rlvr_checkpoint_load_model(ck, &m) == RLVR_ECHECKSUM);
        CHECK(m == NULL);
        CHECK(says("model/params/wq") && says("checksum") && says(bad));
        rlvr_checkpoint_close(ck);
    }
    CHECK(corrupt_chunk(path, bad, "optimizer/adam_v/w_down"));
    CHECK_OK(rlvr_checkpoint_open(&ck, bad));
    if (ck) {
        CHECK(rlvr_checkpoint_load_model(ck, &m) == RLVR_ECHECKSUM);
        CHECK(says("optimizer/adam_v/w_down"));
        rlvr_checkpoint_close(ck);
    }
    CHECK(corrupt_chunk(path, bad, "state/difficulty/table"));
    CHECK_OK(rlvr_checkpoint_open(&ck, bad));
    if (ck) {
        float t[4][2];
        int64_t dims[RLVR_IO_MAX_RANK] = {4, 2};
        CHECK(rlvr_checkpoint_read_array(ck, "difficulty/table", RLVR_DT_F32, 2, dims, t) == RLVR_ECHECKSUM);
        rlvr_checkpoint_close(ck);
    }
    CHECK(corrupt_chunk(path, bad, "run/config"));
    CHECK(rlvr_checkpoint_open(&ck, bad) == RLVR_ECHECKSUM);
    CHECK(says("run/config"));
}

static void test_metrics_and_manifest(const char *dir) {
    char path[4200], bad[4300];
    CHECK_OK(sample_metrics(dir, 50, path, sizeof path));
    snprintf(bad, sizeof bad, "%s.bad", path);
    CHECK(corrupt_chunk(path, bad, "steps/loss"));
    rlvr_metrics_table t;
    CHECK(rlvr_metrics_read(&t, bad) == RLVR_ECHECKSUM);
    CHECK(says("steps/loss"));
    /* a resumed run must not silently drop a damaged table */
    rlvr_metrics *m = NULL;
    CHECK(rlvr_metrics_open(&m, bad, INT64_MAX) == RLVR_ECHECKSUM);
    CHECK(m == NULL);
    struct stat st;
    CHECK(stat(bad, &st) == 0 && st.st_size > 0);

    CHECK_OK(sample_manifest(dir, path, sizeof path));
    snprintf(bad, sizeof bad, "%s.bad", path);
    CHECK(corrupt_chunk(path, bad, "hosts"));
    CHECK(rlvr_io_verify(bad, NULL, NULL) == RLVR_ECHECKSUM);
    CHECK(says("hosts"));
}

/* Flips a byte at `at` in a copy of `path`. */
static bool flip_at(const char *path, const char *bad, off_t at) {
    if (copy_file(path, bad) != 0) return false;
    int fd = open(bad, O_RDWR);
    if (fd < 0) return false;
    unsigned char c;
    bool ok = pread(fd, &c, 1, at) == 1;
    c ^= 0x5a;
    ok = ok && pwrite(fd, &c, 1, at) == 1;
    close(fd);
    return ok;
}

/* Metadata is checksummed too (HDF5 1.8 format and later): a damaged
 * object header or superblock is refused, not misread. HDF5 1.10 leaks a
 * little on this error path (an object header it was loading), so the
 * reads run in a child, which also shows they do not crash. */
static void metadata_checks(const char *path, const char *bad, haddr_t header) {
    rlvr_shard *s = NULL;
    CHECK(flip_at(path, bad, (off_t)header + 12));
    CHECK(rlvr_shard_open(&s, bad) < 0 && s == NULL);
    CHECK(says(bad) && says("tokens/id"));
    CHECK(rlvr_io_verify(bad, NULL, NULL) < 0);
    CHECK(flip_at(path, bad, 20)); /* inside the superblock */
    CHECK(rlvr_shard_open(&s, bad) == RLVR_ECHECKSUM && s == NULL);
    CHECK(says("checksum"));
}

static void test_metadata(const char *dir) {
    char path[4200], bad[4300];
    CHECK_OK(sample_shard(dir, 10, path, sizeof path));
    snprintf(bad, sizeof bad, "%s.meta", path);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    H5O_info_t info;
    bool found = f >= 0 && H5Oget_info_by_name2(f, "tokens/id", &info, H5O_INFO_BASIC, H5P_DEFAULT) >= 0;
    if (f >= 0) H5Fclose(f);
    CHECK(found);
    if (!found) return;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        metadata_checks(path, bad, info.addr);
        fflush(NULL);
        _exit(test_failures ? 1 : 0);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "metadata checks failed or crashed (status %d)",
              status);
}

/* Every kind, cut at several lengths: refused, never a crash. */
static void test_truncated(const char *dir) {
    char paths[4][4200], bad[4300];
    CHECK_OK(sample_shard(dir, 40, paths[0], sizeof paths[0]));
    CHECK_OK(sample_checkpoint(dir, paths[1], sizeof paths[1]));
    CHECK_OK(sample_metrics(dir, 50, paths[2], sizeof paths[2]));
    CHECK_OK(sample_manifest(dir, paths[3], sizeof paths[3]));
    const double cuts[] = {0.0, 0.01, 0.3, 0.6, 0.9, 0.999};
    for (int k = 0; k < 4; k++) {
        snprintf(bad, sizeof bad, "%.4200s.cut", paths[k]);
        for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
            CHECK(truncate_copy(paths[k], bad, cuts[c]));
            int rc;
            switch (k) {
            case 0: {
                rlvr_shard *s = NULL;
                rc = rlvr_shard_open(&s, bad);
                rlvr_shard_close(s);
                break;
            }
            case 1: {
                rlvr_checkpoint *ck = NULL;
                rc = rlvr_checkpoint_open(&ck, bad);
                if (rc == 0) {
                    rlvr_model *m = NULL;
                    rc = rlvr_checkpoint_load_model(ck, &m);
                    rlvr_model_free(m);
                }
                rlvr_checkpoint_close(ck);
                break;
            }
            case 2: {
                rlvr_metrics_table t;
                rc = rlvr_metrics_read(&t, bad);
                if (rc == 0) rlvr_metrics_table_free(&t);
                break;
            }
            default: rc = rlvr_io_verify(bad, NULL, NULL); break;
            }
            CHECK_MSG(rc < 0, "%s cut to %.1f%% was accepted", paths[k], 100 * cuts[c]);
            CHECK(rc == RLVR_EFORMAT || rc == RLVR_ECHECKSUM || rc == RLVR_EHDF5);
            CHECK(says(bad));
            CHECK(rlvr_io_verify(bad, NULL, NULL) < 0);
        }
    }
    CHECK(truncate_copy(paths[0], bad, 0.5));
    rlvr_shard *s = NULL;
    CHECK(rlvr_shard_open(&s, bad) == RLVR_EFORMAT);
    CHECK(says("truncated"));
}

int main(void) {
    rlvr_h5_init();
    char dir[4096];
    fixture_tmpdir(dir, sizeof dir, "corrupt");
    test_shard(dir);
    test_checkpoint(dir);
    test_metrics_and_manifest(dir);
    test_metadata(dir);
    test_truncated(dir);
    fixture_rmtree(dir);
    return test_summary("test_corrupt");
}
