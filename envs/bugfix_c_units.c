/* envs/bugfix_c_units.c — the bugfix-c catalog: C units, their edits, and
 * evaluators that mirror the C text (see bugfix_c_units.h). */
#include "envs/bugfix_c_units.h"

#include "core/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

const char *const bc_bug_names[BUG_COUNT] = {
    "none",          "off_by_one",         "wrong_operator", "wrong_constant",
    "missing_case",  "wrong_condition",    "swapped_arguments", "wrong_variable",
};

static long rnd(rlvr_rng_stream *s, long lo, long hi) {
    return lo + (long)rlvr_rng_next_below(s, (uint32_t)(hi - lo + 1));
}

static void add(long out[][BC_MAX_ARGS], int *n, long a, long b, long c) {
    if (*n >= BC_MAX_CASES) return;
    out[*n][0] = a;
    out[*n][1] = b;
    out[*n][2] = c;
    (*n)++;
}

/* ---- sum_to ---------------------------------------------------------------- */

enum { SUM_LT, SUM_START2, SUM_MINUS, SUM_INIT1, SUM_PLUS_N, SUM_STEP2 };

static long sum_eval(const long *k, int f, const long *a, int e) {
    (void)k, (void)f;
    long n = a[0], s = e == SUM_INIT1 ? 1 : 0;
    for (long i = e == SUM_START2 ? 2 : 1; e == SUM_LT ? i < n : i <= n; i += e == SUM_STEP2 ? 2 : 1)
        s = e == SUM_MINUS ? s - i : e == SUM_PLUS_N ? s + n : s + i;
    return s;
}

static int sum_cases(rlvr_rng_stream *s, const long *k, int f, long out[][BC_MAX_ARGS]) {
    (void)k, (void)f;
    int n = 0;
    static const long edge[] = {0, 1, 2, 3, 4, 5, 10};
    for (int i = 0; i < 7; i++) add(out, &n, edge[i], 0, 0);
    while (n < 16) add(out, &n, rnd(s, 0, 15), 0, 0);
    return n;
}

/* ---- clamp ------------------------------------------------------------------- */

enum { CLAMP_LO_GT, CLAMP_HI_LT, CLAMP_NO_LO, CLAMP_NO_HI, CLAMP_RET_HI, CLAMP_HI_VS_LO };

static long clamp_eval(const long *k, int f, const long *a, int e) {
    (void)k, (void)f;
    long x = a[0], lo = a[1], hi = a[2];
    if (e != CLAMP_NO_LO && (e == CLAMP_LO_GT ? x > lo : x < lo)) return e == CLAMP_RET_HI ? hi : lo;
    if (e != CLAMP_NO_HI && (e == CLAMP_HI_LT ? x < hi : e == CLAMP_HI_VS_LO ? x > lo : x > hi)) return hi;
    return x;
}

static int clamp_cases(rlvr_rng_stream *s, const long *k, int f, long out[][BC_MAX_ARGS]) {
    (void)k, (void)f;
    int n = 0;
    long lo = rnd(s, -5, 0), hi = rnd(s, 2, 8);
    add(out, &n, lo - 1, lo, hi);
    add(out, &n, lo, lo, hi);
    add(out, &n, hi, lo, hi);
    add(out, &n, hi + 1, lo, hi);
    add(out, &n, (lo + hi) / 2, lo, hi);
    while (n < 16) {
        long l = rnd(s, -5, 0), h = rnd(s, 2, 8);
        add(out, &n, rnd(s, l - 4, h + 4), l, h);
    }
    return n;
}

/* ---- power, cube_plus ----------------------------------------------------------- */

enum { POW_INIT0, POW_LE, POW_ADD, POW_SWAP, POW_MINUS_K, POW_SQUARE, POW_TIMES_E };

static long pow_eval(long b, long e, int ed) {
    long r = ed == POW_INIT0 ? 0 : 1;
    for (long i = 0; ed == POW_LE ? i <= e : i < e; i++) r = ed == POW_ADD ? r + b : ed == POW_TIMES_E ? r * e : r * b;
    return r;
}

static long power_eval(const long *k, int f, const long *a, int e) {
    if (f == 0) return pow_eval(a[0], a[1], e);
    long x = a[0];
    long base = e == POW_SWAP ? pow_eval(3, x, e) : e == POW_SQUARE ? pow_eval(x, 2, e) : pow_eval(x, 3, e);
    return e == POW_MINUS_K ? base - k[0] : base + k[0];
}

static void power_constants(rlvr_rng_stream *s, long k[BC_MAX_CONSTS]) { k[0] = rnd(s, 1, 9); }

static int power_cases(rlvr_rng_stream *s, const long *k, int f, long out[][BC_MAX_ARGS]) {
    (void)k;
    int n = 0;
    if (f == 0) {
        add(out, &n, 2, 0, 0);
        add(out, &n, 2, 3, 0);
        add(out, &n, 3, 2, 0);
        add(out, &n, 5, 1, 0);
        add(out, &n, -2, 3, 0);
        while (n < 14) add(out, &n, rnd(s, -3, 6), rnd(s, 0, 5), 0);
    } else {
        static const long edge[] = {0, 1, 2, 3, -2};
        for (int i = 0; i < 5; i++) add(out, &n, edge[i], 0, 0);
        while (n < 12) add(out, &n, rnd(s, -4, 6), 0, 0);
    }
    return n;
}

/* ---- count_digits ---------------------------------------------------------------- */

enum { DIG_GT10, DIG_INIT0, DIG_DIV100, DIG_GE100, DIG_DEC, DIG_SUB10 };

static long digits_eval(const long *k, int f, const long *a, int e) {
    (void)k, (void)f;
    long n = a[0], c = e == DIG_INIT0 ? 0 : 1;
    while (e == DIG_GT10 ? n > 10 : e == DIG_GE100 ? n >= 100 : n >= 10) {
        if (e == DIG_SUB10) n -= 10;
        else n /= e == DIG_DIV100 ? 100 : 10;
        c += e == DIG_DEC ? -1 : 1;
    }
    return c;
}

static int digits_cases(rlvr_rng_stream *s, const long *k, int f, long out[][BC_MAX_ARGS]) {
    (void)k, (void)f;
    int n = 0;
    static const long edge[] = {0, 7, 10, 11, 99, 100, 101, 1000, 12345};
    for (int i = 0; i < 9; i++) add(out, &n, edge[i], 0, 0);
    while (n < 16) add(out, &n, rnd(s, 0, 99999), 0, 0);
    return n;
}

