/* envs/harness.h — the multi-turn harness: one code path for training
 * rollouts, evaluation and interactive use (docs/TASKS.md "Harness").
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
 *         budget, context limit, n-gram repetition, budgets.malformed_calls
 *         malformed calls in a row: stop MALFORMED, that turn gets no
 *         observation); a sandbox failure is
 *         RLVR_STOP_INFRA_ERROR (verdict INFRA: excluded, never scored).
 *   "tests" tasks: the patch is extracted from the workspace (enclave
 *   diff gate) into the job; rlvr_harness_verify scores it in the enclave.
 *   "arith" tasks: the final reply is scored in process (envs/arith.h).
 *
 * The record (core/record.h) holds the ids exactly as sampled with their
 * sampling log-probs and entropies, the loss mask, one rlvr_turn per policy
 * turn, the stop reason and timings. Nothing is ever re-tokenised.
 *
 * Scheduling (turns, not whole rollouts): rlvr_harness_run drives many
 * rollouts at once, one per sampler slot; each step decodes one token for
 * every rollout that is ready, in one batched rlvr_sampler_decode; a group's rollouts share their
 * prompt's prefill (rlvr_harness_run below). Tools run as child processes
 * of their rollout's workspace sandbox, started without blocking
 * (enclave/sandbox.h "runs without blocking"); one thread drives them all
 * with an event loop: between decode steps it polls the running tools'
 * pipes without waiting, and it blocks in poll(2) only when no rollout can
 * decode, until a tool ends or a simulated latency is due. So tool time
 * overlaps generation (options.overlap_tools, the default; false: each tool
 * runs to its end before anything else moves). Records are the same either
 * way.
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
#include "enclave/workspace.h"
#include "envs/config.h"
#include "envs/task.h"
#include "policy/sampler.h"
#include "policy/template.h"
#include "policy/tokenizer.h"
#include "rl/repetition.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RLVR_HARNESS_OPTIONS_VERSION 1

typedef struct rlvr_harness_job rlvr_harness_job; /* below */

/* Where a continued rollout (a fork of Monte-Carlo credit) starts: the
 * state s_turn of a finished parent rollout, before its policy turn `turn`.
 * The fork's record begins with the parent's tokens [0, tokens) exactly
 * as recorded (ids, masks, sampling log-probs and
 * entropies: nothing is re-rendered or re-tokenised) and its turns
 * 0 … turn − 1; their KV rows are prefilled once and forked to the other
 * jobs of the group (the jobs with this same prefix pointer); the budgets
 * continue where the parent was (turns, policy tokens, context, malformed
 * calls in a row, the repetition window); the workspace is a fresh one with
 * `state` restored. Then the policy samples as usual until the end. */
typedef struct {
    const rlvr_rollout *record;        /* the parent's record (read only; must outlive the run) */
    int32_t turn;                      /* 1 <= turn <= record->n_turns: the fork writes turn `turn` on */
    int32_t tokens;                    /* the parent's tokens the fork starts with: turns[turn].policy_start
                                          (all of a record cut there, as a rollout rank receives it) */
    const rlvr_workspace_state *state; /* "tests": the parent's workspace after turn − 1's tool
                                          (rlvr_harness_job.states); NULL: the pristine tree */
} rlvr_harness_prefix;

/* What the harness reports to options.on_event as a rollout unfolds (for
 * interactive use: `rlvr agent` prints the trajectory turn by turn). Called
 * in the thread that called rlvr_harness_run, between sampler calls and
 * event-loop rounds; the job and its record may be read, not
 * changed. Events of different rollouts interleave. */
typedef enum {
    RLVR_HARNESS_EVENT_START = 1,  /* the prompt is in the record (record.prompt_tokens); turn NULL */
    RLVR_HARNESS_EVENT_POLICY = 2, /* a policy turn is written (turn->policy_start..policy_end, tool_name
                                      when its call parsed); its tool, if any, runs next */
    RLVR_HARNESS_EVENT_TURN = 3,   /* the turn is recorded (turn = record.turns[n_turns - 1]), with its
                                      observation when it got one */
    RLVR_HARNESS_EVENT_END = 4,    /* the rollout ended: stop reason, patch ("tests"), verdict ("arith");
                                      turn NULL */
} rlvr_harness_event;

