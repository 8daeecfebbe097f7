/* slurm/sbatch.c — templates and Slurm's clients (slurm/sbatch.h). */
#include "slurm/sbatch.h"

#include "core/error.h"
#include "core/text.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* ---- growing string ---------------------------------------------------- */

typedef struct {
    char *p;
    size_t len, cap;
} strbuf;

static int sb_put(strbuf *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) return RLVR_FAIL(RLVR_ENOMEM, "out of memory (%zu bytes)", cap);
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
    return 0;
}

/* ---- render -------------------------------------------------------------- */

/* Length of the placeholder word at s (after an '@'), when s holds
 * WORD followed by '@'; 0 otherwise. */
static size_t placeholder_len(const char *s) {
    if (!(isalpha((unsigned char)s[0]) || s[0] == '_')) return 0;
    size_t i = 1;
    while (isalnum((unsigned char)s[i]) || s[i] == '_') i++;
    return s[i] == '@' ? i : 0;
}

static int line_of(const char *text, const char *at) {
    int line = 1;
    for (const char *p = text; p < at; p++) line += *p == '\n';
    return line;
}

int rlvr_sbatch_render(const char *template_text, const char *const *keys, const char *const *values, size_t n,
                       char **out) {
    *out = NULL;
    strbuf b = {0};
    const char *s = template_text;
    int rc = 0;
    while (*s && rc == 0) {
        const char *at = strchr(s, '@');
        if (!at) {
            rc = sb_put(&b, s, strlen(s));
            break;
        }
        rc = sb_put(&b, s, (size_t)(at - s));
        size_t len = rc == 0 ? placeholder_len(at + 1) : 0;
        if (rc < 0) break;
        if (len == 0) {
            rc = sb_put(&b, "@", 1);
            s = at + 1;
            continue;
        }
        size_t k = 0;
        while (k < n && !(strlen(keys[k]) == len && strncmp(keys[k], at + 1, len) == 0)) k++;
        if (k == n) {
            rc = RLVR_FAIL(RLVR_EINVAL, "template line %d: unknown placeholder @%.*s@ (known: %zu keys)",
                           line_of(template_text, at), (int)len, at + 1, n);
            break;
        }
        rc = sb_put(&b, values[k] ? values[k] : "", values[k] ? strlen(values[k]) : 0);
        s = at + len + 2;
    }
    if (rc == 0 && !b.p) rc = sb_put(&b, "", 0);
    if (rc < 0) {
        free(b.p);
        return rc;
    }
    *out = b.p;
    return 0;
}

char *rlvr_sbatch_shell_quote(const char *text) {
    strbuf b = {0};
    if (sb_put(&b, "'", 1) < 0) return NULL;
    for (const char *p = text; *p; p++) {
        int rc = *p == '\'' ? sb_put(&b, "'\\''", 4) : sb_put(&b, p, 1);
        if (rc < 0) {
            free(b.p);
            return NULL;
        }
    }
    if (sb_put(&b, "'", 1) < 0) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

/* ---- running a client ---------------------------------------------------- */

static int read_into(int fd, strbuf *b, bool *open) {
    char buf[4096];
    ssize_t got = read(fd, buf, sizeof buf);
    if (got > 0) return sb_put(b, buf, (size_t)got);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) return 0;
    *open = false;
    return 0;
}

