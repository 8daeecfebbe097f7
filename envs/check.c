/* envs/check.c — checking tasks (distinguishability, quarantine) and the
 * validated-pool manifest. */
#include "envs/check.h"
#include "core/fs.h"
#include "core/hash.h"

#include "core/config.h"
#include "core/error.h"
#include "core/sys.h"
#include "enclave/reason.h"
#include "enclave/verify.h"
#include "envs/arith.h"
#include "envs/gen_internal.h"
#include "envs/harness.h"
#include "envs/probes.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const status_names[RLVR_TASK_CHECK_STATUS_COUNT] = {"ok", "broken", "flaky", "infra",
                                                                        "exploitable"};

const char *rlvr_task_check_status_name(rlvr_task_check_status s) {
    return (unsigned)s < RLVR_TASK_CHECK_STATUS_COUNT ? status_names[s] : "?";
}

void rlvr_task_check_result_clear(rlvr_task_check_result *r) {
    for (size_t i = 0; i < r->quarantined.n; i++) free(r->quarantined.items[i]);
    free(r->quarantined.items);
    memset(r, 0, sizeof *r);
}

static int verdict(rlvr_task_check_result *out, rlvr_task_check_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int verdict(rlvr_task_check_result *out, rlvr_task_check_status status, const char *fmt, ...) {
    out->status = status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->reason, sizeof out->reason, fmt, ap);
    va_end(ap);
    return 0;
}

/* ---- arith: in process ------------------------------------------------------------ */

static int check_arith(rlvr_task_check_result *out, const rlvr_task *t) {
    double score;
    rlvr_arith_probes probes;
    rlvr_task_arith_probes(t, &probes);
    out->probes = probes.n;
    for (int i = 0; i < probes.n; i++) {
        RLVR_TRY(rlvr_arith_score(&t->arith, probes.text[i], strlen(probes.text[i]), &score));
        if (score != 0.0)
            return verdict(out, RLVR_TASK_CHECK_EXPLOITABLE, "probe \"%s\" (\"%s\") scores %g", probes.name[i],
                           probes.text[i], score);
    }
    RLVR_TRY(rlvr_arith_score(&t->arith, "", 0, &score));
    if (score != 0.0) return verdict(out, RLVR_TASK_CHECK_BROKEN, "an empty answer scores %g", score);
    RLVR_TRY(rlvr_arith_score(&t->arith, t->reference_answer, strlen(t->reference_answer), &score));
    if (score != 1.0)
        return verdict(out, RLVR_TASK_CHECK_BROKEN, "the reference answer \"%s\" scores %g", t->reference_answer, score);
    for (size_t i = 0; i < t->wrong_answers.n; i++) {
        const char *w = t->wrong_answers.items[i];
        RLVR_TRY(rlvr_arith_score(&t->arith, w, strlen(w), &score));
        if (score != 0.0) return verdict(out, RLVR_TASK_CHECK_BROKEN, "wrong answer %zu \"%s\" scores %g", i, w, score);
    }
    return 0;
}

/* ---- tests: in enclaves --------------------------------------------------------------- */

static const char *verdict_text(const rlvr_enclave_verdict *v, char *buf, size_t cap) {
    snprintf(buf, cap, "%s (%s)", rlvr_verdict_name(v->verdict), rlvr_reason_name(v->reason));
    return buf;
}

/* The untouched repository: every FAIL_TO_PASS test fails, every
 * PASS_TO_PASS test passes. Returns 0; sets out->status when not. */
