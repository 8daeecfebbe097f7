/* eval/summary.c — from per-task counts to pass@k / pass^k per family with
 * bootstrap intervals over tasks, and the paired comparison of two results.
 * The estimators themselves are rl/estimators.h's. */
#include "eval/eval.h"

#include "core/error.h"
#include "rl/estimators.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- results from counts --------------------------------------------------------------- */

int rlvr_eval_result_new(rlvr_eval_result **out, size_t n_tasks, int32_t samples, uint64_t seed, float temperature) {
    *out = NULL;
    if (n_tasks == 0 || n_tasks > INT32_MAX || samples < 1)
        return RLVR_FAIL(RLVR_EINVAL, "eval result: %zu tasks, %d samples", n_tasks, samples);
    rlvr_eval_result *r;
    RLVR_ALLOC(r, 1);
    r->tasks = calloc(n_tasks, sizeof *r->tasks);
    if (!r->tasks) {
        free(r);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory for %zu task results", n_tasks);
    }
    r->n_tasks = n_tasks;
    r->samples = samples;
    r->seed = seed;
    r->temperature = temperature;
    *out = r;
    return 0;
}

int rlvr_eval_result_set_task(rlvr_eval_result *r, size_t i, const char *id, const char *family, rlvr_split split,
                              uint32_t index) {
    if (!r || i >= r->n_tasks || !id || !family || strlen(id) >= RLVR_TASK_ID_CAP)
        return RLVR_FAIL(RLVR_EINVAL, "eval result: bad task %zu", i);
    rlvr_eval_task_result *t = &r->tasks[i];
    char *f = strdup(family);
    if (!f) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    free(t->family);
    t->family = f;
    snprintf(t->id, sizeof t->id, "%s", id);
    t->split = split;
    t->index = index;
    return 0;
}

static void free_groups(rlvr_eval_result *r) {
    for (size_t g = 0; g < r->n_groups; g++) free(r->groups[g].name);
    free(r->groups);
    r->groups = NULL;
    r->n_groups = 0;
}

void rlvr_eval_result_free(rlvr_eval_result *r) {
    if (!r) return;
    for (size_t i = 0; i < r->n_tasks; i++) free(r->tasks[i].family);
    free(r->tasks);
    free_groups(r);
    free(r);
}

const rlvr_eval_group *rlvr_eval_result_group(const rlvr_eval_result *r, const char *name) {
    for (size_t g = 0; r && name && g < r->n_groups; g++)
        if (strcmp(r->groups[g].name, name) == 0) return &r->groups[g];
    return NULL;
}

/* ---- checks ------------------------------------------------------------------------------ */

static int check_task(const rlvr_eval_result *r, const rlvr_eval_task_result *t) {
    if (!t->family) return RLVR_FAIL(RLVR_EINVAL, "eval result: task %s has no family", t->id);
    bool ok = t->n >= 0 && t->c >= 0 && t->c <= t->n && t->infra >= 0 && (int64_t)t->n + t->infra <= r->samples &&
              t->truncated >= 0 && t->dropped >= 0 && t->truncated + t->dropped <= t->n && t->calls >= 0 &&
              t->calls_parsed >= 0 && t->calls_parsed <= t->calls;
    if (!ok)
        return RLVR_FAIL(RLVR_EINVAL,
                         "eval result: task %s: counts out of range (n %d, c %d, infra %d, truncated %d, dropped %d, "
                         "calls %lld/%lld, %d samples)",
                         t->id, t->n, t->c, t->infra, t->truncated, t->dropped, (long long)t->calls_parsed,
                         (long long)t->calls, r->samples);
    return 0;
}

/* ---- groups ------------------------------------------------------------------------------ */

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* "all", then the distinct families sorted by name. *names borrows the
 * tasks' strings. */
static int group_names(const rlvr_eval_result *r, const char ***names, size_t *n) {
    const char **v;
    RLVR_ALLOC(v, r->n_tasks + 1);
    for (size_t i = 0; i < r->n_tasks; i++) v[i + 1] = r->tasks[i].family;
    qsort(v + 1, r->n_tasks, sizeof *v, cmp_str);
    size_t k = 1;
    for (size_t i = 1; i <= r->n_tasks; i++)
        if (k == 1 || strcmp(v[i], v[k - 1]) != 0) v[k++] = v[i];
    v[0] = "all";
    *names = v;
    *n = k;
    return 0;
}

