/* tests/policy/test_sampler_determinism.c — batch invariance (docs/POLICY.md
 * "Batch invariance"): the same sequences sampled in batches of 1, 3 and 8,
 * in different orders, in different slots, with and without a shared group
 * prompt, with 1, 2 or 4 threads and every way of splitting a forward call
 * over them (row groups, channels, both) give identical tokens, log-probs
 * and entropies (bitwise). Also checks the batch-invariant matmul directly:
 * a row's result does not depend on the other rows, their number, or how
 * rows and channels are split into parts; and the vectorised SwiGLU (element
 * by element, close to libm's formula). Two models: one whose KV heads do
 * not divide among two threads (they split each step) and one whose do (each
 * thread takes whole KV heads through q/k/v, RoPE and attention). The
 * sampler runs are repeated for each weight format ([sampler] weights =
 * f32, bf16, q8_0): the quantized kernels round activations per row, so
 * the same invariance must hold bit for bit (tests/policy/
 * test_quant_kernels.c checks the kernels themselves). */
#include "core/rng.h"
#include "policy/sampler.h"
#include "policy/sampler_kernels.h"
#include "sampler_sim.h"
#include "test.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fill_normal(float *x, size_t n, uint32_t id) {
    rlvr_rng_stream s;
    rlvr_rng_stream_init(&s, 123, RLVR_RNG_TEST, 0, id);
    for (size_t i = 0; i < n; i++) x[i] = (float)rlvr_rng_next_normal(&s);
}

/* Every row of an N-row product equals the same row computed alone (each
 * remainder of the register block's rows included), and every element is
 * the kernel's fixed order (matmul_reference_element) bit for bit. */
static void check_matmul_invariance(int C, int OC) {
    enum { N = 19 }; /* two full register blocks and a remainder at every width */
    float *inp = malloc((size_t)N * C * sizeof(float)), *w = malloc((size_t)OC * C * sizeof(float));
    float *packed = malloc(matmul_packed_floats(OC, C) * sizeof(float));
    float *all = malloc((size_t)N * OC * sizeof(float)), *one = malloc((size_t)OC * sizeof(float));
    float *rev = malloc((size_t)N * C * sizeof(float)), *rev_out = malloc((size_t)N * OC * sizeof(float));
    fill_normal(inp, (size_t)N * C, 1);
    fill_normal(w, (size_t)OC * C, 2);
    int groups_all = (OC + MATMUL_GROUP - 1) / MATMUL_GROUP;
    /* packed in two calls: panels are independent */
    matmul_pack(packed, w, OC, C, 0, groups_all / 2);
    matmul_pack(packed, w, OC, C, groups_all / 2, groups_all);
    for (int n = 0; n < N; n++) memcpy(rev + (size_t)(N - 1 - n) * C, inp + (size_t)n * C, C * sizeof(float));
    int ok = 1;
    for (int rows = 1; rows <= N; rows++) {
        matmul_forward_invariant(all, inp, packed, rows, C, OC);
        for (int n = 0; n < rows; n++) {
            matmul_forward_invariant(one, inp + (size_t)n * C, packed, 1, C, OC);
            ok &= memcmp(one, all + (size_t)n * OC, OC * sizeof(float)) == 0;
        }
    }
    matmul_forward_invariant(rev_out, rev, packed, N, C, OC);
    for (int n = 0; n < N; n++)
        ok &= memcmp(rev_out + (size_t)(N - 1 - n) * OC, all + (size_t)n * OC, OC * sizeof(float)) == 0;
    /* parts: uneven splits of the rows and of the output groups */
    matmul_target t = {rev_out, packed, OC};
    int groups = matmul_groups(&t, 1);
    CHECK(groups == groups_all);
    for (int rsplit = 1; rsplit < N; rsplit += 4)
        for (int gsplit = 0; gsplit <= groups; gsplit += groups / 3 + 1) {
            memset(rev_out, 0, (size_t)N * OC * sizeof(float));
            matmul_invariant_part(&t, 1, inp, C, 0, rsplit, 0, gsplit);
            matmul_invariant_part(&t, 1, inp, C, 0, rsplit, gsplit, groups);
            matmul_invariant_part(&t, 1, inp, C, rsplit, N, gsplit, groups);
            matmul_invariant_part(&t, 1, inp, C, rsplit, N, 0, gsplit);
            ok &= memcmp(rev_out, all, (size_t)N * OC * sizeof(float)) == 0;
        }
    /* each element is exactly the fixed order, and within float rounding of
     * the vector-lane dot product (dot_invariant, the order the sampler's
     * matmul used before the packed kernel, still used for attention scores) */
    double max_dot = 0.0;
    for (int n = 0; n < N; n++)
        for (int o = 0; o < OC; o++) {
            const float *x = inp + (size_t)n * C, *wo = w + (size_t)o * C;
            float e = matmul_reference_element(x, wo, C), got = all[(size_t)n * OC + o];
            ok &= memcmp(&e, &got, sizeof e) == 0;
            double mag = 0.0;
            for (int c = 0; c < C; c++) mag += fabs((double)x[c] * wo[c]);
            double rel = fabs((double)got - dot_invariant(x, wo, C)) / mag;
            if (rel > max_dot) max_dot = rel;
        }
    /* it is a matmul: compare with a double-precision product */
    double max_rel = 0.0;
    for (int n = 0; n < N; n++)
        for (int o = 0; o < OC; o++) {
            double ref = 0.0, mag = 0.0;
            for (int c = 0; c < C; c++) {
                ref += (double)inp[(size_t)n * C + c] * w[(size_t)o * C + c];
                mag += fabs((double)inp[(size_t)n * C + c] * w[(size_t)o * C + c]);
            }
            double rel = fabs(all[(size_t)n * OC + o] - ref) / mag;
            if (rel > max_rel) max_rel = rel;
        }
    CHECK_MSG(ok, "matmul_forward_invariant is not batch invariant at C=%d OC=%d", C, OC);
    CHECK_MSG(max_dot < 1e-5, "matmul_forward_invariant is %.3g from dot_invariant at C=%d OC=%d", max_dot, C, OC);
    CHECK_MSG(max_rel < 1e-5, "matmul_forward_invariant error %.3g at C=%d OC=%d", max_rel, C, OC);
    free(inp);
    free(w);
    free(packed);
    free(all);
    free(one);
    free(rev);
    free(rev_out);
}

