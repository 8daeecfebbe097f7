/* bench/bench_pipeline.c — `rlvr bench pipeline`: rollouts per second of
 * bounded-async GRPO (Δv_max = 2) against synchronous GRPO on the same MPI
 * layout, with heavy-tailed environment latency.
 *
 * Workload. The same tiny arithmetic training run twice, once with [train]
 * max_staleness = 0 and once with 2: 1 trainer, 1 verifier and R rollout
 * ranks, a model so small that generating costs little, so environment time
 * dominates. Arithmetic tasks are single-turn (no tool call, so the
 * harness's per-turn simulated_latency never fires): the latency is applied
 * per rollout instead (rlvr_train_simulation, train/dist.h). A finished
 * rollout holds one of its rank's environments for a latency drawn from the
 * lognormal law of bench/latency.h (the one `rlvr bench harness` uses; median,
 * σ, cut at 30 medians, keyed by the rollout's sampling keys) before its
 * record is sent; each rollout rank has groups_per_step·G/R environments,
 * exactly what one synchronous step gives it ([dynamic_sampling] max_rounds
 * = 1), and starts a group only when all of it fits.
 *
 * Synchronous, a step waits for the slowest of its rollouts
 * (T_step = max_i T_rollout + T_train); bounded-async, the rollout ranks
 * refill each environment as it frees and the trainer takes groups as they
 * finish, admitting only those with Δv ≤ 2.
 *
 * Launch. The bench runs itself under mpirun (MPIEXEC, else `mpirun` on the
 * PATH, with --oversubscribe; Open MPI's OMPI_ALLOW_RUN_AS_ROOT variables
 * are the caller's business): each child rank finds RLVR_BENCH_PIPELINE_RUN
 * = "CONFIG\tOUT" in its environment and trains with the simulation.
 *
 * Figures, from the run directories: rollouts/s = Σ rollouts generated and
 * used per step (metrics rollouts_per_s × step_time_s) / Σ step_time_s;
 * the largest staleness of any admitted rollout (every shard's staleness
 * column); rollouts dropped as stale (metrics staleness_dropped). The
 * "ceiling" of bench.h is the synchronous rate measured in the same run;
 * ratio = async / sync. Exit 1 when the ratio is below 1.5, an admitted
 * rollout exceeds Δv_max, or a mode did not train every step. */
#include "bench/bench.h"
#include "bench/latency.h"
#include "core/error.h"
#include "core/record.h"
#include "io/metrics.h"
#include "io/shard.h"
#include "train/config.h"
#include "train/dist.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define RUN_ENV "RLVR_BENCH_PIPELINE_RUN"
#define TARGET_RATIO 1.5
#define ASYNC_STALENESS 2
#define PATH_CAP 512 /* every path lies in a short mkdtemp directory */

typedef struct {
    int rollout_ranks, groups_per_step, group_size, steps;
    double median_s, sigma; /* per-rollout environment latency */
} sizes;

static const sizes QUICK = {2, 4, 4, 8, 0.080, 1.0};
static const sizes FULL = {4, 8, 4, 20, 0.150, 1.0};

/* One mode's figures. */
typedef struct {
    int64_t max_staleness;
    int64_t steps;
    double rollouts, wall_s, rate;
    double staleness_mean, dropped;
    int64_t staleness_max, admitted;
} mode_result;

/* out = a + b; RLVR_ELIMIT when it does not fit. */
static int join(char out[PATH_CAP], const char *a, const char *b) {
    int n = snprintf(out, PATH_CAP, "%s%s", a, b);
    return n >= 0 && n < PATH_CAP ? 0 : RLVR_FAIL(RLVR_ELIMIT, "path too long: %s%s", a, b);
}

static rlvr_latency_law law_of(const sizes *z) {
    return (rlvr_latency_law){.seed = 29, .median_s = z->median_s, .sigma = z->sigma, .cap_s = 30 * z->median_s};
}

static const sizes *sizes_of(bool quick) { return quick ? &QUICK : &FULL; }

static int environments(const sizes *z) { return z->groups_per_step * z->group_size / z->rollout_ranks; }

/* ---- a child rank: train with the simulation ------------------------------------------------ */

static double rollout_delay(void *arg, const rlvr_harness_job *job, int32_t turn) {
    return rlvr_latency_draw(arg, job->step, job->sequence, turn);
}

/* The exit status `rlvr train` would end with (docs/OPERATIONS.md "Exit
 * codes"), saying the error the library has not. */