static int check_untouched(rlvr_task_check_result *out, const rlvr_task *t, rlvr_verify_task *vt, uint64_t seed) {
    rlvr_verify_run run;
    RLVR_TRY(rlvr_verify_run_once(vt, "", 0, seed, 0, &run));
    out->runs++;
    if (run.infra)
        verdict(out, RLVR_TASK_CHECK_INFRA, "untouched repository: the enclave failed (%s)", rlvr_reason_name(run.reason));
    else if (run.reason != RLVR_REASON_TESTS_FAILED)
        verdict(out, RLVR_TASK_CHECK_BROKEN, "untouched repository: %s, expected failing FAIL_TO_PASS tests",
                run.reason == RLVR_REASON_NONE ? "every test passes" : rlvr_reason_name(run.reason));
    for (size_t i = 0; out->status == RLVR_TASK_CHECK_OK && i < t->fail_to_pass.n; i++) {
        int count = 0;
        const rlvr_tap_test *r = rlvr_tap_find(&run.tap, t->fail_to_pass.items[i], &count);
        if (!r || count != 1)
            verdict(out, RLVR_TASK_CHECK_BROKEN, "untouched repository: FAIL_TO_PASS test \"%s\" reported %d times",
                    t->fail_to_pass.items[i], count);
        else if (r->status == RLVR_TAP_PASS)
            verdict(out, RLVR_TASK_CHECK_BROKEN, "untouched repository: FAIL_TO_PASS test \"%s\" passes",
                    t->fail_to_pass.items[i]);
    }
    for (size_t i = 0; out->status == RLVR_TASK_CHECK_OK && i < t->pass_to_pass.n; i++) {
        int count = 0;
        const rlvr_tap_test *r = rlvr_tap_find(&run.tap, t->pass_to_pass.items[i], &count);
        if (!r || count != 1 || r->status != RLVR_TAP_PASS)
            verdict(out, RLVR_TASK_CHECK_BROKEN, "untouched repository: PASS_TO_PASS test \"%s\" %s",
                    t->pass_to_pass.items[i], !r ? "is missing" : count != 1 ? "is reported twice" : "fails");
    }
    rlvr_verify_run_free(&run);
    return 0;
}

/* The reference passes with consensus; then the quarantine pass. */
static int check_reference(rlvr_task_check_result *out, const rlvr_task *t, rlvr_verify_task *vt,
                           const rlvr_task_check_options *o) {
    const char *ref = t->reference_patch;
    rlvr_enclave_verdict v;
    char text[128];
    RLVR_TRY(rlvr_verify_patch(vt, ref, strlen(ref), false, o->seed + 1, &v));
    out->runs += v.runs;
    if (v.verdict == RLVR_VERDICT_INFRA)
        return verdict(out, RLVR_TASK_CHECK_INFRA, "reference patch: %s", verdict_text(&v, text, sizeof text));
    if (v.verdict == RLVR_VERDICT_DROPPED && v.reason == RLVR_REASON_CONSENSUS_MIXED)
        return verdict(out, RLVR_TASK_CHECK_FLAKY, "reference patch passes only in some of %d runs", v.runs);
    if (v.verdict != RLVR_VERDICT_PASS)
        return verdict(out, RLVR_TASK_CHECK_BROKEN, "reference patch: %s", verdict_text(&v, text, sizeof text));

    rlvr_quarantine q;
    int rc = rlvr_verify_quarantine(vt, ref, strlen(ref), o->quarantine_runs, o->seed + 2, o->max_quarantine_share, &q);
    if (rc == RLVR_ENOMEM || rc == RLVR_EINVAL) return rc;
    if (rc < 0) return verdict(out, RLVR_TASK_CHECK_INFRA, "quarantine: %s", rlvr_error_last());
    out->runs += q.runs;
    if (q.drop_task && q.drop_reason == RLVR_REASON_TESTS_FAILED)
        verdict(out, RLVR_TASK_CHECK_FLAKY, "%d of %d tests failed on the reference in %d shuffled runs", q.n_tests,
                q.n_total, q.runs);
    else if (q.drop_task)
        verdict(out, RLVR_TASK_CHECK_FLAKY, "the reference failed a shuffled run: %s", rlvr_reason_name(q.drop_reason));
    size_t f2p_quarantined = 0;
    for (int i = 0; i < q.n_tests; i++)
        for (size_t k = 0; k < t->fail_to_pass.n; k++) f2p_quarantined += strcmp(q.tests[i], t->fail_to_pass.items[k]) == 0;
    if (out->status == RLVR_TASK_CHECK_OK && f2p_quarantined == t->fail_to_pass.n)
        verdict(out, RLVR_TASK_CHECK_FLAKY, "every FAIL_TO_PASS test is unstable on the reference");
    if (rc == 0 && out->status == RLVR_TASK_CHECK_OK && q.n_tests > 0) {
        rc = gen_list(&out->quarantined, (const char *const *)q.tests, (size_t)q.n_tests);
        if (rc == 0) rc = rlvr_verify_task_set_quarantine(vt, (const char *const *)q.tests);
    }
    rlvr_quarantine_free(&q);
    return rc;
}

