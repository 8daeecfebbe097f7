/* eval/gate.c — the release gate's decision and its JSON report (eval/gate.h,
 * docs/EVAL.md "Release gate"). */
#include "eval/gate.h"

#include "core/error.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* [gate] as written: the options and the regression list as text. */
typedef struct {
    rlvr_gate_options o;
    const char *splits;
} gate_keys;

const rlvr_config_key rlvr_gate_config_keys[] = {
    RLVR_KEY_DOUBLE("gate", "tolerance", gate_keys, o.tolerance, "0.02", -1, 1,
        "target split: the candidate passes when the low end of the paired pass@1 difference interval is ≥ −tolerance "
        "(negative: an improvement of at least |tolerance| is required)"),
    RLVR_KEY_DOUBLE("gate", "regression_tolerance", gate_keys, o.regression_tolerance, "0.05", -1, 1,
        "regression families: each passes when its interval's low end is ≥ −regression_tolerance"),
    RLVR_KEY_DOUBLE("gate", "compliance_min", gate_keys, o.compliance_min, "1.0", 0, 1,
        "smallest share of the candidate's tool calls that must parse against their schema"),
    RLVR_KEY_I32("gate", "samples", gate_keys, o.samples, "4", 1, 1048576, "rollouts per task for both checkpoints"),
    RLVR_KEY_U64("gate", "seed", gate_keys, o.seed, "1", 0, 9e18,
        "sampling seed of both evaluations (the same draws for both)"),
    RLVR_KEY_I64("gate", "limit", gate_keys, o.limit, "0", 0, 1e9,
        "the first N usable tasks of each split only; 0 = all"),
    RLVR_KEY_STRING("gate", "splits", gate_keys, splits, "regression",
        "regression checks, comma separated: SPLIT (every family of it) or SPLIT:FAMILY"),
    RLVR_KEY_END,
};

void rlvr_gate_options_default(rlvr_gate_options *o) {
    memset(o, 0, sizeof *o);
    o->target_split = RLVR_SPLIT_EVAL;
    o->confidence = RLVR_EVAL_CONFIDENCE_DEFAULT;
    o->resamples = RLVR_EVAL_RESAMPLES_DEFAULT;
    /* the [gate] table's defaults, its regression list included (they parse: test_config_tables) */
    (void)rlvr_gate_options_from_config(o, NULL);
}

/* ---- the regression list ------------------------------------------------------------- */

static int parse_check(rlvr_gate_check *c, const char *entry, size_t len) {
    char buf[RLVR_GATE_FAMILY_CAP + 32];
    if (len >= sizeof buf) return RLVR_FAIL(RLVR_EINVAL, "gate check \"%.*s\" is too long", (int)len, entry);
    memcpy(buf, entry, len);
    buf[len] = '\0';
    char *colon = strchr(buf, ':');
    const char *family = "";
    if (colon) {
        *colon = '\0';
        family = colon + 1;
        if (!family[0]) return RLVR_FAIL(RLVR_EINVAL, "gate check \"%s:\": the family after ':' is empty", buf);
    }
    if (rlvr_split_parse(buf, &c->split) < 0)
        return RLVR_FAIL(RLVR_EINVAL, "gate check \"%.*s\": \"%s\" is not a split (train, eval or regression)",
                         (int)len, entry, buf);
    snprintf(c->family, sizeof c->family, "%s", family);
    return 0;
}

int rlvr_gate_parse_checks(rlvr_gate_options *o, const char *text) {
    size_t n = 0;
    const char *p = text ? text : "";
    while (*p) {
        while (*p == ',' || isspace((unsigned char)*p)) p++;
        const char *start = p;
        while (*p && *p != ',') p++;
        size_t len = (size_t)(p - start);
        while (len > 0 && isspace((unsigned char)start[len - 1])) len--;
        if (len == 0) continue;
        if (n == RLVR_GATE_MAX_CHECKS)
            return RLVR_FAIL(RLVR_EINVAL, "more than %d gate checks in \"%s\"", RLVR_GATE_MAX_CHECKS, text);
        RLVR_TRY(parse_check(&o->checks[n], start, len));
        n++;
    }
    o->n_checks = n;
    return 0;
}

