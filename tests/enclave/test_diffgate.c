/* tests/enclave/test_diffgate.c — exports, extraction and validation. */
#include "test.h"

#include "fixture.h"

#include "enclave/diffgate.h"
#include "enclave/fsutil.h"
#include "enclave/gitrepo.h"
#include "enclave/reason.h"

#include <git2.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_globs(void) {
    CHECK(rlvr_diffgate_glob_match("conftest.py", "conftest.py"));
    CHECK(rlvr_diffgate_glob_match("conftest.py", "a/b/conftest.py"));
    CHECK(!rlvr_diffgate_glob_match("conftest.py", "a/conftest.pyc"));
    CHECK(rlvr_diffgate_glob_match("*.pth", "lib/x.pth"));
    CHECK(rlvr_diffgate_glob_match("tests", "tests/a.sh"));
    CHECK(rlvr_diffgate_glob_match("tests", "src/tests/a.sh"));
    CHECK(!rlvr_diffgate_glob_match("tests", "src/testsuite.c"));
    CHECK(rlvr_diffgate_glob_match("tests/unit", "tests/unit/x.c"));
    CHECK(!rlvr_diffgate_glob_match("tests/unit", "src/tests/unit/x.c"));
    CHECK(rlvr_diffgate_glob_match("/Makefile", "Makefile"));
    CHECK(!rlvr_diffgate_glob_match("/src/Makefile", "Makefile"));
    CHECK(rlvr_diffgate_glob_match("build/*.mk", "build/a.mk"));
    CHECK(!rlvr_diffgate_glob_match("build/*.mk", "build/sub/a.mk"));
    CHECK(rlvr_diffgate_glob_match("tests/", "tests/x"));
    CHECK(rlvr_diffgate_glob_match("/a\\*b", "a*b"));
    CHECK(!rlvr_diffgate_glob_match("/a\\*b", "axb"));
    CHECK(!rlvr_diffgate_glob_match("", "x"));

    const char *const task[] = {"tests", "/Makefile", NULL};
    CHECK(rlvr_diffgate_check_path("src/a.c", task) == RLVR_REASON_NONE);
    CHECK(rlvr_diffgate_check_path("tests/x.sh", task) == RLVR_REASON_PROTECTED_PATH);
    CHECK(rlvr_diffgate_check_path("Makefile", task) == RLVR_REASON_PROTECTED_PATH);
    CHECK(rlvr_diffgate_check_path("src/Makefile", task) == RLVR_REASON_NONE);
    CHECK(rlvr_diffgate_check_path("../x", task) == RLVR_REASON_PATH_OUTSIDE);
    CHECK(rlvr_diffgate_check_path("a/../../x", task) == RLVR_REASON_PATH_OUTSIDE);
    CHECK(rlvr_diffgate_check_path("/etc/passwd", task) == RLVR_REASON_PATH_OUTSIDE);
    CHECK(rlvr_diffgate_check_path("a//b", task) == RLVR_REASON_PATH_OUTSIDE);
    CHECK(rlvr_diffgate_check_path("./a", task) == RLVR_REASON_PATH_OUTSIDE);
    CHECK(rlvr_diffgate_check_path("a\nb", task) == RLVR_REASON_PATH_OUTSIDE);
    CHECK(rlvr_diffgate_check_path("a\\..\\b", task) == RLVR_REASON_PATH_OUTSIDE);
    CHECK(rlvr_diffgate_check_path("", task) == RLVR_REASON_PATH_OUTSIDE);
    CHECK(rlvr_diffgate_check_path(".git/hooks/pre-commit", task) == RLVR_REASON_GIT_PATH);
    CHECK(rlvr_diffgate_check_path("src/.GIT/config", task) == RLVR_REASON_GIT_PATH);
    CHECK(rlvr_diffgate_check_path(".gitattributes", task) == RLVR_REASON_GIT_PATH);
    CHECK(rlvr_diffgate_check_path("sub/.gitmodules", task) == RLVR_REASON_GIT_PATH);
    CHECK(rlvr_diffgate_check_path(".env", task) == RLVR_REASON_ENV_FILE);
    CHECK(rlvr_diffgate_check_path("conf/.env.local", task) == RLVR_REASON_ENV_FILE);
    CHECK(rlvr_diffgate_check_path(".bashrc", task) == RLVR_REASON_ENV_FILE);
    CHECK(rlvr_diffgate_check_path("src/conftest.py", task) == RLVR_REASON_HOOK_FILE);
    CHECK(rlvr_diffgate_check_path("sitecustomize.py", task) == RLVR_REASON_HOOK_FILE);
    CHECK(rlvr_diffgate_check_path("lib/evil.pth", task) == RLVR_REASON_HOOK_FILE);
    CHECK(rlvr_diffgate_check_path("src/envelope.c", task) == RLVR_REASON_NONE);
}