static int check_wrong(rlvr_task_check_result *out, const rlvr_task *t, rlvr_verify_task *vt,
                       const rlvr_task_check_options *o) {
    for (size_t i = 0; i < t->wrong_patches.n && out->status == RLVR_TASK_CHECK_OK; i++) {
        const char *p = t->wrong_patches.items[i];
        rlvr_enclave_verdict v;
        char text[128];
        RLVR_TRY(rlvr_verify_patch(vt, p, strlen(p), false, o->seed + 3 + i, &v));
        out->runs += v.runs;
        if (v.verdict == RLVR_VERDICT_PASS)
            verdict(out, RLVR_TASK_CHECK_BROKEN, "wrong patch %zu passes%s", i,
                    out->quarantined.n ? " once the quarantined tests are removed" : "");
        else if (v.verdict == RLVR_VERDICT_DROPPED && v.reason == RLVR_REASON_CONSENSUS_MIXED)
            verdict(out, RLVR_TASK_CHECK_FLAKY, "wrong patch %zu passes in some runs", i);
        else if (v.verdict == RLVR_VERDICT_INFRA)
            verdict(out, RLVR_TASK_CHECK_INFRA, "wrong patch %zu: %s", i, verdict_text(&v, text, sizeof text));
    }
    return 0;
}

/* ---- tampering probes ------------------------------------------------------------------- */

/* A probe's patch is rewarded when it passes, or passes in some runs. */
static int probe_rewarded(rlvr_verify_task *vt, const char *patch, size_t len, uint64_t seed, int *runs,
                          bool *rewarded, bool *infra) {
    rlvr_enclave_verdict v;
    RLVR_TRY(rlvr_verify_patch(vt, patch, len, false, seed, &v));
    *runs += v.runs;
    *rewarded = v.verdict == RLVR_VERDICT_PASS ||
                (v.verdict == RLVR_VERDICT_DROPPED && v.reason == RLVR_REASON_CONSENSUS_MIXED);
    *infra = v.verdict == RLVR_VERDICT_INFRA;
    return 0;
}

/* The setup patches of parts [from, to), verified before them on the same
 * pooled enclave (their verdicts do not count). */
static int run_setups(rlvr_task_check_result *out, const rlvr_probe_set *ps, size_t from, size_t to,
                      rlvr_verify_task *vt, uint64_t seed) {
    for (size_t i = from; i < to; i++) {
        if (!ps->items[i].setup) continue;
        rlvr_enclave_verdict v;
        RLVR_TRY(rlvr_verify_patch(vt, ps->items[i].setup, ps->items[i].setup_len, false, seed + i, &v));
        out->runs += v.runs;
    }
    return 0;
}

/* Parts [from, to) of one class: together in one patch (each part is its
 * own files, all made against the base), and each alone when that was
 * rewarded, to name the parts. Appends the names of rewarded parts. */
#define PROBE_PARTS_PER_RUN 16