typedef void (*rlvr_harness_event_fn)(void *arg, rlvr_harness_event event, const rlvr_harness_job *job,
                                      const rlvr_turn *turn);

/* Simulated tool latency, for benchmarks only: seconds the turn `turn` of
 * `job` waits before its observation. Called in the driver's thread. */
typedef double (*rlvr_harness_latency_fn)(void *arg, const rlvr_harness_job *job, int32_t turn);

typedef struct {
    unsigned version;                  /* RLVR_HARNESS_OPTIONS_VERSION */
    rlvr_tool_prompt tool_prompt;      /* how the system turn lists the tools ([harness] tool_prompt) */
    rlvr_task_budgets budgets;         /* the run's [harness] ceilings (all > 0 but malformed_calls, where
                                          0 = no limit); a task's own values win */
    int64_t tool_output_bytes;         /* an observation is cut to this many bytes (marked); > 0 */
    rlvr_repetition_config repetition; /* [repetition]; disabled when !enabled */
    rlvr_sandbox_host *host;           /* needed for "tests" tasks; NULL is fine for "arith" */
    rlvr_sandbox_limits tool_limits;   /* limits of every workspace command; wall_s is raised to the
                                          tool timeout when lower. Zeroed: rlvr_sandbox_limits_default */
    bool overlap_tools;                /* the event loop: tools run while the others decode (false: each
                                          tool runs to its end between decode steps) */
    rlvr_harness_event_fn on_event;    /* progress as it happens (rlvr_harness_event); NULL: none */
    void *event_arg;
    rlvr_harness_latency_fn simulated_latency; /* benchmarks only (bench/bench_harness.c); NULL: none.
                                          Every turn that gets an observation (a tool's or a malformed
                                          call's) gets it the returned seconds after its tool ended (a
                                          deadline of the event loop, no thread sleeps unless
                                          overlap_tools is false); the turn's duration_s and
                                          timings.tool_s include the wait; the tokens are unchanged */
    void *latency_arg;
} rlvr_harness_options;

/* The defaults of [harness] (16 turns, 4096 policy tokens, 8192 context
 * tokens, 10 s per tool, no malformed-call limit, 2048 output bytes) and
 * [repetition] (on: an n-gram
 * of 32 more than 10 times within 2048 tokens); default sandbox limits; tools
 * overlapping decoding (overlap_tools); no host. */
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
struct rlvr_harness_job {
    /* inputs */
    const rlvr_task *task;
    uint32_t step, sequence;       /* Philox keys of the sampler draws (core/rng.h) */
    rlvr_harness_script_fn script; /* NULL: the sampler's policy writes the turns */
    void *script_arg;
    bool no_patch;                 /* "tests": the patch is not wanted (SFT's demonstrations): no
                                      extraction at the end, patch stays NULL */
    const rlvr_harness_prefix *prefix; /* NULL: from the prompt; else continue that parent (above) */
    uint32_t capture_tools;        /* "tests": bit mask (1 << rlvr_tool_id) of the tools after whose
                                      calls the workspace is snapshotted (outputs states, turn_state,
                                      turn_changed); 0: no snapshots */
    /* outputs */
    rlvr_rollout record;           /* task_id, sample_sequence, tokens, turns, stop, timings, and for
                                      "arith" the verdict and reward.outcome */
    int32_t calls, calls_parsed;   /* tool calls written, and those that parsed */
    char *patch;                   /* "tests": the extracted patch (NUL-terminated), NULL when none */
    size_t patch_len;
    bool public_tests_changed;     /* the diff gate saw changed public tests: the rollout is dropped */
    int patch_reason;              /* RLVR_REASON_NONE or PATCH_TOO_LARGE (enclave/reason.h) */
    bool prompt_shared;            /* the prompt's KV rows came from a group member's prefill (fork) */
    /* outputs of capture_tools (all NULL / 0 without it) */
    rlvr_workspace_state **states; /* (n_states) distinct workspace states, in the order they arose */
    int32_t n_states;
    int32_t *turn_state;           /* (record.n_turns) state after turn t's tool: an index into states,
                                      RLVR_HARNESS_STATE_PRISTINE, or RLVR_HARNESS_STATE_UNKNOWN (a
                                      snapshot failed or was too large: no fork from there) */
    uint8_t *turn_changed;         /* (record.n_turns) 1: turn t ran a captured tool that changed the
                                      workspace's files */
    int32_t cap_turn_states;       /* entries allocated in turn_state and turn_changed */
    double snapshot_s;             /* wall time of the snapshots, and of a fork's restore */
    int32_t prefix_policy_tokens;  /* a fork: the parent's policy tokens it starts with */
};

