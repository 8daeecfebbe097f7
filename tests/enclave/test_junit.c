/* tests/enclave/test_junit.c — JUnit XML results: the parser's ids and
 * statuses, files the real pytest and ctest write (generated here) judged
 * as their TAP equivalents, hostile files refused with a reason (each with
 * a control that parses), and a command-mode pytest task verified end to
 * end, hostile results files included, in a pooled enclave that goes on
 * judging afterwards, and a forged results file against each defence, with
 * the control that shows it would pass where a defence broke.
 * Flags: --unprivileged (running as uid 65534), --copy (sandboxes copy the
 * snapshot instead of an overlay). */
#include "test.h"
#include "core/fs.h"

#include "fixture.h"

#include "core/log.h"
#include "enclave/fsutil.h"
#include "enclave/gitrepo.h"
#include "enclave/junit.h"
#include "enclave/reason.h"
#include "enclave/verify.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#define PYTHON "/usr/bin/python3"

static int parse(const char *xml, const char *const *known, rlvr_tap_report *r) {
    CHECK_OK(rlvr_junit_parse(xml, strlen(xml), known, NULL, r));
    return r->malformed ? (r->invalid_reason ? r->invalid_reason : RLVR_REASON_RESULTS_INVALID) : RLVR_REASON_NONE;
}

/* The reason a document is refused for (NONE when it parses). */
static int refusal(const char *xml) {
    rlvr_tap_report r;
    int reason = parse(xml, NULL, &r);
    rlvr_tap_report_free(&r);
    return reason;
}

static rlvr_tap_status status_of(const rlvr_tap_report *r, const char *id, int *count) {
    const rlvr_tap_test *t = rlvr_tap_find(r, id, count);
    return t ? t->status : (rlvr_tap_status)-1;
}

/* ---- ids and statuses ------------------------------------------------------------ */

static void test_mangle(void) {
    char *c = NULL, *n = NULL;
    CHECK_OK(rlvr_junit_mangle_pytest_id("tests/test_x.py::TestY::test_z[a/b.c::d]", &c, &n));
    CHECK(c && strcmp(c, "tests.test_x.TestY") == 0);
    CHECK(n && strcmp(n, "test_z[a/b.c::d]") == 0);
    free(c), free(n);
    CHECK_OK(rlvr_junit_mangle_pytest_id("test_a.py::test_b", &c, &n));
    CHECK(c && strcmp(c, "test_a") == 0 && n && strcmp(n, "test_b") == 0);
    free(c), free(n);
}