static int run_probe_class(rlvr_task_check_result *out, const rlvr_probe_set *ps, size_t from, size_t to,
                           rlvr_verify_task *vt, uint64_t seed, rlvr_text *named) {
    rlvr_text joint = {0};
    for (size_t i = from; i < to; i++) rlvr_text_append(&joint, ps->items[i].patch, ps->items[i].len);
    int rc = gen_text_check(&joint);
    bool rewarded = false, infra = false;
    if (rc == 0) rc = run_setups(out, ps, from, to, vt, seed);
    if (rc == 0) rc = probe_rewarded(vt, joint.data ? joint.data : "", joint.len, seed, &out->runs, &rewarded, &infra);
    rlvr_text_free(&joint);
    if (rc < 0 || infra) return rc < 0 ? rc : verdict(out, RLVR_TASK_CHECK_INFRA, "probe \"%s\": the enclave failed",
                                                      ps->items[from].klass);
    if (!rewarded) return 0;
    size_t named_before = named->len;
    for (size_t i = from; rc == 0 && i < to && to - from > 1; i++) {
        rc = run_setups(out, ps, i, i + 1, vt, seed + 1 + i);
        if (rc == 0)
            rc = probe_rewarded(vt, ps->items[i].patch, ps->items[i].len, seed + 1 + i, &out->runs, &rewarded, &infra);
        if (rc == 0 && rewarded)
            rlvr_text_printf(named, "%s%s %s", named->len ? "; " : "", ps->items[i].klass, ps->items[i].part);
    }
    if (rc == 0 && named->len == named_before) /* only the parts together (or one part) */
        rlvr_text_printf(named, "%s%s %s%s", named->len ? "; " : "", ps->items[from].klass, ps->items[from].part,
                         to - from > 1 ? " and the others of its class together" : "");
    return rc == 0 ? gen_text_check(named) : rc;
}

/* Every probe of the task must go unrewarded. */
static int check_probes(rlvr_task_check_result *out, const rlvr_task *t, rlvr_verify_task *vt, rlvr_sandbox_host *host,
                        const rlvr_task_check_options *o) {
    rlvr_probe_set ps;
    int rc = rlvr_task_probes(t, rlvr_sandbox_host_scratch(host), &ps);
    if (rc == RLVR_ENOMEM) return rc;
    if (rc < 0) return verdict(out, RLVR_TASK_CHECK_INFRA, "%s", rlvr_error_last());
    out->probes = (int)ps.n;
    rlvr_text named = {0};
    for (size_t from = 0; rc == 0 && out->status == RLVR_TASK_CHECK_OK && from < ps.n;) {
        size_t to = from + 1;
        while (to < ps.n && to - from < PROBE_PARTS_PER_RUN && strcmp(ps.items[to].klass, ps.items[from].klass) == 0)
            to++;
        rc = run_probe_class(out, &ps, from, to, vt, o->seed + 1000 + from, &named);
        from = to;
    }
    if (rc == 0 && out->status == RLVR_TASK_CHECK_OK && named.len)
        verdict(out, RLVR_TASK_CHECK_EXPLOITABLE, "rewarded without a fix: %s", named.data);
    rlvr_text_free(&named);
    rlvr_probe_set_free(&ps);
    return rc;
}

static int check_tests(rlvr_task_check_result *out, const rlvr_task *t, rlvr_sandbox_host *host,
                       const rlvr_task_check_options *o) {
    if (!host) return RLVR_FAIL(RLVR_EINVAL, "task %s: checking a \"tests\" task needs a sandbox host", t->id);
    if (t->repository_kind == RLVR_REPO_BUNDLE)
        return verdict(out, RLVR_TASK_CHECK_INFRA,
                       "the repository is a git bundle; the enclave takes a repository directory (unbundle it with "
                       "git clone)");
    rlvr_sandbox_limits limits;
    rlvr_sandbox_limits_default(&limits);
    limits.wall_s = o->wall_s;
    limits.cpu_s = o->wall_s;
    rlvr_verify_task *vt = NULL;
    int rc = rlvr_harness_verify_task_new(&vt, host, t, &limits, o->consensus_runs);
    if (rc == RLVR_ENOMEM) goto done;
    if (rc < 0) {
        /* an environment that cannot be mounted here is the machine's
         * problem (the message says what each way met); one without
         * /bin/sh or its working directory is the task's */
        rc = verdict(out, rc == RLVR_ESANDBOX ? RLVR_TASK_CHECK_INFRA : RLVR_TASK_CHECK_BROKEN,
                     "preparing the enclave: %s", rlvr_error_last());
        goto done;
    }
    rc = check_untouched(out, t, vt, o->seed);
    if (rc == 0 && out->status == RLVR_TASK_CHECK_OK) rc = check_reference(out, t, vt, o);
    if (rc == 0 && out->status == RLVR_TASK_CHECK_OK) rc = check_wrong(out, t, vt, o);
    if (rc == 0 && out->status == RLVR_TASK_CHECK_OK) rc = check_probes(out, t, vt, host, o);
done:
    rlvr_verify_task_free(vt);
    return rc;
}

