/* jobs/tasks_import.c — `rlvr tasks import swe-bench|harbor`: tasks from
 * SWE-bench instances and Harbor task directories (envs/sources.h): parse,
 * call, print. */
#include "core/error.h"
#include "enclave/config.h"
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
const char *const rlvr_tasks_import_synopsis[2] = {
    "rlvr tasks import swe-bench FILE.jsonl --specs SPECS.json --repos DIR --out POOL\n" P
    "                [--split train|eval|regression] [--no-base-check] [--config RUN.ini]\n",
    "rlvr tasks import harbor DIR... --out POOL [--image IMAGE] [--split S] [--config RUN.ini]\n",
};
const char *const rlvr_tasks_import_doc[2] = {
    "import swe-bench: SWE-bench instances (instance_id, repo, base_commit, patch, test_patch,\n"
    "FAIL_TO_PASS, PASS_TO_PASS, problem_statement); SPECS.json maps \"owner/name\" to its facts,\n"
    "DIR holds the repositories or bundles. Each instance runs once at its base (FAIL_TO_PASS\n"
    "must fail there); a bad instance is refused naming FILE:LINE and the field.\n",
    "import harbor: Harbor task directories (instruction.md, task.toml, tests/test.sh writing a\n"
    "reward file, solution/solve.sh run once to make the reference); a Dockerfile environment\n"
    "needs --image, the image built from it.\n",
};

static void swe_usage(FILE *out) {
    fprintf(out, "usage: %s%s", rlvr_tasks_import_synopsis[0], rlvr_tasks_import_doc[0]);
}
static void harbor_usage(FILE *out) {
    fprintf(out, "usage: %s%s", rlvr_tasks_import_synopsis[1], rlvr_tasks_import_doc[1]);
}
static void usage(FILE *out) {
    fprintf(out, "usage: %s" P "%s\n%s%s", rlvr_tasks_import_synopsis[0], rlvr_tasks_import_synopsis[1],
            rlvr_tasks_import_doc[0], rlvr_tasks_import_doc[1]);
}

/* --split's value; a wrong one fails as a configuration error. */
static int split_of(const char *text, rlvr_split *out, const char *verb) {
    return text && rlvr_split_parse(text, out) < 0 ? rlvr_cmd_fail(verb, RLVR_ECONFIG) : RLVR_ARGS_CONTINUE;
}

static int import_done(const char *what, int rc, const rlvr_import_summary *s, const char *out) {
    if (rc < 0) return rlvr_cmd_fail(what, rc);
    printf("%s: %lld read, %lld imported, %lld refused in %.1f s; pool %s; next: rlvr tasks check %s\n", what,
           (long long)s->read, (long long)s->imported, (long long)s->refused, s->wall_s, out, out);
    return s->refused == 0 && s->imported > 0 ? RLVR_EXIT_OK : RLVR_EXIT_FAILURE;
}

static int cmd_import_swe(int argc, char **argv) {
    rlvr_swe_import_options o = RLVR_SWE_IMPORT_OPTIONS_INIT;
    const char *out = NULL, *config = NULL, *split = NULL;
    bool no_base_check = false;
    const rlvr_opt opts[] = {
        RLVR_OPT(NULL, RLVR_OPT_STRING, &o.jsonl, "FILE.jsonl", .required = true),
        RLVR_OPT("--specs", RLVR_OPT_STRING, &o.specs, "SPECS.json", .required = true),
        RLVR_OPT("--repos", RLVR_OPT_STRING, &o.repos_dir, "DIR", .required = true),
        RLVR_OPT("--out", RLVR_OPT_STRING, &out, "POOL", .required = true),
        RLVR_OPT("--split", RLVR_OPT_STRING, &split, "SPLIT"),
        RLVR_OPT("--no-base-check", RLVR_OPT_FLAG, &no_base_check, NULL),
        RLVR_OPT("--config", RLVR_OPT_STRING, &config, "RUN.ini"),
        {0},
    };
    int rc = rlvr_args_parse("tasks import swe-bench", opts, swe_usage, argc, argv);
    if (rc == RLVR_ARGS_CONTINUE) rc = split_of(split, &o.split, "tasks import swe-bench");
    if (rc != RLVR_ARGS_CONTINUE) return rc;
    o.check_base = !no_base_check;
    o.progress = stdout;
    rlvr_sandbox_host *host = NULL;
    rlvr_import_summary sum = {0};
    rc = o.check_base ? rlvr_sandbox_host_new_from_file(&host, config, rlvr_all_config_schemas) : 0;
    if (rc == 0) rc = rlvr_tasks_import_swe(&o, host, out, &sum);
    rlvr_sandbox_host_free(host);
    return import_done("tasks import swe-bench", rc, &sum, out);
}

