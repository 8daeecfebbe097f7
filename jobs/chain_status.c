/* jobs/chain_status.c — `rlvr status RUN` and `rlvr cancel RUN`: a run's
 * Slurm chain (jobs/chain.h) as Slurm and the run directory see it. */
#include "core/error.h"
#include "io/checkpoint.h"
#include "io/metrics.h"
#include "jobs/chain.h"
#include "jobs/commands.h"
#include "slurm/sbatch.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- shared with submit ---------------------------------------------------- */

int rlvr_chain_marker_path(char *out, size_t cap, const char *run_dir, const char *part, const char *suffix) {
    int w = snprintf(out, cap, "%s/chain/%s.%s", run_dir, part, suffix);
    if (w < 0 || (size_t)w >= cap) return RLVR_FAIL(RLVR_ELIMIT, "path too long: %s/chain/%s", run_dir, part);
    return 0;
}

int rlvr_chain_read_line(const char *path, char *out, size_t cap) {
    out[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    if (fgets(out, (int)cap, f)) out[strcspn(out, "\n")] = 0;
    fclose(f);
    return 1;
}

int rlvr_chain_read_jobs(const char *run_dir, rlvr_chain_job **jobs, size_t *n) {
    *jobs = NULL;
    *n = 0;
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/chain/jobs.tsv", run_dir);
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT)
            return rlvr_error_set(RLVR_ENOTFOUND, "%s has no chain (no %s): submit one with `rlvr submit`", run_dir,
                                  path);
        return RLVR_FAIL(RLVR_EIO, "cannot read %s: %s", path, strerror(errno));
    }
    size_t cap = 16;
    rlvr_chain_job *out = calloc(cap, sizeof *out);
    char line[8192];
    int rc = out ? 0 : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    while (rc == 0 && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (!line[0]) continue;
        char *id = strchr(line, '\t');
        char *script = id ? strchr(id + 1, '\t') : NULL;
        if (!script) {
            rc = RLVR_FAIL(RLVR_EFORMAT, "%s: line \"%s\" is not PART<TAB>ID<TAB>SCRIPT", path, line);
            break;
        }
        *id++ = 0;
        *script++ = 0;
        if (*n == cap) {
            rlvr_chain_job *grown = realloc(out, 2 * cap * sizeof *out);
            if (!grown) {
                rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
                break;
            }
            out = grown;
            cap *= 2;
        }
        rlvr_chain_job *j = &out[(*n)++];
        memset(j, 0, sizeof *j);
        if (strlen(line) >= sizeof j->part || strlen(id) >= sizeof j->id || strlen(script) >= sizeof j->script) {
            rc = RLVR_FAIL(RLVR_EFORMAT, "%s: a field of line %zu is too long", path, *n);
            break;
        }
        memcpy(j->part, line, strlen(line) + 1);
        memcpy(j->id, id, strlen(id) + 1);
        memcpy(j->script, script, strlen(script) + 1);
    }
    fclose(f);
    if (rc < 0) {
        free(out);
        *n = 0;
        return rc;
    }
    *jobs = out;
    return 0;
}

void rlvr_chain_ids_csv(const rlvr_chain_job *jobs, size_t n, char *csv, size_t cap) {
    size_t len = 0;
    csv[0] = 0;
    for (size_t i = 0; i < n; i++) {
        if (!jobs[i].id[0] || strcmp(jobs[i].id, "-") == 0) continue;
        int w = snprintf(csv + len, cap - len, "%s%s", len ? "," : "", jobs[i].id);
        if (w < 0 || (size_t)w >= cap - len) break;
        len += (size_t)w;
    }
}

/* ---- status -------------------------------------------------------------------- */

static const rlvr_sbatch_job *state_of(const rlvr_sbatch_job *states, size_t n, const char *id) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(states[i].id, id) == 0) return &states[i];
    return NULL;
}

/* "done", "pass ...", "reject ...", "blocked: ..." or "-". */
static void marker_text(const char *run_dir, const char *part, char *out, size_t cap) {
    char path[PATH_MAX + 64], line[1024];
    if (rlvr_chain_marker_path(path, sizeof path, run_dir, part, "done") == 0 &&
        rlvr_chain_read_line(path, line, sizeof line)) {
        /* a gate's marker starts with its verdict; others with "done" */
        size_t word = strcspn(line, " ");
        snprintf(out, cap, "%.*s", (int)word, line);
        return;
    }
    if (rlvr_chain_marker_path(path, sizeof path, run_dir, part, "blocked") == 0 &&
        rlvr_chain_read_line(path, line, sizeof line)) {
        snprintf(out, cap, "blocked: %s", line);
        return;
    }
    snprintf(out, cap, "-");
}

