/* Mining real history (envs/sources.h): cachetools (pytest, JUnit) and inih
 * (C, TAP), from the bundles in tests/data/repos.
 *
 * - Named commits of the real histories end as they must: a test-only, a
 *   docs-only, a code-only and a packaging-only commit are no candidates;
 *   commits that break the build on this Python, or whose tests still fail
 *   after the fix, are dropped; known fixes are kept.
 * - The pool loads, its split is by time (every train task's fix older than
 *   every eval task's) and split hygiene accepts it; prompts hold the
 *   commit message and nothing of the diff.
 * - The future is scrubbed: the task's repository holds no object of the
 *   fix or of any later commit, no other ref, no reflog; and a script in the
 *   task's workspace that tries every way git has (log --all, cat-file of
 *   each later id, fsck --lost-found, reflog, packed-refs, FETCH_HEAD,
 *   ORIG_HEAD, the object directory by hash, the packs) finds nothing. The
 *   same script over a plain clone finds the fix (its control).
 * - `rlvr tasks check` on a kept task refuses it for the one thing command
 *   mode cannot hold (the hidden tests are readable at run time) and for
 *   nothing else. */
#include "enclave/gitrepo.h"
#include "enclave/sandbox.h"
#include "enclave/workspace.h"
#include "envs/check.h"
#include "envs/history.h"
#include "envs/pool.h"
#include "envs/sources.h"
#include "envs_test.h"
#include "test.h"

#include <jansson.h>

static rlvr_sandbox_host *host;
static char *dir;

/* unittest.sh writes tests/baseline_*.txt; each one that equals the
 * committed file is a passing test (TAP), the results descriptor closed
 * for everything the build runs */
static const char inih_facts[] =
    "{\"test_command\": \"top=$PWD; rm -rf /tmp/t && cp -R \\\"$top\\\" /tmp/t && (cd /tmp/t/tests && CC=cc bash "
    "./unittest.sh) >/dev/null 2>&1 3>&-; n=0; for f in tests/baseline_*.txt; do n=$((n+1)); b=${f#tests/}; if cmp "
    "-s \\\"$f\\\" \\\"/tmp/t/$f\\\"; then echo \\\"ok $n - ${b%.txt}\\\"; else echo \\\"not ok $n - ${b%.txt}\\\"; fi; "
    "done >&3; echo \\\"1..$n\\\" >&3\","
    " \"tests\": [\"/tests\"], \"code\": [\"/ini.c\", \"/ini.h\"]}";

static char *bundle_path(const char *name) {
    char rel[256], *p = malloc(4096);
    snprintf(rel, sizeof rel, "tests/data/repos/%s.bundle", name);
    test_source_path(p, 4096, rel);
    return p;
}

static int64_t when(const char *date) {
    int64_t t = 0;
    CHECK(rlvr_task_time_parse(date, &t) == 0);
    return t;
}

/* The outcome the report gives the commit whose id starts with `prefix`. */
static const char *outcome_of(json_t *report, const char *prefix) {
    size_t i;
    json_t *line;
    json_array_foreach(report, i, line) {
        const char *c = json_string_value(json_object_get(line, "commit"));
        if (c && strncmp(c, prefix, strlen(prefix)) == 0) return json_string_value(json_object_get(line, "outcome"));
    }
    return "(absent)";
}

static json_t *read_report(const char *pool) {
    char path[8192];
    snprintf(path, sizeof path, "%s/mine-report.jsonl", pool);
    json_t *all = json_array();
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    char line[8192];
    while (f && fgets(line, sizeof line, f)) json_array_append_new(all, json_loads(line, 0, NULL));
    if (f) fclose(f);
    return all;
}

static void expect_outcome(json_t *report, const char *prefix, const char *outcome, const char *what) {
    const char *got = outcome_of(report, prefix);
    CHECK_MSG(strcmp(got, outcome) == 0, "commit %s (%s): outcome %s, expected %s", prefix, what, got, outcome);
}

