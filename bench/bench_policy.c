/* bench/bench_policy.c — `rlvr bench policy`: the policy engine on CPU.
 *
 *   train   forward + backward + AdamW at d=128 L=4 T=256 and d=512 L=8 T=512;
 *           GFLOP/s against cblas_sgemm on the same matmul shapes.
 *   decode  KV-cache decoding, batch 1 vs a group of G=16 sharing a 256-token
 *           prompt: aggregate tokens/s and the speed-up of the group.
 *   prefill a group's prompt shared (one prefill + G−1 copy-on-write forks) vs
 *           G separate prefills.
 *   small   the size rlvr trains (d=128 L=4, 2048-token context): one long
 *           prompt's prefill, then decoding at batch 1 and a group of 32.
 *   weights the decode pair and one 256-token prefill again for each format
 *           of the sampler's weights ([sampler] weights = bf16, q8_0), each
 *           against its own roofline (2 and 34/32 bytes per weight instead
 *           of 4) and as a multiple of the f32 figure of the same run; and
 *           per format, the milliseconds packing the model takes (what every
 *           weight sync costs the sampler).
 *
 * Every figure is measured in this run, its ceiling too (sgemm GFLOP/s on the
 * matching shapes: M = tokens for training, M = batch rows for decode, M =
 * prefill rows for prefill), and so are the machine's FMA peak and read
 * bandwidth (bench/roofline.h), from which the d=512 decode lines get their
 * roofline bound. Prints one JSON object per line, then a table. */
#include "bench/bench.h"
#include "bench/roofline.h"
#include "core/error.h"
#include "core/hash.h"
#include "core/rng.h"
#include "core/sys.h"
#include "io/checkpoint.h"
#include "policy/model.h"
#include "policy/optim.h"
#include "policy/sampler.h"
#include "policy/tokenizer.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_ROWS = 24, FORMATS = 3, GROUP = 16, PROMPT = 256, PREFILL_ROWS = 128, MODEL_TRAIN_T = 256 };

/* One result line, kept for the table. */
typedef struct {
    char bench[32];
    char config[160];
    double tokens_per_s, gflops, ceiling, ratio;
    double speedup; /* decode group vs batch 1, shared vs unshared prefill; 0 = none */
    double roofline;         /* tokens/s the machine's FMA peak and read bandwidth allow; 0 = none */
    double roofline_speedup; /* decode group: its roofline over batch 1's; 0 = none */
    double work_tokens, work_flops, work_bytes; /* what the roofline is the bound of */
    char weights[8]; /* the sampler's weight format ("" where none applies) */
    double vs_f32;   /* tokens_per_s over the f32 row's of the same kind in this run; 0 = none */
} row;

/* What one weight sync costs the sampler in a format: packing the model. */
typedef struct {
    char config[160];
    const char *weights, *kernel;
    double ms, packed_bytes;
} pack_row;

typedef struct {
    row rows[MAX_ROWS];
    int n;
    bool quick;
    int vocab; /* of every benchmark model */
    roofline machine;
    /* model-size mode: the machine is measured again after each figure's
     * timing (remeasure) and the rows are printed at the end, every
     * roofline from the best of all the measurements; 0 = measured once */
    size_t read_bytes;
    double f32_tokens_per_s[3]; /* decode batch 1, decode group, prefill: the f32 rows' (vs_f32) */
    pack_row packs[FORMATS];
    int n_packs;
} report;

static void print_row(const report *rep, const row *r) {
    printf("{\"bench\":\"%s\",\"config\":\"%s\",\"tokens_per_s\":%.6g,\"gflops\":%.6g,\"ceiling_gflops\":%.6g,"
           "\"ratio\":%.4f",
           r->bench, r->config, r->tokens_per_s, r->gflops, r->ceiling, r->ratio);
    if (r->speedup > 0) printf(",\"speedup\":%.4f", r->speedup);
    if (r->roofline > 0)
        printf(",\"roofline_tokens_per_s\":%.6g,\"roofline_ratio\":%.4f", r->roofline, r->tokens_per_s / r->roofline);
    if (r->roofline_speedup > 0) printf(",\"roofline_speedup\":%.4f", r->roofline_speedup);
    if (r->weights[0]) printf(",\"weights\":\"%s\"", r->weights);
    if (r->vs_f32 > 0) printf(",\"vs_f32\":%.4f", r->vs_f32);
    printf(",\"quick\":%s}\n", rep->quick ? "true" : "false");
    fflush(stdout);
}

/* Keeps the row for the table; prints it now unless the mode prints at the end. */
static void emit(report *rep, const row *r) {
    if (!rep->read_bytes) print_row(rep, r);
    if (rep->n < MAX_ROWS) rep->rows[rep->n++] = *r;
}

/* The row's roofline: `tokens` tokens costing `flops` and reading `bytes`
 * at the machine's limits as measured so far. */
static void set_roofline(const report *rep, row *r, double tokens, double flops, double bytes) {
    r->work_tokens = tokens;
    r->work_flops = flops;
    r->work_bytes = bytes;
    r->roofline = roofline_tokens_per_s(&rep->machine, tokens, flops, bytes);
}

/* Model-size mode: measures the machine again and keeps the larger of each
 * limit. On a shared VM the load changes from minute to minute; a limit
 * measured in a busy minute would let a figure timed in a quiet one pass
 * for more of the machine than it is. */
static int remeasure(report *rep) {
    if (!rep->read_bytes) return 0;
    roofline again;
    RLVR_TRY(roofline_measure(&again, rep->quick ? 0.3 : 1.0, rep->read_bytes));
    if (again.fma_peak_gflops > rep->machine.fma_peak_gflops) rep->machine.fma_peak_gflops = again.fma_peak_gflops;
    if (again.read_gbps > rep->machine.read_gbps) rep->machine.read_gbps = again.read_gbps;
    return 0;
}

