/* Pool validation in real enclaves: generated tasks pass; planted
 * self-contradicting tasks are caught (a wrong patch that passes, a
 * FAIL_TO_PASS test that passes untouched, a reference the diff gate
 * refuses, an order-dependent test, an arith wrong answer that is right);
 * the manifest round-trips and is refused once the pool changes. */
#include "envs/check.h"
#include "envs/gen.h"
#include "envs_test.h"
#include "test.h"

#include <jansson.h>

static char *dir, pool_dir[4096];

/* Copies spec `from_id` to a new spec `id`, changed by `edit`. */
static void plant(const char *from_id, const char *id, void (*edit)(json_t *spec, const char *id)) {
    char path[8192];
    snprintf(path, sizeof path, "%s/%s.json", pool_dir, from_id);
    json_error_t jerr;
    json_t *spec = json_load_file(path, 0, &jerr);
    CHECK(spec != NULL);
    if (!spec) return;
    json_object_set_new(spec, "id", json_string(id));
    edit(spec, id);
    snprintf(path, sizeof path, "%s/%s.json", pool_dir, id);
    CHECK(json_dump_file(spec, path, JSON_INDENT(2)) == 0);
    json_decref(spec);
}

static void wrong_is_reference(json_t *s, const char *id) {
    (void)id;
    json_object_set_new(s, "wrong_patches", json_pack("[O]", json_object_get(s, "reference_patch")));
}

static void p2p_listed_as_f2p(json_t *s, const char *id) {
    (void)id;
    json_t *p2p = json_object_get(s, "PASS_TO_PASS");
    json_array_append(json_object_get(s, "FAIL_TO_PASS"), json_array_get(p2p, 0));
    json_array_remove(p2p, 0);
}

static void reference_edits_tests(json_t *s, const char *id) {
    (void)id;
    json_object_set_new(s, "reference_patch",
                        json_string("diff --git a/tests/public.c b/tests/public.c\n--- a/tests/public.c\n"
                                    "+++ b/tests/public.c\n@@ -1 +1 @@\n-/* Public tests. TAP goes to $RLVR_RESULTS_FD "
                                    "(default stdout); $RLVR_TEST_ORDER\n+/* all good */\n"));
}

/* The first FAIL_TO_PASS test passes only when it runs first: the reference
 * passes in the default order and fails shuffled re-runs. */
static void order_dependent(json_t *s, const char *id) {
    const char *root = json_string_value(json_object_get(json_object_get(s, "hidden_tests"), "root"));
    const char *first = json_string_value(json_array_get(json_object_get(s, "FAIL_TO_PASS"), 0));
    char src[8192], dst[8192], cmd[20000];
    snprintf(src, sizeof src, "%s/%s", pool_dir, root);
    snprintf(dst, sizeof dst, "%s/hidden/%s", pool_dir, id);
    snprintf(cmd, sizeof cmd, "cp -r %s %s", src, dst);
    CHECK(run_cmd(cmd, NULL) == 0);
    snprintf(dst, sizeof dst, "%s/hidden/%s/tests/judge.c", pool_dir, id);
    char *text = slurp(dst, NULL);
    const char *anchor = "static int run(const char *runner, int i) {\n";
    char *at = text ? strstr(text, anchor) : NULL;
    CHECK(at != NULL);
    if (!at) return;
    at += strlen(anchor);
    FILE *f = fopen(dst, "wb");
    fwrite(text, 1, (size_t)(at - text), f);
    fprintf(f, "    static int runs;\n    if (++runs > 1 && strcmp(names[i], \"%s\") == 0) return 0;\n", first);
    fputs(at, f);
    fclose(f);
    free(text);
    char rel[256];
    snprintf(rel, sizeof rel, "hidden/%s", id);
    json_object_set_new(json_object_get(s, "hidden_tests"), "root", json_string(rel));
}

static void right_answer_listed_wrong(json_t *s, const char *id) {
    (void)id;
    json_object_set_new(s, "wrong_answers", json_pack("[O]", json_object_get(s, "reference_answer")));
}

static int gen(const char *family, rlvr_split split, int64_t count) {
    rlvr_task_gen_options o = RLVR_TASK_GEN_OPTIONS_INIT;
    o.family = family;
    o.split = split;
    o.count = count;
    o.seed = 77;
    return rlvr_task_gen(&o, pool_dir, NULL);
}

typedef struct {
    const char *id;
    rlvr_task_check_status want;
    const char *reason;
} expectation;

