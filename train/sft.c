/* train/sft.c — the supervised bootstrap behind `rlvr sft` (train/sft.h),
 * which gives RL a nonzero start (docs/OPERATIONS.md "`rlvr sft`").
 *
 * Demonstrations are the reference solutions of the usable train tasks
 * played through the harness (envs/demo.h: the same template, tools and
 * sandboxes as a sampled rollout; no second renderer), so observation
 * tokens are masked exactly as in RL. A demonstration whose tool calls did
 * not all succeed is left out and counted. Training minimises the
 * cross-entropy of the policy tokens under softmax(logits/τ) with τ = [sft]
 * temperature (1: the plain logits; RL may then sample at a lower [sampler]
 * temperature, sharpening what SFT learned), [sft] steps × batch_sequences
 * demonstrations, drawn without replacement per epoch in a Philox-shuffled
 * order, AdamW with [optim]'s settings and [sft]'s learning rate.
 *
 * Files: <run>/sft/checkpoints/ (every [checkpoint] every steps, at the
 * end, and on SIGTERM/SIGINT/SIGUSR1/SIGUSR2, after which the job returns
 * "stopped"), <run>/sft/metrics.h5 (loss, grad norm, lr, tokens/s). */
#include "core/error.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/rng.h"
#include "core/sys.h"
#include "envs/demo.h"
#include "io/checkpoint.h"
#include "io/metrics.h"
#include "policy/bpe.h"
#include "train/pack.h"
#include "train/run.h"
#include "train/sft.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- demonstrations ------------------------------------------------------------------ */

/* Whether demonstration i of n gets a recovery copy: evenly spaced, about
 * share · n of them (floor((i + 1)·share) steps past floor(i·share)). */
static bool gets_recovery(int i, double share) { return floor((i + 1) * share) > floor(i * share); }

/* The demonstrations to play: one per task, then the recovery copies
 * ([sft] recovery_share) of the tasks that allow one. */
typedef struct {
    rlvr_demo **demos;
    rlvr_harness_job *jobs;
    int n, cap, no_mistake;
} demo_set;

static int demo_set_add(demo_set *d, const rlvr_task *t, bool recovery) {
    if (d->n == d->cap) return RLVR_FAIL(RLVR_ELIMIT, "sft: more demonstrations than planned");
    int rc = recovery ? rlvr_demo_new_recovery(&d->demos[d->n], t) : rlvr_demo_new(&d->demos[d->n], t);
    if (rc == RLVR_ENOTFOUND && recovery) { /* this task has no mistake to recover from */
        d->no_mistake++;
        return 0;
    }
    RLVR_TRY(rc);
    /* SFT imitates the tokens: the patch a demonstration leaves is not needed */
    d->jobs[d->n] = (rlvr_harness_job){.task = t, .sequence = (uint32_t)d->n, .script = rlvr_demo_script,
                                       .script_arg = d->demos[d->n], .no_patch = true};
    d->n++;
    return 0;
}

/* Renders the demonstrations of the first `limit` demonstration tasks (all
 * when limit < 0), with their recovery copies when `recovery`; as
 * rlvr_sft_demos otherwise. `what` names them in the progress lines. */
