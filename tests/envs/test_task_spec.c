/* Task specs: a good spec of each verifier loads with every field; each
 * malformed field is refused with a message naming the file and the field;
 * writing and reading back gives the same spec. */
#include "envs/task.h"
#include "envs/tools.h"
#include "envs_test.h"
#include "test.h"

#include <jansson.h>

static char *dir;

static const char *good_tests_spec =
    "{\n"
    "  \"format\": \"rlvr-task/1\",\n"
    "  \"id\": \"demo-1\",\n"
    "  \"family\": \"demo\",\n"
    "  \"template\": \"off_by_one\",\n"
    "  \"split\": \"train\",\n"
    "  \"split_key\": \"demo/repo\",\n"
    "  \"prompt\": \"Fix sum_to.\",\n"
    "  \"repository\": \"repo\",\n"
    "  \"base_commit\": \"0123456789abcdef0123456789abcdef01234567\",\n"
    "  \"public_tests\": {\"command\": \"make -s test\", \"files\": [\"tests/public.c\"]},\n"
    "  \"hidden_tests\": {\"root\": \"hidden\", \"files\": [\"tests/hidden.c\"], \"command\": \"make -s hidden\"},\n"
    "  \"FAIL_TO_PASS\": [\"sum_to_1\"],\n"
    "  \"PASS_TO_PASS\": [\"sum_to_2\", \"sign_1\"],\n"
    "  \"reference_patch\": \"--- a/lib.c\\n+++ b/lib.c\\n@@ -1 +1 @@\\n-a\\n+b\\n\",\n"
    "  \"wrong_patches\": [\"--- a/lib.c\\n+++ b/lib.c\\n@@ -1 +1 @@\\n-a\\n+c\\n\"],\n"
    "  \"protected_paths\": [\"tests/**\", \"Makefile\"],\n"
    "  \"tools\": [\"read_file\", \"replace_in_file\", \"submit\"],\n"
    "  \"budgets\": {\"turns\": 6, \"policy_tokens\": 500, \"context_tokens\": 2000, \"tool_timeout_s\": 2.5,\n"
    "              \"malformed_calls\": 2},\n"
    "  \"metadata\": {\"note\": \"hand-written\"}\n"
    "}\n";

static const char *good_arith_spec =
    "{\"format\": \"rlvr-task/1\", \"id\": \"arith-1\", \"family\": \"arith\", \"split\": \"eval\","
    " \"split_key\": \"arith/3+4*2\", \"verifier\": \"arith\", \"prompt\": \"What is 3+4*2?\","
    " \"arith\": {\"kind\": \"evaluate\", \"expression\": \"3+4*2\", \"target\": 11},"
    " \"reference_answer\": \"11\", \"wrong_answers\": [\"14\"]}";

/* repo/ (a git directory as far as loading cares) and hidden/tests/hidden.c */
static void make_fixture(void) {
    dir = tmpdir_make("taskspec");
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "mkdir -p %s/repo/.git %s/hidden/tests && touch %s/hidden/tests/hidden.c", dir, dir, dir);
    CHECK(run_cmd(cmd, NULL) == 0);
}

