/* train/config.c — the training runtime's own sections: their key tables
 * and readers (train/config.h). */
#include "train/config.h"

#include "core/error.h"
#include "enclave/config.h"
#include "envs/config.h"
#include "eval/gate.h"
#include "io/config.h"
#include "mpi/layout.h"
#include "policy/model_config.h"
#include "policy/sampler.h"
#include "rl/config.h"

#include <string.h>

const rlvr_config_key rlvr_sft_config_keys[] = {
    {"sft", "steps", RLVR_CFG_INT, "300", "optimizer steps of `rlvr sft` on demonstrations", NULL,
     RLVR_CFG_RANGE(1, 1e12)},
    {"sft", "batch_sequences", RLVR_CFG_INT, "16", "demonstrations per SFT step (drawn without replacement per epoch)",
     NULL, RLVR_CFG_RANGE(1, 1e7)},
    {"sft", "lr", RLVR_CFG_FLOAT, "1e-3", "peak SFT learning rate; the other AdamW settings come from [optim]", NULL,
     RLVR_CFG_RANGE(0, 10)},
    {"sft", "warmup_steps", RLVR_CFG_INT, "20", "SFT steps of linear warm-up", NULL, RLVR_CFG_RANGE(0, 1e12)},
    {"sft", "min_lr_ratio", RLVR_CFG_FLOAT, "0.1", "SFT cosine floor as a fraction of `lr`", NULL,
     RLVR_CFG_RANGE(0, 1)},
    {"sft", "temperature", RLVR_CFG_FLOAT, "1.0",
     "temperature of the distribution SFT fits (cross-entropy of softmax(logits/τ)); RL then samples and trains at "
     "[sampler] temperature, which may be lower to sharpen the imitated policy",
     NULL, RLVR_CFG_RANGE(0.01, 100)},
    {"sft", "extra_demos", RLVR_CFG_INT, "0",
     "built-in pool only: more train tasks, generated after the pool's (same family, seed and difficulty) into "
     "<run>/sft/demo_tasks, whose reference solutions are demonstrations too; they are not validated in enclaves "
     "(a demonstration needs no verdict, and checking costs about 3 CPU-seconds a bugfix-c task), and RL and "
     "evaluation never see them",
     NULL, RLVR_CFG_RANGE(0, 1e7)},
    {"sft", "pool_demos", RLVR_CFG_BOOL, "true",
     "false: SFT learns only from the extra_demos tasks, which then take the first train indices, and the pool's "
     "train tasks are generated after them; RL trains on tasks whose solutions SFT never saw, as the held-out "
     "ones are (needs extra_demos > 0)",
     NULL, 0, 0},
    {"sft", "recovery_share", RLVR_CFG_FLOAT, "0",
     "share of the demonstrations also played as recovery demonstrations: a first edit whose old text the file "
     "does not hold (the fix's new text), the tool's refusal, then the right edit; the mistaken turn is context, "
     "not a target",
     NULL, RLVR_CFG_RANGE(0, 1)},
    {NULL, NULL, 0, NULL, NULL, NULL, 0, 0},
};

const rlvr_config_key rlvr_tokenizer_config_keys[] = {
    {"tokenizer", "kind", RLVR_CFG_ENUM, "byte",
     "how text becomes the policy's ids: `byte` (one id per byte) or `bpe` (byte-pair merges learned by `rlvr sft` "
     "from its demonstrations, kept in <run>/tokenizer.json and in every checkpoint)",
     "byte|bpe", RLVR_CFG_ANY},
    {"tokenizer", "merges", RLVR_CFG_INT, "1024",
     "bpe: merges learned at most (the vocabulary is 267 + merges ids; [model] vocab must hold them)", NULL,
     RLVR_CFG_RANGE(1, 1e6)},
    {"tokenizer", "corpus_demos", RLVR_CFG_INT, "256",
     "bpe: the first this many demonstrations, rendered byte by byte, are the text the merges are learned from",
     NULL, RLVR_CFG_RANGE(1, 1e7)},
    {NULL, NULL, 0, NULL, NULL, NULL, 0, 0},
};

const rlvr_config_key rlvr_train_config_keys[] = {
    {"train", "steps", RLVR_CFG_INT, "100", "optimizer steps of `rlvr train` (a resumed run continues to this step)",
     NULL, RLVR_CFG_RANGE(1, 1e12)},
    {"train", "init", RLVR_CFG_STRING, "sft",
     "weights the RL run starts from: `sft` (the run's sft/ checkpoint), `scratch` ([model] init_seed) or a "
     "checkpoint path",
     NULL, RLVR_CFG_ANY},
    {"train", "max_staleness", RLVR_CFG_INT, "0",
     "Δv_max: largest policy-version lag of an admitted rollout; 0 = synchronous", NULL, RLVR_CFG_RANGE(0, 1000)},
    {"train", "rollout_policy", RLVR_CFG_ENUM, "latest",
     "weights rollout ranks generate with in bounded-async mode: latest (each new version) or promoted (only the "
     "checkpoint RUN/promoted names, written by `rlvr gate --promote`; before any promotion, the run's initial "
     "weights)",
     "latest|promoted", RLVR_CFG_ANY},
    {"train", "verify_cache", RLVR_CFG_BOOL, "true",
     "identical patches of one task are verified once per run (validated pools are deterministic)", NULL,
     RLVR_CFG_ANY},
    {"train", "verify_threads", RLVR_CFG_INT, "0",
     "a run without verifier ranks: tasks whose rollouts are verified at once (one task's rollouts in order on "
     "one thread, so verdicts do not depend on it); 0 = one per physical core",
     NULL, RLVR_CFG_RANGE(0, 4096)},
    {"train", "verify_enclaves", RLVR_CFG_INT, "64",
     "per-task verification enclaves kept alive at once (each a holder process with its namespaces and "
     "mounts); the ones idle longest are freed beyond it, and rebuilt when their task comes back",
     NULL, RLVR_CFG_RANGE(1, 1000000)},
    {NULL, NULL, 0, NULL, NULL, NULL, 0, 0},
};

