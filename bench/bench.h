/* bench/bench.h — benchmarks behind `rlvr bench WHAT`.
 *
 * Every benchmark prints one JSON object per line to stdout (fields at least
 * "bench" and "config", its figures, a ceiling measured in the same run and
 * their "ratio"), then, unless json_only, a short human table. */
#ifndef RLVR_BENCH_BENCH_H
#define RLVR_BENCH_BENCH_H

#include "policy/model.h"

#include <stdbool.h>

typedef struct {
    bool quick;      /* smaller sizes, for CI and the quickstart */
    bool json_only;  /* no human table */
    /* policy only: instead of the built-in sizes, one model at another size:
     * named (rlvr_bench_policy_models; random weights of that shape) or a
     * checkpoint's (its configuration and its weights); NULL = the built-in
     * sizes */
    const char *model;
    const char *checkpoint;
} rlvr_bench_options;

typedef struct {
    const char *name;
    int (*run)(const rlvr_bench_options *opt);
} rlvr_bench;

/* The benchmarks, one per bench/bench_<name>.c. */
int rlvr_bench_policy(const rlvr_bench_options *opt);
/* The names `rlvr bench policy --model` takes, NULL-terminated. */
extern const char *const rlvr_bench_policy_models[];
/* The configuration `--model name` benches; RLVR_EINVAL listing the known
 * names for any other name. */
int rlvr_bench_policy_model_config(const char *name, rlvr_model_config *out);
int rlvr_bench_io(const rlvr_bench_options *opt);
int rlvr_bench_enclave(const rlvr_bench_options *opt);
int rlvr_bench_harness(const rlvr_bench_options *opt);
int rlvr_bench_pipeline(const rlvr_bench_options *opt);

/* Terminated by {NULL}. Defined in bench/bench.c. */
extern const rlvr_bench rlvr_benches[];

#endif
