/* envs/gen_arith.c — the "arith" family: single-turn arithmetic problems. */
#include "core/error.h"
#include "envs/arith.h"
#include "envs/gen_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { T_ADD, T_SUB, T_MUL, T_MIXED, T_COUNTDOWN3, T_PAREN, T_COUNTDOWN4, T_COUNT };

static const char *const template_names[T_COUNT] = {"add", "sub", "mul", "mixed", "countdown3", "paren", "countdown4"};
/* Templates of train and eval; the rest are the regression split's. */
static const int trained[] = {T_ADD, T_SUB, T_MUL, T_MIXED, T_COUNTDOWN3};
static const int held_out[] = {T_PAREN, T_COUNTDOWN4};

#define N_TRAINED (int)(sizeof trained / sizeof trained[0])
#define N_HELD_OUT (int)(sizeof held_out / sizeof held_out[0])

int gen_arith_templates(rlvr_split split, const char **names, int cap) {
    const int *list = split == RLVR_SPLIT_REGRESSION ? held_out : trained;
    int n = split == RLVR_SPLIT_REGRESSION ? N_HELD_OUT : N_TRAINED;
    for (int i = 0; i < n && i < cap; i++) names[i] = template_names[list[i]];
    return n;
}

/* Uniform in [lo, hi]. */
static int64_t draw(rlvr_rng_stream *s, int64_t lo, int64_t hi) {
    return lo + (int64_t)rlvr_rng_next_below(s, (uint32_t)(hi - lo + 1));
}

static void make_evaluate(rlvr_rng_stream *s, int tmpl, int difficulty, char *expr, size_t cap) {
    static const int64_t max_add[3] = {9, 99, 999}, max_mul[3] = {9, 20, 99};
    int64_t M = max_add[difficulty - 1], Mm = max_mul[difficulty - 1];
    int64_t a = draw(s, 1, M), b = draw(s, 1, M), c = draw(s, 2, Mm), d = draw(s, 2, Mm);
    uint32_t form = rlvr_rng_next_below(s, 3);
    switch (tmpl) {
    case T_ADD: snprintf(expr, cap, "%lld+%lld", (long long)a, (long long)b); break;
    case T_SUB:
        snprintf(expr, cap, "%lld-%lld", (long long)(a > b ? a : b), (long long)(a > b ? b : a));
        break;
    case T_MUL: snprintf(expr, cap, "%lld*%lld", (long long)c, (long long)d); break;
    case T_MIXED:
        if (form == 0) snprintf(expr, cap, "%lld+%lld*%lld", (long long)a, (long long)c, (long long)d);
        else if (form == 1) snprintf(expr, cap, "%lld*%lld+%lld", (long long)c, (long long)d, (long long)a);
        else snprintf(expr, cap, "%lld*%lld-%lld", (long long)c, (long long)d, (long long)a);
        break;
    default: /* T_PAREN */
        if (form == 0) snprintf(expr, cap, "(%lld+%lld)*%lld", (long long)a, (long long)b, (long long)c);
        else if (form == 1) snprintf(expr, cap, "%lld*(%lld+%lld)", (long long)c, (long long)a, (long long)b);
        else
            snprintf(expr, cap, "(%lld-%lld)*%lld", (long long)(a > b ? a : b), (long long)(a > b ? b : a),
                     (long long)c);
        break;
    }
}

/* A countdown solution built as a random expression tree over the numbers. */
typedef struct {
    int64_t value;
    int prec; /* 1: + -, 2: * /, 3: a number or parenthesised */
    char text[RLVR_ARITH_EXPR_CAP];
} node;

static void wrap(char *out, size_t cap, const node *n, bool paren) {
    snprintf(out, cap, paren ? "(%s)" : "%s", n->text);
}

static bool combine(const node *l, const node *r, char op, node *out) {
    int64_t v;
    switch (op) {
    case '+': v = l->value + r->value; break;
    case '-':
        if (l->value < r->value) return false; /* no negative intermediate results */
        v = l->value - r->value;
        break;
    case '*':
        if (l->value == 1 || r->value == 1) return false; /* no free moves */
        v = l->value * r->value;
        break;
    default:
        if (r->value <= 1 || l->value % r->value != 0) return false;
        v = l->value / r->value;
        break;
    }
    int prec = (op == '+' || op == '-') ? 1 : 2;
    char ls[RLVR_ARITH_EXPR_CAP], rs[RLVR_ARITH_EXPR_CAP];
    wrap(ls, sizeof ls, l, l->prec < prec);
    wrap(rs, sizeof rs, r, r->prec < prec || (r->prec == prec && (op == '-' || op == '/')));
    size_t nl = strlen(ls), nr = strlen(rs);
    if (nl + nr + 2 > sizeof out->text) return false;
    memcpy(out->text, ls, nl);
    out->text[nl] = op;
    memcpy(out->text + nl + 1, rs, nr + 1);
    out->value = v;
    out->prec = prec;
    return true;
}