/* ---- is_leap -------------------------------------------------------------------- */

enum { LEAP_NO_400, LEAP_NO_100, LEAP_NOT4, LEAP_RET1, LEAP_40, LEAP_MOD2, LEAP_NE400 };

static long leap_eval(const long *k, int f, const long *a, int e) {
    (void)k, (void)f;
    long y = a[0];
    if (e != LEAP_NO_400 && (e == LEAP_NE400 ? y % 400 != 0 : y % (e == LEAP_40 ? 40 : 400) == 0)) return 1;
    if (e != LEAP_NO_100 && y % 100 == 0) return e == LEAP_RET1 ? 1 : 0;
    return e == LEAP_NOT4 ? y % 4 != 0 : y % (e == LEAP_MOD2 ? 2 : 4) == 0;
}

static int leap_cases(rlvr_rng_stream *s, const long *k, int f, long out[][BC_MAX_ARGS]) {
    (void)k, (void)f;
    int n = 0;
    static const long edge[] = {1600, 1700, 1800, 1900, 1996, 2000, 2001, 2004, 2022, 2024, 2100};
    for (int i = 0; i < 11; i++) add(out, &n, edge[i], 0, 0);
    while (n < 18) add(out, &n, rnd(s, 1800, 2200), 0, 0);
    return n;
}

/* ---- sign ------------------------------------------------------------------------- */

enum { SIGN_GE, SIGN_NO_NEG, SIGN_RET1, SIGN_NEG_GT, SIGN_POS_LT, SIGN_LT_M1 };

static long sign_eval(const long *k, int f, const long *a, int e) {
    (void)k, (void)f;
    long x = a[0];
    if (e == SIGN_GE ? x >= 0 : e == SIGN_POS_LT ? x < 0 : x > 0) return 1;
    if (e != SIGN_NO_NEG && (e == SIGN_NEG_GT ? x > 0 : e == SIGN_LT_M1 ? x < -1 : x < 0))
        return e == SIGN_RET1 ? 1 : -1;
    return 0;
}

static int sign_cases(rlvr_rng_stream *s, const long *k, int f, long out[][BC_MAX_ARGS]) {
    (void)k, (void)f;
    int n = 0;
    static const long edge[] = {-100, -5, -2, -1, 0, 1, 2, 7};
    for (int i = 0; i < 8; i++) add(out, &n, edge[i], 0, 0);
    while (n < 14) add(out, &n, rnd(s, -50, 50), 0, 0);
    return n;
}

/* ---- max3 ------------------------------------------------------------------------- */

enum { MAX_B_LT, MAX_NO_C, MAX_C_TO_B, MAX_INIT0, MAX_INIT_B, MAX_C_VS_A };

static long max3_eval(const long *k, int f, const long *a, int e) {
    (void)k, (void)f;
    long m = e == MAX_INIT0 ? 0 : e == MAX_INIT_B ? a[1] : a[0];
    if (e == MAX_B_LT ? a[1] < m : a[1] > m) m = a[1];
    if (e != MAX_NO_C && (e == MAX_C_VS_A ? a[2] > a[0] : a[2] > m)) m = e == MAX_C_TO_B ? a[1] : a[2];
    return m;
}

static int max3_cases(rlvr_rng_stream *s, const long *k, int f, long out[][BC_MAX_ARGS]) {
    (void)k, (void)f;
    int n = 0;
    add(out, &n, 1, 2, 3);
    add(out, &n, 3, 2, 1);
    add(out, &n, 2, 3, 1);
    add(out, &n, -3, -2, -1);
    add(out, &n, -1, -5, -9);
    add(out, &n, 4, 4, 4);
    add(out, &n, 1, 9, 5);
    while (n < 16) add(out, &n, rnd(s, -9, 9), rnd(s, -9, 9), rnd(s, -9, 9));
    return n;
}

/* ---- gcd ------------------------------------------------------------------------- */

enum { GCD_RET_B, GCD_GT1, GCD_A_TO_T };

static long gcd_eval(const long *k, int f, const long *a, int e) {
    (void)k, (void)f;
    long x = a[0], y = a[1];
    while (e == GCD_GT1 ? y > 1 : y != 0) {
        long t = x % y;
        x = e == GCD_A_TO_T ? t : y;
        y = t;
    }
    return e == GCD_RET_B ? y : x;
}

static int gcd_cases(rlvr_rng_stream *s, const long *k, int f, long out[][BC_MAX_ARGS]) {
    (void)k, (void)f;
    int n = 0;
    add(out, &n, 12, 8, 0);
    add(out, &n, 7, 5, 0);
    add(out, &n, 9, 9, 0);
    add(out, &n, 21, 7, 0);
    add(out, &n, 5, 15, 0);
    add(out, &n, 1, 1, 0);
    while (n < 14) add(out, &n, rnd(s, 1, 60), rnd(s, 1, 60), 0);
    return n;
}

/* ---- mod_pos ------------------------------------------------------------------------- */

enum { MOD_GT, MOD_SUB, MOD_NO_FIX, MOD_LE, MOD_ADD_A };

static long mod_eval(const long *k, int f, const long *a, int e) {
    (void)k, (void)f;
    long m = a[1], r = a[0] % m;
    if (e != MOD_NO_FIX && (e == MOD_GT ? r > 0 : e == MOD_LE ? r <= 0 : r < 0))
        r = e == MOD_SUB ? r - m : e == MOD_ADD_A ? r + a[0] : r + m;
    return r;
}

static int mod_cases(rlvr_rng_stream *s, const long *k, int f, long out[][BC_MAX_ARGS]) {
    (void)k, (void)f;
    int n = 0;
    add(out, &n, 7, 3, 0);
    add(out, &n, -7, 3, 0);
    add(out, &n, -1, 5, 0);
    add(out, &n, 0, 4, 0);
    add(out, &n, -8, 4, 0);
    add(out, &n, 9, 9, 0);
    while (n < 16) add(out, &n, rnd(s, -30, 30), rnd(s, 2, 9), 0);
    return n;
}

/* ---- digit_sum ---------------------------------------------------------------------- */

enum { DS_DIV, DS_INIT1, DS_GT9, DS_MOD100, DS_DIV100, DS_LT0 };

