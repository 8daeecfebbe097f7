/* Arithmetic: expression evaluation, answer scoring, and the generated
 * "arith" family (every reference answer scores 1, every wrong answer 0). */
#include "envs/arith.h"
#include "envs/gen.h"
#include "test.h"

#include <stdbool.h>

static int64_t eval(const char *s, int *rc) {
    int64_t v = 0;
    *rc = rlvr_arith_eval(s, strlen(s), &v);
    return v;
}

static void test_eval(void) {
    int rc;
    CHECK(eval("7+8*3", &rc) == 31 && rc == 0);
    CHECK(eval("(7+8)*3", &rc) == 45 && rc == 0);
    CHECK(eval(" 20 - 4 - 3 ", &rc) == 13 && rc == 0);
    CHECK(eval("100/5/2", &rc) == 10 && rc == 0);
    CHECK(eval("-3*-2", &rc) == 6 && rc == 0);
    CHECK(eval("2*(3+(4-1))", &rc) == 12 && rc == 0);
    eval("7/2", &rc);
    CHECK(rc == RLVR_EINVAL && strstr(rlvr_error_last(), "not exact"));
    eval("1/0", &rc);
    CHECK(rc == RLVR_EINVAL && strstr(rlvr_error_last(), "division by zero"));
    eval("9223372036854775807+1", &rc);
    CHECK(rc == RLVR_EINVAL && strstr(rlvr_error_last(), "overflow"));
    eval("99999999999999999999", &rc);
    CHECK(rc == RLVR_EINVAL && strstr(rlvr_error_last(), "too large"));
    eval("3+", &rc);
    CHECK(rc == RLVR_EINVAL);
    eval("(3+4", &rc);
    CHECK(rc == RLVR_EINVAL && strstr(rlvr_error_last(), "missing ')'"));
    eval("3 4", &rc);
    CHECK(rc == RLVR_EINVAL && strstr(rlvr_error_last(), "unexpected character"));
    eval("", &rc);
    CHECK(rc == RLVR_EINVAL);
    char deep[200];
    memset(deep, '(', 40);
    strcpy(deep + 40, "1");
    memset(deep + 41, ')', 40);
    deep[81] = '\0';
    eval(deep, &rc);
    CHECK(rc == RLVR_EINVAL && strstr(rlvr_error_last(), "nested too deeply"));
}

static double score(const rlvr_arith_problem *p, const char *reply) {
    double s = -1;
    CHECK_OK(rlvr_arith_score(p, reply, strlen(reply), &s));
    return s;
}

static void test_score_evaluate(void) {
    rlvr_arith_problem p = {.kind = RLVR_ARITH_EVALUATE, .expression = "7+8*3", .target = 31};
    CHECK_OK(rlvr_arith_check_problem(&p));
    CHECK(score(&p, "31") == 1.0);
    CHECK(score(&p, "  31 \n") == 1.0);
    CHECK(score(&p, "Answer: 31") == 1.0);
    CHECK(score(&p, "8*3 is 24, plus 7.\n31\n") == 1.0);
    CHECK(score(&p, "30") == 0.0);
    CHECK(score(&p, "31.0") == 0.0);
    CHECK(score(&p, "7+24") == 0.0); /* the value, not an expression */
    CHECK(score(&p, "31 is the answer") == 0.0);
    CHECK(score(&p, "") == 0.0);
    rlvr_arith_problem neg = {.kind = RLVR_ARITH_EVALUATE, .expression = "3-10", .target = -7};
    CHECK(score(&neg, "-7") == 1.0);
    rlvr_arith_problem bad = {.kind = RLVR_ARITH_EVALUATE, .expression = "3-10", .target = 7};
    double s;
    CHECK(rlvr_arith_score(&bad, "7", 1, &s) == RLVR_EINVAL && s == 0.0);
    CHECK(strstr(rlvr_error_last(), "not the target"));
}

