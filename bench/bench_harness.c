/* bench/bench_harness.c — `rlvr bench harness`: rollouts per second of the
 * multi-turn harness (envs/harness.h) with heavy-tailed tool latency, for 1
 * and for 64 concurrent environments, against the ideal overlap bound of the
 * same run.
 *
 * Workload. GRPO groups of G = 8 rollouts (same task and step: the prompt is
 * prefilled once and forked) of multi-turn tasks, run through
 * rlvr_harness_run with tools in worker threads, exactly as training runs
 * them. The policy is a random-weights transformer whose output layer is set
 * so that every position draws from one fixed distribution (shape_policy):
 * turns of about `turn_tokens` tokens that end in <|end_of_turn|>, with stray
 * <|tool_call|> markers so nearly every turn is a malformed call that earns an
 * observation, never <|eos|>. The whole transformer still runs at every
 * position (prefill, batched decode, log-probs), so generation costs what it
 * costs; only what is sampled is steered, so that rollouts last several
 * turns. A rollout ends at its turn limit (or on a turn without markers).
 *
 * Tool latency. Every turn that gets an observation waits a latency drawn
 * from a lognormal law (median, σ; cut at 30 medians) with Philox keyed by
 * (seed, RLVR_RNG_TEST, step, sequence, turn), so the 1- and 64-environment
 * runs wait the same latencies for the same rollouts. It goes through the
 * harness's simulated-latency option (options.simulated_latency, for
 * benchmarks only), which waits where a tool runs — in the rollout's worker
 * thread, while the other rollouts decode — and then appends the
 * observation as a tool's. Not a `run` tool executing `sleep` in the
 * workspace sandbox, for two reasons: a sampled policy does not write valid
 * calls (and a scripted one is prefilled, not decoded in batches), and a
 * sandbox costs CPU to set up per call and per workspace (namespaces,
 * overlay, seccomp; `rlvr bench enclave` measures it), which on a small
 * machine with 64 environments would measure the sandbox, not the overlap.
 *
 * Ideal overlap bound, from quantities measured in this run: the decode step
 * time c(b) at batch b = 1 and b = E (the sampler alone, over the rollouts'
 * mean length after the prompt), the prefill time per token p (observation
 * sized chunks), and from the records each rollout's policy tokens n_r,
 * prefilled tokens m_r (its prompt unless forked, its observations) and the
 * latencies L_r it waited. With E environments the wall time is at least
 *   generation  Σ n_r·c(E)/E + Σ m_r·p   (every token decoded at full batch)
 *   latency     Σ chain_r / E            (chain_r = n_r·c(1) + m_r·p + L_r:
 *                                         a rollout alone, its tools in turn)
 *   longest     max chain_r
 * and the ideal rate is rollouts / max(those). ratio = measured / ideal.
 *
 * Prints one JSON object per run, then a table. */
#include "bench/bench.h"
#include "bench/latency.h"
#include "core/error.h"
#include "core/rng.h"
#include "core/sys.h"
#include "envs/harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_ENVS = 64, GROUP = 8, N_TASKS = 4, CONTEXT = 3072 };

/* What one size of the benchmark runs. */
typedef struct {
    int d_model, layers;     /* the policy */
    int turns;               /* turn limit of each rollout */
    double turn_tokens;      /* mean policy tokens per turn */
    double call_share;       /* share of <|tool_call|> among sampled tokens */
    double median_s, sigma;  /* lognormal tool latency */
    int rollouts_1, rollouts_n; /* rollouts of the 1- and the 64-environment run */
} sizes;

static const sizes QUICK = {64, 2, 5, 64, 0.25, 0.020, 1.0, 16, 128};
static const sizes FULL = {128, 2, 6, 96, 0.25, 0.050, 1.0, 32, 256};

typedef rlvr_latency_law latency_law; /* bench/latency.h, shared with bench_pipeline.c */

/* One run's figures. */
typedef struct {
    int envs, rollouts;
    double wall_s;
    int64_t turns, policy_tokens, waits, prompts_shared;
    double gen_bound_s, latency_bound_s, longest_s, ideal_s; /* ideal_s: the largest of the three */
    double latency_sum_s, latency_p99_s;
    double step_1_s, step_e_s, prefill_token_s; /* c(1), c(E), p */
} run_result;

typedef struct {
    const sizes *z;
    bool quick;
    rlvr_tokenizer *tok;
    rlvr_model *model;
    rlvr_task *tasks[N_TASKS];
    latency_law law;
    run_result runs[2];
} bench;