static void test_ids_and_statuses(void) {
    const char *xml =
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
        "<testsuites><testsuite name=\"pytest\" tests=\"6\">\n"
        " <testcase classname=\"tests.test_x.TestY\" name=\"test_z[1]\" time=\"0.1\"/>\n"
        " <testcase classname=\"tests.test_x\" name=\"test_f\"><failure message=\"m\">trace &amp; more</failure>"
        "</testcase>\n"
        " <testcase classname=\"tests.test_x\" name=\"test_e\"><error message=\"fixture\"/></testcase>\n"
        " <testcase classname=\"tests.test_x\" name=\"test_s\"><skipped message=\"why\"/></testcase>\n"
        " <testcase classname=\"tests.test_x\" name=\"test_fs\"><skipped/><failure/></testcase>\n"
        " <testcase classname=\"tests.test_x\" name=\"test_out\"><system-out><failure/></system-out></testcase>\n"
        " <testcase classname=\"tests.sub.test_w\" name=\"test_v\" file=\"tests/sub/test_w.py\"/>\n"
        " <testcase classname=\"calc\" name=\"calc\" status=\"notrun\"/>\n"
        " <testcase classname=\"\" name=\"bare\"><flakyFailure/></testcase>\n"
        " <testcase classname=\"com.example.CalcTest\" name=\"adds\"/>\n"
        "</testsuite></testsuites>\n";
    const char *const known[] = {"tests/test_x.py::TestY::test_z[1]", "tests/test_x.py::test_f",
                                 "tests/test_x.py::test_e", "tests/test_x.py::test_s", "tests/test_x.py::test_fs",
                                 "tests/test_x.py::test_out", NULL};
    rlvr_tap_report r;
    CHECK(parse(xml, known, &r) == RLVR_REASON_NONE);
    CHECK(r.n_tests == 10 && r.planned == 10);
    int n = 0;
    CHECK(status_of(&r, "tests/test_x.py::TestY::test_z[1]", &n) == RLVR_TAP_PASS && n == 1);
    CHECK(status_of(&r, "tests/test_x.py::test_f", &n) == RLVR_TAP_FAIL);
    CHECK(status_of(&r, "tests/test_x.py::test_e", &n) == RLVR_TAP_FAIL); /* error is failure */
    CHECK(status_of(&r, "tests/test_x.py::test_s", &n) == RLVR_TAP_SKIP);
    CHECK(status_of(&r, "tests/test_x.py::test_fs", &n) == RLVR_TAP_FAIL); /* failure beats skipped */
    CHECK(status_of(&r, "tests/test_x.py::test_out", &n) == RLVR_TAP_PASS); /* only direct children count */
    /* pytest's file attribute (xunit1) gives the node id with no task name */
    CHECK(status_of(&r, "tests/sub/test_w.py::test_v", &n) == RLVR_TAP_PASS);
    CHECK(status_of(&r, "calc", &n) == RLVR_TAP_SKIP); /* ctest: classname == name, notrun */
    CHECK(status_of(&r, "bare", &n) == RLVR_TAP_FAIL);
    CHECK(status_of(&r, "com.example.CalcTest.adds", &n) == RLVR_TAP_PASS);
    /* judged as TAP is: a skip is not a pass, an error is a failure */
    const char *const req_pass[] = {"tests/test_x.py::TestY::test_z[1]", "com.example.CalcTest.adds", NULL};
    const char *const req_skip[] = {"tests/test_x.py::TestY::test_z[1]", "tests/test_x.py::test_s", NULL};
    const char *const req_err[] = {"tests/test_x.py::test_e", "tests/test_x.py::test_s", NULL};
    const char *const req_missing[] = {"tests/test_x.py::test_gone", NULL};
    rlvr_tap_judgement j;
    rlvr_tap_judge(&r, &(rlvr_tap_expect){.required = req_pass}, &j);
    CHECK(j.reason == RLVR_REASON_NONE && j.passed == 2 && j.total == 2);
    rlvr_tap_judge(&r, &(rlvr_tap_expect){.required = req_skip}, &j);
    CHECK(j.reason == RLVR_REASON_TEST_SKIPPED);
    rlvr_tap_judge(&r, &(rlvr_tap_expect){.required = req_err}, &j);
    CHECK(j.reason == RLVR_REASON_TESTS_FAILED);
    rlvr_tap_judge(&r, &(rlvr_tap_expect){.required = req_missing}, &j);
    CHECK(j.reason == RLVR_REASON_INCOMPLETE);
    rlvr_tap_report_free(&r);

    /* the same test twice is a duplicate: invalid, as in TAP */
    const char *dup = "<testsuite><testcase classname=\"a\" name=\"t\"/><testcase classname=\"a\" name=\"t\"/>"
                      "</testsuite>";
    const char *const req_dup[] = {"a.t", NULL};
    CHECK(parse(dup, NULL, &r) == RLVR_REASON_NONE);
    rlvr_tap_judge(&r, &(rlvr_tap_expect){.required = req_dup}, &j);
    CHECK(j.reason == RLVR_REASON_RESULTS_INVALID);
    rlvr_tap_report_free(&r);
    /* nested suites (go-junit-report, Surefire aggregates) */
    CHECK(refusal("<testsuites><testsuite><testsuite><testcase name=\"x\"/></testsuite></testsuite></testsuites>") ==
          RLVR_REASON_NONE);
    /* an empty report: no results, never a pass */
    CHECK(parse("<testsuites/>", NULL, &r) == RLVR_REASON_NONE);
    rlvr_tap_judge(&r, &(rlvr_tap_expect){0}, &j);
    CHECK(j.reason == RLVR_REASON_NO_RESULTS);
    rlvr_tap_report_free(&r);
}

/* ---- hostile files, each with a control --------------------------------------------- */

#define ONE_CASE "<testsuite><testcase classname=\"a\" name=\"t\"/></testsuite>"

static char *repeat(const char *open, const char *close, int n, const char *middle) {
    size_t lo = strlen(open), lc = strlen(close), lm = strlen(middle);
    char *s = malloc((lo + lc) * (size_t)n + lm + 1);
    if (!s) return NULL;
    char *p = s;
    for (int i = 0; i < n; i++) p = memcpy(p, open, lo), p += lo;
    p = memcpy(p, middle, lm), p += lm;
    for (int i = 0; i < n; i++) p = memcpy(p, close, lc), p += lc;
    *p = '\0';
    return s;
}

