/* Every library module's key table against itself: each row names a field
 * whose kind fits the key's type and range, the defaults parse, and every
 * name of every ENUM key is accepted by the parser. The tables are those of
 * rlvr_train_schemas (train/config.h), which lists every library module's;
 * the command's own ([slurm]) lives in the rlvr program, where
 * `rlvr config keys` and the docs test cover it. */
#include "core/config.h"
#include "train/config.h"
#include "test.h"

static const rlvr_config_key *const *const tables = rlvr_train_schemas;

static void test_rows(void) {
    for (size_t t = 0; tables[t]; t++) {
        CHECK_MSG(rlvr_config_table_check(tables[t]) == 0, "%s", rlvr_error_last());
        for (const rlvr_config_key *k = tables[t]; k->key; k++)
            CHECK_MSG(k->field != RLVR_FIELD_NONE, "[%s] %s fills no field", k->section, k->key);
    }
}

static void test_enum_choices_parse(void) {
    for (size_t t = 0; tables[t]; t++) {
        for (const rlvr_config_key *k = tables[t]; k->key; k++) {
            if (k->type != RLVR_CFG_ENUM) continue;
            char name[64], text[256];
            int i = 0;
            for (; rlvr_config_enum_name(tables[t], k->section, k->key, i, name, sizeof name); i++) {
                snprintf(text, sizeof text, "[%s]\n%s = %s\n", k->section, k->key, name);
                rlvr_config *cfg = NULL;
                CHECK_MSG(rlvr_config_parse(&cfg, text, "t.ini", tables) == 0, "%s", rlvr_error_last());
                CHECK(rlvr_config_enum_index(k, name) == i);
                rlvr_config_free(cfg);
            }
            CHECK_MSG(i >= 2, "[%s] %s has %d choices", k->section, k->key, i);
        }
    }
}

int main(void) {
    test_rows();
    test_enum_choices_parse();
    return test_summary("test_config_tables");
}