static int render_demos(rlvr_run *r, rlvr_model *model, int limit, bool recovery, const char *what,
                        rlvr_rollout **out, int *n_out) {
    rlvr_task_pool *extra = NULL;
    RLVR_TRY(rlvr_run_demo_tasks(r, &extra));
    /* [sft] pool_demos = false: the pool's train tasks are left to RL */
    int n_pool = r->sft.pool_demos ? r->n_split[RLVR_SPLIT_TRAIN] : 0;
    int n_tasks = n_pool + (extra ? (int)rlvr_task_pool_size(extra) : 0), n_recovery = 0;
    if (limit >= 0 && n_tasks > limit) n_tasks = limit;
    double share = recovery ? r->sft.recovery_share : 0;
    for (int i = 0; i < n_tasks; i++) n_recovery += gets_recovery(i, share);
    demo_set set = {.cap = n_tasks + n_recovery};
    set.demos = calloc((size_t)set.cap, sizeof *set.demos);
    set.jobs = calloc((size_t)set.cap, sizeof *set.jobs);
    rlvr_rollout *recs = calloc((size_t)set.cap, sizeof *recs);
    rlvr_sampler *s = NULL;
    int rc = set.demos && set.jobs && recs ? 0 : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    if (rc == 0) rc = rlvr_run_host(r);
    for (int pass = 0; pass < 2; pass++) /* the plain demonstrations, then the recovery copies */
        for (int i = 0; rc == 0 && i < n_tasks; i++) {
            const rlvr_task *t = i < n_pool
                                     ? rlvr_task_pool_get(r->pool, (size_t)r->split_tasks[RLVR_SPLIT_TRAIN][i])
                                     : rlvr_task_pool_get(extra, (size_t)(i - n_pool));
            if (pass == 0 || gets_recovery(i, share)) rc = demo_set_add(&set, t, pass == 1);
        }
    if (rc == 0 && n_recovery > 0)
        rlvr_progress("sft: %d recovery demonstrations (a refused edit, then the right one); %d of the %d tasks "
                      "chosen allow none (arith, or a fix whose new text the file already holds)",
                      n_recovery - set.no_mistake, set.no_mistake, n_recovery);
    int n = set.n;
    rlvr_harness_job *jobs = set.jobs;
    if (rc == 0) {
        rlvr_sampler_config sc = r->sampler;
        rc = rlvr_sampler_new(&s, model, &sc);
    }
    double t0 = rlvr_now();
    /* [sampler] kv_slots at a time (what the harness runs at once anyway),
     * so that a long rendering (2 000 bugfix-c demonstrations: about 13
     * minutes on 2 cores) shows its progress and a signal stops it between
     * calls; jobs are independent, so chunking changes no record */
    int per_call = r->sampler.kv_slots > 0 ? r->sampler.kv_slots : 64;
    int done = 0;
    while (rc == 0 && done < n && !rlvr_run_stop_flag) { /* a signal stops between chunks */
        int chunk = n - done < per_call ? n - done : per_call;
        rc = rlvr_harness_run(s, r->tok, &r->harness, jobs + done, chunk);
        done += chunk;
        if (rc == 0 && done < n && (done / per_call) % 4 == 0)
            rlvr_progress("sft: %d/%d %s rendered (%.0f s)", done, n, what, rlvr_now() - t0);
    }
    bool stopped = rc == 0 && done < n; /* by a signal: nothing rendered is kept */
    int kept = 0, dropped = 0;
    for (int i = 0; rc == 0 && !stopped && i < n; i++) {
        if (!rlvr_demo_usable(set.demos[i], &jobs[i].record, jobs[i].calls, jobs[i].calls_parsed)) {
            dropped++;
            rlvr_log_warn("sft: demonstration of %s left out (stop %s, %d of %d calls parsed)", jobs[i].task->id,
                          rlvr_stop_reason_name(jobs[i].record.stop), jobs[i].calls_parsed, jobs[i].calls);
            continue;
        }
        rlvr_demo_mask_mistake(set.demos[i], &jobs[i].record); /* imitate the recovery, not the mistake */
        recs[kept] = jobs[i].record; /* moved out of the job */
        memset(&jobs[i].record, 0, sizeof jobs[i].record);
        kept++;
    }
    if (rc == 0 && !stopped)
        rlvr_progress("sft: %d %s rendered through the harness in %.1f s (%d left out)", kept, what,
                      rlvr_now() - t0, dropped);
    if (rc == 0 && !stopped && kept == 0) rc = RLVR_FAIL(RLVR_EINVAL, "sft: no usable demonstration");
    for (int i = 0; jobs && i < n; i++) rlvr_harness_job_clear(&jobs[i]);
    for (int i = 0; set.demos && i < n; i++) rlvr_demo_free(set.demos[i]);
    free(set.demos), free(set.jobs);
    rlvr_sampler_free(s);
    rlvr_task_pool_free(extra); /* the records hold copies of what they need */
    if (rc < 0 || stopped) {
        for (int i = 0; i < kept; i++) rlvr_rollout_free(&recs[i]);
        free(recs);
        return rc < 0 ? rc : 1;
    }
    *out = recs, *n_out = kept;
    return 0;
}

int rlvr_sft_demos(rlvr_run *r, rlvr_model *model, rlvr_rollout **out, int *n_out) {
    return render_demos(r, model, -1, true, "demonstrations", out, n_out);
}

/* ---- the tokenizer ------------------------------------------------------------------------ */

/* Calls fn on each text between a record's special tokens (the record was
 * rendered with the byte tokenizer: ids below 256 are bytes; a text longer
 * than 4 KiB comes in parts); *specials gets how many special tokens it
 * holds. */
typedef int (*text_fn)(void *arg, const char *text, size_t len);

