/* eval/eval.c — running an evaluation: batches of whole tasks through the
 * harness, verification with the per-task cache, per-task counts. The
 * aggregates live in eval/summary.c. */
#include "eval/eval.h"
#include "core/hash.h"

#include "core/error.h"
#include "core/log.h"
#include "core/rng.h"
#include "core/sys.h"
#include "enclave/config.h"
#include "rl/reward.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rlvr_eval_options_default(rlvr_eval_options *o) {
    memset(o, 0, sizeof *o);
    o->version = RLVR_EVAL_OPTIONS_VERSION;
    o->samples = RLVR_EVAL_SAMPLES_DEFAULT;
    rlvr_sampler_config_default(&o->sampler);
    rlvr_harness_options_default(&o->harness);
    o->host_options = (rlvr_sandbox_host_options)RLVR_SANDBOX_HOST_OPTIONS_INIT;
    rlvr_enclave_settings enclave;
    (void)rlvr_enclave_settings_from_config(NULL, &enclave); /* the tables' defaults parse: test_config_tables */
    o->verify_limits = enclave.limits;
    o->consensus_runs = enclave.consensus_runs;
    o->confidence = RLVR_EVAL_CONFIDENCE_DEFAULT;
    o->resamples = RLVR_EVAL_RESAMPLES_DEFAULT;
}

int rlvr_eval_options_from_config(rlvr_eval_options *o, const rlvr_config *cfg) {
    if (!o || !cfg) return RLVR_FAIL(RLVR_EINVAL, "eval options from config: options and configuration needed");
    rlvr_sandbox_host *host = o->harness.host;
    rlvr_enclave_settings enclave;
    RLVR_TRY(rlvr_sampler_config_from(&o->sampler, cfg));
    RLVR_TRY(rlvr_harness_options_from_config(&o->harness, cfg));
    RLVR_TRY(rlvr_enclave_settings_from_config(cfg, &enclave));
    RLVR_TRY(rlvr_sandbox_host_options_from_config(cfg, &o->host_options));
    o->harness.host = host;
    o->verify_limits = enclave.limits;
    o->consensus_runs = enclave.consensus_runs;
    return 0;
}

/* ---- choosing tasks ------------------------------------------------------------------ */

static bool wanted(const rlvr_task *t, const rlvr_pool_manifest *m, const rlvr_split *split) {
    if (split && t->split != *split) return false;
    return !m || rlvr_pool_manifest_usable(m, t->id);
}

int rlvr_eval_tasks_from_pool(rlvr_eval_task **out, size_t *n, const rlvr_task_pool *pool,
                              const rlvr_pool_manifest *manifest, const rlvr_split *split, size_t limit) {
    *out = NULL;
    *n = 0;
    if (!pool) return RLVR_FAIL(RLVR_EINVAL, "eval tasks: no pool");
    size_t size = rlvr_task_pool_size(pool);
    if (size > UINT32_MAX) return RLVR_FAIL(RLVR_EINVAL, "eval tasks: %zu tasks exceed the sampling keys", size);
    rlvr_eval_task *tasks;
    RLVR_ALLOC(tasks, size);
    size_t k = 0;
    for (size_t i = 0; i < size && (limit == 0 || k < limit); i++) {
        const rlvr_task *t = rlvr_task_pool_get(pool, i);
        if (!wanted(t, manifest, split)) continue;
        tasks[k++] = (rlvr_eval_task){.task = t, .index = (uint32_t)i,
                                      .quarantined = manifest ? rlvr_pool_manifest_quarantined(manifest, t->id) : NULL};
    }
    if (k == 0) {
        free(tasks);
        return RLVR_FAIL(RLVR_EINVAL, "pool %s: no %s%stask to evaluate%s", rlvr_task_pool_path(pool),
                         split ? rlvr_split_name(*split) : "", split ? " " : "",
                         manifest ? " among those the manifest marks usable" : "");
    }
    *out = tasks;
    *n = k;
    return 0;
}

/* ---- checks and set-up ---------------------------------------------------------------- */

static int check_options(const rlvr_eval_options *o) {
    if (o->version != RLVR_EVAL_OPTIONS_VERSION)
        return RLVR_FAIL(RLVR_EINVAL, "eval options: version %u, this rlvr knows %d", o->version,
                         RLVR_EVAL_OPTIONS_VERSION);
    if (o->samples < 1 || o->samples > (1 << 20))
        return RLVR_FAIL(RLVR_EINVAL, "eval options: samples %d outside 1..%d", o->samples, 1 << 20);
    if (o->consensus_runs < 1) return RLVR_FAIL(RLVR_EINVAL, "eval options: consensus_runs must be >= 1");
    if (!(o->confidence > 0 && o->confidence < 1) || o->resamples < 1)
        return RLVR_FAIL(RLVR_EINVAL, "eval options: confidence in (0, 1) and resamples >= 1 needed");
    if (o->sampler.kv_slots < 1) return RLVR_FAIL(RLVR_EINVAL, "eval options: kv_slots must be >= 1");
    return 0;
}

