/* tests/rl/test_plan_format.c — the number formats `rlvr plan` prints its
 * figures in (rl/plan.h rlvr_plan_fmt_*), as docs/RL.md "Worked examples"
 * writes them. */
#include "rl/plan.h"
#include "test.h"

#include <string.h>

#define EQ(expr, want)                                                                     \
    do {                                                                                   \
        const char *got_ = (expr);                                                         \
        CHECK_MSG(strcmp(got_, (want)) == 0, "%s: \"%s\", want \"%s\"", #expr, got_, (want)); \
    } while (0)

int main(void) {
    char b[64];
    EQ(rlvr_plan_fmt_int(b, sizeof b, 8192), "8192");
    EQ(rlvr_plan_fmt_int(b, sizeof b, 15360), "15 360");
    EQ(rlvr_plan_fmt_int(b, sizeof b, 1797120), "1 797 120");
    EQ(rlvr_plan_fmt_int(b, sizeof b, -123456), "-123 456");
    EQ(rlvr_plan_fmt_int(b, sizeof b, 0), "0");
    char tiny[6];
    EQ(rlvr_plan_fmt_int(tiny, sizeof tiny, 1234567), "1 23"); /* cut to fit, terminated */

    EQ(rlvr_plan_fmt_dec(b, sizeof b, 56.25, 2, 1), "56.25");
    EQ(rlvr_plan_fmt_dec(b, sizeof b, 99.667, 1, 1), "99.7");
    EQ(rlvr_plan_fmt_dec(b, sizeof b, 12.0, 3, 3), "12");
    EQ(rlvr_plan_fmt_dec(b, sizeof b, 2.0 / 3.0, 2, 3), "0.667");

    EQ(rlvr_plan_fmt_prob(b, sizeof b, 0.008), "0.008");
    EQ(rlvr_plan_fmt_prob(b, sizeof b, 0.0625), "0.0625");
    EQ(rlvr_plan_fmt_prob(b, sizeof b, 1.0), "1");
    EQ(rlvr_plan_fmt_prob(b, sizeof b, 0.6561 * 1.00001), "0.66");
    EQ(rlvr_plan_fmt_prob(b, sizeof b, 3.9e-11), "3.9e-11");

    EQ(rlvr_plan_fmt_pct(b, sizeof b, 0.5625), "56.25");
    EQ(rlvr_plan_fmt_pct(b, sizeof b, 0.123456), "12.3");
    EQ(rlvr_plan_fmt_pct(b, sizeof b, 0.02), "2");
    return test_summary("test_plan_format");
}
