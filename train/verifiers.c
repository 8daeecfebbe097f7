/* train/verifiers.c — verification with a per-task verdict cache (train/verifiers.h). */
#include "train/verifiers.h"
#include "core/hash.h"

#include "core/error.h"
#include "core/log.h"
#include "core/sys.h"
#include "enclave/verify.h"
#include "rl/reward.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t hash;
    char *patch;
    size_t len;
    rlvr_verdict verdict;
    int32_t reason;
    float outcome; /* the check's score (partial credit where sealed, of the run's [reward] outcome) */
} cached_verdict;

typedef struct {
    rlvr_verify_task *vt; /* created on first use, freed when idle longest ([train] verify_enclaves) */
    uint64_t last_used;   /* the batch that last verified this task */
    cached_verdict *cache;
    int n_cache, cap_cache;
} task_verifier;


static void verifier_free(task_verifier *v) {
    rlvr_verify_task_free(v->vt);
    for (int i = 0; i < v->n_cache; i++) free(v->cache[i].patch);
    free(v->cache);
}

static const cached_verdict *cache_find(const task_verifier *v, const char *patch, size_t len, uint64_t h) {
    for (int i = 0; i < v->n_cache; i++)
        if (v->cache[i].hash == h && v->cache[i].len == len && memcmp(v->cache[i].patch, patch, len) == 0)
            return &v->cache[i];
    return NULL;
}