static long dsum_eval(const long *k, int f, const long *a, int e) {
    (void)k, (void)f;
    long n = a[0], s = e == DS_INIT1 ? 1 : 0;
    while (e == DS_GT9 ? n > 9 : e == DS_LT0 ? n < 0 : n > 0) {
        s += e == DS_DIV ? n / 10 : n % (e == DS_MOD100 ? 100 : 10);
        n /= e == DS_DIV100 ? 100 : 10;
    }
    return s;
}

static int dsum_cases(rlvr_rng_stream *s, const long *k, int f, long out[][BC_MAX_ARGS]) {
    (void)k, (void)f;
    int n = 0;
    static const long edge[] = {0, 5, 10, 19, 123, 909, 4321};
    for (int i = 0; i < 7; i++) add(out, &n, edge[i], 0, 0);
    while (n < 14) add(out, &n, rnd(s, 0, 99999), 0, 0);
    return n;
}

/* ---- between, in_range ---------------------------------------------------------------- */

enum { BTW_OR, BTW_GT_LO, BTW_LT_HI, BTW_GE_HI, BTW_SWAP, BTW_HI_PLUS1 };

static long btw(long x, long lo, long hi, int e) {
    bool above = e == BTW_GT_LO ? x > lo : e == BTW_GE_HI ? x >= hi : x >= lo;
    bool below = e == BTW_LT_HI ? x < hi : x <= hi;
    return e == BTW_OR ? (above || below) : (above && below);
}

static long between_eval(const long *k, int f, const long *a, int e) {
    if (f == 0) return btw(a[0], a[1], a[2], e);
    if (e == BTW_SWAP) return btw(a[0], k[1], k[0], e);
    return btw(a[0], k[0], e == BTW_HI_PLUS1 ? k[1] + 1 : k[1], e);
}

static void between_constants(rlvr_rng_stream *s, long k[BC_MAX_CONSTS]) {
    k[0] = rnd(s, 0, 10);
    k[1] = k[0] + rnd(s, 3, 12);
}

static int between_cases(rlvr_rng_stream *s, const long *k, int f, long out[][BC_MAX_ARGS]) {
    int n = 0;
    if (f == 0) {
        long lo = rnd(s, -5, 5), hi = lo + rnd(s, 2, 9);
        add(out, &n, lo - 1, lo, hi);
        add(out, &n, lo, lo, hi);
        add(out, &n, lo + 1, lo, hi);
        add(out, &n, hi, lo, hi);
        add(out, &n, hi + 1, lo, hi);
        while (n < 14) {
            long l = rnd(s, -5, 5), h = l + rnd(s, 2, 9);
            add(out, &n, rnd(s, l - 3, h + 3), l, h);
        }
    } else {
        add(out, &n, k[0] - 1, 0, 0);
        add(out, &n, k[0], 0, 0);
        add(out, &n, (k[0] + k[1]) / 2, 0, 0);
        add(out, &n, k[1], 0, 0);
        add(out, &n, k[1] + 1, 0, 0);
        while (n < 12) add(out, &n, rnd(s, k[0] - 3, k[1] + 3), 0, 0);
    }
    return n;
}

/* ---- fib -------------------------------------------------------------------------------- */

enum { FIB_LT_N1, FIB_LE, FIB_SUB, FIB_RET_B, FIB_A1, FIB_DOUBLE };

static long fib_eval(const long *k, int f, const long *a, int e) {
    (void)k, (void)f;
    long n = a[0], x = e == FIB_A1 ? 1 : 0, y = 1;
    for (long i = 0; e == FIB_LT_N1 ? i < n - 1 : e == FIB_LE ? i <= n : i < n; i++) {
        long t = e == FIB_SUB ? x - y : e == FIB_DOUBLE ? y + y : x + y;
        x = y;
        y = t;
    }
    return e == FIB_RET_B ? y : x;
}

static int fib_cases(rlvr_rng_stream *s, const long *k, int f, long out[][BC_MAX_ARGS]) {
    (void)k, (void)f;
    int n = 0;
    static const long edge[] = {0, 1, 2, 3, 5, 10};
    for (int i = 0; i < 6; i++) add(out, &n, edge[i], 0, 0);
    while (n < 12) add(out, &n, rnd(s, 0, 20), 0, 0);
    return n;
}

/* ---- abs_diff ---------------------------------------------------------------------------- */

enum { AD_GT, AD_NO_CASE, AD_ADD, AD_FIRST_SWAP, AD_SECOND_SWAP };

static long absdiff_eval(const long *k, int f, const long *a, int e) {
    (void)k, (void)f;
    long x = a[0], y = a[1];
    if (e != AD_NO_CASE && (e == AD_GT ? x > y : x < y)) return e == AD_FIRST_SWAP ? x - y : y - x;
    return e == AD_ADD ? x + y : e == AD_SECOND_SWAP ? y - x : x - y;
}

static int absdiff_cases(rlvr_rng_stream *s, const long *k, int f, long out[][BC_MAX_ARGS]) {
    (void)k, (void)f;
    int n = 0;
    add(out, &n, 3, 8, 0);
    add(out, &n, 8, 3, 0);
    add(out, &n, 4, 4, 0);
    add(out, &n, -2, 5, 0);
    add(out, &n, 0, 0, 0);
    while (n < 14) add(out, &n, rnd(s, -20, 20), rnd(s, -20, 20), 0);
    return n;
}

/* ---- scale, percent_of -------------------------------------------------------------------- */

enum { PCT_SWAP, PCT_ADD, PCT_TEN, PCT_DIV_NUM };

static long percent_eval(const long *k, int f, const long *a, int e) {
    (void)f;
    long x = a[0], num = e == PCT_SWAP ? 100 : k[0], den = e == PCT_SWAP ? k[0] : e == PCT_TEN ? 10 : 100;
    if (e == PCT_ADD) return x + num / den; /* "x + num / den": the division binds first */
    return x * num / (e == PCT_DIV_NUM ? num : den);
}

static void percent_constants(rlvr_rng_stream *s, long k[BC_MAX_CONSTS]) { k[0] = 5 * rnd(s, 1, 19); }

static int percent_cases(rlvr_rng_stream *s, const long *k, int f, long out[][BC_MAX_ARGS]) {
    (void)k, (void)f;
    int n = 0;
    static const long edge[] = {0, 100, 200, 40, 7};
    for (int i = 0; i < 5; i++) add(out, &n, edge[i], 0, 0);
    while (n < 12) add(out, &n, rnd(s, 0, 400), 0, 0);
    return n;
}

