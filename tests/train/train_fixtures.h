/* tests/train/train_fixtures.h — what the train/ tests share: a model and
 * its tokenizer saved as a checkpoint. */
#ifndef RLVR_TESTS_TRAIN_FIXTURES_H
#define RLVR_TESTS_TRAIN_FIXTURES_H

#include "io/checkpoint.h"
#include "policy/model.h"
#include "policy/tokenizer.h"

#include <stdbool.h>
#include <stddef.h>

/* m and tok as a checkpoint in dir (no fsync); its path into path. */
static inline int fixture_save_checkpoint(const char *dir, rlvr_model *m, const rlvr_tokenizer *tok, char *path,
                                          size_t cap) {
    rlvr_checkpoint_writer *w = NULL;
    rlvr_checkpoint_options opt = RLVR_CHECKPOINT_OPTIONS_INIT;
    opt.fsync = false;
    int rc = rlvr_checkpoint_begin(&w, dir, &opt);
    if (rc == 0) rc = rlvr_checkpoint_put_model(w, m);
    if (rc == 0) rc = rlvr_checkpoint_put_tokenizer(w, tok);
    if (rc == 0) rc = rlvr_checkpoint_commit(w, path, cap);
    else if (w) rlvr_checkpoint_abort(w);
    return rc;
}

#endif
