/* tests/policy/test_model_ref.c — the policy against a float64 PyTorch model.
 *
 * For a random GQA config (untied, then tied with temperature ≠ 1, then
 * with q/k/v biases, then with Llama-3 RoPE scaling), three
 * packed sequences (one longer than an attention block): logits, log-probs,
 * entropies, the SFT and RL objectives and every parameter gradient of both
 * must agree with tests/policy/ref_model.py within 1e-4 relative
 * (‖Δ‖/‖ref‖); three AdamW steps (clipping and the schedule active) fed the
 * same gradients must agree with torch.optim.AdamW within 1e-5.
 *
 * usage: test_model_ref PYTHON. Exit 77 (skipped) when PYTHON lacks torch. */
#include "core/rng.h"
#include "policy/model.h"
#include "policy/optim.h"
#include "test.h"

#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

enum { N_STEPS = 3, SKIP = 77 };

typedef struct {
    rlvr_model_config cfg;
    rlvr_adamw_config opt;
    float temperature;
    int n_seqs;
    int32_t offsets[4];
    int32_t *tokens;                  /* (T) */
    float *w_sft, *w_rl, *e_rl;       /* (T) */
    float *logits;                    /* (T, V) */
    float *lp, *ent;                  /* (T) */
    double J_sft, J_rl;
    float *g_sft, *g_rl;              /* (P) */
    float *params0;                   /* (P) */
    float *step_grads[N_STEPS];       /* (P) */
    float *step_params[N_STEPS];      /* (P) */
    size_t T, P;
} ref_case;

static float *dup_floats(const float *src, size_t n) {
    float *d = malloc(n * sizeof(float));
    memcpy(d, src, n * sizeof(float));
    return d;
}

/* Norm weights away from 1 and a wider init, so every path carries signal. */
static void perturb_params(rlvr_model *m) {
    rlvr_rng_stream s;
    rlvr_rng_stream_init(&s, 99, RLVR_RNG_TEST, 0, 1);
    const rlvr_param_views *v = rlvr_model_param_views(m);
    const rlvr_model_config *c = rlvr_model_config_of(m);
    for (int i = 0; i < c->n_layers * c->d_model; i++) {
        v->attn_norm[i] = 1.0f + 0.2f * (float)rlvr_rng_next_normal(&s);
        v->mlp_norm[i] = 1.0f + 0.2f * (float)rlvr_rng_next_normal(&s);
    }
    for (int i = 0; i < c->d_model; i++) v->final_norm[i] = 1.0f + 0.2f * (float)rlvr_rng_next_normal(&s);
    if (!c->qkv_bias) return;
    /* biases start at 0; make them as large as the projections' outputs */
    int n_q = c->n_layers * c->d_model, n_kv = n_q / c->n_heads * c->n_kv_heads;
    for (int i = 0; i < n_q; i++) v->bq[i] = 0.5f * (float)rlvr_rng_next_normal(&s);
    for (int i = 0; i < n_kv; i++) v->bk[i] = 0.5f * (float)rlvr_rng_next_normal(&s);
    for (int i = 0; i < n_kv; i++) v->bv[i] = 0.5f * (float)rlvr_rng_next_normal(&s);
}

static void make_inputs(ref_case *rc) {
    static const int32_t lens[3] = {150, 61, 23}; /* the first spans two attention blocks */
    rc->n_seqs = 3;
    rc->offsets[0] = 0;
    for (int s = 0; s < 3; s++) rc->offsets[s + 1] = rc->offsets[s] + lens[s];
    rc->T = (size_t)rc->offsets[3];
    rlvr_rng_stream s;
    rlvr_rng_stream_init(&s, 7, RLVR_RNG_TEST, 0, 2);
    rc->tokens = malloc(rc->T * sizeof(int32_t));
    rc->w_sft = calloc(rc->T, sizeof(float));
    rc->w_rl = calloc(rc->T, sizeof(float));
    rc->e_rl = calloc(rc->T, sizeof(float));
    for (size_t t = 0; t < rc->T; t++) rc->tokens[t] = (int32_t)rlvr_rng_next_below(&s, (uint32_t)rc->cfg.vocab);
    /* SFT: cross-entropy on a random ~70% mask, w = -mask/N */
    int n_masked = 0;
    for (size_t t = 0; t < rc->T; t++) {
        rc->w_sft[t] = rlvr_rng_next_uniform(&s) < 0.7 ? 1.0f : 0.0f;
        n_masked += rc->w_sft[t] != 0.0f;
    }
    for (size_t t = 0; t < rc->T; t++) rc->w_sft[t] *= -1.0f / (float)n_masked;
    /* RL: arbitrary per-token weights plus an entropy term */
    for (size_t t = 0; t < rc->T; t++) {
        rc->w_rl[t] = (float)rlvr_rng_next_normal(&s) / (float)rc->T;
        rc->e_rl[t] = 0.05f * (float)rlvr_rng_next_normal(&s) / (float)rc->T;
    }
}

