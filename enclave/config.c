#include "enclave/config.h"

#include "core/error.h"

#include <stdint.h>

const rlvr_config_key rlvr_sandbox_config_keys[] = {
    {"sandbox", "wall_time_s", RLVR_CFG_FLOAT, "60",
     "wall time of one workspace command; the whole process tree is killed when it runs out (a timeout)", NULL,
     RLVR_CFG_RANGE(0.001, 86400)},
    {"sandbox", "cpu_time_s", RLVR_CFG_FLOAT, "60", "CPU time of one command, all its processes together", NULL,
     RLVR_CFG_RANGE(0.001, 86400)},
    {"sandbox", "memory_mb", RLVR_CFG_INT, "1024",
     "address space of each process and resident memory of a whole command, in MiB", NULL,
     RLVR_CFG_RANGE(16, 1048576)},
    {"sandbox", "processes", RLVR_CFG_INT, "64", "processes of one command at once", NULL, RLVR_CFG_RANGE(1, 65536)},
    {"sandbox", "file_size_mb", RLVR_CFG_INT, "64", "largest file a process may write, in MiB", NULL,
     RLVR_CFG_RANGE(1, 1048576)},
    {"sandbox", "open_files", RLVR_CFG_INT, "256", "open descriptors per process", NULL, RLVR_CFG_RANGE(16, 1048576)},
    {"sandbox", "output_kb", RLVR_CFG_INT, "1024", "stdout + stderr kept from one command, in KiB; more ends it",
     NULL, RLVR_CFG_RANGE(1, 1048576)},
    {"sandbox", "tmp_mb", RLVR_CFG_INT, "64", "size of each command's private /tmp (tmpfs), in MiB", NULL,
     RLVR_CFG_RANGE(1, 1048576)},
    {"sandbox", "disk_mb", RLVR_CFG_INT, "256", "room for writes into the tree (/work), in MiB", NULL,
     RLVR_CFG_RANGE(1, 1048576)},
    {"sandbox", "overlay", RLVR_CFG_BOOL, "true",
     "copy-on-write snapshots (overlayfs) where the kernel permits them; false copies the tree for every sandbox",
     NULL, RLVR_CFG_ANY},
    {"sandbox", "landlock", RLVR_CFG_BOOL, "true",
     "in verification enclaves confine file writes to /work, /tmp and /dev (Landlock, kernel 5.19+)", NULL,
     RLVR_CFG_ANY},
    {"sandbox", "uid", RLVR_CFG_INT, "65534", "host uid sandboxed processes run as when rlvr runs as root", NULL,
     RLVR_CFG_RANGE(1, 4294967294.0)},
    {"sandbox", "gid", RLVR_CFG_INT, "65534", "host gid likewise", NULL, RLVR_CFG_RANGE(1, 4294967294.0)},
    {"sandbox", "scratch_dir", RLVR_CFG_STRING, "",
     "where snapshots and sandbox mount points live (empty: $TMPDIR or /tmp); absolute, without ',' or ':'", NULL,
     RLVR_CFG_ANY},
    {"sandbox", "system_paths", RLVR_CFG_STRING, RLVR_SANDBOX_SYSTEM_PATHS,
     "':'-separated host paths bound read-only into every sandbox (missing ones are skipped)", NULL, RLVR_CFG_ANY},
    {NULL, NULL, 0, NULL, NULL, NULL, RLVR_CFG_ANY},
};

const rlvr_config_key rlvr_enclave_config_keys[] = {
    {"enclave", "wall_time_s", RLVR_CFG_FLOAT, "120", "wall time of one hidden-test run (apply, build, tests)", NULL,
     RLVR_CFG_RANGE(0.001, 86400)},
    {"enclave", "cpu_time_s", RLVR_CFG_FLOAT, "120", "CPU time of one hidden-test run", NULL,
     RLVR_CFG_RANGE(0.001, 86400)},
    {"enclave", "consensus_runs", RLVR_CFG_INT, "3",
     "fresh enclaves a passing patch must pass in, all of them (the re-runs shuffle the test order)", NULL,
     RLVR_CFG_RANGE(1, 64)},
    {"enclave", "quarantine_runs", RLVR_CFG_INT, "30",
     "runs of the reference solution in the quarantine pass; a test that ever fails leaves the reward", NULL,
     RLVR_CFG_RANGE(1, 100000)},
    {"enclave", "quarantine_max_share", RLVR_CFG_FLOAT, "0.25",
     "a task with a larger share of its tests quarantined is dropped", NULL, RLVR_CFG_RANGE(0, 1)},
    {"enclave", "max_patch_kb", RLVR_CFG_INT, "512", "largest patch the diff gate accepts, in KiB", NULL,
     RLVR_CFG_RANGE(1, 1048576)},
    {"enclave", "max_patch_files", RLVR_CFG_INT, "64", "most files one patch may touch", NULL,
     RLVR_CFG_RANGE(1, 1000000)},
    {"enclave", "fresh_enclaves", RLVR_CFG_BOOL, "false",
     "build a new enclave for every run instead of restoring the pooled one (slower, same isolation)", NULL,
     RLVR_CFG_ANY},
    {NULL, NULL, 0, NULL, NULL, NULL, RLVR_CFG_ANY},
};

