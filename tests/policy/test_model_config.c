/* tests/policy/test_model_config.c — [model] and [optim] from INI text:
 * values and defaults reach the structs, cross-key errors name the key and
 * line, and docs/CONFIG.md documents every key under its section. */
#include "core/config.h"
#include "policy/model_config.h"
#include "test.h"

static const rlvr_config_key *const schemas[] = {rlvr_model_config_keys, rlvr_optim_config_keys, NULL};

/* [model] of `text`, which must parse and read; NULL config when it does not. */
static rlvr_config *read_model_ok(const char *text, rlvr_model_config *mc) {
    rlvr_config *cfg = NULL;
    CHECK_OK(rlvr_config_parse(&cfg, text, "run.ini", schemas));
    if (cfg) CHECK_OK(rlvr_model_config_read(mc, cfg));
    return cfg;
}

static void test_values(void) {
    const char *text = "[model]\nvocab = 300\nd_model = 64\nn_heads = 4\nn_kv_heads = 2\ntie_embeddings = no\n"
                       "init_seed = 99\n[optim]\nlr = 1e-3\nschedule = constant\nwarmup_steps = 0\n";
    rlvr_model_config mc;
    rlvr_config *cfg = read_model_ok(text, &mc);
    if (!cfg) return;
    rlvr_adamw_config oc;
    CHECK_OK(rlvr_adamw_config_read(&oc, cfg));
    CHECK(mc.vocab == 300 && mc.d_model == 64 && mc.n_heads == 4 && mc.n_kv_heads == 2);
    CHECK(!mc.tie_embeddings && mc.init_seed == 99);
    CHECK(mc.n_layers == 4 && mc.d_ff == 688 && mc.max_seq == 2048); /* defaults */
    CHECK_NEAR(mc.rope_theta, 10000.0, 0.0);
    CHECK_NEAR(mc.norm_eps, 1e-5, 1e-12);
    CHECK_NEAR(mc.init_std, 0.02, 1e-9);
    CHECK_NEAR(oc.lr, 1e-3, 1e-10);
    CHECK(oc.schedule == RLVR_LR_CONSTANT && oc.warmup_steps == 0 && oc.total_steps == 1000);
    CHECK_NEAR(oc.beta2, 0.95, 1e-7);
    CHECK_NEAR(oc.grad_clip, 1.0, 0.0);
    CHECK(!mc.qkv_bias && mc.rope_scaling.kind == RLVR_ROPE_SCALING_NONE);
    CHECK(mc.rope_scaling.factor == 0.0f && mc.rope_scaling.original_max_seq == 0); /* none: stored as zeros */
    CHECK_OK(rlvr_model_config_validate(&mc));
    rlvr_config_free(cfg);
}

/* qkv_bias and Llama-3 scaling, its parameters' defaults those of Llama 3.1. */
static void test_qwen_llama3_keys(void) {
    const char *text = "[model]\nqkv_bias = true\nrope_scaling = llama3\nrope_scaling_factor = 32\n"
                       "rope_theta = 500000\n";
    rlvr_model_config mc;
    rlvr_config *cfg = read_model_ok(text, &mc);
    if (!cfg) return;
    CHECK(mc.qkv_bias && mc.rope_scaling.kind == RLVR_ROPE_SCALING_LLAMA3);
    CHECK(mc.rope_scaling.factor == 32.0f && mc.rope_scaling.low_freq_factor == 1.0f &&
          mc.rope_scaling.high_freq_factor == 4.0f && mc.rope_scaling.original_max_seq == 8192);
    rlvr_config_free(cfg);
    rlvr_model_config bad = mc;
    bad.rope_scaling.high_freq_factor = 1.0f;
    CHECK(rlvr_model_config_validate(&bad) == RLVR_EINVAL);
    bad = mc;
    bad.rope_scaling.factor = 0.0f;
    CHECK(rlvr_model_config_validate(&bad) == RLVR_EINVAL);
    bad = mc;
    bad.rope_scaling.original_max_seq = 0;
    CHECK(rlvr_model_config_validate(&bad) == RLVR_EINVAL);
    bad = mc;
    bad.rope_scaling.kind = (rlvr_rope_scaling_kind)2;
    CHECK(rlvr_model_config_validate(&bad) == RLVR_EINVAL);
}

/* A cross-key error names the file, the key's line and the key. */
static void expect_error(const char *text, const char *key, const char *line_tag) {
    rlvr_config *cfg = NULL;
    CHECK_OK(rlvr_config_parse(&cfg, text, "bad.ini", schemas));
    if (!cfg) return;
    rlvr_model_config mc;
    rlvr_adamw_config oc;
    int rc = rlvr_model_config_read(&mc, cfg);
    if (rc == 0) rc = rlvr_adamw_config_read(&oc, cfg);
    CHECK(rc == RLVR_ECONFIG);
    const char *msg = rlvr_error_last();
    CHECK_MSG(strstr(msg, key) && strstr(msg, line_tag) && strstr(msg, "bad.ini"), "message: %s", msg);
    rlvr_config_free(cfg);
}

static void test_errors(void) {
    expect_error("[model]\nd_model = 64\nn_heads = 5\n", "n_heads", ":3:");
    expect_error("[model]\nd_model = 60\nn_heads = 20\n", "n_heads", ":3:"); /* head size 3 is odd */
    expect_error("[model]\nn_heads = 8\nn_kv_heads = 3\n", "n_kv_heads", ":3:");
    expect_error("[optim]\nwarmup_steps = 50\ntotal_steps = 50\n", "warmup_steps", ":2:");
    expect_error("[model]\nrope_scaling = llama3\nrope_low_freq_factor = 4\nrope_high_freq_factor = 4\n",
                 "rope_high_freq_factor", ":4:");
    rlvr_config *cfg = NULL;
    CHECK(rlvr_config_parse(&cfg, "[optim]\nschedule = linear\n", "bad.ini", schemas) == RLVR_ECONFIG);
    CHECK(rlvr_config_parse(&cfg, "[model]\nn_layer = 2\n", "bad.ini", schemas) == RLVR_ECONFIG);
    CHECK(strstr(rlvr_error_last(), "n_layers") != NULL); /* did you mean */
}

/* Every key appears as `key` in a table row after its "## [section]" heading. */
static void test_documented(void) {
    char path[4096];
    FILE *f = fopen(test_source_path(path, sizeof path, "docs/CONFIG.md"), "rb");
    CHECK_MSG(f != NULL, "cannot open %s", path);
    if (!f) return;
    static char doc[1 << 20];
    size_t n = fread(doc, 1, sizeof doc - 1, f);
    doc[n] = '\0';
    fclose(f);
    for (int t = 0; schemas[t]; t++)
        for (const rlvr_config_key *k = schemas[t]; k->key; k++) {
            char heading[64], cell[96];
            snprintf(heading, sizeof heading, "## [%s]", k->section);
            snprintf(cell, sizeof cell, "| `%s` |", k->key);
            const char *sec = strstr(doc, heading);
            const char *next = sec ? strstr(sec + 1, "\n## ") : NULL;
            const char *row = sec ? strstr(sec, cell) : NULL;
            CHECK_MSG(row && (!next || row < next), "docs/CONFIG.md: [%s] %s is not documented", k->section, k->key);
        }
}

int main(void) {
    test_values();
    test_qwen_llama3_keys();
    test_errors();
    test_documented();
    return test_summary("test_model_config");
}
