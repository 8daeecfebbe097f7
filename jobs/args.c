#include "jobs/args.h"
#include "jobs/commands.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void rlvr_opt_list_free(rlvr_opt_list *list) {
    free(list->items);
    *list = (rlvr_opt_list){0};
}

static int verror(const char *verb, void (*usage)(FILE *), const char *fmt, va_list ap) {
    fprintf(stderr, "rlvr %s: ", verb);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    if (usage) usage(stderr);
    return RLVR_EXIT_USAGE;
}

int rlvr_args_error(const char *verb, void (*usage)(FILE *out), const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = verror(verb, usage, fmt, ap);
    va_end(ap);
    return rc;
}

static int list_push(rlvr_opt_list *l, const char *s) {
    const char **grown = realloc(l->items, (l->n + 1) * sizeof *grown);
    if (!grown) return -1;
    grown[l->n++] = s;
    l->items = grown;
    return 0;
}

/* The option's label in messages: "--runs N", or the positional's name. */
static void label(char *buf, size_t cap, const rlvr_opt *o) {
    if (!o->name) snprintf(buf, cap, "%s", o->value ? o->value : "argument");
    else if (o->kind == RLVR_OPT_FLAG || !o->value) snprintf(buf, cap, "%s", o->name);
    else snprintf(buf, cap, "%s %s", o->name, o->value);
}

/* Stores `text` as the value of `o`; on a bad value returns the usage exit
 * after saying so. */
static int store(const char *verb, void (*usage)(FILE *), const rlvr_opt *o, const char *text) {
    char what[128];
    label(what, sizeof what, o);
    switch (o->kind) {
    case RLVR_OPT_STRING:
        *(const char **)o->out = text;
        break;
    case RLVR_OPT_LIST:
        if (list_push(o->out, text) < 0) return rlvr_args_error(verb, NULL, "out of memory");
        break;
    case RLVR_OPT_INT: {
        int64_t lo = o->min, hi = o->max;
        if (lo == 0 && hi == 0) lo = INT64_MIN, hi = INT64_MAX;
        char *end;
        errno = 0;
        long long v = strtoll(text, &end, 10);
        if (errno || end == text || *end || v < lo || v > hi)
            return rlvr_args_error(verb, usage, "%s wants an integer in %lld..%lld, got \"%s\"", what, (long long)lo,
                                   (long long)hi, text);
        *(int64_t *)o->out = v;
        break;
    }
    case RLVR_OPT_DOUBLE: {
        char *end;
        errno = 0;
        double v = strtod(text, &end);
        bool ranged = o->dmin != 0 || o->dmax != 0;
        if (errno || end == text || *end || !isfinite(v) || (ranged && (v < o->dmin || v > o->dmax))) {
            if (ranged)
                return rlvr_args_error(verb, usage, "%s wants a number in %g..%g, got \"%s\"", what, o->dmin, o->dmax,
                                       text);
            return rlvr_args_error(verb, usage, "%s wants a number, got \"%s\"", what, text);
        }
        *(double *)o->out = v;
        break;
    }
    case RLVR_OPT_FLAG:
        *(bool *)o->out = true;
        break;
    case RLVR_OPT_END:
        break;
    }
    if (o->seen) *o->seen = true;
    return RLVR_ARGS_CONTINUE;
}

static const rlvr_opt *find_named(const rlvr_opt *opts, const char *name, size_t len) {
    for (const rlvr_opt *o = opts; o->kind != RLVR_OPT_END; o++)
        if (o->name && strlen(o->name) == len && strncmp(o->name, name, len) == 0) return o;
    return NULL;
}

/* The positional entry the next positional argument fills, or NULL. */
static const rlvr_opt *next_positional(const rlvr_opt *opts, size_t taken) {
    size_t k = 0;
    for (const rlvr_opt *o = opts; o->kind != RLVR_OPT_END; o++) {
        if (o->name) continue;
        if (o->kind == RLVR_OPT_LIST) return o; /* takes the rest */
        if (k++ == taken) return o;
    }
    return NULL;
}

int rlvr_args_parse(const char *verb, const rlvr_opt *opts, void (*usage)(FILE *out), int argc, char **argv) {
    size_t n_opts = 0;
    while (opts[n_opts].kind != RLVR_OPT_END) n_opts++;
    bool seen[n_opts + 1];
    memset(seen, 0, sizeof seen);
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            if (usage) usage(stdout);
            return RLVR_EXIT_OK;
        } else if (strcmp(argv[i], "--") == 0) break;

    size_t positionals = 0;
    bool options_done = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const rlvr_opt *o;
        const char *value = NULL;
        if (!options_done && strcmp(a, "--") == 0) {
            options_done = true;
            continue;
        }
        if (!options_done && a[0] == '-' && a[1] != '\0') {
            const char *eq = strchr(a, '=');
            o = find_named(opts, a, eq ? (size_t)(eq - a) : strlen(a));
            if (!o) return rlvr_args_error(verb, usage, "unknown option %.*s", eq ? (int)(eq - a) : (int)strlen(a), a);
            if (o->kind == RLVR_OPT_FLAG) {
                if (eq) return rlvr_args_error(verb, usage, "%s takes no value", o->name);
            } else if (eq) {
                value = eq + 1;
            } else if (i + 1 < argc) {
                value = argv[++i];
            } else {
                char what[128];
                label(what, sizeof what, o);
                return rlvr_args_error(verb, usage, "%s needs a value", what);
            }
        } else {
            o = next_positional(opts, positionals++);
            if (!o) return rlvr_args_error(verb, usage, "unexpected argument \"%s\"", a);
            value = a;
        }
        int rc = store(verb, usage, o, value);
        if (rc != RLVR_ARGS_CONTINUE) return rc;
        seen[o - opts] = true;
    }
    for (size_t k = 0; k < n_opts; k++) {
        const rlvr_opt *o = &opts[k];
        if (!o->required || seen[k]) continue;
        char what[128];
        label(what, sizeof what, o);
        return rlvr_args_error(verb, usage, "missing %s", what);
    }
    return RLVR_ARGS_CONTINUE;
}