/* facts_json: the facts as text; NULL: tests/data/repos/NAME.facts.json for the bundle's NAME */
static int mine(const char *repo, const char *facts_json, const char *out, int64_t since, int64_t until,
                rlvr_mine_summary *sum) {
    rlvr_repo_facts facts;
    char path[8192];
    snprintf(path, sizeof path, "%.*s.facts.json", (int)(strlen(repo) - strlen(".bundle")), repo);
    int rc = facts_json ? rlvr_repo_facts_parse(&facts, facts_json, "test facts", ".")
                        : rlvr_repo_facts_load(&facts, path);
    CHECK_MSG(rc == 0, "facts: %s", rlvr_error_last());
    if (rc) return rc;
    rlvr_mine_options o = RLVR_MINE_OPTIONS_INIT;
    o.repo = repo;
    o.facts = &facts;
    o.since = since;
    o.until = until;
    o.eval_share = 0.25;
    o.progress = stdout;
    rc = rlvr_tasks_mine(&o, host, out, sum);
    CHECK_MSG(rc == 0, "mine %s: %s", repo, rlvr_error_last());
    rlvr_repo_facts_free(&facts);
    return rc;
}

/* Every train task is older than every eval task, and hygiene says so. */
static void check_time_split(const char *pool_dir, size_t min_tasks) {
    rlvr_task_pool *pool = NULL;
    CHECK_OK(rlvr_task_pool_load(&pool, pool_dir));
    if (!pool) return;
    size_t n = rlvr_task_pool_size(pool), by_time = 0;
    CHECK_MSG(n >= min_tasks, "%s: %zu tasks kept, expected at least %zu", pool_dir, n, min_tasks);
    CHECK_OK(rlvr_task_pools_split_check((const rlvr_task_pool *const *)&pool, 1, &by_time));
    CHECK(by_time == 1);
    int64_t newest_train = 0, oldest_eval = INT64_MAX;
    for (size_t i = 0; i < n; i++) {
        const rlvr_task *t = rlvr_task_pool_get(pool, i);
        CHECK(t->has_created_at && strcmp(t->family, "mined") == 0);
        if (t->split == RLVR_SPLIT_TRAIN && t->created_at > newest_train) newest_train = t->created_at;
        if (t->split == RLVR_SPLIT_EVAL && t->created_at < oldest_eval) oldest_eval = t->created_at;
        /* the prompt is the commit message: no line the fix adds */
        const char *p = t->reference_patch;
        while ((p = strstr(p, "\n+"))) {
            p += 2;
            const char *e = strchr(p, '\n');
            size_t len = e ? (size_t)(e - p) : strlen(p);
            char added[512];
            if (len < 16 || len >= sizeof added || *p == '+') continue;
            memcpy(added, p, len);
            added[len] = '\0';
            CHECK_MSG(!strstr(t->prompt, added), "task %s: the prompt holds a line of the fix: %s", t->id, added);
        }
        CHECK(!strstr(t->prompt, "diff --git"));
    }
    CHECK_MSG(oldest_eval != INT64_MAX && newest_train < oldest_eval, "%s: train up to %lld, eval from %lld", pool_dir,
              (long long)newest_train, (long long)oldest_eval);
    /* a train task made newer than an eval task breaks hygiene, naming both */
    for (size_t i = 0; i < n; i++) {
        rlvr_task *t = (rlvr_task *)rlvr_task_pool_get(pool, i);
        if (t->split == RLVR_SPLIT_TRAIN) {
            int64_t saved = t->created_at;
            t->created_at = oldest_eval;
            CHECK(rlvr_task_pool_check_splits(pool) == RLVR_EINVAL);
            CHECK(strstr(rlvr_error_last(), "is not the older") != NULL);
            t->created_at = saved;
            t->has_created_at = false; /* a key split by time needs every task's time */
            CHECK(rlvr_task_pool_check_splits(pool) == RLVR_EINVAL);
            CHECK(strstr(rlvr_error_last(), "has none)") != NULL);
            t->has_created_at = true;
            CHECK_OK(rlvr_task_pool_check_splits(pool));
            break;
        }
    }
    rlvr_task_pool_free(pool);
}

