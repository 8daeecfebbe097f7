/* policy/sampler.h — batched autoregressive sampling with a KV cache.
 *
 * The state split follows llama2.c: the model (config + weights, borrowed,
 * never copied) and the sampler's run state (KV cache and activations). The
 * cache has `kv_slots` sequence slots; a slot holds one sequence's keys and
 * values for positions 0..len-1 plus the next-token logits of its last token.
 *
 * Typical rollout-rank use for one group of G rollouts:
 *   reset(slot 0, step, seq id of rollout 0); prefill(slot 0, prompt)
 *   fork(slot i, slot 0, seq id of rollout i)        for i = 1..G-1
 *   loop: decode(the slots whose environments are ready)  -> token, logprob, entropy
 *         on a stop token: run the tool, prefill(slot, observation tokens)
 *
 * Group prefix sharing is copy-on-write: fork() makes the destination read
 * the source's rows for positions 0..len-1 in place (only rows the source
 * itself holds privately are copied) and copies the pending logits. Rows
 * below a slot's length are never rewritten while the slot lives; when a
 * slot that others read from is reset or forked over, its readers first get
 * private copies. So a group's prompt is prefilled once, decoding reads its
 * keys and values once per step for all G rollouts (from cache after the
 * first), and a forked sequence is bit-identical to one whose prompt was
 * prefilled on its own (same tokens, same kernels, same bits). Memory is
 * still reserved per slot (kv_slots × context rows): sharing saves compute
 * and memory traffic, not capacity.
 *
 * Determinism: the token drawn for a sequence at position p is the inverse
 * CDF of softmax(logits/τ) at the Philox uniform
 *   u = rlvr_rng_uniform(seed, RLVR_RNG_SAMPLE, step, sequence, p)
 * and the logits come from kernels in which each output element is one dot
 * product in a fixed order (sampler_kernels.h), prefill included. So the
 * tokens, log-probs and entropies of a sequence depend only on its tokens,
 * (seed, step, sequence) and the weights — never on which other sequences
 * share a decode call, their order, the slot numbers, or how a prefill was
 * split into calls.
 *
 * Log-probs and entropies are computed from the unscaled logits row kept
 * aside (logits_logprob_entropy at temperature τ), the same distribution the
 * training forward uses; nothing overwrites those logits. Training samples
 * exactly softmax(logits/τ): the recorded log-prob must be the probability
 * under the policy the trainer evaluates (importance ratios, KL), so the
 * [sampler] table has no top-p. Two choices exist for people reading a
 * model's answers (`rlvr generate`, `rlvr chat`, greedy evaluation), and
 * both keep reporting the model's own log-probs, not those of the
 * distribution actually drawn from:
 *   τ = 0      greedy: the argmax (the lowest id among equal logits); the
 *              log-prob and entropy are those of softmax(logits), τ = 1.
 *   top_p < 1  nucleus: the draw (the same inverse CDF, same uniform) is
 *              restricted to the most probable tokens holding top_p of the
 *              mass (all tokens tied at the boundary kept); the log-prob is
 *              still that of softmax(logits/τ).
 *
 * Weights: the matmuls read a copy of the model's matrices packed for the
 * kernel (sampler_kernels.h), made at creation and made again at the next
 * call after rlvr_model_params_version changed (an optimizer step, a
 * checkpoint load, weights copied in through rlvr_model_params), so every
 * call computes with the model's current weights. Writes through
 * rlvr_model_param_views are not seen unless rlvr_model_params is called
 * after them. KV rows computed before an update keep the old weights'
 * values (the caller swaps weights at turn or rollout boundaries and records
 * the policy version). The packed copy is in the configured format
 * (rlvr_sampler_weights): 4 bytes per weight for f32, 2 for bf16, 34/32 for
 * q8_0, and it is the only copy the sampler keeps. Every guarantee above
 * (batch invariance, forks, prefill splits) holds for each format: any
 * activation rounding is per row.
 *
 * Not thread-safe: one thread drives a sampler (kernels use OpenMP inside). */