static void print_jobs(const char *run_dir, const rlvr_chain_job *jobs, size_t n, const rlvr_sbatch_job *states,
                       size_t n_states) {
    printf("%-8s %-10s %-26s %-6s %-20s %s\n", "part", "job", "state", "exit", "end", "marker");
    for (size_t i = 0; i < n; i++) {
        const rlvr_sbatch_job *s = state_of(states, n_states, jobs[i].id);
        char state[160] = "-", marker[1200];
        if (s && s->reason[0] && strcmp(s->reason, "None") != 0 && s->live)
            snprintf(state, sizeof state, "%s (%s)", s->state, s->reason);
        else if (s)
            snprintf(state, sizeof state, "%s", s->state);
        else if (strcmp(jobs[i].id, "-") != 0)
            snprintf(state, sizeof state, "?");
        marker_text(run_dir, jobs[i].part, marker, sizeof marker);
        const char *end = s && !s->live && s->end[0] && strcmp(s->end, "Unknown") != 0 && strcmp(s->end, "N/A") != 0 ? s->end : "";
        printf("%-8s %-10s %-26s %-6s %-20s %s\n", jobs[i].part, jobs[i].id, state,
               s && s->exit_code[0] ? s->exit_code : "", end, marker);
    }
}

static void print_checkpoints(const char *run_dir) {
    char dir[PATH_MAX + 32], path[PATH_MAX + 64], line[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/checkpoints", run_dir);
    if (rlvr_checkpoint_latest(dir, path, sizeof path) == 0) printf("latest checkpoint: %s\n", path);
    else {
        snprintf(dir, sizeof dir, "%s/sft/checkpoints", run_dir);
        if (rlvr_checkpoint_latest(dir, path, sizeof path) == 0) printf("latest checkpoint: %s (SFT)\n", path);
        else printf("latest checkpoint: none yet\n");
    }
    rlvr_error_clear();
    snprintf(path, sizeof path, "%s/promoted", run_dir);
    if (rlvr_chain_read_line(path, line, sizeof line) && line[0]) printf("promoted: %s\n", line);
    else printf("promoted: none\n");
}

/* The last row of the RL metrics (else the SFT metrics), a few columns. */
static void print_last_metrics(const char *run_dir) {
    const char *files[] = {"metrics.h5", "sft/metrics.h5"};
    for (size_t f = 0; f < 2; f++) {
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/%s", run_dir, files[f]);
        if (access(path, R_OK) != 0) continue;
        rlvr_metrics_table t;
        memset(&t, 0, sizeof t);
        if (rlvr_metrics_read(&t, path) < 0) {
            printf("last metrics: %s unreadable: %s\n", path, rlvr_error_last());
            rlvr_error_clear();
            return;
        }
        if (t.n_rows == 0) {
            rlvr_metrics_table_free(&t);
            continue;
        }
        int64_t last = t.n_rows - 1;
        printf("last metrics (%s): step %lld", files[f], (long long)t.step[last]);
        const rlvr_metric shown[] = {RLVR_METRIC_REWARD_MEAN, RLVR_METRIC_PASS_RATE, RLVR_METRIC_LOSS,
                                     RLVR_METRIC_KL,          RLVR_METRIC_ENTROPY,   RLVR_METRIC_LR,
                                     RLVR_METRIC_STEP_TIME_S};
        for (size_t k = 0; k < sizeof shown / sizeof *shown; k++) {
            const double *col = t.value[shown[k]];
            if (col && !isnan(col[last])) printf("  %s %.4g", rlvr_metric_name(shown[k]), col[last]);
        }
        printf("\n");
        rlvr_metrics_table_free(&t);
        return;
    }
    printf("last metrics: none yet\n");
}

static int run_dir_arg(const char *verb, int argc, char **argv, const char **run_dir, void (*usage)(FILE *)) {
    *run_dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return RLVR_EXIT_OK;
        }
        if (*run_dir || argv[i][0] == '-') {
            fprintf(stderr, "rlvr %s: unexpected argument \"%s\"\n", verb, argv[i]);
            usage(stderr);
            return RLVR_EXIT_USAGE;
        }
        *run_dir = argv[i];
    }
    if (!*run_dir) {
        usage(stderr);
        return RLVR_EXIT_USAGE;
    }
    return -1;
}


/* The chain's jobs and what Slurm says of them; states_ok false when
 * Slurm's clients could not be asked. */
typedef struct {
    rlvr_chain_job *jobs;
    size_t n;
    rlvr_sbatch_job *states;
    size_t n_states;
    bool states_ok;
} chain_view;

