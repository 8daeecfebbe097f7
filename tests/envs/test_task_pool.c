/* Pools: a directory of specs and a JSONL file load in a stable order; bad
 * specs, duplicate ids and empty pools are refused with their source; split
 * hygiene refuses train and eval/regression tasks that share a split key. */
#include "envs/pool.h"
#include "envs_test.h"
#include "test.h"

static char *dir;

static void spec(char *out, size_t cap, const char *id, const char *split, const char *key) {
    snprintf(out, cap,
             "{\"format\": \"rlvr-task/1\", \"id\": \"%s\", \"family\": \"arith\", \"split\": \"%s\", "
             "\"split_key\": \"%s\", \"verifier\": \"arith\", \"prompt\": \"What is 1+2?\", "
             "\"arith\": {\"kind\": \"evaluate\", \"expression\": \"1+2\", \"target\": 3}, \"reference_answer\": \"3\"}",
             id, split, key);
}

static void write_spec(const char *sub, const char *file, const char *id, const char *split, const char *key) {
    char path[4096], text[1024];
    snprintf(path, sizeof path, "%s/%s", dir, sub);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/%s/%s", dir, sub, file);
    spec(text, sizeof text, id, split, key);
    CHECK(write_text(path, text) == 0);
}

static rlvr_task_pool *load(const char *sub, int *rc) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, sub);
    rlvr_task_pool *pool = NULL;
    *rc = rlvr_task_pool_load(&pool, path);
    return pool;
}

static void test_directory_pool(void) {
    write_spec("dir", "c.json", "task-c", "train", "k3");
    write_spec("dir", "a.json", "task-a", "train", "k1");
    write_spec("dir", "b.json", "task-b", "eval", "k2");
    write_spec("dir", ".hidden.json", "task-hidden", "train", "k9");
    char path[4096];
    snprintf(path, sizeof path, "%s/dir/notes.txt", dir);
    write_text(path, "not a spec");
    snprintf(path, sizeof path, "%s/dir/repos", dir);
    mkdir(path, 0755);
    int rc;
    rlvr_task_pool *pool = load("dir/", &rc);
    CHECK_OK(rc);
    if (!pool) return;
    CHECK(rlvr_task_pool_size(pool) == 3);
    CHECK(strcmp(rlvr_task_pool_get(pool, 0)->id, "task-a") == 0);
    CHECK(strcmp(rlvr_task_pool_get(pool, 2)->id, "task-c") == 0);
    CHECK(rlvr_task_pool_get(pool, 3) == NULL);
    CHECK(rlvr_task_pool_find(pool, "task-b") && rlvr_task_pool_find(pool, "task-b")->split == RLVR_SPLIT_EVAL);
    CHECK(rlvr_task_pool_find(pool, "task-hidden") == NULL);
    CHECK(rlvr_task_pool_count(pool, RLVR_SPLIT_TRAIN) == 2 && rlvr_task_pool_count(pool, RLVR_SPLIT_EVAL) == 1);
    CHECK(strstr(rlvr_task_pool_path(pool), "/dir") && !strstr(rlvr_task_pool_path(pool), "dir/"));
    CHECK_OK(rlvr_task_pool_check_splits(pool));
    rlvr_task_pool_free(pool);

    /* a single spec file is a pool of one */
    pool = load("dir/a.json", &rc);
    CHECK_OK(rc);
    CHECK(pool && rlvr_task_pool_size(pool) == 1);
    rlvr_task_pool_free(pool);
}

static void test_jsonl_pool(void) {
    char a[1024], b[1024], path[4096], text[4096];
    spec(a, sizeof a, "j1", "train", "k1");
    spec(b, sizeof b, "j2", "regression", "k2");
    snprintf(text, sizeof text, "%s\n\n%s\n", a, b);
    snprintf(path, sizeof path, "%s/pool.jsonl", dir);
    write_text(path, text);
    int rc;
    rlvr_task_pool *pool = load("pool.jsonl", &rc);
    CHECK_OK(rc);
    CHECK(pool && rlvr_task_pool_size(pool) == 2);
    if (pool) {
        CHECK(strstr(rlvr_task_pool_get(pool, 1)->source, "pool.jsonl:3"));
        CHECK(rlvr_task_pool_get(pool, 1)->split == RLVR_SPLIT_REGRESSION);
    }
    rlvr_task_pool_free(pool);

    /* a bad line is named by file and line */
    snprintf(text, sizeof text, "%s\n%s\n{\"format\": \"rlvr-task/1\"}\n", a, b);
    write_text(path, text);
    pool = load("pool.jsonl", &rc);
    CHECK(rc == RLVR_EFORMAT && pool == NULL);
    CHECK(strstr(rlvr_error_last(), "pool.jsonl:3: field \"id\" missing"));
}

