/* tests/eval/test_evalstore.c — evaluation results as HDF5 (io/evalstore.h):
 *   - a result with two families, infra-only and truncated tasks round-trips:
 *     settings, label, every task count, stats, and groups equal to the
 *     written ones (recomputed from the counts with the same seed);
 *   - a sweep file of two labelled results round-trips, and its long table
 *     has one row per checkpoint × group × metric × k;
 *   - h5dump reads both files (when given its path);
 *   - a file of another kind, a missing file and inverted bytes in a chunk
 *     of the counts are refused with the file named.
 * Usage: test_evalstore [H5DUMP] */
#include "io/evalstore.h"
#include "io/file.h"
#include "h5_corrupt.h"
#include "test.h"

#include <fcntl.h>
#include <hdf5.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    const char *id, *family;
    rlvr_split split;
    int32_t n, c, infra, truncated, dropped;
    int64_t calls, parsed, tokens;
} row;

/* samples = 4: family "arith" (3 tasks), "bugfix-c" (2, one all infra) */
static const row rows[] = {
    {"arith-0001", "arith", RLVR_SPLIT_EVAL, 4, 1, 0, 1, 0, 3, 2, 120},
    {"arith-0002", "arith", RLVR_SPLIT_EVAL, 4, 4, 0, 0, 0, 0, 0, 64},
    {"arith-0003", "arith", RLVR_SPLIT_EVAL, 3, 0, 1, 2, 1, 5, 5, 300},
    {"bugfix-c-0001", "bugfix-c", RLVR_SPLIT_REGRESSION, 4, 2, 0, 0, 1, 12, 11, 999},
    {"bugfix-c-0002", "bugfix-c", RLVR_SPLIT_REGRESSION, 0, 0, 4, 0, 0, 1, 0, 17},
};
#define N_ROWS (sizeof rows / sizeof rows[0])

static rlvr_eval_result *make(uint64_t seed, int first_c) {
    rlvr_eval_result *r = NULL;
    CHECK_OK(rlvr_eval_result_new(&r, N_ROWS, 4, seed, 0.7f));
    for (size_t i = 0; r && i < N_ROWS; i++) {
        CHECK_OK(rlvr_eval_result_set_task(r, i, rows[i].id, rows[i].family, rows[i].split, (uint32_t)(10 + i)));
        rlvr_eval_task_result *t = &r->tasks[i];
        t->n = rows[i].n;
        t->c = i == 0 ? first_c : rows[i].c;
        t->infra = rows[i].infra;
        t->truncated = rows[i].truncated;
        t->dropped = rows[i].dropped;
        t->calls = rows[i].calls;
        t->calls_parsed = rows[i].parsed;
        t->policy_tokens = rows[i].tokens;
    }
    if (r) {
        r->stats = (rlvr_eval_stats){.rollouts = 20, .verifications = 7, .verify_cache_hits = 3, .wall_s = 1.5,
                                     .generate_s = 0.75, .verify_s = 0.25};
        CHECK_OK(rlvr_eval_result_summarize(r, 0.9, 500));
    }
    return r;
}

static bool same_estimate(const rlvr_eval_estimate *a, const rlvr_eval_estimate *b) {
    bool nan_a = isnan(a->value), nan_b = isnan(b->value);
    if (nan_a || nan_b) return nan_a && nan_b;
    return a->value == b->value && a->low == b->low && a->high == b->high;
}

static void check_same(const rlvr_eval_result *a, const rlvr_eval_result *b) {
    CHECK(a->samples == b->samples && a->seed == b->seed && a->temperature == b->temperature);
    CHECK(a->confidence == b->confidence && a->resamples == b->resamples);
    CHECK(a->n_tasks == b->n_tasks);
    for (size_t i = 0; i < a->n_tasks && i < b->n_tasks; i++) {
        const rlvr_eval_task_result *x = &a->tasks[i], *y = &b->tasks[i];
        CHECK_MSG(strcmp(x->id, y->id) == 0 && strcmp(x->family, y->family) == 0 && x->split == y->split &&
                      x->index == y->index,
                  "task %zu: %s/%s vs %s/%s", i, x->id, x->family, y->id, y->family);
        CHECK_MSG(x->n == y->n && x->c == y->c && x->infra == y->infra && x->truncated == y->truncated &&
                      x->dropped == y->dropped && x->calls == y->calls && x->calls_parsed == y->calls_parsed &&
                      x->policy_tokens == y->policy_tokens,
                  "task %zu counts", i);
    }
    CHECK(memcmp(&a->stats, &b->stats, sizeof a->stats) == 0);
    CHECK(a->n_groups == b->n_groups);
    for (size_t g = 0; g < a->n_groups && g < b->n_groups; g++) {
        const rlvr_eval_group *x = &a->groups[g], *y = &b->groups[g];
        CHECK(strcmp(x->name, y->name) == 0 && x->n_tasks == y->n_tasks && x->excluded == y->excluded);
        CHECK(x->samples == y->samples && x->successes == y->successes && x->infra == y->infra);
        CHECK(x->n_k == y->n_k);
        for (int32_t k = 0; k < x->n_k && k < y->n_k; k++) {
            CHECK(x->k[k] == y->k[k] && x->k_tasks[k] == y->k_tasks[k]);
            CHECK_MSG(same_estimate(&x->pass_at[k], &y->pass_at[k]), "group %s pass@%lld", x->name,
                      (long long)x->k[k]);
            CHECK_MSG(same_estimate(&x->pass_hat[k], &y->pass_hat[k]), "group %s pass^%lld", x->name,
                      (long long)x->k[k]);
        }
    }
}