/* ---- days_in_month ------------------------------------------------------------------------ */

enum { DIM_NO_APR, DIM_NO_SEP, DIM_FEB29, DIM_30_TO_31, DIM_DEFAULT30, DIM_NO_JUN, DIM_NO_NOV };

static long dim_eval(const long *k, int f, const long *a, int e) {
    (void)k, (void)f;
    long m = a[0];
    if (m == 2) return e == DIM_FEB29 ? 29 : 28;
    bool thirty = (m == 4 && e != DIM_NO_APR) || (m == 6 && e != DIM_NO_JUN) || (m == 9 && e != DIM_NO_SEP) ||
                  (m == 11 && e != DIM_NO_NOV);
    /* Without the "case 11: return 30;" line, 4, 6 and 9 fall through to default. */
    if (e == DIM_NO_NOV) thirty = false;
    if (thirty) return e == DIM_30_TO_31 ? 31 : 30;
    return e == DIM_DEFAULT30 ? 30 : 31;
}

static int dim_cases(rlvr_rng_stream *s, const long *k, int f, long out[][BC_MAX_ARGS]) {
    (void)s, (void)k, (void)f;
    int n = 0;
    for (long m = 1; m <= 12; m++) add(out, &n, m, 0, 0);
    return n;
}

/* ---- the catalog ---------------------------------------------------------------------------- */

