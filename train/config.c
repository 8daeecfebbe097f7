/* train/config.c — the training runtime's own sections: their key tables
 * and readers (train/config.h). */
#include "train/config.h"

#include "core/error.h"

const rlvr_config_key rlvr_sft_config_keys[] = {
    RLVR_KEY_I64("sft", "steps", rlvr_sft_config, steps, "300", 1, 1e12,
        "optimizer steps of `rlvr sft` on demonstrations"),
    RLVR_KEY_I64("sft", "batch_sequences", rlvr_sft_config, batch_sequences, "16", 1, 1e7,
        "demonstrations per SFT step (drawn without replacement per epoch)"),
    RLVR_KEY_DOUBLE("sft", "lr", rlvr_sft_config, lr, "1e-3", 0, 10,
        "peak SFT learning rate; the other AdamW settings come from [optim]"),
    RLVR_KEY_I64("sft", "warmup_steps", rlvr_sft_config, warmup_steps, "20", 0, 1e12,
        "SFT steps of linear warm-up"),
    RLVR_KEY_DOUBLE("sft", "min_lr_ratio", rlvr_sft_config, min_lr_ratio, "0.1", 0, 1,
        "SFT cosine floor as a fraction of `lr`"),
    RLVR_KEY_DOUBLE("sft", "temperature", rlvr_sft_config, temperature, "1.0", 0.01, 100,
        "temperature of the distribution SFT fits (cross-entropy of softmax(logits/τ)); RL then samples and trains "
        "at [sampler] temperature, which may be lower to sharpen the imitated policy"),
    RLVR_KEY_I64("sft", "extra_demos", rlvr_sft_config, extra_demos, "0", 0, 1e7,
        "built-in pool only: more train tasks, generated after the pool's (same family, seed and difficulty) into "
        "<run>/sft/demo_tasks, whose reference solutions are demonstrations too; they are not validated in enclaves "
        "(a demonstration needs no verdict, and checking costs about 3 CPU-seconds a bugfix-c task), and RL and "
        "evaluation never see them"),
    RLVR_KEY_BOOL("sft", "pool_demos", rlvr_sft_config, pool_demos, "true",
        "false: SFT learns only from the extra_demos tasks, which then take the first train indices, and the pool's "
        "train tasks are generated after them; RL trains on tasks whose solutions SFT never saw, as the held-out "
        "ones are (needs extra_demos > 0)"),
    RLVR_KEY_DOUBLE("sft", "recovery_share", rlvr_sft_config, recovery_share, "0", 0, 1,
        "share of the demonstrations also played as recovery demonstrations: a first edit whose old text the file "
        "does not hold (the fix's new text), the tool's refusal, then the right edit; the mistaken turn is context, "
        "not a target"),
    RLVR_KEY_END,
};

const rlvr_config_key rlvr_tokenizer_config_keys[] = {
    RLVR_KEY_ENUM_BOOL("tokenizer", "kind", rlvr_tokenizer_config, bpe, "byte", "byte|bpe",
        "how text becomes the policy's ids: `byte` (one id per byte) or `bpe` (byte-pair merges learned by `rlvr sft` "
        "from its demonstrations, kept in <run>/tokenizer.json and in every checkpoint)"),
    RLVR_KEY_I64("tokenizer", "merges", rlvr_tokenizer_config, merges, "1024", 1, 1e6,
        "bpe: merges learned at most (the vocabulary is 267 + merges ids; [model] vocab must hold them)"),
    RLVR_KEY_I64("tokenizer", "corpus_demos", rlvr_tokenizer_config, corpus_demos, "256", 1, 1e7,
        "bpe: the first this many demonstrations, rendered byte by byte, are the text the merges are learned from"),
    RLVR_KEY_END,
};

const rlvr_config_key rlvr_pretrained_config_keys[] = {
    RLVR_KEY_STRING("pretrained", "checkpoint", rlvr_pretrained_config, checkpoint, "",
        "a checkpoint written by `rlvr model import`: the run's model shape, initial weights, tokenizer and chat "
        "format are that model's ([model]'s shape keys and [tokenizer] are then not used); empty = the run's own"),
    RLVR_KEY_ENUM_NAME("template", "family", rlvr_pretrained_config, family, "auto", "auto|native|chatml|llama3|mistral",
        "how a pretrained model's turns are rendered: auto = the family recognised from its chat template at "
        "import; a name renders that family instead (for a template rlvr does not recognise)"),
    RLVR_KEY_END,
};

