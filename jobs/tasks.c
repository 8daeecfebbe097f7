/* jobs/tasks.c — `rlvr tasks gen` (built-in task families), `rlvr tasks
 * list` (load a pool, check split hygiene, summarise it) and `rlvr tasks
 * check` (validate every task in enclaves, write the validated-pool
 * manifest). */
#include "core/config.h"
#include "core/error.h"
#include "core/sys.h"
#include "enclave/config.h"
#include "envs/check.h"
#include "envs/gen.h"
#include "envs/pool.h"
#include "envs/sources.h"
#include "jobs/commands.h"
#include "jobs/schemas.h"
#include "train/run.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out) {
    fprintf(out,
            "usage: rlvr tasks gen FAMILY --n N --seed S --out DIR [--split train|eval|regression]\n"
            "                      [--difficulty 1|2|3] [--first I] [--compiler CC]\n"
            "       rlvr tasks list POOL\n"
            "       rlvr tasks check POOL [--json] [--runs N] [--seed S] [--jobs J] [--wall-s T]\n"
            "                        [--manifest PATH] [--config RUN.ini]\n"
            "       rlvr tasks mine REPO --out POOL [--facts FACTS.json] [--test-command CMD]\n"
            "                       [--results tap|junit:PATH] [--environment IMAGE] [--tests GLOB]...\n"
            "                       [--code GLOB]... [--since DATE] [--until DATE] [--max N]\n"
            "                       [--eval-share F] [--runs N] [--name NAME] [--rev REV] [--seed S]\n"
            "                       [--config RUN.ini]\n"
            "       rlvr tasks import swe-bench FILE.jsonl --specs SPECS.json --repos DIR --out POOL\n"
            "                       [--split train|eval|regression] [--no-base-check] [--config RUN.ini]\n"
            "       rlvr tasks import harbor DIR... --out POOL [--image IMAGE] [--split S] [--config RUN.ini]\n"
            "\n"
            "families: bugfix-c (multi-turn C bug fixing), bugfix-py (the same in Python), arith (single-turn arithmetic)\n"
            "A pool is a directory of *.json task specs or a .jsonl file (docs/TASKS.md).\n"
            "check: the untouched repository must fail, the reference pass (with consensus), every\n"
            "wrong patch fail; the reference runs N more times in shuffled orders (quarantine,\n"
            "default 30). Broken, flaky and unjudgeable tasks are excluded; the manifest (default\n"
            "POOL.manifest.json) records every verdict and the pool's content hash. --config: build\n"
            "the sandboxes as the run's [sandbox] section says (system paths, uid, overlay), as its\n"
            "training will. Exit status 0 when every task passed, 1 when some were excluded or the\n"
            "check failed.\n"
            "mine: commits that change code and tests become tasks (the parent the base, the code part\n"
            "the reference, the tests hidden), kept when the enclave finds FAIL_TO_PASS tests; the\n"
            "newest --eval-share (default 0.2) become eval tasks. FACTS.json holds the repository's\n"
            "facts (docs/TASKS.md \"Your own tasks\"); the flags replace its keys.\n"
            "import swe-bench: SWE-bench instances (instance_id, repo, base_commit, patch, test_patch,\n"
            "FAIL_TO_PASS, PASS_TO_PASS, problem_statement); SPECS.json maps \"owner/name\" to its facts,\n"
            "DIR holds the repositories or bundles. Each instance runs once at its base (FAIL_TO_PASS\n"
            "must fail there); a bad instance is refused naming FILE:LINE and the field.\n"
            "import harbor: Harbor task directories (instruction.md, task.toml, tests/test.sh writing a\n"
            "reward file, solution/solve.sh run once to make the reference); a Dockerfile environment\n"
            "needs --image, the image built from it.\n");
}

