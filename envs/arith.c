/* envs/arith.c — integer expression evaluation and answer scoring. */
#include "envs/arith.h"

#include "core/error.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#define MAX_DEPTH 32
#define MAX_LITERALS 16

typedef struct {
    const char *s;
    size_t len, pos;
    int depth;
    int64_t literals[MAX_LITERALS];
    int n_literals;   /* may exceed MAX_LITERALS: then only the count is right */
    bool negation;    /* a unary minus was used */
    const char *error;
} parser;

static void skip_space(parser *p) {
    while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t')) p->pos++;
}

static int peek(parser *p) {
    skip_space(p);
    return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1;
}

static bool fail(parser *p, const char *why) {
    if (!p->error) p->error = why;
    return false;
}

static bool parse_expr(parser *p, int64_t *out);

static bool parse_primary(parser *p, int64_t *out) {
    int c = peek(p);
    if (c == '(') {
        if (++p->depth > MAX_DEPTH) return fail(p, "nested too deeply");
        p->pos++;
        if (!parse_expr(p, out)) return false;
        if (peek(p) != ')') return fail(p, "missing ')'");
        p->pos++;
        p->depth--;
        return true;
    }
    if (c < 0 || !isdigit(c)) return fail(p, "expected a number or '('");
    int64_t v = 0;
    while (p->pos < p->len && isdigit((unsigned char)p->s[p->pos])) {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, p->s[p->pos] - '0', &v))
            return fail(p, "number too large");
        p->pos++;
    }
    if (p->n_literals < MAX_LITERALS) p->literals[p->n_literals] = v;
    p->n_literals++;
    *out = v;
    return true;
}

static bool parse_unary(parser *p, int64_t *out) {
    if (peek(p) == '-') {
        if (++p->depth > MAX_DEPTH) return fail(p, "nested too deeply");
        p->pos++;
        p->negation = true;
        int64_t v;
        if (!parse_unary(p, &v)) return false;
        if (__builtin_sub_overflow((int64_t)0, v, out)) return fail(p, "overflow");
        p->depth--;
        return true;
    }
    return parse_primary(p, out);
}

static bool parse_term(parser *p, int64_t *out) {
    int64_t acc;
    if (!parse_unary(p, &acc)) return false;
    for (;;) {
        int c = peek(p);
        if (c != '*' && c != '/') break;
        p->pos++;
        int64_t rhs;
        if (!parse_unary(p, &rhs)) return false;
        if (c == '*') {
            if (__builtin_mul_overflow(acc, rhs, &acc)) return fail(p, "overflow");
        } else {
            if (rhs == 0) return fail(p, "division by zero");
            if (acc == INT64_MIN && rhs == -1) return fail(p, "overflow");
            if (acc % rhs != 0) return fail(p, "division is not exact");
            acc /= rhs;
        }
    }
    *out = acc;
    return true;
}

static bool parse_expr(parser *p, int64_t *out) {
    int64_t acc;
    if (!parse_term(p, &acc)) return false;
    for (;;) {
        int c = peek(p);
        if (c != '+' && c != '-') break;
        p->pos++;
        int64_t rhs;
        if (!parse_term(p, &rhs)) return false;
        bool over = c == '+' ? __builtin_add_overflow(acc, rhs, &acc) : __builtin_sub_overflow(acc, rhs, &acc);
        if (over) return fail(p, "overflow");
    }
    *out = acc;
    return true;
}

static bool parse_all(parser *p, const char *expr, size_t len, int64_t *value) {
    memset(p, 0, sizeof *p);
    p->s = expr;
    p->len = len;
    if (!parse_expr(p, value)) return false;
    if (peek(p) >= 0) return fail(p, "unexpected character after the expression");
    return true;
}

int rlvr_arith_eval(const char *expr, size_t len, int64_t *value) {
    parser p;
    if (!parse_all(&p, expr, len, value))
        return rlvr_error_set(RLVR_EINVAL, "arithmetic expression \"%.*s\": %s at byte %zu",
                              (int)(len > 64 ? 64 : len), expr, p.error, p.pos);
    return 0;
}

const char *rlvr_arith_kind_name(rlvr_arith_kind kind) {
    return kind == RLVR_ARITH_EVALUATE ? "evaluate" : kind == RLVR_ARITH_COUNTDOWN ? "countdown" : NULL;
}