static bool in_group(const rlvr_eval_task_result *t, const char *name) {
    return strcmp(name, "all") == 0 || strcmp(t->family, name) == 0;
}

/* k = 1, 2, 4, … ≤ samples, and samples itself. */
static void choose_ks(rlvr_eval_group *g, int32_t samples) {
    g->n_k = 0;
    for (int64_t k = 1; k <= samples && g->n_k < RLVR_EVAL_MAX_K; k *= 2) g->k[g->n_k++] = k;
    if (g->k[g->n_k - 1] != samples && g->n_k < RLVR_EVAL_MAX_K) g->k[g->n_k++] = samples;
}

/* Mean of per-task values with its percentile bootstrap interval over tasks:
 * the paired bootstrap of (v, 0) resamples exactly the mean of v. */
static int estimate(rlvr_eval_estimate *e, const double *v, const double *zeros, int32_t n, double confidence,
                    int32_t resamples, uint64_t seed) {
    if (n == 0) {
        *e = (rlvr_eval_estimate){NAN, NAN, NAN};
        return 0;
    }
    rlvr_bootstrap b;
    RLVR_TRY(rlvr_rl_paired_bootstrap(&b, v, zeros, n, resamples, confidence, seed));
    *e = (rlvr_eval_estimate){b.mean_diff, b.low, b.high};
    return 0;
}

typedef int (*estimator_fn)(double *out, int64_t n, int64_t c, int64_t k);

/* The estimator at k over the group's tasks with at least k scored samples. */
static int estimate_at_k(rlvr_eval_estimate *e, int32_t *used, const rlvr_eval_result *r, const char *name,
                         estimator_fn fn, int64_t k, double *buf, const double *zeros, double confidence,
                         int32_t resamples) {
    int32_t n = 0;
    for (size_t i = 0; i < r->n_tasks; i++) {
        const rlvr_eval_task_result *t = &r->tasks[i];
        if (!in_group(t, name) || t->n < k) continue;
        RLVR_TRY(fn(&buf[n++], t->n, t->c, k));
    }
    *used = n;
    return estimate(e, buf, zeros, n, confidence, resamples, r->seed);
}

static void count_group(rlvr_eval_group *g, const rlvr_eval_result *r) {
    for (size_t i = 0; i < r->n_tasks; i++) {
        const rlvr_eval_task_result *t = &r->tasks[i];
        if (!in_group(t, g->name)) continue;
        if (t->n > 0) g->n_tasks++;
        else g->excluded++;
        g->samples += t->n;
        g->successes += t->c;
        g->infra += t->infra;
        g->truncated += t->truncated;
        g->dropped += t->dropped;
        g->calls += t->calls;
        g->calls_parsed += t->calls_parsed;
    }
    g->compliance = g->calls ? (double)g->calls_parsed / (double)g->calls : 1.0;
}

static int summarize_group(rlvr_eval_group *g, const rlvr_eval_result *r, double *buf, const double *zeros,
                           double confidence, int32_t resamples) {
    count_group(g, r);
    g->pass_rate_low = g->pass_rate_high = NAN;
    if (g->samples > 0)
        RLVR_TRY(rlvr_rl_wilson_interval(&g->pass_rate_low, &g->pass_rate_high, g->successes, g->samples, confidence));
    choose_ks(g, r->samples);
    for (int32_t i = 0; i < g->n_k; i++) {
        RLVR_TRY(estimate_at_k(&g->pass_at[i], &g->k_tasks[i], r, g->name, rlvr_rl_pass_at_k, g->k[i], buf, zeros,
                               confidence, resamples));
        int32_t same;
        RLVR_TRY(estimate_at_k(&g->pass_hat[i], &same, r, g->name, rlvr_rl_pass_hat_k, g->k[i], buf, zeros,
                               confidence, resamples));
    }
    return 0;
}