/* The ids of every commit of the full history that base does not reach. */
static int future_ids(git_repository *full, const git_oid *base, rlvr_str_list *out) {
    git_revwalk *w = NULL;
    git_oid id;
    if (git_revwalk_new(&w, full) < 0) return -1;
    git_revwalk_push_glob(w, "*");
    git_revwalk_hide(w, base);
    while (git_revwalk_next(&id, w) == 0) {
        char hex[41];
        git_oid_tostr(hex, sizeof hex, &id);
        rlvr_str_list_add_unique(out, hex);
    }
    git_revwalk_free(w);
    return 0;
}

/* Everything git offers to find a commit, printing FOUND-... markers for
 * objects and files and the ids that logs and refs list. */
static char *seeker_script(const rlvr_str_list *ids) {
    size_t cap = 4096 + ids->n * 200;
    char *s = malloc(cap);
    int n = snprintf(s, cap,
                     "G='git -c safe.directory=*'; $G log --all --format=%%H 2>&1; $G rev-list --all --reflog 2>&1; "
                     "$G reflog --all 2>&1; $G fsck --lost-found --unreachable --no-reflogs 2>&1; "
                     "cat .git/packed-refs .git/FETCH_HEAD .git/ORIG_HEAD .git/logs/HEAD 2>/dev/null; "
                     "$G for-each-ref 2>&1; ls -aR .git/refs .git/logs 2>/dev/null; "
                     "for p in .git/objects/pack/*.idx; do [ -f \"$p\" ] && $G verify-pack -v \"$p\" 2>/dev/null; done; "
                     "for id in");
    for (size_t i = 0; i < ids->n; i++) n += snprintf(s + n, cap - (size_t)n, " %s", ids->items[i]);
    snprintf(s + n, cap - (size_t)n,
             "; do $G cat-file -e \"$id\" 2>/dev/null && echo FOUND-OBJECT; "
             "d=$(echo \"$id\" | cut -c1-2); f=$(echo \"$id\" | cut -c3-); "
             "[ -e \".git/objects/$d/$f\" ] && echo FOUND-FILE; done; echo SEEKER-DONE\n");
    return s;
}

static bool holds_any(const char *out, const rlvr_str_list *ids) {
    if (strstr(out, "FOUND-")) return true;
    for (size_t i = 0; i < ids->n; i++)
        if (strstr(out, ids->items[i])) return true;
    return false;
}

