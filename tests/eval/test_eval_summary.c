/* tests/eval/test_eval_summary.c — aggregation against numbers derived by
 * hand from the formulas of docs/EVAL.md:
 *   pass@k (unbiased) = 1 − C(n−c, k)/C(n, k), pass^k = C(c, k)/C(n, k),
 *   averaged over the tasks with ≥ k scored samples; Wilson over pooled
 *   samples; percentile bootstrap over tasks; the paired difference; JSON
 *   round trip and merging of shards. */
#include "eval/eval.h"
#include "rl/estimators.h"
#include "test.h"

#include <math.h>

typedef struct {
    const char *id, *family;
    int32_t n, c, infra;
    int64_t calls, parsed;
} row;

/* samples = 4:
 *   a (x): 0 of 4      b (x): 2 of 4      c (x): 4 of 4
 *   d (y): 1 of 3, one infra               e (y): every sample infra */
static const row rows[] = {
    {"a", "x", 4, 0, 0, 10, 9}, {"b", "x", 4, 2, 0, 0, 0}, {"c", "x", 4, 4, 0, 0, 0},
    {"d", "y", 3, 1, 1, 0, 0},  {"e", "y", 0, 0, 4, 2, 2},
};

static rlvr_eval_result *make(const row *r, size_t n, uint64_t seed) {
    rlvr_eval_result *res = NULL;
    CHECK_OK(rlvr_eval_result_new(&res, n, 4, seed, 1.0f));
    for (size_t i = 0; res && i < n; i++) {
        CHECK_OK(rlvr_eval_result_set_task(res, i, r[i].id, r[i].family, RLVR_SPLIT_EVAL, (uint32_t)i));
        res->tasks[i].n = r[i].n;
        res->tasks[i].c = r[i].c;
        res->tasks[i].infra = r[i].infra;
        res->tasks[i].calls = r[i].calls;
        res->tasks[i].calls_parsed = r[i].parsed;
    }
    if (res) CHECK_OK(rlvr_eval_result_summarize(res, 0.95, 2000));
    return res;
}

static void check_curves(const rlvr_eval_result *r) {
    CHECK(r->n_groups == 3);
    const rlvr_eval_group *all = rlvr_eval_result_group(r, "all"), *x = rlvr_eval_result_group(r, "x"),
                          *y = rlvr_eval_result_group(r, "y");
    CHECK(all && x && y && r->groups == all && &r->groups[1] == x);
    if (!all || !x || !y) return;
    CHECK(all->n_k == 3 && all->k[0] == 1 && all->k[1] == 2 && all->k[2] == 4);
    /* family x: per-task pass@1 0, 1/2, 1 */
    CHECK_NEAR(x->pass_at[0].value, 0.5, 1e-12);
    /* pass@2: 0, 1 − C(2,2)/C(4,2) = 5/6, 1 */
    CHECK_NEAR(x->pass_at[1].value, (0 + 5.0 / 6 + 1) / 3, 1e-12);
    /* pass@4: 0, 1 (C(2,4) = 0), 1 */
    CHECK_NEAR(x->pass_at[2].value, 2.0 / 3, 1e-12);
    /* pass^2: 0, C(2,2)/C(4,2) = 1/6, 1; pass^4: 0, 0, 1 */
    CHECK_NEAR(x->pass_hat[1].value, (1.0 / 6 + 1) / 3, 1e-12);
    CHECK_NEAR(x->pass_hat[2].value, 1.0 / 3, 1e-12);
    CHECK(x->n_tasks == 3 && x->excluded == 0 && x->k_tasks[2] == 3);
    CHECK_NEAR(x->compliance, 0.9, 1e-12);
    /* family y: d alone (e has no scored sample); 1 of 3 */
    CHECK(y->n_tasks == 1 && y->excluded == 1 && y->infra == 5 && y->samples == 3 && y->successes == 1);
    CHECK_NEAR(y->pass_at[0].value, 1.0 / 3, 1e-12);
    CHECK_NEAR(y->pass_at[1].value, 1 - 1.0 / 3, 1e-12); /* 1 − C(2,2)/C(3,2) */
    CHECK_NEAR(y->pass_hat[1].value, 0.0, 1e-12);         /* C(1,2) = 0 */
    CHECK(y->k_tasks[2] == 0 && isnan(y->pass_at[2].value) && isnan(y->pass_hat[2].low));
    CHECK_NEAR(y->pass_at[0].low, 1.0 / 3, 1e-12); /* one task: the interval collapses */
    CHECK_NEAR(y->pass_at[0].high, 1.0 / 3, 1e-12);
    CHECK_NEAR(y->compliance, 1.0, 0);
    /* all: a b c d */
    CHECK_NEAR(all->pass_at[0].value, (0 + 0.5 + 1 + 1.0 / 3) / 4, 1e-12);
    CHECK_NEAR(all->pass_at[1].value, (0 + 5.0 / 6 + 1 + 2.0 / 3) / 4, 1e-12);
    CHECK_NEAR(all->pass_at[2].value, 2.0 / 3, 1e-12);
    CHECK(all->k_tasks[0] == 4 && all->k_tasks[2] == 3);
    CHECK_NEAR(all->pass_hat[1].value, (1.0 / 6 + 1) / 4, 1e-12);
    CHECK(all->samples == 15 && all->successes == 7 && all->infra == 5 && all->excluded == 1);
    CHECK_NEAR(all->compliance, 11.0 / 12, 1e-12);
    /* Wilson, 7 of 15: (p + z²/2n ± z·sqrt(p(1−p)/n + z²/4n²)) / (1 + z²/n) */
    double z = 1.959963984540054, n = 15, p = 7 / n;
    double centre = (p + z * z / (2 * n)) / (1 + z * z / n);
    double half = z / (1 + z * z / n) * sqrt(p * (1 - p) / n + z * z / (4 * n * n));
    CHECK_NEAR(all->pass_rate_low, centre - half, 1e-9);
    CHECK_NEAR(all->pass_rate_high, centre + half, 1e-9);
    for (int32_t i = 0; i < all->n_k; i++)
        CHECK(all->pass_at[i].low <= all->pass_at[i].value && all->pass_at[i].value <= all->pass_at[i].high);
}