static int cmd_gen(int argc, char **argv) {
    if (argc < 3) goto usage;
    rlvr_task_gen_options opts = RLVR_TASK_GEN_OPTIONS_INIT;
    opts.family = argv[2];
    const char *out = NULL;
    int have_n = 0, have_seed = 0;
    for (int i = 3; i < argc; i++) {
        const char *flag = argv[i];
        if (i + 1 >= argc) {
            fprintf(stderr, "rlvr tasks gen: %s needs a value\n", flag);
            goto usage;
        }
        const char *value = argv[++i];
        int64_t v;
        if (strcmp(flag, "--n") == 0) {
            if (rlvr_cmd_parse_int("tasks", flag, value, 1, 1000000, &v) < 0) return RLVR_EXIT_USAGE;
            opts.count = v;
            have_n = 1;
        } else if (strcmp(flag, "--seed") == 0) {
            char *end;
            errno = 0;
            unsigned long long seed = strtoull(value, &end, 10);
            if (errno || end == value || *end || value[0] == '-') {
                fprintf(stderr, "rlvr tasks gen: --seed wants a non-negative integer, got \"%s\"\n", value);
                return RLVR_EXIT_USAGE;
            }
            opts.seed = seed;
            have_seed = 1;
        } else if (strcmp(flag, "--out") == 0) {
            out = value;
        } else if (strcmp(flag, "--split") == 0) {
            if (rlvr_split_parse(value, &opts.split) < 0) return rlvr_cmd_fail("tasks gen", RLVR_ECONFIG);
        } else if (strcmp(flag, "--difficulty") == 0) {
            if (rlvr_cmd_parse_int("tasks", flag, value, 1, 3, &v) < 0) return RLVR_EXIT_USAGE;
            opts.difficulty = (int)v;
        } else if (strcmp(flag, "--compiler") == 0) {
            opts.compiler = value;
        } else if (strcmp(flag, "--first") == 0) {
            if (rlvr_cmd_parse_int("tasks", flag, value, 0, UINT32_MAX, &v) < 0) return RLVR_EXIT_USAGE;
            opts.first = v;
        } else {
            fprintf(stderr, "rlvr tasks gen: unknown option %s\n", flag);
            goto usage;
        }
    }
    if (!have_n || !have_seed || !out) {
        fprintf(stderr, "rlvr tasks gen: --n, --seed and --out are required\n");
        goto usage;
    }
    const char *known = NULL;
    for (const char *const *f = rlvr_task_families; *f; f++)
        if (strcmp(*f, opts.family) == 0) known = *f;
    size_t written = 0;
    int rc = rlvr_task_gen(&opts, out, &written);
    if (rc < 0) {
        if (!known) return rlvr_cmd_fail("tasks gen", RLVR_ECONFIG);
        fprintf(stderr, "rlvr tasks gen: %zu task%s written before the error\n", written, written == 1 ? "" : "s");
        return rlvr_cmd_fail("tasks gen", rc);
    }
    printf("wrote %zu %s task%s (split %s, difficulty %d, seed %llu) to %s\n", written, opts.family,
           written == 1 ? "" : "s", rlvr_split_name(opts.split), opts.difficulty, (unsigned long long)opts.seed, out);
    return RLVR_EXIT_OK;
usage:
    usage(stderr);
    return RLVR_EXIT_USAGE;
}