static double weighted_sum(const float *w, const float *x, size_t n) {
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += (double)w[i] * x[i];
    return s;
}

/* Everything the C side computes, before Python sees anything. */
static int run_c_side(ref_case *rc) {
    rlvr_model *m;
    int rc_new = rlvr_model_new(&m, &rc->cfg);
    CHECK_OK(rc_new);
    if (rc_new) return -1;
    perturb_params(m);
    rc->P = rlvr_model_num_params(m);
    rc->params0 = dup_floats(rlvr_model_params(m), rc->P);
    rlvr_batch b = {rc->n_seqs, rc->offsets, rc->tokens};
    size_t T = rc->T;
    rc->lp = malloc(T * sizeof(float));
    rc->ent = malloc(T * sizeof(float));
    CHECK_OK(rlvr_model_forward(m, &b, rc->temperature, rc->lp, rc->ent));
    rc->logits = dup_floats(rlvr_model_logits(m), T * (size_t)rc->cfg.vocab);
    rc->J_sft = weighted_sum(rc->w_sft, rc->lp, T);
    rc->J_rl = weighted_sum(rc->w_rl, rc->lp, T) + weighted_sum(rc->e_rl, rc->ent, T);

    CHECK_OK(rlvr_model_zero_grad(m));
    CHECK_OK(rlvr_model_backward(m, rc->w_sft, NULL));
    rc->g_sft = dup_floats(rlvr_model_grads(m), rc->P);
    CHECK_OK(rlvr_model_zero_grad(m));
    CHECK_OK(rlvr_model_backward(m, rc->w_rl, rc->e_rl));
    rc->g_rl = dup_floats(rlvr_model_grads(m), rc->P);

    /* clip at 70% of the first gradient's norm so that clipping really acts */
    rc->opt.grad_clip = 0.7f * rlvr_model_grad_norm(m);
    for (int k = 0; k < N_STEPS; k++) {
        if (k > 0) {
            CHECK_OK(rlvr_model_forward(m, &b, rc->temperature, NULL, NULL));
            CHECK_OK(rlvr_model_zero_grad(m));
            CHECK_OK(rlvr_model_backward(m, rc->w_rl, rc->e_rl));
        }
        rc->step_grads[k] = dup_floats(rlvr_model_grads(m), rc->P);
        CHECK_OK(rlvr_model_adamw_step(m, &rc->opt, k + 1, NULL));
        rc->step_params[k] = dup_floats(rlvr_model_params(m), rc->P);
    }
    rlvr_model_free(m);
    return 0;
}

static void put_i32(FILE *f, int32_t x) { fwrite(&x, sizeof x, 1, f); }

static int write_input(const ref_case *rc, const char *path) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    const rlvr_model_config *c = &rc->cfg;
    const rlvr_adamw_config *o = &rc->opt;
    const rlvr_rope_scaling *sc = &c->rope_scaling;
    fwrite("RLVRREF2", 1, 8, f);
    int32_t ints[10] = {c->vocab,         c->d_model, c->n_layers,          c->n_heads, c->n_kv_heads,
                        c->d_ff,          c->tie_embeddings, c->qkv_bias, (int32_t)sc->kind, sc->original_max_seq};
    fwrite(ints, sizeof(int32_t), 10, f);
    double scaling[3] = {sc->factor, sc->low_freq_factor, sc->high_freq_factor};
    fwrite(scaling, sizeof(double), 3, f);
    double d[10] = {c->rope_theta, c->norm_eps, rc->temperature, o->lr, o->beta1, o->beta2, o->eps,
                    o->weight_decay, o->grad_clip, o->min_lr_ratio};
    fwrite(d, sizeof(double), 10, f);
    put_i32(f, (int32_t)o->warmup_steps);
    put_i32(f, (int32_t)o->total_steps);
    put_i32(f, (int32_t)o->schedule);
    put_i32(f, N_STEPS);
    put_i32(f, rc->n_seqs);
    fwrite(rc->offsets, sizeof(int32_t), (size_t)rc->n_seqs + 1, f);
    fwrite(rc->tokens, sizeof(int32_t), rc->T, f);
    fwrite(rc->params0, sizeof(float), rc->P, f);
    fwrite(rc->w_sft, sizeof(float), rc->T, f);
    fwrite(rc->w_rl, sizeof(float), rc->T, f);
    fwrite(rc->e_rl, sizeof(float), rc->T, f);
    for (int k = 0; k < N_STEPS; k++) fwrite(rc->step_grads[k], sizeof(float), rc->P, f);
    return fclose(f) == 0 ? 0 : -1;
}