static void test_refusals(void) {
    int rc;
    rlvr_task_pool *pool;
    write_spec("dup", "one.json", "same", "train", "k1");
    write_spec("dup", "two.json", "same", "train", "k2");
    pool = load("dup", &rc);
    CHECK(rc == RLVR_EFORMAT && pool == NULL);
    CHECK(strstr(rlvr_error_last(), "id \"same\" is used twice") && strstr(rlvr_error_last(), "one.json") &&
          strstr(rlvr_error_last(), "two.json"));

    char path[4096];
    snprintf(path, sizeof path, "%s/empty", dir);
    mkdir(path, 0755);
    pool = load("empty", &rc);
    CHECK(rc == RLVR_EFORMAT && strstr(rlvr_error_last(), "no task specs"));

    pool = load("absent", &rc);
    CHECK(rc == RLVR_EIO && strstr(rlvr_error_last(), "absent"));

    write_spec("broken", "a.json", "fine", "train", "k1");
    snprintf(path, sizeof path, "%s/broken/b.json", dir);
    write_text(path, "{\"format\": \"rlvr-task/1\", \"id\": \"x\"}");
    pool = load("broken", &rc);
    CHECK(rc == RLVR_EFORMAT && strstr(rlvr_error_last(), "broken/b.json: field \"family\" missing"));
}

static void test_split_hygiene(void) {
    int rc;
    write_spec("leak", "1.json", "t1", "train", "repo-A");
    write_spec("leak", "2.json", "t2", "train", "repo-B");
    write_spec("leak", "3.json", "e1", "eval", "repo-A");
    write_spec("leak", "4.json", "r1", "regression", "repo-B");
    write_spec("leak", "5.json", "e2", "eval", "repo-C");
    rlvr_task_pool *pool = load("leak", &rc);
    CHECK_OK(rc);
    if (!pool) return;
    CHECK(rlvr_task_pool_check_splits(pool) == RLVR_EINVAL);
    const char *msg = rlvr_error_last();
    CHECK_MSG(strstr(msg, "split hygiene: split key \"repo-A\" is used by train task \"t1\"") &&
                  strstr(msg, "eval task \"e1\"") && strstr(msg, "2 shared keys"),
              "%s", msg);
    rlvr_task_pool_free(pool);

    /* train tasks may share a key among themselves, eval with regression too */
    write_spec("fine", "1.json", "t1", "train", "repo-A");
    write_spec("fine", "2.json", "t2", "train", "repo-A");
    write_spec("fine", "3.json", "e1", "eval", "repo-B");
    write_spec("fine", "4.json", "r1", "regression", "repo-B");
    pool = load("fine", &rc);
    CHECK_OK(rc);
    if (pool) CHECK_OK(rlvr_task_pool_check_splits(pool));

    /* across pools: a training pool and an evaluation pool */
    write_spec("evalpool", "1.json", "e9", "eval", "repo-A");
    rlvr_task_pool *eval = load("evalpool", &rc);
    CHECK_OK(rc);
    if (pool && eval) {
        CHECK_OK(rlvr_task_pool_check_splits(eval));
        const rlvr_task_pool *both[2] = {pool, eval};
        CHECK(rlvr_task_pools_check_splits(both, 2) == RLVR_EINVAL);
        CHECK(strstr(rlvr_error_last(), "\"repo-A\"") && strstr(rlvr_error_last(), "1 shared key in all"));
    }
    rlvr_task_pool_free(pool);
    rlvr_task_pool_free(eval);
}

int main(void) {
    dir = tmpdir_make("pool");
    test_directory_pool();
    test_jsonl_pool();
    test_refusals();
    test_split_hygiene();
    rm_rf(dir);
    free(dir);
    return test_summary("test_task_pool");
}
