/* INI configuration: typed getters and defaults, and every refusal names
 * file, line, key and a "did you mean". */
#include "core/config.h"
#include "core/hash.h"
#include "core/log.h"
#include "test.h"

/* rows without a field: these keys are read with the getters */
static const rlvr_config_key keys[] = {
    {.section = "model", .key = "d_model", .type = RLVR_CFG_INT, .default_value = "64", .doc = "width", .min = 1,
     .max = 65536},
    {.section = "model", .key = "norm_eps", .type = RLVR_CFG_FLOAT, .default_value = "1e-5", .doc = "RMSNorm epsilon",
     .min = 0, .max = 1},
    {.section = "model", .key = "tie_embeddings", .type = RLVR_CFG_BOOL, .default_value = "true", .doc = "tie LM head",
     .min = 1, .max = 0},
    {.section = "run", .key = "name", .type = RLVR_CFG_STRING, .default_value = "run", .doc = "run name", .min = 1,
     .max = 0},
    {.section = "rl", .key = "advantage", .type = RLVR_CFG_ENUM, .default_value = "std", .doc = "advantage estimator",
     .choices = "std|mean|loo", .min = 1, .max = 0},
    RLVR_KEY_END,
};
static const rlvr_config_key *const schemas[] = {keys, NULL};

static void test_values_and_defaults(void) {
    rlvr_config *cfg;
    const char *text = "[model]\nd_model = 128\ntie_embeddings = no\n; comment\n[rl]\nadvantage = loo\n";
    CHECK_OK(rlvr_config_parse(&cfg, text, "t.ini", schemas));
    if (!cfg) return;
    int64_t d;
    double eps;
    bool tie;
    const char *name, *adv;
    CHECK_OK(rlvr_config_get_int(cfg, "model", "d_model", &d));
    CHECK(d == 128);
    CHECK_OK(rlvr_config_get_double(cfg, "model", "norm_eps", &eps));
    CHECK(eps == 1e-5);
    CHECK_OK(rlvr_config_get_bool(cfg, "model", "tie_embeddings", &tie));
    CHECK(!tie);
    CHECK_OK(rlvr_config_get_string(cfg, "run", "name", &name));
    CHECK(strcmp(name, "run") == 0);
    CHECK_OK(rlvr_config_get_string(cfg, "rl", "advantage", &adv));
    CHECK(strcmp(adv, "loo") == 0);
    CHECK(rlvr_config_is_set(cfg, "model", "d_model"));
    CHECK(!rlvr_config_is_set(cfg, "run", "name"));
    CHECK(rlvr_config_line(cfg, "rl", "advantage") == 6);
    CHECK(rlvr_config_hash(cfg) == rlvr_fnv1a64(text, strlen(text)));
    /* undeclared key and wrong type are programming errors */
    CHECK(rlvr_config_get_int(cfg, "model", "nope", &d) == RLVR_EINVAL);
    CHECK(rlvr_config_get_int(cfg, "model", "norm_eps", &d) == RLVR_EINVAL);
    /* validator messages carry file and line */
    CHECK(rlvr_config_error(cfg, "model", "d_model", "must be even") == RLVR_ECONFIG);
    CHECK(strstr(rlvr_error_last(), "t.ini:2: [model] d_model: must be even") != NULL);
    rlvr_config_free(cfg);
}

static void expect_refusal(const char *text, const char *want1, const char *want2) {
    rlvr_config *cfg = (rlvr_config *)1;
    int rc = rlvr_config_parse(&cfg, text, "bad.ini", schemas);
    CHECK_MSG(rc == RLVR_ECONFIG, "text %s gave %d", text, rc);
    CHECK(cfg == NULL);
    CHECK_MSG(strstr(rlvr_error_last(), want1) != NULL, "message \"%s\" lacks \"%s\"", rlvr_error_last(), want1);
    if (want2)
        CHECK_MSG(strstr(rlvr_error_last(), want2) != NULL, "message \"%s\" lacks \"%s\"", rlvr_error_last(),
                  want2);
}

static void test_refusals(void) {
    expect_refusal("[model]\nd_modle = 3\n", "bad.ini:2: unknown key \"d_modle\"", "did you mean model.d_model");
    expect_refusal("[modle]\nd_model = 3\n", "bad.ini:2:", "did you mean model.d_model");
    expect_refusal("[run]\nd_model = 3\n", "unknown key", "did you mean model.d_model");
    expect_refusal("[model]\nd_model = wide\n", "bad.ini:2: [model] d_model: \"wide\" is not an integer", NULL);
    expect_refusal("[model]\nd_model = 0\n", "out of range [1, 65536]", NULL);
    expect_refusal("[model]\nnorm_eps = 1e-5x\n", "is not a number", NULL);
    expect_refusal("[model]\ntie_embeddings = maybe\n", "is not a boolean", NULL);
    expect_refusal("[rl]\nadvantage = median\n", "\"median\" is not one of std|mean|loo", NULL);
    expect_refusal("[model]\nd_model = 3\nd_model = 4\n", "bad.ini:3: [model] d_model is set twice", NULL);
    expect_refusal("[model]\nthis line has no equals\n", "bad.ini:2:", NULL);
    expect_refusal("[model]\nzzzzzzzzzzzz = 1\n", "unknown key", NULL);
    CHECK(strstr(rlvr_error_last(), "did you mean") == NULL);
}

static void test_load_missing_file(void) {
    rlvr_config *cfg;
    CHECK(rlvr_config_load(&cfg, "/nonexistent/run.ini", schemas) == RLVR_EIO);
    CHECK(strstr(rlvr_error_last(), "/nonexistent/run.ini") != NULL);
}

static void test_edit_distance(void) {
    CHECK(rlvr_edit_distance("kitten", "sitting") == 3);
    CHECK(rlvr_edit_distance("", "abc") == 3);
    CHECK(rlvr_edit_distance("same", "same") == 0);
}

static void test_log_levels(void) {
    rlvr_log_level level;
    CHECK_OK(rlvr_log_parse_level("debug", &level));
    CHECK(level == RLVR_LOG_DEBUG);
    CHECK(rlvr_log_parse_level("loud", &level) == RLVR_EINVAL);
    CHECK(rlvr_log_get_level() == RLVR_LOG_WARN); /* quiet by default */
}

int main(void) {
    test_values_and_defaults();
    test_refusals();
    test_load_missing_file();
    test_edit_distance();
    test_log_levels();
    return test_summary("test_config");
}
