/* Every default written in C against its configuration key's row: the C
 * defaults (the *_default functions and *_INIT initialisers a library
 * caller or a verb starts from) must equal what the same module reads from a
 * configuration file that sets nothing. A default changed in one place and
 * not the other fails here, naming the key. */
#include "core/config.h"
#include "enclave/config.h"
#include "enclave/diffgate.h"
#include "enclave/sandbox.h"
#include "envs/check.h"
#include "envs/harness.h"
#include "eval/eval.h"
#include "eval/gate.h"
#include "policy/sampler.h"
#include "train/config.h"
#include "test.h"

#define SAME(what, a, b) CHECK_MSG((a) == (b), "%s: C default %g, configuration default %g", what, (double)(a), (double)(b))

static void limits_equal(const char *what, const rlvr_sandbox_limits *c, const rlvr_sandbox_limits *k) {
    char name[128];
#define L(field)                                                    \
    snprintf(name, sizeof name, "%s %s", what, #field);            \
    SAME(name, c->field, k->field)
    L(wall_s);
    L(cpu_s);
    L(memory_bytes);
    L(processes);
    L(file_bytes);
    L(open_files);
    L(output_bytes);
    L(tmp_bytes);
    L(disk_bytes);
#undef L
}

int main(void) {
    rlvr_config *empty = NULL;
    CHECK_OK(rlvr_config_parse(&empty, "", "(empty)", rlvr_train_schemas));
    if (!empty) return test_summary("test_config_defaults");

    /* [sampler] */
    rlvr_sampler_config sc, sk;
    rlvr_sampler_config_default(&sc);
    CHECK_OK(rlvr_sampler_config_from(&sk, empty));
    SAME("[sampler] temperature", sc.temperature, sk.temperature);
    SAME("[sampler] kv_slots", sc.kv_slots, sk.kv_slots);
    SAME("[sampler] context_tokens", sc.context, sk.context);
    SAME("[sampler] max_new_tokens", sc.max_new_tokens, sk.max_new_tokens);

    /* [harness] and [repetition] */
    rlvr_harness_options hc, hk;
    rlvr_harness_options_default(&hc);
    rlvr_harness_options_default(&hk);
    CHECK_OK(rlvr_harness_options_from_config(&hk, empty));
    SAME("[harness] max_turns", hc.budgets.turns, hk.budgets.turns);
    SAME("[harness] max_policy_tokens", hc.budgets.policy_tokens, hk.budgets.policy_tokens);
    SAME("[harness] max_context_tokens", hc.budgets.context_tokens, hk.budgets.context_tokens);
    SAME("[harness] tool_timeout_s", hc.budgets.tool_timeout_s, hk.budgets.tool_timeout_s);
    SAME("[harness] max_malformed_calls", hc.budgets.malformed_calls, hk.budgets.malformed_calls);
    SAME("[harness] tool_output_bytes", hc.tool_output_bytes, hk.tool_output_bytes);
    SAME("[harness] tool_prompt", hc.tool_prompt, hk.tool_prompt);
    SAME("[repetition] enabled", hc.repetition.enabled, hk.repetition.enabled);
    SAME("[repetition] window", hc.repetition.window, hk.repetition.window);
    SAME("[repetition] ngram", hc.repetition.ngram, hk.repetition.ngram);
    SAME("[repetition] max_repeats", hc.repetition.max_repeats, hk.repetition.max_repeats);

    /* [sandbox] and [enclave] */
    rlvr_sandbox_limits lc, lk;
    rlvr_sandbox_limits_default(&lc);
    CHECK_OK(rlvr_sandbox_limits_from_config(empty, &lk));
    limits_equal("[sandbox]", &lc, &lk);
    rlvr_enclave_settings es;
    CHECK_OK(rlvr_enclave_settings_from_config(empty, &es));
    rlvr_sandbox_host_options ho = RLVR_SANDBOX_HOST_OPTIONS_INIT, hok;
    CHECK_OK(rlvr_sandbox_host_options_from_config(empty, &hok));
    SAME("[sandbox] uid", ho.root_uid, hok.root_uid);
    SAME("[sandbox] gid", ho.root_gid, hok.root_gid);
    SAME("[sandbox] overlay", ho.overlay, hok.overlay);
    SAME("[sandbox] landlock", ho.landlock, hok.landlock);
    CHECK_MSG(!ho.scratch_dir && !hok.scratch_dir, "[sandbox] scratch_dir: no default directory");
    CHECK_MSG(!ho.system_paths && hok.system_paths && strcmp(hok.system_paths, RLVR_SANDBOX_SYSTEM_PATHS) == 0,
              "[sandbox] system_paths: the default is RLVR_SANDBOX_SYSTEM_PATHS");
    rlvr_diffgate_rules dg = RLVR_DIFFGATE_RULES_INIT;
    SAME("[enclave] max_patch_kb", dg.max_bytes, es.max_patch_bytes);
    SAME("[enclave] max_patch_files", dg.max_files, es.max_patch_files);
    rlvr_task_check_options co = RLVR_TASK_CHECK_OPTIONS_INIT;
    SAME("[enclave] quarantine_runs", co.quarantine_runs, es.quarantine_runs);
    SAME("[enclave] quarantine_max_share", co.max_quarantine_share, es.quarantine_max_share);
    SAME("[enclave] consensus_runs", co.consensus_runs, es.consensus_runs);
    SAME("[enclave] wall_time_s", co.wall_s, es.limits.wall_s);

    /* evaluation and the gate */
    rlvr_eval_options ec, ek;
    rlvr_eval_options_default(&ec);
    rlvr_eval_options_default(&ek);
    CHECK_OK(rlvr_eval_options_from_config(&ek, empty));
    SAME("[enclave] consensus_runs (eval)", ec.consensus_runs, ek.consensus_runs);
    limits_equal("[enclave] (eval)", &ec.verify_limits, &ek.verify_limits);
    SAME("[sampler] temperature (eval)", ec.sampler.temperature, ek.sampler.temperature);
    SAME("[sampler] kv_slots (eval)", ec.sampler.kv_slots, ek.sampler.kv_slots);
    rlvr_gate_options gc, gk;
    rlvr_gate_options_default(&gc);
    rlvr_gate_options_default(&gk);
    CHECK_OK(rlvr_gate_options_from_config(&gk, empty));
    SAME("[gate] tolerance", gc.tolerance, gk.tolerance);
    SAME("[gate] regression_tolerance", gc.regression_tolerance, gk.regression_tolerance);
    SAME("[gate] compliance_min", gc.compliance_min, gk.compliance_min);
    SAME("[gate] samples", gc.samples, gk.samples);
    SAME("[gate] seed", gc.seed, gk.seed);
    SAME("[gate] limit", gc.limit, gk.limit);
    SAME("[gate] splits (count)", gc.n_checks, gk.n_checks);
    for (size_t i = 0; i < gc.n_checks && i < gk.n_checks; i++)
        CHECK_MSG(gc.checks[i].split == gk.checks[i].split && strcmp(gc.checks[i].family, gk.checks[i].family) == 0,
                  "[gate] splits: check %zu differs", i);
    SAME("gate confidence", gc.confidence, ec.confidence);
    SAME("gate resamples", gc.resamples, ec.resamples);

    rlvr_config_free(empty);
    return test_summary("test_config_defaults");
}
