/* train/pack.h — rollout records packed into one training batch, and the
 * trainer's forward/backward over it, shared by SFT and RL.
 *
 * Sequence s of the batch is record s's tokens [0, n_tokens). The model's
 * outputs are next-token: logprob_next[t] scores token t+1. Here every
 * per-token array is aligned to the token it scores instead:
 *   logp[t]    = log π(tokens[t] | tokens[..t-1])  (0 at a sequence's first token)
 *   entropy[t] = H(π(· | tokens[..t-1]))          (0 at a sequence's first token)
 * which is how records store sampling log-probs (core/record.h), so the two
 * can be compared token by token. */
#ifndef RLVR_TRAIN_PACK_H
#define RLVR_TRAIN_PACK_H

#include "core/record.h"
#include "policy/model.h"

#include <stdint.h>

typedef struct {
    int n_seqs;
    int32_t *offsets;  /* (n_seqs + 1) */
    int32_t *tokens;   /* (T) */
    uint8_t *policy;   /* (T) 1 where the record's mask is RLVR_TOKEN_POLICY */
    float *logp;       /* (T) aligned to the token (above), after rlvr_pack_forward */
    float *entropy;    /* (T) */
    float *dlogp;      /* (T) ∂loss/∂logp[t], aligned to the token; the caller fills it */
    float *dentropy;   /* (T) ∂loss/∂entropy[t]; the caller fills it (zeroed by rlvr_pack_records) */
    float *next_lp, *next_ent, *next_dlp, *next_dent; /* (T) model-aligned scratch */
    int64_t cap;
    int cap_seqs;
} rlvr_pack;

/* Packs records[0..n) (NULL entries are skipped). Zeroes dlogp/dentropy. */
int rlvr_pack_records(rlvr_pack *p, const rlvr_rollout *const *records, int n);
void rlvr_pack_free(rlvr_pack *p);

/* Number of policy tokens in the pack. */
int64_t rlvr_pack_policy_tokens(const rlvr_pack *p);

/* Forward at `temperature`, filling logp and entropy (token-aligned). */
int rlvr_pack_forward(rlvr_pack *p, rlvr_model *m, float temperature);

/* Backward of Σ dlogp[t]·logp[t] + Σ dentropy[t]·entropy[t] through the last
 * forward, accumulating into the model's gradients. */
int rlvr_pack_backward(rlvr_pack *p, rlvr_model *m);

#endif