static void test_good_tests_spec(void) {
    char path[4096];
    snprintf(path, sizeof path, "%s/good.json", dir);
    CHECK(write_text(path, good_tests_spec) == 0);
    rlvr_task *t;
    CHECK_OK(rlvr_task_load_file(&t, path));
    if (!t) return;
    CHECK(strcmp(t->id, "demo-1") == 0);
    CHECK(strcmp(t->family, "demo") == 0);
    CHECK(strcmp(t->template_name, "off_by_one") == 0);
    CHECK(t->split == RLVR_SPLIT_TRAIN);
    CHECK(strcmp(t->split_key, "demo/repo") == 0);
    CHECK(t->verifier == RLVR_VERIFIER_TESTS);
    CHECK(strcmp(t->repository, "repo") == 0);
    char want[4096];
    snprintf(want, sizeof want, "%s/repo", dir);
    CHECK(strcmp(t->repository_path, want) == 0);
    CHECK(t->repository_kind == RLVR_REPO_DIRECTORY);
    CHECK(strcmp(t->public_test_command, "make -s test") == 0);
    CHECK(t->public_test_files.n == 1 && strcmp(t->public_test_files.items[0], "tests/public.c") == 0);
    CHECK(t->hidden_test_files.n == 1 && strcmp(t->hidden_test_command, "make -s hidden") == 0);
    CHECK(t->fail_to_pass.n == 1 && t->pass_to_pass.n == 2 && strcmp(t->pass_to_pass.items[1], "sign_1") == 0);
    CHECK(t->wrong_patches.n == 1 && t->protected_paths.n == 2);
    CHECK(t->tools == ((1u << RLVR_TOOL_READ_FILE) | (1u << RLVR_TOOL_REPLACE_IN_FILE) | (1u << RLVR_TOOL_SUBMIT)));
    CHECK(t->budgets.turns == 6 && t->budgets.policy_tokens == 500 && t->budgets.context_tokens == 2000);
    CHECK(t->budgets.tool_timeout_s == 2.5 && t->budgets.malformed_calls == 2);
    CHECK(t->metadata_json && strstr(t->metadata_json, "hand-written"));

    /* round trip: write, read back, same JSON */
    char *a = NULL, *b = NULL, back[4096];
    CHECK_OK(rlvr_task_to_json(t, 2, &a));
    snprintf(back, sizeof back, "%s/back.json", dir);
    CHECK_OK(rlvr_task_write_file(t, back));
    rlvr_task *u = NULL;
    CHECK_OK(rlvr_task_load_file(&u, back));
    if (u) CHECK_OK(rlvr_task_to_json(u, 2, &b));
    CHECK(a && b && strcmp(a, b) == 0);
    free(a);
    free(b);
    rlvr_task_free(u);

    /* budgets: the task's values win, zeros take the run's */
    rlvr_task_budgets run = {10, 1000, 4000, 30.0, 3, 0.0}, got, partial = {0, 700, 0, 0.0, 0, 0.0};
    rlvr_task_budgets_resolve(&t->budgets, &run, &got);
    CHECK(got.turns == 6 && got.policy_tokens == 500 && got.context_tokens == 2000 && got.tool_timeout_s == 2.5);
    CHECK(got.malformed_calls == 2);
    rlvr_task_budgets_resolve(&partial, &run, &got);
    CHECK(got.turns == 10 && got.policy_tokens == 700 && got.context_tokens == 4000 && got.tool_timeout_s == 30.0);
    CHECK(got.malformed_calls == 3);
    /* a run without the malformed-call ceiling (0) gets the task's */
    run.malformed_calls = 0;
    rlvr_task_budgets_resolve(&t->budgets, &run, &got);
    CHECK(got.malformed_calls == 2);
    rlvr_task_free(t);
}

static void test_good_arith_spec(void) {
    rlvr_task *t;
    CHECK_OK(rlvr_task_parse(&t, good_arith_spec, strlen(good_arith_spec), "arith.json", "."));
    if (!t) return;
    CHECK(t->verifier == RLVR_VERIFIER_ARITH && t->split == RLVR_SPLIT_EVAL);
    CHECK(t->arith.kind == RLVR_ARITH_EVALUATE && t->arith.target == 11);
    CHECK(strcmp(t->reference_answer, "11") == 0 && t->wrong_answers.n == 1);
    CHECK(t->tools == 0); /* single-turn: no tools unless the spec lists them */
    CHECK(t->repository == NULL && t->budgets.turns == 0);
    char *a = NULL;
    CHECK_OK(rlvr_task_to_json(t, 0, &a));
    rlvr_task *u = NULL;
    if (a) CHECK_OK(rlvr_task_parse(&u, a, strlen(a), "again", "."));
    CHECK(u && u->arith.target == 11 && strcmp(u->arith.expression, "3+4*2") == 0);
    free(a);
    rlvr_task_free(u);
    rlvr_task_free(t);

    const char *countdown =
        "{\"format\": \"rlvr-task/1\", \"id\": \"cd\", \"family\": \"arith\", \"split\": \"train\","
        " \"split_key\": \"k\", \"verifier\": \"arith\", \"prompt\": \"Make 22.\","
        " \"arith\": {\"kind\": \"countdown\", \"numbers\": [3, 5, 7], \"target\": 22}, \"reference_answer\": \"3*5+7\"}";
    CHECK_OK(rlvr_task_parse(&t, countdown, strlen(countdown), "cd.json", "."));
    CHECK(t && t->arith.kind == RLVR_ARITH_COUNTDOWN && t->arith.n_numbers == 3 && t->arith.numbers[2] == 7);
    rlvr_task_free(t);
}

/* Applies `edit` to a copy of `base`, loads it as FILE, and expects a
 * refusal whose message holds every string of `want`. */
typedef void (*mutate_fn)(json_t *root);

static void expect_refusal(const char *base, const char *what, mutate_fn edit, const char *want1,
                           const char *want2) {
    json_error_t jerr;
    json_t *root = json_loads(base, 0, &jerr);
    edit(root);
    char *text = json_dumps(root, 0);
    json_decref(root);
    char path[4096];
    snprintf(path, sizeof path, "%s/bad.json", dir);
    write_text(path, text);
    free(text);
    rlvr_task *t = NULL;
    int rc = rlvr_task_load_file(&t, path);
    const char *msg = rlvr_error_last();
    CHECK_MSG(rc == RLVR_EFORMAT && t == NULL, "%s: loaded (rc %d)", what, rc);
    CHECK_MSG(strstr(msg, "task spec ") && strstr(msg, "bad.json"), "%s: message does not name the file: %s", what,
              msg);
    CHECK_MSG(strstr(msg, want1), "%s: message lacks [%s]: %s", what, want1, msg);
    if (want2) CHECK_MSG(strstr(msg, want2), "%s: message lacks [%s]: %s", what, want2, msg);
    rlvr_task_free(t);
}