static int cmd_import_harbor(int argc, char **argv) {
    rlvr_harbor_import_options o = RLVR_HARBOR_IMPORT_OPTIONS_INIT;
    const char *out = NULL, *config = NULL, *split = NULL;
    rlvr_opt_list dirs = {0};
    const rlvr_opt opts[] = {
        RLVR_OPT(NULL, RLVR_OPT_LIST, &dirs, "DIR", .required = true),
        RLVR_OPT("--out", RLVR_OPT_STRING, &out, "POOL", .required = true),
        RLVR_OPT("--image", RLVR_OPT_STRING, &o.image, "IMAGE"),
        RLVR_OPT("--split", RLVR_OPT_STRING, &split, "S"),
        RLVR_OPT("--config", RLVR_OPT_STRING, &config, "RUN.ini"),
        {0},
    };
    int rc = rlvr_args_parse("tasks import harbor", opts, harbor_usage, argc, argv);
    if (rc == RLVR_ARGS_CONTINUE) rc = split_of(split, &o.split, "tasks import harbor");
    const char **list = NULL; /* the directories, NULL-terminated for the library */
    if (rc == RLVR_ARGS_CONTINUE && !(list = calloc(dirs.n + 1, sizeof *list)))
        rc = rlvr_cmd_fail("tasks import harbor", RLVR_ENOMEM);
    for (size_t i = 0; list && i < dirs.n; i++) list[i] = dirs.items[i];
    char *image = rc == RLVR_ARGS_CONTINUE && o.image ? realpath(o.image, NULL) : NULL;
    if (rc == RLVR_ARGS_CONTINUE && o.image && !image) {
        fprintf(stderr, "rlvr tasks import harbor: --image %s: %s\n", o.image, strerror(errno));
        rc = RLVR_EXIT_USAGE;
    }
    if (rc == RLVR_ARGS_CONTINUE) {
        o.image = image, o.dirs = list, o.progress = stdout;
        rlvr_sandbox_host *host = NULL;
        rlvr_import_summary sum = {0};
        rc = rlvr_sandbox_host_new_from_file(&host, config, rlvr_all_config_schemas);
        if (rc == 0) rc = rlvr_tasks_import_harbor(&o, host, out, &sum);
        rlvr_sandbox_host_free(host);
        rc = import_done("tasks import harbor", rc, &sum, out);
    }
    free(image);
    free(list);
    rlvr_opt_list_free(&dirs);
    return rc;
}

int rlvr_cmd_tasks_import(int argc, char **argv) {
    const char *source = argc > 1 ? argv[1] : "";
    if (strcmp(source, "swe-bench") == 0) return cmd_import_swe(argc - 1, argv + 1);
    if (strcmp(source, "harbor") == 0) return cmd_import_harbor(argc - 1, argv + 1);
    if (strcmp(source, "--help") == 0 || strcmp(source, "-h") == 0) {
        usage(stdout);
        return RLVR_EXIT_OK;
    }
    if (argc > 1) return rlvr_args_error("tasks import", usage, "unknown source \"%s\" (swe-bench or harbor)", source);
    return rlvr_args_error("tasks import", usage, "missing the source (swe-bench or harbor)");
}