static void test_hostile(void) {
    CHECK(refusal(ONE_CASE) == RLVR_REASON_NONE); /* the control every case below departs from */
    const char *laughs = "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n <!ENTITY lol \"lol\">\n"
                         " <!ENTITY lol2 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">\n"
                         " <!ENTITY lol3 \"&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;\">\n"
                         " <!ENTITY lol4 \"&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;\">\n]>\n"
                         "<testsuite><testcase classname=\"&lol4;\" name=\"t\"/></testsuite>";
    CHECK(refusal(laughs) == RLVR_REASON_RESULTS_UNSAFE);
    const char *external = "<?xml version=\"1.0\"?>\n<!DOCTYPE t [ <!ENTITY x SYSTEM \"file:///etc/passwd\"> ]>\n"
                           "<testsuite><testcase classname=\"&x;\" name=\"t\"/></testsuite>";
    CHECK(refusal(external) == RLVR_REASON_RESULTS_UNSAFE);
    const char *external_dtd = "<!DOCTYPE testsuite SYSTEM \"http://example.invalid/junit.dtd\">" ONE_CASE;
    CHECK(refusal(external_dtd) == RLVR_REASON_RESULTS_UNSAFE);
    const char *param = "<!DOCTYPE t [ <!ENTITY % p SYSTEM \"file:///etc/hostname\"> %p; ]>" ONE_CASE;
    CHECK(refusal(param) == RLVR_REASON_RESULTS_UNSAFE);
    /* an entity never declared is not XML */
    CHECK(refusal("<testsuite><testcase classname=\"&x;\" name=\"t\"/></testsuite>") == RLVR_REASON_RESULTS_INVALID);

    /* 100 MB: refused by size, before any parsing (the control: the same
     * structure small) */
    size_t big = (size_t)100 << 20;
    char *huge = malloc(big + 1);
    if (huge) {
        memset(huge, ' ', big);
        memcpy(huge, "<testsuite>", 11);
        memcpy(huge + big - 12, "</testsuite>", 12);
        huge[big] = '\0';
        CHECK(refusal(huge) == RLVR_REASON_RESULTS_TOO_LARGE);
        CHECK(refusal("<testsuite>        </testsuite>") == RLVR_REASON_NONE);
        free(huge);
    }
    /* truncated anywhere: invalid (the control is the whole file) */
    const char *whole = "<testsuites><testsuite name=\"s\"><testcase classname=\"a\" name=\"t\"/></testsuite>"
                        "</testsuites>";
    for (size_t cut = 1; cut < strlen(whole); cut += 7) {
        char part[256];
        snprintf(part, sizeof part, "%.*s", (int)cut, whole);
        CHECK_MSG(refusal(part) == RLVR_REASON_RESULTS_INVALID, "cut at %zu", cut);
    }
    CHECK(refusal(whole) == RLVR_REASON_NONE);
    /* 10 000-deep nesting: too deep; 32 deep is fine */
    char *deep = repeat("<x>", "</x>", 10000, "");
    char *deep_doc = deep ? malloc(strlen(deep) + 64) : NULL;
    if (deep_doc) {
        sprintf(deep_doc, "<testsuite>%s</testsuite>", deep);
        CHECK(refusal(deep_doc) == RLVR_REASON_RESULTS_TOO_LARGE);
    }
    free(deep_doc);
    free(deep);
    char *shallow = repeat("<testsuite>", "</testsuite>", 32, "<testcase name=\"t\"/>");
    CHECK(shallow && refusal(shallow) == RLVR_REASON_NONE);
    free(shallow);
    /* a name past the limit (the control: one just under it) */
    rlvr_junit_limits lim = RLVR_JUNIT_LIMITS_INIT;
    char name[5000];
    char doc[5200];
    memset(name, 'n', sizeof name);
    name[lim.max_name + 1] = '\0';
    snprintf(doc, sizeof doc, "<testsuite><testcase name=\"%s\"/></testsuite>", name);
    CHECK(refusal(doc) == RLVR_REASON_RESULTS_TOO_LARGE);
    name[lim.max_name - 1] = '\0';
    snprintf(doc, sizeof doc, "<testsuite><testcase name=\"%s\"/></testsuite>", name);
    CHECK(refusal(doc) == RLVR_REASON_NONE);
    /* too many testcases for the limit */
    lim.max_tests = 2;
    rlvr_tap_report r;
    const char *three = "<testsuite><testcase name=\"a\"/><testcase name=\"b\"/><testcase name=\"c\"/></testsuite>";
    CHECK_OK(rlvr_junit_parse(three, strlen(three), NULL, &lim, &r));
    CHECK(r.malformed && r.invalid_reason == RLVR_REASON_RESULTS_TOO_LARGE && r.n_tests == 0);
    rlvr_tap_report_free(&r);
    lim.max_tests = 3;
    CHECK_OK(rlvr_junit_parse(three, strlen(three), NULL, &lim, &r));
    CHECK(!r.malformed && r.n_tests == 3);
    rlvr_tap_report_free(&r);
    /* structure: the root, a testcase outside a suite, one without a name,
     * a NUL byte, two roots */
    CHECK(refusal("<html><testsuite><testcase name=\"t\"/></testsuite></html>") == RLVR_REASON_RESULTS_INVALID);
    CHECK(refusal("<testsuites><testcase name=\"t\"/></testsuites>") == RLVR_REASON_RESULTS_INVALID);
    CHECK(refusal("<testsuite><testcase classname=\"a\"/></testsuite>") == RLVR_REASON_RESULTS_INVALID);
    CHECK(refusal("<testsuite><testcase name=\"a\"><testcase name=\"b\"/></testcase></testsuite>") ==
          RLVR_REASON_RESULTS_INVALID);
    const char nul[] = "<testsuite><testcase name=\"a\"/>\0</testsuite>";
    CHECK_OK(rlvr_junit_parse(nul, sizeof nul - 1, NULL, NULL, &r));
    CHECK(r.malformed && r.invalid_reason == 0);
    rlvr_tap_report_free(&r);
    CHECK(refusal(ONE_CASE ONE_CASE) == RLVR_REASON_RESULTS_INVALID);
    /* judged: the reason of a refused file is the verdict's reason */
    CHECK_OK(rlvr_junit_parse(laughs, strlen(laughs), NULL, NULL, &r));
    rlvr_tap_judgement j;
    rlvr_tap_judge(&r, &(rlvr_tap_expect){0}, &j);
    CHECK(j.reason == RLVR_REASON_RESULTS_UNSAFE && j.passed == 0);
    rlvr_tap_report_free(&r);
}

