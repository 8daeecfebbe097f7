/* tests/rl/test_group_ids.c — what a step's keys can hold: group ids unique
 * over a run (a step of 100 001 groups included, where the old
 * (step+1)·100000 + g collided with the next step), sampling sequences
 * unique within a step up to the limits, and the configuration refusing a
 * group size or a per-step draw beyond them with the key and the limit. */
#include "rl/config.h"
#include "rl/difficulty.h"
#include "test.h"

#include <stdint.h>

static int parse_rl(const char *text, rlvr_rl_config *out) {
    const rlvr_config_key *const schemas[] = {rlvr_rl_config_keys, NULL};
    rlvr_config *cfg = NULL;
    int rc = rlvr_config_parse(&cfg, text, "t.ini", schemas);
    if (rc == 0) rc = rlvr_rl_config_load(out, cfg);
    rlvr_config_free(cfg);
    return rc;
}

int main(void) {
    /* ids over steps 1..3 of 100 001 groups: strictly increasing, so unique */
    int64_t prev = INT64_MIN;
    bool increasing = true;
    for (int64_t step = 1; step <= 3; step++)
        for (int32_t g = 0; g < 100001; g++) {
            int64_t id = rlvr_rl_group_id(step, g);
            increasing &= id > prev;
            prev = id;
        }
    CHECK_MSG(increasing, "group ids repeat across 100 001 groups a step");
    CHECK(rlvr_rl_group_id(1, 100000) != rlvr_rl_group_id(2, 0));
    CHECK(rlvr_rl_group_id(1, RLVR_GROUPS_DRAWN_MAX - 1) < rlvr_rl_group_id(2, 0));

    /* sequences: a block of RLVR_GROUP_SIZE_MAX per group, the last one the last 32-bit value */
    CHECK(rlvr_rl_group_sequence(0, RLVR_GROUP_SIZE_MAX - 1) < rlvr_rl_group_sequence(1, 0));
    CHECK(rlvr_rl_group_sequence(100000, 5) == 100000u * RLVR_GROUP_SIZE_MAX + 5u);
    CHECK(rlvr_rl_group_sequence(RLVR_GROUPS_DRAWN_MAX - 1, RLVR_GROUP_SIZE_MAX - 1) == UINT32_MAX);

    /* the configuration: at the limits accepted, past them refused naming the key */
    rlvr_rl_config rl;
    CHECK_MSG(parse_rl("[grpo]\ngroup_size = 1024\n[difficulty]\nmax_group_size = 1024\n", &rl) == 0, "%s",
              rlvr_error_last());
    CHECK(rl.grpo.group_size == RLVR_GROUP_SIZE_MAX);
    CHECK(parse_rl("[grpo]\ngroup_size = 1025\n[difficulty]\nmax_group_size = 1025\n", &rl) == RLVR_ECONFIG);
    CHECK_MSG(strstr(rlvr_error_last(), "group_size") && strstr(rlvr_error_last(), "1024"), "%s", rlvr_error_last());
    CHECK(parse_rl("[difficulty]\nmax_group_size = 2048\n", &rl) == RLVR_ECONFIG);
    CHECK_MSG(strstr(rlvr_error_last(), "max_group_size"), "%s", rlvr_error_last());

    CHECK_MSG(parse_rl("[grpo]\ngroups_per_step = 4194304\n[dynamic_sampling]\nmax_rounds = 1\n", &rl) == 0, "%s",
              rlvr_error_last());
    CHECK(parse_rl("[grpo]\ngroups_per_step = 4194305\n[dynamic_sampling]\nmax_rounds = 1\n", &rl) == RLVR_ECONFIG);
    CHECK(parse_rl("[grpo]\ngroups_per_step = 1000000\n[dynamic_sampling]\nmax_rounds = 2\nmax_oversample = 4\n",
                   &rl) == RLVR_ECONFIG);
    CHECK_MSG(strstr(rlvr_error_last(), "max_rounds") && strstr(rlvr_error_last(), "5000000") &&
                  strstr(rlvr_error_last(), "4194304"),
              "%s", rlvr_error_last());
    rlvr_dynsample_config dc = {.max_rounds = 3, .max_oversample = 2.5};
    CHECK(rlvr_rl_dynsample_max_drawn(&dc, 10) == 10 + 2 * 25);
    return test_summary("test_group_ids");
}