static void chain_view_free(chain_view *v) {
    free(v->jobs);
    free(v->states);
}

static int load_chain(const char *run_dir, chain_view *v) {
    *v = (chain_view){.states_ok = true};
    RLVR_TRY(rlvr_chain_read_jobs(run_dir, &v->jobs, &v->n));
    v->states = calloc(v->n ? v->n : 1, sizeof *v->states);
    if (!v->states) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    char csv[8192];
    rlvr_chain_ids_csv(v->jobs, v->n, csv, sizeof csv);
    if (!csv[0]) return 0;
    int rc = rlvr_sbatch_query(csv, v->states, v->n, &v->n_states);
    if (rc == RLVR_ENOTFOUND) {
        v->states_ok = false;
        return 0;
    }
    return rc;
}

/* The command's RUNDIR argument and its chain: -1 to go on with *v loaded,
 * else the exit status (usage, or the error already printed). */
static int open_chain(const char *verb, int argc, char **argv, void (*usage)(FILE *), const char **run_dir,
                      chain_view *v) {
    int early = run_dir_arg(verb, argc, argv, run_dir, usage);
    if (early >= 0) return early;
    int rc = load_chain(*run_dir, v);
    if (rc < 0) {
        chain_view_free(v);
        return rlvr_cmd_fail(verb, rc);
    }
    return -1;
}

static void status_usage(FILE *f) {
    fprintf(f, "usage: rlvr status RUNDIR\n"
               "  The run's Slurm chain (`rlvr submit`): each part's job, its state (squeue, else sacct or\n"
               "  the jobcomp log), exit code and marker (done, pass/reject for gates, blocked), then the\n"
               "  latest checkpoint, the promoted one and the last metrics row.\n"
               "exit status: 0, 1 when the run has no chain or Slurm's answer cannot be read\n");
}

int rlvr_cmd_status(int argc, char **argv) {
    const char *run_dir;
    chain_view v;
    int early = open_chain("status", argc, argv, status_usage, &run_dir, &v);
    if (early >= 0) return early;
    printf("chain of %s\n", run_dir);
    if (!v.states_ok) printf("(squeue not found: job states unknown, markers only)\n");
    print_jobs(run_dir, v.jobs, v.n, v.states, v.n_states);
    print_checkpoints(run_dir);
    print_last_metrics(run_dir);
    chain_view_free(&v);
    return RLVR_EXIT_OK;
}

/* ---- cancel -------------------------------------------------------------------- */

static void cancel_usage(FILE *f) {
    fprintf(f, "usage: rlvr cancel RUNDIR\n"
               "  Cancels the queued and running jobs of the run's Slurm chain (scancel). Checkpoints stay;\n"
               "  `rlvr submit` continues the chain later from the latest one.\n"
               "exit status: 0 (also when nothing was live), 1 when scancel or squeue failed\n");
}

int rlvr_cmd_cancel(int argc, char **argv) {
    const char *run_dir;
    chain_view v;
    int early = open_chain("cancel", argc, argv, cancel_usage, &run_dir, &v);
    if (early >= 0) return early;
    const rlvr_chain_job *jobs = v.jobs;
    const rlvr_sbatch_job *states = v.states;
    size_t n = v.n, n_states = v.n_states;
    int rc = 0;
    if (!v.states_ok)
        rc = RLVR_FAIL(RLVR_ENOTFOUND, "squeue not found on PATH: cannot tell which jobs are live");
    char csv[8192] = "", names[4096] = "";
    size_t len = 0, nlen = 0;
    for (size_t i = 0; rc == 0 && i < n_states; i++) {
        if (!states[i].live) continue;
        const char *part = "?";
        for (size_t j = 0; j < n; j++)
            if (strcmp(jobs[j].id, states[i].id) == 0) part = jobs[j].part;
        int w = snprintf(csv + len, sizeof csv - len, "%s%s", len ? "," : "", states[i].id);
        if (w > 0 && (size_t)w < sizeof csv - len) len += (size_t)w;
        w = snprintf(names + nlen, sizeof names - nlen, "%s%s (%s, %s)", nlen ? ", " : "", part, states[i].id,
                     states[i].state);
        if (w > 0 && (size_t)w < sizeof names - nlen) nlen += (size_t)w;
    }
    if (rc == 0) rc = rlvr_sbatch_cancel(csv);
    chain_view_free(&v);
    if (rc < 0) return rlvr_cmd_fail("cancel", rc);
    if (len) printf("cancelled: %s\n", names);
    else printf("nothing to cancel: no job of the chain of %s is queued or running\n", run_dir);
    return RLVR_EXIT_OK;
}
