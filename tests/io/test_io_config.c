/* [run], [checkpoint], [shards]: defaults, derived paths, refusals, and
 * every key documented in docs/CONFIG.md with the code's default. */
#include "io/config.h"
#include "test.h"

static const rlvr_config_key *const schemas[] = {rlvr_io_config_keys, NULL};

static void test_defaults_and_paths(void) {
    rlvr_config *cfg = NULL;
    CHECK_OK(rlvr_config_parse(&cfg, "[run]\nname = exp-7\nout_dir = /scratch/r\n[checkpoint]\nevery = 10\n"
                                     "keep_every = 100\n[shards]\ncompression = 4\n",
                               "t.ini", schemas));
    if (!cfg) return;
    rlvr_io_settings s;
    CHECK_OK(rlvr_io_settings_read(&s, cfg));
    CHECK(strcmp(s.name, "exp-7") == 0 && s.seed == 1234);
    CHECK(strcmp(s.run_dir, "/scratch/r/exp-7") == 0);
    CHECK(strcmp(s.shard_dir, "/scratch/r/exp-7/shards") == 0);
    CHECK(strcmp(s.checkpoint_dir, "/scratch/r/exp-7/checkpoints") == 0);
    CHECK(strcmp(s.metrics_path, "/scratch/r/exp-7/metrics.h5") == 0);
    CHECK(strcmp(s.manifest_path, "/scratch/r/exp-7/manifest.h5") == 0);
    CHECK(s.checkpoint_every == 10 && s.checkpoint_keep == 3 && s.shards && s.shard_compression == 4);
    CHECK(!rlvr_io_checkpoint_due(&s, 0) && !rlvr_io_checkpoint_due(&s, 5) && rlvr_io_checkpoint_due(&s, 20));
    rlvr_shard_options so = rlvr_io_shard_options(&s);
    CHECK(so.version == RLVR_SHARD_OPTIONS_VERSION && so.compression == 4 && so.chunk_tokens == 65536);
    rlvr_checkpoint_options co = rlvr_io_checkpoint_options(&s, cfg, 200, 201);
    CHECK(co.step == 200 && co.policy_version == 201 && co.mark && co.keep_last == 3);
    CHECK(co.config_hash == rlvr_config_hash(cfg) && strcmp(co.config_text, rlvr_config_text(cfg)) == 0);
    CHECK(!rlvr_io_checkpoint_options(&s, cfg, 210, 211).mark);
    rlvr_config_free(cfg);
}

static void test_refusals(void) {
    rlvr_config *cfg = NULL;
    rlvr_io_settings s;
    CHECK_OK(rlvr_config_parse(&cfg, "[run]\nseed = 3\nname = ../escape\n", "bad.ini", schemas));
    if (cfg) {
        CHECK(rlvr_io_settings_read(&s, cfg) == RLVR_ECONFIG);
        CHECK(strstr(rlvr_error_last(), "bad.ini:3") && strstr(rlvr_error_last(), "name"));
        rlvr_config_free(cfg);
    }
    CHECK(rlvr_config_parse(&cfg, "[shards]\ncompression = 12\n", "bad.ini", schemas) == RLVR_ECONFIG);
    CHECK(rlvr_config_parse(&cfg, "[checkpoint]\nkepe = 2\n", "bad.ini", schemas) == RLVR_ECONFIG);
    CHECK(strstr(rlvr_error_last(), "checkpoint.keep") != NULL);
}

/* Each key appears in its "## [section]" block of docs/CONFIG.md as
 * "| `key` |" with "`default`" on the same row. */
static void test_documented(void) {
    char path[4096];
    test_source_path(path, sizeof path, "docs/CONFIG.md");
    FILE *f = fopen(path, "r");
    CHECK_MSG(f != NULL, "cannot open %s", path);
    if (!f) return;
    static char doc[1 << 17];
    size_t n = fread(doc, 1, sizeof doc - 1, f);
    doc[n] = '\0';
    fclose(f);
    for (const rlvr_config_key *k = rlvr_io_config_keys; k->key; k++) {
        char heading[64], cell[96], def[96];
        snprintf(heading, sizeof heading, "\n## [%s]\n", k->section);
        snprintf(cell, sizeof cell, "| `%s` |", k->key);
        snprintf(def, sizeof def, "`%s`", k->default_value);
        const char *block = strstr(doc, heading);
        CHECK_MSG(block != NULL, "docs/CONFIG.md has no section [%s]", k->section);
        if (!block) continue;
        const char *end = strstr(block + strlen(heading), "\n## ");
        const char *row = strstr(block, cell);
        CHECK_MSG(row && (!end || row < end), "[%s] %s is not documented", k->section, k->key);
        if (!row || (end && row > end)) continue;
        const char *eol = strchr(row, '\n');
        const char *d = strstr(row, def);
        CHECK_MSG(d && (!eol || d < eol), "[%s] %s: documented default differs from `%s`", k->section, k->key,
                  k->default_value);
    }
}

int main(void) {
    test_defaults_and_paths();
    test_refusals();
    test_documented();
    return test_summary("test_io_config");
}