/* The machine's limits the decode rooflines are computed from. */
static void emit_machine(const report *rep, int threads) {
    printf("{\"bench\":\"policy_machine\",\"config\":\"threads=%d fma=%d-bit\",\"fma_peak_gflops\":%.6g,"
           "\"read_gbps\":%.6g,\"quick\":%s}\n",
           threads, rep->machine.vector_bits, rep->machine.fma_peak_gflops, rep->machine.read_gbps,
           rep->quick ? "true" : "false");
    fflush(stdout);
}

/* ---- model shapes ------------------------------------------------------- */

/* The byte tokenizer's vocabulary rounded up to a multiple of 16. */
static int bench_vocab(int *vocab) {
    rlvr_tokenizer *t = NULL;
    RLVR_TRY(rlvr_tokenizer_new_byte(&t));
    *vocab = (rlvr_tokenizer_vocab_size(t) + 15) / 16 * 16;
    rlvr_tokenizer_free(t);
    return 0;
}

/* Llama-like proportions: head size 64, two query heads per KV head,
 * d_ff ≈ 8/3·d rounded to 16. */
static rlvr_model_config shape(int vocab, int d, int L, int max_seq) {
    rlvr_model_config c = {
        .vocab = vocab,
        .d_model = d, .n_layers = L, .n_heads = d / 64, .n_kv_heads = d / 128, .d_ff = 8 * d / 3 / 16 * 16 + 16,
        .max_seq = max_seq, .rope_theta = 10000.0f, .norm_eps = 1e-5f, .tie_embeddings = false,
        .init_seed = 1, .init_std = 0.02f,
    };
    if (c.n_heads < 2) c.n_heads = 2;
    if (c.n_kv_heads < 1) c.n_kv_heads = 1;
    return c;
}

static void config_text(char *out, size_t cap, const rlvr_model_config *c, const char *extra) {
    snprintf(out, cap, "d=%d L=%d H=%d KV=%d F=%d V=%d %s", c->d_model, c->n_layers, c->n_heads, c->n_kv_heads,
             c->d_ff, c->vocab, extra);
}

/* ---- the sgemm ceiling ------------------------------------------------ */

/* One GEMM C(M,N) = op(A)·op(B) with inner size K. */
typedef struct {
    int M, N, K;
    bool trans_a, trans_b;
} gemm;

/* The weight matmuls of one layer and the head, as the forward runs them
 * (out (M=rows, OC) = inp · Wᵀ) and, when `backward`, the two products of
 * each backward (dinp = dout · W, dW = doutᵀ · inp). */
static int model_gemms(gemm *g, const rlvr_model_config *c, int rows, bool backward) {
    int C = c->d_model, kv = c->d_model / c->n_heads * c->n_kv_heads, F = c->d_ff;
    int oc[] = {C, kv, kv, C, F, F, C, c->vocab}, ic[] = {C, C, C, C, C, C, F, C};
    int n = 0;
    for (int i = 0; i < 8; i++) {
        g[n++] = (gemm){rows, oc[i], ic[i], false, true};
        if (!backward) continue;
        g[n++] = (gemm){rows, ic[i], oc[i], false, false};
        g[n++] = (gemm){oc[i], ic[i], rows, true, false};
    }
    return n;
}

/* Runs one GEMM on scratch big enough for any of them. */
static void run_gemm(const gemm *g, const float *a, const float *b, float *c) {
    int lda = g->trans_a ? g->M : g->K, ldb = g->trans_b ? g->K : g->N;
    cblas_sgemm(CblasRowMajor, g->trans_a ? CblasTrans : CblasNoTrans, g->trans_b ? CblasTrans : CblasNoTrans, g->M,
                g->N, g->K, 1.0f, a, lda, b, ldb, 0.0f, c, g->N);
}

/* sgemm GFLOP/s for the model's mix of matmul shapes at `rows` rows: every
 * shape is timed on its own (best of the rounds) and weighted by how often a
 * step runs it (L times for a layer's matmuls, once for the head), so the
 * ceiling is the rate the step's matmuls would run at through sgemm. */
static int sgemm_ceiling(double *gflops, const rlvr_model_config *c, int rows, bool backward, double min_s) {
    gemm g[24];
    int n = model_gemms(g, c, rows, backward), head = n - (backward ? 3 : 1);
    size_t big = 0;
    for (int i = 0; i < n; i++) {
        size_t sizes[3] = {(size_t)g[i].M * g[i].K, (size_t)g[i].K * g[i].N, (size_t)g[i].M * g[i].N};
        for (int j = 0; j < 3; j++) big = sizes[j] > big ? sizes[j] : big;
    }
    float *a, *b, *out;
    RLVR_ALLOC(a, big);
    RLVR_ALLOC(b, big);
    RLVR_ALLOC(out, big);
    for (size_t i = 0; i < big; i++) a[i] = b[i] = 0.01f * (float)(i % 97);
    for (int i = 0; i < n; i++) run_gemm(&g[i], a, b, out); /* warm-up */
    double best[24], t0 = rlvr_now();
    int rounds = 0;
    do {
        for (int i = 0; i < n; i++) {
            double t = rlvr_now();
            run_gemm(&g[i], a, b, out);
            t = rlvr_now() - t;
            if (rounds == 0 || t < best[i]) best[i] = t;
        }
        rounds++;
    } while (rlvr_now() - t0 < min_s || rounds < 3);
    double flops = 0, step_s = 0;
    for (int i = 0; i < n; i++) {
        double weight = i < head ? c->n_layers : 1;
        flops += weight * 2.0 * g[i].M * g[i].N * g[i].K;
        step_s += weight * best[i];
    }
    *gflops = flops / step_s / 1e9;
    free(a);
    free(b);
    free(out);
    return 0;
}

/* Weights of the model's matrices (the layers' and the head), which every
 * forward call reads once. */
static double matrix_weights(const rlvr_model_config *c) {
    gemm g[24];
    int n = model_gemms(g, c, 1, false);
    double weights = 0;
    for (int i = 0; i < n; i++) weights += (i < n - 1 ? c->n_layers : 1) * (double)g[i].N * g[i].K;
    return weights;
}

/* Their bytes in float32. */
static double weight_bytes(const rlvr_model_config *c) { return matrix_weights(c) * sizeof(float); }

