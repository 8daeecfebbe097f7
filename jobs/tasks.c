/* jobs/tasks.c — `rlvr tasks gen` (built-in task families, envs/gen.h),
 * `list` (load a pool, check split hygiene, summarise it), `check`
 * (validate every task in enclaves, write the validated-pool manifest;
 * envs/check.h), `mine` and `import swe-bench|harbor` (tasks from the
 * user's world, envs/sources.h): parse, call, print. */
#include "core/config.h"
#include "core/error.h"
#include "core/sys.h"
#include "enclave/config.h"
#include "envs/check.h"
#include "envs/gen.h"
#include "envs/pool.h"
#include "envs/sources.h"
#include "jobs/args.h"
#include "jobs/commands.h"
#include "jobs/schemas.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define P "       " /* under "usage: " */
static const char gen_syn[] = "rlvr tasks gen FAMILY --n N --seed S --out DIR [--split train|eval|regression]\n" P
                              "               [--difficulty 1|2|3] [--first I] [--compiler CC]\n",
                  list_syn[] = "rlvr tasks list POOL\n",
                  check_syn[] = "rlvr tasks check POOL [--json] [--runs N] [--seed S] [--jobs J] [--wall-s T]\n" P
                                "                 [--manifest PATH] [--config RUN.ini]\n",
                  mine_syn[] = "rlvr tasks mine REPO --out POOL [--facts FACTS.json] [--test-command CMD]\n" P
                               "                [--results tap|junit:PATH] [--environment IMAGE] [--tests GLOB]...\n" P
                               "                [--code GLOB]... [--since DATE] [--until DATE] [--max N]\n" P
                               "                [--eval-share F] [--runs N] [--name NAME] [--rev REV] [--seed S]\n" P
                               "                [--config RUN.ini]\n";
static const char gen_doc[] = "families: bugfix-c (multi-turn C bug fixing), bugfix-py (the same in Python), arith "
                              "(single-turn arithmetic)\n",
                  pool_doc[] = "A pool is a directory of *.json task specs or a .jsonl file (docs/TASKS.md).\n",
                  check_doc[] =
                      "check: the untouched repository must fail, the reference pass (with consensus), every\n"
                      "wrong patch fail; the reference runs N more times in shuffled orders (quarantine,\n"
                      "default 30). Broken, flaky and unjudgeable tasks are excluded; the manifest (default\n"
                      "POOL.manifest.json) records every verdict and the pool's content hash. --config: build\n"
                      "the sandboxes as the run's [sandbox] section says (system paths, uid, overlay), as its\n"
                      "training will. Exit status 0 when every task passed, 1 when some were excluded or the\n"
                      "check failed.\n",
                  mine_doc[] =
                      "mine: commits that change code and tests become tasks (the parent the base, the code part\n"
                      "the reference, the tests hidden), kept when the enclave finds FAIL_TO_PASS tests; the\n"
                      "newest --eval-share (default 0.2) become eval tasks. FACTS.json holds the repository's\n"
                      "facts (docs/TASKS.md \"Your own tasks\"); the flags replace its keys.\n";

static void usage(FILE *out) {
    fprintf(out, "usage: %s" P "%s" P "%s" P "%s" P "%s" P "%s\n%s%s%s%s%s%s", gen_syn, list_syn, check_syn, mine_syn,
            rlvr_tasks_import_synopsis[0], rlvr_tasks_import_synopsis[1], gen_doc, pool_doc, check_doc, mine_doc,
            rlvr_tasks_import_doc[0], rlvr_tasks_import_doc[1]);
}
static void gen_usage(FILE *out) { fprintf(out, "usage: %s%s", gen_syn, gen_doc); }
static void list_usage(FILE *out) { fprintf(out, "usage: %s%s", list_syn, pool_doc); }
static void check_usage(FILE *out) { fprintf(out, "usage: %s%s", check_syn, check_doc); }
static void mine_usage(FILE *out) { fprintf(out, "usage: %s%s", mine_syn, mine_doc); }

/* --split's value; a wrong one fails as a configuration error. */
static int split_of(const char *text, rlvr_split *out, const char *verb) {
    return text && rlvr_split_parse(text, out) < 0 ? rlvr_cmd_fail(verb, RLVR_ECONFIG) : RLVR_ARGS_CONTINUE;
}

