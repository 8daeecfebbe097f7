/* jobs/evalcommon.h — how the commands that evaluate checkpoints (`rlvr
 * eval`, `rlvr gate`, `rlvr sweep`) print what the library reports through
 * its hooks (eval/evaljob.h): its lines, and the progress line. */
#ifndef RLVR_JOBS_EVALCOMMON_H
#define RLVR_JOBS_EVALCOMMON_H

#include "eval/evaljob.h"

/* Hooks that print each line on stderr and a progress line at most every
 * 2 s and at the end; `last` (seconds of the last progress line, restarted
 * by each line, which precedes each evaluation run) is their state. */
rlvr_evaljob_hooks rlvr_cmd_eval_hooks(double *last);

/* Hooks that print each line on stdout (and no progress). */
rlvr_evaljob_hooks rlvr_cmd_eval_stdout_hooks(void);

#endif