static void check_scrubbed(const char *pool_dir, const char *id, const char *bundle) {
    char spec_path[8192];
    snprintf(spec_path, sizeof spec_path, "%s/%s.json", pool_dir, id);
    rlvr_task *t = NULL;
    CHECK_OK(rlvr_task_load_file(&t, spec_path));
    if (!t) return;
    /* the full history, for the ids of the future */
    char full_dir[4200], cmd[9000];
    snprintf(full_dir, sizeof full_dir, "%s/full-clone", dir);
    snprintf(cmd, sizeof cmd, "git clone -q '%s' '%s' 2>&1", bundle, full_dir);
    CHECK(run_cmd(cmd, NULL) == 0);
    git_repository *full = NULL, *scrubbed = NULL;
    CHECK_OK(rlvr_history_open(&full, full_dir, NULL, NULL));
    CHECK_OK(rlvr_history_open(&scrubbed, t->repository_path, NULL, NULL));
    rlvr_str_list future = {0};
    git_oid base;
    git_oid_fromstr(&base, t->base_commit);
    if (full && scrubbed) {
        CHECK(future_ids(full, &base, &future) == 0);
        CHECK_MSG(future.n >= 1, "no commit after the base %s", t->base_commit);
        git_odb *odb = NULL;
        CHECK(git_repository_odb(&odb, scrubbed) == 0);
        size_t present = 0;
        for (size_t i = 0; odb && i < future.n; i++) {
            git_oid oid;
            git_oid_fromstr(&oid, future.items[i]);
            present += git_odb_exists(odb, &oid);
        }
        CHECK_MSG(present == 0, "%zu of %zu later commits are in the task's repository", present, future.n);
        CHECK(git_odb_exists(odb, &base));
        git_odb_free(odb);
        git_strarray refs = {0};
        CHECK(git_reference_list(&refs, scrubbed) == 0);
        CHECK_MSG(refs.count == 1 && strcmp(refs.strings[0], "refs/heads/main") == 0, "%zu refs", refs.count);
        git_strarray_dispose(&refs);
        const char *gd = git_repository_path(scrubbed);
        const char *never[] = {"logs", "packed-refs", "FETCH_HEAD", "ORIG_HEAD", "refs/tags/v7.0.6", NULL};
        for (const char *const *n = never; *n; n++) {
            char p[8192];
            struct stat st;
            snprintf(p, sizeof p, "%s/%s", gd, *n);
            CHECK_MSG(lstat(p, &st) != 0, "the task's repository holds %s", *n);
        }
    }
    char *script = seeker_script(&future);
    /* control: over the full clone the seeker finds the future */
    char *out = NULL;
    char *host_cmd = malloc(strlen(script) + 4200);
    sprintf(host_cmd, "cd '%s' && sh -c '%s'", full_dir, "eval \"$SEEK\"");
    setenv("SEEK", script, 1);
    run_cmd(host_cmd, &out);
    CHECK_MSG(out && holds_any(out, &future) && strstr(out, "SEEKER-DONE"), "control: the seeker missed the fix");
    free(out);
    free(host_cmd);
    /* the task's workspace: nothing */
    rlvr_workspace_spec ws_spec = {.version = RLVR_WORKSPACE_SPEC_VERSION, .repo_dir = t->repository_path,
                                   .base_commit = t->base_commit};
    rlvr_sandbox_limits_default(&ws_spec.limits);
    rlvr_workspace *ws = NULL;
    CHECK_OK(rlvr_workspace_new(&ws, host, &ws_spec));
    if (ws) {
        const char *argv[] = {"/bin/sh", "-c", script, NULL};
        rlvr_sandbox_cmd c = {.version = RLVR_SANDBOX_CMD_VERSION, .argv = argv};
        rlvr_sandbox_result res;
        CHECK_OK(rlvr_sandbox_exec(rlvr_workspace_sandbox(ws), &c, &res));
        CHECK_MSG(res.out && strstr(res.out, "SEEKER-DONE") && !holds_any(res.out, &future),
                  "the workspace shows the future: %s", res.out ? res.out : "");
        CHECK_MSG(res.out && strstr(res.out, "unreachable") == NULL && strstr(res.out, "dangling") == NULL,
                  "fsck found loose history: %s", res.out ? res.out : "");
        rlvr_sandbox_result_free(&res);
        rlvr_workspace_free(ws);
    }
    free(script);
    rlvr_str_list_clear(&future);
    git_repository_free(full);
    git_repository_free(scrubbed);
    rlvr_task_free(t);
}

/* The check holds every probe but the one command mode cannot: the hidden
 * tests are files the code under test can read while it runs. */
static void check_one_task(const char *pool_dir, const char *id) {
    char path[8192];
    snprintf(path, sizeof path, "%s/%s.json", pool_dir, id);
    rlvr_task *t = NULL;
    CHECK_OK(rlvr_task_load_file(&t, path));
    if (!t) return;
    rlvr_task_check_options o = RLVR_TASK_CHECK_OPTIONS_INIT;
    o.quarantine_runs = 3;
    rlvr_task_check_result r;
    CHECK_OK(rlvr_task_check(&r, t, host, &o));
    printf("check %s: %s: %s\n", id, rlvr_task_check_status_name(r.status), r.reason);
    CHECK_MSG(r.status == RLVR_TASK_CHECK_EXPLOITABLE && strstr(r.reason, "hidden files at run time") &&
                  !strstr(r.reason, "forged") && !strstr(r.reason, "decoy") && !strstr(r.reason, "python") &&
                  !strstr(r.reason, "state") && !strstr(r.reason, "pytest") && r.probes > 4,
              "task %s: %s: %s", id, rlvr_task_check_status_name(r.status), r.reason);
    rlvr_task_check_result_clear(&r);
    rlvr_task_free(t);
}

