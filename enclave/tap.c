#include "enclave/tap.h"

#include "core/error.h"
#include "enclave/reason.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void rlvr_tap_report_free(rlvr_tap_report *r) {
    if (!r) return;
    for (int i = 0; i < r->n_tests; i++) free(r->tests[i].name);
    free(r->tests);
    memset(r, 0, sizeof *r);
    r->planned = -1;
}

static bool parse_uint(const char **p, const char *end, long *out) {
    const char *s = *p;
    if (s >= end || !isdigit((unsigned char)*s)) return false;
    long v = 0;
    while (s < end && isdigit((unsigned char)*s)) {
        if (v > 100000000) return false;
        v = v * 10 + (*s - '0');
        s++;
    }
    *p = s;
    *out = v;
    return true;
}

/* "ok 3 - name # SKIP why" starting after "ok" / "not ok" */
static int parse_result(rlvr_tap_report *r, const char *s, const char *end, bool ok, int *next) {
    while (s < end && (*s == ' ' || *s == '\t')) s++;
    long number = *next;
    if (s < end && isdigit((unsigned char)*s)) {
        if (!parse_uint(&s, end, &number)) {
            r->malformed = true;
            return 0;
        }
    }
    while (s < end && (*s == ' ' || *s == '\t')) s++;
    if (s < end && *s == '-') {
        s++;
        while (s < end && (*s == ' ' || *s == '\t')) s++;
    }
    /* the directive starts at an unescaped '#' */
    const char *hash = NULL;
    for (const char *q = s; q < end; q++)
        if (*q == '#' && (q == s || q[-1] != '\\')) {
            hash = q;
            break;
        }
    const char *name_end = hash ? hash : end;
    while (name_end > s && (name_end[-1] == ' ' || name_end[-1] == '\t')) name_end--;
    rlvr_tap_status status = ok ? RLVR_TAP_PASS : RLVR_TAP_FAIL;
    if (hash && ok) { /* "not ok ... # SKIP/TODO" stays a failure */
        const char *d = hash + 1;
        while (d < end && (*d == ' ' || *d == '\t')) d++;
        if (end - d >= 4 && strncasecmp(d, "skip", 4) == 0) status = RLVR_TAP_SKIP;
        else if (end - d >= 4 && strncasecmp(d, "todo", 4) == 0) status = RLVR_TAP_TODO;
    }
    if (number < 1) r->malformed = true;
    for (int i = 0; i < r->n_tests; i++)
        if (r->tests[i].number == number) r->malformed = true;
    if (r->n_tests % 16 == 0) {
        rlvr_tap_test *grown = realloc(r->tests, (size_t)(r->n_tests + 16) * sizeof *grown);
        if (!grown) return RLVR_FAIL(RLVR_ENOMEM, "out of memory parsing TAP");
        r->tests = grown;
    }
    char *name = strndup(s, (size_t)(name_end - s));
    if (!name) return RLVR_FAIL(RLVR_ENOMEM, "out of memory parsing TAP");
    r->tests[r->n_tests++] = (rlvr_tap_test){.name = name, .number = (int)number, .status = status};
    *next = (int)number + 1;
    return 0;
}

int rlvr_tap_parse(const char *text, size_t len, rlvr_tap_report *out) {
    memset(out, 0, sizeof *out);
    out->planned = -1;
    int next = 1;
    const char *p = text, *end = text + len;
    if (len > 0 && memchr(text, '\0', len)) out->malformed = true;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *e = le;
        if (e > p && e[-1] == '\r') e--;
        size_t n = (size_t)(e - p);
        if (n == 0 || p[0] == '#' || p[0] == ' ' || p[0] == '\t') {
            /* blank, comment, indented (YAML diagnostics, subtests) */
        } else if (n >= 11 && strncmp(p, "TAP version", 11) == 0) {
        } else if (n >= 9 && strncmp(p, "Bail out!", 9) == 0) {
            out->bail_out = true;
        } else if (n >= 3 && strncmp(p, "1..", 3) == 0) {
            const char *s = p + 3;
            long planned;
            if (out->planned >= 0 || !parse_uint(&s, e, &planned)) out->malformed = true;
            else {
                while (s < e && (*s == ' ' || *s == '\t')) s++;
                if (s < e && *s != '#') out->malformed = true;
                out->planned = (int)planned;
            }
        } else if (n >= 2 && strncmp(p, "ok", 2) == 0 && (n == 2 || p[2] == ' ' || p[2] == '\t')) {
            int rc = parse_result(out, p + 2, e, true, &next);
            if (rc < 0) {
                rlvr_tap_report_free(out);
                return rc;
            }
        } else if (n >= 6 && strncmp(p, "not ok", 6) == 0 && (n == 6 || p[6] == ' ' || p[6] == '\t')) {
            int rc = parse_result(out, p + 6, e, false, &next);
            if (rc < 0) {
                rlvr_tap_report_free(out);
                return rc;
            }
        } else {
            out->malformed = true;
        }
        p = nl ? nl + 1 : end;
    }
    if (out->planned >= 0)
        for (int i = 0; i < out->n_tests; i++)
            if (out->tests[i].number > out->planned) out->malformed = true;
    return 0;
}

