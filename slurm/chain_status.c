/* slurm/chain_status.c — a run's chain as Slurm and the run directory see
 * it: chain/jobs.tsv, the markers, the job states, what the run produced,
 * and cancelling (slurm/chain.h). */
#include "slurm/chain.h"

#include "core/error.h"
#include "io/checkpoint.h"
#include "io/metrics.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the chain's files ------------------------------------------------------- */

int rlvr_chain_marker_path(char *out, size_t cap, const char *run_dir, const char *part, const char *suffix) {
    int w = snprintf(out, cap, "%s/chain/%s.%s", run_dir, part, suffix);
    if (w < 0 || (size_t)w >= cap) return RLVR_FAIL(RLVR_ELIMIT, "path too long: %s/chain/%s", run_dir, part);
    return 0;
}

/* First line of a small text file into out ("" when missing): 1 when the
 * file exists, 0 when not. */
static int read_line(const char *path, char *out, size_t cap) {
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

/* The comma-separated Slurm ids of `jobs` (parts without an id skipped). */
static void ids_csv(const rlvr_chain_job *jobs, size_t n, char *csv, size_t cap) {
    size_t len = 0;
    csv[0] = 0;
    for (size_t i = 0; i < n; i++) {
        if (!jobs[i].id[0] || strcmp(jobs[i].id, "-") == 0) continue;
        int w = snprintf(csv + len, cap - len, "%s%s", len ? "," : "", jobs[i].id);
        if (w < 0 || (size_t)w >= cap - len) break;
        len += (size_t)w;
    }
}

/* ---- status ------------------------------------------------------------------ */

int rlvr_chain_view_load(const char *run_dir, rlvr_chain_view *v) {
    *v = (rlvr_chain_view){.states_ok = true};
    RLVR_TRY(rlvr_chain_read_jobs(run_dir, &v->jobs, &v->n));
    v->states = calloc(v->n ? v->n : 1, sizeof *v->states);
    if (!v->states) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    char csv[8192];
    ids_csv(v->jobs, v->n, csv, sizeof csv);
    if (!csv[0]) return 0;
    int rc = rlvr_sbatch_query(csv, v->states, v->n, &v->n_states);
    if (rc == RLVR_ENOTFOUND) {
        v->states_ok = false;
        return 0;
    }
    return rc;
}

void rlvr_chain_view_free(rlvr_chain_view *v) {
    free(v->jobs);
    free(v->states);
    v->jobs = NULL;
    v->states = NULL;
}

static const rlvr_sbatch_job *state_of(const rlvr_sbatch_job *states, size_t n, const char *id) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(states[i].id, id) == 0) return &states[i];
    return NULL;
}

/* "done", "pass ...", "reject ...", "blocked: ..." or "-". */
static void marker_text(const char *run_dir, const char *part, char *out, size_t cap) {
    char path[PATH_MAX + 64], line[1024];
    if (rlvr_chain_marker_path(path, sizeof path, run_dir, part, "done") == 0 && read_line(path, line, sizeof line)) {
        /* a gate's marker starts with its verdict; others with "done" */
        size_t word = strcspn(line, " ");
        snprintf(out, cap, "%.*s", (int)word, line);
        return;
    }
    if (rlvr_chain_marker_path(path, sizeof path, run_dir, part, "blocked") == 0 &&
        read_line(path, line, sizeof line)) {
        snprintf(out, cap, "blocked: %s", line);
        return;
    }
    snprintf(out, cap, "-");
}

void rlvr_chain_row_of(const char *run_dir, const rlvr_chain_job *job, const rlvr_sbatch_job *states, size_t n_states,
                       rlvr_chain_row *row) {
    const rlvr_sbatch_job *s = state_of(states, n_states, job->id);
    snprintf(row->state, sizeof row->state, "-");
    if (s && s->reason[0] && strcmp(s->reason, "None") != 0 && s->live)
        snprintf(row->state, sizeof row->state, "%s (%s)", s->state, s->reason);
    else if (s)
        snprintf(row->state, sizeof row->state, "%s", s->state);
    else if (strcmp(job->id, "-") != 0)
        snprintf(row->state, sizeof row->state, "?");
    marker_text(run_dir, job->part, row->marker, sizeof row->marker);
    bool ended = s && !s->live && s->end[0] && strcmp(s->end, "Unknown") != 0 && strcmp(s->end, "N/A") != 0;
    snprintf(row->end, sizeof row->end, "%s", ended ? s->end : "");
    snprintf(row->exit_code, sizeof row->exit_code, "%s", s ? s->exit_code : "");
}

