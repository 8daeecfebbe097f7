/* tests/jobs/test_args.c — the command line's one flag parser (jobs/args.c):
 * values of every kind, --flag=VALUE, positionals and a positional list,
 * --help, and the one line each wrong argument gets. */
#include "jobs/args.h"
#include "jobs/commands.h"
#include "test.h"

#include <unistd.h>

static int usage_calls;
static void usage(FILE *out) {
    usage_calls++;
    fprintf(out, "usage: rlvr demo ...\n");
}

static char err_text[4096];

/* Runs the parser on a NULL-terminated argument vector with stderr captured. */
static int parse(const rlvr_opt *opts, const char **args) {
    char *argv[32];
    int argc = 0;
    argv[argc++] = "demo";
    for (; *args; args++) argv[argc++] = (char *)*args;
    fflush(stderr);
    FILE *cap = tmpfile();
    int saved = dup(2);
    dup2(fileno(cap), 2);
    int rc = rlvr_args_parse("demo", opts, usage, argc, argv);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(cap);
    size_t n = fread(err_text, 1, sizeof err_text - 1, cap);
    err_text[n] = 0;
    fclose(cap);
    return rc;
}

#define ARGS(...) ((const char *[]){__VA_ARGS__, NULL})

int main(void) {
    const char *task = NULL, *first = NULL;
    int64_t runs = 0;
    double temp = 1;
    bool json = false, runs_seen = false;
    rlvr_opt_list tests = {0}, rest = {0};
    const rlvr_opt opts[] = {
        RLVR_OPT("--task", RLVR_OPT_STRING, &task, "TASK", .required = true),
        RLVR_OPT("--runs", RLVR_OPT_INT, &runs, "N", .min = 1, .max = 100, .seen = &runs_seen),
        RLVR_OPT("--temperature", RLVR_OPT_DOUBLE, &temp, "T", .dmin = 0, .dmax = 10),
        RLVR_OPT("--json", RLVR_OPT_FLAG, &json, NULL),
        RLVR_OPT("--tests", RLVR_OPT_LIST, &tests, "GLOB"),
        RLVR_OPT(NULL, RLVR_OPT_STRING, &first, "REPO", .required = true),
        RLVR_OPT(NULL, RLVR_OPT_LIST, &rest, "DIR"),
        {0},
    };

    int rc = parse(opts, ARGS("repo", "--task", "t.json", "--runs=7", "--json", "--tests", "a*", "--tests", "b*",
                              "--temperature", "0", "d1", "d2"));
    CHECK_MSG(rc == RLVR_ARGS_CONTINUE, "rc %d: %s", rc, err_text);
    CHECK(task && strcmp(task, "t.json") == 0 && runs == 7 && runs_seen && json && temp == 0);
    CHECK(first && strcmp(first, "repo") == 0);
    CHECK(tests.n == 2 && strcmp(tests.items[1], "b*") == 0);
    CHECK(rest.n == 2 && strcmp(rest.items[0], "d1") == 0 && strcmp(rest.items[1], "d2") == 0);
    rlvr_opt_list_free(&tests);
    rlvr_opt_list_free(&rest);

    /* --help wins over everything else and goes to stdout */
    usage_calls = 0;
    CHECK(parse(opts, ARGS("--runs", "0", "--help")) == RLVR_EXIT_OK && usage_calls == 1 && !err_text[0]);
    /* after --, "--help" is an argument */
    CHECK(parse(opts, ARGS("--task", "x", "--", "--help")) == RLVR_ARGS_CONTINUE && strcmp(first, "--help") == 0);

    struct {
        const char **args;
        const char *message;
    } bad[] = {
        {ARGS("repo"), "rlvr demo: missing --task TASK\n"},
        {ARGS("--task", "x"), "rlvr demo: missing REPO\n"},
        {ARGS("repo", "--task"), "rlvr demo: --task TASK needs a value\n"},
        {ARGS("repo", "--task", "x", "--runs", "0"), "rlvr demo: --runs N wants an integer in 1..100, got \"0\"\n"},
        {ARGS("repo", "--task", "x", "--runs", "3x"), "rlvr demo: --runs N wants an integer in 1..100, got \"3x\"\n"},
        {ARGS("repo", "--task", "x", "--temperature", "nan"),
         "rlvr demo: --temperature T wants a number in 0..10, got \"nan\"\n"},
        {ARGS("repo", "--task", "x", "--tmperature", "1"), "rlvr demo: unknown option --tmperature\n"},
        {ARGS("repo", "--task", "x", "--json=1"), "rlvr demo: --json takes no value\n"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        usage_calls = 0;
        rc = parse(opts, bad[i].args);
        size_t len = strlen(bad[i].message);
        CHECK_MSG(rc == RLVR_EXIT_USAGE && strncmp(err_text, bad[i].message, len) == 0 &&
                      strstr(err_text + len, "usage: rlvr demo") == err_text + len && usage_calls == 1,
                  "case %zu: rc %d, stderr: %s", i, rc, err_text);
        rlvr_opt_list_free(&tests);
        rlvr_opt_list_free(&rest);
    }
    /* an extra positional when the table has no list */
    const rlvr_opt one[] = {RLVR_OPT(NULL, RLVR_OPT_STRING, &first, "FILE"), {0}};
    rc = parse(one, ARGS("a", "b"));
    CHECK_MSG(rc == RLVR_EXIT_USAGE && strncmp(err_text, "rlvr demo: unexpected argument \"b\"\n", 35) == 0, "%s",
              err_text);
    return test_summary("test_args");
}