static int cmd_gen(int argc, char **argv) {
    rlvr_task_gen_options o = RLVR_TASK_GEN_OPTIONS_INIT;
    const char *out = NULL, *split = NULL;
    int64_t n = 0, seed = 0, difficulty = o.difficulty, first = 0;
    bool have_seed = false;
    const rlvr_opt opts[] = {
        RLVR_OPT(NULL, RLVR_OPT_STRING, &o.family, "FAMILY", .required = true),
        RLVR_OPT("--n", RLVR_OPT_INT, &n, "N", .min = 1, .max = 1000000),
        RLVR_OPT("--seed", RLVR_OPT_INT, &seed, "S", .min = 0, .max = INT64_MAX, .seen = &have_seed),
        RLVR_OPT("--out", RLVR_OPT_STRING, &out, "DIR"),
        RLVR_OPT("--split", RLVR_OPT_STRING, &split, "SPLIT"),
        RLVR_OPT("--difficulty", RLVR_OPT_INT, &difficulty, "D", .min = 1, .max = 3),
        RLVR_OPT("--first", RLVR_OPT_INT, &first, "I", .min = 0, .max = UINT32_MAX),
        RLVR_OPT("--compiler", RLVR_OPT_STRING, &o.compiler, "CC"),
        {0},
    };
    int rc = rlvr_args_parse("tasks gen", opts, gen_usage, argc, argv);
    if (rc == RLVR_ARGS_CONTINUE && (!n || !have_seed || !out))
        rc = rlvr_args_error("tasks gen", gen_usage, "--n, --seed and --out are required");
    if (rc == RLVR_ARGS_CONTINUE) rc = split_of(split, &o.split, "tasks gen");
    if (rc != RLVR_ARGS_CONTINUE) return rc;
    o.count = n, o.seed = (uint64_t)seed, o.difficulty = (int)difficulty, o.first = first;
    bool known = false;
    for (const char *const *f = rlvr_task_families; *f; f++) known |= strcmp(*f, o.family) == 0;
    size_t written = 0;
    if ((rc = rlvr_task_gen(&o, out, &written)) < 0) {
        if (!known) return rlvr_cmd_fail("tasks gen", RLVR_ECONFIG);
        fprintf(stderr, "rlvr tasks gen: %zu task%s written before the error\n", written, written == 1 ? "" : "s");
        return rlvr_cmd_fail("tasks gen", rc);
    }
    printf("wrote %zu %s task%s (split %s, difficulty %d, seed %llu) to %s\n", written, o.family,
           written == 1 ? "" : "s", rlvr_split_name(o.split), o.difficulty, (unsigned long long)o.seed, out);
    return RLVR_EXIT_OK;
}

static int cmd_list(int argc, char **argv) {
    const char *path = NULL;
    const rlvr_opt opts[] = {RLVR_OPT(NULL, RLVR_OPT_STRING, &path, "POOL", .required = true), {0}};
    int parsed = rlvr_args_parse("tasks list", opts, list_usage, argc, argv);
    if (parsed != RLVR_ARGS_CONTINUE) return parsed;
    rlvr_task_pool *pool = NULL;
    size_t by_time = 0;
    int rc = rlvr_task_pool_load(&pool, path);
    if (rc == 0) rc = rlvr_task_pools_split_check((const rlvr_task_pool *const *)&pool, 1, &by_time);
    if (rc < 0) {
        rlvr_task_pool_free(pool);
        return rlvr_cmd_fail("tasks list", rc);
    }
    size_t n = rlvr_task_pool_size(pool);
    printf("%s: %zu task%s (train %zu, eval %zu, regression %zu); split hygiene ok", path, n, n == 1 ? "" : "s",
           rlvr_task_pool_count(pool, RLVR_SPLIT_TRAIN), rlvr_task_pool_count(pool, RLVR_SPLIT_EVAL),
           rlvr_task_pool_count(pool, RLVR_SPLIT_REGRESSION));
    if (by_time) printf(" (%zu key%s split by time)", by_time, by_time == 1 ? "" : "s");
    printf("\n");
    for (size_t i = 0; i < n; i++) {
        const rlvr_task *t = rlvr_task_pool_get(pool, i);
        printf("  %-40s %-10s %-10s %-18s %s\n", t->id, t->family, rlvr_split_name(t->split),
               t->template_name ? t->template_name : "-", t->split_key);
    }
    rlvr_task_pool_free(pool);
    return RLVR_EXIT_OK;
}