/* The bootstrap interval is the paired bootstrap of (values, 0), keyed by
 * the result's seed; with two tasks scoring 0 and 1 the resampled mean is
 * 0, 1/2 or 1 with probabilities 1/4, 1/2, 1/4, so the 95 % percentile
 * interval is [0, 1]. */
static void check_bootstrap(void) {
    const row two[] = {{"p", "z", 4, 0, 0, 0, 0}, {"q", "z", 4, 4, 0, 0, 0}};
    rlvr_eval_result *r = make(two, 2, 7);
    if (!r) return;
    const rlvr_eval_group *g = rlvr_eval_result_group(r, "z");
    CHECK_NEAR(g->pass_at[0].value, 0.5, 1e-12);
    CHECK_NEAR(g->pass_at[0].low, 0.0, 1e-12);
    CHECK_NEAR(g->pass_at[0].high, 1.0, 1e-12);
    rlvr_eval_result_free(r);

    rlvr_eval_result *full = make(rows, 5, 11);
    if (!full) return;
    double v[4] = {0, 0.5, 1, 1.0 / 3}, zero[4] = {0};
    rlvr_bootstrap b;
    CHECK_OK(rlvr_rl_paired_bootstrap(&b, v, zero, 4, 2000, 0.95, 11));
    CHECK_NEAR(full->groups[0].pass_at[0].low, b.low, 1e-12);
    CHECK_NEAR(full->groups[0].pass_at[0].high, b.high, 1e-12);
    rlvr_eval_result_free(full);
}

/* cand − base per task: base pass@1 0, 1/2, 1; cand 1/2, 1/2, 1 → mean 1/6;
 * the resampled means lie in {0, 1/6, 1/3, 1/2}. */
