/* envs/harness.h — the multi-turn harness: one code path for training
 * rollouts, evaluation and interactive use (SPEC §5.6).
 *
 * A rollout:
 *   prompt (rlvr_harness_render_prompt: <|bos|> [system: tools] user <|assistant|>)
 *   loop: the policy writes a turn (everything after <|assistant|>, stop token
 *         included); envs/turn.h reads its call; a call runs in the task's
 *         workspace sandbox (envs/harness_tools.c); a malformed call gets the
 *         fixed error observation of envs/tools.h; the observation is
 *         rendered with the chat template (rlvr_template_observation),
 *         appended to the record as RLVR_TOKEN_OBSERVATION and prefilled
 *         into the rollout's sampler slot;
 *   end:  a turn without a call, a submit call or <|eos|> ends the episode
 *         (stop DONE); otherwise a ceiling does (turn limit, policy-token
 *         budget, context limit, n-gram repetition); a sandbox failure is
 *         RLVR_STOP_INFRA_ERROR (verdict INFRA: excluded, never scored).
 *   "tests" tasks: the patch is extracted from the workspace (enclave
 *   diff gate) into the job; rlvr_harness_verify scores it in the enclave.
 *   "arith" tasks: the final reply is scored in process (envs/arith.h).
 *
 * The record (core/record.h) holds the ids exactly as sampled with their
 * sampling log-probs and entropies, the loss mask, one rlvr_turn per policy
 * turn, the stop reason and timings. Nothing is ever re-tokenised.
 *
 * Scheduling (SPEC §5.4): rlvr_harness_run drives many rollouts at once, one
 * per sampler slot; each step decodes one token for every rollout that is
 * ready, in one batched rlvr_sampler_decode. The workspace sandbox API
 * blocks, so a tool call either runs in the calling thread between decode
 * steps (the others wait), or, with options.tool_threads, in a worker thread
 * of its own (one sandbox per rollout, as enclave/sandbox.h allows) while
 * the other rollouts keep decoding; the driver waits on a condition variable
 * only when no rollout can move. Records are the same either way. An event
 * loop polling the sandbox's pipes needs an asynchronous sandbox run.
 *
 * Scripted policies (tests, demonstrations): a job with a script gets its
 * turns from the script instead of the sampler. The ids are appended with the
 * sampler's prefill path (same KV state, same budgets and parsing); they are
 * RLVR_TOKEN_POLICY with log-prob and entropy 0 (forced, not sampled). */
#ifndef RLVR_ENVS_HARNESS_H
#define RLVR_ENVS_HARNESS_H

#include "core/config.h"
#include "core/record.h"
#include "enclave/sandbox.h"
#include "enclave/verify.h"
#include "envs/task.h"
#include "policy/sampler.h"
#include "policy/template.h"
#include "policy/tokenizer.h"
#include "rl/repetition.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RLVR_HARNESS_OPTIONS_VERSION 1

typedef struct {
    unsigned version;                  /* RLVR_HARNESS_OPTIONS_VERSION */
    rlvr_task_budgets budgets;         /* the run's [harness] ceilings (all > 0); a task's own values win */
    int64_t tool_output_bytes;         /* an observation is cut to this many bytes (marked); > 0 */
    rlvr_repetition_config repetition; /* [repetition]; disabled when !enabled */
    rlvr_sandbox_host *host;           /* needed for "tests" tasks; NULL is fine for "arith" */
    rlvr_sandbox_limits tool_limits;   /* limits of every workspace command; wall_s is raised to the
                                          tool timeout when lower. Zeroed: rlvr_sandbox_limits_default */
    bool tool_threads;                 /* run each tool call in a worker thread while the others decode
                                          (false: in the calling thread, between decode steps) */
} rlvr_harness_options;

/* The defaults of [harness] (16 turns, 4096 policy tokens, 8192 context
 * tokens, 10 s per tool, 2048 output bytes) and [repetition] (on: an n-gram
 * of 32 more than 10 times within 2048 tokens); default sandbox limits; tools
 * in worker threads; no host. */
