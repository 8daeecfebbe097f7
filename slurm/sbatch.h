/* slurm/sbatch.h — batch scripts and Slurm's command-line clients, shared by
 * `rlvr submit` (chains, slurm/chain.h) and `rlvr sweep`.
 *
 * Scripts are rendered from templates with @KEY@ placeholders; jobs are
 * submitted with `sbatch --parsable`, looked up with squeue / sacct and
 * cancelled with scancel. Every function returns 0 or a negative RLVR_E*
 * code with a message (core/error.h) that names the command and carries its
 * stderr; nothing here prints or exits. The clients are found on PATH
 * (tests put fakes first on PATH to simulate failures). */
#ifndef RLVR_SLURM_SBATCH_H
#define RLVR_SLURM_SBATCH_H

#include <stdbool.h>
#include <stddef.h>

/* Replaces every @KEY@ of `template_text` (KEY = a letter or '_' followed by
 * letters, digits, '_') whose KEY is keys[i] with values[i], in one pass:
 * replaced text is never scanned again, so values may hold '@'. An '@' that
 * does not start such a word is copied as it is ("$@", "a@b.c"). An @KEY@
 * that is not among `keys` is an error naming it and its line
 * (RLVR_EINVAL). *out gets a malloc'ed string (free it) or NULL on error. */
int rlvr_sbatch_render(const char *template_text, const char *const *keys, const char *const *values, size_t n,
                       char **out);

/* Single-quotes `text` for a POSIX shell ('it'\''s'); a malloc'ed string. */
char *rlvr_sbatch_shell_quote(const char *text);

/* Runs `sbatch --parsable ARGS SCRIPT` and copies the job id to job_id
 * (without sbatch's ";cluster" suffix). dry_run: runs nothing, sets
 * "DRYRUN-<n>" (n counts this process's dry-run submissions from 1) and
 * *command (when command is not NULL) to the command line as a shell would
 * take it, malloc'ed, the caller's to print and free; without dry_run
 * *command is NULL. Errors: sbatch not on PATH (RLVR_ENOTFOUND, naming the
 * package), sbatch failing or printing no job id (RLVR_ESYS, its exit status
 * and stderr). */
int rlvr_sbatch_submit(const char *script_path, const char *const *args, size_t n_args, bool dry_run, char *job_id,
                       size_t cap, char **command);

/* What Slurm says about one job. Strings are "" when the source did not say. */
typedef struct {
    char id[32];
    char name[128];
    char state[32];      /* PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, ...; "UNKNOWN" when no source knows it */
    char reason[64];     /* squeue's reason ("Dependency", "None", ...) */
    char exit_code[16];  /* "0:0" from sacct or the jobcomp log (also asked for finished jobs squeue lists) */
    char start[32], end[32];
    char source[8];      /* "squeue", "sacct", "jobcomp" or "" */
    bool live;           /* not finished: pending, running, requeued, completing, suspended */
} rlvr_sbatch_job;

/* Looks up the jobs of `job_ids_csv` ("12,13,14"): first `squeue -t all`
 * (live jobs and those finished within MinJobAge), then for the rest
 * `sacct -X` (slurmdbd) or, when accounting storage is disabled, `sacct -c`
 * (the jobcomp/filetxt log; a requeued job's last entry wins). jobs[i] is
 * the i-th id of the list (cap entries at most, *n set to how many ids).
 * Only squeue missing is an error (RLVR_ENOTFOUND); a job that no source
 * knows has state "UNKNOWN". */
int rlvr_sbatch_query(const char *job_ids_csv, rlvr_sbatch_job *jobs, size_t cap, size_t *n);

/* The parsers rlvr_sbatch_query applies to the clients' answers, for jobs
 * whose id is set (lines of other jobs are skipped; `text` is modified in
 * place). squeue: "%i|%j|%T|%r|%S|%e" lines (id, name, state, reason, start,
 * end). sacct: "JobID|JobName|State|ExitCode|Start|End" lines for jobs not
 * known yet (source "sacct" or "jobcomp"; a later line of the same job
 * replaces an earlier one, as after a requeue; "CANCELLED by 0" becomes
 * "CANCELLED"); for a finished job squeue knew, only its exit code. */
void rlvr_sbatch_parse_squeue(char *text, rlvr_sbatch_job *jobs, size_t n);
void rlvr_sbatch_parse_sacct(char *text, rlvr_sbatch_job *jobs, size_t n, const char *source);

/* True for states of jobs that still occupy the queue. */
bool rlvr_sbatch_state_live(const char *state);

/* `scancel ID...` for the ids of `job_ids_csv` ("" is a no-op). */
int rlvr_sbatch_cancel(const char *job_ids_csv);

/* Runs argv[0] (found on PATH) with argv (NULL-terminated), capturing
 * stdout and stderr (malloc'ed, NUL-terminated; either pointer may be NULL
 * to discard). *status gets the exit status (128+signal when killed).
 * RLVR_ENOTFOUND when the program is not on PATH. */
int rlvr_sbatch_run_capture(const char *const *argv, char **out, char **err, int *status);

#endif
