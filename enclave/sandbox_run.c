/* enclave/sandbox_run.c — the runtime's side of a run.
 *
 * A run is a command (rlvr_sandbox_exec) or a call of the runtime's own
 * function (rlvr_sandbox_call) in a sandbox. The runtime asks the spawner
 * for the run's supervisor (sandbox_spawner.c) and from then on only reads
 * pipes: the output (stdout and stderr), the results channel and the
 * supervisor's fixed-size report. It enforces the output cap by sending
 * STOP, and kills the supervisor through its pidfd only when it overruns
 * the wall time by 10 s. docs/ENCLAVE.md "Sandbox processes" has every
 * process and message. */
#include "enclave/sandbox.h"
#include "enclave/sandbox_internal.h"

#include "core/error.h"
#include "core/sys.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
    char *data;
    size_t len, cap, limit;
    bool truncated;
} capture;

static int capture_read(capture *c, int fd) {
    char buf[65536];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) return errno == EINTR || errno == EAGAIN ? 1 : -1;
    if (n == 0) return 0;
    size_t keep = (size_t)n;
    if (c->len + keep > c->limit) {
        keep = c->limit > c->len ? c->limit - c->len : 0;
        c->truncated = true;
    }
    if (keep > 0) {
        if (c->len + keep + 1 > c->cap) {
            size_t cap = c->cap ? c->cap : 4096;
            while (cap < c->len + keep + 1) cap *= 2;
            char *grown = realloc(c->data, cap);
            if (!grown) return -2;
            c->data = grown;
            c->cap = cap;
        }
        memcpy(c->data + c->len, buf, keep);
        c->len += keep;
    }
    return 1;
}

static char *capture_take(capture *c, size_t *len) {
    if (!c->data) c->data = malloc(1);
    if (c->data) c->data[c->len] = '\0';
    *len = c->data ? c->len : 0;
    char *d = c->data;
    c->data = NULL;
    return d;
}

/* One run in flight (rlvr_sandbox_run_*): the supervisor and the
 * runtime's ends of its pipes (-1 once closed). */
struct rlvr_sandbox_run {
    rlvr_sandbox *sb;
    pid_t supervisor_pid;
    int supervisor; /* the supervisor's pidfd (-1 once it has ended or was handed on) */
    int out, rs, status, ctl;
    capture cout, cres;
    rlvr_sb_run_report rep;
    size_t rep_len;
    bool stop_sent, killed;
    double start, backstop, wall_s;
    int rc; /* an error met while reading (out of memory, poll) */
};

static void close_fd(int *fd) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
}

static void close_pipe(int p[2]) {
    close_fd(&p[0]);
    close_fd(&p[1]);
}

static int run_start(rlvr_sandbox *sb, const rlvr_sb_run_plan *plan, int64_t output_bytes, bool want_results,
                     rlvr_sandbox_run **out) {
    *out = NULL;
    int o[2] = {-1, -1}, rs[2] = {-1, -1}, status[2] = {-1, -1}, ctl[2] = {-1, -1};
    int rc = 0;
    rlvr_sandbox_run *run = calloc(1, sizeof *run);
    if (!run) return RLVR_FAIL(RLVR_ENOMEM, "out of memory for a sandbox run");
    if (pipe2(o, O_CLOEXEC) != 0 || pipe2(status, O_CLOEXEC) != 0 || pipe2(ctl, O_CLOEXEC) != 0 ||
        (want_results && pipe2(rs, O_CLOEXEC) != 0)) {
        rc = rlvr_error_errno_at(__FILE__, __LINE__, "pipe for a sandbox run");
        goto fail;
    }
    /* pipes belong to their creator with mode 0600: the sandbox identity
     * must own the ones it writes to, or reopening its own stdout through
     * /proc/self/fd (/dev/stdout) fails */
    if (sb->host->privileged &&
        (fchown(o[1], sb->host->host_uid, sb->host->host_gid) != 0 ||
         (rs[1] >= 0 && fchown(rs[1], sb->host->host_uid, sb->host->host_gid) != 0))) {
        rc = rlvr_error_errno_at(__FILE__, __LINE__, "handing a pipe to the sandbox identity");
        goto fail;
    }
    rlvr_sb_reap_exiting(sb, true);
    run->sb = sb;
    run->start = rlvr_now();
    run->wall_s = plan->wall_s;
    run->backstop = run->start + plan->wall_s + 10.0;
    run->cout.limit = (size_t)output_bytes;
    run->cres.limit = (size_t)sb->limits.output_bytes;
    int fds[4] = {o[1], rs[1], status[1], ctl[0]};
    rc = rlvr_sb_spawn_supervisor(plan, fds, &run->supervisor_pid, &run->supervisor);
    if (rc < 0) goto fail;
    close_fd(&o[1]);
    close_fd(&status[1]);
    close_fd(&ctl[0]);
    close_fd(&rs[1]);
    run->out = o[0], run->rs = rs[0], run->status = status[0], run->ctl = ctl[1];
    *out = run;
    return 0;
fail:
    close_pipe(o);
    close_pipe(rs);
    close_pipe(status);
    close_pipe(ctl);
    free(run);
    return rc;
}

