/* slurm/config.c — the [slurm] table, its reader and Slurm's time formats
 * (slurm/config.h). */
#include "slurm/config.h"

#include "core/error.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

const rlvr_config_key rlvr_slurm_config_keys[] = {
    RLVR_KEY_STRING("slurm", "partition", rlvr_slurm_config, partition, "",
        "partition of every job (`--partition`; empty: the cluster's default)"),
    RLVR_KEY_STRING("slurm", "account", rlvr_slurm_config, account, "",
        "account charged (`--account`; empty: your default)"),
    RLVR_KEY_STRING("slurm", "qos", rlvr_slurm_config, qos, "", "quality of service (`--qos`; empty: the default)"),
    RLVR_KEY_STRING("slurm", "time", rlvr_slurm_config, time, "",
        "time limit of each job (`--time`: MINUTES, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS; empty: the "
        "partition's); a segment gets USR1 `grace_s` before it, checkpoints and is requeued"),
    RLVR_KEY_I64("slurm", "nodes", rlvr_slurm_config, nodes, "1", 1, 100000,
        "nodes of each RL segment (`--nodes`; SFT and gate jobs use one)"),
    RLVR_KEY_I64("slurm", "ntasks_per_node", rlvr_slurm_config, ntasks_per_node, "0", 0, 100000,
        "MPI ranks per node of an RL segment (`--ntasks-per-node`); nodes × this must equal the [layout] total. 0: "
        "`--ntasks` = the [layout] total when the file sets [layout], else 1 (one process)"),
    RLVR_KEY_I64("slurm", "cpus_per_task", rlvr_slurm_config, cpus_per_task, "0", 0, 100000,
        "CPUs per rank (`--cpus-per-task`; 0: not requested)"),
    RLVR_KEY_I64("slurm", "gpus_per_node", rlvr_slurm_config, gpus_per_node, "0", 0, 1024,
        "GPUs per node (`--gpus-per-node`; 0: not requested)"),
    RLVR_KEY_STRING("slurm", "mem", rlvr_slurm_config, mem, "",
        "memory per node (`--mem`, e.g. 64G; empty: the partition's default)"),
    RLVR_KEY_STRING("slurm", "extra", rlvr_slurm_config, extra, "",
        "more #SBATCH lines for every job, ';'-separated (e.g. `--constraint=a100; --exclusive`)"),
    RLVR_KEY_I64("slurm", "segments", rlvr_slurm_config, segments, "1", 1, 1000,
        "RL jobs the [train] steps are split into (segment k ends after step ⌊steps·k/segments⌋; each resumes from "
        "the previous one's checkpoint)"),
    RLVR_KEY_I64("slurm", "grace_s", rlvr_slurm_config, grace_s, "120", 1, 86400,
        "seconds before the time limit at which a job gets USR1 (`--signal=B:USR1@grace_s`): it finishes its step, "
        "checkpoints and is requeued"),
    RLVR_KEY_ENUM_NAME("slurm", "launcher", rlvr_slurm_config, launcher, "srun", "srun|none",
        "how an RL segment starts its ranks: `srun` (`srun --mpi=pmix`) or `none` (rlvr runs in the batch shell: "
        "one-process layouts only)"),
    RLVR_KEY_STRING("slurm", "baseline", rlvr_slurm_config, baseline, "sft",
        "what each gate compares the segment's checkpoint with: `sft` (the final SFT checkpoint), `promoted` (the "
        "last promoted checkpoint, else the SFT one) or a checkpoint path"),
    RLVR_KEY_BOOL("slurm", "gate", rlvr_slurm_config, gate, "true",
        "a gate job after each segment (`rlvr gate --promote`): a pass writes <run>/promoted"),
    RLVR_KEY_I64("slurm", "max_requeues", rlvr_slurm_config, max_requeues, "20", 0, 10000,
        "times a job requeues itself after stopping at a checkpoint (USR1 before the time limit); then it ends with "
        "exit 3 and `rlvr submit` continues the chain"),
    RLVR_KEY_END,
};