static void test_cachetools(void) {
    char *bundle = bundle_path("cachetools"), pool[4200], old[4200];
    snprintf(pool, sizeof pool, "%s/cachetools", dir);
    rlvr_mine_summary sum;
    if (mine(bundle, NULL, pool, when("2024-07-01"), 0, &sum) == 0) {
        printf("cachetools since 2024-07-01: %lld examined, %lld candidates, %lld kept (%lld train, %lld eval), "
               "%.1f s\n",
               (long long)sum.examined, (long long)sum.candidates, (long long)sum.counts[RLVR_MINE_KEPT],
               (long long)sum.train, (long long)sum.eval, sum.wall_s);
        json_t *report = read_report(pool);
        expect_outcome(report, "bd4e24d2943e", "tests_only", "More test improvements.");
        expect_outcome(report, "8e73eae3d809", "docs_only", "Update Copilot Instructions.");
        expect_outcome(report, "51a70a974098", "docs_only", "Fix #357: Update documentation.");
        expect_outcome(report, "28d4506f2a49", "no_tests", "Release v7.0.6.");
        expect_outcome(report, "ae3d6bd7954e", "other_only", "Drop support for Python 3.9.");
        expect_outcome(report, "bb72c21aab48", "fails_after", "Fix #357: Add cache_info() support");
        expect_outcome(report, "86352aed2bed", "kept", "Fix #357: Convert @cachedmethod decorators to descriptors");
        expect_outcome(report, "18e5930ced2c", "kept", "Fix #218: Fix and properly document");
        CHECK(sum.counts[RLVR_MINE_KEPT] >= 8 && sum.eval >= 1 && sum.train >= 1);
        json_decref(report);
        check_time_split(pool, 8);
        check_scrubbed(pool, "cachetools-86352aed2bed", bundle);
        check_one_task(pool, "cachetools-86352aed2bed");
    }
    /* 2018: code of its day no longer imports on this Python */
    snprintf(old, sizeof old, "%s/cachetools-2018", dir);
    if (mine(bundle, NULL, old, when("2018-10-27"), when("2018-11-05"), &sum) == 0) {
        json_t *report = read_report(old);
        expect_outcome(report, "4a061636", "build_broken", "Fix #113: Add support for maxsize=None");
        expect_outcome(report, "e4b5f9b6", "build_broken", "Fix #109: Remove \"missing\" constructor argument");
        CHECK(sum.counts[RLVR_MINE_KEPT] == 0);
        json_decref(report);
    }
    free(bundle);
}

static void test_inih(void) {
    char *bundle = bundle_path("inih"), pool[4200];
    snprintf(pool, sizeof pool, "%s/inih", dir);
    rlvr_mine_summary sum;
    if (mine(bundle, inih_facts, pool, when("2019-01-01"), 0, &sum) == 0) {
        printf("inih since 2019: %lld examined, %lld candidates, %lld kept, %.1f s\n", (long long)sum.examined,
               (long long)sum.candidates, (long long)sum.counts[RLVR_MINE_KEPT], sum.wall_s);
        json_t *report = read_report(pool);
        expect_outcome(report, "216e21b3c271", "no_fail_to_pass", "Minor tweaks (#204)");
        expect_outcome(report, "498f34b78610", "kept", "Fix bug when INI_ALLOW_NO_VALUE is set");
        expect_outcome(report, "23acf2dd5af5", "kept", "If a line is longer than INI_MAX_LINE");
        json_decref(report);
        check_time_split(pool, 4);
    }
    free(bundle);
}

int main(void) {
    dir = tmpdir_make("mine");
    rlvr_sandbox_host_options ho = RLVR_SANDBOX_HOST_OPTIONS_INIT;
    int rc = rlvr_sandbox_host_new(&host, &ho);
    CHECK_MSG(rc == 0, "sandbox host: %s", rlvr_error_last());
    if (host) {
        test_cachetools();
        test_inih();
    }
    rlvr_sandbox_host_free(host);
    rm_rf(dir);
    free(dir);
    return test_summary("test_tasks_mine");
}
