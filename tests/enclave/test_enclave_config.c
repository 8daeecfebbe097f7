/* tests/enclave/test_enclave_config.c — the [sandbox] and [enclave]
 * sections: defaults, values, range errors, and docs/CONFIG.md listing every
 * key under its section's heading. */
#include "test.h"

#include "enclave/config.h"
#include "enclave/fsutil.h"

static const rlvr_config_key *const schemas[] = {rlvr_sandbox_config_keys, rlvr_enclave_config_keys, NULL};

static void test_defaults(void) {
    rlvr_config *cfg = NULL;
    CHECK_OK(rlvr_config_parse(&cfg, "", "empty.ini", schemas));
    if (!cfg) return;
    rlvr_sandbox_limits l, d;
    memset(&l, 0x5a, sizeof l); /* garbage in: the reader must set every byte the defaults set */
    memset(&d, 0, sizeof d);
    rlvr_sandbox_limits_default(&d);
    CHECK_OK(rlvr_sandbox_limits_from_config(cfg, &l));
    CHECK(memcmp(&l, &d, sizeof l) == 0); /* the table's defaults are the library's */
    rlvr_sandbox_host_options h, hd = RLVR_SANDBOX_HOST_OPTIONS_INIT;
    CHECK_OK(rlvr_sandbox_host_options_from_config(cfg, &h));
    CHECK(h.overlay == hd.overlay && h.landlock == hd.landlock && h.root_uid == hd.root_uid && h.scratch_dir == NULL);
    CHECK(strcmp(h.system_paths, RLVR_SANDBOX_SYSTEM_PATHS) == 0);
    rlvr_enclave_settings e;
    CHECK_OK(rlvr_enclave_settings_from_config(cfg, &e));
    CHECK(e.consensus_runs == 3 && e.quarantine_runs == 30 && e.quarantine_max_share == 0.25);
    CHECK(e.max_patch_bytes == 512 * 1024 && e.max_patch_files == 64 && !e.fresh_enclaves);
    CHECK(e.limits.wall_s == 120 && e.limits.cpu_s == 120 && e.limits.memory_bytes == d.memory_bytes);
    rlvr_config_free(cfg);
}

static void test_values(void) {
    const char *text = "[sandbox]\nwall_time_s = 5\nmemory_mb = 256\nprocesses = 16\noutput_kb = 64\n"
                       "overlay = false\nscratch_dir = /var/tmp\nuid = 4000\n"
                       "[enclave]\nwall_time_s = 30\nconsensus_runs = 5\nmax_patch_kb = 64\nfresh_enclaves = yes\n";
    rlvr_config *cfg = NULL;
    CHECK_OK(rlvr_config_parse(&cfg, text, "run.ini", schemas));
    if (!cfg) return;
    rlvr_sandbox_limits l;
    CHECK_OK(rlvr_sandbox_limits_from_config(cfg, &l));
    CHECK(l.wall_s == 5 && l.memory_bytes == 256 << 20 && l.processes == 16 && l.output_bytes == 64 << 10);
    rlvr_sandbox_host_options h;
    CHECK_OK(rlvr_sandbox_host_options_from_config(cfg, &h));
    CHECK(!h.overlay && strcmp(h.scratch_dir, "/var/tmp") == 0 && h.root_uid == 4000);
    rlvr_enclave_settings e;
    CHECK_OK(rlvr_enclave_settings_from_config(cfg, &e));
    CHECK(e.limits.wall_s == 30 && e.limits.memory_bytes == 256 << 20 && e.consensus_runs == 5);
    CHECK(e.max_patch_bytes == 64 * 1024 && e.fresh_enclaves);
    rlvr_config_free(cfg);

    const char *bad[] = {"[sandbox]\nprocesses = 0\n", "[enclave]\nconsensus_runs = 65\n",
                         "[enclave]\nquarantine_max_share = 1.5\n", "[sandbox]\nwall_tme_s = 5\n",
                         "[sandbox]\noverlay = maybe\n"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cfg = NULL;
        CHECK_MSG(rlvr_config_parse(&cfg, bad[i], "bad.ini", schemas) == RLVR_ECONFIG, "accepted: %s", bad[i]);
        rlvr_config_free(cfg);
    }
    cfg = NULL;
    CHECK(rlvr_config_parse(&cfg, "[sandbox]\nwall_tme_s = 5\n", "bad.ini", schemas) == RLVR_ECONFIG);
    CHECK(strstr(rlvr_error_last(), "wall_time_s") != NULL); /* did you mean */
    CHECK_OK(rlvr_config_parse(&cfg, "[sandbox]\nscratch_dir = relative\n", "rel.ini", schemas));
    rlvr_sandbox_host_options h2;
    CHECK(rlvr_sandbox_host_options_from_config(cfg, &h2) == RLVR_ECONFIG);
    rlvr_config_free(cfg);
}

/* Every key appears in docs/CONFIG.md as "| `key` |" under "## [section]". */
static void test_docs(void) {
    char path[4096];
    char *doc = NULL;
    CHECK_OK(rlvr_fs_read_file(test_source_path(path, sizeof path, "docs/CONFIG.md"), &doc, NULL));
    if (!doc) return;
    const rlvr_config_key *tables[] = {rlvr_sandbox_config_keys, rlvr_enclave_config_keys};
    for (int t = 0; t < 2; t++) {
        char heading[64];
        snprintf(heading, sizeof heading, "\n## [%s]", tables[t][0].section);
        const char *start = strstr(doc, heading);
        CHECK_MSG(start != NULL, "docs/CONFIG.md has no \"%s\" section", heading + 1);
        if (!start) continue;
        const char *end = strstr(start + 1, "\n## ");
        size_t span = end ? (size_t)(end - start) : strlen(start);
        for (const rlvr_config_key *k = tables[t]; k->key; k++) {
            char row[96];
            snprintf(row, sizeof row, "| `%s` |", k->key);
            const char *hit = strstr(start, row);
            CHECK_MSG(hit && (size_t)(hit - start) < span, "docs/CONFIG.md [%s] does not document %s", k->section,
                      k->key);
        }
    }
    free(doc);
}

int main(void) {
    test_defaults();
    test_values();
    test_docs();
    return test_summary("test_enclave_config");
}
