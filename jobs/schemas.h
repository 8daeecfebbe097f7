/* jobs/schemas.h — every configuration key rlvr understands, gathered from
 * the modules' schema tables, so that one file can configure a whole run. */
#ifndef RLVR_JOBS_SCHEMAS_H
#define RLVR_JOBS_SCHEMAS_H

#include "core/config.h"

/* NULL-terminated list of all modules' key tables. */
extern const rlvr_config_key *const rlvr_all_config_schemas[];

/* The jobs' own sections, [sft], [train] and [quickstart] (jobs/run.c). */
extern const rlvr_config_key rlvr_tokenizer_config_keys[];
extern const rlvr_config_key rlvr_sft_config_keys[];
extern const rlvr_config_key rlvr_train_config_keys[];
extern const rlvr_config_key rlvr_quickstart_config_keys[];

#endif