#define RLVR_HARNESS_STATE_PRISTINE (-1)
#define RLVR_HARNESS_STATE_UNKNOWN (-2)

void rlvr_harness_job_clear(rlvr_harness_job *job);
/* Frees the capture outputs only (states, turn_state, turn_changed). */
void rlvr_harness_job_clear_capture(rlvr_harness_job *job);

/* The prompt of a task, straight to ids: <|bos|>, a system turn listing the
 * task's tools with their argument schemas (only when it has tools), the
 * user turn with the task's prompt, and <|assistant|>. Mask PROMPT. */
int rlvr_harness_render_prompt(rlvr_token_buf *out, const rlvr_tokenizer *tok, const rlvr_task *task,
                               const rlvr_harness_options *opt);

/* Runs the jobs to completion, at most kv_slots at a time, on sampler slots
 * 0..kv_slots-1 (their contents are replaced). The sampler's stop tokens are
 * set to the template's (<|end_of_turn|>, <|eos|>).
 *
 * Group prefix sharing: consecutive jobs with the same task, step and
 * prefix are a group (GRPO's G rollouts of one prompt; the K forks of one
 * branch point). Queued jobs take free slots in
 * order, a group at a time and only once all of it fits (a group larger
 * than the cache: once every slot is free), so a group starts together: its
 * first rollout prefills the prompt and the others get it by
 * rlvr_sampler_fork (job.prompt_shared; also checked: same prompt ids). The
 * source holds exactly the prompt then, as nothing is decoded between the
 * starts, and the sampler keeps its rows (or hands its readers copies)
 * whatever it does later. By the sampler's contract the records are
 * bit-identical to unshared runs. The part of a group larger than the cache
 * that starts later prefills the prompt again.
 *
 * Returns 0 when every job
 * ran (infrastructure failures of single rollouts are recorded in them as
 * RLVR_STOP_INFRA_ERROR); a negative code for bad arguments, out of memory,
 * a sampler error or a script's error. */
int rlvr_harness_run(rlvr_sampler *s, const rlvr_tokenizer *tok, const rlvr_harness_options *opt,
                     rlvr_harness_job *jobs, int n);

/* ---- verification of a finished "tests" rollout --------------------------------- */

/* The enclave's view of a "tests" task (repository, hidden tests or judge,
 * FAIL_TO_PASS / PASS_TO_PASS, protected and editable paths, public
 * tests), with `limits` for each enclave run and `consensus_runs` (≥ 1)
 * runs for a passing patch. The spec points into the task and into
 * `views` (NULL-terminated lists the caller frees with
 * rlvr_harness_verify_views_free, also after an error). */
typedef struct {
    const char **f2p, **p2p, **protected_globs, **public_tests, **editable, **judge_argv, **env, **expected;
} rlvr_harness_verify_views;

int rlvr_harness_verify_spec(rlvr_verify_spec *spec, rlvr_harness_verify_views *views, const rlvr_task *task,
                             const rlvr_sandbox_limits *limits, int consensus_runs);
void rlvr_harness_verify_views_free(rlvr_harness_verify_views *views);

/* rlvr_verify_task_new on that spec. */
int rlvr_harness_verify_task_new(rlvr_verify_task **out, rlvr_sandbox_host *host, const rlvr_task *task,
                                 const rlvr_sandbox_limits *limits, int consensus_runs);

/* Verifies the job's patch (enclave/verify.h) and fills the record's verdict,
 * verdict_reason, reward.outcome and timings.verify_s. reward.outcome is 1
 * for a pass; for a failed patch of a judge-mode task, the share of tests
 * the verify task credits (rlvr_verify_task_set_partial_credit); otherwise
 * 0. A rollout stopped by an infrastructure failure keeps verdict INFRA and
 * is not verified; a "tests" rollout without a patch verifies the empty
 * patch. Returns 0, or a negative code for bad arguments or out of memory. */
int rlvr_harness_verify(rlvr_harness_job *job, rlvr_verify_task *vt, uint64_t seed);

#endif
