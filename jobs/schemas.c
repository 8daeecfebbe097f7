#include "jobs/schemas.h"

#include "enclave/config.h"
#include "envs/config.h"
#include "eval/gate.h"
#include "io/config.h"
#include "jobs/chain.h"
#include "mpi/layout.h"
#include "policy/model_config.h"
#include "policy/sampler.h"
#include "rl/config.h"

/* One line per module table, in dependency order (docs/DESIGN.md, "Folders"). */
const rlvr_config_key *const rlvr_all_config_schemas[] = {
    rlvr_model_config_keys,
    rlvr_optim_config_keys,
    rlvr_sampler_config_keys,
    rlvr_rl_config_keys,
    rlvr_rl_plan_config_keys,
    rlvr_sandbox_config_keys,
    rlvr_enclave_config_keys,
    rlvr_tasks_config_keys,
    rlvr_harness_config_keys,
    rlvr_layout_config_keys,
    rlvr_io_config_keys,
    rlvr_tokenizer_config_keys,
    rlvr_sft_config_keys,
    rlvr_train_config_keys,
    rlvr_quickstart_config_keys,
    rlvr_gate_config_keys,
    rlvr_slurm_config_keys,
    NULL,
};