int rlvr_arith_kind_parse(const char *name, rlvr_arith_kind *out) {
    if (strcmp(name, "evaluate") == 0) *out = RLVR_ARITH_EVALUATE;
    else if (strcmp(name, "countdown") == 0) *out = RLVR_ARITH_COUNTDOWN;
    else return rlvr_error_set(RLVR_EINVAL, "arithmetic kind \"%s\" is not evaluate|countdown", name);
    return 0;
}

int rlvr_arith_check_problem(const rlvr_arith_problem *p) {
    if (p->kind == RLVR_ARITH_EVALUATE) {
        size_t len = strnlen(p->expression, RLVR_ARITH_EXPR_CAP);
        if (len == 0 || len == RLVR_ARITH_EXPR_CAP)
            return rlvr_error_set(RLVR_EINVAL, "arithmetic problem: expression empty or longer than %d bytes",
                                  RLVR_ARITH_EXPR_CAP - 1);
        int64_t v;
        RLVR_TRY(rlvr_arith_eval(p->expression, len, &v));
        if (v != p->target)
            return rlvr_error_set(RLVR_EINVAL, "arithmetic problem: \"%s\" is %lld, not the target %lld",
                                  p->expression, (long long)v, (long long)p->target);
        return 0;
    }
    if (p->kind == RLVR_ARITH_COUNTDOWN) {
        if (p->n_numbers < 2 || p->n_numbers > RLVR_ARITH_MAX_NUMBERS)
            return rlvr_error_set(RLVR_EINVAL, "countdown problem: %d numbers, need 2..%d", p->n_numbers,
                                  RLVR_ARITH_MAX_NUMBERS);
        for (int i = 0; i < p->n_numbers; i++)
            if (p->numbers[i] < 0)
                return rlvr_error_set(RLVR_EINVAL, "countdown problem: number %lld is negative",
                                      (long long)p->numbers[i]);
        return 0;
    }
    return rlvr_error_set(RLVR_EINVAL, "arithmetic problem: unknown kind %d", (int)p->kind);
}

/* The answer part of a reply: last non-empty line, trimmed, without "answer:". */
static void extract_answer(const char *reply, size_t len, const char **out, size_t *out_len) {
    size_t end = len;
    while (end > 0 && isspace((unsigned char)reply[end - 1])) end--;
    size_t start = end;
    while (start > 0 && reply[start - 1] != '\n') start--;
    while (start < end && isspace((unsigned char)reply[start])) start++;
    if (end - start >= 7 && strncasecmp(reply + start, "answer:", 7) == 0) {
        start += 7;
        while (start < end && isspace((unsigned char)reply[start])) start++;
    }
    *out = reply + start;
    *out_len = end - start;
}

static bool is_integer_literal(const char *s, size_t n) {
    size_t i = (n > 0 && s[0] == '-') ? 1 : 0;
    if (i == n) return false;
    for (; i < n; i++)
        if (!isdigit((unsigned char)s[i])) return false;
    return true;
}

static bool same_multiset(const int64_t *a, int na, const int64_t *b, int nb) {
    if (na != nb) return false;
    bool used[RLVR_ARITH_MAX_NUMBERS] = {false};
    for (int i = 0; i < na; i++) {
        bool found = false;
        for (int j = 0; j < nb && !found; j++)
            if (!used[j] && b[j] == a[i]) used[j] = found = true;
        if (!found) return false;
    }
    return true;
}

int rlvr_arith_score(const rlvr_arith_problem *p, const char *reply, size_t len, double *score) {
    *score = 0.0;
    RLVR_TRY(rlvr_arith_check_problem(p));
    const char *ans;
    size_t n;
    extract_answer(reply, len, &ans, &n);
    parser ps;
    int64_t value;
    if (p->kind == RLVR_ARITH_EVALUATE) {
        if (is_integer_literal(ans, n) && parse_all(&ps, ans, n, &value) && value == p->target) *score = 1.0;
        return 0;
    }
    const char *eq = memchr(ans, '=', n);
    if (eq) n = (size_t)(eq - ans);
    if (!parse_all(&ps, ans, n, &value) || ps.negation) return 0;
    if (ps.n_literals > RLVR_ARITH_MAX_NUMBERS) return 0;
    if (value == p->target && same_multiset(ps.literals, ps.n_literals, p->numbers, p->n_numbers)) *score = 1.0;
    return 0;
}
