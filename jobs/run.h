/* jobs/run.h — kept only for the verbs that still include it: the exit
 * statuses are jobs/commands.h's and rlvr_run_open is jobs/schemas.h's. */
#ifndef RLVR_JOBS_RUN_H
#define RLVR_JOBS_RUN_H

#include "jobs/commands.h"
#include "jobs/schemas.h"

#endif
