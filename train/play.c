/* train/play.c — one task played through the harness (train/play.h). */
#include "train/play.h"

#include "core/error.h"
#include "enclave/config.h"
#include "io/checkpoint.h"
#include "train/sampling.h"

#include <string.h>

/* The checkpoint's tokenizer, model and a sampler on it (train/sampling.h),
 * or a small random-weights model with the byte tokenizer. The sampler's
 * context fits `context` (the task's budget) and the model. */
static int load_policy(rlvr_play *p, const rlvr_play_options *o, int32_t context, rlvr_sampler_config *sc) {
    rlvr_model_config cfg;
    if (o->checkpoint) {
        rlvr_checkpoint *ck = NULL;
        RLVR_TRY(rlvr_checkpoint_open(&ck, o->checkpoint));
        int rc = rlvr_checkpoint_model_config(ck, &cfg);
        if (rc == 0) rc = rlvr_checkpoint_read_tokenizer(ck, &p->tok);
        if (rc == 0) rc = rlvr_tokenizer_check_model(p->tok, &cfg);
        sc->context = context < cfg.max_seq ? context : cfg.max_seq;
        if (rc == 0) rc = rlvr_sampling_load(ck, sc, &p->model, &p->sampler);
        rlvr_checkpoint_close(ck);
        return rc;
    }
    RLVR_TRY(rlvr_tokenizer_new_byte(&p->tok));
    cfg = (rlvr_model_config){.vocab = rlvr_tokenizer_vocab_size(p->tok), .d_model = 64, .n_layers = 2,
                              .n_heads = 4, .n_kv_heads = 2, .d_ff = 128, .max_seq = context,
                              .rope_theta = 10000.0f, .norm_eps = 1e-5f, .init_seed = o->seed, .init_std = 0.02f};
    RLVR_TRY(rlvr_model_new(&p->model, &cfg));
    sc->context = context;
    return rlvr_sampler_new(&p->sampler, p->model, sc);
}

/* The harness settings the checkpoint was trained with ([harness],
 * [repetition], [sandbox] of the run configuration it stores, the sandbox
 * host's options too), so that the deployment harness is the training
 * harness; defaults without one. */
static int harness_of_checkpoint(rlvr_harness_options *opt, rlvr_sandbox_host_options *host,
                                 const rlvr_play_options *o) {
    rlvr_harness_options_default(opt);
    *host = (rlvr_sandbox_host_options)RLVR_SANDBOX_HOST_OPTIONS_INIT;
    if (!o->checkpoint) return 0;
    rlvr_checkpoint *ck = NULL;
    RLVR_TRY(rlvr_checkpoint_open(&ck, o->checkpoint));
    const char *text = rlvr_checkpoint_info_of(ck)->config_text;
    rlvr_config *cfg = NULL;
    int rc = text && text[0] ? rlvr_config_parse(&cfg, text, o->checkpoint, o->schemas) : 0;
    if (rc == 0 && cfg) rc = rlvr_harness_options_from_config(opt, cfg);
    if (rc == 0 && cfg) rc = rlvr_sandbox_host_options_from_config(cfg, host);
    rlvr_config_free(cfg);
    rlvr_checkpoint_close(ck);
    return rc;
}

int rlvr_play_open(rlvr_play *p, const rlvr_play_options *o, int slots) {
    memset(p, 0, sizeof *p);
    rlvr_sandbox_host_options ho;
    RLVR_TRY(harness_of_checkpoint(&p->opt, &ho, o));
    RLVR_TRY(rlvr_task_load_file(&p->task, o->task));
    rlvr_task_budgets b;
    rlvr_task_budgets_resolve(&p->task->budgets, &p->opt.budgets, &b);
    rlvr_sampler_config sc;
    rlvr_sampler_config_default(&sc);
    sc.temperature = o->temperature;
    sc.kv_slots = slots;
    sc.seed = o->seed;
    sc.weights = o->weights;
    RLVR_TRY(load_policy(p, o, (int32_t)b.context_tokens, &sc));
    if (p->task->verifier == RLVR_VERIFIER_TESTS) {
        RLVR_TRY(rlvr_sandbox_host_new(&p->host, &ho));
        p->opt.host = p->host;
    }
    return 0;
}

int rlvr_play_verify(rlvr_play *p, rlvr_harness_job *job, uint64_t seed) {
    if (p->task->verifier != RLVR_VERIFIER_TESTS) return 0;
    if (!p->verify) {
        rlvr_sandbox_limits lim;
        rlvr_sandbox_limits_default(&lim);
        RLVR_TRY(rlvr_harness_verify_task_new(&p->verify, p->host, p->task, &lim, 1));
    }
    return rlvr_harness_verify(job, p->verify, seed);
}

void rlvr_play_close(rlvr_play *p) {
    rlvr_verify_task_free(p->verify);
    rlvr_sampler_free(p->sampler);
    rlvr_model_free(p->model);
    rlvr_sandbox_host_free(p->host);
    rlvr_tokenizer_free(p->tok);
    rlvr_task_free(p->task);
    memset(p, 0, sizeof *p);
}