static int for_each_text(const rlvr_tokenizer *byte, const rlvr_rollout *rec, text_fn fn, void *arg,
                         int64_t *specials) {
    char buf[4096];
    size_t n = 0;
    *specials = 0;
    for (int32_t k = 0; k <= rec->n_tokens; k++) {
        bool special = k < rec->n_tokens && rlvr_tokenizer_is_special(byte, rec->tokens[k]);
        if ((k == rec->n_tokens || special || n == sizeof buf) && n > 0) {
            RLVR_TRY(fn(arg, buf, n));
            n = 0;
        }
        if (special) (*specials)++;
        else if (k < rec->n_tokens) buf[n++] = (char)rec->tokens[k];
    }
    return 0;
}

static int add_text(void *trainer, const char *text, size_t len) { return rlvr_bpe_trainer_add(trainer, text, len); }

typedef struct {
    const rlvr_tokenizer *tok;
    int64_t ids;
} id_count;

static int count_ids(void *arg, const char *text, size_t len) {
    id_count *c = arg;
    int32_t n = 0;
    RLVR_TRY(rlvr_tokenizer_encode(c->tok, text, len, NULL, 0, &n));
    c->ids += n;
    return 0;
}

int rlvr_sft_learn_tokenizer(rlvr_run *r, rlvr_model *model) {
    if (!r->tok_pending) return 0;
    rlvr_rollout *recs = NULL;
    int n = 0;
    RLVR_TRY(rlvr_run_pool(r, true));
    int rc = render_demos(r, model, (int)r->tokenizer.corpus_demos, false, "demonstrations for the tokenizer",
                          &recs, &n);
    if (rc != 0) return rc; /* 1: stopped by a signal */
    double t0 = rlvr_now();
    rlvr_bpe_trainer *tr = NULL;
    int32_t *merges = NULL, n_merges = 0;
    rc = rlvr_bpe_trainer_new(&tr);
    int64_t specials = 0;
    for (int i = 0; rc == 0 && i < n; i++) rc = for_each_text(r->tok, &recs[i], add_text, tr, &specials);
    if (rc == 0) rc = rlvr_bpe_learn(tr, RLVR_TOKENIZER_FIRST_MERGE, (int32_t)r->tokenizer.merges, 2, &merges, &n_merges);
    if (rc == 0 && n_merges == 0)
        rc = RLVR_FAIL(RLVR_EINVAL, "sft: the %d demonstrations hold no pair of bytes twice: nothing to learn a BPE "
                                    "tokenizer from; set [tokenizer] kind = byte",
                       n);
    rlvr_tokenizer *tok = NULL;
    if (rc == 0) rc = rlvr_tokenizer_new_bpe(&tok, merges, n_merges);
    int64_t before = 0, bytes = 0, pieces = 0;
    id_count after = {.tok = tok};
    for (int i = 0; rc == 0 && i < n; i++) {
        before += recs[i].n_tokens;
        rc = for_each_text(r->tok, &recs[i], count_ids, &after, &specials);
        after.ids += specials;
    }
    if (tr) rlvr_bpe_trainer_counts(tr, &pieces, &bytes);
    if (rc == 0) rc = rlvr_run_set_tokenizer(r, tok, "the demonstrations");
    if (rc == 0)
        rlvr_progress("sft: learned a BPE tokenizer of %d merges from %d demonstrations (%lld bytes of text) in "
                      "%.1f s; a demonstration takes %.0f ids instead of %.0f (%.2fx fewer)",
                      (int)n_merges, n, (long long)bytes, rlvr_now() - t0, (double)after.ids / n, (double)before / n,
                      after.ids ? (double)before / (double)after.ids : 0.0);
    free(merges);
    rlvr_bpe_trainer_free(tr);
    for (int i = 0; i < n; i++) rlvr_rollout_free(&recs[i]);
    free(recs);
    return rc;
}

/* ---- training -------------------------------------------------------------------------- */

/* Demonstration used at position k of the stream of epochs (a Philox
 * Fisher-Yates shuffle per epoch). */
static int demo_at(int64_t k, int n, uint64_t seed, int32_t *perm, int64_t *perm_epoch) {
    int64_t epoch = k / n;
    if (epoch != *perm_epoch) {
        rlvr_rng_stream st;
        rlvr_rng_stream_init(&st, seed, RLVR_RNG_SHUFFLE, (uint32_t)epoch, 0x5f7);
        for (int i = 0; i < n; i++) perm[i] = i;
        for (int i = n - 1; i > 0; i--) {
            int j = (int)rlvr_rng_next_below(&st, (uint32_t)(i + 1));
            int32_t t = perm[i];
            perm[i] = perm[j], perm[j] = t;
        }
        *perm_epoch = epoch;
    }
    return perm[k % n];
}