int rlvr_sbatch_run_capture(const char *const *argv, char **out, char **err, int *status) {
    if (out) *out = NULL;
    if (err) *err = NULL;
    int po[2], pe[2];
    RLVR_SYSCHECK(pipe2(po, O_CLOEXEC), "pipe for %s", argv[0]);
    if (pipe2(pe, O_CLOEXEC) < 0) {
        close(po[0]);
        close(po[1]);
        return rlvr_error_errno_at(__FILE__, __LINE__, "pipe for %s", argv[0]);
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, po[1], 1);
    posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    pid_t pid;
    int e = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(po[1]);
    close(pe[1]);
    if (e != 0) {
        close(po[0]);
        close(pe[0]);
        if (e == ENOENT) return RLVR_FAIL(RLVR_ENOTFOUND, "%s not found on PATH", argv[0]);
        return RLVR_FAIL(RLVR_ESYS, "cannot start %s: %s", argv[0], strerror(e));
    }
    strbuf bo = {0}, be = {0};
    bool open_o = true, open_e = true;
    int rc = 0;
    while ((open_o || open_e) && rc == 0) {
        struct pollfd fds[2] = {{open_o ? po[0] : -1, POLLIN, 0}, {open_e ? pe[0] : -1, POLLIN, 0}};
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            rc = rlvr_error_errno_at(__FILE__, __LINE__, "poll on %s", argv[0]);
            break;
        }
        if (open_o && fds[0].revents) rc = read_into(po[0], &bo, &open_o);
        if (rc == 0 && open_e && fds[1].revents) rc = read_into(pe[0], &be, &open_e);
    }
    close(po[0]);
    close(pe[0]);
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
    }
    *status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
    if (rc == 0 && !bo.p) rc = sb_put(&bo, "", 0);
    if (rc == 0 && !be.p) rc = sb_put(&be, "", 0);
    if (rc < 0) {
        free(bo.p);
        free(be.p);
        return rc;
    }
    if (out) *out = bo.p;
    else free(bo.p);
    if (err) *err = be.p;
    else free(be.p);
    return 0;
}

static void trim_end(char *s) {
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) s[--n] = 0;
}

/* ---- sbatch -------------------------------------------------------------- */

static int dry_run_count;

/* argv as one shell command line, words that need it quoted. */
static char *command_line(const char *const *argv) {
    rlvr_text t = {0};
    for (size_t i = 0; argv[i]; i++) {
        char *q = strpbrk(argv[i], " \t'\"$;&|<>()*?") ? rlvr_sbatch_shell_quote(argv[i]) : NULL;
        rlvr_text_printf(&t, "%s%s", i ? " " : "", q ? q : argv[i]);
        free(q);
    }
    if (t.failed || !t.data) {
        rlvr_text_free(&t);
        return NULL;
    }
    return t.data;
}

int rlvr_sbatch_submit(const char *script_path, const char *const *args, size_t n_args, bool dry_run, char *job_id,
                       size_t cap, char **command) {
    if (command) *command = NULL;
    const char **argv = calloc(n_args + 4, sizeof *argv);
    if (!argv) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    size_t k = 0;
    argv[k++] = "sbatch";
    argv[k++] = "--parsable";
    for (size_t i = 0; i < n_args; i++) argv[k++] = args[i];
    argv[k++] = script_path;
    argv[k] = NULL;
    if (dry_run) {
        char *line = command ? command_line(argv) : NULL;
        free(argv);
        if (command && !line) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        if (command) *command = line;
        snprintf(job_id, cap, "DRYRUN-%d", ++dry_run_count);
        return 0;
    }
    char *out = NULL, *err = NULL;
    int status = 0;
    int rc = rlvr_sbatch_run_capture(argv, &out, &err, &status);
    free(argv);
    if (rc == RLVR_ENOTFOUND)
        return RLVR_FAIL(RLVR_ENOTFOUND, "sbatch not found on PATH: install Slurm's clients (Debian: slurm-client) or "
                                         "use --dry-run to only write the scripts");
    if (rc < 0) return rc;
    trim_end(err);
    if (status != 0) {
        rc = RLVR_FAIL(RLVR_ESYS, "sbatch %s exited %d: %s", script_path, status, err[0] ? err : "(no message)");
    } else {
        char *semi = strchr(out, ';');
        if (semi) *semi = 0;
        trim_end(out);
        const char *id = out + strspn(out, " \t\n");
        if (!id[0] || strspn(id, "0123456789_") != strlen(id))
            rc = RLVR_FAIL(RLVR_ESYS, "sbatch %s printed no job id (stdout \"%s\", stderr \"%s\")", script_path, out,
                           err);
        else if (strlen(id) >= cap)
            rc = RLVR_FAIL(RLVR_ELIMIT, "job id %s longer than %zu", id, cap);
        else
            snprintf(job_id, cap, "%s", id);
    }
    free(out);
    free(err);
    return rc;
}