const bc_unit bc_units[] = {
    {"sum_to",
     {"int sum_to(int n) {", "    int s = 0;", "    for (int i = 1; i <= n; i++)", "        s += i;", "    return s;",
      "}"},
     {{"sum_to", "int sum_to(int n);", 1, {"n"}, 0}},
     {[SUM_LT] = {2, "i <= n", "i < n", BUG_OFF_BY_ONE},
      [SUM_START2] = {2, "int i = 1", "int i = 2", BUG_OFF_BY_ONE},
      [SUM_MINUS] = {3, "s += i", "s -= i", BUG_WRONG_OPERATOR},
      [SUM_INIT1] = {1, "s = 0", "s = 1", BUG_WRONG_CONSTANT},
      [SUM_PLUS_N] = {3, "s += i", "s += n", BUG_WRONG_VARIABLE},
      [SUM_STEP2] = {2, "i++", "i += 2", BUG_WRONG_CONSTANT}},
     NULL, sum_cases, sum_eval},
    {"clamp",
     {"int clamp(int x, int lo, int hi) {", "    if (x < lo) return lo;", "    if (x > hi) return hi;", "    return x;",
      "}"},
     {{"clamp", "int clamp(int x, int lo, int hi);", 3, {"x", "lo", "hi"}, 0}},
     {[CLAMP_LO_GT] = {1, "x < lo", "x > lo", BUG_WRONG_CONDITION},
      [CLAMP_HI_LT] = {2, "x > hi", "x < hi", BUG_WRONG_CONDITION},
      [CLAMP_NO_LO] = {1, NULL, NULL, BUG_MISSING_CASE},
      [CLAMP_NO_HI] = {2, NULL, NULL, BUG_MISSING_CASE},
      [CLAMP_RET_HI] = {1, "return lo;", "return hi;", BUG_WRONG_VARIABLE},
      [CLAMP_HI_VS_LO] = {2, "x > hi", "x > lo", BUG_WRONG_VARIABLE}},
     NULL, clamp_cases, clamp_eval},
    {"power",
     {"int power(int b, int e) {", "    int r = 1;", "    for (int i = 0; i < e; i++)", "        r *= b;",
      "    return r;", "}", "", "int cube_plus(int x) {", "    return power(x, 3) + {K0};", "}"},
     {{"power", "int power(int b, int e);", 2, {"b", "e"}, 0},
      {"cube_plus", "int cube_plus(int x);", 1, {"x"}, 7}},
     {[POW_INIT0] = {1, "r = 1", "r = 0", BUG_WRONG_CONSTANT},
      [POW_LE] = {2, "i < e", "i <= e", BUG_OFF_BY_ONE},
      [POW_ADD] = {3, "r *= b", "r += b", BUG_WRONG_OPERATOR},
      [POW_SWAP] = {8, "power(x, 3)", "power(3, x)", BUG_SWAPPED_ARGUMENTS},
      [POW_MINUS_K] = {8, "+ {K0}", "- {K0}", BUG_WRONG_OPERATOR},
      [POW_SQUARE] = {8, "x, 3", "x, 2", BUG_WRONG_CONSTANT},
      [POW_TIMES_E] = {3, "r *= b", "r *= e", BUG_WRONG_VARIABLE}},
     power_constants, power_cases, power_eval},
    {"count_digits",
     {"int count_digits(int n) {", "    int c = 1;", "    while (n >= 10) {", "        n /= 10;", "        c++;",
      "    }", "    return c;", "}"},
     {{"count_digits", "int count_digits(int n);", 1, {"n"}, 0}},
     {[DIG_GT10] = {2, "n >= 10", "n > 10", BUG_OFF_BY_ONE},
      [DIG_INIT0] = {1, "c = 1", "c = 0", BUG_WRONG_CONSTANT},
      [DIG_DIV100] = {3, "n /= 10", "n /= 100", BUG_WRONG_CONSTANT},
      [DIG_GE100] = {2, "n >= 10", "n >= 100", BUG_WRONG_CONSTANT},
      [DIG_DEC] = {4, "c++", "c--", BUG_WRONG_OPERATOR},
      [DIG_SUB10] = {3, "n /= 10", "n -= 10", BUG_WRONG_OPERATOR}},
     NULL, digits_cases, digits_eval},
    {"is_leap",
     {"int is_leap(int y) {", "    if (y % 400 == 0) return 1;", "    if (y % 100 == 0) return 0;",
      "    return y % 4 == 0;", "}"},
     {{"is_leap", "int is_leap(int y);", 1, {"y"}, 0}},
     {[LEAP_NO_400] = {1, NULL, NULL, BUG_MISSING_CASE},
      [LEAP_NO_100] = {2, NULL, NULL, BUG_MISSING_CASE},
      [LEAP_NOT4] = {3, "y % 4 == 0", "y % 4 != 0", BUG_WRONG_CONDITION},
      [LEAP_RET1] = {2, "return 0;", "return 1;", BUG_WRONG_CONSTANT},
      [LEAP_40] = {1, "400", "40", BUG_WRONG_CONSTANT},
      [LEAP_MOD2] = {3, "% 4", "% 2", BUG_WRONG_CONSTANT},
      [LEAP_NE400] = {1, "== 0) return 1", "!= 0) return 1", BUG_WRONG_CONDITION}},
     NULL, leap_cases, leap_eval},
    {"sign",
     {"int sign(int x) {", "    if (x > 0) return 1;", "    if (x < 0) return -1;", "    return 0;", "}"},
     {{"sign", "int sign(int x);", 1, {"x"}, 0}},
     {[SIGN_GE] = {1, "x > 0", "x >= 0", BUG_OFF_BY_ONE},
      [SIGN_NO_NEG] = {2, NULL, NULL, BUG_MISSING_CASE},
      [SIGN_RET1] = {2, "return -1;", "return 1;", BUG_WRONG_CONSTANT},
      [SIGN_NEG_GT] = {2, "x < 0", "x > 0", BUG_WRONG_CONDITION},
      [SIGN_POS_LT] = {1, "x > 0", "x < 0", BUG_WRONG_CONDITION},
      [SIGN_LT_M1] = {2, "x < 0", "x < -1", BUG_OFF_BY_ONE}},
     NULL, sign_cases, sign_eval},
    {"max3",
     {"int max3(int a, int b, int c) {", "    int m = a;", "    if (b > m) m = b;", "    if (c > m) m = c;",
      "    return m;", "}"},
     {{"max3", "int max3(int a, int b, int c);", 3, {"a", "b", "c"}, 0}},
     {[MAX_B_LT] = {2, "b > m", "b < m", BUG_WRONG_CONDITION},
      [MAX_NO_C] = {3, NULL, NULL, BUG_MISSING_CASE},
      [MAX_C_TO_B] = {3, "m = c;", "m = b;", BUG_WRONG_VARIABLE},
      [MAX_INIT0] = {1, "m = a;", "m = 0;", BUG_WRONG_CONSTANT},
      [MAX_INIT_B] = {1, "m = a;", "m = b;", BUG_WRONG_VARIABLE},
      [MAX_C_VS_A] = {3, "c > m", "c > a", BUG_WRONG_VARIABLE}},
     NULL, max3_cases, max3_eval},
    {"gcd",
     {"int gcd(int a, int b) {", "    while (b != 0) {", "        int t = a % b;", "        a = b;", "        b = t;",
      "    }", "    return a;", "}"},
     {{"gcd", "int gcd(int a, int b);", 2, {"a", "b"}, 0}},
     {[GCD_RET_B] = {6, "return a;", "return b;", BUG_WRONG_VARIABLE},
      [GCD_GT1] = {1, "b != 0", "b > 1", BUG_WRONG_CONDITION},
      [GCD_A_TO_T] = {3, "a = b;", "a = t;", BUG_WRONG_VARIABLE}},
     NULL, gcd_cases, gcd_eval},
    {"mod_pos",
     {"int mod_pos(int a, int m) {", "    int r = a % m;", "    if (r < 0) r += m;", "    return r;", "}"},
     {{"mod_pos", "int mod_pos(int a, int m);", 2, {"a", "m"}, 0}},
     {[MOD_GT] = {2, "r < 0", "r > 0", BUG_WRONG_CONDITION},
      [MOD_SUB] = {2, "r += m", "r -= m", BUG_WRONG_OPERATOR},
      [MOD_NO_FIX] = {2, NULL, NULL, BUG_MISSING_CASE},
      [MOD_LE] = {2, "r < 0", "r <= 0", BUG_OFF_BY_ONE},
      [MOD_ADD_A] = {2, "r += m", "r += a", BUG_WRONG_VARIABLE}},
     NULL, mod_cases, mod_eval},
    {"digit_sum",
     {"int digit_sum(int n) {", "    int s = 0;", "    while (n > 0) {", "        s += n % 10;", "        n /= 10;",
      "    }", "    return s;", "}"},
     {{"digit_sum", "int digit_sum(int n);", 1, {"n"}, 0}},
     {[DS_DIV] = {3, "n % 10", "n / 10", BUG_WRONG_OPERATOR},
      [DS_INIT1] = {1, "s = 0", "s = 1", BUG_WRONG_CONSTANT},
      [DS_GT9] = {2, "n > 0", "n > 9", BUG_WRONG_CONSTANT},
      [DS_MOD100] = {3, "% 10", "% 100", BUG_WRONG_CONSTANT},
      [DS_DIV100] = {4, "n /= 10", "n /= 100", BUG_WRONG_CONSTANT},
      [DS_LT0] = {2, "n > 0", "n < 0", BUG_WRONG_CONDITION}},
     NULL, dsum_cases, dsum_eval},
    {"between",
     {"int between(int x, int lo, int hi) {", "    return x >= lo && x <= hi;", "}", "", "int in_range(int x) {",
      "    return between(x, {K0}, {K1});", "}"},
     {{"between", "int between(int x, int lo, int hi);", 3, {"x", "lo", "hi"}, 0},
      {"in_range", "int in_range(int x);", 1, {"x"}, 4}},
     {[BTW_OR] = {1, "&&", "||", BUG_WRONG_CONDITION},
      [BTW_GT_LO] = {1, "x >= lo", "x > lo", BUG_OFF_BY_ONE},
      [BTW_LT_HI] = {1, "x <= hi", "x < hi", BUG_OFF_BY_ONE},
      [BTW_GE_HI] = {1, "x >= lo", "x >= hi", BUG_WRONG_VARIABLE},
      [BTW_SWAP] = {5, "{K0}, {K1}", "{K1}, {K0}", BUG_SWAPPED_ARGUMENTS},
      [BTW_HI_PLUS1] = {5, "{K1})", "{K1+1})", BUG_WRONG_CONSTANT}},
     between_constants, between_cases, between_eval},
    {"fib",
     {"int fib(int n) {", "    int a = 0, b = 1;", "    for (int i = 0; i < n; i++) {", "        int t = a + b;",
      "        a = b;", "        b = t;", "    }", "    return a;", "}"},
     {{"fib", "int fib(int n);", 1, {"n"}, 0}},
     {[FIB_LT_N1] = {2, "i < n", "i < n - 1", BUG_OFF_BY_ONE},
      [FIB_LE] = {2, "i < n", "i <= n", BUG_OFF_BY_ONE},
      [FIB_SUB] = {3, "a + b", "a - b", BUG_WRONG_OPERATOR},
      [FIB_RET_B] = {7, "return a;", "return b;", BUG_WRONG_VARIABLE},
      [FIB_A1] = {1, "a = 0", "a = 1", BUG_WRONG_CONSTANT},
      [FIB_DOUBLE] = {3, "a + b", "b + b", BUG_WRONG_VARIABLE}},
     NULL, fib_cases, fib_eval},
    {"abs_diff",
     {"int abs_diff(int a, int b) {", "    if (a < b) return b - a;", "    return a - b;", "}"},
     {{"abs_diff", "int abs_diff(int a, int b);", 2, {"a", "b"}, 0}},
     {[AD_GT] = {1, "a < b", "a > b", BUG_WRONG_CONDITION},
      [AD_NO_CASE] = {1, NULL, NULL, BUG_MISSING_CASE},
      [AD_ADD] = {2, "a - b", "a + b", BUG_WRONG_OPERATOR},
      [AD_FIRST_SWAP] = {1, "b - a", "a - b", BUG_WRONG_VARIABLE},
      [AD_SECOND_SWAP] = {2, "a - b", "b - a", BUG_WRONG_VARIABLE}},
     NULL, absdiff_cases, absdiff_eval},
    {"percent_of",
     {"static int scale(int x, int num, int den) {", "    return x * num / den;", "}", "", "int percent_of(int x) {",
      "    return scale(x, {K0}, 100);", "}"},
     {{"percent_of", "int percent_of(int x);", 1, {"x"}, 4}},
     {[PCT_SWAP] = {5, "{K0}, 100", "100, {K0}", BUG_SWAPPED_ARGUMENTS},
      [PCT_ADD] = {1, "x * num", "x + num", BUG_WRONG_OPERATOR},
      [PCT_TEN] = {5, "100)", "10)", BUG_WRONG_CONSTANT},
      [PCT_DIV_NUM] = {1, "/ den", "/ num", BUG_WRONG_VARIABLE}},
     percent_constants, percent_cases, percent_eval},
    {"days_in_month",
     {"int days_in_month(int m) {", "    switch (m) {", "    case 2: return 28;", "    case 4:", "    case 6:",
      "    case 9:", "    case 11: return 30;", "    default: return 31;", "    }", "}"},
     {{"days_in_month", "int days_in_month(int m);", 1, {"m"}, 0}},
     {[DIM_NO_APR] = {3, NULL, NULL, BUG_MISSING_CASE},
      [DIM_NO_SEP] = {5, NULL, NULL, BUG_MISSING_CASE},
      [DIM_FEB29] = {2, "28", "29", BUG_WRONG_CONSTANT},
      [DIM_30_TO_31] = {6, "30", "31", BUG_WRONG_CONSTANT},
      [DIM_DEFAULT30] = {7, "31", "30", BUG_WRONG_CONSTANT},
      [DIM_NO_JUN] = {4, NULL, NULL, BUG_MISSING_CASE},
      [DIM_NO_NOV] = {6, NULL, NULL, BUG_MISSING_CASE}},
     NULL, dim_cases, dim_eval},
};

