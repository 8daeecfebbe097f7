/* report/report.c — the report's life: open (load, then build), notes,
 * look-ups for tests and callers, free. */
#include "core/error.h"
#include "report/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rlvr_report_join(char *out, const char *dir, const char *leaf) {
    size_t a = strlen(dir), b = strlen(leaf);
    if (a + 1 + b >= RLVR_REPORT_PATH_CAP) {
        out[0] = '\0';
        return;
    }
    memcpy(out, dir, a);
    out[a] = '/';
    memcpy(out + a + 1, leaf, b + 1);
}

void rlvr_report_note(rlvr_report *r, const char *fmt, ...) {
    char buf[2 * RLVR_REPORT_PATH_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char **all = realloc(r->notes, (r->n_notes + 1) * sizeof *all);
    char *copy = all ? strdup(buf) : NULL;
    if (all) r->notes = all;
    if (!copy) {
        r->failed = true;
        return;
    }
    r->notes[r->n_notes++] = copy;
}

int rlvr_report_open(rlvr_report **out, const rlvr_report_options *o) {
    *out = NULL;
    rlvr_report *r = calloc(1, sizeof *r);
    if (!r) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    snprintf(r->run, sizeof r->run, "%s", o->run);
    int rc = rlvr_report_load(r, o);
    if (rc == 0) rc = rlvr_report_build(r);
    if (rc == 0 && r->failed) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory building the page");
    if (rc < 0) {
        rlvr_report_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

void rlvr_report_free(rlvr_report *r) {
    if (!r) return;
    rlvr_report_free_sections(r);
    rlvr_report_free_inputs(r);
    for (size_t i = 0; i < r->n_notes; i++) free(r->notes[i]);
    free(r->notes);
    free(r);
}

const rlvr_report_chart *rlvr_report_find_chart(const rlvr_report *r, const char *id) {
    for (size_t i = 0; i < r->n_sections; i++)
        for (size_t j = 0; j < r->sections[i].n_charts; j++)
            if (strcmp(r->sections[i].charts[j]->id, id) == 0) return r->sections[i].charts[j];
    return NULL;
}

const rlvr_svg_series *rlvr_report_find_series(const rlvr_report_chart *c, const char *name) {
    for (size_t i = 0; c && i < c->n_series; i++)
        if (c->series[i].name && strcmp(c->series[i].name, name) == 0) return &c->series[i];
    return NULL;
}
