/* jobs/bench.c — `rlvr bench WHAT`: dispatches to the benchmarks in bench/. */
#include "bench/bench.h"
#include "jobs/commands.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Whether `rlvr bench policy --model` knows the name (else lists the names). */
static bool known_model(const char *name) {
    for (const char *const *m = rlvr_bench_policy_models; *m; m++)
        if (strcmp(*m, name) == 0) return true;
    fprintf(stderr, "rlvr bench policy: unknown model \"%s\"; known:", name);
    for (const char *const *m = rlvr_bench_policy_models; *m; m++) fprintf(stderr, " %s", *m);
    fprintf(stderr, "\n");
    return false;
}

int rlvr_cmd_bench(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: rlvr bench WHAT [--quick] [--json]\n"
                        "       rlvr bench policy [--quick] [--json] (--model NAME | --checkpoint FILE)\n  WHAT: ");
        for (const rlvr_bench *b = rlvr_benches; b->name; b++) fprintf(stderr, "%s ", b->name);
        fprintf(stderr, "\n");
        return RLVR_EXIT_USAGE;
    }
    for (const rlvr_bench *b = rlvr_benches; b->name; b++) {
        if (strcmp(argv[1], b->name) != 0) continue;
        rlvr_bench_options opt = {.quick = false, .json_only = false};
        bool policy = b->run == rlvr_bench_policy;
        for (int i = 2; i < argc; i++) {
            bool valued = policy && (strcmp(argv[i], "--model") == 0 || strcmp(argv[i], "--checkpoint") == 0);
            if (strcmp(argv[i], "--quick") == 0) opt.quick = true;
            else if (strcmp(argv[i], "--json") == 0) opt.json_only = true;
            else if (valued && i + 1 < argc) {
                *(argv[i][2] == 'm' ? &opt.model : &opt.checkpoint) = argv[i + 1];
                i++;
            } else {
                fprintf(stderr, "rlvr bench %s: unknown option or missing value \"%s\" (use --quick, --json%s)\n",
                        b->name, argv[i], policy ? ", --model NAME, --checkpoint FILE" : "");
                return RLVR_EXIT_USAGE;
            }
        }
        if (opt.model && opt.checkpoint) {
            fprintf(stderr, "rlvr bench policy: --model and --checkpoint exclude each other\n");
            return RLVR_EXIT_USAGE;
        }
        if (opt.model && !known_model(opt.model)) return RLVR_EXIT_USAGE;
        int rc = b->run(&opt);
        return rc < 0 ? rlvr_cmd_fail("bench", rc) : RLVR_EXIT_OK;
    }
    fprintf(stderr, "rlvr bench: unknown benchmark \"%s\"\n", argv[1]);
    return RLVR_EXIT_USAGE;
}