#define DEL(name, key)                                                                                       \
    static void name(json_t *r) { json_object_del(r, key); }
#define SET(name, key, value)                                                                                \
    static void name(json_t *r) { json_object_set_new(r, key, value); }
#define SUBSET(name, obj, key, value)                                                                        \
    static void name(json_t *r) { json_object_set_new(json_object_get(r, obj), key, value); }
#define SUBDEL(name, obj, key)                                                                               \
    static void name(json_t *r) { json_object_del(json_object_get(r, obj), key); }

DEL(del_hidden, "hidden_tests")
DEL(del_format, "format")
DEL(del_id, "id")
DEL(del_family, "family")
DEL(del_split, "split")
DEL(del_split_key, "split_key")
DEL(del_prompt, "prompt")
DEL(del_repository, "repository")
DEL(del_base_commit, "base_commit")
DEL(del_public, "public_tests")
DEL(del_f2p, "FAIL_TO_PASS")
DEL(del_p2p, "PASS_TO_PASS")
DEL(del_reference, "reference_patch")
SET(bad_format, "format", json_string("rlvr-task/2"))
SET(id_number, "id", json_integer(5))
SET(id_space, "id", json_string("a b"))
SET(id_long, "id", json_string("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"))
SET(split_typo, "split", json_string("tran"))
SET(prompt_empty, "prompt", json_string(""))
SET(verifier_bad, "verifier", json_string("magic"))
SET(repo_missing, "repository", json_string("nowhere"))
SET(repo_not_git, "repository", json_string("hidden"))
SET(commit_short, "base_commit", json_string("abc123"))
SET(f2p_empty, "FAIL_TO_PASS", json_array())
SET(f2p_number, "FAIL_TO_PASS", json_pack("[i]", 3))
SET(p2p_bad_string, "PASS_TO_PASS", json_string("not a list"))
SET(reference_not_diff, "reference_patch", json_string("just text"))
SET(wrong_not_strings, "wrong_patches", json_pack("[i]", 1))
SET(protected_not_list, "protected_paths", json_string("tests/**"))
SET(unknown_field, "promt", json_string("x"))
SET(tools_typo, "tools", json_pack("[s]", "read_fil"))
SET(tools_not_list, "tools", json_string("all"))
SET(budgets_not_object, "budgets", json_integer(3))
SET(arith_in_tests, "arith", json_object())
SET(metadata_list, "metadata", json_array())
SUBDEL(hidden_no_command, "hidden_tests", "command")
SUBDEL(hidden_no_root, "hidden_tests", "root")
SUBSET(hidden_escape, "hidden_tests", "files", json_pack("[s]", "../secret.c"))
SUBSET(hidden_absent_file, "hidden_tests", "files", json_pack("[s]", "tests/missing.c"))
SUBSET(hidden_unknown, "hidden_tests", "comand", json_string("x"))
SUBDEL(public_no_command, "public_tests", "command")
SUBSET(public_absolute, "public_tests", "files", json_pack("[s]", "/etc/passwd"))
SUBSET(turns_zero, "budgets", "turns", json_integer(0))
SUBSET(turns_real, "budgets", "turns", json_real(2.5))
SUBSET(timeout_negative, "budgets", "tool_timeout_s", json_real(-1))
SUBSET(malformed_zero, "budgets", "malformed_calls", json_integer(0))
SUBSET(malformed_real, "budgets", "malformed_calls", json_real(1.5))
SUBSET(budget_unknown, "budgets", "tokens", json_integer(5))
SUBSET(build_without_judge, "hidden_tests", "build", json_string("make runner"))
SUBSET(judge_not_object, "hidden_tests", "judge", json_string("cc judge.c"))
SUBSET(judge_with_command, "hidden_tests", "judge", json_pack("{s:s, s:[s]}", "build", "cc -o j t.c", "run", "j"))
SET(editable_empty, "editable_paths", json_array())
SET(editable_not_list, "editable_paths", json_string("*.c"))
SET(network_bad, "network", json_string("internet"))
SET(network_not_string, "network", json_true())
SUBSET(results_not_object, "hidden_tests", "results", json_string("junit"))
SUBSET(results_format_bad, "hidden_tests", "results", json_pack("{s:s}", "format", "xunit"))
SUBSET(results_junit_no_path, "hidden_tests", "results", json_pack("{s:s}", "format", "junit"))
SUBSET(results_tap_path, "hidden_tests", "results", json_pack("{s:s, s:s}", "format", "tap", "path", "r.xml"))
SUBSET(results_path_escape, "hidden_tests", "results", json_pack("{s:s, s:s}", "format", "junit", "path", "../r.xml"))
SUBSET(results_path_hook, "hidden_tests", "results",
       json_pack("{s:s, s:s}", "format", "junit", "path", "conftest.py"))