/* Runs PYTHON ref_model.py IN OUT; returns its exit status (127: no python). */
static int run_python(const char *python, const char *in, const char *out) {
    char script[4096];
    test_source_path(script, sizeof script, "tests/policy/ref_model.py");
    pid_t pid = fork();
    if (pid == 0) {
        execl(python, python, script, in, out, (char *)NULL);
        _exit(127);
    }
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) < 0) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* ‖c − ref‖ / ‖ref‖ in double. */
static double rel_err(const float *c, const double *ref, size_t n) {
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)c[i] - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
    }
    return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

/* The same for the update made since params0 (a stricter view of AdamW). */
static double rel_err_update(const float *c, const double *ref, const float *p0, size_t n) {
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)c[i] - ref[i], u = ref[i] - (double)p0[i];
        num += d * d;
        den += u * u;
    }
    return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

#define CHECK_REL(what, err, tol)                                                     \
    CHECK_MSG((err) <= (tol), "%s: %s relative error %.3g > %g", label, what, (double)(err), (double)(tol))

static void compare_grads(const ref_case *rc, const char *label, const char *objective, const float *g,
                          const double *ref) {
    rlvr_model *m;
    if (rlvr_model_new(&m, &rc->cfg) != 0) return;
    size_t off = 0;
    for (int i = 0; i < RLVR_PARAM_TENSORS; i++) {
        size_t n = rlvr_model_tensor_size(m, i);
        if (n == 0) continue;
        char what[96];
        snprintf(what, sizeof what, "%s grad %s", objective, rlvr_model_tensor_name(i));
        double e = rel_err(g + off, ref + off, n);
        CHECK_REL(what, e, 1e-4);
        if (getenv("RLVR_TEST_VERBOSE")) printf("  %-28s %.3g\n", what, e);
        off += n;
    }
    rlvr_model_free(m);
}

static void compare(const ref_case *rc, const char *label, const double *ref) {
    size_t T = rc->T, V = (size_t)rc->cfg.vocab, P = rc->P;
    const double *r_logits = ref, *r_lp = r_logits + T * V, *r_ent = r_lp + T, *r_J = r_ent + T;
    const double *r_gsft = r_J + 2, *r_grl = r_gsft + P, *r_after = r_grl + P;
    CHECK_REL("logits", rel_err(rc->logits, r_logits, T * V), 1e-4);
    CHECK_REL("logprob_next", rel_err(rc->lp, r_lp, T), 1e-4);
    CHECK_REL("entropy", rel_err(rc->ent, r_ent, T), 1e-4);
    CHECK_REL("J_sft", fabs(rc->J_sft - r_J[0]) / fabs(r_J[0]), 1e-4);
    CHECK_REL("J_rl", fabs(rc->J_rl - r_J[1]) / fabs(r_J[1]), 1e-4);
    compare_grads(rc, label, "sft", rc->g_sft, r_gsft);
    compare_grads(rc, label, "rl", rc->g_rl, r_grl);
    for (int k = 0; k < N_STEPS; k++) {
        char what[64];
        snprintf(what, sizeof what, "params after AdamW step %d", k + 1);
        CHECK_REL(what, rel_err(rc->step_params[k], r_after + (size_t)k * P, P), 1e-5);
        snprintf(what, sizeof what, "update after AdamW step %d", k + 1);
        double eu = rel_err_update(rc->step_params[k], r_after + (size_t)k * P, rc->params0, P);
        CHECK_REL(what, eu, 1e-5);
        if (getenv("RLVR_TEST_VERBOSE")) printf("  %-28s %.3g\n", what, eu);
    }
    printf("%s: J_sft %.6f (ref %.6f), J_rl %.6f (ref %.6f)\n", label, rc->J_sft, r_J[0], rc->J_rl, r_J[1]);
}