/* The allow-list: names anywhere, whole anchored paths, directories. */
static void test_editable(void) {
    CHECK(rlvr_diffgate_editable_match("*.c", "lib.c"));
    CHECK(rlvr_diffgate_editable_match("*.c", "src/deep/x.c"));
    CHECK(!rlvr_diffgate_editable_match("*.c", "x.c/GNUmakefile"));
    CHECK(rlvr_diffgate_editable_match("/lib.c", "lib.c"));
    CHECK(!rlvr_diffgate_editable_match("/lib.c", "src/lib.c"));
    CHECK(rlvr_diffgate_editable_match("/*.h", "stdio.h"));
    CHECK(!rlvr_diffgate_editable_match("/*.h", "sub/stdio.h"));
    CHECK(!rlvr_diffgate_editable_match("/*.c", "a.c/Makefile"));
    CHECK(rlvr_diffgate_editable_match("src/", "src/a/b.py"));
    CHECK(!rlvr_diffgate_editable_match("src/", "src"));
    CHECK(!rlvr_diffgate_editable_match("src/", "srcx/a.py"));
    CHECK(rlvr_diffgate_editable_match("/src/*/", "src/pkg/mod.py"));
    CHECK(!rlvr_diffgate_editable_match("", "x"));
    CHECK(!rlvr_diffgate_editable_match("/", "x"));
    const char *const allow[] = {"/*.c", "/*.h", NULL};
    CHECK(rlvr_diffgate_path_editable("lib.c", allow));
    CHECK(!rlvr_diffgate_path_editable("GNUmakefile", allow));
    CHECK(!rlvr_diffgate_path_editable("tests/x.c", allow));
    CHECK(rlvr_diffgate_path_editable("GNUmakefile", NULL));
    const char *const none[] = {NULL};
    CHECK(!rlvr_diffgate_path_editable("lib.c", none));
    /* a hook file: admitted only when the allow-list names it exactly and
     * no protected glob covers it; environment files never */
    const char *const named[] = {"/calc.py", "/conftest.py", "tox.ini", "/.env", NULL};
    const char *const wide[] = {"/*", "*.py", "/*.ini", NULL};
    const char *const protect[] = {"conftest.py", NULL};
    CHECK(rlvr_diffgate_path_verdict("conftest.py", NULL, named) == RLVR_REASON_NONE);
    CHECK(rlvr_diffgate_path_verdict("tox.ini", NULL, named) == RLVR_REASON_NONE);
    CHECK(rlvr_diffgate_path_verdict("sub/conftest.py", NULL, named) == RLVR_REASON_HOOK_FILE);
    CHECK(rlvr_diffgate_path_verdict("conftest.py", protect, named) == RLVR_REASON_HOOK_FILE);
    CHECK(rlvr_diffgate_path_verdict(".env", NULL, named) == RLVR_REASON_ENV_FILE);
    CHECK(rlvr_diffgate_path_verdict("conftest.py", NULL, wide) == RLVR_REASON_HOOK_FILE);
    CHECK(rlvr_diffgate_path_verdict("pytest.ini", NULL, wide) == RLVR_REASON_HOOK_FILE);
    CHECK(rlvr_diffgate_path_verdict("sitecustomize.py", NULL, NULL) == RLVR_REASON_HOOK_FILE);
    CHECK(rlvr_diffgate_path_verdict("setup.py", NULL, named) == RLVR_REASON_NOT_EDITABLE);
    CHECK(rlvr_diffgate_path_verdict("calc.py", NULL, named) == RLVR_REASON_NONE);
}