static int exit_status(const rlvr_train_outcome *o) {
    if (o->rc == 1) return 3;
    if (o->rc >= 0) return 0;
    if (!o->reported) {
        const char *msg = rlvr_error_last();
        fprintf(stderr, "rlvr train: error: %s\n", msg[0] ? msg : rlvr_error_name(o->rc));
    }
    return o->rc == RLVR_ECONFIG ? 2 : 1;
}

static int child(const char *spec, const rlvr_bench_options *opt) {
    char config[4096];
    snprintf(config, sizeof config, "%s", spec);
    char *tab = strchr(config, '\t');
    if (!tab) return RLVR_FAIL(RLVR_EINVAL, "%s=\"%s\" is not \"CONFIG<TAB>OUT\"", RUN_ENV, spec);
    *tab = 0;
    const sizes *z = sizes_of(opt->quick);
    rlvr_latency_law law = law_of(z);
    rlvr_train_simulation sim = {.delay = rollout_delay, .arg = &law, .environments = environments(z)};
    rlvr_run_args args = {.config = config, .out = tab + 1, .resume = false, .until_step = 0};
    rlvr_train_outcome o;
    rlvr_train_job(&args, rlvr_train_schemas, &sim, &o);
    int code = exit_status(&o);
    if (o.abort) { /* a rank cannot leave alone: the others would wait for it */
        fflush(NULL);
        MPI_Abort(MPI_COMM_WORLD, code);
        exit(code);
    }
    if (code != 0) return RLVR_FAIL(RLVR_EIO, "training (%s) ended with exit status %d", config, code);
    return 0;
}

/* ---- the parent: two runs, then the figures ----------------------------------------------- */

static int write_config(const char *path, const char *dir, const sizes *z, int64_t max_staleness) {
    FILE *f = fopen(path, "w");
    if (!f) return RLVR_FAIL(RLVR_EIO, "cannot write %s: %s", path, strerror(errno));
    fprintf(f,
            "[run]\nname = pipeline\nout_dir = %s\nseed = 7\n\n"
            "[model]\nd_model = 32\nn_layers = 1\nn_heads = 2\nn_kv_heads = 1\nd_ff = 64\nmax_seq = 256\n\n"
            "[sampler]\ncontext_tokens = 256\n\n"
            "[tasks]\nfamily = arith\ntrain_count = 32\neval_count = 0\nregression_count = 0\n\n"
            "[harness]\nmax_policy_tokens = 64\nmax_context_tokens = 256\n\n"
            "[reward]\nmax_tokens = 128\nlength_budget = 96\nlength_slope = 0.05\n\n"
            "[grpo]\ngroup_size = %d\ngroups_per_step = %d\n\n"
            "[dynamic_sampling]\nmax_rounds = 1\n\n"
            "[train]\nsteps = %d\ninit = scratch\nmax_staleness = %lld\n\n"
            "[checkpoint]\nevery = 1000\nkeep = 1\n\n"
            "[layout]\ntrainer = 1\nverifier = 1\nrollout = %d\n",
            dir, z->group_size, z->groups_per_step, z->steps, (long long)max_staleness, z->rollout_ranks);
    return fclose(f) == 0 ? 0 : RLVR_FAIL(RLVR_EIO, "cannot write %s: %s", path, strerror(errno));
}

/* Runs `mpirun -np N <this program> bench pipeline [--quick]` with the
 * child's run in the environment; its output goes to `log`. */
static int launch(const char *config, const char *out, const char *log, const sizes *z, bool quick) {
    char exe[PATH_CAP], spec[2 * PATH_CAP + 2], np[16];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return RLVR_FAIL(RLVR_EIO, "cannot find this program (/proc/self/exe): %s", strerror(errno));
    exe[n] = 0;
    if (snprintf(spec, sizeof spec, "%s\t%s", config, out) >= (int)sizeof spec)
        return RLVR_FAIL(RLVR_ELIMIT, "paths too long: %s, %s", config, out);
    snprintf(np, sizeof np, "%d", 2 + z->rollout_ranks);
    const char *mpirun = getenv("MPIEXEC") && getenv("MPIEXEC")[0] ? getenv("MPIEXEC") : "mpirun";
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return RLVR_FAIL(RLVR_EIO, "fork: %s", strerror(errno));
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) dup2(fd, 1), dup2(fd, 2);
        setenv(RUN_ENV, spec, 1);
        if (geteuid() == 0) { /* Open MPI refuses root unless told twice; the bench is the launcher here */
            setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
            setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
        }
        char *argv[] = {(char *)mpirun, "--oversubscribe", "-np", np, exe, "bench", "pipeline",
                        quick ? "--quick" : NULL, NULL};
        execvp(mpirun, argv);
        fprintf(stderr, "cannot run %s: %s (set MPIEXEC to the MPI launcher)\n", mpirun, strerror(errno));
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return RLVR_FAIL(RLVR_EIO, "waitpid: %s", strerror(errno));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
    return RLVR_FAIL(RLVR_EIO, "%s -np %s %s bench pipeline failed (%s %d): see %s", mpirun, np, exe,
                     WIFEXITED(status) ? "exit status" : "signal",
                     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), log);
}

