/* What `rlvr tasks check` and `rlvr tasks mine` ask of envs/ besides the
 * check and the miner themselves (no command, no enclave): a checked pool's
 * tally from its manifest, and the repository facts the mine flags give. */
#include "envs/check.h"
#include "envs/sources.h"
#include "pool_fixture.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_tally(const char *dir) {
    rlvr_task_pool *pool = pool_fixture(dir, 1, 4, 9);
    if (!pool) return;
    size_t n = rlvr_task_pool_size(pool);
    CHECK(n == 5);
    /* statuses as a check would record them: ok, broken, ok, flaky, ok */
    const rlvr_task_check_status given[5] = {RLVR_TASK_CHECK_OK, RLVR_TASK_CHECK_BROKEN, RLVR_TASK_CHECK_OK,
                                             RLVR_TASK_CHECK_FLAKY, RLVR_TASK_CHECK_OK};
    rlvr_task_check_result results[5];
    memset(results, 0, sizeof results);
    for (int i = 0; i < 5; i++) {
        results[i].status = given[i];
        if (given[i] != RLVR_TASK_CHECK_OK) snprintf(results[i].reason, sizeof results[i].reason, "made up");
    }
    char pool_dir[4200], manifest[4200];
    snprintf(pool_dir, sizeof pool_dir, "%s/pool", dir);
    rlvr_pool_manifest_default_path(manifest, sizeof manifest, pool_dir);
    rlvr_task_check_options opts = RLVR_TASK_CHECK_OPTIONS_INIT;
    CHECK_OK(rlvr_pool_manifest_write(manifest, pool, results, &opts));
    uint64_t want_hash = 0, hash = 0;
    CHECK_OK(rlvr_task_pool_hash(pool, &want_hash));
    size_t counts[RLVR_TASK_CHECK_STATUS_COUNT], tallied = 0;
    CHECK_OK(rlvr_pool_manifest_tally(pool_dir, manifest, counts, &tallied, &hash));
    CHECK(tallied == 5);
    CHECK(hash == want_hash && hash != 0);
    CHECK_MSG(counts[RLVR_TASK_CHECK_OK] == 3 && counts[RLVR_TASK_CHECK_BROKEN] == 1 &&
                  counts[RLVR_TASK_CHECK_FLAKY] == 1 && counts[RLVR_TASK_CHECK_INFRA] == 0,
              "tally ok %zu broken %zu flaky %zu", counts[RLVR_TASK_CHECK_OK], counts[RLVR_TASK_CHECK_BROKEN],
              counts[RLVR_TASK_CHECK_FLAKY]);
    /* a manifest of another pool is refused */
    CHECK(rlvr_pool_manifest_tally(pool_dir, "/nonexistent.manifest.json", counts, &tallied, &hash) < 0);
    CHECK(tallied == 0);
    rlvr_task_pool_free(pool);
}

static void test_facts_flags(const char *dir) {
    const char *tests[] = {"tests/*.py"}, *code[] = {"src/*", "lib/*"};
    rlvr_repo_facts_flags ff = {.test_command = "make check", .results = "junit:out/report.xml",
                                .tests = tests, .n_tests = 1, .code = code, .n_code = 2};
    rlvr_repo_facts f;
    CHECK_OK(rlvr_repo_facts_load_flags(&f, NULL, &ff));
    CHECK(f.test_command && strcmp(f.test_command, "make check") == 0);
    CHECK(f.results_junit && strcmp(f.results_junit, "out/report.xml") == 0);
    CHECK(f.tests.n == 1 && strcmp(f.tests.items[0], "tests/*.py") == 0);
    CHECK(f.code.n == 2 && strcmp(f.code.items[1], "lib/*") == 0);
    rlvr_repo_facts_free(&f);

    /* the flags replace the file's keys; the file's others stay */
    char path[4200];
    snprintf(path, sizeof path, "%s/facts.json", dir);
    FILE *fp = fopen(path, "w");
    CHECK(fp != NULL);
    if (!fp) return;
    fputs("{\"test_command\": \"pytest\", \"results\": \"tap\", \"code\": [\"pkg/*\"]}", fp);
    fclose(fp);
    rlvr_repo_facts_flags only_tap = {.results = "tap", .tests = tests, .n_tests = 1};
    CHECK_OK(rlvr_repo_facts_load_flags(&f, path, &only_tap));
    CHECK(f.test_command && strcmp(f.test_command, "pytest") == 0);
    CHECK(f.results_junit == NULL);
    CHECK(f.code.n == 1 && strcmp(f.code.items[0], "pkg/*") == 0);
    CHECK(f.tests.n == 1);
    rlvr_repo_facts_free(&f);

    rlvr_repo_facts_flags bad = {.test_command = "x", .results = "xml"};
    CHECK(rlvr_repo_facts_load_flags(&f, NULL, &bad) == RLVR_ECONFIG);
    bad.results = "junit:";
    CHECK(rlvr_repo_facts_load_flags(&f, NULL, &bad) == RLVR_ECONFIG);
}

int main(void) {
    char dir[] = "/tmp/rlvr-tasks-lib-XXXXXX";
    if (!mkdtemp(dir)) return 2;
    test_tally(dir);
    test_facts_flags(dir);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return test_summary("test_tasks_lib");
}