static int cmd_check(int argc, char **argv) {
    rlvr_task_check_options o = RLVR_TASK_CHECK_OPTIONS_INIT;
    const char *pool = NULL, *manifest = NULL, *config = NULL;
    bool json = false;
    int64_t runs = o.quarantine_runs, seed = (int64_t)o.seed, jobs = rlvr_physical_cores(), wall = 0;
    const rlvr_opt opts[] = {
        RLVR_OPT(NULL, RLVR_OPT_STRING, &pool, "POOL", .required = true),
        RLVR_OPT("--json", RLVR_OPT_FLAG, &json, NULL),
        RLVR_OPT("--runs", RLVR_OPT_INT, &runs, "N", .min = 1, .max = 100000),
        RLVR_OPT("--seed", RLVR_OPT_INT, &seed, "S", .min = 0, .max = INT64_MAX),
        RLVR_OPT("--jobs", RLVR_OPT_INT, &jobs, "J", .min = 1, .max = 4096),
        RLVR_OPT("--wall-s", RLVR_OPT_INT, &wall, "T", .min = 1, .max = 86400),
        RLVR_OPT("--manifest", RLVR_OPT_STRING, &manifest, "PATH"),
        RLVR_OPT("--config", RLVR_OPT_STRING, &config, "RUN.ini"),
        {0},
    };
    int parsed = rlvr_args_parse("tasks check", opts, check_usage, argc, argv);
    if (parsed != RLVR_ARGS_CONTINUE) return parsed;
    o.quarantine_runs = (int)runs, o.seed = (uint64_t)seed;
    if (wall) o.wall_s = (double)wall;
    char default_manifest[4096];
    rlvr_pool_manifest_default_path(default_manifest, sizeof default_manifest, pool);
    if (!manifest) manifest = default_manifest;
    size_t ok = 0, n = 0, tallied = 0, counts[RLVR_TASK_CHECK_STATUS_COUNT];
    uint64_t hash = 0;
    rlvr_sandbox_host_options ho = RLVR_SANDBOX_HOST_OPTIONS_INIT;
    rlvr_config *cfg = NULL;
    int rc = config ? rlvr_config_load(&cfg, config, rlvr_all_config_schemas) : 0;
    if (rc == 0 && cfg) rc = rlvr_sandbox_host_options_from_config(cfg, &ho);
    if (rc == 0) rc = rlvr_run_check_pool(pool, manifest, &o, &ho, (int)jobs, json, stdout, &ok, &n);
    rlvr_config_free(cfg);
    if (rc == 0) rc = rlvr_pool_manifest_tally(pool, manifest, counts, &tallied, &hash);
    if (rc < 0) return rlvr_cmd_fail("tasks check", rc);
    printf(json ? "{\"summary\": {\"tasks\": %zu, \"ok\": %zu, \"broken\": %zu, \"flaky\": %zu, \"infra\": %zu, "
                  "\"exploitable\": %zu}, \"manifest\": \"%s\", \"pool_hash\": \"%016llx\"}\n"
                : "checked %zu tasks: %zu ok, %zu broken, %zu flaky, %zu infra, %zu exploitable; manifest %s (pool "
                  "hash %016llx)\n",
           n, counts[0], counts[1], counts[2], counts[3], counts[4], manifest, (unsigned long long)hash);
    return counts[0] == n ? RLVR_EXIT_OK : RLVR_EXIT_FAILURE;
}

static void print_mine_table(const rlvr_mine_options *o, const rlvr_mine_summary *s, const char *out) {
    printf("\nmined %s: %lld commits examined, %lld candidates (code and tests), %lld kept in %.1f s\n", o->repo,
           (long long)s->examined, (long long)s->candidates, (long long)s->counts[RLVR_MINE_KEPT], s->wall_s);
    printf("  %-28s %8s\n", "outcome", "commits");
    printf("  %-28s %8lld\n", "candidates", (long long)s->candidates);
    printf("  %-28s %8lld\n", "kept", (long long)s->counts[RLVR_MINE_KEPT]);
    char label[64];
    for (int pre = 0; pre < 2; pre++)
        for (int k = 1; k < RLVR_MINE_OUTCOME_COUNT; k++)
            if (rlvr_mine_outcome_precheck((rlvr_mine_outcome)k) == (bool)pre) {
                snprintf(label, sizeof label, "%s%s", pre ? "not a candidate: " : "dropped: ",
                         rlvr_mine_outcome_name((rlvr_mine_outcome)k));
                printf("  %-28s %8lld\n", label, (long long)s->counts[k]);
            }
    char when[21] = "-";
    if (s->boundary) rlvr_task_time_format(s->boundary, when);
    printf("split by time: %lld train, %lld eval (eval from %s)\n", (long long)s->train, (long long)s->eval, when);
    printf("pool %s (report %s/mine-report.jsonl); next: rlvr tasks check %s\n", out, out, out);
}