/* Bytes per weight of the sampler's formats: f32, bf16, q8_0 (32 int8
 * values and an fp16 scale per 32 weights). */
static double format_bytes_per_weight(rlvr_sampler_weights w) {
    static const double bytes[FORMATS] = {4.0, 2.0, 34.0 / 32.0};
    return bytes[w];
}

/* ---- train step ---------------------------------------------------------- */

static void random_tokens(int32_t *t, int n, int V, uint32_t stream) {
    rlvr_rng_stream s;
    rlvr_rng_stream_init(&s, 7, RLVR_RNG_TEST, 0, stream);
    for (int i = 0; i < n; i++) t[i] = (int32_t)rlvr_rng_next_below(&s, (uint32_t)V);
}

static int train_step(rlvr_model *m, const rlvr_batch *b, const float *dlogprob, const rlvr_adamw_config *opt,
                      int64_t step) {
    RLVR_TRY(rlvr_model_zero_grad(m));
    RLVR_TRY(rlvr_model_forward(m, b, 1.0f, NULL, NULL));
    RLVR_TRY(rlvr_model_backward(m, dlogprob, NULL));
    return rlvr_model_adamw_step(m, opt, step, NULL);
}

/* Bytes one train step moves at least: the forward reads every matrix once,
 * the backward twice (dinp and dW), and AdamW reads parameters, gradients
 * and both moments and writes all but the gradients back. */
static double train_bytes(const rlvr_model_config *c, size_t params) {
    return 3.0 * weight_bytes(c) + 7.0 * (double)params * sizeof(float);
}

/* Best train step of sequence length T on model m (config c); with_roofline
 * adds the step's roofline bound (the model-size mode). */
static int bench_train(report *rep, rlvr_model *m, const rlvr_model_config *c_in, int T, bool with_roofline) {
    rlvr_model_config c = *c_in;
    int32_t offsets[2] = {0, T};
    int32_t *tokens = malloc((size_t)T * sizeof *tokens);
    float *dlp = malloc((size_t)T * sizeof *dlp);
    int rc = tokens && dlp ? 0 : RLVR_FAIL(RLVR_ENOMEM, "bench: out of memory");
    if (rc == 0) {
        random_tokens(tokens, T, c.vocab, 1);
        for (int t = 0; t < T; t++) dlp[t] = -1.0f / T; /* SFT-shaped objective */
    }
    rlvr_batch b = {.n_seqs = 1, .offsets = offsets, .tokens = tokens};
    rlvr_adamw_config opt = {.lr = 1e-4f, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f, .weight_decay = 0.1f,
                             .grad_clip = 1.0f, .warmup_steps = 0, .total_steps = 100, .min_lr_ratio = 0.1f,
                             .schedule = RLVR_LR_CONSTANT};
    int64_t step = 1;
    /* best step of those that fit in min_s (at least min_reps): the machine may be shared */
    double t0 = 0, best = 0, min_s = rep->quick ? 0.3 : 2.0;
    int reps = 0, min_reps = rep->quick ? 1 : 3;
    if (rc == 0) rc = train_step(m, &b, dlp, &opt, step++); /* warm-up: allocates activations, grads, moments */
    if (rc == 0) t0 = rlvr_now();
    while (rc == 0 && (rlvr_now() - t0 < min_s || reps < min_reps)) {
        double ts = rlvr_now();
        rc = train_step(m, &b, dlp, &opt, step++);
        ts = rlvr_now() - ts;
        if (reps == 0 || ts < best) best = ts;
        reps++;
    }
    row r = {.bench = "policy_train_step"};
    double ceiling = 0;
    if (rc == 0) rc = sgemm_ceiling(&ceiling, &c, T, true, rep->quick ? 0.3 : 1.0);
    if (rc == 0) {
        char extra[48];
        snprintf(extra, sizeof extra, "T=%d fwd+bwd+adamw", T);
        config_text(r.config, sizeof r.config, &c, extra);
        r.tokens_per_s = (double)T / best;
        r.gflops = rlvr_model_train_flops(&c, &b) / best / 1e9;
        r.ceiling = ceiling;
        r.ratio = r.gflops / ceiling;
        if (with_roofline) rc = remeasure(rep);
        if (with_roofline && rc == 0)
            set_roofline(rep, &r, T, rlvr_model_train_flops(&c, &b), train_bytes(&c, rlvr_model_num_params(m)));
        if (rc == 0) emit(rep, &r);
    }
    free(tokens);
    free(dlp);
    return rc;
}

static int bench_train_at(report *rep, int d, int L, int T) {
    rlvr_model_config c = shape(rep->vocab, d, L, T);
    rlvr_model *m = NULL;
    RLVR_TRY(rlvr_model_new(&m, &c));
    int rc = bench_train(rep, m, &c, T, false);
    rlvr_model_free(m);
    return rc;
}

/* ---- decode and prefill ---------------------------------------------------- */

/* Forward flops of `n` new tokens appended after `past` (head on every token). */
static double append_flops(const rlvr_model_config *c, int past, int n) {
    int32_t a[2] = {0, past + n}, b[2] = {0, past};
    rlvr_batch ba = {.n_seqs = 1, .offsets = a}, bb = {.n_seqs = 1, .offsets = b};
    return rlvr_model_forward_flops(c, &ba) - (past ? rlvr_model_forward_flops(c, &bb) : 0.0);
}

/* Prefill flops: the head runs only for the last prompt token. */
static double prefill_flops(const rlvr_model_config *c, int n) {
    return append_flops(c, 0, n) - 2.0 * (n - 1) * (double)c->vocab * c->d_model;
}

/* The decode model and a sampler whose slot HOLDER keeps the prompt, so
 * every decode measurement starts from forks of one prefill. */
typedef struct {
    rlvr_model_config c;
    rlvr_model *m;
    rlvr_sampler *s;
    rlvr_sampler_weights weights; /* the sampler's format */
    int32_t prompt[PROMPT];
    int new_tokens;
} decode_setup;