static int count_commits(const char *dir) {
    git_repository *repo = NULL;
    git_revwalk *walk = NULL;
    int n = -1;
    if (git_repository_open(&repo, dir) == 0 && git_revwalk_new(&walk, repo) == 0 && git_revwalk_push_head(walk) == 0) {
        git_oid id;
        n = 0;
        while (git_revwalk_next(&id, walk) == 0) n++;
    }
    git_revwalk_free(walk);
    git_repository_free(repo);
    return n;
}

static void test_export(fixture *f) {
    /* a second commit in the source: the export must not carry it */
    char path[PATH_MAX + 64], dest[PATH_MAX], tree[41];
    snprintf(path, sizeof path, "%s/src/future.txt", f->repo);
    CHECK_OK(rlvr_fs_write_file(path, "the answer from the future\n", 27));
    snprintf(dest, sizeof dest, "%s/export", f->root);
    CHECK_OK(rlvr_git_export(f->repo, f->base, dest, false, f->hidden, tree));
    CHECK(strcmp(tree, f->base_tree) == 0);
    CHECK(count_commits(dest) == 1);
    snprintf(path, sizeof path, "%s/src/calc.sh", dest);
    CHECK(access(path, R_OK) == 0);
    snprintf(path, sizeof path, "%s/tests/hidden/run.sh", dest);
    CHECK(access(path, R_OK) == 0);
    snprintf(path, sizeof path, "%s/src/future.txt", dest);
    CHECK(access(path, F_OK) != 0);
    CHECK_OK(rlvr_fs_remove_tree(dest));
    snprintf(path, sizeof path, "%s/src/future.txt", f->repo);
    unlink(path);
    CHECK(rlvr_git_export(f->repo, "no-such-ref", dest, true, NULL, tree) == RLVR_EGIT);
    rlvr_fs_remove_tree(dest);
}

static int validate(const char *patch, size_t len, rlvr_diffgate_report *rep) {
    const char *const globs[] = {"tests", "/Makefile", NULL};
    rlvr_diffgate_rules rules = RLVR_DIFFGATE_RULES_INIT;
    rules.protected_globs = globs;
    rules.max_files = 8;
    rules.max_bytes = 64 * 1024;
    rlvr_diffgate_report local;
    if (!rep) rep = &local;
    CHECK_OK(rlvr_diffgate_validate(patch, len, &rules, rep));
    return rep->reason;
}

static int validate_edits(fixture *f, const fixture_edit *e, size_t n) {
    char *patch = NULL;
    size_t len = 0;
    CHECK_OK(fixture_patch(f, e, n, &patch, &len));
    int r = validate(patch ? patch : "", len, NULL);
    free(patch);
    return r;
}

