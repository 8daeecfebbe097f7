/* tests/policy/rope_freqs.c — prints the RoPE inverse frequencies rlvr uses,
 * one per line (%.17g), for check_rope_llama3.py to hold against
 * transformers.
 *
 * usage: rope_freqs THETA HEAD_DIM FACTOR LOW HIGH ORIGINAL_MAX_SEQ
 * (Llama-3 scaling with those parameters). */
#include "policy/kernels.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: %s THETA HEAD_DIM FACTOR LOW HIGH ORIGINAL_MAX_SEQ\n", argv[0]);
        return 2;
    }
    float theta = strtof(argv[1], NULL);
    int head_dim = atoi(argv[2]);
    rlvr_rope_scaling sc = {RLVR_ROPE_SCALING_LLAMA3, strtof(argv[3], NULL), strtof(argv[4], NULL),
                            strtof(argv[5], NULL), atoi(argv[6])};
    for (int i = 0; i < head_dim / 2; i++) printf("%.17g\n", rope_inv_freq(i, head_dim, theta, &sc));
    return 0;
}
