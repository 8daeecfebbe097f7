/* jobs/run.c — the training verbs' command line (jobs/run.h). */
#include "jobs/run.h"

#include "jobs/commands.h"
#include "jobs/schemas.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rlvr_run_open(rlvr_run *r, const char *config_path, const char *out_dir) {
    return rlvr_run_load(r, config_path, out_dir, rlvr_all_config_schemas);
}

bool rlvr_slurm_restarted(void) {
    const char *c = getenv("SLURM_RESTART_COUNT");
    return c && atoi(c) > 0;
}

int rlvr_run_parse_args(rlvr_run_args *a, int argc, char **argv) {
    memset(a, 0, sizeof *a);
    a->resume = rlvr_slurm_restarted();
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) a->out = argv[++i];
        else if (strcmp(argv[i], "--resume") == 0) a->resume = true;
        else if (strcmp(argv[i], "--until-step") == 0 && i + 1 < argc) {
            char *end = NULL;
            long long n = strtoll(argv[++i], &end, 10);
            if (!end || *end || n < 1) {
                fprintf(stderr, "--until-step wants a step number ≥ 1, got '%s'\n", argv[i]);
                return -1;
            }
            a->until_step = n;
        }
        else if (strcmp(argv[i], "--help") == 0) return 1;
        else if (!a->config && argv[i][0] != '-') a->config = argv[i];
        else return -1;
    }
    return a->config ? 0 : -1;
}

int rlvr_run_args_or_usage(rlvr_run_args *a, int argc, char **argv, void (*usage)(FILE *)) {
    int parsed = rlvr_run_parse_args(a, argc, argv);
    if (parsed == 0) return -1;
    usage(parsed > 0 ? stdout : stderr);
    return parsed > 0 ? RLVR_EXIT_OK : RLVR_EXIT_USAGE;
}
