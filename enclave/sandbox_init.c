/* enclave/sandbox_init.c — the init process: pid 1 of a run.
 *
 * Forked by the supervisor into the run's fresh PID namespace. It exists
 * because a run's processes must all end with it and be measured together:
 * as pid 1 it reaps every orphan, samples the run's CPU, memory and process
 * count (sandbox_usage.c) and kills every process of the run when the main
 * one ends or a limit is reached. Before that it mounts the run's own /proc
 * and /tmp and hides the sandbox's state, starts the prepare step (when
 * there is one) and then the command. Its one message is the run report to
 * the supervisor, written once every process is reaped; it exits 0 after
 * it, RLVR_SANDBOX_EXIT_REPORTED after a report that names a failure, or
 * RLVR_SANDBOX_EXIT_ORPHANED when the supervisor was gone before it began. */
#include "enclave/sandbox_internal.h"

#include "core/sys.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RLVR_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define RLVR_SANITIZED 1
#endif
#endif
#ifndef RLVR_SANITIZED
#define RLVR_SANITIZED 0
#endif

/* One run as init sees it. */
typedef struct {
    const rlvr_sb_run_plan *plan;
    rlvr_sb_run_report rep;
    int out, results; /* the command's ends (-1 once handed on) */
    int report_fd;    /* to the supervisor */
    int life;         /* readable once the supervisor is gone */
    int judge;        /* the judge program (O_PATH), -1 when none */
} init_run;

/* What the watch over the run has gathered. */
typedef struct {
    bool main_done;
    rlvr_sandbox_limit limit;
    /* the command's processes only (not the prepare step, which is the
     * runtime's code): the CPU the command and the orphans reaped here
     * used, each with its own reaped descendants. Memory comes from
     * sampling alone: a process's ru_maxrss includes the runtime's pages it
     * shared before exec, and sampling starts after the command's exec. */
    double reaped_cpu;
    int64_t peak_one;
    bool crowded;
    double next_full;
} init_watch;

/* Waits for a child's setup report: 0 when it closed the pipe (exec or
 * setup done), -1 with the message in `error` when it failed. */
static int wait_setup(int fd, char *error, size_t cap) {
    char msg[512];
    int n = rlvr_sb_read_message(fd, msg, sizeof msg);
    close(fd);
    if (n > 2 && msg[0] == RLVR_SANDBOX_MSG_ERROR) {
        size_t len = strnlen(msg + 2, cap - 1);
        memcpy(error, msg + 2, len);
        error[len] = '\0';
        return -1;
    }
    return 0;
}

/* A child failed its setup (rep.error says how): end the run and report. */
static void init_abort(init_run *r) __attribute__((noreturn));

static void init_abort(init_run *r) {
    kill(-1, SIGKILL);
    while (waitpid(-1, NULL, 0) > 0 || errno == EINTR) {
    }
    if (rlvr_sb_write_all(r->report_fd, &r->rep, sizeof r->rep) != 0) {
    }
    _exit(RLVR_SANDBOX_EXIT_REPORTED);
}

/* In a forked child of init: the descriptors only init needs. */
static void close_init_fds(init_run *r, int err_read, bool keep_results) {
    close(err_read);
    close(r->report_fd);
    close(r->life);
    if (!keep_results && r->results >= 0) close(r->results);
}

/* Init dies with the supervisor; one already gone means no run. */
static void init_attach(init_run *r) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) rlvr_sb_report_error(r->report_fd, &r->rep, "prctl");
    struct pollfd pl = {.fd = r->life, .events = POLLIN};
    if (poll(&pl, 1, 0) > 0) _exit(RLVR_SANDBOX_EXIT_ORPHANED);
}