static void test_extract_and_validate(fixture *f) {
    char *patch = NULL;
    size_t len = 0;
    CHECK_OK(fixture_patch(f, fixture_reference_sh, 1, &patch, &len));
    CHECK(patch && strstr(patch, "diff --git a/src/calc.sh b/src/calc.sh") && strstr(patch, "+  mul) echo $((a * b)) ;;"));
    rlvr_diffgate_report rep;
    CHECK(validate(patch, len, &rep) == RLVR_REASON_NONE && rep.files == 1);
    free(patch);

    /* untracked files count, ignored ones and the workspace's .git do not */
    fixture_edit untracked[] = {{EDIT_WRITE, "src/new.sh", "echo new\n", 0, 0},
                                {EDIT_WRITE, ".git/info/exclude", "ignored.txt\n", 0, 0},
                                {EDIT_WRITE, "ignored.txt", "ignored\n", 0, 0},
                                {EDIT_WRITE, "deep/er/dir/f.txt", "deep\n", 0, 0},
                                {EDIT_DELETE, "README", NULL, 0, 0}};
    CHECK_OK(fixture_patch(f, untracked, 5, &patch, &len));
    CHECK(strstr(patch, "b/src/new.sh") && strstr(patch, "b/deep/er/dir/f.txt") && strstr(patch, "deleted file mode"));
    CHECK(!strstr(patch, ".git/"));
    /* the workspace's own exclude rules are not trusted: the file is in */
    CHECK(strstr(patch, "b/ignored.txt"));
    CHECK(validate(patch, len, &rep) == RLVR_REASON_NONE && rep.files == 4);
    free(patch);

    /* each refusal from a real extraction */
    fixture_edit binary[] = {{EDIT_BINARY, "src/blob.bin", "\x7f" "ELF\0\1\2\3", 0, 8}};
    CHECK(validate_edits(f, binary, 1) == RLVR_REASON_BINARY);
    fixture_edit link[] = {{EDIT_SYMLINK, "src/link", "../tests/hidden/run.sh", 0, 0}};
    CHECK(validate_edits(f, link, 1) == RLVR_REASON_SYMLINK);
    fixture_edit link_host[] = {{EDIT_SYMLINK, "src/passwd", "/etc/passwd", 0, 0}};
    CHECK(validate_edits(f, link_host, 1) == RLVR_REASON_SYMLINK);
    fixture_edit mode[] = {{EDIT_CHMOD, "src/calc.sh", NULL, 0755, 0}};
    CHECK(validate_edits(f, mode, 1) == RLVR_REASON_MODE_CHANGE);
    fixture_edit test_edit[] = {{EDIT_APPEND, "tests/public/run.sh", "echo ok 1 - add\n", 0, 0}};
    CHECK(validate_edits(f, test_edit, 1) == RLVR_REASON_PROTECTED_PATH);
    fixture_edit test_del[] = {{EDIT_DELETE, "tests/public/run.sh", NULL, 0, 0}};
    CHECK(validate_edits(f, test_del, 1) == RLVR_REASON_PROTECTED_PATH);
    fixture_edit test_mv[] = {{EDIT_RENAME, "tests/public/run.sh", "src/run.sh", 0, 0}};
    CHECK(validate_edits(f, test_mv, 1) == RLVR_REASON_PROTECTED_PATH);
    fixture_edit hook[] = {{EDIT_WRITE, "src/conftest.py", "import sys\n", 0, 0}};
    CHECK(validate_edits(f, hook, 1) == RLVR_REASON_HOOK_FILE);
    fixture_edit env[] = {{EDIT_WRITE, ".env", "LD_PRELOAD=/tmp/x.so\n", 0, 0}};
    CHECK(validate_edits(f, env, 1) == RLVR_REASON_ENV_FILE);
    fixture_edit attrs[] = {{EDIT_WRITE, ".gitattributes", "* filter=evil\n", 0, 0}};
    CHECK(validate_edits(f, attrs, 1) == RLVR_REASON_GIT_PATH);
    fixture_edit many[9];
    char names[9][32];
    for (int i = 0; i < 9; i++) {
        snprintf(names[i], sizeof names[i], "src/f%d.txt", i);
        many[i] = (fixture_edit){EDIT_WRITE, names[i], "x\n", 0, 0};
    }
    CHECK(validate_edits(f, many, 9) == RLVR_REASON_TOO_MANY_FILES);

    /* the allow-list refuses new files and changes elsewhere; the deny rules
     * come first and keep their reasons */
    const char *const allow[] = {"/src/*.sh", NULL};
    rlvr_diffgate_rules only_src = RLVR_DIFFGATE_RULES_INIT;
    only_src.editable_globs = allow;
    only_src.protected_globs = (const char *const[]){"tests", NULL};
    fixture_edit lookup[] = {{EDIT_WRITE, "GNUmakefile", "all:\n\ttrue\n", 0, 0}};
    fixture_edit in_src[] = {{EDIT_WRITE, "src/new.sh", "echo\n", 0, 0}};
    fixture_edit deeper[] = {{EDIT_WRITE, "src/sub/new.sh", "echo\n", 0, 0}};
    fixture_edit del_readme[] = {{EDIT_DELETE, "README", NULL, 0, 0}};
    fixture_edit mv_out[] = {{EDIT_RENAME, "src/calc.sh", "calc.sh", 0, 0}};
    const fixture_edit *cases[] = {lookup, in_src, deeper, del_readme, mv_out, test_edit, hook};
    const int want[] = {RLVR_REASON_NOT_EDITABLE, RLVR_REASON_NONE, RLVR_REASON_NOT_EDITABLE, RLVR_REASON_NOT_EDITABLE,
                        RLVR_REASON_NOT_EDITABLE, RLVR_REASON_PROTECTED_PATH, RLVR_REASON_HOOK_FILE};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *p = NULL;
        size_t plen = 0;
        CHECK_OK(fixture_patch(f, cases[i], 1, &p, &plen));
        rlvr_diffgate_report r;
        CHECK_OK(rlvr_diffgate_validate(p, plen, &only_src, &r));
        CHECK_MSG(r.reason == want[i], "allow-list case %zu: %s, expected %s (%s)", i, rlvr_reason_name(r.reason),
                  rlvr_reason_name(want[i]), r.path);
        free(p);
    }

    /* hand-written patches a diff of a tree cannot produce */
    const char *traversal = "diff --git a/../outside.txt b/../outside.txt\nnew file mode 100644\nindex 0000000..e69de29\n"
                            "--- /dev/null\n+++ b/../outside.txt\n@@ -0,0 +1 @@\n+x\n";
    CHECK(validate(traversal, strlen(traversal), NULL) == RLVR_REASON_PATH_OUTSIDE);
    const char *absolute = "diff --git a//tmp/evil b//tmp/evil\nnew file mode 100644\n--- /dev/null\n+++ b//tmp/evil\n"
                           "@@ -0,0 +1 @@\n+x\n";
    CHECK(validate(absolute, strlen(absolute), NULL) == RLVR_REASON_PATH_OUTSIDE);
    const char *submodule = "diff --git a/vendor/lib b/vendor/lib\nnew file mode 160000\nindex 0000000..1234567\n"
                            "--- /dev/null\n+++ b/vendor/lib\n@@ -0,0 +1 @@\n+Subproject commit 1234567890123456789012345678901234567890\n";
    CHECK(validate(submodule, strlen(submodule), NULL) == RLVR_REASON_SUBMODULE);
    const char *git_hook = "diff --git a/.git/hooks/pre-commit b/.git/hooks/pre-commit\nnew file mode 100644\n"
                           "--- /dev/null\n+++ b/.git/hooks/pre-commit\n@@ -0,0 +1 @@\n+exit 0\n";
    CHECK(validate(git_hook, strlen(git_hook), NULL) == RLVR_REASON_GIT_PATH);
    const char *bin_text = "diff --git a/x b/x\nindex 1..2 100644\nBinary files a/x and b/x differ\n";
    CHECK(validate(bin_text, strlen(bin_text), NULL) == RLVR_REASON_BINARY);
    /* a change that states no modes leaves them alone */
    const char *no_modes = "diff --git a/src/calc.sh b/src/calc.sh\n--- a/src/calc.sh\n+++ b/src/calc.sh\n"
                           "@@ -1 +1 @@\n-#!/bin/sh\n+#!/bin/sh -e\n";
    CHECK(validate(no_modes, strlen(no_modes), NULL) == RLVR_REASON_NONE);
    const char *mode_lines = "diff --git a/src/calc.sh b/src/calc.sh\nold mode 100644\nnew mode 100755\n";
    CHECK(validate(mode_lines, strlen(mode_lines), NULL) == RLVR_REASON_MODE_CHANGE);
    const char *garbage = "this is not a patch\nat all\n";
    CHECK(validate(garbage, strlen(garbage), NULL) == RLVR_REASON_PATCH_PARSE);
    CHECK(validate("", 0, &rep) == RLVR_REASON_NONE && rep.files == 0);
    char *big = malloc(70 * 1024);
    memset(big, 'a', 70 * 1024);
    CHECK(validate(big, 70 * 1024, NULL) == RLVR_REASON_PATCH_TOO_LARGE);
    free(big);
}