SUBSET(results_unknown, "hidden_tests", "results", json_pack("{s:s, s:s}", "format", "junit", "pth", "r.xml"))

/* judge mode: no hidden_tests.command */
static void judge_with_path(json_t *r) {
    json_t *h = json_object_get(r, "hidden_tests");
    json_object_del(h, "command");
    json_object_set_new(h, "judge", json_pack("{s:s, s:[s]}", "build", "cc -o j t.c", "run", "bin/j"));
}
static void judge_without_run(json_t *r) {
    json_t *h = json_object_get(r, "hidden_tests");
    json_object_del(h, "command");
    json_object_set_new(h, "judge", json_pack("{s:s}", "build", "cc -o j t.c"));
}
static void judge_unknown_key(json_t *r) {
    json_t *h = json_object_get(r, "hidden_tests");
    json_object_del(h, "command");
    json_object_set_new(h, "judge", json_pack("{s:s, s:[s], s:s}", "build", "cc", "run", "j", "bulid", "x"));
}
SUBSET(policy_over_context, "budgets", "policy_tokens", json_integer(5000))
static void judge_with_junit(json_t *r) {
    json_t *h = json_object_get(r, "hidden_tests");
    json_object_del(h, "command");
    json_object_set_new(h, "judge", json_pack("{s:s, s:[s]}", "build", "cc -o j t.c", "run", "j"));
    json_object_set_new(h, "results", json_pack("{s:s, s:s}", "format", "junit", "path", "r.xml"));
}