static void make_countdown(rlvr_rng_stream *s, int n, int difficulty, rlvr_arith_problem *p, char *solution) {
    static const int64_t max_number[3] = {9, 25, 100};
    node nodes[RLVR_ARITH_MAX_NUMBERS];
    p->kind = RLVR_ARITH_COUNTDOWN;
    p->n_numbers = n;
    for (int i = 0; i < n; i++) {
        p->numbers[i] = draw(s, 1, max_number[difficulty - 1]);
        nodes[i].value = p->numbers[i];
        nodes[i].prec = 3;
        snprintf(nodes[i].text, sizeof nodes[i].text, "%lld", (long long)p->numbers[i]);
    }
    int live = n;
    while (live > 1) {
        int i = (int)rlvr_rng_next_below(s, (uint32_t)live);
        int j = (int)rlvr_rng_next_below(s, (uint32_t)(live - 1));
        if (j >= i) j++;
        static const char ops[4] = {'+', '-', '*', '/'};
        uint32_t first = rlvr_rng_next_below(s, 4);
        node merged;
        bool done = false;
        for (int k = 0; k < 4 && !done; k++) done = combine(&nodes[i], &nodes[j], ops[(first + (uint32_t)k) % 4], &merged);
        if (!done) combine(&nodes[i], &nodes[j], '+', &merged);
        int lo = i < j ? i : j, hi = i < j ? j : i;
        nodes[lo] = merged;
        nodes[hi] = nodes[live - 1];
        live--;
    }
    p->target = nodes[0].value;
    snprintf(solution, RLVR_ARITH_EXPR_CAP, "%s", nodes[0].text);
}

