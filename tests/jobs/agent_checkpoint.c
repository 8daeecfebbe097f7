/* agent_checkpoint DIR — writes a checkpoint of a small random-weights
 * policy (the byte tokenizer's vocabulary, 4096 positions) under DIR for the
 * `rlvr agent` test (there is no training job to make one yet) and prints
 * its path. */
#include "core/error.h"
#include "io/checkpoint.h"
#include "policy/model.h"
#include "policy/tokenizer.h"

#include <stdio.h>

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: agent_checkpoint DIR\n");
        return 2;
    }
    rlvr_tokenizer *tok = NULL;
    rlvr_model *m = NULL;
    rlvr_checkpoint_writer *w = NULL;
    char path[4200];
    int rc = rlvr_tokenizer_new_byte(&tok);
    if (rc == 0) {
        rlvr_model_config c = {.vocab = rlvr_tokenizer_vocab_size(tok), .d_model = 32, .n_layers = 1, .n_heads = 2,
                               .n_kv_heads = 1, .d_ff = 64, .max_seq = 4096, .rope_theta = 10000.0f,
                               .norm_eps = 1e-5f, .init_seed = 21, .init_std = 0.05f};
        rc = rlvr_model_new(&m, &c);
    }
    rlvr_checkpoint_options opt = RLVR_CHECKPOINT_OPTIONS_INIT;
    opt.fsync = false;
    if (rc == 0) rc = rlvr_checkpoint_begin(&w, argv[1], &opt);
    if (rc == 0) rc = rlvr_checkpoint_put_model(w, m);
    if (rc == 0) rc = rlvr_checkpoint_commit(w, path, sizeof path);
    else if (w) rlvr_checkpoint_abort(w);
    rlvr_model_free(m);
    rlvr_tokenizer_free(tok);
    if (rc < 0) {
        fprintf(stderr, "agent_checkpoint: %s\n", rlvr_error_last());
        return 1;
    }
    printf("%s\n", path);
    return 0;
}