/* ---- latency -------------------------------------------------------------------------- */

static double draw_latency(const latency_law *law, uint32_t step, uint32_t sequence, int32_t turn) {
    return rlvr_latency_draw(law, step, sequence, turn);
}

static double latency_hook(void *arg, const rlvr_harness_job *job, int32_t turn) {
    return draw_latency(arg, job->step, job->sequence, turn);
}

/* ---- the workload ------------------------------------------------------------------------ */

/* Logits that depend on one residual dimension only: it is made large and
 * positive in every embedding, and the final norm keeps only it, so
 * logit_v ≈ lm_head[v][0]·√C at every position. Text bytes share the mass;
 * <|end_of_turn|> has 1/turn_tokens of it and <|tool_call|> call_share;
 * the other specials (<|eos|> included) almost none. */
static void shape_policy(rlvr_model *m, const rlvr_tokenizer *tok, const sizes *z) {
    const rlvr_param_views *w = rlvr_model_param_views(m);
    const rlvr_model_config *c = rlvr_model_config_of(m);
    int C = c->d_model, V = c->vocab;
    double p_end = 1.0 / z->turn_tokens, p_call = z->call_share, mass = 256.0 / (1.0 - p_end - p_call);
    int32_t end = rlvr_tokenizer_special(tok, RLVR_SPECIAL_END_OF_TURN);
    int32_t call = rlvr_tokenizer_special(tok, RLVR_SPECIAL_TOOL_CALL_OPEN);
    for (int v = 0; v < V; v++) {
        double logit = v < 256 ? 0.0 : v == end ? log(p_end * mass) : v == call ? log(p_call * mass) : -30.0;
        w->embed[(size_t)v * C] = 8.0f;
        for (int k = 0; k < C; k++) w->lm_head[(size_t)v * C + k] = k == 0 ? (float)(logit / sqrt(C)) : 0.0f;
    }
    for (int k = 0; k < C; k++) w->final_norm[k] = k == 0 ? 1.0f : 0.0f;
}

static int make_tasks(bench *b) {
    for (int i = 0; i < N_TASKS; i++) {
        char json[1024];
        snprintf(json, sizeof json,
                 "{\"format\": \"rlvr-task/1\", \"id\": \"bench-harness-%d\", \"family\": \"arith\", "
                 "\"template\": \"add\", \"split\": \"train\", \"split_key\": \"bench/%d\", \"verifier\": \"arith\", "
                 "\"prompt\": \"What is %d+%d? Check it with the tools first.\", "
                 "\"arith\": {\"kind\": \"evaluate\", \"expression\": \"%d+%d\", \"target\": %d}, "
                 "\"reference_answer\": \"%d\", \"wrong_answers\": [\"%d\"], \"tools\": [\"run\", \"submit\"], "
                 "\"budgets\": {\"turns\": %d, \"policy_tokens\": 2048, \"context_tokens\": %d}}",
                 i, i, 10 + i, 20 + i, 10 + i, 20 + i, 30 + 2 * i, 30 + 2 * i, 31 + 2 * i, b->z->turns, CONTEXT);
        RLVR_TRY(rlvr_task_parse(&b->tasks[i], json, strlen(json), "bench harness task", "."));
    }
    return 0;
}

static int bench_open(bench *b, const rlvr_bench_options *opt) {
    memset(b, 0, sizeof *b);
    b->quick = opt->quick;
    b->z = opt->quick ? &QUICK : &FULL;
    b->law = (latency_law){.seed = 17, .median_s = b->z->median_s, .sigma = b->z->sigma, .cap_s = 30 * b->z->median_s};
    RLVR_TRY(rlvr_tokenizer_new_byte(&b->tok));
    int d = b->z->d_model;
    rlvr_model_config c = {.vocab = rlvr_tokenizer_vocab_size(b->tok), .d_model = d, .n_layers = b->z->layers,
                           .n_heads = d / 32, .n_kv_heads = d / 64, .d_ff = 8 * d / 3 / 16 * 16 + 16,
                           .max_seq = CONTEXT, .rope_theta = 10000.0f, .norm_eps = 1e-5f, .init_seed = 5,
                           .init_std = 0.02f};
    RLVR_TRY(rlvr_model_new(&b->model, &c));
    shape_policy(b->model, b->tok, b->z);
    return make_tasks(b);
}

