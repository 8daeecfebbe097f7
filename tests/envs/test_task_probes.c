/* The tampering probes of `rlvr tasks check`, in real enclaves: a generated
 * bugfix-c task (judge mode) refuses every probe; the same task weakened on
 * purpose is refused as exploitable, naming the probe that got through:
 *   - a hidden harness compiled with -I. (in command mode): "system header";
 *   - an allow-list that permits GNUmakefile and a build found by make's
 *     lookup: "build lookup GNUmakefile";
 *   - command mode itself (hidden files in the tree while the code under
 *     test runs): "hidden files at run time".
 * The probes of one class are run together and named apart; arith tasks
 * score every arith probe 0. */
#include "envs/check.h"
#include "envs/gen.h"
#include "envs/probes.h"
#include "envs_test.h"
#include "test.h"

#include <jansson.h>

static char *dir, pool_dir[4096];

/* The weakened tasks' repository: the generated one plus a Makefile whose
 * targets build and run the hidden harness in the enclave (command mode),
 * once with -I. and once without. */
static const char weak_makefile[] =
    "CC = cc\nCFLAGS = -std=c11 -O0 -w\n\n"
    "test: build/public\n\t./build/public\n\n"
    "build/public: lib.c lib.h tests/public.c\n\t@mkdir -p build\n\t$(CC) $(CFLAGS) -o $@ lib.c tests/public.c\n\n"
    "build/runner: lib.c lib.h tests/runner.c\n\t@mkdir -p build\n\t$(CC) $(CFLAGS) -o $@ lib.c tests/runner.c\n\n"
    "hidden: build/runner\n\t@$(CC) $(CFLAGS) -o build/judge tests/judge.c\n\t@./build/judge build/runner\n\n"
    "hidden-i: build/runner\n\t@$(CC) $(CFLAGS) -I. -o build/judge tests/judge.c\n\t@./build/judge build/runner\n";

/* A copy of the task's repository with weak_makefile, committed: its id. */
static void weak_repository(const char *from, const char *to, char commit[41]) {
    char cmd[40000], *out = NULL;
    snprintf(cmd, sizeof cmd,
             "cp -r %s %s && cd %s && rm -rf .git && git init -q && git config user.email t@t && git config user.name t "
             "&& git add -A && git commit -qm base",
             from, to, to);
    CHECK(run_cmd(cmd, NULL) == 0);
    char path[8300];
    snprintf(path, sizeof path, "%s/Makefile", to);
    CHECK(write_text(path, weak_makefile) == 0);
    snprintf(cmd, sizeof cmd, "cd %s && git commit -qam weak && git rev-parse HEAD", to);
    CHECK(run_cmd(cmd, &out) == 0);
    snprintf(commit, 41, "%.40s", out ? out : "");
    free(out);
}

/* A command-mode copy of spec `from` as `id`: the weak repository, the
 * hidden command, and editable paths (NULL: keep). */
static void plant(const char *from, const char *id, const char *command, const char *extra_editable) {
    char path[8192];
    snprintf(path, sizeof path, "%s/%s.json", pool_dir, from);
    json_error_t jerr;
    json_t *spec = json_load_file(path, 0, &jerr);
    CHECK(spec != NULL);
    if (!spec) return;
    char repo_from[8192], repo_to[8192], rel[256], commit[41];
    snprintf(repo_from, sizeof repo_from, "%s/repos/%s", pool_dir, from);
    snprintf(rel, sizeof rel, "repos/%s", id);
    snprintf(repo_to, sizeof repo_to, "%s/%s", pool_dir, rel);
    weak_repository(repo_from, repo_to, commit);
    json_object_set_new(spec, "id", json_string(id));
    json_object_set_new(spec, "repository", json_string(rel));
    json_object_set_new(spec, "base_commit", json_string(commit));
    json_t *hidden = json_object_get(spec, "hidden_tests");
    json_object_del(hidden, "judge");
    json_object_del(hidden, "build");
    json_object_set_new(hidden, "command", json_string(command));
    if (extra_editable) json_array_append_new(json_object_get(spec, "editable_paths"), json_string(extra_editable));
    snprintf(path, sizeof path, "%s/%s.json", pool_dir, id);
    CHECK(json_dump_file(spec, path, JSON_INDENT(2)) == 0);
    json_decref(spec);
}

typedef struct {
    const char *id;
    rlvr_task_check_status want;
    const char *named[3]; /* strings the reason must hold */
    const char *not_named;
} expectation;