int rlvr_task_check(rlvr_task_check_result *out, const rlvr_task *task, rlvr_sandbox_host *host,
                    const rlvr_task_check_options *opts) {
    memset(out, 0, sizeof *out);
    if (opts->version != RLVR_TASK_CHECK_OPTIONS_VERSION)
        return RLVR_FAIL(RLVR_EINVAL, "task check options: version %u, this rlvr knows %d", opts->version,
                         RLVR_TASK_CHECK_OPTIONS_VERSION);
    if (opts->quarantine_runs < 1 || opts->consensus_runs < 1 || !(opts->wall_s > 0) ||
        !(opts->max_quarantine_share >= 0 && opts->max_quarantine_share <= 1))
        return RLVR_FAIL(RLVR_EINVAL, "task check options: runs ≥ 1, wall_s > 0 and a share in [0, 1] needed");
    double t0 = rlvr_now();
    int rc = task->verifier == RLVR_VERIFIER_ARITH ? check_arith(out, task) : check_tests(out, task, host, opts);
    out->wall_s = rlvr_now() - t0;
    if (rc < 0) {
        rlvr_task_check_result_clear(out);
        return rlvr_error_wrap(rc, "checking task %s", task->id);
    }
    return 0;
}

/* ---- hashes ---------------------------------------------------------------------------- */

static int add_file(rlvr_text *buf, const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return rlvr_error_set(RLVR_EIO, "cannot read %s: %s", path, strerror(errno));
    char chunk[8192];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) rlvr_text_append(buf, chunk, n);
    int bad = ferror(f);
    fclose(f);
    if (bad) return rlvr_error_set(RLVR_EIO, "cannot read %s", path);
    return gen_text_check(buf);
}

int rlvr_task_content_hash(const rlvr_task *task, uint64_t *out) {
    char *json;
    RLVR_TRY(rlvr_task_to_json(task, 0, &json));
    rlvr_text buf = {0};
    rlvr_text_printf(&buf, "%s", json);
    free(json);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < task->hidden_test_files.n; i++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", task->hidden_root_path, task->hidden_test_files.items[i]);
        rlvr_text_printf(&buf, "\n%s\n", task->hidden_test_files.items[i]);
        rc = add_file(&buf, path);
    }
    for (size_t i = 0; rc == 0 && i < task->expected_files.n; i++) { /* and the expected copies */
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", task->expected_root_path, task->expected_files.items[i]);
        rlvr_text_printf(&buf, "\nexpected %s\n", task->expected_files.items[i]);
        rc = add_file(&buf, path);
    }
    if (rc == 0) rc = gen_text_check(&buf);
    if (rc == 0) *out = rlvr_fnv1a64(buf.data, buf.len);
    rlvr_text_free(&buf);
    return rc;
}

static int pool_hash_and_tasks(const rlvr_task_pool *pool, uint64_t *pool_hash, uint64_t *task_hashes) {
    rlvr_text buf = {0};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < rlvr_task_pool_size(pool); i++) {
        rc = rlvr_task_content_hash(rlvr_task_pool_get(pool, i), &task_hashes[i]);
        rlvr_text_printf(&buf, "%016llx\n", (unsigned long long)task_hashes[i]);
    }
    if (rc == 0) rc = gen_text_check(&buf);
    if (rc == 0) *pool_hash = rlvr_fnv1a64(buf.data ? buf.data : "", buf.len);
    rlvr_text_free(&buf);
    return rc;
}

int rlvr_task_pool_hash(const rlvr_task_pool *pool, uint64_t *out) {
    uint64_t *h;
    RLVR_ALLOC(h, rlvr_task_pool_size(pool));
    int rc = pool_hash_and_tasks(pool, out, h);
    free(h);
    return rc;
}