int rlvr_gate_options_from_config(rlvr_gate_options *o, const rlvr_config *cfg) {
    gate_keys k = {.o = *o};
    RLVR_TRY(rlvr_config_fill(cfg, rlvr_gate_config_keys, "gate", &k));
    *o = k.o;
    const char *splits = k.splits;
    if (rlvr_gate_parse_checks(o, splits) < 0)
        return rlvr_config_error(cfg, "gate", "splits", "%s", rlvr_error_last());
    return 0;
}

/* ---- deciding ------------------------------------------------------------------------- */

static const rlvr_gate_split *find_split(const rlvr_gate_split *splits, size_t n, rlvr_split split) {
    for (size_t i = 0; i < n; i++)
        if (splits[i].split == split) return &splits[i];
    return NULL;
}

static bool has_tasks(const rlvr_gate_split *s) { return s && s->base && s->cand; }

/* Both results must hold the same task ids (rlvr_eval_compare pairs by id);
 * checked here so that a failed comparison can only mean "nothing paired". */
static int check_same_tasks(const rlvr_gate_split *s) {
    const char *split = rlvr_split_name(s->split);
    if (s->base->n_tasks != s->cand->n_tasks)
        return RLVR_FAIL(RLVR_EINVAL, "gate: split %s: %zu baseline tasks against %zu candidate tasks", split,
                         s->base->n_tasks, s->cand->n_tasks);
    for (size_t i = 0; i < s->base->n_tasks; i++) {
        const char *id = s->base->tasks[i].id;
        size_t j = 0;
        while (j < s->cand->n_tasks && strcmp(s->cand->tasks[j].id, id) != 0) j++;
        if (j == s->cand->n_tasks)
            return RLVR_FAIL(RLVR_EINVAL, "gate: split %s: task %s was evaluated for the baseline only", split, id);
    }
    return 0;
}

static int check_splits(const rlvr_gate_split *splits, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (!splits[i].base != !splits[i].cand)
            return RLVR_FAIL(RLVR_EINVAL, "gate: split %s evaluated for one checkpoint only",
                             rlvr_split_name(splits[i].split));
        if (find_split(splits, i, splits[i].split))
            return RLVR_FAIL(RLVR_EINVAL, "gate: split %s given twice", rlvr_split_name(splits[i].split));
        if (has_tasks(&splits[i])) RLVR_TRY(check_same_tasks(&splits[i]));
    }
    return 0;
}

/* The paired test of `family` ("all": the whole split) with threshold −tol. */
static void paired_test(rlvr_gate_test *t, const rlvr_gate_split *s, const char *family, double tol,
                        const rlvr_gate_options *o) {
    memset(t, 0, sizeof *t);
    t->split = s->split;
    snprintf(t->family, sizeof t->family, "%s", family);
    t->tolerance = tol;
    t->base_pass1 = t->cand_pass1 = t->mean_diff = t->low = t->high = NAN;
    rlvr_eval_comparison c;
    if (rlvr_eval_compare(&c, s->base, s->cand, family, o->confidence, o->resamples) < 0) {
        /* the tasks match (check_same_tasks): no task scored by both, nothing measured, not passed */
        t->unpaired = (int32_t)s->base->n_tasks;
        return;
    }
    t->n_tasks = c.n_tasks;
    t->unpaired = c.unpaired;
    t->base_pass1 = c.base_pass1;
    t->cand_pass1 = c.cand_pass1;
    t->mean_diff = c.mean_diff;
    t->low = c.low;
    t->high = c.high;
    t->passed = c.low >= -tol - RLVR_GATE_SLACK;
}

static bool family_in(const rlvr_gate_split *s, const char *family) {
    return rlvr_eval_result_group(s->base, family) || rlvr_eval_result_group(s->cand, family);
}

