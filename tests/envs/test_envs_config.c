/* [tasks] and [harness]: defaults, values, and the cross-key refusals. */
#include "envs/config.h"
#include "test.h"

static const rlvr_config_key *const schemas[] = {rlvr_tasks_config_keys, rlvr_harness_config_keys, NULL};

static rlvr_config *parse(const char *text, int *rc) {
    rlvr_config *cfg = NULL;
    *rc = rlvr_config_parse(&cfg, text, "run.ini", schemas);
    return cfg;
}

static void test_defaults(void) {
    int rc;
    rlvr_config *cfg = parse("", &rc);
    CHECK_OK(rc);
    if (!cfg) return;
    rlvr_tasks_config t;
    rlvr_harness_config h;
    CHECK_OK(rlvr_tasks_config_read(cfg, &t));
    CHECK_OK(rlvr_harness_config_read(cfg, &h));
    CHECK(strcmp(t.pool, "") == 0 && strcmp(t.family, "bugfix-c") == 0 && t.difficulty == 1);
    CHECK(t.train_count == 256 && t.eval_count == 64 && t.regression_count == 32 && t.seed == 1);
    CHECK(h.budgets.turns == 16 && h.budgets.policy_tokens == 4096 && h.budgets.context_tokens == 8192);
    CHECK(h.budgets.tool_timeout_s == 10.0 && h.tool_output_bytes == 2048 && h.budgets.malformed_calls == 0);
    rlvr_task_gen_options o;
    rlvr_tasks_config_gen_options(&t, RLVR_SPLIT_EVAL, &o);
    CHECK(o.version == RLVR_TASK_GEN_OPTIONS_VERSION && o.count == 64 && o.split == RLVR_SPLIT_EVAL);
    CHECK(strcmp(o.family, "bugfix-c") == 0 && o.seed == 1 && o.difficulty == 1 && o.first == 0);
    rlvr_config_free(cfg);
}

static void test_values(void) {
    int rc;
    rlvr_config *cfg = parse("[tasks]\nfamily = arith\ndifficulty = 3\nregression_count = 0\nseed = 42\n"
                             "[harness]\nmax_turns = 4\nmax_policy_tokens = 100\nmax_context_tokens = 400\n"
                             "tool_timeout_s = 2.5\nmax_malformed_calls = 2\n",
                             &rc);
    CHECK_OK(rc);
    if (!cfg) return;
    rlvr_tasks_config t;
    rlvr_harness_config h;
    CHECK_OK(rlvr_tasks_config_read(cfg, &t));
    CHECK_OK(rlvr_harness_config_read(cfg, &h));
    CHECK(strcmp(t.family, "arith") == 0 && t.difficulty == 3 && t.seed == 42 && t.regression_count == 0);
    CHECK(h.budgets.turns == 4 && h.budgets.policy_tokens == 100 && h.budgets.tool_timeout_s == 2.5);
    CHECK(h.budgets.malformed_calls == 2);
    rlvr_task_gen_options o;
    rlvr_tasks_config_gen_options(&t, RLVR_SPLIT_REGRESSION, &o);
    CHECK(o.count == 0 && o.difficulty == 3 && o.seed == 42);
    /* a task's own budgets win over the run's */
    rlvr_task_budgets task = {.turns = 8, .malformed_calls = 5}, got;
    rlvr_task_budgets_resolve(&task, &h.budgets, &got);
    CHECK(got.turns == 8 && got.policy_tokens == 100 && got.context_tokens == 400 && got.malformed_calls == 5);
    rlvr_config_free(cfg);
}

static void test_refusals(void) {
    int rc;
    rlvr_config *cfg = parse("[tasks]\npool = tasks/\ndifficulty = 2\n", &rc);
    CHECK_OK(rc);
    rlvr_tasks_config t;
    if (cfg) {
        CHECK(rlvr_tasks_config_read(cfg, &t) == RLVR_ECONFIG);
        CHECK(strstr(rlvr_error_last(), "run.ini:3") && strstr(rlvr_error_last(), "difficulty") &&
              strstr(rlvr_error_last(), "`pool` is set"));
    }
    rlvr_config_free(cfg);

    /* every other [tasks] key describes the built-in pool, the last in the table too */
    cfg = parse("[tasks]\npool = tasks/\ncheck_jobs = 2\n", &rc);
    CHECK_OK(rc);
    if (cfg) {
        CHECK(rlvr_tasks_config_read(cfg, &t) == RLVR_ECONFIG);
        CHECK(strstr(rlvr_error_last(), "run.ini:3") && strstr(rlvr_error_last(), "check_jobs"));
    }
    rlvr_config_free(cfg);

    cfg = parse("[tasks]\npool = tasks/\n", &rc);
    if (cfg) CHECK_OK(rlvr_tasks_config_read(cfg, &t));
    CHECK(cfg && strcmp(t.pool, "tasks/") == 0);
    rlvr_config_free(cfg);

    cfg = parse("[harness]\nmax_policy_tokens = 5000\nmax_context_tokens = 4000\n", &rc);
    rlvr_harness_config h;
    if (cfg) {
        CHECK(rlvr_harness_config_read(cfg, &h) == RLVR_ECONFIG);
        CHECK(strstr(rlvr_error_last(), "max_policy_tokens") && strstr(rlvr_error_last(), "exceeds"));
    }
    rlvr_config_free(cfg);

    cfg = parse("[tasks]\nfamily = bugfix-rust\n", &rc);
    CHECK(rc == RLVR_ECONFIG && cfg == NULL);
    cfg = parse("[harness]\nmax_turn = 3\n", &rc);
    CHECK(rc == RLVR_ECONFIG && strstr(rlvr_error_last(), "max_turns"));
    cfg = parse("[tasks]\ndifficulty = 4\n", &rc);
    CHECK(rc == RLVR_ECONFIG);

    /* max_malformed_calls: an int in 0 … 1e6; the message names file, line and key */
    const char *bad[] = {"-1", "1000001", "two", "2.5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[128];
        snprintf(text, sizeof text, "[harness]\nmax_malformed_calls = %s\n", bad[i]);
        cfg = parse(text, &rc);
        CHECK_MSG(rc == RLVR_ECONFIG && cfg == NULL, "max_malformed_calls = %s accepted", bad[i]);
        CHECK_MSG(strstr(rlvr_error_last(), "run.ini:2") && strstr(rlvr_error_last(), "max_malformed_calls"), "%s",
                  rlvr_error_last());
        rlvr_config_free(cfg);
    }
    cfg = parse("[harness]\nmax_malformed_calls = 1000000\n", &rc);
    if (cfg) CHECK_OK(rlvr_harness_config_read(cfg, &h));
    CHECK(cfg && h.budgets.malformed_calls == 1000000);
    rlvr_config_free(cfg);
}

int main(void) {
    test_defaults();
    test_values();
    test_refusals();
    return test_summary("test_envs_config");
}