/* ---- manifest ---------------------------------------------------------------------------- */

void rlvr_pool_manifest_default_path(char *out, size_t cap, const char *pool_path) {
    size_t n = strlen(pool_path);
    while (n > 1 && pool_path[n - 1] == '/') n--;
    snprintf(out, cap, "%.*s.manifest.json", (int)n, pool_path);
}

static int set(json_t *o, const char *key, json_t *v) {
    if (!v || json_object_set_new(o, key, v) != 0) return RLVR_FAIL(RLVR_ENOMEM, "out of memory writing a manifest");
    return 0;
}

static int manifest_json(json_t *root, const rlvr_task_pool *pool, const rlvr_task_check_result *results,
                         const rlvr_task_check_options *opts) {
    size_t n = rlvr_task_pool_size(pool);
    uint64_t pool_hash, *hashes;
    RLVR_ALLOC(hashes, n);
    int rc = pool_hash_and_tasks(pool, &pool_hash, hashes);
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)pool_hash);
    if (rc == 0) rc = set(root, "format", json_string(RLVR_POOL_MANIFEST_FORMAT));
    if (rc == 0) rc = set(root, "pool", json_string(rlvr_task_pool_path(pool)));
    if (rc == 0) rc = set(root, "pool_hash", json_string(hex));
    if (rc == 0)
        rc = set(root, "options",
                 json_pack("{s:i, s:f, s:i, s:I, s:f}", "quarantine_runs", opts->quarantine_runs, "max_quarantine_share",
                           opts->max_quarantine_share, "consensus_runs", opts->consensus_runs, "seed",
                           (json_int_t)opts->seed, "wall_s", opts->wall_s));
    size_t counts[RLVR_TASK_CHECK_STATUS_COUNT] = {0};
    json_t *tasks = json_array();
    if (rc == 0) rc = set(root, "tasks", tasks);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const rlvr_task_check_result *r = &results[i];
        counts[r->status]++;
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)hashes[i]);
        json_t *q = json_array();
        for (size_t k = 0; q && k < r->quarantined.n; k++) json_array_append_new(q, json_string(r->quarantined.items[k]));
        json_t *e = json_pack("{s:s, s:s, s:s, s:s, s:o, s:i, s:i, s:f}", "id", rlvr_task_pool_get(pool, i)->id, "hash",
                              hex, "status", rlvr_task_check_status_name(r->status), "reason", r->reason,
                              "quarantined", q, "runs", r->runs, "probes", r->probes, "wall_s", r->wall_s);
        if (!e || json_array_append_new(tasks, e) != 0) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory writing a manifest");
    }
    if (rc == 0)
        rc = set(root, "counts",
                 json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "tasks", (json_int_t)n, "ok", (json_int_t)counts[0],
                           "broken", (json_int_t)counts[1], "flaky", (json_int_t)counts[2], "infra",
                           (json_int_t)counts[3], "exploitable", (json_int_t)counts[4]));
    free(hashes);
    return rc;
}

int rlvr_pool_manifest_write(const char *path, const rlvr_task_pool *pool, const rlvr_task_check_result *results,
                             const rlvr_task_check_options *opts) {
    json_t *root = json_object();
    if (!root) return RLVR_FAIL(RLVR_ENOMEM, "out of memory writing a manifest");
    int rc = manifest_json(root, pool, results, opts);
    char *text = rc == 0 ? json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(6)) : NULL;
    json_decref(root);
    if (rc == 0 && !text) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory writing a manifest");
    if (rc == 0) {
        /* a reader never sees half a manifest */
        rlvr_text body = {0};
        rlvr_text_printf(&body, "%s\n", text);
        rc = gen_text_check(&body);
        if (rc == 0) rc = rlvr_write_file_atomic(path, body.data, body.len);
        if (rc < 0) rc = rlvr_error_wrap(rc, "writing manifest %s", path);
        rlvr_text_free(&body);
    }
    free(text);
    return rc;
}