static void free_case(ref_case *rc) {
    free(rc->tokens);
    free(rc->w_sft);
    free(rc->w_rl);
    free(rc->e_rl);
    free(rc->logits);
    free(rc->lp);
    free(rc->ent);
    free(rc->g_sft);
    free(rc->g_rl);
    free(rc->params0);
    for (int k = 0; k < N_STEPS; k++) {
        free(rc->step_grads[k]);
        free(rc->step_params[k]);
    }
}

static double *read_doubles(const char *path, size_t n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    double *d = malloc(n * sizeof(double));
    size_t got = fread(d, sizeof(double), n, f);
    int extra = fgetc(f);
    fclose(f);
    if (got != n || extra != EOF) {
        fprintf(stderr, "%s: expected exactly %zu doubles, got %zu%s\n", path, n, got, extra != EOF ? "+" : "");
        free(d);
        return NULL;
    }
    return d;
}

/* What a case adds to the base model. */
typedef struct {
    bool tied, qkv_bias;
    rlvr_rope_scaling scaling;
} case_extras;

/* Returns SKIP when torch is missing, else 0 (failures are counted by CHECK). */
static int run_case(const char *python, const char *dir, const char *label, case_extras x, float temperature,
                    rlvr_lr_schedule schedule) {
    ref_case rc = {
        .cfg = {.vocab = 300, .d_model = 64, .n_layers = 2, .n_heads = 4, .n_kv_heads = 2, .d_ff = 172,
                .max_seq = 160, .rope_theta = 10000.0f, .rope_scaling = x.scaling, .norm_eps = 1e-5f,
                .tie_embeddings = x.tied, .qkv_bias = x.qkv_bias, .init_seed = x.tied ? 11u : 12u, .init_std = 0.08f},
        .opt = {.lr = 1e-2f, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f, .weight_decay = 0.1f,
                .warmup_steps = schedule == RLVR_LR_COSINE ? 1 : 2, .total_steps = 3, .min_lr_ratio = 0.1f,
                .schedule = schedule},
        .temperature = temperature,
    };
    make_inputs(&rc);
    if (run_c_side(&rc) != 0) {
        free_case(&rc);
        return 0;
    }
    char in[512], out[512];
    snprintf(in, sizeof in, "%s/%s.in", dir, label);
    snprintf(out, sizeof out, "%s/%s.out", dir, label);
    CHECK(write_input(&rc, in) == 0);
    int status = run_python(python, in, out);
    if (status == SKIP || status == 127) {
        printf("SKIP: %s cannot import torch%s; the PyTorch reference test needs python3-torch\n", python,
               status == 127 ? " (interpreter not found)" : "");
        free_case(&rc);
        return SKIP;
    }
    CHECK_MSG(status == 0, "%s tests/policy/ref_model.py exited with %d", python, status);
    size_t n_ref = rc.T * (size_t)rc.cfg.vocab + 2 * rc.T + 2 + (2 + N_STEPS) * rc.P;
    double *ref = status == 0 ? read_doubles(out, n_ref) : NULL;
    CHECK(status != 0 || ref != NULL);
    if (ref) compare(&rc, label, ref);
    free(ref);
    unlink(in);
    unlink(out);
    free_case(&rc);
    return 0;
}

int main(int argc, char **argv) {
    const char *python = argc > 1 ? argv[1] : "/usr/bin/python3";
    char dir[] = "/tmp/rlvr_model_ref_XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    int skip = run_case(python, dir, "untied", (case_extras){0}, 1.0f, RLVR_LR_COSINE);
    if (skip != SKIP) run_case(python, dir, "tied_t0.7", (case_extras){.tied = true}, 0.7f, RLVR_LR_CONSTANT);
    if (skip != SKIP) run_case(python, dir, "qkv_bias", (case_extras){.qkv_bias = true}, 1.0f, RLVR_LR_COSINE);
    /* head size 16, theta 1e4: wavelengths 6.3 … 2e4 against the band 256/8 … 256/1, so pairs 0-1
     * keep their frequency, 2-3 are interpolated and 4-7 slowed by 8 */
    rlvr_rope_scaling llama3 = {RLVR_ROPE_SCALING_LLAMA3, 8.0f, 1.0f, 8.0f, 256};
    if (skip != SKIP)
        run_case(python, dir, "llama3_rope", (case_extras){.scaling = llama3}, 0.7f,
                 RLVR_LR_CONSTANT);
    rmdir(dir);
    if (skip == SKIP) return SKIP;
    return test_summary("test_model_ref");
}
