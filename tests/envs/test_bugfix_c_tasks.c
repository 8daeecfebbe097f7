/* Every generated bugfix-c task is distinguishable, checked directly with
 * make and git (no enclave; the judge is built as the enclave builds it,
 * from the hidden files, and run on the runner the task's build makes): the
 * untouched repository fails its public test
 * (exactly one failing case) and its hidden FAIL_TO_PASS tests while the
 * PASS_TO_PASS tests pass; the reference patch applies (git apply --check)
 * and passes everything, also in a shuffled order; every wrong patch applies
 * and fails a hidden test.
 *
 *   test_bugfix_c_tasks --quick   one task of every template and difficulty (unit)
 *   test_bugfix_c_tasks --all     210 tasks over all splits and difficulties (slow)
 *   ... --compiler CC             the tasks' Makefiles name CC (default cc)
 * Tasks are checked in parallel child processes (RLVR_TEST_JOBS, default 2). */
#include "envs/gen.h"
#include "envs_test.h"
#include "test.h"

#include <stdbool.h>

typedef struct {
    rlvr_split split;
    int difficulty;
    int count;
} batch;

/* --quick generates these but checks only the first task of each batch and
 * the first task of every template not checked yet. */
static const batch quick[] = {
    {RLVR_SPLIT_TRAIN, 1, 24}, {RLVR_SPLIT_TRAIN, 2, 1},       {RLVR_SPLIT_TRAIN, 3, 1},
    {RLVR_SPLIT_EVAL, 1, 1},   {RLVR_SPLIT_REGRESSION, 1, 12}, {RLVR_SPLIT_REGRESSION, 3, 1},
};
static const batch all[] = {
    {RLVR_SPLIT_TRAIN, 1, 90}, {RLVR_SPLIT_TRAIN, 2, 40},      {RLVR_SPLIT_TRAIN, 3, 20},
    {RLVR_SPLIT_EVAL, 1, 20},  {RLVR_SPLIT_EVAL, 2, 10},       {RLVR_SPLIT_REGRESSION, 1, 15},
    {RLVR_SPLIT_REGRESSION, 2, 10}, {RLVR_SPLIT_REGRESSION, 3, 5},
};

/* ---- TAP ----------------------------------------------------------------------- */

typedef struct {
    int plan;     /* N of "1..N", -1 when missing */
    int lines;    /* ok / not ok lines */
    int failed;   /* not ok lines */
    char names[64][48];
    bool ok[64];
} tap;

static void parse_tap(const char *out, tap *t) {
    memset(t, 0, sizeof *t);
    t->plan = -1;
    for (const char *line = out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        int n;
        bool ok;
        const char *rest;
        if (sscanf(line, "1..%d", &n) == 1) {
            t->plan = n;
            continue;
        }
        if (strncmp(line, "ok ", 3) == 0) ok = true, rest = line + 3;
        else if (strncmp(line, "not ok ", 7) == 0) ok = false, rest = line + 7;
        else continue;
        const char *dash = strstr(rest, " - ");
        if (!dash || t->lines >= 64) continue;
        const char *name = dash + 3;
        size_t len = strcspn(name, ":\n ");
        snprintf(t->names[t->lines], sizeof t->names[0], "%.*s", (int)len, name);
        t->ok[t->lines] = ok;
        t->failed += !ok;
        t->lines++;
    }
}

/* 1: passed, 0: failed, -1: not reported. */
static int result(const tap *t, const char *name) {
    for (int i = 0; i < t->lines; i++)
        if (strcmp(t->names[i], name) == 0) return t->ok[i];
    return -1;
}

/* ---- one task ------------------------------------------------------------------ */

static int failures;

#define EXPECT(cond, ...)                                                                            \
    do {                                                                                             \
        if (!(cond)) {                                                                               \
            failures++;                                                                              \
            fprintf(stderr, "%s: ", task->id);                                                       \
            fprintf(stderr, __VA_ARGS__);                                                            \
            fprintf(stderr, "\n");                                                                   \
        }                                                                                            \
    } while (0)