static void test_score_countdown(void) {
    rlvr_arith_problem p = {.kind = RLVR_ARITH_COUNTDOWN, .n_numbers = 3, .numbers = {3, 5, 7}, .target = 22};
    CHECK(score(&p, "3*5+7") == 1.0);
    CHECK(score(&p, "7+5*3") == 1.0);
    CHECK(score(&p, "(7 + 5 * 3)") == 1.0);
    CHECK(score(&p, "3*5+7 = 22") == 1.0);
    CHECK(score(&p, "answer: 5*3+7") == 1.0);
    CHECK(score(&p, "22") == 0.0);        /* uses none of the numbers */
    CHECK(score(&p, "3*5+7+0") == 0.0);   /* an extra number */
    CHECK(score(&p, "5*5-3") == 0.0);     /* 5 twice, 7 unused */
    CHECK(score(&p, "3*7+5") == 0.0);     /* 26 */
    CHECK(score(&p, "-3+5*5") == 0.0);    /* negation is not an operation */
    CHECK(score(&p, "3*5+7+") == 0.0);
    rlvr_arith_problem div = {.kind = RLVR_ARITH_COUNTDOWN, .n_numbers = 2, .numbers = {8, 3}, .target = 2};
    CHECK(score(&div, "8/3") == 0.0); /* inexact division */
    rlvr_arith_problem one = {.kind = RLVR_ARITH_COUNTDOWN, .n_numbers = 1, .numbers = {8}, .target = 8};
    double s;
    CHECK(rlvr_arith_score(&one, "8", 1, &s) == RLVR_EINVAL);
}

/* Generated tasks: references score 1, wrong answers 0, prompts name the
 * problem, templates belong to the split, and splits share no key. */
static void test_generated(void) {
    const char *train_templates[8], *held[8];
    int n_train = rlvr_task_gen_templates("arith", RLVR_SPLIT_TRAIN, train_templates, 8);
    int n_held = rlvr_task_gen_templates("arith", RLVR_SPLIT_REGRESSION, held, 8);
    CHECK(n_train >= 4 && n_held >= 1);
    for (int i = 0; i < n_train; i++)
        for (int j = 0; j < n_held; j++) CHECK(strcmp(train_templates[i], held[j]) != 0);
    enum { N = 150 };
    static char keys[RLVR_SPLIT_COUNT][N][128];
    for (int split = 0; split < RLVR_SPLIT_COUNT; split++) {
        for (int d = 1; d <= 3; d++) {
            rlvr_task_gen_options o = RLVR_TASK_GEN_OPTIONS_INIT;
            o.family = "arith";
            o.seed = 11;
            o.split = (rlvr_split)split;
            o.difficulty = d;
            int seen_templates = 0;
            for (int i = 0; i < N; i++) {
                rlvr_task *t = NULL;
                CHECK_OK(rlvr_task_gen_one(&t, &o, i, "unused"));
                if (!t) continue;
                CHECK(t->verifier == RLVR_VERIFIER_ARITH && t->split == o.split && t->tools == 0);
                CHECK(t->budgets.turns == 1);
                CHECK_MSG(score(&t->arith, t->reference_answer) == 1.0, "%s: reference %s", t->id,
                          t->reference_answer);
                CHECK(t->wrong_answers.n >= 1);
                for (size_t w = 0; w < t->wrong_answers.n; w++)
                    CHECK_MSG(score(&t->arith, t->wrong_answers.items[w]) == 0.0, "%s: wrong answer %s passes",
                              t->id, t->wrong_answers.items[w]);
                bool allowed = false;
                const char **list = split == RLVR_SPLIT_REGRESSION ? held : train_templates;
                int n_list = split == RLVR_SPLIT_REGRESSION ? n_held : n_train;
                for (int k = 0; k < n_list; k++)
                    if (strcmp(list[k], t->template_name) == 0) allowed = true, seen_templates |= 1 << k;
                CHECK_MSG(allowed, "%s: template %s in split %s", t->id, t->template_name, rlvr_split_name(o.split));
                CHECK(strlen(t->prompt) > 5 && strlen(t->prompt) < 100);
                if (d == 1) snprintf(keys[split][i], sizeof keys[split][i], "%s", t->split_key);
                rlvr_task_free(t);
            }
            int n_list = split == RLVR_SPLIT_REGRESSION ? n_held : n_train;
            CHECK_MSG(seen_templates == (1 << n_list) - 1, "split %d difficulty %d: not every template drawn", split, d);
        }
    }
    /* split hygiene by construction: no key is in two splits */
    for (int a = 0; a < RLVR_SPLIT_COUNT; a++)
        for (int b = a + 1; b < RLVR_SPLIT_COUNT; b++)
            for (int i = 0; i < N; i++)
                for (int j = 0; j < N; j++)
                    CHECK_MSG(strcmp(keys[a][i], keys[b][j]) != 0, "key %s in splits %d and %d", keys[a][i], a, b);
}

int main(void) {
    test_eval();
    test_score_evaluate();
    test_score_countdown();
    test_generated();
    return test_summary("test_arith");
}
