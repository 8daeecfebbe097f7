#include "jobs/schemas.h"

#include "slurm/config.h"

/* The training runtime's tables (train/config.h lists them), then the
 * command's own. */
const rlvr_config_key *const rlvr_all_config_schemas[] = {
    RLVR_TRAIN_SCHEMA_TABLES,
    rlvr_slurm_config_keys,
    NULL,
};

int rlvr_run_open(rlvr_run *r, const char *config_path, const char *out_dir) {
    return rlvr_run_load(r, config_path, out_dir, rlvr_all_config_schemas);
}