/* A fresh copy of the repository with the hidden files, at work/name. */
static void fresh_copy(const rlvr_task *task, const char *work, const char *name, char *out, size_t cap) {
    snprintf(out, cap, "%s/%s", work, name);
    char cmd[16384];
    snprintf(cmd, sizeof cmd, "cp -r %s %s", task->repository_path, out);
    EXPECT(run_cmd(cmd, NULL) == 0, "cannot copy the repository");
    for (size_t i = 0; i < task->hidden_test_files.n; i++) {
        const char *f = task->hidden_test_files.items[i];
        snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname %s/%s)\" && cp %s/%s %s/%s", out, f, task->hidden_root_path, f,
                 out, f);
        EXPECT(run_cmd(cmd, NULL) == 0, "cannot copy hidden file %s", f);
    }
}

static bool apply_patch(const rlvr_task *task, const char *tree, const char *patch, const char *what) {
    char path[8192], cmd[32768];
    snprintf(path, sizeof path, "%s.patch", tree);
    write_text(path, patch);
    char *out = NULL;
    snprintf(cmd, sizeof cmd, "cd %s && git apply --check %s && git apply %s", tree, path, path);
    int rc = run_cmd(cmd, &out);
    EXPECT(rc == 0, "%s does not apply: %s", what, out);
    free(out);
    return rc == 0;
}

static int run_in(const char *tree, const char *command, tap *t) {
    char cmd[40000], *out = NULL;
    snprintf(cmd, sizeof cmd, "cd %s && %s", tree, command);
    int rc = run_cmd(cmd, &out);
    parse_tap(out, t);
    free(out);
    return rc;
}

/* The judge, built once per task in `base` (a copy with the hidden files)
 * into work/judge; "" when the build failed. */
static char judge_path[16384];

static void build_judge(const rlvr_task *task, const char *work, const char *base) {
    char cmd[32768], *out = NULL;
    snprintf(cmd, sizeof cmd, "mkdir -p %s/judge && cd %s && RLVR_JUDGE_DIR=%s/judge sh -c '%s'", work, base, work,
             task->judge_build);
    int rc = run_cmd(cmd, &out);
    EXPECT(rc == 0, "judge build \"%s\" failed: %s", task->judge_build, out ? out : "");
    free(out);
    snprintf(judge_path, sizeof judge_path, "%s/judge/%s", work, task->judge_run.items[0]);
    if (rc != 0) judge_path[0] = '\0';
}

/* The hidden tests in `tree` as the enclave runs them: the build of the code
 * under test, then the judge (`env`: assignments before it, may be ""). */
static int run_hidden(const rlvr_task *task, const char *tree, const char *env, tap *t) {
    char cmd[32768];
    size_t n = (size_t)snprintf(cmd, sizeof cmd, "%s >/dev/null 2>&1 && %s %s", task->hidden_build_command, env,
                                judge_path);
    for (size_t i = 1; i < task->judge_run.n && n < sizeof cmd; i++)
        n += (size_t)snprintf(cmd + n, sizeof cmd - n, " %s", task->judge_run.items[i]);
    return run_in(tree, cmd, t);
}

static void check_complete(const rlvr_task *task, const tap *t, const char *what) {
    EXPECT(t->plan == (int)(task->fail_to_pass.n + task->pass_to_pass.n) && t->lines == t->plan,
           "%s: plan %d, %d results, %zu tests in the spec", what, t->plan, t->lines,
           task->fail_to_pass.n + task->pass_to_pass.n);
}

