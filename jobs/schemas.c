#include "jobs/schemas.h"

#include "mpi/layout.h"
#include "rl/config.h"

/* One line per module table, in dependency order (DESIGN.md). */
const rlvr_config_key *const rlvr_all_config_schemas[] = {
    rlvr_rl_config_keys,
    rlvr_layout_config_keys,
    rlvr_rl_plan_config_keys,
    NULL,
};
