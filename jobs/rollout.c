/* jobs/rollout.c — `rlvr rollout --task SPEC [--checkpoint C] --n N --show`:
 * runs N rollouts of one task through the harness (envs/harness.h, the same
 * code path as training and evaluation), verifies them, and prints one line
 * per rollout; --show renders each trajectory for humans with the policy's
 * text and the tools' observations told apart. Without --checkpoint the
 * policy is a small random-weights model (to watch the harness, not to
 * solve anything). */
#include "core/error.h"
#include "enclave/reason.h"
#include "envs/harness.h"
#include "io/checkpoint.h"
#include "jobs/commands.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    const char *task, *checkpoint;
    int n;
    bool show, color;
    uint64_t seed;
    float temperature;
} rollout_opts;

static void usage(FILE *out) {
    fprintf(out, "usage: rlvr rollout --task SPEC [--checkpoint C] [--n N] [--show] [--seed S] [--temperature T]\n"
                 "                    [--color | --no-color]\n"
                 "  --task SPEC        a task spec (.json)\n"
                 "  --checkpoint C     policy weights (default: a small random-weights model)\n"
                 "  --n N              rollouts (default 1)\n"
                 "  --show             render each trajectory: policy text and observations told apart\n"
                 "  --seed S           sampling seed (default 1)\n"
                 "  --temperature T    sampling temperature (default 1)\n");
}

static int parse(rollout_opts *o, int argc, char **argv) {
    memset(o, 0, sizeof *o);
    o->n = 1;
    o->seed = 1;
    o->temperature = 1.0f;
    o->color = isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (strcmp(a, "--task") == 0 && v) o->task = argv[++i];
        else if (strcmp(a, "--checkpoint") == 0 && v) o->checkpoint = argv[++i];
        else if (strcmp(a, "--n") == 0 && v) {
            long n = strtol(v, &end, 10);
            if (*end || n < 1 || n > 4096) return -1;
            o->n = (int)n;
            i++;
        } else if (strcmp(a, "--seed") == 0 && v) {
            o->seed = strtoull(v, &end, 10);
            if (*end) return -1;
            i++;
        } else if (strcmp(a, "--temperature") == 0 && v) {
            o->temperature = strtof(v, &end);
            if (*end || !(o->temperature > 0)) return -1;
            i++;
        } else if (strcmp(a, "--show") == 0) o->show = true;
        else if (strcmp(a, "--color") == 0) o->color = true;
        else if (strcmp(a, "--no-color") == 0) o->color = false;
        else return -1;
    }
    return o->task ? 0 : -1;
}

static int load_model(rlvr_model **out, const rollout_opts *o, const rlvr_tokenizer *tok, int32_t context) {
    if (o->checkpoint) {
        rlvr_checkpoint *ck = NULL;
        RLVR_TRY(rlvr_checkpoint_open(&ck, o->checkpoint));
        int rc = rlvr_checkpoint_load_model(ck, out);
        rlvr_checkpoint_close(ck);
        return rc;
    }
    rlvr_model_config cfg = {.vocab = rlvr_tokenizer_vocab_size(tok), .d_model = 64, .n_layers = 2, .n_heads = 4,
                             .n_kv_heads = 2, .d_ff = 128, .max_seq = context, .rope_theta = 10000.0f,
                             .norm_eps = 1e-5f, .init_seed = o->seed, .init_std = 0.02f};
    return rlvr_model_new(out, &cfg);
}

static void show_text(const rlvr_tokenizer *tok, const rlvr_rollout *r, int32_t from, int32_t to) {
    size_t len = 0;
    if (to <= from || rlvr_tokenizer_decode(tok, r->tokens + from, to - from, true, NULL, 0, &len) < 0) {
        fputs("<ids outside the tokenizer>", stdout);
        return;
    }
    char *s = malloc(len + 1);
    if (s && rlvr_tokenizer_decode(tok, r->tokens + from, to - from, true, s, len + 1, &len) == 0) fwrite(s, 1, len, stdout);
    free(s);
}

static void show(const rollout_opts *o, const rlvr_tokenizer *tok, const rlvr_harness_job *j, int index) {
    const rlvr_rollout *r = &j->record;
    const char *pol = o->color ? "\033[32m" : "", *obs = o->color ? "\033[36m" : "", *dim = o->color ? "\033[2m" : "",
               *off = o->color ? "\033[0m" : "";
    printf("%s==== rollout %d: prompt (%d tokens) ====%s\n", dim, index, r->prompt_tokens, off);
    show_text(tok, r, 0, r->prompt_tokens);
    for (int32_t t = 0; t < r->n_turns; t++) {
        const rlvr_turn *tn = &r->turns[t];
        printf("\n%s---- turn %d: policy, %d tokens ----%s\n%s{{", dim, t + 1, tn->policy_end - tn->policy_start, off,
               pol);
        show_text(tok, r, tn->policy_start, tn->policy_end);
        printf("}}%s\n", off);
        if (tn->observation_end > tn->observation_start) {
            printf("%s---- observation: %s, exit %d, %.3f s%s ----%s\n%s[[", dim, tn->tool_name[0] ? tn->tool_name : "error",
                   tn->exit_status, tn->duration_s, tn->output_truncated ? ", cut" : "", off, obs);
            show_text(tok, r, tn->observation_start, tn->observation_end);
            printf("]]%s\n", off);
        }
    }
    printf("%s==== end: %s ====%s\n", dim, rlvr_stop_reason_name(r->stop), off);
}

