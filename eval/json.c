/* eval/json.c — results and comparisons as JSON (docs/EVAL.md, "JSON"),
 * and results read back from their per-task counts. */
#include "eval/eval.h"

#include "core/error.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- writing ------------------------------------------------------------------------------ */

/* A number, or null for NAN (JSON has no NaN). */
static json_t *num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *estimate_json(const rlvr_eval_estimate *e) {
    return json_pack("{s:o, s:o, s:o}", "value", num(e->value), "low", num(e->low), "high", num(e->high));
}

static json_t *curve_json(const rlvr_eval_group *g, const rlvr_eval_estimate *est) {
    json_t *a = json_array();
    for (int32_t i = 0; a && i < g->n_k; i++) {
        json_t *e = estimate_json(&est[i]);
        if (e) json_object_update_new(e, json_pack("{s:I, s:i}", "k", (json_int_t)g->k[i], "tasks", g->k_tasks[i]));
        json_array_append_new(a, e);
    }
    return a;
}

static json_t *group_json(const rlvr_eval_group *g) {
    json_t *o = json_pack("{s:s, s:i, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o}", "family", g->name, "tasks",
                          g->n_tasks, "excluded", g->excluded, "samples", (json_int_t)g->samples, "successes",
                          (json_int_t)g->successes, "infra", (json_int_t)g->infra, "truncated",
                          (json_int_t)g->truncated, "dropped", (json_int_t)g->dropped, "calls", (json_int_t)g->calls,
                          "calls_parsed", (json_int_t)g->calls_parsed, "compliance", num(g->compliance));
    if (!o) return NULL;
    json_object_set_new(o, "pass1", estimate_json(&g->pass_at[0]));
    json_object_set_new(o, "pass_rate_wilson", json_pack("{s:o, s:o}", "low", num(g->pass_rate_low), "high",
                                                         num(g->pass_rate_high)));
    json_object_set_new(o, "pass_at_k", curve_json(g, g->pass_at));
    json_object_set_new(o, "pass_hat_k", curve_json(g, g->pass_hat));
    return o;
}

static json_t *task_json(const rlvr_eval_task_result *t) {
    return json_pack("{s:s, s:s, s:s, s:I, s:i, s:i, s:i, s:i, s:i, s:I, s:I, s:I}", "id", t->id, "family",
                     t->family ? t->family : "", "split", rlvr_split_name(t->split), "index", (json_int_t)t->index,
                     "n", t->n, "c", t->c, "infra", t->infra, "truncated", t->truncated, "dropped", t->dropped,
                     "calls", (json_int_t)t->calls, "calls_parsed", (json_int_t)t->calls_parsed, "policy_tokens",
                     (json_int_t)t->policy_tokens);
}

static json_t *stats_json(const rlvr_eval_stats *s) {
    return json_pack("{s:I, s:I, s:I, s:o, s:o, s:o}", "rollouts", (json_int_t)s->rollouts, "verifications",
                     (json_int_t)s->verifications, "verify_cache_hits", (json_int_t)s->verify_cache_hits, "wall_s",
                     num(s->wall_s), "generate_s", num(s->generate_s), "verify_s", num(s->verify_s));
}

static json_t *result_json(const rlvr_eval_result *r) {
    json_t *groups = json_array(), *tasks = json_array();
    for (size_t g = 0; groups && g < r->n_groups; g++) json_array_append_new(groups, group_json(&r->groups[g]));
    for (size_t i = 0; tasks && i < r->n_tasks; i++) json_array_append_new(tasks, task_json(&r->tasks[i]));
    char seed[24];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)r->seed);
    return json_pack("{s:s, s:i, s:s, s:o, s:o, s:i, s:o, s:o, s:o}", "format", RLVR_EVAL_FORMAT, "samples",
                     r->samples, "seed", seed, "temperature", num(r->temperature), "confidence", num(r->confidence),
                     "resamples", r->resamples, "groups", groups, "tasks", tasks, "stats", stats_json(&r->stats));
}

static int dump(json_t *o, int indent, char **out, const char *what) {
    *out = NULL;
    if (!o) return RLVR_FAIL(RLVR_ENOMEM, "out of memory rendering %s as JSON", what);
    size_t flags = JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10) | (indent > 0 ? JSON_INDENT(indent) : JSON_COMPACT);
    *out = json_dumps(o, flags);
    json_decref(o);
    return *out ? 0 : RLVR_FAIL(RLVR_ENOMEM, "out of memory rendering %s as JSON", what);
}

int rlvr_eval_result_to_json(const rlvr_eval_result *r, int indent, char **out) {
    if (!r || !out) return RLVR_FAIL(RLVR_EINVAL, "eval to JSON: result and output needed");
    return dump(result_json(r), indent, out, "an evaluation result");
}

int rlvr_eval_comparison_to_json(const rlvr_eval_comparison *c, char **out) {
    if (!c || !out) return RLVR_FAIL(RLVR_EINVAL, "eval comparison to JSON: comparison and output needed");
    json_t *o = json_pack("{s:i, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:i}", "tasks", c->n_tasks, "unpaired",
                          c->unpaired, "base_pass1", num(c->base_pass1), "cand_pass1", num(c->cand_pass1),
                          "mean_diff", num(c->mean_diff), "low", num(c->low), "high", num(c->high), "confidence",
                          num(c->confidence), "resamples", c->resamples);
    return dump(o, 0, out, "a comparison");
}

