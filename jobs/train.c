/* jobs/train.c — the training verbs, which share their command line
 * (CONFIG [--out DIR] [--resume] [--until-step N]; --resume is implied when
 * Slurm requeued the job):
 *   `rlvr sft`: the supervised bootstrap (train/sft.h); a signal ends it
 *   with RLVR_EXIT_STOPPED after a checkpoint.
 *   `rlvr train`: GRPO in one process or over the MPI ranks of [layout]
 *   (train/dist.h). The library says how the job ended; this verb turns it
 *   into the exit status, and aborts every rank when one failed after
 *   start-up. */
#include "core/error.h"
#include "jobs/args.h"
#include "jobs/commands.h"
#include "jobs/schemas.h"
#include "train/dist.h"
#include "train/sft.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static void train_usage(FILE *out) {
    fprintf(out, "usage: rlvr train CONFIG [--out DIR] [--resume] [--until-step N]\n"
               "  GRPO with verifiable rewards on the run's train tasks, starting from [train] init\n"
               "  --out DIR         run directory (default [run] out_dir/name)\n"
               "  --resume          continue from the latest checkpoint (implied by SLURM_RESTART_COUNT > 0)\n"
               "  --until-step N    end this job after step N with a checkpoint (exit 0): one segment of\n"
               "                    a chain; the learning-rate schedule still spans [train] steps\n");
}

/* Parses the training verbs' command line into *a. */
static int parse(rlvr_run_args *a, const char *verb, void (*usage)(FILE *), int argc, char **argv) {
    *a = (rlvr_run_args){.resume = rlvr_run_slurm_restarted()};
    const rlvr_opt opts[] = {
        RLVR_OPT(NULL, RLVR_OPT_STRING, &a->config, "CONFIG", .required = true),
        RLVR_OPT("--out", RLVR_OPT_STRING, &a->out, "DIR"),
        RLVR_OPT("--resume", RLVR_OPT_FLAG, &a->resume, NULL),
        RLVR_OPT("--until-step", RLVR_OPT_INT, &a->until_step, "N", .min = 1, .max = INT64_MAX),
        {0},
    };
    return rlvr_args_parse(verb, opts, usage, argc, argv);
}

static void sft_usage(FILE *out) {
    fprintf(out, "usage: rlvr sft CONFIG [--out DIR] [--resume]\n"
               "  supervised bootstrap on demonstrations (the train tasks' reference solutions played\n"
               "  through the tools); writes DIR/sft/checkpoints and DIR/sft/metrics.h5\n"
               "  --out DIR   run directory (default [run] out_dir/name)\n"
               "  --resume    continue from the latest SFT checkpoint (implied by SLURM_RESTART_COUNT > 0)\n");
}

int rlvr_cmd_sft(int argc, char **argv) {
    rlvr_run_args args;
    int parsed = parse(&args, "sft", sft_usage, argc, argv);
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

/* RLVR_EXIT_OK, RLVR_EXIT_STOPPED after a signal (every rank),
 * RLVR_EXIT_USAGE for a configuration error, else RLVR_EXIT_FAILURE;
 * prints the error unless the library has said it. */
static int exit_status(const rlvr_train_outcome *o) {
    if (o->rc == 1) return RLVR_EXIT_STOPPED;
    if (o->rc >= 0) return RLVR_EXIT_OK;
    if (!o->reported) return rlvr_cmd_fail("train", o->rc);
    return o->rc == RLVR_ECONFIG ? RLVR_EXIT_USAGE : RLVR_EXIT_FAILURE;
}

int rlvr_cmd_train(int argc, char **argv) {
    rlvr_run_args args;
    int parsed = parse(&args, "train", train_usage, argc, argv);
    if (parsed != RLVR_ARGS_CONTINUE) return parsed;
    rlvr_train_outcome o;
    rlvr_train_job(&args, rlvr_all_config_schemas, NULL, &o);
    int code = exit_status(&o);
    if (o.abort) { /* a rank cannot leave alone: the others would wait for it */
        fflush(NULL);
        MPI_Abort(MPI_COMM_WORLD, code);
        exit(code);
    }
    return code;
}