int rlvr_cmd_rollout(int argc, char **argv) {
    rollout_opts o;
    if (parse(&o, argc, argv) < 0) {
        usage(stderr);
        return RLVR_EXIT_USAGE;
    }
    rlvr_task *task = NULL;
    rlvr_tokenizer *tok = NULL;
    rlvr_model *model = NULL;
    rlvr_sampler *s = NULL;
    rlvr_sandbox_host *host = NULL;
    rlvr_verify_task *vt = NULL;
    rlvr_harness_job *jobs = calloc((size_t)o.n, sizeof *jobs);
    rlvr_harness_options opt;
    rlvr_harness_options_default(&opt);
    int rc = jobs ? 0 : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    if (rc == 0) rc = rlvr_task_load_file(&task, o.task);
    if (rc == 0) rc = rlvr_tokenizer_new_byte(&tok);
    rlvr_task_budgets b;
    if (rc == 0) rlvr_task_budgets_resolve(&task->budgets, &opt.budgets, &b);
    if (rc == 0) rc = load_model(&model, &o, tok, (int32_t)b.context_tokens);
    if (rc == 0) rc = rlvr_tokenizer_check_model(tok, rlvr_model_config_of(model));
    if (rc == 0) {
        rlvr_sampler_config sc = RLVR_SAMPLER_CONFIG_INIT;
        sc.temperature = o.temperature;
        sc.kv_slots = o.n < 16 ? o.n : 16;
        int32_t max_seq = rlvr_model_config_of(model)->max_seq;
        sc.context = b.context_tokens < max_seq ? (int32_t)b.context_tokens : max_seq;
        sc.seed = o.seed;
        rc = rlvr_sampler_new(&s, model, &sc);
    }
    if (rc == 0 && task->verifier == RLVR_VERIFIER_TESTS) {
        rlvr_sandbox_host_options ho = RLVR_SANDBOX_HOST_OPTIONS_INIT;
        rc = rlvr_sandbox_host_new(&host, &ho);
        opt.host = host;
    }
    for (int i = 0; rc == 0 && i < o.n; i++) {
        jobs[i].task = task;
        jobs[i].sequence = (uint32_t)i;
    }
    if (rc == 0) rc = rlvr_harness_run(s, tok, &opt, jobs, o.n);
    if (rc == 0 && host) {
        rlvr_sandbox_limits lim;
        rlvr_sandbox_limits_default(&lim);
        rc = rlvr_harness_verify_task_new(&vt, host, task, &lim, 1);
        for (int i = 0; rc == 0 && i < o.n; i++) rc = rlvr_harness_verify(&jobs[i], vt, o.seed + (uint64_t)i);
    }
    int passed = 0;
    for (int i = 0; rc == 0 && i < o.n; i++) {
        const rlvr_rollout *r = &jobs[i].record;
        if (o.show) show(&o, tok, &jobs[i], i);
        printf("rollout %d: task %s, %d turns, %d policy tokens, %d tokens, stop %s, verdict %s%s%s, "
               "calls %d (%d parsed), generate %.3f s, tools %.3f s, verify %.3f s\n",
               i, r->task_id, r->n_turns, rlvr_rollout_policy_tokens(r), r->n_tokens, rlvr_stop_reason_name(r->stop),
               rlvr_verdict_name(r->verdict), r->verdict_reason ? " / " : "",
               r->verdict_reason ? rlvr_reason_name(r->verdict_reason) : "", jobs[i].calls, jobs[i].calls_parsed,
               r->timings.generate_s, r->timings.tool_s, r->timings.verify_s);
        passed += r->verdict == RLVR_VERDICT_PASS;
    }
    if (rc == 0) printf("%d of %d rollouts passed\n", passed, o.n);
    for (int i = 0; jobs && i < o.n; i++) rlvr_harness_job_clear(&jobs[i]);
    free(jobs);
    rlvr_verify_task_free(vt);
    rlvr_sampler_free(s);
    rlvr_model_free(model);
    rlvr_sandbox_host_free(host);
    rlvr_tokenizer_free(tok);
    rlvr_task_free(task);
    return rc < 0 ? rlvr_cmd_fail("rollout", rc) : RLVR_EXIT_OK;
}