int rlvr_sandbox_run_pollfds(const rlvr_sandbox_run *run, struct pollfd *fds, int cap) {
    int n = 0;
    const int mine[3] = {run->out, run->rs, run->status};
    for (int i = 0; i < 3; i++)
        if (mine[i] >= 0 && n < cap) fds[n++] = (struct pollfd){.fd = mine[i], .events = POLLIN};
    return run->killed ? 0 : n;
}

double rlvr_sandbox_run_deadline(const rlvr_sandbox_run *run) { return run->backstop; }

/* Ended: killed, or the output and results pipes are at EOF and the
 * supervisor's report is in (or the supervisor is gone). The supervisor may
 * still be exiting then. */
static bool run_ended(const rlvr_sandbox_run *run) {
    return run->killed || (run->out < 0 && run->rs < 0 && (run->status < 0 || run->rep_len == sizeof run->rep));
}

static void run_kill(rlvr_sandbox_run *run) {
    if (run->supervisor >= 0) pidfd_send_signal(run->supervisor, SIGKILL, NULL, 0);
    run->killed = true;
}

static void run_read(rlvr_sandbox_run *run, int fd) {
    if (fd == run->out || fd == run->rs) {
        bool is_out = fd == run->out;
        int k = capture_read(is_out ? &run->cout : &run->cres, fd);
        if (k <= 0) close_fd(is_out ? &run->out : &run->rs);
        if (k == -2 && run->rc == 0)
            run->rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory capturing %s", is_out ? "output" : "results");
    } else if (fd == run->status) {
        ssize_t n = read(run->status, (char *)&run->rep + run->rep_len, sizeof run->rep - run->rep_len);
        if (n > 0) run->rep_len += (size_t)n;
        else if (n == 0 || errno != EINTR) close_fd(&run->status);
    }
}

int rlvr_sandbox_run_advance(rlvr_sandbox_run *run, const struct pollfd *fds, int n) {
    for (int i = 0; i < n; i++)
        if (fds[i].revents && fds[i].fd >= 0) run_read(run, fds[i].fd);
    if ((run->cout.truncated || run->cres.truncated) && !run->stop_sent) {
        char stop = RLVR_SANDBOX_MSG_STOP;
        if (rlvr_sb_write_all(run->ctl, &stop, 1) != 0) { /* the supervisor is gone already: it ends anyway */
        }
        run->stop_sent = true;
    }
    /* the supervisor itself is stuck: the last resort (its init dies with it) */
    if (!run_ended(run) && rlvr_now() >= run->backstop) run_kill(run);
    return run_ended(run) ? 1 : 0;
}

/* Blocks until the run has ended (what rlvr_sandbox_exec does in full). */
static void run_wait(rlvr_sandbox_run *run) {
    while (!run_ended(run)) {
        struct pollfd p[3];
        int np = rlvr_sandbox_run_pollfds(run, p, 3);
        double left = run->backstop - rlvr_now();
        int r = left > 0 ? poll(p, (nfds_t)np, (int)(left * 1000) + 1) : 0;
        if (r < 0 && errno != EINTR) {
            if (run->rc == 0) run->rc = rlvr_error_errno_at(__FILE__, __LINE__, "poll on a sandbox run");
            run_kill(run);
            break;
        }
        if (r < 0) continue;
        rlvr_sandbox_run_advance(run, p, np);
    }
}

static void run_free(rlvr_sandbox_run *run) {
    close_fd(&run->supervisor);
    close_fd(&run->out);
    close_fd(&run->rs);
    close_fd(&run->status);
    close_fd(&run->ctl);
    free(run->cout.data);
    free(run->cres.data);
    free(run);
}