typedef struct {
    rlvr_run *run;
    rlvr_io_settings io; /* sft/ paths */
    rlvr_model *model;
    rlvr_adamw_config adamw;
    rlvr_rollout *demos;
    int n_demos;
    int32_t *perm;
    int64_t perm_epoch;
    rlvr_pack pack;
    rlvr_metrics *metrics;
} sft_state;

static int save(sft_state *st, int64_t step) {
    rlvr_checkpoint_options o = rlvr_io_checkpoint_options(&st->io, st->run->cfg, step, step);
    o.mark |= step == st->run->sft.steps;
    rlvr_checkpoint_writer *w = NULL;
    RLVR_TRY(rlvr_checkpoint_begin(&w, st->io.checkpoint_dir, &o));
    int rc = rlvr_checkpoint_put_model(w, st->model);
    if (rc == 0) rc = rlvr_checkpoint_put_tokenizer(w, st->run->tok);
    if (rc < 0) {
        rlvr_checkpoint_abort(w);
        return rc;
    }
    char path[RLVR_IO_PATH_CAP];
    RLVR_TRY(rlvr_checkpoint_commit(w, path, sizeof path));
    rlvr_progress("sft: checkpoint %s", path);
    return 0;
}

static int sft_step(sft_state *st, int64_t step, rlvr_metrics_row *row) {
    const rlvr_sft_config *c = &st->run->sft;
    int B = (int)c->batch_sequences;
    const rlvr_rollout *batch[1024];
    if (B > 1024) B = 1024;
    for (int b = 0; b < B; b++)
        batch[b] = &st->demos[demo_at((step - 1) * B + b, st->n_demos, st->run->io.seed, st->perm, &st->perm_epoch)];
    double t0 = rlvr_now();
    RLVR_TRY(rlvr_pack_records(&st->pack, batch, B));
    RLVR_TRY(rlvr_pack_forward(&st->pack, st->model, (float)st->run->sft.temperature));
    int64_t N = rlvr_pack_policy_tokens(&st->pack), T = st->pack.offsets[st->pack.n_seqs];
    double loss = 0;
    for (int64_t t = 0; t < T; t++)
        if (st->pack.policy[t]) st->pack.dlogp[t] = -1.0f / (float)N, loss -= st->pack.logp[t];
    RLVR_TRY(rlvr_model_zero_grad(st->model));
    RLVR_TRY(rlvr_pack_backward(&st->pack, st->model));
    float gnorm = 0;
    RLVR_TRY(rlvr_model_adamw_step(st->model, &st->adamw, step, &gnorm));
    double dt = rlvr_now() - t0;
    row->value[RLVR_METRIC_LOSS] = loss / (double)N;
    row->value[RLVR_METRIC_GRAD_NORM] = gnorm;
    row->value[RLVR_METRIC_LR] = rlvr_lr_at(&st->adamw, step);
    row->value[RLVR_METRIC_TRAIN_S] = dt;
    row->value[RLVR_METRIC_STEP_TIME_S] = dt;
    row->value[RLVR_METRIC_POLICY_TOKENS] = (double)N / B;
    row->value[RLVR_METRIC_TOKENS_PER_S] = (double)T / dt;
    row->value[RLVR_METRIC_POLICY_VERSION] = (double)step;
    return 0;
}

static int resume_step(const char *dir, bool resume, int64_t *start, char *path, size_t cap) {
    *start = 0;
    int rc = rlvr_checkpoint_latest(dir, path, cap);
    if (rc == RLVR_ENOTFOUND) return 0;
    RLVR_TRY(rc);
    if (!resume)
        return RLVR_FAIL(RLVR_ESTATE, "%s already holds checkpoints (latest %s): pass --resume to continue, or "
                                      "--out a new directory",
                         dir, path);
    rlvr_checkpoint *ck = NULL;
    RLVR_TRY(rlvr_checkpoint_open(&ck, path));
    *start = rlvr_checkpoint_info_of(ck)->step;
    rlvr_checkpoint_close(ck);
    return 1;
}

