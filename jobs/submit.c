/* jobs/submit.c — `rlvr submit CONFIG [--out RUNDIR] [--dry-run]`: a run as
 * a chain of Slurm jobs (slurm/chain.h, docs/OPERATIONS.md "Slurm chains"):
 * parse, call, print. */
#include "core/error.h"
#include "jobs/args.h"
#include "jobs/commands.h"
#include "jobs/schemas.h"
#include "slurm/chain.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static void usage(FILE *out) {
    fprintf(out,
            "usage: rlvr submit CONFIG [--out RUNDIR] [--dry-run]\n"
            "  Submits the run as a chain of Slurm jobs: SFT, then [slurm] segments RL jobs (each resuming\n"
            "  from the previous one's checkpoint), with a gate after each segment that promotes a passing\n"
            "  checkpoint (<run>/promoted). Scripts go to <run>/slurm/, job ids to <run>/chain/jobs.tsv.\n"
            "  Submitting an existing run again skips the finished parts and continues from the latest\n"
            "  checkpoint; it is refused while the run's chain is still queued or running.\n"
            "  --out RUNDIR   the run directory (default: [run] out_dir/name)\n"
            "  --dry-run      write the scripts and print the sbatch command lines; submit nothing\n"
            "  Layout and resources: [slurm] in docs/CONFIG.md; docs/OPERATIONS.md \"Slurm chains\".\n"
            "exit status: 0 submitted, 1 failure (sbatch, a live chain), 2 usage or configuration error\n");
}

static void print_part(const rlvr_chain *c, const rlvr_chain_part *p, const char *done_marker, void *arg) {
    (void)c;
    if (done_marker) {
        printf("skipping %-8s finished (%s)\n", p->name, done_marker);
        return;
    }
    if (p->command) printf("dry-run: %s\n", p->command);
    printf("%s %-8s job %s  %s\n", *(const bool *)arg ? "would submit" : "submitted", p->name, p->id, p->script);
    fflush(stdout);
}

static int submit(rlvr_chain *c, const rlvr_run *run, const char *config_path, bool dry_run) {
    RLVR_TRY(rlvr_chain_plan(c, run->cfg, run->train.steps, run->train.init));
    RLVR_TRY(rlvr_chain_setup(c, run->io.run_dir, run->tasks.pool, NULL, NULL));
    bool unchecked, replaced;
    RLVR_TRY(rlvr_chain_check_idle(c, dry_run, &unchecked));
    if (unchecked) fprintf(stderr, "submit: note: squeue not found, not checking the previous chain's jobs (dry run)\n");
    RLVR_TRY(rlvr_chain_copy_config(c, config_path, &replaced));
    if (replaced) fprintf(stderr, "submit: note: %s replaced: it differed from %s\n", c->config_copy, config_path);
    int submitted;
    RLVR_TRY(rlvr_chain_submit(c, dry_run, print_part, &dry_run, &submitted));
    if (submitted == 0) printf("the chain of %s is complete: nothing to submit\n", c->run_dir);
    else if (!dry_run)
        printf("chain: %d job%s submitted; `rlvr status %s` follows it, `rlvr cancel %s` stops it\n", submitted,
               submitted == 1 ? "" : "s", c->run_dir, c->run_dir);
    return 0;
}

int rlvr_cmd_submit(int argc, char **argv) {
    const char *config_path = NULL, *out = NULL;
    bool dry_run = false;
    const rlvr_opt opts[] = {
        RLVR_OPT("--out", RLVR_OPT_STRING, &out, "RUNDIR"),
        RLVR_OPT("--dry-run", RLVR_OPT_FLAG, &dry_run, NULL),
        RLVR_OPT(NULL, RLVR_OPT_STRING, &config_path, "CONFIG", .required = true),
        {0},
    };
    int early = rlvr_args_parse("submit", opts, usage, argc, argv);
    if (early != RLVR_ARGS_CONTINUE) return early;
    rlvr_run run;
    memset(&run, 0, sizeof run);
    int rc = rlvr_run_open(&run, config_path, out);
    if (rc < 0) return rlvr_cmd_fail("submit", rc);
    rlvr_chain chain;
    rc = submit(&chain, &run, config_path, dry_run);
    int status = rc < 0 ? rlvr_cmd_fail("submit", rc) : RLVR_EXIT_OK;
    rlvr_chain_free(&chain);
    rlvr_run_close(&run);
    return status;
}
