#include "enclave/config.h"

#include "core/error.h"

#include <stdint.h>
#include <string.h>

/* [sandbox] and [enclave] as written, in the file's units (MiB, KiB): the
 * readers below convert them into the limits' bytes. */
typedef struct {
    double wall_time_s, cpu_time_s;
    int64_t memory_mb, processes, file_size_mb, open_files, output_kb, tmp_mb, disk_mb;
    bool overlay, landlock;
    int64_t uid, gid;
    const char *scratch_dir, *system_paths;
} sandbox_keys;

typedef struct {
    double wall_time_s, cpu_time_s;
    int64_t consensus_runs, quarantine_runs;
    double quarantine_max_share;
    int64_t max_patch_kb, max_patch_files;
    bool fresh_enclaves;
} enclave_keys;

const rlvr_config_key rlvr_sandbox_config_keys[] = {
    RLVR_KEY_DOUBLE("sandbox", "wall_time_s", sandbox_keys, wall_time_s, "60", 0.001, 86400,
        "wall time of one workspace command; the whole process tree is killed when it runs out (a timeout)"),
    RLVR_KEY_DOUBLE("sandbox", "cpu_time_s", sandbox_keys, cpu_time_s, "60", 0.001, 86400,
        "CPU time of one command, all its processes together"),
    RLVR_KEY_I64("sandbox", "memory_mb", sandbox_keys, memory_mb, "1024", 16, 1048576,
        "address space of each process and resident memory of a whole command, in MiB"),
    RLVR_KEY_I64("sandbox", "processes", sandbox_keys, processes, "64", 1, 65536,
        "processes of one command at once"),
    RLVR_KEY_I64("sandbox", "file_size_mb", sandbox_keys, file_size_mb, "64", 1, 1048576,
        "largest file a process may write, in MiB"),
    RLVR_KEY_I64("sandbox", "open_files", sandbox_keys, open_files, "256", 16, 1048576,
        "open descriptors per process"),
    RLVR_KEY_I64("sandbox", "output_kb", sandbox_keys, output_kb, "1024", 1, 1048576,
        "stdout + stderr kept from one command, in KiB; more ends it"),
    RLVR_KEY_I64("sandbox", "tmp_mb", sandbox_keys, tmp_mb, "64", 1, 1048576,
        "size of each command's private /tmp (tmpfs), in MiB"),
    RLVR_KEY_I64("sandbox", "disk_mb", sandbox_keys, disk_mb, "256", 1, 1048576,
        "room for writes into the tree (/work), in MiB"),
    RLVR_KEY_BOOL("sandbox", "overlay", sandbox_keys, overlay, "true",
        "copy-on-write snapshots (overlayfs) where the kernel permits them; false copies the tree for every sandbox"),
    RLVR_KEY_BOOL("sandbox", "landlock", sandbox_keys, landlock, "true",
        "in verification enclaves confine file writes to /work, /tmp and /dev (Landlock, kernel 5.19+)"),
    RLVR_KEY_I64("sandbox", "uid", sandbox_keys, uid, "65534", 1, 4294967294.0,
        "host uid sandboxed processes run as when rlvr runs as root"),
    RLVR_KEY_I64("sandbox", "gid", sandbox_keys, gid, "65534", 1, 4294967294.0, "host gid likewise"),
    RLVR_KEY_STRING("sandbox", "scratch_dir", sandbox_keys, scratch_dir, "",
        "where snapshots and sandbox mount points live (empty: $TMPDIR or /tmp); absolute, without ',' or ':'"),
    RLVR_KEY_STRING("sandbox", "system_paths", sandbox_keys, system_paths, RLVR_SANDBOX_SYSTEM_PATHS,
        "':'-separated host paths bound read-only into every sandbox (missing ones are skipped); paths under "
        "/tmp, /work, /proc, /dev and /.rlvr are refused (every sandbox mounts those itself); name no directory "
        "that holds a host service's socket (docs/ENCLAVE.md)"),
    RLVR_KEY_END,
};

