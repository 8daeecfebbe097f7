/* Run manifest: provenance gathered (git via libgit2 and its build-time
 * fallback, SLURM_*, versions), written at start and rewritten at end. */
#include "io/file.h"
#include "io/h5util.h"
#include "io/manifest.h"
#include "io_fixtures.h"
#include "test.h"

#include <ctype.h>

/* First line of a shell command's output ("" on failure). */
static void shell_line(const char *cmd, char *buf, size_t cap) {
    buf[0] = '\0';
    FILE *p = popen(cmd, "r");
    if (!p) return;
    if (!fgets(buf, (int)cap, p)) buf[0] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    pclose(p);
}

static bool is_hex40(const char *s) {
    if (strlen(s) != 40) return false;
    for (int i = 0; i < 40; i++)
        if (!isxdigit((unsigned char)s[i])) return false;
    return true;
}

static void attr_is(const char *path, const char *name, const char *want) {
    char got[512] = "";
    CHECK_OK(rlvr_manifest_read_attr(path, name, got, sizeof got));
    CHECK_MSG(strcmp(got, want) == 0, "%s = \"%s\", expected \"%s\"", name, got, want);
}

static void attr_contains(const char *path, const char *name, const char *part) {
    char got[512] = "";
    CHECK_OK(rlvr_manifest_read_attr(path, name, got, sizeof got));
    CHECK_MSG(strstr(got, part) != NULL, "%s = \"%s\" lacks \"%s\"", name, got, part);
}