/* The matrices' bytes in the setup's format: what a forward call reads. */
static double setup_weight_bytes(const decode_setup *d) {
    return matrix_weights(&d->c) * format_bytes_per_weight(d->weights);
}

/* " weights=bf16 (avx512_bf16)": the format and the kernel running it. */
static void weights_text(char *out, size_t cap, rlvr_sampler_weights w) {
    snprintf(out, cap, " weights=%s(%s)", rlvr_sampler_weights_name(w), rlvr_sampler_weights_kernel(w));
}

/* Marks a row with the setup's format and, for f32, keeps its speed as the
 * reference of kind `kind` (0 decode batch 1, 1 decode group, 2 prefill);
 * for the others, its multiple of that reference. */
static void mark_format(report *rep, const decode_setup *d, row *r, int kind) {
    snprintf(r->weights, sizeof r->weights, "%s", rlvr_sampler_weights_name(d->weights));
    if (d->weights == RLVR_SAMPLER_WEIGHTS_F32)
        rep->f32_tokens_per_s[kind] = r->tokens_per_s;
    else if (rep->f32_tokens_per_s[kind] > 0)
        r->vs_f32 = r->tokens_per_s / rep->f32_tokens_per_s[kind];
}

enum { HOLDER = GROUP }; /* slots 0..GROUP-1 decode, slot GROUP holds the prompt */

/* d->m, when set, is the model to decode with (its configuration c). */
static int decode_setup_new(decode_setup *d, const report *rep, const rlvr_model_config *c) {
    d->c = *c;
    d->new_tokens = rep->quick ? 16 : 64;
    if (!d->m) RLVR_TRY(rlvr_model_new(&d->m, &d->c));
    rlvr_sampler_config sc;
    rlvr_sampler_config_default(&sc);
    sc.kv_slots = GROUP + 1;
    sc.max_new_tokens = 0; /* no stop tokens, no limit: exactly new_tokens per sequence */
    sc.seed = 99;
    sc.weights = d->weights;
    RLVR_TRY(rlvr_sampler_new(&d->s, d->m, &sc));
    random_tokens(d->prompt, PROMPT, 256, 2);
    RLVR_TRY(rlvr_sampler_reset(d->s, HOLDER, 0, 0));
    return rlvr_sampler_prefill(d->s, HOLDER, d->prompt, PROMPT);
}

/* g slots forked from the prompt, then new_tokens decode steps; returns
 * the decode time. */
static int time_decode(decode_setup *d, int g, double *seconds) {
    int32_t slots[GROUP];
    rlvr_sample out[GROUP];
    for (int i = 0; i < g; i++) {
        slots[i] = i;
        RLVR_TRY(rlvr_sampler_fork(d->s, i, HOLDER, (uint32_t)i));
    }
    double t0 = rlvr_now();
    for (int step = 0; step < d->new_tokens; step++) RLVR_TRY(rlvr_sampler_decode(d->s, slots, g, out));
    *seconds = rlvr_now() - t0;
    return 0;
}

/* Best of `rounds` runs of batch 1 and of the group, interleaved. */
static int best_decode(decode_setup *d, int rounds, double *t1, double *tg) {
    for (int r = 0; r < rounds; r++) {
        double a, b;
        RLVR_TRY(time_decode(d, 1, &a));
        RLVR_TRY(time_decode(d, GROUP, &b));
        if (r == 0 || a < *t1) *t1 = a;
        if (r == 0 || b < *tg) *tg = b;
    }
    return 0;
}

/* The decode pair's lines from the best batch-1 and group times t1, tg. */
static int decode_rows(report *rep, decode_setup *d, double t1, double tg) {
    double ceil1, ceilg;
    RLVR_TRY(sgemm_ceiling(&ceil1, &d->c, 1, false, rep->quick ? 0.2 : 0.5));
    RLVR_TRY(sgemm_ceiling(&ceilg, &d->c, GROUP, false, rep->quick ? 0.2 : 0.5));
    double flops = append_flops(&d->c, PROMPT, d->new_tokens); /* one sequence */
    /* each step reads every weight once and every cached key and value once: the prompt's (which the group's
     * rows share) and each row's own, on average new_tokens / 2 of them */
    double kv_row = 2.0 * d->c.n_layers * (d->c.d_model / d->c.n_heads * d->c.n_kv_heads) * sizeof(float);
    double step_shared = setup_weight_bytes(d) + PROMPT * kv_row, own = d->new_tokens / 2.0 * kv_row;
    double bytes_1 = d->new_tokens * (step_shared + own), bytes_g = d->new_tokens * (step_shared + GROUP * own);
    row r1 = {.bench = "policy_decode"}, rg = {.bench = "policy_decode"};
    char extra[96], fmt[40];
    weights_text(fmt, sizeof fmt, d->weights);
    snprintf(extra, sizeof extra, "prompt=%d new=%d batch=1%s", PROMPT, d->new_tokens, fmt);
    config_text(r1.config, sizeof r1.config, &d->c, extra);
    snprintf(extra, sizeof extra, "prompt=%d new=%d batch=%d shared%s", PROMPT, d->new_tokens, GROUP, fmt);
    config_text(rg.config, sizeof rg.config, &d->c, extra);
    r1.tokens_per_s = d->new_tokens / t1;
    r1.gflops = flops / t1 / 1e9;
    r1.ceiling = ceil1;
    r1.ratio = r1.gflops / ceil1;
    rg.tokens_per_s = GROUP * d->new_tokens / tg;
    rg.gflops = GROUP * flops / tg / 1e9;
    rg.ceiling = ceilg;
    rg.ratio = rg.gflops / ceilg;
    rg.speedup = rg.tokens_per_s / r1.tokens_per_s;
    RLVR_TRY(remeasure(rep));
    set_roofline(rep, &r1, d->new_tokens, flops, bytes_1);
    set_roofline(rep, &rg, (double)GROUP * d->new_tokens, GROUP * flops, bytes_g);
    rg.roofline_speedup = rg.roofline / r1.roofline;
    mark_format(rep, d, &r1, 0);
    mark_format(rep, d, &rg, 1);
    emit(rep, &r1);
    emit(rep, &rg);
    return 0;
}