/* The last row of the RL metrics (else the SFT metrics), a few columns. */
static void last_metrics(const char *run_dir, rlvr_chain_results *r) {
    const char *files[] = {"metrics.h5", "sft/metrics.h5"};
    for (size_t f = 0; f < 2; f++) {
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/%s", run_dir, files[f]);
        if (access(path, R_OK) != 0) continue;
        rlvr_metrics_table t;
        memset(&t, 0, sizeof t);
        if (rlvr_metrics_read(&t, path) < 0) {
            snprintf(r->metrics_error, sizeof r->metrics_error, "%s unreadable: %s", path, rlvr_error_last());
            rlvr_error_clear();
            return;
        }
        if (t.n_rows == 0) {
            rlvr_metrics_table_free(&t);
            continue;
        }
        int64_t last = t.n_rows - 1;
        snprintf(r->metrics_file, sizeof r->metrics_file, "%s", files[f]);
        r->step = t.step[last];
        const rlvr_metric shown[] = {RLVR_METRIC_REWARD_MEAN, RLVR_METRIC_PASS_RATE, RLVR_METRIC_LOSS,
                                     RLVR_METRIC_KL,          RLVR_METRIC_ENTROPY,   RLVR_METRIC_LR,
                                     RLVR_METRIC_STEP_TIME_S};
        for (size_t k = 0; k < sizeof shown / sizeof *shown; k++) {
            const double *col = t.value[shown[k]];
            if (!col || isnan(col[last])) continue;
            r->names[r->n_values] = rlvr_metric_name(shown[k]);
            r->values[r->n_values++] = col[last];
        }
        rlvr_metrics_table_free(&t);
        return;
    }
}

void rlvr_chain_results_read(const char *run_dir, rlvr_chain_results *r) {
    memset(r, 0, sizeof *r);
    char dir[PATH_MAX + 32], path[PATH_MAX + 64], line[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/checkpoints", run_dir);
    if (rlvr_checkpoint_latest(dir, path, sizeof path) == 0) {
        snprintf(r->checkpoint, sizeof r->checkpoint, "%s", path);
    } else {
        snprintf(dir, sizeof dir, "%s/sft/checkpoints", run_dir);
        if (rlvr_checkpoint_latest(dir, path, sizeof path) == 0) {
            snprintf(r->checkpoint, sizeof r->checkpoint, "%s", path);
            r->checkpoint_sft = true;
        }
    }
    rlvr_error_clear();
    snprintf(path, sizeof path, "%s/promoted", run_dir);
    if (read_line(path, line, sizeof line)) snprintf(r->promoted, sizeof r->promoted, "%s", line);
    last_metrics(run_dir, r);
}

/* ---- cancel -------------------------------------------------------------------- */

int rlvr_chain_cancel(const rlvr_chain_view *v, char *names, size_t cap) {
    names[0] = 0;
    if (!v->states_ok) return RLVR_FAIL(RLVR_ENOTFOUND, "squeue not found on PATH: cannot tell which jobs are live");
    char csv[8192] = "";
    size_t len = 0, nlen = 0;
    for (size_t i = 0; i < v->n_states; i++) {
        const rlvr_sbatch_job *s = &v->states[i];
        if (!s->live) continue;
        const char *part = "?";
        for (size_t j = 0; j < v->n; j++)
            if (strcmp(v->jobs[j].id, s->id) == 0) part = v->jobs[j].part;
        int w = snprintf(csv + len, sizeof csv - len, "%s%s", len ? "," : "", s->id);
        if (w > 0 && (size_t)w < sizeof csv - len) len += (size_t)w;
        w = snprintf(names + nlen, cap - nlen, "%s%s (%s, %s)", nlen ? ", " : "", part, s->id, s->state);
        if (w > 0 && (size_t)w < cap - nlen) nlen += (size_t)w;
    }
    int rc = rlvr_sbatch_cancel(csv);
    if (rc < 0) names[0] = 0;
    return rc;
}
