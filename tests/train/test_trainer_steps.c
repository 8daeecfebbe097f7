/* tests/train/test_trainer_steps.c — GRPO optimizer steps through the
 * trainer's library API (train/trainer.h), with no command, no MPI and no
 * files: a run parsed from text in memory, a tiny model, and a scripted
 * batch of four rollouts (prompt, policy and observation tokens, recorded
 * sampling log-probs off the current policy so that some tokens are clipped,
 * advantages of both signs). Each of three steps checks
 *   (a) the step's loss, token count and gradient norm against the token
 *       objective of rl/objective.h evaluated directly on the same log-probs,
 *       entropies and advantages (the conventions of
 *       tests/rl/test_rl_objective.c: loss = −Σ n_t·J_t, w = ∂loss/∂logp);
 *   (b) the new weights and AdamW moments against an AdamW step computed
 *       here from the gradient the step left in the model (torch.optim.AdamW:
 *       bias correction, decoupled weight decay on matrices only), with the
 *       lr, betas, eps and weight decay written in the configuration below.
 * The run directory is a fresh temporary directory that the step must leave
 * empty ([shards] write = false).
 *
 * The steps run twice: with the exact float32 sampler (behaviour mode:
 * ratios against the recorded log-probs) and with [sampler] weights =
 * bf16, whose log-probs the trainer must not take for its own: the loss is
 * then the objective's decoupled mode with π_prox = the trainer's log-probs
 * at the start of the step, and the step reports the mean and max gap and
 * the share of tokens whose importance weight reached the cap. */
#include "core/record.h"
#include "policy/model.h"
#include "rl/objective.h"
#include "train/config.h"
#include "train/pack.h"
#include "train/run.h"
#include "train/trainer.h"
#include "test.h"

#include <dirent.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The optimizer settings, once for the configuration and once for the
 * independent AdamW below. */
#define LR 0.01
#define BETA1 0.9
#define BETA2 0.95
#define EPS 1e-8
#define WEIGHT_DECAY 0.1
#define TEMPERATURE 0.8
#define ENTROPY_COEF 0.005
#define N_RECS 4
#define STEPS 3