/* ---- files the real producers write ------------------------------------------------- */

static int write_file(const char *dir, const char *rel, const char *text) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    char parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%s", path);
    *strrchr(parent, '/') = '\0';
    RLVR_TRY(rlvr_mkdir_p(parent, 0755));
    return rlvr_fs_write_file(path, text, strlen(text));
}

typedef struct {
    const char *id;
    rlvr_tap_status status;
} expected_result;

/* The TAP stream that says what `rows` say. */
static char *tap_equivalent(const expected_result *rows, int n) {
    char *tap = malloc(64 + (size_t)n * 512);
    if (!tap) return NULL;
    char *p = tap + sprintf(tap, "TAP version 13\n1..%d\n", n);
    for (int i = 0; i < n; i++) {
        rlvr_tap_status s = rows[i].status;
        p += sprintf(p, "%s %d - %s%s\n", s == RLVR_TAP_FAIL ? "not ok" : "ok", i + 1, rows[i].id,
                     s == RLVR_TAP_SKIP ? " # SKIP" : "");
    }
    return tap;
}

/* The JUnit file judged as its TAP equivalent, for several required sets
 * (NULL-separated groups, ended by two NULLs). */
static void judged_alike(const char *producer, const rlvr_tap_report *junit, const expected_result *rows, int n,
                         const char *const *groups) {
    CHECK_MSG(junit->n_tests == n && !junit->malformed, "%s: %d testcases (expected %d), malformed %d", producer,
              junit->n_tests, n, junit->malformed);
    for (int i = 0; i < n; i++) {
        int count = 0;
        rlvr_tap_status s = status_of(junit, rows[i].id, &count);
        CHECK_MSG(count == 1 && s == rows[i].status, "%s: %s: status %d seen %d times (expected %d once)", producer,
                  rows[i].id, (int)s, count, (int)rows[i].status);
    }
    char *tap_text = tap_equivalent(rows, n);
    rlvr_tap_report tap;
    CHECK_OK(rlvr_tap_parse(tap_text, strlen(tap_text), &tap));
    for (const char *const *g = groups; *g; g++) {
        for (int exit_code = 0; exit_code <= 1; exit_code++) {
            rlvr_tap_expect x = {.required = g, .exit_code = exit_code};
            rlvr_tap_judgement a, b;
            rlvr_tap_judge(junit, &x, &a);
            rlvr_tap_judge(&tap, &x, &b);
            CHECK_MSG(a.reason == b.reason && a.passed == b.passed && a.total == b.total,
                      "%s: required from %s: junit %s %d/%d, tap %s %d/%d", producer, *g, rlvr_reason_name(a.reason),
                      a.passed, a.total, rlvr_reason_name(b.reason), b.passed, b.total);
        }
        while (*g) g++;
    }
    rlvr_tap_report_free(&tap);
    free(tap_text);
}

