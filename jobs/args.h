/* jobs/args.h — the one flag parser of the `rlvr` command line. A verb
 * describes its options in a table and gets back its values, `--help`, or
 * one line naming what is wrong:
 *
 *     const char *task = NULL; int64_t runs = 0; bool json = false;
 *     const rlvr_opt opts[] = {
 *         RLVR_OPT("--task", RLVR_OPT_STRING, &task, "TASK", .required = true),
 *         RLVR_OPT("--runs", RLVR_OPT_INT, &runs, "N", .min = 1, .max = 100),
 *         RLVR_OPT("--json", RLVR_OPT_FLAG, &json, NULL),
 *         RLVR_OPT(NULL, RLVR_OPT_STRING, &file, "FILE"),   (a positional argument)
 *         {0},
 *     };
 *     int rc = rlvr_args_parse("verify", opts, usage, argc, argv);
 *     if (rc != RLVR_ARGS_CONTINUE) return rc;
 *
 * argv[0] is the verb (or subverb) itself. `--flag VALUE` and
 * `--flag=VALUE` both work; `--` ends the options. */
#ifndef RLVR_JOBS_ARGS_H
#define RLVR_JOBS_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum {
    RLVR_OPT_END = 0, /* ends the table */
    RLVR_OPT_FLAG,    /* bool *: set to true; takes no value */
    RLVR_OPT_STRING,  /* const char **: points into argv */
    RLVR_OPT_INT,     /* int64_t *, in [min, max] */
    RLVR_OPT_DOUBLE,  /* double *, finite, in [dmin, dmax] */
    RLVR_OPT_LIST,    /* rlvr_opt_list *: every occurrence (a positional LIST takes the rest) */
} rlvr_opt_kind;

typedef struct {
    const char **items; /* point into argv; the array is the caller's (rlvr_opt_list_free) */
    size_t n;
} rlvr_opt_list;

typedef struct {
    const char *name;  /* "--task"; NULL: the next positional argument, in table order */
    rlvr_opt_kind kind;
    void *out;
    const char *value; /* the value's name in messages and usage: "TASK" */
    bool required;
    int64_t min, max;  /* RLVR_OPT_INT (both 0: any int64) */
    double dmin, dmax; /* RLVR_OPT_DOUBLE (both 0: any finite) */
    bool *seen;        /* optional: set when the option was given */
} rlvr_opt;

/* One table entry; the optional fields follow as designated initializers. */
#define RLVR_OPT(name_, kind_, out_, value_, ...) \
    {.name = (name_), .kind = (kind_), .out = (out_), .value = (value_), __VA_ARGS__}

/* Returned when the arguments parsed and the verb goes on. */
#define RLVR_ARGS_CONTINUE (-1)

/* Parses argv[1..argc) against `opts`. Returns RLVR_ARGS_CONTINUE when they
 * parsed; otherwise the exit status the verb returns: 0 after `--help` or
 * `-h` printed `usage` on stdout, RLVR_EXIT_USAGE after "rlvr VERB: <what is
 * wrong>" and `usage` on stderr (an unknown option, a missing value, a value
 * out of range, a missing required option or argument, an extra argument). */
int rlvr_args_parse(const char *verb, const rlvr_opt *opts, void (*usage)(FILE *out), int argc, char **argv);

/* Frees a list's array (not the strings, which are argv's). */
void rlvr_opt_list_free(rlvr_opt_list *list);

/* Reports a wrong argument found after parsing the way the parser does:
 * "rlvr VERB: <message>" and the usage on stderr; returns RLVR_EXIT_USAGE. */
int rlvr_args_error(const char *verb, void (*usage)(FILE *out), const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