static int config_text(char *out, size_t cap, const char *dir, const char *weights) {
    int n = snprintf(out, cap,
                     "[run]\nname = steps\nout_dir = %s\nseed = 11\n\n"
                     "[model]\nd_model = 16\nn_layers = 1\nn_heads = 2\nn_kv_heads = 1\nd_ff = 32\nmax_seq = 64\n\n"
                     "[sampler]\nkv_slots = 4\ncontext_tokens = 64\nmax_new_tokens = 16\ntemperature = %g\n"
                     "weights = %s\n\n"
                     "[harness]\nmax_turns = 1\nmax_policy_tokens = 32\nmax_context_tokens = 64\n\n"
                     "[reward]\nmax_tokens = 32\nlength_budget = 24\nlength_slope = 0.2\n\n"
                     "[optim]\nlr = %g\nbeta1 = %g\nbeta2 = %g\neps = %g\nweight_decay = %g\ngrad_clip = 0\n"
                     "warmup_steps = 0\nschedule = constant\n\n"
                     "[grpo]\ngroup_size = 2\ngroups_per_step = 2\nepochs = 1\naggregation = tokens\n\n"
                     "[train]\nsteps = %d\ninit = scratch\n\n"
                     "[shards]\nwrite = false\n",
                     dir, TEMPERATURE, weights, LR, BETA1, BETA2, EPS, WEIGHT_DECAY, STEPS);
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

/* Rollout i: a 4-token prompt, then policy tokens with one observation
 * token among them; the sampling log-probs are filled later. */
static void make_record(rlvr_rollout *r, int i, int vocab) {
    int len = 10 + 3 * i;
    CHECK_OK(rlvr_rollout_init(r, len, 1));
    for (int k = 0; k < len; k++) {
        uint8_t mask = k < 4 ? RLVR_TOKEN_PROMPT : k == 7 ? RLVR_TOKEN_OBSERVATION : RLVR_TOKEN_POLICY;
        int32_t token = (int32_t)((37 * i + 11 * k + 5) % vocab);
        CHECK_OK(rlvr_rollout_push_token(r, token, 0.0f, 0.0f, mask));
    }
}

/* The current policy's token-aligned log-probs and entropies of recs. */
static void policy_logprobs(rlvr_pack *p, rlvr_model *m, const rlvr_rollout *const *recs) {
    CHECK_OK(rlvr_pack_records(p, recs, N_RECS));
    CHECK_OK(rlvr_pack_forward(p, m, (float)TEMPERATURE));
}

/* Recorded sampling log-probs: the current policy's, moved by a fixed
 * pattern of ±0.05 … 0.8, so ratios land inside and outside [1 − ε_low,
 * 1 + ε_high] and above the importance cap. */
static void script_sampling(rlvr_rollout *const *recs, const rlvr_pack *p) {
    static const double shift[] = {0.05, -0.1, 0.8, -0.3, 0.2, -0.6, 0.0, 0.35};
    for (int i = 0; i < N_RECS; i++)
        for (int32_t k = 0; k < recs[i]->n_tokens; k++) {
            int64_t at = p->offsets[i] + k;
            recs[i]->logprobs[k] = p->policy[at] ? (float)(p->logp[at] - shift[(i + k) % 8]) : 0.0f;
        }
}

/* What the step must report besides its loss. */
typedef struct {
    int64_t tokens, capped;
    double gap_max, gap_sum;
} direct_stats;

/* (a): the objective evaluated directly, as the trainer's step must: with
 * `prox`, in decoupled mode against the current log-probs as π_prox. */
static double direct_loss(const rlvr_pack *p, const rlvr_rollout *const *recs, const double *adv,
                          const rlvr_objective_options *opt, bool prox, direct_stats *out) {
    int64_t T = p->offsets[p->n_seqs];
    double *lp = calloc((size_t)T, sizeof *lp), *lps = calloc((size_t)T, sizeof *lps);
    double *ent = calloc((size_t)T, sizeof *ent), *w = calloc((size_t)T, sizeof *w);
    double *we = calloc((size_t)T, sizeof *we);
    CHECK(lp && lps && ent && w && we);
    for (int i = 0; i < N_RECS; i++)
        for (int32_t k = 0; k < recs[i]->n_tokens; k++) {
            int64_t at = p->offsets[i] + k;
            lp[at] = p->logp[at], ent[at] = p->entropy[at], lps[at] = recs[i]->logprobs[k];
        }
    *out = (direct_stats){0};
    for (int64_t t = 0; t < T; t++) {
        if (!p->policy[t]) continue;
        double d = fabs(lp[t] - lps[t]);
        out->gap_sum += d;
        out->gap_max = d > out->gap_max ? d : out->gap_max;
        out->capped += exp(lp[t] - lps[t]) > opt->is_cap; /* π_θ = π_prox at the step's start */
    }
    rlvr_objective_input in = {.n_seqs = p->n_seqs, .offsets = p->offsets, .mask = p->policy, .logp = lp,
                               .logp_sample = lps, .logp_prox = prox ? lp : NULL, .entropy = ent, .advantage = adv};
    rlvr_objective_stats st;
    CHECK_OK(rlvr_rl_objective(w, we, &st, &in, opt));
    free(lp), free(lps), free(ent), free(w), free(we);
    out->tokens = st.tokens;
    return st.loss;
}

/* The model's flat buffers before a step. */
typedef struct {
    float *params, *m, *v;
} snapshot;

static void take_snapshot(snapshot *s, rlvr_model *m) {
    size_t n = rlvr_model_num_params(m);
    s->params = malloc(n * sizeof(float)), s->m = malloc(n * sizeof(float)), s->v = malloc(n * sizeof(float));
    CHECK(s->params && s->m && s->v);
    memcpy(s->params, rlvr_model_params_read(m), n * sizeof(float));
    memcpy(s->m, rlvr_model_adam_m(m), n * sizeof(float));
    memcpy(s->v, rlvr_model_adam_v(m), n * sizeof(float));
}

static void free_snapshot(snapshot *s) { free(s->params), free(s->m), free(s->v); }

/* (b): AdamW step `step` from `before` and the gradient the step left in
 * the model, compared element by element with what the trainer wrote. */
static void check_adamw(rlvr_model *m, const snapshot *before, int64_t step) {
    const float *g = rlvr_model_grads(m), *p = rlvr_model_params_read(m);
    const float *mm = rlvr_model_adam_m(m), *vv = rlvr_model_adam_v(m);
    double bc1 = 1.0 - pow(BETA1, (double)step), bc2 = 1.0 - pow(BETA2, (double)step);
    double worst_p = 0, worst_m = 0, worst_v = 0, moved = 0;
    size_t off = 0, decayed = 0;
    for (int t = 0; t < RLVR_PARAM_TENSORS; t++) {
        size_t n = rlvr_model_tensor_size(m, t);
        double wd = rlvr_model_tensor_decays(t) ? WEIGHT_DECAY : 0.0;
        decayed += wd > 0 ? n : 0;
        for (size_t i = off; i < off + n; i++) {
            double mi = BETA1 * before->m[i] + (1 - BETA1) * g[i];
            double vi = BETA2 * before->v[i] + (1 - BETA2) * (double)g[i] * g[i];
            double want = before->params[i] * (1 - LR * wd) - LR * (mi / bc1) / (sqrt(vi / bc2) + EPS);
            worst_p = fmax(worst_p, fabs(p[i] - want) / (1 + fabs(want)));
            /* relative to the terms' size: m may cancel to about 0 */
            double m_scale = BETA1 * fabs(before->m[i]) + (1 - BETA1) * fabs(g[i]);
            worst_m = fmax(worst_m, fabs(mm[i] - mi) / (m_scale + 1e-30));
            worst_v = fmax(worst_v, fabs(vv[i] - vi) / (vi + 1e-30));
            moved = fmax(moved, fabs(p[i] - before->params[i]));
        }
        off += n;
    }
    CHECK(off == rlvr_model_num_params(m));
    CHECK(decayed > 0 && decayed < off); /* both kinds of tensor are there */
    CHECK_MSG(worst_p < 2e-7, "step %lld: weights differ from AdamW by %g (relative)", (long long)step, worst_p);
    CHECK_MSG(worst_m < 2e-6, "step %lld: first moments differ by %g (relative)", (long long)step, worst_m);
    CHECK_MSG(worst_v < 2e-6, "step %lld: second moments differ by %g (relative)", (long long)step, worst_v);
    CHECK_MSG(moved > 0.5 * LR, "step %lld: the weights hardly moved (%g)", (long long)step, moved);
}

static double grad_norm(rlvr_model *m) {
    const float *g = rlvr_model_grads(m);
    double s = 0;
    for (size_t i = 0; i < rlvr_model_num_params(m); i++) s += (double)g[i] * g[i];
    return sqrt(s);
}

static bool dir_is_empty(const char *path) {
    DIR *d = opendir(path);
    if (!d) return false;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n == 0;
}

static void test_steps(const char *weights) {
    char dir[] = "/tmp/rlvr_trainer_steps.XXXXXX", text[2048];
    CHECK(mkdtemp(dir) != NULL);
    CHECK(config_text(text, sizeof text, dir, weights) == 0);
    bool exact = strcmp(weights, "f32") == 0;
    rlvr_run run;
    int failed = test_failures;
    CHECK_OK(rlvr_run_parse(&run, text, "test_trainer_steps.ini", NULL, rlvr_train_schemas));
    if (test_failures > failed) return;
    CHECK(run.optim.lr == (float)LR && run.optim.weight_decay == (float)WEIGHT_DECAY);
    rlvr_model *model = NULL;
    rlvr_trainer *t = NULL;
    CHECK_OK(rlvr_run_new_model(&run, &model));
    CHECK_OK(rlvr_trainer_new_replica(&t, &run, model)); /* owns the model from here on */
    if (test_failures > failed) return;
    rlvr_model *m = rlvr_trainer_model_mut(t);

    rlvr_rollout recs[N_RECS] = {0};
    rlvr_rollout *rp[N_RECS];
    const rlvr_rollout *crp[N_RECS];
    const double adv[N_RECS] = {1.0, -0.5, 0.7, -1.2};
    for (int i = 0; i < N_RECS; i++) make_record(&recs[i], i, run.model.vocab), rp[i] = &recs[i], crp[i] = &recs[i];
    rlvr_pack pack = {0};
    policy_logprobs(&pack, m, crp);
    script_sampling(rp, &pack); /* the behaviour policy: the initial weights, moved */

    for (int64_t step = 1; step <= STEPS; step++) {
        /* the step's options as the trainer makes them: normaliser = the batch's policy tokens */
        policy_logprobs(&pack, m, crp);
        rlvr_objective_options opt = run.rl.grpo.objective;
        opt.entropy_coef = ENTROPY_COEF;
        opt.normaliser = (double)rlvr_pack_policy_tokens(&pack);
        direct_stats want;
        double want_loss = direct_loss(&pack, crp, adv, &opt, !exact, &want);
        int64_t want_tokens = want.tokens;
        snapshot before;
        take_snapshot(&before, m);

        rlvr_update_batch b = {.step = step, .opt = opt, .n = N_RECS, .recs = crp, .adv = adv};
        step_stats s = {0};
        CHECK_OK(rlvr_trainer_apply(t, &b, &s));

        CHECK_MSG(fabs(s.loss - want_loss) <= 1e-6 * fmax(1, fabs(want_loss)),
                  "step %lld: loss %.9g, the objective gives %.9g", (long long)step, s.loss, want_loss);
        CHECK(s.tokens == want_tokens && want_tokens == rlvr_pack_policy_tokens(&pack));
        double norm = grad_norm(m);
        CHECK_MSG(norm > 0 && fabs(s.grad_norm - norm) <= 1e-5 * norm, "step %lld: grad norm %g, the gradient's %g",
                  (long long)step, s.grad_norm, norm);
        CHECK(s.lr == (float)LR);
        if (step == 1 && exact) /* the scripted ratios reach the clip and the importance cap */
            CHECK_MSG(s.clipped > 0 && s.truncated_is > 0, "clipped %lld, truncated %lld", (long long)s.clipped,
                      (long long)s.truncated_is);
        if (!exact) { /* the mismatch weight, not the ratio, reaches the cap; nothing is clipped at π_θ = π_prox */
            CHECK_MSG(s.truncated_is == want.capped && want.capped > 0 && s.clipped == 0,
                      "step %lld: capped %lld (want %lld), clipped %lld", (long long)step, (long long)s.truncated_is,
                      (long long)want.capped, (long long)s.clipped);
        }
        CHECK_MSG(fabs(s.logprob_diff_max - want.gap_max) <= 1e-9 && fabs(s.logprob_diff_sum - want.gap_sum) <= 1e-9,
                  "step %lld: gap max %g sum %g, want %g and %g", (long long)step, s.logprob_diff_max,
                  s.logprob_diff_sum, want.gap_max, want.gap_sum);
        check_adamw(m, &before, step);
        free_snapshot(&before);
    }
    CHECK(dir_is_empty(dir)); /* nothing on disk: no shards, no tokenizer */

    rlvr_pack_free(&pack);
    for (int i = 0; i < N_RECS; i++) rlvr_rollout_free(&recs[i]);
    rlvr_trainer_free(t);
    rlvr_run_close(&run);
    rmdir(dir);
}

int main(void) {
    test_steps("f32");
    test_steps("bf16");
    return test_summary("test_trainer_steps");
}