/* The report of an ended run as its result. */
static int run_result(rlvr_sandbox_run *run, rlvr_sandbox_result *res) {
    rlvr_sb_run_report *rep = &run->rep;
    res->wall_s = rlvr_now() - run->start;
    res->out = capture_take(&run->cout, &res->out_len);
    res->out_truncated = run->cout.truncated;
    res->results = capture_take(&run->cres, &res->results_len);
    if (!res->out || !res->results) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    if (run->rc < 0) return run->rc;
    if (run->killed)
        return RLVR_FAIL(RLVR_ESANDBOX, "the sandbox run's supervisor did not finish within %.1f s", run->wall_s + 10.0);
    if (run->rep_len != sizeof *rep) return RLVR_FAIL(RLVR_ESANDBOX, "the sandbox run's supervisor ended without a report");
    rep->error[sizeof rep->error - 1] = '\0';
    if (rep->error[0]) return RLVR_FAIL(RLVR_ESANDBOX, "sandbox run: %s", rep->error);
    if (!rep->started) return RLVR_FAIL(RLVR_ESANDBOX, "sandbox run: the command was never started");
    res->limit = (rlvr_sandbox_limit)rep->limit;
    if (run->stop_sent) res->limit = RLVR_LIMIT_OUTPUT;
    if (rep->finished && WIFEXITED(rep->status)) {
        res->exit_code = WEXITSTATUS(rep->status);
    } else {
        res->exit_code = -1;
        res->signal = rep->finished && WIFSIGNALED(rep->status) ? WTERMSIG(rep->status) : SIGKILL;
    }
    res->prepare_status = rep->prepare_status;
    res->cpu_s = rep->cpu_s;
    res->max_rss_bytes = rep->max_rss;
    res->max_processes = rep->max_procs;
    return 0;
}

/* The supervisor has reported and has nothing left to do but exit: reap it
 * now if it is gone, else before the sandbox's next run (or at its end). */
static void reap_supervisor(rlvr_sandbox_run *run) {
    rlvr_sandbox *sb = run->sb;
    if (rlvr_sb_process_ended(run->supervisor_pid, run->supervisor, run->killed)) return; /* run_free closes the pidfd */
    rlvr_sb_reap_exiting(sb, true); /* one run at a time: nothing should be left */
    sb->exiting = run->supervisor;
    sb->exiting_pid = run->supervisor_pid;
    run->supervisor = -1;
}

int rlvr_sandbox_run_finish(rlvr_sandbox_run *run, rlvr_sandbox_result *res) {
    memset(res, 0, sizeof *res);
    run_wait(run);
    reap_supervisor(run);
    int rc = run_result(run, res);
    if (rc < 0) rlvr_sandbox_result_free(res);
    run_free(run);
    return rc;
}

void rlvr_sandbox_run_abort(rlvr_sandbox_run *run) {
    if (!run) return;
    run_kill(run);
    rlvr_sb_process_ended(run->supervisor_pid, run->supervisor, true);
    run_free(run);
}

static int run(rlvr_sandbox *sb, const rlvr_sb_run_plan *plan, int64_t output_bytes, bool want_results, rlvr_sandbox_result *res) {
    memset(res, 0, sizeof *res);
    rlvr_sandbox_run *r = NULL;
    RLVR_TRY(run_start(sb, plan, output_bytes, want_results, &r));
    return rlvr_sandbox_run_finish(r, res);
}