static int check_tasks(const rlvr_eval_task *tasks, size_t n, int32_t samples) {
    if (!tasks || n == 0) return RLVR_FAIL(RLVR_EINVAL, "eval: no tasks");
    for (size_t i = 0; i < n; i++) {
        if (!tasks[i].task) return RLVR_FAIL(RLVR_EINVAL, "eval: task %zu is NULL", i);
        if ((uint64_t)tasks[i].index * (uint64_t)samples + (uint64_t)samples > (uint64_t)UINT32_MAX + 1)
            return RLVR_FAIL(RLVR_EINVAL, "eval: task %s: key %u x %d samples exceeds the 32-bit sequence ids",
                             tasks[i].task->id, tasks[i].index, samples);
    }
    return 0;
}

/* The sampler's positions per slot: the largest context budget of the
 * tasks, at most the model's max_seq. */
static int32_t context_for(const rlvr_eval_task *tasks, size_t n, const rlvr_harness_options *h, int32_t max_seq) {
    int64_t most = 1;
    for (size_t i = 0; i < n; i++) {
        rlvr_task_budgets b;
        rlvr_task_budgets_resolve(&tasks[i].task->budgets, &h->budgets, &b);
        if (b.context_tokens > most) most = b.context_tokens;
    }
    return most < max_seq ? (int32_t)most : max_seq;
}

static int sampler_for(rlvr_sampler **out, const rlvr_model *model, const rlvr_eval_task *tasks, size_t n,
                       const rlvr_eval_options *o) {
    rlvr_sampler_config sc = o->sampler;
    int32_t max_seq = rlvr_model_config_of(model)->max_seq;
    if (sc.context <= 0 || sc.context > max_seq) sc.context = context_for(tasks, n, &o->harness, max_seq);
    int64_t rollouts = (int64_t)n * o->samples;
    if (sc.kv_slots > rollouts) sc.kv_slots = (int32_t)rollouts; /* only memory: results do not depend on it */
    return rlvr_sampler_new(out, model, &sc);
}

static bool needs_host(const rlvr_eval_task *tasks, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (tasks[i].task->verifier == RLVR_VERIFIER_TESTS) return true;
    return false;
}

static int result_for(rlvr_eval_result **out, const rlvr_eval_task *tasks, size_t n, const rlvr_eval_options *o) {
    RLVR_TRY(rlvr_eval_result_new(out, n, o->samples, o->sampler.seed, o->sampler.temperature));
    for (size_t i = 0; i < n; i++) {
        const rlvr_task *t = tasks[i].task;
        RLVR_TRY(rlvr_eval_result_set_task(*out, i, t->id, t->family, t->split, tasks[i].index));
    }
    return 0;
}

/* ---- verification with the per-task cache ------------------------------------------------ */

typedef struct {
    const rlvr_eval_options *opt;
    rlvr_sandbox_limits limits;
    rlvr_sandbox_host *host;
    const rlvr_eval_task *tasks;
    rlvr_harness_job *jobs;  /* of the batch: task first+t owns jobs [t·samples, (t+1)·samples) */
    size_t first, count;
    pthread_mutex_t lock;
    size_t next;
    int error;
    char error_text[1024];
    int64_t verifications, hits;
} verifier;

/* Seed of every verification of a task: (seed, index) only, so identical
 * patches get identical enclave runs and the cache is exact. */
static uint64_t verify_seed(uint64_t seed, uint32_t index) {
    uint32_t b[4];
    rlvr_rng_block(b, seed, RLVR_RNG_SHUFFLE, RLVR_EVAL_STEP, index, 0);
    return (uint64_t)b[0] << 32 | b[1];
}

static bool same_patch(const rlvr_harness_job *a, const rlvr_harness_job *b) {
    if (a->patch_len != b->patch_len || a->public_tests_changed != b->public_tests_changed ||
        a->patch_reason != b->patch_reason)
        return false;
    return a->patch_len == 0 || memcmp(a->patch, b->patch, a->patch_len) == 0;
}