/* ---- squeue / sacct ------------------------------------------------------ */

bool rlvr_sbatch_state_live(const char *state) {
    static const char *const live[] = {"PENDING", "RUNNING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "CONFIGURING",
                                       "COMPLETING", "SUSPENDED", "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED",
                                       "RESV_DEL_HOLD", "SPECIAL_EXIT", NULL};
    for (const char *const *s = live; *s; s++)
        if (strncmp(state, *s, strlen(*s)) == 0) return true;
    return false;
}

static void copy_field(char *dst, size_t cap, const char *src) {
    snprintf(dst, cap, "%s", src ? src : "");
}

/* Splits a '|'-separated line in place into at most n fields. */
static int split_fields(char *line, char **fields, int n) {
    int k = 0;
    char *p = line;
    while (k < n) {
        fields[k++] = p;
        char *bar = strchr(p, '|');
        if (!bar) break;
        *bar = 0;
        p = bar + 1;
    }
    return k;
}

static rlvr_sbatch_job *find_job(rlvr_sbatch_job *jobs, size_t n, const char *id) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(jobs[i].id, id) == 0) return &jobs[i];
    return NULL;
}

/* Fills jobs from squeue's "%i|%j|%T|%r|%S|%e" lines. */
void rlvr_sbatch_parse_squeue(char *out, rlvr_sbatch_job *jobs, size_t n) {
    for (char *save = NULL, *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *f[6] = {0};
        if (split_fields(line, f, 6) < 6) continue;
        rlvr_sbatch_job *j = find_job(jobs, n, f[0]);
        if (!j) continue;
        copy_field(j->name, sizeof j->name, f[1]);
        copy_field(j->state, sizeof j->state, f[2]);
        copy_field(j->reason, sizeof j->reason, f[3]);
        copy_field(j->start, sizeof j->start, f[4]);
        copy_field(j->end, sizeof j->end, f[5]);
        copy_field(j->source, sizeof j->source, "squeue");
        j->live = rlvr_sbatch_state_live(j->state);
    }
}

/* Fills still-unknown jobs from sacct's "JobID|JobName|State|ExitCode|Start|End"
 * lines; a later line of the same job replaces an earlier one (requeues). */
void rlvr_sbatch_parse_sacct(char *out, rlvr_sbatch_job *jobs, size_t n, const char *source) {
    for (char *save = NULL, *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *f[6] = {0};
        if (split_fields(line, f, 6) < 6) continue;
        rlvr_sbatch_job *j = find_job(jobs, n, f[0]);
        if (!j) continue;
        if (strcmp(j->source, "squeue") == 0) { /* squeue has no exit codes */
            if (!j->live) copy_field(j->exit_code, sizeof j->exit_code, f[3]);
            continue;
        }
        if (j->source[0] && strcmp(j->source, source) != 0) continue;
        copy_field(j->name, sizeof j->name, f[1]);
        /* "CANCELLED by 0" → "CANCELLED" */
        char *space = strchr(f[2], ' ');
        if (space) *space = 0;
        copy_field(j->state, sizeof j->state, f[2]);
        copy_field(j->exit_code, sizeof j->exit_code, f[3]);
        copy_field(j->start, sizeof j->start, f[4]);
        copy_field(j->end, sizeof j->end, f[5]);
        copy_field(j->source, sizeof j->source, source);
        j->live = rlvr_sbatch_state_live(j->state);
    }
}

/* The ids no source has answered for yet, and finished jobs squeue knows
 * (for their exit codes), comma-separated. */
static void unknown_ids(const rlvr_sbatch_job *jobs, size_t n, char *csv, size_t cap) {
    csv[0] = 0;
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        if (jobs[i].source[0] && (strcmp(jobs[i].source, "squeue") != 0 || jobs[i].live)) continue;
        int w = snprintf(csv + len, cap - len, "%s%s", len ? "," : "", jobs[i].id);
        if (w < 0 || (size_t)w >= cap - len) break;
        len += (size_t)w;
    }
}