static int summarize_groups(rlvr_eval_result *r, const char **names, size_t n, double confidence,
                            int32_t resamples) {
    double *buf = calloc(r->n_tasks, sizeof *buf), *zeros = calloc(r->n_tasks, sizeof *zeros);
    r->groups = calloc(n, sizeof *r->groups);
    int rc = buf && zeros && r->groups ? 0 : RLVR_FAIL(RLVR_ENOMEM, "out of memory summarising %zu tasks", r->n_tasks);
    for (size_t g = 0; rc == 0 && g < n; g++) {
        r->groups[g].name = strdup(names[g]);
        r->n_groups = g + 1;
        rc = r->groups[g].name ? summarize_group(&r->groups[g], r, buf, zeros, confidence, resamples)
                               : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    }
    free(buf);
    free(zeros);
    return rc;
}

int rlvr_eval_result_summarize(rlvr_eval_result *r, double confidence, int32_t resamples) {
    if (!r) return RLVR_FAIL(RLVR_EINVAL, "eval summarize: no result");
    if (!(confidence > 0 && confidence < 1) || resamples < 1)
        return RLVR_FAIL(RLVR_EINVAL, "eval summarize: confidence %g outside (0, 1) or resamples %d < 1", confidence,
                         resamples);
    for (size_t i = 0; i < r->n_tasks; i++) RLVR_TRY(check_task(r, &r->tasks[i]));
    free_groups(r);
    r->confidence = confidence;
    r->resamples = resamples;
    const char **names = NULL;
    size_t n = 0;
    RLVR_TRY(group_names(r, &names, &n));
    int rc = summarize_groups(r, names, n, confidence, resamples);
    free(names);
    if (rc < 0) free_groups(r);
    return rc;
}

/* ---- merging shards ---------------------------------------------------------------------- */

static int check_parts(const rlvr_eval_result *const *parts, size_t n_parts, size_t *n_tasks) {
    if (!parts || n_parts == 0 || !parts[0]) return RLVR_FAIL(RLVR_EINVAL, "eval merge: no results");
    *n_tasks = 0;
    for (size_t p = 0; p < n_parts; p++) {
        const rlvr_eval_result *a = parts[p];
        if (!a) return RLVR_FAIL(RLVR_EINVAL, "eval merge: result %zu is NULL", p);
        if (a->samples != parts[0]->samples || a->seed != parts[0]->seed ||
            a->temperature != parts[0]->temperature)
            return RLVR_FAIL(RLVR_EINVAL, "eval merge: result %zu has other settings (samples, seed or temperature)", p);
        *n_tasks += a->n_tasks;
    }
    return 0;
}

static void add_stats(rlvr_eval_stats *to, const rlvr_eval_stats *s) {
    to->rollouts += s->rollouts;
    to->verifications += s->verifications;
    to->verify_cache_hits += s->verify_cache_hits;
    to->wall_s += s->wall_s;
    to->generate_s += s->generate_s;
    to->verify_s += s->verify_s;
}

static int copy_task(rlvr_eval_result *r, size_t i, const rlvr_eval_task_result *t) {
    RLVR_TRY(rlvr_eval_result_set_task(r, i, t->id, t->family ? t->family : "", t->split, t->index));
    char *family = r->tasks[i].family;
    r->tasks[i] = *t;
    r->tasks[i].family = family;
    return 0;
}

static int find_duplicate(const rlvr_eval_result *r) {
    const char **ids;
    RLVR_ALLOC(ids, r->n_tasks);
    for (size_t i = 0; i < r->n_tasks; i++) ids[i] = r->tasks[i].id;
    qsort(ids, r->n_tasks, sizeof *ids, cmp_str);
    int rc = 0;
    for (size_t i = 1; rc == 0 && i < r->n_tasks; i++)
        if (strcmp(ids[i], ids[i - 1]) == 0) rc = RLVR_FAIL(RLVR_EINVAL, "eval merge: task %s appears twice", ids[i]);
    free(ids);
    return rc;
}