int rlvr_sft_run(rlvr_run *r, bool resume, char *final_checkpoint, size_t cap) {
    sft_state st = {.run = r, .io = r->io, .perm_epoch = -1};
    char dir[RLVR_IO_PATH_CAP];
    RLVR_TRY(rlvr_run_path(dir, sizeof dir, r->io.run_dir, "sft"));
    RLVR_TRY(rlvr_io_settings_set_run_dir(&st.io, dir));
    st.adamw = r->optim;
    st.adamw.lr = (float)r->sft.lr;
    st.adamw.warmup_steps = r->sft.warmup_steps;
    st.adamw.total_steps = r->sft.steps;
    st.adamw.min_lr_ratio = (float)r->sft.min_lr_ratio;
    st.adamw.schedule = RLVR_LR_COSINE;
    if (st.adamw.warmup_steps >= st.adamw.total_steps) st.adamw.warmup_steps = st.adamw.total_steps - 1;

    char latest[RLVR_IO_PATH_CAP];
    int64_t start = 0;
    int rc = resume_step(st.io.checkpoint_dir, resume, &start, latest, sizeof latest);
    if (rc == 1) {
        rlvr_progress("sft: resuming from %s (step %lld)", latest, (long long)start);
        rc = rlvr_run_load_model(r, latest, true, &st.model);
    } else if (rc == 0) {
        rc = rlvr_run_new_model(r, &st.model);
    }
    if (rc == 0) rc = rlvr_model_alloc_optim_state(st.model);
    if (rc == 0) rc = rlvr_run_pool(r, true);
    bool done = start >= r->sft.steps; /* finished before: nothing to render or train */
    if (rc == 0 && !done) rc = rlvr_sft_learn_tokenizer(r, st.model); /* a fresh BPE run */
    if (rc == 0 && !done) rc = rlvr_sft_demos(r, st.model, &st.demos, &st.n_demos);
    if (rc == 1) rc = 0, done = true; /* a signal while rendering: no step runs, nothing new is saved */
    if (rc == 0 && !done)
        rc = (st.perm = calloc((size_t)st.n_demos, sizeof *st.perm)) ? 0 : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    if (rc == 0) rc = rlvr_mkdir_p(st.io.run_dir, 0755);
    rlvr_manifest *manifest = NULL;
    static const int one_process[3] = {1, 0, 0}; /* SFT runs in one process */
    if (rc == 0) rc = rlvr_run_manifest_begin(r, st.io.manifest_path, one_process, NULL, 0, &manifest);
    if (rc == 0) rc = rlvr_metrics_open(&st.metrics, st.io.metrics_path, start > 0 ? start : -1);
    rlvr_progress("sft: %lld steps of %lld demonstrations, model %zu parameters", (long long)r->sft.steps,
                  (long long)r->sft.batch_sequences, st.model ? rlvr_model_num_params(st.model) : 0);
    double t_start = rlvr_now(), ema = NAN;
    int64_t step = start;
    while (rc == 0 && step < r->sft.steps && !rlvr_run_stop_flag) {
        step++;
        rlvr_metrics_row row;
        rlvr_metrics_row_init(&row, step);
        rc = sft_step(&st, step, &row);
        row.value[RLVR_METRIC_TIME_UNIX] = rlvr_run_unix_time();
        if (rc == 0) rc = rlvr_metrics_append(st.metrics, &row);
        double loss = row.value[RLVR_METRIC_LOSS];
        ema = isnan(ema) ? loss : 0.9 * ema + 0.1 * loss;
        if (rc == 0 && (step % 10 == 0 || step == r->sft.steps)) {
            double el = rlvr_now() - t_start, eta = el / (double)(step - start) * (double)(r->sft.steps - step);
            rlvr_progress("sft step %lld/%lld  loss %.4f (avg %.4f)  grad %.2f  lr %.2e  %.0f tok/s  eta %.0f s",
                          (long long)step, (long long)r->sft.steps, loss, ema, row.value[RLVR_METRIC_GRAD_NORM],
                          row.value[RLVR_METRIC_LR], row.value[RLVR_METRIC_TOKENS_PER_S], eta);
        }
        if (rc == 0 && (rlvr_io_checkpoint_due(&st.io, step) || step == r->sft.steps || rlvr_run_stop_flag))
            rc = save(&st, step);
    }
    int stop = rlvr_run_stop_flag;
    if (rc == 0 && final_checkpoint) { /* none when a signal came before the first step of a fresh run */
        final_checkpoint[0] = 0;
        if (step > 0) rc = rlvr_checkpoint_latest(st.io.checkpoint_dir, final_checkpoint, cap);
    }
    int outcome = rc < 0 ? rc : stop && step < r->sft.steps ? 1 : 0;
    int m_rc = rlvr_run_manifest_end(manifest, st.io.manifest_path, outcome, step, step);
    if (rc == 0) rc = m_rc;
    rlvr_metrics_close(st.metrics);
    for (int i = 0; i < st.n_demos; i++) rlvr_rollout_free(&st.demos[i]);
    free(st.demos), free(st.perm);
    rlvr_pack_free(&st.pack);
    rlvr_model_free(st.model);
    if (rc == 0 && stop && step < r->sft.steps) return 1;
    return rc;
}
