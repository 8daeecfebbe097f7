#include "mpi/layout.h"
#include "core/error.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>

#define LAYOUT_MAX_RANKS 1000000

const rlvr_config_key rlvr_layout_config_keys[] = {
    RLVR_KEY_I32("layout", "trainer", rlvr_layout_config, counts.trainer, "1", 1, LAYOUT_MAX_RANKS,
        "trainer ranks (world ranks 0..T-1; rank 0 leads: step counter, policy version, admission, checkpoints)"),
    RLVR_KEY_I32("layout", "verifier", rlvr_layout_config, counts.verifier, "1", 1, LAYOUT_MAX_RANKS,
        "verifier ranks (world ranks T..T+V-1): check patches in fresh enclaves and return verdicts"),
    RLVR_KEY_I32("layout", "rollout", rlvr_layout_config, counts.rollout, "1", 1, LAYOUT_MAX_RANKS,
        "rollout ranks (world ranks T+V..T+V+R-1): generate rollouts; trainer+verifier+rollout = MPI world size"),
    RLVR_KEY_DOUBLE("layout", "timeout_s", rlvr_layout_config, timeout_s, "1800", 0.1, 1e7,
        "seconds the leader waits for the next record, verdict or weights broadcast before it fails the job, naming "
        "what is missing and the checkpoint to resume from (a rank that hangs)"),
    RLVR_KEY_END,
};

static const char *const role_names[RLVR_ROLE_COUNT] = {"trainer", "verifier", "rollout"};

const char *rlvr_role_name(rlvr_rank_role role) {
    return (unsigned)role < RLVR_ROLE_COUNT ? role_names[role] : "unknown";
}

int rlvr_layout_count(const rlvr_layout *l, rlvr_rank_role role) {
    switch (role) {
    case RLVR_ROLE_TRAINER: return l->trainer;
    case RLVR_ROLE_VERIFIER: return l->verifier;
    case RLVR_ROLE_ROLLOUT: return l->rollout;
    default: return 0;
    }
}

/* First world rank of a role. */
static int role_base(const rlvr_layout *l, rlvr_rank_role role) {
    switch (role) {
    case RLVR_ROLE_TRAINER: return 0;
    case RLVR_ROLE_VERIFIER: return l->trainer;
    default: return l->trainer + l->verifier;
    }
}

/* The check shared by both validators; `cfg` may be NULL. */
static int layout_check(const rlvr_layout *l, int world_size, const rlvr_config *cfg) {
    for (int r = 0; r < RLVR_ROLE_COUNT; r++) {
        int n = rlvr_layout_count(l, (rlvr_rank_role)r);
        if (n < 1 || n > LAYOUT_MAX_RANKS) {
            if (cfg)
                return rlvr_config_error(cfg, "layout", role_names[r], "%d ranks: every role needs 1 to %d ranks",
                                         n, LAYOUT_MAX_RANKS);
            return rlvr_error_set(RLVR_ECONFIG, "[layout] %s = %d: every role needs 1 to %d ranks", role_names[r],
                                  n, LAYOUT_MAX_RANKS);
        }
    }
    int total = rlvr_layout_world_size(l);
    if (total == world_size) return 0;
    /* Name the key a user most often changes; the message shows all three. */
    const char *key = "rollout";
    if (cfg)
        return rlvr_config_error(cfg, "layout", key,
                                 "trainer=%d + verifier=%d + rollout=%d = %d ranks, but the MPI world size is %d: "
                                 "change [layout] so the counts add up to %d, or launch %d ranks "
                                 "(mpirun -np %d / srun -n %d)",
                                 l->trainer, l->verifier, l->rollout, total, world_size, world_size, total, total,
                                 total);
    return rlvr_error_set(RLVR_ECONFIG,
                          "[layout] trainer=%d + verifier=%d + rollout=%d = %d ranks, but the MPI world size is %d: "
                          "change [layout] so the counts add up to %d, or launch %d ranks",
                          l->trainer, l->verifier, l->rollout, total, world_size, world_size, total);
}

int rlvr_layout_validate(const rlvr_layout *layout, int world_size) {
    if (!layout) return rlvr_error_set(RLVR_EINVAL, "rlvr_layout_validate: layout is NULL");
    return layout_check(layout, world_size, NULL);
}

