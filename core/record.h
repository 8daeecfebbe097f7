/* core/record.h — the rollout record: exactly what the policy sampled and
 * what happened. Rollout ranks fill it, mpi/ sends it,
 * io/ stores it in shards, rl/ and the trainer read it.
 *
 * Token arrays are parallel, one entry per token of the whole context
 * (prompt, policy turns, observations):
 *   tokens[n_tokens]    int32  token ids, never re-tokenised
 *   logprobs[n_tokens]  float  log-prob under the sampling distribution at
 *                              sampling time (0 for tokens not sampled)
 *   mask[n_tokens]      uint8  RLVR_TOKEN_* : who produced the token
 *   entropy[n_tokens]   float  entropy of the sampling distribution at that
 *                              position (0 for tokens not sampled)
 * Only RLVR_TOKEN_POLICY tokens count for the loss, KL and length. */
#ifndef RLVR_CORE_RECORD_H
#define RLVR_CORE_RECORD_H

#include <stdint.h>

enum { RLVR_TOKEN_PROMPT = 0, RLVR_TOKEN_POLICY = 1, RLVR_TOKEN_OBSERVATION = 2 };

/* Why generation of a rollout ended. Stable numbers: stored in shards. */
typedef enum {
    RLVR_STOP_NONE = 0,         /* still running */
    RLVR_STOP_DONE = 1,         /* the policy ended the episode (eos / submit) */
    RLVR_STOP_MAX_TOKENS = 2,   /* policy-token budget reached (truncation) */
    RLVR_STOP_TURN_LIMIT = 3,   /* turn limit reached (truncation) */
    RLVR_STOP_CONTEXT = 4,      /* context window full (truncation) */
    RLVR_STOP_REPETITION = 5,   /* n-gram repetition detector stopped it */
    RLVR_STOP_INFRA_ERROR = 6,  /* sandbox or harness failure: excluded, never scored */
    RLVR_STOP_MALFORMED = 7,    /* too many malformed tool calls in a row (truncation) */
    RLVR_STOP_COUNT
} rlvr_stop_reason;

/* Verifier verdict. Stable numbers: stored in shards. */
typedef enum {
    RLVR_VERDICT_NONE = 0,     /* not verified (yet) */
    RLVR_VERDICT_PASS = 1,
    RLVR_VERDICT_FAIL = 2,
    RLVR_VERDICT_REJECTED = 3, /* the diff gate refused the patch: scores 0, runs nothing */
    RLVR_VERDICT_TIMEOUT = 4,  /* a timeout is always a failure */
    RLVR_VERDICT_INFRA = 5,    /* infrastructure error: excluded from the loss */
    RLVR_VERDICT_DROPPED = 6,  /* public tests were changed: rollout dropped */
    RLVR_VERDICT_COUNT
} rlvr_verdict;

#define RLVR_TOOL_NAME_CAP 32
#define RLVR_TASK_ID_CAP 64

/* One turn: a policy segment followed by the tool's observation. */
typedef struct {
    int32_t policy_start, policy_end;           /* token range [start, end) the policy sampled */
    int32_t observation_start, observation_end; /* token range of the tool output (empty when none) */
    char tool_name[RLVR_TOOL_NAME_CAP];         /* "" when the turn made no tool call */
    int32_t exit_status;                        /* tool exit status; -1 when none */
    float duration_s;                           /* tool wall time */
    uint8_t output_truncated;                   /* tool output hit its cap */
    uint8_t call_parsed;                        /* the tool call parsed against its schema */
} rlvr_turn;

typedef struct {
    float total;          /* R = outcome + λ_fmt·format − length penalty */
    float outcome;        /* decisive check: {0,1} or partial credit */
    float format;         /* share of tool calls that parsed */
    float length_penalty; /* the subtracted length term */
} rlvr_reward_parts;

typedef struct {
    double generate_s, tool_s, verify_s, queue_s;
} rlvr_timings;

typedef struct {
    char task_id[RLVR_TASK_ID_CAP];
    int64_t group_id;       /* unique per (step, task draw) */
    int32_t rollout_index;  /* 0..G-1 inside the group */
    int64_t policy_version; /* weights version that generated it */
    int64_t staleness;      /* v_trainer - v_rollout on admission */
    uint64_t seed;          /* run seed */
    uint32_t sample_sequence; /* Philox sequence id used for sampling */

    int32_t n_tokens, cap_tokens;
    int32_t prompt_tokens;  /* tokens [0, prompt_tokens) are the prompt */
    int32_t *tokens;        /* (cap_tokens) */
    float *logprobs;        /* (cap_tokens) */
    uint8_t *mask;          /* (cap_tokens) RLVR_TOKEN_* */
    float *entropy;         /* (cap_tokens) */

    int32_t n_turns, cap_turns;
    rlvr_turn *turns;       /* (cap_turns) */

    rlvr_stop_reason stop;
    rlvr_verdict verdict;
    int32_t verdict_reason; /* enclave reason code (0 = none) */
    rlvr_reward_parts reward;
    rlvr_timings timings;
} rlvr_rollout;

/* Zeroes the record and reserves room; returns RLVR_ENOMEM on failure. */
int rlvr_rollout_init(rlvr_rollout *r, int32_t cap_tokens, int32_t cap_turns);
void rlvr_rollout_free(rlvr_rollout *r);
/* Forgets tokens and turns but keeps the buffers. */
void rlvr_rollout_reset(rlvr_rollout *r);
/* Appends one token (grows the arrays as needed). */
int rlvr_rollout_push_token(rlvr_rollout *r, int32_t token, float logprob, float entropy, uint8_t mask);
/* Appends a turn (grows as needed); returns its index through *index. */
int rlvr_rollout_push_turn(rlvr_rollout *r, const rlvr_turn *turn, int32_t *index);
/* Number of RLVR_TOKEN_POLICY tokens, |τ_gen| of rl/reward.h. */
int32_t rlvr_rollout_policy_tokens(const rlvr_rollout *r);
/* Deep copy (dst must be zeroed or freed before). */
int rlvr_rollout_copy(rlvr_rollout *dst, const rlvr_rollout *src);

const char *rlvr_stop_reason_name(rlvr_stop_reason s);
const char *rlvr_verdict_name(rlvr_verdict v);

#endif