static const char pytest_tests[] =
    "import pytest\n"
    "def test_pass():\n    assert 1 + 1 == 2\n"
    "def test_fail():\n    assert 1 + 1 == 3\n"
    "@pytest.mark.skip(reason='not today')\ndef test_skip():\n    pass\n"
    "@pytest.mark.xfail(strict=True)\ndef test_xfail():\n    assert False\n"
    "@pytest.fixture\ndef broken():\n    raise RuntimeError('setup')\n"
    "def test_setup_error(broken):\n    pass\n"
    "@pytest.mark.parametrize('n', [1, 2])\ndef test_param(n):\n    assert n == 1\n"
    "class TestGroup:\n    def test_method(self):\n        pass\n"
    "    class TestInner:\n        def test_deep(self):\n            pass\n";

static void run_pytest_case(const char *dir, const char *family) {
    char cmd[PATH_MAX * 2];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && PYTHONDONTWRITEBYTECODE=1 " PYTHON " -m pytest -p no:cacheprovider -q -o junit_family=%s "
             "--junitxml=report-%s.xml tests >/dev/null 2>&1",
             dir, family, family);
    int st = system(cmd);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 1, "pytest (%s) exited %d (1: some tests failed)", family, st);
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/report-%s.xml", dir, family);
    char *xml = NULL;
    size_t len = 0;
    CHECK_OK(rlvr_fs_read_file(path, &xml, &len));
    if (!xml) return;
    static const expected_result rows[] = {
        {"tests/test_calc.py::test_pass", RLVR_TAP_PASS},
        {"tests/test_calc.py::test_fail", RLVR_TAP_FAIL},
        {"tests/test_calc.py::test_skip", RLVR_TAP_SKIP},
        {"tests/test_calc.py::test_xfail", RLVR_TAP_SKIP}, /* an expected failure is not a pass */
        {"tests/test_calc.py::test_setup_error", RLVR_TAP_FAIL},
        {"tests/test_calc.py::test_param[1]", RLVR_TAP_PASS},
        {"tests/test_calc.py::test_param[2]", RLVR_TAP_FAIL},
        {"tests/test_calc.py::TestGroup::test_method", RLVR_TAP_PASS},
        {"tests/test_calc.py::TestGroup::TestInner::test_deep", RLVR_TAP_PASS},
    };
    const int n = (int)(sizeof rows / sizeof rows[0]);
    /* xunit1 names the file: node ids need no task names. xunit2 does not:
     * the task's names give them. */
    const char *known[16] = {0};
    for (int i = 0; i < n && strcmp(family, "xunit2") == 0; i++) known[i] = rows[i].id;
    rlvr_tap_report r;
    CHECK_OK(rlvr_junit_parse(xml, len, known, NULL, &r));
    const char *const groups[] = {
        "tests/test_calc.py::test_pass", "tests/test_calc.py::TestGroup::test_method",
        "tests/test_calc.py::TestGroup::TestInner::test_deep", "tests/test_calc.py::test_param[1]", NULL,
        "tests/test_calc.py::test_pass", "tests/test_calc.py::test_skip", NULL,
        "tests/test_calc.py::test_pass", "tests/test_calc.py::test_xfail", NULL,
        "tests/test_calc.py::test_setup_error", NULL,
        "tests/test_calc.py::test_param[2]", "tests/test_calc.py::test_param[1]", NULL,
        "tests/test_calc.py::test_not_there", NULL,
        NULL};
    char producer[64];
    snprintf(producer, sizeof producer, "pytest %s", family);
    judged_alike(producer, &r, rows, n, groups);
    rlvr_tap_report_free(&r);
    free(xml);
}

static void test_real_pytest(const char *scratch) {
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/pytest", scratch);
    CHECK_OK(write_file(dir, "tests/test_calc.py", pytest_tests));
    run_pytest_case(dir, "xunit2");
    run_pytest_case(dir, "xunit1");
}