typedef struct {
    char *id;
    rlvr_task_check_status status;
    rlvr_str_list quarantined;
} manifest_entry;

struct rlvr_pool_manifest {
    manifest_entry *entries;
    size_t n;
};

void rlvr_pool_manifest_free(rlvr_pool_manifest *m) {
    if (!m) return;
    for (size_t i = 0; i < m->n; i++) {
        free(m->entries[i].id);
        for (size_t k = 0; k < m->entries[i].quarantined.n; k++) free(m->entries[i].quarantined.items[k]);
        free(m->entries[i].quarantined.items);
    }
    free(m->entries);
    free(m);
}

static const manifest_entry *find_entry(const rlvr_pool_manifest *m, const char *id) {
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->entries[i].id, id) == 0) return &m->entries[i];
    return NULL;
}

static int bad_manifest(const char *path, const char *what) {
    return rlvr_error_set(RLVR_EFORMAT, "manifest %s: %s (write one with rlvr tasks check)", path, what);
}

/* Compares the manifest's hashes with the pool's; names what changed. */
static int match_pool(const char *path, json_t *root, const rlvr_task_pool *pool) {
    size_t n = rlvr_task_pool_size(pool);
    uint64_t pool_hash, *hashes;
    RLVR_ALLOC(hashes, n);
    int rc = pool_hash_and_tasks(pool, &pool_hash, hashes);
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)pool_hash);
    const char *recorded = json_string_value(json_object_get(root, "pool_hash"));
    if (rc == 0 && (!recorded || strcmp(recorded, hex) != 0)) {
        json_t *tasks = json_object_get(root, "tasks");
        const char *changed = NULL;
        for (size_t i = 0; i < n && !changed; i++) {
            const char *id = rlvr_task_pool_get(pool, i)->id;
            snprintf(hex, sizeof hex, "%016llx", (unsigned long long)hashes[i]);
            bool seen = false;
            size_t k;
            json_t *e;
            json_array_foreach(tasks, k, e) {
                const char *entry_id = json_string_value(json_object_get(e, "id"));
                if (!entry_id || strcmp(entry_id, id) != 0) continue;
                seen = true;
                const char *h = json_string_value(json_object_get(e, "hash"));
                if (!h || strcmp(h, hex) != 0) changed = id;
            }
            if (!seen) changed = id;
        }
        if (changed)
            rc = rlvr_error_set(RLVR_ECHECKSUM,
                                "manifest %s does not match pool %s: task %s is new or changed since the check; run "
                                "rlvr tasks check %s again",
                                path, rlvr_task_pool_path(pool), changed, rlvr_task_pool_path(pool));
        else
            rc = rlvr_error_set(RLVR_ECHECKSUM,
                                "manifest %s does not match pool %s: tasks were removed or reordered since the check; "
                                "run rlvr tasks check %s again",
                                path, rlvr_task_pool_path(pool), rlvr_task_pool_path(pool));
    }
    free(hashes);
    return rc;
}

static int read_entries(rlvr_pool_manifest *m, const char *path, json_t *tasks) {
    RLVR_ALLOC(m->entries, json_array_size(tasks));
    size_t i;
    json_t *e;
    json_array_foreach(tasks, i, e) {
        const char *id = json_string_value(json_object_get(e, "id"));
        const char *status = json_string_value(json_object_get(e, "status"));
        json_t *q = json_object_get(e, "quarantined");
        if (!id || !status || !json_is_array(q)) return bad_manifest(path, "a task entry lacks id, status or quarantined");
        manifest_entry *me = &m->entries[m->n++];
        me->id = strdup(id);
        if (!me->id) return RLVR_FAIL(RLVR_ENOMEM, "out of memory reading a manifest");
        me->status = RLVR_TASK_CHECK_STATUS_COUNT;
        for (int s = 0; s < RLVR_TASK_CHECK_STATUS_COUNT; s++)
            if (strcmp(status, status_names[s]) == 0) me->status = (rlvr_task_check_status)s;
        if (me->status >= RLVR_TASK_CHECK_STATUS_COUNT) return bad_manifest(path, "unknown task status");
        RLVR_ALLOC(me->quarantined.items, json_array_size(q));
        size_t k;
        json_t *name;
        json_array_foreach(q, k, name) {
            if (!json_is_string(name)) return bad_manifest(path, "a quarantined test is not a string");
            me->quarantined.items[k] = strdup(json_string_value(name));
            if (!me->quarantined.items[k]) return RLVR_FAIL(RLVR_ENOMEM, "out of memory reading a manifest");
            me->quarantined.n = k + 1;
        }
    }
    return 0;
}

