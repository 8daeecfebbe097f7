/* The rl/ configuration sections: defaults load and validate; every refusal
 * names file, line and key and shows the bound; every key is documented in
 * docs/CONFIG.md under its section. */
#include "core/config.h"
#include "rl/config.h"
#include "test.h"

static const rlvr_config_key *const schemas[] = {rlvr_rl_config_keys, rlvr_rl_plan_config_keys, NULL};

static int load(const char *text, rlvr_rl_config *rl, rlvr_plan_inputs *plan) {
    rlvr_config *cfg;
    int rc = rlvr_config_parse(&cfg, text, "t.ini", schemas);
    if (rc < 0) return rc;
    rc = rlvr_rl_config_load(rl, cfg);
    if (rc == 0 && plan) rc = rlvr_rl_plan_inputs_load(plan, cfg);
    rlvr_config_free(cfg);
    return rc;
}

static void refused(const char *text, const char *where, const char *bound) {
    rlvr_rl_config rl;
    rlvr_plan_inputs plan;
    int rc = load(text, &rl, &plan);
    CHECK_MSG(rc == RLVR_ECONFIG, "accepted:\n%s", text);
    CHECK_MSG(strstr(rlvr_error_last(), where) != NULL, "message \"%s\" lacks \"%s\"", rlvr_error_last(), where);
    if (bound)
        CHECK_MSG(strstr(rlvr_error_last(), bound) != NULL, "message \"%s\" lacks \"%s\"", rlvr_error_last(),
                  bound);
}

static void test_defaults(void) {
    rlvr_rl_config rl;
    rlvr_plan_inputs plan;
    CHECK_OK(load("", &rl, &plan));
    CHECK(rl.reward.length_penalty == RLVR_LENGTH_THRESHOLD && rl.reward.truncation == RLVR_TRUNCATION_FAIL);
    CHECK(rl.grpo.group_size == 8 && rl.grpo.advantage == RLVR_ADV_STD);
    CHECK(rl.grpo.objective.aggregation == RLVR_AGG_TOKENS && rl.grpo.objective.clip_high > rl.grpo.objective.clip_low);
    CHECK_OK(rlvr_rl_objective_options_check(&rl.grpo.objective));
    CHECK(rl.entropy.adaptive && !rl.credit.mc && rl.repetition.enabled);
    CHECK(plan.group_size == 8 && plan.n_compare == 1 && plan.compare_group_sizes[0] == 16);

    const char *text = "[reward]\nlength_penalty = linear\nformat_weight = 0.1\nlength_weight = 0.2\n"
                       "truncation = exclude\noutcome = partial\n"
                       "[grpo]\ngroup_size = 16\nadvantage = loo\naggregation = constant\nnormaliser = 8192\n"
                       "clip_low = 0.1\nclip_high = 0.3\nis_cap = 1.5\nkl_beta = 0.01\n"
                       "[credit]\nmode = mc\nforks = 4\n[difficulty]\nmax_group_size = 16\n"
                       "[plan]\ncompare_group_sizes = 8, 32 64\n";
    CHECK_OK(load(text, &rl, &plan));
    CHECK(rl.reward.length_penalty == RLVR_LENGTH_LINEAR && rl.reward.truncation == RLVR_TRUNCATION_EXCLUDE);
    CHECK(rl.reward.outcome == RLVR_OUTCOME_PARTIAL);
    CHECK(rl.grpo.group_size == 16 && rl.grpo.advantage == RLVR_ADV_LOO);
    CHECK(rl.grpo.objective.aggregation == RLVR_AGG_CONSTANT && rl.grpo.objective.normaliser == 8192);
    CHECK(rl.credit.mc && rl.credit.forks == 4);
    CHECK(plan.n_compare == 3 && plan.compare_group_sizes[2] == 64 && plan.forks == 4);
    /* the outcome kinds: binary by default */
    CHECK_OK(load("[reward]\noutcome = fail_to_pass\n", &rl, NULL));
    CHECK(rl.reward.outcome == RLVR_OUTCOME_FAIL_TO_PASS);
    CHECK_OK(load("", &rl, NULL));
    CHECK(rl.reward.outcome == RLVR_OUTCOME_BINARY);
    refused("[reward]\noutcome = f2p\n", "t.ini:2: [reward] outcome", "fail_to_pass");
}

