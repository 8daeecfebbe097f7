/* jobs/schemas.h — every configuration key rlvr understands, gathered from
 * the modules' schema tables, so that one file can configure a whole run. */
#ifndef RLVR_JOBS_SCHEMAS_H
#define RLVR_JOBS_SCHEMAS_H

#include "core/config.h"
#include "train/config.h" /* the runtime's own sections: [sft], [train], [tokenizer], [quickstart] */
#include "train/run.h"

/* NULL-terminated list of all modules' key tables. */
extern const rlvr_config_key *const rlvr_all_config_schemas[];

/* rlvr_run_load (train/run.h) with every one of those tables. */
int rlvr_run_open(rlvr_run *r, const char *config_path, const char *out_dir);

#endif