static void check_task(const rlvr_task *task, const char *work) {
    char tree[8192];
    tap t;
    /* the untouched repository */
    fresh_copy(task, work, "base", tree, sizeof tree);
    build_judge(task, work, tree);
    if (!judge_path[0]) return;
    int rc = run_in(tree, task->public_test_command, &t);
    EXPECT(rc != 0 && t.failed == 1 && t.lines == t.plan && t.plan >= 1,
           "public tests on the base: exit %d, %d of %d failed (want exactly one)", rc, t.failed, t.lines);
    for (int i = 0; i < t.lines; i++)
        if (!t.ok[i]) {
            bool listed = false;
            for (size_t k = 0; k < task->fail_to_pass.n; k++) listed |= strcmp(task->fail_to_pass.items[k], t.names[i]) == 0;
            EXPECT(listed, "public failing test %s is not in FAIL_TO_PASS", t.names[i]);
        }
    rc = run_hidden(task, tree, "", &t);
    EXPECT(rc != 0, "hidden tests pass on the untouched repository");
    check_complete(task, &t, "base");
    for (size_t k = 0; k < task->fail_to_pass.n; k++)
        EXPECT(result(&t, task->fail_to_pass.items[k]) == 0, "FAIL_TO_PASS %s does not fail on the base",
               task->fail_to_pass.items[k]);
    for (size_t k = 0; k < task->pass_to_pass.n; k++)
        EXPECT(result(&t, task->pass_to_pass.items[k]) == 1, "PASS_TO_PASS %s does not pass on the base",
               task->pass_to_pass.items[k]);

    /* the reference patch */
    fresh_copy(task, work, "reference", tree, sizeof tree);
    if (apply_patch(task, tree, task->reference_patch, "reference patch")) {
        rc = run_hidden(task, tree, "", &t);
        EXPECT(rc == 0 && t.failed == 0, "reference: hidden tests exit %d, %d failed", rc, t.failed);
        check_complete(task, &t, "reference");
        rc = run_hidden(task, tree, "RLVR_TEST_SEED=12345", &t);
        EXPECT(rc == 0 && t.failed == 0, "reference: shuffled hidden tests exit %d, %d failed", rc, t.failed);
        check_complete(task, &t, "reference, shuffled");
        /* the enclave's contract: TAP on $RLVR_RESULTS_FD, order from $RLVR_TEST_ORDER */
        char cmd[4096];
        size_t n = (size_t)snprintf(cmd, sizeof cmd, "RLVR_TEST_ORDER='");
        for (size_t k = task->pass_to_pass.n; k-- > 0 && n < sizeof cmd;)
            n += (size_t)snprintf(cmd + n, sizeof cmd - n, "%s ", task->pass_to_pass.items[k]);
        for (size_t k = 0; k < task->fail_to_pass.n && n < sizeof cmd; k++)
            n += (size_t)snprintf(cmd + n, sizeof cmd - n, "%s ", task->fail_to_pass.items[k]);
        snprintf(cmd + n, sizeof cmd - n, "' RLVR_RESULTS_FD=3 %s build/runner 3>&1 >/dev/null", judge_path);
        rc = run_in(tree, cmd, &t);
        EXPECT(rc == 0 && t.failed == 0, "reference: ordered hidden tests exit %d, %d failed", rc, t.failed);
        check_complete(task, &t, "reference, ordered");
        const char *first = task->pass_to_pass.n ? task->pass_to_pass.items[task->pass_to_pass.n - 1]
                                                 : task->fail_to_pass.items[0];
        EXPECT(t.lines > 0 && strcmp(t.names[0], first) == 0, "RLVR_TEST_ORDER not followed: first %s, want %s",
               t.lines ? t.names[0] : "-", first);
        rc = run_in(tree, task->public_test_command, &t);
        EXPECT(rc == 0 && t.failed == 0 && t.lines >= 1, "reference: public tests exit %d", rc);
    }

    /* every wrong patch */
    for (size_t w = 0; w < task->wrong_patches.n; w++) {
        char name[32], what[64];
        snprintf(name, sizeof name, "wrong%zu", w);
        snprintf(what, sizeof what, "wrong patch %zu", w);
        fresh_copy(task, work, name, tree, sizeof tree);
        if (!apply_patch(task, tree, task->wrong_patches.items[w], what)) continue;
        rc = run_hidden(task, tree, "", &t);
        EXPECT(rc != 0 && t.failed >= 1, "%s passes the hidden tests", what);
        check_complete(task, &t, what);
    }
}