/* ---- reading ------------------------------------------------------------------------------ */

static int bad(const char *field) {
    return RLVR_FAIL(RLVR_EFORMAT, "evaluation result (%s): field \"%s\" missing or of the wrong type", RLVR_EVAL_FORMAT,
                     field);
}

static int get_int(json_t *o, const char *field, int64_t lo, int64_t hi, int64_t *out) {
    json_t *v = json_object_get(o, field);
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) return bad(field);
    *out = json_integer_value(v);
    return 0;
}

static int get_i32(json_t *o, const char *field, int32_t *out) {
    int64_t v = 0;
    RLVR_TRY(get_int(o, field, 0, INT32_MAX, &v));
    *out = (int32_t)v;
    return 0;
}

static int read_task(rlvr_eval_result *r, size_t i, json_t *t) {
    const char *id = json_string_value(json_object_get(t, "id"));
    const char *family = json_string_value(json_object_get(t, "family"));
    const char *split_name = json_string_value(json_object_get(t, "split"));
    if (!id || !family || !split_name) return bad("tasks[].id/family/split");
    rlvr_split split;
    if (rlvr_split_parse(split_name, &split) < 0) return bad("tasks[].split");
    int64_t index = 0;
    RLVR_TRY(get_int(t, "index", 0, UINT32_MAX, &index));
    RLVR_TRY(rlvr_eval_result_set_task(r, i, id, family, split, (uint32_t)index));
    rlvr_eval_task_result *x = &r->tasks[i];
    RLVR_TRY(get_i32(t, "n", &x->n));
    RLVR_TRY(get_i32(t, "c", &x->c));
    RLVR_TRY(get_i32(t, "infra", &x->infra));
    RLVR_TRY(get_i32(t, "truncated", &x->truncated));
    RLVR_TRY(get_i32(t, "dropped", &x->dropped));
    RLVR_TRY(get_int(t, "calls", 0, INT64_MAX, &x->calls));
    RLVR_TRY(get_int(t, "calls_parsed", 0, INT64_MAX, &x->calls_parsed));
    return get_int(t, "policy_tokens", 0, INT64_MAX, &x->policy_tokens);
}

static double get_real(json_t *o, const char *field) {
    json_t *v = json_object_get(o, field);
    return json_is_number(v) ? json_number_value(v) : 0;
}

static void read_stats(rlvr_eval_stats *s, json_t *o) {
    s->rollouts = (int64_t)get_real(o, "rollouts");
    s->verifications = (int64_t)get_real(o, "verifications");
    s->verify_cache_hits = (int64_t)get_real(o, "verify_cache_hits");
    s->wall_s = get_real(o, "wall_s");
    s->generate_s = get_real(o, "generate_s");
    s->verify_s = get_real(o, "verify_s");
}

static int read_result(rlvr_eval_result **out, json_t *o) {
    const char *format = json_string_value(json_object_get(o, "format"));
    if (!format || strcmp(format, RLVR_EVAL_FORMAT) != 0)
        return RLVR_FAIL(RLVR_EFORMAT, "not an evaluation result: \"format\" is %s%s%s, expected %s",
                         format ? "\"" : "", format ? format : "missing", format ? "\"" : "", RLVR_EVAL_FORMAT);
    int64_t samples = 0, resamples = 0;
    RLVR_TRY(get_int(o, "samples", 1, INT32_MAX, &samples));
    RLVR_TRY(get_int(o, "resamples", 1, INT32_MAX, &resamples));
    const char *seed = json_string_value(json_object_get(o, "seed"));
    json_t *tasks = json_object_get(o, "tasks"), *temp = json_object_get(o, "temperature"),
           *conf = json_object_get(o, "confidence");
    if (!seed) return bad("seed");
    if (!json_is_array(tasks) || json_array_size(tasks) == 0) return bad("tasks");
    if (!json_is_number(temp)) return bad("temperature");
    if (!json_is_number(conf)) return bad("confidence");
    rlvr_eval_result *r;
    RLVR_TRY(rlvr_eval_result_new(&r, json_array_size(tasks), (int32_t)samples, strtoull(seed, NULL, 10),
                                  (float)json_number_value(temp)));
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < r->n_tasks; i++) rc = read_task(r, i, json_array_get(tasks, i));
    read_stats(&r->stats, json_object_get(o, "stats"));
    if (rc == 0) rc = rlvr_eval_result_summarize(r, json_number_value(conf), (int32_t)resamples);
    if (rc < 0) rlvr_eval_result_free(r);
    else *out = r;
    return rc;
}

int rlvr_eval_result_from_json(rlvr_eval_result **out, const char *text, size_t len) {
    if (!out || !text) return RLVR_FAIL(RLVR_EINVAL, "eval from JSON: text and output needed");
    *out = NULL;
    json_error_t err;
    json_t *o = json_loadb(text, len, 0, &err);
    if (!o) return RLVR_FAIL(RLVR_EFORMAT, "evaluation result: line %d: %s", err.line, err.text);
    int rc = json_is_object(o) ? read_result(out, o) : RLVR_FAIL(RLVR_EFORMAT, "evaluation result: not an object");
    json_decref(o);
    return rc;
}
