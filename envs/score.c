/* envs/score.c — one patch or answer scored as training scores it
 * (score.h). */
#include "envs/score.h"

#include "core/error.h"
#include "core/sys.h"
#include "enclave/config.h"
#include "enclave/reason.h"
#include "envs/arith.h"
#include "envs/harness.h"
#include "rl/config.h"

#include <string.h>

int rlvr_score_options_from_config(rlvr_score_options *out, const rlvr_config *cfg) {
    rlvr_enclave_settings es;
    rlvr_reward_config reward;
    RLVR_TRY(rlvr_enclave_settings_from_config(cfg, &es));
    RLVR_TRY(rlvr_rl_reward_config_load(&reward, cfg));
    *out = (rlvr_score_options){
        .version = RLVR_SCORE_OPTIONS_VERSION,
        .limits = es.limits,
        .consensus_runs = es.consensus_runs,
        .outcome = reward.outcome,
        .seed = 1,
    };
    return 0;
}

/* The answer of an arith task, in process, as the harness checks it. */
static int score_answer(const rlvr_task *t, const char *text, size_t len, rlvr_score *out) {
    double t0 = rlvr_now(), score = 0;
    RLVR_TRY(rlvr_arith_score(&t->arith, text, len, &score));
    bool pass = score == 1.0;
    out->verdict.verdict = pass ? RLVR_VERDICT_PASS : RLVR_VERDICT_FAIL;
    out->verdict.reason = pass ? RLVR_REASON_NONE : RLVR_REASON_TESTS_FAILED;
    out->verdict.wall_s = rlvr_now() - t0;
    out->outcome = score; /* 1 or 0: an answer has no partial credit */
    return 0;
}

/* A "tests" task: its verification task made as training makes it, then
 * the patch through the gate, the enclave and consensus. */
static int score_tests(const rlvr_task *t, rlvr_sandbox_host *host, const rlvr_score_options *o, const char *text,
                       size_t len, rlvr_score *out) {
    if (!host) return RLVR_FAIL(RLVR_EINVAL, "task %s: scoring a \"tests\" task needs a sandbox host", t->id);
    rlvr_verify_task *vt = NULL;
    RLVR_TRY(rlvr_harness_verify_task_new(&vt, host, t, &o->limits, o->consensus_runs));
    bool f2p = o->outcome == RLVR_OUTCOME_FAIL_TO_PASS;
    rlvr_verify_task_set_partial_credit(vt, f2p ? RLVR_PARTIAL_CREDIT_FAIL_TO_PASS : RLVR_PARTIAL_CREDIT_ALL);
    int rc = rlvr_verify_patch(vt, text, len, false, o->seed, &out->verdict);
    if (rc == 0) {
        const rlvr_enclave_verdict *v = &out->verdict;
        out->judged = rlvr_verify_task_judged(vt);
        /* the harness's rule (rlvr_harness_verify: credit only where it is
         * sealed), then the reward's (binary takes none) */
        bool credited = v->verdict == RLVR_VERDICT_FAIL && out->judged && o->outcome != RLVR_OUTCOME_BINARY;
        out->outcome = v->verdict == RLVR_VERDICT_PASS ? 1.0 : credited ? (double)(f2p ? v->f2p_partial : v->partial)
                                                                        : 0.0;
    }
    rlvr_verify_task_free(vt);
    return rc;
}

int rlvr_score_patch(const rlvr_task *t, rlvr_sandbox_host *host, const rlvr_score_options *o, const char *text,
                     size_t len, rlvr_score *out) {
    if (!t || !o || !out || (!text && len > 0))
        return RLVR_FAIL(RLVR_EINVAL, "rlvr_score_patch: a task, options and the text needed");
    if (o->version != RLVR_SCORE_OPTIONS_VERSION)
        return RLVR_FAIL(RLVR_EINVAL, "score options: version %u, this rlvr knows %d", o->version,
                         RLVR_SCORE_OPTIONS_VERSION);
    if (o->consensus_runs < 1) return RLVR_FAIL(RLVR_EINVAL, "score options: consensus_runs must be at least 1");
    rlvr_score s;
    memset(&s, 0, sizeof s);
    int rc = t->verifier == RLVR_VERIFIER_ARITH ? score_answer(t, text ? text : "", len, &s)
                                                : score_tests(t, host, o, text ? text : "", len, &s);
    if (rc < 0) return rlvr_error_wrap(rc, "scoring a patch of task %s", t->id);
    *out = s;
    return 0;
}