/* The prompt made ready in all G slots: one prefill and G−1 forks (which
 * share its rows), or G prefills. */
static int time_group_prefill(decode_setup *d, bool shared, double *seconds) {
    for (int i = 0; i < GROUP; i++) RLVR_TRY(rlvr_sampler_reset(d->s, i, 0, (uint32_t)i)); /* untimed */
    double t0 = rlvr_now();
    for (int i = 0; i < GROUP; i++) {
        if (shared && i > 0) {
            RLVR_TRY(rlvr_sampler_fork(d->s, i, 0, (uint32_t)i));
            continue;
        }
        RLVR_TRY(rlvr_sampler_prefill(d->s, i, d->prompt, PROMPT));
    }
    *seconds = rlvr_now() - t0;
    return 0;
}

static int bench_prefill(report *rep, decode_setup *d) {
    double ts = 0, tu = 0, ceiling;
    /* best of interleaved rounds (one in quick mode: G prefills are the cost) */
    for (int r = 0; r < (rep->quick ? 1 : 3); r++) {
        double a, b;
        RLVR_TRY(time_group_prefill(d, true, &a));
        RLVR_TRY(time_group_prefill(d, false, &b));
        if (r == 0 || a < ts) ts = a;
        if (r == 0 || b < tu) tu = b;
    }
    RLVR_TRY(sgemm_ceiling(&ceiling, &d->c, PREFILL_ROWS, false, rep->quick ? 0.2 : 0.5));
    double one = prefill_flops(&d->c, PROMPT);
    row rs = {.bench = "policy_group_prefill"}, ru = {.bench = "policy_group_prefill"};
    char extra[64];
    snprintf(extra, sizeof extra, "G=%d prompt=%d unshared", GROUP, PROMPT);
    config_text(ru.config, sizeof ru.config, &d->c, extra);
    snprintf(extra, sizeof extra, "G=%d prompt=%d shared", GROUP, PROMPT);
    config_text(rs.config, sizeof rs.config, &d->c, extra);
    /* tokens_per_s: prompt tokens made available to the group per second */
    ru.tokens_per_s = GROUP * PROMPT / tu;
    ru.gflops = GROUP * one / tu / 1e9;
    ru.ceiling = ceiling;
    ru.ratio = ru.gflops / ceiling;
    rs.tokens_per_s = GROUP * PROMPT / ts;
    rs.gflops = one / ts / 1e9;
    rs.ceiling = ceiling;
    rs.ratio = rs.gflops / ceiling;
    rs.speedup = tu / ts;
    emit(rep, &ru);
    emit(rep, &rs);
    return 0;
}

/* ---- generation at the trained size --------------------------------------- */

/* The policy rlvr trains by default: d=128, L=4, 4 query and 2 KV heads
 * (head size 32), d_ff=352, a 2048-token context. Its kernels are small, so
 * this is where thread wake-ups and barriers show; a long prompt makes the
 * attention over the cache the larger part. */
enum { SMALL_CONTEXT = 2048, SMALL_GROUP = 32, SMALL_HOLDER = SMALL_GROUP };

static rlvr_model_config small_shape(int vocab) {
    return (rlvr_model_config){
        .vocab = vocab, .d_model = 128, .n_layers = 4, .n_heads = 4, .n_kv_heads = 2, .d_ff = 352,
        .max_seq = SMALL_CONTEXT, .rope_theta = 10000.0f, .norm_eps = 1e-5f, .tie_embeddings = false,
        .init_seed = 1, .init_std = 0.02f,
    };
}

/* Best of `rounds` prefills of the prompt into the holder slot. */
static int time_small_prefill(rlvr_sampler *s, const int32_t *prompt, int n, int rounds, double *best) {
    for (int r = 0; r < rounds; r++) {
        RLVR_TRY(rlvr_sampler_reset(s, SMALL_HOLDER, 0, 0));
        double t = rlvr_now();
        RLVR_TRY(rlvr_sampler_prefill(s, SMALL_HOLDER, prompt, n));
        t = rlvr_now() - t;
        if (r == 0 || t < *best) *best = t;
    }
    return 0;
}

/* Best of `rounds` runs of g forks of the holder decoding `steps` tokens each. */
static int time_small_decode(rlvr_sampler *s, int g, int steps, int rounds, double *best) {
    int32_t slots[SMALL_GROUP];
    rlvr_sample out[SMALL_GROUP];
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < g; i++) {
            slots[i] = i;
            RLVR_TRY(rlvr_sampler_fork(s, i, SMALL_HOLDER, (uint32_t)i));
        }
        double t = rlvr_now();
        for (int k = 0; k < steps; k++) RLVR_TRY(rlvr_sampler_decode(s, slots, g, out));
        t = rlvr_now() - t;
        if (r == 0 || t < *best) *best = t;
    }
    return 0;
}

static void small_row(report *rep, const char *bench, const rlvr_model_config *c, const char *extra, double tokens,
                      double flops, double seconds, double ceiling, double speedup) {
    row r = {.tokens_per_s = tokens / seconds, .gflops = flops / seconds / 1e9, .ceiling = ceiling};
    snprintf(r.bench, sizeof r.bench, "%s", bench);
    config_text(r.config, sizeof r.config, c, extra);
    r.ratio = r.gflops / ceiling;
    r.speedup = speedup;
    emit(rep, &r);
}