/* Rollouts, wall time, staleness and drops from the metrics. */
static int read_metrics(mode_result *m, const char *run) {
    char path[PATH_CAP];
    RLVR_TRY(join(path, run, "/metrics.h5"));
    rlvr_metrics_table t;
    RLVR_TRY(rlvr_metrics_read(&t, path));
    double *rate = t.value[RLVR_METRIC_ROLLOUTS_PER_S], *wall = t.value[RLVR_METRIC_STEP_TIME_S];
    double *lag = t.value[RLVR_METRIC_STALENESS_MEAN], *dropped = t.value[RLVR_METRIC_STALENESS_DROPPED];
    int rc = rate && wall && lag && dropped ? 0 : RLVR_FAIL(RLVR_EFORMAT, "%s lacks a column the bench reads", path);
    double lag_sum = 0, n_rows = 0;
    for (int64_t i = 0; rc == 0 && i < t.n_rows; i++) {
        m->rollouts += round(rate[i] * wall[i]);
        m->wall_s += wall[i];
        m->dropped += dropped[i];
        lag_sum += lag[i], n_rows++;
    }
    m->steps = t.n_rows;
    m->staleness_mean = n_rows ? lag_sum / n_rows : 0;
    m->rate = m->wall_s > 0 ? m->rollouts / m->wall_s : 0;
    rlvr_metrics_table_free(&t);
    return rc;
}

/* The largest staleness of an admitted rollout, over every step's shard. */
static int read_shards(mode_result *m, const char *run) {
    rlvr_rollout r;
    int rc = rlvr_rollout_init(&r, 256, 4);
    m->staleness_max = -1;
    for (int64_t step = 1; rc == 0 && step <= m->steps; step++) {
        char dir[PATH_CAP], path[PATH_CAP];
        rc = join(dir, run, "/shards");
        if (rc == 0) rc = rlvr_shard_path(path, sizeof path, dir, step, 0);
        rlvr_shard *s = NULL;
        if (rc == 0) rc = rlvr_shard_open(&s, path);
        for (int64_t i = 0; rc == 0 && i < rlvr_shard_info_of(s)->n_rollouts; i++) {
            rc = rlvr_shard_read(s, i, &r, NULL);
            if (rc == 0 && r.staleness > m->staleness_max) m->staleness_max = r.staleness;
            m->admitted += rc == 0;
        }
        rlvr_shard_close(s);
    }
    rlvr_rollout_free(&r);
    return rc;
}

static int run_mode(mode_result *m, const char *tmp, const sizes *z, int64_t max_staleness, bool quick) {
    char config[PATH_CAP], out[PATH_CAP], log[PATH_CAP], leaf[32];
    snprintf(leaf, sizeof leaf, "/dv%lld", (long long)max_staleness);
    RLVR_TRY(join(out, tmp, leaf));
    RLVR_TRY(join(config, out, ".ini"));
    RLVR_TRY(join(log, out, ".log"));
    memset(m, 0, sizeof *m);
    m->max_staleness = max_staleness;
    RLVR_TRY(write_config(config, tmp, z, max_staleness));
    RLVR_TRY(launch(config, out, log, z, quick));
    RLVR_TRY(read_metrics(m, out));
    return read_shards(m, out);
}

static void config_text(char *out, size_t cap, const sizes *z) {
    snprintf(out, cap, "layout=1/1/%d groups_per_step=%d G=%d steps=%d envs_per_rank=%d "
                       "latency=lognormal(median %.0f ms, sigma %.1f) per rollout",
             z->rollout_ranks, z->groups_per_step, z->group_size, z->steps, environments(z), 1e3 * z->median_s,
             z->sigma);
}