/* ---- Slurm's time formats ------------------------------------------------ */

#define TIME_FORMATS "MINUTES, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS"

static int bad_time(const char *text, const char *why) {
    return rlvr_error_set(RLVR_EINVAL, "\"%s\" is not a Slurm time (" TIME_FORMATS "): %s", text, why);
}

/* A run of 1 to 9 decimal digits at *p (9: no product below overflows). */
static int time_field(const char **p, int64_t *v) {
    int64_t x = 0;
    int digits = 0;
    for (; isdigit((unsigned char)**p); (*p)++, digits++) {
        if (digits == 9) return -1;
        x = x * 10 + (**p - '0');
    }
    if (digits == 0) return -1;
    *v = x;
    return 0;
}

int rlvr_slurm_time_seconds(const char *text, int64_t *seconds) {
    const char *p = text;
    if (!*p) return bad_time(text, "empty");
    int64_t days = 0, v[3];
    const char *dash = strchr(text, '-');
    if (dash) {
        if (time_field(&p, &days) < 0 || p != dash)
            return bad_time(text, "the days before '-' are not a number of at most 9 digits");
        p++;
    }
    int n = 0;
    for (;;) {
        if (n == 3) return bad_time(text, "more than three ':'-separated fields");
        if (time_field(&p, &v[n]) < 0)
            return bad_time(text, "a field is empty, not a number or longer than 9 digits");
        n++;
        if (!*p) break;
        if (*p != ':') return bad_time(text, "a field holds something other than digits");
        p++;
    }
    int64_t s;
    if (dash) /* D-HH, D-HH:MM, D-HH:MM:SS */
        s = v[0] * 3600 + (n > 1 ? v[1] * 60 : 0) + (n > 2 ? v[2] : 0);
    else if (n == 1) /* minutes */
        s = v[0] * 60;
    else if (n == 2) /* MM:SS */
        s = v[0] * 60 + v[1];
    else
        s = v[0] * 3600 + v[1] * 60 + v[2];
    *seconds = days * 86400 + s;
    return 0;
}

/* ---- [slurm] ----------------------------------------------------------------- */

static bool has_space(const char *s) {
    for (; *s; s++)
        if (isspace((unsigned char)*s)) return true;
    return false;
}

int rlvr_slurm_config_read(rlvr_slurm_config *s, const rlvr_config *cfg) {
    memset(s, 0, sizeof *s);
    RLVR_TRY(rlvr_config_fill(cfg, rlvr_slurm_config_keys, "slurm", s));
    /* the text keys become #SBATCH options, which white space would split;
     * `extra` holds whole lines */
    for (const rlvr_config_key *k = rlvr_slurm_config_keys; k->key; k++) {
        if (k->field != RLVR_FIELD_STRING || strcmp(k->key, "extra") == 0) continue;
        const char *v;
        memcpy(&v, (const char *)s + k->offset, sizeof v);
        if (has_space(v)) return rlvr_config_error(cfg, k->section, k->key, "\"%s\" holds white space", v);
    }
    if (s->time[0]) {
        int64_t limit;
        if (rlvr_slurm_time_seconds(s->time, &limit) < 0) {
            rlvr_error_clear();
            return rlvr_config_error(cfg, "slurm", "time", "\"%s\" is not a Slurm time (" TIME_FORMATS ")", s->time);
        }
        if (limit <= s->grace_s)
            return rlvr_config_error(cfg, "slurm", "time",
                                     "the limit (%lld s) must exceed [slurm] grace_s (%lld s), or USR1 would "
                                     "come before the job starts working",
                                     (long long)limit, (long long)s->grace_s);
    }
    if (!s->baseline[0])
        return rlvr_config_error(cfg, "slurm", "baseline", "empty: use sft, promoted or a checkpoint path");
    return 0;
}