/* The run's own /proc and /tmp; the sandbox's state out of reach. */
static void init_mount_run_fs(init_run *r) {
    const rlvr_sandbox *sb = r->plan->sb;
    if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
        rlvr_sb_report_error(r->report_fd, &r->rep, "mounting /proc");
    char opts[128];
    snprintf(opts, sizeof opts, "size=%lld,mode=1777,nr_inodes=%lld", (long long)sb->limits.tmp_bytes,
             (long long)(sb->limits.tmp_bytes / 4096 + 256));
    if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0)
        rlvr_sb_report_error(r->report_fd, &r->rep, "mounting /tmp");
    /* the copy-on-write layer stays out of reach of every run. The
     * pristine snapshot (read-only; with overlays and with copies alike it
     * is the sealed tree /work started from) and the private directory are
     * kept for the runtime's own calls: a workspace's snapshot compares
     * /work with the former (workspace_state.c). Commands see neither. */
    if (umount2("/.rlvr/state", MNT_DETACH) != 0)
        rlvr_sb_report_error(r->report_fd, &r->rep, "hiding the sandbox's state");
    if (!r->plan->fn && umount2("/.rlvr/lower", MNT_DETACH) != 0)
        rlvr_sb_report_error(r->report_fd, &r->rep, "hiding the pristine snapshot");
    if (!r->plan->fn && sb->has_private && umount2("/.rlvr/private", MNT_DETACH) != 0)
        rlvr_sb_report_error(r->report_fd, &r->rep, "hiding the private directory");
}

/* The judge directory is hidden from everything: a judge command keeps only
 * a descriptor of its program, opened here and closed at its exec, so
 * nothing the judge starts (the code under test) can run or read it. */
static void init_hide_judge(init_run *r) {
    const rlvr_sb_run_plan *plan = r->plan;
    if (!plan->sb->has_judge) return;
    if (!plan->fn && plan->cmd->judge) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, RLVR_SANDBOX_JUDGE_DIR "/%s", plan->cmd->argv[0]);
        r->judge = open(path, O_PATH | O_CLOEXEC);
        if (r->judge < 0) rlvr_sb_report_error(r->report_fd, &r->rep, "opening the judge program %s", plan->cmd->argv[0]);
    }
    if (umount2(RLVR_SANDBOX_JUDGE_DIR, MNT_DETACH) != 0)
        rlvr_sb_report_error(r->report_fd, &r->rep, "hiding the judge directory");
}

/* Runs the prepare step to its end; whether the command should run. */
static bool init_prepare(init_run *r) {
    int cerr[2];
    if (pipe2(cerr, O_CLOEXEC) != 0) rlvr_sb_report_error(r->report_fd, &r->rep, "pipe");
    pid_t p = fork();
    if (p < 0) rlvr_sb_report_error(r->report_fd, &r->rep, "fork for the prepare step");
    if (p == 0) {
        close_init_fds(r, cerr[0], false);
        rlvr_sb_prepare_main(r->plan, r->out, cerr[1]);
    }
    close(cerr[1]);
    if (wait_setup(cerr[0], r->rep.error, sizeof r->rep.error) != 0) init_abort(r);
    int st;
    while (waitpid(p, &st, 0) < 0 && errno == EINTR) {
    }
    r->rep.started = 1;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return true;
    r->rep.prepare_status = WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
    r->rep.status = st;
    return false;
}

/* Starts the command with its setup error pipe `err`; its pid, or -1. */
static pid_t init_spawn_command(init_run *r, int err_read, int err) {
    const rlvr_sb_run_plan *plan = r->plan;
    pid_t c;
    if (plan->fn) {
        c = fork();
        if (c == 0) {
            close_init_fds(r, err_read, false);
            rlvr_sb_call_main(plan, r->out, err);
        }
    } else if (RLVR_SANITIZED) {
        /* sanitizer runtimes cannot run on a borrowed stack under the
         * address-space cap: a plain fork */
        c = fork();
        if (c == 0) {
            close_init_fds(r, err_read, true);
            rlvr_sb_command_main(plan, r->out, r->results, err, r->judge);
        }
    } else {
        /* the command's stack; its own memory starts at its exec */
        size_t stack_size = 256 * 1024;
        char *stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (stack == MAP_FAILED) rlvr_sb_report_error(r->report_fd, &r->rep, "mmap for the command's stack");
        rlvr_sb_command_args args = {plan, r->out, r->results, err, r->judge};
        c = clone(rlvr_sb_command_entry, stack + stack_size, CLONE_VM | CLONE_VFORK | SIGCHLD, &args);
        munmap(stack, stack_size);
    }
    return c;
}