static int bench_small_generation(report *rep) {
    rlvr_model_config c = small_shape(rep->vocab);
    int new_tokens = rep->quick ? 16 : 64, n = SMALL_CONTEXT - new_tokens, rounds = rep->quick ? 2 : 3;
    rlvr_model *m = NULL;
    rlvr_sampler *s = NULL;
    int32_t *prompt = malloc((size_t)n * sizeof *prompt);
    if (!prompt) return RLVR_FAIL(RLVR_ENOMEM, "bench: out of memory for a %d-token prompt", n);
    random_tokens(prompt, n, 256, 3);
    rlvr_sampler_config sc;
    rlvr_sampler_config_default(&sc);
    sc.kv_slots = SMALL_GROUP + 1;
    sc.max_new_tokens = 0;
    sc.seed = 99;
    double tp = 0, t1 = 0, tg = 0, ceil_p = 0, ceil_1 = 0, ceil_g = 0;
    int rc = rlvr_model_new(&m, &c);
    if (rc == 0) rc = rlvr_sampler_new(&s, m, &sc);
    if (rc == 0) rc = time_small_prefill(s, prompt, n, rounds, &tp);
    if (rc == 0) rc = time_small_decode(s, 1, new_tokens, 1, &t1); /* warm-up */
    if (rc == 0) rc = time_small_decode(s, 1, new_tokens, rounds, &t1);
    if (rc == 0) rc = time_small_decode(s, SMALL_GROUP, new_tokens, rounds, &tg);
    double min_s = rep->quick ? 0.2 : 0.5;
    if (rc == 0) rc = sgemm_ceiling(&ceil_p, &c, PREFILL_ROWS, false, min_s);
    if (rc == 0) rc = sgemm_ceiling(&ceil_1, &c, 1, false, min_s);
    if (rc == 0) rc = sgemm_ceiling(&ceil_g, &c, SMALL_GROUP, false, min_s);
    if (rc == 0) {
        char extra[64];
        double one = append_flops(&c, n, new_tokens); /* one sequence's decode */
        snprintf(extra, sizeof extra, "prompt=%d", n);
        small_row(rep, "policy_prefill", &c, extra, n, prefill_flops(&c, n), tp, ceil_p, 0);
        snprintf(extra, sizeof extra, "prompt=%d new=%d batch=1", n, new_tokens);
        small_row(rep, "policy_decode", &c, extra, new_tokens, one, t1, ceil_1, 0);
        snprintf(extra, sizeof extra, "prompt=%d new=%d batch=%d shared", n, new_tokens, SMALL_GROUP);
        small_row(rep, "policy_decode", &c, extra, (double)SMALL_GROUP * new_tokens, SMALL_GROUP * one, tg, ceil_g,
                  SMALL_GROUP * t1 / tg);
    }
    rlvr_sampler_free(s);
    rlvr_model_free(m);
    free(prompt);
    return rc;
}

/* ---- one model at a pretrained model's size ---------------------------------- */

/* `--model NAME`: the shapes of published checkpoints, randomly initialised
 * like the other benchmark models (no file is read; the speed does not
 * depend on the values). smollm2-135m: SmolLM2-135M's config.json (Llama
 * architecture, tied embeddings, RMSNorm eps 1e-5); smollm2-135m-instruct,
 * the name scripts/fetch_smollm2.sh gives its import, has the same shape. */
const char *const rlvr_bench_policy_models[] = {"smollm2-135m", "smollm2-135m-instruct", NULL};
#define SMOLLM2_135M                                                                                            \
    {.vocab = 49152, .d_model = 576, .n_layers = 30, .n_heads = 9, .n_kv_heads = 3, .d_ff = 1536,              \
     .max_seq = 8192, .rope_theta = 100000.0f, .norm_eps = 1e-5f, .tie_embeddings = true, .init_seed = 1,       \
     .init_std = 0.02f}
static const rlvr_model_config named_models[] = {SMOLLM2_135M, SMOLLM2_135M};
_Static_assert(sizeof named_models / sizeof named_models[0] + 1 ==
                   sizeof rlvr_bench_policy_models / sizeof rlvr_bench_policy_models[0],
               "one configuration per model name");

int rlvr_bench_policy_model_config(const char *name, rlvr_model_config *out) {
    for (int i = 0; rlvr_bench_policy_models[i]; i++)
        if (strcmp(rlvr_bench_policy_models[i], name) == 0) {
            *out = named_models[i];
            return 0;
        }
    char known[256] = "";
    for (int i = 0; rlvr_bench_policy_models[i]; i++)
        snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "", rlvr_bench_policy_models[i]);
    return RLVR_FAIL(RLVR_EINVAL, "unknown model \"%s\"; known: %s", name, known);
}

/* The model of --model (random weights) or --checkpoint (the file's
 * weights), its context cut or stretched to the PROMPT + 128 positions the
 * benchmark uses (the KV cache is sized by it; max_seq shapes no weight, so
 * the checkpoint's parameters are copied into a model of that context).
 * `weights` says which weights they are, for the policy_weights line. */
static int model_size_model(rlvr_model **out, const rlvr_bench_options *opt, char *weights, size_t cap) {
    *out = NULL;
    rlvr_model_config c;
    rlvr_model *stored = NULL, *m = NULL;
    rlvr_checkpoint *ck = NULL;
    int rc = 0;
    if (opt->model) {
        RLVR_TRY(rlvr_bench_policy_model_config(opt->model, &c));
        snprintf(weights, cap, "random (init_seed %llu): the shape of %s", (unsigned long long)c.init_seed,
                 opt->model);
    } else {
        rc = rlvr_checkpoint_open(&ck, opt->checkpoint);
        if (rc == 0) rc = rlvr_checkpoint_load_model(ck, &stored);
        if (rc < 0) goto cleanup;
        c = *rlvr_model_config_of(stored);
        snprintf(weights, cap, "checkpoint %s", opt->checkpoint);
    }
    c.max_seq = PROMPT + 128;
    rc = rlvr_model_new(&m, &c);
    if (rc == 0 && stored) {
        size_t n = rlvr_model_num_params(m);
        if (n != rlvr_model_num_params(stored)) {
            rc = RLVR_FAIL(RLVR_EFORMAT, "%s: %zu parameters at max_seq %d, %zu at the benchmark's %d",
                           opt->checkpoint, rlvr_model_num_params(stored), rlvr_model_config_of(stored)->max_seq,
                           n, c.max_seq);
        } else {
            memcpy(rlvr_model_params(m), rlvr_model_params_read(stored), n * sizeof(float));
        }
    }
    if (rc == 0) {
        *out = m;
        m = NULL;
    }
cleanup:
    rlvr_model_free(m);
    rlvr_model_free(stored);
    rlvr_checkpoint_close(ck);
    return rc;
}