const rlvr_config_key rlvr_quickstart_config_keys[] = {
    {"quickstart", "eval_samples", RLVR_CFG_INT, "4",
     "`rlvr quickstart`: samples per held-out task when it evaluates the SFT and RL checkpoints", NULL,
     RLVR_CFG_RANGE(1, 1024)},
    {NULL, NULL, 0, NULL, NULL, NULL, 0, 0},
};

/* Every section the training runtime reads, in the order of the command's
 * own list (jobs/schemas.c), which adds the sections of the command alone. */
const rlvr_config_key *const rlvr_train_schemas[] = {
    rlvr_model_config_keys,
    rlvr_optim_config_keys,
    rlvr_sampler_config_keys,
    rlvr_rl_config_keys,
    rlvr_rl_plan_config_keys,
    rlvr_sandbox_config_keys,
    rlvr_enclave_config_keys,
    rlvr_tasks_config_keys,
    rlvr_harness_config_keys,
    rlvr_layout_config_keys,
    rlvr_io_config_keys,
    rlvr_tokenizer_config_keys,
    rlvr_sft_config_keys,
    rlvr_train_config_keys,
    rlvr_quickstart_config_keys,
    rlvr_gate_config_keys,
    NULL,
};

int rlvr_sft_config_read(rlvr_sft_config *o, const rlvr_config *cfg) {
    RLVR_TRY(rlvr_config_get_int(cfg, "sft", "steps", &o->steps));
    RLVR_TRY(rlvr_config_get_int(cfg, "sft", "batch_sequences", &o->batch_sequences));
    RLVR_TRY(rlvr_config_get_double(cfg, "sft", "lr", &o->lr));
    RLVR_TRY(rlvr_config_get_int(cfg, "sft", "warmup_steps", &o->warmup_steps));
    RLVR_TRY(rlvr_config_get_double(cfg, "sft", "min_lr_ratio", &o->min_lr_ratio));
    RLVR_TRY(rlvr_config_get_double(cfg, "sft", "temperature", &o->temperature));
    RLVR_TRY(rlvr_config_get_int(cfg, "sft", "extra_demos", &o->extra_demos));
    RLVR_TRY(rlvr_config_get_bool(cfg, "sft", "pool_demos", &o->pool_demos));
    RLVR_TRY(rlvr_config_get_double(cfg, "sft", "recovery_share", &o->recovery_share));
    if (!o->pool_demos && o->extra_demos <= 0)
        return rlvr_config_error(cfg, "sft", "pool_demos",
                                 "false leaves SFT only the extra_demos tasks, and extra_demos is 0: set "
                                 "extra_demos, or pool_demos = true");
    return 0;
}

int rlvr_train_config_read(rlvr_train_config *o, const rlvr_config *cfg) {
    RLVR_TRY(rlvr_config_get_int(cfg, "train", "steps", &o->steps));
    RLVR_TRY(rlvr_config_get_string(cfg, "train", "init", &o->init));
    RLVR_TRY(rlvr_config_get_int(cfg, "train", "max_staleness", &o->max_staleness));
    RLVR_TRY(rlvr_config_get_bool(cfg, "train", "verify_cache", &o->verify_cache));
    RLVR_TRY(rlvr_config_get_int(cfg, "train", "verify_threads", &o->verify_threads));
    RLVR_TRY(rlvr_config_get_int(cfg, "train", "verify_enclaves", &o->verify_enclaves));
    const char *policy = NULL;
    RLVR_TRY(rlvr_config_get_string(cfg, "train", "rollout_policy", &policy));
    o->promoted_only = strcmp(policy, "promoted") == 0;
    if (o->promoted_only && o->max_staleness == 0)
        return rlvr_config_error(cfg, "train", "rollout_policy",
                                 "promoted needs bounded-async mode: set [train] max_staleness to at least the "
                                 "steps between promotions (synchronous rollouts always use the newest weights)");
    if (!o->init[0]) return rlvr_config_error(cfg, "train", "init", "must be sft, scratch or a checkpoint path");
    return 0;
}

int rlvr_tokenizer_config_read(rlvr_tokenizer_config *o, const rlvr_config *cfg) {
    const char *kind;
    RLVR_TRY(rlvr_config_get_string(cfg, "tokenizer", "kind", &kind));
    o->bpe = strcmp(kind, "bpe") == 0;
    RLVR_TRY(rlvr_config_get_int(cfg, "tokenizer", "merges", &o->merges));
    RLVR_TRY(rlvr_config_get_int(cfg, "tokenizer", "corpus_demos", &o->corpus_demos));
    return 0;
}