const int bc_n_units = (int)(sizeof bc_units / sizeof bc_units[0]);

/* The same functions in Python, line for line in meaning: every edit keeps
 * its index (the evaluators above are shared), so an edit means in Python
 * what it means in C. Only units whose C arithmetic Python repeats on their
 * candidate arguments are here (no negative operand of // or %, which floor
 * in Python and truncate in C: mod_pos is left out), and results are ints,
 * never bools (int(...) where C returns a comparison). A one-line `if` keeps
 * a deleted case a valid program. */
const bc_unit bp_units[] = {
    {"sum_to",
     {"def sum_to(n):", "    s = 0", "    i = 1", "    while i <= n:", "        s += i", "        i += 1",
      "    return s"},
     {{"sum_to", NULL, 1, {"n"}, 0}},
     {[SUM_LT] = {3, "i <= n", "i < n", BUG_OFF_BY_ONE},
      [SUM_START2] = {2, "i = 1", "i = 2", BUG_OFF_BY_ONE},
      [SUM_MINUS] = {4, "s += i", "s -= i", BUG_WRONG_OPERATOR},
      [SUM_INIT1] = {1, "s = 0", "s = 1", BUG_WRONG_CONSTANT},
      [SUM_PLUS_N] = {4, "s += i", "s += n", BUG_WRONG_VARIABLE},
      [SUM_STEP2] = {5, "i += 1", "i += 2", BUG_WRONG_CONSTANT}},
     NULL, sum_cases, sum_eval},
    {"clamp",
     {"def clamp(x, lo, hi):", "    if x < lo: return lo", "    if x > hi: return hi", "    return x"},
     {{"clamp", NULL, 3, {"x", "lo", "hi"}, 0}},
     {[CLAMP_LO_GT] = {1, "x < lo", "x > lo", BUG_WRONG_CONDITION},
      [CLAMP_HI_LT] = {2, "x > hi", "x < hi", BUG_WRONG_CONDITION},
      [CLAMP_NO_LO] = {1, NULL, NULL, BUG_MISSING_CASE},
      [CLAMP_NO_HI] = {2, NULL, NULL, BUG_MISSING_CASE},
      [CLAMP_RET_HI] = {1, "return lo", "return hi", BUG_WRONG_VARIABLE},
      [CLAMP_HI_VS_LO] = {2, "x > hi", "x > lo", BUG_WRONG_VARIABLE}},
     NULL, clamp_cases, clamp_eval},
    {"power",
     {"def power(b, e):", "    r = 1", "    for i in range(e):", "        r *= b", "    return r", "", "",
      "def cube_plus(x):", "    return power(x, 3) + {K0}"},
     {{"power", NULL, 2, {"b", "e"}, 0}, {"cube_plus", NULL, 1, {"x"}, 7}},
     {[POW_INIT0] = {1, "r = 1", "r = 0", BUG_WRONG_CONSTANT},
      [POW_LE] = {2, "range(e)", "range(e + 1)", BUG_OFF_BY_ONE},
      [POW_ADD] = {3, "r *= b", "r += b", BUG_WRONG_OPERATOR},
      [POW_SWAP] = {8, "power(x, 3)", "power(3, x)", BUG_SWAPPED_ARGUMENTS},
      [POW_MINUS_K] = {8, "+ {K0}", "- {K0}", BUG_WRONG_OPERATOR},
      [POW_SQUARE] = {8, "x, 3", "x, 2", BUG_WRONG_CONSTANT},
      [POW_TIMES_E] = {3, "r *= b", "r *= e", BUG_WRONG_VARIABLE}},
     power_constants, power_cases, power_eval},
    {"count_digits",
     {"def count_digits(n):", "    c = 1", "    while n >= 10:", "        n //= 10", "        c += 1", "    return c"},
     {{"count_digits", NULL, 1, {"n"}, 0}},
     {[DIG_GT10] = {2, "n >= 10", "n > 10", BUG_OFF_BY_ONE},
      [DIG_INIT0] = {1, "c = 1", "c = 0", BUG_WRONG_CONSTANT},
      [DIG_DIV100] = {3, "n //= 10", "n //= 100", BUG_WRONG_CONSTANT},
      [DIG_GE100] = {2, "n >= 10", "n >= 100", BUG_WRONG_CONSTANT},
      [DIG_DEC] = {4, "c += 1", "c -= 1", BUG_WRONG_OPERATOR},
      [DIG_SUB10] = {3, "n //= 10", "n -= 10", BUG_WRONG_OPERATOR}},
     NULL, digits_cases, digits_eval},
    {"is_leap",
     {"def is_leap(y):", "    if y % 400 == 0: return 1", "    if y % 100 == 0: return 0",
      "    return int(y % 4 == 0)"},
     {{"is_leap", NULL, 1, {"y"}, 0}},
     {[LEAP_NO_400] = {1, NULL, NULL, BUG_MISSING_CASE},
      [LEAP_NO_100] = {2, NULL, NULL, BUG_MISSING_CASE},
      [LEAP_NOT4] = {3, "y % 4 == 0", "y % 4 != 0", BUG_WRONG_CONDITION},
      [LEAP_RET1] = {2, "return 0", "return 1", BUG_WRONG_CONSTANT},
      [LEAP_40] = {1, "400", "40", BUG_WRONG_CONSTANT},
      [LEAP_MOD2] = {3, "% 4", "% 2", BUG_WRONG_CONSTANT},
      [LEAP_NE400] = {1, "== 0: return 1", "!= 0: return 1", BUG_WRONG_CONDITION}},
     NULL, leap_cases, leap_eval},
    {"sign",
     {"def sign(x):", "    if x > 0: return 1", "    if x < 0: return -1", "    return 0"},
     {{"sign", NULL, 1, {"x"}, 0}},
     {[SIGN_GE] = {1, "x > 0", "x >= 0", BUG_OFF_BY_ONE},
      [SIGN_NO_NEG] = {2, NULL, NULL, BUG_MISSING_CASE},
      [SIGN_RET1] = {2, "return -1", "return 1", BUG_WRONG_CONSTANT},
      [SIGN_NEG_GT] = {2, "x < 0", "x > 0", BUG_WRONG_CONDITION},
      [SIGN_POS_LT] = {1, "x > 0", "x < 0", BUG_WRONG_CONDITION},
      [SIGN_LT_M1] = {2, "x < 0", "x < -1", BUG_OFF_BY_ONE}},
     NULL, sign_cases, sign_eval},
    {"max3",
     {"def max3(a, b, c):", "    m = a", "    if b > m: m = b", "    if c > m: m = c", "    return m"},
     {{"max3", NULL, 3, {"a", "b", "c"}, 0}},
     {[MAX_B_LT] = {2, "b > m", "b < m", BUG_WRONG_CONDITION},
      [MAX_NO_C] = {3, NULL, NULL, BUG_MISSING_CASE},
      [MAX_C_TO_B] = {3, "m = c", "m = b", BUG_WRONG_VARIABLE},
      [MAX_INIT0] = {1, "m = a", "m = 0", BUG_WRONG_CONSTANT},
      [MAX_INIT_B] = {1, "m = a", "m = b", BUG_WRONG_VARIABLE},
      [MAX_C_VS_A] = {3, "c > m", "c > a", BUG_WRONG_VARIABLE}},
     NULL, max3_cases, max3_eval},
    {"gcd",
     {"def gcd(a, b):", "    while b != 0:", "        t = a % b", "        a = b", "        b = t", "    return a"},
     {{"gcd", NULL, 2, {"a", "b"}, 0}},
     {[GCD_RET_B] = {5, "return a", "return b", BUG_WRONG_VARIABLE},
      [GCD_GT1] = {1, "b != 0", "b > 1", BUG_WRONG_CONDITION},
      [GCD_A_TO_T] = {3, "a = b", "a = t", BUG_WRONG_VARIABLE}},
     NULL, gcd_cases, gcd_eval},
    {"digit_sum",
     {"def digit_sum(n):", "    s = 0", "    while n > 0:", "        s += n % 10", "        n //= 10", "    return s"},
     {{"digit_sum", NULL, 1, {"n"}, 0}},
     {[DS_DIV] = {3, "n % 10", "n // 10", BUG_WRONG_OPERATOR},
      [DS_INIT1] = {1, "s = 0", "s = 1", BUG_WRONG_CONSTANT},
      [DS_GT9] = {2, "n > 0", "n > 9", BUG_WRONG_CONSTANT},
      [DS_MOD100] = {3, "% 10", "% 100", BUG_WRONG_CONSTANT},
      [DS_DIV100] = {4, "n //= 10", "n //= 100", BUG_WRONG_CONSTANT},
      [DS_LT0] = {2, "n > 0", "n < 0", BUG_WRONG_CONDITION}},
     NULL, dsum_cases, dsum_eval},
    {"between",
     {"def between(x, lo, hi):", "    return int(x >= lo and x <= hi)", "", "", "def in_range(x):",
      "    return between(x, {K0}, {K1})"},
     {{"between", NULL, 3, {"x", "lo", "hi"}, 0}, {"in_range", NULL, 1, {"x"}, 4}},
     {[BTW_OR] = {1, " and ", " or ", BUG_WRONG_CONDITION},
      [BTW_GT_LO] = {1, "x >= lo", "x > lo", BUG_OFF_BY_ONE},
      [BTW_LT_HI] = {1, "x <= hi", "x < hi", BUG_OFF_BY_ONE},
      [BTW_GE_HI] = {1, "x >= lo", "x >= hi", BUG_WRONG_VARIABLE},
      [BTW_SWAP] = {5, "{K0}, {K1}", "{K1}, {K0}", BUG_SWAPPED_ARGUMENTS},
      [BTW_HI_PLUS1] = {5, "{K1})", "{K1+1})", BUG_WRONG_CONSTANT}},
     between_constants, between_cases, between_eval},
    {"fib",
     {"def fib(n):", "    a = 0", "    b = 1", "    for i in range(n):", "        t = a + b", "        a = b",
      "        b = t", "    return a"},
     {{"fib", NULL, 1, {"n"}, 0}},
     {[FIB_LT_N1] = {3, "range(n)", "range(n - 1)", BUG_OFF_BY_ONE},
      [FIB_LE] = {3, "range(n)", "range(n + 1)", BUG_OFF_BY_ONE},
      [FIB_SUB] = {4, "a + b", "a - b", BUG_WRONG_OPERATOR},
      [FIB_RET_B] = {7, "return a", "return b", BUG_WRONG_VARIABLE},
      [FIB_A1] = {1, "a = 0", "a = 1", BUG_WRONG_CONSTANT},
      [FIB_DOUBLE] = {4, "a + b", "b + b", BUG_WRONG_VARIABLE}},
     NULL, fib_cases, fib_eval},
    {"abs_diff",
     {"def abs_diff(a, b):", "    if a < b: return b - a", "    return a - b"},
     {{"abs_diff", NULL, 2, {"a", "b"}, 0}},
     {[AD_GT] = {1, "a < b", "a > b", BUG_WRONG_CONDITION},
      [AD_NO_CASE] = {1, NULL, NULL, BUG_MISSING_CASE},
      [AD_ADD] = {2, "a - b", "a + b", BUG_WRONG_OPERATOR},
      [AD_FIRST_SWAP] = {1, "b - a", "a - b", BUG_WRONG_VARIABLE},
      [AD_SECOND_SWAP] = {2, "a - b", "b - a", BUG_WRONG_VARIABLE}},
     NULL, absdiff_cases, absdiff_eval},
    {"percent_of",
     {"def _scale(x, num, den):", "    return x * num // den", "", "", "def percent_of(x):",
      "    return _scale(x, {K0}, 100)"},
     {{"percent_of", NULL, 1, {"x"}, 4}},
     {[PCT_SWAP] = {5, "{K0}, 100", "100, {K0}", BUG_SWAPPED_ARGUMENTS},
      [PCT_ADD] = {1, "x * num", "x + num", BUG_WRONG_OPERATOR},
      [PCT_TEN] = {5, "100)", "10)", BUG_WRONG_CONSTANT},
      [PCT_DIV_NUM] = {1, "// den", "// num", BUG_WRONG_VARIABLE}},
     percent_constants, percent_cases, percent_eval},
    {"days_in_month",
     {"def days_in_month(m):", "    if m == 2: return 28", "    if m in (4, 6, 9, 11): return 30", "    return 31"},
     {{"days_in_month", NULL, 1, {"m"}, 0}},
     {[DIM_NO_APR] = {2, "4, ", "", BUG_MISSING_CASE},
      [DIM_NO_SEP] = {2, "9, ", "", BUG_MISSING_CASE},
      [DIM_FEB29] = {1, "28", "29", BUG_WRONG_CONSTANT},
      [DIM_30_TO_31] = {2, "return 30", "return 31", BUG_WRONG_CONSTANT},
      [DIM_DEFAULT30] = {3, "31", "30", BUG_WRONG_CONSTANT},
      [DIM_NO_JUN] = {2, "6, ", "", BUG_MISSING_CASE},
      [DIM_NO_NOV] = {2, NULL, NULL, BUG_MISSING_CASE}}, /* C falls through to 31 without case 11 */
     NULL, dim_cases, dim_eval},
};

