/* tests/enclave/test_environment.c — task environments (enclave/image.h):
 * a root tree built here (the host's Python with pytest, and a package the
 * host lacks) as a directory, a SquashFS image and the same image wrapped
 * as a SIF file runs a command-mode pytest task whose tests pass only
 * inside it (the control: the same task on the host's system paths fails);
 * every image mounted once per process however many tasks and sandboxes
 * use it; and the refusals that name the file: neither a directory nor an
 * image, truncated and corrupt images, a SIF without a SquashFS partition,
 * an image without /bin/sh, a working directory outside the image or owned
 * by the sandbox. Red team: the image as a channel between verifications
 * (a write into it never reaches the next, in any form; the control plants
 * the module in a copy and the reader wins). Run as root and as uid 65534,
 * with overlays and copies. */
#include "enclave/fsutil.h"
#include "core/fs.h"
#include "enclave/gitrepo.h"
#include "enclave/image.h"
#include "enclave/reason.h"
#include "enclave/sandbox.h"
#include "enclave/verify.h"

#include "core/error.h"
#include "core/log.h"
#include "fixture.h"
#include "test.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static rlvr_sandbox_host *host;

static int write_file(const char *dir, const char *rel, const char *text) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    RLVR_TRY(rlvr_mkdir_p(path, 0755));
    *slash = '/';
    return rlvr_fs_write_file(path, text, strlen(text));
}

