/* jobs/sft.c — `rlvr sft CONFIG [--out DIR] [--resume]`: the supervised
 * bootstrap (train/sft.h); a signal ends it with RLVR_EXIT_STOPPED after a
 * checkpoint. */
#include "jobs/args.h"
#include "jobs/commands.h"
#include "jobs/schemas.h"
#include "train/sft.h"

#include <stdio.h>

static void usage(FILE *f) {
    fprintf(f, "usage: rlvr sft CONFIG [--out DIR] [--resume]\n"
               "  supervised bootstrap on demonstrations (the train tasks' reference solutions played\n"
               "  through the tools); writes DIR/sft/checkpoints and DIR/sft/metrics.h5\n"
               "  --out DIR   run directory (default [run] out_dir/name)\n"
               "  --resume    continue from the latest SFT checkpoint (implied by SLURM_RESTART_COUNT > 0)\n");
}

int rlvr_cmd_sft(int argc, char **argv) {
    rlvr_run_args args = {.resume = rlvr_run_slurm_restarted()};
    const rlvr_opt opts[] = {
        RLVR_OPT(NULL, RLVR_OPT_STRING, &args.config, "CONFIG", .required = true),
        RLVR_OPT("--out", RLVR_OPT_STRING, &args.out, "DIR"),
        RLVR_OPT("--resume", RLVR_OPT_FLAG, &args.resume, NULL),
        RLVR_OPT("--until-step", RLVR_OPT_INT, &args.until_step, "N", .min = 1, .max = INT64_MAX),
        {0},
    };
    int parsed = rlvr_args_parse("sft", opts, usage, argc, argv);
    if (parsed != RLVR_ARGS_CONTINUE) return parsed;
    if (args.until_step > 0) {
        fprintf(stderr, "rlvr sft: --until-step is an option of `rlvr train` (SFT runs [sft] steps in one job)\n");
        return RLVR_EXIT_USAGE;
    }
    const char *config = args.config, *out = args.out;
    bool resume = args.resume;
    rlvr_run_install_signals();
    rlvr_run r;
    int rc = rlvr_run_open(&r, config, out);
    if (rc < 0) return rlvr_cmd_fail("sft", rc);
    char final[RLVR_IO_PATH_CAP];
    rc = rlvr_sft_run(&r, resume, final, sizeof final);
    rlvr_run_close(&r);
    if (rc == 1) {
        if (final[0])
            fprintf(stderr, "sft: stopped by signal %d after a checkpoint; resume with --resume\n",
                    (int)rlvr_run_stop_flag);
        else
            fprintf(stderr, "sft: stopped by signal %d before the first step: nothing to save; run it again\n",
                    (int)rlvr_run_stop_flag);
        return RLVR_EXIT_STOPPED;
    }
    if (rc < 0) return rlvr_cmd_fail("sft", rc);
    printf("sft: done; final checkpoint %s\n", final);
    return RLVR_EXIT_OK;
}
