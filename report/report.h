/* report/report.h — the page `rlvr report` writes (docs/REPORT.md): a run
 * directory read into a model of sections, charts, series and tables, and
 * that model rendered as one self-contained HTML page (inline SVG from
 * io/svg.h, inline CSS, a few lines of script; nothing loaded from anywhere).
 *
 *     rlvr_report *r = NULL;
 *     rlvr_report_options o = {.run = "runs/a", .schemas = schemas};
 *     int rc = rlvr_report_open(&r, &o);              reads and builds
 *     if (rc == 0) rc = rlvr_report_write(r, "runs/a/report.html", time(NULL));
 *     rlvr_report_free(r);
 *
 * Reads RUN/metrics.h5 (rlvr train), RUN/sft/metrics.h5 (rlvr sft), the
 * run configuration (RUN/manifest.h5 or RUN/sft/manifest.h5, else the
 * latest checkpoint), the gate reports RUN/gate/<name>.json ("rlvr-gate/1")
 * and the sweep tables RUN/sweep<name>/sweep.csv plus any given. Whatever is
 * missing is skipped with a note; a run without any metrics file is an
 * error. */
#ifndef RLVR_REPORT_REPORT_H
#define RLVR_REPORT_REPORT_H

#include "core/config.h"
#include "core/text.h"
#include "io/metrics.h"
#include "io/svg.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RLVR_REPORT_PATH_CAP 4096
#define RLVR_REPORT_MAX_SERIES 12 /* per chart; a sweep with more families gets a note */

typedef struct {
    const char *run;                       /* the run directory (the --out of rlvr sft / train) */
    const char *const *sweeps;             /* more sweep tables: DIR (DIR/sweep.csv) or a CSV file */
    size_t n_sweeps;
    const rlvr_config_key *const *schemas; /* NULL-terminated: what the stored configuration parses with */
} rlvr_report_options;

/* ---- the model ------------------------------------------------------------------ */

/* One chart as io/svg.h draws it. The series' arrays point into the
 * report's metrics tables and inputs, or into `owned` (derived values). */
typedef struct {
    char id[64];          /* "reward", "sweep-0-k4": the element id is "chart-<id>" */
    char title[RLVR_REPORT_PATH_CAP + 64];
    const char *caption;
    const char *x_label, *y2_label; /* y2_label NULL: no right axis */
    char y_label[64];
    bool from_zero;       /* both axes include 0 */
    rlvr_svg_series series[RLVR_REPORT_MAX_SERIES];
    size_t n_series;
    rlvr_svg_hband band;  /* the entropy target band; label points into band_label */
    bool has_band;
    char band_label[96];
    void *owned[4 * RLVR_REPORT_MAX_SERIES]; /* freed with the chart */
    size_t n_owned;
} rlvr_report_chart;

typedef enum {
    RLVR_REPORT_TABLE_NONE,
    RLVR_REPORT_TABLE_LAST_ROW, /* the last row of `metrics`: every measured column */
    RLVR_REPORT_TABLE_GATES,    /* one row per gate report */
} rlvr_report_table;

/* A heading, its charts in page order, then a table. */
typedef struct {
    const char *heading;        /* "Reinforcement learning (metrics.h5)" */
    rlvr_report_chart **charts; /* each owned by the report */
    size_t n_charts;
    rlvr_report_table table;
    const rlvr_metrics_table *metrics; /* LAST_ROW */
    const char *table_id, *table_title; /* LAST_ROW: "last-rl", "RL metrics" */
} rlvr_report_section;

/* Rows and steps of one metrics file. */
typedef struct {
    bool present;      /* the file exists */
    int64_t rows, first_step, last_step;
    double wall_s;     /* first step's start to last step's end; NaN when unknown */
} rlvr_report_steps;

typedef struct {
    char name[256];    /* the manifest's run_name, else [run] name, else the directory's name */
    bool has_config;   /* the stored configuration parsed */
    uint64_t config_hash;
    bool has_seed;
    uint64_t seed;
    char config_from[RLVR_REPORT_PATH_CAP]; /* the file the configuration came from */
    /* the manifest's attributes; "" when absent */
    char status[512], started[512], finished[512], git_commit[512];
    rlvr_report_steps rl, sft;
} rlvr_report_header;

/* A gate report (RUN/gate/<name>.json) as its table row and charts use it.
 * Numbers are NaN and verdicts -1 where the file does not have them. */
typedef struct {
    char *name; /* NULL when absent */
    double base_pass1, cand_pass1, low, high;
    int8_t passed;
} rlvr_report_gate_family;

typedef struct {
    double base_pass1, cand_pass1, mean_diff, low, high, tolerance;
    int8_t passed;
} rlvr_report_gate_target;

typedef struct {
    char file[RLVR_REPORT_PATH_CAP];
    int64_t step;      /* candidate_step; -1 when absent */
    double version;    /* candidate_version */
    int8_t passed;     /* 1 promoted, 0 rejected, -1 unknown */
    rlvr_report_gate_target target;
    int8_t regression_passed;
    rlvr_report_gate_family *families;
    size_t n_families;
    double compliance_value, compliance_threshold;
    int8_t compliance_passed;
} rlvr_report_gate;

typedef struct {
    char family[128];
    int64_t k;
    double step, pass, low, high;
} rlvr_report_sweep_row;

typedef struct {
    char path[RLVR_REPORT_PATH_CAP];
    rlvr_report_sweep_row *rows;
    size_t n;
} rlvr_report_sweep;

typedef struct {
    char run[RLVR_REPORT_PATH_CAP];
    rlvr_report_header header;
    rlvr_config *config;        /* the run configuration, or NULL (none stored, or it does not parse) */
    rlvr_metrics_table rl, sft; /* empty when the file is absent (header.rl.present) */
    double *rl_x, *sft_x;       /* their steps as doubles: the charts' x */
    rlvr_report_gate *gates;    /* by candidate step, then file name */
    size_t n_gates;
    rlvr_report_sweep *sweeps;  /* RUN/sweep* by name, then the given ones */
    size_t n_sweeps;
    rlvr_report_section *sections;
    size_t n_sections;
    size_t n_charts;            /* in all sections */
    char **notes;               /* what was skipped and why, in the order found (plain text) */
    size_t n_notes;
    bool failed;                /* out of memory while building: rlvr_report_open fails */
} rlvr_report;

/* ---- building, rendering, writing ------------------------------------------------------ */

/* Reads the run directory `o->run` and builds the model. RLVR_ENOTFOUND when
 * it is not a directory or has neither metrics file (the message names both
 * paths); a metrics file that cannot be read fails with the reader's error
 * (naming the file). Everything else missing becomes a note. Free with
 * rlvr_report_free. */
int rlvr_report_open(rlvr_report **out, const rlvr_report_options *o);

void rlvr_report_free(rlvr_report *r);

/* The chart with this id, or NULL. */
const rlvr_report_chart *rlvr_report_find_chart(const rlvr_report *r, const char *id);
/* The series of `c` whose legend text is `name`, or NULL. */
const rlvr_svg_series *rlvr_report_find_series(const rlvr_report_chart *c, const char *name);

/* Appends the whole page to `out`; `generated_unix` is the header's "page
 * generated" time. RLVR_ENOMEM when the text could not grow. */
int rlvr_report_render(const rlvr_report *r, int64_t generated_unix, rlvr_text *out);

/* Renders the page and writes it to `path` atomically (core/fs.h): a
 * browser or a copy never sees half a page. */
int rlvr_report_write(const rlvr_report *r, const char *path, int64_t generated_unix);

#endif