static int cmd_mine(int argc, char **argv) {
    rlvr_mine_options o = RLVR_MINE_OPTIONS_INIT;
    rlvr_repo_facts_flags ff = {0};
    rlvr_opt_list tests = {0}, code = {0};
    const char *out = NULL, *facts_path = NULL, *config = NULL, *since = NULL, *until = NULL;
    int64_t max = o.max_tasks, runs = o.runs, seed = (int64_t)o.seed;
    const rlvr_opt opts[] = {
        RLVR_OPT(NULL, RLVR_OPT_STRING, &o.repo, "REPO", .required = true),
        RLVR_OPT("--out", RLVR_OPT_STRING, &out, "POOL", .required = true),
        RLVR_OPT("--facts", RLVR_OPT_STRING, &facts_path, "FACTS.json"),
        RLVR_OPT("--config", RLVR_OPT_STRING, &config, "RUN.ini"),
        RLVR_OPT("--test-command", RLVR_OPT_STRING, &ff.test_command, "CMD"),
        RLVR_OPT("--results", RLVR_OPT_STRING, &ff.results, "tap|junit:PATH"),
        RLVR_OPT("--environment", RLVR_OPT_STRING, &ff.environment, "IMAGE"),
        RLVR_OPT("--tests", RLVR_OPT_LIST, &tests, "GLOB"),
        RLVR_OPT("--code", RLVR_OPT_LIST, &code, "GLOB"),
        RLVR_OPT("--since", RLVR_OPT_STRING, &since, "DATE"),
        RLVR_OPT("--until", RLVR_OPT_STRING, &until, "DATE"),
        RLVR_OPT("--name", RLVR_OPT_STRING, &o.name, "NAME"),
        RLVR_OPT("--rev", RLVR_OPT_STRING, &o.rev, "REV"),
        RLVR_OPT("--max", RLVR_OPT_INT, &max, "N", .min = 1, .max = 1000000),
        RLVR_OPT("--runs", RLVR_OPT_INT, &runs, "N", .min = 2, .max = 100),
        RLVR_OPT("--seed", RLVR_OPT_INT, &seed, "S", .min = 0, .max = INT64_MAX),
        RLVR_OPT("--eval-share", RLVR_OPT_DOUBLE, &o.eval_share, "F", .dmin = 0, .dmax = 1),
        {0},
    };
    int rc = rlvr_args_parse("tasks mine", opts, mine_usage, argc, argv);
    const char *bad = rc != RLVR_ARGS_CONTINUE ? NULL
                      : since && rlvr_task_time_parse(since, &o.since) < 0 ? "--since"
                      : until && rlvr_task_time_parse(until, &o.until) < 0 ? "--until" : NULL;
    if (bad)
        rc = rlvr_args_error("tasks mine", mine_usage,
                             "%s wants a date (2019-03-04) or a UTC time (2019-03-04T12:30:00Z), got \"%s\"", bad,
                             bad[2] == 's' ? since : until);
    if (rc == RLVR_ARGS_CONTINUE) {
        o.max_tasks = (int)max, o.runs = (int)runs, o.seed = (uint64_t)seed, o.progress = stdout;
        ff.tests = tests.items, ff.n_tests = tests.n, ff.code = code.items, ff.n_code = code.n;
        rlvr_repo_facts facts;
        rlvr_sandbox_host *host = NULL;
        rlvr_mine_summary sum;
        rc = rlvr_repo_facts_load_flags(&facts, facts_path, &ff);
        if (rc == 0) {
            o.facts = &facts;
            rc = rlvr_sandbox_host_new_from_file(&host, config, rlvr_all_config_schemas);
            if (rc == 0) rc = rlvr_tasks_mine(&o, host, out, &sum);
            rlvr_sandbox_host_free(host);
            if (rc == 0) print_mine_table(&o, &sum, out);
            rlvr_repo_facts_free(&facts);
        }
        rc = rc < 0 ? rlvr_cmd_fail("tasks mine", rc) : sum.counts[RLVR_MINE_KEPT] > 0 ? RLVR_EXIT_OK : RLVR_EXIT_FAILURE;
    }
    rlvr_opt_list_free(&tests);
    rlvr_opt_list_free(&code);
    return rc;
}

int rlvr_cmd_tasks(int argc, char **argv) {
    static const struct {
        const char *name;
        int (*run)(int, char **);
    } subs[] = {{"gen", cmd_gen}, {"list", cmd_list}, {"check", cmd_check}, {"mine", cmd_mine}};
    const char *sub = argc > 1 ? argv[1] : "";
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
        if (strcmp(sub, subs[i].name) == 0) return subs[i].run(argc - 1, argv + 1);
    if (strcmp(sub, "import") == 0) return rlvr_cmd_tasks_import(argc - 1, argv + 1);
    if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0 || strcmp(sub, "help") == 0) {
        usage(stdout);
        return RLVR_EXIT_OK;
    }
    if (argc > 1) return rlvr_args_error("tasks", usage, "unknown subcommand \"%s\"", sub);
    return rlvr_args_error("tasks", usage, "missing the subcommand (gen, list, check, mine or import)");
}