/* Starts the command and waits for its setup; its pid. Init keeps none of
 * the command's descriptors. */
static pid_t init_start_command(init_run *r) {
    int cerr[2];
    if (pipe2(cerr, O_CLOEXEC) != 0) rlvr_sb_report_error(r->report_fd, &r->rep, "pipe");
    pid_t c = init_spawn_command(r, cerr[0], cerr[1]);
    if (c < 0) rlvr_sb_report_error(r->report_fd, &r->rep, "starting the command");
    if (r->judge >= 0) close(r->judge);
    close(cerr[1]);
    close(r->out);
    if (r->results >= 0) close(r->results);
    r->out = r->results = r->judge = -1;
    if (wait_setup(cerr[0], r->rep.error, sizeof r->rep.error) != 0) init_abort(r);
    r->rep.started = 1;
    return c;
}

/* Reaps every child that has ended (waiting for them once the main process
 * has ended): their CPU, their peak memory, the rlimit that killed them. */
static void init_reap(init_run *r, init_watch *w, pid_t main_pid) {
    int st;
    struct rusage ru;
    pid_t p;
    while ((p = wait4(-1, &st, w->main_done ? 0 : WNOHANG, &ru)) > 0 || (p < 0 && errno == EINTR)) {
        if (p < 0) continue;
        w->reaped_cpu += rlvr_sb_rusage_cpu(&ru);
        /* the kernel's high-water mark: exact, where the 10 ms samples
         * miss the last megabytes of a process that grows fast and dies at
         * its address-space cap */
        int64_t peak = (int64_t)ru.ru_maxrss * 1024;
        if (peak > w->peak_one) w->peak_one = peak;
        if (peak > r->rep.max_rss) r->rep.max_rss = peak;
        if (WIFSIGNALED(st) && WTERMSIG(st) == SIGXFSZ && w->limit == RLVR_LIMIT_NONE) w->limit = RLVR_LIMIT_FILE_SIZE;
        if (WIFSIGNALED(st) && WTERMSIG(st) == SIGXCPU && w->limit == RLVR_LIMIT_NONE) w->limit = RLVR_LIMIT_CPU;
        if (p == main_pid) {
            w->main_done = true;
            r->rep.status = st;
            /* the main process ended: nothing of the run may outlive it */
            kill(-1, SIGKILL);
        }
    }
}

/* One look at the run between reaps: a count, and (every 10 ms, or when
 * the count is at the limit) a full sample; kills the run at a limit. A run
 * with over a quarter of its processes is counted every millisecond between
 * full samples: a fork bomb whose forks fail at the backstop collapses
 * within milliseconds. The count also precedes every full sample: reading
 * each process's stat takes about a millisecond in a bomb, long enough for
 * it to fall back under the limit (with three busy loops on 2 cores the
 * bomb was caught in 382 of 400 runs with it, 357 of 400 without). */
static void init_check(init_run *r, init_watch *w, long ticks, long page) {
    const rlvr_sandbox_limits *l = &r->plan->sb->limits;
    int n = rlvr_sb_count_processes();
    w->crowded = n > l->processes / 4;
    if (w->crowded && n < l->processes && rlvr_now() < w->next_full) return;
    w->next_full = rlvr_now() + 0.01;
    rlvr_sb_sample s;
    rlvr_sb_sample_run(&s, ticks, page);
    double cpu = s.cpu_s + w->reaped_cpu;
    if (s.procs > r->rep.max_procs) r->rep.max_procs = s.procs;
    if (n > r->rep.max_procs) r->rep.max_procs = n;
    if (s.rss > r->rep.max_rss) r->rep.max_rss = s.rss;
    if (s.rss_max > w->peak_one) w->peak_one = s.rss_max;
    bool check_memory = r->plan->fn == NULL;
    rlvr_sandbox_limit hit = RLVR_LIMIT_NONE;
    if (cpu >= l->cpu_s) hit = RLVR_LIMIT_CPU;
    else if (check_memory && s.rss >= l->memory_bytes) hit = RLVR_LIMIT_MEMORY;
    else if (s.procs >= l->processes || n >= l->processes) hit = RLVR_LIMIT_PROCESSES;
    if (hit != RLVR_LIMIT_NONE) {
        if (w->limit == RLVR_LIMIT_NONE || w->limit == RLVR_LIMIT_FILE_SIZE) w->limit = hit;
        kill(-1, SIGKILL);
    }
}

