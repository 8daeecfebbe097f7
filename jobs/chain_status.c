/* jobs/chain_status.c — `rlvr status RUNDIR` and `rlvr cancel RUNDIR`: a
 * run's Slurm chain (slurm/chain.h) as Slurm and the run directory see it:
 * parse, call, print. */
#include "core/error.h"
#include "jobs/args.h"
#include "jobs/commands.h"
#include "slurm/chain.h"

#include <stdio.h>

/* The command's RUNDIR argument and its chain: RLVR_ARGS_CONTINUE to go on
 * with *v loaded, else the exit status (usage, or the error printed). */
static int open_chain(const char *verb, int argc, char **argv, void (*usage)(FILE *), const char **run_dir,
                      rlvr_chain_view *v) {
    *run_dir = NULL;
    const rlvr_opt opts[] = {
        RLVR_OPT(NULL, RLVR_OPT_STRING, run_dir, "RUNDIR", .required = true),
        {0},
    };
    int early = rlvr_args_parse(verb, opts, usage, argc, argv);
    if (early != RLVR_ARGS_CONTINUE) return early;
    int rc = rlvr_chain_view_load(*run_dir, v);
    if (rc < 0) {
        rlvr_chain_view_free(v);
        return rlvr_cmd_fail(verb, rc);
    }
    return RLVR_ARGS_CONTINUE;
}

static void status_usage(FILE *out) {
    fprintf(out, "usage: rlvr status RUNDIR\n"
               "  The run's Slurm chain (`rlvr submit`): each part's job, its state (squeue, else sacct or\n"
               "  the jobcomp log), exit code and marker (done, pass/reject for gates, blocked), then the\n"
               "  latest checkpoint, the promoted one and the last metrics row.\n"
               "exit status: 0, 1 when the run has no chain or Slurm's answer cannot be read\n");
}

static void print_results(const rlvr_chain_results *r) {
    if (!r->checkpoint[0]) printf("latest checkpoint: none yet\n");
    else printf("latest checkpoint: %s%s\n", r->checkpoint, r->checkpoint_sft ? " (SFT)" : "");
    printf("promoted: %s\n", r->promoted[0] ? r->promoted : "none");
    if (r->metrics_error[0]) {
        printf("last metrics: %s\n", r->metrics_error);
        return;
    }
    if (!r->metrics_file[0]) {
        printf("last metrics: none yet\n");
        return;
    }
    printf("last metrics (%s): step %lld", r->metrics_file, (long long)r->step);
    for (size_t k = 0; k < r->n_values; k++) printf("  %s %.4g", r->names[k], r->values[k]);
    printf("\n");
}

int rlvr_cmd_status(int argc, char **argv) {
    const char *run_dir;
    rlvr_chain_view v;
    int early = open_chain("status", argc, argv, status_usage, &run_dir, &v);
    if (early != RLVR_ARGS_CONTINUE) return early;
    printf("chain of %s\n", run_dir);
    if (!v.states_ok) printf("(squeue not found: job states unknown, markers only)\n");
    printf("%-8s %-10s %-26s %-6s %-20s %s\n", "part", "job", "state", "exit", "end", "marker");
    for (size_t i = 0; i < v.n; i++) {
        rlvr_chain_row row;
        rlvr_chain_row_of(run_dir, &v.jobs[i], v.states, v.n_states, &row);
        printf("%-8s %-10s %-26s %-6s %-20s %s\n", v.jobs[i].part, v.jobs[i].id, row.state, row.exit_code, row.end,
               row.marker);
    }
    rlvr_chain_results r;
    rlvr_chain_results_read(run_dir, &r);
    print_results(&r);
    rlvr_chain_view_free(&v);
    return RLVR_EXIT_OK;
}

static void cancel_usage(FILE *out) {
    fprintf(out, "usage: rlvr cancel RUNDIR\n"
               "  Cancels the queued and running jobs of the run's Slurm chain (scancel). Checkpoints stay;\n"
               "  `rlvr submit` continues the chain later from the latest one.\n"
               "exit status: 0 (also when nothing was live), 1 when scancel or squeue failed\n");
}

int rlvr_cmd_cancel(int argc, char **argv) {
    const char *run_dir;
    rlvr_chain_view v;
    int early = open_chain("cancel", argc, argv, cancel_usage, &run_dir, &v);
    if (early != RLVR_ARGS_CONTINUE) return early;
    char names[4096];
    int rc = rlvr_chain_cancel(&v, names, sizeof names);
    rlvr_chain_view_free(&v);
    if (rc < 0) return rlvr_cmd_fail("cancel", rc);
    if (names[0]) printf("cancelled: %s\n", names);
    else printf("nothing to cancel: no job of the chain of %s is queued or running\n", run_dir);
    return RLVR_EXIT_OK;
}