int rlvr_layout_config_read(rlvr_layout_config *out, const rlvr_config *cfg) {
    if (!out || !cfg) return rlvr_error_set(RLVR_EINVAL, "rlvr_layout_config_read: NULL argument");
    rlvr_layout_config c = {0};
    RLVR_TRY(rlvr_config_fill(cfg, rlvr_layout_config_keys, "layout", &c));
    /* the counts are the keys whose field lies in `counts`, the first member */
    _Static_assert(offsetof(rlvr_layout_config, counts) == 0, "counts leads rlvr_layout_config");
    for (const rlvr_config_key *k = rlvr_layout_config_keys; k->key; k++)
        if (k->offset < sizeof c.counts && rlvr_config_is_set(cfg, k->section, k->key)) c.counts_set = true;
    *out = c;
    return 0;
}

int rlvr_layout_from_config(rlvr_layout *out, const rlvr_config *cfg, int world_size) {
    if (!out || !cfg) return rlvr_error_set(RLVR_EINVAL, "rlvr_layout_from_config: NULL argument");
    rlvr_layout_config c;
    RLVR_TRY(rlvr_layout_config_read(&c, cfg));
    RLVR_TRY(layout_check(&c.counts, world_size, cfg));
    *out = c.counts;
    return 0;
}

int rlvr_layout_role_of(const rlvr_layout *l, int world_rank, rlvr_rank_role *role, int *role_rank) {
    int total = rlvr_layout_world_size(l);
    if (world_rank < 0 || world_rank >= total)
        return rlvr_error_set(RLVR_EINVAL, "world rank %d is outside the layout's %d ranks", world_rank, total);
    rlvr_rank_role found = world_rank < l->trainer                 ? RLVR_ROLE_TRAINER
                      : world_rank < l->trainer + l->verifier ? RLVR_ROLE_VERIFIER
                                                              : RLVR_ROLE_ROLLOUT;
    if (role) *role = found;
    if (role_rank) *role_rank = world_rank - role_base(l, found);
    return 0;
}

int rlvr_layout_world_rank(const rlvr_layout *l, rlvr_rank_role role, int role_rank) {
    int n = rlvr_layout_count(l, role);
    if ((unsigned)role >= RLVR_ROLE_COUNT || role_rank < 0 || role_rank >= n)
        return rlvr_error_set(RLVR_EINVAL, "%s rank %d does not exist (the layout has %d)", rlvr_role_name(role),
                              role_rank, n);
    return role_base(l, role) + role_rank;
}

/* Parses a positive task count; -1 when the text is not one. */
static long parse_count(const char *text) {
    if (!text || !*text) return -1;
    errno = 0;
    char *end = NULL;
    long v = strtol(text, &end, 10);
    if (errno || *end || v < 1 || v > INT_MAX) return -1;
    return v;
}

int rlvr_mpi_check_launch_env(int world_size, const char *ompi_world_size, const char *slurm_step_tasks,
                              const char *slurm_ntasks) {
    const char *name = NULL, *value = NULL;
    if (ompi_world_size) name = "OMPI_COMM_WORLD_SIZE", value = ompi_world_size;
    else if (slurm_step_tasks) name = "SLURM_STEP_NUM_TASKS", value = slurm_step_tasks;
    else if (slurm_ntasks) name = "SLURM_NTASKS", value = slurm_ntasks;
    if (!name) return 0;
    long expected = parse_count(value);
    if (expected < 0)
        return rlvr_error_set(RLVR_ECONFIG, "%s=\"%s\" is not a task count; unset it or launch with srun/mpirun",
                              name, value);
    if (expected == world_size) return 0;
    if (world_size == 1)
        return rlvr_error_set(RLVR_ECONFIG,
                              "this process is MPI rank 0 of 1, but the launcher started %ld tasks (%s=%ld): each "
                              "task came up as its own single-rank MPI job (the singleton trap), so ranks cannot "
                              "reach each other. Under Slurm launch with `srun --mpi=pmix` (see `srun --mpi=list`; "
                              "Debian needs libpmix-dev), or use mpirun",
                              expected, name, expected);
    return rlvr_error_set(RLVR_ECONFIG,
                          "the MPI world has %d ranks, but the launcher started %ld tasks (%s=%ld): launch every "
                          "task into one MPI job (`srun --mpi=pmix`, or mpirun -np %ld)",
                          world_size, expected, name, expected, expected);
}

int rlvr_mpi_check_launch(int world_size) {
    return rlvr_mpi_check_launch_env(world_size, getenv("OMPI_COMM_WORLD_SIZE"), getenv("SLURM_STEP_NUM_TASKS"),
                                     getenv("SLURM_NTASKS"));
}
