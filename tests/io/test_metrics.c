/* Metrics table: round trip, resume truncation, older files with fewer
 * columns, and SWMR: readers during appends and after a killed writer. */
#include "io/file.h"
#include "io/h5util.h"
#include "io/metrics.h"
#include "io_fixtures.h"
#include "test.h"

#include <signal.h>
#include <sys/wait.h>

/* The value a test writes for metric i at a step (some left NaN). */
static double value_at(int64_t step, int i, double salt) {
    if ((step + i) % 7 == 0) return NAN;
    return salt + (double)step * 0.5 + (double)i * 1e-3;
}

static bool same_value(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

static int append_rows(rlvr_metrics *m, int64_t from, int64_t to, double salt) {
    for (int64_t s = from; s <= to; s++) {
        rlvr_metrics_row row;
        rlvr_metrics_row_init(&row, s);
        for (int i = 0; i < RLVR_METRIC_COUNT; i++) row.value[i] = value_at(s, i, salt);
        RLVR_TRY(rlvr_metrics_append(m, &row));
    }
    return 0;
}

/* Rows [0, n) of the table must be steps first.. with the given salt. */
static bool table_matches(const rlvr_metrics_table *t, int64_t first, int64_t n, double salt, int64_t salt_from,
                          double salt2) {
    if (t->n_rows < n) return false;
    for (int64_t r = 0; r < n; r++) {
        int64_t s = first + r;
        if (t->step[r] != s) return false;
        for (int i = 0; i < RLVR_METRIC_COUNT; i++)
            if (!t->value[i] || !same_value(t->value[i][r], value_at(s, i, s >= salt_from ? salt2 : salt)))
                return false;
    }
    return true;
}

static void test_names(void) {
    for (int i = 0; i < RLVR_METRIC_COUNT; i++) {
        const char *name = rlvr_metric_name((rlvr_metric)i);
        CHECK(name && strlen(name) > 0 && rlvr_metric_doc((rlvr_metric)i));
        CHECK(rlvr_metric_find(name) == i);
        CHECK(strcmp(name, "step") != 0);
    }
    CHECK(rlvr_metric_find("no_such_metric") == -1);
    CHECK(rlvr_metric_name(RLVR_METRIC_COUNT) == NULL);
    CHECK(strcmp(rlvr_metric_name(RLVR_METRIC_REWARD_MEAN), "reward_mean") == 0);
}

static void test_round_trip_and_resume(const char *dir) {
    char path[4200];
    snprintf(path, sizeof path, "%s/metrics.h5", dir);
    rlvr_metrics *m = NULL;
    CHECK_OK(rlvr_metrics_open(&m, path, -1));
    if (!m) return;
    CHECK_OK(append_rows(m, 1, 600, 1.0)); /* more than one chunk */
    rlvr_metrics_row row;
    rlvr_metrics_row_init(&row, 600);
    CHECK(rlvr_metrics_append(m, &row) == RLVR_EINVAL);
    CHECK(strstr(rlvr_error_last(), "steps must increase"));
    CHECK(rlvr_metrics_rows(m) == 600);
    CHECK_OK(rlvr_metrics_close(m));

    rlvr_metrics_table t;
    CHECK_OK(rlvr_metrics_read(&t, path));
    CHECK(t.n_rows == 600);
    CHECK(table_matches(&t, 1, 600, 1.0, INT64_MAX, 0));
    rlvr_metrics_table_free(&t);

    /* resumed from the checkpoint of step 400: rows after it are redone */
    CHECK_OK(rlvr_metrics_open(&m, path, 400));
    if (!m) return;
    CHECK(rlvr_metrics_rows(m) == 400);
    rlvr_metrics_row_init(&row, 400);
    CHECK(rlvr_metrics_append(m, &row) == RLVR_EINVAL);
    CHECK_OK(append_rows(m, 401, 450, 2.0));
    CHECK_OK(rlvr_metrics_close(m));
    CHECK_OK(rlvr_metrics_read(&t, path));
    CHECK(t.n_rows == 450);
    CHECK(table_matches(&t, 1, 450, 1.0, 401, 2.0));
    rlvr_metrics_table_free(&t);

    /* a fresh run over an old file starts an empty table */
    CHECK_OK(rlvr_metrics_open(&m, path, -1));
    CHECK(m && rlvr_metrics_rows(m) == 0);
    CHECK_OK(rlvr_metrics_close(m));
    rlvr_file_kind kind;
    CHECK_OK(rlvr_io_identify(path, &kind, NULL));
    CHECK(kind == RLVR_FILE_METRICS);
}

/* A file from an rlvr that knew only `loss`: the other columns read as
 * missing, and appending adds them (NaN for the old rows). */
static void test_fewer_columns(const char *dir) {
    char path[4200];
    snprintf(path, sizeof path, "%s/old.h5", dir);
    hid_t f;
    CHECK_OK(rlvr_h5_file_create(&f, path, true));
    CHECK_OK(rlvr_h5_write_format(f, RLVR_FORMAT_METRICS, 1));
    int64_t steps[3] = {10, 20, 30};
    double loss[3] = {0.5, 0.25, 0.125};
    hsize_t dims[1] = {3};
    CHECK_OK(rlvr_h5_write_array(f, "steps/step", RLVR_DT_I64, 1, dims, steps, 4));
    CHECK_OK(rlvr_h5_write_array(f, "steps/loss", RLVR_DT_F64, 1, dims, loss, 4));
    H5Fclose(f);

    rlvr_metrics_table t;
    CHECK_OK(rlvr_metrics_read(&t, path));
    CHECK(t.n_rows == 3 && t.value[RLVR_METRIC_LOSS] && t.value[RLVR_METRIC_LR] == NULL);
    rlvr_metrics_table_free(&t);

    rlvr_metrics *m = NULL;
    CHECK_OK(rlvr_metrics_open(&m, path, INT64_MAX));
    if (!m) return;
    rlvr_metrics_row row;
    rlvr_metrics_row_init(&row, 40);
    row.value[RLVR_METRIC_LOSS] = 0.0625;
    row.value[RLVR_METRIC_LR] = 3e-4;
    CHECK_OK(rlvr_metrics_append(m, &row));
    CHECK_OK(rlvr_metrics_close(m));
    CHECK_OK(rlvr_metrics_read(&t, path));
    CHECK(t.n_rows == 4 && t.step[3] == 40);
    CHECK(t.value[RLVR_METRIC_LOSS] && t.value[RLVR_METRIC_LOSS][1] == 0.25 && t.value[RLVR_METRIC_LOSS][3] == 0.0625);
    CHECK(t.value[RLVR_METRIC_LR] && isnan(t.value[RLVR_METRIC_LR][0]) && t.value[RLVR_METRIC_LR][3] == 3e-4);
    rlvr_metrics_table_free(&t);
}

/* A child appends a row every millisecond; the parent reads while it runs,
 * then kills it and checks the file still reads and can be appended to. */
static void test_swmr_and_crash(const char *dir) {
    char path[4200];
    snprintf(path, sizeof path, "%s/live.h5", dir);
    int ready[2];
    if (pipe(ready) != 0) return;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(ready[0]);
        rlvr_metrics *m;
        if (rlvr_metrics_open(&m, path, -1) < 0) _exit(3);
        if (append_rows(m, 1, 20, 5.0) < 0) _exit(4);
        if (write(ready[1], "r", 1) != 1) _exit(5);
        for (int64_t s = 21; s < 1000000; s++) {
            if (append_rows(m, s, s, 5.0) < 0) _exit(6);
            usleep(1000);
        }
        _exit(0);
    }
    close(ready[1]);
    char c;
    CHECK(read(ready[0], &c, 1) == 1);
    close(ready[0]);
    int64_t last = 0;
    bool grew = false, consistent = true;
    for (int k = 0; k < 20; k++) {
        rlvr_metrics_table t;
        int rc = rlvr_metrics_read(&t, path);
        CHECK_OK(rc);
        if (rc < 0) break;
        consistent = consistent && t.n_rows >= 20 && t.n_rows >= last &&
                     table_matches(&t, 1, t.n_rows, 5.0, INT64_MAX, 0);
        grew = grew || (last > 0 && t.n_rows > last);
        last = t.n_rows;
        rlvr_metrics_table_free(&t);
        usleep(5000);
    }
    CHECK_MSG(consistent, "SWMR reader saw an inconsistent table");
    CHECK_MSG(grew, "SWMR reader never saw the table grow");
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status));

    /* the killed writer's file: readable by rlvr, and appendable again */
    rlvr_metrics_table t;
    CHECK_OK(rlvr_metrics_read(&t, path));
    int64_t rows = t.n_rows;
    CHECK(rows >= last && table_matches(&t, 1, rows, 5.0, INT64_MAX, 0));
    rlvr_metrics_table_free(&t);
    CHECK_OK(rlvr_io_verify(path, NULL, NULL));
    rlvr_metrics *m = NULL;
    CHECK_OK(rlvr_metrics_open(&m, path, INT64_MAX));
    if (!m) return;
    CHECK(rlvr_metrics_rows(m) == rows);
    CHECK_OK(append_rows(m, rows + 1, rows + 3, 5.0));
    CHECK_OK(rlvr_metrics_close(m));
    /* closed normally: plain (non-SWMR) HDF5 readers open it again */
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(f >= 0);
    if (f >= 0) H5Fclose(f);
    CHECK_OK(rlvr_metrics_read(&t, path));
    CHECK(t.n_rows == rows + 3 && table_matches(&t, 1, rows + 3, 5.0, INT64_MAX, 0));
    rlvr_metrics_table_free(&t);
}

int main(void) {
    rlvr_h5_init();
    char dir[4096];
    fixture_tmpdir(dir, sizeof dir, "metrics");
    test_names();
    test_round_trip_and_resume(dir);
    test_fewer_columns(dir);
    test_swmr_and_crash(dir);
    fixture_rmtree(dir);
    return test_summary("test_metrics");
}