static void test_real_ctest(const char *scratch) {
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/ctest", scratch);
    CHECK_OK(write_file(dir, "CMakeLists.txt",
                        "cmake_minimum_required(VERSION 3.21)\nproject(junit_probe NONE)\nenable_testing()\n"
                        "add_test(NAME adds COMMAND sh -c \"test $((2+2)) -eq 4\")\n"
                        "add_test(NAME muls COMMAND sh -c \"test $((2*3)) -eq 5\")\n"
                        "add_test(NAME later COMMAND true)\n"
                        "set_tests_properties(later PROPERTIES DISABLED TRUE)\n"
                        "add_test(NAME skips COMMAND sh -c \"exit 77\")\n"
                        "set_tests_properties(skips PROPERTIES SKIP_RETURN_CODE 77)\n"));
    char cmd[PATH_MAX * 2];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && cmake -S . -B b >/dev/null 2>&1 && cd b && ctest --output-junit ../junit.xml >/dev/null 2>&1",
             dir);
    int st = system(cmd);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 8, "ctest exited %d (8: some tests failed)", st);
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/junit.xml", dir);
    char *xml = NULL;
    size_t len = 0;
    CHECK_OK(rlvr_fs_read_file(path, &xml, &len));
    if (!xml) return;
    static const expected_result rows[] = {
        {"adds", RLVR_TAP_PASS}, {"muls", RLVR_TAP_FAIL}, {"later", RLVR_TAP_SKIP}, {"skips", RLVR_TAP_SKIP}};
    rlvr_tap_report r;
    CHECK_OK(rlvr_junit_parse(xml, len, NULL, NULL, &r));
    const char *const groups[] = {"adds", NULL, "adds", "muls", NULL, "adds", "later", NULL, "skips", NULL,
                                  "missing", NULL, NULL};
    judged_alike("ctest", &r, rows, 4, groups);
    rlvr_tap_report_free(&r);
    free(xml);
}

/* ---- a command-mode pytest task, end to end ------------------------------------------ */

static rlvr_sandbox_host *host;

static const char calc_broken[] = "def add(a, b):\n    return a + b\n\ndef mul(a, b):\n    return a + b\n";
static const char calc_fixed[] = "def add(a, b):\n    return a + b\n\ndef mul(a, b):\n    return a * b\n";
static const char hidden_tests[] =
    "import calc\n"
    "def test_add():\n    assert calc.add(2, 3) == 5\n"
    "def test_mul():\n    assert calc.mul(2, 3) == 6\n"
    "class TestNeg:\n    def test_mul_neg(self):\n        assert calc.mul(-2, 3) == -6\n";
/* The test command: pytest, unless the code under test carries a marker
 * naming a hostile results file to leave instead (the red-team's view of
 * what code sharing a process with the harness could write). */
static const char run_tests_sh[] =
    "case \"$(grep -o 'EMIT=[a-z]*' calc.py)\" in\n"
    "EMIT=laughs) printf '<!DOCTYPE t [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;\">]>"
    "<testsuite><testcase classname=\"&b;\" name=\"x\"/></testsuite>' > report.xml ;;\n"
    "EMIT=external) printf '<!DOCTYPE t [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>"
    "<testsuite><testcase classname=\"&x;\" name=\"x\"/></testsuite>' > report.xml ;;\n"
    "EMIT=huge) truncate -s 100M report.xml ;;\n"
    "EMIT=truncated) printf '<testsuites><testsuite name=\"pytest\"><testcase classname=\"tests.test_calc\" "
    "name=\"test_add\"/>' > report.xml ;;\n"
    "EMIT=deep) i=0; { printf '<testsuite>'; while [ $i -lt 10000 ]; do printf '<x>'; i=$((i+1)); done; } > "
    "report.xml ;;\n"
    "EMIT=symlink) ln -s /etc/passwd report.xml ;;\n"
    "EMIT=fifo) mkfifo report.xml ;;\n"
    "EMIT=none) ;;\n"
    "EMIT=forged) printf '%s' \"$(cat forged.txt)\" > report.xml ;;\n"
    "*) PYTHONDONTWRITEBYTECODE=1 " PYTHON " -m pytest -p no:cacheprovider -q --junitxml=report.xml tests ;;\n"
    "esac\n";

/* A results file that says every test of the task passed. */
static const char forged_report[] =
    "<testsuites><testsuite name=\"pytest\"><testcase classname=\"tests.test_calc\" name=\"test_add\"/>"
    "<testcase classname=\"tests.test_calc\" name=\"test_mul\"/>"
    "<testcase classname=\"tests.test_calc.TestNeg\" name=\"test_mul_neg\"/></testsuite></testsuites>";

