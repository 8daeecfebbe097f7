/* Task generation: the same options give the same bytes; task i does not
 * depend on how many were generated; output is a loadable pool with clean
 * repositories at the recorded commit; bad options are refused. */
#include "envs/gen.h"
#include "envs/pool.h"
#include "envs/tools.h"
#include "envs_test.h"
#include "test.h"

#include <stdbool.h>

static char *dir;

static int gen(const char *sub, const char *family, rlvr_split split, int difficulty, int64_t first, int64_t count,
               uint64_t seed) {
    rlvr_task_gen_options o = RLVR_TASK_GEN_OPTIONS_INIT;
    o.family = family;
    o.split = split;
    o.difficulty = difficulty;
    o.first = first;
    o.count = count;
    o.seed = seed;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, sub);
    size_t n = 0;
    int rc = rlvr_task_gen(&o, path, &n);
    if (rc == 0) CHECK(n == (size_t)count);
    return rc;
}

/* Both families, all splits and difficulties, into one directory. */
static void gen_mixed(const char *sub, uint64_t seed) {
    CHECK_OK(gen(sub, "bugfix-c", RLVR_SPLIT_TRAIN, 1, 0, 5, seed));
    CHECK_OK(gen(sub, "bugfix-c", RLVR_SPLIT_TRAIN, 3, 0, 1, seed));
    CHECK_OK(gen(sub, "bugfix-c", RLVR_SPLIT_EVAL, 2, 0, 2, seed));
    CHECK_OK(gen(sub, "bugfix-c", RLVR_SPLIT_REGRESSION, 1, 0, 2, seed));
    CHECK_OK(gen(sub, "arith", RLVR_SPLIT_TRAIN, 1, 0, 10, seed));
    CHECK_OK(gen(sub, "arith", RLVR_SPLIT_EVAL, 2, 0, 5, seed));
    CHECK_OK(gen(sub, "arith", RLVR_SPLIT_REGRESSION, 3, 0, 5, seed));
}

static int sh(const char *fmt, const char *a, const char *b) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd, fmt, a, b);
    return run_cmd(cmd, NULL);
}

static void test_determinism(void) {
    gen_mixed("a", 5);
    gen_mixed("b", 5);
    char a[1024], b[1024], c[1024];
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/b", dir);
    /* identical bytes everywhere but inside .git (the index holds file times);
     * the specs hold the commit ids, so equal specs mean equal commits */
    CHECK(sh("diff -r --exclude=.git %s %s >/dev/null", a, b) == 0);

    /* task 3 alone is task 3 of a run of 5 */
    CHECK_OK(gen("c", "bugfix-c", RLVR_SPLIT_TRAIN, 1, 3, 1, 5));
    snprintf(c, sizeof c, "%s/c", dir);
    const char *id = "bugfix-c-train-d1-s5-000003";
    char pa[2048], pc[2048];
    snprintf(pa, sizeof pa, "%s/%s.json", a, id);
    snprintf(pc, sizeof pc, "%s/%s.json", c, id);
    CHECK(sh("cmp -s %s %s", pa, pc) == 0);
    snprintf(pa, sizeof pa, "%s/repos/%s", a, id);
    snprintf(pc, sizeof pc, "%s/repos/%s", c, id);
    CHECK(sh("diff -r --exclude=.git %s %s >/dev/null", pa, pc) == 0);

    /* another seed gives other tasks */
    CHECK_OK(gen("d", "bugfix-c", RLVR_SPLIT_TRAIN, 1, 3, 1, 6));
    CHECK_OK(gen("d", "arith", RLVR_SPLIT_TRAIN, 1, 0, 1, 6));
    snprintf(pa, sizeof pa, "%s/bugfix-c-train-d1-s5-000003.json", a);
    snprintf(pc, sizeof pc, "%s/d/bugfix-c-train-d1-s6-000003.json", dir);
    char *x = slurp(pa, NULL), *y = slurp(pc, NULL);
    CHECK(x && y && strstr(y, "s6-000003"));
    /* compare the code, not the ids: the reference patches differ */
    CHECK(x && y && strcmp(strstr(x, "reference_patch"), strstr(y, "reference_patch")) != 0);
    free(x);
    free(y);

    /* generating over existing output is refused */
    CHECK(gen("a", "bugfix-c", RLVR_SPLIT_TRAIN, 1, 0, 1, 5) == RLVR_EIO);
    CHECK(strstr(rlvr_error_last(), "already exists"));
}

/* The generated directory is a pool: every spec loads, hygiene holds, and
 * every repository is clean at the recorded commit. */