int rlvr_eval_result_merge(rlvr_eval_result **out, const rlvr_eval_result *const *parts, size_t n_parts,
                           double confidence, int32_t resamples) {
    *out = NULL;
    size_t n = 0;
    RLVR_TRY(check_parts(parts, n_parts, &n));
    rlvr_eval_result *r;
    RLVR_TRY(rlvr_eval_result_new(&r, n, parts[0]->samples, parts[0]->seed, parts[0]->temperature));
    int rc = 0;
    size_t i = 0;
    for (size_t p = 0; rc == 0 && p < n_parts; p++) {
        add_stats(&r->stats, &parts[p]->stats);
        for (size_t t = 0; rc == 0 && t < parts[p]->n_tasks; t++) rc = copy_task(r, i++, &parts[p]->tasks[t]);
    }
    if (rc == 0) rc = find_duplicate(r);
    if (rc == 0) rc = rlvr_eval_result_summarize(r, confidence, resamples);
    if (rc < 0) rlvr_eval_result_free(r);
    else *out = r;
    return rc;
}

/* ---- comparing ---------------------------------------------------------------------------- */

static int cmp_task_id(const void *a, const void *b) {
    return strcmp((*(const rlvr_eval_task_result *const *)a)->id, (*(const rlvr_eval_task_result *const *)b)->id);
}

/* The tasks sorted by id. */
static int sorted_tasks(const rlvr_eval_result *r, const rlvr_eval_task_result ***out) {
    const rlvr_eval_task_result **v;
    RLVR_ALLOC(v, r->n_tasks);
    for (size_t i = 0; i < r->n_tasks; i++) v[i] = &r->tasks[i];
    qsort(v, r->n_tasks, sizeof *v, cmp_task_id);
    *out = v;
    return 0;
}

/* Per-task pass@1 of the paired tasks into a[] (base) and b[] (cand). */
static int pair_tasks(const rlvr_eval_task_result **x, const rlvr_eval_task_result **y, size_t n, const char *family,
                      double *a, double *b, int32_t *paired, int32_t *unpaired) {
    *paired = *unpaired = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(x[i]->id, y[i]->id) != 0)
            return RLVR_FAIL(RLVR_EINVAL, "eval compare: task %s is in one result only",
                             strcmp(x[i]->id, y[i]->id) < 0 ? x[i]->id : y[i]->id);
        if (!in_group(x[i], family)) continue;
        if (x[i]->n == 0 || y[i]->n == 0) {
            ++*unpaired;
            continue;
        }
        a[*paired] = (double)x[i]->c / x[i]->n;
        b[*paired] = (double)y[i]->c / y[i]->n;
        ++*paired;
    }
    return 0;
}

static double mean(const double *v, int32_t n) {
    double s = 0;
    for (int32_t i = 0; i < n; i++) s += v[i];
    return n ? s / n : NAN;
}

int rlvr_eval_compare(rlvr_eval_comparison *out, const rlvr_eval_result *base, const rlvr_eval_result *cand,
                      const char *family, double confidence, int32_t resamples) {
    if (!out || !base || !cand) return RLVR_FAIL(RLVR_EINVAL, "eval compare: two results needed");
    if (base->n_tasks != cand->n_tasks)
        return RLVR_FAIL(RLVR_EINVAL, "eval compare: %zu tasks against %zu; compare results on the same tasks",
                         base->n_tasks, cand->n_tasks);
    const char *name = family ? family : "all";
    const rlvr_eval_task_result **x = NULL, **y = NULL;
    double *a = calloc(base->n_tasks, sizeof *a), *b = calloc(base->n_tasks, sizeof *b);
    int rc = a && b ? 0 : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    if (rc == 0) rc = sorted_tasks(base, &x);
    if (rc == 0) rc = sorted_tasks(cand, &y);
    int32_t paired = 0, unpaired = 0;
    if (rc == 0) rc = pair_tasks(x, y, base->n_tasks, name, a, b, &paired, &unpaired);
    if (rc == 0 && paired == 0) rc = RLVR_FAIL(RLVR_EINVAL, "eval compare: no %s task scored in both results", name);
    rlvr_bootstrap bs;
    if (rc == 0) rc = rlvr_rl_paired_bootstrap(&bs, b, a, paired, resamples, confidence, base->seed);
    if (rc == 0)
        *out = (rlvr_eval_comparison){.n_tasks = paired, .unpaired = unpaired, .base_pass1 = mean(a, paired),
                                      .cand_pass1 = mean(b, paired), .mean_diff = bs.mean_diff, .low = bs.low,
                                      .high = bs.high, .confidence = confidence, .resamples = resamples};
    free(x);
    free(y);
    free(a);
    free(b);
    return rc;
}