/* ---- driver ---------------------------------------------------------------------- */

int main(int argc, char **argv) {
    bool full = argc > 1 && strcmp(argv[1], "--all") == 0;
    const char *compiler = argc > 3 && strcmp(argv[2], "--compiler") == 0 ? argv[3] : NULL;
    const batch *batches = full ? all : quick;
    size_t n_batches = full ? sizeof all / sizeof all[0] : sizeof quick / sizeof quick[0];
    int jobs = getenv("RLVR_TEST_JOBS") ? atoi(getenv("RLVR_TEST_JOBS")) : 2;
    if (jobs < 1) jobs = 1;
    char *dir = tmpdir_make("bugfixc");
    char pool[4096];
    snprintf(pool, sizeof pool, "%s/pool", dir);

    const char *names[8], *held[8];
    int n_train = rlvr_task_gen_templates("bugfix-c", RLVR_SPLIT_TRAIN, names, 8);
    int n_held = rlvr_task_gen_templates("bugfix-c", RLVR_SPLIT_REGRESSION, held, 8);
    for (int i = 0; i < n_held; i++) names[n_train + i] = held[i];
    int template_count[8] = {0}, n_tasks = 0, running = 0, child_failures = 0;
    mkdir(pool, 0755);

    for (size_t b = 0; b < n_batches; b++) {
        rlvr_task_gen_options o = RLVR_TASK_GEN_OPTIONS_INIT;
        o.family = "bugfix-c";
        o.seed = 2024;
        o.split = batches[b].split;
        o.difficulty = batches[b].difficulty;
        o.compiler = compiler;
        for (int i = 0; i < batches[b].count; i++) {
            rlvr_task *task = NULL;
            CHECK_OK(rlvr_task_gen_one(&task, &o, i, pool));
            if (!task) continue;
            bool wanted = full || i == 0;
            for (int k = 0; k < n_train + n_held; k++)
                if (strcmp(names[k], task->template_name) == 0) wanted |= template_count[k] == 0;
            if (!wanted) {
                rlvr_task_free(task);
                continue;
            }
            n_tasks++;
            for (int k = 0; k < n_train + n_held; k++)
                if (strcmp(names[k], task->template_name) == 0) template_count[k]++;
            if (running == jobs) {
                int status;
                wait(&status);
                child_failures += WIFEXITED(status) ? WEXITSTATUS(status) : 1;
                running--;
            }
            pid_t pid = fork();
            if (pid == 0) {
                char work[8192];
                snprintf(work, sizeof work, "%s/work-%s", dir, task->id);
                mkdir(work, 0755);
                check_task(task, work);
                rm_rf(work);
                _exit(failures > 255 ? 255 : failures);
            }
            CHECK(pid > 0);
            running++;
            rlvr_task_free(task);
        }
    }
    while (running > 0) {
        int status;
        wait(&status);
        child_failures += WIFEXITED(status) ? WEXITSTATUS(status) : 1;
        running--;
    }
    CHECK_MSG(child_failures == 0, "%d task checks failed (see above)", child_failures);
    for (int k = 0; k < n_train + n_held; k++)
        CHECK_MSG(template_count[k] > 0, "template %s never generated", names[k]);
    printf("checked %d bugfix-c tasks:", n_tasks);
    for (int k = 0; k < n_train + n_held; k++) printf(" %s %d", names[k], template_count[k]);
    printf("\n");
    rm_rf(dir);
    free(dir);
    return test_summary(full ? "test_bugfix_c_tasks --all" : "test_bugfix_c_tasks --quick");
}
