/* train/generate.h — a checkpoint's model answering a person: the prompt
 * rendered as a user turn of the model's chat format (or taken as raw
 * text), then one or several samples drawn with the rollout sampler
 * (policy/sampler.h), sharing the prompt's KV rows as a group's rollouts
 * do. Behind `rlvr generate`; train/conversation.h builds `rlvr chat` on it.
 *
 * The draws are those of the sampler: sample i of a call is the sequence
 * (seed, step 0, sequence i), so a prompt, a seed and the options give the
 * same tokens on every run, whatever else was generated before, and sample
 * 0 of --n 4 is the sample of --n 1. Temperature 0 is greedy. The log-prob
 * and entropy reported for each token are the model's at the temperature
 * (τ = 1 when greedy): what the trainer's forward computes for the same
 * tokens, top-p or not, with the default f32 weights (bf16 and q8_0 give
 * the fast sampler's own, docs/POLICY.md "Weight formats"). */
#ifndef RLVR_TRAIN_GENERATE_H
#define RLVR_TRAIN_GENERATE_H

#include "policy/model.h"
#include "policy/sampler.h"
#include "policy/template.h"
#include "policy/tokenizer.h"

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most samples one call draws (--n). Each holds a KV slot of the whole
 * context; memory is only committed for the positions a sample reaches. */
#define RLVR_GENERATE_MAX_SAMPLES 64

typedef struct {
    const char *checkpoint; /* an rlvr checkpoint (`rlvr model import`, SFT, RL) */
    float temperature;      /* >= 0; 0 = greedy */
    float top_p;            /* (0, 1]; 1 = the whole distribution */
    uint64_t seed;
    int32_t max_new;        /* tokens per reply; 0 = until the context is full */
    int32_t context;        /* positions; 0 = the model's max_seq */
    int32_t samples;        /* the most samples one call draws (KV slots) */
    bool ignore_stop;       /* draw through stop tokens: every sample is max_new tokens (or fills the context) */
    rlvr_sampler_weights weights; /* the sampler's weight format (f32: log-probs exactly the trainer's) */
} rlvr_generate_options;

/* Defaults: temperature 1, top_p 1, seed 1, 256 new tokens, the model's
 * context, one sample, f32 weights. */
void rlvr_generate_options_default(rlvr_generate_options *o);

/* Why a sample ended. */
typedef enum {
    RLVR_GENERATE_STOP = 0,    /* a stop token (its id is the last of the sample) */
    RLVR_GENERATE_LENGTH,      /* max_new tokens */
    RLVR_GENERATE_CONTEXT,     /* the context is full */
    RLVR_GENERATE_INTERRUPTED, /* the caller's interrupt flag was raised */
} rlvr_generate_stop;

/* "stop", "length", "context", "interrupted". */
const char *rlvr_generate_stop_name(rlvr_generate_stop s);

/* One sample. Zero-initialise; rlvr_generation_free releases it. */
typedef struct {
    int32_t *ids;       /* (n) sampled ids, a final stop token included */
    float *logprobs;    /* (n) log π(id | prefix) at the temperature (τ = 1 when greedy) */
    float *entropies;   /* (n) H(π(· | prefix)) at the same temperature */
    int32_t n, cap;
    rlvr_generate_stop stop;
    double seconds;     /* from the first draw to this sample's last */
} rlvr_generation;

void rlvr_generation_free(rlvr_generation *g);

/* What a caller hears while samples are drawn; every member may be NULL. */
typedef struct {
    /* new text of `sample` as it is sampled: the bytes its tokens decode
     * to beyond those already given (a final stop token gives none) */
    void (*on_text)(void *ctx, int sample, const char *bytes, size_t len);
    volatile sig_atomic_t *interrupt; /* nonzero: every unfinished sample stops (INTERRUPTED) */
    void *ctx;
} rlvr_generate_hooks;

typedef struct rlvr_generator rlvr_generator;

/* Loads the checkpoint's model and tokenizer and makes a sampler for
 * o->samples sequences of o->context positions stopping at the chat
 * format's stop ids (rlvr_template_stop_tokens). RLVR_EINVAL for options
 * out of range, the checkpoint's errors otherwise. */
int rlvr_generator_open(rlvr_generator **out, const rlvr_generate_options *o);
void rlvr_generator_free(rlvr_generator *g);

const rlvr_tokenizer *rlvr_generator_tokenizer(const rlvr_generator *g);
const rlvr_generate_options *rlvr_generator_options(const rlvr_generator *g);
/* Positions a sequence may hold (prompt and sample together). */
int32_t rlvr_generator_context(const rlvr_generator *g);

/* True when prompts are rendered as chat turns by default: the tokenizer is
 * rlvr's own (its native format), or a pretrained one that came with a
 * chat template. A pretrained tokenizer without one continues raw text. */
bool rlvr_generator_chats(const rlvr_generator *g);

/* The ids of a prompt, appended to `out`: with `chat`, the conversation's
 * opening, the system turn (`system` non-NULL; else the one the model's
 * template adds by itself, if any), the user turn `text` and the opening
 * of the assistant's reply, as the model's chat template renders them;
 * without, the format's first token where it has one (<|begin_of_text|>,
 * <s>, rlvr's <|bos|>) and `text` encoded with its special tokens spelled
 * out taken as those tokens. */
int rlvr_generate_prompt(const rlvr_generator *g, bool chat, const char *system, const char *text, size_t len,
                         rlvr_token_buf *out);

/* Draws n (1 .. o->samples) samples continuing `prompt` into out[0..n-1]
 * (freed first). The prompt's rows are computed once; when the previous
 * call's sample 0 and its prompt are a prefix of this prompt (a chat's
 * next turn), only the new tokens are. RLVR_ELIMIT when the prompt leaves
 * no room in the context. */
int rlvr_generate(rlvr_generator *g, const int32_t *prompt, int32_t n_prompt, int n, rlvr_generation *out,
                  const rlvr_generate_hooks *hooks);

/* The text of a sample: its ids decoded, special tokens by name, a final
 * stop token left out, ill-formed UTF-8 (a character cut by max_new, or
 * bytes no character has) as U+FFFD, as Hugging Face's decode gives it.
 * malloc'd, NUL-terminated, *len bytes. */
int rlvr_generation_text(const rlvr_generator *g, const rlvr_generation *s, char **out, size_t *len);

/* One sample as a JSON object on one line (docs/OPERATIONS.md "rlvr
 * generate"): sample, text, token_ids, logprobs, entropies, stop,
 * prompt_tokens, tokens, seconds, tokens_per_s. malloc'd. */
int rlvr_generation_json(const rlvr_generator *g, const rlvr_generation *s, int sample, int32_t prompt_tokens,
                         char **out);

#endif