#ifndef RLVR_POLICY_SAMPLER_H
#define RLVR_POLICY_SAMPLER_H

#include "core/config.h"
#include "policy/model.h"

#include <stdbool.h>
#include <stdint.h>

#define RLVR_SAMPLER_CONFIG_VERSION 1

/* The format of the sampler's copy of the weights ([sampler] weights;
 * docs/POLICY.md "Weight formats"). F32 computes exactly what the training
 * forward does; the others trade that for speed: BF16 rounds weights and
 * activations to bfloat16, Q8_0 is GGUF's Q8_0 (blocks of 32 int8 values
 * and one fp16 scale) against activations quantized to int8 per row and
 * block of 32. */
typedef enum {
    RLVR_SAMPLER_WEIGHTS_F32 = 0,
    RLVR_SAMPLER_WEIGHTS_BF16 = 1,
    RLVR_SAMPLER_WEIGHTS_Q8_0 = 2,
} rlvr_sampler_weights;

typedef struct {
    int version;            /* RLVR_SAMPLER_CONFIG_VERSION */
    float temperature;      /* τ > 0: π = softmax(logits / τ), as in training; 0 = greedy */
    float top_p;            /* (0, 1]: nucleus of the draw; 1 = the whole distribution (training) */
    int32_t kv_slots;       /* sequences held at once */
    int32_t context;        /* positions per slot; 0 = the model's max_seq */
    int32_t max_new_tokens; /* tokens sampled per turn (since the last prefill) before
                               RLVR_SAMPLE_MAX_TOKENS; 0 = until the context is full */
    uint64_t seed;          /* run seed: the Philox key of every draw */
    rlvr_sampler_weights weights; /* format of the packed weights the matmuls read */
} rlvr_sampler_config;

/* The [sampler] table's defaults (docs/CONFIG.md), seed 0; the seed of a
 * run comes from [run]. */
void rlvr_sampler_config_default(rlvr_sampler_config *c);

/* Why a decode call left a sequence stopped (0: it may continue). */
typedef enum {
    RLVR_SAMPLE_CONTINUE = 0,
    RLVR_SAMPLE_STOP_TOKEN = 1, /* the token is one of the stop tokens */
    RLVR_SAMPLE_MAX_TOKENS = 2, /* this turn reached its token limit */
    RLVR_SAMPLE_CONTEXT = 3,    /* the slot is full (no token when it was full before the call) */
} rlvr_sample_stop;

/* One decode result for one sequence. */
typedef struct {
    int32_t token;    /* sampled id; -1 when the slot was already full */
    int32_t position; /* the token's position in its sequence */
    float logprob;    /* log softmax(logits / τ)[token] */
    float entropy;    /* H(softmax(logits / τ)) at this position */
    rlvr_sample_stop stop;
} rlvr_sample;

typedef struct rlvr_sampler rlvr_sampler;

/* [sampler] keys for core/config.h (NULL-terminated). */
extern const rlvr_config_key rlvr_sampler_config_keys[];

/* True when the sampler computes exactly what the training forward does,
 * so a sampled token's recorded log-prob is the trainer's own (the
 * trainer then needs no correction for a mismatch between the two): only
 * for weights = f32. */
bool rlvr_sampler_exact(const rlvr_sampler_config *c);

/* The format's name as the [sampler] weights key spells it ("f32", "bf16",
 * "q8_0"), and the kernel this build runs it with ("avx512", "avx512_bf16",
 * "avx512_vnni", "portable", ...). Static strings. */
const char *rlvr_sampler_weights_name(rlvr_sampler_weights w);
const char *rlvr_sampler_weights_kernel(rlvr_sampler_weights w);
/* Parses a format name (as the key spells it); RLVR_EINVAL naming the choices. */
int rlvr_sampler_weights_parse(const char *name, rlvr_sampler_weights *out);

/* Fills *out from a loaded configuration; the seed is left as it was (it
 * belongs to [run]). */
int rlvr_sampler_config_from(rlvr_sampler_config *out, const rlvr_config *cfg);