static void check_compare(void) {
    const row base_rows[] = {{"t1", "f", 4, 0, 0, 0, 0}, {"t2", "f", 4, 2, 0, 0, 0}, {"t3", "g", 4, 4, 0, 0, 0}};
    const row cand_rows[] = {{"t3", "g", 4, 4, 0, 0, 0}, {"t1", "f", 4, 2, 0, 0, 0}, {"t2", "f", 2, 1, 2, 0, 0}};
    rlvr_eval_result *base = make(base_rows, 3, 1), *cand = make(cand_rows, 3, 1);
    if (!base || !cand) return;
    rlvr_eval_comparison c;
    CHECK_OK(rlvr_eval_compare(&c, base, cand, NULL, 0.95, 2000));
    CHECK(c.n_tasks == 3 && c.unpaired == 0);
    CHECK_NEAR(c.mean_diff, 1.0 / 6, 1e-12);
    CHECK_NEAR(c.base_pass1, 0.5, 1e-12);
    CHECK_NEAR(c.cand_pass1, 2.0 / 3, 1e-12);
    CHECK(c.low >= 0 && c.low <= 1.0 / 6 && c.high >= 1.0 / 6 && c.high <= 0.5);
    rlvr_eval_comparison back;
    CHECK_OK(rlvr_eval_compare(&back, cand, base, NULL, 0.95, 2000));
    CHECK_NEAR(back.mean_diff, -1.0 / 6, 1e-12);
    CHECK_OK(rlvr_eval_compare(&c, base, cand, "f", 0.95, 2000)); /* t1, t2: diffs 1/2, 0 */
    CHECK(c.n_tasks == 2);
    CHECK_NEAR(c.mean_diff, 0.25, 1e-12);
    CHECK_OK(rlvr_eval_compare(&c, base, cand, "g", 0.95, 2000));
    CHECK(c.n_tasks == 1 && c.mean_diff == 0 && c.low == 0 && c.high == 0);
    char *text = NULL;
    CHECK_OK(rlvr_eval_comparison_to_json(&c, &text));
    CHECK(text && strstr(text, "\"mean_diff\""));
    free(text);
    /* other tasks */
    snprintf(cand->tasks[0].id, sizeof cand->tasks[0].id, "t9");
    CHECK(rlvr_eval_compare(&c, base, cand, NULL, 0.95, 2000) == RLVR_EINVAL);
    CHECK(strstr(rlvr_error_last(), "in one result only") != NULL);
    rlvr_eval_result_free(base);
    rlvr_eval_result_free(cand);
}

static void check_json_and_merge(void) {
    rlvr_eval_result *r = make(rows, 5, 99);
    if (!r) return;
    r->stats.rollouts = 20;
    r->stats.verify_cache_hits = 3;
    char *text = NULL;
    CHECK_OK(rlvr_eval_result_to_json(r, 2, &text));
    CHECK(text && strstr(text, "\"format\": \"rlvr-eval/1\"") && strstr(text, "\"pass_at_k\""));
    CHECK(text && strstr(text, "\"value\": null")); /* y's pass@4: no task has 4 scored samples */
    rlvr_eval_result *back = NULL;
    CHECK_OK(rlvr_eval_result_from_json(&back, text, text ? strlen(text) : 0));
    if (back) {
        CHECK(back->n_tasks == 5 && back->n_groups == 3 && back->seed == 99 && back->stats.verify_cache_hits == 3);
        for (size_t g = 0; g < 3; g++)
            for (int32_t k = 0; k < 3; k++) {
                CHECK(back->groups[g].pass_at[k].value == r->groups[g].pass_at[k].value ||
                      isnan(r->groups[g].pass_at[k].value));
                CHECK(back->groups[g].pass_at[k].low == r->groups[g].pass_at[k].low ||
                      isnan(r->groups[g].pass_at[k].low));
            }
    }
    free(text);
    rlvr_eval_result_free(back);

    /* two shards merge to the same numbers as the whole */
    rlvr_eval_result *p1 = make(rows, 2, 99), *p2 = make(rows + 2, 3, 99), *m = NULL;
    const rlvr_eval_result *parts[2] = {p1, p2};
    CHECK_OK(rlvr_eval_result_merge(&m, parts, 2, 0.95, 2000));
    if (m)
        for (size_t g = 0; g < 3; g++) {
            CHECK(strcmp(m->groups[g].name, r->groups[g].name) == 0);
            CHECK(m->groups[g].pass_at[1].value == r->groups[g].pass_at[1].value);
            CHECK(m->groups[g].pass_at[0].high == r->groups[g].pass_at[0].high);
        }
    const rlvr_eval_result *twice[2] = {p1, p1};
    rlvr_eval_result *dup = NULL;
    CHECK(rlvr_eval_result_merge(&dup, twice, 2, 0.95, 2000) == RLVR_EINVAL && !dup);
    rlvr_eval_result_free(m);
    rlvr_eval_result_free(p1);
    rlvr_eval_result_free(p2);

    CHECK(rlvr_eval_result_from_json(&back, "{\"format\": \"other\"}", 19) == RLVR_EFORMAT);
    r->tasks[0].c = 5; /* more successes than scored samples */
    CHECK(rlvr_eval_result_summarize(r, 0.95, 100) == RLVR_EINVAL);
    rlvr_eval_result_free(r);
}

int main(void) {
    rlvr_eval_result *r = make(rows, 5, 3);
    if (r) check_curves(r);
    rlvr_eval_result_free(r);
    check_bootstrap();
    check_compare();
    check_json_and_merge();
    return test_summary("test_eval_summary");
}