static int cache_add(task_verifier *v, const char *patch, size_t len, uint64_t h, const rlvr_rollout *r) {
    if (v->n_cache == v->cap_cache) {
        int cap = v->cap_cache ? 2 * v->cap_cache : 8;
        cached_verdict *c = realloc(v->cache, (size_t)cap * sizeof *c);
        if (!c) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        v->cache = c, v->cap_cache = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    memcpy(copy, patch, len);
    copy[len] = 0;
    v->cache[v->n_cache++] = (cached_verdict){h, copy, len, r->verdict, r->verdict_reason, r->reward.outcome};
    return 0;
}

struct rlvr_verifiers {
    rlvr_run *run;
    task_verifier *tasks; /* (pool size) */
    size_t n;
    int live;         /* tasks[i].vt != NULL */
    uint64_t batches; /* batches begun (the clock of last_used) */
    int64_t runs, cached, freed;
};

int rlvr_verifiers_new(rlvr_verifiers **out, rlvr_run *r) {
    rlvr_verifiers *v = calloc(1, sizeof *v);
    if (!v) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    v->run = r;
    v->n = rlvr_task_pool_size(r->pool);
    v->tasks = calloc(v->n ? v->n : 1, sizeof *v->tasks);
    if (!v->tasks) {
        free(v);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    }
    *out = v;
    return 0;
}

void rlvr_verifiers_free(rlvr_verifiers *v) {
    if (!v) return;
    for (size_t i = 0; i < v->n; i++) verifier_free(&v->tasks[i]);
    free(v->tasks);
    free(v);
}

void rlvr_verifiers_counts(const rlvr_verifiers *v, int64_t *runs, int64_t *cached, int64_t *freed) {
    *runs = v->runs;
    *cached = v->cached;
    *freed = v->freed;
}

/* Each verify task holds a pooled enclave (a holder process, its
 * namespaces and mounts); a run over thousands of tasks would otherwise keep
 * one for every task it ever verified. Marks the batch's tasks used now,
 * then frees the verify tasks idle longest until at most [train]
 * verify_enclaves would be alive with the batch's (never one of the
 * batch's: other threads may verify them). A freed task gets a fresh
 * enclave when it comes back, with the same verdicts (every run starts from
 * a reset enclave), and keeps its verdict cache. */
static void begin_batch(rlvr_verifiers *vs, const size_t *pool_index, int n) {
    uint64_t now = ++vs->batches;
    int missing = 0;
    for (int i = 0; i < n; i++) {
        task_verifier *v = &vs->tasks[pool_index[i]];
        if (v->last_used != now && !v->vt) missing++;
        v->last_used = now;
    }
    while (vs->live > 0 && vs->live + missing > vs->run->train.verify_enclaves) {
        task_verifier *oldest = NULL;
        for (size_t t = 0; t < vs->n; t++) {
            task_verifier *v = &vs->tasks[t];
            if (v->vt && v->last_used != now && (!oldest || v->last_used < oldest->last_used)) oldest = v;
        }
        if (!oldest) break;
        rlvr_verify_task_free(oldest->vt);
        oldest->vt = NULL;
        vs->live--;
        vs->freed++;
    }
}

static int verifier_for(rlvr_verifiers *vs, const rlvr_task *task, size_t pool_index, task_verifier **out) {
    task_verifier *v = &vs->tasks[pool_index];
    if (!v->vt) {
        RLVR_TRY(rlvr_run_host(vs->run));
        RLVR_TRY(rlvr_harness_verify_task_new(&v->vt, vs->run->host, task, &vs->run->enclave.limits,
                                              vs->run->enclave.consensus_runs));
        __atomic_add_fetch(&vs->live, 1, __ATOMIC_RELAXED);
        /* the check's score is the share [reward] outcome rewards (binary
         * ignores it) */
        rlvr_verify_task_set_partial_credit(v->vt, vs->run->rl.reward.outcome == RLVR_OUTCOME_FAIL_TO_PASS
                                                       ? RLVR_PARTIAL_CREDIT_FAIL_TO_PASS
                                                       : RLVR_PARTIAL_CREDIT_ALL);
        const rlvr_str_list *q = rlvr_pool_manifest_quarantined(vs->run->pool_manifest, task->id);
        if (q && q->n) {
            const char **names = calloc(q->n + 1, sizeof *names);
            if (!names) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
            for (size_t i = 0; i < q->n; i++) names[i] = q->items[i];
            int rc = rlvr_verify_task_set_quarantine(v->vt, names);
            free(names);
            RLVR_TRY(rc);
        }
    }
    *out = v;
    return 0;
}

/* What one verification added to the counts (summed by the caller, so that
 * threads never share a counter). */
typedef struct {
    int64_t runs, cached;
} verify_counts;

static int verify_one(rlvr_verifiers *vs, rlvr_harness_job *j, size_t pool_index, verify_counts *counts) {
    if (j->task->verifier != RLVR_VERIFIER_TESTS) return 0;
    rlvr_rollout *r = &j->record;
    if (r->stop == RLVR_STOP_INFRA_ERROR) {
        r->verdict = RLVR_VERDICT_INFRA;
        return 0;
    }
    if (rlvr_rl_stop_is_truncation(r->stop)) return 0; /* scored by the truncation policy, no patch run */
    task_verifier *v = NULL;
    int rc = verifier_for(vs, j->task, pool_index, &v);
    if (rc == RLVR_ENOMEM) return rc;
    if (rc < 0) {
        rlvr_log_warn("train: verifier for %s unavailable: %s", j->task->id, rlvr_error_last());
        r->verdict = RLVR_VERDICT_INFRA;
        return 0;
    }
    const char *patch = j->patch ? j->patch : "";
    size_t len = j->patch ? j->patch_len : 0;
    uint64_t h = rlvr_fnv1a64(patch, len);
    const cached_verdict *c = vs->run->train.verify_cache && !j->public_tests_changed &&
                                      j->patch_reason == 0
                                  ? cache_find(v, patch, len, h)
                                  : NULL;
    if (c) {
        r->verdict = c->verdict;
        r->verdict_reason = c->reason;
        r->reward.outcome = c->outcome;
        counts->cached++;
        return 0;
    }
    uint64_t seed = vs->run->io.seed ^ ((uint64_t)pool_index << 20);
    rc = rlvr_harness_verify(j, v->vt, seed);
    if (rc == RLVR_ENOMEM) return rc;
    counts->runs++;
    if (rc < 0) {
        rlvr_log_warn("train: verification of a %s rollout failed: %s", j->task->id, rlvr_error_last());
        r->verdict = RLVR_VERDICT_INFRA;
        return 0;
    }
    if (vs->run->train.verify_cache && r->verdict != RLVR_VERDICT_INFRA && !j->public_tests_changed &&
        j->patch_reason == 0)
        RLVR_TRY(cache_add(v, patch, len, h, r));
    return 0;
}


int rlvr_verifiers_verify(rlvr_verifiers *vs, rlvr_harness_job *j, size_t pool_index) {
    begin_batch(vs, &pool_index, 1);
    verify_counts c = {0, 0};
    int rc = verify_one(vs, j, pool_index, &c);
    vs->runs += c.runs, vs->cached += c.cached;
    return rc;
}

/* ---- many jobs on threads ------------------------------------------------------------- */

typedef struct {
    rlvr_verifiers *vs;
    rlvr_harness_job *jobs;
    const size_t *pool_index;
    int n;
    const int *first_of_task; /* job index of each distinct task's first job, in job order */
    int n_tasks;
    pthread_mutex_t lock;
    int next_task;
    verify_counts counts;
    int error; /* first negative code */
    char error_text[1024];
} verify_batch;

/* Verifies, in job order, every job of the task whose first job is `first`. */
static int verify_task_jobs(verify_batch *b, int first, verify_counts *counts) {
    size_t task = b->pool_index[first];
    for (int i = first; i < b->n; i++)
        if (b->pool_index[i] == task) RLVR_TRY(verify_one(b->vs, &b->jobs[i], task, counts));
    return 0;
}

static void *verify_worker(void *arg) {
    verify_batch *b = arg;
    verify_counts mine = {0, 0};
    for (;;) {
        pthread_mutex_lock(&b->lock);
        int k = b->error ? b->n_tasks : b->next_task++;
        pthread_mutex_unlock(&b->lock);
        if (k >= b->n_tasks) break;
        int rc = verify_task_jobs(b, b->first_of_task[k], &mine);
        if (rc < 0) {
            pthread_mutex_lock(&b->lock);
            if (!b->error) b->error = rc, snprintf(b->error_text, sizeof b->error_text, "%s", rlvr_error_last());
            pthread_mutex_unlock(&b->lock);
        }
    }
    pthread_mutex_lock(&b->lock);
    b->counts.runs += mine.runs, b->counts.cached += mine.cached;
    pthread_mutex_unlock(&b->lock);
    return NULL;
}

/* The index of each distinct task's first job, in job order. */
static int distinct_tasks(const size_t *pool_index, int n, int *first_of_task) {
    int k = 0;
    for (int i = 0; i < n; i++) {
        bool seen = false;
        for (int j = 0; j < k && !seen; j++) seen = pool_index[first_of_task[j]] == pool_index[i];
        if (!seen) first_of_task[k++] = i;
    }
    return k;
}

int rlvr_verifiers_verify_jobs(rlvr_verifiers *vs, rlvr_harness_job *jobs, int n, const size_t *pool_index,
                               int threads) {
    if (n <= 0) return 0;
    begin_batch(vs, pool_index, n);
    /* the sandbox host is made on first use: make it before the workers
     * would race to; when it cannot be made, one thread meets that failure
     * job by job (INFRA verdicts), as rlvr_verifiers_verify would */
    bool host_ok = true;
    for (int i = 0; i < n; i++)
        if (jobs[i].task->verifier == RLVR_VERIFIER_TESTS) {
            int rc = rlvr_run_host(vs->run);
            if (rc == RLVR_ENOMEM) return rc;
            host_ok = rc == 0;
            break;
        }
    int *first_of_task = malloc((size_t)n * sizeof *first_of_task);
    if (!first_of_task) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    verify_batch b = {.vs = vs, .jobs = jobs, .pool_index = pool_index, .n = n, .first_of_task = first_of_task};
    b.n_tasks = distinct_tasks(pool_index, n, first_of_task);
    if (threads < 1) threads = rlvr_physical_cores();
    if (threads > b.n_tasks) threads = b.n_tasks;
    if (!host_ok) threads = 1;
    pthread_mutex_init(&b.lock, NULL);
    pthread_t *ids = threads > 1 ? calloc((size_t)threads, sizeof *ids) : NULL;
    int started = 0;
    for (int i = 0; ids && i < threads; i++)
        if (pthread_create(&ids[i], NULL, verify_worker, &b) == 0) started++;
    if (started == 0) verify_worker(&b);
    for (int i = 0; i < started; i++) pthread_join(ids[i], NULL);
    free(ids);
    pthread_mutex_destroy(&b.lock);
    free(first_of_task);
    vs->runs += b.counts.runs, vs->cached += b.counts.cached;
    return b.error ? rlvr_error_set(b.error, "%s", b.error_text) : 0;
}
