/* model_logprobs CKPT IDS — loads a checkpoint and prints, as one JSON
 * line, log π(ids[t+1] | ids[0..t]) for every t of the comma-separated
 * token ids at temperature 1 ({"logprobs": [...]}, T − 1 numbers). The
 * reference tests compare it with transformers (check_model_port.py). */
#include "core/error.h"
#include "io/checkpoint.h"
#include "policy/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_ids(const char *text, int32_t **ids, int *n) {
    int cap = 1;
    for (const char *p = text; *p; p++) cap += *p == ',';
    *ids = malloc((size_t)cap * sizeof **ids);
    if (!*ids) return -1;
    *n = 0;
    for (const char *p = text; *p;) {
        char *end;
        (*ids)[(*n)++] = (int32_t)strtol(p, &end, 10);
        if (end == p) return -1;
        p = *end == ',' ? end + 1 : end;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: model_logprobs CKPT ID,ID,...\n");
        return 2;
    }
    int32_t *ids = NULL;
    int n = 0;
    if (parse_ids(argv[2], &ids, &n) < 0 || n < 2) {
        fprintf(stderr, "model_logprobs: bad ids \"%s\"\n", argv[2]);
        return 2;
    }
    rlvr_checkpoint *ck = NULL;
    rlvr_model *m = NULL;
    float *lp = calloc((size_t)n, sizeof *lp);
    int32_t offsets[2] = {0, n};
    rlvr_batch b = {.n_seqs = 1, .offsets = offsets, .tokens = ids};
    int rc = lp ? rlvr_checkpoint_open(&ck, argv[1]) : RLVR_ENOMEM;
    if (rc == 0) rc = rlvr_checkpoint_load_model(ck, &m);
    if (rc == 0) rc = rlvr_model_forward(m, &b, 1.0f, lp, NULL);
    if (rc == 0) {
        printf("{\"logprobs\": [");
        for (int t = 0; t + 1 < n; t++) printf("%s%.9g", t ? ", " : "", (double)lp[t]);
        printf("]}\n");
    } else {
        fprintf(stderr, "model_logprobs: %s\n", rlvr_error_last());
    }
    rlvr_model_free(m);
    rlvr_checkpoint_close(ck);
    free(lp);
    free(ids);
    return rc == 0 ? 0 : 1;
}
