/* train/config.h: the [sft], [train], [tokenizer] and [quickstart] readers
 * fill their structs with the file's values or the defaults, and the checks
 * that span keys fail with their messages. */
#include "core/config.h"
#include "core/error.h"
#include "train/config.h"
#include "test.h"

static rlvr_config *parse(const char *text) {
    rlvr_config *cfg = NULL;
    CHECK_MSG(rlvr_config_parse(&cfg, text, "t.ini", rlvr_train_schemas) == 0, "%s", rlvr_error_last());
    return cfg;
}

static void test_defaults(void) {
    rlvr_config *cfg = parse("");
    rlvr_sft_config s;
    rlvr_train_config t;
    rlvr_tokenizer_config k;
    rlvr_quickstart_config q;
    CHECK_OK(rlvr_sft_config_read(&s, cfg));
    CHECK(s.steps == 300 && s.batch_sequences == 16 && s.warmup_steps == 20 && s.extra_demos == 0);
    CHECK(s.lr == 1e-3 && s.min_lr_ratio == 0.1 && s.temperature == 1.0 && s.recovery_share == 0);
    CHECK(s.pool_demos);
    CHECK_OK(rlvr_train_config_read(&t, cfg));
    CHECK(t.steps == 100 && strcmp(t.init, "sft") == 0 && t.max_staleness == 0 && t.verify_cache);
    CHECK(t.verify_threads == 0 && t.verify_enclaves == 64 && !t.promoted_only);
    CHECK_OK(rlvr_tokenizer_config_read(&k, cfg));
    CHECK(!k.bpe && k.merges == 1024 && k.corpus_demos == 256);
    CHECK_OK(rlvr_quickstart_config_read(&q, cfg));
    CHECK(q.eval_samples == 4);
    rlvr_config_free(cfg);
}

static void test_values(void) {
    rlvr_config *cfg = parse("[sft]\nsteps = 7\nbatch_sequences = 3\nlr = 0.5\nwarmup_steps = 2\n"
                             "min_lr_ratio = 0.25\ntemperature = 2\nextra_demos = 9\npool_demos = false\n"
                             "recovery_share = 0.5\n"
                             "[train]\nsteps = 11\ninit = scratch\nmax_staleness = 2\nrollout_policy = promoted\n"
                             "verify_cache = no\nverify_threads = 5\nverify_enclaves = 6\n"
                             "[tokenizer]\nkind = bpe\nmerges = 12\ncorpus_demos = 13\n"
                             "[quickstart]\neval_samples = 14\n");
    rlvr_sft_config s;
    rlvr_train_config t;
    rlvr_tokenizer_config k;
    rlvr_quickstart_config q;
    CHECK_OK(rlvr_sft_config_read(&s, cfg));
    CHECK(s.steps == 7 && s.batch_sequences == 3 && s.warmup_steps == 2 && s.extra_demos == 9);
    CHECK(s.lr == 0.5 && s.min_lr_ratio == 0.25 && s.temperature == 2 && s.recovery_share == 0.5);
    CHECK(!s.pool_demos);
    CHECK_OK(rlvr_train_config_read(&t, cfg));
    CHECK(t.steps == 11 && strcmp(t.init, "scratch") == 0 && t.max_staleness == 2 && !t.verify_cache);
    CHECK(t.verify_threads == 5 && t.verify_enclaves == 6 && t.promoted_only);
    CHECK_OK(rlvr_tokenizer_config_read(&k, cfg));
    CHECK(k.bpe && k.merges == 12 && k.corpus_demos == 13);
    CHECK_OK(rlvr_quickstart_config_read(&q, cfg));
    CHECK(q.eval_samples == 14);
    rlvr_config_free(cfg);
}

/* One cross-key rule: reading fails with RLVR_ECONFIG and `want` in the message. */
static void check_fails(const char *text, int (*read)(void *, const rlvr_config *), const char *want) {
    rlvr_config *cfg = parse(text);
    union {
        rlvr_sft_config s;
        rlvr_train_config t;
    } o;
    CHECK(read(&o, cfg) == RLVR_ECONFIG);
    CHECK_MSG(strstr(rlvr_error_last(), want) != NULL, "%s", rlvr_error_last());
    rlvr_config_free(cfg);
}

static int read_sft(void *o, const rlvr_config *cfg) { return rlvr_sft_config_read(o, cfg); }
static int read_train(void *o, const rlvr_config *cfg) { return rlvr_train_config_read(o, cfg); }

static void test_cross_key(void) {
    check_fails("[sft]\npool_demos = false\n", read_sft,
                "t.ini:2: [sft] pool_demos: false leaves SFT only the extra_demos tasks, and extra_demos is 0: set "
                "extra_demos, or pool_demos = true");
    check_fails("[train]\nrollout_policy = promoted\n", read_train,
                "t.ini:2: [train] rollout_policy: promoted needs bounded-async mode: set [train] max_staleness to "
                "at least the steps between promotions (synchronous rollouts always use the newest weights)");
    check_fails("[train]\ninit =\n", read_train, "[train] init: must be sft, scratch or a checkpoint path");
}

int main(void) {
    test_defaults();
    test_values();
    test_cross_key();
    return test_summary("test_train_config");
}
