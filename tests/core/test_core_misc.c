/* Errors, rollout records and system helpers. */
#include "core/record.h"
#include "core/sys.h"
#include "test.h"

static int fails_with_context(void) {
    int rc = RLVR_FAIL(RLVR_EIO, "cannot read %s", "x.h5");
    return rlvr_error_wrap(rc, "loading checkpoint");
}

static void test_errors(void) {
    rlvr_error_clear();
    CHECK(rlvr_error_last()[0] == '\0');
    CHECK(fails_with_context() == RLVR_EIO);
    CHECK(strncmp(rlvr_error_last(), "loading checkpoint: cannot read x.h5 (at ", 41) == 0);
    CHECK(rlvr_error_last_code() == RLVR_EIO);
    CHECK(strcmp(rlvr_error_name(RLVR_ECHECKSUM), "RLVR_ECHECKSUM") == 0);
}

static void test_record(void) {
    rlvr_rollout r;
    CHECK_OK(rlvr_rollout_init(&r, 2, 1));
    for (int i = 0; i < 100; i++)
        CHECK_OK(rlvr_rollout_push_token(&r, i, -0.5f, 1.0f, i % 3 == 0 ? RLVR_TOKEN_POLICY : RLVR_TOKEN_OBSERVATION));
    CHECK(r.n_tokens == 100 && r.cap_tokens >= 100);
    CHECK(rlvr_rollout_policy_tokens(&r) == 34);
    rlvr_turn t = {.policy_start = 0, .policy_end = 5, .exit_status = 0};
    snprintf(t.tool_name, sizeof t.tool_name, "run");
    int32_t index = -1;
    for (int i = 0; i < 20; i++) CHECK_OK(rlvr_rollout_push_turn(&r, &t, &index));
    CHECK(index == 19 && r.n_turns == 20);
    rlvr_rollout copy;
    CHECK_OK(rlvr_rollout_copy(&copy, &r));
    CHECK(copy.n_tokens == 100 && copy.tokens[99] == 99 && copy.mask[99] == RLVR_TOKEN_POLICY);
    CHECK(copy.tokens != r.tokens && strcmp(copy.turns[19].tool_name, "run") == 0);
    rlvr_rollout_reset(&r);
    CHECK(r.n_tokens == 0 && r.cap_tokens >= 100);
    CHECK(strcmp(rlvr_stop_reason_name(RLVR_STOP_REPETITION), "repetition") == 0);
    CHECK(strcmp(rlvr_verdict_name(RLVR_VERDICT_REJECTED), "rejected") == 0);
    rlvr_rollout_free(&r);
    rlvr_rollout_free(&copy);
}

static void test_sys(void) {
    CHECK(rlvr_physical_cores() >= 1);
    double t0 = rlvr_now(), t1 = rlvr_now();
    CHECK(t1 >= t0);
}

int main(void) {
    test_errors();
    test_record();
    test_sys();
    return test_summary("test_core_misc");
}
