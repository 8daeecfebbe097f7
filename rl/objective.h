/* rl/objective.h — the token-level GRPO objective the trainer differentiates
 * (docs/RL.md "The objective").
 *
 * Per policy token t of sequence i, with advantage A (the sequence's, or the
 * token's own under turn credit):
 *
 *   behaviour mode (logp_prox == NULL), the default for synchronous and
 *   bounded-async training against the recorded sampling log-probs:
 *     ρ_t = min(π_θ(o_t) / π_sample(o_t), C)        truncated importance ratio
 *     M_t = min(ρ_t·A, clip(ρ_t, 1 − ε_low, 1 + ε_high)·A)
 *
 *   decoupled mode (logp_prox given: the trainer's own log-probs at the start
 *   of the step, a constant), for several updates per batch:
 *     ρ_t = π_θ / π_prox,   w_t = min(π_prox / π_sample, C)   (constant)
 *     M_t = w_t·min(ρ_t·A, clip(ρ_t, 1 − ε_low, 1 + ε_high)·A)
 *
 *   KL to the reference (k3, never negative), x_t = log π_ref − log π_θ:
 *     D_t = e^{x_t} − x_t − 1
 *   objective per token:  J_t = M_t − β·D_t + α_H·H_t
 *   (H_t is the entropy of π_θ(·|prefix) at the token's position.)
 *
 * Aggregation, with n_t the weight of a token of sequence i:
 *   tokens:   n_t = 1/N, N = policy tokens in the global batch (default)
 *   constant: n_t = 1/N, N a fixed constant
 *   sequence: n_t = 1/(S·|o_i|), S sequences, |o_i| policy tokens of seq i
 * The constant normaliser is the recommended default: 1/|o_i| shrinks the
 * per-token penalty of long failures.
 *
 * SIGN CONVENTION. The GRPO objective J = Σ_t n_t·J_t is maximised. This
 * function returns the value to MINIMISE,
 *     loss = −Σ_t n_t·J_t,
 * and its derivatives
 *     dlogp[t]    = ∂loss/∂log π_θ(o_t)   (w_t: surrogate and KL terms)
 *     dentropy[t] = ∂loss/∂H_t = −n_t·α_H
 * (0 at non-policy tokens). These are exactly what rlvr_model_backward
 * (policy/model.h) takes as dlogprob and dentropy: it accumulates the
 * gradient of Σ w_t·log π_t + Σ e_t·H_t, which equals ∂loss/∂θ, and AdamW
 * descends it — the same convention as SFT, where dlogprob = −mask/N.
 * Example: an unclipped token with A > 0 has w_t = −n_t·ρ_t·A < 0, so descent
 * raises its log-prob. The trainer maps positions: the model's
 * logprob_next[t−1] scores token t.
 *
 * Gradient of M_t with respect to log π_θ(o_t): ρ_t·A (times w_t in decoupled
 * mode) where the unclipped term is the active one (A > 0 and ρ ≤ 1 + ε_high,
 * or A < 0 and ρ ≥ 1 − ε_low), 0 where the clip holds it and 0 where the
 * ratio was truncated at C. */
#ifndef RLVR_RL_OBJECTIVE_H
#define RLVR_RL_OBJECTIVE_H

#include <stdint.h>

typedef enum {
    RLVR_AGG_TOKENS = 0,   /* 1/N, N = policy tokens in the global batch */
    RLVR_AGG_CONSTANT = 1, /* 1/N, N fixed */
    RLVR_AGG_SEQUENCE = 2, /* 1/(S·|o_i|) */
} rlvr_aggregation;

typedef struct {
    double clip_low, clip_high;  /* ε_low ∈ [0, 1), ε_high ≥ 0 */
    double is_cap;               /* C ≥ 1 + ε_high: cap on importance weights */
    double kl_beta;              /* β ≥ 0; logp_ref required when > 0 */
    double entropy_coef;         /* α_H (from the entropy controller); entropy required when != 0 */
    rlvr_aggregation aggregation;
    /* tokens:   global policy-token count N (0 = count the tokens of this call)
     * constant: the fixed N (> 0)
     * sequence: global sequence count S (0 = count the sequences of this call
     *           that have policy tokens) */
    double normaliser;
} rlvr_objective_options;

/* One shard of the batch: n_seqs sequences laid end to end; sequence s holds
 * tokens [offsets[s], offsets[s+1]). All per-token arrays have offsets[n_seqs]
 * entries and are aligned to the token (the trainer shifts the model's
 * next-token outputs). Values at non-policy tokens are ignored. */
typedef struct {
    int n_seqs;
    const int32_t *offsets;         /* (n_seqs + 1), offsets[0] = 0 */
    const uint8_t *mask;            /* (T) 1 = policy token (RLVR_TOKEN_POLICY), else 0 */
    const double *logp;             /* (T) log π_θ(o_t), the current policy */
    const double *logp_sample;      /* (T) recorded sampling log-prob (behaviour policy) */
    const double *logp_prox;        /* (T) or NULL: proximal log-probs (decoupled mode) */
    const double *logp_ref;         /* (T) or NULL: reference model, needed when β > 0 */
    const double *entropy;          /* (T) or NULL: H_t, needed when α_H != 0 */
    const double *advantage;        /* (n_seqs) A_i; may be NULL when token_advantage is given */
    const double *token_advantage;  /* (T) or NULL: per-token A (turn credit), overrides advantage */
} rlvr_objective_input;

typedef struct {
    double loss;           /* −Σ n_t·J_t: this shard's share (shards sum to the global loss) */
    double surrogate;      /* Σ n_t·M_t */
    double kl_term;        /* Σ n_t·D_t */
    double entropy_term;   /* Σ n_t·H_t */
    double normaliser;     /* N (tokens, constant) or S (sequence) used */
    /* counts and plain sums over this shard's policy tokens, for reduction */
    int64_t tokens;
    int64_t clipped_low;   /* A < 0 and ratio < 1 − ε_low: gradient removed by the clip */
    int64_t clipped_high;  /* A > 0 and ratio > 1 + ε_high */
    int64_t is_truncated;  /* importance weight above C */
    double ratio_sum;      /* Σ π_θ/π_sample (behaviour) or π_θ/π_prox (decoupled), untruncated */
    double kl_sum;         /* Σ D_t */
    double entropy_sum;    /* Σ H_t (0 without entropy) */
    /* the same as fractions / means over this shard's policy tokens */
    double clip_frac_low, clip_frac_high, is_trunc_frac, ratio_mean, kl_mean, entropy_mean;
} rlvr_objective_stats;

/* Computes loss, w_t and e_t (see the sign convention above).
 *   dlogp[T]     out: ∂loss/∂log π_θ(o_t), 0 at non-policy tokens
 *   dentropy[T]  out, may be NULL: ∂loss/∂H_t
 *   stats        out: loss and diagnostics
 * RLVR_EINVAL (message names the field) for bad options, missing arrays or
 * non-finite values at policy tokens. */
int rlvr_rl_objective(double *dlogp, double *dentropy, rlvr_objective_stats *stats, const rlvr_objective_input *in,
                      const rlvr_objective_options *opt);

/* Checks options alone (ranges, C ≥ 1 + ε_high, constant normaliser > 0). */
int rlvr_rl_objective_options_check(const rlvr_objective_options *opt);

#endif
