/* tests/io/greedy_decode.c — greedy decoding from a checkpoint, for
 * check_smollm2.py.
 *
 *   greedy_decode CKPT N_NEW PROMPT...
 *
 * Each PROMPT is a user message rendered with the checkpoint's chat format
 * (begin, the user turn, the assistant's opening); then N_NEW tokens are
 * chosen by argmax of the policy's logits, one full forward per token (the
 * training forward, which gives the sampler's log-probs bit for bit). Prints
 * one JSON object per prompt: {"prompt": [ids], "generated": [ids]}. */
#include "core/error.h"
#include "io/checkpoint.h"
#include "policy/model.h"
#include "policy/template.h"
#include "policy/tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int32_t argmax_last(const rlvr_model *m, int32_t rows) {
    int V = rlvr_model_config_of(m)->vocab;
    const float *row = rlvr_model_logits(m) + (size_t)(rows - 1) * V;
    int32_t best = 0;
    for (int v = 1; v < V; v++)
        if (row[v] > row[best]) best = v;
    return best;
}

static int decode(rlvr_model *m, const rlvr_tokenizer *tok, const char *prompt, int n_new) {
    rlvr_token_buf b = {0};
    int rc = rlvr_template_begin(&b, tok);
    if (rc == 0) rc = rlvr_template_message(&b, tok, RLVR_ROLE_USER, prompt, strlen(prompt));
    if (rc == 0) rc = rlvr_template_assistant_start(&b, tok);
    int32_t n_prompt = b.n;
    if (rc == 0) rc = rlvr_token_buf_reserve(&b, n_new);
    for (int k = 0; rc == 0 && k < n_new; k++) {
        int32_t offsets[2] = {0, b.n};
        rlvr_batch batch = {.n_seqs = 1, .offsets = offsets, .tokens = b.ids};
        rc = rlvr_model_forward(m, &batch, 1.0f, NULL, NULL);
        if (rc == 0) {
            int32_t next = argmax_last(m, b.n);
            b.ids[b.n++] = next;
        }
    }
    if (rc == 0) {
        printf("{\"prompt\": [");
        for (int32_t i = 0; i < n_prompt; i++) printf("%s%d", i ? ", " : "", (int)b.ids[i]);
        printf("], \"generated\": [");
        for (int32_t i = n_prompt; i < b.n; i++) printf("%s%d", i > n_prompt ? ", " : "", (int)b.ids[i]);
        printf("]}\n");
        fflush(stdout);
    }
    rlvr_token_buf_free(&b);
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: greedy_decode CKPT N_NEW PROMPT...\n");
        return 2;
    }
    rlvr_checkpoint *ck = NULL;
    rlvr_model *m = NULL;
    rlvr_tokenizer *tok = NULL;
    int rc = rlvr_checkpoint_open(&ck, argv[1]);
    if (rc == 0) rc = rlvr_checkpoint_load_model(ck, &m);
    if (rc == 0) rc = rlvr_checkpoint_read_tokenizer(ck, &tok);
    for (int i = 3; rc == 0 && i < argc; i++) rc = decode(m, tok, argv[i], atoi(argv[2]));
    if (rc != 0) fprintf(stderr, "greedy_decode: %s\n", rlvr_error_last());
    rlvr_tokenizer_free(tok);
    rlvr_model_free(m);
    rlvr_checkpoint_close(ck);
    return rc == 0 ? 0 : 1;
}