const int bp_n_units = (int)(sizeof bp_units / sizeof bp_units[0]);

int bc_unit_n_funcs(const bc_unit *u) {
    int n = 0;
    while (n < BC_MAX_FUNCS && u->funcs[n].name) n++;
    return n;
}

int bc_unit_n_edits(const bc_unit *u) {
    int n = 0;
    while (n < BC_MAX_EDITS && u->edits[n].kind != BUG_NONE) n++;
    return n;
}

/* ---- rendering ------------------------------------------------------------------------------ */

/* Copies `line` with {Kn}, {Kn+d}, {Kn-d} replaced by the constants. */
static void fill_constants(rlvr_text *out, const char *line, const long *k) {
    rlvr_text_append(out, "", 0); /* an empty line is still a string */
    for (const char *p = line; *p;) {
        if (p[0] == '{' && p[1] == 'K' && p[2] >= '0' && p[2] < '0' + BC_MAX_CONSTS) {
            long v = k[p[2] - '0'];
            const char *q = p + 3;
            if ((*q == '+' || *q == '-') && q[1] >= '0' && q[1] <= '9') {
                v += (*q == '+' ? 1 : -1) * (q[1] - '0');
                q += 2;
            }
            if (*q == '}') {
                rlvr_text_printf(out, "%ld", v);
                p = q + 1;
                continue;
            }
        }
        rlvr_text_append(out, p, 1);
        p++;
    }
}