static void test_output_is_a_pool(void) {
    char a[4096];
    snprintf(a, sizeof a, "%s/a", dir);
    rlvr_task_pool *pool = NULL;
    CHECK_OK(rlvr_task_pool_load(&pool, a));
    if (!pool) return;
    CHECK(rlvr_task_pool_size(pool) == 30);
    CHECK_OK(rlvr_task_pool_check_splits(pool));
    const char *names[8];
    int n_train = rlvr_task_gen_templates("bugfix-c", RLVR_SPLIT_TRAIN, names, 8);
    for (size_t i = 0; i < rlvr_task_pool_size(pool); i++) {
        const rlvr_task *t = rlvr_task_pool_get(pool, i);
        if (strcmp(t->family, "bugfix-c") != 0) continue;
        CHECK(t->fail_to_pass.n >= 2 && t->pass_to_pass.n >= 1 && t->wrong_patches.n >= 2);
        CHECK(t->repository_kind == RLVR_REPO_DIRECTORY && t->tools == RLVR_TOOLS_ALL);
        CHECK(strlen(t->prompt) < 120);
        bool trained = false;
        for (int k = 0; k < n_train; k++) trained |= strcmp(names[k], t->template_name) == 0;
        CHECK_MSG(trained == (t->split != RLVR_SPLIT_REGRESSION), "%s: template %s", t->id, t->template_name);
        char cmd[8192], *out = NULL;
        snprintf(cmd, sizeof cmd, "git -C %s rev-parse HEAD && git -C %s status --porcelain", t->repository_path,
                 t->repository_path);
        CHECK(run_cmd(cmd, &out) == 0);
        CHECK_MSG(out && strncmp(out, t->base_commit, 40) == 0 && strlen(out) == 41, "%s: %s", t->id, out);
        free(out);
    }
    rlvr_task_pool_free(pool);
}

static void test_templates_and_options(void) {
    const char *train[8], *eval[8], *reg[8];
    CHECK(rlvr_task_gen_templates("bugfix-c", RLVR_SPLIT_TRAIN, train, 8) == 5);
    CHECK(rlvr_task_gen_templates("bugfix-c", RLVR_SPLIT_EVAL, eval, 8) == 5);
    CHECK(rlvr_task_gen_templates("bugfix-c", RLVR_SPLIT_REGRESSION, reg, 8) == 2);
    for (int i = 0; i < 5; i++) {
        CHECK(strcmp(train[i], eval[i]) == 0);
        for (int j = 0; j < 2; j++) CHECK(strcmp(train[i], reg[j]) != 0);
    }
    CHECK(rlvr_task_gen_templates("bugfix-rust", RLVR_SPLIT_TRAIN, train, 8) == RLVR_ENOTFOUND);

    CHECK(gen("e", "bugfix_c", RLVR_SPLIT_TRAIN, 1, 0, 1, 1) == RLVR_EINVAL);
    CHECK(strstr(rlvr_error_last(), "did you mean \"bugfix-c\""));
    CHECK(gen("e", "arith", RLVR_SPLIT_TRAIN, 4, 0, 1, 1) == RLVR_EINVAL);
    CHECK(strstr(rlvr_error_last(), "difficulty 4"));
    CHECK(gen("e", "arith", RLVR_SPLIT_TRAIN, 1, 0, 0, 1) == RLVR_EINVAL);
    rlvr_task_gen_options o = RLVR_TASK_GEN_OPTIONS_INIT;
    o.version = 99;
    rlvr_task *t;
    CHECK(rlvr_task_gen_one(&t, &o, 0, dir) == RLVR_EINVAL && t == NULL);
}

/* The compiler option changes the Makefile's CC line and nothing else. */
static void test_compiler(void) {
    rlvr_task_gen_options o = RLVR_TASK_GEN_OPTIONS_INIT;
    o.family = "bugfix-c";
    o.seed = 5;
    o.first = 3;
    char cc[4096], tcc[4096];
    snprintf(cc, sizeof cc, "%s/cc", dir);
    snprintf(tcc, sizeof tcc, "%s/tcc", dir);
    CHECK_OK(rlvr_task_gen(&o, cc, NULL));
    o.compiler = "tcc";
    CHECK_OK(rlvr_task_gen(&o, tcc, NULL));
    const char *id = "bugfix-c-train-d1-s5-000003";
    char a[8192], b[8192];
    snprintf(a, sizeof a, "%s/repos/%s", cc, id);
    snprintf(b, sizeof b, "%s/repos/%s", tcc, id);
    CHECK(sh("diff -r --exclude=.git --exclude=Makefile %s %s >/dev/null", a, b) == 0);
    char *mk_cc = NULL, *mk_tcc = NULL;
    snprintf(a, sizeof a, "%s/repos/%s/Makefile", cc, id);
    snprintf(b, sizeof b, "%s/repos/%s/Makefile", tcc, id);
    mk_cc = slurp(a, NULL), mk_tcc = slurp(b, NULL);
    CHECK(mk_cc && strstr(mk_cc, "\nCC = cc\n") && mk_tcc && strstr(mk_tcc, "\nCC = tcc\n"));
    free(mk_cc), free(mk_tcc);

    o.compiler = "gcc -O2";
    CHECK(rlvr_task_gen(&o, tcc, NULL) == RLVR_EINVAL);
    CHECK(strstr(rlvr_error_last(), "give a command name"));
    o.compiler = "-cc";
    CHECK(rlvr_task_gen(&o, tcc, NULL) == RLVR_EINVAL);
    o.compiler = "no-such-compiler-here";
    CHECK(rlvr_task_gen(&o, tcc, NULL) == RLVR_ENOTFOUND);
    CHECK(strstr(rlvr_error_last(), "apt-get install no-such-compiler-here"));
    o.family = "arith"; /* only bugfix-c compiles */
    snprintf(a, sizeof a, "%s/arith-cc", dir);
    CHECK_OK(rlvr_task_gen(&o, a, NULL));
}

int main(void) {
    dir = tmpdir_make("taskgen");
    test_determinism();
    test_output_is_a_pool();
    test_templates_and_options();
    test_compiler();
    rm_rf(dir);
    free(dir);
    return test_summary("test_task_gen");
}