static uint64_t patch_hash(const rlvr_harness_job *j) {
    uint64_t h = rlvr_fnv1a64(j->patch ? j->patch : "", j->patch_len);
    return h ^ ((uint64_t)j->public_tests_changed << 1) ^ ((uint64_t)(uint32_t)j->patch_reason << 40);
}

/* An earlier sample of the task with an identical patch and a cacheable
 * verdict, or NULL. */
static const rlvr_harness_job *cached(const rlvr_harness_job *jobs, const uint64_t *hash, const bool *verified,
                                      int32_t j) {
    for (int32_t i = 0; i < j; i++)
        if (verified[i] && hash[i] == hash[j] && jobs[i].record.verdict != RLVR_VERDICT_INFRA &&
            same_patch(&jobs[i], &jobs[j]))
            return &jobs[i];
    return NULL;
}

static void mark_infra(rlvr_harness_job *jobs, int32_t n) {
    for (int32_t j = 0; j < n; j++) jobs[j].record.verdict = RLVR_VERDICT_INFRA;
}

static bool needs_enclave(const rlvr_harness_job *j) {
    const rlvr_rollout *r = &j->record;
    return r->stop == RLVR_STOP_DONE && r->verdict != RLVR_VERDICT_INFRA;
}

/* Verifies the samples of one task; truncated and infra rollouts need no
 * enclave (they score 0 or are excluded either way). */
static int verify_samples(verifier *v, const rlvr_eval_task *et, rlvr_verify_task *vt, rlvr_harness_job *jobs,
                          int64_t *made, int64_t *hits) {
    int32_t n = v->opt->samples;
    uint64_t *hash = calloc((size_t)n, sizeof *hash);
    bool *verified = calloc((size_t)n, sizeof *verified);
    int rc = hash && verified ? 0 : RLVR_FAIL(RLVR_ENOMEM, "out of memory verifying task %s", et->task->id);
    uint64_t seed = verify_seed(v->opt->sampler.seed, et->index);
    for (int32_t j = 0; rc == 0 && j < n; j++) {
        if (!needs_enclave(&jobs[j])) continue;
        hash[j] = patch_hash(&jobs[j]);
        const rlvr_harness_job *same = cached(jobs, hash, verified, j);
        rlvr_rollout *r = &jobs[j].record;
        if (same) {
            r->verdict = same->record.verdict;
            r->verdict_reason = same->record.verdict_reason;
            r->reward.outcome = same->record.reward.outcome;
            ++*hits;
        } else {
            rc = rlvr_harness_verify(&jobs[j], vt, seed);
            ++*made;
        }
        verified[j] = true;
    }
    free(hash);
    free(verified);
    return rc;
}

static int set_quarantine(rlvr_verify_task *vt, const rlvr_str_list *q) {
    if (!q || q->n == 0) return 0;
    const char **names = calloc(q->n + 1, sizeof *names);
    if (!names) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    for (size_t i = 0; i < q->n; i++) names[i] = q->items[i];
    int rc = rlvr_verify_task_set_quarantine(vt, names);
    free(names);
    return rc;
}

/* Prepares the task's enclave and verifies its samples. An enclave that
 * cannot be prepared is an infrastructure failure of every sample. */
static int verify_task(verifier *v, size_t t, int64_t *made, int64_t *hits) {
    const rlvr_eval_task *et = &v->tasks[v->first + t];
    rlvr_harness_job *jobs = v->jobs + t * (size_t)v->opt->samples;
    bool any = false;
    for (int32_t j = 0; j < v->opt->samples; j++) any |= needs_enclave(&jobs[j]);
    if (et->task->verifier != RLVR_VERIFIER_TESTS || !any) return 0;
    rlvr_verify_task *vt = NULL;
    int rc = rlvr_harness_verify_task_new(&vt, v->host, et->task, &v->limits, v->opt->consensus_runs);
    if (rc == 0) rc = set_quarantine(vt, et->quarantined);
    if (rc < 0 && rc != RLVR_ENOMEM && rc != RLVR_EINVAL) {
        rlvr_log_warn("eval: task %s: enclave not ready, its %d samples count as infra: %s", et->task->id,
                      v->opt->samples, rlvr_error_last());
        mark_infra(jobs, v->opt->samples);
        rc = 0;
    } else if (rc == 0) {
        rc = verify_samples(v, et, vt, jobs, made, hits);
    }
    rlvr_verify_task_free(vt);
    return rc;
}