static void test_public_checksum(fixture *f) {
    char work[PATH_MAX], git_dir[PATH_MAX], tree[41];
    snprintf(work, sizeof work, "%s/checksum", f->root);
    snprintf(git_dir, sizeof git_dir, "%s/.git", f->repo);
    CHECK_OK(rlvr_git_export(f->repo, f->base, work, false, NULL, tree));
    const char *const pub[] = {"tests/public", NULL};
    rlvr_extract_result r;
    CHECK_OK(rlvr_diffgate_extract_dir(git_dir, f->base_tree, work, pub, 1 << 20, &r));
    CHECK(!r.public_tests_changed && r.len == 0);
    rlvr_extract_result_free(&r);
    /* an ignored file planted among the public tests still changes them */
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/.git/info/exclude", work);
    CHECK_OK(rlvr_fs_write_file(path, "*.planted\n", 10));
    snprintf(path, sizeof path, "%s/tests/public/x.planted", work);
    CHECK_OK(rlvr_fs_write_file(path, "x\n", 2));
    CHECK_OK(rlvr_diffgate_extract_dir(git_dir, f->base_tree, work, pub, 1 << 20, &r));
    CHECK(r.public_tests_changed);
    rlvr_extract_result_free(&r);
    unlink(path);
    snprintf(path, sizeof path, "%s/tests/public/run.sh", work);
    CHECK_OK(rlvr_fs_write_file(path, "echo 1..1; echo ok 1 - add\n", 27));
    CHECK_OK(rlvr_diffgate_extract_dir(git_dir, f->base_tree, work, pub, 1 << 20, &r));
    CHECK(r.public_tests_changed && r.len > 0);
    rlvr_extract_result_free(&r);
    /* an oversized change is refused at extraction */
    snprintf(path, sizeof path, "%s/src/huge.txt", work);
    char *huge = malloc(200000);
    for (int i = 0; i < 200000; i++) huge[i] = (i % 64 == 63) ? '\n' : 'a';
    CHECK_OK(rlvr_fs_write_file(path, huge, 200000));
    free(huge);
    CHECK_OK(rlvr_diffgate_extract_dir(git_dir, f->base_tree, work, pub, 100000, &r));
    /* larger than the limit: libgit2 treats it as binary, the gate refuses that */
    CHECK_MSG(r.reason == RLVR_REASON_PATCH_TOO_LARGE || validate(r.patch, r.len, NULL) == RLVR_REASON_BINARY,
              "reason %d len %zu", r.reason, r.len);
    rlvr_extract_result_free(&r);
    unlink(path);
    /* text files under the per-file limit whose patch is over it */
    for (int k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s/src/part%d.txt", work, k);
        char *text = malloc(50000);
        for (int i = 0; i < 50000; i++) text[i] = (i % 64 == 63) ? '\n' : (char)('a' + k);
        CHECK_OK(rlvr_fs_write_file(path, text, 50000));
        free(text);
    }
    CHECK_OK(rlvr_diffgate_extract_dir(git_dir, f->base_tree, work, pub, 100000, &r));
    CHECK(r.reason == RLVR_REASON_PATCH_TOO_LARGE && r.len == 0);
    rlvr_extract_result_free(&r);
    rlvr_fs_remove_tree(work);
}

int main(void) {
    test_globs();
    test_editable();
    fixture f;
    int rc = fixture_create(&f, FIXTURE_SH, NULL);
    CHECK_MSG(rc == 0, "fixture: %s", rlvr_error_last());
    if (rc == 0) {
        test_export(&f);
        test_extract_and_validate(&f);
        test_public_checksum(&f);
    }
    fixture_free(&f);
    return test_summary("test_diffgate");
}