/* Appends one line of a unit with edit `edit` (-1: none) applied. */
int bc_render_line(rlvr_text *out, const bc_unit *u, const long *k, int line, int edit) {
    rlvr_text text = {0};
    fill_constants(&text, u->lines[line], k);
    RLVR_TRY(gen_text_check(&text));
    int rc = 0;
    if (edit >= 0 && u->edits[edit].line == line) {
        const bc_edit *e = &u->edits[edit];
        if (!e->from) { /* a deleted line */
            rlvr_text_free(&text);
            return 0;
        }
        rlvr_text from = {0}, to = {0};
        fill_constants(&from, e->from, k);
        fill_constants(&to, e->to, k);
        const char *hit = (from.data && text.data) ? strstr(text.data, from.data) : NULL;
        if (gen_text_check(&from) < 0 || gen_text_check(&to) < 0) rc = RLVR_ENOMEM;
        else if (!hit || strstr(hit + 1, from.data))
            rc = RLVR_FAIL(RLVR_EINVAL, "bugfix unit %s edit %d: \"%s\" must occur once in line \"%s\"", u->name,
                           edit, from.data, text.data);
        else {
            rlvr_text_append(out, text.data, (size_t)(hit - text.data));
            rlvr_text_printf(out, "%s%s\n", to.data, hit + from.len);
        }
        rlvr_text_free(&from);
        rlvr_text_free(&to);
    } else {
        rlvr_text_printf(out, "%s\n", text.data);
    }
    rlvr_text_free(&text);
    return rc;
}