static void *verify_worker(void *arg) {
    verifier *v = arg;
    int64_t made = 0, hits = 0;
    for (;;) {
        pthread_mutex_lock(&v->lock);
        size_t t = v->next++;
        bool stop = v->error != 0 || t >= v->count;
        pthread_mutex_unlock(&v->lock);
        if (stop) break;
        int rc = verify_task(v, t, &made, &hits);
        if (rc < 0) {
            pthread_mutex_lock(&v->lock);
            if (v->error == 0) {
                v->error = rc;
                snprintf(v->error_text, sizeof v->error_text, "%s", rlvr_error_last());
            }
            pthread_mutex_unlock(&v->lock);
        }
    }
    pthread_mutex_lock(&v->lock);
    v->verifications += made;
    v->hits += hits;
    pthread_mutex_unlock(&v->lock);
    return NULL;
}

/* Verifies the batch's "tests" tasks, verify_threads of them at once. */
static int verify_batch(verifier *v) {
    int threads = v->opt->verify_threads > 0 ? v->opt->verify_threads : rlvr_physical_cores();
    if ((size_t)threads > v->count) threads = (int)v->count;
    v->next = 0;
    v->error = 0;
    pthread_t *ids = threads > 1 ? calloc((size_t)threads, sizeof *ids) : NULL;
    int started = 0;
    for (int i = 0; ids && i < threads; i++)
        if (pthread_create(&ids[i], NULL, verify_worker, v) == 0) started++;
    if (started == 0) verify_worker(v);
    for (int i = 0; i < started; i++) pthread_join(ids[i], NULL);
    free(ids);
    if (v->error < 0) return rlvr_error_set(v->error, "%s", v->error_text);
    return 0;
}

/* ---- scoring ---------------------------------------------------------------------------- */

/* Adds one finished, verified rollout to its task's counts. */
static void tally(rlvr_eval_task_result *t, const rlvr_harness_job *j) {
    const rlvr_rollout *r = &j->record;
    t->calls += j->calls;
    t->calls_parsed += j->calls_parsed;
    t->policy_tokens += rlvr_rollout_policy_tokens(r);
    if (r->stop == RLVR_STOP_INFRA_ERROR || r->verdict == RLVR_VERDICT_INFRA) {
        t->infra++;
        return;
    }
    t->n++;
    t->truncated += rlvr_rl_stop_is_truncation(r->stop);
    t->dropped += r->verdict == RLVR_VERDICT_DROPPED;
    t->c += r->stop == RLVR_STOP_DONE && r->verdict == RLVR_VERDICT_PASS;
}

/* ---- the run ------------------------------------------------------------------------------- */

typedef struct {
    const rlvr_eval_options *opt;
    const rlvr_tokenizer *tok;
    rlvr_sampler *s;
    rlvr_harness_options harness;
    const rlvr_eval_task *tasks;
    size_t n_tasks;
    rlvr_eval_result *r;
    rlvr_harness_job *jobs; /* (batch_tasks · samples) */
    size_t batch_tasks;
    verifier v;
    rlvr_eval_progress progress;
    double t0;
} runner;

static size_t batch_tasks_for(const rlvr_eval_options *o, int32_t kv_slots) {
    int64_t rollouts = o->batch_rollouts > 0 ? o->batch_rollouts : 2 * (int64_t)kv_slots;
    int64_t tasks = rollouts / o->samples;
    return tasks < 1 ? 1 : (size_t)tasks;
}

static void fill_jobs(runner *rn, size_t first, size_t count) {
    int32_t g = rn->opt->samples;
    for (size_t t = 0; t < count; t++) {
        const rlvr_eval_task *et = &rn->tasks[first + t];
        for (int32_t j = 0; j < g; j++) {
            rlvr_harness_job *job = &rn->jobs[t * (size_t)g + (size_t)j];
            memset(job, 0, sizeof *job);
            job->task = et->task;
            job->step = RLVR_EVAL_STEP;
            job->sequence = et->index * (uint32_t)g + (uint32_t)j;
            job->script = rn->opt->script;
            job->script_arg = rn->opt->script_arg;
        }
    }
}

static void report_progress(runner *rn, size_t done) {
    rlvr_eval_progress *p = &rn->progress;
    p->tasks_done = done;
    p->tasks_total = rn->n_tasks;
    p->elapsed_s = rlvr_now() - rn->t0;
    p->rollouts_per_s = p->elapsed_s > 0 ? (double)p->rollouts / p->elapsed_s : 0;
    if (rn->opt->progress) rn->opt->progress(rn->opt->progress_arg, p);
}