static int cmd_list(int argc, char **argv) {
    if (argc != 3) {
        usage(stderr);
        return RLVR_EXIT_USAGE;
    }
    rlvr_task_pool *pool;
    int rc = rlvr_task_pool_load(&pool, argv[2]);
    if (rc < 0) return rlvr_cmd_fail("tasks list", rc);
    size_t by_time = 0;
    rc = rlvr_task_pools_split_check((const rlvr_task_pool *const *)&pool, 1, &by_time);
    if (rc < 0) {
        rlvr_task_pool_free(pool);
        return rlvr_cmd_fail("tasks list", rc);
    }
    size_t n = rlvr_task_pool_size(pool);
    printf("%s: %zu task%s (train %zu, eval %zu, regression %zu); split hygiene ok", argv[2], n, n == 1 ? "" : "s",
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

/* ---- tasks check ---------------------------------------------------------------- */

static int check_parse_args(int argc, char **argv, rlvr_task_check_options *opts, bool *json, int *jobs,
                            const char **manifest, const char **config) {
    for (int i = 3; i < argc; i++) {
        const char *flag = argv[i];
        if (strcmp(flag, "--json") == 0) {
            *json = true;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "rlvr tasks check: %s needs a value\n", flag);
            return -1;
        }
        const char *value = argv[++i];
        int64_t v;
        if (strcmp(flag, "--runs") == 0) {
            if (rlvr_cmd_parse_int("tasks", flag, value, 1, 100000, &v) < 0) return -1;
            opts->quarantine_runs = (int)v;
        } else if (strcmp(flag, "--seed") == 0) {
            if (rlvr_cmd_parse_int("tasks", flag, value, 0, INT64_MAX, &v) < 0) return -1;
            opts->seed = (uint64_t)v;
        } else if (strcmp(flag, "--jobs") == 0) {
            if (rlvr_cmd_parse_int("tasks", flag, value, 1, 4096, &v) < 0) return -1;
            *jobs = (int)v;
        } else if (strcmp(flag, "--wall-s") == 0) {
            if (rlvr_cmd_parse_int("tasks", flag, value, 1, 86400, &v) < 0) return -1;
            opts->wall_s = (double)v;
        } else if (strcmp(flag, "--manifest") == 0) {
            *manifest = value;
        } else if (strcmp(flag, "--config") == 0) {
            *config = value;
        } else {
            fprintf(stderr, "rlvr tasks check: unknown option %s\n", flag);
            return -1;
        }
    }
    return 0;
}

static int cmd_check(int argc, char **argv) {
    if (argc < 3 || argv[2][0] == '-') {
        usage(stderr);
        return RLVR_EXIT_USAGE;
    }
    rlvr_task_check_options opts = RLVR_TASK_CHECK_OPTIONS_INIT;
    bool json = false;
    int jobs = rlvr_physical_cores();
    const char *manifest = NULL, *config = NULL;
    if (check_parse_args(argc, argv, &opts, &json, &jobs, &manifest, &config) < 0) {
        usage(stderr);
        return RLVR_EXIT_USAGE;
    }
    char default_manifest[4096];
    rlvr_pool_manifest_default_path(default_manifest, sizeof default_manifest, argv[2]);
    if (!manifest) manifest = default_manifest;

    size_t ok = 0, n = 0;
    rlvr_sandbox_host_options host_options = RLVR_SANDBOX_HOST_OPTIONS_INIT;
    rlvr_config *cfg = NULL;
    int rc = config ? rlvr_config_load(&cfg, config, rlvr_all_config_schemas) : 0;
    if (rc == 0 && cfg) rc = rlvr_sandbox_host_options_from_config(cfg, &host_options);
    if (rc == 0) rc = rlvr_run_check_pool(argv[2], manifest, &opts, &host_options, jobs, json, stdout, &ok, &n);
    rlvr_config_free(cfg);
    if (rc < 0) return rlvr_cmd_fail("tasks check", rc);
    rlvr_pool_manifest *m = NULL;
    rlvr_task_pool *pool = NULL;
    uint64_t hash = 0;
    size_t counts[RLVR_TASK_CHECK_STATUS_COUNT] = {0};
    rc = rlvr_task_pool_load(&pool, argv[2]);
    if (rc == 0) rc = rlvr_pool_manifest_load(&m, manifest, pool);
    if (rc == 0) rc = rlvr_task_pool_hash(pool, &hash);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rlvr_task_check_status st;
        rc = rlvr_pool_manifest_status(m, rlvr_task_pool_get(pool, i)->id, &st);
        if (rc == 0) counts[st]++;
    }
    rlvr_pool_manifest_free(m);
    rlvr_task_pool_free(pool);
    if (rc < 0) return rlvr_cmd_fail("tasks check", rc);
    if (json)
        printf("{\"summary\": {\"tasks\": %zu, \"ok\": %zu, \"broken\": %zu, \"flaky\": %zu, \"infra\": %zu, "
               "\"exploitable\": %zu}, \"manifest\": \"%s\", \"pool_hash\": \"%016llx\"}\n",
               n, counts[0], counts[1], counts[2], counts[3], counts[4], manifest, (unsigned long long)hash);
    else
        printf("checked %zu tasks: %zu ok, %zu broken, %zu flaky, %zu infra, %zu exploitable; manifest %s (pool hash "
               "%016llx)\n",
               n, counts[0], counts[1], counts[2], counts[3], counts[4], manifest, (unsigned long long)hash);
    return counts[0] == n ? RLVR_EXIT_OK : RLVR_EXIT_FAILURE;
}

