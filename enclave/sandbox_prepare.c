/* enclave/sandbox_prepare.c — the prepare process: the runtime's step
 * before a command (verification applies the patch with it).
 *
 * It is a process of its own, forked by the run's init before the command,
 * so that the runtime's code never holds the results descriptor: nothing
 * the prepare step does (or the patch makes it do) can write results the
 * judge would read. It is confined like the command (sandbox_confine.c);
 * its exit code is its function's value, and a non-zero one means the
 * command never runs. Setup failures go to init as ERROR on `err`. */
#include "enclave/sandbox_internal.h"

void rlvr_sb_prepare_main(const rlvr_sb_run_plan *plan, int out, int err) {
    err = rlvr_sb_confine(plan, false, out, -1, err, -1);
    /* the argument is this process's own copy (from the spawner's image) */
    rlvr_sb_run_runtime_code(err, plan->cmd->prepare, (void *)plan->cmd->prepare_arg);
}
