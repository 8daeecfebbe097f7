/* What `rlvr inspect` asks of io/ (no command): the shard files of a step
 * found beside a shard, a shard's totals, a metrics column's statistics
 * over the rows that measured it, and a dataset's shape as text. */
#include "io/file.h"
#include "io/metrics.h"
#include "io/shard.h"
#include "io_fixtures.h"
#include "test.h"

#include <math.h>

/* Writes rollouts 0..n-1 of `seed` as the shard of (step, rank) in dir. */
static void write_shard(const char *dir, int64_t step, int rank, int n, uint64_t seed, char *path, size_t cap) {
    rlvr_shard_writer *w = NULL;
    rlvr_rollout r;
    CHECK_OK(rlvr_rollout_init(&r, 16, 2));
    CHECK_OK(rlvr_shard_create(&w, dir, step, rank, NULL));
    for (int k = 0; w && k < n; k++) {
        CHECK_OK(fixture_rollout(&r, seed, k, 1 + k % 3, 5 + k % 4));
        CHECK_OK(rlvr_shard_append(w, &r, (float)k));
    }
    if (w) CHECK_OK(rlvr_shard_commit(w, path, cap));
    rlvr_rollout_free(&r);
}

static void test_step_files_and_totals(const char *dir) {
    char p1[4096], p3[4096], other[4096];
    write_shard(dir, 5, 1, 9, 11, p1, sizeof p1);
    write_shard(dir, 5, 3, 2, 12, p3, sizeof p3);
    write_shard(dir, 6, 0, 1, 13, other, sizeof other);
    rlvr_shard_step_files sf;
    CHECK_OK(rlvr_shard_list_step(p1, 5, &sf));
    CHECK_MSG(sf.files == 2 && sf.lo_rank == 1 && sf.hi_rank == 3, "step 5: %d files, ranks %d..%d", sf.files,
              sf.lo_rank, sf.hi_rank);
    CHECK(strcmp(sf.dir, dir) == 0);
    CHECK_OK(rlvr_shard_list_step(other, 6, &sf));
    CHECK(sf.files == 1 && sf.lo_rank == 0 && sf.hi_rank == 0);
    CHECK_OK(rlvr_shard_list_step(p1, 7, &sf));
    CHECK(sf.files == 0 && sf.lo_rank == -1);
    CHECK(rlvr_shard_list_step("/nonexistent-dir/step_00000005.rank_0001.h5", 5, &sf) == RLVR_EIO);

    /* the totals, against the fixture rollouts computed here */
    int64_t verdicts[RLVR_VERDICT_COUNT] = {0}, policy = 0;
    double reward = 0;
    rlvr_rollout r;
    CHECK_OK(rlvr_rollout_init(&r, 16, 2));
    for (int k = 0; k < 9; k++) {
        CHECK_OK(fixture_rollout(&r, 11, k, 1 + k % 3, 5 + k % 4));
        verdicts[r.verdict]++;
        policy += rlvr_rollout_policy_tokens(&r);
        reward += r.reward.total;
    }
    rlvr_rollout_free(&r);
    rlvr_shard *s = NULL;
    rlvr_shard_totals tot;
    CHECK_OK(rlvr_shard_open(&s, p1));
    if (!s) return;
    CHECK_OK(rlvr_shard_totals_of(s, &tot));
    CHECK(tot.policy_tokens == policy && policy > 0);
    CHECK_NEAR(tot.mean_reward, reward / 9.0, 1e-6);
    for (int v = 0; v < RLVR_VERDICT_COUNT; v++) CHECK_MSG(tot.verdicts[v] == verdicts[v], "verdict %d", v);
    rlvr_shard_close(s);
}

static void test_metric_stats(const char *dir) {
    char path[4200];
    snprintf(path, sizeof path, "%s/metrics.h5", dir);
    rlvr_metrics *m = NULL;
    CHECK_OK(rlvr_metrics_open(&m, path, -1));
    /* reward measured at steps 1, 2, 4 (not 3); the loss never */
    const double reward[4] = {0.5, -1.25, NAN, 0.75};
    for (int i = 0; m && i < 4; i++) {
        rlvr_metrics_row row;
        rlvr_metrics_row_init(&row, i + 1);
        row.value[RLVR_METRIC_REWARD_MEAN] = reward[i];
        CHECK_OK(rlvr_metrics_append(m, &row));
    }
    CHECK_OK(rlvr_metrics_close(m));
    rlvr_metrics_table t;
    CHECK_OK(rlvr_metrics_read(&t, path));
    rlvr_metric_stats st;
    rlvr_metrics_column_stats(&t, RLVR_METRIC_REWARD_MEAN, &st);
    CHECK(st.measured == 3);
    CHECK(st.last == 0.75 && st.min == -1.25 && st.max == 0.75);
    rlvr_metrics_column_stats(&t, RLVR_METRIC_LOSS, &st);
    CHECK(st.measured == 0 && isnan(st.last) && isinf(st.min) && st.min > 0);
    rlvr_metrics_table_free(&t);
}

static void test_shape_text(void) {
    rlvr_io_dataset_info d = {.rank = 2, .dims = {3, 4}};
    char buf[96];
    rlvr_io_shape_text(&d, buf, sizeof buf);
    CHECK(strcmp(buf, "(3, 4)") == 0);
    d.rank = 1, d.dims[0] = 5;
    rlvr_io_shape_text(&d, buf, sizeof buf);
    CHECK(strcmp(buf, "(5,)") == 0);
    d.rank = 0;
    rlvr_io_shape_text(&d, buf, sizeof buf);
    CHECK(strcmp(buf, "()") == 0);
}

int main(void) {
    char dir[4096];
    fixture_tmpdir(dir, sizeof dir, "inspect");
    test_step_files_and_totals(dir);
    test_metric_stats(dir);
    test_shape_text();
    fixture_rmtree(dir);
    return test_summary("test_inspect_summaries");
}