static void test_malformed_tests_spec(void) {
    const char *b = good_tests_spec;
    expect_refusal(b, "missing hidden_tests", del_hidden, "field \"hidden_tests\" missing", NULL);
    struct {
        mutate_fn fn;
        const char *field;
    } missing[] = {{del_format, "format"},         {del_id, "id"},
                   {del_family, "family"},         {del_split, "split"},
                   {del_split_key, "split_key"},   {del_prompt, "prompt"},
                   {del_repository, "repository"}, {del_base_commit, "base_commit"},
                   {del_public, "public_tests"},   {del_f2p, "FAIL_TO_PASS"},
                   {del_p2p, "PASS_TO_PASS"},      {del_reference, "reference_patch"},
                   {hidden_no_command, "hidden_tests.command"}, {hidden_no_root, "hidden_tests.root"},
                   {public_no_command, "public_tests.command"}};
    for (size_t i = 0; i < sizeof missing / sizeof missing[0]; i++) {
        char want[128];
        snprintf(want, sizeof want, "field \"%s\" missing", missing[i].field);
        expect_refusal(b, missing[i].field, missing[i].fn, want, NULL);
    }
    expect_refusal(b, "format", bad_format, "field \"format\"", "rlvr-task/1");
    expect_refusal(b, "id type", id_number, "field \"id\" must be a string", NULL);
    expect_refusal(b, "id chars", id_space, "field \"id\"", "letters, digits");
    expect_refusal(b, "id length", id_long, "field \"id\"", "1..63");
    expect_refusal(b, "split typo", split_typo, "field \"split\"", "did you mean \"train\"");
    expect_refusal(b, "empty prompt", prompt_empty, "field \"prompt\" must not be empty", NULL);
    expect_refusal(b, "verifier", verifier_bad, "field \"verifier\"", "tests|arith");
    expect_refusal(b, "repository missing", repo_missing, "field \"repository\"", "does not exist");
    expect_refusal(b, "repository not git", repo_not_git, "field \"repository\"", "not a git repository");
    expect_refusal(b, "commit", commit_short, "field \"base_commit\"", "40 lowercase hex");
    expect_refusal(b, "f2p empty", f2p_empty, "field \"FAIL_TO_PASS\" must not be empty", NULL);
    expect_refusal(b, "f2p type", f2p_number, "field \"FAIL_TO_PASS\"", "item 0 must be a string");
    expect_refusal(b, "p2p string", p2p_bad_string, "field \"PASS_TO_PASS\"", "not a JSON array");
    expect_refusal(b, "reference", reference_not_diff, "field \"reference_patch\"", "unified diff");
    expect_refusal(b, "wrong patches", wrong_not_strings, "field \"wrong_patches\"", "must be a string");
    expect_refusal(b, "protected", protected_not_list, "field \"protected_paths\"", "array of strings");
    expect_refusal(b, "unknown", unknown_field, "field \"promt\"", "did you mean \"prompt\"");
    expect_refusal(b, "tools typo", tools_typo, "field \"tools\"", "did you mean \"read_file\"");
    expect_refusal(b, "tools type", tools_not_list, "field \"tools\"", "array of tool names");
    expect_refusal(b, "budgets type", budgets_not_object, "field \"budgets\" must be an object", NULL);
    expect_refusal(b, "foreign field", arith_in_tests, "field \"arith\" is not used by verifier \"tests\"", NULL);
    expect_refusal(b, "metadata", metadata_list, "field \"metadata\" must be an object", NULL);
    expect_refusal(b, "hidden escape", hidden_escape, "field \"hidden_tests.files\"", "inside the repository");
    expect_refusal(b, "hidden file", hidden_absent_file, "field \"hidden_tests.files\"", "tests/missing.c");
    expect_refusal(b, "hidden unknown", hidden_unknown, "field \"hidden_tests.comand\"", "did you mean \"hidden_tests.command\"");
    expect_refusal(b, "public absolute", public_absolute, "field \"public_tests.files\"", "relative");
    expect_refusal(b, "turns zero", turns_zero, "field \"budgets.turns\"", "between 1");
    expect_refusal(b, "turns real", turns_real, "field \"budgets.turns\" must be an integer", NULL);
    expect_refusal(b, "timeout", timeout_negative, "field \"budgets.tool_timeout_s\"", "(0, 86400]");
    expect_refusal(b, "malformed zero", malformed_zero, "field \"budgets.malformed_calls\"",
                   "between 1 and 1000000");
    expect_refusal(b, "malformed real", malformed_real, "field \"budgets.malformed_calls\"", "an integer");
    expect_refusal(b, "budget unknown", budget_unknown, "field \"budgets.tokens\"", NULL);
    expect_refusal(b, "policy > context", policy_over_context, "field \"budgets.policy_tokens\"", "context_tokens");
    expect_refusal(b, "build without a judge", build_without_judge, "field \"hidden_tests.build\"",
                   "needs hidden_tests.judge");
    expect_refusal(b, "judge type", judge_not_object, "field \"hidden_tests.judge\" must be an object", NULL);
    expect_refusal(b, "judge and command", judge_with_command, "field \"hidden_tests.command\"", "without a judge");
    expect_refusal(b, "judge path", judge_with_path, "field \"hidden_tests.judge.run\"", "no '/'");
    expect_refusal(b, "judge run", judge_without_run, "field \"hidden_tests.judge.run\" missing", NULL);
    expect_refusal(b, "judge key", judge_unknown_key, "field \"hidden_tests.judge.bulid\"", "did you mean");
    expect_refusal(b, "editable empty", editable_empty, "field \"editable_paths\" must not be empty", NULL);
    expect_refusal(b, "editable type", editable_not_list, "field \"editable_paths\"", "array of strings");
    expect_refusal(b, "network value", network_bad, "field \"network\" is \"internet\"", "\"loopback\"");
    expect_refusal(b, "network type", network_not_string, "field \"network\"", NULL);
    expect_refusal(b, "results type", results_not_object, "field \"hidden_tests.results\" must be an object", NULL);
    expect_refusal(b, "results format", results_format_bad, "field \"hidden_tests.results.format\" is \"xunit\"",
                   "\"junit\"");
    expect_refusal(b, "junit path", results_junit_no_path, "field \"hidden_tests.results.path\" missing", NULL);
    expect_refusal(b, "tap path", results_tap_path, "field \"hidden_tests.results.path\"", "is for \"junit\"");
    expect_refusal(b, "results escape", results_path_escape, "field \"hidden_tests.results.path\"", "relative");
    expect_refusal(b, "results hook", results_path_hook, "field \"hidden_tests.results.path\"", "hook");
    expect_refusal(b, "results key", results_unknown, "field \"hidden_tests.results.pth\"", "did you mean");
    expect_refusal(b, "junit in judge mode", judge_with_junit, "field \"hidden_tests.results\"", "command mode");
}

/* Parses a spec built from `root` (consumed), checks that it is written
 * back as it reads (parse, write, parse, write: the same text), and returns
 * the task with its first JSON (*json), or NULL. */
