#include "bench/bench.h"

#include <stddef.h>

/* One line per benchmark; each lives in its own bench_<name>.c. */
const rlvr_bench rlvr_benches[] = {
    {"policy", rlvr_bench_policy},
    {"io", rlvr_bench_io},
    {"enclave", rlvr_bench_enclave},
    {"harness", rlvr_bench_harness},
    {"pipeline", rlvr_bench_pipeline},
    {NULL, NULL},
};