const rlvr_tap_test *rlvr_tap_find(const rlvr_tap_report *r, const char *name, int *count) {
    const rlvr_tap_test *found = NULL;
    int n = 0;
    for (int i = 0; i < r->n_tests; i++)
        if (strcmp(r->tests[i].name, name) == 0) {
            if (!found) found = &r->tests[i];
            n++;
        }
    if (count) *count = n;
    return found;
}

static bool listed(const char *const *list, const char *name) {
    for (const char *const *p = list; p && *p; p++)
        if (strcmp(*p, name) == 0) return true;
    return false;
}

/* Reason of one required result, by precedence: fail > skip. */
static int fold(int reason, rlvr_tap_status s) {
    if (s == RLVR_TAP_FAIL) return RLVR_REASON_TESTS_FAILED;
    if ((s == RLVR_TAP_SKIP || s == RLVR_TAP_TODO) && reason == RLVR_REASON_NONE) return RLVR_REASON_TEST_SKIPPED;
    return reason;
}

/* One counted result into the judgement: its share of partial credit, and
 * of the FAIL_TO_PASS credit or the PASS_TO_PASS condition. */
static void count(rlvr_tap_judgement *out, bool p2p, bool passed) {
    out->total++;
    out->passed += passed;
    if (p2p) {
        out->p2p_failed |= !passed;
    } else {
        out->f2p_total++;
        out->f2p_passed += passed;
    }
}

/* A run whose results cannot be trusted as a whole earns no partial credit. */
static void no_credit(rlvr_tap_judgement *out) {
    out->passed = 0;
    out->f2p_passed = 0;
}

void rlvr_tap_judge(const rlvr_tap_report *r, const rlvr_tap_expect *x, rlvr_tap_judgement *out) {
    memset(out, 0, sizeof *out);
    if (r->malformed || r->bail_out) {
        out->reason = r->malformed && r->invalid_reason ? r->invalid_reason : RLVR_REASON_RESULTS_INVALID;
        return;
    }
    if (r->n_tests == 0) {
        out->reason = RLVR_REASON_NO_RESULTS;
        return;
    }
    int reason = RLVR_REASON_NONE;
    bool incomplete = r->planned < 0 || r->n_tests != r->planned;
    if (x->required) {
        for (const char *const *p = x->required; *p; p++) {
            if (listed(x->quarantined, *p)) continue;
            int seen = 0;
            const rlvr_tap_test *t = rlvr_tap_find(r, *p, &seen);
            count(out, listed(x->pass_to_pass, *p), t && t->status == RLVR_TAP_PASS);
            if (seen > 1) {
                out->reason = RLVR_REASON_RESULTS_INVALID;
                no_credit(out);
                return;
            }
            if (!t) {
                incomplete = true;
                continue;
            }
            reason = fold(reason, t->status);
        }
    } else {
        for (int i = 0; i < r->n_tests; i++) {
            if (listed(x->quarantined, r->tests[i].name)) continue;
            count(out, false, r->tests[i].status == RLVR_TAP_PASS);
            reason = fold(reason, r->tests[i].status);
        }
    }
    if (x->exit_code < 0) {
        /* killed or signalled: a failure whatever it printed, and no credit */
        out->reason = reason == RLVR_REASON_NONE && !incomplete ? RLVR_REASON_EXIT_STATUS
                      : incomplete                              ? RLVR_REASON_INCOMPLETE
                                                                : reason;
        no_credit(out);
        return;
    }
    if (incomplete) {
        out->reason = RLVR_REASON_INCOMPLETE;
        return;
    }
    if (reason == RLVR_REASON_NONE && out->total == 0) reason = RLVR_REASON_NO_RESULTS;
    if (reason == RLVR_REASON_NONE && x->exit_code != 0) {
        /* every counted test passed but the command failed: only a failing
         * quarantined test explains that. A failing line of any other test
         * (a decoy the required list does not name) does not. */
        bool explained = false;
        for (int i = 0; i < r->n_tests; i++)
            explained |= r->tests[i].status == RLVR_TAP_FAIL && listed(x->quarantined, r->tests[i].name);
        if (!explained) reason = RLVR_REASON_EXIT_STATUS;
    }
    if (reason == RLVR_REASON_EXIT_STATUS || reason == RLVR_REASON_NO_RESULTS) no_credit(out);
    out->reason = reason;
}