static int query_sacct(rlvr_sbatch_job *jobs, size_t n, const char *ids, bool jobcomp) {
    const char *argv[] = {"sacct", "-n", "-P", "-X", "-j", ids, "-o", "JobID,JobName,State,ExitCode,Start,End",
                          jobcomp ? "-c" : NULL, NULL};
    char *out = NULL;
    int status = 0;
    int rc = rlvr_sbatch_run_capture(argv, &out, NULL, &status);
    if (rc < 0) return rc;
    if (status == 0) rlvr_sbatch_parse_sacct(out, jobs, n, jobcomp ? "jobcomp" : "sacct");
    free(out);
    return status == 0 ? 0 : 1;
}

int rlvr_sbatch_query(const char *job_ids_csv, rlvr_sbatch_job *jobs, size_t cap, size_t *n) {
    *n = 0;
    char *ids = strdup(job_ids_csv);
    if (!ids) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    for (char *save = NULL, *id = strtok_r(ids, ",", &save); id && *n < cap; id = strtok_r(NULL, ",", &save)) {
        rlvr_sbatch_job *j = &jobs[(*n)++];
        memset(j, 0, sizeof *j);
        copy_field(j->id, sizeof j->id, id);
    }
    free(ids);
    if (*n == 0) return 0;
    char csv[8192];
    unknown_ids(jobs, *n, csv, sizeof csv);
    const char *argv[] = {"squeue", "-h", "-t", "all", "-j", csv, "-o", "%i|%j|%T|%r|%S|%e", NULL};
    char *out = NULL, *err = NULL;
    int status = 0;
    int rc = rlvr_sbatch_run_capture(argv, &out, &err, &status);
    if (rc == RLVR_ENOTFOUND)
        return RLVR_FAIL(RLVR_ENOTFOUND, "squeue not found on PATH: install Slurm's clients (Debian: slurm-client)");
    if (rc < 0) return rc;
    /* an id Slurm has forgotten makes squeue fail ("Invalid job id"): not an error */
    rlvr_sbatch_parse_squeue(out, jobs, *n);
    free(out);
    free(err);
    unknown_ids(jobs, *n, csv, sizeof csv);
    if (csv[0]) {
        rc = query_sacct(jobs, *n, csv, false);
        if (rc == 1) rc = query_sacct(jobs, *n, csv, true);
        if (rc == RLVR_ENOTFOUND) rc = 0; /* no sacct: squeue is all we have */
        if (rc < 0) return rc;
    }
    for (size_t i = 0; i < *n; i++)
        if (!jobs[i].source[0]) copy_field(jobs[i].state, sizeof jobs[i].state, "UNKNOWN");
    return 0;
}

int rlvr_sbatch_cancel(const char *job_ids_csv) {
    if (!job_ids_csv[0]) return 0;
    size_t count = 1;
    for (const char *p = job_ids_csv; *p; p++) count += *p == ',';
    const char **argv = calloc(count + 2, sizeof *argv);
    char *ids = strdup(job_ids_csv);
    if (!argv || !ids) {
        free(argv);
        free(ids);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    }
    size_t k = 0;
    argv[k++] = "scancel";
    for (char *save = NULL, *id = strtok_r(ids, ",", &save); id; id = strtok_r(NULL, ",", &save)) argv[k++] = id;
    argv[k] = NULL;
    char *err = NULL;
    int status = 0;
    int rc = rlvr_sbatch_run_capture(argv, NULL, &err, &status);
    free(argv);
    free(ids);
    if (rc == RLVR_ENOTFOUND)
        return RLVR_FAIL(RLVR_ENOTFOUND, "scancel not found on PATH: install Slurm's clients (Debian: slurm-client)");
    if (rc < 0) return rc;
    trim_end(err);
    if (status != 0) rc = RLVR_FAIL(RLVR_ESYS, "scancel %s exited %d: %s", job_ids_csv, status, err);
    free(err);
    return rc;
}