static void test_check_and_manifest(void) {
    CHECK_OK(gen("bugfix-c", RLVR_SPLIT_REGRESSION, 1));
    CHECK_OK(gen("arith", RLVR_SPLIT_TRAIN, 2));
    CHECK_OK(gen("arith", RLVR_SPLIT_REGRESSION, 1));
    const char *bug = "bugfix-c-regression-d1-s77-000000";
    plant(bug, "planted-wrong-passes", wrong_is_reference);
    plant(bug, "planted-f2p-passes", p2p_listed_as_f2p);
    plant(bug, "planted-reference-edits-tests", reference_edits_tests);
    plant(bug, "planted-order-dependent", order_dependent);
    plant("arith-train-d1-s77-000000", "planted-arith", right_answer_listed_wrong);
    const expectation want[] = {
        {"arith-regression-d1-s77-000000", RLVR_TASK_CHECK_OK, ""},
        {"arith-train-d1-s77-000000", RLVR_TASK_CHECK_OK, ""},
        {"arith-train-d1-s77-000001", RLVR_TASK_CHECK_OK, ""},
        {"bugfix-c-regression-d1-s77-000000", RLVR_TASK_CHECK_OK, ""},
        {"planted-arith", RLVR_TASK_CHECK_BROKEN, "wrong answer 0"},
        {"planted-f2p-passes", RLVR_TASK_CHECK_BROKEN, "untouched repository: FAIL_TO_PASS test"},
        {"planted-order-dependent", RLVR_TASK_CHECK_FLAKY, "reference patch passes only in some"},
        {"planted-reference-edits-tests", RLVR_TASK_CHECK_BROKEN, "reference patch: rejected (protected_path)"},
        {"planted-wrong-passes", RLVR_TASK_CHECK_BROKEN, "wrong patch 0 passes"},
    };
    size_t n_want = sizeof want / sizeof want[0];
    rlvr_task_pool *pool = NULL;
    CHECK_OK(rlvr_task_pool_load(&pool, pool_dir));
    if (!pool) return;
    CHECK(rlvr_task_pool_size(pool) == n_want);
    rlvr_sandbox_host *host = NULL;
    rlvr_sandbox_host_options ho = RLVR_SANDBOX_HOST_OPTIONS_INIT;
    CHECK_OK(rlvr_sandbox_host_new(&host, &ho));
    rlvr_task_check_options opts = RLVR_TASK_CHECK_OPTIONS_INIT;
    opts.quarantine_runs = 3;
    opts.wall_s = 30;
    rlvr_task_check_result results[16];
    memset(results, 0, sizeof results);
    for (size_t i = 0; host && i < rlvr_task_pool_size(pool) && i < n_want; i++) {
        const rlvr_task *t = rlvr_task_pool_get(pool, i);
        CHECK(strcmp(t->id, want[i].id) == 0);
        CHECK_OK(rlvr_task_check(&results[i], t, host, &opts));
        CHECK_MSG(results[i].status == want[i].want && strstr(results[i].reason, want[i].reason),
                  "%s: %s, %s; expected %s, %s", t->id, rlvr_task_check_status_name(results[i].status),
                  results[i].reason, rlvr_task_check_status_name(want[i].want), want[i].reason);
        if (t->verifier == RLVR_VERIFIER_TESTS && want[i].want == RLVR_TASK_CHECK_OK)
            /* base, consensus, quarantine, wrongs, one run per probe class (system headers, forged results,
             * decoy and kill, hidden files: the gate refuses the makefiles), two for the state between
             * verifications (its writer, then its reader) */
            CHECK_MSG(results[i].runs == 1 + 3 + 3 + (int)t->wrong_patches.n + 4 + 2 && results[i].probes >= 5,
                      "%s: %d runs, %d probes", t->id, results[i].runs, results[i].probes);
    }

    /* the manifest: written, read back, matched to the pool */
    char manifest[8192];
    rlvr_pool_manifest_default_path(manifest, sizeof manifest, pool_dir);
    CHECK(strstr(manifest, "/pool.manifest.json") != NULL);
    CHECK_OK(rlvr_pool_manifest_write(manifest, pool, results, &opts));
    rlvr_pool_manifest *m = NULL;
    CHECK_OK(rlvr_pool_manifest_load(&m, manifest, pool));
    if (m) {
        CHECK(rlvr_pool_manifest_usable_count(m) == 4);
        CHECK(rlvr_pool_manifest_usable(m, "bugfix-c-regression-d1-s77-000000"));
        CHECK(!rlvr_pool_manifest_usable(m, "planted-wrong-passes"));
        rlvr_task_check_status st;
        CHECK_OK(rlvr_pool_manifest_status(m, "planted-order-dependent", &st));
        CHECK(st == RLVR_TASK_CHECK_FLAKY);
        CHECK(rlvr_pool_manifest_status(m, "nobody", &st) == RLVR_ENOTFOUND);
        const rlvr_str_list *q = rlvr_pool_manifest_quarantined(m, "arith-train-d1-s77-000000");
        CHECK(q && q->n == 0);
        rlvr_pool_manifest_free(m);
    }
    for (size_t i = 0; i < n_want; i++) rlvr_task_check_result_clear(&results[i]);
    rlvr_task_pool_free(pool);
    rlvr_sandbox_host_free(host);

    /* a changed hidden test file makes the manifest stale */
    char path[8192], cmd[20000];
    snprintf(path, sizeof path, "%s/hidden/bugfix-c-regression-d1-s77-000000/tests/judge.c", pool_dir);
    snprintf(cmd, sizeof cmd, "echo '/* edited */' >> %s", path);
    CHECK(run_cmd(cmd, NULL) == 0);
    pool = NULL;
    CHECK_OK(rlvr_task_pool_load(&pool, pool_dir));
    m = NULL;
    CHECK(pool && rlvr_pool_manifest_load(&m, manifest, pool) == RLVR_ECHECKSUM && m == NULL);
    CHECK_MSG(strstr(rlvr_error_last(), "task bugfix-c-regression-d1-s77-000000 is new or changed") &&
                  strstr(rlvr_error_last(), "rlvr tasks check"),
              "%s", rlvr_error_last());
    rlvr_task_pool_free(pool);

    /* so does a removed task */
    snprintf(path, sizeof path, "%s/planted-arith.json", pool_dir);
    remove(path);
    pool = NULL;
    CHECK_OK(rlvr_task_pool_load(&pool, pool_dir));
    CHECK(pool && rlvr_pool_manifest_load(&m, manifest, pool) == RLVR_ECHECKSUM);
    rlvr_task_pool_free(pool);

    /* not a manifest at all */
    snprintf(path, sizeof path, "%s/bogus.manifest.json", dir);
    write_text(path, "{\"format\": \"something-else\"}");
    pool = NULL;
    CHECK_OK(rlvr_task_pool_load(&pool, pool_dir));
    CHECK(pool && rlvr_pool_manifest_load(&m, path, pool) == RLVR_EFORMAT);
    snprintf(path, sizeof path, "%s/absent.manifest.json", dir);
    CHECK(pool && rlvr_pool_manifest_load(&m, path, pool) == RLVR_EIO);
    rlvr_task_pool_free(pool);
}