static void score_batch(runner *rn, size_t first, size_t count) {
    int32_t g = rn->opt->samples;
    for (size_t t = 0; t < count; t++) {
        rlvr_eval_task_result *tr = &rn->r->tasks[first + t];
        for (int32_t j = 0; j < g; j++) tally(tr, &rn->jobs[t * (size_t)g + (size_t)j]);
        rn->progress.scored += tr->n;
        rn->progress.passed += tr->c;
        rn->progress.infra += tr->infra;
        rn->progress.rollouts += g;
    }
}

/* Rollouts, verification and counts for tasks [first, first + count). */
static int run_batch(runner *rn, size_t first, size_t count) {
    int n_jobs = (int)(count * (size_t)rn->opt->samples);
    fill_jobs(rn, first, count);
    double t0 = rlvr_now();
    int rc = rlvr_harness_run(rn->s, rn->tok, &rn->harness, rn->jobs, n_jobs);
    double t1 = rlvr_now();
    rn->r->stats.generate_s += t1 - t0;
    if (rc == 0) {
        rn->v.jobs = rn->jobs;
        rn->v.first = first;
        rn->v.count = count;
        rc = verify_batch(&rn->v);
        rn->r->stats.verify_s += rlvr_now() - t1;
    }
    if (rc == 0) score_batch(rn, first, count);
    for (int i = 0; i < n_jobs; i++) rlvr_harness_job_clear(&rn->jobs[i]);
    return rc;
}

static int run_all(runner *rn) {
    for (size_t first = 0; first < rn->n_tasks; first += rn->batch_tasks) {
        size_t count = rn->n_tasks - first < rn->batch_tasks ? rn->n_tasks - first : rn->batch_tasks;
        RLVR_TRY(run_batch(rn, first, count));
        report_progress(rn, first + count);
    }
    return 0;
}

static int runner_open(runner *rn, const rlvr_model *model, const rlvr_tokenizer *tok, const rlvr_eval_task *tasks,
                       size_t n, const rlvr_eval_options *o) {
    memset(rn, 0, sizeof *rn);
    rn->opt = o;
    rn->tok = tok;
    rn->tasks = tasks;
    rn->n_tasks = n;
    rn->harness = o->harness;
    rn->t0 = rlvr_now();
    rn->v = (verifier){.opt = o, .tasks = tasks, .limits = o->verify_limits};
    if (rn->v.limits.wall_s <= 0) rlvr_sandbox_limits_default(&rn->v.limits);
    pthread_mutex_init(&rn->v.lock, NULL);
    RLVR_TRY(sampler_for(&rn->s, model, tasks, n, o));
    if (!rn->harness.host && needs_host(tasks, n)) RLVR_TRY(rlvr_sandbox_host_new(&rn->harness.host, &o->host_options));
    rn->v.host = rn->harness.host;
    rn->batch_tasks = batch_tasks_for(o, rlvr_sampler_config_of(rn->s)->kv_slots);
    if (rn->batch_tasks > n) rn->batch_tasks = n;
    RLVR_ALLOC(rn->jobs, rn->batch_tasks * (size_t)o->samples);
    return result_for(&rn->r, tasks, n, o);
}

static void runner_close(runner *rn) {
    if (rn->harness.host != rn->opt->harness.host) rlvr_sandbox_host_free(rn->harness.host);
    rlvr_sampler_free(rn->s);
    free(rn->jobs);
    pthread_mutex_destroy(&rn->v.lock);
    rlvr_eval_result_free(rn->r);
}

int rlvr_eval_run(rlvr_eval_result **out, const rlvr_model *model, const rlvr_tokenizer *tok,
                  const rlvr_eval_task *tasks, size_t n_tasks, const rlvr_eval_options *opt) {
    if (!out || !model || !tok || !opt) return RLVR_FAIL(RLVR_EINVAL, "rlvr_eval_run: model, tokenizer and options needed");
    *out = NULL;
    RLVR_TRY(check_options(opt));
    RLVR_TRY(check_tasks(tasks, n_tasks, opt->samples));
    RLVR_TRY(rlvr_tokenizer_check_model(tok, rlvr_model_config_of(model)));
    runner rn;
    int rc = runner_open(&rn, model, tok, tasks, n_tasks, opt);
    if (rc == 0) rc = run_all(&rn);
    if (rc == 0) {
        rn.r->stats.rollouts = rn.progress.rollouts;
        rn.r->stats.verifications = rn.v.verifications;
        rn.r->stats.verify_cache_hits = rn.v.hits;
        rn.r->stats.wall_s = rlvr_now() - rn.t0;
        rc = rlvr_eval_result_summarize(rn.r, opt->confidence, opt->resamples);
    }
    if (rc == 0) {
        *out = rn.r;
        rn.r = NULL;
    }
    runner_close(&rn);
    return rc;
}