/* The vectorised SwiGLU: each element alone gives the bits it gives inside
 * a longer array (any lane, the tail included), and it stays within a few
 * ulps of g·u/(1 + e^−g) in libm's expf (what the backward differentiates),
 * over the whole range of gate values (large negative gates too, where e^g
 * is clamped). */
static void check_swiglu(void) {
    enum { N = 203 }; /* vectors and a tail at every vector width */
    float gate[N], up[N], out[N], ref[N];
    fill_normal(gate, N, 7);
    fill_normal(up, N, 8);
    for (int i = 0; i < N; i++) gate[i] *= (i % 5 == 0) ? 40.0f : 3.0f; /* some beyond ±87 */
    gate[0] = 0.0f;
    gate[1] = -100.0f;
    gate[2] = 100.0f;
    swiglu_invariant(out, gate, up, N);
    for (int i = 0; i < N; i++) ref[i] = gate[i] * (1.0f / (1.0f + expf(-gate[i]))) * up[i];
    int same_alone = 0, close = 0;
    for (int i = 0; i < N; i++) {
        float alone;
        swiglu_invariant(&alone, gate + i, up + i, 1);
        same_alone += memcmp(&alone, &out[i], sizeof alone) == 0;
        close += fabsf(out[i] - ref[i]) <= 1e-6f * fabsf(ref[i]) + 1e-30f;
        if (fabsf(out[i] - ref[i]) > 1e-6f * fabsf(ref[i]) + 1e-30f)
            fprintf(stderr, "swiglu(%g, %g) = %.9g, libm %.9g\n", (double)gate[i], (double)up[i],
                    (double)out[i], (double)ref[i]);
    }
    CHECK_MSG(same_alone == N, "%d of %d SwiGLU elements change bits when computed alone", N - same_alone, N);
    CHECK_MSG(close == N, "%d of %d SwiGLU elements differ from libm's by more than 1e-6", N - close, N);
}