static void bench_close(bench *b) {
    for (int i = 0; i < N_TASKS; i++) rlvr_task_free(b->tasks[i]);
    rlvr_model_free(b->model);
    rlvr_tokenizer_free(b->tok);
}

static int new_sampler(rlvr_sampler **out, const bench *b, int slots) {
    rlvr_sampler_config sc;
    rlvr_sampler_config_default(&sc);
    sc.kv_slots = slots;
    sc.context = CONTEXT;
    sc.max_new_tokens = 0;
    sc.seed = 3;
    return rlvr_sampler_new(out, b->model, &sc);
}

/* ---- the sampler's costs ------------------------------------------------------------------ */

/* c(b): mean decode step time of b slots over `steps` positions after the
 * prompt (best of `rounds`); slot i is forked from the prompt in slot
 * holder + i / GROUP, as groups share their prompts in the harness. */
static int decode_step_time(rlvr_sampler *s, int holder, int batch, int steps, int rounds, double *out) {
    int32_t slots[MAX_ENVS];
    rlvr_sample samples[MAX_ENVS];
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < batch; i++) {
            slots[i] = i;
            RLVR_TRY(rlvr_sampler_fork(s, i, holder + i / GROUP, (uint32_t)i));
        }
        double t0 = rlvr_now();
        for (int k = 0; k < steps; k++) RLVR_TRY(rlvr_sampler_decode(s, slots, batch, samples));
        double t = (rlvr_now() - t0) / steps;
        if (r == 0 || t < *out) *out = t;
    }
    return 0;
}

/* p: prefill time per token, in observation-sized chunks over `tokens`
 * positions after the prompt (best of `rounds`). */
static int prefill_token_time(rlvr_sampler *s, int holder, const int32_t *chunk, int chunk_n, int tokens, int rounds,
                              double *out) {
    for (int r = 0; r < rounds; r++) {
        RLVR_TRY(rlvr_sampler_fork(s, 0, holder, 0));
        double t0 = rlvr_now();
        int done = 0;
        for (; done + chunk_n <= tokens; done += chunk_n) RLVR_TRY(rlvr_sampler_prefill(s, 0, chunk, chunk_n));
        double t = (rlvr_now() - t0) / (done ? done : 1);
        if (r == 0 || t < *out) *out = t;
    }
    return 0;
}

/* The prompts of the groups in flight, one per slot from `holder` on. */
static int hold_prompts(const bench *b, rlvr_sampler *s, int holder, int groups) {
    rlvr_token_buf prompt = {0};
    int rc = 0;
    for (int g = 0; rc == 0 && g < groups; g++) {
        rlvr_token_buf_clear(&prompt);
        rc = rlvr_harness_render_prompt(&prompt, b->tok, b->tasks[g % N_TASKS], NULL);
        if (rc == 0) rc = rlvr_sampler_reset(s, holder + g, (uint32_t)g, 999);
        if (rc == 0) rc = rlvr_sampler_prefill(s, holder + g, prompt.ids, prompt.n);
    }
    rlvr_token_buf_free(&prompt);
    return rc;
}

/* Measures c(1), c(envs) and p over the rollouts' mean length after the prompt. */
static int measure_costs(bench *b, run_result *rr, int mean_len) {
    rlvr_sampler *s = NULL;
    rlvr_token_buf obs = {0};
    int holder = rr->envs, groups = (rr->envs + GROUP - 1) / GROUP;
    int steps = mean_len < 16 ? 16 : mean_len, rounds = b->quick ? 2 : 3;
    if (steps > CONTEXT / 2) steps = CONTEXT / 2;
    int rc = new_sampler(&s, b, rr->envs + groups);
    if (rc == 0) rc = hold_prompts(b, s, holder, groups);
    if (rc == 0) rc = decode_step_time(s, holder, 1, steps, rounds, &rr->step_1_s);
    if (rc == 0) rc = decode_step_time(s, holder, rr->envs, steps, rounds, &rr->step_e_s);
    const char *text = "error: invalid tool call: unbalanced tool-call markers (write one <|tool_call|> JSON "
                       "<|/tool_call|> per turn)";
    if (rc == 0) rc = rlvr_template_observation(&obs, b->tok, text, strlen(text));
    if (rc == 0) rc = prefill_token_time(s, holder, obs.ids, obs.n, steps, rounds + 1, &rr->prefill_token_s);
    rlvr_token_buf_free(&obs);
    rlvr_sampler_free(s);
    return rc;
}

/* ---- one run -------------------------------------------------------------------------------- */