static int compare_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void signature(const rlvr_arith_problem *p, char *out, size_t cap) {
    if (p->kind == RLVR_ARITH_EVALUATE) {
        snprintf(out, cap, "arith/%s", p->expression);
        return;
    }
    int64_t sorted[RLVR_ARITH_MAX_NUMBERS];
    memcpy(sorted, p->numbers, sizeof sorted);
    qsort(sorted, (size_t)p->n_numbers, sizeof sorted[0], compare_i64);
    size_t n = (size_t)snprintf(out, cap, "arith/countdown/");
    for (int i = 0; i < p->n_numbers && n < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s%lld", i ? "," : "", (long long)sorted[i]);
    if (n < cap) snprintf(out + n, cap - n, "=%lld", (long long)p->target);
}

static bool scores_zero(const rlvr_arith_problem *p, const char *answer) {
    double score;
    return rlvr_arith_score(p, answer, strlen(answer), &score) == 0 && score == 0.0;
}

/* Wrong answers: near misses the check must reject. */
static void wrong_answers(const rlvr_arith_problem *p, const char *reference, char out[3][RLVR_ARITH_EXPR_CAP],
                          int *n) {
    *n = 0;
    if (p->kind == RLVR_ARITH_EVALUATE) {
        snprintf(out[(*n)++], RLVR_ARITH_EXPR_CAP, "%lld", (long long)(p->target + 1));
        snprintf(out[(*n)++], RLVR_ARITH_EXPR_CAP, "%lld", (long long)(p->target - 1));
        return;
    }
    /* the reference with one operator changed, when that changes the value */
    static const char ops[4] = {'+', '-', '*', '/'};
    for (size_t i = 0; reference[i] && *n == 0; i++) {
        if (!strchr("+-*/", reference[i])) continue;
        for (int k = 0; k < 4 && *n == 0; k++) {
            if (ops[k] == reference[i]) continue;
            char candidate[RLVR_ARITH_EXPR_CAP];
            snprintf(candidate, sizeof candidate, "%s", reference);
            candidate[i] = ops[k];
            int64_t v;
            if (rlvr_arith_eval(candidate, strlen(candidate), &v) == 0 && v != p->target && scores_zero(p, candidate))
                snprintf(out[(*n)++], RLVR_ARITH_EXPR_CAP, "%s", candidate);
        }
    }
    rlvr_error_clear();
    /* the target alone uses none of the numbers */
    snprintf(out[(*n)++], RLVR_ARITH_EXPR_CAP, "%lld", (long long)p->target);
}

static int fill_task(rlvr_task *t, const rlvr_task_gen_options *opts, int64_t index, int tmpl,
                     const char *reference, const char *sig) {
    char id[64], prompt[256];
    rlvr_task_gen_id(id, sizeof id, opts, index);
    const rlvr_arith_problem *p = &t->arith;
    if (p->kind == RLVR_ARITH_EVALUATE) snprintf(prompt, sizeof prompt, "What is %s?", p->expression);
    else {
        char nums[128];
        size_t n = 0;
        for (int i = 0; i < p->n_numbers; i++)
            n += (size_t)snprintf(nums + n, sizeof nums - n, "%s%lld", i ? " " : "", (long long)p->numbers[i]);
        snprintf(prompt, sizeof prompt, "Make %lld from %s using + - * / and each number once.", (long long)p->target,
                 nums);
    }
    RLVR_TRY(gen_strdup(&t->source, "(generated)"));
    RLVR_TRY(gen_strdup(&t->base_dir, "."));
    RLVR_TRY(gen_strdup(&t->id, id));
    RLVR_TRY(gen_strdup(&t->family, "arith"));
    RLVR_TRY(gen_strdup(&t->template_name, template_names[tmpl]));
    t->split = opts->split;
    RLVR_TRY(gen_strdup(&t->split_key, sig));
    RLVR_TRY(gen_strdup(&t->prompt, prompt));
    t->verifier = RLVR_VERIFIER_ARITH;
    t->tools = 0;
    t->budgets = (rlvr_task_budgets){.turns = 1, .policy_tokens = 128, .context_tokens = 512};
    RLVR_TRY(gen_strdup(&t->reference_answer, reference));
    char wrong[3][RLVR_ARITH_EXPR_CAP];
    int n_wrong;
    wrong_answers(p, reference, wrong, &n_wrong);
    const char *items[3] = {wrong[0], wrong[1], wrong[2]};
    return gen_list(&t->wrong_answers, items, (size_t)n_wrong);
}

int gen_arith_task(rlvr_task **out, const rlvr_task_gen_options *opts, int64_t index) {
    rlvr_rng_stream s;
    gen_stream(&s, opts, FAMILY_ARITH, index);
    const int *list = opts->split == RLVR_SPLIT_REGRESSION ? held_out : trained;
    int n_list = opts->split == RLVR_SPLIT_REGRESSION ? N_HELD_OUT : N_TRAINED;
    int tmpl = list[rlvr_rng_next_below(&s, (uint32_t)n_list)];
    rlvr_arith_problem p;
    char reference[RLVR_ARITH_EXPR_CAP], sig[256];
    /* Redraw until the problem's bucket belongs to the split (2 of 10 for
     * eval: about 5 draws); 1000 draws without one is a generator bug. */
    for (int attempt = 0;; attempt++) {
        if (attempt == 1000)
            return RLVR_FAIL(RLVR_EINVAL, "arith: no problem for split %s after 1000 draws", rlvr_split_name(opts->split));
        memset(&p, 0, sizeof p);
        if (tmpl == T_COUNTDOWN3 || tmpl == T_COUNTDOWN4) {
            make_countdown(&s, tmpl == T_COUNTDOWN3 ? 3 : 4, opts->difficulty, &p, reference);
        } else {
            p.kind = RLVR_ARITH_EVALUATE;
            make_evaluate(&s, tmpl, opts->difficulty, p.expression, sizeof p.expression);
            RLVR_TRY(rlvr_arith_eval(p.expression, strlen(p.expression), &p.target));
            snprintf(reference, sizeof reference, "%lld", (long long)p.target);
        }
        signature(&p, sig, sizeof sig);
        if (gen_bucket_allows(sig, opts->split)) break;
    }
    rlvr_task *t = calloc(1, sizeof *t);
    if (!t) return RLVR_FAIL(RLVR_ENOMEM, "out of memory generating a task");
    t->arith = p;
    int rc = fill_task(t, opts, index, tmpl, reference, sig);
    if (rc < 0) {
        rlvr_task_free(t);
        return rc;
    }
    *out = t;
    return 0;
}