/* The plan of a command, checked; *cap its output cap. */
static int exec_plan(rlvr_sandbox *sb, const rlvr_sandbox_cmd *cmd, rlvr_sb_run_plan *plan, int64_t *cap) {
    *cap = 0;
    if (!cmd || cmd->version != RLVR_SANDBOX_CMD_VERSION || !cmd->argv || !cmd->argv[0])
        return RLVR_FAIL(RLVR_EINVAL, "sandbox command missing, of another version, or without argv");
    if (cmd->cwd && cmd->cwd[0] && !rlvr_sb_path_is_simple(cmd->cwd))
        return RLVR_FAIL(RLVR_EINVAL, "sandbox working directory \"%s\" is not a plain relative path", cmd->cwd);
    size_t n_env = 0;
    for (const char *const *e = cmd->env; e && *e; e++, n_env++)
        if (!strchr(*e, '=')) return RLVR_FAIL(RLVR_EINVAL, "environment entry \"%s\" has no '='", *e);
    if (n_env > 48) return RLVR_FAIL(RLVR_EINVAL, "too many environment entries (%zu, at most 48)", n_env);
    if (cmd->judge && !sb->has_judge) return RLVR_FAIL(RLVR_EINVAL, "a judge command in a sandbox without judge_dir");
    if (cmd->judge && (strchr(cmd->argv[0], '/') || !rlvr_sb_path_is_simple(cmd->argv[0])))
        return RLVR_FAIL(RLVR_EINVAL, "judge program \"%s\" must be a file name in the judge directory", cmd->argv[0]);
    *plan = (rlvr_sb_run_plan){.sb = sb, .cmd = cmd};
    plan->wall_s = cmd->wall_s > 0 && cmd->wall_s < sb->limits.wall_s ? cmd->wall_s : sb->limits.wall_s;
    *cap = cmd->output_bytes > 0 && cmd->output_bytes < sb->limits.output_bytes ? cmd->output_bytes
                                                                               : sb->limits.output_bytes;
    return 0;
}

int rlvr_sandbox_exec(rlvr_sandbox *sb, const rlvr_sandbox_cmd *cmd, rlvr_sandbox_result *res) {
    memset(res, 0, sizeof *res);
    rlvr_sb_run_plan plan;
    int64_t cap;
    RLVR_TRY(exec_plan(sb, cmd, &plan, &cap));
    int rc = run(sb, &plan, cap, cmd->results_fd, res);
    return rc < 0 ? rlvr_error_wrap(rc, "running %s in a sandbox", cmd->argv[0]) : 0;
}

int rlvr_sandbox_exec_start(rlvr_sandbox *sb, const rlvr_sandbox_cmd *cmd, rlvr_sandbox_run **out) {
    *out = NULL;
    rlvr_sb_run_plan plan;
    int64_t cap;
    RLVR_TRY(exec_plan(sb, cmd, &plan, &cap));
    int rc = run_start(sb, &plan, cap, cmd->results_fd, out);
    return rc < 0 ? rlvr_error_wrap(rc, "starting %s in a sandbox", cmd->argv[0]) : 0;
}

static rlvr_sb_run_plan call_plan(rlvr_sandbox *sb, rlvr_sandbox_fn fn, const void *arg, size_t arg_len, double wall_s) {
    rlvr_sb_run_plan plan = {.sb = sb, .fn = fn, .arg = arg, .arg_len = arg_len};
    plan.wall_s = wall_s > 0 ? wall_s : sb->limits.wall_s;
    return plan;
}

int rlvr_sandbox_call(rlvr_sandbox *sb, rlvr_sandbox_fn fn, const void *arg, size_t arg_len, double wall_s,
                      int64_t output_bytes, rlvr_sandbox_result *res) {
    memset(res, 0, sizeof *res);
    if (!fn) return RLVR_FAIL(RLVR_EINVAL, "rlvr_sandbox_call without a function");
    rlvr_sb_run_plan plan = call_plan(sb, fn, arg, arg_len, wall_s);
    int rc = run(sb, &plan, output_bytes > 0 ? output_bytes : sb->limits.output_bytes, false, res);
    return rc < 0 ? rlvr_error_wrap(rc, "calling into a sandbox") : 0;
}

int rlvr_sandbox_call_start(rlvr_sandbox *sb, rlvr_sandbox_fn fn, const void *arg, size_t arg_len, double wall_s,
                            int64_t output_bytes, rlvr_sandbox_run **out) {
    *out = NULL;
    if (!fn) return RLVR_FAIL(RLVR_EINVAL, "rlvr_sandbox_call_start without a function");
    rlvr_sb_run_plan plan = call_plan(sb, fn, arg, arg_len, wall_s);
    int rc = run_start(sb, &plan, output_bytes > 0 ? output_bytes : sb->limits.output_bytes, false, out);
    return rc < 0 ? rlvr_error_wrap(rc, "calling into a sandbox") : 0;
}

void rlvr_sandbox_result_free(rlvr_sandbox_result *res) {
    if (!res) return;
    free(res->out);
    free(res->results);
    res->out = res->results = NULL;
    res->out_len = res->results_len = 0;
}