/* Which weights the model-size figures are of: the file's or random ones,
 * with the FNV-1a of the parameters before any benchmark touches them (the
 * train step updates them). */
static void emit_weights(const report *rep, const rlvr_model *m, const char *weights) {
    size_t n = rlvr_model_num_params(m);
    uint64_t h = rlvr_fnv1a64(rlvr_model_params_read(m), n * sizeof(float));
    printf("{\"bench\":\"policy_weights\",\"config\":\"");
    for (const char *p = weights; *p; p++) { /* a file name may hold JSON's special characters */
        if (*p == '"' || *p == '\\') putchar('\\');
        if ((unsigned char)*p < 0x20) printf("\\u%04x", (unsigned char)*p);
        else putchar(*p);
    }
    printf("\",\"params\":%zu,\"weights_fnv1a\":\"%016llx\",\"quick\":%s}\n", n, (unsigned long long)h,
           rep->quick ? "true" : "false");
    fflush(stdout);
}

/* One prompt's prefill into a fresh slot. */
static int time_one_prefill(decode_setup *d, double *seconds) {
    RLVR_TRY(rlvr_sampler_reset(d->s, 0, 0, 0));
    double t = rlvr_now();
    RLVR_TRY(rlvr_sampler_prefill(d->s, 0, d->prompt, PROMPT));
    *seconds = rlvr_now() - t;
    return 0;
}

/* The prefill's line from its best time, against the sgemm ceiling at the
 * prefill's rows and the roofline: the sampler runs a prompt in chunks of
 * PREFILL_ROWS rows, each reading every matrix. */
static int prefill_row(report *rep, decode_setup *d, double best) {
    double ceiling;
    RLVR_TRY(sgemm_ceiling(&ceiling, &d->c, PREFILL_ROWS, false, rep->quick ? 0.2 : 0.5));
    double flops = prefill_flops(&d->c, PROMPT), chunks = (PROMPT + PREFILL_ROWS - 1) / PREFILL_ROWS;
    row r = {.bench = "policy_prefill", .tokens_per_s = PROMPT / best, .gflops = flops / best / 1e9,
             .ceiling = ceiling};
    char extra[80], fmt[40];
    weights_text(fmt, sizeof fmt, d->weights);
    snprintf(extra, sizeof extra, "prompt=%d%s", PROMPT, fmt);
    config_text(r.config, sizeof r.config, &d->c, extra);
    r.ratio = r.gflops / ceiling;
    RLVR_TRY(remeasure(rep));
    set_roofline(rep, &r, PROMPT, flops, chunks * setup_weight_bytes(d));
    mark_format(rep, d, &r, 2);
    emit(rep, &r);
    return 0;
}

/* What a weight sync costs the sampler: the model's parameters marked
 * changed (as an optimizer step or a broadcast marks them), then the next
 * call packs them again; best of the rounds. */
static int bench_pack(report *rep, decode_setup *d) {
    double best = 0;
    for (int r = 0; r < (rep->quick ? 2 : 3); r++) {
        (void)rlvr_model_params(d->m); /* marks the parameters changed */
        RLVR_TRY(rlvr_sampler_reset(d->s, 0, 0, 0));
        RLVR_TRY(rlvr_sampler_prefill(d->s, 0, d->prompt, 1)); /* packs, then one token */
        double t = rlvr_sampler_pack_seconds(d->s);
        if (r == 0 || t < best) best = t;
    }
    if (rep->n_packs >= FORMATS) return 0;
    pack_row *p = &rep->packs[rep->n_packs++];
    config_text(p->config, sizeof p->config, &d->c, "");
    p->weights = rlvr_sampler_weights_name(d->weights);
    p->kernel = rlvr_sampler_weights_kernel(d->weights);
    p->ms = best * 1e3;
    p->packed_bytes = setup_weight_bytes(d);
    return 0;
}

static void print_pack(const report *rep, const pack_row *p) {
    printf("{\"bench\":\"policy_pack\",\"config\":\"%sweights=%s\",\"weights\":\"%s\",\"kernel\":\"%s\","
           "\"ms\":%.6g,\"packed_bytes\":%.6g,\"quick\":%s}\n",
           p->config, p->weights, p->weights, p->kernel, p->ms, p->packed_bytes, rep->quick ? "true" : "false");
    fflush(stdout);
}

/* One sampler per weight format on base's model (made here when base->m
 * is NULL): the decode pairs, one prefill each (and, with `group_prefill`,
 * f32's group prefills, shared and unshared) and the packing times. Every
 * time is the best of rounds that take the formats in turn, so each format
 * is timed in the same minutes: this VM's speed drifts by more than some of
 * the differences between formats. The lines come f32, bf16, q8_0 for the
 * decode pairs, then for the prefills. */
static int bench_formats(report *rep, decode_setup *base, bool group_prefill) {
    decode_setup d[FORMATS];
    double t1[FORMATS] = {0}, tg[FORMATS] = {0}, tp[FORMATS] = {0};
    int rc = base->m ? 0 : rlvr_model_new(&base->m, &base->c), made = 0;
    for (int f = 0; f < FORMATS && rc == 0; f++, made++) {
        d[f] = (decode_setup){.c = base->c, .m = base->m, .weights = (rlvr_sampler_weights)f};
        rc = decode_setup_new(&d[f], rep, &base->c);
    }
    int rounds = rep->quick ? 2 : 3;
    for (int r = -1; r < rounds && rc == 0; r++) /* r = −1: warm-up (first touch of the cache rows) */
        for (int f = 0; f < FORMATS && rc == 0; f++) {
            double a, b;
            rc = best_decode(&d[f], 1, &a, &b);
            if (rc == 0 && (r <= 0 || a < t1[f])) t1[f] = a;
            if (rc == 0 && (r <= 0 || b < tg[f])) tg[f] = b;
        }
    for (int f = 0; f < FORMATS && rc == 0; f++) rc = decode_rows(rep, &d[f], t1[f], tg[f]);
    if (rc == 0 && group_prefill) rc = bench_prefill(rep, &d[RLVR_SAMPLER_WEIGHTS_F32]);
    for (int r = 0; r < (rep->quick ? 1 : 3) && rc == 0; r++)
        for (int f = 0; f < FORMATS && rc == 0; f++) {
            double t;
            rc = time_one_prefill(&d[f], &t);
            if (rc == 0 && (r == 0 || t < tp[f])) tp[f] = t;
        }
    for (int f = 0; f < FORMATS && rc == 0; f++) rc = prefill_row(rep, &d[f], tp[f]);
    for (int f = 0; f < FORMATS && rc == 0; f++) {
        rc = bench_pack(rep, &d[f]);
        if (rc == 0 && !rep->read_bytes) print_pack(rep, &rep->packs[rep->n_packs - 1]);
    }
    for (int f = 0; f < made; f++) rlvr_sampler_free(d[f].s);
    return rc;
}