int rlvr_sandbox_host_options_from_config(const rlvr_config *cfg, rlvr_sandbox_host_options *out) {
    rlvr_sandbox_host_options o = RLVR_SANDBOX_HOST_OPTIONS_INIT;
    int64_t uid, gid;
    const char *scratch;
    RLVR_TRY(rlvr_config_get_bool(cfg, "sandbox", "overlay", &o.overlay));
    RLVR_TRY(rlvr_config_get_bool(cfg, "sandbox", "landlock", &o.landlock));
    RLVR_TRY(rlvr_config_get_int(cfg, "sandbox", "uid", &uid));
    RLVR_TRY(rlvr_config_get_int(cfg, "sandbox", "gid", &gid));
    RLVR_TRY(rlvr_config_get_string(cfg, "sandbox", "scratch_dir", &scratch));
    RLVR_TRY(rlvr_config_get_string(cfg, "sandbox", "system_paths", &o.system_paths));
    o.root_uid = (uid_t)uid;
    o.root_gid = (gid_t)gid;
    o.scratch_dir = scratch[0] ? scratch : NULL;
    if (scratch[0] && scratch[0] != '/')
        return rlvr_config_error(cfg, "sandbox", "scratch_dir", "\"%s\" is not an absolute path", scratch);
    *out = o;
    return 0;
}

int rlvr_sandbox_limits_from_config(const rlvr_config *cfg, rlvr_sandbox_limits *out) {
    int64_t mem, procs, fsize, nofile, output, tmp, disk;
    rlvr_sandbox_limits_default(out); /* every field and the padding set, whatever the keys cover */
    RLVR_TRY(rlvr_config_get_double(cfg, "sandbox", "wall_time_s", &out->wall_s));
    RLVR_TRY(rlvr_config_get_double(cfg, "sandbox", "cpu_time_s", &out->cpu_s));
    RLVR_TRY(rlvr_config_get_int(cfg, "sandbox", "memory_mb", &mem));
    RLVR_TRY(rlvr_config_get_int(cfg, "sandbox", "processes", &procs));
    RLVR_TRY(rlvr_config_get_int(cfg, "sandbox", "file_size_mb", &fsize));
    RLVR_TRY(rlvr_config_get_int(cfg, "sandbox", "open_files", &nofile));
    RLVR_TRY(rlvr_config_get_int(cfg, "sandbox", "output_kb", &output));
    RLVR_TRY(rlvr_config_get_int(cfg, "sandbox", "tmp_mb", &tmp));
    RLVR_TRY(rlvr_config_get_int(cfg, "sandbox", "disk_mb", &disk));
    out->memory_bytes = mem << 20;
    out->processes = (int32_t)procs;
    out->file_bytes = fsize << 20;
    out->open_files = (int32_t)nofile;
    out->output_bytes = output << 10;
    out->tmp_bytes = tmp << 20;
    out->disk_bytes = disk << 20;
    return rlvr_sandbox_limits_check(out);
}

int rlvr_enclave_settings_from_config(const rlvr_config *cfg, rlvr_enclave_settings *out) {
    int64_t consensus, quarantine, patch_kb, patch_files;
    RLVR_TRY(rlvr_sandbox_limits_from_config(cfg, &out->limits));
    RLVR_TRY(rlvr_config_get_double(cfg, "enclave", "wall_time_s", &out->limits.wall_s));
    RLVR_TRY(rlvr_config_get_double(cfg, "enclave", "cpu_time_s", &out->limits.cpu_s));
    RLVR_TRY(rlvr_config_get_int(cfg, "enclave", "consensus_runs", &consensus));
    RLVR_TRY(rlvr_config_get_int(cfg, "enclave", "quarantine_runs", &quarantine));
    RLVR_TRY(rlvr_config_get_double(cfg, "enclave", "quarantine_max_share", &out->quarantine_max_share));
    RLVR_TRY(rlvr_config_get_int(cfg, "enclave", "max_patch_kb", &patch_kb));
    RLVR_TRY(rlvr_config_get_int(cfg, "enclave", "max_patch_files", &patch_files));
    RLVR_TRY(rlvr_config_get_bool(cfg, "enclave", "fresh_enclaves", &out->fresh_enclaves));
    out->consensus_runs = (int)consensus;
    out->quarantine_runs = (int)quarantine;
    out->max_patch_bytes = (size_t)patch_kb << 10;
    out->max_patch_files = (int)patch_files;
    return 0;
}