int main(void) {
    char dir[4096], path[4200], src[4096], cmd[8400], head[128], changes[512];
    fixture_tmpdir(dir, sizeof dir, "manifest");
    snprintf(path, sizeof path, "%s/manifest.h5", dir);
    test_source_path(src, sizeof src, "");
    setenv("SLURM_JOB_ID", "4242", 1);
    setenv("SLURM_JOB_NODELIST", "node[1,22]", 1);

    const char *hosts[] = {"node1", "node22", "node22"};
    rlvr_manifest_options opt = RLVR_MANIFEST_OPTIONS_INIT;
    opt.run_name = "unit";
    opt.config_text = "[run]\nseed = 17\n";
    opt.config_hash = 0x0123456789abcdefULL;
    opt.seed = 17;
    opt.world_size = 3;
    opt.trainer_ranks = 1;
    opt.verifier_ranks = 1;
    opt.rollout_ranks = 1;
    opt.hosts = hosts;
    opt.n_hosts = 3;
    opt.task_pool_hash = "fnv1a64:00ff";
    opt.source_dir = src;
    rlvr_manifest *m = NULL;
    CHECK_OK(rlvr_manifest_new(&m, &opt));
    if (!m) return test_summary("test_manifest");

    /* the commit and dirty flag agree with git itself */
    snprintf(cmd, sizeof cmd, "git -C '%s' rev-parse HEAD 2>/dev/null", src);
    shell_line(cmd, head, sizeof head);
    snprintf(cmd, sizeof cmd, "git -C '%s' status --porcelain --untracked-files=no 2>/dev/null | head -n1", src);
    shell_line(cmd, changes, sizeof changes);
    if (is_hex40(head)) {
        CHECK(strcmp(rlvr_manifest_git_source(m), "libgit2") == 0);
        CHECK_MSG(strcmp(rlvr_manifest_git_commit(m), head) == 0, "libgit2 says %s, git says %s",
                  rlvr_manifest_git_commit(m), head);
        CHECK(rlvr_manifest_git_dirty(m) == (changes[0] != '\0'));
    } else {
        fprintf(stderr, "note: no git checkout at %s; checking the fallback only\n", src);
    }

    CHECK_OK(rlvr_manifest_write(m, path));
    attr_is(path, "format", "rlvr.manifest");
    attr_is(path, "format_version", "1");
    attr_is(path, "run_name", "unit");
    attr_is(path, "status", "running");
    attr_is(path, "final_step", "-1");
    attr_is(path, "seed", "17");
    attr_is(path, "config_hash", "81985529216486895");
    attr_is(path, "world_size", "3");
    attr_is(path, "task_pool_hash", "fnv1a64:00ff");
    attr_is(path, "hdf5_version", "1.10.8");
    attr_contains(path, "libgit2_version", "1.");
    attr_contains(path, "mpi_version", "Open MPI");
    attr_contains(path, "openblas_version", "OpenBLAS");
    attr_contains(path, "compiler", ".");
    /* the CPU model agrees with /proc/cpuinfo as sed reads it */
    char cpu[256] = "";
    shell_line("sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo 2>/dev/null | head -n1", cpu, sizeof cpu);
    attr_is(path, "cpu_model", cpu[0] ? cpu : "unknown");
    if (is_hex40(head)) attr_is(path, "git_commit", head);

    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(f >= 0);
    if (f >= 0) {
        hid_t g = H5Gopen2(f, "slurm", H5P_DEFAULT);
        char v[64] = "";
        CHECK_OK(rlvr_h5_attr_get_str(g, "SLURM_JOB_ID", v, sizeof v, path));
        CHECK(strcmp(v, "4242") == 0);
        CHECK_OK(rlvr_h5_attr_get_str(g, "SLURM_JOB_NODELIST", v, sizeof v, path));
        CHECK(strcmp(v, "node[1,22]") == 0);
        H5Gclose(g);
        char *config = NULL;
        CHECK_OK(rlvr_h5_read_text(f, "run/config", &config, path));
        CHECK(config && strcmp(config, "[run]\nseed = 17\n") == 0);
        free(config);
        hid_t type = rlvr_h5_string_type(7, false);
        char names[3][7];
        hid_t d = H5Dopen2(f, "hosts", H5P_DEFAULT);
        CHECK(H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, names) >= 0);
        CHECK(strcmp(names[0], "node1") == 0 && strcmp(names[2], "node22") == 0);
        H5Dclose(d);
        H5Tclose(type);
        H5Fclose(f);
    }
    rlvr_file_kind kind;
    CHECK_OK(rlvr_io_identify(path, &kind, NULL));
    CHECK(kind == RLVR_FILE_MANIFEST);
    CHECK_OK(rlvr_io_verify(path, NULL, NULL));

    /* updated at the end */
    CHECK(rlvr_manifest_finish(m, "", 1, 1) == RLVR_EINVAL);
    CHECK_OK(rlvr_manifest_finish(m, "finished", 10, 11));
    CHECK_OK(rlvr_manifest_write(m, path));
    attr_is(path, "status", "finished");
    attr_is(path, "final_step", "10");
    attr_is(path, "final_policy_version", "11");
    char finished[64] = "";
    CHECK_OK(rlvr_manifest_read_attr(path, "finished_utc", finished, sizeof finished));
    CHECK(strlen(finished) == 20);
    char none[8];
    CHECK(rlvr_manifest_read_attr(path, "no_such", none, sizeof none) == RLVR_ENOTFOUND);
    rlvr_manifest_free(m);

    /* outside any repository: the build-time commit, and the reason */
    opt.source_dir = "/";
    opt.n_hosts = 0;
    opt.hosts = NULL;
    CHECK_OK(rlvr_manifest_new(&m, &opt));
    if (m) {
        CHECK(strcmp(rlvr_manifest_git_source(m), "build") == 0);
        CHECK(is_hex40(rlvr_manifest_git_commit(m)) || strcmp(rlvr_manifest_git_commit(m), "unknown") == 0);
        CHECK_OK(rlvr_manifest_write(m, path));
        attr_is(path, "git_source", "build");
        attr_contains(path, "git_error", "repository");
        CHECK_OK(rlvr_io_verify(path, NULL, NULL));
        rlvr_manifest_free(m);
    }
    opt.version = 0;
    CHECK(rlvr_manifest_new(&m, &opt) == RLVR_EINVAL);
    fixture_rmtree(dir);
    return test_summary("test_manifest");
}
