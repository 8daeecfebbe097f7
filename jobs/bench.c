/* jobs/bench.c — `rlvr bench WHAT`: dispatches to the benchmarks in bench/. */
#include "bench/bench.h"
#include "core/error.h"
#include "jobs/args.h"
#include "jobs/commands.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static void usage(FILE *out) {
    fprintf(out, "usage: rlvr bench WHAT [--quick] [--json]\n"
                 "       rlvr bench policy [--quick] [--json] (--model NAME | --checkpoint FILE)\n  WHAT: ");
    for (const rlvr_bench *b = rlvr_benches; b->name; b++) fprintf(out, "%s ", b->name);
    fprintf(out, "\n");
}

int rlvr_cmd_bench(int argc, char **argv) {
    const char *what = NULL;
    rlvr_bench_options opt = {.quick = false, .json_only = false};
    const rlvr_opt opts[] = {
        RLVR_OPT(NULL, RLVR_OPT_STRING, &what, "WHAT", .required = true),
        RLVR_OPT("--quick", RLVR_OPT_FLAG, &opt.quick, NULL),
        RLVR_OPT("--json", RLVR_OPT_FLAG, &opt.json_only, NULL),
        RLVR_OPT("--model", RLVR_OPT_STRING, &opt.model, "NAME"),
        RLVR_OPT("--checkpoint", RLVR_OPT_STRING, &opt.checkpoint, "FILE"),
        {0},
    };
    /* "bench policy" in messages once the benchmark is named */
    char verb[64] = "bench";
    if (argc > 1 && argv[1][0] != '-') snprintf(verb, sizeof verb, "bench %.40s", argv[1]);
    int parsed = rlvr_args_parse(verb, opts, usage, argc, argv);
    if (parsed != RLVR_ARGS_CONTINUE) return parsed;
    const rlvr_bench *b = rlvr_benches;
    while (b->name && strcmp(what, b->name) != 0) b++;
    if (!b->name) return rlvr_args_error("bench", usage, "unknown benchmark \"%s\"", what);
    bool policy = b->run == rlvr_bench_policy;
    if (!policy && (opt.model || opt.checkpoint))
        return rlvr_args_error(verb, usage, "--model and --checkpoint are options of rlvr bench policy");
    if (opt.model && opt.checkpoint)
        return rlvr_args_error(verb, usage, "--model and --checkpoint exclude each other");
    rlvr_model_config named;
    if (opt.model && rlvr_bench_policy_model_config(opt.model, &named) < 0)
        return rlvr_args_error(verb, usage, "%s", rlvr_error_last());
    int rc = b->run(&opt);
    return rc < 0 ? rlvr_cmd_fail(verb, rc) : RLVR_EXIT_OK;
}
