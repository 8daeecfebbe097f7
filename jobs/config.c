/* jobs/config.c — `rlvr config check FILE` and `rlvr config keys [--markdown]`. */
#include "core/config.h"
#include "jobs/args.h"
#include "jobs/commands.h"
#include "jobs/schemas.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *out) { fprintf(out, "usage: rlvr config check FILE | rlvr config keys [--markdown]\n"); }

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

static int print_keys(int argc, char **argv) {
    bool markdown = false;
    const rlvr_opt opts[] = {RLVR_OPT("--markdown", RLVR_OPT_FLAG, &markdown, NULL), {0}};
    int parsed = rlvr_args_parse("config keys", opts, usage, argc, argv);
    if (parsed != RLVR_ARGS_CONTINUE) return parsed;
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

static int check_file(int argc, char **argv) {
    const char *path = NULL;
    const rlvr_opt opts[] = {RLVR_OPT(NULL, RLVR_OPT_STRING, &path, "FILE", .required = true), {0}};
    int parsed = rlvr_args_parse("config check", opts, usage, argc, argv);
    if (parsed != RLVR_ARGS_CONTINUE) return parsed;
    rlvr_config *cfg;
    int rc = rlvr_config_load(&cfg, path, rlvr_all_config_schemas);
    if (rc < 0) return rlvr_cmd_fail("config", rc);
    printf("%s: ok (hash %016llx)\n", path, (unsigned long long)rlvr_config_hash(cfg));
    rlvr_config_free(cfg);
    return RLVR_EXIT_OK;
}

int rlvr_cmd_config(int argc, char **argv) {
    const char *sub = argc > 1 ? argv[1] : "";
    if (strcmp(sub, "check") == 0) return check_file(argc - 1, argv + 1);
    if (strcmp(sub, "keys") == 0) return print_keys(argc - 1, argv + 1);
    if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0) {
        usage(stdout);
        return RLVR_EXIT_OK;
    }
    return argc > 1 ? rlvr_args_error("config", usage, "unknown subcommand \"%s\"", sub)
                    : rlvr_args_error("config", usage, "missing the subcommand (check or keys)");
}