const rlvr_config_key rlvr_enclave_config_keys[] = {
    RLVR_KEY_DOUBLE("enclave", "wall_time_s", enclave_keys, wall_time_s, "120", 0.001, 86400,
        "wall time of one hidden-test run (apply, build, tests)"),
    RLVR_KEY_DOUBLE("enclave", "cpu_time_s", enclave_keys, cpu_time_s, "120", 0.001, 86400,
        "CPU time of one hidden-test run"),
    RLVR_KEY_I64("enclave", "consensus_runs", enclave_keys, consensus_runs, "3", 1, 64,
        "fresh enclaves a passing patch must pass in, all of them (the re-runs shuffle the test order)"),
    RLVR_KEY_I64("enclave", "quarantine_runs", enclave_keys, quarantine_runs, "30", 1, 100000,
        "runs of the reference solution in the quarantine pass; a test that ever fails leaves the reward"),
    RLVR_KEY_DOUBLE("enclave", "quarantine_max_share", enclave_keys, quarantine_max_share, "0.25", 0, 1,
        "a task with a larger share of its tests quarantined is dropped"),
    RLVR_KEY_I64("enclave", "max_patch_kb", enclave_keys, max_patch_kb, "512", 1, 1048576,
        "largest patch the diff gate accepts, in KiB"),
    RLVR_KEY_I64("enclave", "max_patch_files", enclave_keys, max_patch_files, "64", 1, 1000000,
        "most files one patch may touch"),
    RLVR_KEY_BOOL("enclave", "fresh_enclaves", enclave_keys, fresh_enclaves, "false",
        "build a new enclave for every run instead of restoring the pooled one (slower, same isolation)"),
    RLVR_KEY_END,
};

int rlvr_sandbox_host_options_from_config(const rlvr_config *cfg, rlvr_sandbox_host_options *out) {
    rlvr_sandbox_host_options o = RLVR_SANDBOX_HOST_OPTIONS_INIT;
    sandbox_keys k = {0};
    RLVR_TRY(rlvr_config_fill(cfg, rlvr_sandbox_config_keys, "sandbox", &k));
    o.overlay = k.overlay;
    o.landlock = k.landlock;
    o.system_paths = k.system_paths;
    o.root_uid = (uid_t)k.uid;
    o.root_gid = (gid_t)k.gid;
    o.scratch_dir = k.scratch_dir[0] ? k.scratch_dir : NULL;
    if (k.scratch_dir[0] && k.scratch_dir[0] != '/')
        return rlvr_config_error(cfg, "sandbox", "scratch_dir", "\"%s\" is not an absolute path", k.scratch_dir);
    *out = o;
    return 0;
}

void rlvr_sandbox_limits_default(rlvr_sandbox_limits *l) {
    /* the [sandbox] table's defaults cannot fail to parse (test_config_tables) */
    (void)rlvr_sandbox_limits_from_config(NULL, l);
}

int rlvr_sandbox_limits_from_config(const rlvr_config *cfg, rlvr_sandbox_limits *out) {
    sandbox_keys k = {0};
    memset(out, 0, sizeof *out); /* padding too: limits are compared and hashed as bytes */
    RLVR_TRY(rlvr_config_fill(cfg, rlvr_sandbox_config_keys, "sandbox", &k));
    out->wall_s = k.wall_time_s;
    out->cpu_s = k.cpu_time_s;
    out->memory_bytes = k.memory_mb << 20;
    out->processes = (int32_t)k.processes;
    out->file_bytes = k.file_size_mb << 20;
    out->open_files = (int32_t)k.open_files;
    out->output_bytes = k.output_kb << 10;
    out->tmp_bytes = k.tmp_mb << 20;
    out->disk_bytes = k.disk_mb << 20;
    return rlvr_sandbox_limits_check(out);
}

int rlvr_enclave_settings_from_config(const rlvr_config *cfg, rlvr_enclave_settings *out) {
    enclave_keys k = {0};
    RLVR_TRY(rlvr_sandbox_limits_from_config(cfg, &out->limits));
    RLVR_TRY(rlvr_config_fill(cfg, rlvr_enclave_config_keys, "enclave", &k));
    out->limits.wall_s = k.wall_time_s;
    out->limits.cpu_s = k.cpu_time_s;
    out->consensus_runs = (int)k.consensus_runs;
    out->quarantine_runs = (int)k.quarantine_runs;
    out->quarantine_max_share = k.quarantine_max_share;
    out->max_patch_bytes = (size_t)k.max_patch_kb << 10;
    out->max_patch_files = (int)k.max_patch_files;
    out->fresh_enclaves = k.fresh_enclaves;
    return 0;
}

int rlvr_sandbox_host_new_from_file(rlvr_sandbox_host **out, const char *config_path,
                                    const rlvr_config_key *const *schemas) {
    rlvr_sandbox_host_options ho = RLVR_SANDBOX_HOST_OPTIONS_INIT;
    rlvr_config *cfg = NULL;
    int rc = config_path ? rlvr_config_load(&cfg, config_path, schemas) : 0;
    if (rc == 0 && cfg) rc = rlvr_sandbox_host_options_from_config(cfg, &ho);
    if (rc == 0) rc = rlvr_sandbox_host_new(out, &ho); /* ho's strings are cfg's: used before it goes */
    rlvr_config_free(cfg);
    return rc;
}