/* The patch that writes calc.py, and `extra_path` (NULL: none) holding
 * `extra` (caller frees). */
static char *calc_patch(const char *root, const char *repo, const char *base, const char *text,
                        const char *extra_path, const char *extra, size_t *len) {
    fixture_edit e[2] = {{EDIT_WRITE, "calc.py", text, 0, 0}, {EDIT_WRITE, extra_path, extra, 0, 0}};
    char *patch = NULL;
    *len = 0;
    CHECK_OK(fixture_patch_repo(repo, base, root, e, extra_path ? 2 : 1, &patch, len));
    return patch;
}

static rlvr_enclave_verdict verify_calc(rlvr_verify_task *task, const char *root, const char *repo,
                                        const char *base, const char *text, const char *extra_path) {
    size_t len;
    char *patch = calc_patch(root, repo, base, text, extra_path, forged_report, &len);
    rlvr_enclave_verdict v = fixture_verify(task, patch ? patch : "", len, 7);
    free(patch);
    return v;
}

#define EXPECT(v, verdict_, reason_)                                                                     \
    CHECK_MSG((v).verdict == (verdict_) && (v).reason == (reason_), "verdict %s reason %s, expected %s %s", \
              rlvr_verdict_name((v).verdict), rlvr_reason_name((v).reason), rlvr_verdict_name(verdict_),   \
              rlvr_reason_name(reason_))