static void make_jobs(const bench *b, rlvr_harness_job *jobs, int n) {
    memset(jobs, 0, (size_t)n * sizeof *jobs);
    for (int i = 0; i < n; i++) {
        jobs[i].task = b->tasks[(i / GROUP) % N_TASKS];
        jobs[i].step = (uint32_t)(i / GROUP);
        jobs[i].sequence = (uint32_t)i;
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The bound's three terms from the records and the measured costs. A
 * group's prompt counts once when the environments can hold a group (the
 * ideal sharing, whatever the run achieved), else once per rollout. */
static void bound(run_result *rr, const rlvr_harness_job *jobs, const latency_law *law, double *lat, int *n_lat) {
    double gen = 0, chains = 0, longest = 0;
    for (int i = 0; i < rr->rollouts; i++) {
        const rlvr_rollout *r = &jobs[i].record;
        bool prefills_prompt = rr->envs < GROUP || i % GROUP == 0;
        int64_t n = rlvr_rollout_policy_tokens(r), m = prefills_prompt ? r->prompt_tokens : 0;
        rr->prompts_shared += jobs[i].prompt_shared;
        double waited = 0;
        for (int32_t k = 0; k < r->n_turns; k++) {
            m += r->turns[k].observation_end - r->turns[k].observation_start;
            if (r->turns[k].duration_s <= 0) continue; /* no observation, no latency */
            lat[(*n_lat)++] = draw_latency(law, jobs[i].step, jobs[i].sequence, k);
            waited += lat[*n_lat - 1];
        }
        double chain = (double)n * rr->step_1_s + (double)m * rr->prefill_token_s + waited;
        gen += (double)n * rr->step_e_s / rr->envs + (double)m * rr->prefill_token_s;
        chains += chain;
        longest = chain > longest ? chain : longest;
        rr->turns += r->n_turns;
        rr->policy_tokens += n;
        rr->latency_sum_s += waited;
    }
    rr->gen_bound_s = gen;
    rr->latency_bound_s = chains / rr->envs;
    rr->longest_s = longest;
    rr->ideal_s = fmax(gen, fmax(chains / rr->envs, longest));
}

static int run_envs(bench *b, run_result *rr, int envs, int rollouts) {
    memset(rr, 0, sizeof *rr);
    rr->envs = envs;
    rr->rollouts = rollouts;
    rlvr_sampler *s = NULL;
    rlvr_harness_job *jobs = calloc((size_t)rollouts, sizeof *jobs);
    double *lat = calloc((size_t)rollouts * (size_t)(b->z->turns + 1), sizeof *lat);
    int rc = jobs && lat ? new_sampler(&s, b, envs) : RLVR_FAIL(RLVR_ENOMEM, "bench harness: out of memory");
    rlvr_harness_options opt;
    rlvr_harness_options_default(&opt);
    opt.simulated_latency = latency_hook;
    opt.latency_arg = &b->law;
    if (rc == 0) {
        make_jobs(b, jobs, rollouts);
        double t0 = rlvr_now();
        rc = rlvr_harness_run(s, b->tok, &opt, jobs, rollouts);
        rr->wall_s = rlvr_now() - t0;
    }
    int64_t after_prompt = 0;
    for (int i = 0; rc == 0 && i < rollouts; i++) after_prompt += jobs[i].record.n_tokens - jobs[i].record.prompt_tokens;
    rlvr_sampler_free(s);
    s = NULL;
    if (rc == 0) rc = measure_costs(b, rr, (int)(after_prompt / rollouts));
    int n_lat = 0;
    if (rc == 0) bound(rr, jobs, &b->law, lat, &n_lat);
    if (rc == 0 && n_lat > 0) {
        qsort(lat, (size_t)n_lat, sizeof *lat, cmp_double);
        rr->latency_p99_s = lat[(size_t)(0.99 * (n_lat - 1))];
        rr->waits = n_lat;
    }
    for (int i = 0; jobs && i < rollouts; i++) rlvr_harness_job_clear(&jobs[i]);
    free(jobs);
    free(lat);
    return rc;
}

/* ---- output ------------------------------------------------------------------------------- */

static void config_text(const bench *b, const run_result *rr, char *out, size_t cap) {
    snprintf(out, cap, "envs=%d G=%d turns<=%d d=%d L=%d latency=lognormal(median %.0f ms, sigma %.1f)", rr->envs, GROUP,
             b->z->turns, b->z->d_model, b->z->layers, 1e3 * b->z->median_s, b->z->sigma);
}

static void emit(const bench *b, const run_result *rr, double speedup) {
    char config[160];
    config_text(b, rr, config, sizeof config);
    const char *which = rr->ideal_s == rr->gen_bound_s ? "generation" : rr->ideal_s == rr->longest_s ? "longest" : "latency";
    printf("{\"bench\":\"harness_rollouts\",\"config\":\"%s\",\"envs\":%d,\"rollouts\":%d,\"turns\":%lld,"
           "\"policy_tokens\":%lld,\"prompts_shared\":%lld,\"tool_waits\":%lld,\"latency_mean_s\":%.6g,\"latency_p99_s\":%.6g,"
           "\"wall_s\":%.6g,\"rollouts_per_s\":%.6g,\"ideal_rollouts_per_s\":%.6g,\"ratio\":%.4f,\"bound\":\"%s\","
           "\"generation_bound_s\":%.6g,\"latency_bound_s\":%.6g,\"longest_chain_s\":%.6g,\"decode_step_1_s\":%.6g,"
           "\"decode_step_s\":%.6g,\"prefill_token_s\":%.6g",
           config, rr->envs, rr->rollouts, (long long)rr->turns, (long long)rr->policy_tokens,
           (long long)rr->prompts_shared, (long long)rr->waits,
           rr->waits ? rr->latency_sum_s / (double)rr->waits : 0.0, rr->latency_p99_s, rr->wall_s,
           rr->rollouts / rr->wall_s, rr->rollouts / rr->ideal_s, rr->ideal_s / rr->wall_s, which, rr->gen_bound_s,
           rr->latency_bound_s, rr->longest_s, rr->step_1_s, rr->step_e_s, rr->prefill_token_s);
    if (speedup > 0) printf(",\"speedup\":%.4f", speedup);
    printf(",\"quick\":%s}\n", b->quick ? "true" : "false");
    fflush(stdout);
}

static void print_table(const bench *b, int threads) {
    printf("\nharness benchmark (%d threads%s; tool latency lognormal, median %.0f ms, sigma %.1f; ideal = max(generation "
           "at full batch, latency chains / envs, longest chain))\n",
           threads, b->quick ? ", quick" : "", 1e3 * b->z->median_s, b->z->sigma);
    printf("%5s %9s %6s %8s %8s %11s %9s %6s %8s %8s\n", "envs", "rollouts", "turns", "tokens", "wall s", "rollouts/s",
           "ideal/s", "ratio", "bound", "speedup");
    for (int i = 0; i < 2; i++) {
        const run_result *r = &b->runs[i];
        const char *which = r->ideal_s == r->gen_bound_s ? "gen" : r->ideal_s == r->longest_s ? "longest" : "latency";
        char speed[16] = "";
        if (i == 1) snprintf(speed, sizeof speed, "%.1fx", (r->rollouts / r->wall_s) / (b->runs[0].rollouts / b->runs[0].wall_s));
        printf("%5d %9d %6lld %8lld %8.2f %11.2f %9.2f %6.2f %8s %8s\n", r->envs, r->rollouts, (long long)r->turns,
               (long long)r->policy_tokens, r->wall_s, r->rollouts / r->wall_s, r->rollouts / r->ideal_s,
               r->ideal_s / r->wall_s, which, speed);
    }
}

int rlvr_bench_harness(const rlvr_bench_options *opt) {
    /* generation gets every core but one: the driver's own work and the
     * tools' threads need one, and OpenMP threads on every core stall at a
     * barrier whenever a tool's thread wakes up. OMP_NUM_THREADS overrides. */
    int cores = rlvr_physical_cores();
    int threads = rlvr_threads_init(getenv("OMP_NUM_THREADS") ? 0 : cores > 1 ? cores - 1 : 1);
    bench b;
    int rc = bench_open(&b, opt);
    if (rc == 0) rc = run_envs(&b, &b.runs[0], 1, b.z->rollouts_1);
    if (rc == 0) emit(&b, &b.runs[0], 0);
    if (rc == 0) rc = run_envs(&b, &b.runs[1], MAX_ENVS, b.z->rollouts_n);
    if (rc == 0) {
        const run_result *one = &b.runs[0], *many = &b.runs[1];
        emit(&b, many, (many->rollouts / many->wall_s) / (one->rollouts / one->wall_s));
    }
    if (rc == 0 && !opt->json_only) print_table(&b, threads);
    bench_close(&b);
    return rc;
}