/* d_model = 96, six heads of 16 over three KV heads: two threads sharing
 * rows split each step (3 KV heads do not divide among them). With
 * d_model = 128 (four heads of 32 over two KV heads) each of two threads
 * takes whole KV heads through q/k/v, RoPE and attention. */
/* With `extras`, random q/k/v biases and Llama-3 RoPE scaling: the threads
 * that take whole KV heads add their heads' share of the biases. */
static rlvr_model *make_model(int d_model, int n_heads, int n_kv_heads, bool extras) {
    rlvr_model_config cfg = {
        .vocab = 272, .d_model = d_model, .n_layers = 2, .n_heads = n_heads, .n_kv_heads = n_kv_heads, .d_ff = 200,
        .max_seq = 192, .rope_theta = 10000.0f, .norm_eps = 1e-5f, .tie_embeddings = false,
        .init_seed = 21, .init_std = 0.2f, .qkv_bias = extras,
    };
    if (extras) cfg.rope_scaling = (rlvr_rope_scaling){RLVR_ROPE_SCALING_LLAMA3, 4.0f, 1.0f, 4.0f, 128};
    rlvr_model *m = NULL;
    CHECK_OK(rlvr_model_new(&m, &cfg));
    if (!m || !extras) return m;
    const rlvr_param_views *v = rlvr_model_param_views(m);
    size_t nq = (size_t)cfg.n_layers * d_model, nk = nq / n_heads * n_kv_heads;
    rlvr_rng_stream s;
    rlvr_rng_stream_init(&s, 23, RLVR_RNG_TEST, 0, 4);
    for (size_t i = 0; i < nq; i++) v->bq[i] = 0.5f * (float)rlvr_rng_next_normal(&s);
    for (size_t i = 0; i < nk; i++) v->bk[i] = 0.5f * (float)rlvr_rng_next_normal(&s);
    for (size_t i = 0; i < nk; i++) v->bv[i] = 0.5f * (float)rlvr_rng_next_normal(&s);
    return m;
}

/* How a case splits forward calls: the sampler's own choice (rows_each 0),
 * or every call to the threads with row groups of at least rows_each rows. */
static int run_case(sim_run *run, const rlvr_model *m, const rlvr_tokenizer *t, const sim_options *opt,
                    int threads, int rows_each, uint32_t step, rlvr_sampler_weights weights) {
    rlvr_sampler_config sc;
    rlvr_sampler_config_default(&sc);
    sc.temperature = 0.8f;
    sc.kv_slots = 8;
    sc.context = 192; /* small enough that some rollouts run out of context */
    sc.max_new_tokens = 32;
    sc.seed = 20240601;
    sc.weights = weights;
    rlvr_sampler *s = NULL;
    omp_set_num_threads(threads);
    int rc = rlvr_sampler_new(&s, m, &sc);
    omp_set_num_threads(2);
    if (rc < 0) return rc;
    if (rows_each > 0) sampler_set_schedule(s, 0.0, 0.0, rows_each);
    int32_t stops[RLVR_TEMPLATE_MAX_STOPS + 2];
    int n = rlvr_template_stop_tokens(t, stops);
    stops[n++] = ' ';
    stops[n++] = 'e';
    rc = rlvr_sampler_set_stop_tokens(s, stops, n);
    *run = (sim_run){.n = 8, .group_size = 4, .turns = 4, .step = step, .tok = t};
    omp_set_num_threads(threads);
    if (rc == 0) rc = sim_execute(run, s, opt);
    omp_set_num_threads(2);
    rlvr_sampler_free(s);
    return rc;
}

