/* jobs/bench.c — `rlvr bench WHAT`: dispatches to the benchmarks in bench/. */
#include "bench/bench.h"
#include "jobs/commands.h"

#include <stdio.h>
#include <string.h>

int rlvr_cmd_bench(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: rlvr bench WHAT [--quick] [--json]\n  WHAT: ");
        for (const rlvr_bench *b = rlvr_benches; b->name; b++) fprintf(stderr, "%s ", b->name);
        fprintf(stderr, "\n");
        return RLVR_EXIT_USAGE;
    }
    for (const rlvr_bench *b = rlvr_benches; b->name; b++) {
        if (strcmp(argv[1], b->name) != 0) continue;
        rlvr_bench_options opt = {.quick = false, .json_only = false};
        for (int i = 2; i < argc; i++) {
            if (strcmp(argv[i], "--quick") == 0) opt.quick = true;
            else if (strcmp(argv[i], "--json") == 0) opt.json_only = true;
            else {
                fprintf(stderr, "rlvr bench %s: unknown option \"%s\" (use --quick, --json)\n", b->name, argv[i]);
                return RLVR_EXIT_USAGE;
            }
        }
        int rc = b->run(&opt);
        return rc < 0 ? rlvr_cmd_fail("bench", rc) : RLVR_EXIT_OK;
    }
    fprintf(stderr, "rlvr bench: unknown benchmark \"%s\"\n", argv[1]);
    return RLVR_EXIT_USAGE;
}