static void test_options_and_arith_without_host(void) {
    rlvr_task_pool *pool = NULL;
    char path[8192];
    snprintf(path, sizeof path, "%s/arith-train-d1-s77-000001.json", pool_dir);
    CHECK_OK(rlvr_task_pool_load(&pool, path));
    if (!pool) return;
    rlvr_task_check_options opts = RLVR_TASK_CHECK_OPTIONS_INIT;
    rlvr_task_check_result r;
    CHECK_OK(rlvr_task_check(&r, rlvr_task_pool_get(pool, 0), NULL, &opts));
    CHECK(r.status == RLVR_TASK_CHECK_OK && r.runs == 0);
    rlvr_task_check_result_clear(&r);
    opts.version = 7;
    CHECK(rlvr_task_check(&r, rlvr_task_pool_get(pool, 0), NULL, &opts) == RLVR_EINVAL);
    opts.version = RLVR_TASK_CHECK_OPTIONS_VERSION;
    opts.quarantine_runs = 0;
    CHECK(rlvr_task_check(&r, rlvr_task_pool_get(pool, 0), NULL, &opts) == RLVR_EINVAL);
    uint64_t h1, h2;
    CHECK_OK(rlvr_task_pool_hash(pool, &h1));
    CHECK_OK(rlvr_task_pool_hash(pool, &h2));
    CHECK(h1 == h2 && h1 != 0);
    rlvr_task_pool_free(pool);
    CHECK(strcmp(rlvr_task_check_status_name(RLVR_TASK_CHECK_INFRA), "infra") == 0);
}

int main(void) {
    dir = tmpdir_make("taskcheck");
    snprintf(pool_dir, sizeof pool_dir, "%s/pool", dir);
    test_check_and_manifest();
    test_options_and_arith_without_host();
    rm_rf(dir);
    free(dir);
    return test_summary("test_task_check");
}