const rlvr_config_key rlvr_train_config_keys[] = {
    RLVR_KEY_I64("train", "steps", rlvr_train_config, steps, "100", 1, 1e12,
        "optimizer steps of `rlvr train` (a resumed run continues to this step)"),
    RLVR_KEY_STRING("train", "init", rlvr_train_config, init, "sft",
        "weights the RL run starts from: `sft` (the run's sft/ checkpoint), `scratch` ([model] init_seed) or a "
        "checkpoint path"),
    RLVR_KEY_I64("train", "max_staleness", rlvr_train_config, max_staleness, "0", 0, 1000,
        "Δv_max: largest policy-version lag of an admitted rollout; 0 = synchronous"),
    RLVR_KEY_ENUM_BOOL("train", "rollout_policy", rlvr_train_config, promoted_only, "latest", "latest|promoted",
        "weights rollout ranks generate with in bounded-async mode: latest (each new version) or promoted (only the "
        "checkpoint RUN/promoted names, written by `rlvr gate --promote`; before any promotion, the run's initial "
        "weights)"),
    RLVR_KEY_BOOL("train", "verify_cache", rlvr_train_config, verify_cache, "true",
        "identical patches of one task are verified once per run (validated pools are deterministic)"),
    RLVR_KEY_I64("train", "verify_threads", rlvr_train_config, verify_threads, "0", 0, 4096,
        "a run without verifier ranks: tasks whose rollouts are verified at once (one task's rollouts in order on "
        "one thread, so verdicts do not depend on it); 0 = one per physical core"),
    RLVR_KEY_I64("train", "verify_enclaves", rlvr_train_config, verify_enclaves, "64", 1, 1000000,
        "per-task verification enclaves kept alive at once (each a holder process with its namespaces and "
        "mounts); the ones idle longest are freed beyond it, and rebuilt when their task comes back"),
    RLVR_KEY_END,
};

const rlvr_config_key rlvr_quickstart_config_keys[] = {
    RLVR_KEY_I64("quickstart", "eval_samples", rlvr_quickstart_config, eval_samples, "4", 1, 1024,
        "`rlvr quickstart`: samples per held-out task when it evaluates the SFT and RL checkpoints"),
    RLVR_KEY_END,
};

/* Every section the training runtime reads; the command's own list
 * (jobs/schemas.c) is this one plus the sections of the command alone. */
const rlvr_config_key *const rlvr_train_schemas[] = {RLVR_TRAIN_SCHEMA_TABLES, NULL};

int rlvr_sft_config_read(rlvr_sft_config *o, const rlvr_config *cfg) {
    RLVR_TRY(rlvr_config_fill(cfg, rlvr_sft_config_keys, "sft", o));
    if (!o->pool_demos && o->extra_demos <= 0)
        return rlvr_config_error(cfg, "sft", "pool_demos",
                                 "false leaves SFT only the extra_demos tasks, and extra_demos is 0: set "
                                 "extra_demos, or pool_demos = true");
    return 0;
}

int rlvr_train_config_read(rlvr_train_config *o, const rlvr_config *cfg) {
    RLVR_TRY(rlvr_config_fill(cfg, rlvr_train_config_keys, "train", o));
    if (o->promoted_only && o->max_staleness == 0)
        return rlvr_config_error(cfg, "train", "rollout_policy",
                                 "promoted needs bounded-async mode: set [train] max_staleness to at least the "
                                 "steps between promotions (synchronous rollouts always use the newest weights)");
    if (!o->init[0]) return rlvr_config_error(cfg, "train", "init", "must be sft, scratch or a checkpoint path");
    return 0;
}

int rlvr_pretrained_config_read(rlvr_pretrained_config *o, const rlvr_config *cfg) {
    RLVR_TRY(rlvr_config_fill(cfg, rlvr_pretrained_config_keys, "pretrained", o));
    return rlvr_config_fill(cfg, rlvr_pretrained_config_keys, "template", o);
}

int rlvr_tokenizer_config_read(rlvr_tokenizer_config *o, const rlvr_config *cfg) {
    return rlvr_config_fill(cfg, rlvr_tokenizer_config_keys, "tokenizer", o);
}

int rlvr_quickstart_config_read(rlvr_quickstart_config *o, const rlvr_config *cfg) {
    return rlvr_config_fill(cfg, rlvr_quickstart_config_keys, "quickstart", o);
}