static void test_batches(const rlvr_tokenizer *t, int d_model, int n_heads, int n_kv_heads, bool extras,
                         rlvr_sampler_weights weights) {
    rlvr_model *m = make_model(d_model, n_heads, n_kv_heads, extras);
    if (!m) return;
    static const struct {
        sim_options opt;
        int threads, rows_each;
        const char *name;
    } cases[] = {
        {{.batch = 8, .order = 0, .share_prompt = true, .slot_shift = 0}, 2, 0, "batch 8, ascending, shared"},
        {{.batch = 1, .order = 1, .share_prompt = false, .slot_shift = 3}, 2, 0, "batch 1, descending, unshared"},
        {{.batch = 3, .order = 2, .share_prompt = true, .slot_shift = 5}, 2, 0, "batch 3, rotating, shared"},
        {{.batch = 3, .order = 1, .share_prompt = false, .slot_shift = 1}, 1, 0, "batch 3, descending, 1 thread"},
        {{.batch = 8, .order = 2, .share_prompt = false, .slot_shift = 7}, 1, 0, "batch 8, rotating, 1 thread"},
        /* forced splits: row groups (prefill groups meet per layer) */
        {{.batch = 8, .order = 1, .share_prompt = true, .slot_shift = 2}, 2, 1, "batch 8, 2 threads, row groups"},
        /* one row: the threads split channels and heads */
        {{.batch = 1, .order = 0, .share_prompt = true, .slot_shift = 4}, 2, 1, "batch 1, 2 threads, channels"},
        /* many rows, one row group: the threads split channels and heads */
        {{.batch = 8, .order = 1, .share_prompt = true, .slot_shift = 3}, 2, 64, "batch 8, 2 threads, channels"},
        /* 4 threads: two row groups of two threads each for 6..8 rows */
        {{.batch = 8, .order = 2, .share_prompt = false, .slot_shift = 6}, 4, 3, "batch 8, 4 threads, both"},
        {{.batch = 3, .order = 0, .share_prompt = false, .slot_shift = 1}, 4, 1, "batch 3, 4 threads, rows"},
    };
    sim_run base;
    CHECK_OK(run_case(&base, m, t, &cases[0].opt, cases[0].threads, cases[0].rows_each, 2, weights));
    int policy = 0, ctx_stops = 0;
    for (int i = 0; i < base.n; i++) {
        policy += rlvr_rollout_policy_tokens(&base.rec[i]);
        ctx_stops += base.rec[i].stop == RLVR_STOP_CONTEXT;
    }
    printf("%-4s d_model %d, %d heads, %d KV heads%s: baseline %d policy tokens over %d rollouts, %d ended by the "
           "context\n",
           rlvr_sampler_weights_name(weights), d_model, n_heads, n_kv_heads, extras ? ", biases, llama3 RoPE" : "",
           policy, base.n, ctx_stops);
    CHECK(policy > 100);
    for (size_t c = 1; c < sizeof cases / sizeof cases[0]; c++) {
        sim_run other;
        CHECK_OK(run_case(&other, m, t, &cases[c].opt, cases[c].threads, cases[c].rows_each, 2, weights));
        CHECK_MSG(sim_same(&base, &other), "%s: %s differs from %s", rlvr_sampler_weights_name(weights),
                  cases[c].name, cases[0].name);
        sim_free(&other);
    }
    /* a different step keys different draws: the comparison does see changes */
    sim_run moved;
    CHECK_OK(run_case(&moved, m, t, &cases[0].opt, 2, 0, 3, weights));
    CHECK(!sim_same(&base, &moved));
    sim_free(&moved);
    sim_free(&base);
    rlvr_model_free(m);
}

int main(void) {
    check_swiglu();
    check_matmul_invariance(64, 40);
    check_matmul_invariance(37, 23); /* tails in both the inner and the output dimension */
    check_matmul_invariance(200, 9);
    check_matmul_invariance(130, 2 * MATMUL_GROUP + 5); /* several panels and several input chunks */
    rlvr_tokenizer *t = NULL;
    CHECK_OK(rlvr_tokenizer_new_byte(&t));
    rlvr_sampler_weights formats[] = {RLVR_SAMPLER_WEIGHTS_F32, RLVR_SAMPLER_WEIGHTS_BF16, RLVR_SAMPLER_WEIGHTS_Q8_0};
    for (int f = 0; f < 3 && t; f++) {
        test_batches(t, 96, 6, 3, false, formats[f]);
        test_batches(t, 128, 4, 2, false, formats[f]);
        test_batches(t, 128, 4, 2, true, formats[f]);
    }
    rlvr_tokenizer_free(t);
    return test_summary("test_sampler_determinism");
}