int rlvr_pool_manifest_load(rlvr_pool_manifest **out, const char *path, const rlvr_task_pool *pool) {
    *out = NULL;
    json_error_t jerr;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        FILE *f = fopen(path, "rb");
        if (!f) return rlvr_error_set(RLVR_EIO, "manifest %s: %s (write one with rlvr tasks check)", path, strerror(errno));
        fclose(f);
        return bad_manifest(path, jerr.text);
    }
    int rc = 0;
    const char *format = json_string_value(json_object_get(root, "format"));
    json_t *tasks = json_object_get(root, "tasks");
    if (!format || strcmp(format, RLVR_POOL_MANIFEST_FORMAT) != 0) rc = bad_manifest(path, "not a " RLVR_POOL_MANIFEST_FORMAT " file");
    else if (!json_is_array(tasks)) rc = bad_manifest(path, "field \"tasks\" missing");
    if (rc == 0) rc = match_pool(path, root, pool);
    rlvr_pool_manifest *m = NULL;
    if (rc == 0) {
        m = calloc(1, sizeof *m);
        rc = m ? read_entries(m, path, tasks) : RLVR_FAIL(RLVR_ENOMEM, "out of memory reading a manifest");
    }
    json_decref(root);
    if (rc < 0) {
        rlvr_pool_manifest_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

int rlvr_pool_manifest_status(const rlvr_pool_manifest *m, const char *id, rlvr_task_check_status *out) {
    const manifest_entry *e = find_entry(m, id);
    if (!e) return rlvr_error_set(RLVR_ENOTFOUND, "task %s is not in the manifest", id);
    *out = e->status;
    return 0;
}

bool rlvr_pool_manifest_usable(const rlvr_pool_manifest *m, const char *id) {
    const manifest_entry *e = find_entry(m, id);
    return e && e->status == RLVR_TASK_CHECK_OK;
}

const rlvr_str_list *rlvr_pool_manifest_quarantined(const rlvr_pool_manifest *m, const char *id) {
    const manifest_entry *e = find_entry(m, id);
    return e ? &e->quarantined : NULL;
}

size_t rlvr_pool_manifest_usable_count(const rlvr_pool_manifest *m) {
    size_t n = 0;
    for (size_t i = 0; i < m->n; i++) n += m->entries[i].status == RLVR_TASK_CHECK_OK;
    return n;
}

int rlvr_pool_manifest_tally(const char *pool_path, const char *manifest_path,
                             size_t counts[RLVR_TASK_CHECK_STATUS_COUNT], size_t *n, uint64_t *hash) {
    rlvr_pool_manifest *m = NULL;
    rlvr_task_pool *pool = NULL;
    memset(counts, 0, RLVR_TASK_CHECK_STATUS_COUNT * sizeof *counts);
    *n = 0;
    int rc = rlvr_task_pool_load(&pool, pool_path);
    if (rc == 0) rc = rlvr_pool_manifest_load(&m, manifest_path, pool);
    if (rc == 0) rc = rlvr_task_pool_hash(pool, hash);
    size_t size = pool ? rlvr_task_pool_size(pool) : 0;
    for (size_t i = 0; rc == 0 && i < size; i++) {
        rlvr_task_check_status st = RLVR_TASK_CHECK_OK;
        rc = rlvr_pool_manifest_status(m, rlvr_task_pool_get(pool, i)->id, &st);
        if (rc == 0) counts[st]++;
    }
    if (rc == 0) *n = size;
    rlvr_pool_manifest_free(m);
    rlvr_task_pool_free(pool);
    return rc;
}