static void print_mode(const mode_result *m, const char *config) {
    printf("{\"bench\":\"pipeline\",\"config\":\"%s\",\"mode\":\"%s\",\"max_staleness\":%lld,\"steps\":%lld,"
           "\"rollouts\":%.0f,\"wall_s\":%.6g,\"rollouts_per_s\":%.6g,\"admitted\":%lld,\"staleness_max\":%lld,"
           "\"staleness_mean\":%.6g,\"dropped\":%.0f}\n",
           config, m->max_staleness ? "async" : "sync", (long long)m->max_staleness, (long long)m->steps, m->rollouts,
           m->wall_s, m->rate, (long long)m->admitted, (long long)m->staleness_max, m->staleness_mean, m->dropped);
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
    (void)st, (void)type, (void)ftw;
    return remove(path);
}

static int parent(const rlvr_bench_options *opt) {
    const sizes *z = sizes_of(opt->quick);
    char tmp[] = "/tmp/rlvr-bench-pipeline-XXXXXX";
    if (!mkdtemp(tmp)) return RLVR_FAIL(RLVR_EIO, "mkdtemp: %s", strerror(errno));
    mode_result sync, async;
    int rc = run_mode(&sync, tmp, z, 0, opt->quick);
    if (rc == 0) rc = run_mode(&async, tmp, z, ASYNC_STALENESS, opt->quick);
    if (rc < 0) return rc; /* the directory stays, with the logs the error names */
    char config[256];
    config_text(config, sizeof config, z);
    double ratio = sync.rate > 0 ? async.rate / sync.rate : 0;
    bool bound_ok = async.staleness_max <= ASYNC_STALENESS && sync.staleness_max <= 0;
    bool steps_ok = sync.steps == z->steps && async.steps == z->steps;
    print_mode(&sync, config);
    print_mode(&async, config);
    printf("{\"bench\":\"pipeline\",\"config\":\"%s\",\"ceiling\":\"sync rollouts/s\",\"sync_rollouts_per_s\":%.6g,"
           "\"async_rollouts_per_s\":%.6g,\"ratio\":%.6g,\"target\":%.2f,\"staleness_bound\":%d,"
           "\"staleness_bound_ok\":%s,\"steps_ok\":%s}\n",
           config, sync.rate, async.rate, ratio, TARGET_RATIO, ASYNC_STALENESS, bound_ok ? "true" : "false",
           steps_ok ? "true" : "false");
    if (!opt->json_only) {
        printf("\npipeline benchmark (%s)\n", config);
        printf("%-6s %4s %6s %9s %8s %12s %8s %8s %8s\n", "mode", "Δv", "steps", "rollouts", "wall s", "rollouts/s",
               "max Δv", "mean Δv", "dropped");
        const mode_result *m[2] = {&sync, &async};
        for (int i = 0; i < 2; i++)
            printf("%-6s %4lld %6lld %9.0f %8.2f %12.1f %8lld %8.2f %8.0f\n", m[i]->max_staleness ? "async" : "sync",
                   (long long)m[i]->max_staleness, (long long)m[i]->steps, m[i]->rollouts, m[i]->wall_s, m[i]->rate,
                   (long long)m[i]->staleness_max, m[i]->staleness_mean, m[i]->dropped);
        printf("async / sync = %.2f× (target ≥ %.1f×); largest admitted Δv %lld (bound %d)\n", ratio, TARGET_RATIO,
               (long long)async.staleness_max, ASYNC_STALENESS);
    }
    fflush(stdout);
    if (!steps_ok)
        return RLVR_FAIL(RLVR_ESTATE, "a mode trained %lld / %lld of %d steps (logs in %s)", (long long)sync.steps,
                         (long long)async.steps, z->steps, tmp);
    if (!bound_ok)
        return RLVR_FAIL(RLVR_ESTATE, "an admitted rollout has staleness %lld > Δv_max (logs in %s)",
                         (long long)async.staleness_max, tmp);
    if (ratio < TARGET_RATIO)
        return RLVR_FAIL(RLVR_ELIMIT, "async / sync = %.2f, below the target %.1f (logs in %s)", ratio, TARGET_RATIO,
                         tmp);
    return nftw(tmp, remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0
               ? 0
               : RLVR_FAIL(RLVR_EIO, "could not remove %s: %s", tmp, strerror(errno));
}

int rlvr_bench_pipeline(const rlvr_bench_options *opt) {
    const char *spec = getenv(RUN_ENV);
    return spec ? child(spec, opt) : parent(opt);
}
