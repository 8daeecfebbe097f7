/* enclave/sandbox_supervisor.c — the supervisor process: one per run.
 *
 * Forked by the spawner for each run. It exists to put the run inside the
 * sandbox and keep the runtime out of it: it joins the holder's namespaces,
 * switches to the sandbox identity, opens fresh mount, PID, IPC and cgroup
 * namespaces (nothing a run leaves in them survives it) and forks the run's
 * init into them. It enforces the wall time (killing init, whose PID
 * namespace takes every process of the run with it), stops the run when the
 * runtime sends STOP, and passes init's report on to the runtime as one
 * fixed-size write on its status pipe, then exits 0 while the run's
 * namespaces are torn down. It exits RLVR_SANDBOX_EXIT_REPORTED after a
 * report that names a failure, RLVR_SANDBOX_EXIT_SUPERVISOR_LOST when it
 * could not even report. */
#include "enclave/sandbox_internal.h"

#include "core/sys.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* One run as its supervisor sees it. */
typedef struct {
    const rlvr_sb_run_plan *plan;
    rlvr_sb_run_report rep;
    size_t got;     /* bytes of init's report read into rep */
    bool reported;  /* all of it */
    int status;     /* to the runtime */
    int stop;       /* from the runtime: STOP, or EOF */
    pid_t init;
    int init_pidfd;
    int init_report;
} supervision;

/* Into the holder's user, mount, net, IPC and UTS namespaces, as the
 * sandbox identity. */
static void supervisor_join(supervision *s) {
    static const char *const kinds[] = {"user", "mnt", "net", "ipc", "uts"};
    int ns[5];
    for (int i = 0; i < 5; i++) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/ns/%s", (int)s->plan->sb->holder, kinds[i]);
        ns[i] = open(path, O_RDONLY | O_CLOEXEC);
        if (ns[i] < 0) rlvr_sb_report_error(s->status, &s->rep, "opening %s", path);
    }
    for (int i = 0; i < 5; i++) {
        if (setns(ns[i], 0) != 0)
            rlvr_sb_report_error(s->status, &s->rep, "joining the sandbox's %s namespace", kinds[i]);
        close(ns[i]);
    }
    const rlvr_sandbox_host *host = s->plan->sb->host;
    if (host->privileged) prctl(PR_SET_KEEPCAPS, 1);
    if (rlvr_sb_become_inner(host) != 0) rlvr_sb_report_error(s->status, &s->rep, "switching to the sandbox identity");
}

/* The run's own namespaces, and its init in them. */
static void supervisor_start_init(supervision *s, int out, int results) {
    /* fresh mount, PID and IPC namespaces per run: nothing a run leaves in
     * them (processes, System V shared memory, message queues) survives it */
    if (unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWCGROUP) != 0)
        rlvr_sb_report_error(s->status, &s->rep, "unshare(mount, pid, ipc, cgroup namespaces) for the run");
    int rpipe[2], life[2];
    if (pipe2(rpipe, O_CLOEXEC) != 0 || pipe2(life, O_CLOEXEC) != 0) rlvr_sb_report_error(s->status, &s->rep, "pipe");
    pid_t init = fork();
    if (init < 0) rlvr_sb_report_error(s->status, &s->rep, "fork for the run's init");
    if (init == 0) {
        close(rpipe[0]);
        close(life[1]);
        close(s->status);
        close(s->stop);
        rlvr_sb_init_main(s->plan, out, results, rpipe[1], life[0]);
    }
    close(rpipe[1]);
    close(life[0]);
    close(out);
    if (results >= 0) close(results);
    s->init = init;
    s->init_report = rpipe[0];
}

/* Waits for init's report, init's end, the wall time or STOP, whichever
 * comes first; the limit the wall time set (or none). */
static rlvr_sandbox_limit supervise(supervision *s, double deadline) {
    for (;;) {
        double left = deadline - rlvr_now();
        if (left <= 0) {
            kill(s->init, SIGKILL);
            return RLVR_LIMIT_WALL;
        }
        struct pollfd p[3] = {{.fd = s->init_pidfd, .events = POLLIN}, {.fd = s->init_report, .events = POLLIN},
                              {.fd = s->stop, .events = POLLIN}};
        int r = poll(p, 3, (int)(left * 1000) + 1);
        if (r < 0 && errno != EINTR) {
            kill(s->init, SIGKILL);
            return RLVR_LIMIT_NONE;
        }
        if (r > 0 && p[1].revents) {
            /* init writes its report only once every process of the run is
             * reaped, and then just exits: the runtime hears it at once and
             * need not wait for the namespaces to be torn down */
            ssize_t n = read(s->init_report, (char *)&s->rep + s->got, sizeof s->rep - s->got);
            if (n > 0) s->got += (size_t)n;
            if (n <= 0 || s->got == sizeof s->rep) {
                s->reported = s->got == sizeof s->rep;
                return RLVR_LIMIT_NONE;
            }
        }
        if (r > 0 && p[0].revents) return RLVR_LIMIT_NONE;
        if (r > 0 && p[2].revents) {
            /* the runtime asks to stop the run (output cap) */
            kill(s->init, SIGKILL);
            return RLVR_LIMIT_NONE;
        }
    }
}

/* Init ended (or was killed) without its whole report: what it wrote
 * before it ended, else a report of a run that started and said nothing. */
static void collect_report(supervision *s) {
    int st;
    while (waitpid(s->init, &st, 0) < 0 && errno == EINTR) {
    }
    ssize_t n = s->got < sizeof s->rep ? read(s->init_report, (char *)&s->rep + s->got, sizeof s->rep - s->got) : 0;
    if (n > 0) s->got += (size_t)n;
    if (s->got != sizeof s->rep) memset(&s->rep, 0, sizeof s->rep), s->rep.started = 1;
}

void rlvr_sb_supervisor_main(pid_t parent, const rlvr_sb_run_plan *plan, int *fds) {
    if (rlvr_sb_keep_fds(fds, 4) != 0) _exit(RLVR_SANDBOX_EXIT_SUPERVISOR_LOST);
    supervision s = {.plan = plan, .status = fds[2], .stop = fds[3], .init_pidfd = -1, .init_report = -1};
    memset(&s.rep, 0, sizeof s.rep);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(RLVR_SANDBOX_EXIT_SUPERVISOR_LOST);
    supervisor_join(&s);
    supervisor_start_init(&s, fds[0], fds[1]);
    double deadline = rlvr_now() + plan->wall_s;
    s.init_pidfd = pidfd_open(s.init, 0);
    if (s.init_pidfd < 0) {
        kill(s.init, SIGKILL);
        waitpid(s.init, NULL, 0);
        rlvr_sb_report_error(s.status, &s.rep, "pidfd_open");
    }
    rlvr_sandbox_limit limit = supervise(&s, deadline);
    if (!s.reported) collect_report(&s);
    if (limit == RLVR_LIMIT_WALL) s.rep.limit = RLVR_LIMIT_WALL;
    if (rlvr_sb_write_all(s.status, &s.rep, sizeof s.rep) != 0) {
    }
    close(s.status);
    while (waitpid(s.init, NULL, 0) < 0 && errno == EINTR) {
    }
    _exit(0);
}
