/* jobs/report.c — `rlvr report RUN [--out FILE.html] [--sweep DIR]...`: one
 * self-contained HTML page of a run's metrics (docs/REPORT.md), built and
 * written by report/report.h: parse, call, print. */
#include "core/error.h"
#include "jobs/args.h"
#include "jobs/commands.h"
#include "jobs/schemas.h"
#include "report/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_SWEEP_DIRS 16

typedef struct {
    const char *run, *out;
    rlvr_opt_list sweeps;
} report_args;

static void usage(FILE *out) {
    fprintf(out,
            "usage: rlvr report RUN [--out FILE.html] [--sweep DIR]...\n\n"
            "Writes one self-contained HTML page (inline SVG charts, no network, no external files) of a run:\n"
            "reward and pass rate, informative groups, entropy with its target band, length, staleness and\n"
            "drops, clipping/KL, gradient norm and log-prob mismatch, throughput and time per step (from\n"
            "RUN/metrics.h5), the SFT loss (RUN/sft/metrics.h5), gate results (RUN/gate/*.json) and sweep\n"
            "curves (RUN/sweep*/sweep.csv). Missing parts are skipped with a note on the page.\n\n"
            "  RUN             run directory (the --out of rlvr sft / rlvr train)\n"
            "  --out FILE      where to write the page (default RUN/report.html)\n"
            "  --sweep DIR     also draw DIR/sweep.csv (or DIR when it is a CSV file); repeatable\n\n"
            "Exit status: 0 written, 1 RUN has no metrics file or cannot be read, 2 usage error.\n"
            "See docs/REPORT.md.\n");
}

static int parse(report_args *a, int argc, char **argv) {
    *a = (report_args){0};
    const rlvr_opt opts[] = {
        RLVR_OPT("--out", RLVR_OPT_STRING, &a->out, "FILE"),
        RLVR_OPT("--sweep", RLVR_OPT_LIST, &a->sweeps, "DIR"),
        RLVR_OPT(NULL, RLVR_OPT_STRING, &a->run, "RUN", .required = true),
        {0},
    };
    int rc = rlvr_args_parse("report", opts, usage, argc, argv);
    if (rc == RLVR_ARGS_CONTINUE && a->sweeps.n > MAX_SWEEP_DIRS)
        rc = rlvr_args_error("report", usage, "at most %d --sweep directories", MAX_SWEEP_DIRS);
    return rc;
}

int rlvr_cmd_report(int argc, char **argv) {
    report_args a;
    int parsed = parse(&a, argc, argv);
    if (parsed != RLVR_ARGS_CONTINUE) {
        rlvr_opt_list_free(&a.sweeps);
        return parsed;
    }
    char out[RLVR_REPORT_PATH_CAP];
    bool given = a.out && a.out[0];
    snprintf(out, sizeof out, given ? "%s" : "%s/report.html", given ? a.out : a.run);
    rlvr_report_options o = {.run = a.run, .sweeps = a.sweeps.items, .n_sweeps = a.sweeps.n,
                             .schemas = rlvr_all_config_schemas};
    rlvr_report *r = NULL;
    int rc = rlvr_report_open(&r, &o);
    if (rc == 0) rc = rlvr_report_write(r, out, (int64_t)time(NULL));
    int status = RLVR_EXIT_OK;
    if (rc < 0) {
        /* every failure here is the run's or the file system's: exit 1 */
        rlvr_cmd_fail("report", rc);
        status = RLVR_EXIT_FAILURE;
    } else {
        printf("report: wrote %s (%zu charts, %zu notes)\n", out, r->n_charts, r->n_notes);
    }
    rlvr_report_free(r);
    rlvr_opt_list_free(&a.sweeps);
    return status;
}