void rlvr_harness_options_default(rlvr_harness_options *o);

/* Options from a run's configuration: [harness] (envs/config.h),
 * [repetition] (rl/config.h) and [sandbox] limits (enclave/config.h); the
 * configuration must have been loaded with those key tables. The host is
 * the caller's. RLVR_ECONFIG naming the key when a value is refused. */
int rlvr_harness_options_from_config(rlvr_harness_options *out, const rlvr_config *cfg);

/* A scripted policy: appends to `out` the ids of its next turn (after
 * <|assistant|>, stop token included; rlvr_template_assistant_reply writes
 * one). `turn` counts from 0; `so_far` is the record up to here (its last
 * observation shows what the previous call returned). Returning a negative
 * code aborts the run with that code. */
typedef int (*rlvr_harness_script_fn)(void *arg, const rlvr_rollout *so_far, int32_t turn,
                                      const rlvr_tokenizer *tok, rlvr_token_buf *out);

/* One rollout to run, and what it produced. Zero-initialise, set the inputs,
 * run, read the outputs, then rlvr_harness_job_clear. */
typedef struct {
    /* inputs */
    const rlvr_task *task;
    uint32_t step, sequence;       /* Philox keys of the sampler draws (core/rng.h) */
    rlvr_harness_script_fn script; /* NULL: the sampler's policy writes the turns */
    void *script_arg;
    /* outputs */
    rlvr_rollout record;           /* task_id, sample_sequence, tokens, turns, stop, timings, and for
                                      "arith" the verdict and reward.outcome */
    int32_t calls, calls_parsed;   /* tool calls written, and those that parsed */
    char *patch;                   /* "tests": the extracted patch (NUL-terminated), NULL when none */
    size_t patch_len;
    bool public_tests_changed;     /* the diff gate saw changed public tests: the rollout is dropped */
    int patch_reason;              /* RLVR_REASON_NONE or PATCH_TOO_LARGE (enclave/reason.h) */
} rlvr_harness_job;

void rlvr_harness_job_clear(rlvr_harness_job *job);

/* The prompt of a task, straight to ids: <|bos|>, a system turn listing the
 * task's tools with their argument schemas (only when it has tools), the
 * user turn with the task's prompt, and <|assistant|>. Mask PROMPT. */
int rlvr_harness_render_prompt(rlvr_token_buf *out, const rlvr_tokenizer *tok, const rlvr_task *task);

/* Runs the jobs to completion, at most kv_slots at a time, on sampler slots
 * 0..kv_slots-1 (their contents are replaced). The sampler's stop tokens are
 * set to the template's (<|end_of_turn|>, <|eos|>). Returns 0 when every job
 * ran (infrastructure failures of single rollouts are recorded in them as
 * RLVR_STOP_INFRA_ERROR); a negative code for bad arguments, out of memory,
 * a sampler error or a script's error. */
int rlvr_harness_run(rlvr_sampler *s, const rlvr_tokenizer *tok, const rlvr_harness_options *opt,
                     rlvr_harness_job *jobs, int n);

/* ---- verification of a finished "tests" rollout --------------------------------- */

/* The enclave's view of a task (repository, hidden tests, FAIL_TO_PASS /
 * PASS_TO_PASS, protected paths, public tests), with `limits` for each
 * enclave run and `consensus_runs` (≥ 1) runs for a passing patch. */
int rlvr_harness_verify_task_new(rlvr_verify_task **out, rlvr_sandbox_host *host, const rlvr_task *task,
                                 const rlvr_sandbox_limits *limits, int consensus_runs);

/* Verifies the job's patch (enclave/verify.h) and fills the record's verdict,
 * verdict_reason, reward.outcome and timings.verify_s. A rollout stopped by
 * an infrastructure failure keeps verdict INFRA and is not verified; a
 * "tests" rollout without a patch verifies the empty patch. Returns 0, or a
 * negative code for bad arguments or out of memory. */
int rlvr_harness_verify(rlvr_harness_job *job, rlvr_verify_task *vt, uint64_t seed);

#endif