static int h5dump_ok(const char *h5dump, const char *path, const char *expect) {
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "'%s' '%s' 2>&1 | grep -q '%s'", h5dump, path, expect);
    return system(cmd) == 0;
}

int main(int argc, char **argv) {
    const char *h5dump = argc > 1 ? argv[1] : NULL;
    char dir[] = "/tmp/test_evalstore_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256], sweep[256], bad[256];
    snprintf(path, sizeof path, "%s/result.h5", dir);
    snprintf(sweep, sizeof sweep, "%s/sweep.h5", dir);
    snprintf(bad, sizeof bad, "%s/nothing.h5", dir);

    rlvr_eval_result *a = make(5, 1), *b = make(5, 3);
    rlvr_evalstore_label la, lb;
    rlvr_evalstore_label_init(&la);
    snprintf(la.checkpoint, sizeof la.checkpoint, "/runs/a/checkpoints/step_00000004.h5");
    snprintf(la.pool, sizeof la.pool, "/runs/a/pool");
    snprintf(la.split, sizeof la.split, "eval");
    la.step = 4;
    la.policy_version = 4;
    la.shard = 2;
    la.n_shards = 4;
    la.first_task = 17;
    lb = la;
    lb.step = 6;
    lb.shard = lb.n_shards = -1;
    lb.first_task = 0;

    /* one result */
    CHECK_OK(rlvr_evalstore_write(path, a, &la));
    CHECK(access(path, F_OK) == 0);
    char part[300];
    snprintf(part, sizeof part, "%s.part", path);
    CHECK(access(part, F_OK) != 0);
    rlvr_eval_result *back = NULL;
    rlvr_evalstore_label lback;
    CHECK_OK(rlvr_evalstore_read(path, &back, &lback));
    if (back) check_same(a, back);
    CHECK(strcmp(lback.checkpoint, la.checkpoint) == 0 && strcmp(lback.pool, la.pool) == 0 &&
          strcmp(lback.split, "eval") == 0);
    CHECK(lback.step == 4 && lback.policy_version == 4 && lback.shard == 2 && lback.n_shards == 4 &&
          lback.first_task == 17);
    rlvr_eval_result_free(back);
    back = NULL;

    /* a sweep of two */
    const rlvr_eval_result *both[2] = {a, b};
    rlvr_evalstore_label labels[2] = {la, lb};
    CHECK_OK(rlvr_evalstore_write_sweep(sweep, both, labels, 2));
    rlvr_eval_result **rs = NULL;
    rlvr_evalstore_label *ls = NULL;
    size_t n = 0;
    CHECK_OK(rlvr_evalstore_read_sweep(sweep, &rs, &ls, &n));
    CHECK(n == 2);
    if (n == 2) {
        check_same(a, rs[0]);
        check_same(b, rs[1]);
        CHECK(ls[0].step == 4 && ls[1].step == 6 && ls[1].shard == -1);
        CHECK(rs[0]->groups[0].pass_at[0].value != rs[1]->groups[0].pass_at[0].value);
    }
    for (size_t i = 0; i < n; i++) rlvr_eval_result_free(rs[i]);
    free(rs);
    free(ls);

    /* readers: h5dump sees the datasets and the long table */
    if (h5dump) {
        CHECK(h5dump_ok(h5dump, path, "DATASET \"pass_at_k\"") || h5dump_ok(h5dump, path, "GROUP \"pass_at_k\""));
        CHECK(h5dump_ok(h5dump, path, "rlvr.eval_result"));
        CHECK(h5dump_ok(h5dump, sweep, "DATASET \"metric\""));
        CHECK(h5dump_ok(h5dump, sweep, "pass^k"));
    }

    /* refusals: another kind of file, a missing file, a corrupted chunk */
    CHECK(rlvr_evalstore_read(sweep, &back, NULL) == RLVR_EFORMAT && back == NULL);
    CHECK(strstr(rlvr_error_last(), "sweep.h5") != NULL);
    CHECK(rlvr_evalstore_read(bad, &back, NULL) < 0 && strstr(rlvr_error_last(), "nothing.h5") != NULL);
    CHECK(test_corrupt_chunk(path, "tasks/policy_tokens"));
    CHECK(rlvr_evalstore_read(path, &back, NULL) == RLVR_ECHECKSUM && back == NULL);
    CHECK(strstr(rlvr_error_last(), "result.h5") != NULL);
    rlvr_eval_result_free(back);

    rlvr_eval_result_free(a);
    rlvr_eval_result_free(b);
    unlink(path);
    unlink(sweep);
    rmdir(dir);
    return test_summary("test_evalstore");
}