static int sh(const char *cmd) {
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ---- images ---------------------------------------------------------------------- */

static void put_le(unsigned char *p, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* Wraps SquashFS file `sqfs` as a SIF file: the global header, a definition
 * file descriptor, the partition's descriptor (SquashFS, `parttype`; 0: a
 * raw partition instead), free descriptors, and the data 4 KiB-aligned. */
static int write_sif(const char *sqfs, const char *out, uint32_t parttype) {
    char *data = NULL;
    size_t len = 0;
    RLVR_TRY(rlvr_fs_read_file(sqfs, &data, &len));
    enum { DESCR = 585, TOTAL = 8, DATA_OFF = 8192 };
    size_t file_len = DATA_OFF + len;
    unsigned char *f = calloc(1, file_len);
    if (!f) {
        free(data);
        return RLVR_ENOMEM;
    }
    memcpy(f, "#!/usr/bin/env run-singularity\n", 31);
    memcpy(f + 32, "SIF_MAGIC", 9);
    memcpy(f + 42, "01", 2);
    memcpy(f + 45, "02", 2);
    put_le(f + 80, TOTAL - 2, 8);     /* free descriptors */
    put_le(f + 88, TOTAL, 8);         /* total */
    put_le(f + 96, 4096, 8);          /* descriptors' offset */
    put_le(f + 104, TOTAL * DESCR, 8);
    put_le(f + 112, DATA_OFF, 8);
    put_le(f + 120, len, 8);
    unsigned char *d = f + 4096;      /* a definition file, empty */
    put_le(d, 0x4001, 4);
    d[4] = 1;
    put_le(d + 5, 1, 4);
    d += DESCR;                       /* the partition */
    put_le(d, 0x4004, 4);
    d[4] = 1;
    put_le(d + 5, 2, 4);
    put_le(d + 17, DATA_OFF, 8);
    put_le(d + 25, len, 8);
    put_le(d + 33, len, 8);
    put_le(d + 201, parttype ? 1 : 4, 4); /* fstype: SquashFS, or raw */
    put_le(d + 205, parttype ? parttype : 3, 4);
    memcpy(f + DATA_OFF, data, len);
    int rc = rlvr_fs_write_file(out, f, file_len);
    free(f);
    free(data);
    return rc;
}

/* A copy of `src` with `n` bytes at `at` replaced, or cut to `cut` bytes. */
static int damaged_copy(const char *src, const char *out, size_t cut, size_t at, const void *bytes, size_t n) {
    char *data = NULL;
    size_t len = 0;
    RLVR_TRY(rlvr_fs_read_file(src, &data, &len));
    if (bytes) memcpy(data + at, bytes, n);
    int rc = rlvr_fs_write_file(out, data, cut ? cut : len);
    free(data);
    return rc;
}

typedef struct {
    char root[PATH_MAX - 64], sqfs[PATH_MAX], sif[PATH_MAX], scratch[PATH_MAX - 128];
} images;

static void make_images(const char *scratch, images *im) {
    const char *src = getenv("RLVR_SOURCE_DIR");
    CHECK_MSG(src != NULL, "RLVR_SOURCE_DIR is not set");
    snprintf(im->scratch, sizeof im->scratch, "%s", scratch);
    snprintf(im->root, sizeof im->root, "%s/root", scratch);
    snprintf(im->sqfs, sizeof im->sqfs, "%s/env.sqfs", scratch);
    snprintf(im->sif, sizeof im->sif, "%s/env.sif", scratch);
    char cmd[4 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "sh '%s/tests/enclave/make_env_root.sh' '%s' && mksquashfs '%s' '%s' -quiet -noappend "
             "-all-root -no-progress >/dev/null", src ? src : ".", im->root, im->root, im->sqfs);
    CHECK_MSG(sh(cmd) == 0, "building the environment: %s", cmd);
    CHECK_OK(write_sif(im->sqfs, im->sif, 2));
}

/* ---- what a path is -------------------------------------------------------------- */

static void expect_refused(const char *path, const char *needle) {
    rlvr_image_info info;
    int rc = rlvr_image_inspect(path, &info);
    CHECK_MSG(rc < 0 && strstr(rlvr_error_last(), needle) && strstr(rlvr_error_last(), path),
              "%s: rc %d, \"%s\" (wanted \"%s\" and the path)", path, rc, rlvr_error_last(), needle);
}

static void test_inspect(const images *im) {
    rlvr_image_info info;
    CHECK_OK(rlvr_image_inspect(im->root, &info));
    CHECK(info.kind == RLVR_IMAGE_DIRECTORY);
    CHECK_OK(rlvr_image_inspect(im->sqfs, &info));
    CHECK(info.kind == RLVR_IMAGE_SQUASHFS && info.offset == 0 && info.size > 0);
    uint64_t size = info.size;
    CHECK_OK(rlvr_image_inspect(im->sif, &info));
    CHECK(info.kind == RLVR_IMAGE_SIF && info.offset == 8192 && info.size == size);

    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/plain.txt", im->scratch);
    CHECK_OK(rlvr_fs_write_file(path, "not an image\n", 13));
    expect_refused(path, "neither a directory nor a SquashFS or SIF image");
    expect_refused("/dev/null", "neither a directory nor a SquashFS or SIF image");
    snprintf(path, sizeof path, "%s/missing.sqfs", im->scratch);
    expect_refused(path, "No such file");
    snprintf(path, sizeof path, "%s/half.sqfs", im->scratch);
    CHECK_OK(damaged_copy(im->sqfs, path, (size_t)size / 2, 0, NULL, 0));
    expect_refused(path, "truncated");
    snprintf(path, sizeof path, "%s/corrupt.sqfs", im->scratch);
    const unsigned char bad_log[2] = {9, 0}; /* block_log 9 against a 128 KiB block */
    CHECK_OK(damaged_copy(im->sqfs, path, 0, 22, bad_log, 2));
    expect_refused(path, "corrupt");
    snprintf(path, sizeof path, "%s/raw.sif", im->scratch);
    CHECK_OK(write_sif(im->sqfs, path, 0));
    expect_refused(path, "no SquashFS system partition");
    snprintf(path, sizeof path, "%s/half.sif", im->scratch);
    CHECK_OK(damaged_copy(im->sif, path, 8192 + (size_t)size / 2, 0, NULL, 0));
    expect_refused(path, "truncated");

    /* working directories a task may not name */
    static const char *const bad_workdirs[] = {"relative", "/", "/proc", "/tmp/x", "/.rlvr", "/a/../b", "/a//b"};
    for (size_t i = 0; i < sizeof bad_workdirs / sizeof *bad_workdirs; i++)
        CHECK_MSG(rlvr_image_workdir_check(bad_workdirs[i]) == RLVR_EINVAL, "workdir %s accepted", bad_workdirs[i]);
    CHECK_OK(rlvr_image_workdir_check("/testbed"));
    CHECK_OK(rlvr_image_workdir_check("/usr/src/app"));
}

/* An image that mounts but lacks /bin/sh, and working directories outside
 * an image: refused by the host's check, naming the file. */
static void test_root_refusals(const images *im) {
    char tree[PATH_MAX], img[PATH_MAX], cmd[3 * PATH_MAX];
    snprintf(tree, sizeof tree, "%s/nosh", im->scratch);
    snprintf(img, sizeof img, "%s/nosh.sqfs", im->scratch);
    CHECK_OK(write_file(tree, "usr/bin/README", "no shell here\n"));
    snprintf(cmd, sizeof cmd, "mksquashfs '%s' '%s' -quiet -noappend -all-root -no-progress >/dev/null", tree, img);
    CHECK(sh(cmd) == 0);
    const char *paths[] = {tree, img};
    for (int i = 0; i < 2; i++) {
        int rc = rlvr_sandbox_host_image(host, paths[i], NULL, NULL, 0);
        CHECK_MSG(rc == RLVR_EINVAL && strstr(rlvr_error_last(), "no executable /bin/sh") &&
                      strstr(rlvr_error_last(), paths[i]),
                  "%s: %d %s", paths[i], rc, rlvr_error_last());
    }
    int rc = rlvr_sandbox_host_image(host, im->sqfs, "/nonexistent/deeper", NULL, 0);
    CHECK_MSG(rc == RLVR_EINVAL && strstr(rlvr_error_last(), "outside") && strstr(rlvr_error_last(), im->sqfs),
              "workdir outside: %d %s", rc, rlvr_error_last());
    rc = rlvr_sandbox_host_image(host, im->sqfs, "/usr/bin/python3", NULL, 0);
    CHECK_MSG(rc == RLVR_EINVAL && strstr(rlvr_error_last(), "not a directory"), "workdir a file: %s",
              rlvr_error_last());
    /* a whole superblock over a broken root inode: neither way mounts it,
     * and the error says what each met */
    char broken[PATH_MAX];
    snprintf(broken, sizeof broken, "%s/broken-root.sqfs", im->scratch);
    const unsigned char bad_root[8] = {0xf0, 0xff, 0xff, 0x0f, 0, 0, 0, 0};
    CHECK_OK(damaged_copy(im->sqfs, broken, 0, 32, bad_root, sizeof bad_root));
    rc = rlvr_sandbox_host_image(host, broken, NULL, NULL, 0);
    const char *e = rlvr_error_last();
    CHECK_MSG(rc == RLVR_ESANDBOX && strstr(e, broken) && strstr(e, "kernel squashfs:") && strstr(e, "squashfuse:"),
              "an image neither way mounts: %d %s", rc, e);
    char how[64] = "";
    CHECK_OK(rlvr_sandbox_host_image(host, im->sqfs, "/testbed", how, sizeof how));
    CHECK_MSG(strcmp(how, rlvr_sandbox_host_privileged(host) ? "kernel squashfs" : "squashfuse") == 0,
              "mounted with %s", how);
    CHECK_OK(rlvr_sandbox_host_image(host, im->root, "/srv", how, sizeof how));
    CHECK(strcmp(how, "directory") == 0);
}

/* ---- a pytest task inside the environment ------------------------------------------- */

static const char calc_broken[] = "def mul(a, b):\n    return a + b\n";
static const char calc_fixed[] = "def mul(a, b):\n    return a * b\n";
/* Passes only where rlvr_env_marker 7.3.1 exists (the environment), in the
 * working directory the task names, with the task's own variable set. */
static const char hidden_tests[] =
    "import os, sys\n"
    "sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))\n"
    "import calc\n"
    "def test_environment():\n"
    "    import rlvr_env_marker\n"
    "    assert rlvr_env_marker.VERSION == '7.3.1'\n"
    "    assert os.getcwd() == '/testbed'\n"
    "    assert os.environ.get('RLVR_ENV_CHECK') == 'inside'\n"
    "def test_mul():\n"
    "    assert calc.mul(2, 3) == 6\n";

typedef struct {
    char root[PATH_MAX - 64], repo[PATH_MAX], hidden[PATH_MAX];
    char base[41];
} calc_task;

static void make_task(const char *scratch, calc_task *c) {
    snprintf(c->root, sizeof c->root, "%s/task", scratch);
    snprintf(c->repo, sizeof c->repo, "%s/repo", c->root);
    snprintf(c->hidden, sizeof c->hidden, "%s/hidden", c->root);
    CHECK_OK(write_file(c->repo, "calc.py", calc_broken));
    CHECK_OK(write_file(c->hidden, "tests/test_calc.py", hidden_tests));
    CHECK_OK(rlvr_git_init_commit_all(c->repo, "base\n", c->base));
}

static const char *const task_env[] = {"RLVR_ENV_CHECK=inside", "PYTHONDONTWRITEBYTECODE=1", NULL};

static rlvr_verify_spec calc_spec(const calc_task *c, const char *environment) {
    static const char *const f2p[] = {"tests/test_calc.py::test_mul", NULL};
    static const char *const p2p[] = {"tests/test_calc.py::test_environment", NULL};
    static const char *const protected_globs[] = {"tests", NULL};
    rlvr_verify_spec spec = {.version = RLVR_VERIFY_SPEC_VERSION, .repo_dir = c->repo, .base_commit = c->base,
                             .hidden_dir = c->hidden,
                             .test_command = "python3 -I -m pytest -p no:cacheprovider -q --junitxml=report.xml tests",
                             .fail_to_pass = f2p, .pass_to_pass = p2p, .protected_globs = protected_globs,
                             .consensus_runs = 1, .results_junit = "report.xml", .environment = environment,
                             .workdir = "/testbed", .env = task_env};
    rlvr_sandbox_limits_default(&spec.limits);
    spec.limits.wall_s = 60;
    return spec;
}

static rlvr_enclave_verdict verify_text(rlvr_verify_task *task, const calc_task *c, const char *text) {
    fixture_edit e = {EDIT_WRITE, "calc.py", text, 0, 0};
    char *patch = NULL;
    size_t len = 0;
    CHECK_OK(fixture_patch_repo(c->repo, c->base, c->root, &e, 1, &patch, &len));
    rlvr_enclave_verdict v = fixture_verify(task, patch ? patch : "", len, 7);
    free(patch);
    return v;
}

#define EXPECT(v, verdict_, reason_, what)                                                               \
    CHECK_MSG((v).verdict == (verdict_) && (v).reason == (reason_), "%s: verdict %s reason %s", what,     \
              rlvr_verdict_name((v).verdict), rlvr_reason_name((v).reason))

static void test_pytest_inside(const images *im, const char *scratch) {
    calc_task c;
    make_task(scratch, &c);
    size_t mounts_before = rlvr_sandbox_host_image_mounts(host);
    const char *forms[] = {im->root, im->sqfs, im->sif};
    for (int i = 0; i < 3; i++) {
        rlvr_verify_spec spec = calc_spec(&c, forms[i]);
        rlvr_verify_task *task = NULL;
        CHECK_OK(rlvr_verify_task_new(&task, host, &spec));
        if (!task) continue;
        rlvr_enclave_verdict v = verify_text(task, &c, calc_fixed);
        EXPECT(v, RLVR_VERDICT_PASS, RLVR_REASON_NONE, forms[i]);
        CHECK(v.tests_total == 2 && v.tests_passed == 2);
        v = verify_text(task, &c, calc_broken); /* pooled: the same enclave, reset */
        EXPECT(v, RLVR_VERDICT_FAIL, RLVR_REASON_TESTS_FAILED, forms[i]);
        CHECK_MSG(v.tests_passed == 1 && !v.p2p_failed, "%s: the environment's own test failed", forms[i]);
        v = verify_text(task, &c, calc_fixed);
        EXPECT(v, RLVR_VERDICT_PASS, RLVR_REASON_NONE, forms[i]);
        rlvr_verify_task_free(task);
    }
    /* the control: the same task on the host's system paths, where the
     * package is missing, fails its environment test even with the fix */
    rlvr_verify_spec spec = calc_spec(&c, NULL);
    spec.workdir = NULL;
    rlvr_verify_task *task = NULL;
    CHECK_OK(rlvr_verify_task_new(&task, host, &spec));
    if (task) {
        rlvr_enclave_verdict v = verify_text(task, &c, calc_fixed);
        CHECK_MSG(v.verdict != RLVR_VERDICT_PASS && v.p2p_failed, "control on the host: verdict %s reason %s",
                  rlvr_verdict_name(v.verdict), rlvr_reason_name(v.reason));
        rlvr_verify_task_free(task);
    }
    /* many tasks and sandboxes on one image: still one mount each for the
     * SquashFS and the SIF file (directories need none) */
    rlvr_verify_task *many[12] = {0};
    for (int i = 0; i < 12; i++) {
        spec = calc_spec(&c, i % 2 ? im->sqfs : im->sif);
        CHECK_OK(rlvr_verify_task_new(&many[i], host, &spec));
        if (many[i] && i < 4) {
            rlvr_enclave_verdict v = verify_text(many[i], &c, calc_fixed);
            EXPECT(v, RLVR_VERDICT_PASS, RLVR_REASON_NONE, "one of many");
        }
    }
    for (int i = 0; i < 12; i++) rlvr_verify_task_free(many[i]);
    size_t mounts = rlvr_sandbox_host_image_mounts(host);
    CHECK_MSG(mounts == mounts_before + 1, "image mounts: %zu after the tasks, %zu before; wanted one more (the SIF "
              "file; the SquashFS file was mounted by the refusals' check)", mounts, mounts_before);
}

/* ---- red team: the image as a channel ------------------------------------------------ */

/* The writer leaves a correct `mul` in every directory Python imports from
 * (the image's site-packages and standard library among them); the reader
 * is the bug, unless such a module is there to import. */
static const char writer[] =
    "import sys\n"
    "def mul(a, b):\n    return a + b\n"
    "for d in sys.path + ['/usr/lib/python3/dist-packages', '/usr/local/lib', '/']:\n"
    "    try:\n"
    "        open(d + '/rlvr_planted.py', 'w').write('def mul(a, b):\\n    return a * b\\n')\n"
    "    except OSError:\n"
    "        pass\n";
static const char reader[] =
    "try:\n    from rlvr_planted import mul\n"
    "except ImportError:\n    def mul(a, b):\n        return a + b\n";

/* Whatever a verification writes into the environment is gone before the
 * next: the image is read-only in every form (a directory's bind too), and
 * each sandbox has its own view of it. The control: the reader passes in
 * a copy of the directory environment that holds the planted module, as it
 * would if a write had stuck. */
static void test_image_channel(const images *im, const char *scratch) {
    calc_task c;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/channel", scratch);
    make_task(dir, &c);
    const char *forms[] = {im->root, im->sqfs, im->sif};
    for (int i = 0; i < 3; i++) {
        rlvr_verify_spec spec = calc_spec(&c, forms[i]);
        rlvr_verify_task *pooled = NULL, *fresh = NULL;
        CHECK_OK(rlvr_verify_task_new(&pooled, host, &spec));
        spec.fresh_enclaves = true;
        CHECK_OK(rlvr_verify_task_new(&fresh, host, &spec));
        if (!pooled || !fresh) {
            rlvr_verify_task_free(pooled);
            rlvr_verify_task_free(fresh);
            continue;
        }
        rlvr_enclave_verdict v = verify_text(pooled, &c, writer);
        EXPECT(v, RLVR_VERDICT_FAIL, RLVR_REASON_TESTS_FAILED, "the writer");
        v = verify_text(pooled, &c, reader);
        EXPECT(v, RLVR_VERDICT_FAIL, RLVR_REASON_TESTS_FAILED, "the reader after the writer, pooled enclave");
        v = verify_text(fresh, &c, reader);
        EXPECT(v, RLVR_VERDICT_FAIL, RLVR_REASON_TESTS_FAILED, "the reader after the writer, another enclave");
        rlvr_verify_task_free(pooled);
        rlvr_verify_task_free(fresh);
    }
    char planted[PATH_MAX], cmd[4 * PATH_MAX + 256];
    snprintf(planted, sizeof planted, "%s/planted-root", scratch);
    snprintf(cmd, sizeof cmd, "cp -a '%s' '%s' && printf 'def mul(a, b):\\n    return a * b\\n' > "
             "'%s/usr/lib/python3/dist-packages/rlvr_planted.py' && chmod -R a+rX '%s'", im->root, planted, planted,
             planted);
    CHECK(sh(cmd) == 0);
    rlvr_verify_spec spec = calc_spec(&c, planted);
    rlvr_verify_task *task = NULL;
    CHECK_OK(rlvr_verify_task_new(&task, host, &spec));
    if (task) {
        rlvr_enclave_verdict v = verify_text(task, &c, reader);
        EXPECT(v, RLVR_VERDICT_PASS, RLVR_REASON_NONE, "control: the reader where the module is planted");
        rlvr_verify_task_free(task);
    }
}

int main(int argc, char **argv) {
    rlvr_log_init_from_env();
    bool unprivileged, copy;
    char *scratch = NULL;
    CHECK_OK(fixture_variant(argc, argv, &unprivileged, &copy, &scratch, "rlvr-environment-"));
    if (!scratch) return test_summary("test_environment");
    chmod(scratch, 0755); /* the sandbox uid binds the directory image from here */
    images im;
    make_images(scratch, &im);
    test_inspect(&im);
    int rc = fixture_host(&host, !copy);
    CHECK_MSG(rc == 0, "host: %s", rlvr_error_last());
    if (rc == 0) {
        test_root_refusals(&im);
        test_pytest_inside(&im, scratch);
        test_image_channel(&im, scratch);
    }
    rlvr_sandbox_host_free(host);
    rlvr_fs_remove_tree(scratch);
    free(scratch);
    char name[64];
    snprintf(name, sizeof name, "test_environment%s%s", unprivileged ? " --unprivileged" : "", copy ? " --copy" : "");
    return test_summary(name);
}