static int decide_target(rlvr_gate_report *r, const rlvr_gate_options *o, const rlvr_gate_split *splits, size_t n) {
    const rlvr_gate_split *s = find_split(splits, n, o->target_split);
    const char *split = rlvr_split_name(o->target_split);
    if (!has_tasks(s)) return RLVR_FAIL(RLVR_EINVAL, "gate: the pool has no usable task of the target split %s", split);
    const char *family = o->target_family[0] ? o->target_family : "all";
    if (!family_in(s, family))
        return RLVR_FAIL(RLVR_EINVAL, "gate: split %s has no task of family %s", split, family);
    paired_test(&r->target, s, family, o->tolerance, o);
    return 0;
}

static int add_regression(rlvr_gate_report *r, const rlvr_gate_split *s, const char *family,
                          const rlvr_gate_options *o) {
    rlvr_gate_test *grown = realloc(r->regression, (r->n_regression + 1) * sizeof *grown);
    if (!grown) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    r->regression = grown;
    paired_test(&r->regression[r->n_regression++], s, family, o->regression_tolerance, o);
    return 0;
}

static int decide_check(rlvr_gate_report *r, const rlvr_gate_options *o, const rlvr_gate_check *c,
                        const rlvr_gate_split *splits, size_t n) {
    const rlvr_gate_split *s = find_split(splits, n, c->split);
    const char *split = rlvr_split_name(c->split);
    if (!s) return RLVR_FAIL(RLVR_EINVAL, "gate: no evaluation of split %s was given", split);
    if (c->family[0]) {
        if (!has_tasks(s) || !family_in(s, c->family))
            return RLVR_FAIL(RLVR_EINVAL, "gate: the regression check %s:%s has no usable task in the pool", split,
                             c->family);
        return add_regression(r, s, c->family, o);
    }
    if (!has_tasks(s)) return 0; /* the split has no task: nothing to regress on */
    for (size_t g = 1; g < s->base->n_groups; g++) RLVR_TRY(add_regression(r, s, s->base->groups[g].name, o));
    return 0;
}

static void decide_compliance(rlvr_gate_report *r, const rlvr_gate_options *o, const rlvr_gate_split *splits,
                              size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (!has_tasks(&splits[i])) continue;
        r->calls += splits[i].cand->groups[0].calls;
        r->calls_parsed += splits[i].cand->groups[0].calls_parsed;
    }
    r->compliance = r->calls > 0 ? (double)r->calls_parsed / (double)r->calls : 1.0;
    r->compliance_min = o->compliance_min;
    r->compliance_passed = r->compliance >= o->compliance_min - RLVR_GATE_SLACK;
}

int rlvr_gate_decide(rlvr_gate_report **out, const rlvr_gate_options *o, const rlvr_gate_split *splits,
                     size_t n_splits) {
    *out = NULL;
    if (!o || (!splits && n_splits)) return RLVR_FAIL(RLVR_EINVAL, "rlvr_gate_decide: no options or splits");
    RLVR_TRY(check_splits(splits, n_splits));
    rlvr_gate_report *r = calloc(1, sizeof *r);
    if (!r) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    r->candidate_step = r->candidate_version = -1;
    r->regression_tolerance = o->regression_tolerance;
    int rc = decide_target(r, o, splits, n_splits);
    for (size_t i = 0; rc == 0 && i < o->n_checks; i++) rc = decide_check(r, o, &o->checks[i], splits, n_splits);
    if (rc < 0) {
        rlvr_gate_report_free(r);
        return rc;
    }
    r->regression_no_tasks = r->n_regression == 0;
    r->regression_passed = true;
    for (size_t i = 0; i < r->n_regression; i++) r->regression_passed &= r->regression[i].passed;
    decide_compliance(r, o, splits, n_splits);
    r->passed = r->target.passed && r->regression_passed && r->compliance_passed;
    *out = r;
    return 0;
}

void rlvr_gate_report_free(rlvr_gate_report *r) {
    if (!r) return;
    free(r->regression);
    free(r);
}

void rlvr_gate_failed_criteria(const rlvr_gate_report *r, char *buf, size_t cap) {
    const char *names[3] = {"target", "regression", "compliance"};
    bool failed[3] = {!r->target.passed, !r->regression_passed, !r->compliance_passed};
    size_t used = 0;
    if (cap) buf[0] = '\0';
    for (int i = 0; i < 3; i++) {
        if (!failed[i] || used >= cap) continue;
        int k = snprintf(buf + used, cap - used, "%s%s", used ? ", " : "", names[i]);
        if (k > 0) used += (size_t)k;
    }
}