/* ---- tasks mine ------------------------------------------------------------------- */

static int host_from(const char *config, rlvr_sandbox_host **host);

typedef struct {
    const char *out, *facts, *config;
    json_t *overrides; /* facts given as flags */
    rlvr_mine_options opts;
} mine_args;

static int parse_time_flag(const char *flag, const char *value, int64_t *out) {
    if (rlvr_task_time_parse(value, out) == 0) return 0;
    fprintf(stderr, "rlvr tasks mine: %s wants a date (2019-03-04) or a UTC time (2019-03-04T12:30:00Z), got \"%s\"\n",
            flag, value);
    return -1;
}

static int add_glob(json_t *overrides, const char *key, const char *value) {
    json_t *a = json_object_get(overrides, key);
    if (!a) json_object_set_new(overrides, key, a = json_array());
    return json_array_append_new(a, json_string(value));
}

static int results_flag(json_t *overrides, const char *value) {
    if (strcmp(value, "tap") == 0) return json_object_set_new(overrides, "results", json_string("tap"));
    if (strncmp(value, "junit:", 6) == 0 && value[6])
        return json_object_set_new(overrides, "results", json_pack("{s:s, s:s}", "format", "junit", "path", value + 6));
    fprintf(stderr, "rlvr tasks mine: --results wants tap or junit:PATH, got \"%s\"\n", value);
    return -1;
}

static int mine_flag(mine_args *a, const char *flag, const char *value) {
    int64_t v;
    if (strcmp(flag, "--out") == 0) a->out = value;
    else if (strcmp(flag, "--facts") == 0) a->facts = value;
    else if (strcmp(flag, "--config") == 0) a->config = value;
    else if (strcmp(flag, "--test-command") == 0) json_object_set_new(a->overrides, "test_command", json_string(value));
    else if (strcmp(flag, "--environment") == 0) {
        char *real = realpath(value, NULL);
        json_object_set_new(a->overrides, "environment", json_string(real ? real : value));
        free(real);
    } else if (strcmp(flag, "--results") == 0) return results_flag(a->overrides, value);
    else if (strcmp(flag, "--tests") == 0) return add_glob(a->overrides, "tests", value);
    else if (strcmp(flag, "--code") == 0) return add_glob(a->overrides, "code", value);
    else if (strcmp(flag, "--since") == 0) return parse_time_flag(flag, value, &a->opts.since);
    else if (strcmp(flag, "--until") == 0) return parse_time_flag(flag, value, &a->opts.until);
    else if (strcmp(flag, "--name") == 0) a->opts.name = value;
    else if (strcmp(flag, "--rev") == 0) a->opts.rev = value;
    else if (strcmp(flag, "--max") == 0) {
        if (rlvr_cmd_parse_int("tasks", flag, value, 1, 1000000, &v) < 0) return -1;
        a->opts.max_tasks = (int)v;
    } else if (strcmp(flag, "--runs") == 0) {
        if (rlvr_cmd_parse_int("tasks", flag, value, 2, 100, &v) < 0) return -1;
        a->opts.runs = (int)v;
    } else if (strcmp(flag, "--seed") == 0) {
        if (rlvr_cmd_parse_int("tasks", flag, value, 0, INT64_MAX, &v) < 0) return -1;
        a->opts.seed = (uint64_t)v;
    } else if (strcmp(flag, "--eval-share") == 0) {
        char *end;
        double f = strtod(value, &end);
        if (end == value || *end || !(f >= 0 && f <= 1)) {
            fprintf(stderr, "rlvr tasks mine: --eval-share wants a number in [0, 1], got \"%s\"\n", value);
            return -1;
        }
        a->opts.eval_share = f;
    } else {
        fprintf(stderr, "rlvr tasks mine: unknown option %s\n", flag);
        return -1;
    }
    return 0;
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
    if (argc < 3 || argv[2][0] == '-') goto usage;
    mine_args a = {.opts = RLVR_MINE_OPTIONS_INIT, .overrides = json_object()};
    a.opts.repo = argv[2];
    a.opts.progress = stdout;
    for (int i = 3; i < argc; i++) {
        if (i + 1 >= argc) {
            fprintf(stderr, "rlvr tasks mine: %s needs a value\n", argv[i]);
            json_decref(a.overrides);
            goto usage;
        }
        if (mine_flag(&a, argv[i], argv[i + 1]) < 0) {
            json_decref(a.overrides);
            goto usage;
        }
        i++;
    }
    if (!a.out) {
        fprintf(stderr, "rlvr tasks mine: missing --out POOL\n");
        json_decref(a.overrides);
        goto usage;
    }
    rlvr_repo_facts facts;
    char *over = json_dumps(a.overrides, JSON_COMPACT);
    json_decref(a.overrides);
    int rc = rlvr_repo_facts_load_merged(&facts, a.facts, over);
    free(over);
    if (rc < 0) return rlvr_cmd_fail("tasks mine", rc);
    a.opts.facts = &facts;
    rlvr_sandbox_host *host = NULL;
    rlvr_mine_summary sum;
    rc = host_from(a.config, &host);
    if (rc == 0) rc = rlvr_tasks_mine(&a.opts, host, a.out, &sum);
    rlvr_sandbox_host_free(host);
    if (rc == 0) print_mine_table(&a.opts, &sum, a.out);
    rlvr_repo_facts_free(&facts);
    if (rc < 0) return rlvr_cmd_fail("tasks mine", rc);
    return sum.counts[RLVR_MINE_KEPT] > 0 ? RLVR_EXIT_OK : RLVR_EXIT_FAILURE;
usage:
    usage(stderr);
    return RLVR_EXIT_USAGE;
}