static rlvr_task *round_trip(json_t *root, const char *name, char **json) {
    *json = NULL;
    char *text = json_dumps(root, 0);
    json_decref(root);
    rlvr_task *t = NULL, *u = NULL;
    CHECK_OK(rlvr_task_parse(&t, text, strlen(text), name, dir));
    free(text);
    if (!t) return NULL;
    char *a = NULL, *b = NULL;
    CHECK_OK(rlvr_task_to_json(t, 0, &a));
    if (a) CHECK_OK(rlvr_task_parse(&u, a, strlen(a), "again", dir));
    if (u) CHECK_OK(rlvr_task_to_json(u, 0, &b));
    CHECK(a && b && strcmp(a, b) == 0);
    free(b);
    rlvr_task_free(u);
    *json = a;
    return t;
}

/* Command mode with JUnit results: loaded and written back as given. */
static void test_junit_results(void) {
    json_error_t jerr;
    json_t *root = json_loads(good_tests_spec, 0, &jerr);
    json_object_set_new(json_object_get(root, "hidden_tests"), "results",
                        json_pack("{s:s, s:s}", "format", "junit", "path", "build/report.xml"));
    char *a = NULL;
    rlvr_task *t = round_trip(root, "junit.json", &a);
    if (!t) return;
    CHECK(t->hidden_results_junit && strcmp(t->hidden_results_junit, "build/report.xml") == 0);
    CHECK(a && strstr(a, "\"results\":{\"format\":\"junit\",\"path\":\"build/report.xml\"}"));
    free(a);
    rlvr_task_free(t);
}

/* Judge mode and the allow-list: loaded, written back as given; a task
 * without editable_paths gets one from its reference patch, never written. */
static void test_judge_and_editable(void) {
    json_error_t jerr;
    json_t *root = json_loads(good_tests_spec, 0, &jerr);
    json_t *h = json_object_get(root, "hidden_tests");
    json_object_del(h, "command");
    json_object_set_new(h, "judge", json_pack("{s:s, s:[s,s]}", "build", "cc -o \"$RLVR_JUDGE_DIR/j\" tests/hidden.c",
                                              "run", "j", "build/runner"));
    json_object_set_new(h, "build", json_string("make -f Makefile build/runner"));
    json_object_set_new(root, "editable_paths", json_pack("[s,s]", "/*.c", "src/"));
    json_object_set_new(root, "network", json_string("loopback"));
    char *a = NULL;
    rlvr_task *t = round_trip(root, "judge.json", &a);
    if (!t) return;
    CHECK(!t->hidden_test_command && t->judge_build && strstr(t->judge_build, "RLVR_JUDGE_DIR"));
    CHECK(t->judge_run.n == 2 && strcmp(t->judge_run.items[1], "build/runner") == 0);
    CHECK(strcmp(t->hidden_build_command, "make -f Makefile build/runner") == 0);
    CHECK(t->editable_paths.n == 2 && !t->editable_derived);
    CHECK(t->network);
    CHECK(a && strstr(a, "\"editable_paths\":[\"/*.c\",\"src/\"]") && strstr(a, "\"judge\""));
    CHECK(a && strstr(a, "\"network\":\"loopback\""));
    free(a);
    rlvr_task_free(t);

    /* derived from the reference patch (lib.c): the C files at the top */
    CHECK_OK(rlvr_task_parse(&t, good_tests_spec, strlen(good_tests_spec), "good.json", dir));
    if (t) {
        CHECK(t->editable_derived && t->editable_paths.n == 1 && strcmp(t->editable_paths.items[0], "/*.c") == 0);
        CHECK(!t->network); /* the default: none, and not written back (pools' content hashes stay) */
        CHECK_OK(rlvr_task_to_json(t, 0, &a));
        CHECK(a && !strstr(a, "editable_paths") && !strstr(a, "network") && !strstr(a, "results"));
        free(a);
    }
    rlvr_task_free(t);
    rlvr_str_list l = {0};
    CHECK_OK(rlvr_task_editable_from_patch("diff --git a/src/a/b.py b/src/a/b.py\n--- a/src/a/b.py\n+++ b/src/a/b.py\n"
                                           "@@ -1 +1 @@\n-x\n+y\n"
                                           "--- a/Makefile\n+++ /dev/null\n@@ -1 +0,0 @@\n-all:\n"
                                           "--- /dev/null\n+++ b/src/a/c.py\n@@ -0,0 +1 @@\n+z\n"
                                           "--- a/.envrc\n+++ b/.envrc\n@@ -1 +1 @@\n-a\n+b\n"
                                           "--- a/x[1]/y.c\n+++ b/x[1]/y.c\n@@ -1 +1 @@\n-a\n+b\n",
                                           &l));
    const char *want[] = {"/src/a/*.py", "/Makefile", "/.envrc", "/x\\[1\\]/*.c"};
    CHECK_MSG(l.n == 4, "%zu globs", l.n);
    for (size_t i = 0; i < l.n && i < 4; i++)
        CHECK_MSG(strcmp(l.items[i], want[i]) == 0, "glob %zu: %s, want %s", i, l.items[i], want[i]);
    for (size_t i = 0; i < l.n; i++) free(l.items[i]);
    free(l.items);
}