/* Reaps and samples until the main process `main_pid` has ended and every
 * process of the run is reaped. */
static void init_watch_run(init_run *r, init_watch *w, pid_t main_pid) {
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    long ticks = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
    struct timespec tick = {0, 10 * 1000 * 1000}, fast_tick = {0, 1000 * 1000};
    for (;;) {
        init_reap(r, w, main_pid);
        if (w->main_done) break; /* and every process reaped (ECHILD) */
        sigtimedwait(&chld, NULL, w->crowded ? &fast_tick : &tick);
        init_check(r, w, ticks, page);
    }
}

/* The limit the run reached, from what the watch saw and how the main
 * process ended. */
static rlvr_sandbox_limit init_verdict(const init_run *r, const init_watch *w) {
    const rlvr_sandbox_limits *l = &r->plan->sb->limits;
    rlvr_sandbox_limit limit = w->limit;
    int st = r->rep.status;
    if (limit == RLVR_LIMIT_NONE && WIFSIGNALED(st) && WTERMSIG(st) == SIGXCPU) limit = RLVR_LIMIT_CPU;
    if (limit == RLVR_LIMIT_NONE && WIFSIGNALED(st) && WTERMSIG(st) == SIGXFSZ) limit = RLVR_LIMIT_FILE_SIZE;
    if (limit == RLVR_LIMIT_NONE && r->rep.cpu_s >= l->cpu_s) limit = RLVR_LIMIT_CPU;
    /* a process that ran into its address-space cap: its resident peak is
     * close to it, less what the cap counts and RSS does not (mapped
     * libraries, allocator arenas: 14 MB of a 96 MB cap measured for a
     * glibc program on Debian 12, so 0.9 of the cap missed it) */
    bool check_memory = r->plan->fn == NULL;
    bool abnormal = WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) != 0);
    if (limit == RLVR_LIMIT_NONE && check_memory && abnormal && w->peak_one >= (int64_t)(0.75 * (double)l->memory_bytes))
        limit = RLVR_LIMIT_MEMORY;
    if (limit == RLVR_LIMIT_NONE && (rlvr_sb_nearly_full("/work") || rlvr_sb_nearly_full("/tmp"))) limit = RLVR_LIMIT_DISK;
    return limit;
}

void rlvr_sb_init_main(const rlvr_sb_run_plan *plan, int out, int results, int report_fd, int life) {
    init_run r = {.plan = plan, .out = out, .results = results, .report_fd = report_fd, .life = life, .judge = -1};
    memset(&r.rep, 0, sizeof r.rep);
    init_attach(&r);
    init_mount_run_fs(&r);
    init_hide_judge(&r);

    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);
    /* the prepare step (applying a patch) runs in its own process, which
     * never holds the results descriptor */
    bool run_command = plan->fn || !plan->cmd->prepare || init_prepare(&r);
    pid_t main_pid = -1;
    if (run_command) {
        main_pid = init_start_command(&r);
    } else {
        close(r.out);
        if (r.results >= 0) close(r.results);
    }

    init_watch w = {.main_done = !run_command, .limit = RLVR_LIMIT_NONE};
    init_watch_run(&r, &w, main_pid);
    r.rep.cpu_s = w.reaped_cpu;
    r.rep.limit = init_verdict(&r, &w);
    r.rep.finished = 1;
    if (rlvr_sb_write_all(report_fd, &r.rep, sizeof r.rep) != 0) {
    }
    _exit(0);
}