/* ---- tasks import ------------------------------------------------------------------ */

/* The sandbox host a run file's [sandbox] section describes (or the default). */
static int host_from(const char *config, rlvr_sandbox_host **host) {
    rlvr_sandbox_host_options host_options = RLVR_SANDBOX_HOST_OPTIONS_INIT;
    rlvr_config *cfg = NULL;
    int rc = config ? rlvr_config_load(&cfg, config, rlvr_all_config_schemas) : 0;
    if (rc == 0 && cfg) rc = rlvr_sandbox_host_options_from_config(cfg, &host_options);
    if (rc == 0) rc = rlvr_sandbox_host_new(host, &host_options);
    rlvr_config_free(cfg);
    return rc;
}

static int import_done(const char *what, int rc, const rlvr_import_summary *s, const char *out) {
    if (rc < 0) return rlvr_cmd_fail(what, rc);
    printf("%s: %lld read, %lld imported, %lld refused in %.1f s; pool %s; next: rlvr tasks check %s\n", what,
           (long long)s->read, (long long)s->imported, (long long)s->refused, s->wall_s, out, out);
    return s->refused == 0 && s->imported > 0 ? RLVR_EXIT_OK : RLVR_EXIT_FAILURE;
}

static int cmd_import_swe(int argc, char **argv) {
    if (argc < 4 || argv[3][0] == '-') goto usage;
    rlvr_swe_import_options o = RLVR_SWE_IMPORT_OPTIONS_INIT;
    o.jsonl = argv[3];
    o.progress = stdout;
    const char *out = NULL, *config = NULL;
    for (int i = 4; i < argc; i++) {
        if (strcmp(argv[i], "--no-base-check") == 0) {
            o.check_base = false;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "rlvr tasks import swe-bench: %s needs a value\n", argv[i]);
            goto usage;
        }
        const char *flag = argv[i], *value = argv[++i];
        if (strcmp(flag, "--specs") == 0) o.specs = value;
        else if (strcmp(flag, "--repos") == 0) o.repos_dir = value;
        else if (strcmp(flag, "--out") == 0) out = value;
        else if (strcmp(flag, "--config") == 0) config = value;
        else if (strcmp(flag, "--split") == 0) {
            if (rlvr_split_parse(value, &o.split) < 0) return rlvr_cmd_fail("tasks import swe-bench", RLVR_ECONFIG);
        } else {
            fprintf(stderr, "rlvr tasks import swe-bench: unknown option %s\n", flag);
            goto usage;
        }
    }
    if (!out || !o.specs || !o.repos_dir) {
        fprintf(stderr, "rlvr tasks import swe-bench: missing %s\n",
                !o.specs ? "--specs SPECS.json" : !o.repos_dir ? "--repos DIR" : "--out POOL");
        goto usage;
    }
    rlvr_sandbox_host *host = NULL;
    rlvr_import_summary sum = {0};
    int rc = o.check_base ? host_from(config, &host) : 0;
    if (rc == 0) rc = rlvr_tasks_import_swe(&o, host, out, &sum);
    rlvr_sandbox_host_free(host);
    return import_done("tasks import swe-bench", rc, &sum, out);
