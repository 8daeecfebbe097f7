/* envs/arith.h — single-turn arithmetic problems, verified in process.
 *
 * Two kinds:
 * - EVALUATE:  "Compute 7+8*3." The answer is the integer value (31).
 * - COUNTDOWN: "Reach 22 with 3 5 7 ..." The answer is an expression that
 *              uses every given number exactly once, with + - * / and
 *              parentheses, and equals the target (3*5+7). Division must be
 *              exact.
 *
 * The answer is read from the policy's final reply: its last non-empty line,
 * without surrounding spaces and without a leading "answer:" (any case). For
 * COUNTDOWN, anything from the first '=' on is ignored ("3*5+7 = 22"). The
 * score is 1 for a correct answer and 0 otherwise; a malformed answer is a
 * wrong answer, never an error. */
#ifndef RLVR_ENVS_ARITH_H
#define RLVR_ENVS_ARITH_H

#include <stddef.h>
#include <stdint.h>

typedef enum { RLVR_ARITH_EVALUATE = 0, RLVR_ARITH_COUNTDOWN = 1 } rlvr_arith_kind;

#define RLVR_ARITH_MAX_NUMBERS 6
#define RLVR_ARITH_EXPR_CAP 64

typedef struct {
    rlvr_arith_kind kind;
    char expression[RLVR_ARITH_EXPR_CAP];    /* EVALUATE: the expression to compute */
    int32_t n_numbers;                       /* COUNTDOWN: numbers to use, 2..RLVR_ARITH_MAX_NUMBERS */
    int64_t numbers[RLVR_ARITH_MAX_NUMBERS]; /* COUNTDOWN */
    int64_t target;                          /* the value of the expression / the value to reach */
} rlvr_arith_problem;

/* "evaluate" / "countdown"; RLVR_EINVAL for other names. */
const char *rlvr_arith_kind_name(rlvr_arith_kind kind);
int rlvr_arith_kind_parse(const char *name, rlvr_arith_kind *out);

/* Value of an integer expression over + - * /, parentheses and unary minus,
 * with the usual precedence. RLVR_EINVAL (message says why) when it does not
 * parse, divides by zero or inexactly, overflows 64 bits, or nests deeper than
 * 32 levels. */
int rlvr_arith_eval(const char *expr, size_t len, int64_t *value);

/* Checks that a problem is well formed (EVALUATE: the expression evaluates to
 * the target; COUNTDOWN: 2..6 numbers). RLVR_EINVAL otherwise. */
int rlvr_arith_check_problem(const rlvr_arith_problem *p);

/* Scores the policy's final reply: *score = 1 or 0. Returns RLVR_EINVAL only
 * for a malformed problem. */
int rlvr_arith_score(const rlvr_arith_problem *p, const char *reply, size_t len, double *score);

#endif
