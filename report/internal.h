/* report/internal.h — what the files of report/ share: notes, loading the
 * run directory (load.c) and building the charts (charts.c). */
#ifndef RLVR_REPORT_INTERNAL_H
#define RLVR_REPORT_INTERNAL_H

#include "report/report.h"

/* A note on the page: something skipped and why (plain text, escaped when
 * rendered). */
void rlvr_report_note(rlvr_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "<dir>/<leaf>" into out[RLVR_REPORT_PATH_CAP]; too long a path becomes ""
 * (nothing exists there). */
void rlvr_report_join(char *out, const char *dir, const char *leaf);

/* Reads the metrics files, the configuration, the manifest's attributes,
 * the gate reports and the sweep tables into `r`. */
int rlvr_report_load(rlvr_report *r, const rlvr_report_options *o);

/* Frees what rlvr_report_load read (not the sections). */
void rlvr_report_free_inputs(rlvr_report *r);

/* Builds the sections and their charts from what rlvr_report_load read. */
int rlvr_report_build(rlvr_report *r);
/* Frees the sections and their charts. */
void rlvr_report_free_sections(rlvr_report *r);

#endif