/* Cross-section checks of a loaded configuration against the model it will
 * run ([sampler] context_tokens <= [model] max_seq): RLVR_ECONFIG naming the
 * file, line and key. */
int rlvr_sampler_config_validate(const rlvr_config *cfg, const rlvr_model_config *model);

/* Allocates the cache for cfg->kv_slots × context positions. The model is
 * borrowed and must outlive the sampler. */
int rlvr_sampler_new(rlvr_sampler **out, const rlvr_model *model, const rlvr_sampler_config *cfg);
void rlvr_sampler_free(rlvr_sampler *s);

/* Streamed loading, for a model whose parameters are read in one tensor at
 * a time (a blank model, rlvr_model_new_blank) so that the float32
 * matrices are never all resident: new_unpacked makes the sampler without
 * packing anything; after each tensor i is written into the model,
 * pack_tensor packs the matrices whose source lies in it (the tied LM head
 * lies in embed) and marks the packed copy current for the model's present
 * parameters version, so a later call does not pack again from the model.
 * Call it for every tensor written, the ones with no matrix included, the
 * last one after the last write; the model may then release the tensors
 * it returns true for (rlvr_model_release_tensor; the sampler still reads
 * embed, the norm weights and the biases from the model). A later change of the
 * model's parameters packs everything from the model again, as always. */
int rlvr_sampler_new_unpacked(rlvr_sampler **out, const rlvr_model *model, const rlvr_sampler_config *cfg);
/* True when the sampler no longer reads tensor i from the model: it packed
 * matrices from it and it is not the embedding table the lookup reads. */
bool rlvr_sampler_pack_tensor(rlvr_sampler *s, int i);

const rlvr_sampler_config *rlvr_sampler_config_of(const rlvr_sampler *s);

/* Seconds the last packing of the weights took (at creation, or at the
 * first call after the model's parameters changed: a weight sync). */
double rlvr_sampler_pack_seconds(const rlvr_sampler *s);

/* Tokens that end a turn (RLVR_SAMPLE_STOP_TOKEN); replaces the set. The
 * stop token itself is sampled, returned and appended like any other. */
int rlvr_sampler_set_stop_tokens(rlvr_sampler *s, const int32_t *ids, int n);

/* Empties a slot and names the sequence it will hold: its draws are keyed
 * by (seed, step, sequence, position). */
int rlvr_sampler_reset(rlvr_sampler *s, int slot, uint32_t step, uint32_t sequence);

/* Appends externally supplied tokens (a prompt, a tool observation) to the
 * slot's sequence, computing their KV rows and the next-token logits. Starts
 * a new turn: clears the stop state, the turn's token count and any turn limit. */
int rlvr_sampler_prefill(rlvr_sampler *s, int slot, const int32_t *tokens, int n);

/* Makes slot dst a copy-on-write copy of slot src (context, logits, turn
 * state) that draws as `sequence` (same step as src). dst != src; src must
 * hold tokens. Whatever dst held is released first. */
int rlvr_sampler_fork(rlvr_sampler *s, int dst, int src, uint32_t sequence);

/* Caps this turn of a slot at `max_new` sampled tokens (e.g. the rollout's
 * remaining token budget), until the next prefill. */
int rlvr_sampler_set_turn_limit(rlvr_sampler *s, int slot, int32_t max_new);

/* One step for n distinct slots: samples a token for each from its pending
 * logits, appends it (computing its KV rows and next logits, all slots in one
 * batch) and reports it in out[i] for slots[i]. A slot that is empty, or
 * stopped and not prefilled since, is RLVR_ESTATE. */
int rlvr_sampler_decode(rlvr_sampler *s, const int32_t *slots, int n, rlvr_sample *out);

/* Tokens held by a slot (its next position). */
int32_t rlvr_sampler_len(const rlvr_sampler *s, int slot);
/* Positions per slot (cfg.context, or the model's max_seq when that is 0). */
int32_t rlvr_sampler_context(const rlvr_sampler *s);

#endif