usage:
    usage(stderr);
    return RLVR_EXIT_USAGE;
}

static int cmd_import_harbor(int argc, char **argv) {
    rlvr_harbor_import_options o = RLVR_HARBOR_IMPORT_OPTIONS_INIT;
    o.progress = stdout;
    const char *out = NULL, *config = NULL;
    const char **dirs = calloc((size_t)argc, sizeof *dirs);
    size_t n = 0;
    if (!dirs) return rlvr_cmd_fail("tasks import harbor", RLVR_ENOMEM);
    for (int i = 3; i < argc; i++) {
        if (argv[i][0] != '-') {
            dirs[n++] = argv[i];
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "rlvr tasks import harbor: %s needs a value\n", argv[i]);
            goto usage;
        }
        const char *flag = argv[i], *value = argv[++i];
        if (strcmp(flag, "--out") == 0) out = value;
        else if (strcmp(flag, "--image") == 0) o.image = value;
        else if (strcmp(flag, "--config") == 0) config = value;
        else if (strcmp(flag, "--split") == 0) {
            if (rlvr_split_parse(value, &o.split) < 0) {
                free(dirs);
                return rlvr_cmd_fail("tasks import harbor", RLVR_ECONFIG);
            }
        } else {
            fprintf(stderr, "rlvr tasks import harbor: unknown option %s\n", flag);
            goto usage;
        }
    }
    if (!out || n == 0) {
        fprintf(stderr, "rlvr tasks import harbor: missing %s\n", n == 0 ? "a task directory" : "--out POOL");
        goto usage;
    }
    char *image = o.image ? realpath(o.image, NULL) : NULL;
    if (o.image && !image) {
        fprintf(stderr, "rlvr tasks import harbor: --image %s: %s\n", o.image, strerror(errno));
        free(dirs);
        return RLVR_EXIT_USAGE;
    }
    o.image = image;
    o.dirs = dirs;
    rlvr_sandbox_host *host = NULL;
    rlvr_import_summary sum = {0};
    int rc = host_from(config, &host);
    if (rc == 0) rc = rlvr_tasks_import_harbor(&o, host, out, &sum);
    rlvr_sandbox_host_free(host);
    free(image);
    free(dirs);
    return import_done("tasks import harbor", rc, &sum, out);
usage:
    free(dirs);
    usage(stderr);
    return RLVR_EXIT_USAGE;
}

static int cmd_import(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[2], "swe-bench") == 0) return cmd_import_swe(argc, argv);
    if (argc >= 3 && strcmp(argv[2], "harbor") == 0) return cmd_import_harbor(argc, argv);
    fprintf(stderr, "rlvr tasks import: the source is swe-bench or harbor%s%s\n", argc >= 3 ? ", not " : "",
            argc >= 3 ? argv[2] : "");
    usage(stderr);
    return RLVR_EXIT_USAGE;
}

int rlvr_cmd_tasks(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "gen") == 0) return cmd_gen(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "list") == 0) return cmd_list(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "check") == 0) return cmd_check(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "mine") == 0) return cmd_mine(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "import") == 0) return cmd_import(argc, argv);
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0)) {
        usage(stdout);
        return RLVR_EXIT_OK;
    }
    usage(stderr);
    return RLVR_EXIT_USAGE;
}
