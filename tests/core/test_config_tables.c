/* Every library module's key table against itself: each row names a field
 * whose kind fits the key's type and range, the defaults parse, and every
 * name of every ENUM key is accepted by the parser. (The jobs' own tables
 * live in the rlvr program; `rlvr config keys` and the docs test cover
 * them.) */
#include "core/config.h"
#include "enclave/config.h"
#include "envs/config.h"
#include "eval/gate.h"
#include "io/config.h"
#include "mpi/layout.h"
#include "policy/model_config.h"
#include "policy/sampler.h"
#include "rl/config.h"
#include "test.h"

static const rlvr_config_key *const tables[] = {
    rlvr_model_config_keys,   rlvr_optim_config_keys,  rlvr_sampler_config_keys, rlvr_rl_config_keys,
    rlvr_rl_plan_config_keys, rlvr_sandbox_config_keys, rlvr_enclave_config_keys, rlvr_tasks_config_keys,
    rlvr_harness_config_keys, rlvr_layout_config_keys, rlvr_io_config_keys,      rlvr_gate_config_keys,
    NULL,
};

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