SUBSET(arith_kind_bad, "arith", "kind", json_string("algebra"))
SUBSET(arith_wrong_target, "arith", "target", json_integer(12))
SUBSET(arith_numbers_in_evaluate, "arith", "numbers", json_pack("[i,i]", 1, 2))
SUBDEL(arith_no_expression, "arith", "expression")
DEL(arith_no_reference, "reference_answer")
DEL(arith_no_arith, "arith")
SET(arith_with_repository, "repository", json_string("repo"))
SET(arith_wrong_answers_type, "wrong_answers", json_string("14"))

static void countdown_one_number(json_t *r) {
    json_t *a = json_object_get(r, "arith");
    json_object_set_new(a, "kind", json_string("countdown"));
    json_object_del(a, "expression");
    json_object_set_new(a, "numbers", json_pack("[i]", 5));
}

static void test_malformed_arith_spec(void) {
    const char *b = good_arith_spec;
    expect_refusal(b, "arith kind", arith_kind_bad, "field \"arith.kind\"", "evaluate|countdown");
    expect_refusal(b, "arith target", arith_wrong_target, "field \"arith\"", "not the target");
    expect_refusal(b, "arith numbers", arith_numbers_in_evaluate, "field \"arith.numbers\"", "countdown");
    expect_refusal(b, "arith expression", arith_no_expression, "field \"arith.expression\" missing", NULL);
    expect_refusal(b, "arith reference", arith_no_reference, "field \"reference_answer\" missing", NULL);
    expect_refusal(b, "arith missing", arith_no_arith, "field \"arith\" missing", NULL);
    expect_refusal(b, "arith repository", arith_with_repository, "field \"repository\" is not used", NULL);
    expect_refusal(b, "arith wrong answers", arith_wrong_answers_type, "field \"wrong_answers\"", NULL);
    expect_refusal(b, "countdown numbers", countdown_one_number, "field \"arith.numbers\"", "2..6");
}

static void test_not_json(void) {
    rlvr_task *t = NULL;
    CHECK(rlvr_task_parse(&t, "{\"id\": ", 7, "x.json", ".") == RLVR_EFORMAT);
    CHECK(strstr(rlvr_error_last(), "task spec x.json: not valid JSON at line 1"));
    CHECK(rlvr_task_parse(&t, "[1]", 3, "x.json", ".") == RLVR_EFORMAT);
    CHECK(strstr(rlvr_error_last(), "must be a JSON object"));
    const char *dup = "{\"id\": \"a\", \"id\": \"b\"}";
    CHECK(rlvr_task_parse(&t, dup, strlen(dup), "x.json", ".") == RLVR_EFORMAT);
    CHECK(strstr(rlvr_error_last(), "duplicate"));
    char path[4096];
    snprintf(path, sizeof path, "%s/absent.json", dir);
    CHECK(rlvr_task_load_file(&t, path) == RLVR_EIO);
    CHECK(strstr(rlvr_error_last(), "absent.json"));
    CHECK(t == NULL);
    /* SWE-bench keeps the test lists as strings holding JSON arrays */
    json_error_t jerr;
    json_t *root = json_loads(good_tests_spec, 0, &jerr);
    json_object_set_new(root, "FAIL_TO_PASS", json_string("[\"a\", \"b\"]"));
    char *text = json_dumps(root, 0);
    json_decref(root);
    CHECK_OK(rlvr_task_parse(&t, text, strlen(text), "swe.json", dir));
    CHECK(t && t->fail_to_pass.n == 2 && strcmp(t->fail_to_pass.items[1], "b") == 0);
    rlvr_task_free(t);
    free(text);
}

static void test_split_names(void) {
    rlvr_split s;
    CHECK_OK(rlvr_split_parse("regression", &s));
    CHECK(s == RLVR_SPLIT_REGRESSION);
    CHECK(strcmp(rlvr_split_name(RLVR_SPLIT_EVAL), "eval") == 0);
    CHECK(rlvr_split_parse("evall", &s) == RLVR_EINVAL);
    CHECK(strstr(rlvr_error_last(), "did you mean \"eval\""));
    CHECK(rlvr_split_name(RLVR_SPLIT_COUNT) == NULL);
}

/* Results as expected files, a creation time and a verifier timeout: loaded
 * and written back as given; the expected copies may not enter the enclave
 * (hidden), nor be read-only there (public), nor serve a judge. */
