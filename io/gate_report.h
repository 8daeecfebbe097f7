/* io/gate_report.h — the release gate's report as an HDF5 file (format
 * "rlvr.gate_report", version 1; schema: docs/FORMATS.md "Gate report"), and
 * the run directory's `promoted` marker.
 *
 * The rows are plain data so io/ needs nothing of eval/: jobs/gate.c turns
 * the decision (eval/gate.h) and both evaluations into them. The file is
 * written as PATH.part, closed, fsynced, renamed and the directory fsynced,
 * like every rlvr file; every dataset is chunked with shuffle + deflate and
 * Fletcher32. */
#ifndef RLVR_IO_GATE_REPORT_H
#define RLVR_IO_GATE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RLVR_FORMAT_GATE_REPORT "rlvr.gate_report"
#define RLVR_GATE_REPORT_FORMAT_VERSION 1

/* Fixed widths of the string datasets (bytes, NUL included); longer values
 * are cut. */
#define RLVR_GATE_REPORT_NAME_WIDTH 16
#define RLVR_GATE_REPORT_FAMILY_WIDTH 64

/* One of the three criteria: target, regression, compliance. */
typedef struct {
    const char *name;
    bool passed;
    double value;     /* target: interval low end; regression: smallest low end (NAN: no tasks); compliance: share */
    double threshold; /* value must be ≥ threshold: −tolerance, −regression_tolerance, compliance_min */
} rlvr_gate_file_criterion;

/* One paired test (the target, then each regression family). */
typedef struct {
    const char *criterion;  /* "target" or "regression" */
    const char *split, *family;
    int32_t n_tasks, unpaired;
    double base_pass1, cand_pass1, mean_diff, low, high, tolerance;
    bool passed;
} rlvr_gate_file_test;

/* One estimate of one checkpoint on one family of one split. */
typedef struct {
    const char *checkpoint; /* "baseline" or "candidate" */
    const char *split, *family;
    const char *metric;     /* "pass@k" or "pass^k" */
    int64_t k;
    int32_t tasks;          /* tasks averaged */
    double value, low, high;
} rlvr_gate_file_estimate;

typedef struct {
    const char *candidate, *baseline;
    int64_t candidate_step, candidate_version;
    bool passed;
    int64_t samples;
    uint64_t seed;
    double time_unix;
    const rlvr_gate_file_criterion *criteria;
    size_t n_criteria;
    const rlvr_gate_file_test *tests;
    size_t n_tests;
    const rlvr_gate_file_estimate *estimates;
    size_t n_estimates;
    const char *json;       /* the JSON report, stored verbatim as /report_json (NULL: "") */
} rlvr_gate_file;

/* Writes the report to `path` atomically. */
int rlvr_gate_report_write(const char *path, const rlvr_gate_file *g);

/* Reads a report's decision back: checks the format, reads the root
 * `passed` attribute and the /criteria/passed flags (checksummed) and
 * refuses a file where they disagree (RLVR_EFORMAT). */
int rlvr_gate_report_read_passed(const char *path, bool *passed, size_t *n_criteria);

/* Writes <run_dir>/promoted atomically (temp file, fsync, rename, fsync
 * dir): one line, `checkpoint`. */
int rlvr_gate_write_promoted(const char *run_dir, const char *checkpoint);

/* The checkpoint path <run_dir>/promoted names (its one line, without the
 * newline) into path[cap]. RLVR_ENOTFOUND when nothing was promoted yet;
 * RLVR_EFORMAT for an empty or overlong line. */
int rlvr_gate_read_promoted(const char *run_dir, char *path, size_t cap);

#endif
