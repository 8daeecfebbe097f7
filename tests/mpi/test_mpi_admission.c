/* Staleness admission (docs/OPERATIONS.md "Asynchronous training"): the
 * rule, the counters and the histogram. */
#include "mpi/admission.h"
#include "test.h"

#include <stdint.h>

static void test_rule(void) {
    CHECK(rlvr_admission_admits(5, 5, 0));
    CHECK(!rlvr_admission_admits(5, 4, 0)); /* synchronous: any lag drops */
    CHECK(rlvr_admission_admits(5, 3, 2));
    CHECK(!rlvr_admission_admits(5, 2, 2));
    CHECK(!rlvr_admission_admits(5, 6, 10)); /* from the future */
    CHECK(!rlvr_admission_admits(5, 5, -1)); /* invalid bound admits nothing */
    CHECK(!rlvr_admission_admits(INT64_MAX, INT64_MIN, INT64_MAX)); /* difference overflows int64 */
    CHECK(rlvr_admission_admits(INT64_MAX, 0, INT64_MAX));
    /* against the definition on a grid */
    int mismatches = 0;
    for (int64_t vt = 0; vt < 12; vt++)
        for (int64_t vr = 0; vr < 12; vr++)
            for (int64_t m = 0; m < 5; m++) {
                bool want = vt - vr >= 0 && vt - vr <= m;
                mismatches += rlvr_admission_admits(vt, vr, m) != want;
            }
    CHECK(mismatches == 0);
}

static void test_counters(void) {
    rlvr_admission a;
    CHECK(rlvr_admission_init(&a, -1) == RLVR_EINVAL);
    CHECK_OK(rlvr_admission_init(&a, 2));
    CHECK(a.max_seen == -1);
    const int64_t trainer = 10;
    const int64_t rollout[] = {10, 9, 9, 8, 7, 3, 10, 8};
    int admitted = 0;
    for (size_t i = 0; i < sizeof rollout / sizeof *rollout; i++) {
        bool admit = false;
        int64_t dv = -5;
        CHECK_OK(rlvr_admission_check(&a, trainer, rollout[i], &admit, &dv));
        CHECK(dv == trainer - rollout[i]);
        CHECK(admit == (dv <= 2));
        admitted += admit;
    }
    CHECK(a.arrived == 8);
    CHECK(a.admitted == 6 && admitted == 6);
    CHECK(a.dropped_stale == 2);
    CHECK(a.dropped_future == 0);
    CHECK(a.max_seen == 7);
    CHECK(a.histogram[0] == 2 && a.histogram[1] == 2 && a.histogram[2] == 2);
    CHECK(a.histogram[3] == 1 && a.histogram[7] == 1);
    uint64_t total = 0;
    for (int i = 0; i < RLVR_STALENESS_BINS; i++) total += a.histogram[i];
    CHECK(total == a.arrived);

    /* a record from the future is dropped, counted and reported */
    bool admit = true;
    int64_t dv = 0;
    CHECK(rlvr_admission_check(&a, trainer, 11, &admit, &dv) == RLVR_EINVAL);
    CHECK(!admit && dv == -1);
    CHECK(a.dropped_future == 1 && a.arrived == 9);
    CHECK(strstr(rlvr_error_last(), "version 11") != NULL);

    /* the last bin collects everything at or past it */
    CHECK_OK(rlvr_admission_check(&a, 1000, 0, &admit, NULL));
    CHECK(!admit);
    CHECK(a.histogram[RLVR_STALENESS_BINS - 1] == 1);
    CHECK(rlvr_admission_bin(RLVR_STALENESS_BINS - 1) == RLVR_STALENESS_BINS - 1);
    CHECK(rlvr_admission_bin(RLVR_STALENESS_BINS - 2) == RLVR_STALENESS_BINS - 2);
    CHECK(rlvr_admission_bin(INT64_MAX) == RLVR_STALENESS_BINS - 1);

    /* merge and reset */
    rlvr_admission b;
    CHECK_OK(rlvr_admission_init(&b, 2));
    CHECK_OK(rlvr_admission_check(&b, 4, 4, &admit, NULL));
    CHECK(admit);
    rlvr_admission_merge(&b, &a);
    CHECK(b.arrived == a.arrived + 1);
    CHECK(b.admitted == a.admitted + 1);
    CHECK(b.histogram[0] == a.histogram[0] + 1);
    CHECK(b.max_seen == 1000);
    rlvr_admission_reset(&b);
    CHECK(b.arrived == 0 && b.admitted == 0 && b.histogram[0] == 0 && b.max_seen == -1);
    CHECK(b.max_staleness == 2);
}

static void test_synchronous(void) {
    rlvr_admission a;
    CHECK_OK(rlvr_admission_init(&a, 0));
    bool admit;
    CHECK_OK(rlvr_admission_check(&a, 3, 3, &admit, NULL));
    CHECK(admit);
    CHECK_OK(rlvr_admission_check(&a, 3, 2, &admit, NULL));
    CHECK(!admit);
    CHECK(a.admitted == 1 && a.dropped_stale == 1);
}

int main(void) {
    test_rule();
    test_counters();
    test_synchronous();
    return test_summary("test_mpi_admission");
}