static void expected_root(json_t *h, const char *root, const char *file) {
    json_object_set_new(h, "results", json_pack("{s:s, s:s, s:[s]}", "format", "expected", "root", root, "files", file));
}
static void expected_missing_root(json_t *r) { expected_root(json_object_get(r, "hidden_tests"), "nowhere", "out.txt"); }
static void expected_not_a_file(json_t *r) { expected_root(json_object_get(r, "hidden_tests"), "expected", "none.txt"); }
static void expected_is_hidden(json_t *r) {
    expected_root(json_object_get(r, "hidden_tests"), "hidden", "tests/hidden.c");
}
static void expected_is_public(json_t *r) {
    expected_root(json_object_get(r, "hidden_tests"), "expected", "out.txt");
    json_object_set_new(json_object_get(r, "public_tests"), "files", json_pack("[s]", "out.txt"));
}
static void expected_in_public(json_t *r) {
    json_object_set_new(json_object_get(r, "public_tests"), "results",
                        json_pack("{s:s, s:s, s:[s]}", "format", "expected", "root", "expected", "files", "out.txt"));
}
static void expected_with_path(json_t *r) {
    json_object_set_new(json_object_get(r, "hidden_tests"), "results",
                        json_pack("{s:s, s:s, s:s, s:[s]}", "format", "expected", "path", "x", "root", "expected",
                                  "files", "out.txt"));
}
static void bad_created_at(json_t *r) { json_object_set_new(r, "created_at", json_string("yesterday")); }
static void bad_verify_timeout(json_t *r) {
    json_object_set_new(json_object_get(r, "budgets"), "verify_timeout_s", json_integer(0));
}

static void test_expected_and_times(void) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "mkdir -p %s/expected && echo 42 > %s/expected/out.txt", dir, dir);
    CHECK(run_cmd(cmd, NULL) == 0);
    json_error_t jerr;
    json_t *root = json_loads(good_tests_spec, 0, &jerr);
    expected_root(json_object_get(root, "hidden_tests"), "expected", "out.txt");
    json_object_set_new(root, "created_at", json_string("2019-03-04T12:30:00.25+01:00"));
    json_object_set_new(json_object_get(root, "budgets"), "verify_timeout_s", json_real(90));
    char *a = NULL;
    rlvr_task *t = round_trip(root, "expected.json", &a);
    if (t) {
        CHECK(t->expected_root && t->expected_files.n == 1 && strcmp(t->expected_files.items[0], "out.txt") == 0);
        CHECK(t->has_created_at && t->created_at == 1551699000); /* 11:30 UTC */
        CHECK(t->budgets.verify_timeout_s == 90);
        CHECK(a && strstr(a, "\"results\":{\"format\":\"expected\",\"root\":\"expected\",\"files\":[\"out.txt\"]}"));
        CHECK(a && strstr(a, "\"created_at\":\"2019-03-04T11:30:00Z\"") && strstr(a, "\"verify_timeout_s\":90"));
    }
    free(a);
    rlvr_task_free(t);
    int64_t when = 0;
    CHECK(rlvr_task_time_parse("2019-03-04", &when) == 0 && when == 1551657600);
    CHECK(rlvr_task_time_parse("1970-01-01T00:00:00Z", &when) == 0 && when == 0);
    CHECK(rlvr_task_time_parse("2019-13-04", &when) == RLVR_EINVAL);
    CHECK(rlvr_task_time_parse("2019-03-04 junk", &when) == RLVR_EINVAL);
    char back[21];
    rlvr_task_time_format(1551699000, back);
    CHECK(strcmp(back, "2019-03-04T11:30:00Z") == 0);
    expect_refusal(good_tests_spec, "expected root missing", expected_missing_root, "hidden_tests.results.root",
                   "is not a directory");
    expect_refusal(good_tests_spec, "expected file missing", expected_not_a_file, "hidden_tests.results.files",
                   "none.txt");
    expect_refusal(good_tests_spec, "expected file also hidden", expected_is_hidden, "tests/hidden.c",
                   "never enters the enclave");
    expect_refusal(good_tests_spec, "expected file also public", expected_is_public, "also a public test file", NULL);
    expect_refusal(good_tests_spec, "expected in public tests", expected_in_public, "public_tests.results",
                   "is for hidden_tests");
    expect_refusal(good_tests_spec, "expected with a path", expected_with_path, "hidden_tests.results.path", NULL);
    expect_refusal(good_tests_spec, "bad created_at", bad_created_at, "created_at", "2019-03-04T12:30:00Z");
    expect_refusal(good_tests_spec, "bad verify timeout", bad_verify_timeout, "budgets.verify_timeout_s", NULL);
}

int main(void) {
    make_fixture();
    test_good_tests_spec();
    test_good_arith_spec();
    test_malformed_tests_spec();
    test_malformed_arith_spec();
    test_not_json();
    test_judge_and_editable();
    test_junit_results();
    test_expected_and_times();
    test_split_names();
    rm_rf(dir);
    free(dir);
    return test_summary("test_task_spec");
}