/* Decode (batch 1 and a shared group), one prefill and one train step of the
 * --model or --checkpoint model, every figure against its roofline. One
 * model serves all three: the sampler is freed before the train step
 * allocates gradients and moments (four copies of the parameters). */
static int bench_model_size(report *rep, const rlvr_bench_options *opt, int threads, char *weights, size_t cap) {
    decode_setup d = {0};
    RLVR_TRY(model_size_model(&d.m, opt, weights, cap));
    const rlvr_model_config c = *rlvr_model_config_of(d.m);
    rep->vocab = c.vocab;
    rep->read_bytes = (size_t)weight_bytes(&c);
    int rc = roofline_measure(&rep->machine, rep->quick ? 0.3 : 1.0, rep->read_bytes);
    if (rc == 0) emit_weights(rep, d.m, weights);
    d.c = c;
    if (rc == 0) rc = bench_formats(rep, &d, false);
    if (rc == 0) rc = bench_train(rep, d.m, &c, MODEL_TRAIN_T, true);
    rlvr_model_free(d.m);
    if (rc < 0) return rc;
    /* every roofline from the best limits of the run, then the lines */
    emit_machine(rep, threads);
    for (int i = 0; i < rep->n; i++) {
        row *r = &rep->rows[i];
        r->roofline = roofline_tokens_per_s(&rep->machine, r->work_tokens, r->work_flops, r->work_bytes);
        if (r->roofline_speedup > 0 && i > 0) r->roofline_speedup = r->roofline / rep->rows[i - 1].roofline;
        print_row(rep, r);
    }
    for (int i = 0; i < rep->n_packs; i++) print_pack(rep, &rep->packs[i]);
    return 0;
}

/* ---- table ----------------------------------------------------------------- */

static void print_table(const report *rep, int threads, const char *weights) {
    if (weights) printf("\nweights: %s", weights);
    printf("\npolicy benchmark (%d threads%s; ceiling = cblas_sgemm on the same shapes; roofline = tokens/s at "
           "the FMA peak %.1f GFLOP/s and read bandwidth %.1f GB/s measured in this run)\n",
           threads, rep->quick ? ", quick" : "", rep->machine.fma_peak_gflops, rep->machine.read_gbps);
    printf("%-22s %-96s %10s %8s %8s %6s %8s %10s %9s %8s %7s\n", "bench", "config", "tokens/s", "GFLOP/s",
           "ceiling", "ratio", "speedup", "roofline", "(speedup)", "of roof", "vs f32");
    for (int i = 0; i < rep->n; i++) {
        const row *r = &rep->rows[i];
        char speed[16] = "", roof[16] = "", roof_speed[16] = "", of_roof[16] = "", vs[16] = "";
        if (r->speedup > 0) snprintf(speed, sizeof speed, "%.2fx", r->speedup);
        if (r->roofline > 0) snprintf(roof, sizeof roof, "%.0f", r->roofline);
        if (r->roofline > 0) snprintf(of_roof, sizeof of_roof, "%.2f", r->tokens_per_s / r->roofline);
        if (r->roofline_speedup > 0) snprintf(roof_speed, sizeof roof_speed, "%.2fx", r->roofline_speedup);
        if (r->vs_f32 > 0) snprintf(vs, sizeof vs, "%.2fx", r->vs_f32);
        printf("%-22s %-96s %10.1f %8.2f %8.2f %6.2f %8s %10s %9s %8s %7s\n", r->bench, r->config, r->tokens_per_s,
               r->gflops, r->ceiling, r->ratio, speed, roof, roof_speed, of_roof, vs);
    }
    if (rep->n_packs) printf("\nweight sync: packing the model for the sampler (best of the rounds)\n");
    for (int i = 0; i < rep->n_packs; i++) {
        const pack_row *p = &rep->packs[i];
        printf("  %-5s %-12s %8.1f ms  %7.1f MB packed  (%s)\n", p->weights, p->kernel, p->ms, p->packed_bytes / 1e6,
               p->config);
    }
}

int rlvr_bench_policy(const rlvr_bench_options *opt) {
    int threads = rlvr_threads_init(0);
    report rep = {.quick = opt->quick};
    if (opt->model || opt->checkpoint) {
        char weights[600];
        int rc = bench_model_size(&rep, opt, threads, weights, sizeof weights);
        if (rc == 0 && !opt->json_only) print_table(&rep, threads, weights);
        return rc;
    }
    RLVR_TRY(bench_vocab(&rep.vocab));
    RLVR_TRY(bench_train_at(&rep, 128, 4, 256));
    RLVR_TRY(bench_train_at(&rep, 512, 8, 512));
    RLVR_TRY(roofline_measure(&rep.machine, rep.quick ? 0.3 : 1.0, 0));
    emit_machine(&rep, threads);
    decode_setup d = {.c = shape(rep.vocab, 512, 8, PROMPT + 128)};
    int rc = bench_formats(&rep, &d, true);
    rlvr_model_free(d.m);
    if (rc == 0) rc = bench_small_generation(&rep);
    if (rc == 0 && !opt->json_only) print_table(&rep, threads, NULL);
    return rc;
}
