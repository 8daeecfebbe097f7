/* enclave/config.h — the [sandbox] and [enclave] sections of a run's
 * configuration (docs/CONFIG.md).
 *
 * [sandbox]: how sandboxes are built on this machine and the limits of every
 * command the policy runs in its workspace.
 * [enclave]: verification: limits of a hidden-test run, consensus,
 * quarantine and the diff gate. Limits [enclave] does not set come from
 * [sandbox]. */
#ifndef RLVR_ENCLAVE_CONFIG_H
#define RLVR_ENCLAVE_CONFIG_H

#include "core/config.h"
#include "enclave/sandbox.h"

#include <stdbool.h>
#include <stddef.h>

extern const rlvr_config_key rlvr_sandbox_config_keys[];
extern const rlvr_config_key rlvr_enclave_config_keys[];

/* Host options from [sandbox]; the strings live as long as cfg. */
int rlvr_sandbox_host_options_from_config(const rlvr_config *cfg, rlvr_sandbox_host_options *out);

/* A sandbox host as the [sandbox] section of the run file at config_path
 * describes it, the file parsed with `schemas` (config_path NULL: the
 * defaults). rlvr_sandbox_host_free frees it. */
int rlvr_sandbox_host_new_from_file(rlvr_sandbox_host **out, const char *config_path,
                                    const rlvr_config_key *const *schemas);

/* Limits of a workspace command from [sandbox]. */
int rlvr_sandbox_limits_from_config(const rlvr_config *cfg, rlvr_sandbox_limits *out);

/* What [enclave] says about verification. */
typedef struct {
    rlvr_sandbox_limits limits;  /* one enclave run: [sandbox] with [enclave]'s overrides */
    int consensus_runs;          /* K */
    int quarantine_runs;         /* reference runs of the quarantine pass */
    double quarantine_max_share; /* drop a task with more of its tests quarantined */
    size_t max_patch_bytes;      /* diff gate */
    int max_patch_files;
    bool fresh_enclaves;         /* a new enclave per run instead of restoring the pooled one */
} rlvr_enclave_settings;

int rlvr_enclave_settings_from_config(const rlvr_config *cfg, rlvr_enclave_settings *out);

#endif
