/* bench/latency.c — bench/latency.h. */
#include "bench/latency.h"
#include "core/rng.h"

#include <math.h>

double rlvr_latency_draw(const rlvr_latency_law *law, uint32_t step, uint32_t sequence, int32_t turn) {
    double u1 = rlvr_rng_uniform(law->seed, RLVR_RNG_TEST, step, sequence, 2u * (uint32_t)turn);
    double u2 = rlvr_rng_uniform(law->seed, RLVR_RNG_TEST, step, sequence, 2u * (uint32_t)turn + 1u);
    double z = sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * 3.14159265358979323846 * u2);
    double l = law->median_s * exp(law->sigma * z);
    return l < law->cap_s ? l : law->cap_s;
}