static void test_pytest_task(const char *scratch) {
    char root[PATH_MAX - 64], repo[PATH_MAX], hidden[PATH_MAX];
    snprintf(root, sizeof root, "%s/task", scratch);
    snprintf(repo, sizeof repo, "%s/repo", root);
    snprintf(hidden, sizeof hidden, "%s/hidden", root);
    CHECK_OK(write_file(repo, "calc.py", calc_broken));
    CHECK_OK(write_file(repo, "run_tests.sh", run_tests_sh));
    CHECK_OK(write_file(hidden, "tests/test_calc.py", hidden_tests));
    char base[41] = "";
    CHECK_OK(rlvr_git_init_commit_all(repo, "base\n", base));
    const char *const f2p[] = {"tests/test_calc.py::test_mul", "tests/test_calc.py::TestNeg::test_mul_neg", NULL};
    const char *const p2p[] = {"tests/test_calc.py::test_add", NULL};
    const char *const protected_globs[] = {"tests", "run_tests.sh", NULL};
    rlvr_verify_spec spec = {.version = RLVR_VERIFY_SPEC_VERSION, .repo_dir = repo, .base_commit = base,
                             .hidden_dir = hidden, .test_command = "sh run_tests.sh", .fail_to_pass = f2p,
                             .pass_to_pass = p2p, .protected_globs = protected_globs, .consensus_runs = 2,
                             .results_junit = "report.xml"};
    rlvr_sandbox_limits_default(&spec.limits);
    spec.limits.wall_s = 30;
    spec.limits.file_bytes = (int64_t)128 << 20; /* the 100 MB file is the results reader's to refuse */
    rlvr_verify_task *task = NULL;
    CHECK_OK(rlvr_verify_task_new(&task, host, &spec));
    if (!task) return;
    rlvr_enclave_verdict v = verify_calc(task, root, repo, base, calc_fixed, NULL);
    EXPECT(v, RLVR_VERDICT_PASS, RLVR_REASON_NONE);
    CHECK(v.runs == 2 && v.tests_passed == 3 && v.tests_total == 3);
    v = verify_calc(task, root, repo, base, calc_broken, NULL); /* an empty patch: the base as it is */
    EXPECT(v, RLVR_VERDICT_FAIL, RLVR_REASON_TESTS_FAILED);
    CHECK(v.tests_passed == 1 && v.tests_total == 3 && v.f2p_passed == 0 && v.f2p_total == 2);
    /* Red team: a forged results file that says every test passed, with
     * the bug left in place. The control: the same bytes, once the tests
     * have written them (what code sharing the harness's process can do,
     * docs/ENCLAVE.md), pass, so each defence below is what stops them. */
    char forging[512];
    snprintf(forging, sizeof forging, "%s# EMIT=forged\n", calc_broken);
    size_t len;
    char *patch = calc_patch(root, repo, base, forging, "forged.txt", forged_report, &len);
    v = fixture_verify(task, patch ? patch : "", len, 7);
    EXPECT(v, RLVR_VERDICT_PASS, RLVR_REASON_NONE);
    free(patch);
    /* 1. planted by the patch: the path is protected */
    v = verify_calc(task, root, repo, base, calc_broken, "report.xml");
    EXPECT(v, RLVR_VERDICT_REJECTED, RLVR_REASON_PROTECTED_PATH);
    /* 2. past the gate (one run, no gate): removed before the tests run */
    snprintf(forging, sizeof forging, "%s# EMIT=none\n", calc_broken);
    patch = calc_patch(root, repo, base, forging, "report.xml", forged_report, &len);
    rlvr_verify_run run;
    CHECK_OK(rlvr_verify_run_once(task, patch ? patch : "", len, 7, 0, &run));
    CHECK_MSG(run.reason == RLVR_REASON_NO_RESULTS, "a planted results file: %s", rlvr_reason_name(run.reason));
    rlvr_verify_run_free(&run);
    free(patch);
    /* 3. left by an earlier verification in the pooled enclave: the pass
     * below writes one, the run after it writes none */
    v = verify_calc(task, root, repo, base, calc_fixed, NULL);
    EXPECT(v, RLVR_VERDICT_PASS, RLVR_REASON_NONE);
    v = verify_calc(task, root, repo, base, forging, NULL);
    EXPECT(v, RLVR_VERDICT_FAIL, RLVR_REASON_NO_RESULTS);
    /* hostile files the run leaves, each refused with its reason; the
     * reference after each shows the pooled enclave goes on judging */
    static const struct {
        const char *marker;
        int reason;
    } hostile[] = {
        {"EMIT=laughs", RLVR_REASON_RESULTS_UNSAFE},
        {"EMIT=external", RLVR_REASON_RESULTS_UNSAFE},
        {"EMIT=huge", RLVR_REASON_RESULTS_TOO_LARGE},
        {"EMIT=truncated", RLVR_REASON_RESULTS_INVALID},
        {"EMIT=deep", RLVR_REASON_RESULTS_TOO_LARGE}, /* unclosed as well: the depth stops it first */
        {"EMIT=symlink", RLVR_REASON_RESULTS_INVALID},
        {"EMIT=fifo", RLVR_REASON_RESULTS_INVALID},
        {"EMIT=none", RLVR_REASON_NO_RESULTS},
    };
    for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, "%s# %s\n", calc_fixed, hostile[i].marker);
        v = verify_calc(task, root, repo, base, text, NULL);
        CHECK_MSG(v.verdict == RLVR_VERDICT_FAIL && v.reason == hostile[i].reason && v.partial == 0.0f,
                  "%s: verdict %s reason %s", hostile[i].marker, rlvr_verdict_name(v.verdict),
                  rlvr_reason_name(v.reason));
        v = verify_calc(task, root, repo, base, calc_fixed, NULL);
        EXPECT(v, RLVR_VERDICT_PASS, RLVR_REASON_NONE);
    }
    rlvr_verify_task_free(task);

    /* a path a task may not name */
    spec.results_junit = "../report.xml";
    CHECK(rlvr_verify_task_new(&task, host, &spec) == RLVR_EINVAL && !task);
    spec.results_junit = ".git/report.xml";
    CHECK(rlvr_verify_task_new(&task, host, &spec) == RLVR_EINVAL && !task);
}

int main(int argc, char **argv) {
    rlvr_log_init_from_env();
    bool unprivileged, copy;
    char *scratch = NULL;
    CHECK_OK(fixture_variant(argc, argv, &unprivileged, &copy, &scratch, "rlvr-junit-"));
    if (!scratch) return test_summary("test_junit");
    test_mangle();
    test_ids_and_statuses();
    test_hostile();
    if (!unprivileged) {
        test_real_pytest(scratch);
        test_real_ctest(scratch);
    }
    int rc = fixture_host(&host, !copy);
    CHECK_MSG(rc == 0, "host: %s", rlvr_error_last());
    if (rc == 0) CHECK(rlvr_sandbox_host_overlay(host) == !copy);
    if (rc == 0) test_pytest_task(scratch);
    rlvr_sandbox_host_free(host);
    rlvr_fs_remove_tree(scratch);
    free(scratch);
    char name[64];
    snprintf(name, sizeof name, "test_junit%s%s", unprivileged ? " --unprivileged" : "", copy ? " --copy" : "");
    return test_summary(name);
}