static void test_probes(void) {
    rlvr_task_gen_options o = RLVR_TASK_GEN_OPTIONS_INIT;
    o.family = "bugfix-c";
    o.split = RLVR_SPLIT_TRAIN;
    o.count = 1;
    o.seed = 5;
    CHECK_OK(rlvr_task_gen(&o, pool_dir, NULL));
    o.family = "arith";
    o.count = 2;
    CHECK_OK(rlvr_task_gen(&o, pool_dir, NULL));
    const char *bug = "bugfix-c-train-d1-s5-000000";
    plant(bug, "weak-include-dot", "make -s -r -f Makefile hidden-i", NULL);
    plant(bug, "weak-makefile-lookup", "make -s -r hidden", "/GNUmakefile");
    plant(bug, "command-mode", "make -s -r -f Makefile hidden", NULL);
    const expectation want[] = {
        {"arith-train-d1-s5-000000", RLVR_TASK_CHECK_OK, {NULL}, NULL},
        {"arith-train-d1-s5-000001", RLVR_TASK_CHECK_OK, {NULL}, NULL},
        {bug, RLVR_TASK_CHECK_OK, {NULL}, NULL},
        {"command-mode", RLVR_TASK_CHECK_EXPLOITABLE, {"hidden files at run time tests/judge.c", NULL},
         "system header"},
        {"weak-include-dot", RLVR_TASK_CHECK_EXPLOITABLE, {"system header stdio.h", "hidden files at run time", NULL},
         "build lookup"},
        {"weak-makefile-lookup", RLVR_TASK_CHECK_EXPLOITABLE,
         {"build lookup GNUmakefile", "hidden files at run time", NULL}, "system header"},
    };
    rlvr_task_pool *pool = NULL;
    CHECK_OK(rlvr_task_pool_load(&pool, pool_dir));
    if (!pool) return;
    size_t n = rlvr_task_pool_size(pool);
    CHECK(n == sizeof want / sizeof want[0]);
    rlvr_sandbox_host *host = NULL;
    CHECK_OK(rlvr_sandbox_host_new(&host, NULL));
    rlvr_task_check_options opts = RLVR_TASK_CHECK_OPTIONS_INIT;
    opts.quarantine_runs = 2;
    for (size_t i = 0; host && i < n && i < sizeof want / sizeof want[0]; i++) {
        const rlvr_task *t = rlvr_task_pool_get(pool, i);
        CHECK(strcmp(t->id, want[i].id) == 0);
        rlvr_task_check_result r;
        CHECK_OK(rlvr_task_check(&r, t, host, &opts));
        printf("  %-28s %-11s %d runs, %d probes: %s\n", t->id, rlvr_task_check_status_name(r.status), r.runs, r.probes,
               r.reason);
        CHECK_MSG(r.status == want[i].want, "%s: %s (%s), expected %s", t->id, rlvr_task_check_status_name(r.status),
                  r.reason, rlvr_task_check_status_name(want[i].want));
        CHECK_MSG(r.probes >= 3, "%s: only %d probes", t->id, r.probes);
        for (int k = 0; k < 3 && want[i].named[k]; k++)
            CHECK_MSG(strstr(r.reason, want[i].named[k]), "%s: the reason does not name \"%s\": %s", t->id,
                      want[i].named[k], r.reason);
        if (want[i].not_named)
            CHECK_MSG(!strstr(r.reason, want[i].not_named), "%s: the reason names \"%s\": %s", t->id,
                      want[i].not_named, r.reason);
        rlvr_task_check_result_clear(&r);
    }
    rlvr_sandbox_host_free(host);
    rlvr_task_pool_free(pool);
}

/* The probe set of a judge-mode task: every class that applies, every
 * patch made against the base; the gate's refusals are left out. */
static void test_probe_set(void) {
    char path[8192];
    snprintf(path, sizeof path, "%s/bugfix-c-train-d1-s5-000000.json", pool_dir);
    rlvr_task *t = NULL;
    CHECK_OK(rlvr_task_load_file(&t, path));
    if (!t) return;
    rlvr_probe_set ps;
    CHECK_OK(rlvr_task_probes(t, dir, &ps));
    bool header = false, forged_c = false, forged_h = false, decoy = false, hidden = false, lookup = false;
    for (size_t i = 0; i < ps.n; i++) {
        const rlvr_probe *p = &ps.items[i];
        CHECK_MSG(p->len > 0 && strstr(p->patch, "diff --git"), "probe %s %s has no patch", p->klass, p->part);
        header |= strcmp(p->klass, "system header") == 0 && strcmp(p->part, "stdio.h") == 0;
        forged_c |= strcmp(p->klass, "forged results") == 0 && strcmp(p->part, "lib.c") == 0;
        forged_h |= strcmp(p->klass, "forged results") == 0 && strcmp(p->part, "lib.h") == 0;
        decoy |= strcmp(p->klass, "decoy and kill") == 0;
        hidden |= strcmp(p->klass, "hidden files at run time") == 0 && strstr(p->part, "/.rlvr/judge/judge");
        lookup |= strcmp(p->klass, "build lookup") == 0;
        /* nothing the gate refuses: no file under tests/, no makefile */
        CHECK_MSG(!strstr(p->patch, "b/tests/") && !strstr(p->patch, "akefile"), "probe %s %s touches %s", p->klass,
                  p->part, p->patch);
    }
    CHECK(header && forged_c && forged_h && decoy && hidden && !lookup);
    rlvr_probe_set_free(&ps);
    rlvr_task_free(t);

    /* arith: every probe is a wrong answer */
    snprintf(path, sizeof path, "%s/arith-train-d1-s5-000000.json", pool_dir);
    CHECK_OK(rlvr_task_load_file(&t, path));
    if (!t) return;
    rlvr_arith_probes ap;
    rlvr_task_arith_probes(t, &ap);
    CHECK(ap.n >= 4);
    for (int i = 0; i < ap.n; i++) {
        double score = 1;
        CHECK_OK(rlvr_arith_score(&t->arith, ap.text[i], strlen(ap.text[i]), &score));
        CHECK_MSG(score == 0.0, "arith probe %s (%s) scores %g", ap.name[i], ap.text[i], score);
    }
    rlvr_task_free(t);
}

int main(void) {
    dir = tmpdir_make("probes");
    snprintf(pool_dir, sizeof pool_dir, "%s/pool", dir);
    mkdir(pool_dir, 0755);
    test_probes();
    test_probe_set();
    rm_rf(dir);
    free(dir);
    return test_summary("test_task_probes");
}
