/* jobs/config.c — `rlvr config check FILE` and `rlvr config keys [--markdown]`. */
#include "core/config.h"
#include "jobs/commands.h"
#include "jobs/schemas.h"

#include <stdio.h>
#include <string.h>

static const char *type_name(const rlvr_config_key *k) {
    switch (k->type) {
    case RLVR_CFG_INT: return "int";
    case RLVR_CFG_FLOAT: return "float";
    case RLVR_CFG_BOOL: return "bool";
    case RLVR_CFG_STRING: return "string";
    case RLVR_CFG_ENUM: return k->choices;
    }
    return "?";
}

static int print_keys(bool markdown) {
    const char *section = "";
    for (size_t t = 0; rlvr_all_config_schemas[t]; t++) {
        for (const rlvr_config_key *k = rlvr_all_config_schemas[t]; k->key; k++) {
            if (markdown && strcmp(section, k->section) != 0) {
                printf("\n## [%s]\n\n| key | type | default | meaning |\n|---|---|---|---|\n", k->section);
                section = k->section;
            }
            if (markdown)
                printf("| `%s` | %s | `%s` | %s |\n", k->key, type_name(k), k->default_value, k->doc);
            else
                printf("[%s] %s = %s    ; %s: %s\n", k->section, k->key, k->default_value, type_name(k), k->doc);
        }
    }
    return RLVR_EXIT_OK;
}

static int check_file(const char *path) {
    rlvr_config *cfg;
    int rc = rlvr_config_load(&cfg, path, rlvr_all_config_schemas);
    if (rc < 0) return rlvr_cmd_fail("config", rc);
    printf("%s: ok (hash %016llx)\n", path, (unsigned long long)rlvr_config_hash(cfg));
    rlvr_config_free(cfg);
    return RLVR_EXIT_OK;
}

int rlvr_cmd_config(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "check") == 0) return check_file(argv[2]);
    if (argc >= 2 && strcmp(argv[1], "keys") == 0) {
        bool markdown = argc == 3 && strcmp(argv[2], "--markdown") == 0;
        if (argc > 3 || (argc == 3 && !markdown)) goto usage;
        return print_keys(markdown);
    }
usage:
    fprintf(stderr, "usage: rlvr config check FILE | rlvr config keys [--markdown]\n");
    return RLVR_EXIT_USAGE;
}
