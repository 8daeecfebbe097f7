/* jobs/train.c — `rlvr train CONFIG [--out DIR] [--resume] [--until-step N]`:
 * GRPO in one process or over the MPI ranks of [layout] (train/dist.h). The
 * library says how the job ended; this verb turns it into the exit status,
 * and aborts every rank when one failed after start-up. */
#include "core/error.h"
#include "jobs/args.h"
#include "jobs/commands.h"
#include "jobs/schemas.h"
#include "train/dist.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static void usage(FILE *f) {
    fprintf(f, "usage: rlvr train CONFIG [--out DIR] [--resume] [--until-step N]\n"
               "  GRPO with verifiable rewards on the run's train tasks, starting from [train] init\n"
               "  --out DIR         run directory (default [run] out_dir/name)\n"
               "  --resume          continue from the latest checkpoint (implied by SLURM_RESTART_COUNT > 0)\n"
               "  --until-step N    end this job after step N with a checkpoint (exit 0): one segment of\n"
               "                    a chain; the learning-rate schedule still spans [train] steps\n");
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
    rlvr_run_args args = {.resume = rlvr_run_slurm_restarted()};
    const rlvr_opt opts[] = {
        RLVR_OPT(NULL, RLVR_OPT_STRING, &args.config, "CONFIG", .required = true),
        RLVR_OPT("--out", RLVR_OPT_STRING, &args.out, "DIR"),
        RLVR_OPT("--resume", RLVR_OPT_FLAG, &args.resume, NULL),
        RLVR_OPT("--until-step", RLVR_OPT_INT, &args.until_step, "N", .min = 1, .max = INT64_MAX),
        {0},
    };
    int parsed = rlvr_args_parse("train", opts, usage, argc, argv);
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