static void test_refusals(void) {
    /* short wrong vs long correct, linear penalty */
    refused("[reward]\nlength_penalty = linear\nformat_weight = 0.6\nlength_weight = 0.5\n",
            "t.ini:4: [reward] length_weight:", "0.6 + 0.5 = 1.1 must be < 1");
    refused("[reward]\nlength_penalty = none\nformat_weight = 1\n", "t.ini:3: [reward] format_weight:", "< 1");
    refused("[reward]\nformat_weight = 1\nlength_slope = 1\n", "[reward] format_weight:", "must be < 1");
    /* threshold penalty: γ·(T_max − T_budget) ≥ 1 + λ_fmt */
    refused("[reward]\nlength_penalty = threshold\nformat_weight = 0\nmax_tokens = 4096\nlength_budget = 3072\n"
            "length_slope = 0.0005\n",
            "t.ini:6: [reward] length_slope:", "= 0.512 must be >= 1 + format_weight = 1");
    refused("[reward]\nmax_tokens = 1000\nlength_budget = 990\nlength_slope = 0.1\n",
            "[reward] length_slope:", "= 1 must be >= 1 + format_weight = 1.05");
    refused("[reward]\nmax_tokens = 1000\nlength_budget = 1000\n", "t.ini:3: [reward] length_budget:",
            "[0, max_tokens = 1000)");
    /* grpo */
    refused("[grpo]\nclip_low = 0.3\nclip_high = 0.2\n", "t.ini:3: [grpo] clip_high:", "below clip_low");
    refused("[grpo]\nclip_high = 0.5\nis_cap = 1.2\n", "t.ini:3: [grpo] is_cap:", ">= 1 + clip_high = 1.5");
    refused("[grpo]\naggregation = constant\n", "[grpo] normaliser (default):", "normaliser > 0");
    refused("[grpo]\nnormaliser = 100\n", "t.ini:2: [grpo] normaliser:", "only with aggregation = constant");
    /* entropy */
    refused("[entropy]\ntarget_low = 0.9\ntarget_high = 0.5\n", "t.ini:3: [entropy] target_high:", "below");
    refused("[entropy]\ncoef = 0.5\ncoef_max = 0.1\n", "t.ini:2: [entropy] coef:", "[coef_min, coef_max]");
    refused("[entropy]\ncoef = 0\ncoef_min = 0.2\ncoef_max = 0.1\n", "[entropy] coef_max:", "<= coef_max");
    /* credit, difficulty, dynamic sampling, repetition */
    refused("[credit]\nmode = mc\nmax_branch_points = 0\n", "t.ini:3: [credit] max_branch_points:", "mode = mc");
    refused("[difficulty]\nband_low = 0.8\nband_high = 0.2\n", "t.ini:3: [difficulty] band_high:", "band_low");
    refused("[grpo]\ngroup_size = 64\n[difficulty]\nmax_group_size = 32\n",
            "t.ini:4: [difficulty] max_group_size:", "below [grpo] group_size = 64");
    refused("[repetition]\nngram = 64\nwindow = 32\n", "t.ini:3: [repetition] window:", "[ngram = 64");
    /* plan */
    refused("[plan]\ncompare_group_sizes = 8, x\n", "t.ini:2: [plan] compare_group_sizes:", "list of group sizes");
    refused("[plan]\ncompare_group_sizes = 1\n", "[plan] compare_group_sizes:", "[2, 1024]");
    refused("[plan]\ncompare_group_sizes = 2 3 4 5 6 7 8 9\n", "[plan] compare_group_sizes:", "at most 7");
    refused("[plan]\nmodel_s_per_turn = 0\ntool_s_per_turn = 0\nverify_s = 0\n", "t.ini:4: [plan] verify_s:",
            "no time");
    /* schema level: unknown keys with a suggestion, out-of-range values, bad enums */
    refused("[grpo]\nclip_hi = 0.3\n", "t.ini:2: unknown key \"clip_hi\" in [grpo]", "did you mean grpo.clip_high");
    refused("[grpo]\nclip_low = 1.5\n", "t.ini:2: [grpo] clip_low:", "out of range");
    refused("[reward]\ntruncation = drop\n", "t.ini:2: [reward] truncation:", "fail|exclude");
    refused("[rewards]\nformat_weight = 0.1\n", "t.ini:2: unknown key \"format_weight\" in [rewards]",
            "did you mean reward.format_weight");
}

/* Each key appears as a "| `key` |" row with its default under "## [section]". */
static void test_documented(void) {
    char path[512];
    test_source_path(path, sizeof path, "docs/CONFIG.md");
    FILE *f = fopen(path, "rb");
    CHECK_MSG(f != NULL, "cannot open %s", path);
    if (!f) return;
    static char doc[1 << 20];
    size_t n = fread(doc, 1, sizeof doc - 1, f);
    doc[n] = '\0';
    fclose(f);
    for (int t = 0; schemas[t]; t++)
        for (const rlvr_config_key *k = schemas[t]; k->key; k++) {
            char heading[64], row[96], def[96];
            snprintf(heading, sizeof heading, "## [%s]\n", k->section);
            snprintf(row, sizeof row, "| `%s` |", k->key);
            snprintf(def, sizeof def, "`%s`", k->default_value);
            const char *sec = strstr(doc, heading);
            CHECK_MSG(sec != NULL, "docs/CONFIG.md has no section %s", heading);
            if (!sec) continue;
            const char *next = strstr(sec + strlen(heading), "\n## ");
            const char *hit = strstr(sec, row);
            CHECK_MSG(hit && (!next || hit < next), "[%s] %s is not documented", k->section, k->key);
            if (!hit) continue;
            const char *eol = strchr(hit, '\n');
            const char *d = strstr(hit, def);
            CHECK_MSG(d && (!eol || d < eol), "[%s] %s: default %s not in its row", k->section, k->key, def);
        }
}

int main(void) {
    test_defaults();
    test_refusals();
    test_documented();
    return test_summary("test_rl_config");
}