/* ---- JSON ------------------------------------------------------------------------------ */

static json_t *num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

/* The fields of a paired test shared by the target and each regression family. */
static json_t *test_json(const rlvr_gate_test *t, const char *name_key) {
    return json_pack("{s:b, s:s, s:s, s:i, s:i, s:o, s:o, s:o, s:o, s:o, s:o}", "passed", t->passed, "split",
                     rlvr_split_name(t->split), name_key, t->family, "n_tasks", t->n_tasks, "unpaired", t->unpaired,
                     "base_pass1", num(t->base_pass1), "cand_pass1", num(t->cand_pass1), "mean_diff",
                     num(t->mean_diff), "low", num(t->low), "high", num(t->high), "tolerance", num(t->tolerance));
}

static json_t *criteria_json(const rlvr_gate_report *r) {
    json_t *families = json_array();
    for (size_t i = 0; families && i < r->n_regression; i++)
        json_array_append_new(families, test_json(&r->regression[i], "name"));
    json_t *regression = json_pack("{s:b, s:b, s:o, s:o}", "passed", r->regression_passed, "no_tasks",
                                   r->regression_no_tasks, "tolerance", num(r->regression_tolerance), "families",
                                   families);
    json_t *compliance = json_pack("{s:b, s:o, s:o, s:I, s:I}", "passed", r->compliance_passed, "value",
                                   num(r->compliance), "threshold", num(r->compliance_min), "calls",
                                   (json_int_t)r->calls, "calls_parsed", (json_int_t)r->calls_parsed);
    return json_pack("{s:o, s:o, s:o}", "target", test_json(&r->target, "family"), "regression", regression,
                     "compliance", compliance);
}

/* split name → the result of one checkpoint (null without tasks). */
static json_t *evals_json(const rlvr_gate_split *splits, size_t n, bool candidate) {
    json_t *o = json_object();
    for (size_t i = 0; o && i < n; i++) {
        const rlvr_eval_result *res = candidate ? splits[i].cand : splits[i].base;
        json_t *v = json_null();
        char *text = NULL;
        if (res) {
            if (rlvr_eval_result_to_json(res, 0, &text) < 0) {
                json_decref(o);
                return NULL;
            }
            v = json_loads(text, 0, NULL);
            free(text);
        }
        if (!v || json_object_set_new(o, rlvr_split_name(splits[i].split), v) != 0) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

int rlvr_gate_report_to_json(const rlvr_gate_report *r, const rlvr_gate_options *o, const rlvr_gate_split *splits,
                             size_t n_splits, int indent, char **out) {
    *out = NULL;
    json_t *doc = json_pack("{s:s, s:s, s:s, s:I, s:I, s:b, s:o, s:o, s:o, s:i, s:I, s:o, s:o, s:i}", "format",
                            RLVR_GATE_FORMAT, "candidate", r->candidate ? r->candidate : "", "baseline",
                            r->baseline ? r->baseline : "", "candidate_step", (json_int_t)r->candidate_step,
                            "candidate_version", (json_int_t)r->candidate_version, "passed", r->passed, "criteria",
                            criteria_json(r), "baseline_eval", evals_json(splits, n_splits, false), "candidate_eval",
                            evals_json(splits, n_splits, true), "samples", o->samples, "seed", (json_int_t)o->seed,
                            "time_unix", num(r->time_unix), "confidence", num(o->confidence), "resamples",
                            o->resamples);
    if (!doc) return RLVR_FAIL(RLVR_ENOMEM, "out of memory rendering the gate report");
    /* 15 digits: time_unix keeps its fraction of a second, rates stay short (0.35, not 0.34999999999999998) */
    size_t flags = JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15) | (indent > 0 ? JSON_INDENT(indent) : JSON_COMPACT);
    *out = json_dumps(doc, flags);
    json_decref(doc);
    return *out ? 0 : RLVR_FAIL(RLVR_ENOMEM, "out of memory rendering the gate report");
}
